/*
 * store/copy.c -- a compact copy of the LMDB environment (backup, retention).
 *
 * mdb_env_copyfd2(MDB_CP_COMPACT) copies from a read transaction of its own:
 * only pages in use, renumbered, so the copy is as small as the data. The
 * copy holds the map like every other txn of the process (mapgate.c), so
 * map growth (which needs every txn closed) waits for it.
 */
#include "store/store_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int gsnap_store__copy_fd(gsnap_db *db, int fd) {
    int rc = gsnap_store__map_hold(db);
    if (rc) return rc;
    rc = mdb_env_copyfd2(db->env, fd, MDB_CP_COMPACT);
    gsnap_store__map_release(db);
    if (rc == 0 && fsync(fd) != 0) rc = errno;
    return gsnap_store__mdb_err(db, rc, "copying the LMDB environment");
}
