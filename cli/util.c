/*
 * cli/util.c -- shared helpers of the graphsnap CLI (see cli/cli.h).
 */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *cli_db_dir = NULL;
const char *cli_cmd = "";

/* ---- messages ------------------------------------------------------------- */

static void vmsg(const char *fmt, va_list ap)
{
    if (cli_cmd && *cli_cmd)
        fprintf(stderr, "graphsnap: %s: ", cli_cmd);
    else
        fputs("graphsnap: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

int cli_usage_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    if (cli_cmd && *cli_cmd)
        fprintf(stderr, "Try 'graphsnap %s --help'.\n", cli_cmd);
    else
        fputs("Try 'graphsnap --help'.\n", stderr);
    return CLI_USAGE;
}

int cli_exit_code(int rc)
{
    switch (rc) {
    case GSNAP_OK:
        return CLI_OK;
    case GSNAP_NOTFOUND:
        return CLI_NOTFOUND;
    case GSNAP_EINVAL:
    case GSNAP_ERANGE:
        return CLI_USAGE;
    default:
        return CLI_ERR;
    }
}

int cli_lib_err(gsnap_db *db, int rc, const char *what)
{
    const char *detail = db ? gsnap_db_errmsg(db) : NULL;
    if (!detail || !*detail)
        detail = gsnap_strerror(rc);
    if (what && *what)
        cli_err("%s: %s", what, detail);
    else
        cli_err("%s", detail);
    return cli_exit_code(rc);
}

/* ---- options -------------------------------------------------------------- */

enum { OPT_HELP = 'h', OPT_DB = 'd', OPT_VERSION = 'V', OPT_READ_ONLY = 0x1ff };

int cli_read_only;

static void opts_setup(cli_opts *o)
{
    size_t n = 0;
    const struct option *lo;
    o->all[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    o->all[n++] = (struct option){"db", required_argument, NULL, OPT_DB};
    o->all[n++] = (struct option){"read-only", no_argument, NULL, OPT_READ_ONLY};
    for (lo = o->longopts; lo && lo->name && n + 1 < sizeof o->all / sizeof o->all[0]; lo++)
        o->all[n++] = *lo;
    o->all[n] = (struct option){NULL, 0, NULL, 0};
    /* ':' first: a missing value returns ':' instead of printing */
    snprintf(o->shorts, sizeof o->shorts, ":hVd:%s", o->shortopts ? o->shortopts : "");
}

/* The option text as the user typed it, for messages: "--name" of a long
 * option (without "=value"), else "-c" of a short one. */
static const char *opt_text(int argc, char **argv, char *buf, size_t cap)
{
    const char *a = (optind - 1 >= 1 && optind - 1 < argc) ? argv[optind - 1] : NULL;
    if (a && a[0] == '-' && a[1] == '-') {
        const char *eq = strchr(a, '=');
        int n = eq ? (int)(eq - a) : (int)strlen(a);
        snprintf(buf, cap, "%.*s", n, a);
    } else if (optopt > 0 && optopt < 128) {
        snprintf(buf, cap, "-%c", optopt);
    } else {
        snprintf(buf, cap, "%s", a ? a : "?");
    }
    return buf;
}

int cli_getopt(cli_opts *o, int argc, char **argv)
{
    int c;
    char buf[128];
    if (!o->started) {
        opts_setup(o);
        o->started = 1;
        optind = 0; /* glibc: full re-initialisation */
    }
    opterr = 0;
    for (;;) {
        optopt = 0;
        c = getopt_long(argc, argv, o->shorts, o->all, NULL);
        if (c == -1)
            return CLI_OPT_END;
        if (c == OPT_HELP) {
            fputs(o->usage ? o->usage : "", stdout);
            return CLI_OPT_HELP;
        }
        if (c == OPT_DB) {
            cli_db_dir = optarg;
            continue;
        }
        if (c == OPT_READ_ONLY) {
            cli_read_only = 1;
            continue;
        }
        if (c == OPT_VERSION) { /* -V after the command, as before it */
            printf("graphsnap %s (libgraphsnap %s)\n", GSNAP_VERSION_STRING, gsnap_version());
            return CLI_OPT_HELP;
        }
        if (c == '?') {
            cli_usage_err("unknown option '%s'", opt_text(argc, argv, buf, sizeof buf));
            return CLI_OPT_ERROR;
        }
        if (c == ':') {
            cli_usage_err("option '%s' needs a value", opt_text(argc, argv, buf, sizeof buf));
            return CLI_OPT_ERROR;
        }
        return c;
    }
}

int cli_positionals(int argc, char **argv, int min, int max, const char *what)
{
    int n = argc - optind;
    if (n < min)
        return cli_usage_err("missing %s", what);
    if (n > max)
        return cli_usage_err("unexpected argument '%s'", argv[optind + max]);
    return 0;
}

/* ---- numbers -------------------------------------------------------------- */

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int cli_parse_u64(const char *param, const char *text, uint64_t *out)
{
    unsigned long long v;
    if (text[0] == '-' && all_digits(text + 1))
        return cli_usage_err("%s: '%s' is negative; it must be an unsigned integer", param, text);
    if (!all_digits(text))
        return cli_usage_err("%s: '%s' is not an unsigned integer", param, text);
    errno = 0;
    v = strtoull(text, NULL, 10);
    if (errno == ERANGE)
        return cli_usage_err("%s: '%s' is larger than %llu", param, text, (unsigned long long)UINT64_MAX);
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_u64_range(const char *param, const char *text, uint64_t min, uint64_t max,
                        uint64_t *out)
{
    uint64_t v;
    int rc = cli_parse_u64(param, text, &v);
    if (rc)
        return rc;
    if (v < min || v > max)
        return cli_usage_err("%s: %s is out of range [%llu, %llu]", param, text,
                             (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

int cli_parse_list(const char *param, const char *text, uint64_t min, uint64_t max, int minus_one,
                   unsigned maxn, int64_t *out, unsigned *n)
{
    unsigned k = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return cli_usage_err("%s: '%s' has an empty item (item %u)", param, text, k + 1);
        if (k >= maxn)
            return cli_usage_err("%s: at most %u values", param, maxn);
        char *item = strndup(p, len);
        if (!item)
            return cli_usage_err("%s: out of memory", param);
        int rc = 0;
        if (minus_one && strcmp(item, "-1") == 0) {
            out[k++] = -1;
        } else if (minus_one && item[0] == '-') {
            rc = cli_usage_err("%s: item %u of '%s' is neither a positive integer nor -1", param, k + 1, text);
        } else {
            uint64_t v;
            rc = cli_parse_u64_range(param, item, min, max, &v);
            if (!rc)
                out[k++] = (int64_t)v;
        }
        free(item);
        if (rc)
            return CLI_USAGE;
        if (!comma)
            break;
        p = comma + 1;
    }
    *n = k;
    return 0;
}

int cli_parse_i64(const char *param, const char *text, int64_t *out)
{
    long long v;
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (!all_digits(digits))
        return cli_usage_err("%s: '%s' is not an integer", param, text);
    errno = 0;
    v = strtoll(text, NULL, 10);
    if (errno == ERANGE)
        return cli_usage_err("%s: '%s' is out of the signed 64-bit range", param, text);
    *out = (int64_t)v;
    return 0;
}

int cli_parse_double(const char *param, const char *text, double *out)
{
    char *end = NULL;
    double v;
    errno = 0;
    if (!*text || text[0] == ' ' || text[0] == '\t')
        return cli_usage_err("%s: '%s' is not a number", param, text);
    v = strtod(text, &end);
    if (!end || *end || end == text)
        return cli_usage_err("%s: '%s' is not a number", param, text);
    if (errno == ERANGE || !isfinite(v))
        return cli_usage_err("%s: '%s' is out of range", param, text);
    *out = v;
    return 0;
}

int cli_parse_size(const char *param, const char *text, uint64_t *out)
{
    static const char *const sfx[] = {"k", "m", "g", "t"};
    char num[32];
    size_t n = 0, i;
    uint64_t v, mul = 1;
    const char *s;
    while (text[n] >= '0' && text[n] <= '9')
        n++;
    if (n == 0 || n >= sizeof num)
        return cli_usage_err("%s: '%s' is not a size (bytes, or with K/M/G/T)", param, text);
    memcpy(num, text, n);
    num[n] = '\0';
    s = text + n;
    if (*s) {
        char l = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
        int found = 0;
        for (i = 0; i < 4; i++) {
            if (l == sfx[i][0]) {
                mul = 1ull << (10 * (i + 1));
                found = 1;
            }
        }
        if (l == 'b' && s[1] == '\0')
            found = 1; /* "123B" */
        else if (found && !(s[1] == '\0' || strcmp(s + 1, "B") == 0 || strcmp(s + 1, "b") == 0 ||
                            strcmp(s + 1, "iB") == 0 || strcmp(s + 1, "ib") == 0))
            found = 0;
        if (!found)
            return cli_usage_err("%s: '%s' is not a size (bytes, or with K/M/G/T)", param, text);
    }
    if (cli_parse_u64(param, num, &v))
        return CLI_USAGE;
    if (mul > 1 && v > UINT64_MAX / mul)
        return cli_usage_err("%s: '%s' is too large", param, text);
    *out = v * mul;
    return 0;
}

int cli_parse_time(const char *param, const char *text, int64_t *out)
{
    if (strcmp(text, "now") == 0) {
        *out = GSNAP_TIME_MAX;
        return 0;
    }
    return cli_parse_i64(param, text, out);
}

int cli_parse_version(const char *param, const char *text, uint64_t *out)
{
    if (strcmp(text, "latest") == 0) {
        *out = GSNAP_VERSION_LATEST;
        return 0;
    }
    return cli_parse_u64(param, text, out);
}

/* ---- JSON ----------------------------------------------------------------- */

void cli_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

/* ---- database ------------------------------------------------------------- */

int cli_open_db(const gsnap_db_options *opts, int mode, gsnap_db **out)
{
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    int rc;
    *out = NULL;
    if (!cli_db_dir || !*cli_db_dir)
        return cli_usage_err("no database given: use -d DIR, --db DIR or set GRAPHSNAP_DB");
    if (opts)
        o = *opts;
    o.create = 0;
    o.read_only = mode == CLI_DB_READ;
    if (cli_read_only) {
        /* a backup or read-only media: no lock file is created or used */
        if (mode != CLI_DB_READ)
            return cli_usage_err("--read-only: '%s' writes to the database; --read-only is for the read commands",
                                 cli_cmd);
        o.no_lock = 1;
    }
    rc = gsnap_db_open(cli_db_dir, &o, out);
    if (rc != GSNAP_OK) {
        const char *detail = gsnap_last_open_error();
        fprintf(stderr, "graphsnap: cannot open database '%s': %s\n", cli_db_dir,
                rc == GSNAP_NOTFOUND ? "no such database (create it with 'graphsnap init')"
                : detail && *detail ? detail
                                    : gsnap_strerror(rc));
        *out = NULL;
        return rc == GSNAP_NOTFOUND ? CLI_NOTFOUND : CLI_ERR;
    }
    return 0;
}
