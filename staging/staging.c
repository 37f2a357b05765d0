/*
 * staging/staging.c -- staging of packed mini-batches: nbuf slots, each a
 * host buffer (pinned with CUDA) and, with a device, a device buffer; the
 * host-to-device copy of a slot runs asynchronously on the stager's stream
 * (staging_cuda.c) while the caller samples the next batch. Without CUDA in
 * the build or without a device at run time the slots are plain 64-byte
 * aligned host buffers and the same calls hand them back.
 */
#include "graphsnap.h"
#include "staging/staging_int.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STAGER_MAGIC 0x47415453u /* "STAG" */

struct gsnap_stager {
    uint32_t magic;
    unsigned nbuf;
    int on_dev;
    void *cuda;       /* CUDA state (stream, events), NULL on the host path */
    void **host;      /* nbuf host buffers (pinned on the device path) */
    void **dev;       /* nbuf device buffers (device path) */
    size_t *cap;      /* capacity of each slot */
    size_t *len;      /* bytes staged in each slot */
    uint64_t *ticket; /* ticket now held by each slot (+1; 0 = none) */
    int *inflight;    /* a copy was started and not waited for */
    uint64_t next;    /* next ticket */
    uint64_t pending; /* ticket reserved and not yet committed (+1; 0 = none) */
};

static size_t round_cap(size_t n) { return (n + 4095) & ~(size_t)4095; }

void gsnap_stager_close(gsnap_stager *st) {
    if (!st || st->magic != STAGER_MAGIC) return;
    for (unsigned i = 0; i < st->nbuf; i++) {
        if (st->on_dev) {
            gsnap_stage__cuda_free(st->cuda, i, st->host ? st->host[i] : NULL,
                                   st->dev ? st->dev[i] : NULL);
        } else if (st->host) {
            free(st->host[i]);
        }
    }
    if (st->on_dev) gsnap_stage__cuda_close(st->cuda);
    free(st->host);
    free(st->dev);
    free(st->cap);
    free(st->len);
    free(st->ticket);
    free(st->inflight);
    st->magic = 0;
    free(st);
}

/* (Re)allocate slot i for n bytes. The old buffers are freed first: on
 * failure the slot holds none (capacity 0, no batch), so it can neither hand
 * out a NULL buffer nor let an old ticket reach freed memory. */
static int slot_alloc(gsnap_stager *st, unsigned i, size_t n) {
    if (n > SIZE_MAX - 4096) return GSNAP_ENOMEM; /* round_cap would wrap */
    n = round_cap(n ? n : 1);
    st->cap[i] = st->len[i] = 0;
    st->ticket[i] = 0;
    if (st->on_dev) {
        gsnap_stage__cuda_free(st->cuda, i, st->host[i], st->dev[i]);
        st->host[i] = st->dev[i] = NULL;
        int rc = gsnap_stage__cuda_alloc(st->cuda, i, n, &st->host[i], &st->dev[i]);
        if (rc) return rc;
    } else {
        free(st->host[i]);
        if (!(st->host[i] = aligned_alloc(4096, n))) return GSNAP_ENOMEM;
    }
    st->cap[i] = n;
    return 0;
}

int gsnap_stager_open(size_t capacity, unsigned nbuf, int device, gsnap_stager **out) {
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (nbuf == 0) nbuf = 2;
    if (nbuf < 2 || nbuf > 64) return GSNAP_EINVAL;
    gsnap_stager *st = calloc(1, sizeof *st);
    if (!st) return GSNAP_ENOMEM;
    st->magic = STAGER_MAGIC;
    st->nbuf = nbuf;
    st->host = calloc(nbuf, sizeof *st->host);
    st->dev = calloc(nbuf, sizeof *st->dev);
    st->cap = calloc(nbuf, sizeof *st->cap);
    st->len = calloc(nbuf, sizeof *st->len);
    st->ticket = calloc(nbuf, sizeof *st->ticket);
    st->inflight = calloc(nbuf, sizeof *st->inflight);
    int rc = 0;
    if (!st->host || !st->dev || !st->cap || !st->len || !st->ticket || !st->inflight) {
        rc = GSNAP_ENOMEM;
        goto fail;
    }
    if (device >= 0 && gsnap_stage__cuda_open(device, nbuf, &st->cuda) == 0) st->on_dev = 1;
    for (unsigned i = 0; i < nbuf; i++)
        if ((rc = slot_alloc(st, i, capacity))) goto fail;
    *out = st;
    return 0;
fail:
    gsnap_stager_close(st);
    return rc;
}

int gsnap_stager_on_device(const gsnap_stager *st) {
    return st && st->magic == STAGER_MAGIC ? st->on_dev : 0;
}

static int slot_wait(gsnap_stager *st, unsigned i) {
    if (!st->inflight[i]) return 0;
    st->inflight[i] = 0;
    return st->on_dev ? gsnap_stage__cuda_wait(st->cuda, i) : 0;
}

int gsnap_stager_reserve(gsnap_stager *st, size_t len, void **host, unsigned *ticket) {
    if (!st || st->magic != STAGER_MAGIC || !host || !ticket) return GSNAP_EINVAL;
    if (st->pending) return GSNAP_ESTATE; /* one reservation at a time */
    uint64_t t = st->next;
    if (t >= UINT32_MAX) return GSNAP_ERANGE;
    unsigned i = (unsigned)(t % st->nbuf);
    int rc = slot_wait(st, i); /* the slot's previous copy must be done */
    if (rc) return rc;
    if (len > st->cap[i] && (rc = slot_alloc(st, i, len))) return rc;
    st->ticket[i] = 0; /* the slot's old batch is gone; the new one is not there yet */
    st->pending = t + 1;
    st->next = t + 1;
    *host = st->host[i];
    *ticket = (unsigned)t;
    return 0;
}

int gsnap_stager_commit(gsnap_stager *st, unsigned ticket, size_t len) {
    if (!st || st->magic != STAGER_MAGIC) return GSNAP_EINVAL;
    if (st->pending != (uint64_t)ticket + 1) return GSNAP_ESTATE;
    unsigned i = ticket % st->nbuf;
    if (len > st->cap[i]) return GSNAP_ERANGE;
    st->pending = 0;
    st->len[i] = len;
    st->ticket[i] = (uint64_t)ticket + 1;
    if (st->on_dev) {
        int rc = gsnap_stage__cuda_copy(st->cuda, i, st->dev[i], st->host[i], len);
        if (rc) {
            st->ticket[i] = 0; /* no batch there: waiting on the ticket says so */
            return rc;
        }
        st->inflight[i] = 1;
    }
    return 0;
}

int gsnap_stager_submit(gsnap_stager *st, const void *buf, size_t len, unsigned *ticket) {
    if (!st || st->magic != STAGER_MAGIC || (len && !buf) || !ticket) return GSNAP_EINVAL;
    void *host;
    unsigned t;
    int rc = gsnap_stager_reserve(st, len, &host, &t);
    if (rc) return rc;
    if (len) memcpy(host, buf, len);
    if ((rc = gsnap_stager_commit(st, t, len))) return rc;
    *ticket = t;
    return 0;
}

static int slot_of(gsnap_stager *st, unsigned ticket, unsigned *slot) {
    unsigned i = ticket % st->nbuf;
    if (st->ticket[i] != (uint64_t)ticket + 1) return GSNAP_ESTATE; /* reused or never issued */
    *slot = i;
    return 0;
}

int gsnap_stager_wait(gsnap_stager *st, unsigned ticket, void **ptr, size_t *len) {
    if (!st || st->magic != STAGER_MAGIC || !ptr) return GSNAP_EINVAL;
    unsigned i;
    int rc = slot_of(st, ticket, &i);
    if (rc) return rc;
    if ((rc = slot_wait(st, i))) return rc;
    *ptr = st->on_dev ? st->dev[i] : st->host[i];
    if (len) *len = st->len[i];
    return 0;
}

int gsnap_stager_retire(gsnap_stager *st, unsigned ticket, void *stream) {
    if (!st || st->magic != STAGER_MAGIC) return GSNAP_EINVAL;
    unsigned i;
    int rc = slot_of(st, ticket, &i);
    if (rc) return rc;
    return st->on_dev ? gsnap_stage__cuda_retire(st->cuda, i, stream) : 0;
}

int gsnap_stager_read_back(gsnap_stager *st, unsigned ticket, void *dst, size_t len) {
    if (!st || st->magic != STAGER_MAGIC || (len && !dst)) return GSNAP_EINVAL;
    unsigned i;
    int rc = slot_of(st, ticket, &i);
    if (rc) return rc;
    if (len > st->len[i]) return GSNAP_ERANGE;
    if ((rc = slot_wait(st, i))) return rc;
    if (st->on_dev) return gsnap_stage__cuda_read(st->cuda, dst, st->dev[i], len);
    memcpy(dst, st->host[i], len);
    return 0;
}
