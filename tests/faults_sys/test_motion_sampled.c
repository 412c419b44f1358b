/* The motion control law (libkenaf_sim/motion.c) when the simulator
 * updates its sensors slower than STATUS arrives: USARSim's Encoder
 * reports every 0.2 s by default (ScanInterval), the daemon pushes STATUS
 * every 20 ms, so most STATUS repeat the same counts. hrt_go_forward and
 * hrt_turning must still settle at the target (not hunt around it until
 * the no-progress guard gives HRT_ETIMEOUT), at every sensor rate, for
 * short and long motions, with a slow and a quick belt. A pure model, no
 * I/O: the system tests (test_slow_sensors.c) do the same against the
 * engine and the USARSim stand-in. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "motion.h"

/* Belts slew toward the command at accel mm/s^2; the command takes effect
 * one STATUS late. Encoders (counts_per_mm) and yaw are sampled every
 * enc_s / yaw_s of robot time, from phase; STATUS every 20 ms shows the
 * latest samples, its time advancing with every sensor line (10 Hz STA). */
struct plant {
    struct kn_krp_status st;
    double pos[2], speed[2], cmd[2], next_cmd[2];
    double yaw_deg, counts_per_mm, accel;
    double t, enc_s, yaw_s, t_enc, t_yaw, t_line;
};

#define STATUS_S 0.02

static void sample(struct plant *p)
{
    if (p->t + 1e-9 >= p->t_enc) {
        for (int i = 0; i < 2; i++)
            p->st.crawler_count[i] = (int32_t)llround(p->pos[i] * p->counts_per_mm);
        p->t_enc += p->enc_s;
        p->t_line = p->t;
    }
    if (p->t + 1e-9 >= p->t_yaw) {
        double y = remainder(p->yaw_deg, 360.0);
        p->st.rpy_cdeg[2] = (int32_t)lround(y * 100);
        p->t_yaw += p->yaw_s;
        p->t_line = p->t;
    }
    if (fmod(p->t + 1e-9, 0.1) < STATUS_S) /* STA with a time stamp */
        p->t_line = p->t;
    p->st.time_us = (uint64_t)llround(p->t_line * 1e6);
}

static void step(struct plant *p)
{
    for (int n = 0; n < 20; n++) {
        double h = STATUS_S / 20;
        for (int i = 0; i < 2; i++) {
            double d = p->cmd[i] - p->speed[i], max = p->accel * h;
            p->speed[i] += d > max ? max : d < -max ? -max : d;
            p->pos[i] += p->speed[i] * h;
        }
        p->yaw_deg += (p->speed[1] - p->speed[0]) / 230.0 * h * 180.0 / M_PI;
    }
    p->t += STATUS_S;
    memcpy(p->cmd, p->next_cmd, sizeof p->cmd);
    sample(p);
}

static void init(struct plant *p, double enc_hz, double yaw_hz, double accel, double phase)
{
    memset(p, 0, sizeof *p);
    p->counts_per_mm = 4.0; /* 4000 counts/m, kenaf-simd's default */
    p->accel = accel;
    p->enc_s = 1.0 / enc_hz;
    p->yaw_s = 1.0 / yaw_hz;
    p->t = 10.0;
    p->t_enc = p->t + phase * p->enc_s;
    p->t_yaw = p->t + phase * p->yaw_s;
    p->t_line = p->t;
    sample(p);
}

/* Runs one motion like api_motion.c: update on every STATUS until done,
 * then belts 0 and let it come to rest. Returns the result and the robot
 * time it took. */
static enum kn_motion_result run(struct plant *p, enum kn_motion_kind kind, double target,
                                 double *took)
{
    struct kn_motion m;
    kn_motion_start(&m, kind, target, 1.0 / p->counts_per_mm, &p->st);
    double t0 = p->t;
    enum kn_motion_result r = KN_MOTION_RUN;
    while (r == KN_MOTION_RUN && p->t - t0 < 60) {
        step(p);
        double belt[2];
        r = kn_motion_update(&m, &p->st, belt);
        if (r == KN_MOTION_RUN) {
            p->next_cmd[0] = belt[0];
            p->next_cmd[1] = belt[1];
        }
    }
    *took = p->t - t0;
    p->next_cmd[0] = p->next_cmd[1] = 0;
    for (int i = 0; i < 100; i++)
        step(p);
    return r;
}

static const double enc_rates[] = { 50, 10, 5, 3 };
static const double accels[] = { 1000, 4000 };
static const double phases[] = { 0.0, 0.37, 0.81 };

START_TEST(forward_settles_at_slow_encoder_rates)
{
    const double targets[] = { 100, -250, 30, 10, 3, 1000, -1.5 };
    for (size_t e = 0; e < sizeof enc_rates / sizeof enc_rates[0]; e++) {
        double slowest = 0, worst = 0;
        for (size_t a = 0; a < sizeof accels / sizeof accels[0]; a++)
            for (size_t ph = 0; ph < sizeof phases / sizeof phases[0]; ph++)
                for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
                    struct plant p;
                    init(&p, enc_rates[e], 10, accels[a], phases[ph]);
                    double took;
                    enum kn_motion_result r = run(&p, KN_MOTION_FORWARD, targets[i], &took);
                    double travel = (p.pos[0] + p.pos[1]) / 2;
                    ck_assert_msg(r == KN_MOTION_DONE && fabs(travel - targets[i]) <= 2.0,
                                  "encoder %g Hz, belt %g mm/s^2, phase %g: go_forward(%g) gave "
                                  "%d after %.2f s, travelled %.2f mm",
                                  enc_rates[e], accels[a], phases[ph], targets[i], r, took, travel);
                    /* as long as the slowest honest motion: cruise plus one
                     * sensor interval per remaining halving, roughly */
                    double bound = fabs(targets[i]) / 200.0 + 1.0 + 12.0 / enc_rates[e];
                    ck_assert_msg(took <= bound, "encoder %g Hz: go_forward(%g) took %.2f s",
                                  enc_rates[e], targets[i], took);
                    if (targets[i] == 100 && took > slowest)
                        slowest = took;
                    if (fabs(travel - targets[i]) > worst)
                        worst = fabs(travel - targets[i]);
                }
        printf("FIGURE motion-model-%g-hz: go_forward(100) at most %.2f s; worst end error %.2f mm "
               "over all targets\n",
               enc_rates[e], slowest, worst);
    }
}
END_TEST

START_TEST(turn_settles_at_slow_attitude_rates)
{
    const double targets[] = { 90, -90, 15, 2, 270 };
    for (size_t e = 0; e < sizeof enc_rates / sizeof enc_rates[0]; e++)
        for (size_t a = 0; a < sizeof accels / sizeof accels[0]; a++)
            for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
                struct plant p;
                init(&p, 50, enc_rates[e], accels[a], 0.5);
                double y0 = p.yaw_deg, took;
                enum kn_motion_result r = run(&p, KN_MOTION_TURN, targets[i], &took);
                ck_assert_msg(r == KN_MOTION_DONE && fabs(p.yaw_deg - y0 - targets[i]) <= 1.0,
                              "yaw %g Hz, belt %g mm/s^2: turning(%g) gave %d after %.2f s, "
                              "turned %.2f deg",
                              enc_rates[e], accels[a], targets[i], r, took, p.yaw_deg - y0);
            }
}
END_TEST

/* The law before sensor intervals were taken into account, as the
 * library's unit tests pin it down: with sensors that keep up with STATUS
 * nothing may change. */
static double law_before(const struct kn_profile *p, double remaining, double v_prev, double dt)
{
    double r = fabs(remaining);
    double v = fmin(p->vmax, fmin(fabs(v_prev) + p->accel * dt, sqrt(2.0 * p->accel * r)));
    if (v < p->vmin)
        v = p->vmin;
    if (v > r / dt)
        v = r / dt;
    return copysign(v, remaining);
}

START_TEST(profile_unchanged_when_sensors_keep_up)
{
    const struct kn_profile *p = &kn_motion_default_profile;
    for (double r = 0.1; r < 2000; r *= 1.7)
        for (double v = 0; v <= 200; v += 25) {
            ck_assert_double_eq(kn_motion_profile_speed_sampled(p, r, v, 0.02, 0.02),
                                law_before(p, r, v, 0.02));
            ck_assert_double_eq(kn_motion_profile_speed_sampled(p, -r, -v, 0.02, 0.01),
                                law_before(p, -r, -v, 0.02));
            ck_assert_double_eq(kn_motion_profile_speed(p, r, v, 0.02), law_before(p, r, v, 0.02));
        }
    /* a slower sensor: never faster, and never past the target before
     * the next measurement */
    for (double r = 0.1; r < 2000; r *= 1.7)
        for (double v = 0; v <= 200; v += 25) {
            double fast = law_before(p, r, v, 0.02);
            double slow = kn_motion_profile_speed_sampled(p, r, v, 0.02, 0.2);
            ck_assert_msg(slow <= fast + 1e-12, "r %g v %g: %g > %g", r, v, slow, fast);
            ck_assert_msg(slow * 0.2 <= r + 1e-9, "r %g v %g: %g mm/s overshoots", r, v, slow);
            /* and it can still brake from that speed within what is left
             * once the next measurement comes */
            ck_assert_msg(slow * slow <= 2 * p->accel * (r - slow * 0.18) + 1e-6 || slow <= p->vmin,
                          "r %g v %g: %g mm/s cannot brake", r, v, slow);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("motion with slow sensors");
    TCase *tc = tcase_create("sampled");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, forward_settles_at_slow_encoder_rates);
    tcase_add_test(tc, turn_settles_at_slow_attitude_rates);
    tcase_add_test(tc, profile_unchanged_when_sensors_keep_up);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
