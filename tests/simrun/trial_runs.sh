#!/bin/sh
# Trials through kenaf-sim-run --trial (docs/scenario-runs.md#trials):
# examples/teleop, scripted on stdin, on a two-traverse stepfield trial:
# the JUnit file, and score.json read back (python3) and checked against
# the engine's verdict beside it: counts, each repetition's time, faults,
# the bound; a program that quits after one traverse fails with its score
# written; the history of both sessions in date order; and what is
# refused: a scenario without a trial, a trial file with a bad key, a
# history of two trials, a score.json with a bad value, a verdict with no
# trial in it.
#   trial_runs.sh KENAF-SIM-RUN KENAF-TRIAL-REPORT SIMRUN-DIR TELEOP CI-SCENARIO-DIR
set -eu
run=$1 report=$2 dir=$3 teleop=$4 ci=$5
# shellcheck source=tests/simrun/lib.sh
. "$dir/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 to read score.json"; exit 77; }

two='p FL 30\np FR 30\np RL -30\np RR -30\nv 400 400\nw 12.5\np FL -30\np FR -30\np RL 30\np RR 30\nv -400 -400\nw 15\ns\nq\n'
one='p FL 30\np FR 30\np RL -30\np RR -30\nv 400 400\nw 14\ns\nq\n'

# score.json against the verdict file kenaf-sim-run put beside it
check_score() { # DIR COMPLETED SUCCESSES VERDICT
    python3 - "$1" "$2" "$3" "$4" <<'PY' || fail "score.json in $1: $(cat "$1/score.json")"
import json, sys
d, completed, successes, verdict = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = json.load(open(d + "/score.json"))
v = dict(l.rstrip("\n").split("=", 1) for l in open(d + "/verdict") if "=" in l)
assert s["trial"] == "trial-short" and s["program"] == "teleop", s
assert s["apparatus"] == "stepfield_e2828" and s["course"] == "traverse", s
assert s["verdict"] == verdict, (s["verdict"], verdict)
assert s["repetitions_asked"] == 2 == int(v["trial_repetitions"])
assert s["completed"] == completed == int(v["trial_reps"]), (s["completed"], v["trial_reps"])
assert s["successes"] == successes == int(v["trial_successes"])
times = [float(t) for t in v["trial_rep_times"].split(",") if t]
assert [r["time_s"] for r in s["repetitions"]] == times, (s["repetitions"], times)
assert all(t > 0 for t in times)
assert sum(r["faults"] == 0 for r in s["repetitions"]) == s["successes"]
assert s["faults"]["total"] == int(v["trial_faults"]) == sum(
    s["faults"][k] for k in ("tip-over", "wall", "lane", "estop", "assist"))
assert abs(s["lower_bound_80"] - float(v["trial_lower_bound_80"])) < 1e-4
assert s["seed"] is None and s["date"].endswith("Z")
PY
    grep -q '<svg' "$1/score.html" || fail "no plot in $1/score.html"
    grep -q "class='gate'" "$1/score.html" || fail "no gates in $1/score.html"
}

# two traverses without a fault: a pass, its JUnit and its score
printf '%b' "$two" | "$run" --trial "$dir/trial-short.json" --junit "$tmp/two.xml" \
    --score "$tmp/s1" -- "$teleop" >"$tmp/two.out" 2>&1 || { cat "$tmp/two.out"; fail "two traverses: exit $?"; }
grep -q '<testsuites tests="1" failures="0" errors="0"' "$tmp/two.xml" || fail "JUnit: $(cat "$tmp/two.xml")"
grep -q '2 of 2 repetitions without a fault' "$tmp/two.out" || fail "$(cat "$tmp/two.out")"
check_score "$tmp/s1" 2 2 pass

# one traverse, then the program quits: a fail, scored all the same
rc=0
printf '%b' "$one" | "$run" --trial "$dir/trial-short.json" --junit "$tmp/one.xml" \
    --score "$tmp/s2" -- "$teleop" >"$tmp/one.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/one.out"; fail "one traverse: exit $rc, want 1"; }
grep -q '<testsuites tests="1" failures="1" errors="0"' "$tmp/one.xml" || fail "JUnit: $(cat "$tmp/one.xml")"
check_score "$tmp/s2" 1 1 fail

# the history: both sessions in date order, the table and the page
"$run" --trial-history --score "$tmp/h" "$tmp/s2" "$tmp/s1/score.json" >"$tmp/h.out" 2>&1 ||
    { cat "$tmp/h.out"; fail "history: exit $?"; }
[ "$(grep -c '^[12] ' "$tmp/h.out")" -eq 2 ] || fail "history table: $(cat "$tmp/h.out")"
[ "$(grep -c '<svg' "$tmp/h/history.html")" -eq 2 ] || fail "history.html: no charts"

# refused, exit 2, the reason named
refused() { # WANT-TEXT ARGS...
    want=$1
    shift
    rc=0
    "$@" </dev/null >"$tmp/bad.out" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || { cat "$tmp/bad.out"; fail "$*: exit $rc, want 2"; }
    grep -q -e "$want" "$tmp/bad.out" || fail "$*: no \"$want\" in: $(cat "$tmp/bad.out")"
}
refused 'not a trial' "$run" --trial "$ci/teleop.json" -- "$teleop"
refused 'no directory' "$run" --trial "$dir/trial-short.json" --junit "$tmp/nodir/t.xml" -- "$teleop"
# a bad key, in a file beside the good one (its paths are relative)
bad="$tmp/bad-trial.json"
sed -e 's/"repetitions": 2/"repetitions": 2, "laps": 3/' \
    -e "s|\\.\\./\\.\\./config|$(cd "$dir/../../config" && pwd)|" "$dir/trial-short.json" >"$bad"
refused '"laps"' "$run" --trial "$bad" -- "$teleop"
refused 'one trial per run' "$run" --trial "$dir/trial-short.json" --trial "$dir/trial-short.json" -- "$teleop"
refused '--score is for --trial' "$run" --scenario "$ci/teleop.json" --score "$tmp/x" -- "$teleop"
cp -r "$tmp/s1" "$tmp/other"
sed 's/"trial":[[:space:]]*"trial-short"/"trial": "another"/' "$tmp/s1/score.json" >"$tmp/other/score.json"
refused 'a history is of one trial' "$run" --trial-history "$tmp/s1" "$tmp/other"
sed 's/"successes":[^,]*,/"successes": 7,/' "$tmp/s1/score.json" >"$tmp/other/score.json"
refused '"successes"' "$report" --history --out "$tmp/h2" "$tmp/other"
printf '{"format": 1}' >"$tmp/other/score.json"
refused '"trial"' "$report" --history --out "$tmp/h2" "$tmp/other"
printf 'scenario=x\nverdict=pass\n' >"$tmp/v"
refused 'holds no trial' "$report" --verdict "$tmp/v" --trajectory "$tmp/none.csv" --out "$tmp/h3"
echo "trial runs: ok"
