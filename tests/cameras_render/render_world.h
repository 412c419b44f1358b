/* The world the renderer's tests and benchmark draw: flat ground (the
 * engine's "flat" terrain as kenaf-simd describes it) and the shipped
 * Kenaf standing at the origin, facing +x. */
#ifndef KN_TEST_RENDER_WORLD_H
#define KN_TEST_RENDER_WORLD_H

#include "scene.h"

#define RENDER_WORLD_FLAT                                                                     \
    "{\"generation\": 1, \"backend\": \"engine\", \"robot\": null, \"terrain\": "             \
    "{\"type\": \"flat\", \"parts\": [{\"kind\": \"plane\", \"c\": [0, 0, 0], \"n\": [0, 0, " \
    "1]}]}, \"terrain_pose\": null}"

/* the robot on the ground: its body origin on the pulley axis, one
 * pulley radius up */
static inline struct kn_rscene_robot render_world_robot(double x, double y, double yaw)
{
    struct kn_rscene_robot r = { .present = 1, .pos = { x, y, 0.08 }, .rpy = { 0, 0, yaw } };
    return r;
}

#endif
