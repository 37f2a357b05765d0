#!/bin/sh
# Runs each test program given on the command line; exit 0 pass, 77 skip,
# anything else fail. Ends with the line "N passed, N failed, N skipped".
# GSNAP_VALGRIND=1 runs each under valgrind memcheck (errors fail the test).
# JOBS=N runs up to N programs at once (each test works in its own mkdtemp
# directory, so they do not share files); results are still printed in the
# order given, and a test's log is build/.../tests/<name>.log as before.
# Each PASS line ends with the test's wall seconds (to see what CI spends).
jobs=${JOBS:-1}

run_one() {
    t=$1
    t0=$(date +%s)
    if [ -n "$GSNAP_VALGRIND" ]; then
        # --fair-sched=yes: valgrind runs one thread at a time, and its default
        # lock lets a thread that loops on a mutex take it again and again
        # (test_store_shrink's shrinks beside a reader and a writer thread:
        # 48 s, beside a scanner thread: 154 s; about 1 s each with the fair
        # ticket lock, the whole test 206 s -> 6 s)
        GSNAP_TEST_SMALL=1 valgrind -q --fair-sched=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$t" >"$t.log" 2>&1
    else
        "$t" >"$t.log" 2>&1
    fi
    rc=$?
    echo $(( $(date +%s) - t0 )) >"$t.secs"
    echo $rc >"$t.rc"
}

pass=0; fail=0; skip=0; failed=""
report_one() {
    t=$1
    name=$(basename "$t")
    rc=$(cat "$t.rc" 2>/dev/null || echo 255)
    secs=$(cat "$t.secs" 2>/dev/null || echo "?")
    rm -f "$t.rc" "$t.secs"
    case $rc in
        0) pass=$((pass+1)); echo "PASS $name ($secs s)";;
        77) skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$t.log")";;
        *) fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc)"; tail -n 20 "$t.log" | sed 's/^/    /';;
    esac
}

# Start every test, at most $jobs at a time: before starting one more, wait
# for the oldest still running (its pid heads the list).
running=""
nrun=0
for t in "$@"; do
    rm -f "$t.rc"
    if [ "$jobs" -le 1 ]; then
        run_one "$t"
        report_one "$t"
        continue
    fi
    if [ "$nrun" -ge "$jobs" ]; then
        oldest=${running%% *}
        wait "$oldest"
        running=${running#* }
        nrun=$((nrun-1))
    fi
    run_one "$t" &
    running="$running$! "
    running=${running# }
    nrun=$((nrun+1))
done
wait

for t in "$@"; do
    [ "$jobs" -le 1 ] || report_one "$t"
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
