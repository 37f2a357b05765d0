/* tests/test_sampler_mixed.c -- a frozen and a fresh sampler on one
 * snapshot (findings F10 and F2 of docs/reliability.md). Edges are ingested
 * after the snapshot, the fresh sampler commits refreshes (entries drawn at
 * newer versions, some of nodes that had no neighbours at the snapshot),
 * the frozen sampler adopts those generations and commits its own refresh
 * on top of them. Then: every edge the frozen sampler serves exists at the
 * snapshot's (T, V); every edge the fresh one serves exists at its batch's
 * version; generations stay real numbers (never the 2^64 - 1 sentinel);
 * gsnap_snapshot_check finds no problem. */
#include "test.h"

#define N 600
#define OLD 500 /* nodes >= OLD have no in-neighbours at the snapshot */
static uint64_t rng = 777;

static gsnap_sampler_options opts(int fresh) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 4;
    o.gamma = 0.5;
    o.seed = 5;
    o.max_staleness = fresh ? 0 : -1;
    return o;
}

/* Does u -> v exist (direction in: u is an in-neighbour of v) at (T, V)? */
static int edge_at(gsnap_db *db, uint64_t v, uint64_t u, uint64_t ver) {
    static gsnap_nbr nb[4096];
    size_t cnt = 0;
    OK(gsnap_neighbors(db, NULL, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, ver, nb, 4096, &cnt));
    if (cnt > 4096) { fprintf(stderr, "degree %zu too large for the test\n", cnt); exit(1); }
    for (size_t i = 0; i < cnt; i++)
        if (nb[i].node == u) return 1;
    return 0;
}

/* One batch of `s` over seeds; checks every edge at the block's version
 * (want_ver: that version must be this one, 0 = any). Returns bad edges. */
static uint64_t batch(gsnap_db *db, gsnap_sampler *s, const uint64_t *seeds, size_t n,
                      uint64_t want_ver, uint64_t *edges) {
    const void *buf;
    size_t len;
    OK(gsnap_sampler_next(s, seeds, n, &buf, &len));
    CHECK(gsnap_block_check(buf, len) == 0);
    uint64_t gen = 0, ver = 0, bad = 0;
    OK(gsnap_block_info(buf, len, NULL, &gen, &ver));
    CHECK_MSG(gen < 1000, "generation %llu", (unsigned long long)gen);
    if (want_ver) CHECK(ver == want_ver);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    CHECK_MSG(st.generation < 1000, "stats generation %llu", (unsigned long long)st.generation);
    for (unsigned l = 0; l < gsnap_block_layers(buf, len); l++) {
        gsnap_block b;
        OK(gsnap_block_get(buf, len, l, &b));
        for (uint32_t r = 0; r < b.num_dst; r++)
            for (uint32_t e = b.indptr[r]; e < b.indptr[r + 1]; e++) {
                (*edges)++;
                if (!edge_at(db, b.src_ids[r], b.src_ids[b.indices[e]], ver)) bad++;
            }
    }
    return bad;
}

static void ingest(gsnap_db *db, unsigned edges) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (unsigned i = 0; i < edges; i++)
        OK(gsnap_batch_add(b, test_rand(&rng) % N, test_rand(&rng) % N, 1));
    OK(gsnap_batch_commit(b, NULL));
}

static void count_problem(void *ctx, const char *p) {
    (*(uint64_t *)ctx)++;
    fprintf(stderr, "check: %s\n", p);
}

int main(void) {
    char *dir = test_tmpdir("samp-mixed");
    gsnap_db_options d = GSNAP_DB_OPTIONS_INIT;
    d.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &d, &db));
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < OLD; v++) { /* sources 0..N-1, destinations 0..OLD-1 */
        uint64_t deg = 3 + test_rand(&rng) % 15;
        for (uint64_t i = 0; i < deg; i++) OK(gsnap_batch_add(b, test_rand(&rng) % N, v, 1));
    }
    OK(gsnap_batch_commit(b, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hops = 2;
    so.fanouts[0] = 4;
    so.fanouts[1] = 4;
    OK(gsnap_snapshot_create(db, "s", &so, NULL));
    gsnap_snapshot *snap;
    OK(gsnap_snapshot_open(db, "s", &snap));
    uint64_t V = gsnap_snapshot_get_info(snap)->at_version;
    gsnap_snapshot_close(snap);

    gsnap_sampler_options of = opts(0), oh = opts(1);
    gsnap_sampler *frozen, *fresh;
    OK(gsnap_sampler_open(db, "s", &of, &frozen));
    OK(gsnap_sampler_open(db, "s", &oh, &fresh));

    uint64_t seeds[N], fbad = 0, fedges = 0, hbad = 0, hedges = 0;
    for (uint64_t i = 0; i < N; i++) seeds[i] = i;
    /* before any ingest, the frozen sampler is clean */
    fbad += batch(db, frozen, seeds, N, V, &fedges);
    for (int round = 0; round < 3; round++) {
        ingest(db, 3000); /* new edges, also into nodes OLD..N-1 */
        hbad += batch(db, fresh, seeds, 64, 0, &hedges); /* marks the changes */
        OK(gsnap_sampler_refresh(fresh));                /* commits entries at V_now */
        hbad += batch(db, fresh, seeds, N, 0, &hedges);
        /* frozen: adopts the fresh generation at its next batch */
        fbad += batch(db, frozen, seeds, N, V, &fedges);
        /* a fresh commit, then a frozen partial commit on top of it
         * without a batch between: the frozen image is mixed (this once
         * set its generation to 2^64 - 1) */
        hbad += batch(db, fresh, seeds + 100, 64, 0, &hedges);
        OK(gsnap_sampler_refresh(fresh));
        OK(gsnap_sampler_refresh(frozen));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(frozen, &st);
        CHECK_MSG(st.generation < 1000, "frozen generation %llu after refresh",
                  (unsigned long long)st.generation);
        gsnap_sampler_stats_get(fresh, &st);
        CHECK_MSG(st.generation < 1000, "fresh generation %llu after refresh",
                  (unsigned long long)st.generation);
        fbad += batch(db, frozen, seeds, N, V, &fedges);
        hbad += batch(db, fresh, seeds, N, 0, &hedges);
    }
    printf("frozen: %llu edges, %llu not at the snapshot; fresh: %llu edges, %llu not at their "
           "version\n",
           (unsigned long long)fedges, (unsigned long long)fbad, (unsigned long long)hedges,
           (unsigned long long)hbad);
    CHECK(fedges > 0 && hedges > 0);
    CHECK(fbad == 0);
    CHECK(hbad == 0);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(frozen, &st);
    CHECK(st.generation < 1000);
    gsnap_sampler_stats_get(fresh, &st);
    CHECK(st.generation < 1000);
    gsnap_sampler_close(frozen);
    gsnap_sampler_close(fresh);

    uint64_t problems = 0, reported = 0;
    OK(gsnap_snapshot_check(db, "s", count_problem, &reported, &problems));
    CHECK(problems == 0 && reported == 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
