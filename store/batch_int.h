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

/* Each direction's sorted records (vop = is_delete, the version not yet in)
 * and its touched nodes (unique, ascending); NULL for a direction not kept. */
struct gsnap_sorted {
    gsnap_rec *recs[2];
    size_t nrec[2];
    uint64_t *touched[2];
    size_t ntouched[2];
    unsigned keep;      /* the db->keep they were made for */
    struct ev_range rg; /* the events' ranges (n > 0) */
    uint64_t dels;      /* how many are deletes */
    int valid;
};
/* Sort ev[0..n) into o for the directions in keep (GSNAP_KEEP_*): 0 or
 * GSNAP_ENOMEM (o then empty). Any thread. */
int gsnap_batch__sort_events(const gsnap_event *ev, size_t n, unsigned keep, struct gsnap_sorted *o);
void gsnap_sorted_free(struct gsnap_sorted *o);

/* Events buffered and sorted away from any batch (store.h). */
struct gsnap_batch_prep {
    gsnap_event *ev;
    size_t n, cap;
    struct gsnap_sorted sorted;
};

/* 1 when r[0..n) is in (node, nbr, t) order (debug checks). */
int gsnap_batch__sorted(const gsnap_rec *r, size_t n);
#endif
