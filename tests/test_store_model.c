/*
 * Point-in-time correctness against an independent model: random streams of
 * adds, deletes, multi-edges and out-of-order times in many versions; every
 * answer of gsnap_neighbors / gsnap_degree / the iterator / the store scan at
 * random (T, V) is compared with a brute-force replay of the event list kept
 * here. The database is closed and reopened along the way, and merged.
 */
#include "test.h"
#include "store/store.h"
#include "edge_model.h"

struct scan_ctx { gsnap_dir dir; int64_t T; uint64_t V; uint64_t nodes; int bad; uint64_t last; };
static int scan_cb(void *vctx, uint64_t node, const gsnap_nbr *nb, size_t n) {
    struct scan_ctx *c = vctx;
    gsnap_nbr *exp = malloc((nev + 1) * sizeof *exp);
    size_t en = model(node, c->dir, c->T, c->V, exp);
    if (en != n || (n && memcmp(exp, nb, n * sizeof *nb) != 0)) c->bad++;
    if (c->nodes && node <= c->last) c->bad++;
    c->last = node;
    c->nodes++;
    free(exp);
    return 0;
}

static int check_queries(gsnap_db *db, uint64_t *rng, int nq, uint64_t maxnode, uint64_t latest) {
    int bad = 0;
    gsnap_nbr *exp = malloc((nev + 1) * sizeof *exp), *got = malloc((nev + 1) * sizeof *got);
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    CHECK(gsnap_read_version(rd) == latest);
    for (int q = 0; q < nq; q++) {
        uint64_t node = test_rand(rng) % maxnode;
        gsnap_dir dir = (gsnap_dir)(test_rand(rng) % 2);
        int64_t T = (test_rand(rng) % 4 == 0) ? GSNAP_TIME_MAX : (int64_t)(test_rand(rng) % 120) - 60;
        uint64_t V = (test_rand(rng) % 4 == 0) ? GSNAP_VERSION_LATEST : test_rand(rng) % (latest + 2);
        uint64_t mv = V > latest ? latest : V;
        size_t en = model(node, dir, T, mv, exp), gn = 0;
        gsnap_read *use = (q % 3 == 0) ? NULL : rd;
        OK(gsnap_neighbors(db, use, node, dir, T, V, got, nev + 1, &gn));
        if (gn != en || (gn && memcmp(exp, got, gn * sizeof *got) != 0)) {
            if (bad < 5) fprintf(stderr, "mismatch node %llu dir %d T %lld V %llu: got %zu want %zu\n",
                                 (unsigned long long)node, dir, (long long)T, (unsigned long long)V, gn, en);
            if (bad < 1 && getenv("GSNAP_TEST_VERBOSE")) {
                for (size_t i = 0; i < en; i++) fprintf(stderr, " want (%llu,%lld,v%llu)", (unsigned long long)exp[i].node, (long long)exp[i].t, (unsigned long long)exp[i].version);
                fprintf(stderr, "\n");
                for (size_t i = 0; i < gn; i++) fprintf(stderr, " got (%llu,%lld,v%llu)", (unsigned long long)got[i].node, (long long)got[i].t, (unsigned long long)got[i].version);
                fprintf(stderr, "\n");
            }
            bad++;
        }
        uint64_t deg = 0;
        OK(gsnap_degree(db, use, node, dir, T, V, &deg));
        if (deg != en) bad++;
        /* the samplers' distinct ids: the model's distinct neighbours */
        bad += distinct_ids_differ(db, rd, node, dir, T, V, exp, en, bad < 5);
        /* small buffer: count is still the total, the prefix is right */
        if (en > 1) {
            size_t cn = 0;
            OK(gsnap_neighbors(db, rd, node, dir, T, V, got, 1, &cn));
            if (cn != en || memcmp(&got[0], &exp[0], sizeof *got)) bad++;
        }
        if (q % 7 == 0) {
            gsnap_nbr_iter *it = NULL;
            OK(gsnap_nbr_iter_open(db, rd, node, dir, T, V, &it));
            gsnap_nbr x;
            size_t i = 0;
            int rc;
            while ((rc = gsnap_nbr_iter_next(it, &x)) == 0) {
                if (i >= en || memcmp(&x, &exp[i], sizeof x)) bad++;
                i++;
            }
            if (rc != GSNAP_NOTFOUND || i != en) bad++;
            gsnap_nbr_iter_close(it);
        }
    }
    gsnap_read_end(rd);
    free(exp);
    free(got);
    return bad;
}

int main(void) {
    int seeds = test_small() ? 3 : 60;
    for (int s = 1; s <= seeds; s++) {
        uint64_t rng = 0x1234 + (uint64_t)s * 7919;
        char *dir = test_tmpdir("model");
        gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
        o.sync = GSNAP_SYNC_NONE;
        o.map_size = 1 << 20; /* tiny: must grow */
        gsnap_db *db = NULL;
        OK(gsnap_db_open(dir, &o, &db));
        nev = 0;
        uint64_t maxnode = 5 + test_rand(&rng) % 40;
        int batches = 10 + (int)(test_rand(&rng) % 30);
        uint64_t latest = 0, seq = 0;
        for (int b = 0; b < batches; b++) {
            gsnap_batch *bt = NULL;
            OK(gsnap_batch_begin(db, &bt));
            int n = 1 + (int)(test_rand(&rng) % 60);
            size_t first = nev;
            for (int i = 0; i < n; i++) {
                ev_t e;
                int del = test_rand(&rng) % 5 == 0;
                if (del && nev > 0 && test_rand(&rng) % 2) { /* delete an existing pair */
                    ev_t *o2 = &evs[test_rand(&rng) % nev];
                    e.src = o2->src; e.dst = o2->dst;
                } else {
                    e.src = test_rand(&rng) % maxnode;
                    e.dst = test_rand(&rng) % maxnode;
                }
                e.t = (int64_t)(test_rand(&rng) % 100) - 50;
                e.del = del;
                e.ver = latest + 1;
                e.seq = seq++;
                model_push(e);
                if (del) OK(gsnap_batch_delete(bt, e.src, e.dst, e.t));
                else OK(gsnap_batch_add(bt, e.src, e.dst, e.t));
            }
            if (test_rand(&rng) % 10 == 0) { /* an aborted batch leaves no trace */
                gsnap_batch_abort(bt);
                nev = first;
                continue;
            }
            uint64_t v = 0;
            OK(gsnap_batch_commit(bt, &v));
            CHECK(v == latest + 1);
            latest = v;
            if (b % 5 == 4) {
                int bad = check_queries(db, &rng, test_small() ? 20 : 150, maxnode, latest);
                CHECK_MSG(bad == 0, "seed %d batch %d: %d bad answers", s, b, bad);
            }
            if (b % 11 == 10) { /* durability: close and reopen */
                gsnap_db_close(db);
                db = NULL;
                OK(gsnap_db_open(dir, &o, &db));
                uint64_t cv = 0;
                OK(gsnap_db_version(db, &cv));
                CHECK(cv == latest);
            }
        }
        int bad = check_queries(db, &rng, test_small() ? 30 : 300, maxnode, latest);
        CHECK_MSG(bad == 0, "seed %d: %d bad answers before compaction", s, bad);
        gsnap_db_stat st;
        OK(gsnap_db_stats(db, &st));
        CHECK(st.version == latest);
        CHECK(st.edge_records == nev);
        { int crc = gsnap_db_compact(db); if (crc) { fprintf(stderr, "compact: %s\n", gsnap_db_errmsg(db)); exit(1);} }
        OK(gsnap_db_stats(db, &st));
        CHECK(st.runs <= 1);
        bad = check_queries(db, &rng, test_small() ? 30 : 300, maxnode, latest);
        CHECK_MSG(bad == 0, "seed %d: %d bad answers after compaction", s, bad);
        /* whole-graph scan at a few (T, V) */
        for (int k = 0; k < 3; k++) {
            struct scan_ctx c = {(gsnap_dir)(k % 2), k == 0 ? GSNAP_TIME_MAX : (int64_t)(test_rand(&rng) % 100) - 50,
                                 k == 0 ? latest : test_rand(&rng) % (latest + 1), 0, 0, 0};
            OK(gsnap_store__scan(db, NULL, c.dir, c.T, c.V, scan_cb, &c));
            CHECK_MSG(c.bad == 0, "seed %d: scan mismatch on %d nodes", s, c.bad);
            /* every node the model knows with a live edge was visited */
            uint64_t expect_nodes = 0;
            gsnap_nbr *tmp = malloc((nev + 1) * sizeof *tmp);
            for (uint64_t nd = 0; nd < maxnode; nd++) expect_nodes += model(nd, c.dir, c.T, c.V, tmp) > 0;
            free(tmp);
            CHECK(c.nodes == expect_nodes);
        }
        gsnap_db_close(db);
        test_rmdir(dir);
        free(dir);
    }
    free(evs);
    TEST_DONE();
}
