/*
 * features/check.c -- gsnap_attr_check: verify the attribute catalog and
 * every stored row (checksum, key shape, table known, row size, version not
 * beyond the store's latest, update counts).
 */
#include "features/features_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define problem gsnap_report

typedef struct {
    char name[64];
    struct gsnap_attr_cat e;
    uint64_t seen;
} tab;

/* The catalog: each entry's name, decoding, creation version, and ids
 * shared between tables; the entries that decode go to *tabs. */
static int check_catalog(gsnap_db *db, MDB_txn *txn, MDB_dbi cat, uint64_t latest, gsnap_reporter *c, tab **tabs,
                         size_t *ntabs) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    size_t nt = 0;
    int mrc, rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, cat, &cur), "attribute catalog");
    if (rc) return rc;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        char name[64];
        size_t nl = k.mv_size < 63 ? k.mv_size : 63;
        memcpy(name, k.mv_data, nl);
        name[nl] = 0;
        if (k.mv_size > 63 || !gsnap_feat__name_ok(name)) problem(c, "attribute catalog: bad table name '%s'", name);
        struct gsnap_attr_cat e;
        int drc = gsnap_feat__cat_decode(db, name, &v, &e);
        if (drc) {
            problem(c, "%s", gsnap_db_errmsg(db));
            continue;
        }
        if (e.created_version > latest)
            problem(c, "attribute table '%s': created at version %llu, after the latest %llu", name,
                    (unsigned long long)e.created_version, (unsigned long long)latest);
        tab *nt2 = realloc(*tabs, (nt + 1) * sizeof **tabs);
        if (!nt2) { rc = GSNAP_ENOMEM; break; }
        *tabs = nt2;
        for (size_t i = 0; i < nt; i++)
            if (nt2[i].e.id == e.id) problem(c, "attribute tables '%s' and '%s' share id %u", nt2[i].name, name, e.id);
        memset(&nt2[nt], 0, sizeof *nt2);
        memcpy(nt2[nt].name, name, nl + 1);
        nt2[nt].e = e;
        nt++;
    }
    mdb_cursor_close(cur);
    *ntabs = nt;
    if (rc) return rc;
    if (mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading the attribute catalog");
    return 0;
}

/* One stored row of table t: size, checksum, version in 1..latest. */
static void check_row(const tab *t, const MDB_val *k, const MDB_val *v, uint64_t latest, gsnap_reporter *c) {
    const unsigned char *kp = k->mv_data;
    uint64_t node = gsnap_feat__get_be(kp + 4, 8), ver = gsnap_feat__key_version(kp);
    size_t rb = (size_t)t->e.dim * gsnap_dtype_size((gsnap_dtype)t->e.dtype);
    if (v->mv_size != rb + 8) {
        problem(c, "attribute table '%s': node %llu version %llu: row of %zu bytes, expected %zu", t->name,
                (unsigned long long)node, (unsigned long long)ver, v->mv_size, rb + 8);
        return;
    }
    uint64_t sum;
    memcpy(&sum, (const unsigned char *)v->mv_data + rb, 8);
    if (gsnap_feat__row_sum(kp, v->mv_data, rb) != sum)
        problem(c, "attribute table '%s': node %llu version %llu: row fails its checksum", t->name,
                (unsigned long long)node, (unsigned long long)ver);
    if (ver == 0 || ver > latest)
        problem(c, "attribute table '%s': node %llu: row of version %llu outside 1..%llu", t->name,
                (unsigned long long)node, (unsigned long long)ver, (unsigned long long)latest);
}

/* Every stored row: key size, table known, the row itself; then each
 * table's row count against its catalog entry. */
static int check_rows(gsnap_db *db, MDB_txn *txn, MDB_dbi rows, tab *tabs, size_t nt, uint64_t latest,
                      gsnap_reporter *c) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int mrc, rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, rows, &cur), "attribute rows");
    if (rc) return rc;
    uint64_t unknown = 0, bad_key = 0;
    tab *t = NULL;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != GSNAP_ATTR_KEY) { bad_key++; continue; }
        uint32_t id = (uint32_t)gsnap_feat__get_be(k.mv_data, 4);
        if (!t || t->e.id != id) {
            t = NULL;
            for (size_t i = 0; i < nt; i++)
                if (tabs[i].e.id == id) t = &tabs[i];
        }
        if (!t) { unknown++; continue; }
        t->seen++;
        check_row(t, &k, &v, latest, c);
    }
    mdb_cursor_close(cur);
    if (mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading attribute rows");
    if (bad_key) problem(c, "attribute rows: %llu keys of the wrong size", (unsigned long long)bad_key);
    if (unknown) problem(c, "attribute rows: %llu rows of no catalogued table", (unsigned long long)unknown);
    for (size_t i = 0; i < nt; i++)
        if (tabs[i].seen != tabs[i].e.updates)
            problem(c, "attribute table '%s': %llu rows stored, catalog counts %llu", tabs[i].name,
                    (unsigned long long)tabs[i].seen, (unsigned long long)tabs[i].e.updates);
    return 0;
}

int gsnap_attr_check(gsnap_db *db, gsnap_problem_fn report, void *ctx, uint64_t *problems) {
    if (!db) return GSNAP_EINVAL;
    gsnap_reporter c = {report, ctx, 0, NULL, NULL, 0, 0};
    if (problems) *problems = 0;
    MDB_dbi cat, rows;
    int rc = gsnap_store__table(db, GSNAP_ATTR_CAT_TABLE, 0, 0, &cat);
    if (rc == GSNAP_NOTFOUND) return 0; /* no attribute tables */
    if (rc) return rc;
    rc = gsnap_store__table(db, GSNAP_ATTR_ROW_TABLE, 0, 0, &rows);
    if (rc == GSNAP_NOTFOUND) {
        problem(&c, "attribute catalog present but table %s missing", GSNAP_ATTR_ROW_TABLE);
        if (problems) *problems = c.count;
        return 0;
    }
    if (rc) return rc;
    gsnap_read *rd = NULL;
    if ((rc = gsnap_read_begin(db, &rd))) return rc;
    MDB_txn *txn = gsnap_read__txn(rd);
    uint64_t latest = gsnap_read_version(rd);
    tab *tabs = NULL;
    size_t nt = 0;
    rc = check_catalog(db, txn, cat, latest, &c, &tabs, &nt);
    if (!rc) rc = check_rows(db, txn, rows, tabs, nt, latest, &c);
    gsnap_read_end(rd);
    free(tabs);
    if (problems) *problems = c.count;
    return rc;
}
