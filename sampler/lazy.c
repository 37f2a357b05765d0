/*
 * sampler/lazy.c -- whole-cache refreshes done on first touch.
 *
 * FCR rebuilds every entry each generation, FSCR replaces a gamma share of
 * every entry; eagerly, that is one scan of the store and a draw per cached
 * entry per generation, whatever the batches use. Without a snapshot and in
 * frozen mode (no max_staleness) every generation reads the same graph view
 * (the sampler's (T, V), fixed at open), and the value of an entry at
 * generation g depends only on (seed, hop, node, g), the node's neighbour
 * list N(v) and, for FSCR, the same entry at g - 1:
 *   FCR:  e_g(v) = draw_whole(seed, hop, v, g, N(v))
 *   FSCR: e_g(v) = step(seed, hop, v, g, gamma_g, N(v), e_{g-1}(v))
 * (cache.c: draw_whole and gsnap_samp__entry_refresh; the draws are keyed
 * by the generation, not by when or in what order they run). So a refresh
 * only advances the image's generation (gsnap_samp__lazy_bump) and each
 * entry carries the generation it was drawn at (a stamp in its serving
 * slot); a batch that serves a stale entry first brings it to the current
 * generation by the same functions (one draw for FCR, the missing steps in
 * order for FSCR) from N(v) held in memory (captured by the scan that builds
 * generation 0, so it is the list the eager refresh would have read). The
 * batches see exactly the entries an eager refresh would have given them
 * (tests/test_sampler_lazy.c checks batches and the whole image against the
 * eager path); the cost is proportional to the entries the batches touch.
 *
 * An entry that holds every neighbour of its node (d <= cap) never changes:
 * FCR's draw of min(cap, d) of d ids is then the whole list in its order
 * (gsnap_samp__choose with k >= n), and an FSCR step keeps every id and
 * draws none (nothing is left to draw). Such an entry is stamped LZ_ALL when
 * the view is built (gsnap_samp__lazy_all) and is never advanced: no redraw
 * per generation, and with workers its lines are never written again, so the
 * cores keep sharing them (a redraw that writes the same ids still takes the
 * lines away from the other core's cache).
 *
 * The serving slot is [count, stamp, ids...] (hot.c). Stamp: generation &
 * LZ_MASK; LZ_UNC for an uncached node; LZ_ALL (above); the LZ_BUSY bit while a thread
 * advances the entry (workers share the image: the first to set BUSY by
 * compare-and-swap advances it, the others wait for the stamp; a slot is
 * read only once its stamp is the current generation, with acquire order).
 * Every entry is at most LZ_MASK / 2 generations behind: a bump that would
 * exceed it advances every entry first (gsnap_samp__lazy_settle).
 */
#include "sampler/sampler_int.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define LZ_MASK GSNAP_SAMP_LZ_MASK
#define LZ_BUSY GSNAP_SAMP_LZ_BUSY
#define LZ_UNC GSNAP_SAMP_LZ_UNC
#define LZ_ALL GSNAP_SAMP_LZ_ALL

int gsnap_samp__lazy_off = 0; /* tests: 1 = the eager whole-cache refreshes */
uint64_t gsnap_samp__lazy_gap_max = LZ_MASK / 2; /* tests make it small */

typedef struct {
    uint64_t gen; /* from this generation on */
    double g[GSNAP_MAX_LAYERS + 1];
} lz_gamma;

struct gsnap_samp__lazy {
    uint64_t n;
    uint64_t *off; /* n + 1: N(v) = adj[off[v] .. off[v + 1]) */
    uint32_t *adj;
    size_t len, cap;
    uint64_t next;  /* capture: first node whose offset is unset */
    int fscr;       /* FSCR steps (else FCR redraws) */
    uint64_t floor; /* every entry is at a generation >= floor */
    gsnap_samp__rparams rp;
    lz_gamma *gam; /* gamma per cache, by generation (ascending) */
    size_t ngam, gam_cap;
};

int gsnap_samp__lazy_new(const gsnap_samp__rparams *rp, uint64_t nnodes, int kind,
                         gsnap_samp__lazy **out) {
    gsnap_samp__lazy *lz = calloc(1, sizeof *lz);
    *out = NULL;
    if (!lz) return GSNAP_ENOMEM;
    lz->n = nnodes;
    lz->fscr = kind == 2;
    lz->rp = *rp;
    lz->off = calloc((size_t)nnodes + 1, sizeof *lz->off);
    lz->gam = calloc(1, sizeof *lz->gam);
    if (!lz->off || !lz->gam) {
        gsnap_samp__lazy_free(lz);
        return GSNAP_ENOMEM;
    }
    lz->gam_cap = lz->ngam = 1;
    for (unsigned i = 0; i < rp->ncache; i++) /* as cache.c's entry refresh reads it */
        lz->gam[0].g[i] = rp->per_hop ? rp->hop_gamma[rp->hops[i]] : rp->gamma;
    *out = lz;
    return 0;
}

void gsnap_samp__lazy_free(gsnap_samp__lazy *lz) {
    if (!lz) return;
    free(lz->off);
    free(lz->adj);
    free(lz->gam);
    free(lz);
}

int gsnap_samp__lazy_capture(gsnap_samp__lazy *lz, uint64_t node, const uint64_t *ids, size_t n) {
    if (node >= lz->n || node < lz->next) return 0;
    for (uint64_t u = lz->next; u <= node; u++) lz->off[u] = lz->len;
    lz->next = node + 1;
    if (gsnap_vec_reserve((void **)&lz->adj, &lz->cap, lz->len + n, sizeof *lz->adj))
        return GSNAP_ENOMEM;
    for (size_t i = 0; i < n; i++) lz->adj[lz->len + i] = (uint32_t)ids[i];
    lz->len += n;
    lz->off[node + 1] = lz->len;
    return 0;
}

void gsnap_samp__lazy_nbrs(const gsnap_samp__lazy *lz, uint64_t v, const uint32_t **ids,
                           size_t *n) {
    *ids = lz->adj;
    *n = 0;
    if (v >= lz->n) return;
    *ids = lz->adj + lz->off[v];
    *n = (size_t)(lz->off[v + 1] - lz->off[v]);
}

int gsnap_samp__lazy_all(const gsnap_samp__image *im, const uint32_t *slot, uint32_t cap,
                         uint64_t v) {
    if (!im->lazy || !im->lz_off || v >= im->nnodes) return 0;
    uint32_t cnt = slot[0];
    uint64_t d = im->lz_off[v + 1] - im->lz_off[v];
    if (cnt == GSNAP_SAMP_UNCACHED || cnt != d || d > cap) return 0;
    return memcmp(slot + 2, im->lz_adj + im->lz_off[v], (size_t)d * sizeof *slot) == 0;
}

void gsnap_samp__lazy_capture_end(gsnap_samp__lazy *lz, const uint64_t **off,
                                  const uint32_t **adj) {
    for (uint64_t u = lz->next; u <= lz->n; u++) lz->off[u] = lz->len;
    lz->next = lz->n + 1;
    if (!lz->adj) /* no lists: a valid base pointer all the same */
        (void)gsnap_vec_reserve((void **)&lz->adj, &lz->cap, 1, sizeof *lz->adj);
    *off = lz->off;
    *adj = lz->adj;
}

int gsnap_samp__lazy_bump(gsnap_samp__image *im, const double *gamma) {
    gsnap_samp__lazy *lz = im->lz;
    lz_gamma *last = &lz->gam[lz->ngam - 1];
    if (memcmp(last->g, gamma, im->ncache * sizeof *gamma) != 0) {
        if (gsnap_vec_reserve((void **)&lz->gam, &lz->gam_cap, lz->ngam + 1, sizeof *lz->gam))
            return GSNAP_ENOMEM;
        lz_gamma *e = &lz->gam[lz->ngam++];
        memset(e, 0, sizeof *e);
        e->gen = im->gen + 1;
        memcpy(e->g, gamma, im->ncache * sizeof *gamma);
    }
    if (im->gen + 1 - lz->floor > gsnap_samp__lazy_gap_max) {
        int rc = gsnap_samp__lazy_settle(im); /* keep every stamp unambiguous */
        if (rc) return rc;
        lz->floor = im->gen;
    }
    im->gen++;
    return 0;
}

/* Index of the gamma entry in force at generation g. */
static size_t gamma_at(const gsnap_samp__lazy *lz, uint64_t g) {
    size_t lo = 0, hi = lz->ngam; /* gam[0].gen == 0 <= g */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (lz->gam[mid].gen <= g) lo = mid; else hi = mid;
    }
    return lo;
}

static long find_u32(const uint32_t *a, size_t n, uint32_t x) {
    if (n <= 64) { /* short list (one or a few lines): branch-free count */
        size_t below = 0;
        for (size_t i = 0; i < n; i++) below += a[i] < x;
        return below < n && a[below] == x ? (long)below : -1;
    }
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo < n && a[lo] == x ? (long)lo : -1;
}

/* The ascending positions in full of the entry's ids found there (as
 * cache.c: positions, then sorted); a bitmap instead of a sort on short lists. */
static size_t excl_positions(const uint32_t *full, size_t d, const uint32_t *cur, uint32_t n,
                             uint32_t *excl) {
    size_t ne = 0;
    if (d <= 64) {
        uint64_t bits = 0;
        for (uint32_t i = 0; i < n; i++) {
            long p = find_u32(full, d, cur[i]);
            if (p >= 0) bits |= 1ull << p;
        }
        for (; bits; bits &= bits - 1) excl[ne++] = (uint32_t)__builtin_ctzll(bits);
        return ne;
    }
    for (uint32_t i = 0; i < n; i++) {
        long p = find_u32(full, d, cur[i]);
        if (p >= 0) excl[ne++] = (uint32_t)p;
    }
    gsnap_samp__sort_u32(excl, ne);
    return ne;
}

/* Scratch for one entry: pick, excl, keep (u32) and the new ids. */
typedef struct {
    uint32_t *pick, *excl, *keep, *nid;
} lz_tmp;

/* cache.c's draw_whole on u32 ids: min(cap, d) of full, keyed by g. */
static int draw_whole(const gsnap_samp__lazy *lz, unsigned hop, uint64_t v, uint32_t cap,
                      const uint32_t *full, size_t d, uint64_t g, uint32_t *cnt, uint32_t *ids,
                      lz_tmp *t, gsnap_samp__scratch *sc) {
    gsnap_samp__key k = {lz->rp.seed, (uint64_t)GSNAP_P_BUILD << 8 | hop, v, g};
    long got = gsnap_samp__choose(&k, d, cap, t->pick, sc);
    if (got < 0) return GSNAP_ENOMEM;
    for (long i = 0; i < got; i++) ids[i] = full[t->pick[i]];
    *cnt = (uint32_t)got;
    return 0;
}

/* One FSCR generation g of an entry: gsnap_samp__entry_refresh (frozen
 * reads, whole = 0) on u32 ids, the same keys, draws and order. */
static int fscr_step(const gsnap_samp__lazy *lz, unsigned hop, uint64_t v, uint32_t cap,
                     const uint32_t *full, size_t d, uint64_t g, double gamma, uint32_t *cnt,
                     uint32_t *cur, lz_tmp *t, gsnap_samp__scratch *sc, uint64_t *replaced) {
    uint32_t n = *cnt;
    if (n < cap || d < cap) {
        if (n < cap && d == n) return 0; /* holds every neighbour */
        memcpy(t->nid, cur, (size_t)n * sizeof *cur);
        int rc = draw_whole(lz, hop, v, cap, full, d, g, cnt, cur, t, sc);
        if (rc) return rc;
        for (uint32_t i = 0; i < *cnt; i++) {
            int found = 0;
            for (uint32_t j = 0; j < n && !found; j++) found = t->nid[j] == cur[i];
            *replaced += !found;
        }
        return 0;
    }
    size_t r = (size_t)(gamma * cap + 0.5), ne = 0;
    if (r == 0) return 0;
    gsnap_samp__key kk = {lz->rp.seed, (uint64_t)GSNAP_P_KEEP << 8 | hop, v, g};
    gsnap_samp__key kf = {lz->rp.seed, (uint64_t)GSNAP_P_FRESH << 8 | hop, v, g};
    if (d >= 2 * (size_t)cap) { /* rejection, as in gsnap_samp__entry_refresh */
        if (r > cap) r = cap;
        long gk = gsnap_samp__keep_idx(&kk, n, cap - r, t->keep, sc);
        if (gk < 0) return GSNAP_ENOMEM;
        for (long i = 0; i < gk; i++) t->nid[i] = cur[t->keep[i]];
        uint64_t fb = gsnap_samp__h(kf.seed, kf.ph, kf.node, kf.round, 0);
        size_t m = (size_t)gk;
        for (uint64_t j = 0; j < r + 2; j++) /* the likely draws' lines, at once */
            __builtin_prefetch(full + gsnap_samp__below(gsnap_samp__mix(fb, j), d));
        for (uint64_t j = 0; m < (size_t)gk + r; j++) {
            uint32_t id = full[gsnap_samp__below(gsnap_samp__mix(fb, j), d)];
            int dup = 0;
            for (uint32_t q = 0; q < n; q++) dup |= cur[q] == id;
            for (size_t q = (size_t)gk; q < m; q++) dup |= t->nid[q] == id;
            if (!dup) t->nid[m++] = id;
        }
        memcpy(cur, t->nid, m * sizeof *cur);
        *cnt = (uint32_t)m;
        *replaced += r;
        return 0;
    }
    ne = excl_positions(full, d, cur, n, t->excl);
    size_t avail = d - ne;
    if (r > avail) r = avail;
    if (r > cap) r = cap;
    long gk = gsnap_samp__keep_idx(&kk, n, cap - r, t->keep, sc);
    long gf = gsnap_samp__choose_excl(&kf, d, t->excl, ne, r, t->pick, sc);
    if (gk < 0 || gf < 0) return GSNAP_ENOMEM;
    size_t m = 0;
    for (long i = 0; i < gk; i++) t->nid[m++] = cur[t->keep[i]];
    for (long i = 0; i < gf; i++) t->nid[m++] = full[t->pick[i]];
    memcpy(cur, t->nid, m * sizeof *cur);
    *cnt = (uint32_t)m;
    *replaced += (uint64_t)gf;
    return 0;
}

#define SMALL_CAP 128

/* Advance entry (cnt, ids) of node v in cache ci from generation `from` to
 * `to` (FCR: one redraw at `to`; FSCR: every step in order). *reached: the
 * generation the entry is at when it returns (a failed step changes nothing). */
static int advance(const gsnap_samp__lazy *lz, unsigned ci, uint32_t cap, uint64_t v,
                   uint32_t *cnt, uint32_t *ids, uint64_t from, uint64_t to,
                   gsnap_samp__scratch *sc, uint64_t *replaced, uint64_t *reached) {
    const uint32_t *full = lz->adj + lz->off[v];
    size_t d = (size_t)(lz->off[v + 1] - lz->off[v]);
    unsigned hop = lz->rp.hops[ci];
    *reached = from;
    uint32_t sp[4 * SMALL_CAP];
    void *heap = NULL;
    lz_tmp t = {sp, sp + SMALL_CAP, sp + 2 * SMALL_CAP, sp + 3 * SMALL_CAP};
    if (cap > SMALL_CAP) {
        if (!(heap = malloc((size_t)cap * 4 * sizeof(uint32_t)))) return GSNAP_ENOMEM;
        t = (lz_tmp){heap, (uint32_t *)heap + cap, (uint32_t *)heap + 2 * (size_t)cap,
                     (uint32_t *)heap + 3 * (size_t)cap};
    }
    int rc = 0;
    if (!lz->fscr) {
        rc = draw_whole(lz, hop, v, cap, full, d, to, cnt, ids, &t, sc);
        if (rc == 0) *reached = to;
    } else {
        size_t gi = gamma_at(lz, from + 1);
        for (uint64_t g = from + 1; g <= to && rc == 0; g++) {
            while (gi + 1 < lz->ngam && lz->gam[gi + 1].gen <= g) gi++;
            rc = fscr_step(lz, hop, v, cap, full, d, g, lz->gam[gi].g[ci], cnt, ids, &t, sc,
                           replaced);
            if (rc == 0) *reached = g;
        }
    }
    free(heap);
    return rc;
}

int gsnap_samp__lazy_touch(gsnap_samp__image *im, unsigned ci, uint64_t v,
                           gsnap_samp__scratch *sc, uint64_t *replaced) {
    gsnap_samp__hotc *h = &im->hot[ci];
    uint32_t *sl = h->slot + v * h->stride, want = (uint32_t)(im->gen & LZ_MASK), st;
    for (;;) {
        st = __atomic_load_n(&sl[1], __ATOMIC_ACQUIRE);
        if (st == want || st == LZ_UNC || st == LZ_ALL) return 0;
        if (st & LZ_BUSY) { /* another worker advances it */
            sched_yield();
            continue;
        }
        if (__atomic_compare_exchange_n(&sl[1], &st, st | LZ_BUSY, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            break;
    }
    uint64_t from = im->gen - ((want - st) & LZ_MASK), reached = from;
    int rc = advance(im->lz, ci, h->stride - 2, v, &sl[0], sl + 2, from, im->gen, sc, replaced,
                     &reached);
    __atomic_store_n(&sl[1], (uint32_t)(reached & LZ_MASK), __ATOMIC_RELEASE);
    return rc;
}

int gsnap_samp__lazy_settle(gsnap_samp__image *im) {
    gsnap_samp__scratch sc = {0};
    uint64_t rep = 0;
    int rc = 0;
    for (unsigned i = 0; i < im->ncache && rc == 0; i++)
        for (uint64_t v = 0; im->hot[i].slot && v < im->nnodes && rc == 0; v++)
            rc = gsnap_samp__lazy_touch(im, i, v, &sc, &rep);
    gsnap_samp__scratch_free(&sc);
    return rc;
}

long gsnap_samp__entry_now(const gsnap_samp__image *im, unsigned ci, uint64_t v,
                           uint64_t *out) {
    const gsnap_samp__cache *c = &im->caches[ci];
    const gsnap_samp__hotc *hc = &im->hot[ci];
    if (!im->lazy || !hc->slot) { /* the u64 entry is current */
        uint32_t cnt = c->cnt[v];
        if (cnt != GSNAP_SAMP_UNCACHED) memcpy(out, c->ids + v * c->cap, cnt * sizeof *out);
        return cnt == GSNAP_SAMP_UNCACHED ? (long)GSNAP_SAMP_UNCACHED : (long)cnt;
    }
    const uint32_t *sl = hc->slot + v * hc->stride;
    uint32_t s1 = __atomic_load_n(&sl[1], __ATOMIC_ACQUIRE), cnt = sl[0], cap = hc->stride - 2;
    if (s1 == LZ_UNC) return (long)GSNAP_SAMP_UNCACHED;
    uint32_t *ids = malloc((cap ? cap : 1) * sizeof *ids), want = (uint32_t)(im->gen & LZ_MASK);
    gsnap_samp__scratch sc = {0};
    uint64_t rep = 0, reached = 0;
    long rc = ids ? 0 : -1;
    if (ids) memcpy(ids, sl + 2, (size_t)cnt * sizeof *ids);
    if (ids && s1 != want && s1 != LZ_ALL &&
        advance(im->lz, ci, cap, v, &cnt, ids, im->gen - ((want - s1) & LZ_MASK), im->gen, &sc,
                &rep, &reached))
        rc = -1;
    for (uint32_t j = 0; rc == 0 && j < cnt; j++) out[j] = ids[j];
    gsnap_samp__scratch_free(&sc);
    free(ids);
    return rc ? rc : (long)cnt;
}

uint64_t gsnap_samp__lazy_checksum(const gsnap_samp__image *im) {
    XXH3_state_t *st = XXH3_createState();
    uint64_t *ids = NULL, h = 0;
    uint32_t maxcap = 1;
    for (unsigned i = 0; i < im->ncache; i++)
        if (im->caches[i].cap > maxcap) maxcap = im->caches[i].cap;
    ids = malloc(maxcap * sizeof *ids);
    if (!st || !ids) goto out;
    XXH3_64bits_reset(st);
    for (unsigned i = 0; i < im->ncache; i++) {
        if (!im->hot[i].slot) continue;
        for (uint64_t v = 0; v < im->nnodes; v++) {
            long cnt = gsnap_samp__entry_now(im, i, v, ids);
            if (cnt < 0) goto out;
            if (cnt == (long)GSNAP_SAMP_UNCACHED) continue;
            uint64_t hdr[3] = {i, v, (uint64_t)cnt};
            XXH3_64bits_update(st, hdr, sizeof hdr);
            XXH3_64bits_update(st, ids, (size_t)cnt * sizeof *ids);
        }
    }
    h = XXH3_64bits_digest(st);
out:
    free(ids);
    XXH3_freeState(st);
    return h;
}

int gsnap_samp__lazy_attach(gsnap_sampler *s) {
    gsnap_sample_mode m = s->o.mode;
    int fcr = m == GSNAP_MODE_FCR || m == GSNAP_MODE_FCR_SC;
    int fscr = m == GSNAP_MODE_FSCR || m == GSNAP_MODE_FSCR_SC;
    int pscr = m == GSNAP_MODE_PSCR || m == GSNAP_MODE_PSCR_SC;
    /* not with an adaptive policy or a run-time core (policy.c, core_dyn.c):
     * the core's members change at run time, and the policy reads counts
     * of the eager refresh; not with a shared image (shared.c): processes
     * switch whole published generations, which a lazy refresh never builds */
    if (gsnap_samp__lazy_off || !s->im || s->snap || s->o.max_staleness >= 0 || s->ad || s->shm ||
        !(fcr || fscr || pscr))
        return 0;
    s->im->lazy = fcr || fscr;
    return gsnap_samp__lazy_new(&s->rp, s->im->nnodes, fscr ? 2 : fcr ? 1 : 0, &s->im->lz);
}
