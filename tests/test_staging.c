/* tests/test_staging.c -- staging of sampled mini-batches: every staged
 * buffer round-trips byte for byte (device path when a CUDA device is
 * present, host path otherwise), double buffering hands out slots in turn,
 * a reused slot's old ticket is refused (by wait and by retire), slots grow
 * for big batches, and a retired slot (gsnap_stager_retire on the legacy
 * default stream) still takes the next copies intact; reserve/commit refuse
 * what they must, and gsnap_sampler_next_staged packs the same bytes as
 * gsnap_sampler_next + gsnap_stager_submit.
 * GSNAP_EXPECT_CUDA=1 (set by scripts/gpu_check.sh on a GPU machine) makes a
 * stager that falls back to host buffers for device 0 a failure, so the
 * device path cannot pass unseen as the host path. */
#include "test.h"
#include "test_sampler_src.h"

/* A sanitizer's allocator aborts on a 2^62-byte request by default; this
 * test wants the failure the C library gives (read by ASan and TSan at
 * start-up; unused otherwise). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

int main(void) {
    uint64_t r = 5;
    tsrc *t = tsrc_new();
    for (uint64_t v = 0; v < 1000; v++) {
        uint64_t d = test_rand(&r) % 30;
        for (uint64_t i = 0; i < d; i++) tsrc_add(t, test_rand(&r) % 1000, v, 1);
    }
    tsrc_index(t);
    gsnap_sampler_options o = GSNAP_SAMPLER_OPTIONS_INIT;
    o.mode = GSNAP_MODE_FCR;
    o.layers = 2;
    o.fanouts[0] = o.fanouts[1] = 5;
    gsnap_sampler *s;
    OK(gsnap_sampler__open_src(&t->base, 0, &o, &s));
    for (int device = -1; device <= 0; device++) {
        gsnap_stager *st;
        OK(gsnap_stager_open(256, 2, device, &st)); /* small: slots must grow */
        printf("device %d: %s\n", device,
               gsnap_stager_on_device(st) ? "CUDA device buffers" : "host buffers (no CUDA device)");
        if (device < 0) CHECK(!gsnap_stager_on_device(st));
        const char *expect = getenv("GSNAP_EXPECT_CUDA");
        if (device == 0 && expect && *expect == '1')
            CHECK_MSG(gsnap_stager_on_device(st), "GSNAP_EXPECT_CUDA=1 but device 0 staged on host buffers");
        unsigned prev = 0;
        size_t plen = 0;
        void *pcopy = NULL;
        int ok = 1;
        for (int b = 0; b < 50; b++) {
            uint64_t seeds[64];
            OK(gsnap_sampler_random_seeds(s, (uint64_t)b, 64, seeds));
            const void *buf;
            size_t len;
            OK(gsnap_sampler_next(s, seeds, 64, &buf, &len));
            unsigned tk;
            OK(gsnap_stager_submit(st, buf, len, &tk)); /* copy of b starts... */
            CHECK(tk == (unsigned)b);
            if (b > 0) { /* ...while batch b-1 is checked */
                void *p;
                size_t l;
                OK(gsnap_stager_wait(st, prev, &p, &l));
                CHECK(l == plen && p != NULL);
                CHECK(((uintptr_t)p & 63) == 0);
                void *back = malloc(l);
                OK(gsnap_stager_read_back(st, prev, back, l));
                if (memcmp(back, pcopy, l) != 0) ok = 0;
                if (!gsnap_stager_on_device(st) && memcmp(p, pcopy, l) != 0) ok = 0;
                CHECK(gsnap_block_check(back, l) == 0);
                free(back);
                /* odd batches: done with b-1 on the default stream; the copy
                 * of b+1 into its slot then waits for that (nothing queued) */
                if (b % 2) OK(gsnap_stager_retire(st, prev, NULL));
            }
            if (b >= 2) { /* two slots: ticket b-2 was overwritten by b */
                void *p;
                CHECK(gsnap_stager_wait(st, (unsigned)b - 2, &p, NULL) == GSNAP_ESTATE);
                CHECK(gsnap_stager_retire(st, (unsigned)b - 2, NULL) == GSNAP_ESTATE);
            }
            free(pcopy);
            pcopy = malloc(len);
            memcpy(pcopy, buf, len);
            plen = len;
            prev = tk;
        }
        CHECK_MSG(ok, "staged buffers differ from the sampled ones");
        free(pcopy);
        gsnap_stager_close(st);
    }
    /* reserve / commit: the states a two-step submit goes through */
    for (int device = -1; device <= 0; device++) {
        gsnap_stager *st;
        void *h, *h2, *p;
        unsigned tk, tk2, t0;
        OK(gsnap_stager_open(4096, 2, device, &st));
        OK(gsnap_stager_submit(st, "abc", 3, &t0));              /* slot 0 */
        OK(gsnap_stager_submit(st, "def", 3, &tk));              /* slot 1 */
        OK(gsnap_stager_reserve(st, 8192, &h, &tk));             /* slot 0 again, grown */
        CHECK(tk == 2 && ((uintptr_t)h & 63) == 0);
        CHECK(gsnap_stager_wait(st, t0, &p, NULL) == GSNAP_ESTATE);   /* the old batch is gone */
        CHECK(gsnap_stager_wait(st, tk, &p, NULL) == GSNAP_ESTATE);   /* not committed yet */
        CHECK(gsnap_stager_retire(st, tk, NULL) == GSNAP_ESTATE);
        CHECK(gsnap_stager_reserve(st, 1, &h2, &tk2) == GSNAP_ESTATE); /* one at a time */
        CHECK(gsnap_stager_commit(st, tk + 1, 8) == GSNAP_ESTATE);    /* not the reserved one */
        CHECK(gsnap_stager_commit(st, tk, 1u << 20) == GSNAP_ERANGE);  /* more than reserved */
        memset(h, 0x5a, 8192);
        OK(gsnap_stager_commit(st, tk, 8192));
        CHECK(gsnap_stager_commit(st, tk, 8192) == GSNAP_ESTATE);     /* committed once */
        size_t l;
        OK(gsnap_stager_wait(st, tk, &p, &l));
        CHECK(l == 8192);
        unsigned char back[8192], want[8192];
        memset(want, 0x5a, sizeof want);
        OK(gsnap_stager_read_back(st, tk, back, sizeof back));
        CHECK(memcmp(back, want, sizeof back) == 0);
        gsnap_stager_close(st);
    }

    /* gsnap_sampler_next_staged: the same bytes as next + submit, packed in
     * the slot (explicit seeds and the batch's random seeds) */
    for (int device = -1; device <= 0; device++) {
        gsnap_sampler *a, *b;
        OK(gsnap_sampler__open_src(&t->base, 0, &o, &a));
        OK(gsnap_sampler__open_src(&t->base, 0, &o, &b));
        gsnap_stager *sa, *sb;
        OK(gsnap_stager_open(256, 2, device, &sa));
        OK(gsnap_stager_open(256, 2, device, &sb));
        int same = 1;
        for (int k = 0; k < 30; k++) {
            uint64_t seeds[48];
            OK(gsnap_sampler_random_seeds(a, (uint64_t)k * 7 + 1, 48, seeds));
            const uint64_t *sd = k % 3 == 2 ? NULL : seeds;   /* every third: random seeds */
            const void *buf, *host;
            size_t len, len2;
            unsigned ta, tb;
            OK(gsnap_sampler_next(a, sd, 48, &buf, &len));
            OK(gsnap_stager_submit(sa, buf, len, &ta));
            OK(gsnap_sampler_next_staged(b, sd, 48, sb, &tb, &host, &len2));
            CHECK(len2 == len && ta == tb);
            if (memcmp(host, buf, len) != 0) same = 0;
            void *pa, *pb;
            OK(gsnap_stager_wait(sa, ta, &pa, NULL));
            OK(gsnap_stager_wait(sb, tb, &pb, NULL));
            unsigned char *ra = malloc(len), *rb = malloc(len);
            OK(gsnap_stager_read_back(sa, ta, ra, len));
            OK(gsnap_stager_read_back(sb, tb, rb, len));
            if (memcmp(ra, rb, len) != 0 || memcmp(rb, buf, len) != 0) same = 0;
            CHECK(gsnap_block_check(rb, len) == 0);
            free(ra);
            free(rb);
        }
        CHECK_MSG(same, "next_staged packed other bytes than next + submit (device %d)", device);
        CHECK(gsnap_sampler_next_staged(b, NULL, 4, NULL, NULL, NULL, NULL) == GSNAP_EINVAL);
        gsnap_stager_close(sa);
        gsnap_stager_close(sb);
        gsnap_sampler_close(a);
        gsnap_sampler_close(b);
    }

    /* a slot that cannot grow: refused, and the slot stays usable (no NULL
     * buffer handed out later, no old ticket pointing at freed memory) */
    for (int device = -1; device <= 0; device++) {
        gsnap_stager *st;
        void *h, *p;
        unsigned tk, told;
        OK(gsnap_stager_open(4096, 2, device, &st));
        OK(gsnap_stager_submit(st, "old", 3, &told));                    /* slot 0 */
        OK(gsnap_stager_submit(st, "xyz", 3, &tk));                      /* slot 1 */
        /* a size the rounding would wrap: refused before anything is freed */
        CHECK(gsnap_stager_reserve(st, SIZE_MAX - 100, &h, &tk) == GSNAP_ENOMEM);
        OK(gsnap_stager_wait(st, told, &p, NULL));
        /* an allocation that fails: the slot's old buffers are gone with it
         * (under ASan/TSan the options below make it fail, not abort) */
        CHECK(gsnap_stager_reserve(st, (size_t)1 << 62, &h, &tk) == GSNAP_ENOMEM);
        CHECK(gsnap_stager_wait(st, told, &p, NULL) == GSNAP_ESTATE);
        OK(gsnap_stager_submit(st, "new", 4, &tk));
        char back[4];
        OK(gsnap_stager_read_back(st, tk, back, 4));
        CHECK(memcmp(back, "new", 4) == 0);
        gsnap_stager_close(st);
    }

    gsnap_stager *st;
    CHECK(gsnap_stager_open(0, 1, -1, &st) == GSNAP_EINVAL);
    CHECK(gsnap_stager_retire(NULL, 0, NULL) == GSNAP_EINVAL);
    OK(gsnap_stager_open(64, 2, -1, &st));
    CHECK(gsnap_stager_retire(st, 0, NULL) == GSNAP_ESTATE); /* never issued */
    gsnap_stager_close(st);
    gsnap_stager_close(NULL);
    gsnap_sampler_close(s);
    tsrc_destroy(&t->base);
    TEST_DONE();
}
