/*
 * snapshot/adv_thr.c -- which stored lists a candidate can enter at all.
 *
 * A stored D_h(v) that is capped and full (c members) takes a candidate
 * only when its score is below the list's largest, smax. smax is bounded
 * from the record's KMV size estimate est = round((c-1) 2^64 / (smax+1))
 * (sampled.c), with a margin, so the bound costs the record header only.
 *
 * The pair filter: when no node lost a walk (B_h empty: every join of the
 * hop is incremental) and a hop's changed inputs have many out-neighbours,
 * the bounds of every stored list of hop h are read in one cursor pass in
 * key order into an array indexed by node, and a pair (v, changed input u)
 * is not made when every member u added is above v's bound: such an input
 * can neither enter v's list nor change its flag (v is capped already).
 * What is dropped is what the per-node pruning would have skipped after
 * sorting the pair and looking the record up.
 */
#include "snapshot/adv_int.h"

uint64_t gsnap_adv__enter_bound(const struct gsnap_rec_hdr *hd, uint32_t c) {
    if (!(hd->flags & GSNAP_REC_CAPPED) || c < 2 || hd->slab_len != GSNAP_SLAB_LIST_HDR + 8u * c) return UINT64_MAX;
    if (hd->n_exact <= (uint64_t)c + 1 || hd->n_exact >= (uint64_t)1e19) return UINT64_MAX;
    double ub = (double)(c - 1) * 18446744073709551616.0 / ((double)hd->n_exact - 0.5) * (1.0 + 1e-9);
    if (!(ub < 1.8e19)) return UINT64_MAX;
    return (uint64_t)ub;
}

/* The bounds of hop h's stored lists by node, UINT64_MAX where none (no
 * list, not full, or not safe); *thr = NULL when the node ids are too
 * sparse for an array or the array cannot be allocated: the filter only
 * saves work, so the advance goes on without it rather than failing. */
int gsnap_adv__thr_load(adv *a, unsigned h, uint64_t **thr, uint64_t *nthr) {
    uint64_t bound = 0;
    unsigned char kb[12];
    MDB_cursor *cur = NULL;
    int rc;
    *thr = NULL;
    *nthr = 0;
    if (gsnap_store__node_bound(a->db, a->rd, &bound) || bound > 16 * a->cat.nodes + (1u << 20)) return 0;
    uint64_t *t = malloc((bound ? bound : 1) * sizeof *t);
    if (!t) return 0;
    memset(t, 0xff, (bound ? bound : 1) * sizeof *t);
    if ((rc = mdb_cursor_open(a->rt, a->dbi, &cur))) {
        free(t);
        return gsnap_store__mdb_err(a->db, rc, "snapshot advance: table cursor");
    }
    gsnap_snap__key(kb, h, 0);
    MDB_val k = {12, kb}, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        if (k.mv_size != 12 || ((unsigned)kp[0] << 24 | (unsigned)kp[1] << 16 | (unsigned)kp[2] << 8 | kp[3]) != h) break;
        uint64_t node = 0;
        for (int i = 4; i < 12; i++) node = node << 8 | kp[i];
        struct gsnap_rec_hdr hd;
        if ((rc = gsnap_snap__rec_decode(v.mv_data, v.mv_size, &hd))) { /* verifies the checksum */
            rc = gsnap_store__err(a->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt", a->name, h,
                                  (unsigned long long)node);
            break;
        }
        if (node < bound) t[node] = gsnap_adv__enter_bound(&hd, a->cat.caps[h - 1]);
    }
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND) {
        free(t);
        return rc > 0 ? gsnap_store__mdb_err(a->db, rc, "snapshot advance: table walk") : rc;
    }
    *thr = t;
    *nthr = bound;
    return 0;
}
