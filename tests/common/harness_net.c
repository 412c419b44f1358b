/* Loopback sockets for the tests: see harness_net.h. */
#include "harness_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "harness_proc.h"

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int h_tcp_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = loopback(*port);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    *port = h_local_port(fd);
    return fd;
}

int h_tcp_accept(int lfd, int timeout_ms)
{
    struct pollfd p = { .fd = lfd, .events = POLLIN };
    if (poll(&p, 1, timeout_ms) <= 0)
        return -1;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0)
        no_delay(fd);
    return fd;
}

int h_tcp_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = loopback(port);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect %d: %s", port,
                  strerror(errno));
    no_delay(fd);
    return fd;
}

void h_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        ck_assert_msg(k > 0, "send: %s", strerror(errno));
        c += k;
        n -= (size_t)k;
    }
}

int h_read_exact(int fd, void *buf, size_t n, uint64_t end_us)
{
    uint8_t *b = buf;
    size_t got = 0;
    while (got < n) {
        if (!h_wait_readable(fd, end_us))
            return -1;
        ssize_t k = recv(fd, b + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        got += (size_t)k;
    }
    return 1;
}

static int port_of(int fd, bool local)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int rc = local ? getsockname(fd, (struct sockaddr *)&a, &len)
                   : getpeername(fd, (struct sockaddr *)&a, &len);
    ck_assert_int_eq(rc, 0);
    return ntohs(a.sin_port);
}

int h_local_port(int fd)
{
    return port_of(fd, true);
}

int h_peer_port(int fd)
{
    return port_of(fd, false);
}

int h_udp_connect(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = loopback(0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    a.sin_port = htons((uint16_t)port);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void unix_addr(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(path);
    ck_assert_msg(n < sizeof a->sun_path, "socket path too long: %s", path);
    memcpy(a->sun_path, path, n + 1);
}

int h_unix_dgram_bind(const char *path)
{
    struct sockaddr_un a;
    unix_addr(&a, path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind %s: %s", path,
                  strerror(errno));
    return fd;
}

int h_unix_stream_connect(const char *path)
{
    struct sockaddr_un a;
    unix_addr(&a, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
        return fd;
    close(fd);
    return -1;
}

void h_private_net(void)
{
    ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    ck_assert_msg(ioctl(fd, SIOCGIFFLAGS, &ifr) == 0, "SIOCGIFFLAGS lo: %s", strerror(errno));
    ifr.ifr_flags |= IFF_UP;
    ck_assert_msg(ioctl(fd, SIOCSIFFLAGS, &ifr) == 0, "SIOCSIFFLAGS lo: %s", strerror(errno));
    close(fd);
}

int h_private_net_errno(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWNET) == 0 ? 0 : errno);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : EINVAL;
}
