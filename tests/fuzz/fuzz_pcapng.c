/* libFuzzer target for the capture codec (protocols/pcapng.h): any bytes
 * parse to a defined result with every view inside the input, parsing in
 * pieces gives the same packets as parsing at once, every packet decodes
 * to a defined result, and a packet built from the input and written as
 * pcapng reads back to the same addresses, ports and payload. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcapng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_inside(const uint8_t *base, size_t len, const void *p, size_t n)
{
    const uint8_t *q = p;
    if (n && (q < base || q + n > base + len))
        abort();
}

/* Parses everything; returns the number of packets and a checksum of
 * their contents. step 0: the whole input at once; else the caller only
 * ever shows up to `step` more bytes than it did last time. */
static size_t parse(const uint8_t *data, size_t size, size_t step, uint64_t *sum)
{
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0, avail = step ? (step < size ? step : size) : size, packets = 0;
    *sum = 0;
    for (int guard = 0; guard < 1000000; guard++) {
        size_t used = 0;
        struct kn_pcap_packet pkt;
        enum kn_pcap_result res = kn_pcap_next(&r, data + off, avail - off, &used, &pkt);
        if (res == KN_PCAP_EFORMAT) {
            if (!r.error)
                abort();
            return packets;
        }
        if (res == KN_PCAP_MORE) {
            if (used <= avail - off)
                abort(); /* asked for no more than it had */
            if (avail == size)
                return packets;
            avail = avail + step < size ? avail + step : size;
            continue;
        }
        if (used == 0 || used > avail - off)
            abort();
        if (res == KN_PCAP_PACKET) {
            check_inside(data + off, used, pkt.data, pkt.caplen);
            if (pkt.comment)
                check_inside(data + off, used, pkt.comment, pkt.comment_len);
            if (pkt.origlen < pkt.caplen)
                abort();
            packets++;
            *sum = *sum * 31u + pkt.caplen + pkt.ts_ns + pkt.if_id + (uint64_t)pkt.dir;
            struct kn_pcap_ip ip;
            if (kn_pcap_decode(pkt.linktype, pkt.data, pkt.caplen, &ip) == KN_PCAP_DEC_OK) {
                check_inside(pkt.data, pkt.caplen, ip.payload, ip.payload_len);
                if (ip.family != 4 && ip.family != 6)
                    abort();
            }
        }
        off += used;
        if (off == size)
            return packets;
        if (off > avail)
            abort();
        if (off == avail && step)
            avail = avail + step < size ? avail + step : size;
    }
    abort(); /* every call consumes bytes or asks for more: no endless loop */
}

static void round_trip(const uint8_t *data, size_t size)
{
    if (size < 48)
        return;
    struct kn_pcap_endpoint s, d;
    memset(&s, 0, sizeof s);
    memset(&d, 0, sizeof d);
    s.family = d.family = (data[0] & 1) ? 6 : 4;
    memcpy(s.addr, data + 1, 16);
    memcpy(d.addr, data + 17, 16);
    if (s.family == 4) {
        memset(s.addr + 4, 0, 12);
        memset(d.addr + 4, 0, 12);
    }
    s.port = (uint16_t)(data[33] << 8 | data[34]);
    d.port = (uint16_t)(data[35] << 8 | data[36]);
    uint32_t seq = (uint32_t)data[37] << 24 | (uint32_t)data[38] << 16 | data[39] << 8 | data[40];
    bool tcp = data[41] & 1;
    const uint8_t *payload = data + 48;
    size_t plen = size - 48;
    if (plen > 4096)
        plen = 4096;
    static uint8_t pkt[8192], file[16384];
    size_t n = tcp ? kn_pcap_build_tcp(pkt, sizeof pkt, &s, &d, 7, seq, seq + 1,
                                       KN_TCP_ACK | KN_TCP_PSH, payload, plen)
                   : kn_pcap_build_udp(pkt, sizeof pkt, &s, &d, 7, payload, plen);
    if (n == 0)
        abort();
    size_t f = kn_pcapng_write_shb(file, sizeof file, "fuzz");
    f += kn_pcapng_write_idb(file + f, sizeof file - f, KN_PCAP_LINK_RAW, 0, "x", NULL);
    size_t e = kn_pcapng_write_epb(file + f, sizeof file - f, 0, 123456789, pkt, n, n,
                                   KN_PCAPNG_DIR_OUT, "c");
    if (e == 0 || e != kn_pcapng_epb_size(n, KN_PCAPNG_DIR_OUT, "c"))
        abort();
    f += e;
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0, used;
    struct kn_pcap_packet p;
    int packets = 0;
    while (off < f) {
        enum kn_pcap_result res = kn_pcap_next(&r, file + off, f - off, &used, &p);
        if (res == KN_PCAP_EFORMAT || res == KN_PCAP_MORE)
            abort();
        off += used;
        if (res != KN_PCAP_PACKET)
            continue;
        packets++;
        struct kn_pcap_ip ip;
        if (p.caplen != n || p.ts_ns != 123456789 || p.dir != KN_PCAPNG_DIR_OUT ||
            kn_pcap_decode(p.linktype, p.data, p.caplen, &ip) != KN_PCAP_DEC_OK)
            abort();
        if (ip.family != s.family || memcmp(ip.src, s.addr, 16) || memcmp(ip.dst, d.addr, 16) ||
            ip.sport != s.port || ip.dport != d.port || ip.payload_len != plen ||
            (plen && memcmp(ip.payload, payload, plen)) || ip.truncated)
            abort();
        if (tcp && (ip.seq != seq || ip.proto != KN_IP_PROTO_TCP))
            abort();
        if (!tcp && ip.proto != KN_IP_PROTO_UDP)
            abort();
    }
    if (packets != 1)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sum_all, sum_step;
    size_t all = parse(data, size, 0, &sum_all);
    size_t step = size ? (size_t)(data[size - 1] % 61) + 1 : 1;
    size_t pieces = parse(data, size, step, &sum_step);
    if (all != pieces || sum_all != sum_step)
        abort();
    /* every link type the decoder knows, on the raw bytes */
    static const uint16_t links[] = { KN_PCAP_LINK_NULL, KN_PCAP_LINK_ETHERNET,  KN_PCAP_LINK_RAW,
                                      KN_PCAP_LINK_LOOP, KN_PCAP_LINK_LINUX_SLL, KN_PCAP_LINK_IPV4,
                                      KN_PCAP_LINK_IPV6, KN_PCAP_LINK_LINUX_SLL2 };
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        struct kn_pcap_ip ip;
        if (kn_pcap_decode(links[i], data, size, &ip) == KN_PCAP_DEC_OK)
            check_inside(data, size, ip.payload, ip.payload_len);
    }
    round_trip(data, size);
    return 0;
}
