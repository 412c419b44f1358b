/* Running Check suites: h_run_suite is the `main` of a test that builds
 * its own Suite; h_run_cases runs cases the way the system tests do, each
 * test in a TCase of its own with h_setup/h_teardown (harness_proc.h) or a
 * fixture of the test's own, so meson can run each (CK_RUN_CASE) under its
 * own timeout. */
#ifndef KN_TEST_HARNESS_SUITE_H
#define KN_TEST_HARNESS_SUITE_H

#include <stddef.h>

#include <check.h>

struct h_case {
    const char *name;
    const TTest *test;
    int timeout_s;
    SFun setup, teardown; /* checked fixture; NULL: h_setup, h_teardown */
};

/* Runs every test of `s` (CK_NORMAL output), frees it; returns the process
 * exit status (EXIT_SUCCESS when every test passed). */
int h_run_suite(Suite *s);

/* Runs the cases as the suite `suite`; returns the process exit status
 * (EXIT_SUCCESS when every test passed). */
int h_run_cases(const char *suite, const struct h_case *cases, size_t ncases);
/* Before h_run_cases: the case `name` cannot run under KN_WRAP
 * (harness_proc.h), for the reason `why`. There h_run_cases leaves it
 * out, saying so, and a run of that case alone (CK_RUN_CASE) exits 77. */
void h_not_wrapped(const char *name, const char *why);

#endif
