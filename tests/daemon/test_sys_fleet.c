/* kenaf-simd with fleets: a config whose robots need more file
 * descriptors than RLIMIT_NOFILE allows is refused at start with the
 * numbers, and a soft limit below the hard one is raised; 256 robots on
 * one stand-in simulator each answer HELLO and report BACKEND_UP; a robot
 * flooded with datagrams does not starve another one (counts, not
 * timings). Real kenaf-simd and standin_sim processes, real sockets. */
#include <check.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "harness_suite.h"

#define FD_ROBOTS 60 /* 64 + 3 each: 244 descriptors */
#define FD_NEED 244

/* The "robots" array: n robots PREFIX0, PREFIX1, ... on the stand-in
 * simulator at sim_port. */
static char *robots_on(const char *prefix, int n, int sim_port)
{
    size_t cap = 256 * (size_t)n + 8, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, cap, "[");
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        len += (size_t)snprintf(text + len, cap - len, "%s%s", i ? ",\n" : "",
                                h_standin_robot(name, sim_port, NULL));
    }
    snprintf(text + len, cap - len, "]");
    return text;
}

START_TEST(fd_limit_refused)
{
    struct h_daemon d;
    memset(&d, 0, sizeof d);
    snprintf(d.config, sizeof d.config, "%s", h_path("fleet-fd.json"));
    snprintf(d.stats, sizeof d.stats, "%s", h_path("fleet-fd-stats.sock"));
    char *robots = robots_on("f", FD_ROBOTS, 9); /* port 9: nothing listens */
    h_daemon_write_config(&d, robots);
    free(robots);
    /* dash's ulimit -n sets the soft and the hard limit: nothing to raise */
    char *argv[] = { "/bin/sh",         "-c",     "ulimit -n 96 && exec \"$0\" --config \"$1\"",
                     getenv("KN_SIMD"), d.config, NULL };
    char out[256], err[8192];
    int rc = h_run(argv, out, sizeof out, err, sizeof err, H_LONG_MS * 3);
    ck_assert_msg(rc == 1, "exit %d, stderr: %s", rc, err);
    ck_assert_msg(strstr(err, "60 robots need about 244 file descriptors, but RLIMIT_NOFILE "
                              "allows 96 (hard limit 96)") != NULL,
                  "no clear refusal: %s", err);
    ck_assert_msg(strstr(err, "KRP/1 on udp") == NULL, "a robot started: %s", err);
}
END_TEST

/* The soft limit below what the robots need, the hard one above: the
 * daemon raises its soft limit and runs them all. */
START_TEST(fd_limit_raised)
{
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 1024) {
        printf("fd-limit-raised: the hard RLIMIT_NOFILE is %llu: nothing to raise to\n",
               (unsigned long long)old.rlim_max);
        return;
    }
    struct rlimit low = { .rlim_cur = 100, .rlim_max = old.rlim_max };
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    struct h_daemon d;
    char *robots = robots_on("f", FD_ROBOTS, 9); /* port 9: nothing listens */
    /* not wrapped: a wrapper's own descriptors are no part of the count */
    h_daemon_spawn(&d, "kenaf-simd", NULL, robots, NULL, NULL, false);
    free(robots);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0); /* the child has its copy */
    h_daemon_ready(&d);
    ck_assert_int_eq(d.nrobots, FD_ROBOTS);
    ck_assert_int_eq((int)h_stat(&d, "robots_configured"), FD_ROBOTS);
    cJSON *s = h_stats(&d);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "robots_failed")), 0);
    cJSON_Delete(s);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/limits", (int)d.proc.pid);
    const char *limits = h_file_text(path);
    const char *line = strstr(limits, "Max open files");
    ck_assert_ptr_nonnull(line);
    unsigned long long soft = strtoull(line + strlen("Max open files"), NULL, 10);
    ck_assert_msg(soft >= FD_NEED, "soft limit %llu", soft);
    /* and the estimate holds what the robots really opened */
    snprintf(path, sizeof path, "/proc/%d/fd", (int)d.proc.pid);
    DIR *dir = opendir(path);
    ck_assert_ptr_nonnull(dir);
    int open_fds = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        open_fds += e->d_name[0] != '.';
    closedir(dir);
    ck_assert_msg(open_fds <= FD_NEED && open_fds >= 2 * FD_ROBOTS,
                  "%d descriptors open for %d robots (estimate %d)", open_fds, FD_ROBOTS, FD_NEED);
}
END_TEST

#define FLEET 256

/* A client socket for many robots: one unconnected UDP socket with room
 * for a burst of answers. */
static int fleet_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    int rcv = 1 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    return fd;
}

static void send_to_port(int fd, int port, const struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(sendto(fd, buf, n, 0, (struct sockaddr *)&a, sizeof a), (ssize_t)n);
}

/* 256 robots on one stand-in simulator: each answers HELLO with its own
 * name, and its STATUS reports BACKEND_UP. Whatever is not answered yet
 * is asked again every 200 ms. */
START_TEST(fleet_256)
{
    struct h_standin sim;
    const char *extra[] = { "--hz", "100", "--state-hz", "10", NULL };
    h_standin_start(&sim, 0, "sim", extra);
    char *robots = robots_on("k", FLEET, sim.port);
    static struct h_daemon d;
    h_daemon_start(&d, robots);
    free(robots);
    ck_assert_int_eq(d.nrobots, FLEET);
    int fd = fleet_socket();
    static bool hello[FLEET], up[FLEET];
    int n_hello = 0, n_up = 0;
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 6000u;
    while ((n_hello < FLEET || n_up < FLEET) && h_now_us() < end) {
        for (int i = 0; i < FLEET; i++) {
            struct kn_krp_msg m;
            if (!hello[i]) {
                kn_krp_init(&m, KN_KRP_HELLO, (uint32_t)i + 1, 0);
                snprintf(m.u.hello.name, sizeof m.u.hello.name, "fleet");
            } else if (!up[i]) {
                kn_krp_init(&m, KN_KRP_STATUS_REQ, (uint32_t)i + 1, 0);
            } else {
                continue;
            }
            send_to_port(fd, d.port[i], &m);
        }
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        while (poll(&pf, 1, 200) > 0) {
            uint8_t buf[1024];
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
            struct kn_krp_msg m;
            if (n <= 0 || kn_krp_decode(buf, (size_t)n, &m) != KN_KRP_OK)
                continue;
            int i = 0;
            while (i < FLEET && d.port[i] != ntohs(from.sin_port))
                i++;
            ck_assert_msg(i < FLEET, "an answer from port %d", ntohs(from.sin_port));
            if (m.h.type == KN_KRP_HELLO_ACK && !hello[i]) {
                char name[16];
                snprintf(name, sizeof name, "k%d", i);
                ck_assert_str_eq(m.u.hello_ack.robot_name, name);
                hello[i] = true;
                n_hello++;
            } else if (m.h.type == KN_KRP_STATUS && !up[i] &&
                       (m.u.status.flags & KN_KRP_ST_BACKEND_UP)) {
                up[i] = true;
                n_up++;
            }
        }
    }
    close(fd);
    ck_assert_msg(n_hello == FLEET && n_up == FLEET,
                  "%d of %d robots answered HELLO, %d reported BACKEND_UP: %s", n_hello, FLEET,
                  n_up, h_stderr(&d.proc));
    ck_assert_int_eq((int)h_stat(&d, "robots_configured"), FLEET);
}
END_TEST

#define FLOOD_BATCH 50 /* datagrams every millisecond: 50 kHz */
#define FLOOD_S 3
#define CTL_N (FLOOD_S * 1000) /* the controller's CRAWLERs, 1 kHz */

static void tick_ms(struct timespec *t)
{
    t->tv_nsec += 1000000;
    if (t->tv_nsec >= 1000000000) {
        t->tv_nsec -= 1000000000;
        t->tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
}

/* HELLOs at about 50 kHz on the robot at `port` for FLOOD_S seconds, from
 * a process of its own that never reads the answers. */
static void flood(int port)
{
    int fd = h_udp_connect(port);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, 1, 0);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "flood");
    uint8_t buf[KN_KRP_MAX_DGRAM];
    struct iovec iov = { .iov_base = buf, .iov_len = kn_krp_encode(&m, buf, sizeof buf) };
    struct mmsghdr msg[FLOOD_BATCH];
    memset(msg, 0, sizeof msg);
    for (int i = 0; i < FLOOD_BATCH; i++) {
        msg[i].msg_hdr.msg_iov = &iov;
        msg[i].msg_hdr.msg_iovlen = 1;
    }
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int k = 0; k < FLOOD_S * 1000; k++) {
        (void)sendmmsg(fd, msg, FLOOD_BATCH, 0);
        tick_ms(&t);
    }
    _exit(0);
}

/* The ACKs waiting (up to timeout_ms for the first): each CRAWLER seq
 * acknowledged once is counted once. */
static int take_acks(struct h_udp *u, bool *acked, int timeout_ms)
{
    int got = 0;
    struct pollfd pf = { .fd = u->fd, .events = POLLIN };
    while (poll(&pf, 1, got ? 0 : timeout_ms) > 0) {
        uint8_t buf[1024];
        ssize_t n = recv(u->fd, buf, sizeof buf, MSG_DONTWAIT);
        struct kn_krp_msg m;
        if (n <= 0 || kn_krp_decode(buf, (size_t)n, &m) != KN_KRP_OK)
            break;
        uint32_t s = m.u.ack.acked_seq;
        if (m.h.type == KN_KRP_ACK && m.u.ack.acked_type == KN_KRP_CRAWLER && s >= 1 &&
            s <= CTL_N && !acked[s]) {
            acked[s] = true;
            got++;
        }
    }
    return got;
}

/* One robot flooded at 50 kHz, a controller on another at 1 kHz: libuv
 * reads at most 40 datagrams from a socket per loop turn, so the flooded
 * socket cannot hold the loop, and every CRAWLER on the other robot is
 * answered and counted. top: more top-level config members, or NULL. */
static void flood_fair_with(const char *top)
{
    struct h_standin sim;
    h_standin_start(&sim, 0, "sim", NULL);
    char *robots = robots_on("r", 2, sim.port);
    static struct h_daemon d;
    if (top) {
        h_daemon_spawn(&d, "kenaf-simd", top, robots, NULL, NULL, false);
        h_daemon_ready(&d);
    } else {
        h_daemon_start(&d, robots);
    }
    free(robots);
    h_wait_backend_fresh(&d, 1, H_LONG_MS);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        flood(d.port[0]);
    struct h_udp u;
    h_udp_open(&u, d.port[1]);
    int rcv = 1 << 20;
    (void)setsockopt(u.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    static bool acked[CTL_N + 1];
    memset(acked, 0, sizeof acked);
    int nacked = 0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int k = 1; k <= CTL_N; k++) {
        h_crawler(&u, (uint32_t)k, KN_KRP_F_ACK_REQ, 100, 100);
        nacked += take_acks(&u, acked, 0);
        tick_ms(&t);
    }
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 3000u;
    while (nacked < CTL_N && h_now_us() < end)
        nacked += take_acks(&u, acked, 200);
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    h_udp_close(&u);
    double flooded = h_stat(&d, "robots.0.datagrams_in.HELLO");
    ck_assert_msg(nacked == CTL_N, "%d of %d CRAWLERs acknowledged beside %.0f HELLOs", nacked,
                  CTL_N, flooded);
    ck_assert_int_eq((int)h_stat(&d, "robots.1.datagrams_in.CRAWLER"), CTL_N);
    /* the flood was one: several times the controller's traffic handled */
    ck_assert_msg(flooded >= 5.0 * CTL_N, "only %.0f HELLOs reached the flooded robot", flooded);
    if (top)
        ck_assert_msg(h_stat(&d, "io.coalesce_waits") > 0, "the window never waited");
}

START_TEST(flood_fair)
{
    flood_fair_with(NULL);
}
END_TEST

/* The same with the loop's coalescing window at 1 ms: a turn then carries
 * a millisecond of the flood, and the controller's CRAWLERs still get
 * their share. */
START_TEST(flood_fair_coalesce)
{
    flood_fair_with("\"ready_timeout_s\": 0, \"coalesce_us\": 1000");
}
END_TEST

#define BURST 40 /* datagrams sent within the window, half to each robot */

/* coalesce_us: after a turn that read a datagram the loop waits out the
 * window, so a burst sent meanwhile is read by few turns (counted in the
 * stats' io section), and every datagram of it is still answered, in
 * order, and relayed in order. The window is 50 ms, the burst 20 ms: a
 * slow machine only makes more turns, and the bound on the turns is a
 * quarter of the datagrams (without the window: about one each). */
START_TEST(coalesce_batches)
{
    struct h_standin sim;
    h_standin_start(&sim, 0, "sim", NULL);
    char *robots = robots_on("c", 2, sim.port);
    static struct h_daemon d;
    h_daemon_spawn(&d, "kenaf-simd", "\"ready_timeout_s\": 0, \"coalesce_us\": 50000", robots, NULL,
                   NULL, false);
    h_daemon_ready(&d);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    h_wait_backend_fresh(&d, 1, H_LONG_MS);
    ck_assert_int_eq((int)h_stat(&d, "io.coalesce_us"), 50000);
    struct h_udp u[2];
    h_udp_open(&u[0], d.port[0]);
    h_udp_open(&u[1], d.port[1]);
    double turns0 = h_stat(&d, "io.turns_read"), read0 = h_stat(&d, "io.datagrams_read");
    /* one datagram opens the window; its answer comes at once */
    h_crawler(&u[0], 1, KN_KRP_F_ACK_REQ, 10, 10);
    h_expect_ack(&u[0], 1, KN_KRP_CRAWLER);
    /* seq k carries k mm/s: the simulator's commands show the order; a
     * datagram every 0.5 ms, so without the window each would wake the
     * loop alone (20 ms in all, in the 50 ms window) */
    struct timespec gap = { .tv_nsec = 500000 };
    for (int k = 2; k < 2 + BURST / 2; k++)
        for (int i = 0; i < 2; i++) {
            h_crawler(&u[i], (uint32_t)k, KN_KRP_F_ACK_REQ, 10 * k, 10 * k);
            nanosleep(&gap, NULL);
        }
    for (int i = 0; i < 2; i++) {
        for (int k = 2; k < 2 + BURST / 2; k++)
            h_expect_ack(&u[i], (uint32_t)k, KN_KRP_CRAWLER); /* each, in order */
        h_udp_close(&u[i]);
    }
    double turns = h_stat(&d, "io.turns_read") - turns0;
    double dgrams = h_stat(&d, "io.datagrams_read") - read0;
    ck_assert_int_eq((int)dgrams, BURST + 1);
    ck_assert_msg(turns >= 2 && turns <= (BURST + 1) / 4, "%.0f turns read %d datagrams", turns,
                  BURST + 1);
    ck_assert_msg(h_stat(&d, "io.coalesce_waits") > 0, "the window never waited");
    /* relayed in order: each robot's last command is its last CRAWLER,
     * and its commands only grow (the link may merge some while a write
     * is pending, counted, never reorder them) */
    int last = 10 * (1 + BURST / 2);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, last / 1000.0, last / 1000.0, H_LONG_MS, NULL), 0);
    static struct h_cmd cmds[512];
    int n = h_log_cmds(sim.log, cmds, 512);
    double prev[64];
    for (int i = 0; i < 64; i++)
        prev[i] = -1;
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (cmds[i].client < 0 || cmds[i].client >= 64 || cmds[i].belts[0] < 0.0095)
            continue; /* the start's zero commands */
        ck_assert_msg(cmds[i].belts[0] > prev[cmds[i].client],
                      "command %d out of order: %g after %g", i, cmds[i].belts[0],
                      prev[cmds[i].client]);
        prev[cmds[i].client] = cmds[i].belts[0];
        seen++;
    }
    double merged = h_stat(&d, "robots.0.backend.commands.coalesced") +
                    h_stat(&d, "robots.1.backend.commands.coalesced");
    ck_assert_msg(seen + (int)merged == BURST + 1, "%d commands relayed, %.0f merged, %d sent",
                  seen, merged, BURST + 1);
    /* a reload changes the window at once, and no robot restarts */
    double up = h_stat(&d, "robots.0.uptime_s");
    snprintf(d.top, sizeof d.top, "\"ready_timeout_s\": 0, \"coalesce_us\": 0");
    h_daemon_write_config(&d, robots);
    free(robots);
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat_eq(&d, "reloads", 1, H_LONG_MS));
    ck_assert_int_eq((int)h_stat(&d, "io.coalesce_us"), 0);
    ck_assert_double_ge(h_stat(&d, "robots.0.uptime_s"), up);
}
END_TEST

int main(void)
{
    /* under a memory checker the daemon runs tens of times slower: 256
     * robots' start and state streams, or a 50 kHz flood, outrun it */
    h_not_wrapped("fleet-256", "256 robots' state streams outrun a daemon under KN_WRAP");
    h_not_wrapped("flood-fair", "a 50 kHz flood outruns a daemon under KN_WRAP");
    h_not_wrapped("flood-fair-coalesce", "a 50 kHz flood outruns a daemon under KN_WRAP");
    const struct h_case cases[] = {
        { "fd-limit-refused", fd_limit_refused, 60, NULL, NULL },
        { "fd-limit-raised", fd_limit_raised, 60, NULL, NULL },
        { "fleet-256", fleet_256, 120, NULL, NULL },
        { "flood-fair", flood_fair, 120, NULL, NULL },
        { "flood-fair-coalesce", flood_fair_coalesce, 120, NULL, NULL },
        { "coalesce-batches", coalesce_batches, 60, NULL, NULL },
    };
    return h_run_cases("daemon-fleet", cases, sizeof cases / sizeof cases[0]);
}
