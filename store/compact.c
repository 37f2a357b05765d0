/*
 * store/compact.c -- merging runs into one (k-way, by (node, nbr, t,
 * version)), deleting the inputs, and the compaction policy behind
 * gsnap_db_compact (which then shrinks the file, swap.c) and the automatic
 * compaction after commits.
 */
#include "store/store_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- merge -------------------------------------------------------------- */

static int delete_run(gsnap_db *db, MDB_txn *txn, uint64_t run_id) {
    MDB_cursor *c = NULL;
    unsigned char key[8];
    gsnap_put_be64(key, run_id);
    MDB_val k = {8, key}, v;
    int rc = mdb_cursor_open(txn, db->data_dbi, &c);
    if (rc) return gsnap_store__mdb_err(db, rc, "opening data cursor");
    /* Re-seek after each delete: GET_CURRENT after deleting the last key of
     * the table is an error in LMDB, and a seek is cheap next to the delete. */
    for (;;) {
        k.mv_size = 8;
        k.mv_data = key;
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
        if (rc) break;
        if (k.mv_size < 8 || gsnap_get_be64(k.mv_data) != run_id) break;
        if ((rc = mdb_cursor_del(c, 0))) break;
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, rc, "deleting a merged run");
    if ((rc = gsnap_dense__delete(db, txn, run_id))) return rc;
    for (unsigned char dir = 0; dir < 2; dir++) {
        unsigned char bkey[9];
        memcpy(bkey, key, 8);
        bkey[8] = dir;
        MDB_val bk = {9, bkey};
        rc = mdb_del(txn, db->bloom_dbi, &bk, NULL);
        if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, rc, "deleting a run's Bloom filter");
    }
    k.mv_size = 8;
    k.mv_data = key;
    rc = mdb_del(txn, db->runs_dbi, &k, NULL);
    return rc == MDB_NOTFOUND ? 0 : gsnap_store__mdb_err(db, rc, "deleting a run catalog entry");
}

/* The input run a merge found damaged in this thread (0: none). */
static _Thread_local uint64_t tls_damaged_run;

static int is_damage(int rc) { return rc == GSNAP_ECHECKSUM || rc == GSNAP_ECORRUPT; }

int gsnap_run__delete(gsnap_db *db, MDB_txn *txn, uint64_t run_id) { return delete_run(db, txn, run_id); }

/* The records per direction of the merge of in[0..n). */
static void merge_expect(const gsnap_run *in, size_t n, uint64_t expect[2]) {
    expect[0] = expect[1] = 0;
    for (size_t i = 0; i < n; i++) {
        expect[0] += in[i].info.nrec_dir[0];
        expect[1] += in[i].info.nrec_dir[1];
    }
}

/* A merge with `expect` records per direction at `level` writes a dense
 * (CSR) base: a base whose node ids are compact enough for an index of 8
 * bytes per id and direction (id bound <= 2 x the larger direction's
 * records + 1024). */
static int merge_is_dense(const uint64_t expect[2], uint32_t level, const struct gsnap_meta *meta) {
    uint64_t most = expect[0] > expect[1] ? expect[0] : expect[1];
    return level == GSNAP_LEVEL_BASE && meta->node_bound <= 2 * most + 1024;
}

int gsnap_run__merge(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, uint32_t level,
                     struct gsnap_meta *meta) {
    gsnap_run_writer w;
    gsnap_run_reader *rr = calloc(n, sizeof *rr);
    gsnap_rec *head = malloc(n * sizeof *head); /* current record of each input */
    int rc = 0;
    uint64_t out_id = meta->next_run++;
    if (!rr || !head) {
        free(rr);
        free(head);
        return GSNAP_ENOMEM;
    }
    if ((rc = gsnap_run__writer_init(&w, db, txn, out_id))) goto out;
    uint64_t expect[2];
    merge_expect(in, n, expect);
    if (merge_is_dense(expect, level, meta) && (rc = gsnap_run__writer_dense(&w, expect, meta->node_bound)))
        goto out;
    if ((rc = gsnap_merge__dirs(db, txn, in, n, rr, &w, &tls_damaged_run))) goto out;
    if ((rc = gsnap_run__writer_finish(&w))) goto out;
    struct gsnap_run_info info;
    memset(&info, 0, sizeof info);
    info.level = level;
    info.flags = (w.has_del ? GSNAP_RUN_HAS_DELETES : 0) | (w.dense ? GSNAP_RUN_DENSE : 0);
    info.nrec = w.total;
    info.nchunks = w.chunk_no;
    info.min_ver = UINT64_MAX;
    info.nrec_dir[0] = w.nrec_dir[0];
    info.nrec_dir[1] = w.nrec_dir[1];
    info.dense_nodes = w.dense ? w.dense_nodes : 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i].info.min_ver < info.min_ver) info.min_ver = in[i].info.min_ver;
        if (in[i].info.max_ver > info.max_ver) info.max_ver = in[i].info.max_ver;
    }
    for (size_t i = 0; i < n && rc == 0; i++) rc = delete_run(db, txn, in[i].id);
    if (rc) goto out;
    unsigned char key[8];
    gsnap_put_be64(key, out_id);
    MDB_val k = {8, key}, v = {sizeof info, &info};
    rc = gsnap_store__mdb_err(db, mdb_put(txn, db->runs_dbi, &k, &v, 0), "writing run catalog");
out:
    gsnap_run__writer_free(&w);
    for (size_t i = 0; i < n; i++) gsnap_run__reader_free(&rr[i]);
    free(rr);
    free(head);
    return rc;
}

/* ---- compaction ----------------------------------------------------------- */

struct compact_ctx {
    int all;
    unsigned fanout; /* delta runs of a level that merge (not all) */
    int merged;      /* this write merged runs (or marked one damaged) */
    int base;        /* its merge was into the base */
    int no_room_check; /* a merge goes ahead without making room first */
    size_t map_want; /* NEEDS_ROOM: the map size the merge asks for */
};

/* compact_fn: the map lacks room for the picked merge (c->map_want); the
 * write is aborted before the merge starts, the map grows, and it is tried
 * again (positive: never a GSNAP_ code). */
#define NEEDS_ROOM 1

/* Room for a merge before it starts. LMDB reports a full map only when a
 * write needs a page past it: a merge into the base rewrites every record
 * in one transaction, so without room made first it failed near its end and
 * ran again from the start after the map grew (txn.c: every merge into the
 * base of an R-MAT SCALE 20 ingest ran twice). The output holds the inputs'
 * records, in no more bytes than they take now, and the inputs stay until
 * the transaction commits; the pages in use hold all the runs' records
 * (and free pages), so the inputs take at most used * picked / all, plus a
 * dense base's index (16 bytes a node id, both directions) when the output
 * is one (merge_is_dense: the id bound is then at most 2 x records + 1024,
 * so the term is bounded by the records; a sparse base has no index).
 * Returns the map size wanted, or 0 when the map has that room already. */
static size_t merge_room(gsnap_db *db, const gsnap_run *pick, size_t np, uint64_t all_recs, uint32_t level,
                         const struct gsnap_meta *m) {
    MDB_envinfo info;
    MDB_stat st;
    if (mdb_env_info(db->env, &info) || mdb_env_stat(db->env, &st)) return 0;
    uint64_t recs = 0, used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize, expect[2];
    for (size_t i = 0; i < np; i++) recs += pick[i].info.nrec;
    merge_expect(pick, np, expect);
    double share = all_recs ? (double)recs / (double)all_recs : 1.0;
    uint64_t need = (uint64_t)((double)used * (share < 1.0 ? share : 1.0)) + ((uint64_t)1 << 20);
    if (merge_is_dense(expect, level, m)) need += 16 * (m->node_bound + 1);
    return info.me_mapsize >= used + need ? 0 : (size_t)(used + need);
}

uint64_t gsnap_compact__merges_started, gsnap_compact__merges_committed, gsnap_compact__base_merges;

static int compact_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct compact_ctx *c = vctx;
    gsnap_run *runs = NULL;
    size_t n = 0;
    struct gsnap_meta m;
    int rc;
    c->merged = 0;
    c->base = 0;
    if ((rc = gsnap_store__read_meta(db, txn, &m))) return rc;
    if ((rc = gsnap_store__load_runs(db, txn, &runs, &n))) return rc;
    gsnap_run *pick = malloc((n ? n : 1) * sizeof *pick);
    size_t np = 0;
    uint32_t level = 0;
    if (!pick) { free(runs); return GSNAP_ENOMEM; }
    /* Base and deltas: the base holds the oldest versions (dense when ids
     * are compact). Deltas merge into it once they hold 1/GSNAP_BASE_RATIO of
     * its records (so every record is rewritten O(log) times, geometric);
     * otherwise deltas merge among themselves in tiers of c->fanout
     * (the handle's gsnap_db_options.merge_fanout, default GSNAP_MERGE_FANOUT,
     * or what gsnap_db_merge asks). */
    uint64_t delta_recs = 0, base_recs = 0;
    size_t nbase = 0;
    /* Damaged runs stay where they are; the others merge around them. */
    size_t kept = 0;
    uint64_t all_recs = 0;
    for (size_t i = 0; i < n; i++) all_recs += runs[i].info.nrec;
    for (size_t i = 0; i < n; i++)
        if (!(runs[i].info.flags & GSNAP_RUN_DAMAGED)) runs[kept++] = runs[i];
    n = kept;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].info.level == GSNAP_LEVEL_BASE) {
            base_recs += runs[i].info.nrec;
            nbase++;
        } else {
            delta_recs += runs[i].info.nrec;
        }
    }
    if (n > 0 && (c->all ? (n > 1 || nbase == 0) : delta_recs * GSNAP_BASE_RATIO >= base_recs && delta_recs > 0)) {
        for (size_t i = 0; i < n; i++) pick[np++] = runs[i];
        level = GSNAP_LEVEL_BASE;
    } else if (!c->all) {
        /* The lowest level holding c->fanout or more runs. */
        uint32_t best = UINT32_MAX;
        for (size_t i = 0; i < n; i++) {
            if (runs[i].info.level == GSNAP_LEVEL_BASE) continue;
            size_t cnt = 0;
            for (size_t j = 0; j < n; j++) cnt += runs[j].info.level == runs[i].info.level;
            if (cnt >= c->fanout && runs[i].info.level < best) best = runs[i].info.level;
        }
        if (best != UINT32_MAX) {
            for (size_t i = 0; i < n; i++)
                if (runs[i].info.level == best) pick[np++] = runs[i];
            level = best + 1;
        }
    }
    if (np > 1 || (np == 1 && level == GSNAP_LEVEL_BASE && pick[0].info.level != GSNAP_LEVEL_BASE)) {
        if (!c->no_room_check && (c->map_want = merge_room(db, pick, np, all_recs, level, &m)) > 0) {
            free(pick);
            free(runs);
            return NEEDS_ROOM; /* nothing written yet: the write is aborted */
        }
        __atomic_fetch_add(&gsnap_compact__merges_started, 1, __ATOMIC_RELAXED);
        c->base = level == GSNAP_LEVEL_BASE;
        rc = gsnap_run__merge(db, txn, pick, np, level, &m);
        if (rc == 0) rc = gsnap_store__put_meta(db, txn, &m);
        c->merged = 1;
    }
    free(pick);
    free(runs);
    return rc;
}

static int mark_damaged_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    uint64_t id = *(const uint64_t *)vctx;
    unsigned char key[8];
    gsnap_put_be64(key, id);
    MDB_val k = {8, key}, v;
    int rc = mdb_get(txn, db->runs_dbi, &k, &v);
    if (rc) return gsnap_store__mdb_err(db, rc, "reading a run catalog entry");
    struct gsnap_run_info info;
    if (v.mv_size != sizeof info) return gsnap_store__err(db, GSNAP_ECORRUPT, "run catalog entry of bad size");
    memcpy(&info, v.mv_data, sizeof info);
    info.flags |= GSNAP_RUN_DAMAGED;
    v.mv_size = sizeof info;
    v.mv_data = &info;
    return gsnap_store__mdb_err(db, mdb_put(txn, db->runs_dbi, &k, &v, 0), "marking a run damaged");
}

static int compact_loop(gsnap_db *db, int all, unsigned fanout) {
    struct compact_ctx c = {all, fanout, 0, 0, 0, 0};
    int rc, marks = 0, grows = 0;
    for (;;) {
        tls_damaged_run = 0;
        int checked = !c.no_room_check;
        rc = gsnap_store__write(db, compact_fn, &c);
        c.no_room_check = 0;
        if (rc == NEEDS_ROOM && !checked) /* only the room check says it: never loop on it */
            rc = gsnap_store__err(db, GSNAP_EIO, "compaction: unexpected result 1 from a merge");
        if (rc == NEEDS_ROOM) {
            /* grow the map, then merge; when it cannot grow now (this thread
             * holds a read view, the address space is short), merge anyway:
             * a full map then grows it as before (txn.c) */
            rc = gsnap_store__remap_grow(db, c.map_want);
            if (rc && db->map_lost) break; /* the env has no map: nothing more */
            c.no_room_check = rc != 0 || ++grows >= 8; /* (other processes may keep filling it) */
            continue;
        }
        if (rc == 0 && c.merged) {
            __atomic_fetch_add(&gsnap_compact__merges_committed, 1, __ATOMIC_RELAXED);
            if (c.base) __atomic_fetch_add(&gsnap_compact__base_merges, 1, __ATOMIC_RELAXED);
        }
        if (is_damage(rc) && tls_damaged_run && marks < 64) {
            /* A merge input failed verification: nothing was written. Mark
             * that run so that merges leave it alone, and go on with the
             * others (readers keep failing on its damaged part only). */
            uint64_t id = tls_damaged_run;
            char why[512];
            snprintf(why, sizeof why, "%s", gsnap_db_errmsg(db));
            marks++;
            if ((rc = gsnap_store__write(db, mark_damaged_fn, &id))) break;
            gsnap_store__err(db, GSNAP_ECHECKSUM, "run %llu is damaged (%s); merges leave it alone",
                             (unsigned long long)id, why);
            c.merged = 1;
            continue;
        }
        if (!(rc == 0 && c.merged && !all)) break;
    }
    return rc;
}

int gsnap_store__compact(gsnap_db *db, int all) { return compact_loop(db, all, db->merge_fanout); }

int gsnap_db_merge(gsnap_db *db, unsigned fanout) {
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    if (fanout == 1 || fanout > GSNAP_MERGE_FANOUT_MAX)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_db_merge: fanout %u: must be 0 (the handle's, %u) or 2..%u",
                                fanout, db->merge_fanout, GSNAP_MERGE_FANOUT_MAX);
    if (db->read_only) return gsnap_store__err(db, GSNAP_EACCES, "database '%s' is open read-only", db->path);
    int rc = compact_loop(db, 0, fanout ? fanout : db->merge_fanout);
    if (rc == 0) gsnap_store__warm(db, 0); /* as after a commit's merges (fence.c, warm.c) */
    return rc;
}

/* Merge everything, then give the space back (swap.c): the merge writes the
 * new base while the old runs are live in the same txn, and LMDB never
 * shrinks its file. A shrink refused or failed (another process has the
 * database open, read views of other threads stay open, no room for the
 * copy) leaves the merged file as it is: the merge is what was asked, the
 * freed pages are reused by later commits. */
int gsnap_db_compact(gsnap_db *db) {
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    int rc = gsnap_store__compact(db, 1);
    if (rc || db->read_only) return rc;
    gsnap_store__warm(db, 0); /* index the new base, drop the merged runs' indexes (fence.c) */
    rc = gsnap_db_shrink(db, NULL);
    return db->map_lost ? rc : 0; /* only a handle left unusable is this call's failure */
}
