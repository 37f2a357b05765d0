/*
 * graphsnap.h -- public API of libgraphsnap.
 *
 * graphsnap is an embedded storage engine for dynamic, temporal graphs:
 *   - store:    durable, versioned temporal edge store with point-in-time queries
 *   - features: node attributes (features, labels) versioned like the edges
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

/** Opt-in, process-wide: have the C allocator keep the memory the process
 *  frees for its own reuse instead of giving it back to the kernel (glibc:
 *  no mmap for large blocks, no trimming of the heap, one arena for all
 *  threads). For a program that ingests and queries in one process: each
 *  commit and merge frees MiBs to hundreds of MiB, and giving them back makes
 *  the next commit fault them in again and, on a VM, disturbs the queries
 *  that run right after (docs/store.md, "Memory of a process that ingests").
 *  The price: the resident size stays near its peak until the process
 *  exits, and all threads share one arena (malloc's lock). Call it once,
 *  early, before threads start (arenas already made stay).
 *  The library never calls it itself; the graphsnap CLI does.
 *  Returns 0, or GSNAP_ENOTSUP when the C library is not glibc or refused a
 *  setting. Thread-safe; calling it again changes nothing. */
int gsnap_keep_freed_memory(void);

/** Progress of a long operation (snapshot build, advance, backup, load, ...):
 *  called from the calling thread with the current phase (a short static
 *  string such as "scan" or "join hop 2"), the units done and the total
 *  (0 when unknown). Operations whose options carry a progress callback call
 *  it at most every few milliseconds of work; it must not call back into the
 *  library on the same handle. */
typedef void (*gsnap_progress_fn)(void *ctx, const char *phase, uint64_t done, uint64_t total);

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

#define GSNAP_MERGE_FANOUT 4      /* the default gsnap_db_options.merge_fanout */
#define GSNAP_MERGE_FANOUT_MAX 32 /* the largest gsnap_db_options.merge_fanout */
#define GSNAP_DB_OPTIONS_VERSION 4 /* 2 added no_lock, 3 read_cache_bytes, 4 merge_fanout; versions 1-3 are still accepted */
typedef struct {
    unsigned version;         /* GSNAP_DB_OPTIONS_VERSION */
    unsigned keep;            /* GSNAP_KEEP_*; used when creating, ignored on open */
    gsnap_sync_mode sync;     /* durability of commits */
    size_t map_size;          /* initial LMDB map size in bytes; 0 = 64 MiB. It grows
                                 by itself (doubling) when full. A size beyond
                                 RLIMIT_AS or what the kernel maps is GSNAP_ENOMEM
                                 (message names size and limit). */
    int read_only;            /* open without write access (LMDB MDB_RDONLY): no
                                 batches, snapshots or refreshes; nothing in the
                                 directory is created. When lock.mdb cannot be
                                 created or opened (read-only media), the open
                                 falls back to no_lock by itself. */
    unsigned max_readers;     /* LMDB reader slots; 0 = 126 */
    int create;               /* create the directory and database if missing */
    int no_lock;              /* with read_only: MDB_NOLOCK, no lock file is used
                                 at all (a backup or read-only media). Only safe
                                 when no process writes the database meanwhile. */
    /* version 3 */
    int64_t read_cache_bytes; /* memory for verified copies of the delta runs
                                 that reads seek (with a node table each: a
                                 point query then finds a node of such a run
                                 in one probe instead of a B-tree descent);
                                 0 = 256 MiB, < 0 = none. Made by the process's
                                 commits and by its reads of a store that
                                 another process writes, in the order the runs
                                 are indexed while the budget lasts, for the
                                 directions the process reads; freed when
                                 merges remove the runs (and the last view
                                 reading them ends). The run masks made from
                                 them (2 bytes a node id a direction) count
                                 against it too. */
    /* version 4 */
    unsigned merge_fanout;    /* delta runs of one level that merge into one run
                                 of the next, in this handle's commits; 0 = 4,
                                 else 2..32 (GSNAP_EINVAL otherwise). Larger:
                                 each record is rewritten fewer times (faster
                                 ingest: R-MAT-20 CLI 7-20 % faster at 8), and
                                 queries and scans read more runs (answers of
                                 9 or more neighbours 4-42 % slower under
                                 ingest at 8; docs/benchmarks.md "Merge
                                 fanout"; past 16 delta runs a view has no
                                 run mask, see docs/store.md). Only the
                                 policy of this handle's merges: the files are
                                 the same, any handle reads any layout;
                                 gsnap_db_merge(db, GSNAP_MERGE_FANOUT) after
                                 a load at a larger fanout leaves the shape of
                                 the default (`graphsnap ingest` of a file
                                 loads at 16 and does so). */
} gsnap_db_options;
#define GSNAP_DB_OPTIONS_INIT {GSNAP_DB_OPTIONS_VERSION, GSNAP_KEEP_BOTH, GSNAP_SYNC_FULL, 0, 0, 0, 1, 0, 0, 0}

/**
 * Open (and, with opts->create, create) the database in directory `path`.
 * opts may be NULL for the defaults (GSNAP_DB_OPTIONS_INIT).
 * On open, stale LMDB reader slots of dead processes are cleared
 * (mdb_reader_check) and the on-disk format version is checked.
 * Before LMDB touches the directory, the data file's LMDB meta pages are
 * read (pread): a file that is not LMDB is refused (GSNAP_EFORMAT) without
 * creating anything beside it, a file shorter than its meta pages say
 * (truncated) is refused with GSNAP_ECORRUPT (it is never mapped past its
 * end), and the map size is checked against RLIMIT_AS (GSNAP_ENOMEM naming
 * both). A failed open that created the directory or files removes them.
 * Returns GSNAP_OK, GSNAP_NOTFOUND (no database and !create), GSNAP_EFORMAT
 * (written by an incompatible version, or not LMDB), GSNAP_ECORRUPT,
 * GSNAP_ENOMEM, GSNAP_EBUSY (already open in this process), GSNAP_EEXIST
 * (`path` exists and is not a directory), GSNAP_EACCES,
 * GSNAP_ENOSPC, GSNAP_EIO, GSNAP_EINVAL. On failure *out is NULL; a message
 * for the failure is available through gsnap_last_open_error() in the
 * calling thread.
 * Several processes may open the same directory at once; one process may
 * hold only one handle per directory (LMDB forbids opening an environment
 * twice in a process): a second open returns GSNAP_EBUSY -- share the handle,
 * which is thread-safe.
 */
int gsnap_db_open(const char *path, const gsnap_db_options *opts, gsnap_db **out);

/** Detail of the last gsnap_db_open failure in this thread (static buffer). */
const char *gsnap_last_open_error(void);

/** Close the database. An open batch is aborted: its events are dropped and
 *  the batch handle stays valid only to answer GSNAP_ESTATE; release it with
 *  gsnap_batch_commit (which returns GSNAP_ESTATE) or gsnap_batch_abort.
 *  All gsnap_read views and derived handles must have been closed first.
 *  NULL is fine. Using the handle after close is undefined; debug builds
 *  (without NDEBUG) keep the last closed handles marked dead, so such calls
 *  return GSNAP_EINVAL there. */
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
    uint64_t damaged_runs;   /* runs that failed verification during a merge;
                                merges leave them alone (gsnap_db_check names them) */
} gsnap_db_stat;

/** Fill *st. O(number of runs). */
int gsnap_db_stats(gsnap_db *db, gsnap_db_stat *st);

/** Run the merges the size-tiered policy asks for at `fanout` delta runs per
 *  level (0: this handle's gsnap_db_options.merge_fanout; else 2..32,
 *  GSNAP_EINVAL otherwise), each in a write transaction of its own, until no
 *  level holds `fanout` runs and the deltas hold fewer records than the
 *  base: the merges a commit of a handle opened with that fanout would run.
 *  What it is for: a bulk load done at a larger fanout (fewer merges, more
 *  runs) leaves the store in the shape a default handle keeps by calling it
 *  with 0 on a default handle, or GSNAP_MERGE_FANOUT (what `graphsnap
 *  ingest` does). Adds no version and changes no answer; readers are not
 *  blocked. GSNAP_EACCES on a read-only handle. */
int gsnap_db_merge(gsnap_db *db, unsigned fanout);

/** Merge all sorted runs into one (what background compaction converges to),
 *  then give the space back with gsnap_db_shrink. The merge is one write
 *  transaction; readers are not blocked. Optional: queries are correct
 *  without it, somewhat faster after it. When the shrink is refused or
 *  fails (GSNAP_EBUSY: another process has the database open, read views of
 *  other threads stay open, or this thread holds one; GSNAP_ENOSPC: no room
 *  for the copy) the merge stands, the file keeps its size (its free pages
 *  are reused by later commits) and this returns GSNAP_OK; call
 *  gsnap_db_shrink to see why. Only a shrink that leaves the handle
 *  unusable (its environment could not be reopened after the swap; the data
 *  is safe on disk) returns that error: close and reopen. */
int gsnap_db_compact(gsnap_db *db);

/** Called by the check functions once per problem found, with a one-line
 *  description naming where (table, run, chunk, node, block). */
typedef void (*gsnap_problem_fn)(void *ctx, const char *problem);

/**
 * Verify the store: every chunk's magic, size and XXH3 checksum, record order
 * inside and across chunks, the dense base's records and offset index, each
 * run's Bloom filter against its nodes, versions against the run catalog,
 * record counts, orphan chunks, the meta record against the runs, and
 * names every run a merge marked damaged (see gsnap_db_stat.damaged_runs).
 * Reads everything: O(size). LMDB's own pages are not checksummed: a damaged
 * page header can still crash the walk inside LMDB (the CLI runs `check` in
 * a guarded child and reports "corrupt LMDB file at page N").
 * `report` (may be NULL) is called per problem; *problems (may be NULL)
 * receives the count. Returns GSNAP_OK when the walk completed (problems or
 * not), or an error that stopped it.
 */
int gsnap_db_check(gsnap_db *db, gsnap_problem_fn report, void *ctx, uint64_t *problems);

/* Options of the check functions with a progress callback (gsnap_db_check
 * and gsnap_snapshot_check are these with report only). */
#define GSNAP_CHECK_OPTIONS_VERSION 1
typedef struct {
    unsigned version;           /* GSNAP_CHECK_OPTIONS_VERSION */
    gsnap_problem_fn report;    /* per problem found; may be NULL */
    void *report_ctx;
    gsnap_progress_fn progress; /* may be NULL; phases "check store" (records
                                   verified of all records) and "check
                                   snapshots" (slab blocks of all the checked
                                   snapshots); ends with done == total when the
                                   walk completed */
    void *progress_ctx;
} gsnap_check_options;
#define GSNAP_CHECK_OPTIONS_INIT {GSNAP_CHECK_OPTIONS_VERSION, NULL, NULL, NULL, NULL}

/** gsnap_db_check with options (opts NULL: no report, no progress). Same
 *  checks and return codes; GSNAP_EINVAL for an unknown opts->version.
 *  Callbacks run on the calling thread and must not call the library on db. */
int gsnap_db_check_ext(gsnap_db *db, const gsnap_check_options *opts, uint64_t *problems);
/** gsnap_snapshot_check with options (see gsnap_db_check_ext). */
int gsnap_snapshot_check_ext(gsnap_db *db, const char *name, const gsnap_check_options *opts,
                             uint64_t *problems);

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

/** Buffer n events at once (what language bindings use): event i is
 *  src[i] -> dst[i] at time t[i] (t NULL: 0), a delete when del && del[i],
 *  else an add; exactly as n calls of gsnap_batch_add / gsnap_batch_delete.
 *  On the first failing event it stops and returns that call's code, with
 *  *failed_at (may be NULL) = its index; the events before it stay buffered
 *  (abort the batch to drop them). O(n). */
int gsnap_batch_add_events(gsnap_batch *b, const uint64_t *src, const uint64_t *dst,
                           const int64_t *t, const uint8_t *del, size_t n, size_t *failed_at);

/** Number of events buffered in the batch. */
size_t gsnap_batch_size(const gsnap_batch *b);

/**
 * Commit the batch: sort it, write it as a new sorted run, merge runs when a
 * level is full, record the version, sync. On success *version (may be NULL)
 * receives the new version. The batch is freed in every case.
 * An empty batch (no edges and no attribute rows) commits nothing and
 * returns the current version (unless gsnap_batch_set_commit_time was
 * called: then it is a version of its own).
 * With a retention horizon (gsnap_db_compact_history), an event time before
 * the horizon time fails the commit with GSNAP_ERANGE (nothing committed).
 * Grows the LMDB map as needed; GSNAP_ENOSPC when the disk is full (nothing
 * of the batch is visible then, earlier versions are intact).
 * Background merges that meet a damaged run (checksum mismatch) mark it
 * damaged and merge around it; the commit itself still succeeds.
 * GSNAP_ESTATE when the batch failed earlier or its database was closed
 * (gsnap_db_close aborted it; the handle is released here).
 * Complexity: O(n log n) for n events, plus amortised O(log_F(batches)) merge
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
 *  open view pins old pages. Per thread; not to be shared between threads
 *  (end it in the thread that began it).
 *  Every query takes a `gsnap_read *rd` that may be NULL, in which case the
 *  query uses its own short view.
 *  Map growth waits until no view of the process is open: other threads'
 *  views delay it, never deadlock it. A thread may write while it holds a
 *  view, but if that write needs the map to grow it answers GSNAP_EBUSY with
 *  nothing committed (end the thread's views and retry); after another
 *  process grew the map past this process's, a further view or a write in
 *  that thread answers GSNAP_EBUSY the same way. */
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
 * in the view; as of any version the view's newest is below, every committed
 * version counts: the answer is the newest one's, unlike a snapshot create,
 * which records its version and refuses one not committed yet). Answers the
 * live instances in order of (neighbour, t).
 * Fills buf with up to `cap` entries and sets *count to the total number; when
 * *count > cap the caller may retry with a larger buffer (buf may be NULL when
 * cap is 0). A node with no edges answers count 0 and GSNAP_OK.
 * Everything read is verified (XXH3) the first time this process reads it
 * (runs never change, so a verified chunk stays verified): damage is GSNAP_ECHECKSUM or
 * GSNAP_ECORRUPT with a message naming the node, the run and its versions,
 * never an answer. The same holds for gsnap_degree and the iterator.
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
 * `line_no` provides the default time; on line 1 a UTF-8 byte order mark
 * is skipped. When a failing line starts with a letter, the message ends
 * with a hint that it looks like a header row. Pure function; safe to fuzz.
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
 * With skip_bad, a successful call that skipped lines leaves the message of
 * the first skipped line ("file:line: column ...") in gsnap_db_errmsg(db).
 * Lines may be of any length; the default time of a line is its line number.
 * Threading: the caller's thread reads, parses and sorts; a second thread
 * (started and joined inside this call) commits the batch before, so db must
 * not be used by other threads for writes meanwhile (a batch open elsewhere
 * makes a commit fail with GSNAP_EBUSY). opts->progress is called from the
 * caller's thread, after each commit is known to be done.
 */
int gsnap_ingest_text(gsnap_db *db, void *fp, const char *name,
                      const gsnap_ingest_options *opts, gsnap_ingest_report *report);

/* ---------------------------------------------------------------------------
 * Snapshots (snapshot/). A snapshot is a named, immutable picture of the
 * graph at (at_t, as_of) in one direction, made of
 *   - SEMHS slab files <db dir>/snapshots/<name>/hop<h>.slab, h = 1..k: for
 *     every node v, N_h(v) = the nodes at shortest-path distance exactly h
 *     from v (following edges in the snapshot's direction; v itself is never
 *     in N_h for h >= 1), capped at GSNAP_SNAPSHOT_CAP ids by uniform sampling
 *     without replacement so that a list always lies inside one 4 KiB block;
 *     every block carries an XXH3 checksum;
 *   - an LMDB table keyed (hop, node) holding the slab pointer of N_h(v) and
 *     the cached list of layer h: min(deg, ceil(alpha * f_h)) distinct 1-hop
 *     neighbours of v sampled uniformly without replacement.
 * N_h is computed exactly (distance sets from the exact N_{h-1}, never from
 * a capped list); the cap applies only to what is stored. Samples are
 * deterministic: the chosen ids are the ones with the smallest
 * XXH3(id) keyed by (seed, hop, node, generation), so equal parameters give
 * equal snapshots. That is the exact kind (GSNAP_HOPSETS_EXACT). The sampled
 * kind (GSNAP_HOPSETS_SAMPLED) stores instead D_h(v) = the c_h members of
 * R_h(v) (nodes with a walk of exactly h edges to v) with the smallest
 * scores of one snapshot-wide order, built by the SEMHS join from the capped
 * lists of hop h-1 (O(k c |E|)), and can be moved to a newer (T, V) by
 * gsnap_snapshot_advance as a new snapshot version.
 * See docs/snapshot.md and docs/format.md.
 * A snapshot handle may be used from several threads (queries serialise on
 * its io_uring ring). Snapshots of one database share its LMDB environment.
 * ------------------------------------------------------------------------- */
#define GSNAP_MAX_HOPS 16
/** Most ids stored for one N_h(v): (4096 - 16 - 12) / 8. */
#define GSNAP_SNAPSHOT_CAP 508
/** Largest fanout a snapshot or sampler accepts (per hop / layer). */
#define GSNAP_MAX_FANOUT 100000
/** Largest cached list, ceil(alpha * fanout), a snapshot or sampler accepts.
 *  Beyond these limits create/open return GSNAP_ERANGE before writing. */
#define GSNAP_MAX_CACHE_IDS 1000000

typedef struct gsnap_snapshot gsnap_snapshot; /* an open, complete snapshot */

#define GSNAP_SNAPSHOT_OPTIONS_VERSION 2
/** Kinds of hop sets (docs/snapshot.md "Two kinds of hop sets"). */
#define GSNAP_HOPSETS_AUTO 0u    /* exact when an estimate of the exact relation fits, else sampled */
#define GSNAP_HOPSETS_EXACT 1u   /* N_h(v): shortest-path distance exactly h, capped after */
#define GSNAP_HOPSETS_SAMPLED 2u /* D_h(v): bottom-c_h of the walk set R_h(v) (SEMHS join) */
typedef struct {
    unsigned version;        /* GSNAP_SNAPSHOT_OPTIONS_VERSION */
    unsigned hops;           /* k, 1..GSNAP_MAX_HOPS */
    uint32_t fanouts[GSNAP_MAX_HOPS]; /* f_1..f_k (index 0 = hop 1); 0 = 10;
                                at most GSNAP_MAX_FANOUT */
    double alpha;            /* amplification, in (0, 1e6]; 0 = 2. m_h = ceil(alpha*f_h),
                                at most GSNAP_MAX_CACHE_IDS */
    int64_t at_t;            /* event time (GSNAP_TIME_MAX = now); a time after the
                                store's latest event is GSNAP_ERANGE */
    uint64_t as_of;          /* store version (GSNAP_VERSION_LATEST = newest); a
                                version after the latest is GSNAP_ERANGE */
    gsnap_dir dir;           /* sampling direction (IN by default) */
    uint64_t seed;           /* random seed of all samples */
    size_t mem_budget;       /* bytes of sort buffers; past it sorted runs spill
                                to disk and are merged. 0 = 256 MiB; min 1 MiB */
    /* optional progress: phase ("scan", "join", "slab", "table"), done and
     * total (hops; "scan": nodes, total 0); called from the building thread */
    gsnap_progress_fn progress;
    void *progress_ctx;
    unsigned flags;          /* GSNAP_SNAPSHOT_* flags below */
    /* version 2 */
    unsigned hop_sets;       /* GSNAP_HOPSETS_*; AUTO (0) by default */
    uint32_t caps[GSNAP_MAX_HOPS]; /* sampled: c_1..c_k (1..508), 0 = default
                                      (c_1 = 508, c_h = |E| / nodes for h >= 2);
                                      made non-increasing: c_h = max(c_h..c_k) */
} gsnap_snapshot_options;
/** Join strategy. By default, when the adjacency (at most 8 bytes per stored
 *  event) plus 12 bytes per node id below the store's node bound fit in
 *  mem_budget, the joins run in memory (index nested loop over a CSR; same
 *  relation, much faster); otherwise they are external sort-merge joins.
 *  This flag forces the sort-merge path. */
#define GSNAP_SNAPSHOT_SORT_MERGE 1u
#define GSNAP_SNAPSHOT_OPTIONS_INIT \
    {GSNAP_SNAPSHOT_OPTIONS_VERSION, 2, {10, 10}, 2.0, GSNAP_TIME_MAX, \
     GSNAP_VERSION_LATEST, GSNAP_DIR_IN, 1, 0, NULL, NULL, 0, GSNAP_HOPSETS_AUTO, {0}}

/** What a snapshot is (from its catalog record). */
typedef struct {
    char name[72];
    int complete;            /* 0 while building (or after a crash mid-build) */
    unsigned format_version; /* on-disk snapshot format */
    unsigned hops;
    uint32_t fanouts[GSNAP_MAX_HOPS];
    double alpha;
    int64_t at_t;
    uint64_t at_version;     /* resolved store version (never LATEST) */
    gsnap_dir dir;
    uint64_t seed;
    uint64_t generation;     /* bumped by every cache refresh */
    uint64_t nodes;          /* nodes with at least one 1-hop neighbour */
    uint64_t slab_bytes;     /* all slab files together */
    uint64_t exact_ids[GSNAP_MAX_HOPS];  /* sum_v |N_h(v)|, exact */
    uint64_t stored_ids[GSNAP_MAX_HOPS]; /* ids stored in slab h (after caps) */
    uint64_t capped[GSNAP_MAX_HOPS];     /* lists of hop h that were capped */
    uint64_t blocks[GSNAP_MAX_HOPS];     /* 4 KiB blocks of slab h (with header) */
    double build_seconds;
    uint64_t created_unix;   /* wall-clock time the build started */
    unsigned hop_sets;       /* GSNAP_HOPSETS_EXACT or _SAMPLED (never AUTO) */
    uint32_t caps[GSNAP_MAX_HOPS]; /* sampled: c_1..c_k; exact: 508 */
    uint64_t snap_version;   /* 0 after create, +1 per gsnap_snapshot_advance */
} gsnap_snapshot_info;

/**
 * Build snapshot `name` of db at (opts->at_t, opts->as_of). name: 1..64 of
 * [A-Za-z0-9_.-], not starting with '.'. opts NULL = GSNAP_SNAPSHOT_OPTIONS_INIT.
 * opts->hop_sets picks the kind (AUTO: exact when a walk-count estimate of
 * the exact relation is at most 64 |E|, else sampled); the sampled kind
 * joins capped lists (in memory when they fit mem_budget, else sort-merge)
 * and costs O(k c |E| log); the text below is the exact kind's.
 * Streams the store once, then per hop one join computing the exact
 * distance-h relation: in memory when the adjacency fits opts->mem_budget
 * (see GSNAP_SNAPSHOT_SORT_MERGE), else an external sort-merge join whose
 * sort buffers are bounded by mem_budget (spill files under
 * <db dir>/snapshots/<name>/tmp, removed at the end).
 * Slab files are fsynced before the catalog marks the snapshot complete, in
 * the last of several write txns: a crash leaves it incomplete (not
 * openable; the next create of that name starts over).
 * `info` (may be NULL) receives the result.
 * The name is claimed atomically (an exclusive lock on
 * <db dir>/snapshots/.NAME.lock, held for the build): of concurrent creates
 * of one name, in threads or processes, one builds and the others get
 * GSNAP_EEXIST ("... exists" / "... is being created").
 * Returns GSNAP_OK, GSNAP_EEXIST (a complete snapshot of that name exists,
 * or one is being created), GSNAP_EINVAL, GSNAP_ERANGE (as_of, at_t,
 * fanouts or alpha * fanout beyond the limits above), GSNAP_EACCES
 * (read-only db), GSNAP_ENOTSUP (direction not kept), GSNAP_ENOSPC,
 * GSNAP_EIO, GSNAP_ENOMEM.
 * Complexity: O(P log P) for P = sum over hops of the join output pairs,
 * I/O O(P) sequential; memory O(mem_budget + largest adjacency + largest N_h).
 */
int gsnap_snapshot_create(gsnap_db *db, const char *name, const gsnap_snapshot_options *opts,
                          gsnap_snapshot_info *info);

#define GSNAP_ADVANCE_OPTIONS_VERSION 1
/** at_t value meaning "keep the snapshot's event time". */
#define GSNAP_ADVANCE_KEEP_T INT64_MIN
typedef struct {
    unsigned version;        /* GSNAP_ADVANCE_OPTIONS_VERSION */
    int64_t at_t;            /* new event time; GSNAP_ADVANCE_KEEP_T = keep */
    uint64_t as_of;          /* new store version (GSNAP_VERSION_LATEST = newest) */
    gsnap_progress_fn progress; /* optional: phase, done, total */
    void *progress_ctx;
} gsnap_advance_options;
#define GSNAP_ADVANCE_OPTIONS_INIT \
    {GSNAP_ADVANCE_OPTIONS_VERSION, GSNAP_ADVANCE_KEEP_T, GSNAP_VERSION_LATEST, NULL, NULL}

/** What an advance did. */
typedef struct {
    uint64_t from_version, to_version;   /* store versions */
    uint64_t snap_version;               /* the snapshot version committed */
    uint64_t touched_nodes;              /* endpoints of events between the two (T, V) */
    uint64_t recomputed[GSNAP_MAX_HOPS]; /* D_h(v) recomputed at hop h */
    uint64_t changed[GSNAP_MAX_HOPS];    /* of those, lists that differ (entries rewritten) */
    uint64_t blocks_written[GSNAP_MAX_HOPS];
    uint64_t blocks_reused[GSNAP_MAX_HOPS]; /* of those, free blocks reused */
    uint64_t blocks_freed[GSNAP_MAX_HOPS];  /* blocks no longer referenced */
    uint64_t caches_redrawn;             /* nodes whose 1-hop neighbours changed */
    double seconds;
} gsnap_advance_report;

/**
 * Move a sampled snapshot to a newer (T, V) (opts NULL: same T, newest
 * version): recomputes D_1 of the nodes whose adjacency changed between the
 * two (T, V) (the store's per-version touched-node log; every node when T
 * moves), then hop by hop D_h of the nodes whose inputs changed. Changed
 * lists go to new slab blocks (copy-on-write: a block a reader may hold is
 * never overwritten); blocks freed by earlier advances are reused once no
 * LMDB reader older than the commit that freed them is alive. Everything is
 * committed in one LMDB write txn as the next snapshot version: slab lists,
 * sizes and flags then equal those of a fresh create at the new (T, V) with
 * the same parameters; cached lists are redrawn (generation 0 rule) for the
 * nodes whose 1-hop neighbours changed and kept for the others. A crash at
 * any point leaves the previous version. Readers that began earlier keep
 * their version. Needs the store to keep both directions. report may be NULL.
 * Returns GSNAP_OK, GSNAP_NOTFOUND, GSNAP_ENOTSUP (exact snapshot, or a
 * store keeping one direction only), GSNAP_EINVAL, GSNAP_EACCES, GSNAP_EIO,
 * GSNAP_ENOSPC, GSNAP_ECHECKSUM/ECORRUPT (a damaged slab), GSNAP_ENOMEM.
 * Claims the name as `gsnap_snapshot_create` does (an exclusive lock on
 * <db dir>/snapshots/.NAME.lock, held until the commit): while another
 * thread or process creates, advances or drops that snapshot it returns
 * GSNAP_EBUSY (and they get GSNAP_EEXIST / GSNAP_EBUSY while it runs);
 * nothing is committed. Safe to call from several threads or processes.
 * Complexity: O(sum over recomputed v of sum_{u in N(v)} c) plus one point
 * query per recomputed node; memory O(changed lists).
 */
int gsnap_snapshot_advance(gsnap_db *db, const char *name, const gsnap_advance_options *opts,
                           gsnap_advance_report *report);

/** Open a complete snapshot. GSNAP_NOTFOUND (no such or incomplete),
 *  GSNAP_EFORMAT (other format version), GSNAP_EIO (slab file missing).
 *  Close with gsnap_snapshot_close before closing db. O(k) opens. */
int gsnap_snapshot_open(gsnap_db *db, const char *name, gsnap_snapshot **out);
/** Close; NULL is fine. */
void gsnap_snapshot_close(gsnap_snapshot *snap);

/** All snapshots of db (complete or not) sorted by name: *infos is an array
 *  of *n entries, free with gsnap_free (NULL when *n is 0). O(snapshots). */
int gsnap_snapshot_list(gsnap_db *db, gsnap_snapshot_info **infos, size_t *n);

/** Info of one snapshot (complete or not). GSNAP_NOTFOUND if none. O(1). */
int gsnap_snapshot_info_get(gsnap_db *db, const char *name, gsnap_snapshot_info *info);

/** Drop a snapshot: its table and catalog record in one write txn, then its
 *  files. Handles still open on it keep reading their open files until they
 *  close; open read txns keep their view. GSNAP_NOTFOUND if none;
 *  GSNAP_EBUSY while a create or advance of that name holds its claim. */
int gsnap_snapshot_drop(gsnap_db *db, const char *name);

#define GSNAP_KHOP_OPTIONS_VERSION 2
typedef struct {
    unsigned version;        /* GSNAP_KHOP_OPTIONS_VERSION (1 still accepted; others GSNAP_EINVAL) */
    unsigned queue_depth;    /* io_uring queue depth; 0 = 64 (1..4096) */
    int force_pread;         /* 1: never use io_uring (also: env GSNAP_NO_URING=1) */
    int buffered;            /* 1: no O_DIRECT (page cache reads) */
    /* version 2 */
    gsnap_read *rd;          /* read view to answer in (NULL: a short one of its
                                own): a view kept open keeps reading the snapshot
                                version it began on, whatever advances commit */
} gsnap_khop_options;
#define GSNAP_KHOP_OPTIONS_INIT {GSNAP_KHOP_OPTIONS_VERSION, 0, 0, 0, NULL}

typedef struct {
    uint64_t lookups;        /* (hop, node) table lookups */
    uint64_t blocks_read;    /* distinct 4 KiB slab blocks read */
    uint64_t bytes_read;
    uint64_t submits;        /* io_uring_submit calls (0 with pread) */
    int used_uring;          /* 1 io_uring, 0 pread */
    int used_direct;         /* 1 O_DIRECT, 0 buffered (e.g. tmpfs refuses it) */
    double lookup_seconds;   /* wall time of the table lookups */
    double read_seconds;     /* wall time of the block reads + verification */
} gsnap_khop_stats;

/** Answer of a k-hop query: the list of seed i at hop h (1-based) is
 *  ids[off[i*hops + h-1] .. off[i*hops + h]) ascending; `capped` (same index)
 *  says whether it is a sample of N_h (exact[] then gives |N_h|). */
typedef struct {
    size_t nseeds;
    unsigned hops;
    uint64_t *ids;
    size_t *off;             /* nseeds*hops + 1 entries */
    uint8_t *capped;         /* nseeds*hops */
    uint64_t *exact;         /* nseeds*hops: |N_h(seed)| before any cap */
    gsnap_khop_stats stats;
} gsnap_khop_result;

/**
 * N_1..N_hops of each seed (hops <= the snapshot's k). Looks the (hop, seed)
 * keys up in one read txn, then reads the distinct slab blocks they point to
 * with io_uring (O_DIRECT, 4 KiB aligned buffers, up to queue_depth reads in
 * flight per submission), or pread when io_uring is refused or forced.
 * Every block's checksum and every list's pointer checksum is verified:
 * a mismatch fails the whole query with GSNAP_ECHECKSUM and a message
 * "snapshot S hop H block B: checksum mismatch" (never a wrong list).
 * Seeds without edges get empty lists. opts may be NULL. *out is freed with
 * gsnap_khop_result_free. Returns GSNAP_OK, GSNAP_EINVAL, GSNAP_ECHECKSUM,
 * GSNAP_ECORRUPT, GSNAP_EIO, GSNAP_ENOMEM.
 * Complexity: O(n*hops) lookups + at most n*hops block reads.
 */
int gsnap_khop(gsnap_snapshot *snap, const uint64_t *seeds, size_t n, unsigned hops,
               const gsnap_khop_options *opts, gsnap_khop_result **out);
/** Free a k-hop answer. NULL is fine. */
void gsnap_khop_result_free(gsnap_khop_result *r);

/**
 * Cached neighbour list of (hop, node) (hop 1..k; 0 = the samplers' shared
 * cache), as seen by the read view rd (NULL: a short view of its own).
 * Copies up to cap ids into buf, sets *n to the full count (GSNAP_ERANGE
 * when *n > cap; buf untouched) and *gen (may be NULL) to the generation
 * that wrote the entry. GSNAP_NOTFOUND: no entry (no neighbours at (T, V)).
 * O(log N) (one B-tree lookup).
 */
int gsnap_snapshot_cache(gsnap_snapshot *snap, gsnap_read *rd, unsigned hop, uint64_t node,
                         uint64_t *buf, size_t cap, size_t *n, uint64_t *gen);

/** What the catalog said about the snapshot when it was opened (owned by
 *  snap, valid until gsnap_snapshot_close; `generation` is the one at open).
 *  NULL for a NULL handle. O(1). */
const gsnap_snapshot_info *gsnap_snapshot_get_info(const gsnap_snapshot *snap);

/**
 * Verify snapshot `name` (NULL: every snapshot of db): every slab block's
 * checksum, every list's structure, every table record's checksum and slab
 * pointer (it must name the list of that node, with its length and XXH3),
 * and that every list is referenced. Each problem is passed to report (may
 * be NULL) as one line, e.g. "snapshot S hop H block B: checksum mismatch";
 * *problems (may be NULL) gets the count. Returns GSNAP_OK when the check ran
 * (whatever it found), or an error that stopped it. O(slab bytes + entries).
 */
int gsnap_snapshot_check(gsnap_db *db, const char *name, gsnap_problem_fn report, void *ctx,
                         uint64_t *problems);

/* ---------------------------------------------------------------------------
 * Sampler and staging (sampler/)
 * ------------------------------------------------------------------------- */
/* ---------------------------------------------------------------------------
 * Sampler (sampler/): GraphSDSampler mini-batch neighbour sampling.
 *
 * Given seed nodes, a fanout per layer and a mode, a sampler produces one
 * block per layer in DGL's message-flow-graph shape, packed into one
 * contiguous buffer (format in docs/sampler.md and below). Sampling is
 * uniform without replacement over a node's distinct neighbours (all of them
 * when there are no more than the fanout) and reproducible from (seed, batch
 * number, cache generation).
 * ------------------------------------------------------------------------- */

/** Sampling modes (docs/sampler.md gives each algorithm exactly). */
typedef enum {
    GSNAP_MODE_FBL = 0,   /* every layer from the store, every batch */
    GSNAP_MODE_FCR,       /* per-layer caches, rebuilt every `period` batches */
    GSNAP_MODE_FCR_SC,    /* FCR with one shared cache */
    GSNAP_MODE_PSCR,      /* OTF partial refresh of the batch's nodes, full fetch */
    GSNAP_MODE_PSCR_SC,
    GSNAP_MODE_FSCR,      /* OTF refresh of a gamma share of every entry, full fetch */
    GSNAP_MODE_FSCR_SC,
    GSNAP_MODE_PCF,       /* OTF partial fetch: delta share from the cache */
    GSNAP_MODE_PCF_SC
} gsnap_sample_mode;
#define GSNAP_MODE_COUNT 9

/** Name of a mode ("fbl", "fcr", "fcr-sc", "pscr", "pscr-sc", "fscr",
 *  "fscr-sc", "pcf", "pcf-sc"); "?" for an unknown value. Static string. */
const char *gsnap_sample_mode_name(gsnap_sample_mode mode);
/** Parse a mode name (case-insensitive). GSNAP_EINVAL when unknown. */
int gsnap_sample_mode_parse(const char *name, gsnap_sample_mode *mode);

#define GSNAP_MAX_LAYERS 16

/** Refresh policies (adaptive refresh, docs/sampler.md "Adaptive refresh"):
 *  how the OTF modes choose gamma per layer at each scheduled refresh. */
typedef enum {
    GSNAP_REFRESH_FIXED = 0, /* gamma = options.gamma at every refresh (default) */
    GSNAP_REFRESH_MISS,      /* gamma_l = clamp(DeltaH_l / (2 lambda_l), 0, 1), DeltaH_l the
                                share of layer l's frontier the cache did not hold (no entry
                                though eligible, or stale beyond max_staleness) over the last
                                `adapt_window` batches */
    GSNAP_REFRESH_FEEDBACK   /* gamma_l = min(1, kappa * statistic_l), the statistic reported
                                by the trainer (gsnap_sampler_report) */
} gsnap_refresh_policy;
#define GSNAP_REFRESH_POLICY_COUNT 3

/** Name of a policy ("fixed", "miss", "feedback"); "?" when unknown. Static string. */
const char *gsnap_refresh_policy_name(gsnap_refresh_policy p);
/** Parse a policy name (case-insensitive). GSNAP_EINVAL when unknown. */
int gsnap_refresh_policy_parse(const char *name, gsnap_refresh_policy *p);

#define GSNAP_SAMPLER_OPTIONS_VERSION 5
typedef struct {
    unsigned version;        /* GSNAP_SAMPLER_OPTIONS_VERSION */
    gsnap_sample_mode mode;
    unsigned layers;         /* number of layers L, 1..GSNAP_MAX_LAYERS */
    int32_t fanouts[GSNAP_MAX_LAYERS]; /* DGL order: fanouts[0] is the input
                                layer, fanouts[L-1] the layer next to the seeds;
                                -1 = all neighbours (such a layer is never cached) */
    gsnap_dir dir;           /* GSNAP_DIR_IN (default, as DGL) or GSNAP_DIR_OUT */
    uint64_t seed;           /* random seed */
    double alpha;            /* cache amplification: alpha*f slots per node, 1..1000; 0 = 2 */
    double gamma;            /* OTF refresh share r = gamma*alpha*f; 0 = 0.15 */
    double delta;            /* PCF: share of each sample served from the cache; 0 = 0.4 */
    uint32_t period;         /* refresh every `period` batches; 0 = never */
    uint64_t threshold;      /* dense/sparse split: a node is cached iff its degree
                                is above this; 0 = every node (those without
                                neighbours as empty entries) */
    int64_t max_staleness;   /* < 0: frozen (reads at the snapshot's (T, V) only).
                                >= 0: fresh: reads at the newest version, and a
                                cached entry older than this many versions whose
                                node received edges is redrawn before use */
    int64_t at_t;            /* event time of reads without a snapshot (GSNAP_TIME_MAX) */
    uint64_t as_of;          /* version of reads without a snapshot (LATEST: resolved at open) */
    /* since version 2 (a version-1 caller's struct ends above): */
    const char *features;    /* attribute table gathered for blocks[0]'s source
                                (input) nodes with each batch, or NULL (read
                                at the sampler's (T, V); the name is copied at
                                open; rows pass through a row cache of at most
                                32 MiB per table, freed at close) */
    const char *labels;      /* attribute table gathered for the seeds, or NULL */
    /* since version 3 (a version-1 or -2 caller's struct ends above): */
    unsigned workers;        /* threads producing batches (0 or 1 = the caller's thread
                                only; at most 64). Used by gsnap_sampler_next with
                                seeds NULL (random seeds) in frozen mode without a
                                snapshot, features or labels and in modes other than
                                PSCR: workers - 1 threads, started at the first such
                                call and joined at close, produce up to 3 x workers
                                batches ahead (also between calls) with the caller's
                                thread, each with its own scratch; batches are
                                returned in order; batch i is the same whatever the
                                count */
    /* since version 4 -- adaptive refresh and run-time core (issue 18); a
     * version-1..3 caller's struct ends above and gets the defaults (fixed
     * policy, static degree core): */
    gsnap_refresh_policy policy; /* how gamma is chosen at each scheduled refresh of the
                                OTF modes (PSCR, FSCR, PCF and -SC); a policy other than
                                FIXED is EINVAL in FBL and FCR modes */
    double lambda[GSNAP_MAX_LAYERS]; /* MISS: cost weight lambda_l > 0 per layer, DGL
                                order as fanouts; 0 = 0.5 (gamma_l = DeltaH_l) */
    double kappa;            /* FEEDBACK: gamma_l = min(1, kappa * statistic_l); 0 = 1 */
    uint32_t adapt_window;   /* batches over which DeltaH and the core's in-batch
                                frequencies are measured; 0 = period */
    uint32_t core_min;       /* run-time core: > 0 = a node whose frontier appearances
                                over the window reach core_min joins the cached core at
                                the next scheduled refresh, one below it leaves (among
                                nodes of degree above threshold; cached modes without a
                                snapshot). 0 = the static degree core */
    uint64_t core_max_bytes; /* run-time core: bound on the core's bytes: per member the
                                sum over caches of 20 + 12 * cap (entry, count, version
                                and serving slot), plus the run-time core's own arrays
                                (4 bytes per node id, the window's frontier lists);
                                hottest first; 0 = no bound. GSNAP_EINVAL at open when
                                below the own arrays (docs/sampler.md) */
    /* end of the issue-18 block */
    /* since version 4 -- shared host tier (issue 18, sampler/shared.c;
       docs/sampler.md "Shared host tier"): */
    unsigned shared;         /* 1 = share the decoded cache image with samplers in
                                other processes serving the same image: it is
                                published read-only as a file in shared_dir and
                                mapped by each (copy on write: what a mode writes
                                during batches stays private to the process).
                                Cached modes only (ignored in FBL); needs a db */
    const char *shared_dir;  /* directory of published images (copied at open);
                                NULL = $GSNAP_SHARED_DIR, else /dev/shm */
    /* since version 5 (a version-1..4 caller's struct ends above and gets
       the default): */
    int64_t list_cache_bytes; /* decoded neighbour lists read from the store
                                (FBL; sparse, stale and all-neighbour nodes and
                                PCF's fresh share in the cached modes) kept
                                across batches while the read views answer from
                                the same runs (a new commit read or a merge
                                drops them): at most this many bytes, lists and their
                                table, split evenly among the sampler and its
                                `workers` (workers + 1 shares when workers > 1);
                                admitted first come, never evicted. 0 = 256 MiB;
                                < 0 = none (docs/sampler.md "Kept lists") */
} gsnap_sampler_options;
#define GSNAP_SAMPLER_OPTIONS_INIT {GSNAP_SAMPLER_OPTIONS_VERSION, GSNAP_MODE_FBL, 0, \
    {0}, GSNAP_DIR_IN, 0, 0, 0, 0, 0, 0, -1, GSNAP_TIME_MAX, GSNAP_VERSION_LATEST, NULL, NULL, 0, \
    GSNAP_REFRESH_FIXED, {0}, 0, 0, 0, 0, 0, NULL, 0}

typedef struct gsnap_sampler gsnap_sampler;

/** The newest gsnap_sampler_options version this library reads (it reads
 *  every version from 1 up to it): for bindings that load the library at
 *  run time and fill the struct themselves. O(1). */
int gsnap_sampler_options_version(void);

/** Statistics of one layer (hop h = L - i for layer i). */
typedef struct {
    uint64_t hits;        /* frontier nodes served from the cache */
    uint64_t misses;      /* frontier nodes served from the store (FBL, sparse, PCF's fresh share) */
    uint64_t stale_hits;  /* hits on an entry whose node received edges since it was drawn */
    uint64_t refreshed;   /* entries redrawn in this layer (PSCR, max_staleness) */
    uint64_t edges;       /* sampled edges */
    uint64_t bytes_read;  /* neighbour-list bytes read from the store */
    double seconds;       /* time sampling this layer */
} gsnap_layer_stats;

typedef struct {
    uint64_t batches, edges, seeds;
    uint64_t generation;       /* cache generation now served */
    uint64_t refreshes;        /* refreshes completed (each one generation) */
    uint64_t refreshed_entries;/* entries rewritten by refreshes (lazy FCR / FSCR: entries
                                  brought to the current generation by the batches that
                                  served them, or all at once at a generation's first
                                  batch, see gsnap_sampler_refresh) */
    uint64_t replaced_ids;     /* cached ids replaced by partial refreshes (FCR
                                  rebuilds whole entries and does not count them) */
    uint64_t stale_marked;     /* entries marked stale by edge arrivals */
    uint64_t max_staleness_seen; /* largest (version - entry version) served, stale entries */
    double t_sample, t_refresh, t_pack, t_changes, t_load; /* seconds per stage */
    gsnap_layer_stats layer[GSNAP_MAX_LAYERS];
    double t_gather;           /* seconds gathering features / labels (options
                                  features, labels); kept last: added later */
    uint64_t snap_version;     /* snapshot version served (sampled snapshots advance) */
    uint64_t snap_version_lag; /* newest snapshot version - served, as of the last gsnap_sampler_follow */
    double t_refresh_wait;     /* seconds batches waited for a scheduled refresh prepared
                                  in the background (without a snapshot, frozen mode: the
                                  next generation is built aside and swapped in at its due
                                  batch; t_refresh counts the background seconds) */
    /* shared host tier (options.shared, issue 18): */
    uint64_t shared_attached;  /* published images mapped */
    uint64_t shared_published; /* images this sampler published */
    uint64_t shared_refused;   /* published images refused (header, size, checksum or
                                  contents wrong): rebuilt privately and published anew */
    uint64_t shared_bytes;     /* bytes of the published image now mapped (0: private) */
    /* kept lists (options.list_cache_bytes; all workers together): */
    uint64_t list_hits;        /* store reads answered from a kept list */
    uint64_t list_misses;      /* store reads that found none while lists could be kept */
    uint64_t lists_kept;       /* lists held now (read when the statistics are) */
    uint64_t list_bytes;       /* bytes they take now (ids and table) */
} gsnap_sampler_stats;

/**
 * Open a sampler on database db. `snapshot`: name of a snapshot whose
 * (hop, node) cache table the cached modes serve from and refresh into (its
 * (T, V), direction and alpha then apply), or NULL: cached modes build an
 * in-memory cache from the store at (opts->at_t, opts->as_of) at open and
 * refresh it in memory. With a snapshot, opts->dir/at_t/as_of are replaced
 * by the snapshot's and alpha 0 means the snapshot's alpha. The fanouts may
 * differ from the snapshot's: a stored list longer than ceil(alpha*f) is
 * subsampled, a shorter one (or a missing hop 0 list) is drawn from the store
 * and, when db is writable, written back as the next generation.
 * Returns GSNAP_OK, GSNAP_EINVAL (bad options: named in the detail),
 * GSNAP_ERANGE (a fanout above GSNAP_MAX_FANOUT or ceil(alpha * fanout) above
 * GSNAP_MAX_CACHE_IDS), GSNAP_NOTFOUND (no such snapshot, or no attribute
 * table named by opts->features / labels), GSNAP_ENOMEM (also, up front, when
 * the cached modes' per-node arrays for the largest node id would exceed the
 * machine's memory: the message names the id and the size), GSNAP_ENOTSUP
 * (node ids >= 2^31 with a cache), store errors. Cost: cached modes scan the
 * graph once (O(V + E)).
 * A sampler is used by one thread at a time; several samplers (threads or
 * processes) may serve from one snapshot while refreshes run.
 */
int gsnap_sampler_open(gsnap_db *db, const char *snapshot, const gsnap_sampler_options *opts,
                       gsnap_sampler **out);

/** Close; waits for a background refresh. NULL is fine. */
void gsnap_sampler_close(gsnap_sampler *s);

/**
 * Sample the next mini-batch (batch number = batches sampled so far) for
 * `nseeds` seeds (duplicates are kept once, in first-seen order). Runs the
 * mode's scheduled refresh first when it is due, adopts a newer generation
 * of the snapshot table (or a finished background refresh) whole, then
 * samples the layers from the seeds outwards. *buf receives the packed
 * mini-batch (format below), *len its size; owned by the sampler, valid until
 * the next call on s. Complexity: O(sum over layers of frontier * fanout).
 * seeds NULL (nseeds > 0): the batch's seeds are gsnap_sampler_random_seeds
 * (s, batch, nseeds); with opts->workers > 1 the following batches are then
 * produced ahead on worker threads (see gsnap_sampler_options.workers).
 */
int gsnap_sampler_next(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds,
                       const void **buf, size_t *len);

/** Deterministic random seeds for batch `batch`: n node ids uniform over
 *  [0, node bound), from (opts->seed, batch). */
int gsnap_sampler_random_seeds(gsnap_sampler *s, uint64_t batch, size_t n, uint64_t *out);

/** Refresh now, in the calling thread: the mode's refresh (FCR: rebuild;
 *  FSCR / PCF / PSCR: gamma share of every cached entry), committed (with a
 *  snapshot) in one write transaction as the next generation (the changed
 *  entries and the generation). GSNAP_EBUSY while a background refresh runs.
 *  Complexity: one scan of the store, O(V + E), plus the writes. Without a
 *  snapshot in frozen mode (max_staleness < 0), with the fixed policy and
 *  core_min 0, FCR and FSCR (-SC) refresh lazily: this call (and _async, then done at once) only moves the
 *  generation, O(1), and each entry is brought to it by the first batch that
 *  serves it (or, for a cache whose batches touch most of its changing
 *  entries, all of them at the generation's first batch, shared by the
 *  workers), with the same result as the eager refresh (docs/sampler.md). */
int gsnap_sampler_refresh(gsnap_sampler *s);

/** Start the same refresh on a background thread over a copy of the cache;
 *  sampling goes on from the current generation and switches to the new one
 *  at the first batch after it is committed. GSNAP_EBUSY if one is running. */
int gsnap_sampler_refresh_async(gsnap_sampler *s);
/** Wait for a background refresh (if any) and adopt its generation; returns
 *  its result. */
int gsnap_sampler_refresh_wait(gsnap_sampler *s);

/**
 * Follow `snapshot advance`: call between batches (a batch boundary, never
 * inside gsnap_sampler_next). Reads the snapshot's newest version; with
 * move = 1 and a newer one, reopens the snapshot, moves the sampler's (T, V)
 * to it and reloads degrees and cached lists from its table (one cursor
 * pass plus one lookup per cached entry; no store scan). *lag (may be NULL)
 * receives the versions still behind (0 after a move); stats keep
 * snap_version and snap_version_lag. GSNAP_EINVAL without a snapshot,
 * GSNAP_EBUSY while a background refresh runs.
 */
int gsnap_sampler_follow(gsnap_sampler *s, int move, uint64_t *lag);

/** The shared host tier's last note (options.shared): why a published image
 *  was refused ("<file>: payload checksum mismatch", ...) or could not be
 *  published, or NULL when there is none. Owned by s, valid until the next
 *  call on s. The counters are in gsnap_sampler_stats (shared_*). */
const char *gsnap_sampler_shared_note(const gsnap_sampler *s);

/** Statistics so far (copied into *st). */
void gsnap_sampler_stats_get(const gsnap_sampler *s, gsnap_sampler_stats *st);
/** XXH3 checksum of the cached lists of the generation being served. O(cache). */
uint64_t gsnap_sampler_cache_checksum(const gsnap_sampler *s);

/* ---- adaptive refresh and the run-time core (issue 18) ------------------- */

/** The gamma chosen for one layer at one scheduled refresh, with its inputs. */
typedef struct {
    uint64_t batch;       /* batch number at which the refresh ran */
    uint32_t layer;       /* DGL order (0 = input layer); an -SC mode records its
                             one shared choice as layer L-1 */
    uint32_t policy;      /* gsnap_refresh_policy */
    double gamma;         /* the share chosen, in [0, 1] */
    /* MISS inputs (sums over the window's batches; an -SC mode pools its layers): */
    uint64_t needed;      /* frontier nodes served at a cached layer */
    uint64_t not_held;    /* ... with no entry though eligible (degree above the
                             threshold; with a run-time core: a core candidate) */
    uint64_t stale;       /* ... with an entry whose node got edges and that is more
                             than max_staleness versions old */
    double delta_h;       /* (not_held + stale) / needed (0 when needed is 0) */
    double lambda;
    /* FEEDBACK inputs: */
    double statistic;     /* last reported value (-1: none reported yet, gamma =
                             options.gamma) */
    double kappa;
} gsnap_gamma_choice;

/** The run-time core and the refresh decisions so far. */
typedef struct {
    uint32_t policy;          /* gsnap_refresh_policy */
    uint32_t dynamic_core;    /* 1 when core_min > 0 */
    uint64_t decisions;       /* scheduled refreshes at which gamma was chosen */
    uint64_t skipped;         /* FSCR / PCF refreshes skipped: every gamma was 0 */
    uint64_t core_nodes;      /* nodes holding an entry now (in any cache) */
    uint64_t core_bytes;      /* their bytes (per member: sum over caches of 20 + 12 * cap)
                                 plus a run-time core's own arrays (core_max_bytes) */
    uint64_t core_joined;     /* nodes that joined the run-time core so far */
    uint64_t core_left;       /* nodes that left it so far */
    uint64_t core_capped;     /* candidates kept out by core_max_bytes at the last update */
} gsnap_adapt_stats;

/**
 * FEEDBACK policy: report the trainer's statistic for `layer` (DGL order,
 * 0 = input layer; e.g. the gradient variance of that layer's weights). The
 * next scheduled refresh uses the last value reported per layer: gamma =
 * min(1, kappa * value). Returns GSNAP_OK, or GSNAP_EINVAL (s NULL, layer
 * >= layers, value negative or not finite, or the sampler's policy is not
 * FEEDBACK; the database's error message says which). One thread at a time per sampler (as every sampler call). O(1).
 */
int gsnap_sampler_report(gsnap_sampler *s, unsigned layer, double value);

/**
 * The gamma decisions so far, oldest first: copies up to `max` records into
 * out (NULL is fine with max 0) and returns how many there are in all (one
 * record per cached layer per scheduled refresh of an OTF mode, kept only
 * when the sampler has adaptive state: a miss or feedback policy, or a
 * run-time core (options.core_min); 0 otherwise, for FBL and FCR, and before
 * the first refresh). Kept until close. One thread at a time
 * per sampler. O(max).
 */
size_t gsnap_sampler_gamma_history(const gsnap_sampler *s, gsnap_gamma_choice *out, size_t max);

/** Policy and core statistics (copied into *st; zeros for s NULL). O(nodes *
 *  caches): counts the core. One thread at a time per sampler. */
void gsnap_sampler_adapt_stats_get(const gsnap_sampler *s, gsnap_adapt_stats *st);

/**
 * Refresh a snapshot's caches (what `graphsnap refresh` runs): opens a
 * sampler on it with opts (mode picks the cache layout: per-layer or -SC),
 * runs one refresh committed as the next generation, closes. *generation
 * (may be NULL) receives the new generation.
 */
int gsnap_snapshot_refresh_caches(gsnap_db *db, const char *snapshot,
                                  const gsnap_sampler_options *opts, uint64_t *generation);

/* ---- the mini-batch buffer ------------------------------------------------
 * One contiguous buffer, 8-byte aligned, little endian:
 *   header (64 bytes): u32 magic "GSMB" (0x424d5347), u16 format (2; 1 is
 *     still read), u16 layers L, u64 total bytes, u64 batch number, u64
 *     generation, u64 store version, u64 seeds, u16 nattr (0..2; format 1:
 *     0), 6 bytes zero, u64 offset of the attribute descriptors (0 if none).
 *   L layer descriptors (48 bytes each, layer 0 = input side, as DGL's
 *     blocks[0]): u32 num_dst, u32 num_src, u64 num_edges, u64 offset of
 *     src ids, u64 offset of indptr, u64 offset of indices, u64 zero.
 *   arrays, each starting 8-aligned: src ids u64[num_src] (the first num_dst
 *     are the destination nodes), indptr u32[num_dst + 1] (CSR over the
 *     destinations), indices u32[num_edges] (positions in src ids).
 *   attribute sections (format 2, options features / labels): nattr
 *     descriptors of 32 bytes: u32 kind (1 = features of layer 0's sources,
 *     2 = labels of the seeds), u32 dtype (gsnap_dtype), u32 dim, u32 zero,
 *     u64 rows, u64 offset of the data; then each data array, 8-aligned:
 *     rows * dim elements, row-major (read with gsnap_block_features /
 *     gsnap_block_labels). Feature rows follow layer 0's src ids; label rows
 *     the last layer's destinations (the seeds).
 * Layer i's destinations are layer i+1's sources; the last layer's
 * destinations are the seeds.
 */
#define GSNAP_BLOCK_MAGIC 0x424d5347u
#define GSNAP_BLOCK_FORMAT 2u

/** A view of one layer of a packed buffer (pointers into the buffer). */
typedef struct {
    uint32_t num_dst, num_src;
    uint64_t num_edges;
    const uint64_t *src_ids;  /* original node ids; src_ids[0..num_dst) = destinations */
    const uint32_t *indptr;   /* num_dst + 1 */
    const uint32_t *indices;  /* num_edges, each < num_src */
} gsnap_block;

/** Check a buffer structurally: magic, sizes, offsets in range, indptr
 *  monotone, indices < num_src, destinations a prefix of the sources and
 *  equal to the next layer's sources, no duplicate source id and no duplicate
 *  neighbour within one destination's edges; format 2: attribute descriptors
 *  well formed, data inside the buffer, feature rows = layer 0's num_src,
 *  label rows = the seeds. GSNAP_OK or GSNAP_ECORRUPT / GSNAP_EFORMAT. O(size). */
int gsnap_block_check(const void *buf, size_t len);
/** Number of layers of a buffer (0 when the header is bad). */
unsigned gsnap_block_layers(const void *buf, size_t len);
/** View of layer i (0 = input side). GSNAP_ERANGE when i >= layers. */
int gsnap_block_get(const void *buf, size_t len, unsigned i, gsnap_block *out);
/** Header fields (any pointer may be NULL). */
int gsnap_block_info(const void *buf, size_t len, uint64_t *batch, uint64_t *generation,
                     uint64_t *version);

/* ---- staging --------------------------------------------------------------
 * Staging copies packed mini-batches into `nbuf` pinned host buffers and from
 * there to device memory with cudaMemcpyAsync on a stream of its own, so the
 * copy of batch t runs while batch t+1 is sampled. The CUDA runtime is not
 * linked: the first stager opened on a device loads libcudart with dlopen
 * ($GSNAP_CUDART if set, else libcudart.so.13/.12/.11.0/.so through the
 * loader's path, then the build's CUDA_HOME/lib64). Without a runtime, without
 * a device at run time, or in a build with GSNAP_NO_CUDA, the same calls hand
 * back host buffers.
 */
typedef struct gsnap_stager gsnap_stager;

/** Open a stager with nbuf (>= 2; 0 = 2) buffers of `capacity` bytes each
 *  (grown on demand). device: -1 = host only, >= 0 = that CUDA device if
 *  present (else host). */
int gsnap_stager_open(size_t capacity, unsigned nbuf, int device, gsnap_stager **out);
/** 1 when buffers land in device memory, 0 when they are host buffers. */
int gsnap_stager_on_device(const gsnap_stager *st);
/** Copy buf[0..len) into the next free slot (waiting for that slot's previous
 *  copy to finish) and start its transfer; *ticket names the slot. */
int gsnap_stager_submit(gsnap_stager *st, const void *buf, size_t len, unsigned *ticket);
/** Two-step submit, for a producer that writes the batch itself (no copy):
 *  reserve waits for the next slot's previous transfer, grows the slot to
 *  len bytes when needed and hands out its host buffer (*host: len bytes,
 *  pinned on the device path, 64-byte aligned) and *ticket; the slot's old
 *  ticket is refused from here on. commit(ticket, len <= the reserved len)
 *  starts the transfer; only then can the ticket be waited for. One
 *  reservation at a time: reserve again before the commit answers
 *  GSNAP_ESTATE, and so does wait/retire/read_back of a reserved ticket.
 *  gsnap_stager_submit is reserve + memcpy + commit.
 *  reserve returns GSNAP_OK, GSNAP_EINVAL, GSNAP_ESTATE, GSNAP_ENOMEM (the
 *  slot cannot grow to len: it is left empty, its old ticket refused),
 *  GSNAP_ERANGE (2^32 tickets used), or the wait's CUDA error; commit
 *  GSNAP_OK, GSNAP_EINVAL, GSNAP_ESTATE (not the reserved ticket),
 *  GSNAP_ERANGE (len beyond the slot), or the copy's CUDA error. */
int gsnap_stager_reserve(gsnap_stager *st, size_t len, void **host, unsigned *ticket);
int gsnap_stager_commit(gsnap_stager *st, unsigned ticket, size_t len);
/** Wait for `ticket`'s transfer; *ptr = device pointer (or the host buffer),
 *  valid until the slot is reused (nbuf submits later). */
int gsnap_stager_wait(gsnap_stager *st, unsigned ticket, void **ptr, size_t *len);
/** The consumer has queued all its work on `ticket`'s device buffer on
 *  `stream` (a cudaStream_t; NULL = the legacy default stream, (void *)2 =
 *  the per-thread default stream). The next copy into that slot is ordered
 *  after that work on the GPU (an event recorded on `stream` now, waited for
 *  by the stager's stream before the copy): without this call, a consumer
 *  whose kernels are still queued when the slot is reused nbuf submits later
 *  would read the newer batch. The host does not block. Call it once per
 *  stream that read the buffer, after the last such launch and before the
 *  slot's next submit. On the host path it only checks the ticket.
 *  Returns GSNAP_OK, GSNAP_EINVAL, GSNAP_ESTATE (ticket reused or never
 *  issued), GSNAP_EIO (the runtime refused the stream). */
int gsnap_stager_retire(gsnap_stager *st, unsigned ticket, void *stream);
/** Copy a staged buffer back to host memory (tests): device-to-host or memcpy. */
int gsnap_stager_read_back(gsnap_stager *st, unsigned ticket, void *dst, size_t len);
/** Free all buffers (waits for transfers). NULL is fine. */
void gsnap_stager_close(gsnap_stager *st);
/**
 * gsnap_sampler_next with the batch packed, and its features and labels
 * gathered, straight into the next slot of `st` (gsnap_stager_reserve), then
 * its transfer started (gsnap_stager_commit): the same bytes as
 * gsnap_sampler_next followed by gsnap_stager_submit, without the copy into
 * the slot. *ticket is for gsnap_stager_wait; *host (may be NULL) and *len
 * give the packed batch in the slot's host buffer (readable until the slot
 * is reused). seeds NULL (random seeds) with workers > 1, where batches are
 * made ahead into the workers' buffers, falls back to next + submit.
 * Returns what gsnap_sampler_next and the stager calls return; on an error
 * no ticket is handed out (a slot already reserved is committed empty).
 */
int gsnap_sampler_next_staged(gsnap_sampler *s, const uint64_t *seeds, size_t nseeds,
                              gsnap_stager *st, unsigned *ticket, const void **host,
                              size_t *len);
/* end of the sampler section */

/* ---- node features and labels ---------------------------------------- */
/*
 * An attribute table holds one row of `dim` elements of one dtype per node,
 * versioned like edges: a row update is an event at (t, version). Updates are
 * written by a batch (gsnap_batch_set_attr) in the same write transaction as
 * its edges, so a reader at version V - 1 never sees an update of version V.
 * A point-in-time read at (T, V) answers, per node, the row with the greatest
 * event time <= T among the updates of versions <= V (ties: the later version,
 * then the later update within the batch). Nothing is ever overwritten in
 * place: history stays readable. Deleting edges does not touch attributes.
 * Labels are attributes too (e.g. a dim-1 i64 table).
 * Threading: as the rest of the store: any thread, one batch per handle.
 */

/** Element type of an attribute table. */
typedef enum gsnap_dtype {
    GSNAP_DTYPE_F32 = 1,  /* float32 */
    GSNAP_DTYPE_F16 = 2,  /* IEEE 754 binary16 */
    GSNAP_DTYPE_BF16 = 3, /* bfloat16 */
    GSNAP_DTYPE_I64 = 4   /* int64 (labels, ids) */
} gsnap_dtype;

/** Bytes of one element of dtype (0 for an unknown dtype). */
size_t gsnap_dtype_size(gsnap_dtype dtype);
/** Name of a dtype ("f32", "f16", "bf16", "i64"; "?" when unknown). Static. */
const char *gsnap_dtype_name(gsnap_dtype dtype);
/** Parse a dtype name (as above, case-insensitive; also "float32", "float16",
 *  "bfloat16", "int64"). GSNAP_EINVAL when unknown. */
int gsnap_dtype_parse(const char *name, gsnap_dtype *dtype);

/** Largest row: elements per node of one table. */
#define GSNAP_ATTR_MAX_DIM 65536u

/**
 * Create attribute table `name` ([A-Za-z0-9_.-], 1..63 chars) with `dim`
 * (1..GSNAP_ATTR_MAX_DIM) elements of `dtype` per node, in its own write
 * transaction (not part of a batch). Idempotent when the table exists with
 * the same dtype and dim. Durable on return (as the db's sync mode).
 * Returns GSNAP_OK, GSNAP_EEXIST (exists with another dtype or dim: the
 * detail names both shapes), GSNAP_EINVAL (bad name, dtype or dim),
 * GSNAP_EACCES (read-only db), store errors. O(log tables).
 */
int gsnap_attr_create(gsnap_db *db, const char *name, gsnap_dtype dtype, uint32_t dim);

/** Description of an attribute table. */
typedef struct {
    char name[64];
    gsnap_dtype dtype;
    uint32_t dim;
    uint64_t updates;         /* row updates stored (all versions) */
    uint64_t created_version; /* store version when created */
} gsnap_attr_info;

/** Describe table `name` as of the newest committed version. GSNAP_OK,
 *  GSNAP_NOTFOUND (no such table), GSNAP_EINVAL, GSNAP_ECHECKSUM /
 *  GSNAP_EFORMAT (catalog entry damaged / newer format). */
int gsnap_attr_info_get(gsnap_db *db, const char *name, gsnap_attr_info *info);

/** All tables, sorted by name. *infos (NULL when *n is 0) is freed with
 *  gsnap_free. O(tables). */
int gsnap_attr_list(gsnap_db *db, gsnap_attr_info **infos, size_t *n);

/**
 * In an open batch: set the rows of table `name` for n nodes; row i is
 * nodes[i] at event time t[i] (t may be NULL: time 0 for all; GSNAP_TIME_MAX
 * is reserved), values = n * dim elements of the table's dtype, row-major
 * (copied: the caller's arrays may be reused on return). The rows become
 * visible from the batch's version on, atomically with its edges; a batch
 * holding only attribute rows still commits a new version. Several updates
 * of one (node, t) in a batch: the last one wins.
 * Returns GSNAP_OK, GSNAP_NOTFOUND (no such table; the batch stays usable),
 * GSNAP_EINVAL (bad arguments), GSNAP_ERANGE (t = GSNAP_TIME_MAX),
 * GSNAP_ENOMEM (the batch is failed then). O(n * dim) copying.
 */
int gsnap_batch_set_attr(gsnap_batch *b, const char *name, const uint64_t *nodes,
                         const int64_t *t, const void *values, size_t n);

/**
 * Point-in-time gather: out[i] = the row of nodes[i] with the greatest event
 * time <= at among updates committed in versions <= version (ties: the later
 * version, then the later update within a batch). A node with no such row
 * gets zeros and found[i] = 0 (found may be NULL), else found[i] = 1. `out`
 * holds n * dim elements of the table's dtype. rd: a read view (NULL = a view
 * of its own). at = GSNAP_TIME_MAX and version = GSNAP_VERSION_LATEST mean
 * "now" (the newest version of the view). Every row read is checked against
 * its XXH3 checksum. Duplicated nodes are fine.
 * Returns GSNAP_OK, GSNAP_NOTFOUND (no such table), GSNAP_EINVAL,
 * GSNAP_ECHECKSUM (a stored row fails its checksum: the detail names the
 * table and node), GSNAP_ECORRUPT, store errors.
 * Complexity: O(n log R) B-tree seeks for R stored rows (nodes are visited in
 * sorted order), plus the rows skipped that were written after `version`.
 * Threading: any thread; rd is per thread.
 */
int gsnap_attr_read(gsnap_db *db, gsnap_read *rd, const char *name,
                    const uint64_t *nodes, size_t n, int64_t at, uint64_t version,
                    void *out, uint8_t *found);

/** Verify every attribute table: catalog entries (checksum, format, shape),
 *  every row's checksum, key order and size, version <= latest, per-table
 *  update counts. Each problem is reported through `report` (may be NULL);
 *  *problems (may be NULL) receives their number. Returns GSNAP_OK when the
 *  walk completed (problems or not), or a store error. O(rows). `graphsnap
 *  check` runs it after gsnap_db_check. */
int gsnap_attr_check(gsnap_db *db, gsnap_problem_fn report, void *ctx, uint64_t *problems);

/** An attribute array packed into a mini-batch buffer (pointers into it). */
typedef struct {
    const void *data;  /* rows*dim elements of dtype, row-major, 8-aligned */
    uint64_t rows;     /* features: blocks[0].num_src (same order as its
                          src_ids); labels: the number of seeds (same order
                          as the last block's destinations) */
    uint32_t dim;
    gsnap_dtype dtype;
} gsnap_batch_attr;

/** The features (gathered for layer 0's source nodes) packed with a batch.
 *  GSNAP_NOTFOUND if the batch has none (format-1 buffers never do),
 *  GSNAP_ECORRUPT / GSNAP_EFORMAT / GSNAP_EINVAL for a bad buffer. O(1). */
int gsnap_block_features(const void *buf, size_t len, gsnap_batch_attr *out);
/** The seeds' labels packed with a batch; as gsnap_block_features. */
int gsnap_block_labels(const void *buf, size_t len, gsnap_batch_attr *out);
/* ---- end of the features section -------------------------------------- */

/* ---- temporal neighbour sampling -------------------------------------- */
/*
 * Temporal neighbour sampling (sampler/temporal*.c, docs/temporal.md): the
 * mini-batches of temporal GNNs (TGAT, TGN, JODIE, ... as trained by TGL).
 * A root is (node, t). Its candidates are the edge EVENTS of `node` in
 * direction `dir` with event time < t (<= t with `inclusive`) committed in
 * versions <= V, that are still live at time t (t-1 for strict) under the
 * store's delete rule (a delete removes the oldest live instance of the pair;
 * a deleted instance is a candidate for roots before its delete time only):
 * exactly the instances gsnap_neighbors(node, dir, t - 1 (or t), V) answers.
 * Multi-edges are distinct events (each add is its own candidate), unlike
 * the collapsed pairs of the snapshot sampler.
 * The sampler keeps an in-memory T-CSR (each node's events sorted by
 * (t, version, neighbour, batch order)) built from one read view at version V
 * and extended to newer versions by gsnap_tsampler_refresh from the store's
 * per-version log of touched nodes: it never sees a version it was not
 * refreshed to. A sample costs O(log deg + f) per root (plus the deleted
 * events inside the root's range, for nodes that have deletes).
 * ------------------------------------------------------------------------- */
#define GSNAP_TS_MAX_LAYERS 8
/** Strategies: UNIFORM: f distinct candidates uniformly (all when fewer);
 *  RECENT: the f most recent candidates (ties by version, then neighbour id,
 *  then batch order); WINDOW: uniform without replacement among candidates
 *  with time in [t - window, t) ([t - window, t] with inclusive). */
typedef enum { GSNAP_TS_UNIFORM = 0, GSNAP_TS_RECENT = 1, GSNAP_TS_WINDOW = 2 } gsnap_ts_strategy;
#define GSNAP_TSAMPLER_OPTIONS_VERSION 1
typedef struct {
    unsigned version;        /* GSNAP_TSAMPLER_OPTIONS_VERSION */
    gsnap_dir dir;           /* IN (default): sample u of events u -> root */
    gsnap_ts_strategy strategy;
    int inclusive;           /* 0: t_edge < t_root (default); 1: t_edge <= t_root */
    int64_t window;          /* WINDOW: width w > 0 */
    uint64_t as_of;          /* version V to build at; GSNAP_VERSION_LATEST = newest */
    uint64_t seed;           /* random seed */
    unsigned layers;         /* 1..GSNAP_TS_MAX_LAYERS */
    uint32_t fanouts[GSNAP_TS_MAX_LAYERS]; /* fanouts[0]: the roots' own hop (TGL
                                              order), each 1..1000000 */
} gsnap_tsampler_options;
#define GSNAP_TSAMPLER_OPTIONS_INIT                                                        \
    {GSNAP_TSAMPLER_OPTIONS_VERSION, GSNAP_DIR_IN, GSNAP_TS_UNIFORM, 0, 0,                 \
     GSNAP_VERSION_LATEST, 1, 1, {10, 0, 0, 0, 0, 0, 0, 0}}
typedef struct gsnap_tsampler gsnap_tsampler;
/**
 * Open a temporal sampler on db: checks the options (GSNAP_EINVAL naming the
 * field), reads every event of `dir` at version opts->as_of in one read view
 * and builds the T-CSR. Memory: 32 bytes per add event + 24 per node.
 * Time: O(E log d). GSNAP_ENOTSUP if the store does not keep `dir`.
 * The sampler reads only the memory it built: db may take new batches
 * meanwhile (from any thread or process); it must stay open until
 * gsnap_tsampler_close. One thread at a time per sampler.
 */
int gsnap_tsampler_open(gsnap_db *db, const gsnap_tsampler_options *opts, gsnap_tsampler **out);
/**
 * Extend the sampler to version `upto` (GSNAP_VERSION_LATEST = newest
 * committed): the nodes whose adjacency in `dir` changed in versions
 * (current, upto] (the store's change log) are re-read at `upto`; everything
 * else is kept. *version (may be NULL) receives the version now served.
 * GSNAP_EINVAL if upto is older than the current version. Cost O(changed
 * nodes' events); the space of replaced lists is reclaimed once it exceeds
 * the live events.
 */
int gsnap_tsampler_refresh(gsnap_tsampler *ts, uint64_t upto, uint64_t *version);
/** Version the sampler serves (every sampled event has version <= it). */
uint64_t gsnap_tsampler_version(const gsnap_tsampler *ts);
/** Sizes of the T-CSR: add events and nodes held (either may be NULL). */
void gsnap_tsampler_size(const gsnap_tsampler *ts, uint64_t *events, uint64_t *nodes);
/**
 * Sample one mini-batch for the n roots (nodes[i], times[i]), batch number
 * `batch`. Layer 0's roots are the given roots; layer l+1's roots are layer
 * l's sampled neighbours, in order, each at the time of its sampled edge
 * (TGL's multi-hop rule). Every random draw is a pure function of (seed,
 * batch, layer, root index): the same call gives the same bytes.
 * buf and len receive the packed buffer (format below), owned by the sampler,
 * valid until the next sample call or close (copy it, or stage it with
 * gsnap_stager_submit). n may be 0; any root time is valid (a strict root
 * at INT64_MIN has no candidate; GSNAP_TIME_MAX means "now"). A node without
 * events has no candidate (not an error). GSNAP_EINVAL for NULL arrays with
 * n > 0 (gsnap_tsampler_errmsg says which); GSNAP_ERANGE when a layer would
 * exceed 2^32 - 1 roots; GSNAP_ENOMEM. Time: O(sum over roots of log deg + f).
 */
int gsnap_tsampler_sample(gsnap_tsampler *ts, const uint64_t *nodes, const int64_t *times,
                          size_t n, uint64_t batch, const void **buf, size_t *len);
/** n random root nodes for batch `batch`: uniform over the nodes that have at
 *  least one event in `dir` (with replacement), a pure function of (seed,
 *  batch). Fills nodes[0..n); GSNAP_NOTFOUND when the sampler holds no event. */
int gsnap_tsampler_random_nodes(gsnap_tsampler *ts, uint64_t batch, size_t n, uint64_t *nodes);
/** Detail message of the last failure on the sampler ("" when none). */
const char *gsnap_tsampler_errmsg(const gsnap_tsampler *ts);
/** Free the sampler (and the buffer of its last batch). NULL is fine. */
void gsnap_tsampler_close(gsnap_tsampler *ts);

/* ---- the temporal mini-batch buffer ---------------------------------------
 * One contiguous buffer, 8-byte aligned, little endian:
 *   header (64 bytes): u32 magic "GTSB" (0x42535447), u16 format (1), u16
 *     layers L, u64 total bytes, u64 batch, u64 store version, u64 seed,
 *     u32 flags (strategy | dir << 4 | inclusive << 8), u32 zero,
 *     i64 window, u64 zero.
 *   L layer descriptors (80 bytes): u64 num_roots R, u64 num_edges E, then
 *     the offsets (u64) of root_node u64[R], root_t i64[R], indptr u64[R+1],
 *     nbr u64[E], edge_t i64[E], edge_version u64[E], edge_index u64[E],
 *     dt i64[E], in that order.
 * Edges indptr[i]..indptr[i+1] belong to root i, in ascending
 * (t, version, neighbour) order; edge_index is the event's position in the
 * root node's time-ordered event list at the buffer's version; dt = root_t -
 * edge_t (> 0 strict, >= 0 inclusive). Layer l+1's roots are layer l's
 * (nbr, edge_t), in order.
 */
#define GSNAP_TBLOCK_MAGIC 0x42535447u
#define GSNAP_TBLOCK_FORMAT 1u
/** View of one layer of a temporal buffer (pointers into the buffer). */
typedef struct {
    uint64_t num_roots, num_edges;
    const uint64_t *root_node;
    const int64_t *root_t;
    const uint64_t *indptr;       /* num_roots + 1 */
    const uint64_t *nbr;          /* num_edges */
    const int64_t *edge_t;
    const uint64_t *edge_version;
    const uint64_t *edge_index;
    const int64_t *dt;            /* root_t - edge_t */
} gsnap_tblock;
/** Check a temporal buffer: magic, format (GSNAP_EFORMAT for another
 *  version), total size == len, offsets in range and aligned, indptr
 *  monotone from 0 to num_edges, dt == root_t - edge_t and > 0 (>= 0
 *  inclusive), within the window for WINDOW, each root's edges in time order,
 *  layer l+1's roots equal to layer l's (nbr, edge_t). GSNAP_OK,
 *  GSNAP_ECORRUPT, GSNAP_EFORMAT, GSNAP_EINVAL (NULL or misaligned). O(len). */
int gsnap_tblock_check(const void *buf, size_t len);
/** Number of layers (0 when the header is bad). O(1). */
unsigned gsnap_tblock_layers(const void *buf, size_t len);
/** View of layer i; GSNAP_ERANGE when i >= layers, GSNAP_ECORRUPT when an
 *  array lies outside the buffer. O(1); views valid while buf is. */
int gsnap_tblock_get(const void *buf, size_t len, unsigned i, gsnap_tblock *out);
/** Header fields (any pointer may be NULL). */
int gsnap_tblock_info(const void *buf, size_t len, uint64_t *batch, uint64_t *version,
                      uint64_t *seed);

/* ---- event streams for training -------------------------------------------
 * The add events of the store at version V in time order (t, version, src,
 * dst), in batches of `batch_size` ("the next 600 events"), each with
 * `negatives` negative destinations drawn uniformly over the nodes seen so far
 * (the nodes, as source or destination, of the events up to and including the
 * current batch), as TGL's loaders do. Deletes are not part of the stream
 * (an instance deleted later still happened). Negatives are a pure function
 * of (seed, batch, position, draw) given the stream, so a replay from the
 * start with the same seed gives the same batches.
 */
#define GSNAP_TSTREAM_OPTIONS_VERSION 1
typedef struct {
    unsigned version;    /* GSNAP_TSTREAM_OPTIONS_VERSION */
    uint64_t as_of;      /* version V; GSNAP_VERSION_LATEST = newest */
    size_t batch_size;   /* events per batch; 0 = 600 */
    unsigned negatives;  /* negative destinations per event (0..1000) */
    uint64_t seed;
} gsnap_tstream_options;
#define GSNAP_TSTREAM_OPTIONS_INIT {GSNAP_TSTREAM_OPTIONS_VERSION, GSNAP_VERSION_LATEST, 600, 1, 1}
typedef struct gsnap_tstream gsnap_tstream;
/** One batch: arrays valid until the next call on the stream. */
typedef struct {
    uint64_t batch;        /* batch number, 0-based */
    size_t n;              /* events in this batch (the last may be short) */
    unsigned negatives;
    const uint64_t *src, *dst;
    const int64_t *t;
    const uint64_t *version;
    const uint64_t *neg;   /* n * negatives, row-major: neg[i * negatives + j] */
} gsnap_tstream_batch;
/** Read all add events at as_of (one read view; OUT direction, else IN) and
 *  sort them by time: O(E log E) time, 32 bytes per event. */
int gsnap_tstream_open(gsnap_db *db, const gsnap_tstream_options *opts, gsnap_tstream **out);
/** Next batch: GSNAP_OK, or GSNAP_NOTFOUND after the last event. */
int gsnap_tstream_next(gsnap_tstream *st, gsnap_tstream_batch *out);
/** Start over (same batches, same negatives). */
void gsnap_tstream_rewind(gsnap_tstream *st);
/** Events in the stream, and the version it reads (either may be NULL). */
void gsnap_tstream_info(const gsnap_tstream *st, uint64_t *events, uint64_t *version);
void gsnap_tstream_close(gsnap_tstream *st);
/* ---- end of the temporal section -------------------------------------- */

/* ---- operations: backup, dump/load, log, retention --------------------- */
/*
 * Version log. Every commit (format 2 and later) writes one record per
 * version, in the commit's own write transaction: commit time, event counts,
 * and where the events came from (a file and its line range, or "api").
 * Databases of store format 1 have no records for the versions committed
 * before they were upgraded: those show known = 0 ("unknown").
 */

/** Longest source name kept in the version log (longer names are cut). */
#define GSNAP_SOURCE_MAX 255

/**
 * Record where the batch's events come from: `source` (a file name; NULL or
 * "" = "api", the default), and the line range first_line..last_line (0, 0
 * when not from lines). Stored in the batch's version-log record. May be
 * called any number of times before commit; the last call wins. Names
 * longer than GSNAP_SOURCE_MAX bytes are cut. O(1).
 * Returns GSNAP_OK or GSNAP_EINVAL (bad batch, first_line > last_line).
 */
int gsnap_batch_set_source(gsnap_batch *b, const char *source, uint64_t first_line,
                           uint64_t last_line);

/** Set the commit time recorded in the version log (nanoseconds since the
 *  Unix epoch) instead of the clock at commit; what `load` uses to keep a
 *  dump's times. Also lets a batch with no events be committed as a version
 *  of its own (load needs it for versions whose events were all folded away
 *  by a retention compaction). GSNAP_EINVAL for a bad batch or t < 0. */
int gsnap_batch_set_commit_time(gsnap_batch *b, int64_t unix_ns);

/** One version's log record. */
typedef struct {
    uint64_t version;
    int known;               /* 0: no record (committed by a format-1 build) */
    int folded;              /* 1: before the retention horizon (see compact) */
    int64_t commit_ns;       /* commit wall-clock time, ns since the Unix epoch */
    uint64_t adds, deletes;  /* events committed in the version */
    int64_t min_t, max_t;    /* range of their event times */
    char source[GSNAP_SOURCE_MAX + 1]; /* file name, or "api" */
    uint64_t first_line, last_line;    /* line range in source (0, 0 = none) */
} gsnap_version_info;

/**
 * Version-log records of versions from..to (inclusive; to = GSNAP_VERSION_LATEST
 * for the newest), as seen by rd (NULL: a short view of its own). *out is
 * an array of *n entries in version order, freed with gsnap_free (NULL when
 * *n is 0). Versions without a record come back with known = 0.
 * Every record's XXH3 checksum is verified (GSNAP_ECHECKSUM naming the
 * version). O(to - from). Returns GSNAP_OK, GSNAP_EINVAL, GSNAP_ENOMEM,
 * GSNAP_ECORRUPT, GSNAP_ECHECKSUM.
 */
int gsnap_db_log(gsnap_db *db, gsnap_read *rd, uint64_t from, uint64_t to,
                 gsnap_version_info **out, size_t *n);

/** One edge instance that a diff found added or removed. */
typedef struct {
    uint64_t src, dst;
    int64_t t;         /* event time of the add that created the instance */
    uint64_t version;  /* version that committed that add */
    int added;         /* 1: live at v2 but not at v1; 0: live at v1, not at v2 */
} gsnap_diff_edge;

/**
 * Edge instances added and removed between versions v1 and v2 (v1 <= v2;
 * both at event time "now"): an instance counts as added when it is live at
 * v2 and not at v1, removed when live at v1 and not at v2. `node` =
 * UINT64_MAX: the whole graph (only nodes that versions v1+1..v2 touched are
 * looked at); otherwise only edges with that node as source or destination.
 * *out (sorted by src, dst, t, version; removed before added) has *n
 * entries, freed with gsnap_free. Uses the OUT adjacency when kept, else IN.
 * GSNAP_ERANGE when v1 > v2, v2 is past the newest version, or v1 is before
 * the retention horizon. O(changed nodes * their degree).
 */
int gsnap_db_diff(gsnap_db *db, gsnap_read *rd, uint64_t v1, uint64_t v2, uint64_t node,
                  gsnap_diff_edge **out, size_t *n);

/*
 * Backup: an online, consistent copy of the database directory.
 */
#define GSNAP_BACKUP_OPTIONS_VERSION 1
typedef struct {
    unsigned version;          /* GSNAP_BACKUP_OPTIONS_VERSION */
    gsnap_progress_fn progress; /* optional: phases "store", "slabs" */
    void *progress_ctx;
} gsnap_backup_options;
#define GSNAP_BACKUP_OPTIONS_INIT {GSNAP_BACKUP_OPTIONS_VERSION, NULL, NULL}

typedef struct {
    uint64_t version;        /* store version the backup holds */
    uint64_t store_bytes;    /* size of the copied data.mdb */
    uint64_t snapshots;      /* complete snapshots copied */
    uint64_t slab_bytes;     /* slab bytes copied (every block verified) */
    uint64_t dropped_incomplete; /* catalog records of unfinished builds left out */
    double seconds;
} gsnap_backup_report;

/**
 * Copy the open database db into the new directory `dest` (it must not
 * exist, or be empty), while other threads and processes go on ingesting,
 * refreshing and building snapshots. The LMDB environment is copied
 * compactly (mdb_env_copyfd2 with MDB_CP_COMPACT: free pages left out) from
 * one read transaction; then exactly the slab files of the snapshots that
 * the copy's catalog lists as complete are copied, every 4 KiB block's
 * checksum verified on the way (the files were opened before the copy's
 * transaction began, so a concurrent drop cannot pull them away; slab files
 * never change once complete). Catalog records of builds still running are
 * removed from the copy. The result opens as a normal database and passes
 * `check`. opts and report may be NULL. Threading: may run beside other
 * threads' reads and writes on db; a write in this process that must grow
 * the map waits until the environment copy ends.
 * Returns GSNAP_OK, GSNAP_EEXIST (dest exists and is not empty),
 * GSNAP_ECHECKSUM (a slab block of the source is damaged: named), GSNAP_EBUSY
 * (a snapshot was dropped and rebuilt under the same name during the copy:
 * retry), GSNAP_EIO, GSNAP_ENOSPC, GSNAP_EACCES, GSNAP_ENOMEM. On failure dest
 * may hold a partial copy (not a valid backup).
 * Complexity: O(live pages + slab bytes), sequential I/O.
 */
int gsnap_db_backup(gsnap_db *db, const char *dest, const gsnap_backup_options *opts,
                    gsnap_backup_report *report);

/*
 * Dump and load: the portable text format of docs/format.md ("graphsnap
 * dump format 2"; load also reads format 1). It is also the upgrade path between store format
 * versions: dump with the old build, load with the new one.
 */
#define GSNAP_DUMP_OPTIONS_VERSION 1
typedef struct {
    unsigned version;          /* GSNAP_DUMP_OPTIONS_VERSION */
    uint64_t from, to;         /* versions to dump; 0, GSNAP_VERSION_LATEST = all */
    int no_snapshots;          /* 1: leave the snapshot definitions out */
    gsnap_progress_fn progress; /* optional: phases "read", "write" */
    void *progress_ctx;
} gsnap_dump_options;
#define GSNAP_DUMP_OPTIONS_INIT {GSNAP_DUMP_OPTIONS_VERSION, 0, GSNAP_VERSION_LATEST, 0, NULL, NULL}

/**
 * Write versions opts->from..opts->to of db to `fp` (a FILE*) in the dump
 * format: a header with the attribute table definitions (name, dtype, dim),
 * then per version its log record, its events in a canonical order (source,
 * destination, time, then commit order) and the attribute rows it wrote
 * (table, node, time, the elements' exact bits), then the definitions of the
 * complete snapshots whose version is in the range (with hop-set kind and
 * caps). The
 * output depends only on the database's contents: dumping a database that
 * was loaded from a dump gives the same bytes. Reads one consistent view.
 * Memory: O(events + attribute rows in the range). Returns GSNAP_OK, GSNAP_ERANGE (from > to,
 * to past the newest version, from before the retention horizon and not 1,
 * to before the retention horizon),
 * GSNAP_EIO (write failed), GSNAP_ENOMEM, store errors.
 */
int gsnap_db_dump(gsnap_db *db, void *fp, const gsnap_dump_options *opts);

#define GSNAP_LOAD_OPTIONS_VERSION 1
typedef struct {
    unsigned version;          /* GSNAP_LOAD_OPTIONS_VERSION */
    int no_snapshots;          /* 1: do not rebuild the dump's snapshots */
    gsnap_progress_fn progress; /* optional: phases "load", "snapshots" */
    void *progress_ctx;
} gsnap_load_options;
#define GSNAP_LOAD_OPTIONS_INIT {GSNAP_LOAD_OPTIONS_VERSION, 0, NULL, NULL}

typedef struct {
    uint64_t versions;       /* versions committed */
    uint64_t events;         /* events committed */
    uint64_t snapshots;      /* snapshots rebuilt */
    uint64_t first_version, last_version;
    double seconds;
} gsnap_load_report;

/**
 * Load a dump from `fp` (a FILE*; `name` is used in messages) into db:
 * every dumped version becomes one committed version with the same number,
 * events, attribute rows (tables are created first; an existing table must
 * have the same dtype and dim), commit time and source, so db's newest version must be the dump's
 * first version - 1 (0: an empty database, for a full dump). A dump of a
 * compacted database restores its retention horizon. Then the snapshots are
 * rebuilt with their definitions and hop-set kind and caps (their cache
 * generations start over; a format-1 dump's snapshots get the AUTO kind).
 * A malformed line fails with GSNAP_EPARSE naming name:line; the versions
 * committed before it stay (report->last_version). Returns GSNAP_OK,
 * GSNAP_EPARSE, GSNAP_EFORMAT (dump format version not supported),
 * GSNAP_ERANGE (the versions do not follow db's newest), store errors.
 */
int gsnap_db_load(gsnap_db *db, void *fp, const char *name, const gsnap_load_options *opts,
                  gsnap_load_report *report);

/*
 * Retention. A compaction with a horizon H folds the history of versions
 * before H: per edge (src, dst) whose events all come before the pair's
 * newer events, its old adds and deletes are replayed and replaced by the
 * instances still live after them (keeping their times and versions).
 * Afterwards queries with as_of >= H and at_t >= the horizon time (the
 * latest event time among the folded pairs) answer exactly what they did
 * before; queries before the horizon fail with GSNAP_ERANGE ("version 3 is
 * before the retention horizon 10"), never with a wrong answer, and so do
 * new events with a time before the horizon time. Snapshots keep their slab
 * files (k-hop queries go on working); their (T, V) cannot be re-read from
 * the store when it is before the horizon (refresh and samplers fail with
 * GSNAP_ERANGE).
 */
#define GSNAP_COMPACT_OPTIONS_VERSION 1
typedef struct {
    unsigned version;          /* GSNAP_COMPACT_OPTIONS_VERSION */
    uint64_t horizon;          /* fold versions < horizon (0: use the fields below) */
    uint64_t keep_versions;    /* keep the newest N versions queryable (0: unused) */
    int64_t before_ns;         /* fold versions committed before this time (ns since
                                  the epoch; 0: unused) */
    int no_shrink;             /* 1: fold only; do not rewrite the file */
    gsnap_progress_fn progress; /* optional: phases "fold", "copy" */
    void *progress_ctx;
} gsnap_compact_options;
#define GSNAP_COMPACT_OPTIONS_INIT {GSNAP_COMPACT_OPTIONS_VERSION, 0, 0, 0, 0, NULL, NULL}

typedef struct {
    uint64_t horizon;          /* the horizon now in force (first queryable version) */
    int64_t horizon_t;         /* at_t queries must be at or after (INT64_MIN: any) */
    uint64_t records_before, records_after; /* stored records, both directions */
    uint64_t bytes_before, bytes_after;     /* data.mdb size on disk */
    int shrunk;                /* 1: the file was rewritten compactly */
    double seconds;
} gsnap_compact_report;

/**
 * Retention compaction of the database in directory `path` (opened and
 * closed by this call). Folds the history before the horizon (one write
 * transaction: other processes may read and write meanwhile), records the
 * horizon in the store meta, then returns the freed space to the file
 * system: LMDB files never shrink, so the environment is copied compactly
 * next to data.mdb and renamed over it. That swap needs the database
 * exclusively: graphsnap holds a shared flock(2) on the directory while a
 * database is open, and compact takes it exclusively without waiting; when
 * another handle (this process or another) has the database open it returns
 * GSNAP_EBUSY with the history folded but the file not shrunk (run it again
 * when the others are closed). A handle of this process is used for the fold
 * (LMDB allows one environment per file and process; the handle stays open
 * and must not be closed during the call). Returns GSNAP_OK, GSNAP_EBUSY, GSNAP_ERANGE
 * (a horizon past the newest version), GSNAP_EINVAL, store errors; there is
 * no handle for a detail message, so a failure's message is left in
 * gsnap_last_open_error() of the calling thread. A horizon at or below the
 * current one folds nothing (the file is still shrunk). Exactly one of
 * horizon, keep_versions, before_ns must be set. report (may be NULL) is
 * filled also on failure (what was done). O(records) time and I/O.
 */
int gsnap_db_compact_history(const char *path, const gsnap_compact_options *opts,
                             gsnap_compact_report *report);

/**
 * Shrink data.mdb under the open handle db: LMDB never gives pages back to
 * the file system, so the environment is copied compactly (only pages in
 * use) to data.mdb.shrink in the database directory, synced, renamed over
 * data.mdb, and db's environment reopened on it; db stays open and valid,
 * and so do its snapshots, samplers and tables. Crash-safe: a kill at any
 * point leaves either the old or the new file, whole (a leftover
 * data.mdb.shrink is reused by the next shrink). Needs the database alone:
 * graphsnap handles hold a shared flock(2) on the directory, and shrink
 * converts db's to exclusive without waiting. Commits of other threads wait
 * during the copy and the swap; read views of other threads must end within
 * 1 s of the copy; openers in other processes wait in gsnap_db_open until
 * the shrink is done. Costs one sequential copy of the data in use.
 * Returns GSNAP_OK; GSNAP_EBUSY with the file as it was (a message in
 * gsnap_db_errmsg) when another process has the database open or is
 * shrinking it, when another thread is shrinking it through db, when the
 * calling thread holds a read view, or when read views of other threads
 * stayed open; GSNAP_EACCES for a read-only handle;
 * GSNAP_ENOSPC / GSNAP_EIO when the copy could not be written (removed,
 * the file as it was); when the environment cannot be reopened after the
 * swap (the data is safe on disk), the handle's map-lost error: close and
 * reopen. report (may be NULL): bytes_before, bytes_after (data.mdb on
 * disk), shrunk, seconds, the horizon; filled also on failure.
 */
int gsnap_db_shrink(gsnap_db *db, gsnap_compact_report *report);

/** The retention horizon of db: first queryable version (*horizon, 0 or 1:
 *  none) and the earliest queryable event time (*horizon_t, INT64_MIN: none).
 *  Either pointer may be NULL. */
int gsnap_db_horizon(gsnap_db *db, uint64_t *horizon, int64_t *horizon_t);
/* ---- end of the operations section ------------------------------------ */

#ifdef __cplusplus
}
#endif
#endif /* GRAPHSNAP_H */
