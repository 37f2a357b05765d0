#!/bin/sh
# bench/bench_shared.sh -- PSS of 1, 2 and 4 sampler processes on one
# database, private images against the shared host tier (bench_shared.c).
#
#   sh bench/bench_shared.sh                 R-MAT SCALE 17 (2 M edges), fcr, fanouts 10,10,10
#   SCALE=18 MODE=fcr-sc sh bench/bench_shared.sh
#   MODE="fcr pscr fscr" PERIOD=5 sh bench/bench_shared.sh   several modes, one file
#
# Environment: BUILD (default build), SCALE (17), MODE (fcr), FANOUTS
# (10,10,10), BATCHES (20), PERIOD (0), WORK (/tmp/tier18-shared: the
# database, removed at the end unless KEEP=1), SHDIR (/dev/shm).
# Results: $BUILD/bench/shared-YYYYmmdd-HHMMSS.txt
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SCALE=${SCALE:-17}
MODE=${MODE:-fcr}
FANOUTS=${FANOUTS:-10,10,10}
BATCHES=${BATCHES:-20}
PERIOD=${PERIOD:-0}
WORK=${WORK:-/tmp/tier18-shared}
SHDIR=${SHDIR:-/dev/shm}
make -s BUILD="$BUILD" "$BUILD/bench/bench_shared" "$BUILD/tools/rmat" "$BUILD/graphsnap" >&2
mkdir -p "$WORK" "$BUILD/bench"
DB="$WORK/db-$SCALE"
if [ ! -d "$DB" ]; then
    "$BUILD/tools/rmat" --scale "$SCALE" --edge-factor 16 --seed 1 --out "$WORK/rmat.tsv"
    "$BUILD/graphsnap" -d "$DB" init >/dev/null 2>&1 || true
    "$BUILD/graphsnap" -d "$DB" ingest "$WORK/rmat.tsv" --nosync --batch 1000000 >&2
    rm -f "$WORK/rmat.tsv"
fi
OUT="$BUILD/bench/shared-$(date -u +%Y%m%d-%H%M%S).txt"
: > "$OUT"
for m in $MODE; do
    nice -n 5 "$BUILD/bench/bench_shared" --db "$DB" --mode "$m" --fanouts "$FANOUTS" \
        --batches "$BATCHES" --period "$PERIOD" --shared-dir "$SHDIR" --out "$OUT.one"
    cat "$OUT.one" >> "$OUT"
    echo >> "$OUT"
    rm -f "$OUT.one"
done
echo "results: $OUT" >&2
[ -n "${KEEP:-}" ] || rm -rf "$WORK"
