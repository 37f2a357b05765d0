/*
 * snapshot/sampled.c -- the sampled hop sets (the SEMHS sampling join).
 *
 * R_h(v) = the nodes with a walk of exactly h edges to v (IN; reversed for
 * OUT), R_0(v) = {v}, so R_h(v) = U_{u in N_in(v)} R_{h-1}(u). One order of
 * all node ids for the whole snapshot, score(x) = M(x ^ K) (M = XXH64's
 * avalanche, a bijection; K from the seed by XXH3), gives
 *   D_h(v) = the c_h members of R_h(v) with the smallest scores.
 * Because the order is the same for every v and every hop, and caps are
 * non-increasing (c_{h-1} >= c_h),
 *   bottom-c_h(R_h(v)) = bottom-c_h( U_{u in N_in(v)} D_{h-1}(u) ),
 * so hop h reads only the capped lists of hop h-1 (never R_h itself).
 * D_h(v) is a strict subset of R_h(v) ("capped") iff the union had more than
 * c_h distinct members or some D_{h-1}(u) was capped (then |R_h(v)| >=
 * c_{h-1} + 1 > c_h). Sizes: n_est = |R_h(v)| exactly when not capped, the
 * exact degree at hop 1, else the KMV estimate (c - 1) 2^64 / (s_c + 1).
 *
 * Two ways to run the join, same lists:
 *   - in memory (index nested loop): the lists of hop h-1 as score arrays
 *     indexed by node; A streamed in v order; per v the in-neighbours' lists
 *     are merged into a bottom-c buffer, stopping at a list's first score
 *     above a full buffer's largest;
 *   - external sort-merge: F = {(u, v)} sorted by u joined with
 *     D_{h-1} = {(u, score)} on u, every (v, score) into a sorter that keeps
 *     only the first c_h + 1 scores per v (the bottom-c reduction also holds
 *     per sorted run), then grouped by v.
 */
#include "snapshot/snapshot_int.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GSNAP_PURPOSE_ORDER 0x4f524452u
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL

uint64_t gsnap_snap__order_key(uint64_t seed) {
    return gsnap_snap__sample_key(seed, 0, 0, 0, GSNAP_PURPOSE_ORDER);
}

uint64_t gsnap_snap__score(uint64_t x, uint64_t key) {
    uint64_t h = x ^ key;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

static uint64_t inv64(uint64_t a) { /* a odd: Newton, 3 -> 96 bits */
    uint64_t x = a;
    for (int i = 0; i < 5; i++) x *= 2 - a * x;
    return x;
}

uint64_t gsnap_snap__unscore(uint64_t h, uint64_t key) {
    static uint64_t i2, i3;
    if (!i2) { i3 = inv64(P3); i2 = inv64(P2); }
    h ^= h >> 32;
    h *= i3;
    h ^= (h >> 29) ^ (h >> 58);
    h *= i2;
    h ^= h >> 33;
    return h ^ key;
}

uint64_t gsnap_snap__kmv(uint32_t c, uint64_t smax) {
    double est = (double)(c ? c - 1 : 0) * 18446744073709551616.0 / ((double)smax + 1.0);
    uint64_t lo = (uint64_t)c + 1;
    if (!(est < 1.8e19)) return UINT64_MAX;
    uint64_t e = (uint64_t)llround(est);
    return e < lo ? lo : e;
}

void gsnap_botc__merge(gsnap_botc *b, const uint64_t *in, size_t n) {
    uint64_t tmp[GSNAP_SLAB_CAP];
    if (!n) return;
    if (b->n == b->c) {
        if (in[0] > b->s[b->n - 1]) { b->overflow = 1; return; }
    }
    size_t i = 0, j = 0, k = 0;
    while (k < b->c && (i < b->n || j < n)) {
        if (j >= n || (i < b->n && b->s[i] < in[j])) tmp[k++] = b->s[i++];
        else if (i >= b->n || in[j] < b->s[i]) tmp[k++] = in[j++];
        else { tmp[k++] = b->s[i++]; j++; }
    }
    if (i < b->n || j < n) b->overflow = 1;
    memcpy(b->s, tmp, k * sizeof *tmp);
    b->n = (uint32_t)k;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
    return (a > c) - (a < c);
}

/* Groups (a, [b...]) of a sorted pair stream (file or finished sorter). */
typedef struct {
    gsnap_pfile *pf;
    gsnap_sorter *so;
    gsnap_pair la;
    int have_la, eof;
    uint64_t key;
    uint64_t *v;
    size_t n, cap;
} grp;

static int grp_pull(grp *g, gsnap_pair *p) { return g->pf ? gsnap_pf__read(g->pf, p) : gsnap_sorter__next(g->so, p); }

static int grp_push(grp *g, uint64_t x) {
    if (g->n == g->cap) {
        size_t c = g->cap ? 2 * g->cap : 64;
        uint64_t *p = realloc(g->v, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        g->v = p;
        g->cap = c;
    }
    g->v[g->n++] = x;
    return 0;
}

static int grp_next(grp *g) {
    int rc;
    g->n = 0;
    if (!g->have_la) {
        if (g->eof) return 0;
        rc = grp_pull(g, &g->la);
        if (rc <= 0) { g->eof = 1; return rc; }
        g->have_la = 1;
    }
    g->key = g->la.a;
    for (;;) {
        if ((rc = grp_push(g, g->la.b))) return rc;
        rc = grp_pull(g, &g->la);
        if (rc < 0) return rc;
        if (rc == 0) { g->have_la = 0; g->eof = 1; return 1; }
        if (g->la.a != g->key) return 1;
    }
}

/* Emit D_h(v) given its scores ascending. */
static int emit_scores(gsnap_sampled_job *j, unsigned hop, uint64_t v, const uint64_t *s, size_t n, int capped,
                       uint64_t n_est, uint64_t *idbuf) {
    for (size_t i = 0; i < n; i++) idbuf[i] = gsnap_snap__unscore(s[i], j->key);
    qsort(idbuf, n, sizeof *idbuf, cmp_u64);
    return j->emit(j->ctx, hop, v, idbuf, n, n_est, capped);
}

/* Hop 1 of v: its distinct in-neighbours xs (self loop included). Leaves the
 * kept scores ascending in out (capacity c_1), returns their count. */
static size_t hop1(gsnap_sampled_job *j, const uint64_t *xs, size_t n, uint64_t *sc, uint64_t *out) {
    for (size_t i = 0; i < n; i++) sc[i] = gsnap_snap__score(xs[i], j->key);
    if (n > 1) qsort(sc, n, sizeof *sc, cmp_u64);
    size_t m = n < j->caps[0] ? n : j->caps[0];
    memcpy(out, sc, m * sizeof *sc);
    return m;
}

/* ---- in memory ---- */

typedef struct {
    uint64_t *start;   /* per node: index of its first score */
    uint16_t *len;     /* per node: list length (0: none) */
    uint8_t *capped;
    uint64_t *s;       /* scores */
    size_t n, cap;
} mlists;

static void ml_free(mlists *m) {
    free(m->start); free(m->len); free(m->capped); free(m->s);
    memset(m, 0, sizeof *m);
}

static int ml_init(mlists *m, uint64_t bound) {
    memset(m, 0, sizeof *m);
    m->start = calloc(bound ? bound : 1, sizeof *m->start);
    m->len = calloc(bound ? bound : 1, sizeof *m->len);
    m->capped = calloc(bound ? bound : 1, 1);
    return m->start && m->len && m->capped ? 0 : GSNAP_ENOMEM;
}

static int ml_add(mlists *m, uint64_t v, const uint64_t *s, size_t n, int capped) {
    if (m->n + n > m->cap) {
        size_t c = m->cap ? m->cap : 1024;
        while (c < m->n + n) c *= 2;
        uint64_t *p = realloc(m->s, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        m->s = p;
        m->cap = c;
    }
    m->start[v] = m->n;
    m->len[v] = (uint16_t)n;
    m->capped[v] = (uint8_t)capped;
    memcpy(m->s + m->n, s, n * sizeof *s);
    m->n += n;
    return 0;
}

static int build_memory(gsnap_sampled_job *j, gsnap_pfile *A) {
    mlists prev = {0}, cur = {0};
    grp ga = {0};
    uint64_t *sc = NULL, kept[GSNAP_SLAB_CAP], ids[GSNAP_SLAB_CAP];
    size_t sc_cap = 0;
    int rc = 0, r;
    gsnap_botc b = {kept, 0, 0, 0};
    for (unsigned h = 1; h <= j->hops; h++) {
        if ((rc = ml_init(&cur, j->bound))) goto out;
        if ((rc = gsnap_pf__rewind(A))) goto out;
        memset(&ga, 0, sizeof ga);
        ga.pf = A;
        while ((r = grp_next(&ga)) > 0) {
            uint64_t v = ga.key;
            if (v >= j->bound) { rc = GSNAP_ECORRUPT; goto out; }
            size_t m;
            int capped;
            uint64_t est;
            if (h == 1) {
                if (sc_cap < ga.n) {
                    free(sc);
                    sc_cap = ga.n + ga.n / 2;
                    if (!(sc = malloc(sc_cap * sizeof *sc))) { rc = GSNAP_ENOMEM; goto out; }
                }
                m = hop1(j, ga.v, ga.n, sc, kept);
                capped = ga.n > m;
                est = ga.n;
            } else {
                b.n = 0;
                b.c = j->caps[h - 1];
                b.overflow = 0;
                capped = 0;
                for (size_t i = 0; i < ga.n; i++) {
                    uint64_t u = ga.v[i];
                    if (u >= j->bound) { rc = GSNAP_ECORRUPT; goto out; }
                    if (!prev.len[u]) continue;
                    gsnap_botc__merge(&b, prev.s + prev.start[u], prev.len[u]);
                    capped |= prev.capped[u];
                }
                capped |= b.overflow;
                m = b.n;
                est = capped ? gsnap_snap__kmv(b.c, kept[m - 1]) : m;
            }
            if (!m) continue;
            if (h < j->hops && (rc = ml_add(&cur, v, kept, m, capped))) goto out;
            if ((rc = emit_scores(j, h, v, kept, m, capped, est, ids))) goto out;
        }
        free(ga.v);
        ga.v = NULL;
        if (r < 0) { rc = r; goto out; }
        ml_free(&prev);
        prev = cur;
        if (j->progress) j->progress(j->progress_ctx, "join", h, j->hops);
        memset(&cur, 0, sizeof cur);
    }
out:
    free(ga.v);
    ml_free(&prev);
    ml_free(&cur);
    free(sc);
    return rc;
}

/* ---- external sort-merge ---- */

/* The state of the external (sort-merge) path: F = {(x, v)} sorted by x,
 * D_{h-1} = {(u, score)} and C_{h-1} = {(u, 1): D_{h-1}(u) capped} as pair
 * files (two generations), the sorters of hop h and the group readers. */
typedef struct {
    gsnap_pfile F, D[2], C[2];
    gsnap_sorter *so, *S, *Cs;
    grp ga, gf, gd, gc, gs, gk;
    uint64_t *sc, kept[GSNAP_SLAB_CAP], ids[GSNAP_SLAB_CAP];
    size_t sc_cap;
    char path[2300];
} ext;

static int ext_file(gsnap_sampled_job *j, ext *x, gsnap_pfile *pf, const char *what, unsigned h) {
    snprintf(x->path, sizeof x->path, "%s/%s%u", j->tmp, what, h);
    return gsnap_pf__create(pf, x->path);
}

/* Hop 1 from A, its D_1 and C_1 files, and F sorted by x. */
static int ext_hop1(gsnap_sampled_job *j, gsnap_pfile *A, ext *x) {
    int rc, r;
    if ((rc = gsnap_pf__rewind(A))) return rc;
    if (j->hops > 1 && (rc = gsnap_sorter__new(j->tmp, j->budget / 2, 0, &x->so))) return rc;
    if ((rc = ext_file(j, x, &x->D[1], "sd", 1)) || (rc = ext_file(j, x, &x->C[1], "sc", 1))) return rc;
    x->ga.pf = A;
    while ((r = grp_next(&x->ga)) > 0) {
        grp *g = &x->ga;
        if (x->sc_cap < g->n) {
            free(x->sc);
            x->sc_cap = g->n + g->n / 2;
            if (!(x->sc = malloc(x->sc_cap * sizeof *x->sc))) return GSNAP_ENOMEM;
        }
        size_t m = hop1(j, g->v, g->n, x->sc, x->kept);
        int capped = g->n > m;
        for (size_t i = 0; x->so && i < g->n; i++)
            if ((rc = gsnap_sorter__add(x->so, g->v[i], g->key))) return rc;
        for (size_t i = 0; j->hops > 1 && i < m; i++)
            if ((rc = gsnap_pf__write(&x->D[1], g->key, x->kept[i]))) return rc;
        if (capped && (rc = gsnap_pf__write(&x->C[1], g->key, 1))) return rc;
        if ((rc = emit_scores(j, 1, g->key, x->kept, m, capped, g->n, x->ids))) return rc;
    }
    if (r < 0 || j->hops < 2) return r < 0 ? r : 0;
    gsnap_pair p;
    if ((rc = ext_file(j, x, &x->F, "sf", 0)) || (rc = gsnap_sorter__finish(x->so))) return rc;
    while ((r = gsnap_sorter__next(x->so, &p)) > 0)
        if ((rc = gsnap_pf__write(&x->F, p.a, p.b))) return rc;
    if (r < 0) return r;
    j->spilled_runs += gsnap_sorter__spilled_runs(x->so);
    gsnap_sorter__free(x->so);
    x->so = NULL;
    return 0;
}

/* Hop h, step 1: F joined with D_{h-1} on u: every (v, score) into S (per
 * key cap c_h + 1), every v with a capped input into Cs. */
static int ext_join(gsnap_sampled_job *j, ext *x, unsigned h) {
    gsnap_pfile *dp = &x->D[(h - 1) % 2], *cp = &x->C[(h - 1) % 2];
    int rc;
    if ((rc = gsnap_sorter__new(j->tmp, j->budget / 2, 1, &x->S))) return rc;
    gsnap_sorter__key_cap(x->S, (uint64_t)j->caps[h - 1] + 1);
    if ((rc = gsnap_sorter__new(j->tmp, 1u << 20, 1, &x->Cs))) return rc;
    if ((rc = gsnap_pf__rewind(&x->F)) || (rc = gsnap_pf__rewind(dp)) || (rc = gsnap_pf__rewind(cp))) return rc;
    grp *gf = &x->gf, *gd = &x->gd, *gc = &x->gc;
    free(gf->v); free(gd->v); free(gc->v);
    memset(gf, 0, sizeof *gf); gf->pf = &x->F;
    memset(gd, 0, sizeof *gd); gd->pf = dp;
    memset(gc, 0, sizeof *gc); gc->pf = cp;
    int rf = grp_next(gf), rd = grp_next(gd), rcp = grp_next(gc);
    while (rf > 0 && rd > 0) {
        if (gf->key < gd->key) { rf = grp_next(gf); continue; }
        if (gd->key < gf->key) { rd = grp_next(gd); continue; }
        while (rcp > 0 && gc->key < gd->key) rcp = grp_next(gc);
        int ucap = rcp > 0 && gc->key == gd->key;
        for (size_t i = 0; i < gf->n; i++) {
            for (size_t k = 0; k < gd->n; k++)
                if ((rc = gsnap_sorter__add(x->S, gf->v[i], gd->v[k]))) return rc;
            if (ucap && (rc = gsnap_sorter__add(x->Cs, gf->v[i], 0))) return rc;
        }
        rf = grp_next(gf);
        rd = grp_next(gd);
    }
    if (rf < 0 || rd < 0 || rcp < 0) return rf < 0 ? rf : rd < 0 ? rd : rcp;
    if ((rc = gsnap_sorter__finish(x->S))) return rc;
    return gsnap_sorter__finish(x->Cs);
}

/* Hop h, step 2: S grouped by v: D_h(v), its flag and size emitted, and
 * written as the next hop's D and C files. */
static int ext_emit(gsnap_sampled_job *j, ext *x, unsigned h) {
    gsnap_pfile *dn = &x->D[h % 2], *cn = &x->C[h % 2];
    uint32_t c = j->caps[h - 1];
    int rc, r;
    if (h < j->hops) {
        gsnap_pf__close(dn, 1);
        gsnap_pf__close(cn, 1);
        if ((rc = ext_file(j, x, dn, "sd", h)) || (rc = ext_file(j, x, cn, "sc", h))) return rc;
    }
    grp *gs = &x->gs, *gk = &x->gk;
    free(gs->v); free(gk->v);
    memset(gs, 0, sizeof *gs); gs->so = x->S;
    memset(gk, 0, sizeof *gk); gk->so = x->Cs;
    int rk = grp_next(gk);
    while ((r = grp_next(gs)) > 0) {
        uint64_t v = gs->key;
        while (rk > 0 && gk->key < v) rk = grp_next(gk);
        if (rk < 0) return rk;
        int capped = gs->n > c || (rk > 0 && gk->key == v);
        size_t m = gs->n < c ? gs->n : c;
        uint64_t est = capped ? gsnap_snap__kmv(c, gs->v[m - 1]) : m;
        if (h < j->hops) {
            for (size_t i = 0; i < m; i++)
                if ((rc = gsnap_pf__write(dn, v, gs->v[i]))) return rc;
            if (capped && (rc = gsnap_pf__write(cn, v, 1))) return rc;
        }
        if ((rc = emit_scores(j, h, v, gs->v, m, capped, est, x->ids))) return rc;
    }
    if (r < 0) return r;
    j->spilled_runs += gsnap_sorter__spilled_runs(x->S);
    if (j->progress) j->progress(j->progress_ctx, "join", h, j->hops);
    gsnap_sorter__free(x->S);
    gsnap_sorter__free(x->Cs);
    x->S = x->Cs = NULL;
    return 0;
}

static int build_external(gsnap_sampled_job *j, gsnap_pfile *A) {
    ext *x = calloc(1, sizeof *x);
    if (!x) return GSNAP_ENOMEM;
    int rc = ext_hop1(j, A, x);
    for (unsigned h = 2; h <= j->hops && !rc; h++)
        if (!(rc = ext_join(j, x, h))) rc = ext_emit(j, x, h);
    gsnap_sorter__free(x->so);
    gsnap_sorter__free(x->S);
    gsnap_sorter__free(x->Cs);
    gsnap_pf__close(&x->F, 1);
    for (int i = 0; i < 2; i++) { gsnap_pf__close(&x->D[i], 1); gsnap_pf__close(&x->C[i], 1); }
    free(x->ga.v); free(x->gf.v); free(x->gd.v); free(x->gc.v); free(x->gs.v); free(x->gk.v);
    free(x->sc);
    free(x);
    return rc;
}

int gsnap_snap__sampled_build(gsnap_sampled_job *j, gsnap_pfile *A, uint64_t nodes) {
    uint64_t cmax = 0;
    for (unsigned h = 2; h <= j->hops; h++) cmax = j->caps[h - 1] > cmax ? j->caps[h - 1] : cmax;
    /* two hops of lists (hop 1: at most |A| scores; hop h: at most nodes * c_h)
     * plus 11 bytes per node id per hop */
    uint64_t need = j->bound * 22 + 8 * (A->n + nodes * cmax) + (1u << 20);
    j->used_memory = !j->force_external && j->bound && j->bound < UINT32_MAX && need <= j->budget;
    return j->used_memory ? build_memory(j, A) : build_external(j, A);
}
