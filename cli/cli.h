/*
 * cli/cli.h -- shared helpers of the `graphsnap` command-line tool.
 *
 * A subcommand is `int cmd_NAME(int argc, char **argv)`: argv[0] is the
 * subcommand's name, the rest its arguments (global options given before the
 * subcommand have been taken out by main). It returns the process exit code:
 *
 *   CLI_OK 0        success
 *   CLI_ERR 1       runtime or data error (parse error, I/O, corrupt data)
 *   CLI_USAGE 2     usage error (unknown option, bad parameter value)
 *   CLI_NOTFOUND 3  the database (or a named snapshot) does not exist
 *
 * Conventions every subcommand follows:
 *   - options are parsed with cli_getopt(), which adds -h/--help (prints the
 *     command's usage on stdout, exit 0) and -d/--db DIR (the global database
 *     option, accepted after the subcommand too);
 *   - errors go to stderr through cli_err()/cli_lib_err() ("graphsnap: CMD: ...");
 *   - stdout carries only the result, written after the work succeeded (never
 *     partial output for a failure); --json prints exactly one JSON value;
 *   - numbers given by the user are parsed with cli_parse_*() which name the
 *     parameter in their error message.
 */
#ifndef GSNAP_CLI_H
#define GSNAP_CLI_H

#include "graphsnap.h"
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_ERR = 1, CLI_USAGE = 2, CLI_NOTFOUND = 3 };

/* ---- global state, set by main ------------------------------------------- */

/** Database directory: -d/--db (before or after the subcommand), else the
 *  environment variable GRAPHSNAP_DB, else NULL. */
extern const char *cli_db_dir;
/** Name of the running subcommand (for messages), "" before dispatch. */
extern const char *cli_cmd;
/** --read-only (before or after the subcommand): read commands open the
 *  database with no lock file at all (LMDB MDB_RDONLY | MDB_NOLOCK), for
 *  backups and read-only media; write commands refuse it (usage error). */
extern int cli_read_only;
/** Run a subcommand in a forked child and turn a crash (SIGSEGV, SIGBUS,
 *  SIGABRT: damaged LMDB pages) into "corrupt LMDB file at page N of FILE"
 *  and exit code 1 (cli/guard.c). GRAPHSNAP_NO_GUARD=1 runs it in-process. */
int cli_guarded(int (*fn)(int, char **), int argc, char **argv);
/* 1 when this process's heap is on transparent huge pages (main.c: glibc's
 * glibc.malloc.hugetlb tunable is set and not 0). */
int cli_huge_heap(void);

/* ---- messages ------------------------------------------------------------- */

/** Print "graphsnap: CMD: <message>\n" on stderr (CMD omitted before dispatch). */
void cli_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** Print a usage error plus "Try 'graphsnap CMD --help'." and return CLI_USAGE. */
int cli_usage_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** Exit code for a library return code: NOTFOUND -> 3, EINVAL/ERANGE -> 2,
 *  other failures -> 1, 0 -> 0. */
int cli_exit_code(int rc);
/** Report a failed library call: "graphsnap: CMD: <what>: <detail>" where the
 *  detail is gsnap_db_errmsg(db) (when db and non-empty) else gsnap_strerror(rc);
 *  what NULL or "" prints just the detail. Returns cli_exit_code(rc). db may be NULL. */
int cli_lib_err(gsnap_db *db, int rc, const char *what);

/* ---- option parsing ------------------------------------------------------- */

/** Return values of cli_getopt besides the command's own option values. */
#define CLI_OPT_END (-1)   /* no more options: positionals are argv[optind..argc-1] */
#define CLI_OPT_HELP (-2)  /* -h/--help: usage was printed on stdout; return CLI_OK */
#define CLI_OPT_ERROR (-3) /* usage error already printed; return CLI_USAGE */

typedef struct {
    const char *usage;             /* full help text of the command (printed on --help) */
    const struct option *longopts; /* the command's long options, {0}-terminated; may be NULL */
    const char *shortopts;         /* getopt(3) short options, e.g. "b:j"; may be NULL.
                                      'h' and 'd' are taken (help, database). */
    /* internal */
    int started;
    struct option all[64];
    char shorts[96];
} cli_opts;
#define CLI_OPTS_INIT(usage, longopts, shortopts) {(usage), (longopts), (shortopts), 0, {{0, 0, 0, 0}}, {0}}

/**
 * getopt_long(3) for a subcommand: call in a loop until it returns CLI_OPT_END.
 * Options and positional arguments may be mixed ("ingest f.tsv --batch 10");
 * "--" ends the options. Option values come in `optarg`, positionals are
 * argv[optind..argc-1] afterwards. -d/--db DIR sets cli_db_dir and is not
 * returned. Unknown options and missing values print a usage error.
 */
int cli_getopt(cli_opts *o, int argc, char **argv);

/** Check the number of positionals (argc - optind) is within [min, max];
 *  prints a usage error naming `what` otherwise. Returns 0 or CLI_USAGE. */
int cli_positionals(int argc, char **argv, int min, int max, const char *what);

/* ---- parameter parsing: 0 on success, else CLI_USAGE with a message such as
 *      "graphsnap: ingest: --batch: 'x' is not a positive integer" ---------- */

/** Unsigned decimal integer (no sign, no spaces, <= UINT64_MAX). */
int cli_parse_u64(const char *param, const char *text, uint64_t *out);
/** Unsigned decimal in [min, max]. */
int cli_parse_u64_range(const char *param, const char *text, uint64_t min, uint64_t max,
                        uint64_t *out);
/** Signed decimal integer. */
int cli_parse_i64(const char *param, const char *text, int64_t *out);
/** Comma-separated list of 1..maxn unsigned decimals in [min, max] (and
 *  "-1" items when minus_one): no empty items, signs or spaces; errors
 *  name param and the item. */
int cli_parse_list(const char *param, const char *text, uint64_t min, uint64_t max, int minus_one,
                   unsigned maxn, int64_t *out, unsigned *n);
/** Floating-point number (finite). */
int cli_parse_double(const char *param, const char *text, double *out);
/** Byte size: integer with an optional binary suffix K, M, G, T (also KiB, MB...:
 *  all powers of 1024), e.g. "64M" = 67108864. */
int cli_parse_size(const char *param, const char *text, uint64_t *out);
/** Event time: "now" (GSNAP_TIME_MAX) or a signed integer. */
int cli_parse_time(const char *param, const char *text, int64_t *out);
/** Version: "latest" (GSNAP_VERSION_LATEST) or an unsigned integer. */
int cli_parse_version(const char *param, const char *text, uint64_t *out);

/* ---- JSON output ---------------------------------------------------------- */

/** Write `s` as a JSON string literal (quotes included, control characters,
 *  quotes and backslashes escaped; bytes >= 0x80 passed through). NULL -> null. */
void cli_json_str(FILE *f, const char *s);

/* ---- database ------------------------------------------------------------- */

#define CLI_DB_READ 0  /* open an existing database read-only */
#define CLI_DB_WRITE 1 /* open an existing database for writing */

/**
 * Open the database named by cli_db_dir. `opts` may be NULL (defaults);
 * `mode` CLI_DB_READ or CLI_DB_WRITE (never creates: that is `init`).
 * On failure prints "graphsnap: cannot open database 'DIR': <detail>" (or, with
 * no directory given, a usage error naming -d/--db/GRAPHSNAP_DB) and returns
 * the exit code (3 for a missing database); 0 on success.
 */
int cli_open_db(const gsnap_db_options *opts, int mode, gsnap_db **out);

/* ---- subcommands ------------------------------------------------------------
 * One prototype per subcommand; the dispatch table is in cli/main.c. */
int cmd_init(int argc, char **argv);      /* cli/cmd_store.c */
int cmd_ingest(int argc, char **argv);    /* cli/cmd_store.c */
int cmd_neighbors(int argc, char **argv); /* cli/cmd_store.c */
int cmd_degree(int argc, char **argv);    /* cli/cmd_store.c */
int cmd_stat(int argc, char **argv);      /* cli/cmd_store.c */
/* @@CLI_PROTOTYPES@@ other modules: add one prototype line each below, e.g.
 *   int cmd_snapshot(int argc, char **argv); (cli/cmd_snapshot.c) */
int cmd_snapshot(int argc, char **argv);  /* cli/cmd_snapshot.c */
/* `graphsnap snapshot advance` (cli/cmd_snapshot_advance.c); usage: the snapshot help text */
int cli_snapshot_advance(int argc, char **argv, const char *usage);
int cmd_khop(int argc, char **argv);      /* cli/cmd_snapshot.c */
int cmd_check(int argc, char **argv);     /* cli/cmd_snapshot.c */
int cmd_sample(int argc, char **argv);    /* cli/cmd_sample.c */
int cmd_refresh(int argc, char **argv);   /* cli/cmd_sample.c */
int cmd_temporal_sample(int argc, char **argv); /* cli/cmd_temporal.c */
int cmd_temporal_events(int argc, char **argv); /* cli/cmd_temporal.c */

int cmd_attr(int argc, char **argv);      /* cli/cmd_attr.c */

int cmd_backup(int argc, char **argv);    /* cli/cmd_ops.c */
int cmd_dump(int argc, char **argv);      /* cli/cmd_ops.c */
int cmd_load(int argc, char **argv);      /* cli/cmd_ops.c */
int cmd_compact(int argc, char **argv);   /* cli/cmd_ops.c */
int cmd_log(int argc, char **argv);       /* cli/cmd_ops.c */
int cmd_diff(int argc, char **argv);      /* cli/cmd_ops.c */

#endif
