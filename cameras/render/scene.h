/* The scene the cameras look at: the world description kenaf-simd serves
 * over KRP/1 (docs/protocol.md, "Extension: world description": the
 * terrain the engine collides with and the robot file's shape), turned
 * into the terrain's triangles once, plus the robots the caller places
 * (pose, flipper angles, the PTZ head's pan and tilt). Pure data: no GL. */
#ifndef KN_RENDER_SCENE_H
#define KN_RENDER_SCENE_H

#include "mesh.h"
#include "robot_cameras.h" /* engine/: the robot file's cameras */

#include <stddef.h>

#define KN_RSCENE_ROBOTS 8

/* The robot file's shape in metres (kenaf-view's robotGeometry): main
 * track pulley x, radius, width, y; flipper root and tip radius, length,
 * width, y; chassis size and clearance; and its cameras. */
struct kn_rscene_geom {
    double px, r, tw, ty;
    double fr1, fr2, fl, fw, fy;
    double cs[3], clear;
    /* the robot file's cameras, the Kenaf's when it has none or they are
     * not well formed */
    struct kn_robotcams cams;
};

/* One robot: its pose as STATUS gives it (the body origin on the main
 * pulley axis, m; roll, pitch, yaw in rad with R = Rz Ry Rx), flipper
 * angles in rad in KRP/1 order FL FR RL RR (0 in line, + raises the tip),
 * and where its PTZ head points (rad, pan + turns left, tilt + up). */
struct kn_rscene_robot {
    int present;
    double pos[3], rpy[3];
    double flippers[4];
    double pan, tilt;
};

struct kn_rscene {
    struct kn_rscene_geom geom;
    struct kn_rmesh terrain;
    unsigned generation; /* changes with every load: the terrain to upload again */
    struct kn_rscene_robot robots[KN_RSCENE_ROBOTS];
};

/* An empty scene: the default Kenaf, a ground grid, no robots. */
int kn_rscene_init(struct kn_rscene *s);
void kn_rscene_free(struct kn_rscene *s);
/* Loads a world description (the JSON object of WORLD): 0, or -1 with the
 * reason in err when it is not a JSON object (the scene is left as it
 * was). A missing or odd value is replaced by its default, as kenaf-view
 * does, so a partial description still draws. */
int kn_rscene_load(struct kn_rscene *s, const char *json, size_t len, char *err, size_t errlen);
/* Places robot i (0 .. KN_RSCENE_ROBOTS - 1): 0, or -1 when i is out of
 * range or a value is not finite. */
int kn_rscene_robot_set(struct kn_rscene *s, int i, const struct kn_rscene_robot *r);

/* robot.c: the robots' triangles in the world (the robot i in
 * kenaf-view's colour i) and the chassis top in the body frame */
void kn_rrobot_mesh(const struct kn_rscene *s, struct kn_rmesh *out);
double kn_rrobot_chassis_top(const struct kn_rscene_geom *g);
/* the body frame of robot r in the world */
void kn_rrobot_body(const struct kn_rscene_robot *r, float m[16]);

#endif
