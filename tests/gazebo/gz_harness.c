/* Helpers for the gazebo system tests: see gz_harness.h. */
#include "gz_harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void gz_sim_start(struct gz_sim *s, int port, const char *name, const char *const extra[])
{
    const char *exe = getenv("KN_GZ_STANDIN");
    ck_assert_msg(exe != NULL, "KN_GZ_STANDIN not set");
    char portstr[16], logname[64], errname[64];
    snprintf(portstr, sizeof portstr, "%d", port);
    snprintf(logname, sizeof logname, "%s.log", name);
    snprintf(errname, sizeof errname, "%s.stderr", name);
    snprintf(s->log, sizeof s->log, "%s", h_path(logname));
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--port";
    argv[n++] = portstr;
    argv[n++] = "--log";
    argv[n++] = s->log;
    for (int i = 0; extra && extra[i] && n < 23; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    h_spawn(&s->proc, argv, NULL, errname);
    char line[64];
    ck_assert_msg(h_read_line(&s->proc, line, sizeof line, H_LONG_MS),
                  "gazebo_standin did not print its port: %s", h_stderr(&s->proc));
    s->port_seen_us = h_now_us();
    ck_assert_msg(sscanf(line, "PORT %d", &s->port) == 1, "gazebo_standin said \"%s\"", line);
}

void gz_sim_kill(struct gz_sim *s)
{
    h_signal(&s->proc, SIGKILL);
    ck_assert_int_ne(h_wait_exit(&s->proc, H_LONG_MS), -1);
}

const char *gz_robots_json(int port, const char *gazebo_extra)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":4000,"
             "\"backend\":{\"type\":\"gazebo\",\"address\":\"127.0.0.1:%d\","
             "\"flippers\":{\"FL\":{\"joint\":\"front_left_flipper_joint\"},"
             "\"FR\":{\"joint\":\"front_right_flipper_joint\"},"
             "\"RL\":{\"joint\":\"rear_left_flipper_joint\"},"
             "\"RR\":{\"joint\":\"rear_right_flipper_joint\"}},"
             "\"gazebo\":{\"model\":\"kenaf\",\"tracks_separation_m\":0.23,"
             "\"steering_efficiency\":0.5%s%s}}}]",
             port, gazebo_extra[0] ? "," : "", gazebo_extra);
    return buf;
}

void gz_test_table(struct kn_conv_table *t)
{
    kn_conv_table_gazebo(t);
    t->tracks_separation_m = 0.23;
    t->steering_efficiency = 0.5;
    /* gazebo_standin's plugin limits (the daemon never clamps: the plugin does) */
    t->max_angular_speed_rad_s = 8.0;
    /* the config's default flipper mapping: front -1, rear +1, no offset */
    t->flipper_sign[0] = t->flipper_sign[1] = -1;
    t->flipper_sign[2] = t->flipper_sign[3] = 1;
}

int gz_log_twists(const char *log, struct gz_twist *out, int max)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long long t;
        char kind[16];
        struct gz_twist *w = &out[n];
        if (sscanf(line, "%llu %15s %lf %lf belts %lf %lf", &t, kind, &w->lin, &w->ang,
                   &w->belts[0], &w->belts[1]) == 6 &&
            (strcmp(kind, "twist") == 0 || strcmp(kind, "posecmd") == 0)) {
            w->t_us = t;
            w->pose_form = kind[0] == 'p';
            n++;
        }
    }
    fclose(f);
    return n;
}

int gz_log_joints(const char *log, struct gz_joint *out, int max)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long long t;
        struct gz_joint *j = &out[n];
        if (sscanf(line, "%llu joint %159s %lf", &t, j->name, &j->target) == 3) {
            j->t_us = t;
            n++;
        }
    }
    fclose(f);
    return n;
}

bool gz_log_last_pose(const char *log, double *t, double v[7])
{
    FILE *f = fopen(log, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long long us;
        double a, b[7];
        if (sscanf(line, "%llu pose %lf %lf %lf %lf %lf %lf %lf %lf", &us, &a, &b[0], &b[1], &b[2],
                   &b[3], &b[4], &b[5], &b[6]) == 9) {
            *t = a;
            memcpy(v, b, sizeof b);
            found = true;
        }
    }
    fclose(f);
    return found;
}

uint64_t gz_log_first(const char *log, const char *needle)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[1024];
    uint64_t at = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) {
            at = strtoull(line, NULL, 10);
            break;
        }
    fclose(f);
    return at;
}

bool gz_wait_lines(const char *log, const char *needle, int count, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (h_log_count(log, needle) >= count)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(10);
    }
}

/* ---- raw sockets ---------------------------------------------------------- */

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

int gz_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = loopback(*port);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

int gz_accept(int lfd, int timeout_ms)
{
    struct pollfd p = { .fd = lfd, .events = POLLIN };
    if (poll(&p, 1, timeout_ms) <= 0)
        return -1;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int gz_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = loopback(port);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect %d: %s", port,
                  strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

void gz_write(int fd, const void *p, size_t n)
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

/* n bytes within the deadline: 1, 0 on EOF, -1 on timeout */
static int read_exact(int fd, uint8_t *buf, size_t n, uint64_t end)
{
    size_t got = 0;
    while (got < n) {
        int64_t left = (int64_t)(end - h_now_us()) / 1000;
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t k = recv(fd, buf + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        got += (size_t)k;
    }
    return 1;
}

long gz_read_frame(int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    uint8_t hdr[9];
    int r = read_exact(fd, hdr, 8, end);
    if (r <= 0)
        return r == 0 ? 0 : -1;
    hdr[8] = 0;
    char *e;
    unsigned long n = strtoul((char *)hdr, &e, 16);
    ck_assert_msg(*e == '\0' && n > 0 && n <= cap, "bad frame header \"%s\"", (char *)hdr);
    r = read_exact(fd, buf, n, end);
    ck_assert_msg(r == 1, "frame of %lu bytes cut short", n);
    return (long)n;
}

bool gz_read_packet(int fd, struct kn_gz_arena *a, uint8_t *buf, size_t cap,
                    struct kn_gz_packet *pk, int timeout_ms)
{
    long n = gz_read_frame(fd, buf, cap, timeout_ms);
    if (n <= 0)
        return false;
    kn_gz_arena_reset(a);
    ck_assert_msg(kn_gz_dec_packet(a, buf, (size_t)n, pk) == 0, "a frame that is not a Packet");
    return true;
}

bool gz_expect_packet(int fd, struct kn_gz_arena *a, uint8_t *buf, size_t cap, const char *type,
                      struct kn_gz_packet *pk, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int64_t left = (int64_t)(end - h_now_us()) / 1000;
        if (left <= 0 || !gz_read_packet(fd, a, buf, cap, pk, (int)left))
            return false;
        if (strcmp(pk->type, type) == 0)
            return true;
    }
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

int gz_local_port(int fd)
{
    return port_of(fd, true);
}

int gz_peer_port(int fd)
{
    return port_of(fd, false);
}
