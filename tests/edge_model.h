/* tests/edge_model.h -- an independent model of the store's point-in-time
 * answers for the tests that compare against it: the event log kept by the
 * test, and a brute-force replay of a node's events (no store code).
 * Include after test.h. */
#ifndef GSNAP_TEST_EDGE_MODEL_H
#define GSNAP_TEST_EDGE_MODEL_H

/* One event as the test committed it: seq is its place in the stream. */
typedef struct { uint64_t src, dst; int64_t t; int del; uint64_t ver, seq; } ev_t;
typedef struct { uint64_t nbr; int64_t t; uint64_t ver, seq; int del; } mev_t;

static ev_t *evs;
static size_t nev, capev;

static void model_push(ev_t e) {
    if (nev == capev) {
        capev = capev ? 2 * capev : 1024;
        evs = realloc(evs, capev * sizeof *evs);
        if (!evs) { perror("realloc"); exit(1); }
    }
    evs[nev++] = e;
}

static int mev_cmp(const void *a, const void *b) {
    const mev_t *x = a, *y = b;
    if (x->nbr != y->nbr) return x->nbr < y->nbr ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->ver != y->ver) return x->ver < y->ver ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The live instances of `node` in direction dir at (T, V), in (neighbour, t,
 * version, stream order) order: each neighbour's adds in order, each delete
 * dropping the oldest one still live. out needs room for nev. */
static size_t model(uint64_t node, gsnap_dir dir, int64_t T, uint64_t V, gsnap_nbr *out) {
    mev_t *m = malloc((nev + 1) * sizeof *m);
    size_t k = 0;
    for (size_t i = 0; i < nev; i++) {
        const ev_t *e = &evs[i];
        uint64_t me = dir == GSNAP_DIR_IN ? e->dst : e->src;
        if (me != node || e->t > T || e->ver > V) continue;
        m[k].nbr = dir == GSNAP_DIR_IN ? e->src : e->dst;
        m[k].t = e->t; m[k].ver = e->ver; m[k].seq = e->seq; m[k].del = e->del;
        k++;
    }
    qsort(m, k, sizeof *m, mev_cmp);
    size_t n = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && m[j].nbr == m[i].nbr) j++;
        size_t live_start = n; /* this neighbour's live instances: out[live_start..n) */
        for (size_t q = i; q < j; q++) {
            if (m[q].del) {
                if (n > live_start) { /* drop the oldest live instance */
                    memmove(&out[live_start], &out[live_start + 1], (n - live_start - 1) * sizeof *out);
                    n--;
                }
            } else {
                out[n].node = m[q].nbr; out[n].t = m[q].t; out[n].version = m[q].ver; n++;
            }
        }
        i = j;
    }
    free(m);
    return n;
}

/* The samplers' distinct ids of node at (T, V) (gsnap_store__distinct_nbrs
 * through rd) against the distinct neighbours of the model's answer
 * want[0..wn): 0 when they are equal, else 1, with a line on stderr when
 * `say`. Needs store/store.h included before this header. */
static int distinct_ids_differ(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t T, uint64_t V,
                               const gsnap_nbr *want, size_t wn, int say) {
    /* the model's answer is in neighbour order: its distinct ids are the
     * first of each run of equal neighbours (counted here, not by the
     * store's gsnap_store__distinct_ids, which the store's answer uses) */
    uint64_t *ids_want = malloc((wn + 1) * sizeof *ids_want);
    size_t dw = 0, dn = 0;
    for (size_t i = 0; i < wn; i++)
        if (dw == 0 || ids_want[dw - 1] != want[i].node) ids_want[dw++] = want[i].node;
    const uint64_t *ids = NULL;
    OK(gsnap_store__distinct_nbrs(db, rd, node, dir, T, V, &ids, &dn));
    int differ = dn != dw || (dn && memcmp(ids, ids_want, dn * sizeof *ids));
    if (differ && say)
        fprintf(stderr, "distinct ids of node %llu dir %d T %lld V %llu: got %zu, want %zu\n",
                (unsigned long long)node, dir, (long long)T, (unsigned long long)V, dn, dw);
    free(ids_want);
    return differ;
}
#endif
