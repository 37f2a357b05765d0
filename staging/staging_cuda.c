/*
 * staging/staging_cuda.c -- CUDA runtime calls of staging: one stream per
 * stager, one event per slot, pinned host buffers (cudaHostAlloc), device
 * buffers (cudaMalloc), cudaMemcpyAsync.
 *
 * The CUDA runtime is loaded at run time, never linked: the first
 * gsnap_stage__cuda_open dlopen()s libcudart and dlsym()s the seventeen
 * functions below, so libgraphsnap.so has no DT_NEEDED entry for libcudart
 * and a binary built where CUDA exists also runs where it does not (the
 * stager then stays on host buffers). The build needs neither the toolkit
 * nor its headers: the few types, constants and prototypes used here are
 * declared below; they are part of the CUDA runtime's stable C ABI (the same
 * values since CUDA 4). Search order for the library:
 *   1. $GSNAP_CUDART (a file name or path; when set, only it is tried),
 *   2. libcudart.so.13, .so.12, .so.11.0 (versioned sonames: no -dev symlink
 *      needed), then libcudart.so, through the dynamic loader's path,
 *   3. the same names in GSNAP_CUDA_LIBDIR (a build-time default,
 *      $(CUDA_HOME)/lib64, for toolkits the loader does not know about).
 * When none loads, or a symbol is missing, or cudaGetDeviceCount fails or
 * answers 0, open reports GSNAP_ENOTSUP and staging uses host buffers.
 * A build with GSNAP_NO_CUDA defined compiles none of this (sanitizer
 * builds: the runtime's allocations confuse LeakSanitizer).
 */
#include "graphsnap.h"
#include "staging/staging_int.h"
#include <stdlib.h>

#ifndef GSNAP_NO_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef GSNAP_CUDA_LIBDIR
#define GSNAP_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

/* ---- the slice of cuda_runtime_api.h that staging uses ------------------ */
typedef int cuda_err;         /* cudaError_t (an enum: int-sized) */
typedef void *cuda_stream;    /* cudaStream_t = struct CUstream_st * */
typedef void *cuda_event;     /* cudaEvent_t = struct CUevent_st * */
enum {
    CUDA_SUCCESS = 0,                 /* cudaSuccess */
    CUDA_ERR_MEMORY_ALLOCATION = 2,   /* cudaErrorMemoryAllocation */
    CUDA_MEMCPY_H2D = 1,              /* cudaMemcpyHostToDevice */
    CUDA_MEMCPY_D2H = 2,              /* cudaMemcpyDeviceToHost */
    CUDA_STREAM_NON_BLOCKING = 0x01,  /* cudaStreamNonBlocking */
    CUDA_EVENT_DISABLE_TIMING = 0x02, /* cudaEventDisableTiming */
    CUDA_HOST_ALLOC_DEFAULT = 0x00    /* cudaHostAllocDefault */
};

static struct {
    void *lib;
    cuda_err (*GetDeviceCount)(int *);
    cuda_err (*GetLastError)(void);
    cuda_err (*SetDevice)(int);
    cuda_err (*StreamCreateWithFlags)(cuda_stream *, unsigned);
    cuda_err (*StreamSynchronize)(cuda_stream);
    cuda_err (*StreamDestroy)(cuda_stream);
    cuda_err (*EventCreateWithFlags)(cuda_event *, unsigned);
    cuda_err (*EventRecord)(cuda_event, cuda_stream);
    cuda_err (*StreamWaitEvent)(cuda_stream, cuda_event, unsigned);
    cuda_err (*EventSynchronize)(cuda_event);
    cuda_err (*EventDestroy)(cuda_event);
    cuda_err (*HostAlloc)(void **, size_t, unsigned);
    cuda_err (*FreeHost)(void *);
    cuda_err (*Malloc)(void **, size_t);
    cuda_err (*Free)(void *);
    cuda_err (*MemcpyAsync)(void *, const void *, size_t, int, cuda_stream);
    cuda_err (*Memcpy)(void *, const void *, size_t, int);
} rt;
static int rt_ok;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void *open_lib(void) {
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                        "libcudart.so"};
    const char *env = getenv("GSNAP_CUDART");
    char path[512];
    void *h;
    if (env && *env) return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) return h;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", GSNAP_CUDA_LIBDIR, names[i]);
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
    }
    return NULL;
}

/* dlsym into a function pointer without the object/function pointer cast
 * that ISO C leaves undefined (POSIX guarantees the representation). */
#define SYM(field, name)                                                   \
    do {                                                                   \
        void *p_ = dlsym(rt.lib, name);                                    \
        if (!p_) goto fail;                                                \
        memcpy(&rt.field, &p_, sizeof p_);                                 \
    } while (0)

static void load_runtime(void) {
    rt.lib = open_lib();
    if (!rt.lib) return;
    SYM(GetDeviceCount, "cudaGetDeviceCount");
    SYM(GetLastError, "cudaGetLastError");
    SYM(SetDevice, "cudaSetDevice");
    SYM(StreamCreateWithFlags, "cudaStreamCreateWithFlags");
    SYM(StreamSynchronize, "cudaStreamSynchronize");
    SYM(StreamDestroy, "cudaStreamDestroy");
    SYM(EventCreateWithFlags, "cudaEventCreateWithFlags");
    SYM(EventRecord, "cudaEventRecord");
    SYM(StreamWaitEvent, "cudaStreamWaitEvent");
    SYM(EventSynchronize, "cudaEventSynchronize");
    SYM(EventDestroy, "cudaEventDestroy");
    SYM(HostAlloc, "cudaHostAlloc");
    SYM(FreeHost, "cudaFreeHost");
    SYM(Malloc, "cudaMalloc");
    SYM(Free, "cudaFree");
    SYM(MemcpyAsync, "cudaMemcpyAsync");
    SYM(Memcpy, "cudaMemcpy");
    rt_ok = 1;
    return;
fail:
    /* an incomplete runtime is no runtime; the handle stays loaded (closing
     * a library that may have started threads is not worth the risk) */
    return;
}
#undef SYM

typedef struct {
    int device;
    cuda_stream stream;
    unsigned nbuf;
    cuda_event *ev;     /* slot i's copy is done */
    cuda_event *gone;   /* slot i's consumers are done (gsnap_stager_retire) */
    unsigned char *retired; /* gone[i] was recorded and not yet waited for */
} cuda_ctx;

static int cerr(cuda_err e) {
    if (e == CUDA_SUCCESS) return 0;
    return e == CUDA_ERR_MEMORY_ALLOCATION ? GSNAP_ENOMEM : GSNAP_EIO;
}

int gsnap_stage__cuda_open(int device, unsigned nbuf, void **out) {
    int n = 0;
    *out = NULL;
    pthread_once(&rt_once, load_runtime);
    if (!rt_ok) return GSNAP_ENOTSUP;
    if (rt.GetDeviceCount(&n) != CUDA_SUCCESS || n <= 0 || device >= n) {
        (void)rt.GetLastError(); /* clear the sticky error of the failed query */
        return GSNAP_ENOTSUP;
    }
    if (rt.SetDevice(device) != CUDA_SUCCESS) return GSNAP_ENOTSUP;
    cuda_ctx *c = calloc(1, sizeof *c);
    if (!c) return GSNAP_ENOMEM;
    c->device = device;
    c->nbuf = nbuf;
    c->ev = calloc(nbuf, sizeof *c->ev);
    c->gone = calloc(nbuf, sizeof *c->gone);
    c->retired = calloc(nbuf, 1);
    if (!c->ev || !c->gone || !c->retired) {
        free(c->ev);
        free(c->gone);
        free(c->retired);
        free(c);
        return GSNAP_ENOMEM;
    }
    if (rt.StreamCreateWithFlags(&c->stream, CUDA_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        free(c->ev);
        free(c->gone);
        free(c->retired);
        free(c);
        return GSNAP_ENOTSUP;
    }
    for (unsigned i = 0; i < nbuf; i++) {
        if (rt.EventCreateWithFlags(&c->ev[i], CUDA_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
            rt.EventCreateWithFlags(&c->gone[i], CUDA_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            if (c->ev[i]) rt.EventDestroy(c->ev[i]);
            c->nbuf = i;
            gsnap_stage__cuda_close(c);
            return GSNAP_ENOTSUP;
        }
    }
    *out = c;
    return 0;
}

void gsnap_stage__cuda_close(void *ctx) {
    cuda_ctx *c = ctx;
    if (!c) return;
    rt.StreamSynchronize(c->stream);
    for (unsigned i = 0; i < c->nbuf; i++) {
        rt.EventDestroy(c->ev[i]);
        rt.EventDestroy(c->gone[i]);
    }
    rt.StreamDestroy(c->stream);
    free(c->ev);
    free(c->gone);
    free(c->retired);
    free(c);
}

int gsnap_stage__cuda_alloc(void *ctx, unsigned i, size_t n, void **host, void **dev) {
    cuda_ctx *c = ctx;
    (void)i;
    rt.SetDevice(c->device);
    int rc = cerr(rt.HostAlloc(host, n, CUDA_HOST_ALLOC_DEFAULT));
    if (rc) { *host = NULL; return rc; }
    rc = cerr(rt.Malloc(dev, n));
    if (rc) {
        rt.FreeHost(*host);
        *host = NULL;
        *dev = NULL;
    }
    return rc;
}

void gsnap_stage__cuda_free(void *ctx, unsigned i, void *host, void *dev) {
    cuda_ctx *c = ctx;
    if (!c) return; /* no runtime: nothing was allocated through it */
    if (i < c->nbuf) rt.EventSynchronize(c->ev[i]);
    if (host) rt.FreeHost(host);
    if (dev) rt.Free(dev);
}

int gsnap_stage__cuda_retire(void *ctx, unsigned i, void *stream) {
    cuda_ctx *c = ctx;
    int rc = cerr(rt.EventRecord(c->gone[i], stream));
    if (!rc) c->retired[i] = 1;
    return rc;
}

int gsnap_stage__cuda_copy(void *ctx, unsigned i, void *dev, const void *host, size_t n) {
    cuda_ctx *c = ctx;
    int rc = 0;
    if (c->retired[i]) { /* the slot's last readers first (on the GPU; no host wait) */
        if ((rc = cerr(rt.StreamWaitEvent(c->stream, c->gone[i], 0)))) return rc;
        c->retired[i] = 0;
    }
    rc = cerr(rt.MemcpyAsync(dev, host, n, CUDA_MEMCPY_H2D, c->stream));
    if (!rc) rc = cerr(rt.EventRecord(c->ev[i], c->stream));
    return rc;
}

int gsnap_stage__cuda_wait(void *ctx, unsigned i) {
    cuda_ctx *c = ctx;
    return cerr(rt.EventSynchronize(c->ev[i]));
}

int gsnap_stage__cuda_read(void *ctx, void *dst, const void *dev, size_t n) {
    (void)ctx;
    return cerr(rt.Memcpy(dst, dev, n, CUDA_MEMCPY_D2H));
}

#else /* GSNAP_NO_CUDA: the stager always uses host buffers */

int gsnap_stage__cuda_open(int device, unsigned nbuf, void **ctx) {
    (void)device;
    (void)nbuf;
    *ctx = NULL;
    return GSNAP_ENOTSUP;
}
void gsnap_stage__cuda_close(void *ctx) { (void)ctx; }
int gsnap_stage__cuda_alloc(void *ctx, unsigned i, size_t n, void **host, void **dev) {
    (void)ctx; (void)i; (void)n; (void)host; (void)dev;
    return GSNAP_ENOTSUP;
}
void gsnap_stage__cuda_free(void *ctx, unsigned i, void *host, void *dev) {
    (void)ctx; (void)i; (void)host; (void)dev;
}
int gsnap_stage__cuda_copy(void *ctx, unsigned i, void *dev, const void *host, size_t n) {
    (void)ctx; (void)i; (void)dev; (void)host; (void)n;
    return GSNAP_ENOTSUP;
}
int gsnap_stage__cuda_wait(void *ctx, unsigned i) { (void)ctx; (void)i; return GSNAP_ENOTSUP; }
int gsnap_stage__cuda_retire(void *ctx, unsigned i, void *stream) {
    (void)ctx; (void)i; (void)stream;
    return GSNAP_ENOTSUP;
}
int gsnap_stage__cuda_read(void *ctx, void *dst, const void *dev, size_t n) {
    (void)ctx; (void)dst; (void)dev; (void)n;
    return GSNAP_ENOTSUP;
}
#endif
