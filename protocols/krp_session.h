/* The client's half of KRP/1 sessions (docs/protocol.md, "Sessions"):
 * what a controller, console or viewer keeps after a session HELLO_ACK,
 * how it marks its HELLO and stamps its datagrams, and when an ERROR
 * BAD_SESSION means its session is gone. Pure: no sockets, no clocks.
 * The library, kenaf-view and kenaf-trace share it. */
#ifndef KN_KRP_SESSION_H
#define KN_KRP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "krp.h"

struct kn_krp_session {
    bool on;      /* the robot opened a session: stamp every datagram */
    uint8_t role; /* enum kn_krp_role, as the last HELLO_ACK said */
    uint32_t token;
    uint32_t first_seq; /* first seq sent with this token */
    bool legacy;        /* the robot answered HELLO without a session */
};

/* Fills m as a HELLO asking for a session: to drive, or to observe.
 * With a session already open it carries the token, so the robot keeps
 * the session and only reconsiders the role. */
void kn_krp_session_hello(const struct kn_krp_session *s, struct kn_krp_msg *m, const char *name,
                          bool observe);

/* Adds the token to any other datagram when a session is open. */
void kn_krp_session_stamp(const struct kn_krp_session *s, struct kn_krp_msg *m);

/* Takes a HELLO_ACK; next_seq is the seq the client sends next. Returns
 * true when it opened a new session (a new token). */
bool kn_krp_session_accept(struct kn_krp_session *s, const struct kn_krp_hello_ack *a,
                           uint32_t next_seq);

/* Takes an ERROR; true when it is BAD_SESSION for a datagram sent under
 * the current token: the session is gone (closed here), HELLO again. */
bool kn_krp_session_lost(struct kn_krp_session *s, const struct kn_krp_error *e);

#endif
