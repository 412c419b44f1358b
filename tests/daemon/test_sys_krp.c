/* System tests: every KRP/1 rule against a real kenaf-simd talking to a
 * real standin_sim, over real UDP and TCP sockets. Each rule's test sends
 * the offending datagrams, checks the answers and the stats counters read
 * from the stats socket, and where the simulator is involved, the command
 * lines the stand-in recorded. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "harness.h"
#include "harness_suite.h"

static struct h_standin sim;
static struct h_daemon simd;
static struct h_udp ctl;

static const char *robot_json(int sim_port)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":5000,"
             "\"battery_v\":24.0,"
             "\"backend\":{\"type\":\"standin\",\"address\":\"127.0.0.1:%d\","
             "\"reconnect_max_s\":0.2}}]",
             sim_port);
    return buf;
}

static void setup(void)
{
    h_setup();
    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&simd, robot_json(sim.port));
    h_wait_backend_fresh(&simd, 0, H_LONG_MS);
    h_udp_open(&ctl, simd.port[0]);
}

static void teardown(void)
{
    h_udp_close(&ctl);
    h_teardown();
}

#define STAT(path) h_stat(&simd, "robots.0." path)

START_TEST(hello_ack)
{
    uint32_t seq = h_hello(&ctl, "console");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(&ctl, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO_ACK);
    ck_assert_uint_eq(m.u.hello_ack.protocol, 1);
    ck_assert_uint_eq(m.u.hello_ack.simulated, 1);
    ck_assert_uint_eq(m.u.hello_ack.backend, KN_KRP_BACKEND_ENGINE);
    ck_assert_str_eq(m.u.hello_ack.robot_name, "kenaf");
    ck_assert_uint_eq(m.u.hello_ack.capabilities, KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_WORLD |
                                                      KN_KRP_CAP_SESSIONS | KN_KRP_CAP_ESTOP_INFO);
    ck_assert_int_eq(m.u.hello_ack.counts_per_m, 5000);
    ck_assert_int_eq(m.u.hello_ack.max_speed_mm_s, 800);
    ck_assert_int_eq(m.u.hello_ack.flipper_min_cdeg, -11950);
    ck_assert_int_eq(m.u.hello_ack.flipper_max_cdeg, 11950);
    (void)seq;
    /* one robot seq for every peer */
    struct h_udp other;
    h_udp_open(&other, simd.port[0]);
    uint32_t first = m.h.seq;
    (void)h_status(&other);
    struct kn_krp_status s = h_status(&ctl);
    (void)s;
    ck_assert_double_eq(STAT("datagrams_in.HELLO"), 1);
    ck_assert_double_eq(STAT("datagrams_out.HELLO_ACK"), 1);
    ck_assert_double_eq(STAT("datagrams_out.STATUS"), 2);
    ck_assert_double_eq(STAT("peers.in_use"), 2);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.peers.recent.0.name"), "console");
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.peers.recent.1.name"), "");
    h_udp_close(&other);
    ck_assert_uint_gt(first, 0);
}
END_TEST

START_TEST(status_answered_from_latest_state)
{
    struct kn_krp_status a = h_status(&ctl);
    ck_assert_uint_eq(a.flags, KN_KRP_ST_SIMULATED | KN_KRP_ST_BACKEND_UP);
    ck_assert_uint_eq(a.battery_mv, 24000);
    ck_assert_int_ge(a.accel_mm_s2[2], 9800); /* gravity, body z up */
    ck_assert_int_le(a.accel_mm_s2[2], 9815);
    /* the simulation clock moves: the next state, however long the
     * simulator takes to send it */
    struct kn_krp_status b;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_sleep_ms(20);
        b = h_status(&ctl);
    } while (b.time_us <= a.time_us && h_now_us() < end);
    ck_assert_uint_gt(b.time_us, a.time_us);
    ck_assert_double_ge(STAT("backend.states"), 1);
    ck_assert_double_lt(STAT("backend.status_age_ms"), 500);
}
END_TEST

START_TEST(crawler_reaches_simulator)
{
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 300, -300);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.3, -0.3, H_LONG_MS, NULL), 0);
    /* the simulated robot turns right on the spot: speeds and yaw follow */
    struct kn_krp_status s;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_crawler(&ctl, 0, 0, 300, -300);
        h_sleep_ms(20);
        s = h_status(&ctl);
    } while ((s.crawler_speed_mm_s[0] != 300 || s.rpy_cdeg[2] > -1000) && h_now_us() < end);
    ck_assert_int_eq(s.crawler_speed_mm_s[0], 300);
    ck_assert_int_eq(s.crawler_speed_mm_s[1], -300);
    ck_assert_int_lt(s.rpy_cdeg[2], -1000);
    ck_assert_int_lt(s.rate_mdeg_s[2], 0);
    ck_assert_int_gt(s.crawler_count[0], 0);
    ck_assert_double_ge(STAT("backend.commands.sent"), 1);
    ck_assert_double_ge(STAT("backend.latency_us.count"), 1);
    ck_assert_double_gt(STAT("backend.latency_us.p50"), 0);
    ck_assert_double_ge(STAT("rules.commands"), 1);
    ck_assert_double_eq(STAT("datagrams_out.ACK"), 1);
    ck_assert_double_ge(STAT("datagrams_in.CRAWLER"), 2);
}
END_TEST

START_TEST(setpoints_clamped)
{
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 2000, -5000);
    h_expect_error(&ctl, KN_KRP_ERR_RANGE, seq, KN_KRP_CRAWLER);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.8, -0.8, H_LONG_MS, NULL), 0);
    ck_assert(h_status(&ctl).flags & KN_KRP_ST_CLAMPED);
    int32_t t[4] = { 20000, 0, 0, -30000 };
    seq = h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x09, t);
    h_expect_error(&ctl, KN_KRP_ERR_RANGE, seq, KN_KRP_FLIPPER);
    h_expect_ack(&ctl, seq, KN_KRP_FLIPPER);
    struct h_cmd cmds[64];
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    int n, k = -1;
    do {
        n = h_log_cmds(sim.log, cmds, 64);
        for (int i = 0; i < n; i++)
            if (cmds[i].fmask == 0x09)
                k = i;
        if (k < 0)
            h_sleep_ms(10);
    } while (k < 0 && h_now_us() < end);
    ck_assert_int_ge(k, 0);
    ck_assert_double_eq_tol(cmds[k].flippers[0], kn_conv_cdeg_to_rad(11950), 1e-9);
    ck_assert_double_eq_tol(cmds[k].flippers[3], kn_conv_cdeg_to_rad(-11950), 1e-9);
    ck_assert_double_eq(STAT("errors.RANGE"), 2);
    ck_assert_double_eq(STAT("rules.clamped"), 2);
    /* an in-range set-point clears CLAMPED */
    h_crawler(&ctl, 0, 0, 100, 100);
    ck_assert(!(h_status(&ctl).flags & KN_KRP_ST_CLAMPED));
}
END_TEST

START_TEST(seq_ordering)
{
    h_expect_ack(&ctl, h_crawler(&ctl, 100, KN_KRP_F_ACK_REQ, 100, 100), KN_KRP_CRAWLER);
    h_crawler(&ctl, 99, KN_KRP_F_ACK_REQ, 700, 700); /* older: ignored, no ACK */
    int32_t t[4] = { 1000, 0, 0, 0 };
    h_flipper(&ctl, 98, KN_KRP_F_ACK_REQ, 1, t); /* the mark is shared */
    ck_assert(h_wait_stat(&simd, "robots.0.drops.stale_seq", 2, H_LONG_MS));
    h_expect_silence(&ctl);
    /* STOP is never ignored */
    h_expect_ack(&ctl, h_simple(&ctl, 50, KN_KRP_STOP, KN_KRP_F_ACK_REQ), KN_KRP_STOP);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0, 0, H_LONG_MS, NULL), 0);
    /* HELLO forgets the mark */
    h_hello(&ctl, "again");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&ctl, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO_ACK);
    h_expect_ack(&ctl, h_crawler(&ctl, 0xFFFFFFF0u, KN_KRP_F_ACK_REQ, 100, 100), KN_KRP_CRAWLER);
    /* newer across the 32-bit wrap, then older across it */
    h_expect_ack(&ctl, h_crawler(&ctl, 3, KN_KRP_F_ACK_REQ, 200, 200), KN_KRP_CRAWLER);
    h_crawler(&ctl, 0xFFFFFFF5u, KN_KRP_F_ACK_REQ, 700, 700);
    ck_assert(h_wait_stat(&simd, "robots.0.drops.stale_seq", 3, H_LONG_MS));
    h_expect_silence(&ctl);
    /* another sender has its own mark: it drives from seq 1 once ctl left */
    struct h_udp other;
    h_udp_open(&other, simd.port[0]);
    h_expect_ack(&ctl, h_simple(&ctl, 0, KN_KRP_BYE, KN_KRP_F_ACK_REQ), KN_KRP_BYE);
    h_expect_ack(&other, h_crawler(&other, 1, KN_KRP_F_ACK_REQ, 100, 100), KN_KRP_CRAWLER);
    h_udp_close(&other);
    ck_assert_double_eq(STAT("drops.stale_seq"), 3);
    /* the ignored ones never reached the simulator */
    struct h_cmd cmds[256];
    int n = h_log_cmds(sim.log, cmds, 256);
    for (int i = 0; i < n; i++) {
        ck_assert(fabs(cmds[i].belts[0] - 0.7) > 1e-9);
        ck_assert(!(cmds[i].fmask & 1) ||
                  fabs(cmds[i].flippers[0] - kn_conv_cdeg_to_rad(1000)) > 1e-9);
    }
}
END_TEST

START_TEST(watchdog_stops_belts)
{
    h_crawler(&ctl, 0, 0, 300, 300);
    struct h_cmd go, stop;
    int i = h_wait_belts(sim.log, 0, 0.3, 0.3, H_LONG_MS, &go);
    ck_assert_int_ge(i, 0);
    /* STATUS_REQ and SUBSCRIBE do not feed the watchdog */
    uint64_t end = h_now_us() + 2000000;
    int j = -1;
    h_subscribe(&ctl, 0, 1000);
    while (j < 0 && h_now_us() < end) {
        (void)h_status(&ctl);
        j = h_wait_belts(sim.log, i + 1, 0, 0, 50, &stop);
    }
    ck_assert_msg(j > i, "belts never went to 0");
    ck_assert_uint_ge(stop.t_us - go.t_us, 400000); /* not early (500 ms, clocks differ a bit) */
    struct kn_krp_status s = h_status(&ctl);
    ck_assert(s.flags & KN_KRP_ST_WATCHDOG);
    ck_assert_double_eq(STAT("rules.watchdog_trips"), 1);
    /* the next CRAWLER clears WATCHDOG */
    h_crawler(&ctl, 0, 0, 100, 100);
    ck_assert(!(h_status(&ctl).flags & KN_KRP_ST_WATCHDOG));
    /* STOP clears it too */
    ck_assert(h_wait_stat(&simd, "robots.0.rules.watchdog_trips", 2, H_LONG_MS));
    ck_assert(h_status(&ctl).flags & KN_KRP_ST_WATCHDOG);
    h_simple(&ctl, 0, KN_KRP_STOP, 0);
    ck_assert(!(h_status(&ctl).flags & KN_KRP_ST_WATCHDOG));
}
END_TEST

START_TEST(estop_latch)
{
    h_crawler(&ctl, 0, 0, 300, 300);
    int i = h_wait_belts(sim.log, 0, 0.3, 0.3, H_LONG_MS, NULL);
    ck_assert_int_ge(i, 0);
    uint32_t seq = h_estop(&ctl, KN_KRP_F_ACK_REQ, 1);
    h_expect_ack(&ctl, seq, KN_KRP_ESTOP);
    int z = h_wait_belts(sim.log, i + 1, 0, 0, H_LONG_MS, NULL);
    ck_assert_int_gt(z, i);
    ck_assert(h_status(&ctl).flags & KN_KRP_ST_ESTOP);
    seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 300, 300);
    h_expect_error(&ctl, KN_KRP_ERR_ESTOP, seq, KN_KRP_CRAWLER);
    int32_t t[4] = { 1000, 1000, 1000, 1000 };
    seq = h_flipper(&ctl, 0, KN_KRP_F_ACK_REQ, 0x0F, t);
    h_expect_error(&ctl, KN_KRP_ERR_ESTOP, seq, KN_KRP_FLIPPER);
    /* a value other than 0/1: RANGE, ignored */
    seq = h_estop(&ctl, KN_KRP_F_ACK_REQ, 7);
    h_expect_error(&ctl, KN_KRP_ERR_RANGE, seq, KN_KRP_ESTOP);
    h_expect_silence(&ctl);
    ck_assert(h_status(&ctl).flags & KN_KRP_ST_ESTOP);
    /* release: stays stopped until a new CRAWLER */
    seq = h_estop(&ctl, KN_KRP_F_ACK_REQ, 0);
    h_expect_ack(&ctl, seq, KN_KRP_ESTOP);
    struct kn_krp_status s = h_status(&ctl);
    ck_assert(!(s.flags & KN_KRP_ST_ESTOP));
    struct h_cmd cmds[256];
    int n = h_log_cmds(sim.log, cmds, 256);
    for (int k = z; k < n; k++)
        ck_assert_double_eq(cmds[k].belts[0], 0);
    ck_assert_double_eq(STAT("errors.ESTOP"), 2);
    ck_assert_double_eq(STAT("drops.estop_refused"), 2);
    ck_assert_double_eq(STAT("drops.estop_bad_value"), 1);
    ck_assert_double_eq(STAT("rules.estop_engaged"), 1);
    h_crawler(&ctl, 0, 0, 250, 250);
    ck_assert_int_gt(h_wait_belts(sim.log, z, 0.25, 0.25, H_LONG_MS, NULL), z);
}
END_TEST

START_TEST(subscribe_pushes_and_cancel)
{
    uint32_t seq = h_subscribe(&ctl, KN_KRP_F_ACK_REQ, 50);
    h_expect_ack(&ctl, seq, KN_KRP_SUBSCRIBE);
    int pushes = 0;
    struct kn_krp_msg m;
    while (pushes < 5 && h_udp_recv(&ctl, &m, H_LONG_MS)) {
        ck_assert_uint_eq(m.h.type, KN_KRP_STATUS);
        ck_assert_uint_eq(m.u.status.req_seq, 0);
        ck_assert(m.u.status.flags & KN_KRP_ST_SIMULATED);
        pushes++;
    }
    ck_assert_int_eq(pushes, 5);
    ck_assert_double_eq(STAT("subscriptions.active"), 1);
    /* out of range: clamped, RANGE and ACK */
    seq = h_subscribe(&ctl, KN_KRP_F_ACK_REQ, 5);
    h_expect_error(&ctl, KN_KRP_ERR_RANGE, seq, KN_KRP_SUBSCRIBE);
    h_expect_ack(&ctl, seq, KN_KRP_SUBSCRIBE);
    seq = h_subscribe(&ctl, KN_KRP_F_ACK_REQ, 60000);
    h_expect_error(&ctl, KN_KRP_ERR_RANGE, seq, KN_KRP_SUBSCRIBE);
    h_expect_ack(&ctl, seq, KN_KRP_SUBSCRIBE);
    ck_assert_double_eq(STAT("subscriptions.clamped"), 2);
    /* period 0 cancels: after the ACK nothing is pushed any more */
    seq = h_subscribe(&ctl, KN_KRP_F_ACK_REQ, 0);
    h_expect_ack(&ctl, seq, KN_KRP_SUBSCRIBE);
    uint32_t q = h_simple(&ctl, 0, KN_KRP_STATUS_REQ, 0);
    ck_assert(h_udp_recv(&ctl, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(m.u.status.req_seq, q);
    ck_assert_double_eq(STAT("subscriptions.active"), 0);
    ck_assert_double_ge(STAT("subscriptions.pushes"), 5);
}
END_TEST

/* Eight slots: four for plain peers, three more for session observers,
 * one kept for the driver; the ninth subscriber is BUSY. */
START_TEST(subscribe_ninth_busy)
{
    struct h_udp subs[10];
    for (int i = 0; i < 10; i++) {
        h_udp_open(&subs[i], simd.port[0]);
        if (i >= 5 && i < 9)
            ck_assert_uint_eq(h_hello_session(&subs[i], "observer", true), KN_KRP_ROLE_OBSERVER);
        if (i == 9) /* the driver */
            ck_assert_uint_eq(h_hello_session(&subs[i], "driver", false), KN_KRP_ROLE_DRIVER);
        uint32_t seq = h_subscribe(&subs[i], KN_KRP_F_ACK_REQ, 1000);
        if (i == 4 || i == 8) /* a fifth plain one; a fourth observer */
            h_expect_error(&subs[i], KN_KRP_ERR_BUSY, seq, KN_KRP_SUBSCRIBE);
        else
            h_expect_ack(&subs[i], seq, KN_KRP_SUBSCRIBE);
    }
    ck_assert_double_eq(STAT("subscriptions.active"), 8);
    ck_assert_double_eq(STAT("drops.subscribe_busy"), 2);
    ck_assert_double_eq(STAT("errors.BUSY"), 2);
    ck_assert_double_eq(STAT("sessions.active"), 5);
    for (int i = 0; i < 10; i++)
        h_udp_close(&subs[i]);
}
END_TEST

START_TEST(subscribe_lease_lapses)
{
    struct h_udp quiet;
    h_udp_open(&quiet, simd.port[0]);
    uint64_t t0 = h_now_us();
    h_expect_ack(&quiet, h_subscribe(&quiet, KN_KRP_F_ACK_REQ, 200), KN_KRP_SUBSCRIBE);
    h_expect_ack(&ctl, h_subscribe(&ctl, KN_KRP_F_ACK_REQ, 200), KN_KRP_SUBSCRIBE);
    /* ctl renews with any datagram (here a bad one: still a datagram) */
    uint8_t junk[6] = { 0x4B, 0x4E, 1, 0, 0, 0 };
    while (h_now_us() - t0 < 3500000) {
        h_udp_raw(&ctl, junk, sizeof junk);
        h_sleep_ms(200);
    }
    /* both alive at 3.5 s: judged only if the answer came back before the
     * 5 s lease could lapse (t0 is before the subscription), which a busy
     * machine may not manage; the lapse below is checked either way */
    double active = STAT("subscriptions.active");
    if (h_now_us() - t0 < 5000000)
        ck_assert_double_eq(active, 2);
    uint64_t end = h_now_us() + 6000000;
    while (h_now_us() < end && STAT("subscriptions.active") != 1) {
        h_udp_raw(&ctl, junk, sizeof junk);
        h_sleep_ms(200);
    }
    ck_assert_double_eq(STAT("subscriptions.active"), 1);
    ck_assert_uint_ge(h_now_us() - t0, 4900000);
    ck_assert_double_eq(STAT("subscriptions.lapsed"), 1);
    h_udp_close(&quiet);
}
END_TEST

START_TEST(error_rate_limit)
{
    uint8_t bad[12] = { 0x4B, 0x4E, 9, KN_KRP_STOP, 1, 0, 0, 0, 0, 0, 0, 0 };
    size_t log_before = strlen(h_stderr(&simd.proc));
    uint64_t t0 = h_now_us();
    for (int i = 0; i < 40; i++)
        h_udp_raw(&ctl, bad, sizeof bad);
    ck_assert(h_wait_stat(&simd, "robots.0.envelope.bad_version", 40, H_LONG_MS));
    double elapsed = (double)(h_now_us() - t0) / 1e6;
    int errors = 0;
    struct kn_krp_msg m;
    while (h_udp_recv(&ctl, &m, 200)) {
        ck_assert_uint_eq(m.h.type, KN_KRP_ERROR);
        ck_assert_uint_eq(m.u.error.code, KN_KRP_ERR_BAD_VERSION);
        errors++;
    }
    ck_assert_int_ge(errors, 10);
    ck_assert_int_le(errors, 10 + (int)ceil(elapsed * 10) + 1);
    ck_assert_double_eq(STAT("errors.BAD_VERSION"), errors);
    ck_assert_double_eq(STAT("drops.rate_limited"), 40 - errors);
    /* every ERROR counts: a RANGE answer now is limited as well */
    double limited = STAT("drops.rate_limited");
    h_crawler(&ctl, 0, 0, 9000, 0);
    ck_assert(h_wait_stat(&simd, "robots.0.rules.clamped", 1, H_LONG_MS));
    double sent = STAT("errors.RANGE") + STAT("drops.rate_limited") - limited;
    ck_assert_double_eq(sent, 1);
    /* another peer has its own bucket */
    struct h_udp other;
    h_udp_open(&other, simd.port[0]);
    h_udp_raw(&other, bad, sizeof bad);
    h_expect_error(&other, KN_KRP_ERR_BAD_VERSION, 1, KN_KRP_STOP);
    h_udp_close(&other);
    /* no log line per datagram at the default level */
    ck_assert_uint_eq(strlen(h_stderr(&simd.proc)), log_before);
}
END_TEST

START_TEST(envelope_errors)
{
    uint8_t buf[700];
    memset(buf, 0xAA, sizeof buf);
    /* bad magic: dropped silently, counted */
    h_udp_raw(&ctl, buf, 20);
    buf[0] = 'K';
    h_udp_raw(&ctl, buf, 1);
    ck_assert(h_wait_stat(&simd, "robots.0.drops.bad_magic", 2, H_LONG_MS));
    h_expect_silence(&ctl);
    /* good magic, fewer than 12 bytes */
    buf[0] = 0x4B;
    buf[1] = 0x4E;
    h_udp_raw(&ctl, buf, 11);
    h_expect_error(&ctl, KN_KRP_ERR_BAD_LENGTH, 0, 0);
    /* over 512 bytes */
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STOP, 77, 0);
    kn_krp_encode(&m, buf, sizeof buf);
    h_udp_raw(&ctl, buf, 600);
    h_expect_error(&ctl, KN_KRP_ERR_BAD_LENGTH, 0, 0);
    /* length field does not match */
    kn_krp_init(&m, KN_KRP_CRAWLER, 78, 0);
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    h_udp_raw(&ctl, buf, n + 3);
    h_expect_error(&ctl, KN_KRP_ERR_BAD_LENGTH, 78, KN_KRP_CRAWLER);
    /* payload length wrong for the type */
    buf[8] = 4;
    h_udp_raw(&ctl, buf, 16);
    h_expect_error(&ctl, KN_KRP_ERR_BAD_LENGTH, 78, KN_KRP_CRAWLER);
    /* version */
    kn_krp_init(&m, KN_KRP_STATUS_REQ, 79, 0);
    n = kn_krp_encode(&m, buf, sizeof buf);
    buf[2] = 0;
    h_udp_raw(&ctl, buf, n);
    h_expect_error(&ctl, KN_KRP_ERR_BAD_VERSION, 79, KN_KRP_STATUS_REQ);
    /* unknown type */
    buf[2] = 1;
    buf[3] = 0x33;
    h_udp_raw(&ctl, buf, n);
    h_expect_error(&ctl, KN_KRP_ERR_UNKNOWN_TYPE, 79, 0x33);
    /* robot->controller type sent to the robot */
    kn_krp_init(&m, KN_KRP_HELLO_ACK, 80, 0);
    h_udp_send(&ctl, &m);
    h_expect_error(&ctl, KN_KRP_ERR_UNKNOWN_TYPE, 80, KN_KRP_HELLO_ACK);
    /* unknown flag bits are ignored */
    h_crawler(&ctl, 81, 0xFF00, 100, 100);
    h_expect_ack(&ctl, h_crawler(&ctl, 82, 0xFF01, 100, 100), KN_KRP_CRAWLER);
    h_expect_silence(&ctl);

    ck_assert_double_eq(STAT("envelope.short"), 1);
    ck_assert_double_eq(STAT("envelope.too_big"), 1);
    ck_assert_double_eq(STAT("envelope.bad_length"), 1);
    ck_assert_double_eq(STAT("envelope.bad_payload_length"), 1);
    ck_assert_double_eq(STAT("envelope.bad_version"), 1);
    ck_assert_double_eq(STAT("envelope.unknown_type"), 1);
    ck_assert_double_eq(STAT("envelope.not_to_robot"), 1);
    ck_assert_double_eq(STAT("errors.BAD_LENGTH"), 4);
    ck_assert_double_eq(STAT("errors.BAD_VERSION"), 1);
    ck_assert_double_eq(STAT("errors.UNKNOWN_TYPE"), 2);
    ck_assert_double_eq(STAT("datagrams_in.HELLO_ACK"), 1);
}
END_TEST

/* A simulator that is not there: BACKEND_DOWN answers; the set-points are
 * kept and applied when it appears. */
START_TEST(backend_down_then_reapplied)
{
    /* a port nobody listens on, taken by the stand-in later */
    struct h_standin probe;
    h_standin_start(&probe, 0, "probe", NULL);
    int port = probe.port;
    h_standin_kill(&probe);
    struct h_daemon d2;
    h_daemon_start(&d2, robot_json(port));
    h_udp_open(&ctl, d2.port[0]);
    struct kn_krp_status s = h_status(&ctl);
    ck_assert(!(s.flags & KN_KRP_ST_BACKEND_UP));
    ck_assert(s.flags & KN_KRP_ST_STALE);
    uint32_t seq = h_crawler(&ctl, 0, KN_KRP_F_ACK_REQ, 300, 300);
    h_expect_error(&ctl, KN_KRP_ERR_BACKEND_DOWN, seq, KN_KRP_CRAWLER);
    h_expect_ack(&ctl, seq, KN_KRP_CRAWLER);
    int32_t t[4] = { 3000, 0, 0, 0 };
    seq = h_flipper(&ctl, 0, 0, 0x01, t);
    h_expect_error(&ctl, KN_KRP_ERR_BACKEND_DOWN, seq, KN_KRP_FLIPPER);
    ck_assert_double_eq(h_stat(&d2, "robots.0.errors.BACKEND_DOWN"), 2);
    ck_assert_double_eq(h_stat(&d2, "robots.0.rules.while_backend_down"), 2);
    ck_assert_double_eq(h_stat(&d2, "robots.0.backend.commands.while_down"), 2);
    ck_assert_double_ge(h_stat(&d2, "robots.0.backend.connect_failures"), 1);
    /* the simulator appears; the controller keeps driving meanwhile */
    struct h_standin late;
    h_standin_start(&late, port, "late", NULL);
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_crawler(&ctl, 0, 0, 300, 300);
        h_sleep_ms(50);
    } while (h_stat(&d2, "robots.0.flags.BACKEND_UP") == 0 && h_now_us() < end);
    ck_assert(h_status_any(&ctl).flags & KN_KRP_ST_BACKEND_UP);
    /* the link is up before the re-applied set-points are written, and the
     * simulator logs them once it has read them */
    ck_assert_int_ge(h_wait_belts(late.log, 0, 0.3, 0.3, H_LONG_MS, NULL), 0);
    struct h_cmd cmds[64];
    int n = h_log_cmds(late.log, cmds, 64);
    ck_assert_int_ge(n, 1);
    ck_assert(cmds[0].reapply);
    ck_assert_double_eq_tol(cmds[0].belts[0], 0.3, 1e-9);
    ck_assert_uint_eq(cmds[0].fmask, 0x01);
    ck_assert_double_eq_tol(cmds[0].flippers[0], kn_conv_cdeg_to_rad(3000), 1e-9);
    ck_assert_double_eq(h_stat(&d2, "robots.0.backend.commands.reapplied"), 1);
    h_udp_close(&ctl);
}
END_TEST

static void bare_setup(void)
{
    h_setup();
}

int main(void)
{
    Suite *s = suite_create("kenaf-simd KRP/1");
    TCase *tc = tcase_create("rules");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hello_ack);
    tcase_add_test(tc, status_answered_from_latest_state);
    tcase_add_test(tc, crawler_reaches_simulator);
    tcase_add_test(tc, setpoints_clamped);
    tcase_add_test(tc, seq_ordering);
    tcase_add_test(tc, watchdog_stops_belts);
    tcase_add_test(tc, estop_latch);
    tcase_add_test(tc, subscribe_pushes_and_cancel);
    tcase_add_test(tc, subscribe_ninth_busy);
    tcase_add_test(tc, subscribe_lease_lapses);
    tcase_add_test(tc, error_rate_limit);
    tcase_add_test(tc, envelope_errors);
    suite_add_tcase(s, tc);
    TCase *tc2 = tcase_create("backend-down");
    tcase_add_checked_fixture(tc2, bare_setup, h_teardown);
    tcase_set_timeout(tc2, 60);
    tcase_add_test(tc2, backend_down_then_reapplied);
    suite_add_tcase(s, tc2);
    return h_run_suite(s);
}
