/*
 * store/merge.c -- the k-way merge of runs' records, one node at a time
 * (compact.c picks the runs and writes the catalog).
 *
 * Per direction: the smallest node among the inputs' current records; every
 * input holding it hands over all its records of that node at once
 * (gsnap_run__reader_take_node: one tight decode loop per group or dense
 * body); one input's records go out as they are, two or more are merged by
 * (nbr, t, version) in pairs; the node's records go to the writer as one
 * group (gsnap_run__writer_group: encoded straight into the chunk or the
 * dense body). The comparisons per record are those of the merge inside a
 * node only; the choice among inputs is made once per node.
 *
 * gsnap_merge__plain is the record-at-a-time merge this replaced, kept as
 * the reference the tests compare against (test_merge).
 */
#include "store/store_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsnap_merge__use_plain = 0;

/* Order of records inside a run: (node, nbr, t, version). */
static int rec_less(const gsnap_rec *a, const gsnap_rec *b) {
    if (a->node != b->node) return a->node < b->node;
    if (a->nbr != b->nbr) return a->nbr < b->nbr;
    if (a->t != b->t) return a->t < b->t;
    return (a->vop >> 1) < (b->vop >> 1);
}

static int is_damage(int rc) { return rc == GSNAP_ECHECKSUM || rc == GSNAP_ECORRUPT; }

/* Open every input's reader on dir (from node 0, verified, copied). */
static int open_inputs(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                       uint8_t dir, uint64_t *damaged) {
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if ((rc = gsnap_run__reader_open(&rr[i], db, txn, &in[i], dir, 0, 1, 1)) && is_damage(rc))
            *damaged = in[i].id;
    return rc;
}

int gsnap_merge__plain(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                       gsnap_run_writer *w, uint8_t dir, uint64_t *damaged) {
    gsnap_rec *head = malloc((n ? n : 1) * sizeof *head);
    if (!head) return GSNAP_ENOMEM;
    int rc = open_inputs(db, txn, in, n, rr, dir, damaged);
    for (size_t i = 0; i < n; i++)
        if (!rr[i].done) gsnap_run__reader_peek(&rr[i], &head[i]);
    while (rc == 0) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (!rr[i].done && (best == n || rec_less(&head[i], &head[best]))) best = i;
        if (best == n) break;
        if ((rc = gsnap_run__writer_add(w, dir, &head[best]))) break;
        if ((rc = gsnap_run__reader_next(db, &rr[best]))) {
            if (is_damage(rc)) *damaged = in[best].id;
            break;
        }
        if (!rr[best].done) gsnap_run__reader_peek(&rr[best], &head[best]);
    }
    for (size_t i = 0; i < n; i++) gsnap_run__reader_close(&rr[i]);
    free(head);
    return rc;
}

typedef struct {
    gsnap_rec *v;
    size_t n, cap;
} rec_list;

/* a[0..na) and b[0..nb), each sorted, into out (room for na + nb). */
static void merge2(const gsnap_rec *a, size_t na, const gsnap_rec *b, size_t nb, gsnap_rec *out) {
    size_t i = 0, j = 0, k = 0;
    /* Neighbours of two runs interleave at random: no branch on the order
     * (one node, so (nbr, t, version) decides). */
    while (i < na && j < nb) {
        const gsnap_rec *x = &a[i], *y = &b[j];
        int lt = (y->nbr < x->nbr) | ((y->nbr == x->nbr) & ((y->t < x->t) | ((y->t == x->t) & ((y->vop >> 1) < (x->vop >> 1)))));
        out[k++] = *(lt ? y : x);
        j += (size_t)lt;
        i += (size_t)!lt;
    }
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}

/* The node's lists l[src[0..k)] merged, shortest first (each merge copies
 * what was merged before it): a pointer to the records (one of the lists,
 * or acc) and their count in *m. */
static const gsnap_rec *merge_node(rec_list *l, size_t *src, size_t k, rec_list acc[2], size_t *m, int *rc) {
    for (size_t q = 1; q < k; q++) /* k is small: insertion sort by length */
        for (size_t p = q; p > 0 && l[src[p]].n < l[src[p - 1]].n; p--) {
            size_t x = src[p];
            src[p] = src[p - 1];
            src[p - 1] = x;
        }
    const gsnap_rec *cur = l[src[0]].v;
    size_t nc = l[src[0]].n;
    int a = 0;
    for (size_t q = 1; q < k; q++) {
        size_t need = nc + l[src[q]].n;
        if (need > acc[a].cap && gsnap_vec_reserve((void **)&acc[a].v, &acc[a].cap, need, sizeof *acc[a].v)) {
            *rc = GSNAP_ENOMEM;
            return NULL;
        }
        merge2(cur, nc, l[src[q]].v, l[src[q]].n, acc[a].v);
        cur = acc[a].v;
        nc = need;
        a ^= 1;
    }
    *m = nc;
    return cur;
}

int gsnap_merge__dir(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                     gsnap_run_writer *w, uint8_t dir, uint64_t *damaged) {
    if (gsnap_merge__use_plain) return gsnap_merge__plain(db, txn, in, n, rr, w, dir, damaged);
    rec_list *l = calloc(n ? n : 1, sizeof *l), acc[2];
    size_t *src = malloc((n ? n : 1) * sizeof *src);
    memset(acc, 0, sizeof acc);
    int rc = !l || !src ? GSNAP_ENOMEM : open_inputs(db, txn, in, n, rr, dir, damaged);
    while (rc == 0) {
        size_t k = 0;
        uint64_t node = UINT64_MAX;
        int any = 0;
        for (size_t i = 0; i < n; i++)
            if (!rr[i].done && (!any || rr[i].rec.node < node)) {
                node = rr[i].rec.node;
                any = 1;
            }
        if (!any) break;
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (rr[i].done || rr[i].rec.node != node) continue;
            l[i].n = 0;
            if ((rc = gsnap_run__reader_take_node(db, &rr[i], &l[i].v, &l[i].n, &l[i].cap)) && is_damage(rc))
                *damaged = in[i].id;
            src[k++] = i;
        }
        if (rc) break;
        size_t m = 0;
        const gsnap_rec *recs = merge_node(l, src, k, acc, &m, &rc);
        if (recs) rc = gsnap_run__writer_group(w, dir, recs, m);
    }
    for (size_t i = 0; i < n; i++) gsnap_run__reader_close(&rr[i]);
    for (size_t i = 0; l && i < n; i++) free(l[i].v);
    free(acc[0].v);
    free(acc[1].v);
    free(l);
    free(src);
    return rc;
}

/* ---- both directions, the second on a thread of its own --------------------
 * Direction 1 is merged on a second thread, in a read txn of its own: the
 * inputs are committed runs (the merge's write txn has changed nothing yet
 * and holds LMDB's writer lock, so that read txn sees exactly what the
 * write txn sees). Its writer touches no LMDB state: a dense base keeps its
 * values in memory until the direction is closed (dense.c), a chunked run
 * keeps its chunks (defer, run_writer.c). The main thread merges direction
 * 0 in the write txn meanwhile, finishes it, joins, and puts direction 1's
 * values after it (key order). The dense writer's count check (records
 * written = the inputs' count) still guards each direction.
 * The thread's read txn is begun by the calling thread (MDB_NOTLS lets the
 * other thread use it), so a merge never fails for want of a reader slot:
 * when none is free it runs both directions here, as a plain merge does.
 * Direction 1's output is held in memory (about 12 bytes a record) until
 * it is put; above GSNAP_MERGE_PAR_MAX records the merge stays on one
 * thread, where LMDB can spill dirty pages, so the extra memory is bounded. */

#define GSNAP_MERGE_PAR_MAX (1u << 24)

typedef struct {
    gsnap_db *db;
    const gsnap_run *in;
    size_t n;
    MDB_txn *rtxn;      /* begun by the caller (its map hold too), ended by it after the join */
    gsnap_run_writer w; /* direction 1 */
    uint64_t damaged;
    int rc;
    char msg[512];
} dir1_job;

static void *dir1_main(void *arg) {
    dir1_job *j = arg;
    gsnap_run_reader *rr = calloc(j->n ? j->n : 1, sizeof *rr);
    j->rc = rr ? 0 : GSNAP_ENOMEM;
    if (j->rc == 0) {
        j->rc = gsnap_merge__dir(j->db, j->rtxn, j->in, j->n, rr, &j->w, 1, &j->damaged);
        if (j->rc == 0 && !j->w.dense) j->rc = gsnap_run__writer_end_dir(&j->w); /* deferred: memory only */
    }
    for (size_t i = 0; rr && i < j->n; i++) gsnap_run__reader_free(&rr[i]);
    free(rr);
    if (j->rc) snprintf(j->msg, sizeof j->msg, "%s", gsnap_db_errmsg(j->db)); /* messages are per thread */
    return NULL;
}

/* Direction 1's writer for the job: dense, a copy of w's set-up with its
 * own index and buffers; chunked, a deferred writer of the same run. */
static int dir1_writer(gsnap_db *db, MDB_txn *txn, gsnap_run_writer *w, gsnap_run_writer *w1) {
    if (!w->dense) {
        int rc = gsnap_run__writer_init(w1, db, txn, w->run_id);
        w1->defer = 1;
        return rc;
    }
    *w1 = *w;
    w1->cur = NULL;
    w1->buf = w1->ebuf = w1->gbuf = w1->dbuf = w1->arena = NULL;
    w1->nodes = NULL;
    w1->dnode = NULL;
    w1->dcap = w1->dncap = w1->dnn = 0;
    w1->didx = malloc((w->dense_nodes + 1) * sizeof *w1->didx);
    return w1->didx ? 0 : GSNAP_ENOMEM;
}

static int both_serial(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                       gsnap_run_writer *w, uint64_t *damaged) {
    int rc = 0;
    for (uint8_t dir = 0; dir < 2 && rc == 0; dir++) rc = gsnap_merge__dir(db, txn, in, n, rr, w, dir, damaged);
    return rc;
}

int gsnap_merge__dirs(gsnap_db *db, MDB_txn *txn, const gsnap_run *in, size_t n, gsnap_run_reader *rr,
                      gsnap_run_writer *w, uint64_t *damaged) {
    uint64_t in1 = 0;
    for (size_t i = 0; i < n; i++) in1 += in[i].info.nrec_dir[1];
    if (gsnap_merge__use_plain || in1 == 0 || in1 > GSNAP_MERGE_PAR_MAX || (w->dense ? !w->dcomp : !w->compact))
        return both_serial(db, txn, in, n, rr, w, damaged);
    dir1_job *j = calloc(1, sizeof *j);
    if (!j) return GSNAP_ENOMEM;
    j->db = db;
    j->in = in;
    j->n = n;
    if (gsnap_store__txn_begin(db, MDB_RDONLY, &j->rtxn)) { /* no reader slot free: one thread */
        free(j);
        return both_serial(db, txn, in, n, rr, w, damaged);
    }
    pthread_t th;
    int rc = dir1_writer(db, txn, w, &j->w);
    if (rc || pthread_create(&th, NULL, dir1_main, j) != 0) { /* one thread after all */
        gsnap_run__writer_free(&j->w);
        mdb_txn_abort(j->rtxn);
        gsnap_store__map_release(db);
        free(j);
        return rc ? rc : both_serial(db, txn, in, n, rr, w, damaged);
    }
    rc = gsnap_merge__dir(db, txn, in, n, rr, w, 0, damaged);
    if (rc == 0) rc = gsnap_run__writer_end_dir(w); /* direction 0's values first (key order) */
    pthread_join(th, NULL);
    mdb_txn_abort(j->rtxn);
    gsnap_store__map_release(db);
    if (rc == 0 && j->rc) {
        if (j->damaged) *damaged = j->damaged;
        rc = gsnap_store__err(db, j->rc, "%s", j->msg[0] ? j->msg : gsnap_strerror(j->rc));
    }
    if (rc == 0) {
        j->w.txn = txn;
        rc = j->w.dense ? gsnap_dense__close_dir(&j->w) : gsnap_run__writer_replay(&j->w, txn);
        w->total += j->w.total;
        w->nrec_dir[1] += j->w.nrec_dir[1];
        w->has_del |= j->w.has_del;
        w->chunk_no += j->w.chunk_no;
    }
    gsnap_run__writer_free(&j->w);
    free(j);
    return rc;
}
