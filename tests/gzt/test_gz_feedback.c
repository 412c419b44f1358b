/* The gz backend's pure feedback (daemon/backends/gz/backend_gz_fb.c): sim time, poses
 * and joint states into the neutral state; belt speeds read from the
 * body's motion through the TrackedVehicle kinematics; world resets and a
 * robot at rest. */
#include <math.h>

#include "backend_gz.h"
#include "harness_suite.h"

static struct kn_gzsim_fb fb;
static struct kn_conv_table conv;

static void setup(void)
{
    kn_conv_table_gazebo(&conv); /* separation 0.4, efficiency 0.5 */
    kn_gzsim_fb_init(&fb, &conv);
}

static void pose_at(double x, double y, double yaw, int64_t t_ns)
{
    const double p[3] = { x, y, 0.1 }, q[4] = { 0, 0, sin(yaw / 2), cos(yaw / 2) };
    kn_gzsim_fb_clock(&fb, t_ns);
    ck_assert(kn_gzsim_fb_pose(&fb, p, q, t_ns));
}

START_TEST(straight_line_reads_equal_belts)
{
    for (int i = 0; i <= 50; i++) /* 0.5 m/s for 1 s in 20 ms steps */
        pose_at(0.01 * i, 0, 0, 20000000LL * i);
    ck_assert_double_eq_tol(fb.st.belt_speed_m_s[0], 0.5, 1e-9);
    ck_assert_double_eq_tol(fb.st.belt_speed_m_s[1], 0.5, 1e-9);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.5, 1e-9);
    ck_assert_double_eq_tol(fb.st.pos_m[0], 0.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.time_s, 1.0, 1e-12);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[2], KN_GRAVITY, 1e-6);
    ck_assert(fb.st.have & KN_HAVE_BELT_POS);
}
END_TEST

START_TEST(turn_in_place_reads_opposite_belts)
{
    for (int i = 0; i <= 50; i++) /* 1 rad/s to the left */
        pose_at(0, 0, 0.02 * i, 20000000LL * i);
    /* 1 * 0.4 / (2 * 0.5) = 0.4 m/s: left back, right forward */
    ck_assert_double_eq_tol(fb.st.rate_rad_s[2], 1.0, 1e-6);
    ck_assert_double_eq_tol(fb.st.belt_speed_m_s[0], -0.4, 1e-6);
    ck_assert_double_eq_tol(fb.st.belt_speed_m_s[1], 0.4, 1e-6);
    ck_assert_double_eq_tol(fb.st.rpy_rad[2], 1.0, 1e-9);
}
END_TEST

START_TEST(rest_reset_and_joints)
{
    for (int i = 0; i <= 10; i++)
        pose_at(0.01 * i, 0, 0, 20000000LL * i);
    /* sim time runs on without poses: at rest */
    kn_gzsim_fb_clock(&fb, 600000000LL);
    ck_assert(fb.st.belt_speed_m_s[0] == 0 && fb.st.belt_speed_m_s[1] == 0);
    double travel = fb.st.belt_pos_m[0];
    /* time steps back 0.55 s: a reset; travel is kept */
    kn_gzsim_fb_clock(&fb, 50000000LL);
    ck_assert_uint_eq(fb.resets, 1);
    ck_assert(fb.st.belt_pos_m[0] == travel);
    /* flipper joints: front sign -1 */
    const double j[4] = { -0.5, 0.25, 0.1, NAN };
    ck_assert(kn_gzsim_fb_joints(&fb, j, 0xf));
    ck_assert_double_eq_tol(fb.st.flipper_rad[0], 0.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[1], -0.25, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[2], 0.1, 1e-12);
    ck_assert_uint_eq(fb.bad_numbers, 1);
    /* a zero quaternion is refused and counted */
    const double p[3] = { 0, 0, 0 }, q0[4] = { 0, 0, 0, 0 };
    ck_assert(!kn_gzsim_fb_pose(&fb, p, q0, -1));
    ck_assert_uint_eq(fb.bad_numbers, 2);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "straight", straight_line_reads_equal_belts, 10, setup, NULL },
        { "turn", turn_in_place_reads_opposite_belts, 10, setup, NULL },
        { "rest", rest_reset_and_joints, 10, setup, NULL },
    };
    return h_run_cases("gz-feedback", cases, sizeof cases / sizeof cases[0]);
}
