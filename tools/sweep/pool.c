/* The job pool (pool.h): posix_spawn and waitpid, no shell in between. */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

double kn_sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pid_t kn_sweep_spawn(char *const argv[], const char *out_path)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    pid_t pid = -1;
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!rc)
        rc = posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (!rc)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (!rc)
        rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        errno = rc;
        return -1;
    }
    return pid;
}

int kn_sweep_pool_cpus(int jobs, int *cpus)
{
    cpu_set_t set;
    if (jobs < 1 || sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != jobs)
        return 0;
    int k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < jobs; c++)
        if (CPU_ISSET(c, &set))
            cpus[k++] = c;
    return k == jobs;
}

struct slot {
    pid_t pid;
    size_t i;
    double t0;
};

int kn_sweep_pool_run(size_t n, int jobs, const struct kn_sweep_pool_ops *ops, void *ctx)
{
    if (jobs < 1)
        jobs = 1;
    struct slot *s = calloc((size_t)jobs, sizeof *s);
    if (!s)
        return -1;
    size_t next = 0;
    int running = 0, rc = 0;
    while (next < n || running > 0) {
        for (int k = 0; k < jobs && next < n; k++) {
            if (s[k].pid > 0)
                continue;
            size_t i = next++;
            double t0 = kn_sweep_now();
            pid_t pid = ops->start(ctx, i, k);
            if (pid <= 0) {
                ops->done(ctx, i, -1, 0);
                k--; /* the slot is still free */
                continue;
            }
            s[k] = (struct slot){ pid, i, t0 };
            running++;
        }
        if (running == 0)
            continue;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        for (int k = 0; k < jobs; k++)
            if (s[k].pid == pid) {
                s[k].pid = 0;
                running--;
                ops->done(ctx, s[k].i, st, kn_sweep_now() - s[k].t0);
            }
    }
    free(s);
    return rc;
}
