/* tests/test_sampler_shared.c -- the shared host tier (options.shared):
 * two processes (fork) sampling from one published image produce exactly
 * the batches of a private-image run with the same seed, in several modes
 * (whole generations shared and switched: FCR, FCR-SC, FSCR-SC; the opened
 * image plus a copy-on-write overlay: PSCR, FSCR with the miss-driven
 * refresh policy; on a snapshot: FCR); both map
 * an image (shared_bytes > 0) and one image per generation is published. A
 * damaged image (a flipped payload byte, truncated to half, shorter than its
 * header, bad magic, an out-of-range id under valid checksums) is refused,
 * rebuilt and published anew, never crashes, and the batches stay the same.
 * A sampler a period behind another maps each generation the other
 * published instead of refreshing, with the same batches. */
#include "test.h"
#include "sampler/shared_int.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define N 1200
#define MAXB 40
static char *dbdir, *shmroot;
static int nbatch;

static void build_db(void) {
    gsnap_db_options dopts = GSNAP_DB_OPTIONS_INIT;
    dopts.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dbdir, &dopts, &db));
    uint64_t rng = 4242;
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t v = 0; v < N; v++) {
        uint64_t d = v < 30 ? 60 + test_rand(&rng) % 100 : test_rand(&rng) % 12;
        for (uint64_t i = 0; i < d; i++) OK(gsnap_batch_add(b, test_rand(&rng) % N, v, (int64_t)i));
    }
    uint64_t ver;
    OK(gsnap_batch_commit(b, &ver));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hops = 2;
    so.fanouts[0] = 6;
    so.fanouts[1] = 4;
    so.alpha = 2;
    OK(gsnap_snapshot_create(db, "s1", &so, NULL));
    gsnap_db_close(db);
}

typedef struct {
    gsnap_sample_mode mode;
    uint32_t period;
    const char *snap;
    gsnap_refresh_policy policy; /* adaptive refresh: only the opened image is shared */
    int uncached_mid;            /* fanouts 4,-1,6: the middle hop has a cache of capacity 0 */
} scase;

typedef struct {
    uint64_t h[MAXB];
    gsnap_sampler_stats st;
    int rc;
} run_out;

/* Open the db, sample nbatch batches of 48 random seeds, hash each one. */
static void run(const scase *c, const char *shm, run_out *out) {
    memset(out, 0, sizeof *out);
    gsnap_db *db;
    if ((out->rc = gsnap_db_open(dbdir, NULL, &db))) return;
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = c->mode;
    o.layers = c->uncached_mid ? 3 : 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 6;
    if (c->uncached_mid) {
        o.fanouts[1] = -1;
        o.fanouts[2] = 6;
    }
    o.seed = 11;
    o.period = c->period;
    o.gamma = 0.3;
    o.policy = c->policy;
    o.shared = shm != NULL;
    o.shared_dir = shm;
    gsnap_sampler *s = NULL;
    if ((out->rc = gsnap_sampler_open(db, c->snap, &o, &s))) goto done;
    for (int b = 0; b < nbatch && !out->rc; b++) {
        const void *buf;
        size_t len;
        out->rc = gsnap_sampler_next(s, NULL, 48, &buf, &len);
        if (!out->rc) out->h[b] = test_fnv(buf, len);
    }
    gsnap_sampler_stats_get(s, &out->st);
done:
    gsnap_sampler_close(s);
    gsnap_db_close(db);
}

/* Two children run c on shm at once; their results in out[0], out[1]. */
static void run_two(const scase *c, const char *shm, run_out out[2]) {
    int fd[2][2];
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        if (pipe(fd[k])) exit(1);
        if ((pid[k] = fork()) == 0) {
            run_out r;
            run(c, shm, &r);
            ssize_t w = write(fd[k][1], &r, sizeof r);
            _exit(w == (ssize_t)sizeof r ? 0 : 1);
        }
        close(fd[k][1]);
    }
    for (int k = 0; k < 2; k++) {
        size_t got = 0;
        ssize_t n;
        while (got < sizeof out[k] && (n = read(fd[k][0], (char *)&out[k] + got, sizeof out[k] - got)) > 0)
            got += (size_t)n;
        close(fd[k][0]);
        int status = 0;
        waitpid(pid[k], &status, 0);
        CHECK_MSG(got == sizeof out[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %d of mode %s", k, gsnap_sample_mode_name(c->mode));
    }
}

static int same(const run_out *a, const run_out *b) {
    return a->rc == 0 && b->rc == 0 && memcmp(a->h, b->h, sizeof a->h) == 0;
}

/* Name of the published image of generation 0 in dir (first found). */
static int find_g0(const char *dir, char *path, size_t n) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (!found && strstr(e->d_name, "-g0.img") && !strstr(e->d_name, ".tmp")) {
            snprintf(path, n, "%s/%s", dir, e->d_name);
            found = 1;
        }
    if (d) closedir(d);
    return found;
}

static int count_images(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".img") != NULL;
    if (d) closedir(d);
    return n;
}

static void test_two_processes(const scase *c, int k) {
    char shm[600];
    snprintf(shm, sizeof shm, "%s/c%d", shmroot, k);
    mkdir(shm, 0700);
    run_out priv, sh[2];
    run(c, NULL, &priv);
    OK(priv.rc);
    CHECK(priv.st.shared_bytes == 0);
    run_two(c, shm, sh);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(same(&priv, &sh[i]), "mode %s period %u snap %s: process %d's batches differ (rc %d)",
                  gsnap_sample_mode_name(c->mode), c->period, c->snap ? c->snap : "-", i, sh[i].rc);
        CHECK(sh[i].st.shared_bytes > 0);
        CHECK(sh[i].st.shared_refused == 0);
        CHECK(sh[i].st.shared_attached >= 1);
    }
    uint64_t pub = sh[0].st.shared_published + sh[1].st.shared_published;
    uint64_t gens = c->mode == GSNAP_MODE_PSCR || c->policy != GSNAP_REFRESH_FIXED || !c->period
                        ? 1 : 1 + (uint64_t)(nbatch - 1) / c->period;
    /* each generation published once, or twice when both raced to it */
    CHECK_MSG(pub >= gens && pub <= 2 * gens, "published %llu for %llu generations",
              (unsigned long long)pub, (unsigned long long)gens);
    CHECK_MSG(count_images(shm) >= 1 && count_images(shm) <= 2, "%d images", count_images(shm));
}

/* Damage the published generation-0 image of c in shm, then a shared run
 * must refuse it, equal the private run and publish a good one again. */
static void damage(const char *path, int how) {
    int fd = open(path, O_RDWR);
    if (fd < 0) { CHECK(!"open image"); return; }
    struct stat st;
    fstat(fd, &st);
    gsnap_samp__shm_hdr h;
    CHECK(pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    if (how == 0) { /* flip one payload byte */
        unsigned char b;
        off_t at = st.st_size - 4097;
        CHECK(pread(fd, &b, 1, at) == 1);
        b ^= 0x5a;
        CHECK(pwrite(fd, &b, 1, at) == 1);
    } else if (how == 1) {
        CHECK(ftruncate(fd, st.st_size / 2) == 0);
    } else if (how == 2) {
        CHECK(ftruncate(fd, 100) == 0);
    } else if (how == 3) {
        h.magic ^= 1;
        CHECK(pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    } else { /* an id beyond the node bound, with both checksums made valid */
        unsigned char *m = malloc((size_t)st.st_size);
        CHECK(pread(fd, m, (size_t)st.st_size, 0) == st.st_size);
        uint64_t off = 4096 + ((h.nnodes * 4 + 4095) & ~4095ull) * 2 + ((h.nnodes * 8 + 4095) & ~4095ull);
        uint64_t bad = h.nnodes + 5; /* first id of cache 0 (node 0 holds neighbours) */
        memcpy(m + off, &bad, 8);
        h.payload_sum = XXH3_64bits(m + 4096, (size_t)st.st_size - 4096);
        h.hdr_sum = 0;
        h.hdr_sum = XXH3_64bits(&h, sizeof h);
        CHECK(pwrite(fd, m + 4096, (size_t)st.st_size - 4096, 4096) == st.st_size - 4096);
        CHECK(pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
        free(m);
    }
    close(fd);
}

/* Byte offset of array `which` (0 cnt, 3 serving view) of cache i in an
 * image of this header (the layout of docs/format.md). */
static uint64_t img_off(const gsnap_samp__shm_hdr *h, unsigned i, int which) {
    uint64_t nn = h->nnodes, off = 4096 + ((nn * 4 + 4095) & ~4095ull);
    for (unsigned k = 0;; k++) {
        uint64_t cap = h->caps[k];
        if (k == i && which == 0) return off;
        off += ((nn * 4 + 4095) & ~4095ull) + ((nn * 8 + 4095) & ~4095ull) +
               ((nn * (cap ? cap : 1) * 8 + 4095) & ~4095ull);
        if (k == i) return off;
        off += cap ? ((nn * (cap + 2) * 4 + 4095) & ~4095ull) : 0;
    }
}

/* A cache of capacity 0 has no serving view: an image that claims node 0
 * holds 0 ids there must be refused, whatever lies where a view would be
 * (here: the next cache's counts, made to read as a valid empty slot of
 * generation 0, with both checksums valid). Found by review: the check read
 * the missing view, past the end of the file when the cache is the last. */
static void test_capacity0(void) {
    scase c = {GSNAP_MODE_FCR, 0, NULL, GSNAP_REFRESH_FIXED, 1};
    char shm[600], path[900];
    snprintf(shm, sizeof shm, "%s/cap0", shmroot);
    mkdir(shm, 0700);
    run_out priv, r;
    run(&c, NULL, &priv);
    OK(priv.rc);
    run(&c, shm, &r);
    CHECK(same(&priv, &r) && r.st.shared_published == 1);
    if (!find_g0(shm, path, sizeof path)) { CHECK(!"image published"); return; }
    int fd = open(path, O_RDWR);
    struct stat st;
    gsnap_samp__shm_hdr h;
    CHECK(fd >= 0 && fstat(fd, &st) == 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    CHECK(h.ncache == 3 && h.caps[1] == 0 && h.caps[2] > 0);
    unsigned char *m = malloc((size_t)st.st_size);
    CHECK(m && pread(fd, m, (size_t)st.st_size, 0) == st.st_size);
    uint32_t zero = 0;
    memcpy(m + img_off(&h, 1, 0), &zero, 4);         /* cache 1, node 0: "0 ids held" */
    for (int k = 0; k < 2; k++) {                    /* cache 2, nodes 0, 1: held, empty */
        memcpy(m + img_off(&h, 2, 0) + 4 * k, &zero, 4);
        uint32_t slot[2] = {0, 0};                   /* count 0, stamp of generation 0 */
        memcpy(m + img_off(&h, 2, 3) + (uint64_t)k * (h.caps[2] + 2) * 4, slot, 8);
    }
    h.payload_sum = XXH3_64bits(m + 4096, (size_t)st.st_size - 4096);
    h.hdr_sum = 0;
    h.hdr_sum = XXH3_64bits(&h, sizeof h);
    CHECK(pwrite(fd, m + 4096, (size_t)st.st_size - 4096, 4096) == st.st_size - 4096);
    CHECK(pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    free(m);
    close(fd);
    run(&c, shm, &r);
    CHECK_MSG(same(&priv, &r) && r.st.shared_refused == 1 && r.st.shared_published == 1,
              "capacity 0: refused %llu published %llu rc %d", (unsigned long long)r.st.shared_refused,
              (unsigned long long)r.st.shared_published, r.rc);
}

/* Files under the image's name that this user did not make, or that others
 * may write, are not trusted (the default directory, /dev/shm, is writable
 * by every user): a FIFO (opening it must not wait), a symbolic link to a
 * good image, a good image made group- and world-writable. Each is refused,
 * replaced by a published image, and the batches stay the private ones. */
static void test_untrusted_files(void) {
    scase c = {GSNAP_MODE_FCR_SC, 0, NULL, GSNAP_REFRESH_FIXED, 0};
    char shm[600], path[900], keep[1000];
    snprintf(shm, sizeof shm, "%s/trust", shmroot);
    mkdir(shm, 0700);
    run_out priv, r;
    run(&c, NULL, &priv);
    run(&c, shm, &r);
    CHECK(same(&priv, &r) && r.st.shared_published == 1);
    for (int how = 0; how < 3; how++) {
        if (!find_g0(shm, path, sizeof path)) { CHECK(!"image published"); return; }
        snprintf(keep, sizeof keep, "%s/good-copy", shmroot);
        if (how == 0) {
            CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
        } else if (how == 1) {
            CHECK(rename(path, keep) == 0 && symlink(keep, path) == 0);
        } else {
            CHECK(chmod(path, 0666) == 0);
        }
        run(&c, shm, &r);
        CHECK_MSG(same(&priv, &r) && r.st.shared_refused == 1 && r.st.shared_published == 1,
                  "untrusted %d: refused %llu published %llu rc %d", how,
                  (unsigned long long)r.st.shared_refused, (unsigned long long)r.st.shared_published, r.rc);
        unlink(keep);
        run(&c, shm, &r); /* the image published over it is accepted */
        CHECK(same(&priv, &r) && r.st.shared_refused == 0 && r.st.shared_attached == 1);
    }
}

/* A database removed and made again at the same place keeps its path and,
 * often, its inode numbers: its samplers must not map the images of the old
 * graph. Here database A's data.mdb is overwritten in place (same inodes)
 * with database B's bytes, which have the same version count and node bound:
 * a shared run must give B's private batches. */
static void test_db_identity(void) {
    scase c = {GSNAP_MODE_FCR, 0, NULL, GSNAP_REFRESH_FIXED, 0};
    char shm[600], fa[700], fb[700];
    snprintf(shm, sizeof shm, "%s/ident", shmroot);
    mkdir(shm, 0700);
    char *keep = dbdir, *da = test_tmpdir("shared-idA"), *db = test_tmpdir("shared-idB");
    test_random_in_db(da, N, 2, 10, 7); /* every node has in-edges: the same node bound */
    test_random_in_db(db, N, 2, 10, 8);
    run_out privb, r;
    dbdir = db;
    run(&c, NULL, &privb);
    OK(privb.rc);
    dbdir = da;
    run(&c, shm, &r); /* publishes A's image */
    CHECK(r.rc == 0 && r.st.shared_published == 1);
    snprintf(fa, sizeof fa, "%s/data.mdb", da);
    snprintf(fb, sizeof fb, "%s/data.mdb", db);
    FILE *in = fopen(fb, "rb"), *out = fopen(fa, "r+b"); /* r+: same inode */
    CHECK(in && out);
    char buf[65536];
    size_t got;
    while (in && out && (got = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, got, out) == got);
    if (out) CHECK(ftruncate(fileno(out), ftell(out)) == 0);
    if (in) fclose(in);
    if (out) fclose(out);
    run(&c, shm, &r);
    CHECK_MSG(same(&privb, &r), "a database rewritten in place mapped the old graph's image (rc %d, attached %llu)",
              r.rc, (unsigned long long)r.st.shared_attached);
    dbdir = keep;
    test_rmdir(da);
    test_rmdir(db);
    free(da);
    free(db);
}

static void test_damaged(void) {
    scase c = {GSNAP_MODE_FCR_SC, 0, NULL, GSNAP_REFRESH_FIXED, 0};
    char shm[600], path[900];
    snprintf(shm, sizeof shm, "%s/dmg", shmroot);
    mkdir(shm, 0700);
    run_out priv, r;
    run(&c, NULL, &priv);
    run(&c, shm, &r); /* publishes */
    CHECK(same(&priv, &r) && r.st.shared_published == 1);
    for (int how = 0; how < 5; how++) {
        if (!find_g0(shm, path, sizeof path)) { CHECK(!"image published"); return; }
        damage(path, how);
        run(&c, shm, &r);
        CHECK_MSG(same(&priv, &r), "damage %d: batches differ (rc %d)", how, r.rc);
        CHECK_MSG(r.st.shared_refused == 1 && r.st.shared_published == 1 && r.st.shared_bytes > 0,
                  "damage %d: refused %llu published %llu", how, (unsigned long long)r.st.shared_refused,
                  (unsigned long long)r.st.shared_published);
        run(&c, shm, &r); /* the image published anew is accepted */
        CHECK(same(&priv, &r) && r.st.shared_refused == 0 && r.st.shared_attached == 1);
    }
}

/* Two samplers of one process, B a period behind A: B maps every
 * generation A published instead of refreshing (publishes nothing), and
 * both give the private run's batches. */
static void test_follower(void) {
    scase c = {GSNAP_MODE_FSCR, 4, NULL, GSNAP_REFRESH_FIXED, 0};
    char shm[600];
    snprintf(shm, sizeof shm, "%s/follow", shmroot);
    mkdir(shm, 0700);
    run_out priv;
    run(&c, NULL, &priv);
    gsnap_db *db;
    OK(gsnap_db_open(dbdir, NULL, &db));
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = c.mode;
    o.layers = 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 6;
    o.seed = 11;
    o.period = c.period;
    o.gamma = 0.3;
    o.shared = 1;
    o.shared_dir = shm;
    gsnap_sampler *s[2];
    OK(gsnap_sampler_open(db, NULL, &o, &s[0]));
    OK(gsnap_sampler_open(db, NULL, &o, &s[1]));
    uint64_t h[2][MAXB];
    for (int b0 = 0; b0 < nbatch + (int)c.period; b0 += (int)c.period)
        for (int k = 0; k < 2; k++) /* A runs batches [b0, b0+T), B the period before */
            for (int b = b0 - k * (int)c.period; b < b0 - k * (int)c.period + (int)c.period; b++) {
                if (b < 0 || b >= nbatch) continue;
                const void *buf;
                size_t len;
                OK(gsnap_sampler_next(s[k], NULL, 48, &buf, &len));
                h[k][b] = test_fnv(buf, len);
            }
    gsnap_sampler_stats st[2];
    for (int k = 0; k < 2; k++) {
        gsnap_sampler_stats_get(s[k], &st[k]);
        CHECK_MSG(memcmp(h[k], priv.h, (size_t)nbatch * sizeof h[k][0]) == 0, "sampler %d differs", k);
        gsnap_sampler_close(s[k]);
    }
    uint64_t gens = 1 + (uint64_t)(nbatch - 1) / c.period;
    CHECK_MSG(st[0].shared_published == gens && st[1].shared_published == 0 &&
              st[1].shared_attached == gens && st[1].refreshes == gens - 1,
              "A published %llu, B published %llu attached %llu refreshes %llu (generations %llu)",
              (unsigned long long)st[0].shared_published, (unsigned long long)st[1].shared_published,
              (unsigned long long)st[1].shared_attached, (unsigned long long)st[1].refreshes,
              (unsigned long long)gens);
    CHECK(st[1].refreshed_entries == 0); /* B never ran a refresh itself */
    gsnap_db_close(db);
}

/* A shared_dir that is not a directory is a clear EINVAL; one where nothing
 * can be published leaves the sampler private with the same batches; the
 * CLI's --shared-dir maps an image (when the binary is built). */
static void test_dir_and_cli(void) {
    char file[600], shm[600], cmd[2048], bin[512];
    snprintf(file, sizeof file, "%s/not-a-dir", shmroot);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    gsnap_db *db;
    OK(gsnap_db_open(dbdir, NULL, &db));
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FCR;
    o.layers = 1;
    o.fanouts[0] = 5;
    o.shared = 1;
    o.shared_dir = file;
    gsnap_sampler *s = NULL;
    CHECK(gsnap_sampler_open(db, NULL, &o, &s) == GSNAP_EINVAL && s == NULL);
    CHECK(strstr(gsnap_db_errmsg(db), "shared_dir") != NULL);
    gsnap_db_close(db);
    /* a directory where nothing can be created (/proc): private images, a note */
    scase c = {GSNAP_MODE_FCR, 3, NULL, GSNAP_REFRESH_FIXED, 0};
    run_out priv, r;
    run(&c, NULL, &priv);
    struct stat pst;
    if (stat("/proc", &pst) == 0 && S_ISDIR(pst.st_mode)) {
        run(&c, "/proc", &r);
        CHECK(same(&priv, &r) && r.st.shared_bytes == 0 && r.st.shared_published == 0);
    }
    const char *bd = getenv("BUILD");
    snprintf(bin, sizeof bin, "%s/graphsnap", bd && *bd ? bd : "build");
    if (access(bin, X_OK) != 0) {
        printf("CLI not built (%s): CLI check skipped\n", bin);
        return;
    }
    snprintf(shm, sizeof shm, "%s/cli", shmroot);
    mkdir(shm, 0700);
    for (int k = 0; k < 2; k++) { /* the first publishes, the second maps */
        snprintf(cmd, sizeof cmd, "%s sample -d %s --fanouts 4,6 --mode fcr --random 48 --batches 5 "
                 "--shared-dir %s --json > %s/out.json", bin, dbdir, shm, shmroot);
        CHECK(system(cmd) == 0);
        snprintf(cmd, sizeof cmd, "grep -q '\"shared_attached\":1,\"shared_published\":%d,' %s/out.json",
                 k == 0, shmroot);
        CHECK_MSG(system(cmd) == 0, "CLI run %d", k);
    }
}

int main(void) {
    nbatch = test_small() ? 12 : MAXB;
    dbdir = test_tmpdir("shared-db");
    shmroot = test_tmpdir("shared-shm");
    build_db();
    const scase cases[] = {
        {GSNAP_MODE_FCR, 5, NULL, GSNAP_REFRESH_FIXED, 0},  {GSNAP_MODE_FCR_SC, 0, NULL, GSNAP_REFRESH_FIXED, 0},
        {GSNAP_MODE_FSCR_SC, 4, NULL, GSNAP_REFRESH_FIXED, 0}, {GSNAP_MODE_PSCR, 3, NULL, GSNAP_REFRESH_FIXED, 0},
        {GSNAP_MODE_FCR, 0, "s1", GSNAP_REFRESH_FIXED, 0},
        {GSNAP_MODE_FSCR, 3, NULL, GSNAP_REFRESH_MISS, 0},
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) test_two_processes(&cases[k], k);
    test_damaged();
    test_capacity0();
    test_untrusted_files();
    test_db_identity();
    test_follower();
    test_dir_and_cli();
    test_rmdir(dbdir);
    test_rmdir(shmroot);
    free(dbdir);
    free(shmroot);
    TEST_DONE();
}
