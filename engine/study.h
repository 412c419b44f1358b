/* What kenaf-engine --validate says under a row that disagrees with its
 * reference: a geometric quantity measured in the row's own run (how high
 * the front flipper tips reach with the body level, before a step; with
 * the flipper assist, the highest corner the CoG can pass standing on the
 * rear flippers and how close it came; how far the tips reach ahead of
 * the CoG, before a trench), and each perturbation
 * of the row's study file (its "study" key) run at the same parameter
 * value, with whether it flips the outcome to the reference's. */
#ifndef KN_ENGINE_STUDY_H
#define KN_ENGINE_STUDY_H

#include <stdio.h>

#include "scenario.h"

struct kn_study_item {
    char title[160]; /* what the perturbation changes (the study variant's title) */
    int passed;      /* its outcome */
    int flips;       /* the outcome is the reference's, within the model's invariant */
    double depth;    /* the run's deepest penetration [m] */
    char why[200];
};

struct kn_study {
    char measured[400]; /* "" when the terrain has no measure here */
    char file[160];     /* the study file's name, "" without one */
    struct kn_study_item *items;
    int n;
};

/* Fills st for scenario sc, whose run res (with its samples) disagreed
 * with the reference: the measure, then every variant of sc's study file
 * whose parameter value is sc's, robot replacing their robot files when
 * given. -1 with err set when the study file cannot be run. */
int kn_study_make(const struct kn_scenario *sc, const struct kn_result *res, const char *robot,
                  struct kn_study *st, char *err, size_t errlen);
void kn_study_free(struct kn_study *st);

/* The lines under the row in the table (each starts with four blanks). */
void kn_study_print(FILE *out, const struct kn_study *st);
/* The row's JSON members after its others: , "measured": ..., "study": [...] */
void kn_study_json(FILE *out, const struct kn_study *st);

#endif
