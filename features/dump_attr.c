/*
 * features/dump_attr.c -- gsnap_db_dump / gsnap_db_load: the store's dump
 * text (store/dump.c: events, version log, snapshots) plus the attribute
 * tables, through the store's dump extension hooks (store/store.h).
 *
 * Why here: the store must not know the features module (it sits below it),
 * and the attribute rows can only be enumerated per version from the
 * module's own LMDB table. So the store's dump/load take extension hooks and
 * the public functions live in this thin layer above both, which passes the
 * features hooks. Callers (CLI, Python, tests) see the same two functions.
 *
 * Lines (dump format 2, docs/format.md):
 *   attr NAME DTYPE DIM           after the header, one per table (name order)
 *   r NAME NODE T X,X,...         in a version's block, after its events: the
 *                                 row written by that version; each element is
 *                                 the hex of its raw bits (f32 8 digits, f16 and
 *                                 bf16 4, i64 16, two's complement), so values
 *                                 round-trip bit for bit (NaN payloads, -0).
 * Rows of a version are written in (table name, node, t) order: the order
 * depends only on the stored rows, so dump -> load -> dump gives equal bytes.
 */
#include "features/features_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dump ------------------------------------------------------------------ */

typedef struct {
    char name[64];
    uint32_t id;
    gsnap_dtype dtype;
    uint32_t dim;
    size_t esize;
} dtab;

typedef struct {
    uint64_t version;
    uint64_t node;
    int64_t t;
    uint32_t tab;               /* index into tabs (name order) */
    const unsigned char *row;   /* in the dump's read txn (valid until it ends) */
} drow;

typedef struct {
    dtab *tabs;
    size_t ntabs;
    drow *rows;
    size_t nrows, pos;
} dump_state;

static int cmp_drow(const void *a, const void *b) {
    const drow *x = a, *y = b;
    if (x->version != y->version) return x->version < y->version ? -1 : 1;
    if (x->tab != y->tab) return x->tab < y->tab ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

static void dump_end(void *vs) {
    dump_state *s = vs;
    if (!s) return;
    free(s->tabs);
    free(s->rows);
    free(s);
}

/* The 'attr' lines: one per catalogued table, in name order (the key
 * order), each kept in s->tabs. */
static int dump_catalog(gsnap_db *db, MDB_txn *txn, MDB_dbi cat, dump_state *s, FILE *f) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int mrc, rc;
    size_t cap = 0;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, cat, &cur), "opening the attribute catalog")))
        return rc;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        char name[64];
        struct gsnap_attr_cat e;
        if (k.mv_size < 1 || k.mv_size > GSNAP_ATTR_NAME_MAX) {
            rc = gsnap_store__err(db, GSNAP_ECORRUPT, "attribute catalog: key of %zu bytes", k.mv_size);
            break;
        }
        memcpy(name, k.mv_data, k.mv_size);
        name[k.mv_size] = 0;
        if ((rc = gsnap_feat__cat_decode(db, name, &v, &e))) break;
        if (s->ntabs == cap && (rc = gsnap_vec_reserve((void **)&s->tabs, &cap, s->ntabs + 1, sizeof *s->tabs)))
            break;
        dtab *t = &s->tabs[s->ntabs++];
        memcpy(t->name, name, sizeof name);
        t->id = e.id;
        t->dtype = (gsnap_dtype)e.dtype;
        t->dim = e.dim;
        t->esize = gsnap_dtype_size(t->dtype);
        fprintf(f, "attr %s %s %u\n", name, gsnap_dtype_name(t->dtype), e.dim);
    }
    mdb_cursor_close(cur);
    if (rc) return rc;
    if (mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading the attribute catalog");
    return 0;
}

/* Every row of versions from..to into s->rows, checked against its
 * checksum (key shape, table and row size for every row). */
static int gather_rows(gsnap_db *db, MDB_txn *txn, MDB_dbi rows, dump_state *s, uint64_t from, uint64_t to) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int mrc, rc;
    size_t cap = 0;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, rows, &cur), "opening attribute rows"))) return rc;
    uint32_t last_id = 0;
    size_t ti = 0;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); mrc == 0; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        if (k.mv_size != GSNAP_ATTR_KEY) {
            rc = gsnap_store__err(db, GSNAP_ECORRUPT, "attribute rows: key of %zu bytes", k.mv_size);
            break;
        }
        uint32_t id = (uint32_t)gsnap_feat__get_be(kp, 4);
        uint64_t node = gsnap_feat__get_be(kp + 4, 8), ver = gsnap_feat__key_version(kp);
        if (id != last_id || !s->ntabs || s->tabs[ti].id != id) {
            for (ti = 0; ti < s->ntabs && s->tabs[ti].id != id; ti++) {}
            if (ti == s->ntabs) {
                rc = gsnap_store__err(db, GSNAP_ECORRUPT, "attribute rows of table id %u, which the catalog lacks", id);
                break;
            }
            last_id = id;
        }
        const dtab *t = &s->tabs[ti];
        size_t rb = (size_t)t->dim * t->esize;
        if (v.mv_size != rb + 8) {
            rc = gsnap_store__err(db, GSNAP_ECORRUPT, "attribute table '%s': node %llu: row of %zu bytes, expected %zu",
                                  t->name, (unsigned long long)node, v.mv_size, rb + 8);
            break;
        }
        if (ver < from || ver > to) continue;
        uint64_t sum;
        memcpy(&sum, (const unsigned char *)v.mv_data + rb, 8);
        if (gsnap_feat__row_sum(kp, v.mv_data, rb) != sum) {
            rc = gsnap_store__err(db, GSNAP_ECHECKSUM,
                                  "attribute table '%s': node %llu (version %llu): row fails its checksum", t->name,
                                  (unsigned long long)node, (unsigned long long)ver);
            break;
        }
        if (s->nrows == cap && (rc = gsnap_vec_reserve((void **)&s->rows, &cap, s->nrows + 1, sizeof *s->rows)))
            break;
        drow *r = &s->rows[s->nrows++];
        r->version = ver;
        r->node = node;
        r->t = gsnap_feat__key_time(kp);
        r->tab = (uint32_t)ti;
        r->row = v.mv_data;
    }
    mdb_cursor_close(cur);
    if (rc) return rc;
    if (mrc != MDB_NOTFOUND) return gsnap_store__mdb_err(db, mrc, "reading attribute rows");
    return 0;
}

static int dump_begin(gsnap_db *db, gsnap_read *rd, uint64_t from, uint64_t to, FILE *f, void **state) {
    *state = NULL;
    MDB_dbi cat, rows;
    int rc = gsnap_store__table(db, GSNAP_ATTR_CAT_TABLE, 0, 0, &cat);
    if (rc == 0) rc = gsnap_store__table(db, GSNAP_ATTR_ROW_TABLE, 0, 0, &rows);
    if (rc == GSNAP_NOTFOUND) return 0; /* no attribute tables */
    if (rc) return rc;
    dump_state *s = calloc(1, sizeof *s);
    if (!s) return GSNAP_ENOMEM;
    *state = s;
    MDB_txn *txn = gsnap_read__txn(rd);
    if ((rc = dump_catalog(db, txn, cat, s, f))) return rc;
    if (to < from) return 0;
    if ((rc = gather_rows(db, txn, rows, s, from, to))) return rc;
    if (s->nrows) qsort(s->rows, s->nrows, sizeof *s->rows, cmp_drow);
    return 0;
}

static int dump_version(void *vs, FILE *f, uint64_t version, uint64_t *lines) {
    dump_state *s = vs;
    if (!s) return 0;
    while (s->pos < s->nrows && s->rows[s->pos].version < version) s->pos++;
    for (; s->pos < s->nrows && s->rows[s->pos].version == version; s->pos++) {
        const drow *r = &s->rows[s->pos];
        const dtab *t = &s->tabs[r->tab];
        fprintf(f, "r %s %llu %lld ", t->name, (unsigned long long)r->node, (long long)r->t);
        for (uint32_t j = 0; j < t->dim; j++) {
            const unsigned char *e = r->row + (size_t)j * t->esize;
            if (j) fputc(',', f);
            /* the element's bits, little endian on disk, as one hex number */
            uint64_t bits = 0;
            for (size_t b = t->esize; b-- > 0;) bits = bits << 8 | e[b];
            fprintf(f, "%0*llx", (int)(t->esize * 2), (unsigned long long)bits);
        }
        fputc('\n', f);
        (*lines)++;
    }
    return 0;
}

/* ---- load ------------------------------------------------------------------ */

typedef struct {
    char name[64];
    gsnap_dtype dtype;
    uint32_t dim;
    size_t esize, rb;
    gsnap_feat__rows buf;
} ltab;

typedef struct {
    ltab *tabs;
    size_t ntabs, cap;
} load_state;

static void load_end(void *vs) {
    load_state *s = vs;
    if (!s) return;
    for (size_t i = 0; i < s->ntabs; i++) gsnap_feat__rows_free(&s->tabs[i].buf);
    free(s->tabs);
    free(s);
}

/* One word (up to a space or the end) into out (cap bytes). */
static int word(const char **pp, char *out, size_t cap) {
    const char *p = *pp;
    size_t n = 0;
    while (*p && *p != ' ') {
        if (n + 1 >= cap) return -1;
        out[n++] = *p++;
    }
    if (!n) return -1;
    out[n] = 0;
    *pp = p;
    return 0;
}

#define PERR(...) gsnap_store__err(db, GSNAP_EPARSE, __VA_ARGS__)

static int load_attr_line(gsnap_db *db, load_state *s, gsnap_batch *b, const char *line, const char *name,
                          unsigned long long ln) {
    const char *p = line + 5;
    char tname[64], dt[16];
    uint64_t dim;
    gsnap_dtype dtype;
    if (b) return PERR("%s:%llu: 'attr' line after the first version (table definitions come first)", name, ln);
    if (word(&p, tname, sizeof tname) || *p++ != ' ' || word(&p, dt, sizeof dt) || *p++ != ' ' ||
        gsnap_dec_u64(&p, &dim) || *p)
        return PERR("%s:%llu: bad 'attr' line (expected 'attr NAME DTYPE DIM')", name, ln);
    if (!gsnap_feat__name_ok(tname))
        return PERR("%s:%llu: bad attribute table name '%s' (1..63 of [A-Za-z0-9_.-])", name, ln, tname);
    if (gsnap_dtype_parse(dt, &dtype)) return PERR("%s:%llu: attribute table '%s': unknown dtype '%s'", name, ln,
                                                   tname, dt);
    if (dim < 1 || dim > GSNAP_ATTR_MAX_DIM)
        return PERR("%s:%llu: attribute table '%s': dim %llu not in 1..%u", name, ln, tname,
                    (unsigned long long)dim, GSNAP_ATTR_MAX_DIM);
    for (size_t i = 0; i < s->ntabs; i++)
        if (strcmp(s->tabs[i].name, tname) == 0)
            return PERR("%s:%llu: attribute table '%s' defined twice", name, ln, tname);
    int rc = gsnap_attr_create(db, tname, dtype, (uint32_t)dim);
    if (rc) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", gsnap_db_errmsg(db));
        return gsnap_store__err(db, rc, "%s:%llu: %s", name, ln, msg);
    }
    if (s->ntabs == s->cap && (rc = gsnap_vec_reserve((void **)&s->tabs, &s->cap, s->ntabs + 1, sizeof *s->tabs)))
        return rc;
    ltab *t = &s->tabs[s->ntabs++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", tname);
    t->dtype = dtype;
    t->dim = (uint32_t)dim;
    t->esize = gsnap_dtype_size(dtype);
    t->rb = t->esize * (size_t)dim;
    return 0;
}

static int load_row_line(gsnap_db *db, load_state *s, gsnap_batch *b, const char *line, const char *name,
                         unsigned long long ln) {
    const char *p = line + 2;
    char tname[64];
    uint64_t node;
    int64_t t;
    if (word(&p, tname, sizeof tname) || *p++ != ' ' || gsnap_dec_u64(&p, &node) || *p++ != ' ' ||
        gsnap_dec_i64(&p, &t) || *p++ != ' ')
        return PERR("%s:%llu: bad attribute row (expected 'r TABLE NODE T HEX,HEX,...')", name, ln);
    if (!b) return PERR("%s:%llu: attribute row before any 'v' line", name, ln);
    ltab *tab = NULL;
    for (size_t i = 0; i < s->ntabs && !tab; i++)
        if (strcmp(s->tabs[i].name, tname) == 0) tab = &s->tabs[i];
    if (!tab) return PERR("%s:%llu: attribute row of table '%s', which no 'attr' line defines", name, ln, tname);
    if (t == GSNAP_TIME_MAX)
        return PERR("%s:%llu: attribute row of node %llu: time %lld is reserved for \"now\"", name, ln,
                    (unsigned long long)node, (long long)t);
    if (gsnap_feat__rows_reserve(&tab->buf, 1, tab->rb, 64)) return GSNAP_ENOMEM;
    unsigned char *dst = tab->buf.vals + tab->buf.n * tab->rb;
    int w = (int)tab->esize * 2;
    for (uint32_t j = 0; j < tab->dim; j++) {
        uint64_t bits = 0;
        for (int d = 0; d < w; d++, p++) {
            int h = gsnap_hex_digit(*p);
            if (h < 0)
                return PERR("%s:%llu: attribute table '%s' node %llu: element %u is not %d hex digits (%s)", name,
                            ln, tname, (unsigned long long)node, j, w, gsnap_dtype_name(tab->dtype));
            bits = bits << 4 | (unsigned)h;
        }
        if (*p != (j + 1 < tab->dim ? ',' : 0))
            return PERR("%s:%llu: attribute table '%s' node %llu: %s after element %u (the table has dim %u)", name,
                        ln, tname, (unsigned long long)node, *p ? "bad separator or too many digits" : "line ends",
                        j, tab->dim);
        p++;
        for (size_t k = 0; k < tab->esize; k++, bits >>= 8) dst[(size_t)j * tab->esize + k] = (unsigned char)bits;
    }
    tab->buf.nodes[tab->buf.n] = node;
    tab->buf.t[tab->buf.n] = t;
    tab->buf.n++;
    return 0;
}

static int load_line(gsnap_db *db, void **state, gsnap_batch *b, const char *line, const char *name,
                     uint64_t lineno, uint64_t *lines) {
    int is_attr = strncmp(line, "attr ", 5) == 0, is_row = line[0] == 'r' && line[1] == ' ';
    if (!is_attr && !is_row) return 1;
    load_state *s = *state;
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return GSNAP_ENOMEM;
        *state = s;
    }
    int rc = is_attr ? load_attr_line(db, s, b, line, name, (unsigned long long)lineno)
                     : load_row_line(db, s, b, line, name, (unsigned long long)lineno);
    if (rc == 0 && is_row) (*lines)++; /* the 'end' line counts rows */
    return rc;
}

/* Hand a version's buffered rows to its batch, one call per table. */
static int load_commit(gsnap_db *db, void *vs, gsnap_batch *b) {
    load_state *s = vs;
    (void)db;
    for (size_t i = 0; s && i < s->ntabs; i++) {
        ltab *t = &s->tabs[i];
        if (!t->buf.n) continue;
        int rc = gsnap_batch_set_attr(b, t->name, t->buf.nodes, t->buf.t, t->buf.vals, t->buf.n);
        t->buf.n = 0;
        if (rc) return rc;
    }
    return 0;
}

static const gsnap_dump_ext_ops attr_ext = {dump_begin, dump_version, dump_end, load_line, load_commit, load_end};

/* ---- the public functions ---------------------------------------------------- */

int gsnap_db_dump(gsnap_db *db, void *fp, const gsnap_dump_options *opts) {
    if (!db) return GSNAP_EINVAL;
    /* LMDB: a table handle opened after a read txn began is not valid in
     * that txn, so open the attribute tables before the dump's view begins
     * (absent tables: nothing to dump, dump_begin sees GSNAP_NOTFOUND). */
    MDB_dbi cat, rows;
    int rc = gsnap_store__table(db, GSNAP_ATTR_CAT_TABLE, 0, 0, &cat);
    if (rc == 0) rc = gsnap_store__table(db, GSNAP_ATTR_ROW_TABLE, 0, 0, &rows);
    if (rc && rc != GSNAP_NOTFOUND) return rc;
    return gsnap_store__dump(db, fp, opts, &attr_ext);
}

int gsnap_db_load(gsnap_db *db, void *fp, const char *name, const gsnap_load_options *opts,
                  gsnap_load_report *report) {
    return gsnap_store__load(db, fp, name, opts, report, &attr_ext);
}
