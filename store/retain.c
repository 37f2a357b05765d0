/*
 * store/retain.c -- retention: fold the history before a horizon version H
 * into the base, record the horizon, and give the space back to the file
 * system (gsnap_db_compact_history).
 *
 * Folding is per edge (src, dst), on the records of one pair in replay order
 * (t, version, position). Let F be the pair's events of versions < H and R
 * the newer ones. When every event of R comes at or after the last event of
 * F in time (so a replay at any T >= max t(F) runs all of F, then R), F is
 * replaced by its outcome: the adds still live after replaying F (FIFO:
 * each delete removes the oldest live instance, a delete with none live
 * does nothing), with their own times and versions. Otherwise the pair is
 * left as it is. A query at (T, V) with V >= H and T >= the largest max t(F)
 * over the folded pairs (the horizon time) therefore replays the same live
 * instances in the same order: its answer is unchanged. Queries before the
 * horizon, and new events before the horizon time (which could reorder a
 * folded pair's replay), are refused with GSNAP_ERANGE.
 *
 * Space: LMDB never shrinks its file, so after the fold the environment is
 * copied compactly and swapped in (gsnap_db_shrink, swap.c, under this
 * call's own handle). That swap is only safe when nobody else has the
 * environment open: every gsnap_db_open holds a shared flock on the
 * directory, and the shrink takes it exclusively without waiting, before it
 * copies (GSNAP_EBUSY otherwise; the fold is kept, only the file stays big).
 */
#include "store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define FOLD_RETRY 1 /* positive: the txn saw more than one run; compact and retry */

struct fold_ctx {
    uint64_t horizon;
    int64_t horizon_t;     /* out: new horizon time */
    uint64_t before, after;
    const gsnap_compact_options *o;
    /* group buffer */
    gsnap_rec *g;
    size_t gcap;
    uint8_t *keep;
};

/* Decide which records of one pair's group survive; returns how many, and
 * raises *ht to the group's max t(F) when something was dropped. */
static size_t fold_group(struct fold_ctx *c, size_t n, int64_t *ht) {
    uint64_t H = c->horizon;
    int64_t fmax = INT64_MIN, rmin = INT64_MAX;
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        c->keep[i] = 1;
        if ((c->g[i].vop >> 1) < H) {
            nf++;
            if (c->g[i].t > fmax) fmax = c->g[i].t;
        } else if (c->g[i].t < rmin) {
            rmin = c->g[i].t;
        }
    }
    if (nf == 0 || rmin < fmax) return n;
    /* FIFO replay of F: count effective deletes, then keep the newest adds. */
    size_t adds = 0, head = 0;
    for (size_t i = 0; i < n; i++) {
        if ((c->g[i].vop >> 1) >= H) continue;
        if (c->g[i].vop & 1) {
            if (head < adds) head++;
        } else {
            adds++;
        }
    }
    size_t a = 0, kept = n;
    for (size_t i = 0; i < n; i++) {
        if ((c->g[i].vop >> 1) >= H) continue;
        if (c->g[i].vop & 1) { c->keep[i] = 0; kept--; continue; }
        if (a++ < head) { c->keep[i] = 0; kept--; }
    }
    if (kept < n && fmax > *ht) *ht = fmax;
    return kept;
}

/* One pass over a direction of the base: count (w == NULL) or write. */
static int fold_pass(gsnap_db *db, MDB_txn *txn, const gsnap_run *run, uint8_t dir, struct fold_ctx *c,
                     gsnap_run_writer *w, uint64_t *kept_out, int64_t *ht) {
    gsnap_run_reader rr;
    memset(&rr, 0, sizeof rr);
    int rc = gsnap_run__reader_open(&rr, db, txn, run, dir, 0, 1, 1);
    uint64_t kept = 0, seen = 0;
    size_t n = 0;
    while (rc == 0) {
        gsnap_rec r;
        int end = rr.done;
        if (!end) gsnap_run__reader_peek(&rr, &r);
        if (n && (end || r.node != c->g[0].node || r.nbr != c->g[0].nbr)) {
            kept += fold_group(c, n, ht);
            for (size_t i = 0; i < n && w && rc == 0; i++)
                if (c->keep[i]) rc = gsnap_run__writer_add(w, dir, &c->g[i]);
            n = 0;
        }
        if (end || rc) break;
        if (n == c->gcap) {
            size_t nc = c->gcap ? c->gcap * 2 : 256;
            gsnap_rec *ng = realloc(c->g, nc * sizeof *ng);
            uint8_t *nk = realloc(c->keep, nc);
            if (ng) c->g = ng;
            if (nk) c->keep = nk;
            if (!ng || !nk) { rc = GSNAP_ENOMEM; break; }
            c->gcap = nc;
        }
        c->g[n++] = r;
        if (c->o->progress && w && ++seen % (1u << 20) == 0)
            c->o->progress(c->o->progress_ctx, "fold", seen, run->info.nrec_dir[dir]);
        rc = gsnap_run__reader_next(db, &rr);
    }
    gsnap_run__reader_free(&rr);
    *kept_out = kept;
    return rc;
}

static int drop_changes_before(gsnap_db *db, MDB_txn *txn, uint64_t H) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, db->changes_dbi, &cur);
    if (rc) return gsnap_store__mdb_err(db, rc, "opening the change log");
    while ((rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST)) == 0) {
        if (k.mv_size != 9 || gsnap_get_be64(k.mv_data) >= H) break;
        if ((rc = mdb_cursor_del(cur, 0))) break;
    }
    mdb_cursor_close(cur);
    return (rc == 0 || rc == MDB_NOTFOUND) ? 0 : gsnap_store__mdb_err(db, rc, "trimming the change log");
}

static int fold_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct fold_ctx *c = vctx;
    struct gsnap_meta m;
    gsnap_run *runs = NULL;
    size_t n = 0;
    gsnap_run_writer w;
    int rc, winit = 0;
    memset(&w, 0, sizeof w);
    if ((rc = gsnap_store__read_meta(db, txn, &m))) return rc;
    if ((rc = gsnap_store__load_runs(db, txn, &runs, &n))) return rc;
    int64_t ht = m.horizon_t;
    c->before = c->after = 0;
    for (size_t i = 0; i < n; i++) c->before += runs[i].info.nrec;
    if (n > 1 || (n == 1 && runs[0].info.level != GSNAP_LEVEL_BASE)) { free(runs); return FOLD_RETRY; }
    if (n == 1) {
        const gsnap_run *base = &runs[0];
        uint64_t expect[2] = {0, 0};
        int64_t ht_count = ht;
        for (uint8_t dir = 0; dir < 2 && rc == 0; dir++)
            if (base->info.nrec_dir[dir]) rc = fold_pass(db, txn, base, dir, c, NULL, &expect[dir], &ht_count);
        if (rc) goto out;
        uint64_t out_id = m.next_run++;
        if ((rc = gsnap_run__writer_init(&w, db, txn, out_id))) goto out;
        winit = 1;
        uint64_t most = expect[0] > expect[1] ? expect[0] : expect[1];
        if (most && m.node_bound <= 2 * most + 1024 && (rc = gsnap_run__writer_dense(&w, expect, m.node_bound)))
            goto out;
        for (uint8_t dir = 0; dir < 2 && rc == 0; dir++) {
            uint64_t k = 0;
            if (base->info.nrec_dir[dir]) rc = fold_pass(db, txn, base, dir, c, &w, &k, &ht);
        }
        if (rc || (rc = gsnap_run__writer_finish(&w))) goto out;
        struct gsnap_run_info info;
        memset(&info, 0, sizeof info);
        info.level = GSNAP_LEVEL_BASE;
        info.flags = (w.has_del ? GSNAP_RUN_HAS_DELETES : 0) | (w.dense ? GSNAP_RUN_DENSE : 0);
        info.nrec = w.total;
        info.nchunks = w.chunk_no;
        info.min_ver = base->info.min_ver;
        info.max_ver = base->info.max_ver;
        info.nrec_dir[0] = w.nrec_dir[0];
        info.nrec_dir[1] = w.nrec_dir[1];
        info.dense_nodes = w.dense ? w.dense_nodes : 0;
        c->after = w.total;
        if ((rc = gsnap_run__delete(db, txn, base->id))) goto out;
        unsigned char key[8];
        gsnap_put_be64(key, out_id);
        MDB_val k = {8, key}, v = {sizeof info, &info};
        if ((rc = gsnap_store__mdb_err(db, mdb_put(txn, db->runs_dbi, &k, &v, 0), "writing run catalog"))) goto out;
    }
    if ((rc = drop_changes_before(db, txn, c->horizon))) goto out;
    m.horizon = c->horizon;
    m.horizon_t = ht;
    c->horizon_t = ht;
    rc = gsnap_store__put_meta(db, txn, &m);
out:
    if (winit) gsnap_run__writer_free(&w);
    free(runs);
    return rc;
}

static int file_bytes(const char *path, uint64_t *out) {
    char f[4096];
    struct stat st;
    snprintf(f, sizeof f, "%s/data.mdb", path);
    if (stat(f, &st) != 0) return -1;
    *out = (uint64_t)st.st_blocks * 512;
    return 0;
}

/* Resolve the horizon version from the options. */
static int resolve_horizon(gsnap_db *db, const gsnap_compact_options *o, uint64_t *H) {
    uint64_t latest = 0;
    int rc = gsnap_db_version(db, &latest);
    if (rc) return rc;
    int set = (o->horizon != 0) + (o->keep_versions != 0) + (o->before_ns != 0);
    if (set != 1)
        return gsnap_store__err(db, GSNAP_EINVAL, "give exactly one of horizon, keep_versions, before_ns");
    if (o->horizon) {
        *H = o->horizon;
    } else if (o->keep_versions) {
        *H = o->keep_versions >= latest ? 1 : latest - o->keep_versions + 1;
    } else {
        /* the first version committed at or after before_ns (unknown times count as before) */
        gsnap_version_info *log = NULL;
        size_t n = 0;
        if ((rc = gsnap_db_log(db, NULL, 1, latest, &log, &n))) return rc;
        *H = latest + 1;
        for (size_t i = 0; i < n; i++)
            if (log[i].known && log[i].commit_ns >= o->before_ns) { *H = log[i].version; break; }
        gsnap_free(log);
        if (*H > latest) *H = latest; /* the newest version always stays queryable */
    }
    if (*H > latest || *H == 0)
        return gsnap_store__err(db, GSNAP_ERANGE, "horizon %llu is past the newest version %llu",
                                (unsigned long long)*H, (unsigned long long)latest);
    return 0;
}

/* Fold the history before the resolved horizon when that moves it (the
 * runs merged first; retried when commits arrive in between), else only
 * count the records. Fills the report's horizon and record counts. */
static int fold_history(gsnap_db *db, const gsnap_compact_options *opts, struct fold_ctx *c,
                        gsnap_compact_report *rep) {
    uint64_t H = 0, cur = 0;
    int64_t cur_t = INT64_MIN;
    int rc;
    if ((rc = resolve_horizon(db, opts, &H))) return rc;
    if ((rc = gsnap_db_horizon(db, &cur, &cur_t))) return rc;
    rep->horizon = cur;
    rep->horizon_t = cur_t;
    if (H > cur && H > 1) {
        c->horizon = H;
        for (int attempt = 0;; attempt++) {
            if ((rc = gsnap_store__compact(db, 1))) return rc;
            rc = gsnap_store__write(db, fold_fn, c);
            if (rc != FOLD_RETRY) break;
            if (attempt >= 8)
                return gsnap_store__err(db, GSNAP_EBUSY, "commits kept arriving between the merge and the fold");
        }
        if (rc) return rc;
        rep->horizon = H;
        rep->horizon_t = c->horizon_t;
        rep->records_before = c->before;
        rep->records_after = c->after;
        return 0;
    }
    gsnap_read *rd = NULL;
    if ((rc = gsnap_read_begin(db, &rd))) return rc;
    for (size_t i = 0; i < rd->nruns; i++) rep->records_before += rd->runs[i].info.nrec;
    rep->records_after = rep->records_before;
    gsnap_read_end(rd);
    return 0;
}

/* Shrink: gsnap_db_shrink (swap.c) under this call's own handle: it takes
 * the directory exclusively before it copies, so no other process can
 * commit between the copy and the swap (closing the handle first and
 * swapping a copy made while others had the database open lost their
 * later commits). GSNAP_EBUSY when another process has the directory open,
 * or when the handle is borrowed (another handle of this process). */
static int shrink(gsnap_db *db, int borrowed, const gsnap_compact_options *opts, gsnap_compact_report *rep) {
    if (borrowed)
        return gsnap_store__err(db, GSNAP_EBUSY, "history folded (horizon %llu), but the file was not shrunk: the "
                                "database is open elsewhere in this process (compact needs it exclusively)",
                                (unsigned long long)rep->horizon);
    if (opts->progress) opts->progress(opts->progress_ctx, "copy", 0, 1);
    gsnap_compact_report r;
    int rc = gsnap_db_shrink(db, &r);
    if (rc) return rc;
    rep->shrunk = 1;
    if (opts->progress) opts->progress(opts->progress_ctx, "copy", 1, 1);
    return 0;
}

int gsnap_db_compact_history(const char *path, const gsnap_compact_options *opts, gsnap_compact_report *report) {
    static const gsnap_compact_options defaults = GSNAP_COMPACT_OPTIONS_INIT;
    gsnap_compact_report rep;
    memset(&rep, 0, sizeof rep);
    rep.horizon_t = INT64_MIN;
    if (!path) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (opts->version != GSNAP_COMPACT_OPTIONS_VERSION) return GSNAP_EINVAL;
    double t0 = gsnap_now();
    gsnap_db *db = NULL;
    gsnap_db_options dbo = GSNAP_DB_OPTIONS_INIT;
    dbo.create = 0;
    int rc = gsnap_db_open(path, &dbo, &db), borrowed = 0;
    if (rc == GSNAP_EBUSY && (db = gsnap_store__open_handle(path)) != NULL) {
        /* Open in this process already (LMDB allows one environment per file
         * and process): fold through that handle; the shrink then fails
         * below as with any other open handle. */
        borrowed = 1;
        rc = 0;
    }
    if (rc) return rc;
    file_bytes(path, &rep.bytes_before);
    struct fold_ctx c;
    memset(&c, 0, sizeof c);
    c.o = opts;
    rc = fold_history(db, opts, &c, &rep);
    int shrink_busy = 0;
    if (rc == 0 && !opts->no_shrink) shrink_busy = (rc = shrink(db, borrowed, opts, &rep)) == GSNAP_EBUSY;
    file_bytes(path, &rep.bytes_after);
    rep.seconds = gsnap_now() - t0;
    free(c.g);
    free(c.keep);
    if (report) *report = rep;
    /* The error message lives on the handle, which this call closes: keep
     * it in the open-error buffer too. */
    if (shrink_busy) {
        gsnap_err_open(rc, "history folded (horizon %llu), but the file was not shrunk: the database "
                              "is open elsewhere (compact needs it exclusively; close the other handles and run "
                              "compact again)", (unsigned long long)rep.horizon);
    } else if (rc) {
        const char *m = gsnap_db_errmsg(db);
        gsnap_err_open(rc, "%s", m && *m ? m : gsnap_strerror(rc));
    }
    if (!borrowed) gsnap_db_close(db);
    return rc;
}
