/*
 * bench/first_query.c -- what the first 1-hop query after a commit costs
 * (issue 12, target 2; docs/benchmarks.md "The first query after a commit").
 *
 *   first_query --input FILE [--format bin|tsv] [--batch 100000] [--later 20] [--out FILE]
 *
 * Ingests FILE into a fresh database under $TMPDIR (both directions,
 * GSNAP_SYNC_NONE: the commits' durability is not what is measured), one
 * commit per --batch edges, in a process that keeps what it frees
 * (gsnap_keep_freed_memory, as the CLI and bench_store_fbl). After each
 * commit it asks, each timed alone, in-neighbours of nodes uniform over the
 * stream's ids at T uniform over its times:
 *   first    the first query through a fresh view (the first query after
 *            the commit);
 *   second   the first query through a second fresh view of the same
 *            version (the same work as "first", asked after it);
 *   later    --later more queries through that second view.
 * Prints the mean and median of each. "first" far above "second" means the
 * commit leaves the read path cold for the next query (store/warm.c ends
 * each commit of a querying process with a warm-up query for that reason;
 * the very first commit runs before any query, so it is left out).
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_util.h"

static void die(const char *what, const char *why) {
    fprintf(stderr, "first_query: %s: %s\n", what, why);
    exit(1);
}
static void gchk(int rc, const char *what) { if (rc) die(what, gsnap_strerror(rc)); }
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_dbl);
    return n ? v[n / 2] : 0;
}
static double mean(const double *v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return n ? s / (double)n : 0;
}

/* One query of a random node at a random T through rd: its microseconds. */
static double one(gsnap_db *db, gsnap_read *rd, uint64_t *rng, uint64_t ids, int64_t tmin, int64_t span,
                  gsnap_nbr **buf, size_t *cap) {
    uint64_t v = mix(rng) % ids;
    int64_t T = tmin + (int64_t)(mix(rng) % (uint64_t)span);
    size_t n;
    int rc;
    double t0 = now(), us;
    while ((rc = gsnap_neighbors(db, rd, v, GSNAP_DIR_IN, T, GSNAP_VERSION_LATEST, *buf, *cap, &n)) == 0 && n > *cap) {
        if (!(*buf = realloc(*buf, n * sizeof **buf))) die("realloc", "out of memory");
        *cap = n;
        t0 = now(); /* the answer again, timed into the buffer it needs */
    }
    us = (now() - t0) * 1e6;
    gchk(rc, "neighbors");
    return us;
}

int main(int argc, char **argv) {
    const char *in = NULL, *fmt = NULL, *out = NULL;
    size_t batch = 100000, later = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die(a, "needs a value");
        i++;
        if (!strcmp(a, "--input")) in = v;
        else if (!strcmp(a, "--format")) fmt = v;
        else if (!strcmp(a, "--batch")) batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--later")) later = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--out")) out = v;
        else die(a, "unknown option");
    }
    if (!in) die("--input", "is required");
    if (!batch || !later) die("--batch/--later", "must be at least 1");
    if (out && !(bench_out = fopen(out, "w"))) die(out, "cannot create");
    gchk(gsnap_keep_freed_memory(), "gsnap_keep_freed_memory");
    int bin = fmt ? !strcmp(fmt, "bin") : strstr(in, ".bin") != NULL;
    size_t m;
    edge *e = read_edges(in, bin, 0, &m);
    if (!m) die(in, "no edges");
    uint64_t ids = 0;
    int64_t tmin = e[0].t, tmax = e[0].t;
    for (size_t i = 0; i < m; i++) {
        if (e[i].s >= ids) ids = e[i].s + 1;
        if (e[i].d >= ids) ids = e[i].d + 1;
        if (e[i].t < tmin) tmin = e[i].t;
        if (e[i].t > tmax) tmax = e[i].t;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/first_query-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) die(dir, "mkdtemp failed");
    gsnap_db *db;
    gchk(bench_open_nosync(dir, &db), dir);
    size_t commits = (m + batch - 1) / batch, k = 0;
    double *first = malloc(commits * sizeof *first), *second = malloc(commits * sizeof *second);
    double *rest = malloc(commits * later * sizeof *rest);
    gsnap_nbr *buf = NULL;
    size_t cap = 0, nr = 0;
    uint64_t rng = 1;
    if (!first || !second || !rest) die("malloc", "out of memory");
    for (size_t i = 0, c = 0; i < m; c++) {
        gsnap_batch *b;
        gchk(gsnap_batch_begin(db, &b), "batch_begin");
        size_t end = i + batch < m ? i + batch : m;
        for (; i < end; i++) gchk(gsnap_batch_add(b, e[i].s, e[i].d, e[i].t), "batch_add");
        gchk(gsnap_batch_commit(b, NULL), "commit");
        gsnap_read *rd;
        gchk(gsnap_read_begin(db, &rd), "read_begin");
        double f = one(db, rd, &rng, ids, tmin, tmax - tmin + 1, &buf, &cap);
        gsnap_read_end(rd);
        gchk(gsnap_read_begin(db, &rd), "read_begin");
        double s = one(db, rd, &rng, ids, tmin, tmax - tmin + 1, &buf, &cap);
        for (size_t q = 0; q < later; q++) {
            double l = one(db, rd, &rng, ids, tmin, tmax - tmin + 1, &buf, &cap);
            if (c) rest[nr++] = l;
        }
        gsnap_read_end(rd);
        if (c) { /* the first commit came before any query: no warm-up yet */
            first[k] = f;
            second[k++] = s;
        }
    }
    say("# first_query: %s: %zu edges, %zu commits of %zu edges, %zu queries after each (the first commit left out)\n\n"
        "| query | n | mean us | median us |\n|---|---:|---:|---:|\n", in, m, commits, batch, later + 2);
    double fm = mean(first, k), sm = mean(second, k), rm = mean(rest, nr);
    say("| first after the commit (fresh view) | %zu | %.2f | %.2f |\n", k, fm, median(first, k));
    say("| first in a second fresh view | %zu | %.2f | %.2f |\n", k, sm, median(second, k));
    say("| the %zu after it | %zu | %.2f | %.2f |\n", later, nr, rm, median(rest, nr));
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "first_query: could not remove %s\n", dir);
    free(first), free(second), free(rest), free(buf), free(e);
    if (bench_out) fclose(bench_out);
    return 0;
}
