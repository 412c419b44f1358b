/* The one parser of "host:port" addresses, for every place an address is
 * read from a user (config, KENAF_ROBOT, command lines, GAZEBO_MASTER_URI):
 * the same forms, the same refusals, the same words everywhere.
 *
 * Forms: "host", "host:port", "[v6]", "[v6]:port", and a bare IPv6
 * address without a port ("::1", "fe80::1%eth0"). A host is an IPv4
 * address, an IPv6 address (a %zone allowed) or a host name (letters,
 * digits and '-' in dot-separated labels of at most 63, 253 in all). A
 * written port is 1..65535; a missing one is default_port (which may be 0
 * for "none given"). */
#ifndef KN_HOSTPORT_H
#define KN_HOSTPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Caller rules on top of the common forms (kn_hostport_split). */
#define KN_HOSTPORT_NEED_PORT 0x1u   /* the port must be written */
#define KN_HOSTPORT_PORT_ZERO 0x2u   /* a written port 0 is accepted (bind: any free port) */
#define KN_HOSTPORT_IP_ONLY 0x4u     /* a host name is refused (bound, not resolved) */
#define KN_HOSTPORT_BRACKETS 0x8u    /* a bare IPv6 address is refused (URIs need [v6]) */
#define KN_HOSTPORT_PORT_ALONE 0x10u /* "9750" or ":9750" is a port, host left "" */

/* The inverse of the parser: "host:port", or "[v6]:port" for a host
 * with a ':' (an IPv6 literal); always NUL-terminates (len > 0). */
void kn_hostport_format(const char *host, unsigned port, char *buf, size_t len);

/* Splits spec into host (without brackets) and port. 0, or -1 with a
 * message `"<spec>": <reason>` in err. */
int kn_hostport_parse(const char *spec, uint16_t default_port, char *host, size_t hostlen,
                      uint16_t *port, char *err, size_t errlen);

/* "[NAME=]HOST:PORT", a robot on a tool's command line: NAME (empty when
 * there is none; a host never holds '=', so the first '=' ends it) of
 * 1..namelen - 1 characters, each from `allowed` when that is not NULL,
 * then kn_hostport_parse. 0, or -1 with the reason in err. */
int kn_hostport_parse_named(const char *spec, uint16_t default_port, const char *allowed,
                            char *name, size_t namelen, char *host, size_t hostlen, uint16_t *port,
                            char *err, size_t errlen);

/* kn_hostport_parse with KN_HOSTPORT_* rules. */
int kn_hostport_parse_flags(const char *spec, uint16_t default_port, unsigned flags, char *host,
                            size_t hostlen, uint16_t *port, char *err, size_t errlen);

/* The same, for callers that word the message themselves: on -1, *why is
 * the reason alone (a static string, e.g. "missing ']'"). */
int kn_hostport_split(const char *spec, uint16_t default_port, unsigned flags, char *host,
                      size_t hostlen, uint16_t *port, const char **why);

/* The message kn_hostport_parse writes: `"<spec>": <why>`, the spec cut
 * at 80 characters and its quotes, backslashes and non-ASCII bytes escaped
 * (\xNN) so the message stays one printable line. For callers that take
 * more forms than the parser (a port alone, say). */
void kn_hostport_error(const char *spec, const char *why, char *err, size_t errlen);

/* A port number alone ("9750"), by the same rules (KN_HOSTPORT_PORT_ZERO
 * is the only flag it reads). 0, or -1 with the reason in *why. */
int kn_hostport_port(const char *s, unsigned flags, uint16_t *port, const char **why);

/* host (as kn_hostport_parse leaves it) and port to a socket address of
 * the given socket type: numeric addresses without a lookup, else the
 * first getaddrinfo answer. 0, or -1 with `"<host>": <reason>` in err.
 * (hostport_resolve.c) */
int kn_hostport_resolve(const char *host, uint16_t port, int socktype, struct sockaddr_storage *ss,
                        socklen_t *sslen, char *err, size_t errlen);

/* kn_hostport_split then kn_hostport_resolve: spec straight to a socket
 * address. 0, or -1 with `"<spec>": <reason>` in err, whichever step
 * refused it. */
int kn_hostport_lookup(const char *spec, uint16_t default_port, unsigned flags, int socktype,
                       struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen);

#endif
