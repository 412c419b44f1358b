/* Engine sanity checks (docs/engine.md, validation suite: drop and settle,
 * static slope, frame invariance, left/right symmetry, energy, servo stall
 * and reach, determinism). Each builds its own worlds through the world API,
 * measures, and compares with the thresholds listed there; the validation
 * table and the Check tests both run them. */
#ifndef KN_ENGINE_SANITY_H
#define KN_ENGINE_SANITY_H

#include "params.h"

struct kn_sanity_result {
    int passed;
    char why[256];
    double sim_s, cpu_s;
};

struct kn_sanity {
    const char *name;
    const char *title;
    int (*run)(const struct kn_robot_params *rp, struct kn_sanity_result *r);
};

extern const struct kn_sanity kn_sanity_checks[];
extern const int kn_sanity_count;

/* Runs one check by name; -1 if there is no such check or it could not run. */
int kn_sanity_run(const char *name, const struct kn_robot_params *rp, struct kn_sanity_result *r);

#endif
