/*
 * tests/test_open_probe_race.c -- the open-time file check against a commit
 * by another process.
 *
 * gsnap_db_open (and the adoption of a map another process grew) reads
 * data.mdb's meta pages and the file size, and refuses a file shorter than
 * the newest meta page says (a truncated file would be mapped past its end:
 * SIGBUS). Another process may commit between those two reads: it writes
 * its data pages (extending the file) and then the meta page. Reading the
 * size first and the meta page second could pair an old size with a newer
 * meta page and call a sound file truncated -- the flaky "shorter than its
 * LMDB meta page" open failure seen in the ASan soak and crash tests.
 *
 * The hook gsnap_store__probe_hook runs a real commit in a child process
 * (LMDB allows one environment per file and process) exactly between the
 * probe's two reads; the open must succeed and see the commit. A file that
 * really was truncated must still be refused, with the message.
 *
 * LMDB also counts in its meta page pages it never wrote: a page allocated
 * and freed in one txn goes to the freelist unwritten, and when it is the
 * highest page the file ends before (last_pg + 1) pages (seen in the crash
 * test: one page short, that page free). Case 3 makes a file whose last
 * pages are free and cuts them off: the open must accept it (LMDB never
 * reads a free page), and cutting one page more must still be refused.
 */
#include "test.h"
#include "store/store_int.h"
#include <sys/stat.h>
#include <sys/wait.h>
#include <lmdb.h>

static char g_dir[1024];
static int g_hooked;       /* the hook's commit ran */
static off_t g_before, g_after;

static off_t file_size(void) {
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/data.mdb", g_dir);
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* Commit n new edges as version v+1. 0 or an error code. */
static int commit_edges(gsnap_db *db, uint64_t first, unsigned n) {
    gsnap_batch *b = NULL;
    int rc = gsnap_batch_begin(db, &b);
    for (unsigned i = 0; i < n && !rc; i++) rc = gsnap_batch_add(b, first + i, first + i * 7 + 1, (int64_t)i);
    uint64_t v = 0;
    if (!rc) rc = gsnap_batch_commit(b, &v);
    return rc;
}

/* Another process commits enough to extend the file, between the probe's
 * reads. */
static void hook(const char *path) {
    (void)path;
    if (g_hooked) return;
    g_hooked = 1;
    g_before = file_size();
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_store__probe_hook = NULL;
        gsnap_db *db = NULL;
        if (gsnap_db_open(g_dir, NULL, &db)) _exit(2);
        int rc = commit_edges(db, 1000000, test_small() ? 4000 : 20000);
        gsnap_db_close(db);
        _exit(rc ? 3 : 0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the committing child ended with 0x%x", st);
    g_after = file_size();
}

/* The first page of the free tail of data.mdb: the lowest k with every page
 * k..last_pg in the freelist (last_pg + 1 when the last page is in use). */
static unsigned g_psize = 4096; /* LMDB's page size (free_tail reads it) */

static uint64_t free_tail(uint64_t *last_pg) {
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_cursor *c = NULL;
    MDB_val k, d;
    MDB_envinfo info;
    uint64_t first = UINT64_MAX;
    CHECK(mdb_env_create(&env) == 0);
    mdb_env_set_maxdbs(env, 256);
    CHECK(mdb_env_set_mapsize(env, (size_t)1 << 30) == 0);
    CHECK(mdb_env_open(env, g_dir, MDB_RDONLY, 0664) == 0);
    mdb_env_info(env, &info);
    MDB_stat ms;
    if (mdb_env_stat(env, &ms) == 0) g_psize = ms.ms_psize;
    *last_pg = info.me_last_pgno;
    unsigned char *isfree = calloc(info.me_last_pgno + 1, 1);
    CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0);
    CHECK(mdb_cursor_open(txn, 0, &c) == 0); /* FREE_DBI */
    while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) {
        const size_t *ids = d.mv_data;
        for (size_t i = 1; i <= ids[0]; i++)
            if (ids[i] <= info.me_last_pgno) isfree[ids[i]] = 1;
    }
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    first = *last_pg + 1;
    while (first > 2 && isfree[first - 1]) first--;
    free(isfree);
    return first;
}

/* Put a value of `len` bytes under a scratch key of LMDB's main table and
 * delete it in the next txn: its pages (an overflow run past the end of a
 * small file) end up free. */
static void put_del(size_t len) {
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    CHECK(mdb_env_create(&env) == 0);
    mdb_env_set_maxdbs(env, 256);
    CHECK(mdb_env_set_mapsize(env, (size_t)1 << 30) == 0);
    CHECK(mdb_env_open(env, g_dir, 0, 0664) == 0);
    char *buf = calloc(1, len);
    MDB_val k = {14, "zz-probe-test"}, v = {len, buf};
    CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
    CHECK(mdb_dbi_open(txn, NULL, 0, &dbi) == 0);
    CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
    CHECK(mdb_txn_commit(txn) == 0);
    CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
    CHECK(mdb_del(txn, dbi, &k, NULL) == 0);
    CHECK(mdb_txn_commit(txn) == 0);
    mdb_env_close(env);
    free(buf);
}

int main(void) {
    char *dir = test_tmpdir("probe_race");
    snprintf(g_dir, sizeof g_dir, "%s/db", dir);
    gsnap_db *db = NULL;
    CHECK(gsnap_db_open(g_dir, NULL, &db) == 0);
    CHECK(commit_edges(db, 1, 100) == 0);
    gsnap_db_close(db);

    /* 1: a commit by another process between the probe's two reads */
    gsnap_store__probe_hook = hook;
    db = NULL;
    int rc = gsnap_db_open(g_dir, NULL, &db);
    gsnap_store__probe_hook = NULL;
    CHECK(g_hooked);
    CHECK_MSG(g_after > g_before, "the child's commit did not extend the file (%lld -> %lld bytes)",
              (long long)g_before, (long long)g_after);
    CHECK_MSG(rc == 0, "open during another process's commit: %s (%s)", gsnap_strerror(rc),
              gsnap_last_open_error());
    if (rc == 0) {
        uint64_t v = 0;
        CHECK(gsnap_db_version(db, &v) == 0 && v == 2);
        gsnap_db_close(db);
    }

    /* 3: a file whose missing last pages are free is sound */
    {
        uint64_t last = 0, first = 0;
        for (size_t len = 64 << 10; len <= (4u << 20); len *= 2) {
            put_del(len);
            first = free_tail(&last);
            if (first <= last) break;
        }
        CHECK_MSG(first <= last, "no free tail made (last page %llu)", (unsigned long long)last);
        char p[1200];
        snprintf(p, sizeof p, "%s/data.mdb", g_dir);
        CHECK(truncate(p, (off_t)(first * g_psize)) == 0);
        db = NULL;
        rc = gsnap_db_open(g_dir, NULL, &db);
        CHECK_MSG(rc == 0, "file cut to its last used page (%llu free pages cut off): %s (%s)",
                  (unsigned long long)(last + 1 - first), gsnap_strerror(rc), gsnap_last_open_error());
        if (rc == 0) {
            uint64_t problems = 1, v = 0;
            CHECK(gsnap_db_check(db, NULL, NULL, &problems) == 0 && problems == 0);
            CHECK(commit_edges(db, 5000000, 1000) == 0);
            CHECK(gsnap_db_version(db, &v) == 0 && v == 3);
            gsnap_db_close(db);
        }
        /* one page more is truncation (an in-use page gone) */
        first = free_tail(&last);
        if (first > last) first = last + 1;
        CHECK(truncate(p, (off_t)((first - 1) * g_psize)) == 0);
        db = NULL;
        rc = gsnap_db_open(g_dir, NULL, &db);
        CHECK_MSG(rc == GSNAP_ECORRUPT, "in-use page cut off: %s", gsnap_strerror(rc));
        if (!rc) gsnap_db_close(db);
    }

    /* 2: a truncated file is still refused, with the reason */
    char p[1200];
    snprintf(p, sizeof p, "%s/data.mdb", g_dir);
    off_t full = file_size();
    CHECK(full > 3 * (off_t)g_psize);
    CHECK(truncate(p, full / 2) == 0);
    db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.create = 0;
    rc = gsnap_db_open(g_dir, &o, &db);
    CHECK_MSG(rc == GSNAP_ECORRUPT, "truncated file: %s", gsnap_strerror(rc));
    CHECK_MSG(strstr(gsnap_last_open_error(), "truncated") && strstr(gsnap_last_open_error(), "data.mdb"),
              "message: %s", gsnap_last_open_error());
    if (!rc) gsnap_db_close(db);

    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
