/*
 * store/bloom.c -- per-run blocked Bloom filters over node ids.
 *
 * A point query seeks every live run; most small runs do not hold the node
 * at all. A filter per (run, direction) answers "certainly absent" with one
 * cache-line read, so the query skips that run's B-tree descent and chunk
 * search. Blocked layout (all 4 probe bits in one 64-byte block): one cache
 * miss per probe; 16 bits per node give about 0.2% false positives.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* hashing 8 bytes: a call through the PLT would cost more than the hash */
#include <xxhash.h>

static inline uint64_t node_hash(uint64_t node) { return XXH3_64bits(&node, sizeof node); }

uint64_t gsnap_bloom__hash(uint64_t node) { return node_hash(node); }

static inline uint32_t block_of(uint64_t h, uint32_t nblocks) {
    return (uint32_t)(((h >> 32) * (uint64_t)nblocks) >> 32);
}

int gsnap_bloom__may_contain(const gsnap_bloom_ref *b, uint64_t node) {
    return gsnap_bloom__may_contain_h(b, node_hash(node));
}

int gsnap_bloom__may_contain_h(const gsnap_bloom_ref *b, uint64_t h) {
    if (!b->blocks || b->nblocks == 0) return 1;
    const unsigned char *blk = b->blocks + (size_t)block_of(h, b->nblocks) * 64;
    for (int i = 0; i < 4; i++) {
        unsigned bit = (unsigned)(h >> (9 * i)) & 511;
        if (!(blk[bit >> 3] & (1u << (bit & 7)))) return 0;
    }
    return 1;
}

void gsnap_bloom__prefetch_h(const gsnap_bloom_ref *b, uint64_t h) {
    if (b->blocks && b->nblocks) __builtin_prefetch(b->blocks + (size_t)block_of(h, b->nblocks) * 64);
}

/* Build and store the filter of `n` distinct nodes for (run, dir). */
int gsnap_bloom__write(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, const uint64_t *nodes,
                       size_t n) {
    if (n == 0) return 0;
    uint64_t bits = (uint64_t)n * GSNAP_BLOOM_BITS_PER_KEY;
    uint32_t nblocks = (uint32_t)((bits + 511) / 512);
    size_t size = sizeof(struct gsnap_bloom_hdr) + (size_t)nblocks * 64;
    unsigned char *buf = calloc(1, size);
    if (!buf) return GSNAP_ENOMEM;
    unsigned char *blocks = buf + sizeof(struct gsnap_bloom_hdr);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = node_hash(nodes[i]);
        unsigned char *blk = blocks + (size_t)block_of(h, nblocks) * 64;
        for (int j = 0; j < 4; j++) {
            unsigned bit = (unsigned)(h >> (9 * j)) & 511;
            blk[bit >> 3] |= (unsigned char)(1u << (bit & 7));
        }
    }
    struct gsnap_bloom_hdr hdr = {GSNAP_BLOOM_MAGIC, nblocks, XXH3_64bits(blocks, (size_t)nblocks * 64)};
    memcpy(buf, &hdr, sizeof hdr);
    unsigned char key[9];
    gsnap_put_be64(key, run_id);
    key[8] = dir;
    MDB_val k = {9, key}, v = {size, buf};
    int rc = mdb_put(txn, db->bloom_dbi, &k, &v, MDB_APPEND);
    free(buf);
    return gsnap_store__mdb_err(db, rc, "writing a run's Bloom filter");
}

int gsnap_bloom__load(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, gsnap_bloom_ref *b) {
    unsigned char key[9];
    gsnap_put_be64(key, run_id);
    key[8] = dir;
    MDB_val k = {9, key}, v;
    b->loaded = 1;
    b->blocks = NULL;
    b->nblocks = 0;
    int rc = mdb_get(txn, db->bloom_dbi, &k, &v);
    if (rc == MDB_NOTFOUND) return 0; /* no records in this direction, or no filter */
    if (rc) return gsnap_store__mdb_err(db, rc, "reading a run's Bloom filter");
    struct gsnap_bloom_hdr hdr;
    if (v.mv_size < sizeof hdr) goto bad;
    memcpy(&hdr, v.mv_data, sizeof hdr);
    if (hdr.magic != GSNAP_BLOOM_MAGIC || hdr.nblocks == 0 ||
        v.mv_size != sizeof hdr + (size_t)hdr.nblocks * 64)
        goto bad;
    /* A damaged filter could hide a node (a wrong empty answer): verify it,
     * once per process and run (Bloom kind 2 in the cache key space). */
    uint64_t vkey = (run_id << 2 | 2u | dir) ^ 0x8000000000000000ull;
    if (!gsnap_store__verified(db, vkey)) {
        if (XXH3_64bits((const unsigned char *)v.mv_data + sizeof hdr, (size_t)hdr.nblocks * 64) != hdr.xxh3)
            return gsnap_store__err(db, GSNAP_ECHECKSUM, "run %llu dir %u: Bloom filter checksum mismatch",
                                    (unsigned long long)run_id, dir);
        gsnap_store__set_verified(db, vkey);
    }
    b->blocks = (const unsigned char *)v.mv_data + sizeof hdr;
    b->nblocks = hdr.nblocks;
    return 0;
bad:
    return gsnap_store__err(db, GSNAP_ECORRUPT, "run %llu dir %u: malformed Bloom filter (%zu bytes)",
                            (unsigned long long)run_id, dir, v.mv_size);
}
