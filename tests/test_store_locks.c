/*
 * tests/test_store_locks.c -- map growth against read views: no deadlock.
 *
 * mdb_env_set_mapsize needs every txn of the process ended, so map growth
 * waits for the process's read views. These cases once deadlocked (a
 * watchdog ends the test with a message naming the step that hung):
 *  1. thread A holds a read view and starts a write while thread B's write,
 *     holding the write lock, needs the map to grow;
 *  2. thread A holds a read view and opens a second one while B waits to
 *     grow the map (a writer-preferring lock held the second view back);
 *  3. a thread holds a read view after another process grew the map past
 *     this process's map, and opens another view or writes;
 * and these must keep working:
 *  4. a thread whose own write needs growth while it holds a read view gets
 *     GSNAP_EBUSY with a message, nothing committed, and succeeds once the
 *     view is ended;
 *  5. a writer needing several growths is not starved by threads that keep
 *     opening short views, while another thread writes under a view;
 *  7. a thread holds a read view and waits for another thread that begins
 *     one (the sampler's main thread waits for its workers so) while a third
 *     thread's write waits to grow the map;
 *  6. a growth the address space cannot hold (RLIMIT_AS) fails with
 *     GSNAP_ENOMEM and leaves the map as it was (LMDB unmaps the file before
 *     it maps the new length: a failure there would leave no map at all).
 */
#include "test.h"
#include "store/store_int.h"
#include <lmdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define MAP0 ((size_t)256 << 10) /* initial map: 64 pages */
#define VAL 32768                /* value size of the big writes */

/* ---- watchdog -------------------------------------------------------------- */

static const char *volatile step = "start";

static void on_alarm(int sig) {
    (void)sig;
    const char *s = step;
    static const char pre[] = "test_store_locks: DEADLOCK: step '";
    static const char post[] = "' did not finish in time\n";
    if (write(2, pre, sizeof pre - 1) < 0 || write(2, s, strlen(s)) < 0 || write(2, post, sizeof post - 1) < 0) {}
    _exit(1);
}

/* Start a step: it must end within a few seconds (more under valgrind). */
static void watch(const char *what) {
    step = what;
    alarm(getenv("GSNAP_VALGRIND") ? 120 : 10);
}

static void ms_sleep(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the writes ------------------------------------------------------------ */

typedef struct {
    MDB_dbi dbi;
    unsigned first, n;   /* keys first .. first+n-1 */
    size_t size;         /* value bytes */
    atomic_int calls;    /* times fn ran (retries after growth count) */
    pthread_mutex_t mu;  /* in_fn / go, for the other thread */
    pthread_cond_t cv;
    int in_fn;
} put_ctx;

static void put_init(put_ctx *c, MDB_dbi dbi, unsigned first, unsigned n, size_t size) {
    memset(c, 0, sizeof *c);
    c->dbi = dbi;
    c->first = first;
    c->n = n;
    c->size = size;
    atomic_init(&c->calls, 0);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
}

static void put_free(put_ctx *c) {
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
}

/* Keys are 4-byte big-endian numbers; value bytes derive from the key. */
static int put_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    put_ctx *c = vctx;
    atomic_fetch_add(&c->calls, 1);
    pthread_mutex_lock(&c->mu);
    c->in_fn = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = c->first; i < c->first + c->n; i++) {
        unsigned char k[4] = {(unsigned char)(i >> 24), (unsigned char)(i >> 16), (unsigned char)(i >> 8),
                              (unsigned char)i};
        MDB_val key = {4, k}, val = {c->size, NULL};
        int rc = mdb_put(txn, c->dbi, &key, &val, MDB_RESERVE);
        if (rc) return gsnap_store__mdb_err(db, rc, "test put");
        memset(val.mv_data, (int)(i & 0xff), c->size);
    }
    return 0;
}

static void wait_in_fn(put_ctx *c) {
    pthread_mutex_lock(&c->mu);
    while (!c->in_fn) pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

/* Key i is there with its value (size bytes of i & 0xff). */
static int has_key(gsnap_db *db, MDB_dbi dbi, unsigned i, size_t size) {
    gsnap_read *rd = NULL;
    if (gsnap_read_begin(db, &rd)) return 0;
    unsigned char k[4] = {(unsigned char)(i >> 24), (unsigned char)(i >> 16), (unsigned char)(i >> 8),
                          (unsigned char)i};
    MDB_val key = {4, k}, val;
    int ok = mdb_get(gsnap_read__txn(rd), dbi, &key, &val) == 0 && val.mv_size == size;
    for (size_t j = 0; ok && j < size; j++) ok = ((const unsigned char *)val.mv_data)[j] == (i & 0xff);
    gsnap_read_end(rd);
    return ok;
}

static uint64_t map_size(gsnap_db *db) {
    gsnap_db_stat st;
    OK(gsnap_db_stats(db, &st));
    return st.map_size;
}

static gsnap_db *open_small(const char *dir, MDB_dbi *dbi) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.map_size = MAP0;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *db = NULL;
    OK(gsnap_db_open(dir, &o, &db));
    if (dbi) OK(gsnap_store__table(db, "locktest", 0, 1, dbi));
    return db;
}

/* enough 32 KiB values to need three doublings of a 256 KiB map */
static unsigned big_n(void) { return 48; }

/* ---- 1 and 2: a read view in one thread, growth in another ---------------- */

typedef struct {
    gsnap_db *db;
    put_ctx *c;
    atomic_int rc; /* -1 while the write runs */
} writer_arg;

static void *writer_main(void *v) {
    writer_arg *a = v;
    atomic_store(&a->rc, gsnap_store__write(a->db, put_fn, a->c));
    return NULL;
}

static void view_then_write(void) {
    char *dir = test_tmpdir("locks1");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    put_ctx big, small;
    put_init(&big, dbi, 0, big_n(), VAL);
    put_init(&small, dbi, 1000, 1, 64);
    watch("1: a view's write while another thread's write grows the map");
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    writer_arg wa = {db, &big, -1};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, writer_main, &wa) == 0);
    wait_in_fn(&big); /* B holds the write lock; its txn will hit MDB_MAP_FULL */
    int rc = gsnap_store__write(db, put_fn, &small);
    CHECK_MSG(rc == 0, "the small write under a view: %d (%s)", rc, gsnap_db_errmsg(db));
    gsnap_read_end(rd);
    pthread_join(th, NULL);
    alarm(0);
    CHECK_MSG(atomic_load(&wa.rc) == 0, "the growing write: %d", atomic_load(&wa.rc));
    CHECK(atomic_load(&big.calls) > 1); /* it was retried after growth */
    CHECK(map_size(db) > MAP0);
    int all = 1;
    for (unsigned i = 0; i < big_n(); i++) all &= has_key(db, dbi, i, VAL);
    CHECK(all);
    CHECK(has_key(db, dbi, 1000, 64));
    put_free(&big);
    put_free(&small);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

static void view_then_view(void) {
    char *dir = test_tmpdir("locks2");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    put_ctx big;
    put_init(&big, dbi, 0, big_n(), VAL);
    watch("2: a second view while another thread waits to grow the map");
    gsnap_read *rd = NULL, *rd2 = NULL;
    OK(gsnap_read_begin(db, &rd));
    writer_arg wa = {db, &big, -1};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, writer_main, &wa) == 0);
    wait_in_fn(&big);
    /* wait until B waits for the views to end (at most 2 s) */
    for (int i = 0; i < 2000 && !gsnap_store__remap_pending(db); i++) ms_sleep(1);
    CHECK(gsnap_store__remap_pending(db));
    OK(gsnap_read_begin(db, &rd2)); /* nested: must not wait for the growth */
    uint64_t v = 0;
    OK(gsnap_db_version(db, &v));   /* a short txn in the same thread, too */
    CHECK(gsnap_read_version(rd2) == v);
    gsnap_read_end(rd2);
    CHECK(atomic_load(&wa.rc) == -1); /* still waiting: this thread holds a view */
    gsnap_read_end(rd);
    pthread_join(th, NULL);
    alarm(0);
    CHECK_MSG(atomic_load(&wa.rc) == 0, "the growing write: %d", atomic_load(&wa.rc));
    CHECK(!gsnap_store__remap_pending(db));
    CHECK(map_size(db) > MAP0);
    CHECK(has_key(db, dbi, big_n() - 1, VAL));
    put_free(&big);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* ---- 3: another process grows the map under this thread's view ---------- */

static void grow_elsewhere(void) {
    char *dir = test_tmpdir("locks3");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    gsnap_db_close(db);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pid = fork();
    if (pid == 0) { /* child: waits for the parent's view, then grows the map */
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 1) _exit(2);
        MDB_dbi d;
        gsnap_db *cdb = open_small(dir, &d);
        put_ctx big;
        put_init(&big, d, 0, big_n(), VAL);
        int rc = gsnap_store__write(cdb, put_fn, &big);
        put_free(&big);
        gsnap_db_close(cdb);
        free(dir); /* (valgrind checks the child's leaks too) */
        _exit(rc == 0 ? 0 : 3);
    }
    close(go[0]);
    db = open_small(dir, &dbi);
    watch("3: a view held while another process grows the map");
    gsnap_read *rd = NULL, *rd2 = NULL;
    OK(gsnap_read_begin(db, &rd));
    CHECK(write(go[1], "g", 1) == 1);
    close(go[1]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the file now holds more than this process maps: a new txn must adopt
     * the size, which cannot happen while this thread holds a view */
    int rc = gsnap_read_begin(db, &rd2);
    CHECK_MSG(rc == GSNAP_EBUSY && rd2 == NULL, "nested view after growth elsewhere: %d", rc);
    CHECK_MSG(strstr(gsnap_db_errmsg(db), "read view") != NULL, "message: %s", gsnap_db_errmsg(db));
    put_ctx small;
    put_init(&small, dbi, 1000, 1, 64);
    rc = gsnap_store__write(db, put_fn, &small);
    CHECK_MSG(rc == GSNAP_EBUSY, "write under a view after growth elsewhere: %d", rc);
    MDB_stat ms; /* the old view still reads, and sees none of the child's keys */
    CHECK(mdb_stat(gsnap_read__txn(rd), dbi, &ms) == 0 && ms.ms_entries == 0);
    gsnap_read_end(rd);
    /* views ended: the size is adopted */
    OK(gsnap_store__write(db, put_fn, &small));
    alarm(0);
    CHECK(map_size(db) > MAP0);
    CHECK(has_key(db, dbi, big_n() - 1, VAL));
    CHECK(has_key(db, dbi, 1000, 64));
    put_free(&small);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* ---- 4: a thread's own write needs growth while it holds a view ---------- */

static void own_view(void) {
    char *dir = test_tmpdir("locks4");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    put_ctx big;
    put_init(&big, dbi, 0, big_n(), VAL);
    watch("4: a write needing growth under the thread's own view");
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    int rc = gsnap_store__write(db, put_fn, &big);
    CHECK_MSG(rc == GSNAP_EBUSY, "got %d", rc);
    CHECK_MSG(strstr(gsnap_db_errmsg(db), "read view") != NULL, "message: %s", gsnap_db_errmsg(db));
    gsnap_read_end(rd);
    CHECK(!has_key(db, dbi, 0, VAL)); /* nothing of it committed */
    OK(gsnap_store__write(db, put_fn, &big));
    alarm(0);
    CHECK(has_key(db, dbi, big_n() - 1, VAL));
    put_free(&big);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* ---- 5: growth is not starved; writes under views go on ------------------ */

typedef struct {
    gsnap_db *db;
    MDB_dbi dbi;
    atomic_int *stop;
    unsigned id;
    long views, writes, busy;
    int bad;
} churn_arg;

/* Short views in a loop; thread id 0 also writes a small key under each. */
static void *churn_main(void *v) {
    churn_arg *a = v;
    put_ctx c;
    put_init(&c, a->dbi, 2000 + a->id, 1, 64);
    while (!atomic_load(a->stop)) {
        gsnap_read *rd = NULL;
        int rc = gsnap_read_begin(a->db, &rd);
        if (rc) { a->bad++; break; }
        MDB_stat ms;
        if (mdb_stat(gsnap_read__txn(rd), a->dbi, &ms)) a->bad++;
        if (a->id == 0) {
            rc = gsnap_store__write(a->db, put_fn, &c);
            if (rc == 0) a->writes++;
            else if (rc == GSNAP_EBUSY) a->busy++; /* its write needed growth */
            else a->bad++;
        }
        gsnap_read_end(rd);
        a->views++;
    }
    put_free(&c);
    return NULL;
}

static void no_starvation(void) {
    char *dir = test_tmpdir("locks5");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    atomic_int stop;
    atomic_init(&stop, 0);
    enum { NT = 3 };
    churn_arg ca[NT];
    pthread_t th[NT];
    watch("5: a growing writer among threads opening views");
    for (unsigned t = 0; t < NT; t++) {
        ca[t] = (churn_arg){db, dbi, &stop, t, 0, 0, 0, 0};
        CHECK(pthread_create(&th[t], NULL, churn_main, &ca[t]) == 0);
    }
    unsigned rounds = test_small() ? 2 : 4;
    for (unsigned r = 0; r < rounds; r++) {
        put_ctx big;
        put_init(&big, dbi, r * 100, big_n(), VAL);
        OK(gsnap_store__write(db, put_fn, &big));
        put_free(&big);
    }
    atomic_store(&stop, 1);
    long views = 0;
    for (unsigned t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(ca[t].bad == 0, "thread %u: %d failures", t, ca[t].bad);
        views += ca[t].views;
    }
    alarm(0);
    printf("5: %u growing writes among %ld views; the writer under views: %ld writes, %ld EBUSY\n", rounds,
           views, ca[0].writes, ca[0].busy);
    CHECK(map_size(db) >= (uint64_t)MAP0 * 8);
    int all = 1;
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned i = 0; i < big_n(); i++) all &= has_key(db, dbi, r * 100 + i, VAL);
    CHECK(all);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

/* ---- 6: growth the address space cannot hold leaves the map intact ------ */

static size_t vm_size(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* In a child: RLIMIT_AS just above what the process maps, so doubling the
 * map is refused: the write fails with GSNAP_ENOMEM and a message, earlier
 * keys still read, and once the limit is raised the same write succeeds.
 * Exit status: 0 ok, else the failed step. */
static int refused_child(const char *dir) {
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    struct rlimit old, lim;
    if (getrlimit(RLIMIT_AS, &old)) return 2;
    lim = old;
    lim.rlim_cur = vm_size() + (384u << 10); /* < the 512 KiB a doubled map needs */
    if (setrlimit(RLIMIT_AS, &lim)) return 3;
    unsigned i = 0;
    int rc = 0;
    for (; i < 64 && rc == 0; i++) { /* one value per write until growth is due */
        put_ctx c;
        put_init(&c, dbi, i, 1, VAL);
        rc = gsnap_store__write(db, put_fn, &c);
        put_free(&c);
    }
    if (rc != GSNAP_ENOMEM || !strstr(gsnap_db_errmsg(db), "refused") || map_size(db) != MAP0) return 4;
    setrlimit(RLIMIT_AS, &old);
    for (unsigned j = 0; j + 1 < i; j++)
        if (!has_key(db, dbi, j, VAL)) return 5;
    put_ctx c;
    put_init(&c, dbi, i - 1, 1, VAL);
    rc = gsnap_store__write(db, put_fn, &c);
    put_free(&c);
    if (rc || !has_key(db, dbi, i - 1, VAL) || map_size(db) <= MAP0) return 6;
    gsnap_db_close(db);
    return 0;
}

static void growth_refused(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("6: skipped (a sanitizer's allocator does not run under RLIMIT_AS)\n");
    return;
#endif
    if (getenv("GSNAP_VALGRIND")) {
        printf("6: skipped under valgrind (its own mappings)\n");
        return;
    }
    char *dir = test_tmpdir("locks6");
    watch("6: growth refused by the address space limit");
    pid_t pid = fork();
    if (pid == 0) _exit(refused_child(dir));
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    alarm(0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed at step %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    test_rmdir(dir);
    free(dir);
}

/* ---- 7: a view's holder waits for a thread that begins a view --------------- */

static gsnap_db *view_db;
static atomic_int view_rc;

static void *view_main(void *v) {
    (void)v;
    gsnap_read *rd = NULL;
    int rc = gsnap_read_begin(view_db, &rd);
    if (rc == 0) gsnap_read_end(rd);
    atomic_store(&view_rc, rc);
    return NULL;
}

static void view_waits_for_view(void) {
    char *dir = test_tmpdir("locks7");
    MDB_dbi dbi;
    gsnap_db *db = open_small(dir, &dbi);
    put_ctx big;
    put_init(&big, dbi, 0, big_n(), VAL);
    watch("7: a view's holder waits for a thread that begins a view while the map must grow");
    gsnap_read *rd = NULL;
    OK(gsnap_read_begin(db, &rd));
    writer_arg wa = {db, &big, -1};
    pthread_t th, vt;
    CHECK(pthread_create(&th, NULL, writer_main, &wa) == 0);
    for (int i = 0; i < 2000 && !gsnap_store__remap_pending(db); i++) ms_sleep(1);
    CHECK(gsnap_store__remap_pending(db));
    view_db = db;
    atomic_store(&view_rc, -1);
    CHECK(pthread_create(&vt, NULL, view_main, NULL) == 0);
    pthread_join(vt, NULL); /* this thread holds a view meanwhile */
    CHECK_MSG(atomic_load(&view_rc) == 0, "the other thread's view: %d", atomic_load(&view_rc));
    gsnap_read_end(rd);
    pthread_join(th, NULL);
    alarm(0);
    CHECK_MSG(atomic_load(&wa.rc) == 0, "the growing write: %d (%s)", atomic_load(&wa.rc), gsnap_db_errmsg(db));
    CHECK(map_size(db) > MAP0);
    CHECK(has_key(db, dbi, big_n() - 1, VAL));
    put_free(&big);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    view_then_write();
    view_then_view();
    grow_elsewhere();
    own_view();
    no_starvation();
    growth_refused();
    view_waits_for_view();
    TEST_DONE();
}
