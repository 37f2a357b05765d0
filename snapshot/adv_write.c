/*
 * snapshot/adv_write.c -- copy-on-write of `snapshot advance`, by list: a
 * list whose bytes changed is written to a new place; the block that held
 * it keeps its other lists until its live bytes fall under SPARSE_BYTES,
 * then those move too and the block is freed. Every live block is thus at
 * least 5/8 full, except the last one written by an advance (emptied by the
 * next). A list whose record changed but whose bytes did not (hop 1: the
 * exact size of a capped list) stays where it is; the commit updates its
 * record only. New blocks come from the free list (reusable blocks only)
 * or past the catalog's block count; they are fsynced before the commit.
 */
#include "snapshot/adv_int.h"
#include <errno.h>
#include <unistd.h>
#include <xxhash.h>

/* A block under this many live bytes is emptied (its lists move) and freed. */
#define SPARSE_BYTES ((GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR) * 5 / 8)

typedef struct { uint64_t node; uint32_t n; uint64_t ids[]; } olist;

/* What one hop's rewrite collects. */
typedef struct {
    olist **ls; size_t nls, cap; /* the lists to write */
    vec touched;                 /* blocks that lost lists */
    vec reuse;                   /* reusable free blocks: fl index << 32 | position */
    unsigned char *out;          /* the block being filled */
    uint64_t hwm;                /* next block past the end */
} rw;

static int cmp_ptr(const void *x, const void *y) {
    const olist *const *p = x, *const *q = y;
    return ((*p)->node > (*q)->node) - ((*p)->node < (*q)->node);
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
    return (a > c) - (a < c);
}

static int push_list(rw *w, uint64_t node, uint32_t n, const void *ids) {
    if (w->nls == w->cap) {
        size_t c = w->cap ? 2 * w->cap : 256;
        olist **q = realloc(w->ls, c * sizeof *q);
        if (!q) return GSNAP_ENOMEM;
        w->ls = q;
        w->cap = c;
    }
    olist *o = malloc(sizeof *o + (size_t)n * 8);
    if (!o) return GSNAP_ENOMEM;
    o->node = node;
    o->n = n;
    if (n) memcpy(o->ids, ids, (size_t)n * 8);
    w->ls[w->nls++] = o;
    return 0;
}

static int write_blk(adv *a, unsigned h, unsigned char *blk, uint32_t nl, uint64_t b) {
    gsnap_put_le32(blk, GSNAP_SLAB_MAGIC_DATA);
    gsnap_put_le32(blk + 4, nl);
    gsnap_put_le64(blk + 8, gsnap_slab__block_xxh(blk, b));
    a->bc_tag[adv_mix(b * 31 + h) & (BCACHE - 1)] = 0; /* never serve a stale copy */
    ssize_t wr = pwrite(a->fd[h], blk, GSNAP_SLAB_BLOCK, (off_t)(b * GSNAP_SLAB_BLOCK));
    if (wr != GSNAP_SLAB_BLOCK)
        return gsnap_store__err(a->db, errno == ENOSPC ? GSNAP_ENOSPC : GSNAP_EIO, "snapshot %s hop %u: writing block %llu: %s",
                                a->name, h, (unsigned long long)b, strerror(errno));
    return 0;
}

/* 1. lists whose bytes changed leave their blocks; the new ones are queued */
static int detach_changed(adv *a, unsigned h, rw *w) {
    hopset *H = &a->hs[h];
    int rc;
    for (size_t i = 0; i < H->n; i++) {
        entry *e = &H->e[i];
        if (e->changed) a->rep.changed[h - 1]++;
        if (!e->moved) continue;
        if (e->had_list) {
            uint64_t b = e->old_off / GSNAP_SLAB_BLOCK;
            uint32_t len = GSNAP_SLAB_LIST_HDR + 8u * e->old_n;
            if (b >= a->live_cap[h] || a->live[h][b] < len)
                return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: live byte count below "
                                        "its lists", a->name, h, (unsigned long long)b);
            a->live[h][b] -= len;
            if ((rc = vpush(&w->touched, b))) return rc;
        }
        if (e->n) {
            uint64_t ids[GSNAP_SLAB_CAP], tmp[GSNAP_SLAB_CAP];
            for (uint32_t j = 0; j < e->n; j++) ids[j] = gsnap_snap__unscore(e->s[j], a->key);
            gsnap_adv__sort_u64(ids, e->n, tmp);
            if ((rc = push_list(w, e->node, e->n, ids))) return rc;
        }
    }
    return 0;
}

/* 2. the live lists of one sparse block move (queued); the block empties */
static int empty_block(adv *a, unsigned h, rw *w, uint64_t b) {
    hopset *H = &a->hs[h];
    int rc;
    if ((rc = gsnap_adv__read_block(a, h, b))) return rc;
    uint32_t cnt = gsnap_get_le32(a->blk + 4), pos = GSNAP_SLAB_BLOCK_HDR;
    for (uint32_t j = 0; j < cnt; j++) {
        if (pos + GSNAP_SLAB_LIST_HDR > GSNAP_SLAB_BLOCK) break; /* checked below */
        uint64_t nd = gsnap_get_le64(a->blk + pos);
        uint32_t n = gsnap_get_le32(a->blk + pos + 8), len = GSNAP_SLAB_LIST_HDR + 8u * n;
        if (n > GSNAP_SLAB_CAP || pos + len > GSNAP_SLAB_BLOCK)
            return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: list %u is malformed", a->name,
                                    h, (unsigned long long)b, j);
        uint32_t ei = map_get(&H->idx, nd);
        if (ei == UINT32_MAX || !H->e[ei].moved) {
            struct gsnap_rec_hdr hd;
            int ex;
            if ((rc = gsnap_adv__old_rec(a, h, nd, &hd, &ex))) return rc;
            if (ex && hd.slab_len && hd.slab_off == b * GSNAP_SLAB_BLOCK + pos) { /* live: move it */
                if ((rc = push_list(w, nd, n, a->blk + pos + GSNAP_SLAB_LIST_HDR))) return rc;
                a->live[h][b] -= len;
            }
        }
        pos += len;
    }
    if (a->live[h][b] != 0)
        return gsnap_store__err(a->db, GSNAP_ECORRUPT, "snapshot %s hop %u block %llu: live byte count above its lists",
                                a->name, h, (unsigned long long)b);
    return vpush(&w->touched, b);
}

/* 3. freed: touched blocks now empty */
static int collect_freed(adv *a, unsigned h, rw *w) {
    struct hop_plan *pl = &a->plan[h];
    if (w->touched.n > 1) qsort(w->touched.v, w->touched.n, sizeof *w->touched.v, cmp_u64);
    for (size_t i = 0; i < w->touched.n; i++) {
        uint64_t b = w->touched.v[i];
        if ((i && b == w->touched.v[i - 1]) || a->live[h][b]) continue;
        uint64_t *p = realloc(pl->freed, (pl->nfreed + 1) * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        pl->freed = p;
        pl->freed[pl->nfreed++] = b;
    }
    return 0;
}

/* The next block to fill: a reusable free one, else one past the end. */
static int take_block(adv *a, unsigned h, rw *w, size_t *ri, uint64_t *cur) {
    struct hop_plan *pl = &a->plan[h];
    if (*ri < w->reuse.n) {
        struct fl *f = &a->fl[w->reuse.v[*ri] >> 32];
        size_t j = w->reuse.v[*ri] & 0xffffffffu;
        *cur = f->blk[j] & ((1ull << 47) - 1);
        f->blk[j] |= 1ull << 47; /* consumed */
        f->used++;
        (*ri)++;
        pl->reused++;
    } else {
        *cur = w->hwm++;
    }
    int rc = gsnap_adv__live_grow(a, h, *cur);
    if (rc) return rc;
    uint64_t *p = realloc(pl->alloc, (pl->nalloc + 1) * sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    pl->alloc = p;
    pl->alloc[pl->nalloc++] = *cur;
    return 0;
}

/* 4. the queued lists packed into blocks, in node order */
static int place_lists(adv *a, unsigned h, rw *w) {
    struct hop_plan *pl = &a->plan[h];
    size_t ri = 0;
    uint32_t used = GSNAP_SLAB_BLOCK_HDR, nl = 0;
    uint64_t cur = 0;
    int have = 0, rc;
    for (size_t i = 0; i <= w->nls; i++) {
        uint32_t len = i < w->nls ? GSNAP_SLAB_LIST_HDR + 8u * w->ls[i]->n : 0;
        if (have && (i == w->nls || used + len > GSNAP_SLAB_BLOCK)) {
            if ((rc = write_blk(a, h, w->out, nl, cur))) return rc;
            have = 0;
        }
        if (i == w->nls) break;
        if (!have) {
            memset(w->out, 0, GSNAP_SLAB_BLOCK);
            used = GSNAP_SLAB_BLOCK_HDR;
            nl = 0;
            if ((rc = take_block(a, h, w, &ri, &cur))) return rc;
            have = 1;
        }
        unsigned char *q = w->out + used;
        gsnap_put_le64(q, w->ls[i]->node);
        gsnap_put_le32(q + 8, w->ls[i]->n);
        if (w->ls[i]->n) memcpy(q + GSNAP_SLAB_LIST_HDR, w->ls[i]->ids, (size_t)w->ls[i]->n * 8);
        struct nptr *np = &pl->np[pl->nnp++];
        np->node = w->ls[i]->node;
        np->off = cur * GSNAP_SLAB_BLOCK + used;
        np->len = len;
        np->xxh = XXH3_64bits(q, len);
        a->live[h][cur] += len;
        used += len;
        nl++;
    }
    return 0;
}

static int rewrite(adv *a, unsigned h, uint64_t oldest, rw *w) {
    struct hop_plan *pl = &a->plan[h];
    int rc;
    if ((rc = gsnap_adv__load_live(a, h)) || (rc = detach_changed(a, h, w))) return rc;
    /* sparse blocks (touched now, or left sparse by an earlier advance) */
    for (uint64_t b = 1; b < w->hwm; b++) {
        uint32_t lv = a->live[h][b];
        if (lv == 0 || lv >= SPARSE_BYTES) continue;
        if ((rc = empty_block(a, h, w, b))) return rc;
    }
    if ((rc = collect_freed(a, h, w))) return rc;
    if (!w->nls && !pl->nfreed) return 0;
    if (w->nls > 1) qsort(w->ls, w->nls, sizeof *w->ls, cmp_ptr);
    if (!(pl->np = malloc((w->nls ? w->nls : 1) * sizeof *pl->np))) return GSNAP_ENOMEM;
    if (posix_memalign((void **)&w->out, GSNAP_SLAB_BLOCK, GSNAP_SLAB_BLOCK)) return GSNAP_ENOMEM;
    /* reusable free blocks: freed by commits every live reader has seen */
    for (size_t f = 0; f < a->nfl; f++) {
        if (a->fl[f].txnid > oldest) continue;
        for (size_t j = 0; j < a->fl[f].n; j++)
            if (a->fl[f].blk[j] >> 48 == h && (rc = vpush(&w->reuse, (uint64_t)f << 32 | j))) return rc;
    }
    if ((rc = place_lists(a, h, w))) return rc;
    if (fsync(a->fd[h]) != 0)
        return gsnap_store__err(a->db, GSNAP_EIO, "snapshot %s hop %u: fsync: %s", a->name, h, strerror(errno));
    return 0;
}

int gsnap_adv__rewrite_hop(adv *a, unsigned h, uint64_t oldest) {
    struct hop_plan *pl = &a->plan[h];
    rw w;
    memset(&w, 0, sizeof w);
    w.hwm = a->cat.blocks[h - 1];
    int rc = rewrite(a, h, oldest, &w);
    pl->new_blocks = w.hwm;
    a->rep.blocks_written[h - 1] = pl->nalloc;
    a->rep.blocks_reused[h - 1] = pl->reused;
    a->rep.blocks_freed[h - 1] = pl->nfreed;
    for (size_t i = 0; i < w.nls; i++) free(w.ls[i]);
    free(w.ls);
    free(w.out);
    gsnap_adv__vfree(&w.touched);
    gsnap_adv__vfree(&w.reuse);
    return rc;
}
