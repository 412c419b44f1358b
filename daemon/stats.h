/* Stats on request: a Unix stream socket where kenaf-simd writes one JSON
 * document to each client and closes; its client side is stats_client.h. */
#ifndef KN_STATS_H
#define KN_STATS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <uv.h>

#include "stats_client.h"

struct kn_stats_server;

/* Returns a malloc'd JSON text (freed by the server) or NULL. */
typedef char *(*kn_stats_render_fn)(void *ctx);

/* A command the daemon answers itself ("estop ..."): the words after the
 * command's name, and who asked ("uid 1000 (ops) pid 4242", from the
 * socket's peer credentials), for the log. A malloc'd JSON reply. */
typedef char *(*kn_stats_command_fn)(void *ctx, const char *verb, const char *args,
                                     const char *who);

/* {"ok":false,"error":msg} for a command's reply, malloc'd. */
char *kn_stats_error_reply(const char *msg);

/* Binds path (its directory made ready by kn_sockdir_prepare_group; a
 * stale socket left by a dead daemon is replaced; one in use is an error)
 * with exactly `mode` and `group` ((gid_t)-1: ours) whatever the umask.
 * -1 and a message with the real cause in err on failure. */
int kn_stats_server_start(uv_loop_t *loop, const char *path, unsigned mode, gid_t group,
                          kn_stats_render_fn render, kn_stats_command_fn command, void *ctx,
                          struct kn_stats_server **out, char *err, size_t errlen);

/* Closes the socket (clients being served finish on their own) and
 * removes the path. */
void kn_stats_server_stop(struct kn_stats_server *s);

const char *kn_stats_server_path(const struct kn_stats_server *s);

#endif
