/* A built terrain as an SDF world for Gazebo Classic 11 and gz-sim (SDF
 * 1.6, which both load): the same parts the engine collides with, one
 * static model "terrain" with a collision and a visual per part, named by
 * the part's tag (ground_0, obstacle_3, wall_12, pit_1), and an
 * apparatus's start and finish gates as visual-only models. kenaf-engine
 * --export-sdf writes it (docs/apparatus.md). */
#ifndef KN_ENGINE_TERRAIN_SDF_H
#define KN_ENGINE_TERRAIN_SDF_H

#include <stddef.h>
#include <stdio.h>

#include "terrain.h"

/* The tag's name in part names: ground, obstacle, pit, wall. */
const char *kn_sdf_tag_name(int tag);
/* Writes the world; source is the terrain file, named (without its
 * directory) in a comment. -1 with
 * the reason when the terrain has a part SDF is not given here (a
 * heightfield) or the stream fails. */
int kn_sdf_write(FILE *f, const struct kn_terrain *t, const char *source, char *err, size_t errlen);

#endif
