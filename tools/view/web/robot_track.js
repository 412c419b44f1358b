// One robot as the page knows it: its last two state frames, the pose drawn
// between them, its link, belt travel and trajectory trail. Frames come at
// the STATUS rate; frames are drawn at the display's: between the last two
// states the pose is interpolated by their robot times, advancing with the
// real time passed since the newer one arrived, so a new state starts to
// show on the next frame and motion stays smooth between states.
import * as THREE from '../three/build/three.module.js';
import { TRAIL_MAX } from './trail.js';

const TRAIL_STEP_M = 0.02;    // a new point once the robot moved 2 cm

function finite(v, d = 0) {
    return typeof v === 'number' && Number.isFinite(v) ? v : d;
}

function vec(a, n) {
    const out = new Array(n).fill(0);
    if (Array.isArray(a))
        for (let i = 0; i < n; i++)
            out[i] = finite(a[i]);
    return out;
}

// A state frame checked field by field: missing or odd values read 0.
export function cleanState(m) {
    const f = m.flags && typeof m.flags === 'object' ? m.flags : {};
    const flags = {};
    for (const k of ['ESTOP', 'WATCHDOG', 'STALE', 'BACKEND_UP', 'SIMULATED', 'CLAMPED'])
        flags[k] = f[k] === true;
    return {
        t: finite(m.t), pos: vec(m.pos, 3), rpy: vec(m.rpy, 3), belt: vec(m.belt, 2),
        flippers: vec(m.flippers, 4), torque: vec(m.torque, 4), battery: finite(m.battery),
        flags, seq: finite(m.seq, -1), srv_us: finite(m.srv_us, NaN),
    };
}

function quatOf(rpy) {
    // KRP/1 attitude: R = Rz(yaw) Ry(pitch) Rx(roll), which three.js calls 'ZYX'
    return new THREE.Quaternion().setFromEuler(new THREE.Euler(rpy[0], rpy[1], rpy[2], 'ZYX'));
}

export class RobotTrack {
    constructor(id, name) {
        this.id = id;
        this.name = name;
        this.prev = null;
        this.last = null;
        this.lastArrival = 0;
        this.linkUp = true;
        this.linkReason = '';
        this.world = undefined;     // world document; undefined: not heard yet
        this.trial = null;          // the trial it runs (kenaf-view's "trial"), or null
        this.robotKey = 'none';     // what the drawn model and terrain were built from
        this.terrainKey = 'none';
        this.states = 0;
        this.travel = [0, 0];
        this.shown = null;          // what the last frame drew
        this.pendingLatency = null; // a state not yet drawn: {srvMs, arrival}
        this.trail = [];
        this.trailCut = 0;          // times the oldest points were dropped
    }

    // The world document as a world message brings it (null: the robot
    // describes none). The keys tell the scene when to rebuild.
    setWorld(w) {
        this.world = w && typeof w === 'object' ? w : null;
        const r = this.world ? this.world.robot : null;
        this.robotKey = JSON.stringify(r && typeof r === 'object' ? r : null);
        this.terrainKey = this.world ? JSON.stringify([this.world.terrain, this.world.terrain_pose,
                                                       this.world.generation]) : 'none';
    }

    push(raw, arrival) {
        const s = cleanState(raw);
        s.q = quatOf(s.rpy);
        // a robot clock that went back: the simulator restarted, start over
        if (this.last && s.t < this.last.t)
            this.prev = null;
        else
            this.prev = this.last;
        this.last = s;
        this.lastArrival = arrival;
        this.states++;
        this.pendingLatency = { srvUs: s.srv_us, arrival };
    }

    // The pose to draw at page time `now` (ms), or null before any state.
    sample(now) {
        const a = this.prev, b = this.last;
        if (!b)
            return null;
        let k = 1;
        if (a && b.t > a.t)
            k = Math.min(1, Math.max(0, (now - this.lastArrival) / (1000 * (b.t - a.t))));
        const A = a || b;
        const lerp = (x, y) => x + (y - x) * k;
        const out = {
            t: lerp(A.t, b.t),
            pos: A.pos.map((v, i) => lerp(v, b.pos[i])),
            q: A.q.clone().slerp(b.q, k),
            flippers: A.flippers.map((v, i) => lerp(v, b.flippers[i])),
            belt: A.belt.map((v, i) => lerp(v, b.belt[i])),
            k,
        };
        return out;
    }

    // Belt travel integrates the drawn belt speeds over real time.
    advanceBelts(belt, dt) {
        if (dt > 0 && dt < 0.5)
            for (let s = 0; s < 2; s++)
                this.travel[s] += belt[s] * dt;
    }

    // Adds the drawn position to the trail when it moved far enough;
    // returns true when the trail changed.
    addTrail(pos) {
        const t = this.trail, p = t[t.length - 1];
        if (p && Math.hypot(pos[0] - p[0], pos[1] - p[1], pos[2] - p[2]) < TRAIL_STEP_M)
            return false;
        t.push(pos.slice());
        if (t.length > TRAIL_MAX) {
            // the oldest tenth at once, so the line is rewritten rarely
            t.splice(0, TRAIL_MAX / 10);
            this.trailCut++;
        }
        return true;
    }
}
