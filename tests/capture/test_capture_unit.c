/* Unit tests of the capture codec (protocols/pcapng.h) and of the
 * daemon's capture writer (daemon/capture.h): block layout from the pcapng
 * specification, checksums, the reader on pcapng (both byte orders,
 * several sections, every time stamp resolution) and classic pcap, the
 * link-layer decoder, and the writer on a real loop: records, TCP
 * sequence numbers, the size cap, a full disk and a full buffer; and how
 * kenaf-replay puts the live robot's session token into a captured
 * datagram (tools/replay/retoken.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <uv.h>

#include "capture.h"
#include "harness_suite.h"
#include "krp.h"
#include "pcapng.h"
#include "retoken.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* One's-complement sum over the bytes, folded: 0xFFFF for data that
 * includes a correct checksum. */
static uint16_t ones_sum(uint32_t s, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        s += (uint32_t)(p[n - 1] << 8);
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return (uint16_t)s;
}

static struct kn_pcap_endpoint ep4(const char *ip, uint16_t port)
{
    struct kn_pcap_endpoint e;
    memset(&e, 0, sizeof e);
    e.family = 4;
    ck_assert_int_eq(inet_pton(AF_INET, ip, e.addr), 1);
    e.port = port;
    return e;
}

static struct kn_pcap_endpoint ep6(const char *ip, uint16_t port)
{
    struct kn_pcap_endpoint e;
    memset(&e, 0, sizeof e);
    e.family = 6;
    ck_assert_int_eq(inet_pton(AF_INET6, ip, e.addr), 1);
    e.port = port;
    return e;
}

/* ---- writer layout ------------------------------------------------------- */

START_TEST(blocks_follow_the_spec)
{
    uint8_t b[512];
    size_t n = kn_pcapng_write_shb(b, sizeof b, "kenaf-simd test");
    ck_assert_uint_gt(n, 28);
    ck_assert_uint_eq(n % 4, 0);
    ck_assert_uint_eq(rd32(b), 0x0A0D0D0A);
    ck_assert_uint_eq(rd32(b + 4), n);
    ck_assert_uint_eq(rd32(b + n - 4), n);
    ck_assert_uint_eq(rd32(b + 8), 0x1A2B3C4D);
    ck_assert_uint_eq(rd16(b + 12), 1);
    ck_assert_uint_eq(rd16(b + 14), 0);
    for (int i = 16; i < 24; i++)
        ck_assert_uint_eq(b[i], 0xFF);  /* section length unknown */
    ck_assert_uint_eq(rd16(b + 24), 4); /* shb_userappl */
    ck_assert_uint_eq(rd16(b + 26), 15);
    ck_assert(memcmp(b + 28, "kenaf-simd test", 15) == 0);
    ck_assert_uint_eq(b[43], 0);        /* padding */
    ck_assert_uint_eq(rd32(b + 44), 0); /* opt_endofopt */
    ck_assert_uint_eq(kn_pcapng_write_shb(b, 27, NULL), 0);
    ck_assert_uint_eq(kn_pcapng_write_shb(b, 28, NULL), 28);

    n = kn_pcapng_write_idb(b, sizeof b, KN_PCAP_LINK_RAW, 65535, "krp", NULL);
    ck_assert_uint_eq(n % 4, 0);
    ck_assert_uint_eq(rd32(b), 1);
    ck_assert_uint_eq(rd32(b + 4), n);
    ck_assert_uint_eq(rd16(b + 8), 101);
    ck_assert_uint_eq(rd32(b + 12), 65535);
    ck_assert_uint_eq(rd16(b + 16), 9); /* if_tsresol */
    ck_assert_uint_eq(rd16(b + 18), 1);
    ck_assert_uint_eq(b[20], 9);        /* nanoseconds */
    ck_assert_uint_eq(rd16(b + 24), 2); /* if_name */
    ck_assert_uint_eq(rd32(b + n - 4), n);

    uint8_t pkt[5] = { 1, 2, 3, 4, 5 };
    size_t want = kn_pcapng_epb_size(5, KN_PCAPNG_DIR_IN, "note");
    n = kn_pcapng_write_epb(b, sizeof b, 1, 0x0000000500000007ull, pkt, 5, 9, KN_PCAPNG_DIR_IN,
                            "note");
    ck_assert_uint_eq(n, want);
    ck_assert_uint_eq(n, 28 + 8 + 8 + 8 + 4 + 4); /* header, data, flags, comment, end, trailer */
    ck_assert_uint_eq(rd32(b), 6);
    ck_assert_uint_eq(rd32(b + 8), 1);
    ck_assert_uint_eq(rd32(b + 12), 5); /* time stamp high */
    ck_assert_uint_eq(rd32(b + 16), 7); /* and low */
    ck_assert_uint_eq(rd32(b + 20), 5);
    ck_assert_uint_eq(rd32(b + 24), 9);
    ck_assert(memcmp(b + 28, pkt, 5) == 0);
    ck_assert_uint_eq(b[33] | b[34] | b[35], 0);
    ck_assert_uint_eq(rd16(b + 36), 2); /* epb_flags */
    ck_assert_uint_eq(rd32(b + 40), 1); /* inbound */
    ck_assert_uint_eq(rd16(b + 44), 1); /* opt_comment */
    ck_assert(memcmp(b + 48, "note", 4) == 0);
    ck_assert_uint_eq(rd32(b + n - 4), n);
    /* refused: too small, origlen < caplen, bad direction */
    ck_assert_uint_eq(kn_pcapng_write_epb(b, n - 1, 1, 0, pkt, 5, 5, 1, "note"), 0);
    ck_assert_uint_eq(kn_pcapng_write_epb(b, sizeof b, 1, 0, pkt, 5, 4, 0, NULL), 0);
    ck_assert_uint_eq(kn_pcapng_write_epb(b, sizeof b, 1, 0, pkt, 5, 5, 3, NULL), 0);
    ck_assert_uint_eq(kn_pcapng_write_epb(b, sizeof b, 1, 0, pkt, 5, 5, 0, NULL), 40);
}
END_TEST

START_TEST(checksums_verify)
{
    uint8_t b[2048], payload[333];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7 + 1);
    struct kn_pcap_endpoint a = ep4("127.0.0.1", 40000), z = ep4("10.1.2.3", 9750);
    size_t n = kn_pcap_build_udp(b, sizeof b, &a, &z, 77, payload, sizeof payload);
    ck_assert_uint_eq(n, 20 + 8 + sizeof payload);
    ck_assert_uint_eq(ones_sum(0, b, 20), 0xFFFF); /* IPv4 header */
    ck_assert_uint_eq(be16(b + 2), n);
    ck_assert_uint_eq(be16(b + 4), 77);
    ck_assert_uint_eq(b[9], 17);
    /* UDP: pseudo-header + segment */
    uint8_t ph[12];
    memcpy(ph, b + 12, 8);
    ph[8] = 0;
    ph[9] = 17;
    ph[10] = (uint8_t)((n - 20) >> 8);
    ph[11] = (uint8_t)(n - 20);
    ck_assert_uint_eq(ones_sum(ones_sum(0, ph, 12), b + 20, n - 20), 0xFFFF);
    ck_assert_uint_eq(be16(b + 20), 40000);
    ck_assert_uint_eq(be16(b + 22), 9750);
    ck_assert_uint_eq(be16(b + 24), n - 20);

    struct kn_pcap_endpoint a6 = ep6("::1", 5000), z6 = ep6("fe80::2", 3000);
    n = kn_pcap_build_tcp(b, sizeof b, &a6, &z6, 0, 0xFFFFFFF0u, 1234, KN_TCP_PSH | KN_TCP_ACK,
                          payload, 101);
    ck_assert_uint_eq(n, 40 + 20 + 101);
    ck_assert_uint_eq(b[0] >> 4, 6);
    ck_assert_uint_eq(be16(b + 4), 121);
    ck_assert_uint_eq(b[6], 6);
    uint8_t ph6[40] = { 0 };
    memcpy(ph6, b + 8, 32);
    ph6[34] = 0;
    ph6[35] = 121;
    ph6[39] = 6;
    ck_assert_uint_eq(ones_sum(ones_sum(0, ph6, 40), b + 40, 121), 0xFFFF);
    /* refused: families differ, payload too big, no room */
    ck_assert_uint_eq(kn_pcap_build_udp(b, sizeof b, &a, &z6, 0, payload, 1), 0);
    ck_assert_uint_eq(kn_pcap_build_udp(b, 20, &a, &z, 0, payload, 1), 0);
    static uint8_t huge[70000], big_payload[70000];
    ck_assert_uint_eq(
        kn_pcap_build_udp(huge, sizeof huge, &a, &z, 0, big_payload, KN_PCAP_MAX_PAYLOAD + 1), 0);
    ck_assert_uint_gt(
        kn_pcap_build_udp(huge, sizeof huge, &a, &z, 0, big_payload, KN_PCAP_MAX_PAYLOAD), 0);
}
END_TEST

/* ---- reader ---------------------------------------------------------------- */

struct parsed {
    int packets, blocks;
    struct kn_pcap_packet pkt[16];
    enum kn_pcap_result last;
    size_t need;
};

static void parse_all(const uint8_t *b, size_t len, struct parsed *p)
{
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    memset(p, 0, sizeof *p);
    size_t off = 0;
    while (off < len) {
        size_t used;
        struct kn_pcap_packet pkt;
        p->last = kn_pcap_next(&r, b + off, len - off, &used, &pkt);
        if (p->last == KN_PCAP_MORE) {
            p->need = used;
            return;
        }
        if (p->last == KN_PCAP_EFORMAT)
            return;
        ck_assert_uint_gt(used, 0);
        off += used;
        if (p->last == KN_PCAP_PACKET && p->packets < 16)
            p->pkt[p->packets++] = pkt;
        else if (p->last == KN_PCAP_BLOCK)
            p->blocks++;
    }
}

START_TEST(reader_reads_what_the_writer_wrote)
{
    static uint8_t f[8192];
    uint8_t pkt[200];
    struct kn_pcap_endpoint a = ep4("192.168.0.1", 1), z = ep4("192.168.0.2", 2);
    size_t n = kn_pcapng_write_shb(f, sizeof f, NULL);
    n += kn_pcapng_write_idb(f + n, sizeof f - n, KN_PCAP_LINK_RAW, 0, "a", "first");
    n += kn_pcapng_write_idb(f + n, sizeof f - n, KN_PCAP_LINK_RAW, 0, "b", NULL);
    size_t pl = kn_pcap_build_udp(pkt, sizeof pkt, &a, &z, 1, (const uint8_t *)"KN\x01\x05", 4);
    n += kn_pcapng_write_epb(f + n, sizeof f - n, 1, 1700000000123456789ull, pkt, pl, pl,
                             KN_PCAPNG_DIR_OUT, "hello");
    n += kn_pcapng_write_epb(f + n, sizeof f - n, 0, 5, pkt, pl - 2, pl, 0, NULL);
    n += kn_pcapng_write_epb(f + n, sizeof f - n, 7, 5, pkt, pl, pl, 0, NULL); /* no such IDB */
    struct parsed p;
    parse_all(f, n, &p);
    ck_assert_int_eq(p.packets, 2);
    ck_assert_int_eq(p.blocks, 4);
    ck_assert_uint_eq(p.pkt[0].if_id, 1);
    ck_assert_uint_eq(p.pkt[0].ts_ns, 1700000000123456789ull);
    ck_assert_int_eq(p.pkt[0].dir, KN_PCAPNG_DIR_OUT);
    ck_assert_uint_eq(p.pkt[0].comment_len, 5);
    ck_assert(memcmp(p.pkt[0].comment, "hello", 5) == 0);
    ck_assert_uint_eq(p.pkt[1].caplen, pl - 2);
    ck_assert_uint_eq(p.pkt[1].origlen, pl);
    ck_assert_ptr_null(p.pkt[1].comment);
    struct kn_pcap_ip ip;
    ck_assert_int_eq(kn_pcap_decode(p.pkt[0].linktype, p.pkt[0].data, p.pkt[0].caplen, &ip),
                     KN_PCAP_DEC_OK);
    ck_assert_uint_eq(ip.proto, KN_IP_PROTO_UDP);
    ck_assert_uint_eq(ip.payload_len, 4);
    ck_assert(!ip.truncated);
    ck_assert_int_eq(kn_pcap_decode(p.pkt[1].linktype, p.pkt[1].data, p.pkt[1].caplen, &ip),
                     KN_PCAP_DEC_OK);
    ck_assert(ip.truncated);
    ck_assert_uint_eq(ip.payload_len, 2);

    /* every prefix asks for more, never beyond what the block needs */
    for (size_t cut = 1; cut < n; cut++) {
        parse_all(f, cut, &p);
        ck_assert_msg(p.last == KN_PCAP_MORE || p.last == KN_PCAP_PACKET || p.last == KN_PCAP_BLOCK,
                      "cut %zu: result %d", cut, p.last);
    }
    /* a corrupt trailing length is an error */
    f[n - 1] ^= 0x40;
    parse_all(f, n, &p);
    ck_assert_int_eq(p.last, KN_PCAP_EFORMAT);
    /* so is a file of something else */
    parse_all((const uint8_t *)"GIF89a....", 10, &p);
    ck_assert_int_eq(p.last, KN_PCAP_EFORMAT);
}
END_TEST

static size_t put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return 4;
}

START_TEST(reader_big_endian_and_resolutions)
{
    /* pcapng written big-endian: SHB, IDB with if_tsresol 2^-10 and
     * if_tsoffset 100 s, EPB at 2048 units = 2 s */
    uint8_t f[256];
    size_t n = 0;
    n += put_be32(f + n, 0x0A0D0D0A);
    n += put_be32(f + n, 28);
    n += put_be32(f + n, 0x1A2B3C4D);
    n += put_be32(f + n, 0x00010000);
    n += put_be32(f + n, 0xFFFFFFFF);
    n += put_be32(f + n, 0xFFFFFFFF);
    n += put_be32(f + n, 28);
    size_t idb = n;
    n += put_be32(f + n, 1);
    n += put_be32(f + n, 0); /* length below */
    n += put_be32(f + n, (uint32_t)KN_PCAP_LINK_IPV4 << 16);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 9u << 16 | 1); /* if_tsresol, 1 byte */
    n += put_be32(f + n, 0x8A000000);
    n += put_be32(f + n, 14u << 16 | 8); /* if_tsoffset */
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 100);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, (uint32_t)(n + 4 - idb));
    put_be32(f + idb + 4, (uint32_t)(n - idb));
    uint8_t ip[28];
    struct kn_pcap_endpoint a = ep4("1.2.3.4", 5), z = ep4("5.6.7.8", 9750);
    ck_assert_uint_eq(kn_pcap_build_udp(ip, sizeof ip, &a, &z, 0, NULL, 0), 28);
    size_t epb = n;
    n += put_be32(f + n, 6);
    n += put_be32(f + n, 32 + 28);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 2048);
    n += put_be32(f + n, 28);
    n += put_be32(f + n, 28);
    memcpy(f + n, ip, 28);
    n += 28;
    n += put_be32(f + n, 32 + 28);
    ck_assert_uint_eq(n - epb, 60);
    struct parsed p;
    parse_all(f, n, &p);
    ck_assert_int_eq(p.packets, 1);
    ck_assert_uint_eq(p.pkt[0].linktype, KN_PCAP_LINK_IPV4);
    ck_assert_uint_eq(p.pkt[0].ts_ns, 102000000000ull);
    struct kn_pcap_ip d;
    ck_assert_int_eq(kn_pcap_decode(p.pkt[0].linktype, p.pkt[0].data, p.pkt[0].caplen, &d),
                     KN_PCAP_DEC_OK);
    ck_assert_uint_eq(d.dport, 9750);

    /* classic pcap, big-endian, nanoseconds; then little-endian,
     * microseconds */
    n = 0;
    n += put_be32(f + n, 0xA1B23C4D);
    n += put_be32(f + n, 0x00020004);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 0);
    n += put_be32(f + n, 65535);
    n += put_be32(f + n, KN_PCAP_LINK_RAW);
    n += put_be32(f + n, 10);
    n += put_be32(f + n, 999);
    n += put_be32(f + n, 28);
    n += put_be32(f + n, 28);
    memcpy(f + n, ip, 28);
    n += 28;
    parse_all(f, n, &p);
    ck_assert_int_eq(p.packets, 1);
    ck_assert_uint_eq(p.pkt[0].ts_ns, 10000000999ull);
    ck_assert_uint_eq(p.pkt[0].linktype, KN_PCAP_LINK_RAW);
    static const uint8_t le_hdr[24] = { 0xD4, 0xC3, 0xB2, 0xA1, 2,    0,    4, 0, 0,   0, 0, 0,
                                        0,    0,    0,    0,    0xFF, 0xFF, 0, 0, 101, 0, 0, 0 };
    memcpy(f, le_hdr, 24);
    static const uint8_t rec[16] = { 10, 0, 0, 0, 7, 0, 0, 0, 28, 0, 0, 0, 28, 0, 0, 0 };
    memcpy(f + 24, rec, 16);
    parse_all(f, n, &p);
    ck_assert_int_eq(p.packets, 1);
    ck_assert_uint_eq(p.pkt[0].ts_ns, 10000007000ull);
    /* a record claiming more than 16 MiB is refused, not allocated */
    f[24 + 11] = 0x7F;
    parse_all(f, n, &p);
    ck_assert_int_eq(p.last, KN_PCAP_EFORMAT);
}
END_TEST

START_TEST(decoder_link_types)
{
    uint8_t ip4[64], ip6[128], fr[256];
    struct kn_pcap_endpoint a = ep4("10.0.0.1", 1000), z = ep4("10.0.0.2", 2000);
    size_t n4 = kn_pcap_build_udp(ip4, sizeof ip4, &a, &z, 0, (const uint8_t *)"abc", 3);
    struct kn_pcap_endpoint a6 = ep6("2001:db8::1", 3000), z6 = ep6("2001:db8::2", 4000);
    size_t n6 = kn_pcap_build_tcp(ip6, sizeof ip6, &a6, &z6, 0, 42, 43, KN_TCP_ACK,
                                  (const uint8_t *)"xy", 2);
    struct kn_pcap_ip d;
    /* Ethernet with two VLAN tags */
    memset(fr, 0, 12);
    const uint8_t tags[] = { 0x88, 0xA8, 0, 1, 0x81, 0x00, 0, 2, 0x08, 0x00 };
    memcpy(fr + 12, tags, sizeof tags);
    memcpy(fr + 22, ip4, n4);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_ETHERNET, fr, 22 + n4, &d), KN_PCAP_DEC_OK);
    ck_assert_uint_eq(d.sport, 1000);
    ck_assert(memcmp(d.payload, "abc", 3) == 0);
    fr[20] = 0x08;
    fr[21] = 0x06; /* ARP */
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_ETHERNET, fr, 22 + n4, &d), KN_PCAP_DEC_LINK);
    /* Linux cooked v1 and v2 */
    memset(fr, 0, 20);
    fr[14] = 0x86;
    fr[15] = 0xDD;
    memcpy(fr + 16, ip6, n6);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_LINUX_SLL, fr, 16 + n6, &d), KN_PCAP_DEC_OK);
    ck_assert_uint_eq(d.family, 6);
    ck_assert_uint_eq(d.seq, 42);
    ck_assert_uint_eq(d.ack, 43);
    ck_assert_uint_eq(d.tcp_flags, KN_TCP_ACK);
    memset(fr, 0, 20);
    fr[0] = 0x08;
    memcpy(fr + 20, ip4, n4);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_LINUX_SLL2, fr, 20 + n4, &d), KN_PCAP_DEC_OK);
    /* BSD loopback, either byte order; OpenBSD loopback network order */
    memcpy(fr + 4, ip4, n4);
    memcpy(fr, "\x02\0\0\0", 4);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_NULL, fr, 4 + n4, &d), KN_PCAP_DEC_OK);
    memcpy(fr, "\0\0\0\x02", 4);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_NULL, fr, 4 + n4, &d), KN_PCAP_DEC_OK);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_LOOP, fr, 4 + n4, &d), KN_PCAP_DEC_OK);
    /* IPv6 with a hop-by-hop header before TCP */
    memcpy(fr, ip6, 40);
    fr[6] = 0;  /* next: hop-by-hop */
    fr[40] = 6; /* then TCP */
    fr[41] = 0; /* 8 bytes */
    memset(fr + 42, 0, 6);
    memcpy(fr + 48, ip6 + 40, n6 - 40);
    fr[4] = 0;
    fr[5] = (uint8_t)(n6 - 40 + 8);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_IPV6, fr, n6 + 8, &d), KN_PCAP_DEC_OK);
    ck_assert_uint_eq(d.payload_len, 2);
    /* fragments, other protocols, cut headers */
    memcpy(fr, ip4, n4);
    fr[6] = 0x20; /* more fragments */
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_RAW, fr, n4, &d), KN_PCAP_DEC_FRAGMENT);
    memcpy(fr, ip4, n4);
    fr[9] = 1; /* ICMP */
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_RAW, fr, n4, &d), KN_PCAP_DEC_PROTO);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_RAW, ip4, 25, &d), KN_PCAP_DEC_SHORT);
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_RAW, ip4, 0, &d), KN_PCAP_DEC_SHORT);
    ck_assert_int_eq(kn_pcap_decode(147, ip4, n4, &d), KN_PCAP_DEC_LINK);
    memcpy(fr, ip4, n4);
    fr[24] = 0xFF; /* UDP length beyond the IP length */
    ck_assert_int_eq(kn_pcap_decode(KN_PCAP_LINK_RAW, fr, n4, &d), KN_PCAP_DEC_BAD);
}
END_TEST

/* ---- the daemon's capture writer --------------------------------------------- */

static char tmpdir[64];

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kn-cap-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

static const char *tpath(const char *name)
{
    static char b[128];
    snprintf(b, sizeof b, "%s/%s", tmpdir, name);
    return b;
}

static cJSON *cap_stats(void)
{
    cJSON *o = cJSON_CreateObject();
    kn_capture_stats(o);
    return o;
}

static double cap_num(const char *a, const char *b)
{
    cJSON *o = cap_stats();
    cJSON *v = cJSON_GetObjectItem(o, a);
    if (b)
        v = cJSON_GetObjectItem(v, b);
    ck_assert_msg(cJSON_IsNumber(v) || cJSON_IsBool(v), "capture stats have no %s.%s", a,
                  b ? b : "");
    double d = cJSON_IsBool(v) ? cJSON_IsTrue(v) : v->valuedouble;
    cJSON_Delete(o);
    return d;
}

/* Stops the capture and runs the loop until the file is closed. */
static void stop_and_drain(uv_loop_t *loop)
{
    kn_capture_stop();
    uv_run(loop, UV_RUN_DEFAULT);
    ck_assert_double_eq(cap_num("closed", NULL), 1);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[8 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static struct sockaddr_in sin4(const char *ip, uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

START_TEST(writer_records_both_legs)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[256];
    ck_assert_int_eq(kn_capture_start(&loop, tpath("c.pcapng"), 0, err, sizeof err), 0);
    ck_assert(kn_capture_on());
    ck_assert_int_eq(kn_capture_start(&loop, tpath("d.pcapng"), 0, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "running already"));

    struct sockaddr_in robot = sin4("127.0.0.1", 9750), ctl = sin4("127.0.0.1", 40001);
    kn_capture_udp((struct sockaddr *)&ctl, (struct sockaddr *)&robot,
                   "KN\x01\x05\x01\0\0\0\0\0\0\0", 12, KN_PCAPNG_DIR_IN, "fault: dropped");
    kn_capture_udp((struct sockaddr *)&robot, (struct sockaddr *)&ctl, "KN", 2, KN_PCAPNG_DIR_OUT,
                   NULL);
    /* a dual-stack socket: the IPv4 end is written v4-mapped */
    struct sockaddr_in6 any6;
    memset(&any6, 0, sizeof any6);
    any6.sin6_family = AF_INET6;
    any6.sin6_port = htons(9751);
    kn_capture_udp((struct sockaddr *)&ctl, (struct sockaddr *)&any6, "KN", 2, KN_PCAPNG_DIR_IN,
                   NULL);

    struct kn_capture_flow fl;
    memset(&fl, 0, sizeof fl);
    struct sockaddr_in local = sin4("127.0.0.1", 45000), sim = sin4("127.0.0.1", 3000);
    kn_capture_tcp_open(&fl, (struct sockaddr *)&local, (struct sockaddr *)&sim);
    kn_capture_tcp_data(&fl, true, "hello\n", 6);
    kn_capture_tcp_data(&fl, false, "ready\n", 6);
    static char big[70000];
    memset(big, 'x', sizeof big);
    kn_capture_tcp_data(&fl, true, big, sizeof big); /* several segments */
    kn_capture_tcp_close(&fl);
    kn_capture_tcp_data(&fl, true, "late", 4); /* closed: not recorded */
    stop_and_drain(&loop);
    ck_assert(!kn_capture_on());

    size_t len;
    uint8_t *f = slurp(tpath("c.pcapng"), &len);
    ck_assert_double_eq(cap_num("bytes_written", NULL), (double)len);
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0;
    int udp = 0, tcp = 0, syn = 0, fin = 0;
    uint32_t next_out = 0, next_in = 0;
    size_t out_bytes = 0;
    while (off < len) {
        size_t used;
        struct kn_pcap_packet p;
        enum kn_pcap_result res = kn_pcap_next(&r, f + off, len - off, &used, &p);
        ck_assert_msg(res == KN_PCAP_PACKET || res == KN_PCAP_BLOCK, "result %d at %zu", res, off);
        off += used;
        if (res != KN_PCAP_PACKET)
            continue;
        struct kn_pcap_ip ip;
        ck_assert_int_eq(kn_pcap_decode(p.linktype, p.data, p.caplen, &ip), KN_PCAP_DEC_OK);
        if (ip.proto == KN_IP_PROTO_UDP) {
            ck_assert_uint_eq(p.if_id, KN_CAPTURE_IF_KRP);
            udp++;
            if (udp == 1) {
                ck_assert_int_eq(p.dir, KN_PCAPNG_DIR_IN);
                ck_assert_uint_eq(ip.sport, 40001);
                ck_assert_uint_eq(ip.dport, 9750);
                ck_assert_uint_eq(ip.payload_len, 12);
                ck_assert_uint_eq(p.comment_len, 14);
                ck_assert(memcmp(p.comment, "fault: dropped", 14) == 0);
            } else if (udp == 2) {
                ck_assert_int_eq(p.dir, KN_PCAPNG_DIR_OUT);
                ck_assert_uint_eq(ip.sport, 9750);
            } else {
                ck_assert_uint_eq(ip.family, 6);
                ck_assert_uint_eq(ip.src[10], 0xFF);
                ck_assert_uint_eq(ip.src[12], 127);
            }
            continue;
        }
        ck_assert_uint_eq(p.if_id, KN_CAPTURE_IF_SIM);
        tcp++;
        bool out = ip.sport == 45000;
        ck_assert_int_eq(p.dir, out ? KN_PCAPNG_DIR_OUT : KN_PCAPNG_DIR_IN);
        if (ip.tcp_flags & KN_TCP_SYN) {
            syn++;
            if (out)
                next_out = ip.seq + 1;
            else
                next_in = ip.seq + 1;
            continue;
        }
        if (ip.tcp_flags & KN_TCP_FIN)
            fin++;
        /* the sequence numbers advance with the bytes */
        ck_assert_uint_eq(ip.seq, out ? next_out : next_in);
        ck_assert_uint_eq(ip.ack, out ? next_in : next_out);
        if (out) {
            next_out += (uint32_t)ip.payload_len;
            out_bytes += ip.payload_len;
        } else {
            next_in += (uint32_t)ip.payload_len;
        }
        if (ip.tcp_flags & KN_TCP_FIN) {
            if (out)
                next_out++;
            else
                next_in++;
        }
    }
    ck_assert_int_eq(udp, 3);
    ck_assert_int_eq(syn, 2);
    ck_assert_int_eq(fin, 2);
    ck_assert_uint_eq(out_bytes, 6 + sizeof big);
    /* handshake, 2 small + 3 segments, the simulator's ACK of them, close */
    ck_assert_int_eq(tcp, 3 + 2 + 3 + 1 + 3);
    ck_assert_double_eq(cap_num("records", NULL), udp + tcp);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(writer_size_cap)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[256];
    ck_assert_int_eq(kn_capture_start(&loop, tpath("cap.pcapng"), 4096, err, sizeof err), 0);
    struct sockaddr_in a = sin4("127.0.0.1", 1), b = sin4("127.0.0.1", 2);
    uint8_t d[100] = { 'K', 'N' };
    for (int i = 0; i < 100; i++)
        kn_capture_udp((struct sockaddr *)&a, (struct sockaddr *)&b, d, sizeof d, KN_PCAPNG_DIR_IN,
                       NULL);
    double kept = cap_num("records", NULL), capped = cap_num("dropped", "size_cap");
    ck_assert_double_eq(kept + capped, 100);
    ck_assert_double_gt(capped, 50);
    stop_and_drain(&loop);
    size_t len;
    uint8_t *f = slurp(tpath("cap.pcapng"), &len);
    ck_assert_uint_le(len, 4096);
    struct parsed p;
    parse_all(f, len, &p);
    ck_assert_int_ne(p.last, KN_PCAP_EFORMAT);
    ck_assert_int_ne(p.last, KN_PCAP_MORE); /* ends on a whole block */
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(writer_disk_full)
{
    if (access("/dev/full", W_OK) != 0) {
        fprintf(stderr, "SKIPPED writer_disk_full: no /dev/full\n");
        return;
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[256];
    ck_assert_int_eq(kn_capture_start(&loop, "/dev/full", 0, err, sizeof err), 0);
    struct sockaddr_in a = sin4("127.0.0.1", 1), b = sin4("127.0.0.1", 2);
    uint8_t d[200] = { 'K', 'N' };
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 1000; i++)
            kn_capture_udp((struct sockaddr *)&a, (struct sockaddr *)&b, d, sizeof d,
                           KN_PCAPNG_DIR_IN, NULL);
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    stop_and_drain(&loop);
    ck_assert_double_gt(cap_num("write_errors", NULL), 0);
    ck_assert_double_gt(cap_num("dropped", "write_error"), 0);
    ck_assert_double_eq(cap_num("bytes_written", NULL), 0);
    cJSON *o = cap_stats();
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(o, "last_error")->valuestring, "space"));
    cJSON_Delete(o);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(writer_buffer_full_never_blocks)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[256];
    ck_assert_int_eq(kn_capture_start(&loop, tpath("burst.pcapng"), 0, err, sizeof err), 0);
    struct sockaddr_in a = sin4("127.0.0.1", 1), b = sin4("127.0.0.1", 2);
    static uint8_t d[1000] = { 'K', 'N' };
    /* 4 MB at once, the loop never running in between: one buffer is
     * being written, the other fills, the rest is dropped and counted */
    for (int i = 0; i < 4000; i++)
        kn_capture_udp((struct sockaddr *)&a, (struct sockaddr *)&b, d, sizeof d, KN_PCAPNG_DIR_IN,
                       NULL);
    double kept = cap_num("records", NULL), full = cap_num("dropped", "buffer_full");
    ck_assert_double_gt(full, 0);
    ck_assert_double_eq(kept + full, 4000);
    stop_and_drain(&loop);
    size_t len;
    uint8_t *f = slurp(tpath("burst.pcapng"), &len);
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0;
    int packets = 0;
    while (off < len) {
        size_t used;
        struct kn_pcap_packet p;
        enum kn_pcap_result res = kn_pcap_next(&r, f + off, len - off, &used, &p);
        ck_assert(res == KN_PCAP_PACKET || res == KN_PCAP_BLOCK);
        off += used;
        packets += res == KN_PCAP_PACKET;
    }
    ck_assert_int_eq(packets, (int)kept);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static cJSON *cmd(uv_loop_t *loop, const char *args)
{
    char *t = kn_capture_command(loop, args);
    ck_assert_ptr_nonnull(t);
    cJSON *j = cJSON_Parse(t);
    ck_assert_msg(j != NULL, "not JSON: %s", t);
    free(t);
    return j;
}

static bool ok(cJSON *j)
{
    bool r = cJSON_IsTrue(cJSON_GetObjectItem(j, "ok"));
    cJSON_Delete(j);
    return r;
}

START_TEST(command_start_stop)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char line[256];
    /* run-time captures go into the capture directory, at most 4 MiB each */
    kn_capture_set_dir(tmpdir, (gid_t)-1, 4u << 20);
    ck_assert(!ok(cmd(&loop, "stop")));
    ck_assert(!ok(cmd(&loop, "start")));
    ck_assert(!ok(cmd(&loop, "bogus")));
    snprintf(line, sizeof line, "start %s max_mb=abc", tpath("x.pcapng"));
    ck_assert(!ok(cmd(&loop, line)));
    snprintf(line, sizeof line, "start %s/no/such/dir/x.pcapng", tmpdir);
    ck_assert(!ok(cmd(&loop, line)));
    snprintf(line, sizeof line, "start %s max_mb=5", tpath("x.pcapng"));
    ck_assert(!ok(cmd(&loop, line))); /* above the directory's cap */
    ck_assert(!ok(cmd(&loop, "start ../x.pcapng")));
    snprintf(line, sizeof line, "start %s max_mb=2", tpath("x.pcapng"));
    cJSON *j = cmd(&loop, line);
    cJSON *c = cJSON_GetObjectItem(j, "capture");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "active")));
    ck_assert_double_eq(cJSON_GetObjectItem(c, "max_bytes")->valuedouble, 2.0 * 1024 * 1024);
    ck_assert(ok(j));
    ck_assert(!ok(cmd(&loop, line))); /* one at a time */
    ck_assert(ok(cmd(&loop, "status")));
    ck_assert(ok(cmd(&loop, "stop")));
    ck_assert(ok(cmd(&loop, "")));
    uv_run(&loop, UV_RUN_DEFAULT);
    struct stat st;
    ck_assert_int_eq(stat(tpath("x.pcapng"), &st), 0);
    ck_assert_int_gt(st.st_size, 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* A controller -> robot datagram of type with session token tok. */
static size_t tokened(uint8_t type, uint16_t flags, uint32_t seq, uint32_t tok, uint8_t *buf)
{
    struct kn_krp_msg m;
    memset(&m, 0, sizeof m);
    kn_krp_init(&m, type, seq, flags | KN_KRP_F_TOKEN);
    m.h.token = tok;
    size_t n = kn_krp_encode(&m, buf, KN_KRP_MAX_DGRAM);
    ck_assert_uint_gt(n, 12);
    return n;
}

static uint32_t token_of(const uint8_t *buf, size_t len)
{
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(buf, len, &m), KN_KRP_OK);
    return m.h.token;
}

START_TEST(replay_rewrites_session_tokens)
{
    struct kn_retoken t;
    memset(&t, 0, sizeof t);
    uint8_t a[KN_KRP_MAX_DGRAM], b[KN_KRP_MAX_DGRAM];
    /* captured: HELLO#1 got token 0x11111111; the live robot not yet */
    kn_retoken_captured(&t, 1, 0x11111111u);
    size_t n = tokened(KN_KRP_CRAWLER, KN_KRP_F_ACK_REQ, 2, 0x11111111u, a);
    memcpy(b, a, n);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_WAIT);
    ck_assert_mem_eq(a, b, n);
    kn_retoken_live(&t, 1, 0xabcdef01u);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_REWRITTEN);
    ck_assert_uint_eq(token_of(b, n), 0xabcdef01u);
    ck_assert_mem_eq(a, b, n - 4); /* only the token changed */
    /* a HELLO with the token (a role change) goes out before its own
     * HELLO_ACK: it takes the session's live token */
    kn_retoken_captured(&t, 3, 0x11111111u);
    n = tokened(KN_KRP_HELLO, KN_KRP_F_SESSION | KN_KRP_F_OBSERVER, 3, 0x11111111u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_REWRITTEN);
    ck_assert_uint_eq(token_of(b, n), 0xabcdef01u);
    /* a new session: its datagrams wait for its own live token; the old
     * session's token still maps to the old live one (refused again) */
    kn_retoken_captured(&t, 4, 0x22222222u);
    n = tokened(KN_KRP_STOP, 0, 5, 0x22222222u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_WAIT);
    kn_retoken_live(&t, 4, 0x33333333u);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_REWRITTEN);
    ck_assert_uint_eq(token_of(b, n), 0x33333333u);
    n = tokened(KN_KRP_STOP, 0, 6, 0x11111111u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_REWRITTEN);
    ck_assert_uint_eq(token_of(b, n), 0xabcdef01u);
    /* a token no HELLO_ACK gave, and datagrams without one, stay as captured */
    n = tokened(KN_KRP_STOP, 0, 7, 0x99999999u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_UNKNOWN);
    ck_assert_uint_eq(token_of(b, n), 0x99999999u);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STOP, 8, 0);
    n = kn_krp_encode(&m, b, sizeof b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_NONE);
    /* a signed datagram: its MAC covers the token, so it is left alone */
    n = tokened(KN_KRP_STOP, 0x8000u, 9, 0x11111111u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_NONE);
    /* a header length past the datagram is not trusted */
    n = tokened(KN_KRP_STOP, 0, 10, 0x11111111u, b);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n - 1), KN_RETOKEN_NONE);
    /* no live session came: the captured token stands in, counted apart,
     * until a live HELLO_ACK for it arrives */
    kn_retoken_captured(&t, 11, 0x44444444u);
    n = tokened(KN_KRP_STOP, 0, 12, 0x44444444u, b);
    kn_retoken_keep(&t, b, n);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_KEPT);
    ck_assert_uint_eq(token_of(b, n), 0x44444444u);
    kn_retoken_live(&t, 11, 0x55555555u);
    ck_assert_int_eq(kn_retoken_apply(&t, b, n), KN_RETOKEN_REWRITTEN);
    ck_assert_uint_eq(token_of(b, n), 0x55555555u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, blocks_follow_the_spec);
    tcase_add_test(tc, checksums_verify);
    tcase_add_test(tc, reader_reads_what_the_writer_wrote);
    tcase_add_test(tc, reader_big_endian_and_resolutions);
    tcase_add_test(tc, decoder_link_types);
    tcase_add_test(tc, replay_rewrites_session_tokens);
    suite_add_tcase(s, tc);
    TCase *tw = tcase_create("writer");
    tcase_add_checked_fixture(tw, setup, teardown);
    tcase_set_timeout(tw, 60);
    tcase_add_test(tw, writer_records_both_legs);
    tcase_add_test(tw, writer_size_cap);
    tcase_add_test(tw, writer_disk_full);
    tcase_add_test(tw, writer_buffer_full_never_blocks);
    tcase_add_test(tw, command_start_stop);
    suite_add_tcase(s, tw);
    return h_run_suite(s);
}
