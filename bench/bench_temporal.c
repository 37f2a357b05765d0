/*
 * bench/bench_temporal.c -- temporal neighbour sampling throughput (sampled
 * events per second, single thread): graphsnap's temporal sampler against
 * (a) an in-memory T-CSR sampler written here (each node's in-events sorted
 * by time, binary search: TGL's design, the limit) and (b) the naive way with
 * the point-in-time API (gsnap_neighbors of each root at t - 1, then sample).
 *
 *   bench_temporal --input FILE [--format bin|tsv] [--batches 100]
 *                  [--naive-seconds 10] [--min-seconds 1] [--name NAME] [--out FILE]
 *
 * Input: bin = records of u64 src, u64 dst, i64 t (tools/rmat --binary);
 * tsv = "src dst t" lines (data/pgp.tsv). The events are ingested in input
 * order into a fresh database under $TMPDIR (sync none, batches of 100000:
 * one version each), then sampled at the newest version, direction in.
 * Roots as TGL makes them: batch b takes 300 consecutive events (in time
 * order) from a position keyed by b in the later half of the stream, and
 * its roots are their sources and destinations at the event's time: 600
 * roots. Strategies uniform and recent, fanouts [10] and [10,10]. Each
 * sampler runs the same batches: --batches for the guard, then as many as
 * make the T-CSR run last --min-seconds; graphsnap and the T-CSR alternate
 * three times and the best run of each counts (the machine is shared). The
 * naive way runs until --naive-seconds. For [10] the three must sample the
 * same number of events over the guard batches (exit 2 otherwise).
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench/bench_util.h"


static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t h, uint64_t n) { return (uint64_t)(((unsigned __int128)h * n) >> 64); }
static void die(const char *what, int rc) {
    fprintf(stderr, "bench_temporal: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}


static int edge_t_cmp(const void *a, const void *b) {
    const edge *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* ---- output arrays shared by the three samplers ----------------------------- */
typedef struct {
    uint64_t *rn, *nbr, *indptr, *idx;
    int64_t *rt, *et, *dt;
    size_t nr, ne, cap_r, cap_e;
} layer;

static void lay_reserve(layer *l, size_t nr, size_t ne) {
    if (nr + 1 > l->cap_r) {
        l->cap_r = (nr + 1) * 2;
        l->rn = realloc(l->rn, l->cap_r * 8);
        l->rt = realloc(l->rt, l->cap_r * 8);
        l->indptr = realloc(l->indptr, (l->cap_r + 1) * 8);
    }
    if (ne > l->cap_e) {
        l->cap_e = ne * 2;
        l->nbr = realloc(l->nbr, l->cap_e * 8);
        l->idx = realloc(l->idx, l->cap_e * 8);
        l->et = realloc(l->et, l->cap_e * 8);
        l->dt = realloc(l->dt, l->cap_e * 8);
    }
}

/* ---- (a) the in-memory T-CSR: in-events per node sorted by time ------------- */
typedef struct { uint64_t nn; uint64_t *off; int64_t *t; uint64_t *nbr; } tcsr;

static void tcsr_build(tcsr *c, const edge *e, size_t m) { /* e sorted by t: a stable counting sort */
    uint64_t mx = 0;
    for (size_t i = 0; i < m; i++) { if (e[i].s > mx) mx = e[i].s; if (e[i].d > mx) mx = e[i].d; }
    c->nn = mx + 1;
    c->off = calloc(c->nn + 1, 8);
    c->t = malloc(m * 8);
    c->nbr = malloc(m * 8);
    for (size_t i = 0; i < m; i++) c->off[e[i].d + 1]++;
    for (uint64_t v = 0; v < c->nn; v++) c->off[v + 1] += c->off[v];
    uint64_t *pos = malloc(c->nn * 8);
    memcpy(pos, c->off, c->nn * 8);
    for (size_t i = 0; i < m; i++) {
        uint64_t p = pos[e[i].d]++;
        c->t[p] = e[i].t;
        c->nbr[p] = e[i].s;
    }
    free(pos);
}

static size_t upper(const int64_t *a, size_t n, int64_t x) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* f distinct in [0, n), Floyd, linear membership (f small). */
static size_t floyd(uint64_t key, size_t n, size_t f, uint32_t *out) {
    if (f >= n) { for (size_t i = 0; i < n; i++) out[i] = (uint32_t)i; return n; }
    size_t k = 0;
    for (size_t j = n - f; j < n; j++) {
        uint32_t t = (uint32_t)below(mix64(key + j), j + 1);
        int dup = 0;
        for (size_t q = 0; q < k && !dup; q++) dup = out[q] == t;
        out[k++] = dup ? (uint32_t)j : t;
    }
    return k;
}

static void tcsr_layer(const tcsr *c, layer *l, size_t f, int recent, uint64_t key) {
    uint32_t pick[64];
    lay_reserve(l, l->nr, l->nr * f);
    l->ne = 0;
    l->indptr[0] = 0;
    for (size_t r = 0; r < l->nr; r++) {
        uint64_t v = l->rn[r];
        int64_t rt = l->rt[r];
        if (v < c->nn) {
            uint64_t b = c->off[v];
            size_t hi = upper(c->t + b, c->off[v + 1] - b, rt - 1);
            size_t k = recent ? (hi < f ? hi : f) : floyd(mix64(key ^ r), hi, f, pick);
            for (size_t i = 0; i < k; i++) {
                size_t j = recent ? hi - k + i : pick[i];
                size_t e = l->ne++;
                l->nbr[e] = c->nbr[b + j];
                l->et[e] = c->t[b + j];
                l->idx[e] = j;
                l->dt[e] = rt - c->t[b + j];
            }
        }
        l->indptr[r + 1] = l->ne;
    }
}

/* ---- (b) naive: point-in-time neighbours, then sample ----------------------- */
static gsnap_nbr *nbuf;
static size_t nbuf_cap;
static int nbr_t_cmp(const void *a, const void *b) {
    const gsnap_nbr *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}
static void naive_layer(gsnap_db *db, gsnap_read *rd, layer *l, size_t f, int recent, uint64_t key) {
    uint32_t pick[64];
    lay_reserve(l, l->nr, l->nr * f);
    l->ne = 0;
    l->indptr[0] = 0;
    for (size_t r = 0; r < l->nr; r++) {
        size_t cnt;
        int rc;
        for (;;) {
            if ((rc = gsnap_neighbors(db, rd, l->rn[r], GSNAP_DIR_IN, l->rt[r] - 1, GSNAP_VERSION_LATEST,
                                      nbuf, nbuf_cap, &cnt)))
                die("neighbors", rc);
            if (cnt <= nbuf_cap) break;
            nbuf_cap = cnt * 2;
            nbuf = realloc(nbuf, nbuf_cap * sizeof *nbuf);
        }
        size_t k;
        if (recent) {
            qsort(nbuf, cnt, sizeof *nbuf, nbr_t_cmp);
            k = cnt < f ? cnt : f;
        } else {
            k = floyd(mix64(key ^ r), cnt, f, pick);
        }
        for (size_t i = 0; i < k; i++) {
            const gsnap_nbr *x = recent ? &nbuf[cnt - k + i] : &nbuf[pick[i]];
            size_t e = l->ne++;
            l->nbr[e] = x->node;
            l->et[e] = x->t;
            l->idx[e] = i;
            l->dt[e] = l->rt[r] - x->t;
        }
        l->indptr[r + 1] = l->ne;
    }
}

/* ---- driver ------------------------------------------------------------------ */
enum { S_GSNAP, S_TCSR, S_NAIVE };

typedef struct {
    const edge *ev; /* time-sorted */
    size_t m;
    unsigned nl;
    uint32_t f[2];
    int recent;
    tcsr *c;
    gsnap_db *db;
    gsnap_tsampler *ts;
    layer L[2];
} ctx;

static void roots_of(ctx *x, uint64_t b, layer *l0) {
    size_t half = x->m / 2, span = x->m - half > 300 ? x->m - half - 300 : 1;
    size_t p = half + below(mix64(b * 7919 + 1), span);
    lay_reserve(l0, 600, 0);
    l0->nr = 0;
    for (size_t i = p; i < p + 300 && i < x->m; i++) {
        l0->rn[l0->nr] = x->ev[i].s;
        l0->rt[l0->nr++] = x->ev[i].t;
        l0->rn[l0->nr] = x->ev[i].d;
        l0->rt[l0->nr++] = x->ev[i].t;
    }
}

/* One batch with sampler `who`; returns the sampled events (layer 0 in *first). */
static uint64_t run_batch(ctx *x, int who, uint64_t b, gsnap_read *rd, uint64_t *first) {
    layer *L = x->L;
    roots_of(x, b, &L[0]);
    if (who == S_GSNAP) {
        const void *buf;
        size_t len;
        int rc = gsnap_tsampler_sample(x->ts, L[0].rn, L[0].rt, L[0].nr, b, &buf, &len);
        if (rc) die("tsampler_sample", rc);
        uint64_t tot = 0;
        for (unsigned i = 0; i < x->nl; i++) {
            gsnap_tblock v;
            gsnap_tblock_get(buf, len, i, &v);
            tot += v.num_edges;
            if (i == 0) *first = v.num_edges;
        }
        return tot;
    }
    uint64_t tot = 0;
    for (unsigned i = 0; i < x->nl; i++) {
        uint64_t key = mix64(b * 31 + i);
        if (who == S_TCSR) tcsr_layer(x->c, &L[i], x->f[i], x->recent, key);
        else naive_layer(x->db, rd, &L[i], x->f[i], x->recent, key);
        tot += L[i].ne;
        if (i == 0) *first = L[i].ne;
        if (i + 1 < x->nl) {
            lay_reserve(&L[i + 1], L[i].ne, 0);
            memcpy(L[i + 1].rn, L[i].nbr, L[i].ne * 8);
            memcpy(L[i + 1].rt, L[i].et, L[i].ne * 8);
            L[i + 1].nr = L[i].ne;
        }
    }
    return tot;
}

typedef struct { double secs; uint64_t events, first; unsigned batches; } result;

static result run(ctx *x, int who, unsigned batches, double cap) {
    result r = {0, 0, 0, 0};
    gsnap_read *rd = NULL;
    if (who == S_NAIVE) {
        int rc = gsnap_read_begin(x->db, &rd);
        if (rc) die("read_begin", rc);
    }
    double t0 = now();
    for (unsigned b = 0; b < batches; b++) {
        uint64_t f0 = 0;
        r.events += run_batch(x, who, b, rd, &f0);
        r.first += f0;
        r.batches++;
        if (cap > 0 && now() - t0 > cap) break;
    }
    r.secs = now() - t0;
    gsnap_read_end(rd);
    return r;
}

int main(int argc, char **argv) {
    const char *input = NULL, *fmt = NULL, *name = NULL, *outpath = NULL;
    unsigned batches = 100;
    double naive_secs = 10, min_secs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--input") && v) input = argv[++i];
        else if (!strcmp(a, "--format") && v) fmt = argv[++i];
        else if (!strcmp(a, "--batches") && v) batches = (unsigned)atoi(argv[++i]);
        else if (!strcmp(a, "--naive-seconds") && v) naive_secs = atof(argv[++i]);
        else if (!strcmp(a, "--min-seconds") && v) min_secs = atof(argv[++i]);
        else if (!strcmp(a, "--name") && v) name = argv[++i];
        else if (!strcmp(a, "--out") && v) outpath = argv[++i];
        else {
            fprintf(stderr, "usage: bench_temporal --input FILE [--format bin|tsv] [--batches N] "
                            "[--naive-seconds S] [--min-seconds S] [--name NAME] [--out FILE]\n");
            return 2;
        }
    }
    if (!input || batches == 0) { fprintf(stderr, "bench_temporal: --input is required\n"); return 2; }
    int bin = fmt ? !strcmp(fmt, "bin") : strstr(input, ".bin") != NULL;
    if (!name) name = input;
    size_t m;
    edge *ev = read_edges(input, bin, 1, &m);
    if (m < 1000) { fprintf(stderr, "bench_temporal: %s: only %zu events\n", input, m); return 1; }

    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-temporal-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    gsnap_db *db;
    int rc;
    if ((rc = bench_open_nosync(dir, &db))) die("open", rc);
    double t0 = now();
    for (size_t i = 0; i < m;) {
        gsnap_batch *b;
        if ((rc = gsnap_batch_begin(db, &b))) die("batch", rc);
        size_t end = i + 100000 < m ? i + 100000 : m;
        for (; i < end; i++)
            if ((rc = gsnap_batch_add(b, ev[i].s, ev[i].d, ev[i].t))) die("add", rc);
        if ((rc = gsnap_batch_commit(b, NULL))) die("commit", rc);
    }
    double t_ingest = now() - t0;
    qsort(ev, m, sizeof *ev, edge_t_cmp);

    tcsr c;
    t0 = now();
    tcsr_build(&c, ev, m);
    double t_tcsr = now() - t0;

    static const struct { unsigned nl; uint32_t f[2]; int recent; } cfg[] = {
        {1, {10, 0}, 0}, {1, {10, 0}, 1}, {2, {10, 10}, 0}, {2, {10, 10}, 1}};
    char lines[4][256];
    double t_open[2] = {0, 0};
    int mismatch = 0;
    for (int k = 0; k < 4; k++) {
        ctx x;
        memset(&x, 0, sizeof x);
        x.ev = ev;
        x.m = m;
        x.nl = cfg[k].nl;
        x.f[0] = cfg[k].f[0];
        x.f[1] = cfg[k].f[1];
        x.recent = cfg[k].recent;
        x.c = &c;
        x.db = db;
        gsnap_tsampler_options so = GSNAP_TSAMPLER_OPTIONS_INIT;
        so.strategy = x.recent ? GSNAP_TS_RECENT : GSNAP_TS_UNIFORM;
        so.layers = x.nl;
        so.fanouts[0] = x.f[0];
        so.fanouts[1] = x.f[1];
        t0 = now();
        if ((rc = gsnap_tsampler_open(db, &so, &x.ts))) die("tsampler_open", rc);
        t_open[x.recent] = now() - t0;
        /* guard run over `batches`, then timed runs of at least --min-seconds
         * (more batches when the set is quick: short runs are all noise) */
        result gg = run(&x, S_GSNAP, batches, 0), gt = run(&x, S_TCSR, batches, 0);
        unsigned nb = batches;
        if (gt.secs < min_secs) {
            double want = (double)batches * min_secs / (gt.secs > 1e-6 ? gt.secs : 1e-6);
            nb = want > 200000 ? 200000 : (unsigned)want + 1;
        }
        result best[2] = {{1e300, 0, 0, 0}, {1e300, 0, 0, 0}};
        for (int rep = 0; rep < 3; rep++)
            for (int who = S_GSNAP; who <= S_TCSR; who++) {
                result r = run(&x, who, nb, 0);
                if (r.secs < best[who].secs) best[who] = r;
            }
        best[S_GSNAP].first = gg.first;
        best[S_TCSR].first = gt.first;
        result nv = run(&x, S_NAIVE, batches, naive_secs);
        double g = best[S_GSNAP].events / best[S_GSNAP].secs, tc = best[S_TCSR].events / best[S_TCSR].secs,
               na = nv.events / nv.secs;
        /* guard: same first-layer sample sizes (the naive run over its batches) */
        result g2 = run(&x, S_GSNAP, nv.batches, 0);
        if (best[S_GSNAP].first != best[S_TCSR].first || g2.first != nv.first) {
            fprintf(stderr, "bench_temporal: MISMATCH in layer-0 sample sizes: gsnap %llu tcsr %llu; "
                            "gsnap %llu naive %llu (over %u batches)\n",
                    (unsigned long long)best[S_GSNAP].first, (unsigned long long)best[S_TCSR].first,
                    (unsigned long long)g2.first, (unsigned long long)nv.first, nv.batches);
            mismatch = 1;
        }
        snprintf(lines[k], sizeof lines[k],
                 "%-8s %-7s %12.0f %12.0f %12.0f %8.2fx %9.1fx   (%llu events/%u batches; naive %u batches)",
                 x.nl == 1 ? "[10]" : "[10,10]", x.recent ? "recent" : "uniform", g, tc, na, g / tc, g / na,
                 (unsigned long long)best[S_GSNAP].events, nb, nv.batches);
        gsnap_tsampler_close(x.ts);
        for (int i = 0; i < 2; i++) {
            layer *l = &x.L[i];
            free(l->rn); free(l->rt); free(l->indptr); free(l->nbr); free(l->idx); free(l->et); free(l->dt);
        }
    }
    /* live ingest: 5 more batches of 20000 events (the last 100000 again,
     * shifted past the newest time), a refresh after each, vs a fresh build */
    double t_refresh[5] = {0}, t_rebuild = 0, t_commit = 0;
    {
        gsnap_tsampler_options so = GSNAP_TSAMPLER_OPTIONS_INIT;
        gsnap_tsampler *ts;
        if ((rc = gsnap_tsampler_open(db, &so, &ts))) die("tsampler_open", rc);
        int64_t shift = ev[m - 1].t - ev[0].t + 1;
        size_t from = m > 100000 ? m - 100000 : 0;
        for (int k = 0; k < 5; k++) {
            gsnap_batch *b;
            t0 = now();
            if ((rc = gsnap_batch_begin(db, &b))) die("batch", rc);
            size_t lo = from + (m - from) * (size_t)k / 5, hi = from + (m - from) * (size_t)(k + 1) / 5;
            for (size_t i = lo; i < hi; i++)
                if ((rc = gsnap_batch_add(b, ev[i].s, ev[i].d, ev[i].t + shift))) die("add", rc);
            if ((rc = gsnap_batch_commit(b, NULL))) die("commit", rc);
            t_commit += now() - t0;
            t0 = now();
            if ((rc = gsnap_tsampler_refresh(ts, GSNAP_VERSION_LATEST, NULL))) die("refresh", rc);
            t_refresh[k] = now() - t0;
        }
        gsnap_tsampler_close(ts);
        t0 = now();
        if ((rc = gsnap_tsampler_open(db, &so, &ts))) die("tsampler_open", rc);
        t_rebuild = now() - t0;
        gsnap_tsampler_close(ts);
    }
    char hdr[1400];
    snprintf(hdr, sizeof hdr,
             "bench_temporal: %s: %zu events, ingest %.2f s (%.0f events/s, batches of 100000)\n"
             "T-CSR build: graphsnap tsampler_open %.3f s (from the store), bench T-CSR %.3f s (from memory)\n"
             "live ingest: 5 batches of 20000 more events, commits %.3f s in all; tsampler_refresh after "
             "each %.3f %.3f %.3f %.3f %.3f s vs a fresh tsampler_open %.3f s\n"
             "single thread, 600 roots per batch (300 events x src,dst at the event time), direction in, "
             "strict t_edge < t_root\n"
             "fanouts  strategy  gsnap ev/s   tcsr ev/s  naive ev/s  vs tcsr  vs naive\n",
             name, m, t_ingest, m / t_ingest, t_open[0], t_tcsr, t_commit, t_refresh[0], t_refresh[1],
             t_refresh[2], t_refresh[3], t_refresh[4], t_rebuild);
    FILE *out = outpath ? fopen(outpath, "a") : NULL;
    if (outpath && !out) perror(outpath);
    fputs(hdr, stdout);
    if (out) fputs(hdr, out);
    for (int k = 0; k < 4; k++) {
        printf("%s\n", lines[k]);
        if (out) fprintf(out, "%s\n", lines[k]);
    }
    if (out) { fputs("\n", out); fclose(out); fprintf(stderr, "results appended to %s\n", outpath); }
    gsnap_db_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
    free(c.off); free(c.t); free(c.nbr);
    free(ev);
    free(nbuf);
    return mismatch ? 2 : 0;
}
