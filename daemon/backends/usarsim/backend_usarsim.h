/* The USARSim client: the protocol logic of the "usarsim" backend, and of
 * the "engine" backend when the built-in engine runs at an address (it
 * serves the same protocol). Sans-I/O so the unit tests and the fuzz
 * target drive it directly: bytes and commands in, lines and neutral
 * state out through the callbacks below, the clock passed in by the
 * caller. backend_usarsim.c wraps it into the link's ops.
 * docs/usarsim.md explains the choices (when INIT goes out, what
 * makes the link ready, which sensor feeds which field, what is derived). */
#ifndef KN_BACKEND_USARSIM_H
#define KN_BACKEND_USARSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "krp.h"
#include "state.h"

/* GETCONF/GETGEO answers after this long count as timed out (UDK never
 * answers when nothing matches); nothing waits for them. */
#define KN_USARSIM_GET_TIMEOUT_NS 3000000000ull
/* The engine answers KENAF {Cmd World} as it reads it; an engine that
 * says nothing for this long is warned about (the world description has
 * no terrain until an answer comes, late or on the next connection). */
#define KN_USARSIM_WORLD_TIMEOUT_NS 10000000000ull

/* A measured flipper angle (STA, ASTA/MISSTA) stands for this long
 * (five of USARSim's 0.1 s status periods); older, a newer command target
 * is the better word on where the flipper is. */
#define KN_USARSIM_FLIPPER_FRESH_NS 500000000ull

/* UDK's encoders (items W<i>) count 2*pi / Resolution ticks per turn and
 * start over; the default Resolution 0.01 rad gives 628. Used until (and
 * unless) GETCONF {Type Encoder} says otherwise. */
#define KN_USARSIM_UDK_TICKS_PER_TURN 628

/* An encoder step beyond this many times what the belts can do at the
 * robot's max_speed_mm_s (over at least KN_USARSIM_JUMP_MIN_DT_S) is a
 * wrap of unknown size, not travel: it is bridged at the last speed. */
#define KN_USARSIM_JUMP_FACTOR 2.0
#define KN_USARSIM_JUMP_MIN_DT_S 0.1

/* The link ops (backend_usarsim.c): USARSim, and the built-in engine
 * reached at an address (HELLO_ACK backend 1, same protocol and code). */
struct kn_backend_ops;
extern const struct kn_backend_ops kn_usarsim_ops;
extern const struct kn_backend_ops kn_usarsim_engine_ops;

struct kn_usarsim_io {
    void *ctx;
    void (*write)(void *ctx, const char *data, size_t len);
    /* The robot is spawned (first STA or SEN after INIT). */
    void (*ready)(void *ctx);
    void (*state)(void *ctx, const struct kn_state *s);
    /* Unrecoverable for this connection (the robot died): reconnect. */
    void (*fail)(void *ctx, const char *why);
    /* The built-in engine refused the INIT (KENAF {Cmd Init} {Status
     * Failed}: its world is full): no robot on this connection. */
    void (*refused)(void *ctx, const char *why);
    /* The built-in engine answered a lockstep Step: done (ok) or refused.
     * May be NULL. */
    void (*stepped)(void *ctx, bool ok);
    /* The built-in engine's judged trial: its state as it now stands
     * (a KENAF {Cmd Trial} line, usarsim_trial.h). May be NULL. */
    void (*trial)(void *ctx, const struct kn_krp_trial *t);
    /* The built-in engine at an address told the world it runs (its
     * KENAF {Cmd World} answer, usarsim_world.h, whole): JSON text of
     * len bytes, NUL-terminated, valid during the call. May be NULL. */
    void (*world)(void *ctx, const char *text, size_t len);
};

struct kn_usarsim;

/* NULL when out of memory or the robot's conversion settings are unusable
 * (err says which). */
struct kn_usarsim *kn_usarsim_new(const struct kn_cfg_robot *cfg, const struct kn_usarsim_io *io,
                                  char *err, size_t errlen);
void kn_usarsim_free(struct kn_usarsim *u);

/* A new connection: forgets the per-connection state and sends INIT, at
 * the last known pose once one is known, else at the configured spawn
 * pose (or PlayerStart). */
void kn_usarsim_connected(struct kn_usarsim *u, uint64_t now_ns);
void kn_usarsim_disconnected(struct kn_usarsim *u);

/* Bytes from the server, any framing. */
void kn_usarsim_feed(struct kn_usarsim *u, const char *data, size_t len, uint64_t now_ns);
/* One complete line (no framing; its EOL may be present or not). */
void kn_usarsim_line(struct kn_usarsim *u, const char *line, size_t len, uint64_t now_ns);

/* Encodes a command: DRIVE when the wheel speeds changed (a robot spawns
 * at rest), SET per changed flipper joint (UDK) or one MULTIDRIVE with
 * the changed ones (UT2004); "changed" as printed, 4 decimals. reapply:
 * send everything in cmd regardless. */
void kn_usarsim_command(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply,
                        uint64_t now_ns);

/* Lockstep (the built-in engine): KENAF {Cmd Step} {Ms advance}, after the
 * commands already written; io.stepped comes with the engine's reply. */
void kn_usarsim_step(struct kn_usarsim *u, uint32_t advance_us);

/* A judged trial on the built-in engine: KENAF {Cmd TrialReset} (reset
 * true: the robot back at the start gate) or {Cmd TrialEstop} (an e-stop
 * was engaged); the engine answers with the trial's state (io.trial). */
void kn_usarsim_trial(struct kn_usarsim *u, bool reset);

bool kn_usarsim_is_ready(const struct kn_usarsim *u);
/* The merged neutral state as last reported. */
const struct kn_state *kn_usarsim_state(const struct kn_usarsim *u);
/* Malformed lines with this tokenizer/parser result so far (any
 * enum kn_usar_result), and all malformed lines. */
uint64_t kn_usarsim_malformed(const struct kn_usarsim *u, int usar_result);
uint64_t kn_usarsim_malformed_total(const struct kn_usarsim *u);
/* Counters and what the server told about itself, into obj. */
void kn_usarsim_stats(const struct kn_usarsim *u, cJSON *obj);

#endif
