/* What Linux says of a running process in /proc/PID/stat, for the
 * benchmarks and tests that measure a program from outside: the CPU time
 * it used. One reader, so the field counting is written once. */
#ifndef KN_PROCSTAT_H
#define KN_PROCSTAT_H

#include <sys/types.h>

/* utime + stime of process pid, in clock ticks (sysconf(_SC_CLK_TCK) a
 * second), or -1 when it is gone or the file does not parse. */
long long kn_procstat_cpu_ticks(pid_t pid);

#endif
