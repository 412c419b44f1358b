/* estop.h: the robot-side emergency stop latch, engaged from the console.
 *
 * The driver library API (kenaf.h) has no e-stop function, yet an
 * operator's e-stop must hold every controller, not just this console:
 * an autonomous controller running beside it would otherwise drive on.
 * KRP/1's ESTOP message is that latch (the robot refuses CRAWLER and
 * FLIPPER from everyone until released), so the console sends it itself,
 * on a small UDP socket of its own to the same robot address the library
 * uses, with ACK_REQ, repeated every 100 ms until acknowledged. This is the
 * console's only use of the KRP/1 codec. */
#ifndef KN_CONSOLE_ESTOP_H
#define KN_CONSOLE_ESTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_ESTOP_RESEND_S 0.1
#define KN_ESTOP_TRIES 20

enum kn_estop_state {
    KN_ESTOP_IDLE,      /* nothing sent yet */
    KN_ESTOP_PENDING,   /* sent, no answer yet */
    KN_ESTOP_ACKED,     /* the robot acknowledged the last request */
    KN_ESTOP_NO_ANSWER, /* KN_ESTOP_TRIES sends without an answer */
    KN_ESTOP_REFUSED,   /* the robot answered ERROR */
};

struct kn_estop {
    int fd;
    uint32_t seq;
    bool engage;            /* the last request */
    uint32_t sent_seq;      /* seq of its latest send */
    int tries;
    double next_send;
    enum kn_estop_state state;
    int error_code;         /* KRP/1 error code when REFUSED */
    unsigned long sent, acks, errors;
};

/* Parses "host:port", "[v6]:port" or a host alone (port 9750), as the
 * library reads KENAF_ROBOT, and opens a connected non-blocking UDP socket.
 * 0, or -1 with a reason in err. */
int kn_estop_open(struct kn_estop *e, const char *robot, char *err, size_t errlen);
void kn_estop_close(struct kn_estop *e);
/* Engage (true) or release (false): sends now and again every 100 ms until
 * the robot acknowledges. */
void kn_estop_request(struct kn_estop *e, bool engage, double now);
/* Resends a pending request when due. */
void kn_estop_tick(struct kn_estop *e, double now);
/* Reads the robot's answers (call when the socket is readable). */
void kn_estop_readable(struct kn_estop *e);
/* The last request's fate for the panel ("engage acknowledged"); empty
 * before the first. */
void kn_estop_describe(const struct kn_estop *e, char *buf, size_t len);

#endif
