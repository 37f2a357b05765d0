/* common/decimal.c -- strict decimal fields of the dump text (store/load.c,
 * features/dump_attr.c): digits only, no overflow. */
#include "common/common.h"

int gsnap_dec_u64(const char **pp, uint64_t *out) {
    const char *p = *pp;
    uint64_t v = 0;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *pp = p;
    *out = v;
    return 0;
}

int gsnap_dec_i64(const char **pp, int64_t *out) {
    int neg = **pp == '-';
    uint64_t mag;
    if (neg) (*pp)++;
    if (gsnap_dec_u64(pp, &mag)) return -1;
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX) return -1;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}
