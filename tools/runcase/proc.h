/* kenaf-sim-case's child processes: started with fork and exec so that
 * each dies with kenaf-sim-case (PR_SET_PDEATHSIG), watched through a
 * pidfd (no polling, no SIGCHLD handler), and their output pipes drained
 * into files so that a child never blocks on a full pipe. */
#ifndef KN_RUNCASE_PROC_H
#define KN_RUNCASE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct kn_runcase_child {
    pid_t pid;  /* 0: none (or reaped) */
    int pidfd;  /* readable once the child has ended; -1: none */
    int status; /* the shell's $? once reaped: code, or 128 + signal */
    bool reaped;
};

/* One environment change for the child: name=value (value NULL: keep). */
struct kn_runcase_env {
    const char *name, *value;
};

/* Starts argv (looked up in PATH when it has no '/') with stdin in_fd,
 * stdout out_fd and stderr err_fd, and env's variables set. 0, or -1
 * with errno (the child could not be made; a program that cannot be
 * executed ends with status 127 and says why on its stderr). */
int kn_runcase_spawn(struct kn_runcase_child *c, char *const argv[], int in_fd, int out_fd,
                     int err_fd, const struct kn_runcase_env *env, size_t nenv);

/* True once the child has ended (its pidfd readable); never blocks. */
bool kn_runcase_ended(const struct kn_runcase_child *c);

/* Reaps an ended child: status set, pidfd closed. Blocks until it ends. */
void kn_runcase_reap(struct kn_runcase_child *c);

/* SIGTERM (sig) to a child that has not been reaped. */
void kn_runcase_kill(const struct kn_runcase_child *c, int sig);

/* Pins this process, and so every child it starts afterwards, to CPU
 * `cpu` (--cpu): a lockstep run's processes wake each other hundreds of
 * times per simulated second, and on one CPU a wake-up needs no
 * cross-CPU interrupt. 0, or -1 with errno (the run then goes on
 * unpinned: only its speed depends on it). */
int kn_runcase_pin(int cpu);

#endif
