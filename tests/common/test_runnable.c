/* Unit tests of kn_runnable_check (common/runnable.h) on real files in a
 * directory of the test's own: a path to a missing file, to a directory,
 * to a file without the execute bit, a bare name found in PATH (also in
 * an empty entry, the current directory), and one PATH lacks. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "runnable.h"

static char dir[PATH_MAX];

static void make_file(const char *name, mode_t mode)
{
    const char *p = h_path(name);
    h_write_file(p, "#!/bin/sh\n");
    ck_assert_int_eq(chmod(p, mode), 0);
}

/* the harness's scratch directory for each case (gone after it) */
static void setup(void)
{
    h_setup();
    snprintf(dir, sizeof dir, "%s", h_path(""));
    size_t n = strlen(dir);
    if (n > 1 && dir[n - 1] == '/')
        dir[n - 1] = '\0';
    make_file("ctl", 0755);
    make_file("plain", 0644);
}

static void teardown(void)
{
    h_teardown();
}

START_TEST(paths)
{
    char why[PATH_MAX + 128], p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/ctl", dir);
    ck_assert_int_eq(kn_runnable_check(p, NULL, why, sizeof why), 0);

    snprintf(p, sizeof p, "%s/gone", dir);
    ck_assert_int_eq(kn_runnable_check(p, NULL, why, sizeof why), -1);
    ck_assert_str_eq(strstr(why, ": no such file"), ": no such file");
    ck_assert_int_eq(strncmp(why, "cannot run ", 11), 0);

    snprintf(p, sizeof p, "%s/plain", dir);
    ck_assert_int_eq(kn_runnable_check(p, NULL, why, sizeof why), -1);
    ck_assert_str_eq(strstr(why, ": not an executable file"), ": not an executable file");

    ck_assert_int_eq(kn_runnable_check(dir, NULL, why, sizeof why), -1);
    ck_assert_str_eq(strstr(why, ": not an executable file"), ": not an executable file");
}
END_TEST

START_TEST(bare_names)
{
    char why[PATH_MAX + 128], path[PATH_MAX + 64];
    snprintf(path, sizeof path, "/nonexistent-dir:%s", dir);
    ck_assert_int_eq(kn_runnable_check("ctl", path, why, sizeof why), 0);
    /* a file without the execute bit, or a directory, is not found */
    ck_assert_int_eq(kn_runnable_check("plain", path, why, sizeof why), -1);
    ck_assert_str_eq(why, "cannot run plain: not found in PATH");
    ck_assert_int_eq(kn_runnable_check("ctl", "/nonexistent-dir", why, sizeof why), -1);
    ck_assert_str_eq(why, "cannot run ctl: not found in PATH");
    /* an empty entry is the current directory */
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    ck_assert_int_eq(kn_runnable_check("ctl", "/nonexistent-dir:", why, sizeof why), 0);
    ck_assert_int_eq(kn_runnable_check("ctl", "/nonexistent-dir", why, sizeof why), -1);
    ck_assert_int_eq(chdir(cwd), 0);
    /* no PATH: execvp's default list */
    ck_assert_int_eq(kn_runnable_check("sh", NULL, why, sizeof why), 0);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "paths", paths, 30, setup, teardown },
        { "bare_names", bare_names, 30, setup, teardown },
    };
    return h_run_cases("runnable", cases, sizeof cases / sizeof cases[0]);
}
