/* The capture directory and opening files inside it: see capdir.h. */
#include "capdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sockdir.h"

#define MAX_DEPTH 32 /* path components below the capture directory */
#define NAME_SEP "/"

static const char *const refusal_names[KN_CAPDIR_NREFUSALS] = {
    "outside_dir",
    "symlink",
    "not_regular_file",
    "error",
};

const char *kn_capdir_refusal_name(enum kn_capdir_refusal r)
{
    return (unsigned)r < KN_CAPDIR_NREFUSALS ? refusal_names[r] : "error";
}

static bool set_abs(const char *v)
{
    return v && v[0] == '/';
}

int kn_capdir_default(char *out, size_t len)
{
    const char *sd = getenv("STATE_DIRECTORY"), *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    int w;
    /* $STATE_DIRECTORY lists every StateDirectory= of the unit; the first is ours */
    if (set_abs(sd))
        w = snprintf(out, len, "%.*s/%s", (int)strcspn(sd, ":"), sd, KN_CAPDIR_SUBDIR);
    else if (set_abs(xdg))
        w = snprintf(out, len, "%s/%s/%s", xdg, KN_SOCKDIR_NAME, KN_CAPDIR_SUBDIR);
    else if (geteuid() == 0)
        w = snprintf(out, len, "/var/lib/%s/%s", KN_SOCKDIR_NAME, KN_CAPDIR_SUBDIR);
    else {
        if (!set_abs(home)) {
            const struct passwd *pw = getpwuid(geteuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!set_abs(home))
            return -1;
        w = snprintf(out, len, "%s/.local/state/%s/%s", home, KN_SOCKDIR_NAME, KN_CAPDIR_SUBDIR);
    }
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* dir without trailing slashes and with single separators. */
static void tidy(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < len; p++) {
        if (*p == '/' && n > 0 && out[n - 1] == '/')
            continue;
        out[n++] = *p;
    }
    while (n > 1 && out[n - 1] == '/')
        n--;
    out[n] = '\0';
}

/* The dir and its missing parents, 0750 (and the group) like the
 * directory of a stats socket given a group. */
static int make_dirs(const char *dir, gid_t group, char *err, size_t errlen)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    struct stat st;
    if (stat(p, &st) == 0)
        return 0;
    for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        if (stat(p, &st) < 0 && kn_sockdir_mkdir(p, 0750, group, err, errlen) < 0)
            return -1;
        if (!s)
            return 0;
        *s = '/';
    }
}

static int refuse(enum kn_capdir_refusal r, enum kn_capdir_refusal *why, char *err, size_t errlen,
                  const char *request, const char *fmt, const char *arg)
{
    char msg[PATH_MAX + 800];
    snprintf(msg, sizeof msg, fmt, arg);
    snprintf(err, errlen, "capture %s: %s", request, msg);
    *why = r;
    return -1;
}

/* Splits the path below the capture directory into components; ".."
 * anywhere is refused, "." and empty ones are dropped. */
static int split(char *rel, char *comp[], int *n)
{
    *n = 0;
    char *save = NULL;
    for (char *c = strtok_r(rel, NAME_SEP, &save); c; c = strtok_r(NULL, NAME_SEP, &save)) {
        if (!strcmp(c, ".."))
            return -1;
        if (!strcmp(c, "."))
            continue;
        if (*n == MAX_DEPTH)
            return -2;
        comp[(*n)++] = c;
    }
    return 0;
}

/* An absolute request below base (as written, or as it resolves): the part
 * after it into tail; false when it lies elsewhere. */
static bool below(const char *req, const char *base, char *tail, size_t len)
{
    char r[PATH_MAX], real[PATH_MAX];
    tidy(req, r, sizeof r);
    const char *bases[2] = { base, realpath(base, real) ? real : NULL };
    for (int i = 0; i < 2; i++) {
        size_t n = bases[i] ? strlen(bases[i]) : 0;
        if (n == 1)
            n = 0; /* "/": everything lies below it */
        if (bases[i] && !strncmp(r, bases[i], n) && r[n] == '/') {
            snprintf(tail, len, "%s", r + n + 1);
            return true;
        }
    }
    return false;
}

/* A name opened with O_NOFOLLOW failed: was it a link? */
static bool is_link(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

static int open_file(int dfd, const char *name, const char *request, gid_t group,
                     enum kn_capdir_refusal *why, char *err, size_t errlen)
{
    struct stat st;
    /* look before opening: a device or FIFO must not even be opened */
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode))
            return refuse(KN_CAPDIR_SYMLINK, why, err, errlen, request,
                          "%sis a symbolic link (links are not followed in the capture directory)",
                          "");
        if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
            return refuse(KN_CAPDIR_NOT_REGULAR, why, err, errlen, request, "%s",
                          S_ISREG(st.st_mode)
                              ? "has other hard links; only a file of its own may be "
                                "replaced"
                              : "exists and is not a regular file");
    }
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || is_link(dfd, name))
            return refuse(KN_CAPDIR_SYMLINK, why, err, errlen, request,
                          "%sis a symbolic link (links are not followed in the capture directory)",
                          "");
        return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s", strerror(e));
    }
    /* what was opened, not what was looked at */
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        close(fd);
        return refuse(KN_CAPDIR_NOT_REGULAR, why, err, errlen, request, "%s",
                      "is not a regular file of its own");
    }
    const char *step = NULL;
    if (ftruncate(fd, 0) < 0)
        step = "cannot be emptied";
    else if (fchmod(fd, 0640) < 0)
        step = "cannot be given mode 0640";
    else if (group != (gid_t)-1 && fchown(fd, (uid_t)-1, group) < 0)
        step = "cannot be given the stats socket's group";
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        step = "cannot be made blocking";
    if (step) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: %s", step, strerror(errno));
        close(fd);
        return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s", msg);
    }
    return fd;
}

int kn_capdir_open(const char *dir, const char *request, gid_t group, char *full, size_t fulllen,
                   enum kn_capdir_refusal *why, char *err, size_t errlen)
{
    *why = KN_CAPDIR_ERROR;
    if (!dir || !dir[0]) {
        snprintf(err, errlen,
                 "capture %s: no capture directory (set \"capture_dir\" in the "
                 "config)",
                 request);
        return -1;
    }
    char base[PATH_MAX], rel[PATH_MAX];
    tidy(dir, base, sizeof base);
    if (request[0] != '/')
        snprintf(rel, sizeof rel, "%s", request);
    else if (!below(request, base, rel, sizeof rel))
        return refuse(KN_CAPDIR_OUTSIDE, why, err, errlen, request,
                      "outside the capture directory %s (give a name inside it)", base);
    char *comp[MAX_DEPTH];
    int n, rc = split(rel, comp, &n);
    if (rc == -1)
        return refuse(KN_CAPDIR_OUTSIDE, why, err, errlen, request,
                      "a \"..\" component is refused (names stay inside %s)", base);
    if (rc == -2 || n == 0)
        return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s",
                      n == 0 ? "expected a file name, got the capture directory itself"
                             : "too many directory levels");
    if (make_dirs(base, group, err, errlen) < 0)
        return -1;
    int dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s", strerror(errno));
    size_t used = (size_t)snprintf(full, fulllen, "%s", base);
    for (int i = 0; i < n; i++) {
        int w = snprintf(full + used, used < fulllen ? fulllen - used : 0, "%s%s",
                         strcmp(base, "/") != 0 || i ? "/" : "", comp[i]);
        used += w > 0 ? (size_t)w : 0;
        if (i == n - 1)
            break;
        int next = openat(dfd, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        if (next < 0) {
            bool link = e == ELOOP || is_link(dfd, comp[i]);
            close(dfd);
            if (link)
                return refuse(KN_CAPDIR_SYMLINK, why, err, errlen, request,
                              "%s is a symbolic link (links are not followed in the capture "
                              "directory)",
                              full);
            char msg[PATH_MAX + 200];
            snprintf(msg, sizeof msg, "%s: %s%s", full, strerror(e),
                     e == ENOENT ? " (subdirectories are not created; make it first)" : "");
            return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s", msg);
        }
        close(dfd);
        dfd = next;
    }
    if (used >= fulllen) {
        close(dfd);
        return refuse(KN_CAPDIR_ERROR, why, err, errlen, request, "%s", "path too long");
    }
    int fd = open_file(dfd, comp[n - 1], request, group, why, err, errlen);
    close(dfd);
    return fd;
}
