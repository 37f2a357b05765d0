"""Mini-batch neighbour sampling: Sampler, MiniBatch, Block (zero-copy)."""
from __future__ import annotations

import ctypes
import os
import threading
import time
from ctypes import byref, c_size_t, c_uint, c_uint64, c_void_p
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from . import _lib
from ._dlpack import BFLOAT16, KDL_CPU, KDL_CUDA, DLPackArray
from ._lib import lib
from ._owned import _Owned
from .database import Database, _dir, _time, _ver
from .errors import NotFoundError, NotSupportedError, StateError, error, NOTFOUND

MODES = ("fbl", "fcr", "fcr-sc", "pscr", "pscr-sc", "fscr", "fscr-sc", "pcf", "pcf-sc")
# attribute dtype code -> numpy dtype of the view (bfloat16: raw uint16 bits)
_ATTR_NP = {1: np.dtype(np.float32), 2: np.dtype(np.float16), 3: np.dtype(np.uint16),
            4: np.dtype(np.int64)}


class _Mem:
    """numpy's __array_interface__ over library memory: a zero-copy, read-only
    ndarray whose .base keeps `owner` (the memory's owner, if any) alive."""
    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: Any, address: int, shape: tuple, typestr: str) -> None:
        self.owner = owner
        self.__array_interface__ = {"data": (address, True), "shape": shape,
                                    "typestr": typestr, "version": 3}


def _view(owner: Any, address: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return np.asarray(_Mem(owner, address, shape, dtype.str))


_tls = threading.local()  # per-thread output structs (MiniBatch parsing)


def _scratch() -> tuple:
    t = getattr(_tls, "structs", None)
    if t is None:
        t = _tls.structs = (_lib.out(_lib.Block), _lib.out(_lib.BatchAttr),
                            c_uint64(), c_uint64(), c_uint64())
    return t


class Block:
    """One layer of a mini-batch in DGL's message-flow-graph (MFG) shape.

    ``src_ids[:num_dst]`` are the destination nodes (the dst nodes are the
    prefix of the src nodes); edges are given in CSR over the destinations:
    the sampled in-neighbours of destination j are
    ``src_ids[indices[indptr[j]:indptr[j+1]]]``. Arrays are zero-copy
    read-only views onto the batch buffer: ids as int64, indptr/indices as
    int32 (the library's u64/u32, same bits). ``edge_index`` (COO, computed,
    a new array) is PyG's [2, E]: row 0 source positions, row 1 destination
    positions (both local). blocks[0] is the input side, as in DGL.
    """

    __slots__ = ("_mb", "num_dst", "num_src", "num_edges", "_off")

    def __init__(self, core: "_Core", num_dst: int, num_src: int, num_edges: int,
                 off: tuple) -> None:
        # _mb is the batch's buffer state (_Core), shared with its MiniBatch:
        # a Block outlives a dropped MiniBatch without a reference cycle.
        self._mb, self.num_dst, self.num_src, self.num_edges = core, num_dst, num_src, num_edges
        self._off = off  # (src ids, indptr, indices) byte offsets in the buffer

    @property
    def src_ids(self) -> np.ndarray:
        """Original ids of the source nodes, int64[num_src] (dst nodes first)."""
        return self._mb.array(self._off[0], (self.num_src,), np.dtype(np.int64))

    @property
    def dst_ids(self) -> np.ndarray:
        """Original ids of the destination nodes (= src_ids[:num_dst])."""
        return self.src_ids[: self.num_dst]

    @property
    def indptr(self) -> np.ndarray:
        """CSR row pointer over the destinations, int32[num_dst + 1]."""
        return self._mb.array(self._off[1], (self.num_dst + 1,), np.dtype(np.int32))

    @property
    def indices(self) -> np.ndarray:
        """CSR column indices: positions in src_ids, int32[num_edges]."""
        return self._mb.array(self._off[2], (self.num_edges,), np.dtype(np.int32))

    @property
    def edge_dst(self) -> np.ndarray:
        """Destination position of each edge (int64[num_edges], computed)."""
        return np.repeat(np.arange(self.num_dst, dtype=np.int64), np.diff(self.indptr))

    @property
    def edge_index(self) -> np.ndarray:
        """COO edge index int64[2, num_edges]: [source positions, destination
        positions] (PyG's convention; computed, not a view)."""
        return np.stack([self.indices.astype(np.int64), self.edge_dst])

    def dlpack(self, field: str) -> DLPackArray:
        """A DLPack-capable handle on 'src_ids', 'indptr' or 'indices'
        (zero-copy; a device tensor when the batch was staged on a GPU)."""
        i = ("src_ids", "indptr", "indices").index(field)
        shape = ((self.num_src,), (self.num_dst + 1,), (self.num_edges,))[i]
        dt = (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.int32))[i]
        return self._mb.dlpack(self._off[i], shape, dt)

    def to_torch(self) -> dict:
        """{'src_ids', 'indptr', 'indices'} as torch tensors sharing the batch
        memory (torch.from_dlpack), plus the COO 'edge_index' (int64 [2, E])
        built with torch on the batch's device."""
        import torch
        t = {f: torch.from_dlpack(self.dlpack(f)) for f in ("src_ids", "indptr", "indices")}
        counts = (t["indptr"][1:] - t["indptr"][:-1]).long()
        dst = torch.repeat_interleave(torch.arange(self.num_dst, device=counts.device), counts)
        t["edge_index"] = torch.stack([t["indices"].long(), dst])
        return t

    def __repr__(self) -> str:
        return (f"Block(num_src={self.num_src}, num_dst={self.num_dst}, "
                f"num_edges={self.num_edges})")


class _Core:
    """The buffer behind a MiniBatch and its Blocks: where it is, who owns the
    bytes, and which sampler batch it is (for the lifetime check)."""

    __slots__ = ("sampler", "serial", "host", "nbytes", "base", "device", "owner", "whole",
                 "batch", "ticket", "streams")

    def __init__(self, sampler, serial, host, nbytes, base, device, owner,
                 ticket: Optional[int] = None) -> None:
        self.sampler, self.serial, self.host, self.nbytes = sampler, serial, host, nbytes
        self.base, self.device, self.owner = base, device, owner
        self.whole: Optional[np.ndarray] = None
        self.batch = -1
        self.ticket = ticket  # the staging slot's ticket (device batches)
        self.streams: Optional[set] = None  # CUDA streams that imported it (DLPack)

    def note_stream(self, stream: Any) -> None:
        """DLPack consumer stream (None: the legacy default stream, 1 =
        cudaStreamLegacy, 2 = cudaStreamPerThread, else a cudaStream_t; -1:
        the consumer asked for no synchronisation, nothing to note)."""
        if stream is not None and stream == -1:
            return
        if self.streams is None:
            self.streams = set()
        self.streams.add(0 if stream is None else int(stream))

    def retire(self, stager: Optional[int]) -> None:
        """The batch is superseded: order its slot's next copy after the GPU
        work its consumers queued (gsnap_stager_retire per stream)."""
        streams, self.streams = self.streams, None
        if not streams or stager is None or self.ticket is None or not _lib.HAVE_RETIRE:
            return
        for st in streams:
            rc = lib.gsnap_stager_retire(stager, self.ticket, st or None)
            if rc:
                raise error(rc, "gsnap_stager_retire failed", "Sampler")

    def valid(self) -> bool:
        if self.owner is not None:
            return True
        s = self.sampler
        return s is not None and s._h is not None and s._serial == self.serial

    def check(self) -> None:
        if not self.valid():
            raise StateError(-31908, f"mini-batch {self.batch} is no longer valid: the sampler "
                             "produced another batch or closed (use .copy() or keep=True)")

    def array(self, off: int, shape: tuple, dt: np.dtype) -> np.ndarray:
        self.check()
        if self.device[0] != KDL_CPU:
            raise NotSupportedError(-31913, "the batch is in device memory: use to_torch() "
                                    "or dlpack(), or copy() for host arrays")
        w = self.whole
        if w is None:  # one numpy view of the whole buffer; arrays are slices of it
            # Its base holds the bytes' owner (a copy's numpy buffer; None for
            # the sampler's memory).
            w = self.whole = _view(self.owner, self.base, (self.nbytes,), np.dtype(np.uint8))
        n = dt.itemsize
        for d in shape:
            n *= d
        return w[off:off + n].view(dt).reshape(shape)

    def dlpack(self, off: int, shape: tuple, dt: Any) -> DLPackArray:
        self.check()
        return DLPackArray(self, self.base + off, shape, dt, self.device)


class MiniBatch:
    """A sampled mini-batch: ``blocks`` (L Blocks, blocks[0] = input side),
    ``input_nodes`` (= blocks[0].src_ids), ``seeds`` (= blocks[-1].dst_ids),
    ``features`` ([len(input_nodes), dim], rows in input_nodes order) and
    ``labels`` (one per seed) when the sampler gathers them, and header fields
    ``batch``, ``generation``, ``version``.

    LIFETIME: the arrays are zero-copy views onto the sampler's buffer and are
    valid only until the sampler produces its next batch (or closes). Using
    this MiniBatch after that raises StateError; arrays taken from it before
    then must not be used (they would show the next batch's bytes, or freed
    memory). ``copy()`` (or ``keep=True``) gives a batch that owns its bytes.
    """

    def __init__(self, sampler: Optional["Sampler"], host: int, nbytes: int, base: int,
                 device: tuple, owner: Any = None, serial: Optional[int] = None,
                 ticket: Optional[int] = None) -> None:
        self._sampler = sampler
        if serial is None:
            serial = sampler._serial if sampler is not None else -1
        # owner: a numpy buffer when the batch owns its bytes
        c = self._c = _Core(sampler, serial, host, nbytes, base, device, owner, ticket)
        self.nbytes, self.device = nbytes, device
        blk, self._battr, b, g, v = _scratch()
        rc = lib.gsnap_block_info(host, nbytes, byref(b), byref(g), byref(v))
        if rc:
            raise error(rc, "bad mini-batch header", "MiniBatch")
        self.batch, self.generation, self.version = b.value, g.value, v.value
        c.batch = self.batch
        nl = lib.gsnap_block_layers(host, nbytes)
        blocks = []
        for i in range(nl):
            rc = lib.gsnap_block_get(host, nbytes, i, byref(blk))
            if rc:
                raise error(rc, f"layer {i}", "MiniBatch")
            blocks.append(Block(c, blk.num_dst, blk.num_src, blk.num_edges,
                                (blk.src_ids - host, blk.indptr - host, blk.indices - host)))
        self.blocks: "list[Block]" = blocks
        self._feat = self._attr(lib.gsnap_block_features) if _lib.HAVE_GATHER else None
        self._lab = self._attr(lib.gsnap_block_labels) if _lib.HAVE_GATHER else None

    def _attr(self, fn) -> Optional[tuple]:
        a = self._battr
        rc = fn(self._host, self.nbytes, byref(a))
        if rc == NOTFOUND:
            return None
        if rc:
            raise error(rc, "bad attribute section", "MiniBatch")
        return (a.data - self._host, a.rows, a.dim, a.dtype)

    # -- lifetime
    @property
    def valid(self) -> bool:
        """False once the sampler has moved on (for a batch that does not own its bytes)."""
        return self._c.valid()

    def _check(self) -> None:
        self._c.check()

    def _array(self, off: int, shape: tuple, dt: np.dtype) -> np.ndarray:
        return self._c.array(off, shape, dt)

    def _dlpack(self, off: int, shape: tuple, dt: Any) -> DLPackArray:
        return self._c.dlpack(off, shape, dt)

    # buffer state lives in the core (shared with the blocks)
    _host = property(lambda self: self._c.host, lambda self, v: setattr(self._c, "host", v))
    _serial = property(lambda self: self._c.serial,
                       lambda self, v: setattr(self._c, "serial", v))
    _base = property(lambda self: self._c.base)
    _owner = property(lambda self: self._c.owner)

    @property
    def buffer_address(self) -> int:
        """Address of the packed buffer the arrays point into."""
        return self._base

    def buffer(self) -> np.ndarray:
        """The whole packed buffer as uint8 (zero-copy, host batches)."""
        return self._array(0, (self.nbytes,), np.dtype(np.uint8))

    def check(self) -> None:
        """gsnap_block_check on the buffer (structure, offsets, attributes)."""
        self._check()
        if self._host is None:
            raise NotSupportedError(-31913, "a prefetched device batch has no host copy to check")
        rc = lib.gsnap_block_check(self._host, self.nbytes)
        if rc:
            raise error(rc, "gsnap_block_check failed", "MiniBatch.check")

    def copy(self) -> "MiniBatch":
        """A batch owning a copy of the bytes (host memory), valid forever."""
        self._check()
        if self._host is None:
            raise NotSupportedError(-31913, "a prefetched device batch has no host copy")
        own = np.empty(self.nbytes, dtype=np.uint8)
        ctypes.memmove(own.ctypes.data, self._host, self.nbytes)
        return MiniBatch(self._sampler, own.ctypes.data, self.nbytes, own.ctypes.data,
                         (KDL_CPU, 0), owner=own)

    # -- arrays
    @property
    def input_nodes(self) -> np.ndarray:
        """Original ids of blocks[0]'s source nodes (the rows of features)."""
        return self.blocks[0].src_ids

    @property
    def seeds(self) -> np.ndarray:
        """The (deduplicated) seeds: the last block's destinations (rows of labels)."""
        return self.blocks[-1].dst_ids

    output_nodes = seeds

    def _attr_array(self, a: Optional[tuple], squeeze: bool) -> Optional[np.ndarray]:
        if a is None:
            return None
        off, rows, dim, dt = a
        shape = (rows,) if squeeze and dim == 1 else (rows, dim)
        return self._array(off, shape, _ATTR_NP[dt])

    @property
    def features(self) -> Optional[np.ndarray]:
        """Features of input_nodes, [rows, dim] (uint16 bits for bfloat16), or None."""
        return self._attr_array(self._feat, False)

    @property
    def labels(self) -> Optional[np.ndarray]:
        """Labels of the seeds ([n] when dim is 1, else [n, dim]), or None."""
        return self._attr_array(self._lab, True)

    def dlpack(self, field: str) -> DLPackArray:
        """DLPack handle on 'features' or 'labels' (zero-copy)."""
        a = {"features": self._feat, "labels": self._lab}[field]
        if a is None:
            raise NotFoundError(NOTFOUND, f"the batch has no {field}")
        off, rows, dim, dt = a
        shape = (rows,) if field == "labels" and dim == 1 else (rows, dim)
        return self._dlpack(off, shape, BFLOAT16 if dt == 3 else _ATTR_NP[dt])

    def to_torch(self) -> dict:
        """Torch tensors sharing the batch memory through DLPack:
        {'blocks': [Block.to_torch() ...], 'input_nodes', 'seeds',
        'features' (if any), 'labels' (if any)}. Same lifetime as the batch."""
        import torch
        out: dict = {"blocks": [b.to_torch() for b in self.blocks]}
        out["input_nodes"] = out["blocks"][0]["src_ids"]
        out["seeds"] = out["blocks"][-1]["src_ids"][: self.blocks[-1].num_dst]
        for f in ("features", "labels"):
            if (self._feat if f == "features" else self._lab) is not None:
                out[f] = torch.from_dlpack(self.dlpack(f))
        return out

    def __repr__(self) -> str:
        st = "" if self.valid else " (invalid)"
        return (f"<MiniBatch {self.batch}: {len(self.blocks)} blocks, "
                f"{self.blocks[0].num_src if self.blocks else 0} input nodes, "
                f"{self.nbytes} bytes{st}>")


class Sampler(_Owned):
    """GraphSDSampler mini-batch neighbour sampling over a Database.

    Sampler(db, fanouts, snapshot=None, mode="fbl", features=None, labels=None, ...)

    fanouts are in DGL order: fanouts[0] is the input layer, fanouts[-1] the
    layer next to the seeds; -1 = all neighbours. With `snapshot`, the cached
    modes serve from (and refresh into) that snapshot's caches and reads are
    at its (T, V); without one they build an in-memory cache from the store
    at (at, version). `features` / `labels` name attribute tables gathered
    with each batch (features for blocks[0]'s source nodes, labels for the
    seeds), read at the sampler's (T, V).

    Use::

        with db.sampler([10, 10], features="feat", labels="label") as s:
            for mb in s.iter_batches(train_ids, batch_size=512, shuffle=True):
                x = torch.from_dlpack(mb.dlpack("features"))
                ...

    Each MiniBatch is a zero-copy view that is valid only until the next batch
    (see MiniBatch); pass keep=True (or call mb.copy()) to keep batches.
    stage=True copies each batch into the library's pinned staging buffers
    and, when CUDA and a device are present (device >= 0), into device memory:
    then only to_torch()/dlpack() work and give CUDA tensors.
    One thread at a time per sampler; ctypes releases the GIL while sampling.

    Args:
        db: the Database (keep it open while the sampler lives).
        fanouts: neighbours per layer, input layer first; -1 = all.
        snapshot: name of a snapshot to serve from, or None.
        mode: one of graphsnap.MODES: "fbl" (every layer from the store),
            "fcr"/"fcr-sc" (caches rebuilt every `period` batches),
            "pscr", "fscr", "pcf" and their "-sc" shared-cache forms (on the
            fly refresh); docs/sampler.md defines each.
        dir: "in" (in-neighbours, as DGL) or "out".
        seed: random seed; a batch is a function of (seed, batch number,
            cache generation).
        features, labels: attribute tables gathered into each batch.
        alpha, gamma, delta: cache amplification, OTF refresh share, PCF
            cache share (0 = the library defaults 2, 0.15, 0.4).
        period: refresh every `period` batches (0 = never).
        threshold: cache only nodes of degree above it.
        max_staleness: < 0 frozen at the snapshot's (T, V); >= 0 read the
            newest version, redrawing cached entries older than this many
            versions whose node got edges.
        at, version: read point without a snapshot (None = now / newest).
        refresh_policy: how the OTF modes choose gamma per layer at each
            scheduled refresh: "fixed" (gamma), "miss" (clamp(DeltaH /
            (2 lambda), 0, 1), DeltaH the share of the frontier the cache
            did not hold over the window) or "feedback" (min(1, kappa *
            statistic), the statistic given to report()).
        lambdas: "miss": cost weight per layer, input layer first (None = 0.5).
        kappa: "feedback": the factor (0 = 1).
        adapt_window: batches DeltaH and core frequencies are measured over
            (0 = period).
        core_min, core_max_bytes: run-time core: a node with core_min
            frontier appearances over the window joins the cached core at
            the next refresh, one below leaves; the core's bytes stay under
            core_max_bytes (0 = no bound). 0 = the static threshold core.
        keep: every batch a copy that owns its bytes (slower, no lifetime rule).
        stage, device: see above.
        shared, shared_dir: the shared host tier (a library with options
            version 4, graphsnap.HAVE_SHARED): the decoded cache image is
            published read-only in shared_dir (None = $GSNAP_SHARED_DIR,
            else /dev/shm) and mapped by every process serving the same
            image (copy on write: what a mode writes stays private), so N
            trainer processes on one graph hold about one image
            (docs/sampler.md, "Shared host tier"). stats() counts
            shared_attached / _published / _refused / _bytes; shared_note
            says why a published image was refused.
        list_cache_bytes: bytes of decoded neighbour lists read from the
            store (FBL, and the cached modes' store reads) kept across
            batches while the store's runs stay the same (a library with
            options version 5, graphsnap.HAVE_LIST_CACHE): 0 = 256 MiB,
            < 0 = none; the batches are the same either way
            (docs/sampler.md, "Kept lists").

    Raises:
        NotFoundError (no such snapshot or attribute table),
        InvalidArgumentError (bad options, named in the message), ...
    """

    _free = staticmethod(lambda h: lib.gsnap_sampler_close(h))

    def __init__(self, db: Database, fanouts: Sequence[int], snapshot: Optional[str] = None,
                 mode: str = "fbl", dir: str = "in", seed: int = 0,
                 features: Optional[str] = None, labels: Optional[str] = None,
                 alpha: float = 0.0, gamma: float = 0.0, delta: float = 0.0, period: int = 0,
                 threshold: int = 0, max_staleness: int = -1, at: Optional[int] = None,
                 version: Optional[int] = None, keep: bool = False, stage: bool = False,
                 device: int = -1, refresh_policy: str = "fixed",
                 lambdas: Optional[Sequence[float]] = None, kappa: float = 0.0,
                 adapt_window: int = 0, core_min: int = 0, core_max_bytes: int = 0,
                 shared: bool = False, shared_dir: Optional[str] = None,
                 list_cache_bytes: int = 0) -> None:
        f = [int(x) for x in fanouts]
        if not 1 <= len(f) <= _lib.MAX_LAYERS:
            raise ValueError(f"fanouts: 1..{_lib.MAX_LAYERS} layers, got {len(f)}")
        if (features or labels) and not _lib.HAVE_GATHER:
            raise NotSupportedError(-31913, "this libgraphsnap gathers no features/labels")
        if shared and not _lib.HAVE_SHARED:
            raise NotSupportedError(-31913, "this libgraphsnap has no shared host tier")
        if list_cache_bytes > 0 and not _lib.HAVE_LIST_CACHE:
            raise NotSupportedError(-31913, "this libgraphsnap keeps no neighbour lists")
        o = _lib.SamplerOptions()
        o.version = _lib.SAMPLER_OPTIONS_VERSION
        m = ctypes.c_int()
        rc = lib.gsnap_sample_mode_parse(mode.encode(), byref(m))
        if rc:
            raise error(rc, f"unknown mode {mode!r} (one of {', '.join(MODES)})", "Sampler")
        o.mode = m.value
        o.layers = len(f)
        for i, x in enumerate(f):
            o.fanouts[i] = x
        o.dir, o.seed, o.alpha, o.gamma, o.delta = _dir(dir), seed, alpha, gamma, delta
        o.period, o.threshold, o.max_staleness = period, threshold, max_staleness
        o.at_t, o.as_of = _time(at), _ver(version)
        self._names = (features.encode() if features else None,
                       labels.encode() if labels else None)  # kept alive with o
        o.features, o.labels = self._names
        self._adapt_options(o, len(f), refresh_policy, lambdas, kappa, adapt_window, core_min,
                            core_max_bytes)
        if _lib.HAVE_SHARED:
            self._shared_dir = os.fsencode(shared_dir) if shared_dir else None  # kept alive with o
            o.shared, o.shared_dir = int(bool(shared)), self._shared_dir
        if _lib.HAVE_LIST_CACHE:
            o.list_cache_bytes = int(list_cache_bytes)
        self._opts = o
        self.db = db
        self.fanouts = tuple(f)
        self.snapshot, self.mode, self.keep = snapshot, mode, keep
        self.features, self.labels = features, labels
        self._serial = 0
        self._h: Optional[int] = None
        self._stager: Optional[int] = None
        self._current: Optional[_Core] = None  # the batch handed out last (retire)
        self.device = (KDL_CPU, 0)
        self.seconds_sample = 0.0  # time inside gsnap_sampler_next
        self.seconds_stage = 0.0   # time copying into staging buffers
        h = c_void_p()
        db._check(lib.gsnap_sampler_open(db._handle(), snapshot.encode() if snapshot else None,
                                         byref(o), byref(h)), "Sampler")
        self._h = h.value
        db._children.append(self)
        if stage:
            st = c_void_p()
            rc = lib.gsnap_stager_open(1 << 20, 2, device, byref(st))
            if rc:
                self.close()
                raise error(rc, "gsnap_stager_open failed", "Sampler(stage=True)")
            self._stager = st.value
            if lib.gsnap_stager_on_device(st):
                self.device = (KDL_CUDA, max(device, 0))

    @staticmethod
    def _adapt_options(o, layers: int, policy: str, lambdas, kappa: float, window: int,
                       core_min: int, core_max_bytes: int) -> None:
        """The version-4 fields (adaptive refresh, run-time core)."""
        asked = (policy != "fixed" or lambdas is not None or kappa or window or core_min
                 or core_max_bytes)
        if not _lib.HAVE_ADAPT:
            if asked:
                raise NotSupportedError(-31913, "this libgraphsnap has no adaptive refresh")
            return
        p = ctypes.c_int()
        if lib.gsnap_refresh_policy_parse(policy.encode(), byref(p)):
            raise error(-31901, f"unknown refresh_policy {policy!r} (fixed, miss, feedback)",
                        "Sampler")
        o.policy, o.kappa, o.adapt_window = p.value, kappa, window
        o.core_min, o.core_max_bytes = core_min, core_max_bytes
        if lambdas is not None:
            lam = [float(x) for x in lambdas]
            if len(lam) != layers:
                raise ValueError(f"lambdas: {len(lam)} values for {layers} layers")
            for i, x in enumerate(lam):
                getattr(o, "lambda")[i] = x

    def report(self, layer: int, value: float) -> None:
        """Feedback policy: the trainer's statistic for `layer` (input layer
        0; e.g. the gradient variance of its weights). The next scheduled
        refresh uses gamma = min(1, kappa * value) for that layer."""
        if not _lib.HAVE_ADAPT:
            raise NotSupportedError(-31913, "this libgraphsnap has no adaptive refresh")
        rc = lib.gsnap_sampler_report(self._handle(), int(layer), float(value))
        if rc:
            raise error(rc, f"layer {layer} value {value}: the policy must be 'feedback', the "
                        f"layer < {len(self.fanouts)} and the value finite and >= 0",
                        "Sampler.report")

    def gamma_history(self) -> list:
        """Every gamma chosen so far, oldest first: dicts with batch, layer,
        gamma and its inputs (needed, not_held, stale, delta_h, lambda,
        statistic, kappa). [] without adaptive refresh."""
        if not _lib.HAVE_ADAPT:
            return []
        n = lib.gsnap_sampler_gamma_history(self._handle(), None, 0)
        arr = (_lib.GammaChoice * max(n, 1))()
        n = min(n, lib.gsnap_sampler_gamma_history(self._handle(), arr, n))
        return [{k: getattr(arr[i], k) for k, _ in _lib.GammaChoice._fields_} for i in range(n)]

    def adapt_stats(self) -> dict:
        """Policy and core statistics (decisions, skipped, core_nodes, core_bytes,
        core_joined, core_left, core_capped, ...)."""
        st = _lib.AdaptStats()
        if _lib.HAVE_ADAPT:
            lib.gsnap_sampler_adapt_stats_get(self._handle(), byref(st))
        return {k: getattr(st, k) for k, _ in _lib.AdaptStats._fields_}

    def _handle(self) -> int:
        if self._h is None:
            raise StateError(-31908, "the sampler is closed")
        return self._h

    def _seeds(self, seeds: Any) -> np.ndarray:
        s = np.ascontiguousarray(seeds, dtype=np.uint64)
        if s.ndim != 1:
            raise ValueError(f"seeds: expected a 1-D array, got shape {s.shape}")
        return s

    def _next(self, s: np.ndarray) -> tuple:
        """gsnap_sampler_next (+ staging): (host buffer, bytes, staged base)."""
        h = self._handle()
        buf, ln = c_void_p(), c_size_t()
        t0 = time.perf_counter()
        if self._stager is not None and _lib.HAVE_NEXT_STAGED:
            # packed straight into the stager's slot; its transfer started
            ticket, p, pl = c_uint(), c_void_p(), c_size_t()
            rc = lib.gsnap_sampler_next_staged(h, s.ctypes.data, len(s), self._stager,
                                               byref(ticket), byref(buf), byref(ln))
            t1 = time.perf_counter()
            self.seconds_sample += t1 - t0
            if rc:
                raise error(rc, self.db._errmsg(), "Sampler.sample")
            rc = lib.gsnap_stager_wait(self._stager, ticket.value, byref(p), byref(pl))
            if rc:
                raise error(rc, "staging failed", "Sampler.sample")
            self.seconds_stage += time.perf_counter() - t1
            return buf.value, ln.value, p.value, ticket.value
        rc = lib.gsnap_sampler_next(h, s.ctypes.data, len(s), byref(buf), byref(ln))
        t1 = time.perf_counter()
        self.seconds_sample += t1 - t0
        if rc:
            raise error(rc, self.db._errmsg(), "Sampler.sample")
        host, n = buf.value, ln.value
        base, tk = host, None
        if self._stager is not None:
            p, pl, ticket = c_void_p(), c_size_t(), c_uint()
            rc = lib.gsnap_stager_submit(self._stager, host, n, byref(ticket))
            if rc == 0:
                rc = lib.gsnap_stager_wait(self._stager, ticket.value, byref(p), byref(pl))
            if rc:
                raise error(rc, "staging failed", "Sampler.sample")
            base, tk = p.value, ticket.value
            self.seconds_stage += time.perf_counter() - t1
        return host, n, base, tk

    @property
    def on_device(self) -> bool:
        """True when batches are staged into GPU memory (stage=True, a device
        >= 0, and the library found a CUDA runtime and that device)."""
        return self.device[0] == KDL_CUDA

    def _retire_current(self) -> None:
        """The batch handed out last is superseded (device staging: its
        slot's next copy waits, on the GPU, for the work queued on it)."""
        core, self._current = self._current, None
        if core is not None:
            core.retire(self._stager)

    def sample(self, seeds: Any, keep: Optional[bool] = None) -> MiniBatch:
        """Sample one mini-batch for `seeds` (node ids; duplicates kept once,
        in first-seen order). Invalidates the previous batch unless it was
        kept. Returns a MiniBatch (a kept copy when keep, or self.keep)."""
        s = self._seeds(seeds)
        self._serial += 1
        self._retire_current()
        host, n, base, tk = self._next(s)
        mb = MiniBatch(self, host, n, base, self.device, ticket=tk)
        if self.keep if keep is None else keep:
            return mb.copy()
        self._current = mb._c
        return mb

    __call__ = sample

    def _prefetch_one(self, seeds: np.ndarray) -> MiniBatch:
        # Runs on the prefetch thread while the caller uses the previous batch:
        # that batch lives in the other staging slot, untouched by this one.
        host, n, base, tk = self._next(seeds)
        on_host = self.device[0] == KDL_CPU
        mb = MiniBatch(self, base if on_host else host, n, base, self.device, serial=-1,
                       ticket=tk)
        if not on_host and not _lib.HAVE_NEXT_STAGED:
            mb._host = None  # the sampler's buffer is reused by the next prefetch
        # (packed in the slot, the host bytes live as long as the batch)
        return mb

    def iter_batches(self, nodes: Any, batch_size: int, shuffle: bool = False,
                     drop_last: bool = False, seed: Optional[int] = None,
                     keep: Optional[bool] = None, prefetch: bool = False) -> Iterator[MiniBatch]:
        """Yield one MiniBatch per `batch_size` slice of `nodes` (shuffled
        with numpy's default_rng(seed) when shuffle). Each batch is valid until
        the next one is requested (unless keep).

        prefetch=True (needs stage=True) samples and stages batch i+1 on a
        background thread while the caller works on batch i (ctypes releases
        the GIL, so sampling and gathering overlap the model's compute); the
        batches are the same as without prefetch. Do not call sample() on this
        sampler while such an iteration is running."""
        ids = np.asarray(nodes, dtype=np.uint64)
        if shuffle:
            ids = ids[np.random.default_rng(seed).permutation(len(ids))]
        n = len(ids)
        end = n - n % batch_size if drop_last else n
        slices = [ids[i:i + batch_size] for i in range(0, end, batch_size)]
        if not prefetch:
            for sl in slices:
                yield self.sample(sl, keep=keep)
            return
        if self._stager is None:
            raise ValueError("prefetch=True needs a staging sampler (Sampler(..., stage=True)): "
                             "the staged copy is what stays valid while the next batch is sampled")
        from concurrent.futures import ThreadPoolExecutor
        keep = self.keep if keep is None else keep
        ex = ThreadPoolExecutor(1, thread_name_prefix="graphsnap-prefetch")
        fut = ex.submit(self._prefetch_one, self._seeds(slices[0])) if slices else None
        try:
            for i in range(len(slices)):
                assert fut is not None
                mb = fut.result()
                fut = None
                self._serial += 1            # the previous batch is invalid from here
                mb._serial = self._serial
                # ... and batch i+1 goes to its slot: its copy waits for the
                # GPU work queued on batch i-1
                self._retire_current()
                if not keep:
                    self._current = mb._c
                if i + 1 < len(slices):
                    fut = ex.submit(self._prefetch_one, self._seeds(slices[i + 1]))
                yield mb.copy() if keep else mb
        finally:
            if fut is not None:
                try:
                    fut.result()
                except Exception:
                    pass
            ex.shutdown(wait=True)

    def random_seeds(self, batch: int, n: int) -> np.ndarray:
        """The library's deterministic random seeds for batch number `batch`."""
        out = np.empty(n, dtype=np.uint64)
        self.db._check(lib.gsnap_sampler_random_seeds(self._handle(), batch, n, out.ctypes.data),
                       "random_seeds")
        return out

    def refresh(self) -> None:
        """Run the mode's cache refresh now (one new generation)."""
        self.db._check(lib.gsnap_sampler_refresh(self._handle()), "Sampler.refresh")

    def stats(self) -> dict:
        """Library statistics (batches, edges, seeds, generation, seconds per stage...)."""
        st = _lib.out(_lib.SamplerStats)
        lib.gsnap_sampler_stats_get(self._handle(), byref(st))
        return {k: getattr(st, k) for k, _ in _lib.SamplerStats._fields_ if k != "layer"}

    @property
    def shared_note(self) -> Optional[str]:
        """Why a published shared image was refused or could not be
        published (None when nothing went wrong, or without shared)."""
        if not _lib.HAVE_SHARED:
            return None
        r = lib.gsnap_sampler_shared_note(self._handle())
        return r.decode(errors="replace") if r else None

    def close(self) -> None:
        """Close (invalidates the current batch). Idempotent."""
        self._serial += 1
        if self._stager is not None:
            lib.gsnap_stager_close(self._stager)
            self._stager = None
        super().close()
