/*
 * snapshot/khop.c -- k-hop queries: table lookups, then the distinct slab
 * blocks read with io_uring (O_DIRECT, 4 KiB aligned buffers, up to
 * queue_depth reads in flight, one io_uring_submit per refill), or pread
 * when io_uring is refused by the kernel or switched off (option
 * force_pread, env GSNAP_NO_URING=1). Every block is checksum-verified
 * before any list is taken from it.
 */
#include "snapshot/snapshot_int.h"
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gsnap_khop_result_free(gsnap_khop_result *r) {
    if (!r) return;
    free(r->ids);
    free(r->off);
    free(r->capped);
    free(r->exact);
    free(r);
}

typedef struct {
    uint64_t node, off, xxh;
    uint32_t len, hop;
    size_t idx;     /* i * hops + hop - 1 */
} req;

static int req_cmp(const void *x, const void *y) {
    const req *a = x, *b = y;
    if (a->hop != b->hop) return a->hop < b->hop ? -1 : 1;
    return (a->off > b->off) - (a->off < b->off);
}

typedef struct {
    gsnap_snapshot *s;
    gsnap_khop_result *r;
    req *rq;
    size_t nrq;
    size_t *blk_first; /* first request of each distinct block */
    size_t nblk;
    uint64_t blocks[GSNAP_MAX_HOPS]; /* slab blocks per hop in the version the view sees */
} plan;

static uint64_t blk_of(const req *q) { return q->off / GSNAP_SLAB_BLOCK; }

/* Verify block b of the plan (data in buf) and copy its lists out. */
static int take_block(plan *pl, size_t b, const unsigned char *buf) {
    size_t i = pl->blk_first[b], end = b + 1 < pl->nblk ? pl->blk_first[b + 1] : pl->nrq;
    const req *q0 = &pl->rq[i];
    uint64_t bno = blk_of(q0);
    if (gsnap_slab__block_verify(buf, bno))
        return gsnap_store__err(pl->s->db, GSNAP_ECHECKSUM, "snapshot %s hop %u block %llu: checksum mismatch",
                                pl->s->name, q0->hop, (unsigned long long)bno);
    for (; i < end; i++) {
        const req *q = &pl->rq[i];
        assert(blk_of(q) == bno); /* the plan groups requests by block */
        gsnap_slab_ptr sp = {q->off, q->len, q->xxh};
        uint32_t cnt = 0;
        uint64_t *dst = pl->r->ids + pl->r->off[q->idx];
        int rc = gsnap_slab__list_at(buf, q->off, q->node, &sp, dst, &cnt);
        if (rc || cnt != pl->r->off[q->idx + 1] - pl->r->off[q->idx])
            return gsnap_store__err(pl->s->db, rc ? rc : GSNAP_ECORRUPT,
                                    "snapshot %s hop %u block %llu: list of node %llu does not match its table entry",
                                    pl->s->name, q->hop, (unsigned long long)bno, (unsigned long long)q->node);
    }
    pl->r->stats.blocks_read++;
    pl->r->stats.bytes_read += GSNAP_SLAB_BLOCK;
    return 0;
}

static int fd_for(plan *pl, unsigned hop, int buffered) {
    gsnap_snapshot *s = pl->s;
    return !buffered && s->direct_ok[hop] ? s->fd_direct[hop] : s->fd_buf[hop];
}

static int read_pread(plan *pl, int buffered, unsigned char *buf) {
    for (size_t b = 0; b < pl->nblk; b++) {
        const req *q = &pl->rq[pl->blk_first[b]];
        off_t off = (off_t)(blk_of(q) * GSNAP_SLAB_BLOCK);
        ssize_t got = pread(fd_for(pl, q->hop, buffered), buf, GSNAP_SLAB_BLOCK, off);
        if (got < 0 && errno == EINVAL) /* O_DIRECT refused at read time */
            got = pread(pl->s->fd_buf[q->hop], buf, GSNAP_SLAB_BLOCK, off);
        if (got != GSNAP_SLAB_BLOCK)
            return gsnap_store__err(pl->s->db, got < 0 ? GSNAP_EIO : GSNAP_ECORRUPT,
                                    "snapshot %s hop %u block %llu: read failed (%s)", pl->s->name, q->hop,
                                    (unsigned long long)blk_of(q), got < 0 ? strerror(errno) : "short read");
        int rc = take_block(pl, b, buf);
        if (rc) return rc;
    }
    return 0;
}

static int ring_get(gsnap_snapshot *s, unsigned qd, struct io_uring **out) {
    *out = NULL;
    if (s->ring_failed) return GSNAP_ENOTSUP;
    if (s->ring && s->ring_qd >= qd) { *out = s->ring; return 0; }
    if (s->ring) { io_uring_queue_exit(s->ring); free(s->ring); s->ring = NULL; }
    struct io_uring *r = calloc(1, sizeof *r);
    if (!r) return GSNAP_ENOMEM;
    if (io_uring_queue_init(qd, r, 0) < 0) { /* refused by the kernel */
        free(r);
        s->ring_failed = 1;
        return GSNAP_ENOTSUP;
    }
    s->ring = r;
    s->ring_qd = qd;
    *out = r;
    return 0;
}

static int read_uring(plan *pl, struct io_uring *ring, unsigned qd, int buffered, unsigned char *bufs) {
    size_t next = 0, inflight = 0;
    int rc = 0;
    unsigned *free_slots = malloc(qd * sizeof *free_slots), nfree = qd;
    size_t *slot_blk = malloc(qd * sizeof *slot_blk);
    if (!free_slots || !slot_blk) { free(free_slots); free(slot_blk); return GSNAP_ENOMEM; }
    for (unsigned i = 0; i < qd; i++) free_slots[i] = qd - 1 - i;
    while ((next < pl->nblk && !rc) || inflight) {
        unsigned queued = 0;
        while (!rc && next < pl->nblk && nfree) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
            if (!sqe) break;
            unsigned slot = free_slots[--nfree];
            const req *q = &pl->rq[pl->blk_first[next]];
            io_uring_prep_read(sqe, fd_for(pl, q->hop, buffered), bufs + (size_t)slot * GSNAP_SLAB_BLOCK,
                               GSNAP_SLAB_BLOCK, blk_of(q) * GSNAP_SLAB_BLOCK);
            io_uring_sqe_set_data64(sqe, slot);
            slot_blk[slot] = next++;
            queued++;
        }
        if (queued) { /* one syscall: submit the batch and wait for a completion */
            int sr = io_uring_submit_and_wait(ring, 1);
            if (sr < 0) {
                /* nothing of this batch went in: give the slots back and stop */
                rc = gsnap_store__err(pl->s->db, GSNAP_EIO, "io_uring_submit: %s", strerror(-sr));
                break;
            }
            pl->r->stats.submits++;
            inflight += (size_t)sr;
        }
        if (!inflight) continue;
        struct io_uring_cqe *cqe;
        int wr = queued ? io_uring_peek_cqe(ring, &cqe) : io_uring_wait_cqe(ring, &cqe);
        if (wr == -EAGAIN) wr = io_uring_wait_cqe(ring, &cqe);
        if (wr < 0) {
            if (wr == -EINTR) continue;
            rc = gsnap_store__err(pl->s->db, GSNAP_EIO, "io_uring_wait_cqe: %s", strerror(-wr));
            break; /* ring state unknown: it is torn down below */
        }
        unsigned seen = 0, head;
        io_uring_for_each_cqe(ring, head, cqe) {
            unsigned slot = (unsigned)io_uring_cqe_get_data64(cqe);
            unsigned char *buf = bufs + (size_t)slot * GSNAP_SLAB_BLOCK;
            size_t b = slot_blk[slot];
            const req *q = &pl->rq[pl->blk_first[b]];
            int res = cqe->res;
            if (res == -EINVAL) /* O_DIRECT refused at read time: read it buffered */
                res = (int)pread(pl->s->fd_buf[q->hop], buf, GSNAP_SLAB_BLOCK,
                                 (off_t)(blk_of(q) * GSNAP_SLAB_BLOCK));
            if (!rc) {
                if (res != (int)GSNAP_SLAB_BLOCK)
                    rc = gsnap_store__err(pl->s->db, res < 0 ? GSNAP_EIO : GSNAP_ECORRUPT,
                                          "snapshot %s hop %u block %llu: read failed (%s)", pl->s->name, q->hop,
                                          (unsigned long long)blk_of(q), res < 0 ? strerror(-res) : "short read");
                else
                    rc = take_block(pl, b, buf);
            }
            free_slots[nfree++] = slot;
            inflight--;
            seen++;
        }
        io_uring_cq_advance(ring, seen);
    }
    if (inflight) { /* could not drain: drop the ring so no read lands in freed memory later */
        io_uring_queue_exit(ring);
        free(pl->s->ring);
        pl->s->ring = NULL;
    }
    free(free_slots);
    free(slot_blk);
    return rc;
}

/* Table entry (hop h, seed) -> exact count, capped flag, and a block read
 * request when the entry points into the slab. */
static int lookup_one(plan *pl, MDB_txn *txn, uint64_t seed, unsigned h, size_t idx) {
    gsnap_snapshot *s = pl->s;
    gsnap_khop_result *r = pl->r;
    unsigned char kb[12];
    struct gsnap_rec_hdr hd;
    gsnap_snap__key(kb, h, seed);
    MDB_val k = {12, kb}, v;
    int rc, mr = gsnap_store__get(s->db, txn, s->dbi, &k, &v, "k-hop lookup");
    r->stats.lookups++;
    r->off[idx + 1] = 0;
    if (mr == GSNAP_NOTFOUND) return 0;
    if (mr) return mr;
    if ((rc = gsnap_snap__rec_verify(v.mv_data, v.mv_size)) ||
        (rc = gsnap_snap__rec_decode(v.mv_data, v.mv_size, &hd)))
        return gsnap_store__err(s->db, rc, "snapshot %s: table record (hop %u, node %llu) is corrupt",
                                s->name, h, (unsigned long long)seed);
    r->exact[idx] = hd.n_exact;
    r->capped[idx] = (hd.flags & GSNAP_REC_CAPPED) != 0;
    if (hd.slab_len == 0) return 0;
    /* A list never straddles a block: refuse any pointer that would
     * (also keeps a damaged length from sizing a huge allocation). */
    if (hd.slab_hop != h || hd.slab_len < GSNAP_SLAB_LIST_HDR || (hd.slab_len - GSNAP_SLAB_LIST_HDR) % 8 ||
        hd.slab_len > GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR ||
        hd.slab_off % GSNAP_SLAB_BLOCK + hd.slab_len > GSNAP_SLAB_BLOCK ||
        hd.slab_off / GSNAP_SLAB_BLOCK >= pl->blocks[h - 1])
        return gsnap_store__err(s->db, GSNAP_ECORRUPT, "snapshot %s: bad slab pointer (hop %u, node %llu)",
                                s->name, h, (unsigned long long)seed);
    r->off[idx + 1] = (hd.slab_len - GSNAP_SLAB_LIST_HDR) / 8;
    req *q = &pl->rq[pl->nrq++];
    q->node = seed;
    q->off = hd.slab_off;
    q->xxh = hd.slab_xxh;
    q->len = hd.slab_len;
    q->hop = h;
    q->idx = idx;
    return 0;
}

/* Every (seed, hop) entry, in the read view rd (kept open by the caller
 * until the blocks are read: `snapshot advance` never reuses a block that a
 * live reader's version points to). A sampled snapshot's block counts are
 * those of the version the view sees (advances move them). */
static int lookup_all(plan *pl, gsnap_read *rd, const uint64_t *seeds, size_t n, unsigned hops) {
    double t0 = gsnap_now();
    int rc = 0;
    MDB_txn *txn = gsnap_read__txn(rd);
    struct gsnap_cat vc = pl->s->cat;
    if (vc.kind == GSNAP_HOPSETS_SAMPLED && (rc = gsnap_snap__cat_get(pl->s->db, txn, pl->s->name, &vc))) return rc;
    memcpy(pl->blocks, vc.blocks, sizeof pl->blocks);
    for (size_t i = 0; i < n && rc == 0; i++)
        for (unsigned h = 1; h <= hops && rc == 0; h++)
            rc = lookup_one(pl, txn, seeds[i], h, i * hops + h - 1);
    pl->r->stats.lookup_seconds = gsnap_now() - t0;
    return rc;
}

/* Result offsets and id array; the requests sorted into distinct blocks in
 * file order. */
static int plan_blocks(plan *pl, size_t nl) {
    gsnap_khop_result *r = pl->r;
    for (size_t i = 0; i < nl; i++) r->off[i + 1] += r->off[i];
    if (!(r->ids = malloc((r->off[nl] ? r->off[nl] : 1) * sizeof *r->ids))) return GSNAP_ENOMEM;
    qsort(pl->rq, pl->nrq, sizeof *pl->rq, req_cmp);
    if (!(pl->blk_first = malloc((pl->nrq ? pl->nrq : 1) * sizeof *pl->blk_first))) return GSNAP_ENOMEM;
    for (size_t i = 0; i < pl->nrq; i++)
        if (i == 0 || pl->rq[i].hop != pl->rq[i - 1].hop || blk_of(&pl->rq[i]) != blk_of(&pl->rq[i - 1]))
            pl->blk_first[pl->nblk++] = i;
    return 0;
}

/* Read and take every planned block: io_uring with up to qd reads in flight,
 * or pread. Holds the snapshot's I/O lock (one ring per snapshot). */
static int read_blocks(plan *pl, unsigned qd, int force_pread, int buffered) {
    gsnap_snapshot *s = pl->s;
    gsnap_khop_result *r = pl->r;
    struct io_uring *ring = NULL;
    unsigned char *bufs = NULL;
    int rc = 0;
    pthread_mutex_lock(&s->io_lock);
    if (qd > pl->nblk) qd = (unsigned)pl->nblk;
    if (!force_pread) {
        rc = ring_get(s, qd, &ring);
        if (rc == GSNAP_ENOTSUP) rc = 0;
    }
    size_t nbuf = (size_t)(ring ? qd : 1) * GSNAP_SLAB_BLOCK;
    if (rc == 0 && posix_memalign((void **)&bufs, GSNAP_SLAB_BLOCK, nbuf)) rc = GSNAP_ENOMEM;
    if (rc == 0) {
        /* defined contents for memory checkers, which do not see the
         * kernel's io_uring writes */
        memset(bufs, 0, nbuf);
        r->stats.used_uring = ring != NULL;
        double t0 = gsnap_now();
        rc = ring ? read_uring(pl, ring, qd, buffered, bufs) : read_pread(pl, buffered, bufs);
        r->stats.read_seconds = gsnap_now() - t0;
    }
    pthread_mutex_unlock(&s->io_lock);
    free(bufs);
    return rc;
}

int gsnap_khop(gsnap_snapshot *s, const uint64_t *seeds, size_t n, unsigned hops,
               const gsnap_khop_options *opts, gsnap_khop_result **out) {
    static const gsnap_khop_options defaults = GSNAP_KHOP_OPTIONS_INIT;
    gsnap_khop_result *r = NULL;
    plan pl = {0};
    gsnap_read *rd = NULL;
    int rc = 0, owned = 0;
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!s || s->magic != GSNAP_SNAP_MAGIC || (n && !seeds)) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (opts->version < 1 || opts->version > GSNAP_KHOP_OPTIONS_VERSION)
        return gsnap_store__err(s->db, GSNAP_EINVAL, "k-hop options version %u unknown (1..%u)", opts->version,
                                GSNAP_KHOP_OPTIONS_VERSION);
    if (hops < 1 || hops > s->params.hops)
        return gsnap_store__err(s->db, GSNAP_EINVAL, "hops must be 1..%u for snapshot %s", s->params.hops, s->name);
    unsigned qd = opts->queue_depth ? opts->queue_depth : 64;
    if (qd > 4096) return gsnap_store__err(s->db, GSNAP_EINVAL, "queue depth must be 1..4096");
    const char *env = getenv("GSNAP_NO_URING");
    int force_pread = opts->force_pread || (env && *env == '1');
    int buffered = opts->buffered;
    size_t nl = n * hops;
    if (!(r = calloc(1, sizeof *r)) || !(r->off = calloc(nl + 1, sizeof *r->off)) ||
        !(r->capped = calloc(nl ? nl : 1, 1)) || !(r->exact = calloc(nl ? nl : 1, sizeof *r->exact)) ||
        !(pl.rq = malloc((nl ? nl : 1) * sizeof *pl.rq))) {
        rc = GSNAP_ENOMEM;
        goto out;
    }
    r->nseeds = n;
    r->hops = hops;
    pl.s = s;
    pl.r = r;
    if ((rc = gsnap_read__use(s->db, opts->version >= 2 ? opts->rd : NULL, &rd, &owned))) goto out;
    if ((rc = lookup_all(&pl, rd, seeds, n, hops))) goto out;
    if ((rc = plan_blocks(&pl, nl))) goto out;
    r->stats.used_direct = !buffered;
    for (unsigned h = 1; h <= hops; h++)
        if (!s->direct_ok[h]) r->stats.used_direct = 0;
    if (pl.nblk)
        rc = read_blocks(&pl, qd, force_pread, buffered);
    else
        r->stats.used_uring = !force_pread && !s->ring_failed;
out:
    if (owned) gsnap_read_end(rd);
    free(pl.rq);
    free(pl.blk_first);
    if (rc) gsnap_khop_result_free(r);
    else *out = r;
    return rc;
}
