/* The judgement of one scenario run from kenaf-engine's verdict file
 * (key=value lines: verdict, why, sim_s, mode, time_limit, must_exit) and
 * how the program ended: sans-I/O, so it is unit tested and fuzzed
 * (tests/runcase, tests/fuzz fuzz_runcase_verdict). The same rules
 * kenaf-sim-run's scenario runs have always followed
 * (docs/scenario-runs.md). */
#ifndef KN_RUNCASE_VERDICT_H
#define KN_RUNCASE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#define KN_RUNCASE_WHY_MAX 2048

struct kn_runcase_outcome {
    char status[16];                    /* pass | fail | error (or the verdict's own word) */
    char why[KN_RUNCASE_WHY_MAX + 128]; /* room for the words around the verdict's */
    char mode[32]; /* none crash tip-over time-out limit stall criterion error */
    char sim[64];  /* sim_s as the engine wrote it */
};

/* The value of the first line "KEY=..." in text[0..len) into out (always
 * NUL-terminated, cut to outlen); "" when there is none. */
void kn_runcase_verdict_get(const char *text, size_t len, const char *key, char *out,
                            size_t outlen);

/* The failure mode when the verdict has no mode= line: from the verdict
 * word and the reason's words. */
void kn_runcase_verdict_mode(const char *text, size_t len, const char *v, const char *why,
                             char *out, size_t outlen);

/* The outcome of a run whose engine wrote the verdict text (non-empty):
 * exited says the program ended on its own while the engine still ran,
 * with shell-style status cstatus (128 + signal when a signal ended it). */
void kn_runcase_judge(const char *text, size_t len, bool exited, int cstatus,
                      struct kn_runcase_outcome *o);

#endif
