/* tests/test_features_cli.c -- `graphsnap attr` through the built binary
 * ($BUILD/graphsnap): create (idempotent, shape clash, bad dtype/dim),
 * ingest of TSV/CSV (values read back exactly; f16 rounding to nearest even;
 * a bad line (wrong number of values, bad number, bad node) fails with
 * file:line and commits nothing of its batch, earlier batches stay), .npy
 * with --nodes and --t (truncated data refused), get at (T, V) in text and
 * JSON, list, unknown table, and `check` counting attribute problems (0);
 * then one test per defect found by the hostile-input campaign. */
#include "test.h"

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
/* An .npy (version 1) whose header dict is `dict` verbatim. */
static void npy_dict(const char *path, const char *dict, const void *data, size_t bytes)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "%s", dict);
    int pad = 64 - (10 + n + 1) % 64;
    memset(hdr + n, ' ', (size_t)pad);
    hdr[n + pad] = '\n';
    size_t hl = (size_t)n + (size_t)pad + 1;
    FILE *f = fopen(path, "wb");
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    if (!f || fwrite(pre, 1, 10, f) != 10 || fwrite(hdr, 1, hl, f) != hl || fwrite(data, 1, bytes, f) != bytes) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static void npy(const char *path, const char *descr, const char *shape, const void *data, size_t bytes)
{
    char dict[256];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    npy_dict(path, dict, data, bytes);
}

/* Write `text` to path, ingest it into table (exit status returned). */
static int ingest_text(const char *db, const char *table, const char *path, const char *text)
{
    write_file(path, text, strlen(text));
    return run("attr", "ingest", table, path, "-d", db, NULL);
}

/* get of one node: out_buf must be `want` exactly. */
static void expect_row(const char *db, const char *table, const char *node, const char *want, int line)
{
    int rc = run("attr", "get", table, node, "-d", db, NULL);
    if (rc != 0 || strcmp(out_buf, want) != 0) {
        fprintf(stderr, "%s:%d: get %s %s: rc %d, got [%s], want [%s]\n", __FILE__, line, table, node, rc,
                out_buf, want);
        test_failures++;
    }
}
#define EXPECT_ROW(db, table, node, want) expect_row(db, table, node, want, __LINE__)

/* Lines an ingest into `table` must refuse (exit 1) with a message holding
 * `want`, leaving `node`'s row as it was (none). */
typedef struct { const char *line, *want; } bad_line;
static void expect_refused(const char *db, const char *table, const char *path, const char *node,
                           const bad_line *bad, size_t n)
{
    char none[64];
    snprintf(none, sizeof none, "%s\t-\n", node);
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(ingest_text(db, table, path, bad[i].line) == 1, "case %zu", i);
        CHECK_MSG(strstr(err_buf, bad[i].want) != NULL, "case %zu: [%s]", i, err_buf);
        EXPECT_ROW(db, table, node, none);
    }
}
/* Defect 9: i64 values are integers, parsed exactly (not through double), the
 * whole i64 range accepted, overflow and non-integers refused with
 * file:line: field N. */
static void test_i64_exact(const char *db, const char *path)
{
    CHECK(run("attr", "create", "ti", "--dtype", "i64", "--dim", "2", "-d", db, NULL) == 0);
    CHECK(ingest_text(db, "ti", path, "1 0 9007199254740993 -9223372036854775808\n"
                                        "2 0 9223372036854775807 -9007199254740993\n") == 0);
    EXPECT_ROW(db, "ti", "1", "1\t9007199254740993\t-9223372036854775808\n");
    EXPECT_ROW(db, "ti", "2", "2\t9223372036854775807\t-9007199254740993\n");
    static const bad_line bad[] = {
        {"3 0 9223372036854775808 0\n", "i.tsv:1: field 3: '9223372036854775808' is out of the i64 range"},
        {"3 0 0 -9223372036854775809\n", "i.tsv:1: field 4: '-9223372036854775809' is out of the i64 range"},
        {"3 0 99999999999999999999999 0\n", "i.tsv:1: field 3: '99999999999999999999999' is out of the i64"},
        {"3 0 1.5 0\n", "i.tsv:1: field 3: '1.5' is not an integer"},
        {"3 0 5.0 0\n", "i.tsv:1: field 3: '5.0' is not an integer"},
        {"3 0 0 1e3\n", "i.tsv:1: field 4: '1e3' is not an integer"},
        {"3 0 0x10 0\n", "i.tsv:1: field 3: '0x10' is not an integer"},
        {"3 0 +7 0\n", "i.tsv:1: field 3: '+7' is not an integer"},
        {"3 0 - 0\n", "i.tsv:1: field 3: '-' is not an integer"},
    };
    expect_refused(db, "ti", path, "3", bad, sizeof bad / sizeof bad[0]);
}

/* Defect 10: an empty field (two commas, a comma at either end) is an error
 * naming file, line and field; blanks around commas and runs of blanks are
 * one separator. */
static void test_empty_field(const char *db, const char *path)
{
    CHECK(run("attr", "create", "tf", "--dtype", "f32", "--dim", "2", "-d", db, NULL) == 0);
    static const bad_line bad[] = {
        {"4,0,,1,2\n", "e.csv:1: field 3: empty field"},
        {",4,0,1,2\n", "e.csv:1: field 1: empty field"},
        {"4,0,1,2,\n", "e.csv:1: field 5: empty field"},
        {"4,0,1,2, \r\n", "e.csv:1: field 5: empty field"},
        {"4 , 0 ,, 1 , 2\n", "e.csv:1: field 3: empty field"},
        {"4,,0,1,2\n", "e.csv:1: field 2: empty field"},
        {"# c\n4\t0\t1\t,\t,2\n", "e.csv:2: field 4: empty field"},
    };
    expect_refused(db, "tf", path, "4", bad, sizeof bad / sizeof bad[0]);
    /* an option of another action is an error, not ignored (found by a
     * hostile-input campaign: 'create --batch', 'get --t', and '--t' with
     * text input, whose lines carry their own times) */
    CHECK(run("attr", "create", "tf", "--dtype", "f32", "--dim", "2", "--batch", "5", "-d", db, NULL) == 2 &&
          strstr(err_buf, "--batch does not apply to 'attr create'"));
    CHECK(run("attr", "get", "tf", "4", "--t", "3", "-d", db, NULL) == 2);
    CHECK(run("attr", "list", "--at", "3", "-d", db, NULL) == 2);
    CHECK(ingest_text(db, "tf", path, "4 0 1 2\n") == 0);
    CHECK(run("attr", "ingest", "tf", path, "--t", "5", "-d", db, NULL) == 2 && strstr(err_buf, "--t applies to .npy"));
    /* a byte order mark and '%' comments, as edge text has them (they were
     * 'not a node id') */
    CHECK(ingest_text(db, "tf", path, "\xEF\xBB\xBF% a comment\n7 0 1 2\n") == 0);
    EXPECT_ROW(db, "tf", "7", "7\t1\t2\n");
    /* accepted: blanks around commas, runs of blanks, trailing blanks, CRLF */
    CHECK(ingest_text(db, "tf", path, "4 , 0 ,1,2 \r\n5\t 0   3\t\t4\t\n  6,0,5,6\n") == 0);
    EXPECT_ROW(db, "tf", "4", "4\t1\t2\n");
    EXPECT_ROW(db, "tf", "5", "5\t3\t4\n");
    EXPECT_ROW(db, "tf", "6", "6\t5\t6\n");
}

/* Defect 11: the .npy header dict is parsed by key, in any order; Fortran
 * order is refused wherever the key stands (unless the bytes are the same as
 * C order: one column); a missing, repeated or unknown key is refused. */
static void test_npy_header_keys(const char *db, const char *path)
{
    float xv[6] = {1, 2, 3, 4, 5, 6};
    CHECK(run("attr", "create", "f3", "--dtype", "f32", "--dim", "3", "-d", db, NULL) == 0);
    static const struct { const char *dict, *want; } bad[] = {
        {"{'descr': '<f4', 'shape': (2, 3), 'fortran_order': True, }", "Fortran"},
        {"{'shape': (2, 3), 'fortran_order': True, 'descr': '<f4'}", "Fortran"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", "Fortran"},
        {"{'descr': '<f4', 'shape': (2, 3), }", "fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'fortran_order': True}", "fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", "extra"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}", "fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "header"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        npy_dict(path, bad[i].dict, xv, sizeof xv);
        CHECK_MSG(run("attr", "ingest", "f3", path, "-d", db, NULL) == 1, "case %zu", i);
        CHECK_MSG(strstr(err_buf, bad[i].want) != NULL && strstr(err_buf, ".npy") != NULL, "case %zu: [%s]", i,
                  err_buf);
        EXPECT_ROW(db, "f3", "0", "0\t-\n");
    }
    /* keys in another order, double quotes: read as C order */
    npy_dict(path, "{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}", xv, sizeof xv);
    CHECK(run("attr", "ingest", "f3", path, "-d", db, NULL) == 0);
    EXPECT_ROW(db, "f3", "0", "0\t1\t2\t3\n");
    EXPECT_ROW(db, "f3", "1", "1\t4\t5\t6\n");
    /* one column: Fortran order is the same bytes */
    CHECK(run("attr", "create", "f1", "--dtype", "f32", "--dim", "1", "-d", db, NULL) == 0);
    npy_dict(path, "{'shape': (3,), 'fortran_order': True, 'descr': '<f4'}", xv, 3 * sizeof(float));
    CHECK(run("attr", "ingest", "f1", path, "-d", db, NULL) == 0);
    EXPECT_ROW(db, "f1", "2", "2\t3\n");
    /* a NUL byte in the header hid the text after it from the "nothing after
     * the dict" rule (found in review) */
    static const char d1[] = "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}";
    npy_dict(path, d1, xv, 3 * sizeof(float));
    FILE *pf = fopen(path, "r+b");
    CHECK(pf && fseek(pf, 10 + (long)strlen(d1), SEEK_SET) == 0 && fwrite("\0junk", 1, 5, pf) == 5 && fclose(pf) == 0);
    CHECK(run("attr", "ingest", "f1", path, "-d", db, NULL) == 1 && strstr(err_buf, "NUL byte") != NULL);
}

/* Defect 12: input without a row (empty, comments and blank lines only, an
 * .npy of 0 rows) is an error, like edge ingest's "no edges". */
static void test_no_rows(const char *db, const char *path, const char *npath)
{
    static const char *const texts[] = {"", "# nothing\n", "\n  \n# a\n\t\n"};
    float one = 1;
    CHECK(run("attr", "create", "tn", "--dtype", "f32", "--dim", "1", "-d", db, NULL) == 0);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        CHECK_MSG(ingest_text(db, "tn", path, texts[i]) == 1, "case %zu", i);
        CHECK_MSG(strstr(err_buf, "n.tsv: no rows") != NULL, "case %zu: [%s]", i, err_buf);
        CHECK_MSG(out_buf[0] == 0, "case %zu: [%s]", i, out_buf);
    }
    npy(npath, "<f4", "(0,)", &one, 0);
    CHECK(run("attr", "ingest", "tn", npath, "-d", db, NULL) == 1);
    CHECK_MSG(strstr(err_buf, "z.npy: no rows") != NULL, "[%s]", err_buf);
    CHECK(run("attr", "list", "-d", db, NULL) == 0);
    CHECK_MSG(strstr(out_buf, "tn\tf32\t1\t0\t") != NULL, "[%s]", out_buf);
}

/* Lower-priority findings: float values are decimal numbers only (no hex,
 * inf, nan), correctly rounded to the dtype (f32 not through double),
 * magnitudes too small for the dtype round to subnormals or zero alike
 * (1e-40 and 1e-320 in f32), too large ones to infinity as for f16; a time
 * has no '+'. */
static void test_float_syntax(const char *db, const char *path)
{
    CHECK(run("attr", "create", "tx", "--dtype", "f32", "--dim", "1", "-d", db, NULL) == 0);
    static const char *const bad[] = {"0x10", "inf", "-inf", "nan", "NAN", "infinity", "1e", "1e+", ".", "-", "+",
                                      "1.2.3", "--1", "1,5e3x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[64], want[96];
        snprintf(line, sizeof line, "9 0 %s\n", bad[i]);
        snprintf(want, sizeof want, "x.tsv:1: field 3: '%s' is not a f32 value", bad[i]);
        if (strchr(bad[i], ','))
            snprintf(want, sizeof want, "x.tsv:1: ");
        CHECK_MSG(ingest_text(db, "tx", path, line) == 1, "case %s", bad[i]);
        CHECK_MSG(strstr(err_buf, want) != NULL, "case %s: [%s]", bad[i], err_buf);
        EXPECT_ROW(db, "tx", "9", "9\t-\n");
    }
    CHECK(ingest_text(db, "tx", path, "9 +5 1\n") == 1);
    CHECK_MSG(strstr(err_buf, "x.tsv:1: field 2: '+5'") != NULL, "[%s]", err_buf);
    CHECK(ingest_text(db, "tx", path, "10 0 1e-40\n11 0 1e-320\n12 0 -1e-400\n13 0 1e39\n14 0 -1e400\n"
                                      "15 0 1.0000000596046447753906251\n16 0 +2.5E+1\n17 0 .5\n18 0 3.\n") == 0);
    EXPECT_ROW(db, "tx", "10", "10\t9.9999461e-41\n");
    EXPECT_ROW(db, "tx", "11", "11\t0\n");
    EXPECT_ROW(db, "tx", "12", "12\t-0\n");
    EXPECT_ROW(db, "tx", "13", "13\tinf\n");
    EXPECT_ROW(db, "tx", "14", "14\t-inf\n");
    EXPECT_ROW(db, "tx", "15", "15\t1.00000012\n"); /* above the midpoint: up, not a tie to even */
    EXPECT_ROW(db, "tx", "16", "16\t25\n");
    EXPECT_ROW(db, "tx", "17", "17\t0.5\n");
    EXPECT_ROW(db, "tx", "18", "18\t3\n");
    /* f16: below half the smallest subnormal -> 0, as in f32 */
    CHECK(run("attr", "create", "th", "--dtype", "f16", "--dim", "2", "-d", db, NULL) == 0);
    CHECK(ingest_text(db, "th", path, "1 0 1e-8 1e-320\n") == 0);
    EXPECT_ROW(db, "th", "1", "1\t0\t0\n");
}

int main(void)
{
    const char *b = getenv("BUILD");
    char db[600], f1[600], f2[600], nx[600], nn[600];
    struct stat sb;
    snprintf(bin, sizeof bin, "%s/graphsnap", b && *b ? b : "build");
    if (stat(bin, &sb) != 0)
        SKIP("no CLI binary at %s (build it first)", bin);
    unsetenv("GRAPHSNAP_DB");
    tmp = test_tmpdir("attrcli");
    snprintf(db, sizeof db, "%s/db", tmp);
    snprintf(f1, sizeof f1, "%s/a.tsv", tmp);
    snprintf(f2, sizeof f2, "%s/b.csv", tmp);
    snprintf(nx, sizeof nx, "%s/x.npy", tmp);
    snprintf(nn, sizeof nn, "%s/n.npy", tmp);
    CHECK(run("init", "-d", db, NULL) == 0);
    CHECK(run("attr", "create", "feat", "--dtype", "f16", "--dim", "3", "-d", db, NULL) == 0);
    CHECK(run("attr", "create", "feat", "--dtype", "f16", "--dim", "3", "-d", db, NULL) == 0);
    CHECK(run("attr", "create", "feat", "--dtype", "f32", "--dim", "3", "-d", db, NULL) == 1);
    CHECK(strstr(err_buf, "exists as f16 x 3") != NULL);
    CHECK(run("attr", "create", "x", "--dtype", "f8", "--dim", "3", "-d", db, NULL) == 2);
    CHECK(strstr(err_buf, "--dtype") != NULL);
    CHECK(run("attr", "create", "x", "--dtype", "f32", "--dim", "0", "-d", db, NULL) == 2);
    CHECK(run("attr", "create", "x", "--dtype", "f32", "-d", db, NULL) == 2);
    CHECK(run("attr", "create", "bad/name", "--dtype", "f32", "--dim", "2", "-d", db, NULL) == 2);
    CHECK(run("attr", "create", "emb", "--dtype", "f32", "--dim", "2", "-d", db, NULL) == 0);

    /* f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even -> 1;
     * 1 + 3*2^-11 ties between 1+2^-10 and 1+2^-9: even -> 1.001953125 */
    const char *t1 = "# node t v1 v2 v3\n1\t0\t1.00048828125\t1.00146484375\t-2.5\n\n2,5,0.5,65504,-0\n";
    write_file(f1, t1, strlen(t1));
    CHECK(run("attr", "ingest", "feat", f1, "-d", db, NULL) == 0);
    CHECK(run("attr", "get", "feat", "1", "2", "3", "-d", db, NULL) == 0);
    CHECK_MSG(strcmp(out_buf, "1\t1\t1.00195312\t-2.5\n2\t0.5\t65504\t-0\n3\t-\n") == 0, "got [%s]", out_buf);
    /* at time 4 node 2 (t = 5) has no row yet; version 0 sees nothing */
    CHECK(run("attr", "get", "feat", "2", "--at", "4", "-d", db, NULL) == 0);
    CHECK(strcmp(out_buf, "2\t-\n") == 0);
    CHECK(run("attr", "get", "feat", "1", "--version", "0", "-d", db, NULL) == 0);
    CHECK(strcmp(out_buf, "1\t-\n") == 0);
    CHECK(run("attr", "get", "feat", "1", "--version", "9", "-d", db, NULL) == 2);
    CHECK(run("attr", "get", "feat", "1", "--json", "-d", db, NULL) == 0);
    CHECK_MSG(strstr(out_buf, "{\"node\":1,\"found\":true,\"values\":[1,1.00195312,-2.5]}") != NULL, "[%s]", out_buf);
    CHECK(js_value(js_ws(out_buf), 0) != NULL);

    /* bad lines: the second batch (--batch 2) fails, the first stays */
    const char *bad[] = {
        "10 0 1 2\n11 0 3 4\n12 0 5\n",          /* too few values */
        "10 0 1 2\n11 0 3 4\n12 0 5 6 7\n",      /* too many */
        "10 0 1 2\n11 0 3 4\n12 0 5 abc\n",      /* not a number */
        "10 0 1 2\n11 0 3 4\n-12 0 5 6\n",       /* bad node */
        "10 0 1 2\n11 0 3 4\n12 x 5 6\n",        /* bad time */
    };
    const char *want[] = {"b.csv:3: 1 values, table 'emb0' has dim 2", "b.csv:3: more than 2 values",
                          "b.csv:3: field 4: 'abc'", "b.csv:3: field 1: '-12'", "b.csv:3: field 2: 'x'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "emb%zu", i);
        CHECK(run("attr", "create", name, "--dtype", "f32", "--dim", "2", "-d", db, NULL) == 0);
        write_file(f2, bad[i], strlen(bad[i]));
        CHECK(run("attr", "ingest", name, f2, "--batch", "2", "-d", db, NULL) == 1);
        CHECK_MSG(strstr(err_buf, want[i]) != NULL, "case %zu: [%s]", i, err_buf);
        CHECK(run("attr", "get", name, "10", "11", "12", "-d", db, NULL) == 0);
        CHECK_MSG(strcmp(out_buf, "10\t1\t2\n11\t3\t4\n12\t-\n") == 0, "case %zu: [%s]", i, out_buf);
    }
    CHECK(run("attr", "ingest", "nope", f2, "-d", db, NULL) == 3);
    CHECK(strstr(err_buf, "no attribute table 'nope'") != NULL);

    /* .npy: rows for node ids from --nodes at time 7 */
    float xv[6] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f};
    int64_t ids[3] = {100, 7, 42};
    npy(nx, "<f4", "(3, 2)", xv, sizeof xv);
    npy(nn, "<i8", "(3,)", ids, sizeof ids);
    CHECK(run("attr", "ingest", "emb", nx, "--nodes", nn, "--t", "7", "-d", db, NULL) == 0);
    CHECK(run("attr", "get", "emb", "7", "42", "100", "-d", db, NULL) == 0);
    CHECK_MSG(strcmp(out_buf, "7\t3.5\t4.5\n42\t5.5\t6.5\n100\t1.5\t2.5\n") == 0, "[%s]", out_buf);
    CHECK(run("attr", "get", "emb", "7", "--at", "6", "-d", db, NULL) == 0);
    CHECK(strcmp(out_buf, "7\t-\n") == 0);
    npy(nx, "<f4", "(4, 2)", xv, sizeof xv); /* announces 8, holds 6 */
    CHECK(run("attr", "ingest", "emb", nx, "-d", db, NULL) == 1);
    CHECK(strstr(err_buf, "truncated") != NULL);
    npy(nx, "<f4", "(2, 3)", xv, sizeof xv);
    CHECK(run("attr", "ingest", "emb", nx, "-d", db, NULL) == 1);
    CHECK(strstr(err_buf, "rows of 3 values, table 'emb' has dim 2") != NULL);

    CHECK(run("attr", "list", "-d", db, NULL) == 0);
    CHECK(strncmp(out_buf, "emb\tf32\t2\t3\t", 12) == 0);
    CHECK(run("attr", "list", "--json", "-d", db, NULL) == 0);
    CHECK(js_value(js_ws(out_buf), 0) != NULL);
    CHECK(strstr(out_buf, "\"name\":\"feat\",\"dtype\":\"f16\",\"dim\":3,\"updates\":2") != NULL);
    CHECK(run("check", "-d", db, NULL) == 0);
    CHECK(strstr(out_buf, "0 problem(s)") != NULL);
    CHECK(run("attr", "frob", "-d", db, NULL) == 2);

    char ip[600], ep[600], fp[600], np0[600], xp[600];
    snprintf(ip, sizeof ip, "%s/i.tsv", tmp);
    snprintf(ep, sizeof ep, "%s/e.csv", tmp);
    snprintf(fp, sizeof fp, "%s/f.npy", tmp);
    snprintf(np0, sizeof np0, "%s/z.npy", tmp);
    snprintf(xp, sizeof xp, "%s/x.tsv", tmp);
    test_i64_exact(db, ip);
    test_empty_field(db, ep);
    test_npy_header_keys(db, fp);
    snprintf(f1, sizeof f1, "%s/n.tsv", tmp);
    test_no_rows(db, f1, np0);
    test_float_syntax(db, xp);
    test_rmdir(tmp);
    free(tmp);
    TEST_DONE();
}
