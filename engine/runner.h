/* The scenario runner's command-line modes, kept out of main.c so the
 * server mode can share main: run one scenario file (every variant or one)
 * with CSV/SVG output, and run the whole validation suite as a table. */
#ifndef KN_ENGINE_RUNNER_H
#define KN_ENGINE_RUNNER_H

#include <stdio.h>

struct kn_run_opts {
    const char *csv; /* trajectory CSV path or NULL */
    const char *svg; /* plot path or NULL */
    int variant;     /* -1: all */
    int quiet;
    const char *robot; /* robot file replacing the scenarios' own, or NULL */
    int study;         /* a row that disagrees gets its measure and study (study.h) */
};

/* Runs the variants of one scenario file and prints one line per run.
 * Returns 0 when every outcome matched its expectation (and the outcomes are
 * monotone where the file asks for it), 1 when one did not, 2 on errors. */
int kn_run_scenario_file(const char *path, const struct kn_run_opts *o, FILE *out);

/* Runs every *.json scenario in dir (sorted by name) and the sanity checks,
 * printing a table (or JSON with json != 0): scenario, expected, got, RTF,
 * detail. The sanity checks use robot_path; the scenarios use it too when
 * robot_given, else their own robot file. Same return codes as above. */
int kn_run_validation(const char *dir, const char *robot_path, int robot_given, int json,
                      FILE *out);

/* --check-trial: loads a trial file (variant 0) and prints what it asks
 * on one line; 0, or 2 with the reason on stderr when it does not load
 * or its criterion is not a trial. */
int kn_run_check_trial(const char *path, FILE *out);

/* Where the shipped config lives (robot, terrains, scenarios). */
const char *kn_run_config_dir(void);

#endif
