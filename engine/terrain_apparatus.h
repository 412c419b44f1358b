/* The test apparatus of the ASTM E54 standard test methods for response
 * robots (docs/apparatus.md) as engine terrains: each one a lane of a
 * given width with containment walls (KN_TAG_WALL), its obstacle ahead of
 * the terrain origin, and start and finish gates. A terrain file names one
 * by its "type"; terrain.c hands such a file to kn_apparatus_from_json. */
#ifndef KN_ENGINE_TERRAIN_APPARATUS_H
#define KN_ENGINE_TERRAIN_APPARATUS_H

#include <stddef.h>

#include "terrain.h"

struct cJSON;

enum kn_apparatus {
    KN_APP_STEPFIELD,  /* stepfield_e2828: symmetric stepfield, ASTM E2828 */
    KN_APP_PITCH_ROLL, /* pitch_roll_ramps: continuous pitch/roll ramps, ASTM E2826 */
    KN_APP_CROSSING,   /* crossing_ramps: crossing pitch/roll ramps, ASTM E2827 */
    KN_APP_GAPS,       /* gaps: ASTM E2801 */
    KN_APP_HURDLES,    /* hurdles: ASTM E2802 */
    KN_APP_INCLINE,    /* inclined_plane: ASTM E2803 */
    KN_APP_STAIRS,     /* stairs_landing: ASTM E2804 */
    KN_APP_FIGURE8,    /* figure8: sustained speed, ASTM E2829 */
    KN_APP_COUNT
};

/* The apparatus a terrain type names, or -1 when it names none. */
int kn_apparatus_lookup(const char *type);
/* Its terrain type ("stepfield_e2828") and its standard ("ASTM E2828"). */
const char *kn_apparatus_name(int a);
const char *kn_apparatus_standard(int a);
/* Reads an apparatus's terrain file object (its type already looked up)
 * and builds it; -1 with a message naming the file and key. */
int kn_apparatus_from_json(const struct cJSON *o, const char *ctx, struct kn_terrain *t, char *err,
                           size_t errlen);
/* Fills t->parts from the apparatus's parameters (kn_terrain_build calls
 * it for KN_TERRAIN_APPARATUS); -1 when they do not fit. */
int kn_apparatus_build(struct kn_terrain *t, char *err, size_t errlen);

#endif
