/* USARSim number tests: the strict decimal reader, the fixed-point writer
 * (against the C library's own printf in the C locale, and on the edge
 * cases of docs/usarsim.md, "Number formatting"), and both under a locale whose
 * decimal point is a comma. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comma_locale.h"
#include "harness_suite.h"
#include "real_lines.h"

static double num(const char *s)
{
    double d = 12345.0;
    enum kn_usar_result r = kn_usar_parse_double(kn_usar_s(s), &d);
    ck_assert_msg(r == KN_USAR_OK, "parse \"%s\": %s", s, kn_usar_strerror(r));
    return d;
}

static const char *fx(double v, int dec, enum kn_usar_round mode)
{
    static char buf[64];
    int n = kn_usar_fmt_fixed(buf, sizeof buf, v, dec, mode);
    ck_assert_msg(n > 0, "format %.17g: %s", v, kn_usar_strerror((enum kn_usar_result) - n));
    ck_assert_uint_eq(strlen(buf), (size_t)n);
    return buf;
}

START_TEST(parse_double_accepts)
{
    ck_assert(num("1") == 1.0);
    ck_assert(num("-1.5") == -1.5);
    ck_assert(num("+2") == 2.0);
    ck_assert(num(".5") == 0.5);
    ck_assert(num("5.") == 5.0);
    ck_assert(num("1e-9") == 1e-9);
    ck_assert(num("1E3") == 1000.0);
    ck_assert(num("2.5e+2") == 250.0);
    ck_assert(num("395.3833") == 395.3833);
    ck_assert(num("0.1") == 0.1); /* correctly rounded, not accumulated */
    ck_assert(num("-20.00") == -20.0);
    double z = num("-0.000");
    ck_assert(z == 0.0 && signbit(z));
    ck_assert(num("1e-400") == 0.0); /* underflow is a tiny number, not an error */
    ck_assert(num("00000000000000000000000000000000000000000000000000000000001.5") == 1.5);
}
END_TEST

START_TEST(parse_double_rejects)
{
    const char *bad[] = {
        "",    "-",   "+",    ".",        "1,00",  "1.0.0", " 1",      "1 ",           "nan",
        "NaN", "inf", "-inf", "infinity", "0x10",  "1e",    "1e+",     "1e999",        "-1e400",
        "--1", "1f",  "e5",   "1..2",     "1e5.5", "true",  "1.0,2.0", "\xef\xbc\x91",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double d = 7.0;
        ck_assert_msg(kn_usar_parse_double(kn_usar_s(bad[i]), &d) == KN_USAR_EVALUE,
                      "accepted \"%s\"", bad[i]);
        ck_assert(d == 7.0);
    }
    char longnum[200];
    memset(longnum, '1', sizeof longnum - 1);
    longnum[sizeof longnum - 1] = '\0';
    double d;
    ck_assert_int_eq(kn_usar_parse_double(kn_usar_s(longnum), &d), KN_USAR_EVALUE);
    /* a view is not NUL-terminated: only its n bytes count */
    struct kn_usar_str part = { "12.5xyz", 4 };
    ck_assert_int_eq(kn_usar_parse_double(part, &d), KN_USAR_OK);
    ck_assert(d == 12.5);
}
END_TEST

START_TEST(parse_int_bool)
{
    int64_t i;
    ck_assert_int_eq(kn_usar_parse_int(kn_usar_s("0"), &i), KN_USAR_OK);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(kn_usar_parse_int(kn_usar_s("-5"), &i), KN_USAR_OK);
    ck_assert_int_eq(i, -5);
    ck_assert_int_eq(kn_usar_parse_int(kn_usar_s("+7"), &i), KN_USAR_OK);
    ck_assert_int_eq(i, 7);
    ck_assert_int_eq(kn_usar_parse_int(kn_usar_s("9223372036854775807"), &i), KN_USAR_OK);
    ck_assert(i == INT64_MAX);
    ck_assert_int_eq(kn_usar_parse_int(kn_usar_s("-9223372036854775808"), &i), KN_USAR_OK);
    ck_assert(i == INT64_MIN);
    const char *bad[] = {
        "9223372036854775808",    "-9223372036854775809", "1.0", "", "+", "-", "1a", " 1",
        "99999999999999999999999"
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_msg(kn_usar_parse_int(kn_usar_s(bad[k]), &i) == KN_USAR_EVALUE, "accepted %s",
                      bad[k]);

    const char *yes[] = { "true", "True", "TRUE", "1" };
    const char *no[] = { "false", "False", "FALSE", "0" };
    for (int k = 0; k < 4; k++) {
        bool b = false;
        ck_assert_int_eq(kn_usar_parse_bool(kn_usar_s(yes[k]), &b), KN_USAR_OK);
        ck_assert(b);
        ck_assert_int_eq(kn_usar_parse_bool(kn_usar_s(no[k]), &b), KN_USAR_OK);
        ck_assert(!b);
    }
    const char *nb[] = { "yes", "", "2", "tru", "truee", "01" };
    for (size_t k = 0; k < sizeof nb / sizeof nb[0]; k++) {
        bool b;
        ck_assert_int_eq(kn_usar_parse_bool(kn_usar_s(nb[k]), &b), KN_USAR_EVALUE);
    }
}
END_TEST

START_TEST(parse_vectors_and_lists)
{
    double v[3];
    ck_assert_int_eq(kn_usar_parse_vec3(kn_usar_s("4.50,1.90,1.85"), v), KN_USAR_OK);
    ck_assert(v[0] == 4.5 && v[1] == 1.9 && v[2] == 1.85);
    ck_assert_int_eq(kn_usar_parse_vec3(kn_usar_s("-0.000,-0.000,0.017"), v), KN_USAR_OK);
    ck_assert(signbit(v[0]) && signbit(v[1]) && v[2] == 0.017);
    const char *bad[] = { "1 2 3", "1,2",     "1,2,3,4", "1,,3",  "1,2,3,",
                          ",1,2",  "1, 2, 3", "",        "1;2;3", "a,b,c" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(kn_usar_parse_vec3(kn_usar_s(bad[i]), v) == KN_USAR_EVALUE, "accepted %s",
                      bad[i]);
    double list[3];
    size_t n = 99, dropped = 99;
    ck_assert_int_eq(kn_usar_parse_list(kn_usar_s("1,2,3,4,5"), list, 3, &n, &dropped), KN_USAR_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(dropped, 2);
    ck_assert(list[2] == 3.0);
    ck_assert_int_eq(kn_usar_parse_list(kn_usar_s("7"), list, 3, &n, NULL), KN_USAR_OK);
    ck_assert_uint_eq(n, 1);
    /* values past the cap are still checked */
    ck_assert_int_eq(kn_usar_parse_list(kn_usar_s("1,2,3,4,x"), list, 3, &n, &dropped),
                     KN_USAR_EVALUE);
}
END_TEST

START_TEST(format_edge_cases)
{
    /* rounding at the 4th decimal, as client commands are written */
    ck_assert_str_eq(fx(0.00005, 4, KN_USAR_ROUND), "0.0001"); /* the double is just above */
    ck_assert_str_eq(fx(0.00015, 4, KN_USAR_ROUND), "0.0001"); /* the double is just below */
    ck_assert_str_eq(fx(0.00004999, 4, KN_USAR_ROUND), "0.0000");
    ck_assert_str_eq(fx(1.00005, 4, KN_USAR_ROUND), "1.0001");
    ck_assert_str_eq(fx(9.99995, 4, KN_USAR_ROUND), "10.0000");
    ck_assert_str_eq(fx(0.99999999, 4, KN_USAR_ROUND), "1.0000");
    ck_assert_str_eq(fx(-0.99996, 4, KN_USAR_ROUND), "-1.0000");
    /* exact binary ties go to even, like printf */
    ck_assert_str_eq(fx(0.5, 0, KN_USAR_ROUND), "0");
    ck_assert_str_eq(fx(1.5, 0, KN_USAR_ROUND), "2");
    ck_assert_str_eq(fx(2.5, 0, KN_USAR_ROUND), "2");
    ck_assert_str_eq(fx(0.125, 2, KN_USAR_ROUND), "0.12");
    ck_assert_str_eq(fx(0.375, 2, KN_USAR_ROUND), "0.38");
    ck_assert_str_eq(fx(-2.5, 0, KN_USAR_ROUND), "-2");
    /* negative zero and negatives that round to zero keep the sign */
    ck_assert_str_eq(fx(0.0, 4, KN_USAR_ROUND), "0.0000");
    ck_assert_str_eq(fx(-0.0, 4, KN_USAR_ROUND), "-0.0000");
    ck_assert_str_eq(fx(-0.00001, 3, KN_USAR_ROUND), "-0.000");
    ck_assert_str_eq(fx(-0.00001, 4, KN_USAR_TRUNC), "-0.0000");
    ck_assert_str_eq(fx(-0.0, 4, KN_USAR_TRUNC), "0.0000"); /* FloatString tests Value < 0 */
    /* tiny and large */
    ck_assert_str_eq(fx(1e-9, 9, KN_USAR_ROUND), "0.000000001");
    ck_assert_str_eq(fx(1e-9, 4, KN_USAR_ROUND), "0.0000");
    ck_assert_str_eq(fx(5e-324, 9, KN_USAR_ROUND), "0.000000000");
    ck_assert_str_eq(fx(123456789012345.0, 0, KN_USAR_ROUND), "123456789012345");
    ck_assert_str_eq(fx(-999999999999999.0, 2, KN_USAR_ROUND), "-999999999999999.00");
    ck_assert_str_eq(fx(99999.0, 0, KN_USAR_ROUND), "99999");
    ck_assert_str_eq(fx(477.7582, 4, KN_USAR_ROUND), "477.7582");
    ck_assert_str_eq(fx(395.38, 2, KN_USAR_ROUND), "395.38");
    ck_assert_str_eq(fx(0.25, 9, KN_USAR_ROUND), "0.250000000");
    /* USARSim's UnitsConverter truncates: the captured CONF/GEO values */
    ck_assert_str_eq(fx(1.3, 4, KN_USAR_TRUNC), "1.2999");
    ck_assert_str_eq(fx(1.3, 4, KN_USAR_ROUND), "1.3000");
    /* 11.9f is 11.89999962: UDK itself prints 11.8999 for it; the captured
     * "Mass 11.9000" came from a mass a little above 11.9 */
    ck_assert_str_eq(fx(11.9, 4, KN_USAR_TRUNC), "11.8999");
    ck_assert_str_eq(fx(11.90001, 4, KN_USAR_TRUNC), "11.9000");
    ck_assert_str_eq(fx(0.248, 4, KN_USAR_TRUNC), "0.2480");
    ck_assert_str_eq(fx(0.36, 4, KN_USAR_TRUNC), "0.3600");
    ck_assert_str_eq(fx(0.098, 4, KN_USAR_TRUNC), "0.0980");
    ck_assert_str_eq(fx(50000.0, 4, KN_USAR_TRUNC), "50000.0000");
    ck_assert_str_eq(fx(-1.3, 4, KN_USAR_TRUNC), "-1.2999");
    ck_assert_str_eq(fx(0.99999, 4, KN_USAR_TRUNC), "0.9999");
    ck_assert_str_eq(fx(0.2999, 4, KN_USAR_TRUNC), "0.2999");
    /* 6.283f is 6.28299999, but the float product rounds to 2830 first */
    ck_assert_str_eq(fx(6.283, 4, KN_USAR_TRUNC), "6.2830");
    ck_assert_str_eq(fx(123456789.0, 1, KN_USAR_TRUNC), "123456792.0"); /* single precision */
}
END_TEST

START_TEST(format_refuses)
{
    char buf[64];
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, NAN, 4, KN_USAR_ROUND), -KN_USAR_ERANGE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, INFINITY, 4, KN_USAR_ROUND),
                     -KN_USAR_ERANGE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, -INFINITY, 0, KN_USAR_TRUNC),
                     -KN_USAR_ERANGE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, 1e15, 0, KN_USAR_ROUND), -KN_USAR_ERANGE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, -1e300, 0, KN_USAR_ROUND), -KN_USAR_ERANGE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, 1.0, 10, KN_USAR_ROUND), -KN_USAR_EARG);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, 1.0, -1, KN_USAR_ROUND), -KN_USAR_EARG);
    /* "-1.50" needs 6 bytes with its NUL */
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, 5, -1.5, 2, KN_USAR_ROUND), -KN_USAR_ENOSPACE);
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, 6, -1.5, 2, KN_USAR_ROUND), 5);
    ck_assert_str_eq(buf, "-1.50");
    ck_assert_int_eq(kn_usar_fmt_fixed(NULL, 0, 1.0, 2, KN_USAR_ROUND), -KN_USAR_ENOSPACE);
}
END_TEST

/* Deterministic values over many magnitudes, with the awkward ones mixed in. */
static double sample(uint64_t *state, int k)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = *state >> 11;
    double unit = (double)r / 9007199254740992.0;   /* [0, 1) */
    double mag = pow(10.0, (double)(k % 20) - 6.0); /* 1e-6 .. 1e13 */
    double v = unit * mag;
    switch (k % 7) {
    case 0: return -v;
    case 1: return floor(v * 1000.0 + 0.5) / 1000.0 + 0.0005; /* near a decimal tie */
    case 2: return (double)(r % 2000) / 16.0;                 /* exact binary ties */
    default: return (k & 1) ? v : -v;
    }
}

START_TEST(format_matches_c_printf)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    ck_assert(c != (locale_t)0);
    locale_t old = uselocale(c);
    uint64_t state = 42;
    char mine[64], ref[64];
    for (int k = 0; k < 60000; k++) {
        double v = sample(&state, k);
        int dec = k % (KN_USAR_MAX_DECIMALS + 1);
        int n = kn_usar_fmt_fixed(mine, sizeof mine, v, dec, KN_USAR_ROUND);
        snprintf(ref, sizeof ref, "%.*f", dec, v);
        ck_assert_msg(n > 0 && strcmp(mine, ref) == 0, "%.17g with %d: mine %s, printf %s", v, dec,
                      mine, ref);
        /* and it reads back to within half a unit of the last place */
        double back;
        ck_assert_int_eq(kn_usar_parse_double(kn_usar_s(mine), &back), KN_USAR_OK);
        double half = 0.5 * pow(10.0, -dec);
        ck_assert_msg(fabs(back - v) <= half * (1 + 1e-9) + fabs(v) * 1e-15, "%.17g -> %s", v,
                      mine);
        /* truncation of the single-precision value: never away from the
         * float, less than one unit below it */
        n = kn_usar_fmt_fixed(mine, sizeof mine, v, dec, KN_USAR_TRUNC);
        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(kn_usar_parse_double(kn_usar_s(mine), &back), KN_USAR_OK);
        double fv = fabs((double)(float)v);
        ck_assert_msg(fabs(back) <= fv * (1 + 1.2e-7) + 1e-300 &&
                          fv - fabs(back) < 2 * half * (1 + 1e-9) + fv * 1.2e-7,
                      "trunc %.17g -> %s", v, mine);
    }
    uselocale(old);
    freelocale(c);
}
END_TEST

/* The checks that must not change under a comma-decimal locale. */
static void check_locale_free(void)
{
    char buf[64];
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, 1.5, 4, KN_USAR_ROUND), 6);
    ck_assert_str_eq(buf, "1.5000");
    ck_assert_int_eq(kn_usar_fmt_fixed(buf, sizeof buf, -1234.56789, 2, KN_USAR_TRUNC), 8);
    ck_assert_str_eq(buf, "-1234.56");
    double d;
    ck_assert_int_eq(kn_usar_parse_double(kn_usar_s("477.7582"), &d), KN_USAR_OK);
    ck_assert(d == 477.7582);
    ck_assert_int_eq(kn_usar_parse_double(kn_usar_s("1,00"), &d), KN_USAR_EVALUE);
    ck_assert_int_eq(kn_usar_fmt_drive(buf, sizeof buf, 1.25, -0.5), 37);
    ck_assert_str_eq(buf, "DRIVE {Left 1.2500} {Right -0.5000}\r\n");
    tok_ok(REAL_19);
    struct kn_usar_sen s;
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert(s.location[2] == 0.017);
}

START_TEST(locale_independent)
{
    if (!h_comma_locale_enter("locale_independent"))
        return;
    /* the locale is in force for the C library's reading too */
    ck_assert(strtod("1,5", NULL) == 1.5);
    check_locale_free();

    /* the per-thread form too: the same locale through uselocale().
     * duplocale of the global one, since newlocale() with LOCPATH leaks
     * inside glibc. */
    locale_t comma = duplocale(LC_GLOBAL_LOCALE);
    ck_assert(comma != (locale_t)0);
    setlocale(LC_ALL, "C");
    locale_t old = uselocale(comma);
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 2.5);
    ck_assert_str_eq(probe, "2,5");
    check_locale_free();
    uselocale(old);
    freelocale(comma);
}
END_TEST

static Suite *numbers_suite(void)
{
    Suite *s = suite_create("usarsim-numbers");
    TCase *p = tcase_create("parse");
    tcase_add_test(p, parse_double_accepts);
    tcase_add_test(p, parse_double_rejects);
    tcase_add_test(p, parse_int_bool);
    tcase_add_test(p, parse_vectors_and_lists);
    suite_add_tcase(s, p);
    TCase *f = tcase_create("format");
    tcase_set_timeout(f, 60);
    tcase_add_test(f, format_edge_cases);
    tcase_add_test(f, format_refuses);
    tcase_add_test(f, format_matches_c_printf);
    suite_add_tcase(s, f);
    TCase *l = tcase_create("locale");
    tcase_set_timeout(l, 120);
    tcase_add_unchecked_fixture(l, h_comma_locale_setup, h_comma_locale_teardown);
    tcase_add_test(l, locale_independent);
    suite_add_tcase(s, l);
    return s;
}

int main(void)
{
    return h_run_suite(numbers_suite());
}
