/*
 * cli/main.c -- `graphsnap`: global options and subcommand dispatch.
 *
 *   graphsnap [-d DIR | --db DIR] COMMAND [ARGS...]
 *   graphsnap --help | --version | help [COMMAND]
 *
 * Global options before the command are handled here; -d/--db after the
 * command is handled by cli_getopt() in every subcommand.
 */
#include "cli/cli.h"
#include "cli/doc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help; /* one line */
    int big_heap;     /* fills hundreds of MiB of heap: runs on huge pages (heap_on_huge_pages) */
} cli_command;

static int cmd_help(int argc, char **argv);

/* The dispatch table, in the order `graphsnap --help` lists it. */
static const cli_command commands[] = {
    {"init", cmd_init, "create a database", 0},
    {"ingest", cmd_ingest, "load edge events from a TSV/CSV file or stdin, in atomic batches", 1},
    {"neighbors", cmd_neighbors, "point-in-time neighbours of a node (at time T, as of version V)", 0},
    {"degree", cmd_degree, "point-in-time degree of a node", 0},
    {"stat", cmd_stat, "database statistics", 0},
    /* @@CLI_COMMANDS@@ other modules: add one line each below, e.g.
     *   {"snapshot", cmd_snapshot, "create, list, show or drop snapshots", 1}, (1: big_heap) */
    {"snapshot", cmd_snapshot, "create, list, show or drop snapshots", 1},
    {"khop", cmd_khop, "k-hop neighbourhoods N_1..N_k of nodes, read from a snapshot's slabs", 0},
    {"check", cmd_check, "verify the store and every snapshot (checksums, slab pointers)", 1},
    {"sample", cmd_sample, "sample GNN mini-batches (FBL, FCR, OTF modes): throughput, hit rates", 1},
    {"refresh", cmd_refresh, "OTF refresh of a snapshot's caches as its next generation", 1},
    {"temporal-sample", cmd_temporal_sample, "temporal neighbour sampling of (node, time) roots (TGL-style)", 1},
    {"temporal-events", cmd_temporal_events, "the events in time order, in batches, with negative destinations", 1},

    {"attr", cmd_attr, "node attribute tables (features, labels): create, ingest, get, list", 1},
    {"backup", cmd_backup, "online, consistent copy of the database (store + snapshot slabs)", 0},
    {"dump", cmd_dump, "write the database as portable text (versions, events, snapshots)", 1},
    {"load", cmd_load, "load a dump into an empty database (or append versions)", 1},
    {"compact", cmd_compact, "retention: fold history before a horizon, shrink the file", 1},
    {"log", cmd_log, "versions with commit time, event counts and source", 0},
    {"diff", cmd_diff, "edges added and removed between two versions", 0},
    {"help", cmd_help, "show the help of a command", 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const cli_command *find_command(const char *name)
{
    size_t i;
    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void print_help(FILE *f)
{
    size_t i;
    fputs("Usage: graphsnap [-d DIR] COMMAND [OPTIONS] [ARGS]\n"
          "       graphsnap --help | --version | help COMMAND\n"
          "       graphsnap help --man | --markdown\n"
          "\n"
          "Embedded store for dynamic temporal graphs, with snapshot caches for GNN\n"
          "neighbour sampling.\n"
          "\n"
          "Commands:\n",
          f);
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s  %s\n", commands[i].name, commands[i].help);
    fputs("\n"
          "Global options (before or after the command):\n"
          "  -d, --db DIR   database directory (default: $GRAPHSNAP_DB)\n"
          "  -h, --help     show help (also: graphsnap COMMAND --help)\n"
          "  -V, --version  show the version\n"
          "\n"
          "help --man prints this manual as a man page (roff), help --markdown as the\n"
          "reference of docs/cli.md; both are made from the --help texts.\n"
          "\n"
          "Environment:\n"
          "  GRAPHSNAP_DB        database directory when -d/--db is not given\n"
          "  GRAPHSNAP_PROGRESS  1: always draw the progress line of long commands on\n"
          "                      stderr, 0: never (default: when stderr is a terminal\n"
          "                      and --json is not given)\n"
          "  GSNAP_CUDART        CUDA runtime library to load for GPU staging (default:\n"
          "                      libcudart.so.13/.12/.11.0/.so, then CUDA_HOME/lib64)\n"
          "\n"
          "Exit codes:\n"
          "  0  success\n"
          "  1  runtime or data error (parse error, I/O error, corrupt data)\n"
          "  2  usage error (unknown option, bad parameter value)\n"
          "  3  not found (no such database or snapshot)\n"
          "\n"
          "Errors go to stderr, prefixed \"graphsnap: \"; --json prints one JSON object\n"
          "on stdout. See docs/cli.md.\n",
          f);
}

/* `help --man` / `help --markdown`: every command's --help, rendered (cli/doc.h). */
static int help_doc(int format)
{
    cli_doc_cmd docs[NCOMMANDS];
    char *main_help = NULL, *texts[NCOMMANDS] = {NULL};
    size_t len = 0, i, n = 0;
    int ret = CLI_OK, rc;
    FILE *m = open_memstream(&main_help, &len);
    if (!m)
        return CLI_ERR;
    print_help(m);
    fclose(m);
    for (i = 0; i < NCOMMANDS; i++) {
        char *sub[3];
        if (commands[i].fn == cmd_help)
            continue;
        sub[0] = (char *)commands[i].name;
        sub[1] = (char *)"--help";
        sub[2] = NULL;
        cli_cmd = commands[i].name;
        rc = CLI_OK;
        texts[n] = cli_doc_capture(commands[i].fn, 2, sub, &rc);
        if (!texts[n]) {
            cli_cmd = "help";
            cli_err("cannot capture the output of '%s --help'", commands[i].name);
            ret = CLI_ERR;
            goto out;
        }
        if (rc != CLI_OK || !texts[n][0]) {
            /* documented as such (tests/test_cli_docs.c fails on it), but the
             * build that generates the man page goes on */
            char *t = NULL;
            size_t tl = 0;
            FILE *tf = open_memstream(&t, &tl);
            cli_cmd = "help";
            cli_err("warning: 'graphsnap %s --help' printed no help (exit %d)", commands[i].name, rc);
            if (tf) {
                fprintf(tf, "(graphsnap %s --help printed no help)\n", commands[i].name);
                fclose(tf);
            }
            free(texts[n]);
            texts[n] = t;
            if (!t) {
                ret = CLI_ERR;
                goto out;
            }
        }
        docs[n].name = commands[i].name;
        docs[n].summary = commands[i].help;
        docs[n].help = texts[n];
        n++;
    }
    cli_doc_write(stdout, format, main_help, docs, n);
out:
    for (i = 0; i < n; i++)
        free(texts[i]);
    free(main_help);
    return ret;
}

static int cmd_help(int argc, char **argv)
{
    const cli_command *c;
    char *sub[3];
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        print_help(stdout);
        return CLI_OK;
    }
    if (argc == 2 && strcmp(argv[1], "--man") == 0)
        return help_doc(CLI_DOC_MAN);
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0)
        return help_doc(CLI_DOC_MARKDOWN);
    if (argc > 2)
        return cli_usage_err("unexpected argument '%s'", argv[2]);
    c = find_command(argv[1]);
    if (!c)
        return cli_usage_err("unknown command '%s'", argv[1]);
    if (c->fn == cmd_help) {
        print_help(stdout);
        return CLI_OK;
    }
    sub[0] = (char *)c->name;
    sub[1] = (char *)"--help";
    sub[2] = NULL;
    cli_cmd = c->name;
    return c->fn(2, sub);
}

/* A result that could not be written is a failure (e.g. > /dev/full). */
static int out_checked(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_err("error writing the output: %s", strerror(errno));
        if (rc == CLI_OK)
            rc = CLI_ERR;
    }
    return rc;
}

/* The value of glibc.malloc.hugetlb in GLIBC_TUNABLES, or NULL when it is
 * not named there. */
static const char *hugetlb_tunable(void)
{
    static const char name[] = "glibc.malloc.hugetlb=";
    const char *t = getenv("GLIBC_TUNABLES"), *h = t ? strstr(t, name) : NULL;
    return h ? h + sizeof name - 1 : NULL;
}

/* glibc reads its tunables once, as the program starts (GLIBC_TUNABLES):
 * glibc.malloc.hugetlb=1 has malloc advise transparent huge pages for the
 * heap it grows (THP "madvise" mode, Debian's default). The commands marked
 * big_heap fill hundreds of MiB of fresh heap (merge outputs, an advance's
 * lists), and in 4 KiB pages each first touch is a page fault, dear on a
 * VM: R-MAT-20 CLI ingest 2.15-2.36 -> 2.73-2.84 M edges/s, an R-MAT-18
 * snapshot advance 1.83-1.95 -> 1.52-1.58 s (docs/benchmarks.md "The CLI's
 * heap on huge pages"). So such a command runs the program again once, with
 * the tunable added; the others do not pay the exec (4-5 ms a command).
 * Why not, or NULL when it should: the environment names the tunable already
 * (the user's choice, or this second run), GRAPHSNAP_HUGE_HEAP=0, or valgrind
 * runs the program (its exec would leave valgrind). */
static const char *no_huge_heap(void)
{
#ifdef __GLIBC__
    const char *off = getenv("GRAPHSNAP_HUGE_HEAP"), *pre = getenv("LD_PRELOAD"), *h = hugetlb_tunable();
    if (h) return *h == '0' ? "4 KiB pages (GLIBC_TUNABLES glibc.malloc.hugetlb=0)"
                            : "transparent huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb)";
    if (off && strcmp(off, "0") == 0) return "4 KiB pages (GRAPHSNAP_HUGE_HEAP=0)";
    if (pre && strstr(pre, "vgpreload")) return "4 KiB pages (valgrind)";
    return NULL;
#else
    return "the C library's default pages (not glibc)";
#endif
}

/* Run the program again with glibc.malloc.hugetlb=1 added (see above); when
 * the exec fails it goes on as it is. */
static void heap_on_huge_pages(char **argv)
{
#ifdef __GLIBC__
    if (no_huge_heap()) return;
    const char *t = getenv("GLIBC_TUNABLES");
    char self[4096], *old = t ? strdup(t) : NULL, *v;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    size_t len = (old ? strlen(old) + 1 : 0) + sizeof "glibc.malloc.hugetlb=1";
    if (n <= 0 || (t && !old) || !(v = malloc(len))) {
        free(old);
        return;
    }
    self[n] = '\0';
    snprintf(v, len, "%s%sglibc.malloc.hugetlb=1", old ? old : "", old && *old ? ":" : "");
    if (setenv("GLIBC_TUNABLES", v, 1) == 0) {
        execv(self, argv);
        if (old) /* no exec (a seccomp filter, a deleted binary): as it was */
            (void)setenv("GLIBC_TUNABLES", old, 1);
        else
            (void)unsetenv("GLIBC_TUNABLES");
    }
    free(v);
    free(old);
#else
    (void)argv;
#endif
}

int cli_huge_heap(void)
{
    const char *h = hugetlb_tunable();
    return h && *h != '0';
}

int main(int argc, char **argv)
{
    const cli_command *c;
    const char *env;
    int i, rc;

    /* The allocator keeps what the process frees: every merge of an ingest
     * allocates and frees buffers of hundreds of MiB, which glibc would
     * unmap and the next merge fault in again (R-MAT SCALE 20 ingest
     * 1.62-1.66 M -> 1.89-2.10 M edges/s, peak RSS 797 -> 837 MB;
     * docs/benchmarks.md). Best effort: ENOTSUP off glibc; under valgrind or
     * a sanitizer, which bring their own allocator, it does nothing. */
    (void)gsnap_keep_freed_memory();
    env = getenv("GRAPHSNAP_DB");

    if (env && *env)
        cli_db_dir = env;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_help(stdout);
            return out_checked(CLI_OK);
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            const char *why = no_huge_heap();
            printf("graphsnap %s (libgraphsnap %s)\nheap: %s\n", GSNAP_VERSION_STRING, gsnap_version(),
                   why ? why : "transparent huge pages for the commands that fill large heaps (they run again "
                               "with GLIBC_TUNABLES glibc.malloc.hugetlb=1)");
            return out_checked(CLI_OK);
        }
        if (strcmp(a, "--read-only") == 0) {
            cli_read_only = 1;
            continue;
        }
        if (strcmp(a, "-d") == 0 || strcmp(a, "--db") == 0) {
            if (i + 1 >= argc)
                return cli_usage_err("option '%s' needs a value", a);
            cli_db_dir = argv[++i];
        } else if (strncmp(a, "--db=", 5) == 0) {
            cli_db_dir = a + 5;
        } else if (a[1] == 'd' && a[2]) {
            cli_db_dir = a + 2;
        } else if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else {
            return cli_usage_err("unknown option '%s'", a);
        }
    }
    if (i >= argc) {
        print_help(stderr);
        return CLI_USAGE;
    }
    c = find_command(argv[i]);
    if (!c)
        return cli_usage_err("unknown command '%s'", argv[i]);
    cli_cmd = c->name;
    if (c->big_heap)
        heap_on_huge_pages(argv);
    rc = cli_guarded(c->fn, argc - i, argv + i);
    return out_checked(rc);
}
