/* System tests of the usarsim backend: kenaf-simd against the stand-in
 * USARSim server (tests/usarsim_server), real processes over real
 * sockets. Raw KRP/1 CRAWLER / FLIPPER / STOP datagrams must come out as
 * exactly the expected DRIVE / SET / MULTIDRIVE lines; real server lines
 * fed by the server must show in STATUS; the daemon must survive the
 * server being killed and restarted, spawn the robot again where it was
 * and restore its flippers; and an unchanged controller binary
 * (examples/square through kenaf-sim-run) must drive its square. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "convert.h"
#include "harness.h"
#include "harness_suite.h"
#include "real_lines.h"
#include "usarsim_codec.h"

#define MAX_LINES 4096

/* ---- the server's log ---- */

struct rec {
    uint64_t t_us;
    int client;
    char text[512];
};

/* The lines the server received (events starting with '#' left out
 * unless events is set), in order. */
static int read_log(const char *log, struct rec *out, int max, bool events)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    static char line[20000];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long long t;
        int client, off = 0;
        if (sscanf(line, "%llu %d %n", &t, &client, &off) < 2 || off == 0)
            continue;
        char *text = line + off;
        text[strcspn(text, "\n")] = '\0';
        if (!events && text[0] == '#')
            continue;
        out[n].t_us = t;
        out[n].client = client;
        snprintf(out[n].text, sizeof out[n].text, "%s", text);
        n++;
    }
    fclose(f);
    return n;
}

/* Waits until the server received a line equal to want (after index
 * from); returns its index or -1. */
static int wait_line(const char *log, int from, const char *want, int timeout_ms)
{
    static struct rec recs[MAX_LINES];
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int n = read_log(log, recs, MAX_LINES, false);
        for (int i = from; i < n; i++)
            if (strcmp(recs[i].text, want) == 0)
                return i;
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(10);
    }
}

static void start_server(struct h_standin *s, int port, const char *name, const char *const extra[])
{
    h_standin_start(s, port, name, extra);
}

static void start_daemon(struct h_daemon *d, int port, const char *extra_backend,
                         const char *extra_robot)
{
    char robots[2048];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":4000%s,"
             "\"backend\":{\"type\":\"usarsim\",\"address\":\"127.0.0.1:%d\","
             "\"reconnect_max_s\":0.5,\"counts_per_tick\":3.2%s}}]",
             extra_robot ? extra_robot : "", port, extra_backend ? extra_backend : "");
    h_daemon_start(d, robots);
}

static void assert_daemon_alive(struct h_daemon *d)
{
    ck_assert_msg(h_wait_exit(&d->proc, 0) == -1, "kenaf-simd exited: %s", h_stderr(&d->proc));
}

/* The expected lines, in order, are exactly what the client sent. */
static void assert_lines(const char *log, const char *const want[], int nwant)
{
    static struct rec recs[MAX_LINES];
    int n = read_log(log, recs, MAX_LINES, false);
    char all[8192] = "";
    for (int i = 0; i < n; i++) {
        size_t l = strlen(all);
        snprintf(all + l, sizeof all - l, "  %s\n", recs[i].text);
    }
    ck_assert_msg(n == nwant, "server got %d lines, want %d:\n%s", n, nwant, all);
    for (int i = 0; i < n; i++)
        ck_assert_msg(strcmp(recs[i].text, want[i]) == 0, "line %d: got \"%s\", want \"%s\"\n%s", i,
                      recs[i].text, want[i], all);
    ck_assert_int_eq(h_log_count(log, "#eol"), 0); /* every line ended in CR LF */
}

/* ---- exact lines ---- */

START_TEST(udk_exact_lines)
{
    struct h_standin sim;
    struct h_daemon d;
    start_server(&sim, 0, "usarsim", NULL);
    start_daemon(&d, sim.port, ",\"usarsim\":{\"location_m\":[1,2,0.5],\"rotation_deg\":[0,0,90]}",
                 ",\"watchdog_ms\":10000");
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_int_ge(wait_line(sim.log, 0, "GETCONF {Type Encoder}", H_LONG_MS), 0);

    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    /* HELLO_ACK says USARSim with ground truth */
    h_hello(&u, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO_ACK);
    ck_assert_uint_eq(m.u.hello_ack.backend, KN_KRP_BACKEND_USARSIM);
    ck_assert_uint_eq(m.u.hello_ack.capabilities, KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_WORLD |
                                                      KN_KRP_CAP_SESSIONS | KN_KRP_CAP_ESTOP_INFO);

    /* the configured KRP pose went out as USARSim's and came back */
    struct kn_krp_status st = h_status(&u);
    ck_assert_msg(abs(st.pos_mm[0] - 1000) <= 1 && abs(st.pos_mm[1] - 2000) <= 1 &&
                      abs(st.pos_mm[2] - 500) <= 1,
                  "pose (%d, %d, %d) mm", st.pos_mm[0], st.pos_mm[1], st.pos_mm[2]);
    ck_assert_int_le(abs(st.rpy_cdeg[2] - 9000), 6);
    ck_assert(st.flags & KN_KRP_ST_BACKEND_UP);

    h_crawler(&u, 0, 0, 100, -50);
    ck_assert_int_ge(wait_line(sim.log, 0, "DRIVE {Left 1.2500} {Right -0.6250}", H_LONG_MS), 0);
    const int32_t fl[4] = { 3000, 0, 0, -4500 };
    h_flipper(&u, 0, 0, (1u << KN_FL) | (1u << KN_RR), fl);
    ck_assert_int_ge(wait_line(sim.log, 0,
                               "SET {Type Joint} {Name RRFlipper} {Opcode Angle} {Params -0.7854}",
                               H_LONG_MS),
                     0);
    /* the same set-points again: nothing new on the wire */
    h_crawler(&u, 0, 0, 100, -50);
    h_flipper(&u, 0, 0, (1u << KN_FL) | (1u << KN_RR), fl);
    h_simple(&u, 0, KN_KRP_STOP, 0);
    ck_assert_int_ge(wait_line(sim.log, 0, "DRIVE {Left 0.0000} {Right 0.0000}", H_LONG_MS), 0);
    h_expect_silence(&u); /* the daemon handled all of it */

    const char *const want[] = {
        "INIT {ClassName USARBot.Kenaf} {Name kenaf} {Location 1.0000,-2.0000,-0.5000} "
        "{Rotation 0.0000,0.0000,4.7124}",
        "GETCONF {Type Robot}",
        "GETGEO {Type Robot}",
        "GETCONF {Type Encoder}",
        "DRIVE {Left 1.2500} {Right -0.6250}",
        "SET {Type Joint} {Name FLFlipper} {Opcode Angle} {Params -0.5236}",
        "SET {Type Joint} {Name RRFlipper} {Opcode Angle} {Params -0.7854}",
        "DRIVE {Left 0.0000} {Right 0.0000}",
    };
    assert_lines(sim.log, want, (int)(sizeof want / sizeof want[0]));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.malformed.total"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.server.answers"), 3);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.sources.encoder_modulus"), 628);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

START_TEST(ut2004_exact_lines)
{
    struct h_standin sim;
    struct h_daemon d;
    const char *const extra[] = { "--dialect", "ut2004", NULL };
    start_server(&sim, 0, "usarsim", extra);
    start_daemon(&d, sim.port, ",\"usarsim\":{\"dialect\":\"ut2004\",\"start\":\"PlayerStart1\"}",
                 ",\"watchdog_ms\":10000");
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    ck_assert_int_ge(wait_line(sim.log, 0, "GETCONF {Type Encoder}", H_LONG_MS), 0);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    const int32_t fl[4] = { 1000, 2000, 3000, 4000 };
    h_flipper(&u, 0, 0, 0x0F, fl);
    ck_assert_int_ge(wait_line(sim.log, 0,
                               "MULTIDRIVE {FRFlipper -0.3491} {FLFlipper -0.1745} "
                               "{RRFlipper 0.6981} {RLFlipper 0.5236}",
                               H_LONG_MS),
                     0);
    /* UT2004 reports the joint angles in STA: wait until they arrived */
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    for (;;) {
        struct kn_krp_status st = h_status(&u);
        bool there = true;
        for (int k = 0; k < 4; k++)
            there = there && abs(st.flipper_cdeg[k] - fl[k]) <= 1;
        if (there)
            break;
        ck_assert_msg(h_now_us() < end, "flippers at %d %d %d %d", st.flipper_cdeg[0],
                      st.flipper_cdeg[1], st.flipper_cdeg[2], st.flipper_cdeg[3]);
        h_sleep_ms(20);
    }
    h_crawler(&u, 0, 0, 80, 80);
    ck_assert_int_ge(wait_line(sim.log, 0, "DRIVE {Left 1.0000} {Right 1.0000}", H_LONG_MS), 0);
    h_simple(&u, 0, KN_KRP_STOP, 0); /* holds the flippers where they are: no new MULTIDRIVE */
    ck_assert_int_ge(wait_line(sim.log, 0, "DRIVE {Left 0.0000} {Right 0.0000}", H_LONG_MS), 0);
    h_expect_silence(&u);
    const char *const want[] = {
        "INIT {ClassName USARBot.Kenaf} {Name kenaf} {Start PlayerStart1}",
        "GETCONF {Type Robot}",
        "GETGEO {Type Robot}",
        "GETCONF {Type Encoder}",
        "MULTIDRIVE {FRFlipper -0.3491} {FLFlipper -0.1745} {RRFlipper 0.6981} "
        "{RLFlipper 0.5236}",
        "DRIVE {Left 1.0000} {Right 1.0000}",
        "DRIVE {Left 0.0000} {Right 0.0000}",
    };
    assert_lines(sim.log, want, (int)(sizeof want / sizeof want[0]));
    ck_assert_str_eq(h_stat_str(&d, "robots.0.backend.usarsim.sources.flippers"), "sta");
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* ---- real lines through the server's --feed ---- */

START_TEST(fed_real_lines)
{
    const char *feed_path = h_path("feed.txt");
    char feed[8192];
    snprintf(feed, sizeof feed, "%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s", REAL_12, REAL_1, REAL_7, REAL_2,
             REAL_6, REAL_13, REAL_14, REAL_16, REAL_18, REAL_20, REAL_21, REAL_22, REAL_19,
             "SEN {Type GroundTruth} {Location 1,2} {Orientation 0,0,0}\r\n", REAL_STA_FLIPPERS,
             REAL_4);
    h_write_file(feed_path, feed);
    struct h_standin sim;
    struct h_daemon d;
    /* 7 bytes per write: every line arrives in pieces */
    const char *const extra[] = { "--feed", feed_path, "--feed-only", "--feed-chunk", "7", NULL };
    start_server(&sim, 0, "usarsim", extra);
    start_daemon(&d, sim.port, NULL, NULL);
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.backend.usarsim.received.GroundTruth", 2, H_LONG_MS));
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_status st = h_status(&u);
    ck_assert_int_eq(st.pos_mm[0], 4500);
    ck_assert_int_eq(st.pos_mm[1], -1900);
    ck_assert_int_eq(st.pos_mm[2], -1850);
    ck_assert_int_eq(st.rpy_cdeg[0], 0);
    ck_assert_int_eq(st.rpy_cdeg[1], 18);
    ck_assert_int_eq(st.rpy_cdeg[2], 18);
    ck_assert_uint_eq(st.time_us, 395383300);
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(st.flipper_cdeg[k], 3);
    ck_assert_uint_eq(st.battery_mv, 24000); /* STA battery is seconds: the config's volts */
    ck_assert_msg(h_stat(&d, "robots.0.backend.usarsim.malformed.total") == 1, "malformed: %s",
                  h_stat_str(&d, "robots.0.backend.usarsim.last_malformed"));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.malformed.bad_value"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.connects"), 1); /* never dropped */
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.received.Encoder"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.received.other_sensors"), 1);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* ---- the server goes away and comes back ---- */

static void wait_flippers(struct h_udp *u, const int32_t want[4], int tol, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        struct kn_krp_status st = h_status_any(u);
        bool there = (st.flags & KN_KRP_ST_BACKEND_UP) != 0;
        for (int k = 0; k < 4; k++)
            there = there && abs(st.flipper_cdeg[k] - want[k]) <= tol;
        if (there)
            return;
        ck_assert_msg(h_now_us() < end, "flippers at %d %d %d %d, want %d %d %d %d",
                      st.flipper_cdeg[0], st.flipper_cdeg[1], st.flipper_cdeg[2],
                      st.flipper_cdeg[3], want[0], want[1], want[2], want[3]);
        h_sleep_ms(10);
    }
}

START_TEST(server_restart_respawns_where_it_was)
{
    struct h_standin a, b;
    struct h_daemon d;
    const char *const extra[] = { "--asta", NULL };
    start_server(&a, 0, "usarsim-1", extra);
    int port = a.port;
    start_daemon(&d, port, NULL, NULL);
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    const int32_t fl[4] = { 3000, 3000, -2000, -2000 };
    h_flipper(&u, 0, 0, 0x0F, fl);
    /* drive off the spawn point, turning a little */
    for (int i = 0; i < 12; i++) {
        h_crawler(&u, 0, 0, 300, 250);
        h_sleep_ms(100);
    }
    h_simple(&u, 0, KN_KRP_STOP, 0);
    wait_flippers(&u, fl, 2, H_LONG_MS);
    /* at rest: two STATUS 200 ms apart agree */
    struct kn_krp_status s0, s1;
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    for (;;) {
        s0 = h_status_any(&u);
        h_sleep_ms(200);
        s1 = h_status_any(&u);
        if (s0.pos_mm[0] == s1.pos_mm[0] && s0.pos_mm[1] == s1.pos_mm[1] &&
            s0.rpy_cdeg[2] == s1.rpy_cdeg[2] && s0.time_us != s1.time_us)
            break;
        ck_assert_msg(h_now_us() < end, "robot does not come to rest");
    }
    ck_assert_msg(hypot(s1.pos_mm[0], s1.pos_mm[1]) > 200, "robot did not move: (%d, %d)",
                  s1.pos_mm[0], s1.pos_mm[1]);

    h_standin_kill(&a);
    ck_assert(h_wait_stat_eq(&d, "robots.0.flags.BACKEND_UP", 0, H_LONG_MS));
    h_sleep_ms(300); /* a few failed attempts meanwhile */
    assert_daemon_alive(&d);

    start_server(&b, port, "usarsim-2", extra);
    uint64_t back = h_now_us();
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));

    /* spawned again where it stood, not at the configured spawn pose */
    static struct rec recs[MAX_LINES];
    int n = read_log(b.log, recs, MAX_LINES, false);
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strncmp(recs[0].text, "INIT ", 5) == 0, "first line: %s", recs[0].text);
    static struct kn_usar_line l;
    ck_assert_int_eq(kn_usar_tokenize(recs[0].text, strlen(recs[0].text), &l), KN_USAR_OK);
    struct kn_usar_init in;
    ck_assert_int_eq(kn_usar_parse_init(&l, &in), KN_USAR_OK);
    ck_assert(in.has_location && in.has_rotation);
    /* USARSim is z down: (x, -y, -z); yaw turns the other way */
    ck_assert_msg(fabs(in.location[0] * 1000 - s1.pos_mm[0]) <= 2 &&
                      fabs(-in.location[1] * 1000 - s1.pos_mm[1]) <= 2 &&
                      fabs(-in.location[2] * 1000 - s1.pos_mm[2]) <= 2,
                  "INIT at %s, robot was at (%d, %d, %d) mm", recs[0].text, s1.pos_mm[0],
                  s1.pos_mm[1], s1.pos_mm[2]);
    double yaw_cdeg = -kn_conv_wrap_pi(in.rotation[2]) * 18000.0 / KN_PI;
    ck_assert_msg(fabs(yaw_cdeg - s1.rpy_cdeg[2]) <= 2, "INIT yaw %.1f cdeg, robot %d", yaw_cdeg,
                  s1.rpy_cdeg[2]);

    /* flippers restored within 2 s of the server's return */
    const char *const sets[] = {
        "SET {Type Joint} {Name FLFlipper} {Opcode Angle} {Params -0.5236}",
        "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params -0.5236}",
        "SET {Type Joint} {Name RLFlipper} {Opcode Angle} {Params -0.3491}",
        "SET {Type Joint} {Name RRFlipper} {Opcode Angle} {Params -0.3491}",
    };
    for (int k = 0; k < 4; k++) {
        int i = wait_line(b.log, 0, sets[k], H_LONG_MS);
        ck_assert_msg(i >= 0, "no \"%s\" after the restart", sets[k]);
        n = read_log(b.log, recs, MAX_LINES, false);
        int64_t after = (int64_t)(recs[i].t_us - back);
        ck_assert_msg(after <= 2000000, "%s came %.2f s after the server's return", sets[k],
                      (double)after / 1e6);
    }
    /* and the new robot's flippers got there: 2 s, plus the joints' slew */
    int left_ms = 2500 - (int)((h_now_us() - back) / 1000);
    wait_flippers(&u, fl, 2, left_ms > 1 ? left_ms : 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.reconnects"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.spawns"), 2);
    ck_assert_int_eq(h_log_count(b.log, "#eol"), 0);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* ---- a mirrored encoder ---- */

/* The server's right encoder counts down going forward. The robot told so
 * (usarsim.encoder_sign [1, -1]) counts up on both sides; the same robot
 * without it counts the right side down. */
START_TEST(mirrored_right_encoder)
{
    struct h_standin sim;
    struct h_daemon d;
    static const char *const mirrored[] = { "--encoder-sign", "1,-1", NULL };
    start_server(&sim, 0, "usarsim", mirrored);
    char robots[1024];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"told\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":4000,"
             "\"backend\":{\"type\":\"usarsim\",\"address\":\"127.0.0.1:%d\","
             "\"counts_per_tick\":3.2,"
             "\"usarsim\":{\"encoder_sign\":[1,-1],\"location_m\":[0,0,0]}}},"
             "{\"name\":\"untold\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":4000,"
             "\"backend\":{\"type\":\"usarsim\",\"address\":\"127.0.0.1:%d\","
             "\"counts_per_tick\":3.2,\"usarsim\":{\"location_m\":[0,5,0]}}}]",
             sim.port, sim.port);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    h_wait_backend_fresh(&d, 1, H_LONG_MS);
    struct h_udp u[2];
    int32_t c0[2][2];
    for (int r = 0; r < 2; r++) {
        h_udp_open(&u[r], d.port[r]);
        struct kn_krp_status st = h_status(&u[r]);
        c0[r][0] = st.crawler_count[0];
        c0[r][1] = st.crawler_count[1];
    }
    /* 0.2 m/s for about a second: about 800 counts a side */
    uint64_t end = h_now_us() + 1000000;
    while (h_now_us() < end) {
        for (int r = 0; r < 2; r++)
            h_crawler(&u[r], 0, 0, 200, 200);
        h_sleep_ms(50);
    }
    for (int r = 0; r < 2; r++)
        h_simple(&u[r], 0, KN_KRP_STOP, 0);
    h_sleep_ms(300);
    int32_t dl[2], dr[2];
    for (int r = 0; r < 2; r++) {
        struct kn_krp_status st = h_status(&u[r]);
        dl[r] = st.crawler_count[0] - c0[r][0];
        dr[r] = st.crawler_count[1] - c0[r][1];
    }
    ck_assert_msg(dl[0] > 400 && dr[0] > 400 && abs(dl[0] - dr[0]) < 100,
                  "told: left %d, right %d counts", dl[0], dr[0]);
    ck_assert_msg(dl[1] > 400 && dr[1] < -400 && abs(dl[1] + dr[1]) < 100,
                  "untold: left %d, right %d counts", dl[1], dr[1]);
    assert_daemon_alive(&d);
    for (int r = 0; r < 2; r++)
        h_udp_close(&u[r]);
}
END_TEST

/* ---- an unchanged controller ---- */

START_TEST(square_completes)
{
    struct h_standin sim;
    struct h_daemon d;
    start_server(&sim, 0, "usarsim", NULL);
    start_daemon(&d, sim.port, NULL, NULL);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);

    h_run_square(d.port[0], 25000, NULL);

    /* it drove and turned through USARSim lines, and the square closed */
    ck_assert_int_gt(h_log_count(sim.log, "DRIVE {Left"), 8);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_status s = h_status(&u);
    ck_assert_msg(abs(s.pos_mm[0]) < 40 && abs(s.pos_mm[1]) < 40,
                  "square did not close: ended at (%d, %d) mm", s.pos_mm[0], s.pos_mm[1]);
    ck_assert_msg(abs(s.rpy_cdeg[2]) < 300, "square ended facing %d cdeg", s.rpy_cdeg[2]);
    ck_assert_int_eq(wait_line(sim.log, 0, "DRIVE {Left 0.0000} {Right 0.0000}", 0) >= 0, 1);
    ck_assert_int_eq(h_log_count(sim.log, "#eol"), 0);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* ---- edge cases of real servers ---- */

/* Both belts at mm_s for about ms, a STOP, and the STATUS once at rest. */
static struct kn_krp_status drive_then_stop(struct h_udp *u, int ms, int16_t mm_s)
{
    uint64_t end = h_now_us() + (uint64_t)ms * 1000u;
    while (h_now_us() < end) {
        h_crawler(u, 0, 0, mm_s, mm_s);
        h_sleep_ms(50);
    }
    h_simple(u, 0, KN_KRP_STOP, 0);
    h_sleep_ms(300);
    return h_status_any(u);
}

/* The stand-in with extra options, kenaf-simd on it (extra_backend in
 * its backend section), the robot up, and a KRP/1 socket to it. */
static void start_robot(struct h_standin *sim, struct h_daemon *d, struct h_udp *u,
                        const char *const extra[], const char *extra_backend)
{
    start_server(sim, 0, "usarsim", extra);
    start_daemon(d, sim->port, extra_backend, NULL);
    h_wait_backend_fresh(d, 0, H_LONG_MS);
    h_udp_open(u, d->port[0]);
}

/* UDK: one STA carrying flipper fields (right after spawn) must not pin
 * the flippers: STATUS shows the operator's 30 deg, and a STOP does not
 * command them back to the stale angle of that one line. */
START_TEST(stray_sta_flippers_do_not_undo_a_command)
{
    struct h_standin sim;
    struct h_daemon d;
    static const char *const once[] = { "--sta-flippers-once", NULL };
    struct h_udp u;
    start_robot(&sim, &d, &u, once, NULL);
    const int32_t fl[4] = { 3000, 3000, 3000, 3000 };
    h_flipper(&u, 0, 0, 0x0F, fl);
    wait_flippers(&u, fl, 2, H_LONG_MS);
    ck_assert_int_eq(wait_line(sim.log, 0,
                               "SET {Type Joint} {Name RLFlipper} {Opcode Angle} "
                               "{Params 0.5236}",
                               H_LONG_MS) >= 0,
                     1);
    h_simple(&u, 0, KN_KRP_STOP, 0);
    h_sleep_ms(500);
    /* the four SETs of the command, none after the STOP */
    ck_assert_int_eq(h_log_count(sim.log, "SET {Type Joint}"), 4);
    struct kn_krp_status st = h_status_any(&u);
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(st.flipper_cdeg[k], 3000);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* Odometry as the only pose: it counts from the spawn pose, so STATUS
 * starts where the robot was put, not at the world origin. */
START_TEST(odometry_only_starts_at_the_spawn_pose)
{
    struct h_standin sim;
    struct h_daemon d;
    static const char *const odo[] = { "--sensors", "odometry,encoder", NULL };
    struct h_udp u;
    start_robot(&sim, &d, &u, odo,
                ",\"usarsim\":{\"location_m\":[3,4,0],\"rotation_deg\":[0,0,90]}");
    struct kn_krp_status st = h_status_any(&u);
    ck_assert_msg(abs(st.pos_mm[0] - 3000) < 5 && abs(st.pos_mm[1] - 4000) < 5,
                  "at (%d, %d) mm, spawned at (3000, 4000)", st.pos_mm[0], st.pos_mm[1]);
    ck_assert_int_eq(st.rpy_cdeg[2], 9000);
    /* 0.2 m/s ahead for about a second: along +y (it faces +y) */
    st = drive_then_stop(&u, 1000, 200);
    ck_assert_msg(abs(st.pos_mm[0] - 3000) < 20 && st.pos_mm[1] > 4100,
                  "at (%d, %d) mm after driving ahead from (3000, 4000) facing +y", st.pos_mm[0],
                  st.pos_mm[1]);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

/* UDK that answers no GETCONF: the W<i> encoders still wrap every turn
 * (628 ticks), so 3 s at 0.2 m/s (more than one wheel turn) count about
 * 2400 counts a side, not a turn less. */
START_TEST(encoders_wrap_without_encoder_conf)
{
    struct h_standin sim;
    struct h_daemon d;
    static const char *const noget[] = { "--no-get", NULL };
    struct h_udp u;
    start_robot(&sim, &d, &u, noget, NULL);
    struct kn_krp_status s0 = h_status_any(&u);
    struct kn_krp_status s1 = drive_then_stop(&u, 3000, 200);
    int32_t dl = s1.crawler_count[0] - s0.crawler_count[0];
    int32_t dr = s1.crawler_count[1] - s0.crawler_count[1];
    ck_assert_msg(dl > 2000 && dl < 2900 && dr > 2000 && dr < 2900,
                  "left %d, right %d counts for about 0.6 m (2400 counts)", dl, dr);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.sources.encoder_modulus"), 628);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.usarsim.received.encoder_jumps"), 0);
    assert_daemon_alive(&d);
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("usarsim backend against the stand-in server");
    TCase *tc = tcase_create("system");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, udk_exact_lines);
    tcase_add_test(tc, ut2004_exact_lines);
    tcase_add_test(tc, fed_real_lines);
    tcase_add_test(tc, server_restart_respawns_where_it_was);
    tcase_add_test(tc, square_completes);
    tcase_add_test(tc, mirrored_right_encoder);
    tcase_add_test(tc, stray_sta_flippers_do_not_undo_a_command);
    tcase_add_test(tc, odometry_only_starts_at_the_spawn_pose);
    tcase_add_test(tc, encoders_wrap_without_encoder_conf);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
