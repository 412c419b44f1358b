/* One robot watched over KRP/1 by kenaf-view, without I/O: feed it the
 * datagrams its robot sends and the time, and it answers through callbacks
 * (datagrams to send, events for the page). It only observes: the only
 * messages it ever sends are HELLO, SUBSCRIBE, STATUS_REQ, WORLD_REQ and
 * TRIAL_REQ asking for the trial's state (never a reset).
 *
 * - HELLO until the robot answers (every 0.5 s), then SUBSCRIBE at 20 ms,
 *   renewed every second (a lease lapses after 5 s of silence).
 * - A robot that refuses the subscription (BUSY: its subscriber table is
 *   full) is polled with STATUS_REQ every 20 ms instead.
 * - No STATUS for 1 s: the link is down (the page says "no signal"), and
 *   HELLO starts again; the first STATUS after that brings it back up.
 * - With the world capability, the world description is fetched in 480-
 *   byte chunks (several in flight, lost ones asked again) and checked
 *   again every 5 s, after every HELLO_ACK and when the simulator comes
 *   back (BACKEND_UP), so a changed world reaches the page. A robot without
 *   one (no capability, ERROR UNKNOWN_TYPE, no answer) has the world null.
 * - With the trials capability, the trial's state is asked for every
 *   0.5 s while the link is up, and reported when it changed; a robot that
 *   runs none (ERROR NO_TRIAL or UNKNOWN_TYPE, or no capability after a
 *   HELLO_ACK) has the trial null, said once.
 * Times are monotonic ns. docs/protocol.md has the protocol. */
#ifndef KN_VIEW_WATCH_H
#define KN_VIEW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"

#define KN_WATCH_SUB_MS 20
#define KN_WATCH_HELLO_NS 500000000ull    /* HELLO again while unanswered */
#define KN_WATCH_RENEW_NS 1000000000ull   /* SUBSCRIBE again */
#define KN_WATCH_SILENCE_NS 1000000000ull /* no STATUS this long: link down */
#define KN_WATCH_POLL_NS 20000000ull      /* STATUS_REQ when subscribing is refused */
#define KN_WATCH_WORLD_WINDOW 8           /* WORLD_REQs in flight */
#define KN_WATCH_WORLD_RETRY_NS 300000000ull
#define KN_WATCH_WORLD_TRIES 5 /* unanswered rounds: no world */
#define KN_WATCH_WORLD_CHECK_NS 5000000000ull
#define KN_WATCH_WORLD_MAX (8u << 20)  /* larger documents are refused */
#define KN_WATCH_TRIAL_NS 500000000ull /* TRIAL_REQ this often */

struct kn_watch_io {
    void *ctx;
    void (*send)(void *ctx, const uint8_t *buf, size_t len);
    void (*hello)(void *ctx, const struct kn_krp_hello_ack *a);
    void (*status)(void *ctx, const struct kn_krp_status *s, uint64_t now_ns);
    void (*link)(void *ctx, bool up, const char *reason);
    /* The world document, complete (not NUL-terminated), whenever it is
     * new or changed; doc NULL: the robot describes no world. */
    void (*world)(void *ctx, const char *doc, size_t len);
    /* The trial's state when it changed; NULL: the robot runs no trial
     * (any more). May be NULL. */
    void (*trial)(void *ctx, const struct kn_krp_trial *t);
};

struct kn_watch_stats {
    uint64_t dgrams_in, bad_dgrams, not_from_robot_types;
    uint64_t sent[256]; /* by type */
    uint64_t statuses, hello_acks, links_down, links_up;
    uint64_t errors[KN_KRP_ERR_CODES]; /* ERROR received, by code */
    uint64_t sub_busy;
    uint64_t world_chunks, world_fetches, world_changes, world_bad_chunks, world_too_big;
    uint64_t trials, trial_changes, no_trial;
};

struct kn_watch;

/* name: the HELLO name (up to 16 bytes). NULL when out of memory. */
struct kn_watch *kn_watch_new(const struct kn_watch_io *io, const char *name, uint64_t now_ns);
void kn_watch_free(struct kn_watch *w);

void kn_watch_datagram(struct kn_watch *w, const uint8_t *buf, size_t len, uint64_t now_ns);
/* Timers; call at (or after) kn_watch_next_deadline(). */
void kn_watch_tick(struct kn_watch *w, uint64_t now_ns);
uint64_t kn_watch_next_deadline(const struct kn_watch *w);

bool kn_watch_up(const struct kn_watch *w);
const struct kn_watch_stats *kn_watch_stats(const struct kn_watch *w);

#endif
