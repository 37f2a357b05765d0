/*
 * snapshot/snapshot_int.h -- private to the snapshot module sources.
 *
 * INVARIANTS (see docs/snapshot.md and docs/format.md "## Snapshot")
 *   - A snapshot is visible (openable, listed as complete) only once its
 *     catalog record says COMPLETE; that record is written in the last write
 *     txn of a build, after every slab file is fsynced and every table entry
 *     committed. A crash mid-build leaves a BUILDING record that open refuses
 *     and the next create of the same name wipes.
 *   - Slab files are immutable once the snapshot is complete. Every 4 KiB
 *     block carries an XXH3 checksum seeded with its block number; a node's
 *     list never crosses a block boundary.
 *   - The (hop, node) table is rewritten only through LMDB write txns; a
 *     reader's txn sees one generation of every key it reads (MVCC), and the
 *     pages of values it can no longer see go back to LMDB's free list when
 *     the last reader that could see them ends.
 */
#ifndef GSNAP_SNAPSHOT_PRIV_H
#define GSNAP_SNAPSHOT_PRIV_H

#include "store/store.h"
#include "snapshot/snapshot.h"
#include <stdio.h>
#include <pthread.h>

#define GSNAP_SNAP_FORMAT 1u          /* slab + table record format */
#define GSNAP_CAT_FORMAT 2u           /* catalog record format (1: exact only, no caps) */
#define GSNAP_CAT_V1_SIZE 680u        /* format-1 record: fields up to build_seconds + xxh */
#define GSNAP_FREE_HOP 0xffffffffu    /* table keys (FREE_HOP, txnid): free slab blocks */
#define GSNAP_LIVE_HOP 0xfffffffeu    /* table keys (LIVE_HOP, hop): u32 live list bytes per block */
#define GSNAP_SLAB_BLOCK 4096u
#define GSNAP_SLAB_BLOCK_HDR 16u      /* magic u32, nlists u32, xxh3 u64 */
#define GSNAP_SLAB_LIST_HDR 12u       /* node u64, count u32 */
#define GSNAP_SLAB_CAP ((GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR - GSNAP_SLAB_LIST_HDR) / 8u) /* 508 */
#define GSNAP_SLAB_MAGIC_HDR 0x31485347u  /* "GSH1" block 0 */
#define GSNAP_SLAB_MAGIC_DATA 0x31425347u /* "GSB1" */
#define GSNAP_REC_HDR 72u             /* table value header bytes */
#define GSNAP_CAT_MAGIC 0x54435347u   /* "GSCT" */
#define GSNAP_CAT_TABLE "snapcat"
#define GSNAP_SNAP_STATUS_BUILDING 1u
#define GSNAP_SNAP_STATUS_COMPLETE 2u
#define GSNAP_REC_CAPPED 1u           /* N_h(v) was capped by sampling */
#define GSNAP_MAX_NAME 64

/* Purposes mixed into the sampling keys. */
#define GSNAP_PURPOSE_SLAB 0x534c4142u
#define GSNAP_PURPOSE_CACHE 0x43414348u

/* Catalog record (value of "snapcat"[name]); little endian, all fields
 * naturally aligned, copied with memcpy. */
struct gsnap_cat {
    uint32_t magic, format, status, hops;
    uint32_t fanouts[GSNAP_MAX_HOPS];
    double alpha;
    int64_t at_t;
    uint64_t at_version;
    uint32_t dir, cap;
    uint64_t seed;
    uint64_t generation;
    uint64_t created_unix;
    uint64_t nodes;                      /* keys per hop (nodes with N_1 != {}) */
    uint64_t slab_bytes;
    uint64_t exact_ids[GSNAP_MAX_HOPS];  /* sum over v of |N_h(v)| (exact) */
    uint64_t stored_ids[GSNAP_MAX_HOPS]; /* ids written to the slab of hop h */
    uint64_t capped[GSNAP_MAX_HOPS];     /* lists capped at hop h */
    uint64_t blocks[GSNAP_MAX_HOPS];     /* blocks in hop h's slab (with header) */
    double build_seconds;
    /* format 2 */
    uint32_t kind;                       /* GSNAP_HOPSETS_EXACT or _SAMPLED */
    uint32_t caps[GSNAP_MAX_HOPS];       /* sampled: c_1..c_k (non-increasing) */
    uint32_t pad;
    uint64_t snap_version;               /* advances committed */
    uint64_t free_blocks[GSNAP_MAX_HOPS];/* blocks of hop h on the free list */
    uint64_t xxh;                        /* XXH3 of every byte before it */
};

/* Table value header, decoded. */
struct gsnap_rec_hdr {
    uint32_t format, flags;
    uint64_t gen, version;
    uint32_t slab_hop, slab_len;
    uint64_t slab_off, slab_xxh;
    uint64_t n_exact;
    uint32_t ncache, degree;
    uint64_t xxh;
};

struct gsnap_snapshot {
    uint32_t magic;
    gsnap_db *db;
    char name[GSNAP_MAX_NAME + 1];
    MDB_dbi dbi;
    gsnap_snapshot__params params;
    struct gsnap_cat cat;
    gsnap_snapshot_info info;            /* catalog record as of open */
    int fd_direct[GSNAP_MAX_HOPS + 1];   /* O_DIRECT fds (or buffered when refused) */
    int direct_ok[GSNAP_MAX_HOPS + 1];
    int fd_buf[GSNAP_MAX_HOPS + 1];      /* buffered fds */
    pthread_mutex_t io_lock;             /* guards the ring */
    void *ring;                          /* struct io_uring *, lazily set up */
    unsigned ring_qd;
    int ring_failed;
};
#define GSNAP_SNAP_MAGIC 0x736e6170u

/* ---- names, keys, records (record.c); catalog (table.c) ---- */
void gsnap_snap__key(unsigned char k[12], unsigned hop, uint64_t node);
int gsnap_snap__valid_name(const char *name);
int gsnap_snap__table_name(const char *name, char *buf, size_t len);
int gsnap_snap__dir(gsnap_db *db, const char *name, char *buf, size_t len);
int gsnap_snap__slab_path(gsnap_db *db, const char *name, unsigned hop, char *buf, size_t len);
void gsnap_snap__rec_encode(unsigned char *out, const struct gsnap_rec_hdr *h, const uint64_t *ids);
int gsnap_snap__rec_decode(const void *val, size_t len, struct gsnap_rec_hdr *h);
int gsnap_snap__rec_verify(const void *val, size_t len);
void gsnap_snap__cat_seal(struct gsnap_cat *c);
int gsnap_snap__cat_get(gsnap_db *db, MDB_txn *txn, const char *name, struct gsnap_cat *c);
int gsnap_snap__cat_put(gsnap_db *db, MDB_txn *txn, const char *name, const struct gsnap_cat *c);
int gsnap_snap__remove_files(gsnap_db *db, const char *name);
int gsnap_snap__pre_open(gsnap_db *db, const char *name);
/* claim.c: claim the name (exclusive non-blocking flock on
 * snapshots/.NAME.lock); when another holds it, busy_rc (GSNAP_EEXIST for
 * create, GSNAP_EBUSY for advance and drop) with a message. *fd: the claim,
 * released by gsnap_snap__release. */
int gsnap_snap__claim(gsnap_db *db, const char *name, int busy_rc, int *fd);
void gsnap_snap__release(int fd);
/* table.c: drop without taking the claim (the caller holds it). */
int gsnap_snap__drop_claimed(gsnap_db *db, const char *name);

/* ---- deterministic sampling (sample.c) ---- */
uint64_t gsnap_snap__sample_key(uint64_t seed, unsigned hop, uint64_t node, uint64_t gen,
                                uint32_t purpose);
/* Choose min(n, m) of ids[0..n) uniformly without replacement: the m ids
 * with the smallest XXH3(id, key) (ties by id). out gets them ascending.
 * scratch: caller's growable buffer of 16-byte entries. */
int gsnap_snap__select(const uint64_t *ids, size_t n, size_t m, uint64_t key, uint64_t *out,
                       void **scratch, size_t *scratch_cap);

/* ---- pair files and the external sorter (pairs.c) ---- */
typedef struct { uint64_t a, b; } gsnap_pair;

typedef struct {
    FILE *f;
    char *path;
    uint64_t n;
} gsnap_pfile;
int gsnap_pf__create(gsnap_pfile *pf, const char *path);
int gsnap_pf__write(gsnap_pfile *pf, uint64_t a, uint64_t b);
int gsnap_pf__rewind(gsnap_pfile *pf); /* flush, then read from the start */
/* 1: *p filled, 0: end, <0: error */
int gsnap_pf__read(gsnap_pfile *pf, gsnap_pair *p);
void gsnap_pf__close(gsnap_pfile *pf, int unlink_it);

typedef struct gsnap_sorter gsnap_sorter;
/* Pairs sorted by (a, b); budget: bytes of memory to use (>= 1 MiB);
 * past it sorted runs spill to files in tmpdir. dedup drops equal pairs. */
int gsnap_sorter__new(const char *tmpdir, size_t budget, int dedup, gsnap_sorter **out);
/* Keep only the first `cap` pairs of every key a (after dedup): a bottom-c
 * reduction when b is a score. 0 = keep all (the default). */
void gsnap_sorter__key_cap(gsnap_sorter *s, uint64_t cap);
int gsnap_sorter__add(gsnap_sorter *s, uint64_t a, uint64_t b);
int gsnap_sorter__finish(gsnap_sorter *s);
int gsnap_sorter__next(gsnap_sorter *s, gsnap_pair *p); /* 1, 0 end, <0 */
uint64_t gsnap_sorter__spilled_runs(const gsnap_sorter *s);
void gsnap_sorter__free(gsnap_sorter *s);
void gsnap_sort__pairs(gsnap_pair *a, gsnap_pair *tmp, size_t n);

/* ---- the sampled kind (sampled.c) ---- */
/* The snapshot-wide order of the sampled kind: score(x) = M(x ^ K), M the
 * XXH64 avalanche (a bijection of 64-bit words), K = order key of the seed.
 * Smaller score = earlier; scores of distinct ids are distinct. */
uint64_t gsnap_snap__order_key(uint64_t seed);
uint64_t gsnap_snap__score(uint64_t x, uint64_t key);
uint64_t gsnap_snap__unscore(uint64_t s, uint64_t key);
/* KMV size estimate of R_h(v) from a capped list: c, largest kept score. */
uint64_t gsnap_snap__kmv(uint32_t c, uint64_t smax);
/* Bottom-c union of sorted score lists: the state of one node's merge. */
typedef struct {
    uint64_t *s;      /* kept scores ascending, capacity c */
    uint32_t n, c;
    int overflow;     /* a distinct candidate was dropped: |union| > c */
} gsnap_botc;
/* Merge sorted distinct scores in[0..n) into the bottom-c set. */
void gsnap_botc__merge(gsnap_botc *b, const uint64_t *in, size_t n);
/* Emitted per (hop, v) with a nonempty list: ids ascending, n_est =
 * |R_h(v)| (exact when !capped), capped = the list is a strict subset. */
typedef int (*gsnap_sampled_emit)(void *ctx, unsigned hop, uint64_t v, const uint64_t *ids, size_t n,
                                  uint64_t n_est, int capped);
typedef struct {
    unsigned hops;
    uint32_t caps[GSNAP_MAX_HOPS];
    uint64_t key;          /* order key */
    size_t budget;
    const char *tmp;
    uint64_t bound;        /* node id bound (0: unknown -> external path) */
    int force_external;
    gsnap_sampled_emit emit;
    void *ctx;
    gsnap_progress_fn progress;  /* "join", hop done, hops (may be NULL) */
    void *progress_ctx;
    uint64_t spilled_runs; /* out */
    int used_memory;       /* out: 1 in-memory join, 0 sort-merge */
} gsnap_sampled_job;
/* D_1..D_k from A = {(v, x)} sorted, distinct (x in N_in(v), self loops
 * included). Lists are emitted hop by hop, in node order. */
int gsnap_snap__sampled_build(gsnap_sampled_job *j, gsnap_pfile *A, uint64_t nodes);
/* check_sampled.c: `check` of a sampled snapshot (copy-on-write blocks). */
int gsnap_snap__check_sampled(gsnap_db *db, const char *name, const struct gsnap_cat *c, MDB_txn *txn, MDB_dbi dbi,
                              gsnap_reporter *rep);

/* ---- slab files (slab.c) ---- */
typedef struct {
    int fd;
    char *path;
    unsigned hop;
    unsigned char *blk;      /* current block being filled */
    uint32_t used, nlists;
    uint64_t block_no;       /* number of the current block */
    uint64_t nlists_total, nids_total;
    uint64_t header_fields[4];
} gsnap_slab_writer;
typedef struct {
    uint64_t off;
    uint32_t len;
    uint64_t xxh;
} gsnap_slab_ptr;
int gsnap_slab__writer_open(gsnap_slab_writer *w, const char *path, unsigned hop,
                            const gsnap_snapshot__params *p);
/* ids ascending, n <= GSNAP_SLAB_CAP */
int gsnap_slab__writer_add(gsnap_slab_writer *w, uint64_t node, const uint64_t *ids, uint32_t n,
                           gsnap_slab_ptr *ptr);
int gsnap_slab__writer_finish(gsnap_slab_writer *w, uint64_t *blocks); /* fsync + close */
void gsnap_slab__writer_free(gsnap_slab_writer *w);
/* Verify a block's checksum (block_no seeds it): 0 or GSNAP_ECHECKSUM. */
int gsnap_slab__block_verify(const unsigned char *blk, uint64_t block_no);
uint64_t gsnap_slab__block_xxh(const unsigned char *blk, uint64_t block_no);
/* Find the list at byte offset `off` (file offset) inside a verified block,
 * check node, length and list checksum; ids copied to out (count = *n). */
int gsnap_slab__list_at(const unsigned char *blk, uint64_t off, uint64_t node,
                        const gsnap_slab_ptr *ptr, uint64_t *out, uint32_t *n);
/* Parse and verify header block 0. */
int gsnap_slab__header_check(const unsigned char *blk, unsigned hop, uint64_t *nblocks);

/* ---- build (build.c) ---- */
/* Adjacency source: calls fn(ctx, node, nbrs, n) per node ascending, with
 * neighbour-sorted instances (duplicates allowed). */
typedef int (*gsnap_snap_source)(void *src_ctx, gsnap_adj_fn fn, void *fn_ctx);

/* ---- slab files of an open snapshot (files.c) ---- */
int gsnap_snap__open_files(gsnap_snapshot *s);
void gsnap_snap__close_files(gsnap_snapshot *s);


#endif
