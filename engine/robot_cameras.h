/* The robot's cameras as its robot file declares them ("cameras"): where
 * each sits on the body, what it sees, how its pan-tilt-zoom head may
 * move and the picture it gives. The engine only checks them; kenaf-view
 * and kenaf-cameras draw from them (the world description carries the
 * robot file). Lengths in metres in the body frame (x forward, y left,
 * z up, from the main pulley axis), angles in degrees. */
#ifndef KN_ENGINE_ROBOT_CAMERAS_H
#define KN_ENGINE_ROBOT_CAMERAS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define KN_ROBOTCAMS_MAX 4

enum kn_robotcam_kind {
    KN_ROBOTCAM_PTZ,   /* a pan-tilt-zoom head on the chassis */
    KN_ROBOTCAM_FIXED, /* a fixed camera, e.g. on a mast */
};

struct kn_robotcam {
    char name[32]; /* its path in stream URLs: [a-z0-9_-] */
    enum kn_robotcam_kind kind;
    double x_m, y_m;
    double above_chassis_m; /* PTZ: the pivot above the chassis top */
    double height_m;        /* fixed: above the ground the robot stands on */
    double tilt_deg;        /* fixed: its tilt, - looks down */
    double hfov_deg;        /* horizontal field of view (PTZ: at zoom 1) */
    /* PTZ: zoom 1..zoom_max divides the field of view; pan +-pan_max_deg
     * (+ left), tilt tilt_min_deg..tilt_max_deg (+ up); the head's top
     * speeds and the time from zoom 1 to zoom_max at full speed */
    double zoom_max, pan_max_deg, tilt_min_deg, tilt_max_deg;
    double pan_speed_deg_s, tilt_speed_deg_s, zoom_time_s;
    int width_px, height_px, fps; /* the picture it gives */
};

struct kn_robotcams {
    int n;
    struct kn_robotcam cam[KN_ROBOTCAMS_MAX];
};

/* The Kenaf's two, as config/robots/kenaf.json declares them: "front"
 * (PTZ) and "birdseye" (fixed). */
void kn_robotcams_defaults(struct kn_robotcams *c);
/* Reads the "cameras" object of a robot file (NULL: the defaults): 0, or
 * -1 with the reason (ctx, the camera and the key) in err. */
int kn_robotcams_parse(const cJSON *cameras, struct kn_robotcams *out, const char *ctx, char *err,
                       size_t errlen);
/* The camera called name, or NULL. */
const struct kn_robotcam *kn_robotcams_find(const struct kn_robotcams *c, const char *name);

#endif
