/*
 * store/load.c -- `graphsnap load`: reads the portable text format written
 * by dump.c ("graphsnap dump format 2", docs/format.md; format 1 too) and
 * commits every dumped version as one batch with the same number, commit
 * time and source; then rebuilds the dumped snapshots and restores the
 * retention horizon. The attribute lines go to the extension hooks
 * (store/store.h) that the public gsnap_db_load in features/dump_attr.c
 * passes. Every bad line is an error naming file:line; what was committed
 * before it stays.
 */
#include "store/dump_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int unescape(const char *s, char *out, size_t cap) {
    size_t n = 0;
    if (strcmp(s, "%") == 0) { out[0] = 0; return 0; }
    for (const char *p = s; *p; p++) {
        unsigned c = (unsigned char)*p;
        if (c == '%') { /* exactly two hex digits, not 00: a name is a C string (sscanf's %2x took "%-1") */
            int hi = gsnap_hex_digit(p[1]), lo = hi < 0 ? -1 : gsnap_hex_digit(p[2]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0) return -1;
            c = (unsigned)(hi << 4 | lo);
            p += 2;
        }
        if (n + 1 >= cap) return -1;
        out[n++] = (char)c;
    }
    out[n] = 0;
    return 0;
}

/* "SRC DST T": u64, u64, i64, single spaces, then the end of the line.
 * Returns 0 or -1. */
static int parse_event(const char *p, uint64_t *s, uint64_t *d, int64_t *t) {
    if (gsnap_dec_u64(&p, s) || *p++ != ' ' || gsnap_dec_u64(&p, d) || *p++ != ' ') return -1;
    return gsnap_dec_i64(&p, t) || *p ? -1 : 0;
}

/* Strict fields: decimal numbers without blanks or '+' (common/decimal.c),
 * exactly one space between fields, none after the last. Each returns 0 or
 * -1, and moves *pp past the field and its space. */
static int fld_end(const char **pp, int last) {
    if (last) return **pp ? -1 : 0;
    if (**pp != ' ') return -1;
    (*pp)++;
    return 0;
}

static int fld_u64(const char **pp, uint64_t *v, int last) {
    return gsnap_dec_u64(pp, v) || fld_end(pp, last) ? -1 : 0;
}

static int fld_i64(const char **pp, int64_t *v, int last) {
    return gsnap_dec_i64(pp, v) || fld_end(pp, last) ? -1 : 0;
}

/* A word of 1..cap-1 bytes into out. */
static int fld_word(const char **pp, char *out, size_t cap, int last) {
    size_t n = strcspn(*pp, " ");
    if (n == 0 || n >= cap) return -1;
    memcpy(out, *pp, n);
    out[n] = 0;
    *pp += n;
    return fld_end(pp, last);
}

struct horizon_ctx { uint64_t horizon; int64_t horizon_t; };
static int set_horizon_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct horizon_ctx *c = vctx;
    struct gsnap_meta m;
    int rc = gsnap_store__read_meta(db, txn, &m);
    if (rc) return rc;
    /* Never lower it: a database compacted further than the dump's source
     * (an incremental load) has folded the history before its own horizon,
     * and a lower one would let queries reach it. */
    if (c->horizon > m.horizon) m.horizon = c->horizon;
    if (c->horizon_t > m.horizon_t) m.horizon_t = c->horizon_t;
    return gsnap_store__put_meta(db, txn, &m);
}

static int set_keep_fn(gsnap_db *db, MDB_txn *txn, void *vctx) {
    struct gsnap_meta m;
    int rc = gsnap_store__read_meta(db, txn, &m);
    if (rc) return rc;
    if (m.version != 0) return gsnap_store__err(db, GSNAP_ESTATE, "the database is not empty");
    m.keep = *(const unsigned *)vctx;
    return gsnap_store__put_meta(db, txn, &m);
}

struct pending_snap {
    char name[72];
    gsnap_snapshot_options o;
    uint64_t line;
};

/* What load knows between lines. */
typedef struct {
    gsnap_db *db;
    FILE *f;
    const char *name;
    const gsnap_load_options *opts;
    const gsnap_dump_ext_ops *ext;
    void *xstate;
    uint64_t xlines, lineno, expect, from, to, events, horizon, total_bytes;
    int64_t horizon_t;
    int format, have_horizon, have_versions, ended, header;
    gsnap_batch *b; /* the version being read */
    /* its 'v' line (line number, version, and whether it carries counts:
     * the claim), and what its events hold so far */
    uint64_t vline, vver, c_adds, c_dels, r_adds, r_dels;
    int64_t c_min, c_max, r_min, r_max;
    int claim;
    struct pending_snap *snaps;
    size_t nsnaps;
    gsnap_load_report rep;
} load_state;

/* A parse error naming the file and line (the arguments follow `fmt`'s
 * "%s:%llu: " prefix, as every message here starts). */
#define LOAD_ERR(...) return gsnap_store__err(ls->db, GSNAP_EPARSE, __VA_ARGS__)
#define LNO (unsigned long long)ls->lineno

static int load_header(load_state *ls, const char *line) {
    uint64_t ver = 0;
    const char *p = line + 15;
    if (strncmp(line, "graphsnap-dump ", 15) != 0 || fld_u64(&p, &ver, 1)) /* 'graphsnap-dump 2junk' passed */
        LOAD_ERR("%s:%llu: not a graphsnap dump (expected 'graphsnap-dump 2')", ls->name, LNO);
    if (ver < DUMP_FORMAT_MIN || ver > DUMP_FORMAT)
        return gsnap_store__err(ls->db, GSNAP_EFORMAT, "%s:%llu: dump format %llu, this build reads formats %d..%d",
                                ls->name, LNO, (unsigned long long)ver, DUMP_FORMAT_MIN, DUMP_FORMAT);
    ls->format = (int)ver;
    ls->header = 1;
    return 0;
}

static int load_event(load_state *ls, const char *line) {
    uint64_t s, d;
    int64_t t;
    if (parse_event(line + 2, &s, &d, &t))
        LOAD_ERR("%s:%llu: bad event line (expected 'a|d SRC DST T')", ls->name, LNO);
    if (!ls->b) LOAD_ERR("%s:%llu: event before any 'v' line", ls->name, LNO);
    if (t == GSNAP_TIME_MAX)
        LOAD_ERR("%s:%llu: edge %llu -> %llu: time %lld is reserved for \"now\"", ls->name, LNO,
                 (unsigned long long)s, (unsigned long long)d, (long long)t);
    int rc = line[0] == 'a' ? gsnap_batch_add(ls->b, s, d, t) : gsnap_batch_delete(ls->b, s, d, t);
    if (rc) { /* not the line's fault (out of memory): its code, with the place */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gsnap_db_errmsg(ls->db));
        return gsnap_store__err(ls->db, rc, "%s:%llu: %s", ls->name, LNO, msg);
    }
    ls->events++;
    if (line[0] == 'a') ls->r_adds++;
    else ls->r_dels++;
    if (t < ls->r_min) ls->r_min = t;
    if (t > ls->r_max) ls->r_max = t;
    return 0;
}

/* The version read so far against its 'v' line: the counts and the time
 * range are those it was committed with, so its events must match them
 * exactly; below the horizon a retention fold may have dropped events
 * (never added any or moved one in time), so there they may be fewer and
 * within the range. A version without events has no time range to check. */
static int check_claim(load_state *ls) {
    if (!ls->claim) return 0;
    int folded = ls->have_horizon && ls->vver < ls->horizon, none = ls->r_adds + ls->r_dels == 0, ok;
    if (folded)
        ok = ls->r_adds <= ls->c_adds && ls->r_dels <= ls->c_dels &&
             (none || (ls->r_min >= ls->c_min && ls->r_max <= ls->c_max));
    else
        ok = ls->r_adds == ls->c_adds && ls->r_dels == ls->c_dels &&
             (none || (ls->r_min == ls->c_min && ls->r_max == ls->c_max));
    if (ok) return 0;
    char got[128];
    if (none) snprintf(got, sizeof got, "none");
    else
        snprintf(got, sizeof got, "+%llu -%llu, times %lld..%lld", (unsigned long long)ls->r_adds,
                 (unsigned long long)ls->r_dels, (long long)ls->r_min, (long long)ls->r_max);
    return gsnap_store__err(ls->db, GSNAP_EPARSE, "%s:%llu: version %llu: the 'v' line says +%llu -%llu, times "
                            "%lld..%lld%s; its events are %s", ls->name, (unsigned long long)ls->vline,
                            (unsigned long long)ls->vver, (unsigned long long)ls->c_adds,
                            (unsigned long long)ls->c_dels, (long long)ls->c_min, (long long)ls->c_max,
                            folded ? " (before the horizon: at most those)" : "", got);
}

/* Commit the version read so far (with the extensions' rows), if any. */
static int commit_version(load_state *ls) {
    if (!ls->b) return 0;
    uint64_t v = 0;
    int rc;
    if ((rc = check_claim(ls))) return rc;
    if (ls->ext && ls->ext->load_commit && (rc = ls->ext->load_commit(ls->db, ls->xstate, ls->b))) return rc;
    rc = gsnap_batch_commit(ls->b, &v);
    ls->b = NULL;
    if (rc) { /* the place in the dump: the store's message names no line. A
               * range the store refuses (an event before the database's
               * retention horizon) is the input's fault: a parse error */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gsnap_db_errmsg(ls->db));
        return gsnap_store__err(ls->db, rc == GSNAP_ERANGE ? GSNAP_EPARSE : rc, "%s:%llu: version %llu not committed: %s",
                                ls->name, (unsigned long long)ls->vline, (unsigned long long)ls->vver, msg);
    }
    if (v != ls->vver) /* versions are dense: a version not committed would shift the rest */
        return gsnap_store__err(ls->db, GSNAP_ECORRUPT, "%s:%llu: version %llu was committed as version %llu",
                                ls->name, (unsigned long long)ls->vline, (unsigned long long)ls->vver,
                                (unsigned long long)v);
    if (!ls->rep.first_version) ls->rep.first_version = v;
    ls->rep.last_version = v;
    ls->rep.versions++;
    return 0;
}

/* 'v VERSION NS ADDS DELETES MIN_T MAX_T FIRST LAST SOURCE' (or, format 1,
 * 'v VERSION unknown'): commits the previous version, begins this one. */
static int load_version(load_state *ls, const char *line) {
    int rc;
    if (!ls->have_versions) LOAD_ERR("%s:%llu: 'v' line before the 'versions' line", ls->name, LNO);
    if ((rc = commit_version(ls))) return rc;
    const char *p = line + 2;
    uint64_t ver, adds, dels, fl, ll;
    int64_t ns, mint, maxt;
    char src[1024];
    if ((rc = gsnap_batch_begin(ls->db, &ls->b))) return rc;
    gsnap_batch__set_restore(ls->b);
    ls->vline = ls->lineno;
    ls->claim = 0;
    ls->r_adds = ls->r_dels = 0;
    ls->r_min = INT64_MAX;
    ls->r_max = INT64_MIN;
    if (fld_u64(&p, &ver, 0)) {
        LOAD_ERR("%s:%llu: bad 'v' line (expected 'v VERSION NS ADDS DELETES MIN_T MAX_T FIRST LAST SOURCE')",
                 ls->name, LNO);
    } else if (strcmp(p, "unknown") == 0) {
        /* a format-1 version: no log record to restore */
    } else if (fld_i64(&p, &ns, 0) == 0 && fld_u64(&p, &adds, 0) == 0 && fld_u64(&p, &dels, 0) == 0 &&
               fld_i64(&p, &mint, 0) == 0 && fld_i64(&p, &maxt, 0) == 0 && fld_u64(&p, &fl, 0) == 0 &&
               fld_u64(&p, &ll, 0) == 0 && fld_word(&p, src, sizeof src, 1) == 0) {
        char plain[GSNAP_SOURCE_MAX + 1];
        if (unescape(src, plain, sizeof plain) || fl > ll || ns < 0)
            LOAD_ERR("%s:%llu: bad source, line range or time in the 'v' line", ls->name, LNO);
        gsnap_batch_set_source(ls->b, plain, fl, ll);
        gsnap_batch_set_commit_time(ls->b, ns);
        gsnap_batch__set_counts(ls->b, adds, dels, mint, maxt);
        ls->claim = 1;
        ls->c_adds = adds;
        ls->c_dels = dels;
        ls->c_min = mint;
        ls->c_max = maxt;
    } else {
        LOAD_ERR("%s:%llu: bad 'v' line (expected 'v VERSION NS ADDS DELETES MIN_T MAX_T FIRST LAST "
                 "SOURCE')", ls->name, LNO);
    }
    ls->vver = ver;
    if (ls->from > ls->to || ver < ls->from || ver > ls->to)
        LOAD_ERR("%s:%llu: version %llu is outside the dump's versions %llu..%llu", ls->name, LNO,
                 (unsigned long long)ver, (unsigned long long)ls->from, (unsigned long long)ls->to);
    if (ver != ls->expect)
        LOAD_ERR("%s:%llu: version %llu, but the database's next version is %llu", ls->name, LNO,
                 (unsigned long long)ver,
                 (unsigned long long)ls->expect);
    ls->expect++;
    const gsnap_load_options *opts = ls->opts;
    if (opts->progress)
        opts->progress(opts->progress_ctx, "load", ls->total_bytes ? (uint64_t)ftell(ls->f) : ver,
                       ls->total_bytes ? ls->total_bytes : ls->to);
    return 0;
}

static int load_keep(load_state *ls, const char *line) {
    gsnap_db *db = ls->db;
    unsigned k = strcmp(line + 5, "in") == 0 ? GSNAP_KEEP_IN : strcmp(line + 5, "out") == 0 ? GSNAP_KEEP_OUT
                 : strcmp(line + 5, "both") == 0 ? GSNAP_KEEP_BOTH : 0;
    if (!k) LOAD_ERR("%s:%llu: bad 'keep' line", ls->name, LNO);
    if (k == db->keep) return 0;
    if (ls->expect != 1)
        return gsnap_store__err(db, GSNAP_EINVAL, "%s:%llu: the dump keeps %s-edges, the database %s", ls->name,
                                LNO, gsnap_dump__keep_name(k), gsnap_dump__keep_name(db->keep));
    /* an empty database takes the dump's directions */
    int rc = gsnap_store__write(db, set_keep_fn, &k);
    if (rc) return rc;
    db->keep = k;
    return 0;
}

static int load_versions(load_state *ls, const char *line) {
    const char *p = line + 9;
    uint64_t a, z;
    if (ls->have_versions) /* a second one would move the range the horizon was checked against */
        LOAD_ERR("%s:%llu: a second 'versions' line", ls->name, LNO);
    if (fld_u64(&p, &a, 0) || fld_u64(&p, &z, 1) || (a > z && !(a == 1 && z == 0)))
        LOAD_ERR("%s:%llu: bad 'versions' line (expected 'versions FIRST LAST')", ls->name, LNO);
    ls->from = a;
    ls->to = z;
    ls->have_versions = 1;
    if (a <= z && a != ls->expect)
        return gsnap_store__err(ls->db, GSNAP_ERANGE, "%s:%llu: the dump holds versions %llu..%llu but the "
                                "database's next version is %llu (load a full dump into an empty database)",
                                ls->name, LNO, (unsigned long long)a, (unsigned long long)z,
                                (unsigned long long)ls->expect);
    return 0;
}

/* 'horizon VERSION TIME' (TIME '-' = none). */
static int load_horizon(load_state *ls, const char *line) {
    const char *p = line + 8;
    uint64_t h;
    int64_t ht = INT64_MIN;
    if (fld_u64(&p, &h, 0) || (strcmp(p, "-") != 0 && (fld_i64(&p, &ht, 1) || ht == GSNAP_TIME_MAX)))
        LOAD_ERR("%s:%llu: bad 'horizon' line (expected 'horizon VERSION TIME', TIME an event time or '-')",
                 ls->name, LNO);
    /* where the dump writes it: the snapshot lines and every version are
     * checked against it as they come */
    if (!ls->have_versions || ls->b || ls->rep.versions || ls->nsnaps)
        LOAD_ERR("%s:%llu: 'horizon' line out of place (it follows the 'versions' line, before the first 'v' line)",
                 ls->name, LNO);
    /* compact leaves the newest version queryable: a horizon past it would
     * refuse every query of the loaded database */
    if (h > ls->to)
        LOAD_ERR("%s:%llu: horizon version %llu is past the dump's last version %llu", ls->name, LNO,
                 (unsigned long long)h, (unsigned long long)ls->to);
    if (ls->have_horizon) LOAD_ERR("%s:%llu: a second 'horizon' line", ls->name, LNO);
    ls->horizon = h;
    ls->horizon_t = ht;
    ls->have_horizon = 1;
    /* In force from here, before any version of the dump commits: a load
     * that fails part way must not leave folded versions answering queries
     * (the loaded versions are restored under it, gsnap_batch__set_restore) */
    struct horizon_ctx hc = {h, ht};
    return gsnap_store__write(ls->db, set_horizon_fn, &hc);
}

/* HOPS comma-separated decimals in lo..hi (a snapshot line's fanouts or
 * caps) into out; 0 or -1. */
static int parse_list(const char *s, unsigned hops, uint64_t lo, uint64_t hi, uint32_t *out) {
    for (unsigned h = 0; h < hops; h++) {
        uint64_t x;
        if (gsnap_dec_u64(&s, &x) || x < lo || x > hi || *s++ != (h + 1 < hops ? ',' : '\0')) return -1;
        out[h] = (uint32_t)x;
    }
    return 0;
}

/* A snapshot line's ALPHA: a decimal number (as %.17g writes it) in
 * (0, 1e6]; 0 or -1. */
static int parse_alpha(const char *s, double *out) {
    char *e;
    if (*s < '0' || *s > '9' || s[strspn(s, "0123456789.eE+-")]) return -1;
    errno = 0;
    double a = strtod(s, &e);
    if (*e || errno || !(a > 0) || a > 1e6) return -1;
    *out = a;
    return 0;
}

/* Format 2's KIND CAPS: an exact snapshot's caps are its list cap (not
 * options). */
static int parse_kind_caps(load_state *ls, const char *kind, const char *caps, unsigned hops,
                           gsnap_snapshot_options *o) {
    uint32_t c[GSNAP_MAX_HOPS];
    if (strcmp(kind, "sampled") == 0) o->hop_sets = GSNAP_HOPSETS_SAMPLED;
    else if (strcmp(kind, "exact") == 0) o->hop_sets = GSNAP_HOPSETS_EXACT;
    else LOAD_ERR("%s:%llu: bad hop-set kind '%s' (exact or sampled)", ls->name, LNO, kind);
    if (parse_list(caps, hops, 1, GSNAP_SNAPSHOT_CAP, c))
        LOAD_ERR("%s:%llu: bad caps '%s' (HOPS values in 1..%d)", ls->name, LNO, caps, GSNAP_SNAPSHOT_CAP);
    if (o->hop_sets == GSNAP_HOPSETS_SAMPLED) memcpy(o->caps, c, hops * sizeof *c);
    return 0;
}

/* 'snapshot NAME DIR HOPS FANOUTS ALPHA AT VERSION SEED [KIND CAPS]': kept
 * to be rebuilt once every version is in. Every field is checked here, in
 * the ranges gsnap_snapshot_create and `snapshot create` take (0 is not
 * "the default": dump writes the values a snapshot was built with). */
static int load_snapshot(load_state *ls, const char *line) {
    struct pending_snap ps;
    char sdir[8], fan[256], alpha[64], at[32], kind[16], caps[256];
    const char *p = line + 9;
    uint64_t hops = 0, ver = 0, seed = 0;
    int v2 = ls->format >= 2, rc;
    gsnap_snapshot_options def = GSNAP_SNAPSHOT_OPTIONS_INIT;
    memset(&ps, 0, sizeof ps);
    ps.o = def;
    if (fld_word(&p, ps.name, 65, 0) || fld_word(&p, sdir, sizeof sdir, 0) || fld_u64(&p, &hops, 0) ||
        fld_word(&p, fan, sizeof fan, 0) || fld_word(&p, alpha, sizeof alpha, 0) || fld_word(&p, at, sizeof at, 0) ||
        fld_u64(&p, &ver, 0) || fld_u64(&p, &seed, !v2) ||
        (v2 && (fld_word(&p, kind, sizeof kind, 0) || fld_word(&p, caps, sizeof caps, 1))))
        LOAD_ERR("%s:%llu: bad 'snapshot' line (expected 'snapshot NAME DIR HOPS FANOUTS ALPHA AT VERSION SEED%s', "
                 "NAME of 1..64 bytes)", ls->name, LNO, v2 ? " KIND CAPS" : "");
    if (strcmp(sdir, "in") != 0 && strcmp(sdir, "out") != 0)
        LOAD_ERR("%s:%llu: bad snapshot direction '%s' (in or out)", ls->name, LNO, sdir);
    if (hops < 1 || hops > GSNAP_MAX_HOPS)
        LOAD_ERR("%s:%llu: snapshot hops %llu (1..%d)", ls->name, LNO, (unsigned long long)hops, GSNAP_MAX_HOPS);
    ps.o.hops = (unsigned)hops;
    if (parse_list(fan, ps.o.hops, 1, GSNAP_MAX_FANOUT, ps.o.fanouts))
        LOAD_ERR("%s:%llu: bad fanouts '%s' (HOPS values in 1..%d)", ls->name, LNO, fan, GSNAP_MAX_FANOUT);
    if (parse_alpha(alpha, &ps.o.alpha))
        LOAD_ERR("%s:%llu: bad alpha '%s' (a number in (0, 1e6])", ls->name, LNO, alpha);
    for (unsigned h = 0; h < ps.o.hops; h++)
        if (ceil(ps.o.alpha * ps.o.fanouts[h] - 1e-9) > GSNAP_MAX_CACHE_IDS)
            LOAD_ERR("%s:%llu: hop %u: cached list of alpha %g * fanout %u ids, the limit is %d (GSNAP_MAX_CACHE_IDS)",
                     ls->name, LNO, h + 1, ps.o.alpha, (unsigned)ps.o.fanouts[h], GSNAP_MAX_CACHE_IDS);
    if (strcmp(at, "now") == 0) {
        ps.o.at_t = GSNAP_TIME_MAX;
    } else {
        const char *q = at;
        if (fld_i64(&q, &ps.o.at_t, 1))
            LOAD_ERR("%s:%llu: bad snapshot time '%s' (an event time or 'now')", ls->name, LNO, at);
    }
    if (!ls->have_versions || ver < ls->from || ver > ls->to)
        LOAD_ERR("%s:%llu: snapshot version %llu is not one of the dumped versions %llu..%llu", ls->name, LNO,
                 (unsigned long long)ver, (unsigned long long)ls->from, (unsigned long long)ls->to);
    if (v2 && (rc = parse_kind_caps(ls, kind, caps, ps.o.hops, &ps.o))) return rc;
    ps.o.as_of = ver;
    ps.o.dir = strcmp(sdir, "out") == 0 ? GSNAP_DIR_OUT : GSNAP_DIR_IN;
    ps.o.seed = seed;
    ps.line = ls->lineno;
    /* dump leaves out the snapshots before the retention horizon (their
     * events were folded): one here cannot be rebuilt */
    if (ls->have_horizon && ((ls->horizon > 1 && ps.o.as_of < ls->horizon) ||
                             (ls->horizon_t != INT64_MIN && ps.o.at_t < ls->horizon_t)))
        LOAD_ERR("%s:%llu: snapshot '%s' (version %llu, time %lld) is before the retention horizon (version %llu, "
                 "time %lld): its events were folded, it cannot be rebuilt", ls->name, LNO, ps.name,
                 (unsigned long long)ps.o.as_of, (long long)ps.o.at_t, (unsigned long long)ls->horizon,
                 (long long)ls->horizon_t);
    struct pending_snap *ns2 = realloc(ls->snaps, (ls->nsnaps + 1) * sizeof *ns2);
    if (!ns2) return GSNAP_ENOMEM;
    ls->snaps = ns2;
    ls->snaps[ls->nsnaps++] = ps;
    return 0;
}

/* 'end VERSIONS EVENTS SNAPSHOTS [ATTR_LINES]': commits the last version and
 * checks the counts. */
static int load_end(load_state *ls, const char *line) {
    const char *p = line + 4;
    uint64_t nv, ne, nsn, nx = 0;
    int rc, v2 = ls->format >= 2;
    if (fld_u64(&p, &nv, 0) || fld_u64(&p, &ne, 0) || fld_u64(&p, &nsn, !v2) || (v2 && fld_u64(&p, &nx, 1)))
        LOAD_ERR("%s:%llu: bad 'end' line (expected 'end VERSIONS EVENTS SNAPSHOTS%s')", ls->name, LNO,
                 ls->format >= 2 ? " ATTR_LINES" : "");
    if ((rc = commit_version(ls))) return rc;
    if (ne != ls->events || nv != ls->rep.versions || nsn != ls->nsnaps || nx != ls->xlines)
        LOAD_ERR("%s:%llu: the dump says %llu versions, %llu events, %llu snapshots and %llu attribute lines; "
                 "%llu, %llu, %llu and %llu were read", ls->name, LNO, (unsigned long long)nv,
                 (unsigned long long)ne, (unsigned long long)nsn, (unsigned long long)nx,
                 (unsigned long long)ls->rep.versions, (unsigned long long)ls->events,
                 (unsigned long long)ls->nsnaps, (unsigned long long)ls->xlines);
    ls->ended = 1;
    return 0;
}

/* One line (without its newline), dispatched on its first word. */
static int load_line(load_state *ls, char *line) {
    if (ls->ended) LOAD_ERR("%s:%llu: text after the 'end' line", ls->name, LNO);
    if (!ls->header) return load_header(ls, line);
    char c0 = line[0];
    if ((c0 == 'a' || c0 == 'd') && line[1] == ' ') return load_event(ls, line);
    if (ls->format >= 2 && ls->ext && ls->ext->load_line) {
        /* the extensions' lines (attribute tables and rows) */
        int xr = ls->ext->load_line(ls->db, &ls->xstate, ls->b, line, ls->name, ls->lineno, &ls->xlines);
        if (xr <= 0) return xr;
    }
    int is_v = c0 == 'v' && line[1] == ' ';
    if (ls->b && !is_v && strncmp(line, "end ", 4) != 0 && strncmp(line, "snapshot ", 9) != 0)
        LOAD_ERR("%s:%llu: unexpected line '%.40s'", ls->name, LNO, line);
    if (is_v) return load_version(ls, line);
    if (strncmp(line, "keep ", 5) == 0) return load_keep(ls, line);
    if (strncmp(line, "store-format ", 13) == 0 || line[0] == '#') return 0;
    if (strncmp(line, "versions ", 9) == 0) return load_versions(ls, line);
    if (strncmp(line, "horizon ", 8) == 0) return load_horizon(ls, line);
    if (strncmp(line, "snapshot ", 9) == 0) return load_snapshot(ls, line);
    if (strncmp(line, "end ", 4) == 0) return load_end(ls, line);
    LOAD_ERR("%s:%llu: unexpected line '%.40s'", ls->name, LNO, line);
}

/* After the last line: the counts, then the snapshots and the horizon. */
static int load_finish(load_state *ls) {
    gsnap_db *db = ls->db;
    const char *name = ls->name;
    int rc;
    if (ferror(ls->f))
        return gsnap_store__err(db, GSNAP_EIO, "%s: read error after line %llu: %s", name, LNO, strerror(errno));
    if (!ls->ended) LOAD_ERR("%s:%llu: the dump ends without its 'end' line (truncated?)", name, LNO);
    if (ls->from <= ls->to && ls->rep.versions != ls->to - ls->from + 1)
        LOAD_ERR("%s: the 'versions' line says %llu..%llu, but %llu versions were read", name,
                 (unsigned long long)ls->from, (unsigned long long)ls->to, (unsigned long long)ls->rep.versions);
    ls->rep.events = ls->events;
    /* The snapshots (none before the horizon: load_snapshot refused
     * those). */
    for (size_t i = 0; i < ls->nsnaps && !ls->opts->no_snapshots; i++) {
        const struct pending_snap *ps = &ls->snaps[i];
        if (ls->opts->progress) ls->opts->progress(ls->opts->progress_ctx, "snapshots", i, ls->nsnaps);
        rc = gsnap_snapshot_create(db, ps->name, &ps->o, NULL);
        if (rc) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", gsnap_db_errmsg(db));
            return gsnap_store__err(db, rc, "%s:%llu: rebuilding snapshot '%s': %s", name,
                                    (unsigned long long)ps->line, ps->name, msg);
        }
        ls->rep.snapshots++;
    }
    /* (the horizon was set at its line, load_horizon) A bulk load may run with GSNAP_SYNC_NONE: make it durable once, here
     * (under a map hold: a shrink cannot close the environment meanwhile). */
    if ((rc = gsnap_store__map_hold(db))) return rc;
    rc = gsnap_store__mdb_err(db, mdb_env_sync(db->env, 1), "syncing the loaded database");
    gsnap_store__map_release(db);
    return rc;
}

int gsnap_store__load(gsnap_db *db, FILE *f, const char *name, const gsnap_load_options *opts,
                      gsnap_load_report *report, const gsnap_dump_ext_ops *ext) {
    static const gsnap_load_options defaults = GSNAP_LOAD_OPTIONS_INIT;
    if (!db || db->magic != GSNAP_DB_MAGIC || !f) return GSNAP_EINVAL;
    if (!opts) opts = &defaults;
    if (opts->version != GSNAP_LOAD_OPTIONS_VERSION)
        return gsnap_store__err(db, GSNAP_EINVAL, "gsnap_db_load: options version %u not supported", opts->version);
    load_state ls;
    memset(&ls, 0, sizeof ls);
    ls.db = db;
    ls.f = f;
    ls.name = name ? name : "-";
    ls.opts = opts;
    ls.ext = ext;
    ls.horizon_t = INT64_MIN;
    double t0 = gsnap_now();
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int rc = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) ls.total_bytes = (uint64_t)st.st_size;
    if ((rc = gsnap_db_version(db, &ls.expect))) goto out;
    ls.expect++;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        ls.lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        const char *nul = memchr(line, 0, (size_t)len);
        if (nul) { /* the line would be cut short there: no line of a dump holds one */
            rc = gsnap_store__err(db, GSNAP_EPARSE, "%s:%llu: a NUL byte at column %zu", ls.name,
                                  (unsigned long long)ls.lineno, (size_t)(nul - line) + 1);
            goto out;
        }
        if ((rc = load_line(&ls, line))) goto out;
    }
    rc = load_finish(&ls);
out:
    if (ls.b) gsnap_batch_abort(ls.b);
    if (ext && ext->load_end) ext->load_end(ls.xstate);
    free(line);
    free(ls.snaps);
    ls.rep.events = ls.events;
    ls.rep.seconds = gsnap_now() - t0;
    if (report) *report = ls.rep;
    return rc;
}
