/* Unit tests of the allow-lists (daemon/access.h): networks parsed and
 * refused, which address gets which verdict (IPv4, IPv6, IPv4-mapped),
 * which commands count as driving, which listen addresses are exposed. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <string.h>

#include "access.h"
#include "harness_suite.h"
#include "krp.h"

static struct sockaddr_storage addr_of(const char *ip)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
    } else {
        ck_assert_int_eq(inet_pton(AF_INET6, ip, &a6->sin6_addr), 1);
        a6->sin6_family = AF_INET6;
    }
    return ss;
}

static size_t dgram(uint8_t type, uint8_t estop, uint8_t *buf)
{
    struct kn_krp_msg m;
    memset(&m, 0, sizeof m);
    kn_krp_init(&m, type, 7, 0);
    m.u.estop.engage = estop;
    size_t n = kn_krp_encode(&m, buf, KN_KRP_MAX_DGRAM);
    ck_assert_uint_gt(n, 0);
    return n;
}

START_TEST(networks_parse)
{
    struct kn_access_net n;
    const char *why = NULL;
    char s[80];
    static const char *const good[][2] = {
        { "10.1.2.0/24", "10.1.2.0/24" }, { "127.0.0.1", "127.0.0.1/32" },
        { "::1/128", "::1/128" },         { "fd00::/8", "fd00::/8" },
        { "0.0.0.0/0", "0.0.0.0/0" },     { "10.1.2.128/25", "10.1.2.128/25" },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ck_assert_msg(kn_access_parse(good[i][0], &n, &why) == 0, "%s: %s", good[i][0], why);
        kn_access_format(&n, s, sizeof s);
        ck_assert_str_eq(s, good[i][1]);
    }
    static const char *const bad[] = { "",         "10.1.2.0/33", "::1/129",     "10.1.2.1/24",
                                       "host.lan", "10.1.2.0/",   "10.1.2.0/-1", "10.1.2.0/+8",
                                       "/8",       "10.1.2.0/24x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(kn_access_parse(bad[i], &n, &why) < 0, "accepted \"%s\"", bad[i]);
    ck_assert_int_lt(kn_access_parse("10.1.2.1/24", &n, &why), 0);
    ck_assert_ptr_nonnull(strstr(why, "after the prefix length"));
}
END_TEST

START_TEST(verdicts)
{
    struct kn_access a;
    memset(&a, 0, sizeof a);
    uint8_t crawler[KN_KRP_MAX_DGRAM], status[KN_KRP_MAX_DGRAM];
    size_t nc = dgram(KN_KRP_CRAWLER, 0, crawler), ns = dgram(KN_KRP_STATUS_REQ, 0, status);
    struct sockaddr_storage x = addr_of("192.0.2.7");
    /* no lists: everyone */
    ck_assert_int_eq(kn_access_check(&a, (struct sockaddr *)&x, crawler, nc), KN_ACCESS_PASS);

    const char *why;
    a.on = true;
    ck_assert_int_eq(kn_access_parse("10.1.2.0/24", &a.drivers[a.n_drivers++], &why), 0);
    ck_assert_int_eq(kn_access_parse("::1", &a.drivers[a.n_drivers++], &why), 0);
    ck_assert_int_eq(kn_access_parse("10.1.0.0/16", &a.observers[a.n_observers++], &why), 0);
    static const struct {
        const char *ip;
        enum kn_access_verdict crawler, status;
    } cases[] = {
        { "10.1.2.9", KN_ACCESS_PASS, KN_ACCESS_PASS },   /* a driver */
        { "10.1.3.9", KN_ACCESS_REFUSE, KN_ACCESS_PASS }, /* an observer */
        { "10.2.0.1", KN_ACCESS_DROP, KN_ACCESS_DROP },   /* neither */
        { "::1", KN_ACCESS_PASS, KN_ACCESS_PASS },
        { "::2", KN_ACCESS_DROP, KN_ACCESS_DROP },
        { "::ffff:10.1.2.9", KN_ACCESS_PASS, KN_ACCESS_PASS }, /* dual-stack socket */
        { "::ffff:10.1.3.9", KN_ACCESS_REFUSE, KN_ACCESS_PASS },
        { "192.0.2.7", KN_ACCESS_DROP, KN_ACCESS_DROP },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sockaddr_storage ss = addr_of(cases[i].ip);
        ck_assert_msg(kn_access_check(&a, (struct sockaddr *)&ss, crawler, nc) == cases[i].crawler,
                      "%s CRAWLER", cases[i].ip);
        ck_assert_msg(kn_access_check(&a, (struct sockaddr *)&ss, status, ns) == cases[i].status,
                      "%s STATUS_REQ", cases[i].ip);
    }
    /* lists configured but empty: nobody */
    memset(&a, 0, sizeof a);
    a.on = true;
    ck_assert_int_eq(kn_access_check(&a, (struct sockaddr *)&x, status, ns), KN_ACCESS_DROP);
}
END_TEST

START_TEST(driving_commands)
{
    uint8_t b[KN_KRP_MAX_DGRAM];
    ck_assert(kn_access_is_driving(b, dgram(KN_KRP_CRAWLER, 0, b)));
    ck_assert(kn_access_is_driving(b, dgram(KN_KRP_FLIPPER, 0, b)));
    ck_assert(kn_access_is_driving(b, dgram(KN_KRP_STOP, 0, b)));
    ck_assert(kn_access_is_driving(b, dgram(KN_KRP_ESTOP, 0, b)));  /* release */
    ck_assert(!kn_access_is_driving(b, dgram(KN_KRP_ESTOP, 1, b))); /* engage: anyone */
    ck_assert(!kn_access_is_driving(b, dgram(KN_KRP_HELLO, 0, b)));
    ck_assert(!kn_access_is_driving(b, dgram(KN_KRP_SUBSCRIBE, 0, b)));
    ck_assert(!kn_access_is_driving(b, dgram(KN_KRP_WORLD_REQ, 0, b)));
    /* TRIAL_REQ: its op sits where ESTOP's value does; a reset drives */
    ck_assert(!kn_access_is_driving(b, dgram(KN_KRP_TRIAL_REQ, KN_KRP_TRIAL_OP_STATE, b)));
    ck_assert(kn_access_is_driving(b, dgram(KN_KRP_TRIAL_REQ, KN_KRP_TRIAL_OP_RESET, b)));
    ck_assert(!kn_access_is_driving(b, 5)); /* short: the rules answer it */
}
END_TEST

START_TEST(exposed_listen_addresses)
{
    ck_assert(!kn_access_exposed("127.0.0.1"));
    ck_assert(!kn_access_exposed("127.3.2.1"));
    ck_assert(!kn_access_exposed("::1"));
    ck_assert(kn_access_exposed("0.0.0.0"));
    ck_assert(kn_access_exposed("::"));
    ck_assert(kn_access_exposed("10.1.2.3"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("access");
    TCase *tc = tcase_create("access");
    tcase_add_test(tc, networks_parse);
    tcase_add_test(tc, verdicts);
    tcase_add_test(tc, driving_commands);
    tcase_add_test(tc, exposed_listen_addresses);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
