#!/bin/sh
# Bad input to kenaf-sim-run --sweep: exit 2 with a clear message and
# nothing run (no output directory made); a program that cannot run: exit
# 3, named; cases whose runs break: each reported with its id and the
# command that reruns it alone, the sweep goes on, exit 3
# (docs/scenario-runs.md, "Sweeps").
#   sweep_bad.sh KENAF-SIM-RUN CLIMB_STEP SRCDIR SIMRUN-SRCDIR LIBDIR INCLUDEDIR [SANITIZE]
set -eu
run=$1 climb=$2 src=$3 simsrc=$4 libdir=$5 inc=$6 san=${7:-none}
# shellcheck source=tests/simrun/lib.sh
. "$simsrc/lib.sh"
cc_setup "$san"


# A sweep file in $tmp with the parameters (and more keys) given.
sweepfile() { # NAME JSON-MEMBERS
    printf '{ "name": "bad", "scenario": "%s/short-step.json", %s }\n' "$src" "$2" >"$tmp/$1.json"
}
# Exit status $1 and a message holding $2 for the sweep ($3...), nothing run.
refused() { # STATUS WANT ARGS...
    want_rc=$1 want=$2
    shift 2
    set +e
    "$run" "$@" >"$tmp/r.log" 2>&1
    rc=$?
    set -e
    [ "$rc" -eq "$want_rc" ] || { cat "$tmp/r.log"; fail "$*: exit $rc, want $want_rc"; }
    grep -qF -- "$want" "$tmp/r.log" || fail "$*: no \"$want\" in: $(cat "$tmp/r.log")"
    [ ! -e "$tmp/out" ] || fail "$*: made $tmp/out"
    ! grep -q '\[1/' "$tmp/r.log" || fail "$*: ran a case"
}
good='"parameters": { "step_height_m": [0.1, 0.12] }'
sweepfile unknown-key "$good, \"sampel\": { \"cases\": 1 }"
refused 2 'unknown key "sampel"' --sweep "$tmp/unknown-key.json" --out "$tmp/out" -- "$climb"
sweepfile unknown-param '"parameters": { "step_heigth_m": [0.1] }'
refused 2 'unknown parameter "step_heigth_m"' --sweep "$tmp/unknown-param.json" --out "$tmp/out" -- "$climb"
sweepfile no-fit '"parameters": { "trench_width_m": [0.3] }'
refused 2 "parameter trench_width_m does not fit the scenario's terrain (step)" \
    --sweep "$tmp/no-fit.json" --out "$tmp/out" -- "$climb"
sweepfile empty '"parameters": { "step_height_m": { "from": 0.3, "to": 0.1, "step": 0.01 } }'
refused 2 'empty range' --sweep "$tmp/empty.json" --out "$tmp/out" -- "$climb"
sweepfile many '"parameters": { "step_height_m": { "from": 0.1, "to": 0.3, "step": 0.01 }, "seed": [1, 2, 3] }, "max_cases": 50'
refused 2 '63 cases, more than max_cases 50' --sweep "$tmp/many.json" --out "$tmp/out" -- "$climb"
sweepfile ok "$good"
refused 2 '--shard 3/2' --sweep "$tmp/ok.json" --shard 3/2 --out "$tmp/out" -- "$climb"
refused 2 '--shard 0/2' --sweep "$tmp/ok.json" --shard 0/2 --out "$tmp/out" -- "$climb"
refused 2 '--shard x/y' --sweep "$tmp/ok.json" --shard x/y --out "$tmp/out" -- "$climb"
refused 2 '--idle needs seconds' --sweep "$tmp/ok.json" --idle x --out "$tmp/out" -- "$climb"
refused 2 "no libkenaf.so.1 in $tmp" --sweep "$tmp/ok.json" --lib "$tmp" --out "$tmp/out" -- "$climb"
refused 2 '--case 0123456789: no such case in sweep bad' \
    --sweep "$tmp/ok.json" --case 0123456789 --out "$tmp/out" -- "$climb"
refused 2 'nonexistent.json: No such file' --sweep "$tmp/nonexistent.json" --out "$tmp/out" -- "$climb"
printf '{ "name": "bad", "scenario": "missing-scenario.json", %s }\n' "$good" >"$tmp/gone.json"
refused 2 "scenario $tmp/missing-scenario.json: No such file" --sweep "$tmp/gone.json" --out "$tmp/out" -- "$climb"
refused 3 "cannot run $tmp/no-such-controller: no such file" \
    --sweep "$tmp/ok.json" --out "$tmp/out" -- "$tmp/no-such-controller"
# also without a sweep: --scenario with a program that is not there
refused 3 "cannot run $tmp/no-such-controller: no such file" \
    --scenario "$src/short-step.json" -- "$tmp/no-such-controller"
refused 3 "cannot run $tmp: not an executable file" --scenario "$src/short-step.json" -- "$tmp"
refused 3 "cannot run $tmp/no-such-controller: no such file" \
    --scenario "$src/short-step.json" --robot a -- "$climb" --robot b -- "$tmp/no-such-controller"

# an output directory that holds another sweep is refused
mkdir -p "$tmp/other"
echo '{ "hash": "0000000000000000" }' >"$tmp/other/sweep.json"
set +e
"$run" --sweep "$tmp/ok.json" --out "$tmp/other" -- "$climb" >"$tmp/r.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--out holding another sweep: exit $rc, want 2"
grep -q 'holds another sweep' "$tmp/r.log" || fail "no reason: $(cat "$tmp/r.log")"

# cases whose run breaks (a program that never lets time pass): reported
# with the rerun command, every case still run, exit 3
"$cc" $cflags -I "$inc" -o "$tmp/never_sleeps" "$simsrc/never_sleeps.c" -L "$libdir" -lkenaf
set +e
"$run" --sweep "$tmp/ok.json" --idle 1 --jobs 2 --out "$tmp/err" -- "$tmp/never_sleeps" >"$tmp/e.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { cat "$tmp/e.log"; fail "erroring cases: exit $rc, want 3"; }
[ "$(grep -c '\] [0-9a-f]\{10\} error step_height_m=' "$tmp/e.log")" -eq 2 ] ||
    fail "not both cases reported as errors: $(cat "$tmp/e.log")"
[ "$(grep -c "rerun alone: kenaf-sim-run --sweep $tmp/ok.json --case [0-9a-f]\{10\} -- $tmp/never_sleeps" "$tmp/e.log")" -eq 2 ] ||
    fail "no rerun command: $(cat "$tmp/e.log")"
grep -q 'never lets time pass' "$tmp/e.log" || fail "no reason: $(cat "$tmp/e.log")"
grep -q '2 cases: 0 passed, 0 failed, 2 errors' "$tmp/e.log" || fail "summary: $(cat "$tmp/e.log")"
grep -q '"status":	"error"' "$tmp/err/results.json" || fail "results.json: $(cat "$tmp/err/results.json")"
grep -q '<testsuites tests="2" failures="0" errors="2"' "$tmp/err/junit.xml" || fail "junit: $(cat "$tmp/err/junit.xml")"
echo "ok: bad sweeps refused before running, erroring cases reported"
