#!/bin/sh
# bench/run_store_fbl_ab.sh -- issue 12, target 1: FBL sampling from a store
# that was just ingested, against the naive LMDB table and the in-memory CSR
# measured in the same process (bench_store_fbl), optionally old build
# against new, alternating.
#
#   sh bench/run_store_fbl_ab.sh                          # this build only
#   OLD=/tmp/base/build ROUNDS=2 sh bench/run_store_fbl_ab.sh   # A/B
#
# Inputs: R-MAT SCALE 18 x16 (build/tools/rmat --scale 18 --edge-factor 16
# --seed 1 --binary, written under $DIR once) and the PGP events
# (data/pgp.tsv, sh scripts/fetch_pgp.sh); RMAT20=1 adds SCALE 20 (about
# 3 minutes a run, most of it the LMDB table's load). Each run:
#   nice -n 5 bench_store_fbl --input IN --seconds 3 --queries 0
# (fanouts [10,10] and [10,10,10], 1024 seeds, up to 40 batches or 3 s per
# engine: cold lists included). Results: $NEW/bench/store-fbl-ab-DATE.txt
# (every bench table) and a summary (graphsnap vs lmdb, vs csr) at its end.
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:-}
DIR=${DIR:-/tmp/store-fbl-ab}
ROUNDS=${ROUNDS:-2}
. bench/store_fbl_inputs.sh
OUT=$NEW/bench/store-fbl-ab-$(date +%Y%m%d-%H%M%S).txt
: >"$OUT"
SUM=$DIR/summary.$$
: >"$SUM"
one() { # build-dir label input format
    echo "## $2 $(basename "$3") $(date +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)" >>"$OUT"
    nice -n 5 "$1/bench/bench_store_fbl" --input "$3" --format "$4" --seconds 3 --queries 0 >"$DIR/run.txt" 2>&1
    cat "$DIR/run.txt" >>"$OUT"
    grep '^| \[' "$DIR/run.txt" | awk -F'|' -v b="$2" -v i="$(basename "$3")" \
        '{gsub(/ /,"",$2); gsub(/ /,"",$7); gsub(/ /,"",$8); print i, b, $2, $7, $8}' >>"$SUM"
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for c in $CASES; do
        in=${c%:*}; fmt=${c##*:}
        if [ -n "$OLD" ]; then
            if [ $((r % 2)) = 1 ]; then one "$OLD" old "$in" "$fmt"; one "$NEW" new "$in" "$fmt"
            else one "$NEW" new "$in" "$fmt"; one "$OLD" old "$in" "$fmt"; fi
        else
            one "$NEW" new "$in" "$fmt"
        fi
    done
    r=$((r + 1))
done
{
    echo
    echo "| input | build | fanouts | vs lmdb | vs csr |"
    echo "|---|---|---|---:|---:|"
    sort -s -k1,1 -k3,3 -k2,2 "$SUM" | awk '{print "| " $1 " | " $2 " | " $3 " | " $4 " | " $5 " |"}'
} | tee -a "$OUT"
rm -f "$SUM"
echo "results: $OUT"
