#!/bin/sh
# A 40-case sweep of short cases run with 1 job, with 2 jobs, and as 4
# shards joined with --merge: every case's result.json and trajectories,
# and results.json, byte for byte the same; one case rerun alone with
# --case: the same again (docs/scenario-runs.md, "Sweeps").
#   sweep_repeat.sh KENAF-SIM-RUN CLIMB_STEP SRCDIR [SANITIZE]
# 125 runs of kenaf-simd and kenaf-engine, about 45 s: in the -Werror
# build only. Sanitizer builds (meson's b_sanitize) and the valgrind stage
# (KN_WRAP) skip it; the other sweep tests run kenaf-sweep there.
set -eu
run=$1 climb=$2 src=$3 san=${4:-none}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -z "${KN_WRAP:-}" ] || { echo "SKIP: 125 runs, too slow under $KN_WRAP"; exit 77; }
[ "$san" = none ] || [ -z "$san" ] || { echo "SKIP: 125 runs, too slow with -fsanitize=$san"; exit 77; }

sweep() { # OUT [options]
    out=$1
    shift
    "$run" --sweep "$src/repeat.json" --out "$tmp/$out" "$@" -- "$climb" >"$tmp/$out.log" 2>&1 ||
        { cat "$tmp/$out.log"; fail "sweep into $out: exit $?"; }
}
sweep j1 --jobs 1
sweep j2 --jobs 2
for k in 1 2 3 4; do sweep s$k --jobs 2 --shard $k/4; done
"$run" --merge "$tmp/s1" "$tmp/s2" "$tmp/s3" "$tmp/s4" --out "$tmp/m" >"$tmp/m.log" 2>&1 ||
    { cat "$tmp/m.log"; fail "merge: exit $?"; }

n=$(ls "$tmp/j1/cases" | wc -l)
[ "$n" -eq 40 ] || fail "$n case directories, want 40"
grep -q '\[40/40\]' "$tmp/j1.log" || fail "no progress line [40/40]: $(tail -n 3 "$tmp/j1.log")"
grep -q '40 cases: .* 0 errors' "$tmp/j1.log" || fail "summary: $(tail -n 3 "$tmp/j1.log")"
for s in 1 2 3 4; do
    [ "$(ls "$tmp/s$s/cases" | wc -l)" -eq 10 ] || fail "shard $s ran $(ls "$tmp/s$s/cases" | wc -l) cases, want 10"
done
for path in "$tmp"/j1/cases/*; do
    id=${path##*/}
    for d in j2 m; do
        for f in result.json trajectory.csv trajectory.svg; do
            cmp "$tmp/j1/cases/$id/$f" "$tmp/$d/cases/$id/$f" || fail "$d: case $id: $f differs"
        done
    done
done
cmp "$tmp/j1/results.json" "$tmp/j2/results.json" || fail "results.json differs with 2 jobs"
cmp "$tmp/j1/results.json" "$tmp/m/results.json" || fail "results.json differs after the merge"
grep -q '"shard":	null' "$tmp/m/sweep.json" || fail "merged sweep.json keeps a shard"
grep -q '<testsuites tests="40"' "$tmp/m/junit.xml" || fail "merged junit.xml: $(head -n 2 "$tmp/m/junit.xml")"
[ -s "$tmp/j1/report.json" ] || fail "no report.json for the whole sweep"

# one case alone, into a directory of its own: the same files
id=$(ls "$tmp/j1/cases" | sed -n 17p)
"$run" --sweep "$src/repeat.json" --case "$id" --out "$tmp/one" -- "$climb" >"$tmp/one.log" 2>&1 ||
    { cat "$tmp/one.log"; fail "--case $id: exit $?"; }
[ "$(ls "$tmp/one/cases")" = "$id" ] || fail "--case ran $(ls "$tmp/one/cases")"
for f in result.json trajectory.csv trajectory.svg; do
    cmp "$tmp/j1/cases/$id/$f" "$tmp/one/cases/$id/$f" || fail "--case $id: $f differs"
done
# and the case's scenario runs alone, with the same verdict
"$run" --scenario "$tmp/one/cases/$id/scenario.json" --trajectory "$tmp/alone.csv" -- "$climb" \
    >"$tmp/alone.log" 2>&1 || true
cmp "$tmp/alone.csv" "$tmp/j1/cases/$id/trajectory.csv" || fail "scenario.json alone: another trajectory"
echo "ok: 40 cases identical with 1 job, 2 jobs, 4 shards merged, and case $id alone"
