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
 * scheduled refresh swap, the read view); batches b .. b+m-1 (up to the next
 * multiple of the refresh period, so no round straddles a generation swap;
 * without a period, until something drops them) are produced by a pool of
 * W - 1 threads started at the first call and kept until close, and by the
 * caller's thread while it waits, each taking the next batch number under
 * the pool's lock (first, when the round starts a generation whose lazy
 * redraws are swept, lazy_sweep.c: chunks of the live entries, shared the
 * same way). Batch b+j goes to slot j mod 3W: at most 3W - 1 batches
 * are made ahead of the one the caller holds, so a thread's buffers (each
 * goes back to the context that wrote it) stay in its core's cache. A
 * batch's buffer, result and statistics go to its slot (the context's
 * counters are put back, so a batch counts only when it is returned). The
 * caller returns batch i as soon as its slot is ready; the threads go on
 * between calls. Anything that may change the cache between calls (refresh,
 * refresh_async, refresh_wait, cache_checksum, a call with explicit seeds
 * or another batch size, close) first stops the pool (no more claims, the
 * batches being made are waited for) and drops the batches produced ahead:
 * they are recomputed, so batch i is the same whatever W.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

/* Slots per worker: batches produced ahead of the caller. Few, so that the
 * buffers a context writes stay in its core's cache; more than one, so that
 * a descheduled thread (a shared machine) costs little. */
#define SLOTS_PER_WORKER 3
/* A round without a refresh boundary (period 0) ends after this many batches. */
#define ROUND_MAX (1u << 30)
/* Live entries per claim of a round's sweep: what is left over twice the
 * threads (guided: the last claims are short, so the threads finish the
 * sweep together), between SWEEP_CHUNK_MIN and SWEEP_CHUNK (~100 us). */
#define SWEEP_CHUNK 512
#define SWEEP_CHUNK_MIN 32

struct gsnap_samp__slot {
    void *buf;
    size_t cap, len;
    int rc;
    int ready;    /* produced (under the pool's mu) */
    unsigned idx; /* of the round's batch in it */
    unsigned owner; /* the context that wrote buf */
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

static void pool_free(struct gsnap_samp__pool *p);

void gsnap_samp__workers_free(gsnap_sampler *s) {
    gsnap_samp__workers_stop(s);
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
    unsigned want = s->o.workers, slots = s->o.workers * SLOTS_PER_WORKER;
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

/* The pool: o.workers threads (o.workers - 1 started once, kept until close,
 * and the caller's), each on its own shadow context (shadow[t]; the caller's
 * is the last). A round is batches b .. b+m-1, claimed in order under mu;
 * batch b+j goes to slot j % nslot, so it may be claimed only once the
 * caller has let go of batch b+j-nslot (taken it and called again). The
 * caller takes slot j as soon as it is ready and, while it is not, claims
 * and produces the next claimable batch itself. A batch's buffer goes back
 * to the context that wrote it (a stack per context, the last written on
 * top): the next batch it writes is still in its core's cache. */
struct gsnap_samp__pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* the threads wait here for a batch to claim */
    pthread_cond_t done; /* the caller waits here for a slot (or for idle) */
    gsnap_sampler *s;
    uint64_t b;     /* the round's first batch */
    size_t nseeds;  /* seeds per batch */
    unsigned m;     /* batches in the round */
    unsigned next;  /* the next index to claim (>= m: none left) */
    unsigned freed; /* batches b .. b+freed-1 let go by the caller */
    unsigned busy;  /* batches being produced */
    int stop;       /* close: the threads return */
    unsigned nth;   /* threads started */
    pthread_t th[GSNAP_SAMP_MAX_WORKERS];
    /* the round's sweep (lazy_sweep.c): its caches (gsnap_samp__sweep_plan)'s
     * live entries, claimed in chunks from (cache sw_ci, entry sw_pos) on
     * before any batch of the round; sw_left of them are not claimed yet.
     * A batch does not wait for the chunks being swept (a thread may be
     * descheduled in one): an entry not reached yet is advanced by the batch. */
    unsigned sw_on, sw_ci;
    size_t sw_pos, sw_left;
    uint64_t sw_red, sw_rep; /* its redraws so far (added to s->st by the caller) */
    struct pool_buf { void *buf; size_t cap; } *fl; /* per context: nslot + 1 */
    unsigned nfl[GSNAP_SAMP_MAX_WORKERS];
};

static int sweep_claimable(const struct gsnap_samp__pool *p) { return p->sw_left > 0; }

/* Claim the next chunk: cache *ci, live entries [*lo, *hi). mu held. */
static void sweep_claim(struct gsnap_samp__pool *p, unsigned *ci, size_t *lo, size_t *hi) {
    const gsnap_samp__image *im = p->s->im;
    while (p->sw_ci < im->ncache &&
           (!(p->sw_on >> p->sw_ci & 1) || p->sw_pos >= im->hot[p->sw_ci].nlive)) {
        p->sw_ci++;
        p->sw_pos = 0;
    }
    if (p->sw_ci >= im->ncache) { /* (not reached: sw_left counts what is left) */
        p->sw_left = 0;
        *ci = 0;
        *lo = *hi = 0;
        return;
    }
    size_t n = p->sw_left / (2 * (size_t)p->s->nshadow);
    size_t rest = im->hot[p->sw_ci].nlive - p->sw_pos;
    if (n > SWEEP_CHUNK) n = SWEEP_CHUNK;
    if (n < SWEEP_CHUNK_MIN) n = SWEEP_CHUNK_MIN;
    if (n > rest) n = rest;
    *ci = p->sw_ci;
    *lo = p->sw_pos;
    *hi = p->sw_pos + n;
    p->sw_pos += n;
    p->sw_left -= n;
}

/* Claim and sweep one chunk on context t; mu held on entry and on return.
 * Best effort: an entry a failed sweep left behind is advanced by the batch
 * that serves it, which reports the error. */
static void sweep_one(struct gsnap_samp__pool *p, unsigned t) {
    gsnap_sampler *ctx = p->s->shadow[t];
    size_t lo, hi;
    unsigned ci;
    uint64_t red = 0, rep = 0;
    sweep_claim(p, &ci, &lo, &hi);
    p->busy++;
    pthread_mutex_unlock(&p->mu);
    (void)gsnap_samp__lazy_sweep(p->s->im, ci, lo, hi, &ctx->sc, &red, &rep);
    pthread_mutex_lock(&p->mu);
    p->sw_red += red;
    p->sw_rep += rep;
    if (--p->busy == 0) pthread_cond_signal(&p->done); /* pool_quiesce may wait */
}

/* The caller: the sweep's counts into s->st; mu held. */
static void sweep_count(struct gsnap_samp__pool *p) {
    p->s->st.refreshed_entries += p->sw_red;
    p->s->st.replaced_ids += p->sw_rep;
    p->sw_red = p->sw_rep = 0;
}

static int claimable(const struct gsnap_samp__pool *p) {
    return !sweep_claimable(p) && p->next < p->m && p->next < p->freed + p->s->nslot;
}

/* Batch p->b + i on context t into slot i % nslot (claimed: no one else
 * touches the slot until it is ready); mu not held. */
static void produce_one(struct gsnap_samp__pool *p, unsigned t, unsigned i) {
    gsnap_sampler *s = p->s, *ctx = s->shadow[t];
    struct gsnap_samp__slot *sl = &s->slot[i % s->nslot];
    size_t n = p->nseeds;
    gsnap_sampler_stats before = ctx->st;
    ctx->batch = p->b + i;
    int rc = gsnap_vec_reserve((void **)&ctx->rseeds, &ctx->rseeds_cap, n ? n : 1,
                               sizeof *ctx->rseeds);
    if (!rc) rc = gsnap_sampler_random_seeds(ctx, ctx->batch, n, ctx->rseeds);
    if (!rc) rc = ctx->src->begin(ctx->src, ctx->rp.at_t, ctx->version);
    if (!rc) {
        rc = gsnap_samp__produce(ctx, ctx->rseeds, n);
        ctx->src->end(ctx->src);
    }
    gsnap_samp__stats_delta(&sl->st, &ctx->st, &before);
    ctx->st = before; /* counted when the batch is returned */
    sl->rc = rc;
    sl->buf = ctx->buf; /* the buffer goes to the slot */
    sl->cap = ctx->buf_cap;
    sl->len = ctx->buf_len;
    sl->owner = t;
    ctx->buf = NULL;
    ctx->buf_cap = ctx->buf_len = 0;
}

/* Claim, produce and publish one batch on context t; mu held on entry and on return. */
static void claim_one(struct gsnap_samp__pool *p, unsigned t) {
    gsnap_sampler *ctx = p->s->shadow[t];
    unsigned i = p->next++;
    p->busy++;
    if (p->nfl[t]) { /* the buffer this context wrote last */
        struct pool_buf *f = &p->fl[t * (p->s->nslot + 1) + --p->nfl[t]];
        ctx->buf = f->buf;
        ctx->buf_cap = f->cap;
    }
    pthread_mutex_unlock(&p->mu);
    produce_one(p, t, i);
    pthread_mutex_lock(&p->mu);
    struct gsnap_samp__slot *sl = &p->s->slot[i % p->s->nslot];
    sl->ready = 1;
    sl->idx = i;
    p->busy--;
    pthread_cond_signal(&p->done); /* only the caller waits on done */
}

/* The caller lets go of slot j's buffer: back to the context that wrote it. mu held. */
static void release_slot(struct gsnap_samp__pool *p, struct gsnap_samp__slot *sl) {
    unsigned t = sl->owner;
    if (sl->buf && p->nfl[t] > p->s->nslot) free(sl->buf); /* full: bounds the buffers */
    else if (sl->buf) p->fl[t * (p->s->nslot + 1) + p->nfl[t]++] = (struct pool_buf){sl->buf, sl->cap};
    sl->buf = NULL;
    sl->cap = sl->len = 0;
    sl->ready = 0;
}

typedef struct {
    struct gsnap_samp__pool *p;
    unsigned t;
} thread_arg;

static void *pool_thread(void *arg) {
    struct gsnap_samp__pool *p = ((thread_arg *)arg)->p;
    unsigned t = ((thread_arg *)arg)->t;
    free(arg);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !sweep_claimable(p) && !claimable(p))
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        if (sweep_claimable(p)) sweep_one(p, t);
        else claim_one(p, t);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stop claiming and wait for the batches being produced (the pool is idle
 * after it: the image and the shadows may change). */
static void pool_quiesce(struct gsnap_samp__pool *p) {
    pthread_mutex_lock(&p->mu);
    if (p->next < p->m) p->m = p->next;
    p->sw_left = 0;
    while (p->busy) pthread_cond_wait(&p->done, &p->mu);
    sweep_count(p);
    pthread_mutex_unlock(&p->mu);
}

void gsnap_samp__ahead_drop(gsnap_sampler *s) {
    if (s->pool) pool_quiesce(s->pool);
    s->ahead_n = s->ahead_next = 0;
}

static void pool_free(struct gsnap_samp__pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned t = 0; t < p->nth; t++) pthread_join(p->th[t], NULL);
    for (unsigned t = 0; t < p->s->nshadow; t++)
        for (unsigned k = 0; k < p->nfl[t]; k++) free(p->fl[t * (p->s->nslot + 1) + k].buf);
    free(p->fl);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void gsnap_samp__workers_stop(gsnap_sampler *s) {
    if (s->pool) pool_quiesce(s->pool);
    pool_free(s->pool);
    s->pool = NULL;
    s->ahead_n = s->ahead_next = 0;
}

/* The pool and its threads (shadow[0 .. W-2]; shadow[W-1] is the caller's). */
static int pool_start(gsnap_sampler *s) {
    struct gsnap_samp__pool *p = calloc(1, sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    p->s = s;
    p->fl = calloc((size_t)s->nshadow * (s->nslot + 1), sizeof *p->fl);
    if (!p->fl || pthread_mutex_init(&p->mu, NULL)) {
        free(p->fl);
        free(p);
        return GSNAP_ENOMEM;
    }
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    s->pool = p;
    for (unsigned t = 0; t + 1 < s->nshadow; t++) {
        thread_arg *a = malloc(sizeof *a);
        if (!a) return GSNAP_ENOMEM; /* the threads started so far are kept */
        *a = (thread_arg){p, t};
        if (pthread_create(&p->th[t], NULL, pool_thread, a) != 0) {
            free(a);
            break; /* fewer threads: the caller produces the rest */
        }
        p->nth = t + 1;
    }
    return 0;
}

/* Take index i of the round: the caller lets go of the batches before it;
 * wait until slot i is ready, producing claimable batches meanwhile. */
static void wait_slot(gsnap_sampler *s, unsigned i) {
    struct gsnap_samp__pool *p = s->pool;
    pthread_mutex_lock(&p->mu);
    while (p->freed < i) release_slot(p, &s->slot[p->freed++ % s->nslot]);
    pthread_cond_broadcast(&p->work); /* room for more */
    struct gsnap_samp__slot *sl = &s->slot[i % s->nslot];
    while (!(sl->ready && sl->idx == i)) {
        if (sweep_claimable(p)) sweep_one(p, s->nshadow - 1);
        else if (claimable(p)) claim_one(p, s->nshadow - 1);
        else pthread_cond_wait(&p->done, &p->mu);
    }
    sweep_count(p);
    pthread_mutex_unlock(&p->mu);
}

/* Return index i's batch (the next one). */
static int take_slot(gsnap_sampler *s, unsigned i, const void **buf, size_t *len) {
    wait_slot(s, i);
    struct gsnap_samp__slot *sl = &s->slot[i % s->nslot];
    if (sl->rc) return sl->rc;
    gsnap_samp__stats_add(&s->st, &sl->st);
    *buf = sl->buf;
    *len = sl->len;
    return 0;
}

/* Start the round b .. b+m-1 (the pool is idle; the caller has let go of
 * every batch). */
static void round_start(gsnap_sampler *s, size_t nseeds, unsigned m) {
    struct gsnap_samp__pool *p = s->pool;
    pthread_mutex_lock(&p->mu);
    for (unsigned t = 0; t < s->nshadow; t++) {
        s->shadow[t]->im = s->im;
        s->shadow[t]->version = s->version;
    }
    for (unsigned i = 0; i < s->nslot; i++) release_slot(p, &s->slot[i]);
    p->b = s->batch;
    p->nseeds = nseeds;
    p->m = m;
    p->next = p->freed = 0;
    p->sw_on = gsnap_samp__sweep_plan(s); /* the generation's redraws first, shared */
    p->sw_ci = 0;
    p->sw_pos = p->sw_left = 0;
    for (unsigned i = 0; p->sw_on && i < s->im->ncache; i++)
        if (p->sw_on >> i & 1) p->sw_left += s->im->hot[i].nlive;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

int gsnap_samp__next_parallel(gsnap_sampler *s, size_t nseeds, const void **buf, size_t *len) {
    int rc;
    if (s->ahead_next < s->ahead_n) {
        if ((rc = take_slot(s, s->ahead_next++, buf, len))) {
            gsnap_samp__ahead_drop(s);
            return rc;
        }
        s->batch++;
        s->st.batches++;
        if (s->ahead_next == s->ahead_n) s->ahead_n = s->ahead_next = 0;
        return 0;
    }
    if ((rc = ensure_contexts(s))) return rc;
    if (!s->pool && (rc = pool_start(s))) return rc;
    s->lz_defer = 1; /* the round's threads share its sweep */
    rc = gsnap_sampler__before_batch(s); /* refresh swap, read view */
    s->lz_defer = 0;
    if (rc) return rc;
    /* the workers read through views of their own: this thread must not hold
     * one while it waits for them, or a map growth pending meanwhile (which
     * waits for every view) holds their views back (store/mapgate.c, I4) */
    s->src->end(s->src);
    /* the round: batches b .. b+m-1, short of the next refresh */
    unsigned m = ROUND_MAX;
    if (s->o.period && s->im) {
        uint64_t left = s->o.period - s->batch % s->o.period;
        if (left < m) m = (unsigned)left;
    }
    round_start(s, nseeds, m);
    s->ahead_next = 1;
    s->ahead_n = m;
    rc = take_slot(s, 0, buf, len);
    rc = gsnap_sampler__after_batch(s, rc);
    if (rc || m == 1) gsnap_samp__ahead_drop(s);
    if (rc) {
        *buf = NULL;
        *len = 0;
    }
    return rc;
}
