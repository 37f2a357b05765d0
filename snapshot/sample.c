/*
 * snapshot/sample.c -- deterministic uniform sampling without replacement.
 *
 * To choose m of n distinct ids, every id gets the score XXH3_64(id) seeded
 * with a key derived from (snapshot seed, hop, node, generation, purpose);
 * the m ids with the smallest scores (ties broken by id) are the sample. For
 * a random hash this is a uniformly random m-subset, and it is reproducible
 * from its parameters alone (no generator state to carry).
 */
#include "snapshot/snapshot_int.h"
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

uint64_t gsnap_snap__sample_key(uint64_t seed, unsigned hop, uint64_t node, uint64_t gen,
                                uint32_t purpose) {
    uint64_t in[4] = {seed, node, gen, ((uint64_t)purpose << 32) | hop};
    return XXH3_64bits_withSeed(in, sizeof in, 0x67736e6170ull);
}

typedef struct { uint64_t score, id; } scored;

static int scored_less(const scored *x, const scored *y) {
    return x->score < y->score || (x->score == y->score && x->id < y->id);
}

/* Quickselect (Lomuto; scores of distinct ids are a strict order and look
 * random, so the middle pivot is as good as a random one): afterwards
 * a[0..m) hold the m smallest, 1 <= m < n. */
static void select_smallest(scored *a, size_t n, size_t m) {
    size_t lo = 0, hi = n; /* position m-1 is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, p = lo;
        scored t = a[mid]; a[mid] = a[hi - 1]; a[hi - 1] = t;
        scored piv = a[hi - 1];
        for (size_t i = lo; i < hi - 1; i++)
            if (scored_less(&a[i], &piv)) { t = a[i]; a[i] = a[p]; a[p] = t; p++; }
        t = a[p]; a[p] = a[hi - 1]; a[hi - 1] = t;
        if (p == m - 1) return;
        if (p > m - 1) hi = p;
        else lo = p + 1;
    }
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

int gsnap_snap__select(const uint64_t *ids, size_t n, size_t m, uint64_t key, uint64_t *out,
                       void **scratch, size_t *scratch_cap) {
    if (n <= m) {
        if (n) memmove(out, ids, n * sizeof *ids);
        return 0;
    }
    if (m == 0) return 0;
    if (*scratch_cap < n) {
        size_t c = n + n / 2;
        void *p = realloc(*scratch, c * sizeof(scored));
        if (!p) return GSNAP_ENOMEM;
        *scratch = p;
        *scratch_cap = c;
    }
    scored *a = *scratch;
    for (size_t i = 0; i < n; i++) {
        a[i].id = ids[i];
        a[i].score = XXH3_64bits_withSeed(&ids[i], 8, key);
    }
    select_smallest(a, n, m);
    for (size_t i = 0; i < m; i++) out[i] = a[i].id;
    qsort(out, m, sizeof *out, cmp_u64);
    return 0;
}
