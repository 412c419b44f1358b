/* Pacing arithmetic of kenaf-engine's server (engine/pacing.c), with a
 * simulated clock: absolute deadlines do not drift whatever the tick
 * pattern, late ticks catch up in bounded bursts (overruns counted), a
 * debt over the limit is given up (slip counted), fast and step modes. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness_suite.h"
#include "pacing.h"

#define MS 1000000ull

START_TEST(realtime_no_drift)
{
    struct kn_pacing p;
    kn_pacing_init(&p, KN_PACE_REALTIME, 1.0, 0.001, 20, 1.0);
    uint64_t t = 1000 * MS;
    kn_pacing_start(&p, t);
    uint64_t steps = 0;
    /* ticks at irregular intervals, 0.3 .. 4.7 ms, for 100 s */
    unsigned seed = 12345;
    while (t < 1000 * MS + 100000 * MS) {
        seed = seed * 1103515245u + 12345u;
        t += 300000 + (seed >> 8) % 4400000;
        uint32_t n = kn_pacing_due(&p, t);
        kn_pacing_done(&p, n);
        steps += n;
    }
    double sim = (double)steps * 1e-3, wall = (double)(t - 1000 * MS) / 1e9;
    /* exact up to the one step not yet due */
    ck_assert_double_le(wall - sim, 0.001 + 1e-9);
    ck_assert_double_ge(wall - sim, 0.0);
    ck_assert_uint_eq(p.overruns, 0);
    ck_assert_uint_eq(p.slips, 0);
}
END_TEST

START_TEST(realtime_rate)
{
    struct kn_pacing p;
    kn_pacing_init(&p, KN_PACE_REALTIME, 2.5, 0.001, 100, 1.0);
    kn_pacing_start(&p, 0);
    uint64_t steps = 0;
    for (uint64_t t = 2 * MS; t <= 10000 * MS; t += 2 * MS) {
        uint32_t n = kn_pacing_due(&p, t);
        kn_pacing_done(&p, n);
        steps += n;
    }
    ck_assert_uint_eq(steps, 25000);
}
END_TEST

START_TEST(late_tick_bursts)
{
    struct kn_pacing p;
    kn_pacing_init(&p, KN_PACE_REALTIME, 1.0, 0.001, 20, 1.0);
    kn_pacing_start(&p, 0);
    /* 100 ms late: five bursts of 20 catch up, each an overrun but the last */
    uint64_t t = 100 * MS;
    uint32_t got[8];
    int i = 0;
    for (; i < 8; i++) {
        got[i] = kn_pacing_due(&p, t);
        kn_pacing_done(&p, got[i]);
        if (got[i] == 0)
            break;
    }
    ck_assert_int_eq(i, 5);
    for (int k = 0; k < 5; k++)
        ck_assert_uint_eq(got[k], 20);
    ck_assert_uint_eq(p.overruns, 4);
    ck_assert_uint_eq(p.k, 100);
    ck_assert_double_ge(p.max_lag_s, 0.0999);
    /* next step is due 1 ms later */
    ck_assert_uint_eq(kn_pacing_wait_ns(&p, t), 1 * MS);
    ck_assert_double_eq_tol(kn_pacing_lead_s(&p, t), 0.0, 1e-12);
}
END_TEST

START_TEST(large_debt_slips)
{
    struct kn_pacing p;
    kn_pacing_init(&p, KN_PACE_REALTIME, 1.0, 0.001, 20, 1.0);
    kn_pacing_start(&p, 0);
    kn_pacing_done(&p, kn_pacing_due(&p, 10 * MS));
    /* stopped for 5 s: give the debt up instead of racing */
    uint64_t t = 5010 * MS;
    ck_assert_uint_eq(kn_pacing_due(&p, t), 0);
    ck_assert_uint_eq(p.slips, 1);
    ck_assert_double_eq_tol(p.slipped_s, 5.0, 1e-9);
    ck_assert_uint_eq(kn_pacing_due(&p, t + 3 * MS), 3);
}
END_TEST

START_TEST(fast_and_step)
{
    struct kn_pacing p;
    kn_pacing_init(&p, KN_PACE_FAST, 1.0, 0.001, 30, 1.0);
    ck_assert_uint_eq(kn_pacing_due(&p, 0), 0); /* not started */
    kn_pacing_start(&p, 0);
    ck_assert_uint_eq(kn_pacing_due(&p, 0), 30);
    ck_assert_uint_eq(kn_pacing_wait_ns(&p, 0), 0);
    kn_pacing_set(&p, KN_PACE_STEP, 0, 5);
    ck_assert_uint_eq(kn_pacing_due(&p, 1000 * MS), 0);
    ck_assert_uint_eq(kn_pacing_wait_ns(&p, 0), UINT64_MAX);
    kn_pacing_set(&p, KN_PACE_REALTIME, 1.0, 7 * MS);
    ck_assert_uint_eq(kn_pacing_due(&p, 7 * MS), 0);
    ck_assert_uint_eq(kn_pacing_due(&p, 10 * MS), 3);
    kn_pacing_stop(&p);
    ck_assert_uint_eq(kn_pacing_due(&p, 100 * MS), 0);
    enum kn_pace_mode m;
    ck_assert_int_eq(kn_pace_mode_parse("FAST", &m), 0);
    ck_assert_int_eq(m, KN_PACE_FAST);
    ck_assert_int_eq(kn_pace_mode_parse("slow", &m), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine pacing");
    TCase *tc = tcase_create("pacing");
    tcase_add_test(tc, realtime_no_drift);
    tcase_add_test(tc, realtime_rate);
    tcase_add_test(tc, late_tick_bursts);
    tcase_add_test(tc, large_debt_slips);
    tcase_add_test(tc, fast_and_step);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
