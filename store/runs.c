/*
 * store/runs.c -- sorted runs inside LMDB: writing them as checksummed
 * chunks, reading them back sequentially from any node. Merging them is
 * compact.c.
 *
 * A run is a sorted sequence of records per direction, cut into chunks of at
 * most GSNAP_CHUNK_RECS records (16336 bytes: four LMDB pages as an overflow
 * value). A chunk is keyed by (run id, dir, first node, chunk no); since run
 * ids only grow, a new run is written with MDB_APPEND: sequential page writes,
 * no B-tree rebalancing, no random page touches.
 *
 * The writer is run_writer.c.
 *
 * Finding a node in a run: the B-tree over chunk keys is the run's fence
 * index. MDB_SET_RANGE lands on the first chunk starting at or after the node;
 * the node's first records may sit at the end of the chunk before it, so the
 * reader starts one chunk back and binary-searches inside the chunk.
 */
#include "store/store_int.h"
#include <assert.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ---- reader ------------------------------------------------------------- */

static int chunk_bad(gsnap_db *db, const gsnap_run_reader *rr, const unsigned char *kp, const char *why) {
    return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u chunk at node %llu: %s",
                            (unsigned long long)rr->run_id, rr->dir, (unsigned long long)gsnap_get_be64(kp + 9),
                            why);
}

int gsnap_run__chunk_verified(gsnap_db *db, const unsigned char *kp, const unsigned char *pay, size_t plen,
                              uint64_t xxh3, int verify) {
    if (verify == 0) return 1;
    uint64_t kh = 0, *slot = NULL;
    if (verify == 2) {
        kh = XXH3_64bits(kp, GSNAP_DATA_KEY) | 1; /* never 0: 0 marks an empty slot */
        slot = &db->chunk_ok[kh % GSNAP_CHUNK_CACHE];
        if (__atomic_load_n(slot, __ATOMIC_RELAXED) == kh) return 1;
    }
    if (XXH3_64bits(pay, plen) != xxh3) return 0;
    if (slot) __atomic_store_n(slot, kh, __ATOMIC_RELAXED);
    return 1;
}

/* Check the chunk at the cursor's current key/value and make it rr's, not
 * positioned (then pos 0: cur_rec, or seek); returns 1 when the key belongs
 * to (run, dir), 0 when it does not, <0 on error. GSC1 holds raw records,
 * GSC2 the compact encoding (codec.c). */
static int load_chunk(gsnap_db *db, gsnap_run_reader *rr, const MDB_val *k, const MDB_val *v) {
    if (k->mv_size != GSNAP_DATA_KEY)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run chunk key of %zu bytes", k->mv_size);
    const unsigned char *kp = k->mv_data;
    if (gsnap_get_be64(kp) != rr->run_id || kp[8] != rr->dir) return 0;
    struct gsnap_chunk_hdr h;
    if (v->mv_size < sizeof h)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu: chunk shorter than its header",
                                (unsigned long long)rr->run_id);
    memcpy(&h, v->mv_data, sizeof h);
    size_t plen = v->mv_size - sizeof h;
    int compact = h.magic == GSNAP_CHUNK2_MAGIC;
    if ((!compact && h.magic != GSNAP_CHUNK_MAGIC) || h.nrec == 0 ||
        (!compact && (h.nrec > GSNAP_CHUNK_RECS || plen != (size_t)h.nrec * GSNAP_REC_BYTES)) ||
        (compact && (size_t)h.nrec * 3 > plen))
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu: malformed chunk (magic %08x, %u records, %zu bytes)",
                                (unsigned long long)rr->run_id, h.magic, h.nrec, v->mv_size);
    const unsigned char *recs = (const unsigned char *)v->mv_data + sizeof h;
    if (!gsnap_run__chunk_verified(db, kp, recs, plen, h.xxh3, rr->verify)) {
        if (compact && gsnap_codec__malformed(recs, plen, h.nrec, &rr->cc)) /* say which */
            return chunk_bad(db, rr, kp, rr->cc.why);
        return gsnap_store__err(db, GSNAP_ECHECKSUM, "run %llu: chunk checksum mismatch",
                                (unsigned long long)rr->run_id);
    }
    if (rr->copy) {
        if (rr->own_cap < plen) {
            unsigned char *no = realloc(rr->own, plen);
            if (!no) return GSNAP_ENOMEM;
            rr->own = no;
            rr->own_cap = plen;
        }
        memcpy(rr->own, recs, plen);
        recs = rr->own;
    }
    rr->compact = compact;
    if (compact && gsnap_codec__open(&rr->cc, recs, plen, h.nrec)) return chunk_bad(db, rr, kp, rr->cc.why);
    rr->recs = recs;
    rr->nrec = h.nrec;
    rr->pos = 0;
    return 1;
}

/* Make record rr->pos current: copy it (raw) or decode the next (GSC2). */
static int cur_rec(gsnap_db *db, gsnap_run_reader *rr) {
    if (!rr->compact) {
        memcpy(&rr->rec, rr->recs + (size_t)rr->pos * GSNAP_REC_BYTES, GSNAP_REC_BYTES);
        return 0;
    }
    int g = gsnap_codec__next(&rr->cc, &rr->rec);
    if (g > 0) return 0;
    return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: malformed compact chunk: %s",
                            (unsigned long long)rr->run_id, rr->dir, g < 0 ? rr->cc.why : "ends early");
}

static uint64_t rec_node(const unsigned char *recs, uint32_t i) {
    uint64_t n;
    memcpy(&n, recs + (size_t)i * GSNAP_REC_BYTES, 8);
    return n;
}

/* Index of the first record with node >= target in a chunk (nrec if none).
 * Node ids within a chunk are sorted and, for real and R-MAT graphs with
 * permuted ids, roughly uniform: a few interpolation steps narrow the range
 * with far fewer cache misses than a plain binary search, which finishes. */
static uint32_t first_at_or_after(const unsigned char *recs, uint32_t nrec, uint64_t node) {
    uint32_t lo = 0, hi = nrec; /* answer in [lo, hi] */
    if (rec_node(recs, 0) >= node) return 0;
    lo = 1;
    uint64_t hv = rec_node(recs, nrec - 1);
    if (hv < node) return nrec;
    hi = nrec - 1; /* rec[hi] >= node */
    for (int step = 0; step < 3 && hi - lo > 16; step++) {
        uint64_t lv = rec_node(recs, lo - 1); /* < node */
        hv = rec_node(recs, hi);             /* >= node */
        if (hv <= lv) break;
        double frac = (double)(node - lv) / (double)(hv - lv);
        uint32_t guess = lo + (uint32_t)(frac * (double)(hi - lo));
        if (guess >= hi) guess = hi - 1;
        if (rec_node(recs, guess) < node) lo = guess + 1;
        else hi = guess;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rec_node(recs, mid) < node) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Both seeks end here: the reader at record lo of the loaded chunk, or,
 * when lo is past its end, at the first record of the next chunk. */
static int reader_at(gsnap_db *db, gsnap_run_reader *rr, uint64_t lo) {
    rr->done = 0;
    rr->pos = lo;
    if (lo == rr->nrec) {
        rr->pos = rr->nrec - 1;
        return gsnap_run__reader_next(db, rr);
    }
    return cur_rec(db, rr);
}

/* A reader at no record yet (done until a chunk is loaded). */
static void reader_start(gsnap_run_reader *rr, MDB_cursor *cur, uint64_t run_id, uint8_t dir, int verify) {
    rr->cur = cur;
    rr->held = NULL;
    rr->run_id = run_id;
    rr->dir = dir;
    rr->done = 1;
    rr->verify = verify;
    rr->recs = NULL;
    rr->nrec = 0;
}

int gsnap_run__seek(gsnap_db *db, MDB_cursor *cur, uint64_t run_id, uint8_t dir, uint64_t node,
                    gsnap_run_reader *rr, int verify) {
    unsigned char key[GSNAP_DATA_KEY];
    MDB_val k = {sizeof key, key}, v;
    reader_start(rr, cur, run_id, dir, verify);
    gsnap_run__data_key(key, run_id, dir, node, 0);
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    int from_prev = 0;
    if (rc == MDB_NOTFOUND) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
        from_prev = 1;
    } else if (rc == 0) {
        /* The node's first records may end the chunk before, even when this
         * chunk starts with the node: always look one chunk back. */
        rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
        from_prev = 1;
        if (rc == MDB_NOTFOUND) {
            rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
            from_prev = 0;
        }
    }
    if (rc == MDB_NOTFOUND) return 0;
    if (rc) return gsnap_store__mdb_err(db, rc, "seeking a run");
    /* The chunk before the seek target must sort before it: if not, a
     * damaged branch page sent the search to the wrong leaf (and chunks of
     * the node would be skipped: a wrong answer). */
    if (from_prev && k.mv_size == GSNAP_DATA_KEY && memcmp(k.mv_data, key, GSNAP_DATA_KEY) >= 0)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu: the LMDB B-tree of gs.data is out of order "
                                "around node %llu (a damaged branch page): corrupt LMDB file",
                                (unsigned long long)run_id, (unsigned long long)node);
    int in = load_chunk(db, rr, &k, &v);
    if (in < 0) return in;
    if (!in) {
        if (!from_prev) return 0;
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        if (rc == MDB_NOTFOUND) return 0;
        if (rc) return gsnap_store__mdb_err(db, rc, "seeking a run");
        in = load_chunk(db, rr, &k, &v);
        if (in <= 0) return in;
    }
    uint64_t lo;
    if (rr->compact) {
        int g = gsnap_codec__skip_to(&rr->cc, node, &lo);
        if (g < 0) return chunk_bad(db, rr, k.mv_data, rr->cc.why);
        if (g == 0) lo = rr->nrec;
    } else {
        lo = first_at_or_after(rr->recs, (uint32_t)rr->nrec, node);
    }
    return reader_at(db, rr, lo);
}

static int seek_group(gsnap_db *db, gsnap_run_reader *rr, const unsigned char *key, uint32_t off, uint64_t prev,
                      uint32_t before, uint64_t node);

/* Seek `node` from a group of a known chunk (fence.c): descend to the chunk
 * by its exact key, position the decoder at the group's header (byte `off`,
 * after `before` records; `prev` = the node of the group before it, 0 for
 * the chunk's first), then as gsnap_run__seek. The chunk is verified as
 * there (verify); a missing key is corruption of the B-tree. */
int gsnap_run__seek_from(gsnap_db *db, MDB_cursor *cur, uint64_t run_id, uint8_t dir, const unsigned char *key,
                         uint32_t off, uint64_t prev, uint32_t before, uint64_t node, gsnap_run_reader *rr,
                         int verify) {
    MDB_val k = {GSNAP_DATA_KEY, (void *)key}, v;
    reader_start(rr, cur, run_id, dir, verify);
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    if (rc == MDB_NOTFOUND)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu: chunk at node %llu is missing from gs.data",
                                (unsigned long long)run_id, (unsigned long long)gsnap_get_be64(key + 9));
    if (rc) return gsnap_store__mdb_err(db, rc, "seeking a run");
    int in = load_chunk(db, rr, &k, &v);
    if (in <= 0) return in < 0 ? in : chunk_bad(db, rr, key, "not of its run");
    return seek_group(db, rr, key, off, prev, before, node);
}

/* Make chunk c of rr's held copy the current one (as load_chunk; the copy
 * was verified when it was made). */
static int load_held(gsnap_db *db, gsnap_run_reader *rr, const unsigned char *key, uint32_t c) {
    const gsnap_run_held *h = rr->held;
    assert(c < h->nc && h->off[c] <= h->off[c + 1]);
    const unsigned char *pay = h->bytes + h->off[c];
    rr->hchunk = c;
    rr->compact = 1;
    if (gsnap_codec__open(&rr->cc, pay, h->off[c + 1] - h->off[c], h->nrec[c]))
        return key ? chunk_bad(db, rr, key, rr->cc.why)
                   : gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: held chunk %u: %s",
                                      (unsigned long long)rr->run_id, rr->dir, c, rr->cc.why);
    rr->recs = pay;
    rr->nrec = h->nrec[c];
    rr->pos = 0;
    return 1;
}

int gsnap_run__seek_held(gsnap_db *db, const gsnap_run_held *h, uint64_t run_id, uint8_t dir,
                         const unsigned char *key, uint32_t chunk, uint32_t off, uint64_t prev, uint32_t before,
                         uint64_t node, gsnap_run_reader *rr) {
    reader_start(rr, NULL, run_id, dir, 0);
    rr->held = h;
    int in = load_held(db, rr, key, chunk);
    if (in < 0) return in;
    return seek_group(db, rr, key, off, prev, before, node);
}

/* The loaded chunk's decoder at the group header at byte off (after
 * `before` records, `prev` the node of the group before it, 0 for the
 * chunk's first), then at `node`'s first record as gsnap_run__seek. */
static int seek_group(gsnap_db *db, gsnap_run_reader *rr, const unsigned char *key, uint32_t off, uint64_t prev,
                      uint32_t before, uint64_t node) {
    if (!rr->compact || off >= (size_t)(rr->cc.end - rr->recs) || before >= rr->nrec)
        return chunk_bad(db, rr, key, "does not match the fence index");
    rr->cc.p = rr->recs + off;
    rr->cc.node = prev;
    rr->cc.started = before > 0;
    rr->cc.left = rr->nrec - before;
    uint64_t lo;
    int g = gsnap_codec__skip_to(&rr->cc, node, &lo);
    if (g < 0) return chunk_bad(db, rr, key, rr->cc.why);
    lo = g == 0 ? rr->nrec : lo + before;
    return reader_at(db, rr, lo);
}

/* GSD2 dense run: the next record, moving on to the next node with records. */
static int dense2_step(gsnap_db *db, gsnap_run_reader *rr) {
    for (;;) {
        int g = gsnap_dense__it_next(&rr->dit, &rr->rec);
        if (g > 0) return 0;
        if (g < 0) return gsnap_dense__bad(db, rr->run_id, rr->dir, rr->dit.node);
        if (rr->dit.node + 1 >= rr->dref.nidx - 1) {
            rr->done = 1;
            return 0;
        }
        gsnap_dense__it(&rr->dref, rr->dit.node + 1, &rr->dit);
    }
}

int gsnap_run__reader_next(gsnap_db *db, gsnap_run_reader *rr) {
    if (rr->done) return 0;
    if (rr->dense == 2) return dense2_step(db, rr);
    if (++rr->pos < rr->nrec) return cur_rec(db, rr);
    if (rr->dense) {
        rr->done = 1;
        return 0;
    }
    if (rr->held) { /* the copy holds the run's chunks of this direction in order */
        if (rr->hchunk + 1 >= rr->held->nc) {
            rr->done = 1;
            return 0;
        }
        int in = load_held(db, rr, NULL, rr->hchunk + 1);
        return in < 0 ? in : cur_rec(db, rr);
    }
    MDB_val k, v;
    int rc = mdb_cursor_get(rr->cur, &k, &v, MDB_NEXT);
    if (rc == MDB_NOTFOUND) { rr->done = 1; return 0; }
    if (rc) return gsnap_store__mdb_err(db, rc, "reading a run");
    int in = load_chunk(db, rr, &k, &v);
    if (in < 0) return in;
    if (!in) {
        rr->done = 1;
        return 0;
    }
    return cur_rec(db, rr);
}

/* Append rec to the growing list *buf (*n of *cap). */
static int take_push(gsnap_rec **buf, size_t *n, size_t *cap, const gsnap_rec *rec) {
    if (*n == *cap && gsnap_vec_reserve((void **)buf, cap, *n + 1, sizeof **buf)) return GSNAP_ENOMEM;
    (*buf)[(*n)++] = *rec;
    return 0;
}

int gsnap_run__reader_take_node(gsnap_db *db, gsnap_run_reader *rr, gsnap_rec **buf, size_t *n, size_t *cap) {
    uint64_t node = rr->rec.node;
    int rc;
    while (!rr->done && rr->rec.node == node) {
        if ((rc = take_push(buf, n, cap, &rr->rec))) return rc;
        if (rr->dense == 2) { /* the rest of the node's body, then the next node */
            gsnap_rec r;
            int g;
            while ((g = gsnap_dense__it_next(&rr->dit, &r)) > 0)
                if ((rc = take_push(buf, n, cap, &r))) return rc;
            if (g < 0) return gsnap_dense__bad(db, rr->run_id, rr->dir, rr->dit.node);
            return dense2_step(db, rr);
        }
        if (rr->compact && rr->cc.gleft > 0) { /* the rest of the group in this chunk */
            if (*n + rr->cc.gleft > *cap && gsnap_vec_reserve((void **)buf, cap, *n + rr->cc.gleft, sizeof **buf))
                return GSNAP_ENOMEM;
            int64_t g = gsnap_codec__group_rest(&rr->cc, *buf + *n);
            if (g < 0)
                return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: malformed compact chunk: %s",
                                        (unsigned long long)rr->run_id, rr->dir, rr->cc.why);
            *n += (size_t)g;
            rr->pos += (uint64_t)g;
        }
        if ((rc = gsnap_run__reader_next(db, rr))) return rc;
    }
    return 0;
}

int gsnap_run__reader_open(gsnap_run_reader *rr, gsnap_db *db, MDB_txn *txn, const gsnap_run *run,
                           uint8_t dir, uint64_t from_node, int verify, int copy) {
    MDB_cursor *cur = NULL;
    unsigned char *own = rr->own; /* a reader may be reopened: keep its buffer */
    size_t own_cap = rr->own_cap;
    uint64_t run_id = run->id;
    memset(rr, 0, sizeof *rr);
    rr->own = own;
    rr->own_cap = own_cap;
    rr->copy = copy;
    rr->done = 1;
    rr->run_id = run_id;
    rr->dir = dir;
    if (run->info.flags & GSNAP_RUN_DENSE) {
        /* Dense values are overflow pages of an older txn: never moved by
         * this txn's appends, so no copy is needed even in a write txn. */
        gsnap_dense_ref d;
        int rc = gsnap_dense__load(db, txn, run_id, dir, &d, verify);
        if (rc) return rc;
        if (d.compact) {
            rr->dense = 2;
            rr->dref = d;
            rr->nrec = 1; /* pos stays 0: records are decoded node by node */
            if (!d.recs || from_node >= d.nidx - 1) return 0;
            gsnap_dense__it(&rr->dref, from_node, &rr->dit);
            rr->done = 0;
            return dense2_step(db, rr);
        }
        uint64_t b, e;
        gsnap_dense__range(&d, from_node, &b, &e);
        if (from_node == 0) b = 0;
        else if (d.nidx < 2 || from_node >= d.nidx - 1) b = d.nrec;
        rr->dense = 1;
        rr->recs = d.recs;
        rr->nrec = d.nrec;
        rr->pos = b;
        rr->done = !d.recs || b >= d.nrec;
        if (!rr->done) memcpy(&rr->rec, d.recs + b * GSNAP_REC_BYTES, GSNAP_REC_BYTES);
        return 0;
    }
    int rc = mdb_cursor_open(txn, db->data_dbi, &cur);
    if (rc) return gsnap_store__mdb_err(db, rc, "opening data cursor");
    rc = gsnap_run__seek(db, cur, run_id, dir, from_node, rr, verify);
    rr->cur = cur;
    return rc;
}

void gsnap_run__reader_close(gsnap_run_reader *rr) {
    if (rr->cur) mdb_cursor_close(rr->cur);
    rr->cur = NULL;
}

void gsnap_run__reader_free(gsnap_run_reader *rr) {
    gsnap_run__reader_close(rr);
    free(rr->own);
    rr->own = NULL;
    rr->own_cap = 0;
}
