/* Small helpers around cJSON for the engine's robot, terrain and scenario
 * files: read a file, fetch a number, string or vector by key with range
 * checks, and say exactly which key was wrong. */
#ifndef KN_ENGINE_JSONUTIL_H
#define KN_ENGINE_JSONUTIL_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Largest file the engine reads (a heightfield or a scenario). */
#define KN_JSON_MAX_FILE (4u << 20)

/* Reads a whole file into a NUL-terminated buffer (caller frees). */
char *kn_json_slurp(const char *path, size_t *len, char *err, size_t errlen);

/* Reads and parses a JSON file; the root must be an object. */
cJSON *kn_json_load(const char *path, char *err, size_t errlen);

/* Merges src over dst, the rule of scenario variants, robot and terrain
 * changes and sweep cases: objects key by key, anything else replaces.
 * 0, or -1 when out of memory (dst then partly merged). */
int kn_json_merge(cJSON *dst, const cJSON *src);

/* Required number in [lo, hi]. Returns 0, or -1 with "ctx: key ..." in err. */
int kn_json_num(const cJSON *o, const char *key, double lo, double hi, double *out, const char *ctx,
                char *err, size_t errlen);
/* Optional number: keeps *out when the key is absent. */
int kn_json_num_opt(const cJSON *o, const char *key, double lo, double hi, double *out,
                    const char *ctx, char *err, size_t errlen);
/* Optional integer in [lo, hi]. */
int kn_json_int_opt(const cJSON *o, const char *key, int lo, int hi, int *out, const char *ctx,
                    char *err, size_t errlen);
/* Required (or optional, if opt) array of exactly n numbers in [lo, hi]. */
int kn_json_vec(const cJSON *o, const char *key, int n, double lo, double hi, double *out, int opt,
                const char *ctx, char *err, size_t errlen);
/* Optional string copied into out (size outlen); keeps out when absent. */
int kn_json_str_opt(const cJSON *o, const char *key, char *out, size_t outlen, const char *ctx,
                    char *err, size_t errlen);
/* Optional boolean. */
int kn_json_bool_opt(const cJSON *o, const char *key, int *out, const char *ctx, char *err,
                     size_t errlen);

/* Fails when o has a key not in the NULL-terminated list: typos in a file
 * must not silently fall back to defaults. */
int kn_json_only_keys(const cJSON *o, const char *const *keys, const char *ctx, char *err,
                      size_t errlen);

/* Joins dir-of(base) and rel unless rel is absolute. */
void kn_path_join(const char *base_file, const char *rel, char *out, size_t outlen);

#endif
