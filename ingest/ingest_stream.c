/*
 * ingest/ingest_stream.c -- the streaming text ingest behind `graphsnap
 * ingest`: lines parsed by gsnap_parse_edge_line (ingest_text.c), edges
 * added to batches of batch_edges, each batch committed as one version.
 * Bad lines stop the ingest with file:line and the reason, or are counted
 * and skipped (skip_bad).
 */
#include "store/store.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the commit thread ------------------------------------------------------
 * The caller's thread reads, parses and sorts batch i+1 (into one of two
 * gsnap_batch_prep buffers) while a second thread commits batch i: one
 * version and, in the default sync mode, one fsync per batch as before. A
 * batch is handed over only after the one before it finished committing, so
 * a failure (a bad line, a read error, a failed commit) stops with every
 * batch before it committed and nothing after it. */

typedef struct {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gsnap_db *db;
    const char *name;
    gsnap_batch_prep *job; /* the batch being committed; NULL when idle */
    uint64_t first, last;  /* its source lines */
    size_t nev;
    int quit, started;
    int rc;                /* the last commit's result, collected by the parser */
    uint64_t version;
    int have_result;
    char msg[1024]; /* the failed commit's message (messages are per thread) */
} committer;

static void *committer_main(void *arg) {
    committer *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->job && !c->quit) pthread_cond_wait(&c->cv, &c->mu);
        if (!c->job) break;
        gsnap_batch_prep *p = c->job;
        pthread_mutex_unlock(&c->mu);
        gsnap_batch *b = NULL;
        uint64_t v = 0;
        int rc = gsnap_batch_begin(c->db, &b);
        if (rc == GSNAP_OK) rc = gsnap_batch__adopt(b, p);
        if (rc == GSNAP_OK) rc = gsnap_batch_set_source(b, c->name, c->first, c->last);
        if (rc == GSNAP_OK) {
            rc = gsnap_batch_commit(b, &v);
            b = NULL;
        }
        gsnap_batch_abort(b);
        pthread_mutex_lock(&c->mu);
        if (rc != GSNAP_OK) /* where in the input: the store's message names no line */
            snprintf(c->msg, sizeof c->msg, "%s: lines %llu..%llu (one batch) not committed: %s", c->name,
                     (unsigned long long)c->first, (unsigned long long)c->last, gsnap_db_errmsg(c->db));
        c->rc = rc;
        c->version = v;
        c->have_result = 1;
        c->job = NULL;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Wait for the batch in flight; account for it in the report (progress is
 * called from the caller's thread). Its result. */
static int committer_wait(committer *c, gsnap_ingest_report *rep, const gsnap_ingest_options *opts) {
    pthread_mutex_lock(&c->mu);
    while (c->job) pthread_cond_wait(&c->cv, &c->mu);
    int have = c->have_result, rc = c->rc;
    uint64_t v = c->version;
    size_t nev = c->nev;
    c->have_result = 0;
    pthread_mutex_unlock(&c->mu);
    if (have && rc != GSNAP_OK) /* the commit thread's message, in the caller's thread */
        return gsnap_store__err(c->db, rc, "%s", c->msg[0] ? c->msg : gsnap_strerror(rc));
    if (!have) return GSNAP_OK;
    rep->events += nev;
    rep->batches++;
    if (!rep->first_version) rep->first_version = v;
    rep->last_version = v;
    if (opts->progress) opts->progress(opts->progress_ctx, rep->lines, rep->events, v);
    return GSNAP_OK;
}

/* Sort p and hand it to the commit thread once the batch before it is
 * committed (its result first: a failure there stops the ingest). */
static int committer_submit(committer *c, gsnap_batch_prep *p, uint64_t first, uint64_t last,
                            gsnap_ingest_report *rep, const gsnap_ingest_options *opts) {
    int rc = gsnap_batch__prep_sort(p, c->db);
    int rc2 = committer_wait(c, rep, opts);
    if (rc2 != GSNAP_OK) return rc2;
    if (rc != GSNAP_OK) return gsnap_store__err(c->db, rc, "out of memory sorting a batch of %zu events",
                                                gsnap_batch__prep_size(p));
    pthread_mutex_lock(&c->mu);
    c->job = p;
    c->first = first;
    c->last = last;
    c->nev = gsnap_batch__prep_size(p);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return GSNAP_OK;
}

static int committer_start(committer *c, gsnap_db *db, const char *name) {
    memset(c, 0, sizeof *c);
    c->db = db;
    c->name = name;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&c->th, NULL, committer_main, c) != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        return gsnap_store__err(db, GSNAP_ENOMEM, "cannot start the ingest's commit thread");
    }
    c->started = 1;
    return GSNAP_OK;
}

/* Wait for the batch in flight (its result into rc when rc is still OK),
 * stop the thread. */
static int committer_stop(committer *c, int rc, gsnap_ingest_report *rep, const gsnap_ingest_options *opts) {
    if (!c->started) return rc;
    int rc2 = committer_wait(c, rep, opts);
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    c->started = 0;
    return rc2 != GSNAP_OK ? rc2 : rc;
}

/* The input ended (or failed): read errors, and whether any edge was found
 * at all (the last batch is committed by then). */
static int end_of_input(gsnap_db *db, const char *name, const gsnap_ingest_report *rep, const char *first_bad)
{
    int rc;
    if (rep->events == 0) {
        if (rep->bad_lines)
            rc = gsnap_store__err(db, GSNAP_EPARSE, "%s: no edges (%llu lines read, all %llu edge lines bad; first: %s)",
                                  name, (unsigned long long)rep->lines,
                                  (unsigned long long)rep->bad_lines, first_bad);
        else
            rc = gsnap_store__err(db, GSNAP_EPARSE, "%s: no edges (%llu lines read, none holds an edge)",
                                  name, (unsigned long long)rep->lines);
        return rc;
    }
    if (rep->bad_lines) /* success: leave the first skipped line's message for the caller */
        gsnap_store__err(db, GSNAP_EPARSE, "%s", first_bad);
    return GSNAP_OK;
}

/* After the last line: a read error (the partial batch is not committed),
 * else the last batch handed over; the stream's state decides. */
static int read_end(gsnap_db *db, FILE *fp, const char *name, const gsnap_ingest_report *rep) {
    if (ferror(fp))
        return gsnap_store__err(db, GSNAP_EIO, "%s: read error after line %llu: %s", name,
                                (unsigned long long)rep->lines, strerror(errno));
    if (!feof(fp)) /* getline failed without a stream error: out of memory */
        return gsnap_store__err(db, GSNAP_ENOMEM, "%s: line %llu: out of memory reading the line",
                                name, (unsigned long long)rep->lines + 1);
    return GSNAP_OK;
}

/* The input and the options in force (the defaults for NULL), or
 * GSNAP_EINVAL with a message. */
static int ingest_args(gsnap_db *db, FILE *fp, const gsnap_ingest_options **opts) {
    static const gsnap_ingest_options defaults = GSNAP_INGEST_OPTIONS_INIT;
    if (!fp)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_ingest_text: fp is NULL");
    if (!*opts)
        *opts = &defaults;
    if ((*opts)->version != GSNAP_INGEST_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_ingest_text: options version %u not supported",
                                (*opts)->version);
    return GSNAP_OK;
}

/* The two batch buffers and the commit thread. */
static int pipeline_start(gsnap_db *db, const char *name, gsnap_batch_prep *prep[2], committer *cm) {
    if (gsnap_batch__prep_new(&prep[0]) || gsnap_batch__prep_new(&prep[1]))
        return gsnap_store__err(db, GSNAP_ENOMEM, "out of memory starting the ingest");
    return committer_start(cm, db, name);
}

/* A line that failed to parse (message in perrbuf): without skip_bad the
 * ingest stops (the batches before it commit first); with it, the line is
 * counted and skipped (GSNAP_OK), the first one's message kept in first_bad
 * (480 bytes). */
static int bad_line(gsnap_db *db, committer *cm, const char *name, const char *perrbuf, char *first_bad,
                    gsnap_ingest_report *rep, const gsnap_ingest_options *opts) {
    int rc;
    if (!opts->skip_bad) {
        if ((rc = committer_stop(cm, GSNAP_OK, rep, opts)) == GSNAP_OK)
            rc = gsnap_store__err(db, GSNAP_EPARSE, "%s:%llu: %s", name, (unsigned long long)rep->lines, perrbuf);
        return rc;
    }
    if (rep->bad_lines++ == 0) {
        rep->first_bad_line = rep->lines;
        snprintf(first_bad, 480, "%s:%llu: %s", name, (unsigned long long)rep->lines, perrbuf);
    }
    return GSNAP_OK;
}

int gsnap_ingest_text(gsnap_db *db, void *fpv, const char *name,
                      const gsnap_ingest_options *opts, gsnap_ingest_report *report)
{
    FILE *fp = fpv;
    gsnap_ingest_report rep;
    gsnap_batch_prep *prep[2] = {NULL, NULL};
    committer cm;
    char *line = NULL, perrbuf[320], first_bad[480];
    size_t cap = 0, batch_edges;
    uint64_t batch_first = 0, last_event_line = 0; /* version log: the batch's line range */
    ssize_t n;
    double t0 = gsnap_now();
    int rc = GSNAP_OK, cur = 0;

    memset(&rep, 0, sizeof rep);
    memset(&cm, 0, sizeof cm);
    first_bad[0] = '\0';
    if (!db)
        return GSNAP_EINVAL;
    if ((rc = ingest_args(db, fp, &opts)) != GSNAP_OK)
        goto done;
    if (!name)
        name = "-";
    batch_edges = opts->batch_edges ? opts->batch_edges : 100000;
    if ((rc = pipeline_start(db, name, prep, &cm)) != GSNAP_OK)
        goto done;

    while ((n = getline(&line, &cap, fp)) >= 0) {
        uint64_t s, d;
        int64_t t;
        int del, prc;
        rep.lines++;
        prc = gsnap_parse_edge_line(line, (size_t)n, rep.lines, &s, &d, &t, &del,
                                    perrbuf, sizeof perrbuf);
        if (prc == GSNAP_NOTFOUND)
            continue;
        if (prc != GSNAP_OK) {
            if ((rc = bad_line(db, &cm, name, perrbuf, first_bad, &rep, opts)) != GSNAP_OK)
                goto done;
            continue;
        }
        if (gsnap_batch__prep_size(prep[cur]) == 0)
            batch_first = rep.lines;
        last_event_line = rep.lines;
        if ((prc = gsnap_batch__prep_push(prep[cur], s, d, t, del)) != GSNAP_OK) {
            if ((rc = committer_stop(&cm, GSNAP_OK, &rep, opts)) == GSNAP_OK)
                rc = gsnap_store__err(db, prc, prc == GSNAP_ERANGE ? "%s:%llu: time %lld is reserved for \"now\""
                                  : "%s:%llu: out of memory buffering the batch (time %lld)", name,
                                  (unsigned long long)rep.lines, (long long)t);
            goto done;
        }
        if (gsnap_batch__prep_size(prep[cur]) >= batch_edges) {
            if ((rc = committer_submit(&cm, prep[cur], batch_first, rep.lines, &rep, opts)) != GSNAP_OK)
                goto done;
            cur ^= 1;
        }
    }
    if ((rc = read_end(db, fp, name, &rep)) == GSNAP_OK && gsnap_batch__prep_size(prep[cur]))
        rc = committer_submit(&cm, prep[cur], batch_first, last_event_line, &rep, opts);
    if ((rc = committer_stop(&cm, rc, &rep, opts)) == GSNAP_OK)
        rc = end_of_input(db, name, &rep, first_bad);

done:
    rc = committer_stop(&cm, rc, &rep, opts);
    gsnap_batch__prep_free(prep[0]);
    gsnap_batch__prep_free(prep[1]);
    free(line);
    rep.seconds = gsnap_now() - t0;
    if (report)
        *report = rep;
    return rc;
}
