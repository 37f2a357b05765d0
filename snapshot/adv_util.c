/*
 * snapshot/adv_util.c -- the small containers of `snapshot advance`
 * (adv_int.h): hash map growth, vector growth, the radix sort of u64 keys.
 */
#include "snapshot/adv_int.h"

int gsnap_adv__map_grow(u64map *m) {
    size_t nc = m->cap ? 2 * m->cap : 1024;
    uint64_t *k = malloc(nc * sizeof *k);
    uint32_t *v = malloc(nc * sizeof *v);
    if (!k || !v) { free(k); free(v); return GSNAP_ENOMEM; }
    memset(v, 0xff, nc * sizeof *v);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->v[i] == UINT32_MAX) continue;
        size_t j = adv_mix(m->k[i]) & (nc - 1);
        while (v[j] != UINT32_MAX) j = (j + 1) & (nc - 1);
        k[j] = m->k[i];
        v[j] = m->v[i];
    }
    free(m->k); free(m->v);
    m->k = k; m->v = v; m->cap = nc;
    return 0;
}

int gsnap_adv__vgrow(vec *a) {
    size_t c = a->cap ? 2 * a->cap : 64;
    uint64_t *p = realloc(a->v, c * sizeof *p);
    if (!p) return GSNAP_ENOMEM;
    a->v = p; a->cap = c;
    return 0;
}

int gsnap_adv__vappend(vec *a, const uint64_t *x, size_t n) {
    if (a->n + n > a->cap) {
        size_t c = a->cap ? 2 * a->cap : 64;
        while (c < a->n + n) c *= 2;
        uint64_t *p = realloc(a->v, c * sizeof *p);
        if (!p) return GSNAP_ENOMEM;
        a->v = p; a->cap = c;
    }
    if (n) memcpy(a->v + a->n, x, n * sizeof *x);
    a->n += n;
    return 0;
}

/* Sort x[0..n) ascending; tmp holds n. Small inputs by insertion; up to
 * MSD_MAX keys one MSD pass on the highest byte the keys do not share,
 * each bucket sorted the same way (random scores: a few keys per bucket);
 * larger inputs LSD radix by the bytes the keys do not share. */
#define INS_MAX 32
#define MSD_MAX 8192
static void ins_sort(uint64_t *x, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint64_t y = x[i];
        size_t j = i;
        while (j && x[j - 1] > y) { x[j] = x[j - 1]; j--; }
        x[j] = y;
    }
}

static void msd_sort(uint64_t *x, size_t n, uint64_t *tmp, unsigned sh) {
    size_t cnt[257] = {0};
    for (size_t i = 0; i < n; i++) cnt[((x[i] >> sh) & 0xff) + 1]++;
    for (unsigned d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
    size_t pos[256];
    memcpy(pos, cnt, sizeof pos);
    for (size_t i = 0; i < n; i++) tmp[pos[(x[i] >> sh) & 0xff]++] = x[i];
    memcpy(x, tmp, n * sizeof *x);
    for (unsigned d = 0; d < 256; d++) {
        size_t lo = cnt[d], m = cnt[d + 1] - lo;
        if (m > 1) gsnap_adv__sort_u64(x + lo, m, tmp + lo);
    }
}

static void lsd_sort(uint64_t *x, size_t n, uint64_t *tmp, uint64_t diff) {
    uint64_t *src = x, *dst = tmp;
    for (unsigned sh = 0; sh < 64; sh += 8) {
        if (((diff >> sh) & 0xff) == 0) continue;
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++) cnt[(src[i] >> sh) & 0xff]++;
        size_t sum = 0;
        for (unsigned d = 0; d < 256; d++) { size_t c = cnt[d]; cnt[d] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> sh) & 0xff]++] = src[i];
        uint64_t *t = src; src = dst; dst = t;
    }
    if (src != x) memcpy(x, src, n * sizeof *x);
}

void gsnap_adv__sort_u64(uint64_t *x, size_t n, uint64_t *tmp) {
    if (n < 2) return;
    if (n <= INS_MAX) { ins_sort(x, n); return; }
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; i++) { all_or |= x[i]; all_and &= x[i]; }
    uint64_t diff = all_or ^ all_and;
    if (!diff) return;
    if (n > MSD_MAX) { lsd_sort(x, n, tmp, diff); return; }
    unsigned sh = 56;
    while (!((diff >> sh) & 0xff)) sh -= 8;
    msd_sort(x, n, tmp, sh);
}
