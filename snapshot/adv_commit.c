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

/* 1. counters of the changed entries of hop h (the records: adv_commit_hop.c) */
static void count_entries(adv *a, struct gsnap_cat *c, unsigned h) {
    const hopset *H = &a->hs[h];
    for (size_t i = 0; i < H->n; i++) {
        const entry *e = &H->e[i];
        if (!e->changed) continue;
        c->stored_ids[h - 1] += (uint64_t)e->n - e->old_n;
        c->exact_ids[h - 1] += e->est - e->old_est;
        c->capped[h - 1] += (uint64_t)e->capped - e->old_capped;
    }
}

/* The three sources of commit_hop are in ascending node order (C_1 from the
 * store, entries in join order, lists in write order); checked, not assumed. */
static int sources_sorted(adv *a, unsigned h) {
    const hopset *H = &a->hs[h];
    const struct hop_plan *pl = &a->plan[h];
    int ok = 1;
    for (size_t i = 1; i < a->c1_list.n && ok; i++) ok = a->c1_list.v[i - 1] < a->c1_list.v[i];
    for (size_t i = 1; i < H->n && ok; i++) ok = H->e[i - 1].node < H->e[i].node;
    for (size_t i = 1; i < pl->nnp && ok; i++) ok = pl->np[i - 1].node < pl->np[i].node;
    return ok ? 0 : gsnap_store__err(a->db, GSNAP_EINVAL, "snapshot advance: hop %u: commit sources out of node "
                                     "order (internal error); nothing was committed", h);
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
    vec sel = {0};
    int rc = 0;
    (void)db;
    if ((rc = same_catalog(a, txn))) return rc;
    uint8_t *had = calloc(a->c1_list.n ? a->c1_list.n : 1, 1);
    if (!had) return GSNAP_ENOMEM;
    a->rep.caches_redrawn = a->c1_list.n;
    for (unsigned h = 1; h <= c.hops && !rc; h++) {
        if ((rc = sources_sorted(a, h)) || (rc = gsnap_adv__commit_hop(a, txn, &c, h, had))) break;
        count_entries(a, &c, h);
        c.blocks[h - 1] = a->plan[h].new_blocks;
        c.free_blocks[h - 1] += a->plan[h].nfreed;
        c.free_blocks[h - 1] -= a->plan[h].reused;
    }
    for (size_t i = 0; i < a->c1_list.n && !rc; i++) { /* nodes with keys */
        const uint64_t *xs;
        size_t n;
        if ((rc = gsnap_adv__nin(a, a->c1_list.v[i], &xs, &n))) break;
        if (!had[i] && n) c.nodes++;
        if (had[i] && !n) c.nodes--;
    }
    free(had);
    if (!rc) rc = commit_free(a, txn, &c, &sel);
    if (!rc) rc = commit_catalog(a, txn, &c);
    gsnap_adv__vfree(&sel);
    return rc;
}
