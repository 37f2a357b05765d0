/*
 * sampler/hot.c -- the serving view of a cache image: per cache, fixed-size
 * slots of 2 + cap u32 words indexed by node id (count, generation stamp,
 * then the cached ids), so that serving a node from the cache is one load
 * from one place (the image keeps u64 ids, counts and versions in three arrays for the
 * refresh and persistence code). The view belongs to its image: a pass over
 * the image (build, refresh, load) marks it out of step (hot_ok = 0) and
 * whoever prepared the image rebuilds it -- the background refresh thread
 * for a generation it prepares, so the sampling thread only swaps pointers;
 * in-batch entry refreshes (PSCR, max_staleness) copy their one entry.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

void gsnap_samp__hot_free(gsnap_samp__image *im) {
    for (unsigned i = 0; i <= GSNAP_MAX_LAYERS; i++) {
        free(im->hot[i].slot);
        free(im->hot[i].live);
        im->hot[i].slot = NULL;
        im->hot[i].live = NULL;
        im->hot[i].nlive = 0;
        im->hot[i].stride = 0;
    }
    im->hot_ok = 0;
}

/* Slot of node v from the u64 entry, stamped with generation gen. */
static void copy_entry(const gsnap_samp__cache *c, gsnap_samp__hotc *h, uint64_t v,
                       uint64_t gen) {
    uint32_t *sl = h->slot + v * h->stride;
    uint32_t cnt = c->cnt[v];
    sl[0] = cnt;
    sl[1] = cnt == GSNAP_SAMP_UNCACHED ? GSNAP_SAMP_LZ_UNC : (uint32_t)(gen & GSNAP_SAMP_LZ_MASK);
    if (cnt == GSNAP_SAMP_UNCACHED) return;
    const uint64_t *ids = c->ids + v * c->cap;
    for (uint32_t j = 0; j < cnt; j++) sl[2 + j] = (uint32_t)ids[j];
}

int gsnap_samp__hot_build(gsnap_samp__image *im) {
    if (!im || im->hot_ok) return 0;
    size_t nn = im->nnodes ? (size_t)im->nnodes : 1;
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *c = &im->caches[i];
        gsnap_samp__hotc *h = &im->hot[i];
        if (c->cap == 0) continue;
        if (h->stride != c->cap + 2 || !h->slot) {
            free(h->slot);
            h->stride = c->cap + 2;
            if (!(h->slot = malloc(nn * h->stride * sizeof *h->slot))) {
                gsnap_samp__hot_free(im);
                return GSNAP_ENOMEM;
            }
        }
        /* lazy refreshes: the u64 entries are at lz_base (the views are built
         * once, right after the generation-0 build) */
        uint64_t gen = im->lazy ? im->lz_base : im->gen;
        for (uint64_t v = 0; v < im->nnodes; v++) {
            copy_entry(c, h, v, gen);
            uint32_t *sl = h->slot + v * h->stride;
            if (im->lazy && gsnap_samp__lazy_all(im, sl, c->cap, v)) sl[1] = GSNAP_SAMP_LZ_ALL;
        }
        if (im->lazy && gsnap_samp__lazy_live(im, i)) {
            gsnap_samp__hot_free(im);
            return GSNAP_ENOMEM;
        }
    }
    im->lz_swept = im->lz_base; /* the views show the entries at lz_base */
    im->hot_ok = 1;
    return 0;
}

void gsnap_samp__hot_node(gsnap_samp__image *im, const gsnap_samp__cache *c, uint64_t node) {
    if (!im || !im->hot_ok || im->lazy || node >= im->nnodes) return;
    size_t i = (size_t)(c - im->caches);
    if (i >= im->ncache || !im->hot[i].slot) return;
    copy_entry(c, &im->hot[i], node, im->gen);
}
