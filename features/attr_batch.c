/*
 * features/attr_batch.c -- attribute updates in a batch: gathered per table
 * by gsnap_batch_set_attr and written at the batch's commit through the
 * store's extension hook (in the commit's txn, with its version).
 */
#include "features/features_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsnap_feat__rows_reserve(gsnap_feat__rows *r, size_t more, size_t row_bytes, size_t first) {
    if (r->n + more <= r->cap) return 0;
    size_t nc = r->cap ? r->cap : first;
    while (nc < r->n + more) nc *= 2;
    uint64_t *nn = realloc(r->nodes, nc * sizeof *nn);
    if (nn) r->nodes = nn;
    int64_t *nt = realloc(r->t, nc * sizeof *nt);
    if (nt) r->t = nt;
    unsigned char *nv = realloc(r->vals, nc * row_bytes);
    if (nv) r->vals = nv;
    if (!nn || !nt || !nv) return GSNAP_ENOMEM;
    r->cap = nc;
    return 0;
}

void gsnap_feat__rows_free(gsnap_feat__rows *r) {
    free(r->nodes);
    free(r->t);
    free(r->vals);
    memset(r, 0, sizeof *r);
}

/* Rows buffered for one table. */
typedef struct {
    char name[64];
    uint32_t id;
    uint32_t row_bytes;
    gsnap_feat__rows buf;
} pend_table;

typedef struct {
    MDB_dbi cat, rows;
    pend_table *tabs;
    size_t ntabs;
    uint32_t *order; /* scratch: sort permutation */
} pend_state;

static void pend_release(void *vs) {
    pend_state *s = vs;
    if (!s) return;
    for (size_t i = 0; i < s->ntabs; i++) gsnap_feat__rows_free(&s->tabs[i].buf);
    free(s->tabs);
    free(s->order);
    free(s);
}

static _Thread_local const pend_table *tl_sort_tab;

static int cmp_row(const void *a, const void *b) {
    const pend_table *p = tl_sort_tab;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (p->buf.nodes[i] != p->buf.nodes[j]) return p->buf.nodes[i] < p->buf.nodes[j] ? -1 : 1;
    if (p->buf.t[i] != p->buf.t[j]) return p->buf.t[i] < p->buf.t[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int write_table(gsnap_db *db, MDB_txn *txn, pend_state *s, pend_table *p, uint64_t version) {
    struct gsnap_attr_cat e;
    int rc = gsnap_feat__cat_get(db, txn, s->cat, p->name, &e);
    if (rc) return rc;
    if (e.id != p->id || (size_t)e.dim * gsnap_dtype_size((gsnap_dtype)e.dtype) != p->row_bytes)
        return gsnap_store__err(db, GSNAP_ESTATE, "attribute table '%s' changed while the batch was open", p->name);
    uint32_t *ord = s->order;
    for (size_t i = 0; i < p->buf.n; i++) ord[i] = (uint32_t)i;
    tl_sort_tab = p;
    qsort(ord, p->buf.n, sizeof *ord, cmp_row);
    MDB_cursor *cur = NULL;
    if ((rc = gsnap_store__mdb_err(db, mdb_cursor_open(txn, s->rows, &cur), "opening attribute rows")))
        return rc;
    uint64_t written = 0;
    for (size_t k = 0; k < p->buf.n && rc == 0; k++) {
        uint32_t i = ord[k];
        /* several updates of one (node, t): the last one wins */
        if (k + 1 < p->buf.n && p->buf.nodes[ord[k + 1]] == p->buf.nodes[i] && p->buf.t[ord[k + 1]] == p->buf.t[i])
            continue;
        unsigned char key[GSNAP_ATTR_KEY];
        gsnap_feat__key(key, p->id, p->buf.nodes[i], p->buf.t[i], version);
        MDB_val kv = {GSNAP_ATTR_KEY, key}, vv = {(size_t)p->row_bytes + 8, NULL};
        rc = gsnap_store__mdb_err(db, mdb_cursor_put(cur, &kv, &vv, MDB_RESERVE), "writing attribute rows");
        if (rc) break;
        const unsigned char *row = p->buf.vals + (size_t)i * p->row_bytes;
        memcpy(vv.mv_data, row, p->row_bytes);
        uint64_t sum = gsnap_feat__row_sum(key, row, p->row_bytes);
        memcpy((unsigned char *)vv.mv_data + p->row_bytes, &sum, 8);
        written++;
    }
    mdb_cursor_close(cur);
    if (rc) return rc;
    e.updates += written;
    e.xxh3 = gsnap_feat__cat_sum(&e);
    MDB_val nk = {strlen(p->name), p->name}, nv = {sizeof e, &e};
    return gsnap_store__mdb_err(db, mdb_put(txn, s->cat, &nk, &nv, 0), "updating the attribute catalog");
}

static int pend_commit(gsnap_db *db, MDB_txn *txn, uint64_t version, void *vs) {
    pend_state *s = vs;
    size_t maxn = 0;
    for (size_t i = 0; i < s->ntabs; i++)
        if (s->tabs[i].buf.n > maxn) maxn = s->tabs[i].buf.n;
    if (!s->order && maxn && !(s->order = malloc(maxn * sizeof *s->order))) return GSNAP_ENOMEM;
    for (size_t i = 0; i < s->ntabs; i++) {
        if (s->tabs[i].buf.n == 0) continue;
        int rc = write_table(db, txn, s, &s->tabs[i], version);
        if (rc) return rc;
    }
    return 0;
}

static const gsnap_batch_ext_ops pend_ops = {pend_commit, pend_release};

static int grow(void **p, size_t elem, size_t cap) {
    void *np = realloc(*p, elem * cap);
    if (!np) return GSNAP_ENOMEM;
    *p = np;
    return 0;
}

int gsnap_batch_set_attr(gsnap_batch *b, const char *name, const uint64_t *nodes,
                         const int64_t *t, const void *values, size_t n) {
    gsnap_db *db = gsnap_batch__db(b);
    if (!db) return GSNAP_EINVAL;
    if (!gsnap_feat__name_ok(name))
        return gsnap_store__err(db, GSNAP_EINVAL, "bad attribute table name '%s'", name ? name : "(null)");
    if (n && (!nodes || !values))
        return gsnap_store__err(db, GSNAP_EINVAL, "set_attr '%s': nodes and values must not be NULL", name);
    if (n > UINT32_MAX) return gsnap_store__err(db, GSNAP_ERANGE, "set_attr '%s': too many rows in one call", name);
    for (size_t i = 0; t && i < n; i++)
        if (t[i] == GSNAP_TIME_MAX)
            return gsnap_store__err(db, GSNAP_ERANGE, "set_attr '%s': node %llu: time %lld is reserved for \"now\"",
                                    name, (unsigned long long)nodes[i], (long long)t[i]);
    pend_state *s = NULL;
    int rc = gsnap_batch__ext(b, &pend_ops, (void **)&s);
    if (rc) return rc;
    MDB_dbi cat, rows;
    struct gsnap_attr_cat e;
    if ((rc = gsnap_feat__cat_lookup(db, name, &cat, &rows, &e))) return rc;
    if (n == 0) return 0;
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) goto nomem;
        s->cat = cat;
        s->rows = rows;
        if ((rc = gsnap_batch__ext_attach(b, &pend_ops, s))) {
            free(s);
            return rc;
        }
    }
    pend_table *p = NULL;
    for (size_t i = 0; i < s->ntabs; i++)
        if (strcmp(s->tabs[i].name, name) == 0) p = &s->tabs[i];
    if (!p) {
        if (grow((void **)&s->tabs, sizeof *s->tabs, s->ntabs + 1)) goto nomem;
        p = &s->tabs[s->ntabs++];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", name);
        p->id = e.id;
        p->row_bytes = (uint32_t)(e.dim * gsnap_dtype_size((gsnap_dtype)e.dtype));
    }
    if (p->buf.n + n > UINT32_MAX)
        return gsnap_store__err(db, GSNAP_ERANGE, "set_attr '%s': more than 2^32 rows in one batch", name);
    if (gsnap_feat__rows_reserve(&p->buf, n, p->row_bytes, 1024)) goto nomem;
    memcpy(p->buf.nodes + p->buf.n, nodes, n * 8);
    if (t) memcpy(p->buf.t + p->buf.n, t, n * 8);
    else memset(p->buf.t + p->buf.n, 0, n * 8);
    memcpy(p->buf.vals + p->buf.n * p->row_bytes, values, n * p->row_bytes);
    p->buf.n += n;
    return 0;
nomem:
    gsnap_batch__fail(b);
    return gsnap_store__err(db, GSNAP_ENOMEM, "set_attr '%s': out of memory buffering %zu rows", name, n);
}
