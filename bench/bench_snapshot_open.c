/*
 * bench/bench_snapshot_open.c -- sampler open on a snapshot: the time
 * gsnap_sampler_open takes to load the cached lists from the snapshot's
 * (hop, node) table (issue 10: under 1 s on R-MAT-20).
 *
 *   bench_snapshot_open --db DIR --snapshot NAME [--fanouts 10,10,10]
 *                       [--mode fcr] [--rounds 3] [--out FILE]
 *
 * Opens and closes the sampler --rounds times (read-only database handle,
 * so nothing is written back), printing per round the wall time of the open
 * and the load time the sampler reports (stats t_load); then the median
 * of each. The first round runs on whatever the page cache holds. Prints
 * "key value" lines, also appended to --out when given.
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void say(FILE *out, const char *fmt, const char *key, double v) {
    printf(fmt, key, v);
    if (out) fprintf(out, fmt, key, v);
}

int main(int argc, char **argv) {
    const char *dbdir = NULL, *name = NULL, *mode = "fcr", *outp = NULL;
    char fan[128] = "10,10,10";
    int rounds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--db")) dbdir = argv[i + 1];
        else if (!strcmp(argv[i], "--snapshot")) name = argv[i + 1];
        else if (!strcmp(argv[i], "--fanouts")) snprintf(fan, sizeof fan, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--out")) outp = argv[i + 1];
        else { fprintf(stderr, "bench_snapshot_open: unknown option %s\n", argv[i]); return 2; }
    }
    if (!dbdir || !name || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: bench_snapshot_open --db DIR --snapshot NAME [--fanouts 10,10,10] [--rounds 3]\n");
        return 2;
    }
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.create = 0;
    o.read_only = 1;
    gsnap_db *db;
    if (gsnap_db_open(dbdir, &o, &db)) { fprintf(stderr, "open %s: %s\n", dbdir, gsnap_last_open_error()); return 1; }
    gsnap_sampler_options so = GSNAP_SAMPLER_OPTIONS_INIT;
    if (gsnap_sample_mode_parse(mode, &so.mode)) { fprintf(stderr, "bad mode %s\n", mode); return 2; }
    so.layers = 0;
    for (char *save = NULL, *t = strtok_r(fan, ",", &save); t && so.layers < GSNAP_MAX_LAYERS; t = strtok_r(NULL, ",", &save))
        so.fanouts[so.layers++] = atoi(t);
    FILE *out = outp ? fopen(outp, "a") : NULL;
    double wall[100], load[100];
    for (int r = 0; r < rounds; r++) {
        gsnap_sampler *s = NULL;
        double t0 = now_s();
        int rc = gsnap_sampler_open(db, name, &so, &s);
        wall[r] = now_s() - t0;
        if (rc) { fprintf(stderr, "sampler open: %s (%s)\n", gsnap_strerror(rc), gsnap_db_errmsg(db)); return 1; }
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        load[r] = st.t_load;
        gsnap_sampler_close(s);
        char k[64];
        snprintf(k, sizeof k, "round%d.open_s", r + 1);
        say(out, "%s %.3f\n", k, wall[r]);
        snprintf(k, sizeof k, "round%d.load_s", r + 1);
        say(out, "%s %.3f\n", k, load[r]);
    }
    qsort(wall, (size_t)rounds, sizeof *wall, cmp_d);
    qsort(load, (size_t)rounds, sizeof *load, cmp_d);
    say(out, "%s %.3f\n", "median.open_s", wall[rounds / 2]);
    say(out, "%s %.3f\n", "median.load_s", load[rounds / 2]);
    if (out) fclose(out);
    gsnap_db_close(db);
    return 0;
}
