/*
 * cli/cmd_temporal.c -- `graphsnap temporal-sample` (temporal neighbour
 * sampling of (node, time) roots: uniform, recent, window; multi-hop as TGL)
 * and `graphsnap temporal-events` (the event stream in time order with
 * negative destinations).
 */
#include "cli/cli.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>

enum { O_FANOUTS = 1000, O_STRATEGY, O_WINDOW, O_INCLUSIVE, O_AT_VERSION, O_ROOTS, O_RANDOM, O_AT,
       O_BATCHES, O_SEED, O_IN, O_OUT, O_PRINT, O_JSON, O_BATCH_SIZE, O_NEGATIVES, O_LIMIT };

static const char ts_usage[] =
    "Usage: graphsnap temporal-sample --fanouts F1,..,FL [--strategy S] [--window W]\n"
    "                                 [--inclusive] [--at-version V] [--in|--out]\n"
    "                                 (--roots FILE | --random N [--at T])\n"
    "                                 [--batches B] [--seed S] [--print] [--json]\n"
    "\n"
    "Sample temporal mini-batches: for each root (node, t) up to F1 of the node's\n"
    "edge events with time < t (live at t under the store's delete rule), then F2\n"
    "of each sampled neighbour's events before the sampled edge's time, ... (TGL).\n"
    "Prints the number of roots and sampled events per layer and the throughput.\n"
    "\n"
    "Options:\n"
    "  --fanouts LIST    fanout per hop, the roots' own hop first (e.g. 10,10)\n"
    "  --strategy S      uniform (default), recent (the F most recent), window\n"
    "  --window W        window strategy: events in [t - W, t)\n"
    "  --inclusive       candidates with time <= t (default: strictly before t)\n"
    "  --at-version V    sample the store as of version V (default: latest)\n"
    "  --in, --out       events u -> root (default) or root -> w\n"
    "  --roots FILE      lines 'node time' ('-' = stdin), taken in batches of all of them\n"
    "  --random N        N random roots per batch (nodes with events) at time --at\n"
    "  --at T            time of the random roots (default: now)\n"
    "  --batches B       number of batches (default 1)\n"
    "  --seed S          random seed (default 1)\n"
    "  --print           print the first batch's sampled events (layer, root, root time,\n"
    "                    neighbour, edge time, version, dt)\n"
    "  --json            one JSON object on stdout\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 no such database.\n";

static const char te_usage[] =
    "Usage: graphsnap temporal-events [--batch-size N] [--negatives K] [--at-version V]\n"
    "                                 [--limit B] [--seed S] [--json]\n"
    "\n"
    "The store's add events in time order in batches of N (default 600), each with K\n"
    "(default 1) negative destinations drawn uniformly over the nodes seen so far.\n"
    "Prints 'batch src dst t version neg1 ..' per event (or, with --json, one JSON\n"
    "object with the batches), for the first B batches (default: all).\n"
    "\n"
    "Options:\n"
    "  --batch-size N    events per batch (default 600)\n"
    "  --negatives K     negative destinations per event (default 1)\n"
    "  --at-version V    the store version to read (default: the newest)\n"
    "  --limit B         print the first B batches only (default: all)\n"
    "  --seed S          seed of the negative draws (default 1)\n"
    "  --json            one JSON object on stdout\n"
    "  -d, --db DIR      database directory\n"
    "  -h, --help        show this help\n";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_fanouts(const char *text, gsnap_tsampler_options *o) {
    int64_t v[GSNAP_TS_MAX_LAYERS];
    unsigned n;
    if (cli_parse_list("--fanouts", text, 1, 1000000, 0, GSNAP_TS_MAX_LAYERS, v, &n)) return CLI_USAGE;
    for (unsigned i = 0; i < n; i++) o->fanouts[i] = (uint32_t)v[i];
    o->layers = n;
    return 0;
}

/* Lines "node time"; blank lines and '#' comments skipped. */
static int read_roots(const char *path, uint64_t **nodes, int64_t **times, size_t *n) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) { cli_err("--roots: cannot open '%s'", path); return CLI_ERR; }
    size_t cap = 0, m = 0, lineno = 0;
    uint64_t *nv = NULL;
    int64_t *tv = NULL;
    char line[512];
    int ret = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0) continue;
        char *end;
        errno = 0;
        if (*p == '-') goto bad;
        unsigned long long node = strtoull(p, &end, 10);
        if (end == p || errno || (*end != ' ' && *end != '\t' && *end != ',')) goto bad;
        p = end + 1;
        long long t = strtoll(p, &end, 10);
        if (end == p || errno) goto bad;
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (*end) goto bad;
        if (m == cap) {
            cap = cap ? cap * 2 : 1024;
            uint64_t *a = realloc(nv, cap * sizeof *a);
            if (a) nv = a;
            int64_t *b = a ? realloc(tv, cap * sizeof *b) : NULL;
            if (b) tv = b;
            if (!b) { cli_err("out of memory"); ret = CLI_ERR; goto out; }
        }
        nv[m] = node;
        tv[m++] = t;
        continue;
    bad:
        cli_err("--roots: %s:%zu: expected 'node time' (unsigned node id, signed time)", path, lineno);
        ret = CLI_ERR;
        goto out;
    }
    if (ferror(f)) { cli_err("--roots: error reading '%s'", path); ret = CLI_ERR; }
    else if (m == 0) { cli_err("--roots: '%s' holds no root", path); ret = CLI_ERR; }
out:
    if (f != stdin) fclose(f);
    if (ret) { free(nv); free(tv); return ret; }
    *nodes = nv;
    *times = tv;
    *n = m;
    return 0;
}

static const char *strategy_name(gsnap_ts_strategy s) {
    return s == GSNAP_TS_RECENT ? "recent" : s == GSNAP_TS_WINDOW ? "window" : "uniform";
}

int cmd_temporal_sample(int argc, char **argv) {
    static const struct option lo[] = {
        {"fanouts", required_argument, NULL, O_FANOUTS},
        {"strategy", required_argument, NULL, O_STRATEGY},
        {"window", required_argument, NULL, O_WINDOW},
        {"inclusive", no_argument, NULL, O_INCLUSIVE},
        {"at-version", required_argument, NULL, O_AT_VERSION},
        {"roots", required_argument, NULL, O_ROOTS},
        {"random", required_argument, NULL, O_RANDOM},
        {"at", required_argument, NULL, O_AT},
        {"batches", required_argument, NULL, O_BATCHES},
        {"seed", required_argument, NULL, O_SEED},
        {"in", no_argument, NULL, O_IN},
        {"out", no_argument, NULL, O_OUT},
        {"print", no_argument, NULL, O_PRINT},
        {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(ts_usage, lo, NULL);
    gsnap_tsampler_options so = GSNAP_TSAMPLER_OPTIONS_INIT;
    const char *roots_file = NULL;
    uint64_t random_n = 0, batches = 1;
    int64_t at = GSNAP_TIME_MAX;
    int have_fanouts = 0, have_window = 0, have_at = 0, print = 0, json = 0, c;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_FANOUTS:
            if (parse_fanouts(optarg, &so)) return CLI_USAGE;
            have_fanouts = 1;
            break;
        case O_STRATEGY:
            if (!strcmp(optarg, "uniform")) so.strategy = GSNAP_TS_UNIFORM;
            else if (!strcmp(optarg, "recent")) so.strategy = GSNAP_TS_RECENT;
            else if (!strcmp(optarg, "window")) so.strategy = GSNAP_TS_WINDOW;
            else return cli_usage_err("--strategy: '%s' is not one of uniform, recent, window", optarg);
            break;
        case O_WINDOW:
            if (cli_parse_i64("--window", optarg, &so.window)) return CLI_USAGE;
            if (so.window <= 0) return cli_usage_err("--window: %s is not a positive width", optarg);
            have_window = 1;
            break;
        case O_INCLUSIVE: so.inclusive = 1; break;
        case O_AT_VERSION:
            if (cli_parse_version("--at-version", optarg, &so.as_of)) return CLI_USAGE;
            break;
        case O_ROOTS: roots_file = optarg; break;
        case O_RANDOM:
            if (cli_parse_u64_range("--random", optarg, 1, 1u << 24, &random_n)) return CLI_USAGE;
            break;
        case O_AT:
            if (cli_parse_time("--at", optarg, &at)) return CLI_USAGE;
            have_at = 1;
            break;
        case O_BATCHES:
            if (cli_parse_u64_range("--batches", optarg, 1, UINT32_MAX, &batches)) return CLI_USAGE;
            break;
        case O_SEED:
            if (cli_parse_u64("--seed", optarg, &so.seed)) return CLI_USAGE;
            break;
        case O_IN: so.dir = GSNAP_DIR_IN; break;
        case O_OUT: so.dir = GSNAP_DIR_OUT; break;
        case O_PRINT: print = 1; break;
        case O_JSON: json = 1; break;
        }
    }
    if (cli_positionals(argc, argv, 0, 0, "arguments")) return CLI_USAGE;
    if (!have_fanouts) return cli_usage_err("--fanouts is required");
    if (!roots_file == !random_n) return cli_usage_err("give exactly one of --roots FILE and --random N");
    if (have_at && !random_n) return cli_usage_err("--at goes with --random (a roots file has its times)");
    if (so.strategy == GSNAP_TS_WINDOW && !have_window)
        return cli_usage_err("--strategy window needs --window W");
    if (have_window && so.strategy != GSNAP_TS_WINDOW)
        return cli_usage_err("--window goes with --strategy window");
    if (so.inclusive && at == GSNAP_TIME_MAX && random_n) at = GSNAP_TIME_MAX - 1;
    uint64_t *nodes = NULL;
    int64_t *times = NULL;
    size_t n = 0;
    int ret = 0, rc;
    gsnap_db *db = NULL;
    gsnap_tsampler *ts = NULL;
    unsigned char *first = NULL;
    size_t first_len = 0;
    if (roots_file && (ret = read_roots(roots_file, &nodes, &times, &n))) return ret;
    if (random_n) {
        n = (size_t)random_n;
        nodes = malloc(n * sizeof *nodes);
        times = malloc(n * sizeof *times);
        if (!nodes || !times) { cli_err("out of memory"); ret = CLI_ERR; goto done; }
        for (size_t i = 0; i < n; i++) times[i] = at;
    }
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db))) goto done;
    double t0 = now_s();
    if ((rc = gsnap_tsampler_open(db, &so, &ts))) { ret = cli_lib_err(db, rc, "opening the temporal sampler"); goto done; }
    double build = now_s() - t0;
    uint64_t per_layer[GSNAP_TS_MAX_LAYERS] = {0}, roots_layer[GSNAP_TS_MAX_LAYERS] = {0}, total = 0;
    t0 = now_s();
    for (uint64_t b = 0; b < batches; b++) {
        if (random_n && (rc = gsnap_tsampler_random_nodes(ts, b, n, nodes))) {
            if (rc == GSNAP_NOTFOUND) { cli_err("the database holds no event at this version in that direction"); ret = CLI_ERR; }
            else ret = cli_lib_err(NULL, rc, "random roots");
            goto done;
        }
        const void *buf;
        size_t len;
        if ((rc = gsnap_tsampler_sample(ts, nodes, times, n, b, &buf, &len))) {
            cli_err("sampling: %s", gsnap_tsampler_errmsg(ts));
            ret = cli_exit_code(rc);
            goto done;
        }
        for (unsigned l = 0; l < so.layers; l++) {
            gsnap_tblock v;
            gsnap_tblock_get(buf, len, l, &v);
            per_layer[l] += v.num_edges;
            roots_layer[l] += v.num_roots;
            total += v.num_edges;
        }
        if (b == 0 && print) {
            if (!(first = malloc(len))) { cli_err("out of memory"); ret = CLI_ERR; goto done; }
            memcpy(first, buf, len);
            first_len = len;
        }
    }
    double secs = now_s() - t0;
    uint64_t ver = gsnap_tsampler_version(ts), nev, nnodes;
    gsnap_tsampler_size(ts, &nev, &nnodes);
    if (json) {
        printf("{\"version\":%llu,\"strategy\":\"%s\",\"dir\":\"%s\",\"inclusive\":%s,\"window\":%lld,"
               "\"events\":%llu,\"nodes\":%llu,\"build_seconds\":%.6f,\"batches\":%llu,"
               "\"roots_per_batch\":%zu,\"layers\":[",
               (unsigned long long)ver, strategy_name(so.strategy), so.dir == GSNAP_DIR_IN ? "in" : "out",
               so.inclusive ? "true" : "false", (long long)(so.strategy == GSNAP_TS_WINDOW ? so.window : 0),
               (unsigned long long)nev, (unsigned long long)nnodes, build, (unsigned long long)batches, n);
        for (unsigned l = 0; l < so.layers; l++)
            printf("%s{\"fanout\":%u,\"roots\":%llu,\"sampled\":%llu}", l ? "," : "", so.fanouts[l],
                   (unsigned long long)roots_layer[l], (unsigned long long)per_layer[l]);
        printf("],\"sampled\":%llu,\"seconds\":%.6f,\"events_per_second\":%.1f",
               (unsigned long long)total, secs, secs > 0 ? (double)total / secs : 0.0);
        if (first) {
            printf(",\"first_batch\":[");
            for (unsigned l = 0; l < so.layers; l++) {
                gsnap_tblock v;
                gsnap_tblock_get(first, first_len, l, &v);
                printf("%s[", l ? "," : "");
                for (uint64_t r = 0; r < v.num_roots; r++)
                    for (uint64_t e = v.indptr[r]; e < v.indptr[r + 1]; e++)
                        printf("%s{\"root\":%llu,\"root_t\":%lld,\"nbr\":%llu,\"t\":%lld,\"version\":%llu,\"dt\":%lld}",
                               e ? "," : "", (unsigned long long)v.root_node[r], (long long)v.root_t[r],
                               (unsigned long long)v.nbr[e], (long long)v.edge_t[e],
                               (unsigned long long)v.edge_version[e], (long long)v.dt[e]);
                printf("]");
            }
            printf("]");
        }
        printf("}\n");
    } else {
        if (first) {
            printf("# layer root root_t nbr t version dt\n");
            for (unsigned l = 0; l < so.layers; l++) {
                gsnap_tblock v;
                gsnap_tblock_get(first, first_len, l, &v);
                for (uint64_t r = 0; r < v.num_roots; r++)
                    for (uint64_t e = v.indptr[r]; e < v.indptr[r + 1]; e++)
                        printf("%u %llu %lld %llu %lld %llu %lld\n", l, (unsigned long long)v.root_node[r],
                               (long long)v.root_t[r], (unsigned long long)v.nbr[e], (long long)v.edge_t[e],
                               (unsigned long long)v.edge_version[e], (long long)v.dt[e]);
            }
        }
        printf("version %llu, %llu events of %llu nodes (T-CSR built in %.3f s)\n", (unsigned long long)ver,
               (unsigned long long)nev, (unsigned long long)nnodes, build);
        for (unsigned l = 0; l < so.layers; l++)
            printf("layer %u: fanout %u, %llu roots, %llu sampled events\n", l, so.fanouts[l],
                   (unsigned long long)roots_layer[l], (unsigned long long)per_layer[l]);
        printf("%llu batches of %zu roots (%s), %llu sampled events in %.3f s: %.0f events/s\n",
               (unsigned long long)batches, n, strategy_name(so.strategy), (unsigned long long)total, secs,
               secs > 0 ? (double)total / secs : 0.0);
    }
done:
    free(first);
    gsnap_tsampler_close(ts);
    gsnap_db_close(db);
    free(nodes);
    free(times);
    return ret;
}

int cmd_temporal_events(int argc, char **argv) {
    static const struct option lo[] = {
        {"batch-size", required_argument, NULL, O_BATCH_SIZE},
        {"negatives", required_argument, NULL, O_NEGATIVES},
        {"at-version", required_argument, NULL, O_AT_VERSION},
        {"limit", required_argument, NULL, O_LIMIT},
        {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(te_usage, lo, NULL);
    gsnap_tstream_options so = GSNAP_TSTREAM_OPTIONS_INIT;
    uint64_t bs = 600, neg = 1, limit = UINT64_MAX;
    int json = 0, c;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_BATCH_SIZE:
            if (cli_parse_u64_range("--batch-size", optarg, 1, 1u << 24, &bs)) return CLI_USAGE;
            break;
        case O_NEGATIVES:
            if (cli_parse_u64_range("--negatives", optarg, 0, 1000, &neg)) return CLI_USAGE;
            break;
        case O_AT_VERSION:
            if (cli_parse_version("--at-version", optarg, &so.as_of)) return CLI_USAGE;
            break;
        case O_LIMIT:
            if (cli_parse_u64_range("--limit", optarg, 1, UINT64_MAX, &limit)) return CLI_USAGE;
            break;
        case O_SEED:
            if (cli_parse_u64("--seed", optarg, &so.seed)) return CLI_USAGE;
            break;
        case O_JSON: json = 1; break;
        }
    }
    if (cli_positionals(argc, argv, 0, 0, "arguments")) return CLI_USAGE;
    so.batch_size = (size_t)bs;
    so.negatives = (unsigned)neg;
    gsnap_db *db = NULL;
    gsnap_tstream *st = NULL;
    int ret, rc;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db))) return ret;
    if ((rc = gsnap_tstream_open(db, &so, &st))) { ret = cli_lib_err(db, rc, "opening the event stream"); goto done; }
    uint64_t nev, ver;
    gsnap_tstream_info(st, &nev, &ver);
    if (json) printf("{\"version\":%llu,\"events\":%llu,\"batches\":[", (unsigned long long)ver,
                     (unsigned long long)nev);
    gsnap_tstream_batch b;
    for (uint64_t k = 0; k < limit && (rc = gsnap_tstream_next(st, &b)) == 0; k++) {
        if (json) printf("%s{\"batch\":%llu,\"events\":[", k ? "," : "", (unsigned long long)b.batch);
        for (size_t i = 0; i < b.n; i++) {
            if (json) {
                printf("%s{\"src\":%llu,\"dst\":%llu,\"t\":%lld,\"version\":%llu,\"neg\":[", i ? "," : "",
                       (unsigned long long)b.src[i], (unsigned long long)b.dst[i], (long long)b.t[i],
                       (unsigned long long)b.version[i]);
                for (unsigned j = 0; j < b.negatives; j++)
                    printf("%s%llu", j ? "," : "", (unsigned long long)b.neg[i * b.negatives + j]);
                printf("]}");
            } else {
                printf("%llu %llu %llu %lld %llu", (unsigned long long)b.batch, (unsigned long long)b.src[i],
                       (unsigned long long)b.dst[i], (long long)b.t[i], (unsigned long long)b.version[i]);
                for (unsigned j = 0; j < b.negatives; j++)
                    printf(" %llu", (unsigned long long)b.neg[i * b.negatives + j]);
                printf("\n");
            }
        }
        if (json) printf("]}");
    }
    if (json) printf("]}\n");
    ret = 0;
done:
    gsnap_tstream_close(st);
    gsnap_db_close(db);
    return ret;
}
