/*
 * sampler/shared_ovl.c -- the private overlay of a published image (shared
 * host tier, issue 18): what PSCR's refresh batches rewrite, kept entry by
 * entry beside the mapping, which is never written.
 *
 * A published image is mapped MAP_PRIVATE: a write into it copies the whole
 * 4 KiB page into the process. PSCR rewrites the entries of each refresh
 * batch's frontier, which soon spreads over most pages, so each process
 * would end up holding most of the image privately. Instead, per cache i
 * with a serving view (hot.c's slots of stride = 2 + cap u32 words):
 *
 *   hot[i].ovix  u32[nnodes], calloc'd at the first rewrite of cache i:
 *                0 = the image's slot serves node v, k + 1 = record k;
 *   hot[i].ovrec u32[ovcap * stride]: records in the slot's layout (count,
 *                generation stamp, the ids), appended in first-rewrite
 *                order, grown by doubling; a node's record is reused by its
 *                later rewrites.
 *
 * Bytes per process: 4 * nnodes per cache rewritten, plus 4 * (2 + cap) per
 * entry rewritten at least once (88 bytes at cap 20, against 4 + 8 + 8 cap +
 * 4 (2 + cap) = 260 bytes of the image's arrays per node). The u64 ids,
 * counts and versions are not overlaid: a record's ids are the entry's (ids
 * of cached nodes are < 2^31), its version is the sampler's read version
 * (the overlay is used only in frozen mode), and an entry's count is never
 * made UNCACHED (an entry refresh keeps cached nodes cached). Serving reads a
 * record through gsnap_samp__slot (sampler_int.h); whatever reads the u64
 * arrays (a refresh by hand, refresh_async's copy) first folds the records
 * into the image (ovl_fold: copy on write, as before).
 *
 * Used when s->im is a published image, with no snapshot table to commit
 * to, frozen (no staleness redraws) and no run-time core (which rewrites
 * membership); elsewhere entries are written into the mapping as before.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

void gsnap_samp__ovl_free(gsnap_samp__image *im) {
    for (unsigned i = 0; i <= GSNAP_MAX_LAYERS; i++) {
        gsnap_samp__hotc *h = &im->hot[i];
        free(h->ovix);
        free(h->ovrec);
        h->ovix = NULL;
        h->ovrec = NULL;
        h->ovn = h->ovcap = 0;
    }
    im->ovl = 0;
}

static int usable(const gsnap_sampler *s, const gsnap_samp__hotc *h) {
    return s->im->map && h->slot && !s->snap && !s->changed_at && !(s->ad && s->ad->dyn) &&
           !s->im->lazy;
}

/* Record of node v in h (made from the image's slot when v has none). */
static uint32_t *record(gsnap_samp__image *im, gsnap_samp__hotc *h, uint64_t v) {
    size_t nn = im->nnodes ? (size_t)im->nnodes : 1;
    if (!h->ovix && !(h->ovix = calloc(nn, sizeof *h->ovix))) return NULL;
    im->ovl = 1;
    if (h->ovix[v]) return h->ovrec + (size_t)(h->ovix[v] - 1) * h->stride;
    if (h->ovn == h->ovcap) {
        size_t cap = h->ovcap ? 2 * h->ovcap : 1024;
        if (cap > nn) cap = nn; /* at most one record per node */
        uint32_t *r = realloc(h->ovrec, cap * h->stride * sizeof *r);
        if (!r) return NULL;
        h->ovrec = r;
        h->ovcap = cap;
    }
    uint32_t *rec = h->ovrec + h->ovn * h->stride;
    memcpy(rec, h->slot + v * h->stride, h->stride * sizeof *rec);
    h->ovix[v] = (uint32_t)++h->ovn;
    return rec;
}

int gsnap_samp__ovl_refresh(gsnap_sampler *s, gsnap_samp__cache *c, unsigned cache_hop,
                            uint64_t v, uint64_t gen, int whole, uint64_t *replaced) {
    gsnap_samp__image *im = s->im;
    gsnap_samp__hotc *h = &im->hot[c - im->caches];
    if (!usable(s, h)) return gsnap_sampler__refresh_entry(s, c, cache_hop, v, gen, whole, replaced);
    const uint64_t *full;
    size_t d;
    int rc = s->src->nbrs(s->src, v, &full, &d);
    if (rc) return rc;
    /* the entry now (record or image slot) as a one-entry cache */
    const uint32_t *cur = gsnap_samp__slot(h, v);
    uint32_t cnt = cur[0];
    uint64_t ver = s->version;
    if (cnt == GSNAP_SAMP_UNCACHED) return 0;
    if ((rc = gsnap_vec_reserve((void **)&s->nb64, &s->nb64_cap, c->cap, sizeof *s->nb64)))
        return rc;
    for (uint32_t j = 0; j < cnt; j++) s->nb64[j] = cur[2 + j];
    gsnap_samp__cache one = {c->cap, &cnt, s->nb64, &ver};
    int changed = 0;
    rc = gsnap_samp__entry_refresh_at(&one, 0, cache_hop, v, full, d, &s->rp, gen, s->version,
                                      whole, &s->sc, replaced, &changed);
    if (rc || !changed) return rc; /* an unchanged entry needs no record */
    uint32_t *rec = record(im, h, v);
    if (!rec) return GSNAP_ENOMEM;
    rec[0] = cnt;
    rec[1] = (uint32_t)(im->gen & GSNAP_SAMP_LZ_MASK); /* as hot_node stamps it */
    for (uint32_t j = 0; j < cnt; j++) rec[2 + j] = (uint32_t)s->nb64[j];
    return 0;
}

void gsnap_samp__ovl_fold(gsnap_samp__image *im) {
    if (!im || !im->ovl) return;
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__hotc *h = &im->hot[i];
        gsnap_samp__cache *c = &im->caches[i];
        for (uint64_t v = 0; h->ovix && v < im->nnodes; v++) {
            if (!h->ovix[v]) continue;
            const uint32_t *rec = h->ovrec + (size_t)(h->ovix[v] - 1) * h->stride;
            memcpy(h->slot + v * h->stride, rec, h->stride * sizeof *rec);
            c->cnt[v] = rec[0];
            for (uint32_t j = 0; j < rec[0]; j++) c->ids[v * c->cap + j] = rec[2 + j];
        }
    }
    gsnap_samp__ovl_free(im);
}

uint64_t gsnap_samp__ovl_checksum(const gsnap_samp__image *im) {
    XXH3_state_t *st = XXH3_createState();
    if (!st) return 0;
    XXH3_64bits_reset(st);
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *c = &im->caches[i];
        const gsnap_samp__hotc *h = &im->hot[i];
        for (uint64_t v = 0; v < im->nnodes; v++) {
            if (c->cnt[v] == GSNAP_SAMP_UNCACHED) continue;
            const uint32_t *rec = h->ovix && h->ovix[v] ? gsnap_samp__slot(h, v) : NULL;
            uint64_t hdr[3] = {i, v, rec ? rec[0] : c->cnt[v]}, id;
            XXH3_64bits_update(st, hdr, sizeof hdr);
            if (!rec) {
                XXH3_64bits_update(st, c->ids + v * c->cap, c->cnt[v] * sizeof(uint64_t));
                continue;
            }
            for (uint32_t j = 0; j < rec[0]; j++) {
                id = rec[2 + j];
                XXH3_64bits_update(st, &id, sizeof id);
            }
        }
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}
