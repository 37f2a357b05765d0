/*
 * cli/cmd_snapshot.c -- `graphsnap snapshot create|list|show|drop`,
 * `graphsnap khop`, `graphsnap check`.
 */
#include "cli/cli.h"
#include "cli/progress.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_HOPS = 1000, O_FANOUTS, O_ALPHA, O_AT, O_VERSION, O_IN, O_OUT, O_SEED, O_MEM, O_JSON,
       O_SNAPSHOT, O_QD, O_PREAD, O_BUFFERED, O_STORE_ONLY, O_HOPSETS, O_CAPS };

static const char snapshot_usage[] =
    "Usage: graphsnap snapshot create NAME [--hops K] [--fanouts F1,..,FK] [--alpha A]\n"
    "                                      [--at T] [--version V] [--in|--out] [--seed S]\n"
    "                                      [--mem SIZE] [--hop-sets auto|exact|sampled]\n"
    "                                      [--caps C1,..,CK] [--json]\n"
    "       graphsnap snapshot advance NAME [--at T|keep] [--version V] [--json]\n"
    "       graphsnap snapshot list [--json]\n"
    "       graphsnap snapshot show NAME [--json]\n"
    "       graphsnap snapshot drop NAME\n"
    "\n"
    "Snapshots of the graph at (T, V): per hop h = 1..K a slab file with, for every\n"
    "node v, N_h(v) (the nodes at distance exactly h, at most 508 of them, sampled\n"
    "uniformly when more), and a (hop, node) table with the cached neighbour lists\n"
    "of layer h (ceil(A * F_h) sampled in-neighbours).\n"
    "\n"
    "Options (create):\n"
    "  --hops K          number of hops, 1..16 (default 2)\n"
    "  --fanouts LIST    fanout per hop, comma-separated (one value: all hops; default 10)\n"
    "  --alpha A         cache amplification (default 2)\n"
    "  --at T            event time, or 'now' (default now)\n"
    "  --version V       store version, or 'latest' (default latest)\n"
    "  --in, --out       sampling direction (default --in)\n"
    "  --seed S          random seed of all samples (default 1)\n"
    "  --mem SIZE        sort memory budget, e.g. 512M (default 256M); past it, runs spill to disk\n"
    "  --hop-sets KIND   exact: N_h = nodes at distance exactly h (cost: the exact relation);\n"
    "                    sampled: D_h = bottom-c_h of the walk set R_h under one hash order\n"
    "                    (cost O(k c |E|), can be advanced); auto (default): exact when a\n"
    "                    walk-count estimate of the exact relation is at most 64 |E|, else sampled\n"
    "  --caps LIST       sampled: c_1..c_K, 1..508 (default c_1 = 508, c_h = |E|/nodes, so the\n"
    "                    slabs hold at most K |E| ids); made non-increasing\n"
    "\n"
    "advance: move a sampled snapshot to (T, V) (default: same T, latest version),\n"
    "recomputing only lists whose inputs changed; one new snapshot version.\n"
    "  --json            print the result as JSON\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 no such database or snapshot.\n";

static const char khop_usage[] =
    "Usage: graphsnap khop NODE... --snapshot NAME --hops K [--json] [--qd N] [--pread] [--buffered]\n"
    "\n"
    "N_1..N_K of each NODE from the snapshot's slab files (io_uring, O_DIRECT).\n"
    "Text output: one line per node and hop: NODE<TAB>HOP<TAB>|N_h|<TAB>ids (space-separated);\n"
    "'~' before the count marks a capped (sampled) list, whose count is the exact size.\n"
    "  --snapshot NAME   snapshot to read (required)\n"
    "  --hops K          hops 1..k of the snapshot (default: all)\n"
    "  --qd N            io_uring queue depth (default 64)\n"
    "  --pread           use pread instead of io_uring\n"
    "  --buffered        no O_DIRECT\n"
    "  --json            print {\"nodes\":[{\"node\":..,\"hops\":[{\"hop\":..,\"size\":..,\"capped\":..,\"ids\":[..]}]}]}\n";

static const char check_usage[] =
    "Usage: graphsnap check [--snapshot NAME] [--store-only] [--json]\n"
    "\n"
    "Verify the store (every chunk checksum and order) and every snapshot (every slab\n"
    "block checksum, every table entry's slab pointer and record checksum).\n"
    "Prints one line per problem, then the store format ('store format N') and the\n"
    "count; exit 0 when all is well, 1 when anything is wrong (2 for a NAME\n"
    "that is not a snapshot name, 3 for no such snapshot).\n"
    "  --snapshot NAME   check only this snapshot (and the store)\n"
    "  --store-only      skip the snapshots\n"
    "  --json            print {\"problems\":N,\"store_format\":N,\"lines\":[...]}\n"
    "\n"
    "Progress (phase, percent, ETA) is shown on stderr when stderr is a terminal\n"
    "and --json is not given; GRAPHSNAP_PROGRESS=1 forces it, =0 turns it off.\n";

static const char *dir_name(gsnap_dir d) { return d == GSNAP_DIR_OUT ? "out" : "in"; }

/* "now" for GSNAP_TIME_MAX (JSON: null), else the number. */
static void at_text(int64_t t, char *buf, size_t cap) {
    if (t == GSNAP_TIME_MAX) snprintf(buf, cap, "now");
    else snprintf(buf, cap, "%lld", (long long)t);
}

static void print_info_text(const gsnap_snapshot_info *in) {
    printf("name\t%s\nstatus\t%s\nformat\t%u\nhops\t%u\nfanouts\t", in->name,
           in->complete ? "complete" : "incomplete", in->format_version, in->hops);
    for (unsigned h = 0; h < in->hops; h++) printf("%s%u", h ? "," : "", in->fanouts[h]);
    char at[32];
    at_text(in->at_t, at, sizeof at);
    printf("\nalpha\t%g\nat_t\t%s\nversion\t%llu\ndirection\t%s\nseed\t%llu\ngeneration\t%llu\n", in->alpha,
           at, (unsigned long long)in->at_version, dir_name(in->dir),
           (unsigned long long)in->seed, (unsigned long long)in->generation);
    printf("nodes\t%llu\nslab_bytes\t%llu\nbuild_seconds\t%.3f\n", (unsigned long long)in->nodes,
           (unsigned long long)in->slab_bytes, in->build_seconds);
    printf("hop_sets\t%s\nsnap_version\t%llu\ncaps\t", in->hop_sets == GSNAP_HOPSETS_SAMPLED ? "sampled" : "exact",
           (unsigned long long)in->snap_version);
    for (unsigned h = 0; h < in->hops; h++) printf("%s%u", h ? "," : "", in->caps[h]);
    putchar('\n');
    for (unsigned h = 0; h < in->hops; h++)
        printf("hop%u\texact_ids=%llu stored_ids=%llu capped_lists=%llu blocks=%llu\n", h + 1,
               (unsigned long long)in->exact_ids[h], (unsigned long long)in->stored_ids[h],
               (unsigned long long)in->capped[h], (unsigned long long)in->blocks[h]);
}

static void print_info_json(const gsnap_snapshot_info *in) {
    printf("{\"name\":");
    cli_json_str(stdout, in->name);
    printf(",\"complete\":%s,\"format\":%u,\"hops\":%u,\"fanouts\":[", in->complete ? "true" : "false",
           in->format_version, in->hops);
    for (unsigned h = 0; h < in->hops; h++) printf("%s%u", h ? "," : "", in->fanouts[h]);
    char at[32];
    at_text(in->at_t, at, sizeof at);
    if (in->at_t == GSNAP_TIME_MAX) snprintf(at, sizeof at, "null");
    printf("],\"alpha\":%.17g,\"at_t\":%s,\"version\":%llu,\"direction\":\"%s\",\"seed\":%llu,"
           "\"generation\":%llu,\"nodes\":%llu,\"slab_bytes\":%llu,\"build_seconds\":%.6f,\"per_hop\":[",
           in->alpha, at, (unsigned long long)in->at_version, dir_name(in->dir),
           (unsigned long long)in->seed, (unsigned long long)in->generation, (unsigned long long)in->nodes,
           (unsigned long long)in->slab_bytes, in->build_seconds);
    for (unsigned h = 0; h < in->hops; h++)
        printf("%s{\"hop\":%u,\"exact_ids\":%llu,\"stored_ids\":%llu,\"capped_lists\":%llu,\"blocks\":%llu}",
               h ? "," : "", h + 1, (unsigned long long)in->exact_ids[h], (unsigned long long)in->stored_ids[h],
               (unsigned long long)in->capped[h], (unsigned long long)in->blocks[h]);
    printf("],\"hop_sets\":\"%s\",\"snap_version\":%llu,\"caps\":[",
           in->hop_sets == GSNAP_HOPSETS_SAMPLED ? "sampled" : "exact", (unsigned long long)in->snap_version);
    for (unsigned h = 0; h < in->hops; h++) printf("%s%u", h ? "," : "", in->caps[h]);
    printf("]}");
}


/* --fanouts or --caps (param): 1..GSNAP_MAX_HOPS values in 1..GSNAP_MAX_FANOUT */
static int parse_per_hop(const char *param, const char *text, uint32_t *f, int *given) {
    int64_t v[GSNAP_MAX_HOPS];
    unsigned n;
    if (cli_parse_list(param, text, 1, GSNAP_MAX_FANOUT, 0, GSNAP_MAX_HOPS, v, &n)) return CLI_USAGE;
    for (unsigned i = 0; i < n; i++) f[i] = (uint32_t)v[i];
    *given = (int)n;
    return 0;
}

static int snap_create(int argc, char **argv) {
    static const struct option lo[] = {
        {"hops", required_argument, NULL, O_HOPS}, {"fanouts", required_argument, NULL, O_FANOUTS},
        {"alpha", required_argument, NULL, O_ALPHA}, {"at", required_argument, NULL, O_AT},
        {"version", required_argument, NULL, O_VERSION}, {"in", no_argument, NULL, O_IN},
        {"out", no_argument, NULL, O_OUT}, {"seed", required_argument, NULL, O_SEED},
        {"mem", required_argument, NULL, O_MEM}, {"json", no_argument, NULL, O_JSON},
        {"hop-sets", required_argument, NULL, O_HOPSETS}, {"caps", required_argument, NULL, O_CAPS},
        {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(snapshot_usage, lo, NULL);
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    uint32_t caps[GSNAP_MAX_HOPS] = {0};
    int ncaps = 0;
    uint32_t fan[GSNAP_MAX_HOPS] = {0};
    int nfan = 0, json = 0, c, ret;
    uint64_t u;
    double d;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_HOPS:
            if (cli_parse_u64_range("--hops", optarg, 1, GSNAP_MAX_HOPS, &u)) return CLI_USAGE;
            so.hops = (unsigned)u;
            break;
        case O_FANOUTS:
            if ((ret = parse_per_hop("--fanouts", optarg, fan, &nfan))) return ret;
            break;
        case O_ALPHA:
            if (cli_parse_double("--alpha", optarg, &d)) return CLI_USAGE;
            if (!(d > 0)) return cli_usage_err("--alpha: must be > 0");
            so.alpha = d;
            break;
        case O_AT: if (cli_parse_time("--at", optarg, &so.at_t)) return CLI_USAGE; break;
        case O_VERSION: if (cli_parse_version("--version", optarg, &so.as_of)) return CLI_USAGE; break;
        case O_IN: so.dir = GSNAP_DIR_IN; break;
        case O_OUT: so.dir = GSNAP_DIR_OUT; break;
        case O_SEED: if (cli_parse_u64("--seed", optarg, &so.seed)) return CLI_USAGE; break;
        case O_MEM:
            if (cli_parse_size("--mem", optarg, &u)) return CLI_USAGE;
            so.mem_budget = (size_t)u;
            break;
        case O_JSON: json = 1; break;
        case O_HOPSETS:
            if (strcmp(optarg, "auto") == 0) so.hop_sets = GSNAP_HOPSETS_AUTO;
            else if (strcmp(optarg, "exact") == 0) so.hop_sets = GSNAP_HOPSETS_EXACT;
            else if (strcmp(optarg, "sampled") == 0) so.hop_sets = GSNAP_HOPSETS_SAMPLED;
            else return cli_usage_err("--hop-sets: '%s' is not auto, exact or sampled", optarg);
            break;
        case O_CAPS:
            if ((ret = parse_per_hop("--caps", optarg, caps, &ncaps))) return ret;
            for (int i = 0; i < ncaps; i++)
                if (caps[i] > GSNAP_SNAPSHOT_CAP) return cli_usage_err("--caps: %u is more than %d", caps[i], GSNAP_SNAPSHOT_CAP);
            break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 1, 1, "NAME"))) return ret;
    const char *name = argv[optind];
    if (ncaps > 1 && (unsigned)ncaps != so.hops) return cli_usage_err("--caps: %d values for %u hops", ncaps, so.hops);
    if (ncaps && so.hop_sets == GSNAP_HOPSETS_EXACT) return cli_usage_err("--caps: only for --hop-sets sampled");
    if (ncaps && so.hop_sets == GSNAP_HOPSETS_AUTO) so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    for (unsigned h = 0; h < so.hops && ncaps; h++) so.caps[h] = ncaps == 1 ? caps[0] : caps[h];
    if (nfan > 1 && (unsigned)nfan != so.hops)
        return cli_usage_err("--fanouts: %d values for %u hops", nfan, so.hops);
    for (unsigned h = 0; h < GSNAP_MAX_HOPS; h++)
        so.fanouts[h] = h < so.hops ? (nfan == 0 ? 10 : nfan == 1 ? fan[0] : fan[h]) : 0;
    cli_progress *pg = cli_progress_new(json);
    so.progress = pg ? cli_progress_cb : NULL;
    so.progress_ctx = pg;
    gsnap_db *db = NULL;
    if ((ret = cli_open_db(NULL, CLI_DB_WRITE, &db))) { cli_progress_done(pg); return ret; }
    gsnap_snapshot_info info;
    int rc = gsnap_snapshot_create(db, name, &so, &info);
    cli_progress_done(pg);
    if (rc) {
        ret = cli_lib_err(db, rc, "snapshot create");
        if (ret == CLI_NOTFOUND) ret = CLI_ERR;
    } else if (json) {
        print_info_json(&info);
        putchar('\n');
    } else {
        print_info_text(&info);
    }
    gsnap_db_close(db);
    return ret;
}

static int snap_simple(int argc, char **argv, int action /* 0 list, 1 show, 2 drop */) {
    static const struct option lo[] = {{"json", no_argument, NULL, O_JSON}, {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(snapshot_usage, action == 2 ? NULL : lo, NULL);
    int json = 0, c, ret, rc;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        if (c == CLI_OPT_HELP) return CLI_OK;
        if (c == CLI_OPT_ERROR) return CLI_USAGE;
        if (c == O_JSON) json = 1;
    }
    if ((ret = cli_positionals(argc, argv, action ? 1 : 0, action ? 1 : 0, "NAME"))) return ret;
    gsnap_db *db = NULL;
    if ((ret = cli_open_db(NULL, action == 2 ? CLI_DB_WRITE : CLI_DB_READ, &db))) return ret;
    if (action == 0) {
        gsnap_snapshot_info *all = NULL;
        size_t n = 0;
        if ((rc = gsnap_snapshot_list(db, &all, &n))) {
            ret = cli_lib_err(db, rc, "snapshot list");
        } else if (json) {
            printf("{\"snapshots\":[");
            for (size_t i = 0; i < n; i++) { if (i) printf(","); print_info_json(&all[i]); }
            printf("]}\n");
        } else {
            for (size_t i = 0; i < n; i++) {
                char at[32];
                at_text(all[i].at_t, at, sizeof at);
                printf("%s\t%s\thops=%u\tat_t=%s\tversion=%llu\tgeneration=%llu\tnodes=%llu\tslab_bytes=%llu\n",
                       all[i].name, all[i].complete ? "complete" : "incomplete", all[i].hops,
                       at, (unsigned long long)all[i].at_version,
                       (unsigned long long)all[i].generation, (unsigned long long)all[i].nodes,
                       (unsigned long long)all[i].slab_bytes);
            }
        }
        gsnap_free(all);
    } else if (action == 1) {
        gsnap_snapshot_info info;
        if ((rc = gsnap_snapshot_info_get(db, argv[optind], &info))) ret = cli_lib_err(db, rc, "snapshot show");
        else if (json) { print_info_json(&info); putchar('\n'); }
        else print_info_text(&info);
    } else {
        if ((rc = gsnap_snapshot_drop(db, argv[optind]))) ret = cli_lib_err(db, rc, "snapshot drop");
    }
    gsnap_db_close(db);
    return ret;
}

int cmd_snapshot(int argc, char **argv) {
    if (argc < 2) return cli_usage_err("missing action: create, list, show or drop");
    const char *a = argv[1];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { fputs(snapshot_usage, stdout); return CLI_OK; }
    if (strcmp(a, "create") == 0) return snap_create(argc - 1, argv + 1);
    if (strcmp(a, "list") == 0) return snap_simple(argc - 1, argv + 1, 0);
    if (strcmp(a, "show") == 0) return snap_simple(argc - 1, argv + 1, 1);
    if (strcmp(a, "drop") == 0) return snap_simple(argc - 1, argv + 1, 2);
    if (strcmp(a, "advance") == 0) return cli_snapshot_advance(argc - 1, argv + 1, snapshot_usage);
    return cli_usage_err("unknown action '%s' (create, list, show or drop)", a);
}

int cmd_khop(int argc, char **argv) {
    static const struct option lo[] = {
        {"snapshot", required_argument, NULL, O_SNAPSHOT}, {"hops", required_argument, NULL, O_HOPS},
        {"json", no_argument, NULL, O_JSON}, {"qd", required_argument, NULL, O_QD},
        {"pread", no_argument, NULL, O_PREAD}, {"buffered", no_argument, NULL, O_BUFFERED},
        {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(khop_usage, lo, NULL);
    gsnap_khop_options ko = GSNAP_KHOP_OPTIONS_INIT;
    const char *name = NULL;
    unsigned hops = 0;
    int json = 0, c, ret, rc;
    uint64_t u;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_SNAPSHOT: name = optarg; break;
        case O_HOPS:
            if (cli_parse_u64_range("--hops", optarg, 1, GSNAP_MAX_HOPS, &u)) return CLI_USAGE;
            hops = (unsigned)u;
            break;
        case O_QD:
            if (cli_parse_u64_range("--qd", optarg, 1, 4096, &u)) return CLI_USAGE;
            ko.queue_depth = (unsigned)u;
            break;
        case O_PREAD: ko.force_pread = 1; break;
        case O_BUFFERED: ko.buffered = 1; break;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if (!name) return cli_usage_err("--snapshot NAME is required");
    if ((ret = cli_positionals(argc, argv, 1, 1 << 20, "NODE"))) return ret;
    size_t n = (size_t)(argc - optind);
    uint64_t *seeds = malloc(n * sizeof *seeds);
    if (!seeds) { cli_err("out of memory"); return CLI_ERR; }
    for (size_t i = 0; i < n; i++)
        if (cli_parse_u64("NODE", argv[optind + (int)i], &seeds[i])) { free(seeds); return CLI_USAGE; }
    gsnap_db *db = NULL;
    gsnap_snapshot *s = NULL;
    gsnap_khop_result *r = NULL;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db))) { free(seeds); return ret; }
    if ((rc = gsnap_snapshot_open(db, name, &s))) { ret = cli_lib_err(db, rc, "open snapshot"); goto done; }
    if (hops == 0) hops = gsnap_snapshot_get_info(s)->hops;
    if ((rc = gsnap_khop(s, seeds, n, hops, &ko, &r))) {
        ret = cli_lib_err(db, rc, "query");
        if (ret == CLI_NOTFOUND) ret = CLI_ERR;
        goto done;
    }
    if (json) printf("{\"snapshot\":"), cli_json_str(stdout, name), printf(",\"nodes\":[");
    for (size_t i = 0; i < n; i++) {
        if (json) printf("%s{\"node\":%llu,\"hops\":[", i ? "," : "", (unsigned long long)seeds[i]);
        for (unsigned h = 1; h <= hops; h++) {
            size_t idx = i * hops + h - 1, a = r->off[idx], b = r->off[idx + 1];
            if (json) printf("%s{\"hop\":%u,\"size\":%llu,\"capped\":%s,\"ids\":[", h > 1 ? "," : "", h,
                             (unsigned long long)(r->capped[idx] ? r->exact[idx] : b - a),
                             r->capped[idx] ? "true" : "false");
            else printf("%llu\t%u\t%s%llu\t", (unsigned long long)seeds[i], h, r->capped[idx] ? "~" : "",
                        (unsigned long long)(r->capped[idx] ? r->exact[idx] : b - a));
            for (size_t j = a; j < b; j++)
                printf(json ? "%s%llu" : "%s%llu", j > a ? (json ? "," : " ") : "", (unsigned long long)r->ids[j]);
            printf(json ? "]}" : "\n");
        }
        if (json) printf("]}");
    }
    if (json) printf("]}\n");
done:
    gsnap_khop_result_free(r);
    gsnap_snapshot_close(s);
    gsnap_db_close(db);
    free(seeds);
    return ret;
}

typedef struct { int json; uint64_t n; cli_progress *prog; } check_out;

static void check_line(void *ctx, const char *line) {
    check_out *co = ctx;
    cli_progress_clear(co->prog); /* stdout may share the terminal */
    if (co->json) { printf("%s", co->n ? "," : ""); cli_json_str(stdout, line); }
    else printf("%s\n", line);
    co->n++;
}

int cmd_check(int argc, char **argv) {
    static const struct option lo[] = {{"snapshot", required_argument, NULL, O_SNAPSHOT},
                                       {"store-only", no_argument, NULL, O_STORE_ONLY},
                                       {"json", no_argument, NULL, O_JSON}, {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(check_usage, lo, NULL);
    const char *name = NULL;
    int store_only = 0, c, ret, rc;
    check_out co = {0, 0, NULL};
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_SNAPSHOT: name = optarg; break;
        case O_STORE_ONLY: store_only = 1; break;
        case O_JSON: co.json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 0, "argument"))) return ret;
    gsnap_db *db = NULL;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db))) return ret;
    if (name) { /* a bad or unknown name before the whole store is walked: exit 2 or 3, not 1 */
        gsnap_snapshot_info si;
        rc = gsnap_snapshot_info_get(db, name, &si);
        if (rc == GSNAP_EINVAL || rc == GSNAP_NOTFOUND) {
            ret = rc == GSNAP_EINVAL ? cli_usage_err("--snapshot: '%s' is not a snapshot name (1..64 of A-Za-z0-9_.-, "
                                                     "not starting with '.')", name)
                                     : cli_lib_err(db, rc, NULL);
            gsnap_db_close(db);
            return ret;
        }
    }
    uint64_t p1 = 0, p2 = 0;
    gsnap_check_options copt = GSNAP_CHECK_OPTIONS_INIT;
    copt.report = check_line;
    copt.report_ctx = &co;
    copt.progress = cli_progress_cb;
    copt.progress_ctx = co.prog = cli_progress_new(co.json);
    if (co.json) printf("{\"lines\":[");
    rc = gsnap_db_check_ext(db, &copt, &p1);
    if (!rc && !store_only) rc = gsnap_snapshot_check_ext(db, name, &copt, &p2);
    uint64_t p3 = 0; /* attribute tables (features/) */
    if (!rc && !name) rc = gsnap_attr_check(db, check_line, &co, &p3);
    p2 += p3;
    cli_progress_done(co.prog);
    gsnap_db_stat st;
    unsigned fmt = gsnap_db_stats(db, &st) == 0 ? st.format_version : 0; /* 0: unknown */
    if (co.json) printf("],\"problems\":%llu,\"store_format\":%u,\"completed\":%s}\n", (unsigned long long)(p1 + p2),
                        fmt, rc ? "false" : "true");
    else if (!rc) printf("store format %u\n%llu problem(s)\n", fmt, (unsigned long long)(p1 + p2));
    fflush(stdout);
    if (rc) ret = cli_lib_err(db, rc, "walk") == CLI_NOTFOUND && name ? CLI_NOTFOUND : CLI_ERR;
    else ret = p1 + p2 ? CLI_ERR : CLI_OK;
    gsnap_db_close(db);
    return ret;
}
