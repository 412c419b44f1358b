// Where the Kenaf's two cameras sit and what they see. The real robot has a
// pan-tilt-zoom camera at the front of its body and a bird's-eye camera on
// top of it; their exact mounts and lenses are not published, so these are
// the assumptions docs/view.md states. A robot file declares its own
// ("cameras", docs/engine.md); these defaults are config/robots/kenaf.json's,
// for a world without one.
// Lengths in metres in the body frame (x forward, y left, z up; x, y from
// the body centre), angles in degrees.
export const CAMERA_MOUNTS = Object.freeze({
    ptz: Object.freeze({
        x: 0.17,            // over the front pulley axis, at the chassis's front edge
        y: 0,
        above_chassis: 0.05, // optical centre 5 cm above the chassis top
        hfov_deg: 60,        // widest horizontal field of view (zoom 1)
        zoom_max: 10,
        pan_max_deg: 170,    // pan range +-170 deg
        tilt_min_deg: -60,
        tilt_max_deg: 60,
    }),
    bird: Object.freeze({
        x: -0.17,           // mast at the rear of the chassis, over the rear pulley axis
        y: 0,
        height_m: 1.0,      // camera 1 m above the ground the robot stands on
        tilt_deg: -60,      // looking forward and down
        hfov_deg: 100,      // a wide-angle lens
    }),
});

function num(obj, key, def, lo, hi) {
    const v = obj && obj[key];
    return typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi ? v : def;
}

// The mounts of a robot document (the world description's "robot"): its
// first "ptz" camera and its first "fixed" one, each value checked and
// defaulted on its own (the ranges kenaf-engine checks), as the robot's
// shape is, so a partial or odd file still draws.
export function cameraMounts(doc) {
    const cams = doc && typeof doc === 'object' && doc.cameras && typeof doc.cameras === 'object'
        ? Object.values(doc.cameras).filter(c => c && typeof c === 'object') : [];
    const p = cams.find(c => c.kind === 'ptz'), b = cams.find(c => c.kind === 'fixed');
    const P = CAMERA_MOUNTS.ptz, B = CAMERA_MOUNTS.bird;
    return {
        ptz: p ? {
            x: num(p, 'x_m', P.x, -2, 2),
            y: num(p, 'y_m', P.y, -2, 2),
            above_chassis: num(p, 'above_chassis_m', P.above_chassis, 0, 2),
            hfov_deg: num(p, 'hfov_deg', P.hfov_deg, 1, 170),
            zoom_max: num(p, 'zoom_max', P.zoom_max, 1, 100),
            pan_max_deg: num(p, 'pan_max_deg', P.pan_max_deg, 0, 180),
            tilt_min_deg: num(p, 'tilt_min_deg', P.tilt_min_deg, -90, 0),
            tilt_max_deg: num(p, 'tilt_max_deg', P.tilt_max_deg, 0, 90),
        } : P,
        bird: b ? {
            x: num(b, 'x_m', B.x, -2, 2),
            y: num(b, 'y_m', B.y, -2, 2),
            height_m: num(b, 'height_m', B.height_m, 0, 10),
            tilt_deg: num(b, 'tilt_deg', B.tilt_deg, -90, 90),
            hfov_deg: num(b, 'hfov_deg', B.hfov_deg, 1, 170),
        } : B,
    };
}
