/*
 * Fence indexes of chunked runs (store/fence.c): in a process that answers
 * point queries, each commit builds an in-memory index of every new chunked
 * run (and copies its Bloom filters), and queries seek through it instead of
 * walking a chunk's group headers. Checked here:
 *   - after commits in a querying process every live chunked run has an
 *     index, and the runs merged away lose theirs;
 *   - the answers through the indexes equal those of the same store
 *     reopened (no index: the plain seek), for every node, both directions,
 *     random (T, V), with hubs whose records span several chunks of a run,
 *     nodes at chunk boundaries, deletes, a dense base (compact ids) and a
 *     chunked one (sparse ids);
 *   - a process that only reads (the store reopened, no commit) builds the
 *     indexes itself after enough seeks, and answers the same through them;
 *   - a view opened before later commits merged its runs away still
 *     answers as before (it holds its indexes: no use after free under
 *     ASan/valgrind);
 *   - a thread querying through fresh views while another commits (and so
 *     builds and drops indexes) gets the same answer twice in a view (run
 *     under TSan by make tsan);
 *   - the once-per-process verification set keeps the keys in use while
 *     new runs keep coming (it used to forget every key when full, so the
 *     dense base was hashed again every few dozen runs);
 *   - the indexes hold verified copies of the runs with a node table
 *     (gsnap_db_options.read_cache_bytes): made by commits and by a reading
 *     process's lazy build, within the budget (none at -1, a version-2
 *     options struct gets the default), and the answers through them equal
 *     the plain seek's, absent nodes and hubs spanning chunks included,
 *     through small regions (malloc) and large ones (2 MiB mappings);
 *   - copies and masks cover the directions the process reads, and only
 *     those (read_directions).
 */
#include "test.h"
#include "store/store_int.h"
#include <pthread.h>

#define NODES 1500
#define NQ 300

static int g_sparse;
static uint64_t id(uint64_t i) { return g_sparse ? i * 1000003u + 11 : i; }

static void batch(gsnap_db *db, uint64_t *rng, int n, int64_t t0) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (int i = 0; i < n; i++) {
        uint64_t s = test_rand(rng) % NODES, d = test_rand(rng) % NODES, r = test_rand(rng) % 8;
        if (r == 0) d = 0;              /* hub 0: its records span chunks */
        if (r == 1) { d = 1; s %= 30; } /* hub 1: a few neighbours many times */
        OK(gsnap_batch_add(b, id(s), id(d), t0 + (int64_t)(test_rand(rng) % 4000)));
    }
    for (int i = 0; i < 5; i++) OK(gsnap_batch_delete(b, id((uint64_t)i), id(1), t0 + 5000));
    OK(gsnap_batch_commit(b, NULL));
}

typedef struct { uint64_t node; int dir; int64_t T; uint64_t V; } query;

/* All answers to qs in view rd (NULL: a view per query), concatenated,
 * each preceded by its count in .node. */
static gsnap_nbr *answers(gsnap_db *db, gsnap_read *rd, const query *qs, int nq, size_t *len) {
    size_t cap = 1 << 14, n = 0, got;
    gsnap_nbr *out = malloc(cap * sizeof *out), *buf = malloc(32768 * sizeof *buf);
    for (int i = 0; i < nq; i++) {
        OK(gsnap_neighbors(db, rd, qs[i].node, (gsnap_dir)qs[i].dir, qs[i].T, qs[i].V, buf, 32768, &got));
        CHECK(got <= 32768);
        if (got > 32768) got = 32768;
        if (n + got + 1 > cap) out = realloc(out, (cap = (n + got + 1) * 2) * sizeof *out);
        out[n++] = (gsnap_nbr){got, 0, 0};
        memcpy(out + n, buf, got * sizeof *buf);
        n += got;
    }
    free(buf);
    *len = n;
    return out;
}

static int same(const gsnap_nbr *a, size_t na, const gsnap_nbr *b, size_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* Every live chunked run of the newest view has an index. */
static void all_indexed(gsnap_db *db) {
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    int chunked = 0;
    for (size_t i = 0; i < rd->nruns; i++) {
        if ((rd->runs[i].info.flags & GSNAP_RUN_DENSE) || rd->runs[i].info.nrec == 0) continue;
        chunked++;
        CHECK_MSG(gsnap_fence__has(db, rd->runs[i].id), "run %llu has no fence index",
                  (unsigned long long)rd->runs[i].id);
    }
    CHECK(chunked > 0);
    gsnap_read_end(rd);
}

static void run(int sparse) {
    g_sparse = sparse;
    char *dir = test_tmpdir("fence");
    uint64_t rng = 7 + (uint64_t)sparse;
    int nb = test_small() ? 10 : 22, per = test_small() ? 1500 : 4000;
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg;
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg)); /* a querying process */
    query qs[NQ];
    gsnap_read *old = NULL;
    gsnap_nbr *a_old = NULL;
    size_t n_old = 0;
    uint64_t old_runs[64];
    size_t n_old_runs = 0;
    for (int b = 0; b < nb; b++) {
        batch(db, &rng, per, (int64_t)b * 3000);
        if (b == 2) { /* a view that later commits merge away */
            OK(gsnap_read_begin(db, &old));
            for (int i = 0; i < NQ; i++)
                qs[i] = (query){id(i < 40 ? (uint64_t)i % 4 : test_rand(&rng) % NODES), (int)(test_rand(&rng) % 2),
                                (int64_t)(test_rand(&rng) % 12000), 1 + test_rand(&rng) % 3};
            a_old = answers(db, old, qs, NQ, &n_old);
            for (size_t i = 0; i < old->nruns && n_old_runs < 64; i++) old_runs[n_old_runs++] = old->runs[i].id;
        }
    }
    CHECK(gsnap_fence__built(db) > 0);
    CHECK_MSG(gsnap_fence__held_bytes(db) > 0 && gsnap_fence__held_bytes(db) <= GSNAP_FENCE_HELD_BYTES,
              "sparse %d: the indexes hold %llu bytes of copies", sparse,
              (unsigned long long)gsnap_fence__held_bytes(db));
    all_indexed(db);
    /* the old view's runs are merged away: their indexes left the table,
     * the view still holds them and answers as before */
    int gone = 0;
    gsnap_read *now;
    OK(gsnap_read_begin(db, &now));
    for (size_t i = 0; i < n_old_runs; i++) {
        int live = 0;
        for (size_t j = 0; j < now->nruns; j++) live |= now->runs[j].id == old_runs[i];
        if (!live) { gone++; CHECK(!gsnap_fence__has(db, old_runs[i])); }
    }
    gsnap_read_end(now);
    CHECK(gone > 0);
    size_t n_again;
    gsnap_nbr *a_again = answers(db, old, qs, NQ, &n_again);
    CHECK(same(a_old, n_old, a_again, n_again));
    gsnap_read_end(old);
    /* through the indexes, then the same store reopened (plain seeks) */
    uint64_t V = 0;
    OK(gsnap_db_version(db, &V));
    for (int i = 0; i < NQ; i++)
        qs[i] = (query){id(i < 60 ? (uint64_t)i % 6 : test_rand(&rng) % NODES), (int)(test_rand(&rng) % 2),
                        i % 3 == 0 ? GSNAP_TIME_MAX : (int64_t)(test_rand(&rng) % ((uint64_t)nb * 3000 + 5000)),
                        i % 4 == 0 ? GSNAP_VERSION_LATEST : 1 + test_rand(&rng) % V};
    size_t nf, np;
    gsnap_nbr *af = answers(db, NULL, qs, NQ, &nf);
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    size_t nf2;
    gsnap_nbr *af2 = answers(db, rd, qs, NQ, &nf2);
    gsnap_read_end(rd);
    CHECK(same(af, nf, af2, nf2));
    gsnap_db_close(db);
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(gsnap_fence__built(db) == 0);
    gsnap_nbr *ap = answers(db, NULL, qs, NQ, &np);
    CHECK(gsnap_fence__built(db) == 0);
    CHECK_MSG(same(af, nf, ap, np), "sparse %d: answers through the fence indexes differ from the plain seek's",
              sparse);
    /* a process that only reads builds the indexes itself once its seeks
     * add up (fence.c lazy_build), and answers the same through them */
    size_t nl;
    for (int r = 0; r < 40 && gsnap_fence__built(db) == 0; r++) free(answers(db, NULL, qs, NQ, &nl));
    CHECK_MSG(gsnap_fence__built(db) > 0, "sparse %d: a reading process built no fence index", sparse);
    all_indexed(db);
    gsnap_nbr *al = answers(db, NULL, qs, NQ, &nl);
    CHECK_MSG(same(af, nf, al, nl), "sparse %d: answers through the reader's indexes differ", sparse);
    free(al);
    gsnap_db_close(db);
    free(a_old), free(a_again), free(af), free(af2), free(ap);
    test_rmdir(dir);
    free(dir);
}

/* Run masks (fence.c): after every commit of a querying process the
 * answers through a view with the mask equal those through a view without
 * it (the Bloom filters asked), for absent nodes, hubs and deletes, as the
 * runs are appended (the mask extended) and merged (made whole again); a
 * view keeps its mask after later commits; sparse ids make no mask. */
static void masks(int sparse, unsigned fanout) {
    g_sparse = sparse;
    char *dir = test_tmpdir("fmask");
    uint64_t rng = 31 + (uint64_t)sparse;
    int nb = test_small() ? 12 : 24, per = test_small() ? 1500 : 3000;
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.merge_fanout = fanout; /* 2: a commit can keep the number of chunked runs and change their ids */
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg;
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    uint64_t built0 = gsnap_fence__masks_built, ext0 = gsnap_fence__masks_extended;
    query qs[NQ], qkept[NQ];
    int with = 0, max_chunked = 0;
    gsnap_read *kept = NULL;
    gsnap_nbr *a_kept = NULL;
    size_t n_kept = 0;
    int older_taken = 0;
    for (int b = 0; b < nb; b++) {
        /* two views begun before the commit, first asked after it: their
         * runs are not the new mask's, so neither may take it (and the one
         * asked with masks allowed answers as the one asked without) */
        gsnap_read *e1, *e2;
        OK(gsnap_read_begin(db, &e1));
        OK(gsnap_read_begin(db, &e2));
        batch(db, &rng, per, (int64_t)b * 3000);
        uint64_t V = 0;
        OK(gsnap_db_version(db, &V));
        for (int i = 0; i < NQ; i++) /* as of an older version (V - 1): e1 and e2 see it */
            qs[i] = (query){id(test_rand(&rng) % (NODES + 20)), (int)(test_rand(&rng) % 2), GSNAP_TIME_MAX,
                            V > 1 ? V - 1 : 1};
        size_t n1, n2;
        gsnap_nbr *a1 = answers(db, e1, qs, NQ, &n1);
        __atomic_store_n(&gsnap_fence__mask_off, 1, __ATOMIC_RELAXED);
        gsnap_nbr *a2 = answers(db, e2, qs, NQ, &n2);
        __atomic_store_n(&gsnap_fence__mask_off, 0, __ATOMIC_RELAXED);
        if (e1->mask) { /* only a mask of exactly its own chunked runs */
            size_t j = 0;
            for (size_t i = 0; i < e1->nruns; i++)
                if (!(e1->runs[i].info.flags & GSNAP_RUN_DENSE))
                    CHECK(j < e1->mask->k && e1->mask->ids[j++] == e1->runs[i].id);
            CHECK(j == e1->mask->k);
            older_taken++;
        }
        CHECK_MSG(same(a1, n1, a2, n2), "sparse %d commit %d: a view begun before the commit answers differently "
                  "with masks allowed", sparse, b);
        free(a1), free(a2);
        gsnap_read_end(e1);
        gsnap_read_end(e2);
        for (int i = 0; i < NQ; i++) /* nodes 0..NODES+20: some never seen */
            qs[i] = (query){id(i < 30 ? (uint64_t)i % 3 : test_rand(&rng) % (NODES + 20)), (int)(test_rand(&rng) % 2),
                            i % 3 == 0 ? GSNAP_TIME_MAX : (int64_t)(test_rand(&rng) % ((uint64_t)b * 3000 + 5000)),
                            i % 4 == 0 ? GSNAP_VERSION_LATEST : 1 + test_rand(&rng) % V};
        gsnap_read *rm, *rp;
        size_t nm, np;
        OK(gsnap_read_begin(db, &rm));
        gsnap_nbr *am = answers(db, rm, qs, NQ, &nm);
        int chunked = 0;
        for (size_t i = 0; i < rm->nruns; i++) chunked += !(rm->runs[i].info.flags & GSNAP_RUN_DENSE);
        if (chunked > max_chunked) max_chunked = chunked;
        if (sparse) CHECK_MSG(!rm->mask, "commit %d: a mask over sparse ids", b);
        else if (chunked) CHECK_MSG(rm->mask && rm->mask->k == (size_t)chunked, "commit %d: no mask over %d chunked runs", b, chunked);
        with += rm->mask != NULL;
        __atomic_store_n(&gsnap_fence__mask_off, 1, __ATOMIC_RELAXED);
        OK(gsnap_read_begin(db, &rp));
        gsnap_nbr *ap = answers(db, rp, qs, NQ, &np);
        CHECK(!rp->mask);
        __atomic_store_n(&gsnap_fence__mask_off, 0, __ATOMIC_RELAXED);
        CHECK_MSG(same(am, nm, ap, np), "sparse %d commit %d: answers through the run mask differ from the Bloom filters'",
                  sparse, b);
        gsnap_read_end(rp);
        free(ap);
        if (b == nb / 3 && rm->mask) { /* a view that keeps its mask while later commits replace it */
            kept = rm;
            a_kept = am;
            n_kept = nm;
            memcpy(qkept, qs, sizeof qs);
            continue;
        }
        gsnap_read_end(rm);
        free(am);
    }
    if (!sparse) {
        CHECK(with > 0 && max_chunked >= (fanout == 2 ? 2 : 3));
        CHECK_MSG(gsnap_fence__masks_built > built0 && gsnap_fence__masks_extended > ext0,
                  "masks made whole %llu, extended %llu: both ways must have run",
                  (unsigned long long)(gsnap_fence__masks_built - built0),
                  (unsigned long long)(gsnap_fence__masks_extended - ext0));
        CHECK(kept != NULL);
    }
    if (kept) {
        size_t n2;
        gsnap_nbr *a2 = answers(db, kept, qkept, NQ, &n2);
        CHECK_MSG(same(a_kept, n_kept, a2, n2), "a view's answers through its mask changed after later commits");
        free(a2);
        gsnap_read *fresh;
        OK(gsnap_read_begin(db, &fresh));
        size_t n3;
        free(answers(db, fresh, qkept, 1, &n3)); /* its first query takes the newest mask */
        CHECK(fresh->mask && fresh->mask != kept->mask);
        gsnap_read_end(fresh);
        gsnap_read_end(kept);
        free(a_kept);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* A batch of n adds between 2000 node ids drawn by the LCG state *x, at
 * times t0, t0 + 1, ... (no hubs, no deletes: the copies' sizes are
 * predictable, which the budgets below are set by). */
static void uniform_batch(gsnap_db *db, uint64_t *x, int n, int64_t t0) {
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (int i = 0; i < n; i++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        OK(gsnap_batch_add(bt, (*x >> 33) % 2000, (*x >> 13) % 2000, t0 + i));
    }
    OK(gsnap_batch_commit(bt, NULL));
}

/* A merge's output gets its copy when the budget has room for it once the
 * merged-away inputs' copies are given back: the index table drops the
 * inputs before it builds the output's index (it used to build first, so
 * with a budget that held the inputs the output found no room and was
 * sought through the map, its view without a run mask, until it was
 * merged away in turn). */
static void merge_output_held(void) {
    g_sparse = 0;
    char *dir = test_tmpdir("fence-mout");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.read_cache_bytes = 400000;
    o.merge_fanout = 8; /* 8 level-0 runs of ~71 KB of copies each (5 fit), then one output of ~280 KB */
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg, x = 1, seen = 0;
    OK(gsnap_degree(db, NULL, 0, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    int outputs = 0;
    /* up to the first delta merge: its inputs are the only copies held then,
     * so once they are given back the output fits */
    for (int b = 0; b < 40 && outputs == 0; b++) {
        uniform_batch(db, &x, 3000, (int64_t)b * 3000);
        gsnap_read *rd;
        OK(gsnap_read_begin(db, &rd));
        for (size_t i = 0; i < rd->nruns; i++) {
            const gsnap_run *r = &rd->runs[i];
            if (r->id <= seen || (r->info.flags & GSNAP_RUN_DENSE) || r->info.level == 0) continue;
            outputs++; /* a delta merge's output, new at this commit */
            CHECK_MSG(gsnap_fence__held_run(db, r->id), "commit %d: merged run %llu (%llu records) has no copy, "
                      "%llu bytes held of 400000", b, (unsigned long long)r->id, (unsigned long long)r->info.nrec,
                      (unsigned long long)gsnap_fence__held_bytes(db));
        }
        for (size_t i = 0; i < rd->nruns; i++) if (rd->runs[i].id > seen) seen = rd->runs[i].id;
        gsnap_read_end(rd);
        CHECK(gsnap_fence__held_bytes(db) <= 400000);
    }
    CHECK(outputs > 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* When the newest run set can have no mask (here: more than 16 chunked
 * runs at merge fanout 32), the table gives up the last one: no view can
 * take it any more, and it held its share of the read-cache budget (it
 * used to stay until a later run set got a mask, and could keep the new
 * runs' copies, and so any new mask, from fitting). */
static void stale_mask_dropped(void) {
    char *dir = test_tmpdir("fence-stale");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.merge_fanout = 32;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg, x = 5;
    OK(gsnap_degree(db, NULL, 0, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    int over = 0;
    for (int b = 0; b < 30 && over < 3; b++) {
        /* a large base, then small deltas that do not reach it */
        uniform_batch(db, &x, b == 0 ? 30000 : 600, (int64_t)b * 40000);
        gsnap_read *rd;
        OK(gsnap_read_begin(db, &rd));
        size_t chunked = 0;
        for (size_t i = 0; i < rd->nruns; i++) chunked += !(rd->runs[i].info.flags & GSNAP_RUN_DENSE);
        gsnap_read_end(rd);
        if (chunked > GSNAP_RUNMASK_MAX) {
            over++;
            CHECK_MSG(!gsnap_fence__mask_published(db), "commit %d: %zu chunked runs, a stale mask kept", b, chunked);
        } else if (chunked > 0) {
            CHECK_MSG(gsnap_fence__mask_published(db), "commit %d: %zu chunked runs and no mask", b, chunked);
        }
    }
    CHECK(over > 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

struct reader { gsnap_db *db; int stop; int bad; long views; };

static void *reader_main(void *arg) {
    struct reader *r = arg;
    uint64_t rng = 99;
    gsnap_nbr *a = malloc(32768 * sizeof *a), *b = malloc(32768 * sizeof *b);
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        gsnap_read *rd;
        if (gsnap_read_begin(r->db, &rd)) { r->bad++; break; }
        for (int i = 0; i < 20; i++) {
            uint64_t v = id(i < 4 ? (uint64_t)i : test_rand(&rng) % NODES);
            int64_t T = (int64_t)(test_rand(&rng) % 60000);
            size_t na = 0, nb = 0;
            if (gsnap_neighbors(r->db, rd, v, GSNAP_DIR_IN, T, GSNAP_VERSION_LATEST, a, 32768, &na) ||
                gsnap_neighbors(r->db, rd, v, GSNAP_DIR_IN, T, GSNAP_VERSION_LATEST, b, 32768, &nb) || na != nb ||
                (na && memcmp(a, b, (na < 32768 ? na : 32768) * sizeof *a)))
                r->bad++;
        }
        gsnap_read_end(rd);
        r->views++;
    }
    free(a);
    free(b);
    return NULL;
}

/* Commits in this thread while another queries. */
static void concurrent(void) {
    g_sparse = 0;
    char *dir = test_tmpdir("fence-mt");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg, rng = 5;
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    struct reader r = {db, 0, 0, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader_main, &r) == 0);
    for (int b = 0; b < (test_small() ? 8 : 16); b++) batch(db, &rng, 2000, (int64_t)b * 3000);
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK(r.bad == 0);
    CHECK(r.views > 0);
    CHECK(gsnap_fence__built(db) > 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* The verification set keeps a key in use while many new keys come. */
static void verified_lru(void) {
    char *dir = test_tmpdir("fence-lru");
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t base = 1ull << 2;
    gsnap_store__set_verified(db, base);
    for (uint64_t run = 2; run < 500; run++) {
        gsnap_store__set_verified(db, (run << 2 | 2u) ^ 0x8000000000000000ull);
        if (run % 8 == 0) CHECK_MSG(gsnap_store__verified(db, base), "forgotten after run %llu", (unsigned long long)run);
    }
    CHECK(!gsnap_store__verified(db, (3ull << 2 | 2u) ^ 0x8000000000000000ull)); /* unused: dropped */
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* gsnap_db_compact merges every run away: the table drops their indexes
 * there and then (they were kept until the next batch commit). */
static void compact_prunes(void) {
    char *dir = test_tmpdir("fence_compact");
    uint64_t rng = 3, deg, ids[64];
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    g_sparse = 1;
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg)); /* a querying process */
    for (int b = 0; b < 6; b++) batch(db, &rng, 3000, (int64_t)b * 3000);
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    size_t n = rd->nruns < 64 ? rd->nruns : 64;
    for (size_t i = 0; i < n; i++) ids[i] = rd->runs[i].id;
    gsnap_read_end(rd);
    int indexed = 0;
    for (size_t i = 0; i < n; i++) indexed += gsnap_fence__has(db, ids[i]);
    CHECK(indexed > 0);
    OK(gsnap_db_compact(db));
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(!gsnap_fence__has(db, ids[i]), "run %llu was merged away by gsnap_db_compact but keeps its index",
                  (unsigned long long)ids[i]);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* A reading process's copies under three budgets and an options struct of
 * version 2: the same answers as the plain seek, within each budget. */
static void budgets(void) {
    g_sparse = 0;
    char *dir = test_tmpdir("fence-budget");
    uint64_t rng = 11;
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.read_cache_bytes = -1; /* the writer keeps none: the readers below make their own */
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg;
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    for (int b = 0; b < (test_small() ? 6 : 10); b++) batch(db, &rng, 3000, (int64_t)b * 3000);
    CHECK(gsnap_fence__built(db) > 0);
    CHECK(gsnap_fence__held_bytes(db) == 0);
    gsnap_db_close(db);
    query qs[NQ];
    for (int i = 0; i < NQ; i++) /* hubs, present and absent nodes (ids up to 2x NODES) */
        qs[i] = (query){id(i < 30 ? (uint64_t)i % 3 : test_rand(&rng) % (2 * NODES)), (int)(test_rand(&rng) % 2),
                        i % 2 ? GSNAP_TIME_MAX : (int64_t)(test_rand(&rng) % 35000), GSNAP_VERSION_LATEST};
    /* case 2's budget: half of what case 1 (the default) holds, so that
     * some runs get copies and some do not */
    struct { int64_t bytes; unsigned version; } cases[] = {{-1, 3}, {0, 3}, {0, 3}, {-1, 2}};
    gsnap_nbr *ref = NULL;
    size_t nref = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        o = (gsnap_db_options)GSNAP_DB_OPTIONS_INIT;
        o.version = cases[c].version;
        o.read_cache_bytes = cases[c].bytes; /* not read from a version-2 struct */
        OK(gsnap_db_open(dir, &o, &db));
        size_t n;
        gsnap_nbr *a = answers(db, NULL, qs, NQ, &n);
        if (c == 0) { ref = a; nref = n; }
        for (int r = 0; r < 60 && gsnap_fence__built(db) == 0; r++) free(answers(db, NULL, qs, NQ, &n));
        CHECK_MSG(gsnap_fence__built(db) > 0, "case %zu: no lazy build", c);
        uint64_t held = gsnap_fence__held_bytes(db);
        if (c == 1) cases[2].bytes = (int64_t)(held / 2);
        uint64_t budget = cases[c].version == 2 || cases[c].bytes == 0 ? GSNAP_FENCE_HELD_BYTES
                          : cases[c].bytes < 0 ? 0 : (uint64_t)cases[c].bytes;
        CHECK_MSG(held <= budget, "case %zu: %llu bytes held, budget %llu", c, (unsigned long long)held,
                  (unsigned long long)budget);
        CHECK_MSG(budget == 0 ? held == 0 : held > 0, "case %zu: %llu bytes held, budget %llu", c,
                  (unsigned long long)held, (unsigned long long)budget);
        gsnap_nbr *b = answers(db, NULL, qs, NQ, &n);
        CHECK_MSG(same(ref, nref, b, n), "case %zu: answers through the copies differ from the plain seek's", c);
        free(b);
        if (c) free(a);
        gsnap_db_close(db);
    }
    free(ref);
    test_rmdir(dir);
    free(dir);
}

/* Runs large enough for their copy and table to take the huge-page region
 * (512 KiB or more: mapped in 2 MiB units), read through it by the
 * committing process, against the plain seek of a handle without copies;
 * dense ids (the array by node) and sparse ones (the hash). */
static void large_region(int sparse) {
    g_sparse = sparse;
    char *dir = test_tmpdir("fence-large");
    uint64_t rng = 21 + (uint64_t)sparse, deg, mapped = __atomic_load_n(&gsnap_fence__huge_regions, __ATOMIC_RELAXED);
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    const uint64_t nodes = 60000;
    for (int b = 0; b < 3; b++) { /* the first batch becomes the base (dense ids: the dense layout) */
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (int i = 0; i < 40000; i++) {
            uint64_t s = test_rand(&rng) % nodes, d = i % 16 == 0 ? 7 : test_rand(&rng) % nodes;
            OK(gsnap_batch_add(bt, id(s), id(d), (int64_t)b * 100000 + i));
        }
        OK(gsnap_batch_commit(bt, NULL));
    }
    uint64_t held = gsnap_fence__held_bytes(db);
    CHECK_MSG(held >= ((uint64_t)2 << 20) && __atomic_load_n(&gsnap_fence__huge_regions, __ATOMIC_RELAXED) > mapped,
              "sparse %d: %llu bytes held, no region mapped in 2 MiB units", sparse, (unsigned long long)held);
    /* every node both ways (the first and last records of each copy
     * included; every 7th under GSNAP_TEST_SMALL, e.g. valgrind), then
     * random times */
    uint64_t step = test_small() ? 7 : 1;
    int nall = (int)(2 * ((nodes + 10) / step + 1)), nq = nall + NQ;
    query *qs = malloc((size_t)nq * sizeof *qs);
    for (int i = 0; i < nq; i++)
        qs[i] = i < nall
                    ? (query){id((uint64_t)(i / 2) * step), i % 2, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST}
                    : (query){id(test_rand(&rng) % (nodes + 100)), (int)(test_rand(&rng) % 2),
                              (int64_t)(test_rand(&rng) % 300000), GSNAP_VERSION_LATEST};
    size_t na, nb;
    gsnap_nbr *a = answers(db, NULL, qs, nq, &na);
    gsnap_db_close(db);
    o.read_cache_bytes = -1;
    OK(gsnap_db_open(dir, &o, &db));
    gsnap_nbr *b = answers(db, NULL, qs, nq, &nb);
    CHECK(gsnap_fence__held_bytes(db) == 0);
    CHECK_MSG(same(a, na, b, nb), "sparse %d: answers through the huge-page copies differ from the plain seek's",
              sparse);
    gsnap_db_close(db);
    free(qs);
    free(a);
    free(b);
    test_rmdir(dir);
    free(dir);
}

/* The chunked runs of the newest view: how many, and how many of them hold
 * a copy in direction dir. */
static int held_in_dir(gsnap_db *db, unsigned dir, int *chunked) {
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    int held = 0;
    *chunked = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && rd->runs[i].info.nrec_dir[dir]) {
            ++*chunked;
            held += gsnap_fence__held_dir(db, rd->runs[i].id, dir);
        }
    gsnap_read_end(rd);
    return held;
}

/* NQ queries of direction qdir (-1: either) at explicit versions up to V,
 * so that later commits change no answer. */
static void fixed_queries(query *qs, uint64_t *rng, int qdir, uint64_t V) {
    for (int i = 0; i < NQ; i++)
        qs[i] = (query){id(i < 20 ? (uint64_t)i % 2 : test_rand(rng) % (NODES + 20)),
                        qdir < 0 ? (int)(test_rand(rng) % 2) : qdir,
                        i % 2 ? GSNAP_TIME_MAX : (int64_t)(test_rand(rng) % 40000), 1 + test_rand(rng) % V};
}

/* The budget goes to the directions this process reads (db->queried):
 *   - a process that has asked only in-neighbours copies no run's
 *     out-records, and its views' masks answer IN only;
 *   - once it asks out-neighbours, the runs indexed after that get
 *     out-copies, and when every chunked run is new (after a compaction)
 *     the mask answers both directions;
 *   - a reader that says which direction it will read
 *     (gsnap_store__index_runs, as the samplers' store source does) gets
 *     copies of that direction only;
 * and every answer, in each of those states, equals the plain seek's (the
 * store reopened without copies). */
static void read_directions(void) {
    g_sparse = 0;
    char *dir = test_tmpdir("fence-dirs");
    uint64_t rng = 41, V, deg;
    gsnap_db *db;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_degree(db, NULL, id(0), GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    int nb = test_small() ? 6 : 10, chunked;
    for (int b = 0; b < nb; b++) batch(db, &rng, 3000, (int64_t)b * 3000);
    CHECK_MSG(held_in_dir(db, GSNAP_DIR_IN, &chunked) == chunked && chunked >= 2,
              "in-runs: %d chunked, not all held", chunked);
    int out_held = held_in_dir(db, GSNAP_DIR_OUT, &chunked);
    CHECK_MSG(out_held == 0 && chunked >= 2, "%d of %d out-runs copied, never read", out_held, chunked);
    query q1[NQ], q2[NQ], q3[NQ];
    OK(gsnap_db_version(db, &V));
    fixed_queries(q1, &rng, GSNAP_DIR_IN, V);
    gsnap_read *rd;
    OK(gsnap_read_begin(db, &rd));
    size_t n1, n2, n3, n;
    gsnap_nbr *a1 = answers(db, rd, q1, NQ, &n1);
    CHECK_MSG(rd->mask && rd->mask->bits[GSNAP_DIR_IN] && !rd->mask->bits[GSNAP_DIR_OUT],
              "a process reading in-neighbours only: the mask must answer IN and only IN");
    gsnap_read_end(rd);

    /* out-neighbours asked now: through the index, without copies */
    fixed_queries(q2, &rng, -1, V);
    gsnap_nbr *a2 = answers(db, NULL, q2, NQ, &n2);
    OK(gsnap_read_begin(db, &rd));
    uint64_t before = rd->runs[rd->nruns - 1].id; /* run ids only grow */
    gsnap_read_end(rd);
    /* commits until a chunked run made after the out-reads is live (a merge
     * into the base can leave none for a commit or two) */
    int fresh = 0, nb2 = nb;
    while (!fresh && nb2 < nb + 8) {
        batch(db, &rng, 3000, (int64_t)nb2++ * 3000);
        OK(gsnap_read_begin(db, &rd)); /* a run's copies are decided when it is indexed */
        for (size_t i = 0; i < rd->nruns; i++)
            if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && rd->runs[i].info.nrec_dir[GSNAP_DIR_OUT]) {
                int held = gsnap_fence__held_dir(db, rd->runs[i].id, GSNAP_DIR_OUT), young = rd->runs[i].id > before;
                fresh += young;
                CHECK_MSG(held == young, "run %llu (%s the out-reads): out-copy %d",
                          (unsigned long long)rd->runs[i].id, young ? "after" : "before", held);
            }
        gsnap_read_end(rd);
    }
    CHECK(fresh >= 1);
    OK(gsnap_db_compact(db));
    for (int b = nb2; b < nb2 + 2; b++) batch(db, &rng, 3000, (int64_t)b * 3000);
    CHECK(held_in_dir(db, GSNAP_DIR_OUT, &chunked) == chunked && chunked >= 1);
    CHECK(held_in_dir(db, GSNAP_DIR_IN, &chunked) == chunked);
    OK(gsnap_db_version(db, &V));
    fixed_queries(q3, &rng, -1, V);
    OK(gsnap_read_begin(db, &rd));
    gsnap_nbr *a3 = answers(db, rd, q3, NQ, &n3);
    CHECK_MSG(rd->mask && rd->mask->bits[GSNAP_DIR_IN] && rd->mask->bits[GSNAP_DIR_OUT],
              "both directions read and every run copied: the mask must answer both");
    gsnap_read_end(rd);
    gsnap_db_close(db);

    /* the plain seek's answers */
    o.read_cache_bytes = -1;
    OK(gsnap_db_open(dir, &o, &db));
    gsnap_nbr *b1 = answers(db, NULL, q1, NQ, &n), *b2, *b3;
    CHECK_MSG(same(a1, n1, b1, n), "in-answers through in-copies differ from the plain seek's");
    b2 = answers(db, NULL, q2, NQ, &n);
    CHECK_MSG(same(a2, n2, b2, n), "answers with in-copies only differ from the plain seek's");
    b3 = answers(db, NULL, q3, NQ, &n);
    CHECK_MSG(same(a3, n3, b3, n), "answers through copies of both directions differ from the plain seek's");
    gsnap_db_close(db);

    /* a reader that announces its direction */
    o.read_cache_bytes = 0;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_read_begin(db, &rd));
    gsnap_store__index_runs(db, rd, GSNAP_DIR_OUT);
    gsnap_read_end(rd);
    CHECK(held_in_dir(db, GSNAP_DIR_OUT, &chunked) == chunked && chunked >= 1);
    CHECK_MSG(held_in_dir(db, GSNAP_DIR_IN, &chunked) == 0, "a reader of out-neighbours copied in-runs");
    gsnap_nbr *c3 = answers(db, NULL, q3, NQ, &n);
    CHECK_MSG(same(a3, n3, c3, n), "answers through out-copies only differ from the plain seek's");
    gsnap_db_close(db);
    free(a1), free(a2), free(a3), free(b1), free(b2), free(b3), free(c3);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    read_directions();
    large_region(0);
    large_region(1);
    budgets();
    compact_prunes();
    verified_lru();
    concurrent();
    run(0);
    run(1);
    masks(0, 0);
    masks(1, 0);
    masks(0, 2);
    merge_output_held();
    stale_mask_dropped();
    TEST_DONE();
}
