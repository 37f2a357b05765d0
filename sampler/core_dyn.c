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
 * first).
 *
 * What the bound counts: every member's entry bytes, the sum over caches of
 * 20 + 12 * cap (u64 ids, u32 count, u64 version, u32 serving slot of 2 +
 * cap words: count, stamp, ids), plus the arrays the run-time core itself
 * allocates: the frequency counters (u32 per node id), the window's
 * frontier lists (u32 per allocated slot: the batch being made and one per
 * batch in the window) and the ring's three words per batch (pointer,
 * length, capacity). The selection allocates nothing (the chosen nodes are
 * marked in the counters' top bit, the cut-off found by counting passes).
 * The lists grow with the batches' frontiers: when a batch's end finds the
 * total above the bound, the coldest members leave until it fits (counted in
 * `trimmed`). A bound below the counters alone is refused at open.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

#define WANT 0x80000000u /* in freq[v]: v is chosen (during a selection only) */

static uint64_t member_bytes(const gsnap_sampler *s) {
    uint64_t b = 0;
    for (unsigned i = 0; s->im && i < s->im->ncache; i++)
        if (s->im->caches[i].cap) b += 20 + 12 * (uint64_t)s->im->caches[i].cap;
    return b;
}

/* Bytes of the run-time core's own arrays now. */
static uint64_t book_bytes(const struct gsnap_samp__adapt *ad) {
    return 4 * ad->nfreq + (uint64_t)ad->window * (sizeof(uint32_t *) + 2 * sizeof(size_t)) +
           4 * ad->lcap;
}

static uint64_t total_bytes(const struct gsnap_samp__adapt *ad) {
    return ad->members * ad->member_bytes + book_bytes(ad);
}

static void note_peak(struct gsnap_samp__adapt *ad) {
    uint64_t t = total_bytes(ad);
    if (t > ad->peak) ad->peak = t;
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
    *bytes = n * member_bytes(s) + (s->ad && s->ad->freq ? book_bytes(s->ad) : 0);
}

/* Members the bound leaves room for now (all with no bound). */
static uint64_t room(const gsnap_sampler *s) {
    const struct gsnap_samp__adapt *ad = s->ad;
    uint64_t book = book_bytes(ad);
    if (!ad->max_bytes || !ad->member_bytes) return UINT64_MAX;
    return ad->max_bytes > book ? (ad->max_bytes - book) / ad->member_bytes : 0;
}

typedef struct {
    const uint32_t *key; /* deg or freq (its WANT bit masked) */
    uint32_t min;
    int among; /* 1: members only; 0: nodes of degree above the threshold */
} selection;

static int eligible(const gsnap_sampler *s, const selection *q, uint64_t v, uint32_t *k) {
    const gsnap_samp__image *im = s->im;
    *k = q->key[v] & (q->key == s->ad->freq ? ~WANT : UINT32_MAX);
    if (*k < q->min) return 0;
    return q->among ? is_member(im, v) : !(s->o.threshold && im->deg[v] <= s->o.threshold);
}

static uint64_t count_ge(const gsnap_sampler *s, const selection *q, uint32_t t) {
    uint64_t n = 0;
    uint32_t k;
    for (uint64_t v = 0; v < s->im->nnodes; v++) n += eligible(s, q, v, &k) && k >= t;
    return n;
}

/* Mark (WANT in freq) the `take` hottest eligible nodes, ties smaller id
 * first, all of them when they are fewer. */
static void select_core(gsnap_sampler *s, const selection *q, uint64_t take) {
    struct gsnap_samp__adapt *ad = s->ad;
    uint64_t n = count_ge(s, q, q->min);
    uint32_t cut = q->min, k; /* the smallest key taken */
    if (n > take) { /* cut = the largest t with count_ge(t) >= take */
        uint32_t hi = UINT32_MAX;
        while (cut < hi) {
            uint32_t mid = cut + (uint32_t)(((uint64_t)hi - cut + 1) / 2);
            if (count_ge(s, q, mid) >= take) cut = mid;
            else hi = mid - 1;
        }
    }
    uint64_t above = n > take && cut < UINT32_MAX ? count_ge(s, q, cut + 1) : 0, at_cut = 0;
    for (uint64_t v = 0; v < s->im->nnodes; v++) {
        if (!eligible(s, q, v, &k) || k < cut) continue;
        if (n > take && k == cut && above + at_cut++ >= take) continue;
        ad->freq[v] |= WANT;
    }
    ad->capped = n > take ? n - take : 0;
}

/* v joins: drawn whole from the batch's view (cache.c) in every cache, or
 * in none when a draw fails. */
static int join(gsnap_sampler *s, uint64_t v) {
    gsnap_samp__image *im = s->im;
    for (unsigned i = 0; i < im->ncache; i++) {
        gsnap_samp__cache *c = &im->caches[i];
        if (!c->cap) continue;
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
    }
    return 0;
}

/* Make membership equal the marks (clearing them): leavers first, so the
 * entries never exceed the larger of the two memberships. */
static int apply_core(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    gsnap_samp__image *im = s->im;
    for (uint64_t v = 0; v < im->nnodes; v++) {
        if ((ad->freq[v] & WANT) || !is_member(im, v)) continue;
        for (unsigned i = 0; i < im->ncache; i++) {
            if (!im->caches[i].cap) continue;
            im->caches[i].cnt[v] = GSNAP_SAMP_UNCACHED;
            gsnap_samp__hot_node(im, &im->caches[i], v);
        }
        ad->left++;
        ad->members--;
    }
    int rc = 0;
    for (uint64_t v = 0; v < im->nnodes; v++) {
        int want = (ad->freq[v] & WANT) != 0;
        ad->freq[v] &= ~WANT;
        if (rc || !want || is_member(im, v)) continue;
        if ((rc = join(s, v)) == 0) {
            ad->joined++;
            ad->members++;
        }
    }
    return rc;
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
    for (uint64_t v = 0; v < s->im->nnodes; v++) ad->members += (uint64_t)is_member(s->im, v);
    if (ad->max_bytes && ad->max_bytes < book_bytes(ad)) {
        const char *m = "sampler: core_max_bytes %llu is below what the run-time core's own "
                        "arrays take for %llu node ids (%llu bytes: 4 per node id and %u batches)";
        unsigned long long a = ad->max_bytes, b = ad->nfreq, c = book_bytes(ad);
        return s->db ? gsnap_store__err(s->db, GSNAP_EINVAL, m, a, b, c, ad->window) : GSNAP_EINVAL;
    }
    if (ad->max_bytes) { /* the static core, highest degree first; only removals */
        selection q = {s->im->deg, 0, 1};
        select_core(s, &q, room(s));
        int rc = apply_core(s);
        if (rc) return rc;
    }
    ad->joined = ad->left = 0; /* count run-time changes only */
    note_peak(ad);
    return 0;
}

int gsnap_samp__core_update(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    /* a background refresh reads s->im: membership waits for the next due batch */
    if (!ad || !ad->dyn || !s->im || s->bg_running) return 0;
    selection q = {ad->freq, ad->core_min, 0};
    select_core(s, &q, room(s));
    int rc = apply_core(s);
    note_peak(ad);
    return rc;
}

int gsnap_samp__core_note(gsnap_sampler *s, const uint64_t *dst, uint32_t n) {
    struct gsnap_samp__adapt *ad = s->ad;
    size_t before = ad->wcap;
    if (gsnap_vec_reserve((void **)&ad->win, &ad->wcap, ad->nwin + n + 1, sizeof *ad->win))
        return GSNAP_ENOMEM;
    ad->lcap += ad->wcap - before;
    for (uint32_t i = 0; i < n; i++)
        if (dst[i] < ad->nfreq) ad->win[ad->nwin++] = (uint32_t)dst[i];
    return 0;
}

/* The lists grew past the bound: the coldest members leave. */
static void trim(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad->max_bytes || total_bytes(ad) <= ad->max_bytes || !s->im || s->bg_running) return;
    uint64_t before = ad->members, capped = ad->capped;
    selection q = {ad->freq, 0, 1};
    select_core(s, &q, room(s));
    (void)apply_core(s); /* removals only: nothing to fail */
    ad->trimmed += before - ad->members;
    ad->capped = capped; /* what the last update kept out */
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
    trim(s);
    note_peak(ad);
}

void gsnap_samp__core_free(struct gsnap_samp__adapt *ad) {
    for (unsigned i = 0; ad->rids && i < ad->window; i++) free(ad->rids[i]);
    free(ad->rids);
    free(ad->rn);
    free(ad->rcap);
    free(ad->freq);
    free(ad->win);
}
