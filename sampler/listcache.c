/*
 * sampler/listcache.c -- decoded neighbour lists kept across batches while
 * the store's read views answer from the same runs.
 *
 * A store miss (every node in FBL; sparse, stale or all-neighbour nodes in
 * the cached modes) decodes the node's whole list from each run and merges
 * the runs, then draws `fanout` positions from it. A hub is reached in almost
 * every batch (the frontier is reached through edges), so without this cache
 * it is decoded again in every batch: on a freshly ingested R-MAT store that
 * decode and merge were two thirds of FBL's time. The store tells which
 * answers may be kept (gsnap_store__answer_key: the runs a view reads, the
 * retention horizon, and the version and time bound when a filter applies:
 * what the answers are a function of, since runs never change); the source
 * keeps the lists of at least `min_ids` ids (1 by default: a short list
 * costs the lookups in every run all the same) under that key and drops
 * them all when a view's key differs. The lists are the store's answers
 * byte for byte, so the samples drawn from them are the ones drawn without
 * the cache.
 *
 * Admission only, no eviction: once `budget` bytes are held (the ids' chunks
 * and the slot table together), further lists are not kept until the key
 * changes (hubs come first: they are met first and most often).
 * Invariant: a slot is live iff its gen equals the cache's gen; every live
 * slot's ids were read under the cache's key.
 */
#include "sampler/sampler_int.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Ids per chunk: a sixteenth of the budget, between 8 KiB and 4 MiB of ids
 * (a small budget is not spent on one chunk). */
#define LC_CHUNK_MIN ((size_t)1 << 10)
#define LC_CHUNK_MAX ((size_t)1 << 19)
static size_t chunk_ids(const gsnap_samp__lcache *c) {
    size_t k = c->budget / sizeof(uint64_t) / 16;
    return k < LC_CHUNK_MIN ? LC_CHUNK_MIN : k > LC_CHUNK_MAX ? LC_CHUNK_MAX : k;
}

void gsnap_samp__lc_init(gsnap_samp__lcache *c, size_t budget, size_t min_ids) {
    memset(c, 0, sizeof *c);
    c->budget = budget;
    c->min_ids = min_ids ? min_ids : 1;
    c->gen = 1;
}

void gsnap_samp__lc_free(gsnap_samp__lcache *c) {
    for (size_t i = 0; i < c->nchunks; i++) free(c->chunks[i].mem);
    free(c->chunks);
    free(c->slots);
    memset(c, 0, sizeof *c);
}

/* Publish the gauges for other threads (gsnap_sampler_stats_get). */
static void publish(gsnap_samp__lcache *c) {
    __atomic_store_n(&c->pub_kept, (uint64_t)c->used, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_bytes, (uint64_t)(c->held * sizeof(uint64_t) + c->cap * sizeof *c->slots),
                     __ATOMIC_RELAXED);
}

/* A chunk's memory. From 2 MiB on it is aligned to 2 MiB and advised into
 * transparent huge pages: a cold epoch fills the chunks as it decodes the
 * lists, and in 4 KiB pages each first touch is a page fault (about 30 % of
 * a 40-batch FBL [10,10] run from a fresh store on the VMs measured, half
 * of it the faults' own cost, half zeroing the pages). Freed with free(). */
#define LC_HUGE ((size_t)2 << 20)
static void *chunk_alloc(size_t bytes) {
    if (bytes < LC_HUGE) return malloc(bytes);
    assert(bytes % LC_HUGE == 0); /* take_room rounds, so the budget counts what is mapped */
    void *p = NULL;
    if (posix_memalign(&p, LC_HUGE, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only */
#endif
    return p;
}

/* Forget every list (the chunks' memory is kept for the next key). */
static void drop_all(gsnap_samp__lcache *c) {
    if (++c->gen == 0) { /* wrapped: no stale slot may look live */
        if (c->slots) memset(c->slots, 0, c->cap * sizeof *c->slots);
        c->gen = 1;
    }
    c->used = 0;
    c->cur = 0;
    for (size_t i = 0; i < c->nchunks; i++) c->chunks[i].fill = 0;
    publish(c);
}

void gsnap_samp__lc_rekey(gsnap_samp__lcache *c, uint64_t key) {
    if (!c->budget) key = 0; /* kept lists turned off: no lookups either */
    if (key == c->key) return;
    if (c->key) drop_all(c);
    c->key = key;
}

static size_t slot_of(const gsnap_samp__lcache *c, uint64_t node) {
    return (size_t)((node * 0x9E3779B97F4A7C15ull) >> 32) & (c->cap - 1);
}

const uint64_t *gsnap_samp__lc_get(const gsnap_samp__lcache *c, uint64_t node, size_t *n) {
    if (!c->key || !c->used) return NULL;
    for (size_t i = slot_of(c, node);; i = (i + 1) & (c->cap - 1)) {
        const gsnap_samp__lc_slot *s = &c->slots[i];
        if (s->gen != c->gen) return NULL;
        if (s->node == node) {
            *n = s->n;
            return s->ids;
        }
    }
}

/* Lines of a list prefetched at stage 1: its first 64 ids. A longer list
 * (a hub's) is read at the positions drawn from it; prefetching those too
 * (drawn twice) measured no better: their loads overlap each other. */
#define LC_PREFETCH_IDS 64

void gsnap_samp__lc_prefetch(const gsnap_samp__lcache *c, uint64_t node, int stage) {
    if (!c->key || !c->used) return;
    if (stage == 0) {
        __builtin_prefetch(&c->slots[slot_of(c, node)]);
        return;
    }
    size_t n = 0;
    const uint64_t *ids = gsnap_samp__lc_get(c, node, &n);
    if (!ids) return;
    size_t m = n < LC_PREFETCH_IDS ? n : LC_PREFETCH_IDS;
    for (size_t i = 0; i < m; i += 8) __builtin_prefetch(ids + i);
    if (m) __builtin_prefetch(ids + m - 1); /* the list may start mid-line */
}

/* Room for n ids in the chunks, or NULL when the budget is spent. */
static uint64_t *take_room(gsnap_samp__lcache *c, size_t n) {
    while (c->cur < c->nchunks) {
        gsnap_samp__lc_chunk *k = &c->chunks[c->cur];
        if (k->cap - k->fill >= n) {
            uint64_t *p = k->mem + k->fill;
            k->fill += n;
            return p;
        }
        c->cur++;
    }
    size_t want = n > chunk_ids(c) ? n : chunk_ids(c);
    if (want >= LC_HUGE / sizeof(uint64_t)) /* whole huge pages (chunk_alloc) */
        want = (want + LC_HUGE / sizeof(uint64_t) - 1) / (LC_HUGE / sizeof(uint64_t)) * (LC_HUGE / sizeof(uint64_t));
    if ((c->held + want) * sizeof(uint64_t) + c->cap * sizeof *c->slots > c->budget) return NULL;
    gsnap_samp__lc_chunk *nk = realloc(c->chunks, (c->nchunks + 1) * sizeof *nk);
    if (!nk) return NULL;
    c->chunks = nk;
    uint64_t *mem = chunk_alloc(want * sizeof *mem);
    if (!mem) return NULL;
    c->chunks[c->nchunks++] = (gsnap_samp__lc_chunk){mem, want, n};
    c->held += want;
    c->cur = c->nchunks - 1;
    return mem;
}

/* Double the table (within the budget, which counts it with the ids). */
static int grow_slots(gsnap_samp__lcache *c) {
    size_t nc = c->cap ? c->cap * 2 : 1024;
    if (c->held * sizeof(uint64_t) + nc * sizeof *c->slots > c->budget) return -1;
    gsnap_samp__lc_slot *ns = calloc(nc, sizeof *ns), *old = c->slots;
    if (!ns) return -1;
    size_t oc = c->cap;
    c->slots = ns;
    c->cap = nc;
    for (size_t i = 0; i < oc; i++) {
        if (old[i].gen != c->gen) continue;
        size_t j = slot_of(c, old[i].node);
        while (ns[j].gen == c->gen) j = (j + 1) & (nc - 1);
        ns[j] = old[i];
    }
    free(old);
    publish(c);
    return 0;
}

const uint64_t *gsnap_samp__lc_put(gsnap_samp__lcache *c, uint64_t node, const uint64_t *ids, size_t n) {
    if (!c->key || n < c->min_ids || n > UINT32_MAX) return NULL;
    if ((c->used + 1) * 2 > c->cap && grow_slots(c)) return NULL;
    uint64_t *room = take_room(c, n);
    if (!room) return NULL;
    memcpy(room, ids, n * sizeof *ids);
    size_t i = slot_of(c, node);
    while (c->slots[i].gen == c->gen) {
        if (c->slots[i].node == node) break; /* not expected: callers get first */
        i = (i + 1) & (c->cap - 1);
    }
    if (c->slots[i].gen != c->gen) c->used++;
    c->slots[i] = (gsnap_samp__lc_slot){node, room, (uint32_t)n, c->gen};
    publish(c);
    return room;
}
