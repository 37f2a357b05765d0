/*
 * Store formats against the formats before them, each step as a build of
 * that format writes it (the store's test hook gsnap_store__write_format):
 * format 2 (raw GSC1 chunks, GSD1 dense values) to 3 (compact GSC2 chunks,
 * GSD2 varint bodies), and 3 to 4 (GSD3 bit-packed dense bodies).
 *   - A database written by the older format opens with this build, answers
 *     every neighbour query as it did, and passes check.
 *   - Its first commit upgrades it to the newer format (the meta record's
 *     format): the old runs keep being read (mixed runs answer exactly),
 *     check passes; merging everything rewrites all values in the newer
 *     layout with the same answers.
 *   - The same with compact ids, where the base run is dense: the old dense
 *     values read, merged into the newer ones.
 *   - Format 3 stores fewer bytes per record than format 2.
 *   - A flipped byte in a chunk or dense value of the newer layout fails the
 *     read (checksum or malformed, never a wrong answer) and check reports it.
 */
#include "test.h"
#include "store/store_int.h"
#include <lmdb.h>

#define NODES 400
#define CAP 256

static int g_sparse;
static unsigned g_from; /* the older format; the newer is g_from + 1 */
/* sparse ids: a chunked base; compact ids: a dense base (gs.dense) */
static uint64_t id(uint64_t i) { return g_sparse ? i * 1000003u + 11 : i; }

static void batch(gsnap_db *db, uint64_t *rng, int n, int64_t t0, int dels) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (int i = 0; i < n; i++) OK(gsnap_batch_add(b, id(test_rand(rng) % NODES), id(test_rand(rng) % NODES), t0 + i));
    for (int i = 0; i < dels; i++) OK(gsnap_batch_delete(b, id((uint64_t)i), id((uint64_t)i + 1), t0 + n + i));
    OK(gsnap_batch_commit(b, NULL));
}

static gsnap_nbr ans[2][NODES][CAP];
static size_t nans[2][NODES];

/* Answers of every node in both directions; keep = 1 stores them, 0 compares. */
static int answers(gsnap_db *db, int keep) {
    int bad = 0;
    gsnap_nbr buf[CAP];
    for (int d = 0; d < 2; d++)
        for (uint64_t i = 0; i < NODES; i++) {
            size_t n = 0;
            OK(gsnap_neighbors(db, NULL, id(i), (gsnap_dir)d, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, CAP, &n));
            if (keep) {
                memcpy(ans[d][i], buf, sizeof buf);
                nans[d][i] = n;
            } else if (n != nans[d][i] || memcmp(buf, ans[d][i], (n < CAP ? n : CAP) * sizeof *buf)) {
                bad++;
            }
        }
    return bad;
}

/* Values of each kind (magics m1, m2) in `table` and their bytes (db closed). */
static void kinds(const char *dir, const char *table, uint32_t m1, uint32_t m2, uint64_t *gsc1, uint64_t *gsc2,
                  uint64_t *bytes) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *cur; MDB_val k, v;
    *gsc1 = *gsc2 = *bytes = 0;
    OK(mdb_env_create(&env));
    mdb_env_set_maxdbs(env, 64);
    OK(mdb_env_open(env, dir, MDB_RDONLY, 0664));
    OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    OK(mdb_dbi_open(txn, table, 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint32_t m;
        memcpy(&m, v.mv_data, 4);
        *gsc1 += m == m1;
        *gsc2 += m == m2;
        *bytes += v.mv_size;
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}
/* The magics of the chunks and dense records values format f writes. */
static uint32_t chunk_magic(unsigned f) { return f >= 3 ? GSNAP_CHUNK2_MAGIC : GSNAP_CHUNK_MAGIC; }
static uint32_t dense_magic(unsigned f) {
    return f >= 4 ? GSNAP_DENSE3_MAGIC : f == 3 ? GSNAP_DENSE2_MAGIC : GSNAP_DENSE_MAGIC;
}
/* a: values of the older format's kind, b: of the newer's (chunks of
 * formats 3 and 4 are the same kind: counted in both) */
static void chunks(const char *dir, uint64_t *a, uint64_t *b, uint64_t *bytes) {
    kinds(dir, "gs.data", chunk_magic(g_from), chunk_magic(g_from + 1), a, b, bytes);
}
static void dense_kinds(const char *dir, uint64_t *a, uint64_t *b, uint64_t *bytes) {
    kinds(dir, "gs.dense", dense_magic(g_from), dense_magic(g_from + 1), a, b, bytes);
}

/* Flip bit 0 of the last byte of the last chunk (gs.data) or of the first
 * records value (gs.dense) of the newer format: a record's vop, still well
 * formed (GSD3: a byte of the pad after the bodies). */
static void flip(const char *dir, const char *table) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *cur; MDB_val k, v;
    OK(mdb_env_create(&env));
    mdb_env_set_maxdbs(env, 64);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, table, 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    OK(mdb_cursor_get(cur, &k, &v, strcmp(table, "gs.data") ? MDB_FIRST : MDB_LAST));
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    uint32_t m;
    memcpy(&m, copy, 4);
    CHECK(m == chunk_magic(g_from + 1) || m == dense_magic(g_from + 1));
    copy[v.mv_size - 1] ^= 1;
    MDB_val nv = {v.mv_size, copy};
    OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
    mdb_cursor_close(cur);
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
    free(copy);
}

static void one(void) {
    char *dir = test_tmpdir(g_from == 2 ? "fmt3" : "fmt4");
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    uint64_t rng = 3, probs = 9, c1, c2, by2, by3;
    int nb = test_small() ? 3 : 6, per = test_small() ? 1500 : 4000;
    gsnap_db_stat st;

    /* a database of the older format */
    gsnap_store__write_format = g_from;
    OK(gsnap_db_open(dir, &o, &db));
    for (int b = 0; b < nb; b++) batch(db, &rng, per, b * 10000, b == 1 ? 5 : 0);
    OK(gsnap_db_stats(db, &st));
    CHECK(st.format_version == g_from);
    answers(db, 1);
    gsnap_db_close(db);
    gsnap_store__write_format = g_from + 1;
    chunks(dir, &c1, &c2, &by2);
    uint64_t dg1, dg2, dby2;
    dense_kinds(dir, &dg1, &dg2, &dby2);
    CHECK(g_sparse ? c1 > 0 && (c2 == 0 || g_from >= 3) : dg1 == 2 && dg2 == 0);

    /* read by this build */
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_db_stats(db, &st));
    CHECK(st.format_version == g_from);
    CHECK(answers(db, 0) == 0);
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    /* upgraded by the first commit; old and new chunks side by side */
    batch(db, &rng, per, 900000, 3);
    OK(gsnap_db_stats(db, &st));
    CHECK(st.format_version == g_from + 1);
    answers(db, 1);
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    gsnap_db_close(db);
    chunks(dir, &c1, &c2, &by3);
    CHECK(c2 > 0);
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(answers(db, 0) == 0);
    /* everything merged: all GSC2, same answers */
    OK(gsnap_db_compact(db));
    CHECK(answers(db, 0) == 0);
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    gsnap_db_close(db);
    chunks(dir, &c1, &c2, &by3);
    CHECK_MSG((c1 == 0 || g_from >= 3) && (c2 > 0 || !g_sparse), "%llu GSC1, %llu GSC2 chunks after compact", (unsigned long long)c1,
              (unsigned long long)c2);
    uint64_t d1, d2, dby3;
    dense_kinds(dir, &d1, &d2, &dby3);
    CHECK_MSG(g_sparse ? d1 + d2 == 0 : d1 == 0 && d2 == 2, "dense values: %llu old, %llu new",
              (unsigned long long)d1, (unsigned long long)d2);
    /* the same records (plus one batch) in fewer bytes than format 2's */
    if (g_from == 2)
        CHECK_MSG((by3 + dby3) * 2 < by2 + dby2, "format 3: %llu bytes of records, format 2: %llu",
                  (unsigned long long)(by3 + dby3), (unsigned long long)(by2 + dby2));

    /* damage in a chunk (or the dense base) of the newer format: reads fail, check reports it */
    if (g_sparse) flip(dir, "gs.data");
    else flip(dir, "gs.dense");
    OK(gsnap_db_open(dir, &o, &db));
    int failed = 0;
    gsnap_nbr buf[CAP];
    for (int d = 0; d < 2; d++)
        for (uint64_t i = 0; i < NODES; i++) {
            size_t n = 0;
            int rc = gsnap_neighbors(db, NULL, id(i), (gsnap_dir)d, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, CAP, &n);
            CHECK(rc == 0 || rc == GSNAP_ECHECKSUM || rc == GSNAP_ECORRUPT);
            if (rc) failed++;
            else CHECK(n == nans[d][i] && memcmp(buf, ans[d][i], (n < CAP ? n : CAP) * sizeof *buf) == 0);
        }
    CHECK(failed > 0);
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs >= 1);
    gsnap_db_close(db);
    gsnap_store__write_format = GSNAP_STORE_FORMAT;
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    CHECK(GSNAP_STORE_FORMAT == 4); /* a new format adds its step here */
    for (g_from = 2; g_from < GSNAP_STORE_FORMAT; g_from++)
        for (g_sparse = 1; g_sparse >= 0; g_sparse--) one();
    TEST_DONE();
}
