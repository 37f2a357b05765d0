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
 * every commit; queries then find them verified. It reads from the map like
 * any reader, so nothing is trusted that was not read back and checked. The
 * chunks of runs newer than the last warmed one are verified the same way
 * (into db->chunk_ok), which also maps their pages in this process. A
 * process that only ingests (the CLI) skips it. Failures are left to the
 * queries (they report them with the run and node).
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

void gsnap_store__warm(gsnap_db *db) {
    if (!__atomic_load_n(&db->queried, __ATOMIC_RELAXED)) return;
    gsnap_read *rd;
    if (gsnap_read_begin(db, &rd)) return;
    uint64_t warm = __atomic_load_n(&db->warm_run, __ATOMIC_RELAXED);
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        for (uint8_t dir = 0; dir < 2; dir++) {
            if (!(db->keep & (dir == GSNAP_DIR_IN ? GSNAP_KEEP_IN : GSNAP_KEEP_OUT))) continue;
            if (run->info.flags & GSNAP_RUN_DENSE) {
                gsnap_dense_ref d = {0};
                if (gsnap_dense__load(db, rd->txn, run->id, dir, &d, -1)) break;
            } else {
                gsnap_bloom_ref b = {0};
                if (gsnap_bloom__load(db, rd->txn, run->id, dir, &b)) break;
                if (run->id > warm) warm_chunks(db, rd, run, dir);
            }
        }
    }
    gsnap_fence__warm(db, rd); /* the chunked runs' fence indexes (fence.c) */
    /* batches may commit from several threads: warm_run is a hint (a run
     * verified twice costs time, not correctness), kept with atomic access */
    if (rd->nruns && rd->runs[rd->nruns - 1].id > warm)
        __atomic_store_n(&db->warm_run, rd->runs[rd->nruns - 1].id, __ATOMIC_RELAXED);
    gsnap_read_end(rd);
}
