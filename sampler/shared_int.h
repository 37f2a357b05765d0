/*
 * sampler/shared_int.h -- private to sampler/shared*.c (the shared host
 * tier) and the hooks that call it (open.c, refresh.c, cache.c).
 *
 * File format of a published image (GSNAP_SHM_VERSION, 2), little endian:
 *   header, 4096 bytes: gsnap_samp__shm_hdr, the rest zero;
 *   then, each array starting on a 4096-byte boundary: deg u32[nnodes];
 *   per cache i: cnt u32[nnodes], ver u64[nnodes], ids u64[nnodes *
 *   max(cap_i, 1)] (slots past cnt zero), and when cap_i > 0 the serving view
 *   u32[nnodes * (2 + cap_i)] (count, stamp, then the ids; hot.c's layout).
 *   payload_sum = XXH3-64 of bytes [4096, file_size); hdr_sum = XXH3-64 of
 *   the header struct with hdr_sum zero.
 */
#ifndef GSNAP_SAMPLER_SHARED_INT_H
#define GSNAP_SAMPLER_SHARED_INT_H

#include "sampler/sampler_int.h"
#include <limits.h>

#define GSNAP_SHM_MAGIC 0x474d4948534e5347ull /* "GSNSHIMG" */
#define GSNAP_SHM_VERSION 2u /* 2: generation stamps are 30 bits (sampler_int.h GSNAP_SAMP_LZ_MASK) */
#define SHM_HDR 4096u
#define GSNAP_SHM_KEYMAX 1536u

typedef struct {
    uint64_t magic;
    uint32_t version, hdr_size;
    uint64_t file_size, gen, nnodes;
    uint32_t ncache, keylen;
    uint32_t caps[GSNAP_MAX_LAYERS + 1];
    uint32_t pad;
    uint64_t payload_sum, hdr_sum;
    char key[GSNAP_SHM_KEYMAX]; /* what the image is a function of (text) */
} gsnap_samp__shm_hdr;

typedef struct gsnap_samp__shared gsnap_samp__shared;
struct gsnap_samp__shared {
    char dir[1024];
    char key[GSNAP_SHM_KEYMAX];
    size_t keylen;
    uint64_t khash;  /* XXH3 of key: the file name */
    uint64_t snapv;  /* snapshot version the key was made for */
    int follow;      /* every generation is shared (else only the one opened on) */
    char why[PATH_MAX + 160];  /* the last refusal or failure, for the CLI */
    int err;                   /* errno of the last failed publication (0: none) */
    uint64_t removed;          /* files removed by shared_gc */
};

/* (Re)make s->shm's key from the sampler's parameters. */
int gsnap_samp__shared_key(gsnap_sampler *s);

/* shared_gc.c: fd (open on path) share-locked; then 0, -1 when the name
 * no longer shows that file (removed between the open and the lock), or -2
 * when another process held an exclusive lock on it through
 * GSNAP_SHM_LOCK_TRIES tries 1 ms apart (never an unbounded wait: the file
 * may be another user's or held by a stopped process). */
#define GSNAP_SHM_LOCK_TRIES 100
int gsnap_samp__shared_locked(int fd, const char *path);
/* Remove the unlocked files of s's key: generations below gen - 1 (at_open:
 * all but gen) and temporary files of writers that are gone. */
void gsnap_samp__shared_gc(gsnap_sampler *s, uint64_t gen, int at_open);

#endif
