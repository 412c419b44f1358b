/* Unit tests of the judgement of a scenario run from kenaf-engine's
 * verdict file (tools/runcase/verdict.c): the first KEY= line wins, the
 * order of the rules (an engine error, the time limit with must_exit, a
 * program that exited with an error while the world ran, the verdict
 * itself), and the failure modes of an engine that writes no mode=. */
#include <string.h>

#include "harness_suite.h"
#include "verdict.h"

static void judge(const char *text, bool exited, int cstatus, struct kn_runcase_outcome *o)
{
    memset(o, 0, sizeof *o);
    kn_runcase_judge(text, strlen(text), exited, cstatus, o);
}

START_TEST(first_line_wins)
{
    const char *t = "verdict=pass\nwhy=a\nwhy=b\nxwhy=c\nsim_s=1.5";
    char v[32];
    kn_runcase_verdict_get(t, strlen(t), "why", v, sizeof v);
    ck_assert_str_eq(v, "a");
    kn_runcase_verdict_get(t, strlen(t), "sim_s", v, sizeof v); /* no line break at the end */
    ck_assert_str_eq(v, "1.5");
    kn_runcase_verdict_get(t, strlen(t), "mode", v, sizeof v);
    ck_assert_str_eq(v, "");
    kn_runcase_verdict_get(t, strlen(t), "verdict", v, 3); /* cut to the room given */
    ck_assert_str_eq(v, "pa");
}
END_TEST

START_TEST(rules_in_order)
{
    struct kn_runcase_outcome o;
    judge("verdict=error\nwhy=no world\nsim_s=0\n", true, 1, &o);
    ck_assert_str_eq(o.status, "error");
    ck_assert_str_eq(o.why, "no world");
    ck_assert_str_eq(o.mode, "error");
    /* the time limit with must_exit before the program's own status */
    judge("verdict=fail\nwhy=did not end\ntime_limit=1\nmust_exit=1\nsim_s=30\n", true, 2, &o);
    ck_assert_str_eq(o.status, "fail");
    ck_assert_str_eq(o.mode, "time-out");
    ck_assert_str_eq(o.why, "did not end");
    ck_assert_str_eq(o.sim, "30");
    judge("verdict=pass\nwhy=up\nmode=none\nsim_s=4\n", true, 3, &o);
    ck_assert_str_eq(o.status, "fail");
    ck_assert_str_eq(o.why, "the program exited with status 3 (pass: up)");
    ck_assert_str_eq(o.mode, "crash");
    judge("verdict=fail\nwhy=tipped over at t=2 s\nsim_s=4\n", true, 139, &o);
    ck_assert_str_eq(o.why, "the program exited with status 139 (fail: tipped over at t=2 s)");
    ck_assert_str_eq(o.mode, "tip-over");
    /* a broken limit or the time limit ends the run: the status is not
     * the program's doing */
    judge("verdict=fail\nwhy=tilted 50 deg\nsim_s=4\n", true, 1, &o);
    ck_assert_str_eq(o.why, "tilted 50 deg");
    ck_assert_str_eq(o.mode, "limit");
    judge("verdict=fail\nwhy=short of the goal\ntime_limit=1\nsim_s=4\n", true, 1, &o);
    ck_assert_str_eq(o.why, "short of the goal");
    ck_assert_str_eq(o.mode, "time-out");
    /* ended by kenaf-sim-case (not exited): the verdict stands */
    judge("verdict=pass\nwhy=up\nsim_s=4\n", false, 143, &o);
    ck_assert_str_eq(o.status, "pass");
    ck_assert_str_eq(o.mode, "none");
}
END_TEST

START_TEST(modes_from_words)
{
    static const struct {
        const char *text, *mode;
    } cases[] = {
        { "verdict=fail\nwhy=no progress for 5 s\n", "stall" },
        { "verdict=fail\nwhy=non-finite pose\n", "limit" },
        { "verdict=fail\nwhy=flipper torque 40 N m\n", "limit" },
        { "verdict=fail\nwhy=the robot tipped over\n", "criterion" }, /* "tipped" not first */
        { "verdict=fail\nwhy=short\nmode=stall\n", "stall" },         /* mode= wins */
        { "", "criterion" }, /* an empty file judged as the shell judged it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kn_runcase_outcome o;
        judge(cases[i].text, false, 0, &o);
        ck_assert_msg(strcmp(o.mode, cases[i].mode) == 0, "%s: mode %s, want %s", cases[i].text,
                      o.mode, cases[i].mode);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("runcase-verdict");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, first_line_wins);
    tcase_add_test(tc, rules_in_order);
    tcase_add_test(tc, modes_from_words);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
