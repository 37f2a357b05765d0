/*
 * store/run_writer.c -- writing a sorted run as checksummed chunks appended
 * to gs.data (runs.c reads them back; dense.c writes the base's layout).
 *
 * Format 3 (GSC2, codec.c): records are encoded as they arrive, one node
 * group at a time: the open group's body grows in gbuf, and is moved behind
 * its header (node delta, count, body length) into the chunk when the next
 * node starts. Each record's exact size is known before it is added, so a
 * chunk is cut exactly where the next record would pass the cap (no second
 * pass over 32-byte records, no estimate). The bytes are those
 * gsnap_codec__encode writes for the same records (test_merge checks).
 * Formats 1-2 (the test hook): raw GSC1 records, GSNAP_CHUNK_RECS a chunk.
 */
#include "store/store_int.h"
#include <assert.h>

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

unsigned gsnap_store__write_format = GSNAP_STORE_FORMAT;

#define HS sizeof(struct gsnap_chunk_hdr)

/* The largest GSC2 value that still fits two to a leaf page (no overflow
 * pages: their last page is partly empty), within GSNAP_CHUNK2_PAYLOAD. */
static size_t chunk2_cap(gsnap_db *db) {
    MDB_stat st;
    size_t psize = mdb_env_stat(db->env, &st) == 0 ? st.ms_psize : 4096;
    size_t nodemax = (((psize - 16) / 2) & ~(size_t)1) - 2; /* LMDB's me_nodemax */
    size_t cap = nodemax - 8 - GSNAP_DATA_KEY - sizeof(struct gsnap_chunk_hdr);
    return cap > GSNAP_CHUNK2_PAYLOAD ? GSNAP_CHUNK2_PAYLOAD : cap;
}

int gsnap_run__writer_init(gsnap_run_writer *w, gsnap_db *db, MDB_txn *txn, uint64_t run_id) {
    memset(w, 0, sizeof *w);
    w->db = db;
    w->txn = txn;
    w->run_id = run_id;
    w->compact = gsnap_store__write_format >= 3;
    if (w->compact) {
        w->cap = chunk2_cap(db);
        w->ebuf = malloc(HS + w->cap + GSNAP_CODEC_SLACK);
        w->gbuf = malloc(w->cap + GSNAP_CODEC_SLACK);
        if (!w->ebuf || !w->gbuf) goto nomem;
    } else if (!(w->buf = malloc(HS + GSNAP_CHUNK_RECS * GSNAP_REC_BYTES))) {
        goto nomem;
    }
    int rc = mdb_cursor_open(txn, db->data_dbi, &w->cur);
    if (rc) {
        gsnap_run__writer_free(w);
        return gsnap_store__mdb_err(db, rc, "opening data cursor");
    }
    return 0;
nomem:
    gsnap_run__writer_free(w);
    return GSNAP_ENOMEM;
}

/* GSC2: move the open group behind its header into the chunk. */
static void group_close(gsnap_run_writer *w) {
    if (!w->gcount) return;
    unsigned char *p = w->ebuf + HS + w->clen;
    size_t hl = gsnap_codec__put(p, w->gnode - w->cprev);
    hl += gsnap_codec__put(p + hl, w->gcount);
    hl += gsnap_codec__put(p + hl, w->glen);
    memcpy(p + hl, w->gbuf, w->glen);
    w->clen += hl + w->glen;
    w->cprev = w->gnode;
    w->gcount = 0;
    w->glen = 0;
}

static int writer_flush(gsnap_run_writer *w) {
    if (w->nrec == 0) return 0;
    unsigned char key[GSNAP_DATA_KEY];
    struct gsnap_chunk_hdr h;
    MDB_val k = {sizeof key, key}, v;
    h.nrec = w->nrec;
    if (w->compact) {
        group_close(w);
        gsnap_run__data_key(key, w->run_id, w->dir, w->cfirst, w->chunk_no++);
        h.magic = GSNAP_CHUNK2_MAGIC;
        v.mv_data = w->ebuf;
        v.mv_size = HS + w->clen;
    } else {
        uint64_t first;
        memcpy(&first, w->buf + HS, 8);
        gsnap_run__data_key(key, w->run_id, w->dir, first, w->chunk_no++);
        h.magic = GSNAP_CHUNK_MAGIC;
        v.mv_data = w->buf;
        v.mv_size = HS + (size_t)w->nrec * GSNAP_REC_BYTES;
    }
    h.xxh3 = XXH3_64bits((unsigned char *)v.mv_data + HS, v.mv_size - HS);
    memcpy(v.mv_data, &h, sizeof h);
    w->nrec = 0;
    if (w->defer) { /* kept for gsnap_run__writer_replay */
        size_t need = w->alen + sizeof key + 4 + v.mv_size;
        if (need > w->acap && gsnap_vec_reserve((void **)&w->arena, &w->acap, need, 1)) return GSNAP_ENOMEM;
        uint32_t len = (uint32_t)v.mv_size;
        memcpy(w->arena + w->alen, key, sizeof key);
        memcpy(w->arena + w->alen + sizeof key, &len, 4);
        memcpy(w->arena + w->alen + sizeof key + 4, v.mv_data, v.mv_size);
        w->alen = need;
        return 0;
    }
    int rc = mdb_cursor_put(w->cur, &k, &v, MDB_APPEND);
    return gsnap_store__mdb_err(w->db, rc, "appending a run chunk");
}

int gsnap_run__writer_replay(gsnap_run_writer *w, MDB_txn *txn) {
    for (size_t o = 0; o < w->alen;) {
        uint32_t len;
        memcpy(&len, w->arena + o + GSNAP_DATA_KEY, 4);
        MDB_val k = {GSNAP_DATA_KEY, w->arena + o}, v = {len, w->arena + o + GSNAP_DATA_KEY + 4};
        int rc = mdb_cursor_put(w->cur, &k, &v, MDB_APPEND);
        if (rc) return gsnap_store__mdb_err(w->db, rc, "appending a run chunk");
        o += GSNAP_DATA_KEY + 4 + len;
    }
    w->alen = 0;
    int rc = gsnap_bloom__write(w->db, txn, w->run_id, w->dir, w->nodes, w->nnodes);
    w->nnodes = 0;
    return rc;
}

/* GSC2: start a chunk whose first record is r (its bases). */
static void chunk_start(gsnap_run_writer *w, const gsnap_rec *r) {
    w->cbvop = r->vop;
    w->cbt = (uint64_t)r->t;
    w->clen = gsnap_codec__put(w->ebuf + HS, w->cbvop);
    w->clen += gsnap_codec__put(w->ebuf + HS + w->clen, gsnap_codec__zz(w->cbt));
    w->cfirst = r->node;
    w->cprev = 0;
    w->gcount = 0;
    w->glen = 0;
}

/* GSC2: append r (same direction, order kept); a new chunk when it would
 * not fit in this one. */
static int enc_add(gsnap_run_writer *w, const gsnap_rec *r) {
    int rc;
    if (w->nrec == 0) chunk_start(w, r);
    else if (r->node != w->gnode) group_close(w);
    for (;;) {
        int first = w->gcount == 0;
        uint64_t dn = r->nbr - (first ? 0 : w->gnbr);
        uint64_t dt = gsnap_codec__zz((uint64_t)r->t - (first ? w->cbt : w->gt));
        uint64_t dv = gsnap_codec__zz(r->vop - w->cbvop);
        size_t rl = gsnap_codec__varint_len(dn) + gsnap_codec__varint_len(dt) + gsnap_codec__varint_len(dv);
        size_t body = w->glen + rl, cnt = w->gcount + 1;
        /* the group header takes at most 30 bytes: its exact size only near the cap */
        if (w->clen + body + 30 > w->cap && w->nrec > 0 &&
            w->clen + gsnap_codec__varint_len(r->node - w->cprev) + gsnap_codec__varint_len(cnt) +
                    gsnap_codec__varint_len(body) + body > w->cap) {
            if ((rc = writer_flush(w))) return rc;
            chunk_start(w, r);
            continue;
        }
        unsigned char *p = w->gbuf + w->glen;
        p += gsnap_codec__put(p, dn);
        p += gsnap_codec__put(p, dt);
        p += gsnap_codec__put(p, dv);
        w->glen = (size_t)(p - w->gbuf);
        w->gnode = r->node;
        w->gcount = cnt;
        w->gnbr = r->nbr;
        w->gt = (uint64_t)r->t;
        w->nrec++;
        return 0;
    }
}

/* Store the Bloom filter of the direction just finished. */
static int writer_bloom(gsnap_run_writer *w) {
    if (w->defer) return 0; /* its nodes stay for the replay */
    int rc = gsnap_bloom__write(w->db, w->txn, w->run_id, w->dir, w->nodes, w->nnodes);
    w->nnodes = 0;
    return rc;
}

/* Before records of `node` in `dir`: finish the other direction, note the
 * node for the Bloom filter. */
static int writer_node(gsnap_run_writer *w, uint8_t dir, uint64_t node) {
    int rc;
    if (w->total > 0 && dir != w->dir && ((rc = writer_flush(w)) || (rc = writer_bloom(w)))) return rc;
    /* A run is written direction by direction, node by node ascending
     * (readers seek by node and the Bloom filter is built per direction). */
    assert(w->total == 0 || dir >= w->dir);
    assert(w->total == 0 || dir != w->dir || w->nnodes == 0 || node >= w->nodes[w->nnodes - 1]);
    if (w->nnodes == 0 || w->nodes[w->nnodes - 1] != node) {
        if (gsnap_vec_reserve((void **)&w->nodes, &w->nodes_cap, w->nnodes + 1, sizeof *w->nodes))
            return GSNAP_ENOMEM;
        w->nodes[w->nnodes++] = node;
    }
    w->dir = dir;
    return 0;
}

int gsnap_run__writer_add(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r) {
    int rc;
    if (w->dense) return gsnap_dense__add(w, dir, r);
    if ((rc = writer_node(w, dir, r->node))) return rc;
    if (w->compact) {
        if ((rc = enc_add(w, r))) return rc;
    } else {
        if (w->nrec == GSNAP_CHUNK_RECS && (rc = writer_flush(w))) return rc;
        memcpy(w->buf + HS + (size_t)w->nrec * GSNAP_REC_BYTES, r, GSNAP_REC_BYTES);
        w->nrec++;
    }
    w->total++;
    w->nrec_dir[dir & 1]++;
    if (r->vop & 1) w->has_del = 1;
    return 0;
}

int gsnap_run__writer_group(gsnap_run_writer *w, uint8_t dir, const gsnap_rec *r, size_t n) {
    int rc;
    if (w->dense) return gsnap_dense__add_group(w, dir, r, n);
    if (!w->compact) {
        for (size_t i = 0; i < n; i++)
            if ((rc = gsnap_run__writer_add(w, dir, &r[i]))) return rc;
        return 0;
    }
    if ((rc = writer_node(w, dir, r[0].node))) return rc;
    uint64_t del = 0;
    for (size_t i = 0; i < n; i++) {
        assert(r[i].node == r[0].node);
        if ((rc = enc_add(w, &r[i]))) return rc;
        del |= r[i].vop;
    }
    w->total += n;
    w->nrec_dir[dir & 1] += n;
    if (del & 1) w->has_del = 1;
    return 0;
}

int gsnap_run__writer_end_dir(gsnap_run_writer *w) {
    int rc;
    if (w->dense) return gsnap_dense__close_dir(w);
    if ((rc = writer_flush(w))) return rc;
    return w->total > 0 ? writer_bloom(w) : 0;
}

int gsnap_run__writer_finish(gsnap_run_writer *w) {
    int rc;
    if (w->dense) {
        rc = gsnap_dense__close_dir(w);
    } else {
        rc = writer_flush(w);
        if (rc == 0 && w->total > 0) rc = writer_bloom(w);
    }
    if (w->cur) mdb_cursor_close(w->cur);
    w->cur = NULL;
    return rc;
}

void gsnap_run__writer_free(gsnap_run_writer *w) {
    if (w->cur) mdb_cursor_close(w->cur);
    free(w->buf);
    free(w->ebuf);
    free(w->gbuf);
    free(w->nodes);
    free(w->didx);
    free(w->dbuf);
    free(w->dnode);
    free(w->arena);
    w->arena = NULL;
    w->ebuf = w->gbuf = w->dbuf = w->buf = NULL;
    w->dnode = NULL;
    w->nodes = NULL;
    w->didx = NULL;
    w->cur = NULL;
}
