/* tests/test_snapshot.c -- N_h(v) from the slabs against an independent BFS
 * over the store at the same (T, V): random graphs (several seeds, with
 * deletes and hubs so that caps apply), two snapshots at different (T, V)
 * on one store, both join paths (sort-merge spilling at a 1 MiB budget, and
 * in memory), and the io_uring and pread
 * paths giving identical answers. */
#include "test.h"
#include <stdlib.h>

#define CAP GSNAP_SNAPSHOT_CAP

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct in-neighbours of v at (T, V) (store query). */
static size_t nbrs_at(gsnap_db *db, uint64_t v, int64_t T, uint64_t V, uint64_t **out, size_t *cap) {
    size_t n = 0;
    static gsnap_nbr *buf;
    static size_t bcap;
    OK(gsnap_neighbors(db, NULL, v, GSNAP_DIR_IN, T, V, buf, bcap, &n));
    if (n > bcap) {
        bcap = n * 2;
        buf = realloc(buf, bcap * sizeof *buf);
        OK(gsnap_neighbors(db, NULL, v, GSNAP_DIR_IN, T, V, buf, bcap, &n));
    }
    if (n > *cap) { *cap = n * 2; *out = realloc(*out, *cap * sizeof **out); }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || (*out)[m - 1] != buf[i].node) (*out)[m++] = buf[i].node;
    return m;
}

/* Adjacency of every node 0..N-1 at (T, V), as CSR. */
typedef struct { size_t *off; uint64_t *adj; } csr;

static csr load_csr(gsnap_db *db, uint64_t N, int64_t T, uint64_t V) {
    csr g;
    uint64_t *tmp = NULL;
    size_t cap = 0, total = 0, acap = 1024;
    g.off = calloc(N + 1, sizeof *g.off);
    g.adj = malloc(acap * sizeof *g.adj);
    for (uint64_t v = 0; v < N; v++) {
        size_t m = nbrs_at(db, v, T, V, &tmp, &cap);
        if (total + m > acap) { acap = (total + m) * 2; g.adj = realloc(g.adj, acap * sizeof *g.adj); }
        memcpy(g.adj + total, tmp, m * sizeof *tmp);
        total += m;
        g.off[v + 1] = total;
    }
    free(tmp);
    return g;
}

/* Compare every node's N_1..N_k from the snapshot with a BFS over g. */
static void verify(gsnap_snapshot *s, const csr *g, uint64_t N, unsigned k, const char *what) {
    uint64_t *seeds = malloc(N * sizeof *seeds);
    for (uint64_t i = 0; i < N; i++) seeds[i] = i;
    gsnap_khop_result *ru = NULL, *rp = NULL;
    gsnap_khop_options o = GSNAP_KHOP_OPTIONS_INIT;
    o.queue_depth = 32;
    OK(gsnap_khop(s, seeds, N, k, &o, &ru));
    o.force_pread = 1;
    OK(gsnap_khop(s, seeds, N, k, &o, &rp));
    CHECK(rp->stats.used_uring == 0);
    /* 5: identical answers from both paths */
    CHECK(ru->off[N * k] == rp->off[N * k]);
    CHECK(memcmp(ru->off, rp->off, (N * k + 1) * sizeof *ru->off) == 0);
    CHECK(memcmp(ru->ids, rp->ids, ru->off[N * k] * sizeof *ru->ids) == 0);
    CHECK(memcmp(ru->capped, rp->capped, N * k) == 0);
    int *dist = malloc(N * sizeof *dist);
    uint64_t *queue = malloc(N * sizeof *queue), *set = malloc(N * sizeof *set);
    uint64_t bad = 0, capped = 0, exact_lists = 0;
    for (uint64_t v = 0; v < N; v++) {
        for (uint64_t i = 0; i < N; i++) dist[i] = -1;
        size_t qh = 0, qt = 0;
        dist[v] = 0;
        queue[qt++] = v;
        while (qh < qt) {
            uint64_t x = queue[qh++];
            if (dist[x] >= (int)k) continue;
            for (size_t j = g->off[x]; j < g->off[x + 1]; j++) {
                uint64_t y = g->adj[j];
                if (dist[y] < 0) { dist[y] = dist[x] + 1; queue[qt++] = y; }
            }
        }
        for (unsigned h = 1; h <= k; h++) {
            size_t ns = 0;
            for (size_t i = 0; i < qt; i++)
                if (dist[queue[i]] == (int)h) set[ns++] = queue[i];
            qsort(set, ns, sizeof *set, cmp_u64);
            size_t idx = v * k + h - 1, a = ru->off[idx], n = ru->off[idx + 1] - a;
            const uint64_t *l = ru->ids + a;
            int ok = 1;
            if (ns <= CAP) {
                ok = n == ns && memcmp(l, set, ns * sizeof *set) == 0 && !ru->capped[idx];
                exact_lists += ns > 0;
            } else {
                capped++;
                ok = n == CAP && ru->capped[idx] && ru->exact[idx] == ns;
                for (size_t i = 0; ok && i < n; i++) {
                    if (i && l[i] <= l[i - 1]) ok = 0; /* ascending, no duplicates */
                    if (!bsearch(&l[i], set, ns, sizeof *set, cmp_u64)) ok = 0; /* subset */
                }
            }
            if (!ok && bad++ < 5)
                fprintf(stderr, "%s: node %llu hop %u: exact %zu, got %zu (capped %d)\n", what,
                        (unsigned long long)v, h, ns, n, ru->capped[idx]);
        }
    }
    CHECK_MSG(bad == 0, "%s: %llu wrong lists", what, (unsigned long long)bad);
    CHECK_MSG(capped > 0, "%s: the test graph should exercise the cap", what);
    printf("%s: %llu exact non-empty lists, %llu capped lists, uring=%d direct=%d blocks=%llu\n", what,
           (unsigned long long)exact_lists, (unsigned long long)capped, ru->stats.used_uring,
           ru->stats.used_direct, (unsigned long long)ru->stats.blocks_read);
    free(dist); free(queue); free(set); free(seeds);
    gsnap_khop_result_free(ru);
    gsnap_khop_result_free(rp);
}

int main(void) {
    int small = test_small();
    unsigned rounds = small ? 1 : 3;
    for (unsigned round = 0; round < rounds; round++) {
        uint64_t rs = 1000 + round;
        uint64_t N = small ? 1100 : 1500 + 500 * round;
        char *dir = test_tmpdir("snap");
        gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
        dopt.sync = GSNAP_SYNC_NONE;
        gsnap_db *db;
        OK(gsnap_db_open(dir, &dopt, &db));
        /* 4 batches; times 1..400; some deletes; hub 0 with many in-edges,
         * hub 1 whose in-neighbours have high in-degree (capped at hop 2) */
        uint64_t versions[4];
        for (int bt = 0; bt < 4; bt++) {
            gsnap_batch *b;
            OK(gsnap_batch_begin(db, &b));
            for (uint64_t e = 0; e < N; e++) {
                uint64_t u = test_rand(&rs) % N, v = test_rand(&rs) % N;
                int64_t t = (int64_t)(test_rand(&rs) % 400) + 1;
                OK(gsnap_batch_add(b, u, v, t));
                if (test_rand(&rs) % 10 == 0) OK(gsnap_batch_delete(b, u, v, t + 5));
            }
            for (uint64_t u = 2; u < 2 + 200; u++) OK(gsnap_batch_add(b, (u * 7 + bt * 13) % N, 0, 10 * bt + 1));
            OK(gsnap_batch_add(b, 0, 1, 3));
            OK(gsnap_batch_add(b, 1, 1, 3)); /* self loop */
            OK(gsnap_batch_add(b, 5, 5, 3));
            OK(gsnap_batch_commit(b, &versions[bt]));
        }
        gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
        so.hop_sets = GSNAP_HOPSETS_EXACT;
        so.hops = 3;
        so.fanouts[2] = 5;
        so.mem_budget = 1u << 20; /* forces spilled runs */
        so.seed = round;
        /* one snapshot of each round through the external sort-merge path
         * (spilling at 1 MiB), the other through the in-memory join */
        so.flags = round % 2 ? 0 : GSNAP_SNAPSHOT_SORT_MERGE;
        /* snapshot a: now, latest */
        gsnap_snapshot_info info;
        OK(gsnap_snapshot_create(db, "a", &so, &info));
        CHECK(info.complete && info.hops == 3 && info.at_version == versions[3]);
        /* the other join path gives byte-identical slab files */
        so.flags ^= GSNAP_SNAPSHOT_SORT_MERGE;
        OK(gsnap_snapshot_create(db, "a2", &so, NULL));
        so.flags ^= GSNAP_SNAPSHOT_SORT_MERGE;
        for (unsigned h = 1; h <= 3; h++) {
            char p1[1024], p2[1024];
            snprintf(p1, sizeof p1, "%s/snapshots/a/hop%u.slab", dir, h);
            snprintf(p2, sizeof p2, "%s/snapshots/a2/hop%u.slab", dir, h);
            FILE *f1 = fopen(p1, "rb"), *f2 = fopen(p2, "rb");
            CHECK(f1 && f2);
            int same = f1 && f2;
            while (same) {
                int c1 = fgetc(f1), c2 = fgetc(f2);
                if (c1 != c2) same = 0;
                if (c1 == EOF) break;
            }
            CHECK_MSG(same, "hop %u: sort-merge and in-memory joins differ", h);
            if (f1) fclose(f1);
            if (f2) fclose(f2);
        }
        OK(gsnap_snapshot_drop(db, "a2"));
        /* snapshot b: at t = 200 as of version 3 */
        so.at_t = 200;
        so.as_of = versions[2];
        so.flags ^= GSNAP_SNAPSHOT_SORT_MERGE;
        OK(gsnap_snapshot_create(db, "b", &so, &info));
        CHECK(info.at_t == 200 && info.at_version == versions[2]);
        CHECK(gsnap_snapshot_create(db, "b", &so, NULL) == GSNAP_EEXIST);
        /* more writes after the snapshots must not change them */
        gsnap_batch *b;
        OK(gsnap_batch_begin(db, &b));
        for (uint64_t e = 0; e < N; e++) OK(gsnap_batch_add(b, test_rand(&rs) % N, test_rand(&rs) % N, 50));
        OK(gsnap_batch_commit(b, NULL));

        gsnap_snapshot *sa, *sb;
        OK(gsnap_snapshot_open(db, "a", &sa));
        OK(gsnap_snapshot_open(db, "b", &sb));
        csr ga = load_csr(db, N, GSNAP_TIME_MAX, versions[3]);
        csr gb = load_csr(db, N, 200, versions[2]);
        verify(sa, &ga, N, 3, "snapshot a (now, v4)");
        verify(sb, &gb, N, 3, "snapshot b (t=200, v3)");
        /* a fully exact hop-limited query, and seeds without edges */
        uint64_t none[2] = {N + 10, N + 11};
        gsnap_khop_result *r;
        OK(gsnap_khop(sa, none, 2, 2, NULL, &r));
        CHECK(r->off[4] == 0);
        gsnap_khop_result_free(r);
        CHECK(gsnap_khop(sa, none, 2, 4, NULL, &r) == GSNAP_EINVAL);
        /* an options struct of an unknown version is refused, as every other
         * options struct is (found in review: any version was read as 2) */
        gsnap_khop_options bad = GSNAP_KHOP_OPTIONS_INIT;
        bad.version = 0;
        CHECK(gsnap_khop(sa, none, 2, 2, &bad, &r) == GSNAP_EINVAL && r == NULL);
        CHECK(strstr(gsnap_db_errmsg(db), "options version 0") != NULL);
        bad.version = GSNAP_KHOP_OPTIONS_VERSION + 1;
        CHECK(gsnap_khop(sa, none, 2, 2, &bad, &r) == GSNAP_EINVAL && r == NULL);
        /* the message of a missing snapshot names it, not the call before
         * (found in review: the previous error's text was left in place) */
        gsnap_snapshot_info gone;
        CHECK(gsnap_snapshot_info_get(db, "nosuch", &gone) == GSNAP_NOTFOUND);
        CHECK_MSG(strstr(gsnap_db_errmsg(db), "nosuch") != NULL, "message: %s", gsnap_db_errmsg(db));
        uint64_t problems = 9;
        OK(gsnap_snapshot_check(db, NULL, NULL, NULL, &problems));
        CHECK(problems == 0);
        /* list, drop */
        gsnap_snapshot_info *all;
        size_t n;
        OK(gsnap_snapshot_list(db, &all, &n));
        CHECK(n == 2 && strcmp(all[0].name, "a") == 0 && strcmp(all[1].name, "b") == 0);
        gsnap_free(all);
        gsnap_snapshot_close(sa);
        gsnap_snapshot_close(sb);
        OK(gsnap_snapshot_drop(db, "b"));
        CHECK(gsnap_snapshot_open(db, "b", &sb) == GSNAP_NOTFOUND);
        CHECK(gsnap_snapshot_drop(db, "b") == GSNAP_NOTFOUND);
        OK(gsnap_snapshot_list(db, &all, &n));
        CHECK(n == 1);
        gsnap_free(all);
        free(ga.off); free(ga.adj); free(gb.off); free(gb.adj);
        gsnap_db_close(db);
        test_rmdir(dir);
        free(dir);
    }
    TEST_DONE();
}
