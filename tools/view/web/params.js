// URL parameters: the view and the camera settings a page starts with, so
// a layout can be bookmarked (docs/view.md lists them). Anything missing,
// unknown or out of range falls back to its default.
import { CAMERA_MOUNTS } from './mounts.js';

export const VIEWS = ['chase', 'top', 'orbit', 'ptz', 'bird'];

function number(q, key, def, lo, hi) {
    if (!q.has(key))
        return def;
    const v = Number(q.get(key));
    return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : def;
}

function triple(q, key) {
    if (!q.has(key))
        return null;
    const v = q.get(key).split(',').map(Number);
    return v.length === 3 && v.every(Number.isFinite) ? v : null;
}

function flag(q, key, def) {
    if (!q.has(key))
        return def;
    return !['0', 'no', 'off', 'false'].includes(q.get(key).toLowerCase());
}

const FLAG_WORDS = ['0', '1', 'no', 'yes', 'off', 'on', 'false', 'true'];

// A number is a robot's id, anything else its name; ?follow=NAME names it
// too (a flag word there is the top view's follow switch).
function robotParam(q) {
    const f = q.get('follow');
    if (f && !FLAG_WORDS.includes(f.toLowerCase()))
        return f;
    const r = q.get('robot');
    if (r === null || r === '')
        return 0;
    const n = Number(r);
    return Number.isInteger(n) && n >= 0 && n <= 255 ? n : r;
}

export function readParams(search) {
    const q = new URLSearchParams(search);
    const ptz = CAMERA_MOUNTS.ptz;
    const view = (q.get('view') || '').toLowerCase();
    return {
        view: VIEWS.includes(view) ? view : 'chase',
        // the robot followed: ?robot=ID or ?robot=NAME (or ?follow=NAME)
        robot: robotParam(q),
        // PTZ camera: pan + turns left (like yaw), tilt + looks up, zoom 1..max
        pan: number(q, 'pan', 0, -ptz.pan_max_deg, ptz.pan_max_deg),
        tilt: number(q, 'tilt', -10, ptz.tilt_min_deg, ptz.tilt_max_deg),
        zoom: number(q, 'zoom', 1, 1, ptz.zoom_max),
        // chase camera: distance, azimuth (0 behind the robot, + counter-clockwise
        // seen from above, so 90 looks from its right side), elevation
        dist: number(q, 'dist', 1.8, 0.3, 50),
        az: number(q, 'az', -20, -180, 180),
        el: number(q, 'el', 25, -10, 89),
        // top view: metres shown top to bottom; follow the robot or stay at cx, cy
        span: number(q, 'span', 4, 0.5, 200),
        follow: q.has('follow') && !FLAG_WORDS.includes(q.get('follow').toLowerCase())
            ? true : flag(q, 'follow', true),
        cx: number(q, 'cx', 0, -1e4, 1e4),
        cy: number(q, 'cy', 0, -1e4, 1e4),
        // free orbit: where the eye is and what it looks at, world metres "x,y,z"
        eye: triple(q, 'eye'),
        at: triple(q, 'at'),
        hud: flag(q, 'hud', true),
        // smoothed edges; null: on, unless WebGL is drawn without a GPU
        // (software_gl.js), where they cost a third of a frame
        aa: q.has('aa') ? flag(q, 'aa', true) : null,
        // drawing resolution as a fraction of the window's; 0: adapt to the frame rate
        scale: number(q, 'scale', 0, 0, 2),
        trail: flag(q, 'trail', true),
        // robots drawn in full (the followed one and the nearest); the rest
        // are simple boxes (fleet.js)
        detail: Math.round(number(q, 'detail', 4, 1, 64)),
        // seconds between measurement reports to the server, 0: none
        report: number(q, 'report', 0, 0, 3600),
        ws: q.get('ws') || '',
    };
}
