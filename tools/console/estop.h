/* estop.h: the robot-side emergency stop latch, engaged from the console.
 *
 * The driver library API (kenaf.h) has no e-stop function, yet an
 * operator's e-stop must hold every controller, not just this console:
 * an autonomous controller running beside it would otherwise drive on.
 * KRP/1's ESTOP message is that latch (the robot refuses CRAWLER and
 * FLIPPER from everyone until released), so the console sends it itself,
 * on a small UDP socket of its own to the same robot address the library
 * uses, with ACK_REQ, repeated every 100 ms until acknowledged. This is the
 * console's only use of the KRP/1 codec.
 *
 * With sessions the robot's e-stop is a circuit: it stays stopped while
 * any station's engagement holds, and STATUS only says that it is
 * stopped. A robot with the e-stop info extension (HELLO_ACK capability
 * ESTOP_INFO) says who holds it; the same socket says HELLO to learn
 * that, and while the robot is stopped asks every 500 ms, so the panel can
 * show why the robot stays stopped after this console released. */
#ifndef KN_CONSOLE_ESTOP_H
#define KN_CONSOLE_ESTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"
#include "trial.h"

#define KN_ESTOP_RESEND_S 0.1
#define KN_ESTOP_TRIES 20
#define KN_ESTOP_HELLO_S 1.0   /* HELLO again until the robot answers */
#define KN_ESTOP_HELLOS 10     /* HELLOs in all while the robot shows no trial */
#define KN_ESTOP_INFO_S 0.5    /* ESTOP_INFO_REQ while the robot is stopped */
#define KN_ESTOP_INFO_MISSES 4 /* asks without an answer before the list is dropped */

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
    bool engage;        /* the last request */
    uint32_t first_seq; /* seq of its first send */
    uint32_t sent_seq;  /* seq of its latest send */
    int tries;
    double next_send;
    enum kn_estop_state state;
    int error_code; /* KRP/1 error code when REFUSED */
    unsigned long sent, acks, errors;
    /* the e-stop info extension */
    bool hello_answered; /* a HELLO_ACK came back ... */
    bool info_capable;   /* ... with capability ESTOP_INFO */
    double next_hello, next_info;
    int hellos;      /* HELLOs sent */
    int info_misses; /* ESTOP_INFO_REQs since the last answer */
    bool info_valid; /* info is the robot's latest answer */
    struct kn_krp_estop_info info;
    /* the trials extension shares the socket (trial.h) */
    struct kn_ctrial trial;
};

/* Parses "host:port", "[v6]:port" or a host alone (port 9750), as the
 * library reads KENAF_ROBOT, and opens a connected non-blocking UDP socket.
 * 0, or -1 with a reason in err. */
int kn_estop_open(struct kn_estop *e, const char *robot, char *err, size_t errlen);
void kn_estop_close(struct kn_estop *e);
/* Sends m on the socket with its next seq (the trial's requests); that seq. */
uint32_t kn_estop_send(struct kn_estop *e, struct kn_krp_msg *m);
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
/* The e-stop info extension: says HELLO until the robot answers, then,
 * while `stopped` and the robot has the extension, asks who holds its
 * e-stop every 500 ms (call every tick). */
void kn_estop_poll(struct kn_estop *e, bool stopped, double now);
/* Who holds the robot's e-stop, for the panel: "by 2: alice (session),
 * station-b (plain, gone)"; empty when the robot has not said. */
void kn_estop_holders(const struct kn_estop *e, char *buf, size_t len);

#endif
