/*
 * A short concurrency soak inside `make test` (8 s; 3 s under valgrind):
 * one writer, two point-in-time readers, one k-hop reader and a sampler with
 * background OTF refresh on one database, every invariant checked
 * continuously (tests/soak/soak.c explains them). The documented long run
 * (5 minutes and more) is scripts/soak.sh; see docs/reliability.md.
 */
#define SOAK_NO_MAIN
#include "soak/soak.c"

static char *dir; /* global: reachable in the children (valgrind leak check) */

int main(void) {
    dir = test_tmpdir("soak");
    char db[600];
    snprintf(db, sizeof db, "%s/db", dir);
    char *argv[] = {"soak", "-t", test_small() ? "3" : "8", "-r", "2", "-k", "1", db, NULL};
    int rc = soak_main(8, argv);
    CHECK(rc == 0);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
