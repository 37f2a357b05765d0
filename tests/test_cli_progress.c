/* tests/test_cli_progress.c -- the progress line of `ingest` and `check`
 * ($BUILD/graphsnap, run through fork/exec):
 *   - GRAPHSNAP_PROGRESS=1 with stderr a file: ingest of a file draws
 *     "ingest: ...%" on stderr, ingest from a pipe draws a count
 *     ("ingest (events): N", no percent), check draws "check store: 100.0%"
 *     and "check snapshots: 100.0%"; stdout, text and --json, is the same
 *     as without progress (times aside);
 *   - without GRAPHSNAP_PROGRESS and stderr not a terminal, and with
 *     GRAPHSNAP_PROGRESS=0, stderr stays empty;
 *   - stderr a terminal (a pseudo-terminal), no variable: the line is drawn;
 *     with --json it is not. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/wait.h>

static char bin[512], *tmp, data[600];
static char out_buf[1 << 16], err_buf[1 << 16];

enum { IN_NULL, IN_FILE, IN_PIPE };
enum { ERR_FILE, ERR_PTY };

static void slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

/* Copy the data file into fd (the writer end of a pipe), then exit. */
static void pipe_writer(int fd) {
    char b[4096];
    ssize_t n;
    int in = open(data, O_RDONLY);
    if (in < 0) _exit(1);
    while ((n = read(in, b, sizeof b)) > 0)
        if (write(fd, b, (size_t)n) != n) _exit(1);
    _exit(0);
}

/* Run bin with the NULL-terminated arguments. progress: NULL leaves
 * GRAPHSNAP_PROGRESS unset, else its value. Fills out_buf and err_buf;
 * returns the exit status. */
static int run(const char *progress, int in_mode, int err_mode, ...) {
    char *argv[32], outp[600], errp[600];
    int argc = 0, st = 0, master = -1;
    va_list ap;
    const char *a;
    argv[argc++] = bin;
    va_start(ap, err_mode);
    while ((a = va_arg(ap, const char *)) && argc < 31) argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    snprintf(outp, sizeof outp, "%s/stdout", tmp);
    snprintf(errp, sizeof errp, "%s/stderr", tmp);
    if (err_mode == ERR_PTY) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || grantpt(master) || unlockpt(master)) {
            perror("posix_openpt");
            exit(1);
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid == 0) {
        int fi = -1, fe;
        if (in_mode == IN_PIPE) {
            int p[2];
            if (pipe(p)) _exit(126);
            if (fork() == 0) {
                close(p[0]);
                pipe_writer(p[1]);
            }
            close(p[1]);
            fi = p[0];
        } else {
            fi = open(in_mode == IN_FILE ? data : "/dev/null", O_RDONLY);
        }
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err_mode == ERR_PTY) {
            fe = open(ptsname(master), O_RDWR | O_NOCTTY);
            close(master);
        } else {
            fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        }
        if (fi < 0 || fo < 0 || fe < 0) _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        if (progress) setenv("GRAPHSNAP_PROGRESS", progress, 1);
        else unsetenv("GRAPHSNAP_PROGRESS");
        execv(bin, argv);
        _exit(127);
    }
    if (err_mode == ERR_PTY) { /* drain the terminal while the command runs */
        size_t n = 0;
        for (;;) {
            struct pollfd pf = {master, POLLIN, 0};
            if (poll(&pf, 1, 200) < 0 && errno != EINTR) break;
            if (pf.revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t r = read(master, err_buf + n, sizeof err_buf - 1 - n);
                if (r > 0) {
                    n += (size_t)r;
                    continue;
                }
                if (waitpid(pid, &st, WNOHANG) == pid) { pid = 0; break; }
                if (r < 0 && errno != EAGAIN && errno != EINTR) break; /* EIO: slave closed */
            } else if (waitpid(pid, &st, WNOHANG) == pid) {
                pid = 0;
                break;
            }
        }
        err_buf[n] = '\0';
        close(master);
        if (pid) waitpid(pid, &st, 0);
    } else {
        waitpid(pid, &st, 0);
        slurp(errp, err_buf, sizeof err_buf);
    }
    slurp(outp, out_buf, sizeof out_buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The ingest summary without its timings (lines "seconds", "merging",
 * "edges/s"; the JSON fields from "seconds" on), which differ between runs. */
static void strip_times(char *s) {
    char *j = strstr(s, ",\"seconds\":");
    if (j) {
        strcpy(j, "}");
        return;
    }
    char *w = s, *r = s;
    while (*r) {
        char *nl = strchr(r, '\n');
        size_t len = nl ? (size_t)(nl - r + 1) : strlen(r);
        if (strncmp(r, "seconds", 7) != 0 && strncmp(r, "edges/s", 7) != 0 && strncmp(r, "merging", 7) != 0) {
            memmove(w, r, len);
            w += len;
        }
        r += len;
    }
    *w = '\0';
}

static char ref_out[1 << 16];

/* Ingest the data (stdin mode in_mode) into a fresh database twice, without
 * and with forced progress; stdout must agree. Leaves the forced run's
 * stderr in err_buf. */
static void ingest_both(const char *tag, int in_mode, int json) {
    char db1[600], db2[600];
    const char *src = in_mode == IN_NULL ? data : "-"; /* the file, or stdin */
    snprintf(db1, sizeof db1, "%s/%s-a", tmp, tag);
    snprintf(db2, sizeof db2, "%s/%s-b", tmp, tag);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db1, "init", NULL) == 0);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db2, "init", NULL) == 0);
    CHECK(run("0", in_mode, ERR_FILE, "-d", db1, "ingest", src, "--batch", "100", "--nosync",
              json ? "--json" : NULL, NULL) == 0);
    CHECK_MSG(err_buf[0] == '\0', "%s: GRAPHSNAP_PROGRESS=0 wrote to stderr: %s", tag, err_buf);
    strip_times(out_buf);
    snprintf(ref_out, sizeof ref_out, "%s", out_buf);
    CHECK(run("1", in_mode, ERR_FILE, "-d", db2, "ingest", src, "--batch", "100", "--nosync",
              json ? "--json" : NULL, NULL) == 0);
    strip_times(out_buf);
    CHECK_MSG(strcmp(ref_out, out_buf) == 0, "%s: stdout differs with progress:\n%s\n---\n%s", tag, ref_out,
              out_buf);
    CHECK_MSG(strstr(out_buf, "\r") == NULL && strstr(out_buf, "ingest:") == NULL, "%s: progress on stdout", tag);
}

int main(void) {
    const char *build = getenv("BUILD");
    char db[600];
    snprintf(bin, sizeof bin, "%s/graphsnap", build && *build ? build : "build");
    if (access(bin, X_OK) != 0) SKIP("%s not built", bin);
    tmp = test_tmpdir("progress");
    snprintf(data, sizeof data, "%s/edges.tsv", tmp);
    FILE *f = fopen(data, "w");
    uint64_t r = 7;
    unsigned lines = test_small() ? 1500 : 6000;
    for (unsigned i = 0; i < lines; i++)
        fprintf(f, "%llu\t%llu\t%u\n", (unsigned long long)(test_rand(&r) % 500),
                (unsigned long long)(test_rand(&r) % 500), i);
    fclose(f);

    /* ingest of a regular file (named, and as stdin): percent */
    ingest_both("file", IN_NULL, 0);
    CHECK_MSG(strstr(err_buf, "\ringest: ") && strstr(err_buf, "100.0%"), "no ingest percent: %s", err_buf);
    ingest_both("stdin-file", IN_FILE, 1);
    CHECK_MSG(strstr(err_buf, "\ringest: ") && strstr(err_buf, "100.0%"), "no ingest percent (stdin): %s",
              err_buf);
    CHECK(strncmp(out_buf, "{\"file\":", 8) == 0);
    /* from a pipe: a count, no percent */
    ingest_both("pipe", IN_PIPE, 0);
    CHECK_MSG(strstr(err_buf, "\ringest (events): ") != NULL, "no event count for a pipe: %s", err_buf);
    CHECK_MSG(strchr(err_buf, '%') == NULL, "percent shown for a pipe: %s", err_buf);

    /* no variable, stderr a file: nothing */
    snprintf(db, sizeof db, "%s/quiet", tmp);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "init", NULL) == 0);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "ingest", data, "--batch", "100", "--nosync", NULL) == 0);
    CHECK_MSG(err_buf[0] == '\0', "ingest wrote to a non-terminal stderr: %s", err_buf);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "check", NULL) == 0);
    CHECK_MSG(err_buf[0] == '\0', "check wrote to a non-terminal stderr: %s", err_buf);

    /* check: a snapshot so that both phases have work */
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "snapshot", "create", "s", "--hops", "2", "--fanouts", "5,5",
              NULL) == 0);
    for (int json = 0; json < 2; json++) {
        CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "check", json ? "--json" : NULL, NULL) == 0);
        CHECK(err_buf[0] == '\0');
        snprintf(ref_out, sizeof ref_out, "%s", out_buf);
        CHECK(run("1", IN_NULL, ERR_FILE, "-d", db, "check", json ? "--json" : NULL, NULL) == 0);
        CHECK_MSG(strcmp(ref_out, out_buf) == 0, "check stdout differs with progress:\n%s\n---\n%s", ref_out,
                  out_buf);
        CHECK_MSG(strstr(err_buf, "\rcheck store: 100.0%") != NULL, "no store check progress: %s", err_buf);
        CHECK_MSG(strstr(err_buf, "\rcheck snapshots: 100.0%") != NULL, "no snapshot check progress: %s",
                  err_buf);
        CHECK_MSG(strstr(err_buf, "\r\x1b[K") != NULL, "progress line not cleared at the end");
    }
    CHECK(run("0", IN_NULL, ERR_FILE, "-d", db, "check", NULL) == 0);
    CHECK(err_buf[0] == '\0');

    /* a real terminal on stderr, no variable: drawn; with --json: not */
    CHECK(run(NULL, IN_NULL, ERR_PTY, "-d", db, "check", NULL) == 0);
    CHECK_MSG(strstr(err_buf, "check store: ") != NULL, "no progress on a terminal: '%s'", err_buf);
    CHECK(strstr(out_buf, "0 problem(s)") != NULL);
    CHECK(run(NULL, IN_NULL, ERR_PTY, "-d", db, "check", "--json", NULL) == 0);
    CHECK_MSG(strstr(err_buf, "check store") == NULL, "progress with --json on a terminal: '%s'", err_buf);
    snprintf(db, sizeof db, "%s/tty", tmp);
    CHECK(run(NULL, IN_NULL, ERR_FILE, "-d", db, "init", NULL) == 0);
    CHECK(run(NULL, IN_NULL, ERR_PTY, "-d", db, "ingest", data, "--batch", "100", "--nosync", NULL) == 0);
    CHECK_MSG(strstr(err_buf, "ingest: ") != NULL && strchr(err_buf, '%'), "no ingest progress on a terminal: '%s'",
              err_buf);

    test_rmdir(tmp);
    free(tmp);
    TEST_DONE();
}
