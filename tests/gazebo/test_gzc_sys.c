/* System tests of the gazebo backend: a real kenaf-simd with a gazebo
 * backend config against gazebo_standin (a Gazebo Classic master + world
 * in its own process), over real UDP and TCP sockets. KRP/1 CRAWLER and
 * FLIPPER datagrams must arrive at the world as exactly the Twist (or
 * Pose) and JointCmd values the conversions give, STATUS must show the
 * world's pose, commands beyond the plugin's limits must arrive slowed on
 * the same path, flipper angles must come from links named in the config,
 * a restarted master must see the daemon advertise again
 * within 2 s, world control must pause, step and reset the world, a
 * world without the configured model and one where nobody takes joint_cmd
 * or the drive topic must be warned about and answered with ERROR
 * NO_MODEL / NO_ACTUATOR (a drive plugin loaded later is picked up),
 * and broken masters and publishers are counted and survived. */
#include <check.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_gazebo.h"
#include "gzc_harness.h"
#include "harness_suite.h"

#define MAXLOG 20000

static struct h_standin sim;
static struct h_daemon simd;
static struct h_udp ctl;
static struct kn_conv_table conv;
static struct gzc_twist twists[MAXLOG];
static struct gzc_joint joints[MAXLOG];

#define STAT(path) h_stat(&simd, "robots.0.backend." path)

static void start_all_sim(const char *gazebo_extra, char *const env[],
                          const char *const sim_extra[])
{
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", sim_extra);
    h_daemon_start_env(&simd, gzc_robots_json(sim.port, gazebo_extra), env);
    h_wait_backend_fresh(&simd, 0, H_LONG_MS); /* fresh: world_stats arrived */
    h_udp_open(&ctl, simd.port[0]);
}

static void start_all(const char *gazebo_extra, char *const env[])
{
    start_all_sim(gazebo_extra, env, NULL);
}

static void setup(void)
{
    h_setup();
    start_all("", NULL);
}

static void teardown(void)
{
    h_udp_close(&ctl);
    /* the daemon never sent "sub" for a topic the world does not publish,
     * and nothing it sent was malformed */
    ck_assert_int_eq(h_log_count(sim.log, "BUG_sub_for_unadvertised"), 0);
    ck_assert_int_eq(h_log_count(sim.log, "bad_"), 0);
    h_teardown();
}

/* Waits for a twist/posecmd line after index `from` carrying exactly
 * (lin, ang); returns its index, fails the test on timeout. */
static int wait_twist(int from, double lin, double ang)
{
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    for (;;) {
        int n = gzc_log_twists(sim.log, twists, MAXLOG);
        for (int i = from; i < n; i++)
            if (twists[i].lin == lin && twists[i].ang == ang)
                return i;
        ck_assert_msg(h_now_us() < end, "no command (%.17g, %.17g) reached the world", lin, ang);
        h_sleep_ms(10);
    }
}

static int wait_joint(int from, const char *name, double target)
{
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    for (;;) {
        int n = gzc_log_joints(sim.log, joints, MAXLOG);
        for (int i = from; i < n; i++)
            if (strcmp(joints[i].name, name) == 0 && joints[i].target == target)
                return i;
        ck_assert_msg(h_now_us() < end, "no JointCmd %s -> %.17g reached the world", name, target);
        h_sleep_ms(10);
    }
}

/* Polls STATUS until its flipper angles are want[] (within 0.01 deg). */
static void wait_status_flippers(const int32_t want[4])
{
    struct kn_krp_status s;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    bool ok;
    do {
        h_sleep_ms(50);
        s = h_status(&ctl);
        ok = true;
        for (int k = 0; k < 4; k++)
            ok &= abs(s.flipper_cdeg[k] - want[k]) <= 1;
    } while (!ok && h_now_us() < end);
    ck_assert_msg(ok, "flippers at %d %d %d %d", s.flipper_cdeg[0], s.flipper_cdeg[1],
                  s.flipper_cdeg[2], s.flipper_cdeg[3]);
}

static const char *const joint_names[4] = { "kenaf::front_left_flipper_joint",
                                            "kenaf::front_right_flipper_joint",
                                            "kenaf::rear_left_flipper_joint",
                                            "kenaf::rear_right_flipper_joint" };

START_TEST(hello_names_gazebo)
{
    h_hello(&ctl, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(&ctl, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO_ACK);
    ck_assert_uint_eq(m.u.hello_ack.backend, KN_KRP_BACKEND_GAZEBO);
    ck_assert_uint_eq(m.u.hello_ack.capabilities, KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_WORLD |
                                                      KN_KRP_CAP_SESSIONS | KN_KRP_CAP_ESTOP_INFO);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.world"), "default");
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.version"), "gazebo 11.14");
    ck_assert_double_eq(STAT("gazebo.topics.cmd.subscribers"), 1);
    ck_assert_double_eq(STAT("gazebo.topics.joint_cmd.subscribers"), 1);
    ck_assert_double_eq(STAT("gazebo.topics.world_control.subscribers"), 1);
    ck_assert_double_eq(STAT("gazebo.topics.world_stats.publishers"), 1);
    ck_assert_double_eq(STAT("gazebo.topics.pose_info.publishers"), 1);
    ck_assert_double_eq(STAT("gazebo.topics.tracks_speed.publishers"), 1);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.topics.cmd.name"),
                     "/gazebo/default/kenaf/cmd_vel_twist");
    /* the master saw exactly the daemon's advertisements and subscriptions */
    ck_assert_int_eq(h_log_count(sim.log, "M advertise /gazebo/default/kenaf/cmd_vel_twist "
                                          "gazebo.msgs.Twist "),
                     1);
    ck_assert_int_eq(h_log_count(sim.log, "M advertise /gazebo/default/kenaf/joint_cmd "
                                          "gazebo.msgs.JointCmd "),
                     1);
    ck_assert_int_eq(h_log_count(sim.log, "M advertise /gazebo/default/world_control "
                                          "gazebo.msgs.WorldControl "),
                     1);
    ck_assert_int_eq(h_log_count(sim.log, "M subscribe /gazebo/default/pose/info "
                                          "gazebo.msgs.PosesStamped "),
                     1);
}
END_TEST

START_TEST(crawler_becomes_exact_twist)
{
    static const int32_t cases[][2] = { { 300, 100 }, { -250, 400 }, { 800, -800 },
                                        { 123, 123 }, { -1, 0 },     { 0, 0 } };
    int from = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        h_crawler(&ctl, 0, 0, cases[i][0], cases[i][1]);
        struct kn_krp_crawler c = { cases[i][0], cases[i][1] };
        double belts[2], lin, ang, back[2];
        kn_conv_krp_crawler(&c, belts);
        kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
        int k = wait_twist(from, lin, ang);
        ck_assert(!twists[k].pose_form);
        /* the plugin's own formula gives back the commanded belt speeds */
        ck_assert_double_eq_tol(twists[k].belts[0], belts[0], 1e-12);
        ck_assert_double_eq_tol(twists[k].belts[1], belts[1], 1e-12);
        kn_conv_twist_to_belts(&conv, lin, ang, back);
        ck_assert_double_eq(twists[k].belts[0], back[0]);
        ck_assert_double_eq(twists[k].belts[1], back[1]);
        from = k + 1;
    }
    ck_assert_double_ge(STAT("gazebo.commands.sent"), 6);
    ck_assert_double_eq(STAT("gazebo.commands.encode_errors"), 0);
}
END_TEST

START_TEST(flipper_becomes_exact_joint_cmd)
{
    int32_t cdeg[4] = { 3000, -1500, 4500, -6000 };
    h_flipper(&ctl, 0, 0, 0x0f, cdeg);
    struct kn_krp_flipper f = { 0x0f, { cdeg[0], cdeg[1], cdeg[2], cdeg[3] } };
    struct kn_command cmd;
    memset(&cmd, 0, sizeof cmd);
    kn_conv_krp_flipper(&f, &cmd);
    for (int k = 0; k < 4; k++)
        wait_joint(0, joint_names[k], kn_conv_flipper_to_joint(&conv, k, cmd.flipper_rad[k]));
    /* one flipper only: only its joint gets a command */
    int before = gzc_log_joints(sim.log, joints, MAXLOG);
    int32_t one[4] = { 0, 0, 0, 1234 };
    h_flipper(&ctl, 0, 0, 0x08, one);
    wait_joint(before, joint_names[3],
               kn_conv_flipper_to_joint(&conv, 3, kn_conv_cdeg_to_rad(1234)));
    h_sleep_ms(100);
    int n = gzc_log_joints(sim.log, joints, MAXLOG);
    for (int i = before; i < n; i++)
        ck_assert_str_eq(joints[i].name, joint_names[3]);

    /* the world turns the joints; STATUS reads them back from the link poses */
    int32_t want[4] = { 3000, -1500, 4500, 1234 };
    wait_status_flippers(want);
}
END_TEST

/* Drives, stops, and compares STATUS with the pose the world published. */
START_TEST(status_shows_the_world_pose)
{
    uint64_t end = h_now_us() + 800000;
    while (h_now_us() < end) {
        h_crawler(&ctl, 0, 0, 300, 150);
        h_sleep_ms(50);
    }
    struct kn_krp_status s = h_status(&ctl);
    ck_assert_int_eq(s.crawler_speed_mm_s[0], 300); /* ~/tracks_speed */
    ck_assert_int_eq(s.crawler_speed_mm_s[1], 150);
    ck_assert_int_gt(s.crawler_count[0], s.crawler_count[1]);
    ck_assert_int_gt(s.rate_mdeg_s[2], -40000); /* turning right: yaw rate < 0 */
    ck_assert_int_lt(s.rate_mdeg_s[2], 0);
    h_simple(&ctl, 0, KN_KRP_STOP, 0);
    /* the world settles; its last published pose must be what STATUS says */
    double t, v[7], t2 = -1, v2[7];
    end = h_now_us() + H_LONG_MS * 1000ull;
    bool match = false;
    while (!match && h_now_us() < end) {
        h_sleep_ms(100);
        ck_assert(gzc_log_last_pose(sim.log, &t, v));
        s = h_status(&ctl);
        match = t == t2 && memcmp(v, v2, sizeof v) == 0 && s.crawler_speed_mm_s[0] == 0 &&
                abs(s.pos_mm[0] - kn_conv_m_to_mm(v[0])) <= 1 &&
                abs(s.pos_mm[1] - kn_conv_m_to_mm(v[1])) <= 1 &&
                abs(s.rpy_cdeg[2] - kn_conv_rad_to_cdeg_wrapped(v[2])) <= 1;
        t2 = t;
        memcpy(v2, v, sizeof v);
    }
    ck_assert_msg(match, "STATUS pos (%d, %d) yaw %d, world (%.4f, %.4f) yaw %.4f", s.pos_mm[0],
                  s.pos_mm[1], s.rpy_cdeg[2], v[0], v[1], v[2]);
    ck_assert_int_gt(s.pos_mm[0], 100); /* it really moved */
    ck_assert_int_lt(s.rpy_cdeg[2], -100);
    ck_assert_int_eq(s.pos_mm[2], 100); /* the model's z */
    ck_assert_int_eq(s.rpy_cdeg[0], 0);
    ck_assert_int_eq(s.rpy_cdeg[1], 0);
    /* belt travel: the integral of the track speeds over sim time */
    double travel = (double)s.crawler_count[0] / 4000.0;
    ck_assert_double_ge(travel, 0.2);
    ck_assert_double_le(travel, 0.3 * 1.5);
    ck_assert_uint_eq(s.flags & KN_KRP_ST_STALE, 0);
    ck_assert_double_eq(STAT("gazebo.data.bad_frames"), 0);
    ck_assert_double_eq(STAT("gazebo.data.bad_messages"), 0);
}
END_TEST

START_TEST(master_restart_readvertises)
{
    int32_t cdeg[4] = { 1000, 2000, -3000, -4000 };
    h_flipper(&ctl, 0, 0, 0x0f, cdeg);
    struct kn_krp_flipper f = { 0x0f, { cdeg[0], cdeg[1], cdeg[2], cdeg[3] } };
    struct kn_command cmd;
    memset(&cmd, 0, sizeof cmd);
    kn_conv_krp_flipper(&f, &cmd);
    for (int k = 0; k < 4; k++)
        wait_joint(0, joint_names[k], kn_conv_flipper_to_joint(&conv, k, cmd.flipper_rad[k]));

    int port = sim.port;
    h_standin_kill(&sim);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.BACKEND_UP", 0, H_LONG_MS));
    h_sleep_ms(300); /* the daemon is now retrying with back-off */
    gzc_sim_start(&sim, port, "world2", NULL);
    ck_assert_int_eq(sim.port, port);
    const char *adv = "M advertise /gazebo/default/kenaf/cmd_vel_twist gazebo.msgs.Twist";
    ck_assert_msg(h_log_wait(sim.log, adv, 1, H_LONG_MS), "never re-advertised");
    uint64_t t_listen = gzc_log_first(sim.log, "master_listening");
    uint64_t t_adv = gzc_log_first(sim.log, adv);
    ck_assert_uint_gt(t_listen, 0);
    ck_assert_msg(t_adv - t_listen < 2000000, "re-advertised %.3f s after the master came back",
                  (double)(t_adv - t_listen) / 1e6);
    /* all of it, and the set-points are re-applied to the new world */
    ck_assert(h_log_wait(sim.log, "M subscribe /gazebo/default/world_stats", 1, H_LONG_MS));
    for (int k = 0; k < 4; k++)
        wait_joint(0, joint_names[k], kn_conv_flipper_to_joint(&conv, k, cmd.flipper_rad[k]));
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    ck_assert_double_ge(h_stat(&simd, "robots.0.backend.reconnects"), 1);
    /* and commands flow again */
    h_crawler(&ctl, 0, 0, 200, 200);
    double belts[2] = { 0.2, 0.2 }, lin, ang;
    kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
    wait_twist(0, lin, ang);
}
END_TEST

/* ---- world control through the control socket ---------------------------- */

static int ctl_fd = -1;

static void ctl_connect(void)
{
    const char *path = h_path("kenaf.sock");
    ctl_fd = h_unix_stream_connect(path);
    ck_assert_msg(ctl_fd >= 0, "no control socket at %s", path);
}

static const char *ask(const char *cmd)
{
    static char reply[256];
    char line[128];
    snprintf(line, sizeof line, "%s\n", cmd);
    ck_assert_int_eq(write(ctl_fd, line, strlen(line)), (int)strlen(line));
    size_t n = 0;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (n + 1 < sizeof reply) {
        struct pollfd p = { .fd = ctl_fd, .events = POLLIN };
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        ck_assert_msg(left > 0 && poll(&p, 1, left) > 0, "no answer to \"%s\"", cmd);
        char c;
        ck_assert_int_eq(read(ctl_fd, &c, 1), 1);
        if (c == '\n')
            break;
        reply[n++] = c;
    }
    reply[n] = '\0';
    return reply;
}

static void setup_ctl(void)
{
    static char env[300];
    h_setup();
    snprintf(env, sizeof env, "%s=%s", KN_GAZEBO_CONTROL_ENV, h_path(""));
    char *e[] = { env, NULL };
    start_all("", e);
    ctl_connect();
}

static void teardown_ctl(void)
{
    if (ctl_fd >= 0)
        close(ctl_fd);
    ctl_fd = -1;
    teardown();
}

static double ws(const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "robots.0.backend.gazebo.world_stats.%s", what);
    return h_stat(&simd, path);
}

/* Polls until the world statistics the daemon has say iterations >= n. */
static bool wait_iterations(double n, int timeout_ms)
{
    return h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.iterations", n, timeout_ms);
}

START_TEST(world_control_pause_step_reset)
{
    const char *r = ask("status");
    ck_assert_msg(strncmp(r, "ok up=1 world=default paused=0", 30) == 0, "status: %s", r);
    ck_assert_str_eq(ask("pause"), "ok 1");
    ck_assert(h_log_wait(sim.log, "control pause=1 step=0 multi_step=0 reset=none", 1, H_LONG_MS));
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.world_stats.paused", 1, H_LONG_MS));
    /* paused: the iteration count stands (wait for two stats messages) */
    double i0 = ws("iterations");
    double f0 = STAT("gazebo.feedback.world_stats");
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.feedback.world_stats", f0 + 2, H_LONG_MS));
    ck_assert_double_eq(ws("iterations"), i0);
    ck_assert_double_eq_tol(ws("sim_time_s"), i0 * 0.001, 1e-6);

    ck_assert_str_eq(ask("step 250"), "ok 1");
    ck_assert(
        h_log_wait(sim.log, "control pause=- step=0 multi_step=250 reset=none", 1, H_LONG_MS));
    ck_assert(wait_iterations(i0 + 250, H_LONG_MS));
    f0 = STAT("gazebo.feedback.world_stats");
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.feedback.world_stats", f0 + 2, H_LONG_MS));
    ck_assert_double_eq(ws("iterations"), i0 + 250); /* exactly that many, still paused */
    ck_assert_double_eq(ws("paused"), 1);
    ck_assert_double_eq_tol(ws("sim_time_s"), (i0 + 250) * 0.001, 1e-6);
    ck_assert_str_eq(ask("step"), "ok 1");
    ck_assert(wait_iterations(i0 + 251, H_LONG_MS));

    ck_assert_str_eq(ask("play"), "ok 1");
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.world_stats.paused", 0, H_LONG_MS));
    ck_assert(wait_iterations(i0 + 800, H_LONG_MS));

    double before = ws("sim_time_s");
    ck_assert_double_gt(before, 0.5);
    ck_assert_str_eq(ask("reset"), "ok 1");
    ck_assert(h_log_wait(sim.log, "control pause=- step=0 multi_step=0 reset=all", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.resets_seen", 1, H_LONG_MS));
    ck_assert_double_lt(ws("sim_time_s"), before);
    ck_assert_str_eq(ask("reset time"), "ok 1");
    ck_assert(h_log_wait(sim.log, "reset=time", 1, H_LONG_MS));

    ck_assert_str_eq(ask("reset sideways"),
                     "error reset takes all, time or model, got \"sideways\"");
    ck_assert_str_eq(ask("step 0"), "error step count must be 1..1000000, got \"0\"");
    ck_assert_int_eq(strncmp(ask("fly"), "error unknown command", 21), 0);
    ck_assert_double_ge(STAT("gazebo.commands.world_control"), 6);
}
END_TEST

/* ---- the pose form of the command (older Gazebo) --------------------------- */

static void setup_pose(void)
{
    h_setup();
    start_all("\"command\":\"pose\"", NULL);
}

START_TEST(pose_command_form)
{
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.topics.cmd.name"),
                     "/gazebo/default/kenaf/cmd_vel");
    h_crawler(&ctl, 0, 0, 300, 100);
    double belts[2] = { 0.3, 0.1 }, lin, ang;
    kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
    /* the world reads x and the yaw of the quaternion back */
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    int n, k = -1;
    do {
        h_sleep_ms(20);
        n = gzc_log_twists(sim.log, twists, MAXLOG);
        for (int i = 0; i < n && k < 0; i++)
            if (twists[i].pose_form && twists[i].lin == lin)
                k = i;
    } while (k < 0 && h_now_us() < end);
    ck_assert_int_ge(k, 0);
    ck_assert_double_eq_tol(twists[k].ang, ang, 1e-12);
    ck_assert_double_eq_tol(twists[k].belts[0], 0.3, 1e-12);
    ck_assert_double_eq_tol(twists[k].belts[1], 0.1, 1e-12);
    ck_assert_int_eq(h_log_count(sim.log, " twist "), 0);
}
END_TEST

/* ---- the plugin's speed limits ---- */

/* A world whose plugin keeps the default max_angular_speed of 1 rad/s,
 * and a daemon told so. */
static void setup_limits(void)
{
    static const char *const slow_turns[] = { "--max-angular", "1", NULL };
    h_setup();
    start_all_sim("\"max_angular_speed_rad_s\":1", NULL, slow_turns);
    conv.max_angular_speed_rad_s = 1.0;
}

START_TEST(commands_scaled_to_plugin_limits)
{
    /* a pivot about the stopped right track asks for 1.74 rad/s: the plugin
     * alone would clamp the turn and run the right track at 0.17 m/s; the
     * daemon sends it slower instead, right track still stopped */
    h_crawler(&ctl, 0, 0, 800, 0);
    const double in[2] = { 0.8, 0.0 };
    double fit[2], lin, ang;
    double scale = kn_conv_belts_fit_plugin(&conv, in, fit);
    ck_assert_double_eq_tol(scale, 0.23 / 0.4, 1e-9);
    kn_conv_belts_to_twist(&conv, fit, &lin, &ang);
    int k = wait_twist(0, lin, ang);
    ck_assert_double_eq_tol(twists[k].belts[0], 0.46, 1e-9);
    ck_assert_double_eq_tol(twists[k].belts[1], 0.0, 1e-12);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.commands.scaled_to_plugin_limits", 1,
                          H_LONG_MS));
    ck_assert_double_eq_tol(STAT("gazebo.commands.last_scale"), scale, 1e-12);
    /* within the limits: sent exactly as commanded */
    h_crawler(&ctl, 0, 0, 300, 250);
    const double ok[2] = { 0.3, 0.25 };
    kn_conv_belts_to_twist(&conv, ok, &lin, &ang);
    k = wait_twist(k + 1, lin, ang);
    ck_assert_double_eq_tol(twists[k].belts[0], 0.3, 1e-12);
    ck_assert_double_eq_tol(twists[k].belts[1], 0.25, 1e-12);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.commands.last_scale", 1, H_LONG_MS));
    /* spin in place, twice: both slowed to +-0.23 m/s, counted, one warning */
    static const int32_t spins[2] = { 800, 700 };
    for (int i = 0; i < 2; i++) {
        h_crawler(&ctl, 0, 0, -spins[i], spins[i]);
        const double spin[2] = { -spins[i] / 1000.0, spins[i] / 1000.0 };
        kn_conv_belts_fit_plugin(&conv, spin, fit);
        kn_conv_belts_to_twist(&conv, fit, &lin, &ang);
        k = wait_twist(k + 1, lin, ang);
        ck_assert_double_eq_tol(twists[k].belts[0], -0.23, 1e-9);
        ck_assert_double_eq_tol(twists[k].belts[1], 0.23, 1e-9);
    }
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.commands.scaled_to_plugin_limits", 3,
                          H_LONG_MS));
    const char *err = h_stderr(&simd.proc);
    const char *w = strstr(err, "exceed the plugin's limits");
    ck_assert_msg(w != NULL, "no warning in: %s", err);
    ck_assert_ptr_null(strstr(w + 1, "exceed the plugin's limits"));
}
END_TEST

/* ---- flipper links that are not named after their joints ---- */

static void setup_links(void)
{
    static const char *const arms[] = { "--links", "arm_fl,arm_fr,arm_rl,arm_rr", NULL };
    h_setup();
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", arms);
    static char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"gazebo\","
             "\"address\":\"127.0.0.1:%d\",\"flippers\":{"
             "\"FL\":{\"joint\":\"front_left_flipper_joint\",\"link\":\"arm_fl\"},"
             "\"FR\":{\"joint\":\"front_right_flipper_joint\",\"link\":\"kenaf::arm_fr\"},"
             "\"RL\":{\"joint\":\"rear_left_flipper_joint\",\"link\":\"arm_rl\"},"
             "\"RR\":{\"joint\":\"rear_right_flipper_joint\",\"link\":\"arm_rr\"}},"
             "\"gazebo\":{\"model\":\"kenaf\",\"max_angular_speed_rad_s\":8}}}]",
             sim.port);
    h_daemon_start(&simd, cfg);
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_udp_open(&ctl, simd.port[0]);
}

START_TEST(flipper_angles_from_configured_links)
{
    int32_t cdeg[4] = { 2000, -1000, 3000, -4000 };
    h_flipper(&ctl, 0, 0, 0x0f, cdeg);
    wait_status_flippers(cdeg);
    for (int k = 0; k < 4; k++) {
        char path[96];
        snprintf(path, sizeof path, "robots.0.backend.gazebo.feedback.flipper_links.%d", k);
        ck_assert_str_eq(h_stat_str(&simd, path), "found");
    }
}
END_TEST

/* ---- GAZEBO_MASTER_URI and GAZEBO_IP, as Gazebo's own tools read them ---- */

/* The world has a tracked robot, but not under the configured name: the
 * daemon must not report ready-and-fine with zeros. STALE, a warning that
 * names the model and the world (and a model the world has instead), and
 * every set-point answered ERROR NO_MODEL (then ACK: kept, like
 * BACKEND_DOWN); nothing reaches the other model's topics. */
static void setup_wrong_model(void)
{
    h_setup();
    static const char *const other[] = { "--model", "other", NULL };
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", other);
    h_daemon_start(&simd, gzc_robots_json(sim.port, ""));
    h_udp_open(&ctl, simd.port[0]);
}

START_TEST(wrong_model_is_refused)
{
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 1, H_LONG_MS),
                  "STALE never set: %s", h_stderr(&simd.proc));
    /* STALE may come first (no pose of the model within stale_ms); the
     * verdict on the world comes when the backend has looked at it */
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_model", 1, H_LONG_MS),
                  "no_model never set: %s", h_stderr(&simd.proc));
    struct kn_krp_status st = h_status(&ctl);
    ck_assert_uint_eq(st.flags & KN_KRP_ST_BACKEND_UP, KN_KRP_ST_BACKEND_UP);
    ck_assert_uint_eq(st.flags & KN_KRP_ST_STALE, KN_KRP_ST_STALE);
    ck_assert_ptr_nonnull(strstr(h_stderr(&simd.proc),
                                 "model \"kenaf\" is not in world \"default\" (it has \"other\""));

    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_error(&ctl, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_CRAWLER);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    const int32_t cdeg[4] = { 1000, 1000, 1000, 1000 };
    seq = h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x0f, cdeg);
    h_expect_error(&ctl, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_FLIPPER);
    h_expect_ack(&ctl, seq, KN_KRP_FLIPPER);
    ck_assert_double_eq(h_stat(&simd, "robots.0.rules.while_no_model"), 2);
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 2);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.no_model"), 1);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.last_error"),
                     "model \"kenaf\" is not in world \"default\"");
    /* the world's own robot got nothing */
    h_sleep_ms(300);
    ck_assert_int_eq(gzc_log_twists(sim.log, twists, MAXLOG), 0);
    ck_assert_int_eq(gzc_log_joints(sim.log, joints, MAXLOG), 0);
    /* still STALE while the world sends its statistics */
    h_sleep_ms(600);
    ck_assert_uint_eq(h_status(&ctl).flags & KN_KRP_ST_STALE, KN_KRP_ST_STALE);
}
END_TEST

/* Stock Gazebo 9 to 11 without a bridge plugin: nobody subscribes to
 * joint_cmd. FLIPPER is refused with ERROR NO_ACTUATOR (no ACK, nothing
 * kept), warned once, counted; the belts still work and STATUS is fresh. */
static void setup_no_joint_cmd(void)
{
    h_setup();
    static const char *const no_joint[] = { "--no-joint-cmd", NULL };
    start_all_sim("", NULL, no_joint);
}

START_TEST(flippers_without_subscriber_are_refused)
{
    /* until the daemon has looked at the world, FLIPPER may be accepted */
    const int32_t cdeg[4] = { 1000, 1000, 1000, 1000 };
    struct kn_krp_msg m;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    bool refused = false;
    while (!refused && h_now_us() < end) {
        h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x0f, cdeg);
        ck_assert(h_udp_recv_answer(&ctl, &m, H_LONG_MS));
        refused = m.h.type == KN_KRP_ERROR && m.u.error.code == KN_KRP_ERR_NO_ACTUATOR;
        if (!refused) {
            ck_assert_uint_eq(m.h.type, KN_KRP_ACK);
            h_sleep_ms(200);
        }
    }
    ck_assert_msg(refused, "FLIPPER still accepted with nobody on joint_cmd: %s",
                  h_stderr(&simd.proc));
    h_expect_silence(&ctl); /* refused: no ACK */
    for (int i = 0; i < 2; i++) {
        uint32_t seq = h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x0f, cdeg);
        h_expect_error(&ctl, KN_KRP_ERR_NO_ACTUATOR, seq, KN_KRP_FLIPPER);
        h_expect_silence(&ctl);
    }
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.feedback.no_joint_cmd_subscriber"),
                        1);
    ck_assert_double_eq(h_stat(&simd, "robots.0.rules.no_actuator"), 3);
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_ACTUATOR"), 3);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.no_flippers"), 1);
    const char *err = h_stderr(&simd.proc),
               *w = "nobody subscribes to /gazebo/default/kenaf/joint_cmd";
    const char *first = strstr(err, w);
    ck_assert_msg(first != NULL, "no warning: %s", err);
    ck_assert_ptr_null(strstr(first + 1, w)); /* once */

    /* the belts are not affected, and the robot is really there */
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 100, 100);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    double belts[2] = { 0.1, 0.1 }, lin, ang;
    kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
    wait_twist(0, lin, ang);
    struct kn_krp_status st = h_status(&ctl);
    ck_assert_uint_eq(st.flags & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP), KN_KRP_ST_BACKEND_UP);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.feedback.no_model"), 0);
}
END_TEST

/* The model without its tracked-vehicle plugin: the world shows it, but
 * nobody subscribes to the drive topic. STATUS is STALE, CRAWLER is
 * refused with ERROR NO_ACTUATOR (no ACK, nothing kept), warned once,
 * counted; nothing reaches the world. The plugin loading later (SIGUSR1
 * to the stand-in) clears it without restarting anything: fresh, and the
 * belts are driven. */
static void setup_no_drive(void)
{
    h_setup();
    static const char *const no_drive[] = { "--no-drive", NULL };
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", no_drive);
    h_daemon_start(&simd, gzc_robots_json(sim.port, ""));
    h_udp_open(&ctl, simd.port[0]);
}

START_TEST(crawler_without_drive_is_refused)
{
    /* until the daemon has looked at the world, CRAWLER may be accepted */
    h_crawler_until_error(&ctl, KN_KRP_ERR_NO_ACTUATOR, 200, 200, H_LONG_MS);
    h_expect_silence(&ctl); /* refused: no ACK */
    struct kn_krp_status st = h_status(&ctl);
    ck_assert_uint_eq(st.flags & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP),
                      KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP);
    for (int i = 0; i < 2; i++) {
        uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
        h_expect_error(&ctl, KN_KRP_ERR_NO_ACTUATOR, seq, KN_KRP_CRAWLER);
        h_expect_silence(&ctl);
    }
    ck_assert_double_eq(h_stat(&simd, "robots.0.rules.no_actuator"), 3);
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_ACTUATOR"), 3);
    ck_assert_double_eq(STAT("gazebo.feedback.no_drive_subscriber"), 1);
    ck_assert_double_eq(STAT("gazebo.feedback.no_drive_subscriber_episodes"), 1);
    ck_assert_double_eq(STAT("gazebo.feedback.no_model"), 0);
    ck_assert_double_eq(STAT("gazebo.topics.cmd.subscribers"), 0);
    h_sleep_ms(500); /* several looks at the world later: still one warning */
    ck_assert_uint_eq(h_status(&ctl).flags & KN_KRP_ST_STALE, KN_KRP_ST_STALE);
    const char *w = "nobody subscribes to /gazebo/default/kenaf/cmd_vel";
    const char *first = strstr(h_stderr(&simd.proc), w);
    ck_assert_msg(first != NULL, "no warning: %s", h_stderr(&simd.proc));
    ck_assert_ptr_null(strstr(first + 1, w));
    ck_assert_int_eq(gzc_log_twists(sim.log, twists, MAXLOG), 0);

    /* the plugin loads: fresh again, and CRAWLER drives */
    h_signal(&sim.proc, SIGUSR1);
    ck_assert_msg(
        h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_drive_subscriber", 0, H_LONG_MS),
        "the plugin's subscription was never seen: %s", h_stderr(&simd.proc));
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, H_LONG_MS));
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 100, 100);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    double belts[2] = { 0.1, 0.1 }, lin, ang;
    kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
    wait_twist(0, lin, ang);
    ck_assert_ptr_nonnull(
        strstr(h_stderr(&simd.proc), "has a subscriber now: the belts are driven"));
    ck_assert_double_eq(STAT("gazebo.feedback.no_drive_subscriber_episodes"), 1);
}
END_TEST

START_TEST(master_from_environment)
{
    gzc_test_table(&conv);
    gzc_sim_start(&sim, 0, "world", NULL);
    static char uri[64];
    snprintf(uri, sizeof uri, "GAZEBO_MASTER_URI=http://127.0.0.1:%d", sim.port);
    char *env[] = { uri, "GAZEBO_IP=127.0.0.1", NULL };
    /* no address in the config: the environment names the master */
    h_daemon_start_env(&simd,
                       "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\","
                       "\"backend\":{\"type\":\"gazebo\"}}]",
                       env);
    ck_assert_msg(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS), "not up: %s",
                  h_stderr(&simd.proc));
    char want[32];
    snprintf(want, sizeof want, "127.0.0.1:%d", sim.port);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.address"), want);
    ck_assert_int_eq(
        strncmp(h_stat_str(&simd, "robots.0.backend.gazebo.data_server"), "127.0.0.1:", 10), 0);
    h_udp_open(&ctl, simd.port[0]);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "hello", hello_names_gazebo, 60, setup, teardown },
        { "crawler", crawler_becomes_exact_twist, 60, setup, teardown },
        { "flipper", flipper_becomes_exact_joint_cmd, 60, setup, teardown },
        { "status", status_shows_the_world_pose, 60, setup, teardown },
        { "master restart", master_restart_readvertises, 60, setup, teardown },
        { "world control", world_control_pause_step_reset, 60, setup_ctl, teardown_ctl },
        { "pose command", pose_command_form, 60, setup_pose, teardown },
        { "plugin limits", commands_scaled_to_plugin_limits, 60, setup_limits, teardown },
        { "configured links", flipper_angles_from_configured_links, 60, setup_links, teardown },
        { "environment", master_from_environment, 60, h_setup, teardown },
        { "wrong model", wrong_model_is_refused, 60, setup_wrong_model, teardown },
        { "no joint_cmd subscriber", flippers_without_subscriber_are_refused, 60,
          setup_no_joint_cmd, teardown },
        { "no drive subscriber", crawler_without_drive_is_refused, 60, setup_no_drive, teardown },
    };
    return h_run_cases("gazebo backend against gazebo_standin", cases,
                       sizeof cases / sizeof cases[0]);
}
