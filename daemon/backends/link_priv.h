/* The simulator link's state (link.c): its connection attempts, the
 * commands held for the turn's one write, the latest-wins queue and the
 * stall figures. Private to daemon/backends/. */
#ifndef KN_DAEMON_LINK_PRIV_H
#define KN_DAEMON_LINK_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "backend.h"
#include "capture.h"
#include "histogram.h"

#define BACKOFF_FIRST_S 0.05
#define HANDSHAKE_S 5.0              /* connected but not ready: give up after */
#define CLOSE_DEADLINE_MS 1000       /* flushing the last commands at shutdown */
#define STALL_REPORT_NS 100000000ull /* a write queue older than this is a stall */
/* Kernel send buffer toward the simulator. Left to autotuning it grows to
 * megabytes, i.e. seconds of stale commands queued below us before the
 * latest-wins queue above can act; this bounds that backlog to a few
 * hundred commands (the kernel doubles the value). */
#define SNDBUF_BYTES 32768
/* What one loop turn writes toward the simulator is held and written at
 * once by the flush check; this much held is written without waiting. */
#define OUT_FLUSH_AT 65536
/* Bytes from the simulator waiting unread when the silence timer fires:
 * look again this soon, after the loop has read them. */
#define UNREAD_RECHECK_MS 20

enum lstate { L_IDLE, L_RESOLVING, L_CONNECTING, L_HANDSHAKE, L_READY, L_BACKOFF, L_CLOSING };

struct conn {
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_shutdown_t sreq;
    struct kn_link *link;
    bool connected;              /* TCP established */
    bool started;                /* ops->start was called */
    bool abandoned;              /* no longer the link's connection; close under way */
    struct kn_capture_flow flow; /* how the capture shows this connection */
};

struct wreq {
    uv_write_t req;
    char *data;   /* after t[nt] */
    size_t nt;    /* commands whose bytes end in this write */
    uint64_t t[]; /* their receive times, for the latency histogram */
};

struct kn_link {
    uv_loop_t *loop;
    char robot[KN_CFG_NAME_LEN + 1];
    char host[KN_CFG_HOST_LEN];
    uint16_t port;
    char where[KN_CFG_HOST_LEN + 16];
    double connect_timeout_s, reconnect_max_s;
    const struct kn_backend_ops *ops;
    void *be;
    struct kn_link_events ev;

    enum lstate st;
    struct conn *conn;
    unsigned conns_open; /* handles not yet closed, current or not */
    uv_timer_t timer;    /* timeouts, back-off, deferred failure, close deadline */
    bool timer_closing;
    uv_getaddrinfo_t gai;
    bool gai_busy;
    double backoff_s;      /* the wait after the next failure */
    double backoff_last_s; /* the wait after the last one (stats: its cap shows) */
    bool was_ready;
    bool deferred_fail;
    char deferred_why[96];
    bool start_wanted; /* kn_link_start was called (an address may come later) */
    bool node_started; /* a discovering backend's start was called (no TCP) */

    /* last set-points, re-applied on reconnect */
    struct kn_command last;
    bool have_cmd;
    /* the one command waiting while the simulator does not drain */
    struct kn_command pend;
    bool pending;
    uint64_t pend_t_rx;

    /* This loop turn's bytes toward the simulator, in order, written once
     * by the flush check (kn_link_write appends), with the receive times
     * of the commands they carry (for the latency histogram). */
    uv_check_t flush;
    char *obuf;
    size_t olen, ocap;
    uint64_t *ot;
    size_t nt, tcap;
    uint64_t appended; /* bytes ever appended: did a command write any? */
    struct kn_hist lat;

    bool stalled;
    uint64_t stall_since, stall_episodes, stall_total_ns;

    uint64_t attempts, connects, connect_failures, disconnects, reconnects;
    uint64_t handshake_timeouts, write_errors, bytes_dropped;
    uint64_t cmds_sent, cmds_coalesced, cmds_while_down, cmds_reapplied;
    uint64_t bytes_in, bytes_out, states;
    uint64_t last_state_ns;
    bool have_state;
    /* a connected simulator that stopped talking (no state for stale_ns):
     * reported down until it talks again */
    uint64_t stale_ns, heard_ns; /* heard_ns: last state, or when the link became ready */
    bool silent;
    bool lockstep;     /* backend.lockstep: no silence check, STEP passes through */
    bool step_pending; /* a STEP is with the simulator */
    void (*on_step)(void *ctx, bool ok);
    void *step_ctx;
    uint64_t steps_sent, steps_done, steps_lost;
    void (*on_trial)(void *ctx, const struct kn_krp_trial *t);
    void *trial_ctx;
    void (*on_world)(void *ctx, const char *text, size_t len);
    void *world_ctx;
    uint64_t silent_since_ns, silences;
    uint64_t unread_saves; /* silent by the clock, but its bytes were waiting unread */
    unsigned lacks;        /* KN_LINK_NO_*, from the backend */
    uint64_t down_since_ns;
    unsigned fail_streak;
    /* the simulator took the connection but refused the robot (an engine
     * world that is full): shown as state "refused" until a spawn works */
    bool refused;  /* the last attempt ended so */
    bool refusing; /* this attempt is ending so (kn_link_refused) */
    uint64_t refusals;
    char last_error[128];

    void (*done)(void *arg);
    void *done_arg;
};

#endif
