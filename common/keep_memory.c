/*
 * common/keep_memory.c -- gsnap_keep_freed_memory: an opt-in, process-wide
 * allocator policy for programs that ingest and query in one process.
 *
 * Why: a commit and its merges allocate and free buffers of MiBs to
 * hundreds of MiB (batch sorts, run encoders, LMDB's dirty pages, the merge
 * outputs). glibc gives such blocks back to the kernel on free (munmap of
 * its mmap-served blocks, trimming the heap's top), and the next commit
 * faults them in again. On a VM, giving memory back also disturbs the
 * threads that keep running: right after a process unmaps 1 GiB, timed
 * 0.3 us loops on this project's 2-core VM took p99 7-26 us instead of
 * 0.4-0.6 us for the next few milliseconds (bench/free_stall.c); an
 * in-memory CSR in a process that had just ingested R-MAT SCALE 18 answered
 * 1-hop queries with p99 7.3-10.3 us, and 1.2-1.3 us when the process had
 * kept its memory (docs/benchmarks.md, "Queries
 * under ingest: memory kept"). The price: the resident size stays near its
 * peak, and with one arena all threads share malloc's lock. The library
 * never changes the allocator of a program on its own: the program asks.
 */
#include "common/common.h"
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int gsnap_keep_freed_memory(void) {
#ifdef __GLIBC__
    /* Both are needed: without mmap, large blocks come from the heap and the
     * heap's top is trimmed; without the trim, they are mmapped and unmapped
     * (each alone measured no better than neither). One arena: a thread's
     * arena holds at most 64 MiB heaps, so a merge thread's large buffers
     * would be mapped afresh each time. mallopt returns 1 on success. */
    int ok = mallopt(M_MMAP_MAX, 0);
    ok &= mallopt(M_TRIM_THRESHOLD, INT_MAX);
    ok &= mallopt(M_ARENA_MAX, 1);
    return ok == 1 ? 0 : GSNAP_ENOTSUP;
#else
    return GSNAP_ENOTSUP;
#endif
}
