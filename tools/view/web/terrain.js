// The terrain the engine runs, drawn from the terrain of the world
// description: the primitives the engine collides with ("parts": planes,
// boxes, one heightfield), or, for a document without them, the same parts
// built here from the terrain file the way engine/terrain.c builds them
// (same defaults); then the pose (the file's "pose" [x, y, yaw deg], then
// the world's "terrain_pose"). Without a terrain: a ground grid at z = 0.
import * as THREE from '../three/build/three.module.js';

const DEG = Math.PI / 180;
const PLANE_SIZE_M = 80;

// Defaults of engine/terrain.c for keys a file leaves out.
const DEFAULTS = { height: 0.1, width: 0.3, rise: 0.17, run: 0.29, count: 5, angle_deg: 0,
                   edge_x: 0, length: 3.0, span_y: 3.0, depth: 0.5, landing: 2.0,
                   cell_m: 0.05, scale: 1.0 };
const TYPES = ['flat', 'step', 'trench', 'stairs', 'ramp', 'pallet', 'heightfield'];

function param(doc, key) {
    const v = doc[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : DEFAULTS[key];
}

function box(parts, x0, x1, y0, y1, z0, z1) {
    parts.push({ kind: 'box', c: [0.5 * (x0 + x1), 0.5 * (y0 + y1), 0.5 * (z0 + z1)],
                 half: [0.5 * (x1 - x0), 0.5 * (y1 - y0), 0.5 * (z1 - z0)], pitch: 0, yaw: 0 });
}

function palletParts(parts, x0) {
    // EUR pallet crossed along its 800 mm side (engine/terrain.c build_pallet)
    const L = 0.8, W = 1.2, hy = 0.5 * W;
    const tb = [0.145, 0.100, 0.145, 0.100, 0.145], gap = (L - 0.635) / 4.0;
    let x = x0;
    for (const w of tb) {
        box(parts, x, x + w, -hy, hy, 0.122, 0.144);
        x += w + gap;
    }
    const sy = [-hy + 0.0725, 0, hy - 0.0725];
    for (const y of sy)
        box(parts, x0, x0 + L, y - 0.0725, y + 0.0725, 0.100, 0.122);
    const bx = [x0 + 0.0725, x0 + 0.5 * L, x0 + L - 0.0725];
    for (const xb of bx)
        for (const y of sy)
            box(parts, xb - 0.0725, xb + 0.0725, y - 0.0725, y + 0.0725, 0.022, 0.100);
    for (const xb of bx)
        box(parts, xb - 0.0725, xb + 0.0725, -hy, hy, 0, 0.022);
}

// The parts a terrain document describes, in terrain coordinates (before
// the pose): its "parts" when they are all well formed, else built from its
// type and parameters; null when neither works.
export function terrainParts(doc) {
    return givenParts(doc) || builtParts(doc);
}

function triple(a, n) {
    return Array.isArray(a) && a.length === n && a.every(v => typeof v === 'number' && Number.isFinite(v));
}

function givenParts(doc) {
    if (!Array.isArray(doc.parts) || doc.parts.length === 0)
        return null;
    const out = [];
    for (const p of doc.parts) {
        if (!p || typeof p !== 'object')
            return null;
        if (p.kind === 'plane' && triple(p.c, 3) && triple(p.n, 3))
            out.push({ kind: 'plane', c: p.c, n: p.n });
        else if (p.kind === 'box' && triple(p.c, 3) && triple(p.half, 3))
            out.push({ kind: 'box', c: p.c, half: p.half, pitch: Number(p.pitch) || 0,
                       yaw: Number(p.yaw) || 0 });
        else if (p.kind === 'heightfield' && heightsOf(doc))
            out.push({ kind: 'hfield' });
        else if (p.kind !== 'heightfield')
            return null;
    }
    return out;
}

function builtParts(doc) {
    const type = doc.type;
    if (!TYPES.includes(type))
        return null;
    const p = k => param(doc, k);
    const e = p('edge_x'), hy = 0.5 * p('span_y');
    const parts = [];
    // a plane through (0, 0, z) whose tilt raises +x
    const plane = (z, tilt) => parts.push({ kind: 'plane', c: [0, 0, z],
                                            n: [-Math.sin(tilt), 0, Math.cos(tilt)] });
    switch (type) {
    case 'flat':
        plane(0, p('angle_deg') * DEG);
        break;
    case 'step':
        plane(0, 0);
        box(parts, e, e + p('length'), -hy, hy, -0.1, p('height'));
        break;
    case 'trench': {
        const d = p('depth'), w = p('width'), l = p('length');
        plane(-d, 0);
        box(parts, e - l, e, -hy, hy, -d - 0.1, 0);
        box(parts, e + w, e + w + l, -hy, hy, -d - 0.1, 0);
        break;
    }
    case 'stairs': {
        const n = Math.max(1, Math.min(20, Math.round(p('count'))));
        const end = e + (n - 1) * p('run') + p('landing');
        plane(0, 0);
        for (let i = 0; i < n; i++)
            box(parts, e + i * p('run'), end, -hy, hy, i * p('rise'), (i + 1) * p('rise'));
        break;
    }
    case 'ramp': {
        const th = 0.2, a = p('angle_deg') * DEG, len = p('length');
        const ca = Math.cos(a), sa = Math.sin(a), top = len * sa, xe = e + len * ca;
        plane(0, 0);
        parts.push({ kind: 'box', half: [0.5 * len, hy, 0.5 * th], pitch: -a, yaw: 0,
                     c: [e + 0.5 * len * ca + 0.5 * th * sa, 0, 0.5 * top - 0.5 * th * ca] });
        box(parts, xe, xe + p('landing'), -hy, hy, top - th, top);
        break;
    }
    case 'pallet':
        plane(0, 0);
        palletParts(parts, e);
        break;
    case 'heightfield':
        plane(0, 0);
        if (heightsOf(doc))
            parts.push({ kind: 'hfield' });
        break;
    }
    return parts;
}

// The inlined samples {"nx","ny","dx","dy","z"} (z[j * nx + i], row j along
// +y, the first row at -y), or null when they do not add up.
function heightsOf(doc) {
    const h = doc.heights;
    if (!h || !Array.isArray(h.z))
        return null;
    const nx = h.nx, ny = h.ny;
    if (!Number.isInteger(nx) || !Number.isInteger(ny) || nx < 2 || ny < 2 ||
        nx > 4096 || ny > 4096 || h.z.length !== nx * ny)
        return null;
    const cell = param(doc, 'cell_m');
    const dx = typeof h.dx === 'number' && h.dx > 0 ? h.dx : cell;
    const dy = typeof h.dy === 'number' && h.dy > 0 ? h.dy : cell;
    return { nx, ny, dx, dy, z: h.z };
}

// A repeating texture of one cell: a fill with lines on two of its borders,
// so the tiles show distance and motion.
function cellTexture(px, fill, line, linePx) {
    const c = document.createElement('canvas');
    c.width = c.height = px;
    const g = c.getContext('2d');
    g.fillStyle = fill;
    g.fillRect(0, 0, px, px);
    g.fillStyle = line;
    g.fillRect(0, 0, px, linePx);
    g.fillRect(0, 0, linePx, px);
    const t = new THREE.CanvasTexture(c);
    t.wrapS = t.wrapT = THREE.RepeatWrapping;
    return t;
}

// A repeating 1 m grid for the ground planes, lines on the cell borders.
function gridTexture() {
    const t = cellTexture(64, '#98a398', '#6f7a70', 2);
    t.repeat.set(PLANE_SIZE_M, PLANE_SIZE_M);
    return t;
}

// Obstacle faces: light concrete in 0.25 m slabs, so flat tops and faces
// still show distance and motion.
function slabTexture() {
    return cellTexture(32, '#b4b4ac', '#8e8e88', 1);
}

// Texture coordinates in units of `tile` metres along the two axes each
// face lies in, so the texture keeps its scale on boxes of any size.
function worldUv(geo, tile) {
    const pos = geo.getAttribute('position'), nor = geo.getAttribute('normal');
    const uv = geo.getAttribute('uv');
    for (let i = 0; i < pos.count; i++) {
        const n = [Math.abs(nor.getX(i)), Math.abs(nor.getY(i)), Math.abs(nor.getZ(i))];
        const p = [pos.getX(i), pos.getY(i), pos.getZ(i)];
        const axis = n.indexOf(Math.max(...n)); // the face's normal axis
        const [a, b] = [0, 1, 2].filter(k => k !== axis);
        uv.setXY(i, p[a] / tile, p[b] / tile);
    }
    uv.needsUpdate = true;
}

function heightfieldMesh(h, scale, material) {
    const { nx, ny, dx, dy } = h;
    const x0 = -0.5 * (nx - 1) * dx, y0 = -0.5 * (ny - 1) * dy;
    const pos = new Float32Array(nx * ny * 3), uv = new Float32Array(nx * ny * 2), idx = [];
    for (let j = 0; j < ny; j++)
        for (let i = 0; i < nx; i++) {
            const v = j * nx + i, z = Number(h.z[v]);
            pos.set([x0 + i * dx, y0 + j * dy, (Number.isFinite(z) ? z : 0) * scale], 3 * v);
            uv.set([(x0 + i * dx) / PLANE_SIZE_M, (y0 + j * dy) / PLANE_SIZE_M], 2 * v);
            if (i + 1 < nx && j + 1 < ny)
                idx.push(v, v + 1, v + nx, v + 1, v + nx + 1, v + nx);
        }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    g.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
    g.setIndex(idx);
    g.computeVertexNormals();
    return new THREE.Mesh(g, material);
}

function poseOf(doc, worldPose) {
    const p = Array.isArray(doc && doc.pose) && doc.pose.length === 3 ? doc.pose : [0, 0, 0];
    const f = p.map(v => (typeof v === 'number' && Number.isFinite(v) ? v : 0));
    const w = worldPose && typeof worldPose === 'object' ? worldPose : {};
    const wn = k => (typeof w[k] === 'number' && Number.isFinite(w[k]) ? w[k] : 0);
    return { file: { x: f[0], y: f[1], yaw: f[2] * DEG },
             world: { x: wn('x'), y: wn('y'), yaw: wn('yaw') * DEG } };
}

// The whole terrain as one group. doc: the terrain document or null;
// worldPose: the world's "terrain_pose" or undefined. Returns
// { group, dispose(), label }.
export function buildTerrain(doc, worldPose) {
    const group = new THREE.Group();
    const grid = gridTexture();
    const ground = new THREE.MeshLambertMaterial({ map: grid });
    const slab = slabTexture();
    const concrete = new THREE.MeshLambertMaterial({ map: slab });
    const wood = new THREE.MeshLambertMaterial({ color: 0xc8bca8 });
    const edges = new THREE.LineBasicMaterial({ color: 0x505050 });
    const mats = [ground, concrete, wood, edges];
    const isDoc = doc && typeof doc === 'object';
    const parts = isDoc ? terrainParts(doc) : null;
    const label = parts ? String(doc.type || 'terrain') : 'ground grid';

    // the file's pose inside the world's, each as rotate-about-z then move
    const pose = poseOf(isDoc ? doc : null, worldPose);
    const outer = new THREE.Group();
    outer.position.set(pose.world.x, pose.world.y, 0);
    outer.rotation.z = pose.world.yaw;
    const inner = new THREE.Group();
    inner.position.set(pose.file.x, pose.file.y, 0);
    inner.rotation.z = pose.file.yaw;
    outer.add(inner);
    group.add(outer);

    const isPallet = isDoc && doc.type === 'pallet';
    let boxes = 0;
    const up = new THREE.Vector3(0, 0, 1);
    for (const part of parts || [{ kind: 'plane', c: [0, 0, 0], n: [0, 0, 1] }]) {
        if (part.kind === 'plane') {
            const m = new THREE.Mesh(new THREE.PlaneBufferGeometry(PLANE_SIZE_M, PLANE_SIZE_M), ground);
            m.position.set(part.c[0], part.c[1], part.c[2]);
            m.quaternion.setFromUnitVectors(up, new THREE.Vector3(...part.n).normalize());
            inner.add(m);
        } else if (part.kind === 'hfield') {
            // tinted so its extent shows, and drawn in front of the plane
            // where both are at z = 0 (its border)
            const hf = ground.clone();
            hf.color.setHex(0xe0d2b8);
            hf.polygonOffset = true;
            hf.polygonOffsetFactor = hf.polygonOffsetUnits = -1;
            mats.push(hf);
            inner.add(heightfieldMesh(heightsOf(doc), param(doc, 'scale'), hf));
        } else {
            const geo = new THREE.BoxBufferGeometry(2 * part.half[0], 2 * part.half[1], 2 * part.half[2]);
            if (!isPallet)
                worldUv(geo, 0.25);
            const m = new THREE.Mesh(geo, isPallet ? wood : concrete);
            boxes++;
            m.add(new THREE.LineSegments(new THREE.EdgesGeometry(geo), edges));
            m.position.set(part.c[0], part.c[1], part.c[2]);
            // the engine's box rotation: Rz(yaw) Ry(pitch)
            m.rotation.set(0, part.pitch, part.yaw, 'ZYX');
            inner.add(m);
        }
    }
    return {
        group, label, boxes,
        dispose() {
            group.traverse(o => o.geometry && o.geometry.dispose());
            mats.forEach(m => m.dispose());
            grid.dispose();
            slab.dispose();
        },
    };
}
