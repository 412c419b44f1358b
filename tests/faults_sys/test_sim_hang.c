/* A simulator that stops talking without closing its connection: the
 * engine kenaf-simd spawned, stopped with SIGSTOP. After stale_ms without a
 * sensor or status line BACKEND_UP must drop (one warning, counted);
 * "restart": the engine stays stopped, so after engine.silent_restart_s it
 * is killed and restarted and the robot comes back where it was; "resume":
 * SIGCONT before that, BACKEND_UP comes back by itself (an info line) and
 * nothing is restarted. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

#define PROC "robots.0.backend.engine.process."
#define STALE_MS 500.0
#define SILENT_RESTART_S 2.0

static struct h_daemon d;
static int engine_pid; /* a stopped engine must not outlive a failed test */
/* How long the engine waited for a CPU in the 200 ms before the stop: its
 * last line may be that much older than the stop, so the silence the
 * daemon measures may end that much earlier (h_waits). */
static double engine_waited_ms;

static void teardown(void)
{
    if (engine_pid > 0)
        kill(engine_pid, SIGKILL);
    engine_pid = 0;
    h_teardown();
}

static bool backend_down(const struct kn_krp_status *s, void *arg)
{
    (void)arg;
    return !(s->flags & KN_KRP_ST_BACKEND_UP);
}

static bool backend_up_fresh(const struct kn_krp_status *s, void *arg)
{
    (void)arg;
    return (s->flags & KN_KRP_ST_BACKEND_UP) && !(s->flags & KN_KRP_ST_STALE);
}

/* kenaf-simd with a spawned engine; the robot driven about 0.3 m forward
 * and at rest again; returns its STATUS then. */
static struct kn_krp_status start_and_drive(struct h_udp *u, double silent_restart_s)
{
    char robots[512];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"engine\","
             "\"stale_ms\":%.0f,\"engine\":{\"silent_restart_s\":%.1f}}}]",
             STALE_MS, silent_restart_s);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, 3 * H_LONG_MS);
    h_udp_open(u, d.port[0]);
    (void)h_hello(u, "test");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv(u, &m, H_LONG_MS));
    struct kn_krp_status s;
    uint64_t end = h_now_us() + 3ull * H_LONG_MS * 1000ull;
    do {
        h_crawler(u, 0, 0, 300, 300);
        h_sleep_ms(50);
        s = h_status_any(u);
    } while (s.pos_mm[0] < 300 && h_now_us() < end);
    h_crawler(u, 0, 0, 0, 0);
    ck_assert_int_ge(s.pos_mm[0], 300);
    end = h_now_us() + H_LONG_MS * 1000ull;
    do {
        h_sleep_ms(50);
        s = h_status_any(u);
    } while ((s.crawler_speed_mm_s[0] != 0 || s.crawler_speed_mm_s[1] != 0) && h_now_us() < end);
    h_sleep_ms(300); /* the last pose settles into the daemon's state */
    return h_status_any(u);
}

/* SIGSTOP; BACKEND_UP drops after stale_ms, once logged and counted.
 * Returns the time of the stop. Both bounds are the daemon's when every
 * process has a CPU; the time they waited for one widens them (the
 * engine's before the stop, kenaf-simd's and this test's after it). */
static uint64_t stop_engine(struct h_udp *u, const char *fig)
{
    engine_pid = (int)h_stat(&d, PROC "pid");
    ck_assert_int_gt(engine_pid, 0);
    struct h_waits we;
    const pid_t engine_only[1] = { engine_pid };
    h_waits_start(&we, engine_only, 1);
    h_sleep_ms(200);
    engine_waited_ms = h_waited_ms(&we);
    struct h_waits w;
    const pid_t pids[2] = { d.proc.pid, 0 };
    h_waits_start(&w, pids, 2);
    uint64_t t_stop = h_now_us();
    ck_assert_int_eq(kill(engine_pid, SIGSTOP), 0);
    struct f_st st;
    ck_assert_msg(f_status_until(u, backend_down, NULL, 5, 3 * H_LONG_MS, &st),
                  "BACKEND_UP never dropped");
    double t_down = f_ms(t_stop, st.t_us), waited = h_waited_ms(&w);
    f_figure(fig,
             "engine stopped (SIGSTOP): BACKEND_UP cleared after %.0f ms (stale_ms %.0f); "
             "waiting for a CPU: the engine %.0f ms before, kenaf-simd and the test %.0f ms after",
             t_down, STALE_MS, engine_waited_ms, waited);
    ck_assert_msg(t_down >= STALE_MS - 60 - engine_waited_ms && t_down <= STALE_MS + 500 + waited,
                  "BACKEND_UP cleared %.0f ms after the stop (stale_ms %.0f; waiting for a CPU: "
                  "the engine %.0f ms before, kenaf-simd and the test %.0f ms after)",
                  t_down, STALE_MS, engine_waited_ms, waited);
    ck_assert(st.s.flags & KN_KRP_ST_STALE);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.silences"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.silent"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.up"), 0);
    ck_assert_msg(strstr(h_stderr(&d.proc), "silent for") != NULL, "no warning: %s",
                  h_stderr(&d.proc));
    return t_stop;
}

START_TEST(restart)
{
    struct h_udp u;
    struct kn_krp_status before = start_and_drive(&u, SILENT_RESTART_S);
    uint64_t t_stop = stop_engine(&u, "sim-hang-restart");
    /* still stopped: killed and restarted after silent_restart_s */
    ck_assert(h_wait_stat(&d, PROC "silent_kills", 1, 3 * H_LONG_MS));
    double t_kill = f_ms(t_stop, h_now_us());
    ck_assert(h_wait_stat(&d, PROC "restarts", 1, H_LONG_MS));
    struct f_st st;
    ck_assert_msg(f_status_until(&u, backend_up_fresh, NULL, 5, 3 * H_LONG_MS, &st),
                  "the restarted engine never came up");
    double t_up = f_ms(t_stop, st.t_us);
    int old_pid = engine_pid;
    engine_pid = 0; /* that one was killed */
    ck_assert_int_ne((int)h_stat(&d, PROC "pid"), old_pid);
    h_sleep_ms(300);
    struct kn_krp_status after = h_status_any(&u);
    double off = hypot(after.pos_mm[0] - before.pos_mm[0], after.pos_mm[1] - before.pos_mm[1]);
    f_figure("sim-hang-restart",
             "engine killed %.0f ms after the stop (silent_restart_s %.1f), "
             "up again at %.0f ms, robot %.0f mm from its last pose",
             t_kill, SILENT_RESTART_S, t_up, off);
    ck_assert_msg(t_kill >= SILENT_RESTART_S * 1000 - 100 - engine_waited_ms,
                  "killed after only %.0f ms (the engine waited %.0f ms for a CPU before the stop)",
                  t_kill, engine_waited_ms);
    ck_assert_msg(off < 30, "re-spawned at (%d, %d) mm instead of (%d, %d) mm", after.pos_mm[0],
                  after.pos_mm[1], before.pos_mm[0], before.pos_mm[1]);
    ck_assert_double_eq(h_stat(&d, PROC "silent_kills"), 1);
    ck_assert_msg(strstr(h_stderr(&d.proc), "killing it to restart it") != NULL, "%s",
                  h_stderr(&d.proc));
    /* the warning came once for the one silence */
    int warnings = 0;
    for (const char *p = h_stderr(&d.proc); (p = strstr(p, "(no sensor or status line)")); p++)
        warnings++;
    ck_assert_int_eq(warnings, 1);
    h_udp_close(&u);
}
END_TEST

START_TEST(resume)
{
    struct h_udp u;
    start_and_drive(&u, 10.0);
    uint64_t t_stop = stop_engine(&u, "sim-hang-resume");
    h_sleep_ms(500);
    uint64_t t_cont = h_now_us();
    ck_assert_int_eq(kill(engine_pid, SIGCONT), 0);
    struct f_st st;
    ck_assert_msg(f_status_until(&u, backend_up_fresh, NULL, 5, 3 * H_LONG_MS, &st),
                  "BACKEND_UP never came back");
    f_figure("sim-hang-resume",
             "engine continued (SIGCONT) %.0f ms after the stop: BACKEND_UP "
             "back %.0f ms later, nothing restarted",
             f_ms(t_stop, t_cont), f_ms(t_cont, st.t_us));
    ck_assert(h_wait_stat_eq(&d, "robots.0.backend.silent", 0, H_LONG_MS));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.silences"), 1);
    ck_assert_double_eq(h_stat(&d, PROC "silent_kills"), 0);
    ck_assert_double_eq(h_stat(&d, PROC "restarts"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.disconnects"), 0);
    ck_assert_msg(strstr(h_stderr(&d.proc), "talks again") != NULL, "no info line: %s",
                  h_stderr(&d.proc));
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "restart", restart, 90, h_setup, teardown },
        { "resume", resume, 90, h_setup, teardown },
    };
    return h_run_cases("simulator silent", cases, 2);
}
