"""The shared host tier from Python: Sampler(shared=True) gives the private
sampler's batches, a second sampler maps the published image, a damaged
image is refused (shared_note says why) and the batches stay the same."""
import glob
import os

import pytest

np = pytest.importorskip(
    "numpy", reason="numpy is missing (Debian: python3-numpy): skipping the Python tests")

import graphsnap as gs

pytestmark = pytest.mark.skipif(not gs.HAVE_SHARED, reason="library without the shared host tier")


def graph(db, n=300, seed=3):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 10 * n)
    dst = rng.integers(0, n, 10 * n)
    keep = src != dst
    db.ingest_edges(src[keep], dst[keep], t=np.arange(keep.sum()))


def batches(db, shm=None, n=12):
    with db.sampler([4, 6], mode="fscr", seed=9, period=4, shared=shm is not None,
                    shared_dir=shm) as s:
        out = [s.sample(s.random_seeds(b, 40)).buffer().tobytes() for b in range(n)]
        return out, s.stats(), s.shared_note


def test_shared_equals_private_and_maps(db, tmp_path):
    graph(db)
    shm = str(tmp_path / "shm")
    os.mkdir(shm)
    priv, st0, _ = batches(db)
    assert st0["shared_bytes"] == 0
    a, st1, note = batches(db, shm)
    assert a == priv and note is None
    assert st1["shared_published"] >= 1 and st1["shared_bytes"] > 0
    files = glob.glob(os.path.join(shm, "gsnap-*.img"))
    assert 1 <= len(files) <= 2


def test_damaged_image_refused(db, tmp_path):
    graph(db)
    shm = str(tmp_path / "shm")
    os.mkdir(shm)
    with db.sampler([5], mode="fcr", seed=2, shared=True, shared_dir=shm) as s:
        ref = s.sample([1, 2, 3], keep=True).buffer().tobytes()
    (img,) = glob.glob(os.path.join(shm, "gsnap-*-g0.img"))
    with open(img, "r+b") as f:  # truncate: shorter than its header says
        f.truncate(os.path.getsize(img) // 2)
    with db.sampler([5], mode="fcr", seed=2, shared=True, shared_dir=shm) as s:
        assert s.sample([1, 2, 3]).buffer().tobytes() == ref
        st = s.stats()
        assert st["shared_refused"] == 1 and st["shared_published"] == 1
        assert "truncated" in s.shared_note or "size" in s.shared_note


def test_shared_needs_a_library_that_has_it(db):
    graph(db)
    with db.sampler([3], mode="fcr", shared=False) as s:  # off: nothing published
        s.sample([1])
        assert s.stats()["shared_bytes"] == 0 and s.shared_note is None
