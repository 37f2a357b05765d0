/* tests/test_snapshot_slab.c -- the block invariant, checked from the file
 * format alone: every block's XXH3 holds, no list crosses a block boundary,
 * the header's counts add up. Then one corrupted byte: gsnap_snapshot_check
 * (and `graphsnap check` when the CLI is built) names the block, and a k-hop
 * query touching it fails with GSNAP_ECHECKSUM on both I/O paths. */
#include "test.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <xxhash.h>

static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

typedef struct { uint64_t first_node_block1; int found; } walk_out;

/* Walk one slab file; returns the number of violations. */
static int walk_slab(const char *path, unsigned hop, walk_out *wo) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); return 1; }
    unsigned char blk[4096];
    int bad = 0;
    uint64_t b = 0, lists = 0, ids = 0, hdr_lists = 0, hdr_ids = 0, hdr_blocks = 0, prev = 0;
    int have_prev = 0;
    while (fread(blk, 1, 4096, f) == 4096) {
        uint64_t x = XXH3_64bits_withSeed(blk + 16, 4096 - 16, b);
        if (x != rd64(blk + 8)) { fprintf(stderr, "%s block %llu: checksum\n", path, (unsigned long long)b); bad++; }
        if (b == 0) {
            if (rd32(blk) != 0x31485347u || rd32(blk + 16) != 1 || rd32(blk + 20) != 4096 || rd32(blk + 24) != hop) bad++;
            hdr_blocks = rd64(blk + 32);
            hdr_lists = rd64(blk + 40);
            hdr_ids = rd64(blk + 48);
        } else {
            if (rd32(blk) != 0x31425347u) bad++;
            uint32_t nl = rd32(blk + 4), pos = 16;
            if (nl == 0) bad++;
            for (uint32_t i = 0; i < nl; i++) {
                if (pos + 12 > 4096) { bad++; break; }
                uint64_t node = rd64(blk + pos);
                uint32_t cnt = rd32(blk + pos + 8);
                if ((uint64_t)pos + 12 + 8ull * cnt > 4096) { /* would cross the block end */
                    fprintf(stderr, "%s block %llu: list crosses the boundary\n", path, (unsigned long long)b);
                    bad++;
                    break;
                }
                if (have_prev && node <= prev) bad++;
                if (b == 1 && i == 0) { wo->first_node_block1 = node; wo->found = 1; }
                prev = node;
                have_prev = 1;
                for (uint32_t j = 1; j < cnt; j++)
                    if (rd64(blk + pos + 12 + 8 * j) <= rd64(blk + pos + 12 + 8 * (j - 1))) bad++;
                pos += 12 + 8 * cnt;
                lists++;
                ids += cnt;
            }
            for (; pos < 4096; pos++) if (blk[pos]) { bad++; break; } /* tail is zero */
        }
        b++;
    }
    fclose(f);
    CHECK(b == hdr_blocks && lists == hdr_lists && ids == hdr_ids);
    return bad + (b != hdr_blocks);
}

static void collect(void *ctx, const char *line) {
    char *buf = ctx;
    if (strlen(buf) + strlen(line) + 2 < 8192) { strcat(buf, line); strcat(buf, "\n"); }
}

int main(void) {
    char *dir = test_tmpdir("snapslab");
    gsnap_db_options dopt = GSNAP_DB_OPTIONS_INIT;
    dopt.sync = GSNAP_SYNC_NONE;
    gsnap_db *db;
    OK(gsnap_db_open(dir, &dopt, &db));
    uint64_t rs = 7, N = test_small() ? 800 : 3000;
    gsnap_batch *b;
    OK(gsnap_batch_begin(db, &b));
    for (uint64_t e = 0; e < 4 * N; e++) OK(gsnap_batch_add(b, test_rand(&rs) % N, test_rand(&rs) % N, 1));
    for (uint64_t u = 1; u < 700; u++) OK(gsnap_batch_add(b, u, 0, 1)); /* capped list */
    OK(gsnap_batch_commit(b, NULL));
    gsnap_snapshot_options so = GSNAP_SNAPSHOT_OPTIONS_INIT;
    so.hops = 3;
    OK(gsnap_snapshot_create(db, "s", &so, NULL));
    char path[1024];
    walk_out wo[4];
    memset(wo, 0, sizeof wo);
    for (unsigned h = 1; h <= 3; h++) {
        snprintf(path, sizeof path, "%s/snapshots/s/hop%u.slab", dir, h);
        CHECK_MSG(walk_slab(path, h, &wo[h]) == 0, "hop %u slab violates the block invariant", h);
        CHECK(wo[h].found);
    }
    /* corrupt one byte inside the first list of hop 2, block 1 */
    snprintf(path, sizeof path, "%s/snapshots/s/hop2.slab", dir);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    unsigned char c;
    CHECK(pread(fd, &c, 1, 4096 + 16 + 12 + 3) == 1);
    c ^= 0x40;
    CHECK(pwrite(fd, &c, 1, 4096 + 16 + 12 + 3) == 1);
    close(fd);
    char *lines = calloc(1, 8192);
    uint64_t problems = 0;
    OK(gsnap_snapshot_check(db, NULL, collect, lines, &problems));
    printf("check found %llu problem(s):\n%s", (unsigned long long)problems, lines);
    CHECK(problems >= 1);
    CHECK(strstr(lines, "snapshot s hop 2 block 1: checksum mismatch") != NULL);
    CHECK(strstr(lines, "hop 1") == NULL && strstr(lines, "hop 3") == NULL);
    gsnap_snapshot *s;
    OK(gsnap_snapshot_open(db, "s", &s));
    uint64_t seeds[2] = {wo[3].first_node_block1, wo[2].first_node_block1};
    for (int mode = 0; mode < 2; mode++) {
        gsnap_khop_options o = GSNAP_KHOP_OPTIONS_INIT;
        o.force_pread = mode;
        gsnap_khop_result *r = NULL;
        int rc = gsnap_khop(s, seeds, 2, 3, &o, &r);
        CHECK_MSG(rc == GSNAP_ECHECKSUM, "mode %d: rc %d", mode, rc);
        CHECK(r == NULL);
        CHECK(strstr(gsnap_db_errmsg(db), "snapshot s hop 2 block 1: checksum mismatch") != NULL);
        /* a query that avoids the block still answers */
        OK(gsnap_khop(s, seeds, 1, 1, &o, &r));
        gsnap_khop_result_free(r);
    }
    gsnap_snapshot_close(s);
    /* the CLI reports the same and exits 1 */
    const char *bd = getenv("BUILD");
    char cli[1024], cmd[4096];
    snprintf(cli, sizeof cli, "%s/graphsnap", bd && *bd ? bd : "build");
    if (access(cli, X_OK) == 0) {
        snprintf(cmd, sizeof cmd, "%s -d '%s' check > '%s/check.out' 2>&1", cli, dir, dir);
        int st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
        snprintf(path, sizeof path, "%s/check.out", dir);
        FILE *f = fopen(path, "r");
        char out[8192] = {0};
        if (f) { size_t n = fread(out, 1, sizeof out - 1, f); out[n] = 0; fclose(f); }
        CHECK_MSG(strstr(out, "snapshot s hop 2 block 1: checksum mismatch") != NULL, "cli said: %s", out);
    } else {
        printf("(no CLI at %s: CLI part not run)\n", cli);
    }
    free(lines);
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
