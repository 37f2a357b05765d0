/* tests/test_sampler_pool.c -- the sampler's worker pool (issue 17,
 * sampler/workers.c): its threads go on producing a round's batches between
 * calls, so whatever the caller does between two calls that may change the
 * cache (a refresh by hand, an asynchronous one, reading the cache checksum,
 * a change of batch size, closing the sampler) must first stop them and drop
 * what they made ahead. Batch i, and the counts of the batches returned, are
 * the same as one thread's whatever is done between the calls and whenever;
 * closing mid-round leaks and races nothing (valgrind, TSan). On an
 * in-memory versioned graph (tests/test_sampler_src.h). */
#include "test.h"
#include "test_sampler_src.h"

static uint64_t rng = 4242;

static tsrc *make_graph(uint64_t n) {
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < n; v++) {
        uint64_t d = v < 30 ? 80 + test_rand(&rng) % 200 : test_rand(&rng) % 25;
        for (uint64_t i = 0; i < d; i++) tsrc_add(t, test_rand(&rng) % n, v, 1);
    }
    tsrc_add(t, 0, n - 1, 1); /* node bound = n */
    tsrc_index(t);
    return t;
}

static gsnap_sampler *open_w(tsrc *t, gsnap_sample_mode m, uint32_t period, unsigned w) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = m;
    o.layers = 2;
    o.fanouts[0] = 5;
    o.fanouts[1] = 5;
    o.seed = 9;
    o.period = period;
    o.gamma = 0.4;
    o.workers = w;
    gsnap_sampler *s = NULL;
    gsnap_samp__src *fk;
    if (t->base.fork(&t->base, &fk)) return NULL;
    if (gsnap_sampler__open_src(fk, 1, &o, &s)) return NULL;
    return s;
}

/* What happens between call i and i+1 (the same for every worker count). */
static int between(gsnap_sampler *s, uint64_t plan) {
    switch (plan % 7) {
    case 0: return gsnap_sampler_refresh(s);
    case 1: (void)gsnap_sampler_cache_checksum(s); return 0;
    case 2: {
        int rc = gsnap_sampler_refresh_async(s);
        return rc ? rc : gsnap_sampler_refresh_wait(s);
    }
    default: return 0; /* most calls: nothing, the pool runs on */
    }
}

static void run_mode(tsrc *t, gsnap_sample_mode m, uint32_t period) {
    int nb = test_small() ? 24 : 90;
    uint64_t plan_seed = 17 + (uint64_t)m * 31 + period;
    void **ref = calloc((size_t)nb, sizeof *ref);
    size_t *rlen = calloc((size_t)nb, sizeof *rlen);
    gsnap_sampler_stats rst = {0};
    for (unsigned w = 1; w <= 3; w++) {
        gsnap_sampler *s = open_w(t, m, period, w);
        CHECK(s != NULL);
        if (!s) break;
        uint64_t plan = plan_seed;
        int same = 1;
        for (int i = 0; i < nb; i++) {
            size_t ns = i < nb / 2 ? 96 : 112; /* a change of batch size midway */
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, NULL, ns, &buf, &len));
            CHECK(gsnap_block_check(buf, len) == 0);
            if (w == 1) {
                ref[i] = malloc(len);
                memcpy(ref[i], buf, len);
                rlen[i] = len;
            } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
                same = 0;
            }
            if (test_rand(&plan) % 3 == 0) OK(between(s, test_rand(&plan)));
        }
        CHECK_MSG(same, "mode %s, period %u, %u workers", gsnap_sample_mode_name(m), period, w);
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK(st.batches == (uint64_t)nb);
        if (w == 1) rst = st;
        else CHECK_MSG(st.edges == rst.edges && st.seeds == rst.seeds, "counts, %u workers", w);
        gsnap_sampler_close(s);
    }
    for (int i = 0; i < nb; i++) free(ref[i]);
    free(ref);
    free(rlen);
}

/* Close while the pool is mid-round (one batch taken of a long round) and
 * right after the first call of a sampler that never took a second one. */
static void test_close_mid_round(tsrc *t) {
    for (unsigned w = 2; w <= 4; w++) {
        for (int k = 1; k <= 3; k++) {
            gsnap_sampler *s = open_w(t, GSNAP_MODE_FSCR, 0, w);
            CHECK(s != NULL);
            if (!s) return;
            for (int i = 0; i < k; i++) {
                const void *buf;
                size_t len;
                OK(gsnap_sampler_next(s, NULL, 128, &buf, &len));
                CHECK(gsnap_block_check(buf, len) == 0);
            }
            gsnap_sampler_close(s);
        }
    }
}

int main(void) {
    tsrc *t = make_graph(3000);
    const gsnap_sample_mode modes[] = {GSNAP_MODE_FCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_FSCR,
                                       GSNAP_MODE_FSCR_SC};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        run_mode(t, modes[i], 0);
        run_mode(t, modes[i], 7);
    }
    test_close_mid_round(t);
    tsrc_destroy(&t->base);
    TEST_DONE();
}
