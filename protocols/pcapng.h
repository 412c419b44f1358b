/* Capture files, sans-I/O: a pcapng writer (Section Header, Interface
 * Description and Enhanced Packet blocks into a caller buffer), the
 * IPv4/IPv6 + UDP/TCP headers a captured datagram or stream chunk is
 * wrapped in, and a block parser that reads pcapng and classic pcap files
 * fed in as bytes, with a decoder back to addresses, ports and payload.
 * kenaf-simd writes its captures with it, kenaf-replay reads them.
 * Block layout and option codes follow the pcapng specification
 * (draft-ietf-opsawg-pcapng); files are written little-endian. */
#ifndef KN_PCAPNG_H
#define KN_PCAPNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Link types (tcpdump.org LINKTYPE_* values). */
#define KN_PCAP_LINK_NULL 0 /* BSD loopback, host-order family */
#define KN_PCAP_LINK_ETHERNET 1
#define KN_PCAP_LINK_RAW 101  /* raw IPv4 or IPv6, told apart by the version */
#define KN_PCAP_LINK_LOOP 108 /* OpenBSD loopback, network-order family */
#define KN_PCAP_LINK_LINUX_SLL 113
#define KN_PCAP_LINK_IPV4 228
#define KN_PCAP_LINK_IPV6 229
#define KN_PCAP_LINK_LINUX_SLL2 276

/* Block types. */
#define KN_PCAPNG_SHB 0x0A0D0D0Au
#define KN_PCAPNG_IDB 0x00000001u
#define KN_PCAPNG_PB 0x00000002u /* obsolete Packet Block: read, never written */
#define KN_PCAPNG_SPB 0x00000003u
#define KN_PCAPNG_EPB 0x00000006u
#define KN_PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du

/* epb_flags direction, as seen from the capturing host. */
#define KN_PCAPNG_DIR_UNKNOWN 0
#define KN_PCAPNG_DIR_IN 1
#define KN_PCAPNG_DIR_OUT 2

/* TCP flag bits. */
#define KN_TCP_FIN 0x01
#define KN_TCP_SYN 0x02
#define KN_TCP_RST 0x04
#define KN_TCP_PSH 0x08
#define KN_TCP_ACK 0x10

#define KN_IP_PROTO_TCP 6
#define KN_IP_PROTO_UDP 17

/* Largest block the reader accepts; anything larger is a format error, so
 * a corrupt length never makes a caller buffer gigabytes. */
#define KN_PCAP_MAX_BLOCK (16u * 1024u * 1024u)
/* Interfaces remembered per section; packets on others are counted and
 * skipped. */
#define KN_PCAP_MAX_IF 64

/* Headers the packet builders put in front of the payload. */
#define KN_PCAP_IP4_HDR 20
#define KN_PCAP_IP6_HDR 40
#define KN_PCAP_UDP_HDR 8
#define KN_PCAP_TCP_HDR 20

/* An address as it goes into a synthesized packet. */
struct kn_pcap_endpoint {
    uint8_t family;   /* 4 or 6 */
    uint8_t addr[16]; /* IPv4 in the first 4 bytes, network order */
    uint16_t port;    /* host order */
};

/* ---- writing ---------------------------------------------------------- */

/* Each writer returns the bytes written, or 0 (nothing written) when cap
 * is too small or an argument is out of range. Strings may be NULL. */

/* Section Header Block, little-endian, section length unknown (-1), with
 * shb_userappl when userappl is given. */
size_t kn_pcapng_write_shb(uint8_t *buf, size_t cap, const char *userappl);

/* Interface Description Block with if_tsresol 9 (nanosecond time stamps)
 * and if_name / if_description when given. */
size_t kn_pcapng_write_idb(uint8_t *buf, size_t cap, uint16_t linktype, uint32_t snaplen,
                           const char *name, const char *description);

/* Enhanced Packet Block: ts_ns since the epoch, the packet bytes (caplen
 * of them; origlen >= caplen is the length on the wire), epb_flags with
 * the direction when dir != 0, opt_comment when comment is given. */
size_t kn_pcapng_write_epb(uint8_t *buf, size_t cap, uint32_t if_id, uint64_t ts_ns,
                           const uint8_t *pkt, size_t caplen, size_t origlen, int dir,
                           const char *comment);

/* Bytes an EPB with this packet length and comment takes. */
size_t kn_pcapng_epb_size(size_t caplen, int dir, const char *comment);

/* An IPv4 or IPv6 packet (by src->family; both ends must match) carrying
 * a UDP datagram with this payload. IP and UDP checksums are computed.
 * ip_id is the IPv4 identification (ignored for IPv6). */
size_t kn_pcap_build_udp(uint8_t *buf, size_t cap, const struct kn_pcap_endpoint *src,
                         const struct kn_pcap_endpoint *dst, uint16_t ip_id, const uint8_t *payload,
                         size_t len);

/* The same carrying a TCP segment (20-byte header, no options, window
 * 65535) with the given sequence and acknowledgement numbers and flags. */
size_t kn_pcap_build_tcp(uint8_t *buf, size_t cap, const struct kn_pcap_endpoint *src,
                         const struct kn_pcap_endpoint *dst, uint16_t ip_id, uint32_t seq,
                         uint32_t ack, uint8_t flags, const uint8_t *payload, size_t len);

/* Largest payload kn_pcap_build_udp/_tcp take (the IP length field). */
#define KN_PCAP_MAX_PAYLOAD (65535u - KN_PCAP_IP6_HDR - KN_PCAP_TCP_HDR)

/* ---- reading ---------------------------------------------------------- */

enum kn_pcap_result {
    KN_PCAP_PACKET = 0, /* *used bytes form a packet, described in *pkt */
    KN_PCAP_BLOCK,      /* *used bytes form another block (header, interface, ...) */
    KN_PCAP_MORE,       /* not enough bytes: *used is how many the next block needs */
    KN_PCAP_EFORMAT,    /* neither pcapng nor pcap, or a corrupt block: stop */
};

struct kn_pcap_if {
    uint16_t linktype;
    uint32_t snaplen;
    uint8_t tsresol; /* as in if_tsresol; 6 (microseconds) by default */
    int64_t tsoffset_s;
};

struct kn_pcap_reader {
    int format;    /* 0 before the first block, 1 pcapng, 2 classic pcap */
    bool swap;     /* file byte order differs from little-endian */
    bool section;  /* pcapng: a Section Header was read */
    unsigned n_if; /* pcapng interfaces in this section (all, counted) */
    struct kn_pcap_if ifs[KN_PCAP_MAX_IF];
    struct kn_pcap_if classic;         /* classic pcap: the one link type */
    const char *error;                 /* static text after KN_PCAP_EFORMAT */
    uint64_t blocks, packets, skipped; /* skipped: unknown blocks, packets on unknown interfaces */
};

struct kn_pcap_packet {
    uint32_t if_id; /* 0 for classic pcap */
    uint16_t linktype;
    uint64_t ts_ns;      /* since the epoch (saturates) */
    const uint8_t *data; /* inside the buffer given to kn_pcap_next */
    uint32_t caplen, origlen;
    int dir;             /* KN_PCAPNG_DIR_*: epb_flags, else unknown */
    const char *comment; /* first opt_comment, not NUL-terminated; NULL if none */
    size_t comment_len;
};

void kn_pcap_reader_init(struct kn_pcap_reader *r);

/* Parses the block at buf (len bytes available): the start of the file,
 * then wherever the last call's *used left off. Never reads past len. */
enum kn_pcap_result kn_pcap_next(struct kn_pcap_reader *r, const uint8_t *buf, size_t len,
                                 size_t *used, struct kn_pcap_packet *pkt);

/* A packet decoded down to its transport payload. */
struct kn_pcap_ip {
    uint8_t family; /* 4 or 6 */
    uint8_t src[16], dst[16];
    uint8_t proto; /* KN_IP_PROTO_UDP or KN_IP_PROTO_TCP */
    uint16_t sport, dport;
    uint32_t seq, ack; /* TCP */
    uint8_t tcp_flags;
    const uint8_t *payload; /* inside the packet data */
    size_t payload_len;     /* as captured (<= the length the headers give) */
    bool truncated;         /* the headers say there was more than captured */
};

enum kn_pcap_decode_result {
    KN_PCAP_DEC_OK = 0,
    KN_PCAP_DEC_LINK,     /* link type not handled, or not carrying IP */
    KN_PCAP_DEC_SHORT,    /* headers cut off */
    KN_PCAP_DEC_BAD,      /* a header field is impossible */
    KN_PCAP_DEC_FRAGMENT, /* an IP fragment (not reassembled) */
    KN_PCAP_DEC_PROTO,    /* IP, but neither UDP nor TCP */
};

/* Decodes Ethernet (with VLAN tags), Linux cooked (v1, v2), BSD loopback,
 * raw IPv4/IPv6 frames down to UDP or TCP. */
enum kn_pcap_decode_result kn_pcap_decode(uint16_t linktype, const uint8_t *data, size_t len,
                                          struct kn_pcap_ip *out);

#endif
