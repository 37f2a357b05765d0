/*
 * snapshot/advance.c -- `snapshot advance`: move a sampled snapshot to a
 * newer (T, V) by recomputing only what changed, as a new snapshot version.
 *
 * Recompute (in one read view of the old snapshot and the store):
 *   C_1 = nodes whose adjacency (snapshot direction) changed between the
 *         two (T, V): the store's per-version touched-node log for versions
 *         between the old and the new V; every touched node when T moves.
 *   hop 1: D_1(v) for v in C_1 from N(v) at the new (T, V);
 *   hop h: D_h(v) for v in C_1 and for the out-neighbours of nodes whose
 *         D_{h-1} (or its capped flag) changed, from the new D_{h-1} where
 *         recomputed and the stored D_{h-1} elsewhere.
 * The same function of the same inputs as a fresh build (sampled.c), so the
 * lists, sizes and flags are those of a create at the new (T, V).
 *
 * Write (copy-on-write by block): every block that holds a changed list is
 * rewritten whole into other blocks (its unchanged lists copied, changed
 * ones replaced, lists packed in node order), and freed. New blocks are
 * taken from the free list -- blocks freed by the commit with LMDB txn id t
 * are reusable once every live LMDB reader has txn id >= t (it then sees a
 * table that no longer points into them) -- or appended past the catalog's
 * block count. So no block that a live reader's table version points to is
 * ever written. Blocks are fsynced, then one LMDB write txn updates the
 * records, the free list (table keys (0xffffffff, txnid)) and the catalog
 * (new (T, V), snap_version + 1). A crash before that commit leaves the old
 * version: what was written went to free or unreferenced blocks.
 * Space: live blocks are either untouched blocks of earlier writes (packed
 * full when written) or packed new ones, and freed blocks are reused by the
 * next advance when no reader holds them, so a file stays near the size of
 * a fresh build plus the blocks one advance rewrites.
 */
#include "snapshot/snapshot_int.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <stdio.h>

/* ---- a small u64 -> u32 hash map (open addressing) ---- */
typedef struct { uint64_t *k; uint32_t *v; size_t cap, n; } u64map;

static uint64_t mix(uint64_t x) { x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; return x; }

static int map_grow(u64map *m) {
    size_t nc = m->cap ? 2 * m->cap : 1024;
    uint64_t *k = malloc(nc * sizeof *k);
    uint32_t *v = malloc(nc * sizeof *v);
    if (!k || !v) { free(k); free(v); return GSNAP_ENOMEM; }
    memset(v, 0xff, nc * sizeof *v);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->v[i] == UINT32_MAX) continue;
        size_t j = mix(m->k[i]) & (nc - 1);
        while (v[j] != UINT32_MAX) j = (j + 1) & (nc - 1);
        k[j] = m->k[i];
        v[j] = m->v[i];
    }
    free(m->k); free(m->v);
    m->k = k; m->v = v; m->cap = nc;
    return 0;
}

static uint32_t map_get(const u64map *m, uint64_t key) {
    if (!m->cap) return UINT32_MAX;
    size_t j = mix(key) & (m->cap - 1);
    while (m->v[j] != UINT32_MAX) {
        if (m->k[j] == key) return m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}

static int map_put(u64map *m, uint64_t key, uint32_t val) {
    if (2 * (m->n + 1) > m->cap) { int rc = map_grow(m); if (rc) return rc; }
    size_t j = mix(key) & (m->cap - 1);
    while (m->v[j] != UINT32_MAX) {
        if (m->k[j] == key) { m->v[j] = val; return 0; }
        j = (j + 1) & (m->cap - 1);
    }
    m->k[j] = key; m->v[j] = val; m->n++;
    return 0;
}

static void map_free(u64map *m) { free(m->k); free(m->v); memset(m, 0, sizeof *m); }

typedef struct { uint64_t *v; size_t n, cap; } vec;
static int vpush(vec *a, uint64_t x) {
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 64;
        uint64_t *p = realloc(a->v, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        a->v = p; a->cap = c;
    }
    a->v[a->n++] = x;
    return 0;
}

/* A recomputed list of one (hop, node). */
typedef struct {
    uint64_t node, est, old_est;
    uint64_t *s;            /* scores ascending (n of them) */
    uint64_t *add;          /* the members of s not in the old list, ascending (nadd) */
    uint32_t n, old_n, nadd;
    uint8_t capped, old_capped, changed, had_list;
    uint8_t prop;           /* the list or its capped flag changed: inputs of the next hop changed */
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
    gsnap_nbr *nb;
    size_t nb_cap;
    unsigned char *blk;      /* the block last read (points into bc) */
    unsigned char *bc;       /* block cache: BCACHE blocks */
    uint64_t *bc_tag;        /* ((block << 8) | hop) + 1, 0 = empty */
    /* decoded stored lists: per hop, node -> index into ol */
    u64map ol_idx[GSNAP_MAX_HOPS + 1];
    struct olrec { uint64_t est, off; uint32_t n, at; uint8_t capped, had; } *ol;
    size_t nol, ol_cap;
    vec ol_s;                /* their scores */
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

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
    return (a > c) - (a < c);
}

/* Sort x[0..n) ascending: LSD radix by bytes, skipping the bytes every key
 * shares (node ids use few); tmp holds n. */
static void sort_u64(uint64_t *x, size_t n, uint64_t *tmp) {
    if (n < 2) return;
    if (n < 24) {
        for (size_t i = 1; i < n; i++) {
            uint64_t y = x[i];
            size_t j = i;
            while (j && x[j - 1] > y) { x[j] = x[j - 1]; j--; }
            x[j] = y;
        }
        return;
    }
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; i++) { all_or |= x[i]; all_and &= x[i]; }
    uint64_t *src = x, *dst = tmp;
    for (unsigned sh = 0; sh < 64; sh += 8) {
        if ((((all_or ^ all_and) >> sh) & 0xff) == 0) continue;
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++) cnt[(src[i] >> sh) & 0xff]++;
        size_t sum = 0;
        for (unsigned d = 0; d < 256; d++) { size_t c = cnt[d]; cnt[d] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> sh) & 0xff]++] = src[i];
        uint64_t *t = src; src = dst; dst = t;
    }
    if (src != x) memcpy(x, src, n * sizeof *x);
}

/* N(v) at the new (T, V), distinct ascending (self loop kept). */
static int nbrs_at(adv *a, uint64_t v, gsnap_dir dir, int64_t T, uint64_t V, vec *out) {
    size_t n = 0;
    int rc;
    out->n = 0;
    for (;;) {
        rc = gsnap_neighbors(a->db, NULL, v, dir, T, V, a->nb, a->nb_cap, &n);
        if (rc) return rc;
        if (n <= a->nb_cap) break;
        free(a->nb);
        a->nb_cap = n + n / 2;
        if (!(a->nb = malloc(a->nb_cap * sizeof *a->nb))) return GSNAP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (!i || a->nb[i].node != a->nb[i - 1].node)
            if ((rc = vpush(out, a->nb[i].node))) return rc;
    return 0;
}

static int nbrs(adv *a, uint64_t v, gsnap_dir dir, vec *out) { return nbrs_at(a, v, dir, a->T, a->V, out); }

/* N(v) in direction dir at the new (T, V), cached in (idx, off, ids):
 * *ids valid until the next call with the same cache. */
static int nbrs_cached(adv *a, uint64_t v, gsnap_dir dir, u64map *idx, vec *off, vec *ids_v, const uint64_t **ids,
                       size_t *n) {
    uint32_t i = map_get(idx, v);
    if (i == UINT32_MAX) {
        vec t = {0};
        int rc = nbrs(a, v, dir, &t);
        if (rc) { free(t.v); return rc; }
        i = (uint32_t)(off->n);
        if ((rc = vpush(off, ids_v->n)) || (rc = vpush(off, t.n)) || (rc = map_put(idx, v, i))) { free(t.v); return rc; }
        for (size_t j = 0; j < t.n; j++)
            if ((rc = vpush(ids_v, t.v[j]))) { free(t.v); return rc; }
        free(t.v);
    }
    *ids = ids_v->v + off->v[i];
    *n = off->v[i + 1];
    return 0;
}

/* N_in(v) (snapshot direction), cached. */
static int nin(adv *a, uint64_t v, const uint64_t **ids, size_t *n) {
    return nbrs_cached(a, v, a->p.dir, &a->nin_idx, &a->nin_off, &a->nin_ids, ids, n);
}

/* N_out(v) (against the snapshot direction: the nodes v is an input of), cached. */
static int nout(adv *a, uint64_t v, const uint64_t **ids, size_t *n) {
    gsnap_dir back = a->p.dir == GSNAP_DIR_IN ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
    return nbrs_cached(a, v, back, &a->nout_idx, &a->nout_off, &a->nout_ids, ids, n);
}

/* Stored record of (hop, v) in the old version: exists, and its list. */
static int old_rec(adv *a, unsigned h, uint64_t v, struct gsnap_rec_hdr *hd, int *exists) {
    unsigned char kb[12];
    gsnap_snap__key(kb, h, v);
    MDB_val k = {12, kb}, val;
    int rc = gsnap_store__get(a->db, a->rt, a->dbi, &k, &val, "snapshot advance: lookup");
    *exists = 0;
    if (rc == GSNAP_NOTFOUND) return 0;
    if (rc) return rc;
    if ((rc = gsnap_snap__rec_decode(val.mv_data, val.mv_size, hd))) /* decode verifies the checksum */
        return gsnap_store__err(a->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt", a->name, h,
                                (unsigned long long)v);
    *exists = 1;
    return 0;
}

#define BCACHE 4096u /* verified blocks kept (direct mapped by (hop, block)) */

static int read_block(adv *a, unsigned h, uint64_t b) {
    size_t slot = (size_t)(mix(b * 31 + h) & (BCACHE - 1));
    if (a->bc_tag[slot] == ((b << 8) | h) + 1) {
        a->blk = a->bc + slot * GSNAP_SLAB_BLOCK;
        return 0;
    }
    a->blk = a->bc + slot * GSNAP_SLAB_BLOCK;
    a->bc_tag[slot] = 0;
    if (b == 0 || b >= a->cat.blocks[h - 1] ||
        pread(a->fd[h], a->blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK)) != GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: cannot read", a->name, h,
                                (unsigned long long)b);
    if (gsnap_slab__block_verify(a->blk, b))
        return gsnap_store__err(a->db, GSNAP_ECHECKSUM, "snapshot %s hop %u block %llu: checksum mismatch", a->name, h,
                                (unsigned long long)b);
    a->bc_tag[slot] = ((b << 8) | h) + 1;
    return 0;
}

static int old_list_read(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                         int *had, uint64_t *off);

/* The stored D_h(v) as scores ascending (decoded once, then kept). */
static int old_list(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                    int *had, uint64_t *off) {
    uint32_t i = map_get(&a->ol_idx[h], v);
    int rc;
    if (i == UINT32_MAX) {
        struct olrec r;
        int c, hd;
        if ((rc = old_list_read(a, h, v, s, n, &c, &r.est, &hd, &r.off))) return rc;
        r.n = *n; r.capped = (uint8_t)c; r.had = (uint8_t)hd; r.at = (uint32_t)a->ol_s.n;
        for (uint32_t j = 0; j < *n; j++)
            if ((rc = vpush(&a->ol_s, s[j]))) return rc;
        if (a->nol == a->ol_cap) {
            size_t nc = a->ol_cap ? 2 * a->ol_cap : 1024;
            struct olrec *p = realloc(a->ol, nc * sizeof *p);
            if (!p) return GSNAP_ENOMEM;
            a->ol = p; a->ol_cap = nc;
        }
        a->ol[a->nol] = r;
        if ((rc = map_put(&a->ol_idx[h], v, (uint32_t)a->nol))) return rc;
        i = (uint32_t)a->nol++;
    }
    const struct olrec *r = &a->ol[i];
    *n = r->n; *capped = r->capped; *est = r->est; *had = r->had; *off = r->off;
    if (r->n) memcpy(s, a->ol_s.v + r->at, (size_t)r->n * sizeof *s);
    return 0;
}

static int old_list_read(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                         int *had, uint64_t *off) {
    struct gsnap_rec_hdr hd;
    int ex, rc;
    *n = 0; *capped = 0; *est = 0; *had = 0; *off = 0;
    if ((rc = old_rec(a, h, v, &hd, &ex)) || !ex || hd.slab_len == 0) return rc;
    if (hd.slab_len > GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR || hd.slab_off % GSNAP_SLAB_BLOCK + hd.slab_len > GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s: bad slab pointer (hop %u, node %llu)", a->name, h,
                                (unsigned long long)v);
    if ((rc = read_block(a, h, hd.slab_off / GSNAP_SLAB_BLOCK))) return rc;
    gsnap_slab_ptr sp = {hd.slab_off, hd.slab_len, hd.slab_xxh};
    uint64_t ids[GSNAP_SLAB_CAP];
    if ((rc = gsnap_slab__list_at(a->blk, hd.slab_off, v, &sp, ids, n)))
        return gsnap_store__err(a->db, rc, "snapshot %s hop %u node %llu: list does not match its table entry", a->name,
                                h, (unsigned long long)v);
    for (uint32_t i = 0; i < *n; i++) s[i] = gsnap_snap__score(ids[i], a->key);
    sort_u64(s, *n, ids); /* scores ascending (ids is free now) */
    *capped = (hd.flags & GSNAP_REC_CAPPED) != 0;
    *est = hd.n_exact;
    *had = 1;
    *off = hd.slab_off;
    return 0;
}

/* D_{h}(u) at the new version: recomputed if in hs[h], else stored. */
static int cur_list(adv *a, unsigned h, uint64_t u, uint64_t *buf, const uint64_t **s, uint32_t *n, int *capped) {
    uint32_t i = map_get(&a->hs[h].idx, u);
    if (i != UINT32_MAX) {
        entry *e = &a->hs[h].e[i];
        *s = e->s; *n = e->n; *capped = e->capped;
        return 0;
    }
    uint64_t est, off;
    int had;
    *s = buf;
    return old_list(a, h, u, buf, n, capped, &est, &had, &off);
}

static int add_entry(adv *a, unsigned h, uint64_t v, const uint64_t *s, uint32_t n, int capped, uint64_t est,
                     int *changed) {
    hopset *H = &a->hs[h];
    uint64_t old[GSNAP_SLAB_CAP], oest, ooff;
    uint32_t on;
    int oc, had, rc;
    if ((rc = old_list(a, h, v, old, &on, &oc, &oest, &had, &ooff))) return rc;
    if (H->n == H->cap) {
        size_t c = H->cap ? 2 * H->cap : 256;
        entry *p = realloc(H->e, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        H->e = p; H->cap = c;
    }
    entry *e = &H->e[H->n];
    memset(e, 0, sizeof *e);
    e->node = v; e->n = n; e->capped = (uint8_t)capped; e->est = est;
    e->old_n = on; e->old_capped = (uint8_t)oc; e->old_est = oest; e->had_list = (uint8_t)had; e->old_off = ooff;
    e->prop = on != n || oc != capped || (n && memcmp(old, s, n * sizeof *s) != 0);
    e->changed = e->prop || oest != est;
    if (n) {
        if (!(e->s = malloc(n * sizeof *s))) return GSNAP_ENOMEM;
        memcpy(e->s, s, n * sizeof *s);
    }
    if (e->prop && n) { /* added members: s minus old (both ascending) */
        uint64_t add[GSNAP_SLAB_CAP];
        uint32_t k = 0, na = 0;
        for (uint32_t i = 0; i < n; i++) {
            while (k < on && old[k] < s[i]) k++;
            if (k < on && old[k] == s[i]) continue;
            add[na++] = s[i];
        }
        if (na == n) e->add = e->s;
        else if (na && !(e->add = malloc(na * sizeof *add))) { free(e->s); return GSNAP_ENOMEM; }
        else if (na) memcpy(e->add, add, na * sizeof *add);
        e->nadd = na;
    }
    if ((rc = map_put(&H->idx, v, (uint32_t)H->n))) { if (e->add != e->s) free(e->add); free(e->s); return rc; }
    H->n++;
    *changed = e->changed;
    return 0;
}

/* ---- recompute ----
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
 *     in-neighbour) instead of O(c |N(v)|), and no adjacency query for v. */

typedef struct { uint64_t *k; size_t n; u64map m; } nset; /* a set with its members in order of insertion */
static int nset_add(nset *s, uint64_t x) {
    if (map_get(&s->m, x) != UINT32_MAX) return 0;
    int rc = map_put(&s->m, x, 1);
    if (rc) return rc;
    uint64_t *p = realloc(s->k, (s->n + 1) * sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    s->k = p;
    s->k[s->n++] = x;
    return 0;
}
static void nset_free(nset *s) { free(s->k); map_free(&s->m); memset(s, 0, sizeof *s); }

typedef struct { uint64_t v, u; } vu;

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
    if ((rc = old_rec(a, h, v, &hd, &ex)) || !ex) return rc;
    if (!(hd.flags & GSNAP_REC_CAPPED) || c < 2 || hd.slab_len != GSNAP_SLAB_LIST_HDR + 8u * c) return 0;
    if (hd.n_exact <= (uint64_t)c + 1 || hd.n_exact >= (uint64_t)1e19) return 0;
    double ub = (double)(c - 1) * 18446744073709551616.0 / ((double)hd.n_exact - 0.5) * (1.0 + 1e-9);
    if (!(ub < 1.8e19)) return 0;
    *skip = minc > (uint64_t)ub;
    return 0;
}

static int full_list(adv *a, unsigned h, uint64_t v, uint64_t *kept, uint64_t *buf, uint32_t *n, int *capped) {
    const uint64_t *xs;
    size_t nx;
    int rc;
    uint32_t c = a->cat.caps[h - 1];
    if ((rc = nin(a, v, &xs, &nx))) return rc;
    vec us = {0};
    for (size_t j = 0; j < nx; j++)
        if ((rc = vpush(&us, xs[j]))) { free(us.v); return rc; }
    gsnap_botc b = {kept, 0, c, 0};
    *capped = 0;
    for (size_t j = 0; j < us.n; j++) {
        const uint64_t *sl;
        uint32_t m;
        int uc;
        if ((rc = cur_list(a, h - 1, us.v[j], buf, &sl, &m, &uc))) break;
        if (!m) continue;
        gsnap_botc__merge(&b, sl, m);
        *capped |= uc;
    }
    free(us.v);
    *capped |= b.overflow;
    *n = b.n;
    return rc;
}

static int recompute(adv *a) {
    vec out = {0}, old = {0};
    nset B = {0}, Bn = {0}, B1 = {0};
    vu *pairs = NULL, *delta = NULL;
    size_t np = 0, pcap = 0, ndelta = 0, dcap = 0;
    uint64_t kept[GSNAP_SLAB_CAP], buf[GSNAP_SLAB_CAP];
    uint64_t *sc = NULL;
    size_t sc_cap = 0, ncl = 0, clcap = 0, dj;
    struct cl { uint64_t u; const uint64_t *s; uint32_t n; int capped; } *cl = NULL; /* inputs of one node */
    int rc = 0, ch;
    /* hop 1 */
    for (size_t i = 0; i < a->c1_list.n; i++) {
        uint64_t v = a->c1_list.v[i];
        const uint64_t *xs;
        size_t n;
        if ((rc = nbrs_at(a, v, a->p.dir, a->cat.at_t, a->cat.at_version, &old))) goto out;
        if ((rc = nin(a, v, &xs, &n))) goto out;
        size_t k = 0; /* N_old subset of N_new? (both ascending) */
        for (size_t j = 0; j < old.n; j++) {
            while (k < n && xs[k] < old.v[j]) k++;
            if (k == n || xs[k] != old.v[j]) { if ((rc = nset_add(&B1, v))) goto out; break; }
        }
        /* the new in-neighbours N_new \ N_old: inputs of the incremental joins */
        k = 0;
        for (size_t j = 0; j < n; j++) {
            while (k < old.n && old.v[k] < xs[j]) k++;
            if (k < old.n && old.v[k] == xs[j]) continue;
            if (ndelta == dcap) {
                dcap = dcap ? 2 * dcap : 1024;
                vu *p = realloc(delta, dcap * sizeof *p);
                if (!p) { rc = GSNAP_ENOMEM; goto out; }
                delta = p;
            }
            delta[ndelta++] = (vu){v, xs[j]};
            if ((rc = nin(a, v, &xs, &n))) goto out; /* xs may have moved */
        }
        if (sc_cap < n) {
            free(sc);
            sc_cap = n + n / 2;
            if (!(sc = malloc(2 * sc_cap * sizeof *sc))) { rc = GSNAP_ENOMEM; goto out; }
        }
        for (size_t j = 0; j < n; j++) sc[j] = gsnap_snap__score(xs[j], a->key);
        sort_u64(sc, n, sc + sc_cap);
        uint32_t m = (uint32_t)(n < a->cat.caps[0] ? n : a->cat.caps[0]);
        if ((rc = add_entry(a, 1, v, sc, m, n > m, n, &ch))) goto out;
    }
    a->rep.recomputed[0] = a->hs[1].n;
    if (ndelta > 1) { /* sorted by (v, u): walked beside the pairs */
        gsnap_pair *tmp = malloc(ndelta * sizeof *tmp);
        if (!tmp) { rc = GSNAP_ENOMEM; goto out; }
        gsnap_sort__pairs((gsnap_pair *)delta, tmp, ndelta);
        free(tmp);
    }
    for (size_t i = 0; i < B1.n; i++)
        if ((rc = nset_add(&B, B1.k[i]))) goto out;
    for (unsigned h = 2; h <= a->p.hops; h++) {
        uint32_t c = a->cat.caps[h - 1];
        /* B_h = B_1 u out(B_{h-1}) */
        nset_free(&Bn);
        for (size_t i = 0; i < B1.n; i++)
            if ((rc = nset_add(&Bn, B1.k[i]))) goto out;
        for (size_t i = 0; i < B.n; i++) {
            const uint64_t *os;
            size_t no;
            if ((rc = nout(a, B.k[i], &os, &no))) goto out;
            for (size_t j = 0; j < no; j++)
                if ((rc = nset_add(&Bn, os[j]))) goto out;
        }
        nset_free(&B);
        B = Bn;
        memset(&Bn, 0, sizeof Bn);
        /* (v, changed u) pairs, and C_1 */
        np = 0;
        for (size_t i = 0; i < a->hs[h - 1].n; i++) {
            entry *e = &a->hs[h - 1].e[i];
            if (!e->prop) continue;
            const uint64_t *os;
            size_t no;
            if ((rc = nout(a, e->node, &os, &no))) goto out;
            if (np + no > pcap) {
                pcap = 2 * (np + no) + 1024;
                vu *p = realloc(pairs, pcap * sizeof *p);
                if (!p) { rc = GSNAP_ENOMEM; goto out; }
                pairs = p;
            }
            for (size_t j = 0; j < no; j++) pairs[np++] = (vu){os[j], e->node};
        }
        for (size_t i = 0; i < B1.n; i++) { /* lost an in-neighbour: recompute in full */
            if (np == pcap) {
                pcap = pcap ? 2 * pcap : 1024;
                vu *p = realloc(pairs, pcap * sizeof *p);
                if (!p) { rc = GSNAP_ENOMEM; goto out; }
                pairs = p;
            }
            pairs[np++] = (vu){B1.k[i], UINT64_MAX};
        }
        for (size_t i = 0; i < ndelta; i++) {
            if (np == pcap) {
                pcap = pcap ? 2 * pcap : 1024;
                vu *p = realloc(pairs, pcap * sizeof *p);
                if (!p) { rc = GSNAP_ENOMEM; goto out; }
                pairs = p;
            }
            pairs[np++] = delta[i];
        }
        if (np > 1) { /* radix sort by (v, u): vu has gsnap_pair's layout */
            gsnap_pair *tmp = malloc(np * sizeof *tmp);
            if (!tmp) { rc = GSNAP_ENOMEM; goto out; }
            gsnap_sort__pairs((gsnap_pair *)pairs, tmp, np);
            free(tmp);
        }
        dj = 0;
        for (size_t i = 0; i < np;) {
            uint64_t v = pairs[i].v;
            size_t j = i;
            int full = 0;
            while (j < np && pairs[j].v == v) { full |= pairs[j].u == UINT64_MAX; j++; }
            full |= map_get(&B.m, v) != UINT32_MAX;
            uint32_t n = 0;
            int capped = 0;
            if (full) {
                if ((rc = full_list(a, h, v, kept, buf, &n, &capped))) goto out;
            } else {
                /* R_h(v) only grew: pass 1, the inputs (added members of a
                 * changed u, the whole list of a new in-neighbour), the
                 * smallest candidate, whether an input is capped; the prune */
                uint64_t minc = UINT64_MAX;
                int anycap = 0;
                ncl = 0;
                for (size_t q = i; q < j; q++) {
                    uint64_t u = pairs[q].u;
                    if (q > i && u == pairs[q - 1].u) continue;
                    while (dj < ndelta && (delta[dj].v < v || (delta[dj].v == v && delta[dj].u < u))) dj++;
                    int isd = dj < ndelta && delta[dj].v == v && delta[dj].u == u;
                    uint32_t ei = isd ? UINT32_MAX : map_get(&a->hs[h - 1].idx, u);
                    if (ncl == clcap) {
                        clcap = clcap ? 2 * clcap : 64;
                        struct cl *p = realloc(cl, clcap * sizeof *p);
                        if (!p) { rc = GSNAP_ENOMEM; goto out; }
                        cl = p;
                    }
                    struct cl *x = &cl[ncl++];
                    x->u = u;
                    if (ei != UINT32_MAX && a->hs[h - 1].e[ei].prop) {
                        const entry *e = &a->hs[h - 1].e[ei];
                        x->s = e->add; x->n = e->nadd; x->capped = e->capped;
                    } else { /* a new in-neighbour: its whole current list (read again in pass 2) */
                        if ((rc = cur_list(a, h - 1, u, buf, &x->s, &x->n, &x->capped))) goto out;
                        if (x->s == buf) x->s = NULL;
                        if (x->n && buf[0] < minc && !x->s) minc = buf[0];
                    }
                    if (x->n && x->s && x->s[0] < minc) minc = x->s[0];
                    anycap |= x->capped;
                }
                if (minc == UINT64_MAX && !anycap) { a->rep_pruned++; i = j; continue; }
                if (minc != UINT64_MAX) {
                    int skip;
                    if ((rc = cannot_enter(a, h, v, minc, &skip))) goto out;
                    if (skip) { a->rep_pruned++; i = j; continue; }
                }
                uint64_t oest, ooff;
                int had;
                gsnap_botc b = {kept, 0, c, 0};
                if ((rc = old_list(a, h, v, kept, &b.n, &capped, &oest, &had, &ooff))) goto out;
                for (size_t q = 0; q < ncl; q++) {
                    const uint64_t *sl = cl[q].s;
                    uint32_t m = cl[q].n;
                    int uc;
                    if (!sl && m && (rc = cur_list(a, h - 1, cl[q].u, buf, &sl, &m, &uc))) goto out;
                    if (m) gsnap_botc__merge(&b, sl, m);
                    capped |= cl[q].capped;
                }
                capped |= b.overflow;
                n = b.n;
            }
            uint64_t est = capped ? gsnap_snap__kmv(c, kept[n - 1]) : n;
            if ((rc = add_entry(a, h, v, kept, n, capped, est, &ch))) goto out;
            i = j;
        }
        a->rep.recomputed[h - 1] = a->hs[h].n;
    }
out:
    free(out.v); free(old.v); free(sc); free(pairs); free(delta); free(cl);
    nset_free(&B); nset_free(&Bn); nset_free(&B1);
    return rc;
}

/* ---- free list ---- */

/* Smallest txn id among live LMDB readers (UINT64_MAX when none). */
typedef struct { uint64_t min; int header; } rdscan;
static int reader_line(const char *msg, void *ctx) {
    rdscan *r = ctx;
    unsigned long long t;
    char tid[64];
    int pid;
    if (sscanf(msg, "%d %63s %llu", &pid, tid, &t) == 3 && (uint64_t)t < r->min) r->min = t;
    return 0;
}

static int load_free(adv *a) {
    MDB_cursor *cur = NULL;
    unsigned char kb[12];
    gsnap_snap__key(kb, 0, 0);
    kb[0] = kb[1] = kb[2] = kb[3] = 0xff;
    MDB_val k = {12, kb}, v;
    int rc = mdb_cursor_open(a->rt, a->dbi, &cur);
    if (rc) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list");
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *p = k.mv_data;
        if (k.mv_size != 12 || p[0] != 0xff || p[1] != 0xff || p[2] != 0xff || p[3] != 0xff) break;
        if (v.mv_size % 8) { rc = GSNAP_ECORRUPT; break; }
        struct fl *n = realloc(a->fl, (a->nfl + 1) * sizeof *n);
        if (!n) { rc = GSNAP_ENOMEM; break; }
        a->fl = n;
        struct fl *f = &a->fl[a->nfl];
        memset(f, 0, sizeof *f);
        for (int i = 4; i < 12; i++) f->txnid = f->txnid << 8 | p[i];
        f->n = v.mv_size / 8;
        if (!(f->blk = malloc(v.mv_size ? v.mv_size : 1))) { rc = GSNAP_ENOMEM; break; }
        memcpy(f->blk, v.mv_data, v.mv_size);
        a->nfl++;
    }
    mdb_cursor_close(cur);
    if (rc == MDB_NOTFOUND) rc = 0;
    if (rc == GSNAP_ECORRUPT) return gsnap_store__err(a->db, rc, "snapshot %s: free list record is corrupt", a->name);
    return rc > 0 ? gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list") : rc;
}

/* ---- rewrite ---- */

typedef struct { uint64_t node; uint32_t n; uint64_t ids[]; } olist;

static int cmp_ptr(const void *x, const void *y) {
    const olist *const *p = x, *const *q = y;
    return ((*p)->node > (*q)->node) - ((*p)->node < (*q)->node);
}

static int write_blk(adv *a, unsigned h, unsigned char *blk, uint32_t nl, uint64_t b) {
    gsnap_put_le32(blk, GSNAP_SLAB_MAGIC_DATA);
    gsnap_put_le32(blk + 4, nl);
    gsnap_put_le64(blk + 8, gsnap_slab__block_xxh(blk, b));
    a->bc_tag[mix(b * 31 + h) & (BCACHE - 1)] = 0; /* never serve a stale copy */
    ssize_t w = pwrite(a->fd[h], blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK));
    if (w != GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, errno == ENOSPC ? GSNAP_ENOSPC : GSNAP_EIO, "snapshot %s hop %u: writing block %llu: %s",
                                a->name, h, (unsigned long long)b, strerror(errno));
    return 0;
}

/* Live list bytes per block of hop h (table key (GSNAP_LIVE_HOP, h)):
 * written by the build and by every advance. */
static int load_live(adv *a, unsigned h) {
    unsigned char kb[12];
    gsnap_snap__key(kb, GSNAP_LIVE_HOP, h);
    MDB_val k = {12, kb}, v;
    uint64_t nb = a->cat.blocks[h - 1];
    if (!(a->live[h] = calloc(nb ? nb : 1, sizeof(uint32_t)))) return GSNAP_ENOMEM;
    a->live_cap[h] = nb;
    int rc = mdb_get(a->rt, a->dbi, &k, &v);
    if (rc == 0 && v.mv_size == nb * sizeof(uint32_t)) {
        memcpy(a->live[h], v.mv_data, v.mv_size);
        return 0;
    }
    if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: live bytes");
    /* absent or stale: count from the table */
    MDB_cursor *cur;
    if ((rc = mdb_cursor_open(a->rt, a->dbi, &cur))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance");
    gsnap_snap__key(kb, h, 0);
    k.mv_size = 12; k.mv_data = kb;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        unsigned kh = (unsigned)kp[0] << 24 | (unsigned)kp[1] << 16 | (unsigned)kp[2] << 8 | kp[3];
        struct gsnap_rec_hdr hd;
        if (kh != h) break;
        if (gsnap_snap__rec_decode(v.mv_data, v.mv_size, &hd) == 0 && hd.slab_len && hd.slab_off / GSNAP_SLAB_BLOCK < nb)
            a->live[h][hd.slab_off / GSNAP_SLAB_BLOCK] += hd.slab_len;
    }
    mdb_cursor_close(cur);
    return 0;
}

static int live_grow(adv *a, unsigned h, uint64_t b) {
    if (b < a->live_cap[h]) return 0;
    uint64_t nc = a->live_cap[h] * 2 + 64;
    while (nc <= b) nc *= 2;
    uint32_t *p = realloc(a->live[h], nc * sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    memset(p + a->live_cap[h], 0, (nc - a->live_cap[h]) * sizeof *p);
    a->live[h] = p;
    a->live_cap[h] = nc;
    return 0;
}

/* A block under this many live bytes is emptied (its lists move) and freed. */
#define SPARSE_BYTES ((GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR) * 5 / 8)

/* Copy-on-write by list: changed lists are written to new blocks; a block
 * keeps its other lists until its live bytes fall under SPARSE_BYTES, then
 * those move too and the block is freed. Every live block is thus at least
 * 5/8 full, except the last one written by an advance (emptied by the next). */
static int rewrite_hop(adv *a, unsigned h, uint64_t oldest) {
    struct hop_plan *pl = &a->plan[h];
    hopset *H = &a->hs[h];
    olist **ls = NULL;
    size_t nls = 0, cap = 0;
    unsigned char *out = NULL;
    vec touched = {0}, reuse = {0};
    int rc = 0;
    uint64_t hwm = a->cat.blocks[h - 1];
    if ((rc = load_live(a, h))) goto out;
#define PUSH_LIST(nd, cnt, src) do { \
        if (nls == cap) { cap = cap ? 2 * cap : 256; olist **q_ = realloc(ls, cap * sizeof *q_); \
            if (!q_) { rc = GSNAP_ENOMEM; goto out; } ls = q_; } \
        olist *o_ = malloc(sizeof *o_ + (size_t)(cnt) * 8); if (!o_) { rc = GSNAP_ENOMEM; goto out; } \
        o_->node = (nd); o_->n = (cnt); if (cnt) memcpy(o_->ids, (src), (size_t)(cnt) * 8); ls[nls++] = o_; } while (0)
    /* 1. changed lists leave their blocks */
    for (size_t i = 0; i < H->n; i++) {
        entry *e = &H->e[i];
        if (!e->changed) continue;
        a->rep.changed[h - 1]++;
        if (e->had_list) {
            uint64_t b = e->old_off / GSNAP_SLAB_BLOCK;
            uint32_t len = GSNAP_SLAB_LIST_HDR + 8u * e->old_n;
            if (b >= a->live_cap[h] || a->live[h][b] < len) {
                rc = gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: live byte count below its lists",
                                      a->name, h, (unsigned long long)b);
                goto out;
            }
            a->live[h][b] -= len;
            if ((rc = vpush(&touched, b))) goto out;
        }
        if (e->n) {
            uint64_t ids[GSNAP_SLAB_CAP];
            uint64_t tmp[GSNAP_SLAB_CAP];
            for (uint32_t j = 0; j < e->n; j++) ids[j] = gsnap_snap__unscore(e->s[j], a->key);
            sort_u64(ids, e->n, tmp);
            PUSH_LIST(e->node, e->n, ids);
        }
    }
    /* 2. sparse blocks (touched now, or left sparse by an earlier advance):
     * their live lists move */
    for (uint64_t b = 1; b < hwm; b++) {
        uint32_t lv = a->live[h][b];
        if (lv == 0 || lv >= SPARSE_BYTES) continue;
        if ((rc = read_block(a, h, b))) goto out;
        uint32_t cnt = gsnap_get_le32(a->blk + 4), pos = GSNAP_SLAB_BLOCK_HDR;
        for (uint32_t j = 0; j < cnt; j++) {
            if (pos + GSNAP_SLAB_LIST_HDR > GSNAP_SLAB_BLOCK) { rc = GSNAP_ECORRUPT; goto out; }
            uint64_t nd = gsnap_get_le64(a->blk + pos);
            uint32_t n = gsnap_get_le32(a->blk + pos + 8), len = GSNAP_SLAB_LIST_HDR + 8u * n;
            if (n > GSNAP_SLAB_CAP || pos + len > GSNAP_SLAB_BLOCK) { rc = GSNAP_ECORRUPT; goto out; }
            uint32_t ei = map_get(&H->idx, nd);
            if (ei == UINT32_MAX || !H->e[ei].changed) {
                struct gsnap_rec_hdr hd;
                int ex;
                if ((rc = old_rec(a, h, nd, &hd, &ex))) goto out;
                if (ex && hd.slab_len && hd.slab_off == b * GSNAP_SLAB_BLOCK + pos) { /* live: move it */
                    PUSH_LIST(nd, n, a->blk + pos + GSNAP_SLAB_LIST_HDR);
                    a->live[h][b] -= len;
                }
            }
            pos += len;
        }
        if (a->live[h][b] != 0) {
            rc = gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: live byte count above its lists",
                                  a->name, h, (unsigned long long)b);
            goto out;
        }
        if ((rc = vpush(&touched, b))) goto out;
    }
#undef PUSH_LIST
    /* freed: touched blocks now empty */
    if (touched.n > 1) qsort(touched.v, touched.n, sizeof *touched.v, cmp_u64);
    for (size_t i = 0; i < touched.n; i++) {
        uint64_t b = touched.v[i];
        if ((i && b == touched.v[i - 1]) || a->live[h][b]) continue;
        uint64_t *p = realloc(pl->freed, (pl->nfreed + 1) * sizeof *p);
        if (!p) { rc = GSNAP_ENOMEM; goto out; }
        pl->freed = p;
        pl->freed[pl->nfreed++] = b;
    }
    if (!nls && !pl->nfreed) { pl->new_blocks = hwm; goto out; }
    if (nls > 1) qsort(ls, nls, sizeof *ls, cmp_ptr);
    if (!(pl->np = malloc((nls ? nls : 1) * sizeof *pl->np))) { rc = GSNAP_ENOMEM; goto out; }
    if (posix_memalign((void **)&out, GSNAP_SLAB_BLOCK, GSNAP_SLAB_BLOCK)) { rc = GSNAP_ENOMEM; goto out; }
    /* reusable free blocks: freed by commits every live reader has seen */
    for (size_t f = 0; f < a->nfl; f++) {
        if (a->fl[f].txnid > oldest) continue;
        for (size_t j = 0; j < a->fl[f].n; j++)
            if (a->fl[f].blk[j] >> 48 == h && (rc = vpush(&reuse, (uint64_t)f << 32 | j))) goto out;
    }
    size_t ri = 0;
    uint32_t used = GSNAP_SLAB_BLOCK_HDR, nl = 0;
    uint64_t cur = 0;
    int have = 0;
    for (size_t i = 0; i <= nls; i++) {
        uint32_t len = i < nls ? GSNAP_SLAB_LIST_HDR + 8u * ls[i]->n : 0;
        if (have && (i == nls || used + len > GSNAP_SLAB_BLOCK)) {
            if ((rc = write_blk(a, h, out, nl, cur))) goto out;
            have = 0;
        }
        if (i == nls) break;
        if (!have) {
            memset(out, 0, GSNAP_SLAB_BLOCK);
            used = GSNAP_SLAB_BLOCK_HDR;
            nl = 0;
            if (ri < reuse.n) {
                struct fl *f = &a->fl[reuse.v[ri] >> 32];
                size_t j = reuse.v[ri] & 0xffffffffu;
                cur = f->blk[j] & ((1ull << 47) - 1);
                f->blk[j] |= 1ull << 47; /* consumed */
                f->used++;
                ri++;
                pl->reused++;
            } else {
                cur = hwm++;
            }
            if ((rc = live_grow(a, h, cur))) goto out;
            uint64_t *p = realloc(pl->alloc, (pl->nalloc + 1) * sizeof *p);
            if (!p) { rc = GSNAP_ENOMEM; goto out; }
            pl->alloc = p;
            pl->alloc[pl->nalloc++] = cur;
            have = 1;
        }
        unsigned char *q = out + used;
        gsnap_put_le64(q, ls[i]->node);
        gsnap_put_le32(q + 8, ls[i]->n);
        if (ls[i]->n) memcpy(q + GSNAP_SLAB_LIST_HDR, ls[i]->ids, (size_t)ls[i]->n * 8);
        struct nptr *np = &pl->np[pl->nnp++];
        np->node = ls[i]->node;
        np->off = cur * GSNAP_SLAB_BLOCK + used;
        np->len = len;
        np->xxh = XXH3_64bits(q, len);
        a->live[h][cur] += len;
        used += len;
        nl++;
    }
    if (fsync(a->fd[h]) != 0) { rc = gsnap_store__err(a->db, GSNAP_EIO, "snapshot %s hop %u: fsync: %s", a->name, h, strerror(errno)); goto out; }
    pl->new_blocks = hwm;
    a->rep.blocks_written[h - 1] = pl->nalloc;
    a->rep.blocks_reused[h - 1] = pl->reused;
    a->rep.blocks_freed[h - 1] = pl->nfreed;
out:
    for (size_t i = 0; i < nls; i++) free(ls[i]);
    free(ls);
    free(out);
    free(touched.v); free(reuse.v);
    return rc;
}

/* ---- the commit ---- */

static int put_rec(adv *a, MDB_txn *txn, unsigned h, uint64_t v, struct gsnap_rec_hdr *hd, const uint64_t *cache) {
    unsigned char kb[12], *val = malloc(GSNAP_REC_HDR + (size_t)hd->ncache * 8);
    if (!val) return GSNAP_ENOMEM;
    gsnap_snap__key(kb, h, v);
    gsnap_snap__rec_encode(val, hd, cache);
    MDB_val k = {12, kb}, d = {GSNAP_REC_HDR + (size_t)hd->ncache * 8, val};
    int rc = mdb_put(txn, a->dbi, &k, &d, 0);
    free(val);
    return rc ? gsnap_store__mdb_err(a->db, rc, "snapshot advance: put") : 0;
}

static int get_rec(adv *a, MDB_txn *txn, unsigned h, uint64_t v, struct gsnap_rec_hdr *hd, vec *cache, int *ex) {
    unsigned char kb[12];
    gsnap_snap__key(kb, h, v);
    MDB_val k = {12, kb}, val;
    int rc = gsnap_store__get(a->db, txn, a->dbi, &k, &val, "snapshot advance: get");
    *ex = 0;
    if (rc == GSNAP_NOTFOUND) return 0;
    if (rc) return rc;
    if ((rc = gsnap_snap__rec_decode(val.mv_data, val.mv_size, hd))) /* decode verifies the checksum */
        return gsnap_store__err(a->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt", a->name, h,
                                (unsigned long long)v);
    cache->n = 0;
    for (uint32_t i = 0; i < hd->ncache; i++)
        if ((rc = vpush(cache, gsnap_get_le64((const unsigned char *)val.mv_data + GSNAP_REC_HDR + 8 * i)))) return rc;
    *ex = 1;
    return 0;
}

static int commit_txn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    adv *a = vctx;
    struct gsnap_cat c = a->cat;
    vec cache = {0}, sel = {0};
    int rc = 0, ex;
    struct gsnap_rec_hdr hd;
    /* 0. the version this advance started from is still the current one (the
     * claim keeps other advances out; this also catches a drop and a new
     * create of the name by a build without the claim) */
    struct gsnap_cat now;
    if ((rc = gsnap_snap__cat_get(db, txn, a->name, &now)) || memcmp(&now, &a->cat, sizeof now) != 0)
        return gsnap_store__err(db, rc && rc != GSNAP_NOTFOUND ? rc : GSNAP_EBUSY, "snapshot %s changed during the "
                                "advance (dropped, created or advanced by another process); nothing was committed",
                                a->name);
    /* 1. nodes whose 1-hop neighbours changed: keys and cached lists */
    for (size_t i = 0; i < a->c1_list.n; i++) {
        uint64_t v = a->c1_list.v[i];
        uint32_t ni = map_get(&a->nin_idx, v);
        const uint64_t *xs = a->nin_ids.v + a->nin_off.v[ni];
        size_t n = a->nin_off.v[ni + 1];
        int had = 0;
        for (unsigned h = 1; h <= c.hops; h++) {
            if ((rc = get_rec(a, txn, h, v, &hd, &cache, &ex))) goto out;
            had |= ex;
            if (!n) {
                if (ex) {
                    unsigned char kb[12];
                    gsnap_snap__key(kb, h, v);
                    MDB_val k = {12, kb};
                    if ((rc = mdb_del(txn, a->dbi, &k, NULL))) { rc = gsnap_store__mdb_err(db, rc, "snapshot advance: del"); goto out; }
                }
                continue;
            }
            if (!ex) { memset(&hd, 0, sizeof hd); hd.format = GSNAP_SNAP_FORMAT; }
            size_t m = (size_t)ceil(c.alpha * c.fanouts[h - 1]);
            if (m > n) m = n;
            sel.n = 0;
            for (size_t j = 0; j < (m ? m : 1); j++)
                if ((rc = vpush(&sel, 0))) goto out;
            uint64_t key = gsnap_snap__sample_key(c.seed, h, v, 0, GSNAP_PURPOSE_CACHE);
            if ((rc = gsnap_snap__select(xs, n, m, key, sel.v, &a->scratch, &a->scratch_cap))) goto out;
            hd.gen = 0;
            hd.version = a->V;
            hd.ncache = (uint32_t)m;
            hd.degree = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
            if ((rc = put_rec(a, txn, h, v, &hd, sel.v))) goto out;
        }
        if (!had && n) c.nodes++;
        if (had && !n) c.nodes--;
    }
    a->rep.caches_redrawn = a->c1_list.n;
    /* 2. slab pointers of rewritten lists, sizes of changed ones */
    for (unsigned h = 1; h <= c.hops; h++) {
        struct hop_plan *pl = &a->plan[h];
        hopset *H = &a->hs[h];
        for (size_t i = 0; i < H->n; i++) {
            entry *e = &H->e[i];
            if (!e->changed) continue;
            c.stored_ids[h - 1] += (uint64_t)e->n - e->old_n;
            c.exact_ids[h - 1] += e->est - e->old_est;
            c.capped[h - 1] += (uint64_t)e->capped - e->old_capped;
            if (e->n) continue; /* pointer set below */
            if ((rc = get_rec(a, txn, h, e->node, &hd, &cache, &ex))) goto out;
            if (!ex) continue;
            hd.slab_hop = hd.slab_len = 0;
            hd.slab_off = hd.slab_xxh = 0;
            hd.n_exact = 0;
            hd.flags = 0;
            hd.version = a->V;
            if ((rc = put_rec(a, txn, h, e->node, &hd, cache.v))) goto out;
        }
        for (size_t i = 0; i < pl->nnp; i++) {
            struct nptr *np = &pl->np[i];
            if ((rc = get_rec(a, txn, h, np->node, &hd, &cache, &ex))) goto out;
            if (!ex) {
                uint32_t ni = map_get(&a->nin_idx, np->node);
                rc = gsnap_store__err(db, GSNAP_ECORRUPT, "snapshot %s: list of node %llu (hop %u, in C1 %d, |N| %lld) without a key", a->name,
                                      (unsigned long long)np->node, h, ni != UINT32_MAX, ni == UINT32_MAX ? -1LL : (long long)a->nin_off.v[ni + 1]);
                goto out;
            }
            hd.slab_hop = h;
            hd.slab_len = np->len;
            hd.slab_off = np->off;
            hd.slab_xxh = np->xxh;
            uint32_t ei = map_get(&H->idx, np->node);
            if (ei != UINT32_MAX && H->e[ei].changed) {
                hd.n_exact = H->e[ei].est;
                hd.flags = H->e[ei].capped ? GSNAP_REC_CAPPED : 0;
                hd.version = a->V;
            }
            if ((rc = put_rec(a, txn, h, np->node, &hd, cache.v))) goto out;
        }
        c.blocks[h - 1] = pl->new_blocks;
        c.free_blocks[h - 1] += pl->nfreed;
        c.free_blocks[h - 1] -= pl->reused;
    }
    /* 3. free list: consumed blocks out, this commit's freed blocks in */
    for (size_t i = 0; i < a->nfl; i++) {
        struct fl *f = &a->fl[i];
        if (!f->used) continue;
        unsigned char kb[12];
        gsnap_snap__key(kb, 0, f->txnid);
        kb[0] = kb[1] = kb[2] = kb[3] = 0xff;
        MDB_val k = {12, kb};
        sel.n = 0;
        for (size_t j = 0; j < f->n; j++)
            if (!(f->blk[j] & (1ull << 47)) && (rc = vpush(&sel, f->blk[j]))) goto out;
        if (sel.n) {
            MDB_val d = {sel.n * 8, sel.v};
            rc = mdb_put(txn, a->dbi, &k, &d, 0);
        } else {
            rc = mdb_del(txn, a->dbi, &k, NULL);
        }
        if (rc) { rc = gsnap_store__mdb_err(db, rc, "snapshot advance: free list"); goto out; }
    }
    sel.n = 0;
    for (unsigned h = 1; h <= c.hops; h++)
        for (size_t j = 0; j < a->plan[h].nfreed; j++)
            if ((rc = vpush(&sel, (uint64_t)h << 48 | a->plan[h].freed[j]))) goto out;
    if (sel.n) {
        unsigned char kb[12];
        gsnap_snap__key(kb, 0, (uint64_t)mdb_txn_id(txn));
        kb[0] = kb[1] = kb[2] = kb[3] = 0xff;
        MDB_val k = {12, kb}, d = {sel.n * 8, sel.v};
        if ((rc = mdb_put(txn, a->dbi, &k, &d, 0))) { rc = gsnap_store__mdb_err(db, rc, "snapshot advance: free list"); goto out; }
    }
    /* 4. live bytes per block */
    for (unsigned h = 1; h <= c.hops; h++) {
        if (!a->live[h]) continue;
        unsigned char kb[12];
        gsnap_snap__key(kb, GSNAP_LIVE_HOP, h);
        MDB_val k = {12, kb}, d = {c.blocks[h - 1] * sizeof(uint32_t), a->live[h]};
        if ((rc = mdb_put(txn, a->dbi, &k, &d, 0))) { rc = gsnap_store__mdb_err(db, rc, "snapshot advance: live bytes"); goto out; }
    }
    /* 5. catalog */
    c.slab_bytes = 0;
    for (unsigned h = 1; h <= c.hops; h++) c.slab_bytes += c.blocks[h - 1] * GSNAP_SLAB_BLOCK;
    c.at_t = a->T;
    c.at_version = a->V;
    c.snap_version++;
    gsnap_snap__cat_seal(&c);
    if ((rc = gsnap_snap__cat_put(db, txn, a->name, &c))) goto out;
    a->rep.snap_version = c.snap_version;
out:
    free(cache.v);
    free(sel.v);
    return rc;
}

static void progress(adv *a, const char *phase, uint64_t done, uint64_t total) {
    if (a->opts && a->opts->progress) a->opts->progress(a->opts->progress_ctx, phase, done, total);
}

int gsnap_snapshot_advance(gsnap_db *db, const char *name, const gsnap_advance_options *opts,
                           gsnap_advance_report *report) {
    static const gsnap_advance_options defaults = GSNAP_ADVANCE_OPTIONS_INIT;
    adv *a = NULL;
    gsnap_read *rd = NULL;
    int rc;
    char tname[96], path[2300];
    struct timespec t0, t1;
    if (!db) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (!gsnap_snap__valid_name(name)) return gsnap_store__err(db, GSNAP_EINVAL, "snapshot advance: bad name");
    if (opts->version != GSNAP_ADVANCE_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "advance options version %u unknown", opts->version);
    if (gsnap_store__read_only(db)) return gsnap_store__err(db, GSNAP_EACCES, "database is read-only");
    if (gsnap_store__keep(db) != GSNAP_KEEP_BOTH)
        return gsnap_store__err(db, GSNAP_ENOTSUP, "snapshot advance needs a store that keeps both directions");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!(a = calloc(1, sizeof *a))) return GSNAP_ENOMEM;
    for (int h = 0; h <= GSNAP_MAX_HOPS; h++) a->fd[h] = -1;
    a->lock_fd = -1;
    a->db = db;
    a->name = name;
    a->opts = opts;
    if ((rc = gsnap_snap__pre_open(db, name))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name);
        goto out;
    }
    if ((rc = gsnap_snap__claim(db, name, GSNAP_EBUSY, &a->lock_fd))) goto out;
    gsnap_snap__table_name(name, tname, sizeof tname);
    if ((rc = gsnap_store__table(db, tname, 0, 0, &a->dbi))) goto out;
    if ((rc = gsnap_read_begin(db, &rd))) goto out;
    a->rt = gsnap_read__txn(rd);
    if ((rc = gsnap_snap__cat_get(db, a->rt, name, &a->cat))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name);
        goto out;
    }
    if (a->cat.status != GSNAP_SNAP_STATUS_COMPLETE) {
        rc = gsnap_store__err(db, GSNAP_NOTFOUND, "snapshot %s is incomplete (build did not finish)", name);
        goto out;
    }
    if (a->cat.kind != GSNAP_HOPSETS_SAMPLED) {
        rc = gsnap_store__err(db, GSNAP_ENOTSUP, "snapshot %s has exact hop sets: only sampled snapshots advance (create it with --hop-sets sampled)", name);
        goto out;
    }
    a->p.hops = a->cat.hops;
    a->p.dir = (gsnap_dir)a->cat.dir;
    a->p.seed = a->cat.seed;
    a->key = gsnap_snap__order_key(a->cat.seed);
    uint64_t latest = 0;
    if ((rc = gsnap_db_version(db, &latest))) goto out;
    a->V = opts->as_of == GSNAP_VERSION_LATEST || opts->as_of > latest ? latest : opts->as_of;
    a->T = opts->at_t == GSNAP_ADVANCE_KEEP_T ? a->cat.at_t : opts->at_t;
    a->rep.from_version = a->cat.at_version;
    a->rep.to_version = a->V;
    for (unsigned h = 1; h <= a->p.hops; h++) {
        gsnap_snap__slab_path(db, name, h, path, sizeof path);
        if ((a->fd[h] = open(path, O_RDWR | O_CLOEXEC)) < 0) {
            rc = gsnap_store__err(db, GSNAP_EIO, "snapshot %s: cannot open %s: %s", name, path, strerror(errno));
            goto out;
        }
    }
    if (posix_memalign((void **)&a->bc, GSNAP_SLAB_BLOCK, (size_t)BCACHE * GSNAP_SLAB_BLOCK) ||
        !(a->bc_tag = calloc(BCACHE, sizeof *a->bc_tag))) { rc = GSNAP_ENOMEM; goto out; }
    a->blk = a->bc;
    /* C_1 */
    {
        uint64_t *nodes = NULL;
        size_t n = 0;
        uint64_t lo = a->cat.at_version < a->V ? a->cat.at_version : a->V, hi = a->cat.at_version ^ a->V ^ lo;
        if (a->T != a->cat.at_t) lo = 0; /* T moved: every node with events may change */
        if (hi > lo && (rc = gsnap_store__changed_nodes(db, rd, a->p.dir, lo, hi, &nodes, &n))) goto out;
        for (size_t i = 0; i < n && !rc; i++) rc = vpush(&a->c1_list, nodes[i]);
        free(nodes);
        if (rc) goto out;
        a->rep.touched_nodes = a->c1_list.n;
    }
    progress(a, "recompute", 0, a->p.hops);
    if ((rc = recompute(a))) goto out;
    if ((rc = load_free(a))) goto out;
    gsnap_read_end(rd);
    rd = NULL;
    a->rt = NULL;
    /* nodes of C_1 all have their N(v) cached (the commit needs them) */
    for (size_t i = 0; i < a->c1_list.n; i++) {
        const uint64_t *xs;
        size_t n;
        if ((rc = nin(a, a->c1_list.v[i], &xs, &n))) goto out;
    }
    rdscan rs = {UINT64_MAX, 0};
    int dead = 0;
    mdb_reader_check(gsnap_store__env(db), &dead);
    mdb_reader_list(gsnap_store__env(db), reader_line, &rs);
    /* the reads of the rewrite need the old table: a fresh short view */
    if ((rc = gsnap_read_begin(db, &rd))) goto out;
    a->rt = gsnap_read__txn(rd);
    for (unsigned h = 1; h <= a->p.hops && !rc; h++) {
        progress(a, "write", h - 1, a->p.hops);
        rc = rewrite_hop(a, h, rs.min);
    }
    gsnap_read_end(rd);
    rd = NULL;
    a->rt = NULL;
    if (rc) goto out;
    progress(a, "commit", a->p.hops, a->p.hops);
    if ((rc = gsnap_store__write(db, commit_txn, a))) goto out;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    a->rep.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (report) *report = a->rep;
out:
    gsnap_read_end(rd);
    if (a) {
        gsnap_snap__release(a->lock_fd);
        for (int h = 0; h <= GSNAP_MAX_HOPS; h++) {
            if (a->fd[h] >= 0) close(a->fd[h]);
            for (size_t i = 0; i < a->hs[h].n; i++) {
                if (a->hs[h].e[i].add != a->hs[h].e[i].s) free(a->hs[h].e[i].add);
                free(a->hs[h].e[i].s);
            }
            free(a->hs[h].e);
            map_free(&a->hs[h].idx);
            free(a->plan[h].freed);
            free(a->plan[h].alloc);
            free(a->plan[h].np);
            free(a->live[h]);
        }
        for (size_t i = 0; i < a->nfl; i++) free(a->fl[i].blk);
        free(a->fl);
        map_free(&a->nin_idx);
        map_free(&a->nout_idx);
        free(a->nout_off.v); free(a->nout_ids.v);
        map_free(&a->c1);
        free(a->nin_off.v); free(a->nin_ids.v); free(a->c1_list.v);
        free(a->nb); free(a->bc); free(a->bc_tag); free(a->scratch);
        for (int h = 0; h <= GSNAP_MAX_HOPS; h++) map_free(&a->ol_idx[h]);
        free(a->ol); free(a->ol_s.v);
        free(a);
    }
    return rc;
}
