/*
 * store/batch_sort.c -- sorting a batch's events into each direction's
 * (node, nbr, t) order.
 *
 * The fast path packs (node, nbr, t - tmin) into one 64-bit key when the
 * batch's ranges fit (they do unless ids or times spread over most of the
 * 64-bit range), sorts (key, index) pairs with an 11-bit-digit LSD radix sort
 * (16-byte items, constant digits skipped) and then gathers the records in
 * that order; otherwise the 24-byte-key radix sort over the records. Both are
 * stable, so equal (node, nbr, t) keep the order they were added in.
 */
#include "store/batch_int.h"
#include "common/radix.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>


/* Byte `i` (0 = least significant) of the composite key (node, nbr, t) with
 * t's sign bit flipped so that signed order is byte order. */
static inline unsigned key_byte(const gsnap_rec *r, unsigned i) {
    if (i < 8) return (unsigned)(((uint64_t)r->t ^ 0x8000000000000000ull) >> (8 * i)) & 0xff;
    if (i < 16) return (unsigned)(r->nbr >> (8 * (i - 8))) & 0xff;
    return (unsigned)(r->node >> (8 * (i - 16))) & 0xff;
}

/* Stable LSD radix sort by (node, nbr, t). */
GSNAP_RADIX_SORT(radix_sort, gsnap_rec, 24, key_byte)

/* Records in (node, nbr, t) order, as the run writer and readers need. */
int gsnap_batch__sorted(const gsnap_rec *r, size_t n) {
    for (size_t i = 1; i < n; i++) {
        const gsnap_rec *a = &r[i - 1], *b = &r[i];
        if (a->node != b->node ? a->node > b->node : a->nbr != b->nbr ? a->nbr > b->nbr : a->t > b->t)
            return 0;
    }
    return 1;
}

/* x << s, 0 for s >= 64. */
static inline uint64_t shl64(uint64_t x, unsigned s) { return s >= 64 ? 0 : x << s; }

/* Bits needed for values 0..x. */
static unsigned bits_of(uint64_t x) {
    unsigned b = 0;
    while (b < 64 && (x >> b)) b++;
    return b;
}

/* (packed key, event index) pairs: the fast sort when (node, nbr, t - tmin)
 * fit 64 bits together, as they do for ids and times of a batch that are
 * not spread over the whole 64-bit range. */
typedef struct {
    uint64_t key, idx;
} gsnap_kidx;

#define KDIGIT 11
/* Stable LSD radix sort of a[0..n) by key (its low `bits` bits used), 11-bit
 * digits, constant digits skipped; the result is in a. */
static void sort_kidx(gsnap_kidx *a, gsnap_kidx *tmp, size_t n, unsigned bits) {
    enum { R = 1u << KDIGIT, MAXP = (64 + KDIGIT - 1) / KDIGIT };
    static _Thread_local size_t hist[MAXP][R];
    unsigned np = (bits + KDIGIT - 1) / KDIGIT;
    if (n < 2 || np == 0) return;
    memset(hist, 0, np * sizeof hist[0]);
    for (size_t j = 0; j < n; j++)
        for (unsigned i = 0; i < np; i++) hist[i][(a[j].key >> (i * KDIGIT)) & (R - 1)]++;
    gsnap_kidx *src = a, *dst = tmp;
    for (unsigned i = 0; i < np; i++) {
        size_t *h = hist[i];
        unsigned sh = i * KDIGIT;
        if (h[(src[0].key >> sh) & (R - 1)] == n) continue;
        size_t off = 0;
        for (unsigned c = 0; c < R; c++) {
            size_t cnt = h[c];
            h[c] = off;
            off += cnt;
        }
        for (size_t j = 0; j < n; j++) dst[h[(src[j].key >> sh) & (R - 1)]++] = src[j];
        gsnap_kidx *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}


void gsnap_batch__ev_range(const gsnap_event *ev, size_t n, struct ev_range *r) {
    r->max_src = r->max_dst = 0;
    r->tmin = INT64_MAX;
    r->tmax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const gsnap_event *e = &ev[i];
        if (e->src > r->max_src) r->max_src = e->src;
        if (e->dst > r->max_dst) r->max_dst = e->dst;
        if (e->t < r->tmin) r->tmin = e->t;
        if (e->t > r->tmax) r->tmax = e->t;
    }
}

/* One direction's records sorted by (node, nbr, t) into r (n of them); the
 * packed-key sort when the key fits 64 bits, else the 24-byte radix sort.
 * tmp has room for n records (2n pairs). */
void gsnap_batch__sort_dir(const gsnap_event *ev, size_t n, int dir, const struct ev_range *rg, gsnap_rec *r,
                           gsnap_rec *tmp) {
    uint64_t max_node = dir == GSNAP_DIR_IN ? rg->max_dst : rg->max_src;
    uint64_t max_nbr = dir == GSNAP_DIR_IN ? rg->max_src : rg->max_dst;
    unsigned bn = bits_of(max_node), bb = bits_of(max_nbr);
    unsigned bt = bits_of((uint64_t)rg->tmax - (uint64_t)rg->tmin);
    if (bn + bb + bt <= 64) {
        gsnap_kidx *k = (gsnap_kidx *)tmp, *kt = k + n; /* 2n pairs = n records */
        for (size_t i = 0; i < n; i++) {
            const gsnap_event *e = &ev[i];
            uint64_t node = dir == GSNAP_DIR_IN ? e->dst : e->src, nbr = dir == GSNAP_DIR_IN ? e->src : e->dst;
            uint64_t dt = (uint64_t)e->t - (uint64_t)rg->tmin;
            k[i].key = shl64(node, bt + bb) | shl64(nbr, bt) | dt;
            k[i].idx = i;
        }
        sort_kidx(k, kt, n, bn + bb + bt);
        for (size_t i = 0; i < n; i++) {
            const gsnap_event *e = &ev[k[i].idx];
            r[i].node = dir == GSNAP_DIR_IN ? e->dst : e->src;
            r[i].nbr = dir == GSNAP_DIR_IN ? e->src : e->dst;
            r[i].t = e->t;
            r[i].vop = e->del;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const gsnap_event *e = &ev[i];
        r[i].node = dir == GSNAP_DIR_IN ? e->dst : e->src;
        r[i].nbr = dir == GSNAP_DIR_IN ? e->src : e->dst;
        r[i].t = e->t;
        r[i].vop = e->del;
    }
    radix_sort(r, tmp, n);
}


void gsnap_sorted_free(struct gsnap_sorted *o) {
    for (int d = 0; d < 2; d++) {
        free(o->recs[d]);
        free(o->touched[d]);
    }
    memset(o, 0, sizeof *o);
}

int gsnap_batch__sort_events(const gsnap_event *ev, size_t n, unsigned keep, struct gsnap_sorted *o) {
    struct ev_range rg;
    memset(o, 0, sizeof *o);
    o->keep = keep;
    o->valid = 1;
    if (n == 0) return 0; /* extensions only: an empty run */
    gsnap_batch__ev_range(ev, n, &rg);
    o->rg = rg;
    for (size_t i = 0; i < n; i++) o->dels += ev[i].del;
    gsnap_rec *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return GSNAP_ENOMEM;
    for (int dir = 0; dir < 2; dir++) {
        if (!(keep & gsnap_store__keep_bit((unsigned)dir))) continue;
        gsnap_rec *r = malloc(n * sizeof *r);
        uint64_t *t = malloc(n * sizeof *t);
        if (!r || !t) {
            free(r);
            free(t);
            free(tmp);
            gsnap_sorted_free(o);
            return GSNAP_ENOMEM;
        }
        gsnap_batch__sort_dir(ev, n, dir, &rg, r, tmp);
        assert(gsnap_batch__sorted(r, n));
        size_t nt = 0;
        for (size_t i = 0; i < n; i++)
            if (nt == 0 || t[nt - 1] != r[i].node) t[nt++] = r[i].node;
        o->recs[dir] = r;
        o->nrec[dir] = n;
        o->touched[dir] = t;
        o->ntouched[dir] = nt;
    }
    free(tmp);
    return 0;
}

/* ---- events sorted away from a batch (the ingest pipeline) ---------------- */

int gsnap_batch__prep_new(gsnap_batch_prep **out) {
    if (!out) return GSNAP_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : GSNAP_ENOMEM;
}

void gsnap_batch__prep_free(gsnap_batch_prep *p) {
    if (!p) return;
    free(p->ev);
    gsnap_sorted_free(&p->sorted);
    free(p);
}

int gsnap_batch__prep_push(gsnap_batch_prep *p, uint64_t src, uint64_t dst, int64_t t, int del) {
    if (t == GSNAP_TIME_MAX) return GSNAP_ERANGE;
    if (p->sorted.valid) gsnap_sorted_free(&p->sorted);
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 4096;
        gsnap_event *ne = realloc(p->ev, nc * sizeof *ne);
        if (!ne) return GSNAP_ENOMEM;
        p->ev = ne;
        p->cap = nc;
    }
    gsnap_event *e = &p->ev[p->n++];
    e->src = src;
    e->dst = dst;
    e->t = t;
    e->del = (uint64_t)(del != 0);
    return 0;
}

size_t gsnap_batch__prep_size(const gsnap_batch_prep *p) { return p ? p->n : 0; }

int gsnap_batch__prep_sort(gsnap_batch_prep *p, const gsnap_db *db) {
    gsnap_sorted_free(&p->sorted);
    return gsnap_batch__sort_events(p->ev, p->n, db->keep, &p->sorted);
}
