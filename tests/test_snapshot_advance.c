/* tests/test_snapshot_advance.c -- `snapshot advance` equals a fresh create.
 *   1. PGP events in 12 time-ordered steps, each also deleting some earlier
 *      edges: after every step the advanced snapshot's lists, capped flags,
 *      sizes and catalog counters equal a fresh create at the same (T, V)
 *      (random graph when data/pgp.tsv is missing or under valgrind);
 *      check clean after each advance.
 *   2. A reader that holds a read view across two advances keeps reading
 *      its version (slab lists and cached lists unchanged).
 *   3. A process killed in the middle of an advance (after slab blocks were
 *      written, before the commit) leaves the old version, check clean; the
 *      next advance still equals a fresh create.
 *   4. 100 small advances: the slab files stay within 2x a fresh build.
 *   5. Grow-only steps (appends, no deletes) on a random graph with small
 *      caps: the incremental path merges only the members added to D_{h-1}
 *      and skips nodes whose full list nothing can enter. Each advance
 *      equals a fresh create, and the hop-3 recompute count is below the
 *      number of nodes with a changed input (the old rule), so the skip
 *      did trigger.
 *   6. A new in-neighbour that stays out of a capped hop-1 list: the list
 *      keeps its place (no hop-1 block written), its size is updated. */
#include "test.h"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

typedef struct { uint64_t u, v; int64_t t; } ev;

static int cmp_ev(const void *a, const void *b) {
    const ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static ev *load_events(size_t *n, uint64_t *N) {
    int small = test_small();
    FILE *f = small ? NULL : fopen("data/pgp.tsv", "r");
    size_t cap = 1 << 16, m = 0;
    ev *e = malloc(cap * sizeof *e);
    uint64_t rs = 99;
    *N = 0;
    if (f) {
        unsigned long long u, v;
        long long t;
        while (fscanf(f, "%llu %llu %lld", &u, &v, &t) == 3) {
            if (m == cap) { cap *= 2; e = realloc(e, cap * sizeof *e); }
            e[m++] = (ev){u, v, t};
            if (u + 1 > *N) *N = u + 1;
            if (v + 1 > *N) *N = v + 1;
        }
        fclose(f);
    } else {
        *N = 400;
        for (m = 0; m < 3000; m++) e[m] = (ev){test_rand(&rs) % 400, test_rand(&rs) % 400, (int64_t)m + 1};
        for (int i = 0; i < 40; i++) e[m++] = (ev){(uint64_t)i + 5, 0, (int64_t)m + 1}; /* hub */
    }
    qsort(e, m, sizeof *e, cmp_ev);
    if (m > 200000) m = 200000; /* the first third of the PGP stream: ~20 s */
    *n = m;
    return e;
}

/* events [a, b) plus deletes of some earlier ones (time = last time) */
static uint64_t ingest(gsnap_db *db, const ev *e, size_t a, size_t b, uint64_t *rs) {
    gsnap_batch *bt;
    uint64_t ver;
    OK(gsnap_batch_begin(db, &bt));
    for (size_t i = a; i < b; i++) OK(gsnap_batch_add(bt, e[i].u, e[i].v, e[i].t));
    int64_t tl = e[b - 1].t;
    for (size_t d = 0; a && d < (b - a) / 50 + 1; d++) {
        size_t i = test_rand(rs) % a;
        OK(gsnap_batch_delete(bt, e[i].u, e[i].v, tl));
    }
    OK(gsnap_batch_commit(bt, &ver));
    return ver;
}

static gsnap_khop_result *all_lists(gsnap_db *db, const char *name, uint64_t N, gsnap_read *rd) {
    gsnap_snapshot *s;
    gsnap_khop_result *r;
    uint64_t *seeds = malloc(N * sizeof *seeds);
    for (uint64_t i = 0; i < N; i++) seeds[i] = i;
    OK(gsnap_snapshot_open(db, name, &s));
    gsnap_khop_options o = GSNAP_KHOP_OPTIONS_INIT;
    o.rd = rd;
    o.force_pread = 1;
    OK(gsnap_khop(s, seeds, N, gsnap_snapshot_get_info(s)->hops, &o, &r));
    gsnap_snapshot_close(s);
    free(seeds);
    return r;
}

static int same_result(const gsnap_khop_result *a, const gsnap_khop_result *b) {
    size_t nl = a->nseeds * a->hops;
    if (a->nseeds != b->nseeds || a->hops != b->hops) return 0;
    if (memcmp(a->off, b->off, (nl + 1) * sizeof *a->off)) return 0;
    if (memcmp(a->ids, b->ids, a->off[nl] * sizeof *a->ids)) return 0;
    if (memcmp(a->capped, b->capped, nl)) return 0;
    return memcmp(a->exact, b->exact, nl * sizeof *a->exact) == 0;
}

static void compare_fresh(gsnap_db *db, const gsnap_snapshot_options *so, uint64_t N, const char *what) {
    gsnap_snapshot_info ia, ib;
    gsnap_snapshot_options fo = *so;
    OK(gsnap_snapshot_info_get(db, "adv", &ia));
    fo.as_of = ia.at_version;
    fo.at_t = ia.at_t;
    memcpy(fo.caps, ia.caps, sizeof fo.caps);
    OK(gsnap_snapshot_create(db, "fresh", &fo, &ib));
    gsnap_khop_result *ra = all_lists(db, "adv", N, NULL), *rb = all_lists(db, "fresh", N, NULL);
    CHECK_MSG(same_result(ra, rb), "%s: advanced lists differ from a fresh create", what);
    CHECK(ia.nodes == ib.nodes);
    for (unsigned h = 0; h < ia.hops; h++)
        CHECK_MSG(ia.stored_ids[h] == ib.stored_ids[h] && ia.exact_ids[h] == ib.exact_ids[h] &&
                      ia.capped[h] == ib.capped[h],
                  "%s hop %u: counters differ", what, h + 1);
    /* cached lists: equal too (all of them are generation 0 here) */
    gsnap_snapshot *sa, *sb;
    OK(gsnap_snapshot_open(db, "adv", &sa));
    OK(gsnap_snapshot_open(db, "fresh", &sb));
    uint64_t ca[64], cb[64], bad = 0;
    for (uint64_t v = 0; v < N; v++) {
        size_t na = 0, nb = 0;
        int x = gsnap_snapshot_cache(sa, NULL, 1, v, ca, 64, &na, NULL);
        int y = gsnap_snapshot_cache(sb, NULL, 1, v, cb, 64, &nb, NULL);
        if (x != y || na != nb || (x == 0 && memcmp(ca, cb, na * 8))) bad++;
    }
    CHECK_MSG(bad == 0, "%s: %llu cached lists differ", what, (unsigned long long)bad);
    gsnap_snapshot_close(sa);
    gsnap_snapshot_close(sb);
    uint64_t prob = 1;
    OK(gsnap_snapshot_check(db, NULL, NULL, NULL, &prob));
    CHECK_MSG(prob == 0, "%s: check found %llu problems", what, (unsigned long long)prob);
    gsnap_khop_result_free(ra);
    gsnap_khop_result_free(rb);
    OK(gsnap_snapshot_drop(db, "fresh"));
}

/* A reader in another process: opens the db, begins a view, reads every
 * list, says so on `ready`, waits for `go`, reads again in the same view;
 * exits 0 when both reads are equal. */
static pid_t spawn_reader(const char *dir, uint64_t N, int *ready_fd, int *go_fd) {
    int p1[2], p2[2];
    if (pipe(p1) || pipe(p2)) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_db *db;
        gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
        gsnap_read *rd;
        gsnap_snapshot *s;
        gsnap_khop_result *a, *b;
        char c = 'r';
        uint64_t *seeds = malloc(N * sizeof *seeds);
        for (uint64_t i = 0; i < N; i++) seeds[i] = i;
        gsnap_khop_options ko = GSNAP_KHOP_OPTIONS_INIT;
        if (gsnap_db_open(dir, &o, &db) || gsnap_snapshot_open(db, "adv", &s) || gsnap_read_begin(db, &rd)) _exit(3);
        ko.rd = rd;
        if (gsnap_khop(s, seeds, N, 3, &ko, &a)) _exit(5);
        if (write(p1[1], &c, 1) != 1 || read(p2[0], &c, 1) != 1) _exit(4);
        if (gsnap_khop(s, seeds, N, 3, &ko, &b)) _exit(6);
        _exit(same_result(a, b) ? 0 : 1);
    }
    close(p1[1]);
    close(p2[0]);
    *ready_fd = p1[0];
    *go_fd = p2[1];
    return pid;
}

static void die_at_hop3(void *ctx, const char *phase, uint64_t done, uint64_t total) {
    (void)ctx; (void)total;
    if (strcmp(phase, "write") == 0 && done == 2) raise(SIGKILL);
}

static uint64_t slab_bytes(const char *dir, const char *name, unsigned hops) {
    uint64_t t = 0;
    for (unsigned h = 1; h <= hops; h++) {
        char p[700];
        struct stat st;
        snprintf(p, sizeof p, "%s/snapshots/%s/hop%u.slab", dir, name, h);
        if (stat(p, &st) == 0) t += (uint64_t)st.st_size;
    }
    return t;
}

/* 5: grow-only advances with pruning (see the header) */
static int list_eq(const gsnap_khop_result *a, const gsnap_khop_result *b, size_t i) {
    size_t na = a->off[i + 1] - a->off[i], nb = b->off[i + 1] - b->off[i];
    return na == nb && a->capped[i] == b->capped[i] &&
           memcmp(a->ids + a->off[i], b->ids + b->off[i], na * sizeof *a->ids) == 0;
}

static void grow_only(void) {
    const uint64_t N = 300;
    uint64_t rs = 11;
    char *dir = test_tmpdir("advgrow");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    size_t ne = 0, cap = 8192;
    uint64_t(*edges)[2] = malloc(cap * sizeof *edges);
    int64_t t = 1;
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (; ne < 2400; ne++) {
        edges[ne][0] = test_rand(&rs) % N;
        edges[ne][1] = test_rand(&rs) % N;
        OK(gsnap_batch_add(bt, edges[ne][0], edges[ne][1], t++));
    }
    OK(gsnap_batch_commit(bt, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    so.hops = 3;
    so.caps[0] = 8; so.caps[1] = 6; so.caps[2] = 5;
    OK(gsnap_snapshot_create(db, "adv", &so, NULL));
    unsigned pruned_steps = 0, steps = test_small() ? 4 : 8;
    for (unsigned st = 0; st < steps; st++) {
        gsnap_khop_result *before = all_lists(db, "adv", N, NULL);
        size_t from = ne;
        OK(gsnap_batch_begin(db, &bt));
        for (; ne < from + 6; ne++) {
            edges[ne][0] = test_rand(&rs) % N;
            edges[ne][1] = test_rand(&rs) % N;
            OK(gsnap_batch_add(bt, edges[ne][0], edges[ne][1], t++));
        }
        OK(gsnap_batch_commit(bt, NULL));
        gsnap_advance_report rep;
        OK(gsnap_snapshot_advance(db, "adv", NULL, &rep));
        char what[48];
        snprintf(what, sizeof what, "grow-only step %u", st);
        compare_fresh(db, &so, N, what);
        /* nodes with a changed input at hop 3 (what the advance recomputed
         * before the pruning): targets of the new edges and
         * the out-neighbours (edge u -> v, direction in) of every u whose
         * D_2(u) or capped flag changed */
        gsnap_khop_result *after = all_lists(db, "adv", N, NULL);
        uint8_t *cand = calloc(N, 1);
        uint64_t ncand = 0;
        for (size_t i = from; i < ne; i++) { /* a new in-neighbour (not a repeat of an earlier edge) */
            size_t k = 0;
            while (k < i && (edges[k][0] != edges[i][0] || edges[k][1] != edges[i][1])) k++;
            if (k == i) cand[edges[i][1]] = 1;
        }
        for (size_t i = 0; i < ne; i++) {
            uint64_t u = edges[i][0];
            if (!list_eq(before, after, u * 3 + 1)) cand[edges[i][1]] = 1;
        }
        for (uint64_t v = 0; v < N; v++) ncand += cand[v];
        printf("grow-only step %u: hop 3 recomputed %llu of %llu nodes with a changed input\n", st,
               (unsigned long long)rep.recomputed[2], (unsigned long long)ncand);
        CHECK_MSG(rep.recomputed[2] <= ncand, "%s: recomputed more than the changed inputs", what);
        pruned_steps += rep.recomputed[2] < ncand;
        free(cand);
        gsnap_khop_result_free(before);
        gsnap_khop_result_free(after);
    }
    CHECK_MSG(pruned_steps > 0, "no grow-only step skipped a node: the pruning never triggered");
    free(edges);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* 6: a capped hop-1 list whose members stay (a new in-neighbour that does
 * not enter the bottom c_1) keeps its place in the slab: only its record
 * (exact size) changes, no hop-1 block is written. */
static void capped_stays(void) {
    const uint64_t N = 200;
    char *dir = test_tmpdir("advstay");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    gsnap_batch *bt;
    int64_t t = 1;
    OK(gsnap_db_open(dir, &dopt, &db));
    OK(gsnap_batch_begin(db, &bt));
    for (uint64_t x = 1; x <= 60; x++) OK(gsnap_batch_add(bt, x, 0, t++)); /* hub 0: 60 in-neighbours */
    for (uint64_t x = 1; x < N; x++) OK(gsnap_batch_add(bt, x, (x * 7) % N, t++));
    OK(gsnap_batch_commit(bt, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    so.hops = 2;
    so.caps[0] = 8; so.caps[1] = 8;
    OK(gsnap_snapshot_create(db, "adv", &so, NULL));
    unsigned stayed = 0;
    for (uint64_t x = 61; x < 71; x++) {
        gsnap_khop_result *before = all_lists(db, "adv", N, NULL);
        OK(gsnap_batch_begin(db, &bt));
        OK(gsnap_batch_add(bt, x, 0, t++));
        OK(gsnap_batch_commit(bt, NULL));
        gsnap_advance_report rep;
        OK(gsnap_snapshot_advance(db, "adv", NULL, &rep));
        gsnap_khop_result *after = all_lists(db, "adv", N, NULL);
        CHECK(rep.touched_nodes == 1 && rep.changed[0] == 1); /* the hub's exact size */
        if (list_eq(before, after, 0)) {
            stayed++;
            CHECK_MSG(rep.blocks_written[0] == 0, "edge %llu -> 0: the unchanged capped list was rewritten (%llu blocks)",
                      (unsigned long long)x, (unsigned long long)rep.blocks_written[0]);
        }
        gsnap_khop_result_free(before);
        gsnap_khop_result_free(after);
        compare_fresh(db, &so, N, "capped list stays");
    }
    CHECK_MSG(stayed > 0, "no new in-neighbour stayed out of the hub's list");
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* The event array, reachable from a static: the reader child (spawn_reader)
 * _exits while main's copy may live only in a register, and valgrind would
 * count it as definitely lost in that child. */
static ev *volatile events_kept; /* volatile: a write-only static would be optimized away */

int main(void) {
    size_t n;
    uint64_t N, rs = 7;
    ev *e = events_kept = load_events(&n, &N);
    char *dir = test_tmpdir("adv");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    const unsigned steps = 10;
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    so.hops = 3;
    so.caps[0] = 12; so.caps[1] = 8; so.caps[2] = 6;
    size_t done = n / 2;
    ingest(db, e, 0, done, &rs);
    OK(gsnap_snapshot_create(db, "adv", &so, NULL));
    for (unsigned st = 1; st <= steps; st++) {
        size_t b = n / 2 + (n - n / 2) * st / steps;
        ingest(db, e, done, b, &rs);
        done = b;
        pid_t rpid = 0;
        int ready_fd = -1, go_fd = -1;
        gsnap_khop_result *before = NULL;
        char c;
        if (st == 3) { /* 2: a reader (another process) holds the old version across two advances */
            before = all_lists(db, "adv", N, NULL);
            rpid = spawn_reader(dir, N, &ready_fd, &go_fd);
            CHECK(read(ready_fd, &c, 1) == 1);
        }
        gsnap_advance_report rep;
        int arc = gsnap_snapshot_advance(db, "adv", NULL, &rep);
        if (arc) { fprintf(stderr, "advance: %s (%s)\n", gsnap_strerror(arc), gsnap_db_errmsg(db)); return 1; }
        CHECK(rep.snap_version == st + (st > 3));
        printf("step %u: %llu touched, recomputed %llu/%llu/%llu, changed %llu/%llu/%llu, blocks %llu (reused %llu)\n", st,
               (unsigned long long)rep.touched_nodes, (unsigned long long)rep.recomputed[0],
               (unsigned long long)rep.recomputed[1], (unsigned long long)rep.recomputed[2],
               (unsigned long long)rep.changed[0], (unsigned long long)rep.changed[1], (unsigned long long)rep.changed[2],
               (unsigned long long)(rep.blocks_written[0] + rep.blocks_written[1] + rep.blocks_written[2]),
               (unsigned long long)(rep.blocks_reused[0] + rep.blocks_reused[1] + rep.blocks_reused[2]));
        char what[32];
        snprintf(what, sizeof what, "step %u", st);
        compare_fresh(db, &so, N, what);
        if (st == 3) {
            /* a second advance while the reader still holds its view: it
             * would reuse the blocks the first one freed, were they free */
            ingest(db, e, done - 10, done, &rs);
            OK(gsnap_snapshot_advance(db, "adv", NULL, &rep));
            c = 'g';
            CHECK(write(go_fd, &c, 1) == 1);
            int status = 0;
            waitpid(rpid, &status, 0);
            CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader's version changed under it (%d)", status);
            close(ready_fd);
            close(go_fd);
            gsnap_khop_result *now = all_lists(db, "adv", N, NULL);
            CHECK_MSG(!same_result(before, now), "the advances should have changed something");
            gsnap_khop_result_free(before);
            gsnap_khop_result_free(now);
            compare_fresh(db, &so, N, "after the held reader");
        }
    }
    /* 3: a process killed in the middle of an advance */
    {
        gsnap_khop_result *before = all_lists(db, "adv", N, NULL);
        gsnap_snapshot_info i0, i1;
        OK(gsnap_snapshot_info_get(db, "adv", &i0));
        ingest(db, e, 0, n / 3, &rs); /* re-adds plus deletes: plenty changes */
        pid_t pid = fork();
        if (pid == 0) {
            gsnap_db *cdb;
            gsnap_db_options co = GSNAP_DB_OPTIONS_INIT;
            if (gsnap_db_open(dir, &co, &cdb)) _exit(3);
            gsnap_advance_options ao = GSNAP_ADVANCE_OPTIONS_INIT;
            ao.progress = die_at_hop3; /* once the blocks of hops 1 and 2 are written */
            gsnap_snapshot_advance(cdb, "adv", &ao, NULL);
            _exit(4); /* not reached when the kill point works */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child should be killed mid-advance");
        OK(gsnap_snapshot_info_get(db, "adv", &i1));
        CHECK(i1.snap_version == i0.snap_version && i1.at_version == i0.at_version);
        gsnap_khop_result *after = all_lists(db, "adv", N, NULL);
        CHECK_MSG(same_result(before, after), "a killed advance changed the snapshot");
        uint64_t prob = 1;
        OK(gsnap_snapshot_check(db, NULL, NULL, NULL, &prob));
        CHECK_MSG(prob == 0, "check after a killed advance: %llu problems", (unsigned long long)prob);
        gsnap_khop_result_free(before);
        gsnap_khop_result_free(after);
        OK(gsnap_snapshot_advance(db, "adv", NULL, NULL));
        compare_fresh(db, &so, N, "after the killed advance");
    }
    /* 4: 100 small advances, files within 2x a fresh build */
    {
        unsigned rounds = test_small() ? 20 : 100;
        for (unsigned r = 0; r < rounds; r++) {
            size_t a = test_rand(&rs) % (n - 20);
            ingest(db, e, a, a + 20, &rs);
            OK(gsnap_snapshot_advance(db, "adv", NULL, NULL));
        }
        gsnap_snapshot_info ia;
        OK(gsnap_snapshot_info_get(db, "adv", &ia));
        gsnap_snapshot_options fo = so;
        OK(gsnap_snapshot_create(db, "fresh", &fo, NULL));
        uint64_t ba = slab_bytes(dir, "adv", 3), bf = slab_bytes(dir, "fresh", 3);
        printf("after %u more advances: %llu slab bytes, a fresh build %llu (%.2fx)\n", rounds,
               (unsigned long long)ba, (unsigned long long)bf, (double)ba / (double)bf);
        CHECK_MSG(ba <= 2 * bf, "advanced slabs %llu bytes > 2 x %llu", (unsigned long long)ba, (unsigned long long)bf);
        OK(gsnap_snapshot_drop(db, "fresh"));
        compare_fresh(db, &so, N, "after 100 advances");
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    free(e);
    grow_only();
    capped_stays();
    TEST_DONE();
}
