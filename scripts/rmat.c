/*
 * rmat -- graph500-style R-MAT edge stream generator.
 *
 *   rmat --scale 20 --edge-factor 16 --seed 1 > rmat20.tsv
 *   rmat --scale 22 --binary --out rmat22.bin
 *
 * Generates M = edge_factor * 2^scale directed edges over 2^scale vertices
 * with the graph500 quadrant probabilities a=0.57, b=0.19, c=0.19, d=0.05
 * (one quadrant choice per bit of the vertex ids, no noise). Self loops and
 * duplicate edges are kept, as the graph500 generator emits them.
 *
 * Timestamps and order. Edge number i (0 <= i < M) of the generation gets the
 * event time t = i. By default (--shuffle) the edges are written in a
 * pseudo-random order, so the stream is NOT time-ordered: t is a permutation
 * of 0..M-1. With --time-order they are written in generation order, t = 0,
 * 1, 2, ... Both orders contain exactly the same (src, dst, t) triples.
 *
 * Determinism. Everything is a pure function of --seed: edge i is drawn from
 * its own counter-based splitmix64 stream keyed by (seed, i); the vertex
 * relabelling (--permute, default on) and the output shuffle are keyed
 * bijections on [0, 2^k) (odd-multiply / xor-shift rounds, cycle-walking to
 * [0, M)). No tables are held, so memory is O(1) and the output of a given
 * seed is identical on every machine and in both orders.
 *
 * Output: text "src<TAB>dst<TAB>t\n" (default), or with --binary raw
 * little-endian records of 24 bytes: u64 src, u64 dst, i64 t.
 * Exit status: 0 ok, 1 I/O error, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* graph500 R-MAT probabilities as 32-bit thresholds: u < A: (0,0),
 * u < AB: (0,1), u < ABC: (1,0), else (1,1). */
#define P_A 0.57
#define P_B 0.19
#define P_C 0.19
static const uint64_t TH_A = (uint64_t)(P_A * 4294967296.0);
static const uint64_t TH_AB = (uint64_t)((P_A + P_B) * 4294967296.0);
static const uint64_t TH_ABC = (uint64_t)((P_A + P_B + P_C) * 4294967296.0);

static uint64_t splitmix_next(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t mix64(uint64_t x) {
    uint64_t s = x;
    return splitmix_next(&s);
}

/* A keyed bijection on [0, 2^bits): rounds of (odd multiply + add) mod 2^bits
 * and xor with a right shift, each invertible on bits-wide values. */
#define PERM_ROUNDS 4
typedef struct {
    uint64_t mask;
    unsigned shift;
    uint64_t mul[PERM_ROUNDS], add[PERM_ROUNDS];
} perm;

static void perm_init(perm *p, unsigned bits, uint64_t key) {
    uint64_t s = key;
    p->mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    p->shift = bits / 2 + 1;
    for (int r = 0; r < PERM_ROUNDS; r++) {
        p->mul[r] = splitmix_next(&s) | 1;
        p->add[r] = splitmix_next(&s);
    }
}

static uint64_t perm_apply(const perm *p, uint64_t x) {
    for (int r = 0; r < PERM_ROUNDS; r++) {
        x = (x * p->mul[r] + p->add[r]) & p->mask;
        x ^= x >> p->shift;
    }
    return x;
}

/* Bijection on [0, n) by cycle walking inside [0, 2^bits) with 2^bits >= n. */
static uint64_t perm_walk(const perm *p, uint64_t x, uint64_t n) {
    do x = perm_apply(p, x); while (x >= n);
    return x;
}

/* Edge number i: one quadrant choice per level from the stream (seed, i). */
static void rmat_edge(uint64_t seed, uint64_t i, unsigned scale, uint64_t *src, uint64_t *dst) {
    uint64_t s = mix64(seed ^ mix64(i + UINT64_C(0x632BE59BD9B4E019)));
    uint64_t u = 0, v = 0, r = 0;
    for (unsigned lv = 0; lv < scale; lv++) {
        uint64_t x;
        if (lv & 1) x = r >> 32;
        else { r = splitmix_next(&s); x = r & 0xFFFFFFFFu; }
        /* branch-free quadrant choice: u bit set for c, d; v bit for b, d */
        u = (u << 1) | (uint64_t)(x >= TH_AB);
        v = (v << 1) | (uint64_t)((x >= TH_A) ^ (x >= TH_AB) ^ (x >= TH_ABC));
    }
    *src = u;
    *dst = v;
}

static char *fmt_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

static char *put_le64(char *p, uint64_t v) {
    for (int k = 0; k < 8; k++) p[k] = (char)(v >> (8 * k));
    return p + 8;
}

static void usage(FILE *to) {
    fprintf(to,
        "usage: rmat --scale S [options]\n"
        "  --scale S          2^S vertices (1..40)\n"
        "  --edge-factor E    E * 2^S edges (default 16)\n"
        "  --seed N           generator seed (default 1)\n"
        "  --permute          relabel vertex ids by a seeded bijection (default)\n"
        "  --no-permute       keep raw R-MAT ids (vertex 0 is the hub)\n"
        "  --shuffle          write edges in pseudo-random order (default; t = generation\n"
        "                     index, so the stream is out of time order)\n"
        "  --time-order       write edges in generation order (t = 0, 1, 2, ...)\n"
        "  --binary           raw little-endian records: u64 src, u64 dst, i64 t\n"
        "  --out FILE         write to FILE instead of stdout\n"
        "  -q, --quiet        no summary on stderr\n");
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    if (*s == '-') return -1;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    uint64_t scale = 0, ef = 16, seed = 1;
    int permute = 1, shuffle = 1, binary = 0, quiet = 0, rc = 1;
    const char *out_path = NULL;
    FILE *out = stdout;
    char *buf = NULL;
    const size_t bufsz = 1 << 20;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t *num = NULL;
        if (!strcmp(a, "--scale")) num = &scale;
        else if (!strcmp(a, "--edge-factor")) num = &ef;
        else if (!strcmp(a, "--seed")) num = &seed;
        else if (!strcmp(a, "--permute")) permute = 1;
        else if (!strcmp(a, "--no-permute")) permute = 0;
        else if (!strcmp(a, "--shuffle")) shuffle = 1;
        else if (!strcmp(a, "--time-order")) shuffle = 0;
        else if (!strcmp(a, "--binary")) binary = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--out") && i + 1 < argc) out_path = argv[++i];
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "rmat: unknown or incomplete option '%s'\n", a); usage(stderr); return 2; }
        if (num) {
            if (i + 1 >= argc || parse_u64(argv[i + 1], num)) {
                fprintf(stderr, "rmat: %s needs a non-negative integer\n", a);
                return 2;
            }
            i++;
        }
    }
    if (scale < 1 || scale > 40) { fprintf(stderr, "rmat: --scale must be in 1..40\n"); usage(stderr); return 2; }
    if (ef < 1 || ef > (UINT64_C(1) << 20)) { fprintf(stderr, "rmat: --edge-factor must be in 1..2^20\n"); return 2; }

    const uint64_t nv = UINT64_C(1) << scale;
    const uint64_t m = ef << scale;
    unsigned mbits = 0;
    while (mbits < 64 && (UINT64_C(1) << mbits) < m) mbits++;
    perm vperm, eperm;
    perm_init(&vperm, (unsigned)scale, mix64(seed ^ UINT64_C(0x5EED0001)));
    perm_init(&eperm, mbits, mix64(seed ^ UINT64_C(0x5EED0002)));

    if (out_path) {
        out = fopen(out_path, "wb");
        if (!out) { fprintf(stderr, "rmat: cannot create %s: %s\n", out_path, strerror(errno)); return 1; }
    }
    buf = malloc(bufsz);
    if (!buf) { fprintf(stderr, "rmat: out of memory\n"); goto done; }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t fill = 0;
    for (uint64_t j = 0; j < m; j++) {
        uint64_t i = shuffle ? perm_walk(&eperm, j, m) : j;
        uint64_t s, d;
        rmat_edge(seed, i, (unsigned)scale, &s, &d);
        if (permute) {
            s = perm_apply(&vperm, s);
            d = perm_apply(&vperm, d);
        }
        if (fill > bufsz - 80) {
            if (fwrite(buf, 1, fill, out) != fill) goto ioerr;
            fill = 0;
        }
        char *p = buf + fill;
        if (binary) {
            p = put_le64(p, s);
            p = put_le64(p, d);
            p = put_le64(p, i);
        } else {
            p = fmt_u64(p, s); *p++ = '\t';
            p = fmt_u64(p, d); *p++ = '\t';
            p = fmt_u64(p, i); *p++ = '\n';
        }
        fill = (size_t)(p - buf);
    }
    if (fill && fwrite(buf, 1, fill, out) != fill) goto ioerr;
    if (fflush(out)) goto ioerr;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!quiet)
        fprintf(stderr, "rmat: scale %" PRIu64 ", %" PRIu64 " vertices, %" PRIu64 " edges, seed %"
                PRIu64 ", %s, %s, %s, %.2f s\n", scale, nv, m, seed,
                permute ? "permuted ids" : "raw ids", shuffle ? "shuffled (t out of order)" : "time-ordered",
                binary ? "binary" : "text",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    rc = 0;
    goto done;
ioerr:
    fprintf(stderr, "rmat: write error on %s: %s\n", out_path ? out_path : "<stdout>", strerror(errno));
done:
    free(buf);
    if (out && out != stdout && fclose(out) && rc == 0) {
        fprintf(stderr, "rmat: write error on %s: %s\n", out_path, strerror(errno));
        rc = 1;
    }
    return rc;
}
