/*
 * store/txn.c -- LMDB errors, write transactions that survive map growth,
 * read views, and the lookups and verification cache every read path uses.
 *
 * Map growth: LMDB returns MDB_MAP_FULL when the map is full. A write txn is
 * then aborted, the map doubled and the write replayed (gsnap_store__write).
 * mdb_env_set_mapsize() must not run while any txn of this process is live:
 * every txn holds the map gate (mapgate.c, where the invariants that rule
 * out deadlock are stated) and a remap waits until no hold is left, with the
 * write lock released. A thread that holds a read view cannot have the map
 * grown (it would wait on itself): it gets GSNAP_EBUSY with a message.
 * Another process growing the map shows up as MDB_MAP_RESIZED at txn begin:
 * we adopt the new size the same way and retry.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

static _Thread_local int tls_map_full; /* an LMDB call in this thread hit MDB_MAP_FULL */
static _Thread_local gsnap_db *tls_writing; /* the db whose write fn this thread runs */

int gsnap_store__err(gsnap_db *db, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gsnap_err_vset(db, code, fmt, ap);
    va_end(ap);
    return code;
}

const char *gsnap_db_errmsg(const gsnap_db *db) { return gsnap_err_msg(db); }

int gsnap_store__mdb_err(gsnap_db *db, int rc, const char *what) {
    if (rc == 0) return 0;
    if (rc == MDB_NOTFOUND) return GSNAP_NOTFOUND;
    if (rc == MDB_MAP_FULL) tls_map_full = 1;
    int code = gsnap_store__map_rc(rc);
    if (rc == MDB_READERS_FULL)
        return gsnap_store__err(db, code, "%s: all LMDB reader slots are in use (%s); "
                                "raise max_readers or end idle read views", what, mdb_strerror(rc));
    return gsnap_store__err(db, code, "%s: %s", what, mdb_strerror(rc));
}

MDB_env *gsnap_store__env(gsnap_db *db) { return db->env; }

/* ---- lookups that verify a "not found" ------------------------------------ */

int gsnap_store__get(gsnap_db *db, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                     const char *what) {
    MDB_cursor *c = NULL;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc) return gsnap_store__mdb_err(db, rc, what);
    /* One search: land on the first key >= key. Equal: found. Else check
     * the B-tree around the landing point before trusting "absent". */
    MDB_val k = *key, v;
    int bad = 0;
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && k.mv_size == key->mv_size && mdb_cmp(txn, dbi, &k, key) == 0) {
        *val = v;
        mdb_cursor_close(c);
        return 0;
    }
    if (rc == 0) {
        bad = k.mv_size != key->mv_size || mdb_cmp(txn, dbi, &k, key) < 0;
        if (!bad) rc = mdb_cursor_get(c, &k, &v, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    }
    /* (every caller's table has keys of one size: a neighbour of another
     * size means the search went into another table's pages) */
    if (rc == 0 && !bad) bad = k.mv_size != key->mv_size || mdb_cmp(txn, dbi, &k, key) >= 0;
    /* Not caught here (docs/reliability.md, F12): a flipped child pointer
     * that sends the search into another leaf of the same table whose
     * neighbours still look ordered around the key. Walking a leaf's worth
     * of keys each way catches it, but made "not found" lookups about 4x
     * slower; the store and snapshot checks do see it. */
    mdb_cursor_close(c);
    if (bad)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "%s: the LMDB B-tree is out of order around the key "
                                "(a damaged branch page): corrupt LMDB file", what);
    if (rc && rc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, rc, what);
    return GSNAP_NOTFOUND;
}

/* ---- verification cache -------------------------------------------------- */

/* The set is kept in order of last use (the most recent last): a hit moves
 * its key to the end, and a full set drops its first, least recently used
 * key. The values every view reads (the dense base) thus stay verified
 * while new runs keep coming; a set that was emptied when full had them
 * hashed again (milliseconds) every few dozen runs. */
int gsnap_store__verified(gsnap_db *db, uint64_t key) {
    int hit = 0;
    pthread_mutex_lock(&db->lock);
    for (int i = db->nverified - 1; i >= 0 && !hit; i--)
        if (db->verified[i] == key) {
            memmove(db->verified + i, db->verified + i + 1, (size_t)(db->nverified - 1 - i) * sizeof *db->verified);
            db->verified[db->nverified - 1] = key;
            hit = 1;
        }
    pthread_mutex_unlock(&db->lock);
    return hit;
}

void gsnap_store__set_verified(gsnap_db *db, uint64_t key) {
    pthread_mutex_lock(&db->lock);
    if (db->nverified == (int)(sizeof db->verified / sizeof db->verified[0])) {
        memmove(db->verified, db->verified + 1, (size_t)(db->nverified - 1) * sizeof *db->verified);
        db->nverified--;
    }
    db->verified[db->nverified++] = key;
    pthread_mutex_unlock(&db->lock);
}

/* ---- txns holding the map ---------------------------------------------- */

/* Begin a txn; the caller holds the map. MDB_MAP_RESIZED: release the hold,
 * adopt the size, take a hold again, retry. On failure no hold is left. */
static int begin_held(gsnap_db *db, unsigned flags, MDB_txn **txn) {
    for (int tries = 0;; tries++) {
        int rc = mdb_txn_begin(db->env, NULL, flags, txn);
        if (rc == 0) return 0;
        gsnap_store__map_release(db);
        if (rc == MDB_MAP_RESIZED && tries < 8) {
            if ((rc = gsnap_store__remap(db, 0)) || (rc = gsnap_store__map_hold(db))) return rc;
            continue;
        }
        return gsnap_store__mdb_err(db, rc, flags & MDB_RDONLY ? "beginning a read transaction"
                                                                : "beginning a write transaction");
    }
}

int gsnap_store__txn_begin(gsnap_db *db, unsigned flags, MDB_txn **txn) {
    int rc = gsnap_store__map_hold(db);
    return rc ? rc : begin_held(db, flags, txn);
}

/* A failed commit: LMDB reports a short write as EIO, so find out whether the
 * file system is full or the process hit its file size limit, and say so. */
static int commit_failure(gsnap_db *db, int rc) {
    if (rc != EIO && rc != ENOSPC && rc != EFBIG && rc != EDQUOT)
        return gsnap_store__mdb_err(db, rc, "committing a write transaction");
    char f[4096];
    struct stat sb;
    struct statvfs sv;
    struct rlimit rl;
    snprintf(f, sizeof f, "%s/data.mdb", db->path);
    off_t size = stat(f, &sb) == 0 ? sb.st_size : 0;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)size + (1u << 20) >= (uint64_t)rl.rlim_cur)
        return gsnap_store__err(db, GSNAP_ENOSPC, "committing to '%s': the file size limit (RLIMIT_FSIZE, %llu bytes) "
                                "is reached; nothing of this transaction was committed",
                                f, (unsigned long long)rl.rlim_cur);
    if (statvfs(db->path, &sv) == 0) {
        uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
        if (rc == ENOSPC || avail < (16u << 20))
            return gsnap_store__err(db, GSNAP_ENOSPC, "committing to '%s': no space left on the file system "
                                    "(%llu bytes free); nothing of this transaction was committed",
                                    f, (unsigned long long)avail);
    }
    return gsnap_store__mdb_err(db, rc, "committing a write transaction");
}

/* One attempt of a write: the caller holds the map and db->write_lock.
 * *remap = 1 when the map must grow (*seen: its size now) or be adopted
 * (*seen = 0) before the write is tried again. */
static int write_once(gsnap_db *db, gsnap_write_fn fn, void *ctx, int *remap, size_t *seen) {
    MDB_txn *txn = NULL;
    int mrc = mdb_txn_begin(db->env, NULL, 0, &txn);
    if (mrc == MDB_MAP_RESIZED) *remap = 1;
    if (mrc) return gsnap_store__mdb_err(db, mrc, "beginning a write transaction");
    tls_map_full = 0;
    int frc = fn(db, txn, ctx);
    if (frc == 0) mrc = mdb_txn_commit(txn);
    else mdb_txn_abort(txn);
    if (frc == 0 && mrc == 0) return 0;
    /* fn reports a full map through gsnap_store__mdb_err, which flags it. */
    if (mrc == MDB_MAP_FULL || (frc == GSNAP_ENOSPC && tls_map_full)) {
        MDB_envinfo info;
        mdb_env_info(db->env, &info);
        *seen = info.me_mapsize;
        *remap = 1;
        return frc ? frc : gsnap_store__mdb_err(db, mrc, "committing a write transaction");
    }
    if (frc) return frc;
    if (mrc == MDB_MAP_RESIZED) {
        *remap = 1;
        return gsnap_store__mdb_err(db, mrc, "committing a write transaction");
    }
    return commit_failure(db, mrc);
}

/* The map hold comes before the write lock, and a remap runs with neither
 * (mapgate.c, I1 and I3). */
int gsnap_store__write(gsnap_db *db, gsnap_write_fn fn, void *ctx) {
    if (db->read_only)
        return gsnap_store__err(db, GSNAP_EACCES, "database '%s' is open read-only", db->path);
    if (tls_writing == db)
        return gsnap_store__err(db, GSNAP_EBUSY, "a write transaction on '%s' started another write of "
                                "the same database in its own thread", db->path);
    int rc = 0;
    gsnap_store__write_enter(db); /* waits while a shrink copies and swaps the file (swap.c) */
    for (int attempt = 0;; attempt++) {
        int remap = 0;
        size_t seen = 0;
        if ((rc = gsnap_store__map_hold(db))) break;
        pthread_mutex_lock(&db->write_lock);
        gsnap_db *outer = tls_writing;
        tls_writing = db;
        rc = write_once(db, fn, ctx, &remap, &seen);
        tls_writing = outer;
        pthread_mutex_unlock(&db->write_lock);
        gsnap_store__map_release(db);
        if (!remap || attempt >= 40) break;
        if ((rc = gsnap_store__remap(db, seen))) break;
    }
    gsnap_store__write_leave(db);
    return rc;
}

/* ---- read views ------------------------------------------------------------ */

static int runs_cmp_id(const void *a, const void *b) {
    uint64_t x = ((const gsnap_run *)a)->id, y = ((const gsnap_run *)b)->id;
    return x < y ? -1 : x > y;
}

int gsnap_read_begin(gsnap_db *db, gsnap_read **out) {
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    gsnap_read *rd = calloc(1, sizeof *rd);
    if (!rd) return GSNAP_ENOMEM;
    rd->db = db;
    int rc;
    MDB_txn *txn = NULL;
    /* one critical section: the map hold and a pooled txn */
    pthread_mutex_lock(&db->lock);
    int lost = gsnap_store__map_hold_locked(db);
    if (!lost && db->npool > 0) txn = db->pool[--db->npool];
    pthread_mutex_unlock(&db->lock);
    if (lost) {
        free(rd);
        return gsnap_store__map_hold(db); /* the error, with its message */
    }
    if (txn && mdb_txn_renew(txn)) {
        mdb_txn_abort(txn);
        txn = NULL;
    }
    if (!txn && (rc = begin_held(db, MDB_RDONLY, &txn))) { free(rd); return rc; }
    rd->txn = txn;
    if ((rc = gsnap_store__read_meta(db, txn, &rd->meta)) ||
        (rc = gsnap_store__load_runs(db, txn, &rd->runs, &rd->nruns))) {
        gsnap_read_end(rd);
        return rc;
    }
    if (rd->nruns > 1) qsort(rd->runs, rd->nruns, sizeof *rd->runs, runs_cmp_id);
    if (!(rd->blooms = calloc(rd->nruns * 2 + 1, sizeof *rd->blooms)) ||
        !(rd->denses = calloc(rd->nruns * 2 + 1, sizeof *rd->denses))) {
        gsnap_read_end(rd);
        return GSNAP_ENOMEM;
    }
    *out = rd;
    return 0;
}

uint64_t gsnap_read_version(const gsnap_read *rd) { return rd ? rd->meta.version : 0; }

MDB_txn *gsnap_read__txn(gsnap_read *rd) { return rd->txn; }
uint64_t gsnap_read__deletes(const gsnap_read *rd) { return rd->meta.deletes; }

void gsnap_read_end(gsnap_read *rd) {
    if (!rd) return;
    gsnap_db *db = rd->db;
    if (rd->cur) mdb_cursor_close(rd->cur);
    gsnap_fence__view_end(rd);
    if (rd->txn) {
        mdb_txn_reset(rd->txn);
        pthread_mutex_lock(&db->lock);
        if (db->npool < (int)(sizeof db->pool / sizeof db->pool[0])) {
            db->pool[db->npool++] = rd->txn;
            rd->txn = NULL;
            gsnap_store__map_release_locked(db);
        }
        pthread_mutex_unlock(&db->lock);
        if (rd->txn) { /* the pool is full */
            mdb_txn_abort(rd->txn);
            gsnap_store__map_release(db);
        }
    }
    free(rd->runs);
    free(rd->blooms);
    free(rd->denses);
    free(rd->scratch);
    free(rd->merge_tmp);
    free(rd->merge_out);
    free(rd->segs);
    free(rd->seg);
    free(rd->ids);
    free(rd->ids_tmp);
    free(rd);
}

int gsnap_read__use(gsnap_db *db, gsnap_read *rd, gsnap_read **out, int *owned) {
    if (rd) {
        if (rd->db != db) return gsnap_store__err(db, GSNAP_EINVAL, "read view belongs to another database");
        *out = rd;
        *owned = 0;
        return 0;
    }
    *owned = 1;
    return gsnap_read_begin(db, out);
}
