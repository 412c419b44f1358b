#!/bin/sh
# The sweep's throughput: simulated seconds per wall second of a 200-case
# climb-step sweep (examples/climb_step, kenaf-sim-run --sweep) with 1 job
# and with 2 jobs in one script, and the ratio of the two: what a second
# CPU buys. --quick: 10 cases. Fails only when a sweep fails to run, never
# on the figures (docs/performance.md, "Sweeps").
#   sweep_bench.sh KENAF-SIM-RUN CLIMB_STEP SRCDIR [--quick]
set -eu
run=$1 climb=$2 src=$3
cases=200
[ "${4:-}" != --quick ] || cases=10
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One job runs on one CPU (taskset), two on two: with as many jobs as
# CPUs, kenaf-sweep pins each job's processes to a CPU of its own
# (kenaf-sim-case --cpu), so both runs are pinned alike and the ratio is
# what the second CPU buys.
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | sed 's/[-,].*//')
# The summary line's "X s simulated in Y s" of a sweep with $1 jobs.
bench() {
    pre=''
    [ "$1" != 1 ] || pre="taskset -c $cpu"
    $pre "$run" --sweep "$src/bench.json" --sample "$cases" --jobs "$1" --out "$tmp/j$1" \
        -- "$climb" >"$tmp/j$1.log" 2>&1 || { tail -n 5 "$tmp/j$1.log"; echo "FAIL: sweep with $1 jobs: exit $?"; exit 1; }
    line=$(grep " cases: .* simulated in " "$tmp/j$1.log")
    sim=$(echo "$line" | sed 's/.*errors; \([0-9.]*\) s simulated in \([0-9.]*\) s.*/\1/')
    wall=$(echo "$line" | sed 's/.*errors; \([0-9.]*\) s simulated in \([0-9.]*\) s.*/\2/')
    rate=$(awk -v s="$sim" -v w="$wall" 'BEGIN { printf "%.1f", s / w }')
    echo "sweep $cases cases, $1 job(s): $sim s simulated in $wall s wall: $rate simulated s per wall s"
}
bench 1
rate1=$rate
bench 2
rate2=$rate
# the two runs judged the same cases the same, byte for byte
cmp "$tmp/j1/results.json" "$tmp/j2/results.json" || { echo "FAIL: results differ between 1 and 2 jobs"; exit 1; }
awk -v a="$rate1" -v b="$rate2" 'BEGIN { printf "sweep scaling: 2 jobs / 1 job = %.2f\n", b / a }'
