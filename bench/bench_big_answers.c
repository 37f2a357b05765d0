/*
 * bench/bench_big_answers.c -- 1-hop as-of queries whose answers are large
 * (the tail of queries under ingest, issue 12 target 2), against the same
 * lists held in memory (sorted by t, answered by a binary search and a copy)
 * in the same process.
 *
 *   bench_big_answers --db DIR [--min 129] [--max 4000] [--reps 20] [--merge F] [--out FILE]
 *
 * --merge F first merges DIR's runs as a handle of merge fanout F would
 * (gsnap_db_merge: no version added, no answer changed, the database
 * rewritten in place: give it a copy), so that the same answers can be
 * timed over fewer runs (F = 2 leaves the base and at most one delta run).
 * Opens DIR read-only, takes every node whose in-degree (now) is in
 * [--min, --max], and asks each --reps times, in a fixed pseudo-random
 * order of T uniform over the database's time range: gsnap_neighbors
 * through one read view, then the in-memory lists, each query timed alone.
 * Prints p50 and p90 of both, the ns per answered neighbour, and the ratio.
 * A database like the one of docs/benchmarks.md (R-MAT SCALE 18 ingested
 * through a pipe, 100k-edge batches, so with the runs a growing store has):
 *
 *   build/tools/rmat --scale 18 --edge-factor 16 --seed 1 --out /tmp/r18.tsv
 *   build/graphsnap -d /tmp/r18db init && cat /tmp/r18.tsv | build/graphsnap -d /tmp/r18db ingest --nosync -
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_util.h"
#include "store/store_int.h" /* gsnap_store__node_bound: the node ids to look at */

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_big_answers: %s: %s\n", what, why);
    exit(1);
}
static void gchk(int rc, const char *what) { if (rc) die(what, gsnap_strerror(rc)); }
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static int cmp_t(const void *a, const void *b) {
    int64_t x = ((const gsnap_nbr *)a)->t, y = ((const gsnap_nbr *)b)->t;
    return x < y ? -1 : x > y;
}
static double pct(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_dbl);
    return v[(size_t)(p * (double)(n - 1))];
}

int main(int argc, char **argv) {
    const char *dir = NULL, *out = NULL;
    uint64_t lo = 129, hi = 4000;
    unsigned reps = 20, merge = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die(a, "needs a value");
        i++;
        if (!strcmp(a, "--db")) dir = v;
        else if (!strcmp(a, "--min")) lo = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--max")) hi = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--reps")) reps = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--merge")) merge = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--out")) out = v;
        else die(a, "unknown option");
    }
    if (!dir) die("--db", "is required");
    if (!reps || lo > hi) die("--reps/--min/--max", "need reps > 0 and min <= max");
    if (out && !(bench_out = fopen(out, "w"))) die(out, "cannot create");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.create = 0;
    o.read_only = merge == 0;
    gsnap_db *db;
    gchk(gsnap_db_open(dir, &o, &db), dir);
    if (merge) gchk(gsnap_db_merge(db, merge), "--merge");
    gsnap_db_stat st;
    gchk(gsnap_db_stats(db, &st), "stats");
    gsnap_read *rd;
    gchk(gsnap_read_begin(db, &rd), "read_begin");
    uint64_t bound;
    gchk(gsnap_store__node_bound(db, rd, &bound), "node_bound");
    /* the selected nodes' whole lists, in memory, sorted by t */
    size_t ns = 0, cap = 0, total = 0, bcap = 1 << 16;
    uint64_t *sel = NULL;
    gsnap_nbr **lists = NULL, *buf = malloc(bcap * sizeof *buf);
    size_t *len = NULL;
    for (uint64_t v = 0; v < bound; v++) {
        size_t n;
        int rc;
        while ((rc = gsnap_neighbors(db, rd, v, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, bcap, &n)) == 0 &&
               n > bcap)
            if (!(buf = realloc(buf, (bcap = n) * sizeof *buf))) die("realloc", "out of memory");
        gchk(rc, "neighbors");
        if (n < lo || n > hi) continue;
        if (ns == cap) {
            cap = cap ? 2 * cap : 1024;
            sel = realloc(sel, cap * sizeof *sel);
            lists = realloc(lists, cap * sizeof *lists);
            len = realloc(len, cap * sizeof *len);
            if (!sel || !lists || !len) die("realloc", "out of memory");
        }
        if (!(lists[ns] = malloc(n * sizeof **lists))) die("malloc", "out of memory");
        memcpy(lists[ns], buf, n * sizeof *buf);
        qsort(lists[ns], n, sizeof **lists, cmp_t);
        len[ns] = n;
        sel[ns++] = v;
        total += n;
    }
    if (!ns) die(dir, "no node has an in-degree in [--min, --max]");
    size_t nq = ns * reps;
    double *lg = malloc(nq * sizeof *lg), *lm = malloc(nq * sizeof *lm);
    int64_t tmin = st.min_t, span = st.max_t - st.min_t + 1;
    uint64_t rng = 1, ans_g = 0, ans_m = 0;
    double sg = 0, sm = 0;
    for (int side = 0; side < 2; side++) {
        rng = 1; /* the same T for both */
        double t0 = now();
        for (size_t q = 0; q < nq; q++) {
            size_t i = q % ns, n = 0;
            int64_t T = tmin + (int64_t)(mix(&rng) % (uint64_t)span);
            double q0 = now();
            if (side == 0) {
                gchk(gsnap_neighbors(db, rd, sel[i], GSNAP_DIR_IN, T, GSNAP_VERSION_LATEST, buf, bcap, &n), "neighbors");
                lg[q] = (now() - q0) * 1e6;
                ans_g += n;
            } else { /* the first t > T, then the prefix copied */
                size_t a = 0, b = len[i];
                while (a < b) {
                    size_t m = (a + b) / 2;
                    if (lists[i][m].t <= T) a = m + 1; else b = m;
                }
                memcpy(buf, lists[i], a * sizeof *buf);
                n = a;
                lm[q] = (now() - q0) * 1e6;
                ans_m += n;
            }
        }
        *(side ? &sm : &sg) = now() - t0;
    }
    if (ans_g != ans_m) die("answers", "graphsnap and the in-memory lists answered different counts");
    double g50 = pct(lg, nq, 0.5), g90 = pct(lg, nq, 0.9), m50 = pct(lm, nq, 0.5), m90 = pct(lm, nq, 0.9);
    say("# bench_big_answers: %s: %zu nodes of in-degree %llu..%llu (mean %.0f), %u queries each at random T; "
        "%llu runs\n\n| side | p50 us | p90 us | ns per answered neighbour |\n|---|---:|---:|---:|\n"
        "| graphsnap | %.2f | %.2f | %.1f |\n| in memory | %.2f | %.2f | %.1f |\n\ngraphsnap p50 %.2fx the in-memory lists'\n",
        dir, ns, (unsigned long long)lo, (unsigned long long)hi, (double)total / (double)ns, reps,
        (unsigned long long)st.runs, g50, g90, sg * 1e9 / (double)ans_g, m50, m90, sm * 1e9 / (double)ans_m,
        g50 / m50);
    gsnap_read_end(rd);
    gsnap_db_close(db);
    for (size_t i = 0; i < ns; i++) free(lists[i]);
    free(lists), free(len), free(sel), free(buf), free(lg), free(lm);
    if (bench_out) fclose(bench_out);
    return 0;
}
