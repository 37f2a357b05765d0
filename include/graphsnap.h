/*
 * graphsnap.h -- public API of libgraphsnap.
 *
 * graphsnap is an embedded storage engine for dynamic, temporal graphs:
 *   - store:    durable, versioned temporal edge store with point-in-time queries
 *   - snapshot: SEMHS slab files + versioned (hop, node) cache tables
 *   - sampler:  GraphSDSampler mini-batch neighbour sampling, GPU staging
 *
 * Conventions (apply to every function below unless it says otherwise):
 *   - Return value: 0 (GSNAP_OK) on success, a negative GSNAP_E* code on
 *     failure; GSNAP_NOTFOUND is a normal answer, not a failure.
 *     gsnap_strerror() names a code; gsnap_db_errmsg() gives the detail of the
 *     last failure on a database handle.
 *   - Handles are opaque. Constructors return through an out-parameter and
 *     leave it NULL on failure. Destructors accept NULL.
 *   - Memory returned by the library is owned by the library unless the
 *     function says the caller frees it (then with gsnap_free()).
 *   - Threading: a gsnap_db handle may be used from several threads for
 *     reads (each thread its own gsnap_read, or NULL for one-off reads).
 *     Only one gsnap_batch may be open per handle at a time; LMDB serialises
 *     writers across processes.
 *
 * This header compiles as C99 and as C++.
 */
#ifndef GRAPHSNAP_H
#define GRAPHSNAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------- */
#define GSNAP_VERSION_MAJOR 0
#define GSNAP_VERSION_MINOR 1
#define GSNAP_VERSION_PATCH 0
#define GSNAP_VERSION_STRING "0.1.0"

/** Runtime library version, e.g. "0.1.0". Static string. */
const char *gsnap_version(void);
/** Runtime library version as major*10000 + minor*100 + patch. */
int gsnap_version_number(void);

/* ---------------------------------------------------------------------------
 * Errors: 0 is OK; failures are negative, in the band [-31999, -31900].
 * ------------------------------------------------------------------------- */
#define GSNAP_OK 0
#define GSNAP_NOTFOUND (-31900)  /* no such key / node / snapshot: a normal answer */
#define GSNAP_EINVAL (-31901)    /* bad argument (the detail message names it) */
#define GSNAP_ENOMEM (-31902)    /* out of memory */
#define GSNAP_EIO (-31903)       /* I/O error from the OS */
#define GSNAP_ECORRUPT (-31904)  /* on-disk data fails a structural check */
#define GSNAP_ECHECKSUM (-31905) /* a block or record fails its XXH3 checksum */
#define GSNAP_EFORMAT (-31906)   /* on-disk format version not supported */
#define GSNAP_EPARSE (-31907)    /* malformed input text (file and line in detail) */
#define GSNAP_ESTATE (-31908)    /* call not valid in this state (e.g. batch failed) */
#define GSNAP_EBUSY (-31909)     /* resource busy (readers full, batch already open) */
#define GSNAP_ENOSPC (-31910)    /* file system full or file size limit reached */
#define GSNAP_EACCES (-31911)    /* permission denied / read-only database */
#define GSNAP_EEXIST (-31912)    /* already exists */
#define GSNAP_ENOTSUP (-31913)   /* not supported in this build or on this machine */
#define GSNAP_ERANGE (-31914)    /* value out of range */
#define GSNAP_ELMDB (-31915)     /* unexpected LMDB error (detail has mdb_strerror) */

/** Static, human-readable name of an error code (never NULL). */
const char *gsnap_strerror(int code);

/** Free memory that a function documents as "free with gsnap_free". NULL ok. */
void gsnap_free(void *p);

/* ---------------------------------------------------------------------------
 * Common types
 * ------------------------------------------------------------------------- */
typedef struct gsnap_db gsnap_db;       /* an open database directory */
typedef struct gsnap_batch gsnap_batch; /* an ingest batch being built */
typedef struct gsnap_read gsnap_read;   /* a consistent read view (LMDB read txn) */

/** Edge direction as seen from a node. IN: edges u -> v answered for v
 *  (what GNN sampling uses by default, as in DGL). OUT: edges v -> w. */
typedef enum { GSNAP_DIR_IN = 0, GSNAP_DIR_OUT = 1 } gsnap_dir;

/** "Now": the largest event time. */
#define GSNAP_TIME_MAX INT64_MAX
/** "Latest": the newest committed version. */
#define GSNAP_VERSION_LATEST UINT64_MAX

/* ---------------------------------------------------------------------------
 * Database
 * ------------------------------------------------------------------------- */

/** Which directions the store keeps. A query in a direction not kept
 *  returns GSNAP_ENOTSUP. */
#define GSNAP_KEEP_IN 1u
#define GSNAP_KEEP_OUT 2u
#define GSNAP_KEEP_BOTH 3u

/** Durability of a commit. FULL: fsync before gsnap_batch_commit returns
 *  (survives power loss). NONE: no fsync (survives a process crash, not an
 *  OS crash; for bulk loads and tests). */
typedef enum { GSNAP_SYNC_FULL = 0, GSNAP_SYNC_NONE = 1 } gsnap_sync_mode;

#define GSNAP_DB_OPTIONS_VERSION 1
typedef struct {
    unsigned version;         /* GSNAP_DB_OPTIONS_VERSION */
    unsigned keep;            /* GSNAP_KEEP_*; used when creating, ignored on open */
    gsnap_sync_mode sync;     /* durability of commits */
    size_t map_size;          /* initial LMDB map size in bytes; 0 = 64 MiB. It grows
                                 by itself (doubling) when full. */
    int read_only;            /* open without write access; no batches allowed */
    unsigned max_readers;     /* LMDB reader slots; 0 = 126 */
    int create;               /* create the directory and database if missing */
} gsnap_db_options;
#define GSNAP_DB_OPTIONS_INIT {GSNAP_DB_OPTIONS_VERSION, GSNAP_KEEP_BOTH, GSNAP_SYNC_FULL, 0, 0, 0, 1}

/**
 * Open (and, with opts->create, create) the database in directory `path`.
 * opts may be NULL for the defaults (GSNAP_DB_OPTIONS_INIT).
 * On open, stale LMDB reader slots of dead processes are cleared
 * (mdb_reader_check) and the on-disk format version is checked.
 * Returns GSNAP_OK, GSNAP_NOTFOUND (no database and !create), GSNAP_EFORMAT
 * (written by an incompatible version), GSNAP_EACCES, GSNAP_ENOSPC, GSNAP_EIO,
 * GSNAP_EINVAL. On failure *out is NULL; a message for the failure is
 * available through gsnap_last_open_error() in the calling thread.
 * Several processes may open the same directory at once.
 */
int gsnap_db_open(const char *path, const gsnap_db_options *opts, gsnap_db **out);

/** Detail of the last gsnap_db_open failure in this thread (static buffer). */
const char *gsnap_last_open_error(void);

/** Close the database. Any open batch is aborted. All gsnap_read views
 *  and derived handles must have been closed first. NULL is fine. */
void gsnap_db_close(gsnap_db *db);

/** Detail message of the last failure on this handle (never NULL; "" when
 *  none). Valid until the next call on the handle from the same thread. */
const char *gsnap_db_errmsg(const gsnap_db *db);

/** Path of the database directory (owned by db). */
const char *gsnap_db_path(const gsnap_db *db);

/** Newest committed version (0 for an empty database). O(1). */
int gsnap_db_version(gsnap_db *db, uint64_t *version);

typedef struct {
    uint64_t version;        /* newest committed version */
    uint64_t edge_records;   /* add + delete events ever committed */
    uint64_t deletes;        /* delete events among them */
    uint64_t runs;           /* sorted runs currently in the store (LSM) */
    uint64_t map_size;       /* current LMDB map size */
    uint64_t file_bytes;     /* size of the data file on disk */
    uint64_t used_bytes;     /* bytes of pages in use (excluding free pages) */
    int64_t min_t, max_t;    /* range of event times (0,0 when empty) */
    unsigned keep;           /* GSNAP_KEEP_* */
    unsigned format_version; /* on-disk store format */
} gsnap_db_stat;

/** Fill *st. O(number of runs). */
int gsnap_db_stats(gsnap_db *db, gsnap_db_stat *st);

/** Merge all sorted runs into one (what background compaction converges to).
 *  One write transaction; readers are not blocked. Optional: queries are
 *  correct without it, somewhat faster after it. */
int gsnap_db_compact(gsnap_db *db);

/* ---------------------------------------------------------------------------
 * Ingest batches. A batch is built in memory and committed in one LMDB write
 * transaction: atomic (all or nothing) and, with GSNAP_SYNC_FULL, durable
 * when gsnap_batch_commit returns. Each committed batch gets the next version.
 *
 * Semantics of edges: an event is (src, dst, t, op) with op add or delete.
 * The edge (u, v) is a multi-edge: each add creates one instance. Events of
 * one pair are replayed in order of (t, version, position in batch); an add
 * creates an instance, a delete removes the oldest live instance of the pair
 * (none: the delete has no effect). neighbors(v, T, V) replays the events with
 * t <= T in versions <= V and answers the live instances.
 * ------------------------------------------------------------------------- */

/** Start a batch. GSNAP_EBUSY if this handle already has one open,
 *  GSNAP_EACCES if the database is read-only. */
int gsnap_batch_begin(gsnap_db *db, gsnap_batch **out);

/** Add the edge instance src -> dst at event time t. O(1) amortised
 *  (buffered in memory). t must not be GSNAP_TIME_MAX (reserved). */
int gsnap_batch_add(gsnap_batch *b, uint64_t src, uint64_t dst, int64_t t);

/** Delete one instance of src -> dst at event time t (see semantics above). */
int gsnap_batch_delete(gsnap_batch *b, uint64_t src, uint64_t dst, int64_t t);

/** Number of events buffered in the batch. */
size_t gsnap_batch_size(const gsnap_batch *b);

/**
 * Commit the batch: sort it, write it as a new sorted run, merge runs when a
 * level is full, record the version, sync. On success *version (may be NULL)
 * receives the new version. The batch is freed in every case.
 * An empty batch commits nothing and returns the current version.
 * Grows the LMDB map as needed; GSNAP_ENOSPC when the disk is full (nothing
 * of the batch is visible then, earlier versions are intact).
 * Complexity: O(n log n) for n events, plus amortised O(log_4(batches)) merge
 * work per event.
 */
int gsnap_batch_commit(gsnap_batch *b, uint64_t *version);

/** Drop the batch; nothing is written. NULL is fine. */
void gsnap_batch_abort(gsnap_batch *b);

/* ---------------------------------------------------------------------------
 * Reads
 * ------------------------------------------------------------------------- */

/** Open a consistent read view (an LMDB read transaction): every query made
 *  through it sees the same committed versions. Keep views short-lived: an
 *  open view pins old pages. Per thread; not to be shared between threads.
 *  Every query takes a `gsnap_read *rd` that may be NULL, in which case the
 *  query uses its own short view. */
int gsnap_read_begin(gsnap_db *db, gsnap_read **out);
/** The newest version visible in this view. */
uint64_t gsnap_read_version(const gsnap_read *rd);
/** End the view. NULL is fine. */
void gsnap_read_end(gsnap_read *rd);

/** One live edge instance seen from a node. */
typedef struct {
    uint64_t node;    /* the neighbour (src for IN, dst for OUT) */
    int64_t t;        /* event time of the add that created the instance */
    uint64_t version; /* version that committed the add */
} gsnap_nbr;

/**
 * Point-in-time neighbours of `node` in direction `dir`, at event time `at_t`
 * (GSNAP_TIME_MAX = now) as of version `as_of` (GSNAP_VERSION_LATEST = newest
 * in the view). Answers the live instances in order of (neighbour, t).
 * Fills buf with up to `cap` entries and sets *count to the total number; when
 * *count > cap the caller may retry with a larger buffer (buf may be NULL when
 * cap is 0). A node with no edges answers count 0 and GSNAP_OK.
 * Complexity: O(R log C + d log d) for R runs, chunk size C, d events of node.
 */
int gsnap_neighbors(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                    int64_t at_t, uint64_t as_of, gsnap_nbr *buf, size_t cap,
                    size_t *count);

/** Number of live instances (the degree counting multi-edges) at (at_t, as_of). */
int gsnap_degree(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                 int64_t at_t, uint64_t as_of, uint64_t *degree);

/** Iterator over the same answer as gsnap_neighbors. */
typedef struct gsnap_nbr_iter gsnap_nbr_iter;
int gsnap_nbr_iter_open(gsnap_db *db, gsnap_read *rd, uint64_t node, gsnap_dir dir,
                        int64_t at_t, uint64_t as_of, gsnap_nbr_iter **out);
/** Next neighbour: GSNAP_OK with *out filled, or GSNAP_NOTFOUND at the end. */
int gsnap_nbr_iter_next(gsnap_nbr_iter *it, gsnap_nbr *out);
void gsnap_nbr_iter_close(gsnap_nbr_iter *it);

/* ---------------------------------------------------------------------------
 * Text ingest (the parser behind `graphsnap ingest`).
 * Lines: "src dst [t] [op]" separated by tabs, commas or spaces; lines
 * starting with '#' or '%' and blank lines are skipped; op is "add"/"a"/"+"/1
 * or "del"/"delete"/"d"/"-"/0 (default add); t defaults to the line number.
 * ------------------------------------------------------------------------- */
#define GSNAP_INGEST_OPTIONS_VERSION 1
typedef struct {
    unsigned version;     /* GSNAP_INGEST_OPTIONS_VERSION */
    size_t batch_edges;   /* events per committed batch; 0 = 100000 */
    int skip_bad;         /* count and skip malformed lines instead of failing */
    /* optional progress callback, called after each commit */
    void (*progress)(void *ctx, uint64_t lines, uint64_t events, uint64_t version);
    void *progress_ctx;
} gsnap_ingest_options;
#define GSNAP_INGEST_OPTIONS_INIT {GSNAP_INGEST_OPTIONS_VERSION, 0, 0, NULL, NULL}

typedef struct {
    uint64_t lines;          /* lines read */
    uint64_t events;         /* events committed */
    uint64_t bad_lines;      /* lines skipped (skip_bad) */
    uint64_t first_bad_line; /* line number of the first bad line, 0 if none */
    uint64_t batches;        /* batches committed */
    uint64_t first_version, last_version; /* versions committed (0 if none) */
    double seconds;          /* wall time */
} gsnap_ingest_report;

/**
 * Parse one line of text into an event. Returns GSNAP_OK (event filled),
 * GSNAP_NOTFOUND (comment or blank line), or GSNAP_EPARSE with a message of at
 * most `errlen` bytes in `err` saying what is wrong (column, text).
 * `line_no` provides the default time. Pure function; safe to fuzz.
 */
int gsnap_parse_edge_line(const char *line, size_t len, uint64_t line_no,
                          uint64_t *src, uint64_t *dst, int64_t *t, int *is_delete,
                          char *err, size_t errlen);

/**
 * Ingest a text stream (`name` is used in messages, e.g. the file name or
 * "-"). Commits every opts->batch_edges events. On a malformed line without
 * skip_bad: returns GSNAP_EPARSE, the detail message names file and line,
 * nothing of the current batch is committed, earlier batches stay committed
 * (report->last_version says which). An empty input is GSNAP_EPARSE ("no
 * edges"). `fp` is a FILE* (void* to keep <stdio.h> out of this header).
 */
int gsnap_ingest_text(gsnap_db *db, void *fp, const char *name,
                      const gsnap_ingest_options *opts, gsnap_ingest_report *report);

/* @@SNAPSHOT_API@@ (snapshot/: declarations added by the snapshot module) */

/* @@SAMPLER_API@@ (sampler/: declarations added by the sampler module) */

#ifdef __cplusplus
}
#endif
#endif /* GRAPHSNAP_H */
