"""The example trains: >= 0.8 test accuracy on 4 communities, fixed seed (the
time it took is printed, not asserted: tests never depend on timing)."""
import os
import sys
import time

import pytest

np = pytest.importorskip("numpy", reason="numpy is missing (Debian: python3-numpy)")
torch = pytest.importorskip("torch", reason="python3-torch is missing (Debian: python3-torch)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "examples"))


@pytest.mark.skipif(not __import__("graphsnap").HAVE_FEATURES,
                    reason="libgraphsnap without node attributes (features/)")
def test_train_sage_reaches_080(tmp_path):
    import train_sage
    args = train_sage.parser().parse_args(
        ["--nodes", "2000", "--epochs", "4", "--seed", "0", "--db", str(tmp_path / "db")])
    lines = []
    t0 = time.perf_counter()
    res = train_sage.run(args, log=lines.append)
    secs = time.perf_counter() - t0
    print("\n".join(lines))
    assert len(res["history"]) == 4
    assert res["accuracy"] >= 0.8, lines
    print(f"train_sage: {secs:.1f} s")
    assert any("epoch 3" in line for line in lines)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: test_cuda.py covers --device")
def test_train_sage_device_without_gpu_says_why(tmp_path):
    import train_sage
    args = train_sage.parser().parse_args(["--nodes", "200", "--epochs", "1", "--device", "0",
                                           "--db", str(tmp_path / "db")])
    with pytest.raises(SystemExit) as e:
        train_sage.run(args, log=lambda line: None)
    assert "--device 0 needs a GPU" in str(e.value)
    assert not (tmp_path / "db").exists()  # refused before anything was written
