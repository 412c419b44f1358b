/* A scenario's fleet ("robots", scenario_robots.c): the robots' names and
 * starts are read as written; every mistake in the list is an error that
 * names the file and the entry (both "start" and "robots", a name twice,
 * a bad name, a robot without a start, an unknown key, a scripted
 * controller); without the list, each robot named on the command line
 * starts 3 m to the left of the one before it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "scenario.h"

#ifndef KN_TEST_CONFIG_DIR
#define KN_TEST_CONFIG_DIR "config"
#endif

/* A scenario file: the fixed head, then `body` (keys, no braces). */
static const char *write_scenario(const char *body)
{
    static char path[400];
    snprintf(path, sizeof path, "%s", h_path("s.json")); /* the harness's scratch directory */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"name\": \"fleet\", \"robot\": \"%s/robots/kenaf.json\","
            " \"terrain\": {\"file\": \"%s/terrains/flat.json\"},"
            " \"criterion\": {\"type\": \"rotate\", \"yaw_rad\": 0, \"tol_rad\": 1,"
            " \"drift_m\": 1}, %s}\n",
            KN_TEST_CONFIG_DIR, KN_TEST_CONFIG_DIR, body);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

#define EXT "\"controller\": {\"type\": \"external\"}"

START_TEST(robots_read)
{
    struct kn_scenario sc;
    char err[768] = "";
    const char *p = write_scenario(EXT ", \"robots\": ["
                                       "{\"name\": \"alpha\", \"start\": {\"x\": 1, \"y\": 2}},"
                                       "{\"name\": \"b-2_X\", \"start\": {\"x\": -3, \"yaw_deg\": "
                                       "90, \"flippers_deg\": [10, 10, 0, 0]}}]");
    ck_assert_msg(kn_scenario_load(p, 0, &sc, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sc.nrobots, 2);
    ck_assert_str_eq(sc.robots[0].name, "alpha");
    ck_assert_double_eq_tol(sc.robots[0].start.x, 1, 1e-12);
    ck_assert_double_eq_tol(sc.robots[0].start.y, 2, 1e-12);
    ck_assert_str_eq(sc.robots[1].name, "b-2_X");
    ck_assert_double_eq_tol(sc.robots[1].start.yaw, M_PI / 2, 1e-12);
    ck_assert_double_eq_tol(sc.robots[1].start_flip[0], 10 * M_PI / 180, 1e-12);
    struct kn_pose pose;
    double flip[KN_NFLIPPERS];
    ck_assert_int_eq(kn_scenario_fleet_start(&sc, "b-2_X", 0, &pose, flip), 1);
    ck_assert_double_eq_tol(pose.x, -3, 1e-12);
    ck_assert_int_eq(kn_scenario_fleet_start(&sc, "charlie", 2, &pose, flip), -1);
    kn_scenario_free(&sc);
}
END_TEST

START_TEST(default_starts)
{
    struct kn_scenario sc;
    char err[768] = "";
    const char *p = write_scenario(EXT ", \"start\": {\"x\": 1, \"y\": 0, \"yaw_deg\": 90}");
    ck_assert_msg(kn_scenario_load(p, 0, &sc, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sc.nrobots, 0);
    struct kn_pose pose;
    double flip[KN_NFLIPPERS];
    ck_assert_int_eq(kn_scenario_fleet_start(&sc, "a", 0, &pose, flip), 0);
    ck_assert_double_eq_tol(pose.x, 1, 1e-12);
    ck_assert_double_eq_tol(pose.y, 0, 1e-12);
    /* heading +y: "to the left" is -x */
    ck_assert_int_eq(kn_scenario_fleet_start(&sc, "b", 2, &pose, flip), 2);
    ck_assert_double_eq_tol(pose.x, 1 - 6, 1e-9);
    ck_assert_double_eq_tol(pose.y, 0, 1e-9);
    ck_assert_double_eq_tol(pose.yaw, M_PI / 2, 1e-12);
    kn_scenario_free(&sc);
}
END_TEST

/* Each bad list with a piece of the error it must give. */
static const struct {
    const char *body, *want;
} bad[] = {
    { EXT ", \"start\": {}, \"robots\": [{\"name\": \"a\", \"start\": {}}]", "exclude each other" },
    { EXT ", \"robots\": [{\"name\": \"a\", \"start\": {}}, {\"name\": \"a\", \"start\": {}}]",
      "robots[1]: the name \"a\" is also robots[0]'s" },
    { EXT ", \"robots\": [{\"name\": \"a b\", \"start\": {}}]", "robots[0]: \"name\" must be" },
    { EXT ", \"robots\": [{\"name\": \"\", \"start\": {}}]", "robots[0]: \"name\" must be" },
    { EXT ", \"robots\": [{\"start\": {}}]", "robots[0]: \"name\" must be" },
    { EXT ", \"robots\": [{\"name\": \"a\"}]", "robots[0] (a): missing object \"start\"" },
    { EXT ", \"robots\": [{\"name\": \"a\", \"start\": {\"yaw\": 1}}]", "start" },
    { EXT ", \"robots\": [{\"name\": \"a\", \"start\": {}, \"pose\": 1}]", "pose" },
    { EXT ", \"robots\": []", "array of 1..48 robots" },
    { EXT ", \"robots\": {\"name\": \"a\"}", "array of 1..48 robots" },
    { EXT ", \"robots\": [7]", "robots[0]: must be an object" },
    { "\"controller\": {\"type\": \"script\", \"script\": []}, \"robots\": [{\"name\": \"a\", "
      "\"start\": {}}]",
      "needs an \"external\" controller" },
};

START_TEST(robots_refused)
{
    struct kn_scenario sc;
    char err[768] = "";
    const char *p = write_scenario(bad[_i].body);
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad[_i].want) != NULL, "case %d: want \"%s\" in \"%s\"", _i,
                  bad[_i].want, err);
    ck_assert_msg(strstr(err, p) != NULL, "case %d: the file is not named: %s", _i, err);
}
END_TEST

/* one more than an engine world takes */
START_TEST(too_many_refused)
{
    char body[8192];
    size_t n = (size_t)snprintf(body, sizeof body, "%s, \"robots\": [", EXT);
    for (int i = 0; i < KN_ENGINE_MAX_ROBOTS + 1; i++)
        n += (size_t)snprintf(body + n, sizeof body - n, "%s{\"name\": \"r%d\", \"start\": {}}",
                              i ? "," : "", i);
    snprintf(body + n, sizeof body - n, "]");
    struct kn_scenario sc;
    char err[768] = "";
    ck_assert_int_eq(kn_scenario_load(write_scenario(body), 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "1..48 robots") != NULL, "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-scenario-robots");
    TCase *tc = tcase_create("robots");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_add_test(tc, robots_read);
    tcase_add_test(tc, default_starts);
    tcase_add_loop_test(tc, robots_refused, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, too_many_refused);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
