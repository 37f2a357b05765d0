"""Adaptive refresh from Python (issue 18): the trainer's statistic reaches
gamma (feedback policy), the miss-driven policy reacts to ingested edges,
and the run-time core options pass through."""
import pytest

np = pytest.importorskip(
    "numpy", reason="numpy is missing (Debian: python3-numpy): skipping the Python tests")

import graphsnap as gs
from graphsnap import _lib

pytestmark = pytest.mark.skipif(not _lib.HAVE_ADAPT, reason="library without adaptive refresh")

N = 300


def graph(db, seed=3):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, N, 20 * N)
    dst = np.repeat(np.arange(N), 20)
    return db.ingest_edges(src, dst, t=np.zeros(len(src), dtype=np.int64))


def run(s, batches, seeds):
    for _ in range(batches):
        s.sample(seeds)


def test_feedback_reaches_gamma(db):
    graph(db)
    seeds = np.arange(0, N, 3, dtype=np.uint64)
    with db.sampler([5, 5], mode="fscr", period=2, gamma=0.3, refresh_policy="feedback",
                    kappa=2.0, seed=1) as s:
        run(s, 3, seeds)                       # decision at batch 2: nothing reported yet
        h = s.gamma_history()
        assert [r["gamma"] for r in h] == [pytest.approx(0.3)] * 2
        assert all(r["statistic"] < 0 for r in h)
        r0 = s.stats()["refreshes"]
        s.report(0, 0.0)                       # input layer: gamma 0
        s.report(1, 0.0)
        run(s, 2, seeds)                       # decision at batch 4: every gamma 0
        h = s.gamma_history()
        assert len(h) == 4 and all(r["gamma"] == 0 for r in h[2:])
        assert s.stats()["refreshes"] == r0    # nothing to replace: the refresh is skipped
        assert s.adapt_stats()["skipped"] == 1
        s.report(0, 0.6)                       # gamma = min(1, 2 * 0.6) = 1
        s.report(1, 3.0)                       # gamma = min(1, 6) = 1
        before = s.stats()["replaced_ids"]
        run(s, 2, seeds)                       # decision at batch 6
        h = {r["layer"]: r for r in s.gamma_history()[4:]}
        assert h[0]["gamma"] == 1.0 and h[0]["statistic"] == pytest.approx(0.6)
        assert h[1]["gamma"] == 1.0 and h[1]["kappa"] == 2.0
        with pytest.raises(gs.InvalidArgumentError):
            s.report(2, 1.0)                   # two layers
        with pytest.raises(gs.InvalidArgumentError):
            s.report(0, -1.0)
        st = s.stats()
        assert st["refreshes"] == r0 + 1
        replaced = st["replaced_ids"] - before
    # the refresh used gamma 1: a full entry that is not stale has min(cap, d - cap)
    # ids replaced whatever it held, so a fixed gamma-1 sampler's first refresh
    # replaces as many, and a gamma-0.3 one fewer. The reference is a feedback
    # sampler given no statistic (its refreshes use the fixed gamma): a plain
    # fixed sampler refreshes lazily (sampler/lazy.c), and its replaced_ids
    # counts only the entries the batches brought up to date.
    for g, same in ((1.0, True), (0.3, False)):
        with db.sampler([5, 5], mode="fscr", period=2, gamma=g, refresh_policy="feedback",
                        kappa=2.0, seed=1) as f:
            run(f, 3, seeds)
            assert (f.stats()["replaced_ids"] == replaced) == same


def test_miss_policy_follows_ingest(db):
    graph(db)
    seeds = np.arange(N, dtype=np.uint64)
    with db.sampler([5], mode="fscr", period=3, refresh_policy="miss", lambdas=[0.5],
                    max_staleness=0, seed=2) as s:
        run(s, 4, seeds)                       # decision at batch 3 over 0-2: nothing changed
        assert s.gamma_history()[-1]["gamma"] == 0
        rng = np.random.default_rng(9)
        for _ in range(2):                     # batches 4, 5: half the nodes get an edge before each
            dst = np.arange(0, N, 2)
            db.ingest_edges(rng.integers(0, N, len(dst)), dst, t=np.zeros(len(dst), dtype=np.int64))
            s.sample(seeds)                    # each of them redrawn at use: stale beyond 0
        s.sample(seeds)                        # batch 6: decision over 3-5
        h = s.gamma_history()
        assert len(h) == 2
        r = h[1]
        assert r["needed"] == 3 * N and r["stale"] == 2 * (N // 2) and r["not_held"] == 0
        assert r["delta_h"] == pytest.approx(1 / 3)
        assert r["gamma"] == pytest.approx((2 * (N // 2)) / (3 * N) / (2 * 0.5))
        assert s.stats()["refreshes"] == 1     # gamma > 0: the refresh ran (batch 3's was skipped)

def test_core_options_and_errors(db):
    graph(db)
    member = 8 * 10 + 4 + 8 + 4 * (2 + 10)  # cap 10: ids, count, version, serving slot
    # the run-time core's own arrays count too: u32 counters per node id, 3 words
    # per window batch (window = period 2), 3 frontier lists of 64 u32 once used
    book0 = 4 * N + 2 * 24
    bound = 10 * member + book0 + 3 * 64 * 4
    with db.sampler([5], mode="fscr", period=2, core_min=2, core_max_bytes=bound,
                    seed=4) as s:
        a = s.adapt_stats()
        k0 = (bound - book0) // member       # at open the lists are empty
        assert a["dynamic_core"] == 1 and a["core_bytes"] <= bound and a["core_nodes"] == k0
        hot = np.arange(20, 25, dtype=np.uint64)
        run(s, 3, hot)                         # batch 2: the core is the 5 hot nodes
        a = s.adapt_stats()
        assert a["core_nodes"] == 5 and 1 <= a["core_joined"] <= 5 and a["core_bytes"] <= bound
        assert a["core_left"] == k0 - (5 - a["core_joined"])  # the static core's others left
    with pytest.raises(gs.InvalidArgumentError):
        db.sampler([5], mode="fcr", refresh_policy="miss")
    with pytest.raises(gs.InvalidArgumentError):
        db.sampler([5], mode="fscr", refresh_policy="sometimes")
    with pytest.raises(ValueError):
        db.sampler([5, 5], mode="fscr", refresh_policy="miss", lambdas=[0.5])
    with db.sampler([5], mode="fscr") as s:
        assert s.gamma_history() == []
        with pytest.raises(gs.InvalidArgumentError):
            s.report(0, 1.0)                   # not the feedback policy
