/* Integration tests of the library's link and set-points against the test
 * robot over real UDP: init/exit, timeouts, subscription fallback,
 * recovery after a robot restart, clamping, repetition vs the watchdog. */
#include <arpa/inet.h>
#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness_suite.h"
#include "kenaf.h"
#include "robot_fixture.h"

/* Time a starved test process may lose beyond the library's own timeouts:
 * the bounds say "timed out, did not hang" and "not before the timeout",
 * never how fast, so they hold on a loaded machine. */
#define MARGIN_S 10.0

/* A UDP port on 127.0.0.1; the socket stays open (and silent) when keep. */
static int udp_port(int *fd_out)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert(fd >= 0);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    ck_assert(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    ck_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    if (fd_out != NULL)
        *fd_out = fd;
    else
        close(fd);
    return ntohs(sa.sin_port);
}

static void init_times_out(int port)
{
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    setenv("KENAF_ROBOT", addr, 1);
    setenv("KENAF_TIMEOUT_MS", "400", 1);
    double t0 = kn_now_s();
    ck_assert_int_eq(hrt_kenaf_init(), HRT_ETIMEOUT);
    double took = kn_now_s() - t0;
    ck_assert_msg(took >= 0.35 && took < 0.4 + MARGIN_S, "init took %.3f s", took);
    ck_assert_int_eq(hrt_stop(), HRT_ENOTINIT);
    hrt_kenaf_exit();
}

START_TEST(init_times_out_when_nothing_listens)
{
    kn_test_env(1000);
    init_times_out(udp_port(NULL)); /* closed port: ICMP unreachable */
}
END_TEST

START_TEST(init_times_out_when_robot_is_silent)
{
    kn_test_env(1000);
    int fd;
    int port = udp_port(&fd);
    init_times_out(port);
    char buf[600];
    ck_assert(recv(fd, buf, sizeof buf, MSG_DONTWAIT) >= 12); /* HELLOs did arrive */
    close(fd);
}
END_TEST

/* The library leaves signals alone: no handler installed, the caller's
 * signal mask untouched. */
static void signal_state(struct sigaction act[3], sigset_t *mask)
{
    const int sigs[3] = { SIGINT, SIGTERM, SIGPIPE };
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], NULL, &act[i]);
    pthread_sigmask(SIG_SETMASK, NULL, mask);
}

START_TEST(init_twice_exit_twice_reinit)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    struct sigaction before[3], after[3];
    sigset_t mask_before, mask_after;
    signal_state(before, &mask_before);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    signal_state(after, &mask_after);
    for (int i = 0; i < 3; i++)
        ck_assert(after[i].sa_handler == before[i].sa_handler);
    for (int s = 1; s < 32; s++)
        ck_assert_int_eq(sigismember(&mask_after, s), sigismember(&mask_before, s));
    int hellos = kn_testrobot_count(&r, "HELLO", NULL);
    ck_assert_int_ge(hellos, 1);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(kn_testrobot_count(&r, "HELLO", NULL), hellos);
    ck_assert_int_eq(hrt_is_simulated(), 1);

    hrt_status st;
    ck_assert_int_eq(hrt_get_status(&st), 0);
    ck_assert_uint_eq(st.flags & (HRT_FLAG_SIMULATED | HRT_FLAG_BACKEND_UP),
                      HRT_FLAG_SIMULATED | HRT_FLAG_BACKEND_UP);
    ck_assert_double_eq_tol(st.acceleration[2], 9807, 1);
    ck_assert_double_eq_tol(st.battery, 24.0, 1e-9);
    ck_assert_int_eq(hrt_get_status(NULL), HRT_EINVAL);
    hrt_show_status();

    hrt_kenaf_exit();
    ck_assert(kn_testrobot_wait_for(&r, "SUBSCRIBE", "period=0", 5));
    ck_assert_int_ge(kn_testrobot_count(&r, "STOP", NULL), 1);
    ck_assert_int_eq(hrt_get_status(&st), HRT_ENOTINIT);
    hrt_kenaf_exit();

    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_gt(kn_testrobot_count(&r, "HELLO", NULL), hellos);
    ck_assert_int_eq(hrt_get_status(&st), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(busy_robot_is_polled)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    const char *args[] = { "--max-subscribers", "0", NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_ge(kn_testrobot_count(&r, "BUSY", NULL), 1);
    hrt_status a, b;
    ck_assert_int_eq(hrt_get_status(&a), 0);
    ck_assert_int_eq(hrt_sleep(0.5), 0);
    ck_assert_int_eq(hrt_get_status(&b), 0);
    ck_assert_msg(b.time_s > a.time_s + 0.3, "status not refreshed: %.3f -> %.3f", a.time_s,
                  b.time_s);
    ck_assert_int_eq(hrt_go_forward(50), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(crawler_clamp_and_bad_values)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    const char *args[] = { "--max-speed", "500", NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_set_crawler_speed(NAN, 0), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_crawler_speed(0, INFINITY), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_crawler_speed(900, -2000), HRT_ERANGE);
    ck_assert(kn_testrobot_wait_for(&r, "CRAWLER", "left=500 right=-500", 5));
    ck_assert_int_eq(kn_testrobot_count(&r, "CRAWLER", "clamped"), 0); /* clamped before sending */
    ck_assert_int_eq(hrt_set_crawler_speed(120.4, 99.6), 0);
    ck_assert(kn_testrobot_wait_for(&r, "CRAWLER", "left=120 right=100", 5));
    ck_assert_int_eq(hrt_stop(), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(flipper_setpoints)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_set_flipper_angle(4, 10), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_flipper_angle(-1, 10), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_flipper_angle(HRT_FLIPPER_FL, NAN), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_flipper_angles(NULL), HRT_EINVAL);
    ck_assert_int_eq(hrt_set_flipper_angle(HRT_FLIPPER_FR, 30), 0);
    ck_assert(kn_testrobot_wait_for(&r, "FLIPPER", "mask=0x2 cdeg=0,3000,0,0", 5));
    ck_assert(kn_testrobot_wait_for(&r, "FLIPPER", "mask=0x2", 5));
    /* sent once, repeated twice */
    double deadline = kn_now_s() + 5;
    while (kn_testrobot_count(&r, "FLIPPER", "mask=0x2") < 3 && kn_now_s() < deadline)
        hrt_sleep(0.05);
    ck_assert_int_eq(kn_testrobot_count(&r, "FLIPPER", "mask=0x2"), 3);

    const double four[4] = { 10, -20, 150, -150 };
    ck_assert_int_eq(hrt_set_flipper_angles(four), HRT_ERANGE);
    ck_assert(kn_testrobot_wait_for(&r, "FLIPPER", "mask=0xf cdeg=1000,-2000,11950,-11950", 5));

    /* the robot moves them; the status shows it */
    hrt_status st;
    deadline = kn_now_s() + 10;
    do {
        hrt_sleep(0.05);
        ck_assert_int_eq(hrt_get_status(&st), 0);
    } while (fabs(st.flipper_angle[HRT_FLIPPER_FR] + 20) > 0.02 && kn_now_s() < deadline);
    ck_assert_double_eq_tol(st.flipper_angle[HRT_FLIPPER_FR], -20, 0.02);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(held_speed_never_trips_watchdog)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_set_crawler_speed(100, 100), 0);
    double t0 = kn_now_s();
    while (kn_now_s() - t0 < 2.0) {
        hrt_status st;
        ck_assert_int_eq(hrt_get_status(&st), 0);
        ck_assert_uint_eq(st.flags & HRT_FLAG_WATCHDOG, 0);
        hrt_sleep(0.1);
    }
    ck_assert_int_eq(kn_testrobot_count(&r, "WATCHDOG", NULL), 0);
    ck_assert_int_ge(kn_testrobot_count(&r, "CRAWLER", "left=100 right=100"), 15);

    /* zero is repeated for 300 ms, then the library goes quiet and the
     * robot's watchdog trips */
    ck_assert_int_eq(hrt_set_crawler_speed(0, 0), 0);
    ck_assert(kn_testrobot_wait_for(&r, "WATCHDOG", NULL, 5));
    int zeros = kn_testrobot_count(&r, "CRAWLER", "left=0 right=0");
    ck_assert_msg(zeros >= 3 && zeros <= 5, "%d zero set-points", zeros);
    hrt_status st;
    ck_assert_int_eq(hrt_sleep(0.1), 0);
    ck_assert_int_eq(hrt_get_status(&st), 0);
    ck_assert_uint_eq(st.flags & HRT_FLAG_WATCHDOG, HRT_FLAG_WATCHDOG);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(stop_is_sent_three_times)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_set_crawler_speed(150, 150), 0);
    ck_assert_int_eq(hrt_sleep(0.3), 0);
    ck_assert_int_eq(hrt_stop(), 0);
    double deadline = kn_now_s() + 5;
    while (kn_testrobot_count(&r, "STOP", NULL) < 3 && kn_now_s() < deadline)
        hrt_sleep(0.05);
    ck_assert_int_eq(kn_testrobot_count(&r, "STOP", NULL), 3);
    /* and the held speed is dropped: no CRAWLER after the first STOP */
    ck_assert_double_eq(kn_testrobot_time_of(&r, "CRAWLER", "STOP"), -1);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(link_loss_and_robot_restart)
{
    kn_test_env(500);
    struct kn_testrobot r1, r2;
    kn_testrobot_start(&r1, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_set_crawler_speed(150, 150), 0);
    ck_assert(kn_testrobot_wait_for(&r1, "CRAWLER", "left=150", 5));
    int port = r1.port;
    kn_testrobot_kill(&r1);

    /* the library notices within the timeout */
    hrt_status st;
    double t0 = kn_now_s();
    int rc;
    while ((rc = hrt_get_status(&st)) == 0 && kn_now_s() - t0 < 0.5 + MARGIN_S)
        usleep(10000);
    ck_assert_int_eq(rc, HRT_ETIMEOUT);
    ck_assert_int_eq(hrt_set_crawler_speed(150, 150), HRT_ETIMEOUT);
    ck_assert_int_eq(hrt_go_forward(100), HRT_ETIMEOUT);

    /* a new robot on the same port: the library finds it and re-sends
     * the held speed */
    kn_testrobot_start(&r2, port, NULL);
    ck_assert(kn_testrobot_wait_for(&r2, "HELLO", NULL, 5));
    ck_assert(kn_testrobot_wait_for(&r2, "CRAWLER", "left=150 right=150", 5));
    t0 = kn_now_s();
    while ((rc = hrt_get_status(&st)) != 0 && kn_now_s() - t0 < 5)
        usleep(10000);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(kn_testrobot_count(&r2, "WATCHDOG", NULL), 0);
    ck_assert_int_eq(hrt_stop(), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_link");
    TCase *tc = tcase_create("link");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, init_times_out_when_nothing_listens);
    tcase_add_test(tc, init_times_out_when_robot_is_silent);
    tcase_add_test(tc, init_twice_exit_twice_reinit);
    tcase_add_test(tc, busy_robot_is_polled);
    tcase_add_test(tc, crawler_clamp_and_bad_values);
    tcase_add_test(tc, flipper_setpoints);
    tcase_add_test(tc, held_speed_never_trips_watchdog);
    tcase_add_test(tc, stop_is_sent_three_times);
    tcase_add_test(tc, link_loss_and_robot_restart);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
