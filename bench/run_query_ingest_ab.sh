#!/bin/sh
# bench/run_query_ingest_ab.sh -- issue 12, target 2: 1-hop as-of queries on
# a store that is still ingesting (bench_store_fbl: Q in-neighbour queries
# through one read view after every durable 100k-edge commit, v uniform over
# the nodes with in-edges, T uniform over the stream's times), against the
# in-memory CSR answering the same queries in the same process; optionally
# an old build against this one, alternating (old first in odd rounds).
#
#   sh bench/run_query_ingest_ab.sh                                  # this build only
#   OLD=/tmp/base/build ROUNDS=3 sh bench/run_query_ingest_ab.sh     # A/B
#   OLD=build NEW_ARGS="--merge-fanout 8" sh bench/run_query_ingest_ab.sh   # one build, two ways
#   OLD=build OLD_ARGS="--malloc default" sh bench/run_query_ingest_ab.sh   # freed memory kept or not
#
# Inputs: R-MAT SCALE 18 x16 (build/tools/rmat --scale 18 --edge-factor 16
# --seed 1 --binary, written under $DIR once) and the PGP events
# (data/pgp.tsv, sh scripts/fetch_pgp.sh); RMAT20=1 adds SCALE 20 (minutes a
# run: the bench loads the naive LMDB table too), RMAT20=only runs it
# alone. QUERIES (default "50 500") is the list of queries per commit. Each run:
#   nice -n 5 bench_store_fbl --input IN --queries Q --seconds 0.1 --batches 1 --lat F
# and the per-query latencies of F split by the size of the answer (the
# p50 query of R-MAT returns 1-2 neighbours; the tail is the hubs), the
# first 50 queries after each commit left out of the classes (they meet
# the commit's cold caches; they stay in the overall p50 and p99).
# Results: bench/results_query_ingest_ab.txt (OUTF), one line per run: the
# ingest rate of that process (durable commits; a querying process builds
# fence indexes and held copies in its commits), the held copies' size after
# the ingest (bench_store_fbl prints it), overall p50 / p99, the p99 over
# the p50 (the issue's "p99 at most 10x its p50"), and the CSR's p50 / p99
# (asked after the ingest; and, from this bench's builds that
# write it, asked right after graphsnap at each commit, its caches
# disturbed by the ingest as graphsnap's are), the median / p99 of the
# first query after each commit (the view's first), then per class "ours/csr"
# medians, then the median of the answers of 0-2 neighbours by the number
# of runs live at the query.
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:-}
DIR=${DIR:-/tmp/query-ingest-ab}
ROUNDS=${ROUNDS:-2}
QUERIES=${QUERIES:-50 500}
OUTF=${OUTF:-bench/results_query_ingest_ab.txt}
NEW_ARGS=${NEW_ARGS:-} # extra options of each build's bench_store_fbl (e.g. --merge-fanout 8)
OLD_ARGS=${OLD_ARGS:-}
. bench/store_fbl_inputs.sh
echo "# bench/run_query_ingest_ab.sh NEW=$NEW NEW_ARGS='$NEW_ARGS' OLD=${OLD:-none} OLD_ARGS='$OLD_ARGS' ROUNDS=$ROUNDS QUERIES='$QUERIES' $(date -u +%FT%TZ) $(uptime)" | tee "$OUTF"
echo "# input build Q: all p50/p99 = p99 over p50 (csr p50/p99) | by answer size, medians ours/csr (queries 50+ after a commit)" | tee -a "$OUTF"
one() { # build-dir label input format queries
    if [ "$2" = new ]; then args=$NEW_ARGS; else args=$OLD_ARGS; fi
    # shellcheck disable=SC2086 # the extra options are words
    nice -n 5 "$1/bench/bench_store_fbl" --input "$3" --format "$4" --queries "$5" --seconds 0.1 --batches 1 \
        --lat "$DIR/lat.tsv" $args >"$DIR/run.txt" 2>&1
    ing=$(grep -A2 '^| ingest edges/s' "$DIR/run.txt" | tail -1 | awk -F'|' '{gsub(/ /, "", $2); print $2}')
    # "N MB", then from this stop's build on "(at most N MB after a commit; V of W views with a run mask)"
    held=$(sed -n 's/^held copies after the ingest: //p' "$DIR/run.txt") # builds before it: none
    /usr/bin/python3 - "$DIR/lat.tsv" "$(basename "$3")" "$2" "$5" "$ing" "${held:--}" <<'EOF' | tee -a "$OUTF"
import statistics as st, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n')[1:] if l]
us = sorted(float(r[5]) for r in rows)
csr = sorted(float(r[6]) for r in rows)
# the CSR asked right after graphsnap at each commit (column 9; older
# builds of the bench do not write it)
inter = sorted(float(r[8]) for r in rows if len(r) > 8)
def p99(v): return v[int(0.99 * (len(v) - 1))]
out = ["%s %s Q=%s: ingest %s edges/s, held copies %s, all %.2f/%.2f = %.1fx (csr %.2f/%.2f%s) |" % (
       sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], st.median(us), p99(us),
       p99(us) / st.median(us), st.median(csr), p99(csr),
       ", asked after each commit %.2f/%.2f" % (st.median(inter), p99(inter)) if inter else "")]
# the first query after each commit (the view's first)
first = sorted(float(r[5]) for r in rows if int(r[1]) == 0)
if first:
    out.append("first after a commit %.2f/%.2f (n %d) |" % (st.median(first), p99(first), len(first)))
for lo, hi in ((0, 0), (1, 2), (3, 8), (9, 32), (33, 1 << 62)):
    sel = [r for r in rows if lo <= int(r[4]) <= hi and int(r[1]) >= 50]
    if sel:
        name = "%d-%d" % (lo, hi) if hi < 1 << 62 else "%d+" % lo
        out.append("%s: %.2f/%.2f (n %d)" % (name, st.median(float(r[5]) for r in sel),
                                             st.median(float(r[6]) for r in sel), len(sel)))
# what a live delta run costs: answers of 0-2 neighbours (the median query)
# by the number of runs live when they were asked
byr = {}
for r in rows:
    if int(r[1]) >= 50 and int(r[4]) <= 2:
        byr.setdefault(int(r[7]), []).append(float(r[5]))
out.append("| 0-2 by live runs: " + " ".join("%d: %.2f (n %d)" % (k, st.median(v), len(v))
                                             for k, v in sorted(byr.items())))
print(" ".join(out))
EOF
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for c in $CASES; do
        in=${c%:*}; fmt=${c##*:}
        for q in $QUERIES; do
            if [ -n "$OLD" ] && [ $((r % 2)) = 1 ]; then one "$OLD" old "$in" "$fmt" "$q"; fi
            one "$NEW" new "$in" "$fmt" "$q"
            if [ -n "$OLD" ] && [ $((r % 2)) = 0 ]; then one "$OLD" old "$in" "$fmt" "$q"; fi
        done
    done
    r=$((r + 1))
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUTF"
