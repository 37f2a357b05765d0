#!/bin/sh
# bench/run_fbl_window_ab.sh -- issue 12, target 1: FBL sampling from a
# freshly ingested store (no compaction) against the naive LMDB table and
# the CSR of the same process (bench_store_fbl), over a long window (256
# batches of 1024 seeds: one epoch of R-MAT-18's node ids) and over the
# bench's default 40 batches, [10,10] and [10,10,10], for two builds.
#
#   OLD=/tmp/base/build sh bench/run_fbl_window_ab.sh
#
# Inputs: R-MAT SCALE 18 x16 (build/tools/rmat --scale 18 --edge-factor 16
# --seed 1 --binary, written under $DIR) and data/pgp.tsv when present;
# RMAT20=1 adds SCALE 20 (about a minute a run: the bench loads the LMDB
# table too), RMAT20=only runs SCALE 20 alone.
# Per round, input, window and fanouts the two builds alternate (old first
# in odd rounds, new first in even ones):
#   nice -n 5 B/bench/bench_store_fbl --input IN --format F --seconds 60
#       --batches N --queries 0 --fanouts FAN
# One line per run: graphsnap, LMDB and CSR edges/s, graphsnap vs LMDB,
# graphsnap vs CSR. Results: bench/results_fbl_window.txt (OUTF).
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:?set OLD to the other build directory}
DIR=${DIR:-/tmp/fbl-window}
ROUNDS=${ROUNDS:-3}
OUTF=${OUTF:-bench/results_fbl_window.txt}
for b in "$OLD" "$NEW"; do
    [ -x "$b/bench/bench_store_fbl" ] || { echo "no $b/bench/bench_store_fbl" >&2; exit 1; }
done
[ -x "$NEW/tools/rmat" ] || make -j2 "$NEW/tools/rmat" > /dev/null
mkdir -p "$DIR"
R18=$DIR/rmat18.bin
[ -s "$R18" ] || "$NEW/tools/rmat" --scale 18 --edge-factor 16 --seed 1 --binary --out "$R18" 2> /dev/null
INPUTS="$R18:bin"
[ -s data/pgp.tsv ] && INPUTS="$INPUTS data/pgp.tsv:tsv"
if [ -n "${RMAT20:-}" ]; then # RMAT20=1 adds R-MAT SCALE 20 x16, RMAT20=only runs it alone
    R20=$DIR/rmat20.bin
    [ -s "$R20" ] || "$NEW/tools/rmat" --scale 20 --edge-factor 16 --seed 1 --binary --out "$R20" 2> /dev/null
    if [ "$RMAT20" = only ]; then INPUTS="$R20:bin"; else INPUTS="$INPUTS $R20:bin"; fi
fi
echo "# bench/run_fbl_window_ab.sh OLD=$OLD NEW=$NEW ROUNDS=$ROUNDS $(date -u +%FT%TZ) $(uptime)" > "$OUTF"
echo "# columns: fanouts | graphsnap edges/s | lmdb edges/s | csr edges/s | vs lmdb | vs csr" >> "$OUTF"
for r in $(seq 1 "$ROUNDS"); do
    for in in $INPUTS; do
        f=${in%:*}
        fmt=${in##*:}
        for nb in 256 40; do
            for fan in 10,10 10,10,10; do
                if [ $((r % 2)) = 1 ]; then order="$OLD $NEW"; else order="$NEW $OLD"; fi
                for b in $order; do
                    if [ "$b" = "$OLD" ]; then lab=old; else lab=new; fi
                    l=$(nice -n 5 "$b/bench/bench_store_fbl" --input "$f" --format "$fmt" --seconds 60 \
                        --batches "$nb" --queries 0 --fanouts "$fan" 2>&1 | grep -E '^\| \[' |
                        cut -d'|' -f2,4-8 | tr -s ' ')
                    echo "$(date +%T) round=$r $(basename "$f") batches=$nb $lab $l" | tee -a "$OUTF"
                done
            done
        done
    done
done
echo "# results in $OUTF; load at the end: $(uptime)" >> "$OUTF"
