/*
 * cli/cmd_attr.c -- `graphsnap attr`: node attribute tables (features, labels).
 *
 *   graphsnap attr create NAME --dtype f32|f16|bf16|i64 --dim D
 *   graphsnap attr ingest NAME FILE [--batch N] [--nodes FILE.npy] [--t T]
 *   graphsnap attr get NAME NODE... [--at T] [--version V] [--json]
 *   graphsnap attr list [--json]
 */
#include "cli/cli.h"
#include "common/common.h" /* gsnap_dec_u64, gsnap_dec_i64: strict decimals */
#include "features/features.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char attr_usage[] =
    "Usage: graphsnap attr create NAME --dtype f32|f16|bf16|i64 --dim D\n"
    "       graphsnap attr ingest NAME FILE [--batch N] [--nodes NODES.npy] [--t T]\n"
    "       graphsnap attr get NAME NODE... [--at T] [--version V] [--json]\n"
    "       graphsnap attr list [--json]\n"
    "\n"
    "Node attribute tables: `dim` elements of one dtype per node, versioned like\n"
    "edges (an update is an event at (t, version); reads are point-in-time).\n"
    "\n"
    "  create   make table NAME ([A-Za-z0-9_.-], 1..63 chars); idempotent for the\n"
    "           same dtype and dim\n"
    "  ingest   load rows from FILE: text (TSV/CSV/spaces) lines `node t v1 .. vD`\n"
    "           ('#' comments and blank lines skipped; f16/bf16 rounded to nearest\n"
    "           even), or FILE.npy of shape [n, D] (or [n] when D = 1; dtypes f2,\n"
    "           f4, f8, i4, i8, little endian, C order) whose row i is node i, or\n"
    "           the i-th id of --nodes (an .npy of n integers), at time --t (0).\n"
    "           Rows are committed in atomic batches of --batch rows (1000000);\n"
    "           a bad line stops the load before its batch commits\n"
    "  get      rows of the nodes at time --at (now) as of --version (latest);\n"
    "           a node without a row prints '-' (JSON: \"found\": false)\n"
    "  list     the tables: name, dtype, dim, stored updates, creation version\n"
    "\n"
    "Options:\n"
    "  --dtype T      f32, f16, bf16 or i64 (create)\n"
    "  --dim D        elements per node, 1..65536 (create)\n"
    "  --batch N      rows per committed batch (ingest)\n"
    "  --nodes FILE   .npy of node ids, one per row (ingest of .npy)\n"
    "  --t T          event time of .npy rows (ingest)\n"
    "  --at T         event time of the read: integer or 'now' (get)\n"
    "  --version V    version of the read: integer or 'latest' (get)\n"
    "  --json         one JSON object on stdout (get, list)\n"
    "  -d, --db DIR   database directory\n";

enum { O_DTYPE = 1000, O_DIM, O_BATCH, O_NODES, O_T, O_AT, O_VERSION, O_JSON };

typedef struct {
    const char *dtype, *nodes;
    uint64_t dim, batch;
    int64_t t, at;
    uint64_t version;
    int json, have_dim, have_t;
} attr_args;

/* ---- ingest: a batch of rows ---------------------------------------------- */

typedef struct {
    gsnap_db *db;
    const char *name;
    gsnap_attr_info info;
    size_t row_bytes, n, cap, batch;
    uint64_t *nodes;
    int64_t *t;
    unsigned char *vals;
    uint64_t rows, batches, last_version;
} loader;

static int loader_flush(loader *L) {
    if (L->n == 0) return 0;
    gsnap_batch *b = NULL;
    int rc = gsnap_batch_begin(L->db, &b);
    if (rc == 0) rc = gsnap_batch_set_attr(b, L->name, L->nodes, L->t, L->vals, L->n);
    if (rc == 0) rc = gsnap_batch_commit(b, &L->last_version);
    else gsnap_batch_abort(b);
    if (rc) return rc;
    L->rows += L->n;
    L->batches++;
    L->n = 0;
    return 0;
}

/* A slot for the next row (flushes a full batch first). */
static int loader_row(loader *L, uint64_t node, int64_t t, unsigned char **row) {
    int rc;
    if (L->n == L->batch && (rc = loader_flush(L))) return rc;
    if (L->n == L->cap) {
        size_t nc = L->cap ? L->cap * 2 : 4096;
        if (nc > L->batch) nc = L->batch;
        uint64_t *nn = realloc(L->nodes, nc * 8);
        if (nn) L->nodes = nn;
        int64_t *nt = realloc(L->t, nc * 8);
        if (nt) L->t = nt;
        unsigned char *nv = realloc(L->vals, nc * L->row_bytes);
        if (nv) L->vals = nv;
        if (!nn || !nt || !nv) return GSNAP_ENOMEM;
        L->cap = nc;
    }
    L->nodes[L->n] = node;
    L->t[L->n] = t;
    *row = L->vals + L->n * L->row_bytes;
    L->n++;
    return 0;
}

/* ---- text input ------------------------------------------------------------ */

/* Fields of a line (its "\n" or "\r\n" cut off): fields are separated by a
 * run of blanks (spaces, tabs) or by one comma with blanks around it. Two
 * commas in a row, or a comma at either end of the line, make an empty field:
 * an error, as in edge ingest. */
typedef struct {
    char *p;
    int started;
} fields;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Next field [*s, *e): 1; none left: 0; an empty field: -1. */
static int next_field(fields *F, char **s, char **e) {
    char *q = F->p;
    while (is_blank(*q)) q++;
    if (*q == ',') {
        if (!F->started) return -1; /* a comma at the start */
        q++;
        while (is_blank(*q)) q++;
        if (!*q || *q == ',') return -1; /* two commas, or one at the end */
    } else if (!*q) {
        return 0;
    }
    F->started = 1;
    *s = q;
    while (*q && !is_blank(*q) && *q != ',') q++;
    *e = q;
    F->p = q;
    return 1;
}

enum { NUM_OK = 0, NUM_BAD, NUM_OVERFLOW };

/* A signed decimal integer, the whole of s: optional '-', then digits only
 * (no '+', no blanks, no '0x', no point or exponent), within int64
 * (gsnap_dec_i64); digits beyond the range are NUM_OVERFLOW. */
static int parse_i64(const char *s, int64_t *out) {
    const char *p = s;
    if (gsnap_dec_i64(&p, out) == 0 && *p == 0) return NUM_OK;
    p = s + (*s == '-');
    if (!*p) return NUM_BAD;
    for (; *p; p++)
        if (*p < '0' || *p > '9') return NUM_BAD;
    return NUM_OVERFLOW;
}

/* A decimal number: an optional sign, digits with an optional '.' (digits on
 * at least one side), an optional exponent (e or E, optional sign, digits).
 * No hex, inf or nan (strtod would take them). */
static int is_decimal(const char *s) {
    int digits = 0;
    if (*s == '+' || *s == '-') s++;
    for (; isdigit((unsigned char)*s); s++) digits++;
    if (*s == '.')
        for (s++; isdigit((unsigned char)*s); s++) digits++;
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!isdigit((unsigned char)*s)) return 0;
        while (isdigit((unsigned char)*s)) s++;
    }
    return *s == 0;
}

/* A field for a message: at most 40 bytes, then "..." */
#define FQ(s) (strlen(s) > 40 ? 40 : (int)strlen(s)), (s), (strlen(s) > 40 ? "..." : "")

static int ingest_text(loader *L, const char *path, FILE *f) {
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    uint64_t lineno = 0;
    int rc = 0;
    size_t es = gsnap_dtype_size(L->info.dtype);
    while ((got = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        if (memchr(line, 0, (size_t)got)) {
            cli_err("%s:%llu: binary data (a NUL byte) in a text file", path, (unsigned long long)lineno);
            rc = GSNAP_EPARSE;
            break;
        }
        if (got > 0 && line[got - 1] == '\n') line[--got] = 0;
        if (got > 0 && line[got - 1] == '\r') line[--got] = 0;
        char *s, *e, *lp = line;
        if (lineno == 1 && got >= 3 && memcmp(lp, "\xEF\xBB\xBF", 3) == 0)
            lp += 3; /* a UTF-8 byte order mark, as edge ingest skips it */
        fields F = {lp, 0};
        unsigned fno = 1; /* the field next_field returns next */
        s = lp;
        while (is_blank(*s)) s++;
        if (!*s || *s == '#' || *s == '%') continue; /* comments as in edge ingest */
        int fr = next_field(&F, &s, &e);
        if (fr < 0) goto empty_field;
        char save = *e;
        *e = 0;
        uint64_t node = 0;
        const char *end = s;
        if (gsnap_dec_u64(&end, &node) || *end) { /* digits only, below 2^64 */
            cli_err("%s:%llu: field 1: '%.*s%s' is not a node id (unsigned integer)", path, (unsigned long long)lineno,
                    FQ(s));
            rc = GSNAP_EPARSE;
            break;
        }
        *e = save;
        fno++;
        if ((fr = next_field(&F, &s, &e)) < 0) goto empty_field;
        if (fr == 0) {
            cli_err("%s:%llu: expected `node t v1 .. v%u`, found only a node id", path, (unsigned long long)lineno,
                    L->info.dim);
            rc = GSNAP_EPARSE;
            break;
        }
        save = *e;
        *e = 0;
        int64_t t = 0;
        if (parse_i64(s, &t) != NUM_OK || t == INT64_MAX) {
            cli_err("%s:%llu: field 2: '%.*s%s' is not an event time (integer below 2^63-1)", path,
                    (unsigned long long)lineno, FQ(s));
            rc = GSNAP_EPARSE;
            break;
        }
        *e = save;
        fno++;
        unsigned char *row;
        if ((rc = loader_row(L, node, t, &row))) break;
        uint32_t k = 0;
        int bad = 0;
        while ((fr = next_field(&F, &s, &e)) != 0) {
            if (fr < 0) { bad = 2; break; }
            if (k == L->info.dim) { k++; break; }
            save = *e;
            *e = 0;
            if (L->info.dtype == GSNAP_DTYPE_I64) {
                int64_t v = 0;
                int nrc = parse_i64(s, &v);
                if (nrc != NUM_OK) {
                    if (nrc == NUM_OVERFLOW)
                        cli_err("%s:%llu: field %u: '%.*s%s' is out of the i64 range (-9223372036854775808 .. "
                                "9223372036854775807)", path, (unsigned long long)lineno, k + 3, FQ(s));
                    else
                        cli_err("%s:%llu: field %u: '%.*s%s' is not an integer (i64: an optional '-' and decimal "
                                "digits)", path, (unsigned long long)lineno, k + 3, FQ(s));
                    bad = 1;
                    break;
                }
                memcpy(row + (size_t)k * es, &v, 8);
                *e = save;
                k++;
                fno++;
                continue;
            }
            /* Rounded to nearest in the dtype (f32 straight from the decimal, f16
             * and bf16 from its nearest double); a magnitude beyond the largest
             * finite value becomes infinity, one too small for the smallest
             * subnormal zero (strtod/strtof's ERANGE is no error here). */
            int vrc = is_decimal(s) ? 0 : GSNAP_EPARSE;
            if (vrc == 0 && L->info.dtype == GSNAP_DTYPE_F32) {
                float x = strtof(s, NULL);
                memcpy(row + (size_t)k * es, &x, 4);
            } else if (vrc == 0) {
                vrc = gsnap_feat__from_double(L->info.dtype, strtod(s, NULL), row + (size_t)k * es);
            }
            if (vrc) {
                cli_err("%s:%llu: field %u: '%.*s%s' is not a %s value (a decimal number)", path,
                        (unsigned long long)lineno, k + 3, FQ(s), gsnap_dtype_name(L->info.dtype));
                bad = 1;
                break;
            }
            *e = save;
            k++;
            fno++;
        }
        if (bad == 2) goto empty_field;
        if (bad) { rc = GSNAP_EPARSE; break; }
        if (k != L->info.dim) {
            if (k > L->info.dim)
                cli_err("%s:%llu: more than %u values: table '%s' has dim %u", path, (unsigned long long)lineno,
                        L->info.dim, L->name, L->info.dim);
            else
                cli_err("%s:%llu: %u values, table '%s' has dim %u", path, (unsigned long long)lineno, k, L->name,
                        L->info.dim);
            rc = GSNAP_EPARSE;
            break;
        }
        if (L->n == L->batch && (rc = loader_flush(L))) break; /* a full batch commits now */
        continue;
    empty_field:
        cli_err("%s:%llu: field %u: empty field (two commas in a row, or a comma at the start or end of the line)",
                path, (unsigned long long)lineno, fno);
        rc = GSNAP_EPARSE;
        break;
    }
    if (rc == 0 && ferror(f)) {
        cli_err("%s: read error: %s", path, strerror(errno));
        rc = GSNAP_EIO;
    }
    if (rc == 0 && L->rows == 0 && L->n == 0) { /* as edge ingest's "no edges" */
        cli_err("%s: no rows (%llu lines read, none holds a row)", path, (unsigned long long)lineno);
        rc = GSNAP_EPARSE;
    }
    free(line);
    return rc;
}

/* ---- .npy input ----------------------------------------------------------- */

typedef struct {
    char kind;  /* 'f' or 'i' */
    int size;   /* bytes per element */
    uint64_t shape[2];
    int ndim;
    long data_off;
} npy_hdr;

/* The header's dict, a Python literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }
 * read by key, in any order: each of the three keys exactly once, no other
 * key, then only blanks (the padding). Fortran order is refused unless its
 * bytes are those of C order (one row or one column). */
static const char *py_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* A quoted string ('...' or "...", no escapes): [*s, *s + *n), the end returned. */
static const char *py_str(const char *p, const char **s, size_t *n) {
    char q = *p;
    if (q != '\'' && q != '"') return NULL;
    const char *b = ++p;
    while (*p && *p != q && *p != '\\') p++;
    if (*p != q) return NULL;
    *s = b;
    *n = (size_t)(p - b);
    return p + 1;
}

static int npy_dict(const char *path, const char *hd, npy_hdr *h) {
    enum { K_DESCR, K_FORTRAN, K_SHAPE };
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0}, fortran = 0;
    const char *p = py_ws(hd);
    if (*p != '{') { cli_err("%s: bad .npy header: not a dict", path); return GSNAP_EPARSE; }
    p = py_ws(p + 1);
    while (*p != '}') {
        const char *ks, *vs;
        size_t kn, vn;
        int k;
        if (!(p = py_str(p, &ks, &kn))) {
            cli_err("%s: bad .npy header: a dict key is not a quoted string", path);
            return GSNAP_EPARSE;
        }
        for (k = 0; k < 3; k++)
            if (strlen(keys[k]) == kn && memcmp(keys[k], ks, kn) == 0) break;
        if (k == 3) {
            cli_err("%s: .npy header has an unknown key '%.*s' (want descr, fortran_order, shape)", path,
                    kn > 40 ? 40 : (int)kn, ks);
            return GSNAP_EPARSE;
        }
        if (seen[k]++) { cli_err("%s: .npy header repeats the key '%s'", path, keys[k]); return GSNAP_EPARSE; }
        p = py_ws(p);
        if (*p != ':') { cli_err("%s: bad .npy header: no ':' after '%s'", path, keys[k]); return GSNAP_EPARSE; }
        p = py_ws(p + 1);
        if (k == K_DESCR) {
            if (!(p = py_str(p, &vs, &vn)) || vn != 3 || (vs[0] != '<' && vs[0] != '|') ||
                (vs[1] != 'f' && vs[1] != 'i') || !isdigit((unsigned char)vs[2])) {
                cli_err("%s: .npy dtype not supported (want little-endian f2, f4, f8, i4 or i8)", path);
                return GSNAP_EPARSE;
            }
            h->kind = vs[1];
            h->size = vs[2] - '0';
            if ((h->kind == 'f' && h->size != 2 && h->size != 4 && h->size != 8) ||
                (h->kind == 'i' && h->size != 4 && h->size != 8)) {
                cli_err("%s: .npy dtype %c%d not supported (want f2, f4, f8, i4 or i8)", path, h->kind, h->size);
                return GSNAP_EPARSE;
            }
        } else if (k == K_FORTRAN) {
            size_t w = strncmp(p, "True", 4) == 0 ? 4 : strncmp(p, "False", 5) == 0 ? 5 : 0;
            if (!w || isalnum((unsigned char)p[w]) || p[w] == '_') {
                cli_err("%s: .npy header: 'fortran_order' must be True or False", path);
                return GSNAP_EPARSE;
            }
            fortran = w == 4;
            p += w;
        } else {
            if (*p != '(') { cli_err("%s: bad .npy shape (not a tuple)", path); return GSNAP_EPARSE; }
            p = py_ws(p + 1);
            h->ndim = 0;
            while (*p != ')') {
                uint64_t v = 0;
                if (!isdigit((unsigned char)*p) || h->ndim == 2) {
                    cli_err("%s: .npy shape must be (n,) or (n, d)", path);
                    return GSNAP_EPARSE;
                }
                for (; isdigit((unsigned char)*p); p++) {
                    if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
                        cli_err("%s: .npy shape overflows", path);
                        return GSNAP_EPARSE;
                    }
                    v = v * 10 + (uint64_t)(*p - '0');
                }
                h->shape[h->ndim++] = v;
                p = py_ws(p);
                if (*p == ',') p = py_ws(p + 1);
                else if (*p != ')') { cli_err("%s: bad .npy shape", path); return GSNAP_EPARSE; }
            }
            p++;
        }
        p = py_ws(p);
        if (*p == ',') p = py_ws(p + 1);
        else if (*p != '}') {
            cli_err("%s: bad .npy header: expected ',' or '}' after '%s'", path, keys[k]);
            return GSNAP_EPARSE;
        }
    }
    if (*py_ws(p + 1)) { cli_err("%s: bad .npy header: text after the dict", path); return GSNAP_EPARSE; }
    for (int k = 0; k < 3; k++)
        if (!seen[k]) { cli_err("%s: .npy header lacks the key '%s'", path, keys[k]); return GSNAP_EPARSE; }
    if (fortran && h->ndim == 2 && h->shape[0] > 1 && h->shape[1] > 1) {
        cli_err("%s: Fortran-order .npy arrays are not supported (save C order, e.g. np.ascontiguousarray)", path);
        return GSNAP_EPARSE;
    }
    return 0;
}

/* Parse an .npy header (versions 1-3, little-endian or byte dtypes, C order). */
static int npy_open(const char *path, FILE *f, npy_hdr *h, uint64_t file_size) {
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        cli_err("%s: not an .npy file (no \\x93NUMPY magic)", path);
        return GSNAP_EPARSE;
    }
    uint32_t hlen;
    long off;
    if (pre[6] == 1) {
        hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
        off = 10;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) { cli_err("%s: truncated .npy header", path); return GSNAP_EPARSE; }
        hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
        off = 12;
    } else {
        cli_err("%s: .npy format version %u not supported", path, pre[6]);
        return GSNAP_EPARSE;
    }
    if (hlen > 1u << 20 || (uint64_t)off + hlen > file_size) {
        cli_err("%s: .npy header length %u beyond the file", path, hlen);
        return GSNAP_EPARSE;
    }
    char *hd = malloc(hlen + 1);
    if (!hd) return GSNAP_ENOMEM;
    if (fread(hd, 1, hlen, f) != hlen) { free(hd); cli_err("%s: truncated .npy header", path); return GSNAP_EPARSE; }
    hd[hlen] = 0;
    if (memchr(hd, 0, hlen)) { /* parsed as a C string below: a NUL would hide what follows it */
        free(hd);
        cli_err("%s: bad .npy header: a NUL byte in it", path);
        return GSNAP_EPARSE;
    }
    int rc = npy_dict(path, hd, h);
    if (rc) goto out;
    rc = GSNAP_EPARSE;
    if (h->ndim == 0) { cli_err("%s: .npy shape must be (n,) or (n, d)", path); goto out; }
    if (h->ndim == 1) h->shape[1] = 1;
    h->data_off = off + (long)hlen;
    uint64_t need = h->shape[0] * h->shape[1];
    if (h->shape[1] && need / h->shape[1] != h->shape[0]) { cli_err("%s: .npy shape overflows", path); goto out; }
    if ((file_size - (uint64_t)h->data_off) / (uint64_t)h->size < need) {
        cli_err("%s: .npy data truncated: %llu elements announced, file holds %llu", path,
                (unsigned long long)need,
                (unsigned long long)((file_size - (uint64_t)h->data_off) / (uint64_t)h->size));
        goto out;
    }
    rc = 0;
out:
    free(hd);
    return rc;
}

static double npy_elem(const npy_hdr *h, const unsigned char *p) {
    if (h->kind == 'f') {
        if (h->size == 2) { uint16_t v; memcpy(&v, p, 2); return gsnap_feat__f16_to_f32(v); }
        if (h->size == 4) { float v; memcpy(&v, p, 4); return v; }
        double v; memcpy(&v, p, 8); return v;
    }
    if (h->size == 4) { int32_t v; memcpy(&v, p, 4); return v; }
    int64_t v; memcpy(&v, p, 8); return (double)v;
}

static int file_size_of(const char *path, FILE *f, uint64_t *size) {
    if (fseek(f, 0, SEEK_END) != 0) { cli_err("%s: cannot seek: %s", path, strerror(errno)); return GSNAP_EIO; }
    long s = ftell(f);
    if (s < 0 || fseek(f, 0, SEEK_SET) != 0) { cli_err("%s: cannot seek: %s", path, strerror(errno)); return GSNAP_EIO; }
    *size = (uint64_t)s;
    return 0;
}

static int ingest_npy(loader *L, const char *path, FILE *f, const char *nodes_path, int64_t t) {
    npy_hdr h, nh;
    uint64_t fs;
    int rc;
    FILE *nf = NULL;
    unsigned char *rowbuf = NULL;
    if ((rc = file_size_of(path, f, &fs)) || (rc = npy_open(path, f, &h, fs))) return rc;
    if (h.shape[1] != L->info.dim) {
        cli_err("%s: rows of %llu values, table '%s' has dim %u", path, (unsigned long long)h.shape[1], L->name,
                L->info.dim);
        return GSNAP_EPARSE;
    }
    if (L->info.dtype == GSNAP_DTYPE_I64 && h.kind != 'i') {
        cli_err("%s: float data for the i64 table '%s'", path, L->name);
        return GSNAP_EPARSE;
    }
    if (h.shape[0] == 0) { /* as edge ingest's "no edges" */
        cli_err("%s: no rows (the array has 0 rows)", path);
        return GSNAP_EPARSE;
    }
    if (nodes_path) {
        uint64_t nfs;
        if (!(nf = fopen(nodes_path, "rb"))) {
            cli_err("%s: %s", nodes_path, strerror(errno));
            return GSNAP_EIO;
        }
        if ((rc = file_size_of(nodes_path, nf, &nfs)) || (rc = npy_open(nodes_path, nf, &nh, nfs))) goto out;
        if (nh.kind != 'i' || nh.shape[1] != 1 || nh.shape[0] != h.shape[0]) {
            cli_err("%s: node ids must be an integer array of shape (%llu,)", nodes_path,
                    (unsigned long long)h.shape[0]);
            rc = GSNAP_EPARSE;
            goto out;
        }
    }
    size_t in_row = (size_t)h.shape[1] * (size_t)h.size, es = gsnap_dtype_size(L->info.dtype);
    if (!(rowbuf = malloc(in_row))) { rc = GSNAP_ENOMEM; goto out; }
    for (uint64_t i = 0; i < h.shape[0]; i++) {
        if (fread(rowbuf, 1, in_row, f) != in_row) {
            cli_err("%s: row %llu: read error", path, (unsigned long long)i);
            rc = GSNAP_EIO;
            goto out;
        }
        uint64_t node = i;
        if (nf) {
            unsigned char nb[8];
            if (fread(nb, 1, (size_t)nh.size, nf) != (size_t)nh.size) {
                cli_err("%s: element %llu: read error", nodes_path, (unsigned long long)i);
                rc = GSNAP_EIO;
                goto out;
            }
            int64_t v;
            if (nh.size == 4) { int32_t v32; memcpy(&v32, nb, 4); v = v32; }
            else memcpy(&v, nb, 8);
            if (v < 0) {
                cli_err("%s: element %llu: negative node id %lld", nodes_path, (unsigned long long)i, (long long)v);
                rc = GSNAP_EPARSE;
                goto out;
            }
            node = (uint64_t)v;
        }
        unsigned char *row;
        if ((rc = loader_row(L, node, t, &row))) goto out;
        for (uint32_t k = 0; k < L->info.dim; k++) {
            const unsigned char *src = rowbuf + (size_t)k * (size_t)h.size;
            if (L->info.dtype == GSNAP_DTYPE_I64) {
                int64_t v;
                if (h.size == 4) { int32_t v32; memcpy(&v32, src, 4); v = v32; }
                else memcpy(&v, src, 8);
                memcpy(row + (size_t)k * es, &v, 8);
            } else if (L->info.dtype == GSNAP_DTYPE_F32 && h.kind == 'f' && h.size == 4) {
                memcpy(row + (size_t)k * es, src, 4);
            } else {
                gsnap_feat__from_double(L->info.dtype, npy_elem(&h, src), row + (size_t)k * es);
            }
        }
        if (L->n == L->batch && (rc = loader_flush(L))) goto out;
    }
out:
    if (nf) fclose(nf);
    free(rowbuf);
    return rc;
}

static int has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int attr_ingest(const attr_args *a, const char *name, const char *path) {
    gsnap_db *db = NULL;
    int ret = cli_open_db(NULL, CLI_DB_WRITE, &db);
    if (ret) return ret;
    loader L;
    memset(&L, 0, sizeof L);
    L.db = db;
    L.name = name;
    L.batch = (size_t)a->batch;
    FILE *f = NULL;
    int rc = gsnap_attr_info_get(db, name, &L.info);
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
        goto done;
    }
    L.row_bytes = (size_t)L.info.dim * gsnap_dtype_size(L.info.dtype);
    int npy = has_suffix(path, ".npy");
    if (!(f = strcmp(path, "-") == 0 ? stdin : fopen(path, npy ? "rb" : "r"))) {
        cli_err("%s: %s", path, strerror(errno));
        ret = CLI_ERR;
        goto done;
    }
    if (!npy && (a->nodes || a->have_t)) { /* a text line carries its own time */
        ret = cli_usage_err("%s applies to .npy input only", a->nodes ? "--nodes" : "--t");
        goto done;
    }
    rc = npy ? ingest_npy(&L, path, f, a->nodes, a->t) : ingest_text(&L, path, f);
    if (rc == 0) rc = loader_flush(&L);
    if (rc) {
        if (rc == GSNAP_ENOMEM) cli_err("out of memory");
        else if (rc != GSNAP_EPARSE && rc != GSNAP_EIO) cli_lib_err(db, rc, "commit");
        cli_err("%llu rows committed in %llu batches before the error", (unsigned long long)L.rows,
                (unsigned long long)L.batches);
        ret = CLI_ERR;
        goto done;
    }
    printf("%llu rows in %llu batches into '%s', version %llu\n", (unsigned long long)L.rows,
           (unsigned long long)L.batches, name, (unsigned long long)L.last_version);
    ret = CLI_OK;
done:
    if (f && f != stdin) fclose(f);
    free(L.nodes);
    free(L.t);
    free(L.vals);
    gsnap_db_close(db);
    return ret;
}

/* ---- get / list / create ------------------------------------------------- */

static void print_elem(gsnap_dtype dt, const unsigned char *p) {
    if (dt == GSNAP_DTYPE_I64) {
        int64_t v;
        memcpy(&v, p, 8);
        printf("%lld", (long long)v);
    } else {
        printf("%.9g", gsnap_feat__to_double(dt, p));
    }
}

static int attr_get(const attr_args *a, const char *name, int nnodes, char **nodes_txt) {
    uint64_t *nodes = malloc((size_t)nnodes * 8);
    if (!nodes) { cli_err("out of memory"); return CLI_ERR; }
    int ret;
    for (int i = 0; i < nnodes; i++)
        if ((ret = cli_parse_u64("NODE", nodes_txt[i], &nodes[i]))) { free(nodes); return ret; }
    gsnap_db *db = NULL;
    gsnap_read *rd = NULL;
    unsigned char *out = NULL;
    uint8_t *found = NULL;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db))) { free(nodes); return ret; }
    gsnap_attr_info info;
    int rc = gsnap_attr_info_get(db, name, &info);
    if (rc == 0) rc = gsnap_read_begin(db, &rd);
    if (rc) { ret = cli_lib_err(db, rc, NULL); goto done; }
    size_t es = gsnap_dtype_size(info.dtype), rb = es * info.dim;
    out = malloc((size_t)nnodes * rb);
    found = malloc((size_t)nnodes);
    if (!out || !found) { cli_err("out of memory"); ret = CLI_ERR; goto done; }
    uint64_t ver = a->version;
    if (ver == GSNAP_VERSION_LATEST || ver > gsnap_read_version(rd)) {
        if (ver != GSNAP_VERSION_LATEST) {
            cli_err("--version %llu is newer than the latest version %llu", (unsigned long long)ver,
                    (unsigned long long)gsnap_read_version(rd));
            ret = CLI_USAGE;
            goto done;
        }
        ver = gsnap_read_version(rd);
    }
    if ((rc = gsnap_attr_read(db, rd, name, nodes, (size_t)nnodes, a->at, ver, out, found))) {
        ret = cli_lib_err(db, rc, NULL);
        if (ret == CLI_NOTFOUND) ret = CLI_ERR;
        goto done;
    }
    if (a->json) {
        printf("{\"table\":");
        cli_json_str(stdout, name);
        printf(",\"dtype\":\"%s\",\"dim\":%u,\"at\":", gsnap_dtype_name(info.dtype), info.dim);
        if (a->at == GSNAP_TIME_MAX) printf("\"now\"");
        else printf("%lld", (long long)a->at);
        printf(",\"version\":%llu,\"rows\":[", (unsigned long long)ver);
    }
    for (int i = 0; i < nnodes; i++) {
        const unsigned char *row = out + (size_t)i * rb;
        if (a->json) {
            printf("%s{\"node\":%llu,\"found\":%s,\"values\":", i ? "," : "", (unsigned long long)nodes[i],
                   found[i] ? "true" : "false");
            if (!found[i]) { printf("null}"); continue; }
            putchar('[');
            for (uint32_t k = 0; k < info.dim; k++) {
                if (k) putchar(',');
                double x = gsnap_feat__to_double(info.dtype, row + k * es);
                if (info.dtype != GSNAP_DTYPE_I64 && (x != x || x - x != 0)) printf("null"); /* NaN/inf: not JSON */
                else print_elem(info.dtype, row + k * es);
            }
            printf("]}");
        } else {
            printf("%llu", (unsigned long long)nodes[i]);
            if (!found[i]) printf("\t-");
            for (uint32_t k = 0; found[i] && k < info.dim; k++) {
                putchar('\t');
                print_elem(info.dtype, row + k * es);
            }
            putchar('\n');
        }
    }
    if (a->json) printf("]}\n");
    ret = CLI_OK;
done:
    gsnap_read_end(rd);
    gsnap_db_close(db);
    free(nodes);
    free(out);
    free(found);
    return ret;
}

static int attr_list(const attr_args *a) {
    gsnap_db *db = NULL;
    int ret = cli_open_db(NULL, CLI_DB_READ, &db);
    if (ret) return ret;
    gsnap_attr_info *infos = NULL;
    size_t n = 0;
    int rc = gsnap_attr_list(db, &infos, &n);
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
        gsnap_db_close(db);
        return ret;
    }
    if (a->json) printf("{\"tables\":[");
    for (size_t i = 0; i < n; i++) {
        if (a->json) {
            printf("%s{\"name\":", i ? "," : "");
            cli_json_str(stdout, infos[i].name);
            printf(",\"dtype\":\"%s\",\"dim\":%u,\"updates\":%llu,\"created_version\":%llu}",
                   gsnap_dtype_name(infos[i].dtype), infos[i].dim, (unsigned long long)infos[i].updates,
                   (unsigned long long)infos[i].created_version);
        } else {
            printf("%s\t%s\t%u\t%llu\t%llu\n", infos[i].name, gsnap_dtype_name(infos[i].dtype), infos[i].dim,
                   (unsigned long long)infos[i].updates, (unsigned long long)infos[i].created_version);
        }
    }
    if (a->json) printf("]}\n");
    gsnap_free(infos);
    gsnap_db_close(db);
    return CLI_OK;
}

static int attr_create(const attr_args *a, const char *name) {
    gsnap_dtype dt;
    if (!a->dtype) return cli_usage_err("create: --dtype is required (f32, f16, bf16 or i64)");
    if (gsnap_dtype_parse(a->dtype, &dt)) return cli_usage_err("--dtype: '%s' is not f32, f16, bf16 or i64", a->dtype);
    if (!a->have_dim) return cli_usage_err("create: --dim is required");
    gsnap_db *db = NULL;
    int ret = cli_open_db(NULL, CLI_DB_WRITE, &db);
    if (ret) return ret;
    int rc = gsnap_attr_create(db, name, dt, (uint32_t)a->dim);
    if (rc) ret = cli_lib_err(db, rc, NULL);
    else printf("attribute table '%s': %s x %llu\n", name, gsnap_dtype_name(dt), (unsigned long long)a->dim);
    gsnap_db_close(db);
    return ret;
}

int cmd_attr(int argc, char **argv) {
    static const struct option lo[] = {
        {"dtype", required_argument, NULL, O_DTYPE}, {"dim", required_argument, NULL, O_DIM},
        {"batch", required_argument, NULL, O_BATCH}, {"nodes", required_argument, NULL, O_NODES},
        {"t", required_argument, NULL, O_T},         {"at", required_argument, NULL, O_AT},
        {"version", required_argument, NULL, O_VERSION}, {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(attr_usage, lo, NULL);
    attr_args a;
    memset(&a, 0, sizeof a);
    a.batch = 1000000;
    a.at = GSNAP_TIME_MAX;
    a.version = GSNAP_VERSION_LATEST;
    int c, ret;
    unsigned given = 0; /* options seen, bit (O_x - O_DTYPE) */
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        if (c >= O_DTYPE && c <= O_JSON) given |= 1u << (c - O_DTYPE);
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_DTYPE: a.dtype = optarg; break;
        case O_DIM:
            if ((ret = cli_parse_u64_range("--dim", optarg, 1, GSNAP_ATTR_MAX_DIM, &a.dim))) return ret;
            a.have_dim = 1;
            break;
        case O_BATCH:
            if ((ret = cli_parse_u64_range("--batch", optarg, 1, UINT32_MAX, &a.batch))) return ret;
            break;
        case O_NODES: a.nodes = optarg; break;
        case O_T:
            if ((ret = cli_parse_i64("--t", optarg, &a.t))) return ret;
            if (a.t == GSNAP_TIME_MAX) return cli_usage_err("--t: %s is reserved for \"now\"", optarg);
            a.have_t = 1;
            break;
        case O_AT: if ((ret = cli_parse_time("--at", optarg, &a.at))) return ret; break;
        case O_VERSION: if ((ret = cli_parse_version("--version", optarg, &a.version))) return ret; break;
        case O_JSON: a.json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    int np = argc - optind;
    if (np < 1) return cli_usage_err("missing action: create, ingest, get or list");
    const char *act = argv[optind];
    /* an option of another action is an error, not ignored */
#define OPT(x) (1u << ((x) - O_DTYPE))
    unsigned allowed = strcmp(act, "create") == 0   ? OPT(O_DTYPE) | OPT(O_DIM)
                       : strcmp(act, "ingest") == 0 ? OPT(O_BATCH) | OPT(O_NODES) | OPT(O_T)
                       : strcmp(act, "get") == 0    ? OPT(O_AT) | OPT(O_VERSION) | OPT(O_JSON)
                       : strcmp(act, "list") == 0   ? OPT(O_JSON)
                                                    : ~0u;
#undef OPT
    for (const struct option *op = lo; op->name; op++)
        if ((given & ~allowed) & (1u << (op->val - O_DTYPE)))
            return cli_usage_err("--%s does not apply to 'attr %s' (see graphsnap attr --help)", op->name, act);
    if (strcmp(act, "list") == 0) {
        if (np != 1) return cli_usage_err("list: unexpected argument '%s'", argv[optind + 1]);
        return attr_list(&a);
    }
    if (strcmp(act, "create") != 0 && strcmp(act, "ingest") != 0 && strcmp(act, "get") != 0)
        return cli_usage_err("unknown action '%s' (create, ingest, get or list)", act);
    if (np < 2) return cli_usage_err("%s: missing table NAME", act);
    const char *name = argv[optind + 1];
    if (strcmp(act, "create") == 0) {
        if (np != 2) return cli_usage_err("create: unexpected argument '%s'", argv[optind + 2]);
        return attr_create(&a, name);
    }
    if (strcmp(act, "ingest") == 0) {
        if (np != 3) return cli_usage_err("ingest: expected NAME FILE");
        return attr_ingest(&a, name, argv[optind + 2]);
    }
    if (np < 3) return cli_usage_err("get: missing NODE");
    return attr_get(&a, name, np - 2, argv + optind + 2);
}
