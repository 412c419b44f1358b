#!/bin/sh
# Scenario runs in lockstep (docs/scenario-runs.md), end to end with real
# processes: a controller that is none of the examples, compiled here
# against kenaf.h alone, climbs the step scenario through kenaf-sim-run
# --scenario with a JUnit verdict; a second run with both cores busy gives
# the same trajectory CSV byte for byte; the square on the step scenario is
# judged a failure; a controller that never sleeps is reported as an
# error within --idle, not waited for; --result, --output and both
# trajectories of one run; a program that is not there is an error.
#   scenario_runs.sh KENAF-SIM-RUN LIBDIR INCLUDEDIR SCENARIODIR SRCDIR SQUARE [SANITIZE]
# SANITIZE: meson's b_sanitize; the controller is built with the same
# sanitizers as the library it will load.
set -eu
run=$1 libdir=$2 inc=$3 scen=$4 src=$5 square=$6 san=${7:-none}
# shellcheck source=tests/simrun/lib.sh
. "$src/lib.sh"
cc_setup "$san"

# built against kenaf.h only, linked to whatever libkenaf.so.1 is found at
# run time: kenaf-sim-run points it at the simulation library
"$cc" $cflags -I "$inc" -o "$tmp/own_climber" "$src/own_climber.c" -L "$libdir" -lkenaf
"$cc" $cflags -I "$inc" -o "$tmp/never_sleeps" "$src/never_sleeps.c" -L "$libdir" -lkenaf
sum1=$(cksum <"$tmp/own_climber")

# 1. the step climbed, verdict pass in the exit status and the JUnit file
"$run" --scenario "$scen/climb-step.json" --junit "$tmp/a.xml" --trajectory "$tmp/a.csv" \
    -- "$tmp/own_climber" >"$tmp/a.out" 2>&1 || { cat "$tmp/a.out"; fail "own_climber on the step: exit $?"; }
grep -q 'climb-step pass' "$tmp/a.out" || fail "no pass line: $(cat "$tmp/a.out")"
grep -q '<testsuites tests="1" failures="0" errors="0"' "$tmp/a.xml" || fail "JUnit: $(cat "$tmp/a.xml")"
grep -q '<testcase classname="own_climber" name="climb-step"' "$tmp/a.xml" || fail "JUnit test case: $(cat "$tmp/a.xml")"
! grep -q '<failure' "$tmp/a.xml" || fail "JUnit has a failure"
[ "$(head -n 1 "$tmp/a.csv" | cut -d, -f1-3)" = "t_s,x_m,y_m" ] || fail "CSV header: $(head -n 1 "$tmp/a.csv")"
[ "$(wc -l <"$tmp/a.csv")" -gt 900 ] || fail "CSV too short: $(wc -l <"$tmp/a.csv") lines"

# 2. the same again with every core busy: byte for byte the same
load_start
"$run" --scenario "$scen/climb-step.json" --trajectory "$tmp/b.csv" -- "$tmp/own_climber" \
    >"$tmp/b.out" 2>&1 || { cat "$tmp/b.out"; fail "own_climber under load: exit $?"; }
load_stop
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "trajectories differ between an idle and a loaded run"
[ "$(cksum <"$tmp/own_climber")" = "$sum1" ] || fail "the binary changed"

# 3. the right verdict for a controller that does not climb: fail, exit 1
set +e
"$run" --scenario "$scen/climb-step.json" --junit "$tmp/c.xml" -- "$square" >"$tmp/c.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$tmp/c.out"; fail "square on the step: exit $rc, want 1"; }
grep -q 'climb-step fail' "$tmp/c.out" || fail "no fail line: $(cat "$tmp/c.out")"
grep -q '<failure message=' "$tmp/c.xml" || fail "JUnit without the failure: $(cat "$tmp/c.xml")"

# 4. a controller that never sleeps: an error after --idle, not a hang
set +e
start=$(date +%s)
"$run" --scenario "$scen/climb-step.json" --idle 2 --junit "$tmp/d.xml" -- "$tmp/never_sleeps" \
    >"$tmp/d.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { cat "$tmp/d.out"; fail "never_sleeps: exit $rc, want 3"; }
grep -q 'never lets time pass' "$tmp/d.out" || fail "no reason given: $(cat "$tmp/d.out")"
grep -q '<error message=' "$tmp/d.xml" || fail "JUnit without the error: $(cat "$tmp/d.xml")"
[ $(($(date +%s) - start)) -lt 30 ] || fail "never_sleeps took too long to report"
# 5. one run's outcome for a program (--result), the program's output
# (--output), and both trajectories at once; the square fails on the
# step, its mode from the engine's verdict
set +e
"$run" --scenario "$scen/climb-step.json" --result "$tmp/e.result" --output "$tmp/e.out" \
    --trajectory "$tmp/e.csv" --trajectory "$tmp/e.svg" -- "$square" >"$tmp/e.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$tmp/e.log"; fail "--result run: exit $rc, want 1"; }
grep -qx 'status=fail' "$tmp/e.result" || fail "--result: $(cat "$tmp/e.result")"
grep -qx 'mode=\(criterion\|stall\|time-out\)' "$tmp/e.result" || fail "--result mode: $(cat "$tmp/e.result")"
grep -q '^why=.' "$tmp/e.result" || fail "--result why: $(cat "$tmp/e.result")"
grep -q '^sim_s=[0-9]' "$tmp/e.result" || fail "--result sim_s: $(cat "$tmp/e.result")"
[ -f "$tmp/e.out" ] || fail "--output wrote no file"
[ "$(head -n 1 "$tmp/e.csv" | cut -d, -f1)" = t_s ] || fail "--trajectory CSV: $(head -n 1 "$tmp/e.csv")"
grep -q '<svg' "$tmp/e.svg" || fail "--trajectory SVG missing"

# 6. a program that is not there: an error (3) that says so, nothing run
set +e
"$run" --scenario "$scen/climb-step.json" --junit "$tmp/f.xml" -- "$tmp/not-there" >"$tmp/f.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { cat "$tmp/f.out"; fail "a missing program: exit $rc, want 3"; }
grep -q "cannot run $tmp/not-there: no such file" "$tmp/f.out" || fail "no reason: $(cat "$tmp/f.out")"
echo "PASS: own controller judged pass, identical trajectories idle and loaded, square judged fail, a never-sleeping controller reported"
