/* tests/test.h -- minimal assertion helpers shared by the test programs.
 * A test program exits 0 (pass), 1 (fail) or 77 (skip). */
#ifndef GSNAP_TEST_H
#define GSNAP_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include "graphsnap.h"

static int test_failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    test_failures++; } } while (0)
#define CHECK_MSG(cond, ...) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); test_failures++; } } while (0)
/* Abort the test at once when a call does not return GSNAP_OK. */
#define OK(call) do { int rc_ = (call); if (rc_ != 0) { \
    fprintf(stderr, "%s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, rc_, \
            gsnap_strerror(rc_)); exit(1); } } while (0)
#define SKIP(...) do { printf(__VA_ARGS__); putchar('\n'); exit(77); } while (0)
#define TEST_DONE() do { if (test_failures) { fprintf(stderr, "%d check(s) failed\n", \
    test_failures); return 1; } printf("ok\n"); return 0; } while (0)

/* A fresh, empty directory under $TMPDIR (or /tmp); caller owns the string. */
static inline char *test_tmpdir(const char *tag) {
    const char *base = getenv("TMPDIR");
    char *p = malloc(512);
    snprintf(p, 512, "%s/gsnap-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(p)) { perror("mkdtemp"); exit(1); }
    return p;
}
/* rm -rf the directory (test cleanup). */
static inline void test_rmdir(const char *p) {
    char cmd[600]; snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", p);
}
/* Test scale: GSNAP_TEST_SMALL=1 (valgrind) shrinks randomized tests. */
static inline int test_small(void) { const char *s = getenv("GSNAP_TEST_SMALL"); return s && *s == '1'; }

/* splitmix64: the tests' own seedable generator. */
static inline uint64_t test_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* FNV-1a of n bytes: a batch's fingerprint, to compare runs byte for byte. */
static inline uint64_t test_fnv(const void *p, size_t n) {
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

/* A database at dir with one batch: every node v < n gets dmin + a draw
 * below dspread in-edges from random sources (times 0, 1, ...). */
static inline void test_random_in_db(const char *dir, uint64_t n, uint64_t dmin, uint64_t dspread,
                                     uint64_t seed) {
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopts, &db));
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < n; v++) {
        uint64_t d = dmin + test_rand(&seed) % dspread;
        for (uint64_t i = 0; i < d; i++) OK(gsnap_batch_add(b, test_rand(&seed) % n, v, (int64_t)i));
    }
    OK(gsnap_batch_commit(b, NULL));
    gsnap_db_close(db);
}
#endif
