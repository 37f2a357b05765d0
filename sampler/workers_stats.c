/*
 * sampler/workers_stats.c -- the counts of a batch produced on a worker
 * (workers.c): what the batch changed in its context's statistics, kept
 * with the batch and added to the sampler's when the batch is returned.
 */
#include "sampler/sampler_int.h"
#include <string.h>

/* d = a - b over the counts a batch changes. */
void gsnap_samp__stats_delta(gsnap_sampler_stats *d, const gsnap_sampler_stats *a,
                             const gsnap_sampler_stats *b) {
    memset(d, 0, sizeof *d);
    d->edges = a->edges - b->edges;
    d->seeds = a->seeds - b->seeds;
    d->t_sample = a->t_sample - b->t_sample;
    d->t_pack = a->t_pack - b->t_pack;
    d->refreshed_entries = a->refreshed_entries - b->refreshed_entries; /* lazy redraws */
    d->replaced_ids = a->replaced_ids - b->replaced_ids;
    d->list_hits = a->list_hits - b->list_hits;
    d->list_misses = a->list_misses - b->list_misses;
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        const gsnap_layer_stats *x = &a->layer[i], *y = &b->layer[i];
        gsnap_layer_stats *z = &d->layer[i];
        z->hits = x->hits - y->hits;
        z->misses = x->misses - y->misses;
        z->stale_hits = x->stale_hits - y->stale_hits;
        z->refreshed = x->refreshed - y->refreshed;
        z->edges = x->edges - y->edges;
        z->bytes_read = x->bytes_read - y->bytes_read;
        z->seconds = x->seconds - y->seconds;
    }
}

void gsnap_samp__stats_add(gsnap_sampler_stats *a, const gsnap_sampler_stats *d) {
    a->edges += d->edges;
    a->seeds += d->seeds;
    a->t_sample += d->t_sample;
    a->t_pack += d->t_pack;
    a->refreshed_entries += d->refreshed_entries;
    a->replaced_ids += d->replaced_ids;
    a->list_hits += d->list_hits;
    a->list_misses += d->list_misses;
    for (unsigned i = 0; i < GSNAP_MAX_LAYERS; i++) {
        gsnap_layer_stats *x = &a->layer[i];
        const gsnap_layer_stats *y = &d->layer[i];
        x->hits += y->hits;
        x->misses += y->misses;
        x->stale_hits += y->stale_hits;
        x->refreshed += y->refreshed;
        x->edges += y->edges;
        x->bytes_read += y->bytes_read;
        x->seconds += y->seconds;
    }
}
