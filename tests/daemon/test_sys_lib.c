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

START_TEST(square_completes)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[512];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"standin\","
             "\"address\":\"127.0.0.1:%d\"}}]", sim.port);
    h_daemon_start(&d, robots);
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    ck_assert(h_wait_stat_eq(&d, "robots.0.flags.STALE", 0, H_LONG_MS));

    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d.port[0]);
    const char *run = getenv("KN_SIM_RUN"), *square = getenv("KN_SQUARE");
    ck_assert_msg(run && square, "KN_SIM_RUN / KN_SQUARE not set");
    char *argv[] = { "/bin/sh", (char *)run, "--robot", robot, "--", (char *)square, NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "square.stderr");
    static char out[65536];
    size_t used = 0;
    char line[1024];
    while (h_read_line(&p, line, sizeof line, 50000)) {
        int w = snprintf(out + used, sizeof out - used, "%s\n", line);
        if (w > 0 && (size_t)w < sizeof out - used)
            used += (size_t)w;
    }
    int st = h_wait_exit(&p, 50000);
    ck_assert_msg(st != -1, "square did not finish");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "square failed (%d): %s\n%s", st,
                  h_stderr(&p), out);
    ck_assert_msg(strstr(out, "SIMULATED") != NULL, "no status block with SIMULATED: %s", out);

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
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
