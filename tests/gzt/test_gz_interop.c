/* kenaf-simd's gz backend against the real ignition-transport 11 library
 * (Debian 12), inside a network namespace the test creates (unshare; lo
 * up with multicast and a route for 224.0.0.0/4, IGN_IP=127.0.0.1, a
 * partition of its own): the library's own CLI (ign-transport-topic, what
 * "ign topic" runs) sees the daemon's Twist messages and feeds it poses;
 * the stand-in world gz_world (C++, on the same library) takes cmd_vel and
 * cmd_pos and publishes clock, poses and joint states, and the unchanged
 * examples/square closes its square against it through kenaf-sim-run;
 * flipper targets reach the cmd_pos topics, are re-applied when the world
 * goes away and another comes, and stopped feedback sets STALE; a world
 * whose model sends no pose, or has nothing on cmd_vel, is STALE and
 * refuses CRAWLER (NO_MODEL, NO_ACTUATOR) until the missing system loads;
 * a type family mismatch names both families in the log. Skipped,
 * saying why, without root or without the library's programs. */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define CLI "/usr/libexec/ignition/transport11/ign-transport-topic"

static struct h_proc world;
static struct h_daemon simd;
static struct h_udp ctl;

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return rc;
}

/* A network namespace of the test's own, with multicast on lo. */
static void netns_setup(void)
{
    h_setup();
    ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET) failed");
    ck_assert_int_eq(sh("ip link set lo up && ip link set lo multicast on && "
                        "ip route add 224.0.0.0/4 dev lo"),
                     0);
    char part[64];
    snprintf(part, sizeof part, "kn-test-%d", (int)getpid());
    setenv("IGN_IP", "127.0.0.1", 1);
    setenv("IGN_PARTITION", part, 1);
    unsetenv("GZ_PARTITION");
    unsetenv("GZ_IP");
}

/* gz_world with model `model` and one more option (may be NULL). */
static void world_start_opt(struct h_proc *p, const char *model, const char *opt)
{
    char *argv[] = { getenv("KN_GZ_WORLD"), "--world",   "default", "--model",
                     (char *)model,         (char *)opt, NULL };
    h_spawn(p, argv, NULL, "world.stderr");
    char line[128];
    ck_assert_msg(h_read_line(p, line, sizeof line, H_LONG_MS) && strcmp(line, "READY") == 0,
                  "gz_world did not start: %s", h_stderr(p));
}

static void world_start_model(struct h_proc *p, const char *model)
{
    world_start_opt(p, model, NULL);
}

static void world_start(struct h_proc *p)
{
    world_start_model(p, "kenaf");
}

/* Reads the world's stdout until a line starting with `want` comes. */
static bool world_saw(struct h_proc *p, const char *want, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000ull;
    char line[256];
    while (h_now_us() < end)
        if (h_read_line(p, line, sizeof line, 100) && strncmp(line, want, strlen(want)) == 0)
            return true;
    return false;
}

static const char *robot_json(const char *gz_extra)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "[{\"name\": \"kenaf\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"gz\", "
             "\"stale_ms\": 500, \"reconnect_max_s\": 0.3, \"gz\": {\"world\": \"default\", "
             "\"model\": \"kenaf\"%s}}}]",
             gz_extra);
    return buf;
}

static void daemon_start(const char *gz_extra)
{
    h_daemon_start(&simd, robot_json(gz_extra));
    h_udp_open(&ctl, simd.port[0]);
}

#define STAT(path) h_stat(&simd, "robots.0.backend." path)

/* Runs the CLI echoing `topic` until a line containing `want` comes, while
 * poke() keeps the daemon publishing. */
static bool cli_echo_sees(const char *topic, const char *want, void (*poke)(void))
{
    struct h_proc cli;
    char *argv[] = { CLI, "-e", "-t", (char *)topic, "-d", "8", NULL };
    h_spawn(&cli, argv, NULL, "cli.stderr");
    uint64_t end = h_now_us() + 8000000ull;
    char line[256];
    bool seen = false;
    while (!seen && h_now_us() < end) {
        poke();
        if (h_read_line(&cli, line, sizeof line, 100))
            seen = strstr(line, want) != NULL;
    }
    h_signal(&cli, SIGTERM);
    h_wait_exit(&cli, 3000);
    return seen;
}

static void poke_crawler(void)
{
    h_crawler(&ctl, 0, 0, 250, 250);
}

/* (a) ign topic -e sees the daemon's Twist: 0.25 m/s straight on. */
START_TEST(cli_sees_twist)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    ck_assert_msg(cli_echo_sees("/model/kenaf/cmd_vel", "x: 0.25", poke_crawler),
                  "ign-transport-topic -e never showed linear x 0.25");
    h_crawler(&ctl, 0, 0, 0, 0);
}
END_TEST

/* (b) ign topic -p feeds poses (a PosePublisher-style topic) into STATUS. */
START_TEST(cli_feeds_pose)
{
    world_start(&world);
    daemon_start(", \"pose_topic\": \"/model/kenaf/pose\"");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    char *argv[] = { CLI,
                     "-t",
                     "/model/kenaf/pose",
                     "-m",
                     "ignition.msgs.Pose",
                     "-p",
                     "name: \"kenaf\" position { x: 2.5 y: -1.25 z: 0.1 } "
                     "orientation { z: 0.7071067811865476 w: 0.7071067811865476 }",
                     NULL };
    struct kn_krp_status s;
    /* the CLI publishes once, to the subscribers it knows by then: on a
     * loaded machine (the sanitizer stage) the daemon's subscription may
     * miss a few runs, so it gets a minute of runs, not 20 s */
    uint64_t t0 = h_now_us(), end = t0 + 60000000ull;
    bool got = false;
    int runs = 0;
    while (!got && h_now_us() < end) {
        char out[256];
        h_run(argv, out, sizeof out, NULL, 0, 5000); /* one message per run */
        runs++;
        s = h_status(&ctl);
        got = s.pos_mm[0] == 2500 && s.pos_mm[1] == -1250 && s.rpy_cdeg[2] == 9000;
    }
    printf("cli-pose: STATUS had the CLI's pose after %d run(s) of ign topic -p, %.1f s\n", runs,
           (double)(h_now_us() - t0) / 1e6);
    ck_assert_msg(got, "STATUS pos %d %d yaw %d after %d runs", s.pos_mm[0], s.pos_mm[1],
                  s.rpy_cdeg[2], runs);
}
END_TEST

/* (c) the unchanged square closes against the stand-in world. */
START_TEST(square_closes)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_run_square(simd.port[0], 90000, h_stderr(&simd.proc));
    struct kn_krp_status s = h_status(&ctl);
    /* back where it started, give or take the controller's own tolerance */
    ck_assert_msg(abs(s.pos_mm[0]) < 60 && abs(s.pos_mm[1]) < 60, "ended at %d %d mm", s.pos_mm[0],
                  s.pos_mm[1]);
    ck_assert(STAT("gz.topics./model/kenaf/cmd_vel.sent") > 10);
}
END_TEST

static void wait_flippers(const int32_t want[4], int timeout_ms)
{
    struct kn_krp_status s;
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000ull;
    bool ok;
    do {
        h_sleep_ms(50);
        s = h_status_any(&ctl);
        ok = true;
        for (int k = 0; k < 4; k++)
            ok &= abs(s.flipper_cdeg[k] - want[k]) <= 50;
    } while (!ok && h_now_us() < end);
    ck_assert_msg(ok, "flippers at %d %d %d %d, want %d %d %d %d", s.flipper_cdeg[0],
                  s.flipper_cdeg[1], s.flipper_cdeg[2], s.flipper_cdeg[3], want[0], want[1],
                  want[2], want[3]);
}

static const int32_t target[4] = { 3000, 3000, -2000, -2000 };

static void poke_flipper(void)
{
    h_flipper(&ctl, 0, 0, 0x0f, target);
}

/* Flipper targets on cmd_pos (seen by the CLI), followed by the world,
 * re-applied to a world that went away and came back. */
START_TEST(flippers_reapplied)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    /* front joints turn the other way (sign -1): 30 deg is -0.5236 rad */
    ck_assert_msg(
        cli_echo_sees("/model/kenaf/joint/FLFlipper/0/cmd_pos", "data: -0.52359", poke_flipper),
        "ign-transport-topic -e never showed FLFlipper's target");
    wait_flippers(target, H_LONG_MS);
    /* the world goes away (the library says BYE) and another comes */
    h_signal(&world, SIGTERM);
    ck_assert_int_eq(h_wait_exit(&world, 5000), 0);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.up", 0, H_LONG_MS));
    struct h_proc world2;
    world_start(&world2);
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    /* the new world starts at 0 and is told the targets again unasked */
    ck_assert_msg(world_saw(&world2, "cmd_pos FLFlipper -0.5235", H_LONG_MS),
                  "the flipper targets were not re-applied to the new world");
    ck_assert(world_saw(&world2, "cmd_pos RRFlipper -0.3490", H_LONG_MS));
    wait_flippers(target, H_LONG_MS);
    ck_assert(STAT("gz.world_arrivals") >= 2);
    ck_assert(STAT("reconnects") >= 1);
    ck_assert(STAT("commands.reapplied") >= 1);
    h_signal(&world2, SIGTERM);
    h_wait_exit(&world2, 5000);
}
END_TEST

/* Feedback stops (the world is stopped): STALE, then fresh again. */
START_TEST(stale_when_silent)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_signal(&world, SIGSTOP);
    /* STALE comes from the age of the last state and BACKEND_UP drops on
     * the backend's own timer, both after stale_ms: a STATUS between the
     * two may show one without the other */
    struct kn_krp_status s;
    uint64_t end = h_now_us() + 5000000ull;
    do {
        h_sleep_ms(50);
        s = h_status(&ctl);
    } while (((s.flags & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP)) != KN_KRP_ST_STALE) &&
             h_now_us() < end);
    ck_assert_msg(s.flags & KN_KRP_ST_STALE, "not STALE 5 s after the world stopped: flags 0x%x",
                  s.flags);
    ck_assert_msg(!(s.flags & KN_KRP_ST_BACKEND_UP),
                  "BACKEND_UP 5 s after the world stopped: flags 0x%x", s.flags);
    h_signal(&world, SIGCONT);
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
}
END_TEST

/* The world's process stopped long enough to count as gone (3 s without
 * a discovery message), then continued: it never ended its subscriptions
 * and does not register them again, so its TrackedVehicle and joint
 * controllers still count: fresh, and FLIPPER and CRAWLER are taken, not
 * refused with NO_ACTUATOR. */
START_TEST(stopped_world_keeps_subscriptions)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_signal(&world, SIGSTOP);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gz.world_losses", 1, H_LONG_MS));
    h_signal(&world, SIGCONT);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gz.world_arrivals", 2, H_LONG_MS));
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_sleep_ms(3000); /* past the looks at the world (1.5 s, then 1.5 s after the first pose) */
    ck_assert_uint_eq(h_status(&ctl).flags & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP),
                      KN_KRP_ST_BACKEND_UP);
    uint32_t seq = h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x0f, target);
    h_expect_ack(&ctl, seq, KN_KRP_FLIPPER);
    seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    ck_assert(world_saw(&world, "cmd_vel 0.2", H_LONG_MS));
    ck_assert_double_eq(STAT("gz.no_drive_subscriber"), 0);
    ck_assert_double_eq(STAT("gz.no_flipper_subscriber"), 0);
}
END_TEST

/* Sends "world kenaf ..." through kenaf-simd --command until it is
 * accepted (the service's connection may take a moment at first). */
static void world_command(const char *what)
{
    char line[128];
    snprintf(line, sizeof line, "world kenaf %s", what);
    char *argv[] = { getenv("KN_SIMD"), "--socket", simd.stats, "--command", line, NULL };
    char out[512] = "";
    int rc = -1;
    uint64_t end = h_now_us() + 5000000ull;
    while ((rc = h_run(argv, out, sizeof out, NULL, 0, 5000)) != 0 && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(rc == 0, "%s: %s", line, out);
}

static uint64_t status_time(void)
{
    return h_status_any(&ctl).time_us;
}

/* pause, step, reset and play through the world's /world/<W>/control
 * service, each answered true by the world. */
START_TEST(world_control)
{
    world_start(&world);
    daemon_start("");
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    uint64_t until = h_now_us() + 5000000ull;
    while (status_time() < 1000000 && h_now_us() < until) /* a reset must show */
        h_sleep_ms(50);
    world_command("pause");
    ck_assert(world_saw(&world, "control pause=1 step=0 multi_step=0 reset=0", H_LONG_MS));
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gz.control_ok", 1, H_LONG_MS));
    h_sleep_ms(200);
    uint64_t t0 = status_time();
    h_sleep_ms(300);
    ck_assert_uint_eq(status_time(), t0); /* paused: no time passes */
    world_command("step 10");
    ck_assert(world_saw(&world, "control pause=1 step=0 multi_step=10", H_LONG_MS));
    uint64_t end = h_now_us() + 5000000ull;
    while (status_time() < t0 + 100000 && h_now_us() < end)
        h_sleep_ms(50);
    ck_assert_uint_eq(status_time(), t0 + 100000); /* 10 steps of 10 ms, no more */
    world_command("reset");
    ck_assert(world_saw(&world, "control pause=1 step=0 multi_step=0 reset=1", H_LONG_MS));
    world_command("play");
    ck_assert(world_saw(&world, "control pause=0", H_LONG_MS));
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gz.control_ok", 4, H_LONG_MS));
    ck_assert_double_eq(STAT("gz.control_refused"), 0);
    end = h_now_us() + 5000000ull;
    uint64_t t;
    while ((t = status_time()) < 200000 && h_now_us() < end)
        h_sleep_ms(50);
    ck_assert_msg(t >= 200000 && t < t0 + 100000 + 2000000, "time %llu after reset and play",
                  (unsigned long long)t);
    ck_assert(STAT("gz.world_resets") >= 1);
}
END_TEST

/* A fixed type family other than the world's: the clock is refused and
 * counted, the robot never comes up; GZ_PARTITION and GZ_IP win over
 * IGN_PARTITION and IGN_IP, and the partition keeps the node apart from
 * this world. */
START_TEST(family_and_partition)
{
    world_start(&world);
    h_daemon_start(&simd, robot_json(", \"messages\": \"gz\""));
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gz.type_mismatch", 1, H_LONG_MS));
    h_sleep_ms(1500);
    ck_assert_double_eq(STAT("up"), 0);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gz.messages"), "gz");
    /* the log names both families, once for this world */
    const char *err = h_stderr(&simd.proc),
               *w = "publishes /world/default/clock as ignition.msgs.Clock (ignition.msgs), but "
                    "this robot is configured for gz.msgs";
    const char *first = strstr(err, w);
    ck_assert_msg(first != NULL, "no family warning: %s", err);
    ck_assert_ptr_null(strstr(first + 1, w));
    ck_assert(STAT("gz.family_mismatch") >= 1);
    h_signal(&simd.proc, SIGTERM);
    ck_assert_int_eq(h_wait_exit(&simd.proc, 5000), 0);

    struct h_daemon other;
    char *env[] = { "GZ_PARTITION=elsewhere", "GZ_IP=127.0.0.2", NULL };
    h_daemon_launch(&other, "other", robot_json(""), NULL, env, true);
    h_sleep_ms(2500); /* two heartbeats and subscriptions */
    ck_assert_str_eq(h_stat_str(&other, "robots.0.backend.gz.partition"), "elsewhere");
    ck_assert_str_eq(h_stat_str(&other, "robots.0.backend.gz.ip"), "127.0.0.2");
    ck_assert_double_eq(h_stat(&other, "robots.0.backend.gz.world_arrivals"), 0);
    ck_assert_double_eq(h_stat(&other, "robots.0.backend.up"), 0);
}
END_TEST

/* A world without the configured model: warned, STALE, commands answered
 * ERROR NO_MODEL (stored, as while the simulator is down), nothing in the
 * void. */
START_TEST(wrong_model_refused)
{
    world_start_model(&world, "other");
    daemon_start("");
    ck_assert_msg(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 1, H_LONG_MS),
                  "STALE never set: %s", h_stderr(&simd.proc));
    ck_assert(h_wait_stat_eq(&simd, "robots.0.backend.gz.no_model", 1, H_LONG_MS));
    ck_assert(STAT("gz.poses_without_model") > 0);
    struct kn_krp_status st = h_status(&ctl);
    ck_assert_uint_eq(st.flags & KN_KRP_ST_STALE, KN_KRP_ST_STALE);
    ck_assert_ptr_nonnull(
        strstr(h_stderr(&simd.proc), "model \"kenaf\" is not in gz world \"default\""));
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_error(&ctl, KN_KRP_ERR_NO_MODEL, seq, KN_KRP_CRAWLER);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 1);
}
END_TEST

/* Waits for the gz stat `flag` (no_model, no_drive_subscriber) to be set;
 * the world is there (BACKEND_UP) and STATUS is STALE. */
static void wait_lacking(const char *flag)
{
    char path[96];
    snprintf(path, sizeof path, "robots.0.backend.gz.%s", flag);
    ck_assert_msg(h_wait_stat_eq(&simd, path, 1, H_LONG_MS), "%s never set: %s", flag,
                  h_stderr(&simd.proc));
    ck_assert_uint_eq(h_status(&ctl).flags & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP),
                      KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP);
}

/* SIGUSR1: the world loads what it left out; `flag` clears and STATUS is
 * fresh, nothing restarted. */
static void load_missing(const char *flag)
{
    h_signal(&world, SIGUSR1);
    ck_assert(world_saw(&world, "LOADED", H_LONG_MS));
    char path[96];
    snprintf(path, sizeof path, "robots.0.backend.gz.%s", flag);
    ck_assert_msg(h_wait_stat_eq(&simd, path, 0, H_LONG_MS), "%s still set after loading: %s", flag,
                  h_stderr(&simd.proc));
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
}

/* The world has a cmd_vel listener (TrackedVehicle) but sends no pose of
 * the model (no SceneBroadcaster): no position to report, so STALE and
 * ERROR NO_MODEL, not a fresh (0, 0, 0); the poses starting later (SIGUSR1)
 * clear it without restarting anything. */
START_TEST(listener_without_pose_refused)
{
    world_start_opt(&world, "kenaf", "--no-pose");
    daemon_start("");
    /* until the daemon has given up on a pose, CRAWLER is accepted */
    h_crawler_until_error(&ctl, KN_KRP_ERR_NO_MODEL, 200, 200, H_LONG_MS);
    h_expect_ack(&ctl, ctl.seq, KN_KRP_CRAWLER); /* kept, sent when the model shows */
    wait_lacking("no_model");
    ck_assert_ptr_nonnull(strstr(h_stderr(&simd.proc),
                                 "something subscribes to /model/kenaf/cmd_vel, but no pose of it "
                                 "came on /world/default/pose/info"));
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 1);
    ck_assert_double_eq(STAT("gz.no_model_episodes"), 1);
    ck_assert_double_eq(STAT("gz.no_drive_subscriber"), 0);

    load_missing("no_model");
    ck_assert_ptr_nonnull(
        strstr(h_stderr(&simd.proc), "model \"kenaf\" is in gz world \"default\" now"));
    uint32_t seq2 = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 150, 150);
    h_expect_ack(&ctl, seq2, KN_KRP_CRAWLER);
    ck_assert(world_saw(&world, "cmd_vel 0.15", H_LONG_MS));
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_MODEL"), 1);
}
END_TEST

/* The model's poses come but nothing subscribes to its cmd_vel (no
 * TrackedVehicle system): STALE, CRAWLER refused with ERROR NO_ACTUATOR,
 * warned once, counted; the system loading later (SIGUSR1) clears it. */
START_TEST(no_drive_refused)
{
    world_start_opt(&world, "kenaf", "--no-drive");
    daemon_start("");
    h_crawler_until_error(&ctl, KN_KRP_ERR_NO_ACTUATOR, 200, 200, H_LONG_MS);
    h_expect_silence(&ctl); /* refused: no ACK */
    wait_lacking("no_drive_subscriber");
    for (int i = 0; i < 2; i++) {
        uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
        h_expect_error(&ctl, KN_KRP_ERR_NO_ACTUATOR, seq, KN_KRP_CRAWLER);
        h_expect_silence(&ctl); /* refused: no ACK */
    }
    ck_assert_double_eq(h_stat(&simd, "robots.0.errors.NO_ACTUATOR"), 3);
    ck_assert_double_eq(STAT("gz.no_drive_episodes"), 1);
    ck_assert_double_eq(STAT("gz.no_model"), 0);
    h_sleep_ms(500); /* several looks later: still one warning */
    const char *w = "nothing in gz world \"default\" subscribes to /model/kenaf/cmd_vel";
    const char *first = strstr(h_stderr(&simd.proc), w);
    ck_assert_msg(first != NULL, "no warning: %s", h_stderr(&simd.proc));
    ck_assert_ptr_null(strstr(first + 1, w));

    load_missing("no_drive_subscriber");
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 200, 200);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    ck_assert(world_saw(&world, "cmd_vel 0.2", H_LONG_MS));
    ck_assert_double_eq(STAT("gz.no_drive_episodes"), 1);
}
END_TEST

int main(void)
{
    if (geteuid() != 0) {
        printf("gz-interop: skipped: needs root (it creates a network namespace)\n");
        return 77;
    }
    if (access(CLI, X_OK) != 0) {
        printf("gz-interop: skipped: %s not found (Debian package ignition-transport-cli; "
               "tools/install-deps installs it)\n",
               CLI);
        return 77;
    }
    const char *w = getenv("KN_GZ_WORLD");
    if (!w || access(w, X_OK) != 0) {
        printf("gz-interop: skipped: the stand-in world was not built (Debian packages "
               "libignition-transport-dev and libignition-msgs-dev, and g++)\n");
        return 77;
    }
    /* the pose path is memory-checked by the cases whose world publishes
     * poses all along (square, stale) */
    h_not_wrapped("cli-pose", "the CLI's one message goes out before a kenaf-simd under "
                              "valgrind has subscribed");
    const struct h_case cases[] = {
        { "cli-twist", cli_sees_twist, 60, netns_setup, NULL },
        { "cli-pose", cli_feeds_pose, 60, netns_setup, NULL },
        { "square", square_closes, 150, netns_setup, NULL },
        { "flippers", flippers_reapplied, 90, netns_setup, NULL },
        { "stale", stale_when_silent, 60, netns_setup, NULL },
        { "control", world_control, 60, netns_setup, NULL },
        { "family-partition", family_and_partition, 60, netns_setup, NULL },
        { "wrong-model", wrong_model_refused, 60, netns_setup, NULL },
        { "no-pose", listener_without_pose_refused, 60, netns_setup, NULL },
        { "no-drive", no_drive_refused, 60, netns_setup, NULL },
        { "stopped-world", stopped_world_keeps_subscriptions, 60, netns_setup, NULL },
    };
    return h_run_cases("gz-interop", cases, sizeof cases / sizeof cases[0]);
}
