/* Loading a capture for replay: see capfile.h. The file is read whole
 * (captures for replay are sessions, not days) and the datagram and
 * segment records point into it. */
#include "capfile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

#define MAX_FILE (1ull << 31)

bool kn_capfile_endpoint_equal(const struct kn_pcap_endpoint *a, const struct kn_pcap_endpoint *b)
{
    return a->family == b->family && a->port == b->port &&
           memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16) == 0;
}

void kn_capfile_endpoint_format(const struct kn_pcap_endpoint *e, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    if (e->family == 4)
        inet_ntop(AF_INET, e->addr, a, sizeof a);
    else if (e->family == 6)
        inet_ntop(AF_INET6, e->addr, a, sizeof a);
    kn_hostport_format(a, e->port, buf, len);
}

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *np = realloc(*p, nc * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

static int add_dgram(struct kn_capfile *c, uint64_t t, const struct kn_pcap_ip *ip)
{
    if (grow((void **)&c->dg, &c->capdg, c->ndg, sizeof *c->dg) < 0)
        return -1;
    struct kn_capfile_dgram *d = &c->dg[c->ndg++];
    memset(d, 0, sizeof *d);
    d->t_ns = t;
    d->src.family = d->dst.family = ip->family;
    memcpy(d->src.addr, ip->src, 16);
    memcpy(d->dst.addr, ip->dst, 16);
    d->src.port = ip->sport;
    d->dst.port = ip->dport;
    d->data = ip->payload;
    d->len = ip->payload_len;
    d->krp = d->len >= 2 && d->data[0] == 0x4B && d->data[1] == 0x4E;
    return 0;
}

static void endpoints(const struct kn_pcap_ip *ip, struct kn_pcap_endpoint *src,
                      struct kn_pcap_endpoint *dst)
{
    memset(src, 0, sizeof *src);
    memset(dst, 0, sizeof *dst);
    src->family = dst->family = ip->family;
    memcpy(src->addr, ip->src, 16);
    memcpy(dst->addr, ip->dst, 16);
    src->port = ip->sport;
    dst->port = ip->dport;
}

/* The open session of this 4-tuple, or a new one. Who is the client: the
 * sender of a SYN; else the side the capture marks as outbound (the
 * capturing daemon); else the side with the higher port. */
static struct kn_capfile_session *session_for(struct kn_capfile *c, const struct kn_pcap_ip *ip,
                                              int dir, uint64_t t, bool *from_server)
{
    struct kn_pcap_endpoint s, d;
    endpoints(ip, &s, &d);
    bool syn = (ip->tcp_flags & KN_TCP_SYN) && !(ip->tcp_flags & KN_TCP_ACK);
    for (size_t i = c->nsess; i-- > 0;) {
        struct kn_capfile_session *x = &c->sess[i];
        bool fwd =
            kn_capfile_endpoint_equal(&x->client, &s) && kn_capfile_endpoint_equal(&x->server, &d);
        bool rev =
            kn_capfile_endpoint_equal(&x->client, &d) && kn_capfile_endpoint_equal(&x->server, &s);
        if (!fwd && !rev)
            continue;
        if (syn && (x->nseg > 0 || x->closed))
            break; /* the same ports again: a new connection */
        *from_server = rev;
        return x;
    }
    if (grow((void **)&c->sess, &c->capsess, c->nsess, sizeof *c->sess) < 0)
        return NULL;
    struct kn_capfile_session *x = &c->sess[c->nsess++];
    memset(x, 0, sizeof *x);
    bool src_is_client = syn                        ? true
                         : dir == KN_PCAPNG_DIR_OUT ? true
                         : dir == KN_PCAPNG_DIR_IN  ? false
                                                    : ip->sport > ip->dport;
    x->client = src_is_client ? s : d;
    x->server = src_is_client ? d : s;
    x->t_start = t;
    *from_server = !src_is_client;
    return x;
}

static int add_segment(struct kn_capfile *c, uint64_t t, const struct kn_pcap_ip *ip, int dir)
{
    bool from_server;
    struct kn_capfile_session *x = session_for(c, ip, dir, t, &from_server);
    if (!x)
        return -1;
    int k = from_server ? 1 : 0;
    uint8_t fl = ip->tcp_flags;
    if (fl & (KN_TCP_FIN | KN_TCP_RST))
        x->closed = true;
    if (fl & KN_TCP_SYN) {
        x->have_next[k] = true;
        x->next[k] = ip->seq + 1;
        return 0;
    }
    const uint8_t *p = ip->payload;
    size_t n = ip->payload_len;
    if (n == 0)
        return 0;
    if (!x->have_next[k]) {
        x->have_next[k] = true;
        x->next[k] = ip->seq;
    }
    int32_t off = (int32_t)(x->next[k] - ip->seq);
    if (off > 0) { /* all or part of it was seen before */
        if ((size_t)off >= n) {
            x->retransmitted++;
            return 0;
        }
        p += off;
        n -= (size_t)off;
    } else if (off < 0) {
        x->gaps++; /* bytes missing from the capture: carry on after them */
    }
    x->next[k] = ip->seq + (uint32_t)ip->payload_len;
    if (grow((void **)&x->seg, &x->capseg, x->nseg, sizeof *x->seg) < 0)
        return -1;
    struct kn_capfile_segment *g = &x->seg[x->nseg++];
    g->t_ns = t;
    g->from_server = from_server;
    g->data = p;
    g->len = n;
    if (from_server)
        x->bytes_from_server += n;
    else
        x->bytes_to_server += n;
    return 0;
}

int kn_capfile_load_buffer(uint8_t *buf, size_t len, struct kn_capfile *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->file = buf;
    c->file_len = len;
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    size_t off = 0;
    while (off < len) {
        size_t used = 0;
        struct kn_pcap_packet pkt;
        enum kn_pcap_result res = kn_pcap_next(&r, buf + off, len - off, &used, &pkt);
        if (res == KN_PCAP_MORE)
            break; /* a capture cut short (the writer was killed): keep what is whole */
        if (res == KN_PCAP_EFORMAT) {
            snprintf(err, errlen, "%s at byte %zu", r.error, off);
            return -1;
        }
        off += used;
        if (res != KN_PCAP_PACKET)
            continue;
        c->packets++;
        struct kn_pcap_ip ip;
        enum kn_pcap_decode_result d = kn_pcap_decode(pkt.linktype, pkt.data, pkt.caplen, &ip);
        if (d == KN_PCAP_DEC_FRAGMENT) {
            c->fragments++;
            continue;
        }
        if (d == KN_PCAP_DEC_PROTO) {
            c->other_proto++;
            continue;
        }
        if (d != KN_PCAP_DEC_OK) {
            c->undecoded++;
            continue;
        }
        if (ip.truncated)
            c->truncated++;
        int rc = ip.proto == KN_IP_PROTO_UDP ? add_dgram(c, pkt.ts_ns, &ip)
                                             : add_segment(c, pkt.ts_ns, &ip, pkt.dir);
        if (rc < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (r.format == 0) {
        snprintf(err, errlen, "empty file");
        return -1;
    }
    return 0;
}

int kn_capfile_load(const char *path, struct kn_capfile *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 20, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
        if (len == cap) {
            if (cap >= MAX_FILE) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "%s: larger than 2 GiB", path);
                return -1;
            }
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    char e2[200];
    if (kn_capfile_load_buffer(buf, len, c, e2, sizeof e2) < 0) {
        snprintf(err, errlen, "%s: %s", path, e2);
        kn_capfile_free(c);
        return -1;
    }
    return 0;
}

void kn_capfile_free(struct kn_capfile *c)
{
    for (size_t i = 0; i < c->nsess; i++)
        free(c->sess[i].seg);
    free(c->sess);
    free(c->dg);
    free(c->file);
    memset(c, 0, sizeof *c);
}
