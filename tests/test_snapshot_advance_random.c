/* tests/test_snapshot_advance_random.c -- `snapshot advance` equals a fresh
 * create on random graphs with adds and deletes, in both directions.
 * Per seed: a random skewed graph (a few hubs), a sampled snapshot with
 * hops 3 and random small caps, then steps that each add edges (some onto
 * a hub), delete random earlier edges, and in some steps delete every edge
 * into (or out of) one node, so that its lists and keys go away, or give a
 * node with no edges its first. One step also moves T (an explicit time,
 * every node touched). After every advance: every list, capped flag and
 * size, the catalog counters, the node count and the cached lists of every
 * hop equal a fresh create at the same (T, V); check clean. The references
 * are fresh creates (tests/test_snapshot_sampled.c checks those against
 * walk sets computed from a plain adjacency).
 * Add-only seeds (no delete ever committed) take the add-only path
 * (snapshot/adv_tail.c: hop 1 from the appended events, cached lists from
 * the stored draw), except in the step that moves T; the other seeds must
 * never take it. Both are checked against fresh creates the same way.
 * Also (found in review): a batch committed while an advance runs (after
 * its read view began) is left for the next advance, not recorded as
 * advanced over; a slab file cut short during an advance gives an error,
 * not a crash (SIGBUS from a mapped file). */
#include "test.h"
#include "snapshot/snapshot_int.h"
#include <signal.h>
#include <sys/wait.h>

extern void (*gsnap_adv__setup_hook)(gsnap_db *db); /* snapshot/advance.c, tests only */
extern uint64_t gsnap_adv__tail_nodes; /* snapshot/adv_tail.c: nodes whose hop 1 came from the appended events */
extern uint64_t gsnap_adv__tail_capped; /* of them, those with a capped D_1 (N_old queried, N_new not) */
extern size_t gsnap_adv__vec_map_bytes; /* snapshot/adv_util.c: vectors this large move into a mapping */
extern uint64_t gsnap_adv__vec_maps;    /* how many did */

typedef struct { uint64_t u, v; } edge;

static gsnap_khop_result *lists(gsnap_db *db, const char *name, uint64_t N) {
    gsnap_snapshot *s;
    gsnap_khop_result *r;
    uint64_t *seeds = malloc(N * sizeof *seeds);
    for (uint64_t i = 0; i < N; i++) seeds[i] = i;
    OK(gsnap_snapshot_open(db, name, &s));
    gsnap_khop_options o = GSNAP_KHOP_OPTIONS_INIT;
    o.force_pread = 1;
    OK(gsnap_khop(s, seeds, N, gsnap_snapshot_get_info(s)->hops, &o, &r));
    gsnap_snapshot_close(s);
    free(seeds);
    return r;
}

static int same_lists(const gsnap_khop_result *a, const gsnap_khop_result *b) {
    size_t nl = a->nseeds * a->hops;
    if (a->nseeds != b->nseeds || a->hops != b->hops) return 0;
    if (memcmp(a->off, b->off, (nl + 1) * sizeof *a->off)) return 0;
    if (memcmp(a->ids, b->ids, a->off[nl] * sizeof *a->ids)) return 0;
    if (memcmp(a->capped, b->capped, nl)) return 0;
    return memcmp(a->exact, b->exact, nl * sizeof *a->exact) == 0;
}

static uint64_t cache_diffs(gsnap_db *db, unsigned hops, uint64_t N) {
    gsnap_snapshot *sa, *sb;
    static uint64_t ca[4096], cb[4096];
    uint64_t bad = 0;
    OK(gsnap_snapshot_open(db, "adv", &sa));
    OK(gsnap_snapshot_open(db, "fresh", &sb));
    for (unsigned h = 1; h <= hops; h++)
        for (uint64_t v = 0; v < N; v++) {
            size_t na = 0, nb = 0;
            int x = gsnap_snapshot_cache(sa, NULL, h, v, ca, 4096, &na, NULL);
            int y = gsnap_snapshot_cache(sb, NULL, h, v, cb, 4096, &nb, NULL);
            CHECK_MSG(x != GSNAP_ERANGE, "hop %u node %llu: cached list longer than the comparison's buffer", h,
                      (unsigned long long)v);
            if (x != y || na != nb || (x == 0 && memcmp(ca, cb, na * 8))) bad++;
        }
    gsnap_snapshot_close(sa);
    gsnap_snapshot_close(sb);
    return bad;
}

static void compare_fresh(gsnap_db *db, const gsnap_snapshot_options *so, uint64_t N, const char *what) {
    gsnap_snapshot_info ia, ib;
    gsnap_snapshot_options fo = *so;
    OK(gsnap_snapshot_info_get(db, "adv", &ia));
    fo.as_of = ia.at_version;
    fo.at_t = ia.at_t;
    memcpy(fo.caps, ia.caps, sizeof fo.caps);
    OK(gsnap_snapshot_create(db, "fresh", &fo, &ib));
    gsnap_khop_result *ra = lists(db, "adv", N), *rb = lists(db, "fresh", N);
    CHECK_MSG(same_lists(ra, rb), "%s: advanced lists differ from a fresh create", what);
    CHECK_MSG(ia.nodes == ib.nodes, "%s: %llu nodes, fresh %llu", what, (unsigned long long)ia.nodes,
              (unsigned long long)ib.nodes);
    for (unsigned h = 0; h < ia.hops; h++)
        CHECK_MSG(ia.stored_ids[h] == ib.stored_ids[h] && ia.exact_ids[h] == ib.exact_ids[h] &&
                      ia.capped[h] == ib.capped[h],
                  "%s hop %u: counters differ", what, h + 1);
    uint64_t bad = cache_diffs(db, ia.hops, N);
    CHECK_MSG(bad == 0, "%s: %llu cached lists differ", what, (unsigned long long)bad);
    uint64_t prob = 1;
    OK(gsnap_snapshot_check(db, NULL, NULL, NULL, &prob));
    CHECK_MSG(prob == 0, "%s: check found %llu problems", what, (unsigned long long)prob);
    gsnap_khop_result_free(ra);
    gsnap_khop_result_free(rb);
    OK(gsnap_snapshot_drop(db, "fresh"));
}

/* a node id skewed towards small ids (hubs) */
static uint64_t skewed(uint64_t *rs, uint64_t N) {
    uint64_t x = test_rand(rs) % N;
    return test_rand(rs) % 3 ? x * x / N : x;
}

/* One step: adds (a burst onto a hub), random deletes, and by kind: 1 =
 * every edge at one node's snapshot side goes, 2 = a node with no edges
 * gets its first. Returns the time of the step. */
static int64_t step(gsnap_db *db, edge *e, size_t *ne, uint64_t N, uint64_t *rs, int64_t t, int kind, int out,
                    int addonly) {
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    size_t add = 3 + test_rand(rs) % 20, hub = test_rand(rs) % 4;
    for (size_t i = 0; i < add; i++) {
        edge x = {skewed(rs, N), i < add / 3 ? hub : skewed(rs, N)};
        if (out) { uint64_t y = x.u; x.u = x.v; x.v = y; }
        e[(*ne)++] = x;
        /* add-only seeds: every 4th add is late (a time before the newest),
         * so that after T is fixed (step 4) events at t <= T still arrive
         * in new versions and must enter the lists */
        int64_t ti = addonly && i % 4 == 3 && t > 40 ? t - 1 - (int64_t)(test_rand(rs) % 30) : ++t;
        OK(gsnap_batch_add(bt, x.u, x.v, ti));
    }
    for (size_t d = 0, nd = addonly ? 0 : 1 + test_rand(rs) % 8; d < nd; d++) {
        edge x = e[test_rand(rs) % *ne];
        OK(gsnap_batch_delete(bt, x.u, x.v, t));
    }
    uint64_t w = test_rand(rs) % N;
    if (kind == 1 && !addonly) /* every edge at w on the snapshot's side (a delete removes all instances up to t) */
        for (size_t i = 0; i < *ne; i++)
            if ((out ? e[i].u : e[i].v) == w) OK(gsnap_batch_delete(bt, e[i].u, e[i].v, t));
    if (kind == 2) { /* N .. N + 9 never had edges: one gets its first, from a hub */
        edge x = {out ? N + test_rand(rs) % 10 : hub, out ? hub : N + test_rand(rs) % 10};
        e[(*ne)++] = x;
        OK(gsnap_batch_add(bt, x.u, x.v, ++t));
    }
    OK(gsnap_batch_commit(bt, NULL));
    return t;
}

static void one_seed(uint64_t seed, int addonly) {
    uint64_t rs = seed * 7919 + 1, N = 60 + test_rand(&rs) % 140;
    int out = seed % 2 == 1;
    char *dir = test_tmpdir("advrand");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    size_t cap = N * 8 + 1000, ne = 0;
    edge *e = malloc(cap * sizeof *e);
    int64_t t = 0;
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (; ne < N * 4; ne++) {
        e[ne] = (edge){skewed(&rs, N), skewed(&rs, N)};
        OK(gsnap_batch_add(bt, e[ne].u, e[ne].v, ++t));
    }
    OK(gsnap_batch_commit(bt, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    so.hops = 3;
    so.dir = out ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
    so.seed = seed;
    so.caps[0] = 3 + (uint32_t)(test_rand(&rs) % 30);
    so.caps[1] = 2 + (uint32_t)(test_rand(&rs) % 10);
    so.caps[2] = 1 + (uint32_t)(test_rand(&rs) % 8);
    OK(gsnap_snapshot_create(db, "adv", &so, NULL));
    unsigned steps = test_small() ? 3 : 7;
    for (unsigned st = 0; st < steps && ne + 200 < cap; st++) {
        t = step(db, e, &ne, N, &rs, t, st % 3, out, addonly);
        gsnap_advance_options ao = GSNAP_ADVANCE_OPTIONS_INIT;
        if (st == 4) ao.at_t = t; /* T moves (from 'now' to a time): every touched node */
        gsnap_advance_report rep;
        uint64_t tail0 = gsnap_adv__tail_nodes;
        OK(gsnap_snapshot_advance(db, "adv", &ao, &rep));
        char what[64];
        snprintf(what, sizeof what, "seed %llu (%s%s) step %u", (unsigned long long)seed, out ? "out" : "in",
                 addonly ? ", add-only" : "", st);
        CHECK_MSG(!addonly || st == 4 || gsnap_adv__tail_nodes != tail0, "%s: the add-only path was not taken", what);
        CHECK_MSG((addonly && st != 4) || gsnap_adv__tail_nodes == tail0, "%s: the add-only path was taken", what);
        compare_fresh(db, &so, N + 10, what);
    }
    free(e);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

static void racing_commit(gsnap_db *db) {
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (uint64_t i = 0; i < 20; i++) OK(gsnap_batch_add(bt, 100 + i, 5, 1000 + (int64_t)i));
    OK(gsnap_batch_commit(bt, NULL));
}

static gsnap_db *small_graph(const char *dir, gsnap_snapshot_options *so) {
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (uint64_t i = 0; i < 400; i++) OK(gsnap_batch_add(bt, i % 100, (i * 7) % 50, (int64_t)i));
    OK(gsnap_batch_commit(bt, NULL));
    so->hop_sets = GSNAP_HOPSETS_SAMPLED;
    so->hops = 2;
    so->dir = GSNAP_DIR_IN;
    so->seed = 3;
    so->caps[0] = 8;
    so->caps[1] = 4;
    OK(gsnap_snapshot_create(db, "adv", so, NULL));
    OK(gsnap_batch_begin(db, &bt));
    OK(gsnap_batch_add(bt, 1, 2, 500));
    OK(gsnap_batch_commit(bt, NULL));
    return db;
}

/* A batch commits inside the advance's read view, before it fixes its
 * target: the advance stops at the view's version (and equals a fresh
 * create there); the next advance takes the batch in. */
static void commit_during_advance(void) {
    char *dir = test_tmpdir("advrace");
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    gsnap_db *db = small_graph(dir, &so);
    uint64_t before;
    OK(gsnap_db_version(db, &before));
    gsnap_adv__setup_hook = racing_commit;
    gsnap_advance_options ao = GSNAP_ADVANCE_OPTIONS_INIT;
    gsnap_advance_report rep;
    OK(gsnap_snapshot_advance(db, "adv", &ao, &rep));
    gsnap_adv__setup_hook = NULL;
    CHECK_MSG(rep.to_version == before, "advanced to %llu; its view saw %llu", (unsigned long long)rep.to_version,
              (unsigned long long)before);
    compare_fresh(db, &so, 130, "after a commit during the advance");
    OK(gsnap_snapshot_advance(db, "adv", &ao, &rep));
    CHECK(rep.to_version == before + 1);
    compare_fresh(db, &so, 130, "the advance after it");
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

static char slab1[2300];
static void cut_slab(void *ctx, const char *phase, uint64_t done, uint64_t total) {
    (void)ctx, (void)done, (void)total;
    if (strcmp(phase, "recompute") == 0 && slab1[0]) {
        if (truncate(slab1, 4096) != 0) _exit(3);
        slab1[0] = 0;
    }
}

/* hop 1's slab file cut to its header while the advance reads it (in a
 * child: a crash shows as a signal): an error with a message, no crash.
 * The child opens a handle of its own (an LMDB environment must not be
 * used across fork), so the parent closes its handle first. */
static void slab_cut_during_advance(void) {
    char *dir = test_tmpdir("advcut");
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    gsnap_db *db = small_graph(dir, &so);
    gsnap_db_close(db);
    db = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
        dopt.sync = GSNAP_SYNC_NONE;
        if (gsnap_db_open(dir, &dopt, &db)) _exit(2);
        gsnap_snap__slab_path(db, "adv", 1, slab1, sizeof slab1);
        gsnap_advance_options ao = GSNAP_ADVANCE_OPTIONS_INIT;
        ao.progress = cut_slab;
        gsnap_advance_report rep;
        int rc = gsnap_snapshot_advance(db, "adv", &ao, &rep);
        const char *m = gsnap_db_errmsg(db);
        int code = rc != 0 && m && strstr(m, "hop 1") ? 0 : 1;
        gsnap_db_close(db); /* the child's copies freed (valgrind checks its exit too) */
        free(dir);
        _exit(code);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the advance over a cut slab file: %s %d",
              WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    unsigned seeds = test_small() ? 2 : 6;
    for (uint64_t s = 1; s <= seeds; s++) one_seed(s, 0);
    uint64_t capped0 = gsnap_adv__tail_capped;
    for (uint64_t s = 1; s <= seeds; s++) one_seed(100 + s, 1);
    /* the add-only seeds' capped lists (small caps, hubs) took the union with
     * the appended adds too, and still equal fresh creates */
    CHECK_MSG(gsnap_adv__tail_capped > capped0, "no capped node took the add-only path");
    /* The same with every vector of 1 KiB or more in a mapping of its own,
     * grown by mremap (at the default 4 MiB only large graphs get there):
     * the vectors that cross the line are copied once, the rest grow in
     * place or move, and the advances must still equal fresh creates. */
    size_t line = gsnap_adv__vec_map_bytes;
    gsnap_adv__vec_map_bytes = 1024;
    gsnap_adv__vec_maps = 0;
    one_seed(7, 0);
    one_seed(107, 1);
    CHECK(gsnap_adv__vec_maps > 0);
    gsnap_adv__vec_map_bytes = line;
    commit_during_advance();
    slab_cut_during_advance();
    TEST_DONE();
}
