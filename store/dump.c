/*
 * store/dump.c -- `graphsnap dump` / `load`: the portable text format
 * ("graphsnap dump format 2", docs/format.md), without the attribute lines:
 * those come from the extension hooks (store/store.h) that the public
 * gsnap_db_dump / gsnap_db_load in features/dump_attr.c pass.
 *
 * Dump reads one consistent view: the events of the requested versions are
 * gathered from every run of one direction (OUT when kept, else IN), put in
 * version order with a stable counting sort (a run's records are already in
 * (node, neighbour, time) order with ties in commit order, and runs hold
 * disjoint versions), and written with each version's log record. The order
 * depends only on the stored events, so dump -> load -> dump gives the same
 * bytes. Load (load.c) commits every dumped version as one batch with the
 * same number, commit time and source.
 */
#include "store/dump_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Source names are written with %XX escapes for bytes that are not
 * printable ASCII, '%' and spaces, so a line splits on single spaces. */
static void put_escaped(FILE *f, const char *s) {
    if (!*s) { fputs("%", f); return; } /* never empty */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7f || *p == '%') fprintf(f, "%%%02X", *p);
        else fputc(*p, f);
    }
}

/* The versions to dump, checked against the database's (and its horizon). */
static int dump_range(gsnap_db *db, const struct gsnap_meta *m, const gsnap_dump_options *opts, uint64_t *from_out,
                      uint64_t *to_out) {
    uint64_t from = opts->from ? opts->from : 1, to = opts->to;
    if (to == GSNAP_VERSION_LATEST) to = m->version;
    if (m->version == 0 && from == 1 && to == 0) { from = 1; to = 0; }
    else if (from > to || to > m->version)
        return gsnap_store__err(db, GSNAP_ERANGE, "--versions %llu..%llu: the database has versions 1..%llu",
                                (unsigned long long)from, (unsigned long long)to, (unsigned long long)m->version);
    if (from > 1 && m->horizon > 1 && from < m->horizon)
        return gsnap_store__err(db, GSNAP_ERANGE, "version %llu is before the retention horizon %llu (dump all "
                                "versions, or from the horizon on)", (unsigned long long)from,
                                (unsigned long long)m->horizon);
    /* Versions before the horizon are folded: alone they answer no query,
     * and their dump would carry a horizon past its last version. */
    if (m->horizon > 1 && from <= to && to < m->horizon)
        return gsnap_store__err(db, GSNAP_ERANGE, "versions %llu..%llu end before the retention horizon %llu (the "
                                "versions before it are folded: dump through version %llu at least)",
                                (unsigned long long)from, (unsigned long long)to, (unsigned long long)m->horizon,
                                (unsigned long long)m->horizon);
    *from_out = from;
    *to_out = to;
    return 0;
}

/* The records of versions from..to of direction `dir`, from every run that
 * holds any (in run order; the caller sorts them by version). */
static int gather_records(gsnap_db *db, gsnap_read *rd, uint8_t dir, uint64_t from, uint64_t to,
                          const gsnap_dump_options *opts, gsnap_rec **recs, size_t *nrec_out) {
    size_t nrec = 0, cap = 0;
    int rc = 0;
    gsnap_run_reader rr;
    memset(&rr, 0, sizeof rr);
    for (size_t i = 0; i < rd->nruns && to >= from; i++) {
        const gsnap_run *run = &rd->runs[i];
        if (run->info.max_ver < from || run->info.min_ver > to) continue;
        if ((rc = gsnap_run__reader_open(&rr, db, rd->txn, run, dir, 0, 1, 0))) goto out;
        while (!rr.done) {
            gsnap_rec r;
            gsnap_run__reader_peek(&rr, &r);
            uint64_t v = r.vop >> 1;
            if (v >= from && v <= to) {
                if (nrec == cap && (rc = gsnap_vec_reserve((void **)recs, &cap, nrec + 1, sizeof **recs))) goto out;
                (*recs)[nrec++] = r;
            }
            if ((rc = gsnap_run__reader_next(db, &rr))) goto out;
        }
        gsnap_run__reader_close(&rr);
        if (opts->progress) opts->progress(opts->progress_ctx, "read", i + 1, rd->nruns);
    }
out:
    gsnap_run__reader_free(&rr);
    *nrec_out = nrec;
    return rc;
}

/* Stable counting sort of recs by version into *sorted; (*cnt)[v - from]
 * becomes the end of version v's records. */
static int sort_by_version(const gsnap_rec *recs, size_t nrec, uint64_t from, size_t nver, gsnap_rec **sorted,
                           uint64_t **cnt_out) {
    uint64_t *cnt = calloc(nver + 1, sizeof *cnt);
    *cnt_out = cnt;
    if (!cnt || (nrec && !(*sorted = malloc(nrec * sizeof **sorted)))) return GSNAP_ENOMEM;
    for (size_t i = 0; i < nrec; i++) cnt[(recs[i].vop >> 1) - from + 1]++;
    for (size_t v = 1; v <= nver; v++) cnt[v] += cnt[v - 1];
    for (size_t i = 0; i < nrec; i++) (*sorted)[cnt[(recs[i].vop >> 1) - from]++] = recs[i];
    return 0;
}

static void write_header(FILE *f, const gsnap_db *db, const struct gsnap_meta *m, uint64_t from, uint64_t to) {
    fprintf(f, "graphsnap-dump %d\n", DUMP_FORMAT);
    fprintf(f, "store-format %u\n", (unsigned)m->format);
    fprintf(f, "keep %s\n", gsnap_dump__keep_name(db->keep));
    fprintf(f, "versions %llu %llu\n", (unsigned long long)from, (unsigned long long)to);
    if (m->horizon > 1 || m->horizon_t != INT64_MIN) {
        fprintf(f, "horizon %llu ", (unsigned long long)m->horizon);
        if (m->horizon_t == INT64_MIN) fputs("-\n", f);
        else fprintf(f, "%lld\n", (long long)m->horizon_t);
    }
}

/* A version's 'v' line and its event lines recs[0..n). */
static void write_version(FILE *f, const gsnap_version_info *vi, const gsnap_rec *recs, size_t n, uint8_t dir) {
    if (vi->known) {
        fprintf(f, "v %llu %lld %llu %llu %lld %lld %llu %llu ", (unsigned long long)vi->version,
                (long long)vi->commit_ns, (unsigned long long)vi->adds, (unsigned long long)vi->deletes,
                (long long)vi->min_t, (long long)vi->max_t, (unsigned long long)vi->first_line,
                (unsigned long long)vi->last_line);
        put_escaped(f, strcmp(vi->source, "api") == 0 && vi->first_line == 0 ? "" : vi->source);
        fputc('\n', f);
    } else {
        fprintf(f, "v %llu unknown\n", (unsigned long long)vi->version);
    }
    for (size_t i = 0; i < n; i++) {
        const gsnap_rec *r = &recs[i];
        uint64_t src = dir == GSNAP_DIR_OUT ? r->node : r->nbr, dst = dir == GSNAP_DIR_OUT ? r->nbr : r->node;
        fprintf(f, "%c %llu %llu %lld\n", (r->vop & 1) ? 'd' : 'a', (unsigned long long)src,
                (unsigned long long)dst, (long long)r->t);
    }
}

/* The 'snapshot' lines of the complete snapshots in from..to that can be
 * rebuilt (not before the retention horizon); returns how many. */
static uint64_t write_snapshots(FILE *f, const struct gsnap_meta *m, const gsnap_snapshot_info *snaps,
                                size_t nsnaps, uint64_t from, uint64_t to) {
    uint64_t nsnap_out = 0;
    for (size_t i = 0; i < nsnaps; i++) {
        const gsnap_snapshot_info *s = &snaps[i];
        if (!s->complete || s->at_version < from || s->at_version > to) continue;
        /* before the retention horizon: cannot be rebuilt from the events */
        if ((m->horizon > 1 && s->at_version < m->horizon) || (m->horizon_t != INT64_MIN && s->at_t < m->horizon_t))
            continue;
        fprintf(f, "snapshot %s %s %u ", s->name, s->dir == GSNAP_DIR_OUT ? "out" : "in", s->hops);
        for (unsigned h = 0; h < s->hops; h++) fprintf(f, "%s%u", h ? "," : "", (unsigned)s->fanouts[h]);
        fprintf(f, " %.17g ", s->alpha);
        if (s->at_t == GSNAP_TIME_MAX) fputs("now", f);
        else fprintf(f, "%lld", (long long)s->at_t);
        fprintf(f, " %llu %llu %s ", (unsigned long long)s->at_version, (unsigned long long)s->seed,
                s->hop_sets == GSNAP_HOPSETS_SAMPLED ? "sampled" : "exact");
        for (unsigned h = 0; h < s->hops; h++) fprintf(f, "%s%u", h ? "," : "", (unsigned)s->caps[h]);
        fputc('\n', f);
        nsnap_out++;
    }
    return nsnap_out;
}

int gsnap_store__dump(gsnap_db *db, FILE *f, const gsnap_dump_options *opts, const gsnap_dump_ext_ops *ext) {
    static const gsnap_dump_options defaults = GSNAP_DUMP_OPTIONS_INIT;
    void *xstate = NULL;
    uint64_t xlines = 0;
    if (!db || db->magic != GSNAP_DB_MAGIC || !f) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (opts->version != GSNAP_DUMP_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_db_dump: options version %u not supported", opts->version);
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(db, &rd);
    if (rc) return rc;
    const struct gsnap_meta *m = &rd->meta;
    uint64_t from = 1, to = 0;
    gsnap_rec *recs = NULL, *sorted = NULL;
    uint64_t *cnt = NULL;
    gsnap_version_info *log = NULL;
    gsnap_snapshot_info *snaps = NULL;
    size_t nrec = 0, nlog = 0, nsnaps = 0;
    if ((rc = dump_range(db, m, opts, &from, &to))) goto out;
    uint8_t dir = (db->keep & GSNAP_KEEP_OUT) ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
    if ((rc = gather_records(db, rd, dir, from, to, opts, &recs, &nrec))) goto out;
    size_t nver = to >= from ? (size_t)(to - from + 1) : 0;
    if ((rc = sort_by_version(recs, nrec, from, nver, &sorted, &cnt))) goto out;
    if (nver && (rc = gsnap_db_log(db, rd, from, to, &log, &nlog))) goto out;
    if (!opts->no_snapshots && (rc = gsnap_snapshot_list(db, &snaps, &nsnaps))) goto out;

    write_header(f, db, m, from, to);
    if (ext && (rc = ext->dump_begin(db, rd, from, to, f, &xstate))) goto out;
    size_t pos = 0;
    for (size_t i = 0; i < nver; i++) {
        write_version(f, &log[i], sorted + pos, cnt[i] - pos, dir);
        pos = cnt[i];
        if (ext && (rc = ext->dump_version(xstate, f, log[i].version, &xlines))) goto out;
        if (opts->progress && (i % 256 == 255 || i + 1 == nver))
            opts->progress(opts->progress_ctx, "write", i + 1, nver);
    }
    uint64_t nsnap_out = write_snapshots(f, m, snaps, nsnaps, from, to);
    fprintf(f, "end %llu %llu %llu %llu\n", (unsigned long long)nver, (unsigned long long)nrec,
            (unsigned long long)nsnap_out, (unsigned long long)xlines);
    if (fflush(f) != 0 || ferror(f))
        rc = gsnap_store__err(db, GSNAP_EIO, "writing the output failed: %s", strerror(errno));
out:
    if (ext && ext->dump_end) ext->dump_end(xstate);
    gsnap_read_end(rd);
    free(recs);
    free(sorted);
    free(cnt);
    free(log);
    free(snaps);
    return rc;
}
