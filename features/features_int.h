/*
 * features/features_int.h -- private to the features module.
 *
 * ON-DISK LAYOUT (two named LMDB tables in the store's environment; see
 * docs/format.md "Attribute tables"):
 *
 *   attr.tables  name (bytes, no NUL) -> struct gsnap_attr_cat (48 bytes):
 *                the catalog: table id, dtype, dim, creation version, update
 *                count, XXH3 of the entry's first 40 bytes.
 *   attr.rows    table id (u32 BE) | node (u64 BE) | ~(t ^ 2^63) (u64 BE) |
 *                ~version (u64 BE)  (28 bytes: time and version descending)
 *                -> row (dim elements of dtype, little endian) | XXH3 (u64 LE)
 *                of key || row.
 *
 * Keys sort by (table, node, t descending, version descending), so the row
 * of `node` at (T, V) is found by one cursor seek (MDB_SET_RANGE) to
 * (table, node, T, version 2^64-1): the keys from there on are the node's
 * rows at or before T, newest (t, version) first, so the first one whose
 * version is <= V is the answer (at "now" that is the first one: no step
 * back). A batch writes at most one row per (table, node, t): the last
 * update wins, so versions order ties.
 *
 * INVARIANTS
 *   - Rows are only added (never changed or deleted): history stays readable.
 *   - Rows of version v are written in the write txn that commits v (the
 *     batch extension hook), so a reader's txn sees whole versions only.
 *   - The catalog entry's `updates` counts the rows in attr.rows of its id.
 */
#ifndef GSNAP_FEATURES_INT_H
#define GSNAP_FEATURES_INT_H

#include "features/features.h"
#include "store/store.h"

#define GSNAP_ATTR_FORMAT 1u
#define GSNAP_ATTR_MAGIC 0x54415347u /* "GSAT" */
#define GSNAP_ATTR_CAT_TABLE "attr.tables"
#define GSNAP_ATTR_ROW_TABLE "attr.rows"
#define GSNAP_ATTR_KEY 28
#define GSNAP_ATTR_NAME_MAX 63

struct gsnap_attr_cat {
    uint32_t magic;
    uint32_t format;
    uint32_t dtype;
    uint32_t dim;
    uint32_t id;
    uint32_t reserved;
    uint64_t created_version;
    uint64_t updates;
    uint64_t xxh3; /* of the 40 bytes above */
};

static inline void gsnap_feat__be(unsigned char *p, uint64_t v, int bytes) {
    if (bytes == 8) { /* the per-row key fields: one store */
        v = __builtin_bswap64(v);
        __builtin_memcpy(p, &v, 8);
        return;
    }
    for (int i = bytes - 1; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static inline uint64_t gsnap_feat__get_be(const unsigned char *p, int bytes) {
    if (bytes == 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        return __builtin_bswap64(v);
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | p[i];
    return v;
}
static inline void gsnap_feat__key(unsigned char *k, uint32_t id, uint64_t node, int64_t t,
                                   uint64_t version) {
    gsnap_feat__be(k, id, 4);
    gsnap_feat__be(k + 4, node, 8);
    gsnap_feat__be(k + 12, ~((uint64_t)t ^ 0x8000000000000000ull), 8);
    gsnap_feat__be(k + 20, ~version, 8);
}
static inline uint64_t gsnap_feat__key_version(const unsigned char *k) {
    return ~gsnap_feat__get_be(k + 20, 8);
}
static inline int64_t gsnap_feat__key_time(const unsigned char *k) {
    return (int64_t)(~gsnap_feat__get_be(k + 12, 8) ^ 0x8000000000000000ull);
}
uint64_t gsnap_feat__row_sum(const unsigned char *key, const void *row, size_t len);
uint64_t gsnap_feat__cat_sum(const struct gsnap_attr_cat *c);

/* Validate a name ([A-Za-z0-9_.-], 1..63 chars). */
int gsnap_feat__name_ok(const char *name);
/* Read and verify the catalog entry of `name` in txn. GSNAP_NOTFOUND when absent. */
int gsnap_feat__cat_get(gsnap_db *db, MDB_txn *txn, MDB_dbi cat, const char *name,
                        struct gsnap_attr_cat *out);
/* The tables and the verified catalog entry of `name`, read in a short read
 * view of its own. GSNAP_NOTFOUND ("no attribute table 'name'") when there
 * is no attribute table or no such name. */
int gsnap_feat__cat_lookup(gsnap_db *db, const char *name, MDB_dbi *cat, MDB_dbi *rows,
                           struct gsnap_attr_cat *out);
/* Verify a raw catalog value (size, checksum, magic, format). */
int gsnap_feat__cat_decode(gsnap_db *db, const char *name, const MDB_val *v,
                           struct gsnap_attr_cat *out);
/* Rows gathered for one attribute table before they are written (a batch's
 * set_attr calls, a load's 'r' lines): nodes, times, values of row_bytes
 * each; n of cap. */
typedef struct {
    uint64_t *nodes;
    int64_t *t;
    unsigned char *vals;
    size_t n, cap;
} gsnap_feat__rows;
/* Room for `more` rows past n: cap doubles from `first` (or from cap) until
 * they fit. GSNAP_ENOMEM leaves the rows as they were. */
int gsnap_feat__rows_reserve(gsnap_feat__rows *r, size_t more, size_t row_bytes, size_t first);
void gsnap_feat__rows_free(gsnap_feat__rows *r);

/* Open the catalog and row tables (create: make them). GSNAP_NOTFOUND when
 * absent. */
int gsnap_feat__open_tables(gsnap_db *db, int create, MDB_dbi *cat, MDB_dbi *rows);

#endif
