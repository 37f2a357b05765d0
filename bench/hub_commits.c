/*
 * bench/hub_commits.c -- what the commit's warm step (store/warm.c) costs
 * commits that touch only a hub: their warm-up query is asked of that hub.
 *
 *   hub_commits [--hub 2000000] [--commits 20] [--out FILE]
 *
 * A fresh database under $TMPDIR (GSNAP_SYNC_NONE: the flushes are not what
 * is measured) gets --hub in-edges of node 7 from distinct sources, in
 * 100k-edge commits. Then --commits commits of 10 edges into node 7, each
 * timed, twice in the same process: first before the process has asked any
 * query (no warm step: a process that only ingests skips it), then after
 * one query (every commit then verifies its runs, builds their indexes and
 * asks its warm-up query of node 7). Prints the mean and the largest commit
 * time of each and their ratio. The warm-up query gathers at most
 * GSNAP_WARM_READ_RECS records; before that bound it asked the hub's whole
 * answer (docs/store.md "The warm-up query").
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_util.h"

static void gchk(int rc, const char *what) {
    if (!rc) return;
    fprintf(stderr, "hub_commits: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}

/* --commits commits of 10 edges into node 7; mean and largest seconds. */
static void commit_into_hub(gsnap_db *db, int commits, uint64_t *src, double *mean, double *worst) {
    double sum = 0, max = 0;
    for (int c = 0; c < commits; c++) {
        gsnap_batch *b;
        gchk(gsnap_batch_begin(db, &b), "batch_begin");
        for (int k = 0; k < 10; k++, (*src)++) gchk(gsnap_batch_add(b, *src, 7, (int64_t)*src), "batch_add");
        double t0 = now();
        gchk(gsnap_batch_commit(b, NULL), "commit");
        double dt = now() - t0;
        sum += dt;
        if (dt > max) max = dt;
    }
    *mean = sum / commits;
    *worst = max;
}

int main(int argc, char **argv) {
    uint64_t hub = 2000000;
    int commits = 20;
    const char *out = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--hub")) hub = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--commits")) commits = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else { fprintf(stderr, "hub_commits: unknown option %s (see the top of bench/hub_commits.c)\n", argv[i]); return 2; }
    }
    if (commits < 1 || hub < 1) { fprintf(stderr, "hub_commits: --hub and --commits must be positive\n"); return 2; }
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hub-commits-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    gsnap_db *db;
    gchk(bench_open_nosync(dir, &db), "open");
    uint64_t src = 1000;
    for (uint64_t done = 0; done < hub;) {
        gsnap_batch *b;
        gchk(gsnap_batch_begin(db, &b), "batch_begin");
        for (uint64_t k = 0; k < 100000 && done < hub; k++, done++, src++)
            gchk(gsnap_batch_add(b, src, 7, (int64_t)src), "batch_add");
        gchk(gsnap_batch_commit(b, NULL), "commit");
    }
    double m0, w0, m1, w1;
    commit_into_hub(db, commits, &src, &m0, &w0); /* no query asked yet: no warm step */
    uint64_t deg;
    gchk(gsnap_degree(db, NULL, 7, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg), "degree");
    commit_into_hub(db, commits, &src, &m1, &w1); /* the warm step after each */
    FILE *f = out ? fopen(out, "a") : NULL;
    for (int k = 0; k < (f ? 2 : 1); k++) {
        FILE *o = k ? f : stdout;
        fprintf(o, "hub_commits: node 7 with %llu in-edges, %d commits of 10 edges each way\n",
                (unsigned long long)deg, commits);
        fprintf(o, "before any query (no warm step): mean %.3f ms, largest %.3f ms\n", m0 * 1e3, w0 * 1e3);
        fprintf(o, "after a query (warm step):       mean %.3f ms, largest %.3f ms\n", m1 * 1e3, w1 * 1e3);
        fprintf(o, "mean ratio %.2fx\n", m1 / m0);
    }
    if (f) fclose(f);
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
