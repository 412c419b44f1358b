// The Kenaf drawn to scale from the engine's robot file (the "robot" of the
// world description): the chassis between the two main tracks, the four
// flippers on their pivots, the front pan-tilt-zoom camera and the mast
// with the bird's-eye camera. Frame: the robot's body frame as STATUS
// reports it (origin on the main pulley axis, x forward, y left, z up).
import * as THREE from '../three/build/three.module.js';
import { Belt } from './belt.js';
import { mergeGeometries } from './merge.js';
import { cameraMounts } from './mounts.js';

// The shipped config/robots/kenaf.json, for a world without a robot file
// (USARSim, Gazebo, or a daemon that cannot describe its world).
const DEFAULT = {
    main_track: { pulley_x_m: 0.17, radius_m: 0.08, width_m: 0.07, y_m: 0.115 },
    flipper: { root_radius_m: 0.08, tip_radius_m: 0.04, length_m: 0.195, width_m: 0.05,
               y_m: 0.175 },
    chassis: { size_m: [0.4, 0.16, 0.12], clearance_m: 0.03 },
};

// Robot colours, one per robot (the first is the one tests look for);
// saturated hues the terrain and the overlay never use.
export const BODY_COLOURS = [0xff6a00, 0xe0006a, 0x8a2be2, 0x00a86b, 0x1f5fff];
export const FLIPPER_COLOUR = 0xffcc00;
const TRACK_PLATE_COLOUR = '#3a3a3a';

// A geometry placed in the body frame: at (x, y, z), turned about x by rx
// and about z by rz (the cylinders of three.js lie along y).
function placed(geometry, x, y, z, rx = 0, rz = 0) {
    const m = new THREE.Matrix4().compose(new THREE.Vector3(x, y, z),
        new THREE.Quaternion().setFromEuler(new THREE.Euler(rx, 0, rz)), new THREE.Vector3(1, 1, 1));
    return { geometry, matrix: m };
}

function num(obj, key, def, lo, hi) {
    const v = obj && obj[key];
    return typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi ? v : def;
}

// Geometry in metres from a robot document, each value checked and
// defaulted on its own so a partial or odd file still draws.
export function robotGeometry(doc) {
    const d = doc && typeof doc === 'object' ? doc : {};
    const mt = d.main_track || {}, fl = d.flipper || {}, ch = d.chassis || {};
    const D = DEFAULT;
    const size = Array.isArray(ch.size_m) && ch.size_m.length === 3 &&
        ch.size_m.every(v => typeof v === 'number' && v > 0 && v < 5) ? ch.size_m
        : D.chassis.size_m;
    return {
        px: num(mt, 'pulley_x_m', D.main_track.pulley_x_m, 0.01, 5),
        r: num(mt, 'radius_m', D.main_track.radius_m, 0.005, 2),
        tw: num(mt, 'width_m', D.main_track.width_m, 0.005, 2),
        ty: num(mt, 'y_m', D.main_track.y_m, 0.01, 5),
        fr1: num(fl, 'root_radius_m', D.flipper.root_radius_m, 0.005, 2),
        fr2: num(fl, 'tip_radius_m', D.flipper.tip_radius_m, 0.005, 2),
        fl: num(fl, 'length_m', D.flipper.length_m, 0.01, 5),
        fw: num(fl, 'width_m', D.flipper.width_m, 0.005, 2),
        fy: num(fl, 'y_m', D.flipper.y_m, 0.01, 5),
        cs: size,
        clear: num(ch, 'clearance_m', D.chassis.clearance_m, 0, 2),
    };
}

const FL = 0, FR = 1, RL = 2, RR = 3;

export class KenafModel {
    constructor(robotDoc, colourIndex) {
        const g = this.geom = robotGeometry(robotDoc);
        this.mounts = cameraMounts(robotDoc);
        this.root = new THREE.Group();
        this.root.name = 'kenaf';
        const body = new THREE.MeshLambertMaterial({
            color: BODY_COLOURS[colourIndex % BODY_COLOURS.length] });
        const dark = new THREE.MeshLambertMaterial({ color: 0x3a3a3a });
        const metal = new THREE.MeshLambertMaterial({ color: 0x8c8c8c });
        this.materials = [body, dark, metal];
        const flipColour = '#' + FLIPPER_COLOUR.toString(16).padStart(6, '0');

        // chassis: between the tracks, its floor `clearance` above the ground
        const cs = g.cs;
        const chassis = new THREE.Mesh(new THREE.BoxBufferGeometry(cs[0], cs[1], cs[2]), body);
        chassis.position.z = -g.r + g.clear + 0.5 * cs[2];
        this.root.add(chassis);
        this.chassisTop = chassis.position.z + 0.5 * cs[2];

        // main tracks: belt from the rear pulley (circle 1) to the front one
        this.tracks = [];
        for (const side of [0, 1]) { // 0 left (+y), 1 right
            const b = new Belt(g.r, g.r, 2 * g.px, g.tw, TRACK_PLATE_COLOUR);
            b.mesh.position.set(-g.px, side ? -g.ty : g.ty, 0);
            this.root.add(b.mesh);
            this.tracks.push(b);
        }

        // flippers: a pivot group on the pulley axis, turned to point
        // outward (the rear ones half a turn about z), then swung by the angle
        this.flippers = [];
        for (const k of [FL, FR, RL, RR]) {
            const front = k === FL || k === FR, left = k === FL || k === RL;
            const pivot = new THREE.Group();
            pivot.position.set(front ? g.px : -g.px, left ? g.fy : -g.fy, 0);
            if (!front)
                pivot.rotation.z = Math.PI;
            const swing = new THREE.Group();
            const b = new Belt(g.fr1, g.fr2, g.fl, g.fw, flipColour);
            swing.add(b.mesh);
            pivot.add(swing);
            this.root.add(pivot);
            // the rear belts run backwards in their own frame
            this.flippers.push({ swing, belt: b, side: left ? 0 : 1, sign: front ? 1 : -1 });
        }
        // the metal that never moves (hub axles, PTZ post, mast) is one mesh
        const fixedMetal = [];
        const hub = new THREE.CylinderBufferGeometry(0.3 * g.r, 0.3 * g.r,
                                                     2 * g.fy + g.fw + 0.004, 16);
        for (const x of [-g.px, g.px])
            fixedMetal.push(placed(hub, x, 0, 0)); // one axle through both sides
        this.buildCameras(dark, metal, fixedMetal);
        const fixed = mergeGeometries(fixedMetal);
        fixedMetal.forEach(p => p.geometry.dispose());
        this.root.add(new THREE.Mesh(fixed, metal));
        this.setFlippers([0, 0, 0, 0]);
    }

    // The PTZ camera head at the front of the chassis and the bird's-eye
    // camera on its mast; each has an `eye` object the views look through.
    buildCameras(dark, metal, fixedMetal) {
        const m = this.mounts, top = this.chassisTop;
        // PTZ: base on the chassis, pan about z, tilt about y
        this.ptzPan = new THREE.Group();
        this.ptzPan.position.set(m.ptz.x, m.ptz.y, top + m.ptz.above_chassis);
        this.ptzTilt = new THREE.Group();
        this.ptzPan.add(this.ptzTilt);
        const head = new THREE.Mesh(new THREE.BoxBufferGeometry(0.06, 0.07, 0.05), dark);
        head.position.x = -0.02;
        this.ptzTilt.add(head);
        const lens = new THREE.Mesh(new THREE.CylinderBufferGeometry(0.018, 0.018, 0.02, 12), metal);
        lens.rotation.z = Math.PI / 2;
        lens.position.x = 0.015;
        this.ptzTilt.add(lens);
        fixedMetal.push(placed(new THREE.CylinderBufferGeometry(0.012, 0.012, m.ptz.above_chassis, 8),
                               m.ptz.x, m.ptz.y, top + 0.5 * m.ptz.above_chassis, Math.PI / 2));
        this.root.add(this.ptzPan);
        this.ptzEye = new THREE.Object3D();
        this.ptzEye.position.x = 0.026; // in front of the lens
        this.ptzTilt.add(this.ptzEye);

        // bird's-eye: a mast from the chassis top to the camera height
        const ground = -this.geom.r;
        const camZ = ground + m.bird.height_m;
        const mastLen = Math.max(0.05, camZ - top);
        fixedMetal.push(placed(new THREE.CylinderBufferGeometry(0.008, 0.01, mastLen, 8),
                               m.bird.x, m.bird.y, top + 0.5 * mastLen, Math.PI / 2));
        this.birdMount = new THREE.Group();
        this.birdMount.position.set(m.bird.x, m.bird.y, camZ);
        this.birdMount.rotation.y = -m.bird.tilt_deg * Math.PI / 180; // + about y lowers +x
        const box = new THREE.Mesh(new THREE.BoxBufferGeometry(0.05, 0.05, 0.04), dark);
        box.position.x = -0.02;
        this.birdMount.add(box);
        this.birdEye = new THREE.Object3D();
        this.birdEye.position.x = 0.01;
        this.birdMount.add(this.birdEye);
        this.root.add(this.birdMount);
    }

    // pan, tilt in radians (pan + turns left like yaw, tilt + looks up)
    setPtz(pan, tilt) {
        this.ptzPan.rotation.z = pan;
        this.ptzTilt.rotation.y = -tilt;
    }

    // angles in radians, KRP/1 order FL FR RL RR, 0 = in line, + raises the tip
    setFlippers(a) {
        // a rotation about +y by -angle raises the tip of a flipper pointing +x
        this.flippers.forEach((f, k) => { f.swing.rotation.y = -(a[k] || 0); });
    }

    // belt travel per side (left, right) in metres since the start
    setBeltTravel(left, right) {
        const t = [left, right];
        this.tracks.forEach((b, s) => b.setTravel(t[s]));
        this.flippers.forEach(f => f.belt.setTravel(f.sign * t[f.side]));
    }

    dispose() {
        this.tracks.forEach(b => b.dispose());
        this.flippers.forEach(f => f.belt.dispose());
        this.root.traverse(o => o.geometry && o.geometry.dispose());
        this.materials.forEach(m => m.dispose());
    }
}
