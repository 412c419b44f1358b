/* System tests of fault injection in kenaf-simd, with real processes:
 *  - an unchanged controller (examples/square through kenaf-sim-run)
 *    completes its square with 10 % of the KRP/1 datagrams dropped in each
 *    direction, and the stats count the drops;
 *  - the same seed and the same traffic drop the same datagrams, another
 *    seed other ones;
 *  - faults set at run time (`kenaf-simd --command "faults ..."`) on both
 *    links: drop everything, then nothing; duplicate, delay and drop
 *    whole commands toward the simulator;
 *  - with "fault_injection": false the command is refused and counted.
 * Process records are static: the harness keeps pointers to them until
 * teardown. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap_harness.h"
#include "harness_suite.h"

/* |k - n p| within 5 standard deviations */
static void assert_binomial(double k, double n, double p, const char *what)
{
    double sd = sqrt(n * p * (1 - p));
    ck_assert_msg(fabs(k - n * p) <= 5 * sd + 1e-9, "%s: %.0f of %.0f, expected %.1f +- %.1f", what,
                  k, n, n * p, 5 * sd);
}

START_TEST(square_completes_with_krp_drop)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(
        robots, sizeof robots, "[%s]",
        h_standin_robot("kenaf", sim.port, ",\"faults\":{\"krp\":{\"drop\":0.1,\"seed\":42}}"));
    c_daemon_start(&d, "d", robots, NULL);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.drop"), 0.1);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.seed"), 42);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.active"), 0);

    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d.port[0]);
    const char *run = getenv("KN_SIM_RUN"), *square = getenv("KN_SQUARE");
    ck_assert_msg(run && square, "KN_SIM_RUN / KN_SQUARE not set");
    char *argv[] = { "/bin/sh", (char *)run, "--robot", robot, "--", (char *)square, NULL };
    static char out[65536];
    int rc = c_run(argv, out, sizeof out, 90000);
    ck_assert_msg(rc == 0, "square failed with 10 %% drop (%d):\n%s", rc, out);
    ck_assert_ptr_nonnull(strstr(out, "SIMULATED"));

    double in_seen = h_stat(&d, "robots.0.faults.krp.in.seen");
    double in_drop = h_stat(&d, "robots.0.faults.krp.in.dropped");
    double out_seen = h_stat(&d, "robots.0.faults.krp.out.seen");
    double out_drop = h_stat(&d, "robots.0.faults.krp.out.dropped");
    ck_assert_double_gt(in_seen, 100);
    ck_assert_double_gt(out_seen, 100);
    ck_assert_double_gt(in_drop, 0);
    ck_assert_double_gt(out_drop, 0);
    assert_binomial(in_drop, in_seen, 0.1, "KRP/1 datagrams in dropped");
    assert_binomial(out_drop, out_seen, 0.1, "KRP/1 datagrams out dropped");
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.dropped"), in_drop + out_drop);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.in.passed"), in_seen - in_drop);
    /* what was not dropped reached the rules: every datagram in counted */
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.total"), in_seen - in_drop);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.out.seen"), 0); /* sim link untouched */
}
END_TEST

/* 200 STATUS_REQs with distinct seqs; returns a bitmap of the answered
 * ones. It reads until it has every answer the daemon let through (its
 * counters, once it has seen all 200), not until a pause: a daemon that
 * waits for its CPU only answers later. */
static void answered_set(struct h_daemon *d, uint8_t answered[200])
{
    struct h_udp u;
    h_udp_open(&u, d->port[0]);
    for (uint32_t s = 1; s <= 200; s++) {
        h_simple(&u, s, KN_KRP_STATUS_REQ, 0);
        h_sleep_ms(2);
    }
    ck_assert(h_wait_stat_eq(d, "robots.0.faults.krp.in.seen", 200, H_LONG_MS));
    int due = (int)h_stat(d, "robots.0.faults.krp.out.passed"), got = 0;
    memset(answered, 0, 200);
    struct kn_krp_msg m;
    while (got < due && h_udp_recv(&u, &m, H_LONG_MS))
        if (m.h.type == KN_KRP_STATUS && m.u.status.req_seq >= 1 && m.u.status.req_seq <= 200) {
            answered[m.u.status.req_seq - 1] = 1;
            got++;
        }
    ck_assert_int_eq(got, due);
    h_udp_close(&u);
}

START_TEST(same_seed_same_faults)
{
    static struct h_standin sim;
    h_standin_start(&sim, 0, "standin", NULL);
    const char *names[3] = { "a", "b", "c" };
    const int seeds[3] = { 99, 99, 100 };
    static uint8_t got[3][200];
    /* static: the harness keeps pointers to its children until teardown */
    static struct h_daemon daemons[3];
    for (int i = 0; i < 3; i++) {
        struct h_daemon *d = &daemons[i];
        char robots[1200], f[128];
        snprintf(f, sizeof f, ",\"faults\":{\"krp\":{\"drop\":0.2,\"seed\":%d}}", seeds[i]);
        snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, f));
        c_daemon_start(d, names[i], robots, NULL);
        h_wait_backend_fresh(d, 0, H_LONG_MS);
        answered_set(d, got[i]);
        int n = 0;
        for (int k = 0; k < 200; k++)
            n += got[i][k];
        /* answered: neither the request (in) nor the answer (out) dropped */
        assert_binomial(n, 200, 0.8 * 0.8, "answered");
        ck_assert_double_eq(h_stat(d, "robots.0.faults.krp.in.seen"), 200);
        h_signal(&d->proc, SIGTERM);
        ck_assert_int_ne(h_wait_exit(&d->proc, H_LONG_MS), -1);
    }
    ck_assert_msg(memcmp(got[0], got[1], 200) == 0, "the same seed dropped other datagrams");
    ck_assert_msg(memcmp(got[0], got[2], 200) != 0, "another seed dropped the same datagrams");
}
END_TEST

START_TEST(faults_at_run_time)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    c_daemon_start(&d, "d", robots, NULL);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.active"), 0);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    (void)h_status(&u);

    /* KRP/1: everything dropped, then nothing */
    const char *ans = c_command(&d, "faults kenaf krp drop=1 seed=5");
    ck_assert_ptr_nonnull(strstr(ans, "\"drop\":1"));
    for (int i = 0; i < 5; i++)
        h_simple(&u, 0, KN_KRP_STATUS_REQ, 0);
    ck_assert(h_wait_stat_eq(&d, "robots.0.faults.krp.in.dropped", 5, H_LONG_MS));
    struct kn_krp_msg m;
    ck_assert_msg(!h_udp_recv(&u, &m, 400), "an answer got through drop=1");
    c_command(&d, "faults kenaf krp off");
    (void)h_status(&u);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.active"), 0);

    /* simulator link: each command twice */
    c_command(&d, "faults kenaf sim duplicate=1");
    struct h_cmd cmds[4096];
    int n0 = h_log_cmds(sim.log, cmds, 4096);
    h_expect_ack(&u, h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 120, 130), KN_KRP_CRAWLER);
    int i1 = h_wait_belts(sim.log, n0, 0.12, 0.13, H_LONG_MS, NULL);
    ck_assert_int_ge(i1, 0);
    int i2 = h_wait_belts(sim.log, i1 + 1, 0.12, 0.13, H_LONG_MS, NULL);
    ck_assert_int_eq(i2, i1 + 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.out.duplicated"), 1);

    /* delayed: never sooner than asked */
    c_command(&d, "faults kenaf sim delay_ms=200 duplicate=0");
    uint64_t t0 = h_now_us();
    h_crawler(&u, 0, 0, 140, 150);
    struct h_cmd late;
    int i3 = h_wait_belts(sim.log, i2 + 1, 0.14, 0.15, H_LONG_MS, &late);
    ck_assert_int_ge(i3, 0);
    ck_assert_msg(late.t_us >= t0 + 200000, "command arrived after %.1f ms",
                  (double)(late.t_us - t0) / 1000.0);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.out.delayed"), 1);

    /* dropped: the robot still answers, the simulator hears nothing */
    c_command(&d, "faults kenaf sim off drop=1");
    int n1 = h_log_cmds(sim.log, cmds, 4096);
    h_expect_ack(&u, h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 160, 170), KN_KRP_CRAWLER);
    h_expect_ack(&u, h_simple(&u, 0, KN_KRP_STOP, KN_KRP_F_ACK_REQ), KN_KRP_STOP);
    h_sleep_ms(400);
    ck_assert_int_eq(h_log_cmds(sim.log, cmds, 4096), n1);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.out.dropped"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.sim.dropped"), 2);

    /* a stopping daemon's last command, belts 0, bypasses the faults */
    h_crawler(&u, 0, 0, 180, 190);
    h_sleep_ms(100);
    h_signal(&d.proc, SIGTERM);
    ck_assert_int_ne(h_wait_exit(&d.proc, H_LONG_MS), -1);
    ck_assert_int_ge(h_wait_belts(sim.log, n1, 0, 0, H_LONG_MS, NULL), n1);
    h_udp_close(&u);
}
END_TEST

/* --check-config on a config of this text fails; its stderr. */
static const char *check_config_fails(const char *name, const char *json)
{
    static char out[8192];
    const char *cfg = h_path(name);
    h_write_file(cfg, json);
    char *argv[] = { getenv("KN_SIMD"), "--check-config", "--config", (char *)cfg, NULL };
    ck_assert_int_eq(c_run(argv, out, sizeof out, H_LONG_MS), 1);
    return h_file_text(h_path("run.stderr")); /* where c_run puts the child's stderr */
}

START_TEST(bad_fault_commands_and_config)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    c_daemon_start(&d, "d", robots, NULL);
    static char out[8192];
    static const char *const bad[] = {
        "faults nosuch krp drop=1", "faults kenaf udp drop=1",    "faults kenaf krp drop=1.5",
        "faults kenaf krp drop",    "faults kenaf sim latency=3",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {
            getenv("KN_SIMD"), "--command", (char *)bad[i], "--socket", d.stats, NULL
        };
        ck_assert_msg(c_run(argv, out, sizeof out, H_LONG_MS) == 1, "accepted: %s", bad[i]);
        ck_assert_ptr_nonnull(strstr(out, "\"ok\":false"));
    }
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.active"), 0);
    /* the config is checked too */
    const char *e = check_config_fails(
        "bad.json", "{\"robots\":[{\"name\":\"r\",\"faults\":{\"krp\":{\"drop\":2,\"seed\":-1},"
                    "\"sim\":{\"jitter\":5}},\"backend\":{\"type\":\"standin\","
                    "\"address\":\"127.0.0.1:7000\"}}]}");
    ck_assert_msg(strstr(e, "$.robots[0].faults.krp.drop") != NULL, "%s", e);
    ck_assert_msg(strstr(e, "$.robots[0].faults.krp.seed") != NULL, "%s", e);
    ck_assert_msg(strstr(e, "$.robots[0].faults.sim.jitter") != NULL, "%s", e);
}
END_TEST

/* "fault_injection": false (the packaged config): the faults command is
 * refused with a reply that says why, and counted; a faults section is a
 * config error. */
START_TEST(fault_injection_disabled)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200], top[600];
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    snprintf(top, sizeof top,
             "\"ready_timeout_s\": 0, \"capture_dir\": \"%s\", "
             "\"fault_injection\": false",
             h_path(""));
    h_daemon_spawn(&d, "off", top, robots, NULL, NULL, true);
    h_daemon_ready(&d);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.enabled"), 0);
    static char out[8192];
    for (int i = 0; i < 2; i++) {
        char *argv[] = { getenv("KN_SIMD"), "--command", "faults kenaf krp drop=1",
                         "--socket",        d.stats,     NULL };
        ck_assert_int_eq(c_run(argv, out, sizeof out, H_LONG_MS), 1);
        ck_assert_msg(strstr(out, "\"ok\":false") && strstr(out, "fault injection is disabled"),
                      "%s", out);
    }
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.commands_refused"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.faults.krp.drop"), 0);
    /* the robot still answers: nothing was dropped */
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    (void)h_status(&u);
    h_udp_close(&u);

    const char *e = check_config_fails(
        "off.json", "{\"fault_injection\": false, \"robots\":[{\"name\":\"r\",\"faults\":"
                    "{\"krp\":{\"drop\":0.1}},\"backend\":{\"type\":\"standin\","
                    "\"address\":\"127.0.0.1:7000\"}}]}");
    ck_assert_msg(strstr(e, "$.robots[0].faults: expected no faults section, since "
                            "\"fault_injection\" is false, got one"),
                  "%s", e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault injection in kenaf-simd");
    TCase *tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, square_completes_with_krp_drop);
    tcase_add_test(tc, same_seed_same_faults);
    tcase_add_test(tc, faults_at_run_time);
    tcase_add_test(tc, bad_fault_commands_and_config);
    tcase_add_test(tc, fault_injection_disabled);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
