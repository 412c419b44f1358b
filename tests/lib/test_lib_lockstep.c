/* Integration tests of lockstep in the library (docs/api.md, "Lockstep")
 * against the test robot with the KRP/1 lockstep extension: robot time
 * passes only inside hrt_sleep and the motions, in STEPs of one status
 * period, exactly; computing between calls costs none; hrt_sleep(0) and
 * the other calls let none pass; KENAF_LOCKSTEP=1 refuses a robot that
 * cannot step, and a robot that can is stepped without it. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness_suite.h"
#include "kenaf.h"
#include "robot_fixture.h"

static const char *const lockstep_args[] = { "--lockstep", "1", NULL };

START_TEST(time_passes_only_when_asked)
{
    kn_test_env(1000);
    setenv("KENAF_LOCKSTEP", "1", 1);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, lockstep_args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    double t0 = hrt_time();
    ck_assert_double_eq_tol(t0, 0.0, 1e-9);
    /* half a second of wall time computing: the robot clock stands */
    usleep(500000);
    ck_assert_double_eq_tol(hrt_time(), t0, 1e-9);
    ck_assert_int_eq(hrt_sleep(0), 0);
    ck_assert_double_eq_tol(hrt_time(), t0, 1e-9);
    /* 0.5 s in 25 STEPs of 20 ms: exactly 0.5 s */
    ck_assert_int_eq(hrt_sleep(0.5), 0);
    ck_assert_double_eq_tol(hrt_time(), 0.5, 1e-6);
    ck_assert_int_eq(kn_testrobot_count(&r, "STEP", " us=20000"), 25);
    /* a belt speed held over 2 s of robot time moves the robot by what
     * the speed says, however fast the wall clock went */
    ck_assert_int_eq(hrt_set_crawler_speed(100, 100), 0);
    ck_assert_int_eq(hrt_sleep(2.0), 0);
    ck_assert_double_eq_tol(hrt_time(), 2.5, 1e-6);
    hrt_status st;
    ck_assert_int_eq(hrt_get_status(&st), 0);
    ck_assert_double_eq_tol(st.time_s, 2.5, 1e-6);
    /* 0.1 m/s for 2 s, less the ramp at 1 m/s^2 (5 mm) */
    ck_assert_msg(fabs(st.position[0] - 195) < 3, "x %.1f mm after 2 s at 100 mm/s",
                  st.position[0]);
    /* robot time goes without waiting on the wall clock: 30 s of it
     * paced at 1x would take 30 s, while its 1500 STEP round trips take
     * well under a second even under ASan, so half of the paced time is
     * a bound that tells the two apart under any load */
    double w0 = kn_now_s();
    ck_assert_int_eq(hrt_sleep(30.0), 0);
    double wall = kn_now_s() - w0;
    ck_assert_double_eq_tol(hrt_time(), 32.5, 1e-6);
    ck_assert_msg(wall < 15.0, "30 s of robot time took %.2f s of wall time", wall);
    /* no watchdog in lockstep: a second of wall time without a CRAWLER */
    usleep(1000000);
    ck_assert_int_eq(kn_testrobot_count(&r, "WATCHDOG", NULL), 0);
    ck_assert_int_eq(hrt_stop(), 0);
    /* a motion lets its own time pass */
    double t1 = hrt_time();
    ck_assert_int_eq(hrt_go_forward(100), 0);
    double took = hrt_time() - t1;
    ck_assert_msg(took > 0.3 && took < 5, "go_forward took %.3f s of robot time", took);
    ck_assert_double_eq_tol(fmod(took + 1e-9, 0.02), 0.0, 1e-6);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
    unsetenv("KENAF_LOCKSTEP");
}
END_TEST

START_TEST(lockstep_required_but_robot_cannot_step)
{
    kn_test_env(1000);
    setenv("KENAF_LOCKSTEP", "1", 1);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), HRT_EINVAL);
    ck_assert_int_eq(kn_testrobot_count(&r, "STEP", NULL), 0);
    setenv("KENAF_LOCKSTEP", "yes", 1);
    ck_assert_int_eq(hrt_kenaf_init(), HRT_EINVAL);
    /* without the requirement the same robot runs by its clock */
    unsetenv("KENAF_LOCKSTEP");
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    double w0 = kn_now_s();
    ck_assert_int_eq(hrt_sleep(0.3), 0);
    ck_assert_double_ge(kn_now_s() - w0, 0.2);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(robot_in_lockstep_is_stepped_without_the_variable)
{
    kn_test_env(1000);
    unsetenv("KENAF_LOCKSTEP");
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, lockstep_args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_sleep(0.1), 0);
    ck_assert_double_eq_tol(hrt_time(), 0.1, 1e-6);
    ck_assert_int_eq(kn_testrobot_count(&r, "STEP", NULL), 5);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_lockstep");
    TCase *tc = tcase_create("lockstep");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, time_passes_only_when_asked);
    tcase_add_test(tc, lockstep_required_but_robot_cannot_step);
    tcase_add_test(tc, robot_in_lockstep_is_stepped_without_the_variable);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
