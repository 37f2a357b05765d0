/*
 * fuzz/fuzz_store.c -- libFuzzer target for every on-disk record of the
 * store: data chunks (gs.data), dense runs (gs.dense), Bloom filters
 * (gs.bloom), the meta record (gs.meta), the run catalog (gs.runs) and the
 * change log (gs.changes).
 *
 * Once per process: a small database is built in a temporary directory
 * (several runs, deletes, both directions) and the (table, key, value) of
 * every record is remembered. Per input:
 *   byte 0  which record to replace (index into that list, modulo its size)
 *   byte 1  bit 0: for a checksummed value (chunk, dense, Bloom), recompute
 *           its XXH3 over the new payload so the decoder gets past the
 *           checksum to the structural checks; bit 1: set the right magic
 *   rest    the new value (raw bytes)
 * The value is written with raw LMDB, then the store is exercised through
 * its public API: version, stats, read views, point-in-time neighbours and
 * degrees (both directions, several (T, V)), the iterator, a whole-graph scan,
 * the change log and gsnap_db_check. Each must return (an error code is fine);
 * a crash, hang, sanitizer report or leak is a finding. Then the original value
 * is written back, so every input sees the same database.
 */
#include "store/store_int.h"
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "fuzz_seed.h"

typedef struct {
    MDB_dbi dbi;
    int kind; /* 0 chunk, 1 meta, 2 run, 3 change, 4 dense, 5 bloom */
    unsigned char key[32];
    size_t klen;
    unsigned char *val;
    size_t vlen;
} target;

static gsnap_db *g_db;
static target *g_t;
static size_t g_nt;
static char g_dir[256];

static void cleanup(void) {
    gsnap_db_close(g_db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd)) {}
}

static void collect(MDB_txn *txn, MDB_dbi dbi, int kind, size_t max) {
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    size_t n = 0;
    if (mdb_cursor_open(txn, dbi, &cur)) abort();
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && n < max;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT), n++) {
        if (k.mv_size > sizeof g_t[0].key) continue;
        g_t = realloc(g_t, (g_nt + 1) * sizeof *g_t);
        target *t = &g_t[g_nt++];
        t->dbi = dbi;
        t->kind = kind;
        memcpy(t->key, k.mv_data, k.mv_size);
        t->klen = k.mv_size;
        t->val = malloc(v.mv_size);
        memcpy(t->val, v.mv_data, v.mv_size);
        t->vlen = v.mv_size;
    }
    mdb_cursor_close(cur);
}

static void setup(void) {
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/gsnap-fuzz-store-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir)) abort();
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.keep = getenv("GSNAP_FUZZ_BOTH") ? GSNAP_KEEP_BOTH : GSNAP_KEEP_IN; /* small: fast */
    if (gsnap_db_open(g_dir, &o, &g_db)) abort();
    uint64_t s = 12345;
    for (int b = 0; b < 6; b++) {
        gsnap_batch *bt = NULL;
        if (gsnap_batch_begin(g_db, &bt)) abort();
        int n = b == 0 ? 530 : 12; /* batch 0 spans two chunks */
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t u = (s >> 33) % 50, v = (s >> 13) % 50;
            if (i % 9 == 8) gsnap_batch_delete(bt, u, v, (int64_t)(b * 100 + i));
            else gsnap_batch_add(bt, u, v, (int64_t)(b * 100 + i % 50));
        }
        if (gsnap_batch_commit(bt, NULL)) abort();
    }
    MDB_txn *txn = NULL;
    if (mdb_txn_begin(gsnap_store__env(g_db), NULL, MDB_RDONLY, &txn)) abort();
    collect(txn, g_db->data_dbi, 0, 64);
    collect(txn, g_db->meta_dbi, 1, 4);
    collect(txn, g_db->runs_dbi, 2, 16);
    collect(txn, g_db->changes_dbi, 3, 8);
    collect(txn, g_db->dense_dbi, 4, 16);
    collect(txn, g_db->bloom_dbi, 5, 16);
    mdb_txn_abort(txn);
    if (!g_nt) abort();
    /* GSNAP_FUZZ_SEEDS=DIR: write small seeds (one per record kind) and go on */
    const char *seeds = getenv("GSNAP_FUZZ_SEEDS");
    int done_kind[8] = {0};
    for (size_t i = 0; seeds && i < g_nt; i++) {
        if (done_kind[g_t[i].kind] || g_t[i].vlen > 1024) continue;
        done_kind[g_t[i].kind] = 1;
        fuzz_write_seed(seeds, g_t[i].kind, i, g_t[i].val, g_t[i].vlen);
    }
    atexit(cleanup);
}

static void put(const target *t, const void *val, size_t len) {
    MDB_txn *txn = NULL;
    MDB_val k = {t->klen, (void *)t->key}, v = {len, (void *)val};
    if (mdb_txn_begin(gsnap_store__env(g_db), NULL, 0, &txn)) abort();
    if (mdb_put(txn, t->dbi, &k, &v, 0)) { mdb_txn_abort(txn); return; } /* e.g. too large */
    if (mdb_txn_commit(txn)) abort();
}

static int scan_fn(void *ctx, uint64_t node, const gsnap_nbr *nbrs, size_t n) {
    uint64_t *sum = ctx;
    *sum += node + n;
    for (size_t i = 0; i < n; i++) *sum += nbrs[i].node;
    return 0;
}

static void exercise(void) {
    uint64_t v = 0, sum = 0;
    gsnap_db_version(g_db, &v);
    gsnap_db_stat st;
    gsnap_db_stats(g_db, &st);
    gsnap_read *rd = NULL;
    gsnap_nbr buf[64];
    if (gsnap_read_begin(g_db, &rd) == 0) {
        static const int64_t ts[] = {GSNAP_TIME_MAX, 150, -1};
        static const uint64_t vs[] = {GSNAP_VERSION_LATEST, 3, 1};
        for (uint64_t node = 0; node < 50; node += 12)
            for (int i = 0; i < 3; i++) {
                size_t cnt = 0;
                uint64_t deg = 0;
                gsnap_neighbors(g_db, rd, node, GSNAP_DIR_IN, ts[i], vs[i], buf, 64, &cnt);
                if (i == 0) gsnap_degree(g_db, rd, node, GSNAP_DIR_IN, ts[1], vs[1], &deg);
            }
        gsnap_nbr_iter *it = NULL;
        if (gsnap_nbr_iter_open(g_db, rd, 3, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &it) == 0) {
            gsnap_nbr x;
            for (int i = 0; i < 100000 && gsnap_nbr_iter_next(it, &x) == 0; i++) sum += x.node;
            gsnap_nbr_iter_close(it);
        }
        gsnap_store__scan(g_db, rd, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, scan_fn, &sum);

        uint64_t *nodes = NULL, bound = 0;
        size_t nn = 0;
        if (gsnap_store__changed_nodes(g_db, rd, GSNAP_DIR_IN, 0, GSNAP_VERSION_LATEST, &nodes, &nn) == 0)
            gsnap_free(nodes);
        gsnap_store__node_bound(g_db, rd, &bound);
        gsnap_read_end(rd);
    }
    uint64_t problems = 0;
    gsnap_db_check(g_db, NULL, NULL, &problems);
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_db) setup();
    if (size < 2) return 0;
    const target *t = &g_t[data[0] % g_nt];
    size_t len = size - 2;
    unsigned char *val = malloc(len ? len : 1);
    if (!val) return 0;
    memcpy(val, data + 2, len);
    /* checksummed values: header size, magic, offset of the XXH3 field */
    size_t hs = 0, xo = 0;
    uint32_t magic = 0;
    if (t->kind == 0) { /* the chunk kind the database holds (GSC2; GSC1 in old runs) */
        hs = 16; xo = 8; magic = GSNAP_CHUNK2_MAGIC;
        if (t->vlen >= 4) memcpy(&magic, t->val, 4);
    }
    if (t->kind == 4) { /* the dense kind the database holds (GSD3/GSI2; GSD1/GSI1 when there is none) */
        hs = sizeof(struct gsnap_dense_hdr); xo = 16;
        magic = t->klen > 9 && t->key[9] ? GSNAP_INDEX_MAGIC : GSNAP_DENSE_MAGIC;
        if (t->vlen >= 4) memcpy(&magic, t->val, 4);
    }
    if (t->kind == 5) { hs = sizeof(struct gsnap_bloom_hdr); xo = 8; magic = GSNAP_BLOOM_MAGIC; }
    if (hs && len >= hs) {
        if (data[1] & 2) memcpy(val, &magic, 4);
        if (data[1] & 1) {
            size_t body = len - hs;
            if (t->kind == 0 && magic == GSNAP_CHUNK_MAGIC) { /* a GSC1 checksum covers nrec records */
                uint32_t nrec;
                memcpy(&nrec, val + 4, 4);
                if ((size_t)nrec * GSNAP_REC_BYTES < body) body = (size_t)nrec * GSNAP_REC_BYTES;
            }
            uint64_t x = XXH3_64bits(val + hs, body);
            memcpy(val + xo, &x, 8);
        }
    }
    put(t, val, len);
    exercise();
    put(t, t->val, t->vlen);
    free(val);
    return 0;
}
