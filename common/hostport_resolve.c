/* host and port to a socket address (see hostport.h). Numeric addresses
 * first, with AI_NUMERICHOST, so a literal never waits on a name server;
 * only a host name (no ':' in it) is looked up. */
#include "hostport.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

int kn_hostport_resolve(const char *host, uint16_t port, int socktype,
                        struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen)
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
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "\"%s\": %s", host,
                     rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    memset(ss, 0, sizeof *ss);
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}
