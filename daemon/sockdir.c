/* The stats socket's default place and its directory: see sockdir.h. */
#include "sockdir.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUN_PATH_MAX 107 /* sizeof sun_path - 1 */

/* $RUNTIME_DIRECTORY lists every RuntimeDirectory= of the unit, ':'
 * separated; the first is ours. */
static bool runtime_directory(char *out, size_t len)
{
    const char *rd = getenv("RUNTIME_DIRECTORY");
    if (!rd || !rd[0])
        return false;
    size_t n = strcspn(rd, ":");
    if (n == 0)
        return false;
    int w = snprintf(out, len, "%.*s/%s", (int)n, rd, KN_SOCKDIR_FILE);
    return w > 0 && (size_t)w < len;
}

static bool xdg_runtime_dir(char *out, size_t len)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (!x || !x[0])
        return false;
    int w = snprintf(out, len, "%s/%s/%s", x, KN_SOCKDIR_NAME, KN_SOCKDIR_FILE);
    return w > 0 && (size_t)w < len;
}

static void run_dir(char *out, size_t len)
{
    snprintf(out, len, "/run/%s/%s", KN_SOCKDIR_NAME, KN_SOCKDIR_FILE);
}

static void tmp_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/%s-%u", KN_SOCKDIR_NAME, (unsigned)geteuid());
}

static void tmp_path(char *out, size_t len)
{
    char dir[64];
    tmp_dir(dir, sizeof dir);
    snprintf(out, len, "%s/%s", dir, KN_SOCKDIR_FILE);
}

int kn_sockdir_default(char *out, size_t len)
{
    char p[SUN_PATH_MAX + 1];
    /* a path that does not fit in sun_path falls through to the next */
    if (!runtime_directory(p, sizeof p) && !xdg_runtime_dir(p, sizeof p)) {
        if (geteuid() == 0)
            run_dir(p, sizeof p);
        else
            tmp_path(p, sizeof p);
    }
    if (strlen(p) >= len)
        return -1;
    memcpy(out, p, strlen(p) + 1);
    return 0;
}

size_t kn_sockdir_candidates(char out[][108], size_t max)
{
    size_t n = 0;
    if (n < max && runtime_directory(out[n], 108))
        n++;
    if (n < max && xdg_runtime_dir(out[n], 108))
        n++;
    if (n < max)
        run_dir(out[n++], 108);
    if (n < max)
        tmp_path(out[n++], 108);
    return n;
}

static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == path)
        snprintf(dir, len, "/");
    else
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* Anyone may create /tmp/kenaf-simd-<uid> before us: it must be ours. */
static int check_tmp_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "%s: is a symbolic link, expected a directory of our own", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s: owned by uid %u, expected our own uid %u (remove it)", dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "%s: writable by group or others (mode %04o), expected 0700", dir,
                 (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

/* Without create: could the missing dir be made? */
static int check_creatable(const char *dir, char *err, size_t errlen)
{
    char parent[SUN_PATH_MAX + 1];
    dir_of(dir, parent, sizeof parent);
    struct stat st;
    if (stat(parent, &st) < 0) {
        snprintf(err, errlen, "%s: cannot be created: %s: %s", dir, parent, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: cannot be created: %s: %s", dir, parent, strerror(ENOTDIR));
        return -1;
    }
    if (access(parent, W_OK | X_OK) < 0) {
        snprintf(err, errlen, "%s: cannot be created: %s: %s", dir, parent, strerror(errno));
        return -1;
    }
    return 0;
}

int kn_sockdir_group(const char *spec, gid_t *out, char *err, size_t errlen)
{
    *out = (gid_t)-1;
    if (!spec || !spec[0])
        return 0;
    if (strspn(spec, "0123456789") == strlen(spec)) {
        errno = 0;
        unsigned long g = strtoul(spec, NULL, 10);
        if (errno || g > 2147483647ul) {
            snprintf(err, errlen, "group number %s out of range (at most 2147483647)", spec);
            return -1;
        }
        *out = (gid_t)g;
        return 0;
    }
    struct group gr, *res = NULL;
    char buf[16384];
    int e = getgrnam_r(spec, &gr, buf, sizeof buf, &res);
    if (e != 0) {
        snprintf(err, errlen, "group \"%s\": cannot look it up: %s", spec, strerror(e));
        return -1;
    }
    if (!res) {
        snprintf(err, errlen, "unknown group \"%s\": not in the group database", spec);
        return -1;
    }
    *out = gr.gr_gid;
    return 0;
}

void kn_sockdir_group_error(char *err, size_t errlen, const char *path, gid_t group, int e)
{
    char who[64] = "";
    if (e == EPERM)
        snprintf(who, sizeof who, " (uid %u is not a member of group %u)", (unsigned)geteuid(),
                 (unsigned)group);
    snprintf(err, errlen, "%s: cannot give it group %u: %s%s", path, (unsigned)group, strerror(e),
             who);
}

int kn_sockdir_mkdir(const char *dir, unsigned mode, gid_t group, char *err, size_t errlen)
{
    /* nobody else gets in before the mode below is set */
    mode_t old = umask(077);
    int rc = mkdir(dir, 0700);
    int e = errno;
    umask(old);
    if (rc < 0 && e == EEXIST)
        return 0;
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot be created: %s", dir, strerror(e));
        return -1;
    }
    if (group != (gid_t)-1 && chown(dir, (uid_t)-1, group) < 0) {
        kn_sockdir_group_error(err, errlen, dir, group, errno);
        return -1;
    }
    if (chmod(dir, (mode_t)mode) < 0) {
        snprintf(err, errlen, "%s: cannot set mode %04o: %s", dir, mode, strerror(errno));
        return -1;
    }
    return 0;
}

int kn_sockdir_prepare(const char *path, bool create, char *err, size_t errlen)
{
    return kn_sockdir_prepare_group(path, create, (gid_t)-1, err, errlen);
}

int kn_sockdir_prepare_group(const char *path, bool create, gid_t group, char *err, size_t errlen)
{
    if (strlen(path) > SUN_PATH_MAX) {
        snprintf(err, errlen, "%s: path too long for a Unix socket (%zu bytes, at most %d)", path,
                 strlen(path), SUN_PATH_MAX);
        return -1;
    }
    char dir[SUN_PATH_MAX + 1], tmp[64];
    dir_of(path, dir, sizeof dir);
    tmp_dir(tmp, sizeof tmp);
    bool is_tmp = strcmp(dir, tmp) == 0;
    struct stat st;
    /* before anything follows a link someone else may have put there */
    if (is_tmp && lstat(dir, &st) == 0 && check_tmp_dir(dir, err, errlen) < 0)
        return -1;
    if (stat(dir, &st) < 0) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
            return -1;
        }
        if (!create)
            return check_creatable(dir, err, errlen);
        if (kn_sockdir_mkdir(dir, group == (gid_t)-1 ? 0700 : 0750, group, err, errlen) < 0)
            return -1;
        if (stat(dir, &st) < 0) {
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
            return -1;
        }
    }
    if (is_tmp && check_tmp_dir(dir, err, errlen) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", dir, strerror(ENOTDIR));
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s: exists and is not a socket", path);
        return -1;
    }
    return 0;
}
