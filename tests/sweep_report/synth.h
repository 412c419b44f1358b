/* Synthetic sweep output directories for the report's tests: a real
 * sweep.json and real cases/<id>/result.json files (and a trajectory.svg
 * beside each), laid out as kenaf-sweep writes them, with the outcome of
 * each case chosen by the test. Two parameters: step_height_m (harder
 * higher, 0.10 + 0.01 i) and seed (1, 2, ...). */
#ifndef KN_TEST_SWEEP_SYNTH_H
#define KN_TEST_SWEEP_SYNTH_H

#include <stdbool.h>
#include <stddef.h>

enum synth_outcome { SYN_PASS, SYN_FAIL, SYN_ERROR, SYN_NONE /* no result file */ };

struct synth {
    const char *name;
    const char *hash;     /* 16 hex digits */
    int nheights;         /* step_height_m = 0.10 + 0.01 i */
    int nseeds;           /* seed = 1 .. nseeds */
    int shard_k, shard_n; /* 0: no shard; else only cases i % n == k - 1 get files */
    /* the outcome of the case with height index h and seed s */
    enum synth_outcome (*outcome)(int h, int seed, void *arg);
    void *arg;
    bool no_plots; /* no trajectory.svg (fewer files where none is read) */
};

/* Writes the sweep into dir (created). */
void synth_write(const char *dir, const struct synth *sw);
/* Case number i's id (expansion order: height outer, seed inner). */
void synth_id(int i, char id[11]);
/* The number of the case with height index h and seed s. */
int synth_index(const struct synth *sw, int h, int seed);

#endif
