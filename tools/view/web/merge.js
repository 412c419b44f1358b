// Parts that never move against each other drawn as one geometry: each
// part's geometry (indexed, with position and normal, uv optional) is moved
// by its matrix and appended. Without a GPU every draw call costs, and a
// robot is made of many small parts.
import * as THREE from '../three/build/three.module.js';

// parts: [{ geometry, matrix (Matrix4, optional), uv: [u, v] (optional: one
// texture coordinate for every vertex of the part, instead of its own) }]
export function mergeGeometries(parts) {
    const moved = parts.map(p => {
        const g = p.geometry.clone();
        if (p.matrix)
            g.applyMatrix(p.matrix);
        return { g, uv: p.uv };
    });
    const nv = moved.reduce((n, m) => n + m.g.getAttribute('position').count, 0);
    const ni = moved.reduce((n, m) => n + m.g.getIndex().count, 0);
    const pos = new Float32Array(3 * nv), nor = new Float32Array(3 * nv), uv = new Float32Array(2 * nv);
    const idx = nv > 65535 ? new Uint32Array(ni) : new Uint16Array(ni);
    let v0 = 0, i0 = 0;
    for (const { g, uv: fixedUv } of moved) {
        const p = g.getAttribute('position'), n = g.getAttribute('normal');
        const t = g.getAttribute('uv'), index = g.getIndex();
        pos.set(p.array, 3 * v0);
        nor.set(n.array, 3 * v0);
        for (let k = 0; k < p.count; k++) {
            uv[2 * (v0 + k)] = fixedUv ? fixedUv[0] : t ? t.getX(k) : 0;
            uv[2 * (v0 + k) + 1] = fixedUv ? fixedUv[1] : t ? t.getY(k) : 0;
        }
        for (let k = 0; k < index.count; k++)
            idx[i0 + k] = index.getX(k) + v0;
        v0 += p.count;
        i0 += index.count;
        g.dispose();
    }
    const out = new THREE.BufferGeometry();
    out.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    out.setAttribute('normal', new THREE.BufferAttribute(nor, 3));
    out.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
    out.setIndex(new THREE.BufferAttribute(idx, 1));
    return out;
}
