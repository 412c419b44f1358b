// A robot's trajectory trail: a line through the positions it was drawn
// at, a centimetre above the ground under its pulley axis. New points are
// appended to the line's buffer; only when the oldest are dropped is the
// whole buffer written again.
import * as THREE from '../three/build/three.module.js';

const TRAIL_COLOURS = [0x00a8d0, 0x00d0a0, 0x6080ff, 0x40c0ff, 0x00c8c8];
export const TRAIL_MAX = 4000; // points kept

export class Trail {
    constructor(scene, index) {
        this.pos = new Float32Array(TRAIL_MAX * 3);
        this.n = 0;
        this.cut = 0;
        const g = new THREE.BufferGeometry();
        this.attr = new THREE.BufferAttribute(this.pos, 3);
        g.setAttribute('position', this.attr);
        g.setDrawRange(0, 0);
        this.material = new THREE.LineBasicMaterial({ color: TRAIL_COLOURS[index % TRAIL_COLOURS.length] });
        this.line = new THREE.Line(g, this.material);
        this.line.frustumCulled = false;
        scene.add(this.line);
    }

    // points: [[x, y, z], ...] of the pulley axis (at most TRAIL_MAX); r:
    // pulley radius; cut: how often the track dropped its oldest points
    set(points, r, cut) {
        const from = cut === this.cut ? this.n : 0;
        const n = Math.min(points.length, TRAIL_MAX);
        for (let i = from; i < n; i++) {
            const p = points[i];
            this.pos[3 * i] = p[0];
            this.pos[3 * i + 1] = p[1];
            this.pos[3 * i + 2] = p[2] - r + 0.01;
        }
        this.attr.updateRange.offset = 3 * from;
        this.attr.updateRange.count = 3 * (n - from);
        this.attr.needsUpdate = true;
        this.line.geometry.setDrawRange(0, n);
        this.n = n;
        this.cut = cut;
    }

    dispose(scene) {
        scene.remove(this.line);
        this.line.geometry.dispose();
        this.material.dispose();
    }
}
