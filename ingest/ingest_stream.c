/*
 * ingest/ingest_stream.c -- the streaming text ingest behind `graphsnap
 * ingest`: lines parsed by gsnap_parse_edge_line (ingest_text.c), edges
 * added to batches of batch_edges, each batch committed as one version.
 * Bad lines stop the ingest with file:line and the reason, or are counted
 * and skipped (skip_bad).
 */
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- streaming ingest ---------------------------------------------------- */

/* Commit the open batch, account for it in the report, call progress. */
static int commit_batch(gsnap_batch **b, size_t *in_batch, gsnap_ingest_report *rep,
                        const gsnap_ingest_options *opts) {
    uint64_t v = 0;
    int rc = gsnap_batch_commit(*b, &v);
    *b = NULL;
    if (rc != GSNAP_OK)
        return rc;
    rep->events += *in_batch;
    *in_batch = 0;
    rep->batches++;
    if (!rep->first_version)
        rep->first_version = v;
    rep->last_version = v;
    if (opts->progress)
        opts->progress(opts->progress_ctx, rep->lines, rep->events, v);
    return GSNAP_OK;
}

/* The input ended (or failed): read errors, the last batch, and whether
 * any edge was found at all. */
static int end_of_input(gsnap_db *db, FILE *fp, const char *name, gsnap_batch **b, size_t *in_batch,
                        gsnap_ingest_report *rep, const gsnap_ingest_options *opts, const char *first_bad)
{
    int rc;
    if (ferror(fp)) {
        rc = gsnap_store__err(db, GSNAP_EIO, "%s: read error after line %llu: %s", name,
                              (unsigned long long)rep->lines, strerror(errno));
        return rc;
    }
    if (!feof(fp)) { /* getline failed without a stream error: out of memory */
        rc = gsnap_store__err(db, GSNAP_ENOMEM, "%s: line %llu: out of memory reading the line",
                              name, (unsigned long long)rep->lines + 1);
        return rc;
    }
    if (*b && (rc = commit_batch(b, in_batch, rep, opts)) != GSNAP_OK)
        return rc;
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

/* The first edge line fails to parse: if it starts with a letter (after
 * blanks), append to its message that it looks like a header row. */
static void hint_header_row(const char *lp, size_t n, char *perrbuf, size_t size) {
    size_t k = 0;
    while (k < n && (lp[k] == ' ' || lp[k] == '\t')) k++;
    if (k < n && ((lp[k] >= 'A' && lp[k] <= 'Z') || (lp[k] >= 'a' && lp[k] <= 'z'))) {
        size_t l = strlen(perrbuf);
        snprintf(perrbuf + l, size - l, " (this looks like a header row: remove it or "
                 "start it with '#')");
    }
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

int gsnap_ingest_text(gsnap_db *db, void *fpv, const char *name,
                      const gsnap_ingest_options *opts, gsnap_ingest_report *report)
{
    FILE *fp = fpv;
    gsnap_ingest_report rep;
    gsnap_batch *b = NULL;
    char *line = NULL, perrbuf[320], first_bad[480];
    size_t cap = 0, batch_edges, in_batch = 0;
    uint64_t batch_first = 0, last_event_line = 0; /* version log: the batch's line range */
    ssize_t n;
    double t0 = gsnap_now();
    int rc = GSNAP_OK;

    memset(&rep, 0, sizeof rep);
    first_bad[0] = '\0';
    if (!db)
        return GSNAP_EINVAL;
    if ((rc = ingest_args(db, fp, &opts)) != GSNAP_OK)
        goto done;
    if (!name)
        name = "-";
    batch_edges = opts->batch_edges ? opts->batch_edges : 100000;

    while ((n = getline(&line, &cap, fp)) >= 0) {
        uint64_t s, d;
        int64_t t;
        int del, prc;
        rep.lines++;
        char *lp = line;
        if (rep.lines == 1 && n >= 3 && memcmp(lp, "\xEF\xBB\xBF", 3) == 0) {
            lp += 3; /* a UTF-8 byte order mark (spreadsheet exports) */
            n -= 3;
        }
        prc = gsnap_parse_edge_line(lp, (size_t)n, rep.lines, &s, &d, &t, &del,
                                    perrbuf, sizeof perrbuf);
        if (prc == GSNAP_NOTFOUND)
            continue;
        if (prc != GSNAP_OK) {
            if (rep.events == 0 && rep.bad_lines == 0 && (b == NULL || gsnap_batch_size(b) == 0))
                hint_header_row(lp, (size_t)n, perrbuf, sizeof perrbuf); /* the first edge line */
            if (!opts->skip_bad) {
                rc = gsnap_store__err(db, GSNAP_EPARSE, "%s:%llu: %s", name,
                                      (unsigned long long)rep.lines, perrbuf);
                goto done;
            }
            if (rep.bad_lines++ == 0) {
                rep.first_bad_line = rep.lines;
                snprintf(first_bad, sizeof first_bad, "%s:%llu: %s", name,
                         (unsigned long long)rep.lines, perrbuf);
            }
            continue;
        }
        if (!b && (rc = gsnap_batch_begin(db, &b)) != GSNAP_OK)
            goto done;
        if (in_batch == 0)
            batch_first = rep.lines;
        last_event_line = rep.lines;
        rc = del ? gsnap_batch_delete(b, s, d, t) : gsnap_batch_add(b, s, d, t);
        if (rc != GSNAP_OK)
            goto done;
        if (++in_batch >= batch_edges) {
            gsnap_batch_set_source(b, name, batch_first, rep.lines);
            rc = commit_batch(&b, &in_batch, &rep, opts);
            if (rc != GSNAP_OK)
                goto done;
        }
    }
    if (b)
        gsnap_batch_set_source(b, name, batch_first, last_event_line);
    rc = end_of_input(db, fp, name, &b, &in_batch, &rep, opts, first_bad);

done:
    gsnap_batch_abort(b);
    free(line);
    rep.seconds = gsnap_now() - t0;
    if (report)
        *report = rep;
    return rc;
}
