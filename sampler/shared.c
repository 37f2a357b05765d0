/*
 * sampler/shared.c -- the shared host tier (options.shared, issue 18).
 *
 * Samplers in several processes that serve the same image (same database,
 * snapshot or read point, layout, seed, mode and generation) map one
 * published copy of it instead of each holding a private one. An image is
 * published as a file <dir>/gsnap-<key hash>-g<generation>.img: written to a
 * temporary name, checksummed, then linked (or renamed) to its name, so a
 * reader sees a whole file or none. Each sampler maps it MAP_PRIVATE: pages
 * nobody writes stay the page cache's (one copy for every process), and what
 * a mode writes during batches (PSCR's touched entries, max_staleness
 * redraws, an in-place refresh) is copied on write into the process's own
 * pages (PSCR's entry rewrites go to shared_ovl.c's overlay instead).
 *
 * Which generations are shared: in frozen mode, for FCR, FSCR and PCF (and
 * -SC), generation k+1 is a pure function of generation k and the key, so
 * every generation is published and switched to at a batch boundary. PSCR
 * (its generations depend on the batches) and fresh samplers share the image
 * they open on; their later writes stay in the overlay.
 *
 * A mapped file is kept open with a shared flock while mapped; files nobody
 * maps any more are removed by shared_gc.c.
 *
 * Nothing read from the file is trusted: header magic, version, checksum,
 * the key text, the sizes against the real file size, the XXH3 of the
 * payload and every count and id are checked before the image is used. A
 * file that fails is counted (stats.shared_refused), the image is built
 * privately and published over it.
 */
#include "sampler/sampler_int.h"
#include "sampler/shared_int.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_PAGE 4096u

static uint64_t al(uint64_t x) { return (x + SHM_PAGE - 1) & ~(uint64_t)(SHM_PAGE - 1); }

/* Byte offsets of the arrays of an image with this shape; returns the size. */
typedef struct {
    uint64_t deg, cnt[GSNAP_MAX_LAYERS + 1], ver[GSNAP_MAX_LAYERS + 1],
        ids[GSNAP_MAX_LAYERS + 1], hot[GSNAP_MAX_LAYERS + 1], size;
} shm_layout;

static void layout(uint64_t nnodes, unsigned ncache, const uint32_t *caps, shm_layout *l) {
    uint64_t nn = nnodes ? nnodes : 1, off = SHM_HDR;
    l->deg = off;
    off += al(nn * 4);
    for (unsigned i = 0; i < ncache; i++) {
        uint64_t cap = caps[i];
        l->cnt[i] = off;
        off += al(nn * 4);
        l->ver[i] = off;
        off += al(nn * 8);
        l->ids[i] = off;
        off += al(nn * (cap ? cap : 1) * 8);
        l->hot[i] = off;
        off += cap ? al(nn * (cap + 2) * 4) : 0; /* hot.c's slots: count, stamp, ids */
    }
    l->size = off;
}

static uint64_t hdr_sum(const gsnap_samp__shm_hdr *h) {
    gsnap_samp__shm_hdr c = *h;
    c.hdr_sum = 0;
    return XXH3_64bits(&c, sizeof c);
}

static void path_of(const gsnap_samp__shared *sh, uint64_t gen, const char *suffix, char *out,
                    size_t n) {
    snprintf(out, n, "%s/gsnap-%016llx-g%llu.img%s", sh->dir, (unsigned long long)sh->khash,
             (unsigned long long)gen, suffix);
}

/* Point im's arrays into the mapping m (layout l), dropping what it held. */
static void adopt_map(gsnap_samp__image *im, void *m, int fd, const shm_layout *l, uint64_t gen) {
    gsnap_samp__image_arrays_free(im);
    unsigned char *b = m;
    im->deg = (uint32_t *)(b + l->deg);
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        c->cnt = (uint32_t *)(b + l->cnt[i]);
        c->ver = (uint64_t *)(b + l->ver[i]);
        c->ids = (uint64_t *)(b + l->ids[i]);
        if (c->cap) {
            im->hot[i].stride = c->cap + 2;
            im->hot[i].slot = (uint32_t *)(b + l->hot[i]);
        }
    }
    im->map = m;
    im->map_fd = fd;
    im->map_len = l->size;
    im->map_gen = gen;
    im->gen = gen;
    im->mixed = 0;
    im->hot_ok = 1;
}

void gsnap_samp__shared_unmap(gsnap_samp__image *im) {
    if (!im || !im->map) return;
    gsnap_samp__ovl_free(im); /* shared_ovl.c: the overlay belongs to the mapping */
    munmap(im->map, im->map_len);
    close(im->map_fd); /* releases the shared lock (shared_gc.c) */
    im->map = NULL;
    im->map_len = 0;
    im->deg = NULL;
    for (unsigned i = 0; i < im->ncache; i++) {
        im->caches[i].cnt = NULL;
        im->caches[i].ids = NULL;
        im->caches[i].ver = NULL;
    }
    for (unsigned i = 0; i <= GSNAP_MAX_LAYERS; i++) {
        im->hot[i].slot = NULL;
        im->hot[i].stride = 0;
    }
    im->hot_ok = 0;
}

/* Stamp of a serving slot (hot.c) holding count n at generation gen. */
static uint32_t slot_stamp(uint32_t n, uint64_t gen) {
    return n == GSNAP_SAMP_UNCACHED ? GSNAP_SAMP_LZ_UNC : (uint32_t)(gen & GSNAP_SAMP_LZ_MASK);
}

/* Every count within its cap, every id below nnodes, the serving view equal
 * to the entries (count, stamp of generation gen, ids): what serving relies
 * on. 0 or why not. */
static const char *check_contents(const unsigned char *b, const shm_layout *l, uint64_t nnodes,
                                  uint64_t gen, unsigned ncache, const uint32_t *caps) {
    for (unsigned i = 0; i < ncache; i++) {
        const uint32_t *cnt = (const uint32_t *)(b + l->cnt[i]);
        const uint64_t *ids = (const uint64_t *)(b + l->ids[i]);
        const uint32_t *hot = (const uint32_t *)(b + l->hot[i]);
        uint64_t cap = caps[i], stride = cap + 2;
        for (uint64_t v = 0; v < nnodes; v++) {
            uint32_t n = cnt[v];
            if (!cap) { /* no serving view is laid out for a cache of capacity 0 */
                if (n != GSNAP_SAMP_UNCACHED) return "an entry in a cache of capacity 0";
                continue;
            }
            if (n == GSNAP_SAMP_UNCACHED) {
                if (hot[v * stride] != n || hot[v * stride + 1] != slot_stamp(n, gen))
                    return "serving view differs from the entries";
                continue;
            }
            if (n > cap) return "an entry count exceeds the cache capacity";
            for (uint32_t j = 0; j < n; j++) {
                uint64_t id = ids[v * cap + j];
                if (id >= nnodes) return "a cached id is beyond the node bound";
                if (hot[v * stride + 2 + j] != (uint32_t)id) return "serving view differs from the entries";
            }
            if (hot[v * stride] != n || hot[v * stride + 1] != slot_stamp(n, gen))
                return "serving view differs from the entries";
        }
    }
    return NULL;
}

/* Check an open image file against what s expects; map it on success. */
static const char *verify_map(gsnap_sampler *s, int fd, uint64_t gen, void **out, shm_layout *l) {
    const gsnap_samp__shared *sh = s->shm;
    const gsnap_samp__image *im = s->im;
    struct stat st;
    gsnap_samp__shm_hdr h;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) return "not a regular file";
    if ((uint64_t)st.st_size < SHM_HDR) return "truncated (shorter than its header)";
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) return "header unreadable";
    if (h.magic != GSNAP_SHM_MAGIC) return "bad magic";
    if (h.version != GSNAP_SHM_VERSION) return "unknown version";
    if (h.hdr_sum != hdr_sum(&h)) return "header checksum mismatch";
    if (h.file_size != (uint64_t)st.st_size) return "size differs from the header's (truncated?)";
    if (h.keylen != sh->keylen || memcmp(h.key, sh->key, sh->keylen)) return "made for another key";
    if (h.gen != gen || h.nnodes != im->nnodes || h.ncache != im->ncache) return "shape differs";
    uint32_t caps[GSNAP_MAX_LAYERS + 1];
    for (unsigned i = 0; i < im->ncache; i++) {
        caps[i] = im->caches[i].cap;
        if (h.caps[i] != caps[i]) return "capacities differ";
    }
    layout(im->nnodes, im->ncache, caps, l);
    if (l->size != h.file_size) return "size does not match its shape";
    void *m = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) return "cannot be mapped";
    const unsigned char *b = m;
    const char *why = NULL;
    if (XXH3_64bits(b + SHM_HDR, l->size - SHM_HDR) != h.payload_sum) why = "payload checksum mismatch";
    if (!why) why = check_contents(b, l, im->nnodes, h.gen, im->ncache, caps);
    if (why) {
        munmap(m, l->size);
        return why;
    }
    *out = m;
    return NULL;
}

/* The file at path is not used: why, for gsnap_sampler_shared_note. */
static int refuse(gsnap_sampler *s, const char *path, const char *why) {
    snprintf(s->shm->why, sizeof s->shm->why, "%s: %s", path, why);
    s->st.shared_refused++;
    return GSNAP_ECORRUPT;
}

/* Only a regular file of this user that nobody else may write is trusted:
 * the default directory (/dev/shm) is writable by every user, and a file
 * another user can change after it was verified could change under the
 * mapping (the pages a process has not written follow the file). */
static const char *owner_check(int fd) {
    struct stat st;
    if (fstat(fd, &st)) return "cannot be examined";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    if (st.st_uid != geteuid()) return "owned by another user";
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by other users";
    return NULL;
}

int gsnap_samp__shared_attach(gsnap_sampler *s, uint64_t gen) {
    gsnap_samp__shared *sh = s->shm;
    char path[PATH_MAX];
    path_of(sh, gen, "", path, sizeof path);
    /* no symlink followed, no wait on a FIFO someone put under this name */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return errno == ELOOP ? refuse(s, path, "a symbolic link") : GSNAP_NOTFOUND;
    /* the owner first: a file of another user is refused before its lock
     * could make this process wait on that user */
    const char *why = owner_check(fd);
    if (why) {
        close(fd);
        return refuse(s, path, why);
    }
    int lk = gsnap_samp__shared_locked(fd, path);
    if (lk) {
        close(fd);
        if (lk == -1) return GSNAP_NOTFOUND; /* removed meanwhile (shared_gc.c) */
        snprintf(sh->why, sizeof sh->why, "%s: locked by another process; serving a private image", path);
        return GSNAP_EBUSY;
    }
    void *m = NULL;
    shm_layout l;
    why = verify_map(s, fd, gen, &m, &l);
    if (why) {
        close(fd);
        return refuse(s, path, why);
    }
    adopt_map(s->im, m, fd, &l, gen); /* fd stays open, locked, while mapped */
    s->st.shared_attached++;
    s->st.shared_bytes = l.size;
    return 0;
}

/* Fill a new image file (mapped m, layout l) from im. */
static void fill(unsigned char *m, const shm_layout *l, const gsnap_samp__image *im,
                 const gsnap_samp__shared *sh) {
    uint64_t nn = im->nnodes;
    memcpy(m + l->deg, im->deg, nn * 4);
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *c = &im->caches[i];
        uint32_t *cnt = (uint32_t *)(m + l->cnt[i]);
        uint64_t *ids = (uint64_t *)(m + l->ids[i]);
        uint32_t *hot = (uint32_t *)(m + l->hot[i]);
        memcpy(cnt, c->cnt, nn * 4);
        memcpy(m + l->ver[i], c->ver, nn * 8);
        for (uint64_t v = 0; v < nn; v++) { /* slots past cnt stay zero (never uninitialised) */
            uint32_t n = c->cnt[v];
            uint32_t *sl = hot + v * (c->cap + 2);
            if (c->cap) {
                sl[0] = n;
                sl[1] = slot_stamp(n, im->gen);
            }
            if (n == GSNAP_SAMP_UNCACHED) continue;
            memcpy(ids + v * c->cap, c->ids + v * c->cap, (size_t)n * 8);
            for (uint32_t j = 0; j < n; j++) sl[2 + j] = (uint32_t)c->ids[v * c->cap + j];
        }
    }
    gsnap_samp__shm_hdr *h = (gsnap_samp__shm_hdr *)m;
    h->magic = GSNAP_SHM_MAGIC;
    h->version = GSNAP_SHM_VERSION;
    h->hdr_size = SHM_HDR;
    h->file_size = l->size;
    h->gen = im->gen;
    h->nnodes = nn;
    h->ncache = im->ncache;
    for (unsigned i = 0; i < im->ncache; i++) h->caps[i] = im->caches[i].cap;
    h->keylen = (uint32_t)sh->keylen;
    memcpy(h->key, sh->key, sh->keylen);
    h->payload_sum = XXH3_64bits(m + SHM_HDR, l->size - SHM_HDR);
    h->hdr_sum = hdr_sum(h);
}

/* Write im as a temporary file and give it its name: link (never replaces a
 * file another process published meanwhile) or, over a refused file, rename. */
static int publish(gsnap_sampler *s, int replace, int *hold) {
    gsnap_samp__shared *sh = s->shm;
    gsnap_samp__image *im = s->im;
    char path[PATH_MAX], tmp[PATH_MAX], sfx[64];
    uint32_t caps[GSNAP_MAX_LAYERS + 1];
    for (unsigned i = 0; i < im->ncache; i++) caps[i] = im->caches[i].cap;
    shm_layout l;
    layout(im->nnodes, im->ncache, caps, &l);
    snprintf(sfx, sizeof sfx, ".tmp.%ld.%llx", (long)getpid(),
             (unsigned long long)((uintptr_t)im ^ (uint64_t)(gsnap_now() * 1e9)));
    path_of(sh, im->gen, "", path, sizeof path);
    path_of(sh, im->gen, sfx, tmp, sizeof tmp);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        sh->err = errno;
        return GSNAP_EIO;
    }
    (void)flock(fd, LOCK_SH); /* locked from its creation on (shared_gc.c) */
    int rc = GSNAP_EIO;
    void *m = MAP_FAILED;
    /* allocated up front: a full tmpfs answers ENOSPC here, not SIGBUS on a page write */
    int e = posix_fallocate(fd, 0, (off_t)l.size); /* returns its error, errno untouched */
    if (e == 0) m = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = e ? e : m == MAP_FAILED ? errno : 0;
    if (m != MAP_FAILED) {
        fill(m, &l, im, sh);
        rc = munmap(m, l.size) == 0 ? 0 : GSNAP_EIO;
        if (rc) err = errno;
    }
    if (rc == 0) {
        if (replace) rc = rename(tmp, path) ? GSNAP_EIO : 0;
        else if (link(tmp, path) && errno != EEXIST)
            rc = rename(tmp, path) ? GSNAP_EIO : 0; /* no hard links here */
        if (rc) err = errno;
    }
    unlink(tmp);
    sh->err = err;
    if (rc == 0) s->st.shared_published++;
    if (rc == 0) *hold = fd; /* the caller closes it once it maps the name */
    else close(fd);
    return rc;
}

/* at_open: 0 between batches, 1 at open, 2 at open after the published
 * image was refused (publish over it without trying it again). */
int gsnap_samp__shared_sync(gsnap_sampler *s, int at_open) {
    gsnap_samp__shared *sh = s->shm;
    gsnap_samp__image *im = s->im;
    if (!sh || !im || s->bg_running || im->mixed) return 0;
    if (!at_open && !sh->follow) return 0; /* PSCR / fresh: later writes are the overlay */
    if (sh->snapv != s->st.snap_version) { /* gsnap_sampler_follow moved the snapshot */
        int rc = gsnap_samp__shared_key(s);
        if (rc) return rc;
    }
    if (im->map && im->map_gen == im->gen && !at_open) return 0;
    int rc = at_open == 2 ? GSNAP_ECORRUPT : gsnap_samp__shared_attach(s, im->gen), hold = -1;
    if (rc == 0) {
        gsnap_samp__shared_gc(s, im->gen, at_open != 0); /* shared_gc.c */
        return 0;
    }
    if (rc == GSNAP_EBUSY) { /* held by another process: private until the next generation */
        s->st.shared_bytes = 0;
        return 0;
    }
    int replace = rc == GSNAP_ECORRUPT;
    if ((rc = publish(s, replace, &hold))) { /* cannot publish here: serve private images from now on */
        snprintf(sh->why, sizeof sh->why, "%s: cannot publish an image (%s)", sh->dir,
                 strerror(sh->err ? sh->err : EIO));
        s->st.shared_bytes = 0;
        sh->follow = 0; /* no retry (a whole image written) at every batch */
        return 0;
    }
    rc = gsnap_samp__shared_attach(s, im->gen);
    close(hold);
    gsnap_samp__shared_gc(s, im->gen, at_open != 0);
    if (rc == GSNAP_ECORRUPT) { /* another process replaced it with a bad one: stay private */
        s->st.shared_bytes = 0;
        return 0;
    }
    return rc == GSNAP_NOTFOUND ? 0 : rc;
}

int gsnap_samp__shared_next(gsnap_sampler *s) {
    gsnap_samp__shared *sh = s->shm;
    if (!sh || !sh->follow || s->snap || !s->im || s->im->mixed) return 0;
    if (gsnap_samp__shared_attach(s, s->im->gen + 1) != 0) return 0;
    gsnap_samp__shared_gc(s, s->im->gen, 0);
    s->st.refreshes++;
    s->st.generation = s->im->gen;
    return 1;
}
