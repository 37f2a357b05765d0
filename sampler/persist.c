/*
 * sampler/persist.c -- the snapshot's (hop, node) table behind a cache image.
 *
 * Per-layer caches live under hop h = 1..L, the shared cache under hop 0.
 * Loading reads every entry of the image's cached nodes in ONE read txn, so
 * the image is exactly one generation of the table. A refresh writes its
 * entries and generation + 1 in ONE write txn (gsnap_store__write): readers
 * see all of it or none of it. An entry shorter than the sampler needs
 * (fewer than min(alpha*f, degree) ids, or no hop 0 entry yet) is drawn
 * from the store and written back at open, as a new generation.
 * A frozen sampler redraws, in memory only, every loaded entry recorded at a
 * version above its snapshot's (written by a fresh sampler, it may hold
 * edges the snapshot's (T, V) does not have); a fresh sampler writes no entry
 * for a node without neighbours at the snapshot's (T, V) (no new table keys:
 * the catalog counts the snapshot's nodes). docs/sampler.md.
 */
#include "sampler/sampler_int.h"
#include <assert.h>
#include "snapshot/snapshot.h"
#include <stdlib.h>
#include <string.h>

void (*gsnap_samp__in_txn_hook)(void);

int gsnap_samp__persist_open(gsnap_sampler *s, const char *name) {
    /* Open the catalog table before any read txn of ours begins: an LMDB
     * table handle opened while a read txn is live is not valid in that txn
     * (an early snapshot module failed with EINVAL on a fresh db handle). */
    int rc = gsnap_snapshot__open_catalog(s->db);
    if (rc && rc != GSNAP_NOTFOUND) return rc;
    rc = gsnap_snapshot_open(s->db, name, &s->snap);
    if (rc) return rc;
    if (!(s->snap_name = strdup(name))) return GSNAP_ENOMEM;
    return 0;
}

void gsnap_samp__persist_close(gsnap_sampler *s) {
    gsnap_snapshot_close(s->snap);
    s->snap = NULL;
    free(s->snap_name);
    s->snap_name = NULL;
}

int gsnap_samp__persist_generation(gsnap_sampler *s, uint64_t *gen) {
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(s->db, &rd);
    if (rc) return rc;
    rc = gsnap_snapshot__generation(s->snap, gsnap_read__txn(rd), gen);
    gsnap_read_end(rd);
    return rc;
}

/* ---- writing ------------------------------------------------------------------ */

typedef struct {
    gsnap_sampler *s;
    const gsnap_samp__image *im;
    const uint64_t *nodes; /* NULL: every cached node */
    size_t n;
    uint64_t old_gen, new_gen;
} save_ctx;

/* Does node v have a key at hop 1, i.e. neighbours at the snapshot's (T, V)?
 * (The build writes a key for such nodes at every hop 1..k and no other.) */
static int in_snapshot(save_ctx *c, MDB_txn *txn, uint64_t v, int *yes) {
    size_t n = 0;
    int rc = gsnap_snapshot__cache_get(c->s->snap, txn, 1, v, NULL, 0, &n, NULL, NULL);
    *yes = rc == 0 || rc == GSNAP_ERANGE;
    return rc == 0 || rc == GSNAP_ERANGE || rc == GSNAP_NOTFOUND ? 0 : rc;
}

static int put_node(save_ctx *c, MDB_txn *txn, uint64_t v) {
    const gsnap_samp__image *im = c->im;
    if (c->s->o.max_staleness >= 0) {
        /* A fresh sampler never adds keys for nodes that only gained
         * neighbours after the snapshot's version (the catalog counts the
         * snapshot's nodes); their entries stay in its memory. */
        int yes = 0;
        int rc = in_snapshot(c, txn, v, &yes);
        if (rc || !yes) return rc;
    }
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *ca = &im->caches[i];
        if (v >= im->nnodes || ca->cap == 0 || ca->cnt[v] == GSNAP_SAMP_UNCACHED) continue;
        if (ca->cnt[v] == 0 && im->deg[v] == 0) continue; /* no neighbours: no entry */
        int rc = gsnap_snapshot__cache_put(c->s->snap, txn, c->s->rp.hops[i], v,
                                           ca->ids + v * ca->cap, ca->cnt[v], c->new_gen,
                                           ca->ver[v]);
        if (rc) return rc;
    }
    return 0;
}

static int save_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    save_ctx *c = vctx;
    (void)db;
    int rc = gsnap_snapshot__generation(c->s->snap, txn, &c->old_gen);
    if (rc) return rc;
    c->new_gen = c->old_gen + 1;
    assert(c->new_gen > c->old_gen);
    if (c->nodes) {
        for (size_t i = 0; i < c->n; i++)
            if ((rc = put_node(c, txn, c->nodes[i]))) return rc;
    } else {
        for (uint64_t v = 0; v < c->im->nnodes; v++)
            if ((rc = put_node(c, txn, v))) return rc;
    }
    if ((rc = gsnap_snapshot__set_generation(c->s->snap, txn, c->new_gen))) return rc;
    if (gsnap_samp__in_txn_hook) gsnap_samp__in_txn_hook();
    return 0;
}

int gsnap_samp__persist_save(gsnap_sampler *s, const gsnap_samp__image *im,
                             const uint64_t *nodes, size_t n, uint64_t base_gen, uint64_t *gen,
                             int *mixed) {
    save_ctx c = {s, im, nodes, n, 0, 0};
    int rc = gsnap_store__write(s->db, save_fn, &c);
    if (rc) return rc;
    /* A partial write on top of another writer's generation leaves this
     * image different from the table: the caller forces a reload at the
     * next batch. The generation number stays the committed one. */
    *gen = c.new_gen;
    *mixed = nodes && c.old_gen != base_gen;
    return 0;
}

/* ---- loading ------------------------------------------------------------------- */

/* What one loading pass collects: entries to draw from the store at open
 * (missing or too short) and entries to redraw in memory (frozen sampler). */
typedef struct {
    uint64_t *buf;      /* one entry as read from the table */
    size_t bcap;
    uint32_t *pick;     /* subsample positions */
    uint64_t *fix;      /* nodes with an entry to draw and write back */
    size_t nfix, fixcap;
    uint64_t *redo;     /* node << 5 | cache index: entries to redraw at (T, V) */
    size_t nredo, redocap;
    gsnap_samp__scratch sc;
} load_state;

static void load_state_free(load_state *ls) {
    free(ls->buf);
    free(ls->pick);
    free(ls->fix);
    free(ls->redo);
    gsnap_samp__scratch_free(&ls->sc);
    memset(ls, 0, sizeof *ls);
}

static int push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t x) {
    if (gsnap_vec_reserve((void **)a, cap, *n + 1, sizeof **a)) return GSNAP_ENOMEM;
    (*a)[(*n)++] = x;
    return 0;
}

/* Entry (cache i, node v) absent from the table: a node without neighbours
 * at the snapshot's (T, V) gets an empty entry; one with neighbours is drawn
 * from the store and written back (*need_fix). */
static void absent_entry(gsnap_sampler *s, gsnap_samp__image *im, unsigned i, uint64_t v, int *need_fix) {
    gsnap_samp__cache *c = &im->caches[i];
    if (im->deg[v] == 0) { /* no neighbours at the snapshot's (T, V) */
        c->cnt[v] = 0;
        c->ver[v] = s->rp.as_of; /* what an absent key reflects */
    } else {
        *need_fix = 1;
    }
}

/* Use entry (cache i, node v) read from the table (its n ids in ls->buf,
 * generation egen, version ever); *need_fix = 1 when it must be drawn from
 * the store and written back (too short). */
static int use_entry(gsnap_sampler *s, gsnap_samp__image *im, load_state *ls, unsigned i, uint64_t v, size_t n,
                     uint64_t egen, uint64_t ever, int *need_fix) {
    gsnap_samp__cache *c = &im->caches[i];
    unsigned hop = s->rp.hops[i];
    if (s->o.max_staleness < 0 && ever > s->rp.as_of) {
        /* A frozen sampler finds an entry drawn by a fresh sampler at a newer
         * version: it may hold edges that do not exist at this snapshot's
         * (T, V). Redrawn at (T, V), in memory only. */
        return push_u64(&ls->redo, &ls->nredo, &ls->redocap, v << 5 | i);
    }
    size_t deg = im->deg[v];
    size_t want = c->cap < deg ? c->cap : deg;
    if (n < want) { *need_fix = 1; return 0; } /* too short: keep the drawn one */
    uint64_t *dst = c->ids + v * c->cap;
    if (n > c->cap) { /* subsample uniformly */
        gsnap_samp__key k = {s->rp.seed, (uint64_t)GSNAP_P_BUILD << 8 | hop, v, egen};
        long got = gsnap_samp__choose(&k, n, c->cap, ls->pick, &ls->sc);
        if (got < 0) return GSNAP_ENOMEM;
        for (long j = 0; j < got; j++) dst[j] = ls->buf[ls->pick[j]];
        c->cnt[v] = (uint32_t)got;
    } else {
        memcpy(dst, ls->buf, n * sizeof *ls->buf);
        c->cnt[v] = (uint32_t)n;
    }
    c->ver[v] = ever;
    return 0;
}

/* One cache's table walk: entries in node order, each copied out of the map
 * and used; the cached nodes the walk does not meet are absent. */
typedef struct {
    gsnap_sampler *s;
    gsnap_samp__image *im;
    load_state *ls;
    unsigned i;
    uint64_t next;      /* nodes below it are done */
    uint8_t *fix;       /* per node: needs a draw from the store */
} walk_ctx;

static void absent_below(walk_ctx *w, uint64_t end) {
    gsnap_samp__cache *c = &w->im->caches[w->i];
    for (; w->next < end; w->next++) {
        int need_fix = 0;
        if (c->cnt[w->next] == GSNAP_SAMP_UNCACHED) continue;
        absent_entry(w->s, w->im, w->i, w->next, &need_fix);
        w->fix[w->next] |= (uint8_t)need_fix;
    }
}

static int walk_entry(void *vctx, const gsnap_snapshot__entry *e) {
    walk_ctx *w = vctx;
    gsnap_samp__cache *c = &w->im->caches[w->i];
    load_state *ls = w->ls;
    if (e->node >= w->im->nnodes) return 0;
    absent_below(w, e->node);
    w->next = e->node + 1;
    if (c->cnt[e->node] == GSNAP_SAMP_UNCACHED) return 0;
    if (e->n > ls->bcap) {
        uint64_t *nb = realloc(ls->buf, (size_t)e->n * sizeof *nb);
        if (!nb) return GSNAP_ENOMEM;
        ls->buf = nb;
        ls->bcap = e->n;
    }
    if (e->n) memcpy(ls->buf, e->ids, (size_t)e->n * 8);
    int need_fix = 0;
    int rc = use_entry(w->s, w->im, ls, w->i, e->node, e->n, e->gen, e->version, &need_fix);
    w->fix[e->node] |= (uint8_t)need_fix;
    return rc;
}

/* Every cached entry of the image from the table, in ONE read txn: one
 * cursor pass per cache over its hop's keys (node order), not a lookup per
 * node and cache. */
static int load_entries(gsnap_sampler *s, gsnap_samp__image *im, load_state *ls, uint64_t *gen) {
    gsnap_read *rd = NULL;
    uint8_t *fix = calloc(im->nnodes ? (size_t)im->nnodes : 1, 1);
    if (!fix) return GSNAP_ENOMEM;
    int rc = gsnap_read_begin(s->db, &rd);
    if (rc) { free(fix); return rc; }
    MDB_txn *txn = gsnap_read__txn(rd);
    rc = gsnap_snapshot__generation(s->snap, txn, gen);
    for (unsigned i = 0; rc == 0 && i < im->ncache; i++) {
        if (im->caches[i].cap == 0) continue;
        walk_ctx w = {s, im, ls, i, 0, fix};
        rc = gsnap_snapshot__walk(s->snap, txn, s->rp.hops[i], walk_entry, &w);
        if (rc == 0) absent_below(&w, im->nnodes);
    }
    gsnap_read_end(rd);
    for (uint64_t v = 0; rc == 0 && v < im->nnodes; v++)
        if (fix[v]) rc = push_u64(&ls->fix, &ls->nfix, &ls->fixcap, v);
    free(fix);
    return rc;
}

/* Frozen sampler: redraw the entries newer than the snapshot at its (T, V). */
static int redraw_newer(gsnap_sampler *s, gsnap_samp__image *im, load_state *ls) {
    int rc = s->src->begin(s->src, s->rp.at_t, s->rp.as_of);
    if (rc) return rc;
    for (size_t j = 0; j < ls->nredo && rc == 0; j++) {
        uint64_t v = ls->redo[j] >> 5;
        unsigned i = (unsigned)(ls->redo[j] & 31);
        const uint64_t *full = NULL;
        size_t d = 0;
        uint64_t rep = 0;
        if ((rc = s->src->nbrs(s->src, v, &full, &d))) break;
        rc = gsnap_samp__entry_refresh(&im->caches[i], s->rp.hops[i], v, full, d, &s->rp,
                                       im->gen, s->rp.as_of, 1, &ls->sc, &rep, NULL);
    }
    s->src->end(s->src);
    return rc;
}

/* Entries the table lacks, when no scan drew a fallback (first load reads
 * degrees from the table): drawn per node from the store at (T, V). */
static int draw_missing(gsnap_sampler *s, gsnap_samp__image *im, load_state *ls) {
    int rc = s->src->begin(s->src, s->rp.at_t, s->rp.as_of);
    if (rc) return rc;
    for (size_t j = 0; j < ls->nfix && rc == 0; j++) {
        uint64_t v = ls->fix[j];
        const uint64_t *full = NULL;
        size_t d = 0;
        if ((rc = s->src->nbrs(s->src, v, &full, &d))) break;
        for (unsigned i = 0; i < im->ncache && rc == 0; i++) {
            gsnap_samp__cache *c = &im->caches[i];
            uint64_t rep = 0;
            if (c->cap == 0 || c->cnt[v] == GSNAP_SAMP_UNCACHED) continue;
            c->cnt[v] = 0;
            rc = gsnap_samp__entry_refresh(c, s->rp.hops[i], v, full, d, &s->rp, im->gen, s->rp.as_of, 1, &ls->sc,
                                           &rep, NULL);
        }
    }
    s->src->end(s->src);
    return rc;
}

/* One loading pass. *again = 1 when writing back the drawn entries found
 * another writer's generation in between: the image must be loaded again. */
static int load_pass(gsnap_sampler *s, gsnap_samp__image *im, uint64_t *gen, int *again, int first) {
    load_state ls = {0};
    uint32_t maxcap = 1;
    int rc = 0;
    *again = 0;
    for (unsigned i = 0; i < im->ncache; i++)
        if (im->caches[i].cap > maxcap) maxcap = im->caches[i].cap;
    ls.bcap = 4096;
    ls.buf = malloc(ls.bcap * sizeof *ls.buf);
    ls.pick = malloc(maxcap * sizeof *ls.pick);
    if (!ls.buf || !ls.pick) rc = GSNAP_ENOMEM;
    if (rc == 0) rc = load_entries(s, im, &ls, gen);
    if (rc == 0) {
        im->gen = *gen;
        im->mixed = 0;
    }
    if (rc == 0 && ls.nredo) rc = redraw_newer(s, im, &ls);
    if (rc == 0 && ls.nfix && first) rc = draw_missing(s, im, &ls);
    if (rc == 0 && ls.nfix && !gsnap_store__read_only(s->db)) {
        /* write the entries drawn here as the next generation */
        int mixed = 0;
        rc = gsnap_samp__persist_save(s, im, ls.fix, ls.nfix, im->gen, &im->gen, &mixed);
        if (rc == 0 && mixed) *again = 1; /* someone else wrote meanwhile */
        else if (rc == 0) *gen = im->gen;
    }
    load_state_free(&ls);
    return rc;
}

/* Degrees (the threshold split) from the degree field of the snapshot's
 * hop-1 records, one verified cursor pass over the table: O(nodes with
 * edges), no store scan. Nodes without a record have no neighbours at
 * (T, V). Entries start empty; persist_load fills them from the table and
 * draws (from the store, per node) only those the table lacks. */
typedef struct { gsnap_sampler *s; gsnap_samp__image *im; } deg_ctx;

static int deg_entry(void *vctx, const gsnap_snapshot__entry *e) {
    deg_ctx *d = vctx;
    gsnap_samp__image *im = d->im;
    if (e->node >= im->nnodes) return 0;
    im->deg[e->node] = e->degree;
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        if (c->cap && e->degree > d->s->rp.threshold) c->cnt[e->node] = 0; /* cached: filled from the table */
    }
    return 0;
}

static int degrees_from_table(gsnap_sampler *s, gsnap_samp__image *im) {
    size_t nn = im->nnodes ? (size_t)im->nnodes : 1;
    uint32_t none = s->rp.threshold == 0 ? 0 : GSNAP_SAMP_UNCACHED;
    memset(im->deg, 0, nn * sizeof *im->deg);
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        for (size_t v = 0; v < nn; v++) {
            c->cnt[v] = c->cap ? none : GSNAP_SAMP_UNCACHED;
            c->ver[v] = s->rp.as_of;
        }
    }
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(s->db, &rd);
    if (rc) return rc;
    deg_ctx d = {s, im};
    rc = gsnap_snapshot__walk(s->snap, gsnap_read__txn(rd), 1, deg_entry, &d);
    gsnap_read_end(rd);
    return rc;
}

int gsnap_samp__persist_load(gsnap_sampler *s, gsnap_samp__image *im, uint64_t *gen) {
    im->hot_ok = 0; /* entries are rewritten: the serving view is out of step */
    int rc, again = 0, first = !s->loaded;
    if (first) { /* degrees from the table (no store scan); entries drawn when missing */
        if ((rc = degrees_from_table(s, im))) return rc;
        s->loaded = 1;
    }
    do {
        rc = load_pass(s, im, gen, &again, first);
        first = 0; /* a second pass reloads what the first wrote */
    } while (rc == 0 && again);
    return rc;
}
