/* Whether a program a user names can be run, said before anything
 * starts: a path must be an executable file, a bare name must be one in
 * PATH. kenaf-sim-case and kenaf-sweep refuse with its words (kenaf-sim-run
 * says the same in shell), so a missing controller is an error of the run,
 * never a failing controller. */
#ifndef KN_COMMON_RUNNABLE_H
#define KN_COMMON_RUNNABLE_H

#include <stddef.h>

/* 0 when prog can be run; else -1 with why: "cannot run PROG: no such
 * file", "... not an executable file" or "... not found in PATH". path is
 * the search list for a bare name (NULL: "/usr/bin:/bin", as execvp). */
int kn_runnable_check(const char *prog, const char *path, char *why, size_t len);

#endif
