/* The rules module's insides, shared by its files: rules.c (the robot:
 * output, commands, set-points, subscriptions, dispatch, timers),
 * rules_session.c (peers, sessions, who drives), rules_estop.c (the
 * e-stop's engagements) and rules_trial.c (a judged trial). Nothing outside daemon/rules*.c includes it:
 * everyone else goes through rules.h. */
#ifndef KN_RULES_PRIV_H
#define KN_RULES_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "krp.h"
#include "peers.h"
#include "rules.h"
#include "state.h"

#define KN_RULES_ENG_INLINE 4 /* e-stop engagements held without an allocation */

struct kn_rules {
    struct kn_rules_params p;
    struct kn_rules_io io;
    struct kn_peers peers;
    struct kn_tbucket overflow_errors; /* peers that found the table full */
    /* One more than the limit: a driver that hands over keeps its
     * subscription, and the new driver still gets the slot kept for it. */
    struct kn_peer *subs[KN_RULES_MAX_SUBS + 1];
    unsigned nsubs;

    struct kn_peer *driver; /* the one peer whose set-points apply */
    uint64_t driver_sp_ns;  /* the driver's last set-point (plain grace) */
    uint64_t grace_ns;      /* a plain driver's hold after its last set-point */
    /* The e-stop circuit: the robot is stopped while any engagement holds.
     * The first few are held in place; the full table (10 KiB, for
     * KN_RULES_MAX_ENGAGEMENTS) is allocated only when more are held at
     * once, so a fleet does not carry one per robot. */
    struct kn_rules_engagement *eng; /* eng_inline, or the full table */
    unsigned n_eng, eng_cap;
    struct kn_rules_engagement eng_inline[KN_RULES_ENG_INLINE];
    uint64_t rng; /* tokens without io.random32 */

    uint32_t seq_out; /* the robot's own seq, one per robot */

    struct kn_state state; /* latest from the simulator */
    bool have_state;
    uint64_t state_ns;
    bool backend_up;
    bool no_model, no_flippers, no_drive; /* what the ready simulator lacks */

    char *world; /* the world document, or NULL */
    uint32_t world_len;

    bool wd_armed, wd_flag;
    uint64_t wd_fed_ns, wd_ns;
    bool clamped;

    bool step_pending; /* a STEP is with the simulator */
    uint32_t step_seq; /* its seq and sender */
    struct kn_addr step_from;

    double belts[2];              /* set-point now, m/s */
    double flipper[KN_NFLIPPERS]; /* flipper targets, rad */
    uint8_t flipper_valid;        /* which targets were ever set */
    uint8_t restoring;            /* targets a returned simulator is still restoring */
    bool restore_started;         /* restore_ns is set */
    uint64_t restore_ns;          /* first state after the simulator returned */

    struct kn_krp_trial trial; /* the judged trial as the simulator last said */
    bool have_trial;

    struct kn_rules_stats st;
};

static inline uint64_t kn_rules_elapsed(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}

static inline void kn_rules_stop_belts(struct kn_rules *r)
{
    r->belts[0] = r->belts[1] = 0;
}

/* ---- rules.c ---------------------------------------------------------- */

/* One datagram to `to`, with the robot's next seq; p (may be NULL) counts it. */
void kn_rules_send_msg(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                       struct kn_krp_msg *m);
/* ERROR `code` naming seq and type, through the sender's token bucket. */
void kn_rules_send_error(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                         uint32_t seq, uint8_t type, uint8_t code, uint64_t now);
/* ACK, when the header asks for one. */
void kn_rules_send_ack(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                       const struct kn_krp_header *h);
/* The belts and the flippers in flipper_mask toward the simulator;
 * emergency: it brakes (watchdog, e-stop). */
void kn_rules_command_as(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx, bool emergency);
void kn_rules_command(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx);
/* Flipper targets become the measured angles; the mask of those set. */
uint8_t kn_rules_hold_flippers(struct kn_rules *r, uint64_t now, bool keep_restoring);
/* The peer's subscription ends. */
void kn_rules_drop_sub(struct kn_rules *r, struct kn_peer *p);

/* ---- rules_session.c -------------------------------------------------- */

/* The sender's entry, created if needed; NULL when the table is full. */
struct kn_peer *kn_rules_peer_get(struct kn_rules *r, const struct kn_addr *from, uint64_t now);
/* A driver silent for KN_RULES_SILENCE_NS gives the robot up. */
void kn_rules_expire_driver(struct kn_rules *r, uint64_t now);
/* The datagram carries the sender's session token (else ERROR BAD_SESSION). */
bool kn_rules_token_ok(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now);
/* The sender drives, or becomes the driver (else ERROR NOT_OWNER). */
bool kn_rules_may_drive(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                        const struct kn_krp_msg *m, uint64_t now);
void kn_rules_on_hello(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now);
void kn_rules_on_bye(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                     const struct kn_krp_msg *m, uint64_t now);

/* ---- rules_estop.c ---------------------------------------------------- */

void kn_rules_on_estop(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now);
void kn_rules_on_estop_info_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                                uint64_t now);

/* ---- rules_trial.c ---------------------------------------------------- */

void kn_rules_on_trial_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                           const struct kn_krp_msg *m, uint64_t now);
/* An e-stop engagement was added: the trial counts it. */
void kn_rules_trial_estop(struct kn_rules *r);

#endif
