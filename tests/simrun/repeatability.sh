#!/bin/sh
# Repeatability of lockstep scenario runs: the step climb run N times
# (default 20) with the machine idle and N times with every core busy
# gives N + N byte-identical trajectory CSVs. In a sanitizer build (meson's
# b_sanitize, the 5th argument) 4 + 4: the code runs under the sanitizers
# all the same, and 40 runs there took a minute of the ASan stage.
#   repeatability.sh KENAF-SIM-RUN SCENARIODIR CLIMB_STEP [N [SANITIZE]]
set -eu
run=$1 scen=$2 climb=$3 n=${4:-20} san=${5:-none}
[ "$san" = none ] || [ -z "$san" ] || n=4
# shellcheck source=tests/simrun/lib.sh
. "$(dirname "$0")/lib.sh"

runs() { # tag
    k=0
    while [ "$k" -lt "$n" ]; do
        k=$((k + 1))
        "$run" --scenario "$scen/climb-step.json" --trajectory "$tmp/$1-$k.csv" -- "$climb" \
            >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$1 run $k: exit $?"; }
    done
}

runs idle
load_start
runs loaded
load_stop
ref=$(cksum <"$tmp/idle-1.csv")
for f in "$tmp"/*.csv; do
    [ "$(cksum <"$f")" = "$ref" ] || fail "$(basename "$f") differs from idle-1.csv"
done
echo "PASS: $n idle and $n loaded runs ($cores busy loops), $((2 * n)) identical trajectories ($(wc -l <"$tmp/idle-1.csv") lines, cksum $ref)"
