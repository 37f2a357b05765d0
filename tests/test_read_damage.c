/*
 * Damaged data is never served (issue #11, defect 1).
 *   - A flipped byte in a gs.data chunk: neighbours/degree of a node in that
 *     chunk fail with GSNAP_ECHECKSUM naming the node and the versions; every
 *     other node answers exactly what it answered before the damage.
 *   - The same for the dense base (gs.dense).
 *   - Background merges that meet the damaged run leave it alone, keep
 *     merging the other runs (the run count stays small), and the damage is
 *     reported by gsnap_db_stats (damaged_runs) and gsnap_db_check.
 */
#include "test.h"
#include "store/store_int.h"
#include <inttypes.h>
#include <lmdb.h>

#define NODES 300

static uint64_t node_id(int i, int sparse) { return sparse ? (uint64_t)i * 1000003u + 7 : (uint64_t)i; }

static void add_batch(gsnap_db *db, uint64_t *rng, int n, int sparse, int64_t t0) {
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (int i = 0; i < n; i++)
        OK(gsnap_batch_add(bt, node_id((int)(test_rand(rng) % NODES), sparse),
                           node_id((int)(test_rand(rng) % NODES), sparse), t0 + i));
    OK(gsnap_batch_commit(bt, NULL));
}

/* Flip a byte of a record's `nbr` in the middle of the last value of `table`;
 * returns the record's node and sets *dir from the key. */
static uint64_t damage(const char *dir, const char *table, int *kdir) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *cur; MDB_val k, v;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 16);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, table, 0, &dbi));
    OK(mdb_cursor_open(txn, dbi, &cur));
    OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
    int dense = strcmp(table, "gs.dense") == 0;
    if (dense) /* the last key is the index of (run, dir 1): step to its records */
        while (((unsigned char *)k.mv_data)[9] != 0) OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
    *kdir = ((unsigned char *)k.mv_data)[8];
    size_t hdr = dense ? 32 : 16;
    size_t nrec = (v.mv_size - hdr) / 32;
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    size_t at = hdr + 32 * (nrec / 2);
    uint64_t node;
    memcpy(&node, copy + at, 8);
    uint32_t magic;
    memcpy(&magic, copy, 4);
    if (!dense && magic == GSNAP_CHUNK2_MAGIC) { /* compact (format 3): the middle record */
        uint32_t n2;
        memcpy(&n2, copy + 4, 4);
        gsnap_codec_cur c;
        gsnap_rec r = {0, 0, 0, 0};
        OK(gsnap_codec__open(&c, copy + hdr, v.mv_size - hdr, n2));
        for (uint32_t i = 0; i <= n2 / 2; i++) CHECK(gsnap_codec__next(&c, &r) == 1);
        node = r.node;
        /* the record's last byte ends its vop varint: flipping bit 0 keeps
         * the encoding well formed and changes the version */
        copy[c.p - 1 - copy] ^= 0x01;
    } else if (dense && (magic == GSNAP_DENSE2_MAGIC || magic == GSNAP_DENSE3_MAGIC)) { /* bodies: the node of byte `at` */
        const unsigned char *p = copy + hdr, *end = copy + v.mv_size;
        uint64_t b1, b2;
        OK(gsnap_codec__get(&p, end, &b1) || gsnap_codec__get(&p, end, &b2));
        uint64_t off = (uint64_t)(copy + at - p);
        MDB_val ik, iv;
        OK(mdb_cursor_get(cur, &ik, &iv, MDB_NEXT)); /* the index of the same (run, dir) */
        uint64_t nidx = (iv.mv_size - hdr) / 8, lo;
        for (node = 0; node + 1 < nidx; node++) {
            memcpy(&lo, (const unsigned char *)iv.mv_data + hdr + (node + 1) * 8, 8);
            if (lo > off) break;
        }
        OK(mdb_cursor_get(cur, &ik, &iv, MDB_PREV));
        copy[at] ^= 0x10;
    } else {
        copy[at + 9] ^= 0x10;
    }
    MDB_val nv = {v.mv_size, copy};
    OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
    mdb_cursor_close(cur);
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
    free(copy);
    return node;
}

static char problems_text[8192];
static void rep(void *ctx, const char *p) {
    (void)ctx;
    size_t l = strlen(problems_text);
    snprintf(problems_text + l, sizeof problems_text - l, "%s\n", p);
}

static void one(int sparse) {
    char *dir = test_tmpdir("rdamage");
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 11 + (uint64_t)sparse;
    for (int b = 0; b < 7; b++) add_batch(db, &rng, 2000, sparse, b * 10000);
    uint64_t v0 = 0;
    OK(gsnap_db_version(db, &v0));
    /* answers before the damage, both directions */
    static gsnap_nbr before[2][NODES][64];
    static size_t nbefore[2][NODES];
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < NODES; i++)
            OK(gsnap_neighbors(db, NULL, node_id(i, sparse), (gsnap_dir)d, GSNAP_TIME_MAX, v0, before[d][i], 64,
                               &nbefore[d][i]));
    /* node UINT64_MAX against a dense base: an empty answer (fuzz finding
     * F14: node + 1 wrapped to 0 and the index was read far out of range) */
    {
        size_t c2 = 9;
        gsnap_nbr nb[4];
        OK(gsnap_neighbors(db, NULL, UINT64_MAX, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, nb, 4, &c2));
        CHECK(c2 == 0);
    }
    gsnap_db_close(db);

    int kdir = 0;
    uint64_t bad = damage(dir, sparse ? "gs.data" : "gs.dense", &kdir);
    OK(gsnap_db_open(dir, &o, &db));

    /* the raw events of the damaged node (store/events.c, what the temporal
     * sampler reads), asked first by this handle: an error too (the dense
     * value was loaded without its checksum on this path) */
    {
        gsnap_read *rd;
        gsnap_store_ev *ev = NULL;
        size_t nev = 0, evcap = 0;
        OK(gsnap_read_begin(db, &rd));
        int rrc = gsnap_store__node_raw(db, rd, bad, (gsnap_dir)kdir, 0, GSNAP_VERSION_LATEST, &ev, &nev, &evcap);
        CHECK_MSG(rrc == GSNAP_ECHECKSUM, "sparse %d: raw events of damaged node %" PRIu64 " returned %d", sparse,
                  bad, rrc);
        free(ev);
        gsnap_read_end(rd);
    }

    /* the damaged node: an error, never an answer */
    gsnap_nbr buf[64];
    size_t cnt = 0;
    int rc = gsnap_neighbors(db, NULL, bad, (gsnap_dir)kdir, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, buf, 64, &cnt);
    CHECK_MSG(rc == GSNAP_ECHECKSUM, "sparse %d: neighbours of damaged node %" PRIu64 " returned %d", sparse, bad, rc);
    char want[64];
    snprintf(want, sizeof want, "node %" PRIu64, bad);
    CHECK_MSG(strstr(gsnap_db_errmsg(db), want) && strstr(gsnap_db_errmsg(db), "version"),
              "message: %s", gsnap_db_errmsg(db));
    uint64_t deg = 0;
    CHECK(gsnap_degree(db, NULL, bad, (gsnap_dir)kdir, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg) == GSNAP_ECHECKSUM);

    /* more batches: merges go on around the damage */
    for (int b = 0; b < 40; b++) add_batch(db, &rng, 100, sparse, 100000 + b * 1000);
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK_MSG(st.runs <= 12, "sparse %d: %" PRIu64 " runs piled up after the damage", sparse, st.runs);
    CHECK_MSG(st.damaged_runs == 1, "damaged_runs %" PRIu64, st.damaged_runs);
    uint64_t np = 0;
    problems_text[0] = 0;
    OK(gsnap_db_check(db, rep, NULL, &np));
    CHECK(np >= 1);
    CHECK_MSG(strstr(problems_text, "damaged") != NULL, "check said: %s", problems_text);

    /* every node, both directions, as of the old version: the old answer or
     * a checksum error; never anything else */
    int errors = 0;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < NODES; i++) {
            rc = gsnap_neighbors(db, NULL, node_id(i, sparse), (gsnap_dir)d, GSNAP_TIME_MAX, v0, buf, 64, &cnt);
            if (rc == GSNAP_ECHECKSUM || rc == GSNAP_ECORRUPT) { errors++; continue; }
            CHECK(rc == GSNAP_OK);
            CHECK(cnt == nbefore[d][i]);
            if (cnt == nbefore[d][i])
                CHECK(memcmp(buf, before[d][i], (cnt < 64 ? cnt : 64) * sizeof *buf) == 0);
        }
    CHECK(errors >= 1);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    one(1); /* chunked runs (gs.data) */
    one(0); /* dense base (gs.dense) */
    TEST_DONE();
}
