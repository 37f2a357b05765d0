/* tests/test_sampler_workers_grow.c -- a sampler with worker threads keeps
 * producing batches while another thread's ingest grows the LMDB map.
 *
 * The main thread of a parallel round used to hold its read view while it
 * waited for the workers, and a worker beginning its own view waited at the
 * map gate behind the pending growth, which waited for the main thread's
 * view: a deadlock (found in review; it hung in about half the runs of 60
 * attempts of a store-level reproduction; tests/test_store_locks.c case 7
 * reproduces the store side deterministically). A watchdog turns a hang
 * into a failure. */
#include "test.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static atomic_int stop, commits;
static gsnap_db *g_db;
static atomic_int writer_rc;

static void on_alarm(int sig) {
    (void)sig;
    static const char m[] = "test_sampler_workers_grow: HANG: sampler workers against map growth\n";
    if (write(2, m, sizeof m - 1) < 0) {}
    _exit(1);
}

static void *writer(void *v) {
    uint64_t rng = (uint64_t)(uintptr_t)v;
    while (!atomic_load(&stop)) {
        gsnap_batch *b;
        int rc = gsnap_batch_begin(g_db, &b);
        for (int i = 0; rc == 0 && i < 8000; i++)
            rc = gsnap_batch_add(b, test_rand(&rng) % 5000, test_rand(&rng) % 1200, i);
        if (rc == 0) rc = gsnap_batch_commit(b, NULL);
        if (rc) {
            atomic_store(&writer_rc, rc);
            break;
        }
        atomic_fetch_add(&commits, 1);
    }
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    int attempts = test_small() ? 3 : 10, want = test_small() ? 8 : 16;
    for (int a = 0; a < attempts; a++) {
        char *dir = test_tmpdir("wgrow");
        gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
        dopts.sync = GSNAP_SYNC_NONE;
        dopts.map_size = (size_t)1 << 20; /* grows many times */
        OK(gsnap_db_open(dir, &dopts, &g_db));
        uint64_t rng = 31 + (uint64_t)a;
        gsnap_batch *b;
        OK(gsnap_batch_begin(g_db, &b));
        for (int i = 0; i < 3000; i++) OK(gsnap_batch_add(b, test_rand(&rng) % 1200, test_rand(&rng) % 1200, i));
        OK(gsnap_batch_commit(b, NULL));
        gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
        o.layers = 2;
        o.fanouts[0] = 4;
        o.fanouts[1] = 6;
        o.seed = 5;
        o.workers = 3;
        gsnap_sampler *s;
        OK(gsnap_sampler_open(g_db, NULL, &o, &s));
        atomic_store(&stop, 0);
        atomic_store(&commits, 0);
        atomic_store(&writer_rc, 0);
        pthread_t wt;
        CHECK(pthread_create(&wt, NULL, writer, (void *)(uintptr_t)(a + 1)) == 0);
        alarm(getenv("GSNAP_VALGRIND") ? 300 : 30);
        int i, rc = 0;
        for (i = 0; i < 20000 && atomic_load(&commits) < want; i++) {
            const void *buf;
            size_t len;
            if ((rc = gsnap_sampler_next(s, NULL, 64, &buf, &len))) break;
        }
        atomic_store(&stop, 1);
        pthread_join(wt, NULL);
        alarm(0);
        CHECK_MSG(rc == 0, "batch %d: %d (%s)", i, rc, gsnap_db_errmsg(g_db));
        CHECK_MSG(atomic_load(&writer_rc) == 0, "ingest: %d (%s)", atomic_load(&writer_rc), gsnap_db_errmsg(g_db));
        gsnap_db_stat st;
        OK(gsnap_db_stats(g_db, &st));
        CHECK_MSG(st.map_size > dopts.map_size, "the map never grew (%llu bytes)", (unsigned long long)st.map_size);
        gsnap_sampler_close(s);
        gsnap_db_close(g_db);
        test_rmdir(dir);
        free(dir);
    }
    TEST_DONE();
}
