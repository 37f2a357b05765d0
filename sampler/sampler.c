/*
 * sampler/sampler.c -- the per-batch layer loop: serving one node from the
 * store or a cache in each mode, building the layers' blocks. It calls
 * refresh.c between and during batches (before_batch, pscr, after_batch)
 * and nothing in the module calls it back.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>

/* ---- serving one node ----------------------------------------------------- */

/* The cache serving hop h, or NULL (FBL, or an all-neighbours layer). */
static gsnap_samp__cache *cache_of(gsnap_sampler *s, unsigned h) {
    if (!s->im || s->f_hop[h] < 0) return NULL;
    gsnap_samp__cache *c = &s->im->caches[gsnap_samp__is_shared(s->o.mode) ? 0 : h - 1];
    return c->cap ? c : NULL;
}

static int need_scratch(gsnap_sampler *s, size_t n) {
    int rc = gsnap_vec_reserve((void **)&s->pick, &s->pick_cap, n, sizeof *s->pick);
    if (!rc) rc = gsnap_vec_reserve((void **)&s->tmp, &s->tmp_cap, n, sizeof *s->tmp);
    if (!rc) rc = gsnap_vec_reserve((void **)&s->excl, &s->excl_cap, n, sizeof *s->excl);
    return rc;
}

/* Sample node's neighbours for hop h into s->tmp[0..*k). */
static int sample_node(gsnap_sampler *s, unsigned h, uint64_t node, size_t *k,
                       gsnap_layer_stats *ls) {
    int32_t f = s->f_hop[h];
    gsnap_samp__cache *c = cache_of(s, h);
    const uint64_t *full = NULL;
    size_t d = 0;
    long got;
    int rc;
    unsigned chop = gsnap_samp__is_shared(s->o.mode) ? 0 : h;
    if (!c || node >= s->im->nnodes || c->cnt[node] == GSNAP_SAMP_UNCACHED) {
        /* from the store: FBL, sparse node, all-neighbours layer */
        uint64_t before = s->src->bytes_read;
        if ((rc = s->src->nbrs(s->src, node, &full, &d))) return rc;
        ls->bytes_read += s->src->bytes_read - before;
        ls->misses++;
        if (c) gsnap_samp__adapt_miss(s, h, node, d); /* policy.c: not held */
        size_t want = f < 0 ? d : (size_t)f;
        if ((rc = need_scratch(s, want < d ? want : d))) return rc;
        got = gsnap_samp__choose_base(gsnap_samp__mix(s->kb_fbl, node), d, want, s->pick, &s->sc);
        if (got < 0) return GSNAP_ENOMEM;
        for (long i = 0; i < got; i++) s->tmp[i] = full[s->pick[i]];
        *k = (size_t)got;
        return 0;
    }
    /* from the cache; first the freshness bound */
    if (s->changed_at && s->changed_at[node] > c->ver[node]) {
        uint64_t age = s->version - c->ver[node];
        if (age > (uint64_t)s->o.max_staleness) {
            uint64_t rep = 0;
            if ((rc = gsnap_sampler__refresh_entry(s, c, chop, node, s->im->gen, 1, &rep)))
                return rc;
            ls->refreshed++;
            gsnap_samp__adapt_stale(s, h); /* policy.c: stale beyond the bound */
        } else {
            ls->stale_hits++;
            if (age > s->st.max_staleness_seen) s->st.max_staleness_seen = age;
        }
    }
    ls->hits++;
    uint32_t cnt = c->cnt[node];
    const uint64_t *ent = c->ids + node * c->cap;
    size_t want = (size_t)f;
    if ((rc = need_scratch(s, want + 1))) return rc;
    int pcf = s->o.mode == GSNAP_MODE_PCF || s->o.mode == GSNAP_MODE_PCF_SC;
    if (!pcf || cnt < c->cap) { /* full fetch (a short entry holds every neighbour) */
        got = gsnap_samp__choose_base(gsnap_samp__mix(s->kb_serve, node), cnt, want, s->pick,
                                      &s->sc);
        if (got < 0) return GSNAP_ENOMEM;
        for (long i = 0; i < got; i++) s->tmp[i] = ent[s->pick[i]];
        *k = (size_t)got;
        return 0;
    }
    /* PCF: kc from the cache, f - kc fresh from the store, no duplicates */
    size_t kc = (size_t)(s->o.delta * f + 0.5);
    if (kc > cnt) kc = cnt;
    got = gsnap_samp__choose_base(gsnap_samp__mix(s->kb_serve, node), cnt, kc, s->pick, &s->sc);
    if (got < 0) return GSNAP_ENOMEM;
    size_t m = 0;
    for (long i = 0; i < got; i++) s->tmp[m++] = ent[s->pick[i]];
    if (kc < want) {
        uint64_t before = s->src->bytes_read;
        if ((rc = s->src->nbrs(s->src, node, &full, &d))) return rc;
        ls->bytes_read += s->src->bytes_read - before;
        ls->misses++;
        size_t ne = 0;
        for (size_t i = 0; i < m; i++) {
            long p = gsnap_samp__find_id(full, d, s->tmp[i]);
            if (p >= 0) s->excl[ne++] = (uint32_t)p;
        }
        gsnap_samp__sort_u32(s->excl, ne);
        gsnap_samp__key kf = {s->o.seed, (uint64_t)GSNAP_P_PCF << 8 | h, node, s->batch};
        if ((rc = need_scratch(s, want + d))) return rc;
        got = gsnap_samp__choose_excl(&kf, d, s->excl, ne, want - m, s->pick, &s->sc);
        if (got < 0) return GSNAP_ENOMEM;
        for (long i = 0; i < got; i++) s->tmp[m++] = full[s->pick[i]];
    }
    *k = m;
    return 0;
}

/* ---- the layer loop --------------------------------------------------------- */

/* Start a new node -> local index scope (one per layer). */
static int local_reset(gsnap_sampler *s, size_t expect) {
    if (s->dslot && ++s->dstamp == 0) {
        memset(s->dslot, 0, (size_t)(s->nbound ? s->nbound : 1) * sizeof *s->dslot);
        s->dstamp = 1;
    }
    return gsnap_samp__map_reset(&s->map, s->dslot ? 16 : expect);
}

/* Local index of node id `key`, adding it as `next` when new (*added = 1);
 * *added = -1 when out of memory. Ids below nbound: one load and one store
 * in the dense stamp array (stamp and index in one word). */
static inline uint32_t local_get_add(gsnap_sampler *s, uint64_t key, uint32_t next, int *added) {
    if (s->dslot && key < s->nbound) {
        uint64_t e = s->dslot[key];
        if ((uint32_t)(e >> 32) == s->dstamp) {
            *added = 0;
            return (uint32_t)e;
        }
        s->dslot[key] = (uint64_t)s->dstamp << 32 | next;
        *added = 1;
        return next;
    }
    return gsnap_samp__map_get_add(&s->map, key, next, added);
}

#define RES(arr, cap, n) gsnap_vec_reserve((void **)&(arr), &(cap), (n), sizeof *(arr))

/* Prefetch the serving slot of dst[i + 8]; lazy: the neighbour-list offset
 * (dst[i + 4]) and list (dst[i + 2]) of a stale entry (its slot fetched),
 * and that slot again for writing (dst[i + 4]). */
static inline void prefetch_ahead(const gsnap_samp__image *im, const gsnap_samp__hotc *hc,
                                  const uint64_t *dst, uint32_t ndst, uint32_t i, int lazy,
                                  uint32_t want) {
    uint64_t nn = im->nnodes;
    if (i + 8 < ndst && dst[i + 8] < nn) {
        const uint32_t *p = hc->slot + dst[i + 8] * hc->stride;
        __builtin_prefetch(p);
        __builtin_prefetch(p + 16);
        __builtin_prefetch(p + hc->stride - 1);
    }
    for (int k = 0; lazy && k < 2; k++) {
        uint32_t a = i + 4 - 2 * (uint32_t)k, st;
        if (a < ndst && dst[a] < nn &&
            (st = __atomic_load_n(&hc->slot[dst[a] * hc->stride + 1], __ATOMIC_RELAXED)) != want &&
            st != GSNAP_SAMP_LZ_ALL) {
            if (k) {
                __builtin_prefetch(im->lz_adj + im->lz_off[dst[a]]);
            } else { /* stale: the slot is rewritten (sampler_int.h, prefetch_w) */
                __builtin_prefetch(im->lz_off + dst[a]);
                gsnap_samp__prefetch_w(hc->slot + dst[a] * hc->stride);
            }
        }
    }
}

/* Serve hop h's destinations dst[0..ndst) into s->cand (the sampled ids,
 * row by row) and ptr (row ends). Nodes with an entry in the serving view
 * take the inline path: one slot load (prefetched 8 nodes ahead), Floyd's
 * draws from the counter-based stream of (layer key, node); the rest
 * (FBL, sparse nodes, stale entries, PCF) go through sample_node. */
static int serve_rows(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t ndst,
                      uint32_t *ptr, uint64_t *nedges, gsnap_layer_stats *ls) {
    int32_t f = s->f_hop[h];
    gsnap_samp__cache *pc = cache_of(s, h);
    const gsnap_samp__hotc *hc = pc && s->im->hot_ok ? &s->im->hot[pc - s->im->caches] : NULL;
    int pcf = s->o.mode == GSNAP_MODE_PCF || s->o.mode == GSNAP_MODE_PCF_SC;
    if (pcf || !hc || !hc->slot) hc = NULL;
    uint64_t nn = hc ? s->im->nnodes : 0, ne = 0, hits = 0, redrawn = 0, rep = 0;
    /* lazy refreshes (lazy.c): a slot stamped with an older generation is
     * brought to the current one before it is served */
    int lazy = hc && s->im->lazy;
    unsigned ci = hc ? (unsigned)(hc - s->im->hot) : 0;
    uint32_t want = (uint32_t)(s->im ? s->im->gen & GSNAP_SAMP_LZ_MASK : 0);
    size_t fz = f > 0 ? (size_t)f : 0;
    int rc;
    if ((rc = RES(s->cand, s->cand_cap, (size_t)ndst * (fz ? fz : 16) + 1))) return rc;
    if ((rc = need_scratch(s, fz + 1))) return rc;
    ptr[0] = 0;
    /* rows from the store's kept lists (FBL): their slots 16 nodes ahead,
     * the lists' first lines 8 ahead, so that the lookups of several rows
     * are in flight at once instead of one row after the other */
    void (*pf)(const gsnap_samp__src *, uint64_t, int) = hc ? NULL : s->src->prefetch;
    for (uint32_t i = 0; i < ndst; i++) {
        uint64_t v = dst[i];
        if (hc) prefetch_ahead(s->im, hc, dst, ndst, i, lazy, want);
        if (pf) {
            if (i + 16 < ndst) pf(s->src, dst[i + 16], 0);
            if (i + 8 < ndst) pf(s->src, dst[i + 8], 1);
        }
        int hit = 0;
        if (hc && v < nn) {
            const uint32_t *sl = gsnap_samp__slot(hc, v);
            if (lazy) {
                uint32_t st = __atomic_load_n(&sl[1], __ATOMIC_ACQUIRE);
                hit = st != GSNAP_SAMP_LZ_UNC;
                if (hit && st != want && st != GSNAP_SAMP_LZ_ALL) {
                    if ((rc = gsnap_samp__lazy_touch(s->im, ci, v, &s->sc, &rep))) return rc;
                    redrawn++;
                }
            } else {
                hit = sl[0] != GSNAP_SAMP_UNCACHED &&
                      !(s->changed_at && s->changed_at[v] > pc->ver[v]);
            }
        }
        if (hit) {
            const uint32_t *sl = gsnap_samp__slot(hc, v);
            uint32_t cnt = sl[0];
            if (ne + fz > s->cand_cap && (rc = RES(s->cand, s->cand_cap, ne + fz))) return rc;
            uint64_t *o = s->cand + ne;
            if (cnt <= (uint32_t)f) {
                for (uint32_t j = 0; j < cnt; j++) o[j] = sl[2 + j];
                ne += cnt;
            } else {
                uint32_t *pick = s->pick;
                uint64_t base = gsnap_samp__mix(s->kb_serve, v);
                if (fz <= GSNAP_SAMP_SMALL_K)
                    gsnap_samp__floyd_small(base, cnt, (uint32_t)fz, pick);
                else if (gsnap_samp__choose_base(base, cnt, fz, pick, &s->sc) < 0)
                    return GSNAP_ENOMEM;
                for (size_t j = 0; j < fz; j++) o[j] = sl[2 + pick[j]];
                ne += fz;
            }
            hits++;
        } else {
            size_t k = 0;
            if ((rc = sample_node(s, h, v, &k, ls))) return rc;
            if ((rc = RES(s->cand, s->cand_cap, ne + k + 1))) return rc;
            memcpy(s->cand + ne, s->tmp, k * sizeof *s->tmp);
            ne += k;
        }
        if (ne > UINT32_MAX) return GSNAP_ERANGE;
        ptr[i + 1] = (uint32_t)ne;
    }
    ls->hits += hits;
    ls->refreshed += redrawn;
    s->st.refreshed_entries += redrawn;
    s->st.replaced_ids += rep;
    *nedges = ne;
    return 0;
}

/* Layer index li (0 = input side) for hop h: li = L - h. Two passes: the
 * rows' sampled ids first (serve_rows), then one streaming pass that gives
 * each id its local index (dense stamp array, prefetched 16 edges ahead)
 * and appends the new ones to the sources. */
static int sample_layer(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t ndst,
                        gsnap_samp__layer *out) {
    unsigned li = s->L - h;
    gsnap_layer_stats *ls = &s->st.layer[li];
    double t0 = gsnap_now();
    int rc;
    s->kb_serve = gsnap_samp__h(s->o.seed, (uint64_t)GSNAP_P_SERVE << 8 | h, 0, s->batch, 0);
    s->kb_fbl = gsnap_samp__h(s->o.seed, (uint64_t)GSNAP_P_FBL << 8 | h, 0, s->batch, 0);
    if ((rc = RES(s->lptr[li], s->lptr_cap[li], (size_t)ndst + 1))) return rc;
    uint64_t ne = 0;
    if ((rc = serve_rows(s, h, dst, ndst, s->lptr[li], &ne, ls))) return rc;
    if ((rc = local_reset(s, (size_t)ndst * 4))) return rc;
    if ((rc = RES(s->lsrc[li], s->lsrc_cap[li], (size_t)ndst + ne + 1))) return rc;
    if ((rc = RES(s->lidx[li], s->lidx_cap[li], ne + 1))) return rc;
    uint64_t *src = s->lsrc[li];
    uint32_t *idx = s->lidx[li];
    const uint64_t *cand = s->cand;
    uint32_t nsrc = 0;
    for (uint32_t i = 0; i < ndst; i++) {
        int added;
        local_get_add(s, dst[i], nsrc, &added);
        if (added < 0) return GSNAP_ENOMEM;
        src[nsrc++] = dst[i]; /* destinations are distinct (seeds deduplicated) */
    }
    uint64_t nb = s->dslot ? s->nbound : 0, *dslot = s->dslot, tag = (uint64_t)s->dstamp << 32;
    for (uint64_t e = 0; e < ne; e++) {
        if (e + 16 < ne && cand[e + 16] < nb) __builtin_prefetch(&dslot[cand[e + 16]], 1);
        uint64_t id = cand[e];
        if (id < nb) { /* branch-free: whether the id is new is a coin toss */
            uint64_t w = dslot[id];
            int seen = (w >> 32) == (tag >> 32);
            uint32_t pos = seen ? (uint32_t)w : nsrc;
            dslot[id] = tag | pos;
            src[nsrc] = id;
            nsrc += !seen;
            idx[e] = pos;
            continue;
        }
        int added;
        uint32_t pos = local_get_add(s, cand[e], nsrc, &added);
        if (added < 0) return GSNAP_ENOMEM;
        if (added) src[nsrc++] = cand[e];
        idx[e] = pos;
    }
    out->ndst = ndst;
    out->nsrc = nsrc;
    out->nedges = ne;
    out->src = s->lsrc[li];
    out->indptr = s->lptr[li];
    out->indices = s->lidx[li];
    ls->edges += ne;
    ls->seconds += gsnap_now() - t0;
    return 0;
}

/* The source's kept-list hits and misses since the last batch into s->st
 * (a worker's batch carries them to the sampler's statistics like its other
 * counts). The lists and bytes held are read when the statistics are
 * (gsnap_sampler_stats_get), not carried: a batch made ahead and dropped
 * would lose its part of them. */
static void lists_count(gsnap_sampler *s) {
    if (!s->src->lists) return;
    uint64_t now[4];
    s->src->lists(s->src, now);
    s->st.list_hits += now[0] - s->lists_seen[0];
    s->st.list_misses += now[1] - s->lists_seen[1];
    s->lists_seen[0] = now[0];
    s->lists_seen[1] = now[1];
}

/* One batch's layers and buffer from `seeds` (s->batch, s->im, s->version
 * set; the read view begun): into s->buf / s->buf_len, stats into s->st.
 * Also what a worker runs on its shadow sampler (workers.c). */
int gsnap_samp__produce(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds) {
    double t0 = gsnap_now();
    gsnap_samp__layer ls[GSNAP_MAX_LAYERS];
    /* seeds, deduplicated in first-seen order, become the last layer's dsts */
    unsigned top = s->L - 1;
    uint64_t *dst = NULL;
    uint32_t ndst = 0;
    int rc;
    if ((rc = local_reset(s, nseeds))) goto out;
    if ((rc = gsnap_vec_reserve((void **)&s->tmp, &s->tmp_cap, nseeds + 1, sizeof *s->tmp)))
        goto out;
    for (size_t i = 0; i < nseeds; i++) {
        int added;
        local_get_add(s, seeds[i], ndst, &added);
        if (added < 0) { rc = GSNAP_ENOMEM; goto out; }
        if (added) s->tmp[ndst++] = seeds[i];
    }
    /* keep the seeds out of tmp (sample_node reuses it) */
    if ((rc = RES(s->lptr[top], s->lptr_cap[top], (size_t)ndst + 1))) goto out;
    dst = malloc(((size_t)ndst + 1) * sizeof *dst);
    if (!dst) { rc = GSNAP_ENOMEM; goto out; }
    memcpy(dst, s->tmp, (size_t)ndst * sizeof *dst);
    const uint64_t *cur = dst;
    uint32_t ncur = ndst;
    uint64_t pscr_gen = s->im ? s->im->gen + 1 : 0;
    for (unsigned h = 1; h <= s->L; h++) {
        if ((rc = gsnap_sampler__pscr(s, h, cur, ncur, pscr_gen))) goto out;
        if ((rc = gsnap_samp__adapt_layer(s, h, cur, ncur))) goto out; /* policy.c */
        if ((rc = sample_layer(s, h, cur, ncur, &ls[s->L - h]))) goto out;
        cur = ls[s->L - h].src;
        ncur = ls[s->L - h].nsrc;
    }
    s->st.t_sample += gsnap_now() - t0;
    t0 = gsnap_now();
    gsnap_samp__attr_rows(s, ls[0].nsrc, ndst);
    size_t need = gsnap_samp__block_size_attr(ls, s->L, s->attr, s->nattr);
    void *into;
    if (s->stage_to) { /* gsnap_sampler_next_staged: the slot is the buffer */
        if ((rc = gsnap_stager_reserve(s->stage_to, need, &s->stage_host, &s->stage_ticket)))
            goto out;
        into = s->stage_host;
    } else {
        if (need > s->buf_cap) {
            free(s->buf);
            s->buf_cap = 0;
            if (!(s->buf = aligned_alloc(64, (need + 63) & ~(size_t)63))) { rc = GSNAP_ENOMEM; goto out; }
            s->buf_cap = (need + 63) & ~(size_t)63;
        }
        into = s->buf;
    }
    gsnap_samp__block_pack_attr(into, ls, s->L, s->batch,
                           s->im ? s->im->gen + (uint64_t)gsnap_sampler__pscr_due(s) : 0,
                           s->version, s->attr, s->nattr, s->adata);
    s->buf_len = need;
    s->st.t_pack += gsnap_now() - t0;
    if ((rc = gsnap_samp__gather_all(s, ls[0].src, dst))) goto out; /* gather.c */
    for (unsigned i = 0; i < s->L; i++) s->st.edges += ls[i].nedges;
    s->st.seeds += ndst;
out:
    free(dst);
    lists_count(s);
    return rc;
}

int gsnap_sampler_next_staged(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds,
                              gsnap_stager *st, unsigned *ticket, const void **host,
                              size_t *len) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC || !st || !ticket || !len) return GSNAP_EINVAL;
    const void *buf;
    size_t n;
    int rc;
    if (!seeds && nseeds && gsnap_samp__workers_usable(s)) { /* made ahead on the workers */
        if ((rc = gsnap_sampler_next(s, seeds, nseeds, &buf, &n))) return rc;
        if ((rc = gsnap_stager_submit(st, buf, n, ticket))) return rc;
        if (host) *host = buf; /* the sampler's copy: same bytes, same lifetime rule */
        *len = n;
        return 0;
    }
    s->stage_to = st;
    s->stage_host = NULL;
    rc = gsnap_sampler_next(s, seeds, nseeds, &buf, &n);
    s->stage_to = NULL;
    if (s->stage_host) { /* a slot was reserved: commit it, or abandon it on error */
        int crc = gsnap_stager_commit(st, s->stage_ticket, rc ? 0 : n);
        if (!rc && crc) rc = crc;
        if (!rc) {
            *ticket = s->stage_ticket;
            if (host) *host = s->stage_host;
            *len = n;
        }
        s->stage_host = NULL;
        return rc;
    }
    return rc ? rc : GSNAP_ESTATE; /* no batch was packed (cannot happen without an error) */
}

int gsnap_sampler_next(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds,
                       const void **buf, size_t *len) {
    if (!s || s->magic != GSNAP_SAMP_MAGIC || !buf || !len) return GSNAP_EINVAL;
    if (nseeds > UINT32_MAX / 2) return GSNAP_ERANGE;
    *buf = NULL;
    *len = 0;
    if (seeds || !nseeds || nseeds != s->ahead_nseeds) gsnap_samp__ahead_drop(s);
    if (!seeds && nseeds) { /* the batch's random seeds; batches ahead on workers */
        s->ahead_nseeds = nseeds;
        if (gsnap_samp__workers_usable(s)) return gsnap_samp__next_parallel(s, nseeds, buf, len);
        int rc = gsnap_vec_reserve((void **)&s->rseeds, &s->rseeds_cap, nseeds, sizeof *s->rseeds);
        if (rc) return rc;
        gsnap_sampler_random_seeds(s, s->batch, nseeds, s->rseeds);
        seeds = s->rseeds;
    }
    int rc = gsnap_sampler__before_batch(s); /* adopt generations, stale marks, refresh */
    if (rc) return rc;
    rc = gsnap_samp__produce(s, seeds, nseeds);
    if (rc == 0) {
        *buf = s->stage_to ? s->stage_host : s->buf;
        *len = s->buf_len;
    }
    return gsnap_sampler__after_batch(s, rc);
}
