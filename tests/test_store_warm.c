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
 *     those the test counts itself, for every node;
 *   - its query is bounded: commits that all touch one hub gather at most
 *     GSNAP_WARM_READ_RECS records of it, not the hub's whole list
 *     (it asked the whole answer: 10-edge commits into a hub of 2 M
 *     in-edges took 514 ms instead of 4 ms, bench/hub_commits);
 *   - one builder of the runs' indexes at a time: a reader building a
 *     view's indexes (gsnap_store__index_runs, as a sampler does at each
 *     batch) while commits build theirs builds no run twice (runs were
 *     built twice, the second thrown away, and a held copy could be lost
 *     with it), and the last run set is indexed all the same.
 */
#include "test.h"
#include "store/store_int.h"
#include <pthread.h>

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

/* An in-only store whose commits touch node 7 alone (so 7 is the warm-up
 * query's node) after 7 has gathered HUB in-edges over several runs. */
#define HUB 6000
static void hub_commits(void) {
    char *dir = test_tmpdir("warm-hub");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.keep = GSNAP_KEEP_IN;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t t = 0, deg = 0;
    for (int b = 0; b < 3; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int k = 0; k < HUB / 3; k++, deg++, t++) OK(gsnap_batch_add(bt, 1000 + t, 7, (int64_t)t));
        OK(gsnap_batch_commit(bt, NULL));
    }
    uint64_t got;
    OK(gsnap_degree(db, NULL, 7, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &got)); /* the process queried */
    CHECK(got == deg);
    int bad = 0;
    for (int b = 0; b < 6; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int k = 0; k < 10; k++, deg++, t++) OK(gsnap_batch_add(bt, 1000 + t, 7, (int64_t)t));
        uint64_t r0 = gsnap_store__warm_records, q0 = gsnap_store__warm_queries;
        OK(gsnap_batch_commit(bt, NULL));
        uint64_t took = gsnap_store__warm_records - r0;
        gsnap_read *rd;
        OK(gsnap_read_begin(db, &rd));
        size_t runs = rd->nruns;
        gsnap_read_end(rd);
        bad += gsnap_store__warm_queries - q0 != 1 || took == 0 || took > GSNAP_WARM_READ_RECS;
        CHECK_MSG(!bad, "commit %d into the hub: the warm-up query gathered %llu records (%zu runs, at most %d)", b,
                  (unsigned long long)took, runs, GSNAP_WARM_READ_RECS);
        OK(gsnap_degree(db, NULL, 7, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &got));
        CHECK_MSG(got == deg, "commit %d: hub in-degree %llu, want %llu", b, (unsigned long long)got,
                  (unsigned long long)deg);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* Commits of a process that queried (each builds its new runs' indexes),
 * with or without a reader thread building the newest view's indexes in a
 * loop; returns how many indexes were built and thrown away because the
 * run's had been added meanwhile (the other builder's), and checks that
 * every chunked run of the last run set is indexed. */
struct reader_arg {
    gsnap_db *db;
    int stop;
};
static void *index_reader(void *p) {
    struct reader_arg *a = p;
    while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
        gsnap_read *rd;
        if (gsnap_read_begin(a->db, &rd)) break;
        gsnap_store__index_runs(a->db, rd, GSNAP_DIR_IN);
        gsnap_read_end(rd);
    }
    return NULL;
}
static uint64_t dup_builds_of_commits(int with_reader) {
    char *dir = test_tmpdir("warm-builders");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t got, rng = 11, t = 0, d0 = gsnap_fence__dup_builds;
    OK(gsnap_degree(db, NULL, 1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &got)); /* queried */
    struct reader_arg a = {db, 0};
    pthread_t th;
    if (with_reader) CHECK(pthread_create(&th, NULL, index_reader, &a) == 0);
    int batches = test_small() ? 10 : 20;
    for (int b = 0; b < batches; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int k = 0; k < 2000; k++) {
            uint64_t s = test_rand(&rng) % 3000, d = test_rand(&rng) % 3000;
            OK(gsnap_batch_add(bt, s, d, (int64_t)t++));
        }
        OK(gsnap_batch_commit(bt, NULL));
    }
    if (with_reader) {
        __atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
        pthread_join(th, NULL);
    }
    gsnap_read *rd; /* every chunked run of the last run set indexed all the same */
    OK(gsnap_read_begin(db, &rd));
    int missing = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        missing += !(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && rd->runs[i].info.nrec > 0 &&
                   !gsnap_fence__has(db, rd->runs[i].id);
    gsnap_read_end(rd);
    CHECK_MSG(missing == 0, "reader %d: %d chunked runs of the last run set without an index", with_reader, missing);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    return gsnap_fence__dup_builds - d0;
}

int main(void) {
    one(GSNAP_KEEP_BOTH);
    one(GSNAP_KEEP_IN);
    hub_commits();
    uint64_t alone = dup_builds_of_commits(0), beside = dup_builds_of_commits(1);
    CHECK_MSG(alone == 0 && beside == 0, "runs built twice: %llu with a reader building beside the commits, %llu without",
              (unsigned long long)beside, (unsigned long long)alone);
    TEST_DONE();
}
