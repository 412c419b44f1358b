// Track belts: the outline of a belt around two pulleys of different radii
// (the main track has equal ones, a flipper a large root and a small tip),
// a band around it whose tread marks move with the belt, and the flat side
// plates that close it, all one mesh on one small texture: its upper half
// the tread (scrolled along the belt), its lower half the plates' colour.
// Shared by the main tracks and the flippers.
import * as THREE from '../three/build/three.module.js';
import { mergeGeometries } from './merge.js';

const TREAD_PITCH_M = 0.04; // one grouser every 4 cm (drawn, not measured)

// The outline in a plane (u along the belt, w up): circle 1 of radius r1 at
// u = 0, circle 2 of radius r2 at u = len, joined by their outer tangents.
// Points run the way the belt moves when it drives forward: along the top
// from circle 1 to circle 2, down around circle 2, back along the bottom,
// up around circle 1. Each point has its outward normal and its distance
// along the belt (s).
export function beltOutline(r1, r2, len, arcSteps = 14) {
    const sa = (r1 - r2) / len, ca = Math.sqrt(Math.max(0, 1 - sa * sa));
    const phi = Math.atan2(ca, sa); // angle of the top tangent point
    const pts = [];
    let s = 0, last = null;
    const add = (u, w, nu, nw) => {
        if (last)
            s += Math.hypot(u - last[0], w - last[1]);
        last = [u, w];
        pts.push({ u, w, nu, nw, s });
    };
    const arc = (cu, r, a0, a1) => {
        for (let i = 0; i <= arcSteps; i++) {
            const a = a0 + (a1 - a0) * i / arcSteps;
            add(cu + r * Math.cos(a), r * Math.sin(a), Math.cos(a), Math.sin(a));
        }
    };
    arc(len, r2, phi, -phi);                 // top tangent end, round the far pulley
    arc(0, r1, -phi, -2 * Math.PI + phi);    // bottom tangent, round the near pulley
    // close the loop: back to the first point (its texture coordinate wraps)
    const p0 = pts[0];
    add(p0.u, p0.w, p0.nu, p0.nw);
    return { points: pts, length: s };
}

// Upper half: dark rubber with lighter grousers, repeating along u; lower
// half: the side plates' colour. No mipmaps: they would blend the halves.
const TREAD_V = 0.75, PLATE_V = 0.25;
function beltTexture(plateColour) {
    const c = document.createElement('canvas');
    c.width = 32;
    c.height = 16;
    const g = c.getContext('2d');
    g.fillStyle = '#1c1c1c';
    g.fillRect(0, 0, 32, 8);
    g.fillStyle = '#6a6a6a';
    g.fillRect(0, 0, 9, 8);
    g.fillStyle = plateColour;
    g.fillRect(0, 8, 32, 8);
    const t = new THREE.CanvasTexture(c);
    t.wrapS = THREE.RepeatWrapping;
    t.wrapT = THREE.ClampToEdgeWrapping;
    t.magFilter = THREE.NearestFilter;
    t.minFilter = THREE.LinearFilter;
    t.generateMipmaps = false;
    return t;
}

// The band: a strip around the outline, `width` wide across (y), with the
// tread texture repeating a whole number of times along it.
function bandGeometry(outline, width) {
    const n = outline.points.length;
    const reps = Math.max(1, Math.round(outline.length / TREAD_PITCH_M));
    const pos = new Float32Array(n * 2 * 3), nor = new Float32Array(n * 2 * 3);
    const uv = new Float32Array(n * 2 * 2), idx = [];
    outline.points.forEach((p, i) => {
        for (let k = 0; k < 2; k++) {
            const v = 2 * i + k;
            pos.set([p.u, (k ? 0.5 : -0.5) * width, p.w], 3 * v);
            nor.set([p.nu, 0, p.nw], 3 * v);
            uv.set([reps * p.s / outline.length, TREAD_V], 2 * v);
        }
        if (i + 1 < n) {
            const a = 2 * i;
            idx.push(a, a + 2, a + 1, a + 1, a + 2, a + 3);
        }
    });
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    g.setAttribute('normal', new THREE.BufferAttribute(nor, 3));
    g.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
    g.setIndex(idx);
    return { geometry: g, reps };
}

// The two side plates: the outline as a flat shape in the u-w plane at
// y = -y0 and y = +y0, in one geometry (one draw call for both).
function platesGeometry(outline, y0) {
    const shape = new THREE.Shape(outline.points.map(p => new THREE.Vector2(p.u, p.w)));
    const one = new THREE.ShapeBufferGeometry(shape);
    one.rotateX(Math.PI / 2); // shape y -> z
    const pos = one.getAttribute('position').array, nor = one.getAttribute('normal').array;
    const idx = one.getIndex().array, n = pos.length / 3;
    const P = new Float32Array(2 * pos.length), N = new Float32Array(2 * nor.length);
    const I = new Uint16Array(2 * idx.length); // a plate has a few dozen points
    for (let k = 0; k < 2; k++) {
        for (let i = 0; i < n; i++) {
            P.set([pos[3 * i], k ? y0 : -y0, pos[3 * i + 2]], 3 * (k * n + i));
            N.set([0, k ? 1 : -1, 0], 3 * (k * n + i));
        }
        for (let i = 0; i < idx.length; i++)
            I[k * idx.length + i] = idx[i] + k * n;
    }
    one.dispose();
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(P, 3));
    g.setAttribute('normal', new THREE.BufferAttribute(N, 3));
    g.setIndex(new THREE.BufferAttribute(I, 1));
    return g;
}

// One belt with its two side plates, in the frame of circle 1 (u = x,
// across = y, w = z), as `mesh`. setTravel(m) moves the tread marks by m
// metres along the belt's direction of motion.
export class Belt {
    constructor(r1, r2, len, width, plateColour) {
        this.outline = beltOutline(r1, r2, len);
        this.texture = beltTexture(plateColour);
        const band = bandGeometry(this.outline, width);
        this.reps = band.reps;
        const plates = platesGeometry(this.outline, 0.5 * width - 0.002);
        this.geometry = mergeGeometries([{ geometry: band.geometry },
                                         { geometry: plates, uv: [0, PLATE_V] }]);
        band.geometry.dispose();
        plates.dispose();
        this.material = new THREE.MeshLambertMaterial({ map: this.texture, side: THREE.DoubleSide });
        this.mesh = new THREE.Mesh(this.geometry, this.material);
    }

    setTravel(m) {
        // the pattern at distance s shows what was at s - m
        const t = -this.reps * m / this.outline.length;
        this.texture.offset.x = t - Math.floor(t);
    }

    dispose() {
        this.geometry.dispose();
        this.material.dispose();
        this.texture.dispose();
    }
}
