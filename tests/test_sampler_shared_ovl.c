/* tests/test_sampler_shared_ovl.c -- PSCR on a shared image keeps what its
 * refresh batches write in a private, entry-granular overlay: after many
 * refresh batches the mapping of the published image has no private
 * (copy-on-write) page, and the batches and the cache checksum equal those
 * of a private-image run with the same seed (PSCR and PSCR-SC; a refresh by
 * hand folds the overlay back and stays equal too). */
#include "test.h"
#include <sys/stat.h>

#define N 3000
#define NB 30
static char *dbdir, *shmroot;

/* kB of "Anonymous:" (copy-on-write pages) over this process's mappings of
 * files whose name contains "gsnap-" and ".img"; -1 if none is mapped. */
static long image_anon_kb(void) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -2;
    char line[1024];
    int in = 0, any = 0;
    long kb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, ' ')) {
            in = strstr(line, "/gsnap-") && strstr(line, ".img");
            any |= in;
            continue;
        }
        long v;
        if (in && sscanf(line, "Anonymous: %ld kB", &v) == 1) kb += v;
    }
    fclose(f);
    return any ? kb : -1;
}

typedef struct {
    uint64_t h[NB + 1];
    uint64_t sum, sum_after;
    long anon;
    gsnap_sampler_stats st;
} result;

static void run(gsnap_sample_mode mode, const char *shm, int by_hand, result *r) {
    memset(r, 0, sizeof *r);
    gsnap_db *db;
    OK(gsnap_db_open(dbdir, NULL, &db));
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = mode;
    o.layers = 2;
    o.fanouts[0] = 5;
    o.fanouts[1] = 8;
    o.seed = 5;
    o.period = 1; /* every batch rewrites its frontier's entries */
    o.gamma = 0.4;
    o.shared = shm != NULL;
    o.shared_dir = shm;
    gsnap_sampler *s;
    OK(gsnap_sampler_open(db, NULL, &o, &s));
    const void *buf;
    size_t len;
    for (int b = 0; b < NB; b++) {
        OK(gsnap_sampler_next(s, NULL, 200, &buf, &len));
        r->h[b] = test_fnv(buf, len);
    }
    r->anon = image_anon_kb();
    r->sum = gsnap_sampler_cache_checksum(s);
    if (by_hand) { /* a whole-cache refresh on the overlaid image */
        OK(gsnap_sampler_refresh(s));
        OK(gsnap_sampler_next(s, NULL, 200, &buf, &len));
        r->h[NB] = test_fnv(buf, len);
        r->sum_after = gsnap_sampler_cache_checksum(s);
    }
    gsnap_sampler_stats_get(s, &r->st);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
}

static void check_mode(gsnap_sample_mode mode, int k) {
    char shm[600];
    snprintf(shm, sizeof shm, "%s/m%d", shmroot, k);
    mkdir(shm, 0700);
    result priv, sh;
    for (int by_hand = 0; by_hand < 2; by_hand++) {
        run(mode, NULL, by_hand, &priv);
        run(mode, shm, by_hand, &sh);
        const char *mn = gsnap_sample_mode_name(mode);
        CHECK_MSG(sh.st.shared_bytes > 0, "%s: no image mapped", mn);
        CHECK_MSG(sh.st.refreshed_entries > 1000, "%s: %llu entries refreshed", mn,
                  (unsigned long long)sh.st.refreshed_entries);
        CHECK_MSG(memcmp(priv.h, sh.h, sizeof priv.h) == 0, "%s: shared batches differ", mn);
        CHECK_MSG(priv.sum == sh.sum && priv.sum_after == sh.sum_after, "%s: cache checksums differ", mn);
        /* the published image's pages are never written: nothing copied on write */
        CHECK_MSG(sh.anon == 0, "%s: %ld kB of the mapped image copied on write", mn, sh.anon);
    }
}

int main(void) {
    dbdir = test_tmpdir("shovl-db");
    shmroot = test_tmpdir("shovl-shm");
    test_random_in_db(dbdir, N, 4, 40, 99);
    check_mode(GSNAP_MODE_PSCR, 0);
    check_mode(GSNAP_MODE_PSCR_SC, 1);
    test_rmdir(dbdir);
    test_rmdir(shmroot);
    free(dbdir);
    free(shmroot);
    TEST_DONE();
}
