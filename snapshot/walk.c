/*
 * snapshot/walk.c -- one cursor pass over a hop's entries of the (hop, node)
 * table, in key (= node) order: what a sampler open loads. Each record is
 * verified (format, length, checksum) before the callback sees it; a damaged
 * one stops the walk with its node named.
 */
#include "snapshot/snapshot_int.h"
#include <string.h>

int gsnap_snapshot__walk(const struct gsnap_snapshot *snap, MDB_txn *txn, unsigned hop,
                         gsnap_snapshot__walk_fn fn, void *ctx) {
    MDB_cursor *cur = NULL;
    unsigned char kb[12];
    int rc = mdb_cursor_open(txn, snap->dbi, &cur);
    if (rc) return gsnap_store__mdb_err(snap->db, rc, "snapshot table walk");
    gsnap_snap__key(kb, hop, 0);
    MDB_val k = {12, kb}, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        if (k.mv_size != 12) break;
        unsigned kh = (unsigned)kp[0] << 24 | (unsigned)kp[1] << 16 | (unsigned)kp[2] << 8 | kp[3];
        if (kh != hop) break;
        gsnap_snapshot__entry e;
        struct gsnap_rec_hdr h;
        e.node = 0;
        for (int i = 4; i < 12; i++) e.node = e.node << 8 | kp[i];
        int drc = gsnap_snap__rec_decode(v.mv_data, v.mv_size, &h); /* verifies the checksum */
        if (drc) {
            rc = gsnap_store__err(snap->db, drc, "snapshot %s: damaged record (hop %u, node %llu): %s", snap->name,
                                  hop, (unsigned long long)e.node, gsnap_strerror(drc));
            break;
        }
        e.gen = h.gen;
        e.version = h.version;
        e.n = h.ncache;
        e.degree = h.degree;
        e.ids = (const unsigned char *)v.mv_data + GSNAP_REC_HDR;
        if ((rc = fn(ctx, &e))) break;
    }
    mdb_cursor_close(cur);
    if (rc == MDB_NOTFOUND) return 0;
    return rc > 0 ? gsnap_store__mdb_err(snap->db, rc, "snapshot table walk") : rc;
}
