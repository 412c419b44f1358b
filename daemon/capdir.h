/* The capture directory: where captures started over the stats socket
 * ("capture start PATH") are written, and opening a file inside it without
 * ever leaving it. The stats socket is a door for operators, not a way to
 * write any file as the daemon's user: PATH is taken relative to the
 * directory, an absolute PATH only when it lies inside it, a ".."
 * component is refused, and every directory on the way and the file itself
 * are opened with openat(O_NOFOLLOW) from the directory's own descriptor,
 * so a symbolic link anywhere inside is refused rather than followed.
 *
 * The default ("capture_dir" left out of the config), first match wins:
 *   $STATE_DIRECTORY/captures                   (systemd StateDirectory=)
 *   $XDG_STATE_HOME/kenaf-simd/captures         (set by the session)
 *   /var/lib/kenaf-simd/captures                (root)
 *   $HOME/.local/state/kenaf-simd/captures      (anyone else; the passwd
 *                                                home when HOME is unset)
 * Missing directories on the way are created with mode 0750 when the first
 * capture starts. */
#ifndef KN_CAPDIR_H
#define KN_CAPDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KN_CAPDIR_SUBDIR "captures"

/* Why a request was refused, for the stats. */
enum kn_capdir_refusal {
    KN_CAPDIR_OUTSIDE = 0, /* "..", or an absolute path outside the directory */
    KN_CAPDIR_SYMLINK,     /* a symbolic link on the way or as the file */
    KN_CAPDIR_NOT_REGULAR, /* the name exists and is no plain file of its own */
    KN_CAPDIR_ERROR,       /* the system refused (missing subdirectory, EACCES, ...) */
    KN_CAPDIR_NREFUSALS
};

/* The default capture directory for this environment and effective uid.
 * 0, or -1 when none can be named or it does not fit in len bytes. */
int kn_capdir_default(char *out, size_t len);

/* Opens (creating or replacing) the capture file `request` inside `dir`
 * for writing, mode 0640, group `group` when it is not (gid_t)-1. `dir`
 * and missing parents are created (0750, and `group`). Returns the file
 * descriptor and the file's full path in `full`, or -1 with the reason in
 * err ("capture PATH: ...") and in *why. */
int kn_capdir_open(const char *dir, const char *request, gid_t group, char *full, size_t fulllen,
                   enum kn_capdir_refusal *why, char *err, size_t errlen);

/* The stats name of a refusal ("outside_dir", "symlink", ...). */
const char *kn_capdir_refusal_name(enum kn_capdir_refusal r);

#endif
