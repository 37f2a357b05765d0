/*
 * bench/bench_store_fbl.c -- the store on a fresh, growing database (issue 12):
 * durable ingest with 1-hop as-of queries interleaved, bytes on disk, and FBL
 * sampling straight from the just-ingested store, against a naive LMDB
 * DUPSORT table and an in-memory CSR measured in the same process.
 *
 *   bench_store_fbl --input FILE [--format bin|tsv] [--batch 100000]
 *                   [--queries 50] [--fanouts 10,10]... [--seeds 1024]
 *                   [--batches 40] [--seconds 10] [--compact] [--out FILE]
 *                   [--lat FILE] [--merge-fanout F] [--malloc keep|default]
 *                   [--read-cache BYTES]
 *
 * --malloc keep (the default) calls gsnap_keep_freed_memory() first, as the
 * CLI does and as docs/store.md advises a process that ingests and queries;
 * the CSR and the LMDB table live in the same process and get it too.
 * --malloc default leaves glibc's policy (freed large blocks given back).
 * graphsnap: both directions, GSNAP_SYNC_FULL, one commit per --batch edges;
 * after every commit --queries in-neighbour queries (v uniform over the
 * stream's nodes with in-edges, T uniform over the stream's times, latest
 * version), each timed alone through one read view per batch; the ingest
 * time excludes them. The CSR (in-edges sorted by (node, t), built from the
 * whole stream) answers the same query list afterwards, and also right after
 * graphsnap's queries of each commit (a second table: the same disturbance
 * of the caches by the ingest for both). Then FBL sampling:
 * per layer, for every frontier node its distinct in-neighbours at the
 * latest version, `fanout` of them drawn uniformly without replacement,
 * frontier deduplicated; graphsnap through gsnap_sampler (GSNAP_MODE_FBL, no
 * snapshot) on the store as ingested (no compaction), LMDB on a DUPSORT table
 * of in-edges (key node, duplicates (nbr BE, t BE, version BE): bench_store's
 * naive engine with the duplicates in neighbour order, so that distinct
 * neighbours come out adjacent, the cheapest order for this sampling)
 * bulk-loaded untimed, the CSR on distinct sorted lists.
 * Same seeds (those of bench_sampler) for all three. Results go to stdout and,
 * with --out, to a file. Where the queries' tail is: a table splits them into
 * the first query after each commit (the view's first) and the others; --lat
 * writes one line per query (batch, position after the commit, node, T,
 * answer size, graphsnap and CSR microseconds, live runs).
 */
#include "graphsnap.h"
#include <ftw.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "bench/bench_util.h"
#include "store/store_int.h" /* gsnap_fence__held_bytes: the held copies after the ingest */


static uint64_t below(uint64_t *x, uint64_t n) { return (uint64_t)(((unsigned __int128)mix(x) * n) >> 64); }
static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_store_fbl: %s: %s\n", what, why);
    exit(1);
}
static void gchk(int rc, const char *what) { if (rc) die(what, gsnap_strerror(rc)); }
static void mchk(int rc, const char *what) { if (rc) die(what, mdb_strerror(rc)); }
static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("malloc", "out of memory");
    return p;
}
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static void put_be64(unsigned char *p, uint64_t v) { for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v; }
static uint64_t get_be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}


static uint64_t g_du;
static int du_cb(const char *p, const struct stat *st, int fl, struct FTW *f) {
    (void)p, (void)f;
    if (fl == FTW_F) g_du += (uint64_t)st->st_blocks * 512;
    return 0;
}
static uint64_t du(const char *dir) { g_du = 0; nftw(dir, du_cb, 16, FTW_PHYS); return g_du; }
static int rm_cb(const char *p, const struct stat *st, int fl, struct FTW *f) {
    (void)st, (void)fl, (void)f;
    return remove(p);
}

#include "bench_store_fbl_src.h"

/* One FBL mini-batch over `s`: returns sampled edges. mark/stamp dedupe frontiers. */
static uint64_t fbl_batch(src_t *s, uint32_t *mark, uint32_t *stamp, const uint64_t *seeds, size_t ns,
                          const int32_t *fan, int L, uint64_t batch, uint64_t **fr, size_t *frcap) {
    uint64_t total = 0;
    size_t nd = ns;
    const uint64_t *dst = seeds;
    uint32_t pick[256];
    for (int h = 0; h < L; h++) {
        int32_t f = fan[L - 1 - h];
        (*stamp)++;
        uint64_t *next = fr[h & 1];
        size_t nn = 0, need = nd * ((size_t)f + 1);
        if (need > frcap[h & 1]) next = fr[h & 1] = realloc(fr[h & 1], (frcap[h & 1] = need) * 8);
        for (size_t i = 0; i < nd; i++)
            if (mark[dst[i]] != *stamp) { mark[dst[i]] = *stamp; next[nn++] = dst[i]; }
        size_t nsrc = nn;
        for (size_t i = 0; i < nsrc; i++) {
            const uint64_t *ids;
            size_t d = nbrs(s, next[i], &ids), k = d < (size_t)f ? d : (size_t)f;
            uint64_t r = batch * 0x100000001B3ull ^ next[i] ^ ((uint64_t)h << 56);
            size_t m = 0;
            if (k == d) for (; m < k; m++) pick[m] = (uint32_t)m;
            else for (uint64_t j = d - k; j < d; j++) { /* Floyd */
                uint32_t t = (uint32_t)below(&r, j + 1);
                int dup = 0;
                for (size_t q = 0; q < m; q++) dup |= pick[q] == t;
                pick[m++] = dup ? (uint32_t)j : t;
            }
            for (size_t j = 0; j < k; j++) {
                uint64_t u = ids[pick[j]];
                if (mark[u] != *stamp) { mark[u] = *stamp; next[nn++] = u; }
            }
            total += k;
        }
        dst = next;
        nd = nn;
    }
    return total;
}

typedef struct {
    const char *input, *fmt, *out, *lat;
    size_t batch, queries, nseeds;
    unsigned fanout; /* --merge-fanout: gsnap_db_options.merge_fanout of the ingest (0: default) */
    int64_t read_cache; /* --read-cache: gsnap_db_options.read_cache_bytes (0: default) */
    int keep_memory; /* --malloc keep (default) | default: gsnap_keep_freed_memory() at start */
    unsigned batches;
    double seconds;
    int compact, nfans;
    int32_t fans[4][8];
    int L[4];
} opts_t;

/* ---- graphsnap ingest with queries interleaved ---- */

typedef struct { uint64_t v; int64_t T; } query;

/* over the ingest's commits: the most bytes of held copies after one, and
 * the views whose queries went through a run mask (store/fence.c) */
static uint64_t g_held_max, g_masked, g_views;

static void ingest(gsnap_db *db, const edge *e, size_t m, const opts_t *o, const query *qs, double *lat,
                   size_t *cnts, uint64_t *runs, size_t *nlat, double *secs, const csr_t *q, double *ilat,
                   gsnap_nbr *cb) {
    gsnap_nbr *buf = NULL;
    size_t cap = 0, nq = 0;
    double ting = 0;
    for (size_t i = 0, bi = 0; i < m; bi++) {
        double t0 = now();
        gsnap_batch *b;
        gchk(gsnap_batch_begin(db, &b), "batch_begin");
        size_t end = i + o->batch < m ? i + o->batch : m;
        for (; i < end; i++) gchk(gsnap_batch_add(b, e[i].s, e[i].d, e[i].t), "batch_add");
        gchk(gsnap_batch_commit(b, NULL), "commit");
        ting += now() - t0;
        if (runs) { /* --lat only: the view's run count, untimed */
            gsnap_db_stat st;
            gchk(gsnap_db_stats(db, &st), "stats");
            runs[bi] = st.runs;
        }
        gsnap_read *rd;
        gchk(gsnap_read_begin(db, &rd), "read_begin");
        for (size_t k = 0; k < o->queries; k++, nq++) {
            size_t cnt;
            double q0 = now();
            int rc;
            while ((rc = gsnap_neighbors(db, rd, qs[nq].v, GSNAP_DIR_IN, qs[nq].T, GSNAP_VERSION_LATEST, buf,
                                         cap, &cnt)) == 0 && cnt > cap)
                buf = realloc(buf, (cap = cnt) * sizeof *buf);
            gchk(rc, "neighbors");
            lat[nq] = (now() - q0) * 1e6;
            cnts[nq] = cnt;
        }
        if (o->queries) g_views++, g_masked += rd->mask != NULL;
        if (gsnap_fence__held_bytes(db) > g_held_max) g_held_max = gsnap_fence__held_bytes(db);
        gsnap_read_end(rd);
        /* the CSR asked the same queries at the same point (after the commit
         * and graphsnap's queries): its caches disturbed by the ingest as
         * graphsnap's are, which the CSR's run after the ingest is not */
        for (size_t k = nq - o->queries; k < nq; k++) {
            double q0 = now();
            volatile size_t c = csr_query(q, qs[k].v, qs[k].T, cb);
            (void)c;
            ilat[k] = (now() - q0) * 1e6;
        }
    }
    free(buf);
    *nlat = nq;
    *secs = ting;
}

static double pct(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_dbl);
    return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

static double pct_copy(const double *v, size_t n, double p) {
    double *c = xmalloc((n + 1) * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    double r = pct(c, n, p);
    free(c);
    return r;
}

/* Where the tail is: each query's position after its batch's commit (0 =
 * the first query after the commit). Splits the queries into the first one
 * after each commit and the rest, and gives each group's p50 / p99 and its
 * share of the queries slower than 10x the CSR's p50. */
static void by_position(const double *lat, size_t n, size_t per, double cp50) {
    if (!per || !n) return;
    double *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
    size_t na = 0, nb = 0, slow_a = 0, slow_b = 0;
    for (size_t i = 0; i < n; i++) {
        int first = i % per == 0;
        if (first) a[na++] = lat[i]; else b[nb++] = lat[i];
        if (lat[i] > 10 * cp50) { if (first) slow_a++; else slow_b++; }
    }
    say("\n| queries | n | p50 us | p99 us | max us | slower than 10x csr p50 |\n|---|---:|---:|---:|---:|---:|\n");
    double a50 = pct(a, na, 0.5), a99 = pct(a, na, 0.99), b50 = pct(b, nb, 0.5), b99 = pct(b, nb, 0.99);
    say("| first after a commit | %zu | %.2f | %.2f | %.2f | %zu |\n", na, a50, a99, na ? a[na - 1] : 0, slow_a);
    say("| the others | %zu | %.2f | %.2f | %.2f | %zu |\n", nb, b50, b99, nb ? b[nb - 1] : 0, slow_b);
    free(a), free(b);
}

/* --lat FILE: one line per query: batch, position after the commit, node,
 * T, answer size, graphsnap us, CSR us. */
static void lat_file(const char *path, const query *qs, const double *lat, const double *clat,
                     const size_t *cnts, const uint64_t *runs, size_t n, size_t per, const double *ilat) {
    FILE *f = fopen(path, "w");
    if (!f) die(path, "cannot create");
    fprintf(f, "batch\tpos\tnode\tT\tcount\tus\tcsr_us\truns\tcsr_interleaved_us\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%zu\t%zu\t%llu\t%lld\t%zu\t%.3f\t%.3f\t%llu\t%.3f\n", i / per, i % per,
                (unsigned long long)qs[i].v, (long long)qs[i].T, cnts[i], lat[i], clat[i],
                (unsigned long long)runs[i / per], ilat[i]);
    fclose(f);
}

/* ---- FBL runs ---- */

static void seeds_of(uint64_t batch, uint64_t n, uint64_t *out, size_t k) { /* as bench_sampler */
    uint64_t x = batch * 7919 + 17;
    for (size_t i = 0; i < k; i++) out[i] = below(&x, n);
}

static double run_src(src_t *s, uint64_t n, const opts_t *o, int fi, uint64_t *edges_out) {
    uint32_t *mark = calloc(n, 4), stamp = 0;
    uint64_t *seeds = xmalloc(o->nseeds * 8), *fr[2] = {NULL, NULL}, edges = 0;
    size_t frcap[2] = {0, 0};
    double t0 = now();
    for (unsigned b = 0; b < o->batches && now() - t0 < o->seconds; b++) {
        seeds_of(b, n, seeds, o->nseeds);
        edges += fbl_batch(s, mark, &stamp, seeds, o->nseeds, o->fans[fi], o->L[fi], b, fr, frcap);
    }
    double dt = now() - t0;
    free(mark), free(seeds), free(fr[0]), free(fr[1]);
    *edges_out = edges;
    return (double)edges / dt;
}

/* run_gs's figures of each fanouts row, printed under the table */
static char gs_notes[4096];

static double run_gs(gsnap_db *db, uint64_t n, const opts_t *o, int fi, uint64_t *edges_out) {
    gsnap_sampler_options so = GSNAP_SAMPLER_OPTIONS_INIT;
    so.mode = GSNAP_MODE_FBL;
    so.layers = (unsigned)o->L[fi];
    memcpy(so.fanouts, o->fans[fi], sizeof(int32_t) * (size_t)o->L[fi]);
    so.seed = 1;
    gsnap_sampler *s;
    gchk(gsnap_sampler_open(db, NULL, &so, &s), "sampler_open");
    uint64_t *seeds = xmalloc(o->nseeds * 8);
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    double t0 = now();
    for (unsigned b = 0; b < o->batches && now() - t0 < o->seconds; b++) {
        seeds_of(b, n, seeds, o->nseeds);
        const void *buf;
        size_t len;
        gchk(gsnap_sampler_next(s, seeds, o->nseeds, &buf, &len), "sampler_next");
    }
    double dt = now() - t0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    gsnap_sampler_close(s);
    free(seeds);
    /* the sampling thread's CPU time beside the wall time, and the store
     * reads: what a change to the kept lists or the store's read path moves */
    size_t used = strlen(gs_notes);
    snprintf(gs_notes + used, sizeof gs_notes - used,
             "graphsnap, fanouts row %d: %.3f s wall, %.3f s CPU, %llu edges; store reads: %llu from kept "
             "lists, %llu not, %llu lists kept\n",
             fi + 1, dt, (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9,
             (unsigned long long)st.edges, (unsigned long long)st.list_hits, (unsigned long long)st.list_misses,
             (unsigned long long)st.lists_kept);
    *edges_out = st.edges;
    return (double)st.edges / dt;
}

static void parse(int argc, char **argv, opts_t *o) {
    *o = (opts_t){.batch = 100000, .queries = 50, .nseeds = 1024, .batches = 40, .seconds = 10, .keep_memory = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--compact")) { o->compact = 1; continue; }
        if (!v) die(a, "needs a value (see the comment at the top of bench/bench_store_fbl.c)");
        i++;
        if (!strcmp(a, "--input")) o->input = v;
        else if (!strcmp(a, "--format")) o->fmt = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--lat")) o->lat = v;
        else if (!strcmp(a, "--merge-fanout")) o->fanout = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--read-cache")) o->read_cache = strtoll(v, NULL, 10);
        else if (!strcmp(a, "--malloc")) {
            if (strcmp(v, "keep") && strcmp(v, "default")) die("--malloc", "is keep or default");
            o->keep_memory = !strcmp(v, "keep");
        } else if (!strcmp(a, "--batch")) o->batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--queries")) o->queries = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--seeds")) o->nseeds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batches")) o->batches = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seconds")) o->seconds = atof(v);
        else if (!strcmp(a, "--fanouts") && o->nfans < 4) {
            int L = 0;
            for (const char *s = v; *s && L < 8;) {
                o->fans[o->nfans][L++] = (int32_t)strtol(s, (char **)&s, 10);
                if (*s == ',') s++;
            }
            o->L[o->nfans++] = L;
        } else die(a, "unknown option");
    }
    if (!o->input) die("--input", "is required");
    if (!o->batch) die("--batch", "must be > 0");
    if (!o->nfans) { o->fans[0][0] = o->fans[0][1] = 10; o->L[0] = 2;
                     o->fans[1][0] = o->fans[1][1] = o->fans[1][2] = 10; o->L[1] = 3; o->nfans = 2; }
}

static void fbl_table(gsnap_db *db, src_t *csr, src_t *lm, uint64_t n, const opts_t *o, const char *tag) {
    say("\n| fanouts | store | graphsnap edges/s | lmdb edges/s | csr edges/s | vs lmdb | vs csr |\n"
        "|---|---|---:|---:|---:|---:|---:|\n");
    for (int fi = 0; fi < o->nfans; fi++) {
        uint64_t eg, el, ec;
        double c1 = run_src(csr, n, o, fi, &ec);
        double g = run_gs(db, n, o, fi, &eg);
        double l = run_src(lm, n, o, fi, &el);
        double c2 = run_src(csr, n, o, fi, &ec);
        double c = c1 > c2 ? c1 : c2;
        char f[64] = "";
        for (int k = 0; k < o->L[fi]; k++) snprintf(f + strlen(f), sizeof f - strlen(f), "%s%d", k ? "," : "", o->fans[fi][k]);
        say("| [%s] | %s | %.0f | %.0f | %.0f | %.2fx | %.2fx |\n", f, tag, g, l, c, g / l, g / c);
    }
    say("\n%s", gs_notes);
    gs_notes[0] = 0;
}

/* Ingest into a new database at gdir with queries interleaved, then the CSR
 * on the same queries; prints the table and returns the bytes per edge. */
static double ingest_phase(const char *gdir, const edge *e, size_t m, uint64_t n, int64_t tmin, int64_t tmax,
                           const opts_t *o, const csr_t *q) {
    /* query list: v uniform over nodes with in-edges, T uniform over the times */
    uint64_t *in = xmalloc(n * 8), nin = 0, rs = 12;
    for (uint64_t v = 0; v < n; v++) if (q->off[v + 1] > q->off[v]) in[nin++] = v;
    size_t nq = ((m + o->batch - 1) / o->batch) * o->queries;
    query *qs = xmalloc((nq + 1) * sizeof *qs);
    for (size_t i = 0; i < nq; i++)
        qs[i] = (query){in[below(&rs, nin)], tmin + (int64_t)below(&rs, (uint64_t)(tmax - tmin) + 1)};
    double *lat = xmalloc((nq + 1) * 8), *clat = xmalloc((nq + 1) * 8), *ilat = xmalloc((nq + 1) * 8);
    gsnap_nbr *cb = xmalloc((m + 1) * sizeof *cb);
    size_t *cnts = xmalloc((nq + 1) * sizeof *cnts);
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.merge_fanout = o->fanout;
    dopt.read_cache_bytes = o->read_cache;
    gsnap_db *db;
    gchk(gsnap_db_open(gdir, &dopt, &db), "open");
    size_t nlat;
    double secs;
    uint64_t *runs = o->lat ? xmalloc((m / o->batch + 2) * 8) : NULL;
    ingest(db, e, m, o, qs, lat, cnts, runs, &nlat, &secs, q, ilat, cb);
    gsnap_db_stat st;
    gchk(gsnap_db_stats(db, &st), "stats");
    /* what the fence indexes' held copies take in this querying process (store/fence.c) */
    say("\nheld copies after the ingest: %.1f MB (at most %.1f MB after a commit; %llu of %llu views "
        "with a run mask)\n", (double)gsnap_fence__held_bytes(db) / 1e6, (double)g_held_max / 1e6,
        (unsigned long long)g_masked, (unsigned long long)g_views);
    for (size_t i = 0; i < nlat; i++) {
        double q0 = now();
        volatile size_t c = csr_query(q, qs[i].v, qs[i].T, cb);
        (void)c;
        clat[i] = (now() - q0) * 1e6;
    }
    if (o->lat) lat_file(o->lat, qs, lat, clat, cnts, runs, nlat, o->queries, ilat);
    double ip50 = pct_copy(ilat, nlat, 0.5), ip99 = pct_copy(ilat, nlat, 0.99);
    free(runs);
    double cp50m = pct_copy(clat, nlat, 0.5);
    by_position(lat, nlat, o->queries, cp50m);
    double gp50 = pct(lat, nlat, 0.5), gp99 = pct(lat, nlat, 0.99);
    double cp50 = pct(clat, nlat, 0.5), cp99 = pct(clat, nlat, 0.99);
    gsnap_db_close(db);
    double bpe = (double)du(gdir) / (double)m;
    say("\n| ingest edges/s | ingest s | runs after ingest | disk B/edge | queries | p50 us | p99 us | csr p50 us |"
        " csr p99 us | p50 vs csr | p99 vs csr p50 |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        "| %.0f | %.2f | %llu | %.1f | %zu | %.2f | %.2f | %.2f | %.2f | %.2fx | %.1fx |\n",
        (double)m / secs, secs, (unsigned long long)st.runs, bpe, nlat, gp50, gp99, cp50, cp99, gp50 / cp50,
        gp99 / cp50);
    say("\n| csr asked after each commit too: p50 us | p99 us | graphsnap p50 vs it | graphsnap p99 vs its p50 |\n"
        "|---:|---:|---:|---:|\n| %.2f | %.2f | %.2fx | %.1fx |\n", ip50, ip99, ip50 > 0 ? gp50 / ip50 : 0.0,
        ip50 > 0 ? gp99 / ip50 : 0.0);
    free(in), free(qs), free(lat), free(clat), free(ilat), free(cb), free(cnts);
    return bpe;
}

int main(int argc, char **argv) {
    opts_t o;
    parse(argc, argv, &o);
    if (o.out && !(bench_out = fopen(o.out, "w"))) die(o.out, "cannot create");
    /* before anything is allocated: the whole process, the CSR and the LMDB
     * table included, keeps what it frees (as the CLI does) */
    if (o.keep_memory) gchk(gsnap_keep_freed_memory(), "gsnap_keep_freed_memory");
    int bin = o.fmt ? !strcmp(o.fmt, "bin") : strstr(o.input, ".bin") != NULL;
    size_t m;
    edge *e = read_edges(o.input, bin, 0, &m);
    uint64_t n = 0;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
        if (e[i].s + 1 > n) n = e[i].s + 1;
        if (e[i].d + 1 > n) n = e[i].d + 1;
        if (e[i].t < tmin) tmin = e[i].t;
        if (e[i].t > tmax) tmax = e[i].t;
    }
    say("# bench_store_fbl: %s: %zu edges, %llu node ids; batches of %zu edges (GSNAP_SYNC_FULL, both "
        "directions), %zu queries after each; FBL %zu seeds, up to %u batches or %.0f s per engine; "
        "freed memory %s\n",
        o.input, m, (unsigned long long)n, o.batch, o.queries, o.nseeds, o.batches, o.seconds,
        o.keep_memory ? "kept (gsnap_keep_freed_memory)" : "given back (glibc's default)");
    csr_ids g;
    csr_t q;
    csr_build(&g, &q, e, m, n);
    char dir[256], ldir[300];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench-store-fbl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) die("mkdtemp", "failed");
    snprintf(ldir, sizeof ldir, "%s/lmdb", dir);
    char gdir[300];
    snprintf(gdir, sizeof gdir, "%s/gs", dir);
    double bpe = ingest_phase(gdir, e, m, n, tmin, tmax, &o, &q);
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.read_cache_bytes = o.read_cache;
    gsnap_db *db;
    gchk(gsnap_db_open(gdir, &dopt, &db), "open");
    MDB_dbi dbi;
    MDB_env *env = lm_load(ldir, e, m, o.batch, &dbi);
    free(e);
    MDB_txn *rt;
    mchk(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt), "txn");
    src_t cs = {.kind = 0, .g = &g}, ls = {.kind = 1};
    mchk(mdb_cursor_open(rt, dbi, &ls.cur), "cursor");
    fbl_table(db, &cs, &ls, n, &o, "as ingested");
    if (o.compact) {
        double t0 = now();
        gchk(gsnap_db_compact(db), "compact");
        double tc = now() - t0;
        gsnap_db_close(db);
        say("\ncompact: %.2f s, disk B/edge %.1f (before %.1f)\n", tc, (double)du(gdir) / (double)m, bpe);
        gchk(gsnap_db_open(gdir, &dopt, &db), "reopen");
        fbl_table(db, &cs, &ls, n, &o, "compacted");
    }
    mdb_cursor_close(ls.cur);
    mdb_txn_abort(rt);
    mdb_env_close(env);
    gsnap_db_close(db);
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    if (bench_out) fclose(bench_out);
    return 0;
}
