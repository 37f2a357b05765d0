/*
 * store/db.c -- database handle: open/close, LMDB errors, the environment,
 * write transactions that survive map growth, read views.
 *
 * Map growth: LMDB returns MDB_MAP_FULL when the map is full. A write txn is
 * then aborted, the map doubled with mdb_env_set_mapsize() and the write
 * replayed (gsnap_store__write). mdb_env_set_mapsize() must not run while any
 * txn of this process is live, so every txn holds db->resize_lock shared and
 * growth takes it exclusively (writer-preferring, so growth is not starved).
 * A thread that holds a read view cannot grow the map (it would wait on
 * itself): it gets GSNAP_EBUSY with a message instead.
 * Another process growing the map shows up as MDB_MAP_RESIZED at txn begin:
 * we adopt the new size (mdb_env_set_mapsize(env, 0)) and retry.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdarg.h>
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

static _Thread_local int tls_views; /* read views held by this thread */
static _Thread_local int tls_map_full; /* an LMDB call in this thread hit MDB_MAP_FULL */

int gsnap_store__err(gsnap_db *db, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gsnap_err_vset(db, code, fmt, ap);
    va_end(ap);
    return code;
}

const char *gsnap_db_errmsg(const gsnap_db *db) { return gsnap_err_msg(db); }

static int map_rc(int rc) {
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

int gsnap_store__mdb_err(gsnap_db *db, int rc, const char *what) {
    if (rc == 0) return 0;
    if (rc == MDB_NOTFOUND) return GSNAP_NOTFOUND;
    if (rc == MDB_MAP_FULL) tls_map_full = 1;
    int code = map_rc(rc);
    if (rc == MDB_READERS_FULL)
        return gsnap_store__err(db, code, "%s: all LMDB reader slots are in use (%s); "
                                "raise max_readers or end idle read views", what, mdb_strerror(rc));
    return gsnap_store__err(db, code, "%s: %s", what, mdb_strerror(rc));
}

MDB_env *gsnap_store__env(gsnap_db *db) { return db->env; }
unsigned gsnap_store__keep(const gsnap_db *db) { return db->keep; }
int gsnap_store__read_only(const gsnap_db *db) { return db->read_only; }
const char *gsnap_db_path(const gsnap_db *db) { return db ? db->path : NULL; }

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

int gsnap_store__verified(gsnap_db *db, uint64_t key) {
    int hit = 0;
    pthread_mutex_lock(&db->lock);
    for (int i = 0; i < db->nverified && !hit; i++) hit = db->verified[i] == key;
    pthread_mutex_unlock(&db->lock);
    return hit;
}

void gsnap_store__set_verified(gsnap_db *db, uint64_t key) {
    pthread_mutex_lock(&db->lock);
    if (db->nverified == (int)(sizeof db->verified / sizeof db->verified[0])) db->nverified = 0;
    db->verified[db->nverified++] = key;
    pthread_mutex_unlock(&db->lock);
}

/* ---- map growth ---------------------------------------------------------- */

static int grow_map(gsnap_db *db, size_t min_size) {
    if (tls_views > 0)
        return gsnap_store__err(db, GSNAP_EBUSY, "the map is full and must grow, but this thread "
                                "holds a read view; end it before writing");
    pthread_rwlock_wrlock(&db->resize_lock);
    MDB_envinfo info;
    mdb_env_info(db->env, &info);
    size_t size = info.me_mapsize * 2;
    if (size < min_size) size = min_size;
    int rc = mdb_env_set_mapsize(db->env, size);
    pthread_rwlock_unlock(&db->resize_lock);
    return gsnap_store__mdb_err(db, rc, "growing the LMDB map");
}

static int adopt_resize(gsnap_db *db) {
    pthread_rwlock_wrlock(&db->resize_lock);
    int rc = mdb_env_set_mapsize(db->env, 0);
    pthread_rwlock_unlock(&db->resize_lock);
    return gsnap_store__mdb_err(db, rc, "adopting the map size grown by another process");
}

/* Begin a txn holding resize_lock shared; handles MDB_MAP_RESIZED. */
int gsnap_store__txn_begin(gsnap_db *db, unsigned flags, MDB_txn **txn) {
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&db->resize_lock);
        int rc = mdb_txn_begin(db->env, NULL, flags, txn);
        if (rc == 0) return 0;
        pthread_rwlock_unlock(&db->resize_lock);
        if (rc == MDB_MAP_RESIZED && tries < 8) {
            int r2 = adopt_resize(db);
            if (r2) return r2;
            continue;
        }
        return gsnap_store__mdb_err(db, rc, flags & MDB_RDONLY ? "beginning a read transaction"
                                                                : "beginning a write transaction");
    }
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

int gsnap_store__write(gsnap_db *db, gsnap_write_fn fn, void *ctx) {
    if (db->read_only)
        return gsnap_store__err(db, GSNAP_EACCES, "database '%s' is open read-only", db->path);
    pthread_mutex_lock(&db->write_lock);
    int rc;
    for (int attempt = 0;; attempt++) {
        MDB_txn *txn = NULL;
        rc = gsnap_store__txn_begin(db, 0, &txn);
        if (rc) break;
        tls_map_full = 0;
        int frc = fn(db, txn, ctx);
        int mrc = 0;
        if (frc == 0) {
            mrc = mdb_txn_commit(txn);
        } else {
            mdb_txn_abort(txn);
        }
        pthread_rwlock_unlock(&db->resize_lock);
        if (frc == 0 && mrc == 0) { rc = 0; break; }
        /* fn reports a full map through gsnap_store__mdb_err, which flags it. */
        int full = (mrc == MDB_MAP_FULL) || (frc == GSNAP_ENOSPC && tls_map_full);
        if (full && attempt < 40) {
            rc = grow_map(db, 0);
            if (rc) break;
            continue;
        }
        if (frc) { rc = frc; break; }
        if (mrc == MDB_MAP_RESIZED && attempt < 40) {
            rc = adopt_resize(db);
            if (rc) break;
            continue;
        }
        rc = commit_failure(db, mrc);
        break;
    }
    pthread_mutex_unlock(&db->write_lock);
    return rc;
}

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
    pthread_rwlock_unlock(&db->resize_lock);
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
        if (errno != ENOENT) return gsnap_err_open(map_rc(errno), "%s: %s", path, strerror(errno));
        if (!opts->create || opts->read_only)
            return gsnap_err_open(GSNAP_NOTFOUND, "%s: no such database directory", path);
        if (mkdir(path, 0775) != 0)
            return gsnap_err_open(map_rc(errno), "%s: cannot create directory: %s", path, strerror(errno));
        os->made_dir = 1;
        if (stat(path, &os->st) != 0) return gsnap_err_open(map_rc(errno), "%s: %s", path, strerror(errno));
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
    db->sync = opts->sync;
    db->dir_dev = (uint64_t)st->st_dev;
    db->dir_ino = (uint64_t)st->st_ino;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&db->resize_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&db->write_lock, NULL);
    pthread_mutex_init(&db->lock, NULL);
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
            return gsnap_err_open(map_rc(rc), "mdb_env_create: %s", mdb_strerror(rc));
        mdb_env_set_maxdbs(db->env, 256);
        mdb_env_set_maxreaders(db->env, opts->max_readers ? opts->max_readers : 126);
        if ((rc = mdb_env_set_mapsize(db->env, want)))
            return gsnap_err_open(map_rc(rc), "%s: map size %zu bytes refused by LMDB: %s", path, want,
                                  mdb_strerror(rc));
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
        return gsnap_err_open(map_rc(rc), "%s: cannot open LMDB environment: %s", path, mdb_strerror(rc));
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
    pthread_rwlock_unlock(&db->resize_lock);
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
        /* Version 1 callers pass the struct without the fields added since. */
        if (opts_in->version == 1) memcpy(&o, opts_in, offsetof(gsnap_db_options, no_lock));
        else if (opts_in->version == GSNAP_DB_OPTIONS_VERSION) o = *opts_in;
        else
            return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: options version %u, expected 1..%u",
                                  opts_in->version, GSNAP_DB_OPTIONS_VERSION);
    }
    if (opts->keep < 1 || opts->keep > 3)
        return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: keep must be GSNAP_KEEP_IN, _OUT or _BOTH");
    if (opts->no_lock && !opts->read_only)
        return gsnap_err_open(GSNAP_EINVAL, "gsnap_db_open: no_lock needs read_only");
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
    pthread_rwlock_destroy(&db->resize_lock);
    pthread_mutex_destroy(&db->write_lock);
    pthread_mutex_destroy(&db->lock);
    free(db->path);
    gsnap_store__retire(db);
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
    pthread_mutex_lock(&db->lock);
    if (db->npool > 0) txn = db->pool[--db->npool];
    pthread_mutex_unlock(&db->lock);
    if (txn) {
        pthread_rwlock_rdlock(&db->resize_lock);
        rc = mdb_txn_renew(txn);
        if (rc) {
            mdb_txn_abort(txn);
            pthread_rwlock_unlock(&db->resize_lock);
            txn = NULL;
        }
    }
    if (!txn && (rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn))) { free(rd); return rc; }
    rd->txn = txn;
    tls_views++;
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

void gsnap_read_end(gsnap_read *rd) {
    if (!rd) return;
    gsnap_db *db = rd->db;
    if (rd->cur) mdb_cursor_close(rd->cur);
    if (rd->txn) {
        mdb_txn_reset(rd->txn);
        pthread_mutex_lock(&db->lock);
        if (db->npool < (int)(sizeof db->pool / sizeof db->pool[0])) {
            db->pool[db->npool++] = rd->txn;
            rd->txn = NULL;
        }
        pthread_mutex_unlock(&db->lock);
        if (rd->txn) mdb_txn_abort(rd->txn);
        pthread_rwlock_unlock(&db->resize_lock);
        tls_views--;
    }
    free(rd->runs);
    free(rd->blooms);
    free(rd->denses);
    free(rd->scratch);
    free(rd->merge_tmp);
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

/* ---- version and stats ----------------------------------------------------- */

int gsnap_db_version(gsnap_db *db, uint64_t *version) {
    if (!db || db->magic != GSNAP_DB_MAGIC || !version) return GSNAP_EINVAL;
    MDB_txn *txn = NULL;
    struct gsnap_meta m;
    int rc = gsnap_store__txn_begin(db, MDB_RDONLY, &txn);
    if (rc) return rc;
    rc = gsnap_store__read_meta(db, txn, &m);
    mdb_txn_abort(txn);
    pthread_rwlock_unlock(&db->resize_lock);
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
