#!/bin/sh
# README command 1 without its install and build steps: runs tools/kenaf-demo
# against this build tree and checks that the square was driven and plotted.
set -eu
src=$1 build=$2 svgcheck=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# a free UDP port near the demo's own, so a running demo does not collide
port=$((20000 + $$ % 20000))
KENAF_BUILD_DIR=$build KENAF_DEMO_OUT=$out KENAF_DEMO_PORT=$port "$src/tools/kenaf-demo" >"$out/demo.txt" 2>&1 || {
    cat "$out/demo.txt"
    exit 1
}
cat "$out/demo.txt"
# four legs: the status block printed five times, each SIMULATED
[ "$(grep -c 'flags .*SIMULATED' "$out/demo.txt")" -eq 5 ]
# a trajectory with many samples that ends where it started (within 2 cm)
rows=$(($(wc -l <"$out/trajectory.csv") - 1))
[ "$rows" -gt 50 ] || { echo "only $rows trajectory rows"; exit 1; }
summary=$(grep 'samples over' "$out/demo.txt")
path=$(echo "$summary" | sed -n 's/.*path \([0-9.]*\) m.*/\1/p')
end=$(echo "$summary" | sed -n 's/.*end \([0-9.]*\) m from start.*/\1/p')
awk -v p="$path" -v e="$end" 'BEGIN { exit !(p > 0.38 && p < 0.42 && e < 0.02) }' ||
    { echo "path $path m, end $end m from start: not a 100 mm square"; exit 1; }
# a plot a person can read: axes, one scale, the square filling it,
# markers, time labels, the footprint (plotcheck.h)
"$svgcheck" --footprint 0.5,0.3 --fill 0.7 "$out/trajectory.svg"
echo "demo ok: $rows samples, path $path m, end $end m from start"
