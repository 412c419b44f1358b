/* Unit tests of kenaf-simd's small pure parts: the ERROR token bucket, the
 * latency histogram, the peer table and the stand-in JSON-lines codec. */
#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "backend_standin.h"
#include "harness_suite.h"
#include "histogram.h"
#include "peers.h"
#include "tbucket.h"

#define MS 1000000ull

/* ---- token bucket ---- */

START_TEST(tbucket_burst_and_rate)
{
    struct kn_tbucket b;
    uint64_t t = 5 * 1000 * MS;
    kn_tbucket_init(&b, 10, 10, t);
    for (int i = 0; i < 10; i++)
        ck_assert(kn_tbucket_take(&b, 10, 10, t));
    ck_assert(!kn_tbucket_take(&b, 10, 10, t));
    ck_assert(!kn_tbucket_take(&b, 10, 10, t + 99 * MS));
    ck_assert(kn_tbucket_take(&b, 10, 10, t + 100 * MS));
    ck_assert(!kn_tbucket_take(&b, 10, 10, t + 100 * MS));
    /* a long pause refills to the burst, not beyond */
    t += 3600ull * 1000 * MS;
    int n = 0;
    while (kn_tbucket_take(&b, 10, 10, t))
        n++;
    ck_assert_int_eq(n, 10);
    /* time going backwards gives nothing */
    ck_assert(!kn_tbucket_take(&b, 10, 10, t - 1000 * MS));
    /* sustained: 10 per second over 10 s */
    n = 0;
    for (uint64_t dt = 1; dt <= 10000; dt++)
        n += kn_tbucket_take(&b, 10, 10, t + dt * MS);
    ck_assert_int_eq(n, 100);
}
END_TEST

/* ---- histogram ---- */

START_TEST(hist_buckets_monotonic_and_tight)
{
    unsigned prev = 0;
    for (uint64_t v = 0; v < (1ull << 40); v = v < 64 ? v + 1 : v + v / 7) {
        unsigned b = kn_hist_bucket_of(v);
        ck_assert_uint_ge(b, prev);
        ck_assert_uint_lt(b, KN_HIST_BUCKETS);
        uint64_t hi = kn_hist_bucket_high(b);
        ck_assert_uint_ge(hi, v);
        ck_assert_msg((double)(hi - v) <= (double)v / 32.0 + 1.0, "bucket of %llu too wide",
                      (unsigned long long)v);
        if (b > 0)
            ck_assert_uint_lt(kn_hist_bucket_high(b - 1), v);
        prev = b;
    }
    ck_assert_uint_eq(kn_hist_bucket_of(UINT64_MAX), KN_HIST_BUCKETS - 1);
}
END_TEST

START_TEST(hist_quantiles)
{
    struct kn_hist h;
    kn_hist_init(&h);
    ck_assert_uint_eq(kn_hist_quantile(&h, 0.5), 0);
    /* 1..10000 us in ns */
    for (uint64_t i = 1; i <= 10000; i++)
        kn_hist_record(&h, i * 1000);
    ck_assert_uint_eq(h.count, 10000);
    ck_assert_uint_eq(h.min, 1000);
    ck_assert_uint_eq(h.max, 10000000);
    double p50 = (double)kn_hist_quantile(&h, 0.5);
    double p99 = (double)kn_hist_quantile(&h, 0.99);
    double p999 = (double)kn_hist_quantile(&h, 0.999);
    ck_assert_double_ge(p50, 5000000.0);
    ck_assert_double_le(p50, 5000000.0 * (1 + 1.0 / 32));
    ck_assert_double_ge(p99, 9900000.0);
    ck_assert_double_le(p99, 9900000.0 * (1 + 1.0 / 32));
    ck_assert_double_ge(p999, 9990000.0);
    ck_assert_double_le(p999, 10000000.0);
    ck_assert_uint_eq(kn_hist_quantile(&h, 1.0), 10000000);
    ck_assert_uint_eq(kn_hist_quantile(&h, 0.0), kn_hist_bucket_high(kn_hist_bucket_of(1000)));
    /* one huge outlier lands in the open top bucket and is reported as the max */
    kn_hist_record(&h, 1ull << 50);
    ck_assert_uint_eq(h.overflow, 1);
    ck_assert_uint_eq(kn_hist_quantile(&h, 1.0), 1ull << 50);
}
END_TEST

START_TEST(hist_small_exact)
{
    struct kn_hist h;
    kn_hist_init(&h);
    for (int i = 0; i < 3; i++)
        kn_hist_record(&h, 7);
    kn_hist_record(&h, 20);
    ck_assert_uint_eq(kn_hist_quantile(&h, 0.5), 7);
    ck_assert_uint_eq(kn_hist_quantile(&h, 0.75), 7);
    ck_assert_uint_eq(kn_hist_quantile(&h, 0.76), 20);
}
END_TEST

/* ---- peer table ---- */

static struct kn_addr addr4(uint32_t ip, uint16_t port)
{
    struct kn_addr a;
    memset(&a, 0, sizeof a);
    struct sockaddr_in *s = (struct sockaddr_in *)&a.ss;
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    s->sin_addr.s_addr = htonl(ip);
    a.len = sizeof *s;
    return a;
}

START_TEST(peers_find_add_remove_lru)
{
    struct kn_peers t;
    ck_assert_int_eq(kn_peers_init(&t, 3), 0);
    struct kn_addr a = addr4(0x7f000001, 1000), b = addr4(0x7f000001, 1001),
                   c = addr4(0x7f000002, 1000), d = addr4(0x7f000001, 1002);
    ck_assert_ptr_null(kn_peers_find(&t, &a));
    struct kn_peer *pa = kn_peers_add(&t, &a);
    struct kn_peer *pb = kn_peers_add(&t, &b);
    struct kn_peer *pc = kn_peers_add(&t, &c);
    ck_assert_ptr_nonnull(pc);
    ck_assert_ptr_null(kn_peers_add(&t, &d)); /* full */
    ck_assert_ptr_eq(kn_peers_find(&t, &b), pb);
    ck_assert_ptr_eq(kn_peers_oldest(&t), pa);
    kn_peers_touch(&t, pa);
    ck_assert_ptr_eq(kn_peers_oldest(&t), pb);
    kn_peers_remove(&t, pb);
    ck_assert_ptr_null(kn_peers_find(&t, &b));
    ck_assert_ptr_eq(kn_peers_oldest(&t), pc);
    struct kn_peer *pd = kn_peers_add(&t, &d);
    ck_assert_ptr_nonnull(pd);
    ck_assert_ptr_eq(kn_peers_find(&t, &d), pd);
    ck_assert_uint_eq(t.used, 3);
    uint32_t i = 0;
    int n = 0;
    while (kn_peers_next(&t, &i))
        n++;
    ck_assert_int_eq(n, 3);
    /* churn: many adds and removes keep every index consistent */
    for (int k = 0; k < 1000; k++) {
        struct kn_peer *old = kn_peers_oldest(&t);
        struct kn_addr gone = old->addr;
        kn_peers_remove(&t, old);
        ck_assert_ptr_null(kn_peers_find(&t, &gone));
        struct kn_addr x = addr4(0x0a000000u + (uint32_t)k, (uint16_t)k);
        ck_assert_ptr_eq(kn_peers_find(&t, &x), NULL);
        struct kn_peer *px = kn_peers_add(&t, &x);
        ck_assert_ptr_eq(kn_peers_find(&t, &x), px);
        ck_assert_uint_eq(t.used, 3);
    }
    kn_peers_free(&t);
}
END_TEST

START_TEST(addr_equal_and_format)
{
    struct kn_addr a = addr4(0x7f000001, 9750), b = addr4(0x7f000001, 9750);
    ((struct sockaddr_in *)&b.ss)->sin_zero[0] = 7; /* padding is not identity */
    ck_assert(kn_addr_equal(&a, &b));
    char buf[64];
    kn_addr_format(&a, buf, sizeof buf);
    ck_assert_str_eq(buf, "127.0.0.1:9750");
    struct kn_addr c;
    memset(&c, 0, sizeof c);
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&c.ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(9751);
    s6->sin6_addr.s6_addr[15] = 1;
    c.len = sizeof *s6;
    kn_addr_format(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "[::1]:9751");
    ck_assert(!kn_addr_equal(&a, &c));
    ck_assert_int_eq(kn_addr_set(&b, (struct sockaddr *)&c.ss), 0);
    ck_assert(kn_addr_equal(&b, &c));
}
END_TEST

/* ---- stand-in codec ---- */

START_TEST(standin_parse_state)
{
    const char *l =
        "{\"type\":\"state\",\"t\":1.5,\"belt_pos\":[1,2],\"flipper\":[0.1,0.2,0.3,0.4],"
        "\"rpy\":[0,0,3.0],\"battery\":23.5,\"extra\":\"ignored\"}";
    struct kn_state s;
    ck_assert_int_eq(kn_standin_parse(l, strlen(l), &s, NULL), KN_STANDIN_STATE);
    ck_assert_uint_eq(s.have, KN_HAVE_TIME | KN_HAVE_BELT_POS | KN_HAVE_FLIPPER | KN_HAVE_ATTITUDE |
                                  KN_HAVE_BATTERY);
    ck_assert_double_eq(s.time_s, 1.5);
    ck_assert_double_eq(s.belt_pos_m[1], 2);
    ck_assert_double_eq(s.flipper_rad[3], 0.4);
    ck_assert_double_eq(s.rpy_rad[2], 3.0);
    ck_assert_double_eq(s.battery_v, 23.5);
    ck_assert_double_eq(s.pos_m[0], 0);

    struct kn_state m;
    memset(&m, 0, sizeof m);
    m.pos_m[0] = 7;
    m.have = KN_HAVE_POSITION;
    kn_standin_merge(&m, &s);
    ck_assert_double_eq(m.pos_m[0], 7); /* kept: not in the line */
    ck_assert_double_eq(m.time_s, 1.5);
    ck_assert_uint_eq(m.have, s.have | KN_HAVE_POSITION);
}
END_TEST

START_TEST(standin_parse_bad)
{
    struct kn_state s;
    const char *why;
    const char *bad[] = {
        "not json",
        "[1,2]",
        "{\"no\":\"type\"}",
        "{\"type\":7}",
        "{\"type\":\"state\",\"belt_pos\":[1]}",
        "{\"type\":\"state\",\"belt_pos\":[1,\"x\"]}",
        "{\"type\":\"state\",\"t\":\"now\"}",
        "{\"type\":\"state\",\"t\":1e999}",
        "{\"type\":\"state\",\"rpy\":{\"r\":0}}",
        "{\"type\":\"state\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(kn_standin_parse(bad[i], strlen(bad[i]), &s, &why) == KN_STANDIN_MALFORMED,
                      "accepted: %s", bad[i]);
        ck_assert_ptr_nonnull(why);
        ck_assert_uint_eq(s.have, 0);
    }
    const char *ok[] = { "{\"type\":\"ready\"}", "{\"type\":\"news\"}",
                         "{\"type\":\"state\",\"pos\":null}" };
    ck_assert_int_eq(kn_standin_parse(ok[0], strlen(ok[0]), &s, NULL), KN_STANDIN_READY);
    ck_assert_int_eq(kn_standin_parse(ok[1], strlen(ok[1]), &s, NULL), KN_STANDIN_OTHER);
    ck_assert_int_eq(kn_standin_parse(ok[2], strlen(ok[2]), &s, NULL), KN_STANDIN_STATE);
    ck_assert_uint_eq(s.have, 0);
    /* the length bounds the parse: a valid prefix is not enough */
    const char *pre = "{\"type\":\"ready\"}garbage";
    ck_assert_int_eq(kn_standin_parse(pre, 16, &s, NULL), KN_STANDIN_READY);
    ck_assert_int_eq(kn_standin_parse(pre, 15, &s, NULL), KN_STANDIN_MALFORMED);
}
END_TEST

START_TEST(standin_format)
{
    char buf[512];
    struct kn_command c;
    memset(&c, 0, sizeof c);
    c.belt_speed_m_s[0] = 0.3;
    c.belt_speed_m_s[1] = -0.25;
    c.flipper_mask = 0x05;
    c.flipper_rad[0] = 0.5;
    c.flipper_rad[1] = 9; /* not in the mask */
    c.flipper_rad[2] = NAN;
    size_t n = kn_standin_format_cmd(buf, sizeof buf, &c, true);
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_str_eq(buf, "{\"type\":\"cmd\",\"belts\":[0.3,-0.25],\"flippers\":[0.5,null,0,null],"
                          "\"reapply\":true}\n");
    ck_assert_uint_eq(kn_standin_format_cmd(buf, 10, &c, false), 0);
    n = kn_standin_format_hello(buf, sizeof buf, "kenaf");
    ck_assert_str_eq(buf, "{\"type\":\"hello\",\"protocol\":1,\"robot\":\"kenaf\"}\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon-pieces");
    TCase *tc = tcase_create("pieces");
    tcase_add_test(tc, tbucket_burst_and_rate);
    tcase_add_test(tc, hist_buckets_monotonic_and_tight);
    tcase_add_test(tc, hist_quantiles);
    tcase_add_test(tc, hist_small_exact);
    tcase_add_test(tc, peers_find_add_remove_lru);
    tcase_add_test(tc, addr_equal_and_format);
    tcase_add_test(tc, standin_parse_state);
    tcase_add_test(tc, standin_parse_bad);
    tcase_add_test(tc, standin_format);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
