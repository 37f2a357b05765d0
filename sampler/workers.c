/*
 * sampler/workers.c -- parallel batch production (options.workers). A batch
 * is a pure function of (seed, batch number, the cache image it reads) when
 * nothing a batch does changes the next one: frozen reads, no snapshot table
 * to follow, no features, not PSCR. Then several batches can be produced at
 * the same time, each thread on its own sampling context (the sampler itself
 * for the caller's thread, a shadow sampler for each other thread: the
 * sampler's read-only parameters, its own scratch and its own read view of
 * the store), all sharing the image read-only.
 *
 * A round: the caller's thread runs the between-batch work of batch b (the
 * scheduled refresh swap, the read view); batches b .. b+m-1 (m <= 4 W,
 * never across a multiple of the refresh period, so no round straddles a
 * generation swap) are produced by W threads (the caller's and W - 1 started
 * for the round) taking the next batch number from a shared counter. A
 * batch's buffer is swapped out of the context into the batch's slot, with
 * its result and its statistics (the context's counters are put back, so a
 * batch counts only when it is returned). All threads are joined before b is
 * returned; the next m-1 calls return slots 1.. in order (untouched until
 * the next round). Anything that may change the cache between calls
 * (refresh, refresh_async, refresh_wait, a call with explicit seeds or
 * another batch size) drops the batches produced ahead: they are
 * recomputed, so batch i is the same whatever W.
 */
#include "sampler/sampler_int.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Batches per round per worker: a round ends with a join, so it should be
 * long enough that one descheduled thread (a shared machine) costs little. */
#define ROUND_PER_WORKER 4

struct gsnap_samp__slot {
    void *buf;
    size_t cap, len;
    int rc;
    gsnap_sampler_stats st; /* the batch's counts (those a batch changes) */
};

int gsnap_samp__workers_usable(const gsnap_sampler *s) {
    gsnap_sample_mode m = s->o.mode;
    return s->o.workers > 1 && !s->changed_at && !s->snap && s->nattr == 0 && !s->ad &&
           m != GSNAP_MODE_PSCR && m != GSNAP_MODE_PSCR_SC;
}

static void shadow_free(gsnap_sampler *w) {
    if (!w) return;
    gsnap_samp__scratch_free(&w->sc);
    gsnap_samp__map_free(&w->map);
    free(w->dslot);
    free(w->cand);
    free(w->pick);
    free(w->tmp);
    free(w->excl);
    free(w->rseeds);
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        free(w->lsrc[i]);
        free(w->lptr[i]);
        free(w->lidx[i]);
    }
    free(w->buf);
    if (w->src) w->src->destroy(w->src);
    free(w);
}

void gsnap_samp__workers_free(gsnap_sampler *s) {
    for (unsigned i = 0; i < s->nshadow; i++) shadow_free(s->shadow[i]);
    free(s->shadow);
    s->shadow = NULL;
    s->nshadow = 0;
    for (unsigned i = 0; i < s->nslot; i++) free(s->slot[i].buf);
    free(s->slot);
    s->slot = NULL;
    s->nslot = 0;
    s->ahead_n = s->ahead_next = 0;
}

void gsnap_samp__ahead_drop(gsnap_sampler *s) { s->ahead_n = s->ahead_next = 0; }

/* A shadow: the read-only parameters of s, fresh scratch, a forked source. */
static int shadow_new(gsnap_sampler *s, gsnap_sampler **out) {
    gsnap_sampler *w = calloc(1, sizeof *w);
    if (!w) return GSNAP_ENOMEM;
    w->magic = GSNAP_SAMP_MAGIC;
    w->db = s->db;
    w->o = s->o;
    w->L = s->L;
    memcpy(w->f_hop, s->f_hop, sizeof w->f_hop);
    w->rp = s->rp;
    w->nbound = s->nbound;
    size_t nb = s->nbound ? (size_t)s->nbound : 1;
    int rc = 0;
    if (s->dslot && !(w->dslot = calloc(nb, sizeof *w->dslot))) rc = GSNAP_ENOMEM;
    if (!rc) rc = s->src->fork(s->src, &w->src);
    if (rc) {
        shadow_free(w);
        return rc;
    }
    w->own_src = 1;
    *out = w;
    return 0;
}

static int ensure_contexts(gsnap_sampler *s) {
    unsigned want = s->o.workers - 1, slots = s->o.workers * ROUND_PER_WORKER;
    if (!s->slot) {
        if (!(s->slot = calloc(slots, sizeof *s->slot))) return GSNAP_ENOMEM;
        s->nslot = slots;
    }
    if (s->nshadow == want) return 0;
    if (!s->shadow && !(s->shadow = calloc(want, sizeof *s->shadow))) return GSNAP_ENOMEM;
    for (unsigned i = s->nshadow; i < want; i++) {
        int rc = shadow_new(s, &s->shadow[i]);
        if (rc) return rc; /* the ones made so far are kept (freed at close) */
        s->nshadow = i + 1;
    }
    return 0;
}

/* d = a - b over the counts a batch changes. */
static void stats_delta(gsnap_sampler_stats *d, const gsnap_sampler_stats *a,
                        const gsnap_sampler_stats *b) {
    memset(d, 0, sizeof *d);
    d->edges = a->edges - b->edges;
    d->seeds = a->seeds - b->seeds;
    d->t_sample = a->t_sample - b->t_sample;
    d->t_pack = a->t_pack - b->t_pack;
    d->refreshed_entries = a->refreshed_entries - b->refreshed_entries; /* lazy redraws */
    d->replaced_ids = a->replaced_ids - b->replaced_ids;
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        const gsnap_layer_stats *x = &a->layer[i], *y = &b->layer[i];
        gsnap_layer_stats *z = &d->layer[i];
        z->hits = x->hits - y->hits;
        z->misses = x->misses - y->misses;
        z->stale_hits = x->stale_hits - y->stale_hits;
        z->refreshed = x->refreshed - y->refreshed;
        z->edges = x->edges - y->edges;
        z->bytes_read = x->bytes_read - y->bytes_read;
        z->seconds = x->seconds - y->seconds;
    }
}

static void stats_add(gsnap_sampler_stats *a, const gsnap_sampler_stats *d) {
    a->edges += d->edges;
    a->seeds += d->seeds;
    a->t_sample += d->t_sample;
    a->t_pack += d->t_pack;
    a->refreshed_entries += d->refreshed_entries;
    a->replaced_ids += d->replaced_ids;
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        gsnap_layer_stats *x = &a->layer[i];
        const gsnap_layer_stats *y = &d->layer[i];
        x->hits += y->hits;
        x->misses += y->misses;
        x->stale_hits += y->stale_hits;
        x->refreshed += y->refreshed;
        x->edges += y->edges;
        x->bytes_read += y->bytes_read;
        x->seconds += y->seconds;
    }
}

/* One round's shared state. */
typedef struct {
    gsnap_sampler *s;
    uint64_t b; /* first batch of the round */
    size_t nseeds;
    unsigned m;
    atomic_uint next;
} round_ctx;

typedef struct {
    round_ctx *r;
    gsnap_sampler *ctx; /* s itself (the caller's thread) or a shadow */
} worker_arg;

/* Batch r->b + i on context ctx into slot i. */
static void produce_one(round_ctx *r, gsnap_sampler *ctx, unsigned i) {
    gsnap_sampler *s = r->s;
    struct gsnap_samp__slot *sl = &s->slot[i];
    int own_view = ctx != s; /* s's read view was begun by before_batch */
    size_t n = r->nseeds;
    gsnap_sampler_stats before = ctx->st;
    ctx->batch = r->b + i;
    int rc = gsnap_vec_reserve((void **)&ctx->rseeds, &ctx->rseeds_cap, n ? n : 1,
                               sizeof *ctx->rseeds);
    if (!rc) rc = gsnap_sampler_random_seeds(ctx, ctx->batch, n, ctx->rseeds);
    if (!rc && own_view) rc = ctx->src->begin(ctx->src, ctx->rp.at_t, ctx->version);
    if (!rc) {
        rc = gsnap_samp__produce(ctx, ctx->rseeds, n);
        if (own_view) ctx->src->end(ctx->src);
    }
    stats_delta(&sl->st, &ctx->st, &before);
    ctx->st = before; /* counted when the batch is returned */
    sl->rc = rc;
    /* the buffer goes to the slot; the context takes the slot's old one */
    void *tb = sl->buf;
    size_t tc = sl->cap;
    sl->buf = ctx->buf;
    sl->cap = ctx->buf_cap;
    sl->len = ctx->buf_len;
    ctx->buf = tb;
    ctx->buf_cap = tc;
    ctx->buf_len = 0;
}

static void *round_worker(void *arg) {
    worker_arg *a = arg;
    for (;;) {
        unsigned i = atomic_fetch_add(&a->r->next, 1);
        if (i >= a->r->m) break;
        produce_one(a->r, a->ctx, i);
    }
    return NULL;
}

/* Return slot i's batch (the next one). */
static int take_slot(gsnap_sampler *s, unsigned i, const void **buf, size_t *len) {
    struct gsnap_samp__slot *sl = &s->slot[i];
    if (sl->rc) {
        gsnap_samp__ahead_drop(s);
        return sl->rc;
    }
    stats_add(&s->st, &sl->st);
    *buf = sl->buf;
    *len = sl->len;
    return 0;
}

int gsnap_samp__next_parallel(gsnap_sampler *s, size_t nseeds, const void **buf, size_t *len) {
    int rc;
    if (s->ahead_next < s->ahead_n) {
        if ((rc = take_slot(s, s->ahead_next++, buf, len))) return rc;
        s->batch++;
        s->st.batches++;
        if (s->ahead_next == s->ahead_n) gsnap_samp__ahead_drop(s);
        return 0;
    }
    if ((rc = ensure_contexts(s))) return rc;
    if ((rc = gsnap_sampler__before_batch(s))) return rc; /* refresh swap, read view */
    /* the round: batches b .. b+m-1, short of the next refresh */
    uint64_t b = s->batch;
    unsigned m = s->nslot;
    if (s->o.period && s->im) {
        uint64_t left = s->o.period - b % s->o.period;
        if (left < m) m = (unsigned)left;
    }
    round_ctx r = {s, b, nseeds, m, 0};
    atomic_init(&r.next, 0);
    worker_arg args[GSNAP_SAMP_MAX_WORKERS];
    pthread_t th[GSNAP_SAMP_MAX_WORKERS];
    unsigned started = 0;
    for (unsigned t = 0; t < s->nshadow && t + 1 < m; t++) {
        gsnap_sampler *w = s->shadow[t];
        w->im = s->im;
        w->version = s->version;
        args[t] = (worker_arg){&r, w};
        if (pthread_create(&th[t], NULL, round_worker, &args[t]) != 0) break;
        started++;
    }
    worker_arg self = {&r, s};
    round_worker(&self); /* this thread takes batches too (all of them if none started) */
    for (unsigned t = 0; t < started; t++) pthread_join(th[t], NULL);
    s->batch = b;
    rc = take_slot(s, 0, buf, len);
    rc = gsnap_sampler__after_batch(s, rc);
    if (rc) {
        *buf = NULL;
        *len = 0;
        return rc;
    }
    s->ahead_next = 1;
    s->ahead_n = m;
    if (m == 1) gsnap_samp__ahead_drop(s);
    return 0;
}
