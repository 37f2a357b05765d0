/*
 * sampler/shared_key.c -- what a published image is a function of (its key)
 * and the set-up of the shared host tier at open (see sampler/shared.c).
 *
 * The key is text: the database's identity (its real path, device and inode
 * of the directory and of its data file), the snapshot (name, (T, V),
 * direction, build seed, snapshot version) or the read point, and the
 * sampler's parameters that decide the entries: mode, seed, gamma,
 * threshold, direction, freshness, node bound, refresh policy and run-time
 * core bounds, and per cache its hop and capacity. Fanouts enter through the capacities; delta and the period do
 * not change an image. The file name is the XXH3 of the key plus the
 * generation, and the whole key is stored in the header and compared.
 */
#include "sampler/sampler_int.h"
#include "sampler/shared_int.h"
#include "snapshot/snapshot.h"
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int add(gsnap_samp__shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add(gsnap_samp__shared *sh, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof sh->key - sh->keylen;
    int n = vsnprintf(sh->key + sh->keylen, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) return GSNAP_ERANGE;
    sh->keylen += (size_t)n;
    return 0;
}

static int key_db(gsnap_sampler *s) {
    gsnap_samp__shared *sh = s->shm;
    const char *p = gsnap_db_path(s->db);
    char real[PATH_MAX], data[PATH_MAX + 16];
    struct stat d, f;
    if (!p || !realpath(p, real) || stat(real, &d)) return GSNAP_EIO;
    snprintf(data, sizeof data, "%s/data.mdb", real);
    if (stat(data, &f)) memset(&f, 0, sizeof f);
    return add(sh, "db=%s dev=%llu ino=%llu data=%llu;", real, (unsigned long long)d.st_dev,
               (unsigned long long)d.st_ino, (unsigned long long)f.st_ino);
}

/* Content identity: the commit records (time, counts) of the first version
 * and of the version read. Path and inode numbers alone match a database
 * removed and made again at the same place (inode numbers are reused), whose
 * old images would then be mapped for a different graph. */
static int key_versions(gsnap_sampler *s) {
    uint64_t vs[2] = {1, s->rp.as_of};
    for (int i = 0; i < 2; i++) {
        if (vs[i] == 0 || vs[i] == GSNAP_VERSION_LATEST) continue;
        gsnap_version_info *vi = NULL;
        size_t n = 0;
        int rc = gsnap_db_log(s->db, NULL, vs[i], vs[i], &vi, &n);
        if (rc) return rc;
        if (n == 1)
            rc = add(s->shm, "v%llu=%d/%lld/%llu/%llu;", (unsigned long long)vs[i], vi[0].known,
                     (long long)vi[0].commit_ns, (unsigned long long)vi[0].adds,
                     (unsigned long long)vi[0].deletes);
        gsnap_free(vi);
        if (rc) return rc;
    }
    return 0;
}

int gsnap_samp__shared_key(gsnap_sampler *s) {
    gsnap_samp__shared *sh = s->shm;
    const gsnap_samp__rparams *rp = &s->rp;
    int rc;
    sh->keylen = 0;
    if ((rc = key_db(s)) || (rc = key_versions(s))) return rc;
    if (s->snap) {
        const gsnap_snapshot__params *p = gsnap_snapshot__get_params(s->snap);
        if ((rc = add(sh, "snap=%s t=%lld v=%llu dir=%d seed=%llu sv=%llu;", s->snap_name,
                      (long long)p->at_t, (unsigned long long)p->at_version, (int)p->dir,
                      (unsigned long long)p->seed, (unsigned long long)s->st.snap_version)))
            return rc;
    }
    rc = add(sh, "mode=%s seed=%llu gamma=%a thr=%llu t=%lld v=%llu dir=%d fresh=%d n=%llu;",
             gsnap_sample_mode_name(s->o.mode), (unsigned long long)rp->seed, rp->gamma,
             (unsigned long long)rp->threshold, (long long)rp->at_t,
             (unsigned long long)rp->as_of, (int)s->o.dir, s->o.max_staleness >= 0,
             (unsigned long long)s->nbound);
    if (rc == 0) /* the adaptive block (policy, run-time core) shapes the core at open */
        rc = add(sh, "pol=%d cmin=%u cmax=%llu;", (int)s->o.policy, s->o.core_min,
                 (unsigned long long)s->o.core_max_bytes);
    for (unsigned i = 0; rc == 0 && i < rp->ncache; i++)
        rc = add(sh, "c%u=%u/%u;", i, rp->hops[i], rp->caps[i]);
    if (rc) return rc;
    sh->khash = XXH3_64bits(sh->key, sh->keylen);
    sh->snapv = s->st.snap_version;
    return 0;
}

int gsnap_samp__shared_open(gsnap_sampler *s) {
    const char *dir = s->o.shared_dir;
    s->o.shared_dir = NULL; /* the caller's string: copied below */
    if (!s->o.shared || !s->rp.ncache) return 0; /* off, or FBL: nothing cached */
    if (!s->db) return GSNAP_ENOTSUP;            /* a source without a store (tests) */
    if (!dir || !*dir) dir = getenv("GSNAP_SHARED_DIR");
    if (!dir || !*dir) dir = "/dev/shm";
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return gsnap_store__err(s->db, GSNAP_EINVAL, "sampler: shared_dir %s is not a directory", dir);
    gsnap_samp__shared *sh = calloc(1, sizeof *sh);
    if (!sh) return GSNAP_ENOMEM;
    s->shm = sh;
    if (strlen(dir) >= sizeof sh->dir)
        return gsnap_store__err(s->db, GSNAP_EINVAL, "sampler: shared_dir is too long");
    strcpy(sh->dir, dir);
    /* frozen FCR / FSCR / PCF with a fixed gamma and the static core:
     * generation k+1 follows from k and the key (an adaptive gamma or a
     * run-time core depends on the batches this process served) */
    sh->follow = s->o.max_staleness < 0 && s->o.mode != GSNAP_MODE_PSCR &&
                 s->o.mode != GSNAP_MODE_PSCR_SC && s->o.policy == GSNAP_REFRESH_FIXED &&
                 s->o.core_min == 0;
    int rc = gsnap_samp__shared_key(s);
    if (rc == GSNAP_ERANGE) return gsnap_store__err(s->db, rc, "sampler: shared image key too long");
    if (rc) return gsnap_store__err(s->db, rc, "sampler: cannot identify the database for sharing");
    return 0;
}

void gsnap_samp__shared_close(gsnap_sampler *s) {
    free(s->shm);
    s->shm = NULL;
}

const char *gsnap_sampler_shared_note(const gsnap_sampler *s) {
    return s && s->shm && s->shm->why[0] ? s->shm->why : NULL;
}
