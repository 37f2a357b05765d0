/*
 * features/attr_read.c -- point-in-time gathers of attribute rows
 * (gsnap_attr_read): each node's newest row at or before the requested
 * time and version, checksum verified.
 */
#include "features/features_int.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64_idx(const void *a, const void *b) {
    const uint64_t *x = a, *y = b; /* pairs (node, index) */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The row of `node` at (at, ver) into out (row_bytes); *found. */
static int read_one(gsnap_db *db, MDB_cursor *cur, const char *name, uint32_t id, uint64_t node,
                    int64_t at, uint64_t ver, size_t row_bytes, unsigned char *out, int *found) {
    unsigned char seek[GSNAP_ATTR_KEY];
    gsnap_feat__key(seek, id, node, at, UINT64_MAX);
    MDB_val k = {GSNAP_ATTR_KEY, seek}, v;
    /* the first key >= seek: the newest row at or before `at`, if any */
    int mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    *found = 0;
    /* a landing key below the seek key: a damaged branch page sent the
     * search astray (an absent row would be a wrong answer) */
    if (mrc == 0 && k.mv_size == GSNAP_ATTR_KEY && memcmp(k.mv_data, seek, GSNAP_ATTR_KEY) < 0)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "attribute table '%s': node %llu: the LMDB B-tree of attr.rows "
                                "is out of order around the key (a damaged branch page): corrupt LMDB file", name,
                                (unsigned long long)node);
    while (mrc == 0) {
        if (k.mv_size != GSNAP_ATTR_KEY)
            return gsnap_store__err(db, GSNAP_ECORRUPT, "attribute rows: key of %zu bytes", k.mv_size);
        const unsigned char *kp = k.mv_data;
        if (memcmp(kp, seek, 12) != 0) break; /* another node or table */
        uint64_t kv = gsnap_feat__key_version(kp);
        if (kv <= ver) {
            if (v.mv_size != row_bytes + 8)
                return gsnap_store__err(db, GSNAP_ECORRUPT,
                                        "attribute table '%s': node %llu: row of %zu bytes, expected %zu", name,
                                        (unsigned long long)node, v.mv_size, row_bytes + 8);
            uint64_t sum;
            memcpy(&sum, (const unsigned char *)v.mv_data + row_bytes, 8);
            if (gsnap_feat__row_sum(kp, v.mv_data, row_bytes) != sum)
                return gsnap_store__err(db, GSNAP_ECHECKSUM,
                                        "attribute table '%s': node %llu (version %llu): row fails its checksum",
                                        name, (unsigned long long)node, (unsigned long long)kv);
            memcpy(out, v.mv_data, row_bytes);
            *found = 1;
            return 0;
        }
        mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT); /* older (t, version) */
    }
    if (mrc && mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading attribute rows");
    memset(out, 0, row_bytes);
    return 0;
}

int gsnap_attr_read(gsnap_db *db, gsnap_read *rd, const char *name,
                    const uint64_t *nodes, size_t n, int64_t at, uint64_t version,
                    void *out, uint8_t *found) {
    if (!db) return GSNAP_EINVAL;
    if (!gsnap_feat__name_ok(name))
        return gsnap_store__err(db, GSNAP_EINVAL, "bad attribute table name '%s'", name ? name : "(null)");
    if (n && (!nodes || !out))
        return gsnap_store__err(db, GSNAP_EINVAL, "attr_read '%s': nodes and out must not be NULL", name);
    MDB_dbi cat, rows;
    int rc = gsnap_feat__open_tables(db, 0, &cat, &rows);
    if (rc == GSNAP_NOTFOUND) return gsnap_store__err(db, GSNAP_NOTFOUND, "no attribute table '%s'", name);
    if (rc) return rc;
    gsnap_read *view = NULL;
    int owned = 0;
    if ((rc = gsnap_read__use(db, rd, &view, &owned))) return rc;
    MDB_txn *txn = gsnap_read__txn(view);
    MDB_cursor *cur = NULL;
    uint64_t *ord = NULL;
    struct gsnap_attr_cat e;
    if ((rc = gsnap_feat__cat_get(db, txn, cat, name, &e))) goto out;
    size_t row_bytes = (size_t)e.dim * gsnap_dtype_size((gsnap_dtype)e.dtype);
    uint64_t ver = version;
    uint64_t vv = gsnap_read_version(view);
    if (ver > vv) ver = vv;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, rows, &cur), "opening attribute rows"))) goto out;
    /* visit nodes in ascending order: the cursor walks the B-tree forward */
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++) sorted = nodes[i - 1] <= nodes[i];
    if (!sorted) {
        if (!(ord = malloc(n * 2 * sizeof *ord))) { rc = GSNAP_ENOMEM; goto out; }
        for (size_t i = 0; i < n; i++) {
            ord[2 * i] = nodes[i];
            ord[2 * i + 1] = i;
        }
        qsort(ord, n, 2 * sizeof *ord, cmp_u64_idx);
    }
    unsigned char *o = out;
    for (size_t k = 0; k < n; k++) {
        size_t i = sorted ? k : (size_t)ord[2 * k + 1];
        int f;
        if (k && nodes[i] == (sorted ? nodes[k - 1] : ord[2 * k - 2])) {
            size_t prev = sorted ? k - 1 : (size_t)ord[2 * k - 1];
            memcpy(o + i * row_bytes, o + prev * row_bytes, row_bytes);
            if (found) found[i] = found[prev];
            continue;
        }
        if ((rc = read_one(db, cur, name, e.id, nodes[i], at, ver, row_bytes, o + i * row_bytes, &f))) goto out;
        if (found) found[i] = (uint8_t)f;
    }
out:
    free(ord);
    if (cur) mdb_cursor_close(cur);
    if (owned) gsnap_read_end(view);
    return rc;
}
