/* Internals shared by the files of kenaf-engine's USARSim server
 * (server.c: loop, sockets, pacing glue; server_cmd.c: USARSim commands;
 * server_ext.c: KENAF extension commands; server_out.c: STA/SEN/ASTA/
 * CONF/GEO lines; server_terrain.c: terrain names and start poses;
 * server_opts.c: the command line). One libuv loop, no threads. */
#ifndef KN_ENGINE_SERVER_INT_H
#define KN_ENGINE_SERVER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "convert.h"
#include "engine_limits.h"
#include "judge.h"
#include "krp.h"
#include "linebuf.h"
#include "pacing.h"
#include "params.h"
#include "server.h"
#include "terrain.h"
#include "usarsim_codec.h"
#include "world.h"

/* every robot the world takes, and some connections that only watch */
#define KN_SRV_MAX_CONNS (KN_ENGINE_MAX_ROBOTS + 16)
#define KN_SRV_OUT_CAP (256u * 1024u) /* unsent bytes kept per client before lines drop */
#define KN_SRV_LINE_MAX 4096          /* longest line the server writes */
#define KN_SRV_MAX_STARTS 8
#define KN_SRV_STEPQ 64           /* Step requests waiting at once */
#define KN_SRV_STEP_MAX_MS 600000 /* largest single Step request */
#define KN_SRV_TOKEN_MIN 16       /* shortest token --auth-token-env takes */
#define KN_SRV_TOKEN_MAX 256

/* Periodic output streams of a spawned robot. */
enum kn_srv_stream {
    KN_STREAM_STA = 0,
    KN_STREAM_GROUNDTRUTH,
    KN_STREAM_INS,
    KN_STREAM_ENCODER,
    KN_STREAM_ODOMETRY,
    KN_STREAM_ASTA,
    KN_NSTREAMS,
};
_Static_assert(KN_NSTREAMS == sizeof((struct kn_srv_opts *)0)->interval_s / sizeof(double),
               "one interval option per stream");

/* Named spawn places of the terrain (GETSTARTPOSES, INIT {Start}), KRP
 * world frame; z is found from the ground at spawn time. */
struct kn_srv_start {
    char name[32];
    double x, y, yaw;
};

/* What the server counts (KENAF {Cmd Stats}, and stderr at exit). */
struct kn_srv_stats {
    uint64_t accepted, refused, closed;
    uint64_t lines; /* complete lines received */
    uint64_t bytes_in, bytes_out;
    uint64_t empty;       /* blank lines */
    uint64_t malformed;   /* lines the tokenizer or a command parser rejected */
    uint64_t overlong;    /* lines over the cap, dropped by the line buffer */
    uint64_t unknown;     /* well-formed lines with a head we do not serve */
    uint64_t before_init; /* robot commands before INIT: dropped like USARSim */
    uint64_t bad_value;   /* unknown joint, class, start tag, opcode, ... */
    uint64_t ignored;     /* understood but without effect here (second INIT, Flip) */
    uint64_t init_failed; /* INIT that spawned nothing (world full, bad pose) */
    uint64_t spawned, removed;
    uint64_t commands;      /* DRIVE/SET/MULTIDRIVE applied */
    uint64_t ext;           /* KENAF commands handled */
    uint64_t out_dropped;   /* lines not sent because a client did not read */
    uint64_t steps;         /* physics steps since start (across resets) */
    uint64_t unauthorized;  /* INIT and KENAF commands refused: connection not authenticated */
    uint64_t auth_failed;   /* wrong tokens (the connection is closed) */
    uint64_t brakes;        /* KENAF {Cmd Brake} applied */
    uint64_t deadman_stops; /* robots braked: their client fell silent (KENAF {Cmd Deadman}) */
    uint64_t alives;        /* KENAF {Cmd Alive} received */
    uint64_t trial_lines;   /* trial state lines sent (server_trial.c) */
    uint64_t trial_resets;  /* KENAF {Cmd TrialReset} applied */
    uint64_t trial_estops;  /* KENAF {Cmd TrialEstop} counted */
    uint64_t world_answers; /* KENAF {Cmd World} answered (server_world.c) */
};

/* An output to the parent (stderr: the log; stdout: the heartbeat) that
 * never blocks the loop; what cannot be written at once is dropped and
 * counted (server_log.c). */
struct kn_srv_outfd {
    int fd;
    bool nonblock; /* a pipe, opened again without blocking */
    bool sock;     /* a socket: MSG_DONTWAIT */
    uint64_t lines_dropped, bytes_dropped;
    uint64_t unreported, unreported_bytes; /* dropped since the last line that got through */
};

struct kn_srv;

struct kn_srv_conn {
    uv_tcp_t tcp;
    struct kn_srv *srv;
    struct kn_srv_conn *next;
    unsigned id;
    bool closing;
    char peer[64];
    unsigned bad_logged;  /* bad lines logged so far (the rest are only counted) */
    bool trusted;         /* may INIT and send KENAF commands (no token, or it sent it) */
    bool world_asked;     /* asked for the World: told again when the terrain changes */
    double deadman_s;     /* brake the robot after this long without a line; 0 = never */
    uint64_t heard_ns;    /* when the last line came */
    bool deadman_tripped; /* braked for silence, no line since */
    /* this connection's robot braked by its dead-man: in each Alive's reply */
    uint64_t deadman_stops;

    struct kn_linebuf lb;
    char lbuf[KN_USAR_MAX_LINE + 1];
    uint64_t overlong_seen; /* lb.overlong already in the server's count */

    /* output not yet handed to the socket */
    char *obuf;
    size_t olen, ocap;

    /* the robot of this connection (USARSim: one per connection) */
    int robot; /* world id, -1 before INIT */
    char name[64];
    struct kn_pose init_pose;       /* as asked for (z NaN = on the ground) */
    bool normalized, light;         /* sticky DRIVE flags (UDK) */
    uint64_t next_due[KN_NSTREAMS]; /* server step count of the next line */
    double odo[3];                  /* odometry x, y, theta: KRP frame, from the spawn pose */
    double odo_belt[2];             /* belt positions at the last odometry update */
    double batt_a;                  /* smoothed current draw for the battery life */
    bool batt_a_set;

    /* a judged run (--judge): which judged robot this is (-1: none); a
     * fleet's robot whose program ended (--judge-control) takes no more
     * commands and no longer holds the lockstep world back */
    int judge_slot;
    bool left;
    uint64_t step_target; /* a fleet: its Step request's end, 0 = none */
    /* a fleet's INIT waits until every robot's is in, so the robots are
     * spawned in the scenario's order whatever order the INITs came in
     * (the order of bodies and contacts in ODE changes the round-off, and
     * a fleet's run must be byte for byte the same each time) */
    bool parked;
    int park_slot;
    struct kn_pose park_want, park_pose;
    const double *park_flip;
    char park_name[64];
    /* a judged trial: the state last sent on this connection */
    struct kn_krp_trial trial_sent;
    bool trial_have;
    uint64_t trial_sent_ns;
};

struct kn_srv {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t tick;
    uv_idle_t idle;
    uv_signal_t sig_int, sig_term;
    uv_pipe_t stdin_pipe;
    bool stdin_open;
    bool shutting_down;
    int exit_code;

    struct kn_srv_opts o;
    char token[KN_SRV_TOKEN_MAX + 1]; /* --auth-token-env's; "" = every connection trusted */
    struct kn_robot_params rp;
    struct kn_physics_params pp;
    struct kn_world *w;
    struct kn_conv_table conv; /* USARSim wire <-> KRP frame, wheel radius = the robot's */
    char level[64];            /* terrain label for NFO {Level} */
    /* the world as JSON texts, for KENAF {Cmd World} (server_world.c):
     * the terrain object it was built from, the robot file (owned) */
    char *world_terrain, *world_robot;
    struct kn_srv_start starts[KN_SRV_MAX_STARTS];
    int nstarts;

    struct kn_pacing pace;
    bool paused;
    uint64_t steps;                 /* physics steps since the last reset */
    uint64_t interval[KN_NSTREAMS]; /* in steps; 0 = off */

    struct {
        struct kn_srv_conn *c;
        uint64_t target; /* reply once steps reaches this */
    } stepq[KN_SRV_STEPQ];
    int nstepq;
    uint64_t step_goal; /* steps owed to Step requests */

    /* --judge: a scenario run with an external controller (judge.h) */
    struct kn_judge *judge;
    uv_timer_t judge_timer;
    uint64_t judge_seen_steps, judge_seen_ns; /* no step since then: idle */
    /* a fleet's lockstep (server_fleet.c): the world moves only to the
     * nearest end of the robots' Step requests, once every robot has one;
     * robots' programs report their end on --judge-control */
    int fleet_parked; /* connections whose INIT waits (kn_srv_conn.parked) */
    uv_pipe_t fleet_ctl;
    bool fleet_ctl_open;
    struct kn_linebuf fleet_lb;
    char fleet_lbuf[128];

    struct kn_srv_outfd log;  /* stderr */
    struct kn_srv_outfd beat; /* stdout: PORT, then the --heartbeat-ms lines */
    uv_timer_t beat_timer;
    bool beat_on;

    struct kn_srv_conn *conns;
    unsigned nconns, next_id;
    struct kn_srv_stats st;
    char rbuf[65536];
};

/* server_world.c: KENAF {Cmd World}, the world this engine runs; and
 * the robot file's text kept for it (0, or -1 with the reason in err). */
void kn_srv_world_send(struct kn_srv_conn *c);
/* after the terrain changed: the World again to each connection that asked */
void kn_srv_world_changed(struct kn_srv *s);
int kn_srv_world_robot(struct kn_srv *s, const char *path, char *err, size_t errlen);

/* server.c */
void kn_srv_send(struct kn_srv_conn *c, const char *line, int len);
/* Sends what is queued for c, then closes it (a client that gave a wrong
 * token). */
void kn_srv_close_after_flush(struct kn_srv_conn *c);

/* server_log.c: output to the parent that never blocks the loop. open
 * makes fd non-blocking for us alone (a pipe is opened again, a socket
 * written with MSG_DONTWAIT); write sends buf whole (at most PIPE_BUF
 * bytes) or drops it, counting `counted` bytes as lost. */
void kn_srv_outfd_open(struct kn_srv_outfd *o, int fd);
bool kn_srv_outfd_write(struct kn_srv_outfd *o, const char *buf, size_t len, size_t counted);
/* One log line ("kenaf-engine: ..." with its newline) on stderr, after the
 * count of the lines dropped before it, if any. */
void kn_srv_log_text(struct kn_srv *s, const char *text);
void kn_srv_log(struct kn_srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runs n physics steps, emitting the periodic lines and answering Step
 * requests as their times come. */
void kn_srv_advance(struct kn_srv *s, uint64_t n);
/* Re-arms the timer/idle handles after a change of pace or pause. */
void kn_srv_schedule(struct kn_srv *s);
/* World back to time 0: every robot at its spawn pose, output schedules
 * and odometry restarted, pending Step requests answered Failed. */
void kn_srv_reset(struct kn_srv *s);
/* Replaces the terrain and puts every robot back at its INIT pose on it. */
int kn_srv_set_terrain(struct kn_srv *s, const char *name_or_file, bool allow_path, char *err,
                       size_t errlen);

/* server_cmd.c: one complete line from a client */
void kn_srv_line(struct kn_srv_conn *c, const char *line, size_t len);
/* Counts a line that is not served and logs it (the first few per
 * connection, the rest only counted). */
void kn_srv_log_bad(struct kn_srv_conn *c, uint64_t *counter, const char *what, const char *line,
                    size_t len);
/* Starts the output schedule of a freshly spawned robot and sends its
 * first STA/SEN at once. */
void kn_srv_robot_started(struct kn_srv_conn *c);

/* server_ext.c: a tokenized KENAF line */
void kn_srv_ext(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line, size_t len);
/* Refuses what only an authenticated connection may do (INIT, KENAF
 * commands): counted, logged, answered with a KENAF {Cmd <cmd>} {Status
 * Failed} line. True when refused. */
bool kn_srv_refuse_untrusted(struct kn_srv_conn *c, const char *cmd, const char *line, size_t len);
/* A KENAF {Cmd <cmd>} {Status Failed} {Reason <why>} line: the answer to a
 * request that did nothing (an INIT the world cannot take). */
void kn_srv_fail(struct kn_srv_conn *c, const char *cmd, const char *why);
/* The dead-man of each connection that armed one (KENAF {Cmd Deadman}):
 * a robot whose client has sent no line for its time is braked as by
 * KENAF {Cmd Brake}. Real-time pace only (see docs/engine.md). */
void kn_srv_deadman_check(struct kn_srv *s, uint64_t now_ns);
/* Answers the Step requests whose time has come. */
void kn_srv_steps_reached(struct kn_srv *s);
/* server_trial.c: each judged robot's trial state to its connection when
 * it changed, or (now_ns not 0) when 500 ms passed since the last; true
 * when a judged trial has ended; a TrialReset, TrialEstop or Trial
 * command. */
void kn_srv_trial_push(struct kn_srv *s, uint64_t now_ns);
bool kn_srv_trial_ended(struct kn_srv *s);
void kn_srv_trial_cmd(struct kn_srv_conn *c, const char *cmd);
void kn_srv_steps_fail_all(struct kn_srv *s, const char *why);
void kn_srv_steps_drop_conn(struct kn_srv *s, struct kn_srv_conn *c);

/* The read buffer for a handle whose data is the server (stdin, the
 * judge's control FIFO): read callbacks consume it before returning. */
void kn_srv_alloc_rbuf(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

/* A judged run ends: no more steps, the verdicts written, the server stops. */
void kn_srv_judge_end(struct kn_srv *s, const char *why);

/* A fleet's lockstep (server_fleet.c). True when Step requests are the
 * fleet's (each robot's own clock, a barrier); then: queue one. */
bool kn_srv_fleet_steps(const struct kn_srv *s);
void kn_srv_fleet_step(struct kn_srv_conn *c, uint64_t n);
/* Sets step_goal: the nearest Step end once every judged robot still
 * driven has one pending, else now. After any change to those. */
void kn_srv_fleet_update(struct kn_srv *s);
/* The robots the world waits for (no Step pending), comma-separated. */
void kn_srv_fleet_waiting(const struct kn_srv *s, char *out, size_t n);
/* --judge-control: opens it; 0 or -1 with the reason on stderr. */
int kn_srv_fleet_open(struct kn_srv *s, const char *path);
void kn_srv_fleet_close(struct kn_srv *s);

/* server_out.c: periodic lines and replies */
void kn_srv_emit(struct kn_srv_conn *c, enum kn_srv_stream k);
void kn_srv_send_conf(struct kn_srv_conn *c);
void kn_srv_send_geo(struct kn_srv_conn *c);
void kn_srv_send_startposes(struct kn_srv_conn *c);
void kn_srv_send_nfo(struct kn_srv_conn *c);
void kn_srv_odometry_reset(struct kn_srv_conn *c);
/* Battery life in seconds as USARSim reports it: charge left over the
 * present (smoothed) current draw. */
double kn_srv_battery_life(struct kn_srv_conn *c, const struct kn_state *st);
const char *kn_srv_stream_name(enum kn_srv_stream k);
int kn_srv_stream_parse(const char *s);

/* server_terrain.c */
/* Terrain name (flat, step, ...: <config>/terrains/NAME.json) or, with
 * allow_path, a file. Fills t, its spec (kn_terrain_spec_text, free()),
 * the NFO level label and the start poses. */
int kn_srv_terrain_load(const char *name_or_file, bool allow_path, struct kn_terrain *t,
                        char **spec, char *level, size_t levellen, struct kn_srv_start *starts,
                        int *nstarts, char *err, size_t errlen);
/* The start pose named (case-insensitively), or NULL. */
const struct kn_srv_start *kn_srv_start_find(const struct kn_srv *s, struct kn_usar_str name);
/* Spawn pose for a KRP position and attitude: z NaN when the requested
 * origin would put the tracks into the ground (the world then places the
 * robot on the ground). */
struct kn_pose kn_srv_spawn_pose(struct kn_srv *s, const double pos[3], const double rpy[3]);

#endif
