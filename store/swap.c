/*
 * store/swap.c -- giving space back under an open handle (gsnap_db_shrink,
 * the last step of gsnap_db_compact): a compact copy of the environment is
 * renamed over data.mdb and the handle's environment reopened on it.
 *
 * LMDB never shrinks its data file, and a merge of every run writes the new
 * base while the old runs are still live in the same transaction, so the
 * file ends larger than the data (PGP: 18.6 -> 27.6 bytes per edge). Only a
 * copy gives the space back; this does it under the open handle (and
 * retention, retain.c, under its own):
 *
 *   0. data.mdb.shrink is opened (created, or a leftover reused) and locked
 *      with an exclusive flock without waiting: two processes never shrink
 *      at once (retention, retain.c, shrinks through this too).
 *   1. exclusive between processes: every handle holds a shared flock(2) on
 *      the directory (db.c); it is converted to an exclusive one without
 *      waiting (another process has the database open: GSNAP_EBUSY, the
 *      shared lock is taken again). Openers of other processes wait in
 *      flock until step 5.
 *   2. no commit in between: the writer gate closes (writes of other
 *      threads wait in gsnap_store__write before they take a map hold; the
 *      ones already past it get SWAP_WAIT_MS to end) and stays closed to the
 *      end; mdb_env_copyfd2(MDB_CP_COMPACT) writes the copy into
 *      data.mdb.shrink (truncated first), fsync. Readers go on meanwhile.
 *   3. no txn of this process: the map gate is closed (gsnap_store__gate_close)
 *      and the swap waits at most SWAP_WAIT_MS for the read views of other
 *      threads to end (GSNAP_EBUSY otherwise; the copy is removed).
 *   4. with db->lock held and no txn live: the pooled read txns are aborted,
 *      the copy renamed over data.mdb, the directory fsynced, the old
 *      environment closed and a new one opened on the same path with the
 *      same flags and map size; the tables are opened again in the order of
 *      their handles, so every MDB_dbi cached above (snapshots, features)
 *      keeps its meaning; the verification caches are cleared (the new file
 *      is verified again as it is read).
 *   5. the map gate and the writer gate open, the exclusive flock goes back
 *      to shared.
 *
 * Crash safety: rename(2) replaces data.mdb atomically; the copy is synced
 * before it and the directory after it. A kill before the rename leaves the
 * old file whole (and a data.mdb.shrink that the next shrink reuses), a
 * kill after it the new file, whole. lock.mdb is rebuilt by the next
 * opener (LMDB does so for the first process to open an environment).
 * A failure to reopen after the rename leaves the data safe on disk and the
 * handle unusable (the map-lost error: close and reopen).
 */
#include "store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SWAP_WAIT_MS 1000 /* step 3: how long other threads' read views may take to end */

void (*gsnap_store__swap_hook)(gsnap_db *db, int step);

static void hook(gsnap_db *db, int step) {
    if (gsnap_store__swap_hook) gsnap_store__swap_hook(db, step);
}

static uint64_t file_bytes(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* ---- the writer gate: writes wait while a shrink copies and swaps ---- */

void gsnap_store__write_enter(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    while (db->writes_closed) pthread_cond_wait(&db->gate_cv, &db->lock);
    db->writes_in++;
    pthread_mutex_unlock(&db->lock);
}

void gsnap_store__write_leave(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    if (--db->writes_in == 0 && db->writes_closed) pthread_cond_broadcast(&db->gate_cv);
    pthread_mutex_unlock(&db->lock);
}

/* Close the writer gate and wait at most wait_ms for the writes past it to
 * end (they wait for nothing of the shrink: a write holds its map hold and
 * the write lock only after the gate). 0, or GSNAP_EBUSY (gate open again). */
static int writes_close(gsnap_db *db, long wait_ms) {
    struct timespec end = gsnap_store__deadline(wait_ms);
    pthread_mutex_lock(&db->lock);
    db->writes_closed++;
    int timed_out = 0;
    while (db->writes_in > 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&db->gate_cv, &db->lock, &end) == ETIMEDOUT && db->writes_in > 0;
    if (timed_out) {
        db->writes_closed--;
        pthread_cond_broadcast(&db->gate_cv);
    }
    pthread_mutex_unlock(&db->lock);
    return timed_out ? gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: a write of another thread did "
                                        "not end within %ld ms", db->path, wait_ms)
                     : 0;
}

static void writes_open(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    db->writes_closed--;
    pthread_cond_broadcast(&db->gate_cv);
    pthread_mutex_unlock(&db->lock);
}

/* After a failed conversion left the directory unlocked for a moment: did
 * another process's retention compaction (retain.c, which takes the lock
 * exclusively with its own handle closed) swap data.mdb meanwhile? Then
 * this handle's environment is on a removed file: it is given up. */
static int replaced(gsnap_db *db, const char *f) {
    int efd = -1;
    struct stat a, b;
    if (mdb_env_get_fd(db->env, &efd) != 0 || fstat(efd, &a) != 0 || stat(f, &b) != 0) return 0;
    if (a.st_ino == b.st_ino && a.st_dev == b.st_dev) return 0;
    pthread_mutex_lock(&db->lock);
    db->map_lost = 1;
    pthread_mutex_unlock(&db->lock);
    return gsnap_store__err(db, GSNAP_EIO, "'%s' was replaced by another process while this handle had it open "
                            "(a retention compaction); close and reopen the database", f);
}

/* One table of the handle: its name and handle, in handle order. */
struct tab { const char *name; MDB_dbi dbi; unsigned flags; };

static int tab_cmp(const void *a, const void *b) {
    MDB_dbi x = ((const struct tab *)a)->dbi, y = ((const struct tab *)b)->dbi;
    return x < y ? -1 : x > y;
}

/* The tables, sorted by handle (db->lock held). A fresh environment hands
 * out handles 2, 3, ... in the order tables are opened: 1 when the handles
 * have a gap that reopening cannot reproduce. */
static int list_tables(gsnap_db *db, struct tab *t, int *n) {
    static const char *core[] = {"gs.meta", "gs.runs", "gs.data", "gs.changes", "gs.bloom", "gs.dense", "gs.vlog"};
    MDB_dbi cdbi[7] = {db->meta_dbi, db->runs_dbi, db->data_dbi, db->changes_dbi, db->bloom_dbi, db->dense_dbi,
                       db->vlog_dbi};
    int k = 0;
    for (int i = 0; i < (db->has_vlog ? 7 : 6); i++) t[k++] = (struct tab){core[i], cdbi[i], 0};
    for (int i = 0; i < db->ntables; i++) t[k++] = (struct tab){db->tables[i].name, db->tables[i].dbi, 0};
    qsort(t, (size_t)k, sizeof *t, tab_cmp);
    *n = k;
    for (int i = 0; i < k; i++)
        if (t[i].dbi != (MDB_dbi)(2 + i)) return 1;
    return 0;
}

/* Step 0: data.mdb.shrink, created or reused, locked (flock LOCK_EX, not
 * waiting): the lock makes shrinks of two processes take turns through
 * step 1 (a failed conversion leaves a moment with no lock on the
 * directory). The fd, -1 with GSNAP_EBUSY when another shrink holds it. */
static int lock_tmp(gsnap_db *db, const char *tmp, int *fdp) {
    for (int tries = 0; tries < 4; tries++) {
        int fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0664);
        if (fd < 0)
            return gsnap_store__err(db, errno == EACCES || errno == EROFS || errno == ENOSPC ?
                                    gsnap_store__map_rc(errno) : GSNAP_EIO, "cannot create %s: %s", tmp, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: another process is shrinking it",
                                    db->path);
        }
        struct stat a, b; /* still the file at that name (not renamed or removed meanwhile)? */
        if (fstat(fd, &a) == 0 && stat(tmp, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            if (ftruncate(fd, 0) != 0) {
                int rc = gsnap_store__err(db, GSNAP_EIO, "truncating %s: %s", tmp, strerror(errno));
                close(fd);
                return rc;
            }
            *fdp = fd;
            return 0;
        }
        close(fd);
    }
    return gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: %s kept changing", db->path, tmp);
}

/* Step 2: the compact copy into fd, the tables' flags and the txn id. */
static int write_copy(gsnap_db *db, int fd, uint64_t *txnid) {
    int rc = gsnap_store__copy_fd(db, fd);
    MDB_txn *txn = NULL;
    if (rc == 0 && (rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn)) == 0) {
        *txnid = (uint64_t)mdb_txn_id(txn); /* the copy's: writes are closed */
        mdb_txn_abort(txn);
        gsnap_store__map_release(db);
    }
    return rc;
}

/* The tables to open again, listed once the gate is closed (db->lock held,
 * no hold live), so that a table another thread recorded during the copy
 * is among them; one recorded after the swap is opened again on the new
 * environment (gsnap_store__table retries when db->swap_gen moved). Their
 * flags from a txn of the old environment, which only this thread uses now. */
static int tables_now(gsnap_db *db, struct tab *t, int *nt) {
    if (list_tables(db, t, nt))
        return gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: its table handles have a gap that a "
                                "reopened environment cannot reproduce (close and reopen the database, then shrink)",
                                db->path);
    MDB_txn *txn = NULL;
    int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
    for (int i = 0; rc == 0 && i < *nt; i++) rc = mdb_dbi_flags(txn, t[i].dbi, &t[i].flags);
    if (txn) mdb_txn_abort(txn);
    return rc ? gsnap_store__mdb_err(db, rc, "shrink: reading the tables' flags") : 0;
}

/* Step 4, after the rename: a new environment on data.mdb with the tables
 * at their old handles. On failure the handle is lost (db->map_lost). */
static int reopen(gsnap_db *db, unsigned flags, size_t mapsize, unsigned maxreaders, struct tab *t, int nt) {
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    const char *what = "creating the environment";
    int rc = mdb_env_create(&env);
    if (rc == 0) {
        mdb_env_set_maxdbs(env, 256);
        mdb_env_set_maxreaders(env, maxreaders);
        what = "opening the environment";
        if (!(rc = mdb_env_set_mapsize(env, mapsize))) rc = mdb_env_open(env, db->path, flags, 0664);
    }
    if (rc == 0) {
        what = "opening the tables";
        rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    }
    for (int i = 0; rc == 0 && i < nt; i++) {
        MDB_dbi d = 0;
        rc = mdb_dbi_open(txn, t[i].name, t[i].flags & ~(unsigned)MDB_CREATE, &d);
        if (rc == 0 && d != t[i].dbi) rc = MDB_INCOMPATIBLE;
    }
    if (txn && rc) mdb_txn_abort(txn);
    else if (txn) rc = mdb_txn_commit(txn);
    if (rc) {
        if (env) mdb_env_close(env);
        db->env = NULL;
        db->map_lost = 1;
        return gsnap_store__err(db, gsnap_store__map_rc(rc), "'%s': the compacted file was swapped in, but %s on "
                                "it failed (%s); close and reopen the database (nothing committed was lost)",
                                db->path, what, mdb_strerror(rc));
    }
    db->env = env;
    return 0;
}

/* Steps 3-4 (the copy of txn `txnid` is at tmp; writes closed, no hold). */
static int swap_in(gsnap_db *db, const char *tmp, uint64_t txnid) {
    int rc = gsnap_store__gate_close(db, SWAP_WAIT_MS);
    if (rc == GSNAP_EBUSY)
        return gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: read views of other threads stayed open "
                                "for %d ms (end them, then shrink again)", db->path, SWAP_WAIT_MS);
    if (rc) return rc;
    struct tab t[7 + GSNAP_MAX_TABLES];
    int nt = 0;
    if ((rc = tables_now(db, t, &nt))) {
        gsnap_store__gate_open(db);
        return rc;
    }
    /* db->lock held, no txn of this process live */
    char f[4200];
    unsigned flags = 0;
    unsigned maxreaders = 126;
    MDB_envinfo info;
    snprintf(f, sizeof f, "%s/data.mdb", db->path);
    mdb_env_get_flags(db->env, &flags);
    mdb_env_get_maxreaders(db->env, &maxreaders);
    mdb_env_info(db->env, &info);
    if ((uint64_t)info.me_last_txnid != txnid) { /* cannot happen: writes are closed */
        gsnap_store__gate_open(db);
        return gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: a commit came after the copy", db->path);
    }
    if (rename(tmp, f) != 0) {
        rc = gsnap_store__err(db, GSNAP_EIO, "renaming %s over %s: %s", tmp, f, strerror(errno));
        gsnap_store__gate_open(db);
        return rc;
    }
    fsync(db->dir_fd);
    hook(db, 2);
    for (int i = 0; i < db->npool; i++) mdb_txn_abort(db->pool[i]);
    db->npool = 0;
    mdb_env_close(db->env);
    db->env = NULL;
    db->swap_gen++; /* a table handle of the old environment not recorded yet is opened again */
    rc = reopen(db, flags, info.me_mapsize, maxreaders, t, nt);
    /* the new file is verified again as it is read */
    db->nverified = 0;
    memset(db->chunk_ok, 0, sizeof db->chunk_ok);
    db->warm_run = 0;
    if (rc == 0) hook(db, 3);
    gsnap_store__gate_open(db);
    return rc;
}

int gsnap_db_shrink(gsnap_db *db, gsnap_compact_report *report) {
    gsnap_compact_report rep;
    memset(&rep, 0, sizeof rep);
    rep.horizon_t = INT64_MIN;
    if (report) *report = rep;
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    if (db->read_only) return gsnap_store__err(db, GSNAP_EACCES, "database '%s' is open read-only", db->path);
    double t0 = gsnap_now();
    char f[4200], tmp[4200];
    snprintf(f, sizeof f, "%s/data.mdb", db->path);
    snprintf(tmp, sizeof tmp, "%s/data.mdb.shrink", db->path);
    rep.bytes_before = rep.bytes_after = file_bytes(f);
    gsnap_db_horizon(db, &rep.horizon, &rep.horizon_t);
    int rc, fd = -1;
    if (gsnap_store__thread_holds() > 0) {
        rc = gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: this thread holds a read view or transaction "
                              "(the swap needs every one ended)", db->path);
        goto out_busy;
    }
    pthread_mutex_lock(&db->lock);
    int busy = db->shrinking;
    db->shrinking = 1;
    pthread_mutex_unlock(&db->lock);
    if (busy) { /* the directory lock is this handle's: a second shrink would convert it under the first */
        rc = gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: another thread of this process is shrinking it",
                              db->path);
        goto out_busy;
    }
    if ((rc = lock_tmp(db, tmp, &fd))) goto out;
    /* 1. no other process (LOCK_EX replaces this handle's LOCK_SH; when it
     * fails the shared lock is gone too: take it again) */
    if (db->dir_fd < 0 || flock(db->dir_fd, LOCK_EX | LOCK_NB) != 0) {
        if (db->dir_fd >= 0) flock(db->dir_fd, LOCK_SH);
        unlink(tmp);
        if ((rc = replaced(db, f))) goto out;
        rc = gsnap_store__err(db, GSNAP_EBUSY, "'%s' was not shrunk: another process has the database open "
                              "(shrinking swaps the file and needs it alone)", db->path);
        goto out;
    }
    /* 2. no write of this process from here to the end */
    if ((rc = writes_close(db, SWAP_WAIT_MS))) goto unlock_dir;
    uint64_t txnid = 0;
    rc = write_copy(db, fd, &txnid);
    if (rc == 0) {
        hook(db, 1);
        rc = swap_in(db, tmp, txnid); /* 3, 4 */
    }
    writes_open(db);
    if (rc == 0) rep.shrunk = 1;
unlock_dir:
    if (rc) unlink(tmp); /* (gone already when the rename was done) */
    flock(db->dir_fd, LOCK_SH); /* 5. */
out:
    if (fd >= 0) close(fd); /* after the swap: the lock of step 0 on what is data.mdb now */
    pthread_mutex_lock(&db->lock);
    db->shrinking = 0;
    pthread_mutex_unlock(&db->lock);
out_busy:
    rep.bytes_after = file_bytes(f);
    rep.seconds = gsnap_now() - t0;
    if (report) *report = rep;
    return rc;
}
