/* Allow-lists of source addresses per robot: see access.h. */
#include "access.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"

int kn_access_parse(const char *s, struct kn_access_net *out, const char **why)
{
    char host[64];
    const char *slash = strchr(s, '/');
    size_t hl = slash ? (size_t)(slash - s) : strlen(s);
    memset(out, 0, sizeof *out);
    if (hl == 0 || hl >= sizeof host) {
        *why = "expected an IPv4 or IPv6 address";
        return -1;
    }
    memcpy(host, s, hl);
    host[hl] = '\0';
    int bits;
    if (inet_pton(AF_INET, host, out->addr) == 1) {
        out->family = AF_INET;
        bits = 32;
    } else if (inet_pton(AF_INET6, host, out->addr) == 1) {
        out->family = AF_INET6;
        bits = 128;
    } else {
        *why = "expected an IPv4 or IPv6 address (no host names)";
        return -1;
    }
    long prefix = bits;
    if (slash) {
        char *end = NULL;
        prefix = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || slash[1] == '+' || slash[1] == '-' || prefix < 0 ||
            prefix > bits) {
            *why =
                bits == 32 ? "expected a prefix length 0..32" : "expected a prefix length 0..128";
            return -1;
        }
    }
    out->prefix = (uint8_t)prefix;
    for (int i = 0; i < bits / 8; i++) {
        int keep = (int)prefix - 8 * i;
        uint8_t mask = keep >= 8 ? 0xFF : keep <= 0 ? 0 : (uint8_t)(0xFF << (8 - keep));
        if (out->addr[i] & ~mask) {
            *why = "expected no address bits after the prefix length (a network address)";
            return -1;
        }
    }
    return 0;
}

void kn_access_format(const struct kn_access_net *n, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN];
    if (!inet_ntop(n->family, n->addr, a, sizeof a))
        snprintf(a, sizeof a, "?");
    snprintf(buf, len, "%s/%u", a, (unsigned)n->prefix);
}

static bool in_net(const struct kn_access_net *n, int family, const uint8_t *addr)
{
    if (n->family != family)
        return false;
    unsigned full = n->prefix / 8u, rest = n->prefix % 8u;
    if (memcmp(n->addr, addr, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (addr[full] & mask) == n->addr[full];
}

static bool in_list(const struct kn_access_net *list, unsigned n, int family, const uint8_t *addr)
{
    for (unsigned i = 0; i < n; i++)
        if (in_net(&list[i], family, addr))
            return true;
    return false;
}

bool kn_access_is_driving(const uint8_t *buf, size_t len)
{
    if (len < KN_KRP_HDR_LEN)
        return false;
    switch (buf[3]) {
    case KN_KRP_CRAWLER:
    case KN_KRP_FLIPPER:
    case KN_KRP_STOP: return true;
    case KN_KRP_ESTOP:
        /* a release (0), or a value the rules would refuse: not an observer's */
        return len <= KN_KRP_HDR_LEN || buf[KN_KRP_HDR_LEN] != 1;
    case KN_KRP_TRIAL_REQ:
        /* a reset to the start gate moves the robot; asking for the state does not */
        return len > KN_KRP_HDR_LEN && buf[KN_KRP_HDR_LEN] != KN_KRP_TRIAL_OP_STATE;
    default: return false;
    }
}

enum kn_access_verdict kn_access_check(const struct kn_access *a, const struct sockaddr *from,
                                       const uint8_t *buf, size_t len)
{
    if (!a->on)
        return KN_ACCESS_PASS;
    uint8_t addr[16];
    int family;
    if (from->sa_family == AF_INET) {
        family = AF_INET;
        memcpy(addr, &((const struct sockaddr_in *)from)->sin_addr, 4);
    } else if (from->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)from)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) { /* a dual-stack socket's IPv4 peer */
            family = AF_INET;
            memcpy(addr, a6->s6_addr + 12, 4);
        } else {
            family = AF_INET6;
            memcpy(addr, a6->s6_addr, 16);
        }
    } else {
        return KN_ACCESS_DROP;
    }
    if (in_list(a->drivers, a->n_drivers, family, addr))
        return KN_ACCESS_PASS;
    if (!in_list(a->observers, a->n_observers, family, addr))
        return KN_ACCESS_DROP;
    return kn_access_is_driving(buf, len) ? KN_ACCESS_REFUSE : KN_ACCESS_PASS;
}

bool kn_access_exposed(const char *bind_host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, bind_host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) != 127;
    if (inet_pton(AF_INET6, bind_host, &a6) == 1)
        return !IN6_IS_ADDR_LOOPBACK(&a6) && !(IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return true;
}
