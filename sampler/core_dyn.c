/*
 * sampler/core_dyn.c -- a cached core that follows the batches (issue 18).
 *
 * With options.core_min > 0, the nodes that hold a cache entry (the core)
 * are chosen at run time: a node whose frontier appearances over the last
 * `window` batches reach core_min joins the core at the next scheduled
 * refresh (its entry drawn from the store at the batch's version), one
 * below core_min leaves (its entry dropped; it is served from the store).
 * Candidates are nodes of degree above options.threshold (any node with
 * threshold 0). With options.core_max_bytes, the core holds the hottest
 * candidates (ties: smaller id first) whose bytes fit the bound; at open the
 * static degree core is cut to the bound the same way (highest degree
 * first). A member's bytes: the sum over caches of 20 + 12 * cap (u64 ids,
 * u32 count, u64 version, u32 serving slot of 2 + cap words: count, stamp,
 * ids).
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

static uint64_t member_bytes(const gsnap_sampler *s) {
    uint64_t b = 0;
    for (unsigned i = 0; s->im && i < s->im->ncache; i++)
        if (s->im->caches[i].cap) b += 20 + 12 * (uint64_t)s->im->caches[i].cap;
    return b;
}

static int is_member(const gsnap_samp__image *im, uint64_t v) {
    for (unsigned i = 0; i < im->ncache; i++)
        if (im->caches[i].cap && im->caches[i].cnt[v] != GSNAP_SAMP_UNCACHED) return 1;
    return 0;
}

void gsnap_samp__core_count(const gsnap_sampler *s, uint64_t *nodes, uint64_t *bytes) {
    uint64_t n = 0;
    for (uint64_t v = 0; s->im && v < s->im->nnodes; v++) n += (uint64_t)is_member(s->im, v);
    *nodes = n;
    *bytes = n * member_bytes(s);
}

typedef struct {
    uint32_t key;
    uint32_t id;
} cand;

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* want[v] = 1 for the chosen members among the candidates (key >= min and
 * eligible), hottest first within ad->max_bytes. */
static int select_core(gsnap_sampler *s, const uint32_t *key, uint32_t min, int among_members,
                       unsigned char *want) {
    struct gsnap_samp__adapt *ad = s->ad;
    const gsnap_samp__image *im = s->im;
    cand *c = malloc((im->nnodes ? im->nnodes : 1) * sizeof *c);
    if (!c) return GSNAP_ENOMEM;
    size_t n = 0;
    for (uint64_t v = 0; v < im->nnodes; v++) {
        if (key[v] < min) continue;
        if (among_members ? !is_member(im, v) : im->deg[v] <= s->o.threshold && s->o.threshold)
            continue;
        c[n++] = (cand){key[v], (uint32_t)v};
    }
    qsort(c, n, sizeof *c, cand_cmp);
    uint64_t mb = member_bytes(s);
    size_t take = n;
    if (ad->max_bytes && mb) {
        uint64_t fit = ad->max_bytes / mb;
        if (fit < take) take = (size_t)fit;
    }
    memset(want, 0, im->nnodes ? (size_t)im->nnodes : 1);
    for (size_t i = 0; i < take; i++) want[c[i].id] = 1;
    ad->capped = n - take;
    free(c);
    return 0;
}

/* Make membership equal want[]: joiners drawn whole from the view, leavers
 * dropped; the serving view follows entry by entry. */
static int apply_core(gsnap_sampler *s, const unsigned char *want) {
    struct gsnap_samp__adapt *ad = s->ad;
    gsnap_samp__image *im = s->im;
    for (uint64_t v = 0; v < im->nnodes; v++) {
        int is = is_member(im, v);
        if (is == want[v]) continue;
        for (unsigned i = 0; i < im->ncache; i++) {
            gsnap_samp__cache *c = &im->caches[i];
            if (!c->cap) continue;
            if (want[v]) { /* drawn whole from the batch's view (cache.c) */
                const uint64_t *full;
                size_t d;
                uint64_t rep = 0;
                int rc = s->src->nbrs(s->src, v, &full, &d);
                c->cnt[v] = 0;
                c->ver[v] = 0;
                if (!rc)
                    rc = gsnap_samp__entry_refresh(c, s->rp.hops[i], v, full, d, &s->rp, im->gen,
                                                   s->version, 1, &s->sc, &rep, NULL);
                if (rc) { /* v stays out of every cache: no half-made member */
                    for (unsigned k = 0; k <= i; k++) {
                        im->caches[k].cnt[v] = GSNAP_SAMP_UNCACHED;
                        gsnap_samp__hot_node(im, &im->caches[k], v);
                    }
                    return rc;
                }
                gsnap_samp__hot_node(im, c, v);
            } else {
                c->cnt[v] = GSNAP_SAMP_UNCACHED;
                gsnap_samp__hot_node(im, c, v);
            }
        }
        if (want[v])
            ad->joined++;
        else
            ad->left++;
    }
    return 0;
}

int gsnap_samp__core_init(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad || !ad->dyn || !s->im) return 0;
    ad->nfreq = s->im->nnodes;
    size_t nf = ad->nfreq ? (size_t)ad->nfreq : 1;
    if (!(ad->freq = calloc(nf, sizeof *ad->freq))) return GSNAP_ENOMEM;
    if (!(ad->rids = calloc(ad->window, sizeof *ad->rids))) return GSNAP_ENOMEM;
    if (!(ad->rn = calloc(ad->window, sizeof *ad->rn))) return GSNAP_ENOMEM;
    if (!(ad->rcap = calloc(ad->window, sizeof *ad->rcap))) return GSNAP_ENOMEM;
    ad->member_bytes = member_bytes(s);
    if (!ad->max_bytes) return 0;
    unsigned char *want = malloc(nf);
    if (!want) return GSNAP_ENOMEM;
    int rc = select_core(s, s->im->deg, 0, 1, want); /* the static core, highest degree first */
    if (rc == 0) rc = apply_core(s, want); /* only removals: no store read */
    ad->joined = ad->left = 0;             /* count run-time changes only */
    free(want);
    return rc;
}

int gsnap_samp__core_update(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    /* a background refresh reads s->im: membership waits for the next due batch */
    if (!ad || !ad->dyn || !s->im || s->bg_running) return 0;
    unsigned char *want = malloc(s->im->nnodes ? (size_t)s->im->nnodes : 1);
    if (!want) return GSNAP_ENOMEM;
    int rc = select_core(s, ad->freq, ad->core_min, 0, want);
    if (rc == 0) rc = apply_core(s, want);
    free(want);
    return rc;
}

int gsnap_samp__core_note(gsnap_sampler *s, const uint64_t *dst, uint32_t n) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (gsnap_vec_reserve((void **)&ad->win, &ad->wcap, ad->nwin + n + 1, sizeof *ad->win))
        return GSNAP_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (dst[i] < ad->nfreq) ad->win[ad->nwin++] = (uint32_t)dst[i];
    return 0;
}

void gsnap_samp__core_end(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad->freq) return;
    size_t slot = (size_t)((ad->nbatches - 1) % ad->window); /* adapt_end counted it */
    for (size_t i = 0; i < ad->rn[slot]; i++) ad->freq[ad->rids[slot][i]]--;
    /* swap buffers: the slot keeps this batch's list, win reuses the old one */
    uint32_t *old = ad->rids[slot];
    size_t oldcap = ad->rcap[slot];
    ad->rids[slot] = ad->win;
    ad->rcap[slot] = ad->wcap;
    ad->rn[slot] = ad->nwin;
    ad->win = old;
    ad->wcap = oldcap;
    ad->nwin = 0;
    for (size_t i = 0; i < ad->rn[slot]; i++) ad->freq[ad->rids[slot][i]]++;
}

void gsnap_samp__core_free(struct gsnap_samp__adapt *ad) {
    for (unsigned i = 0; ad->rids && i < ad->window; i++) free(ad->rids[i]);
    free(ad->rids);
    free(ad->rn);
    free(ad->rcap);
    free(ad->freq);
    free(ad->win);
}
