/*
 * store/warm.c -- verify a fresh run's whole values right after the commit
 * that wrote it, in a process that also answers queries.
 *
 * Point queries verify each Bloom filter and dense base value the first time
 * the process reads it (a whole-value XXH3: tens of microseconds for a
 * 100k-edge run's filter, milliseconds for a base). On a store that keeps
 * ingesting, every commit and merge makes new runs, so the first query to
 * touch each of them paid that, which set the p99 of queries interleaved with
 * ingest (tens of microseconds against a p50 of one). Once the process has
 * answered a point query (db->queried), the committing thread loads and
 * verifies the new runs' filters and dense values through a read view after
 * every commit; queries then find them verified. Only the directions the
 * process has read are warmed (a trainer that asks in-neighbours pays
 * nothing for the out-runs; a direction read later is verified by its
 * queries, once per value, until the commits warm it too). It reads from the map like
 * any reader, so nothing is trusted that was not read back and checked. The
 * chunks of runs newer than the last warmed one are verified the same way
 * (into db->chunk_ok), which also maps their pages in this process. A
 * process that only ingests (the CLI) skips it. Failures are left to the
 * queries (they report them with the run and node). It also reads the dense
 * base's index once after each commit (touch_index), so that the queries
 * after it find the entry they read first in cache: R-MAT-18 p50 under
 * ingest 6-10 % lower (docs/benchmarks.md). Last it asks one query of a
 * node the commit touched (the caller's hint) through a fresh view, so that
 * the process's next query finds the read path warm.
 */
#include "store/store_int.h"

/* Verify every chunk of (run, dir) once (db->chunk_ok), without visiting
 * the records: jump to each chunk's last record and step over it. */
static void warm_chunks(gsnap_db *db, gsnap_read *rd, const gsnap_run *run, uint8_t dir) {
    gsnap_run_reader rr = {0};
    if (gsnap_run__reader_open(&rr, db, rd->txn, run, dir, 0, 2, 0) == 0)
        while (!rr.done) {
            rr.pos = rr.nrec - 1;
            if (gsnap_run__reader_next(db, &rr)) break;
        }
    gsnap_run__reader_free(&rr);
}

/* Read the dense base's index of one direction once, a cache line at a
 * time (sequential: the hardware prefetcher streams it): a point query
 * reads one entry of it and then the node's body, two dependent misses
 * on a store just written by a commit; with the index in cache the first
 * is a hit. 8 bytes a node id (2 MiB at R-MAT-18); nothing is written. */
static void touch_index(const gsnap_dense_ref *d) {
    if (!d->idx || d->nidx == 0) return;
    const unsigned char *p = d->idx, *end = d->idx + d->nidx * 8;
    unsigned char acc = 0;
    for (; p < end; p += 64) acc ^= *(const volatile unsigned char *)p;
    (void)acc;
}

uint64_t gsnap_store__warm_queries, gsnap_store__warm_records;

void gsnap_store__warm(gsnap_db *db, uint64_t hint) {
    if (!__atomic_load_n(&db->queried, __ATOMIC_RELAXED)) return;
    gsnap_read *rd;
    if (gsnap_read_begin(db, &rd)) return;
    uint64_t warm = __atomic_load_n(&db->warm_run, __ATOMIC_RELAXED);
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        for (uint8_t dir = 0; dir < 2; dir++) {
            if (!gsnap_store__kept(db, dir) || !gsnap_store__dir_read(db, dir)) continue;
            if (run->info.flags & GSNAP_RUN_DENSE) {
                gsnap_dense_ref d = {0};
                if (gsnap_dense__load(db, rd->txn, run->id, dir, &d, -1)) break;
                touch_index(&d);
            } else {
                gsnap_bloom_ref b = {0};
                if (gsnap_bloom__load(db, rd->txn, run->id, dir, &b)) break;
                if (run->id > warm) warm_chunks(db, rd, run, dir);
            }
        }
    }
    gsnap_fence__warm_commit(db, rd); /* the chunked runs' fence indexes (fence.c) */
    /* batches may commit from several threads: warm_run is a hint (a run
     * verified twice costs time, not correctness), kept with atomic access */
    if (rd->nruns && rd->runs[rd->nruns - 1].id > warm)
        __atomic_store_n(&db->warm_run, rd->runs[rd->nruns - 1].id, __ATOMIC_RELAXED);
    gsnap_read_end(rd);
    /* Last, one query of `hint` in each direction read through a view of
     * its own, as the process's next query will make. The commit, its
     * merges and the builds above have just streamed through the caches:
     * the first query after a commit met the read path's code, LMDB's pages
     * of the new version and the dense index cold: 12-14 us at the median
     * against about 1 us for the queries after it, 3.1-3.6 us with this
     * (R-MAT-18, 100k-edge commits; docs/benchmarks.md "The first query
     * after a commit"). Its answer is not kept; a failure is left to the
     * queries, as above. */
    gsnap_read *q;
    if (gsnap_read_begin(db, &q)) return;
    __atomic_add_fetch(&gsnap_store__warm_queries, 1, __ATOMIC_RELAXED);
    /* the hint may be a hub: its whole answer (every record of every run
     * gathered, merged and replayed) would cost each commit what a hub's
     * answer costs, up to seconds. The view stops a query at
     * GSNAP_WARM_READ_RECS records gathered (gsnap_read.scratch_max). */
    q->scratch_max = GSNAP_WARM_READ_RECS;
    for (uint8_t dir = 0; dir < 2; dir++) {
        size_t n = 0;
        if (!gsnap_store__kept(db, dir) || !gsnap_store__dir_read(db, dir)) continue;
        q->scratch_full = 0;
        if (gsnap_neighbors(db, q, hint, (gsnap_dir)dir, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, NULL, 0, &n) == 0)
            __atomic_add_fetch(&gsnap_store__warm_records, q->scratch_full ? q->scratch_cap : n, __ATOMIC_RELAXED);
    }
    gsnap_read_end(q);
}
