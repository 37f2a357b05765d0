/*
 * store/distinct.c -- the distinct neighbour ids of a node at (T, V), what
 * the samplers draw from (sampler/source.c).
 *
 * gsnap_neighbors gathers every record of the node (32 bytes each), merges
 * the runs, replays them and writes 24-byte instances, which the sampler
 * then reduces to distinct ids. Without deletes in range an id is live iff
 * one of its adds is in range, so the distinct ids are the union of each
 * run's distinct ids: gathered as u64 straight from the records (a run's
 * records are in neighbour order) and merged pairwise with deduplication.
 * With a delete in range it falls back to the replay. A run that needs no
 * filter (no deletes, versions <= as_of, at_t >= the latest time) is read
 * without decoding t and vop (dense_ids, chunk_ids: gsnap_codec__ids).
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static int reserve(uint64_t **p, size_t *cap, size_t n) {
    if (*cap >= n) return 0;
    uint64_t *q = realloc(*p, n * sizeof *q);
    if (!q) return GSNAP_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* a[i..ie) and b[j..je), each ascending, into d from k on, each id once;
 * returns the end in d. */
static size_t merge2(const uint64_t *a, size_t i, size_t ie, const uint64_t *b, size_t j, size_t je,
                     uint64_t *d, size_t k) {
    while (i < ie && j < je) {
        uint64_t x = a[i], y = b[j];
        d[k++] = x < y ? x : y;
        i += x <= y;
        j += y <= x;
    }
    while (i < ie) d[k++] = a[i++];
    while (j < je) d[k++] = b[j++];
    return k;
}

/* Merge the ascending segments src[seg[0]..seg[nseg]) pairwise, ping-pong
 * with dst at the same offsets, until one remains (its bounds in seg[0..1]);
 * returns the buffer that holds it. Each id once. */
static uint64_t *merge_all(uint64_t *src, uint64_t *dst, size_t *seg, size_t nseg) {
    while (nseg > 1) {
        size_t w = 0, k = seg[0];
        for (size_t s = 0; s < nseg; s += 2) {
            size_t lo = seg[s], mid = seg[s + 1], hi = s + 2 <= nseg ? seg[s + 2] : mid;
            seg[w++] = k;
            k = merge2(src, lo, mid, src, mid, hi, dst, k);
        }
        seg[w] = k;
        nseg = w;
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

/* Merge the ascending segments of rd->ids (starts rd->seg[0..nseg]) into one
 * ascending list without duplicates; returns its length (in rd->ids). When
 * the last segment (a dense base: node_events reads it after the deltas)
 * or the first (a chunked base, the oldest run) holds most ids, the others
 * are merged first and the big one is read once, in the last merge. */
static int merge_ids(gsnap_read *rd, size_t n, size_t nseg, size_t *out) {
    if (nseg <= 1) { *out = n; return 0; }
    int rc = reserve(&rd->ids_tmp, &rd->ids_tmp_cap, 2 * n);
    if (rc) return rc;
    size_t *seg = rd->seg, m;
    uint64_t *res;
    int big_last = n - seg[nseg - 1] > n / 2, big_first = seg[1] > n / 2;
    if (nseg > 2 && (big_last || big_first)) {
        /* the other segments' bounds (rest[0..nseg - 1]), merged ping-pong
         * with the second half of ids_tmp into o[rest[0]..rest[1]) */
        size_t *rest = big_last ? seg : seg + 1;
        size_t lo = big_last ? seg[nseg - 1] : 0, hi = big_last ? n : seg[1]; /* the big one */
        uint64_t *o = merge_all(rd->ids, rd->ids_tmp + n, rest, nseg - 1);
        /* the last merge: the others with ids[lo..hi) into ids_tmp[0..) */
        res = rd->ids_tmp;
        m = merge2(o, rest[0], rest[1], rd->ids, lo, hi, res, 0);
    } else {
        res = merge_all(rd->ids, rd->ids_tmp, seg, nseg);
        m = seg[1];
    }
    if (res != rd->ids) { /* swap the buffers: the answer is in rd->ids */
        size_t c = rd->ids_cap;
        rd->ids_tmp = rd->ids;
        rd->ids = res;
        rd->ids_cap = rd->ids_tmp_cap;
        rd->ids_tmp_cap = c;
    }
    *out = m;
    return 0;
}

/* ---- the ids of one run without filtering (node_events, query.c) ---------- */

int gsnap_store__run_unfiltered(const gsnap_read *rd, const gsnap_run *run, int64_t at_t, uint64_t as_of) {
    return !(run->info.flags & GSNAP_RUN_HAS_DELETES) && run->info.max_ver <= as_of &&
           at_t >= rd->meta.max_t;
}

int gsnap_store__dense_ids(gsnap_db *db, gsnap_read *rd, const gsnap_dense_ref *d, uint64_t run_id,
                           uint8_t dir, uint64_t node, size_t *cnt) {
    uint64_t b, e, nbr = 0, recs;
    if (d->packed) { /* the nbr column alone, read at its computed offsets */
        gsnap_dense_it it;
        gsnap_dense__it(d, node, &it);
        if (it.bad) return gsnap_dense__bad(db, run_id, dir, node);
        if (it.e == 0) return 0;
        int rc = reserve(&rd->ids, &rd->ids_cap, *cnt + (size_t)it.e);
        if (rc) return rc;
        uint64_t *out = rd->ids;
        size_t k = *cnt;
        uint64_t last = it.nbr + gsnap_bits__get(it.bits, 0, it.wn);
        out[k++] = last;
        for (uint64_t i = 1, bit = it.wn; i < it.e; i++, bit += it.wn) {
            uint64_t x = it.nbr + gsnap_bits__get(it.bits, bit, it.wn);
            if (x != last) out[k++] = last = x;
        }
        *cnt = k;
        return 0;
    }
    gsnap_dense__range(d, node, &b, &e);
    if (b == e) return 0;
    int rc = reserve(&rd->ids, &rd->ids_cap, *cnt + (size_t)(e - b) / 3 + 1);
    if (rc) return rc;
    const unsigned char *p = d->recs + b;
    if (gsnap_codec__ids(&p, d->recs + e, &nbr, rd->ids, cnt, 0, &recs)) return gsnap_dense__bad(db, run_id, dir, node);
    return 0;
}

int gsnap_store__chunk_ids(gsnap_db *db, gsnap_read *rd, gsnap_run_reader *rr, uint64_t node, size_t *cnt) {
    size_t before = *cnt;
    int rc = 0;
    while (rc == 0 && !rr->done && rr->rec.node == node) {
        gsnap_codec_cur *c = &rr->cc;
        size_t more = rr->compact && c->gleft ? (size_t)(c->gend - c->p) / 3 : 0;
        if ((rc = reserve(&rd->ids, &rd->ids_cap, *cnt + more + 1))) return rc;
        if (*cnt == before || rd->ids[*cnt - 1] != rr->rec.nbr) rd->ids[(*cnt)++] = rr->rec.nbr;
        if (more) { /* the rest of the node's group in this chunk, ids only */
            uint64_t recs;
            if (gsnap_codec__ids(&c->p, c->gend, &c->nbr, rd->ids, cnt, 1, &recs) || recs != c->gleft)
                return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: malformed compact chunk: %s",
                                        (unsigned long long)rr->run_id, rr->dir,
                                        "group length does not match its records");
            c->left -= recs;
            c->gleft = 0;
            rr->pos += recs;
        }
        rc = gsnap_run__reader_next(db, rr);
    }
    return rc;
}

int gsnap_store__answer_key(gsnap_read *rd, gsnap_dir dir, int64_t at_t, uint64_t as_of, uint64_t *key) {
    if (!rd || !key) return GSNAP_EINVAL;
    *key = 0;
    uint64_t v = as_of == GSNAP_VERSION_LATEST || as_of > rd->meta.version ? rd->meta.version : as_of;
    /* a read before the retention horizon is an error, and the horizon can
     * rise without a new run (a load restores it in a transaction of its
     * own): it is part of what the answers depend on */
    const struct gsnap_meta *m = &rd->meta;
    if ((m->horizon > 1 && v < m->horizon) || (m->horizon_t != INT64_MIN && at_t < m->horizon_t)) return 0;
    uint64_t h = XXH3_64bits_withSeed(&m->horizon, sizeof m->horizon, (uint64_t)dir + 1);
    h = XXH3_64bits_withSeed(&m->horizon_t, sizeof m->horizon_t, h);
    int filtered = 0;
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        if (run->info.min_ver > v) continue; /* not read at v (node_events skips it) */
        filtered |= !gsnap_store__run_unfiltered(rd, run, at_t, v);
        h = XXH3_64bits_withSeed(&run->id, sizeof run->id, h);
    }
    /* a run read through the filter (versions past v, events past at_t, or
     * deletes to replay): the answers depend on (v, at_t) too, and on
     * nothing else (the runs never change) */
    if (filtered) {
        h = XXH3_64bits_withSeed(&v, sizeof v, h);
        h = XXH3_64bits_withSeed(&at_t, sizeof at_t, h);
    }
    *key = h | 1; /* never 0 */
    return 0;
}

int gsnap_store__distinct_nbrs(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                               uint64_t as_of, const uint64_t **ids, size_t *n) {
    if (!db || !rd || !ids || !n) return GSNAP_EINVAL;
    if (rd->db != db) return gsnap_store__err(db, GSNAP_EINVAL, "read view belongs to another database");
    if (dir != GSNAP_DIR_IN && dir != GSNAP_DIR_OUT) return gsnap_neighbors(db, rd, node, dir, at_t, as_of, NULL, 0, n);
    uint64_t v = as_of == GSNAP_VERSION_LATEST || as_of > rd->meta.version ? rd->meta.version : as_of;
    size_t cnt, nseg;
    int has_del = 0, rc;
    if (!gsnap_store__kept(db, dir)) return gsnap_neighbors(db, rd, node, dir, at_t, as_of, NULL, 0, n); /* its error */
    if ((rc = gsnap_store__horizon_check(db, rd, at_t, v))) return rc;
    if ((rc = gsnap_store__node_ids(db, rd, node, dir, at_t, v, &cnt, &nseg, &has_del))) return rc;
    if (!has_del) {
        if ((rc = merge_ids(rd, cnt, nseg, n))) return rc;
        *ids = rd->ids;
        return 0;
    }
    /* deletes in range: the replay decides which instances live */
    size_t m = 0, cap = rd->merge_cap ? rd->merge_cap : 64;
    for (;;) {
        gsnap_nbr *nb = malloc(cap * sizeof *nb);
        if (!nb) return GSNAP_ENOMEM;
        if ((rc = gsnap_neighbors(db, rd, node, dir, at_t, as_of, nb, cap, &m)) == 0 && m > cap) {
            free(nb);
            cap = m;
            continue;
        }
        if (rc == 0 && !(rc = reserve(&rd->ids, &rd->ids_cap, m ? m : 1)))
            *n = gsnap_store__distinct_ids(nb, m, rd->ids);
        free(nb);
        *ids = rd->ids;
        return rc;
    }
}
