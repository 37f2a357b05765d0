/*
 * snapshot/adv_pairs.c -- the (node, input) pairs a hop of `snapshot
 * advance` joins, and the sets B_h of nodes whose walk set may have lost
 * members (B_1 = nodes that lost an in-neighbour, B_h = B_1 u out(B_{h-1})).
 * Pairs of hop h: (v, m) for every out-neighbour v of a node u whose D_{h-1}
 * or capped flag changed (m: u's pmeta), (v, PAIR_FULL) for v in B_1
 * (recompute in full), and (v, PAIR_DELTA | i) for the new in-neighbours
 * u = delta[i].u of v (hop 1's delta); sorted with the radix sort of pairs.
 */
#include "snapshot/adv_int.h"
#include "common/radix.h"

int gsnap_adv__push_pair(vu **p, size_t *n, size_t *cap, uint64_t v, uint64_t u) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        vu *q = realloc(*p, c * sizeof *q);
        if (!q) return GSNAP_ENOMEM;
        *p = q;
        *cap = c;
    }
    (*p)[(*n)++] = (vu){v, u};
    return 0;
}

/* Stable sort of x[0..n) by v alone (the sort buffer is kept across hops):
 * pairs of one node keep the order they were pushed in, which is (v, u)
 * order for the pairs of a hop (pmeta indices ascending, new in-neighbours
 * after them in delta order) and for hop 1's delta (u ascending per v). Half
 * the key bytes of a (v, u) sort, and only those of v that differ. */
static inline unsigned vu_byte(const vu *p, unsigned d) { return (unsigned)(p->v >> (8 * d)) & 0xff; }
GSNAP_RADIX_SORT(radix_vu, vu, 8, vu_byte)

int gsnap_adv__sort_vu(adv_pairs *P, vu *x, size_t n) {
    if (n < 2) return 0;
    if (P->tcap < n) {
        free(P->tmp);
        P->tcap = n + n / 4;
        if (!(P->tmp = malloc(P->tcap * sizeof *P->tmp))) { P->tcap = 0; return GSNAP_ENOMEM; }
    }
    radix_vu(x, (vu *)P->tmp, n);
    return 0;
}

/* B_h = B_1 u out(B_{h-1}) (P->B holds B_{h-1} on entry, B_h on return). */
int gsnap_adv__next_B(adv *a, adv_pairs *P) {
    nset Bn = {0};
    int rc = 0;
    for (size_t i = 0; i < P->B1.k.n && !rc; i++) rc = nset_add(&Bn, P->B1.k.v[i]);
    for (size_t i = 0; i < P->B.k.n && !rc; i++) {
        const uint64_t *os;
        size_t no;
        if ((rc = gsnap_adv__nout(a, P->B.k.v[i], &os, &no))) break;
        for (size_t j = 0; j < no && !rc; j++) rc = nset_add(&Bn, os[j]);
    }
    nset_free(&P->B);
    P->B = Bn;
    return rc;
}

/* The pairs of hop h, sorted by (v, b): b = the index of the changed input's
 * pmeta, PAIR_DELTA | i for the new in-neighbour delta[i].u, PAIR_FULL. */
/* The pair filter (adv_thr.c) when no node lost a walk and the changed
 * inputs have more out-neighbours than half the snapshot's nodes. */
static int filter(adv *a, adv_pairs *P, unsigned h, uint64_t **thr, uint64_t *nthr) {
    size_t tot = 0;
    int rc;
    *thr = NULL;
    *nthr = 0;
    if (P->B.k.n || P->B1.k.n) return 0;
    for (size_t i = 0; i < a->hs[h - 1].n; i++) {
        const uint64_t *os;
        size_t no;
        if (!a->hs[h - 1].e[i].prop) continue;
        if ((rc = gsnap_adv__nout(a, a->hs[h - 1].e[i].node, &os, &no))) return rc;
        tot += no;
    }
    return tot > a->cat.nodes / 2 ? gsnap_adv__thr_load(a, h, thr, nthr) : 0;
}

int gsnap_adv__hop_pairs(adv *a, adv_pairs *P, unsigned h) {
    uint64_t *thr, nthr;
    int rc = filter(a, P, h, &thr, &nthr);
    P->n = 0;
    P->nmeta = 0;
    for (size_t i = 0; i < a->hs[h - 1].n && !rc; i++) {
        const entry *e = &a->hs[h - 1].e[i];
        if (!e->prop) continue;
        const uint64_t *os;
        size_t no;
        if ((rc = gsnap_adv__nout(a, e->node, &os, &no))) break;
        if (P->n + no > P->cap) {
            size_t c = 2 * (P->n + no) + 1024;
            vu *q = realloc(P->p, c * sizeof *q);
            if (!q) { rc = GSNAP_ENOMEM; break; }
            P->p = q;
            P->cap = c;
        }
        if (P->nmeta == P->mcap) {
            size_t c = P->mcap ? 2 * P->mcap : 1024;
            pmeta *q = realloc(P->meta, c * sizeof *q);
            if (!q) { rc = GSNAP_ENOMEM; break; }
            P->meta = q;
            P->mcap = c;
        }
        uint64_t minadd = e->nadd ? e->add[0] : UINT64_MAX;
        P->meta[P->nmeta] = (pmeta){e->node, minadd, e->add, e->nadd, e->capped};
        if (thr) {
            for (size_t j = 0; j < no; j++)
                if (os[j] >= nthr || minadd <= thr[os[j]]) P->p[P->n++] = (vu){os[j], P->nmeta};
        } else {
            for (size_t j = 0; j < no; j++) P->p[P->n++] = (vu){os[j], P->nmeta};
        }
        P->nmeta++;
    }
    free(thr);
    if (rc) return rc;
    for (size_t i = 0; i < P->B1.k.n && !rc; i++) /* lost an in-neighbour: recompute in full */
        rc = gsnap_adv__push_pair(&P->p, &P->n, &P->cap, P->B1.k.v[i], PAIR_FULL);
    for (size_t i = 0; i < P->nd && !rc; i++)
        rc = gsnap_adv__push_pair(&P->p, &P->n, &P->cap, P->delta[i].v, PAIR_DELTA | i);
    return rc ? rc : gsnap_adv__sort_vu(P, P->p, P->n);
}

void gsnap_adv__pairs_free(adv_pairs *P) {
    free(P->p);
    free(P->delta);
    free(P->meta);
    free(P->tmp);
    nset_free(&P->B);
    nset_free(&P->B1);
    memset(P, 0, sizeof *P);
}
