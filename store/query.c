/*
 * store/query.c -- point-in-time answers: neighbours, degree, iterator,
 * whole-graph scans, touched-node log.
 *
 * Answering neighbors(v, T, V): gather v's records with t <= T and
 * version <= V from every live run (one B-tree seek per run), put them in
 * (nbr, t, version) order (a run's records already are; several runs are
 * merged), then replay each neighbour's events: an add appends an instance,
 * a delete removes the oldest live one. Runs without deletes skip the replay.
 */
#include "store/store_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsnap_store__check_dir(gsnap_db *db, gsnap_dir dir) {
    if (dir != GSNAP_DIR_IN && dir != GSNAP_DIR_OUT)
        return gsnap_store__err(db, GSNAP_EINVAL, "direction %d is neither IN nor OUT", (int)dir);
    if (!gsnap_store__kept(db, dir))
        return gsnap_store__err(db, GSNAP_ENOTSUP, "this database does not keep %s-edges",
                                dir == GSNAP_DIR_IN ? "in" : "out");
    return 0;
}

/* The scratch buffer doubled (out of line: scratch_push inlines into the
 * record loops without it). 1, nothing grown, past the view's scratch_max:
 * the record loops stop there (take() passes it on) and the query answers
 * nothing, so the bound costs the queries' loops no test of their own. */
__attribute__((noinline)) static int scratch_grow(gsnap_read *rd) {
    if (rd->scratch_max && rd->scratch_cap >= rd->scratch_max) {
        rd->scratch_full = 1;
        return 1;
    }
    size_t nc = rd->scratch_cap ? rd->scratch_cap * 2 : 256;
    gsnap_rec *ns = realloc(rd->scratch, nc * sizeof *ns);
    if (!ns) return GSNAP_ENOMEM;
    rd->scratch = ns;
    rd->scratch_cap = nc;
    return 0;
}

static inline int scratch_push(gsnap_read *rd, const gsnap_rec *r, size_t *n) {
    int rc;
    if (*n == rd->scratch_cap && (rc = scratch_grow(rd))) return rc;
    rd->scratch[(*n)++] = *r;
    return 0;
}

/* (nbr, t, version) order. Records of one neighbour are few (multi-edges),
 * so the first test is predictable and the answer a flag, which the merges
 * below use as a select rather than a branch: they interleave runs about at
 * random, and a mispredicted branch per record cost more than the select. */
static inline int ev_less(const gsnap_rec *a, const gsnap_rec *b) {
    if (__builtin_expect(a->nbr != b->nbr, 1)) return a->nbr < b->nbr;
    if (a->t != b->t) return a->t < b->t;
    return (a->vop >> 1) < (b->vop >> 1);
}

/* a[0..na) and b[0..nb) merged into dst (ties keep a's first). */
static void merge2(const gsnap_rec *a, size_t na, const gsnap_rec *b, size_t nb, gsnap_rec *dst) {
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        size_t lt = (size_t)ev_less(&b[j], &a[i]);
        dst[k++] = *(lt ? &b[j] : &a[i]);
        j += lt;
        i += lt ^ 1;
    }
    memcpy(dst + k, a + i, (na - i) * sizeof *dst);
    memcpy(dst + k + (na - i), b + j, (nb - j) * sizeof *dst);
}

static int grow_recs(gsnap_rec **p, size_t *cap, size_t need) {
    if (*cap >= need) return 0;
    gsnap_rec *t = realloc(*p, need * sizeof *t);
    if (!t) return GSNAP_ENOMEM;
    *p = t;
    *cap = need;
    return 0;
}

/* The step of merge_down: of the m > 2 segments sg[0..m), the neighbours b,
 * b + 1 whose sizes add up least become one of their total size at b (its
 * records at p, when p is given: the merge, written there); returns that
 * size. */
static size_t merge_step(gsnap_seg *sg, size_t m, gsnap_rec *p) {
    size_t b = 0;
    for (size_t i = 1; i + 1 < m; i++)
        if (sg[i].n + sg[i + 1].n < sg[b].n + sg[b + 1].n) b = i;
    if (p) merge2(sg[b].p, sg[b].n, sg[b + 1].p, sg[b + 1].n, p);
    sg[b] = (gsnap_seg){p, sg[b].n + sg[b + 1].n};
    memmove(sg + b + 1, sg + b + 2, (m - b - 2) * sizeof *sg);
    return sg[b].n;
}

/* The runs' segments of rd->scratch[0..n) (boundaries rd->seg[0..nseg],
 * each already in (nbr, t, version) order; node_events puts the deltas
 * first and the base last) merged two neighbours at a time until at most
 * two remain, returned in out[0..2) (out[1] empty when one remains).
 * Each step merges the neighbours whose sizes add up least: a node's
 * records are mostly in the base (75 % of a hub's on an R-MAT store as
 * ingested) and a few in each delta, so the deltas are merged among
 * themselves and each record is moved once or twice, not once per level of
 * a pairwise merge. Records of two runs never tie (runs hold disjoint
 * versions), so the result is the (nbr, t, version) order whatever the
 * order of the merges; only neighbours merge, the earlier as a, so ties
 * within a run keep their order. Intermediate results go to rd->merge_tmp. */
static int merge_down(gsnap_read *rd, size_t n, size_t nseg, gsnap_seg out[2]) {
    gsnap_seg *sg = rd->segs; /* the segments, then room to plan on their sizes */
    if (!sg && !(sg = rd->segs = malloc(2 * (rd->nruns + 1) * sizeof *sg))) return GSNAP_ENOMEM;
    for (size_t i = 0; i < nseg; i++) sg[i] = (gsnap_seg){rd->scratch + rd->seg[i], (i + 1 < nseg ? rd->seg[i + 1] : n) - rd->seg[i]};
    if (nseg > 2) { /* room for the intermediate results: the same steps first, on sizes alone */
        gsnap_seg *plan = sg + nseg;
        size_t need = 0;
        memcpy(plan, sg, nseg * sizeof *plan);
        for (size_t m = nseg; m > 2; m--) need += merge_step(plan, m, NULL);
        int rc = grow_recs(&rd->merge_tmp, &rd->merge_cap, need);
        if (rc) return rc;
        for (gsnap_rec *w = rd->merge_tmp; nseg > 2; nseg--) w += merge_step(sg, nseg, w);
    }
    out[0] = nseg ? sg[0] : (gsnap_seg){rd->scratch, 0};
    out[1] = nseg > 1 ? sg[1] : (gsnap_seg){rd->scratch, 0};
    return 0;
}

/* The node's records merged into one (nbr, t, version) order, in rd->scratch. */
static int merge_runs(gsnap_read *rd, size_t n, size_t nseg) {
    if (nseg <= 1) return 0;
    gsnap_seg s[2];
    int rc = merge_down(rd, n, nseg, s);
    if (rc || (rc = grow_recs(&rd->merge_out, &rd->merge_out_cap, n))) return rc;
    merge2(s[0].p, s[0].n, s[1].p, s[1].n, rd->merge_out);
    gsnap_rec *t = rd->scratch; /* swap: the answer is in scratch */
    size_t c = rd->scratch_cap;
    rd->scratch = rd->merge_out;
    rd->scratch_cap = rd->merge_out_cap;
    rd->merge_out = t;
    rd->merge_out_cap = c;
    return 0;
}

static inline void nbr_of(gsnap_nbr *o, const gsnap_rec *r) {
    o->node = r->nbr;
    o->t = r->t;
    o->version = r->vop >> 1;
}

/* The last merge of an answer without deletes, straight into the caller's
 * buffer: the first `cap` instances of the merge of a and b (a first
 * on ties), so the merged records are never written to a buffer of ours
 * and then copied out by a replay. */
static void merge2_into(gsnap_seg a, gsnap_seg b, gsnap_nbr *out, size_t cap) {
    const gsnap_rec *pa = a.p, *ea = a.p + a.n, *pb = b.p, *eb = b.p + b.n;
    gsnap_nbr *o = out, *oe = out + (cap < a.n + b.n ? cap : a.n + b.n);
    while (o < oe && pa < ea && pb < eb) {
        size_t lt = (size_t)ev_less(pb, pa);
        nbr_of(o++, lt ? pb : pa);
        pb += lt;
        pa += lt ^ 1;
    }
    while (o < oe && pa < ea) nbr_of(o++, pa++);
    while (o < oe && pb < eb) nbr_of(o++, pb++);
}

/* A verification failure while answering for `node`: say which node, which
 * run and which versions, keeping the detail of what failed. */
static int damage_err(gsnap_db *db, int rc, uint64_t node, gsnap_dir dir, const gsnap_run *run) {
    if (rc != GSNAP_ECHECKSUM && rc != GSNAP_ECORRUPT) return rc;
    char detail[512];
    snprintf(detail, sizeof detail, "%s", gsnap_db_errmsg(db));
    return gsnap_store__err(db, rc, "node %llu (%s-edges): run %llu holding versions %llu..%llu is damaged "
                            "(%s); nothing of it is answered", (unsigned long long)node,
                            dir == GSNAP_DIR_IN ? "in" : "out", (unsigned long long)run->id,
                            (unsigned long long)run->info.min_ver, (unsigned long long)run->info.max_ver,
                            detail);
}

static int node_events(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                       int64_t at_t, uint64_t as_of, size_t *n, size_t *nseg, int *has_del,
                       size_t *bad_run, int ids_only);

/* The node's records that pass (at_t, as_of) in rd->scratch, one segment
 * per run that has any; damage is reported naming the run. */
static int gather(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t, uint64_t as_of,
                  size_t *n, size_t *nseg, int *has_del) {
    size_t bad = 0;
    int rc = node_events(db, rd, node, dir, at_t, as_of, n, nseg, has_del, &bad, 0);
    if (rc && bad < rd->nruns) return damage_err(db, rc, node, dir, &rd->runs[bad]);
    return rc;
}

int gsnap_store__node_ids(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                          uint64_t as_of, size_t *n, size_t *nseg, int *has_del) {
    size_t bad = 0;
    int rc = node_events(db, rd, node, dir, at_t, as_of, n, nseg, has_del, &bad, 1);
    if (rc && bad < rd->nruns) return damage_err(db, rc, node, dir, &rd->runs[bad]);
    return rc;
}

/* Every chunk, dense value and Bloom filter read is verified the first time
 * this process reads it (XXH3; a chunk is 16 KiB, about a microsecond):
 * run ids are never reused and runs never change, so a verified value stays
 * verified (db->chunk_ok, db->verified). Scans and merges verify every read. */
/* ids_only: push only each run's distinct neighbour ids (u64) into rd->ids
 * instead of the records, and stop at the first delete (*has_del = 1: the
 * caller then needs the replay). */
static int push_id(gsnap_read *rd, uint64_t id, size_t *n) {
    if (*n == rd->ids_cap) {
        size_t nc = rd->ids_cap ? rd->ids_cap * 2 : 512;
        uint64_t *ni = realloc(rd->ids, nc * sizeof *ni);
        if (!ni) return GSNAP_ENOMEM;
        rd->ids = ni;
        rd->ids_cap = nc;
    }
    rd->ids[(*n)++] = id;
    return 0;
}

/* One record of the node: filter by (at_t, as_of), push it (or its id). */
static inline int take(gsnap_read *rd, const gsnap_rec *r, int64_t at_t, uint64_t as_of, size_t *cnt,
                       size_t before, int *has_del, int ids_only) {
    if (r->t > at_t || (r->vop >> 1) > as_of) return 0;
    if (r->vop & 1) *has_del = 1;
    if (!ids_only) return scratch_push(rd, r, cnt);
    if (*has_del) return 1; /* stop: the replay is needed */
    if (*cnt > before && rd->ids[*cnt - 1] == r->nbr) return 0;
    return push_id(rd, r->nbr, cnt);
}

/* A GSD3 body's records that pass (at_t, as_of), all at once: room for all
 * of them first, then one loop without a branch per record (the times and
 * versions read first; a record is written always and kept by advancing the
 * count). Fields of at most 57 bits: one 8-byte load each (the 16 zero bytes
 * that end the value keep every load inside it). 1 past the view's
 * scratch_max, as take(). */
static int packed_take(gsnap_read *rd, const gsnap_dense_it *it, int64_t at_t, uint64_t as_of, size_t *cnt,
                       int *has_del) {
    int rc;
    if (it->e == 0) return 0; /* (the scratch may not exist yet) */
    while (rd->scratch_cap - *cnt < it->e)
        if ((rc = scratch_grow(rd))) return rc;
    gsnap_rec *out = rd->scratch + *cnt, *o = out;
    /* the iterator's fields in locals: the stores to o could alias them */
    const unsigned char *bits = it->bits;
    const uint64_t node = it->node, nbr0 = it->nbr, t0 = it->t, v0 = it->vmin, e = it->e;
    const unsigned wn = it->wn, wt = it->wt, wv = it->wv;
    uint64_t bn = it->bn, bt = it->bt, bv = it->bv, del = 0;
    assert(wn <= 57 && wt <= 57 && wv <= 57); /* each field in one load (the caller's test) */
    const uint64_t mn = (1ull << wn) - 1, mt = (1ull << wt) - 1, mv = (1ull << wv) - 1; /* made once */
    for (uint64_t i = 0; i < e; i++, bn += wn, bt += wt, bv += wv) {
        uint64_t xn, xt, xv;
        __builtin_memcpy(&xn, bits + (bn >> 3), 8);
        __builtin_memcpy(&xt, bits + (bt >> 3), 8);
        __builtin_memcpy(&xv, bits + (bv >> 3), 8);
        int64_t t = (int64_t)(t0 + ((xt >> (bt & 7)) & mt));
        uint64_t vop = v0 + ((xv >> (bv & 7)) & mv);
        o->node = node;
        o->nbr = nbr0 + ((xn >> (bn & 7)) & mn);
        o->t = t;
        o->vop = vop;
        uint64_t keep = (uint64_t)(t <= at_t) & (uint64_t)((vop >> 1) <= as_of);
        del |= vop & keep;
        o += keep;
    }
    *cnt += (size_t)(o - out);
    if (del & 1) *has_del = 1;
    return 0;
}

/* The rest of a GSC2 group (the node's records in this chunk after the
 * reader's current one) that pass (at_t, as_of), decoded in one loop
 * (gsnap_codec__group_take) instead of a reader step per record. 1 past the
 * view's scratch_max, as take(). */
static int group_take(gsnap_db *db, gsnap_read *rd, gsnap_run_reader *rr, int64_t at_t, uint64_t as_of,
                      size_t *cnt, int *has_del) {
    uint64_t n = rr->cc.gleft, del = 0;
    int rc;
    while (rd->scratch_cap - *cnt < n)
        if ((rc = scratch_grow(rd))) return rc;
    int64_t k = gsnap_codec__group_take(&rr->cc, rd->scratch + *cnt, at_t, as_of, &del);
    if (k < 0)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: malformed compact chunk: %s",
                                (unsigned long long)rr->run_id, rr->dir, rr->cc.why);
    *cnt += (size_t)k;
    rr->pos += n;
    if (del) *has_del = 1;
    return 0;
}

static int node_events(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                       int64_t at_t, uint64_t as_of, size_t *n, size_t *nseg, int *has_del,
                       size_t *bad_run, int ids_only) {
    size_t cnt = 0, runs_hit = 0;
    int rc = 0;
    *has_del = 0;
    *n = *nseg = 0;
    gsnap_store__note_read(db, (unsigned)dir);
    if (!rd->cur && (rc = mdb_cursor_open(rd->txn, db->data_dbi, &rd->cur)))
        return gsnap_store__mdb_err(db, rc, "opening data cursor");
    if (!rd->seg && !(rd->seg = malloc((rd->nruns + 1) * sizeof *rd->seg))) return GSNAP_ENOMEM;
    /* fence indexes, Bloom copies, the cache lines of every run at once (fence.c) */
    uint64_t bloom_h = 0;
    if ((rc = gsnap_fence__prefetch(db, rd, node, &bloom_h, (uint8_t)dir, as_of, bad_run))) return rc;
    gsnap_fence__prefetch_data(rd, node, bloom_h, (uint8_t)dir, as_of);
    /* with the view's run mask, bit j says whether the j-th chunked run holds
     * the node at all (exact when clear): no Bloom filter is asked */
    unsigned mbits = 0, mj = 0;
    int masked = gsnap_fence__mask_bits(rd, (uint8_t)dir, node, &mbits);
    /* the chunked runs first, in run order (the mask's bits count them so),
     * then the dense base: its body's line, asked for by the prefetch just
     * above, arrives while the deltas are read instead of stalling the
     * first read. Runs hold disjoint versions, so records of two runs never
     * tie in (nbr, t, version) and the merge's result does not depend on
     * the order of the segments. */
    for (size_t k = 0; k < 2 * rd->nruns; k++) {
        size_t i = k % rd->nruns;
        const gsnap_run *run = &rd->runs[i];
        if (!(run->info.flags & GSNAP_RUN_DENSE) != (k < rd->nruns)) continue;
        unsigned bit = run->info.flags & GSNAP_RUN_DENSE ? 0 : mj++;
        *bad_run = i;
        if (run->info.min_ver > as_of) continue;
        /* ids of a run that needs no filter: t and vop are not decoded */
        int fast = ids_only && gsnap_store__run_unfiltered(rd, run, at_t, as_of);
        size_t before = cnt;
        if (run->info.flags & GSNAP_RUN_DENSE) {
            gsnap_dense_ref *d = &rd->denses[i * 2 + (unsigned)dir];
            if (!d->loaded && (rc = gsnap_dense__load(db, rd->txn, run->id, (uint8_t)dir, d, -1))) return rc;
            if (fast && d->compact) {
                if ((rc = gsnap_store__dense_ids(db, rd, d, run->id, (uint8_t)dir, node, &cnt))) return rc;
                if (cnt > before) rd->seg[runs_hit++] = before;
                continue;
            }
            gsnap_dense_it it;
            gsnap_dense__it(d, node, &it);
            /* packed fields of up to 57 bits (a body whose times or ids span
             * more takes the iterator below) */
            if (d->packed && !ids_only && !it.bad && it.wn <= 57 && it.wt <= 57 && it.wv <= 57) {
                if ((rc = packed_take(rd, &it, at_t, as_of, &cnt, has_del))) return rc < 0 ? rc : 0;
                if (cnt > before) rd->seg[runs_hit++] = before;
                continue;
            }
            gsnap_rec r;
            int g;
            while ((g = gsnap_dense__it_next(&it, &r)) > 0)
                if ((rc = take(rd, &r, at_t, as_of, &cnt, before, has_del, ids_only))) return rc < 0 ? rc : 0;
            if (g < 0) return gsnap_dense__bad(db, run->id, (uint8_t)dir, node);
            if (cnt > before) rd->seg[runs_hit++] = before;
            continue;
        }
        if (masked) {
            if (!(mbits >> bit & 1)) continue;
        } else {
            gsnap_bloom_ref *bl = &rd->blooms[i * 2 + (unsigned)dir];
            if (!bl->loaded && (rc = gsnap_bloom__load(db, rd->txn, run->id, (uint8_t)dir, bl))) return rc;
            if (!gsnap_bloom__may_contain_h(bl, bloom_h)) continue;
        }
        gsnap_run_reader rr = {0};
        if ((rc = gsnap_fence__seek(db, rd, i, (uint8_t)dir, node, &rr, 2))) return rc;
        if (fast && (rc = gsnap_store__chunk_ids(db, rd, &rr, node, &cnt))) return rc;
        while (!fast && !rr.done) {
            gsnap_rec r;
            gsnap_run__reader_peek(&rr, &r);
            if (r.node != node) break;
            if ((rc = take(rd, &r, at_t, as_of, &cnt, before, has_del, ids_only))) return rc < 0 ? rc : 0;
            if (!ids_only && rr.compact && rr.cc.gleft > 0 && (rc = group_take(db, rd, &rr, at_t, as_of, &cnt, has_del)))
                return rc < 0 ? rc : 0;
            /* a chunk holds one group per node: one that ends before the
             * chunk does is all of the node in this run (the next group, some
             * other node's, is not decoded); at the chunk's end the node may
             * go on in the next chunk */
            if (rr.compact && rr.cc.gleft == 0 && rr.cc.p != rr.cc.end) break;
            if ((rc = gsnap_run__reader_next(db, &rr))) return rc;
        }
        if (cnt > before) rd->seg[runs_hit++] = before;
    }
    rd->seg[runs_hit] = cnt;
    *n = cnt;
    *nseg = runs_hit;
    return 0;
}

/* Replay events sorted by (nbr, t, version): fills out (may be NULL) with at
 * most cap live instances; returns the number of live instances. */
static size_t replay(const gsnap_rec *ev, size_t n, int has_del, gsnap_nbr *out, size_t cap) {
    if (!has_del) {
        for (size_t i = 0; i < n && i < cap; i++) {
            out[i].node = ev[i].nbr;
            out[i].t = ev[i].t;
            out[i].version = ev[i].vop >> 1;
        }
        return n;
    }
    size_t live = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && ev[j].nbr == ev[i].nbr) j++;
        /* Live instances of this neighbour: adds in order, each delete drops
         * the oldest one still live (FIFO). */
        size_t adds = 0, head = 0;
        for (size_t k = i; k < j; k++) {
            if (ev[k].vop & 1) {
                if (head < adds) head++;
            } else {
                adds++;
            }
        }
        /* Emit adds number head..adds-1 (0-based among this nbr's adds). */
        size_t a = 0;
        for (size_t k = i; k < j; k++) {
            if (ev[k].vop & 1) continue;
            if (a >= head) {
                if (out && live < cap) {
                    out[live].node = ev[k].nbr;
                    out[live].t = ev[k].t;
                    out[live].version = ev[k].vop >> 1;
                }
                live++;
            }
            a++;
        }
        i = j;
    }
    return live;
}

/* Shared front half of neighbors/degree/iter. */
static int answer(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                  uint64_t as_of, gsnap_nbr *buf, size_t cap, size_t *count) {
    size_t n, nseg = 0;
    int has_del, rc;
    if (as_of == GSNAP_VERSION_LATEST || as_of > rd->meta.version) as_of = rd->meta.version;
    if ((rc = gsnap_store__horizon_check(db, rd, at_t, as_of))) return rc;
    if ((rc = gather(db, rd, node, dir, at_t, as_of, &n, &nseg, &has_del))) return rc;
    if (!buf) cap = 0;
    if (!has_del && (nseg >= 2 || !cap)) { /* every record is an instance: the last merge writes the answer */
        *count = n;
        if (!cap) return 0; /* the count alone (gsnap_degree): nothing to merge */
        gsnap_seg s[2];
        if ((rc = merge_down(rd, n, nseg, s))) return rc;
        merge2_into(s[0], s[1], buf, cap);
        return 0;
    }
    if ((rc = merge_runs(rd, n, nseg))) return rc;
    *count = replay(rd->scratch, n, has_del, buf, cap);
    return 0;
}

int gsnap_neighbors(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                    uint64_t as_of, gsnap_nbr *buf, size_t cap, size_t *count) {
    if (!db || db->magic != GSNAP_DB_MAGIC || !count) return GSNAP_EINVAL;
    if (!buf && cap) return gsnap_store__err(db, GSNAP_EINVAL, "buf is NULL but cap is %zu", cap);
    int rc = gsnap_store__check_dir(db, dir), owned;
    if (rc) return rc;
    gsnap_read *view;
    if ((rc = gsnap_read__use(db, rd, &view, &owned))) return rc;
    rc = answer(db, view, node, dir, at_t, as_of, buf, cap, count);
    if (owned) gsnap_read_end(view);
    return rc;
}

int gsnap_degree(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                 uint64_t as_of, uint64_t *degree) {
    if (!db || db->magic != GSNAP_DB_MAGIC || !degree) return GSNAP_EINVAL;
    size_t n = 0;
    int rc = gsnap_neighbors(db, rd, node, dir, at_t, as_of, NULL, 0, &n);
    if (rc == 0) *degree = n;
    return rc;
}

struct gsnap_nbr_iter {
    gsnap_nbr *v;
    size_t n, pos;
};

int gsnap_nbr_iter_open(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                        uint64_t as_of, gsnap_nbr_iter **out) {
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    gsnap_nbr_iter *it = calloc(1, sizeof *it);
    if (!it) return GSNAP_ENOMEM;
    int rc;
    size_t cap = 64;
    for (;;) {
        gsnap_nbr *nv = realloc(it->v, cap * sizeof *nv);
        if (!nv) { rc = GSNAP_ENOMEM; break; }
        it->v = nv;
        rc = gsnap_neighbors(db, rd, node, dir, at_t, as_of, it->v, cap, &it->n);
        if (rc || it->n <= cap) break;
        cap = it->n;
    }
    if (rc) {
        gsnap_nbr_iter_close(it);
        return rc;
    }
    *out = it;
    return 0;
}

int gsnap_nbr_iter_next(gsnap_nbr_iter *it, gsnap_nbr *out) {
    if (!it || !out) return GSNAP_EINVAL;
    if (it->pos >= it->n) return GSNAP_NOTFOUND;
    *out = it->v[it->pos++];
    return 0;
}

void gsnap_nbr_iter_close(gsnap_nbr_iter *it) {
    if (!it) return;
    free(it->v);
    free(it);
}

/* ---- whole-graph scan ------------------------------------------------------ */

int gsnap_store__scan(gsnap_db *db, gsnap_read *rd, gsnap_dir dir, int64_t at_t, uint64_t as_of,
                      gsnap_adj_fn fn, void *ctx) {
    if (!db || !fn) return GSNAP_EINVAL;
    int rc = gsnap_store__check_dir(db, dir), owned;
    if (rc) return rc;
    gsnap_read *view;
    if ((rc = gsnap_read__use(db, rd, &view, &owned))) return rc;
    if (as_of == GSNAP_VERSION_LATEST || as_of > view->meta.version) as_of = view->meta.version;
    if ((rc = gsnap_store__horizon_check(db, view, at_t, as_of))) {
        if (owned) gsnap_read_end(view);
        return rc;
    }
    size_t nr = view->nruns, cnt = 0, cap = 0;
    gsnap_run_reader *rr = calloc(nr ? nr : 1, sizeof *rr);
    gsnap_rec *ev = NULL;
    gsnap_nbr *out = NULL;
    size_t out_cap = 0;
    if (!rr) { rc = GSNAP_ENOMEM; goto done; }
    for (size_t i = 0; i < nr && rc == 0; i++)
        rc = gsnap_run__reader_open(&rr[i], db, view->txn, &view->runs[i], (uint8_t)dir, 0, 1, 0);
    uint64_t cur_node = 0;
    int has_del = 0, have = 0;
    while (rc == 0) {
        size_t best = nr;
        gsnap_rec r, br;
        for (size_t i = 0; i < nr; i++) {
            if (rr[i].done) continue;
            gsnap_run__reader_peek(&rr[i], &r);
            if (best == nr || r.node < br.node ||
                (r.node == br.node && ev_less(&r, &br))) { best = i; br = r; }
        }
        if (best == nr || (have && br.node != cur_node)) {
            /* Flush the node gathered so far. */
            if (have && cnt > 0) {
                if (out_cap < cnt) {
                    gsnap_nbr *no = realloc(out, cnt * sizeof *no);
                    if (!no) { rc = GSNAP_ENOMEM; break; }
                    out = no;
                    out_cap = cnt;
                }
                size_t live = replay(ev, cnt, has_del, out, out_cap);
                if (live > 0 && (rc = fn(ctx, cur_node, out, live))) break;
            }
            cnt = 0;
            has_del = 0;
            have = 0;
            if (best == nr) break;
        }
        cur_node = br.node;
        have = 1;
        if (br.t <= at_t && (br.vop >> 1) <= as_of) {
            if (cnt == cap) {
                size_t nc = cap ? cap * 2 : 256;
                gsnap_rec *ne = realloc(ev, nc * sizeof *ne);
                if (!ne) { rc = GSNAP_ENOMEM; break; }
                ev = ne;
                cap = nc;
            }
            ev[cnt++] = br;
            has_del |= (int)(br.vop & 1);
        }
        rc = gsnap_run__reader_next(db, &rr[best]);
    }
done:
    if (rr)
        for (size_t i = 0; i < nr; i++) gsnap_run__reader_free(&rr[i]);
    free(rr);
    free(ev);
    free(out);
    if (owned) gsnap_read_end(view);
    return rc;
}

/* ---- touched nodes ---------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int gsnap_store__changed_nodes(gsnap_db *db, gsnap_read *rd, gsnap_dir dir, uint64_t after,
                               uint64_t upto, uint64_t **nodes, size_t *n) {
    if (!db || !nodes || !n) return GSNAP_EINVAL;
    *nodes = NULL;
    *n = 0;
    int rc = gsnap_store__check_dir(db, dir), owned;
    if (rc) return rc;
    gsnap_read *view;
    if ((rc = gsnap_read__use(db, rd, &view, &owned))) return rc;
    MDB_cursor *c = NULL;
    uint64_t *acc = NULL;
    size_t cnt = 0, cap = 0;
    unsigned char key[9];
    if (view->meta.horizon > 1 && after + 1 < view->meta.horizon && upto > after) {
        /* compact dropped the change log before the horizon */
        rc = gsnap_store__err(db, GSNAP_ERANGE, "version %llu is before the retention horizon %llu",
                              (unsigned long long)(after + 1), (unsigned long long)view->meta.horizon);
        goto out;
    }
    gsnap_put_be64(key, after + 1);
    key[8] = 0;
    MDB_val k = {9, key}, v;
    if ((rc = mdb_cursor_open(view->txn, db->changes_dbi, &c))) {
        rc = gsnap_store__mdb_err(db, rc, "opening change log");
        goto out;
    }
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 9 || v.mv_size % 8) { rc = gsnap_store__err(db, GSNAP_ECORRUPT, "malformed change log entry"); break; }
        uint64_t ver = gsnap_get_be64(k.mv_data);
        if (ver > upto) break;
        if (((const unsigned char *)k.mv_data)[8] != (unsigned char)dir) continue;
        size_t m = v.mv_size / 8;
        if (m == 0) continue; /* only a damaged log has an empty entry */
        if (cnt + m > cap) {
            size_t nc = (cnt + m) * 2;
            uint64_t *na = realloc(acc, nc * sizeof *na);
            if (!na) { rc = GSNAP_ENOMEM; break; }
            acc = na;
            cap = nc;
        }
        memcpy(acc + cnt, v.mv_data, m * 8);
        cnt += m;
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    else if (rc > 0) rc = gsnap_store__mdb_err(db, rc, "reading change log");
    if (rc == 0 && cnt > 1) {
        qsort(acc, cnt, sizeof *acc, u64_cmp);
        size_t u = 1;
        for (size_t i = 1; i < cnt; i++)
            if (acc[i] != acc[u - 1]) acc[u++] = acc[i];
        cnt = u;
    }
out:
    if (c) mdb_cursor_close(c);
    if (owned) gsnap_read_end(view);
    if (rc) { free(acc); return rc; }
    *nodes = acc;
    *n = cnt;
    return 0;
}

int gsnap_store__node_bound(gsnap_db *db, gsnap_read *rd, uint64_t *bound) {
    if (!db || !bound) return GSNAP_EINVAL;
    int owned, rc;
    gsnap_read *view;
    if ((rc = gsnap_read__use(db, rd, &view, &owned))) return rc;
    *bound = view->meta.node_bound;
    if (owned) gsnap_read_end(view);
    return 0;
}

size_t gsnap_store__distinct_ids(const gsnap_nbr *nb, size_t n, uint64_t *out) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != nb[i].node) out[m++] = nb[i].node;
    return m;
}
