/* System tests of who may drive (docs/protocol.md, "Sessions"): a real
 * kenaf-simd and standin_sim over real sockets. A second client cannot
 * drive or release another's e-stop, a captured datagram does not pass
 * from another port or after a new HELLO, a configured console can; the
 * driver role ends on BYE and on the watchdog; an unchanged controller
 * (examples/square on libkenaf_sim) drives while observers watch. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "harness_suite.h"

static struct h_standin sim;
static struct h_daemon simd;
static struct h_udp a, b;

#define CONSOLE_IP "127.0.0.2"

static void setup(void)
{
    h_setup();
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(robots, sizeof robots, "[%s]",
             h_standin_robot("kenaf", sim.port, ",\"consoles\":[\"" CONSOLE_IP "\"]"));
    h_daemon_start(&simd, robots);
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_udp_open(&a, simd.port[0]);
    h_udp_open(&b, simd.port[0]);
}

static void teardown(void)
{
    h_udp_close(&a);
    h_udp_close(&b);
    h_teardown();
}

#define STAT(path) h_stat(&simd, "robots.0." path)

/* A socket from the console's address (any port of 127.0.0.2). */
static void console_open(struct h_udp *u)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    inet_pton(AF_INET, CONSOLE_IP, &sa.sin_addr);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    sa.sin_port = htons((uint16_t)simd.port[0]);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    memset(u, 0, sizeof *u);
    u->fd = fd;
}

/* Nobody drives: the stats say null. */
static bool no_driver(void)
{
    cJSON *st = h_stats(&simd);
    cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "robots"), 0);
    cJSON *d =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "sessions"), "driver");
    bool null = cJSON_IsNull(d);
    cJSON_Delete(st);
    return null;
}

/* The belts the simulator was told last. */
static void last_belts(double *l, double *r)
{
    struct h_cmd cmds[512];
    int n = h_log_cmds(sim.log, cmds, 512);
    ck_assert_int_gt(n, 0);
    *l = cmds[n - 1].belts[0];
    *r = cmds[n - 1].belts[1];
}

START_TEST(second_client_cannot_drive)
{
    h_hello(&a, "first");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&a, &m, H_LONG_MS));
    h_hello(&b, "second");
    ck_assert(h_udp_recv_answer(&b, &m, H_LONG_MS));
    /* A drives at 20 Hz; B's one CRAWLER with seq 0 (a turn) is refused */
    for (int i = 0; i < 10; i++) {
        h_crawler(&a, 0, 0, 200, 200);
        h_sleep_ms(50);
    }
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.2, 0.2, H_LONG_MS, NULL), 0);
    int before = h_log_count(sim.log, "belts");
    struct kn_krp_msg turn;
    kn_krp_init(&turn, KN_KRP_CRAWLER, 0, 0); /* seq 0, as a fresh sender might */
    turn.u.crawler.left_mm_s = -300;
    turn.u.crawler.right_mm_s = 300;
    h_udp_send(&b, &turn);
    h_expect_error(&b, KN_KRP_ERR_NOT_OWNER, 0, KN_KRP_CRAWLER);
    h_expect_error(&b, KN_KRP_ERR_NOT_OWNER, h_simple(&b, 0, KN_KRP_STOP, 0), KN_KRP_STOP);
    h_crawler(&a, 0, 0, 200, 200);
    h_sleep_ms(100);
    double l, r;
    last_belts(&l, &r);
    ck_assert_double_eq_tol(l, 0.2, 1e-9); /* the robot never turned */
    ck_assert_double_eq_tol(r, 0.2, 1e-9);
    ck_assert_int_ge(h_log_count(sim.log, "belts"), before);
    ck_assert_double_eq(STAT("sessions.not_owner"), 2);
    ck_assert_double_eq(STAT("errors.NOT_OWNER"), 2);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.sessions.driver.name"), "first");
    /* B still observes */
    ck_assert_uint_eq(h_status(&b).flags & KN_KRP_ST_BACKEND_UP, KN_KRP_ST_BACKEND_UP);
    h_simple(&a, 0, KN_KRP_STOP, 0);
}
END_TEST

START_TEST(estop_release_and_console)
{
    h_crawler(&a, 0, 0, 200, 200); /* A drives (no HELLO: nobody else does) */
    h_expect_ack(&a, h_estop(&a, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    h_expect_error(&b, KN_KRP_ERR_NOT_OWNER, h_estop(&b, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    ck_assert(h_status(&a).flags & KN_KRP_ST_ESTOP);
    ck_assert_double_eq(STAT("sessions.estop_release_refused"), 1);
    ck_assert(strstr(h_stat_str(&simd, "robots.0.sessions.estop_by"), "127.0.0.1:") != NULL);
    /* the console releases it, and takes the robot over */
    struct h_udp c;
    console_open(&c);
    h_expect_ack(&c, h_estop(&c, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    ck_assert(!(h_status(&a).flags & KN_KRP_ST_ESTOP));
    h_expect_ack(&c, h_crawler(&c, 0, KN_KRP_F_ACK_REQ, 100, 100), KN_KRP_CRAWLER);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.1, 0.1, H_LONG_MS, NULL), 0);
    h_expect_error(&a, KN_KRP_ERR_NOT_OWNER, h_crawler(&a, 0, KN_KRP_F_ACK_REQ, 300, 300),
                   KN_KRP_CRAWLER);
    ck_assert_double_eq(STAT("sessions.driver_takeovers"), 1);
    ck_assert(h_stat(&simd, "robots.0.sessions.driver.console") == 1);
    h_simple(&c, 0, KN_KRP_STOP, 0);
    h_udp_close(&c);
}
END_TEST

/* A captured CRAWLER sent again from a new port, or after its sender's
 * next HELLO, does not move the robot. */
START_TEST(replay_refused)
{
    ck_assert_uint_eq(h_hello_session(&a, "driver", false), KN_KRP_ROLE_DRIVER);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, ++a.seq, 0);
    m.u.crawler.left_mm_s = m.u.crawler.right_mm_s = 250;
    kn_krp_session_stamp(&a.sess, &m);
    uint8_t cap[64];
    size_t n = kn_krp_encode(&m, cap, sizeof cap);
    h_udp_raw(&a, cap, n);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.25, 0.25, H_LONG_MS, NULL), 0);
    h_simple(&a, 0, KN_KRP_STOP, 0);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0, 0, H_LONG_MS, NULL), 0);
    h_udp_raw(&b, cap, n); /* from a new port */
    h_expect_error(&b, KN_KRP_ERR_BAD_SESSION, m.h.seq, KN_KRP_CRAWLER);
    ck_assert_uint_eq(h_hello_session(&a, "driver", false), KN_KRP_ROLE_DRIVER);
    /* a new HELLO without the token: a new session; the old bytes are refused */
    a.sess.on = false;
    ck_assert_uint_eq(h_hello_session(&a, "driver", false), KN_KRP_ROLE_DRIVER);
    h_udp_raw(&a, cap, n);
    h_expect_error(&a, KN_KRP_ERR_BAD_SESSION, m.h.seq, KN_KRP_CRAWLER);
    h_sleep_ms(100);
    double l, r;
    last_belts(&l, &r);
    ck_assert_double_eq(l, 0);
    ck_assert_double_eq(r, 0);
    ck_assert_double_eq(STAT("sessions.bad_session"), 2);
    ck_assert_double_eq(STAT("sessions.opened"), 2);
}
END_TEST

START_TEST(released_on_bye_and_watchdog)
{
    ck_assert_uint_eq(h_hello_session(&a, "one", false), KN_KRP_ROLE_DRIVER);
    ck_assert_uint_eq(h_hello_session(&b, "two", false), KN_KRP_ROLE_OBSERVER);
    h_crawler(&a, 0, 0, 150, 150);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.15, 0.15, H_LONG_MS, NULL), 0);
    h_expect_ack(&a, h_simple(&a, 0, KN_KRP_BYE, KN_KRP_F_ACK_REQ), KN_KRP_BYE);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0, 0, H_LONG_MS, NULL), 0); /* BYE stops */
    ck_assert_uint_eq(h_hello_session(&b, "two", false), KN_KRP_ROLE_DRIVER);
    h_crawler(&b, 0, 0, 150, 150);
    /* B goes quiet while moving: the watchdog stops the belts and frees the robot */
    ck_assert(h_wait_stat(&simd, "robots.0.sessions.driver_watchdog", 1, H_LONG_MS));
    ck_assert(no_driver());
    struct h_udp c;
    h_udp_open(&c, simd.port[0]);
    ck_assert_uint_eq(h_hello_session(&c, "three", false), KN_KRP_ROLE_DRIVER);
    h_udp_close(&c);
}
END_TEST

/* Subscription pushes waiting on u's socket. */
static int pushes(struct h_udp *u)
{
    struct kn_krp_msg m;
    int n = 0;
    while (h_udp_recv(u, &m, 50))
        n += m.h.type == KN_KRP_STATUS && m.u.status.req_seq == 0;
    return n;
}

/* An unchanged controller on libkenaf_sim (it asks to drive), while an
 * observer session and a plain subscriber watch: the square is driven,
 * the observers get their pushes, and the library's BYE frees the robot. */
START_TEST(square_with_observers)
{
    ck_assert_uint_eq(h_hello_session(&a, "view", true), KN_KRP_ROLE_OBSERVER);
    h_expect_ack(&a, h_subscribe(&a, KN_KRP_F_ACK_REQ, 100), KN_KRP_SUBSCRIBE);
    h_expect_ack(&b, h_subscribe(&b, KN_KRP_F_ACK_REQ, 100), KN_KRP_SUBSCRIBE);
    h_run_square(simd.port[0], 60000, NULL);
    ck_assert_double_ge(STAT("sessions.closed"), 1); /* the library's BYE */
    ck_assert_double_eq(STAT("sessions.not_owner"), 0);
    ck_assert(no_driver());
    /* both were pushed statuses while the controller drove (for the 5 s
     * their leases lasted without renewal) */
    ck_assert_int_ge(pushes(&a), 20);
    ck_assert_int_ge(pushes(&b), 20);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sessions");
    TCase *tc = tcase_create("sessions");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, second_client_cannot_drive);
    tcase_add_test(tc, estop_release_and_console);
    tcase_add_test(tc, replay_refused);
    tcase_add_test(tc, released_on_bye_and_watchdog);
    tcase_add_test(tc, square_with_observers);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
