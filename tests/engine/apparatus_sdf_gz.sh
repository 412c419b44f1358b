#!/bin/sh
# The apparatus worlds kenaf-engine writes at build time, read by gz-sim's
# own SDF library (sdformat 12, gz-sim 6 "Fortress", through `ign sdf`
# from Debian's ignition-tools and libsdformat-dev): each is valid SDF as
# that library checks it (it converts 1.6 to 1.9 and refuses, among
# others, siblings of one name), and what it parsed has every collision
# of the file and both gate models. That gzserver 11 loads them is
# checked by tools/run-interop gazebo11. Skipped (77) without `ign sdf`.
#   apparatus_sdf_gz.sh WORLD.sdf...
set -eu
[ $# -gt 0 ] || { echo "usage: apparatus_sdf_gz.sh WORLD.sdf..." >&2; exit 2; }
if ! command -v ign >/dev/null 2>&1 || ! ign sdf --help >/dev/null 2>&1; then
    echo "SKIP: no 'ign sdf' (Debian: ignition-tools libsdformat-dev)"
    exit 77
fi
bad=0
for w in "$@"; do
    name=$(basename "$w" .sdf)
    # ignition-tools says on stderr that it has no backtrace library
    check=$(ign sdf -k "$w" 2>&1 | grep -v '^Library error' || true)
    if [ "$check" != "Valid." ]; then
        echo "$name: sdformat refuses it:" >&2
        echo "$check" | sed 's/^/  /' | head -20 >&2
        bad=$((bad + 1))
        continue
    fi
    want=$(grep -c '<collision ' "$w")
    parsed=$(ign sdf -p "$w" 2>/dev/null)
    got=$(printf '%s\n' "$parsed" | grep -c '<collision ' || true)
    gates=$(printf '%s\n' "$parsed" | grep -cE "<model name=.gate_(start|finish)." || true)
    if [ "$got" != "$want" ] || [ "$gates" != 2 ]; then
        echo "$name: sdformat parsed $got of $want collisions, $gates of 2 gates" >&2
        bad=$((bad + 1))
        continue
    fi
    echo "$name: valid in sdformat 12, $got collisions and 2 gates"
done
[ "$bad" = 0 ] || { echo "$bad of $# worlds not loaded as gz-sim loads them" >&2; exit 1; }
