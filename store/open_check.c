/*
 * store/open_check.c -- what gsnap_db_open checks before it lets LMDB touch a
 * directory (issue #11):
 *   - the data file's LMDB meta pages, read with pread (not mapped): an
 *     LMDB magic and version, a sane page size, and a file at least as long
 *     as the newest meta page says (last page + 1) * page size, or whose
 *     missing last pages are all free (see tail_is_free). A truncated file
 *     would otherwise be mapped past its end, and a read there is SIGBUS. A
 *     file that is not LMDB is refused before LMDB creates a lock.mdb
 *     beside it. The size is read after the meta pages, since another
 *     process may commit in between (it extends the file before it writes
 *     its meta page);
 *   - the map size against the address space limit (RLIMIT_AS);
 *   - one open handle per database directory and process: LMDB forbids
 *     opening one environment twice in a process (its locks are per
 *     process; a second mdb_env_open breaks the first one's read views);
 *   - closed handles: debug builds (no NDEBUG) keep the last few closed
 *     gsnap_db structs, marked dead, so that a call on a closed handle is
 *     refused (GSNAP_EINVAL) instead of reading freed memory.
 *
 * LMDB meta page layout (lmdb 0.9, 64-bit): a 16-byte page header, then
 * MDB_meta: magic u32 (0xBEEFC0DE), version u32, address, mapsize, two
 * MDB_db of 48 bytes (the first one's md_pad holds the page size), last
 * page number, txn id. Meta 0 is page 0, meta 1 is page 1.
 */
#include "store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u

static uint64_t get64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static uint32_t get32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- a short file whose missing tail is free pages ---------------------------
 *
 * LMDB counts in last_pg pages it never writes: a page allocated and freed
 * again in one txn ("loose") goes to the freelist unwritten, and when it was
 * the highest page the committed file ends before (last_pg + 1) * psize.
 * Such a file is sound: LMDB never reads a free page (it gives a reused one
 * a fresh buffer). So a file that is short is accepted when every missing
 * page is in the freelist (the FREE_DBI B-tree, read here with pread, every
 * page checked to lie inside the file); anything else is truncation.
 * Layout (lmdb 0.9, 64-bit): page header pgno u64, pad u16, flags u16,
 * lower u16 (overflow: pages u32), upper u16; u16 node offsets from byte
 * 16; a node is lo u16, hi u16, flags u16, ksize u16, key, data. A branch
 * node's child is lo | hi << 16 | flags << 32; a leaf's data size is
 * lo | hi << 16, and with F_BIGDATA the data is the number of an overflow
 * page whose contents start at byte 16. A freelist record is an MDB_ID list:
 * count, then page numbers. */

void (*gsnap_store__probe_hook)(const char *path);

#define P_BRANCH 0x01
#define P_LEAF 0x02
#define F_BIGDATA 0x01
#define FREE_MAX_MISSING ((uint64_t)1 << 24) /* pages: more is truncation */

struct free_walk {
    int fd;
    uint32_t psize;
    uint64_t file_pages, first_missing, nmissing, found, budget;
    unsigned char *seen; /* the missing pages found free */
};

/* Mark the page numbers of one freelist record (len bytes at p). */
static void free_ids(struct free_walk *w, const unsigned char *p, uint64_t len) {
    if (len < 8) return;
    uint64_t n = get64(p);
    if (n > len / 8 - 1) n = len / 8 - 1;
    for (uint64_t i = 1; i <= n; i++) {
        uint64_t pg = get64(p + i * 8) - w->first_missing;
        if (pg < w->nmissing && !(w->seen[pg / 8] & (1u << (pg % 8)))) {
            w->seen[pg / 8] |= (unsigned char)(1u << (pg % 8));
            w->found++;
        }
    }
}

static int read_page(struct free_walk *w, uint64_t pgno, unsigned char *buf, uint64_t npages) {
    if (pgno >= w->file_pages || npages > w->file_pages - pgno || w->budget == 0) return -1;
    w->budget--;
    size_t len = (size_t)(npages * w->psize);
    return pread(w->fd, buf, len, (off_t)(pgno * w->psize)) == (ssize_t)len ? 0 : -1;
}

/* Walk the subtree at pgno (depth levels left). 0, or -1: unreadable. */
static int free_walk(struct free_walk *w, uint64_t pgno, int depth) {
    unsigned char *pg = malloc(w->psize);
    if (!pg || depth <= 0 || read_page(w, pgno, pg, 1)) {
        free(pg);
        return -1;
    }
    int rc = 0;
    unsigned flags = get32(pg + 8) >> 16, lower = get32(pg + 12) & 0xffff;
    unsigned nkeys = lower >= 16 && lower <= w->psize ? (lower - 16) / 2 : 0;
    for (unsigned i = 0; i < nkeys && rc == 0; i++) {
        unsigned off = (unsigned)(pg[16 + 2 * i] | pg[17 + 2 * i] << 8);
        if (off < 16 || off + 8 > w->psize) { rc = -1; break; }
        const unsigned char *nd = pg + off;
        uint64_t lo = (uint64_t)(nd[0] | nd[1] << 8), hi = (uint64_t)(nd[2] | nd[3] << 8);
        uint64_t nfl = (uint64_t)(nd[4] | nd[5] << 8), ks = (uint64_t)(nd[6] | nd[7] << 8);
        if (flags & P_BRANCH) {
            rc = free_walk(w, lo | hi << 16 | nfl << 32, depth - 1);
            continue;
        }
        if (!(flags & P_LEAF)) { rc = -1; break; }
        uint64_t dsz = lo | hi << 16, at = off + 8 + ks;
        if (!(nfl & F_BIGDATA)) {
            if (at + dsz > w->psize) rc = -1;
            else free_ids(w, pg + at, dsz);
            continue;
        }
        if (at + 8 > w->psize) { rc = -1; break; }
        uint64_t opg = get64(pg + at), npages = (dsz + 16 + w->psize - 1) / w->psize;
        unsigned char *ov = opg < w->file_pages && npages <= w->file_pages - opg ?
                            malloc((size_t)(npages * w->psize)) : NULL;
        if (!ov || read_page(w, opg, ov, npages)) rc = -1;
        else free_ids(w, ov + 16, dsz);
        free(ov);
    }
    free(pg);
    return rc;
}

/* The txn id of the newer meta page now. */
static uint64_t newest_txnid(int fd, uint32_t psize) {
    unsigned char t[8] = {0}, u[8] = {0};
    if (pread(fd, t, 8, 144) != 8 || pread(fd, u, 8, (off_t)psize + 144) != 8) return 0;
    return get64(t) > get64(u) ? get64(t) : get64(u);
}

/* Are the pages file_pages..last_pg, missing from the file, all free in the
 * freelist of meta page `meta`? */
static int tail_is_free(int fd, const unsigned char *meta, uint32_t psize, uint64_t file_pages, uint64_t last_pg) {
    uint64_t root = get64(meta + 80); /* FREE_DBI's md_root */
    if (file_pages < 2 || last_pg < file_pages || last_pg - file_pages >= FREE_MAX_MISSING ||
        root == UINT64_MAX)
        return 0;
    struct free_walk w = {fd, psize, file_pages, file_pages, last_pg - file_pages + 1, 0, file_pages, NULL};
    w.seen = calloc(1, (size_t)(w.nmissing / 8 + 1));
    int ok = w.seen && free_walk(&w, root, 32) == 0 && w.found == w.nmissing;
    free(w.seen);
    return ok;
}

int gsnap_store__probe(const char *path, gsnap_probe *pr, char *msg, size_t msglen) {
    memset(pr, 0, sizeof *pr);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return GSNAP_NOTFOUND;
        snprintf(msg, msglen, "%s: %s", path, strerror(errno));
        return errno == EACCES || errno == EPERM ? GSNAP_EACCES : GSNAP_EIO;
    }
    unsigned char m[2][160];
    int rc = 0, tries = 0;
again:;
    ssize_t got = pread(fd, m[0], sizeof m[0], 0);
    if (got != (ssize_t)sizeof m[0] || get32(m[0] + 16) != LMDB_MAGIC) {
        snprintf(msg, msglen, "%s is not an LMDB data file (%s)", path,
                 got < (ssize_t)sizeof m[0] ? "too short" : "no LMDB magic number in its first page");
        rc = GSNAP_EFORMAT;
        goto out;
    }
    if (get32(m[0] + 20) != LMDB_DATA_VERSION) {
        snprintf(msg, msglen, "%s: LMDB data format version %u, this LMDB reads version %u", path,
                 get32(m[0] + 20), LMDB_DATA_VERSION);
        rc = GSNAP_EFORMAT;
        goto out;
    }
    uint32_t psize = get32(m[0] + 40);
    if (psize < 512 || psize > 65536 || (psize & (psize - 1))) {
        snprintf(msg, msglen, "%s: corrupt LMDB meta page 0 (page size %u)", path, psize);
        rc = GSNAP_ECORRUPT;
        goto out;
    }
    pr->psize = psize;
    /* The newer of the two meta pages is the one LMDB will use. */
    int have1 = pread(fd, m[1], sizeof m[1], psize) == (ssize_t)sizeof m[1] && get32(m[1] + 16) == LMDB_MAGIC;
    int use = have1 && get64(m[1] + 144) > get64(m[0] + 144) ? 1 : 0;
    pr->mapsize = get64(m[use] + 32);
    pr->last_pg = get64(m[use] + 136);
    /* The size after the meta pages: LMDB writes a commit's pages before
     * its meta page, so the file is at least as long as any meta page read
     * before says. (Size first, meta second could pair an old size with
     * the meta page of a commit made in between: a false alarm.) */
    if (gsnap_store__probe_hook) gsnap_store__probe_hook(path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(msg, msglen, "%s: %s", path, strerror(errno));
        rc = GSNAP_EIO;
        goto out;
    }
    pr->file_size = (uint64_t)st.st_size;
    uint64_t need = (pr->last_pg + 1) * (uint64_t)psize;
    if (pr->last_pg > (UINT64_MAX / 65536) ||
        (need > pr->file_size && !tail_is_free(fd, m[use], psize, pr->file_size / psize, pr->last_pg))) {
        /* a commit during the freelist walk may have reused its pages */
        if (++tries < 3 && newest_txnid(fd, psize) != get64(m[use] + 144)) goto again;
        snprintf(msg, msglen, "%s is %llu bytes, shorter than its LMDB meta page %d says (%llu pages of %u "
                 "bytes = %llu bytes): the file was truncated; refusing to map it (restore it from a backup)",
                 path, (unsigned long long)pr->file_size, use, (unsigned long long)(pr->last_pg + 1), psize,
                 (unsigned long long)need);
        rc = GSNAP_ECORRUPT;
        goto out;
    }
out:
    close(fd);
    return rc;
}

int gsnap_store__map_limit(size_t map, char *msg, size_t msglen) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)map >= (uint64_t)rl.rlim_cur) {
        snprintf(msg, msglen, "map size %zu bytes (%.1f GiB) cannot be mapped: the address space limit "
                 "(RLIMIT_AS, ulimit -v) is %llu bytes (%.1f GiB); use a smaller --map-size (the map grows "
                 "by itself) or raise the limit", map, (double)map / (1 << 30),
                 (unsigned long long)rl.rlim_cur, (double)rl.rlim_cur / (1 << 30));
        return GSNAP_ENOMEM;
    }
    return 0;
}

/* ---- one open per directory and process ----------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t dev, ino; gsnap_db *db; } *reg;
static size_t nreg, capreg;
static pid_t reg_pid; /* the process the entries belong to */

/* A child of fork() has none of its parent's handles open (LMDB: an env is
 * never used across fork), so it starts with an empty registry. */
static void reg_fork_check(void) {
    if (nreg && reg_pid != getpid()) nreg = 0;
    reg_pid = getpid();
}

int gsnap_store__claim_dir(uint64_t dev, uint64_t ino) {
    int rc = 0;
    pthread_mutex_lock(&reg_lock);
    reg_fork_check();
    for (size_t i = 0; i < nreg; i++)
        if (reg[i].dev == dev && reg[i].ino == ino) rc = GSNAP_EBUSY;
    if (rc == 0 && nreg == capreg) {
        size_t nc = capreg ? capreg * 2 : 8;
        void *nr = realloc(reg, nc * sizeof *reg);
        if (!nr) rc = GSNAP_ENOMEM;
        else {
            reg = nr;
            capreg = nc;
        }
    }
    if (rc == 0) {
        reg[nreg].dev = dev;
        reg[nreg].ino = ino;
        reg[nreg].db = NULL;
        nreg++;
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

void gsnap_store__claim_set(uint64_t dev, uint64_t ino, gsnap_db *db) {
    pthread_mutex_lock(&reg_lock);
    reg_fork_check();
    for (size_t i = 0; i < nreg; i++)
        if (reg[i].dev == dev && reg[i].ino == ino) reg[i].db = db;
    pthread_mutex_unlock(&reg_lock);
}

gsnap_db *gsnap_store__open_handle(const char *path) {
    struct stat st;
    gsnap_db *db = NULL;
    if (stat(path, &st) != 0) return NULL;
    pthread_mutex_lock(&reg_lock);
    reg_fork_check();
    for (size_t i = 0; i < nreg && !db; i++)
        if (reg[i].dev == (uint64_t)st.st_dev && reg[i].ino == (uint64_t)st.st_ino) db = reg[i].db;
    pthread_mutex_unlock(&reg_lock);
    return db;
}

void gsnap_store__release_dir(uint64_t dev, uint64_t ino) {
    pthread_mutex_lock(&reg_lock);
    reg_fork_check();
    for (size_t i = 0; i < nreg; i++)
        if (reg[i].dev == dev && reg[i].ino == ino) {
            reg[i] = reg[--nreg];
            break;
        }
    if (nreg == 0) {
        free(reg);
        reg = NULL;
        capreg = 0;
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- closed handles ----------------------------------------------------------- */

#ifndef NDEBUG
#define RETIRED 32
static gsnap_db *retired[RETIRED];
static unsigned nretired;
#endif

void gsnap_store__retire(gsnap_db *db) {
#ifndef NDEBUG
    /* Keep the dead struct (magic GSNAP_DB_DEAD) so that a later call on the
     * handle is refused; free the oldest once RETIRED are kept. */
    db->magic = GSNAP_DB_DEAD;
    pthread_mutex_lock(&reg_lock);
    gsnap_db *old = retired[nretired % RETIRED];
    retired[nretired % RETIRED] = db;
    nretired++;
    pthread_mutex_unlock(&reg_lock);
    free(old);
#else
    db->magic = 0;
    free(db);
#endif
}
