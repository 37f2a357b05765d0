#!/usr/bin/python3
"""bench/lat_tail.py -- where the tail of the queries under ingest is, from
the per-query files of `bench_store_fbl --lat F` (columns: batch, position
after the commit, node, T, answer size, graphsnap us, CSR us, live runs[,
CSR us asked after each commit]).

    python3 bench/lat_tail.py F...

Per file:
  - overall p50 and p99 (the same definitions as run_query_ingest_ab.sh);
  - answers of 33-100 neighbours: median, and median of us / live runs;
    their medians by live runs (queries 50+ after a commit);
  - the slowest 1 % (at or above the p99): how many by answer size (powers
    of two: "64-127" ...), how many were among the first 50 after a commit,
    and by batch in tens ("100-109" ...);
  - the p99 / p50 as if every answer of 64 or more neighbours had taken
    0.8x its time, and the p99 without the first 50 queries after a commit.
"""
import statistics as st
import sys


def p99(v):
    v = sorted(v)
    return v[int(0.99 * (len(v) - 1))]


def size_class(c):
    if c == 0:
        return "0"
    lo = 1 << (c.bit_length() - 1)
    return "%d-%d" % (lo, 2 * lo - 1)


def one(path):
    rows = [l.split("\t") for l in open(path).read().split("\n")[1:] if l]
    q = [(int(r[0]), int(r[1]), int(r[4]), float(r[5]), int(r[7])) for r in rows]
    us = [x[3] for x in q]
    p50, top = st.median(us), p99(us)
    print("%s: %d queries, p50 %.2f us, p99 %.2f us, p99/p50 %.1fx" % (path, len(q), p50, top, top / p50))
    mid = [x for x in q if 33 <= x[2] <= 100]
    if mid:
        print("  33-100 neighbours: median %.2f us, median per live run %.2f us (n %d)"
              % (st.median(x[3] for x in mid), st.median(x[3] / max(1, x[4]) for x in mid), len(mid)))
        byr = {}
        for x in mid:
            if x[1] >= 50:
                byr.setdefault(x[4], []).append(x[3])
        print("  33-100 by live runs (50+ after a commit): "
              + ", ".join("%d: %.2f (n %d)" % (k, st.median(v), len(v)) for k, v in sorted(byr.items())))
    slow = [x for x in q if x[3] >= top]
    sizes, batches = {}, {}
    for x in slow:
        sizes[size_class(x[2])] = sizes.get(size_class(x[2]), 0) + 1
        b = x[0] // 10 * 10
        batches[b] = batches.get(b, 0) + 1
    order = sorted(sizes, key=lambda s: int(s.split("-")[0]))
    print("  slowest 1 %%: %d; by answer size: %s" % (len(slow), ", ".join("%s: %d" % (s, sizes[s]) for s in order)))
    print("  slowest 1 %%: %d among the first 50 after a commit; by batch: %s"
          % (sum(1 for x in slow if x[1] < 50), ", ".join("%d-%d: %d" % (b, b + 9, batches[b]) for b in sorted(batches))))
    scaled = [x[3] * (0.8 if x[2] >= 64 else 1.0) for x in q]
    late = [x[3] for x in q if x[1] >= 50]
    print("  as if answers of 64+ took 0.8x: p99 %.2f us, p99/p50 %.1fx; p99 without the first 50 after a commit: %.2f us"
          % (p99(scaled), p99(scaled) / st.median(scaled), p99(late)))


for f in sys.argv[1:]:
    one(f)
