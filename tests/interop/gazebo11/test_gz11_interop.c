/* kenaf-simd's gazebo backend against a real gzserver 11 (Debian 11's
 * gazebo 11.1), run by tools/run-interop gazebo11 in a network namespace
 * with only lo: the program starts gzserver through $KN_GZ11_SERVER (a
 * launcher that runs it in the Debian 11 root with the world file named
 * as its argument) and kenaf-simd from the build tree, and checks:
 *   - the unchanged examples/square, through kenaf-sim-run, closes its
 *     square (within SQUARE_TOL_MM and SQUARE_TOL_CDEG);
 *   - flipper targets sent with FLIPPER are read back in STATUS (the
 *     world's KenafJointCmd bridge drives the joints);
 *   - pause, step and reset through the world-control socket;
 *   - gzserver killed and started again: BACKEND_UP drops, comes back,
 *     and the flipper targets are applied again;
 *   - a wrong gazebo.model: STALE and ERROR NO_MODEL;
 *   - the model spawned (gz model) into a world kenaf-simd already
 *     watches: NO_MODEL until then, then fresh, driven and its flippers
 *     set without restarting anything;
 *   - the world without the bridge: FLIPPER refused with NO_ACTUATOR.
 * Each case prints what it measured on a "gz11:" line. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzc_harness.h"
#include "harness_suite.h"

#define SQUARE_TOL_MM 40     /* where the 100 mm square ends, from where it began */
#define SQUARE_TOL_CDEG 500  /* its heading after four 90 degree turns */
#define FLIPPER_TOL_CDEG 200 /* a flipper's angle against its target */
#define GZ_START_MS 60000    /* gzserver up, world loaded, first states */

static struct h_proc gz;
static struct h_daemon simd;
static struct h_udp u;

static const char *env_or_fail(const char *name)
{
    const char *v = getenv(name);
    ck_assert_msg(v && v[0], "%s not set: run through tools/run-interop gazebo11", name);
    return v;
}

static void gz_start(const char *world_var)
{
    const char *launcher = env_or_fail("KN_GZ11_SERVER"), *world = env_or_fail(world_var);
    char *argv[] = { "/bin/sh", (char *)launcher, (char *)world, NULL };
    h_spawn(&gz, argv, NULL, "gzserver.stderr");
}

static double elapsed_s(uint64_t since_us)
{
    return (double)(h_now_us() - since_us) / 1e6;
}

static const char *robots(const char *model)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\","
             "\"backend\":{\"type\":\"gazebo\",\"address\":\"127.0.0.1:11345\","
             "\"reconnect_max_s\":0.5,"
             "\"flippers\":{\"FL\":{\"joint\":\"front_left_flipper_joint\"},"
             "\"FR\":{\"joint\":\"front_right_flipper_joint\"},"
             "\"RL\":{\"joint\":\"rear_left_flipper_joint\"},"
             "\"RR\":{\"joint\":\"rear_right_flipper_joint\"}},"
             "\"gazebo\":{\"model\":\"%s\",\"tracks_separation_m\":0.23,"
             "\"steering_efficiency\":0.5,\"max_linear_speed_m_s\":1.0,"
             "\"max_angular_speed_rad_s\":4.0}}}]",
             model);
    return buf;
}

/* gzserver with the world, kenaf-simd with its world-control socket in
 * the scratch directory; returns once the backend is up (fresh state
 * unless the model is missing). */
static void start(const char *world_var, const char *model, bool fresh)
{
    h_setup();
    uint64_t t0 = h_now_us();
    gz_start(world_var);
    char dir[300], *env[] = { dir, NULL };
    snprintf(dir, sizeof dir, "KENAF_GAZEBO_CONTROL_DIR=%s", h_path(""));
    h_daemon_start_env(&simd, robots(model), env);
    ck_assert_msg(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, GZ_START_MS),
                  "gzserver never came up: %s\n%s", h_file_text(gz.err_path), h_stderr(&simd.proc));
    if (fresh)
        ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, GZ_START_MS),
                      "no state from gzserver: %s", h_stderr(&simd.proc));
    printf("gz11: gzserver up and kenaf-simd ready in %.1f s\n", elapsed_s(t0));
    h_udp_open(&u, simd.port[0]);
}

static void setup_kenaf(void)
{
    start("KN_GZ11_WORLD", "kenaf", true);
}

static void teardown(void)
{
    h_udp_close(&u);
    h_teardown();
}

/* The model's own pose has come (the world publishes poses that changed;
 * a robot settling on the ground after the load does). */
static void wait_model(void)
{
    ck_assert_msg(
        h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.model_seen", 1, H_LONG_MS),
        "no pose of the model: %s", h_stderr(&simd.proc));
}

START_TEST(square_closes)
{
    wait_model();
    struct kn_krp_status s0 = h_status(&u);
    uint64_t t0 = h_now_us();
    h_run_square(simd.port[0], 120000, h_stderr(&simd.proc));
    double took = elapsed_s(t0);
    struct kn_krp_status s = h_status(&u);
    int dx = s.pos_mm[0] - s0.pos_mm[0], dy = s.pos_mm[1] - s0.pos_mm[1];
    int dyaw = s.rpy_cdeg[2] - s0.rpy_cdeg[2];
    printf("gz11: square in %.1f s: ended %d, %d mm and %.2f deg from its start\n", took, dx, dy,
           dyaw / 100.0);
    ck_assert_msg(abs(dx) <= SQUARE_TOL_MM && abs(dy) <= SQUARE_TOL_MM,
                  "square did not close: %d, %d mm", dx, dy);
    ck_assert_msg(abs(dyaw) <= SQUARE_TOL_CDEG, "heading %d cdeg off", dyaw);
    /* it did move: the plugin reported track speeds, the world took Twists */
    ck_assert_double_gt(h_stat(&simd, "robots.0.backend.gazebo.topics.tracks_speed.frames_in"), 4);
    ck_assert_double_ge(h_stat(&simd, "robots.0.datagrams_in.CRAWLER"), 8);
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 0);
}
END_TEST

/* Both belts at mm_s for ms, CRAWLER every 100 ms (the watchdog stops
 * the belts 500 ms after the last one), then STOP. */
static void drive(int mm_s, int ms)
{
    for (int t = 0; t < ms; t += 100) {
        h_crawler(&u, 0, 0, mm_s, mm_s);
        h_sleep_ms(100);
    }
    h_simple(&u, 0, KN_KRP_STOP, 0);
}

/* Polls STATUS until every flipper is within FLIPPER_TOL_CDEG of want[];
 * returns the time it took. */
static double wait_flippers(const int32_t want[4], int timeout_ms)
{
    struct kn_krp_status s;
    uint64_t t0 = h_now_us(), end = t0 + (uint64_t)timeout_ms * 1000u;
    bool ok;
    do {
        h_sleep_ms(50);
        s = h_status_any(&u);
        ok = true;
        for (int k = 0; k < 4; k++)
            ok &= abs(s.flipper_cdeg[k] - want[k]) <= FLIPPER_TOL_CDEG;
    } while (!ok && h_now_us() < end);
    ck_assert_msg(ok, "flippers at %d %d %d %d, want %d %d %d %d", s.flipper_cdeg[0],
                  s.flipper_cdeg[1], s.flipper_cdeg[2], s.flipper_cdeg[3], want[0], want[1],
                  want[2], want[3]);
    printf("gz11: flippers at %.1f %.1f %.1f %.1f deg (targets %.1f %.1f %.1f %.1f) after %.1f s\n",
           s.flipper_cdeg[0] / 100.0, s.flipper_cdeg[1] / 100.0, s.flipper_cdeg[2] / 100.0,
           s.flipper_cdeg[3] / 100.0, want[0] / 100.0, want[1] / 100.0, want[2] / 100.0,
           want[3] / 100.0, elapsed_s(t0));
    return elapsed_s(t0);
}

static void flippers(const int32_t cdeg[4])
{
    uint32_t seq = h_flipper(&u, 0, KN_KRP_F_ACK_REQ, 0x0f, cdeg);
    h_expect_ack(&u, seq, KN_KRP_FLIPPER);
}

START_TEST(flipper_targets_read_back)
{
    wait_model();
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.topics.joint_cmd.subscribers"), 1);
    /* SimpleTrackedVehiclePlugin takes the belts: the drive is there */
    ck_assert_double_ge(h_stat(&simd, "robots.0.backend.gazebo.topics.cmd.subscribers"), 1);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.feedback.no_drive_subscriber"), 0);
    const int32_t up[4] = { 3000, 3000, -2000, -2000 };
    flippers(up);
    wait_flippers(up, 15000);
    const int32_t mixed[4] = { -1000, 4500, 1000, 0 };
    flippers(mixed);
    wait_flippers(mixed, 15000);
    ck_assert_double_eq(h_stat(&simd, "robots.0.rules.no_actuator"), 0);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.commands.joint_cmd_unheard"), 0);
}
END_TEST

/* One line to the world-control socket, its answer into reply. */
static void ctl(const char *line, char *reply, size_t len)
{
    char path[300];
    snprintf(path, sizeof path, "%s", h_path("kenaf.sock"));
    int fd = h_unix_stream_connect(path);
    ck_assert_msg(fd >= 0, "no world-control socket at %s", path);
    h_write_all(fd, line, strlen(line));
    h_write_all(fd, "\n", 1);
    size_t n = 0;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (n + 1 < len && (n == 0 || reply[n - 1] != '\n')) {
        int r = h_read_exact(fd, reply + n, 1, end);
        ck_assert_msg(r == 1, "no answer to \"%s\"", line);
        n++;
    }
    reply[n] = '\0';
    close(fd);
    ck_assert_msg(strncmp(reply, "ok", 2) == 0, "\"%s\" answered %s", line, reply);
}

static double wstat(const char *key)
{
    char path[128];
    snprintf(path, sizeof path, "robots.0.backend.gazebo.world_stats.%s", key);
    return h_stat(&simd, path);
}

START_TEST(pause_step_reset)
{
    wait_model();
    char r[256];
    /* drive off a little, so that reset has something to undo */
    drive(200, 1000);
    h_sleep_ms(500);
    struct kn_krp_status moved = h_status(&u);
    ck_assert_msg(moved.pos_mm[0] > 100, "did not drive: x %d mm", moved.pos_mm[0]);

    ctl("pause", r, sizeof r);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.world_stats.paused", 1, H_LONG_MS));
    h_sleep_ms(500); /* world_stats comes at 5 Hz: let a paused one settle */
    double t1 = wstat("sim_time_s"), it1 = wstat("iterations");
    h_sleep_ms(1000);
    ck_assert_double_eq(wstat("sim_time_s"), t1); /* paused: time stands */
    ctl("step 250", r, sizeof r);
    ck_assert_msg(
        h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.iterations", it1 + 250, H_LONG_MS),
        "250 steps did not happen: %.0f -> %.0f", it1, wstat("iterations"));
    h_sleep_ms(500);
    double it2 = wstat("iterations");
    ck_assert_double_eq(wstat("paused"), 1);
    printf("gz11: paused at iteration %.0f, step 250 -> %.0f (%.3f s of sim time)\n", it1, it2,
           wstat("sim_time_s") - t1);
    ck_assert_double_eq(it2, it1 + 250);

    ctl("play", r, sizeof r);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.world_stats.paused", 0, H_LONG_MS));
    double resets = wstat("resets_seen");
    ctl("reset", r, sizeof r);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.resets_seen", resets + 1,
                          H_LONG_MS));
    /* the model is back where the world put it */
    struct kn_krp_status s;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_sleep_ms(100);
        s = h_status(&u);
    } while (abs(s.pos_mm[0]) > 20 && h_now_us() < end);
    printf("gz11: reset: x %d -> %d mm, sim time %.2f s\n", moved.pos_mm[0], s.pos_mm[0],
           wstat("sim_time_s"));
    ck_assert_msg(abs(s.pos_mm[0]) <= 20 && abs(s.pos_mm[1]) <= 20, "after reset at %d, %d mm",
                  s.pos_mm[0], s.pos_mm[1]);
    ck_assert_double_lt(wstat("sim_time_s"), t1);
}
END_TEST

START_TEST(gzserver_restarted)
{
    wait_model();
    const int32_t target[4] = { 2500, 2500, 1500, 1500 };
    flippers(target);
    wait_flippers(target, 15000);
    double reconnects = h_stat(&simd, "robots.0.backend.reconnects");

    uint64_t t0 = h_now_us();
    h_signal(&gz, SIGKILL);
    ck_assert_int_ne(h_wait_exit(&gz, H_LONG_MS), -1);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.BACKEND_UP", 0, H_LONG_MS));
    printf("gz11: gzserver killed: BACKEND_UP dropped after %.2f s\n", elapsed_s(t0));
    /* the next set-point waits for it (ERROR BACKEND_DOWN, kept) */
    uint32_t seq = h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 0, 0);
    h_expect_error(&u, KN_KRP_ERR_BACKEND_DOWN, seq, KN_KRP_CRAWLER);
    h_expect_ack(&u, seq, KN_KRP_CRAWLER);

    uint64_t t1 = h_now_us();
    gz_start("KN_GZ11_WORLD");
    ck_assert_msg(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, GZ_START_MS), "not back: %s",
                  h_stderr(&simd.proc));
    double up_s = elapsed_s(t1);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, GZ_START_MS));
    ck_assert_double_ge(h_stat(&simd, "robots.0.backend.reconnects"), reconnects + 1);
    /* a fresh world has the flippers in line; the daemon applies the targets again */
    double back_s = wait_flippers(target, 20000);
    printf("gz11: gzserver restarted: BACKEND_UP after %.2f s, flippers restored %.1f s later\n",
           up_s, back_s);
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.feedback.no_model"), 0);
}
END_TEST

static void setup_wrong_model(void)
{
    start("KN_GZ11_WORLD", "kenaf_mk2", false);
}

START_TEST(wrong_model_name)
{
    uint64_t t0 = h_now_us();
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_model", 1, H_LONG_MS),
                  "no_model never set: %s", h_stderr(&simd.proc));
    printf("gz11: wrong model: found missing after %.1f s: %s\n", elapsed_s(t0),
           h_stat_str(&simd, "robots.0.backend.gazebo.last_error"));
    struct kn_krp_status s = h_status(&u);
    ck_assert_uint_eq(s.flags & (KN_KRP_ST_BACKEND_UP | KN_KRP_ST_STALE),
                      KN_KRP_ST_BACKEND_UP | KN_KRP_ST_STALE);
    uint32_t seq = h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_error(&u, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_CRAWLER);
    h_expect_ack(&u, seq, KN_KRP_CRAWLER);
    ck_assert_ptr_nonnull(
        strstr(h_stderr(&simd.proc), "model \"kenaf_mk2\" is not in world \"default\" (it has \""));
    /* gzserver's own robot did not move */
    ck_assert_double_eq(h_stat(&simd, "robots.0.backend.gazebo.topics.cmd.subscribers"), 0);
    h_simple(&u, 0, KN_KRP_STOP, 0);
}
END_TEST

/* A team starts kenaf-simd, then spawns its robot into a running world. */
static void setup_empty_world(void)
{
    start("KN_GZ11_WORLD_EMPTY", "kenaf", false);
}

START_TEST(model_spawned_later)
{
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_model", 1, H_LONG_MS),
                  "no_model never set: %s", h_stderr(&simd.proc));
    uint32_t seq = h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_error(&u, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_CRAWLER);
    h_expect_ack(&u, seq, KN_KRP_CRAWLER);
    /* STOP too is answered NO_MODEL */
    seq = h_simple(&u, 0, KN_KRP_STOP, 0);
    h_expect_error(&u, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_STOP);
    /* gz model, as a team would type it, into the running world */
    const char *spawn = env_or_fail("KN_GZ11_SPAWN"), *model = env_or_fail("KN_GZ11_MODEL");
    char *argv[] = { "/bin/sh", (char *)spawn, (char *)model, NULL };
    char out[256] = "", err[2048] = "";
    uint64_t t0 = h_now_us();
    ck_assert_msg(h_run(argv, out, sizeof out, err, sizeof err, 60000) == 0,
                  "gz model failed: %s%s", out, err);
    ck_assert_msg(
        h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_model", 0, GZ_START_MS),
        "the spawned model was never seen: %s", h_stderr(&simd.proc));
    double seen_s = elapsed_s(t0);
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, H_LONG_MS),
                  "STALE after the model came: %s", h_stderr(&simd.proc));
    double fresh_s = elapsed_s(t0);
    ck_assert_ptr_nonnull(
        strstr(h_stderr(&simd.proc), "model \"kenaf\" is in world \"default\" now"));
    /* the flipper bridge came with the model: targets are acted on */
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_joint_cmd_subscriber",
                                 0, H_LONG_MS),
                  "no joint_cmd subscriber after the model came: %s", h_stderr(&simd.proc));
    const int32_t cdeg[4] = { 2000, 2000, -1000, -1000 };
    flippers(cdeg);
    double flip_s = wait_flippers(cdeg, 15000);
    struct kn_krp_status s0 = h_status_any(&u);
    drive(200, 1000);
    h_sleep_ms(300);
    struct kn_krp_status s1 = h_status_any(&u);
    double moved = hypot(s1.pos_mm[0] - s0.pos_mm[0], s1.pos_mm[1] - s0.pos_mm[1]);
    printf("gz11: model spawned later: seen %.1f s after gz model, fresh after %.1f s; flippers "
           "at their targets %.1f s after FLIPPER; CRAWLER drove %.0f mm in 1 s at 200 mm/s; "
           "NO_MODEL answered %.0f times before\n",
           seen_s, fresh_s, flip_s, moved, h_stat(&simd, "robots.0.errors.NO_MODEL"));
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 2);
    ck_assert_double_gt(moved, 150);
}
END_TEST

static void setup_no_bridge(void)
{
    start("KN_GZ11_WORLD_NOBRIDGE", "kenaf", true);
}

START_TEST(flippers_without_bridge)
{
    wait_model();
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.backend.gazebo.feedback.no_joint_cmd_subscriber",
                                 1, H_LONG_MS),
                  "no_joint_cmd_subscriber never set: %s", h_stderr(&simd.proc));
    const int32_t cdeg[4] = { 3000, 3000, 3000, 3000 };
    for (int i = 0; i < 2; i++) {
        uint32_t seq = h_flipper(&u, 0, KN_KRP_F_ACK_REQ, 0x0f, cdeg);
        h_expect_error(&u, KN_KRP_ERR_NO_ACTUATOR, seq, KN_KRP_FLIPPER);
        h_expect_silence(&u);
    }
    ck_assert_double_eq(h_stat(&simd, "robots.0.rules.no_actuator"), 2);
    const char *w = "nobody subscribes to /gazebo/default/kenaf/joint_cmd";
    const char *first = strstr(h_stderr(&simd.proc), w);
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, w));
    /* the belts still work: the tracked-vehicle plugin is there */
    uint32_t seq = h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_ack(&u, seq, KN_KRP_CRAWLER);
    drive(200, 1000);
    h_sleep_ms(300);
    struct kn_krp_status s = h_status_any(&u);
    printf(
        "gz11: without the bridge: FLIPPER refused (NO_ACTUATOR), CRAWLER drove %d mm in 1 s at 200 mm/s\n",
        s.pos_mm[0]);
    ck_assert_int_gt(s.pos_mm[0], 150);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "square", square_closes, 240, setup_kenaf, teardown },
        { "flippers", flipper_targets_read_back, 180, setup_kenaf, teardown },
        { "world control", pause_step_reset, 180, setup_kenaf, teardown },
        { "gzserver restart", gzserver_restarted, 240, setup_kenaf, teardown },
        { "wrong model", wrong_model_name, 180, setup_wrong_model, teardown },
        { "model spawned later", model_spawned_later, 180, setup_empty_world, teardown },
        { "no bridge", flippers_without_bridge, 180, setup_no_bridge, teardown },
    };
    return h_run_cases("gazebo11-interop", cases, sizeof cases / sizeof cases[0]);
}
