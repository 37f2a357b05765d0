/*
 * bench/bench_shared.c -- memory of 1, 2 and 4 sampler processes on one
 * database, private images against the shared host tier (options.shared).
 *
 * For each process count P in {1, 2, 4} and each setting (private, shared)
 * it forks P children; each opens the database and a sampler (same options,
 * same seed), samples `--batches` batches of `--batch-size` random seeds and
 * then waits. With all P waiting, the parent reads Pss (and Pss_Anon,
 * Pss_Shmem, Pss_File) from /proc/<pid>/smaps_rollup of each child and adds
 * them up (PSS splits each shared page among the processes that map it, so
 * the sum is the memory the P processes cost together), then lets them exit.
 * The ratio printed is the sum against one private process from the same
 * run (the baseline). Published images go to a fresh directory under
 * --shared-dir per measurement (no image is published when the P processes
 * start: each builds its image, the first to finish publishes it, the
 * others map it and drop their own), all removed at the end.
 *
 *   bench_shared --db DIR [--mode fcr] [--fanouts 10,10,10] [--batches 20]
 *                [--batch-size 1024] [--period 0] [--shared-dir /dev/shm]
 *                [--out FILE]
 */
#include "graphsnap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/stat.h>

typedef struct {
    const char *db, *shdir, *out;
    gsnap_sampler_options o;
    unsigned batches, batch_size;
} args;

typedef struct {
    double pss, anon, shmem, file; /* KiB */
} mem;

static int parse_fanouts(const char *s, gsnap_sampler_options *o) {
    o->layers = 0;
    while (*s && o->layers < GSNAP_MAX_LAYERS) {
        char *end;
        long f = strtol(s, &end, 10);
        if (end == s) return -1;
        o->fanouts[o->layers++] = (int32_t)f;
        s = *end == ',' ? end + 1 : end;
    }
    return o->layers ? 0 : -1;
}

static int read_rollup(pid_t pid, mem *m) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    memset(m, 0, sizeof *m);
    while (fgets(line, sizeof line, f)) {
        double v;
        if (sscanf(line, "Pss: %lf", &v) == 1) m->pss = v;
        else if (sscanf(line, "Pss_Anon: %lf", &v) == 1) m->anon = v;
        else if (sscanf(line, "Pss_Shmem: %lf", &v) == 1) m->shmem = v;
        else if (sscanf(line, "Pss_File: %lf", &v) == 1) m->file = v;
    }
    fclose(f);
    return 0;
}

/* A child: sample, report "ready" (1 byte, 'E' on error), wait for the go. */
static void child(const args *a, int shared, const char *dir, int wfd, int rfd) {
    gsnap_db *db = NULL;
    gsnap_sampler *s = NULL;
    char c = 'R';
    gsnap_sampler_options o = a->o;
    o.shared = (unsigned)shared;
    o.shared_dir = dir;
    int rc = gsnap_db_open(a->db, NULL, &db);
    if (!rc) rc = gsnap_sampler_open(db, NULL, &o, &s);
    for (unsigned b = 0; !rc && b < a->batches; b++) {
        const void *buf;
        size_t len;
        rc = gsnap_sampler_next(s, NULL, a->batch_size, &buf, &len);
    }
    if (rc) {
        fprintf(stderr, "bench_shared: child: %s (%s)\n", gsnap_strerror(rc), db ? gsnap_db_errmsg(db) : "");
        c = 'E';
    }
    if (write(wfd, &c, 1) != 1) _exit(1);
    if (read(rfd, &c, 1) < 0) _exit(1);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    _exit(rc ? 1 : 0);
}

/* P processes at once; the sum of their PSS in *sum. */
static int measure(const args *a, int P, int shared, const char *dir, mem *sum) {
    int up[2], down[2];
    pid_t pid[8];
    if (pipe(up) || pipe(down)) return -1;
    for (int k = 0; k < P; k++) {
        if ((pid[k] = fork()) == 0) {
            close(up[0]);
            close(down[1]);
            child(a, shared, dir, up[1], down[0]);
        }
    }
    close(up[1]);
    close(down[0]);
    int bad = 0;
    for (int k = 0; k < P; k++) {
        char c = 0;
        if (read(up[0], &c, 1) != 1 || c != 'R') bad = 1;
    }
    memset(sum, 0, sizeof *sum);
    for (int k = 0; k < P && !bad; k++) {
        mem m;
        if (read_rollup(pid[k], &m)) bad = 1;
        sum->pss += m.pss;
        sum->anon += m.anon;
        sum->shmem += m.shmem;
        sum->file += m.file;
    }
    close(down[1]); /* the children's reads return: they exit */
    close(up[0]);
    for (int k = 0; k < P; k++) {
        int st;
        waitpid(pid[k], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;
    }
    return bad ? -1 : 0;
}

static int parse(int argc, char **argv, args *a) {
    gsnap_sampler_options init = GSNAP_SAMPLER_OPTIONS_INIT;
    a->o = init;
    a->o.mode = GSNAP_MODE_FCR;
    a->o.seed = 1;
    a->shdir = "/dev/shm";
    a->batches = 20;
    a->batch_size = 1024;
    parse_fanouts("10,10,10", &a->o);
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return -1;
        if (!strcmp(argv[i], "--db")) a->db = v;
        else if (!strcmp(argv[i], "--mode")) { if (gsnap_sample_mode_parse(v, &a->o.mode)) return -1; }
        else if (!strcmp(argv[i], "--fanouts")) { if (parse_fanouts(v, &a->o)) return -1; }
        else if (!strcmp(argv[i], "--batches")) a->batches = (unsigned)atoi(v);
        else if (!strcmp(argv[i], "--batch-size")) a->batch_size = (unsigned)atoi(v);
        else if (!strcmp(argv[i], "--period")) a->o.period = (uint32_t)atoi(v);
        else if (!strcmp(argv[i], "--shared-dir")) a->shdir = v;
        else if (!strcmp(argv[i], "--out")) a->out = v;
        else return -1;
        i++;
    }
    return a->db ? 0 : -1;
}

int main(int argc, char **argv) {
    args a;
    memset(&a, 0, sizeof a);
    if (parse(argc, argv, &a)) {
        fprintf(stderr, "usage: bench_shared --db DIR [--mode fcr] [--fanouts 10,10,10] [--batches 20]\n"
                        "       [--batch-size 1024] [--period 0] [--shared-dir /dev/shm] [--out FILE]\n");
        return 2;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/gsnap-bench-shared-XXXXXX", a.shdir);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    FILE *out = a.out ? fopen(a.out, "w") : NULL;
    char head[512];
    snprintf(head, sizeof head, "bench_shared: db %s, mode %s, %u layers (fanout[0] %d), %u batches of %u, period %u\n",
             a.db, gsnap_sample_mode_name(a.o.mode), a.o.layers, a.o.fanouts[0], a.batches, a.batch_size, a.o.period);
    fputs(head, stdout);
    if (out) fputs(head, out);
    const char *hdr = "setting  procs  PSS_MiB  anon_MiB  shmem_MiB  file_MiB  ratio_vs_1_private\n";
    fputs(hdr, stdout);
    if (out) fputs(hdr, out);
    double base = 0;
    int fail = 0;
    static const int procs[3] = {1, 2, 4};
    for (int shared = 0; shared <= 1 && !fail; shared++)
        for (int i = 0; i < 3 && !fail; i++) {
            mem m;
            char sub[1100];
            snprintf(sub, sizeof sub, "%s/p%d", dir, procs[i]);
            if (shared && mkdir(sub, 0700)) { perror("mkdir"); fail = 1; break; }
            if (measure(&a, procs[i], shared, sub, &m)) { fail = 1; break; }
            if (!shared && procs[i] == 1) base = m.pss;
            char line[256];
            snprintf(line, sizeof line, "%-8s %5d  %7.1f  %8.1f  %9.1f  %8.1f  %.2f\n",
                     shared ? "shared" : "private", procs[i], m.pss / 1024, m.anon / 1024,
                     m.shmem / 1024, m.file / 1024, base > 0 ? m.pss / base : 0);
            fputs(line, stdout);
            if (out) fputs(line, out);
        }
    if (out) fclose(out);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_shared: could not remove %s\n", dir);
    return fail;
}
