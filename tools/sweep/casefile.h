/* A sweep's scenario read from disk and each case's scenario made from
 * it: the variant applied, the parameters' changes made, every relative
 * path made absolute, so OUT/cases/<id>/scenario.json runs alone. */
#ifndef KN_SWEEP_CASEFILE_H
#define KN_SWEEP_CASEFILE_H

#include <limits.h>
#include <stddef.h>

#include "sweep.h"

struct cJSON;

struct kn_sweep_scen {
    char path[PATH_MAX]; /* absolute */
    char *bytes;         /* the file as read (the sweep's hash covers it) */
    size_t len;
    struct cJSON *root; /* variant applied, paths absolute */
    char name[64];      /* the scenario's "name" (or the file's) */
    char terrain_type[32];
    char terrains_dir[PATH_MAX]; /* where rough.json & co are ("" unless asked) */
};

/* Reads the sweep's scenario (sw->scenario relative to the sweep file
 * sweep_path). 0, or -1 with the reason. */
int kn_sweep_scen_load(const char *sweep_path, const struct kn_sweep *sw, struct kn_sweep_scen *sc,
                       char *err, size_t errlen);
void kn_sweep_scen_free(struct kn_sweep_scen *sc);
/* Case c's scenario as JSON text (caller frees), or NULL. */
char *kn_sweep_case_scenario(const struct kn_sweep_scen *sc, const struct kn_sweep *sw,
                             const struct kn_sweep_case *c);

#endif
