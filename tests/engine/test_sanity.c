/* Engine sanity checks (docs/engine.md) as Check tests: drop
 * and settle, static slope, frame invariance, mirror symmetry, energy,
 * servo stall and reach, determinism. CK_RUN_CASE selects one check so
 * meson runs them as separate, parallel tests. */
#include <check.h>
#include <stdio.h>

#include "harness_suite.h"
#include "params.h"
#include "sanity.h"

#ifndef KN_TEST_CONFIG_DIR
#error "KN_TEST_CONFIG_DIR must name the config directory"
#endif

static void run_check(const char *name)
{
    struct kn_robot_params rp;
    char err[512];
    ck_assert_msg(
        kn_robotfile_load(KN_TEST_CONFIG_DIR "/robots/kenaf.json", &rp, err, sizeof err) == 0, "%s",
        err);
    struct kn_sanity_result r;
    ck_assert_msg(kn_sanity_run(name, &rp, &r) == 0, "%s: could not run", name);
    printf("sanity-%s: %s; %s (%.1f s simulated, %.2f s CPU)\n", name, r.passed ? "pass" : "FAIL",
           r.why, r.sim_s, r.cpu_s);
    ck_assert_msg(r.passed, "sanity-%s: %s", name, r.why);
    ck_assert_double_gt(r.sim_s, 0);
}

START_TEST(drop_settle)
{
    run_check("drop-settle");
}
END_TEST
START_TEST(static_slope)
{
    run_check("static-slope");
}
END_TEST
START_TEST(frame_invariance)
{
    run_check("frame-invariance");
}
END_TEST
START_TEST(symmetry)
{
    run_check("symmetry");
}
END_TEST
START_TEST(energy)
{
    run_check("energy");
}
END_TEST
START_TEST(servo)
{
    run_check("servo");
}
END_TEST
START_TEST(determinism)
{
    run_check("determinism");
}
END_TEST

START_TEST(unknown_check)
{
    struct kn_robot_params rp = { 0 };
    struct kn_sanity_result r;
    ck_assert_int_eq(kn_sanity_run("no-such-check", &rp, &r), -1);
}
END_TEST

static void add(Suite *s, const char *name, const TTest *t)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

int main(void)
{
    Suite *s = suite_create("engine-sanity");
    add(s, "drop-settle", drop_settle);
    add(s, "static-slope", static_slope);
    add(s, "frame-invariance", frame_invariance);
    add(s, "symmetry", symmetry);
    add(s, "energy", energy);
    add(s, "servo", servo);
    add(s, "determinism", determinism);
    add(s, "unknown", unknown_check);
    return h_run_suite(s);
}
