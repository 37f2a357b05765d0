/*
 * sampler/temporal_int.h -- private to the temporal sampler
 * (sampler/temporal.c, tindex.c, tsample.c, tblock.c, tstream.c) and its
 * white-box tests.
 *
 * INVARIANTS
 *   - The T-CSR holds, per node, the ADD events of `dir` committed in
 *     versions <= ts->version, sorted by (t, version, neighbour, batch order),
 *     each with the time of the delete that kills it at that version
 *     (GSNAP_TIME_MAX: never). The pairing of deletes with adds is the
 *     store's replay rule (per pair, in (t, version, batch order), a delete
 *     kills the oldest live instance); it does not depend on the query time,
 *     so an instance is live at T iff t <= T < kill.
 *   - A node's list is only ever replaced whole (refresh re-reads the node at
 *     the new version and appends the new list to the pool); never edited in
 *     place, so the pool holds each node's list contiguously.
 *   - Random draws: gsnap_samp__h(seed, GSNAP_P_TEMPORAL << 8 | layer,
 *     root index, batch): a batch is a pure function of (seed, batch, roots).
 */
#ifndef GSNAP_TEMPORAL_INT_H
#define GSNAP_TEMPORAL_INT_H

#include "sampler/sampler_int.h"

#define GSNAP_TS_MAGIC 0x53544d54u /* "TMTS" */
#define GSNAP_P_TEMPORAL 16u
#define GSNAP_P_TSTREAM 17u
#define GSNAP_TS_MAX_FANOUT 1000000u
#define GSNAP_TS_HASDEL 0x80000000u
#define GSNAP_TS_DENSE_MIN (1u << 20) /* node ids below this: always dense */

typedef struct {
    uint64_t off; /* first event in the pool */
    uint32_t n;   /* add events */
    uint32_t cap; /* pool slots owned from off (>= n; spare room for appends) */
    uint32_t ndead; /* of them with a kill time (a delete at this version),
                       | GSNAP_TS_HASDEL when the node has any delete event;
                       0: no delete at all (the fast paths) */
} gsnap_ts__node;

typedef struct {
    uint64_t nbr, ver;
} gsnap_ts__nv;

/* A root's node and candidate range (sampling phase 1). */
typedef struct {
    uint64_t off;       /* the node's first event in the pool */
    uint32_t lo, hi;    /* candidates [off + lo, off + hi) */
    uint32_t ndead;     /* the node's ndead (phase 2 never reads nodes[]) */
    uint32_t pad;
} gsnap_ts__range;

/* Per-layer output being built. */
typedef struct {
    uint64_t *root_node;
    int64_t *root_t;
    uint64_t *indptr;
    size_t nroots, roots_cap, indptr_cap;
    uint64_t *nbr, *ever, *eidx;
    int64_t *et, *dt;
    size_t nedges, edges_cap;
} gsnap_ts__layer;

struct gsnap_tsampler {
    uint32_t magic;
    gsnap_db *db;
    gsnap_tsampler_options o;
    uint64_t version;
    int dense;      /* nodes[] indexed by node id (ids compact); else the map */
    /* node id -> index in nodes[] (open addressing, linear probing) */
    uint64_t *keys;
    uint32_t *vals; /* UINT32_MAX: empty */
    size_t mcap, mcount;
    gsnap_ts__node *nodes;
    size_t nnodes, nodes_cap;
    /* event pool: times apart (the binary search), neighbour and version
     * together (one cache line per sampled event), kill times apart (read
     * only for nodes with deletes) */
    int64_t *t, *kill;
    gsnap_ts__nv *nv;
    size_t pool_n, pool_cap, waste; /* waste: garbage slots */
    size_t slack;                   /* spare slots of live lists (cap - n) */
    /* build scratch */
    gsnap_store_ev *raw;
    size_t raw_cap;
    /* sampling scratch */
    gsnap_samp__scratch sc;
    uint32_t *pick, *alive;
    size_t pick_cap, alive_cap;
    gsnap_ts__range *ranges;
    size_t ranges_cap;
    gsnap_ts__layer layers[GSNAP_TS_MAX_LAYERS];
    uint64_t *ids; /* random_nodes: nodes with events, ascending */
    size_t nids;
    int ids_valid;
    unsigned char *out;
    size_t out_cap;
    char err[256];
};

/* temporal.c: the detail message (ts->err, printf-style) and code; the same
 * with the store's message for a failed store call `what` */
int gsnap_ts__err(gsnap_tsampler *ts, int code, const char *fmt, ...)
    GSNAP_PRINTF(3, 4);
int gsnap_ts__store_err(gsnap_tsampler *ts, int code, const char *what);

/* The node map's hash slot of node id k (mask: capacity - 1). */
static inline size_t gsnap_ts__hslot(uint64_t k, size_t mask) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & mask;
}

/* Node lookup (NULL when the node has no add event). Inline: sampling calls
 * it once or twice per root. */
static inline const gsnap_ts__node *gsnap_ts__find(const gsnap_tsampler *ts, uint64_t node) {
    if (ts->dense) return node < ts->nnodes ? &ts->nodes[node] : NULL;
    if (!ts->mcap) return NULL;
    size_t mask = ts->mcap - 1;
    for (size_t i = gsnap_ts__hslot(node, mask);; i = (i + 1) & mask) {
        if (ts->vals[i] == UINT32_MAX) return NULL;
        if (ts->keys[i] == node) return &ts->nodes[ts->vals[i]];
    }
}

/* tindex.c: the T-CSR.
 * dense_grow: the dense node array to `bound` entries. build_node: the
 * node's list rebuilt from all its raw events (build_cb: the same as a
 * gsnap_store__scan_raw callback, ctx = ts). merge_node: the new versions'
 * add-only events merged into the node's list. compact_pool: the lists
 * copied into a fresh pool without the garbage. */
int gsnap_ts__dense_grow(gsnap_tsampler *ts, uint64_t bound);
int gsnap_ts__build_node(gsnap_tsampler *ts, uint64_t node, const gsnap_store_ev *ev, size_t n);
int gsnap_ts__build_cb(void *ctx, uint64_t node, const gsnap_store_ev *ev, size_t n);
int gsnap_ts__merge_node(gsnap_tsampler *ts, uint64_t node, const gsnap_store_ev *ev, size_t n);
int gsnap_ts__compact_pool(gsnap_tsampler *ts);
/* First index in [0, n) of a with a[i] > x (a sorted ascending); n when
 * none. Branch-free halving (a conditional move per step): the comparisons
 * of a binary search over times are unpredictable. */
static inline size_t gsnap_ts__upper(const int64_t *a, size_t n, int64_t x) {
    if (n == 0) return 0;
    const int64_t *base = a;
    while (n > 1) {
        size_t half = n / 2, next = (n - half) / 2;
        /* both possible next probes: long lists (hubs) miss the cache */
        __builtin_prefetch(base + next);
        __builtin_prefetch(base + half + next);
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return (size_t)(base - a) + (*base <= x);
}

/* tblock.c */
size_t gsnap_ts__block_size(const gsnap_ts__layer *ls, unsigned nl);
void gsnap_ts__block_pack(void *buf, const gsnap_ts__layer *ls, unsigned nl,
                          const gsnap_tsampler_options *o, uint64_t batch, uint64_t version);

#endif
