/*
 * store/mapgate.c -- the map gate: which txns hold the LMDB map, and map
 * growth (remapping) only when none does.
 *
 * LMDB's mdb_env_set_mapsize() unmaps and maps the file again, so it may run
 * only while no txn of this process is live (a read view hands out pointers
 * into the map; LMDB does not check this). Every txn of the process -- read
 * views, short read txns, write txns, mdb_env_copy -- therefore "holds the
 * map": gsnap_store__map_hold() before it begins, gsnap_store__map_release()
 * after it ends. A remap (growth after MDB_MAP_FULL, or adopting a size that
 * another process grew, MDB_MAP_RESIZED) waits until no hold is left.
 *
 * State, guarded by db->lock: db->map_holds (live holds), db->remap_waiting
 * (threads waiting to remap), db->map_lost (a remap failed after LMDB had
 * unmapped the file: nothing may touch the env again). Per thread (any db):
 * tls_holds, the holds this thread has.
 *
 * Invariants (why no deadlock):
 *  I1. A thread that waits for a remap (remap below) holds nothing: no map
 *      hold of any db (tls_holds == 0, else it gets GSNAP_EBUSY at once), not
 *      db->write_lock (gsnap_store__write releases it first), and db->lock
 *      only inside pthread_cond_wait.
 *  I2. A thread with a hold never waits at the gate: holds of a thread that
 *      already has one (a second view, a write under a view, a short txn
 *      inside a write fn) are granted at once. Only a thread with no hold
 *      waits while a remap is pending (so remaps are not starved by views
 *      that keep being opened).
 *  I3. Lock order: map hold, then db->write_lock (gsnap_store__write takes
 *      its hold before the write lock), then db->lock (short, never held
 *      while waiting on anything but gate_cv). Nothing waits for a hold or
 *      a remap while holding db->write_lock.
 *  I4. A thread holding a view may wait for another thread of its own
 *      (the sampler's main thread waits for its workers, which begin views
 *      of their own; an application may do the same), which the library
 *      cannot see. So a remap whose holds have not drained within
 *      GATE_STUCK_MS while threads wait at the gate lets those threads in
 *      (gate_epoch: a waiter passes once the epoch moved since it began to
 *      wait) and keeps waiting for the holds: such a wait delays the
 *      growth, never deadlocks it. Threads that arrive later wait again.
 * So a thread holding a view waits only for write_lock, whose holder is in
 * a write txn and waits for nothing of the gate (I2, I3); remaps wait for
 * holds, and their waiters hold nothing (I1): the wait-for graph has no
 * cycle. A thread whose own write needs the map to grow while it holds a
 * view cannot have it (the remap would wait for itself): GSNAP_EBUSY with a
 * message, nothing committed.
 * The remap itself runs with db->lock held and no hold live, so no txn can
 * begin during it; pooled (reset) read txns survive it: mdb_txn_renew reads
 * the new map's meta pages.
 * A swap of the environment (swap.c, gsnap_store__gate_close) closes the
 * gate like a remap, with writes already stopped before their holds (the
 * shrink's writer gate), but waits a bounded time and does not apply I4: a
 * hold that waits on the swapping thread only makes the swap give up
 * (GSNAP_EBUSY), so no cycle forms there either.
 * Holds are per thread: a read view must end in the thread that began it
 * (include/graphsnap.h: views are not shared between threads).
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#define GATE_STUCK_MS 20 /* I4 */

static _Thread_local int tls_holds; /* map holds of this thread, all dbs */

static int lost_err(gsnap_db *db) {
    return gsnap_store__err(db, GSNAP_EIO, "'%s': the LMDB map was lost when a resize failed; close and "
                            "reopen the database (nothing committed was lost)", db->path);
}

/* Take a hold with db->lock held (the read-view fast path takes it together
 * with a pooled txn). Waits while a remap is pending unless this thread
 * already holds (I2). 0, or 1 when the map is lost (no hold taken). */
int gsnap_store__map_hold_locked(gsnap_db *db) {
    if (tls_holds == 0 && db->remap_waiting) {
        uint64_t epoch = db->gate_epoch;
        db->gate_queued++;
        while (db->remap_waiting && db->gate_epoch == epoch) pthread_cond_wait(&db->gate_cv, &db->lock);
        db->gate_queued--;
    }
    if (db->map_lost) return 1;
    db->map_holds++;
    tls_holds++;
    return 0;
}

int gsnap_store__map_hold(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    int lost = gsnap_store__map_hold_locked(db);
    pthread_mutex_unlock(&db->lock);
    return lost ? lost_err(db) : 0;
}

void gsnap_store__map_release_locked(gsnap_db *db) {
    if (--db->map_holds == 0 && db->remap_waiting) pthread_cond_broadcast(&db->gate_cv);
    tls_holds--;
}

void gsnap_store__map_release(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    gsnap_store__map_release_locked(db);
    pthread_mutex_unlock(&db->lock);
}

/* Close the gate for a swap of the environment (swap.c): like a remap, but
 * the wait is bounded and I4 does not apply (a hold that waits for a thread
 * queued at the gate or at the shrink's writer gate only makes the swap
 * give up after wait_ms). 0: no hold is live and db->lock is
 * held until gsnap_store__gate_open; GSNAP_EBUSY (this thread holds the map,
 * or holds remained after wait_ms: the gate is open again), or the map-lost
 * error. */
/* The CLOCK_REALTIME time wait_ms from now (pthread_cond_timedwait's). */
struct timespec gsnap_store__deadline(long wait_ms) {
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += wait_ms / 1000;
    end.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    return end;
}

int gsnap_store__gate_close(gsnap_db *db, long wait_ms) {
    if (tls_holds > 0) return GSNAP_EBUSY;
    struct timespec end = gsnap_store__deadline(wait_ms);
    pthread_mutex_lock(&db->lock);
    db->remap_waiting++;
    int timed_out = 0;
    while (db->map_holds > 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&db->gate_cv, &db->lock, &end) == ETIMEDOUT && db->map_holds > 0;
    if (timed_out || db->map_lost) {
        int lost = db->map_lost;
        gsnap_store__gate_open(db);
        return lost ? lost_err(db) : GSNAP_EBUSY;
    }
    return 0;
}

int gsnap_store__thread_holds(void) { return tls_holds; }

void gsnap_store__gate_open(gsnap_db *db) {
    db->remap_waiting--;
    pthread_cond_broadcast(&db->gate_cv);
    pthread_mutex_unlock(&db->lock);
}

int gsnap_store__remap_pending(gsnap_db *db) {
    pthread_mutex_lock(&db->lock);
    int w = db->remap_waiting;
    pthread_mutex_unlock(&db->lock);
    return w > 0;
}

/* Can `size` bytes be mapped now? (an anonymous reservation, given back at
 * once): a remap only unmaps the file once the new length is likely to fit,
 * since after a failed remap the env has no map at all. */
static int can_map(size_t size) {
    void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    munmap(p, size);
    return 1;
}

/* The new size (no hold live, db->lock held): 0 to leave the map alone.
 * atleast: doubled until it is at least that (gsnap_store__remap_grow). */
static int remap_size(gsnap_db *db, size_t seen, size_t atleast, size_t *size, char *msg, size_t msglen) {
    MDB_envinfo info;
    mdb_env_info(db->env, &info);
    *size = 0;
    if (atleast) {
        size_t s = info.me_mapsize;
        while (s < atleast && s <= SIZE_MAX / 2) s *= 2;
        if (s > info.me_mapsize) *size = s;
        return 0;
    }
    if (seen) {
        if (info.me_mapsize != seen) return 0; /* another thread grew it meanwhile */
        *size = seen * 2;
        return 0;
    }
    /* adopt: the size the newest meta page records (the file is checked to
     * be as long as that meta says, else mapping it could SIGBUS) */
    char f[4096];
    gsnap_probe pr;
    snprintf(f, sizeof f, "%s/data.mdb", db->path);
    int rc = gsnap_store__probe(f, &pr, msg, msglen);
    if (rc) return rc;
    if (pr.mapsize > info.me_mapsize) *size = (size_t)pr.mapsize;
    return 0;
}

static int remap(gsnap_db *db, size_t seen, size_t atleast);

int gsnap_store__remap(gsnap_db *db, size_t seen) { return remap(db, seen, 0); }

int gsnap_store__remap_grow(gsnap_db *db, size_t atleast) { return remap(db, 0, atleast ? atleast : 1); }

static int remap(gsnap_db *db, size_t seen, size_t atleast) {
    if (tls_holds > 0) /* I1: it would wait for this thread's own hold */
        return seen || atleast ? gsnap_store__err(db, GSNAP_EBUSY, "the map of '%s' is full and must grow, but this "
                                       "thread holds a read view or transaction (on this or another "
                                       "database); end it before writing", db->path)
                    : gsnap_store__err(db, GSNAP_EBUSY, "another process grew '%s' past this process's "
                                       "map; adopting the new size needs this thread's read views "
                                       "ended first", db->path);
    char msg[1024] = "";
    size_t size = 0;
    int rc = 0, mrc = 0;
    pthread_mutex_lock(&db->lock);
    db->remap_waiting++;
    while (db->map_holds > 0) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += GATE_STUCK_MS * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&db->gate_cv, &db->lock, &dl) == ETIMEDOUT && db->map_holds > 0 &&
            db->gate_queued > 0) { /* I4: a holder may wait for one of them */
            db->gate_epoch++;
            pthread_cond_broadcast(&db->gate_cv);
        }
    }
    if (db->map_lost) {
        rc = 1;
    } else if (!(rc = remap_size(db, seen, atleast, &size, msg, sizeof msg)) && size) {
        if (!can_map(size)) {
            rc = GSNAP_ENOMEM;
            snprintf(msg, sizeof msg, "mapping %zu bytes (%.1f MiB) for '%s' was refused (the address "
                     "space limit, ulimit -v, or the kernel); the map is left as it was", size,
                     (double)size / (1 << 20), db->path);
        } else if ((mrc = mdb_env_set_mapsize(db->env, size)) != 0) {
            db->map_lost = 1; /* LMDB unmapped the file before it failed */
        }
    }
    db->remap_waiting--;
    pthread_cond_broadcast(&db->gate_cv);
    pthread_mutex_unlock(&db->lock);
    if (rc == 1) return lost_err(db);
    if (rc) return gsnap_store__err(db, rc, "%s%s", seen || atleast ? "the map is full and cannot grow: " : "", msg);
    if (mrc)
        return gsnap_store__err(db, gsnap_store__map_rc(mrc), "resizing the LMDB map of '%s' to %zu bytes "
                                "failed (%s); close and reopen the database", db->path, size, mdb_strerror(mrc));
    return 0;
}
