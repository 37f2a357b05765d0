#!/bin/sh
# bench/run_workers_ab.sh -- issue 17, item 3: two workers against one
# (batches/s), with the machine's ceiling measured in the same process.
#
#   sh bench/run_workers_ab.sh                       # this build only
#   OLD=/tmp/w17-base/build sh bench/run_workers_ab.sh   # and an older build, A/B
#
# For each case (input, mode, refresh period) it runs
#   nice -n 5 bench_hotpath --input IN --only MODE --no-csr --workers 2
#                           --batches $BATCHES --period P
# which alternates 1 and 2 workers twice in one process (gsnap_sampler_next,
# the library's random seeds) and measures between those runs a CPU-bound
# loop on 2 threads vs 1 (the ceiling: ~2.0 on two free cores, ~1.0 when
# the second core is taken by someone else), and the CPU seconds per batch
# of both (work efficiency = CPU/batch of 1 worker / of 2 workers). With
# OLD (a build directory of another version holding bench/bench_hotpath),
# each case runs old and new alternately, ROUNDS times (old, new, new, old
# for ROUNDS=2). The target: 2 workers >= 1.8x one worker; on a machine that
# is not quiet read "ratio / ceiling".
#
# Cases: the PGP events (data/pgp.tsv) at period 50 and 0, R-MAT SCALE 18
# x16 (build/tools/rmat --scale 18 --edge-factor 16 --seed 1 --binary,
# written under $DIR) at period 50; modes fcr-sc and fscr. CASES overrides
# them: "IN:MODE:PERIOD ..." with IN = pgp | rmat18 | a path. SLICES=K adds
# bench_hotpath's interleaved comparison (--slices K: both samplers open at
# once, taking turns, so that both see the same machine) as a last column.
# A build of an older version (here: main):
#   git worktree add /tmp/w17-base main
#   make -C /tmp/w17-base -j2 all tools build/bench/bench_hotpath
#   OLD=/tmp/w17-base/build sh bench/run_workers_ab.sh
# Results: $NEW/bench/workers-ab-YYYYmmdd-HHMMSS.txt (every bench line) and
# the summary table at its end. 10-20 s per run on 2 free cores (24 runs with OLD).
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:-}
DIR=${DIR:-/tmp/workers-ab}
BATCHES=${BATCHES:-3000}
ROUNDS=${ROUNDS:-2}
CASES=${CASES:-"pgp:fcr-sc:50 pgp:fscr:50 rmat18:fcr-sc:50 rmat18:fscr:50 pgp:fcr-sc:0 pgp:fscr:0"}
[ -x "$NEW/bench/bench_hotpath" ] || make -j2 all tools "$NEW/bench/bench_hotpath" > /dev/null
if [ -n "$OLD" ] && [ ! -x "$OLD/bench/bench_hotpath" ]; then
    echo "run_workers_ab.sh: no $OLD/bench/bench_hotpath" >&2
    exit 2
fi
mkdir -p "$NEW/bench" "$DIR"
OUT="$NEW/bench/workers-ab-$(date -u +%Y%m%d-%H%M%S).txt"
echo "# bench/run_workers_ab.sh BATCHES=$BATCHES ROUNDS=$ROUNDS NEW=$NEW OLD=${OLD:-none}" > "$OUT"
echo "# $(date -u) $(uname -sr) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
echo "# new: $(git rev-parse --short HEAD 2>/dev/null || echo '?')" >> "$OUT"
input_of() {
    case "$1" in
    pgp) echo data/pgp.tsv ;;
    rmat18)
        [ -s "$DIR/rmat18.bin" ] ||
            "$NEW/tools/rmat" --scale 18 --edge-factor 16 --seed 1 --binary > "$DIR/rmat18.bin" 2> /dev/null
        echo "$DIR/rmat18.bin" ;;
    *) echo "$1" ;;
    esac
}
# one bench run: appends "case build ratio ceiling efficiency r1 r2" to $DIR/rows
run_one() { # label build-dir input mode period old|new
    nice -n 5 "$2/bench/bench_hotpath" --input "$3" --only "$4" --no-csr --workers 2 \
        --batches "$BATCHES" --period "$5" ${SLICES:+--slices "$SLICES"} --out "$DIR/last.txt" > /dev/null
    grep -v '^$' "$DIR/last.txt" | sed "s|^|$1 $6: |" >> "$OUT"
    awk -v c="$1" -v b="$6" '
        / workers .* batches\/s vs 1 worker / && !/interleaved/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "workers" && r2 == "") r2 = $(i + 1)
                if ($i == "worker" && r1 == "") r1 = $(i + 1)
            }
            x = $0; sub(/.*batches\/s: /, "", x); split(x, a, "x"); ratio = a[1]
            y = $0; sub(/.*between the runs: /, "", y); sub(/x\).*/, "", y); ceil = y
        }
        /work efficiency/ && !/interleaved/ { e = $NF }
        /interleaved in/ {
            x = $0; sub(/.*batches\/s: /, "", x); split(x, a, "x"); iv = a[1]
            y = $0; sub(/.*median /, "", y); split(y, m, "x"); im = m[1]
            z = $0; sub(/.*lowest /, "", z); split(z, l, "x"); il = l[1]
        }
        END { printf "%s %s %s %s %s %s %s %s\n", c, b, ratio, ceil, e, r1, r2,
                     iv == "" ? "-" : iv "x(" im "x," il "x)" }' "$DIR/last.txt" >> "$DIR/rows"
}
: > "$DIR/rows"
for c in $CASES; do
    in=$(input_of "${c%%:*}")
    rest=${c#*:}
    mode=${rest%%:*}
    period=${rest#*:}
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        if [ -n "$OLD" ] && [ $((r % 2)) -eq 1 ]; then order="old new"
        elif [ -n "$OLD" ]; then order="new old"
        else order="new"; fi
        for which in $order; do
            if [ "$which" = old ]; then B=$OLD; else B=$NEW; fi
            run_one "$c" "$B" "$in" "$mode" "$period" "$which"
        done
        r=$((r + 1))
    done
done
{
    echo
    echo "| case (input:mode:period) | build | 2 vs 1 worker (each run) | CPU-loop ceiling | ratio / ceiling | work efficiency | 1 worker batches/s | 2 workers batches/s | interleaved (median pair, lowest pair) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk '{ k = $1 " " $2; if (!(k in n)) order[++m] = k
           n[k]++; rat[k] = rat[k] (n[k] > 1 ? ", " : "") $3 "x"; ce[k] = ce[k] (n[k] > 1 ? ", " : "") $4 "x"
           rc[k] = rc[k] (n[k] > 1 ? ", " : "") sprintf("%.2f", $4 > 0 ? $3 / $4 : 0)
           ef[k] = ef[k] (n[k] > 1 ? ", " : "") $5; a1[k] = a1[k] (n[k] > 1 ? ", " : "") $6; a2[k] = a2[k] (n[k] > 1 ? ", " : "") $7
           il[k] = il[k] (n[k] > 1 ? "; " : "") $8 }
         END { for (i = 1; i <= m; i++) { k = order[i]; split(k, p, " ")
               printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], rat[k], ce[k], rc[k], ef[k], a1[k], a2[k], il[k] } }' "$DIR/rows"
    echo
    echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$OUT"
echo "# results: $OUT"
