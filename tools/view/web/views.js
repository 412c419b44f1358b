// The five ways to look: chase (behind the robot, turning with it), top
// (straight down, north-up, following the robot or fixed), free orbit
// (mouse), and the robot's own cameras: the front pan-tilt-zoom camera and
// the bird's-eye camera on the mast (mounts.js).
import * as THREE from '../three/build/three.module.js';
import { OrbitControls } from '../three/examples/jsm/controls/OrbitControls.js';
import { CAMERA_MOUNTS } from './mounts.js';

const DEG = Math.PI / 180;
const Z_UP = new THREE.Vector3(0, 0, 1);
// a camera looks along its -z with +y up; the mounts look along +x with +z up
const MOUNT_TO_CAMERA = new THREE.Quaternion().setFromRotationMatrix(
    new THREE.Matrix4().makeBasis(new THREE.Vector3(0, -1, 0), Z_UP, new THREE.Vector3(-1, 0, 0)));

function vfovDeg(hfovDeg, aspect) {
    return 2 * Math.atan(Math.tan(0.5 * hfovDeg * DEG) / aspect) / DEG;
}

export class Views {
    constructor(dom, p) {
        this.name = p.view;
        this.aspect = 1;
        this.chase = new THREE.PerspectiveCamera(50, 1, 0.05, 200);
        this.chaseSet = { dist: p.dist, az: p.az * DEG, el: p.el * DEG };
        this.chaseYaw = null;
        this.top = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 500);
        this.top.up.set(0, 1, 0);
        this.topSet = { span: p.span, follow: p.follow, cx: p.cx, cy: p.cy };
        this.orbit = new THREE.PerspectiveCamera(50, 1, 0.05, 500);
        this.orbit.up.copy(Z_UP);
        this.orbitPlaced = false;
        this.orbitSet = { eye: p.eye, at: p.at };
        this.controls = new OrbitControls(this.orbit, dom);
        this.controls.enableDamping = false;
        this.ptzCam = new THREE.PerspectiveCamera(50, 1, 0.02, 300);
        this.birdCam = new THREE.PerspectiveCamera(50, 1, 0.05, 300);
        const m = CAMERA_MOUNTS.ptz;
        this.ptz = { pan: p.pan, tilt: p.tilt, zoom: p.zoom, limits: m };
        this.setView(p.view);
    }

    setView(name) {
        this.name = name;
        this.controls.enabled = name === 'orbit';
    }

    camera() {
        return { chase: this.chase, top: this.top, orbit: this.orbit, ptz: this.ptzCam,
                 bird: this.birdCam }[this.name];
    }

    // PTZ steps from the page: degrees, zoom factor; kept inside the limits.
    movePtz(dpan, dtilt, zoomFactor = 1) {
        const l = this.ptz.limits;
        const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
        this.ptz.pan = clamp(this.ptz.pan + dpan, -l.pan_max_deg, l.pan_max_deg);
        this.ptz.tilt = clamp(this.ptz.tilt + dtilt, l.tilt_min_deg, l.tilt_max_deg);
        this.ptz.zoom = clamp(this.ptz.zoom * zoomFactor, 1, l.zoom_max);
    }

    resize(w, h) {
        this.aspect = w / Math.max(1, h);
        for (const c of [this.chase, this.orbit, this.ptzCam, this.birdCam]) {
            c.aspect = this.aspect;
            c.updateProjectionMatrix();
        }
        this.topFrustum();
    }

    topFrustum() {
        const h = 0.5 * this.topSet.span, w = h * this.aspect;
        Object.assign(this.top, { left: -w, right: w, top: h, bottom: -h });
        this.top.updateProjectionMatrix();
    }

    // Places the current camera. pose: the followed robot's drawn pose (or
    // null), model: its KenafModel (or null), dt: seconds since last frame.
    update(pose, model, dt) {
        const at = pose ? new THREE.Vector3(pose.pos[0], pose.pos[1], pose.pos[2])
                        : new THREE.Vector3(0, 0, 0);
        if (model) {
            // the followed robot's file gives the head's limits
            this.ptz.limits = model.mounts.ptz;
            model.setPtz(this.ptz.pan * DEG, this.ptz.tilt * DEG);
        }
        const mounts = model ? model.mounts : CAMERA_MOUNTS;
        switch (this.name) {
        case 'chase': this.placeChase(at, pose, dt); break;
        case 'top': this.placeTop(at); break;
        case 'orbit': this.placeOrbit(at); break;
        case 'ptz': this.placeEye(this.ptzCam, model && model.ptzEye,
                                  mounts.ptz.hfov_deg / this.ptz.zoom); break;
        case 'bird': this.placeEye(this.birdCam, model && model.birdEye,
                                   mounts.bird.hfov_deg); break;
        }
    }

    placeChase(at, pose, dt) {
        // heading only: the camera stays level while the robot rolls and pitches
        let yaw = 0;
        if (pose) {
            const fwd = new THREE.Vector3(1, 0, 0).applyQuaternion(pose.q);
            yaw = Math.atan2(fwd.y, fwd.x);
        }
        if (this.chaseYaw === null || dt <= 0) {
            this.chaseYaw = yaw;
        } else {
            // follow turns over about 0.3 s so the picture does not jerk
            let d = yaw - this.chaseYaw;
            d = Math.atan2(Math.sin(d), Math.cos(d));
            this.chaseYaw += d * Math.min(1, dt / 0.3);
        }
        const s = this.chaseSet, a = this.chaseYaw + s.az;
        const target = at.clone().add(new THREE.Vector3(0, 0, 0.05));
        this.chase.position.set(target.x - s.dist * Math.cos(s.el) * Math.cos(a),
                                target.y - s.dist * Math.cos(s.el) * Math.sin(a),
                                target.z + s.dist * Math.sin(s.el));
        this.chase.up.copy(Z_UP);
        this.chase.lookAt(target);
    }

    placeTop(at) {
        const s = this.topSet;
        const x = s.follow ? at.x : s.cx, y = s.follow ? at.y : s.cy;
        // 10 m up: above any terrain part, well inside the fog's clear range
        this.top.position.set(x, y, at.z + 10);
        this.top.lookAt(x, y, at.z);
    }

    placeOrbit(at) {
        if (!this.orbitPlaced) {
            const s = this.orbitSet;
            const t = s.at ? new THREE.Vector3(...s.at) : at;
            const e = s.eye ? new THREE.Vector3(...s.eye) : t.clone().add(new THREE.Vector3(-1.6, -1.6, 1.2));
            this.orbit.position.copy(e);
            this.controls.target.copy(t);
            this.orbitPlaced = true;
        }
        this.controls.update();
    }

    placeEye(cam, eye, hfov) {
        if (eye) {
            eye.updateWorldMatrix(true, false);
            eye.getWorldPosition(cam.position);
            eye.getWorldQuaternion(cam.quaternion);
            cam.quaternion.multiply(MOUNT_TO_CAMERA);
        }
        const f = vfovDeg(hfov, this.aspect);
        if (Math.abs(cam.fov - f) > 1e-6) {
            cam.fov = f;
            cam.updateProjectionMatrix();
        }
    }
}
