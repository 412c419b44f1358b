/* A trial's score record (docs/apparatus.md#trials), sans-I/O: read
 * from the engine judge's verdict (its trial_* keys), written as and read
 * back from score.json (the reader takes files from anywhere: every
 * field checked, each refusal naming its key; fuzzed by fuzz_trial),
 * and the bounds on its success rate. score_html.c draws it. Prefix
 * kn_trialscore_. */
#ifndef KN_TRIALSCORE_H
#define KN_TRIALSCORE_H

#include <stddef.h>
#include <stdio.h>

struct cJSON;

#define KN_TRIALSCORE_MAX_REPS 1000
#define KN_TRIALSCORE_NFAULTS 5

/* The fault kinds in the verdict's and score.json's order: "tip-over",
 * "wall", "lane", "estop", "assist". */
const char *kn_trialscore_fault_name(int k);

struct kn_trialscore {
    char trial[96];       /* the scenario's name */
    char trial_file[512]; /* as given to kenaf-sim-run */
    char apparatus[64];   /* its terrain type, "stepfield_e2828" */
    char course[16];      /* "traverse" or "figure8" */
    char program[256];
    char date[40];   /* UTC, ISO 8601: the sessions' order */
    long long seed;  /* -1: the scenario's own */
    char verdict[8]; /* pass, fail, error */
    char mode[16];   /* the verdict's mode */
    char why[600];
    double sim_s;
    int asked;         /* repetitions asked for */
    int min_successes; /* to pass */
    int completed;
    int successes;
    int faults;
    int by_kind[KN_TRIALSCORE_NFAULTS];
    double unfinished_s; /* a repetition under way at the end: its time; -1 none */
    char ended[16];      /* all, tip-over, end */
    double lower80;      /* the exact one-sided lower bound at 80 % */
    double wilson_lo, wilson_hi;
    double gate_start[4], gate_finish[4]; /* x0, y0, x1, y1 in the world */
    int has_gates;
    double times[KN_TRIALSCORE_MAX_REPS]; /* completed repetitions */
    int rep_faults[KN_TRIALSCORE_MAX_REPS];
};

/* The verdict file's text (key=value lines) into s; -1 with the reason
 * when it holds no trial or a value is wrong. Leaves the fields the
 * verdict does not have (trial_file, program, date, seed) as they are. */
int kn_trialscore_from_verdict(const char *text, size_t len, struct kn_trialscore *s, char *err,
                               size_t errlen);
/* The bounds from the counts (common/binom.h). */
void kn_trialscore_bounds(struct kn_trialscore *s);
/* score.json; NULL when out of memory. */
struct cJSON *kn_trialscore_json(const struct kn_trialscore *s);
/* score.json's text back into s; -1 with the key named. */
int kn_trialscore_parse(const char *text, size_t len, struct kn_trialscore *s, char *err,
                        size_t errlen);

/* The mean time of the completed repetitions; NAN without any. */
double kn_trialscore_mean_time(const struct kn_trialscore *s);

/* A trajectory to draw: n samples of time, x, y and yaw. */
struct kn_trialscore_path {
    size_t n;
    const double *t, *x, *y, *yaw;
};

/* score.html: standalone, the score's tables and the path with the
 * gates. 0, or -1 on a write error. */
int kn_trialscore_html(FILE *f, const struct kn_trialscore *s,
                       const struct kn_trialscore_path *path);
/* history.html: sessions s[0..n) in date order, a table and charts of
 * the successes and the mean time per session. 0 or -1. */
int kn_trialscore_history_html(FILE *f, const struct kn_trialscore *const *s, size_t n);

#endif
