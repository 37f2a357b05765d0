/*
 * sampler/lazy_sweep.c -- a generation's lazy redraws done up front, in node
 * order, in slices.
 *
 * Lazy FCR / FSCR (lazy.c) bring an entry to the current generation when a
 * batch first serves it. Where the batches of a generation touch most of the
 * entries that change (the "live" entries: cached, not stamped ALL), that is
 * a redraw on the batch's critical path for most of them, at a random place
 * (slot, neighbour-list offset, neighbour list: three cache misses), and
 * with workers the first batches of a generation meet on the same stale
 * entries (one advances it, the others wait for its stamp). A sweep instead
 * advances the live entries of a range of the live list in ascending node
 * order, with the next entries' lines prefetched; with workers the list is
 * cut into chunks that the threads claim at the start of the generation's
 * round (workers.c), so each redraw is done once, by one thread, off the
 * batches' path.
 *
 * A sweep calls gsnap_samp__lazy_touch, which advances an entry by the same
 * functions and keys whoever calls it and whenever (lazy.c): the entries,
 * and so the batches, are the same with or without sweeps, whatever the
 * number of workers and whichever thread sweeps which chunk. A batch that
 * meets an entry a sweep has not reached yet advances it itself.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>

int gsnap_samp__lazy_live(gsnap_samp__image *im, unsigned ci) {
    gsnap_samp__hotc *h = &im->hot[ci];
    size_t n = 0;
    free(h->live);
    h->live = NULL;
    h->nlive = 0;
    if (!h->slot || im->nnodes > UINT32_MAX) return 0; /* no list: nothing is swept */
    for (uint64_t v = 0; v < im->nnodes; v++) {
        uint32_t st = h->slot[v * h->stride + 1];
        n += st != GSNAP_SAMP_LZ_UNC && st != GSNAP_SAMP_LZ_ALL;
    }
    if (!(h->live = malloc((n ? n : 1) * sizeof *h->live))) return GSNAP_ENOMEM;
    for (uint64_t v = 0; v < im->nnodes; v++) {
        uint32_t st = h->slot[v * h->stride + 1];
        if (st != GSNAP_SAMP_LZ_UNC && st != GSNAP_SAMP_LZ_ALL) h->live[h->nlive++] = (uint32_t)v;
    }
    return 0;
}

/* How far ahead the sweep prefetches: the slot and list offset of entry
 * j + AHEAD, the neighbour list of entry j + AHEAD / 2. */
#define AHEAD 8

int gsnap_samp__lazy_sweep(gsnap_samp__image *im, unsigned ci, size_t lo, size_t hi,
                           gsnap_samp__scratch *sc, uint64_t *redrawn, uint64_t *replaced) {
    const gsnap_samp__hotc *h = &im->hot[ci];
    const uint32_t *live = h->live;
    uint32_t want = (uint32_t)(im->gen & GSNAP_SAMP_LZ_MASK);
    if (hi > h->nlive) hi = h->nlive;
    for (size_t j = lo; j < hi; j++) {
        if (j + AHEAD < hi) {
            const uint32_t *p = h->slot + (uint64_t)live[j + AHEAD] * h->stride;
            gsnap_samp__prefetch_w(p);
            gsnap_samp__prefetch_w(p + h->stride - 1);
            __builtin_prefetch(im->lz_off + live[j + AHEAD]);
        }
        if (j + AHEAD / 2 < hi) __builtin_prefetch(im->lz_adj + im->lz_off[live[j + AHEAD / 2]]);
        uint32_t st = __atomic_load_n(&h->slot[(uint64_t)live[j] * h->stride + 1], __ATOMIC_RELAXED);
        if (st == want) continue;
        int rc = gsnap_samp__lazy_touch(im, ci, live[j], sc, replaced);
        if (rc) return rc;
        (*redrawn)++;
    }
    return 0;
}

int gsnap_samp__sweep_mode = -1;

/* Every PROBE_EVERY generations one is not swept, and its batches' lazy
 * redraws measure, per cache, the share of live entries a generation
 * touches; a cache is swept while that share is at least SWEEP_MIN (a swept
 * entry costs about 0.4 of a lazy redraw: sequential, prefetched, off the
 * batch's path; R-MAT SCALE 18, FCR-SC). */
#define PROBE_EVERY 16
#define SWEEP_MIN 0.5

/* The probe that ended: which caches its batches touched enough. */
static void probe_end(gsnap_sampler *s) {
    const gsnap_samp__image *im = s->im;
    uint64_t red[GSNAP_MAX_LAYERS + 1] = {0}, nb = s->st.batches - s->sw.probe_batches;
    if (nb == 0 || (s->o.period && nb < s->o.period)) return; /* cut short: measure again */
    for (unsigned h = 1; h <= s->L; h++) {
        unsigned ci = gsnap_samp__is_shared(s->o.mode) ? 0 : h - 1;
        if (ci < im->ncache) red[ci] += s->st.layer[s->L - h].refreshed - s->sw.mark[s->L - h];
    }
    s->sw.on = 0;
    for (unsigned i = 0; i < im->ncache; i++)
        if (im->hot[i].nlive && (double)red[i] >= SWEEP_MIN * (double)im->hot[i].nlive)
            s->sw.on |= 1u << i;
    s->sw.last = s->sw.probe_gen;
}

unsigned gsnap_samp__sweep_plan(gsnap_sampler *s) {
    gsnap_samp__image *im = s->im;
    if (!im || !im->lazy || !im->hot_ok || im->lz_swept == im->gen) return 0;
    uint64_t g = im->gen;
    im->lz_swept = g; /* planned: once per generation */
    if (s->sw.probe_gen && s->sw.probe_gen + 1 == g) probe_end(s);
    s->sw.probe_gen = 0;
    unsigned all = (1u << im->ncache) - 1;
    if (gsnap_samp__sweep_mode >= 0) return gsnap_samp__sweep_mode ? all : 0;
    if (!s->sw.last || g - s->sw.last >= PROBE_EVERY) { /* this generation measures */
        s->sw.probe_gen = g;
        s->sw.probe_batches = s->st.batches;
        for (unsigned i = 0; i < s->L; i++) s->sw.mark[i] = s->st.layer[i].refreshed;
        return 0;
    }
    return s->sw.on;
}

void gsnap_samp__sweep_serial(gsnap_sampler *s) {
    unsigned on = gsnap_samp__sweep_plan(s);
    if (!on) return;
    gsnap_samp__image *im = s->im;
    uint64_t red = 0, rep = 0;
    /* best effort: an entry left behind (out of memory) is advanced by the
     * batch that serves it, which reports the error */
    for (unsigned i = 0; i < im->ncache; i++)
        if ((on >> i & 1) && gsnap_samp__lazy_sweep(im, i, 0, im->hot[i].nlive, &s->sc, &red, &rep))
            break;
    s->st.refreshed_entries += red;
    s->st.replaced_ids += rep;
}
