/* tests/test_sampler_refresh.c -- atomic OTF refresh. Samplers run while
 * refreshes commit (a thread, a separate process, a background refresh of
 * the sampler itself); every batch must come from exactly one generation:
 * the checksum of the cache image a batch was served from equals the
 * checksum the refresher recorded for that generation. A refresher killed
 * inside its write transaction leaves the previous generation intact. */
#include "test.h"
#include <stdatomic.h>
#include "sampler/sampler_int.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#define N 2000
#define MAXGEN 4096
static uint64_t rng = 4242;
static char *dir;
static uint64_t rec_cks[MAXGEN];
static int rec_set[MAXGEN];
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int refresher_done; /* written by the refresher thread, read by the sampling one */
static int refreshes = 30;

static gsnap_sampler_options opts(void) {
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FSCR;
    o.layers = 2;
    o.fanouts[0] = 5;
    o.fanouts[1] = 5;
    o.gamma = 0.5;
    o.seed = 11;
    return o;
}

static gsnap_db *open_db(void) {
    gsnap_db_options d = GSNAP_DB_OPTIONS_INIT;
    d.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &d, &db));
    return db;
}

static void record(uint64_t gen, uint64_t cks) {
    pthread_mutex_lock(&rec_lock);
    if (gen < MAXGEN) { rec_cks[gen] = cks; rec_set[gen] = 1; }
    pthread_mutex_unlock(&rec_lock);
}

static void *refresher(void *arg) {
    gsnap_db *db = arg;
    gsnap_sampler_options o = opts();
    gsnap_sampler *r;
    OK(gsnap_sampler_open(db, "s", &o, &r));
    for (int i = 0; i < refreshes; i++) {
        OK(gsnap_sampler_refresh(r));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(r, &st);
        record(st.generation, gsnap_sampler_cache_checksum(r));
    }
    gsnap_sampler_close(r);
    refresher_done = 1;
    return NULL;
}

typedef struct { uint64_t gen, cks; } obs;

/* Sample until *done, then a few more batches; observations into o[]. */
static size_t sample_until(gsnap_sampler *s, atomic_int *done, int (*poll)(void), obs *o,
                           size_t cap) {
    size_t n = 0;
    int extra = 3;
    uint64_t seeds[32];
    while (n < cap && extra > 0) {
        if (*done || (poll && poll())) extra--;
        OK(gsnap_sampler_random_seeds(s, n, 32, seeds));
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(s, seeds, 32, &buf, &len));
        CHECK(gsnap_block_check(buf, len) == 0);
        uint64_t g;
        OK(gsnap_block_info(buf, len, NULL, &g, NULL));
        gsnap_sampler_stats st;
        gsnap_sampler_stats_get(s, &st);
        CHECK(st.generation == g);
        o[n].gen = g;
        o[n].cks = gsnap_sampler_cache_checksum(s);
        n++;
    }
    return n;
}

/* Every observation matches the recorded checksum of its generation. */
static void verify(const obs *o, size_t n, const char *what) {
    size_t mism = 0, unknown = 0, gens = 0;
    uint64_t last = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (o[i].gen >= MAXGEN || !rec_set[o[i].gen]) { unknown++; continue; }
        if (rec_cks[o[i].gen] != o[i].cks) mism++;
        if (o[i].gen != last) { gens++; last = o[i].gen; }
    }
    printf("%s: %zu batches, %zu generation switches seen, %zu mixed, %zu unknown\n", what, n,
           gens, mism, unknown);
    CHECK(mism == 0 && unknown == 0);
    CHECK(gens >= 2);
}

static int child_pid;
static int child_exited(void) {
    int st;
    return waitpid(child_pid, &st, WNOHANG) == child_pid ? (child_pid = -1, 1) : 0;
}

static int hook_fd = -1;
static void stall_hook(void) {
    if (write(hook_fd, "x", 1) != 1) _exit(3);
    sleep(60);
    _exit(4);
}

int main(void) {
    if (test_small()) refreshes = 6;
    dir = test_tmpdir("samp-refresh");
    gsnap_db *db = open_db();
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < N; v++) {
        uint64_t d = v < 50 ? 40 + test_rand(&rng) % 100 : test_rand(&rng) % 20;
        for (uint64_t i = 0; i < d; i++) OK(gsnap_batch_add(b, test_rand(&rng) % N, v, 1));
    }
    OK(gsnap_batch_commit(b, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hops = 2;
    so.fanouts[0] = 5;
    so.fanouts[1] = 5;
    OK(gsnap_snapshot_create(db, "s", &so, NULL));
    gsnap_sampler_options o = opts();
    gsnap_sampler *s;
    OK(gsnap_sampler_open(db, "s", &o, &s));
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    record(st.generation, gsnap_sampler_cache_checksum(s));
    size_t cap = 200000;
    obs *ob = malloc(cap * sizeof *ob);

    /* 1. a refresher thread */
    pthread_t th;
    refresher_done = 0;
    pthread_create(&th, NULL, refresher, db);
    size_t n = sample_until(s, &refresher_done, NULL, ob, cap);
    pthread_join(th, NULL);
    verify(ob, n, "refresher thread");

    /* 2. the sampler's own background refresh */
    gsnap_sampler_stats_get(s, &st);
    uint64_t g0 = st.generation;
    OK(gsnap_sampler_refresh_async(s));
    CHECK(gsnap_sampler_refresh_async(s) == GSNAP_EBUSY);
    uint64_t seed = 1;
    const void *buf;
    size_t len;
    for (int i = 0; i < 5; i++) {
        OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
        uint64_t g;
        OK(gsnap_block_info(buf, len, NULL, &g, NULL));
        CHECK(g == g0 || g == g0 + 1);
    }
    OK(gsnap_sampler_refresh_wait(s));
    OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.generation == g0 + 1);
    /* a second one reuses the previous image */
    OK(gsnap_sampler_refresh_async(s));
    OK(gsnap_sampler_refresh_wait(s));
    g0++;
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.generation == g0 + 1);
    {
        gsnap_sampler *c;
        OK(gsnap_sampler_open(db, "s", &o, &c));
        CHECK(gsnap_sampler_cache_checksum(c) == gsnap_sampler_cache_checksum(s));
        record(g0 + 1, gsnap_sampler_cache_checksum(c));
        gsnap_sampler_close(c);
    }
    gsnap_sampler_close(s);
    gsnap_db_close(db);

    /* 3. a refresher process: it reports (generation, checksum) on a pipe */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    fflush(NULL);
    child_pid = fork();
    if (child_pid == 0) {
        close(pfd[0]);
        gsnap_db *cdb = open_db();
        gsnap_sampler *r;
        OK(gsnap_sampler_open(cdb, "s", &o, &r));
        for (int i = 0; i < refreshes; i++) {
            OK(gsnap_sampler_refresh(r));
            gsnap_sampler_stats cs;
            gsnap_sampler_stats_get(r, &cs);
            uint64_t pair[2] = {cs.generation, gsnap_sampler_cache_checksum(r)};
            if (write(pfd[1], pair, sizeof pair) != sizeof pair) _exit(2);
        }
        gsnap_sampler_close(r);
        gsnap_db_close(cdb);
        _exit(0);
    }
    close(pfd[1]);
    db = open_db();
    OK(gsnap_sampler_open(db, "s", &o, &s));
    atomic_int never = 0;
    n = sample_until(s, &never, child_exited, ob, cap);
    if (child_pid > 0) waitpid(child_pid, NULL, 0);
    uint64_t pair[2];
    while (read(pfd[0], pair, sizeof pair) == sizeof pair) record(pair[0], pair[1]);
    close(pfd[0]);
    verify(ob, n, "refresher process");
    gsnap_sampler_stats_get(s, &st);
    uint64_t gen_before = st.generation;
    OK(gsnap_sampler_next(s, &seed, 1, &buf, &len));
    gsnap_sampler_stats_get(s, &st);
    gen_before = st.generation;
    uint64_t cks_before = gsnap_sampler_cache_checksum(s);
    gsnap_sampler_close(s);
    gsnap_db_close(db);

    /* 4. kill the refresher inside its write transaction */
    CHECK(pipe(pfd) == 0);
    fflush(NULL);
    child_pid = fork();
    if (child_pid == 0) {
        close(pfd[0]);
        hook_fd = pfd[1];
        gsnap_samp__in_txn_hook = stall_hook;
        gsnap_db *cdb = open_db();
        gsnap_sampler *r;
        OK(gsnap_sampler_open(cdb, "s", &o, &r));
        gsnap_sampler_refresh(r); /* stalls in the hook */
        _exit(5);
    }
    close(pfd[1]);
    char x;
    CHECK(read(pfd[0], &x, 1) == 1);
    kill(child_pid, SIGKILL);
    int wst;
    waitpid(child_pid, &wst, 0);
    CHECK(WIFSIGNALED(wst));
    close(pfd[0]);
    db = open_db();
    OK(gsnap_sampler_open(db, "s", &o, &s));
    gsnap_sampler_stats_get(s, &st);
    CHECK_MSG(st.generation == gen_before, "generation %llu after the kill, %llu before",
              (unsigned long long)st.generation, (unsigned long long)gen_before);
    CHECK(gsnap_sampler_cache_checksum(s) == cks_before);
    OK(gsnap_sampler_refresh(s)); /* the write lock of the dead writer is recovered */
    gsnap_sampler_stats_get(s, &st);
    CHECK(st.generation == gen_before + 1);
    printf("killed refresher: generation %llu intact, next refresh committed %llu\n",
           (unsigned long long)gen_before, (unsigned long long)st.generation);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    free(ob);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
