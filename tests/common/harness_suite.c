/* Running Check suites and the system tests' cases: see harness_suite.h. */
#include "harness_suite.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_proc.h"

int h_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define MAX_NOT_WRAPPED 8

static struct {
    const char *name, *why;
} not_wrapped[MAX_NOT_WRAPPED];
static size_t n_not_wrapped;

void h_not_wrapped(const char *name, const char *why)
{
    if (n_not_wrapped < MAX_NOT_WRAPPED) {
        not_wrapped[n_not_wrapped].name = name;
        not_wrapped[n_not_wrapped++].why = why;
    }
}

/* Why the case cannot run under KN_WRAP, or NULL. */
static const char *why_not_wrapped(const char *name)
{
    for (size_t i = 0; i < n_not_wrapped; i++)
        if (strcmp(not_wrapped[i].name, name) == 0)
            return not_wrapped[i].why;
    return NULL;
}

int h_run_cases(const char *suite, const struct h_case *cases, size_t ncases)
{
    const char *only = getenv("CK_RUN_CASE");
    bool wrapped = h_wrapped();
    Suite *s = NULL;
    for (size_t i = 0; i < ncases; i++) {
        const char *why = wrapped ? why_not_wrapped(cases[i].name) : NULL;
        if (why) {
            bool alone = only && strcmp(only, cases[i].name) == 0;
            printf("%s: %s %s under KN_WRAP: %s\n", suite, cases[i].name,
                   alone ? "skipped" : "left out", why);
            if (alone)
                return 77; /* nothing of Check's made yet */
            continue;
        }
        if (!s)
            s = suite_create(suite);
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, cases[i].setup ? cases[i].setup : h_setup,
                                  cases[i].teardown ? cases[i].teardown : h_teardown);
        tcase_set_timeout(tc, cases[i].timeout_s);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return h_run_suite(s ? s : suite_create(suite));
}
