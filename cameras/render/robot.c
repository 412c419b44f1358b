/* The robots' triangles (scene.h, kn_rrobot_): kenaf-view's robot_model.js
 * in simple shapes. The chassis is a box between the tracks, each track
 * and flipper a prism round its pulleys, the axles, the PTZ post and the
 * mast boxes; the PTZ head turns with the robot's pan and tilt. */
#include "camera.h"
#include "mat.h"
#include "scene.h"

#include <math.h>

/* robot_model.js: a body colour per robot (the first one the tests look
 * for), the flippers', the track plates', the dark camera housings', the
 * metal's */
static const unsigned BODY[] = { 0xff6a00, 0xe0006a, 0x8a2be2, 0x00a86b, 0x1f5fff };
#define FLIPPER 0xffcc00u
#define TRACK 0x3a3a3au
#define DARK 0x3a3a3au
#define METAL 0x8c8c8cu

static struct kn_rmesh_mat plain(unsigned rgb)
{
    struct kn_rmesh_mat m = { rgb, rgb, 0.0f, 1.0f };
    return m;
}

double kn_rrobot_chassis_top(const struct kn_rscene_geom *g)
{
    return -g->r + g->clear + g->cs[2];
}

void kn_rrobot_body(const struct kn_rscene_robot *r, float m[16])
{
    /* KRP/1 attitude: R = Rz(yaw) Ry(pitch) Rx(roll) */
    kn_rmat_identity(m);
    kn_rmat_translate(m, r->pos[0], r->pos[1], r->pos[2]);
    kn_rmat_rotate(m, 2, r->rpy[2]);
    kn_rmat_rotate(m, 1, r->rpy[1]);
    kn_rmat_rotate(m, 0, r->rpy[0]);
}

static void box_at(struct kn_rmesh *out, const float base[16], double x, double y, double z,
                   double hx, double hy, double hz, unsigned rgb)
{
    float t[16];
    const float h[3] = { (float)hx, (float)hy, (float)hz };
    const struct kn_rmesh_mat mat = plain(rgb);
    for (int i = 0; i < 16; i++)
        t[i] = base[i];
    kn_rmat_translate(t, x, y, z);
    kn_rmesh_box(out, t, h, &mat);
}

static void tracks(struct kn_rmesh *out, const struct kn_rscene_geom *g, const float body[16],
                   const double flippers[4])
{
    float outline[2 * KN_RMESH_BELT_MAX], t[16];
    const struct kn_rmesh_mat track = plain(TRACK), flip = plain(FLIPPER);
    int n = kn_rmesh_belt(g->r, g->r, 2 * g->px, outline);
    for (int side = 0; side < 2; side++) { /* left (+y), right */
        for (int i = 0; i < 16; i++)
            t[i] = body[i];
        kn_rmat_translate(t, -g->px, side ? -g->ty : g->ty, 0);
        kn_rmesh_prism(out, t, outline, n, g->tw, &track);
    }
    /* flippers FL FR RL RR on the pulley axes, the rear ones turned half
     * round; + raises the tip: about +y by -angle */
    n = kn_rmesh_belt(g->fr1, g->fr2, g->fl, outline);
    for (int k = 0; k < 4; k++) {
        int front = k < 2, left = k == 0 || k == 2;
        for (int i = 0; i < 16; i++)
            t[i] = body[i];
        kn_rmat_translate(t, front ? g->px : -g->px, left ? g->fy : -g->fy, 0);
        if (!front)
            kn_rmat_rotate(t, 2, M_PI);
        kn_rmat_rotate(t, 1, -flippers[k]);
        kn_rmesh_prism(out, t, outline, n, g->fw, &flip);
    }
}

static void cameras(struct kn_rmesh *out, const struct kn_rscene_geom *g, const float body[16],
                    const struct kn_rscene_robot *r)
{
    /* the head and the mast where the robot file puts its cameras */
    struct kn_rcam_mount m[2];
    for (int k = 0; k < 2; k++)
        if (kn_rcam_mount_of(g, (enum kn_rcam_which)k, &m[k]) < 0)
            kn_rcam_mount_kenaf((enum kn_rcam_which)k, &m[k]);
    const struct kn_rcam_mount *ptz = &m[KN_RCAM_PTZ], *bird = &m[KN_RCAM_BIRD];
    double top = kn_rrobot_chassis_top(g);
    float t[16];
    /* PTZ: a post on the chassis, the head turned by pan and tilt */
    box_at(out, body, ptz->x, ptz->y, top + 0.5 * ptz->above_chassis, 0.012, 0.012,
           0.5 * ptz->above_chassis, METAL);
    for (int i = 0; i < 16; i++)
        t[i] = body[i];
    kn_rmat_translate(t, ptz->x, ptz->y, top + ptz->above_chassis);
    kn_rmat_rotate(t, 2, r->pan);
    kn_rmat_rotate(t, 1, -r->tilt);
    box_at(out, t, -0.02, 0, 0, 0.03, 0.035, 0.025, DARK);
    box_at(out, t, 0.015, 0, 0, 0.01, 0.018, 0.018, METAL);
    /* bird's-eye: a mast from the chassis top to the camera's height */
    double cam_z = -g->r + bird->height_m, mast = fmax(0.05, cam_z - top);
    box_at(out, body, bird->x, bird->y, top + 0.5 * mast, 0.009, 0.009, 0.5 * mast, METAL);
    for (int i = 0; i < 16; i++)
        t[i] = body[i];
    kn_rmat_translate(t, bird->x, bird->y, cam_z);
    kn_rmat_rotate(t, 1, -bird->tilt_deg * M_PI / 180.0);
    box_at(out, t, -0.02, 0, 0, 0.025, 0.025, 0.02, DARK);
}

void kn_rrobot_mesh(const struct kn_rscene *s, struct kn_rmesh *out)
{
    const struct kn_rscene_geom *g = &s->geom;
    for (int i = 0; i < KN_RSCENE_ROBOTS; i++) {
        const struct kn_rscene_robot *r = &s->robots[i];
        float body[16];
        if (!r->present)
            continue;
        kn_rrobot_body(r, body);
        box_at(out, body, 0, 0, -g->r + g->clear + 0.5 * g->cs[2], 0.5 * g->cs[0], 0.5 * g->cs[1],
               0.5 * g->cs[2], BODY[i % (int)(sizeof BODY / sizeof BODY[0])]);
        tracks(out, g, body, r->flippers);
        /* one axle through both sides at each pulley */
        for (int k = -1; k <= 1; k += 2)
            box_at(out, body, k * g->px, 0, 0, 0.3 * g->r, g->fy + 0.5 * g->fw + 0.002, 0.3 * g->r,
                   METAL);
        cameras(out, g, body, r);
    }
}
