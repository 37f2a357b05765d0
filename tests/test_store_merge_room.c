/*
 * A merge is never done twice for want of map room.
 *
 * A merge into the base rewrites every record the store holds, in one write
 * transaction. When the LMDB map is too small for it, LMDB fails with
 * MDB_MAP_FULL only once the merge is nearly done; the transaction is then
 * aborted, the map grown and the merge replayed from the start (txn.c): the
 * largest piece of work ingest does, twice (R-MAT SCALE 20: every merge
 * into the base ran twice). Compaction now makes room before it starts
 * (compact.c). Checked here:
 *   - a store that starts with a 1 MiB map takes batches (with automatic
 *     compaction) until its map is 8 times that size (three doublings);
 *     every merge started was committed once (store_int.h's test counters:
 *     merges started = merges committed), and some of them were merges into
 *     the base;
 *   - a full compaction at the end: the same;
 *   - the store holds every edge (degrees against a plain count), and
 *     gsnap_db_check finds 0 problems;
 *   - sparse ids: a store holding node 2^38 (its base stays chunked, with no
 *     index per node id) is compacted with the map it has: the room asked
 *     for is the records', not an index of 2^38 entries (that asked for a
 *     4 TiB map, and LMDB records the size for every later opener).
 */
#include "test.h"
#include "store/store_int.h"

#define NODES 4000u

static void sparse_ids(void) {
    char *dir = test_tmpdir("merge_room_sparse");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    uint64_t map0 = st.map_size, rng = 5;
    for (int bi = 0; bi < 3; bi++) {
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (int e = 0; e < 2000; e++) OK(gsnap_batch_add(b, test_rand(&rng) % 1000, test_rand(&rng) % 1000, e));
        if (bi == 0) OK(gsnap_batch_add(b, (uint64_t)1 << 38, 7, 0));
        OK(gsnap_batch_commit(b, NULL)); /* merges as they fall due */
    }
    OK(gsnap_store__compact(db, 1));
    OK(gsnap_db_stats(db, &st));
    CHECK_MSG(st.map_size == map0, "6,001 edges and their merges grew the map from %llu to %llu bytes",
              (unsigned long long)map0, (unsigned long long)st.map_size);
    uint64_t deg = 0, v = 0;
    OK(gsnap_db_version(db, &v));
    OK(gsnap_degree(db, NULL, (uint64_t)1 << 38, GSNAP_DIR_OUT, GSNAP_TIME_MAX, v, &deg));
    CHECK_MSG(deg == 1, "node 2^38: out-degree %llu", (unsigned long long)deg);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    sparse_ids();
    char *dir = test_tmpdir("merge_room");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.map_size = 1u << 20;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t *outdeg = calloc(NODES, sizeof *outdeg), rng = 11;
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    uint64_t map0 = st.map_size, base0 = gsnap_compact__base_merges;
    uint64_t started0 = gsnap_compact__merges_started, done0 = gsnap_compact__merges_committed;
    int64_t t = 0;
    for (int bi = 0; bi < 400 && st.map_size < map0 << 3; bi++) {
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (int e = 0; e < 5000; e++) {
            uint64_t s = test_rand(&rng) % NODES, d = test_rand(&rng) % NODES;
            OK(gsnap_batch_add(b, s, d, t++));
            outdeg[s]++;
        }
        OK(gsnap_batch_commit(b, NULL)); /* merges as they fall due */
        OK(gsnap_db_stats(db, &st));
    }
    CHECK_MSG(st.map_size >= map0 << 3, "the map grew from %llu to %llu bytes only",
              (unsigned long long)map0, (unsigned long long)st.map_size);
    uint64_t started = gsnap_compact__merges_started - started0, done = gsnap_compact__merges_committed - done0;
    CHECK_MSG(gsnap_compact__base_merges > base0, "no merge into the base");
    CHECK_MSG(started == done, "ingest: %llu merges started, %llu committed (replayed after a full map)",
              (unsigned long long)started, (unsigned long long)done);
    started0 = gsnap_compact__merges_started;
    done0 = gsnap_compact__merges_committed;
    OK(gsnap_store__compact(db, 1));
    started = gsnap_compact__merges_started - started0;
    done = gsnap_compact__merges_committed - done0;
    CHECK_MSG(started == done, "full compaction: %llu merges started, %llu committed",
              (unsigned long long)started, (unsigned long long)done);
    uint64_t v = 0;
    OK(gsnap_db_version(db, &v));
    for (uint64_t n = 0; n < NODES; n += 37) {
        uint64_t deg = 0;
        OK(gsnap_degree(db, NULL, n, GSNAP_DIR_OUT, GSNAP_TIME_MAX, v, &deg));
        CHECK_MSG(deg == outdeg[n], "node %llu: out-degree %llu, %llu added", (unsigned long long)n,
                  (unsigned long long)deg, (unsigned long long)outdeg[n]);
    }
    uint64_t problems = 1;
    OK(gsnap_db_check(db, NULL, NULL, &problems));
    CHECK_MSG(problems == 0, "check: %llu problems", (unsigned long long)problems);
    gsnap_db_close(db);
    free(outdeg);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
