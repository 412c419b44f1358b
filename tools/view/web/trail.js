// A robot's trajectory trail: a line through the positions it was drawn
// at, a centimetre above the ground under its pulley axis.
import * as THREE from '../three/build/three.module.js';

const TRAIL_COLOURS = [0x00a8d0, 0x00d0a0, 0x6080ff, 0x40c0ff, 0x00c8c8];
const MAX_POINTS = 4000;

export class Trail {
    constructor(scene, index) {
        this.pos = new Float32Array(MAX_POINTS * 3);
        const g = new THREE.BufferGeometry();
        this.attr = new THREE.BufferAttribute(this.pos, 3);
        g.setAttribute('position', this.attr);
        g.setDrawRange(0, 0);
        this.material = new THREE.LineBasicMaterial({ color: TRAIL_COLOURS[index % TRAIL_COLOURS.length] });
        this.line = new THREE.Line(g, this.material);
        this.line.frustumCulled = false;
        scene.add(this.line);
    }

    // points: [[x, y, z], ...] of the pulley axis; r: pulley radius
    set(points, r) {
        const n = Math.min(points.length, MAX_POINTS), first = points.length - n;
        for (let i = 0; i < n; i++) {
            const p = points[first + i];
            this.pos[3 * i] = p[0];
            this.pos[3 * i + 1] = p[1];
            this.pos[3 * i + 2] = p[2] - r + 0.01;
        }
        this.attr.needsUpdate = true;
        this.line.geometry.setDrawRange(0, n);
    }

    dispose(scene) {
        scene.remove(this.line);
        this.line.geometry.dispose();
        this.material.dispose();
    }
}
