/*
 * snapshot/build.c -- building a snapshot: exact distance-h relations by
 * sort-merge joins, capped slab lists, the (hop, node) table, the catalog.
 *
 * Relations are streams of (a, b) pairs sorted by (a, b):
 *   A      = {(v, x) : x -> v live at (T, V)} (for IN; x distinct), straight
 *            from the store scan, which visits nodes in ascending order.
 *   N_h    = {(v, x) : dist(x -> v) = h}, N_1 = A minus self loops.
 *   B_h    = N_1 u ... u N_h (the ball without v itself).
 * Step h -> h+1 (the two-pointer join of the GraphSnapShot papers):
 *   F = N_h re-sorted by (w, v); walk F and A together on w; for every
 *   (w, v) in F and x in A(w) emit (v, x) into a sorter; the sorted, deduped
 *   stream minus B_h minus {v} is N_{h+1}, produced in v order, which is the
 *   order slab lists are written in. N_{h+1} is computed from the exact
 *   N_h, never from a capped list: caps only decide what is stored.
 * Every sorter is bounded by the memory budget and spills sorted runs.
 * When A and two node arrays fit the budget (and the caller did not force
 * sort-merge), join_in_memory computes the same relation from a CSR of A.
 */
#include "snapshot/build_int.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TABLE_KEYS_PER_TXN 50000u

/* A failed file operation of the build: ENOSPC/EFBIG are "no space", the
 * rest I/O errors; either way the message says which file work failed. */
int gsnap_build__file_err(build *b, const char *what) {
    int e = errno;
    int code = (e == ENOSPC || e == EFBIG || e == EDQUOT) ? GSNAP_ENOSPC : GSNAP_EIO;
    return gsnap_store__err(b->db, code, "snapshot %s: %s: %s", b->name, what, e ? strerror(e) : "I/O error");
}

int gsnap_build__emit_list(build *b, unsigned hop, uint64_t v, const uint64_t *ids, size_t n) {
    struct ptr_rec r;
    gsnap_slab_ptr sp;
    int rc;
    size_t m = n < GSNAP_SLAB_CAP ? n : GSNAP_SLAB_CAP;
    if ((rc = vec_reserve(&b->sel, m ? m : 1))) return rc;
    uint64_t key = gsnap_snap__sample_key(b->p.seed, hop, v, 0, GSNAP_PURPOSE_SLAB);
    if ((rc = gsnap_snap__select(ids, n, m, key, b->sel.v, &b->scratch, &b->scratch_cap))) return rc;
    if ((rc = gsnap_slab__writer_add(&b->sw[hop], v, b->sel.v, (uint32_t)m, &sp))) return rc;
    memset(&r, 0, sizeof r);
    r.node = v;
    r.off = sp.off;
    r.xxh = sp.xxh;
    r.len = sp.len;
    r.n_exact = n;
    r.flags = n > m ? GSNAP_REC_CAPPED : 0;
    if (fwrite(&r, sizeof r, 1, b->ptrs[hop]) != 1) return gsnap_build__file_err(b, "writing a slab pointer spill file");
    b->cat.exact_ids[hop - 1] += n;
    b->cat.stored_ids[hop - 1] += m;
    if (n > m) b->cat.capped[hop - 1]++;
    return 0;
}

/* ---- phase 1: the store scan ---- */

/* The scan writes A = {(v, x)}, x distinct, self loops included; each kind
 * takes its hop 1 from A (build_kind.c). */
static int scan_fn(void *vctx, uint64_t node, const gsnap_nbr *nbrs, size_t n) {
    build *b = vctx;
    int rc;
    if ((rc = vec_reserve(&b->ids, n ? n : 1))) return rc;
    size_t m = gsnap_store__distinct_ids(nbrs, n, b->ids.v);
    for (size_t i = 0; i < m; i++)
        if ((rc = gsnap_pf__write(&b->A, node, b->ids.v[i]))) return rc;
    if (++b->cat.nodes % 65536 == 0 && b->opts->progress)
        b->opts->progress(b->opts->progress_ctx, "scan", b->cat.nodes, 0);
    return 0;
}

int gsnap_build__open_hop(build *b, unsigned hop) {
    char path[2300];
    snprintf(path, sizeof path, "%s/ptr%u", b->tmp, hop);
    b->ptrs[hop] = fopen(path, "w+b");
    if (!b->ptrs[hop]) return gsnap_build__file_err(b, "creating a slab pointer spill file");
    unlink(path);
    setvbuf(b->ptrs[hop], NULL, _IOFBF, 1u << 18);
    if (gsnap_snap__slab_path(b->db, b->name, hop, path, sizeof path)) return GSNAP_EINVAL;
    return gsnap_slab__writer_open(&b->sw[hop], path, hop, &b->p);
}

int gsnap_build__close_hop(build *b, unsigned hop) {
    uint64_t blocks = 0;
    int rc = gsnap_slab__writer_finish(&b->sw[hop], &blocks);
    gsnap_slab__writer_free(&b->sw[hop]);
    if (rc) return rc;
    b->cat.blocks[hop - 1] = blocks;
    b->cat.slab_bytes += blocks * GSNAP_SLAB_BLOCK;
    if (b->opts->progress) b->opts->progress(b->opts->progress_ctx, "slab", hop, b->p.hops);
    return 0;
}

/* ---- catalog transitions ---- */

typedef struct { build *b; MDB_dbi dbi; } begin_ctx;

static int begin_txn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    begin_ctx *c = vctx;
    struct gsnap_cat old;
    int rc = gsnap_snap__cat_get(db, txn, c->b->name, &old);
    if (rc == 0 && old.status == GSNAP_SNAP_STATUS_COMPLETE)
        return gsnap_store__err(db, GSNAP_EEXIST, "snapshot %s already exists", c->b->name);
    if (rc && rc != GSNAP_NOTFOUND && rc != GSNAP_ECHECKSUM && rc != GSNAP_ECORRUPT && rc != GSNAP_EFORMAT)
        return rc;
    if ((rc = mdb_drop(txn, c->dbi, 0))) return gsnap_store__mdb_err(db, rc, "snapshot table reset");
    return gsnap_snap__cat_put(db, txn, c->b->name, &c->b->cat);
}

static int finish_txn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    build *b = vctx;
    int rc = gsnap_build__put_live(b, txn);
    return rc ? rc : gsnap_snap__cat_put(db, txn, b->name, &b->cat);
}

static int check_opts(gsnap_db *db, const char *name, const gsnap_snapshot_options *o) {
    if (!gsnap_snap__valid_name(name))
        return gsnap_store__err(db, GSNAP_EINVAL, "bad snapshot name '%s' (1..64 of A-Za-z0-9_.-)", name ? name : "");
    if (o->version != 1 && o->version != GSNAP_SNAPSHOT_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "snapshot options version %u unknown", o->version);
    if (o->hops < 1 || o->hops > GSNAP_MAX_HOPS)
        return gsnap_store__err(db, GSNAP_EINVAL, "hops must be 1..%d", GSNAP_MAX_HOPS);
    if (!(o->alpha >= 0) || o->alpha > 1e6)
        return gsnap_store__err(db, GSNAP_EINVAL, "alpha must be a number in [0, 1e6]");
    double alpha = o->alpha > 0 ? o->alpha : 2.0;
    for (unsigned h = 0; h < o->hops; h++) {
        uint32_t f = o->fanouts[h] ? o->fanouts[h] : 10;
        if (f > GSNAP_MAX_FANOUT)
            return gsnap_store__err(db, GSNAP_ERANGE, "fanout of hop %u is %u, the limit is %d (GSNAP_MAX_FANOUT)",
                                    h + 1, f, GSNAP_MAX_FANOUT);
        if (ceil(alpha * f - 1e-9) > GSNAP_MAX_CACHE_IDS)
            return gsnap_store__err(db, GSNAP_ERANGE, "hop %u: cached list of alpha %g * fanout %u ids, the limit "
                                    "is %d (GSNAP_MAX_CACHE_IDS)", h + 1, alpha, f, GSNAP_MAX_CACHE_IDS);
    }
    if (o->dir != GSNAP_DIR_IN && o->dir != GSNAP_DIR_OUT)
        return gsnap_store__err(db, GSNAP_EINVAL, "bad direction");
    if (o->version >= 2 && o->hop_sets > GSNAP_HOPSETS_SAMPLED)
        return gsnap_store__err(db, GSNAP_EINVAL, "hop sets must be auto, exact or sampled (got %u)", o->hop_sets);
    if (gsnap_store__read_only(db)) return gsnap_store__err(db, GSNAP_EACCES, "database is read-only");
    unsigned need = o->dir == GSNAP_DIR_IN ? GSNAP_KEEP_IN : GSNAP_KEEP_OUT;
    if (!(gsnap_store__keep(db) & need))
        return gsnap_store__err(db, GSNAP_ENOTSUP, "the store does not keep %s-edges",
                                o->dir == GSNAP_DIR_IN ? "in" : "out");
    return 0;
}

static int mkdirs(build *b) {
    char p[2100];
    snprintf(p, sizeof p, "%s/snapshots", gsnap_db_path(b->db));
    if (mkdir(p, 0755) && errno != EEXIST) return gsnap_store__err(b->db, GSNAP_EIO, "mkdir %s: %s", p, strerror(errno));
    if (mkdir(b->dir, 0755) && errno != EEXIST) return gsnap_store__err(b->db, GSNAP_EIO, "mkdir %s: %s", b->dir, strerror(errno));
    if (mkdir(b->tmp, 0755) && errno != EEXIST) return gsnap_store__err(b->db, GSNAP_EIO, "mkdir %s: %s", b->tmp, strerror(errno));
    return 0;
}

static void sync_dir(const char *d) {
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { fsync(fd); close(fd); }
}

/* A build of snapshot `name` with its parameters resolved (NULL: no memory). */
static build *new_build(gsnap_db *db, const char *name, const gsnap_snapshot_options *opts) {
    build *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++) b->sw[h].fd = -1; /* not open (0 is stdin) */
    b->lock_fd = -1;
    b->db = db;
    b->name = name;
    b->opts = opts;
    b->budget = opts->mem_budget ? opts->mem_budget : (size_t)256 << 20;
    if (b->budget < (1u << 20)) b->budget = 1u << 20;
    b->p.hops = opts->hops;
    for (unsigned h = 0; h < GSNAP_MAX_HOPS; h++)
        b->p.fanouts[h] = h < opts->hops ? (opts->fanouts[h] ? opts->fanouts[h] : 10) : 0;
    b->p.alpha = opts->alpha > 0 ? opts->alpha : 2.0;
    b->p.at_t = opts->at_t;
    b->p.dir = opts->dir;
    b->p.seed = opts->seed;
    gsnap_snap__dir(db, name, b->dir, sizeof b->dir);
    snprintf(b->tmp, sizeof b->tmp, "%s/tmp", b->dir);
    return b;
}

/* Record the snapshot as BUILDING (its table emptied) and prepare its
 * directories. The version is resolved here; the scan's read view begins
 * only after this write (no read view is held across a write txn, which may
 * have to grow the map). */
static int catalog_begin(build *b, MDB_dbi *dbi, int *began) {
    uint64_t latest = 0;
    char tname[96];
    MDB_dbi cat;
    int rc;
    const gsnap_snapshot_options *opts = b->opts;
    gsnap_db_stat dst0;
    if ((rc = gsnap_db_stats(b->db, &dst0))) return rc;
    latest = dst0.version;
    if (opts->as_of != GSNAP_VERSION_LATEST && opts->as_of > latest)
        return gsnap_store__err(b->db, GSNAP_ERANGE, "snapshot %s: version %llu is beyond the store's latest version "
                                "%llu", b->name, (unsigned long long)opts->as_of, (unsigned long long)latest);
    if (opts->at_t != GSNAP_TIME_MAX && opts->at_t > dst0.max_t && dst0.version > 0)
        return gsnap_store__err(b->db, GSNAP_ERANGE, "snapshot %s: time %lld is after the store's latest event time "
                                "%lld (use GSNAP_TIME_MAX, \"now\", for the newest state)", b->name,
                                (long long)opts->at_t, (long long)dst0.max_t);
    b->p.at_version = opts->as_of == GSNAP_VERSION_LATEST ? latest : opts->as_of;
    /* claim the name: an exclusive lock held for the whole build */
    if ((rc = gsnap_snap__claim(b->db, b->name, GSNAP_EEXIST, &b->lock_fd))) return rc;
    struct gsnap_cat *c = &b->cat;
    c->magic = GSNAP_CAT_MAGIC;
    c->format = GSNAP_CAT_FORMAT;
    c->status = GSNAP_SNAP_STATUS_BUILDING;
    unsigned want = opts->version >= 2 ? opts->hop_sets : GSNAP_HOPSETS_EXACT;
    c->kind = want == GSNAP_HOPSETS_AUTO ? GSNAP_HOPSETS_SAMPLED : want; /* AUTO decided after the scan */
    for (unsigned h = 0; h < GSNAP_MAX_HOPS; h++) c->caps[h] = h < b->p.hops ? GSNAP_SLAB_CAP : 0;
    c->hops = b->p.hops;
    memcpy(c->fanouts, b->p.fanouts, sizeof c->fanouts);
    c->alpha = b->p.alpha;
    c->at_t = b->p.at_t;
    c->at_version = b->p.at_version;
    c->dir = (uint32_t)b->p.dir;
    c->cap = GSNAP_SLAB_CAP;
    c->seed = b->p.seed;
    c->created_unix = (uint64_t)time(NULL);
    gsnap_snap__cat_seal(c);
    gsnap_snap__table_name(b->name, tname, sizeof tname);
    if ((rc = gsnap_store__table(b->db, GSNAP_CAT_TABLE, 0, 1, &cat))) return rc;
    if ((rc = gsnap_store__table(b->db, tname, 0, 1, dbi))) return rc;
    begin_ctx bc = {b, *dbi};
    if ((rc = gsnap_store__write(b->db, begin_txn, &bc))) return rc;
    *began = 1;
    gsnap_snap__remove_files(b->db, b->name); /* leftovers of a crashed build */
    return mkdirs(b);
}

/* Phase 1: one store scan writes A; then the kind is settled (AUTO) and
 * its hop 1 is taken from A: the exact kind writes N_1 (slab hop 1) and,
 * for sort-merge joins, F; the sampled kind runs all its hops
 * (build_kind.c). *in_mem = 1 when the exact joins will run in memory: A
 * (at most one pair per event), the CSR offsets and the marks fit the
 * budget, unless the caller forces sort-merge. */
static int scan_phase(build *b, int *in_mem, uint64_t *bound) {
    gsnap_read *rd = NULL;
    gsnap_db_stat dst;
    char path[2300];
    int rc;
    if ((rc = gsnap_read_begin(b->db, &rd))) return rc;
    snprintf(path, sizeof path, "%s/adj", b->tmp);
    if ((rc = gsnap_pf__create(&b->A, path))) goto out;
    *in_mem = 0;
    if (gsnap_store__node_bound(b->db, rd, bound)) *bound = 0;
    if (b->p.hops > 1 && !(b->opts->flags & GSNAP_SNAPSHOT_SORT_MERGE) && *bound && *bound < UINT32_MAX &&
        gsnap_db_stats(b->db, &dst) == 0 && dst.edge_records * 8 + *bound * 12 + 64 <= b->budget)
        *in_mem = 1;
    rc = gsnap_store__scan(b->db, rd, b->p.dir, b->p.at_t, b->p.at_version, scan_fn, b);
    gsnap_read_end(rd);
    rd = NULL;
    if (rc) goto out;
    if ((b->opts->version >= 2 ? b->opts->hop_sets : GSNAP_HOPSETS_EXACT) == GSNAP_HOPSETS_AUTO) {
        int ex = 0;
        if ((rc = gsnap_build__choose_exact(b, *bound, &ex))) goto out;
        b->cat.kind = ex ? GSNAP_HOPSETS_EXACT : GSNAP_HOPSETS_SAMPLED;
    }
    if (b->cat.kind == GSNAP_HOPSETS_SAMPLED) {
        rc = gsnap_build__sampled_phase(b, *bound);
        goto out;
    }
    if (b->p.hops > 1 && !*in_mem && (rc = gsnap_sorter__new(b->tmp, b->budget / 2, 0, &b->F))) goto out;
    if ((rc = gsnap_build__open_hop(b, 1))) goto out;
    if ((rc = gsnap_build__exact_replay(b))) goto out;
    rc = gsnap_build__close_hop(b, 1);
out:
    gsnap_read_end(rd);
    return rc;
}

/* Phase 2: hops 2..k, the balls B_h alternating between ball[0] and ball[1]. */
static int join_phase(build *b, gsnap_pfile ball[2], int in_mem, uint64_t bound) {
    char path[2300];
    int rc;
    if (b->cat.kind == GSNAP_HOPSETS_SAMPLED) return 0; /* all hops done in scan_phase */
    if (in_mem) return gsnap_build__join_in_memory(b, bound);
    for (unsigned h = 2; h <= b->p.hops; h++) {
        gsnap_pfile *cur = h == 2 ? &b->A : &ball[h % 2], *nxt = NULL;
        if (h < b->p.hops) {
            nxt = &ball[(h + 1) % 2];
            snprintf(path, sizeof path, "%s/ball%u", b->tmp, h);
            if ((rc = gsnap_pf__create(nxt, path))) return rc;
        }
        if ((rc = gsnap_build__join_step(b, h, cur, nxt))) return rc;
        if (cur != &b->A) gsnap_pf__close(cur, 1);
    }
    return 0;
}

/* Release a build; after a failure once BUILDING was recorded, drop what it
 * left (no half snapshot stays behind), keeping the first error message. */
static void end_build(build *b, gsnap_pfile ball[2], int rc, int began) {
    gsnap_pf__close(&b->A, 1);
    gsnap_pf__close(&ball[0], 1);
    gsnap_pf__close(&ball[1], 1);
    gsnap_sorter__free(b->F);
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++) gsnap_slab__writer_free(&b->sw[h]);
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++)
        if (b->ptrs[h]) fclose(b->ptrs[h]);
    /* Only the name's holder made tmp/; a build that lost the claim must not
     * remove the holder's (an empty tmp/ mid-build would fail its next spill). */
    if (b->lock_fd >= 0) rmdir(b->tmp);
    if (rc && began) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gsnap_db_errmsg(b->db));
        gsnap_snap__drop_claimed(b->db, b->name);
        if (*msg) gsnap_store__err(b->db, rc, "%s", msg);
    }
    gsnap_snap__release(b->lock_fd); /* releases the name */
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++) free(b->live[h]);
    free(b->sel.v);
    free(b->work.v);
    free(b->ids.v);
    free(b->scratch);
    free(b);
}

int gsnap_snapshot_create(gsnap_db *db, const char *name, const gsnap_snapshot_options *opts,
                          gsnap_snapshot_info *info) {
    static const gsnap_snapshot_options defaults = GSNAP_SNAPSHOT_OPTIONS_INIT;
    gsnap_pfile ball[2];
    int rc, began = 0, in_mem = 0;
    uint64_t bound = 0;
    MDB_dbi dbi;
    memset(ball, 0, sizeof ball);
    if (!db) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if ((rc = check_opts(db, name, opts))) return rc;
    double t0 = gsnap_now();
    build *b = new_build(db, name, opts);
    if (!b) return GSNAP_ENOMEM;
    if ((rc = catalog_begin(b, &dbi, &began))) goto out;
    if ((rc = scan_phase(b, &in_mem, &bound))) goto out;
    if ((rc = join_phase(b, ball, in_mem, bound))) goto out;
    /* phase 3: table; phase 4: COMPLETE */
    if ((rc = gsnap_build__write_table(b, dbi))) goto out;
    sync_dir(b->dir);
    b->cat.build_seconds = gsnap_now() - t0;
    b->cat.status = GSNAP_SNAP_STATUS_COMPLETE;
    gsnap_snap__cat_seal(&b->cat);
    if ((rc = gsnap_store__write(db, finish_txn, b))) goto out;
    if (info) gsnap_snapshot_info_get(db, name, info);
out:
    end_build(b, ball, rc, began);
    return rc;
}
