/*
 * The batch sort's two paths agree: a batch whose (node, nbr, t - tmin) fit
 * one 64-bit key (the packed-key sort) answers exactly like the same batch
 * with ids or times spread so wide that they do not (the 24-byte radix
 * sort), node for node, both directions, at several times; duplicates of
 * one (src, dst, t) with adds and deletes mixed keep their batch order.
 * Also several batches of the ingest pipeline path (gsnap_ingest_text with
 * a small batch size) agree with one batch built by adds, and a commit
 * that fails on the pipeline's commit thread reports its own message to the
 * caller (messages are per thread).
 */
#include "graphsnap.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODES 40
#define TIMES 16

static gsnap_db *open_db(const char *dir) {
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    return db;
}

/* one batch of n events; ids offset by id_off, times by t_off */
static void fill(gsnap_db *db, size_t n, uint64_t id_off, int64_t t_off, uint64_t seed) {
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (size_t i = 0; i < n; i++) {
        uint64_t s = 1 + test_rand(&seed) % NODES, d = 1 + test_rand(&seed) % NODES;
        int64_t t = (int64_t)(test_rand(&seed) % TIMES);
        int del = test_rand(&seed) % 4 == 0;
        OK(del ? gsnap_batch_delete(b, s + id_off, d + id_off, t + t_off)
               : gsnap_batch_add(b, s + id_off, d + id_off, t + t_off));
    }
    /* one far event on node 0 (not compared) keeps the time range wide */
    if (t_off) OK(gsnap_batch_add(b, id_off, id_off, INT64_MIN + 1));
    OK(gsnap_batch_commit(b, NULL));
}

/* Node v's answer in a and v + off in b, at time when (+ t_off in b). */
static void same(gsnap_db *a, gsnap_db *b, uint64_t off, int64_t t_off, uint64_t v, gsnap_dir dir, int64_t when) {
    static gsnap_nbr x[4096], y[4096];
    size_t nx = 0, ny = 0;
    OK(gsnap_neighbors(a, NULL, v, dir, when, GSNAP_VERSION_LATEST, x, 4096, &nx));
    OK(gsnap_neighbors(b, NULL, v + off, dir, when + t_off, GSNAP_VERSION_LATEST, y, 4096, &ny));
    CHECK_MSG(nx == ny && nx <= 4096, "node %llu dir %d at %lld: %zu vs %zu", (unsigned long long)v, (int)dir,
              (long long)when, nx, ny);
    for (size_t i = 0; i < nx && i < ny; i++)
        CHECK_MSG(x[i].node + off == y[i].node && x[i].t + t_off == y[i].t, "node %llu entry %zu differs",
                  (unsigned long long)v, i);
}

int main(void) {
    size_t n = test_small() ? 3000 : 20000;
    const uint64_t wide_id = UINT64_C(1) << 63;   /* node bits 64: no packed key */
    const int64_t wide_t = INT64_C(1) << 62;      /* t range over 62 bits */
    char *d0 = test_tmpdir("narrow"), *d1 = test_tmpdir("wide_id"), *d2 = test_tmpdir("wide_t");
    gsnap_db *a = open_db(d0), *b = open_db(d1), *c = open_db(d2);
    fill(a, n, 0, 0, 7);
    fill(b, n, wide_id, 0, 7);
    fill(c, n, 0, wide_t, 7);
    for (uint64_t v = 1; v <= NODES; v++)
        for (int dir = 0; dir < 2; dir++)
            for (int64_t when = 0; when <= TIMES; when += 3) {
                same(a, b, wide_id, 0, v, (gsnap_dir)dir, when);
                same(a, c, 0, wide_t, v, (gsnap_dir)dir, when);
            }
    gsnap_db_close(a);
    gsnap_db_close(b);
    gsnap_db_close(c);

    /* the pipelined text ingest, batches of 997 events, against one batch */
    char *d3 = test_tmpdir("text"), *d4 = test_tmpdir("one"), path[4096];
    snprintf(path, sizeof path, "%s/in.tsv", d3);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    uint64_t seed = 9;
    gsnap_db *e = open_db(d4);
    gsnap_batch *bt;
    OK(gsnap_batch_begin(e, &bt));
    for (size_t i = 0; i < n; i++) {
        uint64_t s = test_rand(&seed) % NODES, d = test_rand(&seed) % NODES;
        int64_t t = (int64_t)(test_rand(&seed) % TIMES);
        int del = test_rand(&seed) % 4 == 0;
        fprintf(f, "%llu\t%llu\t%lld\t%s\n", (unsigned long long)s, (unsigned long long)d, (long long)t,
                del ? "del" : "add");
        OK(del ? gsnap_batch_delete(bt, s, d, t) : gsnap_batch_add(bt, s, d, t));
    }
    CHECK(fclose(f) == 0);
    OK(gsnap_batch_commit(bt, NULL));
    gsnap_db *g = open_db(d3);
    gsnap_ingest_options io = GSNAP_INGEST_OPTIONS_INIT;
    gsnap_ingest_report rep;
    io.batch_edges = 997;
    f = fopen(path, "r");
    CHECK(f != NULL);
    OK(gsnap_ingest_text(g, f, path, &io, &rep));
    fclose(f);
    CHECK(rep.events == n && rep.batches == (n + 996) / 997);
    CHECK(rep.first_version == 1 && rep.last_version == rep.batches);
    for (uint64_t v = 0; v < NODES; v++)
        for (int dir = 0; dir < 2; dir++)
            for (int64_t when = 0; when <= TIMES; when += 5)
                same(e, g, 0, 0, v, (gsnap_dir)dir, when);
    /* a batch left open on the handle: the commit thread's begin fails */
    gsnap_batch *open_b;
    OK(gsnap_batch_begin(g, &open_b));
    f = fopen(path, "r");
    CHECK(f != NULL);
    int irc = gsnap_ingest_text(g, f, path, &io, &rep);
    fclose(f);
    CHECK(irc == GSNAP_EBUSY);
    CHECK_MSG(strstr(gsnap_db_errmsg(g), "already open") != NULL, "the caller sees: %s", gsnap_db_errmsg(g));
    gsnap_batch_abort(open_b);
    gsnap_db_close(e);
    gsnap_db_close(g);
    test_rmdir(d0);
    free(d0);
    test_rmdir(d1);
    free(d1);
    test_rmdir(d2);
    free(d2);
    test_rmdir(d3);
    free(d3);
    test_rmdir(d4);
    free(d4);
    TEST_DONE();
}
