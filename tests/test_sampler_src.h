/* tests/test_sampler_src.h -- an in-memory, versioned graph exposed as a
 * sampler source (white-box tests of sampler/ without the store). Edges
 * (u -> v, version); neighbours of v at version V are the distinct u of
 * edges into v with version <= V. */
#ifndef GSNAP_TEST_SAMPLER_SRC_H
#define GSNAP_TEST_SAMPLER_SRC_H
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t v, u, ver; } tsrc_edge;

typedef struct {
    gsnap_samp__src base;
    tsrc_edge *e; /* sorted by (v, u, ver) */
    size_t ne, cap;
    uint64_t *off; /* per node v: first edge; nn + 1 */
    uint64_t nn, latest, as_of;
    uint64_t *buf; size_t bcap;
    int is_fork;
    void *parent;
} tsrc;

static int tsrc_cmp(const void *a, const void *b) {
    const tsrc_edge *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    return x->ver < y->ver ? -1 : x->ver > y->ver;
}
static void tsrc_add(tsrc *t, uint64_t u, uint64_t v, uint64_t ver) {
    if (t->ne == t->cap) { t->cap = t->cap ? 2 * t->cap : 1024; t->e = realloc(t->e, t->cap * sizeof *t->e); }
    t->e[t->ne++] = (tsrc_edge){v, u, ver};
    if (ver > t->latest) t->latest = ver;
    if (v + 1 > t->nn) t->nn = v + 1;
    if (u + 1 > t->nn) t->nn = u + 1;
}
static void tsrc_index(tsrc *t) { /* call after adds */
    qsort(t->e, t->ne, sizeof *t->e, tsrc_cmp);
    free(t->off);
    t->off = calloc(t->nn + 2, sizeof *t->off);
    for (size_t i = 0; i < t->ne; i++) t->off[t->e[i].v + 1]++;
    for (uint64_t v = 0; v < t->nn + 1; v++) t->off[v + 1] += t->off[v];
}
static tsrc *tsrc_root(tsrc *t) { return t->is_fork ? (tsrc *)t->parent : t; }
static int tsrc_list(tsrc *t, uint64_t v, uint64_t as_of, uint64_t **buf, size_t *bcap, size_t *n) {
    tsrc *r = tsrc_root(t);
    size_t m = 0;
    if (v < r->nn) {
        size_t need = r->off[v + 1] - r->off[v] + 1;
        if (*bcap < need) { *bcap = need; *buf = realloc(*buf, need * sizeof **buf); }
        for (uint64_t i = r->off[v]; i < r->off[v + 1]; i++) {
            if (r->e[i].ver > as_of) continue;
            if (m && (*buf)[m - 1] == r->e[i].u) continue;
            (*buf)[m++] = r->e[i].u;
        }
    }
    *n = m;
    return 0;
}
static int tsrc_begin(gsnap_samp__src *s, int64_t at_t, uint64_t as_of) { (void)at_t; ((tsrc *)s)->as_of = as_of; return 0; }
static void tsrc_end(gsnap_samp__src *s) { (void)s; }
/* Fault injection: nbrs of this node fails with GSNAP_EIO (UINT64_MAX: none). */
static uint64_t tsrc_fail_node = UINT64_MAX;
static int tsrc_nbrs(gsnap_samp__src *s, uint64_t node, const uint64_t **ids, size_t *n) {
    tsrc *t = (tsrc *)s;
    if (node == tsrc_fail_node) return GSNAP_EIO;
    int rc = tsrc_list(t, node, t->as_of, &t->buf, &t->bcap, n);
    *ids = t->buf;
    s->bytes_read += *n * 8;
    return rc;
}
static int tsrc_scan(gsnap_samp__src *s, int64_t at_t, uint64_t as_of, gsnap_samp__scan_fn fn, void *ctx) {
    (void)at_t;
    tsrc *t = (tsrc *)s, *r = tsrc_root(t);
    uint64_t *b = NULL; size_t bc = 0, n; int rc = 0;
    for (uint64_t v = 0; v < r->nn && !rc; v++) {
        tsrc_list(t, v, as_of, &b, &bc, &n);
        if (n) rc = fn(ctx, v, b, n);
    }
    free(b);
    return rc;
}
static int tsrc_latest(gsnap_samp__src *s, uint64_t *v) { *v = tsrc_root((tsrc *)s)->latest; return 0; }
static int tsrc_changed(gsnap_samp__src *s, uint64_t ver, uint64_t **nodes, size_t *n) {
    tsrc *r = tsrc_root((tsrc *)s);
    *nodes = malloc((r->ne + 1) * sizeof **nodes);
    size_t m = 0;
    for (size_t i = 0; i < r->ne; i++)
        if (r->e[i].ver == ver && (m == 0 || (*nodes)[m - 1] != r->e[i].v)) (*nodes)[m++] = r->e[i].v;
    *n = m;
    return 0;
}
static int tsrc_bound(gsnap_samp__src *s, uint64_t *b) { *b = tsrc_root((tsrc *)s)->nn; return 0; }
static void tsrc_destroy(gsnap_samp__src *s) {
    tsrc *t = (tsrc *)s;
    if (!t) return;
    free(t->buf);
    if (!t->is_fork) { free(t->e); free(t->off); }
    free(t);
}
static int tsrc_fork(gsnap_samp__src *s, gsnap_samp__src **out);
static tsrc *tsrc_new(void) {
    tsrc *t = calloc(1, sizeof *t);
    t->base.begin = tsrc_begin; t->base.end = tsrc_end; t->base.nbrs = tsrc_nbrs;
    t->base.scan = tsrc_scan; t->base.latest = tsrc_latest; t->base.changed = tsrc_changed;
    t->base.bound = tsrc_bound; t->base.destroy = tsrc_destroy; t->base.fork = tsrc_fork;
    t->as_of = UINT64_MAX;
    return t;
}
static int tsrc_fork(gsnap_samp__src *s, gsnap_samp__src **out) {
    tsrc *f = tsrc_new();
    f->is_fork = 1;
    f->parent = tsrc_root((tsrc *)s);
    *out = &f->base;
    return 0;
}
/* Is u -> v an edge at version <= as_of? */
static inline int tsrc_has(tsrc *t, uint64_t u, uint64_t v, uint64_t as_of) {
    if (v >= t->nn) return 0;
    for (uint64_t i = t->off[v]; i < t->off[v + 1]; i++)
        if (t->e[i].u == u && t->e[i].ver <= as_of) return 1;
    return 0;
}
static inline size_t tsrc_deg(tsrc *t, uint64_t v, uint64_t as_of) {
    uint64_t *b = NULL; size_t bc = 0, n = 0;
    tsrc_list(t, v, as_of, &b, &bc, &n);
    free(b);
    return n;
}
/* A power-law-ish graph of n nodes for the sampler tests (test.h's
 * test_rand must be in scope): each of the first `hubs` nodes gets
 * hub_min + rand % hub_spread in-edges, every other node rand % spread,
 * from uniformly drawn sources; node bound n. */
static inline tsrc *tsrc_hub_graph(uint64_t *rng, uint64_t n, uint64_t hubs, uint64_t hub_min, uint64_t hub_spread,
                                   uint64_t spread) {
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < n; v++) {
        uint64_t d = v < hubs ? hub_min + test_rand(rng) % hub_spread : test_rand(rng) % spread;
        for (uint64_t i = 0; i < d; i++) tsrc_add(t, test_rand(rng) % n, v, 1);
    }
    tsrc_add(t, 0, n - 1, 1); /* node bound = n */
    tsrc_index(t);
    return t;
}

#endif
