/* The KRP/1 robot rules of docs/protocol.md, without I/O: feed
 * it decoded datagrams, simulator state and the time, and it answers
 * through two callbacks (datagrams to send, commands for the simulator).
 * One instance per robot. Everything the robot side decides lives here
 * (handshake, clamping, seq ordering, watchdog, e-stop, subscriptions,
 * ERROR rate limiting, the bounded peer table), so it is tested directly;
 * robot.c only moves bytes and keeps timers. Times are monotonic ns. */
#ifndef KN_RULES_H
#define KN_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"
#include "peers.h"
#include "state.h"

#define KN_RULES_MAX_PEERS 256
#define KN_RULES_MAX_SUBS 8       /* one of them kept for the driver */
#define KN_RULES_MAX_PLAIN_SUBS 4 /* of those, for peers without a session token */
#define KN_RULES_MAX_CONSOLES 16
#define KN_RULES_MAX_ENGAGEMENTS 64 /* e-stop engagements held at once, the admin's included */
#define KN_RULES_SILENCE_NS 5000000000ull /* mark forgotten, lease lapses */
#define KN_RULES_ERR_RATE 10              /* ERROR answers per second per peer */
#define KN_RULES_ERR_BURST 10
#define KN_RULES_SUB_MIN_MS 10
#define KN_RULES_SUB_MAX_MS 1000
/* After the simulator (re)connects, a STOP leaves the flippers it is
 * restoring on their way to their targets for this long (rules.c). */
#define KN_RULES_RESTORE_NS 5000000000ull

struct kn_rules_params {
    char name[KN_KRP_NAME_LEN + 1]; /* robot name for HELLO_ACK */
    uint8_t backend_id;             /* HELLO_ACK backend field */
    uint32_t capabilities;
    int32_t counts_per_m;
    int32_t max_speed_mm_s;
    int32_t flipper_min_cdeg, flipper_max_cdeg;
    double watchdog_ms;
    double stale_ms;
    double battery_v;   /* when the simulator reports none */
    uint32_t max_peers; /* 0: KN_RULES_MAX_PEERS */
    /* Consoles: always allowed to drive and to release the e-stop. Port 0
     * matches every port of that address. */
    struct kn_addr consoles[KN_RULES_MAX_CONSOLES];
    unsigned n_consoles;
    bool hello_to_drive; /* refuse set-points from a peer that never sent HELLO */
    bool lockstep;       /* STEP moves the robot clock; no belt watchdog */
};

/* Who holds an e-stop engagement (docs/protocol.md, "Emergency stop"). */
enum kn_rules_engager {
    KN_RULES_ENG_PLAIN = 1,   /* a peer without a session: its address and port */
    KN_RULES_ENG_SESSION = 2, /* a session: address, port and token */
    KN_RULES_ENG_CONSOLE = 3, /* a configured console */
    KN_RULES_ENG_ADMIN = 4,   /* kenaf-simd --command 'estop engage ROBOT' */
};

struct kn_rules_engagement {
    struct kn_addr addr; /* zero for the admin */
    uint32_t token;      /* the session's token; 0 for a plain client */
    uint8_t kind;        /* enum kn_rules_engager */
    char name[17];       /* HELLO name, or who asked (admin) */
    uint64_t since_ns;
};

struct kn_rules_io {
    void *ctx;
    /* One datagram to a peer. */
    void (*send)(void *ctx, const struct kn_addr *to, const uint8_t *buf, size_t len);
    /* A command for the simulator: belts always, flippers per mask.
     * t_rx_ns is when the datagram that caused it arrived (latency). */
    void (*command)(void *ctx, const struct kn_command *cmd, uint64_t t_rx_ns);
    /* 32 random bits for session tokens; NULL: a generator seeded from
     * the start time (tests). */
    uint32_t (*random32)(void *ctx);
    /* Lockstep: let the simulator run advance_us of robot time, then call
     * kn_rules_stepped(). 0 when asked, -1 when it cannot (then ERROR
     * BACKEND_DOWN). NULL: the robot has no lockstep. */
    int (*step)(void *ctx, uint32_t advance_us);
    /* A judged trial (docs/protocol.md, "Extension: trials"): reset the
     * robot to the start gate (reset), or report an e-stop engagement.
     * 0 when passed on, -1 when the simulator cannot take it. NULL: the
     * robot's simulator runs no trials. */
    int (*trial)(void *ctx, bool reset);
};

/* Counters for the stats; everything the rules drop or refuse is here. */
struct kn_rules_stats {
    uint64_t in_total, out_total;
    uint64_t in_type[256]; /* well-formed datagrams by type */
    uint64_t out_type[256];
    uint64_t envelope[8];                   /* by enum kn_krp_result (EMAGIC..EPAYLOAD) */
    uint64_t not_to_robot;                  /* robot->controller types sent to us */
    uint64_t errors_sent[KN_KRP_ERR_CODES]; /* by ERROR code */
    uint64_t drop_bad_magic;
    uint64_t drop_rate_limited; /* ERROR answers not sent (token bucket) */
    uint64_t drop_stale_seq;    /* set-points older than the sender's mark */
    uint64_t estop_refused;     /* set-points refused while engaged */
    uint64_t estop_bad_value;
    uint64_t clamped; /* set-points clamped (CRAWLER, FLIPPER) */
    uint64_t sub_clamped, sub_busy, sub_lapsed, sub_cancelled, sub_pushes;
    uint64_t watchdog_trips;
    uint64_t estop_engaged;
    uint64_t commands;           /* commands handed to the backend */
    uint64_t while_backend_down; /* set-points that arrived with the link down */
    uint64_t while_no_model;     /* ... with the robot's model missing from the world */
    uint64_t no_actuator; /* FLIPPERs, CRAWLERs refused: nothing in the simulator acts on them */
    uint64_t peers_added, peers_evicted, peers_overflow, marks_forgotten;
    uint64_t world_bad_offset; /* WORLD_REQ past the document's end */
    /* sessions */
    uint64_t not_owner;             /* CRAWLER/FLIPPER/STOP from a peer that does not drive */
    uint64_t estop_release_refused; /* release by neither an engager nor a console */
    uint64_t estop_engagements;     /* engagements added (the first of a stop: estop_engaged) */
    uint64_t estop_released;        /* engagements released by their own engager */
    uint64_t estop_console_resets, estop_admin_resets; /* all engagements reset at once */
    uint64_t estop_table_full; /* engagements refused with BUSY: the table was full */
    uint64_t bad_session;      /* datagrams with a missing, unknown or stale token */
    uint64_t sessions_opened, sessions_closed, sessions_expired;
    uint64_t driver_claims;      /* a peer became the driver */
    uint64_t driver_takeovers;   /* ... by a console, from another active driver */
    uint64_t driver_idle_claims; /* ... from a plain driver past its grace */
    uint64_t driver_released;    /* BYE, a HELLO to observe, silence */
    uint64_t driver_watchdog;    /* driver role ended by a watchdog trip */
    /* lockstep */
    uint64_t steps, steps_done, steps_failed; /* STEPs passed on, answered, failed */
    uint64_t step_refused;                    /* STEP to a robot without lockstep (UNKNOWN_TYPE) */
    uint64_t step_busy, step_range;           /* another STEP still running; advance out of range */
    /* trials */
    uint64_t trial_states;  /* trial states from the simulator */
    uint64_t trial_reqs;    /* TRIAL_REQs (any op) */
    uint64_t trial_resets;  /* resets passed on to the simulator */
    uint64_t trial_refused; /* resets refused: NOT_OWNER, BACKEND_DOWN */
    uint64_t trial_range;   /* an op other than 0 and 1 */
    uint64_t no_trial;      /* TRIAL_REQ while the simulator runs no trial (NO_TRIAL) */
    uint64_t trial_estops;  /* e-stop engagements reported to the trial */
};

struct kn_rules;

struct kn_rules *kn_rules_new(const struct kn_rules_params *p, const struct kn_rules_io *io,
                              uint64_t now_ns);
void kn_rules_free(struct kn_rules *r);

/* One datagram as received from `from`. */
void kn_rules_datagram(struct kn_rules *r, const struct kn_addr *from, const uint8_t *buf,
                       size_t len, uint64_t now_ns);

/* An ERROR `code` for a datagram refused before the rules saw it (the
 * allow-lists, daemon/access.h): naming its seq and type, with the robot's
 * seq, through the sender's ERROR token bucket. Nothing else changes. */
void kn_rules_refuse(struct kn_rules *r, const struct kn_addr *from, const uint8_t *buf, size_t len,
                     uint8_t code, uint64_t now_ns);

/* Timers: watchdog, subscription pushes, lapsed leases. Call at (or after)
 * kn_rules_next_deadline(); calling it early does nothing harmful. */
void kn_rules_tick(struct kn_rules *r, uint64_t now_ns);

/* When kn_rules_tick must run next; UINT64_MAX when nothing is pending. */
uint64_t kn_rules_next_deadline(const struct kn_rules *r);

/* Backend link became usable (true) or was lost (false). */
void kn_rules_backend(struct kn_rules *r, bool up);

/* What the ready simulator lacks: without the robot's model STATUS is
 * STALE and set-points are answered ERROR NO_MODEL (kept and applied when
 * it appears, like BACKEND_DOWN); without anything acting on flipper
 * targets FLIPPER is refused with ERROR NO_ACTUATOR; without anything
 * acting on belt speeds (no drive plugin) CRAWLER is refused with ERROR
 * NO_ACTUATOR and STATUS is STALE (the state says nothing of a robot that
 * cannot be driven). */
void kn_rules_lacks(struct kn_rules *r, bool no_model, bool no_flippers, bool no_drive);

/* Latest simulator state (neutral units), received at now_ns. */
void kn_rules_state(struct kn_rules *r, const struct kn_state *s, uint64_t now_ns);

/* The simulator finished the STEP asked through io.step (ok), or could
 * not (link lost): the STEP's sender gets the STATUS after it (req_seq =
 * the STEP's seq) or ERROR BACKEND_DOWN. */
void kn_rules_stepped(struct kn_rules *r, bool ok, uint64_t now_ns);

/* Daemon shutting down or robot removed: belts 0, flippers hold. */
void kn_rules_halt(struct kn_rules *r, uint64_t now_ns);

/* STATUS state flags as they would be sent now. */
uint16_t kn_rules_flags(const struct kn_rules *r, uint64_t now_ns);

/* ns since the last simulator state; UINT64_MAX when none yet. */
uint64_t kn_rules_state_age(const struct kn_rules *r, uint64_t now_ns);

unsigned kn_rules_subscribers(const struct kn_rules *r);
const struct kn_rules_stats *kn_rules_stats(const struct kn_rules *r);
struct kn_peers *kn_rules_peers(struct kn_rules *r);

/* The world document (a JSON text, docs/protocol.md) WORLD_REQ is
 * answered from; copied. Having one sets the world capability bit in
 * HELLO_ACK. NULL or len 0 removes it (WORLD then says total_len 0).
 * -1 when out of memory (the old document stays). */
int kn_rules_set_world(struct kn_rules *r, const char *doc, size_t len);

/* The simulator's judged trial as it now stands: TRIAL_REQ is answered
 * from it, and HELLO_ACK has capability bit 7 from the first on. */
void kn_rules_trial(struct kn_rules *r, const struct kn_krp_trial *t);
bool kn_rules_has_trial(const struct kn_rules *r);

/* The peer that drives now, or NULL. */
const struct kn_peer *kn_rules_driver(const struct kn_rules *r);

/* The e-stop's engagements (the robot is stopped while there is one):
 * their number, and in *list the table, oldest first (valid until the
 * next call in). */
unsigned kn_rules_estop(const struct kn_rules *r, const struct kn_rules_engagement **list);

/* The engager is still there: its peer (and session) heard within 5 s. */
bool kn_rules_engager_present(struct kn_rules *r, const struct kn_rules_engagement *e,
                              uint64_t now_ns);

/* The admin's engagement (one at most; `who` is logged and listed). */
void kn_rules_estop_engage(struct kn_rules *r, const char *who, uint64_t now_ns);

/* Resets every engagement, as a console's release does; how many held. */
unsigned kn_rules_estop_reset(struct kn_rules *r);

/* The plain driver has sent no set-point for its grace: another client's
 * set-point may claim the robot. */
bool kn_rules_driver_idle(const struct kn_rules *r, uint64_t now_ns);

/* Active session (token) peers. */
unsigned kn_rules_sessions(struct kn_rules *r);

/* The set-points the robot holds now (belts; flippers that were ever set). */
void kn_rules_setpoints(const struct kn_rules *r, struct kn_command *cmd);

#endif
