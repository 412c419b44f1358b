/* The bounded table of KRP/1 peers (controllers and consoles, one per
 * address and port) of one robot: what the rules keep per sender (seq
 * mark, ERROR token bucket, subscription, counters). Fixed capacity, hash
 * lookup, least-recently-seen order, so a flood of spoofed sources costs
 * a fixed amount of memory. Pure: no I/O, no clocks. */
#ifndef KN_PEERS_H
#define KN_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tbucket.h"

/* A UDP peer address; only family, address and port take part in equality. */
struct kn_addr {
    struct sockaddr_storage ss;
    socklen_t len;
};

bool kn_addr_equal(const struct kn_addr *a, const struct kn_addr *b);
uint32_t kn_addr_hash(const struct kn_addr *a);
/* "127.0.0.1:9750" or "[::1]:9750"; always NUL-terminates. */
void kn_addr_format(const struct kn_addr *a, char *buf, size_t len);
/* pattern matches a: same family and address, and same port unless the
 * pattern's port is 0 (every port of that address). */
bool kn_addr_match(const struct kn_addr *pattern, const struct kn_addr *a);
/* From a sockaddr (IPv4 or IPv6); returns -1 for other families. */
int kn_addr_set(struct kn_addr *a, const struct sockaddr *sa);

struct kn_peer {
    struct kn_addr addr;
    uint64_t first_seen_ns;
    uint64_t last_seen_ns;
    bool has_mark;
    uint32_t mark;            /* seq of the last set-point applied */
    struct kn_tbucket errors; /* ERROR answers */
    uint16_t sub_period_ms;   /* 0: not subscribed */
    uint64_t sub_next_ns;
    /* sessions (rules.c, docs/protocol.md "Sessions") */
    bool hello;   /* sent HELLO (plain or session) in this session */
    bool session; /* a session HELLO was answered: token required */
    uint32_t token;
    bool console;  /* matches the robot's consoles list */
    char name[17]; /* from HELLO, for stats */
    uint64_t dgrams_in, dgrams_out, errors_sent, errors_suppressed;
    /* table links (indices, -1 = none) */
    int32_t hnext, newer, older;
    int32_t index; /* its own */
    bool used;
};

#define KN_PEERS_BLOCK 16 /* slots allocated at a time */

struct kn_peers {
    struct kn_peer **block; /* cap / KN_PEERS_BLOCK, each NULL until used */
    int32_t *bucket;        /* hash heads */
    uint32_t nbuckets;      /* power of two */
    uint32_t cap, used;
    int32_t newest, oldest; /* recency list */
    int32_t free_head;      /* freed slots chained through hnext */
    uint32_t fresh;         /* slots [fresh, cap) were never used */
};

/* Allocates the table's index; slots come a block at a time as peers do
 * (kn_peers_add). Returns -1 on allocation failure. */
int kn_peers_init(struct kn_peers *t, uint32_t cap);
void kn_peers_free(struct kn_peers *t);

struct kn_peer *kn_peers_find(struct kn_peers *t, const struct kn_addr *a);

/* Adds a peer (zeroed, addr set) as the most recent; NULL when full (or
 * its block could not be allocated). */
struct kn_peer *kn_peers_add(struct kn_peers *t, const struct kn_addr *a);

/* The peer in slot i (an index of the links hnext, newer, older). */
struct kn_peer *kn_peers_at(const struct kn_peers *t, int32_t i);

/* Marks a peer as the most recently seen. */
void kn_peers_touch(struct kn_peers *t, struct kn_peer *p);

/* The least recently seen peer, or NULL when empty. */
struct kn_peer *kn_peers_oldest(struct kn_peers *t);

void kn_peers_remove(struct kn_peers *t, struct kn_peer *p);

/* Iteration in table order: start with i = 0; NULL at the end. */
struct kn_peer *kn_peers_next(struct kn_peers *t, uint32_t *i);

#endif
