/*
 * features/attr.c -- attribute tables: dtypes, the catalog, create and
 * describe. Batch updates are in attr_batch.c, point-in-time gathers in
 * attr_read.c. Layout and invariants: features/features_int.h.
 */
#include "features/features_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#define XXH_INLINE_ALL /* the row checksum runs per gathered row: inline it */
#include <xxhash.h>

/* ---- dtypes --------------------------------------------------------------- */

size_t gsnap_dtype_size(gsnap_dtype dtype) {
    switch (dtype) {
    case GSNAP_DTYPE_F32: return 4;
    case GSNAP_DTYPE_F16: return 2;
    case GSNAP_DTYPE_BF16: return 2;
    case GSNAP_DTYPE_I64: return 8;
    }
    return 0;
}

const char *gsnap_dtype_name(gsnap_dtype dtype) {
    switch (dtype) {
    case GSNAP_DTYPE_F32: return "f32";
    case GSNAP_DTYPE_F16: return "f16";
    case GSNAP_DTYPE_BF16: return "bf16";
    case GSNAP_DTYPE_I64: return "i64";
    }
    return "?";
}

int gsnap_dtype_parse(const char *name, gsnap_dtype *dtype) {
    static const struct { const char *n; gsnap_dtype d; } names[] = {
        {"f32", GSNAP_DTYPE_F32},   {"float32", GSNAP_DTYPE_F32}, {"f16", GSNAP_DTYPE_F16},
        {"float16", GSNAP_DTYPE_F16}, {"bf16", GSNAP_DTYPE_BF16}, {"bfloat16", GSNAP_DTYPE_BF16},
        {"i64", GSNAP_DTYPE_I64},   {"int64", GSNAP_DTYPE_I64},
    };
    if (!name || !dtype) return GSNAP_EINVAL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].n) == 0) {
            *dtype = names[i].d;
            return 0;
        }
    return GSNAP_EINVAL;
}

/* ---- catalog -------------------------------------------------------------- */

uint64_t gsnap_feat__row_sum(const unsigned char *key, const void *row, size_t len) {
    return XXH3_64bits_withSeed(row, len, XXH3_64bits(key, GSNAP_ATTR_KEY));
}

uint64_t gsnap_feat__cat_sum(const struct gsnap_attr_cat *c) {
    return XXH3_64bits(c, offsetof(struct gsnap_attr_cat, xxh3));
}

int gsnap_feat__name_ok(const char *name) {
    if (!name) return 0;
    size_t n = strlen(name);
    if (n < 1 || n > GSNAP_ATTR_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int gsnap_feat__cat_decode(gsnap_db *db, const char *name, const MDB_val *v,
                           struct gsnap_attr_cat *out) {
    if (v->mv_size != sizeof *out)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "attribute table '%s': catalog entry of %zu bytes, expected %zu",
                                name, v->mv_size, sizeof *out);
    memcpy(out, v->mv_data, sizeof *out);
    if (gsnap_feat__cat_sum(out) != out->xxh3)
        return gsnap_store__err(db, GSNAP_ECHECKSUM, "attribute table '%s': catalog entry fails its checksum", name);
    if (out->magic != GSNAP_ATTR_MAGIC)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "attribute table '%s': bad catalog magic", name);
    if (out->format != GSNAP_ATTR_FORMAT)
        return gsnap_store__err(db, GSNAP_EFORMAT, "attribute table '%s': format %u, this build reads format %u",
                                name, out->format, GSNAP_ATTR_FORMAT);
    if (gsnap_dtype_size((gsnap_dtype)out->dtype) == 0 || out->dim < 1 || out->dim > GSNAP_ATTR_MAX_DIM)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "attribute table '%s': bad dtype %u or dim %u", name,
                                out->dtype, out->dim);
    return 0;
}

int gsnap_feat__cat_get(gsnap_db *db, MDB_txn *txn, MDB_dbi cat, const char *name,
                        struct gsnap_attr_cat *out) {
    MDB_val k = {strlen(name), (void *)name}, v;
    int rc = mdb_get(txn, cat, &k, &v);
    if (rc == MDB_NOTFOUND)
        return gsnap_store__err(db, GSNAP_NOTFOUND, "no attribute table '%s'", name);
    if ((rc = gsnap_store__mdb_err(db, rc, "reading the attribute catalog"))) return rc;
    return gsnap_feat__cat_decode(db, name, &v, out);
}

/* Open the two tables (create: make them). GSNAP_NOTFOUND when absent. */
int gsnap_feat__open_tables(gsnap_db *db, int create, MDB_dbi *cat, MDB_dbi *rows) {
    int rc = gsnap_store__table(db, GSNAP_ATTR_CAT_TABLE, 0, create, cat);
    if (rc == 0) rc = gsnap_store__table(db, GSNAP_ATTR_ROW_TABLE, 0, create, rows);
    return rc;
}

struct create_ctx {
    MDB_dbi cat;
    const char *name;
    gsnap_dtype dtype;
    uint32_t dim;
    uint64_t version;
};

static int create_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct create_ctx *c = vctx;
    struct gsnap_attr_cat e;
    int rc = gsnap_feat__cat_get(db, txn, c->cat, c->name, &e);
    if (rc == 0) {
        if (e.dtype == (uint32_t)c->dtype && e.dim == c->dim) return 0;
        return gsnap_store__err(db, GSNAP_EEXIST, "attribute table '%s' exists as %s x %u (asked %s x %u)", c->name,
                                gsnap_dtype_name((gsnap_dtype)e.dtype), e.dim, gsnap_dtype_name(c->dtype), c->dim);
    }
    if (rc != GSNAP_NOTFOUND) return rc;
    /* id = 1 + the largest id in use (ids are never reused while a table's rows exist) */
    uint32_t id = 0;
    MDB_cursor *cur = NULL;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, c->cat, &cur), "opening the attribute catalog")))
        return rc;
    MDB_val k, v;
    int mrc;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        struct gsnap_attr_cat o;
        if (v.mv_size != sizeof o) continue;
        memcpy(&o, v.mv_data, sizeof o);
        if (o.id > id) id = o.id;
    }
    mdb_cursor_close(cur);
    if (mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading the attribute catalog");
    if (id == UINT32_MAX) return gsnap_store__err(db, GSNAP_ERANGE, "attribute table ids exhausted");
    memset(&e, 0, sizeof e);
    e.magic = GSNAP_ATTR_MAGIC;
    e.format = GSNAP_ATTR_FORMAT;
    e.dtype = (uint32_t)c->dtype;
    e.dim = c->dim;
    e.id = id + 1;
    e.created_version = c->version;
    e.xxh3 = gsnap_feat__cat_sum(&e);
    MDB_val nk = {strlen(c->name), (void *)c->name}, nv = {sizeof e, &e};
    return gsnap_store__mdb_err(db, mdb_put(txn, c->cat, &nk, &nv, 0), "writing the attribute catalog");
}

int gsnap_attr_create(gsnap_db *db, const char *name, gsnap_dtype dtype, uint32_t dim) {
    if (!db) return GSNAP_EINVAL;
    if (!gsnap_feat__name_ok(name))
        return gsnap_store__err(db, GSNAP_EINVAL, "bad attribute table name '%s' (1..63 of [A-Za-z0-9_.-])",
                                name ? name : "(null)");
    if (gsnap_dtype_size(dtype) == 0)
        return gsnap_store__err(db, GSNAP_EINVAL, "attribute table '%s': unknown dtype %d", name, (int)dtype);
    if (dim < 1 || dim > GSNAP_ATTR_MAX_DIM)
        return gsnap_store__err(db, GSNAP_EINVAL, "attribute table '%s': dim %u not in 1..%u", name, dim,
                                GSNAP_ATTR_MAX_DIM);
    if (gsnap_store__read_only(db))
        return gsnap_store__err(db, GSNAP_EACCES, "database is open read-only");
    struct create_ctx c = {0, name, dtype, dim, 0};
    MDB_dbi rows;
    int rc = gsnap_feat__open_tables(db, 1, &c.cat, &rows);
    if (rc == 0) rc = gsnap_db_version(db, &c.version);
    if (rc == 0) rc = gsnap_store__write(db, create_fn, &c);
    return rc;
}

static void info_from(gsnap_attr_info *info, const char *name, size_t nlen, const struct gsnap_attr_cat *e) {
    memset(info, 0, sizeof *info);
    memcpy(info->name, name, nlen < 63 ? nlen : 63);
    info->dtype = (gsnap_dtype)e->dtype;
    info->dim = e->dim;
    info->updates = e->updates;
    info->created_version = e->created_version;
}

int gsnap_feat__cat_lookup(gsnap_db *db, const char *name, MDB_dbi *cat, MDB_dbi *rows,
                           struct gsnap_attr_cat *out) {
    int rc = gsnap_feat__open_tables(db, 0, cat, rows);
    if (rc == GSNAP_NOTFOUND) return gsnap_store__err(db, GSNAP_NOTFOUND, "no attribute table '%s'", name);
    if (rc) return rc;
    gsnap_read *rd = NULL;
    if ((rc = gsnap_read_begin(db, &rd))) return rc;
    rc = gsnap_feat__cat_get(db, gsnap_read__txn(rd), *cat, name, out);
    gsnap_read_end(rd);
    return rc;
}

int gsnap_attr_info_get(gsnap_db *db, const char *name, gsnap_attr_info *info) {
    if (!db || !info) return GSNAP_EINVAL;
    if (!gsnap_feat__name_ok(name))
        return gsnap_store__err(db, GSNAP_EINVAL, "bad attribute table name '%s'", name ? name : "(null)");
    MDB_dbi cat, rows;
    struct gsnap_attr_cat e;
    int rc = gsnap_feat__cat_lookup(db, name, &cat, &rows, &e);
    if (rc == 0) info_from(info, name, strlen(name), &e);
    return rc;
}

int gsnap_attr_list(gsnap_db *db, gsnap_attr_info **infos, size_t *n) {
    if (!db || !infos || !n) return GSNAP_EINVAL;
    *infos = NULL;
    *n = 0;
    MDB_dbi cat, rows;
    int rc = gsnap_feat__open_tables(db, 0, &cat, &rows);
    if (rc == GSNAP_NOTFOUND) return 0;
    if (rc) return rc;
    gsnap_read *rd = NULL;
    if ((rc = gsnap_read_begin(db, &rd))) return rc;
    MDB_cursor *cur = NULL;
    gsnap_attr_info *out = NULL;
    size_t cnt = 0, cap = 0;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(gsnap_read__txn(rd), cat, &cur), "attribute catalog")))
        goto out;
    MDB_val k, v;
    int mrc;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        char name[64];
        size_t nl = k.mv_size < 63 ? k.mv_size : 63;
        memcpy(name, k.mv_data, nl);
        name[nl] = 0;
        struct gsnap_attr_cat e;
        if ((rc = gsnap_feat__cat_decode(db, name, &v, &e))) goto out;
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 8;
            gsnap_attr_info *ni = realloc(out, nc * sizeof *ni);
            if (!ni) { rc = GSNAP_ENOMEM; goto out; }
            out = ni;
            cap = nc;
        }
        info_from(&out[cnt++], name, nl, &e);
    }
    if (mrc != MDB_NOTFOUND) rc = gsnap_store__mdb_err(db, mrc, "reading the attribute catalog");
out:
    if (cur) mdb_cursor_close(cur);
    gsnap_read_end(rd);
    if (rc) {
        free(out);
        return rc;
    }
    *infos = out;
    *n = cnt;
    return 0;
}
