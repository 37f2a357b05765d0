/*
 * test_store_shrink: the online compaction gives space back (gsnap_db_compact
 * -> gsnap_db_shrink, store/swap.c) under the open handle.
 *   1. After gsnap_db_compact data.mdb is no larger than before it (here
 *      strictly smaller), every neighbour list at every version (both
 *      directions) is what it was, check finds nothing, and the same handle
 *      goes on: its snapshot (a table opened before the swap) answers the
 *      same k-hop lists, a commit after the swap lands, a reopen sees it.
 *   2. Refused clearly: a read view of the calling thread, another process
 *      with the database open (GSNAP_EBUSY from gsnap_db_shrink, the file
 *      unchanged; gsnap_db_compact merges and returns GSNAP_OK).
 *   3. Crash: a child compacting is killed (SIGKILL) after each step of the
 *      swap (the copy written, renamed over data.mdb, reopened) and at
 *      random moments; each time the database opens with either file whole:
 *      every list as before, check clean, and it shrinks afterwards.
 *   4. Shrinks while a reader thread and a writer thread work on the same
 *      handle: no errors, every commit there, check clean.
 *   5. Retention (gsnap_db_compact_history) while another process holds
 *      the database and commits: the commit stays. Retention now takes the
 *      directory exclusively first, so it returns GSNAP_EBUSY before any
 *      copy; should it copy first again (the order in which the commit was
 *      lost), the child commits as soon as the copy file appears and the
 *      lost commit fails the check.
 */
#include "test.h"
#include <poll.h>
#include "store/store_int.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODES 200

static uint64_t g_versions;

static uint64_t file_size(const char *dir) {
    char f[4096];
    struct stat st;
    snprintf(f, sizeof f, "%s/data.mdb", dir);
    return stat(f, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static gsnap_db *open_db(const char *dir) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.map_size = 1 << 20; /* grows while ingesting: remaps before the swap */
    gsnap_db *db = NULL;
    int rc = gsnap_db_open(dir, &o, &db);
    if (rc) fprintf(stderr, "open %s: %s\n", dir, gsnap_last_open_error());
    return db;
}

/* Every neighbour list, both directions, at every version 1..g_versions. */
static uint64_t fingerprint(gsnap_db *db) {
    gsnap_read *rd = NULL;
    static gsnap_nbr buf[4096];
    uint64_t h = 1469598103934665603ull;
    if (gsnap_read_begin(db, &rd)) return 0;
    for (uint64_t v = 1; v <= g_versions; v++)
        for (uint64_t n = 0; n < NODES; n++)
            for (int d = 0; d < 2; d++) {
                size_t cnt = 0;
                if (gsnap_neighbors(db, rd, n, (gsnap_dir)d, GSNAP_TIME_MAX, v, buf, 4096, &cnt) || cnt > 4096) {
                    gsnap_read_end(rd);
                    return 0;
                }
                h = (h ^ test_fnv(&cnt, sizeof cnt)) * 1099511628211ull;
                h = (h ^ test_fnv(buf, cnt * sizeof *buf)) * 1099511628211ull;
            }
    gsnap_read_end(rd);
    return h;
}

static void ingest(gsnap_db *db, uint64_t *seed, unsigned batches, unsigned per) {
    for (unsigned b = 0; b < batches; b++) {
        gsnap_batch *bt;
        OK(gsnap_batch_begin(db, &bt));
        for (unsigned i = 0; i < per; i++) {
            uint64_t s = test_rand(seed) % NODES, d = test_rand(seed) % NODES;
            int64_t t = (int64_t)(g_versions * 1000 + i);
            if (test_rand(seed) % 8 == 0) OK(gsnap_batch_delete(bt, s, d, t));
            else OK(gsnap_batch_add(bt, s, d, t));
        }
        OK(gsnap_batch_commit(bt, NULL));
        g_versions++;
    }
}

static uint64_t problems(gsnap_db *db) {
    uint64_t p = UINT64_MAX;
    OK(gsnap_db_check(db, NULL, NULL, &p));
    return p;
}

static uint64_t khop_fp(gsnap_snapshot *snap) {
    uint64_t seeds[16];
    for (int i = 0; i < 16; i++) seeds[i] = (uint64_t)i * 7;
    gsnap_khop_options ko = GSNAP_KHOP_OPTIONS_INIT;
    ko.buffered = 1;
    gsnap_khop_result *r = NULL;
    if (gsnap_khop(snap, seeds, 16, 2, &ko, &r)) return 0;
    uint64_t h = test_fnv(r->ids, r->off[16 * 2] * sizeof *r->ids);
    gsnap_khop_result_free(r);
    return h;
}

/* 1: shrink under the open handle, with a snapshot open across it. */
static void case_shrink(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    ingest(db, seed, test_small() ? 8 : 24, test_small() ? 500 : 1500);
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    OK(gsnap_snapshot_create(db, "s", &so, NULL));
    gsnap_snapshot *snap = NULL;
    OK(gsnap_snapshot_open(db, "s", &snap));
    uint64_t k0 = khop_fp(snap), f0 = fingerprint(db), before = file_size(dir);
    CHECK(k0 != 0 && f0 != 0);
    OK(gsnap_db_compact(db));
    uint64_t after = file_size(dir);
    CHECK_MSG(after < before, "data.mdb %llu bytes before gsnap_db_compact, %llu after",
              (unsigned long long)before, (unsigned long long)after);
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    CHECK(st.runs == 1);
    CHECK(fingerprint(db) == f0);
    CHECK(khop_fp(snap) == k0);
    CHECK(problems(db) == 0);
    /* the handle goes on after the swap */
    ingest(db, seed, 2, 300);
    uint64_t f1 = fingerprint(db);
    gsnap_snapshot_close(snap);
    gsnap_db_close(db);
    db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    CHECK(fingerprint(db) == f1);
    CHECK(problems(db) == 0);
    gsnap_db_close(db);
}

/* 2: refusals leave the file as it is. */
static void case_refused(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    ingest(db, seed, 4, 400);
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    uint64_t before = file_size(dir);
    gsnap_compact_report rep;
    int rc = gsnap_db_shrink(db, &rep);
    CHECK_MSG(rc == GSNAP_EBUSY, "shrink with a read view of this thread: %d", rc);
    CHECK(rep.shrunk == 0 && file_size(dir) == before);
    gsnap_read_end(rd);
    uint64_t f0 = fingerprint(db);
    gsnap_db_close(db);

    /* another process has it open */
    int to_child[2], from_child[2];
    CHECK(pipe(to_child) == 0 && pipe(from_child) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_db *cdb = open_db(dir);
        char c = cdb ? 'o' : 'x';
        if (write(from_child[1], &c, 1) != 1) _exit(3);
        if (read(to_child[0], &c, 1) != 1) _exit(3);
        gsnap_db_close(cdb);
        _exit(0);
    }
    char c = 0;
    CHECK(read(from_child[0], &c, 1) == 1 && c == 'o');
    db = open_db(dir);
    CHECK(db != NULL);
    if (db) {
        before = file_size(dir);
        rc = gsnap_db_shrink(db, &rep);
        CHECK_MSG(rc == GSNAP_EBUSY, "shrink with another process: %d", rc);
        CHECK(strstr(gsnap_db_errmsg(db), "another process") != NULL);
        CHECK(rep.shrunk == 0 && file_size(dir) == before);
        OK(gsnap_db_compact(db)); /* the merge stands, the file stays */
        CHECK(file_size(dir) >= before);
        CHECK(fingerprint(db) == f0);
    }
    c = 'q';
    CHECK(write(to_child[1], &c, 1) == 1);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (db) {
        before = file_size(dir);
        rc = gsnap_db_shrink(db, &rep);
        CHECK_MSG(rc == 0 && rep.shrunk, "shrink alone: %d %s", rc, gsnap_db_errmsg(db));
        CHECK(file_size(dir) < before);
        CHECK(fingerprint(db) == f0);
        CHECK(problems(db) == 0);
        gsnap_db_close(db);
    }
    close(to_child[0]); close(to_child[1]); close(from_child[0]); close(from_child[1]);
}

static int g_kill_step;
static void kill_hook(gsnap_db *db, int step) {
    (void)db;
    if (step == g_kill_step) raise(SIGKILL);
}

/* 3: kill a compacting child (after step `step`, or after delay_us when
 * step is 0); then the database must be whole. */
static void crash_once(const char *dir, int step, unsigned delay_us, uint64_t f0) {
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_db *db = open_db(dir);
        if (!db) _exit(3);
        g_kill_step = step;
        gsnap_store__swap_hook = kill_hook;
        int rc = gsnap_db_compact(db);
        gsnap_db_close(db);
        _exit(rc ? 4 : 0);
    }
    if (step == 0) {
        usleep(delay_us);
        kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (step) CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child not killed at step %d", step);
    else CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
    gsnap_db *db = open_db(dir);
    CHECK_MSG(db != NULL, "open after a kill at step %d (delay %u us)", step, delay_us);
    if (!db) return;
    CHECK_MSG(fingerprint(db) == f0, "lists differ after a kill at step %d (delay %u us)", step, delay_us);
    CHECK(problems(db) == 0);
    gsnap_db_close(db);
}

static void case_crash(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    ingest(db, seed, test_small() ? 6 : 20, test_small() ? 500 : 2000);
    uint64_t f0 = fingerprint(db);
    gsnap_db_close(db);
    for (int step = 1; step <= 3; step++) {
        crash_once(dir, step, 0, f0);
        /* each kill leaves the next attempt something to do */
        db = open_db(dir);
        if (!db) return;
        ingest(db, seed, 3, 500);
        f0 = fingerprint(db);
        gsnap_db_close(db);
    }
    unsigned kills = test_small() ? 2 : 8;
    for (unsigned i = 0; i < kills; i++) {
        crash_once(dir, 0, (unsigned)(test_rand(seed) % (test_small() ? 200000 : 60000)), f0);
        db = open_db(dir);
        if (!db) return;
        ingest(db, seed, 2, 500);
        f0 = fingerprint(db);
        gsnap_db_close(db);
    }
    /* and it still shrinks */
    db = open_db(dir);
    if (!db) return;
    uint64_t before = file_size(dir);
    OK(gsnap_db_compact(db));
    CHECK(file_size(dir) <= before);
    CHECK(fingerprint(db) == f0);
    CHECK(problems(db) == 0);
    gsnap_db_close(db);
}

/* 4: shrinks while other threads read and commit (TSan runs this too). */
struct thr { gsnap_db *db; _Atomic int stop; int errors; uint64_t commits, views; };

static void *reader_thread(void *vp) {
    struct thr *t = vp;
    while (!t->stop) {
        gsnap_read *rd = NULL;
        if (gsnap_read_begin(t->db, &rd)) { t->errors++; continue; }
        for (uint64_t n = 0; n < NODES; n += 7) {
            uint64_t d;
            if (gsnap_degree(t->db, rd, n, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &d)) t->errors++;
        }
        gsnap_read_end(rd);
        t->views++;
    }
    return NULL;
}

static void *writer_thread(void *vp) {
    struct thr *t = vp;
    uint64_t seed = 99;
    while (!t->stop) {
        gsnap_batch *b = NULL;
        if (gsnap_batch_begin(t->db, &b)) { t->errors++; continue; }
        for (int i = 0; i < 200; i++)
            gsnap_batch_add(b, test_rand(&seed) % NODES, test_rand(&seed) % NODES, (int64_t)(t->commits * 1000 + i));
        if (gsnap_batch_commit(b, NULL)) t->errors++;
        else t->commits++;
    }
    return NULL;
}

static void case_threads(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    ingest(db, seed, 4, 1000);
    struct thr t = {db, 0, 0, 0, 0};
    pthread_t r, w;
    CHECK(pthread_create(&r, NULL, reader_thread, &t) == 0);
    CHECK(pthread_create(&w, NULL, writer_thread, &t) == 0);
    int shrunk = 0;
    for (int i = 0; i < 4; i++) {
        usleep(20000);
        gsnap_compact_report rep;
        int rc = gsnap_db_shrink(db, &rep);
        CHECK_MSG(rc == 0 || rc == GSNAP_EBUSY, "shrink under readers and a writer: %d %s", rc, gsnap_db_errmsg(db));
        shrunk += rep.shrunk;
        OK(gsnap_db_compact(db));
    }
    t.stop = 1;
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    CHECK_MSG(t.errors == 0, "%d errors in the threads", t.errors);
    CHECK(shrunk > 0 && t.commits > 0 && t.views > 0);
    uint64_t v = 0;
    OK(gsnap_db_version(db, &v));
    CHECK(v == 4 + t.commits);
    CHECK(problems(db) == 0);
    gsnap_db_close(db);
}

/* 5: retention's shrink (gsnap_db_compact_history) loses no commit that
 * another process makes while the copy is written and then closes. */
static void case_retention_race(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    ingest(db, seed, test_small() ? 10 : 40, 20000);
    gsnap_db_close(db);
    char tmp[4200], tmp2[4200]; /* retention's copy: data.mdb.compact before, data.mdb.shrink now */
    snprintf(tmp, sizeof tmp, "%s/data.mdb.compact", dir);
    snprintf(tmp2, sizeof tmp2, "%s/data.mdb.shrink", dir);
    int from_child[2], to_child[2];
    CHECK(pipe(from_child) == 0 && pipe(to_child) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        gsnap_db *cdb = open_db(dir);
        char c = cdb ? 'o' : 'x';
        if (write(from_child[1], &c, 1) != 1 || !cdb) _exit(3);
        /* until the copy appears, or the parent says compact_history has
         * returned (it may end without a copy, or between two looks: the
         * wait used to run its full 200,000 turns then, 20-40 s) */
        struct pollfd done = {to_child[0], POLLIN, 0};
        int over = 0;
        for (int i = 0; i < 200000 && !over && access(tmp, F_OK) != 0 && access(tmp2, F_OK) != 0; i++)
            over = poll(&done, 1, 0) > 0 || (usleep(20), 0);
        if (!over) usleep(2000); /* the copy's read txn has begun */
        gsnap_batch *b = NULL;
        uint64_t v = 0;
        int rc = gsnap_batch_begin(cdb, &b);
        if (!rc) rc = gsnap_batch_add(b, NODES + 1, NODES + 2, 1 << 30);
        if (!rc) rc = gsnap_batch_commit(b, &v);
        gsnap_db_close(cdb);
        c = rc ? 'f' : 'c';
        if (write(from_child[1], &c, 1) != 1) _exit(3);
        _exit(0);
    }
    char c = 0;
    CHECK(read(from_child[0], &c, 1) == 1 && c == 'o');
    gsnap_compact_options co = GSNAP_COMPACT_OPTIONS_INIT;
    co.keep_versions = 1000000; /* fold nothing: the copy and the swap only */
    gsnap_compact_report rep;
    int rc = gsnap_db_compact_history(dir, &co, &rep);
    CHECK(rc == 0 || rc == GSNAP_EBUSY);
    if (getenv("SHRINK_DEBUG")) fprintf(stderr, "compact_history %d shrunk %d\n", rc, rep.shrunk);
    CHECK(write(to_child[1], "d", 1) == 1);
    int status = 0;
    waitpid(pid, &status, 0);
    c = 0;
    CHECK(read(from_child[0], &c, 1) == 1);
    close(from_child[0]);
    close(from_child[1]);
    close(to_child[0]);
    close(to_child[1]);
    db = open_db(dir);
    CHECK(db != NULL);
    if (!db) return;
    uint64_t deg = 0;
    OK(gsnap_degree(db, NULL, NODES + 2, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg));
    CHECK_MSG(c != 'c' || deg == 1, "the other process's commit is lost (compact_history %d, shrunk %d)", rc,
              rep.shrunk);
    CHECK(problems(db) == 0);
    gsnap_db_close(db);
}

/* Case 6: a table another thread opens during the copy (after the shrink
 * began, before the swap) is opened again on the new environment: its
 * handle never names another table there (it kept the old environment's
 * handle, which the new one gave to the next table opened: a put through
 * it landed in that table). */
static gsnap_db *g_tdb;
static MDB_dbi g_foo;
static int g_foo_rc = -1;
static void *open_foo(void *a) {
    (void)a;
    g_foo_rc = gsnap_store__table(g_tdb, "case.foo", 0, 0, &g_foo);
    return NULL;
}
static void table_hook(gsnap_db *db, int step) {
    (void)db;
    if (step != 1) return;
    pthread_t th;
    pthread_create(&th, NULL, open_foo, NULL);
    pthread_join(th, NULL);
}
struct kv { MDB_dbi dbi; const char *k; };
static int put_fn(gsnap_db *db, MDB_txn *txn, void *c) {
    (void)db;
    struct kv *x = c;
    MDB_val k = {strlen(x->k), (void *)x->k}, v = {1, "x"};
    return mdb_put(txn, x->dbi, &k, &v, 0);
}
static int has_key(gsnap_db *db, const char *table, const char *key) {
    MDB_dbi d;
    MDB_txn *t;
    OK(gsnap_store__table(db, table, 0, 0, &d));
    OK(gsnap_store__txn_begin(db, MDB_RDONLY, &t));
    MDB_val k = {strlen(key), (void *)key}, v;
    int found = mdb_get(t, d, &k, &v) == 0;
    mdb_txn_abort(t);
    gsnap_store__map_release(db);
    return found;
}
static void case_table_race(const char *dir) {
    gsnap_db *db = open_db(dir);
    MDB_dbi a, b;
    OK(gsnap_store__table(db, "case.foo", 0, 1, &a));
    OK(gsnap_store__table(db, "case.bar", 0, 1, &b));
    gsnap_db_close(db);
    g_tdb = db = open_db(dir); /* neither table known to this handle */
    gsnap_store__swap_hook = table_hook;
    OK(gsnap_db_shrink(db, NULL));
    gsnap_store__swap_hook = NULL;
    OK(g_foo_rc);
    MDB_dbi bar;
    OK(gsnap_store__table(db, "case.bar", 0, 0, &bar));
    CHECK_MSG(bar != g_foo, "case.foo and case.bar share handle %u after the swap", (unsigned)bar);
    struct kv x = {g_foo, "k"};
    OK(gsnap_store__write(db, put_fn, &x));
    gsnap_db_close(db);
    db = open_db(dir);
    CHECK_MSG(has_key(db, "case.foo", "k") && !has_key(db, "case.bar", "k"), "a put through case.foo's handle "
              "did not land in case.foo");
    gsnap_db_close(db);
}

/* Case 7: the oldest-reader scan (snapshot advance's) takes a map hold, so
 * shrinks in another thread never close the environment under it. */
static int g_scan_stop; /* atomic */
static void *scanner(void *a) {
    while (!__atomic_load_n(&g_scan_stop, __ATOMIC_RELAXED)) (void)gsnap_store__oldest_reader(a);
    return NULL;
}
static void case_scan_race(const char *dir, uint64_t *seed) {
    gsnap_db *db = open_db(dir);
    ingest(db, seed, 2, 500);
    pthread_t th;
    __atomic_store_n(&g_scan_stop, 0, __ATOMIC_RELAXED);
    pthread_create(&th, NULL, scanner, db);
    int shrunk = 0;
    /* 40 shrinks: plenty of overlap with the scans (150 took 0.7-5.4 s
     * here; a shrink may wait up to SWAP_WAIT_MS for the scanner's hold) */
    for (int i = 0; i < (test_small() ? 10 : 40); i++) shrunk += gsnap_db_shrink(db, NULL) == 0;
    __atomic_store_n(&g_scan_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    CHECK(shrunk > 0);
    gsnap_db_close(db);
}

/* static: the forked children of the cases _exit with it still reachable
 * (valgrind checks each child's heap at its exit) */
static char *dir;

/* The seconds each case took, in the log (the cases wait on each other's
 * threads and processes: which one is slow on a busy machine). */
static double g_t0;
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void case_done(const char *name) {
    double t = now_s();
    printf("case %s: %.2f s\n", name, t - g_t0);
    fflush(stdout);
    g_t0 = t;
}

int main(void) {
    g_t0 = now_s();
    dir = test_tmpdir("shrink");
    char sub[4096];
    uint64_t seed = 20261123;
    snprintf(sub, sizeof sub, "%s/a", dir);
    g_versions = 0;
    case_shrink(sub, &seed);
    case_done("shrink");
    snprintf(sub, sizeof sub, "%s/b", dir);
    g_versions = 0;
    case_refused(sub, &seed);
    case_done("refused");
    snprintf(sub, sizeof sub, "%s/c", dir);
    g_versions = 0;
    case_crash(sub, &seed);
    case_done("crash");
    snprintf(sub, sizeof sub, "%s/d", dir);
    g_versions = 0;
    case_threads(sub, &seed);
    case_done("threads");
    snprintf(sub, sizeof sub, "%s/e", dir);
    g_versions = 0;
    case_retention_race(sub, &seed);
    case_done("retention_race");
    snprintf(sub, sizeof sub, "%s/f", dir);
    g_versions = 0;
    case_table_race(sub);
    case_done("table_race");
    snprintf(sub, sizeof sub, "%s/g", dir);
    g_versions = 0;
    case_scan_race(sub, &seed);
    case_done("scan_race");
    if (!test_failures) test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
