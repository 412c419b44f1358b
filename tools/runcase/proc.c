/* kenaf-sim-case's child processes: see proc.h. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* fd onto target in the child, open across exec. */
static int place(int fd, int target)
{
    if (fd == target) {
        int fl = fcntl(fd, F_GETFD);
        return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
    return dup2(fd, target) < 0 ? -1 : 0;
}

int kn_runcase_spawn(struct kn_runcase_child *c, char *const argv[], int in_fd, int out_fd,
                     int err_fd, const struct kn_runcase_env *env, size_t nenv)
{
    memset(c, 0, sizeof *c);
    c->pidfd = -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* no child outlives kenaf-sim-case, however it ends (even SIGKILL) */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (place(in_fd, 0) || place(out_fd, 1) || place(err_fd, 2))
            _exit(127);
        for (size_t i = 0; i < nenv; i++)
            if (env[i].value && setenv(env[i].name, env[i].value, 1) < 0)
                _exit(127);
        execvp(argv[0], argv);
        dprintf(2, "kenaf-sim-case: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    c->pid = pid;
    c->pidfd = pidfd_open(pid, 0);
    if (c->pidfd < 0) {
        int e = errno;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        c->pid = 0;
        errno = e;
        return -1;
    }
    return 0;
}

bool kn_runcase_ended(const struct kn_runcase_child *c)
{
    if (c->pid <= 0 || c->reaped)
        return true;
    struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
    return poll(&p, 1, 0) > 0;
}

void kn_runcase_reap(struct kn_runcase_child *c)
{
    if (c->pid <= 0 || c->reaped)
        return;
    int st = 0;
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
        ;
    c->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
    c->reaped = true;
    close(c->pidfd);
    c->pidfd = -1;
}

void kn_runcase_kill(const struct kn_runcase_child *c, int sig)
{
    if (c->pid > 0 && !c->reaped)
        kill(c->pid, sig);
}

int kn_runcase_pin(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        errno = EINVAL;
        return -1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}
