/* Where kenaf-simd's stats socket goes when the config does not say, and
 * making sure its directory is there and safe to use.
 *
 * The default, first match wins:
 *   $RUNTIME_DIRECTORY/stats.sock           (systemd RuntimeDirectory=)
 *   $XDG_RUNTIME_DIR/kenaf-simd/stats.sock  (a login session)
 *   /run/kenaf-simd/stats.sock              (root)
 *   /tmp/kenaf-simd-<uid>/stats.sock        (anyone else)
 * A missing socket directory is created with mode 0700 (one level: its
 * parent must exist). A /tmp/kenaf-simd-<uid> directory must be a real
 * directory owned by the caller and writable by nobody else, since anyone
 * could have made it first. */
#ifndef KN_SOCKDIR_H
#define KN_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
