/*
 * cli/cmd_sample.c -- `graphsnap sample` (mini-batch neighbour sampling with
 * throughput, hit rates and staleness) and `graphsnap refresh` (one OTF
 * refresh of a snapshot's caches, committed as its next generation).
 */
#include "cli/cli.h"
#include "cli/sample_adapt.h"
#include "common/common.h" /* gsnap_dec_u64 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { O_SNAPSHOT = 1000, O_FANOUTS, O_MODE, O_GAMMA, O_DELTA, O_PERIOD, O_ALPHA, O_THRESHOLD,
       O_STALE, O_SEEDS, O_RANDOM, O_BATCHES, O_BATCH_SIZE, O_SEED, O_IN, O_OUT, O_STAGE, O_JSON,
       O_FEATURES, O_LABELS, O_SHARED, O_SHARED_DIR, O_LIST_CACHE };

static const char sample_usage[] =
    "Usage: graphsnap sample [--snapshot NAME] --fanouts F1,..,FL [--mode MODE]\n"
    "                        [--gamma G] [--delta D] [--period T] [--alpha A]\n"
    "                        [--threshold K] [--max-staleness S]\n"
    "                        (--seeds FILE | --random N) [--batches B] [--batch-size N]\n"
    "                        [--seed S] [--in|--out] [--stage] [--json]\n"
    "                        [--features TABLE] [--labels TABLE]\n"
    "                        [--refresh-policy P] [--lambda LIST] [--kappa K] [--feedback LIST]\n"
    "                        [--adapt-window T] [--core-min N] [--core-max-bytes B]\n"
    "                        [--shared [--shared-dir DIR]] [--list-cache BYTES]\n"
    "\n"
    "Sample B mini-batches (one block per layer, DGL's MFG shape) and print the\n"
    "throughput, cache hit rates per layer, refreshes and staleness.\n"
    "\n"
    "Options:\n"
    "  --snapshot NAME    serve the cached modes from (and refresh into) this snapshot's\n"
    "                     (hop, node) table; without it they cache in memory\n"
    "  --fanouts LIST     fanout per layer, input layer first (DGL order), -1 = all\n"
    "  --mode MODE        fbl (default), fcr, fcr-sc, pscr, pscr-sc, fscr, fscr-sc, pcf, pcf-sc\n"
    "  --gamma G          OTF refresh share of each entry (default 0.15)\n"
    "  --delta D          PCF: share of each sample served from the cache (default 0.4)\n"
    "  --period T         refresh every T batches (default 50; 0 = never)\n"
    "  --alpha A          cache amplification (default: the snapshot's, else 2)\n"
    "  --threshold K      cache only nodes of degree > K (default 0)\n"
    "  --max-staleness S  read the newest version; redraw a cached entry whose node got\n"
    "                     edges more than S versions after it was drawn (default: frozen)\n"
    "  --seeds FILE       seed node ids (whitespace separated), taken in turn\n"
    "  --random N         N random seed nodes per batch\n"
    "  --batches B        number of mini-batches (default 100)\n"
    "  --batch-size N     seeds per batch with --seeds (default 1024)\n"
    "  --seed S           random seed (default 1)\n"
    "  --in, --out        direction without a snapshot (default --in)\n"
    "  --stage            also stage every batch (pinned buffers -> device, or host buffers)\n"
    "  --features TABLE   gather this attribute table's rows of the input nodes into each batch\n"
    "  --labels TABLE     gather this attribute table's rows of the seeds into each batch\n"
    SAMPLE_ADAPT_USAGE
    "  --shared           share the decoded cache image with samplers in other processes\n"
    "                     (published read-only in DIR, mapped by each; cached modes)\n"
    "  --shared-dir DIR   where shared images are published (default $GSNAP_SHARED_DIR,\n"
    "                     else /dev/shm)\n"
    "  --list-cache BYTES decoded neighbour lists read from the store kept across batches\n"
    "                     while the store's runs stay the same (K, M, G suffixes;\n"
    "                     default 256M; 0 = none)\n"
    "  --json             one JSON object on stdout\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 no such database or snapshot.\n";

static const char refresh_usage[] =
    "Usage: graphsnap refresh --snapshot NAME [--mode MODE] [--fanouts F1,..,FL]\n"
    "                         [--gamma G] [--alpha A] [--threshold K] [--seed S] [--json]\n"
    "\n"
    "One OTF refresh of the snapshot's caches in one write transaction, committed as\n"
    "its next generation: for fscr/pscr/pcf (and -sc) a gamma share of every cached\n"
    "entry is replaced by fresh neighbours, for fcr/fcr-sc every entry is redrawn.\n"
    "The mode picks the cache layout (per-layer caches or the shared one, hop 0).\n"
    "Samplers running meanwhile switch to the new generation at their next batch.\n"
    "\n"
    "Options:\n"
    "  --fanouts LIST   fanouts as given to the samplers (default: the snapshot's)\n"
    "  --mode MODE      default fscr\n"
    "  --gamma G        default 0.15\n"
    "  --json           one JSON object on stdout\n";

typedef struct {
    gsnap_sampler_options so;
    const char *snapshot, *seeds_file;
    uint64_t random_n, batches, batch_size;
    int stage, json, have_fanouts;
    uint64_t attr_bytes; /* feature + label bytes gathered (--features/--labels) */
    sample_adapt_args aa; /* --feedback (cmd_sample_adapt.c) */
} sample_args;

static int parse_fanouts(const char *text, gsnap_sampler_options *so) {
    int64_t v[GSNAP_MAX_LAYERS];
    unsigned n;
    if (cli_parse_list("--fanouts", text, 1, 1000000, 1, GSNAP_MAX_LAYERS, v, &n)) return CLI_USAGE;
    for (unsigned i = 0; i < n; i++) so->fanouts[i] = (int32_t)v[i];
    so->layers = n;
    return 0;
}

static int parse_common(int c, const char *arg, sample_args *a) {
    double d;
    uint64_t u;
    int64_t i;
    int rc = 0;
    switch (c) {
    case O_SNAPSHOT: a->snapshot = arg; break;
    case O_FANOUTS: rc = parse_fanouts(arg, &a->so); a->have_fanouts = 1; break;
    case O_MODE:
        if (gsnap_sample_mode_parse(arg, &a->so.mode))
            rc = cli_usage_err("--mode: unknown mode '%s'", arg);
        break;
    case O_GAMMA:
        if (!(rc = cli_parse_double("--gamma", arg, &d))) {
            if (!(d > 0 && d <= 1)) rc = cli_usage_err("--gamma: must be in (0, 1]");
            a->so.gamma = d;
        }
        break;
    case O_DELTA:
        if (!(rc = cli_parse_double("--delta", arg, &d))) {
            if (!(d >= 0 && d <= 1)) rc = cli_usage_err("--delta: must be in [0, 1]");
            a->so.delta = d == 0 ? 1e-9 : d;
        }
        break;
    case O_ALPHA:
        if (!(rc = cli_parse_double("--alpha", arg, &d))) {
            if (!(d >= 1)) rc = cli_usage_err("--alpha: must be >= 1");
            a->so.alpha = d;
        }
        break;
    case O_PERIOD:
        if (!(rc = cli_parse_u64_range("--period", arg, 0, UINT32_MAX, &u))) a->so.period = (uint32_t)u;
        break;
    case O_THRESHOLD: rc = cli_parse_u64("--threshold", arg, &a->so.threshold); break;
    case O_STALE:
        if (!(rc = cli_parse_i64("--max-staleness", arg, &i))) a->so.max_staleness = i;
        break;
    case O_SEED: rc = cli_parse_u64("--seed", arg, &a->so.seed); break;
    case O_JSON: a->json = 1; break;
    default: rc = cli_usage_err("internal: unhandled option");
    }
    return rc;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Node ids separated by white space; each an unsigned decimal (no sign:
 * fscanf's %llu took "-1" as 2^64-1 and wrapped what overflowed). An error
 * names the file, line and token. */
static int read_seeds(const char *path, uint64_t **out, size_t *n) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) { cli_err("--seeds: cannot open '%s'", path); return CLI_ERR; }
    size_t cap = 1024, m = 0, lcap = 0;
    uint64_t *v = malloc(cap * sizeof *v);
    char *line = NULL;
    ssize_t len;
    unsigned long long lineno = 0;
    int rc = 0;
    if (!v) { cli_err("out of memory"); rc = CLI_ERR; }
    while (!rc && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len)) {
            cli_err("--seeds: %s:%llu: a NUL byte in the line", path, lineno);
            rc = CLI_ERR;
            break;
        }
        for (char *save = NULL, *tok = strtok_r(line, " \t\r\n\v\f", &save); tok && !rc;
             tok = strtok_r(NULL, " \t\r\n\v\f", &save)) {
            uint64_t x = 0;
            const char *end = tok;
            if (gsnap_dec_u64(&end, &x) || *end) { /* digits only, below 2^64 */
                cli_err("--seeds: %s:%llu: '%s' is not a node id (an unsigned integer below 2^64)", path, lineno,
                        tok);
                rc = CLI_ERR;
            } else if (m == cap) {
                uint64_t *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv) { cli_err("out of memory"); rc = CLI_ERR; }
                else { v = nv; cap *= 2; }
            }
            if (!rc) v[m++] = x;
        }
    }
    if (!rc && ferror(f)) { cli_err("--seeds: cannot read '%s'", path); rc = CLI_ERR; }
    free(line);
    if (f != stdin) fclose(f);
    if (!rc && m == 0) { cli_err("--seeds: '%s' holds no node ids", path); rc = CLI_ERR; }
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = m;
    return 0;
}

static void print_result(gsnap_sampler *s, const sample_args *a, const gsnap_sampler_stats *st,
                         double secs, int staged_dev) {
    double eps = secs > 0 ? (double)st->edges / secs : 0;
    unsigned L = a->so.layers;
    if (a->json) {
        printf("{\"mode\":\"%s\",\"snapshot\":", gsnap_sample_mode_name(a->so.mode));
        cli_json_str(stdout, a->snapshot);
        printf(",\"batches\":%llu,\"seeds\":%llu,\"edges\":%llu,\"seconds\":%.6f,"
               "\"edges_per_second\":%.1f,\"batches_per_second\":%.2f,\"generation\":%llu,"
               "\"refreshes\":%llu,\"refreshed_entries\":%llu,\"replaced_ids\":%llu,"
               "\"stale_marked\":%llu,\"max_staleness_seen\":%llu,\"staged\":\"%s\",",
               (unsigned long long)st->batches, (unsigned long long)st->seeds,
               (unsigned long long)st->edges, secs, eps,
               secs > 0 ? (double)st->batches / secs : 0, (unsigned long long)st->generation,
               (unsigned long long)st->refreshes, (unsigned long long)st->refreshed_entries,
               (unsigned long long)st->replaced_ids, (unsigned long long)st->stale_marked,
               (unsigned long long)st->max_staleness_seen,
               !a->stage ? "no" : staged_dev ? "device" : "host");
        printf("\"attr_bytes\":%llu,\"gather_seconds\":%.6f,", (unsigned long long)a->attr_bytes, st->t_gather);
        printf("\"list_hits\":%llu,\"list_misses\":%llu,\"lists_kept\":%llu,\"list_bytes\":%llu,",
               (unsigned long long)st->list_hits, (unsigned long long)st->list_misses,
               (unsigned long long)st->lists_kept, (unsigned long long)st->list_bytes);
        printf("\"shared_bytes\":%llu,\"shared_attached\":%llu,\"shared_published\":%llu,"
               "\"shared_refused\":%llu,\"layers\":[", (unsigned long long)st->shared_bytes,
               (unsigned long long)st->shared_attached, (unsigned long long)st->shared_published,
               (unsigned long long)st->shared_refused);
        for (unsigned i = 0; i < L; i++) {
            const gsnap_layer_stats *l = &st->layer[i];
            uint64_t tot = l->hits + l->misses;
            printf("%s{\"layer\":%u,\"fanout\":%d,\"hits\":%llu,\"misses\":%llu,\"hit_rate\":%.4f,"
                   "\"stale_hits\":%llu,\"refreshed\":%llu,\"edges\":%llu,\"bytes_read\":%llu,"
                   "\"seconds\":%.6f}", i ? "," : "", i, a->so.fanouts[i],
                   (unsigned long long)l->hits, (unsigned long long)l->misses,
                   tot ? (double)l->hits / (double)tot : 0.0, (unsigned long long)l->stale_hits,
                   (unsigned long long)l->refreshed, (unsigned long long)l->edges,
                   (unsigned long long)l->bytes_read, l->seconds);
        }
        printf("]");
        sample_adapt_print(s, 1); /* cmd_sample_adapt.c: policy, gammas, core */
        printf("}\n");
        return;
    }
    printf("mode %s, %llu batches, %llu seeds, %llu sampled edges in %.3f s\n",
           gsnap_sample_mode_name(a->so.mode), (unsigned long long)st->batches,
           (unsigned long long)st->seeds, (unsigned long long)st->edges, secs);
    printf("throughput: %.0f edges/s, %.1f batches/s\n", eps,
           secs > 0 ? (double)st->batches / secs : 0);
    for (unsigned i = 0; i < L; i++) {
        const gsnap_layer_stats *l = &st->layer[i];
        uint64_t tot = l->hits + l->misses;
        printf("layer %u (fanout %d): hit rate %.1f%% (%llu hits, %llu misses), %llu stale hits, "
               "%llu refreshed, %llu edges\n", i, a->so.fanouts[i],
               tot ? 100.0 * (double)l->hits / (double)tot : 0.0, (unsigned long long)l->hits,
               (unsigned long long)l->misses, (unsigned long long)l->stale_hits,
               (unsigned long long)l->refreshed, (unsigned long long)l->edges);
    }
    if (a->so.mode == GSNAP_MODE_FCR || a->so.mode == GSNAP_MODE_FCR_SC)
        /* FCR rebuilds every entry from scratch: no per-id replacement count */
        printf("generation %llu, %llu refreshes (%llu entries rebuilt)\n",
               (unsigned long long)st->generation, (unsigned long long)st->refreshes,
               (unsigned long long)st->refreshed_entries);
    else
        printf("generation %llu, %llu refreshes (%llu entries, %llu ids replaced)\n",
               (unsigned long long)st->generation, (unsigned long long)st->refreshes,
               (unsigned long long)st->refreshed_entries, (unsigned long long)st->replaced_ids);
    printf("staleness: %llu entries marked stale, max staleness served %llu versions\n",
           (unsigned long long)st->stale_marked, (unsigned long long)st->max_staleness_seen);
    if (st->list_hits + st->list_misses)
        printf("kept lists: %llu lists, %.1f MB, %.1f%% of store reads answered from them\n",
               (unsigned long long)st->lists_kept, (double)st->list_bytes / 1e6,
               100.0 * (double)st->list_hits / (double)(st->list_hits + st->list_misses));
    if (a->so.shared)
        printf("shared image: %.1f MB mapped (%llu attached, %llu published, %llu refused)\n",
               (double)st->shared_bytes / 1e6, (unsigned long long)st->shared_attached,
               (unsigned long long)st->shared_published, (unsigned long long)st->shared_refused);
    if (a->stage) printf("staging: %s\n", staged_dev ? "device buffers (CUDA)" : "host buffers (no CUDA device)");
    if (a->so.features || a->so.labels)
        printf("gather: %.1f MB of features/labels in %.3f s (%.1f MB/s)\n", (double)a->attr_bytes / 1e6,
               st->t_gather, st->t_gather > 0 ? (double)a->attr_bytes / 1e6 / st->t_gather : 0.0);
    if (a->so.policy != GSNAP_REFRESH_FIXED || a->so.core_min) sample_adapt_print(s, 0);
}

/* The batches: seeds from the pool in turn or random; --feedback reports;
 * staging; feature/label bytes counted into a->attr_bytes. */
static int sample_loop(sample_args *a, gsnap_db *db, gsnap_sampler *s, gsnap_stager *stg,
                       const uint64_t *pool, size_t npool, uint64_t *seeds, size_t per) {
    int rc;
    size_t pos = 0;
    for (uint64_t b = 0; b < a->batches; b++) {
        if (a->random_n) {
            gsnap_sampler_random_seeds(s, b, per, seeds);
        } else {
            for (size_t i = 0; i < per; i++) seeds[i] = pool[(pos + i) % npool];
            pos = (pos + per) % npool;
        }
        const void *buf;
        size_t len;
        if ((rc = sample_adapt_before(s, &a->aa, a->so.layers))) return cli_lib_err(db, rc, "--feedback");
        if ((rc = gsnap_sampler_next(s, seeds, per, &buf, &len))) return cli_lib_err(db, rc, "sampling");
        gsnap_batch_attr ba;
        if (gsnap_block_features(buf, len, &ba) == 0) a->attr_bytes += ba.rows * ba.dim * gsnap_dtype_size(ba.dtype);
        if (gsnap_block_labels(buf, len, &ba) == 0) a->attr_bytes += ba.rows * ba.dim * gsnap_dtype_size(ba.dtype);
        if (stg) {
            unsigned tk;
            if ((rc = gsnap_stager_submit(stg, buf, len, &tk))) return cli_lib_err(NULL, rc, "staging");
        }
    }
    return 0;
}

static const struct option sample_lo[] = {
    {"snapshot", required_argument, NULL, O_SNAPSHOT},
    {"fanouts", required_argument, NULL, O_FANOUTS},
    {"mode", required_argument, NULL, O_MODE},
    {"gamma", required_argument, NULL, O_GAMMA},
    {"delta", required_argument, NULL, O_DELTA},
    {"period", required_argument, NULL, O_PERIOD},
    {"alpha", required_argument, NULL, O_ALPHA},
    {"threshold", required_argument, NULL, O_THRESHOLD},
    {"max-staleness", required_argument, NULL, O_STALE},
    {"seeds", required_argument, NULL, O_SEEDS},
    {"random", required_argument, NULL, O_RANDOM},
    {"batches", required_argument, NULL, O_BATCHES},
    {"batch-size", required_argument, NULL, O_BATCH_SIZE},
    {"seed", required_argument, NULL, O_SEED},
    {"in", no_argument, NULL, O_IN},
    {"out", no_argument, NULL, O_OUT},
    {"stage", no_argument, NULL, O_STAGE},
    {"json", no_argument, NULL, O_JSON},
    {"features", required_argument, NULL, O_FEATURES},
    {"labels", required_argument, NULL, O_LABELS},
    {"shared", no_argument, NULL, O_SHARED},
    {"shared-dir", required_argument, NULL, O_SHARED_DIR},
    {"list-cache", required_argument, NULL, O_LIST_CACHE},
    SAMPLE_ADAPT_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* Defaults and flags of `sample` into *a; *help = 1 after --help. */
static int sample_parse(int argc, char **argv, sample_args *a, int *help) {
    cli_opts o = CLI_OPTS_INIT(sample_usage, sample_lo, NULL);
    memset(a, 0, sizeof *a);
    gsnap_sampler_options init = GSNAP_SAMPLER_OPTIONS_INIT;
    a->so = init;
    a->so.seed = 1;
    a->so.period = 50;
    a->batches = 100;
    a->batch_size = 1024;
    int c;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: *help = 1; return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_SEEDS: a->seeds_file = optarg; break;
        case O_RANDOM:
            if (cli_parse_u64_range("--random", optarg, 1, 1u << 24, &a->random_n)) return CLI_USAGE;
            break;
        case O_BATCHES:
            if (cli_parse_u64_range("--batches", optarg, 1, UINT32_MAX, &a->batches)) return CLI_USAGE;
            break;
        case O_BATCH_SIZE:
            if (cli_parse_u64_range("--batch-size", optarg, 1, 1u << 24, &a->batch_size)) return CLI_USAGE;
            break;
        case O_IN: a->so.dir = GSNAP_DIR_IN; break;
        case O_OUT: a->so.dir = GSNAP_DIR_OUT; break;
        case O_STAGE: a->stage = 1; break;
        case O_FEATURES: a->so.features = optarg; break;
        case O_LABELS: a->so.labels = optarg; break;
        case O_SHARED: a->so.shared = 1; break;
        case O_SHARED_DIR: a->so.shared = 1; a->so.shared_dir = optarg; break;
        case O_LIST_CACHE: {
            uint64_t b;
            if (cli_parse_size("--list-cache", optarg, &b)) return CLI_USAGE;
            if (b > INT64_MAX) return cli_usage_err("--list-cache: %s is too large", optarg);
            a->so.list_cache_bytes = b ? (int64_t)b : -1; /* the option's 0 means none */
            break;
        }
        default:
            if (c >= O_ADAPT_FIRST && c <= O_ADAPT_LAST) {
                if (sample_adapt_parse(c, optarg, &a->so, &a->aa)) return CLI_USAGE;
                break;
            }
            if (parse_common(c, optarg, a)) return CLI_USAGE;
        }
    }
    return 0;
}

int cmd_sample(int argc, char **argv) {
    sample_args a;
    int help = 0, rc, ret;
    if ((ret = sample_parse(argc, argv, &a, &help)) || help) return ret;
    gsnap_db *db = NULL;
    gsnap_sampler *s = NULL;
    gsnap_stager *stg = NULL;
    uint64_t *pool = NULL, *seeds = NULL;
    size_t npool = 0;
    if (cli_positionals(argc, argv, 0, 0, "arguments")) return CLI_USAGE;
    if (!a.have_fanouts) return cli_usage_err("--fanouts is required");
    if (sample_adapt_check(&a.so, &a.aa)) return CLI_USAGE;
    if (!a.seeds_file == !a.random_n) return cli_usage_err("give exactly one of --seeds FILE and --random N");
    if (a.seeds_file && (ret = read_seeds(a.seeds_file, &pool, &npool))) return ret;
    size_t per = a.random_n ? (size_t)a.random_n : (size_t)a.batch_size;
    if (!(seeds = malloc(per * sizeof *seeds))) { cli_err("out of memory"); ret = CLI_ERR; goto done; }
    if ((ret = cli_open_db(NULL, a.snapshot ? CLI_DB_WRITE : CLI_DB_READ, &db))) goto done;
    if ((rc = gsnap_sampler_open(db, a.snapshot, &a.so, &s))) { ret = cli_lib_err(db, rc, "opening the sampler"); goto done; }
    if (a.stage && (rc = gsnap_stager_open(1u << 20, 2, 0, &stg))) { ret = cli_lib_err(NULL, rc, "staging"); goto done; }
    double t0 = now_s();
    if ((ret = sample_loop(&a, db, s, stg, pool, npool, seeds, per))) goto done;
    double secs = now_s() - t0;
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(s, &st);
    print_result(s, &a, &st, secs, stg ? gsnap_stager_on_device(stg) : 0);
    if (gsnap_sampler_shared_note(s)) fprintf(stderr, "graphsnap sample: shared image: %s\n", gsnap_sampler_shared_note(s));
done:
    gsnap_stager_close(stg);
    gsnap_sampler_close(s);
    gsnap_db_close(db);
    free(pool);
    free(seeds);
    return ret;
}

int cmd_refresh(int argc, char **argv) {
    static const struct option lo[] = {
        {"snapshot", required_argument, NULL, O_SNAPSHOT},
        {"fanouts", required_argument, NULL, O_FANOUTS},
        {"mode", required_argument, NULL, O_MODE},
        {"gamma", required_argument, NULL, O_GAMMA},
        {"alpha", required_argument, NULL, O_ALPHA},
        {"threshold", required_argument, NULL, O_THRESHOLD},
        {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(refresh_usage, lo, NULL);
    sample_args a;
    memset(&a, 0, sizeof a);
    gsnap_sampler_options init = GSNAP_SAMPLER_OPTIONS_INIT;
    a.so = init;
    a.so.mode = GSNAP_MODE_FSCR;
    a.so.seed = 1;
    gsnap_db *db = NULL;
    gsnap_snapshot *snap = NULL;
    int c, rc, ret = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        default:
            if (parse_common(c, optarg, &a)) return CLI_USAGE;
        }
    }
    if (cli_positionals(argc, argv, 0, 0, "arguments")) return CLI_USAGE;
    if (!a.snapshot) return cli_usage_err("--snapshot NAME is required");
    if (a.so.mode == GSNAP_MODE_FBL) return cli_usage_err("--mode fbl has no cache to refresh");
    if ((ret = cli_open_db(NULL, CLI_DB_WRITE, &db))) goto done;
    if (!a.have_fanouts) { /* the snapshot's own fanouts, DGL order */
        if ((rc = gsnap_snapshot_open(db, a.snapshot, &snap))) { ret = cli_lib_err(db, rc, "opening the snapshot"); goto done; }
        const gsnap_snapshot_info *in = gsnap_snapshot_get_info(snap);
        a.so.layers = in->hops;
        for (unsigned h = 0; h < in->hops; h++) a.so.fanouts[in->hops - 1 - h] = (int32_t)in->fanouts[h];
        gsnap_snapshot_close(snap);
        snap = NULL;
    }
    /* gsnap_snapshot_refresh_caches(), with its two stages timed apart */
    gsnap_sampler *smp = NULL;
    double t0 = now_s();
    if ((rc = gsnap_sampler_open(db, a.snapshot, &a.so, &smp))) { ret = cli_lib_err(db, rc, "refresh"); goto done; }
    double topen = now_s() - t0;
    t0 = now_s();
    rc = gsnap_sampler_refresh(smp);
    double secs = now_s() - t0;
    gsnap_sampler_stats st;
    gsnap_sampler_stats_get(smp, &st);
    gsnap_sampler_close(smp);
    if (rc) { ret = cli_lib_err(db, rc, "refresh"); goto done; }
    uint64_t gen = st.generation;
    if (a.json) {
        printf("{\"snapshot\":");
        cli_json_str(stdout, a.snapshot);
        printf(",\"mode\":\"%s\",\"gamma\":%g,\"generation\":%llu,\"entries\":%llu,"
               "\"replaced_ids\":%llu,\"open_seconds\":%.6f,\"seconds\":%.6f}\n",
               gsnap_sample_mode_name(a.so.mode), a.so.gamma ? a.so.gamma : 0.15,
               (unsigned long long)gen, (unsigned long long)st.refreshed_entries,
               (unsigned long long)st.replaced_ids, topen, secs);
    } else {
        printf("snapshot %s: refreshed (%s, gamma %g), generation %llu: %llu entries, %llu ids "
               "replaced, %.3f s (open %.3f s)\n", a.snapshot, gsnap_sample_mode_name(a.so.mode),
               a.so.gamma ? a.so.gamma : 0.15, (unsigned long long)gen,
               (unsigned long long)st.refreshed_entries, (unsigned long long)st.replaced_ids,
               secs, topen);
    }
done:
    gsnap_snapshot_close(snap);
    gsnap_db_close(db);
    return ret;
}
