/*
 * store/check.c -- gsnap_db_check: walk every table of the store and report
 * every inconsistency, never stopping at the first one.
 */
#include "store/store_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define problem gsnap_report

/* progress of the walk: records verified of all records */
static void tick(gsnap_reporter *c, uint64_t records, int force) {
    gsnap_report_progress(c, "check store", records, 16, force);
}

static const gsnap_run *find_run(const gsnap_run *runs, size_t n, uint64_t id) {
    for (size_t i = 0; i < n; i++)
        if (runs[i].id == id) return &runs[i];
    return NULL;
}

static int rec_before(const gsnap_rec *a, const gsnap_rec *b) {
    if (a->node != b->node) return a->node < b->node;
    if (a->nbr != b->nbr) return a->nbr < b->nbr;
    if (a->t != b->t) return a->t < b->t;
    return (a->vop >> 1) <= (b->vop >> 1);
}

static void check_dense(gsnap_db *db, MDB_txn *txn, const gsnap_run *run, const struct gsnap_meta *m,
                        gsnap_reporter *c, uint64_t *seen);

/* What in record r contradicts the catalog that queries trust without
 * reading records (the samplers' ids-only path skips a run's t and vop when
 * its catalog entry has no deletes, its versions are read and at_t is at or
 * after gs.meta's max_t): NULL when nothing. */
static const char *against_catalog(const gsnap_rec *r, const gsnap_run *run, const struct gsnap_meta *m) {
    uint64_t ver = r->vop >> 1;
    if (ver < run->info.min_ver || ver > run->info.max_ver || ver > m->version)
        return "version outside the run's range";
    if ((r->vop & 1) && !(run->info.flags & GSNAP_RUN_HAS_DELETES))
        return "a delete in a run the catalog says holds none";
    if (r->t > m->max_t) return "a time after the store's latest (gs.meta max_t)";
    return NULL;
}

/* State of the walk over gs.data: the current (run, dir) group. */
typedef struct {
    gsnap_reporter *c;
    const struct gsnap_meta *m;
    uint64_t run_id, chunk_idx, bloom_misses;
    uint64_t raw_chunks, compact_chunks; /* GSC1 (formats 1-2), GSC2 (format 3) */
    int dir, have_prev;
    gsnap_rec last;
    gsnap_bloom_ref bloom;
} data_walk;

static void report_bloom_misses(data_walk *dw) {
    if (dw->bloom_misses)
        problem(dw->c, "run %llu dir %d: Bloom filter misses %llu stored nodes", (unsigned long long)dw->run_id,
                dw->dir, (unsigned long long)dw->bloom_misses);
    dw->bloom_misses = 0;
}

/* A new (run, dir) group begins: load and verify its Bloom filter. */
static void start_group(gsnap_db *db, MDB_txn *txn, data_walk *dw, uint64_t run_id, int dir) {
    gsnap_reporter *c = dw->c;
    dw->have_prev = 0;
    dw->chunk_idx = 0;
    report_bloom_misses(dw);
    if (gsnap_bloom__load(db, txn, run_id, (uint8_t)(dir & 1), &dw->bloom)) {
        problem(c, "run %llu dir %d: %s", (unsigned long long)run_id, dir, gsnap_db_errmsg(db));
        dw->bloom.blocks = NULL;
    } else if (!dw->bloom.blocks) {
        problem(c, "run %llu dir %d: no Bloom filter", (unsigned long long)run_id, dir);
    } else {
        const struct gsnap_bloom_hdr *bh = (const void *)(dw->bloom.blocks - sizeof *bh);
        struct gsnap_bloom_hdr hh;
        memcpy(&hh, bh, sizeof hh);
        if (XXH3_64bits(dw->bloom.blocks, (size_t)dw->bloom.nblocks * 64) != hh.xxh3)
            problem(c, "run %llu dir %d: Bloom filter checksum mismatch", (unsigned long long)run_id, dir);
    }
}

/* The records of one verified chunk: first node as keyed, versions inside
 * the run's, in the Bloom filter, in order. */
static void check_records(data_walk *dw, const gsnap_run *run, const unsigned char *recs, uint32_t nrec,
                          uint64_t first) {
    gsnap_reporter *c = dw->c;
    unsigned long long run_id = (unsigned long long)dw->run_id;
    for (uint32_t i = 0; i < nrec; i++) {
        gsnap_rec r;
        memcpy(&r, recs + (size_t)i * GSNAP_REC_BYTES, sizeof r);
        if (i == 0 && r.node != first)
            problem(c, "run %llu dir %d chunk %llu: key says first node %llu, records start at %llu", run_id,
                    dw->dir, (unsigned long long)dw->chunk_idx, (unsigned long long)first,
                    (unsigned long long)r.node);
        const char *bad = against_catalog(&r, run, dw->m);
        if (bad)
            problem(c, "run %llu dir %d node %llu: record (version %llu, t %lld): %s (run versions %llu..%llu)",
                    run_id, dw->dir, (unsigned long long)r.node, (unsigned long long)(r.vop >> 1),
                    (long long)r.t, bad, (unsigned long long)run->info.min_ver,
                    (unsigned long long)run->info.max_ver);
        if (!gsnap_bloom__may_contain(&dw->bloom, r.node)) dw->bloom_misses++;
        if (dw->have_prev && !rec_before(&dw->last, &r))
            problem(c, "run %llu dir %d node %llu: records out of order", run_id, dw->dir,
                    (unsigned long long)r.node);
        dw->last = r;
        dw->have_prev = 1;
    }
}

/* One chunk: header and checksum, then its records. Adds to *seen. */
static void check_chunk(data_walk *dw, const gsnap_run *run, const MDB_val *v, uint64_t first, uint64_t *seen) {
    gsnap_reporter *c = dw->c;
    unsigned long long run_id = (unsigned long long)dw->run_id, ci = (unsigned long long)dw->chunk_idx;
    struct gsnap_chunk_hdr h;
    if (v->mv_size < sizeof h) {
        problem(c, "run %llu dir %d chunk %llu: %zu bytes, shorter than its header", run_id, dw->dir, ci,
                v->mv_size);
        return;
    }
    memcpy(&h, v->mv_data, sizeof h);
    size_t plen = v->mv_size - sizeof h;
    int compact = h.magic == GSNAP_CHUNK2_MAGIC;
    if ((!compact && h.magic != GSNAP_CHUNK_MAGIC) || h.nrec == 0 ||
        (!compact && (h.nrec > GSNAP_CHUNK_RECS || plen != (size_t)h.nrec * GSNAP_REC_BYTES)) ||
        (compact && (size_t)h.nrec * 3 > plen)) {
        problem(c, "run %llu dir %d chunk %llu: malformed header (magic %08x, %u records, %zu bytes)", run_id,
                dw->dir, ci, h.magic, h.nrec, v->mv_size);
        return;
    }
    const unsigned char *recs = (const unsigned char *)v->mv_data + sizeof h;
    gsnap_rec *dec = NULL;
    if (compact) { /* decode it whole: every byte and count must check out */
        const char *why = NULL;
        if (!(dec = malloc((size_t)h.nrec * sizeof *dec))) {
            problem(c, "run %llu dir %d chunk %llu: out of memory", run_id, dw->dir, ci);
            return;
        }
        if (gsnap_codec__decode(recs, plen, h.nrec, dec, &why)) {
            problem(c, "run %llu dir %d chunk %llu (first node %llu): malformed compact records: %s", run_id,
                    dw->dir, ci, (unsigned long long)first, why);
            dw->have_prev = 0;
            free(dec);
            return;
        }
        dw->compact_chunks++;
    } else {
        dw->raw_chunks++;
    }
    if (XXH3_64bits(recs, plen) != h.xxh3) {
        problem(c, "run %llu dir %d chunk %llu (first node %llu): checksum mismatch", run_id, dw->dir, ci,
                (unsigned long long)first);
        dw->have_prev = 0;
        free(dec);
        return;
    }
    if (dec) recs = (const unsigned char *)dec;
    *seen += h.nrec;
    tick(c, h.nrec, 0);
    check_records(dw, run, recs, h.nrec, first);
    free(dec);
}

/* Walk gs.data in key order: chunks grouped by (run, dir). */
static int check_data(gsnap_db *db, MDB_txn *txn, const gsnap_run *runs, size_t nruns,
                      const struct gsnap_meta *m, gsnap_reporter *c) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    uint64_t *seen = calloc(nruns ? nruns : 1, sizeof *seen);
    int rc = mdb_cursor_open(txn, db->data_dbi, &cur);
    if (rc || !seen) {
        free(seen);
        return rc ? gsnap_store__mdb_err(db, rc, "opening data cursor") : GSNAP_ENOMEM;
    }
    data_walk dw = {c, m, 0, 0, 0, 0, 0, -1, 0, {0, 0, 0, 0}, {NULL, 0, 0}};
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size != GSNAP_DATA_KEY) {
            problem(c, "gs.data: key of %zu bytes (expected %d)", k.mv_size, GSNAP_DATA_KEY);
            continue;
        }
        const unsigned char *kp = k.mv_data;
        uint64_t run_id = gsnap_get_be64(kp), first = gsnap_get_be64(kp + 9);
        int dir = kp[8];
        if (run_id != dw.run_id || dir != dw.dir) start_group(db, txn, &dw, run_id, dir);
        dw.run_id = run_id;
        dw.dir = dir;
        dw.chunk_idx++;
        const gsnap_run *run = find_run(runs, nruns, run_id);
        if (!run) {
            problem(c, "gs.data: chunk of run %llu which is not in the run catalog",
                    (unsigned long long)run_id);
            continue;
        }
        if (dir > 1) problem(c, "run %llu: chunk with direction byte %d", (unsigned long long)run_id, dir);
        check_chunk(&dw, run, &v, first, &seen[run - runs]);
    }
    report_bloom_misses(&dw);
    mdb_cursor_close(cur);

    if (rc != MDB_NOTFOUND) {
        free(seen);
        return gsnap_store__mdb_err(db, rc, "walking gs.data");
    }
    for (size_t i = 0; i < nruns; i++) {
        if (runs[i].info.flags & GSNAP_RUN_DENSE) check_dense(db, txn, &runs[i], m, c, &seen[i]);
        if (runs[i].info.nchunks && (runs[i].info.flags & GSNAP_RUN_DENSE))
            problem(c, "run %llu: dense and chunked at once", (unsigned long long)runs[i].id);
    }
    for (size_t i = 0; i < nruns; i++)
        if (seen[i] != runs[i].info.nrec)
            problem(c, "run %llu: catalog says %llu records, chunks hold %llu", (unsigned long long)runs[i].id,
                    (unsigned long long)runs[i].info.nrec, (unsigned long long)seen[i]);
    free(seen);
    return 0;
}

/* A dense (base) run: payload checksums, record order, index monotone and
 * consistent with the records' nodes, versions inside the run's range. */
static void check_dense(gsnap_db *db, MDB_txn *txn, const gsnap_run *run, const struct gsnap_meta *m,
                        gsnap_reporter *c, uint64_t *seen) {
    for (uint8_t dir = 0; dir < 2; dir++) {
        gsnap_dense_ref d;
        int rc = gsnap_dense__load(db, txn, run->id, dir, &d, 1);
        if (rc) {
            problem(c, "%s", gsnap_db_errmsg(db));
            continue;
        }
        if (!d.recs) {
            if (run->info.nrec_dir[dir])
                problem(c, "base run %llu dir %u: records missing", (unsigned long long)run->id, dir);
            continue;
        }
        *seen += d.nrec;
        tick(c, d.nrec, 0);
        if (d.nrec != run->info.nrec_dir[dir])
            problem(c, "base run %llu dir %u: %llu records, catalog says %llu", (unsigned long long)run->id, dir,
                    (unsigned long long)d.nrec, (unsigned long long)run->info.nrec_dir[dir]);
        if (d.nidx != run->info.dense_nodes + 1)
            problem(c, "base run %llu dir %u: index of %llu entries, catalog says %llu", (unsigned long long)run->id,
                    dir, (unsigned long long)d.nidx, (unsigned long long)run->info.dense_nodes + 1);
        uint64_t prev_off = 0, bad_index = 0, bad_order = 0, bad_ver = 0, bad_body = 0, count = 0;
        uint64_t limit = d.compact ? d.plen : d.nrec;
        for (uint64_t n = 0; n < d.nidx; n++) {
            uint64_t off;
            memcpy(&off, d.idx + n * 8, 8);
            if (off < prev_off || off > limit || (n == 0 && off != 0)) bad_index++;
            prev_off = off;
        }
        /* node by node through the index: every record once, in order */
        gsnap_rec last = {0, 0, 0, 0}, r;
        for (uint64_t n = 0; !bad_index && n + 1 < d.nidx; n++) {
            gsnap_dense_it it;
            int g;
            gsnap_dense__it(&d, n, &it);
            while ((g = gsnap_dense__it_next(&it, &r)) > 0) {
                if (r.node != n) bad_index++;
                if (count++ && !rec_before(&last, &r)) bad_order++;
                if (against_catalog(&r, run, m)) bad_ver++;
                last = r;
            }
            if (g < 0) bad_body++;
        }
        if (!bad_index && !bad_body && count != d.nrec)
            problem(c, "base run %llu dir %u: the index covers %llu records, the header says %llu",
                    (unsigned long long)run->id, dir, (unsigned long long)count, (unsigned long long)d.nrec);
        if (bad_body)
            problem(c, "base run %llu dir %u: %llu nodes' records do not decode", (unsigned long long)run->id, dir,
                    (unsigned long long)bad_body);
        if (bad_index)
            problem(c, "base run %llu dir %u: index inconsistent with records in %llu places",
                    (unsigned long long)run->id, dir, (unsigned long long)bad_index);
        if (bad_order)
            problem(c, "base run %llu dir %u: %llu records out of order", (unsigned long long)run->id, dir,
                    (unsigned long long)bad_order);
        if (bad_ver)
            problem(c, "base run %llu dir %u: %llu records contradict the run catalog or gs.meta (version "
                    "outside the run's, a delete in a run marked without, or a time after max_t)",
                    (unsigned long long)run->id, dir, (unsigned long long)bad_ver);
    }
}

int gsnap_db_check(gsnap_db *db, gsnap_problem_fn report, void *ctx, uint64_t *problems) {
    gsnap_check_options o = GSNAP_CHECK_OPTIONS_INIT;
    o.report = report;
    o.report_ctx = ctx;
    return gsnap_db_check_ext(db, &o, problems);
}

/* The run catalog: damaged runs, version ranges, ids, overlaps. Returns
 * the newest version any run holds. */
static uint64_t check_run_catalog(const gsnap_read *rd, const struct gsnap_meta *m, gsnap_reporter *c) {
    uint64_t maxv = 0;
    size_t damaged = 0;
    for (size_t i = 0; i < rd->nruns; i++)
        if (rd->runs[i].info.flags & GSNAP_RUN_DAMAGED) {
            damaged++;
            problem(c, "run %llu (versions %llu..%llu): damaged, found by a merge; merges leave it alone",
                    (unsigned long long)rd->runs[i].id, (unsigned long long)rd->runs[i].info.min_ver,
                    (unsigned long long)rd->runs[i].info.max_ver);
        }
    for (size_t i = 0; i < rd->nruns; i++) {
        const struct gsnap_run_info *ri = &rd->runs[i].info;
        if (ri->min_ver > ri->max_ver || ri->min_ver == 0)
            problem(c, "run %llu: bad version range %llu..%llu", (unsigned long long)rd->runs[i].id,
                    (unsigned long long)ri->min_ver, (unsigned long long)ri->max_ver);
        if (ri->max_ver > maxv) maxv = ri->max_ver;
        if (rd->runs[i].id >= m->next_run)
            problem(c, "run %llu: id not below next_run %llu", (unsigned long long)rd->runs[i].id,
                    (unsigned long long)m->next_run);
        for (size_t j = 0; j < i; j++) {
            const struct gsnap_run_info *rj = &rd->runs[j].info;
            /* merges around a damaged run make ranges that enclose it */
            if (!damaged && !(ri->max_ver < rj->min_ver || rj->max_ver < ri->min_ver))
                problem(c, "runs %llu and %llu: overlapping versions", (unsigned long long)rd->runs[j].id,
                        (unsigned long long)rd->runs[i].id);
        }
    }
    return maxv;
}

/* Versions are dense: each is in a run's range (damaged runs still cover
 * theirs), or (a load of a folded dump) logged as a version without events.
 * vempty: how many versions the log holds as empty. */
static void check_version_gaps(gsnap_db *db, const gsnap_read *rd, const struct gsnap_meta *m, uint64_t vempty,
                               gsnap_reporter *c) {
    uint64_t gaps = 0, first_gap = 0;
    /* Walk the ranges between runs, not every version: a damaged meta
     * record can claim a version near 2^64. A stretch longer than the
     * number of versions logged as empty must hold a gap, so it is
     * counted without probing the log version by version. */
    for (uint64_t v = 1; v <= m->version && v != 0; v++) { /* v wraps to 0 past 2^64-1 */
        int in = 0;
        uint64_t next = m->version + 1; /* first run start after v */
        for (size_t i = 0; i < rd->nruns && !in; i++) {
            const struct gsnap_run_info *ri = &rd->runs[i].info;
            if (v >= ri->min_ver && v <= ri->max_ver) {
                in = 1;
                v = ri->max_ver; /* skip the run's range */
            } else if (ri->min_ver > v && ri->min_ver < next) {
                next = ri->min_ver;
            }
        }
        if (in) continue;
        if (next - v > vempty) {
            if (gaps++ == 0) first_gap = v;
            v = next - 1;
            continue;
        }
        if (!gsnap_vlog__is_empty(db, rd->txn, v) && gaps++ == 0) first_gap = v;
    }
    if (gaps)
        problem(c, "%llu versions are in no run and not logged as empty (first %llu; versions are dense)",
                (unsigned long long)gaps, (unsigned long long)first_gap);
}

int gsnap_db_check_ext(gsnap_db *db, const gsnap_check_options *opts, uint64_t *problems) {
    if (!db || db->magic != GSNAP_DB_MAGIC) return GSNAP_EINVAL;
    if (opts && (opts->version == 0 || opts->version > GSNAP_CHECK_OPTIONS_VERSION)) return GSNAP_EINVAL;
    gsnap_reporter c = {NULL, NULL, 0, NULL, NULL, 0, 0};
    if (opts) {
        c.fn = opts->report;
        c.ctx = opts->report_ctx;
        c.progress = opts->progress;
        c.pctx = opts->progress_ctx;
    }
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(db, &rd);
    if (rc == GSNAP_ECORRUPT) {
        problem(&c, "%s", gsnap_db_errmsg(db));
        if (problems) *problems = c.count;
        return 0;
    }
    if (rc) return rc;
    const struct gsnap_meta *m = &rd->meta;
    if (m->format < GSNAP_STORE_FORMAT_OLDEST || m->format > GSNAP_STORE_FORMAT)
        problem(&c, "gs.meta: format %u", m->format);
    if (m->horizon > m->version) /* compact keeps the newest queryable; load checks the dump's */
        problem(&c, "gs.meta: retention horizon %llu is past the newest version %llu (every query is refused)",
                (unsigned long long)m->horizon, (unsigned long long)m->version);
    uint64_t maxv = check_run_catalog(rd, m, &c);
    /* Newest versions may be empty ones (checked with the gaps below). */
    if (maxv > m->version || (maxv < m->version && !gsnap_vlog__is_empty(db, rd->txn, m->version)))
        problem(&c, "gs.meta: latest version %llu, runs end at %llu", (unsigned long long)m->version,
                (unsigned long long)maxv);
    uint64_t vrecs = 0, vempty = 0, vbad = 0;
    if ((rc = gsnap_vlog__scan(db, rd->txn, m->version, &vrecs, &vempty, &vbad))) {
        gsnap_read_end(rd);
        return rc;
    }
    if (vbad) problem(&c, "gs.vlog: record of version %llu is malformed, fails its checksum or is past the "
                      "newest version", (unsigned long long)vbad);
    check_version_gaps(db, rd, m, vempty, &c);
    for (size_t i = 0; i < rd->nruns; i++) c.total += rd->runs[i].info.nrec;
    tick(&c, 0, 1);
    rc = check_data(db, rd->txn, rd->runs, rd->nruns, m, &c);
    if (!rc) tick(&c, 0, 1);
    gsnap_read_end(rd);
    if (problems) *problems = c.count;
    return rc;
}
