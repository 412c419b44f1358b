/* kenaf-trace: a passive KRP/1 observer. It only subscribes to STATUS (it
 * never sends a set-point, so it can watch a robot another program drives)
 * and writes the trajectory as CSV and as an SVG top view when it ends. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "krp.h"
#include "trace.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kenaf-trace [--robot HOST:PORT] [--period MS] [--duration S]\n"
               "                   [--csv FILE] [--svg FILE] [--title TEXT] [--quiet]\n"
               "Subscribes to a robot's STATUS (KRP/1) and records its trajectory until\n"
               "SIGINT/SIGTERM or --duration; then writes the files and prints waypoints.\n"
               "The robot address defaults to $KENAF_ROBOT, then 127.0.0.1:9750.\n");
}

/* host:port or [v6]:port */
static int open_robot(const char *spec)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
            return -1;
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host)
            return -1;
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port = colon + 1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static void send_subscribe(int fd, uint32_t *seq, uint16_t period)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, (*seq)++, 0);
    m.u.subscribe.period_ms = period;
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    /* a refused send (robot not up yet) is retried by the renewal timer */
    (void)send(fd, buf, n, 0);
}

static int write_file(const char *path, const struct kn_trace *t, const char *title, int svg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kenaf-trace: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = svg ? kn_trace_write_svg(t, f, title) : kn_trace_write_csv(t, f);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "kenaf-trace: %s: write failed\n", path);
    return rc;
}

int main(int argc, char **argv)
{
    const char *robot = getenv("KENAF_ROBOT"), *csv = NULL, *svg = NULL, *title = "kenaf-trace";
    long period = 50;
    double duration = 0;
    int quiet = 0;
    if (!robot || !*robot)
        robot = "127.0.0.1:9750";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
            continue;
        } else if (!v) {
            usage(stderr);
            return 2;
        }
        char *end = NULL;
        if (strcmp(a, "--robot") == 0)
            robot = v;
        else if (strcmp(a, "--csv") == 0)
            csv = v;
        else if (strcmp(a, "--svg") == 0)
            svg = v;
        else if (strcmp(a, "--title") == 0)
            title = v;
        else if (strcmp(a, "--period") == 0) {
            period = strtol(v, &end, 10);
            if (*end || period < 10 || period > 1000) {
                fprintf(stderr, "kenaf-trace: --period takes 10..1000 ms\n");
                return 2;
            }
        } else if (strcmp(a, "--duration") == 0) {
            duration = strtod(v, &end);
            if (*end || !(duration >= 0)) {
                fprintf(stderr, "kenaf-trace: --duration takes seconds >= 0\n");
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
        i++;
    }

    int fd = open_robot(robot);
    if (fd < 0) {
        fprintf(stderr, "kenaf-trace: cannot reach robot address %s\n", robot);
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct kn_trace t;
    kn_trace_init(&t, 2000000);
    uint32_t seq = 1;
    double start = now_s(), renew = 0;
    size_t bad = 0;
    while (!stop_requested && (duration <= 0 || now_s() - start < duration)) {
        if (now_s() >= renew) {
            /* the lease is 5 s; renewing each second survives lost datagrams */
            send_subscribe(fd, &seq, (uint16_t)period);
            renew = now_s() + 1.0;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        uint8_t buf[KN_KRP_MAX_DGRAM + 1];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0)
            continue; /* ECONNREFUSED while the robot is not up: keep trying */
        struct kn_krp_msg m;
        if (kn_krp_decode(buf, (size_t)n, &m) != KN_KRP_OK) {
            bad++;
            continue;
        }
        if (m.h.type == KN_KRP_STATUS)
            kn_trace_add(&t, &m.u.status);
    }
    send_subscribe(fd, &seq, 0);
    close(fd);

    int rc = 0;
    if (csv && write_file(csv, &t, title, 0) != 0)
        rc = 1;
    if (svg && write_file(svg, &t, title, 1) != 0)
        rc = 1;
    if (!quiet)
        kn_trace_print(&t, 1.0, stdout);
    if (bad)
        fprintf(stderr, "kenaf-trace: %zu datagrams were not valid KRP/1\n", bad);
    if (t.n == 0) {
        fprintf(stderr, "kenaf-trace: no STATUS received from %s\n", robot);
        rc = 1;
    }
    kn_trace_free(&t);
    return rc;
}
