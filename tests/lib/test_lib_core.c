/* Unit tests of libkenaf_sim's parts without I/O: KENAF_* parsing, the
 * motion control law (against a small belt model), the robot clock and the
 * STATUS -> hrt_status conversion. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "motion.h"
#include "robot_clock.h"
#include "settings.h"
#include "status_fill.h"

/* ---- settings -------------------------------------------------------- */

static void robot_ok(const char *in, const char *host, const char *port)
{
    char h[KN_SETTINGS_HOST_LEN], p[KN_SETTINGS_PORT_LEN], err[200];
    ck_assert_msg(kn_settings_parse_robot(in, h, sizeof h, p, sizeof p, err, sizeof err) == 0,
                  "'%s' refused: %s", in, err);
    ck_assert_str_eq(h, host);
    ck_assert_str_eq(p, port);
}

static void robot_bad(const char *in)
{
    char h[KN_SETTINGS_HOST_LEN], p[KN_SETTINGS_PORT_LEN], err[200] = "";
    ck_assert_msg(kn_settings_parse_robot(in, h, sizeof h, p, sizeof p, err, sizeof err) != 0,
                  "'%s' accepted", in);
    ck_assert(err[0] != '\0');
}

START_TEST(robot_address_forms)
{
    robot_ok("127.0.0.1:9750", "127.0.0.1", "9750");
    robot_ok("localhost:1", "localhost", "1");
    robot_ok("robot.lan", "robot.lan", "9750");
    robot_ok("[::1]:9800", "::1", "9800");
    robot_ok("[fe80::1%eth0]", "fe80::1%eth0", "9750");
    robot_ok("::1", "::1", "9750");
    robot_bad("");
    robot_bad(":9750");
    robot_bad("host:");
    robot_bad("host:0");
    robot_bad("host:65536");
    robot_bad("host:12x");
    robot_bad("[::1");
    robot_bad("[::1]x");
    robot_bad("[]:9750");
}
END_TEST

START_TEST(int_parsing)
{
    int v = 0;
    ck_assert_int_eq(kn_settings_parse_int("20", 10, 1000, &v), 0);
    ck_assert_int_eq(v, 20);
    ck_assert_int_eq(kn_settings_parse_int("9", 10, 1000, &v), -1);
    ck_assert_int_eq(kn_settings_parse_int("1001", 10, 1000, &v), -1);
    ck_assert_int_eq(kn_settings_parse_int(" 20", 10, 1000, &v), -1);
    ck_assert_int_eq(kn_settings_parse_int("20ms", 10, 1000, &v), -1);
    ck_assert_int_eq(kn_settings_parse_int("", 10, 1000, &v), -1);
    ck_assert_int_eq(kn_settings_parse_int("99999999999999999999", 10, 1000, &v), -1);
}
END_TEST

START_TEST(settings_from_environment)
{
    struct kn_settings s;
    char err[300] = "";
    unsetenv("KENAF_ROBOT");
    unsetenv("KENAF_TIMEOUT_MS");
    unsetenv("KENAF_STATUS_MS");
    unsetenv("KENAF_DEBUG");
    ck_assert_int_eq(kn_settings_load(&s, err, sizeof err), 0);
    ck_assert_str_eq(s.host, "127.0.0.1");
    ck_assert_str_eq(s.port, "9750");
    ck_assert_int_eq(s.timeout_ms, 1000);
    ck_assert_int_eq(s.status_ms, 20);
    ck_assert(!s.debug);

    setenv("KENAF_ROBOT", "[::1]:9000", 1);
    setenv("KENAF_TIMEOUT_MS", "250", 1);
    setenv("KENAF_STATUS_MS", "50", 1);
    setenv("KENAF_DEBUG", "1", 1);
    ck_assert_int_eq(kn_settings_load(&s, err, sizeof err), 0);
    ck_assert_str_eq(s.host, "::1");
    ck_assert_str_eq(s.port, "9000");
    ck_assert_int_eq(s.timeout_ms, 250);
    ck_assert_int_eq(s.status_ms, 50);
    ck_assert(s.debug);

    setenv("KENAF_STATUS_MS", "5", 1);
    ck_assert_int_eq(kn_settings_load(&s, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "KENAF_STATUS_MS") != NULL, "%s", err);
    setenv("KENAF_STATUS_MS", "20", 1);
    setenv("KENAF_TIMEOUT_MS", "soon", 1);
    ck_assert_int_eq(kn_settings_load(&s, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "KENAF_TIMEOUT_MS") != NULL, "%s", err);
    setenv("KENAF_TIMEOUT_MS", "1000", 1);
    setenv("KENAF_ROBOT", "host:99999", 1);
    ck_assert_int_eq(kn_settings_load(&s, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "KENAF_ROBOT") != NULL, "%s", err);
}
END_TEST

/* ---- motion ---------------------------------------------------------- */

START_TEST(count_delta_wraps)
{
    ck_assert_int_eq(kn_motion_count_delta(100, 250), 150);
    ck_assert_int_eq(kn_motion_count_delta(250, 100), -150);
    ck_assert_int_eq(kn_motion_count_delta(INT32_MAX - 10, INT32_MIN + 9), 20);
    ck_assert_int_eq(kn_motion_count_delta(INT32_MIN + 9, INT32_MAX - 10), -20);
    ck_assert_int_eq(kn_motion_count_delta(-5, 5), 10);
}
END_TEST

START_TEST(yaw_step_takes_short_way)
{
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(17900, -17900), 200);
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(-17900, 17900), -200);
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(0, 9000), 9000);
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(18000, -18000 + 1), 1);
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(0, 18000), 18000);
    ck_assert_int_eq(kn_motion_yaw_step_cdeg(100, -17900), 18000);
}
END_TEST

START_TEST(profile_shape)
{
    const struct kn_profile *p = &kn_motion_default_profile;
    /* ramps from rest by accel*dt, but not below vmin */
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, 1000, 0, 0.02), 20.0, 1e-9);
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, 1000, 100, 0.02), 108.0, 1e-9);
    /* cruise */
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, 1000, 200, 0.02), 200.0, 1e-9);
    /* brakes as sqrt(2 a d) */
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, 20, 200, 0.02), sqrt(2 * 400 * 20), 1e-9);
    /* sign follows the remaining distance */
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, -1000, -200, 0.02), -200.0, 1e-9);
    /* never more than one period of travel past the target */
    ck_assert_double_eq_tol(kn_motion_profile_speed(p, 0.2, 50, 0.02), 10.0, 1e-9);
}
END_TEST

/* A belt model for closed-loop tests: belts slew at 1 m/s^2 toward the
 * command, one STATUS every 20 ms, the command applied one period late. */
struct plant {
    struct kn_krp_status st;
    double pos[2];   /* belt travel, mm */
    double speed[2]; /* mm/s */
    double cmd[2];
    double yaw_deg;
    double counts_per_mm;
    double t;
    bool stuck;
};

static void plant_step(struct plant *p, double dt)
{
    for (int n = 0; n < 20; n++) {
        double h = dt / 20;
        for (int i = 0; i < 2; i++) {
            double d = p->cmd[i] - p->speed[i];
            double max = 1000.0 * h;
            p->speed[i] += d > max ? max : d < -max ? -max : d;
            if (p->stuck)
                p->speed[i] = 0;
            p->pos[i] += p->speed[i] * h;
        }
        p->yaw_deg += (p->speed[1] - p->speed[0]) / 230.0 * h * 180.0 / M_PI;
    }
    p->t += dt;
    p->st.time_us = (uint64_t)llround(p->t * 1e6);
    for (int i = 0; i < 2; i++)
        p->st.crawler_count[i] = (int32_t)(uint32_t)(int64_t)llround(p->pos[i] * p->counts_per_mm);
    double y = fmod(p->yaw_deg, 360.0);
    if (y > 180)
        y -= 360;
    if (y <= -180)
        y += 360;
    p->st.rpy_cdeg[2] = (int32_t)lround(y * 100);
}

static enum kn_motion_result run_plant(struct plant *p, enum kn_motion_kind kind, double target,
                                       double max_s)
{
    struct kn_motion m;
    kn_motion_start(&m, kind, target, 1.0 / p->counts_per_mm, &p->st);
    for (double t0 = p->t; p->t - t0 < max_s;) {
        plant_step(p, 0.02);
        double belt[2];
        enum kn_motion_result r = kn_motion_update(&m, &p->st, belt);
        if (r != KN_MOTION_RUN) {
            p->cmd[0] = p->cmd[1] = 0;
            for (int i = 0; i < 50; i++)
                plant_step(p, 0.02);
            return r;
        }
        ck_assert(fabs(belt[0]) <= 200.0 * 1.25 + 1e-9 && fabs(belt[1]) <= 200.0 * 1.25 + 1e-9);
        p->cmd[0] = belt[0];
        p->cmd[1] = belt[1];
    }
    return KN_MOTION_RUN;
}

static void plant_init(struct plant *p, double counts_per_mm, int32_t count0, double yaw0)
{
    memset(p, 0, sizeof *p);
    p->counts_per_mm = counts_per_mm;
    p->pos[0] = p->pos[1] = count0 / counts_per_mm;
    p->yaw_deg = yaw0;
    plant_step(p, 0.02);
}

START_TEST(forward_reaches_target)
{
    const double targets[] = { 100, -250, 1.5, 1000 };
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        struct plant p;
        plant_init(&p, 10.0, 0, 0);
        ck_assert_int_eq(run_plant(&p, KN_MOTION_FORWARD, targets[i], 30), KN_MOTION_DONE);
        double travel = (p.pos[0] + p.pos[1]) / 2;
        ck_assert_msg(fabs(travel - targets[i]) < 2.0, "target %g: travelled %g", targets[i],
                      travel);
    }
}
END_TEST

START_TEST(forward_across_counter_wrap)
{
    struct plant p;
    plant_init(&p, 10.0, INT32_MAX - 300, 0);
    double start = p.pos[0];
    ck_assert_int_eq(run_plant(&p, KN_MOTION_FORWARD, 100, 30), KN_MOTION_DONE);
    ck_assert(p.st.crawler_count[0] < 0); /* the register did wrap */
    ck_assert_msg(fabs(p.pos[0] - start - 100) < 2.0, "travelled %g", p.pos[0] - start);
}
END_TEST

START_TEST(turn_reaches_target)
{
    const double cases[][2] = { { 0, 90 },   { 0, -90 },    { 0, 270 },
                                { 170, 20 }, { -170, -20 }, { 179, 720 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct plant p;
        plant_init(&p, 10.0, 0, cases[i][0]);
        double y0 = p.yaw_deg;
        ck_assert_int_eq(run_plant(&p, KN_MOTION_TURN, cases[i][1], 60), KN_MOTION_DONE);
        ck_assert_msg(fabs(p.yaw_deg - y0 - cases[i][1]) < 1.0, "from %g by %g: turned %g",
                      cases[i][0], cases[i][1], p.yaw_deg - y0);
    }
}
END_TEST

START_TEST(stall_is_reported_on_robot_time)
{
    struct plant p;
    plant_init(&p, 10.0, 0, 0);
    p.stuck = true;
    double t0 = p.t;
    ck_assert_int_eq(run_plant(&p, KN_MOTION_FORWARD, 100, 30), KN_MOTION_STALL);
    double took = p.t - t0 - 50 * 0.02; /* minus the settling run_plant adds */
    ck_assert_msg(took >= KN_MOTION_STALL_S && took < KN_MOTION_STALL_S + 0.1, "stalled after %g s",
                  took);
}
END_TEST

/* ---- robot clock ----------------------------------------------------- */

#define MS 1000000LL

START_TEST(clock_follows_rate_and_caps)
{
    struct kn_clock c;
    kn_clock_reset(&c, 20);
    kn_clock_sample(&c, 1000000, 0);
    kn_clock_sample(&c, 1100000, 20 * MS); /* 100 ms robot in 20 ms wall: 5x */
    ck_assert_double_eq_tol(c.rate, 5.0, 1e-9);
    ck_assert_double_eq_tol(kn_clock_now(&c, 30 * MS), 1.15, 1e-9);
    /* extrapolation stops after two periods (40 ms wall) */
    ck_assert_double_eq_tol(kn_clock_now(&c, 500 * MS), 1.3, 1e-9);
    /* a late sample behind the extrapolation does not make time go back */
    kn_clock_sample(&c, 1120000, 500 * MS);
    ck_assert_double_eq_tol(kn_clock_now(&c, 500 * MS), 1.3, 1e-9);
}
END_TEST

START_TEST(clock_pauses_with_the_robot)
{
    struct kn_clock c;
    kn_clock_reset(&c, 20);
    kn_clock_sample(&c, 2000000, 0);
    kn_clock_sample(&c, 2000000, 20 * MS);
    ck_assert_double_eq_tol(c.rate, 0.0, 1e-12);
    ck_assert_double_eq_tol(kn_clock_now(&c, 35 * MS), 2.0, 1e-12);
    ck_assert_int_eq(kn_clock_wall_until(&c, 3.0), -1);
}
END_TEST

START_TEST(clock_survives_robot_restart)
{
    struct kn_clock c;
    kn_clock_reset(&c, 20);
    kn_clock_sample(&c, 50000000, 0);
    kn_clock_sample(&c, 50020000, 20 * MS);
    double before = kn_clock_now(&c, 20 * MS);
    kn_clock_sample(&c, 0, 40 * MS); /* robot clock restarted at 0 */
    double after = kn_clock_now(&c, 40 * MS);
    ck_assert(after >= before);
    kn_clock_sample(&c, 20000, 60 * MS);
    ck_assert(kn_clock_now(&c, 60 * MS) > after);
}
END_TEST

START_TEST(clock_close_samples_keep_rate)
{
    struct kn_clock c;
    kn_clock_reset(&c, 20);
    kn_clock_sample(&c, 0, 0);
    kn_clock_sample(&c, 20000, 20 * MS);
    kn_clock_sample(&c, 20000, 20 * MS + 100000); /* a STATUS_REQ answer 0.1 ms later */
    ck_assert_double_eq_tol(c.rate, 1.0, 1e-9);
    ck_assert_int_eq(kn_clock_wall_until(&c, kn_clock_now(&c, 20 * MS) + 0.5), 500 * MS);
}
END_TEST

/* ---- status ---------------------------------------------------------- */

START_TEST(status_units)
{
    struct kn_krp_status s;
    memset(&s, 0, sizeof s);
    s.time_us = 12345678;
    s.crawler_count[0] = -7;
    s.crawler_count[1] = INT32_MAX;
    s.crawler_speed_mm_s[0] = 200;
    s.flipper_cdeg[2] = -11950;
    s.flipper_torque_mnm[3] = 1500;
    s.rpy_cdeg[0] = 150;
    s.rpy_cdeg[1] = -250;
    s.rpy_cdeg[2] = 18000;
    s.rate_mdeg_s[2] = 90000;
    s.accel_mm_s2[2] = 9807;
    s.pos_mm[0] = -1234;
    s.battery_mv = 24100;
    s.flags = 0x0006;
    hrt_status st;
    kn_status_fill(&s, &st);
    ck_assert_double_eq_tol(st.time_s, 12.345678, 1e-12);
    ck_assert_int_eq(st.crawler_count[0], -7);
    ck_assert_int_eq(st.crawler_count[1], INT32_MAX);
    ck_assert_double_eq(st.crawler_speed[0], 200);
    ck_assert_double_eq_tol(st.flipper_angle[2], -119.5, 1e-12);
    ck_assert_double_eq_tol(st.flipper_torque[3], 1.5, 1e-12);
    ck_assert_double_eq_tol(st.roll, 1.5, 1e-12);
    ck_assert_double_eq_tol(st.pitch, -2.5, 1e-12);
    ck_assert_double_eq_tol(st.yaw, 180.0, 1e-12);
    ck_assert_double_eq_tol(st.angular_rate[2], 90.0, 1e-12);
    ck_assert_double_eq(st.acceleration[2], 9807);
    ck_assert_double_eq(st.position[0], -1234);
    ck_assert_double_eq_tol(st.battery, 24.1, 1e-12);
    ck_assert_uint_eq(st.flags, HRT_FLAG_BACKEND_UP | HRT_FLAG_SIMULATED);
}
END_TEST

START_TEST(flag_names_and_block)
{
    char buf[128];
    kn_status_flag_names(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "none");
    kn_status_flag_names(HRT_FLAG_ESTOP | HRT_FLAG_SIMULATED | 0x100, buf, sizeof buf);
    ck_assert_str_eq(buf, "ESTOP SIMULATED 0x100");
    kn_status_flag_names(0x3f, buf, sizeof buf);
    ck_assert_str_eq(buf, "ESTOP BACKEND_UP SIMULATED WATCHDOG CLAMPED STALE");

    hrt_status st;
    memset(&st, 0, sizeof st);
    st.flags = HRT_FLAG_SIMULATED | HRT_FLAG_BACKEND_UP;
    st.battery = 24;
    st.yaw = 90;
    char block[1024];
    kn_status_format(&st, "kenaf1", block, sizeof block);
    ck_assert_msg(strstr(block, "kenaf1 (simulated)") != NULL, "%s", block);
    ck_assert_msg(strstr(block, "yaw 90.00 deg") != NULL, "%s", block);
    ck_assert_msg(strstr(block, "24.00 V") != NULL, "%s", block);
    ck_assert_msg(strstr(block, "BACKEND_UP SIMULATED") != NULL, "%s", block);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, robot_address_forms);
    tcase_add_test(tc, int_parsing);
    tcase_add_test(tc, settings_from_environment);
    tcase_add_test(tc, count_delta_wraps);
    tcase_add_test(tc, yaw_step_takes_short_way);
    tcase_add_test(tc, profile_shape);
    tcase_add_test(tc, forward_reaches_target);
    tcase_add_test(tc, forward_across_counter_wrap);
    tcase_add_test(tc, turn_reaches_target);
    tcase_add_test(tc, stall_is_reported_on_robot_time);
    tcase_add_test(tc, clock_follows_rate_and_caps);
    tcase_add_test(tc, clock_pauses_with_the_robot);
    tcase_add_test(tc, clock_survives_robot_restart);
    tcase_add_test(tc, clock_close_samples_keep_rate);
    tcase_add_test(tc, status_units);
    tcase_add_test(tc, flag_names_and_block);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
