/* Listening Unix stream sockets: see unixsock.h. */
#include "unixsock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sockdir.h"

static int fill_addr(struct sockaddr_un *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) {
        snprintf(err, errlen, "%s: path too long for a Unix socket (%zu bytes, at most %zu)", path,
                 strlen(path), sizeof a->sun_path - 1);
        return -1;
    }
    memcpy(a->sun_path, path, strlen(path));
    return 0;
}

/* A socket file nobody listens on is left over from a dead process. */
static int clear_stale(const char *path, const struct sockaddr_un *a, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s: exists and is not a socket", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "%s: socket: %s", path, strerror(errno));
        return -1;
    }
    int rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
    close(fd);
    if (rc == 0) {
        snprintf(err, errlen, "%s: in use by another process", path);
        return -1;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "%s: cannot remove the stale socket: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Socket file permissions: mode 0 leaves what bind(2) and the umask made. */
static int set_perms(const char *path, unsigned mode, gid_t group, char *err, size_t errlen)
{
    if (group != (gid_t)-1 && lchown(path, (uid_t)-1, group) < 0) {
        kn_sockdir_group_error(err, errlen, path, group, errno);
        return -1;
    }
    if (mode && chmod(path, (mode_t)mode) < 0) {
        snprintf(err, errlen, "%s: cannot set mode %04o: %s", path, mode, strerror(errno));
        return -1;
    }
    return 0;
}

int kn_unixsock_listen_mode(uv_pipe_t *pipe, const char *path, int backlog, unsigned mode,
                            gid_t group, uv_connection_cb cb, char *err, size_t errlen)
{
    struct sockaddr_un a;
    if (fill_addr(&a, path, err, errlen) < 0 || clear_stale(path, &a, err, errlen) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "%s: socket: %s", path, strerror(errno));
        return -1;
    }
    /* owner-only until the mode below is set: no moment where the umask
     * lets others connect */
    mode_t old = mode ? umask(0177) : 0;
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    if (mode)
        umask(old);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    if (set_perms(path, mode, group, err, errlen) < 0) {
        close(fd);
        unlink(path);
        return -1;
    }
    if (listen(fd, backlog) < 0) {
        snprintf(err, errlen, "%s: listen: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    rc = uv_pipe_open(pipe, fd);
    if (rc < 0)
        close(fd); /* not taken over by the pipe */
    else
        rc = uv_listen((uv_stream_t *)pipe, backlog, cb); /* the pipe closes fd */
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, uv_strerror(rc));
        unlink(path);
        return -1;
    }
    return 0;
}

int kn_unixsock_listen(uv_pipe_t *pipe, const char *path, int backlog, uv_connection_cb cb,
                       char *err, size_t errlen)
{
    return kn_unixsock_listen_mode(pipe, path, backlog, 0, (gid_t)-1, cb, err, errlen);
}
