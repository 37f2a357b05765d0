/*
 * gt2tsv -- convert a graph-tool binary graph (.gt, uncompressed) into a
 * temporal edge stream "src<TAB>dst<TAB>t", one line per timestamped event.
 *
 *   gzip -dc pgp-strong-2009.gt.gz | gt2tsv --time-order > pgp.tsv
 *   gt2tsv --info file.gt          (header and property list on stderr)
 *
 * The .gt layout, as read here (verified against the files of Debian's
 * python3-graph-tool 2.45 collection with a hex dump):
 *   magic E2 9B BE 20 67 74, version byte (1), endianness byte (0 little,
 *   1 big), u64 length + comment bytes, directed byte, u64 N;
 *   for each vertex: u64 out-degree, then the neighbour ids, each an
 *   uint8/16/32/64 when N fits in 8/16/32 bits (else 64);
 *   u64 property count; each property: kind byte (0 graph, 1 vertex, 2 edge),
 *   u64 length + name, value-type byte, then 1 / N / E values (edge values in
 *   adjacency order). Value types: 0 bool (1 byte), 1 int16, 2 int32,
 *   3 int64, 4 double, 5 long double, 6 string (u64 length + bytes),
 *   7..13 vectors (u64 length + elements) of types 0..6, 14 python object
 *   (pickled, stored as a string).
 *   long double (5, 12) has a platform-dependent size and is refused.
 *
 * Vertex ids in the output are graph-tool's vertex indices 0..N-1. Only the
 * adjacency and the chosen edge time property are ever output; all other
 * properties (e.g. the PGP vertex property `uid`, which holds real names and
 * e-mail addresses) are skipped unread, and --info prints only their names
 * and types, never values.
 *
 * Exit status: 0 ok, 1 malformed input or I/O error (message with the byte
 * offset), 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1990-01-01T00:00:00Z and 2010-01-01T00:00:00Z (Unix seconds), the window
 * --drop-junk keeps for the PGP 2009 data (signatures from 1991 to 2009). */
#define JUNK_MIN INT64_C(631152000)
#define JUNK_MAX INT64_C(1262304000)

enum { T_BOOL, T_I16, T_I32, T_I64, T_DBL, T_LDBL, T_STR, T_VBOOL, T_VI16, T_VI32,
       T_VI64, T_VDBL, T_VLDBL, T_VSTR, T_PYOBJ, T_COUNT };
static const char *type_names[T_COUNT] = {
    "bool", "int16_t", "int32_t", "int64_t", "double", "long double", "string",
    "vector<bool>", "vector<int16_t>", "vector<int32_t>", "vector<int64_t>",
    "vector<double>", "vector<long double>", "vector<string>", "python::object"};
static const char *kind_names[3] = {"graph", "vertex", "edge"};

typedef struct {
    FILE *f;
    const char *name;
    uint64_t off;  /* bytes consumed so far */
    int swap;      /* file endianness differs from ours */
} reader;

typedef struct {
    uint64_t src, dst;
    int64_t t;
    uint64_t seq;  /* position in adjacency order (stable sort key) */
} event;

typedef struct {
    const char *time_prop;
    int info, time_order, index_time, quiet;
    int64_t tmin, tmax;  /* keep tmin <= t < tmax */
    int have_window;
} options;

static void errf(const reader *r, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "gt2tsv: %s: offset %" PRIu64 ": ", r->name, r->off);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int host_big_endian(void) {
    const uint16_t x = 1;
    unsigned char c;
    memcpy(&c, &x, 1);
    return c == 0;
}

/* Read exactly n bytes; a short read is an error naming what was expected. */
static int rd_bytes(reader *r, void *dst, size_t n, const char *what) {
    size_t got = fread(dst, 1, n, r->f);
    if (got != n) {
        r->off += got;
        if (ferror(r->f)) errf(r, "read error in %s: %s", what, strerror(errno));
        else errf(r, "truncated input: end of file inside %s", what);
        return -1;
    }
    r->off += n;
    return 0;
}

static void swap_bytes(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char c = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = c;
    }
}

/* Unsigned integer of width w (1, 2, 4, 8) in file byte order. */
static int rd_uint(reader *r, size_t w, uint64_t *out, const char *what) {
    unsigned char b[8];
    if (rd_bytes(r, b, w, what)) return -1;
    if (r->swap) swap_bytes(b, w);
    switch (w) {
    case 1: *out = b[0]; break;
    case 2: { uint16_t v; memcpy(&v, b, 2); *out = v; break; }
    case 4: { uint32_t v; memcpy(&v, b, 4); *out = v; break; }
    default: { uint64_t v; memcpy(&v, b, 8); *out = v; break; }
    }
    return 0;
}

static int rd_sint(reader *r, size_t w, int64_t *out, const char *what) {
    uint64_t u;
    if (rd_uint(r, w, &u, what)) return -1;
    switch (w) {
    case 1: *out = (int8_t)u; break;
    case 2: *out = (int16_t)u; break;
    case 4: *out = (int32_t)u; break;
    default: *out = (int64_t)u; break;
    }
    return 0;
}

/* Skip n bytes (n may be huge in a corrupt file: reading stops at EOF). */
static int rd_skip(reader *r, uint64_t n, const char *what) {
    unsigned char buf[65536];
    while (n > 0) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        if (rd_bytes(r, buf, k, what)) return -1;
        n -= k;
    }
    return 0;
}

/* Skip `count` elements of `size` bytes each, guarding the multiplication. */
static int rd_skip_n(reader *r, uint64_t count, size_t size, const char *what) {
    if (size && count > UINT64_MAX / size) {
        errf(r, "implausible length %" PRIu64 " in %s", count, what);
        return -1;
    }
    return rd_skip(r, count * size, what);
}

/* Size in bytes of one element of a fixed-size scalar type, 0 otherwise. */
static size_t scalar_size(int type) {
    switch (type) {
    case T_BOOL: return 1;
    case T_I16: return 2;
    case T_I32: return 4;
    case T_I64: return 8;
    case T_DBL: return 8;
    default: return 0;
    }
}

/* Skip one value of `type`. */
static int skip_value(reader *r, int type, const char *what) {
    uint64_t len, i;
    if (type == T_LDBL || type == T_VLDBL) {
        errf(r, "%s: value type %d (%s) is not supported (platform-dependent size)",
             what, type, type_names[type]);
        return -1;
    }
    if (type <= T_DBL) return rd_skip(r, scalar_size(type), what);
    if (type == T_STR || type == T_PYOBJ) {
        if (rd_uint(r, 8, &len, what)) return -1;
        return rd_skip(r, len, what);
    }
    if (rd_uint(r, 8, &len, what)) return -1;  /* vector length */
    if (type == T_VSTR) {
        for (i = 0; i < len; i++)
            if (skip_value(r, T_STR, what)) return -1;
        return 0;
    }
    return rd_skip_n(r, len, scalar_size(type - T_VBOOL), what);
}

/* Growable event array. */
typedef struct {
    event *v;
    size_t n, cap;
} evbuf;

static int ev_push(evbuf *b, const event *e) {
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        event *nv = realloc(b->v, nc * sizeof *nv);
        if (!nv) return -1;
        b->v = nv;
        b->cap = nc;
    }
    b->v[b->n++] = *e;
    return 0;
}

/* Read one time value (or vector of them) of edge `e` and append its events. */
static int read_times(reader *r, int type, uint64_t src, uint64_t dst, uint64_t *seq,
                      evbuf *out, uint64_t *dbl_rounded) {
    const char *what = "edge time property value";
    uint64_t n = 1, i;
    int base = type;
    if (type >= T_VBOOL && type <= T_VDBL) {
        if (rd_uint(r, 8, &n, what)) return -1;
        base = type - T_VBOOL;
    }
    for (i = 0; i < n; i++) {
        event ev;
        ev.src = src;
        ev.dst = dst;
        if (base == T_DBL) {
            uint64_t u;
            double d;
            if (rd_uint(r, 8, &u, what)) return -1;
            memcpy(&d, &u, 8);
            if (!(d >= -9.2e18 && d <= 9.2e18)) {
                errf(r, "time value %g is not a representable integer", d);
                return -1;
            }
            ev.t = (int64_t)d;
            if ((double)ev.t != d) (*dbl_rounded)++;
        } else if (rd_sint(r, scalar_size(base), &ev.t, what)) {
            return -1;
        }
        ev.seq = (*seq)++;
        if (ev_push(out, &ev)) {
            errf(r, "out of memory after %zu events", out->n);
            return -1;
        }
    }
    return 0;
}

static int cmp_event(const void *a, const void *b) {
    const event *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Fast decimal formatting into p; returns the end. */
static char *fmt_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}
static char *fmt_i64(char *p, int64_t v) {
    if (v < 0) { *p++ = '-'; return fmt_u64(p, (uint64_t)0 - (uint64_t)v); }
    return fmt_u64(p, (uint64_t)v);
}

static int write_events(const evbuf *ev, const options *o, uint64_t *written,
                        uint64_t *dropped, int64_t *tlo, int64_t *thi) {
    char buf[1 << 16];
    size_t fill = 0;
    *written = *dropped = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const event *e = &ev->v[i];
        if (o->have_window && (e->t < o->tmin || e->t >= o->tmax)) {
            (*dropped)++;
            continue;
        }
        if (*written == 0 || e->t < *tlo) *tlo = e->t;
        if (*written == 0 || e->t > *thi) *thi = e->t;
        if (fill > sizeof buf - 80) {
            if (fwrite(buf, 1, fill, stdout) != fill) return -1;
            fill = 0;
        }
        char *p = buf + fill;
        p = fmt_u64(p, e->src); *p++ = '\t';
        p = fmt_u64(p, e->dst); *p++ = '\t';
        p = fmt_i64(p, e->t); *p++ = '\n';
        fill = (size_t)(p - buf);
        (*written)++;
    }
    if (fill && fwrite(buf, 1, fill, stdout) != fill) return -1;
    return fflush(stdout) == 0 ? 0 : -1;
}

static void usage(FILE *to) {
    fprintf(to,
        "usage: gt2tsv [options] [FILE.gt]   (FILE omitted or '-': stdin; uncompressed)\n"
        "  --info             print header and property list (names, types) to stderr; no output\n"
        "  --time-prop NAME   edge property holding event times (default e_time)\n"
        "  --index-time       no time property: t = edge index in adjacency order\n"
        "  --time-order       sort output by t (stable: ties keep adjacency order)\n"
        "  --drop-junk        keep only 1990-01-01 <= t < 2010-01-01 (PGP 2009 window)\n"
        "  --t-min T, --t-max T  keep only T_MIN <= t < T_MAX\n"
        "  -q, --quiet        no summary on stderr\n"
        "Output: src<TAB>dst<TAB>t per event, vertex ids 0..N-1; vector-valued time\n"
        "properties give one line per element. Vertex properties are never output.\n");
}

static int parse_i64(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    options o = {"e_time", 0, 0, 0, 0, INT64_MIN, INT64_MAX, 0};
    const char *path = NULL;
    reader r = {NULL, NULL, 0, 0};
    uint64_t *adj_src = NULL, *adj_dst = NULL;
    char *name = NULL;
    evbuf ev = {NULL, 0, 0};
    int rc = 1, found_time = 0;
    uint64_t n_vertices, n_edges = 0, nprops, cap_edges = 0, dbl_rounded = 0;
    unsigned char hdr[8];
    static const unsigned char magic[6] = {0xE2, 0x9B, 0xBE, 0x20, 0x67, 0x74};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--info")) o.info = 1;
        else if (!strcmp(a, "--time-order")) o.time_order = 1;
        else if (!strcmp(a, "--index-time")) o.index_time = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o.quiet = 1;
        else if (!strcmp(a, "--drop-junk")) { o.tmin = JUNK_MIN; o.tmax = JUNK_MAX; o.have_window = 1; }
        else if (!strcmp(a, "--time-prop") && i + 1 < argc) o.time_prop = argv[++i];
        else if (!strcmp(a, "--t-min") && i + 1 < argc) {
            if (parse_i64(argv[++i], &o.tmin)) { fprintf(stderr, "gt2tsv: bad --t-min '%s'\n", argv[i]); return 2; }
            o.have_window = 1;
        } else if (!strcmp(a, "--t-max") && i + 1 < argc) {
            if (parse_i64(argv[++i], &o.tmax)) { fprintf(stderr, "gt2tsv: bad --t-max '%s'\n", argv[i]); return 2; }
            o.have_window = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "gt2tsv: unknown or incomplete option '%s'\n", a); usage(stderr); return 2; }
        else if (path) { fprintf(stderr, "gt2tsv: more than one input file\n"); return 2; }
        else path = a;
    }
    if (!path || !strcmp(path, "-")) {
        r.f = stdin;
        r.name = "<stdin>";
    } else {
        r.f = fopen(path, "rb");
        r.name = path;
        if (!r.f) {
            fprintf(stderr, "gt2tsv: cannot open %s: %s\n", path, strerror(errno));
            return 1;
        }
    }

    /* Header. */
    if (rd_bytes(&r, hdr, 8, "header")) goto out;
    if (memcmp(hdr, magic, 6)) {
        r.off = 0;
        errf(&r, "not a graph-tool .gt file (bad magic; is it still gzip-compressed?)");
        goto out;
    }
    if (hdr[6] != 1) {
        r.off = 6;
        errf(&r, "unsupported .gt format version %u (only 1 is known)", hdr[6]);
        goto out;
    }
    if (hdr[7] > 1) {
        r.off = 7;
        errf(&r, "bad endianness byte %u", hdr[7]);
        goto out;
    }
    r.swap = (hdr[7] == 1) != host_big_endian();
    {
        uint64_t clen;
        if (rd_uint(&r, 8, &clen, "comment length")) goto out;
        if (o.info) {
            char c;
            fprintf(stderr, "format version 1, %s-endian\ncomment: ", hdr[7] ? "big" : "little");
            for (uint64_t i = 0; i < clen; i++) {
                if (rd_bytes(&r, &c, 1, "comment")) goto out;
                fputc((c >= 32 && c < 127) ? c : '.', stderr);
            }
            fputc('\n', stderr);
        } else if (rd_skip(&r, clen, "comment")) {
            goto out;
        }
    }
    {
        unsigned char d;
        if (rd_bytes(&r, &d, 1, "directed flag")) goto out;
        if (d > 1) { r.off--; errf(&r, "bad directed flag %u", d); goto out; }
        if (rd_uint(&r, 8, &n_vertices, "vertex count")) goto out;
        if (o.info) fprintf(stderr, "%s, %" PRIu64 " vertices\n", d ? "directed" : "undirected", n_vertices);
    }

    /* Adjacency: out-neighbours of each vertex. */
    {
        size_t w = n_vertices <= UINT64_C(0xFF) ? 1 : n_vertices <= UINT64_C(0xFFFF) ? 2
                 : n_vertices <= UINT64_C(0xFFFFFFFF) ? 4 : 8;
        for (uint64_t v = 0; v < n_vertices; v++) {
            uint64_t deg;
            if (rd_uint(&r, 8, &deg, "out-degree")) goto out;
            for (uint64_t k = 0; k < deg; k++) {
                uint64_t u;
                if (rd_uint(&r, w, &u, "neighbour id")) goto out;
                if (u >= n_vertices) {
                    r.off -= w;
                    errf(&r, "neighbour id %" PRIu64 " of vertex %" PRIu64 " >= N = %" PRIu64,
                         u, v, n_vertices);
                    goto out;
                }
                if (n_edges == cap_edges) {
                    uint64_t nc = cap_edges ? cap_edges * 2 : 4096;
                    uint64_t *ns = realloc(adj_src, nc * sizeof *ns);
                    if (!ns) { errf(&r, "out of memory"); goto out; }
                    adj_src = ns;
                    uint64_t *nd = realloc(adj_dst, nc * sizeof *nd);
                    if (!nd) { errf(&r, "out of memory"); goto out; }
                    adj_dst = nd;
                    cap_edges = nc;
                }
                adj_src[n_edges] = v;
                adj_dst[n_edges] = u;
                n_edges++;
            }
        }
        if (o.info) fprintf(stderr, "%" PRIu64 " edges (neighbour ids: %zu bytes)\n", n_edges, w);
    }

    /* Properties. */
    if (rd_uint(&r, 8, &nprops, "property count")) goto out;
    if (o.info) fprintf(stderr, "%" PRIu64 " properties:\n", nprops);
    for (uint64_t p = 0; p < nprops; p++) {
        unsigned char kind, type;
        uint64_t nlen, count;
        uint64_t at = r.off;
        if (rd_bytes(&r, &kind, 1, "property kind")) goto out;
        if (kind > 2) { r.off = at; errf(&r, "property %" PRIu64 ": bad kind byte %u", p, kind); goto out; }
        if (rd_uint(&r, 8, &nlen, "property name length")) goto out;
        if (nlen > 65536) { errf(&r, "property %" PRIu64 ": implausible name length %" PRIu64, p, nlen); goto out; }
        free(name);
        name = malloc((size_t)nlen + 1);
        if (!name) { errf(&r, "out of memory"); goto out; }
        if (rd_bytes(&r, name, (size_t)nlen, "property name")) goto out;
        name[nlen] = 0;
        if (rd_bytes(&r, &type, 1, "property value type")) goto out;
        if (type >= T_COUNT) {
            r.off--;
            errf(&r, "property '%s': unknown value type %u", name, type);
            goto out;
        }
        count = kind == 0 ? 1 : kind == 1 ? n_vertices : n_edges;
        if (o.info) {
            for (char *c = name; *c; c++) if (*c < 32 || *c == 127) *c = '?';
            fprintf(stderr, "  %-6s %-20s %-20s (%" PRIu64 " values at offset %" PRIu64 ")\n",
                    kind_names[kind], name, type_names[type], count, at);
        }
        if (kind == 2 && !o.index_time && !o.info && !strcmp(name, o.time_prop)) {
            uint64_t seq = 0;
            if (!((type >= T_I16 && type <= T_DBL) || (type >= T_VI16 && type <= T_VDBL))) {
                errf(&r, "edge property '%s' has type %s; need an integer or double (or a vector of them)",
                     name, type_names[type]);
                goto out;
            }
            for (uint64_t e = 0; e < n_edges; e++)
                if (read_times(&r, type, adj_src[e], adj_dst[e], &seq, &ev, &dbl_rounded)) goto out;
            found_time = 1;
            continue;
        }
        for (uint64_t i = 0; i < count; i++) {
            if (skip_value(&r, type, name)) goto out;
        }
    }
    {
        int c = fgetc(r.f);
        if (c != EOF) {
            errf(&r, "trailing data after the last property");
            goto out;
        }
        if (ferror(r.f)) { errf(&r, "read error: %s", strerror(errno)); goto out; }
    }
    if (o.info) { rc = 0; goto out; }

    if (o.index_time) {
        for (uint64_t e = 0; e < n_edges; e++) {
            event x = {adj_src[e], adj_dst[e], (int64_t)e, e};
            if (ev_push(&ev, &x)) { errf(&r, "out of memory"); goto out; }
        }
    } else if (!found_time) {
        fprintf(stderr, "gt2tsv: %s: no edge property '%s' (see --info; use --time-prop NAME or --index-time)\n",
                r.name, o.time_prop);
        goto out;
    }
    if (o.time_order) qsort(ev.v, ev.n, sizeof *ev.v, cmp_event);
    {
        uint64_t written, dropped;
        int64_t tlo = 0, thi = 0;
        if (write_events(&ev, &o, &written, &dropped, &tlo, &thi)) {
            fprintf(stderr, "gt2tsv: write error: %s\n", strerror(errno));
            goto out;
        }
        if (!o.quiet) {
            fprintf(stderr, "gt2tsv: %" PRIu64 " vertices, %" PRIu64 " edges, %zu events, %" PRIu64
                    " written", n_vertices, n_edges, ev.n, written);
            if (o.have_window)
                fprintf(stderr, ", %" PRIu64 " dropped outside [%" PRId64 ", %" PRId64 ")",
                        dropped, o.tmin, o.tmax);
            if (written) fprintf(stderr, ", t in [%" PRId64 ", %" PRId64 "]", tlo, thi);
            fprintf(stderr, "%s\n", o.time_order ? ", time-ordered" : "");
            if (dbl_rounded)
                fprintf(stderr, "gt2tsv: %" PRIu64 " non-integral double times truncated\n", dbl_rounded);
        }
    }
    rc = 0;
out:
    if (r.f && r.f != stdin) fclose(r.f);
    free(name);
    free(adj_src);
    free(adj_dst);
    free(ev.v);
    return rc;
}
