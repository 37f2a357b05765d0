#!/bin/sh
# bench/run_snapshot_advance_ab.sh -- `snapshot advance` of two builds, A/B,
# in one run: advance after the last 1% of an R-MAT stream vs a fresh create.
#
#   OLD=/tmp/old-build SCALE=18 sh bench/run_snapshot_advance_ab.sh
#
# Steps: rmat --scale $SCALE --edge-factor 16 --seed 1, split into the first
# 99% and the last 1% of its lines; ingest the 99% (GRAPHSNAP_SYNC=none);
# sampled create, hops 3, fanouts 10,10,10 ($NEW build); ingest the 1%. Then
# $ROUNDS times, alternating old and new build: copy the database, time
# `snapshot advance` (wall, /usr/bin/time) and a fresh create at the new
# version (same caps) with the same build. Reports per build the best advance,
# the best create and advance / create. OLD: a build directory of the old
# version (make BUILD=... of it); NEW (default build). DB0: a prepared
# database (k3 created on the first 99%, then the last 1% ingested) instead
# of generating one.
# Results: $NEW/bench/snapshot-advance-ab-YYYYmmdd-HHMMSS.txt.
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:?OLD=build dir of the old version}
DIR=${DIR:-/tmp/snapshot-advance-ab}
SCALE=${SCALE:-18}
ROUNDS=${ROUNDS:-2}
MEM=${MEM:-512M}
mkdir -p "$NEW/bench" "$DIR"
OUT="$NEW/bench/snapshot-advance-ab-$(date -u +%Y%m%d-%H%M%S).txt"
echo "# bench/run_snapshot_advance_ab.sh SCALE=$SCALE ROUNDS=$ROUNDS OLD=$OLD NEW=$NEW" > "$OUT"
echo "# $(date -u) $(uname -sr) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
say() { echo "$*" | tee -a "$OUT"; }
timed() { /usr/bin/time -f "%e" -o "$DIR/time.txt" "$@" > "$DIR/last.out"; cat "$DIR/time.txt"; }
if [ -n "${DB0:-}" ]; then
    # a prepared database: k3 created on the first 99%, the last 1% ingested
    rm -rf "$DIR/db0"; cp -r "$DB0" "$DIR/db0"
    caps=$("$NEW/graphsnap" -d "$DIR/db0" snapshot show k3 | sed -n 's/^caps\t//p')
else
f="$DIR/rmat-$SCALE.tsv"
[ -e "$f" ] || "$NEW/tools/rmat" --scale "$SCALE" --edge-factor 16 --seed 1 > "$f" 2>/dev/null
n=$(wc -l < "$f")
head -n $((n - n / 100)) "$f" > "$DIR/head.tsv"
tail -n $((n / 100)) "$f" > "$DIR/tail.tsv"
rm -rf "$DIR/db0"
"$NEW/graphsnap" -d "$DIR/db0" init > /dev/null
GRAPHSNAP_SYNC=none "$NEW/graphsnap" -d "$DIR/db0" ingest "$DIR/head.tsv" > /dev/null
"$NEW/graphsnap" -d "$DIR/db0" snapshot create k3 --hops 3 --fanouts 10,10,10 --hop-sets sampled --mem "$MEM" > "$DIR/last.out"
caps=$(sed -n 's/^caps\t//p' "$DIR/last.out")
GRAPHSNAP_SYNC=none "$NEW/graphsnap" -d "$DIR/db0" ingest "$DIR/tail.tsv" > /dev/null
fi
say "scale$SCALE.caps $caps"
r=1
while [ $r -le "$ROUNDS" ]; do
    for which in old new; do
        if [ $which = old ]; then B=$OLD; else B=$NEW; fi
        rm -rf "$DIR/db"; cp -r "$DIR/db0" "$DIR/db"
        adv=$(timed "$B/graphsnap" -d "$DIR/db" snapshot advance k3)
        grep '^hop' "$DIR/last.out" | sed "s/^/scale$SCALE.$which.round$r.advance./" | tee -a "$OUT"
        cre=$(timed "$B/graphsnap" -d "$DIR/db" snapshot create fresh --hops 3 --fanouts 10,10,10 --hop-sets sampled --caps "$caps" --mem "$MEM")
        say "scale$SCALE.$which.round$r.advance_s $adv create_s $cre ratio $(echo "$adv $cre" | awk '{printf "%.3f", $1 / $2}')"
    done
    r=$((r + 1))
done
for which in old new; do
    a=$(sed -n "s/^scale$SCALE.$which.round[0-9]*.advance_s \([0-9.]*\) .*/\1/p" "$OUT" | sort -n | head -n 1)
    c=$(sed -n "s/^scale$SCALE.$which.round[0-9]*.advance_s [0-9.]* create_s \([0-9.]*\) .*/\1/p" "$OUT" | sort -n | head -n 1)
    say "scale$SCALE.$which.best advance_s $a create_s $c advance_over_create $(echo "$a $c" | awk '{printf "%.3f", $1 / $2}')"
done
[ -n "${KEEP:-}" ] || rm -rf "$DIR/db" "$DIR/db0" "$DIR/head.tsv" "$DIR/tail.tsv"
echo "results: $OUT"
