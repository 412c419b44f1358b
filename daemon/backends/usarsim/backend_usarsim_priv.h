/* The USARSim client's own parts, shared by its files: its state
 * (struct kn_usarsim) and the calls one file makes into another.
 * backend_usarsim_client.c is the connection (INIT and spawning, the
 * shared helpers, stats), backend_usarsim_lines.c the server's lines
 * into the neutral state, backend_usarsim_cmd.c the commands. Not for use
 * outside daemon/backends/usarsim/. */
#ifndef KN_BACKEND_USARSIM_PRIV_H
#define KN_BACKEND_USARSIM_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend_usarsim.h"
#include "convert.h"
#include "linebuf.h"
#include "usarsim_codec.h"
#include "usarsim_world.h"

#define NRESULTS (KN_USAR_EARG + 1)
#define CMD_BUF 1024
#define MIN_DT_S 1e-3   /* closer samples are not used to derive rates */
#define PRINT_SCALE 1e4 /* commands carry 4 decimals (codec) */

/* Sources of a field, best last: a better source seen on this connection
 * shuts the lesser ones out (no flicker between two estimates). */
enum src { SRC_NONE = 0, SRC_ODOMETRY, SRC_INS, SRC_GROUNDTRUTH };
enum flip_src { FLIP_COMMAND = 0, FLIP_ASTA, FLIP_STA };

/* One flipper's latest word from each kind of source; the state shows
 * the newer one, a fresh measurement first (kn_usarsim_resolve_flippers). */
struct flipper {
    bool have_meas, have_target;
    double meas, target;         /* flipper angle, neutral */
    uint64_t meas_ns, target_ns; /* local clock when they came */
    enum flip_src meas_src;
    enum flip_src src; /* what the state shows now */
    uint64_t src_ns;   /* and since when (0: nothing yet) */
};

enum get { GET_CONF_ROBOT = 1, GET_GEO_ROBOT = 2, GET_CONF_ENCODER = 4 };

struct encoder {
    bool have_tick; /* prev_tick, prev_t are valid (per connection) */
    int64_t prev_tick;
    double prev_t;
    double ticks; /* accumulated travel in ticks, across connections */
    bool have_speed_ref;
    double ref_t, ref_m; /* last sample used for the speed */
    char name[32];       /* the item feeding this side on this connection */
};

struct kn_usarsim {
    struct kn_usarsim_io io;
    bool lockstep; /* backend.lockstep: time comes from the lines only */
    /* the built-in engine at an address: asked for the world it runs once
     * the robot is spawned (a spawned engine's files the daemon reads) */
    bool ask_world;
    bool world_pending;            /* asked on this connection, not yet answered */
    uint64_t world_sent_ns;        /* when */
    struct kn_usarworld_asm world; /* its answer's parts so far */
    uint64_t steps_asked, steps_ok, steps_refused;
    char robot[KN_CFG_NAME_LEN + 1];
    enum kn_usarsim_dialect dialect;
    char class_name[64];
    char start_tag[64];
    double spawn_pos[3], spawn_rpy[3]; /* neutral frame */
    double max_belt_m_s;               /* the robot's max_speed_mm_s */
    char joint[KN_NFLIPPERS][64];
    struct kn_conv_table t;

    struct kn_linebuf lb;
    char *lbuf; /* KN_USAR_MAX_LINE + 1 bytes, not zeroed: only what a line fills is read */
    struct kn_usar_line *line; /* the line being handled: one for every robot (below) */

    /* connection */
    bool connected, ready;
    uint64_t connect_ns;
    unsigned get_pending;
    uint64_t get_sent_ns;
    int64_t tick_modulus;                 /* from CONF; 0: not told */
    double odo_origin[3], odo_origin_yaw; /* the pose INIT asked for */
    uint64_t now_ns;                      /* of the last line or command */

    /* the robot */
    struct kn_state st;
    bool have_pose; /* last_pos/last_rpy valid (for re-INIT) */
    double last_pos[3], last_rpy[3];
    bool have_time;
    double sim_time;
    uint64_t sim_time_ns;
    enum src pose_src; /* best pose source seen this connection */
    struct flipper fl[KN_NFLIPPERS];
    bool have_att_prev;
    double att_prev_t, att_prev[3];
    int npos;
    double pos_t[3], pos_hist[3][3];
    bool rate_derived, accel_derived;
    struct encoder enc[2];
    bool touch;
    double battery_life_s;
    bool have_battery_life;

    /* what went out on this connection (for suppressing repeats) */
    double drive_wheel[2];
    uint64_t deadman_seen; /* the engine's dead-man stops it told of on this connection */
    bool joint_sent[KN_NFLIPPERS];
    double joint_val[KN_NFLIPPERS];

    /* what the server said about itself */
    char level[64], gametype[64];
    bool have_conf_max_speed, have_geo_wheel_radius;
    double conf_max_speed, geo_wheel_radius;
    double encoder_resolution;
    char last_init[256];
    char last_malformed[96];

    /* counters */
    uint64_t connects, inits, spawns, deaths;
    uint64_t lines, blank, malformed[NRESULTS], unknown_head, ignored;
    uint64_t kenaf_ok, kenaf_failed; /* the built-in engine's KENAF replies */
    uint64_t trial_lines, trial_bad; /* its trial state lines; those that did not parse */
    uint64_t trial_cmds;             /* TrialReset / TrialEstop sent */
    uint64_t world_asked, world_answers, world_bad; /* KENAF {Cmd World}: refused or unreadable */
    uint64_t world_timeouts;                        /* ... not answered in time */
    uint64_t init_refused;                          /* ... of them INIT refusals (a full world) */
    uint64_t nfo, sta, asta, conf, geo, res;
    uint64_t sen_gt, sen_ins, sen_encoder, sen_odometry, sen_touch, sen_other;
    uint64_t sen_shut_out, encoder_unmapped, encoder_jumps, states;
    uint64_t drive_sent_n, drive_repeats, drive_over_max;
    uint64_t deadman_stops; /* the engine's dead-man braked the robot (all connections) */
    uint64_t joint_sent_n, joint_repeats, multidrive_sent;
    uint64_t get_answers, get_timeouts, format_errors;
};

/* backend_usarsim_client.c */
/* A line the server sent that could not be read: counted by reason,
 * the first one warned. */
void kn_usarsim_count_malformed(struct kn_usarsim *u, enum kn_usar_result r, const char *what);
/* The state's flipper angles from their freshest source. */
void kn_usarsim_resolve_flippers(struct kn_usarsim *u, uint64_t now);
/* Bytes to the server (nothing when len is 0). */
void kn_usarsim_write_out(struct kn_usarsim *u, const char *buf, size_t len);
/* Adds one formatted line (n: the formatter's result) to buf. */
void kn_usarsim_append(struct kn_usarsim *u, char *buf, size_t *len, int n);

/* backend_usarsim_lines.c: ticks per turn of the encoder named name (0:
 * unknown). */
int64_t kn_usarsim_encoder_modulus(const struct kn_usarsim *u, const char *name);

#endif
