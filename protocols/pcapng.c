/* Capture file codec: see pcapng.h. Writing is little-endian only;
 * reading takes either byte order, pcapng and classic pcap. */
#include "pcapng.h"

#include <string.h>

#define OPT_ENDOFOPT 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_DESCRIPTION 3
#define IF_TSRESOL 9
#define IF_TSOFFSET 14
#define EPB_FLAGS 2

#define PCAP_MAGIC_US 0xA1B2C3D4u
#define PCAP_MAGIC_NS 0xA1B23C4Du

/* ---- little helpers ---------------------------------------------------- */

static size_t pad4(size_t n)
{
    return (n + 3u) & ~(size_t)3u;
}

static void le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static uint16_t rd_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t rd_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint16_t rd16(const struct kn_pcap_reader *r, const uint8_t *p)
{
    return r->swap ? rd_be16(p) : (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const struct kn_pcap_reader *r, const uint8_t *p)
{
    if (r->swap)
        return rd_be32(p);
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static size_t opt_size(size_t len)
{
    return 4 + pad4(len);
}

static size_t put_opt(uint8_t *p, uint16_t code, const void *val, size_t len)
{
    le16(p, code);
    le16(p + 2, (uint16_t)len);
    if (len)
        memcpy(p + 4, val, len);
    memset(p + 4 + len, 0, pad4(len) - len);
    return opt_size(len);
}

/* Options are at most 65535 bytes long; longer strings are cut. */
static size_t str_opt_len(const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = strlen(s);
    return n > 65532 ? 65532 : n;
}

/* ---- writing ------------------------------------------------------------ */

size_t kn_pcapng_write_shb(uint8_t *buf, size_t cap, const char *userappl)
{
    size_t ul = str_opt_len(userappl);
    size_t opts = ul ? opt_size(ul) + 4 : 0;
    size_t total = 28 + opts;
    if (cap < total)
        return 0;
    le32(buf, KN_PCAPNG_SHB);
    le32(buf + 4, (uint32_t)total);
    le32(buf + 8, KN_PCAPNG_BYTE_ORDER_MAGIC);
    le16(buf + 12, 1);
    le16(buf + 14, 0);
    memset(buf + 16, 0xFF, 8); /* section length: not known in advance */
    size_t o = 24;
    if (ul) {
        o += put_opt(buf + o, SHB_USERAPPL, userappl, ul);
        o += put_opt(buf + o, OPT_ENDOFOPT, NULL, 0);
    }
    le32(buf + o, (uint32_t)total);
    return total;
}

size_t kn_pcapng_write_idb(uint8_t *buf, size_t cap, uint16_t linktype, uint32_t snaplen,
                           const char *name, const char *description)
{
    size_t nl = str_opt_len(name), dl = str_opt_len(description);
    size_t opts = opt_size(1) + (nl ? opt_size(nl) : 0) + (dl ? opt_size(dl) : 0) + 4;
    size_t total = 20 + opts;
    if (cap < total)
        return 0;
    le32(buf, KN_PCAPNG_IDB);
    le32(buf + 4, (uint32_t)total);
    le16(buf + 8, linktype);
    le16(buf + 10, 0);
    le32(buf + 12, snaplen);
    size_t o = 16;
    const uint8_t ns = 9;
    o += put_opt(buf + o, IF_TSRESOL, &ns, 1);
    if (nl)
        o += put_opt(buf + o, IF_NAME, name, nl);
    if (dl)
        o += put_opt(buf + o, IF_DESCRIPTION, description, dl);
    o += put_opt(buf + o, OPT_ENDOFOPT, NULL, 0);
    le32(buf + o, (uint32_t)total);
    return total;
}

size_t kn_pcapng_epb_size(size_t caplen, int dir, const char *comment)
{
    size_t cl = str_opt_len(comment);
    size_t opts = (dir ? opt_size(4) : 0) + (cl ? opt_size(cl) : 0);
    if (opts)
        opts += 4;
    return 32 + pad4(caplen) + opts;
}

size_t kn_pcapng_write_epb(uint8_t *buf, size_t cap, uint32_t if_id, uint64_t ts_ns,
                           const uint8_t *pkt, size_t caplen, size_t origlen, int dir,
                           const char *comment)
{
    if (caplen > KN_PCAP_MAX_BLOCK - 1024 || origlen < caplen || origlen > UINT32_MAX || dir < 0 ||
        dir > 2)
        return 0;
    size_t total = kn_pcapng_epb_size(caplen, dir, comment);
    if (cap < total)
        return 0;
    le32(buf, KN_PCAPNG_EPB);
    le32(buf + 4, (uint32_t)total);
    le32(buf + 8, if_id);
    le32(buf + 12, (uint32_t)(ts_ns >> 32));
    le32(buf + 16, (uint32_t)ts_ns);
    le32(buf + 20, (uint32_t)caplen);
    le32(buf + 24, (uint32_t)origlen);
    if (caplen)
        memcpy(buf + 28, pkt, caplen);
    size_t o = 28 + caplen;
    memset(buf + o, 0, pad4(caplen) - caplen);
    o = 28 + pad4(caplen);
    size_t cl = str_opt_len(comment);
    if (dir || cl) {
        if (dir) {
            uint8_t f[4];
            le32(f, (uint32_t)dir);
            o += put_opt(buf + o, EPB_FLAGS, f, 4);
        }
        if (cl)
            o += put_opt(buf + o, OPT_COMMENT, comment, cl);
        o += put_opt(buf + o, OPT_ENDOFOPT, NULL, 0);
    }
    le32(buf + o, (uint32_t)total);
    return total;
}

/* Internet checksum: one's-complement sum of 16-bit words. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)((p[i] << 8) | p[i + 1]);
    if (n & 1u)
        sum += (uint32_t)(p[n - 1] << 8);
    return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Writes the IP header for a transport segment of tlen bytes; returns the
 * header length and the pseudo-header sum for the transport checksum. */
static size_t put_ip(uint8_t *p, const struct kn_pcap_endpoint *src,
                     const struct kn_pcap_endpoint *dst, uint8_t proto, uint16_t ip_id, size_t tlen,
                     uint32_t *pseudo)
{
    uint8_t ph[4];
    uint32_t s = 0;
    if (src->family == 4) {
        p[0] = 0x45;
        p[1] = 0;
        be16(p + 2, (uint16_t)(KN_PCAP_IP4_HDR + tlen));
        be16(p + 4, ip_id);
        be16(p + 6, 0x4000); /* don't fragment */
        p[8] = 64;
        p[9] = proto;
        be16(p + 10, 0);
        memcpy(p + 12, src->addr, 4);
        memcpy(p + 16, dst->addr, 4);
        be16(p + 10, csum_fold(csum_add(0, p, KN_PCAP_IP4_HDR)));
        s = csum_add(s, src->addr, 4);
        s = csum_add(s, dst->addr, 4);
        ph[0] = 0;
        ph[1] = proto;
        be16(ph + 2, (uint16_t)tlen);
        *pseudo = csum_add(s, ph, 4);
        return KN_PCAP_IP4_HDR;
    }
    be32(p, 0x60000000u);
    be16(p + 4, (uint16_t)tlen);
    p[6] = proto;
    p[7] = 64;
    memcpy(p + 8, src->addr, 16);
    memcpy(p + 24, dst->addr, 16);
    s = csum_add(s, src->addr, 16);
    s = csum_add(s, dst->addr, 16);
    uint8_t ph6[8] = { 0 };
    be32(ph6, (uint32_t)tlen);
    ph6[7] = proto;
    *pseudo = csum_add(s, ph6, 8);
    return KN_PCAP_IP6_HDR;
}

static bool endpoints_ok(const struct kn_pcap_endpoint *src, const struct kn_pcap_endpoint *dst)
{
    return src && dst && (src->family == 4 || src->family == 6) && src->family == dst->family;
}

static size_t ip_hdr_len(uint8_t family)
{
    return family == 4 ? KN_PCAP_IP4_HDR : KN_PCAP_IP6_HDR;
}

size_t kn_pcap_build_udp(uint8_t *buf, size_t cap, const struct kn_pcap_endpoint *src,
                         const struct kn_pcap_endpoint *dst, uint16_t ip_id, const uint8_t *payload,
                         size_t len)
{
    if (!endpoints_ok(src, dst) || len > KN_PCAP_MAX_PAYLOAD)
        return 0;
    size_t ih = ip_hdr_len(src->family), total = ih + KN_PCAP_UDP_HDR + len;
    if (cap < total)
        return 0;
    uint32_t pseudo;
    put_ip(buf, src, dst, KN_IP_PROTO_UDP, ip_id, KN_PCAP_UDP_HDR + len, &pseudo);
    uint8_t *u = buf + ih;
    be16(u, src->port);
    be16(u + 2, dst->port);
    be16(u + 4, (uint16_t)(KN_PCAP_UDP_HDR + len));
    be16(u + 6, 0);
    if (len)
        memcpy(u + KN_PCAP_UDP_HDR, payload, len);
    uint16_t c = csum_fold(csum_add(pseudo, u, KN_PCAP_UDP_HDR + len));
    be16(u + 6, c ? c : 0xFFFF); /* 0 would mean "no checksum" */
    return total;
}

size_t kn_pcap_build_tcp(uint8_t *buf, size_t cap, const struct kn_pcap_endpoint *src,
                         const struct kn_pcap_endpoint *dst, uint16_t ip_id, uint32_t seq,
                         uint32_t ack, uint8_t flags, const uint8_t *payload, size_t len)
{
    if (!endpoints_ok(src, dst) || len > KN_PCAP_MAX_PAYLOAD)
        return 0;
    size_t ih = ip_hdr_len(src->family), total = ih + KN_PCAP_TCP_HDR + len;
    if (cap < total)
        return 0;
    uint32_t pseudo;
    put_ip(buf, src, dst, KN_IP_PROTO_TCP, ip_id, KN_PCAP_TCP_HDR + len, &pseudo);
    uint8_t *t = buf + ih;
    be16(t, src->port);
    be16(t + 2, dst->port);
    be32(t + 4, seq);
    be32(t + 8, (flags & KN_TCP_ACK) ? ack : 0);
    t[12] = 5u << 4;
    t[13] = flags;
    be16(t + 14, 65535);
    be16(t + 16, 0);
    be16(t + 18, 0);
    if (len)
        memcpy(t + KN_PCAP_TCP_HDR, payload, len);
    be16(t + 16, csum_fold(csum_add(pseudo, t, KN_PCAP_TCP_HDR + len)));
    return total;
}

/* ---- reading ------------------------------------------------------------ */

void kn_pcap_reader_init(struct kn_pcap_reader *r)
{
    memset(r, 0, sizeof *r);
}

static enum kn_pcap_result fail(struct kn_pcap_reader *r, const char *why)
{
    r->error = why;
    return KN_PCAP_EFORMAT;
}

static enum kn_pcap_result more(size_t need, size_t *used)
{
    *used = need;
    return KN_PCAP_MORE;
}

/* Time stamp in the interface's units to ns since the epoch, saturating. */
static uint64_t ts_to_ns(uint64_t ts, uint8_t res, int64_t offset_s)
{
    uint64_t ns;
    if (res & 0x80u) {
        unsigned e = res & 0x7Fu;
        if (e > 63)
            e = 63;
        unsigned __int128 v = ((unsigned __int128)ts * 1000000000u) >> e;
        ns = v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
    } else if (res <= 9) {
        uint64_t mul = 1;
        for (unsigned i = res; i < 9; i++)
            mul *= 10;
        ns = ts > UINT64_MAX / mul ? UINT64_MAX : ts * mul;
    } else {
        ns = ts;
        for (unsigned i = 9; i < res && ns; i++)
            ns /= 10;
    }
    if (offset_s > 0) {
        uint64_t add = (uint64_t)offset_s > UINT64_MAX / 1000000000u
                           ? UINT64_MAX
                           : (uint64_t)offset_s * 1000000000u;
        ns = ns > UINT64_MAX - add ? UINT64_MAX : ns + add;
    } else if (offset_s < 0) {
        uint64_t mag = (uint64_t)(-(offset_s + 1)) + 1u;
        uint64_t sub = mag > UINT64_MAX / 1000000000u ? UINT64_MAX : mag * 1000000000u;
        ns = ns < sub ? 0 : ns - sub;
    }
    return ns;
}

/* One option of a block. next_opt steps through the options in [p, end)
 * and says false at opt_endofopt or where an option would run past the
 * end (the rest is ignored, as readers commonly do). */
struct opt_view {
    uint16_t code;
    uint16_t len;
    const uint8_t *val;
};

static bool next_opt(const struct kn_pcap_reader *r, const uint8_t **p, const uint8_t *end,
                     struct opt_view *o)
{
    if (end - *p < 4)
        return false;
    o->code = rd16(r, *p);
    o->len = rd16(r, *p + 2);
    o->val = *p + 4;
    if (o->code == OPT_ENDOFOPT)
        return false;
    size_t step = 4 + pad4(o->len);
    if ((size_t)(end - *p) < step) {
        /* a last option may lack its padding; accept it if the value fits */
        if ((size_t)(end - *p) < 4u + o->len)
            return false;
        step = (size_t)(end - *p);
    }
    *p += step;
    return true;
}

static enum kn_pcap_result classic_header(struct kn_pcap_reader *r, const uint8_t *buf, size_t len,
                                          size_t *used)
{
    if (len < 24)
        return more(24, used);
    uint16_t major = rd16(r, buf + 4);
    if (major != 2)
        return fail(r, "pcap: unsupported version");
    r->classic.snaplen = rd32(r, buf + 16);
    /* the upper bits may carry FCS information */
    uint32_t lt = rd32(r, buf + 20) & 0x03FFFFFFu;
    if (lt > 0xFFFF)
        return fail(r, "pcap: link type out of range");
    r->classic.linktype = (uint16_t)lt;
    r->format = 2;
    r->blocks++;
    *used = 24;
    return KN_PCAP_BLOCK;
}

static enum kn_pcap_result classic_record(struct kn_pcap_reader *r, const uint8_t *buf, size_t len,
                                          size_t *used, struct kn_pcap_packet *pkt)
{
    if (len < 16)
        return more(16, used);
    uint32_t sec = rd32(r, buf), frac = rd32(r, buf + 4);
    uint32_t incl = rd32(r, buf + 8), orig = rd32(r, buf + 12);
    if (incl > KN_PCAP_MAX_BLOCK)
        return fail(r, "pcap: record larger than 16 MiB");
    if (len < 16u + incl)
        return more(16u + incl, used);
    memset(pkt, 0, sizeof *pkt);
    pkt->linktype = r->classic.linktype;
    uint64_t sub = r->classic.tsresol == 9 ? frac : (uint64_t)frac * 1000u;
    pkt->ts_ns = (uint64_t)sec * 1000000000u + sub;
    pkt->data = buf + 16;
    pkt->caplen = incl;
    pkt->origlen = orig < incl ? incl : orig;
    r->packets++;
    *used = 16u + incl;
    return KN_PCAP_PACKET;
}

static enum kn_pcap_result ng_shb(struct kn_pcap_reader *r, const uint8_t *buf, size_t len,
                                  size_t *used)
{
    /* the byte-order magic decides how to read the length */
    if (len < 12)
        return more(12, used);
    uint32_t bom = (uint32_t)buf[8] | ((uint32_t)buf[9] << 8) | ((uint32_t)buf[10] << 16) |
                   ((uint32_t)buf[11] << 24);
    if (bom == KN_PCAPNG_BYTE_ORDER_MAGIC)
        r->swap = false;
    else if (bom == 0x4D3C2B1Au)
        r->swap = true;
    else
        return fail(r, "pcapng: bad byte-order magic");
    uint32_t total = rd32(r, buf + 4);
    if (total < 28 || total % 4 || total > KN_PCAP_MAX_BLOCK)
        return fail(r, "pcapng: bad section header length");
    if (len < total)
        return more(total, used);
    if (rd32(r, buf + total - 4) != total)
        return fail(r, "pcapng: block lengths differ");
    if (rd16(r, buf + 12) != 1)
        return fail(r, "pcapng: unsupported major version");
    r->format = 1;
    r->section = true;
    r->n_if = 0;
    r->blocks++;
    *used = total;
    return KN_PCAP_BLOCK;
}

static void ng_idb(struct kn_pcap_reader *r, const uint8_t *body, size_t blen)
{
    unsigned i = r->n_if++;
    if (i >= KN_PCAP_MAX_IF || blen < 8)
        return;
    struct kn_pcap_if *f = &r->ifs[i];
    memset(f, 0, sizeof *f);
    f->linktype = rd16(r, body);
    f->snaplen = rd32(r, body + 4);
    f->tsresol = 6;
    const uint8_t *p = body + 8, *end = body + blen;
    struct opt_view o;
    while (next_opt(r, &p, end, &o)) {
        if (o.code == IF_TSRESOL && o.len >= 1)
            f->tsresol = o.val[0];
        else if (o.code == IF_TSOFFSET && o.len >= 8) {
            uint64_t v = r->swap ? ((uint64_t)rd_be32(o.val) << 32) | rd_be32(o.val + 4)
                                 : ((uint64_t)rd32(r, o.val + 4) << 32) | rd32(r, o.val);
            f->tsoffset_s = (int64_t)v;
        }
    }
}

static void packet_opts(const struct kn_pcap_reader *r, const uint8_t *p, const uint8_t *end,
                        struct kn_pcap_packet *pkt)
{
    struct opt_view o;
    while (next_opt(r, &p, end, &o)) {
        if (o.code == EPB_FLAGS && o.len >= 4)
            pkt->dir = (int)(rd32(r, o.val) & 3u);
        else if (o.code == OPT_COMMENT && !pkt->comment) {
            pkt->comment = (const char *)o.val;
            pkt->comment_len = o.len;
        }
    }
    if (pkt->dir == 3)
        pkt->dir = KN_PCAPNG_DIR_UNKNOWN;
}

enum kn_pcap_result kn_pcap_next(struct kn_pcap_reader *r, const uint8_t *buf, size_t len,
                                 size_t *used, struct kn_pcap_packet *pkt)
{
    *used = 0;
    if (r->format == 0) {
        if (len < 4)
            return more(4, used);
        uint32_t m = (uint32_t)buf[0] | ((uint32_t)buf[1] << 8) | ((uint32_t)buf[2] << 16) |
                     ((uint32_t)buf[3] << 24);
        if (m == KN_PCAPNG_SHB)
            return ng_shb(r, buf, len, used);
        if (m == PCAP_MAGIC_US || m == PCAP_MAGIC_NS) {
            r->swap = false;
        } else if (m == 0xD4C3B2A1u || m == 0x4D3CB2A1u) {
            r->swap = true; /* written big-endian */
        } else {
            return fail(r, "not a pcapng or pcap file");
        }
        r->classic.tsresol = (m == PCAP_MAGIC_NS || m == 0x4D3CB2A1u) ? 9 : 6;
        return classic_header(r, buf, len, used);
    }
    if (r->format == 2)
        return classic_record(r, buf, len, used, pkt);

    if (len < 8)
        return more(8, used);
    uint32_t type = rd32(r, buf);
    if (type == KN_PCAPNG_SHB)
        return ng_shb(r, buf, len, used);
    uint32_t total = rd32(r, buf + 4);
    if (total < 12 || total % 4 || total > KN_PCAP_MAX_BLOCK)
        return fail(r, "pcapng: bad block length");
    if (len < total)
        return more(total, used);
    if (rd32(r, buf + total - 4) != total)
        return fail(r, "pcapng: block lengths differ");
    *used = total;
    r->blocks++;
    const uint8_t *body = buf + 8;
    size_t blen = total - 12;

    if (type == KN_PCAPNG_IDB) {
        if (blen < 8)
            return fail(r, "pcapng: interface block too short");
        ng_idb(r, body, blen);
        return KN_PCAP_BLOCK;
    }
    if (type == KN_PCAPNG_EPB || type == KN_PCAPNG_PB) {
        if (blen < 20)
            return fail(r, "pcapng: packet block too short");
        uint32_t ifid;
        if (type == KN_PCAPNG_EPB)
            ifid = rd32(r, body);
        else
            ifid = rd16(r, body);
        uint32_t hi = rd32(r, body + 4), lo = rd32(r, body + 8);
        uint32_t cl = rd32(r, body + 12), ol = rd32(r, body + 16);
        if (cl > blen - 20 || pad4(cl) > blen - 20)
            return fail(r, "pcapng: packet longer than its block");
        if (ifid >= r->n_if || ifid >= KN_PCAP_MAX_IF) {
            r->skipped++;
            return KN_PCAP_BLOCK;
        }
        const struct kn_pcap_if *f = &r->ifs[ifid];
        memset(pkt, 0, sizeof *pkt);
        pkt->if_id = ifid;
        pkt->linktype = f->linktype;
        pkt->ts_ns = ts_to_ns(((uint64_t)hi << 32) | lo, f->tsresol, f->tsoffset_s);
        pkt->data = body + 20;
        pkt->caplen = cl;
        pkt->origlen = ol < cl ? cl : ol;
        packet_opts(r, body + 20 + pad4(cl), body + blen, pkt);
        r->packets++;
        return KN_PCAP_PACKET;
    }
    if (type == KN_PCAPNG_SPB) {
        if (blen < 4)
            return fail(r, "pcapng: simple packet block too short");
        if (r->n_if == 0) {
            r->skipped++;
            return KN_PCAP_BLOCK;
        }
        const struct kn_pcap_if *f = &r->ifs[0];
        uint32_t ol = rd32(r, body);
        uint32_t cl = (uint32_t)(blen - 4);
        if (ol < cl)
            cl = ol;
        if (f->snaplen && cl > f->snaplen)
            cl = f->snaplen;
        memset(pkt, 0, sizeof *pkt);
        pkt->linktype = f->linktype;
        pkt->data = body + 4;
        pkt->caplen = cl;
        pkt->origlen = ol;
        r->packets++;
        return KN_PCAP_PACKET;
    }
    r->skipped++; /* name resolution, statistics, custom, ...: not needed */
    return KN_PCAP_BLOCK;
}

/* ---- decoding ------------------------------------------------------------ */

static enum kn_pcap_decode_result decode_transport(const uint8_t *p, size_t len, size_t claimed,
                                                   struct kn_pcap_ip *out)
{
    if (out->proto == KN_IP_PROTO_UDP) {
        if (len < KN_PCAP_UDP_HDR)
            return KN_PCAP_DEC_SHORT;
        out->sport = rd_be16(p);
        out->dport = rd_be16(p + 2);
        size_t ulen = rd_be16(p + 4);
        if (ulen < KN_PCAP_UDP_HDR) {
            if (ulen != 0) /* 0: a jumbogram's UDP length; take the IP one */
                return KN_PCAP_DEC_BAD;
            ulen = claimed;
        }
        if (ulen > claimed)
            return KN_PCAP_DEC_BAD;
        size_t want = ulen - KN_PCAP_UDP_HDR;
        size_t have = len - KN_PCAP_UDP_HDR;
        out->payload = p + KN_PCAP_UDP_HDR;
        out->payload_len = have < want ? have : want;
        out->truncated = have < want;
        return KN_PCAP_DEC_OK;
    }
    if (out->proto == KN_IP_PROTO_TCP) {
        if (len < KN_PCAP_TCP_HDR)
            return KN_PCAP_DEC_SHORT;
        out->sport = rd_be16(p);
        out->dport = rd_be16(p + 2);
        out->seq = rd_be32(p + 4);
        out->ack = rd_be32(p + 8);
        size_t off = (size_t)(p[12] >> 4) * 4u;
        out->tcp_flags = p[13];
        if (off < KN_PCAP_TCP_HDR || off > claimed)
            return KN_PCAP_DEC_BAD;
        if (off > len)
            return KN_PCAP_DEC_SHORT;
        size_t want = claimed - off, have = len - off;
        out->payload = p + off;
        out->payload_len = have < want ? have : want;
        out->truncated = have < want;
        return KN_PCAP_DEC_OK;
    }
    return KN_PCAP_DEC_PROTO;
}

static enum kn_pcap_decode_result decode_ip4(const uint8_t *p, size_t len, struct kn_pcap_ip *out)
{
    if (len < KN_PCAP_IP4_HDR)
        return KN_PCAP_DEC_SHORT;
    size_t ihl = (size_t)(p[0] & 0x0Fu) * 4u;
    size_t tot = rd_be16(p + 2);
    if (ihl < KN_PCAP_IP4_HDR || tot < ihl)
        return KN_PCAP_DEC_BAD;
    if (len < ihl)
        return KN_PCAP_DEC_SHORT;
    out->family = 4;
    memcpy(out->src, p + 12, 4);
    memcpy(out->dst, p + 16, 4);
    out->proto = p[9];
    uint16_t frag = rd_be16(p + 6);
    if ((frag & 0x2000u) || (frag & 0x1FFFu))
        return KN_PCAP_DEC_FRAGMENT;
    /* TSO captures show a total length of 0: take what was captured */
    size_t claimed = tot == 0 ? len - ihl : tot - ihl;
    size_t have = len - ihl;
    enum kn_pcap_decode_result r =
        decode_transport(p + ihl, have < claimed ? have : claimed, claimed, out);
    return r;
}

static enum kn_pcap_decode_result decode_ip6(const uint8_t *p, size_t len, struct kn_pcap_ip *out)
{
    if (len < KN_PCAP_IP6_HDR)
        return KN_PCAP_DEC_SHORT;
    size_t plen = rd_be16(p + 4);
    uint8_t nh = p[6];
    out->family = 6;
    memcpy(out->src, p + 8, 16);
    memcpy(out->dst, p + 24, 16);
    size_t off = KN_PCAP_IP6_HDR;
    size_t end = plen == 0 ? len : KN_PCAP_IP6_HDR + plen; /* 0: jumbogram */
    /* hop-by-hop, routing and destination options may come first */
    for (int hops = 0; nh == 0 || nh == 43 || nh == 60; hops++) {
        if (hops > 8)
            return KN_PCAP_DEC_BAD;
        if (len < off + 8)
            return KN_PCAP_DEC_SHORT;
        size_t el = ((size_t)p[off + 1] + 1u) * 8u;
        nh = p[off];
        off += el;
        if (off > end)
            return KN_PCAP_DEC_BAD;
    }
    if (nh == 44)
        return KN_PCAP_DEC_FRAGMENT;
    if (len < off)
        return KN_PCAP_DEC_SHORT;
    out->proto = nh;
    size_t claimed = end - off, have = len - off;
    return decode_transport(p + off, have < claimed ? have : claimed, claimed, out);
}

static enum kn_pcap_decode_result decode_l3(uint16_t ethertype, const uint8_t *p, size_t len,
                                            struct kn_pcap_ip *out)
{
    if (ethertype == 0x0800)
        return decode_ip4(p, len, out);
    if (ethertype == 0x86DD)
        return decode_ip6(p, len, out);
    return KN_PCAP_DEC_LINK;
}

enum kn_pcap_decode_result kn_pcap_decode(uint16_t linktype, const uint8_t *data, size_t len,
                                          struct kn_pcap_ip *out)
{
    memset(out, 0, sizeof *out);
    switch (linktype) {
    case KN_PCAP_LINK_RAW:
        if (len < 1)
            return KN_PCAP_DEC_SHORT;
        if ((data[0] >> 4) == 4)
            return decode_ip4(data, len, out);
        if ((data[0] >> 4) == 6)
            return decode_ip6(data, len, out);
        return KN_PCAP_DEC_BAD;
    case KN_PCAP_LINK_IPV4: return decode_ip4(data, len, out);
    case KN_PCAP_LINK_IPV6: return decode_ip6(data, len, out);
    case KN_PCAP_LINK_ETHERNET: {
        if (len < 14)
            return KN_PCAP_DEC_SHORT;
        size_t off = 12;
        uint16_t et = rd_be16(data + off);
        for (int tags = 0; (et == 0x8100 || et == 0x88A8 || et == 0x9100) && tags < 4; tags++) {
            off += 4;
            if (len < off + 2)
                return KN_PCAP_DEC_SHORT;
            et = rd_be16(data + off);
        }
        off += 2;
        return decode_l3(et, data + off, len - off, out);
    }
    case KN_PCAP_LINK_LINUX_SLL:
        if (len < 16)
            return KN_PCAP_DEC_SHORT;
        return decode_l3(rd_be16(data + 14), data + 16, len - 16, out);
    case KN_PCAP_LINK_LINUX_SLL2:
        if (len < 20)
            return KN_PCAP_DEC_SHORT;
        return decode_l3(rd_be16(data), data + 20, len - 20, out);
    case KN_PCAP_LINK_NULL:
    case KN_PCAP_LINK_LOOP: {
        if (len < 4)
            return KN_PCAP_DEC_SHORT;
        /* NULL: the capturing host's order, unknown here; the family
         * values are small, so whichever end holds it tells */
        uint32_t fam = linktype == KN_PCAP_LINK_LOOP ? rd_be32(data)
                       : data[0] || data[1]          ? (uint32_t)data[0] | ((uint32_t)data[1] << 8)
                                                     : rd_be32(data);
        if (fam == 2)
            return decode_ip4(data + 4, len - 4, out);
        if (fam == 10 || fam == 24 || fam == 28 || fam == 30)
            return decode_ip6(data + 4, len - 4, out);
        return KN_PCAP_DEC_LINK;
    }
    default: return KN_PCAP_DEC_LINK;
    }
}
