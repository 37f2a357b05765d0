/*
 * bench/bench_adapt.c -- adaptive refresh (issue 18) against fixed gammas on
 * a graph that keeps changing: sampling throughput and staleness side by side.
 *
 *   bench_adapt --input FILE [--format bin|tsv] [--fanouts 10,10] [--batches 200]
 *               [--batch-size 512] [--period 10] [--ingest-every 2]
 *               [--max-staleness 2] [--phase 0] [--rounds 2] [--out FILE]
 *
 * The first 80% of the input's edges are ingested (one database per run,
 * under $TMPDIR, sync none, compacted); the other 20% arrive in equal slices,
 * one committed batch every --ingest-every sampled batches, so the sampler
 * (FSCR, fresh mode: reads at the newest version, an entry more than
 * --max-staleness versions stale is redrawn at use) serves a graph that keeps
 * changing; with --phase P the ingest runs only in busy phases (P batches
 * busy, P calm, ...), the case an adaptive policy is for. Every run gets the same random seeds (gsnap_sampler_next with
 * seeds NULL) and the same ingest, so counts are equal across rounds; only
 * the times vary. Runs: fixed gamma 0.05, 0.15, 0.3, 0.6, 1; miss-driven
 * (lambda 0.5 and 0.25); feedback with a synthetic statistic that decays as
 * a training would settle (0.5 * exp(-4 b / batches), per layer, kappa 1: a
 * stand-in for gradient variance, not a real trainer); miss-driven with a
 * run-time core (core_min 2, bound half the static core's bytes).
 * Throughput = sampled edges / seconds inside gsnap_sampler_next (scheduled
 * refreshes included, ingest excluded); each configuration runs --rounds
 * times (order reversed every other round) and keeps its fastest round.
 * Staleness: the share of cache hits served from an entry whose node got
 * edges since it was drawn (within the bound), and entries redrawn at use
 * (beyond it). Ratios are against fixed gamma 0.15 (the default) of the
 * same process.
 */
#include "graphsnap.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench/bench_util.h"

typedef struct {
    const char *name;
    gsnap_refresh_policy pol;
    double gamma, lambda;
    int feedback, core;
} config;
typedef struct {
    double eps, t_refresh;
    uint64_t edges, hits, stale_hits, redrawn, refreshes, replaced, skipped, core_bytes;
    double mean_gamma;
} result;

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_adapt: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}


static void ingest(gsnap_db *db, const edge *e, size_t a, size_t b) {
    gsnap_batch *bt;
    int rc;
    if ((rc = gsnap_batch_begin(db, &bt))) die("batch", rc);
    for (size_t i = a; i < b; i++)
        if ((rc = gsnap_batch_add(bt, e[i].s, e[i].d, 0))) die("add", rc);
    if ((rc = gsnap_batch_commit(bt, NULL))) die("commit", rc);
}

typedef struct {
    const edge *e;
    size_t m, base;
    int32_t fan[GSNAP_MAX_LAYERS];
    unsigned L, batches, bsize, period, every, phase;
    int64_t stale;
} setup;

/* Is an ingest due before batch b? Every `every` batches, in busy phases
 * (phase 0: always; else the even-numbered runs of `phase` batches). */
static int busy(const setup *su, unsigned b) {
    return b % su->every == 0 && (!su->phase || (b / su->phase) % 2 == 0);
}

/* The run's sampler: FSCR, fresh; the configuration's policy and core. */
static gsnap_sampler *open_sampler(gsnap_db *db, const setup *su, const config *c) {
    int rc;
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = su->L;
    memcpy(o.fanouts, su->fan, sizeof o.fanouts);
    o.seed = 1;
    o.period = su->period;
    o.max_staleness = su->stale;
    o.gamma = c->gamma > 0 ? c->gamma : 0.15;
    o.policy = c->pol;
    for (unsigned i = 0; i < su->L; i++) o.lambda[i] = c->lambda;
    if (c->core) o.core_min = 2;
    gsnap_sampler *s;
    if (c->core) { /* bound: half of the static core's bytes */
        gsnap_sampler_options p = o;
        p.core_min = 0;
        p.policy = GSNAP_REFRESH_FIXED;
        if ((rc = gsnap_sampler_open(db, NULL, &p, &s))) die("sampler", rc);
        gsnap_adapt_stats as;
        gsnap_sampler_adapt_stats_get(s, &as);
        o.core_max_bytes = as.core_bytes / 2;
        gsnap_sampler_close(s);
    }
    if ((rc = gsnap_sampler_open(db, NULL, &o, &s))) die("sampler", rc);
    return s;
}

static void run(const setup *su, const config *c, result *r) {
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-adapt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    dopt.keep = GSNAP_KEEP_IN;
    gsnap_db *db;
    int rc;
    if ((rc = gsnap_db_open(dir, &dopt, &db))) die("open", rc);
    ingest(db, su->e, 0, su->base);
    if ((rc = gsnap_db_compact(db))) die("compact", rc);
    gsnap_sampler *s = open_sampler(db, su, c);
    size_t nslices = 0;
    for (unsigned b = 1; b < su->batches; b++) nslices += busy(su, b);
    size_t slice = (su->m - su->base) / (nslices ? nslices : 1), next = su->base;
    double secs = 0;
    for (unsigned b = 0; b < su->batches; b++) {
        if (b && busy(su, b) && next + slice <= su->m) {
            ingest(db, su->e, next, next + slice);
            next += slice;
        }
        for (unsigned l = 0; c->feedback && l < su->L; l++)
            if ((rc = gsnap_sampler_report(s, l, 0.5 * exp(-4.0 * b / su->batches)))) die("report", rc);
        const void *buf;
        size_t len;
        double t0 = now();
        if ((rc = gsnap_sampler_next(s, NULL, su->bsize, &buf, &len))) die("next", rc);
        secs += now() - t0;
    }
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    gsnap_adapt_stats as;
    gsnap_sampler_adapt_stats_get(s, &as);
    memset(r, 0, sizeof *r);
    r->eps = (double)st.edges / secs;
    r->edges = st.edges;
    r->t_refresh = st.t_refresh;
    for (unsigned l = 0; l < su->L; l++) {
        r->hits += st.layer[l].hits;
        r->stale_hits += st.layer[l].stale_hits;
        r->redrawn += st.layer[l].refreshed;
    }
    r->refreshes = st.refreshes;
    r->replaced = st.replaced_ids;
    r->skipped = as.skipped;
    r->core_bytes = as.core_bytes;
    size_t nh = gsnap_sampler_gamma_history(s, NULL, 0);
    gsnap_gamma_choice *h = calloc(nh ? nh : 1, sizeof *h);
    nh = gsnap_sampler_gamma_history(s, h, nh);
    double g = 0;
    for (size_t i = 0; i < nh; i++) g += h[i].gamma;
    r->mean_gamma = nh ? g / (double)nh : (c->gamma > 0 ? c->gamma : 0.15);
    free(h);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static const config configs[] = {
    {"fixed 0.05", GSNAP_REFRESH_FIXED, 0.05, 0, 0, 0},
    {"fixed 0.15", GSNAP_REFRESH_FIXED, 0.15, 0, 0, 0},
    {"fixed 0.3", GSNAP_REFRESH_FIXED, 0.3, 0, 0, 0},
    {"fixed 0.6", GSNAP_REFRESH_FIXED, 0.6, 0, 0, 0},
    {"fixed 1", GSNAP_REFRESH_FIXED, 1.0, 0, 0, 0},
    {"miss l=0.5", GSNAP_REFRESH_MISS, 0, 0.5, 0, 0},
    {"miss l=0.25", GSNAP_REFRESH_MISS, 0, 0.25, 0, 0},
    {"feedback k=1", GSNAP_REFRESH_FEEDBACK, 0, 0, 1, 0},
    {"miss+core", GSNAP_REFRESH_MISS, 0, 0.5, 0, 1},
};
#define NCONF (sizeof configs / sizeof configs[0])
#define BASELINE 1 /* fixed 0.15 */
#define NFIXED 5

static void report(FILE *f, const result *res) {
    const result *base = &res[BASELINE];
    fprintf(f, "%-13s %11s %8s %10s %10s %9s %9s %8s %7s %9s\n", "policy", "edges/s", "vs 0.15",
            "stale-hit%", "redrawn", "refreshes", "skipped", "refr s", "mean g", "replaced");
    for (size_t i = 0; i < NCONF; i++) {
        const result *r = &res[i];
        fprintf(f, "%-13s %11.0f %7.2fx %9.2f%% %10llu %9llu %9llu %8.3f %7.3f %9llu\n",
                configs[i].name, r->eps, r->eps / base->eps,
                r->hits ? 100.0 * (double)r->stale_hits / (double)r->hits : 0.0,
                (unsigned long long)r->redrawn, (unsigned long long)r->refreshes,
                (unsigned long long)r->skipped, r->t_refresh, r->mean_gamma,
                (unsigned long long)r->replaced);
    }
    for (size_t i = NFIXED; i < NCONF; i++) { /* vs the best fixed gamma at no more staleness */
        double sh = res[i].hits ? (double)res[i].stale_hits / (double)res[i].hits : 0;
        int best = -1;
        for (int j = 0; j < NFIXED; j++) {
            double shj = res[j].hits ? (double)res[j].stale_hits / (double)res[j].hits : 0;
            if (shj <= sh + 1e-12 && (best < 0 || res[j].eps > res[best].eps)) best = j;
        }
        if (best < 0)
            fprintf(f, "# %s: fresher than every fixed gamma (stale hits %.2f%%)\n",
                    configs[i].name, 100 * sh);
        else
            fprintf(f, "# %s: %.2fx the throughput of the best fixed gamma at no more staleness (%s)\n",
                    configs[i].name, res[i].eps / res[best].eps, configs[best].name);
    }
}

int main(int argc, char **argv) {
    const char *input = NULL, *out = NULL;
    int bin = 1;
    unsigned rounds = 2;
    setup su = {.L = 2, .batches = 200, .bsize = 512, .period = 10, .every = 2, .stale = 2};
    su.fan[0] = su.fan[1] = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "bench_adapt: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--format")) bin = strcmp(v, "tsv") != 0;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--batches")) su.batches = (unsigned)atoi(v);
        else if (!strcmp(a, "--batch-size")) su.bsize = (unsigned)atoi(v);
        else if (!strcmp(a, "--period")) su.period = (unsigned)atoi(v);
        else if (!strcmp(a, "--ingest-every")) su.every = (unsigned)atoi(v);
        else if (!strcmp(a, "--phase")) su.phase = (unsigned)atoi(v);
        else if (!strcmp(a, "--max-staleness")) su.stale = atoll(v);
        else if (!strcmp(a, "--rounds")) rounds = (unsigned)atoi(v);
        else if (!strcmp(a, "--fanouts")) {
            su.L = 0;
            for (char *p = (char *)v; *p && su.L < GSNAP_MAX_LAYERS; p += *p == ',') su.fan[su.L++] = (int32_t)strtol(p, &p, 10);
        } else { fprintf(stderr, "bench_adapt: unknown option %s\n", a); return 2; }
    }
    if (!input || !su.batches || !su.every || !rounds) {
        fprintf(stderr, "usage: bench_adapt --input FILE [--format bin|tsv] [--fanouts 10,10] "
                        "[--batches 200] [--batch-size 512] [--period 10] [--ingest-every 2] "
                        "[--max-staleness 2] [--phase 0] [--rounds 2] [--out FILE]\n");
        return 2;
    }
    su.e = read_edges(input, bin, 0, &su.m);
    su.base = su.m / 5 * 4;
    result res[NCONF], best[NCONF];
    memset(best, 0, sizeof best);
    for (unsigned r = 0; r < rounds; r++)
        for (size_t k = 0; k < NCONF; k++) {
            size_t i = r % 2 ? NCONF - 1 - k : k;
            run(&su, &configs[i], &res[i]);
            if (res[i].eps > best[i].eps) best[i] = res[i];
        }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) { perror(out); return 1; }
    for (FILE *g = f;; g = stdout) {
        fprintf(g, "# bench_adapt: %s: %zu edges (%zu at start, the rest in slices, one every "
                   "%u batches", input, su.m, su.base, su.every);
        if (su.phase) fprintf(g, " in busy phases: %u batches busy, %u calm, ...", su.phase, su.phase);
        fprintf(g, "); fscr, fanouts");
        for (unsigned l = 0; l < su.L; l++) fprintf(g, "%s%d", l ? "," : " ", su.fan[l]);
        fprintf(g, ", %u batches of %u random seeds, period %u, max staleness %lld; fastest of "
                   "%u rounds\n", su.batches, su.bsize, su.period, (long long)su.stale, rounds);
        report(g, best);
        if (g == stdout) break;
    }
    if (f != stdout) fclose(f);
    free((void *)su.e);
    return 0;
}
