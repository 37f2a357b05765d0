/*
 * sampler/util.c -- uniform choice without replacement, the node -> index
 * map of a layer, small helpers.
 */
#include "sampler/sampler_int.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

void gsnap_samp__scratch_free(gsnap_samp__scratch *sc) {
    free(sc->set);
    sc->set = NULL;
    sc->cap = 0;
}

/* Small k: linear membership over out[0..m). Large k: hash set. */
#define GSNAP_LINEAR_K 24

static int set_prepare(gsnap_samp__scratch *sc, size_t k) {
    size_t need = 1;
    while (need < 2 * k) need <<= 1;
    if (need > sc->cap) {
        uint64_t *p = realloc(sc->set, need * sizeof *p);
        if (!p) return -1;
        sc->set = p;
        sc->cap = need;
    }
    memset(sc->set, 0, need * sizeof *sc->set);
    return (int)0;
}

/* Insert v into the set (size mask+1); returns 1 if it was already there. */
static int set_add(uint64_t *set, size_t mask, uint64_t v) {
    size_t i = (size_t)(v * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (set[i]) {
        if (set[i] == v + 1) return 1;
        i = (i + 1) & mask;
    }
    set[i] = v + 1;
    return 0;
}

long gsnap_samp__choose(const gsnap_samp__key *key, size_t n, size_t k, uint32_t *out,
                        gsnap_samp__scratch *sc) {
    /* One XXH3 of the key, then a counter-based splitmix64 per draw index. */
    return gsnap_samp__choose_base(gsnap_samp__h(key->seed, key->ph, key->node, key->round, 0), n,
                                   k, out, sc);
}

long gsnap_samp__choose_base(uint64_t base, size_t n, size_t k, uint32_t *out,
                             gsnap_samp__scratch *sc) {
    if (k >= n) {
        for (size_t i = 0; i < n; i++) out[i] = (uint32_t)i;
        return (long)n;
    }
    size_t m = 0;
    int linear = k <= GSNAP_LINEAR_K;
    size_t mask = 0;
    if (!linear) {
        if (set_prepare(sc, k) != 0) return -1;
        mask = sc->cap - 1;
    }
    /* Floyd: for j in [n-k, n): t uniform in [0, j]; take t unless taken, else j. */
    for (size_t j = n - k; j < n; j++) {
        uint64_t h = gsnap_samp__mix(base, j);
        uint32_t t = (uint32_t)gsnap_samp__below(h, (uint64_t)j + 1);
        int dup = 0;
        if (linear) {
            for (size_t q = 0; q < m; q++)
                if (out[q] == t) { dup = 1; break; }
        } else {
            dup = set_add(sc->set, mask, t);
            if (dup) set_add(sc->set, mask, j);
        }
        out[m++] = dup ? (uint32_t)j : t;
    }
    return (long)m;
}

long gsnap_samp__choose_excl(const gsnap_samp__key *key, size_t n, const uint32_t *excl,
                             size_t ne, size_t k, uint32_t *out, gsnap_samp__scratch *sc) {
    if (ne > n) ne = n;
    size_t m = n - ne;
    long got = gsnap_samp__choose(key, m, k, out, sc);
    if (got < 0 || ne == 0) return got;
    for (long i = 0; i < got; i++) {
        uint32_t pos = out[i];
        for (size_t e = 0; e < ne && excl[e] <= pos; e++) pos++;
        out[i] = pos;
    }
    return got;
}

int gsnap_samp__map_reset(gsnap_samp__map *m, size_t expect) {
    size_t need = 64;
    while (need < 2 * expect) need <<= 1;
    if (need > m->cap) {
        free(m->keys);
        free(m->vals);
        free(m->stamp);
        m->keys = malloc(need * sizeof *m->keys);
        m->vals = malloc(need * sizeof *m->vals);
        m->stamp = calloc(need, sizeof *m->stamp);
        if (!m->keys || !m->vals || !m->stamp) {
            free(m->keys); free(m->vals); free(m->stamp);
            m->keys = NULL; m->vals = NULL; m->stamp = NULL;
            m->cap = 0;
            return GSNAP_ENOMEM;
        }
        m->cap = need;
        m->cur = 0;
    }
    if (++m->cur == 0) { /* stamp wrap: clear */
        memset(m->stamp, 0, m->cap * sizeof *m->stamp);
        m->cur = 1;
    }
    m->n = 0;
    return 0;
}

static int map_grow(gsnap_samp__map *m) {
    gsnap_samp__map n = {0};
    size_t nc = m->cap * 2;
    n.keys = malloc(nc * sizeof *n.keys);
    n.vals = malloc(nc * sizeof *n.vals);
    n.stamp = calloc(nc, sizeof *n.stamp);
    if (!n.keys || !n.vals || !n.stamp) {
        gsnap_samp__map_free(&n);
        return GSNAP_ENOMEM;
    }
    n.cap = nc;
    n.cur = 1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->stamp[i] != m->cur) continue;
        size_t j = (size_t)((m->keys[i] * 0x9E3779B97F4A7C15ull) >> 17) & (nc - 1);
        while (n.stamp[j]) j = (j + 1) & (nc - 1);
        n.stamp[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
    }
    n.n = m->n;
    gsnap_samp__map_free(m);
    *m = n;
    return 0;
}

uint32_t gsnap_samp__map_get_add(gsnap_samp__map *m, uint64_t key, uint32_t next, int *added) {
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0) {
        *added = -1;
        return UINT32_MAX;
    }
    size_t mask = m->cap - 1;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & mask;
    for (;;) {
        if (m->stamp[i] != m->cur) {
            m->stamp[i] = m->cur;
            m->keys[i] = key;
            m->vals[i] = next;
            m->n++;
            *added = 1;
            return next;
        }
        if (m->keys[i] == key) {
            *added = 0;
            return m->vals[i];
        }
        i = (i + 1) & mask;
    }
}

void gsnap_samp__map_free(gsnap_samp__map *m) {
    free(m->keys);
    free(m->vals);
    free(m->stamp);
    memset(m, 0, sizeof *m);
}

/* Insertion sort: the lists sorted here hold at most a cache entry. */
long gsnap_samp__keep_idx(const gsnap_samp__key *kk, uint32_t cnt, size_t nkeep, uint32_t *keep,
                          gsnap_samp__scratch *sc) {
    if (nkeep >= cnt) {
        for (uint32_t i = 0; i < cnt; i++) keep[i] = i;
        return (long)cnt;
    }
    size_t nd = cnt - nkeep;
    uint32_t *drop = keep + nkeep; /* kept indices are written below it */
    if (gsnap_samp__choose(kk, cnt, nd, drop, sc) < 0) return -1;
    gsnap_samp__sort_u32(drop, nd);
    size_t m = 0, q = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        if (q < nd && drop[q] == i) {
            q++;
            continue;
        }
        keep[m++] = i;
    }
    return (long)m;
}

void gsnap_samp__sort_u32(uint32_t *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

/* Position of id in the ascending list, or -1 (branch-free bisection). */
long gsnap_samp__find_id(const uint64_t *full, size_t d, uint64_t id) {
    if (d == 0) return -1;
    const uint64_t *b = full; /* the last element <= id */
    size_t len = d;
    while (len > 1) {
        size_t half = len / 2;
        b += (b[half] <= id) ? half : 0;
        len -= half;
    }
    return *b == id ? (long)(b - full) : -1;
}
