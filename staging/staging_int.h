/*
 * staging/staging_int.h -- the CUDA half of staging (staging_cuda.c). Every
 * function returns 0 or a GSNAP_E* code; with GSNAP_NO_CUDA, or when no CUDA
 * runtime loads at run time (dlopen, see staging_cuda.c), they report
 * GSNAP_ENOTSUP (open) so the stager stays on the host path.
 */
#ifndef GSNAP_STAGING_INT_H
#define GSNAP_STAGING_INT_H
#include <stddef.h>

/* A stream and nbuf events on `device`; GSNAP_ENOTSUP when no CUDA runtime
 * loads, no device is present, or the device cannot be used. */
int gsnap_stage__cuda_open(int device, unsigned nbuf, void **ctx);
void gsnap_stage__cuda_close(void *ctx);
/* Pinned host buffer and device buffer of n bytes for slot i. */
int gsnap_stage__cuda_alloc(void *ctx, unsigned i, size_t n, void **host, void **dev);
void gsnap_stage__cuda_free(void *ctx, unsigned i, void *host, void *dev);
/* cudaMemcpyAsync host -> dev on the stream, then record slot i's event. */
int gsnap_stage__cuda_copy(void *ctx, unsigned i, void *dev, const void *host, size_t n);
/* Record slot i's retire event on the consumer's stream; the slot's next
 * copy makes the stager's stream wait for it. */
int gsnap_stage__cuda_retire(void *ctx, unsigned i, void *stream);
/* Wait for slot i's event. */
int gsnap_stage__cuda_wait(void *ctx, unsigned i);
/* Synchronous device -> host copy (tests). */
int gsnap_stage__cuda_read(void *ctx, void *dst, const void *dev, size_t n);
#endif
