/* tests/test_sampler_adapt.c -- adaptive refresh and the run-time core
 * (issue 18), white-box over the in-memory source.
 *  1. miss-driven gamma on a scripted sequence of batches: 0 when nothing
 *     changed (the refresh is skipped), 1 when every entry went stale, and an
 *     intermediate window (some entries stale, a node not held) checked
 *     against DeltaH / (2 lambda) computed here from what the script did;
 *     per-layer "needed" equals the frontier sizes read from the blocks.
 *  2. feedback: reported statistics reach gamma = min(1, kappa * stat);
 *     bad reports and bad options are refused.
 *  3. run-time core on a skewed graph: the static core cut to the memory
 *     bound at open, then membership follows a planted hot set, then a
 *     second one larger than the bound (hottest first, bound kept). */
#include "test.h"
#include "test_sampler_src.h"
#include <math.h>

#define N 200

static gsnap_sampler *open_t(tsrc *t, gsnap_sampler_options *o) {
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(fk, 1, o, &s));
    return s;
}

/* One batch on explicit seeds; checks the buffer; returns the layers'
 * destination counts in ndst[0..L) (DGL order). */
static void batch(gsnap_sampler *s, const uint64_t *seeds, size_t n, uint32_t *ndst) {
    const void *buf;
    size_t len;
    OK(gsnap_sampler_next(s, seeds, n, &buf, &len));
    CHECK(gsnap_block_check(buf, len) == 0);
    unsigned L = gsnap_block_layers(buf, len);
    for (unsigned i = 0; ndst && i < L; i++) {
        gsnap_block b;
        OK(gsnap_block_get(buf, len, i, &b));
        ndst[i] = b.num_dst;
    }
}

static uint64_t ver = 1;
/* A new version with one new in-edge for each node in [a, b). */
static void touch(tsrc *t, uint64_t a, uint64_t b, uint64_t *rng) {
    ver++;
    for (uint64_t v = a; v < b; v++) tsrc_add(t, 1000 + test_rand(rng) % 5000, v, ver);
    tsrc_index(t);
}

static gsnap_gamma_choice last_choice(gsnap_sampler *s, size_t expect_n) {
    gsnap_gamma_choice h[64];
    size_t n = gsnap_sampler_gamma_history(s, h, 64);
    CHECK_MSG(n == expect_n, "history %zu, expected %zu", n, expect_n);
    if (n == 0 || n > 64) exit(1);
    return h[n - 1];
}

static void test_miss(void) {
    uint64_t rng = 7;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < N; v++)
        for (int j = 0; j < 30; j++) tsrc_add(t, test_rand(&rng) % N, v, 1);
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 1;
    o.fanouts[0] = 5;
    o.period = 4;
    o.max_staleness = 0; /* fresh: an entry whose node got edges is redrawn at use */
    o.policy = GSNAP_REFRESH_MISS;
    o.lambda[0] = 0.3;
    o.seed = 3;
    gsnap_sampler *s = open_t(t, &o);
    uint64_t seeds[N + 1];
    for (uint64_t v = 0; v < N; v++) seeds[v] = v;
    /* window 1 (batches 0-3): nothing changes */
    for (int b = 0; b < 4; b++) batch(s, seeds, N, NULL);
    gsnap_sampler_stats st0;
    gsnap_sampler_stats_get(s, &st0);
    batch(s, seeds, N, NULL); /* batch 4: decision over 0-3 */
    gsnap_gamma_choice g = last_choice(s, 1);
    CHECK(g.needed == 4 * N && g.not_held == 0 && g.stale == 0);
    CHECK(g.delta_h == 0 && g.gamma == 0);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    CHECK_MSG(st.refreshes == st0.refreshes, "gamma 0: the refresh is skipped");
    gsnap_adapt_stats as;
    gsnap_sampler_adapt_stats_get(s, &as);
    CHECK(as.decisions == 1 && as.skipped == 1 && as.policy == GSNAP_REFRESH_MISS);
    /* window 2 (batches 4-7): before 5, 6, 7 every node gets an edge; batch 4
     * saw none: DeltaH = 3N / 4N; with lambda 0.3 gamma = clamp(1.25) = 1 */
    for (int b = 5; b < 8; b++) {
        touch(t, 0, N, &rng);
        batch(s, seeds, N, NULL);
    }
    uint64_t rep0 = st.replaced_ids;
    batch(s, seeds, N, NULL); /* batch 8 */
    g = last_choice(s, 2);
    CHECK(g.needed == 4 * N && g.stale == 3 * N && g.not_held == 0);
    CHECK(fabs(g.delta_h - 0.75) < 1e-12 && g.gamma == 1.0);
    gsnap_sampler_stats_get(s, &st);
    CHECK_MSG(st.refreshes == st0.refreshes + 1, "gamma 1: the refresh ran");
    /* ... with gamma 1: every entry (full, none stale: batch 7 redrew them)
     * replaced whole (cap 10 of >= 31 neighbours); 0.15 would replace 2 each */
    CHECK_MSG(st.replaced_ids - rep0 == 10 * N, "replaced %llu, want %d",
              (unsigned long long)(st.replaced_ids - rep0), 10 * N);
    /* window 3 (batches 8-11): before 9 nodes [0, 60) change, before 11 nodes
     * [100, 150); node N (not in the image: not held) is a seed of 10 and 11 */
    touch(t, 0, 60, &rng);
    tsrc_add(t, 3, N, ver); /* node N gets two in-edges (degree 2 > threshold 0) */
    tsrc_add(t, 4, N, ver);
    tsrc_index(t);
    seeds[N] = N;
    batch(s, seeds, N, NULL); /* 9 */
    batch(s, seeds, N + 1, NULL); /* 10 */
    touch(t, 100, 150, &rng);
    batch(s, seeds, N + 1, NULL); /* 11 */
    batch(s, seeds, N, NULL); /* 12 */
    g = last_choice(s, 3);
    uint64_t needed = 4 * N + 2, stale = 60 + 50, held = 2;
    double dh = (double)(stale + held) / (double)needed;
    double want = dh / (2 * 0.3);
    CHECK_MSG(g.needed == needed && g.stale == stale && g.not_held == held,
              "needed %llu stale %llu not_held %llu", (unsigned long long)g.needed,
              (unsigned long long)g.stale, (unsigned long long)g.not_held);
    CHECK_MSG(fabs(g.gamma - want) < 1e-12 && want > 0 && want < 1, "gamma %g want %g", g.gamma,
              want);
    CHECK(fabs(g.lambda - 0.3) < 1e-15 && g.policy == GSNAP_REFRESH_MISS && g.batch == 12);
    CHECK(s->rp.hop_gamma[1] == g.gamma); /* what the refresh used */
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

/* Two layers: "needed" per layer is the sum of the frontier sizes. */
static void test_needed_layers(void) {
    uint64_t rng = 9;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < 500; v++)
        for (int j = 0; j < 8; j++) tsrc_add(t, test_rand(&rng) % 500, v, 1);
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_PSCR;
    o.layers = 2;
    o.fanouts[0] = 3;
    o.fanouts[1] = 4;
    o.period = 3;
    o.policy = GSNAP_REFRESH_MISS;
    gsnap_sampler *s = open_t(t, &o);
    uint64_t sum[2] = {0, 0};
    uint64_t seeds[16];
    for (int b = 0; b < 4; b++) {
        uint32_t nd[2];
        OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 16, seeds));
        batch(s, seeds, 16, nd);
        if (b < 3) {
            sum[0] += nd[0];
            sum[1] += nd[1];
        }
    }
    gsnap_gamma_choice h[2];
    CHECK(gsnap_sampler_gamma_history(s, h, 2) == 2);
    for (int i = 0; i < 2; i++) {
        unsigned li = h[i].layer;
        CHECK(li < 2 && h[i].needed == sum[li] && h[i].gamma == 0 && h[i].delta_h == 0);
    }
    CHECK(h[0].layer != h[1].layer);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

static void test_feedback(void) {
    uint64_t rng = 11;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < N; v++)
        for (int j = 0; j < 20; j++) tsrc_add(t, test_rand(&rng) % N, v, 1);
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 2;
    o.fanouts[0] = 3;
    o.fanouts[1] = 3;
    o.period = 2;
    o.gamma = 0.2;
    o.policy = GSNAP_REFRESH_FEEDBACK;
    o.kappa = 4;
    gsnap_sampler *s = open_t(t, &o);
    uint64_t seeds[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(gsnap_sampler_report(s, 2, 0.1) == GSNAP_EINVAL); /* layer out of range */
    CHECK(gsnap_sampler_report(s, 0, -1) == GSNAP_EINVAL);
    CHECK(gsnap_sampler_report(s, 0, NAN) == GSNAP_EINVAL);
    for (int b = 0; b < 3; b++) batch(s, seeds, 8, NULL); /* decision at 2: no report yet */
    gsnap_gamma_choice h[8];
    CHECK(gsnap_sampler_gamma_history(s, h, 8) == 2);
    CHECK(h[0].gamma == 0.2 && h[1].gamma == 0.2 && h[0].statistic < 0);
    OK(gsnap_sampler_report(s, 0, 0.05)); /* layer 0: gamma 0.2 */
    OK(gsnap_sampler_report(s, 1, 0.5));  /* layer 1: min(1, 2) = 1 */
    batch(s, seeds, 8, NULL);             /* batch 3 */
    batch(s, seeds, 8, NULL);             /* batch 4: decision */
    CHECK(gsnap_sampler_gamma_history(s, h, 8) == 4);
    for (int i = 2; i < 4; i++) {
        if (h[i].layer == 0) CHECK(fabs(h[i].gamma - 0.2) < 1e-12 && h[i].statistic == 0.05);
        else CHECK(h[i].layer == 1 && h[i].gamma == 1.0 && h[i].statistic == 0.5);
        CHECK(h[i].kappa == 4);
    }
    CHECK(s->rp.hop_gamma[1] == 1.0 && fabs(s->rp.hop_gamma[2] - 0.2) < 1e-12); /* used */
    gsnap_sampler_close(s);
    /* refused: report on a fixed-policy sampler, a policy in FCR mode */
    o.policy = GSNAP_REFRESH_FIXED;
    s = open_t(t, &o);
    CHECK(gsnap_sampler_report(s, 0, 1) == GSNAP_EINVAL);
    CHECK(gsnap_sampler_gamma_history(s, NULL, 0) == 0);
    gsnap_sampler_close(s);
    o.policy = GSNAP_REFRESH_MISS;
    o.mode = GSNAP_MODE_FCR;
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL);
    o.mode = GSNAP_MODE_FSCR;
    o.lambda[1] = -1;
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL);
    /* a version-3 caller: the fields after `workers` are not read (defaults) */
    o.version = 3;
    o.policy = (gsnap_refresh_policy)99;
    o.core_min = 7;
    OK(t->base.fork(&t->base, &fk));
    OK(gsnap_sampler__open_src(fk, 1, &o, &s));
    CHECK(s->o.policy == GSNAP_REFRESH_FIXED && s->o.core_min == 0 && s->ad == NULL);
    gsnap_sampler_close(s);
    o.version = GSNAP_SAMPLER_OPTIONS_VERSION + 1; /* unknown */
    o.policy = GSNAP_REFRESH_FIXED;                /* valid otherwise: only the version is wrong */
    o.lambda[1] = 0;
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL);
    gsnap_refresh_policy p;
    CHECK(gsnap_refresh_policy_parse("Feedback", &p) == 0 && p == GSNAP_REFRESH_FEEDBACK);
    CHECK(gsnap_refresh_policy_parse("nope", &p) == GSNAP_EINVAL);
    CHECK(strcmp(gsnap_refresh_policy_name(GSNAP_REFRESH_MISS), "miss") == 0);
    tsrc_destroy(&t->base);
}

#define CN 2000
/* Bytes of a core member in one cache of capacity 8, from what it holds:
 * u64 ids, u32 count, u64 version, and its serving slot (hot.c: count,
 * stamp, ids, u32 each). */
#define MEMBER8 (8 * 8 + 4 + 8 + 4 * (2 + 8))
/* The run-time core's own arrays (core_dyn.c), counted in its bound: u32
 * frequency counters per node id, three words per window batch (window =
 * period 5 here), and six frontier lists (the batch being made and the
 * window's five) of 128 u32 slots once batches of up to 80 seeds ran (a list
 * is reserved for n + 1 slots, doubling from 64). */
#define BOOK0 (4 * CN + 5 * 24)
#define BOOK (BOOK0 + 6 * 4 * 128)

static int member(gsnap_sampler *s, uint64_t v) {
    return s->im->caches[0].cnt[v] != GSNAP_SAMP_UNCACHED;
}

/* Seeds of batch b: the hot set [h0, h0 + nh) (member i >= sparse_from is
 * absent when b % 5 == i % 5) and 20 random cold nodes below 1000. */
static size_t core_seeds(uint64_t *out, uint64_t h0, uint64_t nh, int b, int sparse_from,
                         uint64_t *rng) {
    size_t n = 0;
    for (uint64_t i = 0; i < nh; i++)
        if ((int)i < sparse_from || b % 5 != (int)(i % 5)) out[n++] = h0 + i;
    for (int j = 0; j < 20; j++) out[n++] = test_rand(rng) % 1000; /* cold, below the hot sets */
    return n;
}

static void test_core(void) {
    uint64_t rng = 13;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < CN; v++) { /* skewed: in-degree ~ 400 / (v + 1) */
        uint64_t d = 400 / (v + 1);
        for (uint64_t j = 0; j < (d ? d : 1); j++) tsrc_add(t, (v + 1 + j) % CN, v, 1);
    }
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 1;
    o.fanouts[0] = 4;
    o.alpha = 2; /* cap 8: a member costs MEMBER8 bytes */
    o.period = 5;
    o.core_min = 4;
    o.core_max_bytes = 50 * MEMBER8 + BOOK + MEMBER8 - 1; /* 50 members once the lists are full */
    o.seed = 5;
    gsnap_sampler *s = open_t(t, &o);
    gsnap_adapt_stats as;
    gsnap_sampler_adapt_stats_get(s, &as);
    uint64_t k0 = (o.core_max_bytes - BOOK0) / MEMBER8; /* at open the lists are empty */
    CHECK_MSG(as.dynamic_core == 1 && as.core_nodes == k0 && as.core_bytes == k0 * MEMBER8 + BOOK0,
              "%llu members, %llu bytes", (unsigned long long)as.core_nodes,
              (unsigned long long)as.core_bytes);
    int ok = 1;
    for (uint64_t v = 0; v < CN; v++) ok &= member(s, v) == (v < k0); /* highest degree */
    CHECK_MSG(ok, "the static core cut to the bound: nodes 0..k0-1");
    /* hot set A = [1000, 1040): every batch; decisions at 5, 10, ... */
    uint64_t seeds[200];
    for (int b = 0; b < 5; b++) batch(s, seeds, core_seeds(seeds, 1000, 40, b, 40, &rng), NULL);
    batch(s, seeds, core_seeds(seeds, 1000, 40, 5, 40, &rng), NULL); /* 5: update */
    ok = 1;
    for (uint64_t v = 0; v < CN; v++) ok &= member(s, v) == (v >= 1000 && v < 1040);
    CHECK_MSG(ok, "the core is the hot set A");
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    uint64_t hits0 = st.layer[0].hits;
    for (int b = 6; b < 10; b++)
        batch(s, seeds, core_seeds(seeds, 1000, 40, b, 40, &rng), NULL);
    gsnap_sampler_stats_get(s, &st);
    CHECK_MSG(st.layer[0].hits - hits0 >= 4 * 40, "the hot set is served from the cache");
    /* hot set B = [1500, 1560): 30 in every batch, 30 in 4 of 5 (all >= core_min);
     * the bound takes 50: the 30 hottest and the 20 smallest ids of the rest */
    for (int b = 10; b < 20; b++)
        batch(s, seeds, core_seeds(seeds, 1500, 60, b, 30, &rng), NULL);
    batch(s, seeds, core_seeds(seeds, 1500, 60, 20, 30, &rng), NULL); /* 20: update */
    ok = 1;
    for (uint64_t v = 0; v < CN; v++) ok &= member(s, v) == (v >= 1500 && v < 1550);
    CHECK_MSG(ok, "the core is B's 50 hottest");
    gsnap_sampler_adapt_stats_get(s, &as);
    CHECK(as.core_nodes == 50 && as.core_bytes == 50 * MEMBER8 + BOOK && as.core_capped == 10);
    /* every change counted: joins less leaves is the change of membership */
    CHECK(as.core_joined >= 40 + 50 && as.core_joined - as.core_left == 50 - k0);
    gsnap_sampler_close(s);
    /* refused: run-time core in FBL mode */
    o.mode = GSNAP_MODE_FBL;
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL);
    tsrc_destroy(&t->base);
}

/* A node whose draw fails while it joins the run-time core is left out of
 * the core (not a member holding 0 ids that later updates never retry), and
 * the error reaches the caller. */
static void test_core_join_fails(void) {
    uint64_t rng = 17;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < CN; v++) { /* as test_core: the static core is nodes 0..49 */
        uint64_t d = 400 / (v + 1);
        for (uint64_t j = 0; j < (d ? d : 1); j++) tsrc_add(t, (v + 1 + j) % CN, v, 1);
    }
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 1;
    o.fanouts[0] = 4;
    o.alpha = 2;
    o.period = 5;
    o.core_min = 4;
    o.core_max_bytes = 50 * MEMBER8 + BOOK + MEMBER8 - 1;
    o.seed = 5;
    gsnap_sampler *s = open_t(t, &o);
    CHECK(!member(s, 1005));
    uint64_t seeds[200];
    for (int b = 0; b < 5; b++) batch(s, seeds, core_seeds(seeds, 1000, 40, b, 40, &rng), NULL);
    tsrc_fail_node = 1005; /* a member of the hot set, joining at batch 5 */
    const void *buf;
    size_t len;
    size_t n = core_seeds(seeds, 1000, 40, 5, 40, &rng);
    int rc = gsnap_sampler_next(s, seeds, n, &buf, &len);
    tsrc_fail_node = UINT64_MAX;
    CHECK_MSG(rc == GSNAP_EIO, "the failed join is reported (rc %d)", rc);
    CHECK_MSG(!member(s, 1005), "node 1005 is not a member after its join failed");
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

int main(void) {
    test_miss();
    test_needed_layers();
    test_feedback();
    test_core();
    test_core_join_fails();
    TEST_DONE();
}
