/*
 * snapshot/backup.c -- gsnap_db_backup: an online, consistent copy of a
 * database directory (the LMDB environment plus the slab files).
 *
 * Consistency: the environment is copied from one LMDB read txn
 * (mdb_env_copyfd2, compact). The slab files to copy are exactly those of
 * the snapshots that the COPY's catalog lists as complete, i.e. the catalog
 * of that same txn. Slab files never change once a snapshot is complete,
 * but a snapshot may be dropped (files unlinked) meanwhile: so the slab
 * files of every complete snapshot are opened BEFORE the copy starts, and
 * the open descriptors are what we read. A snapshot completed between that
 * pinning and the copy's txn is opened afterwards (it cannot have been
 * dropped again and still be in the copy's catalog unless it was rebuilt
 * under the same name: its identity -- creation time, version, seed, block
 * counts -- must match the copy's record, else GSNAP_EBUSY: retry). The
 * same holds when a late-opened file's size or a block disagrees with the
 * copy's record while the source's catalog no longer holds that snapshot:
 * it was rebuilt in between (GSNAP_EBUSY), where the same disagreement
 * with the snapshot still there is damage (GSNAP_ECORRUPT, ECHECKSUM).
 * Catalog records of builds still running are removed from the copy (their
 * files are incomplete). Every slab block's checksum is verified while it
 * is copied, and the header block must match the catalog record.
 */
#include "snapshot/snapshot_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

typedef struct {
    gsnap_snapshot_info info;
    int fd[GSNAP_MAX_HOPS + 1];
} pinned;

static int same_snapshot(const gsnap_snapshot_info *a, const gsnap_snapshot_info *b) {
    if (strcmp(a->name, b->name) || a->created_unix != b->created_unix || a->at_version != b->at_version ||
        a->seed != b->seed || a->hops != b->hops || a->at_t != b->at_t)
        return 0;
    for (unsigned h = 0; h < a->hops; h++)
        if (a->blocks[h] != b->blocks[h]) return 0;
    return 1;
}

static void unpin(pinned *p) {
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++)
        if (p->fd[h] >= 0) close(p->fd[h]);
}

static int pin(gsnap_db *db, const gsnap_snapshot_info *info, pinned *p) {
    p->info = *info;
    for (unsigned h = 0; h <= GSNAP_MAX_HOPS; h++) p->fd[h] = -1;
    for (unsigned h = 1; h <= info->hops; h++) {
        char path[4096];
        if (gsnap_snap__slab_path(db, info->name, h, path, sizeof path)) return GSNAP_EINVAL;
        p->fd[h] = open(path, O_RDONLY | O_CLOEXEC);
        if (p->fd[h] < 0) {
            int e = errno;
            unpin(p);
            if (e == ENOENT) return GSNAP_NOTFOUND; /* dropped meanwhile */
            return gsnap_store__err(db, GSNAP_EIO, "%s: %s", path, strerror(e));
        }
    }
    return 0;
}

static int dest_ready(const char *dest) {
    if (mkdir(dest, 0775) == 0) return 0;
    if (errno != EEXIST) return -errno;
    DIR *d = opendir(dest);
    if (!d) return -errno;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty ? 0 : 1;
}

/* 1 when the source's catalog no longer holds `info` complete (dropped, or
 * rebuilt under its name): a file opened by name after the copy's catalog
 * was read may then be another build's, whose size or blocks disagree with
 * `info`. That is a retry (GSNAP_EBUSY), not damage. */
static int rebuilt(gsnap_db *db, const gsnap_snapshot_info *info) {
    gsnap_snapshot_info now;
    if (gsnap_snapshot_info_get(db, info->name, &now)) return 1;
    return !now.complete || !same_snapshot(&now, info);
}

/* Copy hop h of snapshot `info` from fd to the backup, verifying each block. */
static int copy_slab(gsnap_db *src, gsnap_db *bk, const gsnap_snapshot_info *info, unsigned h, int fd,
                     uint64_t *bytes, const gsnap_backup_options *o, uint64_t *done, uint64_t total) {
    char dir[4096], path[4200];
    unsigned char blk[GSNAP_SLAB_BLOCK];
    int rc = 0, out = -1;
    if (gsnap_snap__dir(bk, info->name, dir, sizeof dir) || gsnap_snap__slab_path(bk, info->name, h, path, sizeof path))
        return GSNAP_EINVAL;
    char sd[4200];
    snprintf(sd, sizeof sd, "%s/snapshots", gsnap_db_path(bk));
    mkdir(sd, 0775);
    mkdir(dir, 0775);
    out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0664);
    if (out < 0) return gsnap_store__err(src, GSNAP_EIO, "cannot create %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = gsnap_store__err(src, GSNAP_EIO, "snapshot %s hop %u: %s", info->name, h, strerror(errno));
        goto out;
    }
    if ((uint64_t)st.st_size != info->blocks[h - 1] * GSNAP_SLAB_BLOCK) {
        if (rebuilt(src, info))
            rc = gsnap_store__err(src, GSNAP_EBUSY, "snapshot %s was rebuilt during the backup; retry", info->name);
        else
            rc = gsnap_store__err(src, GSNAP_ECORRUPT, "snapshot %s hop %u: slab file has %lld bytes, the "
                                  "catalog says %llu blocks", info->name, h, (long long)st.st_size,
                                  (unsigned long long)info->blocks[h - 1]);
        goto out;
    }
    for (uint64_t b = 0; b < info->blocks[h - 1]; b++) {
        ssize_t n = pread(fd, blk, sizeof blk, (off_t)(b * GSNAP_SLAB_BLOCK));
        if (n != (ssize_t)sizeof blk) {
            rc = gsnap_store__err(src, GSNAP_EIO, "snapshot %s hop %u block %llu: short read", info->name, h,
                                  (unsigned long long)b);
            goto out;
        }
        uint32_t magic;
        uint64_t xh;
        memcpy(&magic, blk, 4);
        memcpy(&xh, blk + 8, 8);
        if (magic != (b ? GSNAP_SLAB_MAGIC_DATA : GSNAP_SLAB_MAGIC_HDR) ||
            xh != XXH3_64bits_withSeed(blk + GSNAP_SLAB_BLOCK_HDR, GSNAP_SLAB_BLOCK - GSNAP_SLAB_BLOCK_HDR, b)) {
            if (rebuilt(src, info)) /* a build of the same size still being written */
                rc = gsnap_store__err(src, GSNAP_EBUSY, "snapshot %s was rebuilt during the backup; retry",
                                      info->name);
            else
                rc = gsnap_store__err(src, GSNAP_ECHECKSUM, "snapshot %s hop %u block %llu: checksum mismatch "
                                      "(backup stopped; run check on the source)", info->name, h,
                                      (unsigned long long)b);
            goto out;
        }
        if (b == 0) { /* header: seed at 56, version at 64 (from the block start) */
            uint64_t seed, ver;
            memcpy(&seed, blk + 16 + 40, 8);
            memcpy(&ver, blk + 16 + 48, 8);
            if (seed != info->seed || ver != info->at_version) {
                rc = gsnap_store__err(src, GSNAP_EBUSY, "snapshot %s was rebuilt during the backup; retry",
                                      info->name);
                goto out;
            }
        }
        if (write(out, blk, sizeof blk) != (ssize_t)sizeof blk) {
            int e = errno;
            rc = gsnap_store__err(src, e == ENOSPC ? GSNAP_ENOSPC : GSNAP_EIO, "writing %s: %s", path,
                                  strerror(e));
            goto out;
        }
        *bytes += sizeof blk;
        if (o->progress && (++*done % 1024 == 0 || *done == total)) o->progress(o->progress_ctx, "slabs", *done, total);
    }
    if (fsync(out) != 0) rc = gsnap_store__err(src, GSNAP_EIO, "fsync %s: %s", path, strerror(errno));
out:
    close(out);
    return rc;
}

/* 2. the environment, from one read txn, into dest/data.mdb */
static int copy_store(gsnap_db *db, const char *dest, gsnap_backup_report *rep) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dest);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0664);
    if (fd < 0) return gsnap_store__err(db, GSNAP_EIO, "cannot create %s: %s", path, strerror(errno));
    int rc = gsnap_store__copy_fd(db, fd);
    struct stat st;
    if (rc == 0 && fstat(fd, &st) == 0) rep->store_bytes = (uint64_t)st.st_size;
    close(fd);
    return rc;
}

/* 3. the copy's catalog says which slab files belong to it: unfinished ones
 * are dropped from the copy, complete ones copied from their pinned files
 * (pinned now when they completed after the pinning). */
static int copy_snapshots(gsnap_db *db, gsnap_db *bk, pinned *pins, size_t npin, const gsnap_backup_options *opts,
                          gsnap_backup_report *rep) {
    gsnap_snapshot_info *bk_list = NULL;
    size_t nbk = 0;
    uint64_t total = 0, done = 0;
    int rc = gsnap_snapshot_list(bk, &bk_list, &nbk);
    for (size_t i = 0; i < nbk; i++)
        if (bk_list[i].complete)
            for (unsigned h = 0; h < bk_list[i].hops; h++) total += bk_list[i].blocks[h];
    for (size_t i = 0; i < nbk && !rc; i++) {
        const gsnap_snapshot_info *info = &bk_list[i];
        if (!info->complete) {
            if ((rc = gsnap_snapshot_drop(bk, info->name)))
                rc = gsnap_store__err(db, rc, "removing unfinished snapshot %s from the copy: %s", info->name,
                                      gsnap_db_errmsg(bk));
            else
                rep->dropped_incomplete++;
            continue;
        }
        pinned late, *p = NULL;
        for (size_t j = 0; j < npin && !p; j++)
            if (same_snapshot(&pins[j].info, info)) p = &pins[j];
        if (!p) { /* completed after the pinning */
            rc = pin(db, info, &late);
            if (rc == GSNAP_NOTFOUND)
                rc = gsnap_store__err(db, GSNAP_EBUSY, "snapshot %s was dropped during the backup; retry",
                                      info->name);
            if (rc) break;
            p = &late;
        }
        for (unsigned h = 1; h <= info->hops && rc == 0; h++)
            rc = copy_slab(db, bk, info, h, p->fd[h], &rep->slab_bytes, opts, &done, total);
        if (p == &late) unpin(&late);
        if (!rc) rep->snapshots++;
    }
    free(bk_list);
    return rc;
}

int gsnap_db_backup(gsnap_db *db, const char *dest, const gsnap_backup_options *opts, gsnap_backup_report *report) {
    static const gsnap_backup_options defaults = GSNAP_BACKUP_OPTIONS_INIT;
    gsnap_backup_report rep;
    memset(&rep, 0, sizeof rep);
    if (!db || !dest || !*dest) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (opts->version != GSNAP_BACKUP_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_db_backup: options version %u not supported", opts->version);
    double t0 = gsnap_now();
    gsnap_snapshot_info *src_list = NULL;
    size_t nsrc = 0, npin = 0;
    pinned *pins = NULL;
    gsnap_db *bk = NULL;
    int rc;
    int d = dest_ready(dest);
    if (d > 0) return gsnap_store__err(db, GSNAP_EEXIST, "%s exists and is not empty", dest);
    if (d < 0) return gsnap_store__err(db, -d == ENOSPC ? GSNAP_ENOSPC : -d == EACCES ? GSNAP_EACCES : GSNAP_EIO,
                                       "cannot create %s: %s", dest, strerror(-d));
    /* 1. pin the slab files of every complete snapshot */
    if ((rc = gsnap_snapshot_list(db, &src_list, &nsrc))) goto out;
    if (nsrc && !(pins = calloc(nsrc, sizeof *pins))) { rc = GSNAP_ENOMEM; goto out; }
    for (size_t i = 0; i < nsrc; i++) {
        if (!src_list[i].complete) continue;
        rc = pin(db, &src_list[i], &pins[npin]);
        if (rc == GSNAP_NOTFOUND) { rc = 0; continue; }
        if (rc) goto out;
        npin++;
    }
    if (opts->progress) opts->progress(opts->progress_ctx, "store", 0, 1);
    if ((rc = copy_store(db, dest, &rep))) goto out;
    if (opts->progress) opts->progress(opts->progress_ctx, "store", 1, 1);
    gsnap_db_options bo = GSNAP_DB_OPTIONS_INIT;
    bo.create = 0;
    if ((rc = gsnap_db_open(dest, &bo, &bk))) {
        rc = gsnap_store__err(db, rc, "the copy does not open: %s", gsnap_last_open_error());
        goto out;
    }
    if ((rc = gsnap_db_version(bk, &rep.version)) || (rc = copy_snapshots(db, bk, pins, npin, opts, &rep))) goto out;
    int dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
out:
    gsnap_db_close(bk);
    for (size_t j = 0; j < npin; j++) unpin(&pins[j]);
    free(pins);
    free(src_list);
    rep.seconds = gsnap_now() - t0;
    if (report) *report = rep;
    return rc;
}
