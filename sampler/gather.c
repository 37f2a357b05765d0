/*
 * sampler/gather.c -- the rows of the attribute tables (options features /
 * labels) packed into each mini-batch, read at the sampler's (T, V) through
 * gsnap_attr_read, with a direct-mapped row cache in front of it.
 *
 * Why a cache: the nodes of consecutive batches overlap (hubs are in most
 * of them), and a row read at a fixed (T, V) never changes (attribute
 * history is append-only), so a frozen or pinned sampler can keep every row
 * it read. A fresh sampler's version moves: the cache is emptied then.
 * Misses of a batch are read with one gsnap_attr_read (sorted, one view).
 */
#include "sampler/sampler_int.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a caller's options: a version-1 struct ends before `features`, a
 * version-2 one before `workers`, a version-3 one before `policy`, a
 * version-4 one before `list_cache_bytes` (the fields after the end keep
 * their zero defaults). */
int gsnap_samp__copy_options(gsnap_sampler_options *o, const gsnap_sampler_options *opts) {
    memset(o, 0, sizeof *o);
    if (opts->version >= 1 && opts->version <= 4) {
        static const size_t end[4] = {offsetof(gsnap_sampler_options, features),
                                      offsetof(gsnap_sampler_options, workers),
                                      offsetof(gsnap_sampler_options, policy),
                                      offsetof(gsnap_sampler_options, list_cache_bytes)};
        memcpy(o, opts, end[opts->version - 1]);
        o->version = GSNAP_SAMPLER_OPTIONS_VERSION;
        return 0;
    }
    if (opts->version != GSNAP_SAMPLER_OPTIONS_VERSION) return GSNAP_EINVAL;
    *o = *opts;
    return 0;
}

/* Options features / labels: look the tables up, keep their names and shapes. */
int gsnap_samp__attr_setup(gsnap_sampler *s, gsnap_sampler_options *o) {
    const char *names[2] = {o->features, o->labels};
    uint32_t kinds[2] = {GSNAP_SAMP_ATTR_FEATURES, GSNAP_SAMP_ATTR_LABELS};
    s->nattr = 0;
    for (int i = 0; i < 2; i++) {
        if (!names[i]) continue;
        if (!s->db) return GSNAP_ENOTSUP; /* a source without a store (tests) */
        gsnap_attr_info info;
        int rc = gsnap_attr_info_get(s->db, names[i], &info);
        if (rc) return rc; /* the detail names the table */
        gsnap_samp__attr *a = &s->attr[s->nattr];
        a->kind = kinds[i];
        a->dtype = info.dtype;
        a->dim = info.dim;
        a->rows = 0;
        snprintf(s->attr_name[s->nattr], sizeof s->attr_name[0], "%s", names[i]);
        s->nattr++;
    }
    o->features = o->labels = NULL; /* the caller's strings are not kept */
    return 0;
}

void gsnap_samp__attr_rows(gsnap_sampler *s, uint32_t nsrc0, uint32_t nseeds) {
    for (unsigned i = 0; i < s->nattr; i++)
        s->attr[i].rows = s->attr[i].kind == GSNAP_SAMP_ATTR_FEATURES ? nsrc0 : nseeds;
}

void gsnap_samp__attr_free(gsnap_sampler *s) {
    for (unsigned i = 0; i < 2; i++) gsnap_samp__rowcache_free(&s->rowcache[i]);
}

void gsnap_samp__rowcache_free(gsnap_samp__rowcache *c) {
    free(c->tag);
    free(c->rows);
    free(c->miss);
    free(c->miss_pos);
    free(c->miss_rows);
    memset(c, 0, sizeof *c);
}

static int cache_init(gsnap_sampler *s, gsnap_samp__rowcache *c, size_t row_bytes) {
    size_t slots = GSNAP_SAMP_ROWCACHE_BYTES / (row_bytes + 8);
    if (s->nbound && s->nbound < slots) slots = (size_t)s->nbound; /* every node has its own slot */
    if (slots == 0) slots = 1;
    c->tag = calloc(slots, sizeof *c->tag);
    c->rows = malloc(slots * row_bytes);
    if (!c->tag || !c->rows) {
        gsnap_samp__rowcache_free(c);
        return GSNAP_ENOMEM;
    }
    c->slots = slots;
    c->row_bytes = row_bytes;
    c->version = s->version;
    return 0;
}

static int reserve_miss(gsnap_samp__rowcache *c, size_t n) {
    if (n <= c->miss_cap) return 0;
    size_t cap = c->miss_cap ? c->miss_cap : 1024;
    while (cap < n) cap *= 2;
    uint64_t *m = realloc(c->miss, cap * sizeof *m);
    if (m) c->miss = m;
    size_t *p = realloc(c->miss_pos, cap * sizeof *p);
    if (p) c->miss_pos = p;
    unsigned char *r = realloc(c->miss_rows, cap * c->row_bytes);
    if (r) c->miss_rows = r;
    if (!m || !p || !r) return GSNAP_ENOMEM;
    c->miss_cap = cap;
    return 0;
}

static int gather(gsnap_sampler *s, unsigned i, const uint64_t *nodes, size_t n, void *out) {
    gsnap_samp__rowcache *c = &s->rowcache[i];
    size_t rb = (size_t)s->attr[i].dim * gsnap_dtype_size(s->attr[i].dtype);
    int rc;
    if (!c->tag && (rc = cache_init(s, c, rb))) return rc;
    if (c->version != s->version) { /* a fresh sampler moved on: rows may differ */
        memset(c->tag, 0, c->slots * sizeof *c->tag);
        c->version = s->version;
    }
    if ((rc = reserve_miss(c, n))) return rc;
    unsigned char *o = out;
    size_t nm = 0;
    for (size_t k = 0; k < n; k++) {
        size_t slot = (size_t)(nodes[k] % c->slots);
        if (c->tag[slot] == nodes[k] + 1 && nodes[k] != UINT64_MAX) {
            memcpy(o + k * rb, c->rows + slot * rb, rb);
        } else {
            c->miss[nm] = nodes[k];
            c->miss_pos[nm++] = k;
        }
    }
    c->hits += n - nm;
    c->misses += nm;
    if (nm == 0) return 0;
    rc = gsnap_attr_read(s->db, NULL, s->attr_name[i], c->miss, nm, s->rp.at_t, s->version, c->miss_rows, NULL);
    if (rc) return rc;
    for (size_t k = 0; k < nm; k++) {
        const unsigned char *row = c->miss_rows + k * rb;
        memcpy(o + c->miss_pos[k] * rb, row, rb);
        size_t slot = (size_t)(c->miss[k] % c->slots);
        memcpy(c->rows + slot * rb, row, rb);
        c->tag[slot] = c->miss[k] + 1;
    }
    return 0;
}

int gsnap_samp__gather_all(gsnap_sampler *s, const uint64_t *src0, const uint64_t *seeds) {
    if (!s->nattr) return 0;
    double t0 = gsnap_now();
    int rc = 0;
    for (unsigned i = 0; i < s->nattr && rc == 0; i++) {
        int feat = s->attr[i].kind == GSNAP_SAMP_ATTR_FEATURES;
        rc = gather(s, i, feat ? src0 : seeds, (size_t)s->attr[i].rows, s->adata[i]);
    }
    s->st.t_gather += gsnap_now() - t0;
    return rc;
}
