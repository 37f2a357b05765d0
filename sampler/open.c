/*
 * sampler/open.c -- a sampler's life: mode names, options, open (on a
 * snapshot or on any neighbour source), close, statistics, and
 * gsnap_snapshot_refresh_caches (open, refresh, close). The top of the
 * module: it calls refresh.c, persist.c, cache.c and source.c, and nothing
 * calls it back.
 */
#include "sampler/sampler_int.h"
#include "sampler/shared_int.h"
#include "snapshot/snapshot.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <math.h>

static const char *const mode_names[GSNAP_MODE_COUNT] = {
    "fbl", "fcr", "fcr-sc", "pscr", "pscr-sc", "fscr", "fscr-sc", "pcf", "pcf-sc"};

int gsnap_sampler_options_version(void) { return GSNAP_SAMPLER_OPTIONS_VERSION; }

const char *gsnap_sample_mode_name(gsnap_sample_mode mode) {
    return (unsigned)mode < GSNAP_MODE_COUNT ? mode_names[mode] : "?";
}

int gsnap_sample_mode_parse(const char *name, gsnap_sample_mode *mode) {
    for (int i = 0; name && i < GSNAP_MODE_COUNT; i++)
        if (strcasecmp(name, mode_names[i]) == 0) {
            *mode = (gsnap_sample_mode)i;
            return 0;
        }
    return GSNAP_EINVAL;
}

static int bad(gsnap_db *db, const char *what) {
    if (db) return gsnap_store__err(db, GSNAP_EINVAL, "sampler: %s", what);
    return GSNAP_EINVAL;
}

static int bad_version(gsnap_db *db, const gsnap_sampler_options *opts) {
    if (db)
        return gsnap_store__err(db, GSNAP_EINVAL, "sampler: options version %u, this build reads versions 1..%d",
                                opts ? opts->version : 0, GSNAP_SAMPLER_OPTIONS_VERSION);
    return GSNAP_EINVAL;
}

/* Fill defaults and check the options; derive per-hop fanouts and caches. */
static int setup_options(gsnap_sampler *s, const gsnap_sampler_options *opts) {
    gsnap_sampler_options o;
    if (gsnap_samp__copy_options(&o, opts)) return bad_version(s->db, opts);
    int arc = gsnap_samp__attr_setup(s, &o); /* features / labels (gather.c) */
    if (arc) return arc;
    if ((unsigned)o.mode >= GSNAP_MODE_COUNT) return bad(s->db, "unknown mode");
    if (o.layers == 0 || o.layers > GSNAP_MAX_LAYERS) return bad(s->db, "layers not in 1..16");
    if (o.workers > GSNAP_SAMP_MAX_WORKERS) return bad(s->db, "workers not in 0..64");
    if (o.dir != GSNAP_DIR_IN && o.dir != GSNAP_DIR_OUT) return bad(s->db, "direction");
    if (o.alpha == 0) o.alpha = 2.0;
    if (o.gamma == 0) o.gamma = 0.15;
    if (o.delta == 0) o.delta = 0.4;
    if (!(o.alpha >= 1.0 && o.alpha <= 1000.0)) return bad(s->db, "alpha must be in [1, 1000]");
    if (!(o.gamma > 0 && o.gamma <= 1.0)) return bad(s->db, "gamma must be in (0, 1]");
    if (!(o.delta >= 0 && o.delta <= 1.0)) return bad(s->db, "delta must be in [0, 1]");
    s->L = o.layers;
    for (unsigned i = 0; i < o.layers; i++) {
        if (o.fanouts[i] == 0 || o.fanouts[i] < -1) return bad(s->db, "fanout must be > 0 or -1");
        if (o.fanouts[i] > GSNAP_MAX_FANOUT || (o.fanouts[i] > 0 && ceil(o.alpha * o.fanouts[i] - 1e-9) > GSNAP_MAX_CACHE_IDS))
            return s->db ? gsnap_store__err(s->db, GSNAP_ERANGE, "sampler: fanout %d of layer %u (alpha %g) is beyond "
                                            "the limits (fanout <= %d, alpha * fanout <= %d)", o.fanouts[i], i,
                                            o.alpha, GSNAP_MAX_FANOUT, GSNAP_MAX_CACHE_IDS)
                         : GSNAP_ERANGE;
        s->f_hop[o.layers - i] = o.fanouts[i]; /* hop 1 = the layer next to the seeds */
    }
    s->o = o;
    gsnap_samp__rparams *rp = &s->rp;
    memset(rp, 0, sizeof *rp);
    rp->seed = o.seed;
    rp->gamma = o.gamma;
    rp->threshold = o.threshold;
    rp->at_t = o.at_t;
    rp->as_of = o.as_of;
    if (o.mode == GSNAP_MODE_FBL) {
        rp->ncache = 0;
    } else if (gsnap_samp__is_shared(o.mode)) {
        uint32_t cap = 0;
        for (unsigned h = 1; h <= s->L; h++)
            if (s->f_hop[h] > 0) {
                uint32_t c = (uint32_t)ceil(o.alpha * s->f_hop[h] - 1e-9);
                if (c > cap) cap = c;
            }
        rp->ncache = 1;
        rp->caps[0] = cap;
        rp->hops[0] = 0;
    } else {
        rp->ncache = s->L;
        for (unsigned h = 1; h <= s->L; h++) {
            rp->caps[h - 1] = s->f_hop[h] > 0 ? (uint32_t)ceil(o.alpha * s->f_hop[h] - 1e-9) : 0;
            rp->hops[h - 1] = h;
        }
    }
    return gsnap_samp__adapt_setup(s); /* policy.c: version-4 options (issue 18) */
}

static void free_scratch(gsnap_sampler *s) {
    gsnap_samp__scratch_free(&s->sc);
    gsnap_samp__map_free(&s->map);
    free(s->pick);
    free(s->tmp);
    free(s->excl);
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        free(s->lsrc[i]);
        free(s->lptr[i]);
        free(s->lidx[i]);
    }
    free(s->touched);
    free(s->nb64);
    free(s->dslot);
    free(s->cand);
    free(s->rseeds);
    gsnap_samp__workers_free(s);
    free(s->buf);
    gsnap_samp__attr_free(s);
}

void gsnap_sampler_close(gsnap_sampler *s) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC) return;
    gsnap_samp__workers_stop(s); /* its threads read the image */
    gsnap_sampler__bg_join(s);
    gsnap_samp__image_free(s->bg_ready);
    gsnap_samp__image_free(s->spare);
    gsnap_samp__image_free(s->im);
    gsnap_samp__shared_close(s);
    free(s->changed_at);
    free(s->bg_changed);
    gsnap_samp__adapt_free(s);
    free_scratch(s);
    gsnap_samp__persist_close(s);
    if (s->own_src && s->src) s->src->destroy(s->src);
    pthread_mutex_destroy(&s->bg_lock);
    s->magic = 0;
    free(s);
}

/* Common tail of both constructors: the cache image and freshness state. */
static int finish_open(gsnap_sampler *s) {
    int rc, arc = GSNAP_NOTFOUND;
    uint64_t bound = 0;
    if ((rc = s->src->bound(s->src, &bound))) return rc;
    s->nbound = bound;
    if (s->rp.as_of == GSNAP_VERSION_LATEST) {
        uint64_t v = 0;
        if ((rc = s->src->latest(s->src, &v))) return rc;
        s->rp.as_of = v;
    }
    s->version = s->rp.as_of;
    s->seen_version = s->rp.as_of;
    if (s->rp.ncache) {
        if (bound > GSNAP_SAMP_MAX_NODES) {
            return s->db ? gsnap_store__err(s->db, GSNAP_ENOTSUP,
                                            "sampler: node ids >= 2^31 cannot be cached (this "
                                            "store holds node id %llu); renumber ids densely or use FBL mode",
                                            (unsigned long long)(bound - 1))
                         : GSNAP_ENOTSUP;
        }
        double t0 = gsnap_now();
        /* the arrays are indexed by node id: what the largest id costs, checked
         * against the machine's memory before anything is allocated */
        double per = 4;
        for (unsigned i = 0; i < s->rp.ncache; i++) per += 4 + 8 + 8.0 * (s->rp.caps[i] ? s->rp.caps[i] : 1);
        double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        rc = phys > 0 && per * (double)bound > phys ? GSNAP_ENOMEM : 0;
        if (rc || (rc = gsnap_samp__image_new(bound, &s->rp, &s->im))) {
            return s->db && rc == GSNAP_ENOMEM
                       ? gsnap_store__err(s->db, GSNAP_ENOMEM, "sampler: the cached modes keep per-node arrays indexed "
                                          "by node id up to the largest id in the store (%llu): about %.1f GiB, which "
                                          "is more than this machine has or could not be allocated; renumber node ids densely "
                                          "(0..N-1) or use FBL mode",
                                          (unsigned long long)(bound - 1), per * (double)bound / (1u << 30))
                       : rc;
        }
        if ((rc = gsnap_samp__shared_open(s))) return rc; /* shared host tier (shared.c) */
        if (s->snap) {
            uint64_t gen = 0;
            if ((rc = gsnap_samp__persist_load(s, s->im, &gen))) return rc;
        } else if (!s->shm || (arc = gsnap_samp__shared_attach(s, 0)) != 0) {
            if ((rc = gsnap_samp__lazy_attach(s))) return rc; /* FCR / FSCR: lazy.c (not with a shared image) */
            if ((rc = gsnap_samp__image_build(s->im, s->src, &s->rp, 0))) return rc;
        } else {
            gsnap_samp__shared_gc(s, s->im->gen, 1); /* opened on a published image: what else is left over goes */
        }
        if (!s->im->map && (rc = gsnap_samp__shared_sync(s, arc == GSNAP_ECORRUPT ? 2 : 1))) return rc;
        s->st.t_load += gsnap_now() - t0;
        if (!(s->touched = calloc(bound ? bound : 1, sizeof *s->touched))) return GSNAP_ENOMEM;
    }
    size_t nb = bound ? (size_t)bound : 1;
    if (bound <= (s->rp.ncache ? GSNAP_SAMP_MAX_NODES : GSNAP_SAMP_DSLOT_MAX_UNCACHED)) {
        if (!(s->dslot = calloc(nb, sizeof *s->dslot))) return GSNAP_ENOMEM;
    }
    if (s->o.max_staleness >= 0) {
        if (!(s->changed_at = calloc(bound ? bound : 1, sizeof *s->changed_at)))
            return GSNAP_ENOMEM;
    }
    s->st.generation = s->im ? s->im->gen : 0;
    return gsnap_samp__core_init(s); /* core_dyn.c: run-time core (issue 18) */
}

static gsnap_sampler *alloc_sampler(void) {
    gsnap_sampler *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->magic = GSNAP_SAMP_MAGIC;
    pthread_mutex_init(&s->bg_lock, NULL);
    return s;
}

int gsnap_sampler__open_src(gsnap_samp__src *src, int own, const gsnap_sampler_options *opts,
                            gsnap_sampler **out) {
    int rc;
    *out = NULL;
    gsnap_sampler *s = alloc_sampler();
    if (!s) {
        if (own) src->destroy(src);
        return GSNAP_ENOMEM;
    }
    s->src = src;
    s->own_src = own;
    s->db = src->db;
    if ((rc = setup_options(s, opts))) goto fail;
    if ((rc = finish_open(s))) goto fail;
    *out = s;
    return 0;
fail:
    gsnap_sampler_close(s);
    return rc;
}

int gsnap_sampler_open(gsnap_db *db, const char *snapshot, const gsnap_sampler_options *opts,
                       gsnap_sampler **out) {
    int rc;
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!db || !opts) return GSNAP_EINVAL;
    gsnap_sampler *s = alloc_sampler();
    if (!s) return GSNAP_ENOMEM;
    s->db = db;
    gsnap_sampler_options o;
    if (gsnap_samp__copy_options(&o, opts)) { rc = bad_version(db, opts); goto fail; }
    if (snapshot) { /* the snapshot fixes direction and (T, V); alpha by default */
        if ((rc = gsnap_samp__persist_open(s, snapshot))) goto fail;
        const gsnap_snapshot__params *p = gsnap_snapshot__get_params(s->snap);
        o.dir = p->dir;
        o.at_t = p->at_t;
        o.as_of = p->at_version;
        if (o.alpha == 0) o.alpha = p->alpha;
        s->st.snap_version = gsnap_snapshot_get_info(s->snap)->snap_version;
    }
    if ((rc = setup_options(s, &o))) goto fail;
    if ((rc = gsnap_samp__src_store(db, s->o.dir, &s->src))) goto fail;
    s->own_src = 1;
    /* the kept lists' budget, split among the sampler's own source and its
     * workers' shadows (whose forks inherit it) */
    int64_t lcb = s->o.list_cache_bytes == 0 ? GSNAP_SAMP_LC_BYTES : s->o.list_cache_bytes;
    s->src->keep_lists(s->src, lcb < 0 ? 0 : (size_t)lcb / (s->o.workers > 1 ? s->o.workers + 1 : 1));
    if ((rc = finish_open(s))) goto fail;
    *out = s;
    return 0;
fail:
    gsnap_sampler_close(s);
    return rc;
}

int gsnap_sampler_random_seeds(gsnap_sampler *s, uint64_t batch, size_t n, uint64_t *out) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC || (n && !out)) return GSNAP_EINVAL;
    uint64_t b = s->nbound ? s->nbound : 1;
    for (size_t i = 0; i < n; i++)
        out[i] = gsnap_samp__below(gsnap_samp__h(s->o.seed, GSNAP_P_SEEDS << 8, 0, batch, i), b);
    return 0;
}

void gsnap_sampler_stats_get(const gsnap_sampler *s, gsnap_sampler_stats *st) {
    if (!s || !st) return;
    *st = s->st;
    /* the kept lists held now, in every source (shadows' included: their
     * threads publish these two atomically) */
    st->lists_kept = st->list_bytes = 0;
    for (unsigned i = 0; i <= s->nshadow; i++) {
        gsnap_samp__src *src = i == 0 ? s->src : s->shadow[i - 1]->src;
        if (!src || !src->lists) continue;
        uint64_t c[4];
        src->lists(src, c);
        st->lists_kept += c[2];
        st->list_bytes += c[3];
    }
}

uint64_t gsnap_sampler_cache_checksum(const gsnap_sampler *s) {
    /* workers may be bringing entries up to date: batches ahead are dropped
     * (recomputed, the same bytes); s is never a const object */
    if (s && s->magic == GSNAP_SAMP_MAGIC) gsnap_samp__ahead_drop((gsnap_sampler *)s);
    return s && s->im ? gsnap_samp__image_checksum(s->im) : 0;
}

int gsnap_snapshot_refresh_caches(gsnap_db *db, const char *snapshot,
                                  const gsnap_sampler_options *opts, uint64_t *generation) {
    gsnap_sampler *s = NULL;
    if (!db || !snapshot || !opts) return GSNAP_EINVAL;
    int rc = gsnap_sampler_open(db, snapshot, opts, &s);
    if (rc == 0) rc = gsnap_sampler_refresh(s);
    if (rc == 0 && generation) *generation = s->im ? s->im->gen : 0;
    gsnap_sampler_close(s);
    return rc;
}
