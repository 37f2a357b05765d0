/*
 * tests/soak/soak.c -- concurrency soak, bounded in time (scripts/soak.sh).
 *
 *   soak [-t SECONDS] [-r READERS] [-k KHOP_READERS] [-s SEED] [-f] [-v] DIR
 *
 * Processes on one database directory, for SECONDS:
 *   - 1 writer: commits batches whose content is a pure function of the
 *     version (tests/crash/crash_lib.h), as fast as it can;
 *   - READERS point-in-time readers: each loop opens a read view and checks
 *     that its version never goes down; picks a random version u of the view
 *     and checks the marker node of u holds exactly batch u's in-neighbours at
 *     as_of = u and one fewer later (the delete of batch u+1), that no edge of
 *     the version after the view exists, and that the in-degree of a slice of
 *     64 nodes at a random (T, V) equals a model kept by the reader itself
 *     (computed from the batch contents, versions 1..V, times <= T);
 *   - KHOP_READERS k-hop readers: 2-hop queries on a snapshot built at the
 *     start, checked against the store (hop 1 = the distinct in-neighbours at
 *     the snapshot's (T, V) when not capped, a subset of them of the exact
 *     size when capped; every hop-2 id is an in-neighbour of a hop-1 node,
 *     not the seed, not in hop 1);
 *   - 1 sampler on the snapshot, frozen at its (T, V), and with -f a second
 *     one, fresh (max_staleness 4: reads at the newest version while the
 *     writer commits; see findings F2, F10 in docs/reliability.md): OTF full
 *     refresh (FSCR, 2 layers) started in the background
 *     (gsnap_sampler_refresh_async) every 8 batches while sampling goes on;
 *     every mini-batch must pass gsnap_block_check, its generation and store
 *     version must never go down, and every sampled edge must be a real edge
 *     of the store at the block's (T, V).
 * Each process counts its work and its violations and reports them at the
 * end. Exit 0 when every process ran and found zero violations.
 */
#include "crash/crash_lib.h"
#include <sys/stat.h>

#define SLICE 64

static volatile sig_atomic_t g_stop;
static void on_term(int sig) { (void)sig; g_stop = 1; }

typedef struct {
    char role[24];
    uint64_t ops, checks, violations;
} pstats;

static void report(int fd, const pstats *p) {
    char line[200];
    int n = snprintf(line, sizeof line, "%s %llu %llu %llu\n", p->role, (unsigned long long)p->ops,
                     (unsigned long long)p->checks, (unsigned long long)p->violations);
    if (write(fd, line, (size_t)n) < 0) _exit(90);
}

#define VIOLATION(ps, ...) do { (ps)->violations++; fprintf(stderr, "[%s pid %d] VIOLATION: ", (ps)->role, \
    (int)getpid()); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

static gsnap_db *open_db(const char *dir) {
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.create = 0;
    o.sync = GSNAP_SYNC_NONE;
    if (gsnap_db_open(dir, &o, &db)) {
        fprintf(stderr, "soak: open %s: %s\n", dir, gsnap_last_open_error());
        _exit(91);
    }
    return db;
}

/* ---- writer --------------------------------------------------------------- */
static void writer(const char *dir, uint64_t seed, int fd) {
    pstats ps = {"writer", 0, 0, 0};
    gsnap_db *db = open_db(dir);
    uint64_t v = 0;
    gsnap_db_version(db, &v);
    while (!g_stop) {
        gsnap_batch *b = NULL;
        uint64_t got = 0;
        int rc = cr_build_batch(db, seed, v + 1, &b);
        if (!rc) rc = gsnap_batch_commit(b, &got);
        if (rc || got != v + 1) {
            VIOLATION(&ps, "commit of version %llu: %s (%s)", (unsigned long long)v + 1, gsnap_strerror(rc),
                      gsnap_db_errmsg(db));
            break;
        }
        v = got;
        ps.ops++;
        if (v % 50 == 0 && gsnap_db_compact(db)) VIOLATION(&ps, "compact: %s", gsnap_db_errmsg(db));
    }
    gsnap_db_close(db);
    report(fd, &ps);
}

/* ---- point-in-time readers ------------------------------------------------ */
typedef struct { uint64_t version; int64_t t; uint32_t dst; } slice_ev;
typedef struct { slice_ev *ev; size_t n, cap; uint64_t upto; } model;

static void model_extend(model *m, uint64_t seed, uint64_t upto) {
    for (uint64_t v = m->upto + 1; v <= upto; v++) {
        uint32_t z = cr_noise(seed, v);
        for (uint32_t i = 0; i < z; i++) {
            uint64_t h = cr_hash(seed ^ 3, v * 100003 + i);
            uint64_t dst = (h >> 32) % CR_NODES;
            if (dst >= SLICE) continue;
            if (m->n == m->cap) {
                m->cap = m->cap ? m->cap * 2 : 1024;
                m->ev = realloc(m->ev, m->cap * sizeof *m->ev);
                if (!m->ev) _exit(92);
            }
            m->ev[m->n++] = (slice_ev){v, (int64_t)(h >> 44), (uint32_t)dst};
        }
    }
    if (upto > m->upto) m->upto = upto;
}
static uint64_t model_degree(const model *m, uint32_t node, int64_t T, uint64_t V) {
    uint64_t d = 0;
    for (size_t i = 0; i < m->n && m->ev[i].version <= V; i++)
        d += m->ev[i].dst == node && m->ev[i].t <= T;
    return d;
}

static void reader(const char *dir, uint64_t seed, uint64_t rseed, int fd) {
    pstats ps = {"reader", 0, 0, 0};
    gsnap_db *db = open_db(dir);
    model m = {0};
    uint64_t rng = rseed, last = 0;
    gsnap_nbr *buf = malloc(1024 * sizeof *buf);
    uint64_t want[1024];
    while (!g_stop) {
        gsnap_read *rd = NULL;
        int rc = gsnap_read_begin(db, &rd);
        if (rc) { VIOLATION(&ps, "read_begin: %s", gsnap_db_errmsg(db)); break; }
        uint64_t V = gsnap_read_version(rd);
        ps.checks++;
        if (V < last) VIOLATION(&ps, "view version went down: %llu after %llu", (unsigned long long)V,
                                (unsigned long long)last);
        last = V;
        if (V == 0) { gsnap_read_end(rd); continue; }
        uint64_t u = 1 + test_rand(&rng) % V;
        uint32_t mk = cr_marks(seed, u);
        size_t cnt = 0;
        rc = gsnap_neighbors(db, rd, CR_MARK + u, GSNAP_DIR_IN, GSNAP_TIME_MAX, u, buf, 1024, &cnt);
        ps.checks++;
        if (rc || cnt != mk) {
            VIOLATION(&ps, "version %llu: marker has %zu in-neighbours, batch gave %u", (unsigned long long)u, cnt, mk);
        } else {
            for (uint32_t i = 0; i < mk; i++) want[i] = cr_mark_src(seed, u, i);
            qsort(want, mk, sizeof *want, cr_cmp_u64);
            for (uint32_t i = 0; i < mk; i++)
                if (buf[i].node != want[i] || buf[i].version != u) {
                    VIOLATION(&ps, "version %llu: marker list differs at %u", (unsigned long long)u, i);
                    break;
                }
        }
        uint64_t deg = 0;
        rc = gsnap_degree(db, rd, CR_MARK + u, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg);
        ps.checks++;
        if (rc || deg != mk - (u < V))
            VIOLATION(&ps, "version %llu in view %llu: degree %llu, want %u", (unsigned long long)u,
                      (unsigned long long)V, (unsigned long long)deg, mk - (u < V));
        rc = gsnap_degree(db, rd, CR_MARK + V + 1, GSNAP_DIR_IN, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, &deg);
        ps.checks++;
        if (rc || deg != 0) VIOLATION(&ps, "view %llu sees edges of version %llu", (unsigned long long)V,
                                      (unsigned long long)V + 1);
        /* the slice model at a random (T, w) */
        model_extend(&m, seed, V);
        uint64_t w = 1 + test_rand(&rng) % V;
        int64_t T = (test_rand(&rng) & 1) ? GSNAP_TIME_MAX : (int64_t)(test_rand(&rng) % (1u << 20));
        for (uint32_t node = (uint32_t)(test_rand(&rng) % 8); node < SLICE; node += 8) {
            rc = gsnap_degree(db, rd, node, GSNAP_DIR_IN, T, w, &deg);
            uint64_t md = model_degree(&m, node, T, w);
            ps.checks++;
            if (rc || deg != md)
                VIOLATION(&ps, "node %u at (T=%lld, V=%llu): degree %llu, model %llu", node, (long long)T,
                          (unsigned long long)w, (unsigned long long)deg, (unsigned long long)md);
        }
        gsnap_read_end(rd);
        ps.ops++;
    }
    free(buf);
    free(m.ev);
    gsnap_db_close(db);
    report(fd, &ps);
}

/* ---- k-hop readers -------------------------------------------------------- */
static int in_sorted(const uint64_t *a, size_t n, uint64_t x) {
    size_t lo = 0, hi = n;
    while (lo < hi) { size_t mid = (lo + hi) / 2; if (a[mid] < x) lo = mid + 1; else hi = mid; }
    return lo < n && a[lo] == x;
}

/* distinct in-neighbours of node at (T, V), without node itself */
static size_t nbr_set(gsnap_db *db, uint64_t node, const gsnap_snapshot_info *in, uint64_t *out, size_t cap) {
    gsnap_nbr_iter *it = NULL;
    size_t n = 0;
    if (gsnap_nbr_iter_open(db, NULL, node, in->dir, in->at_t, in->at_version, &it)) return (size_t)-1;
    gsnap_nbr x;
    while (gsnap_nbr_iter_next(it, &x) == 0)
        if (x.node != node && (n == 0 || out[n - 1] != x.node) && n < cap) out[n++] = x.node;
    gsnap_nbr_iter_close(it);
    return n;
}

static void khop_reader(const char *dir, uint64_t rseed, int fd) {
    pstats ps = {"khop", 0, 0, 0};
    gsnap_db *db = open_db(dir);
    gsnap_snapshot *s = NULL;
    if (gsnap_snapshot_open(db, "soak", &s)) {
        VIOLATION(&ps, "snapshot open: %s", gsnap_db_errmsg(db));
        report(fd, &ps);
        gsnap_db_close(db);
        return;
    }
    gsnap_snapshot_info in = *gsnap_snapshot_get_info(s);
    uint64_t rng = rseed;
    uint64_t *n1 = malloc(4096 * sizeof *n1), *n2 = malloc(4096 * sizeof *n2);
    gsnap_khop_options ko = GSNAP_KHOP_OPTIONS_INIT;
    while (!g_stop) {
        uint64_t seeds[16];
        for (int i = 0; i < 16; i++) {
            uint64_t r = test_rand(&rng);
            /* mostly ordinary nodes, some marker nodes (large in-degree) */
            seeds[i] = (r & 7) ? r % CR_NODES : CR_MARK + 1 + (r >> 8) % (in.at_version ? in.at_version : 1);
        }
        /* io_uring and pread alike; only pread under valgrind (GSNAP_TEST_SMALL),
         * which cannot see the kernel filling io_uring buffers */
        ko.force_pread = test_small() || (test_rand(&rng) & 1);
        gsnap_khop_result *r = NULL;
        int rc = gsnap_khop(s, seeds, 16, 2, &ko, &r);
        ps.checks++;
        if (rc) { VIOLATION(&ps, "khop: %s (%s)", gsnap_strerror(rc), gsnap_db_errmsg(db)); continue; }
        for (int i = 0; i < 4; i++) { /* verify 4 of the 16 seeds against the store */
            const uint64_t *h1 = r->ids + r->off[i * 2], *h2 = r->ids + r->off[i * 2 + 1];
            size_t c1 = r->off[i * 2 + 1] - r->off[i * 2], c2 = r->off[i * 2 + 2] - r->off[i * 2 + 1];
            size_t e1 = nbr_set(db, seeds[i], &in, n1, 4096);
            ps.checks++;
            if (e1 == (size_t)-1) { VIOLATION(&ps, "iter open"); continue; }
            if (r->exact[i * 2] != e1 || (!r->capped[i * 2] && c1 != e1) || c1 > e1) {
                VIOLATION(&ps, "seed %llu hop 1: %zu ids (exact %llu, capped %d), store has %zu",
                          (unsigned long long)seeds[i], c1, (unsigned long long)r->exact[i * 2], r->capped[i * 2], e1);
                continue;
            }
            for (size_t j = 0; j < c1; j++)
                if (!in_sorted(n1, e1, h1[j])) { VIOLATION(&ps, "seed %llu hop 1: %llu is no neighbour",
                                                            (unsigned long long)seeds[i], (unsigned long long)h1[j]); break; }
            /* hop 2 ids: not the seed, not in N_1, an in-neighbour of some N_1 node */
            for (size_t j = 0; j < c2 && j < 8; j++) {
                uint64_t x = h2[j];
                int ok = x != seeds[i] && !in_sorted(n1, e1, x);
                int found = 0;
                for (size_t a = 0; ok && !found && a < e1; a++) {
                    size_t e = nbr_set(db, n1[a], &in, n2, 4096);
                    found = e != (size_t)-1 && in_sorted(n2, e, x);
                }
                ps.checks++;
                if (!ok || !found) { VIOLATION(&ps, "seed %llu hop 2: %llu is not at distance 2",
                                               (unsigned long long)seeds[i], (unsigned long long)x); break; }
            }
        }
        gsnap_khop_result_free(r);
        ps.ops++;
    }
    free(n1);
    free(n2);
    gsnap_snapshot_close(s);
    gsnap_db_close(db);
    report(fd, &ps);
}

/* ---- sampler with background OTF refresh ---------------------------------- */
static void sampler(const char *dir, uint64_t rseed, int fresh, int fd) {
    pstats ps = {"sampler", 0, 0, 0};
    gsnap_db *db = open_db(dir);
    gsnap_sampler_options so = GSNAP_SAMPLER_OPTIONS_INIT;
    so.mode = GSNAP_MODE_FSCR;
    so.layers = 2;
    so.fanouts[0] = 4;
    so.fanouts[1] = 6;
    so.gamma = 0.3;
    so.seed = rseed;
    if (fresh) so.max_staleness = 4; /* reads at the newest version, redraws stale entries */
    gsnap_sampler *s = NULL;
    const char *snap = "soak";
    int rc = gsnap_sampler_open(db, snap, &so, &s);
    if (rc == GSNAP_ENOTSUP) { /* no persistent caches in this build: in-memory cache */
        snap = NULL;
        rc = gsnap_sampler_open(db, NULL, &so, &s);
    }
    if (rc) {
        VIOLATION(&ps, "sampler open: %s (%s)", gsnap_strerror(rc), gsnap_db_errmsg(db));
        gsnap_db_close(db);
        report(fd, &ps);
        return;
    }
    snprintf(ps.role, sizeof ps.role, "%s%s", fresh ? "sampler-fresh" : "sampler", snap ? "" : "-mem");
    gsnap_snapshot_info in;
    memset(&in, 0, sizeof in);
    gsnap_snapshot_info_get(db, "soak", &in);
    uint64_t rng = rseed, last_gen = 0, last_ver = 0, batch = 0;
    while (!g_stop) {
        uint64_t seeds[32];
        for (int i = 0; i < 32; i++) seeds[i] = test_rand(&rng) % CR_NODES;
        if (batch % 8 == 0) {
            rc = gsnap_sampler_refresh_async(s);
            if (rc && rc != GSNAP_EBUSY) VIOLATION(&ps, "refresh_async: %s", gsnap_strerror(rc));
        }
        const void *buf = NULL;
        size_t len = 0;
        rc = gsnap_sampler_next(s, seeds, 32, &buf, &len);
        ps.checks++;
        if (rc) { VIOLATION(&ps, "next: %s (%s)", gsnap_strerror(rc), gsnap_db_errmsg(db)); break; }
        batch++;
        ps.checks++;
        if (gsnap_block_check(buf, len)) { VIOLATION(&ps, "batch %llu fails gsnap_block_check", (unsigned long long)batch); continue; }
        uint64_t b = 0, gen = 0, ver = 0;
        gsnap_block_info(buf, len, &b, &gen, &ver);
        ps.checks++;
        if (gen < last_gen || ver < last_ver)
            VIOLATION(&ps, "generation/version went down: %llu/%llu after %llu/%llu", (unsigned long long)gen,
                      (unsigned long long)ver, (unsigned long long)last_gen, (unsigned long long)last_ver);
        last_gen = gen;
        last_ver = ver;
        /* sampled edges are real: src is an in-neighbour of dst at the block's (T, V) */
        unsigned L = gsnap_block_layers(buf, len);
        for (unsigned l = 0; l < L; l++) {
            gsnap_block blk;
            if (gsnap_block_get(buf, len, l, &blk)) { VIOLATION(&ps, "block_get"); break; }
            for (uint32_t d = 0; d < blk.num_dst && d < 6; d++) {
                for (uint32_t e = blk.indptr[d]; e < blk.indptr[d + 1]; e++) {
                    uint64_t src = blk.src_ids[blk.indices[e]], dst = blk.src_ids[d];
                    gsnap_nbr_iter *it = NULL;
                    int found = 0;
                    if (gsnap_nbr_iter_open(db, NULL, dst, GSNAP_DIR_IN, snap ? in.at_t : GSNAP_TIME_MAX, ver, &it) == 0) {
                        gsnap_nbr x;
                        while (!found && gsnap_nbr_iter_next(it, &x) == 0) found = x.node == src;
                        gsnap_nbr_iter_close(it);
                    }
                    ps.checks++;
                    if (!found) VIOLATION(&ps, "batch %llu: sampled edge %llu -> %llu not in the store at v%llu",
                                          (unsigned long long)batch, (unsigned long long)src,
                                          (unsigned long long)dst, (unsigned long long)ver);
                }
            }
        }
        ps.ops++;
    }
    rc = gsnap_sampler_refresh_wait(s);
    if (rc && rc != GSNAP_NOTFOUND) VIOLATION(&ps, "refresh_wait: %s", gsnap_strerror(rc));
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    fprintf(stderr, "%s: %llu batches, %llu refreshes, generation %llu\n", ps.role, (unsigned long long)st.batches,
            (unsigned long long)st.refreshes, (unsigned long long)st.generation);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    report(fd, &ps);
}

/* ---- parent --------------------------------------------------------------- */
static int soak_main(int argc, char **argv) {
    unsigned secs = 300, readers = 3, khops = 2;
    uint64_t seed = 1;
    int verbose = 0, fresh = 0, c;
    (void)test_failures;
    (void)cr_run;
    (void)cr_print;
    while ((c = getopt(argc, argv, "t:r:k:s:fv")) != -1) {
        switch (c) {
        case 't': secs = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'r': readers = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'k': khops = (unsigned)strtoul(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        case 'v': verbose = 1; break;
        case 'f': fresh = 1; break;
        default: fprintf(stderr, "usage: soak [-t seconds] [-r readers] [-k khop_readers] [-s seed] [-f] [-v] DIR\n"); return 2;
        }
    }
    if (optind != argc - 1) { fprintf(stderr, "usage: soak [-t seconds] [-r readers] [-k khop_readers] [-s seed] [-f] [-v] DIR\n"); return 2; }
    const char *dir = argv[optind];
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return 2;
    /* initial data and the snapshot the k-hop readers and the sampler use */
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    o.max_readers = 126;
    if (gsnap_db_open(dir, &o, &db)) { fprintf(stderr, "soak: %s\n", gsnap_last_open_error()); return 2; }
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        gsnap_batch *b = NULL;
        if (cr_build_batch(db, seed, v + 1, &b) || gsnap_batch_commit(b, &v)) { fprintf(stderr, "soak: setup commit\n"); return 2; }
    }
    gsnap_snapshot_options sopt = GSNAP_SNAPSHOT_OPTIONS_INIT;
    sopt.hops = 2;
    sopt.fanouts[0] = 4;
    sopt.fanouts[1] = 6;
    if (gsnap_snapshot_create(db, "soak", &sopt, NULL)) { fprintf(stderr, "soak: snapshot: %s\n", gsnap_db_errmsg(db)); return 2; }
    gsnap_db_close(db);

    int fds[2];
    if (pipe(fds)) return 2;
    unsigned nproc = 3 + readers + khops; /* process 2 is the fresh sampler (-f) */
    static pid_t *pids; /* static: reachable in the children (valgrind leak check) */
    pids = calloc(nproc, sizeof *pids);
    for (unsigned i = 0; i < nproc; i++) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 2; }
        if (pid == 0) {
            close(fds[0]);
            signal(SIGTERM, on_term);
            uint64_t rs = cr_hash(seed, 1000 + i);
            if (i == 0) writer(dir, seed, fds[1]);
            else if (i == 1) sampler(dir, rs, 0, fds[1]);
            else if (i == 2) { if (fresh) sampler(dir, rs, 1, fds[1]); else report(fds[1], &(pstats){"(nofresh)", 0, 0, 0}); }
            else if (i < 3 + readers) reader(dir, seed, rs, fds[1]);
            else khop_reader(dir, rs, fds[1]);
            _exit(0);
        }
        pids[i] = pid;
    }
    close(fds[1]);
    for (unsigned t = 0; t < secs; t++) {
        sleep(1);
        if (verbose && t % 30 == 29) fprintf(stderr, "soak: %u s\n", t + 1);
    }
    for (unsigned i = 0; i < nproc; i++) kill(pids[i], SIGTERM);
    uint64_t total_viol = 0, bad_exit = 0;
    for (unsigned i = 0; i < nproc; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { bad_exit++; fprintf(stderr, "soak: process %u ended 0x%x\n", i, st); }
    }
    char buf[8192];
    size_t len = 0;
    ssize_t n;
    while ((n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
    buf[len] = 0;
    unsigned reports = 0;
    uint64_t versions = 0;
    printf("soak: %u s, seed %llu, 1 writer, %s, %u readers, %u k-hop readers\n", secs,
           (unsigned long long)seed, fresh ? "2 samplers (frozen, fresh)" : "1 sampler (frozen)", readers, khops);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char role[24];
        unsigned long long ops, checks, viol;
        if (sscanf(line, "%23s %llu %llu %llu", role, &ops, &checks, &viol) != 4) continue;
        reports++;
        if (role[0] == '(') continue;
        total_viol += viol;
        if (!strcmp(role, "writer")) versions = ops;
        printf("  %-14s %10llu ops %12llu checks %llu violations\n", role, ops, checks, viol);
    }
    /* the end state passes the checks */
    db = NULL;
    uint64_t problems = 0, sproblems = 0, latest = 0;
    int crc = gsnap_db_open(dir, &o, &db);
    struct cr_problems pc = {0, 0, 0};
    if (!crc) crc = gsnap_db_check(db, cr_report, &pc, &problems);
    if (!crc) crc = gsnap_snapshot_check(db, NULL, cr_report, &pc, &sproblems);
    if (db) gsnap_db_version(db, &latest);
    gsnap_db_close(db);
    printf("soak: %llu versions committed (latest %llu), end check rc %d, %llu + %llu problems, "
           "%llu violations, %llu bad exits\n", (unsigned long long)versions, (unsigned long long)latest, crc,
           (unsigned long long)problems, (unsigned long long)sproblems, (unsigned long long)total_viol,
           (unsigned long long)bad_exit);
    int ok = total_viol == 0 && bad_exit == 0 && reports == nproc && crc == 0 && problems == 0 && sproblems == 0;
    printf("soak: %s\n", ok ? "PASS (0 invariant violations)" : "FAIL");
    if (ok) { if (system(cmd)) {} }
    free(pids);
    return ok ? 0 : 1;
}

#ifndef SOAK_NO_MAIN
int main(int argc, char **argv) { return soak_main(argc, argv); }
#endif
