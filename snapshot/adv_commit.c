/*
 * snapshot/adv_commit.c -- the one LMDB write txn of `snapshot advance`:
 * the catalog is still the one the advance started from; keys and cached
 * lists of the nodes whose 1-hop neighbours changed (redrawn with the
 * build's rule); slab pointers, sizes and flags of the changed lists; the
 * free list (consumed blocks out, this commit's freed blocks in, under its
 * txn id); live bytes per block; the catalog ((T, V), snap_version + 1,
 * counters). A crash before the commit leaves the previous version.
 */
#include "snapshot/adv_int.h"
#include <math.h>

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

static void free_key(unsigned char kb[12], uint64_t txnid) {
    gsnap_snap__key(kb, 0, txnid);
    kb[0] = kb[1] = kb[2] = kb[3] = 0xff;
}

/* 0. the version this advance started from is still the current one (the
 * claim keeps other advances out; this also catches a drop and a new create
 * of the name by a build without the claim) */
static int same_catalog(adv *a, MDB_txn *txn) {
    struct gsnap_cat now;
    int rc = gsnap_snap__cat_get(a->db, txn, a->name, &now);
    if (rc || memcmp(&now, &a->cat, sizeof now) != 0)
        return gsnap_store__err(a->db, rc && rc != GSNAP_NOTFOUND ? rc : GSNAP_EBUSY, "snapshot %s changed during the "
                                "advance (dropped, created or advanced by another process); nothing was committed",
                                a->name);
    return 0;
}

/* 1. one node whose 1-hop neighbours changed: its keys and cached lists */
static int commit_c1_node(adv *a, MDB_txn *txn, struct gsnap_cat *c, uint64_t v, vec *cache, vec *sel) {
    uint32_t ni = map_get(&a->nin_idx, v);
    const uint64_t *xs = a->nin_ids.v + a->nin_off.v[ni];
    size_t n = a->nin_off.v[ni + 1];
    int had = 0, rc, ex;
    struct gsnap_rec_hdr hd;
    for (unsigned h = 1; h <= c->hops; h++) {
        if ((rc = get_rec(a, txn, h, v, &hd, cache, &ex))) return rc;
        had |= ex;
        if (!n) {
            unsigned char kb[12];
            gsnap_snap__key(kb, h, v);
            MDB_val k = {12, kb};
            if (ex && (rc = mdb_del(txn, a->dbi, &k, NULL))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: del");
            continue;
        }
        if (!ex) { memset(&hd, 0, sizeof hd); hd.format = GSNAP_SNAP_FORMAT; }
        size_t m = (size_t)ceil(c->alpha * c->fanouts[h - 1]);
        if (m > n) m = n;
        sel->n = 0;
        for (size_t j = 0; j < (m ? m : 1); j++)
            if ((rc = vpush(sel, 0))) return rc;
        uint64_t key = gsnap_snap__sample_key(c->seed, h, v, 0, GSNAP_PURPOSE_CACHE);
        if ((rc = gsnap_snap__select(xs, n, m, key, sel->v, &a->scratch, &a->scratch_cap))) return rc;
        hd.gen = 0;
        hd.version = a->V;
        hd.ncache = (uint32_t)m;
        hd.degree = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        if ((rc = put_rec(a, txn, h, v, &hd, sel->v))) return rc;
    }
    if (!had && n) c->nodes++;
    if (had && !n) c->nodes--;
    return 0;
}

/* 2a. changed entries of hop h: counters; records of lists that went away
 * or whose list stayed in place (size, flag changed) */
static int commit_entries(adv *a, MDB_txn *txn, struct gsnap_cat *c, unsigned h, vec *cache) {
    hopset *H = &a->hs[h];
    struct gsnap_rec_hdr hd;
    int rc, ex;
    for (size_t i = 0; i < H->n; i++) {
        entry *e = &H->e[i];
        if (!e->changed) continue;
        c->stored_ids[h - 1] += (uint64_t)e->n - e->old_n;
        c->exact_ids[h - 1] += e->est - e->old_est;
        c->capped[h - 1] += (uint64_t)e->capped - e->old_capped;
        if (e->n && e->moved) continue; /* pointer set with the moved lists */
        if ((rc = get_rec(a, txn, h, e->node, &hd, cache, &ex))) return rc;
        if (!ex) continue;
        if (!e->n) {
            hd.slab_hop = hd.slab_len = 0;
            hd.slab_off = hd.slab_xxh = 0;
        }
        hd.n_exact = e->n ? e->est : 0;
        hd.flags = e->n && e->capped ? GSNAP_REC_CAPPED : 0;
        hd.version = a->V;
        if ((rc = put_rec(a, txn, h, e->node, &hd, cache->v))) return rc;
    }
    return 0;
}

/* 2b. slab pointers of the lists written to new places */
static int commit_moved(adv *a, MDB_txn *txn, unsigned h, vec *cache) {
    struct hop_plan *pl = &a->plan[h];
    hopset *H = &a->hs[h];
    struct gsnap_rec_hdr hd;
    int rc, ex;
    for (size_t i = 0; i < pl->nnp; i++) {
        struct nptr *np = &pl->np[i];
        if ((rc = get_rec(a, txn, h, np->node, &hd, cache, &ex))) return rc;
        if (!ex)
            return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s: list of node %llu (hop %u) without a key",
                                    a->name, (unsigned long long)np->node, h);
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
        if ((rc = put_rec(a, txn, h, np->node, &hd, cache->v))) return rc;
    }
    return 0;
}

/* 3. free list: consumed blocks out, this commit's freed blocks in */
static int commit_free(adv *a, MDB_txn *txn, const struct gsnap_cat *c, vec *sel) {
    unsigned char kb[12];
    int rc = 0;
    for (size_t i = 0; i < a->nfl; i++) {
        struct fl *f = &a->fl[i];
        if (!f->used) continue;
        free_key(kb, f->txnid);
        MDB_val k = {12, kb};
        sel->n = 0;
        for (size_t j = 0; j < f->n; j++)
            if (!(f->blk[j] & (1ull << 47)) && (rc = vpush(sel, f->blk[j]))) return rc;
        MDB_val d = {sel->n * 8, sel->v};
        rc = sel->n ? mdb_put(txn, a->dbi, &k, &d, 0) : mdb_del(txn, a->dbi, &k, NULL);
        if (rc) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list");
    }
    sel->n = 0;
    for (unsigned h = 1; h <= c->hops; h++)
        for (size_t j = 0; j < a->plan[h].nfreed; j++)
            if ((rc = vpush(sel, (uint64_t)h << 48 | a->plan[h].freed[j]))) return rc;
    if (!sel->n) return 0;
    free_key(kb, (uint64_t)mdb_txn_id(txn));
    MDB_val k = {12, kb}, d = {sel->n * 8, sel->v};
    if ((rc = mdb_put(txn, a->dbi, &k, &d, 0))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list");
    return 0;
}

/* 4. live bytes per block; 5. the catalog */
static int commit_catalog(adv *a, MDB_txn *txn, struct gsnap_cat *c) {
    int rc;
    for (unsigned h = 1; h <= c->hops; h++) {
        if (!a->live[h]) continue;
        unsigned char kb[12];
        gsnap_snap__key(kb, GSNAP_LIVE_HOP, h);
        MDB_val k = {12, kb}, d = {c->blocks[h - 1] * sizeof(uint32_t), a->live[h]};
        if ((rc = mdb_put(txn, a->dbi, &k, &d, 0))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: live bytes");
    }
    c->slab_bytes = 0;
    for (unsigned h = 1; h <= c->hops; h++) c->slab_bytes += c->blocks[h - 1] * GSNAP_SLAB_BLOCK;
    c->at_t = a->T;
    c->at_version = a->V;
    c->snap_version++;
    gsnap_snap__cat_seal(c);
    if ((rc = gsnap_snap__cat_put(a->db, txn, a->name, c))) return rc;
    a->rep.snap_version = c->snap_version;
    return 0;
}

int gsnap_adv__commit_txn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    adv *a = vctx;
    struct gsnap_cat c = a->cat;
    vec cache = {0}, sel = {0};
    int rc;
    (void)db;
    if ((rc = same_catalog(a, txn))) return rc;
    for (size_t i = 0; i < a->c1_list.n && !rc; i++) rc = commit_c1_node(a, txn, &c, a->c1_list.v[i], &cache, &sel);
    a->rep.caches_redrawn = a->c1_list.n;
    for (unsigned h = 1; h <= c.hops && !rc; h++) {
        if ((rc = commit_entries(a, txn, &c, h, &cache)) || (rc = commit_moved(a, txn, h, &cache))) break;
        c.blocks[h - 1] = a->plan[h].new_blocks;
        c.free_blocks[h - 1] += a->plan[h].nfreed;
        c.free_blocks[h - 1] -= a->plan[h].reused;
    }
    if (!rc) rc = commit_free(a, txn, &c, &sel);
    if (!rc) rc = commit_catalog(a, txn, &c);
    free(cache.v);
    free(sel.v);
    return rc;
}
