/*
 * Large answers against an independent model: a few hub nodes take
 * thousands of in-edges over many commits, so that their records fill long
 * GSC2 groups that span chunks (decoded a group at a time, short varints
 * read without a byte loop, long ones through the general decoder: some
 * times lie far apart), sit in a bit-packed dense base after a merge, and
 * are spread over several delta runs (merged two neighbours at a time, the
 * last merge written straight into the caller's buffer when no delete is
 * in range). Half the hubs see deletes (the replay path), half never do.
 * Every answer at random (T, V), the degree, the samplers' distinct ids
 * (each run's merged, the base's last), and a prefix asked with a small
 * buffer are compared with a brute-force replay of the events kept here.
 */
#include "test.h"
#include "store/store.h"
#include "edge_model.h"

#define HUBS 4

/* Every hub at a few (T, V): the answer, the degree, a short prefix. */
static int check_hubs(gsnap_db *db, uint64_t *rng, uint64_t latest, int64_t tmax, int rounds) {
    int bad = 0;
    gsnap_nbr *want = malloc((nev + 1) * sizeof *want), *got = malloc((nev + 1) * sizeof *got);
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    for (int q = 0; q < rounds; q++) {
        uint64_t hub = (uint64_t)q % HUBS;
        int64_t T = q % 5 == 0 ? GSNAP_TIME_MAX : (int64_t)(test_rand(rng) % (q % 2 ? 1ull << 28 : (uint64_t)tmax));
        uint64_t V = q % 3 == 0 ? latest : 1 + test_rand(rng) % latest;
        size_t wn = model(hub, GSNAP_DIR_IN, T, V, want), gn = 0;
        OK(gsnap_neighbors(db, rd, hub, GSNAP_DIR_IN, T, V, got, nev + 1, &gn));
        if (gn != wn || (wn && memcmp(want, got, wn * sizeof *got))) {
            if (bad < 5)
                fprintf(stderr, "hub %llu T %lld V %llu: got %zu instances, want %zu\n", (unsigned long long)hub,
                        (long long)T, (unsigned long long)V, gn, wn);
            bad++;
        }
        uint64_t deg = 0;
        OK(gsnap_degree(db, rd, hub, GSNAP_DIR_IN, T, V, &deg));
        bad += deg != wn;
        /* the samplers' distinct ids: each run's ids merged, the base's last */
        bad += distinct_ids_differ(db, rd, hub, GSNAP_DIR_IN, T, V, want, wn, bad < 5);
        if (wn > 3) { /* a buffer of a third: the count is the total, the prefix the answer's */
            size_t cap = wn / 3, cn = 0;
            memset(got, 0xa5, (cap + 1) * sizeof *got);
            OK(gsnap_neighbors(db, rd, hub, GSNAP_DIR_IN, T, V, got, cap, &cn));
            if (cn != wn || memcmp(want, got, cap * sizeof *got)) bad++;
            gsnap_nbr guard;
            memset(&guard, 0xa5, sizeof guard);
            if (memcmp(&got[cap], &guard, sizeof guard)) bad++; /* nothing written past cap */
        }
    }
    gsnap_read_end(rd);
    free(want);
    free(got);
    return bad;
}

int main(void) {
    int small = test_small();
    int batches = small ? 8 : 14, per = small ? 600 : 2500, rounds = small ? 24 : 120;
    uint64_t rng = 0x5eed, seq = 0, latest = 0;
    const int64_t tmax = 4000000;
    char *dir = test_tmpdir("hubs");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = GSNAP_MERGE_FANOUT_MAX; /* many delta runs stay: many segments to merge */
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, &o, &db));
    size_t most_runs = 0;
    for (int b = 0; b < batches; b++) {
        gsnap_batch *bt = NULL;
        OK(gsnap_batch_begin(db, &bt));
        uint64_t ver = latest + 1;
        size_t first = nev;
        for (int i = 0; i < per; i++) {
            uint64_t hub = test_rand(&rng) % HUBS;
            /* times mostly close (time deltas of 1-4 bytes), some up to 2^28
             * (every bit of a 4-byte varint), a few far (5-6 bytes: the
             * general decoder) */
            uint64_t tr = test_rand(&rng) % 20;
            int64_t t = (int64_t)(test_rand(&rng) % (tr == 0 ? 1ull << 40 : tr < 6 ? 1ull << 28 : (uint64_t)tmax));
            if (hub % 2 == 1 && first > 0 && test_rand(&rng) % 6 == 0) { /* odd hubs: delete an earlier add */
                const ev_t *e = &evs[test_rand(&rng) % first];
                if (e->dst == hub && !e->del) {
                    OK(gsnap_batch_delete(bt, e->src, e->dst, e->t));
                    model_push((ev_t){e->src, e->dst, e->t, 1, ver, seq++});
                    continue;
                }
            }
            uint64_t src = 100 + test_rand(&rng) % 20000;
            if (test_rand(&rng) % 10 == 0 && nev > first) src = evs[nev - 1].src; /* multi-edges */
            OK(gsnap_batch_add(bt, src, hub, t));
            model_push((ev_t){src, hub, t, 0, ver, seq++});
        }
        uint64_t v = 0;
        OK(gsnap_batch_commit(bt, &v));
        CHECK(v == ver);
        latest = v;
        gsnap_db_stat st;
        OK(gsnap_db_stats(db, &st));
        if (st.runs > most_runs) most_runs = st.runs;
        if (b == batches / 2) { /* the first half into one run: a dense (bit-packed) base under the rest */
            OK(gsnap_db_merge(db, 2));
            OK(gsnap_db_stats(db, &st));
            CHECK_MSG(st.runs <= 2, "%llu runs after a merge at fanout 2", (unsigned long long)st.runs);
        }
        if (b % 3 == 2) {
            int bad = check_hubs(db, &rng, latest, tmax, rounds / 3);
            CHECK_MSG(bad == 0, "batch %d: %d bad answers", b, bad);
        }
    }
    CHECK_MSG(most_runs >= 4, "the test meant several runs to merge, saw at most %zu", most_runs);
    int bad = check_hubs(db, &rng, latest, tmax, rounds);
    CHECK_MSG(bad == 0, "%d bad answers at the end", bad);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    free(evs);
    TEST_DONE();
}
