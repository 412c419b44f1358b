/* Listening Unix stream sockets (the stats socket, the Gazebo control
 * socket) bound with plain socket(2)/bind(2), so a failure names its real
 * cause: libuv's uv_pipe_bind reports a missing directory (ENOENT) as
 * "permission denied". */
#ifndef KN_UNIXSOCK_H
#define KN_UNIXSOCK_H

#include <stddef.h>
#include <sys/types.h>

#include <uv.h>

/* Binds path and listens on it through pipe, which the caller has
 * uv_pipe_init'ed (and closes with uv_close whatever the result). A socket
 * file nobody listens on (left by a dead process) is replaced; one in use,
 * or another kind of file, is an error. 0, or -1 with "PATH: reason" in
 * err. */
int kn_unixsock_listen(uv_pipe_t *pipe, const char *path, int backlog, uv_connection_cb cb,
                       char *err, size_t errlen);

/* The same with the socket file's permissions set exactly: created under
 * a umask that lets nobody else in, then given `group` (unless (gid_t)-1)
 * and `mode`, whatever the process's umask. A socket that cannot be given
 * them is removed again, with the real reason in err. */
int kn_unixsock_listen_mode(uv_pipe_t *pipe, const char *path, int backlog, unsigned mode,
                            gid_t group, uv_connection_cb cb, char *err, size_t errlen);

#endif
