/* host:port parsing (see hostport.h): string work only, no lookup, so an
 * address can be checked without a network and the same refusals read the
 * same in the daemon, the library and the tools. */
#include "hostport.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define V6_NEEDS_BRACKETS "an IPv6 address needs brackets, as in [::1]:9750"

enum {
    NAME_MAX_LEN = 253, /* RFC 1035 */
    LABEL_MAX_LEN = 63,
    ZONE_MAX_LEN = 15, /* IF_NAMESIZE - 1 */
    SPEC_SHOWN = 80,   /* a longer spec is cut in messages */
};

static bool v4_ok(const char *h, size_t n)
{
    char buf[INET_ADDRSTRLEN];
    unsigned char addr[4];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, h, n);
    buf[n] = '\0';
    return inet_pton(AF_INET, buf, addr) == 1;
}

/* An IPv6 address, optionally with a %zone (interface name or index),
 * which inet_pton does not take but getaddrinfo does. */
static bool v6_ok(const char *h, size_t n)
{
    char buf[INET6_ADDRSTRLEN + 1 + ZONE_MAX_LEN];
    unsigned char addr[16];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, h, n);
    buf[n] = '\0';
    char *zone = strchr(buf, '%');
    if (zone != NULL) {
        *zone++ = '\0';
        size_t zn = strlen(zone);
        if (zn == 0 || zn > ZONE_MAX_LEN ||
            strspn(zone, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != zn)
            return false;
    }
    return inet_pton(AF_INET6, buf, addr) == 1;
}

/* Letters, digits and inner '-' in non-empty labels of at most 63. */
static bool name_ok(const char *h, size_t n)
{
    size_t label = 0;
    for (size_t i = 0; i <= n; i++) {
        char ch = i < n ? h[i] : '.';
        if (ch == '.') {
            if (label == 0 || label > LABEL_MAX_LEN || h[i - 1] == '-')
                return false;
            label = 0;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                   (ch >= '0' && ch <= '9') || (ch == '-' && label > 0)) {
            label++;
        } else {
            return false;
        }
    }
    return true;
}

int kn_hostport_port(const char *s, unsigned flags, uint16_t *port, const char **why)
{
    if (s == NULL || *s == '\0') {
        *why = "missing port number";
        return -1;
    }
    unsigned long v = 0;
    for (const char *c = s; *c != '\0'; c++) {
        if (*c < '0' || *c > '9') {
            *why = "port is not a number";
            return -1;
        }
        if (v <= 65535) /* stays bounded however many digits follow */
            v = v * 10 + (unsigned long)(*c - '0');
    }
    bool zero_ok = (flags & KN_HOSTPORT_PORT_ZERO) != 0;
    if (v > 65535 || (v == 0 && !zero_ok)) {
        *why = zero_ok ? "port out of range 0..65535" : "port out of range 1..65535";
        return -1;
    }
    *port = (uint16_t)v;
    return 0;
}

/* Where the host is in spec and where the port text starts (NULL: none
 * written); checks the host's form. */
static int split_host(const char *spec, unsigned flags, const char **h, size_t *hn,
                      const char **port_s, const char **why)
{
    *port_s = NULL;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (close == NULL) {
            *why = "missing ']'";
            return -1;
        }
        if (close[1] == ':') {
            *port_s = close + 2;
        } else if (close[1] != '\0') {
            *why = "unexpected text after ']' (expected ':port')";
            return -1;
        }
        *h = spec + 1;
        *hn = (size_t)(close - *h);
        if (*hn == 0) {
            *why = "empty IPv6 address in []";
            return -1;
        }
        if (!v6_ok(*h, *hn)) {
            *why = "bad IPv6 address";
            return -1;
        }
        return 0;
    }
    *h = spec;
    const char *colon = strchr(spec, ':');
    if (colon != NULL && strchr(colon + 1, ':') != NULL) {
        /* more than one ':': an IPv6 address without a port */
        *hn = strlen(spec);
        if (!v6_ok(spec, *hn)) {
            *why = "more than one ':' and not an IPv6 address (" V6_NEEDS_BRACKETS ")";
            return -1;
        }
        if (flags & (KN_HOSTPORT_BRACKETS | KN_HOSTPORT_NEED_PORT)) {
            *why = V6_NEEDS_BRACKETS;
            return -1;
        }
        return 0;
    }
    *hn = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    if (colon != NULL)
        *port_s = colon + 1;
    if (*hn == 0) {
        *why = "missing host";
        return -1;
    }
    if (v4_ok(spec, *hn))
        return 0;
    if (flags & KN_HOSTPORT_IP_ONLY) {
        *why = "expected an IP address, not a host name";
        return -1;
    }
    if (*hn > NAME_MAX_LEN) {
        *why = "host name longer than 253 characters";
        return -1;
    }
    if (!name_ok(spec, *hn)) {
        *why = "bad host name";
        return -1;
    }
    return 0;
}

int kn_hostport_split(const char *spec, uint16_t default_port, unsigned flags, char *host,
                      size_t hostlen, uint16_t *port, const char **why)
{
    if (spec == NULL || *spec == '\0') {
        *why = "empty address";
        return -1;
    }
    const char *h, *port_s;
    size_t hn;
    if ((flags & KN_HOSTPORT_PORT_ALONE) &&
        (spec[0] == ':' || strspn(spec, "0123456789") == strlen(spec))) {
        h = spec;
        hn = 0;
        port_s = spec[0] == ':' ? spec + 1 : spec;
    } else if (split_host(spec, flags, &h, &hn, &port_s, why) != 0) {
        return -1;
    }
    uint16_t p = default_port;
    if (port_s != NULL) {
        if (kn_hostport_port(port_s, flags, &p, why) != 0)
            return -1;
    } else if (flags & KN_HOSTPORT_NEED_PORT) {
        *why = "missing port";
        return -1;
    }
    if (hn >= hostlen) {
        *why = "host too long";
        return -1;
    }
    memcpy(host, h, hn);
    host[hn] = '\0';
    *port = p;
    return 0;
}

void kn_hostport_error(const char *spec, const char *why, char *err, size_t errlen)
{
    if (err == NULL || errlen == 0)
        return;
    char shown[4 * SPEC_SHOWN + 4];
    size_t o = 0, i = 0;
    for (; spec != NULL && spec[i] != '\0' && i < SPEC_SHOWN; i++) {
        unsigned char c = (unsigned char)spec[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", c);
        else
            shown[o++] = (char)c;
    }
    if (spec != NULL && spec[i] != '\0')
        o += (size_t)snprintf(shown + o, sizeof shown - o, "...");
    shown[o] = '\0';
    snprintf(err, errlen, "\"%s\": %s", shown, why);
}

int kn_hostport_parse_flags(const char *spec, uint16_t default_port, unsigned flags, char *host,
                            size_t hostlen, uint16_t *port, char *err, size_t errlen)
{
    const char *why = "";
    if (kn_hostport_split(spec, default_port, flags, host, hostlen, port, &why) == 0)
        return 0;
    kn_hostport_error(spec, why, err, errlen);
    return -1;
}

int kn_hostport_parse(const char *spec, uint16_t default_port, char *host, size_t hostlen,
                      uint16_t *port, char *err, size_t errlen)
{
    return kn_hostport_parse_flags(spec, default_port, 0, host, hostlen, port, err, errlen);
}

int kn_hostport_parse_named(const char *spec, uint16_t default_port, const char *allowed,
                            char *name, size_t namelen, char *host, size_t hostlen, uint16_t *port,
                            char *err, size_t errlen)
{
    name[0] = '\0';
    const char *eq = strchr(spec, '=');
    if (eq != NULL) {
        size_t n = (size_t)(eq - spec);
        bool ok = n > 0 && n < namelen;
        for (size_t k = 0; ok && allowed != NULL && k < n; k++)
            ok = spec[k] != '\0' && strchr(allowed, spec[k]) != NULL;
        if (!ok) {
            snprintf(err, errlen, "\"%.80s\": a name is 1..%zu %s before '='", spec, namelen - 1,
                     allowed != NULL ? "letters, digits, '-' or '_'" : "characters");
            return -1;
        }
        memcpy(name, spec, n);
        name[n] = '\0';
        spec = eq + 1;
    }
    return kn_hostport_parse(spec, default_port, host, hostlen, port, err, errlen);
}

void kn_hostport_format(const char *host, unsigned port, char *buf, size_t len)
{
    snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}
