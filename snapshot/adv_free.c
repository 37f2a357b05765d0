/*
 * snapshot/adv_free.c -- the block bookkeeping of `snapshot advance`: the
 * free list (table keys (0xffffffff, txn id) -> hop << 48 | block words,
 * blocks freed by the commit with that LMDB txn id), the live list bytes per
 * block of a hop (key (0xfffffffe, hop)), and the oldest live LMDB reader
 * (a freed block is reused only when every reader is at least as new as the
 * commit that freed it).
 */
#include "snapshot/adv_int.h"

/* Smallest txn id among live LMDB readers (UINT64_MAX when none). */
uint64_t gsnap_adv__oldest_reader(gsnap_db *db) { return gsnap_store__oldest_reader(db); }

int gsnap_adv__load_free(adv *a) {
    MDB_cursor *cur = NULL;
    unsigned char kb[12];
    gsnap_snap__key(kb, 0, 0);
    kb[0] = kb[1] = kb[2] = kb[3] = 0xff;
    MDB_val k = {12, kb}, v;
    int rc = mdb_cursor_open(a->rt, a->dbi, &cur);
    if (rc) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list");
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *p = k.mv_data;
        if (k.mv_size != 12 || p[0] != 0xff || p[1] != 0xff || p[2] != 0xff || p[3] != 0xff) break;
        if (v.mv_size % 8) { rc = GSNAP_ECORRUPT; break; }
        struct fl *n = realloc(a->fl, (a->nfl + 1) * sizeof *n);
        if (!n) { rc = GSNAP_ENOMEM; break; }
        a->fl = n;
        struct fl *f = &a->fl[a->nfl];
        memset(f, 0, sizeof *f);
        for (int i = 4; i < 12; i++) f->txnid = f->txnid << 8 | p[i];
        f->n = v.mv_size / 8;
        if (!(f->blk = malloc(v.mv_size ? v.mv_size : 1))) { rc = GSNAP_ENOMEM; break; }
        memcpy(f->blk, v.mv_data, v.mv_size);
        a->nfl++;
    }
    mdb_cursor_close(cur);
    if (rc == MDB_NOTFOUND) rc = 0;
    if (rc == GSNAP_ECORRUPT) return gsnap_store__err(a->db, rc, "snapshot %s: free list record is corrupt", a->name);
    return rc > 0 ? gsnap_store__mdb_err(a->db, rc, "snapshot advance: free list") : rc;
}


/* Live list bytes per block of hop h (table key (GSNAP_LIVE_HOP, h)):
 * written by the build and by every advance. */
int gsnap_adv__load_live(adv *a, unsigned h) {
    unsigned char kb[12];
    gsnap_snap__key(kb, GSNAP_LIVE_HOP, h);
    MDB_val k = {12, kb}, v;
    uint64_t nb = a->cat.blocks[h - 1];
    if (!(a->live[h] = calloc(nb ? nb : 1, sizeof(uint32_t)))) return GSNAP_ENOMEM;
    a->live_cap[h] = nb;
    int rc = mdb_get(a->rt, a->dbi, &k, &v);
    if (rc == 0 && v.mv_size == nb * sizeof(uint32_t)) {
        memcpy(a->live[h], v.mv_data, v.mv_size);
        return 0;
    }
    if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(a->db, rc, "snapshot advance: live bytes");
    /* absent or stale: count from the table */
    MDB_cursor *cur;
    if ((rc = mdb_cursor_open(a->rt, a->dbi, &cur))) return gsnap_store__mdb_err(a->db, rc, "snapshot advance");
    gsnap_snap__key(kb, h, 0);
    k.mv_size = 12; k.mv_data = kb;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        unsigned kh = (unsigned)kp[0] << 24 | (unsigned)kp[1] << 16 | (unsigned)kp[2] << 8 | kp[3];
        struct gsnap_rec_hdr hd;
        if (kh != h) break;
        if (gsnap_snap__rec_decode(v.mv_data, v.mv_size, &hd) == 0 && hd.slab_len && hd.slab_off / GSNAP_SLAB_BLOCK < nb)
            a->live[h][hd.slab_off / GSNAP_SLAB_BLOCK] += hd.slab_len;
    }
    mdb_cursor_close(cur);
    return 0;
}

int gsnap_adv__live_grow(adv *a, unsigned h, uint64_t b) {
    if (b < a->live_cap[h]) return 0;
    uint64_t nc = a->live_cap[h] * 2 + 64;
    while (nc <= b) nc *= 2;
    uint32_t *p = realloc(a->live[h], nc * sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    memset(p + a->live_cap[h], 0, (nc - a->live_cap[h]) * sizeof *p);
    a->live[h] = p;
    a->live_cap[h] = nc;
    return 0;
}
