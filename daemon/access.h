/* Per-robot allow-lists (config robots[].allow_drivers, allow_observers):
 * which source addresses a robot listens to at all, and which of them may
 * move it. Sans-I/O: addresses and datagram bytes in, a verdict out;
 * robot.c applies it before the KRP/1 rules see a datagram. A robot with
 * neither list hears everyone (KRP/1 as it is, for a loopback lab). */
#ifndef KN_ACCESS_H
#define KN_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define KN_ACCESS_MAX_NETS 32 /* entries per list */
struct kn_access_net {
    uint8_t family;   /* AF_INET or AF_INET6 */
    uint8_t prefix;   /* 0..32 or 0..128 */
    uint8_t addr[16]; /* network bits, host bits zero */
};

struct kn_access {
    uint8_t n_drivers, n_observers;
    bool on; /* a list is configured (even an empty one) */
    struct kn_access_net drivers[KN_ACCESS_MAX_NETS];
    struct kn_access_net observers[KN_ACCESS_MAX_NETS];
};

enum kn_access_verdict {
    KN_ACCESS_PASS = 0, /* to the rules */
    KN_ACCESS_DROP,     /* address in neither list: dropped without answer */
    KN_ACCESS_REFUSE,   /* observer sending a driving command: ERROR NOT_ALLOWED */
};

/* "10.1.2.0/24", "::1/128", "127.0.0.1" (a whole address). -1 with *why
 * on a bad entry; host bits set after the prefix are an error too (a typo
 * for another network). */
int kn_access_parse(const char *s, struct kn_access_net *out, const char **why);

/* "10.1.2.0/24" back, for the effective config. */
void kn_access_format(const struct kn_access_net *n, char *buf, size_t len);

/* What to do with a datagram from `from` (an IPv4-mapped IPv6 address
 * counts as its IPv4 address). */
enum kn_access_verdict kn_access_check(const struct kn_access *a, const struct sockaddr *from,
                                       const uint8_t *buf, size_t len);

/* CRAWLER, FLIPPER, STOP, or an ESTOP that releases: what moves the robot
 * or lets it move (engaging the e-stop is open to observers). */
bool kn_access_is_driving(const uint8_t *buf, size_t len);

/* A listen address that is not loopback (nor a wildcard's loopback). */
bool kn_access_exposed(const char *bind_host);

#endif
