/*
 * store/tables.c -- the store's own records and the named tables of the
 * modules above: the meta record, the run catalog, and tables opened (or
 * created) by name and cached per handle.
 */
#include "store/store_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- meta ---------------------------------------------------------------- */

int gsnap_store__read_meta(gsnap_db *db, MDB_txn *txn, struct gsnap_meta *m) {
    MDB_val k = {5, (void *)"store"}, v;
    int rc = mdb_get(txn, db->meta_dbi, &k, &v);
    if (rc == MDB_NOTFOUND) return GSNAP_NOTFOUND;
    if (rc) return gsnap_store__mdb_err(db, rc, "reading store meta");
    uint32_t fmt = 0;
    if (v.mv_size >= 12) memcpy(&fmt, (const char *)v.mv_data + 8, 4);
    if (v.mv_size >= 12 && (fmt < GSNAP_STORE_FORMAT_OLDEST || fmt > GSNAP_STORE_FORMAT))
        return gsnap_store__err(db, GSNAP_EFORMAT, "store format version %u, this build reads versions %u..%u",
                                fmt, GSNAP_STORE_FORMAT_OLDEST, GSNAP_STORE_FORMAT);
    size_t want = fmt == 1 ? GSNAP_META_V1_BYTES : sizeof *m;
    if (v.mv_size != want)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "store meta record has %zu bytes, expected %zu (format %u)",
                                v.mv_size, want, fmt);
    memset(m, 0, sizeof *m);
    memcpy(m, v.mv_data, want);
    if (fmt == 1) m->horizon_t = INT64_MIN; /* format 1: no retention horizon */
    if (m->magic != GSNAP_META_MAGIC)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "store meta record has a bad magic number");
    return 0;
}

int gsnap_store__put_meta(gsnap_db *db, MDB_txn *txn, const struct gsnap_meta *m) {
    /* Every write stores the current format: an older database is upgraded by its
     * first commit (its older versions then have no version-log records). */
    struct gsnap_meta w = *m;
    w.format = gsnap_store__write_format;
    MDB_val k = {5, (void *)"store"}, v = {sizeof w, &w};
    return gsnap_store__mdb_err(db, mdb_put(txn, db->meta_dbi, &k, &v, 0), "writing store meta");
}

int gsnap_store__load_runs(gsnap_db *db, MDB_txn *txn, gsnap_run **runs, size_t *n) {
    MDB_cursor *c = NULL;
    gsnap_run *arr = NULL;
    size_t cnt = 0, cap = 0;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, db->runs_dbi, &c);
    if (rc) return gsnap_store__mdb_err(db, rc, "opening run catalog");
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8 || v.mv_size != sizeof(struct gsnap_run_info)) {
            rc = gsnap_store__err(db, GSNAP_ECORRUPT, "run catalog entry of bad size");
            goto out;
        }
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 16;
            gsnap_run *na = realloc(arr, nc * sizeof *na);
            if (!na) { rc = GSNAP_ENOMEM; goto out; }
            arr = na;
            cap = nc;
        }
        arr[cnt].id = gsnap_get_be64(k.mv_data);
        memcpy(&arr[cnt].info, v.mv_data, sizeof arr[cnt].info);
        cnt++;
    }
    rc = (rc == MDB_NOTFOUND) ? 0 : gsnap_store__mdb_err(db, rc, "reading run catalog");
out:
    mdb_cursor_close(c);
    if (rc) { free(arr); arr = NULL; cnt = 0; }
    *runs = arr;
    *n = cnt;
    return rc;
}

/* ---- named tables --------------------------------------------------------- */

int gsnap_store__open_dbi(gsnap_db *db, MDB_txn *txn, const char *name, unsigned flags, MDB_dbi *out) {
    int rc = mdb_dbi_open(txn, name, flags, out);
    if (rc == MDB_NOTFOUND) return GSNAP_NOTFOUND;
    return gsnap_store__mdb_err(db, rc, name);
}

struct table_ctx { const char *name; unsigned flags; MDB_dbi dbi; };
static int create_table_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct table_ctx *c = vctx;
    return gsnap_store__open_dbi(db, txn, c->name, c->flags | MDB_CREATE, &c->dbi);
}

int gsnap_store__table(gsnap_db *db, const char *name, unsigned flags, int create, MDB_dbi *out) {
    if (!db || !name || !out || strncmp(name, "gs.", 3) == 0 || strlen(name) >= 96)
        return gsnap_store__err(db, GSNAP_EINVAL, "bad table name '%s'", name ? name : "(null)");
retry:
    pthread_mutex_lock(&db->lock);
    uint64_t gen = db->swap_gen;
    for (int i = 0; i < db->ntables; i++)
        if (strcmp(db->tables[i].name, name) == 0) {
            *out = db->tables[i].dbi;
            pthread_mutex_unlock(&db->lock);
            return 0;
        }
    pthread_mutex_unlock(&db->lock);
    if (db->ntables >= GSNAP_MAX_TABLES)
        return gsnap_store__err(db, GSNAP_EBUSY, "too many tables open (max %d)", GSNAP_MAX_TABLES);
    struct table_ctx c = {name, flags, 0};
    int rc;
    /* First try to open it read-only: creating needs a write txn. */
    MDB_txn *txn = NULL;
    rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn);
    if (rc) return rc;
    rc = gsnap_store__open_dbi(db, txn, name, flags, &c.dbi);
    if (rc == 0) rc = gsnap_store__mdb_err(db, mdb_txn_commit(txn), "opening table");
    else mdb_txn_abort(txn);
    gsnap_store__map_release(db);
    if (rc == GSNAP_NOTFOUND && create && !db->read_only) rc = gsnap_store__write(db, create_table_fn, &c);
    if (rc) return rc;
    pthread_mutex_lock(&db->lock);
    if (db->swap_gen != gen) { /* a shrink swapped the environment: c.dbi is the old one's */
        pthread_mutex_unlock(&db->lock);
        goto retry;
    }
    int found = 0;
    for (int i = 0; i < db->ntables; i++)
        if (strcmp(db->tables[i].name, name) == 0) found = 1;
    if (!found && db->ntables < GSNAP_MAX_TABLES) {
        snprintf(db->tables[db->ntables].name, sizeof db->tables[0].name, "%s", name);
        db->tables[db->ntables].dbi = c.dbi;
        db->ntables++;
    }
    pthread_mutex_unlock(&db->lock);
    *out = c.dbi;
    return 0;
}
