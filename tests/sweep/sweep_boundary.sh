#!/bin/sh
# The sweep's boundary equals a direct scan: examples/climb_step on steps
# of 0.25 to 0.28 m, once as a sweep (one case per height) and once as one
# kenaf-sim-run --scenario per height; the report's point boundary is the
# last height before the first failure of the scan, and every case's
# verdict is the scan's (docs/scenario-runs.md, "Sweeps").
#   sweep_boundary.sh KENAF-SIM-RUN CLIMB_STEP SRCDIR
set -eu
run=$1 climb=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$run" --sweep "$src/boundary.json" --jobs 2 --out "$tmp/o" -- "$climb" >"$tmp/o.log" 2>&1 ||
    { cat "$tmp/o.log"; fail "sweep: exit $?"; }

# the direct scan: the heights in order, the last one before the first failure
scan='' last=none k=0 failed=0
for h in 0.25 0.26 0.27 0.28; do
    set +e
    "$run" --scenario "$src/climb-heights.json#$k" -- "$climb" >"$tmp/scan$k.log" 2>&1
    rc=$?
    set -e
    case $rc in
    0) v=pass; [ "$failed" = 1 ] || last=$h ;;
    1) v=fail; failed=1 ;;
    *) cat "$tmp/scan$k.log"; fail "height $h: exit $rc" ;;
    esac
    scan="$scan $h=$v"
    grep -q "\"step_height_m\":	$h,.*\"status\":	\"$v\"" "$tmp/o/results.json" 2>/dev/null ||
        python3 -c "
import json, sys
r = json.load(open('$tmp/o/results.json'))
c = [c for c in r['cases'] if abs(c['params']['step_height_m'] - $h) < 1e-9]
sys.exit(0 if len(c) == 1 and c[0]['status'] == '$v' else 1)" ||
        fail "height $h: the scan says $v, the sweep: $(cat "$tmp/o/results.json")"
    k=$((k + 1))
done
[ "$failed" = 1 ] || fail "the scan found no failure (${scan}): the heights no longer bracket the boundary"
point=$(python3 -c "
import json
b = json.load(open('$tmp/o/report.json'))['boundaries']
p = [x['point'] for x in b if x['parameter'] == 'step_height_m']
print('none' if not p or p[0] is None else '%g' % p[0])")
[ "$point" = "$last" ] || fail "report boundary $point, direct scan $last (${scan})"
grep -q "boundary step_height_m" "$tmp/o.log" || fail "no boundary in the summary: $(tail -n 4 "$tmp/o.log")"
echo "ok: boundary $point, direct scan${scan}"
