/* Simulator backends: the small vtable each backend implements
 * (backend_<name>.c, or the folder <name>/), the table of built backends,
 * the one copy of the config into a conversion table, and the generic
 * link layer (link.c) every backend runs on. The link owns the TCP connection
 * to the simulator (connect timeout, reconnection with capped exponential
 * back-off), remembers the last set-points and re-applies them once the
 * backend says the simulator is ready, keeps at most one command waiting
 * when the simulator does not drain its socket (the latest set-point
 * wins), times each command from UDP receive to socket write, and
 * reports a simulator that is connected but sends no state for the
 * robot's stale_ms as down until it talks again. A backend only turns
 * bytes into neutral state and commands into bytes. */
#ifndef KN_BACKEND_H
#define KN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "config.h"
#include "convert.h"
#include "krp.h"
#include "state.h"

struct kn_link;

struct kn_backend_ops {
    const char *name; /* as in the config: "standin" */
    enum kn_backend_kind kind;
    uint8_t krp_id;        /* HELLO_ACK backend field */
    uint32_t capabilities; /* HELLO_ACK capability bits */
    uint16_t default_port; /* 0: the config must name one */
    /* No TCP connection of the link's: the backend finds its simulator
     * itself (gz-transport discovery). start() asks it to report the
     * simulator with kn_link_ready() (within the handshake deadline, else
     * start is called again after a back-off); kn_link_fail() when the
     * simulator is gone; kn_link_write() is not used. */
    bool discovers;

    /* Per-robot backend state; NULL on allocation failure. */
    void *(*create)(struct kn_link *link, const struct kn_cfg_robot *cfg);
    void (*destroy)(void *be);
    /* Connected: greet the simulator (kn_link_write), and call
     * kn_link_ready() once it can take commands. */
    void (*start)(void *be);
    /* The connection is gone: forget per-connection state. */
    void (*stop)(void *be);
    /* Bytes from the simulator; report state with kn_link_state(). A
     * protocol error the backend cannot recover from: kn_link_fail().
     * data is the links' shared read buffer: consume or copy it before
     * returning, never keep a pointer into it. */
    void (*input)(void *be, const char *data, size_t len);
    /* Encode one command and kn_link_write() it. `reapply` marks the
     * set-points re-sent after a reconnect. */
    void (*send_command)(void *be, const struct kn_command *cmd, bool reapply);
    /* Backend counters into the robot's stats object (may be NULL). */
    void (*stats)(void *be, cJSON *obj);
    /* Lockstep (backend.lockstep): let advance_us of simulated time pass,
     * then kn_link_stepped(). NULL: the simulator cannot step. */
    void (*step)(void *be, uint32_t advance_us);
    /* A judged trial (the built-in engine): reset the robot to the start
     * gate (reset), or report an e-stop engagement; the simulator answers
     * with the trial's state (kn_link_trial). NULL: no trials. */
    void (*trial)(void *be, bool reset);
    /* The stats socket's command for this backend's robots ("world" for
     * gz): the malloc'd JSON reply to its arguments. NULL: none. */
    char *(*command)(const char *args);
};

/* A backend built as a loadable module (gz: kenaf-simd-gz.so) exports one
 * function, named with its own prefix and listed in backend.c's table
 * (kn_gzsim_module_ops), returning these ops:
 * const struct kn_backend_ops *fn(void). The module's code calls the
 * link's and the log's functions of kenaf-simd itself (exported with
 * -rdynamic). */

/* The backend table: every kind the config knows, built or not. A kind
 * built as a module is loaded on its first lookup (RTLD_NOW); NULL when
 * it is not built or its module did not load (kn_backend_error says
 * why, logged once; each such lookup is counted). */
const struct kn_backend_ops *kn_backend_find(enum kn_backend_kind kind);
/* The ops if built in or already loaded; never loads a module. */
const struct kn_backend_ops *kn_backend_loaded(enum kn_backend_kind kind);
/* Why the kind's module did not load ("module PATH: ..."), or NULL. */
const char *kn_backend_error(enum kn_backend_kind kind);
/* Lookups refused because a module did not load (the stats'
 * backend_module_failures). */
uint64_t kn_backend_module_failures(void);
const char *kn_backend_kind_name(enum kn_backend_kind kind);
/* "standin" or "standin, usarsim": for error messages. */
const char *kn_backend_built_list(void);

/* A backend's conversion table from its robot's config: the defaults of
 * its frame (kn_conv_table_usarsim for KN_FRAME_Z_DOWN, the USARSim
 * protocol and the engine; kn_conv_table_gazebo for KN_FRAME_Z_UP, both
 * Gazebos), then every field the table holds that the config sets: wheel
 * radius, counts per metre and per tick, encoder signs, flipper signs
 * and offsets, the tracked-vehicle plugin's separation, efficiency and
 * speed limits. The one place config fields become table fields, so no
 * backend misses one; check it with kn_conv_table_check. */
void kn_backend_conv_from_cfg(enum kn_conv_frame frame, const struct kn_cfg_robot *cfg,
                              struct kn_conv_table *t);

/* ---- the link: what the robot uses ---------------------------------- */

struct kn_link_events {
    void *ctx;
    void (*up)(void *ctx, bool up); /* simulator ready / lost */
    void (*state)(void *ctx, const struct kn_state *s, uint64_t now_ns);
    /* what the ready simulator lacks changed (KN_LINK_NO_*; may be NULL) */
    void (*lacks)(void *ctx, unsigned lacks);
};

/* What a connected, ready simulator cannot carry out, as its backend found
 * out: the robot then answers the commands concerned with an ERROR that
 * says so, instead of accepting them into the void. */
#define KN_LINK_NO_MODEL 0x1u    /* the robot's model is not in the world */
#define KN_LINK_NO_FLIPPERS 0x2u /* nothing acts on flipper targets */
#define KN_LINK_NO_DRIVE 0x4u    /* nothing acts on belt speeds (no drive plugin) */

struct kn_link *kn_link_new(uv_loop_t *loop, const struct kn_cfg_robot *cfg,
                            const struct kn_backend_ops *ops, const struct kn_link_events *ev);
void kn_link_start(struct kn_link *l);

/* A command from the robot rules (belts always, flippers per mask). */
void kn_link_command(struct kn_link *l, const struct kn_command *cmd, uint64_t t_rx_ns);

/* Writes what is queued (give the last command first), waits until it left
 * or the deadline passed, closes and frees the link, then calls done. */
void kn_link_close(struct kn_link *l, void (*done)(void *arg), void *arg);

/* Lockstep: asks the simulator to let advance_us pass (after any held-back
 * set-points); fn(ctx, ok) when it has (ok) or the connection went first.
 * -1: not in lockstep, cannot step, not ready, or a STEP still running. */
void kn_link_on_step(struct kn_link *l, void (*fn)(void *ctx, bool ok), void *ctx);
int kn_link_step(struct kn_link *l, uint32_t advance_us);

/* A judged trial: fn(ctx, t) with each state the simulator reports;
 * kn_link_trial_cmd asks it to reset the robot to the start gate (reset)
 * or tells it of an e-stop engagement: -1 when the backend has no trials
 * or the simulator is not ready. */
void kn_link_on_trial(struct kn_link *l, void (*fn)(void *ctx, const struct kn_krp_trial *t),
                      void *ctx);
int kn_link_trial_cmd(struct kn_link *l, bool reset);

/* The world the simulator says it runs (the built-in engine at an
 * address: KENAF {Cmd World}, usarsim_world.h): fn(ctx, text, len) with
 * its JSON text, each time it comes. */
void kn_link_on_world(struct kn_link *l, void (*fn)(void *ctx, const char *text, size_t len),
                      void *ctx);

bool kn_link_is_up(const struct kn_link *l);
uint64_t kn_link_reconnects(const struct kn_link *l);
void kn_link_stats(struct kn_link *l, cJSON *obj, uint64_t now_ns);

/* ---- the link: what a backend uses ---------------------------------- */

void kn_link_write(struct kn_link *l, const void *data, size_t len);
void kn_link_ready(struct kn_link *l);
void kn_link_state(struct kn_link *l, const struct kn_state *s);
/* The step asked with ops->step is done (ok) or failed. */
void kn_link_stepped(struct kn_link *l, bool ok);
/* The simulator's judged trial as it now stands. */
void kn_link_trial(struct kn_link *l, const struct kn_krp_trial *t);
/* The simulator's answer about the world it runs (JSON text). */
void kn_link_world(struct kn_link *l, const char *text, size_t len);
void kn_link_fail(struct kn_link *l, const char *why);
/* The simulator answered the spawn with a refusal (a full engine world):
 * like kn_link_fail during the handshake, but warned once per streak as a
 * refusal, shown as state "refused" and counted in refusals. */
void kn_link_refused(struct kn_link *l, const char *why);
/* Sets what the simulator lacks (KN_LINK_NO_* bits) on the ready
 * connection; cleared when the connection goes. */
void kn_link_lacks(struct kn_link *l, unsigned lacks);
const char *kn_link_robot(const struct kn_link *l);

/* For a backend that needs more than the link's one connection (Gazebo:
 * a data server and one connection per topic): the loop to open them on,
 * the local address of the simulator connection (-1 when there is none),
 * and a simulator address other than the config's: from create(), or later
 * (a spawned engine's port), when an idle or backing-off link connects to
 * it at once. */
uv_loop_t *kn_link_loop(struct kn_link *l);
int kn_link_local_addr(const struct kn_link *l, struct sockaddr_storage *ss);
void kn_link_set_address(struct kn_link *l, const char *host, uint16_t port);
/* The backend state of the link if its backend is ops, else NULL. */
void *kn_link_backend(struct kn_link *l, const struct kn_backend_ops *ops);
/* When the simulator last sent state on the link's ready connection (or
 * when it became ready, if it sent none since); 0 when it is not ready. */
uint64_t kn_link_heard_ns(const struct kn_link *l);

#endif
