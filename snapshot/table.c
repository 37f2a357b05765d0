/*
 * snapshot/table.c -- the snapshot catalog, the (hop, node) table's
 * entries, and the handle (open, close, list, info, drop).
 *
 * Keys and values of table "snap.<name>" are encoded by record.c.
 * Catalog table "snapcat": name -> struct gsnap_cat (with its own XXH3).
 * Generations: the catalog holds the snapshot's current generation; every
 * value names the generation that wrote it. Writers replace values in place
 * inside one LMDB write txn; LMDB's copy-on-write keeps the previous pages
 * for readers that began earlier and frees them after the last such reader.
 */
#include "snapshot/snapshot_int.h"
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* ---- catalog ---- */

void gsnap_snap__cat_seal(struct gsnap_cat *c) {
    c->xxh = XXH3_64bits(c, offsetof(struct gsnap_cat, xxh));
}

int gsnap_snap__cat_get(gsnap_db *db, MDB_txn *txn, const char *name, struct gsnap_cat *c) {
    MDB_dbi dbi;
    int rc = gsnap_store__table(db, GSNAP_CAT_TABLE, 0, 0, &dbi);
    if (rc) return rc;
    MDB_val k = {strlen(name), (void *)name}, v;
    rc = mdb_get(txn, dbi, &k, &v);
    if (rc) return gsnap_store__mdb_err(db, rc, "snapshot catalog");
    if (v.mv_size >= 8 && gsnap_get_le32((const unsigned char *)v.mv_data + 4) == 1 &&
        v.mv_size == GSNAP_CAT_V1_SIZE) {
        /* format 1 (before the sampled kind): the same fields up to
         * build_seconds, then its XXH3; it reads as an exact snapshot */
        const size_t body = GSNAP_CAT_V1_SIZE - 8;
        memset(c, 0, sizeof *c);
        memcpy(c, v.mv_data, body);
        if (c->magic != GSNAP_CAT_MAGIC ||
            gsnap_get_le64((const unsigned char *)v.mv_data + body) != XXH3_64bits(v.mv_data, body))
            return gsnap_store__err(db, GSNAP_ECHECKSUM, "snapshot %s: catalog record checksum mismatch", name);
        c->kind = GSNAP_HOPSETS_EXACT;
        for (unsigned h = 0; h < GSNAP_MAX_HOPS; h++) c->caps[h] = h < c->hops ? c->cap : 0;
        c->xxh = XXH3_64bits(c, offsetof(struct gsnap_cat, xxh));
    } else {
        if (v.mv_size != sizeof *c)
            return gsnap_store__err(db, GSNAP_EFORMAT, "snapshot %s: catalog record of %zu bytes: not format 1 (%u bytes) or %u (%zu bytes)",
                                    name, v.mv_size, GSNAP_CAT_V1_SIZE, GSNAP_CAT_FORMAT, sizeof *c);
        memcpy(c, v.mv_data, sizeof *c);
        if (c->magic != GSNAP_CAT_MAGIC || c->xxh != XXH3_64bits(c, offsetof(struct gsnap_cat, xxh)))
            return gsnap_store__err(db, GSNAP_ECHECKSUM, "snapshot %s: catalog record checksum mismatch", name);
        if (c->format != GSNAP_CAT_FORMAT)
            return gsnap_store__err(db, GSNAP_EFORMAT, "snapshot %s: catalog format %u not supported (this build reads 1 and %u)",
                                    name, c->format, GSNAP_CAT_FORMAT);
    }
    /* A record can pass its checksum and still be nonsense (written by a
     * bug, or crafted): everything used as a bound or an index is checked. */
    int bad_caps = c->kind != GSNAP_HOPSETS_EXACT && c->kind != GSNAP_HOPSETS_SAMPLED;
    for (unsigned h = 0; h < GSNAP_MAX_HOPS && c->hops <= GSNAP_MAX_HOPS; h++)
        if (h < c->hops ? c->caps[h] < 1 || c->caps[h] > GSNAP_SLAB_CAP : c->caps[h] != 0) bad_caps = 1;
    if (c->hops < 1 || c->hops > GSNAP_MAX_HOPS || c->dir > 1 || c->cap > GSNAP_SLAB_CAP || bad_caps)
        return gsnap_store__err(db, GSNAP_ECORRUPT, "snapshot %s: catalog record out of range (hops %u, dir %u, cap %u)",
                                name, c->hops, c->dir, c->cap);
    return 0;
}

int gsnap_snap__cat_put(gsnap_db *db, MDB_txn *txn, const char *name, const struct gsnap_cat *c) {
    MDB_dbi dbi;
    int rc = gsnap_store__table(db, GSNAP_CAT_TABLE, 0, 1, &dbi);
    if (rc) return rc;
    MDB_val k = {strlen(name), (void *)name}, v = {sizeof *c, (void *)c};
    rc = mdb_put(txn, dbi, &k, &v, 0);
    return rc ? gsnap_store__mdb_err(db, rc, "snapshot catalog put") : 0;
}

static void cat_to_info(const char *name, size_t nlen, const struct gsnap_cat *c, gsnap_snapshot_info *in) {
    memset(in, 0, sizeof *in);
    if (nlen > sizeof in->name - 1) nlen = sizeof in->name - 1;
    memcpy(in->name, name, nlen);
    in->complete = c->status == GSNAP_SNAP_STATUS_COMPLETE;
    in->format_version = c->format;
    in->hops = c->hops;
    memcpy(in->fanouts, c->fanouts, sizeof in->fanouts);
    in->alpha = c->alpha;
    in->at_t = c->at_t;
    in->at_version = c->at_version;
    in->dir = (gsnap_dir)c->dir;
    in->seed = c->seed;
    in->generation = c->generation;
    in->nodes = c->nodes;
    in->slab_bytes = c->slab_bytes;
    memcpy(in->exact_ids, c->exact_ids, sizeof in->exact_ids);
    memcpy(in->stored_ids, c->stored_ids, sizeof in->stored_ids);
    memcpy(in->capped, c->capped, sizeof in->capped);
    memcpy(in->blocks, c->blocks, sizeof in->blocks);
    in->build_seconds = c->build_seconds;
    in->created_unix = c->created_unix;
    in->hop_sets = c->kind;
    memcpy(in->caps, c->caps, sizeof in->caps);
    in->snap_version = c->snap_version;
}

/* Open the catalog (and the snapshot's table) before any txn begins: an LMDB
 * txn does not know table handles opened after it began. */
int gsnap_snap__pre_open(gsnap_db *db, const char *name) {
    MDB_dbi dbi;
    char tname[96];
    int rc = gsnap_store__table(db, GSNAP_CAT_TABLE, 0, 0, &dbi);
    if (rc || !name) return rc;
    gsnap_snap__table_name(name, tname, sizeof tname);
    rc = gsnap_store__table(db, tname, 0, 0, &dbi);
    return rc == GSNAP_NOTFOUND ? 0 : rc;
}

int gsnap_snapshot__open_catalog(gsnap_db *db) { return gsnap_snap__pre_open(db, NULL); }

int gsnap_snapshot_info_get(gsnap_db *db, const char *name, gsnap_snapshot_info *info) {
    gsnap_read *rd = NULL;
    int owned = 0, rc;
    struct gsnap_cat c;
    if (!db || !info || !gsnap_snap__valid_name(name))
        return db ? gsnap_store__err(db, GSNAP_EINVAL, "snapshot info: bad argument") : GSNAP_EINVAL;
    if ((rc = gsnap_snap__pre_open(db, NULL))) return rc == GSNAP_NOTFOUND ? gsnap_store__err(db, rc, "no snapshot named %s", name) : rc;
    if ((rc = gsnap_read__use(db, NULL, &rd, &owned))) return rc;
    rc = gsnap_snap__cat_get(db, gsnap_read__txn(rd), name, &c);
    if (!rc) cat_to_info(name, strlen(name), &c, info);
    else if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name); /* not an older call's message */
    if (owned) gsnap_read_end(rd);
    return rc;
}

int gsnap_snapshot_list(gsnap_db *db, gsnap_snapshot_info **infos, size_t *n) {
    gsnap_read *rd = NULL;
    int owned = 0, rc;
    MDB_cursor *cur = NULL;
    gsnap_snapshot_info *arr = NULL;
    size_t cnt = 0, cap = 0;
    MDB_dbi dbi;
    if (!db || !infos || !n) return GSNAP_EINVAL;
    *infos = NULL;
    *n = 0;
    rc = gsnap_store__table(db, GSNAP_CAT_TABLE, 0, 0, &dbi);
    if (rc == GSNAP_NOTFOUND) return 0;
    if (rc) return rc;
    if ((rc = gsnap_read__use(db, NULL, &rd, &owned))) return rc;
    if ((rc = mdb_cursor_open(gsnap_read__txn(rd), dbi, &cur))) {
        rc = gsnap_store__mdb_err(db, rc, "snapshot list");
        goto out;
    }
    MDB_val k, v;
    for (int op = MDB_FIRST; (rc = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)op)) == 0; op = MDB_NEXT) {
        struct gsnap_cat c;
        char nm[GSNAP_MAX_NAME + 1];
        if (k.mv_size > GSNAP_MAX_NAME) continue;
        memcpy(nm, k.mv_data, k.mv_size);
        nm[k.mv_size] = 0;
        memset(&c, 0, sizeof c);
        if (gsnap_snap__cat_get(db, gsnap_read__txn(rd), nm, &c)) {
            /* listed as it is, so that check can report it */
            if (v.mv_size < offsetof(struct gsnap_cat, hops) + 4) continue;
            memcpy(&c, v.mv_data, v.mv_size < sizeof c ? v.mv_size : sizeof c);
        }
        if (cnt == cap) {
            cap = cap ? 2 * cap : 8;
            void *p = realloc(arr, cap * sizeof *arr);
            if (!p) { rc = GSNAP_ENOMEM; goto out; }
            arr = p;
        }
        cat_to_info(k.mv_data, k.mv_size, &c, &arr[cnt++]);
    }
    rc = rc == MDB_NOTFOUND ? 0 : gsnap_store__mdb_err(db, rc, "snapshot list");
out:
    if (cur) mdb_cursor_close(cur);
    if (owned) gsnap_read_end(rd);
    if (rc == 0 && cnt) { *infos = arr; *n = cnt; arr = NULL; }
    free(arr);
    return rc;
}

/* ---- handle ---- */

int gsnap_snapshot_open(gsnap_db *db, const char *name, gsnap_snapshot **out) {
    gsnap_snapshot *s = NULL;
    gsnap_read *rd = NULL;
    int owned = 0, rc;
    char tname[96];
    if (!out) return GSNAP_EINVAL;
    *out = NULL;
    if (!db || !gsnap_snap__valid_name(name))
        return db ? gsnap_store__err(db, GSNAP_EINVAL, "snapshot open: bad name") : GSNAP_EINVAL;
    s = calloc(1, sizeof *s);
    if (!s) return GSNAP_ENOMEM;
    for (int i = 0; i <= GSNAP_MAX_HOPS; i++) s->fd_direct[i] = s->fd_buf[i] = -1;
    pthread_mutex_init(&s->io_lock, NULL);
    s->magic = GSNAP_SNAP_MAGIC;
    s->db = db;
    strcpy(s->name, name);
    if ((rc = gsnap_snap__pre_open(db, name))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name);
        goto out;
    }
    if ((rc = gsnap_read__use(db, NULL, &rd, &owned))) goto out;
    if ((rc = gsnap_snap__cat_get(db, gsnap_read__txn(rd), name, &s->cat))) {
        if (rc == GSNAP_NOTFOUND) gsnap_store__err(db, rc, "no snapshot named %s", name);
        goto out;
    }
    if (s->cat.status != GSNAP_SNAP_STATUS_COMPLETE) {
        rc = gsnap_store__err(db, GSNAP_NOTFOUND, "snapshot %s is incomplete (build did not finish)", name);
        goto out;
    }
    gsnap_snap__table_name(name, tname, sizeof tname);
    if ((rc = gsnap_store__table(db, tname, 0, 0, &s->dbi))) goto out;
    s->params.hops = s->cat.hops;
    memcpy(s->params.fanouts, s->cat.fanouts, sizeof s->params.fanouts);
    s->params.alpha = s->cat.alpha;
    s->params.at_t = s->cat.at_t;
    s->params.at_version = s->cat.at_version;
    s->params.dir = (gsnap_dir)s->cat.dir;
    s->params.seed = s->cat.seed;
    cat_to_info(name, strlen(name), &s->cat, &s->info);
    rc = gsnap_snap__open_files(s);
out:
    if (owned) gsnap_read_end(rd);
    if (rc) gsnap_snapshot_close(s);
    else *out = s;
    return rc;
}

void gsnap_snapshot_close(gsnap_snapshot *s) {
    if (!s || s->magic != GSNAP_SNAP_MAGIC) return;
    gsnap_snap__close_files(s);
    pthread_mutex_destroy(&s->io_lock);
    s->magic = 0;
    free(s);
}

const gsnap_snapshot__params *gsnap_snapshot__get_params(const struct gsnap_snapshot *snap) {
    return &snap->params;
}
gsnap_db *gsnap_snapshot__db(const struct gsnap_snapshot *snap) { return snap->db; }
MDB_dbi gsnap_snapshot__dbi(const struct gsnap_snapshot *snap) { return snap->dbi; }

const gsnap_snapshot_info *gsnap_snapshot_get_info(const gsnap_snapshot *snap) {
    return snap && snap->magic == GSNAP_SNAP_MAGIC ? &snap->info : NULL;
}

/* ---- cache entries ---- */

int gsnap_snapshot__cache_get(const struct gsnap_snapshot *snap, MDB_txn *txn, unsigned hop,
                              uint64_t node, uint64_t *buf, size_t cap, size_t *n, uint64_t *gen,
                              uint64_t *version) {
    unsigned char key[12];
    struct gsnap_rec_hdr h;
    gsnap_snap__key(key, hop, node);
    MDB_val k = {12, key}, v;
    int rc = gsnap_store__get(snap->db, txn, snap->dbi, &k, &v, "snapshot cache get");
    if (rc) return rc;
    if ((rc = gsnap_snap__rec_decode(v.mv_data, v.mv_size, &h)))
        return gsnap_store__err(snap->db, rc, "snapshot %s: damaged record (hop %u, node %llu, version %llu): %s",
                                snap->name, hop, (unsigned long long)node, (unsigned long long)h.version,
                                gsnap_strerror(rc));
    /* decode checked the length: the ids end exactly at the value's end */
    assert(v.mv_size == GSNAP_REC_HDR + (size_t)h.ncache * 8);
    *n = h.ncache;
    if (h.ncache > cap) return GSNAP_ERANGE;
    if (h.ncache) memcpy(buf, (const unsigned char *)v.mv_data + GSNAP_REC_HDR, (size_t)h.ncache * 8);
    if (gen) *gen = h.gen;
    if (version) *version = h.version;
    return 0;
}

int gsnap_snapshot__cache_put(const struct gsnap_snapshot *snap, MDB_txn *txn, unsigned hop,
                              uint64_t node, const uint64_t *ids, size_t n, uint64_t gen,
                              uint64_t version) {
    unsigned char key[12];
    struct gsnap_rec_hdr h;
    unsigned char *val = NULL;
    int rc;
    if (n > UINT32_MAX) return GSNAP_EINVAL;
    gsnap_snap__key(key, hop, node);
    MDB_val k = {12, key}, v;
    rc = mdb_get(txn, snap->dbi, &k, &v);
    if (rc == 0) {
        if ((rc = gsnap_snap__rec_decode(v.mv_data, v.mv_size, &h))) return rc;
    } else if (rc == MDB_NOTFOUND) {
        memset(&h, 0, sizeof h);
        h.format = GSNAP_SNAP_FORMAT;
    } else {
        return gsnap_store__mdb_err(snap->db, rc, "snapshot cache put");
    }
    h.gen = gen;
    h.version = version;
    h.ncache = (uint32_t)n;
    val = malloc(GSNAP_REC_HDR + n * 8);
    if (!val) return GSNAP_ENOMEM;
    gsnap_snap__rec_encode(val, &h, ids);
    v.mv_size = GSNAP_REC_HDR + n * 8;
    v.mv_data = val;
    rc = mdb_put(txn, snap->dbi, &k, &v, 0);
    free(val);
    return rc ? gsnap_store__mdb_err(snap->db, rc, "snapshot cache put") : 0;
}

int gsnap_snapshot__generation(const struct gsnap_snapshot *snap, MDB_txn *txn, uint64_t *gen) {
    struct gsnap_cat c;
    int rc = gsnap_snap__cat_get(snap->db, txn, snap->name, &c);
    if (!rc) *gen = c.generation;
    return rc;
}

int gsnap_snapshot__set_generation(const struct gsnap_snapshot *snap, MDB_txn *txn, uint64_t gen) {
    struct gsnap_cat c;
    int rc = gsnap_snap__cat_get(snap->db, txn, snap->name, &c);
    if (rc) return rc;
    /* generations only grow: each refresh commits old + 1 in one txn */
    assert(gen > c.generation);
    c.generation = gen;
    gsnap_snap__cat_seal(&c);
    return gsnap_snap__cat_put(snap->db, txn, snap->name, &c);
}

int gsnap_snapshot_cache(gsnap_snapshot *snap, gsnap_read *rd, unsigned hop, uint64_t node,
                         uint64_t *buf, size_t cap, size_t *n, uint64_t *gen) {
    gsnap_read *r = NULL;
    int owned = 0, rc;
    if (!snap || snap->magic != GSNAP_SNAP_MAGIC || !n || (cap && !buf)) return GSNAP_EINVAL;
    if (hop > snap->params.hops)
        return gsnap_store__err(snap->db, GSNAP_EINVAL, "hop %u > snapshot hops %u", hop, snap->params.hops);
    if ((rc = gsnap_read__use(snap->db, rd, &r, &owned))) return rc;
    rc = gsnap_snapshot__cache_get(snap, gsnap_read__txn(r), hop, node, buf, cap, n, gen, NULL);
    if (owned) gsnap_read_end(r);
    return rc;
}

/* ---- drop ---- */

struct drop_ctx { const char *name; };

static int drop_txn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct drop_ctx *d = vctx;
    struct gsnap_cat c;
    char tname[96];
    MDB_dbi dbi, cat;
    int rc = gsnap_snap__cat_get(db, txn, d->name, &c);
    if (rc) return rc;
    gsnap_snap__table_name(d->name, tname, sizeof tname);
    rc = gsnap_store__table(db, tname, 0, 0, &dbi);
    if (rc == 0) {
        /* empty it but keep the named handle: the store caches dbi handles */
        if ((rc = mdb_drop(txn, dbi, 0))) return gsnap_store__mdb_err(db, rc, "snapshot drop");
    } else if (rc != GSNAP_NOTFOUND) {
        return rc;
    }
    if ((rc = gsnap_store__table(db, GSNAP_CAT_TABLE, 0, 0, &cat))) return rc;
    MDB_val k = {strlen(d->name), (void *)d->name};
    rc = mdb_del(txn, cat, &k, NULL);
    return rc ? gsnap_store__mdb_err(db, rc, "snapshot drop") : 0;
}

/* Remove <db>/snapshots/<name> and what the snapshot put in it. */
int gsnap_snap__remove_files(gsnap_db *db, const char *name) {
    char dir[2048], p[2400];
    if (gsnap_snap__dir(db, name, dir, sizeof dir)) return GSNAP_EINVAL;
    const char *subs[] = {"tmp"};
    for (size_t s = 0; s < 2; s++) {
        char d[2100];
        if (s == 0) snprintf(d, sizeof d, "%s/%s", dir, subs[0]);
        else snprintf(d, sizeof d, "%s", dir);
        DIR *dh = opendir(d);
        if (!dh) continue;
        struct dirent *e;
        while ((e = readdir(dh))) {
            if (e->d_name[0] == '.') continue;
            if (s == 1 && strcmp(e->d_name, "tmp") == 0) continue;
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            unlink(p);
        }
        closedir(dh);
        rmdir(d);
    }
    return 0;
}

int gsnap_snapshot_drop(gsnap_db *db, const char *name) {
    int fd = -1;
    if (!db) return GSNAP_EINVAL;
    if (!gsnap_snap__valid_name(name)) return gsnap_store__err(db, GSNAP_EINVAL, "snapshot drop: bad name");
    if (gsnap_store__read_only(db)) return gsnap_store__err(db, GSNAP_EACCES, "database is read-only");
    gsnap_snapshot_info info;
    int rc = gsnap_snapshot_info_get(db, name, &info); /* no lock file for a name never used */
    if (rc == GSNAP_NOTFOUND) return rc;
    if ((rc = gsnap_snap__claim(db, name, GSNAP_EBUSY, &fd))) return rc;
    rc = gsnap_snap__drop_claimed(db, name);
    gsnap_snap__release(fd);
    return rc;
}

int gsnap_snap__drop_claimed(gsnap_db *db, const char *name) {
    struct drop_ctx d = {name};
    int rc = gsnap_snap__pre_open(db, name);
    if (!rc) rc = gsnap_store__write(db, drop_txn, &d);
    if (rc == GSNAP_NOTFOUND) return gsnap_store__err(db, rc, "no snapshot named %s", name);
    if (rc) return rc;
    return gsnap_snap__remove_files(db, name);
}
