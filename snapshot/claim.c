/*
 * snapshot/claim.c -- the claim on a snapshot name: an exclusive, non-
 * blocking flock on <db dir>/snapshots/.NAME.lock (never unlinked:
 * unlinking a lock file races with the next claimer). `snapshot create`
 * holds it for the whole build, `snapshot advance` from before it reads the
 * catalog until after its commit, `snapshot drop` while it removes the
 * record and files. flock locks belong to the open file description, so two
 * threads of one process exclude each other as two processes do. A process
 * that dies releases its claim.
 */
#include "snapshot/snapshot_int.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int gsnap_snap__claim(gsnap_db *db, const char *name, int busy_rc, int *fd_out) {
    char p[2300];
    *fd_out = -1;
    snprintf(p, sizeof p, "%s/snapshots", gsnap_db_path(db));
    if (mkdir(p, 0755) && errno != EEXIST) return gsnap_store__err(db, GSNAP_EIO, "mkdir %s: %s", p, strerror(errno));
    snprintf(p, sizeof p, "%s/snapshots/.%s.lock", gsnap_db_path(db), name);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return gsnap_store__err(db, GSNAP_EIO, "snapshot %s: cannot open %s: %s", name, p, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e != EWOULDBLOCK)
            return gsnap_store__err(db, GSNAP_EIO, "snapshot %s: cannot lock %s: %s", name, p, strerror(e));
        if (busy_rc == GSNAP_EEXIST)
            return gsnap_store__err(db, GSNAP_EEXIST, "snapshot %s already exists: it is being created or advanced "
                                    "by another thread or process", name);
        return gsnap_store__err(db, busy_rc, "snapshot %s is busy: it is being created, advanced or dropped by "
                                "another thread or process; retry when that ends", name);
    }
    *fd_out = fd;
    return 0;
}

void gsnap_snap__release(int fd) {
    if (fd >= 0) close(fd); /* releases the lock */
}
