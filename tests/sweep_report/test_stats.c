/* A sweep's statistics (tools/sweep/stats.c) against figures computed
 * independently: the Wilson intervals below come from the formula in
 * stats.h evaluated with python3,
 *   z = 1.959964; d = 1 + z*z/n; c = (p + z*z/(2*n))/d
 *   h = z/d*sqrt(p*(1-p)/n + z*z/(4*n*n)); (c - h, c + h)
 * and agree with published tables (7/10: 0.3968 to 0.8922). The
 * boundaries are worked out by hand on each table in the comments. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "harness_suite.h"
#include "stats.h"

#define TOL 1e-8

static void wilson_is(unsigned k, unsigned n, double lo, double hi)
{
    double a, b;
    kn_binom_wilson(k, n, KN_BINOM_Z95, &a, &b);
    ck_assert_msg(fabs(a - lo) < TOL && fabs(b - hi) < TOL,
                  "Wilson %u/%u: [%.9f, %.9f], want [%.9f, %.9f]", k, n, a, b, lo, hi);
}

START_TEST(wilson_known)
{
    wilson_is(0, 10, 0.0, 0.277532803);
    wilson_is(10, 10, 0.722467197, 1.0);
    wilson_is(7, 10, 0.396778145, 0.892208733);
    wilson_is(1, 1, 0.206549312, 1.0);
    wilson_is(0, 1, 0.0, 0.793450688);
    wilson_is(19, 20, 0.763868805, 0.991118551);
    /* the fewest all-passing cases whose lower bound reaches 0.95 */
    wilson_is(72, 72, 0.949348827, 1.0);
    wilson_is(73, 73, 0.950007991, 1.0);
    /* nothing known: everything possible */
    wilson_is(0, 0, 0.0, 1.0);
    /* the ends are exact, not 1e-17 off */
    double lo, hi;
    kn_binom_wilson(0, 3, KN_BINOM_Z95, &lo, &hi);
    ck_assert(lo == 0.0);
    kn_binom_wilson(3, 3, KN_BINOM_Z95, &lo, &hi);
    ck_assert(hi == 1.0);
}
END_TEST

START_TEST(modes_named)
{
    for (int m = 0; m < KN_SWEEPSTATS_NMODES; m++)
        ck_assert_int_eq(
            kn_sweepstats_mode_parse(kn_sweepstats_mode_name((enum kn_sweepstats_mode)m)), m);
    ck_assert_str_eq(kn_sweepstats_mode_name(KN_SWEEPSTATS_MODE_TIP_OVER), "tip-over");
    ck_assert_str_eq(kn_sweepstats_mode_name(KN_SWEEPSTATS_MODE_TIME_OUT), "time-out");
    ck_assert_int_eq(kn_sweepstats_mode_parse("tipover"), -1);
    ck_assert_int_eq(kn_sweepstats_mode_parse(NULL), -1);
}
END_TEST

/* Three values; cases spread over them with another parameter mixed in:
 * the table is marginal, errors and cases not run stay out of n. */
START_TEST(table_marginal)
{
    const struct kn_sweepstats_case cs[] = {
        { KN_SWEEPSTATS_PASS, KN_SWEEPSTATS_MODE_NONE },
        { KN_SWEEPSTATS_PASS, KN_SWEEPSTATS_MODE_NONE },
        { KN_SWEEPSTATS_FAIL, KN_SWEEPSTATS_MODE_TIP_OVER },
        { KN_SWEEPSTATS_PASS, KN_SWEEPSTATS_MODE_NONE },
        { KN_SWEEPSTATS_ERROR, KN_SWEEPSTATS_MODE_ERROR },
        { KN_SWEEPSTATS_NOT_RUN, KN_SWEEPSTATS_MODE_NONE },
        { KN_SWEEPSTATS_FAIL, KN_SWEEPSTATS_MODE_STALL },
        { KN_SWEEPSTATS_FAIL, KN_SWEEPSTATS_MODE_TIP_OVER },
    };
    const size_t vidx[] = { 0, 0, 0, 1, 1, 1, 2, 9 /* not a value: skipped */ };
    struct kn_sweepstats_cell c[3];
    kn_sweepstats_table(cs, vidx, 8, c, 3);
    ck_assert_uint_eq(c[0].n, 3);
    ck_assert_uint_eq(c[0].pass, 2);
    ck_assert_double_eq_tol(c[0].rate, 2.0 / 3, 1e-12);
    ck_assert_uint_eq(c[0].modes[KN_SWEEPSTATS_MODE_TIP_OVER], 1);
    ck_assert_uint_eq(c[1].n, 1);
    ck_assert_uint_eq(c[1].errors, 1);
    ck_assert_uint_eq(c[1].modes[KN_SWEEPSTATS_MODE_ERROR], 1);
    ck_assert_uint_eq(c[2].n, 1);
    ck_assert_uint_eq(c[2].pass, 0);
    ck_assert_uint_eq(c[2].modes[KN_SWEEPSTATS_MODE_STALL], 1);
    /* Wilson 2/3 (python3 as above): 0.207660 to 0.938508 */
    ck_assert_double_eq_tol(c[0].lo, 0.2076596, 1e-6);
    ck_assert_double_eq_tol(c[0].hi, 0.9385081, 1e-6);
    unsigned modes[KN_SWEEPSTATS_NMODES];
    kn_sweepstats_modes(cs, 8, modes);
    ck_assert_uint_eq(modes[KN_SWEEPSTATS_MODE_TIP_OVER], 2);
    ck_assert_uint_eq(modes[KN_SWEEPSTATS_MODE_STALL], 1);
    ck_assert_uint_eq(modes[KN_SWEEPSTATS_MODE_ERROR], 1);
    ck_assert_uint_eq(modes[KN_SWEEPSTATS_MODE_NONE], 0);
}
END_TEST

/* Cells from (pass, n) pairs, as kn_sweepstats_table leaves them. */
static void fill(struct kn_sweepstats_cell *c, const unsigned (*pn)[2], size_t n)
{
    for (size_t v = 0; v < n; v++) {
        c[v] = (struct kn_sweepstats_cell){ .n = pn[v][1], .pass = pn[v][0] };
        c[v].rate = c[v].n ? (double)c[v].pass / c[v].n : NAN;
        kn_binom_wilson(c[v].pass, c[v].n, KN_BINOM_Z95, &c[v].lo, &c[v].hi);
    }
}

static void bound_is(const struct kn_sweepstats_cell *c, size_t n, bool lower, long point,
                     long confident, long lo, long hi)
{
    struct kn_sweepstats_boundary b;
    kn_sweepstats_boundary(c, n, lower, 0.95, &b);
    ck_assert_msg(b.point == point && b.confident == confident && b.lo == lo && b.hi == hi,
                  "boundary point %ld confident %ld interval [%ld, %ld], want %ld %ld [%ld, %ld]",
                  b.point, b.confident, b.lo, b.hi, point, confident, lo, hi);
}

/* One case per value, harder higher: the point is the last value before
 * the first failure, exactly what a scan by hand finds. Wilson 1/1 has
 * lo 0.21 < 0.95, so the interval starts at the easiest value and
 * nothing is confident; 0/1 has hi 0.79 < 0.95, so it ends at the first
 * failure. */
START_TEST(boundary_one_case_per_value)
{
    static const unsigned pn[6][2] = { { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 1 }, { 1, 1 }, { 0, 1 } };
    struct kn_sweepstats_cell c[6];
    fill(c, pn, 6);
    bound_is(c, 6, false, 2, -1, 0, 3);
    /* harder lower: scanned from the top, value 5 fails first */
    bound_is(c, 6, true, -1, -1, 5, 5);
    /* every value passes: the point is the hardest; so is the interval's
     * end (nothing failed) */
    static const unsigned all[3][2] = { { 1, 1 }, { 1, 1 }, { 1, 1 } };
    fill(c, all, 3);
    bound_is(c, 3, false, 2, -1, 0, 2);
    bound_is(c, 3, true, 0, -1, 2, 0);
}
END_TEST

/* 80 cases per value, monotone: 80/80 (lo 0.954) twice, 78/80 (rate
 * 0.975 >= 0.95, lo 0.913), 70/80 (0.875: misses; hi 0.931 < 0.95),
 * 20/80. point = 2, confident = 1, interval [2, 3]. */
START_TEST(boundary_monotone)
{
    static const unsigned pn[5][2] = { { 80, 80 }, { 80, 80 }, { 78, 80 }, { 70, 80 }, { 20, 80 } };
    struct kn_sweepstats_cell c[5];
    fill(c, pn, 5);
    ck_assert(c[0].lo >= 0.95 && c[2].lo < 0.95 && c[3].hi < 0.95);
    bound_is(c, 5, false, 2, 1, 2, 3);
    /* the same table with the task harder as the value falls: the
     * easiest is value 4 (20/80), which misses at once */
    bound_is(c, 5, true, -1, -1, 4, 4);
}
END_TEST

/* Not monotone: value 1 dips (74/80: 0.925, hi 0.965 >= 0.95, so not
 * surely below), value 2 passes again, value 3 is surely below (hi
 * 0.83). The point stops at the dip (0); the interval's end is the first
 * value past it that is surely below: 3. Values without a judged case
 * (4) are passed over. */
START_TEST(boundary_not_monotone)
{
    static const unsigned pn[6][2] = { { 80, 80 }, { 74, 80 }, { 80, 80 },
                                       { 60, 80 }, { 0, 0 },   { 80, 80 } };
    struct kn_sweepstats_cell c[6];
    fill(c, pn, 6);
    ck_assert(c[1].hi >= 0.95 && c[3].hi < 0.95);
    bound_is(c, 6, false, 0, 0, 1, 3);
    /* from the top: 5 passes (confidently), 4 has no case, 3 misses */
    bound_is(c, 6, true, 5, 5, 3, 3);
    /* nothing judged at all: no boundary, no interval */
    static const unsigned none[2][2] = { { 0, 0 }, { 0, 0 } };
    fill(c, none, 2);
    bound_is(c, 2, false, -1, -1, -1, -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep-stats");
    TCase *tc = tcase_create("stats");
    tcase_add_test(tc, wilson_known);
    tcase_add_test(tc, modes_named);
    tcase_add_test(tc, table_marginal);
    tcase_add_test(tc, boundary_one_case_per_value);
    tcase_add_test(tc, boundary_monotone);
    tcase_add_test(tc, boundary_not_monotone);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
