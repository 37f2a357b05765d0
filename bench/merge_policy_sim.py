#!/usr/bin/python3
"""bench/merge_policy_sim.py -- replay the store's merge policy (store/compact.c
compact_fn) over a stream of equal batches, without a store: how many records
the merges rewrite, and how many runs a reader meets, per merge fanout, with
and without a last merge to the default fanout's shape (what `graphsnap
ingest` of a file does: gsnap_db_merge(db, 4) after loading at 16).

    /usr/bin/python3 bench/merge_policy_sim.py [--batches 42,168,336] [--records 200000]

The policy replayed: after each commit, while a merge is due, either every run
merges into the base (the deltas hold as many records as the base), or the
lowest level holding F or more delta runs merges into one run of the next.
The cost model weighs a record rewritten by a base merge at 54 ns and by a
delta merge at 35 ns (the per-record costs measured on R-MAT-20 in
docs/benchmarks.md "CLI ingest"): a model of the merges' own CPU, not of
LMDB's page writes, which grow with the same volume.
"""
import argparse

BASE = -1
NS_BASE, NS_DELTA = 54, 35


def settle(runs, fanout, cost):
    """Run the merges due in `runs` (a list of (level, records)); returns
    the new list and adds their model cost to cost[0] (ns), volume to cost[1]."""
    while True:
        base = sum(r for lv, r in runs if lv == BASE)
        delta = sum(r for lv, r in runs if lv != BASE)
        if delta > 0 and delta >= base:
            cost[0] += (base + delta) * NS_BASE
            cost[1] += base + delta
            runs = [(BASE, base + delta)]
            continue
        per_level = {}
        for lv, r in runs:
            if lv != BASE:
                per_level.setdefault(lv, []).append(r)
        full = [lv for lv, rs in per_level.items() if len(rs) >= fanout]
        if not full:
            return runs
        lv = min(full)
        merged = sum(per_level[lv])
        cost[0] += merged * NS_DELTA
        cost[1] += merged
        runs = [x for x in runs if x[0] != lv] + [(lv + 1, merged)]


def replay(batches, records, fanout, tidy):
    runs, cost, live = [], [0, 0], []
    for _ in range(batches):
        runs.append((0, records))
        runs = settle(runs, fanout, cost)
        live.append(len(runs))
    if tidy:
        runs = settle(runs, tidy, cost)
    return cost[0] / 1e9, cost[1] / (batches * records), sum(live) / len(live), max(live), len(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", default="42,168,336", help="batches per stream (42: R-MAT-18, 168: R-MAT-20)")
    ap.add_argument("--records", type=int, default=200000, help="records per batch (both directions)")
    ap.add_argument("--fanouts", default="4,8,16,32")
    a = ap.parse_args()
    print("| batches | policy | merge CPU (model, s) | rewrites per record | runs while loading: mean, max | runs at the end |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for nb in (int(x) for x in a.batches.split(",")):
        for f in (int(x) for x in a.fanouts.split(",")):
            for tidy in ((0,) if f == 4 else (0, 4)):
                s, vol, mean, mx, end = replay(nb, a.records, f, tidy)
                how = f"fanout {f}" + (", then merged at 4" if tidy else "")
                print(f"| {nb} | {how} | {s:.2f} | {vol:.2f} | {mean:.1f}, {mx} | {end} |")


if __name__ == "__main__":
    main()
