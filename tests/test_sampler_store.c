/* tests/test_sampler_store.c -- the sampler on a real store and snapshot:
 * validity of every mode against the store at the snapshot's (T, V), cache
 * served from and refreshed into the snapshot table, freshness with edges
 * ingested after the snapshot (max_staleness 0 vs frozen). */
#include "test.h"
#include <stdlib.h>
#include <sys/wait.h>

#define N 1500
static uint64_t rng = 777;
/* adjacency of the test graph (in-edges), version 1 only */
static uint8_t *adj; /* N * N bits would be big; N*N bytes = 2.25 MB is fine */

static int has(uint64_t u, uint64_t v) { return u < N && v < N && adj[u * N + v]; }

static void build_db(gsnap_db *db) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < N; v++) {
        uint64_t d = v < 20 ? 80 + test_rand(&rng) % 200 : test_rand(&rng) % 15;
        for (uint64_t i = 0; i < d; i++) {
            uint64_t u = test_rand(&rng) % N;
            adj[u * N + v] = 1;
            OK(gsnap_batch_add(b, u, v, (int64_t)i));
        }
    }
    uint64_t ver;
    OK(gsnap_batch_commit(b, &ver));
    CHECK(ver == 1);
}

static size_t deg_of(uint64_t v) {
    size_t d = 0;
    for (uint64_t u = 0; u < N; u++) d += adj[u * N + v];
    return d;
}

static int check_batch(const void *buf, size_t len, const int32_t *fan, unsigned L) {
    if (gsnap_block_check(buf, len)) return 1;
    for (unsigned li = 0; li < L; li++) {
        gsnap_block b;
        if (gsnap_block_get(buf, len, li, &b)) return 1;
        for (uint32_t r = 0; r < b.num_dst; r++) {
            uint64_t v = b.src_ids[r];
            size_t d = deg_of(v), want = d < (size_t)fan[li] ? d : (size_t)fan[li];
            if (b.indptr[r + 1] - b.indptr[r] != want) return 1;
            for (uint32_t e = b.indptr[r]; e < b.indptr[r + 1]; e++)
                if (!has(b.src_ids[b.indices[e]], v)) return 1;
        }
    }
    return 0;
}

int main(void) {
    adj = calloc((size_t)N * N, 1);
    char *dir = test_tmpdir("samp-store");
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopts, &db));
    build_db(db);
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hops = 2;
    so.fanouts[0] = 10;
    so.fanouts[1] = 5;
    so.alpha = 2;
    OK(gsnap_snapshot_create(db, "s1", &so, NULL));
    const int32_t fan[2] = {5, 10}; /* DGL order: hop 1 (next to the seeds) = 10 */
    int nb = test_small() ? 20 : 150;
    for (int m = 0; m < GSNAP_MODE_COUNT; m++) {
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.mode = (gsnap_sample_mode)m;
        o.layers = 2;
        o.fanouts[0] = fan[0];
        o.fanouts[1] = fan[1];
        o.seed = 5;
        o.period = 10;
        o.threshold = m % 2 ? 12 : 0;
        gsnap_sampler *s;
        OK(gsnap_sampler_open(db, m == 0 ? NULL : "s1", &o, &s));
        int bad = 0;
        uint64_t seeds[64];
        for (int b = 0; b < nb && !bad; b++) {
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 64, seeds));
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 64, &buf, &len));
            bad = check_batch(buf, len, fan, 2);
        }
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK_MSG(!bad, "mode %s: invalid batch", gsnap_sample_mode_name((gsnap_sample_mode)m));
        if (m) CHECK(st.refreshes > 0 && st.layer[1].hits > 0);
        printf("%-8s %d batches valid on the store, generation %llu\n",
               gsnap_sample_mode_name((gsnap_sample_mode)m), nb,
               (unsigned long long)st.generation);
        gsnap_sampler_close(s);
    }
    /* the table holds the generation the last refresh committed */
    gsnap_snapshot_info info;
    OK(gsnap_snapshot_info_get(db, "s1", &info));
    CHECK(info.generation > 0);
    /* direction out (no snapshot): an edge of destination v to u is v -> u */
    for (int m = 0; m < 2; m++) {
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.mode = m ? GSNAP_MODE_FSCR : GSNAP_MODE_FBL;
        o.layers = 2;
        o.fanouts[0] = 4;
        o.fanouts[1] = 6;
        o.dir = GSNAP_DIR_OUT;
        o.period = 7;
        gsnap_sampler *s;
        OK(gsnap_sampler_open(db, NULL, &o, &s));
        int bad = 0;
        uint64_t seeds[32];
        for (int b = 0; b < 40 && !bad; b++) {
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 32, seeds));
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 32, &buf, &len));
            bad |= gsnap_block_check(buf, len) != 0;
            for (unsigned li = 0; li < 2 && !bad; li++) {
                gsnap_block bl;
                OK(gsnap_block_get(buf, len, li, &bl));
                for (uint32_t r = 0; r < bl.num_dst; r++) {
                    uint64_t v = bl.src_ids[r];
                    size_t d = 0;
                    for (uint64_t u = 0; u < N; u++) d += adj[v * N + u];
                    size_t want = d < (size_t)o.fanouts[li] ? d : (size_t)o.fanouts[li];
                    if (bl.indptr[r + 1] - bl.indptr[r] != want) bad = 1;
                    for (uint32_t e = bl.indptr[r]; e < bl.indptr[r + 1]; e++)
                        if (!has(v, bl.src_ids[bl.indices[e]])) bad = 1;
                }
            }
        }
        CHECK_MSG(!bad, "direction out, mode %d: invalid batch", m);
        gsnap_sampler_close(s);
    }
    /* gsnap_snapshot_refresh_caches: one refresh, the next generation */
    {
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.mode = GSNAP_MODE_FSCR_SC;
        o.layers = 2;
        o.fanouts[0] = 5;
        o.fanouts[1] = 10;
        gsnap_snapshot_info before;
        OK(gsnap_snapshot_info_get(db, "s1", &before));
        uint64_t g = 0;
        OK(gsnap_snapshot_refresh_caches(db, "s1", &o, &g));
        OK(gsnap_snapshot_info_get(db, "s1", &info));
        CHECK(g == info.generation && g > before.generation);
        CHECK(gsnap_snapshot_refresh_caches(db, "nosuch", &o, &g) == GSNAP_NOTFOUND);
    }
    /* two samplers on one snapshot: the second loads what the first wrote */
    {
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.mode = GSNAP_MODE_FSCR;
        o.layers = 2;
        o.fanouts[0] = 5;
        o.fanouts[1] = 10;
        gsnap_sampler *a, *b;
        OK(gsnap_sampler_open(db, "s1", &o, &a));
        OK(gsnap_sampler_refresh(a));
        OK(gsnap_sampler_open(db, "s1", &o, &b));
        gsnap_sampler_stats sa, sb;
        gsnap_sampler_stats_get(a, &sa);
        gsnap_sampler_stats_get(b, &sb);
        CHECK(sa.generation == sb.generation);
        CHECK(gsnap_sampler_cache_checksum(a) == gsnap_sampler_cache_checksum(b));
        /* b adopts a's next refresh at its next batch */
        OK(gsnap_sampler_refresh(a));
        uint64_t seed = 3;
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(b, &seed, 1, &buf, &len));
        uint64_t g;
        OK(gsnap_block_info(buf, len, NULL, &g, NULL));
        gsnap_sampler_stats_get(a, &sa);
        CHECK(g == sa.generation);
        CHECK(gsnap_sampler_cache_checksum(a) == gsnap_sampler_cache_checksum(b));
        gsnap_sampler_close(a);
        gsnap_sampler_close(b);
    }
    /* freshness: 40 new in-edges of node 3 at version 2 */
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (uint64_t u = 0; u < 40; u++) OK(gsnap_batch_add(bt, 100000 + u, 3, 5));
    OK(gsnap_batch_commit(bt, NULL));
    for (int m = 0; m < GSNAP_MODE_COUNT; m++)
        for (int fresh = 0; fresh < 2; fresh++) {
            gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
            o.mode = (gsnap_sample_mode)m;
            o.layers = 1;
            o.fanouts[0] = 10;
            o.max_staleness = fresh ? 0 : -1;
            o.as_of = 1; /* FBL without snapshot: the same (T, V) */
            gsnap_sampler *s;
            OK(gsnap_sampler_open(db, m == 0 ? NULL : "s1", &o, &s));
            uint64_t seed = 3;
            int seen = 0;
            for (int b = 0; b < 30; b++) {
                const void *buf;
                size_t len;
                gsnap_block bl;
                OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
                OK(gsnap_block_get(buf, len, 0, &bl));
                for (uint64_t e = 0; e < bl.num_edges; e++) seen |= bl.src_ids[bl.indices[e]] >= 100000;
            }
            gsnap_sampler_stats st;
            gsnap_sampler_stats_get(s, &st);
            CHECK_MSG(seen == fresh, "mode %s fresh %d: new edges seen %d",
                      gsnap_sample_mode_name((gsnap_sample_mode)m), fresh, seen);
            if (m && fresh) CHECK(st.stale_marked > 0 && st.layer[0].refreshed > 0);
            gsnap_sampler_close(s);
        }
    /* the CLI: sample and refresh (when the binary is built) */
    {
        const char *bd = getenv("BUILD");
        char bin[512], cmd[2048];
        snprintf(bin, sizeof bin, "%s/graphsnap", bd && *bd ? bd : "build");
        if (access(bin, X_OK) == 0) {
            snprintf(cmd, sizeof cmd, "%s sample -d %s --snapshot s1 --fanouts 5,10 --mode fscr "
                     "--random 64 --batches 20 --period 5 --stage --json > %s/out.json", bin, dir, dir);
            CHECK(system(cmd) == 0);
            snprintf(cmd, sizeof cmd, "grep -q '\"edges_per_second\"' %s/out.json", dir);
            CHECK(system(cmd) == 0);
            snprintf(cmd, sizeof cmd, "%s refresh -d %s --snapshot s1 --fanouts 5,10 > /dev/null", bin, dir);
            CHECK(system(cmd) == 0);
            snprintf(cmd, sizeof cmd, "%s sample -d %s --fanouts 5,10 --mode nope --random 4 2>/dev/null", bin, dir);
            CHECK(WEXITSTATUS(system(cmd)) == 2);
        } else {
            printf("CLI not built (%s): CLI checks skipped\n", bin);
        }
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    free(adj);
    TEST_DONE();
}
