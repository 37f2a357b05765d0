/* tests/test_sampler_adapt_cli.c -- `graphsnap sample` with the adaptive
 * refresh flags (issue 18) on a real store: the --json output carries the
 * policy and every gamma chosen (feedback: min(1, kappa * statistic) per
 * layer), the text output the decisions; bad values are usage errors (exit
 * 2). Skipped when the CLI is not built. */
#include "test.h"
#include <sys/wait.h>

static int sh(const char *cmd) {
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void) {
    const char *bd = getenv("BUILD");
    char bin[512], cmd[2048];
    snprintf(bin, sizeof bin, "%s/graphsnap", bd && *bd ? bd : "build");
    if (access(bin, X_OK) != 0) SKIP("CLI not built (%s)", bin);
    char *dir = test_tmpdir("adaptcli");
    char db[600];
    snprintf(db, sizeof db, "%s/db", dir);
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *d;
    OK(gsnap_db_open(db, &o, &d));
    gsnap_batch *b;
    OK(gsnap_batch_begin(d, &b));
    uint64_t rng = 21;
    for (uint64_t v = 0; v < 500; v++)
        for (int j = 0; j < 12; j++) OK(gsnap_batch_add(b, test_rand(&rng) % 500, v, 1));
    OK(gsnap_batch_commit(b, NULL));
    gsnap_db_close(d);
    /* feedback: layer 0 -> min(1, 2 * 0.1) = 0.2, layer 1 -> min(1, 2 * 0.8) = 1 */
    snprintf(cmd, sizeof cmd, "%s -d %s sample --fanouts 5,5 --mode fscr --random 64 --batches 9 "
             "--period 4 --refresh-policy feedback --feedback 0.1,0.8 --kappa 2 --json > %s/f.json",
             bin, db, dir);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "grep -q '\"refresh_policy\":\"feedback\"' %s/f.json", dir);
    CHECK(sh(cmd) == 0);
    /* decisions at batches 4 and 8, two layers each: four records */
    snprintf(cmd, sizeof cmd, "test $(grep -o '\"gamma\":' %s/f.json | wc -l) -eq 4", dir);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "test $(grep -o '\"layer\":0,\"gamma\":0.200000' %s/f.json | wc -l) -eq 2 && "
             "test $(grep -o '\"layer\":1,\"gamma\":1.000000' %s/f.json | wc -l) -eq 2", dir, dir);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(\"%s/f.json\"))' 2>/dev/null "
             "|| ! command -v python3 >/dev/null", dir);
    CHECK(sh(cmd) == 0); /* valid JSON (when python3 is there to say so) */
    /* miss, frozen, nothing changes: gamma 0, every refresh skipped; text output */
    snprintf(cmd, sizeof cmd, "%s -d %s sample --fanouts 5 --mode fscr --random 32 --batches 7 "
             "--period 3 --refresh-policy miss --lambda 0.25 > %s/m.txt", bin, db, dir);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "grep -q 'refresh policy miss: 2 decisions (2 refreshes skipped' %s/m.txt",
             dir);
    CHECK(sh(cmd) == 0);
    /* a run-time core within its bound (136 bytes a member; the counters of
     * 500 node ids and the window's lists count too) */
    snprintf(cmd, sizeof cmd, "%s -d %s sample --fanouts 5 --mode fscr --random 32 --batches 7 "
             "--period 3 --core-min 2 --core-max-bytes 4000 --json > %s/c.json", bin, db, dir);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "grep -q '\"dynamic_core\":1,\"core_nodes\":[0-9]*,\"core_bytes\":"
             "[0-9]*,' %s/c.json && test $(grep -o '\"core_bytes\":[0-9]*' %s/c.json | cut -d: -f2) "
             "-le 4000", dir, dir);
    CHECK(sh(cmd) == 0);
    const char *bad[] = {"--refresh-policy sometimes", "--lambda 0.5,0.5", "--lambda 0",
                         "--kappa -1", "--feedback 0.1", "--adapt-window 0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(cmd, sizeof cmd, "%s -d %s sample --fanouts 5 --mode fscr --random 8 %s 2>/dev/null",
                 bin, db, bad[i]);
        CHECK_MSG(sh(cmd) == 2, "%s: usage error", bad[i]);
    }
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
