/*
 * snapshot/adv_commit_hop.c -- the records of one hop in the commit of
 * `snapshot advance`, in node order: three sources sorted by node (C_1, the
 * hop's recomputed entries, the lists written to new places) merged, each
 * node's record found once with one write cursor (ascending keys: LMDB
 * stays on the leaf page it is on) and put once, with every change the
 * three sources make to it applied in memory in the order the old commit
 * applied them: cached list of C_1, then size and flag, then slab pointer.
 */
#include "snapshot/adv_int.h"
#include <math.h>

typedef struct {
    adv *a;
    MDB_txn *txn;
    MDB_cursor *cur;
    unsigned h;
    struct gsnap_cat *c;
    struct gsnap_rec_hdr hd;
    int ex;                  /* the record exists (as changed so far) */
    vec cache, sel;
    unsigned char *buf;
    size_t bcap;
} hopc;

static int load(hopc *S, uint64_t v) {
    MDB_val val;
    int rc = gsnap_adv__find(S->a, S->cur, S->h, v, &val, &S->ex);
    if (rc || !S->ex) return rc;
    if ((rc = gsnap_snap__rec_decode(val.mv_data, val.mv_size, &S->hd))) /* decode verifies the checksum */
        return gsnap_store__err(S->a->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt", S->a->name,
                                S->h, (unsigned long long)v);
    S->cache.n = 0;
    for (uint32_t i = 0; i < S->hd.ncache; i++)
        if ((rc = vpush(&S->cache, gsnap_get_le64((const unsigned char *)val.mv_data + GSNAP_REC_HDR + 8 * i))))
            return rc;
    return 0;
}

/* put the record; the cursor is on its key when it existed before (found) */
static int store(hopc *S, uint64_t v, int found) {
    size_t len = GSNAP_REC_HDR + (size_t)S->hd.ncache * 8;
    if (len > S->bcap) {
        unsigned char *p = realloc(S->buf, len);
        if (!p) return GSNAP_ENOMEM;
        S->buf = p;
        S->bcap = len;
    }
    unsigned char kb[12];
    gsnap_snap__key(kb, S->h, v);
    gsnap_snap__rec_encode(S->buf, &S->hd, S->cache.v);
    MDB_val k = {12, kb}, d = {len, S->buf};
    int rc = mdb_cursor_put(S->cur, &k, &d, found ? MDB_CURRENT : 0);
    return rc ? gsnap_store__mdb_err(S->a->db, rc, "snapshot advance: put") : 0;
}

/* C_1 node v (index ci): its key goes (no neighbours) or its cached list is
 * redrawn (from the stored draw and the new in-neighbours when it can be:
 * adv_tail.c) */
static int c1_part(hopc *S, uint64_t v, size_t ci, uint8_t *had) {
    adv *a = S->a;
    uint32_t ni = map_get(&a->nin_idx, v);
    const uint64_t *xs = a->nin_ids.v + a->nin_off.v[ni];
    size_t n = a->nin_off.v[ni + 1];
    int rc;
    *had |= (uint8_t)S->ex;
    if (!n) {
        if (S->ex && (rc = mdb_cursor_del(S->cur, 0))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: del");
        S->ex = 0;
        return 0;
    }
    size_t m_full = (size_t)ceil(S->c->alpha * S->c->fanouts[S->h - 1]), m = m_full < n ? m_full : n;
    uint64_t key = gsnap_snap__sample_key(S->c->seed, S->h, v, 0, GSNAP_PURPOSE_CACHE);
    int done = 0;
    if (S->ex && (rc = gsnap_adv__cache_incr(a, ci, n, m_full, key, S->hd.gen, S->cache.v, S->cache.n,
                                             S->hd.degree, &S->sel, &done)))
        return rc;
    if (!S->ex) { memset(&S->hd, 0, sizeof S->hd); S->hd.format = GSNAP_SNAP_FORMAT; }
    if (!done) {
        S->sel.n = 0;
        for (size_t j = 0; j < (m ? m : 1); j++)
            if ((rc = vpush(&S->sel, 0))) return rc;
        if ((rc = gsnap_snap__select(xs, n, m, key, S->sel.v, &a->scratch, &a->scratch_cap))) return rc;
        S->sel.n = m;
    }
    S->hd.gen = 0;
    S->hd.version = a->V;
    S->hd.ncache = (uint32_t)m;
    S->hd.degree = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    vec t = S->cache; S->cache = S->sel; S->sel = t;
    S->ex = 1;
    return 0;
}

/* a changed entry whose list did not move (or went away): size, flag */
static void entry_part(hopc *S, const entry *e) {
    if (!e->n) {
        S->hd.slab_hop = S->hd.slab_len = 0;
        S->hd.slab_off = S->hd.slab_xxh = 0;
    }
    S->hd.n_exact = e->n ? e->est : 0;
    S->hd.flags = e->n && e->capped ? GSNAP_REC_CAPPED : 0;
    S->hd.version = S->a->V;
}

/* a list written to a new place: its pointer (and size, flag if changed) */
static int moved_part(hopc *S, const struct nptr *np, const entry *e) {
    if (!S->ex)
        return gsnap_store__err(S->a->db, GSNAP_ECORRUPT, "snapshot %s: list of node %llu (hop %u) without a key",
                                S->a->name, (unsigned long long)np->node, S->h);
    S->hd.slab_hop = S->h;
    S->hd.slab_len = np->len;
    S->hd.slab_off = np->off;
    S->hd.slab_xxh = np->xxh;
    if (e && e->changed) {
        S->hd.n_exact = e->est;
        S->hd.flags = e->capped ? GSNAP_REC_CAPPED : 0;
        S->hd.version = S->a->V;
    }
    return 0;
}

/* node v: c1 (index into C_1, or SIZE_MAX), e (its entry or NULL), np (its
 * new pointer or NULL) */
static int one_node(hopc *S, uint64_t v, size_t c1, uint8_t *had, const entry *e, const struct nptr *np) {
    int rc, dirty = 0;
    if (e && !e->changed) e = NULL;
    if (c1 == SIZE_MAX && !np && (!e || (e->n && e->moved))) return 0; /* nothing to write */
    if ((rc = load(S, v))) return rc;
    int found = S->ex;
    if (c1 != SIZE_MAX) {
        if ((rc = c1_part(S, v, c1, &had[c1]))) return rc;
        if (!S->ex && found) found = 0; /* deleted */
        dirty = S->ex;
    }
    if (e && !(e->n && e->moved) && S->ex) { entry_part(S, e); dirty = 1; }
    if (np) {
        if ((rc = moved_part(S, np, e))) return rc;
        dirty = 1;
    }
    return dirty ? store(S, v, found) : 0;
}

/* All records of hop h. had[i]: C_1 node i had a key at some hop. */
int gsnap_adv__commit_hop(adv *a, MDB_txn *txn, struct gsnap_cat *c, unsigned h, uint8_t *had) {
    hopc S;
    memset(&S, 0, sizeof S);
    S.a = a; S.txn = txn; S.h = h; S.c = c;
    int rc = mdb_cursor_open(txn, a->dbi, &S.cur);
    if (rc) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: commit cursor");
    const vec *C = &a->c1_list;
    const hopset *H = &a->hs[h];
    const struct hop_plan *pl = &a->plan[h];
    size_t i = 0, j = 0, k = 0;
    while (!rc && (i < C->n || j < H->n || k < pl->nnp)) {
        uint64_t v = UINT64_MAX;
        if (i < C->n && C->v[i] < v) v = C->v[i];
        if (j < H->n && H->e[j].node < v) v = H->e[j].node;
        if (k < pl->nnp && pl->np[k].node < v) v = pl->np[k].node;
        size_t ci = i < C->n && C->v[i] == v ? i++ : SIZE_MAX;
        const entry *e = j < H->n && H->e[j].node == v ? &H->e[j++] : NULL;
        const struct nptr *np = k < pl->nnp && pl->np[k].node == v ? &pl->np[k++] : NULL;
        rc = one_node(&S, v, ci, had, e, np);
    }
    mdb_cursor_close(S.cur);
    gsnap_adv__vfree(&S.cache);
    gsnap_adv__vfree(&S.sel);
    free(S.buf);
    return rc;
}
