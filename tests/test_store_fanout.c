/*
 * gsnap_db_options.merge_fanout (options version 4): the number of delta
 * runs of one level that this handle's merges turn into one run of the
 * next level. Checked here:
 *   - 1 and 33 are refused with GSNAP_EINVAL and a message that names the
 *     option; a version-3 struct is accepted and its (absent) field not read;
 *   - after every commit no delta level holds merge_fanout runs or more,
 *     and with 6 a level does hold 5 (so the option, not the default 4, set
 *     the policy); with the default no level reaches 4;
 *   - the answers do not depend on it: every node's in- and out-degree after
 *     the same stream equals a plain count, at fanouts 2, default and 6;
 *   - the policy belongs to the handle, not the files: a store left with 5
 *     runs on a level by a fanout-6 handle, reopened with the default, has
 *     them merged at its next commit.
 */
#include "test.h"
#include "store/store_int.h"

#define NODES 300u
#define BATCHES 40

/* The most runs any delta level holds now. */
static unsigned fullest_level(gsnap_db *db) {
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    unsigned most = 0;
    for (size_t i = 0; i < rd->nruns; i++) {
        if (rd->runs[i].info.level == GSNAP_LEVEL_BASE) continue;
        unsigned cnt = 0;
        for (size_t j = 0; j < rd->nruns; j++) cnt += rd->runs[j].info.level == rd->runs[i].info.level;
        if (cnt > most) most = cnt;
    }
    gsnap_read_end(rd);
    return most;
}

static void commit_batch(gsnap_db *db, uint64_t *rng, uint64_t *in, uint64_t *out, int64_t *t) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (int e = 0; e < 400; e++) {
        uint64_t s = test_rand(rng) % NODES, d = test_rand(rng) % NODES;
        OK(gsnap_batch_add(b, s, d, (*t)++));
        out[s]++;
        in[d]++;
    }
    OK(gsnap_batch_commit(b, NULL));
}

/* Ingest BATCHES batches with merge_fanout f; returns the fullest level seen. */
static unsigned ingest(unsigned f) {
    char *dir = test_tmpdir("fanout");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = f;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    unsigned limit = f ? f : GSNAP_MERGE_FANOUT, seen = 0;
    uint64_t in[NODES] = {0}, out[NODES] = {0}, rng = 3;
    int64_t t = 0;
    for (int b = 0; b < BATCHES; b++) {
        commit_batch(db, &rng, in, out, &t);
        unsigned most = fullest_level(db);
        CHECK_MSG(most < limit, "fanout %u, commit %d: a level holds %u runs", f, b, most);
        if (most > seen) seen = most;
    }
    for (uint64_t v = 0; v < NODES; v++) {
        uint64_t di, dout;
        OK(gsnap_degree(db, NULL, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &di));
        OK(gsnap_degree(db, NULL, v, GSNAP_DIR_OUT, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &dout));
        CHECK_MSG(di == in[v] && dout == out[v], "fanout %u: node %llu degrees %llu/%llu, expected %llu/%llu", f,
                  (unsigned long long)v, (unsigned long long)di, (unsigned long long)dout,
                  (unsigned long long)in[v], (unsigned long long)out[v]);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    return seen;
}

static void refused(void) {
    char *dir = test_tmpdir("fanout_bad");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    gsnap_db *db = NULL;
    unsigned bad[] = {1, GSNAP_MERGE_FANOUT_MAX + 1};
    for (int i = 0; i < 2; i++) {
        o.merge_fanout = bad[i];
        CHECK(gsnap_db_open(dir, &o, &db) == GSNAP_EINVAL && db == NULL);
        CHECK_MSG(strstr(gsnap_last_open_error(), "merge_fanout") != NULL, "message: %s", gsnap_last_open_error());
    }
    o.version = 3; /* its struct ends before merge_fanout: the field is not read */
    o.merge_fanout = 1;
    OK(gsnap_db_open(dir, &o, &db));
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* A fanout-6 handle leaves 5 runs on a level; a default handle merges them
 * at its next commit. */
static void policy_of_the_handle(void) {
    char *dir = test_tmpdir("fanout_reopen");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = 6;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t in[NODES] = {0}, out[NODES] = {0}, rng = 9;
    int64_t t = 0;
    int b = 0;
    while (fullest_level(db) < 5 && b++ < BATCHES) commit_batch(db, &rng, in, out, &t);
    CHECK_MSG(fullest_level(db) == 5, "fanout 6 never left 5 runs on a level");
    gsnap_db_close(db);
    o.merge_fanout = 0;
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(fullest_level(db) == 5); /* opening merges nothing */
    commit_batch(db, &rng, in, out, &t);
    CHECK_MSG(fullest_level(db) < GSNAP_MERGE_FANOUT, "after a default commit a level holds %u runs",
              fullest_level(db));
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    refused();
    unsigned two = ingest(2), dflt = ingest(0), six = ingest(6);
    CHECK_MSG(two == 1, "fanout 2: the fullest level held %u runs", two);
    CHECK_MSG(dflt == GSNAP_MERGE_FANOUT - 1, "default: the fullest level held %u runs", dflt);
    CHECK_MSG(six == 5, "fanout 6: the fullest level held %u runs", six);
    policy_of_the_handle();
    TEST_DONE();
}
