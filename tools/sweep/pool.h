/* The job pool: runs the sweep's cases as child processes, at most `jobs`
 * at once, each reaped with waitpid as it ends. */
#ifndef KN_SWEEP_POOL_H
#define KN_SWEEP_POOL_H

#include <stddef.h>
#include <sys/types.h>

struct kn_sweep_pool_ops {
    /* Starts job i (a child process) in slot 0..jobs-1 (a slot runs one
     * job at a time): its pid, or -1 when it could not start (done is
     * then called with status -1). */
    pid_t (*start)(void *ctx, size_t i, int slot);
    /* Job i ended with waitpid's status (-1: never started) after wall_s. */
    void (*done)(void *ctx, size_t i, int status, double wall_s);
};

/* Runs jobs 0..n-1 in order, at most `jobs` at once. 0, or -1 when
 * waiting failed. */
int kn_sweep_pool_run(size_t n, int jobs, const struct kn_sweep_pool_ops *ops, void *ctx);
/* posix_spawn of argv[0] (found in PATH when it has no '/') with standard
 * input /dev/null and standard output and error into out_path. The pid,
 * or -1 with errno. */
pid_t kn_sweep_spawn(char *const argv[], const char *out_path);
/* The CPU each of `jobs` slots is pinned to (kenaf-sim-case --cpu): when
 * the sweep has exactly as many jobs as it may use CPUs, slot k gets the
 * k-th of them and cpus[k] is set (returns 1); otherwise nothing is
 * pinned (0), so sweeps that share the CPUs (jobs below their number,
 * Slurm tasks of one job each) never pile onto the same one. */
int kn_sweep_pool_cpus(int jobs, int *cpus);
/* Seconds of the monotonic clock. */
double kn_sweep_now(void);

#endif
