/*
 * cli/cmd_store.c -- store subcommands: init, ingest, neighbors, degree, stat.
 */
#include "cli/cli.h"
#include "cli/progress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The merge fanout of `ingest` while it loads a regular file (then merged
 * to GSNAP_MERGE_FANOUT's shape): each record is rewritten fewer times
 * (docs/benchmarks.md "The CLI's bulk load"). */
#define CLI_BULK_MERGE_FANOUT 16

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *keep_name(unsigned keep)
{
    switch (keep) {
    case GSNAP_KEEP_IN: return "in";
    case GSNAP_KEEP_OUT: return "out";
    case GSNAP_KEEP_BOTH: return "both";
    default: return "?";
    }
}

/* ---- init ------------------------------------------------------------------ */

static const char init_usage[] =
    "Usage: graphsnap init [DIR] [--keep in|out|both] [--map-size BYTES] [--nosync]\n"
    "\n"
    "Create an empty database in DIR (default: -d DIR or $GRAPHSNAP_DB).\n"
    "Fails (exit 1) if a database already exists there.\n"
    "\n"
    "Options:\n"
    "  --keep in|out|both  directions the store keeps (default both); 'in' answers\n"
    "                      edges u->v for v (what GNN sampling uses), 'out' for u\n"
    "  --map-size BYTES    initial LMDB map size, e.g. 256M or 4G (default 64M);\n"
    "                      the map grows by itself when it fills\n"
    "  --nosync            do not fsync the creating commit\n"
    "  -d, --db DIR        database directory\n"
    "  -h, --help          show this help\n";

enum { O_KEEP = 256, O_MAPSIZE, O_NOSYNC, O_BATCH, O_SKIPBAD, O_JSON, O_AT, O_VERSION,
       O_IN, O_OUT, O_LIMIT, O_DRYRUN, O_FANOUT };

int cmd_init(int argc, char **argv)
{
    static const struct option lo[] = {
        {"keep", required_argument, NULL, O_KEEP},
        {"map-size", required_argument, NULL, O_MAPSIZE},
        {"nosync", no_argument, NULL, O_NOSYNC},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(init_usage, lo, NULL);
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    gsnap_db *db = NULL;
    uint64_t map = 0;
    int c, rc;

    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_KEEP:
            if (strcmp(optarg, "in") == 0)
                dopt.keep = GSNAP_KEEP_IN;
            else if (strcmp(optarg, "out") == 0)
                dopt.keep = GSNAP_KEEP_OUT;
            else if (strcmp(optarg, "both") == 0)
                dopt.keep = GSNAP_KEEP_BOTH;
            else
                return cli_usage_err("--keep: '%s' is not one of in, out, both", optarg);
            break;
        case O_MAPSIZE:
            if (cli_parse_size("--map-size", optarg, &map))
                return CLI_USAGE;
            if (map < 1048576)
                return cli_usage_err("--map-size: %s is below the minimum of 1M", optarg);
            if (map > (uint64_t)SIZE_MAX)
                return cli_usage_err("--map-size: %s is too large for this machine", optarg);
            dopt.map_size = (size_t)map;
            break;
        case O_NOSYNC: dopt.sync = GSNAP_SYNC_NONE; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((rc = cli_positionals(argc, argv, 0, 1, "DIR")) != 0)
        return rc;
    if (optind < argc)
        cli_db_dir = argv[optind];
    if (!cli_db_dir || !*cli_db_dir)
        return cli_usage_err("no database given: use init DIR, -d DIR or set GRAPHSNAP_DB");

    /* refuse to "init" over an existing database */
    {
        gsnap_db_options probe = GSNAP_DB_OPTIONS_INIT;
        probe.create = 0;
        probe.read_only = 1;
        rc = gsnap_db_open(cli_db_dir, &probe, &db);
        gsnap_db_close(db);
        db = NULL;
        if (rc == GSNAP_OK) {
            cli_err("database '%s' already exists", cli_db_dir);
            return CLI_ERR;
        }
    }
    dopt.create = 1;
    rc = gsnap_db_open(cli_db_dir, &dopt, &db);
    if (rc != GSNAP_OK) {
        const char *d = gsnap_last_open_error();
        fprintf(stderr, "graphsnap: cannot create database '%s': %s\n", cli_db_dir,
                d && *d ? d : gsnap_strerror(rc));
        return cli_exit_code(rc) == CLI_NOTFOUND ? CLI_ERR : cli_exit_code(rc);
    }
    gsnap_db_close(db);
    printf("created database '%s' (keep %s)\n", cli_db_dir, keep_name(dopt.keep));
    return CLI_OK;
}

/* ---- ingest ------------------------------------------------------------------ */

static const char ingest_usage[] =
    "Usage: graphsnap ingest FILE|- [--batch N] [--skip-bad] [--nosync] [--json]\n"
    "                        [--merge-fanout F] [--dry-run]\n"
    "\n"
    "Load edge events from a text file ('-' = stdin) into the database. One line\n"
    "per event: 'src dst [t] [op]', columns separated by tabs, commas or spaces;\n"
    "src and dst are unsigned 64-bit integers, t a signed 64-bit time (default:\n"
    "the line number), op add|a|+|1 (default) or del|delete|d|-|0. Lines starting\n"
    "with '#' or '%' and blank lines are skipped.\n"
    "\n"
    "Every N events are committed as one atomic batch = one new version. On a\n"
    "malformed line the command stops with exit 1 and names file and line;\n"
    "batches before it stay committed, nothing of the failing batch is.\n"
    "\n"
    "Options:\n"
    "  --batch N     events per committed batch (default 100000)\n"
    "  --skip-bad    skip malformed lines, count and report them\n"
    "  --nosync      do not fsync each commit (bulk loads; not power-loss safe)\n"
    "  --merge-fanout F  delta runs of one level merged into one run of the next\n"
    "                (2..32): larger ingests faster, and leaves more runs for\n"
    "                queries to read until later merges. Default: a regular\n"
    "                file is a bulk load, merged at 16 while it loads, then\n"
    "                to the shape of the default 4 (included in the time);\n"
    "                a pipe is a stream, merged at 4 throughout\n"
    "  --json        print the summary as one JSON object on stdout\n"
    "  --dry-run     only parse and check the input; no database is opened\n"
    "  -d, --db DIR  database directory\n"
    "  -h, --help    show this help\n"
    "\n"
    "Progress (percent of the file and ETA; a count of events for a pipe) is shown\n"
    "on stderr when stderr is a terminal and --json is not given;\n"
    "GRAPHSNAP_PROGRESS=1 forces it, =0 turns it off.\n";

/* Progress of an ingest: percent of the bytes of a regular file (also when
 * it is stdin, redirected from a file), else a count of events (pipes). */
typedef struct {
    cli_progress *p;
    FILE *fp;
    uint64_t size; /* 0: not a regular file */
} ingest_progress;

static void ingest_progress_init(ingest_progress *ip, FILE *fp, int json)
{
    struct stat st;
    ip->p = cli_progress_new(json);
    ip->fp = fp;
    ip->size = fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

static void ingest_progress_show(ingest_progress *ip, uint64_t events)
{
    off_t pos;
    if (!ip->p)
        return;
    if (ip->size && (pos = ftello(ip->fp)) >= 0)
        cli_progress_update(ip->p, "ingest", (uint64_t)pos, ip->size);
    else
        cli_progress_update(ip->p, "ingest (events)", events, 0);
}

static void progress_cb(void *vctx, uint64_t lines, uint64_t events, uint64_t version)
{
    (void)lines;
    (void)version;
    ingest_progress_show(vctx, events);
}

/* --dry-run: parse the whole input, no database. Same report fields (events =
 * events parsed, batches 0); on a bad line without skip_bad returns
 * GSNAP_EPARSE with "file:line: ..." in msg. */
static int dry_run(FILE *fp, const char *name, const gsnap_ingest_options *opt,
                   gsnap_ingest_report *rep, char *msg, size_t msgcap, ingest_progress *ip)
{
    char *line = NULL, perr[320];
    size_t cap = 0;
    ssize_t n;
    double t0 = now_s();
    int rc = GSNAP_OK;
    while ((n = getline(&line, &cap, fp)) >= 0) {
        uint64_t s, d;
        int64_t t;
        int del, prc;
        if ((++rep->lines & 0xffff) == 0)
            ingest_progress_show(ip, rep->events);
        prc = gsnap_parse_edge_line(line, (size_t)n, rep->lines, &s, &d, &t, &del, perr, sizeof perr);
        if (prc == GSNAP_OK) {
            rep->events++;
        } else if (prc != GSNAP_NOTFOUND) {
            if (rep->bad_lines++ == 0) {
                rep->first_bad_line = rep->lines;
                snprintf(msg, msgcap, "%s:%llu: %s", name, (unsigned long long)rep->lines, perr);
            }
            if (!opt->skip_bad) {
                rc = GSNAP_EPARSE;
                goto done;
            }
        }
    }
    if (ferror(fp)) {
        snprintf(msg, msgcap, "%s: read error after line %llu: %s", name,
                 (unsigned long long)rep->lines, strerror(errno));
        rc = GSNAP_EIO;
    } else if (rep->events == 0) {
        snprintf(msg, msgcap, "%s: no edges (%llu lines read)", name, (unsigned long long)rep->lines);
        rc = GSNAP_EPARSE;
    }
done:
    free(line);
    rep->seconds = now_s() - t0;
    return rc;
}

/* After a bulk load: the merges of the default fanout (gsnap_db_merge), so
 * that the store has the shape a default handle keeps. Every batch is
 * committed: a failure loses nothing, and a later commit of any handle
 * merges what is left. Its time into *secs. */
static int merge_after_load(gsnap_db *db, double *secs)
{
    double t0 = now_s();
    int rc = gsnap_db_merge(db, GSNAP_MERGE_FANOUT);
    *secs = now_s() - t0;
    return rc;
}

int cmd_ingest(int argc, char **argv)
{
    static const struct option lo[] = {
        {"batch", required_argument, NULL, O_BATCH},
        {"skip-bad", no_argument, NULL, O_SKIPBAD},
        {"nosync", no_argument, NULL, O_NOSYNC},
        {"json", no_argument, NULL, O_JSON},
        {"dry-run", no_argument, NULL, O_DRYRUN},
        {"merge-fanout", required_argument, NULL, O_FANOUT},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(ingest_usage, lo, NULL);
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    gsnap_ingest_options iopt = GSNAP_INGEST_OPTIONS_INIT;
    gsnap_ingest_report rep;
    ingest_progress prog = {NULL, NULL, 0};
    gsnap_db *db = NULL;
    FILE *fp = NULL;
    const char *path, *name;
    char first_bad[512] = "";
    uint64_t batch = 0, fanout = 0;
    int c, rc, json = 0, dry = 0, ret = CLI_OK, bulk = 0;
    double merge_s = 0;
    double eps;

    memset(&rep, 0, sizeof rep);
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_BATCH:
            if (cli_parse_u64_range("--batch", optarg, 1, (uint64_t)SIZE_MAX / 64, &batch))
                return CLI_USAGE;
            iopt.batch_edges = (size_t)batch;
            break;
        case O_SKIPBAD: iopt.skip_bad = 1; break;
        case O_NOSYNC: dopt.sync = GSNAP_SYNC_NONE; break;
        case O_JSON: json = 1; break;
        case O_DRYRUN: dry = 1; break;
        case O_FANOUT:
            if (cli_parse_u64_range("--merge-fanout", optarg, 2, GSNAP_MERGE_FANOUT_MAX, &fanout)) return CLI_USAGE;
            dopt.merge_fanout = (unsigned)fanout;
            break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((rc = cli_positionals(argc, argv, 1, 1, "FILE (or '-' for stdin)")) != 0)
        return rc;
    path = argv[optind];
    if (strcmp(path, "-") == 0) {
        fp = stdin;
        name = "<stdin>";
    } else {
        fp = fopen(path, "r");
        name = path;
        if (!fp) {
            cli_err("cannot open '%s': %s", path, strerror(errno));
            return CLI_ERR;
        }
    }

    if (dry) {
        ingest_progress_init(&prog, fp, json);
        rc = dry_run(fp, name, &iopt, &rep, first_bad, sizeof first_bad, &prog);
        cli_progress_done(prog.p);
        if (rc != GSNAP_OK) {
            cli_err("%s: %s", rc == GSNAP_EPARSE ? "parse error" : "read failed", first_bad);
            ret = CLI_ERR;
            goto done;
        }
    } else {
        struct stat st;
        /* A regular file is a bulk load: fewer merges while it loads, then
         * the default's shape (docs/cli.md "ingest"). A pipe may be a feed
         * that readers query while it runs: the default throughout. */
        if (!fanout && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
            bulk = 1;
            dopt.merge_fanout = CLI_BULK_MERGE_FANOUT;
        }
        if ((ret = cli_open_db(&dopt, CLI_DB_WRITE, &db)) != 0)
            goto done;
        ingest_progress_init(&prog, fp, json);
        if (prog.p) {
            iopt.progress = progress_cb;
            iopt.progress_ctx = &prog;
        }
        rc = gsnap_ingest_text(db, fp, name, &iopt, &rep);
        cli_progress_done(prog.p);
        if (rc != GSNAP_OK) {
            ret = cli_lib_err(db, rc, rc == GSNAP_EPARSE ? "parse error" : "ingest failed");
            if (ret != CLI_ERR) /* a data or I/O failure is never "usage" or "not found" */
                ret = CLI_ERR;
            if (rep.batches)
                cli_err("committed before the error: %llu events in %llu batch%s (versions %llu..%llu); "
                        "nothing of the failing batch",
                        (unsigned long long)rep.events, (unsigned long long)rep.batches,
                        rep.batches == 1 ? "" : "es", (unsigned long long)rep.first_version,
                        (unsigned long long)rep.last_version);
            else
                cli_err("nothing was committed");
            /* what was committed is left in the default's shape too */
            if (bulk && rep.batches && merge_after_load(db, &merge_s) != GSNAP_OK)
                cli_err("merging what was committed: %s (a later commit merges it)", gsnap_db_errmsg(db));
            goto done;
        }
        if (rep.bad_lines)
            snprintf(first_bad, sizeof first_bad, "%s", gsnap_db_errmsg(db));
        if (bulk) {
            rc = merge_after_load(db, &merge_s);
            rep.seconds += merge_s;
            if (rc != GSNAP_OK) {
                /* a runtime error whatever the code: the fanout is ours */
                (void)cli_lib_err(db, rc, "merging after the load (every batch is committed)");
                ret = CLI_ERR;
                goto done;
            }
        }
    }

    eps = rep.seconds > 0 ? (double)rep.events / rep.seconds : 0.0;
    if (json) {
        printf("{\"file\":");
        cli_json_str(stdout, name);
        printf(",\"dry_run\":%s,\"lines\":%llu,\"events\":%llu,\"batches\":%llu,\"first_version\":%llu,"
               "\"last_version\":%llu,\"bad_lines\":%llu,\"first_bad_line\":%llu,"
               "\"first_bad_error\":",
               dry ? "true" : "false", (unsigned long long)rep.lines, (unsigned long long)rep.events,
               (unsigned long long)rep.batches, (unsigned long long)rep.first_version,
               (unsigned long long)rep.last_version, (unsigned long long)rep.bad_lines,
               (unsigned long long)rep.first_bad_line);
        cli_json_str(stdout, rep.bad_lines ? first_bad : NULL);
        printf(",\"bulk_load\":%s,\"huge_heap\":%s,\"seconds\":%.6f,\"merge_seconds\":%.6f,"
               "\"edges_per_second\":%.1f}\n",
               bulk ? "true" : "false", cli_huge_heap() ? "true" : "false", rep.seconds, merge_s, eps);
    } else {
        if (dry)
            printf("dry run    (nothing written)\n");
        printf("lines      %llu\n", (unsigned long long)rep.lines);
        printf("events     %llu\n", (unsigned long long)rep.events);
        printf("batches    %llu\n", (unsigned long long)rep.batches);
        if (rep.batches)
            printf("versions   %llu..%llu\n", (unsigned long long)rep.first_version,
                   (unsigned long long)rep.last_version);
        if (rep.bad_lines)
            printf("bad lines  %llu skipped (first: %s)\n", (unsigned long long)rep.bad_lines,
                   first_bad);
        else
            printf("bad lines  0\n");
        printf("seconds    %.3f\n", rep.seconds);
        if (bulk)
            printf("merging    %.3f of them (after the load, to the default shape)\n", merge_s);
        printf("edges/s    %.0f\n", eps);
    }
    if (rep.bad_lines)
        cli_err("skipped %llu bad line%s (first: %s)", (unsigned long long)rep.bad_lines,
                rep.bad_lines == 1 ? "" : "s", first_bad);
done:
    gsnap_db_close(db);
    if (fp && fp != stdin)
        fclose(fp);
    return ret;
}

/* ---- neighbors / degree ---------------------------------------------------- */

static const char neighbors_usage[] =
    "Usage: graphsnap neighbors NODE [--at T] [--version V] [--in|--out] [--limit N] [--json]\n"
    "\n"
    "Print the live edge instances of NODE at event time T as of version V, one\n"
    "per line: 'NEIGHBOUR<TAB>T<TAB>VERSION' (t and version of the add that created\n"
    "it), in order of (neighbour, t). Multi-edges appear once per instance. A node\n"
    "with no edges prints nothing (exit 0).\n"
    "\n"
    "Options:\n"
    "  --at T         event time (default: now); edges with t <= T count\n"
    "  --version V    as of version V (default: latest)\n"
    "  --in           edges u->NODE, answering u (default; what sampling uses)\n"
    "  --out          edges NODE->w, answering w\n"
    "  --limit N      print at most N neighbours (the count stays the total)\n"
    "  --json         one JSON object on stdout\n"
    "  -d, --db DIR   database directory\n"
    "  -h, --help     show this help\n";

static const char degree_usage[] =
    "Usage: graphsnap degree NODE [--at T] [--version V] [--in|--out] [--json]\n"
    "\n"
    "Print the number of live edge instances of NODE (multi-edges counted) at event\n"
    "time T as of version V. A node with no edges prints 0 (exit 0).\n"
    "\n"
    "Options:\n"
    "  --at T         event time (default: now)\n"
    "  --version V    as of version V (default: latest)\n"
    "  --in           count edges u->NODE (default)\n"
    "  --out          count edges NODE->w\n"
    "  --json         one JSON object on stdout\n"
    "  -d, --db DIR   database directory\n"
    "  -h, --help     show this help\n";

typedef struct {
    uint64_t node, version, limit;
    int64_t at;
    gsnap_dir dir;
    int json;
} query_args;

/* Returns 0, or the exit code (usage error / help). *help set for --help. */
static int parse_query(int argc, char **argv, const char *usage, int with_limit,
                       query_args *q, int *help)
{
    static const struct option lo_limit[] = {
        {"at", required_argument, NULL, O_AT},
        {"version", required_argument, NULL, O_VERSION},
        {"in", no_argument, NULL, O_IN},
        {"out", no_argument, NULL, O_OUT},
        {"json", no_argument, NULL, O_JSON},
        {"limit", required_argument, NULL, O_LIMIT},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(usage, lo_limit, NULL);
    struct option lo[7];
    int c, rc;

    memcpy(lo, lo_limit, sizeof lo);
    if (!with_limit)
        lo[5] = (struct option){NULL, 0, NULL, 0};
    o.longopts = lo;
    q->version = GSNAP_VERSION_LATEST;
    q->at = GSNAP_TIME_MAX;
    q->dir = GSNAP_DIR_IN;
    q->json = 0;
    q->limit = UINT64_MAX;
    *help = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: *help = 1; return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_AT:
            if (cli_parse_time("--at", optarg, &q->at))
                return CLI_USAGE;
            break;
        case O_VERSION:
            if (cli_parse_version("--version", optarg, &q->version))
                return CLI_USAGE;
            break;
        case O_IN: q->dir = GSNAP_DIR_IN; break;
        case O_OUT: q->dir = GSNAP_DIR_OUT; break;
        case O_JSON: q->json = 1; break;
        case O_LIMIT:
            if (cli_parse_u64("--limit", optarg, &q->limit))
                return CLI_USAGE;
            break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((rc = cli_positionals(argc, argv, 1, 1, "NODE")) != 0)
        return rc;
    if (cli_parse_u64("NODE", argv[optind], &q->node))
        return CLI_USAGE;
    return 0;
}

/* Open the db and a read view; checks --version against the newest version.
 * Returns 0 or an exit code. *as_of receives the resolved version. */
static int open_view(const query_args *q, gsnap_db **db, gsnap_read **rd, uint64_t *as_of)
{
    int rc, ret;
    uint64_t latest;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, db)) != 0)
        return ret;
    if ((rc = gsnap_read_begin(*db, rd)) != GSNAP_OK)
        return cli_lib_err(*db, rc, "cannot read the database");
    latest = gsnap_read_version(*rd);
    if (q->version != GSNAP_VERSION_LATEST && q->version > latest)
        return cli_usage_err("--version: %llu does not exist (the newest version is %llu)",
                             (unsigned long long)q->version, (unsigned long long)latest);
    *as_of = q->version == GSNAP_VERSION_LATEST ? latest : q->version;
    return 0;
}

static void json_query_head(const query_args *q, uint64_t as_of)
{
    printf("{\"node\":%llu,\"direction\":\"%s\",\"at\":", (unsigned long long)q->node,
           q->dir == GSNAP_DIR_IN ? "in" : "out");
    if (q->at == GSNAP_TIME_MAX)
        printf("null");
    else
        printf("%lld", (long long)q->at);
    printf(",\"as_of\":%llu", (unsigned long long)as_of);
}

int cmd_neighbors(int argc, char **argv)
{
    query_args q;
    gsnap_db *db = NULL;
    gsnap_read *rd = NULL;
    gsnap_nbr *buf = NULL;
    size_t cap = 1024, count = 0, shown, i;
    uint64_t as_of = 0;
    int help, rc, ret;

    if ((ret = parse_query(argc, argv, neighbors_usage, 1, &q, &help)) != 0 || help)
        return ret;
    if ((ret = open_view(&q, &db, &rd, &as_of)) != 0)
        goto done;
    if (q.limit < cap)
        cap = (size_t)q.limit;
    for (;;) {
        gsnap_nbr *nb = realloc(buf, (cap ? cap : 1) * sizeof *buf);
        if (!nb) {
            cli_err("out of memory");
            ret = CLI_ERR;
            goto done;
        }
        buf = nb;
        rc = gsnap_neighbors(db, rd, q.node, q.dir, q.at, as_of, buf, cap, &count);
        if (rc != GSNAP_OK) {
            ret = cli_lib_err(db, rc, NULL);
            if (ret == CLI_NOTFOUND) /* NOTFOUND here is not a missing database */
                ret = CLI_ERR;
            goto done;
        }
        if (count <= cap || cap >= q.limit)
            break;
        cap = count < q.limit ? count : (size_t)q.limit;
    }
    shown = count < cap ? count : cap;
    if (q.json) {
        json_query_head(&q, as_of);
        printf(",\"count\":%zu,\"returned\":%zu,\"neighbors\":[", count, shown);
        for (i = 0; i < shown; i++)
            printf("%s{\"node\":%llu,\"t\":%lld,\"version\":%llu}", i ? "," : "",
                   (unsigned long long)buf[i].node, (long long)buf[i].t,
                   (unsigned long long)buf[i].version);
        printf("]}\n");
    } else {
        for (i = 0; i < shown; i++)
            printf("%llu\t%lld\t%llu\n", (unsigned long long)buf[i].node, (long long)buf[i].t,
                   (unsigned long long)buf[i].version);
        if (shown < count)
            cli_err("showing %zu of %zu neighbours (--limit)", shown, count);
    }
done:
    free(buf);
    gsnap_read_end(rd);
    gsnap_db_close(db);
    return ret;
}

int cmd_degree(int argc, char **argv)
{
    query_args q;
    gsnap_db *db = NULL;
    gsnap_read *rd = NULL;
    uint64_t as_of = 0, deg = 0;
    int help, rc, ret;

    if ((ret = parse_query(argc, argv, degree_usage, 0, &q, &help)) != 0 || help)
        return ret;
    if ((ret = open_view(&q, &db, &rd, &as_of)) != 0)
        goto done;
    rc = gsnap_degree(db, rd, q.node, q.dir, q.at, as_of, &deg);
    if (rc != GSNAP_OK) {
        ret = cli_lib_err(db, rc, NULL);
        if (ret == CLI_NOTFOUND)
            ret = CLI_ERR;
        goto done;
    }
    if (q.json) {
        json_query_head(&q, as_of);
        printf(",\"degree\":%llu}\n", (unsigned long long)deg);
    } else {
        printf("%llu\n", (unsigned long long)deg);
    }
done:
    gsnap_read_end(rd);
    gsnap_db_close(db);
    return ret;
}

/* ---- stat -------------------------------------------------------------------- */

static const char stat_usage[] =
    "Usage: graphsnap stat [--json]\n"
    "\n"
    "Print database statistics: newest version, edge events, deletes, sorted runs,\n"
    "directions kept, LMDB map size, file and used bytes, event-time range, format.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object on stdout\n"
    "  -d, --db DIR   database directory\n"
    "  -h, --help     show this help\n";

int cmd_stat(int argc, char **argv)
{
    static const struct option lo[] = {
        {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0},
    };
    cli_opts o = CLI_OPTS_INIT(stat_usage, lo, NULL);
    gsnap_db *db = NULL;
    gsnap_db_stat st;
    int c, rc, ret, json = 0;

    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 0, "")) != 0)
        return ret;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db)) != 0)
        return ret;
    memset(&st, 0, sizeof st);
    rc = gsnap_db_stats(db, &st);
    if (rc != GSNAP_OK) {
        ret = cli_lib_err(db, rc, NULL);
        goto done;
    }
    if (json) {
        printf("{\"path\":");
        cli_json_str(stdout, gsnap_db_path(db));
        printf(",\"version\":%llu,\"edge_records\":%llu,\"deletes\":%llu,\"runs\":%llu,"
               "\"keep\":\"%s\",\"map_size\":%llu,\"file_bytes\":%llu,\"used_bytes\":%llu,"
               "\"min_t\":%lld,\"max_t\":%lld,\"format_version\":%u,\"damaged_runs\":%llu}\n",
               (unsigned long long)st.version, (unsigned long long)st.edge_records,
               (unsigned long long)st.deletes, (unsigned long long)st.runs, keep_name(st.keep),
               (unsigned long long)st.map_size, (unsigned long long)st.file_bytes,
               (unsigned long long)st.used_bytes, (long long)st.min_t, (long long)st.max_t,
               st.format_version, (unsigned long long)st.damaged_runs);
    } else {
        printf("path            %s\n", gsnap_db_path(db));
        printf("version         %llu\n", (unsigned long long)st.version);
        printf("edge records    %llu\n", (unsigned long long)st.edge_records);
        printf("deletes         %llu\n", (unsigned long long)st.deletes);
        printf("runs            %llu\n", (unsigned long long)st.runs);
        printf("keep            %s\n", keep_name(st.keep));
        printf("map size        %llu\n", (unsigned long long)st.map_size);
        printf("file bytes      %llu\n", (unsigned long long)st.file_bytes);
        printf("used bytes      %llu\n", (unsigned long long)st.used_bytes);
        if (st.edge_records)
            printf("time range      %lld..%lld\n", (long long)st.min_t, (long long)st.max_t);
        else
            printf("time range      (empty)\n");
        printf("format version  %u\n", st.format_version);
        if (st.damaged_runs)
            printf("damaged runs    %llu (merges leave them alone; run 'graphsnap check')\n",
                   (unsigned long long)st.damaged_runs);
    }
done:
    gsnap_db_close(db);
    return ret;
}
