/* fuzz/fuzz_seed.h -- shared by the database-backed fuzz targets: write one
 * seed input "target index, flags byte, value" for GSNAP_FUZZ_SEEDS=DIR. */
#ifndef GSNAP_FUZZ_SEED_H
#define GSNAP_FUZZ_SEED_H
#include <stdio.h>

static inline void fuzz_write_seed(const char *dir, int kind, size_t idx, const void *val, size_t vlen) {
    char p[600];
    snprintf(p, sizeof p, "%s/kind%d-target%zu", dir, kind, idx);
    FILE *f = fopen(p, "wb");
    if (!f) return;
    fputc((int)idx, f);
    fputc(0, f);
    fwrite(val, 1, vlen, f);
    fclose(f);
}
#endif
