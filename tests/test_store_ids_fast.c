/*
 * The samplers' distinct neighbour ids (gsnap_store__distinct_nbrs) when a
 * run needs no filtering: no deletes, every version <= as_of, at_t >= the
 * store's latest time. Those runs are read without decoding t and vop
 * (store/distinct.c: dense_ids, chunk_ids). Every answer is compared with
 * the distinct ids of gsnap_neighbors (the full decode and replay), on
 *   - a dense base (compact ids) and a chunked one (sparse ids),
 *   - hubs whose records span several GSC2 chunks of a run, one with a few
 *     neighbours repeated many times (duplicates across chunk boundaries),
 *     one with thousands of distinct neighbours,
 *   - several runs (base + deltas), at_t exactly the latest time, one below
 *     it, older versions, and after a batch with deletes;
 * and the ids decoder itself (gsnap_codec__ids) on bodies with varints of
 * every length, against a full decode, rejecting overlong and truncated
 * varints as gsnap_codec__get does.
 * That path trusts the run catalog's delete flag (and gs.meta's max_t)
 * instead of the records: `check` must report a catalog that says a run
 * holds no deletes when its records do.
 */
#include "test.h"
#include "store/store_int.h"

#define NODES 3000

static int g_sparse;
static uint64_t id(uint64_t i) { return g_sparse ? i * 1000003u + 11 : i; }

static void batch(gsnap_db *db, uint64_t *rng, int n, int64_t t0, int dels) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (int i = 0; i < n; i++) {
        uint64_t s = test_rand(rng) % NODES, d = test_rand(rng) % NODES, r = test_rand(rng) % 8;
        if (r == 0) d = 0;                 /* hub 0: thousands of distinct in-neighbours */
        if (r == 1) { d = 1; s %= 40; }    /* hub 1: 40 in-neighbours, many times each */
        int64_t t = t0 + (int64_t)(test_rand(rng) % 5000); /* out of order */
        OK(gsnap_batch_add(b, id(s), id(d), t));
    }
    for (int i = 0; i < dels; i++) OK(gsnap_batch_delete(b, id(1 + (uint64_t)i), id(1), t0 + 6000));
    OK(gsnap_batch_commit(b, NULL));
}

/* Compare the fast ids with the replay's for `nodes` nodes at (T, V). */
static int compare(gsnap_db *db, int64_t T, uint64_t V, int nodes) {
    gsnap_read *rd = NULL;
    int bad = 0;
    size_t cap = 1 << 16;
    gsnap_nbr *nb = malloc(cap * sizeof *nb);
    uint64_t *want = malloc(cap * sizeof *want);
    OK(gsnap_read_begin(db, &rd));
    for (int i = 0; i < nodes; i++)
        for (int dir = 0; dir < 2; dir++) {
            size_t n = 0, dn = 0;
            const uint64_t *ids = NULL;
            OK(gsnap_neighbors(db, rd, id((uint64_t)i), (gsnap_dir)dir, T, V, nb, cap, &n));
            CHECK(n <= cap);
            size_t wn = gsnap_store__distinct_ids(nb, n < cap ? n : cap, want);
            OK(gsnap_store__distinct_nbrs(db, rd, id((uint64_t)i), (gsnap_dir)dir, T, V, &ids, &dn));
            if (dn != wn || (dn && memcmp(ids, want, dn * sizeof *ids))) {
                if (bad < 5) fprintf(stderr, "node %d dir %d T %lld V %llu: %zu ids, want %zu\n", i, dir,
                                     (long long)T, (unsigned long long)V, dn, wn);
                bad++;
            }
        }
    gsnap_read_end(rd);
    free(nb);
    free(want);
    return bad;
}

/* Random bodies: ids from gsnap_codec__ids == the full decode's. */
static void codec_ids(void) {
    uint64_t rng = 11;
    unsigned char body[4096];
    uint64_t want[400], got[401];
    for (int it = 0; it < (test_small() ? 200 : 2000); it++) {
        size_t len = 0, nw = 0, nrec = 1 + test_rand(&rng) % 300;
        uint64_t nbr = 0;
        for (size_t i = 0; i < nrec; i++) {
            unsigned bits[3];
            for (int f = 0; f < 3; f++) bits[f] = (unsigned)(test_rand(&rng) % 4 == 0 ? test_rand(&rng) % 64 : test_rand(&rng) % 15);
            uint64_t d = test_rand(&rng) % 3 == 0 ? 0 : test_rand(&rng) >> (63 - bits[0]);
            nbr += d;
            if (nw == 0 || want[nw - 1] != nbr) want[nw++] = nbr;
            len += gsnap_codec__put(body + len, d);
            len += gsnap_codec__put(body + len, test_rand(&rng) >> (63 - bits[1]));
            len += gsnap_codec__put(body + len, test_rand(&rng) >> (63 - bits[2]));
        }
        const unsigned char *p = body;
        size_t k = 0;
        uint64_t x = 0, recs = 0;
        CHECK(gsnap_codec__ids(&p, body + len, &x, got, &k, 0, &recs) == 0);
        CHECK(p == body + len && recs == nrec && k == nw && memcmp(got, want, nw * 8) == 0);
        /* truncated: the last varint cut */
        p = body, k = 0, x = 0;
        CHECK(gsnap_codec__ids(&p, body + len - 1, &x, got, &k, 0, &recs) == -1);
        /* overlong: a record's last varint padded with a zero byte */
        body[len - 1] |= 0x80;
        body[len] = 0;
        p = body, k = 0, x = 0;
        CHECK(gsnap_codec__ids(&p, body + len + 1, &x, got, &k, 0, &recs) == -1);
    }
}

static void one(void) {
    char *dir = test_tmpdir("idsfast");
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    uint64_t rng = 7;
    int nb = test_small() ? 3 : 6, per = test_small() ? 6000 : 20000, nodes = test_small() ? 200 : NODES;
    OK(gsnap_db_open(dir, &o, &db));
    for (int b = 0; b < nb; b++) {
        batch(db, &rng, per, b * 1000, 0);
        gsnap_db_stat st;
        OK(gsnap_db_stats(db, &st));
        int64_t tmax = st.max_t;
        CHECK(compare(db, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, nodes) == 0);
        CHECK(compare(db, tmax, GSNAP_VERSION_LATEST, 50) == 0);   /* the fast path's edge */
        CHECK(compare(db, tmax - 1, GSNAP_VERSION_LATEST, 50) == 0); /* filtered */
        if (b > 0) CHECK(compare(db, GSNAP_TIME_MAX, (uint64_t)b, 50) == 0); /* older version */
    }
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK(st.runs >= 2);
    batch(db, &rng, per / 4, nb * 1000, 20); /* a run with deletes: hub 1 loses in-neighbours */
    CHECK(compare(db, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, 50) == 0);
    CHECK(compare(db, GSNAP_TIME_MAX, (uint64_t)nb, 50) == 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* Clear GSNAP_RUN_HAS_DELETES on every run (a damaged catalog). */
static int clear_del_flags(gsnap_db *db, MDB_txn *txn, void *ctx) {
    (void)ctx;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, db->runs_dbi, &cur);
    for (rc = rc ? rc : mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        struct gsnap_run_info ri;
        if (v.mv_size != sizeof ri) continue;
        memcpy(&ri, v.mv_data, sizeof ri);
        if (!(ri.flags & GSNAP_RUN_HAS_DELETES)) continue;
        ri.flags &= ~GSNAP_RUN_HAS_DELETES;
        MDB_val nv = {sizeof ri, &ri};
        if ((rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT))) break;
        *(int *)ctx += 1;
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static int problem_seen;
static void on_problem(void *ctx, const char *what) {
    (void)ctx;
    if (strstr(what, "delete")) problem_seen = 1;
}

static void catalog_checked(void) {
    char *dir = test_tmpdir("idsflag");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 5;
    batch(db, &rng, 2000, 0, 0);
    batch(db, &rng, 500, 10000, 8); /* a run with deletes */
    uint64_t problems = 1;
    OK(gsnap_db_check(db, NULL, NULL, &problems));
    CHECK(problems == 0);
    int cleared = 0;
    OK(gsnap_store__write(db, clear_del_flags, &cleared));
    CHECK(cleared > 0);
    OK(gsnap_db_check(db, on_problem, NULL, &problems));
    CHECK_MSG(problems > 0 && problem_seen, "a run's deletes behind a catalog without the flag: %llu problems",
              (unsigned long long)problems);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    codec_ids();
    for (g_sparse = 0; g_sparse < 2; g_sparse++) one();
    g_sparse = 0;
    catalog_checked();
    TEST_DONE();
}
