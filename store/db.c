/*
 * store/db.c -- the database handle: open (directory checks, the LMDB
 * environment, the tables, the meta record), close, and the accessors.
 * Transactions, map growth and read views are in txn.c; statistics in
 * stat.c.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int gsnap_store__map_rc(int rc) {
    switch (rc) {
    case 0: return 0;
    case MDB_NOTFOUND: return GSNAP_NOTFOUND;
    case ENOMEM: return GSNAP_ENOMEM;
    case ENOSPC: case EFBIG: case EDQUOT: return GSNAP_ENOSPC;
    case EACCES: case EPERM: case EROFS: return GSNAP_EACCES;
    case EIO: return GSNAP_EIO;
    case EINVAL: return GSNAP_EINVAL;
    case ENOENT: return GSNAP_NOTFOUND;
    case MDB_CORRUPTED: case MDB_PAGE_NOTFOUND: return GSNAP_ECORRUPT;
    case MDB_CURSOR_FULL: return GSNAP_ECORRUPT; /* a B-tree deeper than 32: a page loop */
    case MDB_VERSION_MISMATCH: case MDB_INVALID: return GSNAP_EFORMAT;
    case MDB_READERS_FULL: return GSNAP_EBUSY;
    case MDB_MAP_FULL: return GSNAP_ENOSPC;
    default: return rc > 0 ? GSNAP_EIO : GSNAP_ELMDB;
    }
}

unsigned gsnap_store__keep(const gsnap_db *db) { return db->keep; }
int gsnap_store__read_only(const gsnap_db *db) { return db->read_only; }
const char *gsnap_db_path(const gsnap_db *db) { return db ? db->path : NULL; }

/* ---- open / close --------------------------------------------------------- */

struct init_ctx { unsigned keep; int fresh; };

static int init_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct init_ctx *c = vctx;
    int rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.meta", MDB_CREATE, &db->meta_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.runs", MDB_CREATE, &db->runs_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.data", MDB_CREATE, &db->data_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.changes", MDB_CREATE, &db->changes_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.bloom", MDB_CREATE, &db->bloom_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.dense", MDB_CREATE, &db->dense_dbi))) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.vlog", MDB_CREATE, &db->vlog_dbi))) return rc;
    db->has_vlog = 1;
    struct gsnap_meta m;
    rc = gsnap_store__read_meta(db, txn, &m);
    if (rc == GSNAP_NOTFOUND) {
        memset(&m, 0, sizeof m);
        m.magic = GSNAP_META_MAGIC;
        m.format = GSNAP_STORE_FORMAT;
        m.keep = c->keep;
        m.next_run = 1;
        m.horizon_t = INT64_MIN;
        c->fresh = 1;
        return gsnap_store__put_meta(db, txn, &m);
    }
    return rc;
}

static int open_tables_ro(gsnap_db *db) {
    MDB_txn *txn = NULL;
    int rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn);
    if (rc) return rc;
    if ((rc = gsnap_store__open_dbi(db, txn, "gs.meta", 0, &db->meta_dbi)) ||
        (rc = gsnap_store__open_dbi(db, txn, "gs.runs", 0, &db->runs_dbi)) ||
        (rc = gsnap_store__open_dbi(db, txn, "gs.data", 0, &db->data_dbi)) ||
        (rc = gsnap_store__open_dbi(db, txn, "gs.changes", 0, &db->changes_dbi)) ||
        (rc = gsnap_store__open_dbi(db, txn, "gs.bloom", 0, &db->bloom_dbi)) ||
        (rc = gsnap_store__open_dbi(db, txn, "gs.dense", 0, &db->dense_dbi))) {
        mdb_txn_abort(txn);
    } else {
        db->has_vlog = gsnap_store__open_dbi(db, txn, "gs.vlog", 0, &db->vlog_dbi) == 0;
        rc = gsnap_store__mdb_err(db, mdb_txn_commit(txn), "opening tables");
    }
    gsnap_store__map_release(db);
    return rc;
}

/* Remove what a failed open created (it must leave nothing behind). */
static void undo_create(const char *path, int made_dir, int made_data, int made_lock) {
    char f[4096];
    if (made_data) {
        snprintf(f, sizeof f, "%s/data.mdb", path);
        unlink(f);
    }
    if (made_lock) {
        snprintf(f, sizeof f, "%s/lock.mdb", path);
        unlink(f);
    }
    if (made_dir) rmdir(path);
}

static int file_exists(const char *dir, const char *name) {
    char f[4096];
    snprintf(f, sizeof f, "%s/%s", dir, name);
    return access(f, F_OK) == 0;
}

/* What a failed open must undo (undo_create, the claim) and the file probe. */
struct open_state {
    int made_dir, made_data, made_lock, claimed;
    struct stat st;
    gsnap_probe pr;
};

/* The database directory: there (or created when allowed), a directory,
 * holding an LMDB data.mdb whose meta pages read back (gsnap_store__probe)
 * unless a new database may be created; claimed for this process (one open
 * per directory and process: GSNAP_EBUSY). */
static int check_dir(const char *path, const gsnap_db_options *opts, struct open_state *os) {
    char msg[1024];
    int rc;
    if (stat(path, &os->st) != 0) {
        if (errno != ENOENT)
            return gsnap_err_open(gsnap_store__map_rc(errno), "%s: %s", path, strerror(errno));
        if (!opts->create || opts->read_only)
            return gsnap_err_open(GSNAP_NOTFOUND, "%s: no such database directory", path);
        if (mkdir(path, 0775) != 0)
            return gsnap_err_open(gsnap_store__map_rc(errno), "%s: cannot create directory: %s", path,
                                  strerror(errno));
        os->made_dir = 1;
        if (stat(path, &os->st) != 0)
            return gsnap_err_open(gsnap_store__map_rc(errno), "%s: %s", path, strerror(errno));
    } else if (!S_ISDIR(os->st.st_mode)) {
        return gsnap_err_open(GSNAP_EEXIST, "%s exists and is not a directory", path);
    }
    char datafile[4096];
    snprintf(datafile, sizeof datafile, "%s/data.mdb", path);
    rc = gsnap_store__probe(datafile, &os->pr, msg, sizeof msg);
    if (rc == GSNAP_NOTFOUND) {
        if (!opts->create || opts->read_only)
            return gsnap_err_open(GSNAP_NOTFOUND, "%s: no graphsnap database here (no data.mdb)", path);
        os->made_data = 1;
    } else if (rc) {
        return gsnap_err_open(rc, "%s", msg);
    }
    os->made_lock = !file_exists(path, "lock.mdb");
    if (gsnap_store__claim_dir((uint64_t)os->st.st_dev, (uint64_t)os->st.st_ino)) {
        os->made_lock = 0;
        return gsnap_err_open(GSNAP_EBUSY, "%s: this database is already open in this process; LMDB allows one "
                              "environment per file and process: share the open gsnap_db handle (it is "
                              "thread-safe)", path);
    }
    os->claimed = 1;
    return 0;
}

static gsnap_db *alloc_db(const char *path, const gsnap_db_options *opts, const struct stat *st) {
    gsnap_db *db = calloc(1, sizeof *db);
    if (!db) return NULL;
    db->magic = GSNAP_DB_MAGIC;
    /* A shared lock on the directory for as long as the handle is open:
     * gsnap_db_compact_history swaps data.mdb only while it can take it
     * exclusively (nobody else has the database open). */
    db->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (db->dir_fd >= 0) flock(db->dir_fd, LOCK_SH);
    db->path = strdup(path);
    db->read_only = opts->read_only;
    db->merge_fanout = opts->merge_fanout ? opts->merge_fanout : GSNAP_MERGE_FANOUT;
    db->fence_budget = opts->read_cache_bytes < 0 ? 0
                       : opts->read_cache_bytes == 0 ? GSNAP_FENCE_HELD_BYTES : (uint64_t)opts->read_cache_bytes;
    db->sync = opts->sync;
    db->dir_dev = (uint64_t)st->st_dev;
    db->dir_ino = (uint64_t)st->st_ino;
    pthread_cond_init(&db->gate_cv, NULL);
    pthread_mutex_init(&db->write_lock, NULL);
    pthread_mutex_init(&db->lock, NULL);
    pthread_mutex_init(&db->fence_build_lock, NULL);
    return db;
}

/* Create and open the LMDB environment of db at path. Maps the size the file
 * records (an earlier session grew it) when that is larger and can be mapped;
 * else ours (LMDB raises it to the data size). */
static int open_env(gsnap_db *db, const char *path, const gsnap_db_options *opts, const struct open_state *os) {
    char msg[1024];
    int rc;
    size_t map = opts->map_size ? opts->map_size : (size_t)64 << 20;
    unsigned flags = MDB_NOTLS | MDB_NORDAHEAD;
    if (opts->read_only) flags |= MDB_RDONLY;
    if (opts->no_lock) flags |= MDB_NOLOCK;
    if (opts->sync == GSNAP_SYNC_NONE) flags |= MDB_NOSYNC;
    size_t want = map;
    if (!os->made_data && os->pr.mapsize > want &&
        gsnap_store__map_limit((size_t)os->pr.mapsize, msg, sizeof msg) == 0)
        want = (size_t)os->pr.mapsize;
    for (int attempt = 0;; attempt++) {
        if ((rc = mdb_env_create(&db->env)))
            return gsnap_err_open(gsnap_store__map_rc(rc), "mdb_env_create: %s", mdb_strerror(rc));
        mdb_env_set_maxdbs(db->env, 256);
        mdb_env_set_maxreaders(db->env, opts->max_readers ? opts->max_readers : 126);
        if ((rc = mdb_env_set_mapsize(db->env, want)))
            return gsnap_err_open(gsnap_store__map_rc(rc), "%s: map size %zu bytes refused by LMDB: %s",
                                  path, want, mdb_strerror(rc));
        rc = mdb_env_open(db->env, path, flags, 0664);
        if (rc == 0) break;
        mdb_env_close(db->env);
        db->env = NULL;
        /* mmap refuses a length it cannot place with ENOMEM (EINVAL under
         * some address-space managers, e.g. valgrind's, for huge lengths) */
        int unmappable = rc == ENOMEM || (rc == EINVAL && want >= ((size_t)1 << 40));
        if (unmappable && want > map && attempt == 0) { want = map; continue; }
        if (opts->read_only && !(flags & MDB_NOLOCK) && (rc == EACCES || rc == EROFS) && attempt < 2) {
            /* read-only media: no lock file can be made; read without one */
            flags |= MDB_NOLOCK;
            continue;
        }
        if (unmappable) {
            struct rlimit rl;
            char lim[64] = "none";
            if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
                snprintf(lim, sizeof lim, "%llu bytes", (unsigned long long)rl.rlim_cur);
            return gsnap_err_open(GSNAP_ENOMEM, "%s: map size %zu bytes (%.1f GiB) cannot be mapped: the kernel "
                                  "refused the address space (RLIMIT_AS limit: %s; x86-64 user space: 128 TiB); "
                                  "use a smaller map size, the map grows by itself",
                                  path, want, (double)want / (1 << 30), lim);
        }
        return gsnap_err_open(gsnap_store__map_rc(rc), "%s: cannot open LMDB environment: %s", path,
                              mdb_strerror(rc));
    }
    int dead = 0;
    if (!(flags & MDB_NOLOCK)) mdb_reader_check(db->env, &dead);
    return 0;
}

/* Read the meta record: the format must be this build's; keep comes from it. */
static int adopt_meta(gsnap_db *db, const char *path) {
    MDB_txn *txn = NULL;
    struct gsnap_meta m;
    int rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn);
    if (rc) return gsnap_err_open(rc, "%s: %s", path, gsnap_err_last());
    rc = gsnap_store__read_meta(db, txn, &m);
    mdb_txn_abort(txn);
    gsnap_store__map_release(db);
    if (rc == GSNAP_NOTFOUND) return gsnap_err_open(GSNAP_ECORRUPT, "%s: store meta record missing", path);
    if (rc) return gsnap_err_open(rc, "%s: %s", path, gsnap_err_last());
    if (m.format < GSNAP_STORE_FORMAT_OLDEST || m.format > GSNAP_STORE_FORMAT)
        return gsnap_err_open(GSNAP_EFORMAT, "%s: store format version %u, this build reads versions %u..%u",
                              path, m.format, GSNAP_STORE_FORMAT_OLDEST, GSNAP_STORE_FORMAT);
    db->keep = m.keep;
    return 0;
}

int gsnap_db_open(const char *path, const gsnap_db_options *opts_in, gsnap_db **out) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    const gsnap_db_options *opts = &o;
    gsnap_db *db = NULL;
    struct open_state os;
    char msg[1024];
    int rc;
    memset(&os, 0, sizeof os);
    gsnap_err_open(0, "%s", "");
    if (!out) return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: out is NULL");
    *out = NULL;
    if (!path || !*path) return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: empty path");
    if (opts_in) {
        /* Older callers pass the struct without the fields added since. */
        if (opts_in->version == 1) memcpy(&o, opts_in, offsetof(gsnap_db_options, no_lock));
        else if (opts_in->version == 2) memcpy(&o, opts_in, offsetof(gsnap_db_options, read_cache_bytes));
        else if (opts_in->version == 3) memcpy(&o, opts_in, offsetof(gsnap_db_options, merge_fanout));
        else if (opts_in->version == GSNAP_DB_OPTIONS_VERSION) o = *opts_in;
        else
            return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: options version %u, expected 1..%u",
                                  opts_in->version, GSNAP_DB_OPTIONS_VERSION);
    }
    if (opts->keep < 1 || opts->keep > 3)
        return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: keep must be GSNAP_KEEP_IN, _OUT or _BOTH");
    if (opts->no_lock && !opts->read_only)
        return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: no_lock needs read_only");
    if (opts->merge_fanout == 1 || opts->merge_fanout > GSNAP_MERGE_FANOUT_MAX)
        return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: merge_fanout %u: must be 0 (the default, %u) or 2..%u",
                              opts->merge_fanout, GSNAP_MERGE_FANOUT, GSNAP_MERGE_FANOUT_MAX);
    size_t map = opts->map_size ? opts->map_size : (size_t)64 << 20;
    if ((rc = gsnap_store__map_limit(map, msg, sizeof msg))) return gsnap_err_open(rc, "%s: %s", path, msg);
    if ((rc = check_dir(path, opts, &os))) goto fail;
    if (!(db = alloc_db(path, opts, &os.st))) { rc = gsnap_err_open(GSNAP_ENOMEM, "out of memory"); goto fail; }
    if ((rc = open_env(db, path, opts, &os))) goto fail;
    if (opts->read_only) {
        rc = open_tables_ro(db);
        if (rc == GSNAP_NOTFOUND) { rc = gsnap_err_open(rc, "%s: not a graphsnap database", path); goto fail; }
        if (rc) { rc = gsnap_err_open(rc, "%s: %s", path, gsnap_err_last()); goto fail; }
    } else {
        struct init_ctx ic = {opts->keep, 0};
        rc = gsnap_store__write(db, init_fn, &ic);
        if (rc) { rc = gsnap_err_open(rc, "%s: %s", path, gsnap_err_last()); goto fail; }
    }
    if ((rc = adopt_meta(db, path))) goto fail;
    gsnap_store__claim_set(db->dir_dev, db->dir_ino, db);
    *out = db;
    return 0;
fail:
    if (db) {
        db->dir_dev = db->dir_ino = 0; /* released below */
        gsnap_db_close(db);
    }
    if (os.claimed) gsnap_store__release_dir((uint64_t)os.st.st_dev, (uint64_t)os.st.st_ino);
    undo_create(path, os.made_dir, os.made_data, os.made_lock);
    return rc;
}

void gsnap_db_close(gsnap_db *db) {
    if (!db || db->magic != GSNAP_DB_MAGIC) return;
    pthread_mutex_lock(&db->lock);
    if (db->batch) gsnap_batch__orphan(db->batch); /* closing aborts the open batch */
    db->batch = NULL;
    pthread_mutex_unlock(&db->lock);
    for (int i = 0; i < db->npool; i++) mdb_txn_abort(db->pool[i]);
    if (db->env) mdb_env_close(db->env);
    if (db->dir_fd >= 0) close(db->dir_fd); /* releases the flock */
    if (db->dir_dev || db->dir_ino) gsnap_store__release_dir(db->dir_dev, db->dir_ino);
    pthread_cond_destroy(&db->gate_cv);
    pthread_mutex_destroy(&db->write_lock);
    pthread_mutex_destroy(&db->lock);
    pthread_mutex_destroy(&db->fence_build_lock);
    gsnap_fence__close(db);
    free(db->path);
    gsnap_store__retire(db);
}
