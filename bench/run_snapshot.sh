#!/bin/sh
# bench/run_snapshot.sh -- the snapshot benchmark in one command.
#
#   sh bench/run_snapshot.sh            R-MAT SCALE (default 20), edge factor 16
#   SCALE=14 sh bench/run_snapshot.sh   a smaller graph
#
# Steps: build (make BUILD=$BUILD), generate the R-MAT stream
# ($BUILD/tools/rmat --scale $SCALE --edge-factor 16 --seed 1), ingest it into a
# fresh database in $DIR with `graphsnap ingest`, run
# $BUILD/bench/bench_snapshot (snapshot build time, slab bytes per edge,
# k-hop batches from slabs with the slab files dropped from the page cache,
# BFS over the store at the same (T, V)), then fio (io_uring, O_DIRECT, 4 KiB
# random reads, same queue depth) on a file of the size of the largest slab
# file, in the same directory (same file system), and fio read-only on that
# largest slab file itself. Everything goes to
# $BUILD/bench/snapshot-YYYYmmdd-HHMMSS.txt (printed at the end).
#
# Environment: BUILD (default build-bench), DIR (default ${TMPDIR:-/var/tmp}),
# SCALE (default 20), HOPS (default 2,3), BATCHES (default 5), BFS_BATCHES
# (default 1), QD (default 64), MEM (sort budget in MiB, default 1024),
# FIO_SECONDS (default 10), NO_BUILD=1 (use binaries already in $BUILD),
# KEEP=1 (keep the database and its snapshots in $DIR afterwards).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
DIR=${DIR:-${TMPDIR:-/var/tmp}}
SCALE=${SCALE:-20}
HOPS=${HOPS:-2,3}
BATCHES=${BATCHES:-5}
BFS_BATCHES=${BFS_BATCHES:-1}
QD=${QD:-64}
MEM=${MEM:-1024}
FIO_SECONDS=${FIO_SECONDS:-10}
if [ -z "${NO_BUILD:-}" ]; then
    make -s BUILD="$BUILD" "$BUILD/graphsnap" "$BUILD/bench/bench_snapshot" "$BUILD/tools/rmat" >&2
fi
mkdir -p "$BUILD/bench"
OUT="$BUILD/bench/snapshot-$(date -u +%Y%m%d-%H%M%S).txt"
DB="$DIR/gsnap-bench-snap-$SCALE"
TSV="$DIR/gsnap-rmat-$SCALE.tsv"
{
    echo "# bench/run_snapshot.sh SCALE=$SCALE HOPS=$HOPS BATCHES=$BATCHES BFS_BATCHES=$BFS_BATCHES QD=$QD MEM=$MEM"
    echo "# $(date -u) $(uname -sr) $(nproc) cores; fs of $DIR: $(df -T "$DIR" | awk 'NR==2 {print $2, $1}')"
} > "$OUT"
rm -rf "$DB"
[ -e "$TSV" ] || "$BUILD/tools/rmat" --scale "$SCALE" --edge-factor 16 --seed 1 > "$TSV"
"$BUILD/graphsnap" -d "$DB" init > /dev/null
GRAPHSNAP_SYNC=none "$BUILD/graphsnap" -d "$DB" ingest "$TSV" | sed 's/^/ingest./' >> "$OUT"
"$BUILD/bench/bench_snapshot" --db "$DB" --hops "$HOPS" --batches "$BATCHES" \
    --bfs-batches "$BFS_BATCHES" --qd "$QD" --mem "$MEM" | tee -a "$OUT"
# fio on a file of the size of the largest slab file, same file system
BIG=$(ls -S "$DB"/snapshots/*/hop*.slab | head -n 1)
SIZE=$(stat -c %s "$BIG")
echo "fio.file_size $SIZE (as $BIG)" | tee -a "$OUT"
fio --name=randread --filename="$DIR/gsnap-fio.file" --size="$SIZE" --ioengine=io_uring --direct=1 \
    --rw=randread --bs=4k --iodepth="$QD" --runtime="$FIO_SECONDS" --time_based --output-format=json \
    > "$DIR/gsnap-fio.json"
IOPS=$(grep -m1 '"iops"' "$DIR/gsnap-fio.json" | sed 's/[^0-9.]//g')
echo "fio.command fio --name=randread --size=$SIZE --ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth=$QD --runtime=$FIO_SECONDS --time_based" | tee -a "$OUT"
echo "fio.iops $IOPS" | tee -a "$OUT"
# and fio on the largest slab file itself (read-only), for the same disk state
fio --name=slabread --filename="$BIG" --readonly --ioengine=io_uring --direct=1 \
    --rw=randread --bs=4k --iodepth="$QD" --runtime="$FIO_SECONDS" --time_based --output-format=json \
    > "$DIR/gsnap-fio.json"
IOPS=$(grep -m1 '"iops"' "$DIR/gsnap-fio.json" | sed 's/[^0-9.]//g')
echo "fio.slab_file_iops $IOPS" | tee -a "$OUT"
rm -f "$DIR/gsnap-fio.file" "$DIR/gsnap-fio.json"
[ -n "${KEEP:-}" ] || rm -rf "$DB"
echo "results: $OUT"
