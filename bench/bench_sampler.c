/*
 * bench/bench_sampler.c -- sampled edges per second of every sampler mode,
 * against FBL (every layer from the store) and a plain in-memory CSR sampler
 * written here as the limit; hit rates; the time of one OTF refresh
 * (gamma 0.15) over all cached nodes; sampling throughput while a refresh
 * runs in a background thread vs steady state. Single sampling thread.
 *
 *   bench_sampler --input FILE [--format bin|tsv] [--fanouts 10,10,10]...
 *                 [--batches 100] [--batch-size 1024] [--period 50]
 *                 [--fbl-seconds 20] [--refresh-only] [--series FILE]
 *
 * Input: bin = records of u64 src, u64 dst, i64 t (tools/rmat --binary);
 * tsv = "src dst t" lines (data/pgp.tsv). The graph is ingested into a fresh
 * database under $TMPDIR (sync none, compacted), then sampled at its newest
 * version, direction in. Cached modes run without a snapshot: their caches
 * are built in memory from the store at open (timed separately as "open s").
 * Every mode gets the same seeds: batch b's seeds are uniform node ids from
 * a splitmix64 stream keyed by b. The CSR sampler runs three times (before,
 * amid and after the modes) and the fastest run is the limit; the table is
 * printed at the end, every vs-CSR ratio against that limit.
 * --series FILE writes the plot data (bench/plot.py): per fanout list, one
 * tab-separated record "sampling f=FANOUTS  MODE  0  EDGES/S" per mode and
 * one for the CSR limit.
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench/bench_util.h"

typedef struct { double topen, eps, eps_x; unsigned nb; uint64_t refreshes; char hr[128]; } row;

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_sampler: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}


/* ---- the plain in-memory CSR sampler (the limit) --------------------------- */

typedef struct { uint64_t n; uint64_t *off; uint64_t *adj; } csr;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* In-edges, distinct neighbours, ascending. */
static void csr_build(csr *g, const edge *e, size_t m, uint64_t n) {
    g->n = n;
    g->off = calloc(n + 1, sizeof *g->off);
    for (size_t i = 0; i < m; i++) g->off[e[i].d + 1]++;
    for (uint64_t v = 0; v < n; v++) g->off[v + 1] += g->off[v];
    uint64_t *pos = malloc(n * sizeof *pos);
    memcpy(pos, g->off, n * sizeof *pos);
    g->adj = malloc((m ? m : 1) * sizeof *g->adj);
    for (size_t i = 0; i < m; i++) g->adj[pos[e[i].d]++] = e[i].s;
    uint64_t w = 0;
    for (uint64_t v = 0; v < n; v++) { /* sort and dedupe each list, compacting */
        uint64_t a = g->off[v], b = g->off[v + 1];
        qsort(g->adj + a, b - a, sizeof *g->adj, cmp_u64);
        g->off[v] = w;
        for (uint64_t i = a; i < b; i++)
            if (i == a || g->adj[i] != g->adj[i - 1]) g->adj[w++] = g->adj[i];
    }
    g->off[n] = w;
    free(pos);
}

typedef struct {
    uint32_t *mark;   /* per node: stamp of the layer that saw it */
    uint32_t *local;  /* per node: its index in the layer's sources */
    uint32_t stamp;
    uint64_t *src[16];
    uint32_t *idx[16], *ptr[16];
    size_t cap_src[16], cap_idx[16], cap_ptr[16];
} csr_sampler;

static void grow(void **p, size_t *cap, size_t n, size_t es) {
    if (n <= *cap) return;
    size_t c = *cap ? *cap : 1024;
    while (c < n) c *= 2;
    *p = realloc(*p, c * es);
    *cap = c;
}

/* One mini-batch, same shape as the library's: per layer, sources with the
 * destinations as prefix, CSR indices. Returns sampled edges. */
static uint64_t csr_sample(const csr *g, csr_sampler *cs, const uint64_t *seeds, size_t ns,
                           const int32_t *fan, unsigned L, uint64_t batch) {
    uint64_t total = 0;
    const uint64_t *dst = seeds;
    size_t ndst = ns;
    uint32_t pick[64];
    for (unsigned h = 0; h < L; h++) {
        unsigned li = L - 1 - h;
        int32_t f = fan[li];
        cs->stamp++;
        grow((void **)&cs->src[li], &cs->cap_src[li], ndst * ((size_t)f + 1) + 1, 8);
        grow((void **)&cs->ptr[li], &cs->cap_ptr[li], ndst + 1, 4);
        grow((void **)&cs->idx[li], &cs->cap_idx[li], ndst * (size_t)f + 1, 4);
        uint64_t *src = cs->src[li];
        size_t nsrc = 0, ne = 0;
        for (size_t i = 0; i < ndst; i++) {
            uint64_t v = dst[i];
            if (cs->mark[v] != cs->stamp) {
                cs->mark[v] = cs->stamp;
                cs->local[v] = (uint32_t)nsrc;
                src[nsrc++] = v;
            }
        }
        cs->ptr[li][0] = 0;
        for (size_t i = 0; i < ndst; i++) {
            uint64_t v = dst[i], a = g->off[v], d = g->off[v + 1] - a;
            size_t k = d < (uint64_t)f ? (size_t)d : (size_t)f;
            uint64_t r = batch * 0x100000001B3ull ^ v ^ ((uint64_t)h << 56);
            if (k == d) {
                for (size_t j = 0; j < k; j++) pick[j] = (uint32_t)j;
            } else { /* Floyd */
                size_t m = 0;
                for (uint64_t j = d - k; j < d; j++) {
                    uint32_t t = (uint32_t)(((unsigned __int128)mix(&r) * (j + 1)) >> 64);
                    int dup = 0;
                    for (size_t q = 0; q < m; q++) dup |= pick[q] == t;
                    pick[m++] = dup ? (uint32_t)j : t;
                }
            }
            for (size_t j = 0; j < k; j++) {
                uint64_t u = g->adj[a + pick[j]];
                if (cs->mark[u] != cs->stamp) {
                    cs->mark[u] = cs->stamp;
                    cs->local[u] = (uint32_t)nsrc;
                    src[nsrc++] = u;
                }
                cs->idx[li][ne++] = cs->local[u];
            }
            cs->ptr[li][i + 1] = (uint32_t)ne;
        }
        total += ne;
        dst = src;
        ndst = nsrc;
    }
    return total;
}

/* ---- main -------------------------------------------------------------------- */

static void seeds_of(uint64_t batch, uint64_t n, uint64_t *out, size_t k) {
    uint64_t x = batch * 7919 + 17;
    for (size_t i = 0; i < k; i++) out[i] = (uint64_t)(((unsigned __int128)mix(&x) * n) >> 64);
}

/* Edges per second of the CSR sampler over the same batches. */
static double csr_run(const csr *g, csr_sampler *cs, uint64_t *seeds, uint64_t n, unsigned bsize,
                      const int32_t *fan, int L, unsigned batches) {
    uint64_t edges = 0;
    double t0 = now();
    for (unsigned b = 0; b < batches; b++) {
        seeds_of(b, n, seeds, bsize);
        edges += csr_sample(g, cs, seeds, bsize, fan, (unsigned)L, b);
    }
    return (double)edges / (now() - t0);
}

static int parse_fan(const char *s, int32_t *f) {
    int n = 0;
    while (*s && n < 16) {
        f[n++] = (int32_t)strtol(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *input = NULL, *fmt = NULL;
    const char *fans[4];
    int nfans = 0;
    unsigned batches = 100, bsize = 1024, period = 50;
    double fbl_cap = 20;
    int refresh_only = 0; /* skip the mode table: only the refresh measurements */
    FILE *series = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc) input = argv[++i];
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) fmt = argv[++i];
        else if (!strcmp(argv[i], "--fanouts") && i + 1 < argc && nfans < 4) fans[nfans++] = argv[++i];
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc) batches = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch-size") && i + 1 < argc) bsize = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--period") && i + 1 < argc) period = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fbl-seconds") && i + 1 < argc) fbl_cap = atof(argv[++i]);
        else if (!strcmp(argv[i], "--refresh-only")) refresh_only = 1;
        else if (!strcmp(argv[i], "--series") && i + 1 < argc) {
            if (!(series = fopen(argv[++i], "w"))) { perror(argv[i]); return 1; }
            fprintf(series, "# bench_sampler series (PLOT SERIES X Y; see bench/plot.py)\n");
        }
        else { fprintf(stderr, "usage: bench_sampler --input FILE [--format bin|tsv] [--fanouts 10,10,10]... [--batches B] [--batch-size N] [--period T] [--fbl-seconds S] [--refresh-only] [--series FILE]\n"); return 2; }
    }
    if (!input) { fprintf(stderr, "bench_sampler: --input is required\n"); return 2; }
    if (nfans == 0) { fans[0] = "10,10,10"; fans[1] = "5,5,5"; nfans = 2; }
    int bin = fmt ? !strcmp(fmt, "bin") : strstr(input, ".bin") != NULL;
    size_t m;
    edge *e = read_edges(input, bin, 0, &m);
    uint64_t n = 0;
    for (size_t i = 0; i < m; i++) {
        if (e[i].s + 1 > n) n = e[i].s + 1;
        if (e[i].d + 1 > n) n = e[i].d + 1;
    }
    printf("# bench_sampler: %s: %zu edges, %llu node ids; batches of %u seeds, period %u, "
           "alpha 2, gamma 0.15, delta 0.4; one sampling thread\n", input, m,
           (unsigned long long)n, bsize, period);
    /* the store */
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-sampler-XXXXXX", tmp && *tmp ? tmp : "/tmp");
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
            if ((rc = gsnap_batch_add(b, e[i].s, e[i].d, e[i].t == INT64_MAX ? 0 : e[i].t))) die("add", rc);
        if ((rc = gsnap_batch_commit(b, NULL))) die("commit", rc);
    }
    if ((rc = gsnap_db_compact(db))) die("compact", rc);
    printf("# ingest + compact: %.2f s\n", now() - t0);
    csr g;
    t0 = now();
    csr_build(&g, e, m, n);
    printf("# in-memory CSR build: %.2f s, %llu distinct edges\n", now() - t0,
           (unsigned long long)g.off[n]);
    free(e);
    uint64_t *seeds = malloc(bsize * sizeof *seeds);
    for (int fi = 0; fi < nfans; fi++) {
        int32_t fan[16];
        int L = parse_fan(fans[fi], fan);
        printf("\n## fanouts [%s]\n\n", fans[fi]);
        printf("| sampler | open s | batches | edges/s | edges/s excl. refresh | vs FBL | vs CSR | "
               "hit rate (layer 0,1,..) | refreshes |\n|---|---:|---:|---:|---:|---:|---:|---|---:|\n");
        /* CSR limit: measured three times (before, amid and after the modes:
         * the machine is shared), the fastest run is the limit */
        csr_sampler cs;
        memset(&cs, 0, sizeof cs);
        cs.mark = calloc(n, 4);
        cs.local = calloc(n, 4);
        double csr_eps = csr_run(&g, &cs, seeds, n, bsize, fan, L, batches);
        double fbl_eps = 0;
        row rows[GSNAP_MODE_COUNT];
        for (int mode = 0; mode < GSNAP_MODE_COUNT && !refresh_only; mode++) {
            gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
            o.mode = (gsnap_sample_mode)mode;
            o.layers = (unsigned)L;
            memcpy(o.fanouts, fan, sizeof(int32_t) * (size_t)L);
            o.period = period;
            o.seed = 1;
            gsnap_sampler *s;
            t0 = now();
            if ((rc = gsnap_sampler_open(db, NULL, &o, &s))) die("sampler open", rc);
            double topen = now() - t0;
            unsigned nb = 0;
            t0 = now();
            for (unsigned b = 0; b < batches; b++) {
                seeds_of(b, n, seeds, bsize);
                const void *buf;
                size_t len;
                if ((rc = gsnap_sampler_next(s, seeds, bsize, &buf, &len))) die("sample", rc);
                nb++;
                if (mode == GSNAP_MODE_FBL && now() - t0 > fbl_cap) break;
            }
            double secs = now() - t0;
            gsnap_sampler_stats st;
            gsnap_sampler_stats_get(s, &st);
            double eps = (double)st.edges / secs;
            double eps_x = (double)st.edges / (secs - st.t_refresh);
            if (mode == GSNAP_MODE_FBL) fbl_eps = eps;
            char hr[128] = "";
            for (int l = 0; l < L; l++) {
                uint64_t tot = st.layer[l].hits + st.layer[l].misses;
                size_t k = strlen(hr);
                snprintf(hr + k, sizeof hr - k, "%s%.3f", l ? ", " : "",
                         tot ? (double)st.layer[l].hits / (double)tot : 0.0);
            }
            row *rw = &rows[mode];
            rw->topen = topen;
            rw->nb = nb;
            rw->eps = eps;
            rw->eps_x = eps_x;
            rw->refreshes = st.refreshes;
            snprintf(rw->hr, sizeof rw->hr, "%s", hr);
            fflush(stdout);
            gsnap_sampler_close(s);
            if (mode == GSNAP_MODE_PSCR || mode == GSNAP_MODE_PCF_SC) {
                double c2 = csr_run(&g, &cs, seeds, n, bsize, fan, L, batches);
                if (c2 > csr_eps) csr_eps = c2;
            }
        }
        for (int mode = 0; mode < GSNAP_MODE_COUNT && !refresh_only; mode++) {
            const row *rw = &rows[mode];
            printf("| %s | %.2f | %u | %.0f | %.0f | %.2fx | %.2fx | %s | %llu |\n",
                   gsnap_sample_mode_name((gsnap_sample_mode)mode), rw->topen, rw->nb, rw->eps,
                   rw->eps_x, fbl_eps > 0 ? rw->eps / fbl_eps : 0, rw->eps / csr_eps, rw->hr,
                   (unsigned long long)rw->refreshes);
        }
        printf("| in-memory CSR (bench, best of 3) | - | %u | %.0f | - | %.2fx | 1.00x | - | - |\n", batches,
               csr_eps, fbl_eps > 0 ? csr_eps / fbl_eps : 0);
        for (int mode = 0; series && mode < GSNAP_MODE_COUNT && !refresh_only; mode++)
            fprintf(series, "sampling f=%s\t%s\t0\t%.0f\n", fans[fi],
                    gsnap_sample_mode_name((gsnap_sample_mode)mode), rows[mode].eps);
        if (series && !refresh_only) fprintf(series, "sampling f=%s\tin-memory CSR\t0\t%.0f\n", fans[fi], csr_eps);
        /* refresh cost and sampling during a background refresh (FSCR) */
        {
            gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
            o.mode = GSNAP_MODE_FSCR;
            o.layers = (unsigned)L;
            memcpy(o.fanouts, fan, sizeof(int32_t) * (size_t)L);
            o.gamma = 0.15;
            o.seed = 1;
            gsnap_sampler *s;
            if ((rc = gsnap_sampler_open(db, NULL, &o, &s))) die("sampler open", rc);
            t0 = now();
            if ((rc = gsnap_sampler_refresh(s))) die("refresh", rc);
            double tref = now() - t0;
            gsnap_sampler_stats st;
            gsnap_sampler_stats_get(s, &st);
            printf("\nOTF refresh (fscr, gamma 0.15) of all %llu cached entries (%d caches): %.3f s "
                   "(%llu ids replaced)\n", (unsigned long long)st.refreshed_entries, L, tref,
                   (unsigned long long)st.replaced_ids);
            /* steady state */
            uint64_t e0 = st.edges;
            t0 = now();
            unsigned b = 0;
            for (; b < 30; b++) {
                const void *buf;
                size_t len;
                seeds_of(1000 + b, n, seeds, bsize);
                if ((rc = gsnap_sampler_next(s, seeds, bsize, &buf, &len))) die("sample", rc);
            }
            gsnap_sampler_stats_get(s, &st);
            double steady = (double)(st.edges - e0) / (now() - t0);
            /* during a background refresh: batches until the new generation is
             * adopted; twice (the first allocates the second image, the second
             * reuses the previous generation's image) */
            for (int round = 0; round < 2; round++) {
                gsnap_sampler_stats_get(s, &st);
                uint64_t g0 = st.generation, r0 = st.refreshes;
                if ((rc = gsnap_sampler_refresh_async(s))) die("refresh_async", rc);
                e0 = st.edges;
                double tb = now(), tlast = tb;
                uint64_t elast = e0;
                unsigned during = 0;
                for (;;) {
                    const void *buf;
                    size_t len;
                    seeds_of(2000 + b++, n, seeds, bsize);
                    if ((rc = gsnap_sampler_next(s, seeds, bsize, &buf, &len))) die("sample", rc);
                    gsnap_sampler_stats_get(s, &st);
                    if (st.refreshes != r0) break; /* this batch ran on the new generation */
                    during++;
                    tlast = now();
                    elast = st.edges;
                }
                double dur = tlast - tb;
                printf("sampling during background refresh %d (%s): %u batches, %.0f edges/s vs "
                       "%.0f steady (%.0f%%); refresh took ~%.2f s; generation %llu -> %llu\n",
                       round + 1, round ? "reuses the previous image" : "allocates an image",
                       during, dur > 0 ? (double)(elast - e0) / dur : 0, steady,
                       dur > 0 ? 100.0 * (double)(elast - e0) / dur / steady : 0, now() - tb,
                       (unsigned long long)g0, (unsigned long long)st.generation);
            }
            gsnap_sampler_close(s);
        }
        free(cs.mark);
        free(cs.local);
        for (int l = 0; l < 16; l++) { free(cs.src[l]); free(cs.idx[l]); free(cs.ptr[l]); }
    }
    free(seeds);
    free(g.off);
    free(g.adj);
    if (series && fclose(series) != 0) { fprintf(stderr, "bench_sampler: writing the series failed\n"); return 1; }
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
