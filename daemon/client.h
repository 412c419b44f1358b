/* The client modes of kenaf-simd: --stats, --command and --wait-ready ask
 * a running daemon through its stats socket (stats.h). */
#ifndef KN_CLIENT_H
#define KN_CLIENT_H

#include <stddef.h>

#include "config.h"

#define KN_CLIENT_WAIT_DEFAULT_S 10.0

/* The stats socket to ask: `given` (--socket) when set; else the config's
 * stats_socket; for a config without one (cfg NULL, or the key left out),
 * the first of the default places (sockdir.h, /run/kenaf-simd whatever the
 * uid) where a socket exists, else the first of them. 0, or -1 with a
 * message in err (the config turns the socket off). */
int kn_client_socket(const char *given, const struct kn_config *cfg, char *out, size_t len,
                     char *err, size_t errlen);

/* Prints the stats document (JSON) on stdout; exit status. */
int kn_client_stats(const char *path);

/* Sends one command line, prints the answer; exit status (1 when the
 * daemon refused it). */
int kn_client_command(const char *path, const char *line);

/* Polls the stats until every configured robot runs and its simulator
 * link is up (BACKEND_UP), then prints one line and returns 0; after
 * timeout_s prints what is not up and returns 1. The socket is looked up
 * again on each poll (a daemon just started may not have made it yet). */
int kn_client_wait_ready(const char *given, const struct kn_config *cfg, double timeout_s);

#endif
