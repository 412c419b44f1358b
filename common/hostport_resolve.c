/* host and port to a socket address (see hostport.h). Numeric addresses
 * first, with AI_NUMERICHOST, so a literal never waits on a name server;
 * only a host name (no ':' in it) is looked up. */
#include "hostport.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

static int resolve(const char *host, uint16_t port, int socktype, struct sockaddr_storage *ss,
                   socklen_t *sslen, const char **why)
{
    char ps[8];
    snprintf(ps, sizeof ps, "%u", (unsigned)port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = socktype,
        .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
    };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc == EAI_NONAME && strchr(host, ':') == NULL) { /* a name, not a bad IPv6 literal */
        hints.ai_flags = AI_NUMERICSERV;
        rc = getaddrinfo(host, ps, &hints, &res);
    }
    if (rc == 0 && (res == NULL || res->ai_addrlen > sizeof *ss)) {
        if (res != NULL)
            freeaddrinfo(res);
        rc = EAI_FAIL;
    }
    if (rc != 0) {
        *why = rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc);
        return -1;
    }
    memset(ss, 0, sizeof *ss);
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int kn_hostport_resolve(const char *host, uint16_t port, int socktype, struct sockaddr_storage *ss,
                        socklen_t *sslen, char *err, size_t errlen)
{
    const char *why;
    if (resolve(host, port, socktype, ss, sslen, &why) == 0)
        return 0;
    kn_hostport_error(host, why, err, errlen);
    return -1;
}

int kn_hostport_lookup(const char *spec, uint16_t default_port, unsigned flags, int socktype,
                       struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen)
{
    char host[NI_MAXHOST];
    uint16_t port;
    const char *why;
    if (kn_hostport_split(spec, default_port, flags, host, sizeof host, &port, &why) == 0 &&
        resolve(host, port, socktype, ss, sslen, &why) == 0)
        return 0;
    kn_hostport_error(spec, why, err, errlen);
    return -1;
}
