/* test_ops_cli: the operations commands of $BUILD/graphsnap (BUILD defaults
 * to "build") through sh: every --help exits 0 with a usage line; log shows
 * the ingested file and line ranges (text and --json); diff prints the
 * instances; backup, dump | load, dump again is identical; a load input
 * error (an event at the reserved time) exits 1 naming FILE:LINE; compact refuses
 * a bad option (exit 2), folds and shrinks, and queries before the horizon
 * exit 2 with the horizon named; a non-empty backup destination exits 1. */
#include "test.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char bin[512], dir[480];

static int sh(const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int file_has(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

int main(void) {
    const char *b = getenv("BUILD");
    snprintf(bin, sizeof bin, "%s/graphsnap", b && *b ? b : "build");
    if (access(bin, X_OK) != 0) SKIP("no %s", bin);
    char *t = test_tmpdir("opscli");
    snprintf(dir, sizeof dir, "%s", t);
    const char *cmds[] = {"backup", "dump", "load", "compact", "log", "diff"};
    for (int i = 0; i < 6; i++) {
        CHECK(sh("%s %s --help > %s/help.txt", bin, cmds[i], dir) == 0);
        char p[700];
        snprintf(p, sizeof p, "%s/help.txt", dir);
        CHECK_MSG(file_has(p, "Usage: graphsnap ") && file_has(p, cmds[i]), "%s --help", cmds[i]);
    }
    CHECK(sh("printf '1 2 10\\n1 3 11\\n# note\\n2 3 12\\n1 2 13 del\\n' > %s/e.tsv", dir) == 0);
    CHECK(sh("%s init %s/g > /dev/null && %s -d %s/g ingest %s/e.tsv --batch 2 > /dev/null", bin, dir, bin, dir, dir) == 0);
    CHECK(sh("%s -d %s/g log > %s/log.txt", bin, dir, dir) == 0);
    char p[700];
    snprintf(p, sizeof p, "%s/log.txt", dir);
    CHECK(file_has(p, "e.tsv:1-2") && file_has(p, "e.tsv:4-5") && file_has(p, "Events:  +1 -1"));
    /* versions the database does not have: exit 2 as dump, not an empty
     * answer with exit 0 (found by a hostile-input campaign) */
    CHECK(sh("%s -d %s/g log --versions 5..9 2> /dev/null", bin, dir) == 2);
    CHECK(sh("%s -d %s/g log --versions 1..9 2> /dev/null", bin, dir) == 2);
    CHECK(sh("%s -d %s/g log --versions 2.. > /dev/null", bin, dir) == 0);
    CHECK(sh("%s -d %s/g log --json -n 1 > %s/log.json", bin, dir, dir) == 0);
    snprintf(p, sizeof p, "%s/log.json", dir);
    CHECK(file_has(p, "[{\"version\":2,") && file_has(p, "\"first_line\":4,\"last_line\":5}]"));
    CHECK(sh("%s -d %s/g diff 1 2 > %s/diff.txt", bin, dir, dir) == 0);
    snprintf(p, sizeof p, "%s/diff.txt", dir);
    CHECK(file_has(p, "- 1 2 10 1\n+ 2 3 12 2\n"));
    CHECK(sh("%s -d %s/g diff 2 1 2> /dev/null", bin, dir) == 2);
    /* backup, dump | load, dump again */
    CHECK(sh("%s -d %s/g backup %s/bk > /dev/null", bin, dir, dir) == 0);
    CHECK(sh("%s -d %s/g backup %s/bk > /dev/null 2>&1", bin, dir, dir) == 1);
    CHECK(sh("%s -d %s/bk check > /dev/null", bin, dir) == 0);
    CHECK(sh("%s -d %s/bk dump > %s/d1 && %s -d %s/l load %s/d1 > /dev/null && %s -d %s/l dump | cmp -s - %s/d1", bin,
             dir, dir, bin, dir, dir, bin, dir, dir) == 0);
    CHECK(sh("%s -d %s/g dump --versions 2.. | grep -q '^versions 2 2$'", bin, dir) == 0);
    /* an event the load refuses (the time reserved for "now"): input error,
     * exit 1, FILE:LINE on stderr */
    CHECK(sh("printf 'graphsnap-dump 2\\nkeep both\\nversions 1 1\\nv 1 5 1 0 1 1 0 0 %%%%\\n"
             "a 2 3 9223372036854775807\\nend 1 1 0 0\\n' > %s/tmax.dump", dir) == 0);
    CHECK(sh("%s -d %s/tm load %s/tmax.dump 2> %s/tmax.err", bin, dir, dir, dir) == 1);
    snprintf(p, sizeof p, "%s/tmax.err", dir);
    CHECK(file_has(p, "tmax.dump:5: ") && file_has(p, "reserved for \"now\""));
    /* a load that commits nothing leaves no database it created (it left an
     * empty one); a missing input is an input error, exit 1 (it was 3) */
    snprintf(p, sizeof p, "%s/tm", dir);
    CHECK(access(p, F_OK) != 0);
    CHECK(sh("printf 'not a dump\\n' > %s/nd.txt && %s -d %s/nd load %s/nd.txt 2> /dev/null", dir, bin, dir, dir) == 1);
    snprintf(p, sizeof p, "%s/nd", dir);
    CHECK(access(p, F_OK) != 0);
    /* a directory the user made, with a lock.mdb of its own: only data.mdb
     * goes (the lock file was removed too, found in review) */
    CHECK(sh("mkdir %s/own && echo hi > %s/own/lock.mdb && touch %s/own/keep && %s -d %s/own load %s/nd.txt 2> /dev/null",
             dir, dir, dir, bin, dir, dir) == 1);
    snprintf(p, sizeof p, "%s/own/lock.mdb", dir);
    CHECK(access(p, F_OK) == 0); /* (LMDB rewrites a lock file it opens: its bytes are LMDB's) */
    snprintf(p, sizeof p, "%s/own/keep", dir);
    CHECK(access(p, F_OK) == 0);
    snprintf(p, sizeof p, "%s/own/data.mdb", dir);
    CHECK(access(p, F_OK) != 0);
    CHECK(sh("%s -d %s/g load %s/nd.txt 2> /dev/null", bin, dir, dir) == 1); /* an existing database stays */
    /* A database the failing load created is not removed while another
     * process has it open (found in review: its files were unlinked under
     * it). The dump comes through a FIFO, so that the load waits, with its
     * new database open, while this process opens it too. */
    {
        char fifo[600], race[600], mdb[700], rcf[600];
        snprintf(fifo, sizeof fifo, "%s/load.fifo", dir);
        snprintf(race, sizeof race, "%s/race", dir);
        snprintf(mdb, sizeof mdb, "%s/data.mdb", race);
        snprintf(rcf, sizeof rcf, "%s/race.rc", dir);
        CHECK(mkfifo(fifo, 0600) == 0);
        CHECK(sh("(%s -d %s load %s 2> %s/race.err; echo $? > %s.tmp && mv %s.tmp %s) &", bin, race, fifo, dir, rcf,
                 rcf, rcf) == 0);
        int fd = -1; /* the load opens the FIFO's other end; never wait forever for it */
        for (int i = 0; i < 3000 && (fd = open(fifo, O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO; i++) usleep(10000);
        CHECK(fd >= 0 && fcntl(fd, F_SETFL, 0) == 0);
        static const char head[] = "graphsnap-dump 2\nkeep both\n";
        CHECK(write(fd, head, sizeof head - 1) == (ssize_t)(sizeof head - 1));
        for (int i = 0; i < 3000 && access(mdb, F_OK) != 0; i++) usleep(10000);
        CHECK(access(mdb, F_OK) == 0);
        gsnap_db *held = NULL;
        gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
        OK(gsnap_db_open(race, &o, &held));
        CHECK(write(fd, "bad line\n", 9) == 9);
        close(fd);
        for (int i = 0; i < 3000 && access(rcf, F_OK) != 0; i++) usleep(10000);
        CHECK(file_has(rcf, "1"));
        CHECK_MSG(access(mdb, F_OK) == 0, "the load removed a database another process had open");
        snprintf(p, sizeof p, "%s/race.err", dir);
        CHECK(file_has(p, "another process"));
        uint64_t v = 9;
        OK(gsnap_db_version(held, &v));
        CHECK(v == 0);
        gsnap_db_close(held);
    }
    CHECK(sh("%s -d %s/g check > /dev/null", bin, dir) == 0);
    CHECK(sh("%s -d %s/nf load %s/no-such-dump 2> /dev/null", bin, dir, dir) == 1);
    /* compact */
    CHECK(sh("%s -d %s/g compact 2> /dev/null", bin, dir) == 2);
    CHECK(sh("%s -d %s/g compact --keep-versions 1 --json > %s/c.json", bin, dir, dir) == 0);
    snprintf(p, sizeof p, "%s/c.json", dir);
    CHECK(file_has(p, "\"horizon\":2,") && file_has(p, "\"shrunk\":true"));
    CHECK(sh("%s -d %s/g neighbors 3 --version 1 2> %s/err.txt", bin, dir, dir) == 2);
    snprintf(p, sizeof p, "%s/err.txt", dir);
    CHECK(file_has(p, "before the retention horizon 2"));
    CHECK(sh("%s -d %s/g neighbors 3 > /dev/null", bin, dir) == 0);
    test_rmdir(dir);
    free(t);
    TEST_DONE();
}
