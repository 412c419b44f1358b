/* The files a spawned kenaf-engine reads: its terrain and its robot.
 * kenaf-simd resolves a configured name or file to a path itself (the
 * engine gets --terrain FILE --robot FILE), and checks the file with the
 * engine's own loaders (engine/terrain.c and engine/robot_file.c are
 * compiled into kenaf-simd for this), so a config that passes the check
 * gives the engine files it can load.
 *
 * A name (letters, digits, '_', '-') is NAME.json in the engine's data
 * folder, terrains/ or robots/; anything with a '/' or ending in .json is
 * a file, relative to the working directory. The data folder is the one
 * kenaf-engine itself uses (engine/datadir.c, kn_datadir_of): the
 * KENAF_CONFIG_DIR environment variable, else the source tree's config/
 * for an engine inside the build tree, else <datadir>/kenaf-sim when it
 * has a robots/ folder, else the source tree's config/. */
#ifndef KN_ENGINE_FILES_H
#define KN_ENGINE_FILES_H

#include <stddef.h>

enum kn_engfiles_kind { KN_ENGFILES_TERRAIN, KN_ENGFILES_ROBOT };

/* The data folder of the kenaf-engine executable at exe. */
void kn_engfiles_dir(const char *exe, char *out, size_t len);

/* The file for a configured name or file. 0, or -1 with the reason (a
 * path too long) in why. */
int kn_engfiles_path(enum kn_engfiles_kind kind, const char *dir, const char *spec, char *out,
                     size_t len, char *why, size_t whylen);

/* Loads the file as the engine would. 0, or -1 with the engine's message
 * (naming the file, the key, and for a missing file the errno text). */
int kn_engfiles_check(enum kn_engfiles_kind kind, const char *path, char *why, size_t whylen);

/* "a, b, c": the names in the data folder's terrains/ or robots/, sorted,
 * for messages ("" when there are none). */
void kn_engfiles_names(enum kn_engfiles_kind kind, const char *dir, char *out, size_t len);

/* "terrain" or "robot". */
const char *kn_engfiles_noun(enum kn_engfiles_kind kind);

#endif
