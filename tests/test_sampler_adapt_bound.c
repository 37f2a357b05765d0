/* tests/test_sampler_adapt_bound.c -- the run-time core's byte bound
 * (options.core_max_bytes) covers everything the core allocates: its
 * members' entries and its own per-node counters and per-batch lists. The
 * bytes the sampler reports (adapt stats core_bytes, and the peak it keeps)
 * are at least what this test computes independently (4 bytes per node id
 * for the frequency counters plus each member's entry bytes) and never above
 * the bound, at open and after every batch, while the batches grow (so the
 * window's lists grow between updates) and the hot set moves. A bound below
 * the counters alone is refused at open with a clear message. */
#include "test.h"
#include "test_sampler_src.h"

#define CN 3000

/* A member's bytes, from what it holds per cache of capacity cap: u64 ids,
 * u32 count, u64 version, the serving slot (count, stamp, ids; u32). */
static uint64_t member_bytes(const uint32_t *caps, unsigned n) {
    uint64_t b = 0;
    for (unsigned i = 0; i < n; i++) b += 8 * caps[i] + 4 + 8 + 4 * (2 + caps[i]);
    return b;
}

static gsnap_sampler *open_t(tsrc *t, gsnap_sampler_options *o, int *rc) {
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s = NULL;
    *rc = gsnap_sampler__open_src(fk, 1, o, &s);
    return s;
}

int main(void) {
    uint64_t rng = 21;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < CN; v++) { /* skewed in-degrees */
        uint64_t d = 2 + 600 / (v + 1);
        for (uint64_t j = 0; j < d; j++) tsrc_add(t, (v * 7 + j * 13 + 1) % CN, v, 1);
    }
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 2;
    o.fanouts[0] = 3; /* DGL order: hop 2 */
    o.fanouts[1] = 4; /* hop 1 */
    o.alpha = 2;      /* caches of capacity 8 (hop 1) and 6 (hop 2) */
    o.period = 4;
    o.core_min = 3;
    o.seed = 9;
    const uint32_t caps[2] = {8, 6};
    uint64_t mb = member_bytes(caps, 2), counters = 4ull * CN;
    int rc;
    /* below the counters alone: refused, with the numbers */
    o.core_max_bytes = counters - 1;
    gsnap_sampler *s = open_t(t, &o, &rc);
    CHECK_MSG(rc == GSNAP_EINVAL && s == NULL, "a bound below the counters: rc %d", rc);
    /* the window's lists reach 4 x (4 + 1) x 4096 bytes (frontiers of up to
     * 600 + 2400 ids): members are admitted at first, dropped as they grow */
    o.core_max_bytes = counters + 40 * mb + 5 * 4 * 4096;
    s = open_t(t, &o, &rc);
    OK(rc);
    uint64_t seeds[600], most = 0;
    int bad = 0;
    for (int b = 0; b <= 40; b++) {
        gsnap_adapt_stats as;
        gsnap_sampler_adapt_stats_get(s, &as);
        uint64_t lower = counters + as.core_nodes * mb; /* at least this is allocated */
        if (as.core_bytes < lower || as.core_bytes > o.core_max_bytes) {
            if (!bad++)
                fprintf(stderr, "batch %d: core_bytes %llu, members %llu: expected [%llu, %llu]\n", b,
                        (unsigned long long)as.core_bytes, (unsigned long long)as.core_nodes,
                        (unsigned long long)lower, (unsigned long long)o.core_max_bytes);
        }
        if (as.core_nodes > most) most = as.core_nodes;
        if (b == 40) break;
        /* a hot set that moves every 10 batches, plus random seeds, more each batch */
        size_t n = 0;
        uint64_t h0 = 1000 + (uint64_t)(b / 10) * 300;
        for (uint64_t i = 0; i < 60; i++) seeds[n++] = h0 + i;
        for (int j = 0; j < 20 + 12 * b && n < 600; j++) seeds[n++] = test_rand(&rng) % CN;
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(s, seeds, n, &buf, &len));
    }
    CHECK_MSG(bad == 0, "%d batch(es) outside [counters + members' entries, bound]", bad);
    CHECK_MSG(most >= 20, "the bound leaves room for members (at most %llu)", (unsigned long long)most);
    CHECK_MSG(s->ad->trimmed > 0, "the growing lists made members leave between updates");
    CHECK_MSG(s->ad->peak >= counters && s->ad->peak <= o.core_max_bytes, "peak %llu, bound %llu",
              (unsigned long long)s->ad->peak, (unsigned long long)o.core_max_bytes);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
    TEST_DONE();
}
