/*
 * ingest/ingest_text.c -- the text edge-list parser (one line at a time;
 * the streaming ingest that uses it is ingest_stream.c).
 *
 * Line grammar (strict; see include/graphsnap.h):
 *   line    := ws* [ field sep field [ sep field [ sep field ] ] ] ws* [\r] [\n]
 *   sep     := ws+ | ws* ',' ws*          ws := ' ' | '\t'
 *   field 1 src: unsigned 64-bit decimal   field 2 dst: the same
 *   field 3 t:   signed 64-bit decimal, INT64_MAX excluded (reserved: "now");
 *                absent: the line number
 *   field 4 op:  add|a|+|1  or  del|delete|d|-|0  (letters in any case)
 * Lines whose first non-blank byte is '#' or '%' and blank lines are skipped.
 * Anything after the 4th field is trailing garbage. Two commas in a row (or a
 * comma at either end) make an empty field, which is an error. Bytes that are
 * not text (NUL, other control bytes, DEL) are reported as binary data.
 *
 * Speed: a fast path handles the common shapes ("src dst" and "src dst t" with
 * one tab, one comma or spaces between, numbers short enough that they cannot
 * overflow) in one pass, converting digits as it scans; any other line goes
 * to the general tokenizer, which is the reference for what is accepted and
 * words every error. Neither uses strtoull or the locale; messages are
 * formatted only on the error path.
 */
#include "common/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define NCOLS 4
static const char *const col_names[NCOLS + 1] = {"?", "src", "dst", "t", "op"};

static int is_ws(unsigned char c) { return c == ' ' || c == '\t'; }
static int is_sep(unsigned char c) { return c == ' ' || c == '\t' || c == ','; }
static int is_binary(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

/* Printable rendering of a field for messages: at most ~40 bytes, non-printable
 * bytes as \xNN, "..." when cut. */
static void quote_field(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0, i;
    for (i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i >= 40)
            break;
        if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            int w = snprintf(out + o, cap - o, "\\x%02x", c);
            o += (size_t)w;
        }
    }
    if (i < n && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* A parse error: the message goes to the caller's buffer. */
#define perr(err, errlen, ...) gsnap_err_buf((err), (errlen), GSNAP_EPARSE, __VA_ARGS__)

/* A field that failed to parse: report binary bytes first, else `what`. */
static int field_err(char *err, size_t errlen, int col, const char *s, size_t n,
                     const char *what)
{
    char q[200];
    size_t i;
    for (i = 0; i < n; i++) {
        if (is_binary((unsigned char)s[i]))
            return perr(err, errlen, "column %d (%s): binary data (byte 0x%02x at offset %zu of the field)",
                        col, col_names[col], (unsigned char)s[i], i);
    }
    if (n == 0)
        return perr(err, errlen, "column %d (%s): empty field", col, col_names[col]);
    quote_field(q, sizeof q, s, n);
    return perr(err, errlen, "column %d (%s): '%s' %s", col, col_names[col], q, what);
}

enum { NUM_OK = 0, NUM_BAD, NUM_OVERFLOW, NUM_NEGATIVE };

/* Unsigned decimal: digits only. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    int ovf = 0;
    size_t i;
    if (n == 0)
        return NUM_BAD;
    if (s[0] == '-') {
        if (n == 1)
            return NUM_BAD;
        for (i = 1; i < n; i++)
            if ((unsigned)(s[i] - '0') > 9)
                return NUM_BAD;
        return NUM_NEGATIVE;
    }
    if (n < 20) { /* at most 19 digits: cannot overflow */
        for (i = 0; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9)
                return NUM_BAD;
            v = v * 10 + d;
        }
        *out = v;
        return NUM_OK;
    }
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9)
            return NUM_BAD;
        if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
            ovf = 1;
        v = v * 10 + d;
    }
    if (ovf)
        return NUM_OVERFLOW;
    *out = v;
    return NUM_OK;
}

/* Signed decimal: optional '-', digits. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
    uint64_t v = 0, lim;
    int neg = 0, ovf = 0;
    size_t i = 0;
    if (n && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == n)
        return NUM_BAD;
    lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9)
            return NUM_BAD;
        if (v > (lim - d) / 10)
            ovf = 1;
        else
            v = v * 10 + d;
    }
    if (ovf)
        return NUM_OVERFLOW;
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return NUM_OK;
}

/* op column; returns 0 add, 1 delete, -1 not an op. */
static int parse_op(const char *s, size_t n)
{
    char w[8];
    size_t i;
    if (n == 0 || n > 6)
        return -1;
    for (i = 0; i < n; i++) {
        char c = s[i];
        w[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    w[n] = '\0';
    if (n == 1) {
        switch (w[0]) {
        case 'a': case '+': case '1': return 0;
        case 'd': case '-': case '0': return 1;
        default: return -1;
        }
    }
    if (strcmp(w, "add") == 0)
        return 0;
    if (strcmp(w, "del") == 0 || strcmp(w, "delete") == 0)
        return 1;
    return -1;
}

static int check_u64_field(char *err, size_t errlen, int col, const char *s, size_t n,
                           uint64_t *out)
{
    char q[200];
    switch (parse_u64(s, n, out)) {
    case NUM_OK:
        return GSNAP_OK;
    case NUM_NEGATIVE:
        quote_field(q, sizeof q, s, n);
        return perr(err, errlen, "column %d (%s): '%s' is negative (node ids are unsigned 64-bit integers)",
                    col, col_names[col], q);
    case NUM_OVERFLOW:
        quote_field(q, sizeof q, s, n);
        return perr(err, errlen, "column %d (%s): '%s' is larger than 18446744073709551615 (unsigned 64-bit)",
                    col, col_names[col], q);
    default:
        return field_err(err, errlen, col, s, n, "is not an unsigned integer");
    }
}

#ifndef GSNAP_PARSE_NO_FAST
/* Skip one separator of the common shapes (one tab, one comma, or a run of
 * spaces); NULL when something else follows (the general path decides). */
static const char *fast_sep(const char *p, const char *end)
{
    if (p == end)
        return NULL;
    if (*p == '\t' || *p == ',')
        return p + 1;
    if (*p != ' ')
        return NULL;
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* Fast path for the common line shapes "src SEP dst" and "src SEP dst SEP t"
 * with at most 19 / 19 / 18 digits (no overflow possible). Returns 1 with the
 * event filled, or 0 when the line needs the general parser (which accepts or
 * rejects it with a message): the fast path only ever accepts lines the general
 * grammar accepts, with the same values. p..end is stripped and non-empty. */
static int parse_fast(const char *p, const char *end, uint64_t line_no, uint64_t *src,
                      uint64_t *dst, int64_t *t, int *is_delete)
{
    uint64_t v[2], x;
    const char *q;
    unsigned dg;
    int k, neg = 0;
    int64_t tv;

    for (k = 0; k < 2; k++) {
        x = 0;
        for (q = p; q < end && (dg = (unsigned)(*q - '0')) <= 9; q++)
            x = x * 10 + dg;
        if (q == p || q - p > 19)
            return 0;
        v[k] = x;
        p = q;
        if (k == 0 && !(p = fast_sep(p, end)))
            return 0;
    }
    if (p == end) {
        if (line_no >= (uint64_t)INT64_MAX)
            return 0;
        tv = (int64_t)line_no;
    } else {
        if (!(p = fast_sep(p, end)))
            return 0;
        if (p < end && *p == '-') {
            neg = 1;
            p++;
        }
        x = 0;
        for (q = p; q < end && (dg = (unsigned)(*q - '0')) <= 9; q++)
            x = x * 10 + dg;
        if (q == p || q - p > 18 || q != end)
            return 0;
        tv = neg ? -(int64_t)x : (int64_t)x;
    }
    if (src)
        *src = v[0];
    if (dst)
        *dst = v[1];
    if (t)
        *t = tv;
    if (is_delete)
        *is_delete = 0;
    return 1;
}

#endif

/* The general tokenizer: fields of [p, end) into fs/fn (at most NCOLS,
 * none empty); *ncol = how many. 0 or GSNAP_EPARSE with the message. */
static int split_fields(const char *p, const char *end, const char **fs, size_t *fn, int *ncol,
                        char *err, size_t errlen)
{
    for (;;) {
        const char *f = p;
        while (p < end && !is_sep((unsigned char)*p))
            p++;
        if (*ncol == NCOLS) {
            char q[200];
            const char *bad;
            for (bad = f; bad < end; bad++)
                if (is_binary((unsigned char)*bad))
                    return perr(err, errlen, "column %d: binary data (byte 0x%02x) after the last column (op)",
                                *ncol + 1, (unsigned char)*bad);
            quote_field(q, sizeof q, f, (size_t)(end - f));
            return perr(err, errlen, "column %d: trailing garbage '%s' (a line is 'src dst [t] [op]')",
                        *ncol + 1, q);
        }
        fs[*ncol] = f;
        fn[*ncol] = (size_t)(p - f);
        if (fn[*ncol] == 0)
            return field_err(err, errlen, *ncol + 1, f, 0, "");
        (*ncol)++;
        if (p == end)
            break;
        while (p < end && is_ws((unsigned char)*p))
            p++;
        if (p < end && *p == ',') {
            p++;
            while (p < end && is_ws((unsigned char)*p))
                p++;
            if (p == end) { /* comma at the end: an empty next field */
                if (*ncol == NCOLS)
                    return perr(err, errlen, "column %d: trailing garbage ',' (a line is 'src dst [t] [op]')",
                                *ncol + 1);
                return field_err(err, errlen, *ncol + 1, p, 0, "");
            }
        }
    }
    return 0;
}

static int parse_line(const char *p, const char *end, uint64_t line_no, uint64_t *src, uint64_t *dst,
                      int64_t *t, int *is_delete, char *err, size_t errlen);

/* The one parser of edge lines: `graphsnap ingest`, its --dry-run and
 * gsnap_ingest_text all come here, so that they accept and reject the same
 * lines with the same messages (--dry-run once had a loop of its own that
 * kept neither the byte order mark nor the hint). */
int gsnap_parse_edge_line(const char *line, size_t len, uint64_t line_no,
                          uint64_t *src, uint64_t *dst, int64_t *t, int *is_delete,
                          char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!line && len)
        return perr(err, errlen, "no line");
    const char *p = line, *end = line + len;
    if (line_no == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark (spreadsheet exports) */
    int rc = parse_line(p, end, line_no, src, dst, t, is_delete, err, errlen);
    if (rc == GSNAP_EPARSE && err && errlen) {
        while (p < end && is_ws((unsigned char)*p))
            p++;
        if (p < end && ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " (this looks like a header row: remove it or start it with '#')");
        }
    }
    return rc;
}

static int parse_line(const char *p, const char *end, uint64_t line_no, uint64_t *src, uint64_t *dst,
                      int64_t *t, int *is_delete, char *err, size_t errlen)
{
    const char *fs[NCOLS];
    size_t fn[NCOLS];
    int ncol = 0, rc, op = 0;
    uint64_t s = 0, d = 0;
    int64_t tv;

    /* strip the line end and trailing blanks (\r of CRLF included) */
    while (end > p && (end[-1] == '\n' || end[-1] == '\r' || is_ws((unsigned char)end[-1])))
        end--;
    while (p < end && is_ws((unsigned char)*p))
        p++;
    if (p == end || *p == '#' || *p == '%')
        return GSNAP_NOTFOUND;
#ifndef GSNAP_PARSE_NO_FAST
    if (parse_fast(p, end, line_no, src, dst, t, is_delete))
        return GSNAP_OK;
#endif

    if ((rc = split_fields(p, end, fs, fn, &ncol, err, errlen)) != 0)
        return rc;
    if ((rc = check_u64_field(err, errlen, 1, fs[0], fn[0], &s)) != 0)
        return rc;
    if (ncol < 2)
        return perr(err, errlen, "column 2 (dst): missing (a line is 'src dst [t] [op]')");
    if ((rc = check_u64_field(err, errlen, 2, fs[1], fn[1], &d)) != 0)
        return rc;
    if (ncol >= 3) {
        char q[200];
        switch (parse_i64(fs[2], fn[2], &tv)) {
        case NUM_OK:
            break;
        case NUM_OVERFLOW:
            quote_field(q, sizeof q, fs[2], fn[2]);
            return perr(err, errlen, "column 3 (t): '%s' is out of the signed 64-bit range", q);
        default:
            return field_err(err, errlen, 3, fs[2], fn[2], "is not a signed integer");
        }
        if (tv == INT64_MAX)
            return perr(err, errlen, "column 3 (t): 9223372036854775807 is reserved (it means \"now\")");
    } else {
        if (line_no >= (uint64_t)INT64_MAX)
            return perr(err, errlen, "column 3 (t): missing, and the line number is too large to serve as the time");
        tv = (int64_t)line_no;
    }
    if (ncol >= 4) {
        op = parse_op(fs[3], fn[3]);
        if (op < 0)
            return field_err(err, errlen, 4, fs[3], fn[3],
                             "is not an op (add, a, +, 1 or del, delete, d, -, 0)");
    }
    if (src)
        *src = s;
    if (dst)
        *dst = d;
    if (t)
        *t = tv;
    if (is_delete)
        *is_delete = op;
    return GSNAP_OK;
}
