/* kenaf-simd with allow-lists, over real sockets from three loopback
 * source addresses: a driver (127.0.0.2) drives; an observer (127.0.0.3)
 * reads status and may engage the e-stop, but its CRAWLER and its e-stop
 * release get ERROR NOT_ALLOWED; an unlisted address (127.0.0.4) gets no
 * answer at all; the stats count both. And the loud warning for a robot
 * on a non-loopback address without lists, in --check-config. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "harness_suite.h"

static int sock_from(const char *ip)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    ck_assert_int_eq(inet_pton(AF_INET, ip, &a.sin_addr), 1);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static uint32_t seq;

static void send_msg(int fd, int port, uint8_t type, uint16_t flags, uint8_t estop)
{
    struct kn_krp_msg m;
    memset(&m, 0, sizeof m);
    kn_krp_init(&m, type, ++seq, flags);
    m.u.estop.engage = estop;
    m.u.crawler.left_mm_s = type == KN_KRP_CRAWLER ? 100 : m.u.crawler.left_mm_s;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    ck_assert_int_eq(sendto(fd, buf, n, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)n);
}

/* The answer's type, or 0 when none came within ms; *code of an ERROR. */
static uint8_t answer(int fd, int ms, uint8_t *code)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    if (poll(&p, 1, ms) <= 0)
        return 0;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    ck_assert_int_gt(n, 0);
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(buf, (size_t)n, &m), KN_KRP_OK);
    if (m.h.type == KN_KRP_ERROR && code)
        *code = m.u.error.code;
    return m.h.type;
}

START_TEST(drivers_observers_strangers)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(robots, sizeof robots, "[%s]",
             h_standin_robot("kenaf", sim.port,
                             ", \"allow_drivers\": [\"127.0.0.2\"], "
                             "\"allow_observers\": [\"127.0.0.3/32\"]"));
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_eq(h_stat(&d, "robots.0.access.lists"), 1);
    int drv = sock_from("127.0.0.2"), obs = sock_from("127.0.0.3"), out = sock_from("127.0.0.4");
    int port = d.port[0];
    uint8_t code = 0;

    send_msg(drv, port, KN_KRP_CRAWLER, KN_KRP_F_ACK_REQ, 0);
    ck_assert_uint_eq(answer(drv, H_LONG_MS, NULL), KN_KRP_ACK);

    send_msg(obs, port, KN_KRP_STATUS_REQ, 0, 0);
    ck_assert_uint_eq(answer(obs, H_LONG_MS, NULL), KN_KRP_STATUS);
    send_msg(obs, port, KN_KRP_CRAWLER, KN_KRP_F_ACK_REQ, 0);
    ck_assert_uint_eq(answer(obs, H_LONG_MS, &code), KN_KRP_ERROR);
    ck_assert_uint_eq(code, 64);
    send_msg(obs, port, KN_KRP_ESTOP, KN_KRP_F_ACK_REQ, 1); /* anyone may stop it */
    ck_assert_uint_eq(answer(obs, H_LONG_MS, NULL), KN_KRP_ACK);
    ck_assert_double_eq(h_stat(&d, "robots.0.flags.ESTOP"), 1);
    send_msg(obs, port, KN_KRP_ESTOP, KN_KRP_F_ACK_REQ, 0); /* not release it */
    code = 0;
    ck_assert_uint_eq(answer(obs, H_LONG_MS, &code), KN_KRP_ERROR);
    ck_assert_uint_eq(code, 64);
    ck_assert_double_eq(h_stat(&d, "robots.0.flags.ESTOP"), 1);

    send_msg(out, port, KN_KRP_HELLO, 0, 0);
    send_msg(out, port, KN_KRP_CRAWLER, KN_KRP_F_ACK_REQ, 0);
    ck_assert_uint_eq(answer(out, 500, NULL), 0);

    ck_assert_double_eq(h_stat(&d, "robots.0.access.refused_observer"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.errors.NOT_ALLOWED"), 2); /* both answered */
    ck_assert_double_eq(h_stat(&d, "robots.0.access.dropped_not_listed"), 2);
    close(drv);
    close(obs);
    close(out);
}
END_TEST

START_TEST(open_robot_warned)
{
    static char out[4096], err[8192];
    char cfg[600];
    snprintf(
        cfg, sizeof cfg,
        "{\"stats_socket\": \"\", \"robots\": [{\"name\": \"open\", "
        "\"listen\": \"0.0.0.0:0\", \"backend\": {\"type\": \"usarsim\"}}, {\"name\": \"lab\", "
        "\"listen\": \"0.0.0.0:0\", \"allow_drivers\": [\"10.0.0.0/8\"], \"backend\": "
        "{\"type\": \"usarsim\"}}]}");
    h_write_file(h_path("open.json"), cfg);
    char *argv[] = { getenv("KN_SIMD"), "--check-config", "--config", (char *)h_path("open.json"),
                     NULL };
    ck_assert_int_eq(h_run(argv, out, sizeof out, err, sizeof err, H_LONG_MS), 0);
    ck_assert_msg(
        strstr(err, "WARNING: ") &&
            strstr(err,
                   "$.robots[0] (robot open) listens on "
                   "0.0.0.0, not a loopback address, with no allow_drivers or allow_observers"),
        "%s", err);
    ck_assert_msg(!strstr(err, "robot lab"), "%s", err);
    ck_assert_msg(strstr(out, "\"allow_drivers\": [\"10.0.0.0/8\"]"), "%s", out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("access-sys");
    TCase *tc = tcase_create("access-sys");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, drivers_observers_strangers);
    tcase_add_test(tc, open_robot_warned);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
