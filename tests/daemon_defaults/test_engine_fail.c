/* A spawned engine that fails at start-up (here a stand-in executable
 * that prints one error line and exits 2, as kenaf-engine does for a file
 * it cannot load): kenaf-simd logs the engine's own line, counts each
 * failure in the stats, retries with a growing back-off instead of a
 * tight loop, and `kenaf-simd --wait-ready` gives up after its timeout
 * naming the robot and the engine's error. Real processes and sockets. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define ENGINE_LINE "kenaf-engine: --terrain: cannot load the world (test)"

static const char *failing_engine(void)
{
    static char path[256];
    snprintf(path, sizeof path, "%s", h_path("failing-engine"));
    h_write_file(path, "#!/bin/sh\necho '" ENGINE_LINE "' >&2\nexit 2\n");
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

START_TEST(failing_engine_backs_off)
{
    char robots[600];
    snprintf(robots, sizeof robots,
             "[{\"name\": \"e\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\","
             " \"engine\": {\"path\": \"%s\"}}}]",
             failing_engine());
    static struct h_daemon d;
    h_daemon_start(&d, robots);
    const char *p = "robots.0.backend.engine.process.";
    char key[128];
    snprintf(key, sizeof key, "%sstart_failures", p);
    ck_assert_msg(h_wait_stat(&d, key, 3, H_LONG_MS), "fewer than 3 start-up failures:\n%s",
                  h_stderr(&d.proc));
    /* 0.2, 0.4, 0.8, 1.6 s ... between tries: a tight loop would make hundreds */
    h_sleep_ms(1500);
    /* every spawn failed: failures read first, so a try that starts
     * between the two reads (a loaded machine) is one spawn ahead */
    snprintf(key, sizeof key, "%sfailures_in_a_row", p);
    double failures = h_stat(&d, key);
    snprintf(key, sizeof key, "%sspawns", p);
    double spawns = h_stat(&d, key);
    ck_assert_msg(spawns >= 3 && spawns <= 7, "%g spawns in about 3 s", spawns);
    ck_assert_msg(spawns == failures || spawns == failures + 1, "%g spawns, %g failures in a row",
                  spawns, failures);
    snprintf(key, sizeof key, "%snext_retry_s", p);
    ck_assert_double_le(h_stat(&d, key), 60.0);
    snprintf(key, sizeof key, "%slast_stderr", p);
    ck_assert_str_eq(h_stat_str(&d, key), ENGINE_LINE);
    snprintf(key, sizeof key, "%slast_error", p);
    const char *le = h_stat_str(&d, key);
    ck_assert_msg(strstr(le, "failed at start-up (exited with status 2") && strstr(le, ENGINE_LINE),
                  "%s", le);
    const char *log = h_stderr(&d.proc);
    ck_assert_msg(strstr(log, "start-up failure 3 in a row") && strstr(log, ENGINE_LINE), "%s",
                  log);

    /* --wait-ready: not up, and says why */
    static struct h_proc w;
    char *argv[] = { getenv("KN_SIMD"), "--wait-ready", "--timeout", "0.5",
                     "--socket",        d.stats,        NULL };
    h_spawn(&w, argv, NULL, "wait.stderr");
    int st = h_wait_exit(&w, H_LONG_MS);
    ck_assert(st != -1 && WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    ck_assert_msg(strstr(h_stderr(&w), "not ready after 0.5 s: robot e: simulator link ") &&
                      strstr(h_stderr(&w), ENGINE_LINE),
                  "%s", h_stderr(&w));
}
END_TEST

START_TEST(wait_ready_without_a_daemon)
{
    static struct h_proc w;
    char *argv[] = { getenv("KN_SIMD"),
                     "--wait-ready",
                     "--timeout",
                     "0.3",
                     "--socket",
                     (char *)h_path("none.sock"),
                     NULL };
    h_spawn(&w, argv, NULL, "wait.stderr");
    int st = h_wait_exit(&w, H_LONG_MS);
    ck_assert(st != -1 && WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    ck_assert_msg(strstr(h_stderr(&w), "not ready after 0.3 s: no daemon answers: cannot connect "
                                       "to the stats socket ") &&
                      strstr(h_stderr(&w), "none.sock: No such file or directory"),
                  "%s", h_stderr(&w));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "failing_engine_backs_off", failing_engine_backs_off, 60, NULL, NULL },
        { "wait_ready_without_a_daemon", wait_ready_without_a_daemon, 30, NULL, NULL },
    };
    return h_run_cases("daemon-engine-fail", cases, sizeof cases / sizeof cases[0]);
}
