#!/bin/sh
# bench/run_snapshot_advance_cpu.sh -- `snapshot advance` of two builds
# against one fresh create, wall and CPU time, on a prepared database.
#
#   OLD=/tmp/oldsrc/build DB0=/tmp/db0 ROUNDS=2 sh bench/run_snapshot_advance_cpu.sh
#   OLD=/tmp/oldsrc/build SCALE=18 ROUNDS=3 sh bench/run_snapshot_advance_cpu.sh
#
# DB0: a database holding the sampled snapshot k3 (hops 3) created before
# the last ingest (bench/run_snapshot_advance_ab.sh with KEEP=1 leaves one).
# Without DB0, SCALE=S prepares $DIR/db0-S once (kept for the next run):
# rmat --scale S --edge-factor 16 --seed 1, the first 99% of its lines
# ingested (GRAPHSNAP_SYNC=none), k3 created (hops 3, fanouts 10,10,10,
# sampled, --mem $MEM), the last 1% ingested.
# Per round: copy DB0, `snapshot advance k3` with the OLD build; copy again,
# advance with the NEW build (default build); then one fresh create with the
# NEW build and k3's caps. Each timed with /usr/bin/time -f "%e %U %S %M"
# (wall, user, sys, peak RSS KiB); `graphsnap check` after. Prints per round
# advance / create in wall and in CPU (user + sys) time.
# Results: $NEW/bench/snapshot-advance-cpu-YYYYmmdd-HHMMSS.txt.
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build}
OLD=${OLD:?OLD=build dir of the old version}
DIR=${DIR:-/tmp/snapshot-advance-cpu}
ROUNDS=${ROUNDS:-2}
MEM=${MEM:-512M}
mkdir -p "$NEW/bench" "$DIR"
if [ -z "${DB0:-}" ]; then
    SCALE=${SCALE:?DB0=prepared database, or SCALE=S to prepare one}
    DB0="$DIR/db0-$SCALE"
    if [ ! -e "$DB0/snapshots/k3" ]; then
        f="$DIR/rmat-$SCALE.tsv"
        "$NEW/tools/rmat" --scale "$SCALE" --edge-factor 16 --seed 1 > "$f" 2>/dev/null
        n=$(wc -l < "$f")
        rm -rf "$DB0"
        "$NEW/graphsnap" -d "$DB0" init > /dev/null
        head -n $((n - n / 100)) "$f" > "$DIR/part.tsv"
        GRAPHSNAP_SYNC=none "$NEW/graphsnap" -d "$DB0" ingest "$DIR/part.tsv" > /dev/null
        "$NEW/graphsnap" -d "$DB0" snapshot create k3 --hops 3 --fanouts 10,10,10 --hop-sets sampled \
            --mem "$MEM" > /dev/null
        tail -n $((n / 100)) "$f" > "$DIR/part.tsv"
        GRAPHSNAP_SYNC=none "$NEW/graphsnap" -d "$DB0" ingest "$DIR/part.tsv" > /dev/null
        rm -f "$f" "$DIR/part.tsv"
    fi
fi
OUT="$NEW/bench/snapshot-advance-cpu-$(date -u +%Y%m%d-%H%M%S).txt"
echo "# bench/run_snapshot_advance_cpu.sh ROUNDS=$ROUNDS OLD=$OLD NEW=$NEW DB0=$DB0" > "$OUT"
echo "# $(date -u) $(uname -sr) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
say() { echo "$*" | tee -a "$OUT"; }
caps=$("$NEW/graphsnap" -d "$DB0" snapshot show k3 | sed -n 's/^caps\t//p')
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for which in old new; do
        if [ $which = old ]; then B=$OLD; else B=$NEW; fi
        rm -rf "$DIR/db"; cp -r "$DB0" "$DIR/db"
        /usr/bin/time -f "%e %U %S %M" -o "$DIR/t.txt" "$B/graphsnap" -d "$DIR/db" snapshot advance k3 > "$DIR/last.out"
        eval "${which}_t=\"$(cat "$DIR/t.txt")\""
        say "round$r.$which.advance wall_user_sys_rss $(cat "$DIR/t.txt")"
        grep '^hop' "$DIR/last.out" | sed "s/^/round$r.$which./" | tee -a "$OUT"
    done
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/t.txt" "$NEW/graphsnap" -d "$DIR/db" snapshot create fresh --hops 3 \
        --fanouts 10,10,10 --hop-sets sampled --caps "$caps" --mem "$MEM" > /dev/null
    c_t=$(cat "$DIR/t.txt")
    say "round$r.create wall_user_sys_rss $c_t"
    say "round$r.check $("$NEW/graphsnap" -d "$DIR/db" check 2>&1 | tail -n 1)"
    for which in old new; do
        eval "t=\"\$${which}_t\""
        say "round$r.$which.advance_over_create $(echo "$t $c_t" | awk '{printf "wall %.3f cpu %.3f", $1 / $5, ($2 + $3) / ($6 + $7)}')"
    done
    r=$((r + 1))
done
rm -rf "$DIR/db"
echo "results: $OUT"
