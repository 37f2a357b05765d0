/*
 * fuzz/fuzz_ingest_file.c -- libFuzzer target: whole edge files (many lines,
 * headers, BOMs, comments, bad lines, odd separators) through
 * gsnap_ingest_text into a fresh database, then queries on what was stored.
 *
 * Input: byte 0 = flags (bit 0: skip_bad; bits 1-3: batch size 1..8 events
 * so that one file commits many versions and the store merges runs; bit 4:
 * keep only IN), the rest is the file. Per input a fresh database is created
 * in a temporary directory (sync NONE) and removed afterwards.
 * Checks, besides "no crash, no UB, no leak, no hang":
 *   - ingest returns OK, EPARSE or ERANGE (never anything else); EPARSE
 *     without skip_bad names a line ("<name>:<line>") in the message;
 *   - the events committed equal the lines the line parser accepts (when
 *     the whole file was accepted) -- the file reader and the line parser
 *     agree on where lines start and end;
 *   - every neighbour a query returns (both directions, latest and the
 *     first committed version, several times) is an add event of the file,
 *     the degree equals the neighbour count, and gsnap_db_check is clean.
 */
#include "graphsnap.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    uint64_t src, dst;
    int64_t t;
    int del;
} ev;

static char g_base[256];
static int g_seq;

static void rm_db(const char *dir) {
    static const char *files[] = {"data.mdb", "lock.mdb"};
    char p[512];
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void cleanup(void) { rmdir(g_base); }

static int is_add_of(const ev *e, size_t n, uint64_t a, uint64_t b, int64_t t) {
    for (size_t i = 0; i < n; i++)
        if (!e[i].del && e[i].src == a && e[i].dst == b && e[i].t == t) return 1;
    return 0;
}

/* Split like the file reader: lines end at '\n'; a '\r' before it is part of
 * what the parser sees (the parser strips it). A final line without '\n'
 * counts. */
static size_t parse_all(const uint8_t *p, size_t n, ev **out) {
    ev *e = NULL;
    size_t cnt = 0, cap = 0, line = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != '\n') j++;
        line++;
        ev x;
        /* the parser skips a BOM on line 1 itself, as the ingest relies on */
        int rc = gsnap_parse_edge_line((const char *)p + i, j - i, line, &x.src, &x.dst, &x.t, &x.del, NULL, 0);
        if (rc == GSNAP_OK) {
            if (cnt == cap) {
                cap = cap ? cap * 2 : 64;
                e = realloc(e, cap * sizeof *e);
                if (!e) abort();
            }
            e[cnt++] = x;
        }
        i = j + 1;
    }
    *out = e;
    return cnt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16) return 0;
    if (!g_base[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(g_base, sizeof g_base, "%s/gsnap-fuzz-ingest-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(g_base)) abort();
        atexit(cleanup);
    }
    unsigned flags = data[0];
    const uint8_t *file = data + 1;
    size_t flen = size - 1;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/db%d", g_base, g_seq++ & 1);
    rm_db(dir);

    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.keep = (flags & 16) ? GSNAP_KEEP_IN : GSNAP_KEEP_BOTH;
    o.map_size = 4u << 20;
    gsnap_db *db = NULL;
    if (gsnap_db_open(dir, &o, &db) != GSNAP_OK) {
        fprintf(stderr, "open: %s\n", gsnap_last_open_error());
        abort();
    }
    FILE *fp = fmemopen((void *)file, flen ? flen : 1, "rb");
    if (!fp) abort();
    if (!flen) { fclose(fp); fp = fmemopen((void *)"", 0, "rb"); }
    gsnap_ingest_options io = GSNAP_INGEST_OPTIONS_INIT;
    io.skip_bad = flags & 1;
    io.batch_edges = 1 + ((flags >> 1) & 7);
    gsnap_ingest_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = fp ? gsnap_ingest_text(db, fp, "fuzz.tsv", &io, &rep) : GSNAP_EPARSE;
    if (fp) fclose(fp);
    if (rc != GSNAP_OK && rc != GSNAP_EPARSE && rc != GSNAP_ERANGE) {
        fprintf(stderr, "ingest rc %d: %s\n", rc, gsnap_db_errmsg(db));
        abort();
    }
    if (rc == GSNAP_EPARSE && !io.skip_bad && rep.lines > 0 && !strstr(gsnap_db_errmsg(db), "fuzz.tsv:")) {
        fprintf(stderr, "parse error without a place: %s\n", gsnap_db_errmsg(db));
        abort();
    }
    ev *e = NULL;
    size_t ne = parse_all(file, flen, &e);
    if (rc == GSNAP_OK && rep.events != ne) {
        fprintf(stderr, "committed %" PRIu64 " events, the line parser accepts %zu\n", rep.events, ne);
        abort();
    }
    uint64_t latest = 0;
    if (gsnap_db_version(db, &latest) != GSNAP_OK) abort();
    gsnap_nbr buf[64];
    size_t nq = ne < 8 ? ne : 8;
    for (size_t q = 0; q < nq && latest > 0; q++) {
        for (int d = 0; d < 2; d++) {
            gsnap_dir dir_ = d ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
            if ((flags & 16) && d) continue;
            uint64_t node = d ? e[q].src : e[q].dst;
            uint64_t vers[2] = {GSNAP_VERSION_LATEST, 1};
            for (int vi = 0; vi < 2; vi++) {
                size_t cnt = 0;
                int r = gsnap_neighbors(db, NULL, node, dir_, GSNAP_TIME_MAX, vers[vi], buf, 64, &cnt);
                if (r != GSNAP_OK) {
                    fprintf(stderr, "neighbors rc %d: %s\n", r, gsnap_db_errmsg(db));
                    abort();
                }
                for (size_t i = 0; i < cnt && i < 64; i++) {
                    uint64_t a = d ? node : buf[i].node, b = d ? buf[i].node : node;
                    if (!is_add_of(e, ne, a, b, buf[i].t)) {
                        fprintf(stderr, "answer (%" PRIu64 "->%" PRIu64 " t %" PRId64 ") is no add of the file\n",
                                a, b, buf[i].t);
                        abort();
                    }
                }
                uint64_t deg = 0;
                if (gsnap_degree(db, NULL, node, dir_, GSNAP_TIME_MAX, vers[vi], &deg) != GSNAP_OK ||
                    deg != cnt)
                    abort();
            }
        }
    }
    if (latest > 0) {
        uint64_t problems = 0;
        int r = gsnap_db_check(db, NULL, NULL, &problems);
        if (r != GSNAP_OK || problems) {
            fprintf(stderr, "check rc %d, %" PRIu64 " problems: %s\n", r, problems, gsnap_db_errmsg(db));
            abort();
        }
    }
    free(e);
    gsnap_db_close(db);
    rm_db(dir);
    return 0;
}
