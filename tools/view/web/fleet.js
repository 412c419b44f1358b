// Many robots at once. A full Kenaf (robot_model.js) is a dozen meshes, so
// 32 of them are hundreds of draw calls, which software WebGL cannot draw
// at 30 frames/s. Only the robots that matter are drawn in full: the
// followed one and the few nearest the eye (pickDetailed); every other
// robot is simple boxes (chassis, two tracks, four flippers at their
// angles) in a handful of instanced meshes, one draw call per mesh
// whatever the number of robots: the chassis per body colour (three.js
// r111 has no per-instance colour), the tracks, the flippers.
import * as THREE from '../three/build/three.module.js';
import { BODY_COLOURS, FLIPPER_COLOUR } from './robot_model.js';

export const DETAIL_MAX = 4; // robots drawn in full at once, the followed one included (?detail=)
export const DETAIL_M = 8;   // ... and only within this distance of the eye

// The ids of the robots drawn in full: the followed one, then the nearest
// to the eye within DETAIL_M, DETAIL_MAX in all. poses: id -> pose.
export function pickDetailed(poses, followId, eye, max = DETAIL_MAX, within = DETAIL_M) {
    const out = new Set();
    if (poses.has(followId))
        out.add(followId);
    const near = [];
    for (const [id, p] of poses) {
        if (id === followId)
            continue;
        const d = Math.hypot(p.pos[0] - eye.x, p.pos[1] - eye.y, p.pos[2] - eye.z);
        if (d <= within)
            near.push([d, id]);
    }
    near.sort((a, b) => a[0] - b[0]);
    for (const [, id] of near) {
        if (out.size >= max)
            break;
        out.add(id);
    }
    return out;
}

function instanced(geometry, colour, count) {
    const m = new THREE.InstancedMesh(geometry, new THREE.MeshLambertMaterial({ color: colour }),
                                      count);
    m.count = 0;
    // the instances are all over the world: the geometry's own bounds say nothing
    m.frustumCulled = false;
    return m;
}

const FL = 0, FR = 1, RL = 2, RR = 3;

export class FleetBoxes {
    constructor(scene, capacity = 64) {
        this.capacity = capacity;
        // a box each: three.js r111 binds a mesh's instance matrices only
        // when the geometry or the program changes from the last draw, so
        // meshes sharing both would all be drawn with the first one's
        const box = () => new THREE.BoxBufferGeometry(1, 1, 1);
        this.chassis = BODY_COLOURS.map(c => instanced(box(), c, capacity));
        this.tracks = instanced(box(), 0x3a3a3a, 2 * capacity);
        this.flippers = instanced(box(), FLIPPER_COLOUR, 4 * capacity);
        this.meshes = [...this.chassis, this.tracks, this.flippers];
        this.group = new THREE.Group();
        this.meshes.forEach(m => this.group.add(m));
        scene.add(this.group);
        this.robot = new THREE.Matrix4();
        this.part = new THREE.Matrix4();
        this.tmp = new THREE.Matrix4();
        this.v = new THREE.Vector3();
        this.s = new THREE.Vector3();
        this.q = new THREE.Quaternion();
        this.one = new THREE.Vector3(1, 1, 1);
        this.noTurn = new THREE.Quaternion();
        this.zTurn = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 0, 1), Math.PI);
        this.yAxis = new THREE.Vector3(0, 1, 0);
        this.flip = new THREE.Matrix4();
    }

    begin() {
        this.meshes.forEach(m => { m.count = 0; });
    }

    // one part: a box of size (sx, sy, sz) centred at (x, y, z) in the
    // frame `frame` (body frame, or a flipper's)
    put(mesh, frame, x, y, z, sx, sy, sz) {
        if (mesh.count >= mesh.instanceMatrix.count)
            return;
        this.part.compose(this.v.set(x, y, z), this.noTurn, this.s.set(sx, sy, sz));
        this.tmp.multiplyMatrices(frame, this.part);
        mesh.setMatrixAt(mesh.count++, this.tmp);
    }

    // A robot as boxes: pose {pos, q, flippers}, g: robotGeometry, colour index
    add(pose, g, colourIndex) {
        const R = this.robot.compose(this.v.set(pose.pos[0], pose.pos[1], pose.pos[2]), pose.q,
                                     this.one);
        const cs = g.cs;
        this.put(this.chassis[colourIndex % this.chassis.length], R, 0, 0,
                 -g.r + g.clear + 0.5 * cs[2], cs[0], cs[1], cs[2]);
        for (const y of [g.ty, -g.ty])
            this.put(this.tracks, R, 0, y, 0, 2 * g.px + 2 * g.r, g.tw, 2 * g.r);
        const flip = this.flip;
        for (const k of [FL, FR, RL, RR]) {
            const front = k === FL || k === FR, left = k === FL || k === RL;
            // the pivot on the pulley axis, rear ones turned half round,
            // swung by the angle (+ raises the tip), like robot_model.js
            this.q.setFromAxisAngle(this.yAxis, -(pose.flippers[k] || 0));
            if (!front)
                this.q.premultiply(this.zTurn);
            flip.compose(this.s.set(front ? g.px : -g.px, left ? g.fy : -g.fy, 0), this.q,
                         this.one);
            flip.premultiply(R);
            this.put(this.flippers, flip, 0.5 * g.fl, 0, 0, g.fl + g.fr2, g.fw, g.fr1 + g.fr2);
        }
    }

    end() {
        this.meshes.forEach(m => { m.instanceMatrix.needsUpdate = true; });
    }

    // draw calls these meshes take this frame
    drawCalls() {
        return this.meshes.filter(m => m.count > 0).length;
    }

    dispose(scene) {
        scene.remove(this.group);
        this.meshes.forEach(m => {
            m.geometry.dispose();
            m.material.dispose();
        });
    }
}
