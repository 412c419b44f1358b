/* Session tokens in a controller replay (docs/protocol.md, "Extension:
 * sessions"). A token is random, so the one a captured controller used
 * means nothing to a live robot: the replay sends the captured HELLO,
 * learns the live robot's token from its HELLO_ACK, and writes that token
 * into the controller's later datagrams in place of the captured one.
 * Each controller keeps a map captured token -> live token, filled per
 * HELLO (by its seq) from both sides. Pure: no sockets, no clocks. */
#ifndef KN_REPLAY_RETOKEN_H
#define KN_REPLAY_RETOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_RETOKEN_MAX 16 /* sessions remembered per controller; the oldest go first */

struct kn_retoken {
    struct {
        uint32_t hello_seq; /* the HELLO that opened (or kept) the session */
        uint32_t cap, live;
        bool have_cap, have_live;
        bool kept; /* no live token came: the captured one stands in */
    } e[KN_RETOKEN_MAX];
    size_t n;
};

/* The token of a session HELLO_ACK answering the HELLO with hello_seq:
 * as captured, or as the live robot gave it. */
void kn_retoken_captured(struct kn_retoken *t, uint32_t hello_seq, uint32_t token);
void kn_retoken_live(struct kn_retoken *t, uint32_t hello_seq, uint32_t token);

enum kn_retoken_result {
    KN_RETOKEN_NONE = 0,  /* no token in the datagram (or it is signed): sent as it is */
    KN_RETOKEN_REWRITTEN, /* the live token written in */
    KN_RETOKEN_WAIT,      /* its session's live HELLO_ACK has not come yet */
    KN_RETOKEN_UNKNOWN,   /* a token no captured HELLO_ACK gave: left as captured */
    KN_RETOKEN_KEPT,      /* its session got no live token (kn_retoken_keep): as captured */
};

/* Rewrites the token of datagram d (len bytes, a controller -> robot
 * type with header flag TOKEN) in place; every other byte stays. A
 * signed datagram (flag MAC) is left alone: its MAC covers the token. */
enum kn_retoken_result kn_retoken_apply(const struct kn_retoken *t, uint8_t *d, size_t len);

/* After waiting in vain (KN_RETOKEN_WAIT) for d's session: its captured
 * token stands for the live one until a live HELLO_ACK for it comes. */
void kn_retoken_keep(struct kn_retoken *t, const uint8_t *d, size_t len);

#endif
