#!/bin/sh
# fuzz/run.sh -- build and run the libFuzzer targets (fuzz/fuzz_*.c).
#
#   sh fuzz/run.sh short [SECONDS]        every target for SECONDS (default 60): the CI run;
#                                         FUZZ_JOBS of them at once (default: the cores)
#   sh fuzz/run.sh long TARGET RUNS       one target until RUNS executions (e.g. 10000000)
#   sh fuzz/run.sh time TARGET SECONDS    one target for SECONDS
#   sh fuzz/run.sh tally                  executions per target so far (from the tally file)
#
# Builds with `make fuzz` (clang, ASan + UBSan + libFuzzer) into build-fuzz/.
# Seeds: fuzz/corpus/<name>/ (kept in the repo, read-only here); the corpus a
# run grows lives in build-fuzz/corpus/<name>/. Logs: build-fuzz/logs/.
# Every finished run appends "date target executions result" to
# build-fuzz/fuzz-tally.txt. Exit 1 when a run found a crash, leak, timeout
# or sanitizer report (the reproducer is in build-fuzz/artifacts/).
# Each run logs to build-fuzz/logs/NAME-TIME-PID.log.
set -u
cd "$(dirname "$0")/.." || exit 2
mode=${1:-short}
B=build-fuzz
TALLY=$B/fuzz-tally.txt

if [ "$mode" = tally ]; then
    [ -f "$TALLY" ] || { echo "no runs yet"; exit 0; }
    awk '{ if ($4 == "clean") n[$2] += $3; else bad[$2]++ }
         END { for (t in n) printf "%-16s %12d executions clean%s\n", t, n[t], bad[t] ? "  (" bad[t] " failed runs)" : "" }' "$TALLY" | sort
    exit 0
fi

make fuzz >/dev/null || { echo "fuzz: build failed (make fuzz)"; exit 2; }
mkdir -p $B/logs $B/artifacts

# run_one NAME LIBFUZZER-ARGS...
run_one() {
    name=$1; shift
    bin=$B/fuzz/fuzz_$name
    mkdir -p $B/corpus/$name fuzz/corpus/$name
    log=$B/logs/$name-$(date -u +%Y%m%dT%H%M%S)-$$.log
    $bin -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$B/artifacts/$name- \
        "$@" $B/corpus/$name fuzz/corpus/$name >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$execs" ] || execs=0
    if [ $rc -eq 0 ]; then res=clean; else res="FAILED(rc=$rc)"; fi
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $name $execs $res" >>"$TALLY"
    echo "fuzz $name: $execs executions, $res (log $log)"
    if [ $rc -ne 0 ]; then grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -n 8; return 1; fi
    return 0
}

fail=0
case $mode in
short)
    secs=${2:-60}
    # FUZZ_JOBS targets at once (default: the cores), each for SECONDS;
    # a target's result line is printed when it ends
    jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
    sdir=$B/logs/short-$$
    mkdir -p "$sdir"
    running=0
    for f in fuzz/fuzz_*.c; do
        n=$(basename "$f" .c); n=${n#fuzz_}
        (run_one "$n" -max_total_time="$secs" > "$sdir/$n.out" 2>&1; echo $? > "$sdir/$n.rc"; cat "$sdir/$n.out") &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
    done
    wait
    for f in fuzz/fuzz_*.c; do
        n=$(basename "$f" .c); n=${n#fuzz_}
        [ "$(cat "$sdir/$n.rc" 2>/dev/null)" = 0 ] || { fail=1; echo "fuzz $n: FAILED (see above)"; }
    done
    rm -rf "$sdir";;
long)
    run_one "$2" -runs="$3" || fail=1;;
time)
    run_one "$2" -max_total_time="$3" || fail=1;;
*)
    echo "usage: sh fuzz/run.sh short [SECONDS] | long TARGET RUNS | time TARGET SECONDS | tally"; exit 2;;
esac
exit $fail
