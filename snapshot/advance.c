/*
 * snapshot/advance.c -- `snapshot advance`: move a sampled snapshot to a
 * newer (T, V) by recomputing only what changed, as a new snapshot version.
 * The steps, in order (the files are named in snapshot/adv_int.h):
 *   claim     the name's lock (claim.c), held until the commit;
 *   C_1       nodes whose adjacency (snapshot direction) changed between the
 *             two (T, V): the store's per-version touched-node log for
 *             versions between the old and the new V; every touched node
 *             when T moves;
 *   recompute hop 1: D_1(v) for v in C_1 from N(v) at the new (T, V);
 *             hop h: D_h(v) for the nodes with a changed or new input, from
 *             the new D_{h-1} where recomputed and the stored one elsewhere
 *             (adv_join.c). The same function of the same inputs as a fresh
 *             build (sampled.c), so the lists, sizes and flags are those of
 *             a create at the new (T, V);
 *   write     copy-on-write by list into free or new blocks, fsynced
 *             (adv_write.c); no block a live reader's version points to is
 *             written;
 *   commit    one LMDB write txn (adv_commit.c). A crash before it leaves
 *             the old version: what was written went to free or
 *             unreferenced blocks.
 */
#include "snapshot/adv_int.h"
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static void progress(adv *a, const char *phase, uint64_t done, uint64_t total) {
    if (a->opts && a->opts->progress) a->opts->progress(a->opts->progress_ctx, phase, done, total);
}

static void adv_free(adv *a) {
    if (!a) return;
    gsnap_snap__release(a->lock_fd);
    gsnap_adv__cursors_close(a);
    for (int h = 0; h <= GSNAP_MAX_HOPS; h++) {
        if (a->fd[h] >= 0) close(a->fd[h]);
        for (size_t i = 0; i < a->hs[h].n; i++) {
            if (a->hs[h].e[i].add != a->hs[h].e[i].s) free(a->hs[h].e[i].add);
            free(a->hs[h].e[i].s);
        }
        free(a->hs[h].e);
        map_free(&a->hs[h].idx);
        free(a->plan[h].freed);
        free(a->plan[h].alloc);
        free(a->plan[h].np);
        free(a->live[h]);
        map_free(&a->ol_idx[h]);
        map_free(&a->tp_idx[h]);
    }
    for (size_t i = 0; i < a->nfl; i++) free(a->fl[i].blk);
    free(a->fl);
    map_free(&a->nin_idx);
    map_free(&a->nout_idx);
    gsnap_adv__vfree(&a->nout_off); gsnap_adv__vfree(&a->nout_ids);
    map_free(&a->c1);
    gsnap_adv__vfree(&a->nin_off); gsnap_adv__vfree(&a->nin_ids); gsnap_adv__vfree(&a->c1_list);
    free(a->bc); free(a->bc_tag); free(a->scratch);
    free(a->ol); gsnap_adv__vfree(&a->ol_s);
    free(a->tp); gsnap_adv__vfree(&a->tp_s);
    gsnap_adv__vfree(&a->c1_new); gsnap_adv__vfree(&a->c1_doff); free(a->c1_lost);
    free(a->tev); gsnap_adv__vfree(&a->tail); gsnap_adv__vfree(&a->merged);
    free(a);
}

/* The snapshot's catalog as of view rt: complete and sampled; the target
 * (T, V); the slab files and the block cache. */
void (*gsnap_adv__setup_hook)(gsnap_db *db);

static int setup(adv *a, const gsnap_advance_options *opts) {
    gsnap_db *db = a->db;
    char path[2300];
    int rc;
    if ((rc = gsnap_snap__cat_get(db, a->rt, a->name, &a->cat))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", a->name);
        return rc;
    }
    if (a->cat.status != GSNAP_SNAP_STATUS_COMPLETE)
        return gsnap_store__err(db, GSNAP_NOTFOUND, "snapshot %s is incomplete (build did not finish)", a->name);
    if (a->cat.kind != GSNAP_HOPSETS_SAMPLED)
        return gsnap_store__err(db, GSNAP_ENOTSUP, "snapshot %s has exact hop sets: only sampled snapshots advance "
                                "(create it with --hop-sets sampled)", a->name);
    a->p.hops = a->cat.hops;
    a->p.dir = (gsnap_dir)a->cat.dir;
    a->p.seed = a->cat.seed;
    a->key = gsnap_snap__order_key(a->cat.seed);
    /* the newest version this advance's read view sees, not the database's
     * newest: a batch committed after the view began is not in what the
     * recompute reads (change log, adjacency), so it must stay for the next
     * advance (a->rd is that view) */
    if (gsnap_adv__setup_hook) gsnap_adv__setup_hook(db);
    uint64_t latest = gsnap_read_version(a->rd);
    a->V = opts->as_of == GSNAP_VERSION_LATEST || opts->as_of > latest ? latest : opts->as_of;
    a->T = opts->at_t == GSNAP_ADVANCE_KEEP_T ? a->cat.at_t : opts->at_t;
    a->rep.from_version = a->cat.at_version;
    a->rep.to_version = a->V;
    for (unsigned h = 1; h <= a->p.hops; h++) {
        gsnap_snap__slab_path(db, a->name, h, path, sizeof path);
        if ((a->fd[h] = open(path, O_RDWR | O_CLOEXEC)) < 0)
            return gsnap_store__err(db, GSNAP_EIO, "snapshot %s: cannot open %s: %s", a->name, path, strerror(errno));
    }
    if (posix_memalign((void **)&a->bc, GSNAP_SLAB_BLOCK, (size_t)BCACHE * GSNAP_SLAB_BLOCK) ||
        !(a->bc_tag = calloc(BCACHE, sizeof *a->bc_tag)))
        return GSNAP_ENOMEM;
    a->blk = a->bc;
    return 0;
}

/* C_1 from the store's touched-node log. */
static int touched(adv *a, gsnap_read *rd) {
    uint64_t *nodes = NULL;
    size_t n = 0;
    int rc = 0;
    uint64_t lo = a->cat.at_version < a->V ? a->cat.at_version : a->V, hi = a->cat.at_version ^ a->V ^ lo;
    if (a->T != a->cat.at_t) lo = 0; /* T moved: every node with events may change */
    if (hi > lo && (rc = gsnap_store__changed_nodes(a->db, rd, a->p.dir, lo, hi, &nodes, &n))) return rc;
    for (size_t i = 0; i < n && !rc; i++) rc = vpush(&a->c1_list, nodes[i]);
    free(nodes);
    a->rep.touched_nodes = a->c1_list.n;
    return rc;
}

/* What only the recompute reads goes before the write and the commit
 * (their peak memory): decoded stored lists, out-neighbours. */
static void release_recompute(adv *a) {
    for (int h = 0; h <= GSNAP_MAX_HOPS; h++) map_free(&a->ol_idx[h]), map_free(&a->tp_idx[h]);
    free(a->ol); gsnap_adv__vfree(&a->ol_s);
    free(a->tp); gsnap_adv__vfree(&a->tp_s);
    a->tp = NULL; a->ntp = a->tp_cap = 0;
    memset(&a->tp_s, 0, sizeof a->tp_s);
    a->ol = NULL; a->nol = a->ol_cap = 0;
    memset(&a->ol_s, 0, sizeof a->ol_s);
    map_free(&a->nout_idx);
    gsnap_adv__vfree(&a->nout_off); gsnap_adv__vfree(&a->nout_ids);
    memset(&a->nout_off, 0, sizeof a->nout_off);
    memset(&a->nout_ids, 0, sizeof a->nout_ids);
}

/* Recompute in one read view of the old snapshot and the store. */
static int recompute_phase(adv *a, const gsnap_advance_options *opts) {
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(a->db, &rd);
    if (rc) return rc;
    a->rt = gsnap_read__txn(rd);
    a->rd = rd;
    if (!(rc = setup(a, opts)) && !(rc = touched(a, rd))) {
        gsnap_adv__addonly_check(a);
        progress(a, "recompute", 0, a->p.hops);
        if (!(rc = gsnap_adv__recompute(a))) rc = gsnap_adv__load_free(a);
    }
    /* nodes of C_1 all have their N(v) cached (the commit needs them) */
    for (size_t i = 0; i < a->c1_list.n && !rc; i++) {
        const uint64_t *xs;
        size_t n;
        rc = gsnap_adv__nin(a, a->c1_list.v[i], &xs, &n);
    }
    gsnap_adv__cursors_close(a);
    gsnap_read_end(rd);
    a->rt = NULL;
    a->rd = NULL;
    release_recompute(a);
    return rc;
}

/* The rewrite reads the old table: a fresh short view. */
static int write_phase(adv *a) {
    uint64_t oldest = gsnap_adv__oldest_reader(a->db);
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(a->db, &rd);
    if (rc) return rc;
    a->rt = gsnap_read__txn(rd);
    for (unsigned h = 1; h <= a->p.hops && !rc; h++) {
        progress(a, "write", h - 1, a->p.hops);
        rc = gsnap_adv__rewrite_hop(a, h, oldest);
    }
    gsnap_adv__cursors_close(a);
    gsnap_read_end(rd);
    a->rt = NULL;
    return rc;
}

int gsnap_snapshot_advance(gsnap_db *db, const char *name, const gsnap_advance_options *opts,
                           gsnap_advance_report *report) {
    static const gsnap_advance_options defaults = GSNAP_ADVANCE_OPTIONS_INIT;
    char tname[96];
    struct timespec t0, t1;
    int rc;
    if (!db) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (!gsnap_snap__valid_name(name)) return gsnap_store__err(db, GSNAP_EINVAL, "snapshot advance: bad name");
    if (opts->version != GSNAP_ADVANCE_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "advance options version %u unknown", opts->version);
    if (gsnap_store__read_only(db)) return gsnap_store__err(db, GSNAP_EACCES, "database is read-only");
    if (gsnap_store__keep(db) != GSNAP_KEEP_BOTH)
        return gsnap_store__err(db, GSNAP_ENOTSUP, "snapshot advance needs a store that keeps both directions");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    adv *a = calloc(1, sizeof *a);
    if (!a) return GSNAP_ENOMEM;
    for (int h = 0; h <= GSNAP_MAX_HOPS; h++) a->fd[h] = -1;
    a->lock_fd = -1;
    a->db = db;
    a->name = name;
    a->opts = opts;
    if ((rc = gsnap_snap__pre_open(db, name))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name);
        goto out;
    }
    if ((rc = gsnap_snap__claim(db, name, GSNAP_EBUSY, &a->lock_fd))) goto out;
    gsnap_snap__table_name(name, tname, sizeof tname);
    if ((rc = gsnap_store__table(db, tname, 0, 0, &a->dbi))) goto out;
    if ((rc = recompute_phase(a, opts)) || (rc = write_phase(a))) goto out;
    progress(a, "commit", a->p.hops, a->p.hops);
    if ((rc = gsnap_store__write(db, gsnap_adv__commit_txn, a))) goto out;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    a->rep.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (report) *report = a->rep;
out:
    adv_free(a);
    return rc;
}
