/* One sweep run: the sweep file read and expanded, the output directory
 * checked, the cases run through kenaf-sim-case in the job pool,
 * results, JUnit and (for a whole sweep) the report written. */
#ifndef KN_SWEEP_RUN_H
#define KN_SWEEP_RUN_H

struct kn_sweep_opts {
    const char *runcase; /* kenaf-sim-case, which runs one case */
    const char *engine;  /* kenaf-engine and kenaf-simd, for it */
    const char *simd;
    const char *sweep;   /* the sweep file */
    const char *out;     /* NULL: sweep-out/<name> */
    const char *case_id; /* NULL: every case (of the shard) */
    const char *idle;    /* NULL: kenaf-sim-run's default */
    const char *lib;     /* the simulation library's directory; NULL: none */
    int jobs;
    int shard_k, shard_n; /* n 0: no shard */
    long sample;          /* 0: the file's */
    char **prog;          /* PROGRAM ARGS..., NULL-terminated */
};

/* The exit status: 0 every case judged, 3 a case errored, 2 bad input. */
int kn_sweep_run(const struct kn_sweep_opts *o);
/* The prefix of every line kenaf-sweep prints. */
#define KN_SWEEP_ME "kenaf-sim-run"

#endif
