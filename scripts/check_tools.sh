#!/bin/sh
# shellcheck disable=SC2015,SC2059
# scripts/check_tools.sh -- self-check of the data tools gt2tsv and rmat.
#   BUILD=build scripts/check_tools.sh       (builds $BUILD/tools/* if needed)
# Crafts tiny graph-tool .gt files byte by byte (little- and big-endian), checks
# gt2tsv's output, ordering and error exits, and checks that a vertex property
# never reaches the output; checks rmat's determinism and order semantics.
# Prints "check_tools: N passed, N failed"; exit 0 when nothing failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${BUILD:-build}"
case "$BUILD" in /*) tools="$BUILD/tools" ;; *) tools="$root/$BUILD/tools" ;; esac
make -s -C "$root" BUILD="$BUILD" "$BUILD/tools/gt2tsv" "$BUILD/tools/rmat" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gsnap-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

BE=0  # 1: write integers big-endian
byte() { printf "\\$(printf '%03o' "$1")"; }
uint() {  # uint WIDTH VALUE (VALUE >= -2^63, two's complement)
    w=$1; v=$2; i=0
    while [ "$i" -lt "$w" ]; do
        if [ "$BE" -eq 1 ]; then s=$(( (w - 1 - i) * 8 )); else s=$(( i * 8 )); fi
        byte $(( (v >> s) & 255 )); i=$((i + 1))
    done
}
str() { uint 8 "${#1}"; printf '%s' "$1"; }
i64vec() { uint 8 $#; for x in "$@"; do uint 8 "$x"; done; }

# Directed, N=3: 0->1, 0->2, 2->1. Properties: graph string, vertex uid
# vector<string> (must never be output), edge e_time vector<int64_t>,
# edge w double, edge s int32_t.
tiny() {
    printf '\342\233\276\040gt\001'; byte "$BE"
    str "tiny test graph"; byte 1; uint 8 3
    uint 8 2; uint 1 1; uint 1 2
    uint 8 0
    uint 8 1; uint 1 1
    uint 8 5
    byte 0; str description; byte 6; str "three nodes"
    byte 1; str uid; byte 13
        uint 8 1; str "SECRET alice@example.org"; uint 8 0; uint 8 2; str "SECRET bob"; str "x"
    byte 2; str e_time; byte 10; i64vec 30 10; i64vec 20; i64vec -5
    byte 2; str w; byte 4; uint 8 0; uint 8 4607182418800017408; uint 8 0
    byte 2; str s; byte 2; uint 4 7; uint 4 -3; uint 4 7
}

for BE in 0 1; do
    tiny > "$tmp/t$BE.gt"
    "$tools/gt2tsv" -q "$tmp/t$BE.gt" > "$tmp/o" 2>"$tmp/e" || bad "be=$BE: gt2tsv exit $?: $(cat "$tmp/e")"
    printf '0\t1\t30\n0\t1\t10\n0\t2\t20\n2\t1\t-5\n' | cmp -s - "$tmp/o" && ok || bad "be=$BE: adjacency-order output: $(cat "$tmp/o")"
    "$tools/gt2tsv" -q --time-order < "$tmp/t$BE.gt" > "$tmp/o" 2>"$tmp/e"
    printf '2\t1\t-5\n0\t1\t10\n0\t2\t20\n0\t1\t30\n' | cmp -s - "$tmp/o" && ok || bad "be=$BE: --time-order output: $(cat "$tmp/o")"
    "$tools/gt2tsv" -q --time-prop s "$tmp/t$BE.gt" > "$tmp/o" 2>"$tmp/e"
    printf '0\t1\t7\n0\t2\t-3\n2\t1\t7\n' | cmp -s - "$tmp/o" && ok || bad "be=$BE: int32 time prop: $(cat "$tmp/o")"
    "$tools/gt2tsv" -q --t-min 0 --t-max 30 "$tmp/t$BE.gt" > "$tmp/o" 2>"$tmp/e"
    printf '0\t1\t10\n0\t2\t20\n' | cmp -s - "$tmp/o" && ok || bad "be=$BE: window: $(cat "$tmp/o")"
    "$tools/gt2tsv" --info "$tmp/t$BE.gt" > "$tmp/o" 2>"$tmp/e"
    [ ! -s "$tmp/o" ] && grep -q 'vertex uid  *vector<string>' "$tmp/e" && ok || bad "be=$BE: --info: $(cat "$tmp/e")"
    "$tools/gt2tsv" "$tmp/t$BE.gt" --index-time > "$tmp/o" 2>>"$tmp/e"
    printf '0\t1\t0\n0\t2\t1\n2\t1\t2\n' | cmp -s - "$tmp/o" && ok || bad "be=$BE: --index-time: $(cat "$tmp/o")"
    grep -q SECRET "$tmp/o" "$tmp/e" && bad "be=$BE: uid text reached the output" || ok
done

# Errors: non-zero exit and a byte offset in the message.
expect_fail() {  # expect_fail NAME FILE [ARGS...]
    n=$1; f=$2; shift 2
    "$tools/gt2tsv" -q "$@" "$f" > /dev/null 2> "$tmp/e"
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q 'offset [0-9]' "$tmp/e"; then ok; else bad "$n: exit $rc: $(cat "$tmp/e")"; fi
}
BE=0
head -c 20 "$tmp/t0.gt" > "$tmp/trunc.gt"; expect_fail truncated "$tmp/trunc.gt"
gzip -c "$tmp/t0.gt" > "$tmp/gz.gt"; expect_fail gzip-magic "$tmp/gz.gt"
{ tiny; byte 0; } > "$tmp/trail.gt"; expect_fail trailing "$tmp/trail.gt"
{ printf '\342\233\276\040gt\001\000'; str c; byte 1; uint 8 2; uint 8 1; uint 1 5; } > "$tmp/nb.gt"
expect_fail neighbour-range "$tmp/nb.gt"
{ printf '\342\233\276\040gt\001\000'; str c; byte 1; uint 8 1; uint 8 0; uint 8 1; byte 1; str q; byte 5; } > "$tmp/ld.gt"
expect_fail long-double "$tmp/ld.gt"
{ printf '\342\233\276\040gt\001\000'; str c; byte 1; uint 8 1; uint 8 0; uint 8 1; byte 1; str q; byte 99; } > "$tmp/ty.gt"
expect_fail unknown-type "$tmp/ty.gt"
"$tools/gt2tsv" -q "$tmp/t0.gt" --time-prop nope > /dev/null 2>&1; [ $? -eq 1 ] && ok || bad "missing time property must exit 1"
"$tools/gt2tsv" --bogus > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad option must exit 2"

# rmat: determinism, both orders hold the same triples, t is 0..M-1, ids < 2^S.
r="$tools/rmat"
"$r" -q --scale 10 --edge-factor 4 --seed 7 > "$tmp/a"
"$r" -q --scale 10 --edge-factor 4 --seed 7 --out "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || bad "rmat not deterministic"
"$r" -q --scale 10 --edge-factor 4 --seed 8 | cmp -s - "$tmp/a" && bad "rmat seed ignored" || ok
"$r" -q --scale 10 --edge-factor 4 --seed 7 --time-order > "$tmp/c"
[ "$(sort "$tmp/a" | md5sum)" = "$(sort "$tmp/c" | md5sum)" ] && ok || bad "rmat orders differ in content"
awk -F'\t' '$3 != NR - 1 { exit 1 }' "$tmp/c" && ok || bad "rmat --time-order t must be 0,1,2,..."
awk -F'\t' 'NR > 1 && $3 < p { d = 1 } { p = $3 } END { exit !d }' "$tmp/a" && ok || bad "rmat default order is time-ordered"
[ "$(wc -l < "$tmp/a")" -eq 4096 ] && ok || bad "rmat edge count"
awk -F'\t' '$1 >= 1024 || $2 >= 1024 { exit 1 }' "$tmp/a" && ok || bad "rmat ids out of range"
"$r" -q --scale 10 --edge-factor 4 --seed 7 --time-order --binary --out "$tmp/bin"
[ "$(wc -c < "$tmp/bin")" -eq $((4096 * 24)) ] && ok || bad "rmat binary size"
first=$(head -n 1 "$tmp/c" | cut -f1)
[ "$(od -An -t u8 -N 8 "$tmp/bin" | tr -d ' ')" = "$first" ] && ok || bad "rmat binary first src"
"$r" --scale 0 > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "rmat bad scale must exit 2"

echo "check_tools: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
