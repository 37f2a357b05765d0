/*
 * A database directory without write permission:
 *  - opening an existing database for writing in a directory (and files)
 *    this user may not write gives GSNAP_EACCES with a message naming the
 *    path; a read-only open either works (and answers) or gives GSNAP_EACCES;
 *  - creating a database inside a parent directory this user may not write
 *    gives GSNAP_EACCES naming the path, and creates nothing;
 *  - a read-only handle refuses batches and snapshot builds with GSNAP_EACCES;
 *  - afterwards the database opens normally, passes gsnap_db_check and holds
 *    every version committed before, exactly.
 * As root (CI), permission bits deny nothing, so the denied opens run in a
 * child process that first drops to uid/gid 65534 (nobody) on a root-owned
 * 0755 tree; as another user the tree is made read-only with chmod.
 */
#include "crash/crash_lib.h"
#include <grp.h>
#include <sys/stat.h>

#define SEED 99

static int has_text(const char *msg, const char *a) { return msg && strstr(msg, a); }

/* The denied operations; results as "NAME RC MESSAGE" lines on fd. */
static void denied_ops(const char *db_dir, const char *parent, int fd) {
    gsnap_db *db = NULL;
    char line[1200];
    int rc = gsnap_db_open(db_dir, NULL, &db); /* default: read-write, create */
    snprintf(line, sizeof line, "openrw %d %s\n", rc, rc ? gsnap_last_open_error() : "");
    if (write(fd, line, strlen(line)) < 0) _exit(60);
    gsnap_db_close(db);
    db = NULL;
    gsnap_db_options ro = GSNAP_DB_OPTIONS_INIT;
    ro.read_only = 1;
    ro.create = 0;
    rc = gsnap_db_open(db_dir, &ro, &db);
    uint64_t v = 0;
    if (rc == 0) rc = gsnap_db_version(db, &v) ? -1 : 0;
    snprintf(line, sizeof line, "openro %d %llu %s\n", rc, (unsigned long long)v,
             rc ? gsnap_last_open_error() : "");
    if (write(fd, line, strlen(line)) < 0) _exit(60);
    gsnap_db_close(db);
    db = NULL;
    char newdb[700];
    snprintf(newdb, sizeof newdb, "%s/new-db", parent);
    rc = gsnap_db_open(newdb, NULL, &db);
    snprintf(line, sizeof line, "create %d %s\n", rc, rc ? gsnap_last_open_error() : "");
    if (write(fd, line, strlen(line)) < 0) _exit(60);
    gsnap_db_close(db);
}

typedef struct { int openrw, openro, create; uint64_t ro_version; char m_rw[800], m_create[800], m_ro[800]; } results;

static void collect(int rfd, results *r) {
    char buf[4096];
    size_t len = 0;
    ssize_t n;
    while ((n = read(rfd, buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
    buf[len] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        int rc, off = 0;
        unsigned long long v;
        if (sscanf(line, "openrw %d %n", &rc, &off) == 1) { r->openrw = rc; snprintf(r->m_rw, sizeof r->m_rw, "%s", line + off); }
        else if (sscanf(line, "openro %d %llu %n", &rc, &v, &off) == 2) { r->openro = rc; r->ro_version = v; snprintf(r->m_ro, sizeof r->m_ro, "%s", line + off); }
        else if (sscanf(line, "create %d %n", &rc, &off) == 1) { r->create = rc; snprintf(r->m_create, sizeof r->m_create, "%s", line + off); }
    }
}

static void chmod_tree(const char *dir, mode_t dmode, mode_t fmode) {
    char p[700];
    chmod(dir, dmode);
    snprintf(p, sizeof p, "%s/data.mdb", dir);
    chmod(p, fmode);
    snprintf(p, sizeof p, "%s/lock.mdb", dir);
    chmod(p, fmode);
}

static char *top; /* global: still reachable in the child (valgrind leak check) */

int main(void) {
    (void)cr_run;
    (void)cr_print;
    top = test_tmpdir("eacces");
    char db_dir[600], parent[600];
    snprintf(db_dir, sizeof db_dir, "%s/db", top);
    snprintf(parent, sizeof parent, "%s/ro-parent", top);
    OK(chmod(top, 0755) ? GSNAP_EIO : 0); /* mkdtemp made it 0700 */
    OK(mkdir(parent, 0755) ? GSNAP_EIO : 0);
    gsnap_db *db = NULL;
    OK(gsnap_db_open(db_dir, NULL, &db));
    uint64_t v = 0;
    for (int i = 0; i < 4; i++) {
        gsnap_batch *b = NULL;
        OK(cr_build_batch(db, SEED, v + 1, &b));
        OK(gsnap_batch_commit(b, &v));
    }
    gsnap_db_close(db);

    int root = geteuid() == 0;
    results r;
    memset(&r, 0, sizeof r);
    if (root) {
        chmod_tree(db_dir, 0755, 0644);
        int fds[2];
        OK(pipe(fds) ? GSNAP_EIO : 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) _exit(61);
            if (access(db_dir, W_OK) == 0) _exit(62); /* would test nothing */
            denied_ops(db_dir, parent, fds[1]);
            _exit(0);
        }
        close(fds[1]);
        collect(fds[0], &r);
        close(fds[0]);
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
    } else {
        chmod_tree(db_dir, 0555, 0444);
        chmod(parent, 0555);
        int fds[2];
        OK(pipe(fds) ? GSNAP_EIO : 0);
        denied_ops(db_dir, parent, fds[1]);
        close(fds[1]);
        collect(fds[0], &r);
        close(fds[0]);
        chmod_tree(db_dir, 0755, 0644);
        chmod(parent, 0755);
    }
    printf("as %s: open for writing: %s: %s\n", root ? "uid 65534 (root test)" : "this user, chmod 0555",
           gsnap_strerror(r.openrw), r.m_rw);
    printf("open read-only: %s (version %llu) %s\n", gsnap_strerror(r.openro),
           (unsigned long long)r.ro_version, r.m_ro);
    printf("create in an unwritable parent: %s: %s\n", gsnap_strerror(r.create), r.m_create);
    CHECK(r.openrw == GSNAP_EACCES);
    CHECK_MSG(has_text(r.m_rw, db_dir) && (has_text(r.m_rw, "ermission") || has_text(r.m_rw, "denied")),
              "unclear message '%s'", r.m_rw);
    CHECK(r.openro == GSNAP_OK ? r.ro_version == 4 : r.openro == GSNAP_EACCES);
    CHECK(r.create == GSNAP_EACCES);
    CHECK_MSG(has_text(r.m_create, parent) && (has_text(r.m_create, "ermission") || has_text(r.m_create, "denied")),
              "unclear message '%s'", r.m_create);
    char newdb[700];
    struct stat sb;
    snprintf(newdb, sizeof newdb, "%s/new-db", parent);
    CHECK(stat(newdb, &sb) != 0); /* nothing created */

    /* a read-only handle refuses writes */
    gsnap_db_options ro = GSNAP_DB_OPTIONS_INIT;
    ro.read_only = 1;
    ro.create = 0;
    OK(gsnap_db_open(db_dir, &ro, &db));
    gsnap_batch *b = NULL;
    CHECK(gsnap_batch_begin(db, &b) == GSNAP_EACCES);
    CHECK(has_text(gsnap_db_errmsg(db), "read-only"));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    CHECK(gsnap_snapshot_create(db, "s", &so, NULL) == GSNAP_EACCES);
    gsnap_db_close(db);

    /* nothing damaged: every version exactly there, check passes, writable again */
    OK(gsnap_db_open(db_dir, NULL, &db));
    cr_params p = {SEED, 0, 0, 0, 0, NULL};
    cr_stats st;
    memset(&st, 0, sizeof st);
    CHECK(cr_verify_store(db, &p, 4, &st) == 0);
    CHECK(st.versions_checked == 4);
    OK(cr_build_batch(db, SEED, 5, &b));
    OK(gsnap_batch_commit(b, &v));
    CHECK(v == 5);
    gsnap_db_close(db);
    test_rmdir(top);
    free(top);
    TEST_DONE();
}
