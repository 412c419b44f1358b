/* Unit tests of the public API that need no robot: every function before
 * hrt_kenaf_init, hrt_strerror, and settings refused at init. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "kenaf.h"

START_TEST(every_function_before_init)
{
    hrt_status st;
    const double four[4] = { 0, 0, 0, 0 };
    ck_assert_int_eq(hrt_go_forward(100), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_turning(90), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_stop(), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_set_crawler_speed(100, 100), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_set_flipper_angle(HRT_FLIPPER_FL, 10), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_set_flipper_angle(7, 10), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_set_flipper_angles(four), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_set_flipper_angles(NULL), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_get_status(&st), HRT_ENOTINIT);
    ck_assert_int_eq(hrt_get_status(NULL), HRT_ENOTINIT);
    ck_assert_int_lt(hrt_is_simulated(), 0);
    ck_assert_double_eq(hrt_time(), (double)HRT_ENOTINIT);
    ck_assert_int_eq(hrt_sleep(0.1), HRT_ENOTINIT);
    hrt_show_status(); /* prints "not connected", must not crash */
    hrt_kenaf_exit();  /* without init: harmless, twice */
    hrt_kenaf_exit();
    ck_assert_int_eq(hrt_stop(), HRT_ENOTINIT);
}
END_TEST

START_TEST(strerror_covers_every_code)
{
    const int codes[] = { HRT_OK,     HRT_ENOTINIT, HRT_ETIMEOUT, HRT_ERANGE,
                          HRT_EESTOP, HRT_EBACKEND, HRT_EINVAL,   HRT_ESYS };
    const char *unknown = hrt_strerror(-999);
    ck_assert_ptr_nonnull(unknown);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = hrt_strerror(codes[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert(strlen(s) > 3);
        ck_assert_str_ne(s, unknown);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(s, hrt_strerror(codes[j]));
    }
    ck_assert_str_eq(hrt_strerror(12345), unknown);
    ck_assert_str_eq(hrt_strerror(-8), unknown);
}
END_TEST

static void init_refuses(const char *var, const char *value)
{
    unsetenv("KENAF_ROBOT");
    unsetenv("KENAF_TIMEOUT_MS");
    unsetenv("KENAF_STATUS_MS");
    setenv(var, value, 1);
    ck_assert_msg(hrt_kenaf_init() == HRT_EINVAL, "%s=%s accepted", var, value);
    ck_assert_int_eq(hrt_stop(), HRT_ENOTINIT);
}

START_TEST(init_refuses_bad_settings)
{
    init_refuses("KENAF_ROBOT", "127.0.0.1:0");
    init_refuses("KENAF_ROBOT", "[::1");
    init_refuses("KENAF_TIMEOUT_MS", "0");
    init_refuses("KENAF_TIMEOUT_MS", "1s");
    init_refuses("KENAF_STATUS_MS", "5");
    init_refuses("KENAF_STATUS_MS", "2000");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("libkenaf_api");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, every_function_before_init);
    tcase_add_test(tc, strerror_covers_every_code);
    tcase_add_test(tc, init_refuses_bad_settings);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
