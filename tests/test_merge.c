/*
 * The node-at-a-time merge of runs (store/merge.c) and the writer that
 * encodes records as they arrive (store/run_writer.c):
 *   - the same random batches (adds and deletes, equal (src, dst, t) keys
 *     within and across batches, a hub node whose records span chunks,
 *     compact ids for a dense base and sparse ids for a chunked one) are
 *     committed to two databases, one merging with gsnap_merge__dir, the
 *     other with the record-at-a-time gsnap_merge__plain; after every few
 *     batches and after a full compaction both hold the same runs with the
 *     same catalog entries and the same records, direction by direction;
 *   - every GSC2 chunk's bytes are exactly what gsnap_codec__encode writes
 *     for its decoded records, and no chunk passes the writer's cap;
 *   - gsnap_db_check finds 0 problems in both.
 */
#include "test.h"
#include "store/store_int.h"

typedef struct {
    gsnap_run *runs;
    size_t nruns;
    gsnap_rec *recs;
    size_t n, cap;
    size_t *ends; /* end of run i dir d's records at [2 * i + d] */
} snapshot_t;

static void snap_free(snapshot_t *s) {
    free(s->runs);
    free(s->recs);
    free(s->ends);
    memset(s, 0, sizeof *s);
}

/* Every run's records, direction by direction, as the readers see them. */
static void snap_take(gsnap_db *db, snapshot_t *s) {
    MDB_txn *txn;
    memset(s, 0, sizeof *s);
    OK(gsnap_store__txn_begin(db, MDB_RDONLY, &txn));
    OK(gsnap_store__load_runs(db, txn, &s->runs, &s->nruns));
    s->ends = calloc(2 * s->nruns + 1, sizeof *s->ends);
    for (size_t i = 0; i < s->nruns; i++)
        for (uint8_t d = 0; d < 2; d++) {
            gsnap_run_reader rr;
            memset(&rr, 0, sizeof rr);
            OK(gsnap_run__reader_open(&rr, db, txn, &s->runs[i], d, 0, 1, 0));
            while (!rr.done) {
                if (s->n == s->cap) OK(gsnap_vec_reserve((void **)&s->recs, &s->cap, s->n + 1, sizeof *s->recs));
                gsnap_run__reader_peek(&rr, &s->recs[s->n++]);
                OK(gsnap_run__reader_next(db, &rr));
            }
            gsnap_run__reader_free(&rr);
            s->ends[2 * i + d] = s->n;
        }
    mdb_txn_abort(txn);
    gsnap_store__map_release(db);
}

/* Decode each GSC2 chunk and encode its records again: the same bytes. */
static void chunks_reencode(gsnap_db *db, size_t *nchunks) {
    MDB_txn *txn;
    MDB_cursor *c;
    MDB_val k, v;
    OK(gsnap_store__txn_begin(db, MDB_RDONLY, &txn));
    OK(mdb_cursor_open(txn, db->data_dbi, &c));
    MDB_stat st;
    OK(mdb_env_stat(db->env, &st));
    size_t wcap = ((((size_t)st.ms_psize - 16) / 2) & ~(size_t)1) - 2 - 8 - GSNAP_DATA_KEY -
                  sizeof(struct gsnap_chunk_hdr); /* two chunks to a leaf page (run_writer.c) */
    if (wcap > GSNAP_CHUNK2_PAYLOAD) wcap = GSNAP_CHUNK2_PAYLOAD;
    size_t cap = 16384;
    gsnap_rec *recs = malloc(cap * sizeof *recs);
    unsigned char *out = malloc(GSNAP_CHUNK2_PAYLOAD + GSNAP_CODEC_SLACK);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        struct gsnap_chunk_hdr h;
        CHECK(v.mv_size >= sizeof h);
        memcpy(&h, v.mv_data, sizeof h);
        if (h.magic != GSNAP_CHUNK2_MAGIC) continue;
        size_t plen = v.mv_size - sizeof h;
        const unsigned char *p = (const unsigned char *)v.mv_data + sizeof h;
        const char *why = NULL;
        CHECK(h.nrec <= cap);
        CHECK(plen <= wcap);
        CHECK(gsnap_codec__decode(p, plen, h.nrec, recs, &why) == 0);
        size_t len = gsnap_codec__encode(recs, h.nrec, out, plen);
        CHECK_MSG(len == plen && memcmp(out, p, plen) == 0, "chunk of %u records re-encodes to %zu bytes, not %zu",
                  h.nrec, len, plen);
        (*nchunks)++;
    }
    free(recs);
    free(out);
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    gsnap_store__map_release(db);
}

static void compare(gsnap_db *a, gsnap_db *b, const char *when) {
    snapshot_t x, y;
    snap_take(a, &x);
    snap_take(b, &y);
    CHECK_MSG(x.nruns == y.nruns, "%s: %zu runs against %zu", when, x.nruns, y.nruns);
    for (size_t i = 0; i < x.nruns && i < y.nruns; i++) {
        const struct gsnap_run_info *p = &x.runs[i].info, *q = &y.runs[i].info;
        CHECK_MSG(x.runs[i].id == y.runs[i].id && p->level == q->level && p->flags == q->flags &&
                      p->nrec == q->nrec && p->min_ver == q->min_ver && p->max_ver == q->max_ver &&
                      p->nrec_dir[0] == q->nrec_dir[0] && p->nrec_dir[1] == q->nrec_dir[1] &&
                      p->nchunks == q->nchunks && p->dense_nodes == q->dense_nodes,
                  "%s: run %zu's catalog entries differ", when, i);
        CHECK_MSG(x.ends[2 * i] == y.ends[2 * i] && x.ends[2 * i + 1] == y.ends[2 * i + 1],
                  "%s: run %zu holds other record counts", when, i);
    }
    CHECK_MSG(x.n == y.n && memcmp(x.recs, y.recs, x.n * sizeof *x.recs) == 0, "%s: the records differ", when);
    snap_free(&x);
    snap_free(&y);
}

static void check_clean(gsnap_db *db) {
    uint64_t problems = 1;
    OK(gsnap_db_check(db, NULL, NULL, &problems));
    CHECK_MSG(problems == 0, "check: %llu problems", (unsigned long long)problems);
}

/* One random round: nb batches into both databases. sparse: ids spread
 * over 2^40 (a chunked base), else below nodes (a dense one). */
static void round_(uint64_t seed, int sparse, int nb, size_t per_batch, uint64_t nodes) {
    char *da = test_tmpdir("merge_a"), *dbp = test_tmpdir("merge_b");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db[2];
    OK(gsnap_db_open(da, &o, &db[0]));
    OK(gsnap_db_open(dbp, &o, &db[1]));
    uint64_t rng = seed;
    for (int bi = 0; bi < nb; bi++) {
        uint64_t r0 = rng;
        for (int side = 0; side < 2; side++) {
            rng = r0; /* the same events on both sides */
            gsnap_batch *b;
            gsnap_merge__use_plain = side;
            OK(gsnap_batch_begin(db[side], &b));
            uint64_t ps = 0, pd = 0;
            int64_t pt = 0;
            for (size_t e = 0; e < per_batch; e++) {
                uint64_t r = test_rand(&rng), s, d;
                int64_t t = (int64_t)(test_rand(&rng) % 50);
                if (r % 7 == 0 && e) { /* the key before it again: equal keys */
                    s = ps;
                    d = pd;
                    t = pt;
                } else {
                    s = r % 5 == 0 ? 3 : test_rand(&rng) % nodes; /* node 3: a hub */
                    d = test_rand(&rng) % nodes;
                    if (sparse) {
                        s = s * 1000003u % (1ull << 40);
                        d = d * 999983u % (1ull << 40);
                    }
                }
                if (r % 5 == 1) OK(gsnap_batch_delete(b, s, d, t));
                else OK(gsnap_batch_add(b, s, d, t));
                ps = s;
                pd = d;
                pt = t;
            }
            OK(gsnap_batch_commit(b, NULL)); /* merges as they fall due */
        }
        if (bi % 5 == 4) compare(db[0], db[1], "after a batch");
    }
    compare(db[0], db[1], "after the batches");
    for (int side = 0; side < 2; side++) {
        gsnap_merge__use_plain = side;
        OK(gsnap_store__compact(db[side], 1));
    }
    gsnap_merge__use_plain = 0;
    compare(db[0], db[1], "after a full compaction");
    size_t nchunks = 0;
    for (int side = 0; side < 2; side++) {
        chunks_reencode(db[side], &nchunks);
        check_clean(db[side]);
        gsnap_db_close(db[side]);
    }
    CHECK(!sparse || nchunks > 0);
    test_rmdir(da);
    test_rmdir(dbp);
    free(da);
    free(dbp);
}

/* A merge needs no reader slot of its own beyond what a plain merge needs:
 * with every slot taken by read views, compaction still merges (it merged
 * in the write txn before direction 1 got a thread; the thread's read txn
 * made it fail with GSNAP_EBUSY, and a batch commit dropped that error). */
static void slots_full(void) {
    char *dir = test_tmpdir("merge_slots");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.max_readers = 2;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 5;
    for (int bi = 0; bi < 6; bi++) {
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (int e = 0; e < 2000; e++) OK(gsnap_batch_add(b, test_rand(&rng) % 1000, test_rand(&rng) % 1000, e));
        OK(gsnap_batch_commit(b, NULL));
    }
    gsnap_read *v1, *v2;
    OK(gsnap_read_begin(db, &v1));
    OK(gsnap_read_begin(db, &v2)); /* both reader slots in use */
    int rc = gsnap_db_compact(db);
    CHECK_MSG(rc == 0, "compaction with every reader slot held by views: %s", gsnap_db_errmsg(db));
    gsnap_read_end(v1);
    gsnap_read_end(v2);
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK_MSG(st.runs <= 1, "compaction left %llu runs", (unsigned long long)st.runs);
    check_clean(db);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    slots_full();
    int small = test_small();
    for (uint64_t seed = 1; seed <= (small ? 2u : 6u); seed++) {
        round_(seed * 7919, (int)(seed & 1), small ? 9 : 14, small ? 1500 : 4000, seed % 3 ? 2000 : 300);
    }
    TEST_DONE();
}
