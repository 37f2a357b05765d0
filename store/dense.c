/*
 * store/dense.c -- the dense (CSR) layout of the base run.
 *
 * Chunked runs cost a B-tree descent and a search inside a 16 KiB chunk per
 * query. The base run holds most of the graph, so it is stored like an
 * in-memory CSR instead: per direction, one LMDB value with every record
 * (sorted by node, nbr, t, version) and one value with a u64 offset per node
 * id (entry n = index of node n's first record; entry `dense_nodes` = total).
 * A lookup is two reads of the map at computed addresses. Both values are
 * written in place with MDB_RESERVE (no second copy) and carry an XXH3 of
 * their payload, verified by merges and gsnap_db_check.
 *
 * Format 3 (GSD2/GSI2) stores each node's records as a compact body
 * (codec.c's group body, no header) and the index as byte offsets of the
 * bodies: a lookup is still one index read, then the decode of that node's
 * body only (gsnap_dense_it in store_int.h). Its size is known only at the
 * end, so the value is built in memory and put once.
 *
 * Format 4 (GSD3) keeps the byte-offset index and packs each body as three
 * bit columns of fixed width (store_int.h, gsnap_dense__packed_head): no
 * varint to decode record by record, every field at a computed offset. A
 * node's body is written when its last record has arrived (the widths are
 * those of its largest values), so the writer holds one node's records.
 *
 * The index costs 8 bytes per node id below the bound, so the dense layout is
 * used only when ids are compact (bound <= 2 * records + 1024 in the larger
 * direction); otherwise the base stays chunked with a Bloom filter.
 */
#include "store/store_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static void dense_key(unsigned char *k, uint64_t run, uint8_t dir, uint8_t kind) {
    gsnap_put_be64(k, run);
    k[8] = dir;
    k[9] = kind;
}

int gsnap_run__writer_dense(gsnap_run_writer *w, const uint64_t expect[2], uint64_t dense_nodes) {
    w->dense = 1;
    w->dense_expect[0] = expect[0];
    w->dense_expect[1] = expect[1];
    w->dense_nodes = dense_nodes;
    w->dcomp = gsnap_store__write_format >= 3;
    w->dpack = gsnap_store__write_format >= 4;
    w->didx = malloc((dense_nodes + 1) * sizeof *w->didx);
    return w->didx ? 0 : GSNAP_ENOMEM;
}

/* GSD2: the bodies are built in w->dbuf (their size is known only at the
 * end), after room for the header and the two bases. */
#define DHEAD (sizeof(struct gsnap_dense_hdr) + 20)

static int dense2_add(gsnap_run_writer *w, const gsnap_rec *r, int new_node) {
    if (w->dcap < DHEAD + w->dbytes + 30) {
        size_t nc = w->dcap ? w->dcap * 2 : (size_t)1 << 16;
        unsigned char *nb = realloc(w->dbuf, nc);
        if (!nb) return GSNAP_ENOMEM;
        w->dbuf = nb;
        w->dcap = nc;
    }
    if (w->dfill == 0) w->dprev = *r; /* the bases */
    unsigned char *p = w->dbuf + DHEAD + w->dbytes;
    size_t o = gsnap_codec__put(p, new_node ? r->nbr : r->nbr - w->dprev.nbr);
    o += gsnap_codec__put(p + o, gsnap_codec__zz((uint64_t)r->t - (uint64_t)(new_node ? w->dbase.t : w->dprev.t)));
    o += gsnap_codec__put(p + o, gsnap_codec__zz(r->vop - w->dbase.vop));
    w->dbytes += o;
    w->dprev = *r;
    return 0;
}

/* Room in w->dbuf for `more` bytes after the bodies (and the pad). */
static int dense_room(gsnap_run_writer *w, size_t more) {
    size_t need = DHEAD + w->dbytes + more + GSNAP_DENSE3_PAD;
    if (w->dcap >= need) return 0;
    size_t nc = w->dcap ? w->dcap * 2 : (size_t)1 << 16;
    if (nc < need) nc = need;
    unsigned char *nb = realloc(w->dbuf, nc);
    if (!nb) return GSNAP_ENOMEM;
    w->dbuf = nb;
    w->dcap = nc;
    return 0;
}

static unsigned bit_width(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0u; }

/* LSB-first bit writer: fields of 0..64 bits, bytes written as they fill. */
typedef struct {
    unsigned char *q;
    uint64_t acc; /* fewer than 8 pending bits below a put */
    unsigned nb;
} bit_writer;
static inline void bits_put(bit_writer *b, uint64_t v, unsigned w) {
    while (w) {
        unsigned k = w > 32 ? 32 : w;
        b->acc |= (v & ((1ull << k) - 1)) << b->nb;
        b->nb += k;
        v = k < 64 ? v >> k : 0;
        w -= k;
        while (b->nb >= 8) {
            *b->q++ = (unsigned char)b->acc;
            b->acc >>= 8;
            b->nb -= 8;
        }
    }
}

/* GSD3: the open node's records (w->dnode, sorted by nbr, t, version) as one
 * body after the bodies so far. */
static int packed_flush(gsnap_run_writer *w) {
    size_t n = w->dnn;
    if (n == 0) return 0;
    const gsnap_rec *r = w->dnode;
    uint64_t nmin = r[0].nbr, nmax = r[0].nbr, vmin = r[0].vop, vmax = r[0].vop;
    int64_t tmin = r[0].t, tmax = r[0].t;
    for (size_t i = 1; i < n; i++) {
        assert(r[i].node == r[0].node && r[i].nbr >= r[i - 1].nbr);
        if (r[i].nbr < nmin) nmin = r[i].nbr;
        if (r[i].nbr > nmax) nmax = r[i].nbr;
        if (r[i].t < tmin) tmin = r[i].t;
        if (r[i].t > tmax) tmax = r[i].t;
        if (r[i].vop < vmin) vmin = r[i].vop;
        if (r[i].vop > vmax) vmax = r[i].vop;
    }
    int rc = dense_room(w, 4 * 10 + 3 + 24 * n + 8);
    if (rc) return rc;
    unsigned char *p = w->dbuf + DHEAD + w->dbytes, *p0 = p;
    p += gsnap_codec__put(p, n);
    p += gsnap_codec__put(p, nmin);
    p += gsnap_codec__put(p, gsnap_codec__zz((uint64_t)tmin - (uint64_t)w->dbase.t));
    p += gsnap_codec__put(p, gsnap_codec__zz(vmin - w->dbase.vop));
    if (n >= 2) {
        unsigned wn = bit_width(nmax - nmin), wt = bit_width((uint64_t)tmax - (uint64_t)tmin),
                 wv = bit_width(vmax - vmin);
        /* a record takes a byte at least (wv widened: its high bits stay 0),
         * so a body's count is bounded by its bytes, as a reader checks */
        if (wn + wt + wv < GSNAP_DENSE3_MIN_BITS) wv = GSNAP_DENSE3_MIN_BITS - wn - wt;
        *p++ = (unsigned char)wn;
        *p++ = (unsigned char)wt;
        *p++ = (unsigned char)wv;
        bit_writer b = {p, 0, 0};
        for (size_t i = 0; i < n; i++) bits_put(&b, r[i].nbr - nmin, wn);
        for (size_t i = 0; i < n; i++) bits_put(&b, (uint64_t)r[i].t - (uint64_t)tmin, wt);
        for (size_t i = 0; i < n; i++) bits_put(&b, r[i].vop - vmin, wv);
        if (b.nb) *b.q++ = (unsigned char)b.acc;
        p = b.q;
    }
    w->dbytes += (size_t)(p - p0);
    w->dnn = 0;
    return 0;
}

/* GSD3: one more record of the open node. */
static int packed_push(gsnap_run_writer *w, const gsnap_rec *r) {
    if (w->dnn == w->dncap && gsnap_vec_reserve((void **)&w->dnode, &w->dncap, w->dnn + 1, sizeof *w->dnode))
        return GSNAP_ENOMEM;
    w->dnode[w->dnn++] = *r;
    return 0;
}

int gsnap_dense__packed_head(gsnap_dense_it *it, const unsigned char *p, const unsigned char *end) {
    const gsnap_dense_ref *d = it->d;
    uint64_t n, nmin, zt, zv;
    if (gsnap_codec__get(&p, end, &n) || n == 0 || n > d->nrec || n > ((uint64_t)1 << 40) ||
        gsnap_codec__get(&p, end, &nmin) || gsnap_codec__get(&p, end, &zt) || gsnap_codec__get(&p, end, &zv))
        return -1;
    it->nbr = nmin;
    it->t = d->bt + gsnap_codec__unzz(zt);
    it->vmin = d->bvop + gsnap_codec__unzz(zv);
    it->wn = it->wt = it->wv = 0;
    if (n >= 2) {
        if (end - p < 3 || p[0] > 64 || p[1] > 64 || p[2] > 64 ||
            (unsigned)(p[0] + p[1] + p[2]) < GSNAP_DENSE3_MIN_BITS)
            return -1;
        it->wn = p[0];
        it->wt = p[1];
        it->wv = p[2];
        p += 3;
        uint64_t total = n * (it->wn + it->wt + it->wv);
        if ((uint64_t)(end - p) != (total + 7) / 8) return -1;
        if ((total & 7) && (end[-1] >> (total & 7))) return -1; /* bits past the last field are 0 */
    } else if (p != end) {
        return -1;
    }
    it->bits = p;
    it->bn = 0;
    it->bt = n * it->wn;
    it->bv = n * (it->wn + it->wt);
    it->j = 0;
    it->e = n;
    return 0;
}

/* GSD2/3: write the records value (header, bases, bodies, GSD3's pad). */
static int dense2_put(gsnap_run_writer *w, uint8_t dir) {
    unsigned char key[10], bases[20];
    size_t bl = gsnap_codec__put(bases, w->dbase.vop);
    bl += gsnap_codec__put(bases + bl, gsnap_codec__zz((uint64_t)w->dbase.t));
    dense_key(key, w->run_id, dir, 0);
    unsigned char *start = w->dbuf + DHEAD - bl - sizeof(struct gsnap_dense_hdr);
    memcpy(start + sizeof(struct gsnap_dense_hdr), bases, bl);
    size_t pad = 0;
    if (w->dpack) { /* dense_room kept room for it */
        pad = GSNAP_DENSE3_PAD;
        memset(w->dbuf + DHEAD + w->dbytes, 0, pad);
    }
    struct gsnap_dense_hdr h = {w->dpack ? GSNAP_DENSE3_MAGIC : GSNAP_DENSE2_MAGIC, 0, w->dfill, 0, 0};
    h.xxh3 = XXH3_64bits(start + sizeof h, bl + w->dbytes + pad);
    memcpy(start, &h, sizeof h);
    MDB_val k = {sizeof key, key}, v = {sizeof h + bl + w->dbytes + pad, start};
    int rc = mdb_put(w->txn, w->db->dense_dbi, &k, &v, MDB_APPEND);
    return rc ? gsnap_store__mdb_err(w->db, rc, "writing the base run's records") : 0;
}

/* Reserve the records value of `dir` in the map. */
static int dense_open_dir(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *first) {
    unsigned char key[10];
    if (w->dcomp) {
        w->dbase = *first;
        w->dbytes = 0;
        w->dfill = 0;
        w->dlast = 0;
        w->dnn = 0;
        w->dir = dir;
        w->dopen = 1;
        return dense_room(w, 0); /* the pad has room even with no body */
    }
    dense_key(key, w->run_id, dir, 0);
    MDB_val k = {sizeof key, key};
    MDB_val v = {sizeof(struct gsnap_dense_hdr) + w->dense_expect[dir] * GSNAP_REC_BYTES, NULL};
    int rc = mdb_put(w->txn, w->db->dense_dbi, &k, &v, MDB_RESERVE | MDB_APPEND);
    if (rc) return gsnap_store__mdb_err(w->db, rc, "reserving the base run's records");
    w->drecs = v.mv_data;
    w->dfill = 0;
    w->dlast = 0;
    w->dir = dir;
    w->dopen = 1;
    return 0;
}

/* Seal the open direction: header with checksum, then the index value. */
int gsnap_dense__close_dir(gsnap_run_writer *w) {
    if (!w->dopen) return 0;
    uint8_t dir = w->dir;
    w->dopen = 0;
    if (w->dfill != w->dense_expect[dir])
        return gsnap_store__err(w->db, GSNAP_ECORRUPT, "base run %llu dir %u: %llu records written, %llu expected",
                                (unsigned long long)w->run_id, dir, (unsigned long long)w->dfill,
                                (unsigned long long)w->dense_expect[dir]);
    int rc;
    uint64_t end = w->dfill;
    if (w->dcomp) {
        if (w->dpack && (rc = packed_flush(w))) return rc;
        if ((rc = dense2_put(w, dir))) return rc;
        end = w->dbytes;
    } else {
        struct gsnap_dense_hdr h = {GSNAP_DENSE_MAGIC, 0, w->dfill, 0, 0};
        h.xxh3 = XXH3_64bits(w->drecs + sizeof h, w->dfill * GSNAP_REC_BYTES);
        memcpy(w->drecs, &h, sizeof h);
    }
    for (uint64_t n = w->dlast; n <= w->dense_nodes; n++) w->didx[n] = end;
    struct gsnap_dense_hdr h;
    unsigned char key[10];
    dense_key(key, w->run_id, dir, 1);
    MDB_val k = {sizeof key, key};
    MDB_val v = {sizeof h + (w->dense_nodes + 1) * 8, NULL};
    rc = mdb_put(w->txn, w->db->dense_dbi, &k, &v, MDB_RESERVE | MDB_APPEND);
    if (rc) return gsnap_store__mdb_err(w->db, rc, "writing the base run's index");
    struct gsnap_dense_hdr ih = {w->dcomp ? GSNAP_INDEX2_MAGIC : GSNAP_INDEX_MAGIC, 0, w->dense_nodes + 1, 0, 0};
    memcpy((unsigned char *)v.mv_data + sizeof ih, w->didx, (w->dense_nodes + 1) * 8);
    ih.xxh3 = XXH3_64bits((unsigned char *)v.mv_data + sizeof ih, (w->dense_nodes + 1) * 8);
    memcpy(v.mv_data, &ih, sizeof ih);
    return 0;
}

int gsnap_dense__add(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r) {
    int rc;
    if (w->dopen && dir != w->dir && (rc = gsnap_dense__close_dir(w))) return rc;
    if (!w->dopen && (rc = dense_open_dir(w, dir, r))) return rc;
    if (w->dfill >= w->dense_expect[dir] || r->node >= w->dense_nodes || r->node + 1 < w->dlast)
        return gsnap_store__err(w->db, GSNAP_ECORRUPT, "base run %llu dir %u: record of node %llu out of place",
                                (unsigned long long)w->run_id, dir, (unsigned long long)r->node);
    int new_node = r->node + 1 > w->dlast;
    if (new_node && w->dpack && (rc = packed_flush(w))) return rc; /* the previous node's body ends here */
    for (uint64_t n = w->dlast; n <= r->node; n++) w->didx[n] = w->dcomp ? w->dbytes : w->dfill;
    if (new_node) w->dlast = r->node + 1;
    if (w->dpack) {
        if ((rc = packed_push(w, r))) return rc;
    } else if (w->dcomp) {
        if ((rc = dense2_add(w, r, new_node))) return rc;
    } else {
        memcpy(w->drecs + sizeof(struct gsnap_dense_hdr) + w->dfill * GSNAP_REC_BYTES, r, GSNAP_REC_BYTES);
    }
    w->dfill++;
    w->total++;
    w->nrec_dir[dir]++;
    if (r->vop & 1) w->has_del = 1;
    return 0;
}

int gsnap_dense__add_group(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r, size_t n) {
    int rc;
    if (!w->dcomp || n < 2) { /* GSD1, or nothing to share */
        for (size_t i = 0; i < n; i++)
            if ((rc = gsnap_dense__add(w, dir, &r[i]))) return rc;
        return 0;
    }
    if ((rc = gsnap_dense__add(w, dir, &r[0]))) return rc; /* opens, checks the node, indexes it */
    if (w->dfill + (n - 1) > w->dense_expect[dir])
        return gsnap_store__err(w->db, GSNAP_ECORRUPT, "base run %llu dir %u: record of node %llu out of place",
                                (unsigned long long)w->run_id, dir, (unsigned long long)r[0].node);
    if (w->dpack) { /* the node's body is packed when the next node or the direction's end comes */
        uint64_t del = 0;
        for (size_t i = 1; i < n; i++) {
            assert(r[i].node == r[0].node);
            if ((rc = packed_push(w, &r[i]))) return rc;
            del |= r[i].vop;
        }
        w->dfill += n - 1;
        w->total += n - 1;
        w->nrec_dir[dir] += n - 1;
        if (del & 1) w->has_del = 1;
        return 0;
    }
    if (w->dcap < DHEAD + w->dbytes + 30 * n) {
        size_t nc = w->dcap * 2 > DHEAD + w->dbytes + 30 * n ? w->dcap * 2 : DHEAD + w->dbytes + 30 * n;
        unsigned char *nb = realloc(w->dbuf, nc);
        if (!nb) return GSNAP_ENOMEM;
        w->dbuf = nb;
        w->dcap = nc;
    }
    unsigned char *p = w->dbuf + DHEAD + w->dbytes;
    uint64_t pn = r[0].nbr, pt = (uint64_t)r[0].t, bv = w->dbase.vop, del = 0;
    for (size_t i = 1; i < n; i++) {
        assert(r[i].node == r[0].node);
        p += gsnap_codec__put(p, r[i].nbr - pn);
        p += gsnap_codec__put(p, gsnap_codec__zz((uint64_t)r[i].t - pt));
        p += gsnap_codec__put(p, gsnap_codec__zz(r[i].vop - bv));
        pn = r[i].nbr;
        pt = (uint64_t)r[i].t;
        del |= r[i].vop;
    }
    w->dbytes = (size_t)(p - (w->dbuf + DHEAD));
    w->dprev = r[n - 1];
    w->dfill += n - 1;
    w->total += n - 1;
    w->nrec_dir[dir] += n - 1;
    if (del & 1) w->has_del = 1;
    return 0;
}

int gsnap_dense__load(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, gsnap_dense_ref *d,
                      int verify) {
    unsigned char key[10];
    struct gsnap_dense_hdr h;
    memset(d, 0, sizeof *d);
    d->loaded = 1;
    for (uint8_t kind = 0; kind < 2; kind++) {
        dense_key(key, run_id, dir, kind);
        MDB_val k = {sizeof key, key}, v;
        int rc = gsnap_store__get(db, txn, db->dense_dbi, &k, &v, "reading the base run");
        if (rc == GSNAP_NOTFOUND) {
            if (kind == 0) return 0; /* no records in this direction */
            return gsnap_store__err(db, GSNAP_ECORRUPT, "base run %llu dir %u: index missing",
                                    (unsigned long long)run_id, dir);
        }
        if (rc) return rc;
        if (v.mv_size < sizeof h) goto bad;
        memcpy(&h, v.mv_data, sizeof h);
        if (kind == 0) {
            d->packed = h.magic == GSNAP_DENSE3_MAGIC;
            d->compact = d->packed || h.magic == GSNAP_DENSE2_MAGIC;
        }
        uint64_t unit = kind == 1 ? 8 : d->compact ? 1 : GSNAP_REC_BYTES, plen = v.mv_size - sizeof h;
        if (h.magic != (kind == 0 ? (d->packed ? GSNAP_DENSE3_MAGIC : d->compact ? GSNAP_DENSE2_MAGIC : GSNAP_DENSE_MAGIC)
                                  : (d->compact ? GSNAP_INDEX2_MAGIC : GSNAP_INDEX_MAGIC)) ||
            (unit > 1 && (plen / unit != h.count || plen % unit)))
            goto bad;
        const unsigned char *payload = (const unsigned char *)v.mv_data + sizeof h;
        /* verify < 0: once per process and run (the cache in db) */
        uint64_t vkey = run_id << 2 | (uint64_t)kind << 1 | dir;
        int vnow = verify > 0 || (verify < 0 && !gsnap_store__verified(db, vkey));
        if (vnow && XXH3_64bits(payload, unit > 1 ? h.count * unit : plen) != h.xxh3)
            return gsnap_store__err(db, GSNAP_ECHECKSUM, "base run %llu dir %u: %s checksum mismatch",
                                    (unsigned long long)run_id, dir, kind ? "index" : "records");
        if (vnow && verify < 0) gsnap_store__set_verified(db, vkey);
        if (kind == 0) {
            d->recs = payload;
            d->nrec = h.count;
            if (d->compact) { /* the bases, then the bodies */
                const unsigned char *p = payload, *end = payload + plen;
                if (gsnap_codec__get(&p, end, &d->bvop) || gsnap_codec__get(&p, end, &d->bt)) goto bad;
                d->bt = gsnap_codec__unzz(d->bt);
                d->recs = p;
                d->plen = (uint64_t)(end - p);
                if (d->packed) { /* the pad: zero bytes the loads of the last fields may read */
                    if (d->plen < GSNAP_DENSE3_PAD) goto bad;
                    d->plen -= GSNAP_DENSE3_PAD;
                    for (unsigned i = 0; i < GSNAP_DENSE3_PAD; i++)
                        if (p[d->plen + i]) goto bad;
                } else if (h.count > d->plen / 3) {
                    goto bad; /* a GSD2 record takes 3 bytes at least */
                }
            }
        } else {
            d->idx = payload;
            d->nidx = h.count;
        }
    }
    if (d->nidx == 0) goto bad;
    uint64_t last;
    memcpy(&last, d->idx + (d->nidx - 1) * 8, 8);
    if (last != (d->compact ? d->plen : d->nrec)) goto bad;
    return 0;
bad:
    return gsnap_store__err(db, GSNAP_ECORRUPT, "base run %llu dir %u: malformed dense value",
                            (unsigned long long)run_id, dir);
}

void gsnap_dense__range(const gsnap_dense_ref *d, uint64_t node, uint64_t *begin, uint64_t *end) {
    *begin = *end = 0;
    if (!d->idx || d->nidx < 2 || node >= d->nidx - 1) return; /* (node + 1 wraps for UINT64_MAX) */
    uint64_t pair[2];
    memcpy(pair, d->idx + node * 8, 16);
    /* A damaged index must never send a reader outside the records. */
    if (pair[0] > pair[1] || pair[1] > (d->compact ? d->plen : d->nrec)) return;
    *begin = pair[0];
    *end = pair[1];
}

int gsnap_dense__delete(gsnap_db *db, MDB_txn *txn, uint64_t run_id) {
    for (uint8_t dir = 0; dir < 2; dir++)
        for (uint8_t kind = 0; kind < 2; kind++) {
            unsigned char key[10];
            dense_key(key, run_id, dir, kind);
            MDB_val k = {sizeof key, key};
            int rc = mdb_del(txn, db->dense_dbi, &k, NULL);
            if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, rc, "deleting the old base run");
        }
    return 0;
}

int gsnap_dense__bad(gsnap_db *db, uint64_t run_id, uint8_t dir, uint64_t node) {
    return gsnap_store__err(db, GSNAP_ECORRUPT, "base run %llu dir %u node %llu: malformed records",
                            (unsigned long long)run_id, dir, (unsigned long long)node);
}
