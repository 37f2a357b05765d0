/*
 * A sampler over the store builds the runs' in-memory indexes at once
 * (gsnap_store__index_runs, called by the store source as a batch begins):
 * a process that opens a store another process ingested has no fence
 * index, held copy or run mask, and used to sample through the B-tree
 * until its seeks added up to a lazy build (GSNAP_FENCE_LAZY_MIN of them
 * and one per 256 records: tens of thousands on R-MAT-20, much of a cold
 * epoch). Checked here, on a store written by a handle that never queried
 * and reopened:
 *   - before sampling no chunked run has an index;
 *   - after one FBL batch of 4 seeds (far fewer seeks than a lazy build
 *     waits for) every chunked run has one, with its held copy, and the run
 *     mask is published;
 *   - the batches are valid against the test's own adjacency (every edge
 *     exists, each row has min(degree, fanout) distinct neighbours), and
 *     equal, batch for batch, to those of a sampler on a handle without
 *     held copies (read_cache_bytes < 0: no copy and no run mask, the runs
 *     sought through the map and the Bloom filters; the lists and draws do
 *     not depend on how the runs are read).
 */
#include "test.h"
#include "store/store_int.h"
#include <string.h>

#define N 2000
static uint8_t *adj; /* adj[u * N + v]: edge u -> v (in-edge of v) */

static void ingest(const char *dir) {
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 99, t = 0;
    for (int b = 0; b < 3; b++) { /* three commits: a base and chunked runs */
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int k = 0; k < 6000; k++) {
            uint64_t v = test_rand(&rng) % N, u = test_rand(&rng) % (v < 30 ? N : 40);
            adj[u * N + v] = 1;
            OK(gsnap_batch_add(bt, u, v, (int64_t)t++));
        }
        OK(gsnap_batch_commit(bt, NULL));
    }
    gsnap_db_close(db);
}

static int chunked_runs(gsnap_db *db, int *indexed, int *held) {
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    int n = 0;
    *indexed = *held = 0;
    for (size_t i = 0; i < rd->nruns; i++) {
        if (rd->runs[i].info.flags & GSNAP_RUN_DENSE) continue;
        n++;
        *indexed += gsnap_fence__has(db, rd->runs[i].id);
        *held += gsnap_fence__held_run(db, rd->runs[i].id);
    }
    gsnap_read_end(rd);
    return n;
}

/* One FBL [3,5] batch of 4 seeds; copies it into out (*len). 1 if invalid. */
static int batch(gsnap_sampler *s, uint64_t b, unsigned char *out, size_t *len) {
    uint64_t seeds[4];
    OK(gsnap_sampler_random_seeds(s, b, 4, seeds));
    const void *buf;
    OK(gsnap_sampler_next(s, seeds, 4, &buf, len));
    memcpy(out, buf, *len);
    if (gsnap_block_check(buf, *len)) return 1;
    const int32_t fan[2] = {3, 5};
    for (unsigned li = 0; li < 2; li++) {
        gsnap_block bl;
        OK(gsnap_block_get(buf, *len, li, &bl));
        for (uint32_t r = 0; r < bl.num_dst; r++) {
            uint64_t v = bl.src_ids[r];
            size_t d = 0;
            for (uint64_t u = 0; u < N; u++) d += adj[u * N + v];
            if (bl.indptr[r + 1] - bl.indptr[r] != (d < (size_t)fan[li] ? d : (size_t)fan[li])) return 1;
            for (uint32_t e = bl.indptr[r]; e < bl.indptr[r + 1]; e++)
                if (!adj[bl.src_ids[bl.indices[e]] * N + v]) return 1;
        }
    }
    return 0;
}

static gsnap_sampler *open_fbl(gsnap_db *db) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FBL;
    o.layers = 2;
    o.fanouts[0] = 3;
    o.fanouts[1] = 5;
    gsnap_sampler *s;
    OK(gsnap_sampler_open(db, NULL, &o, &s));
    return s;
}

int main(void) {
    adj = calloc((size_t)N * N, 1);
    CHECK(adj);
    char *dir = test_tmpdir("sidx");
    ingest(dir);
    enum { B = 12, CAP = 1 << 16 };
    static unsigned char got[B][CAP], want[B][CAP];
    size_t glen[B], wlen[B];

    /* the reference: a handle without held copies, sampled first */
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.read_cache_bytes = -1;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    gsnap_sampler *s = open_fbl(db);
    for (int b = 0; b < B; b++) CHECK_MSG(!batch(s, (uint64_t)b, want[b], &wlen[b]), "reference batch %d invalid", b);
    gsnap_sampler_close(s);
    gsnap_db_close(db);

    o = (gsnap_db_options)GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    int idx, held, n = chunked_runs(db, &idx, &held);
    CHECK_MSG(n >= 1, "the store has %d chunked runs; the test needs one at least", n);
    CHECK_MSG(idx == 0, "%d of %d chunked runs indexed before any read", idx, n);
    s = open_fbl(db);
    CHECK_MSG(!batch(s, 0, got[0], &glen[0]), "batch 0 invalid");
    chunked_runs(db, &idx, &held);
    CHECK_MSG(idx == n && held == n, "after one batch: %d of %d chunked runs indexed, %d held", idx, n, held);
    CHECK_MSG(gsnap_fence__mask_published(db), "after one batch: no run mask");
    for (int b = 1; b < B; b++) CHECK_MSG(!batch(s, (uint64_t)b, got[b], &glen[b]), "batch %d invalid", b);
    for (int b = 0; b < B; b++)
        CHECK_MSG(glen[b] == wlen[b] && !memcmp(got[b], want[b], glen[b]), "batch %d differs from the reference's", b);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    free(adj);
    TEST_DONE();
}
