/*
 * bench/free_stall.c -- what giving memory back to the kernel costs the
 * threads that keep running (docs/benchmarks.md, "Queries under ingest:
 * memory kept"; the reason for gsnap_keep_freed_memory).
 *
 *   free_stall [--unmap-mib 1024] [--windows 10] [--loops 20000] [--out FILE]
 *
 * Times short loops (4 dependent-free random reads from a 64 MiB array, a
 * fraction of a microsecond, each timed alone like a point query) in
 * windows of --loops, twice in one process: first with nothing before them
 * (the baseline), then right after touching and unmapping --unmap-mib MiB.
 * Prints each window's p50, p99 and how many loops took over 5 us, and the
 * first window after the unmap against the baseline's first window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "bench/bench_util.h"

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define ARRAY_WORDS (8u << 20) /* 64 MiB */

/* windows * loops timed loops into lat (microseconds). */
static void timed(const uint64_t *arr, double *lat, size_t n, uint64_t *rng, volatile uint64_t *sink) {
    for (size_t i = 0; i < n; i++) {
        double t0 = now();
        uint64_t s = 0;
        for (int k = 0; k < 4; k++) s += arr[mix(rng) & (ARRAY_WORDS - 1)];
        lat[i] = (now() - t0) * 1e6;
        *sink += s;
    }
}

/* Per window: p50, p99, loops over 5 us; returns the first window's p99. */
static double report(const char *what, double *lat, unsigned windows, size_t loops) {
    double first = 0;
    for (unsigned w = 0; w < windows; w++) {
        double *v = lat + (size_t)w * loops;
        size_t slow = 0;
        for (size_t i = 0; i < loops; i++) slow += v[i] > 5.0;
        qsort(v, loops, sizeof *v, cmp_dbl);
        double p99 = v[(size_t)(0.99 * (double)(loops - 1))];
        if (w == 0) first = p99;
        say("| %s | %u | %.3f | %.3f | %zu |\n", what, w, v[loops / 2], p99, slow);
    }
    return first;
}

int main(int argc, char **argv) {
    size_t unmap_mib = 1024, loops = 20000;
    unsigned windows = 10;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "free_stall: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--unmap-mib")) unmap_mib = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--windows")) windows = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--loops")) loops = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--out")) out = v;
        else { fprintf(stderr, "free_stall: unknown option %s\n", a); return 2; }
    }
    if (!windows || !loops || !unmap_mib) { fprintf(stderr, "free_stall: values must be > 0\n"); return 2; }
    if (out && !(bench_out = fopen(out, "w"))) { perror(out); return 1; }
    uint64_t *arr = malloc((size_t)ARRAY_WORDS * sizeof *arr), rng = 1;
    double *lat = malloc((size_t)windows * loops * sizeof *lat);
    volatile uint64_t sink = 0;
    if (!arr || !lat) { fprintf(stderr, "free_stall: out of memory\n"); return 1; }
    for (size_t i = 0; i < ARRAY_WORDS; i++) arr[i] = mix(&rng);
    say("# free_stall: %u windows of %zu timed loops (4 random reads from 64 MiB each), before and right "
        "after touching and unmapping %zu MiB\n\n| when | window | p50 us | p99 us | loops over 5 us |\n"
        "|---|---:|---:|---:|---:|\n", windows, loops, unmap_mib);
    timed(arr, lat, (size_t)windows * loops, &rng, &sink);
    double base = report("baseline", lat, windows, loops);
    size_t bytes = unmap_mib << 20;
    unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    memset(p, 1, bytes);
    munmap(p, bytes);
    timed(arr, lat, (size_t)windows * loops, &rng, &sink);
    double after = report("after the unmap", lat, windows, loops);
    say("\nfirst window's p99 after the unmap: %.1fx the baseline's (sink %llu)\n", after / base,
        (unsigned long long)(sink & 1));
    if (bench_out) fclose(bench_out);
    free(arr);
    free(lat);
    return 0;
}
