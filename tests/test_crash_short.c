/*
 * A short SIGKILL crash run inside `make test`: 24 kill rounds over ingest
 * (and cache refresh / snapshot builds when the library persists refreshes),
 * verifying after every kill that every reported commit is there whole,
 * nothing is half-present and the checks pass. The long run (300+ kills) is
 * scripts/crash.sh; see docs/reliability.md.
 */
#include "crash/crash_lib.h"

int main(void) {
    char *dir = test_tmpdir("crash");
    cr_stats st;
    memset(&st, 0, sizeof st);
    unsigned rounds = test_small() ? 6 : 24;
    /* valgrind runs the child some 30 times slower: kill later */
    unsigned delay = test_small() ? 1500000 : 150000;
    uint64_t fails = cr_run(dir, 20261122, rounds, test_small() ? 3 : 12, delay, 1, 0, 0, NULL, &st);
    cr_print(stdout, &st);
    CHECK(fails == 0);
    CHECK(st.kills == rounds);
    CHECK(st.lost == 0);
    CHECK(st.check_failures == 0);
    if (!fails) test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
