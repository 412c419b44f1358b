#!/usr/bin/env python3
"""The Kenaf SDF for gz-sim (config/gz/kenaf_world.sdf) against what it must
agree with: the built-in engine's robot file (geometry, masses, flipper
limits), kenaf-simd's gz defaults in the config schema (world, model,
flipper joint names and signs, tracks_separation_m, steering_efficiency)
and the stock systems' topics the gz backend uses. Prints each mismatch and
exits 1 on any."""
import json
import math
import sys
import xml.etree.ElementTree as ET

sdf_path, robot_path, schema_path = sys.argv[1:4]
root = ET.parse(sdf_path).getroot()
robot = json.load(open(robot_path))
schema = json.load(open(schema_path))
backend = schema["properties"]["robots"]["items"]["properties"]["backend"]["properties"]
gzs = backend["gz"]["properties"]
flip_schema = backend["flippers"]["properties"]
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def near(a, b, what, tol=1e-6):
    check(abs(float(a) - float(b)) <= tol, "%s: %s, want %s" % (what, a, b))


def pose(el):
    p = el.find("pose")
    return [float(v) for v in p.text.split()] if p is not None else [0.0] * 6


world = root.find("world")
check(world.get("name") == gzs["world"]["default"], "world name %s" % world.get("name"))
model = [m for m in world.findall("model") if m.get("name") == gzs["model"]["default"]]
check(len(model) == 1, "no model named %s" % gzs["model"]["default"])
model = model[0]
links = {l.get("name"): l for l in model.findall("link")}
joints = {j.get("name"): j for j in model.findall("joint")}
plugins = model.findall("plugin")


def plugin(name):
    return [p for p in plugins if p.get("name") == "gz::sim::systems::" + name]


mt, fl = robot["main_track"], robot["flipper"]
near(pose(model)[2], mt["radius_m"], "model height (tracks on the ground)")
tv = plugin("TrackedVehicle")
check(len(tv) == 1, "one TrackedVehicle")
tv = tv[0]
near(tv.find("tracks_separation").text, 2 * mt["y_m"], "tracks_separation = 2 main_track.y_m")
near(tv.find("tracks_separation").text, gzs["tracks_separation_m"]["default"],
     "tracks_separation = the gz default")
near(tv.find("steering_efficiency").text, gzs["steering_efficiency"]["default"],
     "steering_efficiency = the gz default")
track_links = [e.find("link").text for e in tv.findall("left_track") + tv.findall("right_track")]
controlled = [p.find("link").text for p in plugin("TrackController")]
check(sorted(track_links) == sorted(controlled), "a TrackController per track link")
for t in track_links:
    check(t in links, "track link %s exists" % t)
for side, sgn in (("left_track", 1), ("right_track", -1)):
    near(pose(links[side])[1], sgn * mt["y_m"], side + " y")
    pul = [c for c in links[side].findall("collision") if "pulley" in c.get("name")]
    check(len(pul) == 2, side + " has two pulleys")
    for c in pul:
        near(abs(pose(c)[0]), mt["pulley_x_m"], side + " pulley x")
        near(c.find("geometry/cylinder/radius").text, mt["radius_m"], side + " pulley radius")
        near(c.find("geometry/cylinder/length").text, mt["width_m"], side + " width")

mass = sum(float(l.find("inertial/mass").text) for n, l in links.items() if "flipper" not in n)
near(mass, robot["mass"]["base_kg"], "chassis and tracks mass")
jpc = [p.find("joint_name").text for p in plugin("JointPositionController")]
lim = math.radians(fl["limit_deg"])
for key, front in (("FL", True), ("FR", True), ("RL", False), ("RR", False)):
    name = flip_schema[key]["properties"]["joint"]["default"]
    sign = flip_schema[key]["properties"]["sign"]["default"]
    check(name in joints, "joint %s exists" % name)
    check(name in jpc, "a JointPositionController for %s" % name)
    if name not in joints:
        continue
    j = joints[name]
    link = links[j.find("child").text]
    check(j.find("axis/xyz").text.split() == ["0", "1", "0"], name + " turns about y")
    near(j.find("axis/limit/upper").text, lim, name + " upper limit", 1e-3)
    near(j.find("axis/limit/lower").text, -lim, name + " lower limit", 1e-3)
    near(link.find("inertial/mass").text, robot["mass"]["flipper_kg"], name + " mass")
    near(abs(pose(link)[1]), fl["y_m"], name + " y")
    tip = [c for c in link.findall("collision") if c.get("name") == "tip"][0]
    # tip up is KRP +: about +y a front tip (+x) rises for a negative angle
    out = 1 if pose(tip)[0] > 0 else -1
    check((out > 0) == front, name + " points outward")
    check(sign == -out, "%s: default sign %s fits the axis" % (name, sign))
    near(abs(pose(tip)[0]), fl["length_m"], name + " length")
    near(tip.find("geometry/cylinder/radius").text, fl["tip_radius_m"], name + " tip radius")
check(len(plugin("JointStatePublisher")) == 1, "a JointStatePublisher")
check(any(p.get("name") == "gz::sim::systems::SceneBroadcaster" for p in world.findall("plugin")),
      "the world's SceneBroadcaster (pose/info, clock)")

for b in bad:
    print("kenaf_world.sdf:", b)
print("gz-sdf: %d mismatches" % len(bad))
sys.exit(1 if bad else 0)
