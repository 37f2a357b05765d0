/* test_ops_log: the version log and diff agree with the ingested batches.
 *   - API batches (with and without gsnap_batch_set_source) and a text
 *     ingest in batches: each version's record has the batch's adds,
 *     deletes, time range, source and line range;
 *   - diff(v1, v2) (whole graph and --node) equals the multiset difference
 *     of the live instances computed by an independent brute-force replay;
 *   - a database rewritten to store format 1 opens, shows its versions as
 *     unknown, is upgraded by its next commit and passes check; an unknown
 *     future format is refused with GSNAP_EFORMAT naming both versions. */
#include "test.h"
#include <lmdb.h>
#include "store/store_int.h" /* GSNAP_STORE_FORMAT */

#define NODES 30
#define MAXEV 20000

typedef struct { uint64_t s, d; int64_t t; uint64_t v; int del; size_t pos; } ev;
static ev evs[MAXEV];
static size_t nev;

typedef struct { uint64_t s, d; int64_t t; uint64_t v; } inst;

static int ev_cmp(const void *pa, const void *pb) {
    const ev *a = pa, *b = pb;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->v != b->v) return a->v < b->v ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static int inst_cmp(const void *pa, const void *pb) {
    const inst *a = pa, *b = pb;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->v < b->v ? -1 : a->v > b->v;
}

/* Live instances at version v (time now): per pair, replay in (t, v, pos)
 * order, a delete removes the oldest live instance. */
static size_t model_live(uint64_t v, inst *out) {
    static ev tmp[MAXEV];
    size_t n = 0, m = 0;
    for (size_t i = 0; i < nev; i++)
        if (evs[i].v <= v) tmp[n++] = evs[i];
    qsort(tmp, n, sizeof *tmp, ev_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i, first = m;
        while (j < n && tmp[j].s == tmp[i].s && tmp[j].d == tmp[i].d) j++;
        for (size_t k = i; k < j; k++) {
            if (!tmp[k].del) {
                out[m++] = (inst){tmp[k].s, tmp[k].d, tmp[k].t, tmp[k].v};
            } else if (m > first) { /* drop the oldest live: shift left */
                memmove(&out[first], &out[first + 1], (m - first - 1) * sizeof *out);
                m--;
            }
        }
        i = j;
    }
    qsort(out, m, sizeof *out, inst_cmp);
    return m;
}

static void check_diff(gsnap_db *db, uint64_t v1, uint64_t v2, uint64_t node) {
    static inst a[MAXEV], b[MAXEV];
    size_t na = model_live(v1, a), nb = model_live(v2, b);
    gsnap_diff_edge *e = NULL;
    size_t n = 0, k = 0, i = 0, j = 0, bad = 0;
    OK(gsnap_db_diff(db, NULL, v1, v2, node, &e, &n));
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : inst_cmp(&a[i], &b[j]);
        if (c == 0) { i++; j++; continue; }
        const inst *x = c < 0 ? &a[i++] : &b[j++];
        if (node != UINT64_MAX && x->s != node && x->d != node) continue;
        /* expected in the order (s, d, t, v), removed first on ties */
        if (k >= n || e[k].src != x->s || e[k].dst != x->d || e[k].t != x->t || e[k].version != x->v ||
            e[k].added != (c > 0))
            bad++;
        k++;
    }
    CHECK_MSG(bad == 0 && k == n, "diff %llu..%llu node %lld: %zu mismatches, %zu expected, %zu given",
              (unsigned long long)v1, (unsigned long long)v2, node == UINT64_MAX ? -1LL : (long long)node, bad, k, n);
    gsnap_free(e);
}

/* Rewrite dir's store to format 1: 72-byte meta, no gs.vlog. */
static void make_format1(const char *dir, uint32_t format) {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi meta, vlog;
    OK(mdb_env_create(&env));
    mdb_env_set_maxdbs(env, 256);
    mdb_env_set_mapsize(env, (size_t)1 << 30);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, "gs.meta", 0, &meta));
    MDB_val k = {5, (void *)"store"}, v;
    OK(mdb_get(txn, meta, &k, &v));
    unsigned char buf[128];
    memcpy(buf, v.mv_data, v.mv_size);
    memcpy(buf + 8, &format, 4);
    MDB_val nv = {format == 1 ? 72 : v.mv_size, buf};
    OK(mdb_put(txn, meta, &k, &nv, 0));
    if (format == 1 && mdb_dbi_open(txn, "gs.vlog", 0, &vlog) == 0) OK(mdb_drop(txn, vlog, 1));
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
}

int main(void) {
    char *dir = test_tmpdir("opslog"), db1[600], tsv[600];
    snprintf(db1, sizeof db1, "%s/db", dir);
    snprintf(tsv, sizeof tsv, "%s/in.tsv", dir);
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(db1, &o, &db));
    uint64_t seed = 9;
    int nb = test_small() ? 12 : 40;
    uint64_t adds[64], dels[64];
    int64_t mint[64], maxt[64];
    for (int v = 1; v <= nb; v++) {
        gsnap_batch *b = NULL;
        OK(gsnap_batch_begin(db, &b));
        adds[v] = dels[v] = 0;
        mint[v] = INT64_MAX;
        maxt[v] = INT64_MIN;
        if (v % 2) OK(gsnap_batch_set_source(b, "feed.tsv", (uint64_t)v * 100, (uint64_t)v * 100 + 99));
        for (int i = 0; i < 60; i++) {
            uint64_t r = test_rand(&seed);
            ev *e = &evs[nev];
            e->s = r % NODES;
            e->d = (r >> 8) % NODES;
            e->t = (int64_t)(v * 10 + (int)((r >> 20) % 30));
            e->v = (uint64_t)v;
            e->del = (r >> 40) % 3 == 0;
            e->pos = nev++;
            if (e->del) { OK(gsnap_batch_delete(b, e->s, e->d, e->t)); dels[v]++; }
            else { OK(gsnap_batch_add(b, e->s, e->d, e->t)); adds[v]++; }
            if (e->t < mint[v]) mint[v] = e->t;
            if (e->t > maxt[v]) maxt[v] = e->t;
        }
        uint64_t got = 0;
        OK(gsnap_batch_commit(b, &got));
        CHECK(got == (uint64_t)v);
    }
    /* a text ingest in batches of 7 events, with comments in between */
    FILE *f = fopen(tsv, "w");
    fprintf(f, "# header\n");
    for (int i = 0; i < 20; i++) fprintf(f, "%d\t%d\t%d\n%s", i % NODES, (i * 7) % NODES, 5000 + i, i == 9 ? "# mid\n" : "");
    fclose(f);
    f = fopen(tsv, "r");
    gsnap_ingest_options io = GSNAP_INGEST_OPTIONS_INIT;
    io.batch_edges = 7;
    gsnap_ingest_report ir;
    OK(gsnap_ingest_text(db, f, "in.tsv", &io, &ir));
    fclose(f);
    for (int i = 0; i < 20; i++) {
        ev *e = &evs[nev];
        uint64_t v = (uint64_t)nb + 1 + (uint64_t)(i / 7);
        *e = (ev){(uint64_t)(i % NODES), (uint64_t)((i * 7) % NODES), 5000 + i, v, 0, nev};
        nev++;
    }
    gsnap_version_info *lg = NULL;
    size_t n = 0;
    OK(gsnap_db_log(db, NULL, 1, GSNAP_VERSION_LATEST, &lg, &n));
    CHECK(n == (size_t)nb + 3);
    for (int v = 1; v <= nb && n >= (size_t)nb; v++) {
        const gsnap_version_info *x = &lg[v - 1];
        CHECK(x->known && x->version == (uint64_t)v && !x->folded);
        CHECK(x->adds == adds[v] && x->deletes == dels[v] && x->min_t == mint[v] && x->max_t == maxt[v]);
        CHECK(x->commit_ns > 1600000000ll * 1000000000ll);
        if (v % 2) CHECK(strcmp(x->source, "feed.tsv") == 0 && x->first_line == (uint64_t)v * 100 &&
                         x->last_line == (uint64_t)v * 100 + 99);
        else CHECK(strcmp(x->source, "api") == 0 && x->first_line == 0);
    }
    /* lines: 1 header, events on 2..11, '# mid' on 12, events on 13..22 */
    if (n == (size_t)nb + 3) {
        const gsnap_version_info *t1 = &lg[nb], *t2 = &lg[nb + 1], *t3 = &lg[nb + 2];
        CHECK(strcmp(t1->source, "in.tsv") == 0 && t1->first_line == 2 && t1->last_line == 8 && t1->adds == 7);
        CHECK_MSG(t2->first_line == 9 && t2->last_line == 16 && t2->adds == 7, "lines %llu-%llu",
                  (unsigned long long)t2->first_line, (unsigned long long)t2->last_line);
        CHECK(t3->first_line == 17 && t3->last_line == 22 && t3->adds == 6);
    }
    gsnap_free(lg);
    /* diff against the model */
    uint64_t latest = (uint64_t)nb + 3;
    for (uint64_t v = 1; v < latest; v++) check_diff(db, v - 1 ? v - 1 : 0, v, UINT64_MAX);
    check_diff(db, 0, latest, UINT64_MAX);
    check_diff(db, 3, latest - 2, UINT64_MAX);
    for (uint64_t x = 0; x < 6; x++) check_diff(db, 2, latest, x);
    check_diff(db, 5, 5, UINT64_MAX);
    gsnap_diff_edge *e = NULL;
    size_t en = 0;
    CHECK(gsnap_db_diff(db, NULL, 4, 3, UINT64_MAX, &e, &en) == GSNAP_ERANGE);
    CHECK(gsnap_db_diff(db, NULL, 1, latest + 1, UINT64_MAX, &e, &en) == GSNAP_ERANGE);
    gsnap_db_close(db);

    /* store format 1: opens, versions unknown, upgraded by the next commit */
    make_format1(db1, 1);
    OK(gsnap_db_open(db1, &o, &db));
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK(st.format_version == 1);
    OK(gsnap_db_log(db, NULL, 1, GSNAP_VERSION_LATEST, &lg, &n));
    CHECK(n == latest && !lg[0].known && strcmp(lg[0].source, "unknown") == 0);
    gsnap_free(lg);
    uint64_t probs = 1;
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    gsnap_batch *b = NULL;
    OK(gsnap_batch_begin(db, &b));
    OK(gsnap_batch_add(b, 1, 2, 99999));
    OK(gsnap_batch_commit(b, NULL));
    OK(gsnap_db_stats(db, &st));
    CHECK(st.format_version == GSNAP_STORE_FORMAT);
    OK(gsnap_db_log(db, NULL, latest, GSNAP_VERSION_LATEST, &lg, &n));
    CHECK(n == 2 && !lg[0].known && lg[1].known && lg[1].adds == 1);
    gsnap_free(lg);
    OK(gsnap_db_check(db, NULL, NULL, &probs));
    CHECK(probs == 0);
    gsnap_db_close(db);
    /* a future format is refused */
    make_format1(db1, 7);
    CHECK(gsnap_db_open(db1, &o, &db) == GSNAP_EFORMAT);
    CHECK(strstr(gsnap_last_open_error(), "format version 7") != NULL);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
