/* tests/test_keep_memory.c -- gsnap_keep_freed_memory: after it, a large
 * block the process frees stays resident and is reused by the next large
 * allocation; without it (the control), glibc gives the block back. Each case
 * runs in a child of its own, since the setting is process-wide. Under an
 * allocator that is not glibc's (a sanitizer's, valgrind's) the test skips. */
#include "test.h"
#include <sys/wait.h>

#define BIG (64u << 20)

static long rss_bytes(void) {
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
    fclose(f);
    return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

/* Write a byte of every page of the BIG bytes at p (volatile: not elided as
 * dead stores before the free). */
static void touch(unsigned char *p, unsigned char v) {
    for (size_t i = 0; i < BIG; i += 4096) ((volatile unsigned char *)p)[i] = v;
}
/* Allocate BIG bytes, touch every page, free them: how much of it stayed
 * resident (bytes of RSS growth after the free). */
static long kept_after_free(void) {
    long r0 = rss_bytes();
    unsigned char *p = malloc(BIG);
    if (!p || r0 < 0) return -1;
    touch(p, 1);
    free(p);
    return rss_bytes() - r0;
}

/* Exit codes of the children: 0 kept, 1 given back, 2 could not measure,
 * 3 the call failed, 4 kept but not reused. */
static int child(int keep) {
    if (keep) {
        int rc = gsnap_keep_freed_memory();
        if (rc) { fprintf(stderr, "gsnap_keep_freed_memory: %s\n", gsnap_strerror(rc)); return 3; }
        if (gsnap_keep_freed_memory() != 0) return 3; /* again: still 0 */
    }
    long k = kept_after_free();
    fprintf(stderr, "%s: %ld KiB of %u KiB stayed resident after the free\n", keep ? "kept" : "control",
            k / 1024, BIG / 1024);
    if (k < 0) return 2;
    if (k < (long)(BIG / 8)) return 1;
    if (keep) { /* the next large allocation reuses those pages: RSS does not grow again */
        long r0 = rss_bytes();
        unsigned char *p = malloc(BIG);
        if (!p) return 2;
        touch(p, 2);
        long grew = rss_bytes() - r0;
        free(p);
        fprintf(stderr, "kept: the second block grew RSS by %ld KiB\n", grew / 1024);
        if (grew > (long)(BIG / 8)) return 4;
    }
    return 0;
}

static int run_child(int keep) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) _exit(child(keep));
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

int main(void) {
    /* valgrind's allocator replaces glibc's, gives large blocks back, and
     * takes mallopt without acting on it (found by its preload, as cli/main.c
     * finds it) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("built with a sanitizer, whose allocator replaces glibc's");
#endif
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) SKIP("valgrind's allocator does not act on mallopt");
    int control = run_child(0);
    if (control == 2) SKIP("cannot read /proc/self/statm");
    if (control == 0) SKIP("the allocator keeps freed blocks already (not glibc's: valgrind or a sanitizer)");
    CHECK_MSG(control == 1, "control child: %d", control);
    int kept = run_child(1);
    CHECK_MSG(kept == 0, "with gsnap_keep_freed_memory: child exit %d (1 given back, 3 call failed, "
                         "4 not reused)", kept);
    TEST_DONE();
}
