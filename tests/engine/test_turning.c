/* Turning on flat ground, measured from the pulley paths (engine/turning.c):
 * the turning centre of a slow turn lies within 30 mm of mid-track, left
 * and right, forward and reversing; the circle radius is within 10 % of the
 * skid-steer radius for the robot file's steering efficiency (axle mode);
 * and in both friction modes the yaw rate grows with |vR - vL| at a fixed
 * mean speed over a grid of commands. */
#include <check.h>
#include <math.h>
#include <stdio.h>

#include "harness_suite.h"
#include "params.h"
#include "turning.h"
#include "world.h"

#ifndef KN_TEST_CONFIG_DIR
#error "KN_TEST_CONFIG_DIR must name the config directory"
#endif

static struct kn_robot_params rp;

static void setup(void)
{
    char err[512];
    ck_assert_msg(
        kn_robotfile_load(KN_TEST_CONFIG_DIR "/robots/kenaf.json", &rp, err, sizeof err) == 0, "%s",
        err);
}

/* belts (vl, vr) at low speed: left/right turns, forward and reversing */
static const double turns[][2] = {
    { 0.05, 0.15 }, { 0.15, 0.05 }, { -0.05, -0.15 }, { -0.15, -0.05 }
};

/* 3 s to reach the steady turn, then 6 s measured */
static const double *measure(int i, struct kn_turn *t)
{
    struct kn_physics_params pp;
    kn_physics_defaults(&pp);
    ck_assert_int_eq(kn_turn_measure(&rp, &pp, turns[i][0], turns[i][1], 3.0, 6.0, t), 0);
    return turns[i];
}

START_TEST(turning_centre)
{
    struct kn_turn t;
    const double *b = measure(_i, &t);
    printf("belts %+.2f %+.2f: centre body (%+.4f, %+.4f) m, circles %.4f m apart, fit rms "
           "%.4f m, R %.3f m, yaw rate %+.3f rad/s, chi_eff %.3f\n",
           b[0], b[1], t.centre_body[0], t.centre_body[1], t.centre_gap, t.fit_rms, t.radius,
           t.yaw_rate, t.chi_eff);
    fflush(stdout);
    ck_assert_msg(t.fit_rms < 0.005 && t.centre_gap < 0.01, "not a steady turn");
    ck_assert_msg(fabs(t.centre_body[0]) <= 0.030,
                  "turning centre %.4f m from mid-track along the body (limit 0.030)",
                  t.centre_body[0]);
    /* the centre is on the inner side */
    ck_assert(t.centre_body[1] * (b[1] - b[0]) * (b[0] + b[1]) > 0);
}
END_TEST

START_TEST(circle_radius)
{
    struct kn_turn t;
    const double *b = measure(_i, &t);
    /* skid-steer model with steering efficiency chi: omega = chi (vR - vL)/B
     * at the mean belt speed, so R = R_kin / chi */
    double chi = kn_world_chi(&rp, KN_FDIR_AXLE), want = t.radius_kin / chi;
    printf("belts %+.2f %+.2f: R %.4f m, skid-steer R %.4f m (R_kin %.4f, chi %.2f), "
           "chi_eff %.3f\n",
           b[0], b[1], t.radius, want, t.radius_kin, chi, t.chi_eff);
    fflush(stdout);
    ck_assert_msg(fabs(t.radius - want) <= 0.10 * want, "R %.4f m vs %.4f m (10 %%)", t.radius,
                  want);
}
END_TEST

/* yaw rate over a grid: mean speed m, difference d = vR - vL */
static void monotone(enum kn_fdir_mode mode)
{
    struct kn_physics_params pp;
    kn_physics_defaults(&pp);
    pp.fdir_mode = mode;
    const double means[] = { 0.1, 0.225, 0.35 };
    const double diffs[] = { 0.03, 0.06, 0.1, 0.15, 0.2, 0.25, 0.3 };
    for (size_t i = 0; i < sizeof means / sizeof means[0]; i++) {
        double prev = 0;
        for (size_t j = 0; j < sizeof diffs / sizeof diffs[0]; j++) {
            double m = means[i], d = diffs[j];
            struct kn_turn t;
            ck_assert_int_eq(kn_turn_measure(&rp, &pp, m - d / 2, m + d / 2, 2.0, 2.0, &t), 0);
            printf("%s mean %.3f diff %.2f: yaw rate %.4f rad/s (chi_eff %.3f)\n",
                   mode == KN_FDIR_ICR ? "icr " : "axle", m, d, t.yaw_rate, t.chi_eff);
            fflush(stdout);
            ck_assert_msg(t.yaw_rate > prev,
                          "mean %.3f: vR - vL %.2f turns at %.4f rad/s, not faster than %.4f at "
                          "the gentler command",
                          m, d, t.yaw_rate, prev);
            prev = t.yaw_rate;
        }
    }
}

START_TEST(icr_monotone_axle)
{
    monotone(KN_FDIR_AXLE);
}
END_TEST

START_TEST(icr_monotone_icr)
{
    monotone(KN_FDIR_ICR);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-turning");
    const struct {
        const char *name;
        const TTest *test;
        int loops;
    } cases[] = { { "turning-centre", turning_centre, 4 },
                  { "circle-radius", circle_radius, 4 },
                  { "monotone-axle", icr_monotone_axle, 1 },
                  { "monotone-icr", icr_monotone_icr, 1 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, NULL);
        tcase_set_timeout(tc, 300);
        tcase_add_loop_test(tc, cases[i].test, 0, cases[i].loops);
        suite_add_tcase(s, tc);
    }
    return h_run_suite(s);
}
