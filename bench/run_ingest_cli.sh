#!/bin/sh
# bench/run_ingest_cli.sh -- issue 12, target 4: durable CLI ingest (fsync
# per batch, 100k-edge batches, both directions, parse included), against
# the naive LMDB table of bench_store on the same file in the same script.
#
#   sh bench/run_ingest_cli.sh                            # this build only
#   OLD=/tmp/ingest2/base/build sh bench/run_ingest_cli.sh   # and an older build, A/B
#   OLD=build NEW_ARGS="--merge-fanout 8" sh bench/run_ingest_cli.sh   # one build, two ways
#
# Inputs: R-MAT SCALE 18 x16 (build/tools/rmat --scale 18 --edge-factor 16
# --seed 1, TSV, written under $DIR), data/pgp.tsv when present, and with
# RMAT20=1 R-MAT SCALE 20 x16 too (the same generator, 373 MB of TSV). Per
# round and input, old and new alternate (old first in odd rounds, new
# first in even ones), each into a fresh database:
#   B/graphsnap init DB; nice -n 5 B/graphsnap ingest -d DB FILE --json
# (CPU seconds of the process, user + sys, from /usr/bin/time: the measure
# that holds on a loaded machine; and its peak resident size) and the new build's database is then checked (`graphsnap check`) and its
# run count taken (`graphsnap stat`). Last, the naive LMDB table on R-MAT-18
# (durable, 100k batches, capped at LMDB_SECONDS: it slows as it grows, so
# the cap favours it):
#   nice -n 5 build/bench/bench_store --input FILE --format tsv --engines lmdb --batch 100000
#       --max-seconds 20 --queries 100 --check 0 --no-full-queries --out F
# Results: bench/results_ingest_cli.txt (OUTF; one line per run,
# then the LMDB rate and the ratios).
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:-}
DIR=${DIR:-/tmp/ingest-cli}
ROUNDS=${ROUNDS:-2}
LMDB_SECONDS=${LMDB_SECONDS:-20}
NEW_ARGS=${NEW_ARGS:-} # extra options of each build's `graphsnap ingest` (e.g. --merge-fanout 8)
OLD_ARGS=${OLD_ARGS:-}
[ -x "$NEW/graphsnap" ] && [ -x "$NEW/tools/rmat" ] && [ -x "$NEW/bench/bench_store" ] ||
    make -j2 all tools "$NEW/bench/bench_store" > /dev/null
mkdir -p "$DIR"
OUTF=${OUTF:-bench/results_ingest_cli.txt}
R18=$DIR/rmat18.tsv
[ -s "$R18" ] || "$NEW/tools/rmat" --scale 18 --edge-factor 16 --seed 1 --out "$R18" 2> /dev/null
INPUTS=$R18
[ -s data/pgp.tsv ] && INPUTS="$INPUTS data/pgp.tsv"
if [ "${RMAT20:-0}" = 1 ]; then
    R20=$DIR/rmat20.tsv
    [ -s "$R20" ] || "$NEW/tools/rmat" --scale 20 --edge-factor 16 --seed 1 --out "$R20" 2> /dev/null
    INPUTS="$INPUTS $R20"
fi

rate() { sed -n 's/.*"edges_per_second":\([0-9.]*\).*/\1/p'; }
one() { # build-dir label file
    rm -rf "$DIR/db"
    "$1/graphsnap" init "$DIR/db" > /dev/null
    if [ "$2" = new ]; then args=$NEW_ARGS; else args=$OLD_ARGS; fi
    # shellcheck disable=SC2086 # the extra options are words
    r=$(/usr/bin/time -f "cpu=%U+%S rss=%M" -o "$DIR/time.txt" nice -n 5 "$1/graphsnap" ingest -d "$DIR/db" $args "$3" --json | rate)
    extra=" cpu_s=$(awk -F'[=+ ]' '/cpu=/ {printf "%.2f", $2 + $3}' "$DIR/time.txt")"
    extra="$extra peak_rss_kb=$(sed -n 's/.*rss=\([0-9]*\).*/\1/p' "$DIR/time.txt")"
    if [ "$2" = new ]; then
        runs=$("$1/graphsnap" stat -d "$DIR/db" | awk '$1 == "runs" {print $2}')
        probs=$("$1/graphsnap" check -d "$DIR/db" | sed -n 's/^\([0-9]*\) problem.*/\1/p')
        extra="$extra runs=$runs check_problems=$probs"
    fi
    echo "$(date -u +%H:%M:%S) $(basename "$3") $2 edges_per_second=$r$extra" | tee -a "$OUTF"
}
echo "# bench/run_ingest_cli.sh NEW=$NEW NEW_ARGS='$NEW_ARGS' OLD=${OLD:-none} OLD_ARGS='$OLD_ARGS' ROUNDS=$ROUNDS $(uptime)" | tee "$OUTF"
i=1
while [ "$i" -le "$ROUNDS" ]; do
    for f in $INPUTS; do
        if [ -z "$OLD" ]; then one "$NEW" new "$f"
        elif [ $((i % 2)) -eq 1 ]; then one "$OLD" old "$f"; one "$NEW" new "$f"
        else one "$NEW" new "$f"; one "$OLD" old "$f"; fi
    done
    i=$((i + 1))
done
nice -n 5 "$NEW/bench/bench_store" --input "$R18" --format tsv --engines lmdb --batch 100000 \
    --max-seconds "$LMDB_SECONDS" --queries 100 --check 0 --no-full-queries --out "$DIR/lmdb.txt" > "$DIR/lmdb.log" 2>&1
lm=$(awk -F'|' '$2 ~ /lmdb/ && $3 ~ /100000/ {gsub(/ /, "", $7); print $7; exit}' "$DIR/lmdb.txt")
echo "rmat18.tsv naive-lmdb edges_per_second=${lm:-?} (capped at $LMDB_SECONDS s; $DIR/lmdb.txt)" | tee -a "$OUTF"
# each R-MAT-18 run of the new build against the LMDB table
[ -n "$lm" ] && awk -v lm="$lm" '/rmat18.tsv new/ {split($4, a, "="); printf "  %s new / lmdb = %.1fx\n", $1, a[2] / lm}' "$OUTF" |
    tee -a "$OUTF.tmp" && cat "$OUTF.tmp" >> "$OUTF" && rm -f "$OUTF.tmp"
echo "# results in $OUTF; load at the end: $(uptime)" | tee -a "$OUTF"
rm -rf "$DIR/db"
