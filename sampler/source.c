/*
 * sampler/source.c -- neighbour lists from the store: one read view per
 * batch (gsnap_read), point-in-time neighbours at (T, V) reduced to distinct
 * ascending ids; whole-graph scans; the per-version log of touched nodes.
 * The lists read are kept decoded across batches while the views answer
 * from the same runs (listcache.c).
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    gsnap_samp__src base;
    gsnap_dir dir;
    gsnap_read *rd;
    int64_t at_t;
    uint64_t as_of;
    gsnap_nbr *nb;
    size_t nb_cap;
    uint64_t *ids;
    size_t ids_cap;
    gsnap_samp__lcache lc; /* decoded lists, under the views' answer key */
    /* scan adaptor */
    gsnap_samp__scan_fn fn;
    void *ctx;
} store_src;

static int st_begin(gsnap_samp__src *s, int64_t at_t, uint64_t as_of) {
    store_src *ss = (store_src *)s;
    if (ss->rd) { gsnap_read_end(ss->rd); ss->rd = NULL; }
    ss->at_t = at_t;
    ss->as_of = as_of;
    int rc = gsnap_read_begin(s->db, &ss->rd);
    /* A sampler seeks every run of the store for each list it does not keep:
     * the runs' fence indexes, held copies and run mask (store/fence.c) are
     * built now rather than after the seeks that a lazy build waits for
     * (on R-MAT-20 those were tens of thousands, a large part of a cold
     * epoch; docs/sampler.md "Kept lists"). Nothing to build: a few checks. */
    if (!rc) gsnap_store__index_runs(s->db, ss->rd, ss->dir);
    uint64_t key = 0;
    if (!rc && (rc = gsnap_store__answer_key(ss->rd, ss->dir, at_t, as_of, &key))) {
        gsnap_read_end(ss->rd);
        ss->rd = NULL;
    }
    gsnap_samp__lc_rekey(&ss->lc, rc ? 0 : key);
    return rc;
}

static void st_end(gsnap_samp__src *s) {
    store_src *ss = (store_src *)s;
    gsnap_read_end(ss->rd);
    ss->rd = NULL;
}

/* Distinct ids of a (neighbour, t)-ordered list into ss->ids. */
static int dedupe(store_src *ss, const gsnap_nbr *nb, size_t n, size_t *out) {
    int rc = gsnap_vec_reserve((void **)&ss->ids, &ss->ids_cap, n ? n : 1, sizeof(uint64_t));
    if (rc) return rc;
    *out = gsnap_store__distinct_ids(nb, n, ss->ids);
    return 0;
}

static int st_nbrs(gsnap_samp__src *s, uint64_t node, const uint64_t **ids, size_t *n) {
    store_src *ss = (store_src *)s;
    const uint64_t *kept = gsnap_samp__lc_get(&ss->lc, node, n);
    if (kept) { /* decoded in an earlier batch from the same runs */
        /* stored atomically: the statistics read a worker's counts */
        __atomic_store_n(&ss->lc.hits, ss->lc.hits + 1, __ATOMIC_RELAXED);
        *ids = kept;
        return 0;
    }
    if (ss->lc.key) __atomic_store_n(&ss->lc.misses, ss->lc.misses + 1, __ATOMIC_RELAXED);
    int rc = gsnap_store__distinct_nbrs(s->db, ss->rd, node, ss->dir, ss->at_t, ss->as_of, ids, n);
    if (rc) return rc;
    s->bytes_read += *n * sizeof(uint64_t);
    if ((kept = gsnap_samp__lc_put(&ss->lc, node, *ids, *n))) *ids = kept; /* NULL: not kept */
    return 0;
}

static void st_prefetch(const gsnap_samp__src *s, uint64_t node, int stage) {
    gsnap_samp__lc_prefetch(&((const store_src *)s)->lc, node, stage);
}

static int scan_cb(void *ctx, uint64_t node, const gsnap_nbr *nbrs, size_t n) {
    store_src *ss = ctx;
    size_t m;
    int rc = dedupe(ss, nbrs, n, &m);
    if (rc) return rc;
    ss->base.bytes_read += n * sizeof(gsnap_nbr);
    return ss->fn(ss->ctx, node, ss->ids, m);
}

static int st_scan(gsnap_samp__src *s, int64_t at_t, uint64_t as_of, gsnap_samp__scan_fn fn,
                   void *ctx) {
    store_src *ss = (store_src *)s;
    ss->fn = fn;
    ss->ctx = ctx;
    return gsnap_store__scan(s->db, NULL, ss->dir, at_t, as_of, scan_cb, ss);
}

static int st_latest(gsnap_samp__src *s, uint64_t *v) { return gsnap_db_version(s->db, v); }

static int st_changed(gsnap_samp__src *s, uint64_t v, uint64_t **nodes, size_t *n) {
    store_src *ss = (store_src *)s;
    uint64_t *p = NULL;
    int rc = gsnap_store__changed_nodes(s->db, NULL, ss->dir, v - 1, v, &p, n);
    if (rc) return rc;
    /* hand back a malloc'd copy so callers free() it */
    *nodes = malloc((*n ? *n : 1) * sizeof **nodes);
    if (!*nodes) { gsnap_free(p); return GSNAP_ENOMEM; }
    if (*n) memcpy(*nodes, p, *n * sizeof **nodes);
    gsnap_free(p);
    return 0;
}

static int st_bound(gsnap_samp__src *s, uint64_t *b) {
    return gsnap_store__node_bound(s->db, NULL, b);
}

static void st_lists(gsnap_samp__src *s, uint64_t out[4]) {
    gsnap_samp__lcache *c = &((store_src *)s)->lc;
    out[0] = __atomic_load_n(&c->hits, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&c->misses, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&c->pub_kept, __ATOMIC_RELAXED);
    out[3] = __atomic_load_n(&c->pub_bytes, __ATOMIC_RELAXED);
}

static void st_destroy(gsnap_samp__src *s) {
    store_src *ss = (store_src *)s;
    if (!ss) return;
    gsnap_read_end(ss->rd);
    gsnap_samp__lc_free(&ss->lc);
    free(ss->nb);
    free(ss->ids);
    free(ss);
}

static void st_keep_lists(gsnap_samp__src *src, size_t bytes) {
    store_src *ss = (store_src *)src;
    gsnap_samp__lc_free(&ss->lc);
    gsnap_samp__lc_init(&ss->lc, bytes, GSNAP_SAMP_LC_MIN_IDS);
}

static int st_fork(gsnap_samp__src *s, gsnap_samp__src **out) {
    int rc = gsnap_samp__src_store(s->db, ((store_src *)s)->dir, out);
    if (rc == 0) st_keep_lists(*out, ((store_src *)s)->lc.budget);
    return rc;
}

int gsnap_samp__src_store(gsnap_db *db, gsnap_dir dir, gsnap_samp__src **out) {
    *out = NULL;
    store_src *ss = calloc(1, sizeof *ss);
    if (!ss) return GSNAP_ENOMEM;
    ss->base.begin = st_begin;
    ss->base.end = st_end;
    ss->base.nbrs = st_nbrs;
    ss->base.scan = st_scan;
    ss->base.latest = st_latest;
    ss->base.changed = st_changed;
    ss->base.bound = st_bound;
    ss->base.destroy = st_destroy;
    ss->base.fork = st_fork;
    ss->base.lists = st_lists;
    ss->base.prefetch = st_prefetch;
    ss->base.keep_lists = st_keep_lists;
    ss->base.db = db;
    ss->dir = dir;
    ss->at_t = GSNAP_TIME_MAX;
    ss->as_of = GSNAP_VERSION_LATEST;
    gsnap_samp__lc_init(&ss->lc, (size_t)GSNAP_SAMP_LC_BYTES, GSNAP_SAMP_LC_MIN_IDS);
    *out = &ss->base;
    return 0;
}
