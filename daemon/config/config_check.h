/* What start-up needs beyond a valid config file, checked without
 * starting anything, so that `kenaf-simd --check-config`, start-up and
 * SIGHUP reload refuse the same configs and name every problem at once:
 *   - the config file, and a spawned engine's executable, are owned by
 *     root or the daemon's user and writable by nobody else (filetrust.h);
 *   - each backend is built into this kenaf-simd;
 *   - each listen address belongs to this host (a UDP socket binds to it;
 *     the port is not tried, since a running daemon holds it);
 *   - each simulator host name resolves (getaddrinfo);
 *   - for a spawned engine: the kenaf-engine executable is found, and its
 *     terrain and robot files load with the engine's own loaders
 *     (engine_files.h);
 *   - the stats socket's directory is usable (sockdir.h; not created);
 *   - stats_socket_group names a group of this host (or is a number).
 * Listen addresses that clash between robots are the loader's rule
 * (config.c). */
#ifndef KN_CONFIG_CHECK_H
#define KN_CONFIG_CHECK_H

#include <stddef.h>

#include "config.h"

/* Appends one line per problem to err ("FILE: $.robots[0].backend.engine.
 * terrain: expected ..., got ..."); returns how many. A config that did
 * not load completely (kn_config_load_all) can be checked: values the
 * loader refused hold their defaults. */
size_t kn_cfgcheck_run(const struct kn_config *cfg, char *err, size_t errlen);

#endif
