/* System test: an unchanged controller binary using libkenaf_sim
 * (examples/square, run through tools/kenaf-sim-run) drives its 100 mm
 * square against kenaf-simd with a gazebo backend and gazebo_standin's
 * world. Every belt command the world received must be the Twist of a
 * belt pair the controller could have asked for (the plugin's formula
 * gives back belt speeds on the KRP/1 1 mm/s grid), the square must
 * close, and the final STATUS must show the world's final pose. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "gzc_harness.h"
#include "harness_suite.h"

#define MAXLOG 20000

static struct gzc_twist twists[MAXLOG];

START_TEST(square_in_the_gazebo_world)
{
    struct h_standin sim;
    struct h_daemon d;
    struct kn_conv_table conv;
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", NULL);
    h_daemon_start(&d, gzc_robots_json(sim.port, ""));
    h_wait_backend_fresh(&d, 0, H_LONG_MS);

    h_run_square(d.port[0], 50000, h_stderr(&d.proc));

    /* what the world received */
    int n = gzc_log_twists(sim.log, twists, MAXLOG);
    int moving = 0, turning = 0;
    for (int i = 0; i < n; i++) {
        const struct gzc_twist *t = &twists[i];
        ck_assert(!t->pose_form);
        /* belts back from the plugin's formula sit on the 1 mm/s grid */
        for (int s = 0; s < 2; s++) {
            double mm = t->belts[s] * 1000.0;
            ck_assert_msg(fabs(mm - round(mm)) < 1e-6, "belt %.17g m/s is off the mm/s grid",
                          t->belts[s]);
        }
        double belts[2] = { round(t->belts[0] * 1000) / 1000, round(t->belts[1] * 1000) / 1000 };
        double lin, ang;
        kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
        ck_assert_double_eq(t->lin, lin);
        ck_assert_double_eq(t->ang, ang);
        moving += fabs(t->belts[0] + t->belts[1]) > 0.01;
        turning += t->belts[0] * t->belts[1] < 0;
    }
    ck_assert_int_gt(moving, 4);
    ck_assert_int_gt(turning, 4);
    ck_assert_double_eq(twists[n - 1].lin, 0);
    ck_assert_double_eq(twists[n - 1].ang, 0);

    /* the square closes, and STATUS shows where the world put the robot */
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    double t, v[7];
    struct kn_krp_status s;
    bool match = false;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (!match && h_now_us() < end) {
        ck_assert(gzc_log_last_pose(sim.log, &t, v));
        s = h_status(&u);
        match = abs(s.pos_mm[0] - kn_conv_m_to_mm(v[0])) <= 1 &&
                abs(s.pos_mm[1] - kn_conv_m_to_mm(v[1])) <= 1 &&
                abs(s.rpy_cdeg[2] - kn_conv_rad_to_cdeg_wrapped(v[2])) <= 1;
        if (!match)
            h_sleep_ms(50);
    }
    ck_assert_msg(match, "STATUS (%d, %d) yaw %d; world (%.4f, %.4f) yaw %.4f", s.pos_mm[0],
                  s.pos_mm[1], s.rpy_cdeg[2], v[0], v[1], v[2]);
    ck_assert_msg(abs(s.pos_mm[0]) < 40 && abs(s.pos_mm[1]) < 40,
                  "square did not close: ended at (%d, %d) mm", s.pos_mm[0], s.pos_mm[1]);
    /* four left turns of 90 deg: heading back where it started */
    ck_assert_msg(abs(s.rpy_cdeg[2]) < 300, "heading %d", s.rpy_cdeg[2]);
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 8);
    ck_assert_int_eq(h_log_count(sim.log, "BUG_sub_for_unadvertised"), 0);
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_sim against kenaf-simd and gazebo_standin");
    TCase *tc = tcase_create("square");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, square_in_the_gazebo_world);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
