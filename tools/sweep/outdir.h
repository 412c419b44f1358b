/* A sweep's output directory (docs/scenario-runs.md, "Sweeps"): sweep.json,
 * cases/<id>/result.json, results.json. What is written here is
 * byte-identical across job counts, shards and machines (no wall times,
 * no paths), except sweep.json's "shard" and timing.json. */
#ifndef KN_SWEEP_OUTDIR_H
#define KN_SWEEP_OUTDIR_H

#include <stddef.h>
#include <stdint.h>

#include "sweep.h"

struct cJSON;

/* One case's outcome, as kenaf-sim-run --result gives it. */
struct kn_sweep_result {
    char status[16]; /* pass | fail | error */
    char mode[16];
    char why[1024];
    double sim_s;
    int has_traj;
    uint64_t traj_fnv;
};

/* Creates dir and its parents (mkdir -p). 0, or -1 with the reason. */
int kn_sweep_mkdirs(const char *dir, char *err, size_t errlen);
/* Writes text to path (through a temporary file, renamed). 0 or -1. */
int kn_sweep_write_file(const char *path, const char *text, char *err, size_t errlen);
/* Reads and parses a JSON file; NULL when missing or bad. */
struct cJSON *kn_sweep_read_json(const char *path);

/* The case's params object ({"step_height_m": 0.1, ...}). */
struct cJSON *kn_sweep_params_json(const struct kn_sweep *sw, const struct kn_sweep_case *c);
/* OUT/sweep.json. shard_n 0: "shard": null. sweep_file and program (the
 * command line after --, NULL-terminated), when given, let the report
 * print the command that reruns a case. */
int kn_sweep_write_sweep_json(const char *out, const struct kn_sweep *sw, const char *scen_name,
                              uint64_t hash, int shard_k, int shard_n, const char *sweep_file,
                              char *const *program, char *err, size_t errlen);
/* OUT/cases/<id>/result.json. */
int kn_sweep_write_result(const char *out, const struct kn_sweep *sw, const struct kn_sweep_case *c,
                          const struct kn_sweep_result *r, char *err, size_t errlen);
/* OUT/results.json from every case of OUT/sweep.json that has a
 * result.json in OUT, in case order. */
int kn_sweep_write_results(const char *out, char *err, size_t errlen);
/* Reads kenaf-sim-run --result's key=value lines. 0, or -1 when the file
 * is missing or has no status. */
int kn_sweep_read_run_result(const char *path, struct kn_sweep_result *r);
/* FNV-1a 64 of a file's bytes. 0, or -1 when it cannot be read. */
int kn_sweep_file_fnv(const char *path, uint64_t *h);

/* OUT/junit.xml: one test case per case with a result in OUT (junit.c). */
int kn_sweep_write_junit(const char *out, char *err, size_t errlen);

#endif
