/* Thread safety: four threads call the library at once for about a second
 * (status, belt set-points, flipper set-points, the clock) while the robot
 * answers; no crash, no race the sanitizers can see, results consistent. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness_suite.h"
#include "kenaf.h"
#include "robot_fixture.h"

#define RUN_S 1.0

static atomic_int failures;
static atomic_long calls;

static void count_if(int cond)
{
    if (cond)
        atomic_fetch_add(&failures, 1);
}

static void *status_reader(void *arg)
{
    (void)arg;
    double t0 = kn_now_s(), last = -1;
    while (kn_now_s() - t0 < RUN_S) {
        hrt_status st;
        count_if(hrt_get_status(&st) != 0);
        count_if(!(st.flags & HRT_FLAG_SIMULATED));
        count_if(st.time_s < last); /* statuses only move forward */
        count_if(fabs(st.battery - 24.0) > 1e-9);
        last = st.time_s;
        count_if(hrt_is_simulated() != 1);
        atomic_fetch_add(&calls, 1);
    }
    return NULL;
}

static void *crawler_writer(void *arg)
{
    (void)arg;
    double t0 = kn_now_s();
    for (int i = 0; kn_now_s() - t0 < RUN_S; i++) {
        int rc = hrt_set_crawler_speed((i % 200) - 100, 100 - (i % 200));
        count_if(rc != 0);
        if (i % 50 == 0)
            count_if(hrt_set_crawler_speed(5000, 0) != HRT_ERANGE);
        atomic_fetch_add(&calls, 1);
        usleep(300); /* every call is a datagram: keep the robot's log small */
    }
    return NULL;
}

static void *flipper_writer(void *arg)
{
    (void)arg;
    double t0 = kn_now_s();
    for (int i = 0; kn_now_s() - t0 < RUN_S; i++) {
        count_if(hrt_set_flipper_angle(i % 4, (i % 90) - 45) != 0);
        double four[4] = { i % 30, -(i % 30), 10, -10 };
        if (i % 10 == 0)
            count_if(hrt_set_flipper_angles(four) != 0);
        atomic_fetch_add(&calls, 1);
        usleep(300);
    }
    return NULL;
}

static void *clock_reader(void *arg)
{
    (void)arg;
    double t0 = kn_now_s(), last = -1;
    while (kn_now_s() - t0 < RUN_S) {
        double t = hrt_time();
        count_if(t < last);
        last = t;
        atomic_fetch_add(&calls, 1);
    }
    return NULL;
}

START_TEST(four_threads_hammer_the_library)
{
    kn_test_env(2000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    void *(*fns[4])(void *) = { status_reader, crawler_writer, flipper_writer, clock_reader };
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, fns[i], NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(atomic_load(&failures), 0);
    ck_assert_int_gt(atomic_load(&calls), 1000);
    ck_assert_int_eq(hrt_stop(), 0);
    hrt_kenaf_exit();
    kn_testrobot_stop(&r);
    /* the robot saw set-points from both writers and never an old seq */
    ck_assert_int_gt(kn_testrobot_count(&r, "CRAWLER", NULL), 100);
    ck_assert_int_gt(kn_testrobot_count(&r, "FLIPPER", NULL), 100);
    ck_assert_int_eq(kn_testrobot_count(&r, "IGNORED", NULL), 0);
}
END_TEST

START_TEST(exit_while_other_threads_call)
{
    kn_test_env(2000);
    struct kn_testrobot r;
    kn_testrobot_start(&r, 0, NULL);
    ck_assert_int_eq(hrt_kenaf_init(), 0);
    pthread_t th[2];
    ck_assert_int_eq(pthread_create(&th[0], NULL, clock_reader, NULL), 0);
    ck_assert_int_eq(pthread_create(&th[1], NULL, crawler_writer, NULL), 0);
    hrt_sleep(0.3);
    hrt_kenaf_exit(); /* the others now get HRT_ENOTINIT, nothing worse */
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(hrt_set_crawler_speed(1, 1), HRT_ENOTINIT);
    kn_testrobot_stop(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, four_threads_hammer_the_library);
    tcase_add_test(tc, exit_while_other_threads_call);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
