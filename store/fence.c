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

#include <stdlib.h>
#include <string.h>
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
} fence_dir;

struct gsnap_fence {
    uint64_t run_id;
    int refs; /* atomic: the table's and the views' */
    fence_dir d[2];
};

struct gsnap_fences {
    pthread_mutex_t mu;
    struct gsnap_fence **v; /* ascending run id */
    size_t n, cap;
    uint64_t built;         /* indexes built (tests) */
};

static void fence_free(struct gsnap_fence *f) {
    for (int i = 0; i < 2; i++) {
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

void gsnap_fence__close(gsnap_db *db) {
    struct gsnap_fences *t = db->fences;
    if (!t) return;
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
    }
    return before == nrec ? 0 : GSNAP_ECORRUPT;
}

/* Build d from every chunk of (run, dir) in txn; GSC1 chunks, a checksum
 * mismatch or anything malformed leave it unbuilt (queries then seek the
 * usual way and report the damage). */
static int build_dir(gsnap_db *db, MDB_txn *txn, uint64_t run_id, uint8_t dir, fence_dir *d) {
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
        d->nc++;
    }
    mdb_cursor_close(c);
    d->ok = rc == 0 && d->n > 0;
    return rc;
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
    for (uint8_t dir = 0; dir < 2; dir++)
        if (db->keep & (dir == GSNAP_DIR_IN ? GSNAP_KEEP_IN : GSNAP_KEEP_OUT) &&
            run->info.nrec_dir[dir] <= GSNAP_FENCE_MAX_RECS) {
            (void)build_dir(db, rd->txn, run->id, dir, &f->d[dir]);
            copy_bloom(db, rd->txn, run->id, dir, &f->d[dir]);
        }
    pthread_mutex_lock(&t->mu);
    i = find(t, run->id);
    if ((i < t->n && t->v[i]->run_id == run->id) || (t->n == t->cap && gsnap_vec_reserve((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v))) {
        pthread_mutex_unlock(&t->mu);
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

void gsnap_fence__warm(gsnap_db *db, gsnap_read *rd) {
    for (size_t i = 0; i < rd->nruns; i++)
        if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && rd->runs[i].info.nrec > 0) build(db, rd, &rd->runs[i]);
    prune(db, rd);
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
    if (!rd->fence) return;
    for (size_t i = 0; i < rd->nruns; i++) gsnap_fence__unref(rd->fence[i]);
    free(rd->fence);
    rd->fence = NULL;
}

/* Count a seek of a chunked run without an index; build the view's missing
 * indexes when enough such seeks add up (see the top of the file). One
 * thread builds at a time; the others go on seeking the usual way. */
static void lazy_build(gsnap_db *db, gsnap_read *rd) {
    uint64_t m = __atomic_add_fetch(&db->fence_misses, 1, __ATOMIC_RELAXED);
    if (m < GSNAP_FENCE_LAZY_MIN || m % 64) return;
    uint64_t recs = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        if (!(rd->runs[i].info.flags & GSNAP_RUN_DENSE) && (!rd->fence || !rd->fence[i]))
            recs += rd->runs[i].info.nrec;
    if (m < recs / GSNAP_FENCE_LAZY_RECS) return;
    int idle = 0;
    if (!__atomic_compare_exchange_n(&db->fence_building, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
    gsnap_fence__warm(db, rd);
    __atomic_store_n(&db->fence_misses, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&db->fence_building, 0, __ATOMIC_RELEASE);
    take_refs(db, rd);
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
    size_t lo = 0, hi = d->n; /* the last entry with node < the target, or the first */
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

int gsnap_fence__has(gsnap_db *db, uint64_t run_id) {
    struct gsnap_fences *t = table(db, 0);
    if (!t) return 0;
    pthread_mutex_lock(&t->mu);
    size_t i = find(t, run_id);
    int have = i < t->n && t->v[i]->run_id == run_id && (t->v[i]->d[0].ok || t->v[i]->d[1].ok);
    pthread_mutex_unlock(&t->mu);
    return have;
}

/* Before a query walks the runs one by one: take the view's references,
 * load the dense runs' values, and start loading the cache lines the
 * query's first reads of every run need (the dense index entry, the Bloom
 * block), so that their misses overlap instead of coming one after the
 * other (on a store just written by a commit, most of them miss). */
int gsnap_fence__prefetch(gsnap_db *db, gsnap_read *rd, uint64_t node, uint8_t dir, uint64_t as_of,
                          size_t *bad_run) {
    gsnap_fence__view_take(db, rd);
    for (size_t i = 0; i < rd->nruns; i++) {
        const gsnap_run *run = &rd->runs[i];
        if (run->info.min_ver > as_of) continue;
        if (!(run->info.flags & GSNAP_RUN_DENSE)) {
            gsnap_bloom__prefetch(&rd->blooms[i * 2 + dir], node);
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
