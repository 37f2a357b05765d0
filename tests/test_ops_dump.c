/* test_ops_dump: dump -> load into an empty database -> dump gives identical
 * bytes on the PGP events (data/pgp.tsv; a prefix with GSNAP_TEST_SMALL)
 * with deletions mixed in, and every point-in-time query agrees (random
 * nodes, times and versions); the snapshot is rebuilt with the same
 * answers; a partial dump (--versions A..B) appends to a database at A-1
 * and gives the same database; wrong versions, a malformed line and a
 * truncated dump are refused with clear errors. Hostile dumps (run also
 * without the PGP data): a horizon past the last version or after a dumped
 * snapshot, bad numbers on horizon, snapshot, v, versions and end lines, a
 * NUL byte, v lines whose counts or time range disagree with their events,
 * an event the batch refuses: each GSNAP_EPARSE naming FILE:LINE, with the
 * versions before the bad line committed and no other. */
#include "ops_util.h"
#include <time.h>
#include "store/store_int.h" /* GSNAP_STORE_FORMAT */

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); fclose(f); return NULL; }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void dump_to(gsnap_db *db, const char *path, uint64_t from, uint64_t to) {
    FILE *f = fopen(path, "w");
    gsnap_dump_options o = GSNAP_DUMP_OPTIONS_INIT;
    o.from = from;
    o.to = to;
    OK(gsnap_db_dump(db, f, &o));
    fclose(f);
}

/* gsnap_db_load of the file at path into db (rep may be NULL): its return code. */
static int load_from(gsnap_db *db, const char *path, gsnap_load_report *rep) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(1); }
    int rc = gsnap_db_load(db, f, path, NULL, rep);
    fclose(f);
    return rc;
}

static int same_file(const char *a, const char *b) {
    size_t la = 0, lb = 0;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- hostile dumps (no PGP data needed) --------------------------------- */

/* A small format-2 dump: three versions (the third without events) and an
 * exact snapshot at version 2. Line numbers: 4 versions, 5 v 1, 8 v 2,
 * 9 'a 2 3 12', 11 v 3, 12 snapshot, 13 end. */
static const char base_dump[] = "graphsnap-dump 2\n"
                                "store-format 3\n"
                                "keep both\n"
                                "versions 1 3\n"
                                "v 1 5 2 0 10 11 1 2 e.tsv\n"
                                "a 1 2 10\n"
                                "a 1 3 11\n"
                                "v 2 6 2 0 12 13 3 4 e.tsv\n"
                                "a 2 3 12\n"
                                "a 3 1 13\n"
                                "v 3 7 0 0 0 0 0 0 %\n"
                                "snapshot s1 in 2 2,2 2 now 2 1 exact 508,508\n"
                                "end 3 4 1 0\n";

/* base_dump with the first `from` replaced by `to` (which may hold NUL
 * bytes: to_len of them); *n its length. */
static char *variant(const char *from, const char *to, size_t to_len, size_t *n) {
    const char *at = strstr(base_dump, from);
    if (!at) { fprintf(stderr, "variant: no '%s' in the base dump\n", from); exit(1); }
    size_t pre = (size_t)(at - base_dump), fl = strlen(from), post = strlen(at + fl);
    char *s = malloc(pre + to_len + post + 1);
    memcpy(s, base_dump, pre);
    memcpy(s + pre, to, to_len);
    memcpy(s + pre + to_len, at + fl, post + 1);
    *n = pre + to_len + post;
    return s;
}

static int case_no;

/* Load text[0..n) into a fresh database: the load's code; *latest the
 * database's version after it, msg its error message, *snaps the snapshots
 * it rebuilt. */
/* text[0..n) into the file at path (the test stops when it cannot). */
static void write_text_n(const char *path, const char *text, size_t n) {
    FILE *w = fopen(path, "wb");
    if (!w || fwrite(text, 1, n, w) != n || fclose(w)) { perror(path); exit(1); }
}
static void write_text(const char *path, const char *text) { write_text_n(path, text, strlen(text)); }

/* A fresh database (no fsync) at path. */
static gsnap_db *open_nosync(const char *path) {
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *x = NULL;
    OK(gsnap_db_open(path, &o, &x));
    return x;
}

/* text[0..n) loaded as a dump into a new database of its own under dir,
 * left open in *db: gsnap_db_load's return code. */
static int load_text(const char *dir, const char *text, size_t n, gsnap_db **db, gsnap_load_report *rep) {
    char fp[600], dbp[600];
    int k = case_no++;
    snprintf(fp, sizeof fp, "%s/hostile%d.dump", dir, k);
    snprintf(dbp, sizeof dbp, "%s/hostile%d.db", dir, k);
    write_text_n(fp, text, n);
    *db = open_nosync(dbp);
    return load_from(*db, fp, rep);
}

static int load_case(const char *dir, const char *text, size_t n, char *msg, size_t msgcap, uint64_t *latest,
                     uint64_t *snaps) {
    gsnap_db *x = NULL;
    gsnap_load_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = load_text(dir, text, n, &x, &rep);
    snprintf(msg, msgcap, "%s", rc ? gsnap_db_errmsg(x) : "");
    OK(gsnap_db_version(x, latest));
    if (snaps) *snaps = rep.snapshots;
    gsnap_db_close(x);
    return rc;
}

/* base_dump with `from` replaced by `to` must fail with GSNAP_EPARSE naming
 * line `line` of the file and leave the database at version `latest`
 * (the versions before the bad line, no other). */
static void expect_bad(const char *dir, const char *from, const char *to, size_t to_len, unsigned line,
                       uint64_t latest) {
    size_t n = 0;
    char *text = variant(from, to, to_len, &n), msg[1024], where[32];
    uint64_t v = 99;
    int rc = load_case(dir, text, n, msg, sizeof msg, &v, NULL);
    snprintf(where, sizeof where, ".dump:%u: ", line);
    CHECK_MSG(rc == GSNAP_EPARSE && strstr(msg, where) && v == latest,
              "'%s' -> '%.*s': rc %d (want %d), version %llu (want %llu), message '%s' (want '%s')", from,
              (int)to_len, to, rc, GSNAP_EPARSE, (unsigned long long)v, (unsigned long long)latest, msg, where);
    free(text);
}
#define BAD(from, to, line, latest) expect_bad(dir, from, to, strlen(to), line, latest)

/* 1. A horizon past the last version made a database whose every query
 * failed, and a snapshot before the horizon was skipped without a word. */
static void test_load_horizon_range(const char *dir) {
    BAD("versions 1 3\n", "versions 1 3\nhorizon 1000 -\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon 4 -\n", 5, 0);
    /* horizon 3: the snapshot at version 2 cannot be rebuilt: the load
     * fails at the snapshot line (version 3's block is still open) */
    BAD("versions 1 3\n", "versions 1 3\nhorizon 3 -\n", 13, 2);
    /* a horizon at the snapshot's version or before it is fine */
    size_t n = 0;
    const char *good = "versions 1 3\nhorizon 2 -\n";
    char *text = variant("versions 1 3\n", good, strlen(good), &n), msg[1024];
    uint64_t v = 0, ns = 0;
    CHECK_MSG(load_case(dir, text, n, msg, sizeof msg, &v, &ns) == 0 && v == 3 && ns == 1, "horizon 2: %s", msg);
    free(text);
}

/* 2. 'horizon 2 abc' loaded as horizon time 0. */
static void test_load_horizon_time(const char *dir) {
    BAD("versions 1 3\n", "versions 1 3\nhorizon 2 abc\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon 2 11x\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon 2 9223372036854775807\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon -18446744073709551614 -\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon 2 - 3\n", 5, 0);
}

/* 3. A snapshot line's AT 'xyz' became 0, fanouts 0 the default 10,
 * 4294967298 wrapped to 2; every field is checked before anything of the
 * last version commits. */
static void test_load_snapshot_fields(const char *dir) {
    const char *bad[] = {
        "s1 in 2 2,2 2 xyz 2 1 exact", "s1 in 2 0,0 2 now 2 1 exact", "s1 in 2 4294967298,2 2 now 2 1 exact",
        "s1 in 2 100001,2 2 now 2 1 exact", "s1 in 2 2,-2 2 now 2 1 exact", "s1 in 2 2,2,2 2 now 2 1 exact",
        "s1 up 2 2,2 2 now 2 1 exact", "s1 in 2 2,2 nan now 2 1 exact", "s1 in 2 2,2 0 now 2 1 exact",
        "s1 in 2 2,2 2x now 2 1 exact", "s1 in 2 2,2 2 12x 2 1 exact", "s1 in 2 2,2 2 now -18446744073709551614 1 exact",
        "s1 in 2 2,2 2 now 4 1 exact", "s1 in 2 2,2 2 now 0 1 exact", "s1 in 2 2,2 2 now 2 -1 exact",
        "s1 in -4294967294 2,2 2 now 2 1 exact", "s1  in 2 2,2 2 now 2 1 exact",
        "s123456789012345678901234567890123456789012345678901234567890123456789012 in 2 2,2 2 now 2 1 exact"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) BAD("s1 in 2 2,2 2 now 2 1 exact", bad[i], 12, 2);
    BAD("exact 508,508\n", "exact 508,508 x\n", 12, 2);
    BAD("exact 508,508\n", "exact 508,0\n", 12, 2);
}

/* 4. A NUL byte cut the line short without a word. */
static void test_load_nul_byte(const char *dir) {
    expect_bad(dir, "a 1 3 11\n", "a 1 3 11\0junk\n", 14, 7, 0);
    expect_bad(dir, "a 2 3 12\n", "\0a 2 3 12\n", 10, 9, 1); /* version 1 stays */
}

/* 5. 'v -18446744073709551615 ...' loaded as version 1, and a v line's
 * counts and time range were trusted whatever events followed; the
 * 'versions' and 'end' lines wrapped negative numbers too, and the end
 * line's snapshot count was not compared. */
static void test_load_version_line(const char *dir) {
    BAD("v 1 5 ", "v -18446744073709551615 5 ", 5, 0);
    BAD("v 1 5 ", "v 1 -5 ", 5, 0);
    BAD("v 1 5 2 0 10 11 1 2 e.tsv\n", "v 1 5 2 0 10 11 1 2 e.tsv x\n", 5, 0);
    BAD("v 1 5 2 0 10 11 1 2 e.tsv\n", "v 1 5 2 0 10 11 1 2\n", 5, 0);
    BAD("v 1 5 2 0 10 11", "v 1 5 100 7 -5 99999", 5, 0);  /* counts and range */
    BAD("v 1 5 2 0 10 11", "v 1 5 2 0 -5 99999", 5, 0);    /* range only */
    BAD("v 1 5 2 0 10 11", "v 1 5 1 1 10 11", 5, 0);       /* adds/deletes */
    BAD("v 3 7 0 0 0 0 0 0 %", "v 3 7 1 0 0 0 0 0 %", 11, 2); /* events claimed, none read */
    BAD("v 2 6 2 0 12 13", "v 2 6 3 0 12 13", 8, 1);         /* version 1 stays */
    BAD("versions 1 3\n", "versions 1 -18446744073709551613\n", 4, 0);
    BAD("end 3 4 1 0\n", "end -18446744073709551613 4 1 0\n", 13, 2);
    BAD("end 3 4 1 0\n", "end 3 4 2 0\n", 13, 3); /* the snapshot lines are counted too */
    /* below a horizon, a fold may have dropped events, never added any */
    BAD("versions 1 3\nv 1 5 2 0 10 11", "versions 1 3\nhorizon 2 11\nv 1 5 1 0 10 11", 6, 0);
    BAD("versions 1 3\nv 1 5 2 0 10 11", "versions 1 3\nhorizon 2 11\nv 1 5 3 0 11 11", 6, 0);
    size_t n = 0;
    const char *folded = "versions 1 3\nhorizon 2 11\nv 1 5 3 1 9 12";
    char *text = variant("versions 1 3\nv 1 5 2 0 10 11", folded, strlen(folded), &n), msg[1024];
    uint64_t v = 0;
    CHECK_MSG(load_case(dir, text, n, msg, sizeof msg, &v, NULL) == 0 && v == 3, "folded version: %s", msg);
    free(text);
}

/* 6. An event the batch refuses (the time reserved for "now") was reported
 * without FILE:LINE and with GSNAP_ERANGE (the CLI's usage exit 2). */
static void test_load_event_error(const char *dir) {
    BAD("a 2 3 12\n", "a 2 3 9223372036854775807\n", 9, 1);
}

/* 7. The header line is read strictly ('graphsnap-dump 2junk' loaded as a
 * format-2 dump; found in review). */
static void test_load_header(const char *dir) {
    BAD("graphsnap-dump 2\n", "graphsnap-dump 2junk\n", 1, 0);
    BAD("graphsnap-dump 2\n", "graphsnap-dump  2\n", 1, 0);
    BAD("graphsnap-dump 2\n", "graphsnap-dump -2\n", 1, 0);
}

/* 8. An incremental load never lowers the database's retention horizon
 * (version and time): the dump's horizon replaced it, so a database
 * compacted further than the dump's source answered queries before its own
 * horizon, whose history was folded (found in review). */
static void test_load_keeps_horizon(const char *dir) {
    char fp[600], dbp[600], inc[600];
    snprintf(fp, sizeof fp, "%s/hz-base.dump", dir);
    snprintf(dbp, sizeof dbp, "%s/hz.db", dir);
    snprintf(inc, sizeof inc, "%s/hz-inc.dump", dir);
    write_text(fp, base_dump);
    gsnap_db *x = open_nosync(dbp);
    OK(load_from(x, fp, NULL));
    gsnap_db_close(x);
    gsnap_compact_options co = GSNAP_COMPACT_OPTIONS_INIT;
    co.keep_versions = 1;
    OK(gsnap_db_compact_history(dbp, &co, NULL));
    x = open_nosync(dbp);
    uint64_t h0 = 0, h1 = 0;
    int64_t t0 = 0, t1 = 0;
    OK(gsnap_db_horizon(x, &h0, &t0));
    CHECK(h0 == 3);
    /* versions 4..4 of a source compacted less (horizon 2, time 11) */
    static const char incr[] = "graphsnap-dump 2\nstore-format 3\nkeep both\nversions 4 4\nhorizon 2 11\n"
                               "v 4 8 1 0 20 20 0 0 %\na 5 6 20\nend 1 1 0 0\n";
    write_text(inc, incr);
    int rc = load_from(x, inc, NULL);
    CHECK_MSG(rc == 0, "incremental load: %s", gsnap_db_errmsg(x));
    OK(gsnap_db_horizon(x, &h1, &t1));
    CHECK_MSG(h1 == h0 && t1 >= t0 && t1 >= 11, "horizon %llu/%lld after the load, was %llu/%lld",
              (unsigned long long)h1, (long long)t1, (unsigned long long)h0, (long long)t0);
    gsnap_nbr nb[4];
    size_t cnt = 0;
    CHECK(gsnap_neighbors(x, NULL, 1, GSNAP_DIR_OUT, GSNAP_TIME_MAX, 2, nb, 4, &cnt) == GSNAP_ERANGE);
    /* an event before the horizon time in a version from the horizon on is
     * history the source holds (committed before its fold): restored, not
     * refused (it was refused at commit); queries before the horizon time
     * stay refused, so it changes no answer there */
    static const char early[] = "graphsnap-dump 2\nstore-format 3\nkeep both\nversions 5 5\n"
                                "v 5 9 1 0 5 5 0 0 %\na 5 7 5\nend 1 1 0 0\n";
    write_text(inc, early);
    rc = load_from(x, inc, NULL);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, gsnap_db_errmsg(x));
    uint64_t v = 0;
    OK(gsnap_db_version(x, &v));
    CHECK(v == 5);
    CHECK(gsnap_neighbors(x, NULL, 5, GSNAP_DIR_OUT, GSNAP_TIME_MAX, 5, nb, 4, &cnt) == 0 && cnt == 2);
    CHECK(gsnap_neighbors(x, NULL, 5, GSNAP_DIR_OUT, 6, 5, nb, 4, &cnt) == GSNAP_ERANGE);
    gsnap_db_close(x);
}

/* 9. Found in review of the hardening: a second 'versions' or 'horizon'
 * line moved the range the horizon was checked against; a 'v' line outside
 * the 'versions' range loaded; a format-1 version without events was not
 * committed, so the next version's events became its own. */
static void test_load_line_order(const char *dir) {
    BAD("versions 1 3\n", "versions 1 3\nversions 1 2\n", 5, 0);
    BAD("versions 1 3\n", "versions 1 3\nhorizon 1 -\nhorizon 2 -\n", 6, 0);
    BAD("versions 1 3\n", "versions 1 0\n", 5, 0);
    /* a source name's escapes: two hex digits, never a NUL (sscanf's %2x
     * took '%-1' and '%1g', and '%00' cut the name short) */
    BAD("1 2 e.tsv\n", "1 2 e%00x.tsv\n", 5, 0);
    BAD("1 2 e.tsv\n", "1 2 e%-1.tsv\n", 5, 0);
    BAD("1 2 e.tsv\n", "1 2 e%1g.tsv\n", 5, 0);
    static const char unk[] = "graphsnap-dump 2\nkeep both\nversions 1 2\nv 1 unknown\nv 2 unknown\na 1 2 3\n"
                              "end 2 1 0 0\n";
    char msg[1024];
    uint64_t v = 0;
    int rc = load_case(dir, unk, strlen(unk), msg, sizeof msg, &v, NULL);
    CHECK_MSG(rc == 0 && v == 2, "empty format-1 version: rc %d, newest %llu: %s", rc, (unsigned long long)v, msg);
    /* committed as the one with events is: at the load's time, not with a
     * made-up commit time of 1 ns after the epoch */
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        gsnap_db *x = NULL;
        OK(load_text(dir, unk, strlen(unk), &x, NULL));
        gsnap_version_info *lg = NULL;
        size_t n = 0;
        OK(gsnap_db_log(x, NULL, 1, GSNAP_VERSION_LATEST, &lg, &n));
        CHECK(n == 2);
        for (size_t i = 0; i < n; i++)
            CHECK_MSG(lg[i].commit_ns >= before, "version %llu: commit time %lld, the load began at %lld",
                      (unsigned long long)lg[i].version, (long long)lg[i].commit_ns, (long long)before);
        gsnap_free(lg);
        gsnap_db_close(x);
    }
}

/* 10. The dump's horizon is in force from its line on, so that a load that
 * fails part way never leaves folded versions answering queries (the
 * horizon was set at the very end); and a version at or after the horizon
 * keeps the events older than the horizon time that its source holds (the
 * commit refused them). Found in review. */
static void test_load_horizon_in_force(const char *dir) {
    char fp[600], dbp[600], d1[600], d2[600], db2[600];
    snprintf(fp, sizeof fp, "%s/hf.dump", dir);
    snprintf(dbp, sizeof dbp, "%s/hf.db", dir);
    /* a compacted dump (horizon 3, time 11) cut after version 3 by a bad line */
    write_text(fp, "graphsnap-dump 2\nkeep both\nversions 1 4\nhorizon 3 11\n"
                   "v 1 5 2 0 10 11 1 2 e\na 1 2 10\na 1 3 11\n"
                   "v 2 6 1 0 12 12 3 3 e\na 2 3 12\n"
                   "v 3 7 1 0 13 13 4 4 e\na 3 1 13\n"
                   "bad line\n");
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *x = NULL;
    OK(gsnap_db_open(dbp, &o, &x));
    CHECK(load_from(x, fp, NULL) == GSNAP_EPARSE);
    uint64_t h = 0, v = 0;
    int64_t ht = 0;
    OK(gsnap_db_version(x, &v));
    OK(gsnap_db_horizon(x, &h, &ht));
    CHECK_MSG(v == 2 && h == 3 && ht == 11, "after a failed load: newest %llu, horizon %llu / %lld",
              (unsigned long long)v, (unsigned long long)h, (long long)ht);
    gsnap_nbr nb[4];
    size_t cnt = 0;
    CHECK(gsnap_neighbors(x, NULL, 1, GSNAP_DIR_OUT, GSNAP_TIME_MAX, 2, nb, 4, &cnt) == GSNAP_ERANGE);
    gsnap_db_close(x);

    /* a source compacted at version 2 whose version 3, committed before the
     * compaction, holds an event at time 5 < the horizon time */
    snprintf(dbp, sizeof dbp, "%s/hs.db", dir);
    OK(gsnap_db_open(dbp, &o, &x));
    gsnap_batch *b;
    OK(gsnap_batch_begin(x, &b));
    OK(gsnap_batch_add(b, 1, 2, 100));
    OK(gsnap_batch_delete(b, 1, 2, 100));
    OK(gsnap_batch_commit(b, NULL));
    OK(gsnap_batch_begin(x, &b));
    OK(gsnap_batch_add(b, 5, 6, 200));
    OK(gsnap_batch_commit(b, NULL));
    OK(gsnap_batch_begin(x, &b));
    OK(gsnap_batch_add(b, 3, 4, 5));
    OK(gsnap_batch_commit(b, NULL));
    gsnap_db_close(x);
    gsnap_compact_options co = GSNAP_COMPACT_OPTIONS_INIT;
    co.horizon = 2;
    OK(gsnap_db_compact_history(dbp, &co, NULL));
    OK(gsnap_db_open(dbp, &o, &x));
    OK(gsnap_db_horizon(x, &h, &ht));
    snprintf(d1, sizeof d1, "%s/hs-1.dump", dir);
    snprintf(d2, sizeof d2, "%s/hs-2.dump", dir);
    dump_to(x, d1, 1, 2);
    dump_to(x, d2, 3, 3);
    /* the policy of dump: a range that ends before the horizon is refused
     * (its versions are folded and answer nothing alone; such a dump loaded
     * a horizon past its last version) */
    gsnap_dump_options dopt = GSNAP_DUMP_OPTIONS_INIT;
    dopt.from = 1;
    dopt.to = 1;
    FILE *nul = fopen("/dev/null", "w");
    CHECK(gsnap_db_dump(x, nul, &dopt) == GSNAP_ERANGE);
    fclose(nul);
    gsnap_db_close(x);
    snprintf(db2, sizeof db2, "%s/hs2.db", dir);
    OK(gsnap_db_open(db2, &o, &x));
    OK(load_from(x, d1, NULL));
    int rc = load_from(x, d2, NULL);
    CHECK_MSG(rc == 0, "incremental load past the horizon: %s", gsnap_db_errmsg(x));
    OK(gsnap_db_version(x, &v));
    CHECK(v == 3);
    CHECK(gsnap_neighbors(x, NULL, 3, GSNAP_DIR_OUT, GSNAP_TIME_MAX, 3, nb, 4, &cnt) == 0 && cnt == 1 &&
          nb[0].node == 4);
    gsnap_db_close(x);
}

static void test_load_hostile(const char *dir) {
    size_t n = strlen(base_dump);
    char msg[1024];
    uint64_t v = 0, ns = 0;
    CHECK_MSG(load_case(dir, base_dump, n, msg, sizeof msg, &v, &ns) == 0 && v == 3 && ns == 1, "base: %s", msg);
    test_load_horizon_range(dir);
    test_load_horizon_time(dir);
    test_load_snapshot_fields(dir);
    test_load_nul_byte(dir);
    test_load_version_line(dir);
    test_load_event_error(dir);
    test_load_header(dir);
    test_load_keeps_horizon(dir);
    test_load_line_order(dir);
    test_load_horizon_in_force(dir);
}

int main(void) {
    char *dir = test_tmpdir("opsdump");
    test_load_hostile(dir);
    const char *path = getenv("GSNAP_PGP");
    if (!path) path = "data/pgp.tsv";
    FILE *in = fopen(path, "r");
    if (!in) {
        printf("no %s (run scripts/fetch_pgp.sh): only the hostile dumps ran\n", path);
        test_rmdir(dir);
        free(dir);
        TEST_DONE();
    }
    size_t limit = test_small() ? 20000 : 600000; /* the whole file (592,752 lines) */
    char a[600], b[600], c[600], d1[600], d2[600], d3[600], part1[600], part2[600];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    snprintf(d1, sizeof d1, "%s/d1", dir);
    snprintf(d2, sizeof d2, "%s/d2", dir);
    snprintf(d3, sizeof d3, "%s/d3", dir);
    snprintf(part1, sizeof part1, "%s/p1", dir);
    snprintf(part2, sizeof part2, "%s/p2", dir);
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    gsnap_db *da = NULL;
    OK(gsnap_db_open(a, &o, &da));
    /* PGP events in batches of 10000, one in 8 followed by a delete of an
     * earlier edge of the stream (some at later times, some earlier). */
    uint64_t *hs = malloc(limit * sizeof *hs), *hd = malloc(limit * sizeof *hd), seed = 3, maxnode = 0;
    int64_t *ht = malloc(limit * sizeof *ht);
    size_t n = 0, in_batch = 0, line = 0;
    unsigned long long s, d;
    long long t;
    gsnap_batch *bt = NULL;
    char buf[256];
    while (n < limit && fgets(buf, sizeof buf, in)) {
        line++;
        if (sscanf(buf, "%llu %llu %lld", &s, &d, &t) != 3) continue;
        if (!bt) OK(gsnap_batch_begin(da, &bt));
        OK(gsnap_batch_add(bt, s, d, t));
        hs[n] = s; hd[n] = d; ht[n] = t; n++;
        if (s > maxnode) maxnode = s;
        if (d > maxnode) maxnode = d;
        uint64_t r = test_rand(&seed);
        if (r % 8 == 0) {
            size_t k = (size_t)((r >> 8) % n);
            OK(gsnap_batch_delete(bt, hs[k], hd[k], ht[k] + (int64_t)((r >> 40) % 1000) - 100));
        }
        if (++in_batch == 10000) {
            if ((n / 10000) % 3 == 0) OK(gsnap_batch_set_source(bt, path, line - 9999, line));
            OK(gsnap_batch_commit(bt, NULL));
            bt = NULL;
            in_batch = 0;
        }
    }
    fclose(in);
    if (bt) OK(gsnap_batch_commit(bt, NULL));
    uint64_t latest = 0;
    OK(gsnap_db_version(da, &latest));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.as_of = latest > 2 ? latest - 1 : latest;
    so.seed = 42;
    OK(gsnap_snapshot_create(da, "pgp2", &so, NULL));

    dump_to(da, d1, 0, GSNAP_VERSION_LATEST);
    gsnap_db *db = NULL;
    OK(gsnap_db_open(b, &o, &db));
    gsnap_load_report rep;
    OK(load_from(db, d1, &rep));
    CHECK(rep.versions == latest && rep.snapshots == 1 && rep.first_version == 1);
    dump_to(db, d2, 0, GSNAP_VERSION_LATEST);
    CHECK_MSG(same_file(d1, d2), "dump -> load -> dump is not byte-identical");
    CHECK(ops_problems(db) == 0);
    /* point-in-time answers agree */
    uint64_t nodes = maxnode + 2 < 40000 ? maxnode + 2 : 40000;
    CHECK(ops_compare(da, db, nodes, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST) == 0);
    for (int i = 0; i < 3; i++) {
        uint64_t r = test_rand(&seed);
        int64_t tt = ht[r % n];
        uint64_t vv = 1 + (r >> 32) % latest;
        CHECK(ops_compare(da, db, test_small() ? nodes : 8000, tt, vv) == 0);
    }
    /* the rebuilt snapshot answers like the original */
    gsnap_snapshot *sa = NULL, *sb = NULL;
    OK(gsnap_snapshot_open(da, "pgp2", &sa));
    OK(gsnap_snapshot_open(db, "pgp2", &sb));
    uint64_t seeds[100];
    for (int i = 0; i < 100; i++) seeds[i] = hs[(size_t)i * (n / 100)];
    gsnap_khop_result *ka = NULL, *kb = NULL;
    OK(gsnap_khop(sa, seeds, 100, 2, NULL, &ka));
    OK(gsnap_khop(sb, seeds, 100, 2, NULL, &kb));
    CHECK(ka->off[200] == kb->off[200] && memcmp(ka->ids, kb->ids, ka->off[200] * 8) == 0);
    gsnap_khop_result_free(ka);
    gsnap_khop_result_free(kb);
    gsnap_snapshot_close(sa);
    gsnap_snapshot_close(sb);
    /* a full dump cannot be loaded twice */
    CHECK(load_from(db, d1, NULL) == GSNAP_ERANGE);
    gsnap_db_close(db);

    /* incremental: versions 1..k, then k+1..latest */
    uint64_t k = latest / 2;
    dump_to(da, part1, 1, k);
    dump_to(da, part2, k + 1, GSNAP_VERSION_LATEST);
    gsnap_db *dc = NULL;
    OK(gsnap_db_open(c, &o, &dc));
    CHECK(load_from(dc, part2, NULL) == GSNAP_ERANGE); /* out of order: refused */
    OK(load_from(dc, part1, NULL));
    OK(load_from(dc, part2, NULL));
    dump_to(dc, d3, 0, GSNAP_VERSION_LATEST);
    CHECK_MSG(same_file(d1, d3), "two partial dumps loaded in turn differ from the full dump");
    gsnap_db_close(dc);

    /* malformed and truncated dumps */
    const char *bad[] = {"graphsnap-dump 1\nversions 1 1\nv 1 5 1 0 1 1 0 0 %\na 1 x 3\nend 1 1 0\n",
                         "graphsnap-dump 1\nversions 1 1\nv 1 5 1 0 1 1 0 0 %\na 1 2 3\n",
                         "graphsnap-dump 9\n",
                         "graphsnap-dump 1\nversions 1 1\nv 1 5 1 0 1 1 0 0 %\na -1 2 3\nend 1 1 0\n",
                         "graphsnap-dump 1\nversions 1 2\nv 1 5 1 0 1 1 0 0 %\na 1 2 3\nend 1 1 0\n",
                         "graphsnap-dump 1\nversions 1 1\nv 1 5 1 0 1 1 0 0 %\na 1 2 99999999999999999999\nend 1 1 0\n"};
    int want[] = {GSNAP_EPARSE, GSNAP_EPARSE, GSNAP_EFORMAT, GSNAP_EPARSE, GSNAP_EPARSE, GSNAP_EPARSE};
    for (int i = 0; i < 6; i++) {
        char bp[600], bd[600];
        snprintf(bp, sizeof bp, "%s/bad%d", dir, i);
        snprintf(bd, sizeof bd, "%s/dbbad%d", dir, i);
        write_text(bp, bad[i]);
        gsnap_db *x = NULL;
        OK(gsnap_db_open(bd, &o, &x));
        int rc = load_from(x, bp, NULL);
        CHECK_MSG(rc == want[i], "bad dump %d: rc %d (%s)", i, rc, gsnap_db_errmsg(x));
        if (i == 0) CHECK(strstr(gsnap_db_errmsg(x), ":4:") != NULL);
        gsnap_db_close(x);
    }
    /* a folded dump whose newest version has no events left (found by
     * fuzz/fuzz_load.c: check wanted a run ending at the newest version) */
    {
        /* the dump names the store format this build writes: the same here,
         * so that the dump of the load is this file byte for byte */
        char fd[400];
        snprintf(fd, sizeof fd, "graphsnap-dump 2\nstore-format %u\nkeep in\nversions 1 2\nhorizon 2 11\n"
                                "v 1 5 3 1 10 12 1 3 f%%20g.tsv\na 1 2 10\na 1 2 11\nd 1 2 12\n"
                                "v 2 9 0 0 0 0 0 0 %%\nend 2 3 0 0\n", GSNAP_STORE_FORMAT);
        char fp[600], fdb[600], fout[600];
        snprintf(fp, sizeof fp, "%s/folded", dir);
        snprintf(fdb, sizeof fdb, "%s/dbfolded", dir);
        snprintf(fout, sizeof fout, "%s/folded.out", dir);
        write_text(fp, fd);
        gsnap_db *x = NULL;
        OK(gsnap_db_open(fdb, &o, &x));
        OK(load_from(x, fp, NULL));
        CHECK(ops_problems(x) == 0);
        uint64_t h = 0;
        int64_t htt = 0;
        OK(gsnap_db_horizon(x, &h, &htt));
        CHECK(h == 2 && htt == 11);
        dump_to(x, fout, 0, GSNAP_VERSION_LATEST);
        CHECK(same_file(fp, fout));
        gsnap_db_close(x);
    }
    gsnap_db_close(da);
    free(hs);
    free(hd);
    free(ht);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
