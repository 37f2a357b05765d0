/*
 * store/events.c -- raw event access for the modules above the store (the
 * temporal sampler and the event stream): every add AND delete record of a
 * node, or of the whole graph, at a version, without the point-in-time replay
 * of query.c. The caller decides what a delete means for it.
 */
#include "store/store_int.h"
#include "common/msort.h"

#include <stdlib.h>
#include <string.h>

static void to_ev(const gsnap_rec *r, gsnap_store_ev *e) {
    e->nbr = r->nbr;
    e->t = r->t;
    e->version = r->vop >> 1;
    e->del = (uint32_t)(r->vop & 1);
    e->pad = 0;
}

static int ev_less(const gsnap_store_ev *a, const gsnap_store_ev *b) {
    if (a->nbr != b->nbr) return a->nbr < b->nbr;
    if (a->t != b->t) return a->t < b->t;
    return a->version < b->version;
}

/* Stable merge sort by (nbr, t, version): equal keys keep batch order. (common/msort.h) */
GSNAP_MERGE_SORT(sort_ev, gsnap_store_ev, ev_less)

/* Append r to the growable array when its version is in (after, as_of]. */
static int push(gsnap_store_ev **out, size_t *n, size_t *cap, const gsnap_rec *r, uint64_t after,
                uint64_t as_of) {
    uint64_t v = r->vop >> 1;
    if (v <= after || v > as_of) return 0;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        gsnap_store_ev *ne = realloc(*out, nc * sizeof *ne);
        if (!ne) return GSNAP_ENOMEM;
        *out = ne;
        *cap = nc;
    }
    to_ev(r, &(*out)[(*n)++]);
    return 0;
}

int gsnap_store__node_raw(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                          uint64_t after, uint64_t as_of, gsnap_store_ev **out, size_t *n,
                          size_t *cap) {
    if (!db || !rd || !out || !n || !cap) return GSNAP_EINVAL;
    int rc = gsnap_store__check_dir(db, dir);
    if (rc) return rc;
    if (as_of == GSNAP_VERSION_LATEST || as_of > rd->meta.version) as_of = rd->meta.version;
    /* versions before the retention horizon were folded (store/retain.c) */
    if ((rc = gsnap_store__horizon_check(db, rd, GSNAP_TIME_MAX, as_of))) return rc;
    *n = 0;
    if (!rd->cur && (rc = mdb_cursor_open(rd->txn, db->data_dbi, &rd->cur)))
        return gsnap_store__mdb_err(db, rc, "opening data cursor");
    int runs_hit = 0;
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        if (run->info.min_ver > as_of || run->info.max_ver <= after) continue;
        size_t before = *n;
        if (run->info.flags & GSNAP_RUN_DENSE) {
            gsnap_dense_ref *d = &rd->denses[i * 2 + (unsigned)dir];
            /* verified once per process, as the point queries' reads are */
            if (!d->loaded && (rc = gsnap_dense__load(db, rd->txn, run->id, (uint8_t)dir, d, -1))) return rc;
            gsnap_dense_it it;
            gsnap_dense__it(d, node, &it);
            gsnap_rec r;
            int g;
            while ((g = gsnap_dense__it_next(&it, &r)) > 0)
                if ((rc = push(out, n, cap, &r, after, as_of))) return rc;
            if (g < 0) return gsnap_dense__bad(db, run->id, (uint8_t)dir, node);
        } else {
            gsnap_bloom_ref *bl = &rd->blooms[i * 2 + (unsigned)dir];
            if (!bl->loaded && (rc = gsnap_bloom__load(db, rd->txn, run->id, (uint8_t)dir, bl))) return rc;
            if (!gsnap_bloom__may_contain(bl, node)) continue;
            gsnap_run_reader rr = {0};
            if ((rc = gsnap_run__seek(db, rd->cur, run->id, (uint8_t)dir, node, &rr, 2))) return rc;
            while (!rr.done) {
                gsnap_rec r;
                gsnap_run__reader_peek(&rr, &r);
                if (r.node != node) break;
                if ((rc = push(out, n, cap, &r, after, as_of))) return rc;
                if ((rc = gsnap_run__reader_next(db, &rr))) return rc;
            }
        }
        runs_hit += *n > before;
    }
    return runs_hit <= 1 ? 0 : sort_ev(*out, *n);
}

int gsnap_store__scan_raw(gsnap_db *db, gsnap_read *rd, gsnap_dir dir, uint64_t as_of,
                          gsnap_raw_fn fn, void *ctx) {
    if (!db || !rd || !fn) return GSNAP_EINVAL;
    int rc = gsnap_store__check_dir(db, dir);
    if (rc) return rc;
    if (as_of == GSNAP_VERSION_LATEST || as_of > rd->meta.version) as_of = rd->meta.version;
    if ((rc = gsnap_store__horizon_check(db, rd, GSNAP_TIME_MAX, as_of))) return rc;
    size_t nr = rd->nruns, cnt = 0, cap = 0;
    gsnap_run_reader *rr = calloc(nr ? nr : 1, sizeof *rr);
    gsnap_store_ev *ev = NULL;
    if (!rr) return GSNAP_ENOMEM;
    /* Runs hold disjoint version ranges and are in ascending id = ascending
     * version order, so for equal (node, nbr, t) the run of lower index has
     * the lower version: taking the lowest index on ties keeps the
     * (nbr, t, version, batch order) order. */
    for (size_t i = 0; i < nr && rc == 0; i++) {
        if (rd->runs[i].info.min_ver > as_of) { rr[i].done = 1; continue; }
        rc = gsnap_run__reader_open(&rr[i], db, rd->txn, &rd->runs[i], (uint8_t)dir, 0, 1, 0);
    }
    uint64_t cur_node = 0;
    int have = 0;
    while (rc == 0) {
        size_t best = nr;
        gsnap_rec r, br = {0, 0, 0, 0};
        for (size_t i = 0; i < nr; i++) {
            if (rr[i].done) continue;
            gsnap_run__reader_peek(&rr[i], &r);
            if (best == nr || r.node < br.node ||
                (r.node == br.node &&
                 (r.nbr < br.nbr || (r.nbr == br.nbr && (r.t < br.t || (r.t == br.t &&
                  (r.vop >> 1) < (br.vop >> 1))))))) {
                best = i;
                br = r;
            }
        }
        if (best == nr || (have && br.node != cur_node)) {
            if (have && cnt > 0 && (rc = fn(ctx, cur_node, ev, cnt))) break;
            cnt = 0;
            have = 0;
            if (best == nr) break;
        }
        cur_node = br.node;
        have = 1;
        if ((br.vop >> 1) <= as_of) {
            if (cnt == cap) {
                size_t nc = cap ? cap * 2 : 256;
                gsnap_store_ev *ne = realloc(ev, nc * sizeof *ne);
                if (!ne) { rc = GSNAP_ENOMEM; break; }
                ev = ne;
                cap = nc;
            }
            to_ev(&br, &ev[cnt++]);
        }
        rc = gsnap_run__reader_next(db, &rr[best]);
    }
    for (size_t i = 0; i < nr; i++) gsnap_run__reader_free(&rr[i]);
    free(rr);
    free(ev);
    return rc;
}
