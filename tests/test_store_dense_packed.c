/*
 * The bit-packed dense base (GSD3, store format 4): every answer read from
 * it is the answer the delta runs gave before they were merged into it.
 *   - Bodies of every shape: a hub of thousands of in-edges, nodes with one
 *     record (no widths), nodes whose records are all the same (every width
 *     0), times spread over the whole i64 range (a width of 64 bits, the
 *     two-load path) next to small ones, deletes (vop's low bit), versions
 *     from 1 to 24.
 *   - Answers of every node in both directions at several (T, V), taken
 *     from the runs as ingested (compact GSC2 chunks), equal those from the
 *     one GSD3 base gsnap_db_compact leaves; the base is GSD3 (its magic in
 *     gs.dense); check is clean; the hub's degree is what was added to it.
 *   - The ids of a run that needs no filter (the path that reads the nbr
 *     column alone) give the same distinct neighbours as the full answers
 *     (a second database, without deletes, so that the base needs none).
 */
#include "test.h"
#include "store/store_int.h"
#include <lmdb.h>
#include <xxhash.h>

#define NODES 300
#define BATCHES 24
#define HUB 0u
#define LONE 1u /* one in-edge only */
#define SAME 2u /* in-edges all equal: widths 0 */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* t of the i-th event: mostly small, some at the ends of the i64 range */
static int64_t pick_t(uint64_t *rng, int64_t base) {
    uint64_t r = test_rand(rng) % 16;
    if (r == 0) return INT64_MIN + (int64_t)(test_rand(rng) % 1000);
    if (r == 1) return INT64_MAX - 1 - (int64_t)(test_rand(rng) % 1000);
    return base + (int64_t)(test_rand(rng) % 5000);
}

#define NQ 5
static int64_t q_t[NQ];
static uint64_t q_v[NQ];

/* Hash of every answer: [query][dir][node]; *hub_deg: the hub's latest degree. */
static void answers(gsnap_db *db, uint64_t h[NQ][2][NODES], size_t *hub_deg) {
    size_t cap = 1 << 14;
    gsnap_nbr *buf = malloc(cap * sizeof *buf);
    for (int q = 0; q < NQ; q++)
        for (int d = 0; d < 2; d++)
            for (uint64_t v = 0; v < NODES; v++) {
                size_t n = 0;
                OK(gsnap_neighbors(db, NULL, v, (gsnap_dir)d, q_t[q], q_v[q], buf, cap, &n));
                CHECK(n <= cap);
                uint64_t x = fnv(1469598103934665603ull, &n, sizeof n);
                for (size_t i = 0; i < n && i < cap; i++) {
                    x = fnv(x, &buf[i].node, 8);
                    x = fnv(x, &buf[i].t, 8);
                    x = fnv(x, &buf[i].version, 8);
                }
                h[q][d][v] = x;
                if (q == 0 && d == GSNAP_DIR_IN && v == HUB) *hub_deg = n;
            }
    free(buf);
}

/* Distinct in-neighbour ids at the latest version through the ids path
 * (gsnap_store__node_ids), against the distinct ids of the full answer. */
static int ids_agree(gsnap_db *db) {
    int bad = 0;
    size_t cap = 1 << 14;
    gsnap_nbr *buf = malloc(cap * sizeof *buf);
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    for (uint64_t v = 0; v < NODES; v++) {
        size_t n = 0, k = 0, nseg = 0;
        int has_del = 0;
        OK(gsnap_neighbors(db, rd, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, cap, &n));
        uint64_t *want = malloc((n + 1) * sizeof *want);
        for (size_t i = 0; i < n; i++) want[i] = buf[i].node;
        qsort(want, n, sizeof *want, cmp_u64);
        for (size_t i = 0; i < n; i++)
            if (k == 0 || want[k - 1] != want[i]) want[k++] = want[i];
        uint64_t latest = 0;
        OK(gsnap_db_version(db, &latest));
        OK(gsnap_store__node_ids(db, rd, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, latest, &n, &nseg, &has_del));
        CHECK(!has_del && nseg <= 1); /* one run without deletes: its ids are the distinct set */
        if (n != k || (k && memcmp(rd->ids, want, k * sizeof *want))) bad++;
        free(want);
    }
    gsnap_read_end(rd);
    free(buf);
    return bad;
}

static uint32_t dense_records_magic(const char *dir) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val k, v;
    MDB_cursor *cur;
    uint32_t m = 0;
    OK(mdb_env_create(&env));
    mdb_env_set_maxdbs(env, 64);
    OK(mdb_env_open(env, dir, MDB_RDONLY, 0664));
    OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    OK(mdb_dbi_open(txn, "gs.dense", 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    if (mdb_cursor_get(cur, &k, &v, MDB_FIRST) == 0) memcpy(&m, v.mv_data, 4);
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return m;
}

/* A crafted GSD3 value, checksums recomputed (what damage cannot do by
 * chance, a crafted file can): the head of node HUB's body (dir 0) becomes a
 * count of 2^24 records of widths 0 (no column bytes), the index ends the
 * body right there, and the header's count is raised to match. The widths
 * must add up to 8 bits at least (GSNAP_DENSE3_MIN_BITS), so the body is
 * refused: it cannot ask a reader for 2^24 records out of a few bytes. */
static void craft_zero_width_body(const char *dir) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val k, v, ik, iv;
    MDB_cursor *cur;
    OK(mdb_env_create(&env));
    mdb_env_set_maxdbs(env, 64);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, "gs.dense", 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST)); /* (run, dir 0, records) */
    CHECK(((unsigned char *)k.mv_data)[8] == 0 && ((unsigned char *)k.mv_data)[9] == 0);
    OK(mdb_cursor_get(cur, &ik, &iv, MDB_NEXT)); /* (run, dir 0, index) */
    CHECK(((unsigned char *)ik.mv_data)[9] == 1);
    size_t hs = sizeof(struct gsnap_dense_hdr);
    unsigned char *rv = malloc(v.mv_size), *xv = malloc(iv.mv_size);
    memcpy(rv, v.mv_data, v.mv_size);
    memcpy(xv, iv.mv_data, iv.mv_size);
    const unsigned char *p = rv + hs, *end = rv + v.mv_size;
    uint64_t b1, b2, off0, off1;
    OK(gsnap_codec__get(&p, end, &b1) || gsnap_codec__get(&p, end, &b2));
    memcpy(&off0, xv + hs + HUB * 8, 8);
    memcpy(&off1, xv + hs + (HUB + 1) * 8, 8);
    unsigned char *body = (unsigned char *)p + off0, head[32];
    size_t hl = gsnap_codec__put(head, (uint64_t)1 << 24);
    hl += gsnap_codec__put(head + hl, 5);
    hl += gsnap_codec__put(head + hl, 0);
    hl += gsnap_codec__put(head + hl, 0);
    head[hl++] = 0; head[hl++] = 0; head[hl++] = 0; /* widths 0, 0, 0: no column bytes */
    CHECK(off1 - off0 >= hl);
    memcpy(body, head, hl);
    uint64_t nend = off0 + hl, count = (uint64_t)1 << 25;
    memcpy(xv + hs + (HUB + 1) * 8, &nend, 8);
    memcpy(rv + 8, &count, 8);
    uint64_t x = XXH3_64bits(rv + hs, v.mv_size - hs);
    memcpy(rv + 16, &x, 8);
    x = XXH3_64bits(xv + hs, iv.mv_size - hs);
    memcpy(xv + 16, &x, 8);
    unsigned char rk[10], xk[10]; /* the keys copied before any write moves the pages */
    memcpy(rk, k.mv_data, 10);
    memcpy(xk, ik.mv_data, 10);
    size_t rlen = v.mv_size, xlen = iv.mv_size;
    mdb_cursor_close(cur);
    MDB_val kk = {10, rk}, nv = {rlen, rv};
    OK(mdb_put(txn, dbi, &kk, &nv, 0));
    kk = (MDB_val){10, xk};
    nv = (MDB_val){xlen, xv};
    OK(mdb_put(txn, dbi, &kk, &nv, 0));
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
    free(rv);
    free(xv);
}

static uint64_t before[NQ][2][NODES], after[NQ][2][NODES];

static void one(int dels) {
    char *dir = test_tmpdir(dels ? "dense_packed_del" : "dense_packed");
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = GSNAP_MERGE_FANOUT_MAX; /* many runs before the compaction */
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 42;
    size_t hub_added = 0;
    int per = test_small() ? 400 : 1500;
    for (int b = 0; b < BATCHES; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        int64_t base = (int64_t)b * 10000;
        for (int i = 0; i < per; i++) {
            uint64_t s = 3 + test_rand(&rng) % (NODES - 3), d = 3 + test_rand(&rng) % (NODES - 3);
            if (i % 3 == 0) {
                d = HUB;
                hub_added++;
            }
            OK(gsnap_batch_add(bt, s, d, pick_t(&rng, base)));
        }
        for (int i = 0; i < 4; i++) OK(gsnap_batch_add(bt, 7, SAME, 12345)); /* the same record, again */
        if (b == 5) OK(gsnap_batch_add(bt, 9, LONE, -77));
        if (dels && b % 4 == 3) /* deletes: of edges that exist and of one that does not */
            for (int i = 0; i < 20; i++) OK(gsnap_batch_delete(bt, 3 + (uint64_t)i, 4 + (uint64_t)i, base + 6000));
        OK(gsnap_batch_commit(bt, NULL));
    }
    uint64_t latest = 0;
    OK(gsnap_db_version(db, &latest));
    int64_t qt[NQ] = {GSNAP_TIME_MAX, 0, INT64_MIN + 500, 77777, INT64_MAX - 600};
    uint64_t qv[NQ] = {GSNAP_VERSION_LATEST, GSNAP_VERSION_LATEST, latest, 6, 13};
    memcpy(q_t, qt, sizeof qt);
    memcpy(q_v, qv, sizeof qv);
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK_MSG(st.runs > 2, "%llu runs before the compaction", (unsigned long long)st.runs);
    size_t hub0 = 0, hub1 = 0;
    answers(db, before, &hub0);
    CHECK_MSG(hub0 == hub_added, "hub: %zu in-edges answered, %zu added", hub0, hub_added);

    OK(gsnap_db_compact(db)); /* one run: the dense base */
    OK(gsnap_db_stats(db, &st));
    CHECK_MSG(st.runs == 1, "%llu runs after the compaction", (unsigned long long)st.runs);
    answers(db, after, &hub1);
    CHECK(hub1 == hub_added);
    size_t diff = 0;
    for (int q = 0; q < NQ; q++)
        for (int d = 0; d < 2; d++)
            for (int v = 0; v < NODES; v++) diff += before[q][d][v] != after[q][d][v];
    CHECK_MSG(diff == 0, "%zu answers changed by the compaction into the packed base", diff);
    if (!dels) CHECK_MSG(ids_agree(db) == 0, "ids of the packed base differ from the answers' distinct ids");
    uint64_t probs = 9;
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    gsnap_db_close(db);
    uint32_t m = dense_records_magic(dir);
    CHECK_MSG(m == GSNAP_DENSE3_MAGIC, "dense records magic %08x", m);

    /* reopened: a new process's first reads verify and answer the same */
    OK(gsnap_db_open(dir, &o, &db));
    { /* the first query of a new handle, of a node with no out-edges: an
       * empty body read with no scratch buffer yet (UBSan: fuzz_store) */
        gsnap_read *rd;
        gsnap_nbr nb[2];
        size_t n = 9;
        OK(gsnap_read_begin(db, &rd));
        OK(gsnap_neighbors(db, rd, LONE, GSNAP_DIR_OUT, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, nb, 2, &n));
        CHECK(n == 0);
        gsnap_read_end(rd);
    }
    answers(db, after, &hub1);
    diff = 0;
    for (int q = 0; q < NQ; q++)
        for (int d = 0; d < 2; d++)
            for (int v = 0; v < NODES; v++) diff += before[q][d][v] != after[q][d][v];
    CHECK(diff == 0);
    gsnap_db_close(db);

    craft_zero_width_body(dir);
    OK(gsnap_db_open(dir, &o, &db));
    {
        size_t n = 0;
        int rc = gsnap_neighbors(db, NULL, HUB, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, NULL, 0, &n);
        CHECK_MSG(rc == GSNAP_ECORRUPT, "a body of 2^24 records in a few bytes: rc %d, %zu neighbours", rc, n);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    one(1);
    one(0);
    TEST_DONE();
}
