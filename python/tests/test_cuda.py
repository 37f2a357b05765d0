"""Batches staged into GPU memory (Sampler(stage=True, device=0)).

These run where PyTorch sees a CUDA device and the library's stager lands on
it (scripts/gpu_check.sh runs them on a GPU machine, with
GSNAP_EXPECT_CUDA=1 turning a host fallback into a failure); elsewhere they
skip, saying why.
"""
import os

import pytest

np = pytest.importorskip("numpy", reason="numpy is missing (Debian: python3-numpy)")
torch = pytest.importorskip("torch", reason="python3-torch is missing (Debian: python3-torch)")

import graphsnap  # noqa: E402  (conftest put the checkout first on sys.path)

EXPECT = os.environ.get("GSNAP_EXPECT_CUDA") == "1"


def _gpu_sampler(db, fanouts, **kw):
    """A device-staging sampler, or a skip (a failure under GSNAP_EXPECT_CUDA=1)."""
    if not torch.cuda.is_available():
        if EXPECT:
            pytest.fail("GSNAP_EXPECT_CUDA=1 but torch.cuda.is_available() is False")
        pytest.skip("no CUDA device visible to PyTorch")
    s = db.sampler(fanouts, stage=True, device=0, **kw)
    if not s.on_device:
        s.close()
        if EXPECT:
            pytest.fail("GSNAP_EXPECT_CUDA=1 but the library staged on host buffers "
                        "(no libcudart found: set GSNAP_CUDART)")
        pytest.skip("the library found no CUDA runtime")
    return s


def _graph(db, n=600, deg=8, seed=1):
    rng = np.random.default_rng(seed)
    dst = np.repeat(np.arange(n), deg)
    src = rng.integers(0, n, len(dst))
    db.create_attr("feat", "float32", 16)
    db.create_attr("label", "int64", 1)
    feats = rng.standard_normal((n, 16)).astype(np.float32)
    labels = (np.arange(n) % 5).astype(np.int64)
    db.ingest_edges(src, dst, np.arange(len(dst)),
                    attrs={"feat": (np.arange(n), feats), "label": (np.arange(n), labels)})
    return n


def _host_view(mb):
    t = {"features": np.array(mb.features), "labels": np.array(mb.labels)}
    for i, b in enumerate(mb.blocks):
        t[f"src{i}"] = np.array(b.src_ids)
        t[f"indptr{i}"] = np.array(b.indptr)
        t[f"indices{i}"] = np.array(b.indices)
    return t


def _dev_view(mb):
    t = mb.to_torch()
    for v in [t["features"], t["labels"]] + [x for b in t["blocks"] for x in b.values()]:
        assert v.is_cuda, "a staged device batch gave a host tensor"
    out = {"features": t["features"].cpu().numpy(), "labels": t["labels"].cpu().numpy()}
    for i, b in enumerate(t["blocks"]):
        out[f"src{i}"] = b["src_ids"].cpu().numpy()
        out[f"indptr{i}"] = b["indptr"].cpu().numpy()
        out[f"indices{i}"] = b["indices"].cpu().numpy()
    return out


@pytest.mark.skipif(not graphsnap.HAVE_GATHER, reason="libgraphsnap gathers no features")
@pytest.mark.parametrize("prefetch", [False, True])
def test_device_batches_equal_host_batches(db, prefetch):
    n = _graph(db)
    ids = np.arange(n)
    kw = dict(seed=3, features="feat", labels="label")
    with db.sampler([5, 5], **kw) as h:
        want = [_host_view(mb) for mb in h.iter_batches(ids, 64, shuffle=True, seed=9)]
    with _gpu_sampler(db, [5, 5], **kw) as s:
        got = [_dev_view(mb) for mb in s.iter_batches(ids, 64, shuffle=True, seed=9,
                                                       prefetch=prefetch)]
    assert len(got) == len(want) == (n + 63) // 64
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for k in w:
            assert g[k].size == w[k].size and np.array_equal(g[k].reshape(w[k].shape), w[k]), k


def test_slot_reuse_waits_for_queued_gpu_work(db):
    """A kernel queued on batch A's device buffer, still waiting on the GPU
    when two more batches have been sampled (A's slot reused), reads A's
    bytes, not the newer batch's: the slot's next copy is ordered after the
    consumer's stream (gsnap_stager_retire)."""
    n = _graph(db)
    with _gpu_sampler(db, [5, 5], seed=3) as s:
        a = s.sample(np.arange(0, 64))
        x = torch.from_dlpack(a.blocks[0].dlpack("src_ids"))   # on the current stream
        want = x.cpu().numpy().copy()
        torch.cuda._sleep(1_000_000_000)                         # ~0.5 s of GPU time
        y = x.clone()                                            # queued behind the sleep
        s.sample(np.arange(n - 64, n))                           # the other slot
        s.sample(np.arange(200, 264))                            # A's slot again
        torch.cuda.synchronize()
        assert np.array_equal(y.cpu().numpy(), want), \
            "the clone queued on batch A read the batch that reused its slot"


def test_slot_reuse_waits_with_prefetch(db):
    """The same with prefetch=True: batch i+1 is staged on a thread while
    batch i is used; work queued on batch i-1 must still see i-1."""
    n = _graph(db)
    with _gpu_sampler(db, [5, 5], seed=3) as s:
        ids = np.arange(n)
        it = s.iter_batches(ids, 64, prefetch=True)
        a = next(it)
        x = torch.from_dlpack(a.blocks[0].dlpack("src_ids"))
        want = x.cpu().numpy().copy()
        torch.cuda._sleep(1_000_000_000)
        y = x.clone()
        next(it)                   # batch 1; batch 2 is being staged into A's slot
        next(it)
        torch.cuda.synchronize()
        assert np.array_equal(y.cpu().numpy(), want)
        it.close()
