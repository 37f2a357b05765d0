/*
 * sampler/refresh.c -- what happens between batches: adopting a finished
 * background refresh or a newer generation of the snapshot table, marking
 * entries stale from the store's change log, the modes' scheduled refreshes
 * (FCR rebuild, FSCR / PCF gamma refresh of every entry, PSCR refresh of the
 * batch's nodes), synchronous and background refresh.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Redraw a stale or PSCR-touched entry from the store (current view). */
int gsnap_sampler__refresh_entry(gsnap_sampler *s, gsnap_samp__cache *c, unsigned cache_hop,
                                 uint64_t node, uint64_t gen, int whole, uint64_t *replaced) {
    const uint64_t *full;
    size_t d;
    int rc = 0;
    if (s->im->lz && !s->changed_at) { /* frozen: the list captured at open is the view's */
        const uint32_t *ids;
        gsnap_samp__lazy_nbrs(s->im->lz, node, &ids, &d);
        rc = gsnap_vec_reserve((void **)&s->nb64, &s->nb64_cap, d ? d : 1, sizeof *s->nb64);
        for (size_t i = 0; rc == 0 && i < d; i++) s->nb64[i] = ids[i];
        full = s->nb64;
    } else {
        rc = s->src->nbrs(s->src, node, &full, &d);
    }
    if (rc) return rc;
    rc = gsnap_samp__entry_refresh(c, cache_hop, node, full, d, &s->rp, gen, s->version, whole,
                                   &s->sc, replaced, NULL);
    gsnap_samp__hot_node(s->im, c, node); /* keep the serving view in step */
    return rc;
}

static void pipe_cancel(gsnap_sampler *s);

static int is_pscr(gsnap_sample_mode m) { return m == GSNAP_MODE_PSCR || m == GSNAP_MODE_PSCR_SC; }
static int is_fcr(gsnap_sample_mode m) { return m == GSNAP_MODE_FCR || m == GSNAP_MODE_FCR_SC; }

/* The mode's whole-cache refresh as generation gen + 1: of `im` in place
 * (from NULL), or written into `im` from `from` (which is only read); with a
 * snapshot the changed entries are committed in one write txn. */
static int refresh_image(gsnap_sampler *s, gsnap_samp__image *im,
                         const gsnap_samp__image *from, gsnap_samp__src *src,
                         const gsnap_samp__rparams *rp, const uint64_t *changed,
                         uint64_t *entries, uint64_t *replaced) {
    uint64_t base = from ? from->gen : im->gen, gen = base + 1;
    int was_mixed = from ? from->mixed : im->mixed, mixed = 0;
    uint64_t *dirty = NULL;
    size_t ndirty = 0;
    int rc;
    if (is_fcr(s->o.mode)) {
        rc = gsnap_samp__image_build(im, src, rp, gen);
        *entries = 0;
        *replaced = 0;
        for (unsigned i = 0; i < im->ncache; i++)
            for (uint64_t v = 0; v < im->nnodes; v++)
                if (im->caches[i].cnt[v] != GSNAP_SAMP_UNCACHED) (*entries)++;
        /* a rebuild rewrites every entry */
        if (rc == 0 && s->snap) {
            rc = gsnap_samp__persist_save(s, im, NULL, 0, base, &im->gen, &mixed);
            im->mixed = 0;
        }
    } else {
        if (from)
            rc = gsnap_samp__image_refresh_from(im, from, src, rp, gen, changed, entries, replaced,
                                                s->snap ? &dirty : NULL, &ndirty);
        else
            rc = gsnap_samp__image_refresh_all(im, src, rp, gen, changed, entries, replaced,
                                               s->snap ? &dirty : NULL, &ndirty);
        /* only the entries that changed are written */
        if (rc == 0 && s->snap) {
            rc = gsnap_samp__persist_save(s, im, dirty ? dirty : (const uint64_t *)&base, ndirty,
                                          base, &im->gen, &mixed);
            im->mixed = was_mixed || mixed;
        }
    }
    free(dirty);
    return rc;
}

static void count_refresh(gsnap_sampler *s, uint64_t entries, uint64_t replaced) {
    s->st.refreshes++;
    s->st.refreshed_entries += entries;
    s->st.replaced_ids += replaced;
    s->st.generation = s->im ? s->im->gen : 0;
}

/* Parameters of a refresh now: reads at the batch's version. */
static gsnap_samp__rparams rparams_now(const gsnap_sampler *s) {
    gsnap_samp__rparams rp = s->rp;
    rp.as_of = s->version;
    return rp;
}

/* The share of cached ids each cache's next refresh replaces (FSCR): one
 * gamma per cache, as cache.c's entry refresh reads it (per hop: policy.c
 * sets rp.hop_gamma at the due batch, before the refresh). */
static void refresh_gammas(const gsnap_sampler *s, double *gamma) {
    const gsnap_samp__rparams *rp = &s->rp;
    for (unsigned i = 0; i < rp->ncache; i++)
        gamma[i] = rp->per_hop ? rp->hop_gamma[rp->hops[i]] : rp->gamma;
}

/* Lazy FCR / FSCR (lazy.c): a refresh only moves the generation; each entry
 * is brought to it when a batch first serves it. */
static int lazy_refresh(gsnap_sampler *s) {
    double gamma[GSNAP_MAX_LAYERS + 1] = {0};
    refresh_gammas(s, gamma);
    int rc = gsnap_samp__lazy_bump(s->im, gamma);
    if (rc == 0) count_refresh(s, 0, 0);
    return rc;
}

int gsnap_sampler_refresh(gsnap_sampler *s) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return GSNAP_EINVAL;
    if (!s->im) return 0; /* FBL: nothing cached */
    gsnap_samp__ahead_drop(s); /* batches produced ahead read the old entries */
    pipe_cancel(s);
    if (s->bg_running) return GSNAP_EBUSY;
    if (s->im->lazy) return lazy_refresh(s);
    gsnap_samp__ovl_fold(s->im); /* a pass over the whole image: the overlay back in it */
    double t0 = gsnap_now();
    uint64_t entries = 0, replaced = 0;
    gsnap_samp__rparams rp = rparams_now(s);
    int rc = refresh_image(s, s->im, NULL, s->src, &rp, s->changed_at, &entries, &replaced);
    if (rc == 0) count_refresh(s, entries, replaced);
    s->st.t_refresh += gsnap_now() - t0;
    return rc;
}

/* ---- background refresh ----------------------------------------------------- */

typedef struct {
    gsnap_sampler *s;
    gsnap_samp__image *img;   /* clone made by the caller (refreshed in place), or NULL */
    gsnap_samp__image *spare; /* image to write into from s->im, or NULL (allocate) */
    gsnap_samp__rparams rp;
    int pipelined; /* the next scheduled generation (full priority: it is awaited) */
} bg_arg;

static void *bg_main(void *varg) {
    bg_arg *a = varg;
    gsnap_sampler *s = a->s;
    gsnap_samp__image *img = a->img;
    uint64_t entries = 0, replaced = 0;
    int rc = 0;
    /* background work: yield the CPU to the sampling thread (Linux: per-thread nice);
     * not the scheduled generation, which the sampler waits for at its due batch */
    if (!a->pipelined && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0) {
        /* best effort */
    }
    double t0 = gsnap_now();
    if (img) {
        rc = refresh_image(s, img, NULL, s->bg_src, &a->rp, s->bg_changed, &entries, &replaced);
    } else { /* s->im is only read meanwhile: write the new generation beside it */
        img = a->spare;
        if (!img) rc = gsnap_samp__image_new(s->im->nnodes, &a->rp, &img);
        if (rc == 0)
            rc = refresh_image(s, img, s->im, s->bg_src, &a->rp, s->bg_changed, &entries,
                               &replaced);
    }
    /* the serving view too, here: the sampling thread then only swaps pointers */
    if (rc == 0) rc = gsnap_samp__hot_build(img);
    pthread_mutex_lock(&s->bg_lock);
    s->bg_seconds = gsnap_now() - t0;
    s->bg_rc = rc;
    if (rc == 0) {
        s->bg_ready = img;
        s->bg_entries = entries;
        s->bg_replaced = replaced;
    } else {
        gsnap_samp__image_free(img);
    }
    pthread_mutex_unlock(&s->bg_lock);
    free(a);
    return NULL;
}

/* Start a refresh of s->im on a background thread (pipelined: the next
 * scheduled generation, adopted at its due batch and not before). */
static int bg_start(gsnap_sampler *s, int pipelined) {
    int rc = 0;
    bg_arg *a = calloc(1, sizeof *a);
    if (!a) return GSNAP_ENOMEM;
    a->s = s;
    a->rp = rparams_now(s);
    a->pipelined = pipelined;
    /* modes that write entries during batches: copy now, in this thread */
    if (is_pscr(s->o.mode) || s->changed_at) {
        if ((rc = gsnap_samp__image_clone(s->im, &a->img))) goto fail;
    } else {
        a->spare = s->spare; /* owned by the thread from here on */
        s->spare = NULL;
    }
    free(s->bg_changed);
    s->bg_changed = NULL;
    if (s->changed_at) {
        size_t nn = s->im->nnodes ? (size_t)s->im->nnodes : 1;
        if (!(s->bg_changed = malloc(nn * sizeof *s->bg_changed))) { rc = GSNAP_ENOMEM; goto fail; }
        memcpy(s->bg_changed, s->changed_at, nn * sizeof *s->bg_changed);
    }
    if (s->bg_src) s->bg_src->destroy(s->bg_src);
    s->bg_src = NULL;
    if ((rc = s->src->fork(s->src, &s->bg_src))) goto fail;
    if (s->bg_src->keep_lists) s->bg_src->keep_lists(s->bg_src, 0); /* one refresh reads each list once */
    s->bg_rc = 0;
    if (pthread_create(&s->bg, NULL, bg_main, a) != 0) { rc = GSNAP_ENOMEM; goto fail; }
    s->bg_running = 1;
    s->bg_pipelined = pipelined;
    return 0;
fail:
    gsnap_samp__image_free(a->img);
    if (a->spare) s->spare = a->spare; /* give it back */
    free(a);
    return rc;
}

/* Drop a prepared (or preparing) scheduled generation: the caller refreshes
 * by other means; its image becomes the spare. */
static void pipe_cancel(gsnap_sampler *s) {
    if (!s->bg_running || !s->bg_pipelined) return;
    pthread_join(s->bg, NULL);
    s->bg_running = 0;
    s->bg_pipelined = 0;
    if (s->bg_src) s->bg_src->destroy(s->bg_src);
    s->bg_src = NULL;
    if (s->bg_ready) {
        gsnap_samp__image_free(s->spare);
        s->spare = s->bg_ready;
        s->bg_ready = NULL;
    }
}

int gsnap_sampler_refresh_async(gsnap_sampler *s) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return GSNAP_EINVAL;
    if (!s->im) return 0;
    gsnap_samp__ahead_drop(s);
    pipe_cancel(s);
    if (s->bg_running) return GSNAP_EBUSY;
    if (s->im->lazy) return lazy_refresh(s); /* O(1): done at once */
    gsnap_samp__ovl_fold(s->im); /* the image is copied from: the overlay back in it */
    return bg_start(s, 0);
}

/* Join a finished or running background refresh; adopt its image. A
 * scheduled generation (bg_pipelined) is adopted only when waited for. */
static int bg_adopt(gsnap_sampler *s, int wait) {
    if (!s->bg_running) return 0;
    if (!wait && s->bg_pipelined) return 0;
    if (!wait) {
        pthread_mutex_lock(&s->bg_lock);
        int done = s->bg_ready != NULL || s->bg_rc != 0;
        pthread_mutex_unlock(&s->bg_lock);
        if (!done) return 0;
    }
    pthread_join(s->bg, NULL);
    s->bg_running = 0;
    s->bg_pipelined = 0;
    if (s->bg_src) s->bg_src->destroy(s->bg_src);
    s->bg_src = NULL;
    int rc = s->bg_rc;
    s->st.t_refresh += s->bg_seconds; /* spent on the background thread */
    if (s->bg_ready) {
        gsnap_samp__image_free(s->spare); /* keep the old image for the next refresh */
        s->spare = s->im;
        s->im = s->bg_ready;
        s->bg_ready = NULL;
        count_refresh(s, s->bg_entries, s->bg_replaced);
    }
    return rc;
}

void gsnap_sampler__bg_join(gsnap_sampler *s) {
    (void)bg_adopt(s, 1);
    if (s->bg_src) s->bg_src->destroy(s->bg_src);
    s->bg_src = NULL;
}

int gsnap_sampler_refresh_wait(gsnap_sampler *s) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return GSNAP_EINVAL;
    if (s->bg_pipelined) return 0; /* the scheduled generation waits for its batch */
    if (s->bg_running) gsnap_samp__ahead_drop(s);
    return bg_adopt(s, 1);
}

/* ---- between batches ------------------------------------------------------------ */

/* Fresh mode: apply the store's change log up to the newest version. */
static int mark_changes(gsnap_sampler *s) {
    uint64_t latest = 0;
    int rc = s->src->latest(s->src, &latest);
    if (rc) return rc;
    for (uint64_t v = s->seen_version + 1; v <= latest; v++) {
        uint64_t *nodes = NULL;
        size_t n = 0;
        if ((rc = s->src->changed(s->src, v, &nodes, &n))) return rc;
        for (size_t i = 0; i < n; i++) {
            uint64_t u = nodes[i];
            if (u >= s->nbound) continue;
            s->changed_at[u] = v;
            if (s->im && u < s->im->nnodes)
                for (unsigned c = 0; c < s->im->ncache; c++)
                    if (s->im->caches[c].cnt[u] != GSNAP_SAMP_UNCACHED) s->st.stale_marked++;
        }
        free(nodes);
    }
    s->seen_version = latest;
    s->version = latest;
    return 0;
}

/* Whole-cache refreshes prepared aside and swapped in at their due batch:
 * scheduled refreshes of FCR / FSCR / PCF (and -SC) without a snapshot in
 * frozen mode (no entry changes during batches, no table to commit to). */
static int pipelined(const gsnap_sampler *s) {
    return s->o.period && s->im && !s->im->lazy && !s->snap && !s->changed_at &&
           !is_pscr(s->o.mode) &&
           !s->ad && /* an adaptive gamma or core is chosen at the due batch */
           !s->shm;  /* shared images: the refresh runs in place, then is published */
}

int gsnap_sampler__before_batch(gsnap_sampler *s) {
    int rc;
    if ((rc = bg_adopt(s, 0))) return rc;
    if (s->snap && s->im && !s->bg_running) { /* another writer's generation? */
        uint64_t gen = 0;
        double t0 = gsnap_now();
        if ((rc = gsnap_samp__persist_generation(s, &gen))) return rc;
        if (gen != s->im->gen || s->im->mixed) {
            if ((rc = gsnap_samp__persist_load(s, s->im, &gen))) return rc;
            s->st.generation = s->im->gen;
        }
        s->st.t_load += gsnap_now() - t0;
    }
    if (s->changed_at) {
        double t0 = gsnap_now();
        if ((rc = mark_changes(s))) return rc;
        s->st.t_changes += gsnap_now() - t0;
    }
    int due = s->o.period && s->batch > 0 && s->batch % s->o.period == 0, skip = 0;
    if (due && (rc = gsnap_samp__adapt_due(s, &skip))) return rc; /* policy.c: the gammas */
    if (pipelined(s)) {
        /* generation k+1 is prepared aside while batches [kT, (k+1)T) are served
         * from k, and swapped in at batch (k+1)T: the same entries as a refresh
         * run at that batch (same input image, parameters and generation) */
        if (due && s->bg_running && s->bg_pipelined) {
            double t0 = gsnap_now();
            rc = bg_adopt(s, 1);
            s->st.t_refresh_wait += gsnap_now() - t0;
            if (rc) return rc;
        } else if (due && !s->bg_running) {
            if ((rc = gsnap_sampler_refresh(s))) return rc; /* none prepared (cancelled) */
        }
        if (!s->bg_running && (rc = bg_start(s, 1))) return rc;
    } else if (due && s->im && !is_pscr(s->o.mode) && !s->bg_running && !skip) {
        /* shared.c: another process's published generation replaces the refresh */
        if (!gsnap_samp__shared_next(s) && (rc = gsnap_sampler_refresh(s))) return rc;
    }
    if ((rc = gsnap_samp__shared_sync(s, 0))) return rc; /* map or publish a new generation */
    if ((rc = gsnap_samp__hot_build(s->im))) return rc;
    /* lazy_sweep.c: the generation's redraws now, on this thread (with workers:
     * the round's threads share them, workers.c) */
    if (!s->lz_defer) gsnap_samp__sweep_serial(s);
    rc = s->src->begin(s->src, s->o.max_staleness >= 0 ? s->o.at_t : s->rp.at_t, s->version);
    if (rc == 0 && due) rc = gsnap_samp__core_update(s); /* core_dyn.c: run-time core */
    return rc;
}

int gsnap_sampler__pscr_due(const gsnap_sampler *s) {
    return s->o.period && s->batch > 0 && s->batch % s->o.period == 0 && is_pscr(s->o.mode) &&
           s->im;
}

/* PSCR: on refresh batches, refresh the entries of this hop's frontier. */
int gsnap_sampler__pscr(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t n,
                        uint64_t gen) {
    if (!gsnap_sampler__pscr_due(s) || s->f_hop[h] < 0) return 0;
    int shared = s->o.mode == GSNAP_MODE_PSCR_SC;
    gsnap_samp__cache *c = &s->im->caches[shared ? 0 : h - 1];
    if (!c->cap) return 0;
    double t0 = gsnap_now();
    gsnap_layer_stats *ls = &s->st.layer[s->L - h];
    int rc = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = dst[i];
        if (v >= s->im->nnodes || c->cnt[v] == GSNAP_SAMP_UNCACHED) continue;
        if (shared) {
            if (s->touched[v] == (uint32_t)(s->batch + 1)) continue;
            s->touched[v] = (uint32_t)(s->batch + 1);
        } else {
            s->touched[v] = (uint32_t)(s->batch + 1);
        }
        int whole = s->changed_at && s->changed_at[v] > c->ver[v];
        uint64_t rep = 0;
        /* shared_ovl.c: on a published image, into the private overlay */
        if ((rc = gsnap_samp__ovl_refresh(s, c, shared ? 0 : h, v, gen, whole, &rep))) break;
        ls->refreshed++;
        s->st.refreshed_entries++;
        s->st.replaced_ids += rep;
    }
    s->st.t_refresh += gsnap_now() - t0;
    return rc;
}

int gsnap_sampler__after_batch(gsnap_sampler *s, int rc) {
    s->src->end(s->src);
    if (rc) return rc;
    int due = s->o.period && s->batch > 0 && s->batch % s->o.period == 0;
    if (due && is_pscr(s->o.mode) && s->im) {
        if (!s->snap) s->im->gen++;
        if (s->snap) { /* commit the touched entries as the new generation */
            uint64_t *nodes = NULL;
            size_t n = 0;
            uint32_t mark = (uint32_t)(s->batch + 1);
            for (uint64_t v = 0; v < s->im->nnodes; v++) n += s->touched[v] == mark;
            nodes = malloc((n ? n : 1) * sizeof *nodes);
            if (!nodes) return GSNAP_ENOMEM;
            n = 0;
            for (uint64_t v = 0; v < s->im->nnodes; v++)
                if (s->touched[v] == mark) nodes[n++] = v;
            int mixed = 0;
            rc = gsnap_samp__persist_save(s, s->im, nodes, n, s->im->gen, &s->im->gen, &mixed);
            free(nodes);
            if (rc) return rc;
            s->im->mixed |= mixed;
        }
        s->st.refreshes++;
        s->st.generation = s->im->gen;
    }
    gsnap_samp__adapt_end(s); /* policy.c: the batch's counts enter the window */
    s->batch++;
    s->st.batches++;
    return 0;
}
