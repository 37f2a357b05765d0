/*
 * The CLI as a hostile new user meets it (issue #11, defects 6 and 8, and
 * --read-only): each case runs $BUILD/graphsnap through sh and checks the
 * exit code and the message.
 *   - damaged LMDB pages: `check` (and `neighbors`) never die of a signal;
 *     when the unguarded walk crashes, the guarded one reports "corrupt" and
 *     exits 1
 *   - --help / -V into /dev/full: exit 1; -V after a command works
 *   - init on a regular file: exit 1 (not 2)
 *   - snapshot list --json is an object; "now" instead of INT64_MAX
 *   - a UTF-8 BOM is skipped; a header row gets a hint
 *   - snapshot create --version beyond the latest: refused (exit 2)
 *   - --read-only: read commands create no lock.mdb; write commands refuse it
 */
#include "test.h"
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char bin[700], tmp[512];
static char out[65536];

/* Run a shell command line (with $G = the binary, $D = the tmp dir); the
 * exit status, 128 + signal when killed; stdout+stderr in out. */
static int sh(const char *fmt, ...) {
    char cmd[4096], line[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "G='%s'; D='%s'; (%s) > '%s/out' 2>&1", bin, tmp, cmd, tmp);
    int st = system(line);
    char p[700];
    snprintf(p, sizeof p, "%s/out", tmp);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = 0;
    if (f) fclose(f);
    if (st == -1) return -1;
    int code = WEXITSTATUS(st);
    return code;
}

static int exists(const char *rel) {
    char p[800];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

/* xor one byte of data.mdb in DIR at page, offset */
static void flip(const char *dir, long page, int off) {
    char p[800];
    snprintf(p, sizeof p, "%s/%s/data.mdb", tmp, dir);
    FILE *f = fopen(p, "r+b");
    if (!f) return;
    fseek(f, page * 4096 + off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, page * 4096 + off, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

int main(void) {
    const char *b = getenv("BUILD");
    snprintf(bin, sizeof bin, "%s/graphsnap", b && *b ? b : "build");
    if (bin[0] != '/') {
        char cwd[400];
        if (!getcwd(cwd, sizeof cwd)) return 1;
        char t[1200];
        snprintf(t, sizeof t, "%s/%s", cwd, bin);
        if (strlen(t) >= sizeof bin) return 1;
        memcpy(bin, t, strlen(t) + 1);
    }
    if (access(bin, X_OK) != 0) SKIP("no %s", bin);
    char *d = test_tmpdir("clihostile");
    if (strlen(d) >= sizeof tmp) return 1;
    memcpy(tmp, d, strlen(d) + 1);
    free(d);

    /* output errors */
    CHECK_MSG(sh("$G --help > /dev/full") == 1, "--help > /dev/full: %s", out);
    CHECK(sh("$G stat --help > /dev/full") == 1);
    CHECK_MSG(sh("$G stat -V") == 0 && strstr(out, "graphsnap "), "stat -V: %s", out);
    /* init on a regular file */
    CHECK_MSG(sh("touch $D/file && $G init $D/file") == 1 && strstr(out, "not a directory"), "init on a file: %s", out);
    /* BOM and header */
    CHECK(sh("$G init $D/db") == 0);
    CHECK_MSG(sh("printf '\\357\\273\\2771 2 5\\n2 3 6\\n' > $D/bom.tsv && $G ingest -d $D/db $D/bom.tsv") == 0,
              "BOM: %s", out);
    CHECK_MSG(sh("printf 'src dst t\\n1 2 3\\n' > $D/h.tsv && $G ingest -d $D/db $D/h.tsv") == 1 &&
                  strstr(out, "header row"), "header: %s", out);
    /* a graph big enough for branch pages, a snapshot */
    CHECK(sh("i=0; while [ $i -lt 30000 ]; do echo \"$((i * 7919 %% 5003)) $((i * 104729 %% 4999)) $i\"; i=$((i+1)); "
             "done > $D/e.tsv && $G ingest -d $D/db --batch 3000 $D/e.tsv") == 0);
    CHECK_MSG(sh("$G snapshot create s1 -d $D/db --hops 2") == 0, "%s", out);
    CHECK_MSG(sh("$G snapshot list -d $D/db --json") == 0 && out[0] == '{' && strstr(out, "\"snapshots\":["),
              "list --json: %s", out);
    CHECK_MSG(sh("$G snapshot show s1 -d $D/db") == 0 && strstr(out, "at_t\tnow") && !strstr(out, "9223372036854775807"),
              "show: %s", out);
    CHECK_MSG(sh("$G snapshot create s2 -d $D/db --version 999") == 2 && strstr(out, "beyond"), "--version 999: %s", out);
    /* --read-only */
    CHECK(sh("cp -r $D/db $D/ro && rm -f $D/ro/lock.mdb") == 0);
    CHECK_MSG(sh("$G neighbors 5 -d $D/ro --read-only") == 0, "read-only neighbors: %s", out);
    CHECK_MSG(sh("$G --read-only stat -d $D/ro") == 0, "read-only stat: %s", out);
    CHECK_MSG(!exists("ro/lock.mdb"), "--read-only created a lock.mdb");
    CHECK(sh("$G ingest -d $D/ro --read-only $D/bom.tsv") == 2);

    /* Found by a hostile-input campaign (each failed before its fix): */
    /* --fanouts / --caps lists: empty items, an item past 511 characters
     * (the list was cut there, silently), the option named in the message */
    CHECK_MSG(sh("$G snapshot create -d $D/db f1 --hops 2 --fanouts 2,,2") == 2 && strstr(out, "empty item"),
              "fanouts 2,,2: %s", out);
    CHECK(sh("$G snapshot create -d $D/db f2 --hops 2 --fanouts 2,2,") == 2);
    CHECK_MSG(sh("$G snapshot create -d $D/db f3 --hops 1 --fanouts $(printf '%%0510d' 0)12") == 0 &&
              strstr(out, "fanouts\t12\n"), "a 512-character fanout (12, not 1): %s", out);
    CHECK_MSG(sh("$G snapshot create -d $D/db f4 --hops 2 --fanouts 2,2 --hop-sets sampled --caps 0") == 2 &&
              strstr(out, "--caps"), "--caps 0: %s", out);
    CHECK(sh("$G snapshot create -d $D/db f5 --hops 2 --fanouts 2,2 --hop-sets sampled --caps 3,") == 2);
    CHECK(sh("$G sample -d $D/db --fanouts '2,' --random 4 --batches 1") == 2);
    CHECK(sh("$G sample -d $D/db --fanouts ' 2' --random 4 --batches 1") == 2);
    CHECK(sh("$G sample -d $D/db --fanouts '+2' --random 4 --batches 1") == 2);
    CHECK(sh("$G sample -d $D/db --fanouts '-1,2' --random 4 --batches 1") == 0);
    CHECK(sh("$G temporal-sample -d $D/db --fanouts '2,' --random 4") == 2);
    /* check --snapshot with a name that is not one: a usage error (exit 2,
     * it was 1 after walking the whole store); an unknown one: exit 3 */
    CHECK_MSG(sh("$G check -d $D/db --snapshot ../x") == 2, "check ../x: %s", out);
    CHECK(sh("$G check -d $D/db --snapshot nosuch") == 3);
    /* seed files: a negative or overflowing id is an error naming file and
     * line (fscanf's %llu took them as 2^64-1) */
    CHECK_MSG(sh("printf '1 2\\n-1\\n' > $D/seeds && $G sample -d $D/db --fanouts 2 --seeds $D/seeds") == 1 &&
              strstr(out, "seeds:2:"), "seed -1: %s", out);
    CHECK(sh("printf '99999999999999999999\\n' > $D/seeds && $G sample -d $D/db --fanouts 2 --seeds $D/seeds") == 1);
    CHECK(sh("printf '1 2\\n3\\n' > $D/seeds && $G sample -d $D/db --fanouts 2 --seeds $D/seeds --batches 1") == 0);
    /* --dry-run parses as ingest does: the BOM skipped, the header hinted */
    CHECK_MSG(sh("$G ingest --dry-run $D/bom.tsv") == 0 && strstr(out, "events     2"), "dry-run BOM: %s", out);
    CHECK_MSG(sh("printf '# c\\nsrc dst t\\n1 2 3\\n' > $D/hdr2.tsv && $G ingest --dry-run $D/hdr2.tsv") == 1 &&
              strstr(out, "hdr2.tsv:2:") && strstr(out, "header row"), "dry-run header: %s", out);
    /* a batch the retention horizon refuses: the message names the input
     * and the batch's lines (it named neither), the batch before it stays */
    CHECK(sh("$G init $D/hz --nosync && printf '1 2 100\\n1 2 101 del\\n1 3 150\\n' | $G -d $D/hz ingest - --batch 1 "
             "&& $G -d $D/hz compact --keep-versions 1") == 0);
    CHECK_MSG(sh("printf '5 6 200\\n5 7 201\\n5 8 202\\n5 9 50\\n5 10 203\\n' > $D/hz.tsv && "
                 "$G -d $D/hz ingest $D/hz.tsv --batch 2") == 1 && strstr(out, "hz.tsv: lines 3..4"),
              "horizon: %s", out);
    CHECK_MSG(sh("$G -d $D/hz neighbors 5 --out") == 0 && strstr(out, "6") && strstr(out, "7"), "batch 1: %s", out);

    /* damaged LMDB pages: flip header bytes of branch and leaf pages */
    int crashes_unguarded = 0, signals_guarded = 0, reported = 0, trials = 0;
    for (long pg = 2; pg < 400 && trials < (test_small() ? 8 : 40); pg += 7) {
        int offs[2] = {10, 12};
        for (int k = 0; k < 2; k++) {
            CHECK(sh("rm -rf $D/bad && cp -r $D/db $D/bad") == 0);
            flip("bad", pg, offs[k]);
            trials++;
            int u = sh("GRAPHSNAP_NO_GUARD=1 $G check -d $D/bad; echo \"rc=$?\"");
            const char *rc = strstr(out, "rc=");
            if (rc && atoi(rc + 3) >= 128) crashes_unguarded++;
            (void)u;
            int g = sh("$G check -d $D/bad");
            if (g >= 128) signals_guarded++;
            CHECK_MSG(g == 0 || g == 1, "page %ld offset %d: check exit %d: %s", pg, offs[k], g, out);
            if (g == 1 && strstr(out, "corrupt")) reported++;
            int q = sh("$G neighbors 17 -d $D/bad");
            CHECK_MSG(q == 0 || q == 1 || q == 3, "page %ld: neighbors exit %d: %s", pg, q, out);
        }
    }
    printf("%d damaged copies: unguarded check crashed %d times, guarded: %d signals, %d 'corrupt' reports\n",
           trials, crashes_unguarded, signals_guarded, reported);
    CHECK(signals_guarded == 0);
    if (crashes_unguarded) CHECK(reported >= crashes_unguarded);
    test_rmdir(tmp);
    TEST_DONE();
}
