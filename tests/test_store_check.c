/*
 * gsnap_db_check: a clean store has no problems; a flipped byte in a chunk
 * is reported as a checksum mismatch naming the run; a truncated chunk as
 * malformed; a scan over the damaged run fails with GSNAP_ECHECKSUM.
 */
#include "test.h"
#include "store/store.h"
#include <lmdb.h>

static char last[4096];
/* Collects every problem line into `last`. */
static void rep(void *ctx, const char *p) {
    (void)ctx;
    size_t l = strlen(last);
    snprintf(last + l, sizeof last - l, "%s\n", p);
    fprintf(stderr, "problem: %s\n", p);
}
static int count_cb(void *ctx, uint64_t node, const gsnap_nbr *nb, size_t n) { (void)node; (void)nb; *(size_t *)ctx += n; return 0; }

/* Damage the first value: how 0 flips a record byte of a gs.data chunk, 1
 * truncates a chunk, 2 flips a record byte of the dense base run (gs.dense). */
static void damage(const char *dir, int how) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *cur; MDB_val k, v;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 16);
    mdb_env_set_mapsize(env, 1 << 30);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, how == 2 ? "gs.dense" : "gs.data", 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    MDB_val nv = {v.mv_size, copy};
    if (how == 0) copy[16 + 9] ^= 0x40;      /* a byte of the first record's nbr */
    else if (how == 1) nv.mv_size -= 7;
    else copy[32 + 32 * 7 + 9] ^= 0x40;      /* dense: header 32, record 7's nbr */
    OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
    mdb_cursor_close(cur);
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
    free(copy);
}

int main(void) {
    for (int how = 0; how < 3; how++) {
        char *dir = test_tmpdir("check");
        gsnap_db *db = NULL;
        gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
        o.sync = GSNAP_SYNC_NONE;
        OK(gsnap_db_open(dir, &o, &db));
        uint64_t rng = 5;
        for (int b = 0; b < 6; b++) {
            gsnap_batch *bt;
            OK(gsnap_batch_begin(db, &bt));
            for (int i = 0; i < 3000; i++) OK(gsnap_batch_add(bt, test_rand(&rng) % 500, test_rand(&rng) % 500, i));
            if (b == 3) OK(gsnap_batch_delete(bt, 1, 2, 5));
            OK(gsnap_batch_commit(bt, NULL));
        }
        uint64_t problems = 99;
        OK(gsnap_db_check(db, rep, NULL, &problems));
        CHECK(problems == 0);
        gsnap_db_close(db);
        damage(dir, how);
        OK(gsnap_db_open(dir, &o, &db));
        last[0] = 0;
        OK(gsnap_db_check(db, rep, NULL, &problems));
        CHECK(problems >= 1);
        CHECK_MSG(strstr(last, how == 1 ? "malformed" : "checksum mismatch") != NULL, "problems: %s", last);
        CHECK(strstr(last, how == 2 ? "base run" : "run ") != NULL);
        size_t total = 0;
        int rc = gsnap_store__scan(db, NULL, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, count_cb, &total);
        CHECK(rc == (how == 1 ? GSNAP_ECORRUPT : GSNAP_ECHECKSUM));
        CHECK(strlen(gsnap_db_errmsg(db)) > 0);
        gsnap_db_close(db);
        test_rmdir(dir);
        free(dir);
    }
    /* A retention horizon past the newest version (an older load wrote one
     * from a dump without checking it): every query is refused, and check
     * said 0 problems (found in review). */
    {
        char *dir = test_tmpdir("checkhz");
        gsnap_db *db = NULL;
        gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
        o.sync = GSNAP_SYNC_NONE;
        OK(gsnap_db_open(dir, &o, &db));
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        OK(gsnap_batch_add(bt, 1, 2, 3));
        OK(gsnap_batch_commit(bt, NULL));
        gsnap_db_close(db);
        MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val k = {5, "store"}, v;
        unsigned char meta[88];
        mdb_env_create(&env);
        mdb_env_set_maxdbs(env, 16);
        mdb_env_set_mapsize(env, 1 << 30);
        OK(mdb_env_open(env, dir, 0, 0664));
        OK(mdb_txn_begin(env, NULL, 0, &txn));
        OK(mdb_dbi_open(txn, "gs.meta", 0, &dbi));
        OK(mdb_get(txn, dbi, &k, &v));
        CHECK(v.mv_size == sizeof meta);
        memcpy(meta, v.mv_data, sizeof meta);
        uint64_t hz = 1000; /* bytes 72..79: the horizon version (docs/format.md) */
        memcpy(meta + 72, &hz, 8);
        v.mv_data = meta;
        OK(mdb_put(txn, dbi, &k, &v, 0));
        OK(mdb_txn_commit(txn));
        mdb_env_close(env);
        OK(gsnap_db_open(dir, &o, &db));
        uint64_t problems = 0;
        last[0] = 0;
        OK(gsnap_db_check(db, rep, NULL, &problems));
        CHECK_MSG(problems == 1 && strstr(last, "horizon 1000 is past the newest version 1"), "problems: %s", last);
        gsnap_db_close(db);
        test_rmdir(dir);
        free(dir);
    }
    TEST_DONE();
}
