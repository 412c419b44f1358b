/* kenaf-simd restarted under a running controller: killed with SIGKILL (a
 * crash) or stopped with SIGTERM (systemctl restart), then started again
 * on the same port. The library must report HRT_ETIMEOUT while the daemon
 * is gone and 0 again once it is back, and must send the speed the
 * program holds again, so the robot drives on (checked in STATUS and in
 * the simulator's command log). The simulator is the USARSim stand-in,
 * which deletes the robot with its connection: whatever drives after the
 * restart was sent after the restart. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "faults.h"

#define SPEED 200                                       /* mm/s the controller holds */
#define DRIVE_LINE "DRIVE {Left 2.5000} {Right 2.5000}" /* 0.2 m/s / 0.08 m */

static struct h_daemon d1, d2;
static struct h_standin sim;
static struct f_ctl ctl;

static const char *robots(int udp_port)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:%d\",\"backend\":{\"type\":\"usarsim\","
             "\"address\":\"127.0.0.1:%d\",\"counts_per_tick\":3.2}}]",
             udp_port, sim.port);
    return buf;
}

static bool driving(const struct kn_krp_status *s, void *arg)
{
    (void)arg;
    return (s->flags & KN_KRP_ST_BACKEND_UP) && abs(s->crawler_speed_mm_s[0] - SPEED) <= 20 &&
           abs(s->crawler_speed_mm_s[1] - SPEED) <= 20;
}

/* First controller line at or after `from` of `kind` whose result (the
 * rc_get field for RC lines) is rc. */
static int wait_rc(int from, const char *kind, int rc, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (int i = from;; i++) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        i = f_ctl_wait(&ctl, i, kind, NULL, left > 0 ? left : 0);
        if (i < 0)
            return -1;
        int got;
        if (strcmp(kind, "RC") == 0) {
            int set;
            if (sscanf(ctl.line[i].rest, "%d %d", &set, &got) != 2)
                continue;
        } else {
            got = f_line_rc(&ctl.line[i]);
        }
        if (got == rc)
            return i;
    }
}

static void restart_under_controller(const char *name, int sig, const char *const steps[],
                                     const char *kind)
{
    setenv("KN_STANDIN", getenv("KN_USARSIM_SERVER"), 1);
    h_standin_start(&sim, 0, "usarsim", NULL);
    h_daemon_start(&d1, robots(0));
    int port = d1.port[0];
    h_wait_backend_fresh(&d1, 0, H_LONG_MS);
    f_ctl_start(&ctl, port, steps, NULL);
    struct h_udp u;
    h_udp_open(&u, port);
    struct f_st st;
    ck_assert_msg(f_status_until(&u, driving, NULL, 10, H_LONG_MS, &st), "robot does not drive");
    int ok_before = wait_rc(0, kind, F_OK, H_LONG_MS);
    ck_assert_int_ge(ok_before, 0);

    uint64_t t_kill = h_now_us();
    h_signal(&d1.proc, sig);
    int exit_st = h_wait_exit(&d1.proc, H_LONG_MS);
    ck_assert_int_ne(exit_st, -1);
    if (sig == SIGTERM)
        ck_assert_msg(WIFEXITED(exit_st) && WEXITSTATUS(exit_st) == 0, "exit status %d", exit_st);
    /* a clean stop leaves the robot stopped: the daemon wrote the stop
     * before it exited, and the simulator logs it once it has read it */
    if (sig == SIGTERM)
        ck_assert_msg(h_log_wait(sim.log, "DRIVE {Left 0.0000} {Right 0.0000}", 1, H_LONG_MS),
                      "the stopped daemon left the robot driving");
    int lost = wait_rc(ok_before, kind, F_ETIMEOUT, 3 * H_LONG_MS);
    ck_assert_msg(lost >= 0, "the controller never saw HRT_ETIMEOUT");
    double t_lost = f_ms(t_kill, ctl.line[lost].t_us);

    /* a supervisor's restart, a moment after the link counted as lost */
    h_sleep_ms(300);
    uint64_t t_start = h_now_us();
    h_daemon_start(&d2, robots(port));
    ck_assert_int_eq(d2.port[0], port);
    uint64_t t_ready = h_now_us();
    int back = wait_rc(lost, kind, F_OK, 3 * H_LONG_MS);
    ck_assert_msg(back >= 0, "the controller never saw 0 again: %s", h_stderr(&d2.proc));
    ck_assert_msg(f_status_until(&u, driving, NULL, 5, 3 * H_LONG_MS, &st),
                  "held speed not re-applied: belts at %d, %d mm/s", st.s.crawler_speed_mm_s[0],
                  st.s.crawler_speed_mm_s[1]);
    /* the new connection's robot got the speed from the new daemon */
    ck_assert_int_eq(h_log_count(sim.log, "#connect"), 2);
    ck_assert_msg(h_log_count(sim.log, DRIVE_LINE) >= 2, "no %s after the restart", DRIVE_LINE);
    f_figure(name,
             "daemon %s: the controller saw HRT_ETIMEOUT %.0f ms later (KENAF_TIMEOUT_MS "
             "1000); new daemon started %.0f ms after the kill, READY after %.0f ms; the "
             "controller saw 0 again %.0f ms after READY, the held %d mm/s showed in STATUS %.0f "
             "ms after READY",
             sig == SIGKILL ? "SIGKILL" : "SIGTERM", t_lost, f_ms(t_kill, t_start),
             f_ms(t_start, t_ready), f_ms(t_ready, ctl.line[back].t_us), SPEED,
             f_ms(t_ready, st.t_us));
    ck_assert_double_ge(h_stat(&d2, "robots.0.datagrams_in.HELLO"), 1); /* the library's */
    h_udp_close(&u);
}

/* Calls hrt_set_crawler_speed and hrt_get_status every 20 ms. */
static const char *const loop_steps[] = { "loop", "20", "200", "200", NULL };
/* Sets the speed once, then only reads (the library repeats it). */
static const char *const hold_steps[] = { "speed", "200", "200", "watch", NULL };

START_TEST(killed)
{
    restart_under_controller("daemon-restart-kill", SIGKILL, loop_steps, "RC");
}
END_TEST

START_TEST(restarted)
{
    restart_under_controller("daemon-restart-term", SIGTERM, hold_steps, "ST");
}
END_TEST

int main(void)
{
    const struct h_case cases[] = { { "kill", killed, 120, NULL, NULL },
                                    { "term", restarted, 120, NULL, NULL } };
    return h_run_cases("daemon restarted under a controller", cases, 2);
}
