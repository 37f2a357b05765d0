/* bench/bench_util.h -- what the benchmarks share: the edge list they read
 * (a binary file of {u64 src, u64 dst, i64 t} records as build/tools/rmat
 * --binary writes it, or text lines "src dst [t]"), a monotonic clock and a
 * seedable generator, say() and cpu_now(). Header-only: each benchmark is one program. */
#ifndef GSNAP_BENCH_UTIL_H
#define GSNAP_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* The results file a benchmark writes (NULL: none); say() prints a line to
 * stdout and to it. */
static FILE *bench_out __attribute__((unused));
static inline void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (bench_out) {
        va_start(ap, fmt);
        vfprintf(bench_out, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

/* CPU seconds of the process so far (user + system, every thread). */
static inline double cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

typedef struct { uint64_t s, d; int64_t t; } edge;

#ifdef GRAPHSNAP_H
/* Open (creating) the database at dir without fsync: the benchmarks time
 * the engine's work, not the disk's flushes, unless they ask for them. */
static inline int bench_open_nosync(const char *dir, gsnap_db **db) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    return gsnap_db_open(dir, &o, db);
}
#endif

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64 */
static inline uint64_t mix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The edges of path (bin: binary records, else text). Text lines starting
 * with '#' are skipped, and so are lines without two ids, or without a time
 * when need_t (a line without one gets t = 0 otherwise). Exits on an
 * unreadable file or no memory; *n is the count. */
static inline edge *read_edges(const char *path, int bin, int need_t, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    size_t cap = 1 << 20, m = 0;
    edge *e = malloc(cap * sizeof *e);
    char line[256];
    for (;;) {
        if (m == cap) {
            edge *g = e ? realloc(e, (cap *= 2) * sizeof *e) : NULL;
            if (!g) free(e);
            e = g;
        }
        if (!e) { fprintf(stderr, "%s: out of memory\n", path); exit(1); }
        if (bin) {
            size_t got = fread(e + m, sizeof *e, cap - m, f);
            if (got == 0) break;
            m += got;
            continue;
        }
        if (!fgets(line, sizeof line, f)) break;
        unsigned long long s, d;
        long long t = 0;
        if (line[0] == '#') continue;
        int k = sscanf(line, "%llu %llu %lld", &s, &d, &t);
        if (k < 2 || (need_t && k < 3)) continue;
        e[m++] = (edge){s, d, t};
    }
    fclose(f);
    *n = m;
    return e;
}

#endif
