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
 *     them merged at its next commit;
 *   - gsnap_db_merge (what `graphsnap ingest` calls after a bulk load): a
 *     fanout-8 handle's store with 7 runs on a level is merged to the shape
 *     the default keeps (no level with 4 runs, deltas smaller than the
 *     base) without a commit: the version and every answer unchanged, a
 *     view begun before it still answering from its runs; 0 asks for the
 *     handle's own fanout (nothing to do then), 1 and 33 are refused with a
 *     message that names the fanout, a read-only handle with GSNAP_EACCES.
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

static void check_degrees(gsnap_db *db, gsnap_read *rd, const uint64_t *in, const uint64_t *out, const char *when) {
    for (uint64_t v = 0; v < NODES; v++) {
        uint64_t di, dout;
        OK(gsnap_degree(db, rd, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &di));
        OK(gsnap_degree(db, rd, v, GSNAP_DIR_OUT, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &dout));
        CHECK_MSG(di == in[v] && dout == out[v], "%s: node %llu degrees %llu/%llu, expected %llu/%llu", when,
                  (unsigned long long)v, (unsigned long long)di, (unsigned long long)dout,
                  (unsigned long long)in[v], (unsigned long long)out[v]);
    }
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
    char when[32];
    snprintf(when, sizeof when, "fanout %u", f);
    check_degrees(db, NULL, in, out, when);
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

/* A database at dir opened with merge_fanout f, committed into until a
 * level holds f - 1 runs (the most that fanout leaves). */
static gsnap_db *filled(const char *dir, unsigned f, uint64_t *rng, uint64_t *in, uint64_t *out, int64_t *t) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = f;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    int b = 0;
    while (fullest_level(db) < f - 1 && b++ < 4 * BATCHES) commit_batch(db, rng, in, out, t);
    CHECK_MSG(fullest_level(db) == f - 1, "fanout %u never left %u runs on a level", f, f - 1);
    return db;
}

/* A fanout-6 handle leaves 5 runs on a level; a default handle merges them
 * at its next commit. */
static void policy_of_the_handle(void) {
    char *dir = test_tmpdir("fanout_reopen");
    uint64_t in[NODES] = {0}, out[NODES] = {0}, rng = 9;
    int64_t t = 0;
    gsnap_db *db = filled(dir, 6, &rng, in, out, &t);
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db_close(db);
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(fullest_level(db) == 5); /* opening merges nothing */
    commit_batch(db, &rng, in, out, &t);
    CHECK_MSG(fullest_level(db) < GSNAP_MERGE_FANOUT, "after a default commit a level holds %u runs",
              fullest_level(db));
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* Records held by the base and by the deltas of the newest view. */
static void records(gsnap_db *db, uint64_t *base, uint64_t *deltas) {
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    *base = *deltas = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        *(rd->runs[i].info.level == GSNAP_LEVEL_BASE ? base : deltas) += rd->runs[i].info.nrec;
    gsnap_read_end(rd);
}

static void merge_to_the_default_shape(void) {
    char *dir = test_tmpdir("fanout_merge");
    uint64_t in[NODES] = {0}, out[NODES] = {0}, rng = 21;
    int64_t t = 0;
    gsnap_db *db = filled(dir, 8, &rng, in, out, &t);
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    uint64_t v0, v1, base, deltas;
    OK(gsnap_db_version(db, &v0));
    gsnap_db_stat st0, st1;
    OK(gsnap_db_stats(db, &st0));

    unsigned bad[] = {1, GSNAP_MERGE_FANOUT_MAX + 1};
    for (int i = 0; i < 2; i++) {
        CHECK(gsnap_db_merge(db, bad[i]) == GSNAP_EINVAL);
        CHECK_MSG(strstr(gsnap_db_errmsg(db), "fanout") != NULL, "message: %s", gsnap_db_errmsg(db));
    }
    CHECK(gsnap_db_merge(NULL, 0) == GSNAP_EINVAL);
    OK(gsnap_db_merge(db, 0)); /* the handle's own 8: its commits left nothing to do */
    OK(gsnap_db_stats(db, &st1));
    CHECK_MSG(st1.runs == st0.runs, "merge at the handle's fanout: %llu runs, before %llu",
              (unsigned long long)st1.runs, (unsigned long long)st0.runs);

    gsnap_read *old;
    OK(gsnap_read_begin(db, &old));
    OK(gsnap_db_merge(db, GSNAP_MERGE_FANOUT));
    CHECK_MSG(fullest_level(db) < GSNAP_MERGE_FANOUT, "after the merge a level holds %u runs", fullest_level(db));
    records(db, &base, &deltas);
    CHECK_MSG(deltas < base, "after the merge the deltas hold %llu records, the base %llu",
              (unsigned long long)deltas, (unsigned long long)base);
    OK(gsnap_db_stats(db, &st1));
    CHECK_MSG(st1.runs < st0.runs, "merge: %llu runs, before %llu", (unsigned long long)st1.runs,
              (unsigned long long)st0.runs);
    OK(gsnap_db_version(db, &v1));
    CHECK_MSG(v1 == v0, "the merge made version %llu (was %llu)", (unsigned long long)v1, (unsigned long long)v0);
    check_degrees(db, old, in, out, "the view begun before the merge");
    gsnap_read_end(old);
    check_degrees(db, NULL, in, out, "after the merge");
    gsnap_db_close(db);

    o.read_only = 1;
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(gsnap_db_merge(db, 0) == GSNAP_EACCES);
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
    merge_to_the_default_shape();
    TEST_DONE();
}
