/*
 * snapshot/adv_util.c -- the small containers of `snapshot advance`
 * (adv_int.h): hash map growth, vector growth, the radix sort of u64 keys.
 */
#include "snapshot/adv_int.h"

#include <sys/mman.h>

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

/* A vector of gsnap_adv__vec_map_bytes or more lives in an anonymous
 * mapping of its own, grown by mremap: the kernel moves the pages, so what
 * the vector holds is neither copied nor touched again. Grown by realloc
 * instead, a doubling copies the whole vector into fresh memory, and the
 * freed block stays in the heap of a process that keeps freed memory
 * (gsnap_keep_freed_memory, which the CLI sets): the advance's three big
 * vectors (adjacency caches, decoded stored lists) touched about twice
 * their final size, and on the VMs measured the first touch of fresh
 * memory is the advance's largest kernel cost (docs/benchmarks.md). The
 * vector records which kind of storage it has (`mapped`); gsnap_adv__vfree
 * releases either. */
size_t gsnap_adv__vec_map_bytes = (size_t)4 << 20; /* tests lower it to take the mapped path */
uint64_t gsnap_adv__vec_maps; /* vectors moved into a mapping (tests) */

int gsnap_adv__vreserve(vec *a, size_t want) {
    if (want <= a->cap) return 0;
    size_t c = a->cap ? 2 * a->cap : 64;
    while (c < want) {
        if (c > SIZE_MAX / 2 / sizeof(uint64_t)) return GSNAP_ENOMEM;
        c *= 2;
    }
    size_t bytes = c * sizeof(uint64_t);
    void *p;
    if (a->mapped) {
        p = mremap(a->v, a->cap * sizeof(uint64_t), bytes, MREMAP_MAYMOVE);
        if (p == MAP_FAILED) return GSNAP_ENOMEM;
    } else if (bytes >= gsnap_adv__vec_map_bytes) { /* one copy, of a vector below the line */
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return GSNAP_ENOMEM;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only */
#endif
        if (a->n) memcpy(p, a->v, a->n * sizeof(uint64_t));
        free(a->v);
        a->mapped = 1;
        __atomic_fetch_add(&gsnap_adv__vec_maps, 1, __ATOMIC_RELAXED); /* advances may run in several threads */
    } else if (!(p = realloc(a->v, bytes))) {
        return GSNAP_ENOMEM;
    }
    a->v = p;
    a->cap = c;
    return 0;
}

void gsnap_adv__vfree(vec *a) {
    if (a->mapped) munmap(a->v, a->cap * sizeof(uint64_t));
    else free(a->v);
    memset(a, 0, sizeof *a);
}

int gsnap_adv__vgrow(vec *a) { return gsnap_adv__vreserve(a, a->n + 1); }

int gsnap_adv__vappend(vec *a, const uint64_t *x, size_t n) {
    int rc;
    if (a->n + n > a->cap && (rc = gsnap_adv__vreserve(a, a->n + n))) return rc;
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
