/* tests/test_snapshot_gen.c -- generations: a reader holding an old read
 * view keeps reading generation g while a writer commits g+1 for some keys;
 * new views see g+1 whole; after the reader ends the old pages are reused:
 * the LMDB file's high-water mark stops growing over 100 refresh cycles. */
#include "test.h"
#include "store/store.h"
#include "snapshot/snapshot.h"

typedef struct { gsnap_snapshot *s; uint64_t nkeys; } refresh_ctx;

/* One refresh: generation + 1, new lists {gen, node, 1000+node} for keys
 * (1, 0..nkeys-1). Everything derives from ctx and txn (may run twice). */
static int refresh(gsnap_db *db, MDB_txn *txn, void *vctx) {
    (void)db;
    refresh_ctx *c = vctx;
    uint64_t gen;
    int rc = gsnap_snapshot__generation(c->s, txn, &gen);
    if (rc) return rc;
    gen++;
    for (uint64_t v = 0; v < c->nkeys; v++) {
        uint64_t ids[3] = {gen, v, 1000 + v};
        if ((rc = gsnap_snapshot__cache_put(c->s, txn, 1, v, ids, 3, gen, 42))) return rc;
    }
    return gsnap_snapshot__set_generation(c->s, txn, gen);
}

static uint64_t last_pgno(gsnap_db *db) {
    MDB_envinfo ei;
    mdb_env_info(gsnap_store__env(db), &ei);
    return (uint64_t)ei.me_last_pgno;
}

int main(void) {
    char *dir = test_tmpdir("snapgen");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    uint64_t rs = 5, N = 300;
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < N; v++)
        for (int j = 0; j < 6; j++) OK(gsnap_batch_add(b, test_rand(&rs) % N, v, 1));
    OK(gsnap_batch_commit(b, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.fanouts[0] = 10; /* m = 20 > degree: whole lists */
    OK(gsnap_snapshot_create(db, "g", &so, NULL));
    gsnap_snapshot *s;
    OK(gsnap_snapshot_open(db, "g", &s));
    const uint64_t K = 200;
    refresh_ctx rc = {s, K};

    /* an old reader, before any refresh */
    gsnap_read *old;
    OK(gsnap_read_begin(db, &old));
    uint64_t before[300][8], ids[64], gen;
    size_t nbefore[300], n;
    for (uint64_t v = 0; v < K; v++) {
        OK(gsnap_snapshot_cache(s, old, 1, v, before[v], 8, &nbefore[v], &gen));
        CHECK(gen == 0);
    }
    OK(gsnap_store__write(db, refresh, &rc));
    OK(gsnap_store__write(db, refresh, &rc)); /* generation 2 */
    int same = 1, fresh = 1;
    for (uint64_t v = 0; v < K; v++) {
        OK(gsnap_snapshot_cache(s, old, 1, v, ids, 64, &n, &gen));
        if (gen != 0 || n != nbefore[v] || memcmp(ids, before[v], n * 8) != 0) same = 0;
        OK(gsnap_snapshot_cache(s, NULL, 1, v, ids, 64, &n, &gen));
        if (gen != 2 || n != 3 || ids[0] != 2 || ids[1] != v) fresh = 0;
    }
    CHECK_MSG(same, "the old reader must keep seeing generation 0");
    CHECK_MSG(fresh, "new readers see generation 2 for every refreshed key");
    OK(gsnap_snapshot__generation(s, gsnap_read__txn(old), &gen));
    CHECK(gen == 0);
    /* keys not refreshed keep generation 0 */
    OK(gsnap_snapshot_cache(s, NULL, 1, K + 1, ids, 64, &n, &gen));
    CHECK(gen == 0);
    /* while the old reader lives, its pages cannot be reused */
    uint64_t p0 = last_pgno(db);
    for (int i = 0; i < 20; i++) OK(gsnap_store__write(db, refresh, &rc));
    uint64_t p_held = last_pgno(db);
    gsnap_read_end(old);
    /* reclamation: 100 cycles with no old reader */
    uint64_t p_at[101];
    for (int i = 1; i <= 100; i++) {
        OK(gsnap_store__write(db, refresh, &rc));
        p_at[i] = last_pgno(db);
    }
    printf("last page: %llu before, %llu after 20 refreshes with a reader held, %llu / %llu / %llu after 10 / 50 / 100 more\n",
           (unsigned long long)p0, (unsigned long long)p_held, (unsigned long long)p_at[10],
           (unsigned long long)p_at[50], (unsigned long long)p_at[100]);
    CHECK(p_held > p0);
    CHECK(p_at[100] == p_at[10]); /* stopped growing */
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    OK(gsnap_snapshot__generation(s, gsnap_read__txn(rd), &gen));
    CHECK(gen == 122);
    gsnap_read_end(rd);
    gsnap_snapshot_close(s);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
