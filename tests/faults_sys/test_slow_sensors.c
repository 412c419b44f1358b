/* hrt_go_forward and hrt_turning against simulators whose sensors update
 * at USARSim's default rates: the encoders only every 0.2 s (Encoder
 * ScanInterval), while kenaf-simd pushes STATUS every 20 ms. Every motion
 * must settle at its target and return 0 (not hunt around the target
 * until the no-progress guard gives HRT_ETIMEOUT). Against kenaf-engine
 * run with --sen-rate Encoder=5 (its other streams at their defaults:
 * ground truth 10 Hz), and against the USARSim stand-in with every sensor
 * at 5 Hz (--sen-ms 200). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

#define COUNTS_PER_MM 4.0 /* kenaf-simd's default counts_per_m / 1000 */

static struct h_daemon d;
static struct h_standin sim;
static struct h_proc engine;
static struct f_ctl ctl;

/* Lengths and order vary where the motion starts within the encoder's
 * 0.2 s cycle. */
static const char *const steps[] = { "fwd", "100",  "fwd", "250",  "fwd", "-250", "fwd",
                                     "30",  "fwd",  "5",   "fwd",  "500", "fwd",  "-60",
                                     "fwd", "150",  "fwd", "12",   "fwd", "-400", "turn",
                                     "90",  "turn", "-45", "turn", "180", NULL };

/* Runs the steps; each motion must return 0 within tol_mm of its target
 * (belt travel from the encoders) or 1.5 deg (yaw). */
static void run_motions(const char *name, double tol_mm)
{
    f_ctl_start(&ctl, d.port[0], steps, NULL);
    char figure[2048] = "";
    double worst_mm = 0, worst_deg = 0;
    int from = 0;
    for (int k = 0; steps[k]; k += 2) {
        int i = f_ctl_wait(&ctl, from, "RESULT", steps[k], 6 * H_LONG_MS);
        ck_assert_msg(i >= 0, "no result for %s %s: %s", steps[k], steps[k + 1],
                      h_stderr(&ctl.proc));
        from = i + 1;
        char step[16];
        int rc, dl, dr;
        double secs, dyaw;
        ck_assert_int_eq(
            sscanf(ctl.line[i].rest, "%15s %d %lf %d %d %lf", step, &rc, &secs, &dl, &dr, &dyaw),
            6);
        double target = atof(steps[k + 1]);
        ck_assert_msg(rc == 0, "%s %s gave %d after %.2f s", step, steps[k + 1], rc, secs);
        size_t l = strlen(figure);
        if (step[0] == 'f') {
            double travel = (dl + dr) / 2.0 / COUNTS_PER_MM;
            ck_assert_msg(fabs(travel - target) <= tol_mm, "fwd %g: travelled %.2f mm", target,
                          travel);
            worst_mm = fmax(worst_mm, fabs(travel - target));
            snprintf(figure + l, sizeof figure - l, "%sfwd %g: %.2f mm in %.2f s", l ? "; " : "",
                     target, travel, secs);
        } else {
            /* the yaw change is known modulo 360 deg (180 = -180) */
            double off = remainder(dyaw - target, 360.0);
            ck_assert_msg(fabs(off) <= 1.5, "turn %g: turned %.2f deg", target, dyaw);
            worst_deg = fmax(worst_deg, fabs(off));
            dyaw = target + off;
            snprintf(figure + l, sizeof figure - l, "%sturn %g: %.2f deg in %.2f s", l ? "; " : "",
                     target, dyaw, secs);
        }
    }
    f_figure(name, "%s (worst %.2f mm, %.2f deg)", figure, worst_mm, worst_deg);
}

START_TEST(engine_encoder_5hz)
{
    const char *const extra[] = { "--sen-rate", "Encoder=5", NULL };
    int port = f_engine_start(&engine, extra);
    char robots[512];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"engine\","
             "\"address\":\"127.0.0.1:%d\"}}]",
             port);
    h_daemon_start(&d, robots);
    ck_assert_msg(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, 3 * H_LONG_MS),
                  "engine link not up: %s", h_stderr(&d.proc));
    ck_assert(h_wait_stat_eq(&d, "robots.0.flags.STALE", 0, H_LONG_MS));
    /* an engine slowed down by a wrapper (valgrind) falls behind real time
     * and catches up in bursts, each a stretch of robot time the commands
     * cannot follow: then only settling (rc 0) is the point */
    run_motions("slow-sensors-engine", h_wrapped() ? 10.0 : 2.5);
}
END_TEST

START_TEST(usarsim_sensors_5hz)
{
    setenv("KN_STANDIN", getenv("KN_USARSIM_SERVER"), 1);
    const char *const extra[] = { "--sen-ms", "200", NULL };
    h_standin_start(&sim, 0, "usarsim", extra);
    char robots[512];
    /* the stand-in's encoder: 0.01 rad per tick on a 0.08 m wheel */
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"usarsim\","
             "\"address\":\"127.0.0.1:%d\",\"counts_per_tick\":3.2}}]",
             sim.port);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    /* one encoder tick is 0.8 mm of belt */
    run_motions("slow-sensors-usarsim", 2.5);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "engine", engine_encoder_5hz, 240, NULL, NULL },
        { "usarsim", usarsim_sensors_5hz, 240, NULL, NULL },
    };
    return h_run_cases("motions with slow sensors", cases, 2);
}
