"""Sampler: MFG shape, zero-copy views, lifetime, DLPack."""
import ctypes

import pytest

np = pytest.importorskip(
    "numpy", reason="numpy is missing (Debian: python3-numpy): skipping the Python tests")

import graphsnap as gs
from graphsnap import _dlpack


def ring_graph(db, n=200, seed=1):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 8 * n)
    dst = rng.integers(0, n, 8 * n)
    keep = src != dst
    return db.ingest_edges(src[keep], dst[keep], t=np.arange(keep.sum()))


def check_mfg(mb, seeds):
    blocks = mb.blocks
    assert len(blocks) == 2
    assert mb.seeds.tolist() == list(dict.fromkeys(seeds))           # dedup, first-seen order
    for i, b in enumerate(blocks):
        src = b.src_ids
        assert len(src) == b.num_src and len(set(src.tolist())) == b.num_src
        assert np.array_equal(b.dst_ids, src[: b.num_dst])           # dst prefix of src
        assert b.indptr[0] == 0 and b.indptr[-1] == b.num_edges
        assert np.all(np.diff(b.indptr) >= 0)
        assert np.all(b.indices < b.num_src)
        ei = b.edge_index
        assert ei.shape == (2, b.num_edges) and np.array_equal(ei[0], b.indices)
        if i + 1 < len(blocks):
            assert np.array_equal(blocks[i + 1].src_ids, b.dst_ids)  # layer chaining


def test_blocks_in_mfg_shape_and_edges_exist(db):
    ring_graph(db)
    with db.sampler([4, 3], seed=5) as s:
        seeds = [3, 7, 3, 11]
        mb = s.sample(seeds)
        check_mfg(mb, seeds)
        mb.check()
        b = mb.blocks[1]
        for j, d in enumerate(b.dst_ids.tolist()):                   # every edge is a real in-edge
            nbrs = set(db.neighbors(d)["node"].tolist())
            got = b.src_ids[b.indices[b.indptr[j]:b.indptr[j + 1]]].tolist()
            assert set(got) <= nbrs and len(got) == min(3, len(nbrs))


def test_zero_copy_views_point_into_library_buffer(db):
    ring_graph(db)
    with db.sampler([5, 5], seed=2) as s:
        mb = s.sample(np.arange(20))
        lo, hi = mb._host, mb._host + mb.nbytes                      # gsnap_sampler_next's buffer
        assert mb.buffer_address == lo
        for b in mb.blocks:
            for a in (b.src_ids, b.indptr, b.indices):
                addr = a.__array_interface__["data"][0]
                assert lo <= addr and addr + a.nbytes <= hi
                assert not a.flags.owndata and not a.flags.writeable
        # the bytes are the library's: read them through ctypes at the same address
        src = mb.blocks[0].src_ids
        raw = (ctypes.c_int64 * len(src)).from_address(src.ctypes.data)
        assert list(raw) == src.tolist()
        assert np.shares_memory(src, mb.buffer())


def test_lifetime_next_batch_invalidates_copy_keeps(db):
    ring_graph(db)
    with db.sampler([3, 3], seed=1) as s:
        mb = s.sample([1, 2])
        kept = mb.copy()
        ids = mb.input_nodes.copy()
        s.sample([5, 6])
        assert not mb.valid
        with pytest.raises(gs.StateError) as ei:
            mb.input_nodes
        assert ei.value.code == -31908
        assert kept.valid and np.array_equal(kept.input_nodes, ids)
        kept.check()
        k2 = s.sample([1, 2], keep=True)
        s.sample([9])
        assert k2.valid and k2.input_nodes.tolist()[:2] == [1, 2]
    with pytest.raises(gs.StateError):
        s.sample([1])


def test_iter_batches_covers_nodes(db):
    ring_graph(db)
    ids = np.arange(50)
    with db.sampler([2, 2]) as s:
        seen = []
        for mb in s.iter_batches(ids, 16, shuffle=True, seed=3):
            seen += mb.seeds.tolist()
        assert sorted(seen) == ids.tolist()


def test_sampler_errors(db):
    ring_graph(db)
    with pytest.raises(gs.NotFoundError):
        db.sampler([2, 2], snapshot="missing", mode="fcr")
    with pytest.raises(gs.InvalidArgumentError) as ei:
        db.sampler([2, 2], mode="nope")
    assert ei.value.code == -31901


def test_dlpack_round_trip_torch(db):
    torch = pytest.importorskip("torch", reason="python3-torch is missing")
    ring_graph(db)
    with db.sampler([4, 4], seed=9) as s:
        mb = s.sample(np.arange(10))
        b = mb.blocks[0]
        before = _dlpack.live_exports()
        t = torch.from_dlpack(b.dlpack("src_ids"))
        assert t.dtype == torch.int64 and t.data_ptr() == b.src_ids.ctypes.data   # shared
        assert t.tolist() == b.src_ids.tolist()
        ip = torch.from_dlpack(b.dlpack("indptr"))
        assert ip.dtype == torch.int32 and ip.tolist() == b.indptr.tolist()
        back = t.numpy()                                                   # and back to numpy
        assert back.ctypes.data == b.src_ids.ctypes.data
        assert _dlpack.live_exports() == before + 2
        del t, ip, back
        assert _dlpack.live_exports() == before                            # deleter ran
        cap = b.dlpack("indices").__dlpack__()                            # never consumed
        del cap
        assert _dlpack.live_exports() == before
        tt = mb.to_torch()
        bl = tt["blocks"][1]
        assert torch.equal(bl["edge_index"], torch.from_numpy(mb.blocks[1].edge_index))
        assert tt["seeds"].tolist() == list(range(10))


def test_dlpack_numpy_consumer(db):
    if not hasattr(np, "from_dlpack"):
        pytest.skip("numpy without from_dlpack")
    ring_graph(db)
    with db.sampler([2]) as s:
        mb = s.sample([1, 2, 3])
        a = np.from_dlpack(mb.blocks[0].dlpack("src_ids"))
        assert a.ctypes.data == mb.blocks[0].src_ids.ctypes.data
        assert a.tolist() == mb.input_nodes.tolist()


def test_staged_batches_host_fallback(db):
    ring_graph(db)
    with db.sampler([3, 3], seed=4, stage=True) as s:
        mb = s.sample([1, 2, 3])
        assert mb.device == (1, 0)                 # no GPU here: host staging buffer
        assert gs._lib.HAVE_NEXT_STAGED            # this checkout's library has it
        assert mb.buffer_address == mb._host       # packed in place, in the stager's slot
        slot0 = mb.buffer_address
        ref = s.sample([1, 2, 3], keep=True)       # same seeds, next batch number
        mb2 = s.sample([1, 2, 3])
        assert mb2.buffer_address == slot0        # two slots: batch 2 reuses batch 0's
        check_mfg(mb2, [1, 2, 3])
        lo = mb2.buffer_address
        a = mb2.blocks[0].src_ids
        assert lo <= a.ctypes.data < lo + mb2.nbytes
        assert ref.seeds.tolist() == mb2.seeds.tolist()


def test_superseded_batch_retires_its_consumer_streams(db, monkeypatch):
    """The streams a device batch was imported on (DLPack's stream argument,
    noted as __dlpack__ does for a device batch) are handed to
    gsnap_stager_retire once, when the batch is superseded: by the next
    sample(), or by the next batch of a prefetching iteration. (On a GPU
    python/tests/test_cuda.py checks the effect; here the calls.)"""
    ring_graph(db)
    calls = []
    monkeypatch.setattr(gs._lib.lib, "gsnap_stager_retire",
                        lambda st, tk, stream: calls.append((tk, stream)) or 0)
    monkeypatch.setattr(gs._lib, "HAVE_RETIRE", True)
    with db.sampler([3, 3], seed=4, stage=True) as s:
        a = s.sample([1, 2, 3])
        for stream in (None, 7, 7, -1):      # legacy default, a stream twice, "no sync"
            a._c.note_stream(stream)
        assert calls == []
        s.sample([4, 5])                       # supersedes a (ticket 0)
        assert sorted(calls, key=repr) == sorted([(0, None), (0, 7)], key=repr)
        calls.clear()
        s.sample([6])                          # the batch before had no consumer: nothing
        assert calls == []
        it = s.iter_batches(np.arange(100), 10, prefetch=True)
        first = next(it)
        first._c.note_stream(9)
        next(it)                               # first is superseded here
        assert calls == [(first._c.ticket, 9)]
        it.close()


def test_prefetch_yields_the_same_batches(db):
    ring_graph(db)
    ids = np.arange(200)
    with db.sampler([4, 4], seed=6) as s:
        ref = [mb for mb in s.iter_batches(ids, 32, shuffle=True, seed=2, keep=True)]
    with pytest.raises(ValueError):
        with db.sampler([4, 4], seed=6) as s:
            next(s.iter_batches(ids, 32, prefetch=True))      # needs stage=True
    with db.sampler([4, 4], seed=6, stage=True) as s:
        prev = None
        n = 0
        for mb, want in zip(s.iter_batches(ids, 32, shuffle=True, seed=2, prefetch=True), ref):
            if prev is not None:
                assert not prev.valid                          # invalid once the next is asked
            assert mb.valid and mb.batch == want.batch
            for b, w in zip(mb.blocks, want.blocks):
                assert np.array_equal(b.src_ids, w.src_ids)
                assert np.array_equal(b.indptr, w.indptr)
                assert np.array_equal(b.indices, w.indices)
            lo = mb.buffer_address                             # views into the staged slot
            assert lo <= mb.input_nodes.ctypes.data < lo + mb.nbytes
            mb.check()
            prev = mb
            n += 1
        assert n == len(ref) == 7
        it = s.iter_batches(ids, 32, prefetch=True)            # abandoned mid-way: no hang
        next(it)
        it.close()
        assert s.sample([1]).valid


@pytest.mark.skipif(not gs.HAVE_LIST_CACHE, reason="this libgraphsnap keeps no neighbour lists")
def test_kept_lists_give_the_same_batches(db):
    # several commits (several runs), duplicate edges across them
    for k in range(4):
        ring_graph(db, seed=1 + k % 2)
    ids = np.arange(200)
    got = []
    for lcb in (-1, 0, 1 << 20):
        with db.sampler([5, 10], seed=3, list_cache_bytes=lcb) as s:
            got.append([mb for mb in s.iter_batches(ids, 32, shuffle=True, seed=4, keep=True)])
            st = s.stats()
            if lcb < 0:
                assert st["list_hits"] == st["lists_kept"] == st["list_bytes"] == 0
            else:
                assert st["list_hits"] > 0 and st["lists_kept"] > 0 and st["list_bytes"] > 0
    for other in got[1:]:
        assert len(other) == len(got[0]) == 7
        for mb, want in zip(other, got[0]):
            for b, w in zip(mb.blocks, want.blocks):
                assert np.array_equal(b.src_ids, w.src_ids)
                assert np.array_equal(b.indices, w.indices)


def test_batches_are_freed_without_the_cycle_collector(db):
    import gc
    import weakref
    ring_graph(db)
    with db.sampler([3, 3]) as s:
        gc.disable()
        try:
            kept = s.sample([1, 2], keep=True)
            blocks, ids = kept.blocks, kept.input_nodes
            ref = weakref.ref(kept)
            del kept                                   # blocks/arrays keep the bytes, not a cycle
            assert ref() is None
            assert blocks[0].src_ids.tolist() == ids.tolist()
        finally:
            gc.enable()
