/*
 * snapshot/adv_int.h -- private to the `snapshot advance` sources:
 *   advance.c    the entry point: claim, catalog, C_1, the phases in order;
 *   adv_read.c   adjacency at the new (T, V) (cached), stored records and
 *                lists of the old version (block cache, decoded lists),
 *                recomputed entries;
 *   adv_join.c   recompute: hop 1 from adjacency, hop h >= 2 full or
 *                incremental (what changed and why: docs/snapshot.md);
 *   adv_pairs.c  the (node, input) pairs of a hop and the B_h sets;
 *   adv_write.c  copy-on-write of the changed lists into slab blocks;
 *   adv_free.c   free list, live bytes per block, the oldest reader;
 *   adv_commit.c the one write txn of the new snapshot version;
 *   adv_commit_hop.c  its records of one hop, in node order;
 *   adv_thr.c    the bound a candidate must beat to enter a stored list, and
 *                the pair filter built on it;
 *   adv_tail.c   the add-only path: hop 1 from the appended events, cached
 *                lists from the stored draw and the new in-neighbours.
 */
#ifndef GSNAP_ADV_INT_H
#define GSNAP_ADV_INT_H

#include "snapshot/snapshot_int.h"
#include <stdlib.h>
#include <string.h>

/* ---- a small u64 -> u32 hash map (open addressing) ---- */
typedef struct { uint64_t *k; uint32_t *v; size_t cap, n; } u64map;

static inline uint64_t adv_mix(uint64_t x) { x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; return x; }
int gsnap_adv__map_grow(u64map *m);

static inline uint32_t map_get(const u64map *m, uint64_t key) {
    if (!m->cap) return UINT32_MAX;
    size_t j = adv_mix(key) & (m->cap - 1);
    while (m->v[j] != UINT32_MAX) {
        if (m->k[j] == key) return m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}

static inline int map_put(u64map *m, uint64_t key, uint32_t val) {
    if (2 * (m->n + 1) > m->cap) { int rc = gsnap_adv__map_grow(m); if (rc) return rc; }
    size_t j = adv_mix(key) & (m->cap - 1);
    while (m->v[j] != UINT32_MAX) {
        if (m->k[j] == key) { m->v[j] = val; return 0; }
        j = (j + 1) & (m->cap - 1);
    }
    m->k[j] = key; m->v[j] = val; m->n++;
    return 0;
}

static inline void map_free(u64map *m) { free(m->k); free(m->v); memset(m, 0, sizeof *m); }

/* A growable u64 vector. Its storage may be a mapping of its own
 * (adv_util.c; mapped = 1): grow it only by these functions and release it
 * only by gsnap_adv__vfree, never by free(). */
typedef struct { uint64_t *v; size_t n, cap; int mapped; } vec;
int gsnap_adv__vgrow(vec *a);
/* room for at least want members */
int gsnap_adv__vreserve(vec *a, size_t want);
/* release the storage and zero *a */
void gsnap_adv__vfree(vec *a);
static inline int vpush(vec *a, uint64_t x) {
    if (a->n == a->cap && gsnap_adv__vgrow(a)) return GSNAP_ENOMEM;
    a->v[a->n++] = x;
    return 0;
}

/* append x[0..n) */
int gsnap_adv__vappend(vec *a, const uint64_t *x, size_t n);

/* A set with its members in order of insertion. */
typedef struct { vec k; u64map m; } nset;
static inline int nset_add(nset *s, uint64_t x) {
    if (map_get(&s->m, x) != UINT32_MAX) return 0;
    int rc = map_put(&s->m, x, 1);
    return rc ? rc : vpush(&s->k, x);
}
static inline void nset_free(nset *s) { gsnap_adv__vfree(&s->k); map_free(&s->m); memset(s, 0, sizeof *s); }

/* Sort x[0..n) ascending (radix by the bytes the keys do not share); tmp
 * holds n. */
void gsnap_adv__sort_u64(uint64_t *x, size_t n, uint64_t *tmp);

/* A (node, input) pair of the join: v's list has input u (vu has
 * gsnap_pair's layout, so gsnap_sort__pairs sorts it by (v, u)). */
typedef struct { uint64_t v, u; } vu;

/* A recomputed list of one (hop, node). */
typedef struct {
    uint64_t node, est, old_est;
    uint64_t *s;            /* scores ascending (n of them) */
    uint64_t *add;          /* the members of s not in the old list, ascending (nadd) */
    uint32_t n, old_n, nadd;
    uint8_t capped, old_capped, changed, had_list;
    uint8_t prop;           /* the list or its capped flag changed: inputs of the next hop changed */
    uint8_t moved;          /* the list's bytes changed: it is written to a new place */
    uint64_t old_off;       /* old slab offset (had_list) */
} entry;

typedef struct {
    entry *e;
    size_t n, cap;
    u64map idx;
} hopset;

typedef struct {
    gsnap_db *db;
    const char *name;
    struct gsnap_cat cat;
    gsnap_snapshot__params p;
    MDB_dbi dbi;
    MDB_txn *rt;
    gsnap_read *rd;          /* the recompute's read view (NULL outside it) */
    MDB_cursor *cur[GSNAP_MAX_HOPS + 1]; /* per hop, on rt (adv_read.c table_find) */
    int64_t T;
    uint64_t V;
    uint64_t key;
    int fd[GSNAP_MAX_HOPS + 1];
    hopset hs[GSNAP_MAX_HOPS + 1];
    /* N(v) at the new (T, V) of the nodes asked for (adjacency cache) */
    u64map nin_idx;
    vec nin_off, nin_ids;
    /* the same for the other direction (out-neighbours: where a change goes) */
    u64map nout_idx;
    vec nout_off, nout_ids;
    u64map c1;              /* C_1 */
    vec c1_list;
    /* hop 1's result per C_1 node i, kept for the commit: its new
     * in-neighbours c1_new[c1_doff[i] .. c1_doff[i + 1]), c1_lost[i] = it
     * lost one (then c1_new is not used) */
    vec c1_new, c1_doff;
    uint8_t *c1_lost;
    int addonly;            /* no deletes, T kept, V forward (adv_tail.c) */
    gsnap_store_ev *tev; size_t tev_cap;
    vec tail, merged;       /* adv_tail.c scratch */
    unsigned char *blk;      /* the block last read (points into bc) */
    unsigned char *bc;       /* block cache: BCACHE blocks */
    uint64_t *bc_tag;        /* ((block << 8) | hop) + 1, 0 = empty */
    /* decoded stored lists: per hop, node -> index into ol */
    u64map ol_idx[GSNAP_MAX_HOPS + 1];
    struct olrec { uint64_t est, off; uint32_t n, at; uint8_t capped, had; } *ol;
    size_t nol, ol_cap;
    vec ol_s;                /* their scores */
    /* the same, only the smallest c_{h+1} scores (inputs of hop h + 1) */
    u64map tp_idx[GSNAP_MAX_HOPS + 1];
    struct tprec { uint32_t at, n; uint8_t capped; } *tp;
    size_t ntp, tp_cap;
    vec tp_s;
    void *scratch;
    size_t scratch_cap;
    /* rewrite plan */
    struct hop_plan {
        uint64_t *freed; size_t nfreed;        /* blocks freed (touched) */
        uint64_t *alloc; size_t nalloc;        /* blocks written */
        size_t reused;
        uint64_t new_blocks;                   /* catalog block count after */
        /* (node, off, len, xxh) of every rewritten list */
        struct nptr { uint64_t node, off, xxh; uint32_t len; } *np; size_t nnp;
    } plan[GSNAP_MAX_HOPS + 1];
    /* free-list entries consumed: txnid -> how many blocks of it were used */
    struct fl { uint64_t txnid; uint64_t *blk; size_t n, used; } *fl;
    size_t nfl;
    uint32_t *live[GSNAP_MAX_HOPS + 1];     /* live list bytes per block */
    uint64_t live_cap[GSNAP_MAX_HOPS + 1];
    gsnap_advance_report rep;
    uint64_t rep_pruned;     /* incremental nodes skipped: nothing could enter */
    const gsnap_advance_options *opts;
    int lock_fd;             /* the name's claim (claim.c) */
} adv;

#define BCACHE 4096u /* verified blocks kept (direct mapped by (hop, block)) */

/* advance.c: tests only (NULL otherwise): called in the advance's read view
 * just before it fixes its target version (a commit made there must not be
 * taken as advanced). */
extern void (*gsnap_adv__setup_hook)(gsnap_db *db);

/* adv_read.c */
int gsnap_adv__nbrs_at(adv *a, uint64_t v, gsnap_dir dir, int64_t T, uint64_t V, vec *out);
int gsnap_adv__nin(adv *a, uint64_t v, const uint64_t **ids, size_t *n);
int gsnap_adv__nout(adv *a, uint64_t v, const uint64_t **ids, size_t *n);
int gsnap_adv__find(adv *a, MDB_cursor *cur, unsigned h, uint64_t v, MDB_val *val, int *found);
void gsnap_adv__cursors_close(adv *a);
int gsnap_adv__old_rec(adv *a, unsigned h, uint64_t v, struct gsnap_rec_hdr *hd, int *exists);
int gsnap_adv__read_block(adv *a, unsigned h, uint64_t b);
int gsnap_adv__old_ids(adv *a, unsigned h, uint64_t v, uint64_t *ids, uint32_t *n, struct gsnap_rec_hdr *hd, int *had);
int gsnap_adv__old_list(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                        int *had, uint64_t *off);
int gsnap_adv__cur_list(adv *a, unsigned h, uint64_t u, uint64_t *buf, const uint64_t **s, uint32_t *n,
                        int *capped);
int gsnap_adv__top_list(adv *a, unsigned h, uint64_t u, uint32_t c, const uint64_t **s, uint32_t *n, int *capped);
int gsnap_adv__add_entry(adv *a, unsigned h, uint64_t v, const uint64_t *s, uint32_t n, int capped, uint64_t est,
                         int *changed);
int gsnap_adv__nin_put(adv *a, uint64_t v, const uint64_t *ids, size_t n);
/* adv_thr.c */
uint64_t gsnap_adv__enter_bound(const struct gsnap_rec_hdr *hd, uint32_t c);
int gsnap_adv__thr_load(adv *a, unsigned h, uint64_t **thr, uint64_t *nthr);
/* adv_tail.c */
void gsnap_adv__addonly_check(adv *a);
int gsnap_adv__tail_nin(adv *a, uint64_t v, const vec *old, int capped, int *done);
int gsnap_adv__cache_incr(adv *a, size_t i, size_t n, size_t m_full, uint64_t key, uint64_t gen,
                          const uint64_t *old, size_t nold, uint64_t old_deg, vec *out, int *done);
/* adv_join.c */
int gsnap_adv__recompute(adv *a);
/* adv_pairs.c */
/* What a pair of hop h says about its input u = a changed node of hop h-1
 * (copied from its entry once, so the join reads a small array, not the
 * entries and their lists in random order). */
typedef struct {
    uint64_t u, minadd;       /* the node; its smallest added score (UINT64_MAX: none) */
    const uint64_t *add;      /* its added members (scores ascending) */
    uint32_t nadd;
    uint8_t capped;
} pmeta;
#define PAIR_FULL UINT64_MAX  /* pair (v, PAIR_FULL): recompute v in full */
#define PAIR_DELTA (1ull << 63) /* pair (v, PAIR_DELTA | i): delta[i].u is a new in-neighbour of v */
typedef struct {
    vu *p; size_t n, cap;     /* pairs of the hop: (v, index into meta), (v, PAIR_DELTA | i), (v, PAIR_FULL) */
    pmeta *meta; size_t nmeta, mcap;
    vu *delta; size_t nd, dcap; /* (v, u): u is a new in-neighbour of v (hop 1 found it) */
    gsnap_pair *tmp; size_t tcap; /* sort buffer */
    nset B, B1;               /* B_h (may have lost members), B_1 */
} adv_pairs;
int gsnap_adv__push_pair(vu **p, size_t *n, size_t *cap, uint64_t v, uint64_t u);
int gsnap_adv__sort_vu(adv_pairs *P, vu *x, size_t n);
int gsnap_adv__next_B(adv *a, adv_pairs *P);
int gsnap_adv__hop_pairs(adv *a, adv_pairs *P, unsigned h);
void gsnap_adv__pairs_free(adv_pairs *P);
/* adv_free.c */
int gsnap_adv__load_free(adv *a);
int gsnap_adv__load_live(adv *a, unsigned h);
int gsnap_adv__live_grow(adv *a, unsigned h, uint64_t b);
uint64_t gsnap_adv__oldest_reader(gsnap_db *db);
/* adv_write.c */
int gsnap_adv__rewrite_hop(adv *a, unsigned h, uint64_t oldest);
/* adv_commit_hop.c */
int gsnap_adv__commit_hop(adv *a, MDB_txn *txn, struct gsnap_cat *c, unsigned h, uint8_t *had);
/* adv_commit.c */
int gsnap_adv__commit_txn(gsnap_db *db, MDB_txn *txn, void *vctx);

#endif
