/* Validation scenarios as Check tests: runs every variant of one scenario
 * file (argv[1]) and asserts that each outcome matches its expectation (or a
 * documented deviation), that the global invariants hold (finite state,
 * penetration < 10 mm), and that outcomes are monotone where the file says
 * so. Prints one line per variant with the real-time factor. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_suite.h"
#include "scenario.h"

static const char *g_path;

START_TEST(scenario_file)
{
    char err[768];
    int n = kn_scenario_count(g_path, err, sizeof err);
    ck_assert_msg(n >= 1, "%s", err);
    int seen_fail = 0;
    for (int v = 0; v < n; v++) {
        struct kn_scenario sc;
        ck_assert_msg(kn_scenario_load(g_path, v, &sc, err, sizeof err) == 0, "%s", err);
        struct kn_result res;
        ck_assert_int_eq(kn_scenario_run(&sc, 0, &res), 0);
        printf("%-28s variant %d: expected %-6s got %s  RTF %5.1f  %s\n", sc.name, v,
               kn_expect_name(sc.expect), res.passed ? "pass" : "fail", res.rtf, res.why);
        ck_assert_msg(res.finite, "%s[%d]: non-finite state", sc.name, v);
        ck_assert_msg(res.max_depth < 0.010, "%s[%d]: penetration %.4f m", sc.name, v,
                      res.max_depth);
        ck_assert_msg(res.matches || sc.deviation[0], "%s[%d]: expected %s, got %s (%s)", sc.name,
                      v, kn_expect_name(sc.expect), res.passed ? "pass" : "fail", res.why);
        if (sc.monotone) {
            ck_assert_msg(!(res.passed && seen_fail), "%s[%d]: passes after a lower variant failed",
                          sc.name, v);
            seen_fail |= !res.passed;
        }
        ck_assert_double_gt(res.sim_s, 0);
        kn_scenario_free(&sc);
    }
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO.json\n", argv[0]);
        return 2;
    }
    g_path = argv[1];
    Suite *s = suite_create("engine-scenarios");
    TCase *tc = tcase_create("scenario");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, scenario_file);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
