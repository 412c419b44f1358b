#!/bin/sh
# kenaf-engine --svg: a top view (a straight run) and a side view (a step
# climb) written by the shared plot writer, checked as readable plots
# (axes, grid, one scale, markers, time labels, legend; the footprint at
# start and end in the top view).
set -eu
src=$1 engine=$2 svgcheck=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$engine" --scenario "$src/config/scenarios/pecka-1-straight.json" --variant 0 \
    --svg "$out/top.svg" --quiet
"$svgcheck" --footprint 0.5,0.3 --fill 0.7 --either-way "$out/top.svg"
"$engine" --scenario "$src/config/scenarios/kurose-step-flippers.json" --variant 2 \
    --svg "$out/side.svg" --quiet
"$svgcheck" --footprint 0,0 --fill 0.3 --either-way "$out/side.svg"
grep -q "class='terrain'" "$out/side.svg"
grep -q "class='pass-line'" "$out/side.svg"
# an output file that cannot be written is an error with the reason
if "$engine" --scenario "$src/config/scenarios/pecka-1-straight.json" --variant 0 \
        --svg "$out/missing/run.svg" --quiet 2>"$out/err.txt"; then
    echo "kenaf-engine wrote into a missing directory?"
    exit 1
fi
grep -q "missing/run.svg: No such file or directory" "$out/err.txt" || { cat "$out/err.txt"; exit 1; }
echo "engine plots ok"
