#!/bin/sh
# The drop-in proof: one controller binary, built once, never rebuilt, runs
# against the robot's driver library or the simulation library depending
# only on which libkenaf.so.1 it loads.
#   1. square (linked against the simulation library) is copied away and run
#      unchanged through kenaf-sim-run against the test robot: it drives the
#      square (robot log: four legs, back at the start).
#   2. square-hw (same source, linked against a stand-in for the hardware
#      library) is copied away; run directly with the hardware library it
#      fails ("no CAN bus"); the very same file run through kenaf-sim-run
#      drives the simulated square to completion. Its checksum never changes.
#
#   dropin_proof.sh KENAF_SIM_RUN SQUARE SQUARE_HW HWLIB_DIR KRP_ROBOT
set -eu
sim_run=$1
square=$2
square_hw=$3
hwlib_dir=$4
robot=$5
# Start from a clean loader path (the test runner may point it at the
# simulation library already, which would prove nothing).
unset LD_LIBRARY_PATH

work=$(mktemp -d /tmp/kn-dropin-XXXXXX)
robot_pid=''
cleanup() {
    if [ -n "$robot_pid" ]; then
        kill "$robot_pid" 2>/dev/null || true
        wait "$robot_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for f in "$work"/*.log "$work"/*.err; do
        [ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
    done
    exit 1
}

# Starts the test robot; sets robot_pid and port.
start_robot() {
    log=$1
    "$robot" --port 0 --log "$log" >"$log.port" 2>"$log.err" &
    robot_pid=$!
    port=''
    i=0
    while [ $i -lt 100 ]; do
        port=$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$log.port" 2>/dev/null || true)
        [ -n "$port" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "robot did not report its port"
}

stop_robot() {
    kill "$robot_pid"
    wait "$robot_pid" || true
    robot_pid=''
}

# The robot log must show the square: at least 8 rests (4 legs forward +
# 4 turns), 360 degrees turned, final pose back at the start.
check_square() {
    log=$1
    rests=$(grep -c '^REST ' "$log" || true)
    [ "$rests" -ge 8 ] || fail "$log: $rests rests, expected at least 8 (4 forward + 4 turns)"
    awk '/^FINAL /{
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            ok = v["x"] * v["x"] + v["y"] * v["y"] < 15 * 15 && \
                 v["turned"] > 357 && v["turned"] < 363
            printf "final pose x=%s y=%s turned=%s\n", v["x"], v["y"], v["turned"]
            found = 1; exit ok ? 0 : 1 }
         END { if (!found) exit 1 }' "$log" || fail "$log: square not closed"
    # the four forward legs: rests alternate forward (turned unchanged) and turn
    awk '/^REST /{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                   print v["x"], v["y"], v["turned"] }' "$log" >"$work/rests"
    corners=$(awk 'function near(a, b) { return (a - b) * (a - b) < 100 }
                   (near($1,100) && near($2,0)) || (near($1,100) && near($2,100)) ||
                   (near($1,0) && near($2,100)) || (near($1,0) && near($2,0)) { n++ }
                   END { print n + 0 }' "$work/rests")
    [ "$corners" -ge 8 ] || fail "$log: only $corners rests at the square's corners"
}

# --- 1. square through kenaf-sim-run ------------------------------------
mkdir "$work/bin"
cp "$square" "$work/bin/square"
readelf -d "$work/bin/square" | grep -q 'Shared library: \[libkenaf\.so\.1\]' ||
    fail "square does not load libkenaf.so.1"
start_robot "$work/square.log"
"$sim_run" --robot "127.0.0.1:$port" -- "$work/bin/square" >"$work/square.out" 2>"$work/square.err" ||
    fail "square through kenaf-sim-run exited $?"
stop_robot
grep -q 'SIMULATED' "$work/square.out" || fail "square printed no status with SIMULATED"
check_square "$work/square.log"
echo "ok: square ran unchanged through kenaf-sim-run and drove the square"

# --- 2. the same hardware-built file, two libraries -----------------------
mkdir "$work/hw"
cp "$square_hw" "$work/hw/square-hw"
sum_before=$(sha256sum <"$work/hw/square-hw")

# Direct: the hardware library (as installed on the robot's computer).
set +e
LD_LIBRARY_PATH="$hwlib_dir" "$work/hw/square-hw" >"$work/hw.out" 2>"$work/hw.err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "square-hw with the hardware library exited 0"
grep -q 'no CAN bus' "$work/hw.err" || fail "square-hw did not fail on the hardware library's CAN bus"
echo "ok: square-hw with the hardware library fails (exit $rc: $(head -n 1 "$work/hw.err"))"

# Through kenaf-sim-run, hardware library still on the path: simulation wins.
start_robot "$work/square-hw.log"
LD_LIBRARY_PATH="$hwlib_dir" "$sim_run" --robot "127.0.0.1:$port" -- "$work/hw/square-hw" \
    >"$work/square-hw.out" 2>"$work/square-hw.err" || fail "square-hw through kenaf-sim-run exited $?"
stop_robot
check_square "$work/square-hw.log"
sum_after=$(sha256sum <"$work/hw/square-hw")
[ "$sum_before" = "$sum_after" ] || fail "square-hw changed between runs"
echo "ok: the same square-hw file drove the simulated square (sha256 ${sum_after%% *})"
