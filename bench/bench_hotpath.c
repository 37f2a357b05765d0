/*
 * bench/bench_hotpath.c -- the cached modes at the in-memory limit (issue 17).
 *
 * Baseline, in the same process, on the same seeds: a lean in-memory CSR
 * sampler (csr_batch below, ~40 lines: a dense stamp array deduplicates the
 * frontier, a xorshift generator draws, Floyd's algorithm picks f distinct
 * neighbours) that builds the same DGL blocks as the library: the unique
 * frontier with the destinations as the prefix of the sources, indptr and
 * indices per layer. Every batch: `--batch-size` node ids drawn uniformly
 * (splitmix64 keyed by the batch number), duplicates dropped by both sides.
 *
 * For each cached mode (fcr, fcr-sc, pscr, pscr-sc, fscr, fscr-sc) the CSR
 * sampler and the library run the same batches interleaved in chunks of 10
 * (each side timed alone, so both see the same machine load); the mode's
 * sampled edges/s is printed as a ratio of the CSR sampler's, three rounds,
 * the median ratio in the table (the machine is shared). The library
 * runs through its public API (gsnap_sampler_next), refresh included at
 * `--period` (default 50, the CLI's default); beside it the refresh seconds
 * per batch (stats t_refresh: on the background thread when the refresh is
 * prepared aside) and the seconds per batch the sampling thread waited for
 * it (t_refresh_wait), and the ratio had the refresh run on the sampling
 * thread (background seconds added to the sampling time). With `--workers N` (N > 1, options version >= 3) it
 * also prints batches/s of N workers vs 1, alternating twice, both through
 * gsnap_sampler_next with seeds NULL (the library's random seeds, uniform
 * like ours; workers need them); `--only MODE` picks the mode (default
 * fscr); beside it the machine's ceiling measured between those runs: a
 * CPU-bound loop on N threads vs 1 (spin_ceiling), and the CPU seconds per
 * batch of both (all threads: what the workers cost beyond the work, which
 * a busy machine does not hide). With `--slices K` it then runs the same
 * comparison interleaved (workers_interleaved: both samplers open at once,
 * 2K turns each of batches / K batches, A B B A, the same total batches as
 * the alternation). It prints the load average: the machine is shared.
 *
 *   bench_hotpath --input FILE [--format bin|tsv] [--fanouts 10,10]
 *                 [--batches 300] [--batch-size 1024] [--period 50]
 *                 [--only MODE] [--no-csr] [--workers N [--slices K]] [--profile-workers N]
 *                 [--out FILE]
 *
 * --only MODE --no-csr runs one mode alone (for `perf record`);
 * `--profile-workers N` runs only N workers on that mode (default fscr), once,
 * and prints batches/s, CPU seconds per batch, the bytes of a batch and the
 * entries redrawn per batch by lazy refreshes (stats.refreshed_entries) (for
 * `perf stat` / `perf record` of 1 worker against N).
 * bench/run_workers_ab.sh runs the 2-vs-1 comparison on the cases,
 * optionally against an older build.
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <time.h>
#include <pthread.h>
#include <sys/resource.h>
#include "bench/bench_util.h"


static void die(const char *what, int rc) {
    fprintf(stderr, "bench_hotpath: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}


/* ---- the lean in-memory CSR sampler (the baseline) -------------------------- */

typedef struct { uint64_t n, *off, *adj; } csr;
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
/* In-edges, distinct neighbours, ascending (what the library samples from). */
static void csr_build(csr *g, const edge *e, size_t m, uint64_t n) {
    g->n = n;
    g->off = calloc(n + 1, sizeof *g->off);
    for (size_t i = 0; i < m; i++) g->off[e[i].d + 1]++;
    for (uint64_t v = 0; v < n; v++) g->off[v + 1] += g->off[v];
    uint64_t *pos = malloc(n * sizeof *pos), w = 0;
    memcpy(pos, g->off, n * sizeof *pos);
    g->adj = malloc((m ? m : 1) * sizeof *g->adj);
    for (size_t i = 0; i < m; i++) g->adj[pos[e[i].d]++] = e[i].s;
    for (uint64_t v = 0; v < n; v++) {
        uint64_t a = g->off[v], b = g->off[v + 1];
        qsort(g->adj + a, b - a, sizeof *g->adj, cmp_u64);
        g->off[v] = w;
        for (uint64_t i = a; i < b; i++)
            if (i == a || g->adj[i] != g->adj[i - 1]) g->adj[w++] = g->adj[i];
    }
    g->off[n] = w;
    free(pos);
}

typedef struct { uint32_t *mark, *local, stamp; } csr_scratch;
typedef struct { uint64_t *src; uint32_t *ptr, *idx; } csr_layer;

/* One batch: L layers from the seeds outwards; returns the sampled edges. */
static uint64_t csr_batch(const csr *g, csr_scratch *cs, csr_layer *ly, const uint64_t *seeds,
                          size_t ns, const int32_t *fan, unsigned L, uint64_t batch) {
    uint64_t x = batch * 0x9E3779B97F4A7C15ull | 1, total = 0; /* xorshift64 state */
    const uint64_t *dst = seeds;
    size_t ndst = 0;
    cs->stamp++; /* the seeds, deduplicated in first-seen order */
    for (size_t i = 0; i < ns; i++)
        if (cs->mark[seeds[i]] != cs->stamp) {
            cs->mark[seeds[i]] = cs->stamp;
            ly[L].src[ndst++] = seeds[i];
        }
    dst = ly[L].src;
    for (unsigned li = L; li-- > 0;) {
        uint32_t f = (uint32_t)fan[li], nsrc = 0, ne = 0, pick[64];
        uint64_t *src = ly[li].src;
        cs->stamp++;
        for (size_t i = 0; i < ndst; i++) {
            cs->mark[dst[i]] = cs->stamp;
            cs->local[dst[i]] = nsrc;
            src[nsrc++] = dst[i];
        }
        ly[li].ptr[0] = 0;
        for (size_t i = 0; i < ndst; i++) {
            const uint64_t *a = g->adj + g->off[dst[i]];
            uint64_t d = g->off[dst[i] + 1] - g->off[dst[i]];
            uint32_t k = d < f ? (uint32_t)d : f;
            for (uint32_t j = 0; j < k; j++) pick[j] = j;
            if (k < d)
                for (uint64_t j = d - k, m = 0; j < d; j++, m++) { /* Floyd */
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    uint32_t t = (uint32_t)(((unsigned __int128)x * (j + 1)) >> 64), dup = 0;
                    for (uint64_t q = 0; q < m; q++) dup |= pick[q] == t;
                    pick[m] = dup ? (uint32_t)j : t;
                }
            for (uint32_t j = 0; j < k; j++) {
                uint64_t u = a[pick[j]];
                if (cs->mark[u] != cs->stamp) {
                    cs->mark[u] = cs->stamp;
                    cs->local[u] = nsrc;
                    src[nsrc++] = u;
                }
                ly[li].idx[ne++] = cs->local[u];
            }
            ly[li].ptr[i + 1] = ne;
        }
        total += ne;
        dst = src;
        ndst = nsrc;
    }
    return total;
}

/* ---- runs ---------------------------------------------------------------------- */

static void seeds_of(uint64_t batch, uint64_t n, uint64_t *out, size_t k) {
    uint64_t x = batch * 7919 + 17;
    for (size_t i = 0; i < k; i++) out[i] = (uint64_t)(((unsigned __int128)mix(&x) * n) >> 64);
}

typedef struct {
    const csr *g;
    csr_scratch cs;
    csr_layer ly[GSNAP_MAX_LAYERS + 1];
} csr_run_ctx;

typedef struct { double eps, eps_sync, csr_eps, refresh_per_batch, wait_per_batch, secs, cpu, bytes; uint64_t edges, redrawn; } lib_res;

/* A sampler of the library on db: mode, fanouts, refresh period, seed 1,
 * `workers` batch workers (where the options have them). */
static gsnap_sampler *open_lib(gsnap_db *db, gsnap_sample_mode mode, const int32_t *fan, unsigned L,
                               unsigned period, unsigned workers) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = mode;
    o.layers = L;
    memcpy(o.fanouts, fan, sizeof(int32_t) * L);
    o.period = period;
    o.seed = 1;
#if GSNAP_SAMPLER_OPTIONS_VERSION >= 3
    o.workers = workers;
#else
    (void)workers;
#endif
    gsnap_sampler *s;
    int rc = gsnap_sampler_open(db, NULL, &o, &s);
    if (rc) die("sampler open", rc);
    return s;
}

/* The library over `batches` batches; with c, the CSR sampler runs the same
 * batches interleaved in chunks of 10 (CSR chunk, then library chunk), each
 * side timed alone: both see the same machine load. */
static lib_res lib_run(gsnap_db *db, gsnap_sample_mode mode, const int32_t *fan, unsigned L,
                       unsigned period, unsigned workers, uint64_t *seeds, uint64_t n,
                       unsigned bsize, unsigned batches, csr_run_ctx *c, int lib_seeds) {
    gsnap_sampler *s = open_lib(db, mode, fan, L, period, workers);
    int rc;
    double tl = 0, tc = 0, u0 = cpu_now();
    uint64_t ce = 0;
    double bytes = 0;
    for (unsigned b0 = 0; b0 < batches; b0 += 10) {
        unsigned b1 = b0 + 10 < batches ? b0 + 10 : batches;
        double t0 = now();
        for (unsigned b = b0; c && b < b1; b++) {
            seeds_of(b, n, seeds, bsize);
            ce += csr_batch(c->g, &c->cs, c->ly, seeds, bsize, fan, L, b);
        }
        double t1 = now();
        for (unsigned b = b0; b < b1; b++) {
            const void *buf;
            size_t len;
            if (!lib_seeds) seeds_of(b, n, seeds, bsize);
            rc = gsnap_sampler_next(s, lib_seeds ? NULL : seeds, bsize, &buf, &len);
            if (rc) die("sample", rc);
            bytes += (double)len;
        }
        tc += t1 - t0;
        tl += now() - t1;
    }
    lib_res r;
    r.cpu = cpu_now() - u0; /* with c: the CSR chunks too */
    r.secs = tl;
    r.bytes = bytes / (batches ? batches : 1);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    r.edges = st.edges;
    r.redrawn = st.refreshed_entries;
    r.eps = (double)st.edges / r.secs;
    r.csr_eps = c ? (double)ce / tc : 0;
    r.refresh_per_batch = st.t_refresh / (batches ? batches : 1);
    r.wait_per_batch = st.t_refresh_wait / (batches ? batches : 1);
    /* as if the refresh ran on the sampling thread: background seconds added,
     * waits taken out (PSCR refreshes in the batch: already inside) */
    int inline_refresh = mode == GSNAP_MODE_PSCR || mode == GSNAP_MODE_PSCR_SC;
    r.eps_sync = (double)st.edges /
                 (r.secs + (inline_refresh ? 0 : st.t_refresh - st.t_refresh_wait));
    gsnap_sampler_close(s);
    return r;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* N workers against 1, interleaved: both samplers open at once on the same
 * store and mode, driven in turns of batches / (2 * slices) batches each
 * (A B B A, ...), so that both see the same machine over the whole run
 * instead of one after the other (the machine is shared: its speed drifts
 * by tens of percent over seconds). Per side: batches/s over all its
 * turns, CPU seconds per batch; per pair of turns the ratio, whose median
 * and lowest are printed beside the overall ratio. */
typedef struct { double r1, rn, c1, cn, med, lo; } interleaved_res;
static interleaved_res workers_interleaved(gsnap_db *db, gsnap_sample_mode mode, const int32_t *fan,
                                           unsigned L, unsigned period, unsigned workers, unsigned bsize,
                                           unsigned batches, unsigned slices) {
    gsnap_sampler *s[2] = {open_lib(db, mode, fan, L, period, 1), open_lib(db, mode, fan, L, period, workers)};
    unsigned per = batches / (2 * slices);
    if (per == 0) per = 1;
    double secs[2] = {0, 0}, cpu[2] = {0, 0}, *pair = calloc(2 * slices, sizeof *pair);
    if (!pair) die("interleaved turns", GSNAP_ENOMEM);
    unsigned done[2] = {0, 0}, np = 0;
    for (unsigned t = 0; t < 2 * slices; t++) {
        double ts[2] = {0, 0};
        for (int j = 0; j < 2; j++) {
            int k = (t & 1) ? 1 - j : j; /* A B, then B A */
            double c0 = cpu_now(), t0 = now();
            for (unsigned b = 0; b < per; b++) {
                const void *buf;
                size_t len;
                int rc = gsnap_sampler_next(s[k], NULL, bsize, &buf, &len);
                if (rc) die("sample", rc);
            }
            ts[k] = now() - t0;
            secs[k] += ts[k];
            cpu[k] += cpu_now() - c0;
            done[k] += per;
        }
        pair[np++] = ts[0] / (ts[1] > 0 ? ts[1] : 1e-9);
    }
    qsort(pair, np, sizeof *pair, cmp_dbl);
    interleaved_res r;
    r.r1 = done[0] / secs[0];
    r.rn = done[1] / secs[1];
    r.c1 = cpu[0] / done[0];
    r.cn = cpu[1] / done[1];
    r.med = np % 2 ? pair[np / 2] : 0.5 * (pair[np / 2 - 1] + pair[np / 2]);
    r.lo = pair[0];
    free(pair);
    gsnap_sampler_close(s[0]);
    gsnap_sampler_close(s[1]);
    return r;
}

/* The machine's 2-thread ceiling now: a CPU-bound loop (splitmix64 chain,
 * no memory) run for `secs` on 1 thread and then on n threads; returns the
 * ratio of the work rates (n / 1). On an idle n-core machine ~n. */
typedef struct { double secs; uint64_t iters, sink; } spin_arg;
static void *spin_main(void *p) {
    spin_arg *a = p;
    uint64_t x = 1, it = 0;
    double t0 = now();
    while (now() - t0 < a->secs) {
        for (int i = 0; i < 100000; i++) x = mix(&x);
        it += 100000;
    }
    a->iters = it;
    a->sink = x;
    return NULL;
}
static double spin_ceiling(unsigned n, double secs) {
    pthread_t th[64];
    spin_arg one = {secs, 0, 0}, a[64];
    spin_main(&one);
    uint64_t tot = 0;
    if (n > 64) n = 64;
    for (unsigned i = 0; i < n; i++) {
        a[i] = (spin_arg){secs, 0, 0};
        pthread_create(&th[i], NULL, spin_main, &a[i]);
    }
    for (unsigned i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        tot += a[i].iters;
    }
    return (double)tot / (double)(one.iters ? one.iters : 1);
}

int main(int argc, char **argv) {
    const char *input = NULL, *fmt = NULL, *fans = "10,10", *only = NULL, *outp = NULL;
    unsigned batches = 300, bsize = 1024, period = 50, workers = 1, profile = 0, slices = 0;
    int no_csr = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc) input = argv[++i];
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) fmt = argv[++i];
        else if (!strcmp(argv[i], "--fanouts") && i + 1 < argc) fans = argv[++i];
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc) batches = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch-size") && i + 1 < argc) bsize = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--period") && i + 1 < argc) period = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc) workers = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) outp = argv[++i];
        else if (!strcmp(argv[i], "--profile-workers") && i + 1 < argc) profile = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--slices") && i + 1 < argc) slices = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-csr")) no_csr = 1;
        else {
            fprintf(stderr, "usage: bench_hotpath --input FILE [--format bin|tsv] [--fanouts 10,10] "
                            "[--batches B] [--batch-size N] [--period T] [--only MODE] [--no-csr] "
                            "[--workers N [--slices K]] [--profile-workers N] [--out FILE]\n");
            return 2;
        }
    }
    if (!input) { fprintf(stderr, "bench_hotpath: --input is required\n"); return 2; }
    char defout[128];
    if (!outp) {
        snprintf(defout, sizeof defout, "hotpath-%lld.txt", (long long)time(NULL));
        outp = defout;
    }
    if (!(bench_out = fopen(outp, "w"))) { perror(outp); return 1; }
    int32_t fan[GSNAP_MAX_LAYERS];
    unsigned L = 0;
    for (const char *p = fans; *p && L < 8;) {
        fan[L++] = (int32_t)strtol(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    for (unsigned l = 0; l < L; l++)
        if (fan[l] <= 0 || fan[l] > 64) { fprintf(stderr, "bench_hotpath: fanouts in 1..64\n"); return 2; }
    int bin = fmt ? !strcmp(fmt, "bin") : strstr(input, ".bin") != NULL;
    size_t m;
    edge *e = read_edges(input, bin, 0, &m);
    uint64_t n = 0;
    for (size_t i = 0; i < m; i++) {
        if (e[i].s + 1 > n) n = e[i].s + 1;
        if (e[i].d + 1 > n) n = e[i].d + 1;
    }
    say("# bench_hotpath: %s: %zu edges, %llu node ids; fanouts [%s], %u batches of %u uniform "
        "seed ids (deduplicated), period %u, alpha 2, one sampling thread\n", input, m,
        (unsigned long long)n, fans, batches, bsize, period);
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-hotpath-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    dopt.keep = GSNAP_KEEP_IN;
    gsnap_db *db;
    int rc;
    if ((rc = gsnap_db_open(dir, &dopt, &db))) die("open", rc);
    double t0 = now();
    for (size_t i = 0; i < m;) {
        gsnap_batch *b;
        if ((rc = gsnap_batch_begin(db, &b))) die("batch", rc);
        for (size_t k = 0; k < 1000000 && i < m; k++, i++)
            if ((rc = gsnap_batch_add(b, e[i].s, e[i].d, e[i].t == INT64_MAX ? 0 : e[i].t)))
                die("add", rc);
        if ((rc = gsnap_batch_commit(b, NULL))) die("commit", rc);
    }
    if ((rc = gsnap_db_compact(db))) die("compact", rc);
    say("# ingest + compact: %.2f s\n", now() - t0);
    csr_run_ctx c;
    memset(&c, 0, sizeof c);
    csr g;
    csr_build(&g, e, m, n);
    free(e);
    c.g = &g;
    c.cs.mark = calloc(n, 4);
    c.cs.local = calloc(n, 4);
    size_t fr = bsize; /* frontier bound per layer */
    c.ly[L].src = malloc(fr * 8);
    for (unsigned li = L; li-- > 0;) {
        c.ly[li].ptr = malloc((fr + 1) * 4);
        c.ly[li].idx = malloc(fr * (size_t)fan[li] * 4);
        fr += fr * (size_t)fan[li];
        c.ly[li].src = malloc(fr * 8);
    }
    uint64_t *seeds = malloc(bsize * sizeof *seeds);
    if (profile) {
        gsnap_sample_mode pm = GSNAP_MODE_FSCR;
        if (only) gsnap_sample_mode_parse(only, &pm);
        lib_res a = lib_run(db, pm, fan, L, period, profile, seeds, n, bsize, batches, NULL, 1);
        say("%s: %u workers: %.1f batches/s, CPU seconds per batch %.3g, %.0f bytes per batch, "
            "%.0f entries redrawn per batch\n", gsnap_sample_mode_name(pm), profile,
            batches / a.secs, a.cpu / batches, a.bytes, (double)a.redrawn / batches);
        gsnap_db_close(db); /* and its directory (it used to stay in /tmp) */
        char rm[600];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", dir);
        fclose(bench_out);
        return 0;
    }
    static const gsnap_sample_mode modes[] = {GSNAP_MODE_FCR, GSNAP_MODE_FCR_SC, GSNAP_MODE_PSCR,
                                              GSNAP_MODE_PSCR_SC, GSNAP_MODE_FSCR,
                                              GSNAP_MODE_FSCR_SC};
    say("\n| sampler | edges/s | CSR edges/s | vs CSR (median of 3) | refresh s/batch | waited s/batch | "
        "ratios of the 3 rounds | vs CSR, refresh on the sampling thread |\n"
        "|---|---:|---:|---:|---:|---:|---|---:|\n");
    double worst = 1e9;
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        const char *name = gsnap_sample_mode_name(modes[i]);
        if (only && strcmp(only, name)) continue;
        lib_res r[3];
        double q[3];
        int rounds = no_csr ? 1 : 3;
        for (int k = 0; k < rounds; k++) {
            r[k] = lib_run(db, modes[i], fan, L, period, 1, seeds, n, bsize, batches,
                           no_csr ? NULL : &c, 0);
            q[k] = no_csr ? 0 : r[k].eps / r[k].csr_eps;
        }
        double sq[3] = {q[0], q[1], q[2]};
        qsort(sq, (size_t)rounds, sizeof *sq, cmp_dbl);
        double ratio = sq[rounds / 2];
        int mk = 0;
        for (int k = 0; k < rounds; k++)
            if (q[k] == ratio) mk = k;
        if (!no_csr && ratio < worst) worst = ratio;
        say("| %s | %.3g | %.3g | %.2fx | %.2e | %.2e | %.2f, %.2f, %.2f | %.2fx |\n", name,
            r[mk].eps, r[mk].csr_eps, ratio, r[mk].refresh_per_batch, r[mk].wait_per_batch, q[0],
            rounds > 1 ? q[1] : 0, rounds > 2 ? q[2] : 0,
            no_csr ? 0 : r[mk].eps_sync / r[mk].csr_eps);
    }
    if (!no_csr && !only) say("\nlowest ratio: %.2fx of the CSR sampler\n", worst);
    if (workers > 1) {
        /* batches/s of N workers vs 1, alternating twice (noisy machine); the
         * library's own random seeds (seeds NULL), which workers need */
        gsnap_sample_mode wm = GSNAP_MODE_FSCR;
        if (only) gsnap_sample_mode_parse(only, &wm);
        double r1 = 0, rn = 0, spin = 0, c1 = 0, cn = 0, red = 0;
        for (int round = 0; round < 2; round++) {
            lib_res a = lib_run(db, wm, fan, L, period, 1, seeds, n, bsize, batches, NULL, 1);
            lib_res b = lib_run(db, wm, fan, L, period, workers, seeds, n, bsize, batches, NULL, 1);
            c1 += a.cpu;
            cn += b.cpu;
            red += (double)a.redrawn / (2.0 * batches);
            r1 += batches / a.secs;
            rn += batches / b.secs;
            spin += spin_ceiling(workers, 0.5 * (a.secs + b.secs) / 2) / 2;
        }
        say("\n%s: %u workers %.1f batches/s vs 1 worker %.1f batches/s: %.2fx "
            "(a CPU-bound loop on %u threads vs 1, measured between the runs: %.2fx)\n",
            gsnap_sample_mode_name(wm), workers, rn / 2, r1 / 2, rn / r1, workers, spin);
        /* the work the workers add: CPU seconds per batch, all threads, over
         * the batches (not the open); 1.00 = no overhead, so on N free cores
         * the rate would be up to N x this */
        say("%s: CPU seconds per batch: 1 worker %.3g, %u workers %.3g: work efficiency %.2f\n",
            gsnap_sample_mode_name(wm), c1 / (2.0 * batches), workers, cn / (2.0 * batches),
            c1 / (cn > 0 ? cn : 1));
        say("%s: lazy redraws per batch (1 worker): %.0f\n", gsnap_sample_mode_name(wm), red);
        if (slices > 0) {
            interleaved_res ir = workers_interleaved(db, wm, fan, L, period, workers, bsize, 2 * batches, slices);
            say("%s: interleaved in %u turns each: %u workers %.1f batches/s vs 1 worker %.1f batches/s: "
                "%.2fx (per pair of turns: median %.2fx, lowest %.2fx); work efficiency %.2f\n",
                gsnap_sample_mode_name(wm), 2 * slices, workers, ir.rn, ir.r1, ir.rn / ir.r1, ir.med, ir.lo,
                ir.c1 / (ir.cn > 0 ? ir.cn : 1));
        }
    }
    FILE *la = fopen("/proc/loadavg", "r");
    char lbuf[128] = "?";
    if (la) {
        if (!fgets(lbuf, sizeof lbuf, la)) strcpy(lbuf, "?\n");
        fclose(la);
    }
    say("# load average at the end: %s", lbuf);
    free(seeds);
    for (unsigned li = 0; li <= L; li++) {
        free(c.ly[li].src);
        free(c.ly[li].ptr);
        free(c.ly[li].idx);
    }
    free(c.cs.mark);
    free(c.cs.local);
    free(g.off);
    free(g.adj);
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    fclose(bench_out);
    printf("# results written to %s\n", outp);
    return 0;
}
