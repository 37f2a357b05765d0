/* tests/test_sampler_lazy.c -- lazy whole-cache refreshes (sampler/lazy.c):
 * FCR / FSCR (and -SC) without a snapshot, frozen, bring an entry to the
 * current generation when a batch first serves it. They must give exactly
 * what the eager refresh (a pass over every entry at each generation) gives:
 * the same batches byte for byte, through scheduled refreshes, refreshes by
 * hand, a gamma that changes between generations, entries left untouched
 * for many generations, and on 1..3 workers; the same whole image (checksum
 * of every entry at the current generation) before and after advancing
 * every entry; refreshes that cost only what the batches touch. PSCR's
 * in-batch refreshes from the lists captured at open give the same batches
 * as from the store. Entries that hold every neighbour are never redrawn.
 * On an in-memory versioned graph
 * (tests/test_sampler_src.h) and on a store. */
#include "test.h"
#include "test_sampler_src.h"

static uint64_t rng = 4242;

static tsrc *make_graph(uint64_t n, uint64_t hubs) { return tsrc_hub_graph(&rng, n, hubs, 40, 300, 25); }

static gsnap_sampler_options opts(gsnap_sample_mode m, uint32_t period, unsigned workers) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = m;
    o.layers = 2;
    o.fanouts[0] = 5;
    o.fanouts[1] = 7;
    o.seed = 11;
    o.period = period;
    o.gamma = 0.3;
    o.workers = workers;
    return o;
}

static gsnap_sampler *open_on(tsrc *t, const gsnap_sampler_options *o, int lazy) {
    gsnap_samp__src *fk;
    gsnap_sampler *s = NULL;
    gsnap_samp__lazy_off = !lazy;
    if (t->base.fork(&t->base, &fk) == 0 && gsnap_sampler__open_src(fk, 1, o, &s) != 0) s = NULL;
    gsnap_samp__lazy_off = 0;
    return s;
}

static const int modes[] = {GSNAP_MODE_FCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_FSCR,
                            GSNAP_MODE_FSCR_SC};

/* Lazy vs eager, one thread, explicit seeds: batches of very different sizes
 * (a small batch leaves most entries behind for many generations), a refresh
 * by hand, gamma changed mid-run (per-generation gamma schedule). */
static void test_batches_equal(void) {
    tsrc *t = make_graph(3000, 60);
    int nb = test_small() ? 30 : 90;
    for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
        gsnap_sample_mode m = (gsnap_sample_mode)modes[mi];
        /* eager: period 0 and a refresh by hand before batches 3, 6, ... (the
         * refresh runs at its batch, with the gamma then in force) */
        gsnap_sampler_options o = opts(m, 3, 1), oe = opts(m, 0, 1);
        gsnap_sampler *e = open_on(t, &oe, 0), *l = open_on(t, &o, 1);
        CHECK(e && l);
        if (!e || !l) continue;
        CHECK(e->im->lz == NULL && l->im->lz != NULL);
        int same = 1;
        uint64_t seeds[400];
        for (int i = 0; i < nb && same; i++) {
            size_t ns = i % 7 == 0 ? 400 : (i % 3 == 0 ? 3 : 60);
            if (i == nb / 3) {
                OK(gsnap_sampler_refresh(e));
                OK(gsnap_sampler_refresh(l));
            }
            for (unsigned h = 0; h <= GSNAP_MAX_LAYERS; h++) { /* what a policy could do */
                if (i == nb / 2) e->rp.hop_gamma[h] = l->rp.hop_gamma[h] = 0.45 + 0.1 * h;
                if (i == 2 * nb / 3) e->rp.hop_gamma[h] = l->rp.hop_gamma[h] = 0.3 - 0.1 * h;
            }
            CHECK(e->rp.per_hop && l->rp.per_hop);
            if (i > 0 && i % 3 == 0) OK(gsnap_sampler_refresh(e));
            OK(gsnap_sampler_random_seeds(e, (uint64_t)i, ns, seeds));
            const void *be, *bl;
            size_t le, ll;
            OK(gsnap_sampler_next(e, seeds, ns, &be, &le));
            OK(gsnap_sampler_next(l, seeds, ns, &bl, &ll));
            CHECK(gsnap_block_check(bl, ll) == 0);
            if (le != ll || memcmp(be, bl, le) != 0) {
                fprintf(stderr, "%s: batch %d differs\n", gsnap_sample_mode_name(m), i);
                same = 0;
            }
        }
        CHECK_MSG(same, "lazy == eager batches, mode %s", gsnap_sample_mode_name(m));
        gsnap_sampler_stats se, sl;
        gsnap_sampler_stats_get(e, &se);
        gsnap_sampler_stats_get(l, &sl);
        CHECK(se.generation == sl.generation && se.refreshes == sl.refreshes);
        CHECK(sl.generation >= (uint64_t)nb / 3);
        /* the lazy refresh redrew fewer entries than the eager one */
        CHECK_MSG(sl.refreshed_entries < se.refreshed_entries, "%llu < %llu",
                  (unsigned long long)sl.refreshed_entries,
                  (unsigned long long)se.refreshed_entries);
        CHECK(sl.refreshed_entries > 0);
        /* the whole image: entries not advanced are computed aside */
        uint64_t ce = gsnap_sampler_cache_checksum(e), cl = gsnap_sampler_cache_checksum(l);
        CHECK_MSG(ce == cl, "image checksum, mode %s", gsnap_sample_mode_name(m));
        OK(gsnap_samp__lazy_settle(l->im));
        CHECK(gsnap_sampler_cache_checksum(l) == ce);
        gsnap_sampler_close(e);
        gsnap_sampler_close(l);
    }
    tsrc_destroy(&t->base);
}

/* Random seeds on 1..3 workers (the workers share the lazy image and may
 * advance the same entry at once) against the eager path on one thread. */
static void test_workers_equal(void) {
    tsrc *t = make_graph(2000, 50);
    int nb = test_small() ? 12 : 40;
    for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
        gsnap_sample_mode m = (gsnap_sample_mode)modes[mi];
        void *ref[64] = {0};
        size_t rlen[64] = {0};
        for (unsigned w = 0; w <= 3; w++) { /* w = 0: eager, one thread */
            gsnap_sampler_options o = opts(m, 4, w ? w : 1);
            gsnap_sampler *s = open_on(t, &o, w != 0);
            CHECK(s != NULL);
            if (!s) continue;
            int same = 1;
            for (int i = 0; i < nb; i++) {
                const void *buf;
                size_t len;
                OK(gsnap_sampler_next(s, NULL, 200, &buf, &len));
                if (w == 0) {
                    ref[i] = malloc(len);
                    memcpy(ref[i], buf, len);
                    rlen[i] = len;
                } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
                    same = 0;
                }
            }
            CHECK_MSG(same, "mode %s, %u workers", gsnap_sample_mode_name(m), w);
            gsnap_sampler_close(s);
        }
        for (int i = 0; i < nb; i++) free(ref[i]);
    }
    tsrc_destroy(&t->base);
}

/* Entries that hold every neighbour of their node (d <= cap) are the same in
 * every generation: they are stamped ALL when the view is built and never
 * redrawn (lazy.c), on 1..3 workers, and the batches and the whole image are
 * still the eager path's. Graph `lo`: every degree below both caps (5 and 7
 * with alpha 2: caps 10 and 14), so no lazy redraw at all; graph `mixed`:
 * low degrees and hubs, so the hubs' entries are still redrawn. Period 1:
 * every batch is a new generation; also with every generation swept
 * (lazy_sweep.c: its list holds exactly the entries not stamped ALL). */
static void test_complete_entries(void) {
    tsrc *lo = tsrc_new();
    for (uint64_t v = 0; v < 1500; v++)
        for (uint64_t i = 0, d = test_rand(&rng) % 10; i < d; i++)
            tsrc_add(lo, test_rand(&rng) % 1500, v, 1);
    tsrc_add(lo, 0, 1499, 1);
    tsrc_index(lo);
    tsrc *mixed = make_graph(1500, 40);
    int nb = test_small() ? 8 : 24;
    for (int gi = 0; gi < 2; gi++) {
        tsrc *t = gi ? mixed : lo;
        for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
            gsnap_sample_mode m = (gsnap_sample_mode)modes[mi];
            void *ref[32] = {0};
            size_t rlen[32] = {0};
            uint64_t ref_sum = 0;
            for (unsigned k = 0; k <= 6; k++) { /* k = 0: eager, one thread */
                /* 1..3 workers, lazy sweeps as the policy says, then always */
                unsigned w = k <= 3 ? k : k - 3;
                gsnap_samp__sweep_mode = k <= 3 ? -1 : 1;
                gsnap_sampler_options o = opts(m, 1, w ? w : 1);
                gsnap_sampler *s = open_on(t, &o, w != 0);
                CHECK(s != NULL);
                if (!s) continue;
                /* the stamps: ALL exactly where the entry holds N(v) */
                uint64_t nall = 0, nbad = 0;
                for (unsigned ci = 0; w && ci < s->im->ncache; ci++) {
                    const gsnap_samp__hotc *h = &s->im->hot[ci];
                    for (uint64_t v = 0; h->slot && v < s->im->nnodes; v++) {
                        const uint32_t *sl = h->slot + v * h->stride;
                        uint64_t d = s->im->lz_off[v + 1] - s->im->lz_off[v];
                        int all = sl[0] != GSNAP_SAMP_UNCACHED && d <= h->stride - 2 && sl[0] == d;
                        nall += all;
                        nbad += all != (sl[1] == GSNAP_SAMP_LZ_ALL);
                    }
                    /* lazy_sweep.c's list: the cached entries not ALL */
                    uint64_t nlive = 0;
                    for (uint64_t v = 0; h->slot && v < s->im->nnodes; v++)
                        nlive += h->slot[v * h->stride + 1] != GSNAP_SAMP_LZ_ALL &&
                                 h->slot[v * h->stride + 1] != GSNAP_SAMP_LZ_UNC;
                    CHECK(h->nlive == nlive && (gi == 1 || nlive == 0));
                }
                CHECK_MSG(nbad == 0 && (w == 0 || nall > 0), "%s: %llu stamps wrong, %llu ALL",
                          gsnap_sample_mode_name(m), (unsigned long long)nbad,
                          (unsigned long long)nall);
                int same = 1;
                for (int i = 0; i < nb; i++) {
                    const void *buf;
                    size_t len;
                    OK(gsnap_sampler_next(s, NULL, 150, &buf, &len));
                    if (w == 0) {
                        ref[i] = malloc(len);
                        memcpy(ref[i], buf, len);
                        rlen[i] = len;
                    } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
                        same = 0;
                    }
                }
                gsnap_sampler_stats st;
                gsnap_sampler_stats_get(s, &st);
                uint64_t sum = gsnap_sampler_cache_checksum(s);
                if (w == 0) ref_sum = sum;
                CHECK_MSG(same && sum == ref_sum, "graph %d, mode %s, %u workers", gi,
                          gsnap_sample_mode_name(m), w);
                if (w && gi == 0) /* nothing to redraw: every entry holds N(v) */
                    CHECK_MSG(st.refreshed_entries == 0, "%s, %u workers: %llu redraws",
                              gsnap_sample_mode_name(m), w,
                              (unsigned long long)st.refreshed_entries);
                if (w && gi == 1) CHECK(st.refreshed_entries > 0); /* the hubs */
                gsnap_sampler_close(s);
            }
            gsnap_samp__sweep_mode = -1;
            for (int i = 0; i < nb; i++) free(ref[i]);
        }
    }
    tsrc_destroy(&lo->base);
    tsrc_destroy(&mixed->base);
}

/* On a store (LMDB scan at open, threshold split), through the public open. */
static void test_store_equal(void) {
    char *dir = test_tmpdir("lazy");
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopts, &db));
    uint64_t r = 97;
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (int i = 0; i < 20000; i++) {
        uint64_t x = test_rand(&r) % 1500, y = test_rand(&r) % 1500;
        if (test_rand(&r) % 6 == 0) y = test_rand(&r) % 12; /* hubs */
        OK(gsnap_batch_add(b, x, y, i));
    }
    OK(gsnap_batch_commit(b, NULL));
    int nb = test_small() ? 10 : 30;
    /* PSCR too: its in-batch refreshes read the lists captured at open
     * instead of the store's view (the same lists) */
    static const int smodes[] = {GSNAP_MODE_FCR,  GSNAP_MODE_FCR_SC,  GSNAP_MODE_FSCR,
                                 GSNAP_MODE_FSCR_SC, GSNAP_MODE_PSCR, GSNAP_MODE_PSCR_SC};
    for (size_t mi = 0; mi < sizeof smodes / sizeof *smodes; mi++) {
        gsnap_sampler_options o = opts((gsnap_sample_mode)smodes[mi], 2, 1);
        o.threshold = mi % 2 ? 4 : 0;
        gsnap_sampler *e, *l;
        gsnap_samp__lazy_off = 1;
        OK(gsnap_sampler_open(db, NULL, &o, &e));
        gsnap_samp__lazy_off = 0;
        OK(gsnap_sampler_open(db, NULL, &o, &l));
        int same = 1;
        for (int i = 0; i < nb; i++) {
            const void *be, *bl;
            size_t le, ll;
            OK(gsnap_sampler_next(e, NULL, 100, &be, &le));
            OK(gsnap_sampler_next(l, NULL, 100, &bl, &ll));
            same &= le == ll && memcmp(be, bl, le) == 0;
        }
        CHECK(e->im->lz == NULL && l->im->lz != NULL);
        CHECK_MSG(same, "store, mode %s", gsnap_sample_mode_name((gsnap_sample_mode)smodes[mi]));
        CHECK(gsnap_sampler_cache_checksum(e) == gsnap_sampler_cache_checksum(l));
        gsnap_sampler_close(e);
        gsnap_sampler_close(l);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    test_batches_equal();
    gsnap_samp__lazy_gap_max = 4; /* every 4 generations: advance every entry */
    test_batches_equal();
    gsnap_samp__lazy_gap_max = GSNAP_SAMP_LZ_MASK / 2;
    test_workers_equal();
    test_complete_entries();
    test_store_equal();
    TEST_DONE();
}
