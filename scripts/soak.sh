#!/bin/sh
# scripts/soak.sh -- the concurrency soak (tests/soak/soak.c, docs/reliability.md).
#
#   sh scripts/soak.sh [SECONDS] [READERS] [KHOP_READERS] [SEED]
#                                        default 300 s, 3 readers, 2 k-hop readers, seed 1
#
# One writer, READERS point-in-time readers, KHOP_READERS k-hop readers and a
# sampler with background OTF refresh on one database for SECONDS, checking
# invariants continuously; then gsnap_db_check and gsnap_snapshot_check on the
# end state. Exit 0 only with zero violations. CI short run:
# sh scripts/soak.sh 30 2 1. SOAK_FRESH=1 adds a second sampler in fresh
# mode (max_staleness 4) on the same snapshot (findings F2 and F10 of
# docs/reliability.md came from that mix; both are fixed, CI runs it).
# BUILD (default build-rel) names the build directory; TMPDIR the scratch place.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-rel}
make -s BUILD="$BUILD" "$BUILD/tests/soak/soak" >/dev/null
dir=${TMPDIR:-/tmp}/gsnap-soak-$$
f=
[ "${SOAK_FRESH:-0}" = 1 ] && f=-f
exec "$BUILD/tests/soak/soak" -t "${1:-300}" -r "${2:-3}" -k "${3:-2}" -s "${4:-1}" $f -v "$dir"
