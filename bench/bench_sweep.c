/*
 * bench/bench_sweep.c -- lazy sweeps on and off (sampler/lazy_sweep.c,
 * issue 17), in one process: four samplers on the same store (1 worker and
 * 2 workers, each with sweeps never and always, through the library's test
 * switch gsnap_samp__sweep_mode, which the static library exposes) take
 * turns by whole generations (`--period` batches of `--batch-size` random
 * seeds, gsnap_sampler_next with seeds NULL), the order reversed every other
 * turn, so that all four see the same machine. Prints per sampler batches/s,
 * CPU milliseconds per batch (process CPU, all threads) and redraws per
 * batch (stats.refreshed_entries), then the ratios: CPU per batch with
 * sweeps over without (1 and 2 workers), 2 workers vs 1 in batches/s (off,
 * on; only meaningful on a quiet machine: see the load average printed)
 * and the work efficiency (CPU per batch of 1 worker / of 2).
 *
 *   bench_sweep --input FILE [--mode fcr-sc] [--generations 30] [--period 50]
 *               [--batch-size 1024] [--fanouts 10,10] [--out FILE]
 */
#include "graphsnap.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "bench/bench_util.h"

extern int gsnap_samp__sweep_mode; /* sampler/lazy_sweep.c: -1 policy, 0 never, 1 always */


static void die(const char *what, int rc) {
    fprintf(stderr, "bench_sweep: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}


static gsnap_db *load(const char *input, char *dir, size_t dlen) {
    size_t m;
    edge *e = read_edges(input, strstr(input, ".bin") != NULL, 0, &m);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dlen, "%s/bench-sweep-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    dopt.keep = GSNAP_KEEP_IN;
    gsnap_db *db;
    int rc;
    if ((rc = gsnap_db_open(dir, &dopt, &db))) die("open", rc);
    for (size_t i = 0; i < m;) {
        gsnap_batch *b;
        if ((rc = gsnap_batch_begin(db, &b))) die("batch", rc);
        for (size_t k = 0; k < 1000000 && i < m; k++, i++)
            if ((rc = gsnap_batch_add(b, e[i].s, e[i].d, e[i].t == INT64_MAX ? 0 : e[i].t)))
                die("add", rc);
        if ((rc = gsnap_batch_commit(b, NULL))) die("commit", rc);
    }
    if ((rc = gsnap_db_compact(db))) die("compact", rc);
    say("# %s: %zu edges\n", input, m);
    free(e);
    return db;
}

int main(int argc, char **argv) {
    const char *input = NULL, *mname = "fcr-sc", *fans = "10,10", *outp = NULL;
    unsigned gens = 30, period = 50, bsize = 1024;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc) input = argv[++i];
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc) mname = argv[++i];
        else if (!strcmp(argv[i], "--generations") && i + 1 < argc) gens = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--period") && i + 1 < argc) period = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch-size") && i + 1 < argc) bsize = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fanouts") && i + 1 < argc) fans = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) outp = argv[++i];
        else {
            fprintf(stderr, "usage: bench_sweep --input FILE [--mode fcr-sc] [--generations G] "
                            "[--period T] [--batch-size N] [--fanouts 10,10] [--out FILE]\n");
            return 2;
        }
    }
    if (!input || period == 0 || gens == 0) {
        fprintf(stderr, "bench_sweep: --input is required; --period and --generations > 0\n");
        return 2;
    }
    gsnap_sample_mode mode;
    if (gsnap_sample_mode_parse(mname, &mode) != 0) {
        fprintf(stderr, "bench_sweep: unknown mode %s\n", mname);
        return 2;
    }
    char defout[128];
    if (!outp) {
        snprintf(defout, sizeof defout, "sweep-%lld.txt", (long long)time(NULL));
        outp = defout;
    }
    if (!(bench_out = fopen(outp, "w"))) {
        perror(outp);
        return 1;
    }
    char dir[512];
    gsnap_db *db = load(input, dir, sizeof dir);
    gsnap_sampler *S[4];
    const int sw[4] = {0, 1, 0, 1};
    const unsigned W[4] = {1, 1, 2, 2};
    int rc;
    for (int k = 0; k < 4; k++) {
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.mode = mode;
        o.layers = 0;
        for (const char *p = fans; *p && o.layers < GSNAP_MAX_LAYERS;) {
            o.fanouts[o.layers++] = (int32_t)strtol(p, (char **)&p, 10);
            if (*p == ',') p++;
        }
        o.period = period;
        o.seed = 1;
        o.workers = W[k];
        if ((rc = gsnap_sampler_open(db, NULL, &o, &S[k]))) die("sampler open", rc);
    }
    double wall[4] = {0}, cpu[4] = {0};
    for (unsigned g = 0; g < gens; g++) {
        for (int kk = 0; kk < 4; kk++) {
            int k = (g & 1) ? 3 - kk : kk;
            gsnap_samp__sweep_mode = sw[k];
            double t0 = now(), c0 = cpu_now();
            for (unsigned b = 0; b < period; b++) {
                const void *buf;
                size_t len;
                if ((rc = gsnap_sampler_next(S[k], NULL, bsize, &buf, &len))) die("next", rc);
            }
            wall[k] += now() - t0;
            cpu[k] += cpu_now() - c0;
        }
    }
    gsnap_samp__sweep_mode = -1;
    double nb = (double)period * gens;
    say("# %s, fanouts [%s], %u generations of %u batches of %u random seeds per sampler\n",
        mname, fans, gens, period, bsize);
    for (int k = 0; k < 4; k++) {
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(S[k], &st);
        say("%u worker(s), sweeps %s: %.1f batches/s, CPU ms per batch %.3f, redraws per batch %.0f\n",
            W[k], sw[k] ? "always" : "never", nb / wall[k], 1e3 * cpu[k] / nb,
            (double)st.refreshed_entries / nb);
        gsnap_sampler_close(S[k]);
    }
    say("CPU per batch, sweeps / none: 1 worker %.3f, 2 workers %.3f\n", cpu[1] / cpu[0],
        cpu[3] / cpu[2]);
    say("2 workers vs 1 (batches/s): no sweeps %.2fx, sweeps %.2fx; work efficiency %.2f, %.2f\n",
        wall[0] / wall[2], wall[1] / wall[3], cpu[0] / cpu[2], cpu[1] / cpu[3]);
    double la[3] = {0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3) la[0] = la[1] = la[2] = 0;
        fclose(f);
    }
    say("# load average at the end: %.2f %.2f %.2f\n", la[0], la[1], la[2]);
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_sweep: could not remove %s\n", dir);
    fclose(bench_out);
    return 0;
}
