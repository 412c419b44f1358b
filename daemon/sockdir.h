/* Where kenaf-simd's stats socket goes when the config does not say, and
 * making sure its directory is there and safe to use.
 *
 * The default, first match wins:
 *   $RUNTIME_DIRECTORY/stats.sock           (systemd RuntimeDirectory=)
 *   $XDG_RUNTIME_DIR/kenaf-simd/stats.sock  (a login session)
 *   /run/kenaf-simd/stats.sock              (root)
 *   /tmp/kenaf-simd-<uid>/stats.sock        (anyone else)
 * A missing socket directory is created with mode 0700 (one level: its
 * parent must exist), or 0750 and the socket's group when the config
 * names one (stats_socket_group), so that group can reach the socket. A /tmp/kenaf-simd-<uid> directory must be a real
 * directory owned by the caller and writable by nobody else, since anyone
 * could have made it first. */
#ifndef KN_SOCKDIR_H
#define KN_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KN_SOCKDIR_NAME "kenaf-simd"
#define KN_SOCKDIR_FILE "stats.sock"
#define KN_SOCKDIR_MAX_CANDIDATES 4

/* The default stats socket path for this process's environment and
 * effective uid. 0, or -1 when it does not fit in len bytes. */
int kn_sockdir_default(char *out, size_t len);

/* The places a client looks for a daemon's default stats socket, in the
 * order above, /run/kenaf-simd included whatever the uid (a client only
 * connects). Returns how many were written (each len bytes). */
size_t kn_sockdir_candidates(char out[][108], size_t max);

/* Checks that the directory of socket path `path` is usable: a directory
 * (created 0700 when missing and create is set; when create is not set,
 * its parent must allow creating it), writable and searchable, and for
 * the /tmp fallback owned by us and not group/other-writable. 0, or -1
 * with "DIR: reason" (the real errno text) in err. */
int kn_sockdir_prepare(const char *path, bool create, char *err, size_t errlen);
/* The same for a socket given to `group` ((gid_t)-1: none, as above): a
 * directory it creates gets mode 0750 and that group. */
int kn_sockdir_prepare_group(const char *path, bool create, gid_t group, char *err, size_t errlen);

/* The gid of stats_socket_group `spec`: a number is taken as it is (it
 * need not be in the group database), a name is looked up. "" or NULL:
 * (gid_t)-1, the daemon's own group (nothing to change). 0, or -1 with
 * "unknown group ..." or the lookup's error in err. */
int kn_sockdir_group(const char *spec, gid_t *out, char *err, size_t errlen);

/* Creates one directory with exactly `mode` whatever the umask, given
 * `group` unless that is (gid_t)-1 (an existing one is left alone). 0, or
 * -1 with "DIR: reason" in err. */
int kn_sockdir_mkdir(const char *dir, unsigned mode, gid_t group, char *err, size_t errlen);

/* "PATH: cannot give it group G: reason", with a hint on EPERM (the
 * daemon's user is not a member). */
void kn_sockdir_group_error(char *err, size_t errlen, const char *path, gid_t group, int e);

#endif
