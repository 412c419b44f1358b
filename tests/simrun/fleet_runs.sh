#!/bin/sh
# Fleet runs in lockstep (docs/scenario-runs.md#fleets), end to end with
# real processes: two unchanged controllers drive two robots in one world
# (tests/simrun/fleet-meet.json: head on into each other) and give the
# same two trajectory CSVs byte for byte idle and with every core busy;
# each robot is judged on its own (the square passes beside a robot that
# does not drive, which fails, and the JUnit file says which); a fleet
# command line that cannot be run (a --robot without a program, a name
# given twice, a name the scenario does not declare) is an error, exit 3.
#   fleet_runs.sh KENAF-SIM-RUN LIBDIR INCLUDEDIR SCENARIODIR SRCDIR SQUARE [SANITIZE]
set -eu
run=$1 libdir=$2 inc=$3 scen=$4 src=$5 square=$6 san=${7:-none}
# shellcheck source=tests/simrun/lib.sh
. "$src/lib.sh"
cc_setup "$san"
meet="$src/fleet-meet.json"
"$cc" $cflags -I "$inc" -o "$tmp/driver" "$src/fleet_driver.c" -L "$libdir" -lkenaf

# 1. head on, idle: alpha drives 4 s, bravo (slower) 3 s and leaves first
"$run" --scenario "$meet" --junit "$tmp/a.xml" --trajectory "$tmp/a.csv" \
    --robot alpha -- "$tmp/driver" 300 4 --robot bravo -- "$tmp/driver" 150 3 \
    >"$tmp/a.out" 2>&1 || { cat "$tmp/a.out"; fail "the fleet: exit $?"; }
grep -q 'fleet-meet/alpha pass' "$tmp/a.out" || fail "no pass line for alpha: $(cat "$tmp/a.out")"
grep -q 'fleet-meet/bravo pass (3.000 s simulated' "$tmp/a.out" || fail "no pass line for bravo: $(cat "$tmp/a.out")"
grep -q '<testsuites tests="2" failures="0" errors="0"' "$tmp/a.xml" || fail "JUnit: $(cat "$tmp/a.xml")"
for r in alpha bravo; do
    [ "$(wc -l <"$tmp/a-$r.csv")" -gt 250 ] || fail "$r's CSV too short"
done
# they did meet: alpha, undisturbed 1.2 m in 4 s, was held back by bravo
x=$(tail -n 1 "$tmp/a-alpha.csv" | cut -d, -f2)
awk -v x="$x" 'BEGIN { exit !(x > 0.3 && x < 1.0) }' || fail "alpha ended at x $x m: the robots did not meet"

# 2. the same with every core busy: both trajectories byte for byte
load_start
"$run" --scenario "$meet" --trajectory "$tmp/b.csv" \
    --robot alpha -- "$tmp/driver" 300 4 --robot bravo -- "$tmp/driver" 150 3 \
    >"$tmp/b.out" 2>&1 || { cat "$tmp/b.out"; fail "the fleet under load: exit $?"; }
load_stop
cmp "$tmp/a-alpha.csv" "$tmp/b-alpha.csv" || fail "alpha's trajectories differ between an idle and a loaded run"
cmp "$tmp/a-bravo.csv" "$tmp/b-bravo.csv" || fail "bravo's trajectories differ between an idle and a loaded run"

# 3. judged per robot: the square beside a robot that does not drive
# (the scenario's one start: bravo 3 m to the left of alpha); bravo's
# program starts 1.5 s late, longer than the library's default wait for
# a STEP, which alpha's first STEP spends waiting for it
set +e
"$run" --scenario "$scen/square.json" --junit "$tmp/c.xml" \
    --robot alpha -- "$square" --robot bravo -- sh -c 'sleep 1.5; exec "$0" 0 2' "$tmp/driver" \
    >"$tmp/c.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$tmp/c.out"; fail "square and idle robot: exit $rc, want 1"; }
grep -q 'square/alpha pass' "$tmp/c.out" || fail "alpha not judged pass: $(cat "$tmp/c.out")"
grep -q 'square/bravo fail' "$tmp/c.out" || fail "bravo not judged fail: $(cat "$tmp/c.out")"
grep -q '<testsuites tests="2" failures="1" errors="0"' "$tmp/c.xml" || fail "JUnit counts: $(cat "$tmp/c.xml")"
# the failure is bravo's test case, not alpha's
awk '/<testcase/ { name = $0 } /<failure/ { print name }' "$tmp/c.xml" >"$tmp/c.failed"
grep -q 'name="square/bravo"' "$tmp/c.failed" || fail "the failure is not bravo's: $(cat "$tmp/c.xml")"
! grep -q 'name="square/alpha"' "$tmp/c.failed" || fail "alpha's test case failed: $(cat "$tmp/c.xml")"

# 4. command lines that cannot be run: exit 3 and a reason
bad() {
    want=$1
    shift
    set +e
    "$run" "$@" >"$tmp/e.out" 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || { cat "$tmp/e.out"; fail "$*: exit $rc, want 3"; }
    grep -q "$want" "$tmp/e.out" || fail "$*: no \"$want\" in: $(cat "$tmp/e.out")"
}
bad 'bravo: no program' --scenario "$meet" --robot alpha -- "$tmp/driver" 0 1 --robot bravo --
bad 'alpha: named twice' --scenario "$meet" --robot alpha -- "$tmp/driver" 0 1 --robot alpha -- "$tmp/driver" 0 1
bad 'declares no robot charlie' --scenario "$meet" --robot alpha -- "$tmp/driver" 0 1 --robot charlie -- "$tmp/driver" 0 1
bad 'declares robot bravo' --scenario "$meet" --robot alpha -- "$tmp/driver" 0 1
bad 'give each its program' --scenario "$meet" -- "$tmp/driver" 0 1
echo "PASS: two controllers in one world, identical trajectories idle and loaded, judged per robot, bad fleets refused"
