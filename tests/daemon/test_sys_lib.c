/* System test: an unchanged controller binary using libkenaf_sim
 * (examples/square, run through tools/kenaf-sim-run) drives its 100 mm
 * square against kenaf-simd and the stand-in simulator, and comes back
 * where it started. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "harness_suite.h"

START_TEST(square_completes)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[512];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"standin\","
             "\"address\":\"127.0.0.1:%d\"}}]",
             sim.port);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);

    h_run_square(d.port[0], 50000, NULL);

    /* the robot really moved, and a square brings it back */
    struct h_cmd cmds[4096];
    int n = h_log_cmds(sim.log, cmds, 4096);
    int moving = 0;
    for (int i = 0; i < n; i++)
        moving += fabs(cmds[i].belts[0]) > 0.01;
    ck_assert_int_gt(moving, 4);
    ck_assert_double_eq(cmds[n - 1].belts[0], 0);
    ck_assert_double_eq(cmds[n - 1].belts[1], 0);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_status s = h_status(&u);
    ck_assert_msg(abs(s.pos_mm[0]) < 40 && abs(s.pos_mm[1]) < 40,
                  "square did not close: ended at (%d, %d) mm", s.pos_mm[0], s.pos_mm[1]);
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.HELLO"), 1);
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 8);
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_sim against kenaf-simd");
    TCase *tc = tcase_create("square");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, square_completes);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
