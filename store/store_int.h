/*
 * store/store_int.h -- private to the store module (store/ .c files).
 *
 * ON-DISK LAYOUT (one LMDB environment per database directory; format
 * GSNAP_STORE_FORMAT, recorded in gs.meta and checked on open):
 *
 *   gs.meta    "store" -> struct gsnap_meta (format, keep, latest version,
 *              next run id, counters). Updated in every commit txn.
 *   gs.runs    run id (u64 BE) -> struct gsnap_run_info: the catalog of live
 *              sorted runs (an LSM tree kept inside LMDB).
 *   gs.data    run id (u64 BE) | dir (u8) | first node (u64 BE) | chunk no
 *              (u32 BE)  ->  chunk: struct gsnap_chunk_hdr + the payload: nrec
 *              records compactly encoded (GSC2, format 3, codec.c), or nrec
 *              raw records (GSC1, formats 1-2, still read).
 *   gs.changes version (u64 BE) | dir (u8) -> sorted unique node ids (u64 LE):
 *              the nodes whose adjacency in `dir` that version touched.
 *   gs.dense   run id (u64 BE) | dir (u8) | kind (u8: 0 records, 1 index)
 *              -> the base run in dense layout: all records of `dir` in one
 *              value, and a node-indexed offset array (CSR) into them
 *              (format 4, GSD3/GSI2: each node's records as one body of
 *              bit-packed columns, byte offsets; format 3, GSD2/GSI2: each
 *              node's records as one compact varint body; formats 1-2,
 *              GSD1/GSI1: raw records).
 *   gs.bloom   run id (u64 BE) | dir (u8) -> blocked Bloom filter of the nodes
 *              that run holds records for in `dir` (queries skip the run's
 *              B-tree seek when the node is absent).
 *
 * A record (in memory and in GSC1 chunks and dense values 32 bytes, little
 * endian, read with memcpy: LMDB values are not aligned): node, nbr, t, vop = version << 1 | is_delete. `node` is the
 * node the adjacency belongs to (dst for IN, src for OUT), `nbr` the other end.
 * Within a run and direction, records are sorted by (node, nbr, t, version),
 * ties in input order; chunks never mix directions.
 *
 * INVARIANTS
 *   - Versions are dense: 1, 2, ... Each committed batch is exactly one
 *     version, written as exactly one new run in one write txn together with
 *     its gs.changes entries, the meta update and the writes of the batch's
 *     extensions (features/ rows; the run is empty when the batch holds no
 *     edges). A reader's txn therefore sees whole versions only.
 *   - Runs hold disjoint version ranges. Merging runs writes a new run (new,
 *     larger id, appended with MDB_APPEND) and deletes the inputs in the same
 *     txn: a reader sees either the inputs or the output, never both.
 *   - At most one run is the BASE (level GSNAP_LEVEL_BASE): it holds the
 *     oldest versions and is stored dense (CSR: O(1) node lookup) when node
 *     ids are compact enough, chunked otherwise. The other runs are deltas,
 *     merged among themselves in tiers and into the base once they hold
 *     1/GSNAP_BASE_RATIO of its size (1: as many records as the base).
 *   - History is never discarded: deletes are events, so any (T, V) can be
 *     answered. Space of merged-away runs returns to LMDB's free list once
 *     no reader txn can see it (LMDB MVCC).
 */
#ifndef GSNAP_STORE_INT_H
#define GSNAP_STORE_INT_H

#include "store/store.h"
#include <assert.h>
#include <pthread.h>

#define GSNAP_STORE_FORMAT 4u     /* 4: bit-packed dense bodies (GSD3); 3: compact chunks (GSC2); 2: version log, horizon */
#define GSNAP_STORE_FORMAT_OLDEST 1u /* formats 1-2 are read and upgraded on first commit */
#define GSNAP_META_V1_BYTES 72
#define GSNAP_META_MAGIC 0x50414e5347u /* "GSNAP" */
#define GSNAP_CHUNK_MAGIC 0x31435347u  /* "GSC1": raw 32-byte records (formats 1-2) */
#define GSNAP_CHUNK2_MAGIC 0x32435347u /* "GSC2": compact records (codec.c, format 3) */
#define GSNAP_CHUNK2_PAYLOAD 16320     /* largest GSC2 payload accepted on read */
#define GSNAP_LEVEL_BASE 1000u         /* the level of the base run */
#define GSNAP_BASE_RATIO 1             /* deltas merge into the base once as big as it */
#define GSNAP_DENSE_MAGIC 0x31445347u  /* "GSD1": raw records (formats 1-2) */
#define GSNAP_INDEX_MAGIC 0x31495347u  /* "GSI1": record offsets */
#define GSNAP_DENSE2_MAGIC 0x32445347u /* "GSD2": compact node bodies (format 3) */
#define GSNAP_INDEX2_MAGIC 0x32495347u /* "GSI2": byte offsets of the bodies (GSD2 and GSD3) */
#define GSNAP_DENSE3_MAGIC 0x33445347u /* "GSD3": bit-packed node bodies (format 4) */
/* GSD3: zero bytes after the last body, inside the checksummed payload, so
 * that a field's 8- or 16-byte load never reads past the value. */
#define GSNAP_DENSE3_PAD 16u
/* GSD3: the least bits a record of a body of 2 or more takes (wn + wt + wv):
 * a body's count is then at most its bytes, as GSD2's is at most a third of
 * them, so a damaged count cannot ask a reader for more room than that. */
#define GSNAP_DENSE3_MIN_BITS 8u
#define GSNAP_CHUNK_RECS 510           /* 16 + 510*32 = 16336 B: 4 LMDB pages */
#define GSNAP_REC_BYTES 32
#define GSNAP_DATA_KEY 21
#define GSNAP_MAX_TABLES 64
#define GSNAP_CHUNK_CACHE 16384        /* verified-chunk hashes kept per db */

struct gsnap_meta {
    uint64_t magic;
    uint32_t format;
    uint32_t keep;
    uint64_t version;      /* latest committed version */
    uint64_t next_run;     /* next run id */
    uint64_t edge_records; /* events committed */
    uint64_t deletes;
    int64_t min_t, max_t;
    uint64_t node_bound;   /* max node id + 1 */
    /* format 2 */
    uint64_t horizon;      /* retention: first queryable version (0: none) */
    int64_t horizon_t;     /* retention: earliest queryable at_t (INT64_MIN: none) */
};

#define GSNAP_RUN_HAS_DELETES 1u
#define GSNAP_RUN_DENSE 2u /* stored in gs.dense, not gs.data */
#define GSNAP_RUN_DAMAGED 4u /* failed verification in a merge: merges leave it
                                alone (readers still verify and fail on the
                                damaged part); reported by stats and check */
struct gsnap_run_info {
    uint32_t level;
    uint32_t flags;
    uint64_t nrec;        /* records, both directions */
    uint64_t nchunks;     /* chunks in gs.data (0 when dense) */
    uint64_t min_ver, max_ver;
    uint64_t nrec_dir[2]; /* records per direction */
    uint64_t dense_nodes; /* dense: index entries - 1 (node id bound) */
};

/* Header of a dense value (records or index). */
struct gsnap_dense_hdr {
    uint32_t magic;
    uint32_t reserved;
    uint64_t count; /* records, or index entries */
    uint64_t xxh3;  /* of the payload */
    uint64_t pad;   /* reserved, 0 */
};

struct gsnap_chunk_hdr {
    uint32_t magic;
    uint32_t nrec;
    uint64_t xxh3; /* of the nrec records */
};

/* A record as held in memory. */
typedef struct {
    uint64_t node, nbr;
    int64_t t;
    uint64_t vop; /* version << 1 | is_delete */
} gsnap_rec;

/* codec.c: the compact encoding of a chunk's records (see the file). */
typedef struct {
    const unsigned char *p, *end, *gend; /* next byte, payload end, group body end */
    uint64_t bvop, bt;                   /* the chunk's bases */
    uint64_t node, nbr, t;               /* decoder state */
    uint64_t left;                       /* records not yet decoded or skipped */
    uint64_t gleft;                      /* records left in the current group */
    int started;
    const char *why;                     /* what was malformed */
} gsnap_codec_cur;
/* Bytes of v as a varint (1..10). */
static inline size_t gsnap_codec__varint_len(uint64_t v) {
    return ((size_t)(64 - __builtin_clzll(v | 1)) + 6) / 7;
}
/* Upper bound of the bytes record r adds to a chunk whose records so far
 * end with prev_in_chunk (NULL: r is the first) and start with first. */
size_t gsnap_codec__rec_bound(const gsnap_rec *r, const gsnap_rec *prev_in_chunk, const gsnap_rec *first);
/* Encode n records (node ascending) into out, which has room for cap +
 * GSNAP_CODEC_SLACK bytes (scratch): the payload's length, 0 when it does
 * not fit in cap. */
#define GSNAP_CODEC_SLACK 64
size_t gsnap_codec__encode(const gsnap_rec *r, size_t n, unsigned char *out, size_t cap);
/* Decoding: open (0, or -1 with c->why), then next (1 a record, 0 the end,
 * all bytes and records accounted for, -1 malformed with c->why). skip_to
 * positions before the first record of the first group with node >= `node`
 * (1; *skipped records passed over) or at the end (0), -1 malformed. */
int gsnap_codec__open(gsnap_codec_cur *c, const unsigned char *payload, size_t len, uint64_t nrec);
int gsnap_codec__next(gsnap_codec_cur *c, gsnap_rec *r);
int gsnap_codec__skip_to(gsnap_codec_cur *c, uint64_t node, uint64_t *skipped);
/* The rest of the current group (c->gleft records, after a next that
 * returned 1) into r[0..gleft): their count, or -1 malformed (c->why). */
int64_t gsnap_codec__group_rest(gsnap_codec_cur *c, gsnap_rec *r);
/* The same, keeping only the records with t <= at_t and version <= as_of
 * (r still needs room for all c->gleft): the number kept, or -1 malformed
 * (c->why). *del |= 1 when a kept record is a delete. */
int64_t gsnap_codec__group_take(gsnap_codec_cur *c, gsnap_rec *r, int64_t at_t, uint64_t as_of, uint64_t *del);
/* Decode a whole payload of nrec records into out[nrec]: 0, or
 * GSNAP_ECORRUPT with *why. */
int gsnap_codec__decode(const unsigned char *payload, size_t len, uint64_t nrec, gsnap_rec *out,
                        const char **why);
/* 1 when the payload is malformed (c->why says how), 0 when it decodes. */
int gsnap_codec__malformed(const unsigned char *payload, size_t len, uint64_t nrec, gsnap_codec_cur *c);

typedef struct {
    uint64_t id;
    struct gsnap_run_info info;
} gsnap_run;

struct gsnap_named_table {
    char name[96];
    MDB_dbi dbi;
};

struct gsnap_db {
    uint32_t magic;
    char *path;
    MDB_env *env;
    MDB_dbi meta_dbi, runs_dbi, data_dbi, changes_dbi, bloom_dbi, dense_dbi;
    MDB_dbi vlog_dbi;  /* gs.vlog (format 2) */
    int has_vlog;      /* gs.vlog exists (a read-only format-1 db may lack it) */
    int dir_fd;        /* the directory, flock(LOCK_SH) while open (compact swaps files) */
    unsigned keep;
    int read_only;
    gsnap_sync_mode sync;
    pthread_mutex_t write_lock;   /* one write txn at a time in this process */
    pthread_mutex_t lock;         /* guards tables[], pool[], batch_open, the map gate */
    /* the map gate (mapgate.c): txns holding the map, threads waiting to
     * remap it, a failed remap; gate_cv signals both ways */
    int map_holds, remap_waiting, map_lost;
    int gate_queued;        /* threads waiting at the gate for a remap to pass */
    uint64_t gate_epoch;    /* bumped when a stuck remap lets the queued threads in */
    pthread_cond_t gate_cv;
    /* the shrink's writer gate (swap.c): writes wait while it is closed;
     * writes_in counts the writes past it (guarded by lock, gate_cv) */
    int writes_closed, writes_in;
    int shrinking;     /* a gsnap_db_shrink of this handle runs (db->lock) */
    uint64_t swap_gen; /* environments swapped in by shrinks (db->lock): table handles of an older one are void */
    int batch_open;
    struct gsnap_batch *batch;    /* the open batch (aborted by close) */
    uint64_t dir_dev, dir_ino;    /* the directory (one open per process) */
    struct gsnap_named_table tables[GSNAP_MAX_TABLES];
    int ntables;
    MDB_txn *pool[8]; /* reset read txns ready to renew */
    int npool;
    /* Whole values verified once in this process (dense base values, Bloom
     * filters: too big to hash on every read view). Keys (run id << 2 |
     * kind << 1 | dir); run ids are never reused, so an entry stays true.
     * Guarded by `lock`; least recently used first, dropped when full. */
    uint64_t verified[64];
    int nverified;
    /* Chunks verified once in this process (point queries): a direct-mapped
     * table of XXH3 hashes of chunk keys (run ids are never reused and a
     * run's chunks never change, so an entry stays true). Atomic loads and
     * stores, no lock; a collision only costs a re-verification. */
    uint64_t chunk_ok[GSNAP_CHUNK_CACHE];
    /* bit 1 << dir: a point query of direction dir ran in this process, or
     * a reader said it will make many (gsnap_store__index_runs). warm.c
     * warms, and fence.c copies, only the directions read (atomic). */
    unsigned queried;
    uint64_t warm_run; /* newest run whose chunks warm.c verified (committing thread) */
    struct gsnap_fences *fences; /* fence indexes of chunked runs (fence.c; atomic pointer) */
    uint64_t fence_misses; /* seeks of chunked runs without an index since the last lazy build (atomic) */
    pthread_mutex_t fence_build_lock; /* held while a thread builds indexes (fence.c: one builder at a time) */
    uint64_t fence_run;    /* the newest run id the commits' builds were for (under fence_build_lock; fence.c) */
    uint64_t fence_held;   /* bytes of chunk copies the indexes hold (atomic; fence.c) */
    uint64_t fence_budget; /* at most this many (gsnap_db_options.read_cache_bytes) */
    unsigned merge_fanout; /* delta runs per level before they merge (gsnap_db_options.merge_fanout) */
};
#define GSNAP_DB_MAGIC 0x67736462u
#define GSNAP_DB_DEAD 0x64656164u  /* a closed handle (debug builds keep a few) */

/* The GSNAP_KEEP_* flag of direction dir (GSNAP_DIR_IN or GSNAP_DIR_OUT). */
static inline unsigned gsnap_store__keep_bit(unsigned dir) {
    return dir == GSNAP_DIR_IN ? GSNAP_KEEP_IN : GSNAP_KEEP_OUT;
}
/* The database keeps the records of direction dir. */
static inline int gsnap_store__kept(const gsnap_db *db, unsigned dir) {
    return (db->keep & gsnap_store__keep_bit(dir)) != 0;
}
/* Note that this process reads direction dir (db->queried). */
static inline void gsnap_store__note_read(gsnap_db *db, unsigned dir) {
    unsigned bit = 1u << (dir & 1);
    if (!(__atomic_load_n(&db->queried, __ATOMIC_RELAXED) & bit)) __atomic_fetch_or(&db->queried, bit, __ATOMIC_RELAXED);
}
/* Direction dir has been read in this process (db->queried). */
static inline int gsnap_store__dir_read(const gsnap_db *db, unsigned dir) {
    return (__atomic_load_n(&db->queried, __ATOMIC_RELAXED) >> (dir & 1)) & 1;
}
/* 0 for a direction the database keeps; else GSNAP_EINVAL (neither IN nor
 * OUT) or GSNAP_ENOTSUP (not kept), with a message (query.c). */
int gsnap_store__check_dir(gsnap_db *db, gsnap_dir dir);
/* batch.c: detach the open batch from a db being closed (db->lock held). */
void gsnap_batch__orphan(struct gsnap_batch *b);

/* Blocked Bloom filter: 64-byte blocks, 4 bits per key in one block. */
#define GSNAP_BLOOM_MAGIC 0x31424d47u /* "GMB1" */
#define GSNAP_BLOOM_BITS_PER_KEY 16
struct gsnap_bloom_hdr {
    uint32_t magic;
    uint32_t nblocks;
    uint64_t xxh3; /* of the blocks */
};
/* A dense run's values as seen by a txn (pointers into the map). */
typedef struct {
    const unsigned char *recs; /* records (GSD1), or the node bodies (GSD2) */
    uint64_t nrec;
    const unsigned char *idx;  /* u64 LE offsets, nidx entries */
    uint64_t nidx;
    int loaded;
    int compact;               /* GSD2 or GSD3: recs holds plen bytes of encoded bodies */
    int packed;                /* GSD3: the bodies are bit-packed columns */
    uint64_t plen, bvop, bt;   /* GSD2/3: body bytes, the bases of the deltas */
} gsnap_dense_ref;
int gsnap_dense__load(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, gsnap_dense_ref *d,
                      int verify);
/* [*begin, *end) = the records of `node` in a loaded dense run (GSD2: the
 * byte range of its body in d->recs). */
void gsnap_dense__range(const gsnap_dense_ref *d, uint64_t node, uint64_t *begin, uint64_t *end);

/* One varint (codec.c's encoding): 0, or -1 when truncated or malformed. */
static inline int gsnap_codec__get(const unsigned char **pp, const unsigned char *end, uint64_t *v) {
    const unsigned char *p = *pp;
    if (p < end && *p < 0x80) { /* the common one-byte case */
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= 10) { /* room for the longest: no bound check per byte */
        uint64_t x = 0, b;
        unsigned i = 0;
        do {
            b = p[i];
            x |= (b & 0x7f) << (7 * i);
            i++;
        } while (b >= 0x80 && i < 10);
        /* unterminated, bits beyond 64, or overlong (a trailing zero byte) */
        if (b >= 0x80 || (i == 10 && b > 1) || (b == 0 && i > 1)) return -1;
        *v = x;
        *pp = p + i;
        return 0;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end) return -1;
        unsigned char b = *p++;
        if (shift == 63 && b > 1) return -1; /* bits beyond 64 */
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            if (b == 0 && shift > 0) return -1; /* overlong: a trailing zero byte */
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1;
}
static inline uint64_t gsnap_codec__unzz(uint64_t z) { return (z >> 1) ^ (uint64_t)(-(int64_t)(z & 1)); }
static inline uint64_t gsnap_codec__zz(uint64_t d) { return (d << 1) ^ (uint64_t)(-(int64_t)(d >> 63)); }
/* Write v as a varint at p (at most 10 bytes); returns its length. */
static inline size_t gsnap_codec__put(unsigned char *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* Skip two varints (a record's t and vop deltas) with the checks of
 * gsnap_codec__get: 0, or -1 when truncated or malformed. With 8 bytes of
 * room, one load finds both ends when they fit in it (the common case). */
static inline int gsnap_codec__skip2(const unsigned char **pp, const unsigned char *end) {
    const unsigned char *p = *pp;
    if (end - p >= 8) {
        uint64_t w, m;
        __builtin_memcpy(&w, p, 8); /* little endian (as the whole format) */
        m = ~w & 0x8080808080808080ull; /* bytes that end a varint */
        if (m & (m - 1)) {
            unsigned a = (unsigned)__builtin_ctzll(m) >> 3, b = (unsigned)__builtin_ctzll(m & (m - 1)) >> 3;
            if ((a > 0 && p[a] == 0) || (b > a + 1 && p[b] == 0)) return -1; /* overlong */
            *pp = p + b + 1;
            return 0;
        }
    }
    uint64_t v;
    if (gsnap_codec__get(pp, end, &v)) return -1;
    return gsnap_codec__get(pp, end, &v);
}
/* Three varints (a group header) into v[0..2], with the checks of
 * gsnap_codec__get: 0, or -1. With 8 bytes of room, one load decodes them
 * when each takes 1-2 bytes (the common case). */
static inline int gsnap_codec__get3(const unsigned char **pp, const unsigned char *end, uint64_t v[3]) {
    const unsigned char *p = *pp;
    if (end - p >= 8) {
        uint64_t w, m, m1, m2;
        __builtin_memcpy(&w, p, 8);
        m = ~w & 0x8080808080808080ull;
        m1 = m & (m - 1);
        m2 = m1 & (m1 - 1);
        if (m2) {
            unsigned e[3] = {(unsigned)__builtin_ctzll(m) >> 3, (unsigned)__builtin_ctzll(m1) >> 3,
                             (unsigned)__builtin_ctzll(m2) >> 3};
            unsigned s = 0, ok = 1;
            for (int i = 0; i < 3; i++) { /* varint i: bytes s..e[i] */
                uint64_t lo = (w >> (8 * s)) & 0x7f;
                ok &= e[i] - s <= 1 && (e[i] == s || p[e[i]] != 0);
                v[i] = e[i] == s ? lo : lo | ((w >> (8 * s + 1)) & 0x3f80);
                s = e[i] + 1;
            }
            if (ok) {
                *pp = p + s;
                return 0;
            }
        }
    }
    if (gsnap_codec__get(pp, end, &v[0]) || gsnap_codec__get(pp, end, &v[1])) return -1;
    return gsnap_codec__get(pp, end, &v[2]);
}
/* One record's neighbour delta (*d), its t and vop deltas skipped: 0, or -1
 * when truncated or malformed. With 8 bytes of room, one load finds the
 * three varints' ends when they fit in it and the delta takes 1-2 bytes. */
static inline int gsnap_codec__rec_nbr(const unsigned char **pp, const unsigned char *end, uint64_t *d) {
    const unsigned char *p = *pp;
    if (end - p >= 8) {
        uint64_t w, m, m1, m2;
        __builtin_memcpy(&w, p, 8);
        m = ~w & 0x8080808080808080ull; /* bytes that end a varint */
        m1 = m & (m - 1);
        m2 = m1 & (m1 - 1);
        unsigned a = (unsigned)__builtin_ctzll(m | (1ull << 63)) >> 3;
        if (m2 && a <= 1) {
            unsigned b = (unsigned)__builtin_ctzll(m1) >> 3, c = (unsigned)__builtin_ctzll(m2) >> 3;
            if ((a == 1 && p[1] == 0) || (b > a + 1 && p[b] == 0) || (c > b + 1 && p[c] == 0)) return -1;
            *d = a == 0 ? (w & 0x7f) : ((w & 0x7f) | ((w >> 1) & 0x3f80));
            *pp = p + c + 1;
            return 0;
        }
    }
    if (gsnap_codec__get(pp, end, d)) return -1;
    return gsnap_codec__skip2(pp, end);
}
/* The neighbour ids of the records in [*pp, end) (a group or dense body, or
 * the rest of one after a record with neighbour *nbr; 0 at a body's start),
 * without decoding t and vop: appended to out[*k..] (room for (end - *pp) / 3
 * more: a record takes 3 bytes at least), an id repeated by the next records
 * once only (records are in neighbour order; with have_last the first is
 * also compared with out[*k - 1]). *recs counts the records. 0, or -1 when a
 * varint is malformed or runs past end. */
static inline int gsnap_codec__ids(const unsigned char **pp, const unsigned char *end, uint64_t *nbr,
                                   uint64_t *out, size_t *k, int have_last, uint64_t *recs) {
    const unsigned char *p = *pp;
    uint64_t x = *nbr, r = 0;
    size_t n = *k;
    if (!have_last && p < end) { /* the first record: no id before it */
        uint64_t d;
        if (gsnap_codec__rec_nbr(&p, end, &d)) return -1;
        out[n++] = x += d;
        r++;
    }
    while (p < end) {
        uint64_t d;
        if (gsnap_codec__rec_nbr(&p, end, &d)) return -1;
        x += d;
        r++;
        if (x != out[n - 1]) out[n++] = x;
    }
    *pp = p;
    *nbr = x;
    *k = n;
    *recs = r;
    return 0;
}

/* GSD3 (format 4): a node's body is
 *   varint n (records, >= 1), varint nbr_min, varint zz(t_min - bt),
 *   varint zz(vop_min - bvop), and when n >= 2: bytes wn, wt, wv (0..64,
 *   their sum at least GSNAP_DENSE3_MIN_BITS) and three bit columns, LSB
 *   first, no padding between them: n fields of wn bits (nbr - nbr_min),
 *   n of wt (t - t_min, unsigned), n of wv (vop - vop_min); the body ends
 *   at the byte holding the last bit.
 * Every field sits at a computed bit offset: record i is read without the
 * records before it, and a column is read alone (the ids need only nbr). */
static inline uint64_t gsnap_bits__get(const unsigned char *base, uint64_t bit, unsigned w) {
    uint64_t x;
    __builtin_memcpy(&x, base + (bit >> 3), 8);
    unsigned s = (unsigned)(bit & 7);
    if (__builtin_expect(w <= 57, 1)) return (x >> s) & ((1ull << w) - 1); /* w = 0 gives 0 */
    uint64_t y; /* 58..64 bits from up to 9 bytes */
    __builtin_memcpy(&y, base + (bit >> 3) + 8, 8);
    uint64_t v = s ? (x >> s) | (y << (64 - s)) : x;
    return w == 64 ? v : v & ((1ull << w) - 1);
}

/* The records of one node of a dense run, any layout. */
typedef struct {
    const gsnap_dense_ref *d;
    const unsigned char *p, *end; /* GSD2: the rest of the node's body */
    uint64_t j, e;                /* GSD1: record index range; GSD3: next record, records */
    uint64_t node, nbr, t;        /* GSD3: nbr and t are the minima */
    const unsigned char *bits;    /* GSD3: the columns */
    uint64_t vmin, bn, bt, bv;    /* GSD3: the next record's bit offsets */
    unsigned wn, wt, wv;
    int bad;                      /* GSD3: the body's head does not decode */
} gsnap_dense_it;
/* GSD3: the head of the body [p, end) into it; 0, or -1 when it is not what
 * the writer produces (n of 0 or beyond the run's records, a width over 64,
 * widths adding up to less than GSNAP_DENSE3_MIN_BITS, column bytes that do
 * not end exactly at the body's end, bits set after the last field). */
int gsnap_dense__packed_head(gsnap_dense_it *it, const unsigned char *p, const unsigned char *end);
static inline void gsnap_dense__it(const gsnap_dense_ref *d, uint64_t node, gsnap_dense_it *it) {
    uint64_t b, e;
    gsnap_dense__range(d, node, &b, &e);
    it->d = d;
    it->node = node;
    it->nbr = 0;    /* a body's first nbr is a delta from 0, */
    it->t = d->bt;  /* its first t from the base */
    it->j = b;
    it->e = e;
    it->p = d->compact ? d->recs + b : NULL;
    it->end = d->compact ? d->recs + e : NULL;
    it->bad = 0;
    if (d->packed) { /* no records: e = 0, the rest never read but defined */
        it->j = it->e = 0;
        it->bits = NULL;
        it->vmin = it->bn = it->bt = it->bv = 0;
        it->wn = it->wt = it->wv = 0;
        if (b < e) it->bad = gsnap_dense__packed_head(it, d->recs + b, d->recs + e);
    }
}
/* 1: *r is the node's next record; 0: no more; -1: a malformed body. */
static inline int gsnap_dense__it_next(gsnap_dense_it *it, gsnap_rec *r) {
    if (it->d->packed) {
        if (__builtin_expect(it->bad, 0)) return -1;
        if (it->j >= it->e) return 0;
        it->j++;
        r->node = it->node;
        r->nbr = it->nbr + gsnap_bits__get(it->bits, it->bn, it->wn);
        r->t = (int64_t)(it->t + gsnap_bits__get(it->bits, it->bt, it->wt));
        r->vop = it->vmin + gsnap_bits__get(it->bits, it->bv, it->wv);
        it->bn += it->wn;
        it->bt += it->wt;
        it->bv += it->wv;
        return 1;
    }
    if (!it->d->compact) {
        if (it->j >= it->e) return 0;
        __builtin_memcpy(r, it->d->recs + it->j++ * GSNAP_REC_BYTES, GSNAP_REC_BYTES);
        return 1;
    }
    if (it->p >= it->end) return 0;
    uint64_t dn, dt, dv;
    if (gsnap_codec__get(&it->p, it->end, &dn) || gsnap_codec__get(&it->p, it->end, &dt) ||
        gsnap_codec__get(&it->p, it->end, &dv))
        return -1;
    it->nbr += dn;
    it->t += gsnap_codec__unzz(dt);
    r->node = it->node;
    r->nbr = it->nbr;
    r->t = (int64_t)it->t;
    r->vop = it->d->bvop + gsnap_codec__unzz(dv);
    return 1;
}
int gsnap_dense__delete(gsnap_db *db, MDB_txn *txn, uint64_t run_id);
/* GSNAP_ECORRUPT naming a node whose GSD2 body does not decode. */
int gsnap_dense__bad(gsnap_db *db, uint64_t run_id, uint8_t dir, uint64_t node);

typedef struct {
    const unsigned char *blocks; /* into the LMDB map; NULL: no filter (answer "maybe") */
    uint32_t nblocks;
    int loaded;
} gsnap_bloom_ref;
/* The filters' hash of a node (the same for every run: a query hashes its
 * node once), the probe taking it, and the prefetch of its block (a query
 * prefetches every run's block before probing any, so that the misses
 * overlap). may_contain hashes the node itself (checks, scans). */
uint64_t gsnap_bloom__hash(uint64_t node);
int gsnap_bloom__may_contain_h(const gsnap_bloom_ref *b, uint64_t h);
void gsnap_bloom__prefetch_h(const gsnap_bloom_ref *b, uint64_t h);
int gsnap_bloom__may_contain(const gsnap_bloom_ref *b, uint64_t node);
int gsnap_bloom__load(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, gsnap_bloom_ref *b);
int gsnap_bloom__write(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, const uint64_t *nodes,
                       size_t n);

struct gsnap_read {
    gsnap_db *db;
    MDB_txn *txn;
    MDB_cursor *cur; /* on gs.data */
    struct gsnap_meta meta;
    gsnap_run *runs; /* live runs in this view, ascending id */
    size_t nruns;
    gsnap_bloom_ref *blooms; /* [run index * 2 + dir], loaded lazily */
    gsnap_dense_ref *denses; /* [run index * 2 + dir], loaded lazily */
    /* scratch for queries */
    gsnap_rec *scratch;
    size_t scratch_cap;
    /* records a query of this view may gather, 0: no bound. A query that
     * needs more stops and answers nothing, with scratch_full set: only
     * for the commit's warm-up view (store/warm.c), whose answer is dropped */
    size_t scratch_max;
    int scratch_full;
    gsnap_rec *merge_tmp;   /* the runs' merge (query.c): intermediate results */
    size_t merge_cap;
    gsnap_rec *merge_out;   /* and the final one, swapped with scratch */
    size_t merge_out_cap;
    struct gsnap_seg *segs; /* the segments being merged, nruns + 1 */
    size_t *seg;            /* start of each run's records in scratch, nruns + 1 */
    uint64_t *ids, *ids_tmp; /* distinct ids per run and their merge (distinct.c) */
    size_t ids_cap, ids_tmp_cap;
    struct gsnap_fence **fence; /* [run index]: its fence index or NULL (fence.c) */
    int fence_taken;            /* fence[] looked up (at the view's first query) */
    struct gsnap_runmask *mask; /* which chunked runs hold a node, or NULL (fence.c) */
};

/* vlog.c: the per-version log (gs.vlog), written in the commit txn */
struct gsnap_batch_source {
    char name[GSNAP_SOURCE_MAX + 1];
    uint64_t first_line, last_line;
    int64_t commit_ns; /* 0: the clock at commit */
    int have_counts;   /* load: log these counts instead of the batch's */
    int no_events;     /* committed without events (flag 1 in the log record) */
    int restore;       /* load: the batch restores a dumped version: it is a
                          version even without events, and the retention
                          horizon time does not refuse its events */
    uint64_t adds, deletes;
    int64_t min_t, max_t;
};
/* load: the version-log counts to record (those of the dumped version, which
 * a retention fold may have made differ from the events still stored). */
void gsnap_batch__set_counts(gsnap_batch *b, uint64_t adds, uint64_t deletes, int64_t min_t, int64_t max_t);
/* load: this batch restores a dumped version, so it commits as a version of
 * its own even with no events (a version whose events a fold removed, or a
 * format-1 version without any). A source compacted at horizon H holds, in
 * its versions from H on, events older than its horizon time (committed
 * before the fold); they are history, not new events. */
void gsnap_batch__set_restore(gsnap_batch *b);
int gsnap_vlog__put(gsnap_db *db, MDB_txn *txn, uint64_t version, const struct gsnap_batch_source *src,
                    uint64_t adds, uint64_t deletes, int64_t min_t, int64_t max_t);
/* Count the log's records, those of empty versions, and the first bad one
 * (malformed, checksum, or past `latest`; 0 when none). */
int gsnap_vlog__scan(gsnap_db *db, MDB_txn *txn, uint64_t latest, uint64_t *records, uint64_t *empty,
                     uint64_t *first_bad);
/* 1 when the log records `version` as a version without events. */
int gsnap_vlog__is_empty(gsnap_db *db, MDB_txn *txn, uint64_t version);
/* Retention check of a query at (at_t, as_of) in view rd (as_of resolved). */
int gsnap_store__horizon_check(gsnap_db *db, const gsnap_read *rd, int64_t at_t, uint64_t as_of);
/* Delete run `run_id` (chunks, dense values, Bloom filters, catalog entry). */
int gsnap_run__delete(gsnap_db *db, MDB_txn *txn, uint64_t run_id);
/* open_check.c: checks before LMDB touches a directory (see the file). */
typedef struct {
    uint64_t file_size, mapsize, last_pg;
    uint32_t psize;
} gsnap_probe;
/* Read data.mdb's meta pages: 0, GSNAP_NOTFOUND (no file), or an error with
 * a message (not LMDB, truncated, unreadable). */
int gsnap_store__probe(const char *path, gsnap_probe *pr, char *msg, size_t msglen);
/* Test hook (tests/test_open_probe_race.c), NULL otherwise: called by
 * gsnap_store__probe between its read of the meta pages and its read of the
 * file size, where another process may commit and extend the file. */
extern void (*gsnap_store__probe_hook)(const char *path);
/* GSNAP_ENOMEM with a message naming size and limit when `map` exceeds RLIMIT_AS. */
int gsnap_store__map_limit(size_t map, char *msg, size_t msglen);
int gsnap_store__claim_dir(uint64_t dev, uint64_t ino); /* GSNAP_EBUSY if open */
void gsnap_store__release_dir(uint64_t dev, uint64_t ino);
/* Record the open handle of a claimed directory (after a successful open). */
void gsnap_store__claim_set(uint64_t dev, uint64_t ino, gsnap_db *db);
/* The handle this process has open on directory `path`, or NULL. */
gsnap_db *gsnap_store__open_handle(const char *path);
void gsnap_store__retire(gsnap_db *db); /* frees (or, debug builds, keeps dead) */

/* db.c: LMDB and errno codes -> GSNAP_* codes */
int gsnap_store__map_rc(int rc);
/* txn.c */
/* Whole-value verification cache (see struct gsnap_db.verified). */
int gsnap_store__verified(gsnap_db *db, uint64_t key);
void gsnap_store__set_verified(gsnap_db *db, uint64_t key);
int gsnap_store__read_meta(gsnap_db *db, MDB_txn *txn, struct gsnap_meta *m);
/* Begin an LMDB read txn holding the map (the caller ends the txn, then
 * calls gsnap_store__map_release); adopts a map grown by another process
 * (txn.c). On failure no hold is left. */
int gsnap_store__txn_begin(gsnap_db *db, unsigned flags, MDB_txn **txn);
/* mapgate.c: the map gate (see the file for the invariants). A hold is taken
 * before an LMDB txn begins and released after it ends; a remap waits until
 * no hold is left. _locked: with db->lock held. */
int gsnap_store__map_hold(gsnap_db *db);
int gsnap_store__map_hold_locked(gsnap_db *db); /* 1: the map is lost, no hold */
void gsnap_store__map_release(gsnap_db *db);
void gsnap_store__map_release_locked(gsnap_db *db);
/* Grow the map (seen: its size when the write found it full; nothing is done
 * when it changed since) or, seen == 0, adopt the size another process grew
 * it to. The calling thread must hold no map (else GSNAP_EBUSY with a
 * message) and not db->write_lock. */
int gsnap_store__remap(gsnap_db *db, size_t seen);
/* Grow the map (doubling) until it is at least atleast bytes, as a remap
 * after a full map does (no hold of this thread live); 0 when it already is. */
int gsnap_store__remap_grow(gsnap_db *db, size_t atleast);
int gsnap_store__remap_pending(gsnap_db *db);   /* a thread waits to remap */
/* The swap of the environment (swap.c): close the gate, waiting at most
 * wait_ms for the holds to end (0: db->lock held, no hold live; GSNAP_EBUSY:
 * they did not, or this thread holds one), then open it again. */
struct timespec gsnap_store__deadline(long wait_ms);
int gsnap_store__gate_close(gsnap_db *db, long wait_ms);
void gsnap_store__gate_open(gsnap_db *db);
int gsnap_store__thread_holds(void); /* map holds of the calling thread (all dbs) */
/* Test hook (tests/test_store_shrink.c), NULL otherwise: called by the swap
 * at each step (1: the copy is written and synced, 2: renamed over
 * data.mdb, 3: the environment reopened on it). */
extern void (*gsnap_store__swap_hook)(gsnap_db *db, int step);
/* Every write (gsnap_store__write) passes the shrink's writer gate before its
 * map hold, and leaves it after its txn ended (swap.c). */
void gsnap_store__write_enter(gsnap_db *db);
void gsnap_store__write_leave(gsnap_db *db);
/* Open LMDB table `name` in txn: GSNAP_NOTFOUND when absent (tables.c). */
int gsnap_store__open_dbi(gsnap_db *db, MDB_txn *txn, const char *name, unsigned flags, MDB_dbi *out);
int gsnap_store__put_meta(gsnap_db *db, MDB_txn *txn, const struct gsnap_meta *m);
int gsnap_store__load_runs(gsnap_db *db, MDB_txn *txn, gsnap_run **runs, size_t *n);

/* runs.c: writing and reading sorted runs */
typedef struct {
    gsnap_db *db;
    MDB_txn *txn;
    MDB_cursor *cur;
    uint64_t run_id;
    uint8_t dir;
    uint32_t chunk_no;
    unsigned char *buf; /* chunk being filled: header + records */
    uint32_t nrec;
    uint64_t total;
    int has_del;
    uint64_t *nodes; /* distinct nodes of the current direction (Bloom filter) */
    size_t nnodes, nodes_cap;
    uint64_t nrec_dir[2];
    /* dense layout (the base run) */
    int dense;
    uint64_t dense_nodes;     /* node id bound of the index */
    uint64_t dense_expect[2]; /* records per direction, known up front */
    unsigned char *drecs;     /* reserved LMDB value being filled */
    uint64_t dfill;
    uint64_t *didx;           /* index being built: dense_nodes + 1 entries */
    uint64_t dlast;           /* last node seen + 1 (index filled below it) */
    int dopen;                /* a direction's value is open */
    int dcomp;                /* dense values in GSD2 */
    int dpack;                /* dense values in GSD3 (dcomp is set too) */
    gsnap_rec *dnode;         /* GSD3: the open node's records, packed when it closes */
    size_t dnn, dncap;
    unsigned char *dbuf;      /* GSD2/3 payload being built (bases + bodies) */
    size_t dcap, dbytes;      /* its capacity, the bodies' bytes so far */
    gsnap_rec dprev, dbase;   /* previous record of the direction; its first */
    /* compact chunks (GSC2), encoded as records arrive (runs.c) */
    int compact;
    size_t cap;               /* the payload's limit */
    unsigned char *ebuf;      /* the chunk: header, bases, closed groups */
    size_t clen;              /* payload bytes so far (bases, closed groups) */
    uint64_t cfirst, cbvop, cbt; /* the chunk's first node, its bases */
    uint64_t cprev;           /* node of the last closed group (0: none) */
    unsigned char *gbuf;      /* the open group's body */
    size_t glen;              /* its bytes */
    uint64_t gnode, gcount, gnbr, gt; /* its node, records, last nbr and t */
    /* deferred (a merge's second thread): chunks kept in memory as
     * (key, u32 length, value) until gsnap_run__writer_replay */
    int defer;
    unsigned char *arena;
    size_t alen, acap;
} gsnap_run_writer;

/* Test hook: the store format new writes produce (GSNAP_STORE_FORMAT; 2
 * writes raw GSC1 chunks and a format-2 meta record, to build old
 * databases in tests). Not thread-safe; set before opening. */
extern unsigned gsnap_store__write_format;

/* A gs.data key: run id, dir, first node, chunk no (GSNAP_DATA_KEY bytes). */
static inline void gsnap_run__data_key(unsigned char *k, uint64_t run, uint8_t dir, uint64_t node, uint32_t no) {
    gsnap_put_be64(k, run);
    k[8] = dir;
    gsnap_put_be64(k + 9, node);
    gsnap_put_be32(k + 17, no);
}

int gsnap_run__writer_init(gsnap_run_writer *w, gsnap_db *db, MDB_txn *txn, uint64_t run_id);
/* Switch a fresh writer to the dense layout: `expect` records per direction
 * will come, node ids < dense_nodes. */
int gsnap_run__writer_dense(gsnap_run_writer *w, const uint64_t expect[2], uint64_t dense_nodes);
/* Records must arrive in (dir, node, nbr, t, version) order. */
int gsnap_run__writer_add(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r);
/* Add r[0..n), n >= 1 records of one node (the same order): as n calls of
 * writer_add, with the per-node work done once. */
int gsnap_run__writer_group(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r, size_t n);
int gsnap_run__writer_finish(gsnap_run_writer *w); /* flushes; closes cursor */
/* Finish the current direction (its last chunk and Bloom filter, or its
 * dense values); with defer set, nothing touches LMDB: the chunks and the
 * filter's nodes stay in memory. */
int gsnap_run__writer_end_dir(gsnap_run_writer *w);
/* A deferred writer's chunks and Bloom filter, put in order in txn (the
 * thread that owns txn). */
int gsnap_run__writer_replay(gsnap_run_writer *w, MDB_txn *txn);
void gsnap_run__writer_free(gsnap_run_writer *w);

/* A fence index's verified copy of a chunked run's chunks of one direction
 * (fence.c): the payloads back to back in key order, so that a seek and the
 * reads after it need no B-tree descent, no cursor and no checksum lookup. */
typedef struct {
    const unsigned char *bytes; /* the payloads (headers left out) */
    const uint32_t *off;        /* nc + 1 byte offsets into bytes */
    const uint32_t *nrec;       /* records of each chunk */
    uint32_t nc;
} gsnap_run_held;

/* A run's segment of a node's records, in the merge of an answer (query.c). */
typedef struct gsnap_seg { gsnap_rec *p; size_t n; } gsnap_seg;

/* Sequential reader over one run's records of one direction, from a node on. */
typedef struct {
    MDB_cursor *cur;
    const gsnap_run_held *held; /* non-NULL: reading a held copy (chunk hchunk), not the map */
    uint32_t hchunk;
    uint64_t run_id;
    uint8_t dir;
    const unsigned char *recs; /* raw records of the current chunk (dense: of the run) */
    uint64_t nrec, pos;        /* records of the chunk (dense: run), the current one */
    gsnap_rec rec;             /* the current record */
    int compact;               /* the chunk is GSC2: records decoded one by one from cc */
    gsnap_codec_cur cc;
    size_t own_cap;
    gsnap_dense_ref dref;      /* dense == 2 (GSD2): the run, the node being read */
    gsnap_dense_it dit;
    int done;
    int dense;  /* 1: GSD1 records in recs; 2: GSD2, decoded through dit */
    int verify; /* check chunk checksums while reading: 1 always, 2 once per
                   process and chunk (db->chunk_ok), 0 never */
    int copy;   /* copy chunks out of the map (needed inside a write txn that
                   appends to the same table: dirty pages can move) */
    unsigned char *own; /* the copy */
} gsnap_run_reader;

int gsnap_run__reader_open(gsnap_run_reader *rr, gsnap_db *db, MDB_txn *txn,
                           const gsnap_run *run, uint8_t dir, uint64_t from_node, int verify,
                           int copy);
/* Whether a chunk's payload (pay, plen) matches its header's checksum xxh3;
 * kp is its GSNAP_DATA_KEY-byte key. verify as in the reader: 1 hash it,
 * 2 hash it once per process and chunk (db->chunk_ok: a chunk that passed
 * is not hashed again; run ids are never reused, so a key names one
 * content), 0 trust it. Both the readers and the fence index builder
 * (fence.c) check chunks through it. */
int gsnap_run__chunk_verified(gsnap_db *db, const unsigned char *kp, const unsigned char *pay, size_t plen,
                              uint64_t xxh3, int verify);
/* Current record (only when !done). */
static inline void gsnap_run__reader_peek(const gsnap_run_reader *rr, gsnap_rec *r) {
    assert(!rr->done && rr->pos < rr->nrec); /* never read past the chunk */
    *r = rr->rec;
}
int gsnap_run__reader_next(gsnap_db *db, gsnap_run_reader *rr);
/* Append the current record and every following one of the same node to
 * *buf (*n used of *cap, grown with gsnap_vec_reserve), the reader left on
 * the next node's first record (or done). 0 or an error. */
int gsnap_run__reader_take_node(gsnap_db *db, gsnap_run_reader *rr, gsnap_rec **buf, size_t *n, size_t *cap);
void gsnap_run__reader_close(gsnap_run_reader *rr); /* keeps the copy buffer */
void gsnap_run__reader_free(gsnap_run_reader *rr);

/* dense.c: the writer's dense path */
int gsnap_dense__add(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r);
/* r[0..n): records of one node, as n calls of gsnap_dense__add. */
int gsnap_dense__add_group(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r, size_t n);
int gsnap_dense__close_dir(gsnap_run_writer *w);

/* Seek with an existing cursor; see runs.c. */
int gsnap_run__seek(gsnap_db *db, MDB_cursor *cur, uint64_t run_id, uint8_t dir,
                    uint64_t node, gsnap_run_reader *rr, int verify);

/* Seek from a group of a known chunk (fence.c's index); see runs.c. */
int gsnap_run__seek_from(gsnap_db *db, MDB_cursor *cur, uint64_t run_id, uint8_t dir, const unsigned char *key,
                         uint32_t off, uint64_t prev, uint32_t before, uint64_t node, gsnap_run_reader *rr,
                         int verify);

/* Seek from a group of chunk `chunk` of a held copy (fence.c); as
 * gsnap_run__seek_from, reading the copy (key: the chunk's, for messages). */
int gsnap_run__seek_held(gsnap_db *db, const gsnap_run_held *h, uint64_t run_id, uint8_t dir,
                         const unsigned char *key, uint32_t chunk, uint32_t off, uint64_t prev, uint32_t before,
                         uint64_t node, gsnap_run_reader *rr);

/* fence.c: in-memory fence indexes of chunked runs (see the file). warm
 * builds the indexes of the view's chunked runs that lack one and drops
 * those of runs gone; seek seeks rd->runs[ri] through its index (or as
 * gsnap_run__seek without one); view_take takes a view's references at its
 * first query (and sets its Bloom filters); prefetch (each query, first)
 * takes them, loads the dense values and starts loading the lines the
 * query reads first in every run; view_end drops the references; close
 * frees the table (gsnap_db_close); built/has for tests. */
#define GSNAP_FENCE_EVERY 8
#define GSNAP_FENCE_MAX_RECS ((uint64_t)1 << 24) /* larger runs are not indexed */
/* A process that does not commit builds the indexes of the runs its views
 * seek once it has sought them without one GSNAP_FENCE_LAZY_MIN times and
 * at least once per GSNAP_FENCE_LAZY_RECS records of those runs (fence.c). */
#define GSNAP_FENCE_LAZY_MIN 1024
#define GSNAP_FENCE_LAZY_RECS 256
/* Bytes of chunk copies and node tables the indexes of one handle hold
 * together by default (gsnap_db_options.read_cache_bytes = 0). */
#define GSNAP_FENCE_HELD_BYTES ((uint64_t)256 << 20)
struct gsnap_fence;
void gsnap_fence__warm(gsnap_db *db, gsnap_read *rd);
/* The committing thread's gsnap_fence__warm: waits for a reader's build to
 * end, builds, records the newest run built for (db->fence_run). */
void gsnap_fence__warm_commit(gsnap_db *db, gsnap_read *rd);
/* indexes built and thrown away because another builder had added the same
 * run meanwhile (tests: none, since one thread builds at a time) */
extern uint64_t gsnap_fence__dup_builds;
int gsnap_fence__seek(gsnap_db *db, gsnap_read *rd, size_t ri, uint8_t dir, uint64_t node, gsnap_run_reader *rr,
                      int verify);
void gsnap_fence__view_take(gsnap_db *db, gsnap_read *rd);
/* prefetch also sets *bloom_h, the node's hash for the Bloom filters, when
 * a run read at as_of is chunked (the only ones with filters to ask). */
int gsnap_fence__prefetch(gsnap_db *db, gsnap_read *rd, uint64_t node, uint64_t *bloom_h, uint8_t dir, uint64_t as_of,
                          size_t *bad_run);
/* the second round, after the first's lines arrived: dense bodies and held
 * groups of the node (prefetches only) */
void gsnap_fence__prefetch_data(gsnap_read *rd, uint64_t node, uint64_t bloom_h, uint8_t dir, uint64_t as_of);
void gsnap_fence__view_end(gsnap_read *rd);
void gsnap_fence__unref(struct gsnap_fence *f);
void gsnap_fence__close(gsnap_db *db);
uint64_t gsnap_fence__built(gsnap_db *db);
uint64_t gsnap_fence__held_bytes(gsnap_db *db); /* bytes of chunk copies held now */
extern uint64_t gsnap_fence__huge_regions;      /* regions mapped in 2 MiB units so far (tests) */
int gsnap_fence__has(gsnap_db *db, uint64_t run_id);
int gsnap_fence__held_run(gsnap_db *db, uint64_t run_id); /* its index holds a copy (tests) */
int gsnap_fence__held_dir(gsnap_db *db, uint64_t run_id, unsigned dir); /* ... of direction dir (tests) */
int gsnap_fence__mask_published(gsnap_db *db);               /* the table holds a run mask (tests) */

/* The run mask of a view (fence.c "Run masks"): for each node id below
 * range[dir], bit j of bits[dir][node] is set when the view's j-th chunked
 * run (in view order, dense runs not counted) holds records of the node in
 * that direction; a clear bit means it holds none, so a query skips that run
 * without asking its Bloom filter or node table. Exact where it says no
 * (made from the held copies' node tables, which list every node of a run);
 * a node at or above range is in none of them. Immutable once published,
 * shared by the views whose chunked runs are exactly ids[0..k). */
#define GSNAP_RUNMASK_MAX 16
struct gsnap_runmask {
    int refs;             /* atomic: the table's and the views' */
    uint64_t *held_total; /* db->fence_held, which counts cost */
    size_t cost;
    size_t k;             /* chunked runs covered */
    uint64_t *ids;        /* their run ids, in view order */
    uint64_t range[2];
    uint16_t *bits[2];    /* NULL: not answered (direction not kept or not read, or a run without a node table) */
};
/* 1 and *bits = the node's mask when the view has a run mask, else 0. */
static inline int gsnap_fence__mask_bits(const gsnap_read *rd, uint8_t dir, uint64_t node, unsigned *bits) {
    const struct gsnap_runmask *m = rd->mask;
    if (!m || !m->bits[dir & 1]) return 0;
    *bits = node < m->range[dir & 1] ? m->bits[dir & 1][node] : 0;
    return 1;
}
/* tests: masks published (built whole / extended from the last one,
 * atomic); gsnap_fence__mask_off = 1: views take none */
extern uint64_t gsnap_fence__masks_built, gsnap_fence__masks_extended;
extern int gsnap_fence__mask_off;

/* Merge runs `ids` (their catalog entries in `infos`) into a new run at
 * `level`, delete the inputs; in write txn. */
int gsnap_run__merge(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n,
                     uint32_t level, struct gsnap_meta *meta);

/* compact.c, test counters (all threads): merges begun inside a write
 * transaction, merges whose transaction committed, and of those the merges
 * into the base level. started > committed: a merge was replayed (or failed). */
extern uint64_t gsnap_compact__merges_started, gsnap_compact__merges_committed, gsnap_compact__base_merges;

/* merge.c: merge direction dir of the n inputs into w (rr: one reader per
 * input, closed after); *damaged = the id of an input that failed
 * verification. _plain: the record-at-a-time reference (tests), also used
 * by _dir while gsnap_merge__use_plain is set (a test hook). */
int gsnap_merge__dir(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                     gsnap_run_writer *w, uint8_t dir, uint64_t *damaged);
int gsnap_merge__plain(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                       gsnap_run_writer *w, uint8_t dir, uint64_t *damaged);
extern int gsnap_merge__use_plain;
/* Both directions into w: the second on a thread of its own when w is a
 * GSD2 dense writer (merge.c); else one after the other. */
int gsnap_merge__dirs(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                      gsnap_run_writer *w, uint64_t *damaged);

/* Compact: merge levels that hold >= db->merge_fanout runs (all = 1: all runs
 * into one). One write txn. */
int gsnap_store__compact(gsnap_db *db, int all);

/* warm.c: after a commit, verify the live runs' Bloom filters and dense
 * values once this process has answered point queries (see the file), then
 * ask node `hint` (any id; best one the commit wrote) once to warm the
 * read path. */
void gsnap_store__warm(gsnap_db *db, uint64_t hint);
extern uint64_t gsnap_store__warm_queries; /* warm-up views asked (tests) */
extern uint64_t gsnap_store__warm_records; /* records their queries gathered (tests) */
/* Records the warm-up query gathers at most (its view's scratch_max): enough
 * to run the read path, bounded whatever the node's degree. */
#define GSNAP_WARM_READ_RECS 256

/* The distinct neighbour ids of `node` per run into rd->ids[0..*n), each
 * run's ids ascending, the runs' starts in rd->seg[0..*nseg] (rd->seg[*nseg]
 * = *n); *has_del = 1 (and nothing gathered) when a record in range is a
 * delete: the caller then needs the replay of gsnap_neighbors (query.c).
 * as_of must be resolved (<= the view's version). */
int gsnap_store__node_ids(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                          uint64_t as_of, size_t *n, size_t *nseg, int *has_del);

/* distinct.c, for node_events: 1 when every record of `run` passes the
 * filters of (at_t, as_of) and none is a delete (no deletes in the run, its
 * versions <= as_of, at_t >= the store's latest time): its ids need not
 * decode t and vop. dense_ids appends node's distinct ids in a GSD2 run to
 * rd->ids[*cnt..]; chunk_ids those from a seeked reader on, to the end of
 * the node's records. 0 or an error (GSNAP_ECORRUPT naming run and node). */
int gsnap_store__run_unfiltered(const gsnap_read *rd, const gsnap_run *run, int64_t at_t, uint64_t as_of);
int gsnap_store__dense_ids(gsnap_db *db, gsnap_read *rd, const gsnap_dense_ref *d, uint64_t run_id,
                           uint8_t dir, uint64_t node, size_t *cnt);
int gsnap_store__chunk_ids(gsnap_db *db, gsnap_read *rd, gsnap_run_reader *rr, uint64_t node, size_t *cnt);

#endif
