/* Unit tests of common/hostport: every form the parser takes, every
 * refusal with its exact message, the port and length boundaries, and the
 * resolver and lookup on numeric addresses (no name server involved). */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "hostport.h"

static void ok(const char *spec, uint16_t def, unsigned flags, const char *host, unsigned port)
{
    char h[256], err[200] = "";
    uint16_t p = 1234;
    ck_assert_msg(kn_hostport_parse_flags(spec, def, flags, h, sizeof h, &p, err, sizeof err) == 0,
                  "%s refused: %s", spec, err);
    ck_assert_str_eq(h, host);
    ck_assert_uint_eq(p, port);
}

static void bad(const char *spec, uint16_t def, unsigned flags, const char *msg)
{
    char h[256] = "kept", err[400] = "";
    uint16_t p = 1234;
    ck_assert_msg(kn_hostport_parse_flags(spec, def, flags, h, sizeof h, &p, err, sizeof err) == -1,
                  "%s accepted", spec);
    ck_assert_str_eq(err, msg);
    /* nothing is written on a refusal */
    ck_assert_str_eq(h, "kept");
    ck_assert_uint_eq(p, 1234);
}

START_TEST(accepted_forms)
{
    ok("127.0.0.1:9750", 1, 0, "127.0.0.1", 9750);
    ok("127.0.0.1", 9750, 0, "127.0.0.1", 9750);
    ok("localhost", 80, 0, "localhost", 80);
    ok("localhost:1", 80, 0, "localhost", 1);
    ok("robot.lan:65535", 80, 0, "robot.lan", 65535);
    ok("sim-1.lab.example", 3000, 0, "sim-1.lab.example", 3000);
    ok("[::1]", 9750, 0, "::1", 9750);
    ok("[::1]:9800", 9750, 0, "::1", 9800);
    ok("[fe80::1%eth0]", 9750, 0, "fe80::1%eth0", 9750);
    ok("[fe80::1%2]:7", 9750, 0, "fe80::1%2", 7);
    ok("::1", 9750, 0, "::1", 9750);
    ok("fe80::1%eth0", 1, 0, "fe80::1%eth0", 1);
    ok("::ffff:10.0.0.1", 5, 0, "::ffff:10.0.0.1", 5);
    /* a bare address with more than one ':' is an IPv6 address, not a port */
    ok("::1:9750", 5, 0, "::1:9750", 5);
    ok("[::]:0", 0, KN_HOSTPORT_PORT_ZERO, "::", 0);
    ok("0.0.0.0:0", 0, KN_HOSTPORT_PORT_ZERO | KN_HOSTPORT_NEED_PORT, "0.0.0.0", 0);
    ok("10.1.2.3:80", 0, KN_HOSTPORT_IP_ONLY | KN_HOSTPORT_NEED_PORT, "10.1.2.3", 80);
    ok("[::1]:80", 0, KN_HOSTPORT_IP_ONLY | KN_HOSTPORT_BRACKETS, "::1", 80);
    /* a port alone, when the caller takes one: host left empty */
    ok("9750", 0, KN_HOSTPORT_PORT_ALONE, "", 9750);
    ok(":0", 0, KN_HOSTPORT_PORT_ALONE | KN_HOSTPORT_PORT_ZERO, "", 0);
    ok("h:80", 0, KN_HOSTPORT_PORT_ALONE, "h", 80);
    /* default_port 0: "none written", the caller decides */
    ok("host", 0, 0, "host", 0);
    ok("host:00080", 0, 0, "host", 80);
}
END_TEST

START_TEST(boundary_ports)
{
    ok("h:1", 9, 0, "h", 1);
    ok("h:65535", 9, 0, "h", 65535);
    ok("h:0", 9, KN_HOSTPORT_PORT_ZERO, "h", 0);
    bad("h:0", 9, 0, "\"h:0\": port out of range 1..65535");
    bad("h:00000", 9, 0, "\"h:00000\": port out of range 1..65535");
    bad("h:65536", 9, 0, "\"h:65536\": port out of range 1..65535");
    bad("h:65536", 9, KN_HOSTPORT_PORT_ZERO, "\"h:65536\": port out of range 0..65535");
    bad("h:99999999999999999999999", 9, 0,
        "\"h:99999999999999999999999\": port out of range 1..65535");
    bad("h:", 9, 0, "\"h:\": missing port number");
    bad("[::1]:", 9, 0, "\"[::1]:\": missing port number");
    bad("h:12x", 9, 0, "\"h:12x\": port is not a number");
    bad("h:-1", 9, 0, "\"h:-1\": port is not a number");
    bad("h:+1", 9, 0, "\"h:+1\": port is not a number");
    bad("h: 80", 9, 0, "\"h: 80\": port is not a number");
    bad("h:0x50", 9, 0, "\"h:0x50\": port is not a number");

    uint16_t p = 0;
    const char *why = NULL;
    ck_assert_int_eq(kn_hostport_port("3000", 0, &p, &why), 0);
    ck_assert_uint_eq(p, 3000);
    ck_assert_int_eq(kn_hostport_port("0", KN_HOSTPORT_PORT_ZERO, &p, &why), 0);
    ck_assert_uint_eq(p, 0);
    ck_assert_int_eq(kn_hostport_port("", 0, &p, &why), -1);
    ck_assert_str_eq(why, "missing port number");
}
END_TEST

START_TEST(refusals)
{
    bad("", 9, 0, "\"\": empty address");
    bad("[::1", 9, 0, "\"[::1\": missing ']'");
    bad("[::1:80", 9, 0, "\"[::1:80\": missing ']'");
    bad("[::1]x", 9, 0, "\"[::1]x\": unexpected text after ']' (expected ':port')");
    bad("[::1]80", 9, 0, "\"[::1]80\": unexpected text after ']' (expected ':port')");
    bad("[]:9750", 9, 0, "\"[]:9750\": empty IPv6 address in []");
    bad("[1.2.3.4]:80", 9, 0, "\"[1.2.3.4]:80\": bad IPv6 address");
    bad("[localhost]", 9, 0, "\"[localhost]\": bad IPv6 address");
    bad("[fe80::1%]", 9, 0, "\"[fe80::1%]\": bad IPv6 address");
    bad("[fe80::1%eth0/1]", 9, 0, "\"[fe80::1%eth0/1]\": bad IPv6 address");
    bad("[fe80::1%abcdefghijklmnop]", 9, 0, "\"[fe80::1%abcdefghijklmnop]\": bad IPv6 address");
    bad(":9750", 9, 0, "\":9750\": missing host");
    bad("host:1:2", 9, 0,
        "\"host:1:2\": more than one ':' and not an IPv6 address (an IPv6 address needs "
        "brackets, as in [::1]:9750)");
    bad("::1", 9, KN_HOSTPORT_BRACKETS,
        "\"::1\": an IPv6 address needs brackets, as in [::1]:9750");
    bad("::1:9750", 0, KN_HOSTPORT_NEED_PORT,
        "\"::1:9750\": an IPv6 address needs brackets, as in [::1]:9750");
    bad("127.0.0.1", 0, KN_HOSTPORT_NEED_PORT, "\"127.0.0.1\": missing port");
    bad("9750", 0, KN_HOSTPORT_NEED_PORT, "\"9750\": missing port");
    bad(":9x", 0, KN_HOSTPORT_PORT_ALONE, "\":9x\": port is not a number");
    bad(":", 0, KN_HOSTPORT_PORT_ALONE, "\":\": missing port number");
    bad("70000", 0, KN_HOSTPORT_PORT_ALONE, "\"70000\": port out of range 1..65535");
    bad("[::1]", 0, KN_HOSTPORT_NEED_PORT, "\"[::1]\": missing port");
    bad("localhost:9750", 0, KN_HOSTPORT_IP_ONLY,
        "\"localhost:9750\": expected an IP address, not a host name");
    bad("sim_host:3000", 9, 0, "\"sim_host:3000\": bad host name");
    bad("a b:1", 9, 0, "\"a b:1\": bad host name");
    bad("-host", 9, 0, "\"-host\": bad host name");
    bad("host-", 9, 0, "\"host-\": bad host name");
    bad("a..b", 9, 0, "\"a..b\": bad host name");
    bad(".a", 9, 0, "\".a\": bad host name");
    bad("host.", 9, 0, "\"host.\": bad host name");
    bad("user@host", 9, 0, "\"user@host\": bad host name");
    bad("host/x:1", 9, 0, "\"host/x:1\": bad host name");
    bad("h\xc3\xa9te", 9, 0, "\"h\\xc3\\xa9te\": bad host name");
}
END_TEST

START_TEST(messages_stay_one_line)
{
    char h[64], err[400];
    uint16_t p;
    ck_assert_int_eq(kn_hostport_parse("a\"b\n:1", 9, h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "\"a\\x22b\\x0a:1\": bad host name");
    char long_spec[300];
    memset(long_spec, 'x', sizeof long_spec - 3);
    memcpy(long_spec + sizeof long_spec - 3, ":", 2);
    ck_assert_int_eq(kn_hostport_parse(long_spec, 9, h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "...\": host name longer than 253 characters") != NULL, "%s", err);
    ck_assert_uint_lt(strlen(err), 200);
    /* a small message buffer is cut, not overrun; none at all is allowed */
    char tiny[8];
    ck_assert_int_eq(kn_hostport_parse("[::1", 9, h, sizeof h, &p, tiny, sizeof tiny), -1);
    ck_assert_str_eq(tiny, "\"[::1\":");
    ck_assert_int_eq(kn_hostport_parse("[::1", 9, h, sizeof h, &p, NULL, 0), -1);
    ck_assert_int_eq(kn_hostport_parse(NULL, 9, h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "\"\": empty address");
    const char *why = NULL;
    ck_assert_int_eq(kn_hostport_split("[::1", 9, 0, h, sizeof h, &p, &why), -1);
    ck_assert_str_eq(why, "missing ']'");
}
END_TEST

START_TEST(long_hosts)
{
    char name[400], label[64];
    /* labels of 63 in a name of 253: the longest allowed */
    memset(label, 'a', 63);
    label[63] = '\0';
    snprintf(name, sizeof name, "%s.%s.%s.%.61s", label, label, label, label);
    ck_assert_uint_eq(strlen(name), 253);
    ok(name, 9, 0, name, 9);
    char spec[420];
    snprintf(spec, sizeof spec, "%s:65535", name);
    ok(spec, 9, 0, name, 65535);
    /* 254 characters */
    snprintf(name, sizeof name, "%s.%s.%s.%.62s", label, label, label, label);
    char h[300], err[400];
    uint16_t p;
    ck_assert_int_eq(kn_hostport_parse(name, 9, h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, ": host name longer than 253 characters") != NULL, "%s", err);
    /* a label of 64 */
    snprintf(name, sizeof name, "%sa.lan", label);
    ck_assert_int_eq(kn_hostport_parse(name, 9, h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, ": bad host name") != NULL, "%s", err);
    /* a valid host longer than the caller's buffer */
    char small[10];
    ck_assert_int_eq(
        kn_hostport_parse("robot.example:1", 9, small, sizeof small, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "\"robot.example:1\": host too long");
    ck_assert_int_eq(kn_hostport_parse("robot.ex:1", 9, small, sizeof small, &p, err, sizeof err),
                     0);
    ck_assert_str_eq(small, "robot.ex");
    ck_assert_int_eq(kn_hostport_parse("[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]", 9, small,
                                       sizeof small, &p, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, ": host too long") != NULL, "%s", err);
    /* IPv6 literal longer than any address */
    ck_assert_int_eq(kn_hostport_parse("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000]", 9, h,
                                       sizeof h, &p, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, ": bad IPv6 address") != NULL, "%s", err);
}
END_TEST

/* The formatter is the parser's inverse: brackets exactly for IPv6
 * literals, and what it writes parses back to the same host and port. */
START_TEST(format_round_trip)
{
    const char *hosts[] = { "127.0.0.1", "::1", "fe80::1%eth0", "kenaf.local", "0.0.0.0", "::" };
    const char *want[] = { "127.0.0.1:9750",   "[::1]:9750",   "[fe80::1%eth0]:9750",
                           "kenaf.local:9750", "0.0.0.0:9750", "[::]:9750" };
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        char buf[128], host[64], err[256];
        uint16_t port = 0;
        kn_hostport_format(hosts[i], 9750, buf, sizeof buf);
        ck_assert_str_eq(buf, want[i]);
        ck_assert_int_eq(kn_hostport_parse(buf, 1, host, sizeof host, &port, err, sizeof err), 0);
        ck_assert_str_eq(host, hosts[i]);
        ck_assert_uint_eq(port, 9750);
    }
    char small[8];
    kn_hostport_format("[::1]", 65535, small, sizeof small); /* cut, still terminated */
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
}
END_TEST

START_TEST(resolve_numeric)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[200] = "";
    ck_assert_int_eq(kn_hostport_resolve("127.0.0.1", 9750, SOCK_DGRAM, &ss, &len, err, sizeof err),
                     0);
    ck_assert_int_eq(ss.ss_family, AF_INET);
    ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    ck_assert_uint_eq(ntohs(in->sin_port), 9750);
    ck_assert_uint_eq(ntohl(in->sin_addr.s_addr), 0x7f000001u);

    ck_assert_int_eq(kn_hostport_resolve("::1", 1, SOCK_STREAM, &ss, &len, err, sizeof err), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
    ck_assert_uint_eq(ntohs(in6->sin6_port), 1);
    ck_assert(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));

    /* a zone is the interface's index */
    ck_assert_int_eq(kn_hostport_resolve("fe80::1%lo", 5, SOCK_DGRAM, &ss, &len, err, sizeof err),
                     0);
    ck_assert_uint_eq(in6->sin6_scope_id, if_nametoindex("lo"));
    ck_assert_uint_ne(in6->sin6_scope_id, 0);

    /* a zone naming no interface: the lookup's own words */
    ck_assert_int_eq(
        kn_hostport_resolve("fe80::1%nosuchif9", 5, SOCK_DGRAM, &ss, &len, err, sizeof err), -1);
    ck_assert_msg(strncmp(err, "\"fe80::1%nosuchif9\": ", 21) == 0 && strlen(err) > 21, "%s", err);
}
END_TEST

START_TEST(lookup_parses_then_resolves)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[200] = "";
    ck_assert_int_eq(kn_hostport_lookup("[::1]:4000", 9, 0, SOCK_DGRAM, &ss, &len, err, sizeof err),
                     0);
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    ck_assert_uint_eq(ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port), 4000);
    ck_assert_int_eq(
        kn_hostport_lookup("127.0.0.2", 9750, 0, SOCK_STREAM, &ss, &len, err, sizeof err), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET);
    ck_assert_uint_eq(ntohs(((const struct sockaddr_in *)&ss)->sin_port), 9750);
    /* either step's refusal names the spec as written */
    ck_assert_int_eq(kn_hostport_lookup("[::1", 9, 0, SOCK_DGRAM, &ss, &len, err, sizeof err), -1);
    ck_assert_str_eq(err, "\"[::1\": missing ']'");
    ck_assert_int_eq(
        kn_hostport_lookup("[fe80::1%nosuchif9]:5", 9, 0, SOCK_DGRAM, &ss, &len, err, sizeof err),
        -1);
    ck_assert_msg(strncmp(err, "\"[fe80::1%nosuchif9]:5\": ", 25) == 0 && strlen(err) > 25, "%s",
                  err);
}
END_TEST

/* "[NAME=]HOST:PORT" of the tools' --robot: the name before the first
 * '=', its length and (when asked) its characters checked. */
START_TEST(named_robot_specs)
{
    char name[8], host[64], err[200];
    uint16_t port = 0;
    ck_assert_int_eq(kn_hostport_parse_named("a-1=[::1]:9751", 9750, "a1-", name, sizeof name, host,
                                             sizeof host, &port, err, sizeof err),
                     0);
    ck_assert_str_eq(name, "a-1");
    ck_assert_str_eq(host, "::1");
    ck_assert_uint_eq(port, 9751);
    ck_assert_int_eq(kn_hostport_parse_named("10.0.0.2", 9750, NULL, name, sizeof name, host,
                                             sizeof host, &port, err, sizeof err),
                     0);
    ck_assert_str_eq(name, "");
    ck_assert_uint_eq(port, 9750);
    ck_assert_int_eq(kn_hostport_parse_named("=h:1", 9, NULL, name, sizeof name, host, sizeof host,
                                             &port, err, sizeof err),
                     -1);
    ck_assert_str_eq(err, "\"=h:1\": a name is 1..7 characters before '='");
    ck_assert_int_eq(kn_hostport_parse_named("abcdefgh=h:1", 9, NULL, name, sizeof name, host,
                                             sizeof host, &port, err, sizeof err),
                     -1);
    ck_assert_int_eq(kn_hostport_parse_named("a/b=h:1", 9, "ab", name, sizeof name, host,
                                             sizeof host, &port, err, sizeof err),
                     -1);
    ck_assert_str_eq(err, "\"a/b=h:1\": a name is 1..7 letters, digits, '-' or '_' before '='");
    ck_assert_int_eq(kn_hostport_parse_named("a=[::1", 9, NULL, name, sizeof name, host,
                                             sizeof host, &port, err, sizeof err),
                     -1);
    ck_assert_str_eq(err, "\"[::1\": missing ']'");
}
END_TEST

static Suite *hostport_suite(void)
{
    Suite *s = suite_create("hostport");
    TCase *t = tcase_create("parse");
    tcase_add_test(t, accepted_forms);
    tcase_add_test(t, boundary_ports);
    tcase_add_test(t, refusals);
    tcase_add_test(t, messages_stay_one_line);
    tcase_add_test(t, long_hosts);
    tcase_add_test(t, format_round_trip);
    tcase_add_test(t, named_robot_specs);
    suite_add_tcase(s, t);
    TCase *r = tcase_create("resolve");
    tcase_add_test(r, resolve_numeric);
    tcase_add_test(r, lookup_parses_then_resolves);
    suite_add_tcase(s, r);
    return s;
}

int main(void)
{
    return h_run_suite(hostport_suite());
}
