#!/bin/sh
# scripts/test.sh -- the project's test command (README, .ci/run).
# Installs what is missing (Debian packages: apt-get as root, otherwise it
# prints the exact command and stops), builds, and runs the test suite, which
# ends with the line "N passed, N failed, N skipped", then the Python tests.
#   scripts/test.sh            build + test suite
#   scripts/test.sh --sanitize also the suite under ASan+UBSan (one build, both
#                              sanitizers; `make ubsan` runs UBSan alone)
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh build test data
jobs=$(nproc 2>/dev/null || echo 2)
# the suite runs JOBS test programs at once (tests/run.sh; each works in a
# directory of its own); JOBS=1 runs them one by one
export JOBS=${JOBS:-$jobs}
make -j"$jobs" all
# The real PGP stream for the tests that use it (they skip without it).
scripts/fetch_pgp.sh || echo "test.sh: PGP data could not be fetched; the tests that need it will skip" >&2
make test
# The Python package's tests (python/tests, pytest; docs/python.md). They need
# Debian's python3-numpy and python3-pytest (python3-torch for the DLPack and
# training tests): installed as root, otherwise skipped with a message.
if scripts/deps.sh python; then
    rc=0
    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests || rc=$?
    # 0 = passed; 5 = nothing collected (counts as a failure); else failures/errors
    if [ "$rc" -ne 0 ]; then
        echo "test.sh: Python tests failed (pytest exit $rc)" >&2
        exit 1
    fi
else
    echo "test.sh: Python tests SKIPPED: python3-numpy/python3-pytest missing (scripts/deps.sh python)" >&2
fi
if [ "${1:-}" = "--sanitize" ]; then
    make -j"$jobs" asan
fi
