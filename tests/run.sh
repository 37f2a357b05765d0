#!/bin/sh
# Runs each test program given on the command line; exit 0 pass, 77 skip,
# anything else fail. Ends with the line "N passed, N failed, N skipped".
# GSNAP_VALGRIND=1 runs each under valgrind memcheck (errors fail the test).
pass=0; fail=0; skip=0; failed=""
for t in "$@"; do
    name=$(basename "$t")
    log="${t}.log"
    if [ -n "$GSNAP_VALGRIND" ]; then
        GSNAP_TEST_SMALL=1 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$t" >"$log" 2>&1
    else
        "$t" >"$log" 2>&1
    fi
    rc=$?
    case $rc in
        0) pass=$((pass+1)); echo "PASS $name";;
        77) skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$log")";;
        *) fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc)"; tail -n 20 "$log" | sed 's/^/    /';;
    esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
