// kenaf-view's page: connects to the server's WebSocket, keeps one track
// per robot, draws the terrain and the robots with three.js at the display
// rate, and measures itself (frame rate, STATUS-to-frame latency) for the
// overlay, for reports to the server and for tests through the read-only
// window.kenafView. It only observes: nothing here commands a robot.
import * as THREE from '../three/build/three.module.js';
import { readParams, VIEWS } from './params.js';
import { ViewLink, defaultSocketUrl } from './link.js';
import { RobotTrack } from './robot_track.js';
import { KenafModel } from './robot_model.js';
import { buildTerrain } from './terrain.js';
import { Views } from './views.js';
import { Overlay } from './overlay.js';
import { Meter } from './meter.js';
import { Trail } from './trail.js';
import { bindControls } from './controls.js';
import { RenderScale } from './render_scale.js';
import { PtzShare } from './ptz_share.js';
import { FleetBoxes, pickDetailed } from './fleet.js';
import { RobotList } from './robot_list.js';
import { TrialPanel } from './trial.js';
import { glRendererName, isSoftwareGl } from './software_gl.js';

const P = readParams(location.search);
const tracks = new Map();          // robot id -> RobotTrack
const drawn = new Map();           // robot id -> { model, doc, trail }
let terrain = null, terrainKey = null;
let followId = typeof P.robot === 'number' ? P.robot : null;
let followName = typeof P.robot === 'string' ? P.robot : null; // until a robot of that name is known
let detailed = new Set();

const glName = glRendererName();
const antialias = P.aa !== null ? P.aa : !isSoftwareGl(glName);
const renderer = new THREE.WebGLRenderer({ antialias });
const basePixelRatio = Math.min(window.devicePixelRatio || 1, 2);
const renderScale = new RenderScale(P.scale);
renderer.setPixelRatio(basePixelRatio * renderScale.value);
document.getElementById('scene').appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xc4d0d8);
scene.fog = new THREE.Fog(0xc4d0d8, 25, 70);
const sky = new THREE.HemisphereLight(0xf4f8ff, 0x9a9a90, 0.5);
sky.position.set(0, 0, 1); // its sky is where it stands: up is +z here
scene.add(sky);
scene.add(new THREE.AmbientLight(0xffffff, 0.25));
const sun = new THREE.DirectionalLight(0xffffff, 0.35);
sun.position.set(3, 2, 6);
scene.add(sun);

const views = new Views(renderer.domElement, P);
// kenaf-cameras' PTZ state, when kenaf-view names it (ptz_share.js)
const ptzShare = new PtzShare(views.ptz, () => (followed() ? followed().id : followId) + 1);
const overlay = new Overlay(P.hud);
const trialPanel = new TrialPanel(document.getElementById('trialbox'));
const meter = new Meter();

function resize() {
    renderer.setSize(window.innerWidth, window.innerHeight);
    views.resize(window.innerWidth, window.innerHeight);
}
window.addEventListener('resize', resize);
resize();

function followed() {
    return tracks.get(followId) || tracks.values().next().value || null;
}

// The robot the camera follows (the list, the keys, ?robot=): by id.
function follow(id) {
    if (!tracks.has(id))
        return;
    followId = id;
    followName = null;
    const q = new URLSearchParams(location.search);
    q.delete('follow');
    q.set('robot', tracks.get(id).name);
    history.replaceState(null, '', '?' + q.toString());
}

// ---- what the server says ----

function onHello(m) {
    ptzShare.setBase(typeof m.cameras === 'string' ? m.cameras : '');
    const ids = new Set();
    for (const r of Array.isArray(m.robots) ? m.robots : []) {
        if (!r || !Number.isInteger(r.id))
            continue;
        ids.add(r.id);
        const name = typeof r.name === 'string' && r.name ? r.name : `robot ${r.id}`;
        const t = tracks.get(r.id);
        if (t)
            t.name = name;
        else
            tracks.set(r.id, new RobotTrack(r.id, name));
        if (followName !== null && name === followName) {
            followId = r.id; // ?robot=NAME: kept until the robot has that name
            followName = null;
        }
    }
    for (const id of [...tracks.keys()])
        if (!ids.has(id))
            forget(id);
}

function forget(id) {
    const d = drawn.get(id);
    if (d) {
        scene.remove(d.model.root);
        d.model.dispose();
        d.trail.dispose(scene);
    }
    drawn.delete(id);
    tracks.delete(id);
}

function onMessage(m, arrival) {
    const t = Number.isInteger(m.robot) ? tracks.get(m.robot) : null;
    switch (m.type) {
    case 'hello': onHello(m); break;
    case 'world': if (t) t.setWorld(m.world); break;
    case 'states': // every robot's news since the last batch, applied in one go
        if (Array.isArray(m.states))
            for (const s of m.states)
                if (s && typeof s === 'object' && s.type === 'state')
                    onMessage(s, arrival);
        break;
    case 'state':
        if (t) {
            t.push(m, arrival);
            meter.arrived(t, arrival);
        }
        break;
    case 'trial':
        if (t)
            t.trial = m.trial && typeof m.trial === 'object' ? m.trial : null;
        break;
    case 'link':
        if (t) {
            t.linkUp = m.up === true;
            t.linkReason = typeof m.reason === 'string' ? m.reason : '';
        }
        break;
    default: break; // a newer server's message: not ours to read
    }
}

const link = new ViewLink(P.ws || defaultSocketUrl(location), {
    message: onMessage,
    open() {},
    close() {},
});

// ---- the scene follows the tracks ----

function syncTerrain() {
    // the followed robot's world, else any robot's that has one
    const order = [followed(), ...tracks.values()].filter(Boolean);
    const t = order.find(o => o.world) || null;
    const w = t ? t.world : null;
    const key = t ? t.terrainKey : 'none';
    if (key === terrainKey)
        return;
    if (terrain) {
        scene.remove(terrain.group);
        terrain.dispose();
    }
    terrain = buildTerrain(w ? w.terrain : null, w ? w.terrain_pose : undefined);
    scene.add(terrain.group);
    terrainKey = key;
}

function syncModel(t, index) {
    const robotDoc = t.world ? t.world.robot : null;
    const key = t.robotKey;
    let d = drawn.get(t.id);
    if (d && d.key === key)
        return d;
    if (d) {
        scene.remove(d.model.root);
        d.model.dispose();
    }
    const model = new KenafModel(robotDoc, index);
    model.root.visible = false;
    scene.add(model.root);
    const trail = d ? d.trail : new Trail(scene, index);
    d = { model, key, trail, index };
    drawn.set(t.id, d);
    return d;
}

let lastFrame = performance.now();
const poses = new Map();

function frame(now) {
    const start = performance.now();
    // a new resolution clears the canvas: set it only right before drawing
    if (renderScale.update(now, meter.fps(now)))
        renderer.setPixelRatio(basePixelRatio * renderScale.value);
    const dt = Math.max(0, (now - lastFrame) / 1000);
    lastFrame = now;
    syncTerrain();
    let i = 0;
    poses.clear();
    const shown = [];
    for (const t of tracks.values()) {
        const d = syncModel(t, i++);
        const pose = t.sample(performance.now());
        if (!pose) {
            d.model.root.visible = false;
            continue;
        }
        poses.set(t.id, pose);
        t.advanceBelts(pose.belt, dt);
        if (t.addTrail(pose.pos))
            d.trail.set(t.trail, d.model.geom.r, t.trailCut);
        shown.push([t, d, pose]);
    }
    const f = followed();
    // the followed robot and the nearest few in full, the rest as boxes
    // (fleet.js); the eye is where the camera was last frame
    detailed = pickDetailed(poses, f ? f.id : null, views.camera().position, P.detail);
    boxes.begin();
    for (const [t, d, pose] of shown) {
        const root = d.model.root;
        root.visible = detailed.has(t.id);
        // a trail each is a draw call each: in a fleet, only the robots in full
        d.trail.line.visible = trailOn && (root.visible || shown.length <= P.detail);
        if (!root.visible) {
            boxes.add(pose, d.model.geom, d.index);
            continue;
        }
        root.position.set(pose.pos[0], pose.pos[1], pose.pos[2]);
        root.quaternion.copy(pose.q);
        d.model.setFlippers(pose.flippers);
        d.model.setBeltTravel(t.travel[0], t.travel[1]);
    }
    boxes.end();
    const fd = f && drawn.get(f.id);
    views.update(f ? poses.get(f.id) || null : null, fd ? fd.model : null, dt);
    renderer.render(scene, views.camera());
    meter.rendered(tracks.values(), performance.now(), start);
    overlay.update(now, {
        robot: f, robots: [...tracks.values()], connected: link.connected,
        view: views.name, viewLabel: viewLabel(), ptz: views.ptz, fps: meter.fps(now),
        scale: renderScale.value,
        worldLabel: terrain ? terrain.label : '',
    });
    overlay.labelRobots([...tracks.values()].filter(t => poses.has(t.id)), project);
    trialPanel.update(f ? f.trial : null);
    robotList.update(now, [...tracks.values()], f ? f.id : null);
    requestAnimationFrame(frame);
}

const projV = new THREE.Vector3();
function project(t) {
    const p = poses.get(t.id);
    projV.set(p.pos[0], p.pos[1], p.pos[2] + 0.15).project(views.camera());
    return { x: (projV.x + 1) * 0.5 * window.innerWidth, y: (1 - projV.y) * 0.5 * window.innerHeight,
             visible: projV.z > -1 && projV.z < 1 };
}

function viewLabel() {
    const names = { chase: 'chase', top: 'top-down', orbit: 'free orbit', ptz: 'front PTZ camera',
                    bird: "bird's-eye camera" };
    return names[views.name];
}

let trailOn = P.trail;
const boxes = new FleetBoxes(scene);
const robotList = new RobotList(id => follow(id));
bindControls({
    views, overlay, VIEWS, ptzShare,
    nextRobot(step = 1) {
        const ids = [...tracks.keys()].sort((a, b) => a - b);
        if (ids.length)
            follow(ids[(ids.indexOf(followed().id) + step + ids.length) % ids.length]);
    },
    toggleTrail() { trailOn = !trailOn; },
});

if (P.report > 0)
    setInterval(() => link.report(meter.summary(performance.now())), 1000 * P.report);

// Read-only view of the page for tests and benches.
Object.defineProperty(window, 'kenafView', {
    value: Object.freeze({
        get frames() { return meter.frames; },
        get fps() { return meter.fps(performance.now()); },
        get latency() { return meter.latency(); },
        latencyLast(n) { return meter.latency(n); },
        get workMs() { return meter.workMs(); },
        get renderScale() { return renderScale.value; },
        get antialias() { return antialias; },
        get glRenderer() { return glName; },
        get connected() { return link.connected; },
        get connects() { return link.connects; },
        get badFrames() { return link.badFrames; },
        get view() { return views.name; },
        get ptz() { return { pan: views.ptz.pan, tilt: views.ptz.tilt, zoom: views.ptz.zoom }; },
        get ptzShared() {
            return { base: ptzShare.base, polls: ptzShare.polls, sent: ptzShare.sent,
                     errors: ptzShare.errors };
        },
        get terrain() { return terrain ? terrain.label : null; },
        // the boxes drawn of the terrain's parts (an apparatus's posts and walls)
        get terrainBoxes() { return terrain ? terrain.boxes : 0; },
        get following() { const f = followed(); return f ? f.id : null; },
        // robots drawn in full (the rest are instanced boxes) and the draw
        // calls of the last frame
        get detailed() { return [...detailed]; },
        get drawCalls() { return renderer.info.render.calls; },
        // the trial panel's lines as shown ('' while hidden)
        get trialText() {
            const b = document.getElementById('trialbox');
            return b.hidden || document.getElementById('hud').hidden ? ''
                : [...b.children].map(c => c.textContent).filter(Boolean).join('\n');
        },
        get robots() {
            return [...tracks.values()].map(t => ({
                id: t.id, name: t.name, linkUp: t.linkUp, states: t.states,
                world: t.world === undefined ? undefined : t.world !== null,
                trial: t.trial ? JSON.parse(JSON.stringify(t.trial)) : null,
                state: t.last ? JSON.parse(JSON.stringify(t.last, (k, v) => (k === 'q' ? undefined : v))) : null,
            }));
        },
    }),
});

requestAnimationFrame(frame);
