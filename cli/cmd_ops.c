/*
 * cli/cmd_ops.c -- operating a database: backup, dump, load, compact, log,
 * diff (issue 15). Each command is a thin shell over the operations section
 * of graphsnap.h; long ones draw a progress line on a terminal
 * (cli/progress.h).
 */
#include "cli/cli.h"
#include "cli/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { O_JSON = 1000, O_VERSIONS, O_NO_SNAPSHOTS, O_BEFORE, O_KEEP, O_HORIZON, O_NO_SHRINK, O_NODE, O_OUTPUT };

static void fmt_time(int64_t ns, char *buf, size_t len)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    if (ns <= 0 || !gmtime_r(&s, &tm)) {
        snprintf(buf, len, "unknown");
        return;
    }
    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* ---- backup ------------------------------------------------------------------ */

static const char backup_usage[] =
    "Usage: graphsnap backup [OPTIONS] DEST\n"
    "\n"
    "Copy the database into the new directory DEST while it stays in use:\n"
    "ingest, refresh and snapshot builds may run in this or other processes.\n"
    "The LMDB environment is copied compactly from one read transaction (free\n"
    "pages left out), then exactly the slab files of the snapshots that the\n"
    "copy lists as complete, verifying every block's checksum. Snapshots still\n"
    "being built are left out. DEST must not exist or be empty; the backup\n"
    "opens as a normal database and passes 'graphsnap check'.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object on stdout\n"
    "  -d, --db DIR   database directory\n"
    "  -h, --help     show this help\n"
    "\n"
    "Output: the version the backup holds, store and slab bytes, snapshots.\n"
    "Progress on a terminal (stderr). Exit 1 with a message when a source slab\n"
    "block fails its checksum or a snapshot was rebuilt during the copy.\n";

int cmd_backup(int argc, char **argv)
{
    static const struct option lo[] = {{"json", no_argument, NULL, O_JSON}, {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(backup_usage, lo, NULL);
    gsnap_db *db = NULL;
    int c, rc, ret, json = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 1, 1, "DEST")) != 0)
        return ret;
    const char *dest = argv[optind];
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db)) != 0)
        return ret;
    gsnap_backup_options bo = GSNAP_BACKUP_OPTIONS_INIT;
    gsnap_backup_report rep;
    cli_progress *p = cli_progress_new(json);
    bo.progress = cli_progress_cb;
    bo.progress_ctx = p;
    rc = gsnap_db_backup(db, dest, &bo, &rep);
    cli_progress_done(p);
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
    } else if (json) {
        printf("{\"dest\":");
        cli_json_str(stdout, dest);
        printf(",\"version\":%llu,\"store_bytes\":%llu,\"snapshots\":%llu,\"slab_bytes\":%llu,"
               "\"unfinished_snapshots_left_out\":%llu,\"seconds\":%.3f}\n",
               (unsigned long long)rep.version, (unsigned long long)rep.store_bytes,
               (unsigned long long)rep.snapshots, (unsigned long long)rep.slab_bytes,
               (unsigned long long)rep.dropped_incomplete, rep.seconds);
    } else {
        printf("backup of version %llu in %s: store %llu bytes, %llu snapshots (%llu slab bytes), %.2f s\n",
               (unsigned long long)rep.version, dest, (unsigned long long)rep.store_bytes,
               (unsigned long long)rep.snapshots, (unsigned long long)rep.slab_bytes, rep.seconds);
        if (rep.dropped_incomplete)
            printf("left out %llu snapshots that were still being built\n",
                   (unsigned long long)rep.dropped_incomplete);
    }
    gsnap_db_close(db);
    return ret;
}

/* ---- dump / load ----------------------------------------------------------------- */

static const char dump_usage[] =
    "Usage: graphsnap dump [OPTIONS]\n"
    "\n"
    "Write the database as portable text (graphsnap dump format 2, see\n"
    "docs/format.md) on stdout or to FILE: a header with the attribute table\n"
    "definitions, then per version its log record (commit time, counts,\n"
    "source), its events in a canonical order and its attribute rows (exact\n"
    "bits), then the snapshot definitions (with their hop-set kind and caps).\n"
    "Loading the dump into an empty database and\n"
    "dumping again gives the same bytes. Use it to move a database between\n"
    "machines and to upgrade between store format versions.\n"
    "\n"
    "Options:\n"
    "  --versions A..B   only versions A to B (either may be omitted: A.., ..B);\n"
    "                    load appends such a dump to a database at version A-1\n"
    "  -o, --output FILE write to FILE instead of stdout\n"
    "  --no-snapshots    leave the snapshot definitions out\n"
    "  -d, --db DIR      database directory\n"
    "  -h, --help        show this help\n";

static int parse_range(const char *text, uint64_t *a, uint64_t *b)
{
    const char *dots = strstr(text, "..");
    char buf[64];
    if (!dots)
        return cli_usage_err("--versions: '%s' is not A..B", text);
    *a = 1;
    *b = GSNAP_VERSION_LATEST;
    if (dots > text) {
        size_t n = (size_t)(dots - text);
        if (n >= sizeof buf)
            return cli_usage_err("--versions: '%s' is too long", text);
        memcpy(buf, text, n);
        buf[n] = 0;
        if (cli_parse_u64_range("--versions", buf, 1, UINT64_MAX - 1, a))
            return CLI_USAGE;
    }
    if (dots[2] && cli_parse_u64_range("--versions", dots + 2, 1, UINT64_MAX - 1, b))
        return CLI_USAGE;
    if (*a > *b)
        return cli_usage_err("--versions: %llu..%llu is empty", (unsigned long long)*a, (unsigned long long)*b);
    return 0;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option lo[] = {{"versions", required_argument, NULL, O_VERSIONS},
                                       {"output", required_argument, NULL, 'o'},
                                       {"no-snapshots", no_argument, NULL, O_NO_SNAPSHOTS},
                                       {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(dump_usage, lo, "o:");
    gsnap_db *db = NULL;
    gsnap_dump_options dopt = GSNAP_DUMP_OPTIONS_INIT;
    const char *out = NULL;
    int c, rc, ret;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_VERSIONS:
            if (parse_range(optarg, &dopt.from, &dopt.to))
                return CLI_USAGE;
            break;
        case 'o': out = optarg; break;
        case O_NO_SNAPSHOTS: dopt.no_snapshots = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 0, "")) != 0)
        return ret;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db)) != 0)
        return ret;
    FILE *f = stdout;
    if (out && !(f = fopen(out, "w"))) {
        cli_err("cannot create '%s': %s", out, strerror(errno));
        gsnap_db_close(db);
        return CLI_ERR;
    }
    cli_progress *p = out ? cli_progress_new(0) : NULL;
    dopt.progress = cli_progress_cb;
    dopt.progress_ctx = p;
    rc = gsnap_db_dump(db, f, &dopt);
    cli_progress_done(p);
    if (out && fclose(f) != 0 && rc == 0) {
        cli_err("writing '%s': %s", out, strerror(errno));
        ret = CLI_ERR;
    }
    if (rc)
        ret = cli_lib_err(db, rc, NULL);
    gsnap_db_close(db);
    return ret;
}

static const char load_usage[] =
    "Usage: graphsnap load [OPTIONS] [FILE]\n"
    "\n"
    "Load a dump (graphsnap dump format 2, or 1) from FILE or stdin ('-').\n"
    "Every dumped version is committed as one version with the same number,\n"
    "events, attribute rows, commit time and source, so the database's newest version must be the\n"
    "dump's first version - 1 (an empty database for a full dump; it is\n"
    "created when missing). Then the dump's snapshots are rebuilt with their\n"
    "definitions (cache generations start over), and a dump of a compacted\n"
    "database restores its retention horizon (never lowering the database's\n"
    "own: an incremental load keeps the later of the two).\n"
    "\n"
    "Options:\n"
    "  --no-snapshots    do not rebuild the dump's snapshots\n"
    "  --json            one JSON object on stdout\n"
    "  -d, --db DIR      database directory\n"
    "  -h, --help        show this help\n"
    "\n"
    "A malformed line stops the load with 'FILE:LINE: ...'; the versions\n"
    "committed before it stay. A load that commits nothing removes the\n"
    "database it created, unless another process has it open. Progress on a\n"
    "terminal (stderr).\n";

int cmd_load(int argc, char **argv)
{
    static const struct option lo[] = {{"no-snapshots", no_argument, NULL, O_NO_SNAPSHOTS},
                                       {"json", no_argument, NULL, O_JSON},
                                       {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(load_usage, lo, NULL);
    gsnap_db *db = NULL;
    gsnap_load_options lopt = GSNAP_LOAD_OPTIONS_INIT;
    gsnap_load_report rep;
    int c, rc, ret, json = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_NO_SNAPSHOTS: lopt.no_snapshots = 1; break;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 1, "[FILE]")) != 0)
        return ret;
    const char *name = optind < argc ? argv[optind] : "-";
    FILE *f = stdin;
    if (strcmp(name, "-") != 0 && !(f = fopen(name, "r"))) {
        cli_err("cannot open '%s': %s", name, strerror(errno)); /* an input, as for ingest: not exit 3 */
        return CLI_ERR;
    }
    if (!cli_db_dir) {
        if (f != stdin)
            fclose(f);
        return cli_usage_err("no database: give -d DIR or set GRAPHSNAP_DB");
    }
    /* A load that commits nothing leaves no database it created behind
     * (a file that is not a dump made an empty database before). */
    char mdb[4096], lock[4096];
    struct stat st;
    int made_dir = stat(cli_db_dir, &st) != 0;
    snprintf(mdb, sizeof mdb, "%s/data.mdb", cli_db_dir);
    snprintf(lock, sizeof lock, "%s/lock.mdb", cli_db_dir);
    int made_db = made_dir || stat(mdb, &st) != 0, made_lock = made_dir || stat(lock, &st) != 0;
    gsnap_db_options dbo = GSNAP_DB_OPTIONS_INIT;
    dbo.sync = GSNAP_SYNC_NONE; /* gsnap_db_load syncs once at the end */
    rc = gsnap_db_open(cli_db_dir, &dbo, &db);
    if (rc) {
        cli_err("cannot open database '%s': %s", cli_db_dir, gsnap_last_open_error());
        if (f != stdin)
            fclose(f);
        return cli_exit_code(rc);
    }
    cli_progress *p = cli_progress_new(json);
    lopt.progress = cli_progress_cb;
    lopt.progress_ctx = p;
    rc = gsnap_db_load(db, f, name, &lopt, &rep);
    cli_progress_done(p);
    if (f != stdin)
        fclose(f);
    uint64_t newest = 1;
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
        if (made_db && gsnap_db_version(db, &newest) == 0 && newest == 0) {
            gsnap_db_close(db);
            /* Every handle holds a shared flock on the directory (store/db.c):
             * an exclusive one without waiting says no other process has the
             * database open, and keeps openers waiting while the files go. */
            int dfd = open(cli_db_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd < 0 || flock(dfd, LOCK_EX | LOCK_NB) != 0) {
                cli_err("nothing was loaded; the database this load created is left in place: another process "
                        "has it open");
            } else {
                (void)unlink(mdb);
                if (made_lock) /* a lock.mdb that was there stays */
                    (void)unlink(lock);
                if (made_dir)
                    (void)rmdir(cli_db_dir); /* only when empty: nothing else is touched */
                cli_err("nothing was loaded; the database this load created is removed");
            }
            if (dfd >= 0)
                close(dfd); /* (releases the lock) */
            return ret;
        }
    } else if (json) {
        printf("{\"versions\":%llu,\"events\":%llu,\"snapshots\":%llu,\"first_version\":%llu,"
               "\"last_version\":%llu,\"seconds\":%.3f}\n",
               (unsigned long long)rep.versions, (unsigned long long)rep.events,
               (unsigned long long)rep.snapshots, (unsigned long long)rep.first_version,
               (unsigned long long)rep.last_version, rep.seconds);
    } else {
        printf("loaded %llu versions (%llu..%llu), %llu events, %llu snapshots in %.2f s\n",
               (unsigned long long)rep.versions, (unsigned long long)rep.first_version,
               (unsigned long long)rep.last_version, (unsigned long long)rep.events,
               (unsigned long long)rep.snapshots, rep.seconds);
    }
    gsnap_db_close(db);
    return ret;
}

/* ---- compact --------------------------------------------------------------------- */

static const char compact_usage[] =
    "Usage: graphsnap compact [OPTIONS] (--keep-versions N | --before T | --horizon V)\n"
    "\n"
    "Retention: fold the history before a horizon version into the base and\n"
    "give the space back to the file system. Queries as of the horizon version\n"
    "or later (and at event times from the horizon time on) keep their exact\n"
    "answers; queries before it fail with 'version V is before the retention\n"
    "horizon H' (exit 2), never with a wrong answer. New events with a time\n"
    "before the horizon time are refused. Snapshots keep their slab files\n"
    "(khop works); refresh and sampling of a snapshot taken before the horizon\n"
    "fail with the same error.\n"
    "\n"
    "The fold runs online (one write transaction). Shrinking the file needs the\n"
    "database exclusively: the compact copy is swapped in only when no other\n"
    "handle or process has the database open; otherwise compact reports the\n"
    "fold, leaves the file as it is and exits 1 (run it again later).\n"
    "\n"
    "Options:\n"
    "  --keep-versions N  keep the newest N versions queryable (N >= 1)\n"
    "  --before T         fold the versions committed before T (Unix seconds, as\n"
    "                     'graphsnap log' shows them); the newest version stays\n"
    "  --horizon V        fold versions 1..V-1\n"
    "  --no-shrink        fold only; do not rewrite the file\n"
    "  --json             one JSON object on stdout\n"
    "  -d, --db DIR       database directory\n"
    "  -h, --help         show this help\n";

int cmd_compact(int argc, char **argv)
{
    static const struct option lo[] = {{"keep-versions", required_argument, NULL, O_KEEP},
                                       {"before", required_argument, NULL, O_BEFORE},
                                       {"horizon", required_argument, NULL, O_HORIZON},
                                       {"no-shrink", no_argument, NULL, O_NO_SHRINK},
                                       {"json", no_argument, NULL, O_JSON},
                                       {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(compact_usage, lo, NULL);
    gsnap_compact_options copt = GSNAP_COMPACT_OPTIONS_INIT;
    gsnap_compact_report rep;
    int c, rc, ret, json = 0, given = 0;
    uint64_t x;
    int64_t t;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_KEEP:
            if (cli_parse_u64_range("--keep-versions", optarg, 1, UINT64_MAX - 1, &x))
                return CLI_USAGE;
            copt.keep_versions = x;
            given++;
            break;
        case O_BEFORE:
            if (cli_parse_i64("--before", optarg, &t))
                return CLI_USAGE;
            if (t <= 0 || t > INT64_MAX / 1000000000)
                return cli_usage_err("--before: %lld is not a Unix time in seconds", (long long)t);
            copt.before_ns = t * 1000000000;
            given++;
            break;
        case O_HORIZON:
            if (cli_parse_u64_range("--horizon", optarg, 1, UINT64_MAX - 1, &x))
                return CLI_USAGE;
            copt.horizon = x;
            given++;
            break;
        case O_NO_SHRINK: copt.no_shrink = 1; break;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 0, "")) != 0)
        return ret;
    if (given != 1)
        return cli_usage_err("give exactly one of --keep-versions, --before, --horizon");
    if (!cli_db_dir)
        return cli_usage_err("no database: give -d DIR or set GRAPHSNAP_DB");
    cli_progress *p = cli_progress_new(json);
    copt.progress = cli_progress_cb;
    copt.progress_ctx = p;
    rc = gsnap_db_compact_history(cli_db_dir, &copt, &rep);
    cli_progress_done(p);
    if (rc) {
        cli_err("%s", gsnap_last_open_error());
        return cli_exit_code(rc);
    }
    if (json) {
        printf("{\"horizon\":%llu,\"horizon_t\":", (unsigned long long)rep.horizon);
        if (rep.horizon_t == INT64_MIN)
            printf("null");
        else
            printf("%lld", (long long)rep.horizon_t);
        printf(",\"records_before\":%llu,\"records_after\":%llu,\"bytes_before\":%llu,\"bytes_after\":%llu,"
               "\"shrunk\":%s,\"seconds\":%.3f}\n",
               (unsigned long long)rep.records_before, (unsigned long long)rep.records_after,
               (unsigned long long)rep.bytes_before, (unsigned long long)rep.bytes_after,
               rep.shrunk ? "true" : "false", rep.seconds);
    } else {
        printf("horizon %llu", (unsigned long long)rep.horizon);
        if (rep.horizon_t != INT64_MIN)
            printf(" (time %lld)", (long long)rep.horizon_t);
        printf(": records %llu -> %llu, data.mdb %llu -> %llu bytes%s, %.2f s\n",
               (unsigned long long)rep.records_before, (unsigned long long)rep.records_after,
               (unsigned long long)rep.bytes_before, (unsigned long long)rep.bytes_after,
               rep.shrunk ? "" : " (not shrunk)", rep.seconds);
    }
    return CLI_OK;
}

/* ---- log / diff -------------------------------------------------------------------- */

static const char log_usage[] =
    "Usage: graphsnap log [OPTIONS]\n"
    "\n"
    "List versions, newest first (like git log): commit time, events added and\n"
    "deleted, and their source (file and line range, or 'api'). Versions\n"
    "committed by a build before store format 2 show 'unknown'; versions before\n"
    "the retention horizon are marked 'folded'.\n"
    "\n"
    "Options:\n"
    "  --versions A..B   only versions A to B (A.. and ..B also work)\n"
    "  -n N              at most the N newest of them\n"
    "  --json            one JSON array on stdout, newest first\n"
    "  -d, --db DIR      database directory\n"
    "  -h, --help        show this help\n";

int cmd_log(int argc, char **argv)
{
    static const struct option lo[] = {{"versions", required_argument, NULL, O_VERSIONS},
                                       {"json", no_argument, NULL, O_JSON},
                                       {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(log_usage, lo, "n:");
    gsnap_db *db = NULL;
    uint64_t from = 1, to = GSNAP_VERSION_LATEST, limit = UINT64_MAX;
    int c, rc, ret, json = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_VERSIONS:
            if (parse_range(optarg, &from, &to))
                return CLI_USAGE;
            break;
        case 'n':
            if (cli_parse_u64_range("-n", optarg, 1, UINT64_MAX, &limit))
                return CLI_USAGE;
            break;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 0, 0, "")) != 0)
        return ret;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db)) != 0)
        return ret;
    gsnap_version_info *v = NULL;
    size_t n = 0;
    uint64_t newest = 0;
    if ((rc = gsnap_db_version(db, &newest)) == 0 && newest > 0 &&
        (from > newest || (to != GSNAP_VERSION_LATEST && to > newest))) { /* as dump: not an empty answer */
        ret = cli_usage_err("--versions %llu..%llu: the database has versions 1..%llu", (unsigned long long)from,
                            (unsigned long long)(to == GSNAP_VERSION_LATEST ? newest : to), (unsigned long long)newest);
        goto done;
    }
    rc = rc ? rc : gsnap_db_log(db, NULL, from, to, &v, &n);
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
        goto done;
    }
    if (json)
        putchar('[');
    uint64_t shown = 0;
    for (size_t k = n; k-- > 0 && shown < limit; shown++) {
        const gsnap_version_info *x = &v[k];
        char tbuf[64];
        fmt_time(x->commit_ns, tbuf, sizeof tbuf);
        if (json) {
            printf("%s{\"version\":%llu,\"known\":%s,\"folded\":%s", shown ? "," : "",
                   (unsigned long long)x->version, x->known ? "true" : "false", x->folded ? "true" : "false");
            if (x->known) {
                printf(",\"commit_ns\":%lld,\"commit_time\":", (long long)x->commit_ns);
                cli_json_str(stdout, tbuf);
                printf(",\"adds\":%llu,\"deletes\":%llu,\"min_t\":%lld,\"max_t\":%lld,\"source\":",
                       (unsigned long long)x->adds, (unsigned long long)x->deletes, (long long)x->min_t,
                       (long long)x->max_t);
                cli_json_str(stdout, x->source);
                printf(",\"first_line\":%llu,\"last_line\":%llu", (unsigned long long)x->first_line,
                       (unsigned long long)x->last_line);
            }
            putchar('}');
            continue;
        }
        printf("version %llu%s\n", (unsigned long long)x->version, x->folded ? " (folded)" : "");
        if (!x->known) {
            printf("    unknown (committed before store format 2)\n\n");
            continue;
        }
        printf("Date:    %s (%lld)\n", tbuf, (long long)(x->commit_ns / 1000000000));
        printf("Events:  +%llu -%llu", (unsigned long long)x->adds, (unsigned long long)x->deletes);
        if (x->adds + x->deletes)
            printf(", times %lld..%lld", (long long)x->min_t, (long long)x->max_t);
        putchar('\n');
        if (x->first_line)
            printf("Source:  %s:%llu-%llu\n\n", x->source, (unsigned long long)x->first_line,
                   (unsigned long long)x->last_line);
        else
            printf("Source:  %s\n\n", x->source);
    }
    if (json)
        puts("]");
done:
    gsnap_free(v);
    gsnap_db_close(db);
    return ret;
}

static const char diff_usage[] =
    "Usage: graphsnap diff [OPTIONS] V1 V2\n"
    "\n"
    "Edge instances added and removed between versions V1 and V2 (V1 <= V2,\n"
    "'latest' allowed; at event time 'now'): '+ SRC DST T VERSION' for an\n"
    "instance live at V2 but not at V1, '- SRC DST T VERSION' for one live at\n"
    "V1 but not at V2 (T and VERSION: the add that created it). Sorted by\n"
    "source, destination, time; removals first.\n"
    "\n"
    "Options:\n"
    "  --node N       only edges from or to node N\n"
    "  --json         one JSON object on stdout\n"
    "  -d, --db DIR   database directory\n"
    "  -h, --help     show this help\n";

int cmd_diff(int argc, char **argv)
{
    static const struct option lo[] = {{"node", required_argument, NULL, O_NODE},
                                       {"json", no_argument, NULL, O_JSON},
                                       {NULL, 0, NULL, 0}};
    cli_opts o = CLI_OPTS_INIT(diff_usage, lo, NULL);
    gsnap_db *db = NULL;
    uint64_t node = UINT64_MAX, v1, v2;
    int c, rc, ret, json = 0;
    while ((c = cli_getopt(&o, argc, argv)) != CLI_OPT_END) {
        switch (c) {
        case CLI_OPT_HELP: return CLI_OK;
        case CLI_OPT_ERROR: return CLI_USAGE;
        case O_NODE:
            if (cli_parse_u64_range("--node", optarg, 0, UINT64_MAX - 1, &node))
                return CLI_USAGE;
            break;
        case O_JSON: json = 1; break;
        default: return cli_usage_err("internal: unhandled option");
        }
    }
    if ((ret = cli_positionals(argc, argv, 2, 2, "V1 V2")) != 0)
        return ret;
    if (cli_parse_version("V1", argv[optind], &v1) || cli_parse_version("V2", argv[optind + 1], &v2))
        return CLI_USAGE;
    if ((ret = cli_open_db(NULL, CLI_DB_READ, &db)) != 0)
        return ret;
    gsnap_read *rd = NULL;
    gsnap_diff_edge *e = NULL;
    size_t n = 0;
    if ((rc = gsnap_read_begin(db, &rd)) == 0) {
        if (v1 == GSNAP_VERSION_LATEST)
            v1 = gsnap_read_version(rd);
        rc = gsnap_db_diff(db, rd, v1, v2, node, &e, &n);
        if (v2 == GSNAP_VERSION_LATEST)
            v2 = gsnap_read_version(rd);
    }
    gsnap_read_end(rd);
    if (rc) {
        ret = cli_lib_err(db, rc, NULL);
        goto done;
    }
    size_t added = 0;
    for (size_t i = 0; i < n; i++)
        added += e[i].added != 0;
    if (json) {
        printf("{\"v1\":%llu,\"v2\":%llu,\"added\":%zu,\"removed\":%zu,\"edges\":[", (unsigned long long)v1,
               (unsigned long long)v2, added, n - added);
        for (size_t i = 0; i < n; i++)
            printf("%s{\"op\":\"%s\",\"src\":%llu,\"dst\":%llu,\"t\":%lld,\"version\":%llu}", i ? "," : "",
                   e[i].added ? "+" : "-", (unsigned long long)e[i].src, (unsigned long long)e[i].dst,
                   (long long)e[i].t, (unsigned long long)e[i].version);
        puts("]}");
    } else {
        for (size_t i = 0; i < n; i++)
            printf("%c %llu %llu %lld %llu\n", e[i].added ? '+' : '-', (unsigned long long)e[i].src,
                   (unsigned long long)e[i].dst, (long long)e[i].t, (unsigned long long)e[i].version);
    }
done:
    gsnap_free(e);
    gsnap_db_close(db);
    return ret;
}
