/*
 * Full disk and resource limits:
 *  - RLIMIT_FSIZE: a child process ingests (batches, then text through
 *    gsnap_ingest_text, then a snapshot build) until the data file hits the
 *    limit; every failure must be GSNAP_ENOSPC (EFBIG from pwrite) with a
 *    message that says so, reads must still work in that process, and after
 *    the limit is gone the database opens, passes gsnap_db_check, holds every
 *    version committed before (each exactly), and takes new commits;
 *  - a real full file system: the same in a 2 MiB tmpfs when this process may
 *    mount one (root in CI), noted and skipped otherwise;
 *  - too many readers: with max_readers = 4, the fifth concurrent view (in
 *    this process, then with the slots held by another process) gets
 *    GSNAP_EBUSY with a message naming the reader limit; the database stays
 *    usable, and the slots of a killed reader process are reclaimed on open.
 * Batches and their verification come from the crash harness
 * (tests/crash/crash_lib.h): batch v's content is a function of v.
 */
#include "crash/crash_lib.h"
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define SEED 77

static int has_text(const char *msg, const char *a, const char *b) {
    return msg && (strstr(msg, a) || (b && strstr(msg, b)));
}

/* Fill the database in this (child) process until it fails; write the
 * outcome to fd: "committed V" lines, then "fail RC" + the message. */
static int fill(const char *dir, int fd) {
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.map_size = 64u << 10;
    if (gsnap_db_open(dir, &o, &db)) return 30;
    uint64_t v = 0;
    gsnap_db_version(db, &v);
    int rc = 0;
    for (int i = 0; i < 100000 && !rc; i++) {
        gsnap_batch *b = NULL;
        uint64_t got = 0;
        if ((rc = cr_build_batch(db, SEED, v + 1, &b))) break;
        if ((rc = gsnap_batch_commit(b, &got))) break;
        v = got;
        cr_fdprintf(fd, "committed %llu\n", (unsigned long long)v);
    }
    char msg[600];
    snprintf(msg, sizeof msg, "fail %d %s\n", rc, gsnap_db_errmsg(db));
    if (write(fd, msg, strlen(msg)) < 0) return 31;
    /* reads still work after the failed commit, in the same process */
    uint64_t deg = 0, v2 = 0;
    if (gsnap_db_version(db, &v2) || v2 != v) return 32;
    if (v && (gsnap_degree(db, NULL, CR_MARK + v, GSNAP_DIR_IN, GSNAP_TIME_MAX, v, &deg) ||
              deg != cr_marks(SEED, v)))
        return 33;
    /* text ingest fails the same way, naming ENOSPC */
    /* one batch of 40000 events: larger than the space left by far */
    size_t tcap = 40000 * 32, tl = 0;
    char *text = malloc(tcap);
    if (!text) return 34;
    for (int i = 0; i < 40000; i++)
        tl += (size_t)snprintf(text + tl, tcap - tl, "%d\t%d\t%d\n", i, 5000000 + i % 7, i);
    FILE *fp = fmemopen(text, tl, "r");
    gsnap_ingest_options io = GSNAP_INGEST_OPTIONS_INIT;
    io.batch_edges = 100000;
    gsnap_ingest_report rep;
    memset(&rep, 0, sizeof rep);
    int trc = fp ? gsnap_ingest_text(db, fp, "fill.tsv", &io, &rep) : -1;
    if (fp) fclose(fp);
    free(text);
    snprintf(msg, sizeof msg, "text %d %llu %s\n", trc, (unsigned long long)rep.last_version,
             gsnap_db_errmsg(db));
    if (write(fd, msg, strlen(msg)) < 0) return 31;
    gsnap_db_version(db, &v2);
    if (v2 != v || rep.last_version) return 35; /* nothing of it may be committed */
    /* a snapshot build cannot complete either */
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.mem_budget = 1u << 20;
    int src = gsnap_snapshot_create(db, "full", &so, NULL);
    snprintf(msg, sizeof msg, "snap %d %s\n", src, gsnap_db_errmsg(db));
    if (write(fd, msg, strlen(msg)) < 0) return 31;
    gsnap_db_close(db);
    return 0;
}

typedef struct {
    uint64_t max_v;
    int rc, text_rc, snap_rc;
    char msg[512], text_msg[512], snap_msg[512];
} fill_result;

static void parse_line(char *line, fill_result *r) {
    unsigned long long x, y;
    int rc, n = 0;
    if (sscanf(line, "committed %llu", &x) == 1) { if (x > r->max_v) r->max_v = x; }
    else if (sscanf(line, "fail %d %n", &rc, &n) == 1) { r->rc = rc; snprintf(r->msg, sizeof r->msg, "%s", line + n); }
    else if (sscanf(line, "text %d %llu %n", &rc, &y, &n) == 2) { r->text_rc = rc; snprintf(r->text_msg, sizeof r->text_msg, "%s", line + n); }
    else if (sscanf(line, "snap %d %n", &rc, &n) == 1) { r->snap_rc = rc; snprintf(r->snap_msg, sizeof r->snap_msg, "%s", line + n); }
}

/* Run fill() in a child with RLIMIT_FSIZE = fsize (0: no limit). */
static int run_fill(const char *dir, rlim_t fsize, fill_result *r) {
    int fds[2];
    memset(r, 0, sizeof *r);
    r->rc = r->text_rc = r->snap_rc = 1;
    if (pipe(fds)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN); /* get EFBIG from write instead of a signal */
        if (fsize) {
            struct rlimit rl = {fsize, fsize};
            if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(40);
        }
        _exit(fill(dir, fds[1]));
    }
    close(fds[1]);
    char buf[8192], line[700];
    size_t ll = 0;
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n') { if (ll < sizeof line - 1) line[ll++] = buf[i]; continue; }
            line[ll] = 0;
            ll = 0;
            parse_line(line, r);
        }
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* After the limit: reopen, check, verify every version, commit one more. */
static void verify_after(const char *dir, uint64_t reported) {
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, NULL, &db));
    cr_params p = {SEED, 0, 0, 0, 0, NULL};
    cr_stats st;
    memset(&st, 0, sizeof st);
    CHECK(cr_verify_store(db, &p, reported, &st) == 0);
    CHECK(st.lost == 0 && st.bad_versions == 0 && st.check_failures == 0);
    uint64_t v = 0, got = 0;
    OK(gsnap_db_version(db, &v));
    CHECK(v >= reported);
    gsnap_batch *b = NULL;
    OK(cr_build_batch(db, SEED, v + 1, &b));
    OK(gsnap_batch_commit(b, &got));
    CHECK(got == v + 1);
    /* the failed snapshot is not openable */
    gsnap_snapshot *s = NULL;
    CHECK(gsnap_snapshot_open(db, "full", &s) != GSNAP_OK);
    gsnap_snapshot_close(s);
    gsnap_db_close(db);
}

static void check_fill(const fill_result *r, int child_rc, const char *what) {
    printf("%s: %llu versions committed, then: %s: %s\n", what, (unsigned long long)r->max_v,
           gsnap_strerror(r->rc), r->msg);
    printf("%s: text ingest: %s: %s\n", what, gsnap_strerror(r->text_rc), r->text_msg);
    printf("%s: snapshot build: %s: %s\n", what, gsnap_strerror(r->snap_rc), r->snap_msg);
    CHECK_MSG(child_rc == 0, "%s: child exit %d", what, child_rc);
    CHECK(r->max_v >= 2);
    CHECK_MSG(r->rc == GSNAP_ENOSPC, "%s: commit returned %d", what, r->rc);
    CHECK_MSG(has_text(r->msg, "space", "size limit") || has_text(r->msg, "too large", "full"),
              "%s: unclear message '%s'", what, r->msg);
    CHECK_MSG(r->text_rc == GSNAP_ENOSPC, "%s: text ingest returned %d", what, r->text_rc);
    CHECK_MSG(r->snap_rc == GSNAP_ENOSPC || r->snap_rc == GSNAP_EIO, "%s: snapshot returned %d",
              what, r->snap_rc);
    CHECK(r->msg[0] && r->text_msg[0] && r->snap_msg[0]);
}

static void fsize_limit(void) {
    char *dir = test_tmpdir("fsize");
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, NULL, &db));
    uint64_t v = 0;
    for (int i = 0; i < 3; i++) {
        gsnap_batch *b = NULL;
        OK(cr_build_batch(db, SEED, v + 1, &b));
        OK(gsnap_batch_commit(b, &v));
    }
    gsnap_db_close(db);
    char path[600];
    struct stat sb;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    OK(stat(path, &sb) ? GSNAP_EIO : 0);
    fill_result r;
    int crc = run_fill(dir, (rlim_t)sb.st_size + (test_small() ? 256u << 10 : 1u << 20), &r);
    check_fill(&r, crc, "RLIMIT_FSIZE");
    verify_after(dir, r.max_v > 3 ? r.max_v : 3);
    test_rmdir(dir);
    free(dir);
}

static char *g_mounted; /* unmounted at exit even when a check exits early */
static pid_t g_owner;
static void unmount_at_exit(void) {
    if (g_mounted && getpid() == g_owner) umount2(g_mounted, MNT_DETACH);
}

static void full_tmpfs(void) {
    char *dir = test_tmpdir("tmpfs");
    if (mount("gsnap-enospc", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m") == 0) {
        g_mounted = dir;
        g_owner = getpid();
        atexit(unmount_at_exit);
    } else {
        printf("tmpfs part not run: cannot mount a tmpfs here (%s)\n", strerror(errno));
        test_rmdir(dir);
        free(dir);
        return;
    }
    char db_dir[600];
    snprintf(db_dir, sizeof db_dir, "%s/db", dir);
    gsnap_db *db = NULL;
    OK(gsnap_db_open(db_dir, NULL, &db));
    gsnap_db_close(db);
    fill_result r;
    int crc = run_fill(db_dir, 0, &r);
    check_fill(&r, crc, "tmpfs 2 MiB");
    /* space comes back (the file system grows): everything is still there */
    if (mount("gsnap-enospc", dir, "tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, "size=16m") != 0)
        fprintf(stderr, "remount %s: %s\n", dir, strerror(errno));
    verify_after(db_dir, r.max_v);
    if (umount(dir) != 0) fprintf(stderr, "umount %s: %s\n", dir, strerror(errno));
    g_mounted = NULL;
    test_rmdir(dir);
    free(dir);
}

/* Too many readers. */
static void readers_full(void) {
    char *dir = test_tmpdir("readers");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.max_readers = 4;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t v = 0;
    gsnap_batch *b = NULL;
    OK(cr_build_batch(db, SEED, 1, &b));
    OK(gsnap_batch_commit(b, &v));
    /* in one process: hold views until the slots run out */
    gsnap_read *rd[8] = {0};
    int held = 0, rc = 0;
    for (held = 0; held < 8; held++)
        if ((rc = gsnap_read_begin(db, &rd[held]))) break;
    printf("readers: %d views held, then %s: %s\n", held, gsnap_strerror(rc), gsnap_db_errmsg(db));
    CHECK(held >= 1 && held <= 4);
    CHECK(rc == GSNAP_EBUSY);
    CHECK(has_text(gsnap_db_errmsg(db), "reader", NULL));
    /* the views held still answer; writers need no reader slot */
    uint64_t deg = 0;
    OK(gsnap_degree(db, rd[0], CR_MARK + 1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    CHECK(deg == cr_marks(SEED, 1));
    for (int i = 0; i < held; i++) gsnap_read_end(rd[i]);
    OK(cr_build_batch(db, SEED, 2, &b));
    OK(gsnap_batch_commit(b, &v));
    CHECK(v == 2);
    gsnap_db_close(db);

    /* another process holds every slot and is killed: the slots come back */
    int fds[2];
    OK(pipe(fds) ? GSNAP_EIO : 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        gsnap_db *cdb = NULL;
        if (gsnap_db_open(dir, &o, &cdb)) _exit(50);
        gsnap_read *crd[8];
        int n = 0;
        while (n < 8 && gsnap_read_begin(cdb, &crd[n]) == 0) n++;
        cr_fdprintf(fds[1], "held %d\n", n);
        pause(); /* until SIGKILL */
        _exit(0);
    }
    close(fds[1]);
    char line[64] = {0};
    ssize_t n = read(fds[0], line, sizeof line - 1);
    close(fds[0]);
    CHECK(n > 0 && strncmp(line, "held", 4) == 0);
    /* opening reads the meta record, so it may already be refused */
    gsnap_read *r1 = NULL;
    rc = gsnap_db_open(dir, &o, &db);
    const char *msg = rc ? gsnap_last_open_error() : "";
    if (rc == 0) {
        rc = gsnap_read_begin(db, &r1);
        msg = gsnap_db_errmsg(db);
    }
    printf("readers: another process holds the slots: %s: %s\n", gsnap_strerror(rc), msg);
    CHECK(rc == GSNAP_EBUSY);
    CHECK(has_text(msg, "reader", NULL));
    gsnap_read_end(r1);
    gsnap_db_close(db);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* reopen: stale slots of the dead process are cleared */
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_read_begin(db, &r1));
    CHECK(gsnap_read_version(r1) == 2);
    gsnap_read_end(r1);
    cr_params p = {SEED, 0, 0, 0, 0, NULL};
    cr_stats st;
    memset(&st, 0, sizeof st);
    CHECK(cr_verify_store(db, &p, 2, &st) == 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    (void)cr_run;
    (void)cr_print;
    fsize_limit();
    full_tmpfs();
    readers_full();
    TEST_DONE();
}
