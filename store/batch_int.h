/*
 * store/batch_int.h -- private to store/batch*.c: a buffered event and the
 * batch's sort (store/batch_sort.c).
 */
#ifndef GSNAP_BATCH_INT_H
#define GSNAP_BATCH_INT_H
#include "store/store_int.h"

typedef struct {
    uint64_t src, dst;
    int64_t t;
    uint64_t del;
} gsnap_event;

/* The value ranges of events: the largest src and dst, the time range. */
struct ev_range {
    uint64_t max_src, max_dst;
    int64_t tmin, tmax;
};
void gsnap_batch__ev_range(const gsnap_event *ev, size_t n, struct ev_range *r);

/* Direction dir's records of ev[0..n) (node = src for out, dst for in; vop =
 * the delete flag) into r, stably sorted by (node, nbr, t). rg: the events'
 * ranges; tmp: room for n records. Not thread-bound: uses only its arguments
 * and thread-local histograms. */
void gsnap_batch__sort_dir(const gsnap_event *ev, size_t n, int dir, const struct ev_range *rg, gsnap_rec *r,
                           gsnap_rec *tmp);

/* 1 when r[0..n) is in (node, nbr, t) order (debug checks). */
int gsnap_batch__sorted(const gsnap_rec *r, size_t n);
#endif
