/* Integration tests of the robot clock: hrt_time follows the robot's
 * simulated time and hrt_sleep sleeps on it, so with the test robot running
 * 20x faster than real time a sleep takes about a twentieth of the wall time. */
#include <check.h>
#include <stdlib.h>

#include "harness_suite.h"
#include "kenaf.h"
#include "robot_fixture.h"

START_TEST(sleep_follows_fast_robot_clock)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    const char *args[] = { "--time-scale", "20", NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_sleep(0.3), 0); /* let the rate estimate settle */
    double t0 = hrt_time(), w0 = kn_now_s();
    /* 10 s of robot time at 20x take 0.5 s; a sleep on the wall clock
     * would take 10 s: half of that tells them apart under any load */
    ck_assert_int_eq(hrt_sleep(10.0), 0);
    double t1 = hrt_time(), w1 = kn_now_s();
    ck_assert_msg(t1 - t0 >= 10.0, "robot clock advanced only %.3f s", t1 - t0);
    ck_assert_msg(w1 - w0 < 5.0, "sleeping 10 s of robot time took %.3f s of wall time", w1 - w0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(time_is_robot_time_and_monotonic)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    hrt_status st;
    ck_assert_int_eq(hrt_get_status(&st), 0);
    double prev = hrt_time();
    ck_assert_double_ge(prev, st.time_s);
    /* robot time, not the wall clock's epoch; a stalled test process
     * may see it run on a little past the STATUS it read */
    ck_assert_double_lt(prev, st.time_s + 5.0);
    double w0 = kn_now_s();
    while (kn_now_s() - w0 < 0.5) {
        double t = hrt_time();
        ck_assert_double_ge(t, prev);
        prev = t;
    }
    double w1 = kn_now_s(), t1 = hrt_time();
    ck_assert_int_eq(hrt_sleep(0.5), 0);
    ck_assert_double_ge(hrt_time() - t1, 0.5);
    ck_assert_double_ge(kn_now_s() - w1, 0.3); /* it did sleep (1x robot) */
    ck_assert_int_eq(hrt_sleep(-1), HRT_EINVAL);
    ck_assert_int_eq(hrt_sleep(0), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

START_TEST(sleep_ends_with_timeout_when_robot_falls_silent)
{
    kn_test_env(400);
    struct kn_testrobot r;
    const char *args[] = { "--mute-after", "0.5", NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    double w0 = kn_now_s();
    ck_assert_int_eq(hrt_sleep(30), HRT_ETIMEOUT);
    /* ended by the library's silence timeout, not after the 30 s asked */
    ck_assert_double_lt(kn_now_s() - w0, 15.0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_clock");
    TCase *tc = tcase_create("clock");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sleep_follows_fast_robot_clock);
    tcase_add_test(tc, time_is_robot_time_and_monotonic);
    tcase_add_test(tc, sleep_ends_with_timeout_when_robot_falls_silent);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
