/*
 * store/batch.c -- ingest batches: buffer events, sort them, commit them as
 * one new sorted run (one version) in one LMDB write transaction.
 *
 * Why runs and not one mdb_put per edge: a B-tree keyed by node takes a
 * random leaf-page write per edge, and LMDB copies every touched page on
 * commit. Sorting the batch in memory (LSD radix sort, stable) and appending
 * it as one run writes each page once, sequentially. Runs are merged in
 * levels of F = gsnap_db_options.merge_fanout (size-tiered, default 4), so
 * queries look at O(F log_F(batches)) runs and every event is rewritten
 * O(log_F(batches)) times.
 */
#include "store/store_int.h"
#include <assert.h>
#include "store/batch_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct gsnap_batch {
    uint32_t magic;
    gsnap_db *db;
    gsnap_event *ev;
    size_t n, cap;
    int failed;
    const gsnap_batch_ext_ops *ext_ops[4]; /* extensions (features/) */
    void *ext_state[4];
    int next;
    struct gsnap_batch_source src; /* version-log source and commit time */
    struct gsnap_sorted sorted;    /* valid: ev sorted before (adopted) */
};
#define GSNAP_BATCH_MAGIC 0x67736274u

int gsnap_batch_begin(gsnap_db *db, gsnap_batch **out) {
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    if (db->read_only) return gsnap_store__err(db, GSNAP_EACCES, "database '%s' is open read-only", db->path);
    pthread_mutex_lock(&db->lock);
    int busy = db->batch_open;
    if (!busy) db->batch_open = 1;
    pthread_mutex_unlock(&db->lock);
    if (busy) return gsnap_store__err(db, GSNAP_EBUSY, "a batch is already open on this handle");
    gsnap_batch *b = calloc(1, sizeof *b);
    if (!b) {
        pthread_mutex_lock(&db->lock);
        db->batch_open = 0;
        pthread_mutex_unlock(&db->lock);
        return GSNAP_ENOMEM;
    }
    b->magic = GSNAP_BATCH_MAGIC;
    b->db = db;
    pthread_mutex_lock(&db->lock);
    db->batch = b;
    pthread_mutex_unlock(&db->lock);
    *out = b;
    return 0;
}

/* gsnap_db_close with this batch open (db->lock held): drop its events and
 * detach it from the db. The small handle stays valid: later calls on it
 * answer GSNAP_ESTATE, and commit/abort release it. */
void gsnap_batch__orphan(gsnap_batch *b) {
    free(b->ev);
    b->ev = NULL;
    b->n = b->cap = 0;
    b->db = NULL;
    b->failed = 1;
}

static int batch_push(gsnap_batch *b, uint64_t src, uint64_t dst, int64_t t, int del) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC) return GSNAP_EINVAL;
    if (b->failed || !b->db) return GSNAP_ESTATE;
    if (t == GSNAP_TIME_MAX)
        return gsnap_store__err(b->db, GSNAP_ERANGE, "edge %llu -> %llu: time %lld is reserved for \"now\"",
                                (unsigned long long)src, (unsigned long long)dst, (long long)t);
    if (b->sorted.valid) gsnap_sorted_free(&b->sorted); /* no longer the batch's order */
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        gsnap_event *ne = realloc(b->ev, nc * sizeof *ne);
        if (!ne) {
            b->failed = 1;
            return gsnap_store__err(b->db, GSNAP_ENOMEM, "out of memory buffering %zu events", nc);
        }
        b->ev = ne;
        b->cap = nc;
    }
    gsnap_event *e = &b->ev[b->n++];
    e->src = src;
    e->dst = dst;
    e->t = t;
    e->del = (uint64_t)del;
    return 0;
}

int gsnap_batch_add(gsnap_batch *b, uint64_t src, uint64_t dst, int64_t t) {
    return batch_push(b, src, dst, t, 0);
}

int gsnap_batch_delete(gsnap_batch *b, uint64_t src, uint64_t dst, int64_t t) {
    return batch_push(b, src, dst, t, 1);
}

int gsnap_batch_add_events(gsnap_batch *b, const uint64_t *src, const uint64_t *dst,
                           const int64_t *t, const uint8_t *del, size_t n, size_t *failed_at) {
    if (failed_at) *failed_at = 0;
    if (n && (!src || !dst)) return GSNAP_EINVAL;
    for (size_t i = 0; i < n; i++) {
        int rc = batch_push(b, src[i], dst[i], t ? t[i] : 0, del && del[i] ? 1 : 0);
        if (rc) {
            if (failed_at) *failed_at = i;
            return rc;
        }
    }
    return 0;
}

size_t gsnap_batch_size(const gsnap_batch *b) { return b ? b->n : 0; }

int gsnap_batch_set_source(gsnap_batch *b, const char *source, uint64_t first_line, uint64_t last_line) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC) return GSNAP_EINVAL;
    if (first_line > last_line)
        return gsnap_store__err(b->db, GSNAP_EINVAL, "source line range %llu..%llu is reversed",
                                (unsigned long long)first_line, (unsigned long long)last_line);
    snprintf(b->src.name, sizeof b->src.name, "%s", source ? source : "");
    b->src.first_line = first_line;
    b->src.last_line = last_line;
    return 0;
}

void gsnap_batch__set_counts(gsnap_batch *b, uint64_t adds, uint64_t deletes, int64_t min_t, int64_t max_t) {
    b->src.have_counts = 1;
    b->src.adds = adds;
    b->src.deletes = deletes;
    b->src.min_t = min_t;
    b->src.max_t = max_t;
}

void gsnap_batch__set_restore(gsnap_batch *b) { b->src.restore = 1; }

int gsnap_batch_set_commit_time(gsnap_batch *b, int64_t unix_ns) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC) return GSNAP_EINVAL;
    if (unix_ns < 0) return gsnap_store__err(b->db, GSNAP_EINVAL, "commit time %lld is negative", (long long)unix_ns);
    b->src.commit_ns = unix_ns ? unix_ns : 1;
    return 0;
}

static void batch_free(gsnap_batch *b) {
    if (!b) return;
    for (int i = 0; i < b->next; i++)
        if (b->ext_ops[i]->release) b->ext_ops[i]->release(b->ext_state[i]);
    if (b->db) { /* NULL: its db was closed (the batch was orphaned) */
        pthread_mutex_lock(&b->db->lock);
        b->db->batch_open = 0;
        b->db->batch = NULL;
        pthread_mutex_unlock(&b->db->lock);
    }
    free(b->ev);
    gsnap_sorted_free(&b->sorted);
    b->magic = 0;
    free(b);
}

int gsnap_batch__ext(gsnap_batch *b, const gsnap_batch_ext_ops *ops, void **state) {
    if (!state) return GSNAP_EINVAL;
    *state = NULL;
    if (!b || b->magic != GSNAP_BATCH_MAGIC || !ops) return GSNAP_EINVAL;
    if (b->failed) return gsnap_store__err(b->db, GSNAP_ESTATE, "the batch failed earlier");
    for (int i = 0; i < b->next; i++)
        if (b->ext_ops[i] == ops) *state = b->ext_state[i];
    return 0;
}

int gsnap_batch__ext_attach(gsnap_batch *b, const gsnap_batch_ext_ops *ops, void *state) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC || !ops) return GSNAP_EINVAL;
    for (int i = 0; i < b->next; i++)
        if (b->ext_ops[i] == ops) return GSNAP_EEXIST;
    if (b->next == 4) return GSNAP_EBUSY;
    b->ext_ops[b->next] = ops;
    b->ext_state[b->next++] = state;
    return 0;
}

gsnap_db *gsnap_batch__db(gsnap_batch *b) {
    return b && b->magic == GSNAP_BATCH_MAGIC ? b->db : NULL;
}

void gsnap_batch__fail(gsnap_batch *b) {
    if (b && b->magic == GSNAP_BATCH_MAGIC) b->failed = 1;
}

int gsnap_batch__adopt(gsnap_batch *b, gsnap_batch_prep *p) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC || !p) return GSNAP_EINVAL;
    if (b->failed || !b->db) return GSNAP_ESTATE;
    if (b->n) return gsnap_store__err(b->db, GSNAP_ESTATE, "adopting events into a batch that holds some");
    gsnap_event *ev = b->ev;
    size_t cap = b->cap;
    b->ev = p->ev;
    b->n = p->n;
    b->cap = p->cap;
    p->ev = ev;
    p->cap = cap;
    p->n = 0;
    gsnap_sorted_free(&b->sorted);
    b->sorted = p->sorted;
    memset(&p->sorted, 0, sizeof p->sorted);
    if (b->sorted.valid && b->sorted.keep != b->db->keep) gsnap_sorted_free(&b->sorted);
    return 0;
}

void gsnap_batch_abort(gsnap_batch *b) {
    if (b && b->magic == GSNAP_BATCH_MAGIC) batch_free(b);
}

/* ---- commit --------------------------------------------------------------- */

struct commit_ctx {
    gsnap_batch *b;
    struct gsnap_sorted s; /* sorted records and touched nodes per direction */
    uint64_t version;
};

static int put_changes(gsnap_db *db, MDB_txn *txn, uint64_t version, uint8_t dir,
                       const uint64_t *nodes, size_t n) {
    unsigned char key[9];
    gsnap_put_be64(key, version);
    key[8] = dir;
    MDB_val k = {9, key}, v = {n * 8, (void *)nodes};
    return gsnap_store__mdb_err(db, mdb_put(txn, db->changes_dbi, &k, &v, MDB_APPEND),
                                "recording touched nodes");
}

/* The batch's one run (id run_id, records of both directions stamped with
 * `version`) and its catalog entry. */
static int write_run(gsnap_db *db, MDB_txn *txn, const struct commit_ctx *c, uint64_t version, uint64_t run_id) {
    gsnap_run_writer w;
    int rc;
    if ((rc = gsnap_run__writer_init(&w, db, txn, run_id))) return rc;
    uint64_t vbits = version << 1;
    for (uint8_t dir = 0; dir < 2 && rc == 0; dir++) {
        for (size_t i = 0; i < c->s.nrec[dir] && rc == 0; i++) {
            gsnap_rec r = c->s.recs[dir][i];
            r.vop |= vbits;
            rc = gsnap_run__writer_add(&w, dir, &r);
        }
    }
    if (rc == 0) rc = gsnap_run__writer_finish(&w);
    uint64_t total = w.total;
    int has_del = w.has_del;
    gsnap_run__writer_free(&w);
    if (rc) return rc;
    struct gsnap_run_info info;
    memset(&info, 0, sizeof info);
    info.flags = has_del ? GSNAP_RUN_HAS_DELETES : 0;
    info.nrec = total;
    info.nchunks = w.chunk_no;
    info.min_ver = info.max_ver = version;
    info.nrec_dir[0] = w.nrec_dir[0];
    info.nrec_dir[1] = w.nrec_dir[1];
    unsigned char key[8];
    gsnap_put_be64(key, run_id);
    MDB_val k = {8, key}, v = {sizeof info, &info};
    return gsnap_store__mdb_err(db, mdb_put(txn, db->runs_dbi, &k, &v, MDB_APPEND), "writing run catalog");
}

/* The meta record's event counts, time range and node bound after the
 * batch's events. */
static void meta_add_events(struct gsnap_meta *m, const gsnap_batch *b, const struct gsnap_sorted *st) {
    if (b->n == 0) return;
    const struct ev_range *r = &st->rg;
    if (m->edge_records == 0) {
        m->min_t = r->tmin;
        m->max_t = r->tmax;
    }
    if (r->tmin < m->min_t) m->min_t = r->tmin;
    if (r->tmax > m->max_t) m->max_t = r->tmax;
    uint64_t hi = r->max_src > r->max_dst ? r->max_src : r->max_dst;
    if (hi != UINT64_MAX && hi + 1 > m->node_bound) m->node_bound = hi + 1;
    if (hi == UINT64_MAX) m->node_bound = UINT64_MAX;
    m->deletes += st->dels;
    m->edge_records += b->n;
}

static int commit_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct commit_ctx *c = vctx;
    struct gsnap_meta m;
    int rc = gsnap_store__read_meta(db, txn, &m);
    if (rc) return rc;
    uint64_t version = m.version + 1, run_id = m.next_run++;
    /* Versions are dense and ascending: this batch is the next one, its run
     * covers exactly this version, and version << 1 still fits the record. */
    assert(version > m.version && version < (UINT64_C(1) << 63));
    gsnap_batch *b = c->b;
    /* the batch's counts and time range, taken when it was sorted */
    uint64_t adds = 0, dels = b->n ? c->s.dels : 0;
    int64_t bmin = b->n ? c->s.rg.tmin : INT64_MAX, bmax = b->n ? c->s.rg.tmax : INT64_MIN;
    adds = b->n - dels;
    if (b->n && !b->src.restore && m.horizon_t != INT64_MIN && bmin < m.horizon_t)
        return gsnap_store__err(db, GSNAP_ERANGE, "event time %lld is before the retention horizon time %lld "
                                "(history before it was folded by compact); nothing of the batch was committed",
                                (long long)bmin, (long long)m.horizon_t);
    if (b->n == 0 && b->next == 0) { /* an empty version (load of a folded dump): no run */
        m.next_run--;
        m.version = version;
        b->src.no_events = 1;
        c->version = version;
        if ((rc = gsnap_vlog__put(db, txn, version, &b->src, b->src.adds, b->src.deletes, b->src.min_t,
                                  b->src.max_t)))
            return rc;
        return gsnap_store__put_meta(db, txn, &m);
    }
    if (b->src.have_counts) {
        adds = b->src.adds;
        dels = b->src.deletes;
        bmin = b->src.min_t;
        bmax = b->src.max_t;
    } else if (b->n == 0) { /* extensions only: an empty run */
        bmin = bmax = 0;
    }
    if ((rc = gsnap_vlog__put(db, txn, version, &b->src, adds, dels, bmin, bmax))) return rc;
    if ((rc = write_run(db, txn, c, version, run_id))) return rc;
    for (uint8_t dir = 0; dir < 2; dir++)
        if (c->s.ntouched[dir] && (rc = put_changes(db, txn, version, dir, c->s.touched[dir], c->s.ntouched[dir])))
            return rc;
    meta_add_events(&m, b, &c->s);
    m.version = version;
    c->version = version;
    if ((rc = gsnap_store__put_meta(db, txn, &m))) return rc;
    for (int i = 0; i < b->next && rc == 0; i++)
        rc = b->ext_ops[i]->commit(db, txn, version, b->ext_state[i]);
    return rc;
}

/* A node the sorted batch touched (the middle one of the first kept
 * direction's), for the warm-up query after its commit; 0 when none. */
static uint64_t warm_hint(const struct gsnap_sorted *s) {
    for (int d = 0; d < 2; d++)
        if (s->ntouched[d]) return s->touched[d][s->ntouched[d] / 2];
    return 0;
}

int gsnap_batch_commit(gsnap_batch *b, uint64_t *version) {
    if (!b || b->magic != GSNAP_BATCH_MAGIC) return GSNAP_EINVAL;
    if (!b->db) { /* its database was closed: the batch was aborted then */
        batch_free(b);
        return GSNAP_ESTATE;
    }
    gsnap_db *db = b->db;
    struct commit_ctx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    int rc;
    if (b->failed) {
        rc = gsnap_store__err(db, GSNAP_ESTATE, "the batch failed earlier and cannot be committed");
        goto out;
    }
    if (b->n == 0 && b->next == 0 && (b->src.commit_ns || b->src.restore)) { /* an empty version: timed, or a load's */
        if ((rc = gsnap_store__write(db, commit_fn, &c))) goto out;
        if (version) *version = c.version;
        goto out;
    }
    if (b->n == 0 && b->next == 0) {
        uint64_t v = 0;
        rc = gsnap_db_version(db, &v);
        if (rc == 0 && version) *version = v;
        goto out;
    }
    if (b->sorted.valid) { /* sorted before (gsnap_batch__adopt) */
        c.s = b->sorted;
        memset(&b->sorted, 0, sizeof b->sorted);
    } else if ((rc = gsnap_batch__sort_events(b->ev, b->n, db->keep, &c.s))) {
        goto out;
    }
    if ((rc = gsnap_store__write(db, commit_fn, &c))) goto out;
    if (version) *version = c.version;
    /* The batch is durable now; merging is housekeeping in its own txns. A
     * failure there loses nothing and is retried at the next commit. */
    (void)gsnap_store__compact(db, 0);
    /* verify the new runs before queries meet them, then warm the read path
     * with a node this batch touched (store/warm.c) */
    gsnap_store__warm(db, warm_hint(&c.s));
out:
    gsnap_sorted_free(&c.s);
    batch_free(b);
    return rc;
}
