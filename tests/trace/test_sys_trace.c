/* System test of kenaf-trace against kenaf-simd with its spawned engine: a
 * recording ended by SIGTERM or SIGINT writes both files, cancels its
 * subscription and exits 0; a bad address, period or output path is
 * refused at once with the reason (the errno text and the path for
 * files). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "plotcheck.h"
#include "xmlread.h"

static struct h_daemon d;

static void start_robot(void)
{
    h_daemon_start(&d, "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\","
                       "\"backend\":{\"type\":\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]");
    h_wait_backend_fresh(&d, 0, 30000);
}

/* Runs kenaf-trace with up to six arguments and extra environment. */
static void trace(struct h_proc *p, char *const env[], const char *a1, const char *a2,
                  const char *a3, const char *a4, const char *a5, const char *a6)
{
    const char *exe = getenv("KN_TRACE");
    ck_assert_msg(exe != NULL, "KN_TRACE not set");
    char *argv[8] = { (char *)exe, (char *)a1, (char *)a2, (char *)a3,
                      (char *)a4,  (char *)a5, (char *)a6, NULL };
    h_spawn(p, argv, env, "trace.stderr");
}

/* The exit status of a finished kenaf-trace, -1 when it did not exit. */
static int status(struct h_proc *p)
{
    int st = h_wait_exit(p, H_LONG_MS);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void ends_cleanly_on(int sig)
{
    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d.port[0]);
    const char *csv = h_path("run.csv"), *svg = h_path("run.svg");
    struct h_proc p;
    double pushed = h_stat(&d, "robots.0.subscriptions.pushes"); /* by earlier cases */
    trace(&p, NULL, "--robot", robot, "--csv", csv, "--svg", svg);
    ck_assert(h_wait_stat(&d, "robots.0.subscriptions.active", 1, H_LONG_MS));
    /* a few STATUS at 50 ms, pushed before the signal however slow */
    ck_assert(h_wait_stat(&d, "robots.0.subscriptions.pushes", pushed + 10, H_LONG_MS));
    h_signal(&p, sig);
    ck_assert_int_eq(status(&p), 0);
    ck_assert(h_wait_stat_eq(&d, "robots.0.subscriptions.active", 0, H_LONG_MS));
    const char *text = h_file_text(csv);
    int rows = 0;
    for (const char *c = strchr(text, '\n'); c; c = strchr(c + 1, '\n'))
        rows++;
    ck_assert_msg(rows > 3, "%d CSV rows:\n%s", rows, text);
    size_t len;
    char *buf = x_read_file(svg, &len);
    ck_assert_ptr_nonnull(buf);
    struct x_doc doc;
    ck_assert_msg(x_parse(buf, len, &doc) == 0, "%s", doc.err);
    const char *why = pc_check_numbers(&doc);
    ck_assert_msg(why == NULL, "%s", why);
    ck_assert_int_ge(x_find(&doc, 0, "g", "axis"), 0);
    x_free(&doc);
    free(buf);
}

START_TEST(sigterm_and_sigint_write_the_files)
{
    start_robot();
    ends_cleanly_on(SIGTERM);
    ends_cleanly_on(SIGINT);
}
END_TEST

START_TEST(refusals_say_why)
{
    struct h_proc p;
    trace(&p, NULL, "--robot", "[::1", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status(&p), 1);
    ck_assert_msg(strstr(h_stderr(&p), "missing ']'"), "%s", h_stderr(&p));

    char *env[] = { "KENAF_ROBOT=127.0.0.1:99999", NULL };
    trace(&p, env, NULL, NULL, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status(&p), 1);
    ck_assert_msg(strstr(h_stderr(&p), "127.0.0.1:99999"), "%s", h_stderr(&p));

    trace(&p, NULL, "--period", "5", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status(&p), 2);
    ck_assert_msg(strstr(h_stderr(&p), "--period takes 10..1000 ms"), "%s", h_stderr(&p));

    trace(&p, NULL, "--footprint", "wide", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status(&p), 2);

    trace(&p, NULL, "stray", NULL, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status(&p), 2);

    /* a file that cannot be written fails before any recording */
    const char *bad = h_path("no-such-dir/out.svg");
    trace(&p, NULL, "--robot", "127.0.0.1:9", "--svg", bad, NULL, NULL);
    ck_assert_int_eq(status(&p), 1);
    char want[512];
    snprintf(want, sizeof want, "cannot write %s: No such file or directory", bad);
    ck_assert_msg(strstr(h_stderr(&p), want), "%s", h_stderr(&p));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "signals", sigterm_and_sigint_write_the_files, 120, NULL, NULL },
        { "refusals", refusals_say_why, 60, NULL, NULL },
    };
    return h_run_cases("kenaf-trace", cases, sizeof cases / sizeof cases[0]);
}
