/*
 * snapshot/check_sampled.c -- `check` of a sampled snapshot. Its slab blocks
 * are copy-on-write (snapshot/adv_write.c): lists are not in node order
 * across a file, blocks may hold lists no record references any more, and
 * some blocks are free. So: every record's pointer names a list in a block
 * below the catalog's count that is not free; the live bytes kept per block
 * equal the bytes the table references there; a block with none is free;
 * every referenced block passes its checksum and holds well-formed lists.
 */
#include "snapshot/snapshot_int.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define problem gsnap_report

/* ---- sampled snapshots: blocks are copy-on-write, so lists are not in
 * node order across a file and some blocks are free. Every table pointer
 * must name a list in a live (not free) block below the catalog's count;
 * every list of every live block must be the one its key points to. ---- */

static int is_free(const uint64_t *fr, size_t n, uint64_t b) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (fr[m] < b) lo = m + 1;
        else hi = m;
    }
    return lo < n && fr[lo] == b;
}

static int u64cmp(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* What one check walks with. */
typedef struct {
    gsnap_db *db;
    const char *name;
    const struct gsnap_cat *c;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *cur;
    gsnap_reporter *rep;
    unsigned char *blk;
    uint64_t *fr;            /* free blocks, hop << 48 | block, sorted */
    size_t nfr;
    int fd;
} chk;

/* The free list (table keys (FREE_HOP, txn id)), sorted; duplicates reported. */
static int load_free_list(chk *x) {
    unsigned char kb[12];
    size_t cap = 0;
    gsnap_snap__key(kb, GSNAP_FREE_HOP, 0);
    MDB_val k = {12, kb}, v;
    int mr;
    for (mr = mdb_cursor_get(x->cur, &k, &v, MDB_SET_RANGE); mr == 0; mr = mdb_cursor_get(x->cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 12 || memcmp(k.mv_data, "\xff\xff\xff\xff", 4)) break;
        if (v.mv_size % 8) { problem(x->rep, "snapshot %s: free list record of %zu bytes", x->name, v.mv_size); continue; }
        for (size_t i = 0; i < v.mv_size / 8; i++) {
            if (x->nfr == cap) {
                cap = cap ? 2 * cap : 64;
                uint64_t *p = realloc(x->fr, cap * sizeof *p);
                if (!p) return GSNAP_ENOMEM;
                x->fr = p;
            }
            x->fr[x->nfr++] = gsnap_get_le64((const unsigned char *)v.mv_data + 8 * i); /* hop << 48 | block */
        }
    }
    if (mr && mr != MDB_NOTFOUND) return gsnap_store__mdb_err(x->db, mr, "check");
    if (x->nfr > 1) qsort(x->fr, x->nfr, sizeof *x->fr, u64cmp);
    for (size_t i = 1; i < x->nfr; i++)
        if (x->fr[i] == x->fr[i - 1])
            problem(x->rep, "snapshot %s: block %llu of hop %llu is on the free list twice", x->name,
                    (unsigned long long)(x->fr[i] & ((1ull << 48) - 1)), (unsigned long long)(x->fr[i] >> 48));
    return 0;
}

/* One record of hop h: its pointer names a list in a live block below nb;
 * the bytes it references are added to ref. */
static void check_record(chk *x, unsigned h, uint64_t nb, uint64_t node, const MDB_val *v, uint32_t *ref) {
    struct gsnap_rec_hdr hd;
    int vr = gsnap_snap__rec_verify(v->mv_data, v->mv_size);
    if (vr || gsnap_snap__rec_decode(v->mv_data, v->mv_size, &hd)) {
        problem(x->rep, "snapshot %s hop %u node %llu: table record %s", x->name, h, (unsigned long long)node,
                vr == GSNAP_ECHECKSUM ? "checksum mismatch" : "is malformed");
        return;
    }
    if (!hd.slab_len) return;
    uint64_t b = hd.slab_off / GSNAP_SLAB_BLOCK;
    gsnap_slab_ptr sp = {hd.slab_off, hd.slab_len, hd.slab_xxh};
    uint32_t cnt;
    if (b == 0 || b >= nb || hd.slab_hop != h || is_free(x->fr, x->nfr, (uint64_t)h << 48 | b)) {
        problem(x->rep, "snapshot %s hop %u node %llu: slab pointer to block %llu, which is %s", x->name, h,
                (unsigned long long)node, (unsigned long long)b, b && b < nb ? "free" : "out of range");
        return;
    }
    if (pread(x->fd, x->blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK)) != GSNAP_SLAB_BLOCK ||
        gsnap_slab__block_verify(x->blk, b)) {
        problem(x->rep, "snapshot %s hop %u block %llu: checksum mismatch", x->name, h, (unsigned long long)b);
        return;
    }
    if (gsnap_slab__list_at(x->blk, hd.slab_off, node, &sp, NULL, &cnt))
        problem(x->rep, "snapshot %s hop %u node %llu: slab pointer (offset %llu, length %u) does not match the slab",
                x->name, h, (unsigned long long)node, (unsigned long long)hd.slab_off, hd.slab_len);
    else
        ref[b] += hd.slab_len;
}

/* Key side of hop h: every record; the count against the catalog. */
static int check_keys(chk *x, unsigned h, uint64_t nb, uint32_t *ref) {
    unsigned char kb[12];
    uint64_t keys = 0;
    gsnap_snap__key(kb, h, 0);
    MDB_val k = {12, kb}, v;
    int mr;
    for (mr = mdb_cursor_get(x->cur, &k, &v, MDB_SET_RANGE); mr == 0; mr = mdb_cursor_get(x->cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        if (k.mv_size != 12) break;
        unsigned kh = (unsigned)kp[0] << 24 | (unsigned)kp[1] << 16 | (unsigned)kp[2] << 8 | kp[3];
        if (kh != h) break;
        uint64_t node = 0;
        for (int i = 4; i < 12; i++) node = node << 8 | kp[i];
        keys++;
        check_record(x, h, nb, node, &v, ref);
    }
    if (mr && mr != MDB_NOTFOUND) return gsnap_store__mdb_err(x->db, mr, "check");
    if (keys != x->c->nodes)
        problem(x->rep, "snapshot %s hop %u: %llu table entries, catalog says %llu", x->name, h,
                (unsigned long long)keys, (unsigned long long)x->c->nodes);
    return 0;
}

/* The lists of a verified live block are well formed and ascending. */
static void check_block_lists(chk *x, unsigned h, uint64_t b) {
    const unsigned char *blk = x->blk;
    uint32_t nl = gsnap_get_le32(blk + 4), pos = GSNAP_SLAB_BLOCK_HDR;
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t cnt = pos + GSNAP_SLAB_LIST_HDR <= GSNAP_SLAB_BLOCK ? gsnap_get_le32(blk + pos + 8) : UINT32_MAX;
        if (cnt > GSNAP_SLAB_CAP || pos + GSNAP_SLAB_LIST_HDR + 8ull * cnt > GSNAP_SLAB_BLOCK) {
            problem(x->rep, "snapshot %s hop %u block %llu: list crosses the block end", x->name, h, (unsigned long long)b);
            return;
        }
        const unsigned char *ids = blk + pos + GSNAP_SLAB_LIST_HDR;
        for (uint32_t j = 1; j < cnt; j++)
            if (gsnap_get_le64(ids + 8 * j) <= gsnap_get_le64(ids + 8 * (j - 1))) {
                problem(x->rep, "snapshot %s hop %u block %llu: list of node %llu not strictly ascending", x->name, h,
                        (unsigned long long)b, (unsigned long long)gsnap_get_le64(blk + pos));
                break;
            }
        pos += GSNAP_SLAB_LIST_HDR + 8u * cnt;
    }
}

/* Block side of hop h: the live bytes the advances keep per block must be
 * the bytes the table references there; a block with none must be free;
 * every live block passes its checksum and holds well-formed lists. */
static void check_blocks(chk *x, unsigned h, uint64_t nb, const uint32_t *ref) {
    unsigned char kb[12];
    gsnap_snap__key(kb, GSNAP_LIVE_HOP, h);
    MDB_val k = {12, kb}, v;
    const unsigned char *lv = NULL;
    if (mdb_get(x->txn, x->dbi, &k, &v) == 0 && v.mv_size == nb * sizeof(uint32_t)) lv = v.mv_data;
    else problem(x->rep, "snapshot %s hop %u: live byte counts missing or of the wrong size", x->name, h);
    for (uint64_t b = 1; b < nb; b++) {
        uint32_t want = 0;
        if (lv) memcpy(&want, lv + 4 * b, 4);
        if (lv && want != ref[b])
            problem(x->rep, "snapshot %s hop %u block %llu: %u live bytes recorded, %u referenced", x->name, h,
                    (unsigned long long)b, want, ref[b]);
        int fre = is_free(x->fr, x->nfr, (uint64_t)h << 48 | b);
        if (!fre && !ref[b])
            problem(x->rep, "snapshot %s hop %u block %llu: neither referenced nor free", x->name, h, (unsigned long long)b);
        if (fre) continue; /* one with references is reported on the key side */
        if (pread(x->fd, x->blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK)) != GSNAP_SLAB_BLOCK ||
            gsnap_slab__block_verify(x->blk, b)) {
            problem(x->rep, "snapshot %s hop %u block %llu: checksum mismatch", x->name, h, (unsigned long long)b);
            continue;
        }
        check_block_lists(x, h, b);
    }
}

/* Hop h: its free-block count, its slab file, keys, blocks. */
static int check_hop(chk *x, unsigned h) {
    char path[2300];
    uint64_t nb = x->c->blocks[h - 1], hb = 0, nfree = 0;
    for (size_t i = 0; i < x->nfr; i++) nfree += x->fr[i] >> 48 == h;
    if (nfree != x->c->free_blocks[h - 1])
        problem(x->rep, "snapshot %s hop %u: %llu free blocks, catalog says %llu", x->name, h,
                (unsigned long long)nfree, (unsigned long long)x->c->free_blocks[h - 1]);
    gsnap_snap__slab_path(x->db, x->name, h, path, sizeof path);
    if (x->fd >= 0) close(x->fd);
    if ((x->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        problem(x->rep, "snapshot %s hop %u: cannot open %s: %s", x->name, h, path, strerror(errno));
        return 0;
    }
    struct stat st;
    if (pread(x->fd, x->blk, GSNAP_SLAB_BLOCK, 0) != GSNAP_SLAB_BLOCK || gsnap_slab__header_check(x->blk, h, &hb) ||
        hb > nb)
        problem(x->rep, "snapshot %s hop %u block 0: bad slab header", x->name, h);
    if (fstat(x->fd, &st) == 0 && (uint64_t)st.st_size < nb * GSNAP_SLAB_BLOCK)
        problem(x->rep, "snapshot %s hop %u: file of %llu bytes is shorter than %llu blocks", x->name, h,
                (unsigned long long)st.st_size, (unsigned long long)nb);
    uint32_t *ref = calloc(nb ? nb : 1, sizeof *ref);
    if (!ref) return GSNAP_ENOMEM;
    int rc = check_keys(x, h, nb, ref);
    if (!rc) check_blocks(x, h, nb, ref);
    free(ref);
    return rc;
}

int gsnap_snap__check_sampled(gsnap_db *db, const char *name, const struct gsnap_cat *c, MDB_txn *txn, MDB_dbi dbi,
                              gsnap_reporter *rep) {
    chk x = {db, name, c, txn, dbi, NULL, rep, NULL, NULL, 0, -1};
    int rc;
    if (posix_memalign((void **)&x.blk, GSNAP_SLAB_BLOCK, GSNAP_SLAB_BLOCK)) return GSNAP_ENOMEM;
    if ((rc = mdb_cursor_open(txn, dbi, &x.cur))) {
        free(x.blk);
        return gsnap_store__mdb_err(db, rc, "check");
    }
    rc = load_free_list(&x);
    for (unsigned h = 1; h <= c->hops && !rc; h++) rc = check_hop(&x, h);
    mdb_cursor_close(x.cur);
    if (x.fd >= 0) close(x.fd);
    free(x.blk);
    free(x.fr);
    return rc;
}
