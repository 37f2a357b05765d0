/*
 * fuzz/fuzz_parse.c -- libFuzzer target for the edge-list line parser,
 * gsnap_parse_edge_line (ingest/ingest_text.c).
 *
 * Input: byte 0 picks the size of the error buffer (0..63) and the line
 * number; the rest is the line (not NUL-terminated: ASan sees any overread).
 * Checks, besides "no crash, no UB, no leak":
 *   - the result is GSNAP_OK, GSNAP_NOTFOUND or GSNAP_EPARSE;
 *   - EPARSE writes a NUL-terminated message inside the error buffer and
 *     never past it (guard bytes);
 *   - an accepted line, printed back as "src dst t op", parses to the same
 *     event (round trip).
 */
#include "graphsnap.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t errlen = data[0] % 64;
    /* line 1 for a few first bytes: the byte order mark is skipped there only */
    uint64_t line_no = data[0] < 16 ? 1 : (uint64_t)data[0] * 1000003u;
    const char *line = (const char *)data + 1;
    size_t len = size - 1;
    char *copy = malloc(len ? len : 1); /* exact size: overreads are caught */
    if (!copy) return 0;
    memcpy(copy, line, len);
    char err[64 + 8];
    memset(err, 0x5a, sizeof err);
    uint64_t src = 0, dst = 0;
    int64_t t = 0;
    int del = -1;
    int rc = gsnap_parse_edge_line(copy, len, line_no, &src, &dst, &t, &del, errlen ? err : NULL, errlen);
    if (rc != GSNAP_OK && rc != GSNAP_NOTFOUND && rc != GSNAP_EPARSE) abort();
    for (size_t i = errlen; i < sizeof err; i++)
        if ((unsigned char)err[i] != 0x5a) abort(); /* wrote past errlen */
    if (rc == GSNAP_EPARSE && errlen && !memchr(err, 0, errlen)) abort();
    if (rc == GSNAP_OK) {
        if (del != 0 && del != 1) abort();
        char again[128];
        int n = snprintf(again, sizeof again, "%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%s", src, dst, t,
                         del ? "del" : "add");
        uint64_t s2 = 0, d2 = 0;
        int64_t t2 = 0;
        int del2 = -1;
        char e2[128];
        int rc2 = gsnap_parse_edge_line(again, (size_t)n, line_no + 1, &s2, &d2, &t2, &del2, e2, sizeof e2);
        if (rc2 != GSNAP_OK || s2 != src || d2 != dst || t2 != t || del2 != del) {
            fprintf(stderr, "round trip: '%s' -> rc %d (%s)\n", again, rc2, e2);
            abort();
        }
    }
    free(copy);
    return 0;
}
