/* File descriptors for a fleet: how many a config's robots need, and the
 * RLIMIT_NOFILE check made before they start, so a daemon with too low a
 * limit refuses at once with the numbers instead of failing robot by
 * robot later (a socket() that returns EMFILE deep in a reconnect). */
#ifndef KN_FDLIMIT_H
#define KN_FDLIMIT_H

#include <stddef.h>

#include "config.h"

/* Descriptors the daemon holds besides its robots: stdio, the loop's
 * epoll and signal pipes, the thread pool's, the stats socket and its
 * clients, the capture file, a reload's config file. */
#define KN_FDLIMIT_BASE 64

/* An upper estimate of the descriptors robot entry r holds: its UDP
 * socket, and its simulator link (one TCP connection; a spawned engine
 * adds its three pipes; Gazebo Classic and gz hold several connections). */
size_t kn_fdlimit_robot(const struct kn_cfg_robot *r);

/* KN_FDLIMIT_BASE plus every robot's estimate. */
size_t kn_fdlimit_need(const struct kn_config *cfg);

/* Makes RLIMIT_NOFILE hold what cfg needs: the soft limit is raised (to
 * the hard limit at most) when it is lower. Returns 0 when it holds,
 * else -1 with one line in err naming the robots, the descriptors they
 * need and the limits. *soft gets the soft limit in force (may be NULL). */
int kn_fdlimit_ensure(const struct kn_config *cfg, size_t *soft, char *err, size_t errlen);

#endif
