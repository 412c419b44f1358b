/* The robot's cameras (camera.h): the mounts a robot file declares
 * (engine/robot_cameras.c, the Kenaf's by default) with kenaf-view's
 * lens values, and the matrices of one shot. */
#include "camera.h"
#include "mat.h"

#include <math.h>
#include <string.h>

#define DEG (M_PI / 180.0)
#define FAR_M 300.0 /* kenaf-view's far plane for both cameras */

/* kenaf-view's optical centre ahead of the pivot and near plane; the
 * rest of each mount is the robot file's */
static const struct {
    double eye_m, near_m;
} LENS[2] = { [KN_RCAM_PTZ] = { 0.026, 0.02 }, [KN_RCAM_BIRD] = { 0.01, 0.05 } };

/* A robot file's camera as a mount, and which kind it is. */
static void mount_from(const struct kn_robotcam *c, struct kn_rcam_mount *out,
                       enum kn_rcam_which *which)
{
    *which = c->kind == KN_ROBOTCAM_PTZ ? KN_RCAM_PTZ : KN_RCAM_BIRD;
    *out = (struct kn_rcam_mount){ .x = c->x_m,
                                   .y = c->y_m,
                                   .above_chassis = c->above_chassis_m,
                                   .height_m = c->height_m,
                                   .tilt_deg = c->tilt_deg,
                                   .hfov_deg = c->hfov_deg,
                                   .zoom_max = c->zoom_max,
                                   .pan_max_deg = c->pan_max_deg,
                                   .tilt_min_deg = c->tilt_min_deg,
                                   .tilt_max_deg = c->tilt_max_deg,
                                   .eye_m = LENS[*which].eye_m,
                                   .near_m = LENS[*which].near_m };
    if (c->kind == KN_ROBOTCAM_PTZ) {
        out->pan_speed_dps = c->pan_speed_deg_s;
        out->tilt_speed_dps = c->tilt_speed_deg_s;
        /* the file gives the time through the zoom range */
        out->zoom_speed = (c->zoom_max - 1) / c->zoom_time_s;
    }
}

static int first_of(const struct kn_robotcams *cams, enum kn_rcam_which which,
                    struct kn_rcam_mount *out)
{
    enum kn_robotcam_kind kind = which == KN_RCAM_PTZ ? KN_ROBOTCAM_PTZ : KN_ROBOTCAM_FIXED;
    for (int i = 0; i < cams->n; i++)
        if (cams->cam[i].kind == kind) {
            enum kn_rcam_which w;
            mount_from(&cams->cam[i], out, &w);
            return 0;
        }
    return -1;
}

void kn_rcam_mount_kenaf(enum kn_rcam_which which, struct kn_rcam_mount *out)
{
    struct kn_robotcams kenaf;
    kn_robotcams_defaults(&kenaf);
    first_of(&kenaf, which, out); /* the Kenaf has one of each kind */
}

int kn_rcam_mount_of(const struct kn_rscene_geom *g, enum kn_rcam_which which,
                     struct kn_rcam_mount *out)
{
    return first_of(&g->cams, which, out);
}

int kn_rcam_mount_named(const struct kn_rscene_geom *g, const char *name, struct kn_rcam_mount *out,
                        enum kn_rcam_which *which)
{
    for (int i = 0; i < g->cams.n; i++)
        if (strcmp(g->cams.cam[i].name, name) == 0) {
            mount_from(&g->cams.cam[i], out, which);
            return 0;
        }
    return -1;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int kn_rcam_matrices(const struct kn_rscene_geom *g, const struct kn_rscene_robot *r,
                     const struct kn_rcam_shot *shot, float view[16], float proj[16])
{
    if ((shot->cam != KN_RCAM_PTZ && shot->cam != KN_RCAM_BIRD) || shot->width <= 0 ||
        shot->height <= 0)
        return -1;
    struct kn_rcam_mount mount;
    enum kn_rcam_which which = shot->cam;
    if (shot->name ? kn_rcam_mount_named(g, shot->name, &mount, &which) < 0
                   : kn_rcam_mount_of(g, shot->cam, &mount) < 0)
        return -1;
    const struct kn_rcam_mount *m = &mount;
    float eye[16];
    kn_rrobot_body(r, eye);
    double hfov = m->hfov_deg;
    if (which == KN_RCAM_PTZ) {
        /* pan about z, then tilt about y (+ about y lowers +x) */
        double pan = isfinite(shot->pan_deg) ? shot->pan_deg : 0;
        double tilt = isfinite(shot->tilt_deg) ? shot->tilt_deg : 0;
        double zoom = isfinite(shot->zoom) ? shot->zoom : 1;
        kn_rmat_translate(eye, m->x, m->y, kn_rrobot_chassis_top(g) + m->above_chassis);
        kn_rmat_rotate(eye, 2, clamp(pan, -m->pan_max_deg, m->pan_max_deg) * DEG);
        kn_rmat_rotate(eye, 1, -clamp(tilt, m->tilt_min_deg, m->tilt_max_deg) * DEG);
        hfov /= clamp(zoom, 1, m->zoom_max);
    } else {
        kn_rmat_translate(eye, m->x, m->y, -g->r + m->height_m);
        kn_rmat_rotate(eye, 1, -m->tilt_deg * DEG);
    }
    kn_rmat_translate(eye, m->eye_m, 0, 0);
    /* the mounts look along +x with +z up, OpenGL's eye along -z, +y up */
    static const float mount_to_gl[16] = { 0, -1, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0, 0, 0, 0, 1 };
    kn_rmat_mul(eye, eye, mount_to_gl);
    kn_rmat_rigid_inverse(view, eye);
    double aspect = (double)shot->width / shot->height;
    double vfov = 2.0 * atan(tan(0.5 * hfov * DEG) / aspect);
    kn_rmat_perspective(proj, vfov, aspect, m->near_m, FAR_M);
    return 0;
}
