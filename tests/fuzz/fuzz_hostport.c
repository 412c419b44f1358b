/* libFuzzer target for the host:port parser: the first byte picks the
 * KN_HOSTPORT_* rules, the rest is the address. Any text is taken or
 * refused with a one-line `"<spec>": <reason>`; what is taken holds a
 * valid host and port and, written back as host:port or [v6]:port, parses
 * to the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned flags = data[0] & 0x1fu;
    uint16_t def = (uint16_t)(data[0] >> 5); /* 0: "none written" */
    char spec[600];
    size_t n = size - 1 < sizeof spec - 1 ? size - 1 : sizeof spec - 1;
    memcpy(spec, data + 1, n);
    spec[n] = '\0';

    char host[300], err[512];
    uint16_t port = 0;
    if (kn_hostport_parse_flags(spec, def, flags, host, sizeof host, &port, err, sizeof err) != 0) {
        if (err[0] != '"' || strstr(err, "\": ") == NULL)
            abort(); /* a refusal says what and why */
        for (const char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                abort(); /* and stays one printable line */
        return 0;
    }
    if ((host[0] == '\0' && !(flags & KN_HOSTPORT_PORT_ALONE)) || strlen(host) > 253 ||
        strlen(host) > strlen(spec))
        abort();
    if (port == 0 && !(flags & KN_HOSTPORT_PORT_ZERO) && def != 0)
        abort();
    if ((flags & KN_HOSTPORT_NEED_PORT) && !(flags & KN_HOSTPORT_PORT_ALONE) &&
        strchr(spec, ':') == NULL)
        abort(); /* a required port was written */

    char again[400], host2[300];
    uint16_t port2 = 0;
    kn_hostport_format(host, port, again, sizeof again);
    /* (an empty host, from a port alone, writes back as ":port") */
    if (kn_hostport_parse_flags(again, def, flags | KN_HOSTPORT_PORT_ZERO, host2, sizeof host2,
                                &port2, err, sizeof err) != 0)
        abort();
    if (strcmp(host, host2) != 0 || port != port2)
        abort();
    return 0;
}
