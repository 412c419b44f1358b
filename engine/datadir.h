/* The data folder of a kenaf-engine binary (robots/, terrains/,
 * scenarios/). */
#ifndef KN_ENGINE_DATADIR_H
#define KN_ENGINE_DATADIR_H

#include <stddef.h>

/* KENAF_CONFIG_DIR when set; else for a binary exe inside this build tree
 * the source tree's config/; else <datadir>/kenaf-sim when it exists; else
 * the source tree's config/. */
void kn_datadir_of(const char *exe, char *out, size_t len);

#endif
