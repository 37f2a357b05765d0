/*
 * Point-in-time answers on the real PGP web-of-trust stream (592,752
 * timestamped events, scripts/fetch_pgp.sh): ingested in batches of 50,000
 * through the text parser, then 3,000 random (node, direction, T, V)
 * questions are answered by the store and by an independent in-memory index
 * of the same events, and must agree exactly. Skips (77) when the data file
 * has not been fetched.
 */
#include "test.h"
#include <stdio.h>

typedef struct { uint64_t node, nbr; int64_t t; uint64_t ver, seq; } pev;

static int pev_cmp(const void *a, const void *b) {
    const pev *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->nbr != y->nbr) return x->nbr < y->nbr ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->ver != y->ver) return x->ver < y->ver ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* First index in the sorted array with node >= v. */
static size_t lower(const pev *a, size_t n, uint64_t v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (a[m].node < v) lo = m + 1;
        else hi = m;
    }
    return lo;
}

int main(void) {
    const char *path = getenv("GSNAP_PGP_TSV");
    if (!path) path = "data/pgp.tsv";
    FILE *f = fopen(path, "r");
    if (!f) SKIP("no %s (run scripts/fetch_pgp.sh)", path);
    size_t batch = 50000, limit = test_small() ? 100000 : SIZE_MAX;

    /* The independent model: every event, by (dir, node). */
    pev *in = NULL, *out = NULL;
    size_t n = 0, cap = 0;
    char line[256];
    uint64_t ln = 0;
    while (n < limit && fgets(line, sizeof line, f)) {
        ln++;
        unsigned long long s, d;
        long long t;
        if (line[0] == '#' || line[0] == '%') continue;
        if (sscanf(line, "%llu %llu %lld", &s, &d, &t) != 3) { fprintf(stderr, "%s:%llu: unreadable\n", path, (unsigned long long)ln); return 1; }
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            in = realloc(in, cap * sizeof *in);
            out = realloc(out, cap * sizeof *out);
        }
        uint64_t ver = n / batch + 1;
        in[n] = (pev){d, s, t, ver, n};
        out[n] = (pev){s, d, t, ver, n};
        n++;
    }
    fclose(f);
    qsort(in, n, sizeof *in, pev_cmp);
    qsort(out, n, sizeof *out, pev_cmp);
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (in[i].t < tmin) tmin = in[i].t;
        if (in[i].t > tmax) tmax = in[i].t;
    }

    /* The store, fed through the text parser in the same batches. */
    char *dir = test_tmpdir("pgp");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, &o, &db));
    f = fopen(path, "r");
    if (limit != SIZE_MAX) {
        /* valgrind runs: only the first `limit` lines */
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s/head.tsv", dir);
        FILE *h = fopen(tmp, "w");
        size_t k = 0;
        while (k < n && fgets(line, sizeof line, f)) { fputs(line, h); k++; }
        fclose(h);
        fclose(f);
        f = fopen(tmp, "r");
    }
    gsnap_ingest_options io = GSNAP_INGEST_OPTIONS_INIT;
    io.batch_edges = batch;
    gsnap_ingest_report rep;
    OK(gsnap_ingest_text(db, f, path, &io, &rep));
    fclose(f);
    CHECK(rep.events == n);
    uint64_t latest = (n + batch - 1) / batch;
    CHECK(rep.last_version == latest);

    uint64_t rng = 2009;
    int queries = test_small() ? 300 : 3000, bad = 0;
    gsnap_nbr *got = malloc(n * sizeof *got);
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    for (int q = 0; q < queries; q++) {
        int d = (int)(test_rand(&rng) % 2);
        const pev *a = d == 0 ? in : out;
        uint64_t node = a[test_rand(&rng) % n].node; /* a node with edges */
        int64_t T = q % 5 == 0 ? GSNAP_TIME_MAX : tmin + (int64_t)(test_rand(&rng) % (uint64_t)(tmax - tmin + 1));
        uint64_t V = q % 4 == 0 ? GSNAP_VERSION_LATEST : 1 + test_rand(&rng) % latest;
        uint64_t mv = V == GSNAP_VERSION_LATEST ? latest : V;
        size_t gn = 0;
        OK(gsnap_neighbors(db, rd, node, (gsnap_dir)d, T, V, got, n, &gn));
        size_t k = 0, i = lower(a, n, node);
        int same = 1;
        for (; i < n && a[i].node == node; i++) {
            if (a[i].t > T || a[i].ver > mv) continue;
            if (k >= gn || got[k].node != a[i].nbr || got[k].t != a[i].t || got[k].version != a[i].ver) same = 0;
            k++;
        }
        if (!same || k != gn) {
            if (bad < 3) fprintf(stderr, "node %llu dir %d T %lld V %llu: store %zu, model %zu\n",
                                 (unsigned long long)node, d, (long long)T, (unsigned long long)V, gn, k);
            bad++;
        }
    }
    gsnap_read_end(rd);
    CHECK_MSG(bad == 0, "%d of %d answers differ", bad, queries);
    uint64_t problems = 1;
    OK(gsnap_db_check(db, NULL, NULL, &problems));
    CHECK(problems == 0);
    printf("%zu events, %llu versions, %d point-in-time questions agreed\n", n, (unsigned long long)latest, queries - bad);
    free(got);
    free(in);
    free(out);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
