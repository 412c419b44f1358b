/* kenaf-engine as a USARSim server, tested from outside: a real engine
 * process on an ephemeral port and raw TCP clients. What a USARSim client
 * sees (banner, silent drops before INIT, STA/SEN streams in the z-down
 * frame, DRIVE, joint commands with the per-joint sign), several robots
 * in one world, the extension commands, bad input, pacing and lockstep,
 * the token that keeps other programs out of a spawned engine's world, and
 * the emergency Brake. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_client.h"

static struct ec_conn ca, cb, cc;
static struct ec_engine eng;

static const char *const FAST[] = { "--pace", "fast", NULL };

static void start(const char *const extra[])
{
    ec_engine_start(&eng, extra);
    ec_connect(&ca, eng.port);
}

static void init_robot(struct ec_conn *c, const char *name, double x, double y, double yaw)
{
    ec_send(c,
            "INIT {ClassName USARBot.Kenaf} {Name %s} {Location %.4f,%.4f,0.0000} "
            "{Rotation 0.0000,0.0000,%.4f}\r\n",
            name, x, y, yaw);
}

/* The server's stats line must be a clean stop with counters. */
static void stop_clean(void)
{
    h_signal(&eng.proc, SIGTERM);
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "engine did not stop on SIGTERM");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d: %s", st,
                  h_stderr(&eng.proc));
    ck_assert_msg(strstr(h_stderr(&eng.proc), "kenaf-engine: stats:") != NULL,
                  "no stats at exit: %s", h_stderr(&eng.proc));
}

/* --stdin-watch when stdin is no pipe (here /dev/null, which epoll
 * refuses): the engine says it does not watch it and serves on. */
START_TEST(stdin_watch_not_a_pipe)
{
    int null_fd = open("/dev/null", O_RDONLY);
    ck_assert_int_ge(null_fd, 0);
    ck_assert_int_eq(dup2(null_fd, 0), 0); /* this test's own process: Check forked it */
    close(null_fd);
    static const char *const extra[] = { "--stdin-watch", NULL };
    start(extra);
    ck_assert_msg(ec_line(&ca, H_LONG_MS), "no banner: %s", h_stderr(&eng.proc));
    ck_assert_msg(kn_usar_kind(&ca.tl) == KN_USAR_K_NFO, "first line: %s", ca.last);
    ck_assert_msg(strstr(h_stderr(&eng.proc), "stdin is not a pipe") != NULL, "%s",
                  h_stderr(&eng.proc));
    stop_clean();
}
END_TEST

START_TEST(nfo_first)
{
    start(NULL);
    ck_assert(ec_line(&ca, H_LONG_MS));
    struct kn_usar_nfo n;
    ck_assert_msg(kn_usar_kind(&ca.tl) == KN_USAR_K_NFO, "first line: %s", ca.last);
    ck_assert_int_eq(kn_usar_parse_nfo(&ca.tl, &n), KN_USAR_OK);
    ck_assert(kn_usar_str_is(n.gametype, "BotDeathMatch"));
    ck_assert(kn_usar_str_is(n.level, "flat"));
    ck_assert(n.has_time_limit && n.time_limit == 0);
    ck_assert_str_eq(ca.last, "NFO {Gametype BotDeathMatch} {Level flat} {TimeLimit 0}");
    stop_clean();
}
END_TEST

START_TEST(before_init_dropped)
{
    start(NULL);
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    ec_send(&ca, "DRIVE {Left 1} {Right 1}\r\nGETCONF {Type Robot}\r\nGETGEO {Type Robot}\r\n"
                 "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params 0.5}\r\n"
                 "MULTIDRIVE {FRFlipper 0.5}\r\n");
    /* lines are handled in order: the Stats reply comes after them, and
     * nothing may come before it (no CONF, no GEO, no STA) */
    ec_send(&ca, "KENAF {Cmd Stats}\r\n");
    ck_assert(ec_line(&ca, H_LONG_MS));
    ck_assert_msg(kn_usar_str_is(ca.tl.head, "KENAF"), "answered before INIT: %s", ca.last);
    ck_assert_int_eq(ec_stat(&ca, "BeforeInit"), 5);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 0);
    ck_assert_int_eq(ec_stat(&ca, "Malformed"), 0);
    /* GETSTARTPOSES works without a robot */
    ec_send(&ca, "GETSTARTPOSES\r\n");
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    struct kn_usar_nfo n;
    ck_assert_int_eq(kn_usar_parse_nfo(&ca.tl, &n), KN_USAR_OK);
    ck_assert(n.has_start_poses && n.start_poses == 1 && n.n_poses == 1);
    ck_assert(kn_usar_str_is(n.pose[0].name, "Origin"));
    stop_clean();
}
END_TEST

START_TEST(init_then_sta)
{
    start(NULL);
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    /* the bound is the engine's with a CPU: the time it and this test
     * waited for one is added (h_waits) */
    const pid_t pids[2] = { eng.proc.pid, 0 };
    struct h_waits w;
    h_waits_start(&w, pids, 2);
    uint64_t t0 = h_now_us();
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    double dt_ms = (double)(h_now_us() - t0) / 1e3, waited_ms = h_waited_ms(&w);
    printf("first STA %.1f ms after INIT (%.1f ms waiting for a CPU)\n", dt_ms, waited_ms);
    ck_assert_msg(dt_ms < 200 + waited_ms, "first STA after %.1f ms (%.1f ms waiting for a CPU)",
                  dt_ms, waited_ms);
    ck_assert(sta.has_battery && sta.battery > 1000);
    ck_assert(kn_usar_str_is(sta.type, "GroundVehicle"));
    ck_assert_int_eq(sta.flipper_mask, 0x0F);
    /* and then every 0.1 s of simulated time */
    struct kn_usar_sta next;
    ck_assert(ec_wait_sta(&ca, sta.time + 1e-6, &next, H_LONG_MS));
    ck_assert_double_eq_tol(next.time - sta.time, 0.1, 1e-6);
    stop_clean();
}
END_TEST

START_TEST(groundtruth_frame)
{
    start(FAST);
    /* USARSim frame: y right, z down, yaw + turns right */
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 1.5,-0.7,0} "
                 "{Rotation 0,0,0.8}\r\n");
    struct kn_usar_sen gt;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 0, &gt, H_LONG_MS));
    double t0 = gt.time;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, t0 + 1.0, &gt, H_LONG_MS));
    ck_assert(kn_usar_str_is(gt.name, "GndTruth"));
    ck_assert_double_eq_tol(gt.location[0], 1.5, 0.01);
    ck_assert_double_eq_tol(gt.location[1], -0.7, 0.01);
    /* on the ground: the track axis 0.08 m above it, i.e. z = -0.08 */
    ck_assert_double_eq_tol(gt.location[2], -0.08, 0.01);
    ck_assert_double_eq_tol(gt.orientation[2], 0.8, 0.01);
    /* through the conversion module: KRP y left, yaw + left */
    double pos[3], rpy[3];
    kn_conv_pose_from_sim(ec_table(), gt.location, gt.orientation, pos, rpy);
    ck_assert_double_eq_tol(pos[0], 1.5, 0.01);
    ck_assert_double_eq_tol(pos[1], 0.7, 0.01);
    ck_assert_double_eq_tol(pos[2], 0.08, 0.01);
    ck_assert_double_eq_tol(rpy[2], -0.8, 0.01);
    ck_assert_double_lt(fabs(rpy[0]), 0.01);
    ck_assert_double_lt(fabs(rpy[1]), 0.01);
    /* INS reports the same pose (2 decimals, no Time) */
    struct kn_usar_sen ins;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_INS, 0, &ins, H_LONG_MS));
    ck_assert(!ins.has_time);
    ck_assert_double_eq_tol(ins.location[0], 1.5, 0.02);
    ck_assert_double_eq_tol(ins.location[1], -0.7, 0.02);
    stop_clean();
}
END_TEST

START_TEST(drive_forward)
{
    start(FAST);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sen gt, enc;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 0.5, &gt, H_LONG_MS));
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_ENCODER, gt.time, &enc, H_LONG_MS));
    ck_assert_int_eq(enc.n_ticks, 2);
    ck_assert(kn_usar_str_is(enc.ticks[0].name, "ECLeft"));
    ck_assert(kn_usar_str_is(enc.ticks[1].name, "ECRight"));
    int64_t tick0[2] = { enc.ticks[0].tick, enc.ticks[1].tick };
    double x0 = gt.location[0], t0 = enc.time;
    /* 5 rad/s on 0.08 m pulleys: 0.4 m/s */
    ec_send(&ca, "DRIVE {Left 5} {Right 5}\r\n");
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_ENCODER, t0 + 3.0, &enc, H_LONG_MS));
    double t1 = enc.time;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, t1, &gt, H_LONG_MS));
    double dx = gt.location[0] - x0;
    printf("3 s at 0.4 m/s: +%.3f m along x, y %.3f m; ticks +%lld / +%lld\n", dx, gt.location[1],
           (long long)(enc.ticks[0].tick - tick0[0]), (long long)(enc.ticks[1].tick - tick0[1]));
    ck_assert_msg(dx > 0.8 && dx < 1.3, "moved %.3f m", dx);
    ck_assert_double_lt(fabs(gt.location[1]), 0.1);
    for (int i = 0; i < 2; i++) {
        /* 10000 ticks per metre of belt: about 0.4 m/s * 3 s less the ramp */
        double m = kn_conv_ticks_to_m(ec_table(), i, (double)(enc.ticks[i].tick - tick0[i]));
        ck_assert_msg(m > 1.0 && m < 1.3, "belt %d: %.3f m", i, m);
    }
    /* Normalized: percent of MaxSpeed (CONF), sticky; 25 % of 10 rad/s = 0.2 m/s backwards */
    ec_send(&ca, "GETCONF {Type Robot}\r\n");
    ck_assert(ec_wait_head(&ca, "CONF", NULL, H_LONG_MS));
    struct kn_usar_robot rb;
    ck_assert_int_eq(kn_usar_parse_robot(&ca.tl, &rb), KN_USAR_OK);
    ck_assert(rb.has_max_speed);
    ck_assert_double_eq_tol(rb.max_speed, 10.0, 1e-3);
    ec_send(&ca, "DRIVE {Left -25} {Right -25} {Normalized true}\r\n");
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_ENCODER, t1 + 2.0, &enc, H_LONG_MS));
    int64_t a = enc.ticks[0].tick;
    double ta = enc.time;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_ENCODER, ta + 1.0, &enc, H_LONG_MS));
    double v = kn_conv_ticks_to_m(ec_table(), 0, (double)(enc.ticks[0].tick - a)) / (enc.time - ta);
    ck_assert_double_eq_tol(v, -0.2, 0.01);
    stop_clean();
}
END_TEST

/* joint angle as reported -> KRP flipper angle (+ = tip up) */
static double krp_of(int k, double joint)
{
    return kn_conv_joint_to_flipper(ec_table(), k, joint);
}

static double asta_value(struct ec_conn *c, const char *joint)
{
    struct kn_usar_links l;
    ck_assert_int_eq(kn_usar_parse_links(&c->tl, &l), KN_USAR_OK);
    for (int i = 0; i < l.n; i++)
        if (kn_usar_str_is(l.link[i].name, joint) && l.link[i].has_value)
            return l.link[i].value;
    ck_abort_msg("no %s in %s", joint, c->last);
    return 0;
}

START_TEST(flippers_sign)
{
    start(FAST);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0.2, &sta, H_LONG_MS));
    /* USARSim's front joints turn the other way: joint -0.5 on FRFlipper
     * lifts the front-right tip; UT2004 MULTIDRIVE does the rear ones */
    ec_send(&ca, "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params -0.5}\r\n"
                 "MULTIDRIVE {RRFlipper 0.4} {RLFlipper 0.4}\r\n"
                 "DRIVE {Name FLFlipper} {Value -0.3} {Order 0}\r\n");
    double t0 = sta.time;
    ck_assert(ec_wait_sta(&ca, t0 + 2.0, &sta, H_LONG_MS));
    ck_assert_double_eq_tol(krp_of(KN_FR, sta.flipper[KN_FR]), 0.5, 0.02);
    ck_assert_double_eq_tol(sta.flipper[KN_FR], -0.5, 0.02);
    ck_assert_double_eq_tol(krp_of(KN_FL, sta.flipper[KN_FL]), 0.3, 0.02);
    ck_assert_double_eq_tol(krp_of(KN_RR, sta.flipper[KN_RR]), 0.4, 0.02);
    ck_assert_double_eq_tol(krp_of(KN_RL, sta.flipper[KN_RL]), 0.4, 0.02);
    ck_assert(ec_wait_head(&ca, "ASTA", NULL, H_LONG_MS));
    double fr = asta_value(&ca, "FRFlipper");
    ck_assert_double_eq_tol(fr, -0.5, 0.02);
    ck_assert_double_gt(krp_of(KN_FR, fr), 0.45); /* the tip went up */
    ck_assert_double_eq_tol(krp_of(KN_RR, asta_value(&ca, "RRFlipper")), 0.4, 0.02);
    /* AllJoints, and the limit (+-119.5 deg) */
    ec_send(&ca, "SET {Type Joint} {Name AllJoints} {Opcode Angle} {Params 3.0}\r\n");
    ck_assert(ec_wait_sta(&ca, sta.time + 6.0, &sta, H_LONG_MS));
    for (int k = 0; k < KN_NFLIPPERS; k++)
        ck_assert_msg(fabs(sta.flipper[k]) < 2.09 && fabs(sta.flipper[k]) > 1.5, "joint %d at %.3f",
                      k, sta.flipper[k]);
    ck_assert_int_eq(ec_stat_now(&ca, "BadValue"), 0);
    /* unknown joint: counted */
    ec_send(&ca, "SET {Type Joint} {Name Arm} {Opcode Angle} {Params 1}\r\n");
    ck_assert_int_eq(ec_stat_now(&ca, "BadValue"), 1);
    stop_clean();
}
END_TEST

START_TEST(two_robots_collide)
{
    /* In lockstep, so both DRIVEs are in before the world moves: with a
     * free-running world, a test process descheduled between the two
     * sends let A push a standing B backwards. */
    static const char *const STEP[] = { "--pace", "step", NULL };
    start(STEP);
    ec_connect(&cb, eng.port);
    /* face to face 1.6 m apart (USARSim yaw pi = facing -x) */
    init_robot(&ca, "A", 0, 0, 0);
    init_robot(&cb, "B", 1.6, 0, KN_PI);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    ck_assert(ec_wait_sta(&cb, 0, &sta, H_LONG_MS));
    /* the SENs come before the Step's answer, which skips what it passes */
    ec_send(&cb, "KENAF {Cmd Step} {Ms 100}\r\n");
    struct kn_usar_sen ga, gb;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 0.05, &ga, H_LONG_MS));
    ck_assert(ec_wait_sen(&cb, KN_USAR_SEN_GROUNDTRUTH, 0.05, &gb, H_LONG_MS));
    ck_assert(ec_wait_kenaf(&cb, "Step", H_LONG_MS));
    ck_assert_double_eq_tol(gb.location[0], 1.6, 0.01);
    ck_assert_int_eq(ec_stat_now(&ca, "Robots"), 2);
    /* each connection sees only its own robot */
    ck_assert_double_eq_tol(ga.location[0], 0.0, 0.01);
    /* A's DRIVE is read before its Stats answer; B's comes before the
     * Step on the same connection */
    ec_send(&ca, "DRIVE {Left 5} {Right 5}\r\n");
    ec_stats(&ca);
    ec_send(&cb, "DRIVE {Left 5} {Right 5}\r\nKENAF {Cmd Step} {Ms 6000}\r\n");
    /* alone, each would cover 2.3 m in 6 s: they meet and push instead */
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 6.0, &ga, H_LONG_MS));
    ck_assert(ec_wait_sen(&cb, KN_USAR_SEN_GROUNDTRUTH, 6.0, &gb, H_LONG_MS));
    ck_assert(ec_wait_kenaf(&cb, "Step", H_LONG_MS));
    double gap = gb.location[0] - ga.location[0];
    printf("after 6 s head-on: A at x %.3f, B at x %.3f, centres %.3f m apart\n", ga.location[0],
           gb.location[0], gap);
    ck_assert_msg(gap > 0.45, "robots passed through each other: gap %.3f m", gap);
    ck_assert_double_lt(ga.location[0], 1.0);
    ck_assert_double_gt(gb.location[0], 0.6);
    stop_clean();
}
END_TEST

START_TEST(close_removes_robot)
{
    start(NULL);
    ec_connect(&cb, eng.port);
    init_robot(&ca, "A", 0, 0, 0);
    init_robot(&cb, "B", 0, 2, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    ck_assert(ec_wait_sta(&cb, 0, &sta, H_LONG_MS));
    ck_assert_int_eq(ec_stat_now(&ca, "Robots"), 2);
    ec_close(&cb);
    uint64_t end = h_now_us() + H_LONG_MS * 1000u;
    while (ec_stat_now(&ca, "Removed") < 1 && h_now_us() < end)
        ;
    ck_assert_int_eq(ec_stat(&ca, "Removed"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Connections"), 1);
    /* a new connection gets a new robot in the same world */
    ec_connect(&cb, eng.port);
    init_robot(&cb, "C", 0, -2, 0);
    ck_assert(ec_wait_sta(&cb, 0, &sta, H_LONG_MS));
    ck_assert_int_eq(ec_stat_now(&ca, "Robots"), 2);
    ck_assert_int_eq(ec_stat(&ca, "Spawned"), 3);
    stop_clean();
}
END_TEST

START_TEST(extensions)
{
    start(NULL);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    /* Pause, then Step moves exactly the asked time */
    ec_send(&ca, "KENAF {Cmd Pause}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Pause", H_LONG_MS));
    double tp;
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &tp), KN_USAR_OK);
    ec_send(&ca, "KENAF {Cmd Step} {Ms 50}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    double ts;
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &ts), KN_USAR_OK);
    ck_assert_double_eq_tol(ts - tp, 0.050, 1e-6);
    struct kn_usar_str status;
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
    ck_assert(kn_usar_str_is(status, "OK"));
    /* while paused the clock stands: Stats twice agree */
    ec_stats(&ca);
    double t1;
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t1), KN_USAR_OK);
    ck_assert_double_eq_tol(t1, ts, 1e-9);
    /* Resume: time moves on by itself */
    ec_send(&ca, "KENAF {Cmd Resume}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Resume", H_LONG_MS));
    ck_assert(ec_wait_sta(&ca, ts + 0.3, &sta, H_LONG_MS));
    /* Step while running: refused */
    ec_send(&ca, "KENAF {Cmd Step} {Ms 10}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
    ck_assert(kn_usar_str_is(status, "Failed"));
    /* drive away, then Reset: time 0, robot back at its spawn pose */
    ec_send(&ca, "KENAF {Cmd Pace} {Mode fast}\r\nDRIVE {Left 8} {Right 8}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Pace", H_LONG_MS));
    struct kn_usar_sen gt;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, sta.time + 2.0, &gt, H_LONG_MS));
    ck_assert_double_gt(gt.location[0], 0.5);
    ec_send(&ca, "KENAF {Cmd Pace} {Mode realtime} {Rate 1}\r\nKENAF {Cmd Reset}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Reset", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t1), KN_USAR_OK);
    ck_assert_double_eq_tol(t1, 0.0, 1e-9);
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 0, &gt, H_LONG_MS));
    ck_assert_double_lt(gt.time, 1.0);
    ck_assert_double_lt(fabs(gt.location[0]), 0.02);
    /* Terrain: by name; the new banner names it; start poses follow it */
    ec_send(&ca, "KENAF {Cmd Terrain} {Name step}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Terrain", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
    ck_assert_msg(kn_usar_str_is(status, "OK"), "%s", ca.last);
    ec_connect(&cb, eng.port);
    ck_assert(ec_wait_head(&cb, "NFO", NULL, H_LONG_MS));
    ck_assert_msg(strstr(cb.last, "{Level step}") != NULL, "%s", cb.last);
    ec_send(&cb, "GETSTARTPOSES\r\n");
    ck_assert(ec_wait_head(&cb, "NFO", NULL, H_LONG_MS));
    struct kn_usar_nfo n;
    ck_assert_int_eq(kn_usar_parse_nfo(&cb.tl, &n), KN_USAR_OK);
    ck_assert_int_eq(n.start_poses, 3);
    ec_send(&cb, "INIT {ClassName USARBot.Kenaf} {Name S} {Start approach}\r\n");
    ck_assert(ec_wait_sen(&cb, KN_USAR_SEN_GROUNDTRUTH, 0, &gt, H_LONG_MS));
    /* 0.8 m before the shipped step's edge at x = 1 */
    ck_assert_double_eq_tol(gt.location[0], 0.2, 0.01);
    ec_send(&cb, "INIT {ClassName USARBot.Kenaf} {Name S2} {Start approach}\r\n");
    /* bad terrain names fail, and never reach the file system as paths */
    ec_send(&ca, "KENAF {Cmd Terrain} {Name ../../etc/passwd}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Terrain", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
    ck_assert(kn_usar_str_is(status, "Failed"));
    ec_send(&ca, "KENAF {Cmd Terrain} {Name nosuchterrain}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Terrain", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
    ck_assert(kn_usar_str_is(status, "Failed"));
    ec_send(&ca, "KENAF {Cmd Frobnicate}\r\nKENAF {Name x}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Unknown", H_LONG_MS));
    ec_stats(&ca);
    ck_assert_int_eq(ec_stat(&ca, "Ignored"), 1); /* the second INIT on cb */
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 2);
    ck_assert_int_eq(ec_stat(&ca, "Malformed"), 1); /* KENAF without Cmd */
    ck_assert_int_ge(ec_stat(&ca, "BadValue"), 3);
    stop_clean();
}
END_TEST

START_TEST(malformed_counted)
{
    start(NULL);
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    ec_send(&ca, "{{{\r\n"
                 "DRIVE {Left\r\n"
                 "INIT {Location 1,2,3}\r\n" /* no ClassName */
                 "INIT {ClassName USARBot.Kenaf} {Location 1;2;3}\r\n"
                 "12345 }\r\n"
                 "\r\n"
                 "TEST {Foo}\r\n"                      /* unknown head */
                 "INIT {ClassName USARBot.P2AT}\r\n"); /* not a Kenaf */
    ec_send_raw(&ca, "DR\0IVE {Left 1}\r\n", 17);
    /* an over-long line: dropped by the line buffer, counted */
    static char big[40000];
    memset(big, 'x', sizeof big);
    ec_send_raw(&ca, big, sizeof big);
    ec_send(&ca, "\r\n");
    ec_stats(&ca);
    ck_assert_int_eq(ec_stat(&ca, "Malformed"), 6);
    ck_assert_int_eq(ec_stat(&ca, "Unknown"), 1);
    ck_assert_int_eq(ec_stat(&ca, "BadValue"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Overlong"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Empty"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 0);
    /* a flood of garbage without any end of line: memory stays bounded,
     * the server stays up and keeps counting */
    for (int i = 0; i < 50; i++)
        ec_send_raw(&ca, big, sizeof big);
    ec_send(&ca, "\r\nINIT {ClassName USARBot.Kenaf}\r\n");
    ec_stats(&ca);
    ck_assert_int_eq(ec_stat(&ca, "Overlong"), 2);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 1);
    /* a client that asks for megabytes and never reads: what does not fit
     * its output cap is dropped (counted), not queued without bound */
    ec_connect(&cb, eng.port);
    init_robot(&cb, "Deaf", 0, 3, 0);
    static char asks[20000 * 21 + 1];
    for (int i = 0; i < 20000; i++)
        memcpy(asks + 21 * i, "GETGEO {Type Robot}\r\n", 21);
    ec_send_raw(&cb, asks, 20000 * 21);
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    while (ec_stat_now(&ca, "OutDropped") == 0 && h_now_us() < end)
        ;
    ck_assert_int_gt(ec_stat(&ca, "OutDropped"), 0);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 2);
    stop_clean();
    ck_assert_msg(strstr(h_stderr(&eng.proc), "malformed 6") != NULL, "%s", h_stderr(&eng.proc));
}
END_TEST

START_TEST(pacing_drift)
{
    start(NULL);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    /* the first STA after this instant starts the measurement */
    ck_assert(ec_wait_sta(&ca, sta.time + 0.05, &sta, H_LONG_MS));
    double sim0 = sta.time;
    uint64_t wall0 = h_now_us();
    double sim1 = sim0;
    uint64_t wall1 = wall0;
    while (wall1 - wall0 < 10000000u) {
        ck_assert(ec_wait_sta(&ca, sim1 + 0.05, &sta, H_LONG_MS));
        sim1 = sta.time;
        wall1 = h_now_us();
    }
    double dw = (double)(wall1 - wall0) / 1e6, ds = sim1 - sim0;
    double drift = (ds - dw) / dw;
    ec_stats(&ca);
    printf("pacing: %.4f s simulated in %.4f s wall clock: drift %+.3f %% "
           "(overruns %lld, slips %lld)\n",
           ds, dw, drift * 100, (long long)ec_stat(&ca, "Overruns"),
           (long long)ec_stat(&ca, "Slips"));
    ck_assert_msg(fabs(drift) < 0.02, "drift %.3f %%", drift * 100);
    stop_clean();
}
END_TEST

START_TEST(lockstep)
{
    static const char *const STEP[] = { "--pace", "step", NULL };
    start(STEP);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    ck_assert_double_eq_tol(sta.time, 0.0, 1e-9);
    /* the world stands until asked: Stats reports time 0 */
    ec_stats(&ca);
    double t;
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 0.0, 1e-9);
    ec_send(&ca, "DRIVE {Left 5} {Right 5}\r\nKENAF {Cmd Step} {Ms 10}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 0.010, 1e-9);
    ck_assert_int_eq(ec_stat(&ca, "Steps"), 10);
    /* 250 ms: STA at 0.1 and 0.2 come before the reply */
    ec_send(&ca, "KENAF {Cmd Step} {Ms 250}\r\n");
    int stas = 0;
    for (;;) {
        ck_assert(ec_line(&ca, H_LONG_MS));
        if (kn_usar_kind(&ca.tl) == KN_USAR_K_STA)
            stas++;
        if (kn_usar_str_is(ca.tl.head, "KENAF"))
            break;
    }
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 0.260, 1e-9);
    ck_assert_int_eq(stas, 2);
    /* several requests queue up and are answered in order */
    ec_send(&ca, "KENAF {Cmd Step} {Ms 1000}\r\nKENAF {Cmd Step} {Ms 1000}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 1.260, 1e-9);
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 2.260, 1e-9);
    struct kn_usar_sen gt;
    ec_send(&ca, "KENAF {Cmd Step} {Ms 100}\r\n");
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 2.3, &gt, H_LONG_MS));
    ck_assert_msg(gt.location[0] > 0.6, "moved %.3f m in 2.3 s", gt.location[0]);
    /* bad Step requests */
    ec_send(&ca, "KENAF {Cmd Step}\r\nKENAF {Cmd Step} {Ms -5}\r\n");
    for (int i = 0; i < 2; i++) {
        ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
        struct kn_usar_str status;
        ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &status), KN_USAR_OK);
        if (kn_usar_str_is(status, "OK")) { /* the 100 ms one */
            i--;
            continue;
        }
        ck_assert(kn_usar_str_is(status, "Failed"));
    }
    stop_clean();
}
END_TEST

static bool kenaf_status_is(struct ec_conn *c, const char *want)
{
    struct kn_usar_str status;
    return kn_usar_get_str(&c->tl, "Status", &status) == KN_USAR_OK && kn_usar_str_is(status, want);
}

#define TOKEN "0123456789abcdef0123456789abcdef"

/* --auth-token-env: a connection without the token may watch (NFO,
 * GETSTARTPOSES, Stats) but not spawn robots or change the world; a wrong
 * token closes the connection; the right one opens everything, for that
 * connection only. The token shows neither on the command line nor, once
 * taken, in the engine's environment. */
START_TEST(auth)
{
    setenv("KN_TEST_ENGINE_TOKEN", TOKEN, 1);
    static const char *const AUTH[] = { "--auth-token-env", "KN_TEST_ENGINE_TOKEN", NULL };
    start(AUTH);
    unsetenv("KN_TEST_ENGINE_TOKEN");
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    static const struct {
        const char *line, *cmd;
    } refused[] = {
        { "KENAF {Cmd Reset}", "Reset" },
        { "KENAF {Cmd Pace} {Mode step}", "Pace" },
        { "KENAF {Cmd Pause}", "Pause" },
        { "KENAF {Cmd Step} {Ms 10}", "Step" },
        { "KENAF {Cmd Terrain} {Name step}", "Terrain" },
        { "KENAF {Cmd Brake}", "Brake" },
        { "INIT {ClassName USARBot.Kenaf} {Name Intruder}", "Init" },
    };
    int nref = (int)(sizeof refused / sizeof refused[0]);
    for (int i = 0; i < nref; i++) {
        ec_send(&ca, "%s\r\n", refused[i].line);
        ck_assert_msg(ec_wait_kenaf(&ca, refused[i].cmd, H_LONG_MS), "no reply to %s",
                      refused[i].line);
        ck_assert_msg(kenaf_status_is(&ca, "Failed"), "%s: %s", refused[i].line, ca.last);
        ck_assert_msg(strstr(ca.last, "not authenticated") != NULL, "%s", ca.last);
    }
    ec_send(&ca, "GETSTARTPOSES\r\n");
    ck_assert(ec_wait_head(&ca, "NFO", NULL, H_LONG_MS));
    ec_stats(&ca);
    ck_assert_int_eq(ec_stat(&ca, "Unauthorized"), nref);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 0);
    ck_assert_int_eq(ec_stat(&ca, "Spawned"), 0);
    ck_assert_msg(strstr(ca.last, "{Pace realtime}") != NULL, "%s", ca.last);

    /* a wrong token: refused, and the connection is closed */
    ec_connect(&cb, eng.port);
    ec_send(&cb, "KENAF {Cmd Auth} {Token 0123456789abcdef0123456789abcdeX}\r\n");
    ck_assert(ec_wait_kenaf(&cb, "Auth", H_LONG_MS));
    ck_assert(kenaf_status_is(&cb, "Failed"));
    while (ec_line(&cb, H_LONG_MS)) {
    }
    ck_assert_msg(cb.eof, "connection with a wrong token left open");

    /* the right one: this connection may spawn and drive */
    ec_connect(&cc, eng.port);
    ec_send(&cc, "KENAF {Cmd Auth} {Token " TOKEN "}\r\n");
    ck_assert(ec_wait_kenaf(&cc, "Auth", H_LONG_MS));
    ck_assert_msg(kenaf_status_is(&cc, "OK"), "%s", cc.last);
    init_robot(&cc, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&cc, 0, &sta, H_LONG_MS));
    ec_send(&cc, "KENAF {Cmd Pause}\r\n");
    ck_assert(ec_wait_kenaf(&cc, "Pause", H_LONG_MS));
    ck_assert(kenaf_status_is(&cc, "OK"));
    ec_send(&cc, "KENAF {Cmd Resume}\r\n");
    ck_assert(ec_wait_kenaf(&cc, "Resume", H_LONG_MS));
    /* ... and the first one still may not */
    ec_send(&ca, "KENAF {Cmd Reset}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Reset", H_LONG_MS));
    ck_assert(kenaf_status_is(&ca, "Failed"));
    ec_stats(&ca);
    ck_assert_int_eq(ec_stat(&ca, "Unauthorized"), nref + 1);
    ck_assert_int_eq(ec_stat(&ca, "AuthFailed"), 1);
    ck_assert_int_eq(ec_stat(&ca, "Robots"), 1);

    /* neither ps nor /proc/PID/environ shows the token */
    char path[64], buf[65536];
    const char *const files[] = { "cmdline", "environ" };
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/proc/%d/%s", (int)eng.proc.pid, files[i]);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        ck_assert(memmem(buf, n, TOKEN, strlen(TOKEN)) == NULL);
        ck_assert_msg(n > 0, "%s is empty", path);
    }
    stop_clean();
    ck_assert_msg(strstr(h_stderr(&eng.proc), "refused: not authenticated") != NULL, "%s",
                  h_stderr(&eng.proc));
    ck_assert_msg(strstr(h_stderr(&eng.proc), "wrong token") != NULL, "%s", h_stderr(&eng.proc));
}
END_TEST

/* Encoder ticks (left) after the world has reached time t. */
static int64_t ticks_at(struct ec_conn *c, double t)
{
    struct kn_usar_sen sen;
    ck_assert(ec_wait_sen(c, KN_USAR_SEN_ENCODER, t - 1e-6, &sen, H_LONG_MS));
    ck_assert_int_ge(sen.n_ticks, 1);
    return sen.ticks[0].tick;
}

/* Belt travel (ticks) between 30 and 130 ms after a stop at full speed. */
static int64_t run_on_after(const char *stop, double *t)
{
    ec_send(&ca, "DRIVE {Left 10.0000} {Right 10.0000}\r\nKENAF {Cmd Step} {Ms 1000}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    *t += 1.0;
    ec_send(&ca, "%s\r\nKENAF {Cmd Step} {Ms 30}\r\nKENAF {Cmd Step} {Ms 100}\r\n", stop);
    int64_t a = ticks_at(&ca, *t + 0.030), b = ticks_at(&ca, *t + 0.130);
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    *t += 0.130;
    return b - a;
}

/* KENAF {Cmd Brake}: the belts stop from 0.8 m/s at the robot file's
 * 40 m/s^2 (20 ms), where DRIVE 0 ramps down at 2 m/s^2 (400 ms). In
 * lockstep, with the encoders every 10 ms. */
START_TEST(brake)
{
    static const char *const STEP[] = { "--pace", "step", "--sen-rate", "Encoder=100", NULL };
    start(STEP);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    double t = 0;
    int64_t ramp = run_on_after("DRIVE {Left 0.0000} {Right 0.0000}", &t);
    /* 0.8 m/s - 2 m/s^2 x 30..130 ms: about 55 mm, 220 ticks */
    ck_assert_msg(ramp > 150, "DRIVE 0 alone stopped the belts within 30 ms (%lld ticks after)",
                  (long long)ramp);
    ec_send(&ca, "KENAF {Cmd Step} {Ms 1000}\r\n"); /* ramp down to rest */
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    t += 1.0;
    int64_t braked = run_on_after("DRIVE {Left 0.0000} {Right 0.0000}\r\nKENAF {Cmd Brake}", &t);
    ck_assert_msg(braked == 0, "belts still ran %lld ticks 30 ms after Brake", (long long)braked);
    ck_assert_int_eq(ec_stat_now(&ca, "Brakes"), 1);
    /* a new DRIVE moves again, at the normal ramp */
    ec_send(&ca, "DRIVE {Left 10.0000} {Right 10.0000}\r\nKENAF {Cmd Step} {Ms 100}\r\n");
    int64_t a = ticks_at(&ca, t), b = ticks_at(&ca, t + 0.1);
    ck_assert_msg(b - a > 20 && b - a < 60, "100 ms from rest at 2 m/s^2: %lld ticks (10 mm = 40)",
                  (long long)(b - a));
    stop_clean();
}
END_TEST

/* KENAF {Cmd Deadman}: in real time, a robot whose client falls silent
 * for the armed time brakes; any line (KENAF {Cmd Alive}) keeps it
 * going; the next line re-arms it; {Seconds 0} disarms it. Windows are
 * wide: under valgrind the world may lag the wall clock. */
static double kenaf_time(struct ec_conn *c)
{
    double t = -1;
    ck_assert_int_eq(kn_usar_get_double(&c->tl, "Time", &t), KN_USAR_OK);
    return t;
}

static double arm_deadman(const char *seconds)
{
    ec_send(&ca, "KENAF {Cmd Deadman} {Seconds %s}\r\nDRIVE {Left 10.0000} {Right 10.0000}\r\n",
            seconds);
    ck_assert(ec_wait_kenaf(&ca, "Deadman", H_LONG_MS));
    ck_assert_msg(kenaf_status_is(&ca, "OK"), "%s", ca.last);
    return kenaf_time(&ca);
}

START_TEST(deadman)
{
    static const char *const ENC[] = { "--sen-rate", "Encoder=100", NULL };
    start(ENC);
    init_robot(&ca, "R1", 0, 0, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    /* out of range, or no value: refused */
    ec_send(&ca, "KENAF {Cmd Deadman} {Seconds 61}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Deadman", H_LONG_MS));
    ck_assert(kenaf_status_is(&ca, "Failed"));
    ec_send(&ca, "KENAF {Cmd Deadman}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Deadman", H_LONG_MS));
    ck_assert(kenaf_status_is(&ca, "Failed"));

    /* armed at 0.5 s, then silence: moving at first, braked after */
    double t0 = arm_deadman("0.5");
    h_sleep_ms(1500);
    int64_t a = ticks_at(&ca, t0 + 0.1), b = ticks_at(&ca, t0 + 0.2);
    ck_assert_msg(b - a > 100, "not moving before the dead-man's time (%lld ticks)",
                  (long long)(b - a));
    int64_t c1 = ticks_at(&ca, t0 + 1.0), c2 = ticks_at(&ca, t0 + 1.3);
    ck_assert_msg(c2 == c1, "still moving %lld ticks after 1 s of silence", (long long)(c2 - c1));
    ck_assert_int_eq(ec_stat_now(&ca, "DeadmanStops"), 1);

    /* the next lines move it again; Alive every 100 ms keeps it going
     * (armed at 2 s: the test itself may wait for its CPU between two) */
    t0 = arm_deadman("2");
    for (int i = 0; i < 12; i++) {
        h_sleep_ms(100);
        ec_send(&ca, "KENAF {Cmd Alive}\r\n");
    }
    for (int i = 0; i < 12; i++)
        ck_assert(ec_wait_kenaf(&ca, "Alive", H_LONG_MS));
    double t1 = kenaf_time(&ca); /* the last one's: 1.2 s after arming */
    /* each reply tells the connection's dead-man stops (kenaf-simd sends
     * its DRIVE again on a new one) */
    int64_t told = -1;
    ck_assert_int_eq(kn_usar_get_int(&ca.tl, "DeadmanStops", &told), KN_USAR_OK);
    ck_assert_int_eq(told, 1);
    a = ticks_at(&ca, t1);
    b = ticks_at(&ca, t1 + 0.1);
    ck_assert_msg(b - a > 100, "Alive did not keep it going (%lld ticks)", (long long)(b - a));
    ck_assert_int_eq(ec_stat_now(&ca, "DeadmanStops"), 1);
    ck_assert_int_ge(ec_stat(&ca, "Alives"), 12);

    /* disarmed: silence changes nothing */
    t0 = arm_deadman("0");
    h_sleep_ms(1000);
    a = ticks_at(&ca, t0 + 0.7);
    b = ticks_at(&ca, t0 + 0.8);
    ck_assert_msg(b - a > 100, "disarmed, yet stopped (%lld ticks)", (long long)(b - a));
    ck_assert_int_eq(ec_stat_now(&ca, "DeadmanStops"), 1);
    stop_clean();
    ck_assert_msg(strstr(h_stderr(&eng.proc), "brakes (dead-man)") != NULL, "%s",
                  h_stderr(&eng.proc));
}
END_TEST

START_TEST(conf_geo)
{
    start(NULL);
    init_robot(&ca, "R1", 0, 0, 0);
    ec_send(&ca, "GETGEO {Type Robot}\r\n");
    ck_assert(ec_wait_head(&ca, "GEO", NULL, H_LONG_MS));
    struct kn_usar_robot rb;
    ck_assert_int_eq(kn_usar_parse_robot(&ca.tl, &rb), KN_USAR_OK);
    ck_assert(rb.has_wheel_radius && rb.has_wheel_separation && rb.has_dimensions);
    ck_assert_double_eq_tol(rb.wheel_radius, 0.08, 2e-4);
    ck_assert_double_eq_tol(rb.wheel_separation, 0.23, 2e-4);
    ck_assert_msg(strstr(ca.last, "{Joint FRFlipper} {Location 0.1700,0.1750,0.0000}"), "%s",
                  ca.last);
    ec_send(&ca, "GETCONF {Type Robot}\r\n");
    ck_assert(ec_wait_head(&ca, "CONF", NULL, H_LONG_MS));
    ck_assert_int_eq(kn_usar_parse_robot(&ca.tl, &rb), KN_USAR_OK);
    ck_assert(kn_usar_str_is(rb.steering_type, "SkidSteered"));
    ck_assert_double_eq_tol(rb.mass, 20.0, 1e-3);
    ck_assert_msg(strstr(ca.last, "{Joint FRFlipper} {Sign -1} {MinAngle -2.0856} "
                                  "{MaxAngle 2.0856}"),
                  "%s", ca.last);
    /* nothing matches: no answer (like UDK), counted as ignored */
    ec_send(&ca, "GETCONF {Type Encoder}\r\n");
    ck_assert_int_eq(ec_stat_now(&ca, "Ignored"), 1);
    stop_clean();
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "nfo", nfo_first, 30, NULL, NULL },
        { "before-init", before_init_dropped, 30, NULL, NULL },
        { "init-sta", init_then_sta, 30, NULL, NULL },
        { "groundtruth", groundtruth_frame, 30, NULL, NULL },
        { "drive", drive_forward, 40, NULL, NULL },
        { "flippers", flippers_sign, 40, NULL, NULL },
        { "two-robots", two_robots_collide, 40, NULL, NULL },
        { "close", close_removes_robot, 30, NULL, NULL },
        { "extensions", extensions, 40, NULL, NULL },
        { "malformed", malformed_counted, 60, NULL, NULL },
        { "drift", pacing_drift, 40, NULL, NULL },
        { "lockstep", lockstep, 40, NULL, NULL },
        { "conf-geo", conf_geo, 30, NULL, NULL },
        { "stdin-not-pipe", stdin_watch_not_a_pipe, 30, NULL, NULL },
        { "auth", auth, 30, NULL, NULL },
        { "brake", brake, 30, NULL, NULL },
        { "deadman", deadman, 40, NULL, NULL },
    };
    return h_run_cases("kenaf-engine server", cases, sizeof cases / sizeof cases[0]);
}
