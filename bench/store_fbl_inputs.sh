# bench/store_fbl_inputs.sh -- sourced by run_store_fbl_ab.sh and
# run_query_ingest_ab.sh (from the repository root, with NEW and DIR set):
# builds what bench_store_fbl needs, writes the R-MAT inputs under $DIR once
# (SCALE 18 x16, and SCALE 20 with RMAT20=1 or RMAT20=only, the latter
# alone: build/tools/rmat --seed 1 --binary) and sets CASES to "input:format" words, PGP included when
# data/pgp.tsv is there (sh scripts/fetch_pgp.sh).
mkdir -p "$DIR"
make -s -j2 all tools "$NEW/bench/bench_store_fbl" >/dev/null
[ -s "$DIR/rmat18.bin" ] || "$NEW/tools/rmat" --scale 18 --edge-factor 16 --seed 1 --binary --out "$DIR/rmat18.bin"
CASES="$DIR/rmat18.bin:bin"
[ -s data/pgp.tsv ] && CASES="$CASES data/pgp.tsv:tsv"
if [ "${RMAT20:-0}" = 1 ] || [ "${RMAT20:-0}" = only ]; then
    [ -s "$DIR/rmat20.bin" ] || "$NEW/tools/rmat" --scale 20 --edge-factor 16 --seed 1 --binary --out "$DIR/rmat20.bin"
    if [ "$RMAT20" = only ]; then CASES="$DIR/rmat20.bin:bin"; else CASES="$CASES $DIR/rmat20.bin:bin"; fi
fi
