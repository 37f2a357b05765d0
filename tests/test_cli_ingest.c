/* tests/test_cli_ingest.c -- drives the built `graphsnap` binary
 * ($BUILD/graphsnap, BUILD defaults to "build") through fork/exec:
 *   - every bad-input class in the second batch of a file: exit 1, stderr names
 *     file and line, exactly the first batch committed (checked through the
 *     library and through `neighbors`), nothing of the bad batch;
 *   - --skip-bad: bad lines counted and reported, the rest committed;
 *   - stdin '-', --json output is valid JSON with the documented keys,
 *     --help/--version exit 0, usage errors exit 2, missing database exit 3;
 *   - a regular file is a bulk load: merged at 8 while it loads, then to the
 *     shape the default fanout keeps (no level with 4 delta runs, deltas
 *     smaller than the base), where `--merge-fanout 8` leaves a level of 4
 *     or more and a pipe is merged at 4 throughout (no merge after it); the
 *     answers are the same all three ways. */
#include "test.h"
#include "store/store_int.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char bin[512];
static char *tmp;
static char out_buf[65536], err_buf[65536];

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

/* Run bin with the NULL-terminated args; stdin from `in` (NULL: /dev/null).
 * Fills out_buf/err_buf; returns the exit status (-1 if killed). */
static int run_v(const char *in, const char *arg0, va_list ap)
{
    char *argv[40], outp[600], errp[600];
    int argc = 0, st = 0;
    pid_t pid;
    const char *a;
    argv[argc++] = bin;
    for (a = arg0; a && argc < 39; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    argv[argc] = NULL;
    snprintf(outp, sizeof outp, "%s/stdout", tmp);
    snprintf(errp, sizeof errp, "%s/stderr", tmp);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        int fi = open(in ? in : "/dev/null", O_RDONLY);
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fi < 0 || fo < 0 || fe < 0)
            _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, argv);
        _exit(127);
    }
    if (waitpid(pid, &st, 0) < 0) {
        perror("waitpid");
        exit(1);
    }
    slurp(outp, out_buf, sizeof out_buf);
    slurp(errp, err_buf, sizeof err_buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *arg0, ...)
{
    va_list ap;
    int rc;
    va_start(ap, arg0);
    rc = run_v(NULL, arg0, ap);
    va_end(ap);
    return rc;
}

static int run_in(const char *in, const char *arg0, ...)
{
    va_list ap;
    int rc;
    va_start(ap, arg0);
    rc = run_v(in, arg0, ap);
    va_end(ap);
    return rc;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* ---- a minimal JSON validator (one value, whole input) ---- */
static const char *js_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}
static const char *js_value(const char *p, int depth);
static const char *js_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                int i;
                for (i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}
static const char *js_number(const char *p)
{
    const char *s = p;
    if (*p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return NULL;
    while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
           *p == '-')
        p++;
    return p > s ? p : NULL;
}
static const char *js_value(const char *p, int depth)
{
    if (depth > 20)
        return NULL;
    p = js_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = js_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = js_string(js_ws(p));
                if (!p)
                    return NULL;
                p = js_ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = js_value(p, depth + 1);
            if (!p)
                return NULL;
            p = js_ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"')
        return js_string(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return js_number(p);
}
static int json_ok(const char *s)
{
    const char *e = js_value(s, 0);
    return e && *js_ws(e) == '\0';
}
/* value of "key": as unsigned (first occurrence); UINT64_MAX if absent */
static uint64_t json_u64(const char *s, const char *key)
{
    char k[64];
    const char *p;
    snprintf(k, sizeof k, "\"%s\":", key);
    p = strstr(s, k);
    return p ? strtoull(p + strlen(k), NULL, 10) : UINT64_MAX;
}

/* ---- checks through the library ---- */
static uint64_t db_version(const char *dir)
{
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    gsnap_db *db = NULL;
    uint64_t v = 0;
    o.create = 0;
    o.read_only = 1;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_db_version(db, &v));
    gsnap_db_close(db);
    return v;
}

/* in-neighbours of `node` (now, latest) as a sorted list of sources */
static size_t db_in_nbrs(const char *dir, uint64_t node, uint64_t *srcs, size_t cap)
{
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    gsnap_db *db = NULL;
    gsnap_nbr buf[64];
    size_t n = 0, i;
    o.create = 0;
    o.read_only = 1;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_neighbors(db, NULL, node, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, 64, &n));
    for (i = 0; i < n && i < cap; i++)
        srcs[i] = buf[i].node;
    gsnap_db_close(db);
    return n;
}

/* The most runs a delta level holds, and the records of the deltas and the
 * base, in the newest view of the database at dir. */
static unsigned db_shape(const char *dir, uint64_t *deltas, uint64_t *base)
{
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    gsnap_db *db = NULL;
    gsnap_read *rd;
    unsigned most = 0;
    size_t i, j;
    o.create = 0;
    o.read_only = 1;
    OK(gsnap_db_open(dir, &o, &db));
    OK(gsnap_read_begin(db, &rd));
    *deltas = *base = 0;
    for (i = 0; i < rd->nruns; i++) {
        unsigned cnt = 0;
        if (rd->runs[i].info.level == GSNAP_LEVEL_BASE) {
            *base += rd->runs[i].info.nrec;
            continue;
        }
        *deltas += rd->runs[i].info.nrec;
        for (j = 0; j < rd->nruns; j++)
            cnt += rd->runs[j].info.level == rd->runs[i].info.level;
        if (cnt > most)
            most = cnt;
    }
    gsnap_read_end(rd);
    gsnap_db_close(db);
    return most;
}

static void fresh_db(const char *db)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", db);
    if (system(cmd) != 0)
        exit(1);
    if (run("init", db, "--nosync", NULL) != 0) {
        fprintf(stderr, "init failed: %s\n", err_buf);
        exit(1);
    }
}

/* The first batch (3 events, lines 2..4 after a comment) commits; line 7 of
 * the second batch is bad. */
static const char good_head[] = "# src dst t\n1 100 1\n2 100 2\n3 100 3\n4 100 4\n5 100 5\n";

typedef struct {
    const char *cls;
    const char *line; /* the bad line (may hold NUL: len given) */
    size_t len;
    const char *col; /* what the message must name */
} bad_case;

static void check_bad_case(const bad_case *bc, const char *db, const char *file)
{
    char data[512], needle[700];
    uint64_t srcs[16];
    size_t n, hl = strlen(good_head);
    int rc;
    memcpy(data, good_head, hl);
    memcpy(data + hl, bc->line, bc->len);
    memcpy(data + hl + bc->len, "\n6 100 6\n", 9);
    write_file(file, data, hl + bc->len + 9);
    fresh_db(db);

    rc = run("-d", db, "ingest", "--batch", "3", "--nosync", file, NULL);
    CHECK_MSG(rc == 1, "%s: exit %d, want 1 (stderr: %s)", bc->cls, rc, err_buf);
    snprintf(needle, sizeof needle, "%s:7:", file);
    CHECK_MSG(strstr(err_buf, needle) != NULL, "%s: stderr lacks '%s': %s", bc->cls, needle, err_buf);
    CHECK_MSG(strstr(err_buf, bc->col) != NULL, "%s: stderr lacks '%s': %s", bc->cls, bc->col, err_buf);
    CHECK_MSG(strncmp(err_buf, "graphsnap: ", 11) == 0, "%s: stderr not prefixed: %s", bc->cls, err_buf);
    CHECK_MSG(out_buf[0] == '\0', "%s: stdout not empty on failure: %s", bc->cls, out_buf);
    /* exactly the first batch: version 1, sources 1..3 of node 100 */
    CHECK_MSG(db_version(db) == 1, "%s: version %llu, want 1", bc->cls,
              (unsigned long long)db_version(db));
    n = db_in_nbrs(db, 100, srcs, 16);
    CHECK_MSG(n == 3 && srcs[0] == 1 && srcs[1] == 2 && srcs[2] == 3, "%s: %zu in-neighbours", bc->cls, n);
    /* the same through the CLI */
    rc = run("neighbors", "100", "-d", db, NULL);
    CHECK_MSG(rc == 0 && strcmp(out_buf, "1\t1\t1\n2\t2\t1\n3\t3\t1\n") == 0,
              "%s: neighbors rc %d out '%s' err '%s'", bc->cls, rc, out_buf, err_buf);
    rc = run("degree", "100", "-d", db, NULL);
    CHECK_MSG(rc == 0 && strcmp(out_buf, "3\n") == 0, "%s: degree '%s'", bc->cls, out_buf);
}

int main(void)
{
    const char *b = getenv("BUILD");
    char db[600], file[600], file2[600];
    struct stat sb;
    int rc;
    size_t i;

    snprintf(bin, sizeof bin, "%s/graphsnap", b && *b ? b : "build");
    if (stat(bin, &sb) != 0)
        SKIP("no CLI binary at %s (build it first)", bin);
    unsetenv("GRAPHSNAP_DB");
    tmp = test_tmpdir("cli");
    snprintf(db, sizeof db, "%s/db", tmp);
    snprintf(file, sizeof file, "%s/edges.tsv", tmp);
    snprintf(file2, sizeof file2, "%s/other.csv", tmp);

    /* ---- conventions: help, version, usage errors ---- */
    CHECK(run("--help", NULL) == 0 && strstr(out_buf, "Usage: graphsnap") && strstr(out_buf, "ingest"));
    CHECK(strstr(out_buf, "Exit codes") != NULL);
    CHECK(run("--version", NULL) == 0 && strstr(out_buf, GSNAP_VERSION_STRING));
    CHECK(run("-V", NULL) == 0 && strstr(out_buf, "graphsnap"));
    /* the heap on huge pages: the commands that fill large heaps run
     * themselves again with glibc's tunable added (not when valgrind runs
     * them: its exec would leave valgrind; the suite under valgrind
     * preloads it into this child too); --version says what they do, an
     * ingest whether it ran so; a small command pays no exec */
    unsetenv("GLIBC_TUNABLES");
    unsetenv("GRAPHSNAP_HUGE_HEAP");
    if (!getenv("GSNAP_VALGRIND"))
        CHECK_MSG(run("--version", NULL) == 0 && strstr(out_buf, "heap: transparent huge pages for the commands"), "%s",
                  out_buf);
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1); /* the user's choice stands */
    CHECK_MSG(run("--version", NULL) == 0 && strstr(out_buf, "heap: 4 KiB pages (GLIBC_TUNABLES"), "%s", out_buf);
    unsetenv("GLIBC_TUNABLES");
    setenv("GRAPHSNAP_HUGE_HEAP", "0", 1);
    CHECK_MSG(run("--version", NULL) == 0 && strstr(out_buf, "heap: 4 KiB pages (GRAPHSNAP_HUGE_HEAP=0"), "%s", out_buf);
    unsetenv("GRAPHSNAP_HUGE_HEAP");
    CHECK(run("help", "ingest", NULL) == 0 && strstr(out_buf, "Usage: graphsnap ingest"));
    CHECK(run("help", NULL) == 0 && strstr(out_buf, "Commands"));
    {
        static const char *const cmds[] = {"init", "ingest", "neighbors", "degree", "stat"};
        for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            char want[64];
            snprintf(want, sizeof want, "Usage: graphsnap %s", cmds[i]);
            rc = run(cmds[i], "--help", NULL);
            CHECK_MSG(rc == 0 && strstr(out_buf, want), "%s --help: rc %d", cmds[i], rc);
            rc = run(cmds[i], "-h", NULL);
            CHECK_MSG(rc == 0 && strstr(out_buf, want), "%s -h: rc %d", cmds[i], rc);
        }
    }
    rc = run(NULL);
    CHECK_MSG(rc == 2 && out_buf[0] == '\0', "no command: rc %d", rc);
    rc = run("--bogus", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "graphsnap: ") && strstr(err_buf, "--bogus"), "rc %d %s", rc, err_buf);
    rc = run("frobnicate", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "frobnicate"), "unknown command rc %d", rc);
    rc = run("help", "frobnicate", NULL);
    CHECK(rc == 2);
    rc = run("-d", db, "ingest", "--bogus", file, NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "unknown option '--bogus'"), "rc %d %s", rc, err_buf);
    rc = run("-d", db, "ingest", file, "--batch", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--batch") && strstr(err_buf, "needs a value"), "rc %d %s", rc, err_buf);
    rc = run("-d", db, "ingest", "--batch", "0", file, NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--batch"), "--batch 0: rc %d %s", rc, err_buf);
    rc = run("-d", db, "ingest", "--batch", "12x", file, NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--batch: '12x'"), "--batch 12x: rc %d %s", rc, err_buf);
    rc = run("-d", db, "ingest", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "missing"), "no FILE: rc %d %s", rc, err_buf);
    rc = run("-d", db, "neighbors", "--", "-5", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "NODE"), "neighbors -5: rc %d %s", rc, err_buf);
    rc = run("-d", db, "neighbors", "5", "--at", "yesterday", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--at"), "--at: rc %d %s", rc, err_buf);
    rc = run("init", "--keep", "sideways", db, NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--keep"), "--keep: rc %d %s", rc, err_buf);
    rc = run("init", "--map-size", "12Q", db, NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "--map-size"), "--map-size: rc %d %s", rc, err_buf);

    /* ---- missing database: exit 3, nothing on stdout ---- */
    write_file(file, "1 2 3\n", 6);
    rc = run("-d", db, "ingest", file, NULL);
    CHECK_MSG(rc == 3 && out_buf[0] == '\0' && strstr(err_buf, "cannot open database"), "rc %d %s", rc, err_buf);
    rc = run("-d", db, "neighbors", "1", NULL);
    CHECK_MSG(rc == 3, "neighbors on missing db: rc %d", rc);
    rc = run("stat", "--db", db, NULL);
    CHECK_MSG(rc == 3, "stat on missing db: rc %d", rc);
    rc = run("stat", NULL);
    CHECK_MSG(rc == 2 && strstr(err_buf, "GRAPHSNAP_DB"), "no -d: rc %d %s", rc, err_buf);

    /* ---- init ---- */
    rc = run("init", db, "--keep", "both", "--nosync", "--map-size", "8M", NULL);
    CHECK_MSG(rc == 0, "init: rc %d %s", rc, err_buf);
    rc = run("init", db, NULL);
    CHECK_MSG(rc == 1 && strstr(err_buf, "already exists"), "init twice: rc %d %s", rc, err_buf);
    rc = run("-d", db, "stat", "--json", NULL);
    CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "version") == 0, "stat: %s", out_buf);

    /* ---- every bad-input class in the second batch ---- */
    {
#define BC_LINE(lit) lit, sizeof(lit) - 1
        static const bad_case cases[] = {
            {"missing column", BC_LINE("6"), "column 2 (dst)"},
            {"empty field", BC_LINE("6,,100"), "column 2 (dst)"},
            {"non-number", BC_LINE("6 abc"), "column 2 (dst)"},
            {"non-number t", BC_LINE("6 100 12:30"), "column 3 (t)"},
            {"overflow src", BC_LINE("18446744073709551616 100"), "column 1 (src)"},
            {"overflow dst", BC_LINE("6 99999999999999999999"), "column 2 (dst)"},
            {"overflow t", BC_LINE("6 100 9223372036854775808"), "column 3 (t)"},
            {"reserved t", BC_LINE("6 100 9223372036854775807"), "column 3 (t)"},
            {"negative id", BC_LINE("-6 100"), "column 1 (src)"},
            {"bad op", BC_LINE("6 100 6 maybe"), "column 4 (op)"},
            {"trailing garbage", BC_LINE("6 100 6 add extra"), "column 5"},
            {"binary junk", BC_LINE("6 1\0\x01\xff"), "column 2 (dst)"},
        };
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_bad_case(&cases[i], db, file);
    }

    /* ---- empty input and comment-only input: "no edges", nothing committed ---- */
    fresh_db(db);
    write_file(file, "", 0);
    rc = run("-d", db, "ingest", "--json", file, NULL);
    CHECK_MSG(rc == 1 && strstr(err_buf, "no edges") && strstr(err_buf, file) && out_buf[0] == '\0',
              "empty: rc %d %s", rc, err_buf);
    write_file(file, "# only\n\n% comments\r\n", 20);
    rc = run("-d", db, "ingest", file, NULL);
    CHECK_MSG(rc == 1 && strstr(err_buf, "no edges"), "comments only: rc %d %s", rc, err_buf);
    CHECK(db_version(db) == 0);
    /* a missing input file: exit 1 */
    rc = run("-d", db, "ingest", "/nonexistent/edges.tsv", NULL);
    CHECK_MSG(rc == 1 && strstr(err_buf, "/nonexistent/edges.tsv"), "missing file: rc %d %s", rc, err_buf);

    /* ---- --skip-bad: counted, reported, the rest committed ---- */
    {
        static const char data[] =
            "1 200 1\n"
            "2 200 2\n"
            "x 200 3\n"        /* line 3: bad */
            "3,200,3\n"
            "4\t200\t4\n"
            "5 200\n"          /* default t = line number 6 */
            "-1 200 7\n"       /* line 7: bad */
            "6 200 8 add\n"
            "7 200 9 + junk\n" /* line 9: bad */
            "8 200 10\r\n"
            "1 200 11 del\n";  /* removes 1 -> 200 */
        uint64_t srcs[16];
        size_t n;
        fresh_db(db);
        write_file(file, data, sizeof data - 1);
        rc = run("-d", db, "ingest", "--skip-bad", "--batch", "4", "--json", file, NULL);
        CHECK_MSG(rc == 0, "skip-bad: rc %d %s", rc, err_buf);
        CHECK_MSG(json_ok(out_buf), "skip-bad json: %s", out_buf);
        CHECK(json_u64(out_buf, "bad_lines") == 3);
        CHECK(json_u64(out_buf, "first_bad_line") == 3);
        CHECK(json_u64(out_buf, "lines") == 11);
        CHECK(json_u64(out_buf, "events") == 8);
        CHECK(json_u64(out_buf, "batches") == 2);
        CHECK(json_u64(out_buf, "first_version") == 1 && json_u64(out_buf, "last_version") == 2);
        CHECK(strstr(out_buf, "\"first_bad_error\":\"") && strstr(out_buf, "edges.tsv:3: column 1 (src)"));
        CHECK_MSG(strstr(err_buf, "skipped 3 bad lines") && strstr(err_buf, "edges.tsv:3:"), "%s", err_buf);
        n = db_in_nbrs(db, 200, srcs, 16);
        CHECK_MSG(n == 6 && srcs[0] == 2 && srcs[1] == 3 && srcs[2] == 4 && srcs[3] == 5 &&
                  srcs[4] == 6 && srcs[5] == 8, "skip-bad: %zu in-neighbours", n);
        rc = run("-d", db, "neighbors", "200", "--at", "6", "--json", NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "count") == 5, "at 6: %s", out_buf);
        rc = run("-d", db, "neighbors", "200", "--version", "1", NULL);
        CHECK_MSG(rc == 0 && strcmp(out_buf, "1\t1\t1\n2\t2\t1\n3\t3\t1\n4\t4\t1\n") == 0, "v1: '%s'", out_buf);
        rc = run("-d", db, "neighbors", "200", "--limit", "2", NULL);
        CHECK_MSG(rc == 0 && strcmp(out_buf, "2\t2\t1\n3\t3\t1\n") == 0, "limit: '%s'", out_buf);
        rc = run("-d", db, "neighbors", "5", "--out", NULL);
        CHECK_MSG(rc == 0 && strcmp(out_buf, "200\t6\t2\n") == 0, "out: '%s'", out_buf);
        rc = run("-d", db, "neighbors", "200", "--version", "3", NULL);
        CHECK_MSG(rc == 2 && out_buf[0] == '\0', "--version 3: rc %d", rc);
        /* --merge-fanout: out of range is a usage error that names it, and
         * nothing is committed; in range the ingest goes on as usual */
        rc = run("-d", db, "ingest", "--merge-fanout", "1", file, NULL);
        CHECK_MSG(rc == 2 && strstr(err_buf, "--merge-fanout") && strstr(err_buf, "[2, 32]"),
                  "--merge-fanout 1: rc %d %s", rc, err_buf);
        rc = run("-d", db, "ingest", "--merge-fanout", "8", "--skip-bad", "--json", file, NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "events") == 8, "--merge-fanout 8: rc %d %s %s",
                  rc, out_buf, err_buf);
        /* --dry-run: no database needed, nothing written */
        rc = run("ingest", "--dry-run", "--skip-bad", "--json", file, NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "events") == 8 &&
                  json_u64(out_buf, "bad_lines") == 3, "dry-run: rc %d %s %s", rc, out_buf, err_buf);
        rc = run("ingest", "--dry-run", file, NULL);
        CHECK_MSG(rc == 1 && out_buf[0] == '\0' && strstr(err_buf, "edges.tsv:3: column 1 (src)"),
                  "dry-run bad: rc %d %s", rc, err_buf);
        /* text summary */
        fresh_db(db);
        rc = run("-d", db, "ingest", "--skip-bad", file, NULL);
        CHECK_MSG(rc == 0 && strstr(out_buf, "bad lines  3 skipped") && strstr(out_buf, "events     8"),
                  "text summary: %s", out_buf);
        /* without --skip-bad the same file fails at line 3, nothing committed */
        fresh_db(db);
        rc = run("-d", db, "ingest", "--batch", "4", file, NULL);
        CHECK_MSG(rc == 1 && strstr(err_buf, "edges.tsv:3: column 1 (src)") &&
                  strstr(err_buf, "nothing was committed"), "rc %d %s", rc, err_buf);
        CHECK(db_version(db) == 0);
    }

    /* ---- stdin, GRAPHSNAP_DB, -d after the command, node without edges ---- */
    {
        static const char csv[] = "10,20,1\n11,20,2\n12,20,3\n";
        fresh_db(db);
        write_file(file2, csv, sizeof csv - 1);
        rc = run_in(file2, "ingest", "-", "--json", "-d", db, NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf), "stdin: rc %d %s %s", rc, out_buf, err_buf);
        CHECK(strstr(out_buf, "\"file\":\"<stdin>\"") != NULL);
        CHECK(json_u64(out_buf, "events") == 3 && json_u64(out_buf, "batches") == 1);
        {
            static const char *const keys[] = {"file", "lines", "events", "batches", "first_version",
                                               "last_version", "bad_lines", "first_bad_line",
                                               "first_bad_error", "bulk_load", "huge_heap", "seconds", "merge_seconds",
                                               "edges_per_second"};
            for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                char k[64];
                snprintf(k, sizeof k, "\"%s\":", keys[i]);
                CHECK_MSG(strstr(out_buf, k) != NULL, "ingest --json lacks %s", k);
            }
        }
        write_file(file2, "30 40\n30 40 -5 d\n30 zz\n", 23);
        rc = run_in(file2, "-d", db, "ingest", "-", NULL);
        CHECK_MSG(rc == 1 && strstr(err_buf, "<stdin>:3: column 2 (dst)"), "stdin bad: rc %d %s", rc, err_buf);
        setenv("GRAPHSNAP_DB", db, 1);
        rc = run("degree", "20", "--json", NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "degree") == 3, "env: rc %d %s", rc, out_buf);
        rc = run("stat", NULL);
        CHECK_MSG(rc == 0 && strstr(out_buf, "edge records    3"), "stat: %s", out_buf);
        rc = run("stat", "--json", NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "edge_records") == 3 &&
                  json_u64(out_buf, "version") == 1, "stat json: %s", out_buf);
        unsetenv("GRAPHSNAP_DB");
        rc = run("neighbors", "999", "-d", db, NULL);
        CHECK_MSG(rc == 0 && out_buf[0] == '\0', "no edges: rc %d '%s'", rc, out_buf);
        rc = run("neighbors", "999", "--json", "--db", db, NULL);
        CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "count") == 0 &&
                  strstr(out_buf, "\"neighbors\":[]"), "no edges json: %s", out_buf);
        rc = run("--db=", NULL);
        CHECK(rc == 2);
        rc = run("-d", db, "degree", "999", NULL);
        CHECK_MSG(rc == 0 && strcmp(out_buf, "0\n") == 0, "degree 999: '%s'", out_buf);
    }

    /* ---- lines of any length: a 300 KB comment, then a 300 KB bad field ---- */
    {
        size_t big = 300000, k;
        char *data = malloc(2 * big + 64);
        k = 0;
        data[k++] = '#';
        memset(data + k, 'c', big);
        k += big;
        k += (size_t)sprintf(data + k, "\n7 8 9\n1 ");
        memset(data + k, '9', big);
        k += big;
        data[k++] = '\n';
        fresh_db(db);
        write_file(file, data, k);
        rc = run("-d", db, "ingest", "--skip-bad", "--json", file, NULL);
        CHECK_MSG(rc == 0 && json_u64(out_buf, "events") == 1 && json_u64(out_buf, "first_bad_line") == 3,
                  "long lines: rc %d %s %s", rc, out_buf, err_buf);
        CHECK_MSG(strlen(err_buf) < 1000 && strstr(err_buf, "edges.tsv:3: column 2 (dst)"),
                  "long field message: %.300s", err_buf);
        free(data);
    }

    /* ---- a file is a bulk load, a pipe a stream ---- */
    {
        static const char *const how[] = {"--merge-fanout 8", "file", "pipe"};
        char cmd[2000], *txt = malloc(4096);
        size_t len = 0;
        uint64_t deltas, base, srcs[3][64], n[3];
        unsigned most;
        int k;
        CHECK(txt != NULL);
        for (i = 0; i < 300; i++) /* 100 batches of 3: levels fill at 8 */
            len += (size_t)snprintf(txt + len, 4096 - len, "%zu %zu %zu\n", i % 37, 1000 + i % 5, i);
        write_file(file, txt, len);
        free(txt);
        for (k = 0; k < 3; k++) {
            fresh_db(db);
            if (k == 0)
                rc = run("-d", db, "ingest", "--batch", "3", "--merge-fanout", "8", "--json", file, NULL);
            else if (k == 1)
                rc = run("-d", db, "ingest", "--batch", "3", "--json", file, NULL);
            else {
                snprintf(cmd, sizeof cmd, "cat '%s' | '%s' -d '%s' ingest --batch 3 --json - > '%s/stdout' 2> '%s/stderr'",
                         file, bin, db, tmp, tmp);
                rc = system(cmd);
                rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
                snprintf(cmd, sizeof cmd, "%s/stdout", tmp);
                slurp(cmd, out_buf, sizeof out_buf);
            }
            CHECK_MSG(rc == 0 && json_ok(out_buf) && json_u64(out_buf, "batches") == 100, "%s: rc %d %s %s", how[k],
                      rc, out_buf, err_buf);
            CHECK_MSG(strstr(out_buf, "\"merge_seconds\":") != NULL, "%s: no merge_seconds: %s", how[k], out_buf);
            if (!getenv("GSNAP_VALGRIND")) /* ingest ran itself again on huge pages */
                CHECK_MSG(strstr(out_buf, "\"huge_heap\":true,") != NULL, "%s: %s", how[k], out_buf);
            /* only a regular file without --merge-fanout is a bulk load */
            CHECK_MSG(strstr(out_buf, k == 1 ? "\"bulk_load\":true," : "\"bulk_load\":false,") != NULL, "%s: %s",
                      how[k], out_buf);
            most = db_shape(db, &deltas, &base);
            if (k == 0)
                CHECK_MSG(most >= GSNAP_MERGE_FANOUT, "--merge-fanout 8 left at most %u runs on a level", most);
            else
                CHECK_MSG(most < GSNAP_MERGE_FANOUT && deltas < base, "%s: %u runs on a level, deltas %llu, base %llu",
                          how[k], most, (unsigned long long)deltas, (unsigned long long)base);
            n[k] = db_in_nbrs(db, 1003, srcs[k], 64);
            CHECK_MSG(n[k] == 60 && (k == 0 || memcmp(srcs[k], srcs[0], 60 * sizeof srcs[0][0]) == 0), "%s: %llu in-neighbours",
                      how[k], (unsigned long long)n[k]);
        }
        /* off: no exec, 4 KiB pages; another tunable is kept beside ours */
        fresh_db(db);
        setenv("GRAPHSNAP_HUGE_HEAP", "0", 1);
        rc = run("-d", db, "ingest", "--json", file, NULL);
        CHECK_MSG(rc == 0 && strstr(out_buf, "\"huge_heap\":false,"), "GRAPHSNAP_HUGE_HEAP=0: %s", out_buf);
        unsetenv("GRAPHSNAP_HUGE_HEAP");
        fresh_db(db);
        setenv("GLIBC_TUNABLES", "glibc.malloc.check=0", 1);
        rc = run("-d", db, "ingest", "--json", file, NULL);
        if (!getenv("GSNAP_VALGRIND"))
            CHECK_MSG(rc == 0 && strstr(out_buf, "\"huge_heap\":true,"), "another tunable: %s", out_buf);
        unsetenv("GLIBC_TUNABLES");
        /* a bad line stops the load: what was committed is merged to the
         * default's shape all the same */
        {
            FILE *f = fopen(file, "a");
            CHECK(f != NULL);
            if (f) {
                fputs("1 2 x\n", f);
                fclose(f);
            }
        }
        fresh_db(db);
        rc = run("-d", db, "ingest", "--batch", "3", file, NULL);
        CHECK_MSG(rc == 1 && strstr(err_buf, "edges.tsv:301") && strstr(err_buf, "100 batches"), "bad line: rc %d %s",
                  rc, err_buf);
        most = db_shape(db, &deltas, &base);
        CHECK_MSG(most < GSNAP_MERGE_FANOUT && deltas < base, "after a bad line: %u runs on a level, deltas %llu, base %llu",
                  most, (unsigned long long)deltas, (unsigned long long)base);
    }

    /* ---- a direction the database does not keep: exit 1, clear message ---- */
    {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", db);
        CHECK(system(cmd) == 0);
        CHECK(run("init", db, "--keep", "in", "--nosync", NULL) == 0);
        write_file(file, "1 2\n", 4);
        CHECK(run("-d", db, "ingest", file, NULL) == 0);
        rc = run("-d", db, "neighbors", "1", "--out", NULL);
        CHECK_MSG(rc == 1 && out_buf[0] == '\0' && strstr(err_buf, "out"), "keep in, --out: rc %d %s", rc, err_buf);
        rc = run("-d", db, "stat", "--json", NULL);
        CHECK_MSG(rc == 0 && strstr(out_buf, "\"keep\":\"in\""), "keep: %s", out_buf);
    }

    test_rmdir(tmp);
    free(tmp);
    TEST_DONE();
}
