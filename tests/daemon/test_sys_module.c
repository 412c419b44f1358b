/* kenaf-simd's loadable backend module (kenaf-simd-gz.so, docs/gz.md):
 * a kenaf-simd whose robots do not use gz never maps the module or libzmq
 * (read from its /proc/PID/maps), one with a gz robot maps both and
 * answers the module's "world" command, and a kenaf-simd without the
 * module beside it refuses a gz robot with the module's path and why,
 * while a config without one still passes. Real processes, cheap: no
 * simulator is needed for any of it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "harness_suite.h"

#define MODULE "kenaf-simd-gz.so"

static const char *GZ_ROBOT =
    "[{\"name\": \"g\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"gz\", "
    "\"gz\": {\"world\": \"default\", \"model\": \"kenaf\"}}}]";

/* Whether the running process maps a file whose name contains `what`. */
static bool maps_has(pid_t pid, const char *what)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    const char *text = h_file_text(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    return strstr(text, what) != NULL;
}

START_TEST(no_gz_robot_no_module)
{
    struct h_standin sim;
    h_standin_start(&sim, 0, "standin", NULL);
    static char robots[1200];
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    struct h_daemon d;
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_msg(!maps_has(d.proc.pid, MODULE), "the gz module is mapped without a gz robot");
    ck_assert_msg(!maps_has(d.proc.pid, "libzmq"), "libzmq is mapped without a gz robot");
    ck_assert_int_eq((int)h_stat(&d, "backend_module_failures"), 0);
    /* the module's command, asked of a kenaf-simd without it */
    static char out[4096];
    char *argv[] = {
        (char *)getenv("KN_SIMD"), "--command", "world g pause", "--socket", d.stats, NULL
    };
    ck_assert_int_eq(h_run(argv, out, sizeof out, NULL, 0, H_LONG_MS), 1);
    ck_assert_msg(strstr(out, "no gz robot runs"), "world without the module: %s", out);
    ck_assert_msg(!maps_has(d.proc.pid, MODULE), "the world command loaded the module");
}
END_TEST

START_TEST(gz_robot_loads_module)
{
    struct h_daemon d;
    h_daemon_start(&d, GZ_ROBOT);
    ck_assert_msg(maps_has(d.proc.pid, MODULE), "a gz robot and the module is not mapped");
    ck_assert_msg(maps_has(d.proc.pid, "libzmq"), "a gz robot and libzmq is not mapped");
    /* the module's own command reaches it (no world found: refused) */
    static char out[4096];
    char *argv[] = {
        (char *)getenv("KN_SIMD"), "--command", "world g pause", "--socket", d.stats, NULL
    };
    h_run(argv, out, sizeof out, NULL, 0, H_LONG_MS);
    ck_assert_msg(strstr(out, "\"robot\"") && strstr(out, "\"g\""),
                  "world answered by the module: %s", out);
    ck_assert_int_eq((int)h_stat(&d, "backend_module_failures"), 0);
}
END_TEST

/* A copy of kenaf-simd in the scratch directory has no module beside it
 * and looks in the install's directory next ($KN_MODULE_INSTALLED), which
 * a test machine may have: then this case cannot show the refusal. */
START_TEST(missing_module_refused)
{
    const char *installed = getenv("KN_MODULE_INSTALLED");
    if (installed && access(installed, F_OK) == 0) {
        printf("missing_module_refused: %s is installed; not applicable\n", installed);
        return;
    }
    const char *copy = h_path("kenaf-simd");
    static char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", getenv("KN_SIMD"), copy);
    ck_assert_int_eq(system(cmd), 0);
    const char *gz = h_path("gz.json");
    static char text[1024];
    snprintf(text, sizeof text, "{\"robots\": %s}", GZ_ROBOT);
    h_write_file(gz, text);
    static char out[65536], err[8192];
    char *a1[] = { (char *)copy, "--check-config", "--config", (char *)gz, NULL };
    ck_assert_int_eq(h_run(a1, out, sizeof out, err, sizeof err, H_LONG_MS), 1);
    ck_assert_msg(strstr(err, "$.robots[0].backend.type") && strstr(err, MODULE) &&
                      strstr(err, "No such file or directory"),
                  "refusal: %s", err);
    /* said once by the log, once as the config's problem */
    ck_assert_int_eq(h_log_count(h_path("run.stderr"), MODULE), 2);

    const char *plain = h_path("plain.json");
    h_write_file(plain, "{\"robots\":[{\"name\":\"r1\",\"listen\":\"127.0.0.1:0\","
                        "\"backend\":{\"type\":\"standin\",\"address\":\"127.0.0.1:7000\"}}]}");
    char *a2[] = { (char *)copy, "--check-config", "--config", (char *)plain, NULL };
    ck_assert_int_eq(h_run(a2, out, sizeof out, err, sizeof err, H_LONG_MS), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kenaf-simd backend module");
    TCase *tc = tcase_create("module");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, no_gz_robot_no_module);
    tcase_add_test(tc, gz_robot_loads_module);
    tcase_add_test(tc, missing_module_refused);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
