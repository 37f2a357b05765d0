/* tests/test_snapshot_advance_claim.c -- `snapshot advance` holds the
 * snapshot name's claim (the lock `snapshot create` takes), so concurrent
 * work on one name is safe:
 *   - while one process is in the middle of an advance (recomputed, about to
 *     write blocks), a second advance of the same name gets GSNAP_EBUSY, a
 *     create of the name GSNAP_EEXIST and a drop GSNAP_EBUSY, each with a
 *     message naming the snapshot; nothing of theirs is committed;
 *   - the held advance then completes, `check` is clean and its lists equal
 *     a fresh create at the new version;
 *   - two advances of one name started together in two processes: each
 *     either succeeds or gets GSNAP_EBUSY, at least one succeeds, and the
 *     result equals a fresh create (3 rounds). */
#include "test.h"
#include <sys/wait.h>

static const char *g_dir;

static void ingest(gsnap_db *db, uint64_t *rs, int n, int64_t t0) {
    gsnap_batch *bt;
    OK(gsnap_batch_begin(db, &bt));
    for (int i = 0; i < n; i++) OK(gsnap_batch_add(bt, test_rand(rs) % 1500, test_rand(rs) % 1500, t0 + i));
    OK(gsnap_batch_commit(bt, NULL));
}

static int hold_w = -1, hold_r = -1;
static void hold_at_write(void *ctx, const char *phase, uint64_t done, uint64_t total) {
    (void)ctx; (void)total;
    char c = 'h';
    if (strcmp(phase, "write") == 0 && done == 0 && hold_w >= 0) {
        if (write(hold_w, &c, 1) != 1 || read(hold_r, &c, 1) != 1) _exit(9);
        hold_w = -1;
    }
}

/* A child: open the db, wait for the start byte on rfd (when >= 0), advance.
 * Exit 0 ok, 16 GSNAP_EBUSY, 1 other. */
static int advance_child(int rfd, int held) {
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    if (gsnap_db_open(g_dir, &o, &db)) return 2;
    char c;
    if (rfd >= 0 && read(rfd, &c, 1) != 1) return 3;
    gsnap_advance_options ao = GSNAP_ADVANCE_OPTIONS_INIT;
    if (held) ao.progress = hold_at_write;
    int rc = gsnap_snapshot_advance(db, "adv", &ao, NULL);
    int ret = rc == GSNAP_OK ? 0 : rc == GSNAP_EBUSY && strstr(gsnap_db_errmsg(db), "adv") ? 16 : 1;
    if (ret == 1) fprintf(stderr, "advance: %d %s\n", rc, gsnap_db_errmsg(db));
    gsnap_db_close(db);
    return ret;
}

static gsnap_khop_result *all_lists(gsnap_db *db, const char *name) {
    gsnap_snapshot *s;
    gsnap_khop_result *r;
    uint64_t seeds[1500];
    for (uint64_t i = 0; i < 1500; i++) seeds[i] = i;
    OK(gsnap_snapshot_open(db, name, &s));
    gsnap_khop_options o = GSNAP_KHOP_OPTIONS_INIT;
    o.force_pread = 1;
    OK(gsnap_khop(s, seeds, 1500, 3, &o, &r));
    gsnap_snapshot_close(s);
    return r;
}

/* the advanced snapshot is clean and equals a fresh create at its version */
static void verify(gsnap_db *db, const gsnap_snapshot_options *so, uint64_t want_version, const char *what) {
    gsnap_snapshot_info ia;
    OK(gsnap_snapshot_info_get(db, "adv", &ia));
    CHECK_MSG(ia.at_version == want_version, "%s: at version %llu, want %llu", what,
              (unsigned long long)ia.at_version, (unsigned long long)want_version);
    gsnap_snapshot_options fo = *so;
    fo.as_of = ia.at_version;
    memcpy(fo.caps, ia.caps, sizeof fo.caps);
    OK(gsnap_snapshot_create(db, "fresh", &fo, NULL));
    gsnap_khop_result *a = all_lists(db, "adv"), *b = all_lists(db, "fresh");
    size_t nl = a->nseeds * a->hops;
    CHECK_MSG(memcmp(a->off, b->off, (nl + 1) * sizeof *a->off) == 0 &&
                  memcmp(a->ids, b->ids, a->off[nl] * sizeof *a->ids) == 0,
              "%s: advanced lists differ from a fresh create", what);
    gsnap_khop_result_free(a);
    gsnap_khop_result_free(b);
    uint64_t prob = 1;
    OK(gsnap_snapshot_check(db, NULL, NULL, NULL, &prob));
    CHECK_MSG(prob == 0, "%s: check found %llu problems", what, (unsigned long long)prob);
    OK(gsnap_snapshot_drop(db, "fresh"));
}

static int exit_code(pid_t pid) {
    int wst = 0;
    waitpid(pid, &wst, 0);
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
}

int main(void) {
    char *dir = test_tmpdir("advclaim");
    g_dir = dir;
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    uint64_t rs = 5, latest = 0;
    ingest(db, &rs, 8000, 1);
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hop_sets = GSNAP_HOPSETS_SAMPLED;
    so.hops = 3;
    so.caps[0] = 12; so.caps[1] = 8; so.caps[2] = 6;
    OK(gsnap_snapshot_create(db, "adv", &so, NULL));
    ingest(db, &rs, 300, 10000);
    OK(gsnap_db_version(db, &latest));
    gsnap_db_close(db);

    /* 1. an advance held in the middle; others on the same name meanwhile */
    int held[2], go[2];
    CHECK(pipe(held) == 0 && pipe(go) == 0);
    fflush(NULL);
    pid_t kid = fork();
    if (kid == 0) {
        close(held[0]);
        close(go[1]);
        hold_w = held[1];
        hold_r = go[0];
        _exit(advance_child(-1, 1));
    }
    close(held[1]);
    close(go[0]);
    char c;
    CHECK(read(held[0], &c, 1) == 1);
    OK(gsnap_db_open(dir, &o, &db));
    int rc = gsnap_snapshot_advance(db, "adv", NULL, NULL);
    CHECK_MSG(rc == GSNAP_EBUSY && strstr(gsnap_db_errmsg(db), "adv"),
              "a second advance during an advance: %d %s", rc, gsnap_db_errmsg(db));
    rc = gsnap_snapshot_create(db, "adv", &so, NULL);
    CHECK_MSG(rc == GSNAP_EEXIST, "create during an advance: %d %s", rc, gsnap_db_errmsg(db));
    rc = gsnap_snapshot_drop(db, "adv");
    CHECK_MSG(rc == GSNAP_EBUSY && strstr(gsnap_db_errmsg(db), "adv"), "drop during an advance: %d %s", rc,
              gsnap_db_errmsg(db));
    gsnap_snapshot_info info;
    OK(gsnap_snapshot_info_get(db, "adv", &info));
    CHECK_MSG(info.snap_version == 0, "something committed while the advance was held: version %llu",
              (unsigned long long)info.snap_version);
    c = 'g';
    CHECK(write(go[1], &c, 1) == 1);
    close(go[1]);
    close(held[0]);
    int code = exit_code(kid);
    CHECK_MSG(code == 0, "the held advance failed: %d", code);
    OK(gsnap_snapshot_info_get(db, "adv", &info));
    CHECK(info.snap_version == 1);
    verify(db, &so, latest, "after the held advance");

    /* 2. two advances of one name started together */
    int rounds = test_small() ? 1 : 3;
    for (int r = 0; r < rounds; r++) {
        uint64_t rs2 = 100 + (uint64_t)r;
        ingest(db, &rs2, 200, 20000 + 1000 * r);
        OK(gsnap_db_version(db, &latest));
        gsnap_db_close(db);
        int p[2];
        CHECK(pipe(p) == 0);
        fflush(NULL);
        pid_t kids[2];
        for (int k = 0; k < 2; k++)
            if ((kids[k] = fork()) == 0) {
                close(p[1]);
                _exit(advance_child(p[0], 0));
            }
        close(p[0]);
        usleep(100000);
        CHECK(write(p[1], "go", 2) == 2);
        close(p[1]);
        int ok = 0, busy = 0, other = 0;
        for (int k = 0; k < 2; k++) {
            code = exit_code(kids[k]);
            if (code == 0) ok++;
            else if (code == 16) busy++;
            else other++;
        }
        CHECK_MSG(ok >= 1 && ok + busy == 2 && other == 0, "round %d: %d advanced, %d busy, %d other", r, ok, busy, other);
        OK(gsnap_db_open(dir, &o, &db));
        char what[32];
        snprintf(what, sizeof what, "round %d", r);
        verify(db, &so, latest, what);
    }
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
