/*
 * tests/crash/crash.c -- the long SIGKILL crash run (scripts/crash.sh).
 *
 *   crash [-n ROUNDS] [-s SEED] [-d MAX_DELAY_US] [-p ROUNDS_PER_DB]
 *         [-r] [-v] [-X] [-c GRAPHSNAP] DIR
 *
 * Runs ROUNDS kill rounds (tests/crash/crash_lib.h explains one round) in
 * databases under DIR (created if missing, left in place for inspection
 * when something fails, removed otherwise). -r adds cache refreshes and
 * snapshot builds in every second database. -c runs `GRAPHSNAP -d DB check`
 * (the CLI) after every kill as well. -X is the harness's self-test:
 * the child reports each commit just BEFORE making it, so a kill inside a
 * commit must be detected as a lost version (the run must fail). Prints the totals; exit 0 when
 * nothing was lost and every check passed, 1 otherwise.
 */
#include "crash/crash_lib.h"
#include <sys/stat.h>

int main(int argc, char **argv) {
    unsigned rounds = 300, delay = 150000, per_db = 25;
    uint64_t seed = 1;
    int refresh = 0, verbose = 0, lie = 0, c;
    const char *cli = NULL;
    while ((c = getopt(argc, argv, "n:s:d:p:rvXc:")) != -1) {
        switch (c) {
        case 'n': rounds = (unsigned)strtoul(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        case 'd': delay = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'p': per_db = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'r': refresh = 1; break;
        case 'v': verbose = 1; break;
        case 'X': lie = 1; break; /* self-test: must FAIL */
        case 'c': cli = optarg; break;
        default:
            fprintf(stderr, "usage: crash [-n rounds] [-s seed] [-d max_delay_us] [-p rounds_per_db] [-r] [-v] [-X] [-c graphsnap] DIR\n");
            return 2;
        }
    }
    if (optind != argc - 1 || !rounds || !per_db) {
        fprintf(stderr, "usage: crash [-n rounds] [-s seed] [-d max_delay_us] [-p rounds_per_db] [-r] [-v] [-X] [-c graphsnap] DIR\n");
        return 2;
    }
    (void)test_failures;
    const char *base = argv[optind];
    mkdir(base, 0755);
    cr_stats st;
    memset(&st, 0, sizeof st);
    uint64_t fails = cr_run(base, seed, rounds, per_db, delay, refresh, verbose, lie, cli, &st);
    printf("crash: seed %llu, rounds %u, max delay %u us: ", (unsigned long long)seed, rounds, delay);
    cr_print(stdout, &st);
    if (fails) {
        printf("crash: %llu FAILURE(S); databases left in %s\n", (unsigned long long)fails, base);
        return 1;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    printf("crash: PASS (0 lost committed versions, 0 check failures)\n");
    return 0;
}
