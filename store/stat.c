/*
 * store/stat.c -- the store's version and statistics (gsnap_db_version,
 * gsnap_db_stats), read from one read view.
 */
#include "store/store_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int gsnap_db_version(gsnap_db *db, uint64_t *version) {
    if (!db || db->magic != GSNAP_DB_MAGIC || !version) return GSNAP_EINVAL;
    MDB_txn *txn = NULL;
    struct gsnap_meta m;
    int rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn);
    if (rc) return rc;
    rc = gsnap_store__read_meta(db, txn, &m);
    mdb_txn_abort(txn);
    gsnap_store__map_release(db);
    if (rc == 0) *version = m.version;
    return rc;
}

int gsnap_db_stats(gsnap_db *db, gsnap_db_stat *st) {
    if (!db || db->magic != GSNAP_DB_MAGIC || !st) return GSNAP_EINVAL;
    memset(st, 0, sizeof *st);
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(db, &rd);
    if (rc) return rc;
    st->version = rd->meta.version;
    st->edge_records = rd->meta.edge_records;
    st->deletes = rd->meta.deletes;
    st->runs = rd->nruns;
    st->min_t = rd->meta.min_t;
    st->max_t = rd->meta.max_t;
    st->keep = rd->meta.keep;
    st->format_version = rd->meta.format;
    for (size_t i = 0; i < rd->nruns; i++) st->damaged_runs += (rd->runs[i].info.flags & GSNAP_RUN_DAMAGED) != 0;
    MDB_envinfo info;
    MDB_stat ms;
    mdb_env_info(db->env, &info);
    mdb_env_stat(db->env, &ms);
    st->map_size = info.me_mapsize;
    MDB_dbi dbis[6] = {db->meta_dbi, db->runs_dbi, db->data_dbi, db->changes_dbi, db->bloom_dbi, db->dense_dbi};
    uint64_t pages = ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages;
    for (int i = 0; i < 6; i++) {
        MDB_stat s;
        if (mdb_stat(rd->txn, dbis[i], &s) == 0)
            pages += s.ms_branch_pages + s.ms_leaf_pages + s.ms_overflow_pages;
    }
    st->used_bytes = pages * ms.ms_psize;
    char f[4096];
    struct stat sb;
    snprintf(f, sizeof f, "%s/data.mdb", db->path);
    if (stat(f, &sb) == 0) st->file_bytes = (uint64_t)sb.st_blocks * 512;
    gsnap_read_end(rd);
    return 0;
}

typedef struct { uint64_t min; } reader_scan;
static int reader_line(const char *msg, void *ctx) {
    reader_scan *r = ctx;
    unsigned long long t;
    char tid[64];
    int pid;
    if (sscanf(msg, "%d %63s %llu", &pid, tid, &t) == 3 && (uint64_t)t < r->min) r->min = t;
    return 0;
}

uint64_t gsnap_store__oldest_reader(gsnap_db *db) {
    reader_scan rs = {UINT64_MAX};
    int dead = 0;
    if (gsnap_store__map_hold(db)) return 0; /* the map is lost: say every reader may be old (nothing reused) */
    mdb_reader_check(db->env, &dead);
    mdb_reader_list(db->env, reader_line, &rs);
    gsnap_store__map_release(db);
    return rs.min;
}
