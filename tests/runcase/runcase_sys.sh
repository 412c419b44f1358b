#!/bin/sh
# kenaf-sim-case on its own, with the real kenaf-engine and kenaf-simd:
# bad usage exits 2 with the reason; a program that does not exist exits
# 3 before anything starts; a scenario the engine refuses is the error
# "kenaf-engine did not start: ..."; a passing run writes its files and
# leaves no temporary directory; SIGTERM stops every child it started
# (exit 143), and so does its SIGKILL (the children's death signal).
#   runcase_sys.sh KENAF-SIM-CASE KENAF-ENGINE KENAF-SIMD LIBDIR SCENARIO CLIMB_STEP
set -eu
case_=$1 engine=$2 simd=$3 libdir=$4 scen=$5 climb=$6
tmp=$(mktemp -d)
bg=''
cleanup() {
    for p in $bg; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TMPDIR="$tmp/t"
mkdir "$TMPDIR"

# Exit status $1 and $2 in the output of kenaf-sim-case $3...
expect() { # STATUS WANT ARGS...
    want_rc=$1 want=$2
    shift 2
    set +e
    "$case_" "$@" >"$tmp/out" 2>&1 </dev/null
    rc=$?
    set -e
    [ "$rc" -eq "$want_rc" ] || fail "$*: exit $rc, want $want_rc: $(cat "$tmp/out")"
    grep -qF -- "$want" "$tmp/out" || fail "$*: no \"$want\" in: $(cat "$tmp/out")"
}
base="--engine $engine --simd $simd"
# shellcheck disable=SC2086 # base splits into words on purpose (no blanks in build paths)
{
    expect 2 "--engine, --simd and --scenario are needed" --scenario "$scen" -- "$climb"
    expect 2 "no program" $base --scenario "$scen"
    expect 2 "unknown option --bogus" $base --scenario "$scen" --bogus 1 -- "$climb"
    expect 2 "--speed must be max, realtime or a real-time factor" $base --scenario "$scen" --speed fast -- "$climb"
    expect 2 "--trajectory must end in .csv or .svg" $base --scenario "$scen" --trajectory x.png -- "$climb"
    expect 2 "--cpu needs a CPU number, not x" $base --scenario "$scen" --cpu x -- "$climb"
    expect 3 "cannot run $tmp/nothing: no such file" $base --scenario "$scen" -- "$tmp/nothing"
    expect 3 "cannot run no-such-program-here: not found in PATH" $base --scenario "$scen" -- no-such-program-here
}
[ -z "$(ls "$TMPDIR")" ] || fail "a refused run left $(ls "$TMPDIR")"
echo "ok: bad usage exits 2, a missing program 3, nothing started"

# a scenario the engine cannot load
echo '{ "name": "broken" ' >"$tmp/broken.json"
set +e
"$case_" --engine "$engine" --simd "$simd" --scenario "$tmp/broken.json" --dir "$tmp/b" \
    --result "$tmp/b.result" -- "$climb" </dev/null
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "a broken scenario: exit $rc, want 3"
[ "$(cat "$tmp/b/status")" = error ] || fail "a broken scenario: status $(cat "$tmp/b/status")"
grep -q '^kenaf-engine did not start: .' "$tmp/b/why" || fail "a broken scenario: why $(cat "$tmp/b/why")"
[ "$(cat "$tmp/b/why")" = "kenaf-engine did not start: $(tail -n 1 "$tmp/b/engine.log")" ] ||
    fail "the reason is not the engine log's last line: $(cat "$tmp/b/why")"
{ grep -qx 'status=error' "$tmp/b.result" && grep -qx 'mode=error' "$tmp/b.result" &&
    grep -qx 'sim_s=0' "$tmp/b.result"; } || fail "a broken scenario's result: $(cat "$tmp/b.result")"
echo "ok: a scenario the engine refuses: $(cat "$tmp/b/why")"

# a passing run, without --dir: its files, and no temporary directory left
"$case_" --engine "$engine" --simd "$simd" --scenario "$scen" --result "$tmp/p.result" \
    --output "$tmp/p.out" --trajectory "$tmp/p.csv" --trajectory "$tmp/p.svg" -- "$climb" </dev/null ||
    fail "climb_step: exit $?: $(cat "$tmp/p.result" 2>/dev/null)"
{ grep -qx 'status=pass' "$tmp/p.result" && grep -qx 'mode=none' "$tmp/p.result" &&
    grep -q '^sim_s=[0-9]' "$tmp/p.result"; } || fail "the result: $(cat "$tmp/p.result")"
{ [ -s "$tmp/p.out" ] && [ -s "$tmp/p.csv" ] && grep -q '<svg' "$tmp/p.svg"; } || fail "output or trajectories missing"
[ -z "$(ls "$TMPDIR")" ] || fail "the run left $(ls "$TMPDIR")"
echo "ok: a passing run: $(grep why= "$tmp/p.result")"

# --cpu N: the run's processes (the program too) may use that CPU alone;
# one it may not use is said and the run goes on unpinned
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpu=$(echo "$allowed" | sed 's/[-,].*//')
show='grep Cpus_allowed_list: /proc/self/status'
"$case_" $base --scenario "$scen" --cpu "$cpu" --dir "$tmp/c" -- sh -c "$show" </dev/null >/dev/null 2>&1 || true
got=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$tmp/c/controller.out")
[ "$got" = "$cpu" ] || fail "--cpu $cpu: the program ran on CPUs $got"
"$case_" $base --scenario "$scen" --cpu 4000 --dir "$tmp/c2" -- sh -c "$show" </dev/null >"$tmp/c2.out" 2>&1 || true
grep -q -- '--cpu 4000: .*the run goes on unpinned' "$tmp/c2.out" || fail "--cpu 4000: $(cat "$tmp/c2.out")"
got=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$tmp/c2/controller.out")
[ "$got" = "$allowed" ] || fail "--cpu 4000: the program ran on CPUs $got, not $allowed"
echo "ok: --cpu $cpu pins the run's processes; --cpu 4000 is said and ignored"

# The pids of kenaf-sim-case $1's children once all three (engine,
# daemon, program) run, in $kids.
children() {
    kids=''
    w=0
    while [ "$w" -lt 600 ]; do
        kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null || true)
        [ "$(echo "$kids" | wc -w)" -lt 3 ] || [ ! -s "$tmp/s/kenaf-simd.json" ] || return 0
        kill -0 "$1" 2>/dev/null || fail "kenaf-sim-case ended before its program ran"
        sleep 0.05
        w=$((w + 1))
    done
    fail "kenaf-sim-case did not start its three children: $kids"
}
# Every pid of $kids gone, or a zombie of some other parent, within 30 s.
all_gone() {
    for k in $kids; do
        w=0
        while [ "$w" -lt 600 ]; do
            st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$k/status" 2>/dev/null || true)
            if [ -z "$st" ] || [ "$st" = Z ]; then break; fi
            sleep 0.05
            w=$((w + 1))
        done
        [ "$w" -lt 600 ] || fail "$1: child $k ($(cat "/proc/$k/comm")) still runs"
    done
}
# a program that never lets time pass: kenaf-sim-case waits for it
for sig in TERM KILL; do
    rm -rf "$tmp/s"
    "$case_" --engine "$engine" --simd "$simd" --scenario "$scen" --idle 120 --dir "$tmp/s" \
        -- sleep 600 </dev/null >/dev/null 2>&1 &
    pid=$!
    bg="$bg $pid"
    children "$pid"
    kill -s "$sig" "$pid"
    set +e
    wait "$pid"
    rc=$?
    set -e
    want=143
    [ "$sig" = TERM ] || want=137
    [ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, want $want"
    all_gone "SIG$sig"
    echo "ok: SIG$sig to kenaf-sim-case: exit $rc, its children $(echo "$kids" | tr "\n" " ")gone"
done
