/*
 * bench/bench_store_fbl_src.h -- the baselines of bench_store_fbl.c: an
 * in-memory CSR (distinct in-neighbour lists for FBL, (node, t)-sorted
 * in-edges for queries) and the naive LMDB DUPSORT table. Included once, by
 * bench_store_fbl.c, after its helpers.
 */
/* ---- neighbour sources for the FBL loop ---- */

typedef struct { uint64_t *off; uint64_t *adj; uint64_t n; } csr_ids; /* distinct in-nbrs */
typedef struct { uint64_t *off; struct cent { uint64_t nbr; int64_t t; } *e; uint64_t n; } csr_t;

static void csr_build(csr_ids *g, csr_t *q, const edge *e, size_t m, uint64_t n) {
    g->n = q->n = n;
    g->off = calloc(n + 1, sizeof *g->off);
    q->off = calloc(n + 1, sizeof *q->off);
    for (size_t i = 0; i < m; i++) g->off[e[i].d + 1]++;
    for (uint64_t v = 0; v < n; v++) g->off[v + 1] += g->off[v];
    memcpy(q->off, g->off, (n + 1) * sizeof *q->off);
    uint64_t *pos = xmalloc(n * sizeof *pos);
    memcpy(pos, g->off, n * sizeof *pos);
    g->adj = xmalloc(m * sizeof *g->adj);
    q->e = xmalloc(m * sizeof *q->e);
    for (size_t i = 0; i < m; i++) {
        g->adj[pos[e[i].d]] = e[i].s;
        q->e[pos[e[i].d]++] = (struct cent){e[i].s, e[i].t};
    }
    uint64_t w = 0;
    for (uint64_t v = 0; v < n; v++) {
        uint64_t a = g->off[v], b = g->off[v + 1];
        qsort(g->adj + a, b - a, sizeof *g->adj, cmp_u64);
        /* (node, t) order for queries: sort by t (insertion into a copy is fine: mostly small) */
        for (uint64_t i = a + 1; i < b; i++) {
            struct cent x = q->e[i];
            uint64_t j = i;
            for (; j > a && q->e[j - 1].t > x.t; j--) q->e[j] = q->e[j - 1];
            q->e[j] = x;
        }
        g->off[v] = w;
        for (uint64_t i = a; i < b; i++)
            if (i == a || g->adj[i] != g->adj[i - 1]) g->adj[w++] = g->adj[i];
    }
    g->off[n] = w;
    free(pos);
}

static size_t csr_query(const csr_t *q, uint64_t v, int64_t T, gsnap_nbr *out) {
    if (v >= q->n) return 0;
    const struct cent *s = q->e + q->off[v];
    size_t lo = 0, hi = (size_t)(q->off[v + 1] - q->off[v]);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].t <= T) lo = mid + 1; else hi = mid;
    }
    for (size_t i = 0; i < lo; i++) { out[i].node = s[i].nbr; out[i].t = s[i].t; }
    return lo;
}

typedef struct {
    int kind; /* 0 csr, 1 lmdb */
    const csr_ids *g;
    MDB_cursor *cur;
    uint64_t *buf;
    size_t cap;
} src_t;

/* Distinct in-neighbours of v, ascending. */
static size_t nbrs(src_t *s, uint64_t v, const uint64_t **ids) {
    if (s->kind == 0) {
        if (v >= s->g->n) return 0;
        *ids = s->g->adj + s->g->off[v];
        return (size_t)(s->g->off[v + 1] - s->g->off[v]);
    }
    MDB_val k = {sizeof v, &v}, d;
    size_t n = 0;
    int rc = mdb_cursor_get(s->cur, &k, &d, MDB_SET_KEY);
    while (rc == 0) {
        if (d.mv_size != 24) die("lmdb", "bad duplicate size");
        if (n == s->cap) s->buf = realloc(s->buf, (s->cap = s->cap ? 2 * s->cap : 1024) * 8);
        uint64_t u = get_be64(d.mv_data); /* duplicates are in (nbr, t) order */
        if (!n || s->buf[n - 1] != u) s->buf[n++] = u;
        rc = mdb_cursor_get(s->cur, &k, &d, MDB_NEXT_DUP);
    }
    if (rc != MDB_NOTFOUND) mchk(rc, "cursor_get");
    *ids = s->buf;
    return n;
}

static int cmp_lr(const void *a, const void *b) { /* (node, nbr, tenc, vp) */
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* The naive LMDB table (in-edges only: FBL reads IN), bulk-loaded sorted, unsynced. */
static MDB_env *lm_load(const char *dir, const edge *e, size_t m, size_t batch, MDB_dbi *dbi) {
    MDB_env *env;
    mchk(mdb_env_create(&env), "env_create");
    mchk(mdb_env_set_maxdbs(env, 2), "maxdbs");
    mchk(mdb_env_set_mapsize(env, (size_t)1 << 38), "mapsize");
    mkdir(dir, 0755);
    mchk(mdb_env_open(env, dir, MDB_NOSYNC, 0644), "env_open");
    struct lr { uint64_t node, nbr, tenc, vp; } *r = xmalloc(m * sizeof *r);
    for (size_t i = 0; i < m; i++)
        r[i] = (struct lr){e[i].d, e[i].s, (uint64_t)e[i].t ^ 0x8000000000000000ull,
                           ((uint64_t)(i / batch + 1) << 20) | (uint64_t)(i % batch)};
    qsort(r, m, sizeof *r, cmp_lr);
    MDB_txn *txn;
    MDB_cursor *c;
    mchk(mdb_txn_begin(env, NULL, 0, &txn), "txn_begin");
    mchk(mdb_dbi_open(txn, "in", MDB_CREATE | MDB_DUPSORT | MDB_INTEGERKEY, dbi), "dbi_open");
    mchk(mdb_cursor_open(txn, *dbi, &c), "cursor");
    for (size_t i = 0; i < m; i++) {
        unsigned char val[24];
        put_be64(val, r[i].nbr), put_be64(val + 8, r[i].tenc), put_be64(val + 16, r[i].vp);
        MDB_val k = {8, &r[i].node}, v = {24, val};
        mchk(mdb_cursor_put(c, &k, &v, i && r[i - 1].node == r[i].node ? MDB_APPENDDUP : MDB_APPEND), "put");
    }
    mdb_cursor_close(c);
    mchk(mdb_txn_commit(txn), "commit");
    free(r);
    return env;
}
