#!/bin/sh
# kenaf-sim-run's environment handling: library directory first in
# LD_LIBRARY_PATH, KENAF_ROBOT from --robot or kept, a warning (never a
# failure) for a program that does not load libkenaf.so.1; the usage errors
# of the scenario options.
#   sim_run_test.sh KENAF_SIM_RUN LIBDIR SQUARE
set -eu
sim_run=$1
libdir=$2
square=$3
env_prog=$(command -v env)
unset LD_LIBRARY_PATH # the test runner may have set one; each case sets its own
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

LD_LIBRARY_PATH=/x/y KENAF_ROBOT=10.0.0.1:1 "$sim_run" --robot 127.0.0.1:4242 -- "$env_prog" >"$out" 2>"$err" ||
    fail "exit $?"
grep -qx 'KENAF_ROBOT=127.0.0.1:4242' "$out" || fail "--robot not applied"
grep -qx "LD_LIBRARY_PATH=$libdir:/x/y" "$out" || fail "library dir not first in LD_LIBRARY_PATH"
grep -q 'does not load libkenaf.so.1' "$err" || fail "no warning for a program without libkenaf"

KENAF_ROBOT='[::1]:9000' "$sim_run" "$env_prog" >"$out" 2>"$err" || fail "exit $?"
grep -qx 'KENAF_ROBOT=\[::1\]:9000' "$out" || fail "existing KENAF_ROBOT not kept"
grep -qx "LD_LIBRARY_PATH=$libdir" "$out" || fail "LD_LIBRARY_PATH not set"

env -u KENAF_ROBOT "$sim_run" --lib /tmp -- "$env_prog" >"$out" 2>"$err" && fail "--lib without libkenaf.so.1 accepted"
grep -q 'no libkenaf.so.1' "$err" || fail "missing library not reported"

# A program that loads libkenaf.so.1 gets no warning; with no robot there
# it fails on its own terms.
KENAF_TIMEOUT_MS=50 "$sim_run" --robot 127.0.0.1:1 -- "$square" >"$out" 2>"$err" && fail "square without robot exited 0"
grep -q 'does not load' "$err" && fail "warning for square, which does load libkenaf.so.1"
grep -q 'cannot connect' "$err" || fail "square did not report the missing robot"

"$sim_run" >"$out" 2>"$err" && fail "no program accepted"
grep -q usage "$err" || fail "no usage message"

# Usage errors of the scenario options, each exit 2 before anything runs:
# scenario options without --scenario, a bad speed, idle or trajectory
# suffix, --robot with --scenario.
usage_error() { # what, args...
    what=$1
    shift
    set +e
    "$sim_run" "$@" >"$out" 2>"$err"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "$what: exit $rc, want 2"
}
usage_error "--junit without --scenario" --junit x.xml -- "$square"
grep -q 'need --scenario' "$err" || fail "--junit without --scenario: no reason given"
usage_error "--speed fast" --scenario x.json --speed fast -- "$square"
usage_error "--idle abc" --scenario x.json --idle abc -- "$square"
usage_error "--trajectory x.txt" --scenario x.json --trajectory x.txt -- "$square"
usage_error "--robot with --scenario" --scenario x.json --robot 127.0.0.1:1 -- "$square"
echo ok
