/*
 * The GSD3 bit columns (store format 4) at the level of the dense writer and
 * readers, inside one aborted write txn:
 *   - the dense writer's packed bodies read back exactly (the iterator and
 *     the ids path), for any widths (0..64 in every column, any bit offset),
 *     times from INT64_MIN to INT64_MAX, deletes, each node's records fed as
 *     random groups or one by one;
 *   - the readers never leave a value of exactly header + bodies + 16 pad
 *     bytes, whatever the bodies and the index hold (random and damaged
 *     bodies, a damaged index, a value cut inside its last body): an
 *     overrun shows under ASan and valgrind.
 */
#include "test.h"
#include "store/store_int.h"
#include "store/store.h"
#include <lmdb.h>

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* a value of 64 bits drawn so that every width 0..64 of a range comes up */
static uint64_t wide(uint64_t *s) {
    unsigned w = (unsigned)(rnd(s) % 65);
    uint64_t v = rnd(s);
    return w == 64 ? v : v & ((1ull << w) - 1);
}

static int rec_cmp(const void *a, const void *b) {
    const gsnap_rec *x = a, *y = b;
    if (x->nbr != y->nbr) return x->nbr < y->nbr ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if ((x->vop >> 1) != (y->vop >> 1)) return (x->vop >> 1) < (y->vop >> 1) ? -1 : 1;
    return 0;
}

#define NODES 96
typedef struct {
    uint64_t seed;
    int bad;
    gsnap_rec *recs[2];
    size_t n[2];
} rt_ctx;

static void gen(rt_ctx *c) {
    uint64_t s = c->seed;
    for (int dir = 0; dir < 2; dir++) {
        size_t cap = 0, n = 0;
        gsnap_rec *r = NULL;
        for (uint64_t node = 0; node < NODES; node++) {
            unsigned k = (unsigned)(rnd(&s) % 8);
            size_t cnt = k < 2 ? 0 : k < 4 ? 1 : k < 6 ? 2 + rnd(&s) % 5 : rnd(&s) % 400;
            uint64_t nb = rnd(&s), tb = rnd(&s), vb = rnd(&s);
            /* per node: a range of each field whose width is drawn 0..64 */
            uint64_t nm = wide(&s), tm = wide(&s), vm = wide(&s);
            if (n + cnt > cap) {
                cap = (n + cnt) * 2;
                r = realloc(r, cap * sizeof *r);
            }
            for (size_t i = 0; i < cnt; i++) {
                gsnap_rec *x = &r[n + i];
                x->node = node;
                x->nbr = nb + (nm ? rnd(&s) % (nm == UINT64_MAX ? nm : nm + 1) : 0);
                x->t = (int64_t)(tb + (tm ? rnd(&s) % (tm == UINT64_MAX ? tm : tm + 1) : 0));
                x->vop = vb + (vm ? rnd(&s) % (vm == UINT64_MAX ? vm : vm + 1) : 0);
                unsigned e = (unsigned)(rnd(&s) % 16);
                if (e == 0) x->t = INT64_MIN;
                if (e == 1) x->t = INT64_MAX - 1;
                if (e == 2) x->t = INT64_MAX;
                if (e == 3) x->vop |= 1; /* a delete */
            }
            if (cnt) qsort(r + n, cnt, sizeof *r, rec_cmp);
            n += cnt;
        }
        c->recs[dir] = r;
        c->n[dir] = n;
    }
}

static int rt_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    rt_ctx *c = vctx;
    uint64_t s = c->seed ^ 0x55;
    gsnap_run_writer w;
    OK(gsnap_run__writer_init(&w, db, txn, (uint64_t)1 << 40));
    uint64_t expect[2] = {c->n[0], c->n[1]};
    OK(gsnap_run__writer_dense(&w, expect, NODES));
    for (int dir = 0; dir < 2; dir++) {
        const gsnap_rec *r = c->recs[dir];
        size_t i = 0, n = c->n[dir];
        while (i < n) { /* a node's records as groups of any size, or one by one */
            size_t j = i;
            while (j < n && r[j].node == r[i].node) j++;
            while (i < j) {
                size_t g = 1 + rnd(&s) % (j - i);
                if (rnd(&s) & 1) {
                    OK(gsnap_run__writer_group(&w, (uint8_t)dir, r + i, g));
                } else {
                    for (size_t q = 0; q < g; q++) OK(gsnap_run__writer_add(&w, (uint8_t)dir, r + i + q));
                }
                i += g;
            }
        }
    }
    OK(gsnap_run__writer_finish(&w));
    gsnap_run__writer_free(&w);
    struct gsnap_read rd;
    memset(&rd, 0, sizeof rd);
    for (int dir = 0; dir < 2; dir++) {
        gsnap_dense_ref d;
        if (c->n[dir] == 0) continue;
        OK(gsnap_dense__load(db, txn, (uint64_t)1 << 40, (uint8_t)dir, &d, 1));
        if (!d.packed) { c->bad++; continue; }
        size_t k = 0;
        for (uint64_t node = 0; node < NODES; node++) {
            gsnap_dense_it it;
            gsnap_rec x;
            int g;
            gsnap_dense__it(&d, node, &it);
            size_t k0 = k;
            while ((g = gsnap_dense__it_next(&it, &x)) > 0) {
                if (k >= c->n[dir] || memcmp(&x, &c->recs[dir][k], sizeof x)) {
                    if (c->bad++ < 5)
                        fprintf(stderr, "dir %d node %llu rec %zu: got (%llu %llu %lld %llu)\n", dir,
                                (unsigned long long)node, k - k0, (unsigned long long)x.node,
                                (unsigned long long)x.nbr, (long long)x.t, (unsigned long long)x.vop);
                }
                k++;
            }
            if (g < 0) c->bad++;
            /* the ids path: the distinct nbr of the node */
            size_t cnt = 0;
            OK(gsnap_store__dense_ids(db, &rd, &d, 1, (uint8_t)dir, node, &cnt));
            size_t want = 0;
            for (size_t q = k0; q < k; q++)
                if (q == k0 || c->recs[dir][q].nbr != c->recs[dir][q - 1].nbr) {
                    if (want >= cnt || rd.ids[want] != c->recs[dir][q].nbr) c->bad++;
                    want++;
                }
            if (want != cnt) c->bad++;
        }
        if (k != c->n[dir]) c->bad++;
    }
    free(rd.ids);
    return 4242; /* abort: nothing of it is kept */
}

/* ---- hostile bodies ------------------------------------------------------ */

static void put_var(unsigned char **p, uint64_t v) {
    while (v >= 0x80) {
        *(*p)++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *(*p)++ = (unsigned char)v;
}

static uint64_t g_hrec, g_hids;
static void hostile(gsnap_db *db, uint64_t seed) {
    uint64_t s = seed;
    size_t cap = 1 << 16;
    unsigned char *tmp = calloc(cap, 1);
    size_t plen = 0;
    int nb = 1 + (int)(rnd(&s) % 6);
    uint64_t offs[8];
    offs[0] = 0;
    for (int b = 0; b < nb; b++) {
        unsigned char *p = tmp + plen;
        if (rnd(&s) % 4 == 0) { /* garbage */
            size_t len = rnd(&s) % 40;
            for (size_t i = 0; i < len; i++) p[i] = (unsigned char)rnd(&s);
            plen += len;
        } else {
            uint64_t small = rnd(&s) % 2; uint64_t n = 1 + rnd(&s) % (small ? 3 : 200);
            unsigned wn = (unsigned)(rnd(&s) % 65), wt = (unsigned)(rnd(&s) % 65), wv = (unsigned)(rnd(&s) % 65);
            put_var(&p, n);
            put_var(&p, rnd(&s));
            put_var(&p, rnd(&s));
            put_var(&p, rnd(&s));
            if (n >= 2) {
                *p++ = (unsigned char)wn;
                *p++ = (unsigned char)wt;
                *p++ = (unsigned char)wv;
                uint64_t total = n * (wn + wt + wv);
                size_t bytes = (size_t)((total + 7) / 8);
                for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)rnd(&s);
                if ((total & 7) && bytes) p[bytes - 1] &= (unsigned char)((1u << (total & 7)) - 1);
                p += bytes;
            }
            plen = (size_t)(p - tmp);
        }
        offs[b + 1] = plen;
    }
    if (rnd(&s) % 4 == 0) { /* the value cut short inside its last body (the index clipped to it) */
        size_t cut = 1 + (size_t)(rnd(&s) % 30);
        plen = plen > cut ? plen - cut : 0;
        for (int b = 0; b <= nb; b++)
            if (offs[b] > plen) offs[b] = plen;
    }
    unsigned char *buf = malloc(plen + GSNAP_DENSE3_PAD); /* exactly what the value holds */
    memcpy(buf, tmp, plen);
    memset(buf + plen, 0, GSNAP_DENSE3_PAD);
    uint64_t idx[10];
    int ni = nb + 1;
    for (int i = 0; i < ni; i++) idx[i] = offs[i];
    if (rnd(&s) % 2) /* a damaged index: any offsets in [0, plen] */
        for (int i = 0; i < ni; i++) idx[i] = rnd(&s) % (plen + 1);
    gsnap_dense_ref d;
    memset(&d, 0, sizeof d);
    d.recs = buf;
    d.nrec = 100000;
    d.idx = (const unsigned char *)idx;
    d.nidx = (uint64_t)ni;
    d.loaded = d.compact = d.packed = 1;
    d.plen = plen;
    d.bvop = rnd(&s);
    d.bt = rnd(&s);
    struct gsnap_read rd;
    memset(&rd, 0, sizeof rd);
    uint64_t sink = 0;
    for (uint64_t node = 0; node + 1 < (uint64_t)ni; node++) {
        gsnap_dense_it it;
        gsnap_rec x;
        gsnap_dense__it(&d, node, &it);
        while (gsnap_dense__it_next(&it, &x) > 0) { sink += x.nbr + (uint64_t)x.t + x.vop; g_hrec++; }
        size_t cnt = 0;
        (void)gsnap_store__dense_ids(db, &rd, &d, 1, 0, node, &cnt);
        g_hids += cnt;
    }
    if (sink == 42) putchar(' ');
    free(rd.ids);
    free(buf);
    free(tmp);
}

int main(void) {
    char *dir = test_tmpdir("dense_bits");
    gsnap_db *db = NULL;
    gsnap_db_options o = GSNAP_DB_OPTIONS_INIT;
    o.sync = GSNAP_SYNC_NONE;
    OK(gsnap_db_open(dir, &o, &db));
    int rounds = test_small() ? 6 : 40, bad = 0;
    for (int i = 0; i < rounds; i++) {
        rt_ctx c = {.seed = 1000 + (uint64_t)i};
        gen(&c);
        int rc = gsnap_store__write(db, rt_fn, &c);
        CHECK_MSG(rc == 4242, "write returned %d: %s", rc, gsnap_db_errmsg(db));
        bad += c.bad;
        CHECK(c.n[0] + c.n[1] > 1000);
        free(c.recs[0]);
        free(c.recs[1]);
    }
    CHECK_MSG(bad == 0, "%d mismatches in the round trip", bad);
    int hrounds = test_small() ? 3000 : 20000;
    for (int i = 0; i < hrounds; i++) hostile(db, 77 + (uint64_t)i);
    CHECK_MSG(g_hrec > 1000 && g_hids > 1000, "hostile bodies: only %llu records, %llu ids read", (unsigned long long)g_hrec,
              (unsigned long long)g_hids); /* most generated bodies decode: their fields are read */
    gsnap_db_close(db);
    test_rmdir(dir);
    free(dir);
    TEST_DONE();
}
