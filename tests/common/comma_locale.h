/* A locale whose decimal point is a comma, for the tests that prove the
 * USARSim numbers do not depend on the C library's locale: an installed
 * one, or one compiled with localedef into a private directory that glibc
 * finds through LOCPATH. Prepared once in the parent process (an unchecked
 * fixture), so the directory is removed even when a test fails. */
#ifndef KN_TEST_COMMA_LOCALE_H
#define KN_TEST_COMMA_LOCALE_H

#include <stdbool.h>

/* The unchecked fixture: finds or compiles the locale, then leaves the C
 * locale in force; teardown removes what localedef compiled. */
void h_comma_locale_setup(void);
void h_comma_locale_teardown(void);

/* For the test `test`: false (after saying it skipped) when there is no
 * comma locale; otherwise puts it in force, checks that the C library
 * now prints 1.5 as "1,5", and returns true. */
bool h_comma_locale_enter(const char *test);

#endif
