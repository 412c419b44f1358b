// Screenshots as numbers for the browser test: a PNG decoder (8-bit RGB or
// RGBA, not interlaced: what Chromium writes) and the measures the test
// asserts on: where the robot's body colour and its flippers' colour are
// on screen, and how much two pictures differ.
'use strict';
const zlib = require('zlib');

function paeth(a, b, c) {
    const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// -> { width, height, channels, data (Uint8Array, rows without filter bytes) }
function decodePng(buf) {
    if (buf.readUInt32BE(0) !== 0x89504e47)
        throw new Error('not a PNG');
    let off = 8, w = 0, h = 0, ch = 0;
    const idat = [];
    while (off < buf.length) {
        const len = buf.readUInt32BE(off), type = buf.toString('ascii', off + 4, off + 8);
        const body = buf.subarray(off + 8, off + 8 + len);
        if (type === 'IHDR') {
            w = body.readUInt32BE(0);
            h = body.readUInt32BE(4);
            const depth = body[8], colour = body[9], interlace = body[12];
            if (depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0)
                throw new Error(`PNG kind not handled: depth ${depth} colour ${colour} interlace ${interlace}`);
            ch = colour === 6 ? 4 : 3;
        } else if (type === 'IDAT') {
            idat.push(body);
        } else if (type === 'IEND') {
            break;
        }
        off += 12 + len;
    }
    const raw = zlib.inflateSync(Buffer.concat(idat));
    const stride = w * ch, out = new Uint8Array(h * stride);
    for (let y = 0; y < h; y++) {
        const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
        for (let x = 0; x < stride; x++) {
            const v = raw[src + x];
            const a = x >= ch ? out[dst + x - ch] : 0;
            const b = y ? out[dst - stride + x] : 0;
            const c = x >= ch && y ? out[dst - stride + x - ch] : 0;
            out[dst + x] = (f === 0 ? v : f === 1 ? v + a : f === 2 ? v + b
                : f === 3 ? v + ((a + b) >> 1) : v + paeth(a, b, c)) & 255;
        }
    }
    return { width: w, height: h, channels: ch, data: out };
}

// Hue in degrees, saturation and value 0..1.
function hsv(r, g, b) {
    const mx = Math.max(r, g, b), mn = Math.min(r, g, b), d = mx - mn;
    let hue = 0;
    if (d > 0) {
        if (mx === r) hue = 60 * (((g - b) / d) % 6);
        else if (mx === g) hue = 60 * ((b - r) / d + 2);
        else hue = 60 * ((r - g) / d + 4);
    }
    if (hue < 0) hue += 360;
    return [hue, mx ? d / mx : 0, mx / 255];
}

// The page's colours (tools/view/web/robot_model.js): robot 0's body is
// orange (hue 25), the flippers' side plates yellow (hue 48); nothing else
// on the page is that saturated in those hues.
const CLASSES = {
    body: (h, s, v) => h >= 12 && h <= 36 && s > 0.75 && v > 0.25,
    flipper: (h, s, v) => h >= 40 && h <= 62 && s > 0.7 && v > 0.25,
};

// Count, centroid and extent of each class, in pixels (y down).
function analyse(img) {
    const res = {};
    for (const k of Object.keys(CLASSES))
        res[k] = { n: 0, cx: 0, cy: 0, minx: Infinity, maxx: -Infinity, miny: Infinity, maxy: -Infinity };
    const { width: w, height: h, channels: ch, data } = img;
    for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
            const i = (y * w + x) * ch;
            const [hue, s, v] = hsv(data[i], data[i + 1], data[i + 2]);
            for (const [k, test] of Object.entries(CLASSES)) {
                if (!test(hue, s, v))
                    continue;
                const r = res[k];
                r.n++;
                r.cx += x;
                r.cy += y;
                r.minx = Math.min(r.minx, x);
                r.maxx = Math.max(r.maxx, x);
                r.miny = Math.min(r.miny, y);
                r.maxy = Math.max(r.maxy, y);
            }
        }
    for (const r of Object.values(res)) {
        if (r.n) {
            r.cx /= r.n;
            r.cy /= r.n;
        } else {
            r.cx = r.cy = r.minx = r.maxx = r.miny = r.maxy = null;
        }
    }
    return { width: w, height: h, ...res };
}

// Fraction of pixels whose colour differs by more than 24 in some channel.
function differ(a, b) {
    if (a.width !== b.width || a.height !== b.height)
        return 1;
    let n = 0;
    const px = a.width * a.height;
    for (let p = 0; p < px; p++) {
        const i = p * a.channels, j = p * b.channels;
        if (Math.abs(a.data[i] - b.data[j]) > 24 || Math.abs(a.data[i + 1] - b.data[j + 1]) > 24 ||
            Math.abs(a.data[i + 2] - b.data[j + 2]) > 24)
            n++;
    }
    return n / px;
}

module.exports = { decodePng, analyse, differ };
