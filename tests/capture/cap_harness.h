/* Helpers for the capture and replay system tests, on top of the daemon
 * harness (tests/daemon/harness.h): kenaf-simd started with extra command
 * line arguments (--capture), commands through `kenaf-simd --command`,
 * running a tool to completion with its output. */
#ifndef KN_TEST_CAP_HARNESS_H
#define KN_TEST_CAP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* h_daemon_launch, not under KN_WRAP: more arguments after "--config
 * FILE" (NULL-terminated, may be NULL); name keeps the files of several
 * daemons in one test apart. */
void c_daemon_start(struct h_daemon *d, const char *name, const char *robots_json,
                    const char *const args[]);

/* Runs argv to its end (at most timeout_ms); its stdout into out (cut to
 * outlen). Returns the exit code, 128+signal, or -1 on timeout. */
int c_run(char *const argv[], char *out, size_t outlen, int timeout_ms);

/* `kenaf-simd --command LINE --socket <the daemon's stats socket>`:
 * fails the test unless the daemon accepts the command; returns its answer. */
const char *c_command(struct h_daemon *d, const char *line);

/* Waits until the stats say the last capture is written and closed. */
bool c_capture_closed(struct h_daemon *d, int timeout_ms);

#endif
