/*
 * sampler/shared_gc.c -- removing published images nobody uses (shared host
 * tier, issue 18).
 *
 * Locks: every process that maps a published image keeps the file open with
 * a shared flock (LOCK_SH) for as long as the mapping lives (shared.c's
 * attach; gsnap_samp__shared_unmap closes it). A publisher takes the same
 * shared lock on its temporary file right after creating it and keeps it
 * until it has mapped the published name, so a file is locked from its
 * creation on. flock locks belong to the open file description and go away
 * with the last descriptor, i.e. also when a process is killed.
 *
 * Removal: a file is unlinked only after an exclusive non-blocking lock on it
 * succeeds (nobody maps it) and a stat of the name still shows the locked
 * inode. An opener locks (shared, without blocking: a few tries over at most
 * GSNAP_SHM_LOCK_TRIES ms, since a remover holds its lock only for the stat
 * and unlink; a lock held longer, by a stopped process or by a file planted
 * under this name, makes the opener serve its private image instead of
 * waiting on it) and then checks that the name still points to
 * the inode it locked (shared.c: shared_locked); if not, the file was
 * removed between its open and its lock and it treats the image as not
 * published. Either the opener's lock comes first (the remover's try fails)
 * or the remover's (the opener then sees the name gone): no process ever
 * maps a file that is being removed, and no file that is mapped is removed.
 *
 * What is removed (only files of this sampler's key, this user's, in its
 * directory): between batches, at generation g, every unlocked generation
 * below g - 1 (g and g - 1 stay: a sampler one period behind maps g - 1
 * without recomputing it; later generations stay for the processes that
 * follow); at open, every unlocked generation but the one opened on (files
 * a killed or finished run left ahead). Temporary files whose writer (the
 * pid in the name) no longer exists are removed too.
 */
#include "sampler/sampler_int.h"
#include "sampler/shared_int.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Unlink path if no process holds a lock on it and the name still shows the
 * file locked. 1 = removed. */
static int remove_unused(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat a, b;
    int done = 0;
    if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == geteuid() &&
        flock(fd, LOCK_EX | LOCK_NB) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        done = unlink(path) == 0;
    close(fd); /* releases the lock */
    return done;
}

/* Is the writer of temporary file name (..."img.tmp.<pid>.<x>") gone? */
static int writer_gone(const char *tmp) {
    char *end;
    long pid = strtol(tmp, &end, 10);
    if (end == tmp || *end != '.' || pid <= 0) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int gsnap_samp__shared_locked(int fd, const char *path) {
    struct stat a, b;
    for (int i = 0;; i++) {
        if (flock(fd, LOCK_SH | LOCK_NB) == 0) break;
        if (errno != EWOULDBLOCK && errno != EINTR) return 0; /* no locks here (no flock) */
        if (i + 1 >= GSNAP_SHM_LOCK_TRIES) return -2;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (fstat(fd, &a) || stat(path, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino ||
        a.st_nlink == 0)
        return -1; /* removed (or replaced) between the open and the lock */
    return 0;
}

void gsnap_samp__shared_gc(gsnap_sampler *s, uint64_t gen, int at_open) {
    gsnap_samp__shared *sh = s->shm;
    char prefix[64], path[PATH_MAX];
    int np = snprintf(prefix, sizeof prefix, "gsnap-%016llx-g", (unsigned long long)sh->khash);
    DIR *d = opendir(sh->dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)np) != 0) continue;
        char *end;
        errno = 0;
        unsigned long long g = strtoull(e->d_name + np, &end, 10);
        if (end == e->d_name + np || errno) continue;
        int tmp = strncmp(end, ".img.tmp.", 9) == 0;
        if (!tmp && strcmp(end, ".img") != 0) continue;
        if (tmp ? !writer_gone(end + 9) : at_open ? g == gen : g + 1 >= gen) continue;
        if (snprintf(path, sizeof path, "%s/%s", sh->dir, e->d_name) >= (int)sizeof path) continue;
        sh->removed += (uint64_t)remove_unused(path);
    }
    closedir(d);
}
