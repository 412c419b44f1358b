/* trial.h: a judged trial on the console's panel (docs/console.md#trials).
 *
 * A robot that runs a trial (HELLO_ACK capability TRIAL, KRP/1's trials
 * extension) answers TRIAL_REQ with the trial's state: the console asks
 * every 500 ms on its e-stop socket (estop.h), shows the answer, and on
 * the operator's confirmed request sends the reset to the start gate
 * (TRIAL_REQ op 1, with ACK_REQ, repeated every 100 ms until answered),
 * and says what became of it. Without the capability nothing happens and
 * the panel shows no trial. */
#ifndef KN_CONSOLE_TRIAL_H
#define KN_CONSOLE_TRIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"

struct kn_estop;

#define KN_CTRIAL_ASK_S 0.5    /* TRIAL_REQ op 0 while the robot runs a trial */
#define KN_CTRIAL_MISSES 6     /* asks without an answer before the state is stale */
#define KN_CTRIAL_RESEND_S 0.1 /* a reset again until answered */
#define KN_CTRIAL_TRIES 20

enum kn_ctrial_reset {
    KN_CTRIAL_RESET_NONE,
    KN_CTRIAL_RESET_PENDING,
    KN_CTRIAL_RESET_DONE,    /* ACKed */
    KN_CTRIAL_RESET_REFUSED, /* ERROR (code in reset_error) */
    KN_CTRIAL_RESET_NO_ANSWER,
};

struct kn_ctrial {
    bool capable; /* the robot's HELLO_ACK had capability TRIAL */
    bool valid;   /* t is the robot's latest answer */
    struct kn_krp_trial t;
    double next_ask;
    int misses;
    enum kn_ctrial_reset reset;
    uint32_t reset_first, reset_last; /* seqs of the reset's sends */
    int reset_tries;
    double reset_next;
    int reset_error;
    unsigned long resets_done;
};

/* A HELLO_ACK's capabilities, and any datagram from the robot: TRIAL, and
 * the ACK or ERROR that settles a reset. */
void kn_ctrial_hello_ack(struct kn_ctrial *c, uint32_t capabilities);
void kn_ctrial_msg(struct kn_ctrial *c, const struct kn_krp_msg *m);
/* Every tick: asks for the state, repeats a pending reset. */
void kn_ctrial_poll(struct kn_ctrial *c, struct kn_estop *e, double now);
/* The operator confirmed a reset: sends it. */
void kn_ctrial_reset(struct kn_ctrial *c, struct kn_estop *e, double now);
/* The reset's fate for the message line; empty before the first. */
void kn_ctrial_describe(const struct kn_ctrial *c, char *buf, size_t len);
/* The panel's trial block: KN_CTRIAL_LINES lines of at most
 * KN_CTRIAL_COLS characters (it sits left of the side views); false when
 * there is none (no capability, or no answer yet). */
#define KN_CTRIAL_LINES 4
#define KN_CTRIAL_COLS 47
bool kn_ctrial_lines(const struct kn_ctrial *c, char lines[][KN_CTRIAL_COLS + 1], int n);

#endif
