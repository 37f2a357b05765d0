/* tests/test_sampler_hot.c -- the sampler's hot path (issue 17): the serving
 * view stays in step with the cache image (every sampled edge of a cached
 * node is in the node's current entry, through refreshes, PSCR entry
 * rewrites and generation swaps); a refresh prepared aside and swapped in at
 * its due batch gives the same blocks as the refresh run at that batch;
 * batch i is the same across runs and worker counts (options.workers). On
 * an in-memory versioned graph (tests/test_sampler_src.h). */
#include "test.h"
#include "test_sampler_src.h"

static uint64_t rng = 777;

static tsrc *make_graph(uint64_t n, uint64_t hubs) { return tsrc_hub_graph(&rng, n, hubs, 60, 200, 30); }

static gsnap_sampler_options opts(gsnap_sample_mode m, uint32_t period) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = m;
    o.layers = 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 6;
    o.seed = 5;
    o.period = period;
    o.gamma = 0.3;
    return o;
}

/* Every sampled neighbour of a cached destination is in its entry now. */
static int served_from_entries(gsnap_sampler *s, const void *buf, size_t len) {
    int shared = gsnap_samp__is_shared(s->o.mode);
    for (unsigned li = 0; li < s->L; li++) {
        gsnap_block b;
        if (gsnap_block_get(buf, len, li, &b)) return 0;
        unsigned h = s->L - li;
        const gsnap_samp__cache *c = &s->im->caches[shared ? 0 : h - 1];
        for (uint32_t r = 0; r < b.num_dst; r++) {
            uint64_t v = b.src_ids[r];
            uint64_t ent[64];
            long cnt = v < s->im->nnodes && c->cap <= 64
                           ? gsnap_samp__entry_now(s->im, (unsigned)(c - s->im->caches), v, ent)
                           : (long)GSNAP_SAMP_UNCACHED;
            if (cnt < 0) return 0;
            if (cnt == (long)GSNAP_SAMP_UNCACHED) continue;
            for (uint32_t e = b.indptr[r]; e < b.indptr[r + 1]; e++) {
                uint64_t u = b.src_ids[b.indices[e]];
                int in = 0;
                for (long j = 0; j < cnt && !in; j++) in = ent[j] == u;
                if (!in) {
                    fprintf(stderr, "%s layer %u: %llu -> %llu not in the entry\n",
                            gsnap_sample_mode_name(s->o.mode), li, (unsigned long long)u,
                            (unsigned long long)v);
                    return 0;
                }
            }
        }
    }
    return 1;
}

static void test_view_in_step(void) {
    tsrc *t = make_graph(1500, 30);
    int nb = test_small() ? 12 : 40;
    for (int m = GSNAP_MODE_FCR; m < GSNAP_MODE_COUNT; m++) {
        if (m == GSNAP_MODE_PCF || m == GSNAP_MODE_PCF_SC) continue; /* fresh share from the store */
        gsnap_sampler_options o = opts((gsnap_sample_mode)m, 3);
        gsnap_sampler *s;
        gsnap_samp__src *fk;
        OK(t->base.fork(&t->base, &fk));
        OK(gsnap_sampler__open_src(fk, 1, &o, &s));
        int ok = 1;
        uint64_t seeds[96];
        for (int b = 0; b < nb && ok; b++) {
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 96, seeds));
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 96, &buf, &len));
            CHECK(gsnap_block_check(buf, len) == 0);
            ok = served_from_entries(s, buf, len);
            if (b == nb / 2) OK(gsnap_sampler_refresh(s)); /* a refresh by hand, mid-run */
        }
        CHECK_MSG(ok, "mode %s", gsnap_sample_mode_name((gsnap_sample_mode)m));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK(st.refreshes > 0);
        gsnap_sampler_close(s);
    }
    tsrc_destroy(&t->base);
}

/* Scheduled refreshes prepared in the background (period T) equal refreshes
 * run by hand before batches T, 2T, ... of a sampler without a period. */
static void test_pipelined_equals_sync(void) {
    tsrc *t = make_graph(2000, 40);
    int modes[] = {GSNAP_MODE_FCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_FSCR, GSNAP_MODE_FSCR_SC,
                   GSNAP_MODE_PCF};
    int nb = test_small() ? 11 : 26;
    for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
        gsnap_sampler_options oa = opts((gsnap_sample_mode)modes[mi], 5);
        gsnap_sampler_options ob = opts((gsnap_sample_mode)modes[mi], 0);
        gsnap_sampler *a, *b;
        gsnap_samp__src *fa, *fb;
        OK(t->base.fork(&t->base, &fa));
        OK(t->base.fork(&t->base, &fb));
        OK(gsnap_sampler__open_src(fa, 1, &oa, &a));
        OK(gsnap_sampler__open_src(fb, 1, &ob, &b));
        int same = 1;
        uint64_t seeds[128];
        for (int i = 0; i < nb; i++) {
            if (i > 0 && i % 5 == 0) OK(gsnap_sampler_refresh(b));
            OK(gsnap_sampler_random_seeds(a, (uint64_t)i, 128, seeds));
            const void *ba, *bb;
            size_t la, lb;
            OK(gsnap_sampler_next(a, seeds, 128, &ba, &la));
            OK(gsnap_sampler_next(b, seeds, 128, &bb, &lb));
            if (la != lb || memcmp(ba, bb, la) != 0) {
                if (same) fprintf(stderr, "%s: batch %d differs\n",
                                  gsnap_sample_mode_name((gsnap_sample_mode)modes[mi]), i);
                same = 0;
            }
        }
        CHECK(same);
        gsnap_sampler_stats sa, sb;
        gsnap_sampler_stats_get(a, &sa);
        gsnap_sampler_stats_get(b, &sb);
        CHECK(sa.refreshes == sb.refreshes && sa.generation == sb.generation);
        CHECK(sa.refreshes == (uint64_t)((nb - 1) / 5));
        gsnap_sampler_close(a);
        gsnap_sampler_close(b);
    }
    tsrc_destroy(&t->base);
}

/* Batches from random seeds (seeds NULL): the same bytes across runs, worker
 * counts 1..4, and the explicit-seeds path; a refresh by hand mid-run (which
 * drops batches produced ahead) and a change of batch size included. */
static void test_workers_same(void) {
    tsrc *t = make_graph(2500, 40);
    int nb = test_small() ? 9 : 23;
    for (int m = 0; m < GSNAP_MODE_COUNT; m++) {
        void *ref[32] = {0};
        size_t rlen[32] = {0};
        uint64_t redges = 0;
        for (unsigned w = 0; w <= 4; w++) { /* w = 0: explicit seeds, one thread */
            gsnap_sampler_options o = opts((gsnap_sample_mode)m, 5);
            o.workers = w ? w : 1;
            gsnap_sampler *s;
            gsnap_samp__src *fk;
            OK(t->base.fork(&t->base, &fk));
            OK(gsnap_sampler__open_src(fk, 1, &o, &s));
            int same = 1;
            uint64_t seeds[160];
            for (int i = 0; i < nb; i++) {
                size_t ns = i < 15 ? 128 : 160;
                const void *buf;
                size_t len;
                if (i == 11) OK(gsnap_sampler_refresh(s));
                if (w == 0) {
                    OK(gsnap_sampler_random_seeds(s, (uint64_t)i, ns, seeds));
                    OK(gsnap_sampler_next(s, seeds, ns, &buf, &len));
                } else {
                    OK(gsnap_sampler_next(s, NULL, ns, &buf, &len));
                }
                CHECK(gsnap_block_check(buf, len) == 0);
                uint64_t bno = 0;
                OK(gsnap_block_info(buf, len, &bno, NULL, NULL));
                CHECK(bno == (uint64_t)i);
                if (w == 0) {
                    ref[i] = malloc(len);
                    memcpy(ref[i], buf, len);
                    rlen[i] = len;
                } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
                    if (same) fprintf(stderr, "%s, %u workers: batch %d differs\n",
                                      gsnap_sample_mode_name((gsnap_sample_mode)m), w, i);
                    same = 0;
                }
            }
            CHECK(same);
            gsnap_sampler_stats st;
            gsnap_sampler_stats_get(s, &st);
            CHECK(st.batches == (uint64_t)nb);
            if (w == 0) redges = st.edges;
            else CHECK(st.edges == redges);
            gsnap_sampler_close(s);
        }
        for (int i = 0; i < nb; i++) free(ref[i]);
    }
    tsrc_destroy(&t->base);
}

/* The same on a real store, every mode without a snapshot: shadows read
 * LMDB through their own read views (FBL, PCF, sparse nodes), two versions. */
static void test_workers_store(void) {
    char *dir = test_tmpdir("hotw");
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopts, &db));
    uint64_t r = 31;
    for (int v = 0; v < 2; v++) {
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (int i = 0; i < 6000; i++) {
            uint64_t x = test_rand(&r) % 1200, y = test_rand(&r) % 1200;
            if (test_rand(&r) % 8 == 0) y = test_rand(&r) % 10; /* hubs */
            OK(gsnap_batch_add(b, x, y, i));
        }
        OK(gsnap_batch_commit(b, NULL));
    }
    int nb = test_small() ? 6 : 14;
    for (int m = 0; m < GSNAP_MODE_COUNT; m++) {
        void *ref[16] = {0};
        size_t rlen[16] = {0};
        for (unsigned w = 1; w <= 3; w += 2) {
            gsnap_sampler_options o = opts((gsnap_sample_mode)m, 4);
            o.threshold = m % 2 ? 5 : 0; /* dense/sparse split on every other mode */
            o.workers = w;
            gsnap_sampler *s;
            OK(gsnap_sampler_open(db, NULL, &o, &s));
            int same = 1;
            for (int i = 0; i < nb; i++) {
                const void *buf;
                size_t len;
                OK(gsnap_sampler_next(s, NULL, 64, &buf, &len));
                CHECK(gsnap_block_check(buf, len) == 0);
                if (w == 1) {
                    ref[i] = malloc(len);
                    memcpy(ref[i], buf, len);
                    rlen[i] = len;
                } else if (len != rlen[i] || memcmp(buf, ref[i], len) != 0) {
                    same = 0;
                }
            }
            CHECK_MSG(same, "mode %s", gsnap_sample_mode_name((gsnap_sample_mode)m));
            gsnap_sampler_close(s);
        }
        for (int i = 0; i < nb; i++) free(ref[i]);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    test_view_in_step();
    test_pipelined_equals_sync();
    test_workers_same();
    test_workers_store();
    TEST_DONE();
}
