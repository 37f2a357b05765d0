"""graphsnap: Python bindings (ctypes) of libgraphsnap, an embedded store for
dynamic temporal graphs and GNN mini-batch sampling.

Main classes: Database (ingest, point-in-time reads, attributes, snapshots),
Batch (one atomic ingest), Sampler (mini-batches), MiniBatch and Block
(zero-copy numpy views, torch tensors through DLPack), TemporalSampler and
EventStream (temporal GNN roots (node, t), TGL-style). Errors raise
GraphsnapError subclasses carrying .code and .message. See docs/python.md.
"""
from __future__ import annotations

from ._lib import LIBRARY_PATH, HAVE_KEEP_MEMORY, HAVE_FEATURES, HAVE_GATHER, HAVE_ADVANCE, HAVE_SHARED, HAVE_LIST_CACHE, TIME_MAX, VERSION_LATEST, lib as _clib
from .errors import (GraphsnapError, NotFoundError, InvalidArgumentError, OutOfMemoryError,
                     IOFailure, CorruptError, ChecksumError, FormatError, ParseError, StateError,
                     BusyError, NoSpaceError, AccessError, ExistsError, NotSupportedError,
                     RangeError, LMDBError, strerror, error as _error, ENOTSUP as _ENOTSUP)
from .database import Database, Batch, AttrInfo, SnapshotInfo
from .sampler import Sampler, MiniBatch, Block, MODES
from ._dlpack import DLPackArray
from .temporal import TemporalSampler, TemporalBatch, TemporalLayer, EventStream, HAVE_TEMPORAL, STRATEGIES

__version__ = _clib.gsnap_version().decode()


def keep_freed_memory() -> None:
    """Have the process's C allocator keep the memory it frees for reuse
    (gsnap_keep_freed_memory: no mmap for large blocks, no heap trimming, one
    arena). For a process that ingests and queries: each commit frees large
    buffers, and giving them back costs the next commit its page faults and,
    on a VM, the queries right after it their tail (docs/store.md). Process
    wide; call it early. Raises NotSupportedError off glibc."""
    if not HAVE_KEEP_MEMORY:
        raise NotSupportedError(_ENOTSUP, "this libgraphsnap lacks gsnap_keep_freed_memory", "keep_freed_memory")
    rc = _clib.gsnap_keep_freed_memory()
    if rc:
        raise _error(rc, "the C library refused the allocator settings", "keep_freed_memory")

__all__ = ["Database", "Batch", "AttrInfo", "SnapshotInfo", "Sampler", "MiniBatch", "Block",
           "DLPackArray", "GraphsnapError", "NotFoundError", "InvalidArgumentError",
           "OutOfMemoryError", "IOFailure", "CorruptError", "ChecksumError", "FormatError",
           "ParseError", "StateError", "BusyError", "NoSpaceError", "AccessError", "ExistsError",
           "NotSupportedError", "RangeError", "LMDBError", "strerror", "MODES", "TIME_MAX",
           "VERSION_LATEST", "LIBRARY_PATH", "HAVE_FEATURES", "HAVE_GATHER", "HAVE_ADVANCE", "HAVE_SHARED", "HAVE_LIST_CACHE", "__version__",
           "TemporalSampler", "TemporalBatch", "TemporalLayer", "EventStream", "HAVE_TEMPORAL",
           "STRATEGIES", "keep_freed_memory", "HAVE_KEEP_MEMORY"]
