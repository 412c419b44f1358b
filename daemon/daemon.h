/* The kenaf-simd process: its robots, stats socket, signals (SIGTERM and
 * SIGINT stop, SIGHUP reloads) and systemd notifications, on one libuv
 * loop. */
#ifndef KN_DAEMON_H
#define KN_DAEMON_H

#include <stddef.h>

#include "config.h"

/* Runs until stopped. cfg is taken over (freed by the daemon);
 * log_override < 0 means "use the config's log level". Returns the exit
 * status: 0 after a clean stop, 1 when start-up failed. */
int kn_daemon_run(struct kn_config *cfg, const char *config_path, int log_override);

/* Loads and checks a config as start-up and reload do: the file (schema
 * and rules, config.h), then what start-up needs (config_check.h).
 * Returns the number of problems, each a line in err; 0: cfg is ready. */
size_t kn_daemon_load_config(const char *path, struct kn_config *cfg, char *err, size_t errlen);

#endif
