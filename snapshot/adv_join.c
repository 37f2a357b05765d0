/*
 * snapshot/adv_join.c -- recompute of `snapshot advance`.
 * Hop 1: D_1(v) for v in C_1. Hop h >= 2, two ways, both equal to a rebuild:
 *   - full: D_h(v) = bottom-c(U_{u in N(v)} D_{h-1}(u)), for every v in B_1
 *     (nodes of C_1 that lost an in-neighbour) and for the v in B_h with a
 *     changed input, B_h = B_1 u out-neighbours of B_{h-1} being the nodes
 *     whose R_h may have lost members;
 *   - incremental, for the other nodes with a changed or a new input u (a
 *     new in-neighbour, or one whose D_{h-1} or capped flag changed): their
 *     R_h only grew, so bottom-c(R_h new) = bottom-c(D_h(v) old u U_u D_{h-1}(u)
 *     new) (every member of the new bottom-c is in the old list or in the new
 *     list of such a u) and |R_h| > c iff it was, or the union overflows, or
 *     such a u is capped. Cost O(c) per (v, changed
 *     in-neighbour) instead of O(c |N(v)|), and no adjacency query for v.
 */
#include "snapshot/adv_int.h"

/* *skip = 1 when the stored D_h(v) is full (capped, c members) and its
 * largest score is surely below minc: nothing can enter, nothing changes.
 * The largest score is bounded from the record's KMV estimate
 * est = round((c-1) 2^64 / (smax + 1)) (sampled.c), with a margin; when
 * the bound is not safe, *skip = 0 and the caller merges. */
static int cannot_enter(adv *a, unsigned h, uint64_t v, uint64_t minc, int *skip) {
    struct gsnap_rec_hdr hd;
    int ex, rc;
    uint32_t c = a->cat.caps[h - 1];
    *skip = 0;
    if ((rc = gsnap_adv__old_rec(a, h, v, &hd, &ex)) || !ex) return rc;
    *skip = minc > gsnap_adv__enter_bound(&hd, c); /* adv_thr.c */
    return 0;
}

static int full_list(adv *a, unsigned h, uint64_t v, uint64_t *kept, uint64_t *buf, uint32_t *n, int *capped) {
    const uint64_t *xs;
    size_t nx;
    int rc;
    uint32_t c = a->cat.caps[h - 1];
    if ((rc = gsnap_adv__nin(a, v, &xs, &nx))) return rc;
    vec us = {0};
    for (size_t j = 0; j < nx; j++)
        if ((rc = vpush(&us, xs[j]))) { gsnap_adv__vfree(&us); return rc; }
    gsnap_botc b = {kept, 0, c, 0};
    *capped = 0;
    for (size_t j = 0; j < us.n; j++) {
        const uint64_t *sl;
        uint32_t m;
        int uc;
        if ((rc = gsnap_adv__cur_list(a, h - 1, us.v[j], buf, &sl, &m, &uc))) break;
        if (!m) continue;
        gsnap_botc__merge(&b, sl, m);
        *capped |= uc;
    }
    gsnap_adv__vfree(&us);
    *capped |= b.overflow;
    *n = b.n;
    return rc;
}

/* Hop 1 of node v of C_1: D_1 from N(v) at the new (T, V); v joins B_1 when
 * it lost an in-neighbour, its new in-neighbours go to the delta. */
/* N(v) at the old (T, V), ids ascending: the stored D_1(v) when it is not
 * capped (then D_1 = R_1 = N(v): no store query; no record: no
 * neighbours), else from the store. */
static int old_nbrs(adv *a, uint64_t v, vec *old, int *capped) {
    uint64_t s[GSNAP_SLAB_CAP], tmp[GSNAP_SLAB_CAP];
    struct gsnap_rec_hdr hd;
    uint32_t n;
    int had, rc, sorted = 1;
    if ((rc = gsnap_adv__old_ids(a, 1, v, s, &n, &hd, &had))) return rc; /* stored in id order */
    *capped = had && (hd.flags & GSNAP_REC_CAPPED);
    if (*capped) return gsnap_adv__nbrs_at(a, v, a->p.dir, a->cat.at_t, a->cat.at_version, old);
    for (uint32_t j = 1; j < n && sorted; j++) sorted = s[j - 1] < s[j];
    if (!sorted) gsnap_adv__sort_u64(s, n, tmp);
    old->n = 0;
    return gsnap_adv__vappend(old, s, n);
}

static int hop1_node(adv *a, adv_pairs *P, size_t i, vec *old, vec *sc) {
    const uint64_t *xs;
    uint64_t v = a->c1_list.v[i];
    size_t n, k = 0;
    int rc, ch, capped = 0;
    if ((rc = old_nbrs(a, v, old, &capped))) return rc;
    /* N_new = N_old u the appended adds (adv_tail.c): N_old is the stored
     * list, or for a capped one the store's answer at the old (T, V) just
     * read; either way no second query of v's whole adjacency */
    if (a->addonly && (rc = gsnap_adv__tail_nin(a, v, old, capped, &ch))) return rc;
    if ((rc = gsnap_adv__nin(a, v, &xs, &n))) return rc;
    for (size_t j = 0; j < old->n; j++) { /* N_old subset of N_new? (both ascending) */
        while (k < n && xs[k] < old->v[j]) k++;
        if (k == n || xs[k] != old->v[j]) { if ((rc = nset_add(&P->B1, v))) return rc; a->c1_lost[i] = 1; break; }
    }
    k = 0; /* the new in-neighbours N_new \ N_old: inputs of the incremental joins */
    for (size_t j = 0; j < n; j++) {
        while (k < old->n && old->v[k] < xs[j]) k++;
        if (k < old->n && old->v[k] == xs[j]) continue;
        if ((rc = gsnap_adv__push_pair(&P->delta, &P->nd, &P->dcap, v, xs[j])) || (rc = vpush(&a->c1_new, xs[j])))
            return rc;
    }
    if ((rc = vpush(&a->c1_doff, a->c1_new.n))) return rc;
    sc->n = 0;
    for (size_t j = 0; j < 2 * n; j++)
        if ((rc = vpush(sc, 0))) return rc;
    for (size_t j = 0; j < n; j++) sc->v[j] = gsnap_snap__score(xs[j], a->key);
    gsnap_adv__sort_u64(sc->v, n, sc->v + n);
    uint32_t m = (uint32_t)(n < a->cat.caps[0] ? n : a->cat.caps[0]);
    return gsnap_adv__add_entry(a, 1, v, sc->v, m, n > m, n, &ch);
}

static int hop1(adv *a, adv_pairs *P) {
    vec old = {0}, sc = {0};
    int rc = 0;
    if (!(a->c1_lost = calloc(a->c1_list.n + 1, 1)) || (rc = vpush(&a->c1_doff, 0))) rc = rc ? rc : GSNAP_ENOMEM;
    for (size_t i = 0; i < a->c1_list.n && !rc; i++) rc = hop1_node(a, P, i, &old, &sc);
    gsnap_adv__vfree(&old);
    gsnap_adv__vfree(&sc);
    a->rep.recomputed[0] = a->hs[1].n;
    if (!rc) rc = gsnap_adv__sort_vu(P, P->delta, P->nd); /* walked beside the pairs */
    for (size_t i = 0; i < P->B1.k.n && !rc; i++) rc = nset_add(&P->B, P->B1.k.v[i]);
    return rc;
}

/* The inputs of one incrementally joined node (pass 1 resolves them). */
typedef struct { uint64_t u; const uint64_t *s; uint32_t n; int capped; } input;
typedef struct {
    input *in; size_t n, cap;
    size_t nd;              /* of them, new in-neighbours (the first nd) */
    uint64_t kept[GSNAP_SLAB_CAP], buf[GSNAP_SLAB_CAP];
} join_state;

static input *new_input(join_state *J) {
    if (J->n == J->cap) {
        size_t c = J->cap ? 2 * J->cap : 64;
        input *p = realloc(J->in, c * sizeof *p);
        if (!p) return NULL;
        J->in = p;
        J->cap = c;
    }
    return &J->in[J->n++];
}

/* Pass 1 over the pairs [i, j) of node v (sorted: changed inputs first, new
 * in-neighbours last): the inputs (added members of a changed u, the whole
 * list of a new in-neighbour, which wins when u is both), the smallest
 * candidate score, whether an input is capped. */
static int gather_inputs(adv *a, adv_pairs *P, join_state *J, unsigned h, size_t i, size_t j, uint64_t *minc,
                         int *anycap) {
    size_t d0 = j;
    int rc;
    *minc = UINT64_MAX;
    *anycap = 0;
    J->n = 0;
    while (d0 > i && (P->p[d0 - 1].u & PAIR_DELTA)) d0--;
    for (size_t q = d0; q < j; q++) { /* new in-neighbours: the c_h smallest of their current list */
        input *x = new_input(J);
        if (!x) return GSNAP_ENOMEM;
        x->u = P->delta[P->p[q].u & ~PAIR_DELTA].u;
        if ((rc = gsnap_adv__top_list(a, h - 1, x->u, a->cat.caps[h - 1], &x->s, &x->n, &x->capped))) return rc;
        if (x->n && x->s[0] < *minc) *minc = x->s[0];
        x->s = NULL; /* may move with the next call: read again in pass 2 */
        *anycap |= x->capped;
    }
    size_t nd = J->nd = J->n;
    for (size_t q = i; q < d0; q++) {
        const pmeta *m = &P->meta[P->p[q].u];
        size_t k = 0;
        while (k < nd && J->in[k].u != m->u) k++;
        if (k < nd) continue; /* also a new in-neighbour: its whole list is in */
        input *x = new_input(J);
        if (!x) return GSNAP_ENOMEM;
        *x = (input){m->u, m->add, m->nadd, m->capped};
        if (m->minadd < *minc) *minc = m->minadd;
        *anycap |= m->capped;
    }
    return 0;
}

static int cmp_id(const void *x, const void *y) {
    uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
    return (p > q) - (p < q);
}

/* *skip = 1 when the stored D_h(v) surely stays as it is, judged from its
 * ids alone (no scores sorted, no merge, no entry): every candidate (an
 * added member of a changed in-neighbour; callers pass no new
 * in-neighbours) is in the list already, or the list is capped and full
 * and the candidate's score is above its largest; and a capped input
 * cannot make an uncapped list capped. Then the union's bottom-c, the
 * capped flag and the size (n, or the KMV estimate of the same largest
 * score) are the stored ones. Candidates of an R-MAT tail are mostly
 * low-score hubs already present through another path. */
static int stays(adv *a, join_state *J, unsigned h, uint64_t v, int anycap, int *skip) {
    uint64_t ids[GSNAP_SLAB_CAP];
    struct gsnap_rec_hdr hd;
    uint32_t n, c = a->cat.caps[h - 1];
    int had, rc;
    *skip = 0;
    if ((rc = gsnap_adv__old_ids(a, h, v, ids, &n, &hd, &had)) || !had) return rc;
    int capped = (hd.flags & GSNAP_REC_CAPPED) != 0, full = capped && n == c;
    if (anycap && !capped) return 0;
    uint64_t smax = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (k && ids[k] <= ids[k - 1]) return 0; /* not in id order: merge instead */
        uint64_t sc = gsnap_snap__score(ids[k], a->key);
        if (sc > smax) smax = sc;
    }
    for (size_t q = 0; q < J->n; q++)
        for (uint32_t k = 0; k < J->in[q].n; k++) {
            uint64_t x = J->in[q].s[k];
            if (full && x > smax) break; /* scores ascending: the rest too */
            uint64_t id = gsnap_snap__unscore(x, a->key);
            if (!bsearch(&id, ids, n, sizeof *ids, cmp_id)) return 0;
        }
    *skip = 1;
    return 0;
}

/* Incremental join of node v (pairs [i, j)): R_h(v) only grew. *skip = 1
 * when pruned (nothing can enter: the list, flag and size stay). */
static int incremental(adv *a, adv_pairs *P, join_state *J, unsigned h, size_t i, size_t j, uint32_t *n,
                       int *capped, int *skip) {
    uint64_t minc, oest, ooff;
    int anycap, had, rc;
    uint32_t c = a->cat.caps[h - 1];
    *skip = 0;
    if ((rc = gather_inputs(a, P, J, h, i, j, &minc, &anycap))) return rc;
    if (minc == UINT64_MAX && !anycap) { *skip = 1; return 0; }
    if (minc != UINT64_MAX && (rc = cannot_enter(a, h, P->p[i].v, minc, skip))) return rc;
    if (*skip || (!J->nd && (rc = stays(a, J, h, P->p[i].v, anycap, skip)))) return rc;
    if (*skip) return 0;
    gsnap_botc b = {J->kept, 0, c, 0};
    if ((rc = gsnap_adv__old_list(a, h, P->p[i].v, J->kept, &b.n, capped, &oest, &had, &ooff))) return rc;
    for (size_t q = 0; q < J->n; q++) {
        const uint64_t *sl = J->in[q].s;
        uint32_t m = J->in[q].n;
        int uc;
        if (!sl && m && (rc = gsnap_adv__top_list(a, h - 1, J->in[q].u, c, &sl, &m, &uc))) return rc;
        if (m) gsnap_botc__merge(&b, sl, m);
        *capped |= J->in[q].capped;
    }
    *capped |= b.overflow;
    *n = b.n;
    return 0;
}

/* Hop h >= 2: every node with a pair, full or incremental. */
static int join_hop(adv *a, adv_pairs *P, join_state *J, unsigned h) {
    uint32_t c = a->cat.caps[h - 1];
    int rc = 0, ch;
    for (size_t i = 0; i < P->n;) {
        uint64_t v = P->p[i].v;
        size_t j = i;
        int full = 0, capped = 0, skip = 0;
        uint32_t n = 0;
        while (j < P->n && P->p[j].v == v) { full |= P->p[j].u == PAIR_FULL; j++; }
        full |= map_get(&P->B.m, v) != UINT32_MAX;
        if (full) rc = full_list(a, h, v, J->kept, J->buf, &n, &capped);
        else rc = incremental(a, P, J, h, i, j, &n, &capped, &skip);
        if (rc) return rc;
        i = j;
        if (skip) { a->rep_pruned++; continue; }
        uint64_t est = capped ? gsnap_snap__kmv(c, J->kept[n - 1]) : n;
        if ((rc = gsnap_adv__add_entry(a, h, v, J->kept, n, capped, est, &ch))) return rc;
    }
    a->rep.recomputed[h - 1] = a->hs[h].n;
    return 0;
}

int gsnap_adv__recompute(adv *a) {
    adv_pairs P;
    join_state *J = calloc(1, sizeof *J);
    memset(&P, 0, sizeof P);
    int rc = J ? hop1(a, &P) : GSNAP_ENOMEM;
    for (unsigned h = 2; h <= a->p.hops && !rc; h++) {
        if ((rc = gsnap_adv__next_B(a, &P))) break;
        if ((rc = gsnap_adv__hop_pairs(a, &P, h))) break;
        rc = join_hop(a, &P, J, h);
    }
    if (J) free(J->in);
    free(J);
    gsnap_adv__pairs_free(&P);
    return rc;
}
