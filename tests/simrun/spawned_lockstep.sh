#!/bin/sh
# kenaf-simd with a lockstep robot on an engine it spawns (backend.lockstep,
# no address): the engine runs with --pace step, an unchanged square steps
# it through libkenaf, and the world waiting between runs is not taken for
# a hung engine (no silence, no kill, no watchdog trip, BACKEND_UP kept)
# after longer than silent_restart_s (3 s) and stale_ms; a second square
# carries on in the same world.
#   spawned_lockstep.sh KENAF-SIMD KENAF-SIM-RUN SQUARE
set -eu
simd=$1 run=$2 square=$3
tmp=$(mktemp -d)
pid=''
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- kenaf-simd"; cat "$tmp/d.log"; exit 1; }

cat >"$tmp/d.json" <<JSON
{ "log_level": "info", "stats_socket": "$tmp/s.sock",
  "robots": [ { "name": "kenaf", "listen": "127.0.0.1:0",
    "backend": { "type": "engine", "lockstep": true, "engine": { "terrain": "flat" } } } ] }
JSON
"$simd" --config "$tmp/d.json" >"$tmp/d.log" 2>&1 &
pid=$!
"$simd" --wait-ready --socket "$tmp/s.sock" --timeout 20 >/dev/null || fail "not ready"
grep -q -- 'pace step' "$tmp/d.log" || fail "the engine does not run with --pace step"
addr=$(sed -n 's/.*KRP\/1 on udp \([^,]*\),.*/\1/p' "$tmp/d.log" | head -n 1)

stat() { # key: its first number in the stats
    "$simd" --stats --socket "$tmp/s.sock" | tr -d ' \t\n' | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2
}
KENAF_LOCKSTEP=1 "$run" --robot "$addr" -- "$square" >"$tmp/sq1.out" 2>&1 ||
    { cat "$tmp/sq1.out"; fail "first square: exit $?"; }
steps1=$(stat steps_done)
[ "${steps1:-0}" -gt 300 ] || fail "only ${steps1:-no} STEPs done for a square"
sleep 4
[ "$(stat silent_kills)" = 0 ] || fail "the waiting engine was killed"
[ "$(stat silences)" = 0 ] || fail "the waiting engine was taken for silent"
[ "$(stat watchdog_trips)" = 0 ] || fail "the watchdog tripped in lockstep"
[ "$(stat spawns)" = 1 ] || fail "the engine was spawned again"
"$simd" --stats --socket "$tmp/s.sock" | tr -d ' \t\n' | grep -q '"BACKEND_UP":true' ||
    fail "BACKEND_UP lost while waiting"
KENAF_LOCKSTEP=1 "$run" --robot "$addr" -- "$square" >"$tmp/sq2.out" 2>&1 ||
    { cat "$tmp/sq2.out"; fail "second square: exit $?"; }
steps2=$(stat steps_done)
[ "$steps2" -gt "$steps1" ] || fail "the second square did not step"
grep -q 't=9.1[0-9]* s' "$tmp/sq1.out" || fail "first square did not end at 9.1 s of robot time: $(tail -n 8 "$tmp/sq1.out")"
echo "PASS: spawned engine in lockstep: $steps1 then $steps2 STEPs, no silence, kill or watchdog in 4 s of waiting"
