/*
 * store/codec.c -- the compact record encoding of store format 3 (chunks
 * with magic "GSC2"; docs/format.md).
 *
 * A chunk payload is a stream of varints (LEB128, 7 bits a byte, at most 10
 * bytes for a u64):
 *
 *   base_vop            vop of the chunk's first record
 *   base_t              zigzag(t of the chunk's first record)
 *   then one group per node, nodes ascending:
 *     node delta        from the previous group's node (the first: from 0;
 *                       later groups: > 0)
 *     count             records in the group (>= 1)
 *     body bytes        length of the records that follow (skip a group
 *                       without decoding it)
 *     count records:    nbr delta   from the previous record's nbr (first
 *                                   of the group: from 0), wrapping u64
 *                       t delta     zigzag(t - previous t; first of the
 *                                   group: t - base_t), wrapping
 *                       vop delta   zigzag(vop - base_vop), wrapping
 *
 * Deltas are taken modulo 2^64, so every u64 id, every int64 time and
 * every vop round-trips, sorted or not (unsorted neighbours only cost
 * longer varints). The decoder reads only inside [payload, payload + len),
 * and rejects anything the encoder cannot produce: an overlong or
 * overflowing varint, a group count of 0 or above the records left, a body
 * length that does not end exactly after its records, node ids not
 * strictly ascending, a total record count different from the header's,
 * bytes left over.
 */
#include "store/store_int.h"

#include <string.h>

#define get_varint gsnap_codec__get


/* Bytes of record r after record prev of the same group (prev NULL: the
 * group's first) in a chunk with bases (bvop, bt). */
static size_t rec_len(const gsnap_rec *r, const gsnap_rec *prev, uint64_t bvop, uint64_t bt) {
    uint64_t pn = prev ? prev->nbr : 0, pt = prev ? (uint64_t)prev->t : bt;
    return gsnap_codec__varint_len(r->nbr - pn) + gsnap_codec__varint_len(gsnap_codec__zz((uint64_t)r->t - pt)) +
           gsnap_codec__varint_len(gsnap_codec__zz(r->vop - bvop));
}

size_t gsnap_codec__rec_bound(const gsnap_rec *r, const gsnap_rec *prev_in_chunk, const gsnap_rec *first) {
    if (!prev_in_chunk) /* bases, group header (count and length < 2^21), record */
        return gsnap_codec__varint_len(r->vop) + gsnap_codec__varint_len(gsnap_codec__zz((uint64_t)r->t)) +
               gsnap_codec__varint_len(r->node) + 6 + rec_len(r, NULL, r->vop, (uint64_t)r->t);
    uint64_t bvop = first->vop, bt = (uint64_t)first->t;
    if (prev_in_chunk->node != r->node)
        return gsnap_codec__varint_len(r->node - prev_in_chunk->node) + 6 + rec_len(r, NULL, bvop, bt);
    return rec_len(r, prev_in_chunk, bvop, bt);
}

size_t gsnap_codec__encode(const gsnap_rec *r, size_t n, unsigned char *out, size_t cap) {
    if (n == 0 || cap < 20) return 0;
    uint64_t bvop = r[0].vop, bt = (uint64_t)r[0].t, node = 0;
    size_t o = gsnap_codec__put(out, bvop);
    o += gsnap_codec__put(out + o, gsnap_codec__zz(bt));
    for (size_t i = 0; i < n;) {
        /* the group's body goes 30 bytes further on (room for its header:
         * node delta, count and length, at most 10 each), moved back after */
        unsigned char *body = out + o + 30, *p = body, *lim = out + cap + GSNAP_CODEC_SLACK;
        uint64_t pn = 0, pt = bt;
        size_t j = i;
        for (; j < n && r[j].node == r[i].node; j++) {
            if (lim - p < 30) return 0;
            p += gsnap_codec__put(p, r[j].nbr - pn);
            p += gsnap_codec__put(p, gsnap_codec__zz((uint64_t)r[j].t - pt));
            p += gsnap_codec__put(p, gsnap_codec__zz(r[j].vop - bvop));
            pn = r[j].nbr;
            pt = (uint64_t)r[j].t;
        }
        size_t blen = (size_t)(p - body);
        unsigned char head[30];
        size_t hl = gsnap_codec__put(head, r[i].node - node);
        hl += gsnap_codec__put(head + hl, j - i);
        hl += gsnap_codec__put(head + hl, blen);
        if (o + hl + blen > cap) return 0;
        memcpy(out + o, head, hl);
        memmove(out + o + hl, body, blen);
        o += hl + blen;
        node = r[i].node;
        i = j;
    }
    return o;
}

int gsnap_codec__open(gsnap_codec_cur *c, const unsigned char *payload, size_t len, uint64_t nrec) {
    memset(c, 0, sizeof *c);
    c->p = payload;
    c->end = payload + len;
    c->left = nrec;
    uint64_t bt;
    if (nrec == 0) return c->why = "no records", -1;
    if (get_varint(&c->p, c->end, &c->bvop) || get_varint(&c->p, c->end, &bt))
        return c->why = "truncated chunk bases", -1;
    c->bt = gsnap_codec__unzz(bt);
    return 0;
}

/* Read the next group's header; 1: a group, 0: the end of the chunk. */
static int group(gsnap_codec_cur *c) {
    if (c->p == c->end) {
        if (c->left) return c->why = "fewer records than the header says", -1;
        return 0;
    }
    uint64_t h[3];
    if (gsnap_codec__get3(&c->p, c->end, h)) return c->why = "truncated group header", -1;
    uint64_t d = h[0], cnt = h[1], body = h[2];
    if (c->started && (d == 0 || c->node + d < c->node))
        return c->why = "node ids not ascending", -1;
    if (cnt == 0 || cnt > c->left) return c->why = "bad group record count", -1;
    if (body > (size_t)(c->end - c->p) || body < 3 * cnt) return c->why = "bad group length", -1;
    c->node += d;
    c->started = 1;
    c->gleft = cnt;
    c->gend = c->p + body;
    c->nbr = 0;     /* the group's first nbr is a delta from 0, */
    c->t = c->bt;   /* its first t from the chunk's base */
    return 1;
}

int gsnap_codec__next(gsnap_codec_cur *c, gsnap_rec *r) {
    if (c->gleft == 0) {
        int g = group(c);
        if (g <= 0) return g;
    }
    uint64_t dn, dt, dv;
    if (get_varint(&c->p, c->gend, &dn) || get_varint(&c->p, c->gend, &dt) || get_varint(&c->p, c->gend, &dv))
        return c->why = "truncated record", -1;
    c->nbr += dn;
    c->t += gsnap_codec__unzz(dt);
    r->node = c->node;
    r->nbr = c->nbr;
    r->t = (int64_t)c->t;
    r->vop = c->bvop + gsnap_codec__unzz(dv);
    c->left--;
    if (--c->gleft == 0 && c->p != c->gend) return c->why = "group length does not match its records", -1;
    return 1;
}

/* A varint of 1-4 bytes at p, 8 bytes readable there: its length, its
 * value in *v; 0 when it is longer (or overlong: a trailing zero byte), left
 * to gsnap_codec__get. No branch on the length: a hub's records mix 3- and
 * 4-byte time deltas, which the byte loop mispredicts about once a record. */
static inline unsigned varint4(const unsigned char *p, uint64_t *v) {
    uint64_t w;
    memcpy(&w, p, 8); /* little endian, as the format */
    uint32_t stop = ~(uint32_t)w & 0x80808080u;
    unsigned bits = stop ? (unsigned)__builtin_ctz(stop) + 1 : 0; /* 8 x the length */
    uint64_t x = w & ((1ull << bits) - 1) & 0x7f7f7f7fu;
    *v = (x & 0x7f) | ((x >> 1) & 0x3f80) | ((x >> 2) & 0x1fc000) | ((x >> 3) & 0xfe00000);
    if (bits > 8 && !((w >> (bits - 8)) & 0xff)) return 0; /* overlong */
    return bits >> 3;
}

/* A record's three varints by the general decoder (out of the loop below:
 * rare, and inlined it cost the loop its registers). 0, or -1 malformed. */
__attribute__((noinline)) static int rec_slow(const unsigned char **p, const unsigned char *gend, uint64_t v[3]) {
    return get_varint(p, gend, &v[0]) || get_varint(p, gend, &v[1]) || get_varint(p, gend, &v[2]) ? -1 : 0;
}

int64_t gsnap_codec__group_take(gsnap_codec_cur *c, gsnap_rec *r, int64_t at_t, uint64_t as_of, uint64_t *del) {
    uint64_t n = c->gleft, nbr = c->nbr, t = c->t, node = c->node, bvop = c->bvop, d = 0;
    const unsigned char *p = c->p, *gend = c->gend;
    gsnap_rec *o = r;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t f[3];
        unsigned l1 = 0, l2 = 0, l3 = 0;
        /* three short varints read with three 8-byte loads, all inside the
         * group: 16 bytes of room (the third load starts at most 8 in) */
        if (__builtin_expect(gend - p >= 16, 1)) {
            l1 = varint4(p, &f[0]);
            l2 = varint4(p + l1, &f[1]);
            l3 = varint4(p + l1 + l2, &f[2]);
        }
        if (__builtin_expect(l1 && l2 && l3, 1)) p += l1 + l2 + l3;
        else if (rec_slow(&p, gend, f)) return c->why = "truncated record", -1;
        nbr += f[0];
        t += gsnap_codec__unzz(f[1]);
        uint64_t vop = bvop + gsnap_codec__unzz(f[2]);
        o->node = node;
        o->nbr = nbr;
        o->t = (int64_t)t;
        o->vop = vop;
        /* written always, kept by moving on: no branch on the filter */
        uint64_t keep = (uint64_t)((int64_t)t <= at_t) & (uint64_t)((vop >> 1) <= as_of);
        d |= vop & keep;
        o += keep;
    }
    c->p = p;
    c->nbr = nbr;
    c->t = t;
    c->left -= n;
    c->gleft = 0;
    if (n && p != gend) return c->why = "group length does not match its records", -1;
    *del |= d & 1;
    return (int64_t)(o - r);
}

int64_t gsnap_codec__group_rest(gsnap_codec_cur *c, gsnap_rec *r) {
    uint64_t del = 0;
    return gsnap_codec__group_take(c, r, INT64_MAX, UINT64_MAX, &del);
}

int gsnap_codec__skip_to(gsnap_codec_cur *c, uint64_t node, uint64_t *skipped) {
    *skipped = 0;
    for (;;) {
        int g = group(c);
        if (g <= 0) return g;
        if (c->node >= node) return 1;
        c->p = c->gend; /* skip the body (checked when decoded elsewhere) */
        c->left -= c->gleft;
        *skipped += c->gleft;
        c->gleft = 0;
    }
}

int gsnap_codec__decode(const unsigned char *payload, size_t len, uint64_t nrec, gsnap_rec *out,
                        const char **why) {
    gsnap_codec_cur c;
    int rc = gsnap_codec__open(&c, payload, len, nrec);
    for (uint64_t i = 0; rc == 0; i++) {
        gsnap_rec r;
        int g = gsnap_codec__next(&c, &r);
        if (g < 0) break;
        if (g == 0) {
            *why = NULL;
            return 0;
        }
        if (i >= nrec) break; /* never: count checks bound it */
        out[i] = r;
    }
    *why = c.why ? c.why : "malformed";
    return GSNAP_ECORRUPT;
}

int gsnap_codec__malformed(const unsigned char *payload, size_t len, uint64_t nrec, gsnap_codec_cur *c) {
    int rc = gsnap_codec__open(c, payload, len, nrec);
    gsnap_rec r;
    while (rc == 0 && (rc = gsnap_codec__next(c, &r)) > 0) rc = 0;
    return rc < 0;
}
