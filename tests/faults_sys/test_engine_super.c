/* Supervision of the spawned engine, and the engine's own output, with
 * real processes and sockets:
 * - "log-full": kenaf-engine's stderr is a pipe nobody reads (as when
 *   kenaf-simd is stopped) and it logs far more than the pipe holds; it
 *   must go on simulating and answering, count what it dropped and say
 *   so in the first line that gets through once the pipe drains;
 * - "daemon-stall": kenaf-simd itself stopped for 5 s (SIGSTOP, SIGCONT),
 *   longer than engine.silent_restart_s and stale_ms: the healthy engine
 *   must not be killed, the link neither reconnected nor called silent,
 *   and the robot must drive after;
 * - "link-cut": the simulator link cut for 4.5 s (iptables in a network
 *   namespace of the test's own) while the robot drives: the engine's
 *   dead-man brakes the robot, the engine must not be restarted, and
 *   after the cut the robot must be where the engine braked it, not
 *   back where kenaf-simd last heard of it before the cut;
 * - "link-blip": the link cut for 1 s while the controller drives on at
 *   one speed, kenaf-simd never calling the link silent: the engine's
 *   dead-man brakes the robot, and once the link is back the robot must
 *   drive again on the same CRAWLERs. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "harness_net.h"

#define PROC "robots.0.backend.engine.process."
#define STALL_MS 5000 /* the daemon's stall: longer than silent_restart_s */
#define CUT_MS 4500   /* the link cut: longer than silent_restart_s */
#define BLIP_MS 1000  /* the short cut: twice the dead-man's 0.5 s (watchdog_ms) */
#define SPEED_MM_S 200

static struct h_daemon d;
static pid_t engine_pid, stopped_pid;

static void teardown(void)
{
    if (stopped_pid > 0)
        kill(stopped_pid, SIGCONT); /* a stopped daemon cannot exit */
    if (engine_pid > 0)
        kill(engine_pid, SIGKILL);
    if (engine_pid > 0)
        waitpid(engine_pid, NULL, 0);
    engine_pid = stopped_pid = 0;
    h_teardown();
}

/* ---- raw KENAF {Cmd Stats} ------------------------------------------------ */

/* One Stats round trip on a fresh connection; the reply line in buf.
 * False when no reply came within timeout_ms. */
static bool engine_stats(int port, char *buf, size_t len, int timeout_ms)
{
    int fd = h_tcp_connect(port);
    if (fd < 0)
        return false;
    const char req[] = "KENAF {Cmd Stats}\r\n";
    h_write_all(fd, req, sizeof req - 1);
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    size_t n = 0;
    bool got = false;
    while (!got && n < len - 1 && h_wait_readable(fd, end)) {
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
        /* the first line is NFO; the reply is the KENAF line */
        char *k = strstr(buf, "KENAF {Cmd Stats}");
        if (k && strchr(k, '\n')) {
            memmove(buf, k, strlen(k) + 1);
            got = true;
        }
    }
    close(fd);
    return got;
}

/* {Key value} of a reply, as a number; fails the test when absent. */
static double kenaf_num(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "{%s ", key);
    const char *p = strstr(line, pat);
    ck_assert_msg(p != NULL, "no {%s} in %s", key, line);
    return strtod(p + strlen(pat), NULL);
}

/* ---- log-full ----------------------------------------------------------- */

static int pipe_fill(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

START_TEST(log_full)
{
    const char *exe = getenv("KN_ENGINE");
    ck_assert_msg(exe != NULL, "KN_ENGINE not set");
    int out[2], err[2];
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        execl(exe, exe, "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    engine_pid = pid;
    close(out[1]);
    close(err[1]);
    /* the PORT line; stderr is never read from here until the end */
    char line[128] = "";
    size_t n = 0;
    uint64_t end = h_now_us() + 3ull * H_LONG_MS * 1000u;
    while (!strchr(line, '\n') && n < sizeof line - 1 && h_wait_readable(out[0], end)) {
        ssize_t r = read(out[0], line + n, sizeof line - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        line[n] = '\0';
    }
    int port = 0;
    ck_assert_msg(sscanf(line, "PORT %d", &port) == 1, "no PORT line: %s", line);
    int cap = fcntl(err[0], F_GETPIPE_SZ);
    ck_assert_int_gt(cap, 0);

    /* each connection logs its arrival, its bad line and its end: go on
     * until the pipe is full (less than a line's room left: a line goes
     * in whole or not at all), and 20 connections more (fewer than the
     * listen backlog, so a blocked engine cannot block us) */
    int conns = 0, after_full = 0;
    end = h_now_us() + 3ull * H_LONG_MS * 1000u;
    while (after_full < 20 && h_now_us() < end) {
        int fd = h_tcp_connect(port);
        ck_assert_int_ge(fd, 0);
        const char bad[] = "NOT-A-COMMAND {\r\n";
        h_write_all(fd, bad, sizeof bad - 1);
        close(fd);
        conns++;
        if (pipe_fill(err[0]) >= cap - 1024)
            after_full++;
        else
            h_sleep_ms(1);
    }
    ck_assert_msg(after_full == 20,
                  "the log pipe (%d bytes) never filled: %d bytes after %d "
                  "connections",
                  cap, pipe_fill(err[0]), conns);
    int full = pipe_fill(err[0]);

    /* still serving, and the world's clock runs */
    char a[4096], b[4096];
    ck_assert_msg(engine_stats(port, a, sizeof a, H_LONG_MS),
                  "no answer to Stats with its log pipe full (%d bytes waiting)", full);
    h_sleep_ms(500);
    ck_assert_msg(engine_stats(port, b, sizeof b, H_LONG_MS), "no second answer to Stats");
    double t0 = kenaf_num(a, "Time"), t1 = kenaf_num(b, "Time");
    double dropped = kenaf_num(b, "LogDropped"), bytes = kenaf_num(b, "LogDroppedBytes");
    f_figure("engine-super-log-full",
             "log pipe of %d bytes full after %d connections; the "
             "engine answered Stats and its clock ran %.3f s in 0.5 s; %.0f log lines (%.0f "
             "bytes) dropped and counted",
             cap, conns, t1 - t0, dropped, bytes);
    ck_assert_msg(t1 - t0 >= 0.2, "simulation time went from %.4f to %.4f in 0.5 s", t0, t1);
    ck_assert_msg(dropped >= 20, "only %.0f log lines counted as dropped", dropped);
    ck_assert_double_gt(bytes, dropped);

    /* drain the pipe; the next line that gets through reports the loss */
    char chunk[65536];
    int fl = fcntl(err[0], F_GETFL);
    fcntl(err[0], F_SETFL, fl | O_NONBLOCK);
    while (read(err[0], chunk, sizeof chunk) > 0) {
    }
    fcntl(err[0], F_SETFL, fl);
    int fd = h_tcp_connect(port);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static char seen[65536];
    n = 0;
    seen[0] = '\0';
    end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    while (!strstr(seen, "dropped: nobody read the log") && n < sizeof seen - 1 &&
           h_wait_readable(err[0], end)) {
        ssize_t r = read(err[0], seen + n, sizeof seen - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        seen[n] = '\0';
    }
    ck_assert_msg(strstr(seen, "log lines") && strstr(seen, "dropped: nobody read the log"),
                  "no report of the dropped lines after the pipe drained: %s", seen);
    close(out[0]);
    close(err[0]);
}
END_TEST

/* ---- kenaf-simd with a spawned engine ------------------------------------ */

static void start_daemon_stale(struct h_udp *u, int stale_ms)
{
    char robots[256];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{"
             "\"type\":\"engine\",\"stale_ms\":%d,\"engine\":{\"silent_restart_s\":3}}}]",
             stale_ms);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, 3 * H_LONG_MS);
    engine_pid = (pid_t)h_stat(&d, PROC "pid");
    ck_assert_int_gt(engine_pid, 0);
    h_udp_open(u, d.port[0]);
    (void)h_hello(u, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(u, &m, H_LONG_MS));
}

static void start_daemon(struct h_udp *u)
{
    start_daemon_stale(u, 500);
}

/* Drives at SPEED_MM_S until x has grown by at least mm; returns the
 * last STATUS (still moving). */
static struct kn_krp_status drive(struct h_udp *u, int mm)
{
    struct kn_krp_status s = h_status_any(u);
    int32_t x0 = s.pos_mm[0];
    uint64_t end = h_now_us() + 3ull * H_LONG_MS * 1000u;
    do {
        h_crawler(u, 0, 0, SPEED_MM_S, SPEED_MM_S);
        h_sleep_ms(50);
        s = h_status_any(u);
    } while ((s.pos_mm[0] < x0 + mm || s.crawler_speed_mm_s[0] < SPEED_MM_S / 2) &&
             h_now_us() < end);
    ck_assert_msg(s.pos_mm[0] >= x0 + mm, "drove only from %d to %d mm", x0, s.pos_mm[0]);
    return s;
}

static bool fresh(const struct kn_krp_status *s, void *arg)
{
    (void)arg;
    return (s->flags & KN_KRP_ST_BACKEND_UP) && !(s->flags & KN_KRP_ST_STALE);
}

/* Fresh, and the pose unchanged over 300 ms: the robot at rest. */
static struct kn_krp_status at_rest(struct h_udp *u)
{
    struct f_st st;
    ck_assert_msg(f_status_until(u, fresh, NULL, 20, 4 * H_LONG_MS, &st),
                  "the simulator never came back: %s", h_stderr(&d.proc));
    struct kn_krp_status a = st.s, b;
    uint64_t end = h_now_us() + 2ull * H_LONG_MS * 1000u;
    for (;;) {
        h_sleep_ms(300);
        b = h_status_any(u);
        if ((b.flags & KN_KRP_ST_BACKEND_UP) && abs(b.pos_mm[0] - a.pos_mm[0]) <= 1 &&
            abs(b.pos_mm[1] - a.pos_mm[1]) <= 1)
            return b;
        ck_assert_msg(h_now_us() < end, "the robot never came to rest (%d -> %d mm)", a.pos_mm[0],
                      b.pos_mm[0]);
        a = b;
    }
}

/* Nothing restarted or reconnected: the same engine and connection. */
static void same_engine(pid_t pid)
{
    ck_assert_int_eq((pid_t)h_stat(&d, PROC "pid"), pid);
    ck_assert_double_eq(h_stat(&d, PROC "silent_kills"), 0);
    ck_assert_double_eq(h_stat(&d, PROC "restarts"), 0);
    ck_assert_double_eq(h_stat(&d, PROC "spawns"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.disconnects"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.reconnects"), 0);
    ck_assert_msg(strstr(h_stderr(&d.proc), "killing it to restart it") == NULL, "%s",
                  h_stderr(&d.proc));
}

START_TEST(daemon_stall)
{
    struct h_udp u;
    start_daemon(&u);
    pid_t pid = engine_pid;
    drive(&u, 100);
    h_crawler(&u, 0, 0, 0, 0);
    struct kn_krp_status before = at_rest(&u);

    stopped_pid = d.proc.pid;
    ck_assert_int_eq(kill(stopped_pid, SIGSTOP), 0);
    h_sleep_ms(STALL_MS); /* the fault itself: the stall's length */
    ck_assert_int_eq(kill(stopped_pid, SIGCONT), 0);
    stopped_pid = 0;

    struct f_st st;
    ck_assert_msg(f_status_until(&u, fresh, NULL, 20, 2 * H_LONG_MS, &st),
                  "the simulator never came back after the stall: %s", h_stderr(&d.proc));
    same_engine(pid);
    /* nor was the link called silent: its lines were waiting unread */
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.silences"), 0);
    double lag = h_stat(&d, PROC "loop_lag_max_ms");
    ck_assert_msg(lag >= STALL_MS - 500, "the stall was not seen: loop lag at most %.0f ms", lag);
    ck_assert_double_ge(h_stat(&d, PROC "loop_stalls"), 1);
    /* and it drives */
    struct kn_krp_status after = drive(&u, 100);
    h_crawler(&u, 0, 0, 0, 0);
    f_figure("engine-super-daemon-stall",
             "kenaf-simd stopped %d ms: loop lag %.0f ms seen, "
             "engine pid %d kept (0 silent kills, 0 restarts, 0 reconnects, 0 link silences; "
             "%.0f engine and %.0f link silence checks found lines waiting unread); drove %d mm "
             "after",
             STALL_MS, lag, pid, h_stat(&d, PROC "unread_saves"),
             h_stat(&d, "robots.0.backend.unread_saves"), after.pos_mm[0] - before.pos_mm[0]);
    h_udp_close(&u);
}
END_TEST

/* iptables-legacy with its lock in the scratch directory (the default,
 * under /run, may not be ours); 0 when it worked. */
static int iptables(const char *op, const char *dir, int port)
{
    char p[16], lock[300];
    snprintf(p, sizeof p, "%d", port);
    snprintf(lock, sizeof lock, "XTABLES_LOCKFILE=%s", h_path("xtables.lock"));
    char *argv[] = { "iptables-legacy", (char *)op, "INPUT", "-p",   "tcp",
                     (char *)dir,       p,          "-j",    "DROP", NULL };
    char *env[] = { lock, "PATH=/usr/sbin:/sbin:/usr/bin:/bin", NULL };
    pid_t pid = fork();
    if (pid == 0) {
        execve(h_which("iptables-legacy"), argv, env);
        _exit(127);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cut(const char *op, int port)
{
    ck_assert_int_eq(iptables(op, "--dport", port), 0);
    ck_assert_int_eq(iptables(op, "--sport", port), 0);
}

START_TEST(link_cut)
{
    h_private_net(); /* the rules below touch nothing outside this test */
    struct h_udp u;
    start_daemon(&u);
    pid_t pid = engine_pid;
    int port = (int)h_stat(&d, PROC "port");
    struct kn_krp_status last = drive(&u, 150);

    /* the link cut while the robot drives; the controller stops sending,
     * so what reaches the engine after the cut is the watchdog's stop */
    uint64_t t_cut = h_now_us();
    cut("-A", port);
    last = h_status_any(&u); /* the last pose kenaf-simd heard before the cut */
    h_sleep_ms(CUT_MS);      /* the fault itself: the cut's length */
    cut("-D", port);
    double t_cut_ms = f_ms(t_cut, h_now_us());

    struct kn_krp_status after = at_rest(&u);
    double moved = after.pos_mm[0] - last.pos_mm[0];
    f_figure("engine-super-link-cut",
             "link cut %.0f ms at %d mm/s: engine pid %d before, %d "
             "after; robot at rest %.0f mm past the last pose heard before the cut (re-spawned "
             "there it would be 0 mm)",
             t_cut_ms, SPEED_MM_S, pid, (int)h_stat(&d, PROC "pid"), moved);
    same_engine(pid);
    char st[4096];
    ck_assert_msg(engine_stats(port, st, sizeof st, H_LONG_MS), "the engine does not answer");
    double deadman = kenaf_num(st, "DeadmanStops");
    ck_assert_double_ge(deadman, 1);
    /* the engine's pose: the robot ran on until its dead-man braked it
     * (watchdog_ms 500 at 200 mm/s: about 100 mm), and it is still there */
    ck_assert_msg(moved >= 30 && moved <= 400,
                  "robot at %d mm after the cut, %d mm before: "
                  "not where the engine braked it",
                  after.pos_mm[0], last.pos_mm[0]);
    ck_assert_int_le(abs(after.pos_mm[1] - last.pos_mm[1]), 30);
    h_udp_close(&u);
}
END_TEST

/* The link cut for BLIP_MS while the controller sends the same CRAWLER
 * on and on. kenaf-simd sends a DRIVE only when the set-point changes,
 * and the engine's dead-man sets the belts' target to 0 behind its back:
 * only the dead-man stops in the replies to its Alive lines tell it to
 * send the unchanged DRIVE again. stale_ms far above the cut and TCP's
 * retransmissions after it keeps the link from being called silent, so
 * the set-points it re-applies when a silent simulator talks again
 * cannot stand in for that (on a lossy network the same happens when
 * only kenaf-simd's lines are held back: faults-hosts-netem). */
START_TEST(link_blip)
{
    h_private_net(); /* the rules below touch nothing outside this test */
    struct h_udp u;
    start_daemon_stale(&u, 10000);
    int port = (int)h_stat(&d, PROC "port");
    drive(&u, 100);

    cut("-A", port);
    uint64_t t_end = h_now_us() + BLIP_MS * 1000u;
    while (h_now_us() < t_end) { /* the controller drives on, as it would */
        h_crawler(&u, 0, 0, SPEED_MM_S, SPEED_MM_S);
        h_sleep_ms(50);
    }
    cut("-D", port);
    uint64_t t_back = h_now_us();

    /* more than the robot ran before the dead-man braked it (the jump of
     * the first fresh pose), and at speed: moving again */
    struct kn_krp_status s = drive(&u, 300);
    double again_ms = f_ms(t_back, h_now_us());
    char st[4096];
    ck_assert_msg(engine_stats(port, st, sizeof st, H_LONG_MS), "the engine does not answer");
    double stops = kenaf_num(st, "DeadmanStops");
    double told = h_stat(&d, "robots.0.backend.engine.deadman_stops");
    f_figure("engine-super-link-blip",
             "link cut %d ms while the controller sent CRAWLER %d mm/s every 50 ms: %.0f "
             "dead-man stop(s) in the engine, %.0f told to kenaf-simd in the Alive replies; "
             "%.0f link silences; driving at %d mm/s again %.0f ms after the cut ended",
             BLIP_MS, SPEED_MM_S, stops, told, h_stat(&d, "robots.0.backend.silences"),
             s.crawler_speed_mm_s[0], again_ms);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.silences"), 0);
    ck_assert_double_ge(stops, 1);
    ck_assert_msg(told >= 1 && told <= stops, "kenaf-simd heard of %.0f of %.0f dead-man stops",
                  told, stops);
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    struct h_case cases[] = {
        { "log-full", log_full, 60, h_setup, teardown },
        { "daemon-stall", daemon_stall, 90, h_setup, teardown },
        { "link-cut", link_cut, 90, h_setup, teardown },
        { "link-blip", link_blip, 90, h_setup, teardown },
    };
    size_t n = 4;
    /* the cuts need a network namespace and iptables: without them the
     * last two cases cannot run at all */
    int e = h_private_net_errno();
    const char *why = e ? strerror(e) : !h_which("iptables-legacy") ? "no iptables-legacy" : NULL;
    if (why) {
        const char *only = getenv("CK_RUN_CASE");
        fprintf(stderr,
                "engine-super: link-cut, link-blip SKIPPED: they cut the link with iptables in a "
                "network namespace of their own: %s; run the tests as root\n",
                why);
        if (only && (strcmp(only, "link-cut") == 0 || strcmp(only, "link-blip") == 0))
            return 77;
        n = 2;
    }
    return h_run_cases("engine supervision", cases, n);
}
