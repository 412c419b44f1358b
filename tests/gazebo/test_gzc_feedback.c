/* Unit tests of the gazebo backend's feedback (daemon/backends/gazebo_classic/backend_gazebo_state.c):
 * Gazebo messages in, neutral state out. Time from the messages, belt
 * travel integrated from ~/tracks_speed over sim time (and not while
 * paused), world resets, the model's pose and attitude, derived rates and
 * accelerations, flipper angles from the links' orientations, rest. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_gazebo.h"
#include "harness_suite.h"

static struct kn_gazebo_fb fb;
static struct kn_conv_table conv;

static const char *const joints[4] = { "front_left_flipper_joint",
                                       "kenaf::front_right_flipper_joint", "RLFlipper",
                                       "rear_right_j" };

static void setup(void)
{
    kn_conv_table_gazebo(&conv);
    conv.tracks_separation_m = 0.23;
    kn_gazebo_fb_init(&fb, &conv, "kenaf", joints, NULL);
}

static Gazebo__Msgs__Time tm_(double s)
{
    Gazebo__Msgs__Time t = GAZEBO__MSGS__TIME__INIT;
    struct kn_gzc_stamp st = kn_gzc_stamp_from_ns((int64_t)llround(s * 1e9));
    t.sec = st.sec;
    t.nsec = st.nsec;
    return t;
}

static void stats(double t, bool paused, uint64_t iterations)
{
    Gazebo__Msgs__Time a = tm_(t), z = tm_(0);
    Gazebo__Msgs__WorldStatistics m = GAZEBO__MSGS__WORLD_STATISTICS__INIT;
    m.sim_time = &a;
    m.pause_time = &z;
    m.real_time = &z;
    m.paused = paused;
    m.iterations = iterations;
    ck_assert(kn_gazebo_fb_world_stats(&fb, &m));
}

static void tracks(double l, double r)
{
    Gazebo__Msgs__Vector2d v = GAZEBO__MSGS__VECTOR2D__INIT;
    v.x = l;
    v.y = r;
    ck_assert(kn_gazebo_fb_tracks(&fb, &v));
}

/* one PosesStamped: the model at (x, y, z) with attitude rpy, and the
 * flipper links (by name) at joint angles fl[] about +y */
static bool poses(double t, const double pos[3], const double rpy[3], const char *const links[4],
                  const double fl[4], const char *model)
{
    Gazebo__Msgs__Vector3d v[5];
    Gazebo__Msgs__Quaternion q[5];
    Gazebo__Msgs__Pose p[5], *pp[5];
    size_t n = 0;
    for (int i = 0; i < 5; i++) {
        if (i > 0 && (!links || !links[i - 1]))
            continue;
        Gazebo__Msgs__Vector3d vi = GAZEBO__MSGS__VECTOR3D__INIT;
        Gazebo__Msgs__Quaternion qi = GAZEBO__MSGS__QUATERNION__INIT;
        Gazebo__Msgs__Pose pi = GAZEBO__MSGS__POSE__INIT;
        double quat[4];
        double r[3] = { 0, i ? fl[i - 1] : 0, 0 };
        kn_conv_rpy_to_quat(i ? r : rpy, quat);
        v[n] = vi;
        q[n] = qi;
        p[n] = pi;
        if (i == 0) {
            v[n].x = pos[0];
            v[n].y = pos[1];
            v[n].z = pos[2];
        }
        q[n].x = quat[0];
        q[n].y = quat[1];
        q[n].z = quat[2];
        q[n].w = quat[3];
        p[n].name = (char *)(i ? links[i - 1] : model);
        p[n].position = &v[n];
        p[n].orientation = &q[n];
        pp[n] = &p[n];
        n++;
    }
    Gazebo__Msgs__Time tt = tm_(t);
    Gazebo__Msgs__PosesStamped m = GAZEBO__MSGS__POSES_STAMPED__INIT;
    m.time = &tt;
    m.n_pose = n;
    m.pose = pp;
    return kn_gazebo_fb_poses(&fb, &m);
}

static const double ORIGIN[3] = { 0, 0, 0 }, LEVEL[3] = { 0, 0, 0 };

START_TEST(link_names)
{
    ck_assert_str_eq(fb.flipper_link[0][0], "kenaf::front_left_flipper");
    ck_assert_str_eq(fb.flipper_link[0][1], "kenaf::front_left_flipper_joint");
    ck_assert_str_eq(fb.flipper_link[1][0], "kenaf::front_right_flipper");
    ck_assert_str_eq(fb.flipper_link[2][0], "kenaf::RLFlipper");
    ck_assert_str_eq(fb.flipper_link[3][0], "kenaf::rear_right");
    char s[64];
    ck_assert_int_eq(kn_gazebo_scoped_joint(s, sizeof s, "kenaf", "fl_joint"), 0);
    ck_assert_str_eq(s, "kenaf::fl_joint");
    ck_assert_int_eq(kn_gazebo_scoped_joint(s, sizeof s, "kenaf", "other::fl_joint"), 0);
    ck_assert_str_eq(s, "other::fl_joint");
    ck_assert_int_eq(kn_gazebo_scoped_joint(s, 8, "kenaf", "fl_joint"), -1);
}
END_TEST

START_TEST(time_and_belt_travel)
{
    stats(10.0, false, 10000);
    ck_assert(fb.st.have & KN_HAVE_TIME);
    ck_assert_double_eq_tol(fb.st.time_s, 10.0, 1e-9);
    tracks(0.3, 0.1); /* from t = 10 s */
    stats(11.0, false, 11000);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.3, 1e-12);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[1], 0.1, 1e-12);
    ck_assert_double_eq(fb.st.belt_speed_m_s[0], 0.3);
    tracks(-0.2, -0.2); /* at t = 11 s */
    stats(13.5, false, 13500);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.3 - 0.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[1], 0.1 - 0.5, 1e-12);
    /* paused: sim time stands, so do the belts */
    stats(13.5, true, 13500);
    stats(13.5, true, 13500);
    ck_assert(fb.paused);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], -0.2, 1e-12);
    ck_assert_uint_eq(fb.iterations, 13500);
}
END_TEST

START_TEST(reordered_time_is_not_a_reset)
{
    stats(5.0, false, 5000);
    ck_assert(poses(5.02, ORIGIN, LEVEL, NULL, NULL, "kenaf"));
    stats(5.01, false, 5010); /* an older stats frame after a newer pose */
    ck_assert_uint_eq(fb.resets, 0);
    ck_assert_double_eq_tol(fb.st.time_s, 5.02, 1e-9);
}
END_TEST

START_TEST(world_reset)
{
    stats(20.0, false, 20000);
    tracks(0.5, 0.5);
    stats(21.0, false, 21000);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.5, 1e-12);
    tracks(0, 0);
    stats(0.2, false, 200); /* reset: time and iterations go back */
    ck_assert_uint_eq(fb.resets, 1);
    ck_assert_double_eq_tol(fb.st.time_s, 0.2, 1e-9);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.5, 1e-12); /* encoders do not jump */
    tracks(0.1, 0.1);
    stats(1.2, false, 1200);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 0.6, 1e-12);
    /* a reset right after the start is seen through the iteration count */
    setup();
    stats(0.3, false, 300);
    stats(0.1, false, 100);
    ck_assert_uint_eq(fb.resets, 1);
}
END_TEST

START_TEST(pose_attitude_and_rates)
{
    double pos[3] = { 1.5, -2.0, 0.1 }, rpy[3] = { 0.1, -0.2, 1.0 };
    ck_assert(poses(1.0, pos, rpy, NULL, NULL, "kenaf"));
    ck_assert(fb.st.have & KN_HAVE_POSITION);
    ck_assert(fb.st.have & KN_HAVE_ATTITUDE);
    ck_assert(!(fb.st.have & KN_HAVE_RATE));
    ck_assert_double_eq_tol(fb.st.pos_m[0], 1.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.pos_m[1], -2.0, 1e-12);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(fb.st.rpy_rad[i], rpy[i], 1e-12);
    /* a yaw rate of 0.5 rad/s, level */
    double r0[3] = { 0, 0, 0.2 }, r1[3] = { 0, 0, 0.25 };
    ck_assert(poses(2.0, pos, r0, NULL, NULL, "kenaf"));
    ck_assert(poses(2.1, pos, r1, NULL, NULL, "kenaf"));
    ck_assert(fb.st.have & KN_HAVE_RATE);
    ck_assert_double_eq_tol(fb.st.rate_rad_s[2], 0.5, 1e-9);
    ck_assert_double_eq_tol(fb.st.rate_rad_s[0], 0, 1e-9);
    /* the same message again (a latched replay) changes nothing derived */
    ck_assert(poses(2.1, pos, r1, NULL, NULL, "kenaf"));
    ck_assert_double_eq_tol(fb.st.rate_rad_s[2], 0.5, 1e-9);
    ck_assert_double_eq_tol(fb.st.time_s, 2.1, 1e-9);
}
END_TEST

START_TEST(acceleration)
{
    /* constant velocity: only gravity */
    for (int i = 0; i < 3; i++) {
        double p[3] = { 0.1 * i, 0, 0 };
        ck_assert(poses(1.0 + 0.1 * i, p, LEVEL, NULL, NULL, "kenaf"));
    }
    ck_assert(fb.st.have & KN_HAVE_ACCEL);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[0], 0, 1e-9);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[2], KN_GRAVITY, 1e-9);
    /* x = t^2 (2 m/s^2), yaw 90 deg: the body's y axis points along -x */
    setup();
    double yaw90[3] = { 0, 0, KN_PI / 2 };
    for (int i = 0; i < 3; i++) {
        double t = 0.1 * i, p[3] = { t * t, 0, 0 };
        ck_assert(poses(1.0 + t, p, yaw90, NULL, NULL, "kenaf"));
    }
    ck_assert_double_eq_tol(fb.st.accel_m_s2[0], 0, 1e-9);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[1], -2.0, 1e-9);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[2], KN_GRAVITY, 1e-9);
}
END_TEST

START_TEST(at_rest)
{
    double rpy[3] = { 0, 0.3, 0 };
    ck_assert(poses(1.0, ORIGIN, LEVEL, NULL, NULL, "kenaf"));
    ck_assert(poses(1.1, ORIGIN, rpy, NULL, NULL, "kenaf"));
    ck_assert(fb.st.rate_rad_s[1] > 2.9);
    /* Gazebo stops sending a model that does not move */
    stats(1.2, false, 1200);
    ck_assert(fb.st.rate_rad_s[1] > 2.9);
    stats(1.5, false, 1500);
    ck_assert_double_eq(fb.st.rate_rad_s[1], 0);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[0], -KN_GRAVITY * sin(0.3), 1e-9);
    ck_assert_double_eq_tol(fb.st.accel_m_s2[2], KN_GRAVITY * cos(0.3), 1e-9);
}
END_TEST

START_TEST(flippers_from_links)
{
    const char *const links[4] = { "kenaf::front_left_flipper", "kenaf::front_right_flipper_joint",
                                   "kenaf::RLFlipper", "kenaf::rear_right" };
    const double joint[4] = { 0.5, -0.25, 0.75, -1.0 };
    const char *const three[4] = { links[0], links[1], links[2], NULL };
    ck_assert(poses(1.0, ORIGIN, LEVEL, three, joint, "kenaf"));
    ck_assert(!(fb.st.have & KN_HAVE_FLIPPER)); /* one link missing: not all known */
    ck_assert(poses(1.1, ORIGIN, LEVEL, links, joint, "kenaf"));
    ck_assert(fb.st.have & KN_HAVE_FLIPPER);
    /* defaults: front joints sign -1, rear +1 */
    ck_assert_double_eq_tol(fb.st.flipper_rad[0], -0.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[1], 0.25, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[2], 0.75, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[3], -1.0, 1e-12);
    /* a command target goes the other way: joint = sign * krp + offset */
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(kn_conv_flipper_to_joint(&conv, k, fb.st.flipper_rad[k]), joint[k],
                                1e-12);
}
END_TEST

/* links named in the config win over the names derived from the joints */
START_TEST(flippers_from_configured_links)
{
    const char *const cfg_links[4] = { "fl_arm", "kenaf::fr_arm", "", NULL };
    kn_gazebo_fb_init(&fb, &conv, "kenaf", joints, cfg_links);
    ck_assert_str_eq(fb.flipper_link[0][0], "kenaf::fl_arm");
    ck_assert_str_eq(fb.flipper_link[0][1], "kenaf::fl_arm");
    ck_assert_str_eq(fb.flipper_link[1][0], "kenaf::fr_arm");
    ck_assert_str_eq(fb.flipper_link[2][0], "kenaf::RLFlipper"); /* "" and NULL: derived */
    ck_assert_str_eq(fb.flipper_link[3][0], "kenaf::rear_right");
    const double joint[4] = { 0.5, -0.25, 0.75, -1.0 };
    /* the derived names no longer count for the configured flippers */
    const char *const derived[4] = { "kenaf::front_left_flipper", "kenaf::front_right_flipper",
                                     "kenaf::RLFlipper", "kenaf::rear_right" };
    ck_assert(poses(1.0, ORIGIN, LEVEL, derived, joint, "kenaf"));
    ck_assert(!(fb.st.have & KN_HAVE_FLIPPER));
    const char *const named[4] = { "kenaf::fl_arm", "kenaf::fr_arm", "kenaf::RLFlipper",
                                   "kenaf::rear_right" };
    ck_assert(poses(1.1, ORIGIN, LEVEL, named, joint, "kenaf"));
    ck_assert(fb.st.have & KN_HAVE_FLIPPER);
    ck_assert_double_eq_tol(fb.st.flipper_rad[0], -0.5, 1e-12);
    ck_assert_double_eq_tol(fb.st.flipper_rad[1], 0.25, 1e-12);
}
END_TEST

START_TEST(other_models_and_bad_numbers)
{
    ck_assert(!poses(1.0, ORIGIN, LEVEL, NULL, NULL, "other_robot"));
    ck_assert_uint_eq(fb.pose_without_model, 1);
    ck_assert(!(fb.st.have & KN_HAVE_POSITION));
    ck_assert(fb.st.have & KN_HAVE_TIME);
    double nanpos[3] = { NAN, 0, 0 };
    ck_assert(!poses(1.1, nanpos, LEVEL, NULL, NULL, "kenaf"));
    ck_assert_uint_eq(fb.bad_numbers, 1);
    Gazebo__Msgs__Vector2d v = GAZEBO__MSGS__VECTOR2D__INIT;
    v.x = INFINITY;
    ck_assert(!kn_gazebo_fb_tracks(&fb, &v));
    ck_assert_uint_eq(fb.bad_numbers, 2);
}
END_TEST

START_TEST(restart_keeps_travel)
{
    stats(1.0, false, 1000);
    tracks(1.0, 1.0);
    stats(2.0, false, 2000);
    kn_gazebo_fb_restart(&fb);
    stats(0.0, false, 0); /* a new gzserver: time from 0 */
    ck_assert_uint_eq(fb.resets, 0);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 1.0, 1e-12);
    tracks(0, 0);
    stats(5.0, false, 5000);
    ck_assert_double_eq_tol(fb.st.belt_pos_m[0], 1.0, 1e-12);
}
END_TEST

/* The table the feedback runs on comes from the robot's config through
 * kn_backend_conv_from_cfg: every field the config holds lands in it, in
 * either frame, whichever backend asks. */
START_TEST(conv_table_from_config)
{
    struct kn_cfg_robot cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.counts_per_m = 1234;
    cfg.backend.wheel_radius_m = 0.11;
    cfg.backend.counts_per_tick = 2.5;
    cfg.backend.encoder_sign[0] = -1;
    cfg.backend.encoder_sign[1] = 1;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        cfg.backend.flipper[k].sign = k % 2 ? 1 : -1;
        cfg.backend.flipper[k].offset_rad = 0.1 * (k + 1);
    }
    cfg.backend.tracks_separation_m = 0.31;
    cfg.backend.steering_efficiency = 0.7;
    cfg.backend.max_linear_speed_m_s = 1.5;
    cfg.backend.max_angular_speed_rad_s = 2.5;
    for (int f = 0; f < 2; f++) {
        enum kn_conv_frame frame = f ? KN_FRAME_Z_UP : KN_FRAME_Z_DOWN;
        struct kn_conv_table t;
        memset(&t, 0xff, sizeof t);
        kn_backend_conv_from_cfg(frame, &cfg, &t);
        ck_assert_int_eq(t.frame, frame);
        ck_assert_double_eq(t.wheel_radius_m, 0.11);
        ck_assert_int_eq(t.counts_per_m, 1234);
        ck_assert_double_eq(t.counts_per_tick, 2.5);
        ck_assert_double_eq(t.tick_sign[KN_LEFT], -1);
        ck_assert_double_eq(t.tick_sign[KN_RIGHT], 1);
        for (int k = 0; k < KN_NFLIPPERS; k++) {
            ck_assert_double_eq(t.flipper_sign[k], k % 2 ? 1 : -1);
            ck_assert_double_eq(t.flipper_offset_rad[k], 0.1 * (k + 1));
        }
        ck_assert_double_eq(t.tracks_separation_m, 0.31);
        ck_assert_double_eq(t.steering_efficiency, 0.7);
        ck_assert_double_eq(t.max_linear_speed_m_s, 1.5);
        ck_assert_double_eq(t.max_angular_speed_rad_s, 2.5);
        ck_assert_int_eq(kn_conv_table_check(&t, NULL, 0), 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gazebo feedback");
    TCase *tc = tcase_create("feedback");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, link_names);
    tcase_add_test(tc, time_and_belt_travel);
    tcase_add_test(tc, reordered_time_is_not_a_reset);
    tcase_add_test(tc, world_reset);
    tcase_add_test(tc, pose_attitude_and_rates);
    tcase_add_test(tc, acceleration);
    tcase_add_test(tc, at_rest);
    tcase_add_test(tc, flippers_from_links);
    tcase_add_test(tc, flippers_from_configured_links);
    tcase_add_test(tc, other_models_and_bad_numbers);
    tcase_add_test(tc, restart_keeps_travel);
    tcase_add_test(tc, conv_table_from_config);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
