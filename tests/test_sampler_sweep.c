/* tests/test_sampler_sweep.c -- a generation's lazy redraws done up front
 * (sampler/lazy_sweep.c, issue 17): at the first batch of a generation the
 * live entries of a lazy FCR / FSCR image (cached, not holding every
 * neighbour) may be advanced in node order, on the caller's thread or, with
 * workers, in chunks claimed by the round's threads. The batches and the
 * whole image must be exactly the eager refresh's whatever is swept, by how
 * many threads, and whatever happens between calls (a refresh by hand
 * mid-round, a change of batch size); a swept generation's batches redraw
 * nothing themselves on one thread (with workers, at most what a chunk
 * being swept when a batch starts holds); the policy sweeps a cache only
 * after a probe generation showed that its batches touch most of its live
 * entries. On an in-memory versioned graph (tests/test_sampler_src.h). */
#include "test.h"
#include "test_sampler_src.h"

static uint64_t rng = 777;

static tsrc *make_graph(uint64_t n, uint64_t hubs) { return tsrc_hub_graph(&rng, n, hubs, 40, 200, 30); }

static gsnap_sampler *open_on(tsrc *t, gsnap_sample_mode m, uint32_t period, unsigned w,
                              int lazy) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = m;
    o.layers = 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 6;
    o.seed = 5;
    o.period = period;
    o.gamma = 0.35;
    o.workers = w;
    gsnap_samp__src *fk;
    gsnap_sampler *s = NULL;
    gsnap_samp__lazy_off = !lazy;
    if (t->base.fork(&t->base, &fk) == 0 && gsnap_sampler__open_src(fk, 1, &o, &s) != 0) s = NULL;
    gsnap_samp__lazy_off = 0;
    return s;
}

static uint64_t batch_redraws(const gsnap_sampler_stats *st) {
    uint64_t n = 0;
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) n += st->layer[i].refreshed;
    return n;
}

static const int modes[] = {GSNAP_MODE_FCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_FSCR,
                            GSNAP_MODE_FSCR_SC};

/* Batch i of a run: random seeds, 250 of them but 40 from batch nb / 3 on;
 * a refresh by hand before batch nb / 2 (mid-round with workers). */
static int run(gsnap_sampler *s, int nb, void **ref, size_t *rlen, int keep) {
    int same = 1;
    for (int i = 0; i < nb; i++) {
        const void *buf;
        size_t len;
        if (i == nb / 2 && gsnap_sampler_refresh(s) != 0) return 0;
        if (gsnap_sampler_next(s, NULL, i >= nb / 3 ? 40 : 250, &buf, &len) != 0) return 0;
        if (keep) {
            ref[i] = malloc(len);
            memcpy(ref[i], buf, len);
            rlen[i] = len;
        } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
            same = 0;
        }
    }
    return same;
}

/* Never, always, or as the policy says; on 1..3 workers: the eager path's
 * batches and image. Always on one thread: the batches redraw nothing. */
static void test_equal(void) {
    tsrc *t = make_graph(1200, 80);
    int nb = test_small() ? 16 : 48;
    for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
        gsnap_sample_mode m = (gsnap_sample_mode)modes[mi];
        void *ref[64] = {0};
        size_t rlen[64] = {0};
        gsnap_sampler *e = open_on(t, m, 3, 1, 0);
        CHECK(e != NULL);
        if (!e) continue;
        CHECK(run(e, nb, ref, rlen, 1));
        uint64_t sum = gsnap_sampler_cache_checksum(e);
        gsnap_sampler_close(e);
        for (int mode = -1; mode <= 1; mode++) {
            for (unsigned w = 1; w <= 3; w++) {
                gsnap_samp__sweep_mode = mode;
                gsnap_sampler *s = open_on(t, m, 3, w, 1);
                CHECK(s != NULL);
                if (!s) continue;
                CHECK(s->im->lazy && s->im->hot[0].nlive > 0);
                int same = run(s, nb, ref, rlen, 0);
                gsnap_sampler_stats st;
                gsnap_sampler_stats_get(s, &st);
                CHECK_MSG(same && gsnap_sampler_cache_checksum(s) == sum,
                          "mode %s, sweep %d, %u workers", gsnap_sample_mode_name(m), mode, w);
                CHECK(st.refreshed_entries > 0);
                /* one thread: every redraw is the sweeps'; workers: a batch
                 * does not wait for a chunk being swept, whose entries it
                 * may then advance itself (at most one chunk a generation) */
                if (mode == 1)
                    CHECK_MSG(w == 1 ? batch_redraws(&st) == 0
                                     : batch_redraws(&st) < st.refreshed_entries / 2,
                              "%s, %u workers: %llu of %llu redrawn by batches",
                              gsnap_sample_mode_name(m), w,
                              (unsigned long long)batch_redraws(&st),
                              (unsigned long long)st.refreshed_entries);
                if (mode == 0) CHECK(batch_redraws(&st) == st.refreshed_entries);
                gsnap_sampler_close(s);
            }
        }
        gsnap_samp__sweep_mode = -1;
        for (int i = 0; i < nb; i++) free(ref[i]);
    }
    tsrc_destroy(&t->base);
}

/* The policy: a probe generation (lazy) measures the share of live entries
 * the batches touch. Big batches on a small graph touch most of them: after
 * the probe the batches redraw nothing (one thread; most is swept with
 * workers) until the next probe, 16 generations on. Three seeds a batch touch few: never swept. */
static void test_policy(void) {
    tsrc *t = make_graph(600, 60);
    for (unsigned w = 1; w <= 2; w++) {
        for (int big = 0; big <= 1; big++) {
            gsnap_sampler *s = open_on(t, GSNAP_MODE_FCR_SC, 2, w, 1);
            CHECK(s != NULL);
            if (!s) continue;
            gsnap_sampler_stats st;
            const void *buf;
            size_t len;
            /* generation 0 (no redraws), 1 (the probe) */
            for (int i = 0; i < 4; i++) OK(gsnap_sampler_next(s, NULL, big ? 500 : 3, &buf, &len));
            gsnap_sampler_stats_get(s, &st);
            uint64_t probe = batch_redraws(&st);
            CHECK(probe > 0 && probe == st.refreshed_entries);
            /* generations 2 .. 13 */
            for (int i = 0; i < 24; i++) OK(gsnap_sampler_next(s, NULL, big ? 500 : 3, &buf, &len));
            gsnap_sampler_stats_get(s, &st);
            if (big) {
                uint64_t late = batch_redraws(&st) - probe;
                uint64_t swept = st.refreshed_entries - batch_redraws(&st);
                CHECK_MSG(w == 1 ? late == 0 : late < swept / 2,
                          "%u workers: %llu redrawn by batches after the probe, %llu swept", w,
                          (unsigned long long)late, (unsigned long long)swept);
                CHECK(st.refreshed_entries >= probe + 12 * (uint64_t)s->im->hot[0].nlive / 2);
            } else {
                CHECK(batch_redraws(&st) > probe);
                CHECK(st.refreshed_entries == batch_redraws(&st));
            }
            gsnap_sampler_close(s);
        }
    }
    tsrc_destroy(&t->base);
}

int main(void) {
    test_equal();
    test_policy();
    TEST_DONE();
}
