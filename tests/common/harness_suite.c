/* Running Check suites and the system tests' cases: see harness_suite.h. */
#include "harness_suite.h"

#include <stdlib.h>

#include "harness_proc.h"

int h_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int h_run_cases(const char *suite, const struct h_case *cases, size_t ncases)
{
    Suite *s = suite_create(suite);
    for (size_t i = 0; i < ncases; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, cases[i].setup ? cases[i].setup : h_setup,
                                  cases[i].teardown ? cases[i].teardown : h_teardown);
        tcase_set_timeout(tc, cases[i].timeout_s);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return h_run_suite(s);
}
