/* Unit tests of the fault injector (daemon/faults.h): the random sequence
 * (published splitmix64 values), reproducible decisions for a seed, rates
 * within binomial bounds over 10 000 trials, delays within their jitter,
 * and the streams on a real libuv loop: pass-through, drop, duplicate,
 * delay, reorder, the hold limit, the bounded queue, freeing with items
 * waiting, and the run-time command. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "faults.h"
#include "harness_suite.h"

#define TRIALS 10000

static struct kn_cfg_faults params(double drop, double dup, double reorder, double delay,
                                   double jitter, uint64_t seed)
{
    struct kn_cfg_faults p = { drop, dup, reorder, delay, jitter, seed };
    return p;
}

/* |k - n p| within 5 standard deviations: a correct injector fails this
 * with probability below 1e-6 per check. */
static void assert_binomial(unsigned k, unsigned n, double p, const char *what)
{
    double mean = n * p, sd = sqrt(n * p * (1 - p));
    ck_assert_msg(fabs(k - mean) <= 5 * sd + 1e-9, "%s: %u of %u, expected %.1f +- %.1f", what, k,
                  n, mean, 5 * sd);
}

START_TEST(splitmix64_reference)
{
    /* the published splitmix64 sequence from state 0 */
    struct kn_fault_rng r;
    kn_fault_rng_seed(&r, 0, 0);
    ck_assert_uint_eq(kn_fault_rng_next(&r), 0xe220a8397b1dcdafull);
    ck_assert_uint_eq(kn_fault_rng_next(&r), 0x6e789e6aa1b965f4ull);
    ck_assert_uint_eq(kn_fault_rng_next(&r), 0x06c45d188009454full);
    ck_assert_uint_eq(kn_fault_rng_next(&r), 0xf88bb8a8724c81ecull);
    for (int i = 0; i < 1000; i++) {
        double u = kn_fault_rng_unit(&r);
        ck_assert(u >= 0.0 && u < 1.0);
    }
}
END_TEST

START_TEST(same_seed_same_decisions)
{
    struct kn_cfg_faults p = params(0.2, 0.1, 0.05, 10, 5, 42);
    for (unsigned stream = 0; stream < KN_FAULT_NSTREAMS; stream++) {
        struct kn_fault_rng a, b, c;
        kn_fault_rng_seed(&a, 42, stream);
        kn_fault_rng_seed(&b, 42, stream);
        kn_fault_rng_seed(&c, 43, stream);
        unsigned differ = 0;
        for (int i = 0; i < TRIALS; i++) {
            struct kn_fault_decision x, y, z;
            kn_fault_decide(&a, &p, &x);
            kn_fault_decide(&b, &p, &y);
            kn_fault_decide(&c, &p, &z);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
            differ += memcmp(&x, &z, sizeof x) != 0;
        }
        ck_assert_uint_gt(differ, TRIALS / 2); /* another seed, another sequence */
    }
    /* the streams of one seed are independent sequences */
    struct kn_fault_rng s0, s1;
    kn_fault_rng_seed(&s0, 7, 0);
    kn_fault_rng_seed(&s1, 7, 1);
    unsigned same = 0;
    for (int i = 0; i < 100; i++)
        same += kn_fault_rng_next(&s0) == kn_fault_rng_next(&s1);
    ck_assert_uint_eq(same, 0);
}
END_TEST

START_TEST(decisions_do_not_shift_with_rates)
{
    /* four draws per decision whatever is decided: changing one rate
     * leaves the other decisions of the sequence where they were */
    struct kn_cfg_faults a = params(0.0, 0.3, 0.0, 0, 0, 9), b = params(0.4, 0.3, 0.0, 0, 0, 9);
    struct kn_fault_rng ra, rb;
    kn_fault_rng_seed(&ra, 9, 2);
    kn_fault_rng_seed(&rb, 9, 2);
    unsigned compared = 0;
    for (int i = 0; i < TRIALS; i++) {
        struct kn_fault_decision x, y;
        kn_fault_decide(&ra, &a, &x);
        kn_fault_decide(&rb, &b, &y);
        if (y.drop)
            continue;
        ck_assert_int_eq(x.duplicate, y.duplicate);
        compared++;
    }
    assert_binomial(compared, TRIALS, 0.6, "not dropped");
}
END_TEST

START_TEST(rates_within_binomial_bounds)
{
    static const double ps[] = { 0.01, 0.1, 0.5, 0.9 };
    static const uint64_t seeds[] = { 0, 1, 42, 123456789, 9007199254740991ull };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        for (size_t j = 0; j < sizeof seeds / sizeof seeds[0]; j++) {
            double p = ps[i];
            struct kn_cfg_faults f = params(p, p, p, 0, 0, seeds[j]);
            struct kn_fault_rng r;
            kn_fault_rng_seed(&r, seeds[j], (unsigned)(j % 3));
            unsigned drops = 0, dups = 0, reorders = 0, kept = 0;
            for (int t = 0; t < TRIALS; t++) {
                struct kn_fault_decision d;
                kn_fault_decide(&r, &f, &d);
                if (d.drop) {
                    drops++;
                    ck_assert(!d.duplicate && !d.reorder && d.delay_ns == 0);
                    continue;
                }
                kept++;
                dups += d.duplicate;
                reorders += d.reorder;
            }
            char what[64];
            snprintf(what, sizeof what, "drop p=%g seed=%llu", p, (unsigned long long)seeds[j]);
            assert_binomial(drops, TRIALS, p, what);
            snprintf(what, sizeof what, "duplicate p=%g", p);
            assert_binomial(dups, kept, p, what);
            snprintf(what, sizeof what, "reorder p=%g", p);
            assert_binomial(reorders, kept, p, what);
        }
    }
    /* 0 and 1 are exact */
    struct kn_cfg_faults none = params(0, 0, 0, 0, 0, 5), all = params(1, 0, 0, 0, 0, 5);
    struct kn_fault_rng r;
    kn_fault_rng_seed(&r, 5, 0);
    for (int t = 0; t < TRIALS; t++) {
        struct kn_fault_decision d;
        kn_fault_decide(&r, &none, &d);
        ck_assert(!d.drop && !d.duplicate && !d.reorder && d.delay_ns == 0);
        kn_fault_decide(&r, &all, &d);
        ck_assert(d.drop);
    }
}
END_TEST

START_TEST(delay_and_jitter)
{
    struct kn_cfg_faults f = params(0, 0, 0, 20, 5, 77);
    struct kn_fault_rng r;
    kn_fault_rng_seed(&r, 77, 0);
    double sum = 0, lo = 1e9, hi = 0;
    for (int t = 0; t < TRIALS; t++) {
        struct kn_fault_decision d;
        kn_fault_decide(&r, &f, &d);
        double ms = (double)d.delay_ns / 1e6;
        ck_assert(ms >= 15.0 - 1e-6 && ms <= 25.0 + 1e-6);
        sum += ms;
        lo = fmin(lo, ms);
        hi = fmax(hi, ms);
    }
    /* uniform on [15, 25]: mean 20, sd of the mean 2.89/sqrt(10000) */
    ck_assert_double_eq_tol(sum / TRIALS, 20.0, 5 * 2.89 / 100);
    ck_assert(lo < 15.1 && hi > 24.9);
    /* jitter larger than the delay: never negative, sometimes none */
    f = params(0, 0, 0, 2, 5, 78);
    unsigned zero = 0;
    for (int t = 0; t < TRIALS; t++) {
        struct kn_fault_decision d;
        kn_fault_decide(&r, &f, &d);
        ck_assert(d.delay_ns <= 7000000u);
        zero += d.delay_ns == 0;
    }
    assert_binomial(zero, TRIALS, 0.3, "delay clamped at 0");
}
END_TEST

/* ---- streams on a loop ----------------------------------------------------- */

struct sink {
    int items[20000];
    uint64_t t[20000];
    int n;
};

static void collect(void *ctx, const void *item, size_t len)
{
    struct sink *s = ctx;
    ck_assert_uint_eq(len, sizeof(int));
    ck_assert_int_lt(s->n, 20000);
    memcpy(&s->items[s->n], item, sizeof(int));
    s->t[s->n] = uv_hrtime();
    s->n++;
}

static struct kn_faults *make(uv_loop_t *loop, struct kn_cfg_faults krp, struct sink *in,
                              struct sink *out, struct sink *sim)
{
    struct kn_cfg_faults none = params(0, 0, 0, 0, 0, 0);
    struct kn_faults *f = kn_faults_new(loop, "unit", &krp, &none);
    ck_assert_ptr_nonnull(f);
    kn_faults_set_sink(f, KN_FAULT_KRP_IN, collect, in);
    kn_faults_set_sink(f, KN_FAULT_KRP_OUT, collect, out);
    kn_faults_set_sink(f, KN_FAULT_SIM, collect, sim);
    return f;
}

static void submit_n(struct kn_faults *f, enum kn_fault_stream_id s, int from, int n)
{
    for (int i = from; i < from + n; i++)
        kn_faults_submit(f, s, &i, sizeof i);
}

static void run_until(uv_loop_t *loop, struct sink *s, int want, int ms)
{
    uint64_t end = uv_hrtime() + (uint64_t)ms * 1000000u;
    while (s->n < want && uv_hrtime() < end)
        uv_run(loop, UV_RUN_ONCE);
}

static double stream_stat(struct kn_faults *f, const char *link, const char *dir, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    kn_faults_stats(f, o);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, link), dir), key);
    ck_assert_msg(cJSON_IsNumber(v), "no %s.%s.%s", link, dir, key);
    double d = v->valuedouble;
    cJSON_Delete(o);
    return d;
}

static double link_stat(struct kn_faults *f, const char *link, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    kn_faults_stats(f, o);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, link), key);
    ck_assert_msg(cJSON_IsNumber(v), "no %s.%s", link, key);
    double d = v->valuedouble;
    cJSON_Delete(o);
    return d;
}

static void close_loop(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT); /* the injector's timers close */
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

START_TEST(stream_pass_drop_duplicate)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    static struct sink in, out, sim;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    memset(&sim, 0, sizeof sim);
    struct kn_faults *f = make(&loop, params(0, 0, 0, 0, 0, 1), &in, &out, &sim);
    ck_assert(!kn_faults_active(f, KN_FAULT_KRP_IN));
    submit_n(f, KN_FAULT_KRP_IN, 0, 100); /* inactive still delivers, at once */
    ck_assert_int_eq(in.n, 100);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(in.items[i], i);
    ck_assert_double_eq(stream_stat(f, "krp", "in", "passed"), 100);

    struct kn_cfg_faults drop = params(1, 0, 0, 0, 0, 1);
    kn_faults_set(f, true, &drop);
    ck_assert(kn_faults_active(f, KN_FAULT_KRP_IN) && kn_faults_active(f, KN_FAULT_KRP_OUT));
    ck_assert(!kn_faults_active(f, KN_FAULT_SIM));
    submit_n(f, KN_FAULT_KRP_OUT, 0, 50);
    ck_assert_int_eq(out.n, 0);
    ck_assert_double_eq(stream_stat(f, "krp", "out", "dropped"), 50);

    struct kn_cfg_faults dup = params(0, 1, 0, 0, 0, 1);
    kn_faults_set(f, false, &dup);
    submit_n(f, KN_FAULT_SIM, 0, 10);
    ck_assert_int_eq(sim.n, 20);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(sim.items[i], i / 2);
    ck_assert_double_eq(stream_stat(f, "sim", "out", "duplicated"), 10);
    kn_faults_free(f);
    close_loop(&loop);
}
END_TEST

START_TEST(stream_delay_keeps_order)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    static struct sink in, out, sim;
    memset(&in, 0, sizeof in);
    struct kn_faults *f = make(&loop, params(0, 0, 0, 30, 0, 3), &in, &out, &sim);
    uint64_t t0 = uv_hrtime();
    submit_n(f, KN_FAULT_KRP_IN, 0, 20);
    ck_assert_int_eq(in.n, 0);
    run_until(&loop, &in, 20, 10000);
    ck_assert_int_eq(in.n, 20);
    for (int i = 0; i < 20; i++) {
        ck_assert_int_eq(in.items[i], i);
        ck_assert_uint_ge(in.t[i] - t0, 30000000u); /* never early */
    }
    ck_assert_double_eq(stream_stat(f, "krp", "in", "delayed"), 20);
    kn_faults_free(f);
    close_loop(&loop);
}
END_TEST

START_TEST(stream_reorder_swaps_neighbours)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    static struct sink in, out, sim;
    memset(&out, 0, sizeof out);
    struct kn_faults *f = make(&loop, params(0, 0, 1, 0, 0, 3), &in, &out, &sim);
    submit_n(f, KN_FAULT_KRP_OUT, 0, 10);
    /* each held item goes out right after the next one */
    static const int want[] = { 1, 0, 3, 2, 5, 4, 7, 6, 9, 8 };
    ck_assert_int_eq(out.n, 10);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(out.items[i], want[i]);
    ck_assert_double_eq(stream_stat(f, "krp", "out", "reordered"), 5);
    /* a held item with nothing after it goes out after the hold limit */
    int last = 99;
    uint64_t t0 = uv_hrtime();
    kn_faults_submit(f, KN_FAULT_KRP_OUT, &last, sizeof last);
    ck_assert_int_eq(out.n, 10);
    run_until(&loop, &out, 11, 10000);
    ck_assert_int_eq(out.n, 11);
    ck_assert_int_eq(out.items[10], 99);
    ck_assert_uint_ge(out.t[10] - t0, 100000000u);
    kn_faults_free(f);
    close_loop(&loop);
}
END_TEST

START_TEST(stream_bounded_and_freed)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    static struct sink in, out, sim;
    memset(&in, 0, sizeof in);
    struct kn_faults *f = make(&loop, params(0, 0, 0, 60000, 0, 3), &in, &out, &sim);
    submit_n(f, KN_FAULT_KRP_IN, 0, 5000);
    ck_assert_double_eq(stream_stat(f, "krp", "in", "delayed"), 4096);
    ck_assert_double_eq(stream_stat(f, "krp", "in", "overflow"), 5000 - 4096);
    ck_assert_double_eq(stream_stat(f, "krp", "in", "waiting"), 4096);
    ck_assert_double_eq(link_stat(f, "krp", "dropped"), 5000 - 4096);
    /* freed with 4096 items waiting a minute: nothing is delivered, the
     * loop ends at once, ASan sees no leak */
    kn_faults_free(f);
    uint64_t t0 = uv_hrtime();
    close_loop(&loop);
    ck_assert_uint_lt(uv_hrtime() - t0, 5000000000u);
    ck_assert_int_eq(in.n, 0);
}
END_TEST

static cJSON *command(const char *args)
{
    char *r = kn_faults_command(args);
    ck_assert_ptr_nonnull(r);
    cJSON *j = cJSON_Parse(r);
    ck_assert_msg(j != NULL, "not JSON: %s", r);
    free(r);
    return j;
}

START_TEST(run_time_command)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    static struct sink in, out, sim;
    memset(&in, 0, sizeof in);
    struct kn_faults *f = make(&loop, params(0, 0, 0, 0, 0, 0), &in, &out, &sim);

    cJSON *j = command("UNIT krp drop=0.25 delay_ms=5 seed=42");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    cJSON *fj = cJSON_GetObjectItem(j, "faults");
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "drop")->valuedouble, 0.25);
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "delay_ms")->valuedouble, 5);
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "seed")->valuedouble, 42);
    cJSON_Delete(j);
    ck_assert(kn_faults_active(f, KN_FAULT_KRP_IN));
    ck_assert(!kn_faults_active(f, KN_FAULT_SIM));

    /* keys not given keep their value; a new seed restarts the sequence */
    j = command("unit krp duplicate=1");
    fj = cJSON_GetObjectItem(j, "faults");
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "drop")->valuedouble, 0.25);
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "duplicate")->valuedouble, 1);
    cJSON_Delete(j);

    static const char *const bad[] = {
        "",
        "unit",
        "unit tcp drop=1",
        "nobody krp drop=1",
        "unit krp drop",
        "unit krp drop=2",
        "unit krp drop=-0.1",
        "unit krp drop=x",
        "unit krp color=1",
        "unit krp seed=1.5",
        "unit krp delay_ms=70000",
        "unit krp seed=-1",
        "unit krp drop=nan",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = command(bad[i]);
        ck_assert_msg(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")), "accepted: \"%s\"", bad[i]);
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(j, "error")));
        cJSON_Delete(j);
    }
    /* refused commands changed nothing */
    j = command("unit krp");
    fj = cJSON_GetObjectItem(j, "faults");
    ck_assert_double_eq(cJSON_GetObjectItem(fj, "drop")->valuedouble, 0.25);
    cJSON_Delete(j);

    j = command("unit krp off");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    ck_assert(!kn_faults_active(f, KN_FAULT_KRP_IN));

    /* the same seed through the command gives the same decisions again */
    j = command("unit sim drop=0.5 seed=1234");
    cJSON_Delete(j);
    int first[200];
    submit_n(f, KN_FAULT_SIM, 0, 200);
    int n1 = sim.n;
    memcpy(first, sim.items, sizeof(int) * (size_t)n1);
    sim.n = 0;
    j = command("unit sim seed=1234");
    cJSON_Delete(j);
    submit_n(f, KN_FAULT_SIM, 0, 200);
    ck_assert_int_eq(sim.n, n1);
    ck_assert(memcmp(first, sim.items, sizeof(int) * (size_t)n1) == 0);
    assert_binomial((unsigned)(200 - n1), 200, 0.5, "sim drops");

    kn_faults_free(f);
    j = command("unit krp drop=1"); /* gone from the registry */
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    close_loop(&loop);
}
END_TEST

START_TEST(describe_decisions)
{
    char buf[96];
    struct kn_fault_decision d = { .drop = true };
    kn_fault_describe(&d, buf, sizeof buf);
    ck_assert_str_eq(buf, "dropped");
    d = (struct kn_fault_decision){ .duplicate = true, .reorder = true, .delay_ns = 12345678 };
    kn_fault_describe(&d, buf, sizeof buf);
    ck_assert_str_eq(buf, "delayed 12.3 ms, held back (reordered), duplicated");
    d = (struct kn_fault_decision){ 0 };
    kn_fault_describe(&d, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    d.duplicate = true;
    kn_fault_describe(&d, buf, 4);
    ck_assert_str_eq(buf, "dup");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("decisions");
    tcase_add_test(tc, splitmix64_reference);
    tcase_add_test(tc, same_seed_same_decisions);
    tcase_add_test(tc, decisions_do_not_shift_with_rates);
    tcase_add_test(tc, rates_within_binomial_bounds);
    tcase_add_test(tc, delay_and_jitter);
    tcase_add_test(tc, describe_decisions);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("streams");
    tcase_set_timeout(ts, 60);
    tcase_add_test(ts, stream_pass_drop_duplicate);
    tcase_add_test(ts, stream_delay_keeps_order);
    tcase_add_test(ts, stream_reorder_swaps_neighbours);
    tcase_add_test(ts, stream_bounded_and_freed);
    tcase_add_test(ts, run_time_command);
    suite_add_tcase(s, ts);
    return h_run_suite(s);
}
