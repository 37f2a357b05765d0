/*
 * Durability and isolation of the store:
 *  - a map that starts at 64 KiB grows through a large ingest without error;
 *  - a reader process sees only whole batches while a writer process ingests;
 *  - read-only handles refuse writes; an unknown format version is refused;
 *  - a failed batch leaves earlier versions intact.
 */
#include "test.h"
#include "store/store_int.h"
#include <lmdb.h>
#include <sys/wait.h>

#define HUB 1000000007ull

static void map_growth(void) {
    char *dir = test_tmpdir("grow");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.map_size = 64 << 10;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rng = 42, total = 0;
    int batches = test_small() ? 4 : 12, per = 25000;
    for (int b = 0; b < batches; b++) {
        gsnap_batch *bt = NULL;
        OK(gsnap_batch_begin(db, &bt));
        for (int i = 0; i < per; i++) OK(gsnap_batch_add(bt, test_rand(&rng) % 5000, i % 97, b * per + i));
        uint64_t v;
        OK(gsnap_batch_commit(bt, &v));
        CHECK(v == (uint64_t)b + 1);
        total += per;
    }
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK(st.map_size > (64u << 10));
    CHECK(st.edge_records == total);
    /* in-degrees of the 97 destinations add up to every edge */
    uint64_t sum = 0;
    for (uint64_t d = 0; d < 97; d++) {
        uint64_t deg = 0;
        OK(gsnap_degree(db, NULL, d, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
        sum += deg;
    }
    CHECK(sum == total);
    gsnap_db_close(db);
    /* reopen with a tiny map option: the recorded size is adopted */
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t deg = 0;
    OK(gsnap_degree(db, NULL, 0, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    CHECK(deg > 0);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* Writer process: batch v adds exactly v edges into HUB (and noise). */
static void writer(const char *dir, int batches) {
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.map_size = 256 << 10; /* small, so the writer grows it under the reader */
    o.sync = GSNAP_SYNC_NONE;
    if (gsnap_db_open(dir, &o, &db)) _exit(3);
    uint64_t rng = 7;
    for (int b = 1; b <= batches; b++) {
        gsnap_batch *bt = NULL;
        if (gsnap_batch_begin(db, &bt)) _exit(4);
        for (int i = 0; i < 2000; i++) gsnap_batch_add(bt, test_rand(&rng) % 100000, test_rand(&rng) % 100000, i);
        for (int i = 0; i < b; i++) gsnap_batch_add(bt, (uint64_t)i, HUB, b);
        if (gsnap_batch_commit(bt, NULL)) _exit(5);
    }
    gsnap_db_close(db);
    _exit(0);
}

static void two_processes(void) {
    char *dir = test_tmpdir("mp");
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, NULL, &db)); /* create */
    gsnap_db_close(db);
    int batches = test_small() ? 20 : 120;
    pid_t pid = fork();
    if (pid == 0) writer(dir, batches);
    OK(gsnap_db_open(dir, NULL, &db));
    uint64_t seen = 0, checks = 0, bad = 0;
    for (;;) {
        gsnap_read *rd = NULL;
        OK(gsnap_read_begin(db, &rd));
        uint64_t v = gsnap_read_version(rd), deg = 0;
        OK(gsnap_degree(db, rd, HUB, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
        /* whole batches only: versions 1..v put 1+2+..+v edges into HUB */
        if (deg != v * (v + 1) / 2) bad++;
        /* and as of an older version, exactly that version's prefix */
        if (v > 1) {
            uint64_t old = 0;
            OK(gsnap_degree(db, rd, HUB, GSNAP_DIR_IN, GSNAP_TIME_MAX, v / 2, &old));
            if (old != (v / 2) * (v / 2 + 1) / 2) bad++;
        }
        if (v < seen) bad++;
        seen = v;
        checks++;
        gsnap_read_end(rd);
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            break;
        }
    }
    uint64_t v = 0;
    OK(gsnap_db_version(db, &v));
    CHECK(v == (uint64_t)batches);
    CHECK(bad == 0);
    CHECK(checks > 1);
    printf("reader made %llu consistent checks while the writer ran\n", (unsigned long long)checks);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

static void read_only_and_format(void) {
    char *dir = test_tmpdir("ro");
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, NULL, &db));
    gsnap_batch *bt = NULL;
    OK(gsnap_batch_begin(db, &bt));
    OK(gsnap_batch_add(bt, 1, 2, 3));
    /* one batch per handle */
    gsnap_batch *b2 = NULL;
    CHECK(gsnap_batch_begin(db, &b2) == GSNAP_EBUSY && b2 == NULL);
    OK(gsnap_batch_commit(bt, NULL));
    /* a failed batch: reserved time; earlier versions intact */
    OK(gsnap_batch_begin(db, &bt));
    OK(gsnap_batch_add(bt, 5, 2, 1));
    CHECK(gsnap_batch_add(bt, 6, 2, GSNAP_TIME_MAX) == GSNAP_ERANGE);
    CHECK(strstr(gsnap_db_errmsg(db), "reserved") != NULL);
    gsnap_batch_abort(bt);
    uint64_t deg = 0;
    OK(gsnap_degree(db, NULL, 2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    CHECK(deg == 1);
    CHECK(gsnap_degree(db, NULL, 2, (gsnap_dir)7, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg) == GSNAP_EINVAL);
    gsnap_db_close(db);

    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.read_only = 1;
    OK(gsnap_db_open(dir, &o, &db));
    CHECK(gsnap_batch_begin(db, &bt) == GSNAP_EACCES);
    OK(gsnap_degree(db, NULL, 2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    CHECK(deg == 1);
    gsnap_db_close(db);

    /* a database written by a future format is refused with EFORMAT */
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 16);
    OK(mdb_env_open(env, dir, 0, 0664));
    OK(mdb_txn_begin(env, NULL, 0, &txn));
    OK(mdb_dbi_open(txn, "gs.meta", 0, &dbi));
    MDB_val k = {5, (void *)"store"}, v;
    OK(mdb_get(txn, dbi, &k, &v));
    struct gsnap_meta m;
    memcpy(&m, v.mv_data, sizeof m);
    m.format = 99;
    v.mv_data = &m;
    OK(mdb_put(txn, dbi, &k, &v, 0));
    OK(mdb_txn_commit(txn));
    mdb_env_close(env);
    CHECK(gsnap_db_open(dir, NULL, &db) == GSNAP_EFORMAT && db == NULL);
    CHECK(strstr(gsnap_last_open_error(), "format version 99") != NULL);

    /* a missing database is NOTFOUND without create */
    gsnap_db_options nc = GSNAP_DB_OPTIONS_INIT;
    nc.create = 0;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    CHECK(gsnap_db_open(missing, &nc, &db) == GSNAP_NOTFOUND);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    map_growth();
    two_processes();
    read_only_and_format();
    TEST_DONE();
}
