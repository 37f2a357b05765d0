/*
 * store/fence.c -- in-memory fence indexes of the chunked runs, built by the
 * committing thread of a querying process (warm.c), shared by read views.
 *
 * A point query seeks each chunked run that may hold its node: one B-tree
 * descent to the chunk, then a walk over the chunk's group headers (a GSC2
 * chunk has no index inside: on R-MAT about 150 groups in 2 KB, half of
 * them walked on average, a quarter of a query's time on a store that is
 * still ingesting). A fence index holds, per (run, direction), every
 * GSNAP_FENCE_EVERY-th group of every chunk (a chunk's first group always):
 * its node, the node before it, its byte offset and the records before it.
 * A seek then binary-searches the index in memory, descends to that chunk
 * by its exact key and walks at most GSNAP_FENCE_EVERY groups
 * (gsnap_run__seek_from, runs.c). About 8 bytes per group in memory with
 * the Bloom copies (0.38 bytes a record measured on an 8 M-record run).
 *
 * Runs never change and run ids are never reused, so an index built once is
 * right for as long as its run lives. The builder verifies each chunk's
 * XXH3 before walking it and the reader before decoding it, both through
 * gsnap_run__chunk_verified (runs.c: once per process and chunk,
 * db->chunk_ok; the chunks warm.c has just verified are not hashed again),
 * so nothing read from the map is trusted unverified. Lifetime: the table (db->fences) holds one reference
 * per index and drops it when warm.c sees the run merged away; each view
 * holds one reference per index it uses (taken at its first query, dropped
 * by gsnap_read_end), so a view that still sees a merged-away run keeps its
 * index. A run without an index (not built yet, format-2 chunks, a build
 * that failed) is sought the usual way.
 *
 * Held copies: within the handle's budget (db->fence_budget, from
 * gsnap_db_options.read_cache_bytes), an index also keeps its run's chunk
 * payloads of a direction back to back (each verified as it is copied:
 * runs never change, so the copy stays right) and a node table over them
 * (each node -> its first group: an array by node where the run's ids are
 * dense, else a hash), both in one region of huge pages where it is large
 * (region_alloc). A seek of such a run is then one lookup
 * and reads of the copy (gsnap_run__seek_held, runs.c): no B-tree descent,
 * no lookup in the verification set, no walk over group headers; on an
 * ingesting store that was 30 % of the time of the queries that return a
 * few neighbours (docs/benchmarks.md "Queries under ingest: held copies").
 * The copies count against the budget until the index is freed (the last
 * reference gone); one that does not fit is not made.
 *
 * A process that never commits (a trainer opened on a store that another
 * process ingests, or on a finished one) gets no index from warm.c. Its
 * seeks build them instead, once they have walked about as many group
 * headers as the build walks (rent or buy: a seek without an index walks
 * half a chunk's ~150 groups, a build every group of the run once): after
 * GSNAP_FENCE_LAZY_MIN unindexed seeks and one per GSNAP_FENCE_LAZY_RECS
 * records of the unindexed runs of the view (lazy_build). A one-shot query
 * (the CLI's `neighbors`) never pays for a build.
 */
#include "store/store_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

typedef struct {
    uint64_t node;   /* the group's node */
    uint64_t prev;   /* the node of the group before it in its chunk (0: first) */
    uint32_t chunk;  /* index into the chunk table */
    uint16_t off;    /* byte offset of its header in the chunk's payload */
    uint16_t before; /* records of the chunk before it */
} fence_ent;

typedef struct {
    fence_ent *e;
    size_t n, cap;
    unsigned char (*key)[GSNAP_DATA_KEY]; /* each chunk's key */
    size_t nc, ccap;
    int ok; /* built */
    unsigned char *bloom; /* a verified copy of the run's Bloom filter blocks (NULL: none) */
    uint32_t nblocks;
    /* a verified copy of the chunks' payloads (held.bytes NULL: none, seeks
     * descend the B-tree); coff/cnrec are what held.off/nrec point into.
     * While the index is built, cpay holds each verified payload's address
     * in the build's read transaction (valid until it ends: the copy is made
     * once, straight into the region, when the sizes are known) and clen
     * their total. */
    gsnap_run_held held;
    const unsigned char **cpay;
    uint32_t *coff, *cnrec;
    size_t clen, ocap;
    /* buckets of the entries by node >> shift: the entries of bucket b are
     * e[top[b] .. top[b + 1]) (ntop + 1 values), so that a seek searches a
     * few entries instead of the whole array (a binary search over
     * thousands of entries is a dozen dependent cache misses on a store
     * just written; NULL: search the whole array) */
    uint32_t *top;
    size_t ntop;
    unsigned shift;
    /* with a held copy (always, when there is one): every node of the
     * run's direction -> its first group, open addressing (at most half
     * full; chunk1 0: empty). A seek then costs one probe and one
     * read of the copy. The Bloom filter is still asked first: its blocks
     * (2 bytes a node) stay in cache where the table's slots (32 bytes a
     * node) do not, and most queries ask for nodes a run lacks. */
    struct held_slot *slots;
    uint64_t smask;
    /* or, when the run's nodes are dense enough (range <= 4 x groups), a
     * table indexed by node - dlo (dn entries): built in node order, no
     * hashing (the build is a sequential write, not one cache miss a node) */
    struct held_ent *direct;
    uint64_t dlo, dn;
    uint64_t groups;           /* group headers of the run's direction (sizes the table) */
    uint64_t lo_node, hi_node; /* the first and last group's nodes */
    /* the copy and the table live in one region (region_huge: mapped in
     * 2 MiB units and advised into huge pages); cost: what it counts
     * against the handle's budget */
    unsigned char *region;
    size_t region_len, cost;
    int region_huge;
} fence_dir;

struct held_slot {
    uint64_t node;
    uint32_t chunk1; /* the chunk + 1; 0: an empty slot (fresh zeroed memory is an empty table) */
    uint16_t off;    /* byte offset of the group's header in its chunk's payload */
    uint16_t before; /* records of the chunk before it */
};

struct held_ent {
    uint32_t chunk1; /* as in held_slot: 0 = no group of this node */
    uint16_t off, before;
};

static inline uint64_t slot_hash(uint64_t node) {
    node *= 0x9e3779b97f4a7c15ull;
    return node ^ (node >> 29);
}

/* The line of a held copy's node table that holds `node`'s entry (its
 * first probe: the table is at most half full, so a probe rarely goes on). */
static inline void prefetch_node_entry(const fence_dir *d, uint64_t node) {
    if (d->direct) {
        if (node >= d->dlo && node - d->dlo < d->dn) __builtin_prefetch(&d->direct[node - d->dlo]);
    } else if (d->slots) {
        __builtin_prefetch(&d->slots[slot_hash(node) & d->smask]);
    }
}

/* A held copy's entry for `node`: its first group's chunk + 1 (0: the run
 * has no record of it), byte offset and records before it in the chunk. */
static inline void node_entry(const fence_dir *d, uint64_t node, uint32_t *chunk1, uint32_t *off, uint32_t *before) {
    *chunk1 = *off = *before = 0;
    if (d->direct) {
        if (node >= d->dlo && node - d->dlo < d->dn) {
            const struct held_ent *x = &d->direct[node - d->dlo];
            *chunk1 = x->chunk1, *off = x->off, *before = x->before;
        }
    } else {
        uint64_t i = slot_hash(node) & d->smask;
        while (d->slots[i].chunk1 && d->slots[i].node != node) i = (i + 1) & d->smask;
        *chunk1 = d->slots[i].chunk1, *off = d->slots[i].off, *before = d->slots[i].before;
    }
}

struct gsnap_fence {
    uint64_t run_id;
    int refs; /* atomic: the table's and the views' */
    uint64_t *held_total; /* the handle's count of held bytes (db->fence_held) */
    fence_dir d[2];
};

struct gsnap_fences {
    pthread_mutex_t mu;
    struct gsnap_fence **v; /* ascending run id */
    size_t n, cap;
    uint64_t built;         /* indexes built (tests) */
    struct gsnap_runmask *mask; /* the newest run set's mask, or NULL (one reference) */
};

/* The region of a copy and its table: from 512 KiB on, mapped in 2 MiB
 * units and advised into transparent huge pages. On the shared VMs this
 * was measured on, the first read of a 4 KiB page not read for a while
 * costs about 4 us (the hypervisor's page tables, not a guest page fault),
 * so a query that probed a table and read a copy spread over small pages
 * paid it twice: the p99 of PGP queries under ingest went from 7 to 13 us
 * with 4 KiB pages and to 2.3 us with huge ones. Smaller regions come from
 * malloc (a few pages). NULL when out of memory. */
#define REGION_HUGE_MIN ((size_t)512 << 10)
#define REGION_UNIT ((size_t)2 << 20)

uint64_t gsnap_fence__huge_regions; /* regions mapped in 2 MiB units (tests; atomic) */

/* What a region of `want` bytes takes: rounded up to 2 MiB units from
 * REGION_HUGE_MIN on (region_alloc). */
static size_t region_cost(size_t want) {
    return want < REGION_HUGE_MIN ? want : (want + REGION_UNIT - 1) / REGION_UNIT * REGION_UNIT;
}

static unsigned char *region_alloc(fence_dir *d, size_t want) {
    const size_t huge = REGION_UNIT;
    d->region_huge = want >= REGION_HUGE_MIN;
    if (!d->region_huge) {
        d->region_len = want;
        return d->region = malloc(want ? want : 1);
    }
    size_t n = (want + huge - 1) / huge * huge;
    unsigned char *p = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    size_t lead = (huge - ((uintptr_t)p & (huge - 1))) & (huge - 1); /* trim to a 2 MiB boundary */
    if (lead) munmap(p, lead);
    if (huge - lead) munmap(p + lead + n, huge - lead);
    p += lead;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE); /* advice only: without it, small pages */
#endif
    d->region_len = n;
    __atomic_add_fetch(&gsnap_fence__huge_regions, 1, __ATOMIC_RELAXED);
    return d->region = p;
}

static void region_free(fence_dir *d) {
    if (d->region && d->region_huge) munmap(d->region, d->region_len);
    else free(d->region);
    d->region = NULL;
    d->region_len = 0;
}

/* Drop d's chunk copy and give its bytes back to the handle's budget. */
static void drop_held(struct gsnap_fence *f, fence_dir *d) {
    if (d->held.bytes) __atomic_sub_fetch(f->held_total, (uint64_t)d->cost, __ATOMIC_RELAXED);
    region_free(d);
    d->slots = NULL;
    d->direct = NULL;
    d->smask = d->dn = 0;
    d->cost = 0;
    free(d->cpay);
    free(d->coff);
    free(d->cnrec);
    d->cpay = NULL;
    d->coff = d->cnrec = NULL;
    d->clen = d->ocap = 0;
    memset(&d->held, 0, sizeof d->held);
}

static void fence_free(struct gsnap_fence *f) {
    for (int i = 0; i < 2; i++) {
        drop_held(f, &f->d[i]);
        free(f->d[i].top);
        free(f->d[i].e);
        free(f->d[i].key);
        free(f->d[i].bloom);
    }
    free(f);
}

void gsnap_fence__unref(struct gsnap_fence *f) {
    if (f && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) fence_free(f);
}

static struct gsnap_fences *table(gsnap_db *db, int create) {
    struct gsnap_fences *t = __atomic_load_n(&db->fences, __ATOMIC_ACQUIRE);
    if (t || !create) return t;
    if (!(t = calloc(1, sizeof *t))) return NULL;
    pthread_mutex_init(&t->mu, NULL);
    struct gsnap_fences *expect = NULL;
    if (__atomic_compare_exchange_n(&db->fences, &expect, t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return t;
    pthread_mutex_destroy(&t->mu);
    free(t);
    return expect;
}

static void mask_unref(struct gsnap_runmask *m) {
    if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (m->cost) __atomic_sub_fetch(m->held_total, (uint64_t)m->cost, __ATOMIC_RELAXED);
    free(m->bits[0]);
    free(m->bits[1]);
    free(m->ids);
    free(m);
}

void gsnap_fence__close(gsnap_db *db) {
    struct gsnap_fences *t = db->fences;
    if (!t) return;
    mask_unref(t->mask);
    for (size_t i = 0; i < t->n; i++) gsnap_fence__unref(t->v[i]);
    free(t->v);
    pthread_mutex_destroy(&t->mu);
    free(t);
    db->fences = NULL;
}

/* Index of the first entry with run id >= id (t->mu held). */
static size_t find(const struct gsnap_fences *t, uint64_t id) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid]->run_id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int push_ent(fence_dir *d, const fence_ent *e) {
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 256;
        fence_ent *ne = realloc(d->e, nc * sizeof *ne);
        if (!ne) return GSNAP_ENOMEM;
        d->e = ne;
        d->cap = nc;
    }
    d->e[d->n++] = *e;
    return 0;
}

/* Index one verified GSC2 chunk payload as chunk number `ci` of d. */
static int index_chunk(fence_dir *d, uint32_t ci, const unsigned char *pay, size_t plen, uint32_t nrec) {
    const unsigned char *p = pay, *end = pay + plen;
    uint64_t base, node = 0, before = 0;
    if (gsnap_codec__get(&p, end, &base) || gsnap_codec__get(&p, end, &base)) return GSNAP_ECORRUPT;
    for (unsigned g = 0; p < end; g++) {
        size_t off = (size_t)(p - pay);
        uint64_t h[3];
        if (gsnap_codec__get3(&p, end, h) || h[2] > (size_t)(end - p) || h[1] == 0) return GSNAP_ECORRUPT;
        uint64_t prev = node;
        node += h[0];
        if (g % GSNAP_FENCE_EVERY == 0) {
            if (off > UINT16_MAX || before > UINT16_MAX) return GSNAP_ECORRUPT;
            fence_ent e = {node, prev, ci, (uint16_t)off, (uint16_t)before};
            int rc = push_ent(d, &e);
            if (rc) return rc;
        }
        before += h[1];
        p += h[2];
        if (d->groups++ == 0) d->lo_node = node;
        d->hi_node = node;
    }
    return before == nrec ? 0 : GSNAP_ECORRUPT;
}

/* Copy the payloads noted in d->cpay into a region, with a node table after
 * them: each node's first group (a node whose records go on in the next
 * chunk has a group there too). 0, or GSNAP_ENOMEM / GSNAP_ECORRUPT (then
 * neither). */
static int fill_slots(fence_dir *d, uint64_t room) {
    uint64_t cap = 16, range = d->hi_node - d->lo_node + 1;
    while (cap < 2 * d->groups) cap *= 2;
    if (cap > ((uint64_t)1 << 32)) return GSNAP_ENOMEM;
    int direct = d->groups && d->hi_node >= d->lo_node && range <= 4 * d->groups && range < ((uint64_t)1 << 32);
    size_t tbytes = direct ? (size_t)range * sizeof(struct held_ent) : (size_t)cap * sizeof(struct held_slot);
    size_t at = (d->clen + 63) & ~(size_t)63; /* the table, cache-line aligned */
    if (region_cost(at + tbytes) + d->ocap * 2 * sizeof(uint32_t) > room) return GSNAP_ENOMEM; /* before allocating */
    unsigned char *region = region_alloc(d, at + tbytes);
    if (!region) return GSNAP_ENOMEM;
    for (uint32_t c = 0; c < d->held.nc; c++)
        memcpy(region + d->coff[c], d->cpay[c], d->coff[c + 1] - d->coff[c]);
    struct held_slot *t = direct ? NULL : (struct held_slot *)(void *)(region + at);
    struct held_ent *de = direct ? (struct held_ent *)(void *)(region + at) : NULL;
    if (!d->region_huge) memset(region + at, 0, tbytes); /* a fresh mapping is zeroed already */
    for (uint32_t c = 0; c < d->held.nc; c++) {
        const unsigned char *pay = region + d->held.off[c], *p = pay, *end = region + d->held.off[c + 1];
        uint64_t base, node = 0, before = 0;
        if (gsnap_codec__get(&p, end, &base) || gsnap_codec__get(&p, end, &base)) goto bad;
        while (p < end) {
            size_t off = (size_t)(p - pay);
            uint64_t h[3];
            if (gsnap_codec__get3(&p, end, h) || h[2] > (size_t)(end - p) || off > UINT16_MAX ||
                before > UINT16_MAX)
                goto bad;
            node += h[0];
            if (de) {
                if (node < d->lo_node || node - d->lo_node >= range) goto bad;
                struct held_ent *x = &de[node - d->lo_node];
                if (!x->chunk1) *x = (struct held_ent){c + 1, (uint16_t)off, (uint16_t)before};
            } else {
                uint64_t i = slot_hash(node) & (cap - 1);
                while (t[i].chunk1 && t[i].node != node) i = (i + 1) & (cap - 1);
                if (!t[i].chunk1) t[i] = (struct held_slot){node, c + 1, (uint16_t)off, (uint16_t)before};
            }
            before += h[1];
            p += h[2];
        }
    }
    d->slots = t;
    d->smask = t ? cap - 1 : 0;
    d->direct = de;
    d->dlo = d->lo_node;
    d->dn = de ? range : 0;
    d->held.bytes = region;
    d->cost = d->region_len + d->ocap * 2 * sizeof(uint32_t);
    return 0;
bad:
    region_free(d);
    return GSNAP_ECORRUPT;
}

/* Note chunk ci's verified payload for d's copy (fill_slots copies it);
 * 0, or GSNAP_ENOMEM. The offsets are u32: a copy stops short of 4 GiB (the
 * budget is far less). */
static int hold_chunk(fence_dir *d, size_t ci, const unsigned char *pay, size_t plen, uint32_t nrec) {
    if (d->clen + plen > UINT32_MAX) return GSNAP_ENOMEM;
    if (ci + 2 > d->ocap) { /* coff needs ci + 2 entries, cnrec and cpay ci + 1 */
        size_t nc = d->ocap ? d->ocap * 2 : 64;
        uint32_t *no = realloc(d->coff, nc * sizeof *no), *nr = NULL;
        if (no) d->coff = no;
        if (!no || !(nr = realloc(d->cnrec, nc * sizeof *nr))) return GSNAP_ENOMEM;
        d->cnrec = nr;
        const unsigned char **np = realloc(d->cpay, nc * sizeof *np);
        if (!np) return GSNAP_ENOMEM;
        d->cpay = np;
        d->ocap = nc;
    }
    d->cpay[ci] = pay;
    d->coff[ci] = (uint32_t)d->clen;
    d->cnrec[ci] = nrec;
    d->clen += plen;
    d->coff[ci + 1] = (uint32_t)d->clen;
    return 0;
}

/* Bucket d's entries (ascending nodes) by their high bits: about two
 * entries per bucket. Leaves d->top NULL when it cannot (no memory). */
static void bucket(fence_dir *d) {
    if (d->n < 16 || d->n > UINT32_MAX) return;
    uint64_t last = d->e[d->n - 1].node;
    size_t want = 1;
    while (want < d->n / 2) want *= 2;
    unsigned shift = 0;
    while ((last >> shift) >= want) shift++;
    size_t ntop = (size_t)(last >> shift) + 1; /* buckets up to the last entry's */
    uint32_t *top = malloc((ntop + 1) * sizeof *top);
    if (!top) return;
    size_t j = 0;
    for (size_t b = 0; b <= ntop; b++) {
        while (j < d->n && (d->e[j].node >> shift) < b) j++;
        top[b] = (uint32_t)j;
    }
    d->top = top;
    d->ntop = ntop;
    d->shift = shift;
}

/* Build d from every chunk of (run, dir) in txn; GSC1 chunks, a checksum
 * mismatch or anything malformed leave it unbuilt (queries then seek the
 * usual way and report the damage). With hold, d also keeps a copy of the
 * verified payloads (dropped again if anything fails). */
static int build_dir(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, fence_dir *d, uint64_t room) {
    int hold = room > 0;
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, db->data_dbi, &c);
    if (rc) return GSNAP_EIO;
    unsigned char key[GSNAP_DATA_KEY] = {0};
    gsnap_put_be64(key, run_id);
    key[8] = dir;
    MDB_val k = {sizeof key, key}, v;
    rc = 0;
    for (int mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); mrc == 0 && rc == 0;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *kp = k.mv_data;
        if (k.mv_size != GSNAP_DATA_KEY || gsnap_get_be64(kp) != run_id || kp[8] != dir) break;
        struct gsnap_chunk_hdr h;
        if (v.mv_size < sizeof h) { rc = GSNAP_ECORRUPT; break; }
        memcpy(&h, v.mv_data, sizeof h);
        const unsigned char *pay = (const unsigned char *)v.mv_data + sizeof h;
        size_t plen = v.mv_size - sizeof h;
        if (h.magic != GSNAP_CHUNK2_MAGIC || !gsnap_run__chunk_verified(db, kp, pay, plen, h.xxh3, 2)) {
            rc = GSNAP_ECORRUPT;
            break;
        }
        if (d->nc == d->ccap) {
            size_t nc = d->ccap ? d->ccap * 2 : 64;
            void *nk = realloc(d->key, nc * GSNAP_DATA_KEY);
            if (!nk) { rc = GSNAP_ENOMEM; break; }
            d->key = nk;
            d->ccap = nc;
        }
        memcpy(d->key[d->nc], kp, GSNAP_DATA_KEY);
        rc = index_chunk(d, (uint32_t)d->nc, pay, plen, h.nrec);
        if (rc == 0 && hold &&
            (d->clen + plen + (d->nc + 2) * 2 * sizeof(uint32_t) > room || /* over the budget: stop now */
             hold_chunk(d, d->nc, pay, plen, h.nrec)))
            hold = 0; /* no copy (budget_held frees what was noted) */
        d->nc++;
    }
    mdb_cursor_close(c);
    d->ok = rc == 0 && d->n > 0;
    if (d->ok) bucket(d);
    if (d->ok && hold && d->nc > 0 && d->nc < UINT32_MAX) {
        d->held = (gsnap_run_held){NULL, d->coff, d->cnrec, (uint32_t)d->nc};
        if (fill_slots(d, room)) memset(&d->held, 0, sizeof d->held); /* no table: no copy either (seeks use both) */
    }
    free(d->cpay); /* addresses in txn: not to be kept past it */
    d->cpay = NULL;
    return rc;
}

/* Count len more bytes in *total (the handle's held bytes) if that stays
 * within budget: 1, else 0 and nothing counted. Several threads may build
 * at once (commits, lazy builds): one compare-and-swap decides. */
static int budget_take(uint64_t *total, uint64_t len, uint64_t budget) {
    uint64_t cur = __atomic_load_n(total, __ATOMIC_RELAXED);
    do {
        if (cur + len > budget) return 0;
    } while (!__atomic_compare_exchange_n(total, &cur, cur + len, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return 1;
}

/* Keep d's copy if the handle's budget has room for it, else drop it. */
static void budget_held(struct gsnap_fence *f, fence_dir *d, uint64_t budget) {
    if (d->held.bytes && !budget_take(f->held_total, d->cost, budget))
        d->held.bytes = NULL; /* not counted: drop without giving back */
    if (!d->held.bytes) drop_held(f, d);
}

/* Copy the run's verified Bloom filter of dir into d (views then need no
 * lookup of it). */
static void copy_bloom(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, fence_dir *d) {
    gsnap_bloom_ref b = {0};
    if (gsnap_bloom__load(db, txn, run_id, dir, &b) || !b.blocks) return;
    if ((d->bloom = malloc((size_t)b.nblocks * 64))) {
        memcpy(d->bloom, b.blocks, (size_t)b.nblocks * 64);
        d->nblocks = b.nblocks;
    }
}

uint64_t gsnap_fence__dup_builds;

/* Build the index of `run` (a chunked run of this view) and add it to the
 * table, unless it is there. */
static void build(gsnap_db *db, gsnap_read *rd, const gsnap_run *run) {
    struct gsnap_fences *t = table(db, 1);
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    size_t i = find(t, run->id);
    int have = i < t->n && t->v[i]->run_id == run->id;
    pthread_mutex_unlock(&t->mu);
    if (have) return;
    struct gsnap_fence *f = calloc(1, sizeof *f);
    if (!f) return;
    f->run_id = run->id;
    f->refs = 1;
    f->held_total = &db->fence_held;
    for (uint8_t dir = 0; dir < 2; dir++)
        if (gsnap_store__kept(db, dir) &&
            run->info.nrec_dir[dir] <= GSNAP_FENCE_MAX_RECS) {
            /* the budget's room now: a copy that outgrows it is dropped as soon
             * as it does (another build may take room meanwhile: budget_held
             * decides). Only a direction this process reads gets a copy: the
             * budget goes to the lists that are asked for (a GNN trainer asks
             * in-neighbours only, and R-MAT-20's young runs need about the
             * whole default budget in one direction). The index itself is
             * built for both (a few bytes a group), so a direction first read
             * later seeks its older runs through it, without copies, until
             * merges replace them. */
            uint64_t held = __atomic_load_n(&db->fence_held, __ATOMIC_RELAXED);
            uint64_t room = !gsnap_store__dir_read(db, dir) ? 0
                            : held < db->fence_budget ? db->fence_budget - held : 0;
            (void)build_dir(db, rd->txn, run->id, dir, &f->d[dir], room);
            budget_held(f, &f->d[dir], db->fence_budget);
            copy_bloom(db, rd->txn, run->id, dir, &f->d[dir]);
        }
    pthread_mutex_lock(&t->mu);
    i = find(t, run->id);
    int dup = i < t->n && t->v[i]->run_id == run->id;
    if (dup || (t->n == t->cap && gsnap_vec_reserve((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v))) {
        pthread_mutex_unlock(&t->mu);
        /* one builder at a time (fence_build_lock) makes a duplicate impossible */
        if (dup) __atomic_add_fetch(&gsnap_fence__dup_builds, 1, __ATOMIC_RELAXED);
        fence_free(f);
        return;
    }
    memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
    t->v[i] = f;
    t->n++;
    t->built++;
    pthread_mutex_unlock(&t->mu);
}

/* Drop the table's reference of runs that are gone: ids below the view's
 * newest run that the view does not hold (run ids only grow). */
static void prune(gsnap_db *db, const gsnap_read *rd) {
    struct gsnap_fences *t = table(db, 0);
    if (!t || rd->nruns == 0) return;
    uint64_t newest = rd->runs[rd->nruns - 1].id;
    pthread_mutex_lock(&t->mu);
    size_t w = 0, r = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct gsnap_fence *f = t->v[i];
        while (r < rd->nruns && rd->runs[r].id < f->run_id) r++;
        int live = f->run_id > newest || (r < rd->nruns && rd->runs[r].id == f->run_id);
        if (live) t->v[w++] = f;
        else gsnap_fence__unref(f);
    }
    t->n = w;
    pthread_mutex_unlock(&t->mu);
}

/* ---- Run masks ----------------------------------------------------------
 *
 * A query of a node asks every chunked run of its view whether it holds the
 * node: a Bloom block and, where it may, a node table slot, each a cache
 * line of its own, k lines for k runs. On a store that keeps ingesting
 * there are 2-7 such runs, and on a store just written by a commit most of
 * these lines miss. The run mask answers for all of them with one read:
 * one 16-bit word per node id, bit j set when the view's j-th chunked run
 * holds the node (struct gsnap_runmask, store_int.h).
 *
 * It is made from the held copies' node tables (each lists every node of
 * its run's direction, from verified bytes), so a clear bit is exact and a
 * run it clears is skipped; a set bit is a run that holds the node. It is
 * made for a direction the process reads when every chunked run of the view
 * with records in it has such a table there (a mask may answer one
 * direction only), for at most GSNAP_RUNMASK_MAX runs and
 * node ids below a range that fits the handle's budget (it counts against
 * it like the copies); otherwise there is none and queries ask the Bloom
 * filters as before.
 *
 * Runs never change and their ids are never reused, so a mask made for a
 * list of run ids is right for as long as those runs are read. The table
 * keeps the newest one; a view takes a reference at its first query when
 * its chunked runs are exactly the mask's, and keeps it until it ends. A
 * commit that only adds runs extends the last mask (a copy of its words,
 * then the new runs' bits: O(range + the new runs' nodes)); a merge
 * rebuilds it from the tables. */
uint64_t gsnap_fence__masks_built, gsnap_fence__masks_extended;
int gsnap_fence__mask_off;

/* Set bit j in bits[0..range) for every node of d's node table. */
static void mask_add(uint16_t *bits, uint64_t range, const fence_dir *d, unsigned j) {
    uint16_t b = (uint16_t)(1u << j);
    if (d->direct) {
        for (uint64_t x = 0; x < d->dn; x++)
            if (d->direct[x].chunk1) {
                uint64_t node = d->dlo + x;
                assert(node < range); /* range covers hi_node */
                if (node < range) bits[node] |= b;
            }
        return;
    }
    for (uint64_t x = 0; x <= d->smask; x++)
        if (d->slots[x].chunk1) {
            uint64_t node = d->slots[x].node;
            assert(node < range);
            if (node < range) bits[node] |= b;
        }
}

/* A node table of f's direction dir that mask_add can read, or NULL. */
static const fence_dir *mask_source(const struct gsnap_fence *f, uint8_t dir) {
    if (!f) return NULL;
    const fence_dir *d = &f->d[dir];
    return d->ok && d->held.bytes && (d->slots || d->direct) ? d : NULL;
}

/* No mask could be made for the view's run set: the table gives up the one
 * it holds, which no view at least as new can take (views holding it keep
 * their references), so that its share of the budget does not stay taken
 * (and keep the new runs' copies, hence any new mask, from fitting). A
 * mask of a newer run set than the view's (a lazy build through an older
 * view) is left alone. */
static void mask_drop_stale(struct gsnap_fences *t, const gsnap_read *rd) {
    uint64_t newest = rd->nruns ? rd->runs[rd->nruns - 1].id : 0;
    pthread_mutex_lock(&t->mu);
    struct gsnap_runmask *m = t->mask;
    if (m && m->k && m->ids[m->k - 1] <= newest) t->mask = NULL;
    else m = NULL;
    pthread_mutex_unlock(&t->mu);
    mask_unref(m);
}

/* Make the mask of the view's chunked runs (their indexes just built) and
 * make it the table's, unless it is that already; when it cannot be made,
 * give up the table's stale one (mask_drop_stale). */
static void mask_build(gsnap_db *db, gsnap_read *rd) {
    struct gsnap_fences *t = table(db, 0);
    if (!t) return;
    size_t k = 0;
    uint64_t ids[GSNAP_RUNMASK_MAX];
    const gsnap_run *runs[GSNAP_RUNMASK_MAX];
    for (size_t i = 0; i < rd->nruns; i++) {
        if (rd->runs[i].info.flags & GSNAP_RUN_DENSE) continue;
        if (k == GSNAP_RUNMASK_MAX) {
            mask_drop_stale(t, rd);
            return;
        }
        runs[k] = &rd->runs[i];
        ids[k++] = rd->runs[i].id;
    }
    if (k == 0) {
        mask_drop_stale(t, rd);
        return;
    }
    struct gsnap_fence *fs[GSNAP_RUNMASK_MAX] = {0};
    pthread_mutex_lock(&t->mu);
    struct gsnap_runmask *old = t->mask;
    if (old && old->k == k && !memcmp(old->ids, ids, k * sizeof *ids)) {
        pthread_mutex_unlock(&t->mu);
        return; /* up to date */
    }
    if (old && old->ids[old->k - 1] > rd->runs[rd->nruns - 1].id) {
        /* the table's mask is of a newer run set than this view's (a lazy
         * build through a view begun before later commits): keep it */
        pthread_mutex_unlock(&t->mu);
        return;
    }
    for (size_t j = 0; j < k; j++) {
        size_t x = find(t, ids[j]);
        if (x < t->n && t->v[x]->run_id == ids[j]) {
            fs[j] = t->v[x];
            __atomic_add_fetch(&fs[j]->refs, 1, __ATOMIC_RELAXED);
        }
    }
    if (old) __atomic_add_fetch(&old->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->mu);

    struct gsnap_runmask *m = NULL;
    uint64_t range[2] = {0, 0}, groups = 0;
    /* a direction gets words when every run with records in it has a node
     * table there (only the directions the process reads have copies, so a
     * mask may answer one direction and leave the other to the Bloom
     * filters) */
    int want[2] = {0, 0};
    for (uint8_t dir = 0; dir < 2; dir++) {
        if (!gsnap_store__kept(db, dir) || !gsnap_store__dir_read(db, dir)) continue;
        uint64_t r = 0, g = 0;
        want[dir] = 1;
        for (size_t j = 0; j < k && want[dir]; j++) {
            if (runs[j]->info.nrec_dir[dir] == 0) continue; /* holds nothing in dir: no bits */
            const fence_dir *d = mask_source(fs[j], dir);
            if (!d || d->hi_node == UINT64_MAX) want[dir] = 0;
            else {
                if (d->hi_node + 1 > r) r = d->hi_node + 1;
                g += d->groups;
            }
        }
        if (want[dir]) range[dir] = r, groups += g;
    }
    int ok = want[0] || want[1];
    /* old's words of a direction are reused when its runs are the first of
     * this view's and it answers that direction */
    size_t from = 0, from_dir[2] = {0, 0};
    if (old && old->k < k && !memcmp(old->ids, ids, old->k * sizeof *ids)) from = old->k;
    for (int dir = 0; dir < 2 && from; dir++)
        if (want[dir] && old->bits[dir]) {
            from_dir[dir] = from;
            if (old->range[dir] > range[dir]) range[dir] = old->range[dir];
        }
    size_t cost = (size_t)(range[0] + range[1]) * sizeof(uint16_t) + k * sizeof(uint64_t);
    uint64_t held = __atomic_load_n(&db->fence_held, __ATOMIC_RELAXED);
    /* a sparse id space (range far above the nodes) would make a large,
     * mostly empty mask: not made */
    if (ok && (range[0] > ((uint64_t)1 << 40) || range[1] > ((uint64_t)1 << 40) || /* no wrap below */
               range[0] + range[1] > 16 * groups + 65536 || held + cost > db->fence_budget))
        ok = 0;
    if (ok && (m = calloc(1, sizeof *m)) && (m->ids = malloc(k * sizeof *ids))) {
        m->refs = 1;
        m->held_total = &db->fence_held;
        m->k = k;
        memcpy(m->ids, ids, k * sizeof *ids);
        for (uint8_t dir = 0; dir < 2 && ok; dir++) {
            if (!want[dir]) continue;
            m->range[dir] = range[dir];
            if (!(m->bits[dir] = calloc(range[dir] ? range[dir] : 1, sizeof(uint16_t)))) {
                ok = 0;
                break;
            }
            if (from_dir[dir]) memcpy(m->bits[dir], old->bits[dir], (size_t)old->range[dir] * sizeof(uint16_t));
            for (size_t j = from_dir[dir]; j < k; j++)
                if (runs[j]->info.nrec_dir[dir]) mask_add(m->bits[dir], range[dir], mask_source(fs[j], dir), (unsigned)j);
        }
    } else {
        ok = 0;
    }
    if (ok && (ok = budget_take(&db->fence_held, cost, db->fence_budget))) m->cost = cost; /* counted as a copy */
    struct gsnap_runmask *drop = NULL;
    int raced = 0;
    if (ok) {
        pthread_mutex_lock(&t->mu);
        raced = t->mask != old;
        if (!raced) { /* no other thread published meanwhile */
            drop = t->mask;
            t->mask = m;
            m = NULL;
            __atomic_add_fetch(from_dir[0] || from_dir[1] ? &gsnap_fence__masks_extended : &gsnap_fence__masks_built, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&t->mu);
    }
    if (m) { /* not published */
        m->refs = 1;
        mask_unref(m);
    }
    mask_unref(drop);
    mask_unref(old);
    if (!ok && !raced) mask_drop_stale(t, rd);
    for (size_t j = 0; j < k; j++) gsnap_fence__unref(fs[j]);
}

void gsnap_fence__warm(gsnap_db *db, gsnap_read *rd) {
    /* the runs merged away first: their copies' budget (once no view holds
     * them) is then free for the merge's output, which is built next */
    prune(db, rd);
    for (size_t i = 0; i < rd->nruns; i++)
        if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && rd->runs[i].info.nrec > 0) build(db, rd, &rd->runs[i]);
    mask_build(db, rd);
}

/* Take references to the table's indexes of the view's runs that have none
 * yet in rd->fence (those it has are not touched: their Bloom copies may be
 * in use in rd->blooms); the Bloom filters of runs with a copy are set in
 * rd->blooms. At a view's first query, and after a lazy build. */
static void take_refs(gsnap_db *db, gsnap_read *rd) {
    struct gsnap_fences *t = table(db, 0);
    if (!t || rd->nruns == 0) return;
    if (!rd->fence && !(rd->fence = calloc(rd->nruns, sizeof *rd->fence))) return;
    pthread_mutex_lock(&t->mu);
    struct gsnap_runmask *m = t->mask;
    if (m && !rd->mask && !__atomic_load_n(&gsnap_fence__mask_off, __ATOMIC_RELAXED)) {
        /* the view's chunked runs must be exactly the mask's */
        size_t j = 0;
        for (size_t i = 0; i < rd->nruns && m; i++) {
            if (rd->runs[i].info.flags & GSNAP_RUN_DENSE) continue;
            if (j == m->k || m->ids[j] != rd->runs[i].id) m = NULL;
            else j++;
        }
        if (m && j == m->k) {
            __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
            rd->mask = m;
        }
    }
    for (size_t i = 0; i < rd->nruns; i++) {
        if (rd->fence[i]) continue;
        size_t j = find(t, rd->runs[i].id);
        if (j == t->n || t->v[j]->run_id != rd->runs[i].id) continue;
        struct gsnap_fence *f = rd->fence[i] = t->v[j];
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
        for (int dir = 0; dir < 2; dir++) {
            gsnap_bloom_ref *b = &rd->blooms[i * 2 + (unsigned)dir];
            if (f->d[dir].bloom && !b->loaded) *b = (gsnap_bloom_ref){.loaded = 1, .blocks = f->d[dir].bloom,
                                                                      .nblocks = f->d[dir].nblocks};
        }
    }
    pthread_mutex_unlock(&t->mu);
}

/* The view's references, taken once at its first query (rd->fence[i] for
 * rd->runs[i], NULL when the run has none). */
void gsnap_fence__view_take(gsnap_db *db, gsnap_read *rd) {
    if (rd->fence_taken) return;
    rd->fence_taken = 1;
    take_refs(db, rd);
}

void gsnap_fence__view_end(gsnap_read *rd) {
    mask_unref(rd->mask);
    rd->mask = NULL;
    if (!rd->fence) return;
    for (size_t i = 0; i < rd->nruns; i++) gsnap_fence__unref(rd->fence[i]);
    free(rd->fence);
    rd->fence = NULL;
}

/* Count a seek of a chunked run without an index; build the view's missing
 * indexes when enough such seeks add up (see the top of the file). One
 * thread builds at a time; the others go on seeking the usual way. */
static void index_runs(gsnap_db *db, gsnap_read *rd);
static void lazy_build(gsnap_db *db, gsnap_read *rd) {
    uint64_t m = __atomic_add_fetch(&db->fence_misses, 1, __ATOMIC_RELAXED);
    if (m < GSNAP_FENCE_LAZY_MIN || m % 64) return;
    uint64_t recs = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && (!rd->fence || !rd->fence[i]))
            recs += rd->runs[i].info.nrec;
    if (m < recs / GSNAP_FENCE_LAZY_RECS) return;
    index_runs(db, rd);
}

/* One builder at a time (db->fence_build_lock). Two builders of the same
 * run (a sampler beginning its batch on the version a commit has just
 * made, while the committing thread's warm step builds that version's
 * runs) each verified and copied it, one copy was thrown away, and the
 * budget of held copies could go to the one thrown away, leaving the run
 * without a copy (and its run sets without a mask) for its life. Readers
 * only try the lock (one that finds a build going on seeks as before); the
 * committing thread waits for it. */

/* The newest run id of a view: run ids only grow, and every run set after
 * a commit or merge holds the newest id made so far, so a view whose newest
 * run is older than another view's sees an older run set. */
static uint64_t newest_run(const gsnap_read *rd) {
    uint64_t m = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        if (rd->runs[i].id > m) m = rd->runs[i].id;
    return m;
}

/* store_int.h: the committing thread's build (store/warm.c). It waits for a
 * reader's build to end (readers never wait: they go on seeking), then
 * records the newest run it built for, so that a reader holding an older
 * view (begun before a merge) does not build again the runs that merge has
 * just removed. */
void gsnap_fence__warm_commit(gsnap_db *db, gsnap_read *rd) {
    pthread_mutex_lock(&db->fence_build_lock);
    gsnap_fence__warm(db, rd);
    uint64_t m = newest_run(rd);
    if (m > db->fence_run) db->fence_run = m; /* under fence_build_lock, as its reads */
    pthread_mutex_unlock(&db->fence_build_lock);
}

/* A lazy build, or gsnap_store__index_runs. A view older than the run set
 * this process's commits last built for builds nothing (the runs it has
 * that the newer one lacks were merged away); it takes what the table
 * holds for its runs. */
static void index_runs(gsnap_db *db, gsnap_read *rd) {
    if (pthread_mutex_trylock(&db->fence_build_lock)) return;
    if (newest_run(rd) >= db->fence_run) {
        uint64_t before = gsnap_fence__built(db);
        gsnap_fence__warm(db, rd);
        /* the lazy builds' count starts again only when something was built:
         * a batch of a sampler that found every index built must not keep a
         * long-lived view of another reader from its lazy build */
        if (gsnap_fence__built(db) != before) __atomic_store_n(&db->fence_misses, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&db->fence_build_lock);
    take_refs(db, rd);
}

/* store.h: what a lazy build does, without waiting for the seeks to add up
 * (a sampler over the store calls it as each batch begins); dir is noted as
 * read first, so that its runs get copies. */
void gsnap_store__index_runs(gsnap_db *db, gsnap_read *rd, gsnap_dir dir) {
    gsnap_store__note_read(db, (unsigned)dir);
    index_runs(db, rd);
}

int gsnap_fence__seek(gsnap_db *db, gsnap_read *rd, size_t ri, uint8_t dir, uint64_t node, gsnap_run_reader *rr,
                      int verify) {
    gsnap_fence__view_take(db, rd);
    const struct gsnap_fence *f = rd->fence ? rd->fence[ri] : NULL;
    const gsnap_run *run = &rd->runs[ri];
    if (!f) {
        lazy_build(db, rd);
        f = rd->fence ? rd->fence[ri] : NULL;
    }
    if (!f || !f->d[dir & 1].ok) return gsnap_run__seek(db, rd->cur, run->id, dir, node, rr, verify);
    const fence_dir *d = &f->d[dir & 1];
    if (d->slots || d->direct) { /* the node's first group, or not in the run */
        uint32_t chunk1 = 0, off = 0, before = 0;
        node_entry(d, node, &chunk1, &off, &before);
        if (!chunk1) {
            memset(rr, 0, sizeof *rr);
            rr->done = 1;
            rr->run_id = run->id;
            rr->dir = dir;
            return 0;
        }
        /* the decoder wants the node before the group: its header's delta says */
        uint32_t c = chunk1 - 1;
        const unsigned char *p = d->held.bytes + d->held.off[c] + off, *end = d->held.bytes + d->held.off[c + 1];
        uint64_t delta;
        if (gsnap_codec__get(&p, end, &delta)) delta = 0; /* seek_held reports the damage */
        return gsnap_run__seek_held(db, &d->held, run->id, dir, d->key[c], c, off, node - delta, before, node, rr);
    }
    size_t lo = 0, hi = d->n; /* the last entry with node < the target, or the first */
    if (d->top) { /* the first entry with node >= the target is in [top[b], top[b + 1]] */
        uint64_t b = node >> d->shift;
        if (b >= d->ntop) lo = hi = d->n;
        else lo = d->top[b], hi = d->top[b + 1];
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->e[mid].node < node) lo = mid + 1;
        else hi = mid;
    }
    const fence_ent *e = &d->e[lo ? lo - 1 : 0];
    return gsnap_run__seek_from(db, rd->cur, run->id, dir, d->key[e->chunk], e->off, e->prev, e->before, node,
                                rr, verify);
}

uint64_t gsnap_fence__built(gsnap_db *db) {
    struct gsnap_fences *t = table(db, 0);
    if (!t) return 0;
    pthread_mutex_lock(&t->mu);
    uint64_t b = t->built;
    pthread_mutex_unlock(&t->mu);
    return b;
}

uint64_t gsnap_fence__held_bytes(gsnap_db *db) {
    return __atomic_load_n(&db->fence_held, __ATOMIC_RELAXED);
}

int gsnap_fence__mask_published(gsnap_db *db) {
    struct gsnap_fences *t = table(db, 0);
    if (!t) return 0;
    pthread_mutex_lock(&t->mu);
    int have = t->mask != NULL;
    pthread_mutex_unlock(&t->mu);
    return have;
}

/* The table's index of run_id: built in either direction (what = 0),
 * holding a copy in either (1), or a copy in direction dir (2 + dir). */
static int table_has(gsnap_db *db, uint64_t run_id, int what) {
    struct gsnap_fences *t = table(db, 0);
    if (!t) return 0;
    pthread_mutex_lock(&t->mu);
    size_t i = find(t, run_id);
    const struct gsnap_fence *f = i < t->n && t->v[i]->run_id == run_id ? t->v[i] : NULL;
    int have = f && (what >= 2   ? f->d[(what - 2) & 1].held.bytes != NULL
                     : what == 1 ? f->d[0].held.bytes || f->d[1].held.bytes
                                 : f->d[0].ok || f->d[1].ok);
    pthread_mutex_unlock(&t->mu);
    return have;
}

int gsnap_fence__held_run(gsnap_db *db, uint64_t run_id) { return table_has(db, run_id, 1); }

int gsnap_fence__held_dir(gsnap_db *db, uint64_t run_id, unsigned dir) {
    return table_has(db, run_id, 2 + (int)(dir & 1));
}

int gsnap_fence__has(gsnap_db *db, uint64_t run_id) { return table_has(db, run_id, 0); }

/* Before a query walks the runs one by one: take the view's references,
 * load the dense runs' values, and start loading the cache lines the
 * query's first reads of every run need (the dense index entry, the Bloom
 * block), so that their misses overlap instead of coming one after the
 * other (on a store just written by a commit, most of them miss). */
int gsnap_fence__prefetch(gsnap_db *db, gsnap_read *rd, uint64_t node, uint64_t *bloom_h, uint8_t dir, uint64_t as_of,
                          size_t *bad_run) {
    gsnap_fence__view_take(db, rd);
    int hashed = 0;
    const struct gsnap_runmask *m = rd->mask && rd->mask->bits[dir & 1] ? rd->mask : NULL;
    if (m && node < m->range[dir & 1]) __builtin_prefetch(&m->bits[dir & 1][node]);
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        if (run->info.min_ver > as_of) continue;
        if (!(run->info.flags & GSNAP_RUN_DENSE)) {
            if (m) continue; /* the mask's line says which runs to read */
            if (!hashed) { /* only a view with chunked runs needs the filters' hash */
                *bloom_h = gsnap_bloom__hash(node);
                hashed = 1;
            }
            gsnap_bloom__prefetch_h(&rd->blooms[i * 2 + dir], *bloom_h);
            const struct gsnap_fence *f = rd->fence ? rd->fence[i] : NULL;
            if (f && f->d[dir & 1].ok) prefetch_node_entry(&f->d[dir & 1], node);
            continue;
        }
        gsnap_dense_ref *d = &rd->denses[i * 2 + dir];
        int rc;
        *bad_run = i;
        if (!d->loaded && (rc = gsnap_dense__load(db, rd->txn, run->id, dir, d, -1))) return rc;
        if (d->idx && d->nidx > 1 && node < d->nidx - 1) __builtin_prefetch(d->idx + node * 8);
    }
    return 0;
}

/* The second round of a query's warm-up, once gsnap_fence__prefetch's lines
 * have arrived: start loading what each run's answer reads next, the dense
 * runs' bodies at the node and, where a run's Bloom filter lets the node
 * through, the held copy's group of the node, its chunk's start (the bases) and
 * its record count. The loop of node_events
 * (query.c) then finds these lines in cache: a query pays about two rounds
 * of misses whatever the number of runs, instead of two a run it reads.
 * Reads only what the view already holds (loaded values, held copies);
 * nothing is verified here because nothing is decoded. */
void gsnap_fence__prefetch_data(gsnap_read *rd, uint64_t node, uint64_t bloom_h, uint8_t dir, uint64_t as_of) {
    unsigned mbits = 0, mj = 0;
    int masked = gsnap_fence__mask_bits(rd, dir, node, &mbits);
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        unsigned bit = run->info.flags & GSNAP_RUN_DENSE ? 0 : mj++;
        if (run->info.min_ver > as_of) continue;
        if (run->info.flags & GSNAP_RUN_DENSE) {
            const gsnap_dense_ref *d = &rd->denses[i * 2 + dir];
            uint64_t b, e;
            if (!d->loaded || !d->compact) continue;
            gsnap_dense__range(d, node, &b, &e);
            if (e > b) __builtin_prefetch(d->recs + b);
            continue;
        }
        if (masked) {
            if (!(mbits >> bit & 1)) continue;
        } else {
            const gsnap_bloom_ref *bl = &rd->blooms[i * 2 + dir];
            if (!bl->loaded || !gsnap_bloom__may_contain_h(bl, bloom_h)) continue;
        }
        const struct gsnap_fence *f = rd->fence ? rd->fence[i] : NULL;
        if (!f || !f->d[dir & 1].ok) continue;
        const fence_dir *d = &f->d[dir & 1];
        if (!d->held.bytes || (!d->slots && !d->direct)) continue;
        uint32_t chunk1, off, before;
        node_entry(d, node, &chunk1, &off, &before);
        if (chunk1 && chunk1 <= d->held.nc) { /* the group, and what the seek reads before it (load_held): */
            const unsigned char *pay = d->held.bytes + d->held.off[chunk1 - 1];
            __builtin_prefetch(pay + off);
            __builtin_prefetch(pay);                       /* the chunk's bases, at its start */
            __builtin_prefetch(&d->held.nrec[chunk1 - 1]); /* its record count */
        }
    }
}
