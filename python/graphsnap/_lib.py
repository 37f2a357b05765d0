"""Loading libgraphsnap and declaring its C functions (ctypes).

Lookup order: the file named by the GRAPHSNAP_LIB environment variable, then
the repository's build/ directory (when the package is imported from a
checkout: python/graphsnap/../../build), then the directory recorded at
install time (``_install.py`` written by ``make install-python``), then the
system's loader (libgraphsnap.so.0 / libgraphsnap.so, e.g. after
``make install``).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint, c_uint8, c_uint16, c_uint32, c_uint64,
                    c_void_p)

MAX_HOPS = 16
MAX_LAYERS = 16
TIME_MAX = (1 << 63) - 1
VERSION_LATEST = (1 << 64) - 1


def _candidates() -> list[str]:
    out = []
    env = os.environ.get("GRAPHSNAP_LIB")
    if env:
        out.append(env)
        return out  # an explicit choice is not second-guessed
    here = os.path.dirname(os.path.abspath(__file__))
    repo_build = os.path.normpath(os.path.join(here, "..", "..", "build"))
    for n in ("libgraphsnap.so", "libgraphsnap.so.0"):
        out.append(os.path.join(repo_build, n))
    try:
        from . import _install  # type: ignore[attr-defined]
        out.append(_install.LIBRARY)
    except ImportError:
        pass
    out += ["libgraphsnap.so.0", "libgraphsnap.so"]
    found = ctypes.util.find_library("graphsnap")
    if found:
        out.append(found)
    out += ["/usr/local/lib/libgraphsnap.so.0", "/usr/lib/libgraphsnap.so.0"]
    return out


def _load() -> tuple[ctypes.CDLL, str]:
    errors = []
    for c in _candidates():
        if os.sep in c and not os.path.exists(c):
            errors.append(f"{c}: no such file")
            continue
        try:
            return ctypes.CDLL(c), c
        except OSError as e:
            errors.append(f"{c}: {e}")
    raise ImportError("graphsnap: libgraphsnap.so not found (build it with `make`, "
                      "or set GRAPHSNAP_LIB=/path/to/libgraphsnap.so); tried:\n  "
                      + "\n  ".join(errors))


lib, LIBRARY_PATH = _load()


# ---- structs (mirror include/graphsnap.h) ---------------------------------
class DbOptions(Structure):
    _fields_ = [("version", c_uint), ("keep", c_uint), ("sync", c_int), ("map_size", c_size_t),
                ("read_only", c_int), ("max_readers", c_uint), ("create", c_int),
                # options version 2 (database.py passes version 1, read by every library,
                # unless read_cache_bytes is given: then 3)
                ("no_lock", c_int),
                # options version 3
                ("read_cache_bytes", c_int64),
                # options version 4
                ("merge_fanout", c_uint)]


class DbStat(Structure):
    _fields_ = [("version", c_uint64), ("edge_records", c_uint64), ("deletes", c_uint64),
                ("runs", c_uint64), ("map_size", c_uint64), ("file_bytes", c_uint64),
                ("used_bytes", c_uint64), ("min_t", c_int64), ("max_t", c_int64),
                ("keep", c_uint), ("format_version", c_uint),
                ("damaged_runs", c_uint64)]  # 0 from libraries older than issue 11


class Nbr(Structure):
    _fields_ = [("node", c_uint64), ("t", c_int64), ("version", c_uint64)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint64, c_uint64)


class IngestOptions(Structure):
    _fields_ = [("version", c_uint), ("batch_edges", c_size_t), ("skip_bad", c_int),
                ("progress", c_void_p), ("progress_ctx", c_void_p)]


class IngestReport(Structure):
    _fields_ = [("lines", c_uint64), ("events", c_uint64), ("bad_lines", c_uint64),
                ("first_bad_line", c_uint64), ("batches", c_uint64),
                ("first_version", c_uint64), ("last_version", c_uint64), ("seconds", c_double)]


class SnapshotOptions(Structure):
    _fields_ = [("version", c_uint), ("hops", c_uint), ("fanouts", c_uint32 * MAX_HOPS),
                ("alpha", c_double), ("at_t", c_int64), ("as_of", c_uint64), ("dir", c_int),
                ("seed", c_uint64), ("mem_budget", c_size_t), ("progress", c_void_p),
                ("progress_ctx", c_void_p), ("flags", c_uint),
                # version 2 (sampled hop sets; present when HAVE_ADVANCE)
                ("hop_sets", c_uint), ("caps", c_uint32 * MAX_HOPS)]


_SNAPSHOT_INFO = [("name", c_char * 72), ("complete", c_int), ("format_version", c_uint),
                  ("hops", c_uint), ("fanouts", c_uint32 * MAX_HOPS), ("alpha", c_double),
                  ("at_t", c_int64), ("at_version", c_uint64), ("dir", c_int), ("seed", c_uint64),
                  ("generation", c_uint64), ("nodes", c_uint64), ("slab_bytes", c_uint64),
                  ("exact_ids", c_uint64 * MAX_HOPS), ("stored_ids", c_uint64 * MAX_HOPS),
                  ("capped", c_uint64 * MAX_HOPS), ("blocks", c_uint64 * MAX_HOPS),
                  ("build_seconds", c_double), ("created_unix", c_uint64)]
# A library with snapshot advance (sampled hop sets) has three more fields at
# the end of gsnap_snapshot_info: the layout follows the loaded library
# (python/tests/test_abi.py checks it against the header).
HAVE_ADVANCE = hasattr(lib, "gsnap_snapshot_advance")
if HAVE_ADVANCE:
    _SNAPSHOT_INFO += [("hop_sets", c_uint), ("caps", c_uint32 * MAX_HOPS),
                       ("snap_version", c_uint64)]


class SnapshotInfo(Structure):
    _fields_ = _SNAPSHOT_INFO


_SAMPLER_V1 = [("version", c_uint), ("mode", c_int), ("layers", c_uint),
               ("fanouts", c_int32 * MAX_LAYERS), ("dir", c_int), ("seed", c_uint64),
               ("alpha", c_double), ("gamma", c_double), ("delta", c_double),
               ("period", c_uint32), ("threshold", c_uint64), ("max_staleness", c_int64),
               ("at_t", c_int64), ("as_of", c_uint64)]


class AdvanceOptions(Structure):
    _fields_ = [("version", c_uint), ("at_t", c_int64), ("as_of", c_uint64),
                ("progress", c_void_p), ("progress_ctx", c_void_p)]


class AdvanceReport(Structure):
    _fields_ = [("from_version", c_uint64), ("to_version", c_uint64), ("snap_version", c_uint64),
                ("touched_nodes", c_uint64), ("recomputed", c_uint64 * MAX_HOPS),
                ("changed", c_uint64 * MAX_HOPS), ("blocks_written", c_uint64 * MAX_HOPS),
                ("blocks_reused", c_uint64 * MAX_HOPS), ("blocks_freed", c_uint64 * MAX_HOPS),
                ("caches_redrawn", c_uint64), ("seconds", c_double)]


# Adaptive refresh and the run-time core (issue 18): options version 4.
HAVE_ADAPT = hasattr(lib, "gsnap_sampler_report")
_SAMPLER_V4 = [("workers", c_uint),  # version 3
               ("policy", c_int), ("lambda", c_double * MAX_LAYERS), ("kappa", c_double),
               ("adapt_window", c_uint32), ("core_min", c_uint32),
               ("core_max_bytes", c_uint64)]
_SAMPLER_V4_SHARED = [("shared", c_uint), ("shared_dir", c_char_p)]  # shared host tier


class SamplerOptions(Structure):
    """Version 5 layout (version 4, then list_cache_bytes) when the library
    reads it; version 4 (workers, then the adaptive-refresh block, then the
    shared host tier's shared/shared_dir), 2 (features/labels) or 1
    otherwise (the later fields are then not read; a library without the
    shared tier does not read its two fields either)."""
    _fields_ = (_SAMPLER_V1 + [("features", c_char_p), ("labels", c_char_p)] + _SAMPLER_V4
                + _SAMPLER_V4_SHARED + [("list_cache_bytes", c_int64)])


class GammaChoice(Structure):
    _fields_ = [("batch", c_uint64), ("layer", c_uint32), ("policy", c_uint32),
                ("gamma", c_double), ("needed", c_uint64), ("not_held", c_uint64),
                ("stale", c_uint64), ("delta_h", c_double), ("lambda", c_double),
                ("statistic", c_double), ("kappa", c_double)]


class AdaptStats(Structure):
    _fields_ = [("policy", c_uint32), ("dynamic_core", c_uint32), ("decisions", c_uint64),
                ("skipped", c_uint64), ("core_nodes", c_uint64), ("core_bytes", c_uint64),
                ("core_joined", c_uint64), ("core_left", c_uint64), ("core_capped", c_uint64)]


class LayerStats(Structure):
    _fields_ = [("hits", c_uint64), ("misses", c_uint64), ("stale_hits", c_uint64),
                ("refreshed", c_uint64), ("edges", c_uint64), ("bytes_read", c_uint64),
                ("seconds", c_double)]


class SamplerStats(Structure):
    _fields_ = [("batches", c_uint64), ("edges", c_uint64), ("seeds", c_uint64),
                ("generation", c_uint64), ("refreshes", c_uint64),
                ("refreshed_entries", c_uint64), ("replaced_ids", c_uint64),
                ("stale_marked", c_uint64), ("max_staleness_seen", c_uint64),
                ("t_sample", c_double), ("t_refresh", c_double), ("t_pack", c_double),
                ("t_changes", c_double), ("t_load", c_double),
                ("layer", LayerStats * MAX_LAYERS),
                ("t_gather", c_double),  # added with features (0 in older libraries)
                ("snap_version", c_uint64),  # added with snapshot advance
                ("snap_version_lag", c_uint64),
                ("t_refresh_wait", c_double),  # added with the sampler hot path
                # shared host tier (issue 18; 0 in older libraries)
                ("shared_attached", c_uint64), ("shared_published", c_uint64),
                ("shared_refused", c_uint64), ("shared_bytes", c_uint64),
                # kept lists (options version 5; 0 in older libraries)
                ("list_hits", c_uint64), ("list_misses", c_uint64),
                ("lists_kept", c_uint64), ("list_bytes", c_uint64)]


class Block(Structure):
    _fields_ = [("num_dst", c_uint32), ("num_src", c_uint32), ("num_edges", c_uint64),
                ("src_ids", c_void_p), ("indptr", c_void_p), ("indices", c_void_p)]


class AttrInfo(Structure):
    _fields_ = [("name", c_char * 64), ("dtype", c_int), ("dim", c_uint32),
                ("updates", c_uint64), ("created_version", c_uint64)]


class BatchAttr(Structure):
    _fields_ = [("data", c_void_p), ("rows", c_uint64), ("dim", c_uint32), ("dtype", c_int)]


def out(cls):
    """An instance of output struct `cls` with 1 KiB of slack behind it, so a
    newer library writing a longer struct cannot overrun it (the layouts are
    checked against the header by python/tests/test_abi.py)."""
    return cls.from_buffer(bytearray(ctypes.sizeof(cls) + 1024))


# ---- functions -------------------------------------------------------------
P = c_void_p  # opaque handles


def _decl(name: str, restype, *argtypes, optional: bool = False) -> bool:
    f = getattr(lib, name, None)
    if f is None:
        if optional:
            return False
        raise ImportError(f"graphsnap: {LIBRARY_PATH} lacks {name} (too old a library?)")
    f.restype = restype
    f.argtypes = list(argtypes)
    return True


_decl("gsnap_version", c_char_p)
_decl("gsnap_strerror", c_char_p, c_int)
_decl("gsnap_free", None, c_void_p)
HAVE_KEEP_MEMORY = _decl("gsnap_keep_freed_memory", c_int, optional=True)
_decl("gsnap_db_open", c_int, c_char_p, POINTER(DbOptions), POINTER(P))
_decl("gsnap_last_open_error", c_char_p)
_decl("gsnap_db_close", None, P)
_decl("gsnap_db_errmsg", c_char_p, P)
_decl("gsnap_db_path", c_char_p, P)
_decl("gsnap_db_version", c_int, P, POINTER(c_uint64))
_decl("gsnap_db_stats", c_int, P, POINTER(DbStat))
_decl("gsnap_db_compact", c_int, P)
_decl("gsnap_db_merge", c_int, P, c_uint)
_decl("gsnap_batch_begin", c_int, P, POINTER(P))
_decl("gsnap_batch_add", c_int, P, c_uint64, c_uint64, c_int64)
_decl("gsnap_batch_delete", c_int, P, c_uint64, c_uint64, c_int64)
_decl("gsnap_batch_size", c_size_t, P)
# Arrays in one call (newer libraries); Batch.add_edges falls back to one call per edge.
HAVE_ADD_EVENTS = _decl("gsnap_batch_add_events", c_int, P, c_void_p, c_void_p, c_void_p, c_void_p,
                        c_size_t, POINTER(c_size_t), optional=True)
_decl("gsnap_batch_commit", c_int, P, POINTER(c_uint64))
_decl("gsnap_batch_abort", None, P)
_decl("gsnap_read_begin", c_int, P, POINTER(P))
_decl("gsnap_read_version", c_uint64, P)
_decl("gsnap_read_end", None, P)
_decl("gsnap_neighbors", c_int, P, P, c_uint64, c_int, c_int64, c_uint64, c_void_p, c_size_t,
      POINTER(c_size_t))
_decl("gsnap_degree", c_int, P, P, c_uint64, c_int, c_int64, c_uint64, POINTER(c_uint64))
_decl("gsnap_ingest_text", c_int, P, c_void_p, c_char_p, POINTER(IngestOptions),
      POINTER(IngestReport))
_decl("gsnap_snapshot_create", c_int, P, c_char_p, POINTER(SnapshotOptions),
      POINTER(SnapshotInfo))
_decl("gsnap_snapshot_list", c_int, P, POINTER(POINTER(SnapshotInfo)), POINTER(c_size_t))
_decl("gsnap_snapshot_info_get", c_int, P, c_char_p, POINTER(SnapshotInfo))
_decl("gsnap_snapshot_drop", c_int, P, c_char_p)
_decl("gsnap_sample_mode_parse", c_int, c_char_p, POINTER(c_int))
_decl("gsnap_sampler_open", c_int, P, c_char_p, POINTER(SamplerOptions), POINTER(P))
_decl("gsnap_sampler_close", None, P)
_decl("gsnap_sampler_next", c_int, P, c_void_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))
_decl("gsnap_sampler_random_seeds", c_int, P, c_uint64, c_size_t, c_void_p)
_decl("gsnap_sampler_refresh", c_int, P)
_decl("gsnap_sampler_stats_get", None, P, POINTER(SamplerStats))
_decl("gsnap_block_check", c_int, c_void_p, c_size_t)
_decl("gsnap_block_layers", c_uint, c_void_p, c_size_t)
_decl("gsnap_block_get", c_int, c_void_p, c_size_t, c_uint, POINTER(Block))
_decl("gsnap_block_info", c_int, c_void_p, c_size_t, POINTER(c_uint64), POINTER(c_uint64),
      POINTER(c_uint64))
_decl("gsnap_stager_open", c_int, c_size_t, c_uint, c_int, POINTER(P))
_decl("gsnap_stager_on_device", c_int, P)
_decl("gsnap_stager_submit", c_int, P, c_void_p, c_size_t, POINTER(c_uint))
_decl("gsnap_stager_wait", c_int, P, c_uint, POINTER(c_void_p), POINTER(c_size_t))
_decl("gsnap_stager_close", None, P)
# Ordering a slot's next copy after its consumers' GPU work (newer libraries).
HAVE_RETIRE = _decl("gsnap_stager_retire", c_int, P, c_uint, c_void_p, optional=True)
# Batches packed straight into the stager's slot (no copy; newer libraries).
HAVE_NEXT_STAGED = _decl("gsnap_sampler_next_staged", c_int, P, c_void_p, c_size_t, P,
                         POINTER(c_uint), POINTER(c_void_p), POINTER(c_size_t), optional=True)

# Node attributes in the store (issue 13); absent in older libraries.
HAVE_FEATURES = all([
    _decl("gsnap_dtype_size", c_size_t, c_int, optional=True),
    _decl("gsnap_attr_create", c_int, P, c_char_p, c_int, c_uint32, optional=True),
    _decl("gsnap_attr_info_get", c_int, P, c_char_p, POINTER(AttrInfo), optional=True),
    _decl("gsnap_attr_list", c_int, P, POINTER(POINTER(AttrInfo)), POINTER(c_size_t),
          optional=True),
    _decl("gsnap_batch_set_attr", c_int, P, c_char_p, c_void_p, c_void_p, c_void_p, c_size_t,
          optional=True),
    _decl("gsnap_attr_read", c_int, P, P, c_char_p, c_void_p, c_size_t, c_int64, c_uint64,
          c_void_p, c_void_p, optional=True),
])
# Features/labels gathered into mini-batches by the sampler.
HAVE_GATHER = HAVE_FEATURES and all([
    _decl("gsnap_block_features", c_int, c_void_p, c_size_t, POINTER(BatchAttr), optional=True),
    _decl("gsnap_block_labels", c_int, c_void_p, c_size_t, POINTER(BatchAttr), optional=True),
])
# Kept lists (options version 5, list_cache_bytes): the library says which
# options version it reads.
HAVE_LIST_CACHE = bool(_decl("gsnap_sampler_options_version", c_int, optional=True)) and \
    lib.gsnap_sampler_options_version() >= 5
SAMPLER_OPTIONS_VERSION = 5 if HAVE_LIST_CACHE else 4 if HAVE_ADAPT else 2 if HAVE_FEATURES else 1
if HAVE_ADAPT:
    _decl("gsnap_refresh_policy_parse", c_int, c_char_p, POINTER(c_int))
    _decl("gsnap_sampler_report", c_int, P, c_uint, c_double)
    _decl("gsnap_sampler_gamma_history", c_size_t, P, POINTER(GammaChoice), c_size_t)
    _decl("gsnap_sampler_adapt_stats_get", None, P, POINTER(AdaptStats))
# The shared host tier (options version 4, after the adaptive block).
HAVE_SHARED = HAVE_ADAPT and HAVE_GATHER and _decl("gsnap_sampler_shared_note", c_char_p, P,
                                                    optional=True)
if HAVE_ADVANCE:
    _decl("gsnap_snapshot_advance", c_int, P, c_char_p, POINTER(AdvanceOptions),
          POINTER(AdvanceReport))
SNAPSHOT_OPTIONS_VERSION = 2 if HAVE_ADVANCE else 1
ADVANCE_KEEP_T = -(1 << 63)


# libc, for gsnap_ingest_text's FILE*.
libc = ctypes.CDLL(None)
libc.fopen.restype = c_void_p
libc.fopen.argtypes = [c_char_p, c_char_p]
libc.fclose.restype = c_int
libc.fclose.argtypes = [c_void_p]

__all__ = ["lib", "LIBRARY_PATH", "HAVE_FEATURES", "HAVE_GATHER", "HAVE_ADVANCE", "HAVE_ADAPT",
           "HAVE_SHARED"]
