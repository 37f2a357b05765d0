/*
 * sampler/tindex.c -- the temporal sampler's in-memory T-CSR: the node map
 * (dense array or open-addressing hash) and the event pool, with each node's
 * list built from the store's raw events, merged with a refresh's new
 * versions, and the pool compacted when garbage outgrows the live events.
 * The invariants are in temporal_int.h; open and refresh in temporal.c.
 */
#include "sampler/temporal_int.h"

#include <stdlib.h>
#include <string.h>

static int map_get(gsnap_tsampler *ts, uint64_t node, gsnap_ts__node **out);

/* ---- node map -------------------------------------------------------------- */

static int map_grow(gsnap_tsampler *ts) {
    size_t nc = ts->mcap ? ts->mcap * 2 : 1024;
    uint64_t *k = malloc(nc * sizeof *k);
    uint32_t *v = malloc(nc * sizeof *v);
    if (!k || !v) { free(k); free(v); return GSNAP_ENOMEM; }
    memset(v, 0xff, nc * sizeof *v);
    size_t mask = nc - 1;
    for (size_t i = 0; i < ts->mcap; i++) {
        if (ts->vals[i] == UINT32_MAX) continue;
        size_t j = gsnap_ts__hslot(ts->keys[i], mask);
        while (v[j] != UINT32_MAX) j = (j + 1) & mask;
        k[j] = ts->keys[i];
        v[j] = ts->vals[i];
    }
    free(ts->keys);
    free(ts->vals);
    ts->keys = k;
    ts->vals = v;
    ts->mcap = nc;
    return 0;
}

/* Dense layout (nodes[] indexed by node id) while ids stay below this. */
static uint64_t dense_limit(const gsnap_tsampler *ts) {
    uint64_t live = ts->pool_n - ts->waste - ts->slack, lim = 4 * live + 1024;
    return lim < GSNAP_TS_DENSE_MIN ? GSNAP_TS_DENSE_MIN : lim;
}

int gsnap_ts__dense_grow(gsnap_tsampler *ts, uint64_t bound) {
    int rc = gsnap_vec_reserve((void **)&ts->nodes, &ts->nodes_cap, bound, sizeof *ts->nodes);
    if (rc) return rc;
    memset(ts->nodes + ts->nnodes, 0, (bound - ts->nnodes) * sizeof *ts->nodes);
    ts->nnodes = bound;
    return 0;
}

/* Leave the dense layout: a node id far above the others arrived. */
static int to_hash(gsnap_tsampler *ts) {
    gsnap_ts__node *old = ts->nodes;
    size_t n = ts->nnodes;
    ts->nodes = NULL;
    ts->nnodes = ts->nodes_cap = 0;
    ts->dense = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (old[i].n == 0 && old[i].ndead == 0) continue; /* keep delete-only nodes */
        gsnap_ts__node *nd;
        if ((rc = map_get(ts, i, &nd)) == 0) *nd = old[i];
    }
    free(old);
    return rc;
}

/* The node's entry, created (empty) when missing. */
static int map_get(gsnap_tsampler *ts, uint64_t node, gsnap_ts__node **out) {
    if (ts->dense) {
        if (node >= ts->nnodes) {
            int rc;
            if (node >= dense_limit(ts)) {
                if ((rc = to_hash(ts))) return rc;
                return map_get(ts, node, out);
            }
            uint64_t nb = 2 * ts->nnodes > node + 1 ? 2 * ts->nnodes : node + 1;
            if (nb > dense_limit(ts)) nb = node + 1;
            if ((rc = gsnap_ts__dense_grow(ts, nb))) return rc;
        }
        *out = &ts->nodes[node];
        return 0;
    }
    if ((ts->mcount + 1) * 2 > ts->mcap) {
        int rc = map_grow(ts);
        if (rc) return rc;
    }
    size_t mask = ts->mcap - 1, i = gsnap_ts__hslot(node, mask);
    while (ts->vals[i] != UINT32_MAX) {
        if (ts->keys[i] == node) { *out = &ts->nodes[ts->vals[i]]; return 0; }
        i = (i + 1) & mask;
    }
    if (ts->nnodes >= UINT32_MAX - 1) return gsnap_ts__err(ts, GSNAP_ERANGE, "more than 2^32 nodes");
    int rc = gsnap_vec_reserve((void **)&ts->nodes, &ts->nodes_cap, ts->nnodes + 1,
                                 sizeof *ts->nodes);
    if (rc) return rc;
    ts->keys[i] = node;
    ts->vals[i] = (uint32_t)ts->nnodes;
    ts->mcount++;
    gsnap_ts__node *nd = &ts->nodes[ts->nnodes++];
    memset(nd, 0, sizeof *nd);
    *out = nd;
    return 0;
}

/* ---- building a node's list ------------------------------------------------ */

static int pool_reserve(gsnap_tsampler *ts, size_t extra) {
    size_t need = ts->pool_n + extra;
    if (need <= ts->pool_cap) return 0;
    size_t nc = ts->pool_cap ? ts->pool_cap : 1024;
    while (nc < need) nc = nc + nc / 2 + 1;
    int64_t *t = realloc(ts->t, nc * sizeof *t);
    if (!t) return GSNAP_ENOMEM;
    ts->t = t;
    int64_t *k = realloc(ts->kill, nc * sizeof *k);
    if (!k) return GSNAP_ENOMEM;
    ts->kill = k;
    gsnap_ts__nv *n = realloc(ts->nv, nc * sizeof *n);
    if (!n) return GSNAP_ENOMEM;
    ts->nv = n;
    ts->pool_cap = nc;
    return 0;
}

static int tv_less(int64_t ta, uint64_t va, int64_t tb, uint64_t vb) {
    return ta < tb || (ta == tb && va < vb);
}

/* Stable sort of pool[b, b+n) by (t, version), using pool space past the end
 * as the buffer (reserved by the caller: n more slots). */
static void sort_node(gsnap_tsampler *ts, size_t b, size_t n) {
    int sorted = 1;
    for (size_t i = b + 1; i < b + n && sorted; i++)
        sorted = !tv_less(ts->t[i], ts->nv[i].ver, ts->t[i - 1], ts->nv[i - 1].ver);
    if (sorted) return;
    if (n <= 16) { /* insertion sort */
        for (size_t i = b + 1; i < b + n; i++) {
            int64_t t = ts->t[i], k = ts->kill[i];
            uint64_t nb = ts->nv[i].nbr, v = ts->nv[i].ver;
            size_t j = i;
            while (j > b && tv_less(t, v, ts->t[j - 1], ts->nv[j - 1].ver)) {
                ts->t[j] = ts->t[j - 1]; ts->kill[j] = ts->kill[j - 1];
                ts->nv[j].nbr = ts->nv[j - 1].nbr; ts->nv[j].ver = ts->nv[j - 1].ver;
                j--;
            }
            ts->t[j] = t; ts->kill[j] = k; ts->nv[j].nbr = nb; ts->nv[j].ver = v;
        }
        return;
    }
    /* bottom-up merge sort between [b, b+n) and [b+n, b+2n) */
    size_t src = b, dst = b + n;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid || j < hi) {
                size_t s;
                if (i < mid && (j >= hi || !tv_less(ts->t[src + j], ts->nv[src + j].ver, ts->t[src + i],
                                                    ts->nv[src + i].ver)))
                    s = src + i++;
                else
                    s = src + j++;
                ts->t[dst + k] = ts->t[s]; ts->kill[dst + k] = ts->kill[s];
                ts->nv[dst + k].nbr = ts->nv[s].nbr; ts->nv[dst + k].ver = ts->nv[s].ver;
                k++;
            }
        }
        size_t x = src; src = dst; dst = x;
    }
    if (src != b) {
        memcpy(ts->t + b, ts->t + src, n * sizeof *ts->t);
        memcpy(ts->kill + b, ts->kill + src, n * sizeof *ts->kill);
        memcpy(ts->nv + b, ts->nv + src, n * sizeof *ts->nv);
    }
}

/* The node's list becomes garbage (its whole capacity). */
static void drop_list(gsnap_tsampler *ts, gsnap_ts__node *nd) {
    ts->waste += nd->cap;
    ts->slack -= (size_t)nd->cap - nd->n;
    nd->n = nd->cap = 0;
}

/* Append the node's list built from its raw events (in (nbr, t, version,
 * batch order) order) to the pool and point the node at it. */
int gsnap_ts__build_node(gsnap_tsampler *ts, uint64_t node, const gsnap_store_ev *ev, size_t n) {
    size_t adds = 0;
    for (size_t i = 0; i < n; i++) adds += !ev[i].del;
    gsnap_ts__node *nd = NULL;
    int rc;
    if (adds == 0) { /* deletes only: no candidate, but remember the deletes */
        if (n == 0) return 0;
        if ((rc = map_get(ts, node, &nd))) return rc;
        drop_list(ts, nd);
        nd->ndead = GSNAP_TS_HASDEL;
        return 0;
    }
    if (adds >= UINT32_MAX) return gsnap_ts__err(ts, GSNAP_ERANGE, "node %llu has 2^32 events or more",
                                                 (unsigned long long)node);
    if ((rc = pool_reserve(ts, 2 * adds))) return rc;
    if ((rc = map_get(ts, node, &nd))) return rc;
    size_t b = ts->pool_n, k = b;
    uint32_t dead = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i, head = k; /* head: oldest live add of this pair */
        while (j < n && ev[j].nbr == ev[i].nbr) {
            if (ev[j].del) {
                if (head < k) { ts->kill[head++] = ev[j].t; dead++; }
            } else {
                ts->t[k] = ev[j].t;
                ts->nv[k].nbr = ev[j].nbr;
                ts->nv[k].ver = ev[j].version;
                ts->kill[k] = GSNAP_TIME_MAX;
                k++;
            }
            j++;
        }
        i = j;
    }
    sort_node(ts, b, adds);
    drop_list(ts, nd);
    nd->off = b;
    nd->n = nd->cap = (uint32_t)adds;
    nd->ndead = dead | (adds < n ? GSNAP_TS_HASDEL : 0);
    ts->pool_n = b + adds;
    return 0;
}

/* Refresh fast path: the node has no delete and its new events (versions
 * after the sampler's) are adds only. When they all sort after the list's
 * last event (a time-ordered stream) and fit in its spare capacity, they are
 * appended in place; otherwise the list is merged with them into a fresh
 * copy at the pool's end with 1.5 times the room (so a node touched by every
 * batch, a hub, is copied O(log) times, not per batch). New versions sort
 * after old ones at equal times. */
int gsnap_ts__merge_node(gsnap_tsampler *ts, uint64_t node, const gsnap_store_ev *ev, size_t n) {
    gsnap_ts__node *nd = NULL;
    int rc;
    if ((rc = map_get(ts, node, &nd))) return rc;
    size_t old_n = nd->n, old_off = nd->off;
    if (old_n + n >= UINT32_MAX / 2)
        return gsnap_ts__err(ts, GSNAP_ERANGE, "node %llu has 2^31 events or more", (unsigned long long)node);
    size_t newcap = (old_n + n) + (old_n + n) / 2 + 8; /* geometric: O(1) copies per event */
    if ((rc = pool_reserve(ts, n + (newcap > n ? newcap : n)))) return rc;
    size_t p = ts->pool_n; /* the new events, sorted, at the pool's end */
    for (size_t i = 0; i < n; i++) {
        ts->t[p + i] = ev[i].t;
        ts->nv[p + i].nbr = ev[i].nbr;
        ts->nv[p + i].ver = ev[i].version;
        ts->kill[p + i] = GSNAP_TIME_MAX;
    }
    sort_node(ts, p, n); /* uses [p + n, p + 2n) */
    if (old_n + n <= nd->cap &&
        (old_n == 0 || !tv_less(ts->t[p], ts->nv[p].ver, ts->t[old_off + old_n - 1],
                                ts->nv[old_off + old_n - 1].ver))) {
        size_t w = old_off + old_n; /* in place: spare capacity of this list only */
        memcpy(ts->t + w, ts->t + p, n * sizeof *ts->t);
        memcpy(ts->nv + w, ts->nv + p, n * sizeof *ts->nv);
        memcpy(ts->kill + w, ts->kill + p, n * sizeof *ts->kill);
        nd->n = (uint32_t)(old_n + n);
        ts->slack -= n;
        return 0;
    }
    /* merge the old list and [p, p + n) into [dst, dst + old_n + n) */
    size_t dst = p + n, w = dst, i = 0, j = 0;
    while (i < old_n || j < n) {
        size_t s;
        if (j == n || (i < old_n && !tv_less(ts->t[p + j], ts->nv[p + j].ver, ts->t[old_off + i],
                                             ts->nv[old_off + i].ver)))
            s = old_off + i++;
        else
            s = p + j++;
        ts->t[w] = ts->t[s];
        ts->nv[w] = ts->nv[s];
        ts->kill[w] = ts->kill[s];
        w++;
    }
    drop_list(ts, nd);
    ts->waste += n; /* the sorted copy at p */
    nd->off = dst;
    nd->n = (uint32_t)(old_n + n);
    nd->cap = (uint32_t)newcap;
    ts->slack += newcap - (old_n + n);
    ts->pool_n = dst + newcap;
    return 0;
}

int gsnap_ts__build_cb(void *ctx, uint64_t node, const gsnap_store_ev *ev, size_t n) {
    return gsnap_ts__build_node(ctx, node, ev, n);
}

/* Copy the lists (with their spare capacity) into a fresh pool when the
 * garbage exceeds the live events. */
int gsnap_ts__compact_pool(gsnap_tsampler *ts) {
    size_t keep = ts->pool_n - ts->waste, cap = keep ? keep : 1;
    int64_t *t = malloc(cap * sizeof *t), *k = malloc(cap * sizeof *k);
    gsnap_ts__nv *nb = malloc(cap * sizeof *nb);
    if (!t || !k || !nb) { free(t); free(k); free(nb); return GSNAP_ENOMEM; }
    size_t o = 0;
    for (size_t i = 0; i < ts->nnodes; i++) {
        gsnap_ts__node *nd = &ts->nodes[i];
        if (nd->n) {
            memcpy(t + o, ts->t + nd->off, nd->n * sizeof *t);
            memcpy(k + o, ts->kill + nd->off, nd->n * sizeof *k);
            memcpy(nb + o, ts->nv + nd->off, nd->n * sizeof *nb);
        }
        nd->off = o;
        o += nd->cap;
    }
    free(ts->t); free(ts->kill); free(ts->nv);
    ts->t = t; ts->kill = k; ts->nv = nb;
    ts->pool_n = o;
    ts->pool_cap = cap;
    ts->waste = 0;
    return 0;
}
