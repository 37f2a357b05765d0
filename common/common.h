/*
 * common/common.h -- the base layer every library module may include:
 * error messages, clocks, growable arrays, fixed-width byte codecs, strict
 * decimal fields and the problem reporter used by every `check`. It depends on nothing but
 * graphsnap.h and the C library. Not installed, not public.
 */
#ifndef GSNAP_COMMON_H
#define GSNAP_COMMON_H

#include "graphsnap.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define GSNAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GSNAP_PRINTF(f, a)
#endif

/* ---- error messages (common/errors.c) ------------------------------------ */

/** Record a printf-style detail message in this thread's buffer, tagged with
 *  `owner` (a handle: the message is only shown for that handle); returns
 *  `code`. */
int gsnap_err_set(const void *owner, int code, const char *fmt, ...) GSNAP_PRINTF(3, 4);
int gsnap_err_vset(const void *owner, int code, const char *fmt, va_list ap);
/** This thread's last message for `owner`, or "" when the last message
 *  belongs to another handle (or there is none). */
const char *gsnap_err_msg(const void *owner);
/** This thread's last message, whatever its owner. */
const char *gsnap_err_last(void);
/** Record the message of a failed open (no handle exists yet); returns code.
 *  gsnap_last_open_error() reads it back. */
int gsnap_err_open(int code, const char *fmt, ...) GSNAP_PRINTF(2, 3);
/** Write a printf-style message into a caller's buffer (err may be NULL or
 *  errlen 0: nothing is written); returns code. */
int gsnap_err_buf(char *err, size_t errlen, int code, const char *fmt, ...) GSNAP_PRINTF(4, 5);

/* ---- clock (common/clock.c) ---------------------------------------------- */

/** Seconds on the monotonic clock (for durations only). */
double gsnap_now(void);

/* ---- growable arrays (common/vec.c) -------------------------------------- */

/** Grow *p (capacity *cap elements of es bytes) to hold at least n elements,
 *  doubling from 64. 0 or GSNAP_ENOMEM (then *p and *cap are unchanged). */
int gsnap_vec_reserve(void **p, size_t *cap, size_t n, size_t es);

/** A growable array of 64-bit ids. */
typedef struct { uint64_t *v; size_t n, cap; } gsnap_u64vec;

static inline int gsnap_u64vec_push(gsnap_u64vec *a, uint64_t x) {
    if (a->n == a->cap && gsnap_vec_reserve((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v))
        return GSNAP_ENOMEM;
    a->v[a->n++] = x;
    return 0;
}
static inline int gsnap_u64vec_reserve(gsnap_u64vec *a, size_t n) {
    return gsnap_vec_reserve((void **)&a->v, &a->cap, n, sizeof *a->v);
}

/* ---- fixed-width byte codecs --------------------------------------------- */
/* Big-endian (keys that must sort as numbers in LMDB) and little-endian
 * (slab and table records, host order on the supported platforms). */

static inline void gsnap_put_be64(unsigned char *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static inline uint64_t gsnap_get_be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}
static inline void gsnap_put_be32(unsigned char *p, uint32_t v) {
    for (int i = 3; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static inline void gsnap_put_le64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void gsnap_put_le32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline uint64_t gsnap_get_le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t gsnap_get_le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* ---- strict decimal fields (common/decimal.c) ---------------------------- */

/** A decimal u64 at *pp: digits only (no sign, no blanks), no overflow.
 *  0 and *pp past the digits, or -1 (*pp and *out untouched). */
int gsnap_dec_u64(const char **pp, uint64_t *out);
/** The same with an optional '-' and the int64_t range; on -1, *pp may have
 *  passed the sign. */
int gsnap_dec_i64(const char **pp, int64_t *out);
/** The value of a hex digit (0-9, a-f, A-F), or -1. */
static inline int gsnap_hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* ---- problem reporting for `check` (common/problem.c) -------------------- */

/** Where a checker sends the problems it finds, and how many it found;
 *  and where it reports its progress (units of work done of total). */
typedef struct {
    gsnap_problem_fn fn; /* may be NULL: problems are only counted */
    void *ctx;
    uint64_t count;
    gsnap_progress_fn progress; /* may be NULL */
    void *pctx;
    uint64_t done, total;
} gsnap_reporter;

/** Format one problem (at most 511 bytes), count it and pass it on. */
void gsnap_report(gsnap_reporter *r, const char *fmt, ...) GSNAP_PRINTF(2, 3);

/** Add n units to r->done; call r->progress(phase, done, total) (done capped
 *  at total) when done crosses a multiple of 2^shift, or always with force. */
void gsnap_report_progress(gsnap_reporter *r, const char *phase, uint64_t n, unsigned shift, int force);

#endif
