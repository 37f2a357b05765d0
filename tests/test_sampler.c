/* tests/test_sampler.c -- sampler validity in every mode, reproducibility,
 * uniformity (chi-square) of FBL samples and of OTF-refreshed cache entries,
 * the refresh proportions gamma asks for, PSCR touching only the batch's
 * nodes, freshness with max_staleness. Runs on an in-memory versioned graph
 * exposed as a sampler source (tests/test_sampler_src.h). */
#include "test.h"
#include "test_sampler_src.h"

static uint64_t rng = 12345;

static tsrc *make_graph(uint64_t n, uint64_t hubs) { return tsrc_hub_graph(&rng, n, hubs, 60, 340, 21); }

static gsnap_sampler_options base_opts(gsnap_sample_mode m, unsigned L, const int32_t *f) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = m;
    o.layers = L;
    for (unsigned i = 0; i < L; i++) o.fanouts[i] = f[i];
    o.seed = 99;
    o.period = 7;
    o.gamma = 0.3;
    o.delta = 0.4;
    return o;
}

/* Every structural and graph property of one batch. Returns 0 if valid. */
static int check_batch(tsrc *t, const void *buf, size_t len, const uint64_t *seeds, size_t ns,
                       const int32_t *fan, unsigned L, uint64_t as_of) {
    int bad = 0;
    if (gsnap_block_check(buf, len) != 0) { fprintf(stderr, "block_check failed\n"); return 1; }
    if (gsnap_block_layers(buf, len) != L) return 1;
    gsnap_block top;
    if (gsnap_block_get(buf, len, L - 1, &top)) return 1;
    /* destinations of the last layer = deduplicated seeds, in order */
    size_t k = 0;
    for (size_t i = 0; i < ns; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = seeds[j] == seeds[i];
        if (dup) continue;
        if (k >= top.num_dst || top.src_ids[k] != seeds[i]) return 1;
        k++;
    }
    if (k != top.num_dst) return 1;
    for (unsigned li = 0; li < L; li++) {
        gsnap_block b;
        if (gsnap_block_get(buf, len, li, &b)) return 1;
        for (uint32_t r = 0; r < b.num_dst; r++) {
            uint64_t v = b.src_ids[r];
            size_t deg = tsrc_deg(t, v, as_of);
            size_t want = fan[li] < 0 || deg < (size_t)fan[li] ? deg : (size_t)fan[li];
            size_t got = b.indptr[r + 1] - b.indptr[r];
            if (got != want) {
                if (!bad) fprintf(stderr, "layer %u node %llu: %zu sampled, want %zu\n", li,
                                  (unsigned long long)v, got, want);
                bad = 1;
            }
            for (uint32_t e = b.indptr[r]; e < b.indptr[r + 1]; e++) {
                uint64_t u = b.src_ids[b.indices[e]];
                if (!tsrc_has(t, u, v, as_of)) {
                    if (!bad) fprintf(stderr, "layer %u: edge %llu -> %llu not in graph\n", li,
                                      (unsigned long long)u, (unsigned long long)v);
                    bad = 1;
                }
            }
        }
    }
    return bad;
}

static void test_validity(void) {
    tsrc *t = make_graph(3000, 40);
    int nb = test_small() ? 60 : 1000;
    const int32_t fan[3] = {5, 4, 10};
    for (int m = 0; m < GSNAP_MODE_COUNT; m++) {
        gsnap_sampler_options o = base_opts((gsnap_sample_mode)m, 3, fan);
        o.threshold = m % 2 ? 15 : 0; /* dense/sparse split on every other mode */
        gsnap_samp__src *fk;
        OK(t->base.fork(&t->base, &fk));
        gsnap_sampler *s;
        OK(gsnap_sampler__open_src(fk, 1, &o, &s));
        int bad = 0;
        uint64_t seeds[48];
        for (int b = 0; b < nb && !bad; b++) {
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 48, seeds));
            seeds[5] = seeds[4]; /* a duplicate seed */
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 48, &buf, &len));
            bad = check_batch(t, buf, len, seeds, 48, fan, 3, 1);
            uint64_t bn;
            OK(gsnap_block_info(buf, len, &bn, NULL, NULL));
            CHECK(bn == (uint64_t)b);
        }
        CHECK_MSG(!bad, "mode %s: invalid batch", gsnap_sample_mode_name((gsnap_sample_mode)m));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK(st.batches == (uint64_t)nb);
        uint64_t hits = 0, misses = 0;
        for (int l = 0; l < 3; l++) { hits += st.layer[l].hits; misses += st.layer[l].misses; }
        if (m == GSNAP_MODE_FBL) CHECK(hits == 0 && misses > 0);
        else CHECK_MSG(hits > 0, "mode %s: no hits", gsnap_sample_mode_name((gsnap_sample_mode)m));
        if (m != GSNAP_MODE_FBL && o.threshold) CHECK(misses > 0); /* sparse side */
        if (m != GSNAP_MODE_FBL) CHECK(st.refreshes > 0 && st.generation > 0);
        printf("%-8s %d batches valid, hits %llu misses %llu refreshes %llu gen %llu\n",
               gsnap_sample_mode_name((gsnap_sample_mode)m), nb, (unsigned long long)hits,
               (unsigned long long)misses, (unsigned long long)st.refreshes,
               (unsigned long long)st.generation);
        gsnap_sampler_close(s);
    }
    tsrc_destroy(&t->base);
}

/* fanout -1 (all neighbours) in a cached mode: served from the store. */
static void test_all_fanout(void) {
    tsrc *t = make_graph(1000, 10);
    const int32_t fan[2] = {-1, 5};
    int modes[2] = {GSNAP_MODE_FCR, GSNAP_MODE_PSCR_SC};
    for (int mi = 0; mi < 2; mi++) {
        gsnap_sampler_options o = base_opts((gsnap_sample_mode)modes[mi], 2, fan);
        gsnap_samp__src *fk;
        OK(t->base.fork(&t->base, &fk));
        gsnap_sampler *s;
        OK(gsnap_sampler__open_src(fk, 1, &o, &s));
        int bad = 0;
        uint64_t seeds[16];
        for (int b = 0; b < 50 && !bad; b++) {
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 16, seeds));
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 16, &buf, &len));
            bad = check_batch(t, buf, len, seeds, 16, fan, 2, 1);
        }
        CHECK(!bad);
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK(st.layer[0].hits == 0 && st.layer[0].misses > 0 && st.layer[1].hits > 0);
        gsnap_sampler_close(s);
    }
    tsrc_destroy(&t->base);
}

/* A background refresh (written beside the served image, reusing the
 * previous image the second time) gives exactly the synchronous result. */
static void test_async_equals_sync(void) {
    tsrc *t = make_graph(2000, 30);
    const int32_t fan[2] = {5, 10};
    int modes[3] = {GSNAP_MODE_FSCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_PCF};
    for (int mi = 0; mi < 3; mi++) {
        gsnap_sampler_options o = base_opts((gsnap_sample_mode)modes[mi], 2, fan);
        o.period = 0;
        gsnap_samp__src *fa, *fb;
        OK(t->base.fork(&t->base, &fa));
        OK(t->base.fork(&t->base, &fb));
        gsnap_sampler *a, *b;
        OK(gsnap_sampler__open_src(fa, 1, &o, &a));
        OK(gsnap_sampler__open_src(fb, 1, &o, &b));
        for (int r = 0; r < 3; r++) {
            OK(gsnap_sampler_refresh_async(a));
            OK(gsnap_sampler_refresh_wait(a));
            OK(gsnap_sampler_refresh(b));
            CHECK(gsnap_sampler_cache_checksum(a) == gsnap_sampler_cache_checksum(b));
            uint64_t seeds[64];
            OK(gsnap_sampler_random_seeds(a, (uint64_t)r, 64, seeds));
            const void *ba, *bb;
            size_t la, lb;
            OK(gsnap_sampler_next(a, seeds, 64, &ba, &la));
            OK(gsnap_sampler_next(b, seeds, 64, &bb, &lb));
            CHECK(la == lb && memcmp(ba, bb, la) == 0);
        }
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(a, &st);
        CHECK(st.refreshes == 3 && st.generation == 3);
        gsnap_sampler_close(a);
        gsnap_sampler_close(b);
    }
    tsrc_destroy(&t->base);
}

static void test_reproducible(void) {
    tsrc *t = make_graph(2000, 20);
    const int32_t fan[2] = {5, 5};
    int modes[3] = {GSNAP_MODE_FBL, GSNAP_MODE_FSCR, GSNAP_MODE_PCF_SC};
    for (int mi = 0; mi < 3; mi++) {
        gsnap_sampler_options o = base_opts((gsnap_sample_mode)modes[mi], 2, fan);
        gsnap_sampler *a, *b;
        gsnap_samp__src *fa, *fb;
        OK(t->base.fork(&t->base, &fa));
        OK(t->base.fork(&t->base, &fb));
        OK(gsnap_sampler__open_src(fa, 1, &o, &a));
        OK(gsnap_sampler__open_src(fb, 1, &o, &b));
        int same = 1;
        uint64_t seeds[64];
        for (int i = 0; i < 40; i++) {
            OK(gsnap_sampler_random_seeds(a, (uint64_t)i, 64, seeds));
            const void *ba, *bb;
            size_t la, lb;
            OK(gsnap_sampler_next(a, seeds, 64, &ba, &la));
            OK(gsnap_sampler_next(b, seeds, 64, &bb, &lb));
            if (la != lb || memcmp(ba, bb, la) != 0) same = 0;
        }
        CHECK(same);
        /* a different seed gives different samples */
        o.seed = 100;
        gsnap_sampler *c;
        OK(t->base.fork(&t->base, &fa));
        OK(gsnap_sampler__open_src(fa, 1, &o, &c));
        OK(gsnap_sampler_random_seeds(c, 0, 64, seeds));
        const void *bc, *bb2;
        size_t lc, lb2;
        OK(gsnap_sampler_next(c, seeds, 64, &bc, &lc));
        gsnap_sampler *d;
        o.seed = 99;
        OK(t->base.fork(&t->base, &fb));
        OK(gsnap_sampler__open_src(fb, 1, &o, &d));
        OK(gsnap_sampler_next(d, seeds, 64, &bb2, &lb2));
        CHECK(lc != lb2 || memcmp(bc, bb2, lc) != 0);
        gsnap_sampler_close(a);
        gsnap_sampler_close(b);
        gsnap_sampler_close(c);
        gsnap_sampler_close(d);
    }
    tsrc_destroy(&t->base);
}

/* chi-square with 49 degrees of freedom: P(X > 85.35) = 0.001 */
#define CHI2_49_CRIT 85.35

static void test_fbl_uniform(void) {
    tsrc *t = tsrc_new();
    for (uint64_t u = 0; u < 50; u++) tsrc_add(t, 100 + u, 0, 1);
    tsrc_add(t, 0, 200, 1);
    tsrc_index(t);
    const int32_t fan[1] = {10};
    gsnap_sampler_options o = base_opts(GSNAP_MODE_FBL, 1, fan);
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(fk, 1, &o, &s));
    int nb = test_small() ? 2000 : 20000;
    uint64_t cnt[50] = {0};
    uint64_t seed = 0;
    for (int b = 0; b < nb; b++) {
        const void *buf;
        size_t len;
        gsnap_block bl;
        OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
        OK(gsnap_block_get(buf, len, 0, &bl));
        CHECK(bl.num_edges == 10);
        for (uint64_t e = 0; e < bl.num_edges; e++) cnt[bl.src_ids[bl.indices[e]] - 100]++;
    }
    double exp = nb * 10.0 / 50, chi = 0;
    for (int i = 0; i < 50; i++) chi += (cnt[i] - exp) * (cnt[i] - exp) / exp;
    printf("FBL chi-square (49 df) over %d samples of 10 of 50: %.1f\n", nb, chi);
    CHECK(chi < CHI2_49_CRIT);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

/* 300 independent nodes with the same 50 neighbours: OTF refreshes replace
 * exactly r = gamma * cap ids per entry, with fresh ids never duplicating
 * kept ones, and the entries stay uniform over the neighbours. */
static void test_refresh_uniform(void) {
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < 300; v++)
        for (uint64_t u = 0; u < 50; u++) tsrc_add(t, 1000 + u, v, 1);
    tsrc_index(t);
    const int32_t fan[1] = {10};
    gsnap_sampler_options o = base_opts(GSNAP_MODE_FSCR, 1, fan);
    o.alpha = 2; /* cap 20 */
    o.gamma = 0.3; /* r = 6 */
    gsnap_samp__lazy_off = 1; /* the eager refresh (test_sampler_lazy.c: lazy == eager) */
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(fk, 1, &o, &s));
    int R = test_small() ? 5 : 40;
    uint64_t prev[300][20];
    gsnap_samp__cache *c = &s->im->caches[0];
    CHECK(c->cap == 20);
    int exact = 1, dup = 0;
    uint64_t kept_total = 0, total = 0;
    for (int r = 0; r < R; r++) {
        for (int v = 0; v < 300; v++) memcpy(prev[v], c->ids + (size_t)v * 20, sizeof prev[v]);
        uint64_t gen0 = s->im->gen;
        OK(gsnap_sampler_refresh(s));
        c = &s->im->caches[0];
        CHECK(s->im->gen == gen0 + 1);
        for (int v = 0; v < 300; v++) {
            const uint64_t *e = c->ids + (size_t)v * 20;
            if (c->cnt[v] != 20) exact = 0;
            int kept = 0;
            for (int i = 0; i < 20; i++) {
                for (int j = 0; j < i; j++) dup += e[i] == e[j];
                for (int j = 0; j < 20; j++) kept += e[i] == prev[v][j];
                if (e[i] < 1000 || e[i] >= 1050) dup++;
            }
            if (kept != 14) exact = 0;
            kept_total += (uint64_t)kept;
            total += 20;
        }
    }
    CHECK_MSG(exact, "every refresh keeps 14 of 20 and replaces 6");
    CHECK(dup == 0);
    printf("OTF refresh gamma 0.3: replaced share %.4f over %d refreshes\n",
           1.0 - (double)kept_total / (double)total, R);
    uint64_t cnt[50] = {0};
    for (int v = 0; v < 300; v++)
        for (int i = 0; i < 20; i++) cnt[c->ids[(size_t)v * 20 + i] - 1000]++;
    double exp = 300 * 20 / 50.0, chi = 0;
    for (int i = 0; i < 50; i++) chi += (cnt[i] - exp) * (cnt[i] - exp) / exp;
    printf("refreshed entries chi-square (49 df): %.1f\n", chi);
    CHECK(chi < CHI2_49_CRIT);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.replaced_ids == (uint64_t)R * 300 * 6);
    gsnap_sampler_close(s);
    gsnap_samp__lazy_off = 0;
    tsrc_destroy(&t->base);
}

/* PSCR refreshes exactly the entries of the nodes the batch touches. */
static void test_pscr_touched(void) {
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < 100; v++)
        for (uint64_t u = 0; u < 40; u++) tsrc_add(t, 1000 + u, v, 1);
    tsrc_index(t);
    const int32_t fan[1] = {5};
    gsnap_sampler_options o = base_opts(GSNAP_MODE_PSCR, 1, fan);
    o.period = 3;
    o.gamma = 0.2; /* cap 10, r 2 */
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(fk, 1, &o, &s));
    static uint64_t before[100][10];
    uint64_t seeds[10] = {3, 7, 11, 19, 23, 42, 55, 61, 77, 90};
    for (int b = 0; b < 6; b++) {
        gsnap_samp__cache *c = &s->im->caches[0];
        for (int v = 0; v < 100; v++) memcpy(before[v], c->ids + (size_t)v * 10, sizeof before[v]);
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(s, seeds, 10, &buf, &len));
        int refresh = b == 3;
        for (int v = 0; v < 100; v++) {
            int touched = 0;
            for (int i = 0; i < 10; i++) touched |= seeds[i] == (uint64_t)v;
            int kept = 0;
            for (int i = 0; i < 10; i++)
                for (int j = 0; j < 10; j++) kept += c->ids[(size_t)v * 10 + i] == before[v][j];
            if (refresh && touched) CHECK(kept == 8);
            else CHECK(kept == 10);
        }
    }
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.layer[0].refreshed == 10 && st.refreshes == 1 && st.generation == 1);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

/* Edges arriving after the snapshot version: seen with max_staleness 0 in
 * every mode, never with the frozen modes. */
static void test_freshness(void) {
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < 50; v++)
        for (uint64_t u = 0; u < 40; u++) tsrc_add(t, 100 + u, v, 1);
    for (uint64_t u = 0; u < 60; u++) tsrc_add(t, 5000 + u, 7, 2); /* version 2 */
    tsrc_index(t);
    const int32_t fan[1] = {5};
    for (int m = 0; m < GSNAP_MODE_COUNT; m++)
        for (int fresh = 0; fresh < 2; fresh++) {
            gsnap_sampler_options o = base_opts((gsnap_sample_mode)m, 1, fan);
            o.as_of = 1; /* the snapshot's version */
            o.max_staleness = fresh ? 0 : -1;
            o.period = 1000;
            gsnap_samp__src *fk;
            OK(t->base.fork(&t->base, &fk));
            gsnap_sampler *s;
            OK(gsnap_sampler__open_src(fk, 1, &o, &s));
            int seen_new = 0, bad = 0;
            uint64_t seed = 7;
            for (int b = 0; b < 40; b++) {
                const void *buf;
                size_t len;
                OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
                gsnap_block bl;
                OK(gsnap_block_get(buf, len, 0, &bl));
                for (uint64_t e = 0; e < bl.num_edges; e++)
                    seen_new |= bl.src_ids[bl.indices[e]] >= 5000;
                bad |= check_batch(t, buf, len, &seed, 1, fan, 1, fresh ? 2 : 1);
            }
            gsnap_sampler_stats st;
            gsnap_sampler_stats_get(s, &st);
            CHECK_MSG(!bad, "mode %s fresh %d: invalid", gsnap_sample_mode_name((gsnap_sample_mode)m), fresh);
            CHECK_MSG(seen_new == fresh, "mode %s fresh %d: new edges seen %d",
                      gsnap_sample_mode_name((gsnap_sample_mode)m), fresh, seen_new);
            if (m != GSNAP_MODE_FBL && fresh)
                CHECK(st.stale_marked > 0 && st.layer[0].refreshed > 0);
            if (!fresh) CHECK(st.stale_marked == 0 && st.layer[0].refreshed == 0);
            gsnap_sampler_close(s);
        }
    /* max_staleness 5: the stale entry is served (stale hits), not redrawn */
    gsnap_sampler_options o = base_opts(GSNAP_MODE_FCR, 1, fan);
    o.as_of = 1;
    o.max_staleness = 5;
    gsnap_samp__src *fk;
    OK(t->base.fork(&t->base, &fk));
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(fk, 1, &o, &s));
    uint64_t seed = 7;
    const void *buf;
    size_t len;
    OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.layer[0].stale_hits == 1 && st.layer[0].refreshed == 0 && st.max_staleness_seen == 1);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
}

static void test_bad_options(void) {
    tsrc *t = make_graph(100, 2);
    const int32_t fan[1] = {5};
    gsnap_sampler_options o = base_opts(GSNAP_MODE_FCR, 1, fan);
    gsnap_sampler *s = (gsnap_sampler *)1;
    gsnap_samp__src *fk;
    o.gamma = 1.5;
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL && s == NULL);
    o = base_opts(GSNAP_MODE_FCR, 0, fan);
    OK(t->base.fork(&t->base, &fk));
    CHECK(gsnap_sampler__open_src(fk, 1, &o, &s) == GSNAP_EINVAL);
    gsnap_sample_mode m;
    CHECK(gsnap_sample_mode_parse("PSCR-SC", &m) == 0 && m == GSNAP_MODE_PSCR_SC);
    CHECK(gsnap_sample_mode_parse("nope", &m) == GSNAP_EINVAL);
    CHECK(strcmp(gsnap_sample_mode_name(GSNAP_MODE_FCR_SC), "fcr-sc") == 0);
    char junk[64] = {0};
    CHECK(gsnap_block_check(junk, sizeof junk) != 0);
    tsrc_destroy(&t->base);
}

int main(void) {
    test_bad_options();
    test_validity();
    test_reproducible();
    test_all_fanout();
    test_async_equals_sync();
    test_fbl_uniform();
    test_refresh_uniform();
    test_pscr_touched();
    test_freshness();
    TEST_DONE();
}
