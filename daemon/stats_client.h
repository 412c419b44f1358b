/* The stats socket's client side (stats.h is the daemon's server): one
 * line asked, the JSON answer read, and whether that answer shows every
 * robot up. Apart from the server so that a program that only asks (the
 * case runner kenaf-sim-case, tools/runcase) links libc and cJSON, not
 * libuv and the daemon. */
#ifndef KN_STATS_CLIENT_H
#define KN_STATS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The longest command line the server takes. */
#define KN_STATS_COMMAND_MAX 1024
#define KN_STATS_ANSWER_MAX (16 * 1024 * 1024)

/* Client: sends one line ("stats", "capture status", ...), returns the
 * daemon's whole answer (malloc'd, NUL-terminated), or NULL with the real
 * cause in err. timeout_ms bounds the whole exchange. A daemon that got
 * the line too late answers with the stats instead (stats.c). */
char *kn_stats_ask(const char *path, const char *line, int timeout_ms, char *err, size_t errlen);

/* Client: the stats document, copied to out. 0, or -1 with a message on
 * stderr. */
int kn_stats_fetch(const char *path, FILE *out, int timeout_ms);

/* True when the stats document `text` shows every robot up (BACKEND_UP)
 * and none failed to start; otherwise what is not up goes to why, and
 * the names of those up to ready (both always NUL-terminated). */
bool kn_stats_all_up(const char *text, char *ready, size_t rlen, char *why, size_t wlen);

/* One look as kenaf-simd --wait-ready takes it: the stats asked (for at
 * most left_s, within 1..5 s) and kn_stats_all_up on the answer; a daemon
 * that does not answer is not up, and why says so. */
bool kn_stats_ready(const char *path, double left_s, char *ready, size_t rlen, char *why,
                    size_t wlen);

#endif
