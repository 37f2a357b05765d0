/*
 * store/store.h -- the store module's interface to the other modules of the
 * library (snapshot/, sampler/, cli/ helpers). Not installed, not public.
 *
 * Data flows store -> snapshot -> sampler; this header is how the modules
 * above reach the store: the LMDB environment, named tables of their own
 * inside it, write transactions that survive map growth, whole-graph scans
 * at (T, V), and the per-version log of touched nodes (for staleness).
 */
#ifndef GSNAP_STORE_H
#define GSNAP_STORE_H

#include "graphsnap.h"
#include "common/common.h"
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>

/* ---- errors -------------------------------------------------------------- */

/** Record `code` with a printf-style detail message on db; returns code. */
int gsnap_store__err(gsnap_db *db, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** Map an LMDB/errno return code to a GSNAP_E* code, recording a message
 *  "<what>: <mdb_strerror>" on db. MDB_NOTFOUND maps to GSNAP_NOTFOUND
 *  (no message). 0 maps to 0. */
int gsnap_store__mdb_err(gsnap_db *db, int rc, const char *what);

/* ---- environment and tables ---------------------------------------------- */

/** The LMDB environment of the database (valid while db is open and no
 * gsnap_db_shrink swaps it: use it under a map hold, a read view or a
 * write txn of this store). */
MDB_env *gsnap_store__env(gsnap_db *db);

/** Smallest txn id among the environment's live readers, dead readers'
 * slots cleared first (UINT64_MAX when none; 0 when the map is lost).
 * Takes a map hold, so a shrink cannot close the environment under it. */
uint64_t gsnap_store__oldest_reader(gsnap_db *db);

/** Flags the store was opened with. */
unsigned gsnap_store__keep(const gsnap_db *db);
int gsnap_store__read_only(const gsnap_db *db);

/** Open (creating if `create` and the db is writable) the named LMDB table
 *  `name` (must not start with "gs." which the store reserves) with LMDB
 *  flags `flags` (e.g. MDB_INTEGERKEY). The handle is cached per db and name.
 *  GSNAP_NOTFOUND if it does not exist and !create. */
int gsnap_store__table(gsnap_db *db, const char *name, unsigned flags, int create,
                       MDB_dbi *out);

/** mdb_get that trusts a "not found" only after checking the B-tree around
 *  the key: the key after it must be greater and the key before it smaller.
 *  A damaged branch page can send LMDB's search to the wrong leaf, and a
 *  plain mdb_get then reports an existing key as absent (a wrong, empty
 *  answer); this turns that into GSNAP_ECORRUPT. The table's keys must all
 *  have the size of `key` (a neighbour of another size is corruption too).
 *  Returns 0 (found),
 *  GSNAP_NOTFOUND (verified absent) or an error with a message naming `what`. */
int gsnap_store__get(gsnap_db *db, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                     const char *what);

/** A write transaction body. It may be called more than once: when the map
 *  is full the transaction is aborted, the map is grown and `fn` is called
 *  again in a fresh transaction, so `fn` must derive everything it writes from
 *  `ctx` and the txn, and must not free `ctx` state it needs on retry.
 *  Return 0 to commit, anything else to abort (that value is returned). */
typedef int (*gsnap_write_fn)(gsnap_db *db, MDB_txn *txn, void *ctx);

/** Run `fn` in one LMDB write transaction and commit it (durably when the
 *  db's sync mode is FULL). Handles MDB_MAP_FULL by growing the map and
 *  retrying, MDB_MAP_RESIZED by adopting the new size. Returns fn's error,
 *  or GSNAP_ENOSPC / GSNAP_EIO / GSNAP_ELMDB from LMDB. */
int gsnap_store__write(gsnap_db *db, gsnap_write_fn fn, void *ctx);

/** The LMDB read transaction of a view (valid until gsnap_read_end). */
MDB_txn *gsnap_read__txn(gsnap_read *rd);

/** Delete events committed up to the view's version (gs.meta's count; it
 * never goes down). */
uint64_t gsnap_read__deletes(const gsnap_read *rd);

/** Begin a read view if `rd` is NULL (then *owned is set to 1 and the caller
 *  ends it with gsnap_read_end), else use `rd` (*owned = 0). */
int gsnap_read__use(gsnap_db *db, gsnap_read *rd, gsnap_read **out, int *owned);

/* ---- batch extensions ------------------------------------------------------ */

/** Write work a module above the store (features/) attaches to an open batch,
 *  so that its rows commit in the batch's write txn, atomically with the
 *  edges. The store knows nothing of what the module writes: `commit` runs
 *  inside the txn after the edge run and meta are written, with the new
 *  version; like a gsnap_write_fn it may run more than once (map growth), so
 *  it must derive everything from `state`. `release` frees `state` when the
 *  batch ends (commit, abort or failure). A batch with an extension commits
 *  a version even when it holds no edges (an empty run). */
typedef struct {
    int (*commit)(gsnap_db *db, MDB_txn *txn, uint64_t version, void *state);
    void (*release)(void *state);
} gsnap_batch_ext_ops;

/** Find the state attached to `b` for `ops` (*state = NULL when none).
 *  GSNAP_EINVAL for a bad handle, GSNAP_ESTATE when the batch has failed. */
int gsnap_batch__ext(gsnap_batch *b, const gsnap_batch_ext_ops *ops, void **state);
/** Attach `state` for `ops` (at most one per ops, 4 in all: GSNAP_EBUSY). */
int gsnap_batch__ext_attach(gsnap_batch *b, const gsnap_batch_ext_ops *ops, void *state);
/** The database of a batch. */
gsnap_db *gsnap_batch__db(gsnap_batch *b);
/** Mark the batch failed (e.g. out of memory buffering): commit then fails. */
void gsnap_batch__fail(gsnap_batch *b);

/** Events buffered and sorted away from any open batch, so that a producer
 *  thread can parse and sort batch i+1 while batch i commits (ingest/). A
 *  prep is used by one thread at a time; prep_sort reads only db's keep
 *  flags (fixed at open). prep_push: 0, GSNAP_ENOMEM, GSNAP_ERANGE (t is
 *  GSNAP_TIME_MAX), no message. adopt moves p's events (and its sort, when
 *  p was sorted since its last push) into the open, empty batch b and
 *  leaves p empty for reuse; b then commits like a batch built by adds. */
typedef struct gsnap_batch_prep gsnap_batch_prep;
int gsnap_batch__prep_new(gsnap_batch_prep **out);
void gsnap_batch__prep_free(gsnap_batch_prep *p);
int gsnap_batch__prep_push(gsnap_batch_prep *p, uint64_t src, uint64_t dst, int64_t t, int del);
size_t gsnap_batch__prep_size(const gsnap_batch_prep *p);
int gsnap_batch__prep_sort(gsnap_batch_prep *p, const gsnap_db *db);
int gsnap_batch__adopt(gsnap_batch *b, gsnap_batch_prep *p);

/* ---- dump / load extensions ------------------------------------------------ */

/** Sections a module above the store adds to the dump text format (format 2;
 *  docs/format.md): store/dump.c writes and parses the events, version log
 *  and snapshots and knows nothing of the module's lines. The public
 *  gsnap_db_dump / gsnap_db_load (features/dump_attr.c, the layer above
 *  both) pass the hooks of the modules they know about.
 *  Dump: `dump_begin` runs once inside the dump's read view (rd) after the
 *  header lines, may write its own header lines and keeps what it needs in
 *  *state; `dump_version` writes version v's lines (after its events) and
 *  adds their number to *lines (counted in the 'end' line); `dump_end` frees
 *  state (also on failure; state may be NULL).
 *  Load: `load_line` gets each line the store does not know, with the batch
 *  of the current version (NULL before the first 'v' line), the input's
 *  name and line number for messages; it returns 1 when the line is not
 *  its own, 0 when taken (*lines += 1 for lines counted in 'end', as
 *  dump_version counts them), or a
 *  GSNAP_E* code with the detail set (GSNAP_EPARSE naming name:line).
 *  `load_commit` runs just before a version's batch is committed (to hand
 *  buffered rows to the batch); `load_end` frees the load state (may be NULL). */
typedef struct {
    int (*dump_begin)(gsnap_db *db, gsnap_read *rd, uint64_t from, uint64_t to, FILE *f, void **state);
    int (*dump_version)(void *state, FILE *f, uint64_t version, uint64_t *lines);
    void (*dump_end)(void *state);
    int (*load_line)(gsnap_db *db, void **state, gsnap_batch *b, const char *line, const char *name,
                     uint64_t lineno, uint64_t *lines);
    int (*load_commit)(gsnap_db *db, void *state, gsnap_batch *b); /* before each version's commit */
    void (*load_end)(void *state);
} gsnap_dump_ext_ops;

/** The store's dump / load with extension hooks (ext may be NULL: events,
 *  log and snapshots only). Same contracts as gsnap_db_dump / gsnap_db_load. */
int gsnap_store__dump(gsnap_db *db, FILE *f, const gsnap_dump_options *opts, const gsnap_dump_ext_ops *ext);
int gsnap_store__load(gsnap_db *db, FILE *f, const char *name, const gsnap_load_options *opts,
                      gsnap_load_report *report, const gsnap_dump_ext_ops *ext);

/** Write a compact copy of the whole LMDB environment (a consistent
 *  snapshot of one read txn, free pages left out) to `fd` and fsync it.
 *  Runs while other txns go on. */
int gsnap_store__copy_fd(gsnap_db *db, int fd);

/* ---- whole-graph scans ---------------------------------------------------- */

/** Called once per node that has at least one live instance at (T, V), in
 *  ascending node order, with its live instances in (neighbour, t) order.
 *  `nbrs` is valid only during the call. Return 0 to go on, non-zero to stop
 *  (the scan returns that value). */
/** The distinct neighbour ids of a neighbour-ordered list (as
 *  gsnap_neighbors and scans deliver it) into out[0..n); returns how many.
 *  out may not alias nb. */
size_t gsnap_store__distinct_ids(const gsnap_nbr *nb, size_t n, uint64_t *out);

/** The distinct neighbour ids (ascending) of `node`'s live instances at
 *  (at_t, as_of) in view rd (not NULL): the same set as gsnap_neighbors
 *  followed by gsnap_store__distinct_ids, without materializing the
 *  instances when no record in range is a delete (then each run's ids are
 *  taken straight from its records and merged). *ids points into the view's
 *  scratch, valid until the next query on rd. */
int gsnap_store__distinct_nbrs(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir, int64_t at_t,
                               uint64_t as_of, const uint64_t **ids, size_t *n);

/** Prepare view rd (not NULL) for many point reads: build now the
 *  in-memory indexes of its chunked runs that a reading process otherwise
 *  builds once its seeks add up (fence indexes, held copies within
 *  gsnap_db_options.read_cache_bytes, the run mask; store/fence.c), and let
 *  rd use them. Changes no answer. Costs one verified pass over the runs
 *  without an index (none when the commits of this process built them); a
 *  call while another thread builds returns at once. dir is the direction
 *  the reads will ask (GSNAP_DIR_IN or GSNAP_DIR_OUT): the process notes it
 *  as read, so that held copies, the run mask and the commits' warm step
 *  cover it (a direction never read gets none of them). */
void gsnap_store__index_runs(gsnap_db *db, gsnap_read *rd, gsnap_dir dir);

/** What gsnap_store__distinct_nbrs answers from in view rd (not NULL) at
 *  (at_t, as_of), as one number: the runs the view reads at as_of (their
 *  ids: never reused, and a run never changes), the retention horizon,
 *  and (at_t, as_of) when a run is read through the filter (versions past
 *  as_of, events past at_t, deletes to replay). Two views with the same
 *  non-zero key give the same answer for every node: a caller may keep
 *  answers under the key. *key = 0 when the read is before the retention
 *  horizon (the answers are errors). O(runs). */
int gsnap_store__answer_key(gsnap_read *rd, gsnap_dir dir, int64_t at_t, uint64_t as_of, uint64_t *key);

typedef int (*gsnap_adj_fn)(void *ctx, uint64_t node, const gsnap_nbr *nbrs, size_t n);

/** Visit the whole graph in direction `dir` at (at_t, as_of), in one read
 *  view. Streams: memory is O(largest adjacency + runs * chunk). */
int gsnap_store__scan(gsnap_db *db, gsnap_read *rd, gsnap_dir dir, int64_t at_t,
                      uint64_t as_of, gsnap_adj_fn fn, void *ctx);

/** Nodes whose `dir` adjacency received an event in versions
 *  (after, upto], sorted and unique. *nodes is freed with gsnap_free.
 *  (For IN these are destination nodes; for OUT, source nodes.) */
int gsnap_store__changed_nodes(gsnap_db *db, gsnap_read *rd, gsnap_dir dir,
                               uint64_t after, uint64_t upto, uint64_t **nodes,
                               size_t *n);

/** Largest node id ever seen (+1), i.e. an upper bound for dense node arrays;
 *  0 for an empty store. */
int gsnap_store__node_bound(gsnap_db *db, gsnap_read *rd, uint64_t *bound);

/* ---- raw events (store/events.c: the temporal sampler, event streams) ---- */

/** One raw record of a node's adjacency: an add or a delete event. */
typedef struct {
    uint64_t nbr;     /* the other end (src for IN, dst for OUT) */
    int64_t t;        /* event time */
    uint64_t version; /* version that committed it */
    uint32_t del;     /* 1: delete event, 0: add */
    uint32_t pad;
} gsnap_store_ev;

/** All events (adds and deletes, every time) of `node` in `dir` committed in
 *  versions (after, as_of], in (nbr, t, version, batch order) order, into
 *  the caller's growable array *out (capacity *cap, both updated; free with
 *  free()). Runs holding only versions <= after are not read (after = 0:
 *  the whole history). GSNAP_ERANGE when as_of is before the retention
 *  horizon (the history there was folded). O(R log C + d log d). */
int gsnap_store__node_raw(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                          uint64_t after, uint64_t as_of, gsnap_store_ev **out, size_t *n,
                          size_t *cap);

/** Called once per node with at least one event at version <= as_of, in
 *  ascending node order, with its events in (nbr, t, version, batch order)
 *  order (valid during the call). Non-zero stops the scan (returned). */
typedef int (*gsnap_raw_fn)(void *ctx, uint64_t node, const gsnap_store_ev *ev, size_t n);

/** Visit every event of direction `dir` at version <= as_of in view `rd`
 *  (required). Streams; checksums verified. GSNAP_ERANGE when as_of is
 *  before the retention horizon. */
int gsnap_store__scan_raw(gsnap_db *db, gsnap_read *rd, gsnap_dir dir, uint64_t as_of,
                          gsnap_raw_fn fn, void *ctx);

#endif
