/*
 * bench/bench_staging.c -- what staging mini-batches into GPU memory costs.
 *
 * Part 1, copies: buffers of 64 KiB .. 64 MiB staged through a gsnap_stager,
 * double-buffered (submit i, then wait for i-1) as a training loop uses it:
 *   memcpy   memcpy of the same bytes between two host buffers (the baseline:
 *            what the host path of a stager costs at least)
 *   host     a stager without a device (memcpy into its 4 KiB-aligned slot)
 *   device   a stager on --device (memcpy into its pinned slot, then the
 *            asynchronous host-to-device copy on its stream)
 *   dev-ser  the same, waiting for each copy before the next submit
 * Each is printed as GB/s and as a ratio to memcpy.
 *
 * Part 2, an epoch: a store of --nodes nodes with --degree random in-edges
 * each and a float32 feature table of --dim columns (plus int64 labels); an
 * FBL sampler [10, 10] with the features and labels gathered into each
 * batch; --batches batches of --batch random seeds, run three ways in
 * alternating rounds (best of --rounds kept):
 *   sample   gsnap_sampler_next only
 *   +host    and each batch staged on host buffers
 *   +device  and each batch staged on the device (double-buffered)
 * each of the last two twice: by gsnap_stager_submit (a copy of the packed
 * batch into the slot) and by gsnap_sampler_next_staged (packed straight
 * into the slot); printed as ms per batch and as a ratio to `sample`: the
 * ratio is what staging adds to an epoch.
 *
 * Without a CUDA runtime or device the device rows print "no device" (the
 * program still runs: the host rows are measured).
 *
 *   build/bench/bench_staging [--device D] [--nodes N] [--degree K]
 *       [--dim D] [--batch B] [--batches M] [--rounds R] [--dir DIR]
 *       [--out FILE]
 */
#include "graphsnap.h"
#include "bench_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_staging: %s: %s\n", what, gsnap_strerror(rc));
    exit(1);
}

/* Seconds for `reps` double-buffered stagings of n bytes (0: serial). */
static double stage_loop(gsnap_stager *st, const void *src, size_t n, int reps, int pipelined) {
    unsigned prev = 0, tk;
    void *p;
    int rc;
    double t0 = now();
    for (int i = 0; i < reps; i++) {
        if ((rc = gsnap_stager_submit(st, src, n, &tk))) die("submit", rc);
        if (!pipelined) {
            if ((rc = gsnap_stager_wait(st, tk, &p, NULL))) die("wait", rc);
        } else if (i > 0 && (rc = gsnap_stager_wait(st, prev, &p, NULL))) {
            die("wait", rc);
        }
        prev = tk;
    }
    if (pipelined && (rc = gsnap_stager_wait(st, prev, &p, NULL))) die("wait", rc);
    return now() - t0;
}

static void copies(int device) {
    static const size_t sizes[] = {64u << 10, 1u << 20, 8u << 20, 64u << 20};
    size_t maxn = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char *src = malloc(maxn), *dst = malloc(maxn);
    if (!src || !dst) die("malloc", GSNAP_ENOMEM);
    uint64_t x = 1;
    for (size_t i = 0; i < maxn; i += 8) {
        uint64_t v = mix(&x);
        memcpy(src + i, &v, 8);
    }
    memset(dst, 0, maxn);
    gsnap_stager *host, *dev;
    int rc;
    if ((rc = gsnap_stager_open(maxn, 2, -1, &host))) die("stager open (host)", rc);
    if ((rc = gsnap_stager_open(maxn, 2, device, &dev))) die("stager open (device)", rc);
    int on_dev = gsnap_stager_on_device(dev);
    say("part 1: copies, double-buffered (2 slots); device %d: %s\n", device,
        on_dev ? "CUDA device buffers" : "no device (host buffers)");
    say("%10s %6s | %11s | %9s %6s | %9s %6s | %9s %6s\n", "size", "reps", "memcpy GB/s", "host GB/s",
        "ratio", "dev GB/s", "ratio", "dev-ser", "ratio");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        int reps = (int)((1u << 30) / n);
        if (reps < 8) reps = 8;
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        for (int round = 0; round < 3; round++) {
            double t0 = now();
            for (int i = 0; i < reps; i++) {
                memcpy(dst, src, n);
                __asm__ volatile("" : : "r"(dst) : "memory");
            }
            double t = now() - t0;
            if (t < best[0]) best[0] = t;
            if ((t = stage_loop(host, src, n, reps, 1)) < best[1]) best[1] = t;
            if (on_dev) {
                if ((t = stage_loop(dev, src, n, reps, 1)) < best[2]) best[2] = t;
                if ((t = stage_loop(dev, src, n, reps, 0)) < best[3]) best[3] = t;
            }
        }
        double gb = (double)n * reps / 1e9;
        char sz[32];
        snprintf(sz, sizeof sz, "%zu KiB", n >> 10);
        if (on_dev)
            say("%10s %6d | %11.2f | %9.2f %6.2f | %9.2f %6.2f | %9.2f %6.2f\n", sz, reps,
                gb / best[0], gb / best[1], best[0] / best[1], gb / best[2], best[0] / best[2],
                gb / best[3], best[0] / best[3]);
        else
            say("%10s %6d | %11.2f | %9.2f %6.2f | %9s %6s | %9s %6s\n", sz, reps, gb / best[0],
                gb / best[1], best[0] / best[1], "no device", "-", "no device", "-");
    }
    /* the last staged buffer must be the source, byte for byte */
    if (on_dev) {
        unsigned tk;
        if ((rc = gsnap_stager_submit(dev, src, maxn, &tk))) die("submit", rc);
        unsigned char *back = malloc(maxn);
        if (!back) die("malloc", GSNAP_ENOMEM);
        if ((rc = gsnap_stager_read_back(dev, tk, back, maxn))) die("read back", rc);
        int same = memcmp(back, src, maxn) == 0;
        say("read back of a %zu MiB staged buffer: %s\n", maxn >> 20, same ? "identical" : "DIFFERS");
        free(back);
        if (!same) exit(1);
    }
    say("(ratio = memcpy time / that time: above 1 faster than a host memcpy of the same bytes)\n\n");
    gsnap_stager_close(host);
    gsnap_stager_close(dev);
    free(src);
    free(dst);
}

typedef struct {
    uint64_t nodes, degree;
    uint32_t dim;
    size_t batch, batches;
    int rounds, device;
} epoch_cfg;

static void build_store(gsnap_db *db, const epoch_cfg *c) {
    int rc;
    if ((rc = gsnap_attr_create(db, "feat", GSNAP_DTYPE_F32, c->dim))) die("attr create", rc);
    if ((rc = gsnap_attr_create(db, "label", GSNAP_DTYPE_I64, 1))) die("attr create", rc);
    uint64_t x = 7, chunk = 100000;
    float *row = malloc(sizeof(float) * c->dim * chunk);
    uint64_t *ids = malloc(sizeof(uint64_t) * chunk);
    int64_t *lab = malloc(sizeof(int64_t) * chunk);
    if (!row || !ids || !lab) die("malloc", GSNAP_ENOMEM);
    for (uint64_t lo = 0; lo < c->nodes; lo += chunk) {
        uint64_t hi = lo + chunk < c->nodes ? lo + chunk : c->nodes;
        gsnap_batch *b;
        if ((rc = gsnap_batch_begin(db, &b))) die("batch begin", rc);
        for (uint64_t v = lo; v < hi; v++) {
            for (uint64_t k = 0; k < c->degree; k++)
                if ((rc = gsnap_batch_add(b, mix(&x) % c->nodes, v, (int64_t)k))) die("add", rc);
            ids[v - lo] = v;
            lab[v - lo] = (int64_t)(v % 7);
            for (uint32_t j = 0; j < c->dim; j++)
                row[(v - lo) * c->dim + j] = (float)(mix(&x) % 1000) * 0.001f;
        }
        if ((rc = gsnap_batch_set_attr(b, "feat", ids, NULL, row, hi - lo))) die("set feat", rc);
        if ((rc = gsnap_batch_set_attr(b, "label", ids, NULL, lab, hi - lo))) die("set label", rc);
        uint64_t ver;
        if ((rc = gsnap_batch_commit(b, &ver))) die("commit", rc);
    }
    free(row);
    free(ids);
    free(lab);
}

/* Seconds for one epoch: way 0 sample only, else staged on st (double
 * buffered); `direct`: packed into the slot (gsnap_sampler_next_staged)
 * rather than gsnap_sampler_next + gsnap_stager_submit. */
static double epoch(gsnap_sampler *s, gsnap_stager *st, const epoch_cfg *c, int way, int direct,
                    const uint64_t *seeds, size_t *bytes) {
    unsigned prev = 0, tk;
    void *p;
    int rc;
    size_t total = 0;
    double t0 = now();
    for (size_t b = 0; b < c->batches; b++) {
        const void *buf;
        size_t len;
        if (way > 0 && direct) {
            if ((rc = gsnap_sampler_next_staged(s, seeds + b * c->batch, c->batch, st, &tk, NULL,
                                                &len)))
                die("sample (staged)", rc);
            total += len;
            if (b > 0 && (rc = gsnap_stager_wait(st, prev, &p, NULL))) die("wait", rc);
            prev = tk;
            continue;
        }
        if ((rc = gsnap_sampler_next(s, seeds + b * c->batch, c->batch, &buf, &len))) die("sample", rc);
        total += len;
        if (way == 0) continue;
        if ((rc = gsnap_stager_submit(st, buf, len, &tk))) die("submit", rc);
        if (b > 0 && (rc = gsnap_stager_wait(st, prev, &p, NULL))) die("wait", rc);
        prev = tk;
    }
    if (way > 0 && c->batches > 0 && (rc = gsnap_stager_wait(st, prev, &p, NULL))) die("wait", rc);
    *bytes = total;
    return now() - t0;
}

static void epochs(const epoch_cfg *c, const char *dir) {
    gsnap_db *db;
    int rc;
    if ((rc = bench_open_nosync(dir, &db))) die("open", rc);
    double t0 = now();
    build_store(db, c);
    say("part 2: an epoch of FBL [10, 10] batches with features gathered\n");
    say("store: %llu nodes, %llu in-edges each, float32 features of %u columns (built in %.1f s)\n",
        (unsigned long long)c->nodes, (unsigned long long)c->degree, c->dim, now() - t0);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FBL;
    o.layers = 2;
    o.fanouts[0] = o.fanouts[1] = 10;
    o.features = "feat";
    o.labels = "label";
    gsnap_sampler *s;
    if ((rc = gsnap_sampler_open(db, NULL, &o, &s))) die("sampler open", rc);
    uint64_t *seeds = malloc(sizeof(uint64_t) * c->batch * c->batches);
    if (!seeds) die("malloc", GSNAP_ENOMEM);
    if ((rc = gsnap_sampler_random_seeds(s, 1, c->batch * c->batches, seeds))) die("seeds", rc);
    gsnap_stager *host, *dev;
    if ((rc = gsnap_stager_open(1 << 20, 2, -1, &host))) die("stager open (host)", rc);
    if ((rc = gsnap_stager_open(1 << 20, 2, c->device, &dev))) die("stager open (device)", rc);
    int on_dev = gsnap_stager_on_device(dev);
    /* ways: 0 sample only; 1/2 + host/device staging by submit (a copy into
     * the slot); 3/4 the same packed into the slot (next_staged) */
    enum { WAYS = 5 };
    double best[WAYS];
    for (int w = 0; w < WAYS; w++) best[w] = 1e30;
    size_t bytes = 0;
    /* a first epoch warms the page cache and the slots (they grow to fit) */
    epoch(s, host, c, 1, 0, seeds, &bytes);
    if (on_dev) epoch(s, dev, c, 2, 0, seeds, &bytes);
    for (int r = 0; r < c->rounds; r++) {
        for (int k = 0; k < WAYS; k++) {
            int way = (k + r) % WAYS; /* rotate the order from round to round */
            int on_gpu = way == 2 || way == 4;
            if (on_gpu && !on_dev) continue;
            double t = epoch(s, on_gpu ? dev : host, c, way, way >= 3, seeds, &bytes);
            if (t < best[way]) best[way] = t;
        }
    }
    double mb = (double)bytes / (double)c->batches / 1e6;
    say("%zu batches of %zu seeds, %.2f MB a batch on average; device %d: %s\n", c->batches,
        c->batch, mb, c->device, on_dev ? "CUDA device buffers" : "no device");
    say("%24s | %12s | %9s\n", "way", "ms / batch", "/ sample");
    const char *names[WAYS] = {"sample", "+host (copy)", "+device (copy)", "+host (packed in slot)",
                               "+device (packed in slot)"};
    for (int w = 0; w < WAYS; w++) {
        if ((w == 2 || w == 4) && !on_dev) {
            say("%24s | %12s | %9s\n", names[w], "no device", "-");
            continue;
        }
        say("%24s | %12.3f | %9.3f\n", names[w], best[w] * 1e3 / (double)c->batches,
            best[w] / best[0]);
    }
    if (on_dev)
        say("staged to the device: %.2f GB/s of batch bytes over the epoch (sampling included)\n",
            (double)bytes / best[4] / 1e9);
    gsnap_stager_close(host);
    gsnap_stager_close(dev);
    free(seeds);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
}

int main(int argc, char **argv) {
    epoch_cfg c = {.nodes = 200000, .degree = 15, .dim = 128, .batch = 1024, .batches = 40,
                   .rounds = 3, .device = 0};
    const char *dir = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_staging: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--device")) c.device = atoi(v);
        else if (!strcmp(a, "--nodes")) c.nodes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--degree")) c.degree = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--dim")) c.dim = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--batch")) c.batch = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batches")) c.batches = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--rounds")) c.rounds = atoi(v);
        else if (!strcmp(a, "--dir")) dir = v;
        else if (!strcmp(a, "--out")) out = v;
        else {
            fprintf(stderr, "bench_staging: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (c.nodes == 0 || c.dim == 0 || c.batch == 0 || c.batches == 0 || c.rounds < 1) {
        fprintf(stderr, "bench_staging: --nodes, --dim, --batch, --batches, --rounds must be >= 1\n");
        return 2;
    }
    char tmpl[] = "/tmp/bench_staging.XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("bench_staging: mkdtemp");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/db", dir);
    if (out && !(bench_out = fopen(out, "w"))) {
        perror(out);
        return 1;
    }
    copies(c.device);
    epochs(&c, path);
    if (bench_out) fclose(bench_out);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "bench_staging: could not remove %s\n", path);
    if (dir == tmpl) rmdir(dir);
    return 0;
}
