"""Temporal neighbour sampling (TGL-style) and time-ordered event streams.

TemporalSampler wraps gsnap_tsampler_*: roots are (node, t) pairs; for each
root it samples among the node's edge events with time < t (<= t with
``inclusive``) committed at the sampler's version, and multi-hop layers take
the sampled neighbours at the sampled edge's time (TGL's rule). Multi-edges
are distinct events. EventStream wraps gsnap_tstream_*: the store's add events
in time order, in batches, with negative destinations. See docs/temporal.md.

Arrays are zero-copy, read-only numpy views onto the library's buffer, valid
until the sampler's next ``sample`` call (or the stream's next batch); a stale
access raises StateError. ``TemporalBatch.copy()`` keeps a batch.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, byref, c_int, c_int64, c_size_t, c_uint, c_uint32, c_uint64, c_void_p
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from . import _lib
from ._lib import lib
from ._owned import _Owned
from .database import Database, _dir, _ver
from .errors import NotFoundError, NotSupportedError, StateError, error, NOTFOUND

MAX_LAYERS = 8
STRATEGIES = {"uniform": 0, "recent": 1, "window": 2}
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)


class _TSOptions(Structure):
    _fields_ = [("version", c_uint), ("dir", c_int), ("strategy", c_int), ("inclusive", c_int),
                ("window", c_int64), ("as_of", c_uint64), ("seed", c_uint64), ("layers", c_uint),
                ("fanouts", c_uint32 * MAX_LAYERS)]


class _TBlock(Structure):
    _fields_ = [("num_roots", c_uint64), ("num_edges", c_uint64), ("root_node", c_void_p),
                ("root_t", c_void_p), ("indptr", c_void_p), ("nbr", c_void_p), ("edge_t", c_void_p),
                ("edge_version", c_void_p), ("edge_index", c_void_p), ("dt", c_void_p)]


class _StreamOptions(Structure):
    _fields_ = [("version", c_uint), ("as_of", c_uint64), ("batch_size", c_size_t),
                ("negatives", c_uint), ("seed", c_uint64)]


class _StreamBatch(Structure):
    _fields_ = [("batch", c_uint64), ("n", c_size_t), ("negatives", c_uint), ("src", c_void_p),
                ("dst", c_void_p), ("t", c_void_p), ("version", c_void_p), ("neg", c_void_p)]


P = c_void_p
HAVE_TEMPORAL = all([
    _lib._decl("gsnap_tsampler_open", c_int, P, POINTER(_TSOptions), POINTER(P), optional=True),
    _lib._decl("gsnap_tsampler_refresh", c_int, P, c_uint64, POINTER(c_uint64), optional=True),
    _lib._decl("gsnap_tsampler_version", c_uint64, P, optional=True),
    _lib._decl("gsnap_tsampler_size", None, P, POINTER(c_uint64), POINTER(c_uint64), optional=True),
    _lib._decl("gsnap_tsampler_sample", c_int, P, c_void_p, c_void_p, c_size_t, c_uint64,
               POINTER(c_void_p), POINTER(c_size_t), optional=True),
    _lib._decl("gsnap_tsampler_random_nodes", c_int, P, c_uint64, c_size_t, c_void_p, optional=True),
    _lib._decl("gsnap_tsampler_errmsg", ctypes.c_char_p, P, optional=True),
    _lib._decl("gsnap_tsampler_close", None, P, optional=True),
    _lib._decl("gsnap_tblock_check", c_int, c_void_p, c_size_t, optional=True),
    _lib._decl("gsnap_tblock_layers", c_uint, c_void_p, c_size_t, optional=True),
    _lib._decl("gsnap_tblock_get", c_int, c_void_p, c_size_t, c_uint, POINTER(_TBlock), optional=True),
    _lib._decl("gsnap_tstream_open", c_int, P, POINTER(_StreamOptions), POINTER(P), optional=True),
    _lib._decl("gsnap_tstream_next", c_int, P, POINTER(_StreamBatch), optional=True),
    _lib._decl("gsnap_tstream_rewind", None, P, optional=True),
    _lib._decl("gsnap_tstream_info", None, P, POINTER(c_uint64), POINTER(c_uint64), optional=True),
    _lib._decl("gsnap_tstream_close", None, P, optional=True),
])


def _need() -> None:
    if not HAVE_TEMPORAL:
        raise NotSupportedError(-31913, f"{_lib.LIBRARY_PATH} has no temporal sampler")


class _Mem:
    """numpy's array interface over library memory (read-only, zero-copy)."""
    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: Any, address: int, nbytes: int) -> None:
        self.owner = owner
        self.__array_interface__ = {"data": (address, True), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


class TemporalLayer:
    """One layer of a temporal batch: the roots (``root_node``, ``root_t``),
    a CSR over them (``indptr``, int64[num_roots + 1]) and per sampled edge
    the neighbour (``nbr``), the edge's event time (``edge_t``), the version
    that committed it (``edge_version``), its position in the root node's
    time-ordered events (``edge_index``) and ``dt = root_t - edge_t`` (the
    time-encoding input of TGAT/TGN). Ids are int64 views of the library's
    u64 (same bits)."""

    __slots__ = ("_b", "num_roots", "num_edges", "_off")
    _FIELDS = ("root_node", "root_t", "indptr", "nbr", "edge_t", "edge_version", "edge_index", "dt")

    def __init__(self, b: "TemporalBatch", num_roots: int, num_edges: int, off: tuple) -> None:
        self._b, self.num_roots, self.num_edges, self._off = b, num_roots, num_edges, off

    def _arr(self, i: int) -> np.ndarray:
        n = self.num_roots + (1 if i == 2 else 0) if i < 3 else self.num_edges
        return self._b._array(self._off[i], n)

    root_node = property(lambda self: self._arr(0), doc="root node ids, int64[num_roots]")
    root_t = property(lambda self: self._arr(1), doc="root times, int64[num_roots]")
    indptr = property(lambda self: self._arr(2), doc="CSR over the roots, int64[num_roots + 1]")
    nbr = property(lambda self: self._arr(3), doc="sampled neighbours, int64[num_edges]")
    edge_t = property(lambda self: self._arr(4), doc="event time of each sampled edge")
    edge_version = property(lambda self: self._arr(5), doc="version that committed each edge")
    edge_index = property(lambda self: self._arr(6), doc="position in the root's event list")
    dt = property(lambda self: self._arr(7), doc="root_t - edge_t per sampled edge")

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in self._FIELDS}

    def __repr__(self) -> str:
        return f"<TemporalLayer roots={self.num_roots} edges={self.num_edges}>"


class TemporalBatch:
    """A sampled temporal mini-batch (a packed GTSB buffer): ``layers[0]``
    has the given roots, ``layers[l+1]`` the neighbours sampled in layer l at
    their edge times. Valid until the sampler's next sample() unless copied."""

    def __init__(self, sampler: Optional["TemporalSampler"], address: int, nbytes: int,
                 owner: Optional[np.ndarray] = None) -> None:
        self._sampler = sampler
        self._serial = sampler._serial if sampler is not None else 0
        self._addr, self.nbytes, self._owner = address, nbytes, owner
        self._whole: Optional[np.ndarray] = None
        rc = lib.gsnap_tblock_check(address, nbytes)
        if rc:
            raise error(rc, "temporal buffer failed its check", "TemporalBatch")
        self.layers: list[TemporalLayer] = []
        tb = _TBlock()
        for i in range(lib.gsnap_tblock_layers(address, nbytes)):
            rc = lib.gsnap_tblock_get(address, nbytes, i, byref(tb))
            if rc:
                raise error(rc, f"layer {i}", "TemporalBatch")
            off = tuple((getattr(tb, f) or address) - address for f in TemporalLayer._FIELDS)
            self.layers.append(TemporalLayer(self, tb.num_roots, tb.num_edges, off))

    @property
    def valid(self) -> bool:
        if self._owner is not None:
            return True
        s = self._sampler
        return s is not None and s._h is not None and s._serial == self._serial

    def _array(self, off: int, n: int) -> np.ndarray:
        if not self.valid:
            raise StateError(-31908, "temporal batch no longer valid: the sampler sampled "
                             "again or closed (use .copy())")
        w = self._whole
        if w is None:
            w = self._whole = np.asarray(_Mem(self._owner, self._addr, self.nbytes))
        return w[off:off + 8 * n].view(_I64)

    @property
    def buffer_address(self) -> int:
        """Address of the packed buffer (the library's memory unless copied)."""
        return self._addr

    def copy(self) -> "TemporalBatch":
        """An owned copy that stays valid."""
        if not self.valid:
            raise StateError(-31908, "temporal batch no longer valid")
        own = np.empty(self.nbytes // 8 + 1, dtype=np.uint64)  # 8-aligned
        ctypes.memmove(own.ctypes.data, self._addr, self.nbytes)
        return TemporalBatch(None, own.ctypes.data, self.nbytes, owner=own)

    def __repr__(self) -> str:
        return f"<TemporalBatch layers={len(self.layers)} edges={[l.num_edges for l in self.layers]}>"


class TemporalSampler(_Owned):
    """Temporal neighbour sampler over a database (gsnap_tsampler).

    >>> with graphsnap.TemporalSampler(db, [10, 10], strategy="recent") as ts:
    ...     b = ts.sample(nodes, times)        # roots (node, t)
    ...     b.layers[0].nbr, b.layers[0].dt

    ``fanouts[0]`` is the roots' own hop (TGL order). ``strategy``:
    "uniform" (without replacement), "recent" (the f most recent), "window"
    (uniform in [t - window, t)). ``version``: the store version it serves
    (None = newest at open); ``refresh()`` moves it to a newer one. Every draw
    is a pure function of (seed, batch, layer, root index).
    """

    _free = staticmethod(lambda h: lib.gsnap_tsampler_close(h))

    def __init__(self, db: Database, fanouts: Sequence[int], strategy: str = "uniform",
                 window: int = 0, inclusive: bool = False, dir: str = "in",
                 version: Optional[int] = None, seed: int = 1) -> None:
        _need()
        f = [int(x) for x in fanouts]
        if not 1 <= len(f) <= MAX_LAYERS:
            raise ValueError(f"fanouts: 1..{MAX_LAYERS} layers, got {len(f)}")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
        o = _TSOptions()
        o.version, o.dir, o.strategy = 1, _dir(dir), STRATEGIES[strategy]
        o.inclusive, o.window, o.as_of, o.seed = int(inclusive), int(window), _ver(version), int(seed)
        o.layers = len(f)
        for i, x in enumerate(f):
            o.fanouts[i] = x
        self.db, self.fanouts, self.strategy = db, tuple(f), strategy
        self._h: Optional[int] = None
        self._serial = 0
        self._batch = 0
        h = c_void_p()
        db._check(lib.gsnap_tsampler_open(db._handle(), byref(o), byref(h)), "TemporalSampler")
        self._h = h.value
        db._children.append(self)

    def _handle(self) -> int:
        if self._h is None:
            raise StateError(-31908, "the temporal sampler is closed")
        return self._h

    def _fail(self, rc: int, where: str) -> None:
        msg = (lib.gsnap_tsampler_errmsg(self._h) or b"").decode("utf-8", "replace")
        raise error(rc, msg or self.db._errmsg(), where)

    @property
    def version(self) -> int:
        """The store version served: every sampled event has a version <= it."""
        return lib.gsnap_tsampler_version(self._handle())

    @property
    def size(self) -> tuple:
        """(add events, nodes) held by the in-memory T-CSR."""
        e, n = c_uint64(), c_uint64()
        lib.gsnap_tsampler_size(self._handle(), byref(e), byref(n))
        return e.value, n.value

    def refresh(self, version: Optional[int] = None) -> int:
        """Extend to `version` (None = newest committed); returns the version served."""
        v = c_uint64()
        rc = lib.gsnap_tsampler_refresh(self._handle(), _ver(version), byref(v))
        if rc:
            self._fail(rc, "TemporalSampler.refresh")
        return v.value

    def sample(self, nodes: Any, times: Any, batch: Optional[int] = None) -> TemporalBatch:
        """Sample one batch for roots (nodes[i], times[i]); `batch` numbers it
        for reproducibility (default: a counter). Invalidates the previous batch."""
        nd = np.ascontiguousarray(nodes, dtype=np.uint64)
        tm = np.ascontiguousarray(times, dtype=np.int64)
        if nd.ndim != 1 or tm.shape != nd.shape:
            raise ValueError(f"nodes and times: 1-D arrays of one length, got {nd.shape} and {tm.shape}")
        if batch is None:
            batch = self._batch
        self._batch = int(batch) + 1
        h = self._handle()
        self._serial += 1
        buf, ln = c_void_p(), c_size_t()
        rc = lib.gsnap_tsampler_sample(h, nd.ctypes.data, tm.ctypes.data, len(nd), int(batch),
                                       byref(buf), byref(ln))
        if rc:
            self._fail(rc, "TemporalSampler.sample")
        return TemporalBatch(self, buf.value, ln.value)

    def random_nodes(self, batch: int, n: int) -> np.ndarray:
        """n root nodes drawn uniformly (with replacement) among nodes with events."""
        out = np.empty(n, dtype=np.uint64)
        rc = lib.gsnap_tsampler_random_nodes(self._handle(), int(batch), n, out.ctypes.data)
        if rc:
            self._fail(rc, "TemporalSampler.random_nodes")
        return out.view(_I64)



class EventStream(_Owned):
    """The store's add events in time order, in batches, with negatives
    (gsnap_tstream): iterate it for dicts of owned numpy arrays ``src``,
    ``dst``, ``t``, ``version`` (int64[n]) and ``neg`` (int64[n, negatives],
    uniform over nodes seen so far). Replays identically after ``rewind()``."""

    _free = staticmethod(lambda h: lib.gsnap_tstream_close(h))

    def __init__(self, db: Database, batch_size: int = 600, negatives: int = 1,
                 version: Optional[int] = None, seed: int = 1) -> None:
        _need()
        o = _StreamOptions()
        o.version, o.as_of, o.batch_size = 1, _ver(version), int(batch_size)
        o.negatives, o.seed = int(negatives), int(seed)
        self.db = db
        self._h: Optional[int] = None
        h = c_void_p()
        db._check(lib.gsnap_tstream_open(db._handle(), byref(o), byref(h)), "EventStream")
        self._h = h.value
        db._children.append(self)

    def _handle(self) -> int:
        if self._h is None:
            raise StateError(-31908, "the event stream is closed")
        return self._h

    def info(self) -> tuple:
        """(events in the stream, version it reads)."""
        e, v = c_uint64(), c_uint64()
        lib.gsnap_tstream_info(self._handle(), byref(e), byref(v))
        return e.value, v.value

    def rewind(self) -> None:
        lib.gsnap_tstream_rewind(self._handle())

    def __iter__(self) -> Iterator[dict]:
        sb = _StreamBatch()
        while True:
            rc = lib.gsnap_tstream_next(self._handle(), byref(sb))
            if rc == NOTFOUND:
                return
            if rc:
                raise error(rc, self.db._errmsg(), "EventStream")
            n, k = sb.n, sb.negatives

            def arr(addr: int, count: int) -> np.ndarray:
                a = np.empty(count, dtype=np.int64)
                if count:
                    ctypes.memmove(a.ctypes.data, addr, 8 * count)
                return a
            yield {"batch": sb.batch, "src": arr(sb.src, n), "dst": arr(sb.dst, n),
                   "t": arr(sb.t, n), "version": arr(sb.version, n),
                   "neg": arr(sb.neg, n * k).reshape(n, k)}



__all__ = ["TemporalSampler", "TemporalBatch", "TemporalLayer", "EventStream", "HAVE_TEMPORAL",
           "STRATEGIES"]
