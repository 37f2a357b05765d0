/*
 * sampler/cache.c -- in-memory cache images: per cache (one per hop, or the
 * shared one) a fixed stride of `cap` neighbour ids per node, a count and
 * the store version the entry reflects. Builds (FCR) and OTF replacement
 * (FSCR / PSCR) of entries.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

void gsnap_samp__image_arrays_free(gsnap_samp__image *im) {
    gsnap_samp__shared_unmap(im); /* a published image's arrays (shared.c) */
    for (unsigned i = 0; i < im->ncache; i++) {
        free(im->caches[i].cnt);
        free(im->caches[i].ids);
        free(im->caches[i].ver);
        im->caches[i].cnt = NULL;
        im->caches[i].ids = NULL;
        im->caches[i].ver = NULL;
    }
    free(im->deg);
    im->deg = NULL;
    gsnap_samp__hot_free(im);
}

void gsnap_samp__image_free(gsnap_samp__image *im) {
    if (!im) return;
    gsnap_samp__image_arrays_free(im);
    gsnap_samp__lazy_free(im->lz);
    free(im);
}

int gsnap_samp__image_new(uint64_t nnodes, const gsnap_samp__rparams *rp,
                          gsnap_samp__image **out) {
    *out = NULL;
    gsnap_samp__image *im = calloc(1, sizeof *im);
    if (!im) return GSNAP_ENOMEM;
    im->nnodes = nnodes;
    im->ncache = rp->ncache;
    size_t nn = nnodes ? (size_t)nnodes : 1;
    im->deg = calloc(nn, sizeof *im->deg);
    if (!im->deg) goto oom;
    for (unsigned i = 0; i < rp->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        c->cap = rp->caps[i];
        c->cnt = malloc(nn * sizeof *c->cnt);
        c->ver = calloc(nn, sizeof *c->ver);
        c->ids = malloc(nn * (c->cap ? c->cap : 1) * sizeof *c->ids);
        if (!c->cnt || !c->ver || !c->ids) goto oom;
        for (size_t v = 0; v < nn; v++) c->cnt[v] = GSNAP_SAMP_UNCACHED;
    }
    *out = im;
    return 0;
oom:
    gsnap_samp__image_free(im);
    return GSNAP_ENOMEM;
}

int gsnap_samp__image_clone(const gsnap_samp__image *src, gsnap_samp__image **out) {
    *out = NULL;
    gsnap_samp__image *im = calloc(1, sizeof *im);
    if (!im) return GSNAP_ENOMEM;
    *im = *src;
    im->map = NULL; /* the clone's arrays are its own */
    im->map_len = 0;
    size_t nn = src->nnodes ? (size_t)src->nnodes : 1;
    im->deg = NULL;
    im->lz = NULL; /* a copy of the u64 entries refreshes eagerly */
    im->lz_off = NULL;
    im->lz_adj = NULL;
    im->lazy = 0;
    memset(im->hot, 0, sizeof im->hot); /* the clone builds its own view */
    im->ovl = 0; /* (an overlay is folded into the image before it is cloned) */
    im->hot_ok = 0;
    for (unsigned i = 0; i < im->ncache; i++) {
        im->caches[i].cnt = NULL;
        im->caches[i].ids = NULL;
        im->caches[i].ver = NULL;
    }
    if (!(im->deg = malloc(nn * sizeof *im->deg))) goto oom;
    memcpy(im->deg, src->deg, nn * sizeof *im->deg);
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *s = &src->caches[i];
        gsnap_samp__cache *c = &im->caches[i];
        size_t nid = nn * (c->cap ? c->cap : 1);
        c->cnt = malloc(nn * sizeof *c->cnt);
        c->ver = malloc(nn * sizeof *c->ver);
        c->ids = malloc(nid * sizeof *c->ids);
        if (!c->cnt || !c->ver || !c->ids) goto oom;
        memcpy(c->cnt, s->cnt, nn * sizeof *c->cnt);
        memcpy(c->ver, s->ver, nn * sizeof *c->ver);
        /* one block copy: slots past cnt[v] may be uninitialised, they are
         * copied but never read */
        memcpy(c->ids, s->ids, nid * sizeof *c->ids);
    }
    *out = im;
    return 0;
oom:
    gsnap_samp__image_free(im);
    return GSNAP_ENOMEM;
}

uint64_t gsnap_samp__image_checksum(const gsnap_samp__image *im) {
    if (im->ovl) return gsnap_samp__ovl_checksum(im); /* shared_ovl.c */
    if (im->lazy && im->hot_ok) return gsnap_samp__lazy_checksum(im);
    XXH3_state_t *st = XXH3_createState();
    if (!st) return 0;
    XXH3_64bits_reset(st);
    for (unsigned i = 0; i < im->ncache; i++) {
        const gsnap_samp__cache *c = &im->caches[i];
        for (uint64_t v = 0; v < im->nnodes; v++) {
            if (c->cnt[v] == GSNAP_SAMP_UNCACHED) continue;
            uint64_t hdr[3] = {i, v, c->cnt[v]};
            XXH3_64bits_update(st, hdr, sizeof hdr);
            XXH3_64bits_update(st, c->ids + v * c->cap, c->cnt[v] * sizeof(uint64_t));
        }
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* Scratch for one entry: on the stack for small caps. */
#define SMALL_CAP 256

/* Draw a whole entry: min(cap, d) of full. */
static int draw_whole(gsnap_samp__cache *c, uint64_t at, unsigned hop, uint64_t node,
                      const uint64_t *full, size_t d, const gsnap_samp__rparams *rp, uint64_t gen,
                      gsnap_samp__scratch *sc, uint32_t *pick) {
    gsnap_samp__key k = {rp->seed, (uint64_t)GSNAP_P_BUILD << 8 | hop, node, gen};
    long got = gsnap_samp__choose(&k, d, c->cap, pick, sc);
    if (got < 0) return GSNAP_ENOMEM;
    uint64_t *dst = c->ids + at * c->cap;
    for (long i = 0; i < got; i++) dst[i] = full[pick[i]];
    c->cnt[at] = (uint32_t)got;
    return 0;
}



/* nid = the kept ids cur[keep[0..gk)], then r fresh ids by rejection: the
 * FRESH stream's positions in full, skipping ids already in the entry or
 * drawn (full has at least 2 * cnt ids, so at least half of it is not
 * cached: uniform over the neighbours not cached, no position search).
 * lazy.c's fscr_step makes the same draws. Returns gk + r. */
static size_t keep_fresh(const uint64_t *cur, uint32_t cnt, const uint64_t *full, size_t d,
                         const uint32_t *keep, size_t gk, const gsnap_samp__key *kf, size_t r,
                         uint64_t *nid) {
    for (size_t i = 0; i < gk; i++) nid[i] = cur[keep[i]];
    uint64_t fb = gsnap_samp__h(kf->seed, kf->ph, kf->node, kf->round, 0);
    size_t m = gk;
    for (uint64_t j = 0; m < gk + r; j++) {
        uint64_t id = full[gsnap_samp__below(gsnap_samp__mix(fb, j), d)];
        int dup = 0;
        for (uint32_t q = 0; q < cnt; q++) dup |= cur[q] == id;
        for (size_t q = gk; q < m; q++) dup |= nid[q] == id;
        if (!dup) nid[m++] = id;
    }
    return m;
}

int gsnap_samp__entry_refresh(gsnap_samp__cache *c, unsigned hop, uint64_t node,
                              const uint64_t *full, size_t d, const gsnap_samp__rparams *rp,
                              uint64_t gen, uint64_t version, int whole,
                              gsnap_samp__scratch *sc, uint64_t *replaced, int *changed) {
    return gsnap_samp__entry_refresh_at(c, node, hop, node, full, d, rp, gen, version, whole, sc,
                                        replaced, changed);
}

int gsnap_samp__entry_refresh_at(gsnap_samp__cache *c, uint64_t at, unsigned hop, uint64_t node,
                                 const uint64_t *full, size_t d, const gsnap_samp__rparams *rp,
                                 uint64_t gen, uint64_t version, int whole,
                                 gsnap_samp__scratch *sc, uint64_t *replaced, int *changed) {
    uint32_t cap = c->cap, cnt = c->cnt[at];
    if (changed) *changed = 0;
    if (cap == 0 || cnt == GSNAP_SAMP_UNCACHED) return 0;
    uint32_t sp[3 * SMALL_CAP], *pick = sp, *excl = sp + SMALL_CAP, *keep = sp + 2 * SMALL_CAP;
    uint64_t sid[SMALL_CAP], *nid = sid;
    void *heap = NULL;
    int rc = 0;
    if (cap > SMALL_CAP) {
        heap = malloc((size_t)cap * (3 * sizeof(uint32_t) + sizeof(uint64_t)));
        if (!heap) return GSNAP_ENOMEM;
        nid = heap;
        pick = (uint32_t *)(nid + cap);
        excl = pick + cap;
        keep = excl + cap;
    }
    uint64_t *cur = c->ids + at * cap;
    if (cnt < cap || d < cap || whole) {
        /* complete entry (all neighbours) or stale: redraw whole if changed */
        if (!whole && cnt < cap && d == cnt) goto done;
        memcpy(nid, cur, (size_t)cnt * sizeof *nid);
        if ((rc = draw_whole(c, at, hop, node, full, d, rp, gen, sc, pick))) goto done;
        uint64_t rep = 0;
        for (uint32_t i = 0; i < c->cnt[at]; i++) {
            int found = 0;
            for (uint32_t j = 0; j < cnt && !found; j++) found = nid[j] == cur[i];
            rep += !found;
        }
        *replaced += rep;
        if (changed)
            *changed = c->cnt[at] != cnt || memcmp(nid, cur, (size_t)cnt * sizeof *nid) != 0 ||
                       c->ver[at] != version;
        c->ver[at] = version;
        goto done;
    }
    /* full entry: keep cap - r, add r fresh ones not in the entry */
    double g = rp->per_hop ? rp->hop_gamma[hop] : rp->gamma; /* policy.c sets hop_gamma */
    size_t r = (size_t)(g * cap + 0.5) > cap ? cap : (size_t)(g * cap + 0.5);
    if (r == 0) goto done;
    gsnap_samp__key kk = {rp->seed, (uint64_t)GSNAP_P_KEEP << 8 | hop, node, gen};
    gsnap_samp__key kf = {rp->seed, (uint64_t)GSNAP_P_FRESH << 8 | hop, node, gen};
    if (d >= 2 * (size_t)cap) { /* half not cached at least: rejection (keep_fresh) */
        long gk = gsnap_samp__keep_idx(&kk, cnt, cap - r, keep, sc);
        if (gk < 0) { rc = GSNAP_ENOMEM; goto done; }
        size_t m = keep_fresh(cur, cnt, full, d, keep, (size_t)gk, &kf, r, nid);
        memcpy(cur, nid, m * sizeof *nid);
        c->cnt[at] = (uint32_t)m;
        c->ver[at] = version;
        *replaced += r;
        if (changed) *changed = 1;
        goto done;
    }
    size_t ne = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        long p = gsnap_samp__find_id(full, d, cur[i]);
        if (p >= 0) excl[ne++] = (uint32_t)p;
    }
    gsnap_samp__sort_u32(excl, ne);
    size_t avail = d - ne;
    if (r > avail) r = avail;
    if (r > cap) r = cap;
    size_t nkeep = cap - r;
    long gk = gsnap_samp__keep_idx(&kk, cnt, nkeep, keep, sc);
    long gf = gsnap_samp__choose_excl(&kf, d, excl, ne, r, pick, sc);
    if (gk < 0 || gf < 0) { rc = GSNAP_ENOMEM; goto done; }
    size_t m = 0;
    for (long i = 0; i < gk; i++) nid[m++] = cur[keep[i]];
    for (long i = 0; i < gf; i++) nid[m++] = full[pick[i]];
    memcpy(cur, nid, m * sizeof *nid);
    c->cnt[at] = (uint32_t)m;
    c->ver[at] = version;
    *replaced += (uint64_t)gf;
    if (changed) *changed = 1;
done:
    free(heap);
    return rc;
}

/* ---- whole-image passes over a scan ------------------------------------ */

typedef struct {
    gsnap_samp__image *im;
    const gsnap_samp__rparams *rp;
    uint64_t gen;
    const uint64_t *changed_at;
    gsnap_samp__scratch sc;
    uint32_t *pick;
    uint64_t entries, replaced;
    int refresh; /* 0 = build, 1 = OTF refresh */
    uint64_t *dirty; /* nodes with a changed entry (refresh) */
    size_t ndirty, dcap;
    int want_dirty;
    const gsnap_samp__image *from; /* refresh into im from this image, or NULL */
} pass_ctx;

static int pass_cb(void *vctx, uint64_t node, const uint64_t *ids, size_t n) {
    pass_ctx *pc = vctx;
    gsnap_samp__image *im = pc->im;
    if (node >= im->nnodes) return 0;
    int rc = 0;
    if (!pc->refresh) im->deg[node] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    if (!pc->refresh && im->lz && n > 0 && n > pc->rp->threshold &&
        (rc = gsnap_samp__lazy_capture(im->lz, node, ids, n)))
        return rc;
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        unsigned hop = pc->rp->hops[i];
        if (c->cap == 0) continue;
        if (!pc->refresh) {
            if (n == 0 || n <= pc->rp->threshold) {
                c->cnt[node] = pc->rp->threshold == 0 ? 0 : GSNAP_SAMP_UNCACHED;
                continue;
            }
            if ((rc = draw_whole(c, node, hop, node, ids, n, pc->rp, pc->gen, &pc->sc, pc->pick)))
                return rc;
            c->ver[node] = pc->rp->as_of;
            pc->entries++;
        } else {
            if (c->cnt[node] == GSNAP_SAMP_UNCACHED) continue;
            if (pc->from && c->cnt[node]) /* copy the entry, then refresh it in place */
                memcpy(c->ids + node * c->cap, pc->from->caches[i].ids + node * c->cap,
                       (size_t)c->cnt[node] * sizeof *c->ids);
            int whole = pc->changed_at && pc->changed_at[node] > c->ver[node];
            int ch = 0;
            if ((rc = gsnap_samp__entry_refresh(c, hop, node, ids, n, pc->rp, pc->gen,
                                                pc->rp->as_of, whole, &pc->sc, &pc->replaced,
                                                &ch)))
                return rc;
            pc->entries++;
            if (ch && pc->want_dirty && (pc->ndirty == 0 || pc->dirty[pc->ndirty - 1] != node)) {
                if (gsnap_vec_reserve((void **)&pc->dirty, &pc->dcap, pc->ndirty + 1,
                                        sizeof *pc->dirty))
                    return GSNAP_ENOMEM;
                pc->dirty[pc->ndirty++] = node;
            }
        }
    }
    return 0;
}

static int run_pass(gsnap_samp__image *im, gsnap_samp__src *src, const gsnap_samp__rparams *rp,
                    uint64_t gen, const uint64_t *changed_at, int refresh, uint64_t *entries,
                    uint64_t *replaced, uint64_t **dirty, size_t *ndirty) {
    pass_ctx pc = {im, rp, gen, changed_at, {0}, NULL, 0, 0, refresh, NULL, 0, 0, dirty != NULL,
                   NULL};
    pc.from = refresh == 2 ? im->from : NULL;
    im->hot_ok = 0; /* the pass rewrites entries: the serving view is out of step */
    if (refresh == 2) pc.refresh = 1;
    uint32_t maxcap = 1;
    for (unsigned i = 0; i < im->ncache; i++)
        if (im->caches[i].cap > maxcap) maxcap = im->caches[i].cap;
    pc.pick = malloc(maxcap * sizeof *pc.pick);
    if (!pc.pick) return GSNAP_ENOMEM;
    int rc = src->scan(src, rp->at_t, rp->as_of, pass_cb, &pc);
    free(pc.pick);
    gsnap_samp__scratch_free(&pc.sc);
    if (rc == 0 && im->lz && !refresh) { /* lazy refreshes start from this build */
        gsnap_samp__lazy_capture_end(im->lz, &im->lz_off, &im->lz_adj);
        im->lz_base = gen;
        rc = gsnap_samp__hot_build(im);
    }
    if (rc == 0) {
        im->gen = gen;
        if (entries) *entries = pc.entries;
        if (replaced) *replaced = pc.replaced;
        if (dirty) {
            *dirty = pc.dirty;
            *ndirty = pc.ndirty;
            pc.dirty = NULL;
        }
    }
    free(pc.dirty);
    return rc;
}

int gsnap_samp__image_build(gsnap_samp__image *im, gsnap_samp__src *src,
                            const gsnap_samp__rparams *rp, uint64_t gen) {
    size_t nn = im->nnodes ? (size_t)im->nnodes : 1;
    memset(im->deg, 0, nn * sizeof *im->deg);
    /* threshold 0: every node is cached, those without neighbours as empty
     * lists (the scan does not visit them) */
    uint32_t none = rp->threshold == 0 ? 0 : GSNAP_SAMP_UNCACHED;
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        for (size_t v = 0; v < nn; v++) {
            c->cnt[v] = c->cap ? none : GSNAP_SAMP_UNCACHED;
            c->ver[v] = rp->as_of;
        }
    }
    return run_pass(im, src, rp, gen, NULL, 0, NULL, NULL, NULL, NULL);
}

int gsnap_samp__image_refresh_from(gsnap_samp__image *im, const gsnap_samp__image *from,
                                   gsnap_samp__src *src, const gsnap_samp__rparams *rp,
                                   uint64_t gen, const uint64_t *changed_at, uint64_t *entries,
                                   uint64_t *replaced, uint64_t **dirty, size_t *ndirty) {
    if (im->nnodes != from->nnodes || im->ncache != from->ncache) return GSNAP_EINVAL;
    size_t nn = im->nnodes ? (size_t)im->nnodes : 1;
    memcpy(im->deg, from->deg, nn * sizeof *im->deg);
    for (unsigned i = 0; i < im->ncache; i++) {
        if (im->caches[i].cap != from->caches[i].cap) return GSNAP_EINVAL;
        memcpy(im->caches[i].cnt, from->caches[i].cnt, nn * sizeof *im->caches[i].cnt);
        memcpy(im->caches[i].ver, from->caches[i].ver, nn * sizeof *im->caches[i].ver);
    }
    im->gen = from->gen;
    im->from = from;
    int rc = run_pass(im, src, rp, gen, changed_at, 2, entries, replaced, dirty, ndirty);
    im->from = NULL;
    return rc;
}

int gsnap_samp__image_refresh_all(gsnap_samp__image *im, gsnap_samp__src *src,
                                  const gsnap_samp__rparams *rp, uint64_t gen,
                                  const uint64_t *changed_at, uint64_t *entries,
                                  uint64_t *replaced, uint64_t **dirty, size_t *ndirty) {
    return run_pass(im, src, rp, gen, changed_at, 1, entries, replaced, dirty, ndirty);
}
