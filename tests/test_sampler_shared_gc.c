/* tests/test_sampler_shared_gc.c -- published images are removed once they
 * are superseded and nobody maps them, and only then: two processes moving
 * through several generations leave only the last two behind; a generation
 * a process still maps survives another process moving far ahead (and that
 * process keeps giving the private run's batches); a sampler process killed
 * with SIGKILL leaves files (and a dead writer's temporary file) that the
 * next sampler opened on the directory removes, also when that sampler
 * opens on a published generation 0; a file another process holds an
 * exclusive lock on never makes an opener wait (it serves its private image
 * and says why). */
#include "test.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define N 1500
#define PERIOD 2
static char *dbdir, *shmroot;

typedef struct {
    gsnap_db *db;
    gsnap_sampler *s;
} handle;

static void open_one(const char *shm, handle *h) {
    OK(gsnap_db_open(dbdir, NULL, &h->db));
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FCR;
    o.layers = 2;
    o.fanouts[0] = 4;
    o.fanouts[1] = 6;
    o.seed = 11;
    o.period = PERIOD;
    o.shared = shm != NULL;
    o.shared_dir = shm;
    OK(gsnap_sampler_open(h->db, NULL, &o, &h->s));
}

static void close_one(handle *h) {
    gsnap_sampler_close(h->s);
    gsnap_db_close(h->db);
}

/* Batches [from, to) of h, hashes into out[from..to). */
static void sample(handle *h, int from, int to, uint64_t *out) {
    for (int b = from; b < to; b++) {
        const void *buf;
        size_t len;
        OK(gsnap_sampler_next(h->s, NULL, 40, &buf, &len));
        if (out) out[b] = test_fnv(buf, len);
    }
}

/* Generations of the images in dir as a bit set (bit g), *tmp = temporary files. */
static uint64_t gens_in(const char *dir, int *tmp) {
    DIR *d = opendir(dir);
    struct dirent *e;
    uint64_t set = 0;
    *tmp = 0;
    while (d && (e = readdir(d))) {
        const char *g = strstr(e->d_name, "-g");
        if (strncmp(e->d_name, "gsnap-", 6) || !g) continue;
        if (strstr(e->d_name, ".tmp")) { (*tmp)++; continue; }
        unsigned long n = strtoul(g + 2, NULL, 10);
        if (n < 64) set |= 1ull << n;
    }
    if (d) closedir(d);
    return set;
}

static char *subdir(const char *name) {
    char *p = malloc(600);
    snprintf(p, 600, "%s/%s", shmroot, name);
    mkdir(p, 0700);
    return p;
}

/* Two processes through generations 0..9 at once: the last two remain. */
static void test_two_processes(void) {
    char *shm = subdir("two");
    int nb = 20, last = (nb - 1) / PERIOD;
    pid_t pid[2];
    for (int k = 0; k < 2; k++)
        if ((pid[k] = fork()) == 0) {
            handle h;
            open_one(shm, &h);
            sample(&h, 0, nb, NULL);
            close_one(&h);
            _exit(0);
        }
    for (int k = 0; k < 2; k++) {
        int st = 0;
        waitpid(pid[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    int tmp;
    uint64_t set = gens_in(shm, &tmp);
    uint64_t live = (1ull << last) | (1ull << (last - 1));
    CHECK_MSG(set && (set & ~live) == 0 && tmp == 0, "images left: %#llx (live %#llx), %d tmp",
              (unsigned long long)set, (unsigned long long)live, tmp);
    free(shm);
}

/* A maps generation 1 and waits while B (another process) moves to
 * generation 7; A's file stays, A goes on with the private batches. */
static void test_mapped_kept(void) {
    char *shm = subdir("kept");
    int nb = 16;
    uint64_t priv[16], got[16];
    handle p;
    open_one(NULL, &p);
    sample(&p, 0, nb, priv);
    close_one(&p);
    handle a;
    open_one(shm, &a);
    sample(&a, 0, 3, got); /* at generation 1 */
    pid_t pid = fork();
    if (pid == 0) {
        handle b;
        open_one(shm, &b);
        sample(&b, 0, nb, NULL);
        close_one(&b);
        _exit(0);
    }
    int st = 0, tmp;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    uint64_t set = gens_in(shm, &tmp);
    CHECK_MSG(set & (1ull << 1), "generation 1, mapped, was removed (left %#llx)", (unsigned long long)set);
    CHECK_MSG(!(set & (1ull << 3)) && !(set & (1ull << 4)), "superseded generations left: %#llx",
              (unsigned long long)set);
    sample(&a, 3, nb, got);
    CHECK(memcmp(priv, got, sizeof priv) == 0);
    close_one(&a);
    free(shm);
}

/* A dead writer's temporary file for generation g beside the images of dir
 * (named after any image there). */
static void plant_dead_tmp(const char *shm, int g) {
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char any[300] = "", name[700];
    DIR *d = opendir(shm);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".img") && !strstr(e->d_name, ".tmp")) snprintf(any, sizeof any, "%s", e->d_name);
    if (d) closedir(d);
    char *p = strstr(any, "-g");
    CHECK(p != NULL);
    if (!p) return;
    snprintf(name, sizeof name, "%s/%.*s-g%d.img.tmp.%ld.1", shm, (int)(p - any), any, g, (long)dead);
    int t = open(name, O_CREAT | O_WRONLY, 0600);
    CHECK(t >= 0);
    if (t >= 0) close(t);
}

/* A sampler process on shm killed with SIGKILL after nb batches, its
 * image mapped. */
static void killed_after(const char *shm, int nb) {
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        handle h;
        open_one(shm, &h);
        sample(&h, 0, nb, NULL);
        char c = 1;
        if (write(fd[1], &c, 1) != 1) _exit(1);
        for (;;) pause(); /* killed here */
    }
    char c;
    CHECK(read(fd[0], &c, 1) == 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fd[0]);
    close(fd[1]);
}

/* A sampler process killed mid-run: the next one removes what it left. */
static void test_killed(void) {
    char *shm = subdir("killed");
    killed_after(shm, 11); /* generation 5 */
    int tmp;
    uint64_t before = gens_in(shm, &tmp);
    plant_dead_tmp(shm, 3); /* a temporary file of a writer that is gone */
    CHECK_MSG(before & (1ull << 5), "the killed process's generation 5 is not there (%#llx)",
              (unsigned long long)before);
    handle h;
    open_one(shm, &h); /* generation 0: everything else is left over */
    uint64_t after = gens_in(shm, &tmp);
    CHECK_MSG(after == 1 && tmp == 0, "left after the next open: %#llx, %d tmp", (unsigned long long)after, tmp);
    close_one(&h);
    free(shm);
}

/* Killed at generation 1 (0 and 1 left, and a dead writer's temporary
 * file): the next sampler opens on the published generation 0 and removes
 * generation 1 and the temporary file. */
static void test_open_on_g0(void) {
    char *shm = subdir("g0");
    killed_after(shm, 3); /* generation 1 */
    plant_dead_tmp(shm, 2);
    int tmp;
    uint64_t before = gens_in(shm, &tmp);
    CHECK_MSG(before == 3 && tmp == 1, "before: %#llx, %d tmp", (unsigned long long)before, tmp);
    handle h;
    open_one(shm, &h);
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(h.s, &st);
    CHECK_MSG(st.shared_attached == 1 && st.shared_published == 0,
              "not opened on the published generation 0 (attached %llu, published %llu)",
              (unsigned long long)st.shared_attached, (unsigned long long)st.shared_published);
    uint64_t after = gens_in(shm, &tmp);
    CHECK_MSG(after == 1 && tmp == 0, "left after an open on generation 0: %#llx, %d tmp",
              (unsigned long long)after, tmp);
    close_one(&h);
    free(shm);
}

/* Another process holds an exclusive lock on the published generation 0
 * (a remover stopped between its lock and its unlink, or a planted file):
 * an open returns at once, serves the private run's batches and says why. */
static void test_locked_elsewhere(void) {
    char *shm = subdir("locked");
    int nb = 6;
    uint64_t priv[6], got[6];
    handle p;
    open_one(NULL, &p);
    sample(&p, 0, nb, priv);
    close_one(&p);
    open_one(shm, &p); /* publishes generation 0 */
    close_one(&p);
    char g0[700] = "";
    DIR *d = opendir(shm);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, "-g0.img") && !strstr(e->d_name, ".tmp")) snprintf(g0, sizeof g0, "%s/%s", shm, e->d_name);
    if (d) closedir(d);
    CHECK_MSG(g0[0], "generation 0 was not published in %s", shm);
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int f = open(g0, O_RDONLY);
        char c = f >= 0 && flock(f, LOCK_EX) == 0;
        if (write(fd[1], &c, 1) != 1) _exit(1);
        for (;;) pause();
    }
    char c = 0;
    CHECK(read(fd[0], &c, 1) == 1 && c == 1);
    alarm(30); /* before the fix the open waited here for as long as the lock was held */
    handle h;
    open_one(shm, &h);
    sample(&h, 0, nb, got);
    alarm(0);
    CHECK(memcmp(priv, got, sizeof priv) == 0);
    const char *note = gsnap_sampler_shared_note(h.s);
    CHECK_MSG(note && strstr(note, "locked by another process") != NULL, "note: %s", note ? note : "(none)");
    close_one(&h);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fd[0]);
    close(fd[1]);
    free(shm);
}

int main(void) {
    dbdir = test_tmpdir("shgc-db");
    shmroot = test_tmpdir("shgc-shm");
    test_random_in_db(dbdir, N, 2, 20, 7);
    test_two_processes();
    test_mapped_kept();
    test_killed();
    test_open_on_g0();
    test_locked_elsewhere();
    test_rmdir(dbdir);
    test_rmdir(shmroot);
    free(dbdir);
    free(shmroot);
    TEST_DONE();
}
