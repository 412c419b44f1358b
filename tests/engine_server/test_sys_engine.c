/* The full chain with the built-in engine: kenaf-simd with the default
 * kind of config (backend engine, no address) spawns kenaf-engine itself;
 * an unchanged controller (examples/square through kenaf-sim-run) drives
 * its square in the physics engine and comes back near its start; a
 * kill -9 of the engine clears BACKEND_UP, the engine is restarted and
 * the robot re-spawned where it was; another local program connecting to
 * the spawned engine's port can neither spawn robots nor reset, pause or
 * re-pace the world, while the daemon's own link drives on; a robot
 * refused by an engine whose world is full shows why and asks again. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "eng_client.h"
#include "engine_limits.h"
#include "harness.h"

#define ROBOT                                                              \
    "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"watchdog_ms\":500," \
    "\"backend\":{\"type\":\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]"
#define PROC "robots.0.backend.engine.process."

static struct h_daemon d;

/* the engine builds its world first */
static void up_and_fresh(void)
{
    h_wait_backend_fresh(&d, 0, 3 * H_LONG_MS);
}

/* Drives at 300 mm/s until x passed x0 + 100 mm, then stops. */
static struct kn_krp_status drive_100mm(struct h_udp *u, int x0)
{
    struct kn_krp_status s;
    uint64_t end = h_now_us() + 3ull * H_LONG_MS * 1000ull;
    do {
        h_crawler(u, 0, 0, 300, 300);
        h_sleep_ms(50);
        s = h_status_any(u);
    } while (s.pos_mm[0] < x0 + 100 && h_now_us() < end);
    h_crawler(u, 0, 0, 0, 0);
    ck_assert_int_ge(s.pos_mm[0], x0 + 100);
    return s;
}

START_TEST(square_in_engine)
{
    h_daemon_start(&d, ROBOT);
    up_and_fresh();
    ck_assert_str_eq(h_stat_str(&d, PROC "state"), "running");
    ck_assert_double_eq(h_stat(&d, PROC "spawns"), 1);
    ck_assert_str_eq(h_stat_str(&d, "robots.0.backend.engine.level"), "flat");
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_status s0 = h_status(&u);
    ck_assert(s0.flags & KN_KRP_ST_BACKEND_UP);

    h_run_square(d.port[0], 60000, NULL);

    struct kn_krp_status s = h_status(&u);
    double dx = s.pos_mm[0] - s0.pos_mm[0], dy = s.pos_mm[1] - s0.pos_mm[1];
    double dyaw = fabs((double)s.rpy_cdeg[2] - s0.rpy_cdeg[2]) / 100.0;
    if (dyaw > 180)
        dyaw = 360 - dyaw;
    printf("square in the engine: back at (%+.0f, %+.0f) mm from the start, yaw %+.1f deg off\n",
           dx, dy, dyaw);
    /* four 100 mm legs with real tracks that slip: near, not exact */
    ck_assert_msg(hypot(dx, dy) < 40, "square did not close: (%.0f, %.0f) mm", dx, dy);
    ck_assert_msg(dyaw < 15, "heading off by %.1f deg", dyaw);
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 8);
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.engine.sent.DRIVE"), 8);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.malformed.total"), 0);
    h_udp_close(&u);
}
END_TEST

START_TEST(engine_killed_and_restarted)
{
    h_daemon_start(&d, ROBOT);
    up_and_fresh();
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    (void)h_hello(&u, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(&u, &m, H_LONG_MS));
    /* drive about 0.3 m forward, then stop */
    struct kn_krp_status s;
    uint64_t end = h_now_us() + 3ull * H_LONG_MS * 1000ull;
    do {
        h_crawler(&u, 0, 0, 300, 300);
        h_sleep_ms(50);
        s = h_status_any(&u);
    } while (s.pos_mm[0] < 300 && h_now_us() < end);
    h_crawler(&u, 0, 0, 0, 0);
    ck_assert_int_ge(s.pos_mm[0], 300);
    end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_sleep_ms(50);
        s = h_status_any(&u);
    } while ((s.crawler_speed_mm_s[0] != 0 || s.crawler_speed_mm_s[1] != 0) && h_now_us() < end);
    h_sleep_ms(300); /* the state settles into the daemon's last pose */
    struct kn_krp_status before = h_status_any(&u);

    int pid = (int)h_stat(&d, PROC "pid");
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    /* the link went down (BACKEND_UP cleared), the engine came back */
    ck_assert(h_wait_stat(&d, "robots.0.backend.disconnects", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&d, PROC "restarts", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.backend.reconnects", 1, 3 * H_LONG_MS));
    up_and_fresh();
    ck_assert_double_eq(h_stat(&d, PROC "exits"), 1);
    ck_assert_int_ne((int)h_stat(&d, PROC "pid"), pid);
    ck_assert_str_eq(h_stat_str(&d, PROC "state"), "running");
    /* re-spawned at its last pose, not at the configured origin */
    h_sleep_ms(300);
    struct kn_krp_status after = h_status_any(&u);
    printf("before kill: (%d, %d) mm; after restart: (%d, %d) mm\n", before.pos_mm[0],
           before.pos_mm[1], after.pos_mm[0], after.pos_mm[1]);
    ck_assert_msg(abs(after.pos_mm[0] - before.pos_mm[0]) < 30 &&
                      abs(after.pos_mm[1] - before.pos_mm[1]) < 30,
                  "re-spawned at (%d, %d) mm instead of (%d, %d) mm", after.pos_mm[0],
                  after.pos_mm[1], before.pos_mm[0], before.pos_mm[1]);
    ck_assert(after.flags & KN_KRP_ST_BACKEND_UP);
    /* the robot still drives */
    drive_100mm(&u, after.pos_mm[0]);
    h_udp_close(&u);

    /* SIGTERM: the daemon stops its engine before it exits */
    int epid = (int)h_stat(&d, PROC "pid");
    h_signal(&d.proc, SIGTERM);
    int st = h_wait_exit(&d.proc, H_LONG_MS);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon exit %d", st);
    ck_assert_msg(kill(epid, 0) != 0, "engine %d outlived kenaf-simd", epid);
    ck_assert_msg(strstr(h_stderr(&d.proc), "stopped") != NULL, "%s", h_stderr(&d.proc));
}
END_TEST

static bool kenaf_failed(struct ec_conn *c)
{
    struct kn_usar_str status;
    return kn_usar_get_str(&c->tl, "Status", &status) == KN_USAR_OK &&
           kn_usar_str_is(status, "Failed") && strstr(c->last, "not authenticated") != NULL;
}

START_TEST(intruder_refused)
{
    h_daemon_start(&d, ROBOT);
    up_and_fresh();
    int port = (int)h_stat(&d, PROC "port");
    ck_assert_int_gt(port, 0);
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.engine.auths_sent"), 1);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    (void)h_hello(&u, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(&u, &m, H_LONG_MS));
    struct kn_krp_status s0 = h_status_any(&u);

    /* a second raw connection to the engine, as any local program could */
    static struct ec_conn c;
    ec_connect(&c, port);
    ck_assert(ec_wait_head(&c, "NFO", NULL, H_LONG_MS));
    static const struct {
        const char *line, *cmd;
    } tries[] = {
        { "KENAF {Cmd Reset}", "Reset" },
        { "KENAF {Cmd Pace} {Mode step}", "Pace" },
        { "KENAF {Cmd Pause}", "Pause" },
        { "KENAF {Cmd Terrain} {Name stairs}", "Terrain" },
        { "INIT {ClassName USARBot.Kenaf} {Name Intruder} {Location 1,0,0}", "Init" },
        { "KENAF {Cmd Auth} {Token guessed-guessed-guessed}", "Auth" },
    };
    for (int i = 0; i < 5; i++) {
        ec_send(&c, "%s\r\n", tries[i].line);
        ck_assert_msg(ec_wait_kenaf(&c, tries[i].cmd, H_LONG_MS), "no reply to %s", tries[i].line);
        ck_assert_msg(kenaf_failed(&c), "%s: %s", tries[i].line, c.last);
    }
    ec_stats(&c);
    ck_assert_int_eq(ec_stat(&c, "Unauthorized"), 5);
    ck_assert_int_eq(ec_stat(&c, "Robots"), 1); /* the daemon's only */
    ck_assert_msg(strstr(c.last, "{Pace realtime}") && strstr(c.last, "{Paused false}") &&
                      strstr(c.last, "{Level flat}"),
                  "%s", c.last);
    /* a guessed token closes the connection */
    ec_send(&c, "%s\r\n", tries[5].line);
    ck_assert(ec_wait_kenaf(&c, "Auth", H_LONG_MS));
    while (ec_line(&c, H_LONG_MS)) {
    }
    ck_assert(c.eof);
    ec_close(&c);

    /* the daemon's link is untouched: the robot is where it was, fresh,
     * and drives */
    struct kn_krp_status s = h_status_any(&u);
    ck_assert(s.flags & KN_KRP_ST_BACKEND_UP);
    ck_assert(!(s.flags & KN_KRP_ST_STALE));
    ck_assert_int_lt(abs(s.pos_mm[0] - s0.pos_mm[0]), 5);
    s = drive_100mm(&u, s0.pos_mm[0]);
    ck_assert(!(s.flags & KN_KRP_ST_STALE));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.kenaf_failed"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.disconnects"), 0);
    /* the engine's refusals are in its log, which kenaf-simd passes on */
    ck_assert_msg(strstr(h_stderr(&d.proc), "refused: not authenticated") != NULL, "%s",
                  h_stderr(&d.proc));
    ck_assert_msg(strstr(h_stderr(&d.proc), "wrong token") != NULL, "%s", h_stderr(&d.proc));
    h_udp_close(&u);
}
END_TEST

/* The first chunk of the robot's WORLD answer (its generation first). */
static struct kn_krp_world world_head(int port)
{
    struct h_udp u;
    h_udp_open(&u, port);
    struct kn_krp_msg m = {
        .h = { .version = KN_KRP_VERSION, .type = KN_KRP_WORLD_REQ, .seq = ++u.seq }
    };
    m.u.world_req.offset = 0;
    h_udp_send(&u, &m);
    struct kn_krp_msg a;
    do
        ck_assert_msg(h_udp_recv_answer(&u, &a, H_LONG_MS), "no WORLD answer");
    while (a.h.type != KN_KRP_WORLD);
    h_udp_close(&u);
    return a.u.world;
}

START_TEST(reload_removes_engine)
{
    /* two robots with the same terrain share one engine (one world) */
    h_daemon_start(&d, "[{\"name\":\"a\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"}}},"
                       "{\"name\":\"b\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"},\"usarsim\":"
                       "{\"location_m\":[0,2,0]}}}]");
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, 3 * H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.1.flags.BACKEND_UP", 1, 3 * H_LONG_MS));
    int pid = (int)h_stat(&d, "robots.0.backend.engine.process.pid");
    ck_assert_int_eq((int)h_stat(&d, "robots.1.backend.engine.process.pid"), pid);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.process.robots"), 2);
    /* one world, one description: a viewer draws both robots on it */
    struct kn_krp_world wa = world_head(d.port[0]), wb = world_head(d.port[1]);
    ck_assert_uint_gt(wa.total_len, 0);
    ck_assert_uint_eq(wa.total_len, wb.total_len);
    ck_assert_uint_eq(wa.n, wb.n);
    ck_assert_msg(memcmp(wa.data, wb.data, wa.n) == 0, "%.*s\n%.*s", (int)wa.n, wa.data, (int)wb.n,
                  wb.data);
    /* SIGHUP with both robots gone: the engine is stopped */
    h_daemon_write_config(&d, "[{\"name\":\"c\",\"listen\":\"127.0.0.1:0\",\"backend\":"
                              "{\"type\":\"standin\",\"address\":\"127.0.0.1:9\"}}]");
    h_signal(&d.proc, SIGHUP);
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (kill(pid, 0) == 0 && h_now_us() < end)
        h_sleep_ms(20);
    ck_assert_msg(kill(pid, 0) != 0, "engine %d still running after its robots were removed", pid);
}
END_TEST

/* An engine at an address whose world is full (KN_ENGINE_MAX_ROBOTS robots
 * of other clients): the daemon's robot is refused with the engine's
 * reason, which the link shows as state "refused", warns once and counts;
 * it asks again, and gets its robot once a place is free. */
START_TEST(world_full_refused)
{
    static const char *const STEP[] = { "--pace", "step", NULL };
    static struct ec_engine eng;
    ec_engine_start(&eng, STEP);
    static struct ec_conn others[KN_ENGINE_MAX_ROBOTS];
    for (int i = 0; i < KN_ENGINE_MAX_ROBOTS; i++) {
        ec_connect(&others[i], eng.port);
        ec_send(&others[i], "INIT {ClassName USARBot.Kenaf} {Name O%d} {Location %d,%d,0}\r\n", i,
                2 * (i % 8), 2 * (i / 8) + 3);
    }
    for (int i = 0; i < KN_ENGINE_MAX_ROBOTS; i++)
        ck_assert(ec_wait_head(&others[i], "STA", NULL, 3 * H_LONG_MS));
    char robots[256];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"late\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
             "\"engine\",\"address\":\"127.0.0.1:%d\",\"usarsim\":{\"location_m\":[-3,0,0]}}}]",
             eng.port);
    h_daemon_start(&d, robots);
    ck_assert(h_wait_stat(&d, "robots.0.backend.refusals", 3, 3 * H_LONG_MS));
    ck_assert_str_eq(h_stat_str(&d, "robots.0.backend.state"), "refused");
    ck_assert_msg(strstr(h_stat_str(&d, "robots.0.backend.last_error"), "world full") != NULL, "%s",
                  h_stat_str(&d, "robots.0.backend.last_error"));
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.engine.init_refused"), 3);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.handshake_timeouts"), 0);
    /* said once, with the limit */
    const char *log = h_stderr(&d.proc), *first = strstr(log, "refused by the simulator at");
    ck_assert_msg(first && strstr(first + 1, "refused by the simulator at") == NULL, "%s", log);
    char want[96];
    snprintf(want, sizeof want, "world full: this engine takes at most %d robots",
             KN_ENGINE_MAX_ROBOTS);
    ck_assert_msg(strstr(first, want) != NULL, "%s", log);
    /* a place comes free: the robot spawns */
    ec_close(&others[0]);
    ck_assert(h_wait_stat(&d, "robots.0.backend.connects", 1, 3 * H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, 3 * H_LONG_MS));
    ck_assert_str_eq(h_stat_str(&d, "robots.0.backend.state"), "up");
    for (int i = 1; i < KN_ENGINE_MAX_ROBOTS; i++)
        ec_close(&others[i]);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "square", square_in_engine, 100, NULL, NULL },
        { "kill", engine_killed_and_restarted, 100, NULL, NULL },
        { "reload", reload_removes_engine, 100, NULL, NULL },
        { "intruder", intruder_refused, 100, NULL, NULL },
        { "full", world_full_refused, 100, NULL, NULL },
    };
    h_not_wrapped("full", "48 robots in the engine: kept out of the valgrind run's budget");
    return h_run_cases("kenaf-simd with the built-in engine", cases,
                       sizeof cases / sizeof cases[0]);
}
