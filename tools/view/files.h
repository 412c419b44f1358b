/* What kenaf-view serves over HTTP, as one pure function from a request
 * path to an answer: "/" is the page's index.html, /app/... the page's
 * files (--web-dir), /three/... three.js (--three-dir, Debian's
 * libjs-three), /api/robots and /api/stats JSON; nothing else. A path with
 * a "." or ".." segment, a hidden name, a backslash or a control byte is
 * refused before any file is looked at; directories are never listed. */
#ifndef KN_VIEW_FILES_H
#define KN_VIEW_FILES_H

#include <stdbool.h>
#include <stddef.h>

enum kn_vfiles_kind {
    KN_VFILES_FILE = 0,  /* path: the file to send, mime its type */
    KN_VFILES_ROBOTS,    /* /api/robots */
    KN_VFILES_STATS,     /* /api/stats */
    KN_VFILES_NOT_FOUND, /* no such place */
    KN_VFILES_REFUSED,   /* a path that tries to leave its folder */
};

/* uri: the request path (decoded, without the query). For FILE, path gets
 * DIR/REST and *dir the folder it must stay in (the file is not looked
 * at: see kn_vfiles_inside). */
enum kn_vfiles_kind kn_vfiles_map(const char *uri, const char *web_dir, const char *three_dir,
                                  char *path, size_t pathlen, const char **dir, const char **mime);

/* True when path, its symlinks followed, is a regular file inside dir (its
 * symlinks followed too). The one function here that looks at files. */
bool kn_vfiles_inside(const char *dir, const char *path);

/* Content type for a file name by its extension. */
const char *kn_vfiles_mime(const char *name);

#endif
