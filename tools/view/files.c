/* kenaf-view's HTTP paths: see files.h. */
#include "files.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *kn_vfiles_mime(const char *name)
{
    static const struct {
        const char *ext, *mime;
    } types[] = {
        { ".html", "text/html; charset=utf-8" },
        { ".js", "text/javascript; charset=utf-8" },
        { ".mjs", "text/javascript; charset=utf-8" },
        { ".css", "text/css; charset=utf-8" },
        { ".json", "application/json" },
        { ".png", "image/png" },
        { ".jpg", "image/jpeg" },
        { ".svg", "image/svg+xml" },
        { ".ico", "image/x-icon" },
        { ".txt", "text/plain; charset=utf-8" },
        { ".map", "application/json" },
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (ends_with(name, types[i].ext))
            return types[i].mime;
    return "application/octet-stream";
}

/* rest: what follows the folder's prefix. Every segment must be a plain
 * name: not empty, not starting with '.', no backslash or control byte. */
static bool rest_ok(const char *rest)
{
    if (!*rest)
        return false;
    const char *seg = rest;
    for (const char *p = rest;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '/' || c == '\0') {
            if (p == seg || *seg == '.')
                return false;
            if (c == '\0')
                return true;
            seg = p + 1;
        } else if (c < 0x20 || c == 0x7f || c == '\\') {
            return false;
        }
    }
}

static enum kn_vfiles_kind in_dir(const char *dir, const char *rest, char *path, size_t pathlen,
                                  const char **dirp, const char **mime)
{
    if (!*rest)
        return KN_VFILES_NOT_FOUND; /* a folder: never listed */
    if (!rest_ok(rest))
        return KN_VFILES_REFUSED;
    *dirp = dir;
    int w = snprintf(path, pathlen, "%s/%s", dir, rest);
    if (w < 0 || (size_t)w >= pathlen)
        return KN_VFILES_NOT_FOUND;
    *mime = kn_vfiles_mime(rest);
    return KN_VFILES_FILE;
}

enum kn_vfiles_kind kn_vfiles_map(const char *uri, const char *web_dir, const char *three_dir,
                                  char *path, size_t pathlen, const char **dir, const char **mime)
{
    if (strcmp(uri, "/") == 0 || strcmp(uri, "/index.html") == 0)
        return in_dir(web_dir, "index.html", path, pathlen, dir, mime);
    if (strcmp(uri, "/api/robots") == 0)
        return KN_VFILES_ROBOTS;
    if (strcmp(uri, "/api/stats") == 0)
        return KN_VFILES_STATS;
    if (strncmp(uri, "/app/", 5) == 0)
        return in_dir(web_dir, uri + 5, path, pathlen, dir, mime);
    if (strncmp(uri, "/three/", 7) == 0)
        return in_dir(three_dir, uri + 7, path, pathlen, dir, mime);
    /* anything that tries to climb is refused wherever it points */
    return strstr(uri, "..") ? KN_VFILES_REFUSED : KN_VFILES_NOT_FOUND;
}

bool kn_vfiles_inside(const char *dir, const char *path)
{
    char rd[PATH_MAX], rp[PATH_MAX];
    struct stat st;
    if (!realpath(dir, rd) || !realpath(path, rp) || stat(rp, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    size_t n = strlen(rd);
    if (n == 1) /* the root folder holds everything */
        return true;
    return strncmp(rp, rd, n) == 0 && rp[n] == '/';
}
