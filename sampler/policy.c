/*
 * sampler/policy.c -- adaptive refresh (issue 18): how the OTF modes choose
 * gamma per layer at each scheduled refresh.
 *
 *   fixed     gamma_l = options.gamma (what the sampler always did).
 *   miss      gamma_l = clamp(DeltaH_l / (2 lambda_l), 0, 1), DeltaH_l the
 *             share of hop l's frontier nodes, over the last `window`
 *             batches, that the cache did not hold: no entry though the node
 *             is eligible (degree above the threshold; with a run-time core,
 *             a core candidate), or an entry stale beyond max_staleness
 *             (redrawn at use). Nothing changed -> 0; everything -> 1 / (2 lambda).
 *   feedback  gamma_l = min(1, kappa * statistic_l), the statistic the
 *             trainer reported last for layer l (gsnap_sampler_report);
 *             options.gamma until a first report.
 * An -SC mode has one cache: its counts are pooled over the hops, lambda is
 * the smallest of the layers', the statistic the largest reported.
 * The chosen gammas go to s->rp.hop_gamma, which cache.c's entry refresh
 * reads (rp.per_hop); every choice is kept with its inputs (history).
 */
#include "sampler/sampler_int.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const policy_names[GSNAP_REFRESH_POLICY_COUNT] = {"fixed", "miss", "feedback"};

const char *gsnap_refresh_policy_name(gsnap_refresh_policy p) {
    return (unsigned)p < GSNAP_REFRESH_POLICY_COUNT ? policy_names[p] : "?";
}

int gsnap_refresh_policy_parse(const char *name, gsnap_refresh_policy *p) {
    for (int i = 0; name && p && i < GSNAP_REFRESH_POLICY_COUNT; i++)
        if (strcasecmp(name, policy_names[i]) == 0) {
            *p = (gsnap_refresh_policy)i;
            return 0;
        }
    return GSNAP_EINVAL;
}

static int bad(gsnap_sampler *s, const char *what) {
    if (s->db) return gsnap_store__err(s->db, GSNAP_EINVAL, "sampler: %s", what);
    return GSNAP_EINVAL;
}

static int is_otf(gsnap_sample_mode m) {
    return m != GSNAP_MODE_FBL && m != GSNAP_MODE_FCR && m != GSNAP_MODE_FCR_SC;
}

static int check_options(gsnap_sampler *s) {
    const gsnap_sampler_options *o = &s->o;
    if ((unsigned)o->policy >= GSNAP_REFRESH_POLICY_COUNT) return bad(s, "unknown refresh policy");
    if (o->policy != GSNAP_REFRESH_FIXED && !is_otf(o->mode))
        return bad(s, "an adaptive refresh policy needs an OTF mode (pscr, fscr, pcf or -sc)");
    if (o->core_min && o->mode == GSNAP_MODE_FBL) return bad(s, "core_min needs a cached mode");
    if (o->core_min && s->snap) return bad(s, "core_min (run-time core) is not supported with a snapshot");
    if (!(o->kappa >= 0 && isfinite(o->kappa))) return bad(s, "kappa must be >= 0 and finite");
    if (o->adapt_window > (1u << 20)) return bad(s, "adapt_window must be at most 2^20 batches");
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++)
        if (!(o->lambda[i] >= 0 && isfinite(o->lambda[i])))
            return bad(s, "lambda must be >= 0 and finite (0 = 0.5)");
    return 0;
}

int gsnap_samp__adapt_setup(gsnap_sampler *s) {
    int rc = check_options(s);
    if (rc) return rc;
    s->rp.per_hop = 1;
    for (unsigned h = 0; h <= GSNAP_MAX_LAYERS; h++) s->rp.hop_gamma[h] = s->o.gamma;
    if (s->o.policy == GSNAP_REFRESH_FIXED && s->o.core_min == 0) return 0;
    struct gsnap_samp__adapt *ad = calloc(1, sizeof *ad);
    if (!ad) return GSNAP_ENOMEM;
    s->ad = ad;
    ad->policy = s->o.policy;
    ad->window = s->o.adapt_window ? s->o.adapt_window : s->o.period ? s->o.period : 1;
    ad->nh = s->L + 1;
    if (!(ad->ring = calloc((size_t)ad->window * ad->nh, sizeof *ad->ring))) return GSNAP_ENOMEM;
    for (unsigned h = 1; h <= s->L; h++) {
        double l = s->o.lambda[s->L - h];
        ad->lambda[h] = l > 0 ? l : 0.5;
        ad->stat[h] = -1;
    }
    ad->kappa = s->o.kappa > 0 ? s->o.kappa : 1.0;
    ad->dyn = s->o.core_min > 0;
    ad->core_min = s->o.core_min;
    ad->max_bytes = s->o.core_max_bytes;
    return 0;
}

void gsnap_samp__adapt_free(gsnap_sampler *s) {
    if (!s->ad) return;
    free(s->ad->ring);
    free(s->ad->hist);
    gsnap_samp__core_free(s->ad);
    free(s->ad);
    s->ad = NULL;
}

/* Is hop h served from a cache? */
static int hop_cached(const gsnap_sampler *s, unsigned h) {
    if (!s->im || s->f_hop[h] < 0) return 0;
    unsigned i = gsnap_samp__is_shared(s->o.mode) ? 0 : h - 1;
    return i < s->im->ncache && s->im->caches[i].cap > 0;
}

int gsnap_samp__adapt_layer(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t n) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad) return 0;
    if (h == 1) { /* a new batch */
        memset(ad->cur, 0, sizeof ad->cur);
        ad->nwin = 0;
    }
    if (hop_cached(s, h)) ad->cur[h].needed += n;
    return ad->dyn ? gsnap_samp__core_note(s, dst, n) : 0;
}

void gsnap_samp__adapt_miss(gsnap_sampler *s, unsigned h, uint64_t node, size_t d) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad || d <= s->o.threshold) return;
    if (ad->dyn && (node >= ad->nfreq || ad->freq[node] < ad->core_min)) return;
    ad->cur[h].not_held++;
}

void gsnap_samp__adapt_end(gsnap_sampler *s) {
    struct gsnap_samp__adapt *ad = s->ad;
    if (!ad) return;
    gsnap_samp__hcount *row = ad->ring + (size_t)(ad->nbatches % ad->window) * ad->nh;
    memcpy(row, ad->cur, ad->nh * sizeof *row);
    ad->nbatches++;
    if (ad->dyn) gsnap_samp__core_end(s);
}

/* The window's sums for hops [h0, h1]. */
static gsnap_samp__hcount window_sum(const struct gsnap_samp__adapt *ad, unsigned h0, unsigned h1) {
    gsnap_samp__hcount t = {0, 0, 0};
    uint64_t nb = ad->nbatches < ad->window ? ad->nbatches : ad->window;
    for (uint64_t b = 0; b < nb; b++)
        for (unsigned h = h0; h <= h1; h++) {
            const gsnap_samp__hcount *c = ad->ring + (size_t)b * ad->nh + h;
            t.needed += c->needed;
            t.not_held += c->not_held;
            t.stale += c->stale;
        }
    return t;
}

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* One decision for cache hop ch (0 = shared, pooling hops 1..L). */
static gsnap_gamma_choice choose(const gsnap_sampler *s, unsigned ch) {
    const struct gsnap_samp__adapt *ad = s->ad;
    unsigned h0 = ch ? ch : 1, h1 = ch ? ch : s->L;
    gsnap_gamma_choice g;
    memset(&g, 0, sizeof g);
    g.batch = s->batch;
    g.layer = s->L - h0; /* -SC: hop 1 = layer L-1 */
    g.policy = (uint32_t)ad->policy;
    g.lambda = ad->lambda[h0];
    g.statistic = ad->stat[h0];
    for (unsigned h = h0; h <= h1; h++) {
        if (ad->lambda[h] < g.lambda && hop_cached(s, h)) g.lambda = ad->lambda[h];
        if (ad->stat[h] > g.statistic) g.statistic = ad->stat[h];
    }
    g.kappa = ad->kappa;
    gsnap_samp__hcount t = window_sum(ad, h0, h1);
    g.needed = t.needed;
    g.not_held = t.not_held;
    g.stale = t.stale;
    g.delta_h = t.needed ? (double)(t.not_held + t.stale) / (double)t.needed : 0.0;
    if (ad->policy == GSNAP_REFRESH_MISS)
        g.gamma = clamp01(g.delta_h / (2.0 * g.lambda));
    else if (ad->policy == GSNAP_REFRESH_FEEDBACK && g.statistic >= 0)
        g.gamma = fmin(1.0, ad->kappa * g.statistic);
    else
        g.gamma = s->o.gamma;
    return g;
}

int gsnap_samp__adapt_due(gsnap_sampler *s, int *skip) {
    struct gsnap_samp__adapt *ad = s->ad;
    *skip = 0;
    if (!ad || !s->im || !is_otf(s->o.mode)) return 0;
    int shared = gsnap_samp__is_shared(s->o.mode);
    int any = 0;
    for (unsigned h = shared ? 0 : 1; h <= (shared ? 0 : s->L); h++) {
        if (h && !hop_cached(s, h)) continue;
        gsnap_gamma_choice g = choose(s, h);
        s->rp.hop_gamma[h] = g.gamma;
        any |= g.gamma > 0;
        if (gsnap_vec_reserve((void **)&ad->hist, &ad->hcap, ad->nhist + 1, sizeof *ad->hist))
            return GSNAP_ENOMEM;
        ad->hist[ad->nhist++] = g;
    }
    ad->decisions++;
    gsnap_sample_mode m = s->o.mode;
    if (!any && m != GSNAP_MODE_PSCR && m != GSNAP_MODE_PSCR_SC) {
        *skip = 1; /* nothing to replace: no scan, no generation */
        ad->skipped++;
    }
    return 0;
}

/* ---- public ------------------------------------------------------------------ */

int gsnap_sampler_report(gsnap_sampler *s, unsigned layer, double value) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return GSNAP_EINVAL;
    if (!s->ad || s->ad->policy != GSNAP_REFRESH_FEEDBACK)
        return bad(s, "report: the sampler's refresh policy is not feedback");
    if (layer >= s->L) {
        if (s->db)
            return gsnap_store__err(s->db, GSNAP_EINVAL, "sampler: report: layer %u, the sampler has %u",
                                    layer, s->L);
        return GSNAP_EINVAL;
    }
    if (!(value >= 0) || !isfinite(value))
        return bad(s, "report: the statistic must be finite and >= 0");
    s->ad->stat[s->L - layer] = value;
    return 0;
}

size_t gsnap_sampler_gamma_history(const gsnap_sampler *s, gsnap_gamma_choice *out, size_t max) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC || !s->ad) return 0;
    size_t n = s->ad->nhist < max ? s->ad->nhist : max;
    if (out && n) memcpy(out, s->ad->hist, n * sizeof *out);
    return s->ad->nhist;
}

void gsnap_sampler_adapt_stats_get(const gsnap_sampler *s, gsnap_adapt_stats *st) {
    if (!st) return;
    memset(st, 0, sizeof *st);
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return;
    st->policy = (uint32_t)s->o.policy;
    gsnap_samp__core_count(s, &st->core_nodes, &st->core_bytes);
    if (!s->ad) return;
    st->dynamic_core = (uint32_t)s->ad->dyn;
    st->decisions = s->ad->decisions;
    st->skipped = s->ad->skipped;
    st->core_joined = s->ad->joined;
    st->core_left = s->ad->left;
    st->core_capped = s->ad->capped;
}
