/* Integration tests of the blocking motions against the test robot over
 * real UDP, judged by the robot's ground truth (its REST/FINAL log lines):
 * go_forward and turning hit their targets (including across the encoder
 * wrap and the yaw wrap at +-180 deg), and end with the right error and a
 * stopped robot on e-stop and when the robot falls silent. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_suite.h"
#include "kenaf.h"
#include "robot_fixture.h"

/* Time a starved test process may lose beyond the library's own timeouts.
 * The bounds only tell "ended by the timeout" from "ran its course": the
 * muted drive below would take 15 s, so 1.5 s + 6 s still says which,
 * however loaded the machine (a load of 10 once took 2 s of margin). */
#define MARGIN_S 6.0

/* Stops the robot once it stands still and returns its final pose. */
static struct kn_testrobot_pose finish(struct kn_testrobot *r)
{
    hrt_status st;
    double deadline = kn_now_s() + 5;
    do {
        ck_assert_int_eq(hrt_sleep(0.05), 0);
        ck_assert_int_eq(hrt_get_status(&st), 0);
    } while ((st.crawler_speed[0] != 0 || st.crawler_speed[1] != 0) && kn_now_s() < deadline);
    hrt_kenaf_exit();
    kn_testrobot_stop(r);
    struct kn_testrobot_pose p;
    ck_assert_msg(kn_testrobot_pose(r, "FINAL", -1, &p), "no FINAL line in %s", r->log);
    ck_assert_int_eq(p.left, 0);
    ck_assert_int_eq(p.right, 0);
    return p;
}

static void forward(double mm, const char *const *args)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_go_forward(mm), 0);
    struct kn_testrobot_pose p = finish(&r);
    ck_assert_msg(fabs(p.x - mm) <= 3 && fabs(p.y) <= 2 && fabs(p.turned) < 0.5,
                  "go_forward(%g) ended at x=%g y=%g turned=%g", mm, p.x, p.y, p.turned);
}

START_TEST(go_forward_100)
{
    forward(100, NULL);
}
END_TEST

START_TEST(go_backward_250)
{
    forward(-250, NULL);
}
END_TEST

START_TEST(go_forward_across_encoder_wrap)
{
    /* 214748.3 m of belt at 10000 counts/m is 647 counts below INT32_MAX */
    const char *args[] = { "--belt0-m", "214748.3", NULL };
    forward(150, args);
}
END_TEST

static void turn(double yaw0, double deg)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    char y0[32];
    snprintf(y0, sizeof y0, "%g", yaw0);
    const char *args[] = { "--yaw0", y0, NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_turning(deg), 0);
    struct kn_testrobot_pose p = finish(&r);
    double want_yaw = remainder(yaw0 + deg, 360.0);
    ck_assert_msg(fabs(p.turned - deg) <= 1.0 && fabs(remainder(p.yaw - want_yaw, 360.0)) <= 1.0,
                  "turning(%g) from %g: turned %g, yaw %g", deg, yaw0, p.turned, p.yaw);
    ck_assert_msg(hypot(p.x, p.y) < 2, "turning moved the robot to %g, %g", p.x, p.y);
}

START_TEST(turning_90)
{
    turn(0, 90);
}
END_TEST

START_TEST(turning_minus_90)
{
    turn(0, -90);
}
END_TEST

START_TEST(turning_270)
{
    turn(0, 270);
}
END_TEST

START_TEST(turning_across_180)
{
    turn(170, 20);
}
END_TEST

START_TEST(turning_across_minus_180_backwards)
{
    turn(-175, -30);
}
END_TEST

static void *engage_estop_when_moving(void *arg)
{
    struct kn_testrobot *r = arg;
    hrt_status st;
    double deadline = kn_now_s() + 10;
    while (kn_now_s() < deadline) {
        if (hrt_get_status(&st) == 0 && st.crawler_speed[0] > 100)
            break;
        usleep(5000);
    }
    /* UDP: repeat until the robot logged it */
    for (int i = 0; i < 10 && kn_testrobot_count(r, "ESTOP", "engage=1") == 0; i++) {
        kn_testrobot_send_estop(r, 1);
        kn_testrobot_wait_for(r, "ESTOP", "engage=1", 0.5);
    }
    return NULL;
}

START_TEST(estop_ends_motion)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, engage_estop_when_moving, &r), 0);
    ck_assert_int_eq(hrt_go_forward(2000), HRT_EESTOP);
    pthread_join(th, NULL);
    ck_assert_int_eq(hrt_set_crawler_speed(100, 100), HRT_EESTOP);
    ck_assert_int_eq(hrt_turning(10), HRT_EESTOP);
    hrt_status st;
    ck_assert_int_eq(hrt_get_status(&st), 0);
    ck_assert_uint_eq(st.flags & HRT_FLAG_ESTOP, HRT_FLAG_ESTOP);

    /* released: moving works again */
    for (int i = 0; i < 10 && kn_testrobot_count(&r, "ESTOP", "engage=0") == 0; i++) {
        kn_testrobot_send_estop(&r, 0);
        kn_testrobot_wait_for(&r, "ESTOP", "engage=0", 0.5);
    }
    double deadline = kn_now_s() + 5;
    do
        hrt_sleep(0.05);
    while (hrt_get_status(&st) == 0 && (st.flags & HRT_FLAG_ESTOP) && kn_now_s() < deadline);
    ck_assert_int_eq(hrt_go_forward(20), 0);
    finish(&r);
}
END_TEST

START_TEST(silent_robot_ends_motion_with_timeout)
{
    kn_test_env(500);
    struct kn_testrobot r;
    const char *args[] = { "--mute-after", "1.0", NULL };
    kn_testrobot_start(&r, 0, args);
    double t_start = kn_now_s();
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    int rc = hrt_go_forward(3000); /* 15 s of driving: the robot mutes long before */
    double took = kn_now_s() - t_start;
    ck_assert_int_eq(rc, HRT_ETIMEOUT);
    ck_assert_msg(took < 1.0 + 0.5 + MARGIN_S, "returned after %.2f s", took);
    /* the robot still hears: the library's STOP reached it after it muted,
     * it came to rest and no set-point moved it again */
    ck_assert(kn_testrobot_wait_for(&r, "STOP", NULL, 5));
    ck_assert_double_ge(kn_testrobot_time_of(&r, "STOP", "MUTED"), 0);
    ck_assert(kn_testrobot_wait_for(&r, "REST", NULL, 5));
    ck_assert_double_eq(kn_testrobot_time_of(&r, "CRAWLER", "STOP"), -1);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
    struct kn_testrobot_pose p;
    ck_assert(kn_testrobot_pose(&r, "FINAL", -1, &p));
    ck_assert_int_eq(p.left, 0);
    ck_assert_int_eq(p.right, 0);
    /* 3000 mm asked: stopped well short of it, not driven to the end */
    ck_assert_msg(p.x < 1500, "robot kept driving: x=%g", p.x);
}
END_TEST

START_TEST(backend_down_ends_motion)
{
    kn_test_env(1000);
    struct kn_testrobot r;
    const char *args[] = { "--backend-down-after", "1.0", NULL };
    kn_testrobot_start(&r, 0, args);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    ck_assert_int_eq(hrt_go_forward(3000), HRT_EBACKEND);
    /* status still filled, flagged; set-points still sent (the robot
     * answers them) but reported */
    hrt_status st;
    memset(&st, 0, sizeof st);
    ck_assert_int_eq(hrt_get_status(&st), HRT_EBACKEND);
    ck_assert_uint_eq(st.flags & (HRT_FLAG_BACKEND_UP | HRT_FLAG_SIMULATED), HRT_FLAG_SIMULATED);
    ck_assert_double_eq_tol(st.battery, 24.0, 1e-9);
    ck_assert_int_eq(hrt_set_crawler_speed(50, 50), HRT_EBACKEND);
    ck_assert(kn_testrobot_wait_for(&r, "REFUSED", "reason=backend", 5));
    ck_assert_int_eq(hrt_turning(10), HRT_EBACKEND);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
    ck_assert_double_ge(kn_testrobot_time_of(&r, "STOP", "BACKEND_DOWN"), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_motion");
    TCase *tc = tcase_create("motion");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, go_forward_100);
    tcase_add_test(tc, go_backward_250);
    tcase_add_test(tc, go_forward_across_encoder_wrap);
    tcase_add_test(tc, turning_90);
    tcase_add_test(tc, turning_minus_90);
    tcase_add_test(tc, turning_270);
    tcase_add_test(tc, turning_across_180);
    tcase_add_test(tc, turning_across_minus_180_backwards);
    tcase_add_test(tc, estop_ends_motion);
    tcase_add_test(tc, silent_robot_ends_motion_with_timeout);
    tcase_add_test(tc, backend_down_ends_motion);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
