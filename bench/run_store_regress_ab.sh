#!/bin/sh
# bench/run_store_regress_ab.sh -- "no regression elsewhere" (issue 12,
# target 5): two builds, alternating in one loop, on the paths the store's
# changes could slow down:
#   - CLI ingest (durable, 100k-edge batches, both directions, parse
#     included) of R-MAT SCALE $SCALE x16 TSV into a new database;
#   - on that database, bench_snapshot --hops 2 --batches 5 --bfs-batches 1:
#     snapshot build seconds and k-hop ms per batch (io_uring, O_DIRECT);
#   - bench_sampler on R-MAT SCALE $SSCALE (binary): every sampler mode's
#     sampled edges/s "vs CSR" (the in-memory CSR of the same process: the
#     machine's load moves the absolute numbers, compare the ratios).
#
#   OLD=/tmp/x/before/build NEW=/tmp/x/after/build ROUNDS=2 sh bench/run_store_regress_ab.sh
#
# OLD, NEW: build directories (make all of each tree; bench binaries are in
# B/bench, the CLI B/graphsnap, the generator B/tools/rmat). DIR: scratch
# (inputs are generated once and kept there; databases are removed).
# BATCHES: bench_sampler batches per mode (default 40; more = less noise).
# Results: one line per number, "round.build.key value", in
# $DIR/regress-ab-YYYYmmdd-HHMMSS.txt, then a summary table on stdout.
set -eu
OLD=${OLD:?OLD=build dir of the old version}
NEW=${NEW:?NEW=build dir of the new version}
DIR=${DIR:-/tmp/store-regress-ab}
SCALE=${SCALE:-18}
SSCALE=${SSCALE:-16}
ROUNDS=${ROUNDS:-2}
FBL_SECONDS=${FBL_SECONDS:-5}
BATCHES=${BATCHES:-40}
mkdir -p "$DIR"
OUT="$DIR/regress-ab-$(date -u +%Y%m%d-%H%M%S).txt"
echo "# bench/run_store_regress_ab.sh SCALE=$SCALE SSCALE=$SSCALE ROUNDS=$ROUNDS BATCHES=$BATCHES OLD=$OLD NEW=$NEW" > "$OUT"
echo "# $(date -u) $(uname -sr) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
say() { echo "$*" >> "$OUT"; }
tsv="$DIR/rmat$SCALE.tsv"
bin="$DIR/rmat$SSCALE.bin"
[ -s "$tsv" ] || "$NEW/tools/rmat" --scale "$SCALE" --edge-factor 16 --seed 1 > "$tsv" 2>/dev/null
[ -s "$bin" ] || "$NEW/tools/rmat" --scale "$SSCALE" --edge-factor 16 --seed 1 --binary > "$bin" 2>/dev/null
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for which in old new; do
        if [ $which = old ]; then B=$OLD; else B=$NEW; fi
        p="r$r.$which"
        rm -rf "$DIR/db"
        "$B/graphsnap" -d "$DIR/db" init > /dev/null
        eps=$(nice -n 5 "$B/graphsnap" -d "$DIR/db" ingest "$tsv" --json |
              sed -n 's/.*"edges_per_second": *\([0-9.]*\).*/\1/p')
        say "$p.ingest_edges_per_s $eps"
        nice -n 5 "$B/bench/bench_snapshot" --db "$DIR/db" --hops 2 --batches 5 --bfs-batches 1 > "$DIR/snap.out"
        say "$p.snapshot_build_s $(sed -n 's/^k2.build_seconds //p' "$DIR/snap.out")"
        say "$p.khop_ms_per_batch $(sed -n 's/^k2.khop_ms_per_batch //p' "$DIR/snap.out")"
        rm -rf "$DIR/db"
        TMPDIR="$DIR" nice -n 5 "$B/bench/bench_sampler" --input "$bin" --fanouts 10,10,10 --batches "$BATCHES" \
            --period 20 --fbl-seconds "$FBL_SECONDS" > "$DIR/sampler.out"
        # "| mode | open s | batches | edges/s | excl. refresh | vs FBL | vs CSR | ..."
        awk -F'|' -v p="$p" '/^\| [a-z-]+ \|/ && $8 ~ /x/ {
            gsub(/ /, "", $2); gsub(/ /, "", $8); print p ".vs_csr." $2 " " $8 }' "$DIR/sampler.out" >> "$OUT"
        cp "$DIR/sampler.out" "$DIR/sampler-$p.out"
    done
    r=$((r + 1))
done
cat "$OUT"
# summary: one row per round and build
modes=$(sed -n 's/^r1\.old\.vs_csr\.\([^ ]*\) .*/\1/p' "$OUT" | tr '\n' ' ')
printf '\n| build | round | CLI ingest edges/s | snapshot build s | k-hop ms/batch |'
for m in $modes; do printf ' %s vs CSR |' "$m"; done
printf '\n|---|---:|---:|---:|---:|'
for m in $modes; do printf -- '---:|'; done
printf '\n'
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for which in old new; do
        p="r$r.$which"
        v() { sed -n "s/^$p\.$1 //p" "$OUT"; }
        printf '| %s | %s | %.0f | %s | %s |' "$which" "$r" "$(v ingest_edges_per_s)" "$(v snapshot_build_s)" \
            "$(v khop_ms_per_batch)"
        for m in $modes; do printf ' %s |' "$(v "vs_csr.$m")"; done
        printf '\n'
    done
    r=$((r + 1))
done
echo "results: $OUT"
