/*
 * sampler/tsample.c -- sampling of the temporal sampler: per layer, each
 * (node, t) root's candidate range by binary search over times (phase 1),
 * then the draws from it (phase 2: uniform, recent, window), packed into a
 * temporal block (tblock.c). Draws are keyed as temporal_int.h states.
 */
#include "sampler/temporal_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- sampling ---------------------------------------------------------------- */

/* Grow the root arrays of a layer to n entries (one cap for both). */
static int roots_reserve(gsnap_ts__layer *l, size_t n) {
    if (n <= l->roots_cap && n + 1 <= l->indptr_cap) return 0;
    size_t nc = l->roots_cap ? l->roots_cap : 64;
    while (nc < n + 1) nc *= 2;
    uint64_t *a = realloc(l->root_node, nc * 8);
    if (!a) return GSNAP_ENOMEM;
    l->root_node = a;
    int64_t *b = realloc(l->root_t, nc * 8);
    if (!b) return GSNAP_ENOMEM;
    l->root_t = b;
    uint64_t *c = realloc(l->indptr, (nc + 1) * 8);
    if (!c) return GSNAP_ENOMEM;
    l->indptr = c;
    l->roots_cap = nc;
    l->indptr_cap = nc + 1;
    return 0;
}

static int edges_reserve(gsnap_ts__layer *l, size_t n) {
    if (n <= l->edges_cap) return 0;
    size_t nc = l->edges_cap ? l->edges_cap : 256;
    while (nc < n) nc *= 2;
    uint64_t *a = realloc(l->nbr, nc * 8);
    if (!a) return GSNAP_ENOMEM;
    l->nbr = a;
    a = realloc(l->ever, nc * 8);
    if (!a) return GSNAP_ENOMEM;
    l->ever = a;
    a = realloc(l->eidx, nc * 8);
    if (!a) return GSNAP_ENOMEM;
    l->eidx = a;
    int64_t *b = realloc(l->et, nc * 8);
    if (!b) return GSNAP_ENOMEM;
    l->et = b;
    b = realloc(l->dt, nc * 8);
    if (!b) return GSNAP_ENOMEM;
    l->dt = b;
    l->edges_cap = nc;
    return 0;
}

static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void sort_u32(uint32_t *a, size_t n) {
    if (n > 32) { qsort(a, n, sizeof *a, u32_cmp); return; }
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

static void emit(gsnap_tsampler *ts, gsnap_ts__layer *l, uint64_t off, size_t idx, int64_t rt) {
    size_t p = off + idx, e = l->nedges++;
    l->nbr[e] = ts->nv[p].nbr;
    l->et[e] = ts->t[p];
    l->ever[e] = ts->nv[p].ver;
    l->eidx[e] = idx;
    l->dt[e] = (int64_t)((uint64_t)rt - (uint64_t)ts->t[p]); /* no signed overflow */
}

/* k distinct positions in [0, n), uniform (Floyd), from the keyed stream
 * `base` (draw j = gsnap_samp__mix(base, j)); small k: linear membership. */
static long choose_small(uint64_t base, size_t n, size_t k, uint32_t *out) {
    size_t m = 0;
    for (size_t j = n - k; j < n; j++) {
        uint32_t t = (uint32_t)gsnap_samp__below(gsnap_samp__mix(base, j), (uint64_t)j + 1);
        int dup = 0;
        for (size_t q = 0; q < m && !dup; q++) dup = out[q] == t;
        out[m++] = dup ? (uint32_t)j : t;
    }
    return (long)m;
}

/* Sample root r (node, rt) of layer `li` into l. `base` keys the layer's
 * draws: root r's stream is gsnap_samp__mix(base, r). */
/* Phase 1 of a root: its node and candidate range [lo, hi) (times only). */
static void root_range(const gsnap_tsampler *ts, uint64_t node, int64_t rt, gsnap_ts__range *g) {
    const gsnap_tsampler_options *o = &ts->o;
    const gsnap_ts__node *nd = gsnap_ts__find(ts, node);
    g->lo = g->hi = 0;
    if (!nd || nd->n == 0) return;
    g->off = nd->off;
    g->ndead = nd->ndead;
    int64_t T;
    if (o->inclusive) T = rt;
    else if (rt == INT64_MIN) return;
    else T = rt - 1;
    const int64_t *tt = ts->t + nd->off;
    size_t hi = gsnap_ts__upper(tt, nd->n, T), lo = 0;
    if (o->strategy == GSNAP_TS_WINDOW) {
        int64_t from = rt < INT64_MIN + o->window ? INT64_MIN : rt - o->window;
        lo = from == INT64_MIN ? 0 : gsnap_ts__upper(tt, hi, from - 1);
    }
    g->lo = (uint32_t)lo;
    g->hi = (uint32_t)hi;
}

/* Phase 2: sample root r from its range. */
static int sample_root(gsnap_tsampler *ts, gsnap_ts__layer *l, unsigned li, uint64_t r,
                       const gsnap_ts__range *g, int64_t rt, uint64_t base) {
    const gsnap_tsampler_options *o = &ts->o;
    size_t lo = g->lo, hi = g->hi;
    if (hi <= lo) return 0;
    int64_t T = o->inclusive ? rt : rt - 1;
    size_t f = o->fanouts[li];
    const int64_t *kill = ts->kill + g->off;
    if (o->strategy == GSNAP_TS_RECENT) {
        if (!g->ndead) { /* the last k of the range, in time order */
            size_t k = hi - lo < f ? hi - lo : f;
            for (size_t i = hi - k; i < hi; i++) emit(ts, l, g->off, i, rt);
            return 0;
        }
        size_t got = 0, start = l->nedges;
        for (size_t i = hi; i > lo && got < f; i--) {
            if (kill[i - 1] <= T) continue;
            emit(ts, l, g->off, i - 1, rt);
            got++;
        }
        /* reverse into time order */
        for (size_t a = start, b = l->nedges; a + 1 < b; a++, b--) {
            size_t c = b - 1;
#define SWAP(arr, ty) do { ty x_ = l->arr[a]; l->arr[a] = l->arr[c]; l->arr[c] = x_; } while (0)
            SWAP(nbr, uint64_t); SWAP(et, int64_t); SWAP(ever, uint64_t); SWAP(eidx, uint64_t);
            SWAP(dt, int64_t);
#undef SWAP
        }
        return 0;
    }
    size_t n = hi - lo;
    const uint32_t *map = NULL;
    if (g->ndead) {
        int rc = gsnap_vec_reserve((void **)&ts->alive, &ts->alive_cap, n, sizeof *ts->alive);
        if (rc) return rc;
        size_t m = 0;
        for (size_t i = lo; i < hi; i++)
            if (kill[i] > T) ts->alive[m++] = (uint32_t)i;
        n = m;
        map = ts->alive;
        if (n == 0) return 0;
    }
    if (f >= n) { /* all of them */
        for (size_t i = 0; i < n; i++) emit(ts, l, g->off, map ? map[i] : lo + i, rt);
        return 0;
    }
    int rc = gsnap_vec_reserve((void **)&ts->pick, &ts->pick_cap, f, sizeof *ts->pick);
    if (rc) return rc;
    uint64_t rbase = gsnap_samp__mix(base, r);
    long got;
    if (f <= 32) {
        got = choose_small(rbase, n, f, ts->pick);
    } else {
        gsnap_samp__key key = {o->seed, (uint64_t)GSNAP_P_TEMPORAL << 8 | li, r, rbase};
        got = gsnap_samp__choose(&key, n, f, ts->pick, &ts->sc);
        if (got < 0) return GSNAP_ENOMEM;
    }
    if (!map) /* start every pick's loads before the sort */
        for (long i = 0; i < got; i++) {
            __builtin_prefetch(&ts->nv[g->off + lo + ts->pick[i]]);
            __builtin_prefetch(&ts->t[g->off + lo + ts->pick[i]]);
        }
    sort_u32(ts->pick, (size_t)got);
    for (long i = 0; i < got; i++) {
        size_t idx = map ? map[ts->pick[i]] : lo + ts->pick[i];
        emit(ts, l, g->off, idx, rt);
    }
    return 0;
}

int gsnap_tsampler_sample(gsnap_tsampler *ts, const uint64_t *nodes, const int64_t *times,
                          size_t n, uint64_t batch, const void **buf, size_t *len) {
    if (!ts || ts->magic != GSNAP_TS_MAGIC || !buf || !len) return GSNAP_EINVAL;
    ts->err[0] = 0;
    *buf = NULL;
    *len = 0;
    if (n && (!nodes || !times)) return gsnap_ts__err(ts, GSNAP_EINVAL, "roots: NULL array with n = %zu", n);
    if (n > UINT32_MAX) return gsnap_ts__err(ts, GSNAP_ERANGE, "%zu roots: at most 2^32 - 1", n);
    int rc;
    unsigned nl = ts->o.layers;
    gsnap_ts__layer *L = ts->layers;
    if ((rc = roots_reserve(&L[0], n))) return rc;
    if (n) {
        memcpy(L[0].root_node, nodes, n * 8);
        memcpy(L[0].root_t, times, n * 8);
    }
    L[0].nroots = n;
    for (unsigned li = 0; li < nl; li++) {
        gsnap_ts__layer *l = &L[li];
        l->nedges = 0;
        l->indptr[0] = 0;
        size_t f = ts->o.fanouts[li];
        /* one XXH3 per layer keys every draw: (seed, layer, batch) -> base,
         * root r -> mix(base, r), draw j -> mix(mix(base, r), j) */
        uint64_t base = gsnap_samp__h(ts->o.seed, (uint64_t)GSNAP_P_TEMPORAL << 8 | li, 0, batch, 0);
        if ((rc = edges_reserve(l, l->nroots * f < ((size_t)1 << 20) ? l->nroots * f : 0))) return rc;
        if ((rc = gsnap_vec_reserve((void **)&ts->ranges, &ts->ranges_cap, l->nroots,
                                      sizeof *ts->ranges)))
            return rc;
        /* phase 1: every root's range; the searches of different roots are
         * independent, so their cache misses overlap. Two-stage prefetch:
         * the node entry 8 roots ahead, the first probe 4 ahead. */
        for (size_t r = 0; r < l->nroots; r++) {
            if (r + 8 < l->nroots && ts->dense && l->root_node[r + 8] < ts->nnodes)
                __builtin_prefetch(&ts->nodes[l->root_node[r + 8]]);
            if (r + 4 < l->nroots) {
                const gsnap_ts__node *pn = gsnap_ts__find(ts, l->root_node[r + 4]);
                if (pn && pn->n) __builtin_prefetch(&ts->t[pn->off + pn->n / 2]);
            }
            root_range(ts, l->root_node[r], l->root_t[r], &ts->ranges[r]);
        }
        /* phase 2: sample; for recent, prefetch the picks 4 roots ahead */
        int recent = ts->o.strategy == GSNAP_TS_RECENT;
        for (size_t r = 0; r < l->nroots; r++) {
            if (recent && r + 4 < l->nroots) {
                const gsnap_ts__range *g = &ts->ranges[r + 4];
                if (g->hi > g->lo) {
                    __builtin_prefetch(&ts->nv[g->off + g->hi - 1]);
                    __builtin_prefetch(&ts->nv[g->off + (g->hi - g->lo > f ? g->hi - f : g->lo)]);
                }
            }
            if (l->nedges + f > l->edges_cap && (rc = edges_reserve(l, l->nedges + f))) return rc;
            if ((rc = sample_root(ts, l, li, r, &ts->ranges[r], l->root_t[r], base))) return rc;
            l->indptr[r + 1] = l->nedges;
        }
        if (li + 1 < nl) {
            gsnap_ts__layer *nx = &L[li + 1];
            if (l->nedges > UINT32_MAX)
                return gsnap_ts__err(ts, GSNAP_ERANGE, "layer %u would have %zu roots (more than 2^32 - 1)",
                                     li + 1, l->nedges);
            if ((rc = roots_reserve(nx, l->nedges))) return rc;
            if (l->nedges) {
                memcpy(nx->root_node, l->nbr, l->nedges * 8);
                memcpy(nx->root_t, l->et, l->nedges * 8);
            }
            nx->nroots = l->nedges;
        }
    }
    size_t total = gsnap_ts__block_size(L, nl);
    if (total > ts->out_cap) {
        free(ts->out);
        ts->out = aligned_alloc(64, (total + 63) & ~(size_t)63);
        ts->out_cap = ts->out ? (total + 63) & ~(size_t)63 : 0;
        if (!ts->out) return GSNAP_ENOMEM;
    }
    gsnap_ts__block_pack(ts->out, L, nl, &ts->o, batch, ts->version);
    *buf = ts->out;
    *len = total;
    return 0;
}
