/*
 * The warm-up after a commit (store/warm.c): a process that has answered a
 * point query verifies the new runs after each commit and then asks one
 * query through a fresh view, so that its next query does not meet the
 * read path cold. Checked here:
 *   - a process that only ingests (it never queried) pays for none of it:
 *     no warm-up view is opened at its commits;
 *   - once it has queried, every commit ends with one warm-up view (merges
 *     included: 500-edge batches at the default fanout merge every few
 *     commits), in a both-directions and an in-only store;
 *   - the warm-up changes no answer: the in-degrees after each commit equal
 *     those the test counts itself, for every node.
 */
#include "test.h"
#include "store/store_int.h"

#define NODES 400

static void check_degrees(gsnap_db *db, const uint64_t *deg, int b) {
    for (uint64_t v = 0; v < NODES; v++) {
        uint64_t got;
        OK(gsnap_degree(db, NULL, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &got));
        CHECK_MSG(got == deg[v], "after batch %d, node %llu: in-degree %llu, want %llu", b, (unsigned long long)v,
                  (unsigned long long)got, (unsigned long long)deg[v]);
    }
}

static void one(unsigned keep) {
    char *dir = test_tmpdir("warm");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.keep = keep;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg[NODES] = {0}, rng = 7 + keep, t = 0;
    int batches = test_small() ? 8 : 16;
    uint64_t w0 = gsnap_store__warm_queries;
    for (int b = 0; b < batches; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int k = 0; k < 500; k++) {
            uint64_t s = test_rand(&rng) % NODES, d = test_rand(&rng) % NODES;
            OK(gsnap_batch_add(bt, s, d, (int64_t)t++));
            deg[d]++;
        }
        OK(gsnap_batch_commit(bt, NULL));
        /* the first query is asked after batch 1: commits 2..b warmed up */
        uint64_t w = gsnap_store__warm_queries - w0, want = b < 2 ? 0 : (uint64_t)(b - 1);
        CHECK_MSG(w == want, "keep %u, after batch %d: %llu warm-up views, want %llu", keep, b,
                  (unsigned long long)w, (unsigned long long)want);
        if (b >= 1) check_degrees(db, deg, b);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    one(GSNAP_KEEP_BOTH);
    one(GSNAP_KEEP_IN);
    TEST_DONE();
}
