/* System tests of capture and replay, with real processes:
 *  - a controller session captured by kenaf-simd, replayed by kenaf-replay
 *    against a fresh daemon and simulator, gives the simulator the same
 *    set-points and the controller the same answers (with the captured
 *    timing, and as fast as the robot answers): the driver and an observer
 *    hold sessions, whose tokens the replay takes from the live robot;
 *  - an unchanged controller (examples/square) runs against a daemon whose
 *    simulator is kenaf-replay --serve-sim playing a captured session;
 *  - capture started and stopped at run time with `kenaf-simd --command`,
 *    with the faults the injector applied noted on the packets.
 * Process records are static: the harness keeps pointers to them until
 * teardown. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "cap_harness.h"
#include "harness_suite.h"
#include "pcapng.h"

#define MAX_CMDS 4096

static int cmds_wait(const char *log, struct h_cmd *cmds, int want, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    int n;
    while ((n = h_log_cmds(log, cmds, MAX_CMDS)) < want && h_now_us() < end)
        h_sleep_ms(20);
    return n;
}

/* Every command the daemon wrote to its simulator, as the simulator
 * logged them: the log is another process's, so it is read until it holds
 * as many as the daemon counts as sent (each is one line). */
static int cmds_all(struct h_daemon *d, const char *log, struct h_cmd *cmds)
{
    double sent = h_stat(d, "robots.0.backend.commands.sent");
    int n = cmds_wait(log, cmds, (int)sent, H_LONG_MS);
    ck_assert_msg(n == (int)sent, "the simulator logged %d commands, the daemon sent %.0f", n,
                  sent);
    return n;
}

static void same_cmd(const struct h_cmd *a, const struct h_cmd *b, int i, bool flippers)
{
    ck_assert_msg(a->belts[0] == b->belts[0] && a->belts[1] == b->belts[1],
                  "command %d: belts %g %g, replayed %g %g", i, a->belts[0], a->belts[1],
                  b->belts[0], b->belts[1]);
    ck_assert_msg(a->fmask == b->fmask, "command %d: flipper mask %x, replayed %x", i, a->fmask,
                  b->fmask);
    for (int k = 0; flippers && k < 4; k++)
        if (a->fmask & (1u << k))
            ck_assert_msg(fabs(a->flippers[k] - b->flippers[k]) < 1e-9,
                          "command %d: flipper %d %.9f, replayed %.9f", i, k, a->flippers[k],
                          b->flippers[k]);
    ck_assert_int_eq(a->reapply, b->reapply);
}

/* A second client with a session while the controller drives: it may
 * watch, not drive, and leaves. */
static void observer_session(int port)
{
    struct h_udp o;
    h_udp_open(&o, port);
    ck_assert_uint_eq(h_hello_session(&o, "replay-obs", true), KN_KRP_ROLE_OBSERVER);
    uint32_t s = h_crawler(&o, 0, 0, 100, 100);
    h_expect_error(&o, KN_KRP_ERR_NOT_OWNER, s, KN_KRP_CRAWLER);
    (void)h_status_any(&o);
    h_expect_ack(&o, h_simple(&o, 0, KN_KRP_BYE, KN_KRP_F_ACK_REQ), KN_KRP_BYE);
    h_udp_close(&o);
}

/* A scripted controller: every kind of command, with answers, in a
 * session as the driver, and an observer beside it. */
static void controller_session(int port)
{
    struct h_udp u;
    h_udp_open(&u, port);
    ck_assert_uint_eq(h_hello_session(&u, "replay-ctl", false), KN_KRP_ROLE_DRIVER);
    h_expect_ack(&u, h_subscribe(&u, KN_KRP_F_ACK_REQ, 100), KN_KRP_SUBSCRIBE);
    observer_session(port);
    for (int i = 0; i < 15; i++) {
        uint16_t f = i % 5 == 0 ? KN_KRP_F_ACK_REQ : 0;
        uint32_t s = h_crawler(&u, 0, f, 20 * i, -15 * i);
        if (f)
            h_expect_ack(&u, s, KN_KRP_CRAWLER);
        h_sleep_ms(40);
    }
    const int32_t fl[4] = { 1000, -500, 0, 0 };
    h_expect_ack(&u, h_flipper(&u, 0, KN_KRP_F_ACK_REQ, 0x3, fl), KN_KRP_FLIPPER);
    /* keep the belts fed while the flippers settle (STOP holds them where
     * they are measured) */
    for (int i = 0; i < 10; i++) {
        h_crawler(&u, 0, 0, 100, 100);
        h_sleep_ms(40);
    }
    uint32_t s = h_crawler(&u, 0, 0, 900, 0);
    h_expect_error(&u, KN_KRP_ERR_RANGE, s, KN_KRP_CRAWLER);
    (void)h_status_any(&u);
    h_expect_ack(&u, h_simple(&u, 0, KN_KRP_STOP, KN_KRP_F_ACK_REQ), KN_KRP_STOP);
    h_expect_ack(&u, h_estop(&u, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    s = h_crawler(&u, 0, 0, 100, 100);
    h_expect_error(&u, KN_KRP_ERR_ESTOP, s, KN_KRP_CRAWLER);
    h_expect_ack(&u, h_estop(&u, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    h_expect_ack(&u, h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 50, 50), KN_KRP_CRAWLER);
    h_sleep_ms(40);
    h_expect_ack(&u, h_simple(&u, 0, KN_KRP_STOP, KN_KRP_F_ACK_REQ), KN_KRP_STOP);
    h_expect_ack(&u, h_subscribe(&u, KN_KRP_F_ACK_REQ, 0), KN_KRP_SUBSCRIBE);
    /* leaving gives the robot up, so the next replay's driver may drive */
    h_expect_ack(&u, h_simple(&u, 0, KN_KRP_BYE, KN_KRP_F_ACK_REQ), KN_KRP_BYE);
    h_udp_close(&u);
}

static cJSON *replay_json(const char *out)
{
    const char *j = strstr(out, "{\"sent\":");
    ck_assert_msg(j != NULL, "no JSON summary in:\n%s", out);
    cJSON *o = cJSON_Parse(j);
    ck_assert_ptr_nonnull(o);
    return o;
}

static double jnum(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItem(o, k);
    ck_assert_msg(cJSON_IsNumber(v), "no %s", k);
    return v->valuedouble;
}

START_TEST(replay_reproduces_setpoints)
{
    static struct h_cmd a[MAX_CMDS], b[MAX_CMDS];
    char cap[256], robots[1200];
    snprintf(cap, sizeof cap, "%s", h_path("controller.pcapng"));

    /* the original run, captured */
    static struct h_standin sim_a;
    static struct h_daemon d1;
    h_standin_start(&sim_a, 0, "sim-a", NULL);
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim_a.port, NULL));
    const char *args[] = { "--capture", cap, NULL };
    c_daemon_start(&d1, "d1", robots, args);
    h_wait_backend_fresh(&d1, 0, H_LONG_MS);
    controller_session(d1.port[0]);
    /* every command was answered, so each set-point is on its way */
    int na = cmds_all(&d1, sim_a.log, a);
    ck_assert_int_ge(na, 25);
    ck_assert(strstr(c_command(&d1, "capture stop"), "\"ok\":true"));
    ck_assert(c_capture_closed(&d1, H_LONG_MS));
    ck_assert_double_eq(h_stat(&d1, "capture.dropped.buffer_full"), 0);

    /* a fresh daemon and simulator, the capture replayed with its timing */
    static struct h_standin sim_b;
    static struct h_daemon d2;
    h_standin_start(&sim_b, 0, "sim-b", NULL);
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim_b.port, NULL));
    c_daemon_start(&d2, "d2", robots, NULL);
    h_wait_backend_fresh(&d2, 0, H_LONG_MS);
    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d2.port[0]);
    static char out[1 << 16];
    char *argv[] = { getenv("KN_REPLAY"), "--robot", robot, "--json", cap, NULL };
    int rc = c_run(argv, out, sizeof out, 60000);
    ck_assert_msg(rc == 0, "kenaf-replay reported divergence or failed (%d):\n%s", rc, out);
    cJSON *j = replay_json(out);
    ck_assert_double_eq(jnum(j, "requests_diverging"), 0);
    ck_assert_double_eq(jnum(j, "controllers"), 2);
    ck_assert_double_ge(jnum(j, "answers_captured"), 15);
    /* every datagram after the two HELLOs carried the live token */
    ck_assert_double_ge(jnum(j, "tokens_rewritten"), jnum(j, "sent") - 2);
    ck_assert_double_eq(jnum(j, "tokens_unknown"), 0);
    ck_assert_double_eq(jnum(j, "answers_matching"), jnum(j, "answers_captured"));
    ck_assert_double_eq(jnum(j, "answers_replayed"), jnum(j, "answers_captured"));
    ck_assert_double_ge(jnum(j, "pushes_replayed"), 1);
    cJSON_Delete(j);

    int nb = cmds_all(&d2, sim_b.log, b);
    ck_assert_int_eq(nb, na);
    for (int i = 0; i < na; i++)
        same_cmd(&a[i], &b[i], i, true);

    /* again as fast as the robot answers: the same answers; the belts
     * follow the same sequence (flipper holds depend on timing there) */
    char *argv2[] = { getenv("KN_REPLAY"), "--robot", robot, "--fast", "--json", cap, NULL };
    rc = c_run(argv2, out, sizeof out, 60000);
    ck_assert_msg(rc == 0, "kenaf-replay --fast diverged (%d):\n%s", rc, out);
    j = replay_json(out);
    ck_assert_double_eq(jnum(j, "requests_diverging"), 0);
    ck_assert_double_eq(jnum(j, "tokens_unknown"), 0);
    cJSON_Delete(j);
    nb = cmds_wait(sim_b.log, b, 2 * na, H_LONG_MS);
    ck_assert_int_ge(nb, 2 * na);
    for (int i = 0; i < na; i++) {
        ck_assert(a[i].belts[0] == b[na + i].belts[0] && a[i].belts[1] == b[na + i].belts[1]);
        ck_assert_int_eq(a[i].fmask, b[na + i].fmask);
    }

    /* a daemon that behaves differently is reported: a lower speed limit
     * turns ACKs into ERROR RANGE */
    static struct h_standin sim_c;
    static struct h_daemon d3;
    h_standin_start(&sim_c, 0, "sim-c", NULL);
    snprintf(robots, sizeof robots, "[%s]",
             h_standin_robot("kenaf", sim_c.port, ",\"limits\":{\"max_speed_mm_s\":200}"));
    c_daemon_start(&d3, "d3", robots, NULL);
    h_wait_backend_fresh(&d3, 0, H_LONG_MS);
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d3.port[0]);
    char *argv3[] = { getenv("KN_REPLAY"), "--robot", robot, "--fast", "--json", cap, NULL };
    rc = c_run(argv3, out, sizeof out, 60000);
    ck_assert_msg(rc == 1, "kenaf-replay saw no divergence (%d):\n%s", rc, out);
    j = replay_json(out);
    ck_assert_double_gt(jnum(j, "requests_diverging"), 0);
    cJSON_Delete(j);
    ck_assert_ptr_nonnull(strstr(out, "HELLO#")); /* HELLO_ACK limits differ */
    ck_assert_ptr_nonnull(strstr(out, "replayed ERROR RANGE"));
}
END_TEST

static int run_square(int port, char *out, size_t outlen)
{
    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", port);
    const char *run = getenv("KN_SIM_RUN"), *square = getenv("KN_SQUARE");
    ck_assert_msg(run && square, "KN_SIM_RUN / KN_SQUARE not set");
    char *argv[] = { "/bin/sh", (char *)run, "--robot", robot, "--", (char *)square, NULL };
    return c_run(argv, out, outlen, 60000);
}

START_TEST(serve_sim_runs_controller)
{
    static char out[65536];
    char cap[256], robots[1200];
    snprintf(cap, sizeof cap, "%s", h_path("square.pcapng"));

    /* the original run: square against the stand-in simulator, captured
     * from the daemon's start, so the session holds the handshake */
    static struct h_standin sim;
    static struct h_daemon d1;
    h_standin_start(&sim, 0, "sim", NULL);
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    const char *args[] = { "--capture", cap, NULL };
    c_daemon_start(&d1, "d1", robots, args);
    h_wait_backend_fresh(&d1, 0, H_LONG_MS);
    int rc = run_square(d1.port[0], out, sizeof out);
    ck_assert_msg(rc == 0, "square failed against the simulator (%d):\n%s", rc, out);
    h_signal(&d1.proc, SIGTERM);
    int st = h_wait_exit(&d1.proc, H_LONG_MS);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "kenaf-simd did not stop");
    h_standin_kill(&sim); /* the original simulator is gone */

    char *list[] = { getenv("KN_REPLAY"), "--list", cap, NULL };
    ck_assert_int_eq(c_run(list, out, sizeof out, H_LONG_MS), 0);
    ck_assert_msg(strstr(out, "session 0:") != NULL, "no session in:\n%s", out);

    /* kenaf-replay plays the simulator */
    char log[256];
    snprintf(log, sizeof log, "%s", h_path("replay-sim.log"));
    static struct h_proc rp;
    char *argv[] = { getenv("KN_REPLAY"), "--serve-sim", "--once", "--log", log, cap, NULL };
    h_spawn(&rp, argv, NULL, "replay.stderr");
    int port = h_read_port(&rp, H_LONG_MS);
    static struct h_daemon d2;
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", port, NULL));
    c_daemon_start(&d2, "d2", robots, NULL);
    h_wait_backend_fresh(&d2, 0, H_LONG_MS);
    rc = run_square(d2.port[0], out, sizeof out);
    ck_assert_msg(rc == 0, "square failed against the replayed simulator (%d):\n%s\n%s", rc, out,
                  h_stderr(&rp));
    ck_assert_ptr_nonnull(strstr(out, "SIMULATED"));
    /* the daemon's commands reached the stand-in simulator */
    ck_assert_int_ge(h_log_count(log, "\"type\":\"hello\""), 1);
    ck_assert_int_ge(h_log_count(log, "\"type\":\"cmd\""), 8);
}
END_TEST

START_TEST(capture_at_run_time_with_faults)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "sim", NULL);
    char robots[1200];
    snprintf(
        robots, sizeof robots, "[%s]",
        h_standin_robot("kenaf", sim.port, ",\"faults\":{\"krp\":{\"drop\":0.3,\"seed\":11}}"));
    c_daemon_start(&d, "d", robots, NULL);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_eq(h_stat(&d, "capture.active"), 0);
    char cap[256], line[400];
    snprintf(cap, sizeof cap, "%s", h_path("run-time.pcapng"));
    snprintf(line, sizeof line, "capture start %s max_mb=1", cap);
    ck_assert(strstr(c_command(&d, line), "\"active\":true"));
    /* a second one is refused, with a reason */
    static char out[8192];
    char *argv[] = { getenv("KN_SIMD"), "--command", line, "--socket", d.stats, NULL };
    ck_assert_int_eq(c_run(argv, out, sizeof out, H_LONG_MS), 1);
    ck_assert_ptr_nonnull(strstr(out, "running already"));

    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    for (int i = 0; i < 60; i++) {
        h_simple(&u, 0, KN_KRP_STATUS_REQ, 0);
        h_sleep_ms(2);
    }
    /* counted once the daemon has read them all, however long that takes */
    ck_assert(h_wait_stat_eq(&d, "robots.0.faults.krp.in.seen", 60, H_LONG_MS));
    h_udp_close(&u);
    double dropped_in = h_stat(&d, "robots.0.faults.krp.in.dropped");
    ck_assert_double_gt(dropped_in, 0);
    ck_assert(strstr(c_command(&d, "capture stop"), "\"ok\":true"));
    ck_assert(c_capture_closed(&d, H_LONG_MS));

    /* every datagram that arrived is in the file; the dropped ones say so */
    FILE *f = fopen(cap, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_uint_le(len, 1024 * 1024);
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0;
    int in = 0, noted = 0, out_n = 0;
    while (off < len) {
        size_t used;
        struct kn_pcap_packet p;
        enum kn_pcap_result res = kn_pcap_next(&r, buf + off, len - off, &used, &p);
        ck_assert(res == KN_PCAP_PACKET || res == KN_PCAP_BLOCK);
        off += used;
        if (res != KN_PCAP_PACKET || p.if_id != 0)
            continue;
        if (p.dir == KN_PCAPNG_DIR_IN) {
            in++;
            noted += p.comment && p.comment_len == 7 && memcmp(p.comment, "dropped", 7) == 0;
        } else {
            out_n++;
        }
    }
    ck_assert_int_eq(in, 60);
    ck_assert_int_eq(noted, (int)dropped_in);
    /* answers that left: those to datagrams that got through, less the
     * answers the outbound side dropped */
    ck_assert_int_eq(out_n,
                     60 - (int)dropped_in - (int)h_stat(&d, "robots.0.faults.krp.out.dropped"));

    /* command line mistakes */
    char *bad1[] = { getenv("KN_SIMD"), "--capture-max-mb", "5", "--config", d.config, NULL };
    ck_assert_int_eq(c_run(bad1, out, sizeof out, H_LONG_MS), 2);
    char *bad2[] = { getenv("KN_SIMD"), "--capture", cap, "--capture-max-mb", "x", NULL };
    ck_assert_int_eq(c_run(bad2, out, sizeof out, H_LONG_MS), 2);
    char *bad3[] = { getenv("KN_SIMD"), "--command", "bogus", "--socket", d.stats, NULL };
    ck_assert_int_eq(c_run(bad3, out, sizeof out, H_LONG_MS), 1);
    ck_assert_ptr_nonnull(strstr(out, "unknown command"));
    /* a plain connect-and-read still gets the stats */
    ck_assert_double_ge(h_stat(&d, "robots.0.faults.krp.in.seen"), 60);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("capture and replay");
    TCase *tc = tcase_create("replay");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 170);
    tcase_add_test(tc, replay_reproduces_setpoints);
    tcase_add_test(tc, serve_sim_runs_controller);
    tcase_add_test(tc, capture_at_run_time_with_faults);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
