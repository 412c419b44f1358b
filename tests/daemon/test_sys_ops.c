/* System tests of kenaf-simd as a service: the watchdog when a controller
 * dies mid-motion, SIGHUP reload, SIGTERM stop with systemd notifications,
 * --check-config on bad files, simulator restarts and reconnection, a
 * simulator that stops draining its socket, malformed simulator lines,
 * the --stats client and a flood of peers. Real processes, real sockets. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "convert.h"
#include "harness.h"
#include "harness_suite.h"

static void setup(void)
{
    h_setup();
}

static const char *robots1(const char *r)
{
    static char buf[1200];
    snprintf(buf, sizeof buf, "[%s]", r);
    return buf;
}

static void wait_up(struct h_daemon *d, int robot)
{
    char path[64];
    snprintf(path, sizeof path, "robots.%d.flags.BACKEND_UP", robot);
    ck_assert_msg(h_wait_stat(d, path, 1, H_LONG_MS), "robot %d: backend not up: %s", robot,
                  h_stderr(&d->proc));
}

/* A controller process: CRAWLER(300, 300) every 20 ms until killed. */
static pid_t spawn_controller(int port)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct h_udp u;
        h_udp_open(&u, port);
        for (;;) {
            h_crawler(&u, 0, 0, 300, 300);
            h_sleep_ms(20);
        }
    }
    return pid;
}

START_TEST(watchdog_when_controller_killed)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)));
    wait_up(&d, 0);
    pid_t ctl = spawn_controller(d.port[0]);
    int i = h_wait_belts(sim.log, 0, 0.3, 0.3, H_LONG_MS, NULL);
    ck_assert_int_ge(i, 0);
    h_sleep_ms(200); /* mid-motion */
    /* the bound is the daemon's with a CPU: the time it, the stand-in and
     * this test waited for one is added (h_waits) */
    const pid_t pids[3] = { d.proc.pid, sim.proc.pid, 0 };
    struct h_waits w;
    h_waits_start(&w, pids, 3);
    kill(ctl, SIGKILL);
    uint64_t t_kill = h_now_us();
    waitpid(ctl, NULL, 0);
    struct h_cmd cmds[4096];
    int n = h_log_cmds(sim.log, cmds, 4096);
    int last_go = -1;
    for (int k = 0; k < n; k++)
        if (cmds[k].belts[0] > 0.29)
            last_go = k;
    struct h_cmd stop;
    int z = h_wait_belts(sim.log, last_go + 1, 0, 0, H_LONG_MS, &stop);
    ck_assert_msg(z > last_go, "belts never went to 0");
    double waited = h_waited_ms(&w);
    double t_stop = (double)(stop.t_us - t_kill) / 1000.0;
    ck_assert_msg(t_stop <= 600 + waited,
                  "belts 0 only %.0f ms after the controller died (%.0f ms of it waiting for a "
                  "CPU)",
                  t_stop, waited);
    ck_assert_double_eq(h_stat(&d, "robots.0.rules.watchdog_trips"), 1);
}
END_TEST

static int count_in(const char *log, const char *what)
{
    return h_log_count(log, what);
}

START_TEST(sighup_reload)
{
    struct h_standin a, b;
    struct h_daemon d;
    h_standin_start(&a, 0, "sim-a", NULL);
    h_standin_start(&b, 0, "sim-b", NULL);
    char robots[3000];
    snprintf(robots, sizeof robots, "[%s,%s]", h_standin_robot("alpha", a.port, NULL),
             h_standin_robot("bravo", b.port, NULL));
    h_daemon_start(&d, robots);
    ck_assert_int_eq(d.nrobots, 2);
    ck_assert_int_ne(d.port[0], d.port[1]);
    wait_up(&d, 0);
    wait_up(&d, 1);
    struct h_udp ua, ub;
    h_udp_open(&ua, d.port[0]);
    h_expect_ack(&ua, h_subscribe(&ua, KN_KRP_F_ACK_REQ, 100), KN_KRP_SUBSCRIBE);
    ck_assert_int_eq(count_in(a.log, "#connect"), 1);
    ck_assert_int_eq(count_in(b.log, "#connect"), 1);

    /* bravo changes, alpha does not */
    snprintf(robots, sizeof robots, "[%s,%s]", h_standin_robot("alpha", a.port, NULL),
             h_standin_robot("bravo", b.port, ",\"limits\":{\"max_speed_mm_s\":500}"));
    h_daemon_write_config(&d, robots);
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat(&d, "reloads", 1, H_LONG_MS));
    ck_assert(h_notify_seen(&d, "RELOADING=1", H_LONG_MS));
    ck_assert_int_ge(h_notify_count(&d, "READY=1"), 2);
    wait_up(&d, 1);
    ck_assert_int_eq(count_in(b.log, "#connect"), 2); /* bravo restarted */
    ck_assert_int_eq(count_in(a.log, "#connect"), 1); /* alpha kept its link */
    ck_assert_int_eq(count_in(a.log, "#disconnect"), 0);
    ck_assert_int_eq((int)h_stat(&d, "robots.0.backend.connects"), 1);
    ck_assert_int_eq((int)h_stat(&d, "robots.0.subscriptions.active"), 1); /* peers kept */
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.SUBSCRIBE"), 1);
    int port_b = (int)atoi(strrchr(h_stat_str(&d, "robots.1.listen"), ':') + 1);
    h_udp_open(&ub, port_b);
    h_hello(&ub, "x");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&ub, &m, H_LONG_MS));
    ck_assert_int_eq(m.u.hello_ack.max_speed_mm_s, 500);
    /* alpha's socket is the same one: its subscriber still gets pushes */
    ck_assert(h_udp_recv(&ua, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_STATUS);

    /* an invalid config is refused, the old one stays */
    h_write_file(d.config,
                 "{ \"robots\": [ { \"name\": \"alpha\", \"watchdog_ms\": \"fast\", "
                 "\"backend\": { \"type\": \"standin\", \"address\": \"127.0.0.1:1\" } } ] }\n");
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat(&d, "reload_failures", 1, H_LONG_MS));
    ck_assert_ptr_nonnull(strstr(h_stat_str(&d, "last_reload_error"), "$.robots[0].watchdog_ms"));
    ck_assert_ptr_nonnull(strstr(h_stderr(&d.proc), "refused"));
    ck_assert_double_eq(h_stat(&d, "reloads"), 1);
    h_hello(&ub, "x");
    ck_assert(h_udp_recv_answer(&ub, &m, H_LONG_MS));
    ck_assert_int_eq(m.u.hello_ack.max_speed_mm_s, 500);
    ck_assert_int_eq(count_in(a.log, "#connect"), 1);
    ck_assert_int_eq(count_in(b.log, "#connect"), 2);

    /* bravo removed: its simulator hears belts 0 and the link closes */
    h_daemon_write_config(&d, robots1(h_standin_robot("alpha", a.port, NULL)));
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat(&d, "reloads", 2, H_LONG_MS));
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (count_in(b.log, "#disconnect") < 2 && h_now_us() < end)
        h_sleep_ms(10);
    ck_assert_int_eq(count_in(b.log, "#disconnect"), 2);
    cJSON *s = h_stats(&d);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(s, "robots")), 1);
    cJSON_Delete(s);
    ck_assert_int_eq(count_in(a.log, "#connect"), 1);
    h_udp_close(&ua);
    h_udp_close(&ub);
}
END_TEST

START_TEST(sigterm_clean_stop)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    /* as systemd starts it: watchdog every 200 ms, stderr to the journal */
    char *env[] = { "WATCHDOG_USEC=200000", "JOURNAL_STREAM=8:4242", NULL };
    h_daemon_start_env(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)), env);
    wait_up(&d, 0);
    ck_assert(h_notify_seen(&d, "READY=1", 0));
    ck_assert(h_notify_seen(&d, "STATUS=", 0));
    uint64_t wend = h_now_us() + H_LONG_MS * 1000ull;
    while (h_notify_count(&d, "WATCHDOG=1") < 3 && h_now_us() < wend)
        h_sleep_ms(20);
    ck_assert_int_ge(h_notify_count(&d, "WATCHDOG=1"), 3); /* pinged at half the interval */
    ck_assert_msg(strncmp(h_stderr(&d.proc), "<6>", 3) == 0, "no syslog priority prefix: %s",
                  h_stderr(&d.proc));
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    h_crawler(&u, 0, 0, 300, 300);
    int i = h_wait_belts(sim.log, 0, 0.3, 0.3, H_LONG_MS, NULL);
    ck_assert_int_ge(i, 0);
    h_crawler(&u, 0, 0, 300, 300);
    h_signal(&d.proc, SIGTERM);
    int st = h_wait_exit(&d.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "kenaf-simd did not exit after SIGTERM");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status %d: %s", st,
                  h_stderr(&d.proc));
    ck_assert(h_notify_seen(&d, "STOPPING=1", 1000));
    /* the simulator's last command is belts 0, then the link closes; the
     * simulator logs the close after everything it read, so its log is
     * complete only from then on (a loaded machine may run it late) */
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (count_in(sim.log, "#disconnect") < 1 && h_now_us() < end)
        h_sleep_ms(10);
    ck_assert_int_eq(count_in(sim.log, "#disconnect"), 1);
    struct h_cmd cmds[256];
    int n = h_log_cmds(sim.log, cmds, 256);
    ck_assert_int_gt(n, i);
    ck_assert_double_eq(cmds[n - 1].belts[0], 0);
    ck_assert_double_eq(cmds[n - 1].belts[1], 0);
    ck_assert(access(d.stats, F_OK) != 0); /* stats socket removed */
    h_udp_close(&u);
}
END_TEST

static int run_simd(char *const args[], char *out, size_t outlen, char *err, size_t errlen)
{
    char *argv[8];
    int n = 0;
    argv[n++] = getenv("KN_SIMD");
    for (int i = 0; args[i] && n < 7; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct h_proc p;
    h_spawn(&p, argv, NULL, "cli.stderr");
    size_t used = 0;
    out[0] = '\0';
    char line[4096];
    while (h_read_line(&p, line, sizeof line, H_LONG_MS)) {
        int w = snprintf(out + used, outlen - used, "%s\n", line);
        if (w > 0 && (size_t)w < outlen - used)
            used += (size_t)w;
    }
    int st = h_wait_exit(&p, H_LONG_MS);
    ck_assert_int_ne(st, -1);
    snprintf(err, errlen, "%s", h_stderr(&p));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

START_TEST(check_config_cli)
{
    static char out[65536], err[32768];
    const char *good = h_path("good.json");
    h_write_file(good, "{\"robots\":[{\"name\":\"r1\",\"listen\":\"127.0.0.1:9999\","
                       "\"backend\":{\"type\":\"standin\",\"address\":\"127.0.0.1:7000\"}}]}");
    char *a1[] = { "--check-config", "--config", (char *)good, NULL };
    ck_assert_int_eq(run_simd(a1, out, sizeof out, err, sizeof err), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "robots"), 0), "name")
            ->valuestring,
        "r1");
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "robots"), 0), "watchdog_ms")
            ->valueint,
        500); /* defaults shown */
    cJSON_Delete(j);

    struct {
        const char *text;
        const char *want;
    } bad[] = {
        { "{\"robots\":[{\"name\":\"r1\",\"watchdog_ms\":\"fast\",\"backend\":{\"type\":\"standin\","
          "\"address\":\"127.0.0.1:7000\"}}]}",
          "$.robots[0].watchdog_ms" },
        { "{\"robots\":[{\"name\":\"r1\",\"colour\":\"red\",\"backend\":{\"type\":\"standin\","
          "\"address\":\"127.0.0.1:7000\"}}]}",
          "$.robots[0].colour" },
        { "{\"robots\":[{\"name\":\"r1\",\"backend\":{\"type\":\"usarsym\"}}]}",
          "$.robots[0].backend.type" },
        { "{\"robots\":[{\"name\":\"r1\",\"listen\":\"127.0.0.1:70000\",\"backend\":"
          "{\"type\":\"standin\",\"address\":\"127.0.0.1:7000\"}}]}",
          "$.robots[0].listen" },
        { "{\"robots\":[{\"name\":\"r1\"", "bad.json" },
    };
    /* h_path returns a shared buffer that the next spawn reuses: copy it */
    char badp[4096];
    snprintf(badp, sizeof badp, "%s", h_path("bad.json"));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h_write_file(badp, bad[i].text);
        char *a2[] = { "--check-config", "--config", (char *)badp, NULL };
        ck_assert_int_eq(run_simd(a2, out, sizeof out, err, sizeof err), 1);
        ck_assert_msg(strstr(err, badp) != NULL, "case %zu: no file name in: %s", i, err);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "case %zu: no %s in: %s", i, bad[i].want,
                      err);
        ck_assert_str_eq(out, "");
    }
    /* every backend kind the config knows is built into this kenaf-simd */
    static const char *const kinds[] = {
        "{\"type\":\"engine\"}",
        "{\"type\":\"usarsim\"}",
        "{\"type\":\"gazebo\"}",
        "{\"type\":\"standin\",\"address\":\"127.0.0.1:7000\"}",
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"robots\":[{\"name\":\"r1\",\"backend\":%s}]}", kinds[i]);
        h_write_file(badp, text);
        char *a3[] = { "--check-config", "--config", (char *)badp, NULL };
        ck_assert_msg(run_simd(a3, out, sizeof out, err, sizeof err) == 0, "%s: %s", kinds[i], err);
    }
    /* a missing file */
    const char *none = h_path("missing.json");
    char *a4[] = { "--check-config", "--config", (char *)none, NULL };
    ck_assert_int_eq(run_simd(a4, out, sizeof out, err, sizeof err), 1);
    ck_assert_ptr_nonnull(strstr(err, none));
    /* usage errors */
    char *a5[] = { "--bogus", NULL };
    ck_assert_int_eq(run_simd(a5, out, sizeof out, err, sizeof err), 2);
    char *a6[] = { "--version", NULL };
    ck_assert_int_eq(run_simd(a6, out, sizeof out, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(out, "kenaf-simd"));
}
END_TEST

START_TEST(bind_failure_exits_1)
{
    static char out[4096], err[32768];
    struct h_udp taken;
    h_udp_open(&taken, 9); /* only to own a port */
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    ck_assert_int_eq(getsockname(taken.fd, (struct sockaddr *)&a, &al), 0);
    int port = ntohs(a.sin_port);
    char text[512];
    snprintf(text, sizeof text,
             "{\"robots\":[{\"name\":\"r1\",\"listen\":\"127.0.0.1:%d\",\"backend\":"
             "{\"type\":\"standin\",\"address\":\"127.0.0.1:9\"}}]}",
             port);
    const char *cfg = h_path("busy.json");
    h_write_file(cfg, text);
    char *args[] = { "--config", (char *)cfg, NULL };
    ck_assert_int_eq(run_simd(args, out, sizeof out, err, sizeof err), 1);
    char want[64];
    snprintf(want, sizeof want, "cannot bind UDP 127.0.0.1:%d", port);
    ck_assert_msg(strstr(err, want) != NULL, "no bind error in: %s", err);
    h_udp_close(&taken);
}
END_TEST

START_TEST(stats_client_mode)
{
    static char out[1 << 17], err[32768];
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)));
    char *a1[] = { "--stats", "--config", d.config, NULL };
    ck_assert_int_eq(run_simd(a1, out, sizeof out, err, sizeof err), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %.200s", out);
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "robots"), 0), "name")
            ->valuestring,
        "kenaf");
    cJSON_Delete(j);
    char *a2[] = { "--stats", "--socket", d.stats, NULL };
    ck_assert_int_eq(run_simd(a2, out, sizeof out, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"latency_us\""));
    char *a3[] = { "--stats", "--socket", (char *)h_path("nobody.sock"), NULL };
    ck_assert_int_eq(run_simd(a3, out, sizeof out, err, sizeof err), 1);
    ck_assert_ptr_nonnull(strstr(err, "nobody.sock"));
}
END_TEST

START_TEST(simulator_restart_reconnects)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "sim-1", NULL);
    int port = sim.port;
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", port, NULL)));
    wait_up(&d, 0);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    int32_t t[4] = { 3000, 0, 0, 0 };
    h_flipper(&u, 0, 0, 0x01, t);
    h_crawler(&u, 0, 0, 200, 200);
    ck_assert_int_ge(h_wait_belts(sim.log, 0, 0.2, 0.2, H_LONG_MS, NULL), 0);

    h_standin_kill(&sim);
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    struct kn_krp_status s;
    do {
        h_crawler(&u, 0, 0, 200, 200);
        s = h_status_any(&u);
        h_sleep_ms(20);
    } while ((s.flags & KN_KRP_ST_BACKEND_UP) && h_now_us() < end);
    ck_assert(!(s.flags & KN_KRP_ST_BACKEND_UP));
    /* the back-off doubles from 0.05 s up to reconnect_max_s (0.3 s) and
     * no further: read from the daemon, not timed, so a slow machine
     * only takes longer to get there */
    double wait_s = 0;
    end = h_now_us() + H_LONG_MS * 1000ull;
    while (wait_s < 0.3 && h_now_us() < end) {
        wait_s = h_stat(&d, "robots.0.backend.backoff_s");
        ck_assert_double_le(wait_s, 0.3);
        h_sleep_ms(20);
    }
    ck_assert_double_eq(wait_s, 0.3);
    /* 0.05 s after the disconnect; 0.1, 0.2 and 0.3 s each after a refusal */
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.connect_failures"), 3);

    struct h_standin again;
    h_standin_start(&again, port, "sim-2", NULL);
    uint64_t t_listen = h_now_us();
    /* attempts made once the simulator listens succeed: at most the one
     * under way while it started up failed */
    double failed_at_listen = h_stat(&d, "robots.0.backend.connect_failures");
    do {
        h_crawler(&u, 0, 0, 200, 200);
        s = h_status_any(&u);
        if (!(s.flags & KN_KRP_ST_BACKEND_UP))
            h_sleep_ms(10);
    } while (!(s.flags & KN_KRP_ST_BACKEND_UP) && h_now_us() < t_listen + H_LONG_MS * 1000ull);
    ck_assert(s.flags & KN_KRP_ST_BACKEND_UP);
    printf("reconnected %.2f s after the simulator listened (back-off cap 0.3 s)\n",
           (double)(h_now_us() - t_listen) / 1e6);
    ck_assert_double_le(h_stat(&d, "robots.0.backend.connect_failures"), failed_at_listen + 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.reconnects"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.disconnects"), 1);
    /* the set-points were applied again, flipper included; the simulator
     * logs them once it has read them */
    ck_assert_int_ge(h_wait_belts(again.log, 0, 0.2, 0.2, H_LONG_MS, NULL), 0);
    struct h_cmd cmds[64];
    int n = h_log_cmds(again.log, cmds, 64);
    ck_assert_int_ge(n, 1);
    ck_assert(cmds[0].reapply);
    ck_assert_double_eq_tol(cmds[0].belts[0], 0.2, 1e-9);
    ck_assert_uint_eq(cmds[0].fmask & 0x01, 0x01);
    ck_assert_double_eq_tol(cmds[0].flippers[0], kn_conv_cdeg_to_rad(3000), 1e-9);
    h_udp_close(&u);
}
END_TEST

START_TEST(simulator_not_draining)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)));
    wait_up(&d, 0);
    h_signal(&sim.proc, SIGUSR1);
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (count_in(sim.log, "#paused") < 1 && h_now_us() < end)
        h_sleep_ms(5);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    /* Flood until one stats snapshot shows the queue stuck for 100 ms
     * with commands coalesced. The kernel may still take a little data
     * now and then (it compacts its buffers), so keep sending meanwhile. */
    int sent = 0;
    bool stalled = false;
    while (!stalled && sent < 400000 && h_now_us() < end) {
        for (int i = 0; i < 500; i++, sent++)
            h_crawler(&u, 0, 0, 100 + sent % 500, 100);
        h_sleep_ms(5);
        cJSON *js = h_stats(&d);
        cJSON *b = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(js, "robots"), 0),
                                       "backend");
        cJSON *stall = cJSON_GetObjectItem(b, "stall");
        double coalesced =
            cJSON_GetObjectItem(cJSON_GetObjectItem(b, "commands"), "coalesced")->valuedouble;
        if (cJSON_IsTrue(cJSON_GetObjectItem(stall, "stalled")) && coalesced >= 10) {
            stalled = true;
            ck_assert_double_gt(cJSON_GetObjectItem(stall, "queued_bytes")->valuedouble, 0);
            ck_assert_double_ge(cJSON_GetObjectItem(stall, "stalled_ms")->valuedouble, 100);
        }
        cJSON_Delete(js);
    }
    ck_assert_msg(stalled, "no stall seen after %d commands", sent);
    ck_assert_double_ge(h_stat(&d, "robots.0.drops.queue_coalesced"), 10);
    h_crawler(&u, 0, 0, 777, 777);
    ck_assert(h_status(&u).flags & KN_KRP_ST_BACKEND_UP); /* still answering at once */
    /* resume: the newest set-point reaches the simulator */
    h_signal(&sim.proc, SIGUSR2);
    struct h_cmd found;
    int k = -1;
    end = h_now_us() + H_LONG_MS * 1000ull;
    while (k < 0 && h_now_us() < end) {
        h_crawler(&u, 0, 0, 777, 777);
        k = h_wait_belts(sim.log, 0, 0.777, 0.777, 100, &found);
    }
    ck_assert_int_ge(k, 0);
    end = h_now_us() + H_LONG_MS * 1000ull;
    while (h_stat(&d, "robots.0.backend.stall.stalled") != 0 && h_now_us() < end)
        h_sleep_ms(20);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.stall.stalled"), 0);
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.stall.stalls"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.connects"), 1);
    h_udp_close(&u);
}
END_TEST

START_TEST(malformed_simulator_lines)
{
    struct h_standin sim;
    struct h_daemon d;
    const char *extra[] = { "--garbage", NULL };
    h_standin_start(&sim, 0, "standin", extra);
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)));
    wait_up(&d, 0);
    ck_assert(h_wait_stat(&d, "robots.0.backend.standin.malformed", 4, H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.backend.standin.overlong", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.backend.standin.ignored", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&d, "robots.0.backend.standin.states", 5, H_LONG_MS));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.connects"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.disconnects"), 0);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_status s = h_status_any(&u);
    ck_assert_uint_eq(s.flags, KN_KRP_ST_SIMULATED | KN_KRP_ST_BACKEND_UP);
    h_udp_close(&u);
}
END_TEST

START_TEST(peer_flood_bounded)
{
    struct h_standin sim;
    struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&d, robots1(h_standin_robot("kenaf", sim.port, NULL)));
    enum { N = 300, BURST = 30 };
    static struct h_udp u[N];
    /* bursts small enough for the daemon's socket buffer even when the
     * daemon runs slowly (under valgrind): a datagram the kernel drops
     * never reaches the peer table */
    for (int b = 0; b < N; b += BURST) {
        for (int i = b; i < b + BURST; i++) {
            h_udp_open(&u[i], d.port[0]);
            h_simple(&u[i], 0, KN_KRP_STATUS_REQ, 0);
        }
        for (int i = b; i < b + BURST; i++) {
            struct kn_krp_msg m;
            ck_assert_msg(h_udp_recv(&u[i], &m, H_LONG_MS), "peer %d got no STATUS", i);
            ck_assert_uint_eq(m.h.type, KN_KRP_STATUS);
        }
    }
    ck_assert_double_eq(h_stat(&d, "robots.0.peers.in_use"), 256);
    ck_assert_double_eq(h_stat(&d, "robots.0.peers.capacity"), 256);
    ck_assert_double_eq(h_stat(&d, "robots.0.drops.peer_table_full"), N - 256);
    /* one of the overflow peers may not subscribe (no state to hold it) */
    uint32_t seq = h_subscribe(&u[N - 1], KN_KRP_F_ACK_REQ, 100);
    h_expect_error(&u[N - 1], KN_KRP_ERR_BUSY, seq, KN_KRP_SUBSCRIBE);
    cJSON *s = h_stats(&d);
    cJSON *recent = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "robots"), 0), "peers"),
        "recent");
    ck_assert_int_le(cJSON_GetArraySize(recent), 32);
    cJSON_Delete(s);
    for (int i = 0; i < N; i++)
        h_udp_close(&u[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kenaf-simd operation");
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, setup, h_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, watchdog_when_controller_killed);
    tcase_add_test(tc, sighup_reload);
    tcase_add_test(tc, sigterm_clean_stop);
    tcase_add_test(tc, check_config_cli);
    tcase_add_test(tc, bind_failure_exits_1);
    tcase_add_test(tc, stats_client_mode);
    tcase_add_test(tc, simulator_restart_reconnects);
    tcase_add_test(tc, simulator_not_draining);
    tcase_add_test(tc, malformed_simulator_lines);
    tcase_add_test(tc, peer_flood_bounded);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
