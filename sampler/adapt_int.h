/*
 * sampler/adapt_int.h -- private to the sampler module: adaptive refresh
 * (policy.c) and the run-time core (core_dyn.c), issue 18. Included at the
 * end of sampler_int.h; the batch loop and refresh.c call the hooks below,
 * which do nothing when s->ad is NULL (fixed policy, static core: the
 * default, and every shadow sampler of workers.c).
 *
 * INVARIANTS
 *   - The miss-driven policy's counts are per hop (1..L; 0 unused) and per
 *     batch: `cur` collects the batch being produced, a ring keeps the last
 *     `window` finished batches; a decision at batch b reads batches
 *     b - window .. b - 1 (those that exist).
 *   - The run-time core's frequency of node v is the number of frontier
 *     appearances (destinations of any hop) of v in the ring's batches,
 *     kept exact by subtracting a batch's list when it leaves the ring.
 *   - Core membership changes only between batches: joins at scheduled
 *     refresh batches (after the mode's refresh, with the batch's read view
 *     begun), leaves there too or at a batch's end when the window's lists
 *     grew past core_max_bytes; never inside a batch.
 *   - With core_max_bytes, between batches: members * member_bytes + the
 *     run-time core's own arrays (freq, the window's lists at their
 *     allocated size, the ring's per-batch words) <= core_max_bytes,
 *     except while a background refresh (gsnap_sampler_refresh_async) is
 *     in flight: membership is frozen then (the refresher reads it), so the
 *     window's lists may pass the bound until the batch after it is waited
 *     for, when the coldest members leave.
 */
#ifndef GSNAP_SAMPLER_ADAPT_INT_H
#define GSNAP_SAMPLER_ADAPT_INT_H

typedef struct {
    uint64_t needed, not_held, stale;
} gsnap_samp__hcount;

struct gsnap_samp__adapt {
    gsnap_refresh_policy policy;
    unsigned window;                         /* batches in the ring */
    unsigned nh;                             /* hops + 1 (row length of the ring) */
    gsnap_samp__hcount cur[GSNAP_MAX_LAYERS + 1];
    gsnap_samp__hcount *ring;                /* window * nh */
    uint64_t nbatches;                       /* batches recorded so far */
    double lambda[GSNAP_MAX_LAYERS + 1];     /* per hop */
    double stat[GSNAP_MAX_LAYERS + 1];       /* per hop: last reported, -1 = none */
    double kappa;
    gsnap_gamma_choice *hist;
    size_t nhist, hcap;
    uint64_t decisions, skipped;
    /* run-time core (core_dyn.c) */
    int dyn;
    uint32_t core_min;
    uint64_t max_bytes, member_bytes;
    uint64_t nfreq;      /* nodes with a frequency counter (the sampler's node bound) */
    uint32_t *freq;      /* nfreq */
    uint32_t *win;       /* this batch's frontier ids (< nfreq) */
    size_t nwin, wcap;
    uint32_t **rids;     /* ring of the window's lists */
    size_t *rn, *rcap;
    uint64_t joined, left, capped;
    uint64_t members;    /* nodes holding an entry (kept by core_dyn.c) */
    uint64_t lcap;       /* u32 slots allocated in win and the ring's lists */
    uint64_t peak;       /* most bytes counted (entries + the core's arrays) between batches */
    uint64_t trimmed;    /* members dropped between updates to stay within max_bytes */
};

/* policy.c ------------------------------------------------------------------ */
/* Check the version-4 options in s->o (mode, snapshot known) and create s->ad
 * when they ask for more than the defaults; sets s->rp's per-hop gammas. */
int gsnap_samp__adapt_setup(gsnap_sampler *s);
void gsnap_samp__adapt_free(gsnap_sampler *s);
/* Start of hop h of a batch: its n destinations (h = 1 starts the batch). */
int gsnap_samp__adapt_layer(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t n);
/* A frontier node of cached hop h served from the store, with degree d. */
void gsnap_samp__adapt_miss(gsnap_sampler *s, unsigned h, uint64_t node, size_t d);
/* A cached entry of hop h redrawn at use: stale beyond max_staleness. */
static inline void gsnap_samp__adapt_stale(gsnap_sampler *s, unsigned h) {
    if (s->ad) s->ad->cur[h].stale++;
}
/* A scheduled refresh is due: choose the gammas (s->rp.hop_gamma), record
 * them; *skip = 1 when an FSCR / PCF refresh would replace nothing. */
int gsnap_samp__adapt_due(gsnap_sampler *s, int *skip);
/* A batch finished: its counts enter the window. */
void gsnap_samp__adapt_end(gsnap_sampler *s);

/* core_dyn.c ---------------------------------------------------------------- */
/* After the image is built at open: frequency arrays; the static core cut
 * to core_max_bytes (highest degree first). */
int gsnap_samp__core_init(gsnap_sampler *s);
/* At a scheduled refresh batch (view begun): membership from the window. */
int gsnap_samp__core_update(gsnap_sampler *s);
/* Append this hop's destinations to the batch's frontier list. */
int gsnap_samp__core_note(gsnap_sampler *s, const uint64_t *dst, uint32_t n);
/* The batch's list enters the window (the oldest leaves). */
void gsnap_samp__core_end(gsnap_sampler *s);
void gsnap_samp__core_free(struct gsnap_samp__adapt *ad);
/* Count the nodes holding an entry and the core's bytes (their entries plus,
 * with a run-time core, its own arrays). */
void gsnap_samp__core_count(const gsnap_sampler *s, uint64_t *nodes, uint64_t *bytes);

#endif
