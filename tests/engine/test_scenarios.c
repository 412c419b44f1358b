/* Validation scenarios as Check tests: runs every variant of one scenario
 * file (argv[1]) and asserts that each outcome matches its expectation,
 * that the global invariants hold (finite state, penetration < 10 mm), and
 * that outcomes are monotone where the file says so. Prints one line per
 * variant with the real-time factor. `--disagree N,M` names the variants
 * that disagree with the real robot today (kenaf-engine --validate fails on
 * them): the test asserts that they still do, so a model that comes to
 * match them is noticed here and the list shortened. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "scenario.h"

static const char *g_path;
static unsigned g_disagree; /* bit v: variant v disagrees with the reference */

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
        if (g_disagree & (1u << v))
            ck_assert_msg(!res.matches,
                          "%s[%d]: now matches the reference (%s): take it off "
                          "--disagree",
                          sc.name, v, res.why);
        else
            ck_assert_msg(res.matches, "%s[%d]: expected %s, got %s (%s)", sc.name, v,
                          kn_expect_name(sc.expect), res.passed ? "pass" : "fail", res.why);
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
    if (argc == 4 && strcmp(argv[2], "--disagree") == 0) {
        for (char *p = argv[3], *end; *p; p = *end ? end + 1 : end) {
            long v = strtol(p, &end, 10);
            if (end == p || v < 0 || v > 31 || (*end && *end != ',')) {
                fprintf(stderr, "%s: bad --disagree list: %s\n", argv[0], argv[3]);
                return 2;
            }
            g_disagree |= 1u << v;
        }
    } else if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO.json [--disagree N,M,...]\n", argv[0]);
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
