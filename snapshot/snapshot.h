/*
 * snapshot/snapshot.h -- the snapshot module's interface to the sampler
 * module (and the CLI). Not installed, not public.
 *
 * The (hop, node) table of a snapshot holds, per key, the SEMHS slab pointer
 * of N_hop(node) and the cached neighbour list of layer `hop`: up to
 * alpha * f_hop 1-hop neighbours of `node` (in the snapshot's direction),
 * sampled uniformly without replacement at the snapshot's (T, V). Each value
 * carries the generation that wrote it and the store version it reflects.
 *
 * hop 0 is reserved for the shared cache of the -SC sampler modes (one list
 * per node of max_h(alpha * f_h) neighbours); it has no slab pointer. The
 * sampler creates and refreshes hop 0 entries itself.
 *
 * Isolation: all reads go through an LMDB read txn and all writes through one
 * LMDB write txn (gsnap_store__write), so a refresh that replaces some keys
 * and bumps the generation is seen whole or not at all. LMDB's MVCC keeps
 * pages of older generations alive while a reader holds them and reuses them
 * afterwards: that is the reclamation of old generations.
 */
#ifndef GSNAP_SNAPSHOT_INT_H
#define GSNAP_SNAPSHOT_INT_H

#include "graphsnap.h"
#include <lmdb.h>

/** Parameters a snapshot was built with (read from its catalog record). */
typedef struct {
    unsigned hops;             /* k, 1..GSNAP_MAX_HOPS */
    uint32_t fanouts[16];      /* f_1..f_k (index 0 = hop 1) */
    double alpha;              /* amplification */
    int64_t at_t;              /* event time of the snapshot */
    uint64_t at_version;       /* store version of the snapshot (resolved, never LATEST) */
    gsnap_dir dir;             /* sampling direction */
    uint64_t seed;             /* random seed of the build */
} gsnap_snapshot__params;

/** Open the snapshot catalog's LMDB table handle. Call it before any read
 *  txn of the caller begins: a table handle opened while a read txn is live
 *  is not valid in that txn. GSNAP_NOTFOUND when no snapshot was ever built. */
int gsnap_snapshot__open_catalog(gsnap_db *db);

/** The parameters of an open snapshot (owned by snap). */
const gsnap_snapshot__params *gsnap_snapshot__get_params(const struct gsnap_snapshot *snap);

/** The database a snapshot belongs to. */
gsnap_db *gsnap_snapshot__db(const struct gsnap_snapshot *snap);

/** The LMDB table of the (hop, node) entries of this snapshot. */
MDB_dbi gsnap_snapshot__dbi(const struct gsnap_snapshot *snap);

/** Cached list of (hop, node) in `txn` (read or write). *ids points into the
 *  LMDB map: valid until the txn ends or the key is written in it. Returns
 *  GSNAP_NOTFOUND when the key has no entry (node with no neighbours at the
 *  snapshot's (T, V), or hop 0 not built yet). Unaligned-safe: ids may be
 *  read with memcpy only (LMDB values are not 8-byte aligned in general), so
 *  this copies into `buf` (capacity `cap` ids) and sets *n to the full count
 *  (GSNAP_ERANGE if *n > cap, nothing else changed). gen/version may be NULL. */
int gsnap_snapshot__cache_get(const struct gsnap_snapshot *snap, MDB_txn *txn,
                              unsigned hop, uint64_t node, uint64_t *buf, size_t cap,
                              size_t *n, uint64_t *gen, uint64_t *version);

/** One verified entry of a table walk: ids points into the LMDB map
 *  (unaligned, little-endian u64s: copy with memcpy), valid during the call. */
typedef struct {
    uint64_t node, gen, version;
    uint32_t n, degree;
    const void *ids;
} gsnap_snapshot__entry;
typedef int (*gsnap_snapshot__walk_fn)(void *ctx, const gsnap_snapshot__entry *e);
/** Call fn for every entry of `hop` in txn, in node order (one cursor pass;
 *  each record's checksum verified first: a damaged one ends the walk with
 *  GSNAP_ECHECKSUM/ECORRUPT/EFORMAT and a message naming its node). A
 *  nonzero return of fn ends the walk and is returned. */
int gsnap_snapshot__walk(const struct gsnap_snapshot *snap, MDB_txn *txn, unsigned hop,
                         gsnap_snapshot__walk_fn fn, void *ctx);
/** Write the cached list of (hop, node) in write txn `txn` as generation
 *  `gen` reflecting store version `version`, keeping the slab pointer already
 *  stored for the key (if any). n may be 0 (an empty list is stored). */
int gsnap_snapshot__cache_put(const struct gsnap_snapshot *snap, MDB_txn *txn,
                              unsigned hop, uint64_t node, const uint64_t *ids, size_t n,
                              uint64_t gen, uint64_t version);

/** Current generation of the snapshot as seen by `txn` (0 after create). */
int gsnap_snapshot__generation(const struct gsnap_snapshot *snap, MDB_txn *txn,
                               uint64_t *gen);
/** Set the generation in write txn `txn` (a refresh sets old + 1). */
int gsnap_snapshot__set_generation(const struct gsnap_snapshot *snap, MDB_txn *txn,
                                   uint64_t gen);

#endif
