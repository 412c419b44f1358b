/* The robot's two cameras: where they sit on the Kenaf and what they see
 * (the front pan-tilt-zoom camera and the bird's-eye camera on the mast,
 * kenaf-view's mounts.js; docs/cameras.md), and the view and projection
 * matrices of one picture from a robot's pose. */
#ifndef KN_RENDER_CAMERA_H
#define KN_RENDER_CAMERA_H

#include "scene.h"

enum kn_rcam_which { KN_RCAM_PTZ, KN_RCAM_BIRD };

/* One mount: lengths in metres in the body frame, angles in degrees. The
 * PTZ camera sits `above_chassis` over the chassis top, the bird's-eye
 * camera `height_m` over the ground the robot stands on. */
struct kn_rcam_mount {
    double x, y;
    double above_chassis, height_m;
    double tilt_deg; /* the bird's-eye camera's fixed tilt (- looks down) */
    double hfov_deg; /* the widest horizontal field of view (PTZ: zoom 1) */
    double zoom_max, pan_max_deg, tilt_min_deg, tilt_max_deg;
    /* the PTZ head's fastest moves (kenaf-cameras' continuous moves):
     * degrees a second, zoom factor a second */
    double pan_speed_dps, tilt_speed_dps, zoom_speed;
    double eye_m;  /* the optical centre ahead of the pivot, along the view */
    double near_m; /* kenaf-view's near plane for this camera */
};

/* The Kenaf's (config/robots/kenaf.json, kn_robotcams_defaults), with
 * the optical centre and near plane kenaf-view uses. */
void kn_rcam_mount_kenaf(enum kn_rcam_which which, struct kn_rcam_mount *out);

/* The mount of a robot's camera as its file declares it (the first "ptz"
 * camera for KN_RCAM_PTZ, the first "fixed" one for KN_RCAM_BIRD), with
 * kenaf-view's optical centre and near plane: 0, or -1 when the file
 * declares no such camera. */
int kn_rcam_mount_of(const struct kn_rscene_geom *g, enum kn_rcam_which which,
                     struct kn_rcam_mount *out);
/* The same for the file's camera called name, and which kind it is: 0,
 * or -1 when the file has no camera of that name. */
int kn_rcam_mount_named(const struct kn_rscene_geom *g, const char *name, struct kn_rcam_mount *out,
                        enum kn_rcam_which *which);

/* One picture: which camera of which robot, the PTZ camera's pan and tilt
 * (degrees, + turns left and looks up) and zoom (1 .. zoom_max, dividing
 * the field of view), the size in pixels. Values past the limits are
 * clamped, as kenaf-view's controls do. */
struct kn_rcam_shot {
    enum kn_rcam_which cam;
    /* the robot file's camera of this name (its kind then says PTZ or
     * fixed, whatever cam is); NULL: the file's first camera of kind cam */
    const char *name;
    int robot;
    double pan_deg, tilt_deg, zoom;
    int width, height;
};

/* The view (world to eye, OpenGL's: looking along -z, +y up) and the
 * projection of a shot of robot r; 0, or -1 for a bad camera or size. */
int kn_rcam_matrices(const struct kn_rscene_geom *g, const struct kn_rscene_robot *r,
                     const struct kn_rcam_shot *shot, float view[16], float proj[16]);

#endif
