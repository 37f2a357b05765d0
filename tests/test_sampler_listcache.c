/* tests/test_sampler_listcache.c -- the store source keeps decoded lists
 * across batches (sampler/listcache.c) only while the read views answer from
 * the same runs (gsnap_store__answer_key).
 *
 * An FBL sampler with fanout -1 (every neighbour) on hubs whose lists are
 * long enough to be kept; the set each batch gives a seed is compared with
 * an adjacency kept by the test. Between batches: edges added to the hubs
 * in a new commit, a delete, a compaction. A fresh sampler (max_staleness 0)
 * must see each change at its next batch (a list kept from before would
 * miss it); a frozen one must keep the version it opened at. Then the cache
 * on its own: a budget that admits nothing, keys, a table that grows. */
#include "test.h"
#include "sampler/sampler_int.h"
#include "store/store.h"
#include <stdlib.h>
#include <string.h>

#define N 400
#define HUBS 6
static uint8_t adj[N][N]; /* adj[v][u]: u -> v live (distinct neighbours) */
static uint64_t rng = 4242;

static void add_edges(gsnap_db *db, int per_hub, int64_t t) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < HUBS; v++)
        for (int i = 0; i < per_hub; i++) {
            uint64_t u = HUBS + test_rand(&rng) % (N - HUBS);
            adj[v][u] = 1;
            OK(gsnap_batch_add(b, u, v, t + i));
        }
    OK(gsnap_batch_commit(b, NULL));
}

/* Every neighbour of each hub (fanout -1) in one batch; 1 when a seed's
 * sources differ from `want` (adjacency rows), else 0. */
static int batch_differs(gsnap_sampler *s, uint8_t want[][N]) {
    uint64_t seeds[HUBS];
    for (uint64_t v = 0; v < HUBS; v++) seeds[v] = v;
    const void *buf;
    size_t len;
    OK(gsnap_sampler_next(s, seeds, HUBS, &buf, &len));
    gsnap_block blk;
    if (gsnap_block_check(buf, len) || gsnap_block_get(buf, len, 0, &blk)) return 1;
    for (uint32_t r = 0; r < blk.num_dst; r++) {
        uint64_t v = blk.src_ids[r];
        size_t d = 0;
        for (uint64_t u = 0; u < N; u++) d += want[v][u];
        if (blk.indptr[r + 1] - blk.indptr[r] != d) return 1;
        for (uint32_t e = blk.indptr[r]; e < blk.indptr[r + 1]; e++)
            if (!want[v][blk.src_ids[blk.indices[e]]]) return 1;
    }
    return 0;
}

/* A new database (no fsync) in a fresh directory, returned in *dir. */
static gsnap_db *open_db(const char *tag, char **dir) {
    *dir = test_tmpdir(tag);
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(*dir, &dopts, &db));
    return db;
}

static gsnap_sampler *open_fbl(gsnap_db *db, int64_t max_staleness) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FBL;
    o.layers = 1;
    o.fanouts[0] = -1;
    o.seed = 3;
    o.max_staleness = max_staleness;
    gsnap_sampler *s;
    OK(gsnap_sampler_open(db, NULL, &o, &s));
    return s;
}

static void through_the_sampler(void) {
    char *dir;
    gsnap_db *db = open_db("samp-lcache", &dir);
    /* three runs, each hub > GSNAP_SAMP_LC_MIN_IDS distinct neighbours, and
     * the same edges again in another version (duplicates across runs) */
    add_edges(db, 60, 0);
    add_edges(db, 40, 100);
    static uint8_t frozen[N][N];
    memcpy(frozen, adj, sizeof adj);
    gsnap_sampler *fresh = open_fbl(db, 0), *froz = open_fbl(db, -1);
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler, first batch");
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler, the same runs again");
    CHECK_MSG(!batch_differs(froz, frozen), "frozen sampler, first batch");

    add_edges(db, 30, 200); /* a new run: new neighbours of every hub */
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler after a commit: the new neighbours");
    CHECK_MSG(!batch_differs(froz, frozen), "frozen sampler after a commit: its version only");

    /* a delete: hub 0 loses every instance of one neighbour */
    uint64_t gone = 0;
    for (uint64_t u = HUBS; u < N && !gone; u++)
        if (adj[0][u]) gone = u;
    gsnap_nbr nb[512];
    size_t cnt;
    OK(gsnap_neighbors(db, NULL, 0, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, nb, 512, &cnt));
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (size_t i = 0; i < cnt; i++)
        if (nb[i].node == gone) OK(gsnap_batch_delete(b, gone, 0, nb[i].t));
    OK(gsnap_batch_commit(b, NULL));
    adj[0][gone] = 0;
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler after a delete");
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler after a delete, again");

    OK(gsnap_db_compact(db)); /* the runs merged: new run ids, the same answers */
    CHECK_MSG(!batch_differs(fresh, adj), "fresh sampler after a compaction");
    CHECK_MSG(!batch_differs(froz, frozen), "frozen sampler after a compaction");

    /* the key: with a delete in the runs read it covers the version and
     * the time bound too; the same for two views of the same runs, another
     * after a commit */
    gsnap_read *r1, *r2;
    uint64_t k1, k2;
    OK(gsnap_read_begin(db, &r1));
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k1));
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, 150, GSNAP_VERSION_LATEST, &k2));
    CHECK_MSG(k1 != 0 && k2 != 0 && k1 != k2, "deletes in range: the time bound is part of the key");
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, GSNAP_TIME_MAX, 2, &k2));
    CHECK_MSG(k2 != 0 && k1 != k2, "deletes in range: the version is part of the key");
    gsnap_read_end(r1);
    gsnap_sampler_close(fresh);
    gsnap_sampler_close(froz);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);

    db = open_db("samp-lcache-key", &dir);
    add_edges(db, 10, 0);
    OK(gsnap_read_begin(db, &r1));
    OK(gsnap_read_begin(db, &r2));
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k1));
    OK(gsnap_store__answer_key(r2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k2));
    CHECK(k1 != 0 && k1 == k2);
    OK(gsnap_store__answer_key(r2, GSNAP_DIR_IN, 5, GSNAP_VERSION_LATEST, &k2));
    CHECK_MSG(k2 != 0 && k2 != k1, "a time bound before the newest event: another key");
    OK(gsnap_store__answer_key(r2, GSNAP_DIR_OUT, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k2));
    CHECK(k2 != 0 && k2 != k1);
    gsnap_read_end(r2);
    add_edges(db, 10, 100);
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    OK(gsnap_read_begin(db, &r2));
    OK(gsnap_store__answer_key(r2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k2));
    CHECK_MSG(k2 != 0 && k2 != k1, "a commit changes the key");
    OK(gsnap_store__answer_key(r2, GSNAP_DIR_IN, GSNAP_TIME_MAX, 1, &k2));
    if (st.runs > 1) /* the new run is not read as of version 1: version 1's key */
        CHECK_MSG(k2 == k1, "as of version 1 beside a newer run");
    else /* merged into one run holding version 2: read filtered as of 1 */
        CHECK_MSG(k2 != 0 && k2 != k1, "as of version 1 in a run merged with version 2");
    gsnap_read_end(r1);
    gsnap_read_end(r2);
    /* history folded before version 3: reading as of 2 is an error
     * (ERANGE), so no answer may be kept under a key for it */
    add_edges(db, 10, 200);
    gsnap_db_close(db);
    gsnap_compact_options co = {GSNAP_COMPACT_OPTIONS_VERSION, 3, 0, 0, 1, NULL, NULL};
    OK(gsnap_db_compact_history(dir, &co, NULL));
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &dopts, &db));
    OK(gsnap_read_begin(db, &r1));
    const uint64_t *ids;
    size_t n;
    CHECK(gsnap_store__distinct_nbrs(db, r1, 0, GSNAP_DIR_IN, GSNAP_TIME_MAX, 2, &ids, &n) == GSNAP_ERANGE);
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, GSNAP_TIME_MAX, 2, &k1));
    CHECK_MSG(k1 == 0, "a read before the retention horizon has no answer key");
    OK(gsnap_store__answer_key(r1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &k2));
    CHECK(k2 != 0);
    gsnap_read_end(r1);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* FBL, fanouts [5,10] (DGL order), the given seed. */
static gsnap_sampler_options fbl_5_10(uint64_t seed) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FBL;
    o.layers = 2;
    o.fanouts[0] = 5;
    o.fanouts[1] = 10;
    o.seed = seed;
    return o;
}

/* `nb` batches of 64 seeds (drawn by s[0]) through samplers s[0..k): how
 * many of s[1..k)'s batches differ from s[0]'s, byte for byte. */
static int batches_differ(gsnap_sampler **s, int k, uint64_t nb) {
    int differ = 0;
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t seeds[64];
        OK(gsnap_sampler_random_seeds(s[0], b, 64, seeds));
        const void *buf[3];
        size_t len[3];
        for (int i = 0; i < k; i++) OK(gsnap_sampler_next(s[i], seeds, 64, &buf[i], &len[i]));
        for (int i = 1; i < k; i++) differ += len[i] != len[0] || memcmp(buf[i], buf[0], len[0]);
    }
    return differ;
}

/* The same batches with and without kept lists (options.list_cache_bytes
 * < 0: none), byte for byte, fanouts [5,10] on a store of several runs
 * with duplicate edges across them; a version-4 options struct (no
 * list_cache_bytes) opens with the default. */
static void same_batches(void) {
    char *dir;
    gsnap_db *db = open_db("samp-lcache-same", &dir);
    for (int c = 0; c < 6; c++) {
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (int i = 0; i < 3000; i++) {
            uint64_t v = test_rand(&rng) % 50 < 10 ? test_rand(&rng) % HUBS : test_rand(&rng) % N;
            OK(gsnap_batch_add(b, test_rand(&rng) % N, v, (int64_t)(c * 10000 + i)));
        }
        OK(gsnap_batch_commit(b, NULL));
    }
    gsnap_sampler *s[3];
    gsnap_sampler_options fbl = fbl_5_10(11);
    for (int k = 0; k < 3; k++) {
        gsnap_sampler_options o = fbl;
        o.list_cache_bytes = k == 0 ? -1 : 0;
        if (k == 2) o.version = 4;
        OK(gsnap_sampler_open(db, NULL, &o, &s[k]));
    }
    int differ = batches_differ(s, 3, 30);
    CHECK_MSG(differ == 0, "%d batches differ with kept lists", differ);
    gsnap_sampler_stats st0, st1;
    gsnap_sampler_stats_get(s[0], &st0);
    gsnap_sampler_stats_get(s[1], &st1);
    CHECK_MSG(st0.list_hits == 0 && st0.list_misses == 0 && st0.lists_kept == 0 && st0.list_bytes == 0,
              "no kept lists: counts %llu %llu %llu %llu", (unsigned long long)st0.list_hits,
              (unsigned long long)st0.list_misses, (unsigned long long)st0.lists_kept,
              (unsigned long long)st0.list_bytes);
    CHECK(st1.list_hits > 0 && st1.list_misses >= st1.lists_kept && st1.lists_kept > 0);
    CHECK(st1.list_bytes >= st1.lists_kept * sizeof(uint64_t));
    for (int k = 0; k < 3; k++) gsnap_sampler_close(s[k]);
    /* read through the filter: a delete committed, samplers pinned at an
     * older version and at a time bound; the lists are kept all the same
     * (under a key that covers version and time) and change nothing */
    gsnap_nbr nb[4096];
    size_t cnt;
    OK(gsnap_neighbors(db, NULL, 1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, nb, 4096, &cnt));
    gsnap_batch *del;
    OK(gsnap_batch_begin(db, &del));
    for (size_t i = 0; i < cnt && i < 20; i++) OK(gsnap_batch_delete(del, nb[i].node, 1, nb[i].t));
    OK(gsnap_batch_commit(del, NULL));
    for (int pin = 0; pin < 3; pin++) {
        gsnap_sampler *p[2];
        for (int k = 0; k < 2; k++) {
            gsnap_sampler_options o = fbl;
            o.list_cache_bytes = k == 0 ? -1 : 0;
            if (pin == 1) o.as_of = 4;
            if (pin == 2) o.at_t = 25000;
            OK(gsnap_sampler_open(db, NULL, &o, &p[k]));
        }
        int diff = batches_differ(p, 2, 20);
        gsnap_sampler_stats sp;
        gsnap_sampler_stats_get(p[1], &sp);
        CHECK_MSG(diff == 0 && sp.list_hits > 0, "filtered reads (%d): %d batches differ, %llu hits", pin, diff,
                  (unsigned long long)sp.list_hits);
        for (int k = 0; k < 2; k++) gsnap_sampler_close(p[k]);
    }
    /* two workers: each keeps its own lists; the counts add up */
    gsnap_sampler_options o = fbl;
    o.workers = 2;
    gsnap_sampler *w;
    OK(gsnap_sampler_open(db, NULL, &o, &w));
    for (int b = 0; b < 20; b++) {
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(w, NULL, 64, &buf, &len));
    }
    gsnap_sampler_stats sw;
    gsnap_sampler_stats_get(w, &sw);
    CHECK_MSG(sw.list_hits > 0 && sw.lists_kept > 0 && sw.list_bytes >= sw.lists_kept * sizeof(uint64_t),
              "workers: %llu hits, %llu lists, %llu bytes", (unsigned long long)sw.list_hits,
              (unsigned long long)sw.lists_kept, (unsigned long long)sw.list_bytes);
    gsnap_sampler_close(w);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* The two gauges (lists_kept, list_bytes) with workers whose batches made
 * ahead are dropped (explicit seeds) while the lists are dropped (a commit
 * and a compaction change the runs): they were carried as differences in
 * the batches, so a dropped batch's lost its part and the totals drifted,
 * then wrapped below zero. They must stay those of the lists held. */
static void gauges_with_workers(void) {
    char *dir;
    gsnap_db *db = open_db("samp-lcache-gauge", &dir);
    add_edges(db, 50, 0);
    gsnap_sampler_options o = fbl_5_10(2);
    o.workers = 4;
    gsnap_sampler *s;
    OK(gsnap_sampler_open(db, NULL, &o, &s));
    int bad = 0;
    for (int r = 0; r < 6 && !bad; r++) {
        const void *buf;
        size_t len;
        for (int b = 0; b < 6; b++) OK(gsnap_sampler_next(s, NULL, 32, &buf, &len));
        uint64_t seeds[4] = {0, 1, 2, 3};
        OK(gsnap_sampler_next(s, seeds, 4, &buf, &len)); /* the batches ahead are dropped */
        add_edges(db, 5, 1000 + 100 * r);
        OK(gsnap_db_compact(db));
        for (int b = 0; b < 3; b++) OK(gsnap_sampler_next(s, NULL, 32, &buf, &len));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        /* at most every node's list in each of the 5 sources */
        bad = st.lists_kept > 5 * (uint64_t)N || st.list_bytes < st.lists_kept * sizeof(uint64_t) ||
              st.list_bytes > 5 * (uint64_t)GSNAP_SAMP_LC_BYTES;
        CHECK_MSG(!bad, "round %d: %llu lists kept, %llu bytes", r, (unsigned long long)st.lists_kept,
                  (unsigned long long)st.list_bytes);
    }
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

static void the_cache_alone(void) {
    gsnap_samp__lcache c;
    uint64_t ids[600];
    size_t n;
    for (size_t i = 0; i < 600; i++) ids[i] = i * 3;
    /* a budget below one chunk keeps nothing */
    gsnap_samp__lc_init(&c, 1024, 4);
    gsnap_samp__lc_rekey(&c, 77);
    CHECK(gsnap_samp__lc_put(&c, 1, ids, 100) == NULL);
    CHECK(gsnap_samp__lc_get(&c, 1, &n) == NULL);
    gsnap_samp__lc_free(&c);

    gsnap_samp__lc_init(&c, (size_t)64 << 20, 4);
    CHECK_MSG(gsnap_samp__lc_put(&c, 1, ids, 100) == NULL, "no key: nothing kept");
    gsnap_samp__lc_rekey(&c, 77);
    CHECK_MSG(gsnap_samp__lc_put(&c, 1, ids, 3) == NULL, "shorter than min_ids: not kept");
    /* enough nodes to grow the table several times */
    for (uint64_t v = 0; v < 5000; v++) {
        size_t len = 4 + v % 50;
        const uint64_t *p = gsnap_samp__lc_put(&c, v * 1000003, ids + v % 7, len);
        CHECK(p != NULL && p != ids + v % 7);
    }
    int bad = 0;
    for (uint64_t v = 0; v < 5000; v++) {
        const uint64_t *p = gsnap_samp__lc_get(&c, v * 1000003, &n);
        bad += !p || n != 4 + v % 50 || memcmp(p, ids + v % 7, n * sizeof *p);
    }
    CHECK_MSG(bad == 0, "%d lists wrong after the table grew", bad);
    CHECK(gsnap_samp__lc_get(&c, 17, &n) == NULL);
    /* the prefetch hint (FBL's rows) changes nothing: kept and absent
     * nodes, both stages; every list and the counts read as before */
    uint64_t h0 = c.hits, m0 = c.misses;
    size_t used0 = c.used;
    for (uint64_t v = 0; v < 5010; v++)
        for (int stage = 0; stage < 2; stage++) gsnap_samp__lc_prefetch(&c, v * 1000003 + (v >= 5000), stage);
    bad = 0;
    for (uint64_t v = 0; v < 5000; v++) {
        const uint64_t *q = gsnap_samp__lc_get(&c, v * 1000003, &n);
        bad += !q || n != 4 + v % 50 || memcmp(q, ids + v % 7, n * sizeof *q);
    }
    CHECK_MSG(bad == 0 && c.used == used0 && c.hits == h0 && c.misses == m0,
              "the prefetch hint changed the cache (%d lists wrong)", bad);
    CHECK(gsnap_samp__lc_get(&c, 17, &n) == NULL);
    gsnap_samp__lc_rekey(&c, 77);
    CHECK_MSG(gsnap_samp__lc_get(&c, 0, &n) != NULL, "the same key keeps the lists");
    gsnap_samp__lc_rekey(&c, 78);
    CHECK_MSG(gsnap_samp__lc_get(&c, 0, &n) == NULL, "another key drops them");
    const uint64_t *p = gsnap_samp__lc_put(&c, 5, ids, 600);
    CHECK(p && gsnap_samp__lc_get(&c, 5, &n) == p && n == 600);
    gsnap_samp__lc_rekey(&c, 0);
    gsnap_samp__lc_prefetch(&c, 5, 1); /* no key: nothing looked up */
    CHECK(gsnap_samp__lc_get(&c, 5, &n) == NULL && gsnap_samp__lc_put(&c, 5, ids, 600) == NULL);
    gsnap_samp__lc_free(&c);
}

int main(void) {
    through_the_sampler();
    same_batches();
    gauges_with_workers();
    the_cache_alone();
    TEST_DONE();
}
