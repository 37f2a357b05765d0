/*
 * sampler/temporal.c -- the temporal neighbour sampler: an in-memory T-CSR
 * built from one read view of the store, extended from the per-version
 * change log, and sampled per (node, t) root (uniform, recent, window),
 * layer by layer as TGL does. This file: options, open, refresh, close and
 * the random roots; the T-CSR itself is in tindex.c, the sampling in
 * tsample.c. See temporal_int.h for the invariants and docs/temporal.md for
 * the design and its numbers.
 */
#include "sampler/temporal_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsnap_ts__err(gsnap_tsampler *ts, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ts->err, sizeof ts->err, fmt, ap);
    va_end(ap);
    return code;
}

int gsnap_ts__store_err(gsnap_tsampler *ts, int code, const char *what) {
    const char *m = gsnap_db_errmsg(ts->db);
    return gsnap_ts__err(ts, code, "%s: %s", what, m && *m ? m : gsnap_strerror(code));
}

/* ---- open / refresh / close ------------------------------------------------ */

static int check_opts(gsnap_tsampler *ts, const gsnap_tsampler_options *o) {
    if (o->version != GSNAP_TSAMPLER_OPTIONS_VERSION)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "options version %u, expected %u", o->version,
                             GSNAP_TSAMPLER_OPTIONS_VERSION);
    if (o->dir != GSNAP_DIR_IN && o->dir != GSNAP_DIR_OUT)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "dir %d is neither IN nor OUT", (int)o->dir);
    if ((unsigned)o->strategy > GSNAP_TS_WINDOW)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "strategy %d is not uniform (0), recent (1) or window (2)",
                             (int)o->strategy);
    if (o->strategy == GSNAP_TS_WINDOW && o->window <= 0)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "window %lld: must be > 0 for the window strategy",
                             (long long)o->window);
    if (o->layers < 1 || o->layers > GSNAP_TS_MAX_LAYERS)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "layers %u: must be 1..%d", o->layers, GSNAP_TS_MAX_LAYERS);
    for (unsigned l = 0; l < o->layers; l++)
        if (o->fanouts[l] < 1 || o->fanouts[l] > GSNAP_TS_MAX_FANOUT)
            return gsnap_ts__err(ts, GSNAP_EINVAL, "fanouts[%u] = %u: must be 1..%u", l, o->fanouts[l],
                                 GSNAP_TS_MAX_FANOUT);
    return 0;
}

int gsnap_tsampler_open(gsnap_db *db, const gsnap_tsampler_options *opts, gsnap_tsampler **out) {
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!db || !opts) return GSNAP_EINVAL;
    gsnap_tsampler *ts = calloc(1, sizeof *ts);
    if (!ts) return GSNAP_ENOMEM;
    ts->magic = GSNAP_TS_MAGIC;
    ts->db = db;
    int rc = check_opts(ts, opts);
    if (rc) {
        gsnap_store__err(db, rc, "temporal sampler: %s", ts->err);
        gsnap_tsampler_close(ts);
        return rc;
    }
    ts->o = *opts;
    gsnap_read *rd = NULL;
    if ((rc = gsnap_read_begin(db, &rd))) {
        gsnap_ts__store_err(ts, rc, "opening a read view");
        goto fail;
    }
    uint64_t latest = gsnap_read_version(rd);
    ts->version = opts->as_of == GSNAP_VERSION_LATEST || opts->as_of > latest ? latest : opts->as_of;
    if (opts->as_of != GSNAP_VERSION_LATEST && opts->as_of > latest) {
        rc = gsnap_ts__err(ts, GSNAP_ERANGE, "as_of %llu: the newest version is %llu",
                           (unsigned long long)opts->as_of, (unsigned long long)latest);
        goto fail;
    }
    gsnap_db_stat st;
    uint64_t bound = 0;
    if ((rc = gsnap_db_stats(db, &st)) || (rc = gsnap_store__node_bound(db, rd, &bound))) {
        gsnap_ts__store_err(ts, rc, "reading the store's statistics");
        goto fail;
    }
    if (bound <= GSNAP_TS_DENSE_MIN || bound <= 4 * st.edge_records + 1024) {
        ts->dense = 1;
        if ((rc = gsnap_ts__dense_grow(ts, bound))) goto fail;
    }
    if ((rc = gsnap_store__scan_raw(db, rd, opts->dir, ts->version, gsnap_ts__build_cb, ts))) {
        if (!ts->err[0]) gsnap_ts__store_err(ts, rc, "reading the events");
        goto fail;
    }
    gsnap_read_end(rd);
    *out = ts;
    return 0;
fail:
    gsnap_read_end(rd);
    gsnap_store__err(db, rc, "temporal sampler: %s", ts->err);
    gsnap_tsampler_close(ts);
    return rc;
}

int gsnap_tsampler_refresh(gsnap_tsampler *ts, uint64_t upto, uint64_t *version) {
    if (!ts || ts->magic != GSNAP_TS_MAGIC) return GSNAP_EINVAL;
    ts->err[0] = 0;
    if (upto < ts->version)
        return gsnap_ts__err(ts, GSNAP_EINVAL, "refresh to version %llu: the sampler is at %llu already",
                             (unsigned long long)upto, (unsigned long long)ts->version);
    gsnap_read *rd = NULL;
    uint64_t *nodes = NULL;
    size_t nn = 0;
    int rc = gsnap_read_begin(ts->db, &rd);
    if (rc) return gsnap_ts__store_err(ts, rc, "opening a read view");
    uint64_t latest = gsnap_read_version(rd), target = upto > latest ? latest : upto;
    if (target > ts->version) {
        if ((rc = gsnap_store__changed_nodes(ts->db, rd, ts->o.dir, ts->version, target, &nodes, &nn))) {
            gsnap_ts__store_err(ts, rc, "reading the change log");
            goto out;
        }
        for (size_t i = 0; i < nn; i++) {
            size_t n;
            const gsnap_ts__node *old = gsnap_ts__find(ts, nodes[i]);
            int clean = !old || old->ndead == 0; /* no delete event at all */
            if (clean) { /* only the new versions' events, from the runs that hold them */
                if ((rc = gsnap_store__node_raw(ts->db, rd, nodes[i], ts->o.dir, ts->version, target,
                                                &ts->raw, &n, &ts->raw_cap))) {
                    gsnap_ts__store_err(ts, rc, "reading a node's events");
                    goto out;
                }
                for (size_t k = 0; k < n && clean; k++) clean = !ts->raw[k].del;
                if (clean) {
                    if ((rc = gsnap_ts__merge_node(ts, nodes[i], ts->raw, n))) goto out;
                    continue;
                }
            }
            /* deletes involved: their pairing may change, rebuild the node */
            if ((rc = gsnap_store__node_raw(ts->db, rd, nodes[i], ts->o.dir, 0, target, &ts->raw, &n,
                                            &ts->raw_cap))) {
                gsnap_ts__store_err(ts, rc, "reading a node's events");
                goto out;
            }
            if ((rc = gsnap_ts__build_node(ts, nodes[i], ts->raw, n))) goto out;
        }
        ts->version = target;
        ts->ids_valid = 0;
        if (ts->waste > ts->pool_n - ts->waste - ts->slack && (rc = gsnap_ts__compact_pool(ts))) goto out;
    }
out:
    gsnap_free(nodes);
    gsnap_read_end(rd);
    if (rc == 0 && version) *version = ts->version;
    return rc;
}

uint64_t gsnap_tsampler_version(const gsnap_tsampler *ts) { return ts ? ts->version : 0; }

void gsnap_tsampler_size(const gsnap_tsampler *ts, uint64_t *events, uint64_t *nodes) {
    if (events) *events = ts ? ts->pool_n - ts->waste - ts->slack : 0;
    if (nodes) {
        uint64_t c = 0;
        if (ts)
            for (size_t i = 0; i < ts->nnodes; i++) c += ts->nodes[i].n > 0;
        *nodes = c;
    }
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int gsnap_tsampler_random_nodes(gsnap_tsampler *ts, uint64_t batch, size_t n, uint64_t *nodes) {
    if (!ts || ts->magic != GSNAP_TS_MAGIC || (n && !nodes)) return GSNAP_EINVAL;
    if (!ts->ids_valid) { /* the nodes with events, ascending (cached until a refresh) */
        size_t live = 0;
        for (size_t i = 0; i < ts->nnodes; i++) live += ts->nodes[i].n > 0;
        uint64_t *ids = realloc(ts->ids, (live ? live : 1) * sizeof *ids);
        if (!ids) return GSNAP_ENOMEM;
        ts->ids = ids;
        size_t m = 0;
        if (ts->dense) {
            for (size_t i = 0; i < ts->nnodes; i++)
                if (ts->nodes[i].n > 0) ids[m++] = i;
        } else {
            for (size_t i = 0; i < ts->mcap; i++)
                if (ts->vals[i] != UINT32_MAX && ts->nodes[ts->vals[i]].n > 0) ids[m++] = ts->keys[i];
        }
        qsort(ids, m, sizeof *ids, u64_cmp);
        ts->nids = m;
        ts->ids_valid = 1;
    }
    if (ts->nids == 0) return n ? gsnap_ts__err(ts, GSNAP_NOTFOUND, "the sampler holds no event") : 0;
    uint64_t base = gsnap_samp__h(ts->o.seed, GSNAP_P_SEEDS, 0, batch, 0);
    for (size_t i = 0; i < n; i++) nodes[i] = ts->ids[gsnap_samp__below(gsnap_samp__mix(base, i), ts->nids)];
    return 0;
}

const char *gsnap_tsampler_errmsg(const gsnap_tsampler *ts) { return ts ? ts->err : ""; }

static void layer_free(gsnap_ts__layer *l) {
    free(l->root_node); free(l->root_t); free(l->indptr);
    free(l->nbr); free(l->ever); free(l->eidx); free(l->et); free(l->dt);
    memset(l, 0, sizeof *l);
}

void gsnap_tsampler_close(gsnap_tsampler *ts) {
    if (!ts) return;
    ts->magic = 0;
    free(ts->keys); free(ts->vals); free(ts->nodes);
    free(ts->t); free(ts->kill); free(ts->nv);
    free(ts->raw);
    free(ts->ids);
    gsnap_samp__scratch_free(&ts->sc);
    free(ts->pick); free(ts->alive); free(ts->ranges);
    for (unsigned l = 0; l < GSNAP_TS_MAX_LAYERS; l++) layer_free(&ts->layers[l]);
    free(ts->out);
    free(ts);
}
