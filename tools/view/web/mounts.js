// Where the Kenaf's two cameras sit and what they see. The real robot has a
// pan-tilt-zoom camera at the front of its body and a bird's-eye camera on
// top of it; their exact mounts and lenses are not published, so these are
// the assumptions docs/view.md states (change them there and here together).
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
