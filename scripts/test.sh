#!/bin/sh
# scripts/test.sh -- the project's test command (README, .ci/run).
# Installs what is missing (Debian packages: apt-get as root, otherwise it
# prints the exact command and stops), builds, and runs the test suite, which
# ends with the line "N passed, N failed, N skipped".
#   scripts/test.sh            build + test suite
#   scripts/test.sh --sanitize also the suite under ASan+UBSan and UBSan alone
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh build test data
jobs=$(nproc 2>/dev/null || echo 2)
make -j"$jobs" all
# The real PGP stream for the tests that use it (they skip without it).
scripts/fetch_pgp.sh || echo "test.sh: PGP data could not be fetched; the tests that need it will skip" >&2
make test
if [ "${1:-}" = "--sanitize" ]; then
    make -j"$jobs" asan
    make -j"$jobs" ubsan
fi
