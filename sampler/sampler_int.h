/*
 * sampler/sampler_int.h -- private to the sampler module (and white-box tests).
 *
 * INVARIANTS
 *   - Every random choice is a pure function of (seed, purpose, hop, node,
 *     batch-or-generation, draw index) through XXH3 (gsnap_samp__h): a batch
 *     is reproducible from the sampler's seed, its batch number and the cache
 *     generation it was served from.
 *   - Neighbour lists handled here are distinct and ascending (multi-edges of
 *     the store are collapsed: one neighbour is sampled at most once).
 *   - A cache image (gsnap_samp__image) is immutable while a batch reads it,
 *     except for the entries the batch's own mode rewrites (PSCR, staleness);
 *     a background refresh builds a new image and the sampler swaps to it
 *     whole at a batch boundary.
 */
#ifndef GSNAP_SAMPLER_INT_H
#define GSNAP_SAMPLER_INT_H

#include "graphsnap.h"
#include "store/store.h"
#include <pthread.h>
#include <xxhash.h>

#define GSNAP_SAMP_MAGIC 0x504d4153u   /* "SAMP" */
#define GSNAP_SAMP_UNCACHED UINT32_MAX /* cnt of a node served from the store */
#define GSNAP_SAMP_MAX_NODES (1ull << 31)
/* Without caches (FBL) the dense node -> local index array (dslot, 8 bytes
 * per id below the largest) is kept up to this many ids (1 GiB); above it
 * the hash map serves, so that a store with a few huge ids does not reserve
 * memory in proportion to them. The cached modes keep dslot: their image
 * already costs more per id, and open checks that against the machine. */
#define GSNAP_SAMP_DSLOT_MAX_UNCACHED (1ull << 27)
#define GSNAP_SAMP_MAX_WORKERS 64

/* Purposes of random draws (part of every key). */
enum {
    GSNAP_P_FBL = 1,   /* sample f of a node's neighbours from the store */
    GSNAP_P_SERVE = 2, /* sample f of a node's cached list */
    GSNAP_P_BUILD = 3, /* draw a cache entry from scratch */
    GSNAP_P_KEEP = 4,  /* which cached neighbours an OTF refresh keeps */
    GSNAP_P_FRESH = 5, /* which fresh neighbours an OTF refresh adds */
    GSNAP_P_PCF = 6,   /* the fresh share of a PCF sample */
    GSNAP_P_SEEDS = 7  /* random seed nodes of a batch */
};

/* Keyed hash: the only source of randomness of the module. */
static inline uint64_t gsnap_samp__h(uint64_t seed, uint64_t purpose_hop, uint64_t node,
                                     uint64_t round, uint64_t i) {
    uint64_t k[4] = {purpose_hop, node, round, i};
    return XXH3_64bits_withSeed(k, sizeof k, seed);
}
/* Draw i of a keyed stream: the splitmix64 finalizer of base + (i+1) * phi
 * (base = gsnap_samp__h of the key, so every draw is still keyed by XXH3). */
static inline uint64_t gsnap_samp__mix(uint64_t base, uint64_t i) {
    uint64_t z = base + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, n) from a 64-bit hash (multiply-high; bias < n / 2^64). */
static inline uint64_t gsnap_samp__below(uint64_t h, uint64_t n) {
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

/* A draw key: everything but the draw index. */
typedef struct {
    uint64_t seed, ph, node, round;
} gsnap_samp__key;

/* util.c ------------------------------------------------------------------ */

/* Scratch for choose(): grows as needed. */
typedef struct {
    uint64_t *set; /* open-addressing set of chosen indices (+1; 0 = empty) */
    size_t cap;
} gsnap_samp__scratch;

/* k distinct indices in [0, n), uniform (Floyd's algorithm), written to out
 * (k = min(k, n); all indices in order when k >= n). Returns k or -1 (ENOMEM). */
long gsnap_samp__choose(const gsnap_samp__key *key, size_t n, size_t k, uint32_t *out,
                        gsnap_samp__scratch *sc);
/* The same from a ready stream base (draw j = gsnap_samp__mix(base, j)). */
long gsnap_samp__choose_base(uint64_t base, size_t n, size_t k, uint32_t *out,
                             gsnap_samp__scratch *sc);
/* Floyd's algorithm for small k (k <= n, k <= GSNAP_SAMP_SMALL_K): the same
 * indices in the same order as gsnap_samp__choose_base, inline. */
#define GSNAP_SAMP_SMALL_K 24
static inline void gsnap_samp__floyd_small(uint64_t base, uint32_t n, uint32_t k, uint32_t *out) {
    for (uint32_t j = n - k, m = 0; j < n; j++, m++) {
        uint32_t t = (uint32_t)gsnap_samp__below(gsnap_samp__mix(base, j), (uint64_t)j + 1);
        uint32_t dup = 0;
        for (uint32_t q = 0; q < m; q++) dup |= out[q] == t;
        out[m] = dup ? j : t;
    }
}
/* Same over [0, n) minus the sorted, distinct positions excl[0..ne). */
long gsnap_samp__choose_excl(const gsnap_samp__key *key, size_t n, const uint32_t *excl,
                             size_t ne, size_t k, uint32_t *out, gsnap_samp__scratch *sc);
void gsnap_samp__scratch_free(gsnap_samp__scratch *sc);

/* node id -> local index map, cleared in O(1) per use (stamps). */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    uint32_t *stamp;
    size_t cap;
    uint32_t cur;
    size_t n;
} gsnap_samp__map;
int gsnap_samp__map_reset(gsnap_samp__map *m, size_t expect);
/* Index of `key`, inserting it with value `next` when absent (*added = 1). */
uint32_t gsnap_samp__map_get_add(gsnap_samp__map *m, uint64_t key, uint32_t next, int *added);
void gsnap_samp__map_free(gsnap_samp__map *m);

/* source.c: where neighbour lists come from ------------------------------ */

typedef int (*gsnap_samp__scan_fn)(void *ctx, uint64_t node, const uint64_t *ids, size_t n);

typedef struct gsnap_samp__src gsnap_samp__src;
struct gsnap_samp__src {
    /* Start a read view at (at_t, as_of); as_of never LATEST here. */
    int (*begin)(gsnap_samp__src *src, int64_t at_t, uint64_t as_of);
    void (*end)(gsnap_samp__src *src);
    /* Distinct ascending neighbour ids of node in the current view; valid
     * until the next call. Begins its own view if none is open. */
    int (*nbrs)(gsnap_samp__src *src, uint64_t node, const uint64_t **ids, size_t *n);
    /* Every node with neighbours at (at_t, as_of), ascending. */
    int (*scan)(gsnap_samp__src *src, int64_t at_t, uint64_t as_of, gsnap_samp__scan_fn fn,
                void *ctx);
    int (*latest)(gsnap_samp__src *src, uint64_t *v);
    /* Nodes touched by version v (sorted); *nodes freed with free(). */
    int (*changed)(gsnap_samp__src *src, uint64_t v, uint64_t **nodes, size_t *n);
    int (*bound)(gsnap_samp__src *src, uint64_t *bound);
    void (*destroy)(gsnap_samp__src *src);
    /* A new source over the same graph for another thread (own buffers). */
    int (*fork)(gsnap_samp__src *src, gsnap_samp__src **out);
    gsnap_db *db; /* for error messages; may be NULL */
    uint64_t bytes_read; /* neighbour bytes fetched */
    /* The kept lists' counts (listcache.c): hits, misses, lists and bytes
     * held (stored atomically by the thread that calls nbrs: any thread may
     * read them). NULL for a source that keeps none. */
    void (*lists)(gsnap_samp__src *src, uint64_t out[4]);
    /* Keep at most `bytes` of lists from now on (0: none; before its first
     * view); its later forks get the same. NULL: keeps none. */
    void (*keep_lists)(gsnap_samp__src *src, size_t bytes);
    /* A hint that nbrs(node) comes soon (FBL's rows, serve_rows): stage 0
     * fetches where the node's kept list is looked up, stage 1 (a few nodes
     * later, when that lookup hits the cache) the list's first lines.
     * Changes nothing. NULL: no hint taken. */
    void (*prefetch)(const gsnap_samp__src *src, uint64_t node, int stage);
};

/* listcache.c: decoded lists kept across batches under the store's
 * answer key (gsnap_store__answer_key) ---------------------------------- */
/* Every non-empty list; 256 MiB (ids and slots) per sampler by default
 * (options.list_cache_bytes), split among its workers' sources. */
#define GSNAP_SAMP_LC_MIN_IDS 1
#define GSNAP_SAMP_LC_BYTES ((int64_t)256 << 20)
typedef struct {
    uint64_t node;
    const uint64_t *ids;
    uint32_t n;
    uint32_t gen; /* live iff == the cache's gen */
} gsnap_samp__lc_slot;
typedef struct {
    uint64_t *mem;
    size_t cap, fill; /* in ids */
} gsnap_samp__lc_chunk;
typedef struct {
    uint64_t key;             /* answer key of the lists held; 0 = keep nothing */
    uint32_t gen;
    gsnap_samp__lc_slot *slots; /* open addressing, cap a power of two, at most half used */
    size_t cap, used;
    gsnap_samp__lc_chunk *chunks;
    size_t nchunks, cur;      /* chunks[cur] is being filled */
    size_t held;              /* ids of memory the chunks hold (kept across keys) */
    size_t budget, min_ids;   /* bytes of chunks and slots at most; shorter lists are not kept */
    uint64_t hits, misses;    /* lookups under a non-zero key (the source counts them;
                                 stored atomically, read by other threads) */
    uint64_t pub_kept, pub_bytes; /* lists and bytes held, stored atomically after each
                                 change: read by other threads (statistics) */
} gsnap_samp__lcache;
void gsnap_samp__lc_init(gsnap_samp__lcache *c, size_t budget, size_t min_ids);
void gsnap_samp__lc_free(gsnap_samp__lcache *c);
/* Make key the cache's key; lists held under another key are dropped. */
void gsnap_samp__lc_rekey(gsnap_samp__lcache *c, uint64_t key);
/* The list held for node (count in *n), or NULL. */
const uint64_t *gsnap_samp__lc_get(const gsnap_samp__lcache *c, uint64_t node, size_t *n);
/* Prefetch for a coming lc_get of node: stage 0 its slot; stage 1 (the
 * slot cached by then) the first lines of its list. */
void gsnap_samp__lc_prefetch(const gsnap_samp__lcache *c, uint64_t node, int stage);
/* Keep a copy of node's list (ids[0..n)): the copy, or NULL when it is not
 * kept (no key, shorter than min_ids, budget spent, no memory). */
const uint64_t *gsnap_samp__lc_put(gsnap_samp__lcache *c, uint64_t node, const uint64_t *ids, size_t n);

/* A source over the store (db stays owned by the caller). Its forks keep
 * decoded lists within the same budget as it. */
int gsnap_samp__src_store(gsnap_db *db, gsnap_dir dir, gsnap_samp__src **out);

/* cache.c: in-memory cache images --------------------------------------- */

typedef struct {
    uint32_t cap;  /* slots per node (ceil(alpha * f)); 0 = nothing cached */
    uint32_t *cnt; /* per node: ids cached, or GSNAP_SAMP_UNCACHED */
    uint64_t *ids; /* nnodes * cap */
    uint64_t *ver; /* per node: store version the entry reflects */
} gsnap_samp__cache;

/* Serving view of a cache: fixed-size slots indexed by node id; slot[v *
 * stride] is the count (or GSNAP_SAMP_UNCACHED), slot[v * stride + 1] the
 * generation stamp (lazy.c), the next cap words the cached ids (u32: cached
 * nodes are < 2^31). Serving a node reads one place. A copy of the cache's
 * entries (u64 ids, counts, versions in three arrays, which the refresh and
 * persistence code use), kept in step: rebuilt whole after a pass over the
 * image (hot_ok = 0), entry by entry after in-batch entry refreshes (PSCR,
 * max_staleness). With lazy refreshes (image lz) the views run ahead of the
 * u64 entries, which stay at generation lz_base. */
typedef struct {
    uint32_t stride; /* 2 + cap */
    uint32_t *slot;  /* nnodes * stride */
    /* shared_ovl.c: the private overlay of a published image (PSCR): ovix[v]
     * = 0 (the image's slot serves v) or k + 1 (record k of ovrec, stride
     * words in the slot's layout, serves v); NULL when none */
    uint32_t *ovix;
    uint32_t *ovrec;
    size_t ovn, ovcap; /* records used, allocated */
    /* lazy images (lazy_sweep.c): the nodes whose entries change from one
     * generation to the next (cached, not stamped ALL), ascending */
    uint32_t *live;
    size_t nlive;
} gsnap_samp__hotc;

/* The serving slot of node v (< nnodes): the overlay's record if it has one. */
static inline const uint32_t *gsnap_samp__slot(const gsnap_samp__hotc *h, uint64_t v) {
    if (h->ovix && h->ovix[v]) return h->ovrec + (size_t)(h->ovix[v] - 1) * h->stride;
    return h->slot + v * h->stride;
}

typedef struct gsnap_samp__lazy gsnap_samp__lazy;
typedef struct gsnap_samp__image gsnap_samp__image;
struct gsnap_samp__image {
    uint64_t gen;     /* generation of the snapshot table this image shows */
    uint64_t nnodes;  /* dense bound of node ids */
    unsigned ncache;  /* caches[0..ncache) */
    gsnap_samp__cache caches[GSNAP_MAX_LAYERS + 1];
    uint32_t *deg;    /* distinct degree at the build's (T, V) (threshold split) */
    const gsnap_samp__image *from; /* during refresh_from: the source image */
    int mixed; /* with a snapshot: the entries differ from table generation `gen` (a
                  partial commit landed on another writer's generation): reload at
                  the next batch boundary. `gen` stays a real generation number. */
    gsnap_samp__hotc hot[GSNAP_MAX_LAYERS + 1]; /* serving views (hot.c) */
    int hot_ok; /* the views show the entries */
    gsnap_samp__lazy *lz; /* neighbour lists captured at the build (lazy.c), or NULL */
    int lazy;             /* lz also drives lazy whole-cache refreshes (FCR / FSCR) */
    const uint64_t *lz_off; /* lz's lists (for prefetches): adj[off[v] .. off[v + 1]) */
    const uint32_t *lz_adj;
    uint64_t lz_base;     /* with lz: the generation the u64 entries show (the serving
                             views are ahead of them, entry by entry) */
    uint64_t lz_swept;    /* lazy_sweep.c: every live entry is at this generation or
                             later (a sweep brought them there) */
    void *map;        /* shared.c: the arrays lie in this published image, mapped
                         MAP_PRIVATE (writes are copied into the process's pages) */
    size_t map_len;
    uint64_t map_gen; /* generation of the mapped image */
    int map_fd;       /* with map: the file, open and share-locked while mapped */
    int ovl;          /* hot[i].ovix holds records (shared_ovl.c) */
};

/* Parameters a refresh needs (a copy: a background thread owns it). */
typedef struct {
    uint64_t seed;
    double gamma;
    uint64_t threshold;
    int64_t at_t;
    uint64_t as_of;
    unsigned ncache;
    uint32_t caps[GSNAP_MAX_LAYERS + 1];
    unsigned hops[GSNAP_MAX_LAYERS + 1]; /* hop number of caches[i] (0 = shared) */
    int per_hop; /* adaptive refresh (policy.c): gamma of cache hop h = hop_gamma[h] */
    double hop_gamma[GSNAP_MAX_LAYERS + 1];
} gsnap_samp__rparams;

/* Allocate an image with all nodes uncached. */
int gsnap_samp__image_new(uint64_t nnodes, const gsnap_samp__rparams *rp,
                          gsnap_samp__image **out);
int gsnap_samp__image_clone(const gsnap_samp__image *im, gsnap_samp__image **out);
void gsnap_samp__image_free(gsnap_samp__image *im);
/* Free (or unmap, for a published image) an image's arrays and serving
 * views, leaving it empty; the image itself and its lazy lists stay. */
void gsnap_samp__image_arrays_free(gsnap_samp__image *im);
/* XXH3 over every cached list of the image (for generation checks). */
uint64_t gsnap_samp__image_checksum(const gsnap_samp__image *im);

/* Build every entry from scratch (degrees too) by one scan of the source at
 * (rp->at_t, rp->as_of): FCR's rebuild. */
int gsnap_samp__image_build(gsnap_samp__image *im, gsnap_samp__src *src,
                            const gsnap_samp__rparams *rp, uint64_t gen);
/* OTF refresh of every cached entry by one scan (FSCR): keep c - r, draw r
 * fresh among the neighbours not cached (r = round(gamma * c)); stale entries
 * (ver < changed_at[node]) are redrawn whole. *replaced counts new ids;
 * *dirty (malloc'd, may be NULL when not wanted) lists the nodes whose entry
 * in some cache changed (content or order), ascending. */
int gsnap_samp__image_refresh_all(gsnap_samp__image *im, gsnap_samp__src *src,
                                  const gsnap_samp__rparams *rp, uint64_t gen,
                                  const uint64_t *changed_at, uint64_t *entries,
                                  uint64_t *replaced, uint64_t **dirty, size_t *ndirty);
/* The same refresh written into `im` (same shape, e.g. a spare image) from
 * the read-only image `from`, which stays untouched (background refresh
 * without a full copy first: entries are copied node by node in the pass). */
int gsnap_samp__image_refresh_from(gsnap_samp__image *im, const gsnap_samp__image *from,
                                   gsnap_samp__src *src, const gsnap_samp__rparams *rp,
                                   uint64_t gen, const uint64_t *changed_at, uint64_t *entries,
                                   uint64_t *replaced, uint64_t **dirty, size_t *ndirty);
/* OTF replacement of one entry given the node's full neighbour list. */
int gsnap_samp__entry_refresh(gsnap_samp__cache *c, unsigned hop, uint64_t node,
                              const uint64_t *full, size_t d, const gsnap_samp__rparams *rp,
                              uint64_t gen, uint64_t version, int whole,
                              gsnap_samp__scratch *sc, uint64_t *replaced, int *changed);

/* The same on the entry at array index `at` of c's arrays (node keys the draws). */
int gsnap_samp__entry_refresh_at(gsnap_samp__cache *c, uint64_t at, unsigned hop, uint64_t node,
                                 const uint64_t *full, size_t d, const gsnap_samp__rparams *rp,
                                 uint64_t gen, uint64_t version, int whole,
                                 gsnap_samp__scratch *sc, uint64_t *replaced, int *changed);

/* lazy.c: FCR / FSCR whole-cache refreshes on first touch ---------------- */
/* Serving-slot stamp words (slot[1]): generation & MASK, UNC = uncached, BUSY
 * bit while a thread advances the entry (a busy stamp is below 0xC0000000,
 * so never UNC or ALL), ALL = the entry holds every neighbour of its node
 * (lazy images): the same in every generation, never advanced (lazy.c). */
#define GSNAP_SAMP_LZ_MASK 0x3FFFFFFFu
#define GSNAP_SAMP_LZ_BUSY 0x80000000u
#define GSNAP_SAMP_LZ_UNC 0xFFFFFFFFu
#define GSNAP_SAMP_LZ_ALL 0xFFFFFFFEu
extern int gsnap_samp__lazy_off; /* tests: 1 = eager whole-cache refreshes */
/* A refresh that would leave an entry more generations behind than this
 * advances every entry first (2^29: the 30-bit stamps stay unambiguous;
 * tests make it small). */
extern uint64_t gsnap_samp__lazy_gap_max;
/* Without a snapshot, frozen: attach to s->im, before its generation-0
 * build, the state that keeps the cached nodes' neighbour lists (FCR / FSCR
 * (-SC): lazy refreshes; PSCR (-SC): its in-batch refreshes read them). */
int gsnap_samp__lazy_attach(gsnap_sampler *s);
/* kind: 0 = lists only, 1 = FCR, 2 = FSCR. */
int gsnap_samp__lazy_new(const gsnap_samp__rparams *rp, uint64_t nnodes, int kind,
                         gsnap_samp__lazy **out);
/* Node v's captured list (ascending, distinct; empty if not cached). */
void gsnap_samp__lazy_nbrs(const gsnap_samp__lazy *lz, uint64_t v, const uint32_t **ids,
                           size_t *n);
void gsnap_samp__lazy_free(gsnap_samp__lazy *lz);
/* During the build's scan (ascending nodes): keep node's neighbour list. */
int gsnap_samp__lazy_capture(gsnap_samp__lazy *lz, uint64_t node, const uint64_t *ids, size_t n);
void gsnap_samp__lazy_capture_end(gsnap_samp__lazy *lz, const uint64_t **off,
                                  const uint32_t **adj);
/* Whether node v's serving slot (cap ids) of a lazy image holds every
 * neighbour of v in the list's order: the same entry in every generation. */
int gsnap_samp__lazy_all(const gsnap_samp__image *im, const uint32_t *slot, uint32_t cap,
                         uint64_t v);
/* A refresh: generation + 1, gamma[i] the share of cache i (FSCR); O(1). */
int gsnap_samp__lazy_bump(gsnap_samp__image *im, const double *gamma);
/* Bring node v's entry of cache ci to the image's generation (thread-safe
 * against other workers touching the same image). *replaced counts new ids. */
int gsnap_samp__lazy_touch(gsnap_samp__image *im, unsigned ci, uint64_t v,
                           gsnap_samp__scratch *sc, uint64_t *replaced);
/* Every entry to the current generation (one thread). */
int gsnap_samp__lazy_settle(gsnap_samp__image *im);
/* gsnap_samp__image_checksum of the image at its generation (entries not
 * advanced are computed aside; the image is not changed). */
uint64_t gsnap_samp__lazy_checksum(const gsnap_samp__image *im);
/* Node v's entry of cache ci at the image's generation (lazy or not) into
 * out (cap ids): its count, GSNAP_SAMP_UNCACHED, or -1 (out of memory). */
long gsnap_samp__entry_now(const gsnap_samp__image *im, unsigned ci, uint64_t v,
                           uint64_t *out);

/* Prefetch p's line for writing: in a state this core may write without
 * asking the others. A read prefetch (what __builtin_prefetch(p, 1) gives
 * without -mprfchw) brings a line shared with another core in the shared
 * state, and the first write then stalls on the invalidation; with two
 * workers the lazy entries a sweep rewrites are in both cores' caches.
 * PREFETCHW (0F 0D /1) is a no-op on x86-64 processors without it. */
static inline void gsnap_samp__prefetch_w(const void *p) {
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1);
#endif
}

/* lazy_sweep.c: a generation's redraws up front ------------------------------ */
/* hot[ci].live of a lazy image: its cached nodes not stamped ALL, ascending. */
int gsnap_samp__lazy_live(gsnap_samp__image *im, unsigned ci);
/* Bring the entries of hot[ci].live[lo .. hi) to the image's generation
 * (gsnap_samp__lazy_touch each, in order; thread-safe as it is); *redrawn
 * counts those that were behind. */
int gsnap_samp__lazy_sweep(gsnap_samp__image *im, unsigned ci, size_t lo, size_t hi,
                           gsnap_samp__scratch *sc, uint64_t *redrawn, uint64_t *replaced);

/* At the first batch of a generation of a lazy image (once per generation,
 * on the caller's thread): the caches whose live entries are to be swept
 * now (bit i: cache i; 0: none), as the probes decide (lazy_sweep.c). */
unsigned gsnap_samp__sweep_plan(gsnap_sampler *s);
/* A due sweep of s->im on the caller's thread (before a batch). */
void gsnap_samp__sweep_serial(gsnap_sampler *s);
/* tests / benchmarks: -1 = the policy decides (default), 0 = never sweep, 1 = always */
extern int gsnap_samp__sweep_mode;

/* hot.c: the serving view of an image -------------------------------------- */
/* Bring im's serving view in step with its entries (O(nnodes * cap) when it
 * is not; the background refresh calls it on the image it prepares). */
int gsnap_samp__hot_build(gsnap_samp__image *im);
/* Copy one entry of cache c of im into im's view, if the view is in step. */
void gsnap_samp__hot_node(gsnap_samp__image *im, const gsnap_samp__cache *c, uint64_t node);
void gsnap_samp__hot_free(gsnap_samp__image *im);

/* persist.c: the snapshot table behind an image -------------------------- */
struct gsnap_sampler;
/* Open the snapshot `name` for s (s->snap, s->snap_name); close it. */
int gsnap_samp__persist_open(struct gsnap_sampler *s, const char *name);
void gsnap_samp__persist_close(struct gsnap_sampler *s);
/* Fill `im` from the table in one read txn (the first call also draws every
 * entry from the store, for the degrees and as a fallback); entries too short
 * are drawn and written back as the next generation. *gen = the generation
 * the image now reflects. */
int gsnap_samp__persist_load(struct gsnap_sampler *s, gsnap_samp__image *im, uint64_t *gen);
/* Commit the entries of `nodes` (NULL: every cached node) and generation
 * table + 1 in one write txn. base_gen: the generation the image had before
 * these changes; *gen = the committed generation; *mixed = 1 when the table
 * had moved past base_gen and the write was partial (the table then mixes
 * two writers' entries: the image must reload), else 0. A fresh sampler
 * writes no entry of a node that has no table key at hop 1, i.e. no
 * neighbours at the snapshot's (T, V): the snapshot's catalog counts its
 * nodes, and keys added later would make it lie. */
int gsnap_samp__persist_save(struct gsnap_sampler *s, const gsnap_samp__image *im,
                             const uint64_t *nodes, size_t n, uint64_t base_gen, uint64_t *gen,
                             int *mixed);
/* The generation the table holds now (one short read txn). */
int gsnap_samp__persist_generation(struct gsnap_sampler *s, uint64_t *gen);
/* Test hook: called inside the refresh write txn after the puts. */
extern void (*gsnap_samp__in_txn_hook)(void);

/* block.c: the mini-batch buffer ------------------------------------------ */

/* One layer as the sampler builds it (arrays owned by the sampler). */
typedef struct {
    uint32_t ndst, nsrc;
    uint64_t nedges;
    const uint64_t *src;    /* nsrc ids, first ndst are the destinations */
    const uint32_t *indptr; /* ndst + 1 */
    const uint32_t *indices;/* nedges */
} gsnap_samp__layer;

/* An attribute section of a buffer (format 2): kind 1 = features of layer
 * 0's sources, 2 = the seeds' labels. */
#define GSNAP_SAMP_ATTR_FEATURES 1u
#define GSNAP_SAMP_ATTR_LABELS 2u
typedef struct {
    uint32_t kind;
    gsnap_dtype dtype;
    uint32_t dim;
    uint64_t rows;
} gsnap_samp__attr;

/* Bytes of the packed buffer of these layers (and na attribute sections). */
size_t gsnap_samp__block_size(const gsnap_samp__layer *ls, unsigned nl);
size_t gsnap_samp__block_size_attr(const gsnap_samp__layer *ls, unsigned nl,
                                   const gsnap_samp__attr *at, unsigned na);
/* Pack with na (<= 2) attribute sections: data[i] receives where section i's
 * rows go (the caller fills them; padding is zeroed). */
void gsnap_samp__block_pack_attr(void *buf, const gsnap_samp__layer *ls, unsigned nl,
                                 uint64_t batch, uint64_t gen, uint64_t version,
                                 const gsnap_samp__attr *at, unsigned na, void **data);
/* Pack into buf (block_size bytes, 8-aligned). ls[0] is the input layer. */
void gsnap_samp__block_pack(void *buf, const gsnap_samp__layer *ls, unsigned nl,
                            uint64_t batch, uint64_t gen, uint64_t version);

/* gather.c: rows of attribute tables for each batch ------------------------ */

/* A direct-mapped cache of rows read at the sampler's (T, V): the history is
 * immutable, so a row read at a fixed (T, V) never changes; the cache is
 * emptied when the sampler's version moves (fresh samplers). Slot of node x:
 * x % slots; tag x + 1 (0 = empty). */
#define GSNAP_SAMP_ROWCACHE_BYTES ((size_t)32 << 20) /* per table, at most */
typedef struct {
    uint64_t *tag;
    unsigned char *rows;
    size_t slots, row_bytes;
    uint64_t version; /* of the cached rows */
    uint64_t *miss;   /* scratch: nodes missing, their positions */
    size_t *miss_pos;
    unsigned char *miss_rows;
    size_t miss_cap;
    uint64_t hits, misses;
} gsnap_samp__rowcache;

/* Copy a caller's options (versions 1-3 end before `features`, `workers`,
 * `policy`); GSNAP_EINVAL for an unknown version. */
int gsnap_samp__copy_options(gsnap_sampler_options *o, const gsnap_sampler_options *opts);
/* Options features / labels: look the tables up, keep names and shapes in s,
 * clear the caller's pointers in *o. */
int gsnap_samp__attr_setup(gsnap_sampler *s, gsnap_sampler_options *o);
/* Set the sections' row counts for a batch (layer 0's sources, seeds). */
void gsnap_samp__attr_rows(gsnap_sampler *s, uint32_t nsrc0, uint32_t nseeds);
/* Fill the packed sections (s->adata) at the sampler's (T, V); t_gather. */
int gsnap_samp__gather_all(gsnap_sampler *s, const uint64_t *src0, const uint64_t *seeds);
void gsnap_samp__rowcache_free(gsnap_samp__rowcache *c);
void gsnap_samp__attr_free(gsnap_sampler *s);

/* the sampler (open.c opens it, sampler.c runs batches, refresh.c refreshes) */

struct gsnap_sampler {
    uint32_t magic;
    gsnap_db *db;
    gsnap_samp__src *src;
    int own_src;
    gsnap_sampler_options o;
    unsigned L;
    int32_t f_hop[GSNAP_MAX_LAYERS + 1]; /* f_hop[h], h = 1..L (h = 1 next to the seeds) */
    gsnap_samp__rparams rp;
    gsnap_samp__image *im;
    uint64_t batch;        /* next batch number */
    uint64_t version;      /* store version of the current batch's reads */
    uint64_t seen_version; /* changes applied up to this version */
    uint64_t lists_seen[2]; /* src->lists hits, misses at the end of the last batch (produce) */
    uint64_t *changed_at;  /* per node: last version that touched it */
    uint64_t nbound;       /* node id bound for random seeds */
    uint64_t *bg_changed;  /* copy of changed_at for the background refresh */
    /* persistence */
    struct gsnap_snapshot *snap;
    char *snap_name;
    int loaded; /* image loaded from the table once (degrees known) */
    /* background refresh */
    pthread_t bg;
    int bg_running;
    int bg_pipelined; /* the running refresh is the next scheduled generation: adopted at
                         its due batch, not before (refresh.c) */
    double bg_seconds;
    pthread_mutex_t bg_lock;
    gsnap_samp__image *bg_ready;
    gsnap_samp__image *spare; /* the previous generation's image, reused by the next
                                 background refresh */
    int bg_rc;
    uint64_t bg_entries, bg_replaced;
    gsnap_samp__src *bg_src;
    /* scratch */
    gsnap_samp__scratch sc;
    gsnap_samp__map map;   /* node -> local index for ids >= nbound */
    uint64_t *dslot; /* dense node -> (stamp << 32 | local index) for ids < nbound */
    uint32_t dstamp;
    uint64_t *cand;  /* a layer's sampled ids before deduplication */
    size_t cand_cap;
    uint64_t kb_serve, kb_fbl; /* the layer's draw keys (node base = mix(kb, node)) */
    uint32_t *pick;
    size_t pick_cap;
    uint64_t *tmp;
    size_t tmp_cap;
    uint32_t *excl;
    size_t excl_cap;
    uint64_t *lsrc[GSNAP_MAX_LAYERS];
    size_t lsrc_cap[GSNAP_MAX_LAYERS];
    uint32_t *lptr[GSNAP_MAX_LAYERS];
    size_t lptr_cap[GSNAP_MAX_LAYERS];
    uint32_t *lidx[GSNAP_MAX_LAYERS];
    size_t lidx_cap[GSNAP_MAX_LAYERS];
    uint32_t *touched; /* PSCR-SC: per node, last batch+1 refreshed */
    uint64_t *nb64;    /* PSCR: a captured list as u64 ids (refresh.c) */
    size_t nb64_cap;
    void *buf;
    size_t buf_cap, buf_len;
    /* features / labels gathered into each batch (options features, labels) */
    unsigned nattr;
    char attr_name[2][64];
    gsnap_samp__attr attr[2]; /* kind, dtype, dim (rows set per batch) */
    gsnap_samp__rowcache rowcache[2];
    void *adata[2]; /* where the current batch's sections go (in buf) */
    /* gsnap_sampler_next_staged: pack into a reserved stager slot instead of
     * buf (NULL otherwise); the slot's host buffer and ticket once reserved */
    struct gsnap_stager *stage_to;
    void *stage_host;
    unsigned stage_ticket;
    gsnap_sampler_stats st;
    /* parallel batch production (workers.c) */
    uint64_t *rseeds; /* the batch's random seeds (gsnap_sampler_next with seeds NULL) */
    size_t rseeds_cap;
    struct gsnap_sampler **shadow; /* o.workers shadow samplers: own scratch and source */
    unsigned nshadow;
    struct gsnap_samp__slot *slot; /* a round's batches: buffer, result, statistics */
    unsigned nslot;
    unsigned ahead_n, ahead_next; /* slot[ahead_next..ahead_n): batches s->batch.. (made or being made) */
    struct gsnap_samp__pool *pool; /* the worker threads (workers.c), NULL until used */
    size_t ahead_nseeds;          /* their seed count */
    int lz_defer; /* workers.c: the batch starts a round, whose threads do its sweep */
    struct { /* lazy_sweep.c: which caches are swept (from a probe generation) */
        uint64_t probe_gen;     /* the generation measured (its batches redraw lazily), or 0 */
        uint64_t probe_batches; /* st.batches when it began */
        uint64_t mark[GSNAP_MAX_LAYERS]; /* st.layer[].refreshed when it began */
        uint64_t last;          /* the last generation measured in full, or 0 */
        unsigned on;            /* caches to sweep (bit i: cache i), from that one */
    } sw;
    struct gsnap_samp__adapt *ad; /* adaptive refresh / run-time core (policy.c), or NULL */
    struct gsnap_samp__shared *shm; /* shared host tier (shared.c), NULL = off */
};

/* sampler.c / workers.c: producing batches ----------------------------------- */

/* One batch (s->batch) from seeds into s->buf, s->buf_len; stats into s->st.
 * The caller has set s->im, s->version and begun s->src's read view. */
int gsnap_samp__produce(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds);
/* Can batches be produced ahead on o.workers threads? (frozen, no snapshot,
 * no features / labels, not PSCR: nothing a batch does changes the next.) */
int gsnap_samp__workers_usable(const gsnap_sampler *s);
/* workers_stats.c: d = a - b over the counts a batch changes; a += d. */
void gsnap_samp__stats_delta(gsnap_sampler_stats *d, const gsnap_sampler_stats *a,
                             const gsnap_sampler_stats *b);
void gsnap_samp__stats_add(gsnap_sampler_stats *a, const gsnap_sampler_stats *d);
/* gsnap_sampler_next with random seeds on workers: the batches of a round
 * (up to 16 o.workers, never across a refresh boundary) are produced by a
 * persistent pool of threads, also between calls, and returned one per call
 * in order as soon as each is ready. */
int gsnap_samp__next_parallel(gsnap_sampler *s, size_t nseeds, const void **buf, size_t *len);
/* Drop batches produced ahead (the cache is about to change): the pool stops
 * claiming and the batches being produced are waited for. */
void gsnap_samp__ahead_drop(gsnap_sampler *s);
/* Join the pool's threads (close: before the image goes). */
void gsnap_samp__workers_stop(gsnap_sampler *s);
void gsnap_samp__workers_free(gsnap_sampler *s);

/* refresh.c: between and during batches --------------------------------- */

/* Adopt a finished background refresh or another writer's generation, mark
 * stale entries, run the mode's scheduled refresh, begin the batch's reads. */
int gsnap_sampler__before_batch(gsnap_sampler *s);
/* Is this batch a PSCR refresh batch? */
int gsnap_sampler__pscr_due(const gsnap_sampler *s);
/* PSCR: refresh the entries of hop h's frontier dst[0..n) as generation gen. */
int gsnap_sampler__pscr(gsnap_sampler *s, unsigned h, const uint64_t *dst, uint32_t n,
                        uint64_t gen);
/* End the batch's reads; on PSCR refresh batches commit the touched entries.
 * Returns rc (the batch's result) or the commit's error. */
int gsnap_sampler__after_batch(gsnap_sampler *s, int rc);
/* Redraw one entry from the store (the batch's view): stale or PSCR-touched. */
int gsnap_sampler__refresh_entry(gsnap_sampler *s, gsnap_samp__cache *c, unsigned cache_hop,
                                 uint64_t node, uint64_t gen, int whole, uint64_t *replaced);
/* Wait for a running background refresh and adopt its image (close). */
void gsnap_sampler__bg_join(gsnap_sampler *s);

/* Modes that share one cache across layers. */
static inline int gsnap_samp__is_shared(gsnap_sample_mode m) {
    return m == GSNAP_MODE_FCR_SC || m == GSNAP_MODE_PSCR_SC || m == GSNAP_MODE_FSCR_SC ||
           m == GSNAP_MODE_PCF_SC;
}

/* shared.c: the shared host tier (options.shared) ------------------------- */
/* Set up s->shm (the image key, the directory) when opts ask for it. */
int gsnap_samp__shared_open(gsnap_sampler *s);
/* Map the published image of generation gen into s->im: 0, GSNAP_NOTFOUND
 * or GSNAP_ECORRUPT (refused; counted in stats.shared_refused). */
int gsnap_samp__shared_attach(gsnap_sampler *s, uint64_t gen);
/* Between batches (and at open): map the published image of s->im's
 * generation, or publish s->im and map it. A failure to publish leaves the
 * private image (returns 0). */
int gsnap_samp__shared_sync(gsnap_sampler *s, int at_open);
/* Before a scheduled refresh (no snapshot, frozen FCR / FSCR / PCF): map
 * the next generation if another process published it; 1 = done (counted
 * as a refresh, without entry counts), 0 = refresh as usual. */
int gsnap_samp__shared_next(gsnap_sampler *s);
/* Unmap im's published image (its array pointers become NULL). */
void gsnap_samp__shared_unmap(gsnap_samp__image *im);
void gsnap_samp__shared_close(gsnap_sampler *s);
/* shared_ovl.c: PSCR's in-batch entry refresh of node v in cache c: into
 * the private overlay when s->im is a published image (the mapping is not
 * written), else gsnap_sampler__refresh_entry. */
int gsnap_samp__ovl_refresh(gsnap_sampler *s, gsnap_samp__cache *c, unsigned cache_hop,
                            uint64_t v, uint64_t gen, int whole, uint64_t *replaced);
/* Write the overlay's entries into im's arrays (copy on write) and drop it:
 * before a whole-image pass or copy (a refresh by hand, refresh_async). */
void gsnap_samp__ovl_fold(gsnap_samp__image *im);
void gsnap_samp__ovl_free(gsnap_samp__image *im);
/* gsnap_samp__image_checksum of an image with an overlay. */
uint64_t gsnap_samp__ovl_checksum(const gsnap_samp__image *im);

/* open.c ------------------------------------------------------------------ */

/* Open on an explicit source (tests): takes ownership of src when own. */
int gsnap_sampler__open_src(gsnap_samp__src *src, int own, const gsnap_sampler_options *opts,
                            gsnap_sampler **out);

/* util.c: small list helpers shared by cache.c and sampler.c */
void gsnap_samp__sort_u32(uint32_t *a, size_t n);
/* The nkeep of an entry's cnt ids an OTF refresh keeps: all but cnt - nkeep
 * drawn uniformly from kk's stream, as ascending indices into keep (room for
 * cnt). Returns min(nkeep, cnt), or -1 (out of memory). */
long gsnap_samp__keep_idx(const gsnap_samp__key *kk, uint32_t cnt, size_t nkeep, uint32_t *keep,
                          gsnap_samp__scratch *sc);
long gsnap_samp__find_id(const uint64_t *sorted, size_t d, uint64_t id);

#include "sampler/adapt_int.h"

#endif
