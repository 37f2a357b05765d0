/*
 * examples/embed.c -- embedding libgraphsnap in a C service.
 *
 * Opens a database in a fresh temporary directory (or in DIR when given),
 * ingests three batches through the batch API, then asks point-in-time
 * neighbour questions at several event times T and versions V, prints the
 * answers and checks them against the expected ones.
 *
 *   cc embed.c $(pkg-config --cflags --libs --static graphsnap) -o embed
 *   ./embed [DIR]          exit 0: all answers as expected, 1: otherwise
 *
 * The temporary directory is removed at the end; a DIR given by the caller
 * is left in place.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <graphsnap.h>

/* One question and its expected answer (neighbour ids in answer order). */
typedef struct {
    const char *what;
    uint64_t node;
    gsnap_dir dir;
    int64_t at_t;
    uint64_t as_of;
    size_t n;
    uint64_t expect[8];
} question;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

/* Print a failure with the database's detail message. */
static int fail(gsnap_db *db, const char *call, int rc) {
    fprintf(stderr, "embed: %s: %s (%s)\n", call, gsnap_strerror(rc),
            db ? gsnap_db_errmsg(db) : gsnap_last_open_error());
    return rc;
}

/* Ingest one batch of (src, dst, t, is_delete) events; returns its version. */
typedef struct { uint64_t src, dst; int64_t t; int del; } event;

static int ingest(gsnap_db *db, const event *ev, size_t n, uint64_t *version) {
    gsnap_batch *b = NULL;
    int rc = gsnap_batch_begin(db, &b);
    if (rc) return fail(db, "gsnap_batch_begin", rc);
    for (size_t i = 0; i < n; i++) {
        rc = ev[i].del ? gsnap_batch_delete(b, ev[i].src, ev[i].dst, ev[i].t)
                       : gsnap_batch_add(b, ev[i].src, ev[i].dst, ev[i].t);
        if (rc) {
            fail(db, "gsnap_batch_add/delete", rc);
            gsnap_batch_abort(b);
            return rc;
        }
    }
    rc = gsnap_batch_commit(b, version); /* frees b in every case */
    if (rc) return fail(db, "gsnap_batch_commit", rc);
    return 0;
}

int main(int argc, char **argv) {
    char tmpl[512];
    const char *dir = argc > 1 ? argv[1] : NULL;
    int own_dir = 0, bad = 0, rc;
    gsnap_db *db = NULL;
    gsnap_read *rd = NULL;
    uint64_t v1 = 0, v2 = 0, v3 = 0;

    if (!dir) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpl, sizeof tmpl, "%s/gsnap-embed-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpl)) { perror("embed: mkdtemp"); return 1; }
        dir = tmpl;
        own_dir = 1;
    }
    printf("libgraphsnap %s, database in %s\n", gsnap_version(), dir);

    gsnap_db_options opts = GSNAP_DB_OPTIONS_INIT;
    opts.sync = GSNAP_SYNC_NONE; /* a demo: no fsync per commit */
    rc = gsnap_db_open(dir, &opts, &db);
    if (rc) { fail(NULL, "gsnap_db_open", rc); bad = 1; goto out; }

    /* Version 1: three edges into node 2. */
    static const event b1[] = {{1, 2, 10, 0}, {3, 2, 20, 0}, {4, 2, 30, 0}};
    /* Version 2: one more edge into 2, and 3 -> 2 deleted at t = 25. */
    static const event b2[] = {{5, 2, 15, 0}, {3, 2, 25, 1}};
    /* Version 3: a second instance of 1 -> 2, and an edge out of 2. */
    static const event b3[] = {{1, 2, 40, 0}, {2, 6, 5, 0}};
    if (ingest(db, b1, 3, &v1) || ingest(db, b2, 2, &v2) || ingest(db, b3, 2, &v3)) {
        bad = 1;
        goto out;
    }
    printf("committed versions %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", v1, v2, v3);
    if (!(v1 < v2 && v2 < v3)) { fprintf(stderr, "embed: versions not increasing\n"); bad = 1; }

    const question qs[] = {
        {"in(2) now", 2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, 4, {1, 1, 4, 5}},
        {"in(2) at T=20", 2, GSNAP_DIR_IN, 20, GSNAP_VERSION_LATEST, 3, {1, 3, 5}},
        {"in(2) at T=25", 2, GSNAP_DIR_IN, 25, GSNAP_VERSION_LATEST, 2, {1, 5}},
        {"in(2) as of V1", 2, GSNAP_DIR_IN, GSNAP_TIME_MAX, v1, 3, {1, 3, 4}},
        {"in(2) at T=30, V2", 2, GSNAP_DIR_IN, 30, v2, 3, {1, 4, 5}},
        {"out(2) now", 2, GSNAP_DIR_OUT, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, 1, {6}},
        {"out(2) as of V2", 2, GSNAP_DIR_OUT, GSNAP_TIME_MAX, v2, 0, {0}},
        {"out(1) at T=10", 1, GSNAP_DIR_OUT, 10, GSNAP_VERSION_LATEST, 1, {2}},
    };

    /* One consistent read view for all questions. */
    rc = gsnap_read_begin(db, &rd);
    if (rc) { fail(db, "gsnap_read_begin", rc); bad = 1; goto out; }
    for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
        gsnap_nbr nb[16];
        size_t count = 0;
        rc = gsnap_neighbors(db, rd, qs[q].node, qs[q].dir, qs[q].at_t, qs[q].as_of,
                             nb, 16, &count);
        if (rc) { fail(db, "gsnap_neighbors", rc); bad = 1; break; }
        int ok = count == qs[q].n;
        printf("%-18s ->", qs[q].what);
        for (size_t i = 0; i < count && i < 16; i++) {
            printf(" %" PRIu64 "@t%" PRId64 "/v%" PRIu64, nb[i].node, nb[i].t, nb[i].version);
            if (i < qs[q].n && nb[i].node != qs[q].expect[i]) ok = 0;
        }
        uint64_t deg = 0;
        rc = gsnap_degree(db, rd, qs[q].node, qs[q].dir, qs[q].at_t, qs[q].as_of, &deg);
        if (rc) { fail(db, "gsnap_degree", rc); bad = 1; break; }
        if (deg != qs[q].n) ok = 0;
        printf("%s  [%s]\n", count ? "" : " (none)", ok ? "ok" : "UNEXPECTED");
        if (!ok) bad = 1;
    }

out:
    gsnap_read_end(rd);
    gsnap_db_close(db);
    if (own_dir) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    printf("%s\n", bad ? "embed: FAILED" : "embed: all answers as expected");
    return bad ? 1 : 0;
}
