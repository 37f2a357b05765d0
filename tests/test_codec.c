/*
 * The compact record encoding of store format 3 (store/codec.c):
 *   - random groups of records, extreme values included (u64 max ids,
 *     INT64_MIN / INT64_MAX times, vop 0 and u64 max, unsorted neighbours),
 *     round-trip exactly, through the whole decoder and record by record;
 *   - skip_to lands on the first record of the first node >= the target;
 *   - a payload cut short anywhere, or with bytes appended, or with a record
 *     count other than the encoded one, is rejected with a reason; random
 *     byte flips never read outside the payload (ASan / valgrind) and either
 *     decode or are rejected;
 *   - encode refuses a buffer too small; rec_bound bounds the real size.
 */
#include "test.h"
#include "store/store_int.h"

static uint64_t pick(uint64_t *rng) {
    static const uint64_t ext[] = {0, 1, 127, 128, UINT64_MAX, UINT64_MAX - 1, (uint64_t)INT64_MAX,
                                   (uint64_t)INT64_MIN, 1ull << 63, 0x7f, 0x3fff, 0x4000};
    uint64_t r = test_rand(rng);
    switch (r % 4) {
    case 0: return ext[(r >> 8) % (sizeof ext / sizeof ext[0])];
    case 1: return test_rand(rng);
    case 2: return test_rand(rng) % 1000;
    default: return test_rand(rng) >> (test_rand(rng) % 64);
    }
}

/* n records, nodes ascending (groups of random size). */
static void gen(uint64_t *rng, gsnap_rec *r, size_t n) {
    /* ids up to UINT64_MAX itself: steps of at most 50, from 51 * n below */
    uint64_t node = test_rand(rng) % 4 ? test_rand(rng) % 100 : UINT64_MAX - 51 * (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        if (i && test_rand(rng) % 3 == 0) node += 1 + (test_rand(rng) % 2 ? 0 : test_rand(rng) % 50);
        r[i].node = node;
        r[i].nbr = pick(rng);
        r[i].t = (int64_t)pick(rng);
        r[i].vop = pick(rng);
    }
}

int main(void) {
    uint64_t rng = 12;
    int rounds = test_small() ? 200 : 3000;
    enum { MAXN = 300 };
    static gsnap_rec in[MAXN], out[MAXN];
    static unsigned char buf[MAXN * 40 + 64], bad[MAXN * 40 + 64];
    for (int round = 0; round < rounds; round++) {
        size_t n = 1 + test_rand(&rng) % (round % 10 == 0 ? MAXN : 20);
        gen(&rng, in, n);
        size_t bound = 0;
        for (size_t i = 0; i < n; i++) bound += gsnap_codec__rec_bound(&in[i], i ? &in[i - 1] : NULL, in);
        size_t len = gsnap_codec__encode(in, n, buf, sizeof buf - GSNAP_CODEC_SLACK);
        CHECK_MSG(len > 0 && len <= bound, "round %d: %zu bytes, bound %zu", round, len, bound);
        CHECK(gsnap_codec__encode(in, n, bad, len - 1) == 0);
        const char *why = "x";
        memset(out, 0, sizeof out);
        CHECK_MSG(gsnap_codec__decode(buf, len, n, out, &why) == 0 && why == NULL, "round %d: %s", round, why);
        if (test_failures > 20) break;
        CHECK_MSG(memcmp(in, out, n * sizeof *in) == 0, "round %d: %zu records differ", round, n);
        /* record by record */
        gsnap_codec_cur c;
        OK(gsnap_codec__open(&c, buf, len, n));
        gsnap_rec r;
        size_t k = 0;
        int g;
        while ((g = gsnap_codec__next(&c, &r)) == 1) CHECK(k < n && memcmp(&r, &in[k++], sizeof r) == 0);
        CHECK(g == 0 && k == n);
        /* skip_to a node present, a node between, past the end */
        size_t at = test_rand(&rng) % n;
        uint64_t target = in[at].node, skipped = 0;
        OK(gsnap_codec__open(&c, buf, len, n));
        CHECK(gsnap_codec__skip_to(&c, target, &skipped) == 1);
        size_t want = 0;
        while (in[want].node < target) want++;
        CHECK(skipped == want);
        CHECK(gsnap_codec__next(&c, &r) == 1 && memcmp(&r, &in[want], sizeof r) == 0);
        if (in[n - 1].node < UINT64_MAX) {
            OK(gsnap_codec__open(&c, buf, len, n));
            CHECK(gsnap_codec__skip_to(&c, in[n - 1].node + 1, &skipped) == 0 && skipped == n);
        }
        /* truncated anywhere, a byte appended, wrong counts: rejected */
        size_t cut = test_rand(&rng) % len;
        CHECK(gsnap_codec__decode(buf, cut, n, out, &why) == GSNAP_ECORRUPT && why);
        memcpy(bad, buf, len);
        bad[len] = 0;
        CHECK(gsnap_codec__decode(bad, len + 1, n, out, &why) == GSNAP_ECORRUPT && why);
        CHECK(gsnap_codec__decode(buf, len, n + 1, out, &why) == GSNAP_ECORRUPT);
        if (n > 1) CHECK(gsnap_codec__decode(buf, len, n - 1, out, &why) == GSNAP_ECORRUPT);
        CHECK(gsnap_codec__decode(buf, len, 0, out, &why) == GSNAP_ECORRUPT);
        /* random flips: exact-size copy so that ASan sees any overread */
        unsigned char *ex = malloc(len);
        memcpy(ex, buf, len);
        for (int f = 0; f < 4; f++) ex[test_rand(&rng) % len] ^= (unsigned char)(1u << (test_rand(&rng) % 8));
        why = NULL;
        int drc = gsnap_codec__decode(ex, len, n, out, &why);
        CHECK_MSG(drc == 0 || (drc == GSNAP_ECORRUPT && why), "a flipped payload: rc %d, no reason", drc);
        /* the cursor agrees with the whole-payload decode */
        int orc = gsnap_codec__open(&c, ex, len, n), crc = orc;
        CHECK(orc == 0 || orc == -1);
        if (orc == 0) {
            uint64_t seen = 0;
            gsnap_rec r;
            while ((crc = gsnap_codec__next(&c, &r)) == 1) {
                if (drc == 0) CHECK(memcmp(&r, &out[seen], sizeof r) == 0);
                seen++;
            }
            CHECK_MSG((crc == 0) == (drc == 0), "cursor %d, decode %d", crc, drc);
            if (crc == 0) CHECK(seen == n);
            CHECK(gsnap_codec__open(&c, ex, len, n) == 0);
            uint64_t sk = 0;
            int src = gsnap_codec__skip_to(&c, test_rand(&rng), &sk);
            CHECK(src >= -1 && src <= 1 && sk <= n);
        }
        free(ex);
    }
    /* overlong and overflowing varints */
    {
        const char *why;
        unsigned char ov[] = {0x80, 0x00, 0, 0, 1, 3, 0, 0, 0}; /* base_vop overlong */
        CHECK(gsnap_codec__decode(ov, sizeof ov, 1, out, &why) == GSNAP_ECORRUPT);
        unsigned char ov2[] = {0x80, 0x00, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0}; /* the same, 10+ bytes left */
        CHECK(gsnap_codec__decode(ov2, sizeof ov2, 1, out, &why) == GSNAP_ECORRUPT);
        unsigned char un[] = {0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x01, 0, 1, 3, 0, 0, 0};
        CHECK(gsnap_codec__decode(un, sizeof un, 1, out, &why) == GSNAP_ECORRUPT); /* 11-byte varint */
        unsigned char mx[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 1, 3, 0, 0, 0};
        CHECK(gsnap_codec__decode(mx, sizeof mx, 1, out, &why) == 0 && out[0].vop == UINT64_MAX);
        unsigned char of[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 1, 3, 0, 0, 0};
        CHECK(gsnap_codec__decode(of, sizeof of, 1, out, &why) == GSNAP_ECORRUPT);
        unsigned char ok[] = {0, 0, 5, 1, 3, 7, 0, 0}; /* node 5, one record nbr 7 */
        CHECK(gsnap_codec__decode(ok, sizeof ok, 1, out, &why) == 0 && out[0].node == 5 && out[0].nbr == 7);
        unsigned char z[] = {0, 0, 5, 1, 3, 7, 0, 0, 0, 1, 3, 7, 0, 0}; /* second group with node delta 0 */
        CHECK(gsnap_codec__decode(z, sizeof z, 2, out, &why) == GSNAP_ECORRUPT && strstr(why, "ascending"));
        /* group headers decoded 8 bytes at a time: a 2-byte node delta, and the same overlong */
        unsigned char h2[] = {0, 0, 0x85, 0x01, 1, 3, 7, 0, 0, 1, 1, 3, 8, 0, 0};
        CHECK(gsnap_codec__decode(h2, sizeof h2, 2, out, &why) == 0 && out[0].node == 133 && out[1].node == 134 &&
              out[0].nbr == 7 && out[1].nbr == 8);
        unsigned char h3[] = {0, 0, 0x85, 0x00, 1, 3, 7, 0, 0, 1, 1, 3, 8, 0, 0};
        CHECK(gsnap_codec__decode(h3, sizeof h3, 2, out, &why) == GSNAP_ECORRUPT);
        unsigned char h4[] = {0, 0, 5, 0x81, 0x00, 3, 7, 0, 0, 1, 1, 3, 8, 0, 0}; /* overlong count */
        CHECK(gsnap_codec__decode(h4, sizeof h4, 2, out, &why) == GSNAP_ECORRUPT);
    }
    TEST_DONE();
}
