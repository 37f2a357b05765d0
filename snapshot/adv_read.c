/*
 * snapshot/adv_read.c -- what `snapshot advance` reads: N(v) at the new
 * (T, V) in either direction (cached per node), the stored records and slab
 * lists of the old version (records by one cursor per hop in key order;
 * slab files mapped read-only, each block verified before its first use;
 * each decoded list kept as scores ascending), and the recomputed
 * entries of a hop (the old list beside the new one: changed, added members).
 */
#include "snapshot/adv_int.h"
#include <unistd.h>

/* N(v) at (T, V), distinct ascending (self loop kept), from the store's
 * distinct-neighbour query in the advance's read view (a short view of its
 * own when none is open), appended to out. */
static int nbrs_into(adv *a, uint64_t v, gsnap_dir dir, int64_t T, uint64_t V, vec *out) {
    gsnap_read *rd = a->rd;
    const uint64_t *ids;
    size_t n = 0;
    int rc;
    if (!rd && (rc = gsnap_read_begin(a->db, &rd))) return rc;
    rc = gsnap_store__distinct_nbrs(a->db, rd, v, dir, T, V, &ids, &n);
    if (!rc) rc = gsnap_adv__vappend(out, ids, n);
    if (rd != a->rd) gsnap_read_end(rd);
    return rc;
}

/* The same into out (emptied first). */
int gsnap_adv__nbrs_at(adv *a, uint64_t v, gsnap_dir dir, int64_t T, uint64_t V, vec *out) {
    out->n = 0;
    return nbrs_into(a, v, dir, T, V, out);
}

/* N(v) in direction dir at the new (T, V), cached in (idx, off, ids):
 * *ids valid until the next call with the same cache. */
static int nbrs_cached(adv *a, uint64_t v, gsnap_dir dir, u64map *idx, vec *off, vec *ids_v, const uint64_t **ids,
                       size_t *n) {
    uint32_t i = map_get(idx, v);
    if (i == UINT32_MAX) {
        size_t at = ids_v->n;
        int rc = nbrs_into(a, v, dir, a->T, a->V, ids_v);
        i = (uint32_t)(off->n);
        if (rc || (rc = vpush(off, at)) || (rc = vpush(off, ids_v->n - at)) || (rc = map_put(idx, v, i))) return rc;
    }
    *ids = ids_v->v + off->v[i];
    *n = off->v[i + 1];
    return 0;
}

/* N_in(v) (snapshot direction), cached. */
int gsnap_adv__nin(adv *a, uint64_t v, const uint64_t **ids, size_t *n) {
    return nbrs_cached(a, v, a->p.dir, &a->nin_idx, &a->nin_off, &a->nin_ids, ids, n);
}

/* Put N_in(v) = ids[0..n) (ascending, distinct) into the cache. */
int gsnap_adv__nin_put(adv *a, uint64_t v, const uint64_t *ids, size_t n) {
    size_t at = a->nin_ids.n;
    uint32_t i = (uint32_t)a->nin_off.n;
    int rc;
    if ((rc = gsnap_adv__vappend(&a->nin_ids, ids, n)) || (rc = vpush(&a->nin_off, at)) || (rc = vpush(&a->nin_off, n)))
        return rc;
    return map_put(&a->nin_idx, v, i);
}

/* N_out(v) (against the snapshot direction: the nodes v is an input of), cached. */
int gsnap_adv__nout(adv *a, uint64_t v, const uint64_t **ids, size_t *n) {
    gsnap_dir back = a->p.dir == GSNAP_DIR_IN ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
    return nbrs_cached(a, v, back, &a->nout_idx, &a->nout_off, &a->nout_ids, ids, n);
}

/* Find key (hop h, v) with hop h's cursor of view rt (opened on first use,
 * closed by gsnap_adv__cursors_close). Keys are asked for in ascending order
 * within a phase, so LMDB finds most on the leaf page the cursor is on (no
 * descent from the root). A miss is trusted only when the keys around the
 * landing point are of this table's size and order (as gsnap_store__get). */
static int table_find(adv *a, unsigned h, uint64_t v, MDB_val *val, int *found) {
    int rc;
    if (!a->cur[h] && (rc = mdb_cursor_open(a->rt, a->dbi, &a->cur[h])))
        return gsnap_store__mdb_err(a->db, rc, "snapshot advance: table cursor");
    return gsnap_adv__find(a, a->cur[h], h, v, val, found);
}

/* The same search with cursor cur (of any txn); on return the cursor is on
 * the key when *found. */
int gsnap_adv__find(adv *a, MDB_cursor *cur, unsigned h, uint64_t v, MDB_val *val, int *found) {
    unsigned char kb[12];
    int rc;
    *found = 0;
    gsnap_snap__key(kb, h, v);
    MDB_val key = {12, kb}, k = key;
    MDB_txn *txn = mdb_cursor_txn(cur);
    rc = mdb_cursor_get(cur, &k, val, MDB_SET_RANGE);
    if (rc == 0 && k.mv_size == 12 && mdb_cmp(txn, a->dbi, &k, &key) == 0) { *found = 1; return 0; }
    int bad = 0;
    if (rc == 0) {
        bad = k.mv_size != 12 || mdb_cmp(txn, a->dbi, &k, &key) < 0;
        if (!bad) rc = mdb_cursor_get(cur, &k, val, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
        rc = mdb_cursor_get(cur, &k, val, MDB_LAST);
    }
    if (rc == 0 && !bad) bad = k.mv_size != 12 || mdb_cmp(txn, a->dbi, &k, &key) >= 0;
    if (bad)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s: table search for (hop %u, node %llu) landed on "
                                "a key out of order (damaged B-tree)", a->name, h, (unsigned long long)v);
    return rc == 0 || rc == MDB_NOTFOUND ? 0 : gsnap_store__mdb_err(a->db, rc, "snapshot advance: lookup");
}

void gsnap_adv__cursors_close(adv *a) {
    for (int h = 0; h <= GSNAP_MAX_HOPS; h++) {
        if (a->cur[h]) mdb_cursor_close(a->cur[h]);
        a->cur[h] = NULL;
    }
}

/* Stored record of (hop, v) in the old version: exists, and its list. */
int gsnap_adv__old_rec(adv *a, unsigned h, uint64_t v, struct gsnap_rec_hdr *hd, int *exists) {
    MDB_val val;
    int rc = table_find(a, h, v, &val, exists);
    if (rc || !*exists) return rc;
    if ((rc = gsnap_snap__rec_decode(val.mv_data, val.mv_size, hd))) { /* decode verifies the checksum */
        *exists = 0;
        return gsnap_store__err(a->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt", a->name, h,
                                (unsigned long long)v);
    }
    return 0;
}

int gsnap_adv__read_block(adv *a, unsigned h, uint64_t b) {
    size_t slot = (size_t)(adv_mix(b * 31 + h) & (BCACHE - 1));
    if (a->bc_tag[slot] == ((b << 8) | h) + 1) {
        a->blk = a->bc + slot * GSNAP_SLAB_BLOCK;
        return 0;
    }
    a->blk = a->bc + slot * GSNAP_SLAB_BLOCK;
    a->bc_tag[slot] = 0;
    if (b == 0 || b >= a->cat.blocks[h - 1] ||
        pread(a->fd[h], a->blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK)) != GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: cannot read", a->name, h,
                                (unsigned long long)b);
    if (gsnap_slab__block_verify(a->blk, b))
        return gsnap_store__err(a->db, GSNAP_ECHECKSUM, "snapshot %s hop %u block %llu: checksum mismatch", a->name, h,
                                (unsigned long long)b);
    a->bc_tag[slot] = ((b << 8) | h) + 1;
    return 0;
}

static int old_list_read(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                         int *had, uint64_t *off);

/* The stored D_h(v) as scores ascending (decoded once, then kept). */
int gsnap_adv__old_list(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                    int *had, uint64_t *off) {
    uint32_t i = map_get(&a->ol_idx[h], v);
    int rc;
    if (i == UINT32_MAX) {
        struct olrec r;
        int c, hd;
        if ((rc = old_list_read(a, h, v, s, n, &c, &r.est, &hd, &r.off))) return rc;
        r.n = *n; r.capped = (uint8_t)c; r.had = (uint8_t)hd; r.at = (uint32_t)a->ol_s.n;
        if ((rc = gsnap_adv__vappend(&a->ol_s, s, *n))) return rc;
        if (a->nol == a->ol_cap) {
            size_t nc = a->ol_cap ? 2 * a->ol_cap : 1024;
            struct olrec *p = realloc(a->ol, nc * sizeof *p);
            if (!p) return GSNAP_ENOMEM;
            a->ol = p; a->ol_cap = nc;
        }
        a->ol[a->nol] = r;
        if ((rc = map_put(&a->ol_idx[h], v, (uint32_t)a->nol))) return rc;
        i = (uint32_t)a->nol++;
    }
    const struct olrec *r = &a->ol[i];
    *n = r->n; *capped = r->capped; *est = r->est; *had = r->had; *off = r->off;
    if (r->n) memcpy(s, a->ol_s.v + r->at, (size_t)r->n * sizeof *s);
    return 0;
}

/* The stored D_h(v) as ids, in stored (id) order, and its record (*had:
 * a record with a list exists). */
int gsnap_adv__old_ids(adv *a, unsigned h, uint64_t v, uint64_t *ids, uint32_t *n, struct gsnap_rec_hdr *hd, int *had) {
    int ex, rc;
    *n = 0;
    *had = 0;
    if ((rc = gsnap_adv__old_rec(a, h, v, hd, &ex)) || !ex || hd->slab_len == 0) return rc;
    if (hd->slab_len > GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR || hd->slab_off % GSNAP_SLAB_BLOCK + hd->slab_len > GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s: bad slab pointer (hop %u, node %llu)", a->name, h,
                                (unsigned long long)v);
    if ((rc = gsnap_adv__read_block(a, h, hd->slab_off / GSNAP_SLAB_BLOCK))) return rc;
    gsnap_slab_ptr sp = {hd->slab_off, hd->slab_len, hd->slab_xxh};
    if ((rc = gsnap_slab__list_at(a->blk, hd->slab_off, v, &sp, ids, n)))
        return gsnap_store__err(a->db, rc, "snapshot %s hop %u node %llu: list does not match its table entry", a->name,
                                h, (unsigned long long)v);
    *had = 1;
    return 0;
}

static int old_list_read(adv *a, unsigned h, uint64_t v, uint64_t *s, uint32_t *n, int *capped, uint64_t *est,
                         int *had, uint64_t *off) {
    struct gsnap_rec_hdr hd;
    uint64_t ids[GSNAP_SLAB_CAP];
    int rc;
    *capped = 0; *est = 0; *off = 0;
    if ((rc = gsnap_adv__old_ids(a, h, v, ids, n, &hd, had)) || !*had) return rc;
    for (uint32_t i = 0; i < *n; i++) s[i] = gsnap_snap__score(ids[i], a->key);
    gsnap_adv__sort_u64(s, *n, ids); /* scores ascending (ids is free now) */
    *capped = (hd.flags & GSNAP_REC_CAPPED) != 0;
    *est = hd.n_exact;
    *off = hd.slab_off;
    return 0;
}

/* D_{h}(u) at the new version: recomputed if in hs[h], else stored. */
int gsnap_adv__cur_list(adv *a, unsigned h, uint64_t u, uint64_t *buf, const uint64_t **s, uint32_t *n, int *capped) {
    uint32_t i = map_get(&a->hs[h].idx, u);
    if (i != UINT32_MAX) {
        entry *e = &a->hs[h].e[i];
        *s = e->s; *n = e->n; *capped = e->capped;
        return 0;
    }
    uint64_t est, off;
    int had;
    *s = buf;
    return gsnap_adv__old_list(a, h, u, buf, n, capped, &est, &had, &off);
}

/* The c smallest of x[0..n) ascending into out (n > c); tmp holds n. One
 * histogram of the top byte finds the buckets that hold them (random
 * scores: about c + n / 256 keys), only those are sorted. */
static void bottom_c(const uint64_t *x, uint32_t n, uint32_t c, uint64_t *out, uint64_t *tmp) {
    uint32_t cnt[256] = {0}, k = 0, b = 0, sum = 0;
    for (uint32_t i = 0; i < n; i++) cnt[x[i] >> 56]++;
    while (sum + cnt[b] < c) sum += cnt[b++];
    for (uint32_t i = 0; i < n; i++)
        if ((x[i] >> 56) <= b) tmp[k++] = x[i];
    gsnap_adv__sort_u64(tmp, k, out);
    memcpy(out, tmp, (size_t)c * sizeof *out);
}

/* The c smallest scores of D_h(u) at the new version (*s valid until the
 * next call), *capped = D_h(u) is capped or has more than c members (then
 * R_h(u), a subset of R_{h+1}(v) for an out-neighbour v, has more than c
 * members: enough for a join of hop h + 1 with cap c, which needs only the
 * c smallest of each input, bottom-c(A u B) = bottom-c(bottom-c(A) u
 * bottom-c(B))). Stored lists are decoded without sorting all scores. */
int gsnap_adv__top_list(adv *a, unsigned h, uint64_t u, uint32_t c, const uint64_t **s, uint32_t *n, int *capped) {
    uint32_t i = map_get(&a->hs[h].idx, u);
    if (i != UINT32_MAX) {
        const entry *e = &a->hs[h].e[i];
        *s = e->s; *n = e->n < c ? e->n : c; *capped = e->capped || e->n > c;
        return 0;
    }
    if ((i = map_get(&a->tp_idx[h], u)) == UINT32_MAX) {
        uint64_t ids[GSNAP_SLAB_CAP], sc[GSNAP_SLAB_CAP], top[GSNAP_SLAB_CAP];
        struct gsnap_rec_hdr hd;
        struct tprec r = {(uint32_t)a->tp_s.n, 0, 0};
        uint32_t m;
        int had, rc;
        if ((rc = gsnap_adv__old_ids(a, h, u, ids, &m, &hd, &had))) return rc;
        for (uint32_t j = 0; j < m; j++) sc[j] = gsnap_snap__score(ids[j], a->key);
        if (m > c) bottom_c(sc, m, c, top, ids);
        else { gsnap_adv__sort_u64(sc, m, ids); memcpy(top, sc, (size_t)m * sizeof *top); }
        r.n = m < c ? m : c;
        r.capped = (uint8_t)(m > c || (had && (hd.flags & GSNAP_REC_CAPPED)));
        if ((rc = gsnap_adv__vappend(&a->tp_s, top, r.n))) return rc;
        if (a->ntp == a->tp_cap) {
            size_t nc = a->tp_cap ? 2 * a->tp_cap : 1024;
            struct tprec *p = realloc(a->tp, nc * sizeof *p);
            if (!p) return GSNAP_ENOMEM;
            a->tp = p; a->tp_cap = nc;
        }
        a->tp[a->ntp] = r;
        if ((rc = map_put(&a->tp_idx[h], u, (uint32_t)a->ntp))) return rc;
        i = (uint32_t)a->ntp++;
    }
    *s = a->tp_s.v + a->tp[i].at; *n = a->tp[i].n; *capped = a->tp[i].capped;
    return 0;
}

int gsnap_adv__add_entry(adv *a, unsigned h, uint64_t v, const uint64_t *s, uint32_t n, int capped, uint64_t est,
                     int *changed) {
    hopset *H = &a->hs[h];
    uint64_t old[GSNAP_SLAB_CAP], oest, ooff;
    uint32_t on;
    int oc, had, rc;
    if ((rc = gsnap_adv__old_list(a, h, v, old, &on, &oc, &oest, &had, &ooff))) return rc;
    if (H->n == H->cap) {
        size_t c = H->cap ? 2 * H->cap : 256;
        entry *p = realloc(H->e, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        H->e = p; H->cap = c;
    }
    entry *e = &H->e[H->n];
    memset(e, 0, sizeof *e);
    e->node = v; e->n = n; e->capped = (uint8_t)capped; e->est = est;
    e->old_n = on; e->old_capped = (uint8_t)oc; e->old_est = oest; e->had_list = (uint8_t)had; e->old_off = ooff;
    e->moved = on != n || (n && memcmp(old, s, n * sizeof *s) != 0);
    e->prop = e->moved || oc != capped;
    e->changed = e->prop || oest != est;
    if (n) {
        if (!(e->s = malloc(n * sizeof *s))) return GSNAP_ENOMEM;
        memcpy(e->s, s, n * sizeof *s);
    }
    if (e->prop && n) { /* added members: s minus old (both ascending) */
        uint64_t add[GSNAP_SLAB_CAP];
        uint32_t k = 0, na = 0;
        for (uint32_t i = 0; i < n; i++) {
            while (k < on && old[k] < s[i]) k++;
            if (k < on && old[k] == s[i]) continue;
            add[na++] = s[i];
        }
        if (na == n) e->add = e->s;
        else if (na && !(e->add = malloc(na * sizeof *add))) { free(e->s); return GSNAP_ENOMEM; }
        else if (na) memcpy(e->add, add, na * sizeof *add);
        e->nadd = na;
    }
    if ((rc = map_put(&H->idx, v, (uint32_t)H->n))) { if (e->add != e->s) free(e->add); free(e->s); return rc; }
    H->n++;
    *changed = e->changed;
    return 0;
}
