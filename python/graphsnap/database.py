"""Database, ingest batches, point-in-time reads, attributes and snapshots."""
from __future__ import annotations

import ctypes
import errno
import itertools
import os
from ctypes import byref, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np

from . import _lib
from ._lib import lib, TIME_MAX, VERSION_LATEST
from ._owned import _Closing
from .errors import GraphsnapError, NotFoundError, NotSupportedError, StateError, error, NOTFOUND

PathLike = Union[str, os.PathLike]
ArrayLike = Any

DIRS = {"in": 0, "out": 1}
HOPSETS = {"auto": 0, "exact": 1, "sampled": 2}
HOPSET_NAMES = {1: "exact", 2: "sampled"}
DTYPES = {"float32": 1, "float16": 2, "bfloat16": 3, "int64": 4}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
# numpy storage of each attribute dtype (bfloat16 rows are raw uint16)
NP_DTYPES = {1: np.dtype(np.float32), 2: np.dtype(np.float16), 3: np.dtype(np.uint16),
             4: np.dtype(np.int64)}


def _time(at: Optional[int]) -> int:
    return TIME_MAX if at is None else int(at)


def _ver(version: Optional[int]) -> int:
    return VERSION_LATEST if version is None else int(version)


def _dir(d: Union[str, int]) -> int:
    if isinstance(d, str):
        try:
            return DIRS[d.lower()]
        except KeyError:
            raise ValueError(f"direction must be 'in' or 'out', not {d!r}") from None
    return int(d)


def _u64(a: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array, got shape {arr.shape}")
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        raise ValueError(f"{what}: negative node id {int(arr.min())}")
    if arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"{what}: expected integers, got {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


@dataclass(frozen=True)
class AttrInfo:
    """An attribute table (gsnap_attr_info)."""
    name: str
    dtype: str
    dim: int
    updates: int
    created_version: int


@dataclass(frozen=True)
class SnapshotInfo:
    """What a snapshot is (gsnap_snapshot_info)."""
    name: str
    complete: bool
    format_version: int
    hops: int
    fanouts: tuple
    alpha: float
    at_t: int
    at_version: int
    dir: str
    seed: int
    generation: int
    nodes: int
    slab_bytes: int
    build_seconds: float
    exact_ids: tuple = field(default=())
    stored_ids: tuple = field(default=())
    hop_sets: str = "exact"      # "exact" or "sampled" (libraries with advance)
    snap_version: int = 0        # snapshot version (bumped by each advance)

    @staticmethod
    def _from(c: _lib.SnapshotInfo) -> "SnapshotInfo":
        h = c.hops
        return SnapshotInfo(c.name.decode(), bool(c.complete), c.format_version, h,
                            tuple(c.fanouts[:h]), c.alpha, c.at_t, c.at_version,
                            "in" if c.dir == 0 else "out", c.seed, c.generation, c.nodes,
                            c.slab_bytes, c.build_seconds, tuple(c.exact_ids[:h]),
                            tuple(c.stored_ids[:h]),
                            HOPSET_NAMES.get(getattr(c, "hop_sets", 1), "exact"),
                            getattr(c, "snap_version", 0))


class Batch:
    """An ingest batch: events buffered in memory, committed atomically as one
    new version (``commit()``, or leaving a ``with db.batch() as b:`` block
    without an exception; an exception aborts it). Only one batch may be open
    per Database at a time."""

    def __init__(self, db: "Database") -> None:
        self._db = db
        h = c_void_p()
        db._check(lib.gsnap_batch_begin(db._handle(), byref(h)), "batch_begin")
        self._h: Optional[int] = h.value
        self.version: Optional[int] = None

    def _handle(self) -> int:
        if self._h is None:
            raise StateError(-31908, "the batch was already committed or aborted")
        return self._h

    def add_edges(self, src: ArrayLike, dst: ArrayLike, t: Optional[ArrayLike] = None,
                  op: Optional[ArrayLike] = None) -> None:
        """Buffer edge events src[i] -> dst[i] at time t[i] (default 0); op[i]
        truthy = add (default), 0/False = delete one instance."""
        s, d = _u64(src, "src"), _u64(dst, "dst")
        n = len(s)
        if len(d) != n:
            raise ValueError(f"src and dst differ in length ({n} vs {len(d)})")
        tt = np.zeros(n, np.int64) if t is None else np.ascontiguousarray(t, dtype=np.int64)
        if len(tt) != n:
            raise ValueError(f"t has {len(tt)} entries, src {n}")
        ops = None if op is None else np.asarray(op).astype(bool)
        if ops is not None and len(ops) != n:
            raise ValueError(f"op has {len(ops)} entries, src {n}")
        h = self._handle()
        if _lib.HAVE_ADD_EVENTS:  # one C call for the whole array
            dl8 = None if ops is None else np.ascontiguousarray(~ops, dtype=np.uint8)
            at = ctypes.c_size_t()
            rc = lib.gsnap_batch_add_events(h, s.ctypes.data, d.ctypes.data, tt.ctypes.data,
                                            None if dl8 is None else dl8.ctypes.data, n,
                                            ctypes.byref(at))
            if rc:
                i = at.value
                self._fail(rc, f"edge {i} ({int(s[i])} -> {int(d[i])} at t={int(tt[i])})")
            return
        add, dele = lib.gsnap_batch_add, lib.gsnap_batch_delete
        sl, dl, tl = s.tolist(), d.tolist(), tt.tolist()
        # map() over the ctypes functions: about twice the rate of a Python
        # for loop. Every event is offered; the first failure is reported.
        if ops is None:
            rcs = list(map(add, itertools.repeat(h, n), sl, dl, tl))
        else:
            fns = (dele, add)
            rcs = list(map(lambda o, a, b, c: fns[o](h, a, b, c), ops.tolist(), sl, dl, tl))
        if any(rcs):
            i = next(k for k, rc in enumerate(rcs) if rc)
            self._fail(rcs[i], f"edge {i} ({sl[i]} -> {dl[i]} at t={tl[i]})")

    def add_edge(self, src: int, dst: int, t: int = 0) -> None:
        """Buffer one edge instance src -> dst at time t."""
        rc = lib.gsnap_batch_add(self._handle(), src, dst, t)
        if rc:
            self._fail(rc, f"edge {src} -> {dst} at t={t}")

    def delete_edge(self, src: int, dst: int, t: int = 0) -> None:
        """Buffer the deletion of one instance of src -> dst at time t."""
        rc = lib.gsnap_batch_delete(self._handle(), src, dst, t)
        if rc:
            self._fail(rc, f"delete {src} -> {dst} at t={t}")

    def set_attr(self, name: str, nodes: ArrayLike, values: ArrayLike,
                 t: Optional[ArrayLike] = None) -> None:
        """Set the rows of attribute table `name` for `nodes` (row i at event
        time t[i], default 0), visible from this batch's version on, atomically
        with its edges. values: shape (n, dim) (or (n,) when dim is 1), cast to
        the table's dtype (bfloat16 tables take raw uint16 bits or float32)."""
        _need_features()
        info = self._db.attr_info(name)
        nd = _u64(nodes, "nodes")
        vals = _attr_values(info, values, len(nd))
        tt = None if t is None else np.ascontiguousarray(t, dtype=np.int64)
        if tt is not None and len(tt) != len(nd):
            raise ValueError(f"t has {len(tt)} entries, nodes {len(nd)}")
        rc = lib.gsnap_batch_set_attr(self._handle(), name.encode(), nd.ctypes.data,
                                      None if tt is None else tt.ctypes.data,
                                      vals.ctypes.data, len(nd))
        if rc:
            self._fail(rc, f"set_attr {name!r}")

    def __len__(self) -> int:
        return int(lib.gsnap_batch_size(self._handle())) if self._h else 0

    def commit(self) -> int:
        """Commit atomically (and durably with sync='full'); returns the new
        version (the current one for an empty batch)."""
        v = c_uint64()
        h = self._handle()
        self._h = None
        self._db._batch = None
        self._db._check(lib.gsnap_batch_commit(h, byref(v)), "batch_commit")
        self.version = v.value
        return self.version

    def abort(self) -> None:
        """Drop the batch; nothing is written."""
        if self._h is not None:
            lib.gsnap_batch_abort(self._h)
            self._h = None
            self._db._batch = None

    def _fail(self, rc: int, where: str) -> None:
        msg = self._db._errmsg()
        self.abort()
        raise error(rc, msg, where)

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, et, ev, tb) -> None:
        if self._h is None:
            return
        if et is None:
            self.commit()
        else:
            self.abort()


def _need_features() -> None:
    if not _lib.HAVE_FEATURES:
        raise NotSupportedError(-31913, f"{_lib.LIBRARY_PATH} has no node attributes "
                                "(gsnap_attr_*); rebuild the library")


def _attr_values(info: AttrInfo, values: ArrayLike, n: int) -> np.ndarray:
    code = DTYPES[info.dtype]
    arr = np.asarray(values)
    if code == 3 and arr.dtype != np.uint16:  # bfloat16 from floats: round to nearest even
        f = np.ascontiguousarray(arr, dtype=np.float32).view(np.uint32)
        arr = ((f + 0x7FFF + ((f >> 16) & 1)) >> 16).astype(np.uint16)
    arr = np.ascontiguousarray(arr, dtype=NP_DTYPES[code])
    if arr.ndim == 1 and info.dim == 1:
        arr = arr.reshape(-1, 1)
    if arr.shape != (n, info.dim):
        raise ValueError(f"attribute {info.name!r}: values of shape {arr.shape}, "
                         f"expected ({n}, {info.dim})")
    return arr


class Database(_Closing):
    """An open graphsnap database directory (gsnap_db).

    >>> with graphsnap.Database("db", create=True) as db:
    ...     v = db.ingest_edges([1, 2], [2, 3], t=[10, 20])
    ...     db.neighbors(2, at=15)

    Reads may come from several threads; one batch at a time per handle.
    Close it (or use ``with``) after closing its samplers.
    """

    def __init__(self, path: PathLike, create: bool = True, read_only: bool = False,
                 sync: str = "full", keep: str = "both", map_size: int = 0,
                 read_cache_bytes: Optional[int] = None, merge_fanout: Optional[int] = None) -> None:
        """read_cache_bytes: memory for the verified in-memory copies of the
        delta runs that point queries and store-backed sampling seek
        (gsnap_db_options.read_cache_bytes): None or 0 = the library's
        default (256 MiB, for the directions read), < 0 = none.
        merge_fanout: the delta runs of one level this handle's merges turn
        into one run of the next (gsnap_db_options.merge_fanout): None = the
        library's default (4), else 2..32; larger ingests faster and leaves
        more runs for reads (docs/store.md)."""
        o = _lib.DbOptions()
        o.version = 1
        if read_cache_bytes is not None:
            if not isinstance(read_cache_bytes, int) or isinstance(read_cache_bytes, bool):
                raise TypeError("read_cache_bytes must be an int")
            if not -(1 << 63) <= read_cache_bytes < (1 << 63):
                raise ValueError(f"read_cache_bytes {read_cache_bytes} does not fit in 64 bits")
            o.version = 3  # a library older than options version 3 refuses it by name
            o.read_cache_bytes = read_cache_bytes
        if merge_fanout is not None:
            if not isinstance(merge_fanout, int) or isinstance(merge_fanout, bool):
                raise TypeError("merge_fanout must be an int")
            if not 2 <= merge_fanout <= 32:
                raise ValueError(f"merge_fanout {merge_fanout}: must be 2..32")
            o.version = 4  # a library older than options version 4 refuses it by name
            o.merge_fanout = merge_fanout
        if keep not in ("in", "out", "both"):
            raise ValueError(f"keep must be 'in', 'out' or 'both', not {keep!r}")
        o.keep = {"in": 1, "out": 2, "both": 3}[keep]
        if sync not in ("full", "none"):
            raise ValueError("sync must be 'full' or 'none'")
        o.sync = 0 if sync == "full" else 1
        o.map_size = map_size
        o.read_only = int(read_only)
        o.max_readers = 0
        o.create = int(create)
        h = c_void_p()
        self._h: Optional[int] = None
        self._batch: Optional[Batch] = None
        self._children: "list" = []
        self.path = os.fspath(path)
        rc = lib.gsnap_db_open(self.path.encode(), byref(o), byref(h))
        if rc:
            raise error(rc, (lib.gsnap_last_open_error() or b"").decode("utf-8", "replace"),
                        f"open {self.path}")
        self._h = h.value

    # -- plumbing
    def _handle(self) -> int:
        if self._h is None:
            raise StateError(-31908, "the database is closed")
        return self._h

    def _errmsg(self) -> str:
        if self._h is None:
            return ""
        return (lib.gsnap_db_errmsg(self._h) or b"").decode("utf-8", "replace")

    def _check(self, rc: int, where: str) -> None:
        if rc:
            raise error(rc, self._errmsg(), where)

    def close(self) -> None:
        """Close samplers opened from this database, abort an open batch, close."""
        for c in list(self._children):
            c.close()
        if self._batch is not None:
            self._batch.abort()
        if self._h is not None:
            lib.gsnap_db_close(self._h)
            self._h = None

    @property
    def closed(self) -> bool:
        return self._h is None

    def __repr__(self) -> str:
        return f"<graphsnap.Database {self.path!r}{' closed' if self.closed else ''}>"

    # -- versions and stats
    @property
    def version(self) -> int:
        """Newest committed version (0 for an empty database)."""
        v = c_uint64()
        self._check(lib.gsnap_db_version(self._handle(), byref(v)), "version")
        return v.value

    def stats(self) -> dict:
        """gsnap_db_stats as a dict."""
        st = _lib.out(_lib.DbStat)
        self._check(lib.gsnap_db_stats(self._handle(), byref(st)), "stats")
        return {k: getattr(st, k) for k, _ in _lib.DbStat._fields_}

    def compact(self) -> None:
        """Merge all sorted runs into one, then shrink the file when this
        handle is the database's only user (gsnap_db_compact)."""
        self._check(lib.gsnap_db_compact(self._handle()), "compact")

    def merge(self, fanout: int = 0) -> None:
        """Run the merges the size-tiered policy asks for at `fanout` delta
        runs per level (0: this handle's merge_fanout; else 2..32), e.g. 4
        after a bulk load at a larger merge_fanout: the store then has the
        shape a default handle keeps. No new version, the same answers
        (gsnap_db_merge)."""
        if not isinstance(fanout, int) or isinstance(fanout, bool):
            raise TypeError("fanout must be an int")
        if fanout < 0:
            raise ValueError(f"fanout {fanout}: must be 0 or 2..32")
        self._check(lib.gsnap_db_merge(self._handle(), fanout), "merge")

    # -- ingest
    def batch(self) -> Batch:
        """Open an ingest batch (use as a context manager)."""
        if self._batch is not None:
            raise error(-31909, "a batch is already open on this handle", "batch")
        self._batch = Batch(self)
        return self._batch

    def ingest_edges(self, src: ArrayLike, dst: ArrayLike, t: Optional[ArrayLike] = None,
                     op: Optional[ArrayLike] = None,
                     attrs: Optional[dict] = None) -> int:
        """Ingest edge events from arrays in ONE atomic batch; returns its
        version. op[i]: 1/True add (default), 0/False delete. attrs:
        {table: (nodes, values) or (nodes, values, t)} written in the same
        batch."""
        with self.batch() as b:
            b.add_edges(src, dst, t, op)
            for name, spec in (attrs or {}).items():
                b.set_attr(name, *spec[:2], t=spec[2] if len(spec) > 2 else None)
        assert b.version is not None
        return b.version

    def ingest_text(self, path: PathLike, batch_edges: int = 0, skip_bad: bool = False) -> dict:
        """Ingest a text file of "src dst [t] [op]" lines (the CLI's format),
        committing every batch_edges events (0 = 100000). Returns the report
        (lines, events, bad_lines, batches, first_version, last_version...)."""
        p = os.fspath(path)
        fp = _lib.libc.fopen(p.encode(), b"r")
        if not fp:
            code = errno.ENOENT if not os.path.exists(p) else errno.EACCES
            raise OSError(code, os.strerror(code), p)  # FileNotFoundError for ENOENT
        try:
            o = _lib.IngestOptions(1, batch_edges, int(skip_bad), None, None)
            r = _lib.out(_lib.IngestReport)
            self._check(lib.gsnap_ingest_text(self._handle(), fp, p.encode(), byref(o), byref(r)),
                        f"ingest_text {p}")
        finally:
            _lib.libc.fclose(fp)
        return {k: getattr(r, k) for k, _ in _lib.IngestReport._fields_}

    # -- point-in-time reads
    def neighbors(self, node: int, dir: str = "in", at: Optional[int] = None,
                  version: Optional[int] = None) -> np.ndarray:
        """Live edge instances of `node` at event time `at` (None = now) as of
        `version` (None = newest): a structured array with fields node, t,
        version, ordered by (node, t)."""
        h, d, T, V = self._handle(), _dir(dir), _time(at), _ver(version)
        n = c_size_t()
        cap = 64
        while True:
            buf = np.empty(cap, dtype=NBR_DTYPE)
            self._check(lib.gsnap_neighbors(h, None, node, d, T, V, buf.ctypes.data, cap,
                                            byref(n)), f"neighbors of {node}")
            if n.value <= cap:
                return buf[: n.value]
            cap = n.value

    def degree(self, node: int, dir: str = "in", at: Optional[int] = None,
               version: Optional[int] = None) -> int:
        """Number of live instances (multi-edges counted) at (at, version)."""
        v = c_uint64()
        self._check(lib.gsnap_degree(self._handle(), None, node, _dir(dir), _time(at),
                                     _ver(version), byref(v)), f"degree of {node}")
        return v.value

    # -- attributes (node features, labels)
    def create_attr(self, name: str, dtype: str = "float32", dim: int = 1) -> AttrInfo:
        """Create attribute table `name` of `dim` elements of `dtype`
        ('float32', 'float16', 'bfloat16', 'int64') per node. Idempotent for
        the same shape; ExistsError for another."""
        _need_features()
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {sorted(DTYPES)}, not {dtype!r}")
        self._check(lib.gsnap_attr_create(self._handle(), name.encode(), DTYPES[dtype], dim),
                    f"create_attr {name!r}")
        return self.attr_info(name)

    def attr_info(self, name: str) -> AttrInfo:
        """Shape of one table (NotFoundError if none)."""
        _need_features()
        ci = _lib.out(_lib.AttrInfo)
        self._check(lib.gsnap_attr_info_get(self._handle(), name.encode(), byref(ci)),
                    f"attribute {name!r}")
        return _attr_info(ci)

    def attrs(self) -> "list[AttrInfo]":
        """All attribute tables, sorted by name."""
        _need_features()
        p = ctypes.POINTER(_lib.AttrInfo)()
        n = c_size_t()
        self._check(lib.gsnap_attr_list(self._handle(), byref(p), byref(n)), "attrs")
        try:
            return [_attr_info(p[i]) for i in range(n.value)]
        finally:
            lib.gsnap_free(p)

    def read_attr(self, name: str, nodes: ArrayLike, at: Optional[int] = None,
                  version: Optional[int] = None, return_found: bool = False):
        """Point-in-time gather: row i = the value of nodes[i] with the greatest
        event time <= at among updates committed in versions <= version (None:
        now / newest); zeros where none (found[i] = False). Returns an (n, dim)
        array of the table's numpy dtype (uint16 bits for bfloat16), and the
        found mask too when return_found."""
        info = self.attr_info(name)
        nd = _u64(nodes, "nodes")
        out = np.empty((len(nd), info.dim), dtype=NP_DTYPES[DTYPES[info.dtype]])
        found = np.empty(len(nd), dtype=np.uint8)
        self._check(lib.gsnap_attr_read(self._handle(), None, name.encode(), nd.ctypes.data,
                                        len(nd), _time(at), _ver(version), out.ctypes.data,
                                        found.ctypes.data), f"read_attr {name!r}")
        return (out, found.astype(bool)) if return_found else out

    # -- snapshots
    def create_snapshot(self, name: str, fanouts: Sequence[int] = (10, 10), alpha: float = 2.0,
                        at: Optional[int] = None, version: Optional[int] = None,
                        dir: str = "in", seed: int = 1, mem_budget: int = 0,
                        hop_sets: str = "auto", caps: Optional[Sequence[int]] = None) -> SnapshotInfo:
        """Build snapshot `name` at (at, version) with len(fanouts) hops
        (fanouts[0] = hop 1). hop_sets: "exact" (distance-h sets), "sampled"
        (bottom-c walk sets, the SEMHS join; can be advanced) or "auto"
        (exact when it fits, else sampled); caps: c_h per hop for sampled
        (None = defaults). ExistsError if a complete one has that name."""
        o = _snapshot_options(fanouts, alpha, at, version, dir, seed, mem_budget)
        if hop_sets not in HOPSETS:
            raise ValueError(f"hop_sets must be one of {', '.join(HOPSETS)}, not {hop_sets!r}")
        if _lib.HAVE_ADVANCE:
            o.hop_sets = HOPSETS[hop_sets]
            for i, c in enumerate(caps or ()):
                o.caps[i] = int(c)
        elif hop_sets == "sampled" or caps:
            raise NotSupportedError(-31913, "this libgraphsnap has no sampled hop sets")
        ci = _lib.out(_lib.SnapshotInfo)
        self._check(lib.gsnap_snapshot_create(self._handle(), name.encode(), byref(o), byref(ci)),
                    f"create_snapshot {name!r}")
        return SnapshotInfo._from(ci)

    def snapshots(self) -> "list[SnapshotInfo]":
        """Every snapshot (complete or not), sorted by name."""
        p = ctypes.POINTER(_lib.SnapshotInfo)()
        n = c_size_t()
        self._check(lib.gsnap_snapshot_list(self._handle(), byref(p), byref(n)), "snapshots")
        try:
            return [SnapshotInfo._from(p[i]) for i in range(n.value)]
        finally:
            lib.gsnap_free(p)

    def snapshot_info(self, name: str) -> SnapshotInfo:
        """Info of one snapshot (NotFoundError if none)."""
        ci = _lib.out(_lib.SnapshotInfo)
        self._check(lib.gsnap_snapshot_info_get(self._handle(), name.encode(), byref(ci)),
                    f"snapshot {name!r}")
        return SnapshotInfo._from(ci)

    def drop_snapshot(self, name: str) -> None:
        """Drop a snapshot (NotFoundError if none)."""
        self._check(lib.gsnap_snapshot_drop(self._handle(), name.encode()),
                    f"drop_snapshot {name!r}")

    def advance_snapshot(self, name: str, at: Optional[int] = None,
                         version: Optional[int] = None) -> SnapshotInfo:
        """Bring snapshot `name` forward to (at, version) (at None: keep its
        event time; version None: newest). A sampled snapshot advances
        incrementally (gsnap_snapshot_advance: only the lists whose inputs
        changed are recomputed, committed atomically as the next snapshot
        version; samplers may follow it). An exact snapshot, or a library
        without advance, is dropped and created again with the same
        parameters: the same result at the full rebuild cost, and not atomic
        (a crash in between leaves no snapshot of that name)."""
        if _lib.HAVE_ADVANCE:
            o = _lib.AdvanceOptions(1, _lib.ADVANCE_KEEP_T if at is None else int(at), _ver(version),
                                    None, None)
            r = _lib.out(_lib.AdvanceReport)
            rc = lib.gsnap_snapshot_advance(self._handle(), name.encode(), byref(o), byref(r))
            if rc == 0:
                return self.snapshot_info(name)
            if rc != -31913:  # GSNAP_ENOTSUP: an exact snapshot
                self._check(rc, f"advance_snapshot {name!r}")
        old = self.snapshot_info(name)
        self.drop_snapshot(name)
        return self.create_snapshot(name, old.fanouts, old.alpha, old.at_t if at is None else at, version,
                                    old.dir, old.seed, hop_sets=old.hop_sets)

    # -- sampling
    def sampler(self, fanouts: Sequence[int], **kw: Any) -> "Sampler":
        """Open a Sampler on this database (see graphsnap.Sampler)."""
        from .sampler import Sampler
        return Sampler(self, fanouts, **kw)


NBR_DTYPE = np.dtype([("node", np.uint64), ("t", np.int64), ("version", np.uint64)])


def _attr_info(c: _lib.AttrInfo) -> AttrInfo:
    return AttrInfo(c.name.decode(), DTYPE_NAMES.get(c.dtype, str(c.dtype)), c.dim, c.updates,
                    c.created_version)


def _snapshot_options(fanouts, alpha, at, version, dir, seed, mem_budget) -> _lib.SnapshotOptions:
    f = [int(x) for x in fanouts]
    if not 1 <= len(f) <= _lib.MAX_HOPS:
        raise ValueError(f"fanouts: 1..{_lib.MAX_HOPS} hops, got {len(f)}")
    o = _lib.SnapshotOptions()
    o.version = _lib.SNAPSHOT_OPTIONS_VERSION
    o.hops = len(f)
    for i, x in enumerate(f):
        o.fanouts[i] = x
    o.alpha = alpha
    o.at_t = _time(at)
    o.as_of = _ver(version)
    o.dir = _dir(dir)
    o.seed = seed
    o.mem_budget = mem_budget
    o.flags = 0
    return o
