/* systemd service notifications: see notify.h. systemd declares the
 * notification protocol itself the interface, stable and meant to be
 * spoken without libsystemd (sd_notify(3), its interface portability
 * chart): one datagram of "KEY=VALUE" lines to the AF_UNIX socket named
 * by NOTIFY_SOCKET, "@" naming an abstract one. Speaking it here keeps
 * libsystemd and what it pulls in (libgcrypt, lz4, zstd, lzma, libcap:
 * 1 MiB resident) out of kenaf-simd when it runs as a service, where its
 * memory is counted (docs/performance.md). Without NOTIFY_SOCKET every
 * call does nothing, as sd_notify does. */
#include "notify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

static int notify_fd = -1;
static struct sockaddr_un notify_addr;
static socklen_t notify_len;

/* The socket named by NOTIFY_SOCKET, opened once; false without one. */
static bool notify_open(void)
{
    static bool tried;
    if (tried)
        return notify_fd >= 0;
    tried = true;
    const char *name = getenv("NOTIFY_SOCKET");
    if (!name || !name[0])
        return false;
    size_t n = strlen(name);
    if ((name[0] != '/' && name[0] != '@') || n >= sizeof notify_addr.sun_path) {
        kn_err("systemd notifications off: NOTIFY_SOCKET \"%.200s\" is not a socket path "
               "or an abstract name",
               name);
        return false;
    }
    memset(&notify_addr, 0, sizeof notify_addr);
    notify_addr.sun_family = AF_UNIX;
    memcpy(notify_addr.sun_path, name, n);
    if (name[0] == '@')
        notify_addr.sun_path[0] = '\0'; /* the abstract namespace: no trailing NUL counted */
    notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (notify_fd < 0)
        kn_err("systemd notifications off: socket: %s", strerror(errno));
    return notify_fd >= 0;
}

void kn_notify(const char *fmt, ...)
{
    if (!notify_open())
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    /* never blocks: systemd's queue full (or gone) costs this one line */
    if (sendto(notify_fd, msg, len, MSG_NOSIGNAL, (struct sockaddr *)&notify_addr, notify_len) !=
        (ssize_t)len)
        kn_debug("systemd notification not sent: %s", strerror(errno));
}

bool kn_notify_watchdog(uint64_t *usec)
{
    /* WATCHDOG_USEC is the interval; WATCHDOG_PID, when set, names the
     * process it is meant for (a shell between systemd and us would
     * otherwise take our pings) */
    const char *u = getenv("WATCHDOG_USEC"), *p = getenv("WATCHDOG_PID");
    if (!u || !u[0])
        return false;
    char *end;
    errno = 0;
    uintmax_t v = strtoumax(u, &end, 10);
    if (errno || *end || v == 0 || u[0] == '-')
        return false;
    if (p && p[0]) {
        errno = 0;
        uintmax_t pid = strtoumax(p, &end, 10);
        if (errno || *end || pid != (uintmax_t)getpid())
            return false;
    }
    *usec = (uint64_t)v;
    return true;
}
