#!/bin/sh
# Every kind of sweep parameter reaches the case: the robot's friction and
# belt speed (robot_changes), the start pose (added to the scenario's),
# the run's --seed, and the generated terrain families with their seed;
# the engine takes each case's scenario, and what changes changes the
# trajectory (docs/scenario-runs.md, "Sweeps").
#   sweep_params.sh KENAF-SIM-RUN CLIMB_STEP SRCDIR
set -eu
run=$1 climb=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for s in params families; do
    "$run" --sweep "$src/$s.json" --jobs 2 --out "$tmp/$s" -- "$climb" >"$tmp/$s.log" 2>&1 ||
        { cat "$tmp/$s.log"; fail "$s: exit $?"; }
    ! grep -q '"status":	"error"' "$tmp/$s/results.json" || fail "$s: a case errored: $(cat "$tmp/$s.log")"
done
python3 - "$tmp" "$src" <<'PY' || fail "the cases' scenarios or trajectories"
import json, os, sys
tmp, src = sys.argv[1], sys.argv[2]
base = json.load(open(os.path.join(src, "short-step.json")))

def cases(s):
    sw = json.load(open(os.path.join(tmp, s, "sweep.json")))
    for c in sw["cases"]:
        d = os.path.join(tmp, s, "cases", c["id"])
        yield c["params"], json.load(open(os.path.join(d, "scenario.json"))), \
            json.load(open(os.path.join(d, "result.json"))), open(os.path.join(d, "run.log")).read()

fnv = set()
for p, sc, r, log in cases("params"):
    rc = sc["robot_changes"]
    assert rc["friction"]["track_mu"] == p["friction"], rc
    assert rc["belt"]["speed_max_m_s"] == 0.4, rc
    assert abs(sc["start"]["x"] - (base["start"]["x"] + 0.1)) < 1e-9, sc["start"]
    assert sc["start"]["yaw_deg"] == 10, sc["start"]
    assert os.path.isabs(sc["robot"]) and os.path.isabs(sc["terrain"]["file"]), sc
    assert "variants" not in sc
    fnv.add(r["trajectory_fnv64"])
assert len(fnv) == 2, "friction 0.3 and 1.0 gave one trajectory"
fams = {}
for p, sc, r, log in cases("families"):
    t = sc["terrain"]
    assert t["file"].endswith("/" + p["terrain_family"] + ".json") and os.path.isabs(t["file"]), t
    assert t["seed"] == p["terrain_seed"], t
    fams[r["trajectory_fnv64"]] = p
assert len(fams) == 4, "four terrains, %d trajectories" % len(fams)
PY
echo "ok: robot_changes, start offsets, seed and terrain families in every case"
