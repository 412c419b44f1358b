/* The USARSim client logic (backend_usarsim.h): INIT and readiness, the
 * server's lines into the neutral state, commands into DRIVE / SET /
 * MULTIDRIVE lines. Everything on the wire goes through the codec
 * (usarsim_codec.h), every unit and frame change through convert.h. */
#include "backend_usarsim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "linebuf.h"
#include "log.h"
#include "usarsim_codec.h"

#define NRESULTS (KN_USAR_EARG + 1)
#define CMD_BUF 1024
#define MIN_DT_S 1e-3   /* closer samples are not used to derive rates */
#define PRINT_SCALE 1e4 /* commands carry 4 decimals (codec) */

/* Sources of a field, best last: a better source seen on this connection
 * shuts the lesser ones out (no flicker between two estimates). */
enum src { SRC_NONE = 0, SRC_ODOMETRY, SRC_INS, SRC_GROUNDTRUTH };
enum flip_src { FLIP_COMMAND = 0, FLIP_ASTA, FLIP_STA };

/* One flipper's latest word from each kind of source; the state shows
 * the newer one, a fresh measurement first (resolve_flippers). */
struct flipper {
    bool have_meas, have_target;
    double meas, target;         /* flipper angle, neutral */
    uint64_t meas_ns, target_ns; /* local clock when they came */
    enum flip_src meas_src;
    enum flip_src src; /* what the state shows now */
    uint64_t src_ns;   /* and since when (0: nothing yet) */
};

static const char *const src_names[] = { "none", "odometry", "ins", "groundtruth" };
static const char *const flip_src_names[] = { "command", "asta", "sta" };

/* The stats key of each reason a line from the server is refused. */
static const char *const reason_key[NRESULTS] = {
    [KN_USAR_ETOOLONG] = "too_long",
    [KN_USAR_ECTRL] = "control_byte",
    [KN_USAR_EHEAD] = "bad_head",
    [KN_USAR_EBRACE] = "braces",
    [KN_USAR_EGROUP] = "bad_group",
    [KN_USAR_ESTRAY] = "stray_text",
    [KN_USAR_EMISSING] = "missing_field",
    [KN_USAR_EVALUE] = "bad_value",
    [KN_USAR_ESEQUENCE] = "out_of_sequence",
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
    struct kn_usar_line line;

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
    uint64_t nfo, sta, asta, conf, geo, res;
    uint64_t sen_gt, sen_ins, sen_encoder, sen_odometry, sen_touch, sen_other;
    uint64_t sen_shut_out, encoder_unmapped, encoder_jumps, states;
    uint64_t drive_sent_n, drive_repeats, drive_over_max;
    uint64_t joint_sent_n, joint_repeats, multidrive_sent;
    uint64_t get_answers, get_timeouts, format_errors;
};

/* ---- helpers ------------------------------------------------------------ */

static void copy_view(char *dst, size_t cap, struct kn_usar_str v)
{
    size_t n = v.n < cap - 1 ? v.n : cap - 1;
    if (n)
        memcpy(dst, v.p, n);
    dst[n] = '\0';
}

static bool view_contains_ci(struct kn_usar_str v, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= v.n; i++) {
        struct kn_usar_str w = { v.p + i, n };
        if (kn_usar_str_is(w, lit))
            return true;
    }
    return false;
}

static bool view_is(struct kn_usar_str v, const char *lit)
{
    return kn_usar_str_is(v, lit);
}

/* Commands go out with 4 decimals: compare what is printed, and never
 * print "-0.0000" for a value that is zero on the wire. */
static double printed(double v)
{
    if (!isfinite(v))
        return 0.0;
    double r = round(v * PRINT_SCALE) / PRINT_SCALE;
    if (!isfinite(r))
        return v; /* beyond 1e304: the formatter refuses it anyway */
    return r == 0.0 ? 0.0 : r;
}

static void count_malformed(struct kn_usarsim *u, enum kn_usar_result r, const char *what)
{
    if (r <= KN_USAR_OK || r >= NRESULTS || !reason_key[r])
        r = KN_USAR_EVALUE; /* no other result can come from reading a line */
    u->malformed[r]++;
    uint64_t total = kn_usarsim_malformed_total(u);
    snprintf(u->last_malformed, sizeof u->last_malformed, "%s: %s", what, kn_usar_strerror(r));
    if (total == 1)
        kn_warn("robot %s: malformed line from the simulator (%s), skipped; further ones are "
                "only counted",
                u->robot, u->last_malformed);
    else
        kn_debug("robot %s: malformed line from the simulator (%s)", u->robot, u->last_malformed);
}

/* Time of a line: its own {Time}, else the last game time seen (on any
 * connection) advanced by the local clock; UDK INS and UT2004 encoders
 * carry none. */
static double line_time(struct kn_usarsim *u, bool has, double t, uint64_t now)
{
    if (has && isfinite(t)) {
        u->have_time = true;
        u->sim_time = t;
        u->sim_time_ns = now;
        u->st.time_s = t;
        u->st.have |= KN_HAVE_TIME;
        return t;
    }
    /* in lockstep the game clock stands still between the lines of a step:
     * the local clock would only add noise to what follows from them */
    if (u->have_time)
        return u->lockstep ? u->sim_time : u->sim_time + (double)(now - u->sim_time_ns) / 1e9;
    /* no game time yet: the local clock since connecting keeps the
     * robot's clock moving for controllers that time their motions */
    double local = (double)(now - u->connect_ns) / 1e9;
    u->st.time_s = local;
    return local;
}

/* Each flipper from whichever source last reported it: a measurement
 * (STA, ASTA/MISSTA) while it is fresh or newer than any command, else
 * the last command target. KN_HAVE_FLIPPER only when all four are fresh
 * measurements: a STOP holds flippers at measured angles, and a stale
 * one (UDK's Kenaf reports none; a single STA may carry some) would
 * command them back to it. */
static void resolve_flippers(struct kn_usarsim *u, uint64_t now)
{
    bool measured = true;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        struct flipper *f = &u->fl[k];
        /* in lockstep a measurement is as fresh as the world, which stands
         * still between steps however long that takes */
        bool fresh =
            f->have_meas && (u->lockstep || now - f->meas_ns < KN_USARSIM_FLIPPER_FRESH_NS);
        if (f->have_meas && (fresh || !f->have_target || f->meas_ns >= f->target_ns)) {
            u->st.flipper_rad[k] = f->meas;
            f->src = f->meas_src;
            f->src_ns = f->meas_ns;
        } else if (f->have_target) {
            u->st.flipper_rad[k] = f->target;
            f->src = FLIP_COMMAND;
            f->src_ns = f->target_ns;
        }
        measured = measured && fresh && f->src != FLIP_COMMAND;
    }
    if (measured)
        u->st.have |= KN_HAVE_FLIPPER;
    else
        u->st.have &= ~KN_HAVE_FLIPPER;
}

static void emit_state(struct kn_usarsim *u, uint64_t now)
{
    resolve_flippers(u, now);
    u->states++;
    if (u->io.state)
        u->io.state(u->io.ctx, &u->st);
}

static void write_out(struct kn_usarsim *u, const char *buf, size_t len)
{
    if (len && u->io.write)
        u->io.write(u->io.ctx, buf, len);
}

/* Appends one formatted line to buf; a formatter error is counted and
 * the line left out. */
static void append(struct kn_usarsim *u, char *buf, size_t *len, int n)
{
    if (n < 0) {
        u->format_errors++;
        kn_debug("robot %s: a command could not be formatted: %s", u->robot,
                 kn_usar_strerror((enum kn_usar_result) - n));
        buf[*len] = '\0';
        return;
    }
    *len += (size_t)n;
}

/* ---- life cycle ----------------------------------------------------------- */

struct kn_usarsim *kn_usarsim_new(const struct kn_cfg_robot *cfg, const struct kn_usarsim_io *io,
                                  char *err, size_t errlen)
{
    struct kn_usarsim *u = calloc(1, sizeof *u);
    if (u)
        u->lbuf = malloc(KN_USAR_MAX_LINE + 1);
    if (!u || !u->lbuf) {
        free(u);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    u->io = *io;
    const struct kn_cfg_backend *b = &cfg->backend;
    u->lockstep = b->lockstep;
    snprintf(u->robot, sizeof u->robot, "%s", cfg->name);
    u->dialect = b->dialect;
    snprintf(u->class_name, sizeof u->class_name, "%s",
             b->class_name[0] ? b->class_name : "USARBot.Kenaf");
    snprintf(u->start_tag, sizeof u->start_tag, "%s", b->start_tag);
    for (int i = 0; i < 3; i++) {
        u->spawn_pos[i] = b->spawn_location_m[i];
        u->spawn_rpy[i] = b->spawn_rpy_rad[i];
    }
    u->max_belt_m_s = cfg->max_speed_mm_s / 1000.0;
    kn_conv_table_usarsim(&u->t);
    u->t.wheel_radius_m = b->wheel_radius_m;
    u->t.counts_per_m = cfg->counts_per_m;
    u->t.counts_per_tick = b->counts_per_tick;
    u->t.tick_sign[KN_LEFT] = b->encoder_sign[0];
    u->t.tick_sign[KN_RIGHT] = b->encoder_sign[1];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const char *name = b->flipper[k].name[0] ? b->flipper[k].name : kn_usar_flipper_name(k);
        snprintf(u->joint[k], sizeof u->joint[k], "%s", name);
        u->t.flipper_sign[k] = b->flipper[k].sign;
        u->t.flipper_offset_rad[k] = b->flipper[k].offset_rad;
    }
    if (kn_conv_table_check(&u->t, err, errlen) < 0) {
        kn_usarsim_free(u);
        return NULL;
    }
    kn_linebuf_init(&u->lb, u->lbuf, KN_USAR_MAX_LINE);
    /* at rest until told otherwise: an accelerometer reads +g */
    u->st.accel_m_s2[2] = KN_GRAVITY;
    return u;
}

void kn_usarsim_free(struct kn_usarsim *u)
{
    if (u)
        free(u->lbuf);
    free(u);
}

static void send_init(struct kn_usarsim *u)
{
    char buf[512];
    int n = -KN_USAR_EARG;
    /* USARSim's Odometry counts from where INIT puts the robot; at a
     * PlayerStart that pose is the server's secret, so it counts from
     * the world origin there (docs/usarsim.md) */
    memset(u->odo_origin, 0, sizeof u->odo_origin);
    u->odo_origin_yaw = 0.0;
    if (u->have_pose || !u->start_tag[0]) {
        double pos[3], rpy[3];
        const double *at = u->have_pose ? u->last_pos : u->spawn_pos;
        const double *att = u->have_pose ? u->last_rpy : u->spawn_rpy;
        memcpy(u->odo_origin, at, sizeof u->odo_origin);
        u->odo_origin_yaw = att[2];
        kn_conv_pose_to_sim(&u->t, at, att, pos, rpy);
        n = kn_usar_fmt_init(buf, sizeof buf, u->class_name, u->robot, pos, rpy);
        if (n < 0 && u->have_pose) { /* an absurd last pose: fall back to the configured one */
            kn_warn("robot %s: last known pose cannot be sent (%s); spawning at the configured "
                    "pose",
                    u->robot, kn_usar_strerror((enum kn_usar_result) - n));
            u->have_pose = false;
            send_init(u);
            return;
        }
    } else {
        n = kn_usar_fmt_init_start(buf, sizeof buf, u->class_name, u->robot, u->start_tag);
    }
    if (n < 0) {
        u->format_errors++;
        kn_err("robot %s: cannot format INIT: %s", u->robot,
               kn_usar_strerror((enum kn_usar_result) - n));
        return;
    }
    u->inits++;
    size_t keep = (size_t)n >= 2 ? (size_t)n - 2 : 0; /* without CR LF */
    snprintf(u->last_init, sizeof u->last_init, "%.*s", (int)keep, buf);
    kn_info("robot %s: %s", u->robot, u->last_init);
    write_out(u, buf, (size_t)n);
}

void kn_usarsim_connected(struct kn_usarsim *u, uint64_t now_ns)
{
    u->connected = true;
    u->ready = false;
    u->connect_ns = now_ns;
    u->connects++;
    kn_linebuf_reset(&u->lb);
    u->get_pending = 0;
    u->tick_modulus = 0;
    u->pose_src = SRC_NONE;
    u->now_ns = now_ns;
    /* a new robot: nothing measured or commanded on it yet */
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        u->fl[k].have_meas = u->fl[k].have_target = false;
        u->fl[k].src = FLIP_COMMAND;
        u->fl[k].src_ns = 0;
    }
    u->have_att_prev = false;
    u->npos = 0;
    for (int s = 0; s < 2; s++) {
        u->enc[s].have_tick = false;
        u->enc[s].have_speed_ref = false;
        u->enc[s].name[0] = '\0';
        u->st.belt_speed_m_s[s] = 0.0;
    }
    memset(u->st.rate_rad_s, 0, sizeof u->st.rate_rad_s);
    /* a robot spawns with its wheels still: belts 0 need no DRIVE */
    u->drive_wheel[0] = u->drive_wheel[1] = 0.0;
    memset(u->joint_sent, 0, sizeof u->joint_sent);
    /* USARSim sends the NFO banner on accept and reads our socket after
     * that; INIT can go out at once, nothing is gained by waiting. */
    send_init(u);
}

void kn_usarsim_disconnected(struct kn_usarsim *u)
{
    u->connected = false;
    u->ready = false;
}

/* ---- state from the server ------------------------------------------------ */

static void derive_rate(struct kn_usarsim *u, double t)
{
    if (u->have_att_prev && t - u->att_prev_t >= MIN_DT_S &&
        kn_conv_rate_from_attitudes(u->att_prev, u->st.rpy_rad, t - u->att_prev_t,
                                    u->st.rate_rad_s) == 0)
        u->rate_derived = true;
    if (!u->have_att_prev || t - u->att_prev_t >= MIN_DT_S || t < u->att_prev_t) {
        memcpy(u->att_prev, u->st.rpy_rad, sizeof u->att_prev);
        u->att_prev_t = t;
        u->have_att_prev = true;
    }
}

static void derive_accel(struct kn_usarsim *u, double t)
{
    if (u->npos > 0 && t < u->pos_t[u->npos - 1])
        u->npos = 0; /* the game clock went back: a new simulation */
    if (u->npos > 0 && t - u->pos_t[u->npos - 1] < MIN_DT_S) {
        memcpy(u->pos_hist[u->npos - 1], u->st.pos_m, sizeof u->pos_hist[0]);
        return;
    }
    if (u->npos == 3) {
        memmove(u->pos_hist[0], u->pos_hist[1], 2 * sizeof u->pos_hist[0]);
        memmove(&u->pos_t[0], &u->pos_t[1], 2 * sizeof u->pos_t[0]);
        u->npos = 2;
    }
    memcpy(u->pos_hist[u->npos], u->st.pos_m, sizeof u->pos_hist[0]);
    u->pos_t[u->npos++] = t;
    double acc[3];
    /* absurd positions can overflow in the rotation into the body frame,
     * which the conversion does not catch: keep the last value then */
    if (u->npos == 3 &&
        kn_conv_accel_from_positions(u->pos_hist[0], u->pos_hist[1], u->pos_hist[2],
                                     u->pos_t[1] - u->pos_t[0], u->pos_t[2] - u->pos_t[1],
                                     u->st.rpy_rad, acc) == 0 &&
        isfinite(acc[0]) && isfinite(acc[1]) && isfinite(acc[2])) {
        memcpy(u->st.accel_m_s2, acc, sizeof acc);
        u->accel_derived = true;
    }
}

/* A pose from one source. Ground truth wins over INS (UDK prints INS
 * with 2 decimals, ground truth with 3), INS over odometry; a source is
 * used for the connection's rest once seen, so two estimates never
 * alternate. */
static bool take_pose(struct kn_usarsim *u, enum src src, const double pos[3], const double rpy[3],
                      double t)
{
    if (src < u->pose_src)
        return false;
    u->pose_src = src;
    memcpy(u->st.rpy_rad, rpy, sizeof u->st.rpy_rad);
    memcpy(u->st.pos_m, pos, sizeof u->st.pos_m);
    u->st.have |= KN_HAVE_ATTITUDE | KN_HAVE_POSITION;
    derive_rate(u, t);
    derive_accel(u, t);
    if (u->npos < 3) /* nothing to derive from yet: at rest, gravity only */
        kn_conv_world_to_body(u->st.rpy_rad, (const double[3]){ 0, 0, KN_GRAVITY },
                              u->st.accel_m_s2);
    /* where to spawn again after a reconnect (odometry drifts: a wall
     * may stand where it thinks the robot is) */
    if (src != SRC_ODOMETRY) {
        memcpy(u->last_pos, pos, sizeof u->last_pos);
        memcpy(u->last_rpy, rpy, sizeof u->last_rpy);
        u->have_pose = true;
    }
    return true;
}

/* UT2004 names its encoders ECLeft/ECRight; UDK reports driven wheel
 * joint i as W<i>, and the Kenaf's first joints are FRWheelRoll (W0),
 * FLWheelRoll (W1), BRWheelRoll (W2), BLWheelRoll (W3). */
static int encoder_side(struct kn_usar_str name)
{
    char low[32];
    size_t n = name.n < sizeof low - 1 ? name.n : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(name.p[i] >= 'A' && name.p[i] <= 'Z' ? name.p[i] + 32 : name.p[i]);
    low[n] = '\0';
    if (strstr(low, "left"))
        return KN_LEFT;
    if (strstr(low, "right"))
        return KN_RIGHT;
    if (n == 2 && low[0] == 'w' && low[1] >= '0' && low[1] <= '3')
        return (low[1] - '0') % 2 == 0 ? KN_RIGHT : KN_LEFT;
    return -1;
}

/* Ticks per turn of an encoder: what CONF said, else UDK's default for
 * its W<i> items (a missing CONF answer must not make every turn a jump),
 * else none (UT2004's and the built-in engine's counters do not wrap). */
static int64_t encoder_modulus(const struct kn_usarsim *u, const char *name)
{
    if (u->tick_modulus > 0)
        return u->tick_modulus;
    if ((name[0] == 'W' || name[0] == 'w') && name[1] >= '0' && name[1] <= '9' && !name[2])
        return KN_USARSIM_UDK_TICKS_PER_TURN;
    return 0;
}

/* The ticks one encoder moved since its last sample. A step the belts
 * cannot make in that time (KN_USARSIM_JUMP_FACTOR) is a wrap of a size
 * nobody told us: it is bridged at the last speed and counted, so a
 * wrong or missing turn size never shows as travel. */
static double encoder_step(struct kn_usarsim *u, int side, const struct encoder *e, int64_t tick,
                           double t)
{
    int64_t d = kn_conv_tick_delta(e->prev_tick, tick, encoder_modulus(u, e->name));
    double per_tick = kn_conv_ticks_to_m(&u->t, side, 1.0);
    double dt = t - e->prev_t;
    double span = dt > KN_USARSIM_JUMP_MIN_DT_S ? dt : KN_USARSIM_JUMP_MIN_DT_S;
    double limit = KN_USARSIM_JUMP_FACTOR * u->max_belt_m_s * span;
    if (per_tick == 0.0 || !(limit > 0) || fabs((double)d * per_tick) <= limit)
        return (double)d;
    u->encoder_jumps++;
    if (u->encoder_jumps == 1)
        kn_warn("robot %s: encoder %s jumped %lld ticks in %.3f s, more than the belts can "
                "move: taken as a wrap and bridged at the last speed (set the encoder's "
                "Resolution in the simulator or check counts_per_tick); further ones are only "
                "counted",
                u->robot, e->name, (long long)d, dt);
    double bridged = dt > 0 && isfinite(u->st.belt_speed_m_s[side])
                         ? u->st.belt_speed_m_s[side] * dt / per_tick
                         : 0.0;
    return isfinite(bridged) ? bridged : 0.0;
}

static void take_encoders(struct kn_usarsim *u, const struct kn_usar_sen *s, double t)
{
    bool done[2] = { false, false };
    for (unsigned i = 0; i < s->n_ticks; i++) {
        int side = encoder_side(s->ticks[i].name);
        if (side < 0) {
            u->encoder_unmapped++;
            continue;
        }
        struct encoder *e = &u->enc[side];
        char name[32];
        copy_view(name, sizeof name, s->ticks[i].name);
        if (done[side])
            continue;
        if (!e->name[0])
            snprintf(e->name, sizeof e->name, "%s", name);
        else if (strcmp(e->name, name) != 0)
            continue; /* another wheel of the same side: keep to the first one */
        done[side] = true;
        int64_t tick = s->ticks[i].tick;
        if (e->have_tick)
            e->ticks += encoder_step(u, side, e, tick, t);
        e->prev_tick = tick;
        e->prev_t = t;
        e->have_tick = true;
        double m = kn_conv_ticks_to_m(&u->t, side, e->ticks);
        u->st.belt_pos_m[side] = m;
        u->st.have |= KN_HAVE_BELT_POS;
        if (e->have_speed_ref && t < e->ref_t)
            e->have_speed_ref = false;
        if (!e->have_speed_ref) {
            e->ref_t = t;
            e->ref_m = m;
            e->have_speed_ref = true;
        } else if (t - e->ref_t >= MIN_DT_S) {
            u->st.belt_speed_m_s[side] = (m - e->ref_m) / (t - e->ref_t);
            e->ref_t = t;
            e->ref_m = m;
        }
    }
}

static void on_sen(struct kn_usarsim *u, uint64_t now)
{
    struct kn_usar_sen s;
    enum kn_usar_result r = kn_usar_parse_sen(&u->line, &s);
    if (r != KN_USAR_OK) {
        count_malformed(u, r, "SEN");
        return;
    }
    double t = line_time(u, s.has_time, s.time, now);
    bool changed = true;
    double pos[3], rpy[3];
    switch (s.sen_type) {
    case KN_USAR_SEN_GROUNDTRUTH:
    case KN_USAR_SEN_INS:
        if (s.sen_type == KN_USAR_SEN_GROUNDTRUTH)
            u->sen_gt++;
        else
            u->sen_ins++;
        kn_conv_pose_from_sim(&u->t, s.location, s.orientation, pos, rpy);
        changed = take_pose(u, s.sen_type == KN_USAR_SEN_GROUNDTRUTH ? SRC_GROUNDTRUTH : SRC_INS,
                            pos, rpy, t);
        break;
    case KN_USAR_SEN_ODOMETRY:
        /* relative to the spawn pose, not a world position */
        u->sen_odometry++;
        kn_conv_odometry_to_world(&u->t, u->odo_origin, u->odo_origin_yaw, s.pose, pos, rpy);
        changed = take_pose(u, SRC_ODOMETRY, pos, rpy, t);
        break;
    case KN_USAR_SEN_ENCODER:
        u->sen_encoder++;
        take_encoders(u, &s, t);
        break;
    case KN_USAR_SEN_TOUCH:
        u->sen_touch++;
        u->touch = false;
        for (unsigned i = 0; i < s.n_touches; i++)
            u->touch |= s.touches[i].touch;
        changed = false;
        break;
    default:
        u->sen_other++;
        changed = false;
        break;
    }
    if (!changed && (s.sen_type == KN_USAR_SEN_GROUNDTRUTH || s.sen_type == KN_USAR_SEN_INS ||
                     s.sen_type == KN_USAR_SEN_ODOMETRY))
        u->sen_shut_out++;
    if (changed || s.has_time)
        emit_state(u, now);
}

static void take_flipper(struct kn_usarsim *u, int k, double joint_rad, enum flip_src src,
                         uint64_t now)
{
    struct flipper *f = &u->fl[k];
    f->meas = kn_conv_joint_to_flipper(&u->t, k, joint_rad);
    f->meas_ns = now;
    f->meas_src = src;
    f->have_meas = true;
}

static void on_sta(struct kn_usarsim *u, uint64_t now)
{
    struct kn_usar_sta s;
    enum kn_usar_result r = kn_usar_parse_sta(&u->line, &s);
    /* flipper angles under the configured joint names (UT2004 STA) */
    double joint[KN_NFLIPPERS];
    uint8_t mask = 0;
    for (int k = 0; k < KN_NFLIPPERS && r == KN_USAR_OK; k++) {
        enum kn_usar_result fr = kn_usar_get_double(&u->line, u->joint[k], &joint[k]);
        if (fr == KN_USAR_OK)
            mask |= (uint8_t)(1u << k);
        else if (fr != KN_USAR_EMISSING)
            r = fr;
    }
    if (r != KN_USAR_OK) {
        count_malformed(u, r, "STA");
        return;
    }
    u->sta++;
    line_time(u, s.has_time, s.time, now);
    if (s.has_battery && isfinite(s.battery)) {
        u->battery_life_s = s.battery;
        u->have_battery_life = true;
        /* seconds of life, not volts: the configured voltage stands, except
         * that an empty battery (the server then ignores commands) reads 0 V */
        if (s.battery <= 0.0) {
            u->st.battery_v = 0.0;
            u->st.have |= KN_HAVE_BATTERY;
        } else {
            u->st.have &= ~KN_HAVE_BATTERY;
        }
    }
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (mask & (1u << k))
            take_flipper(u, k, joint[k], FLIP_STA, now);
    emit_state(u, now);
}

static void on_links(struct kn_usarsim *u, uint64_t now)
{
    struct kn_usar_links s;
    enum kn_usar_result r = kn_usar_parse_links(&u->line, &s);
    if (r != KN_USAR_OK) {
        count_malformed(u, r, kn_usar_kind_name(kn_usar_kind(&u->line)));
        return;
    }
    u->asta++;
    line_time(u, s.has_time, s.time, now);
    bool any = false;
    for (unsigned i = 0; i < s.n; i++) {
        if (!s.link[i].has_value)
            continue;
        for (int k = 0; k < KN_NFLIPPERS; k++) {
            if (view_is(s.link[i].name, u->joint[k])) {
                take_flipper(u, k, s.link[i].value, FLIP_ASTA, now);
                any = true;
            }
        }
    }
    /* a time moves the robot's clock like any other line's */
    if (any || s.has_time)
        emit_state(u, now);
}

static void on_conf_geo(struct kn_usarsim *u, bool conf)
{
    struct kn_usar_str type = { NULL, 0 };
    (void)kn_usar_get_str(&u->line, "Type", &type);
    if (conf && view_is(type, "Encoder")) {
        double res;
        enum kn_usar_result r = kn_usar_get_double(&u->line, "Resolution", &res);
        if (r == KN_USAR_EVALUE) {
            count_malformed(u, r, "CONF");
            return;
        }
        u->conf++;
        if (u->get_pending & GET_CONF_ENCODER)
            u->get_answers++;
        u->get_pending &= ~(unsigned)GET_CONF_ENCODER;
        /* UDK's encoder counts one turn in 2*pi / Resolution ticks, then
         * starts over ("the controller counts the circles") */
        if (r == KN_USAR_OK && res > 0 && isfinite(res)) {
            double m = round(2.0 * KN_PI / res);
            if (m >= 4 && m <= 1e12) {
                u->encoder_resolution = res;
                u->tick_modulus = (int64_t)m;
            }
        }
        return;
    }
    if (conf)
        u->conf++;
    else
        u->geo++;
    /* the robot's own CONF/GEO: a vehicle type (GroundVehicle, ...); items
     * (sensors, MisPkg, actuators) answer with their own types */
    if (!view_contains_ci(type, "vehicle"))
        return;
    struct kn_usar_robot rb;
    enum kn_usar_result r = kn_usar_parse_robot(&u->line, &rb);
    if (r != KN_USAR_OK) {
        count_malformed(u, r, conf ? "CONF" : "GEO");
        return;
    }
    if (conf) {
        if (rb.has_max_speed || rb.steering_type.n) {
            if (u->get_pending & GET_CONF_ROBOT)
                u->get_answers++;
            u->get_pending &= ~(unsigned)GET_CONF_ROBOT;
        }
        if (rb.has_max_speed && isfinite(rb.max_speed) && rb.max_speed > 0) {
            u->have_conf_max_speed = true;
            u->conf_max_speed = rb.max_speed;
        }
    } else {
        if (rb.has_wheel_radius || rb.has_dimensions) {
            if (u->get_pending & GET_GEO_ROBOT)
                u->get_answers++;
            u->get_pending &= ~(unsigned)GET_GEO_ROBOT;
        }
        if (rb.has_wheel_radius && isfinite(rb.wheel_radius) && rb.wheel_radius > 0) {
            if (!u->have_geo_wheel_radius && fabs(rb.wheel_radius - u->t.wheel_radius_m) > 1e-4)
                kn_info("robot %s: the simulator reports WheelRadius %.4f m; DRIVE keeps using "
                        "backend.wheel_radius_m = %.4f m (set it in the config to change)",
                        u->robot, rb.wheel_radius, u->t.wheel_radius_m);
            u->have_geo_wheel_radius = true;
            u->geo_wheel_radius = rb.wheel_radius;
        }
    }
}

static void on_nfo(struct kn_usarsim *u)
{
    struct kn_usar_nfo s;
    enum kn_usar_result r = kn_usar_parse_nfo(&u->line, &s);
    if (r != KN_USAR_OK) {
        count_malformed(u, r, "NFO");
        return;
    }
    u->nfo++;
    if (s.level.n) {
        copy_view(u->level, sizeof u->level, s.level);
        copy_view(u->gametype, sizeof u->gametype, s.gametype);
        kn_debug("robot %s: simulator level %s (%s)", u->robot, u->level, u->gametype);
    }
}

static void send_queries(struct kn_usarsim *u, uint64_t now)
{
    char buf[256];
    size_t len = 0;
    append(u, buf, &len, kn_usar_fmt_getconf(buf + len, sizeof buf - len, "Robot", NULL));
    append(u, buf, &len, kn_usar_fmt_getgeo(buf + len, sizeof buf - len, "Robot", NULL));
    append(u, buf, &len, kn_usar_fmt_getconf(buf + len, sizeof buf - len, "Encoder", NULL));
    u->get_pending = GET_CONF_ROBOT | GET_GEO_ROBOT | GET_CONF_ENCODER;
    u->get_sent_ns = now;
    write_out(u, buf, len);
}

static void check_queries(struct kn_usarsim *u, uint64_t now)
{
    if (!u->get_pending || now - u->get_sent_ns < KN_USARSIM_GET_TIMEOUT_NS)
        return;
    for (unsigned b = 1; b <= GET_CONF_ENCODER; b <<= 1)
        if (u->get_pending & b)
            u->get_timeouts++;
    kn_debug("robot %s: no answer to %s%s%s (UDK answers nothing when nothing matches)", u->robot,
             u->get_pending & GET_CONF_ROBOT ? "GETCONF Robot " : "",
             u->get_pending & GET_GEO_ROBOT ? "GETGEO Robot " : "",
             u->get_pending & GET_CONF_ENCODER ? "GETCONF Encoder" : "");
    u->get_pending = 0;
}

/* The built-in engine answers each KENAF request (Auth, Brake) with one
 * line; a refusal is worth a warning (a wrong token would leave the robot
 * unspawned), the rest is counted. */
static void on_kenaf_reply(struct kn_usarsim *u)
{
    struct kn_usar_str st, cmd, why;
    bool ok = kn_usar_get_str(&u->line, "Status", &st) == KN_USAR_OK && view_is(st, "OK");
    /* the reply to a lockstep Step: every line of the steps came before it */
    if (kn_usar_get_str(&u->line, "Cmd", &cmd) == KN_USAR_OK && view_is(cmd, "Step")) {
        double t;
        if (ok)
            u->steps_ok++;
        else
            u->steps_refused++;
        /* the robot clock is where the step ended, even when no sensor
         * line fell on its last physics step */
        if (ok && u->ready && kn_usar_get_double(&u->line, "Time", &t) == KN_USAR_OK &&
            isfinite(t) && t >= 0) {
            line_time(u, true, t, u->now_ns);
            emit_state(u, u->now_ns);
        }
        if (u->io.stepped)
            u->io.stepped(u->io.ctx, ok);
    }
    if (ok) {
        u->kenaf_ok++;
        return;
    }
    u->kenaf_failed++;
    char c[32] = "?", w[160] = "no reason given";
    if (kn_usar_get_str(&u->line, "Cmd", &cmd) == KN_USAR_OK)
        copy_view(c, sizeof c, cmd);
    if (kn_usar_get_str(&u->line, "Reason", &why) == KN_USAR_OK)
        copy_view(w, sizeof w, why);
    kn_warn("robot %s: the engine refused KENAF {Cmd %s}: %s", u->robot, c, w);
}

void kn_usarsim_line(struct kn_usarsim *u, const char *line, size_t len, uint64_t now)
{
    u->lines++;
    u->now_ns = now;
    enum kn_usar_result r = kn_usar_tokenize(line, len, &u->line);
    if (r == KN_USAR_EEMPTY) {
        u->blank++;
        return;
    }
    if (r != KN_USAR_OK) {
        count_malformed(u, r, "line");
        return;
    }
    check_queries(u, now);
    enum kn_usar_kind kind = kn_usar_kind(&u->line);
    bool spawned = false;
    switch (kind) {
    case KN_USAR_K_STA:
        on_sta(u, now);
        spawned = true;
        break;
    case KN_USAR_K_SEN:
        on_sen(u, now);
        spawned = true;
        break;
    case KN_USAR_K_ASTA:
    case KN_USAR_K_MISSTA: on_links(u, now); break;
    case KN_USAR_K_NFO: on_nfo(u); break;
    case KN_USAR_K_CONF: on_conf_geo(u, true); break;
    case KN_USAR_K_GEO: on_conf_geo(u, false); break;
    case KN_USAR_K_RES: u->res++; break;
    case KN_USAR_K_DIE:
        u->deaths++;
        kn_warn("robot %s: the simulator destroyed the robot (DIE); reconnecting to spawn it "
                "again",
                u->robot);
        if (u->io.fail && u->connected)
            u->io.fail(u->io.ctx, "robot destroyed by the simulator (DIE)");
        return;
    case KN_USAR_K_UNKNOWN:
        if (kn_usar_str_is(u->line.head, "KENAF"))
            on_kenaf_reply(u);
        else
            u->unknown_head++;
        return;
    default: u->ignored++; return;
    }
    /* a robot streams STA and SEN only once it exists: that, not the NFO
     * banner, says INIT worked and commands will be taken */
    if (spawned && !u->ready && u->connected) {
        u->ready = true;
        u->spawns++;
        send_queries(u, now);
        if (u->io.ready)
            u->io.ready(u->io.ctx);
    }
}

struct feed_ctx {
    struct kn_usarsim *u;
    uint64_t now;
};

static bool feed_line(void *ctx, char *line, size_t len)
{
    struct feed_ctx *f = ctx;
    if (len > 0)
        kn_usarsim_line(f->u, line, len, f->now);
    /* a callback may have ended the connection: stop then */
    return f->u->connected;
}

void kn_usarsim_feed(struct kn_usarsim *u, const char *data, size_t len, uint64_t now_ns)
{
    struct feed_ctx f = { u, now_ns };
    uint64_t before = u->lb.overlong;
    kn_linebuf_feed(&u->lb, data, len, feed_line, &f);
    if (u->lb.overlong != before) {
        u->malformed[KN_USAR_ETOOLONG] += u->lb.overlong - before;
        snprintf(u->last_malformed, sizeof u->last_malformed, "line: %s",
                 kn_usar_strerror(KN_USAR_ETOOLONG));
    }
}

/* ---- commands ------------------------------------------------------------- */

static void add_drive(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply, char *buf,
                      size_t cap, size_t *len)
{
    double w[2];
    for (int s = 0; s < 2; s++)
        w[s] = printed(kn_conv_belt_to_wheel(&u->t, cmd->belt_speed_m_s[s]));
    /* DRIVE is sticky in USARSim and TCP loses nothing: a repeat would
     * change nothing, so only changes go out (and everything on reapply) */
    if (!reapply && w[0] == u->drive_wheel[0] && w[1] == u->drive_wheel[1]) {
        u->drive_repeats++;
        return;
    }
    size_t before = *len;
    append(u, buf, len, kn_usar_fmt_drive(buf + *len, cap - *len, w[0], w[1]));
    if (*len == before)
        return;
    u->drive_wheel[0] = w[0];
    u->drive_wheel[1] = w[1];
    u->drive_sent_n++;
    if (u->have_conf_max_speed &&
        (fabs(w[0]) > u->conf_max_speed + 1e-4 || fabs(w[1]) > u->conf_max_speed + 1e-4))
        u->drive_over_max++;
}

static void add_flippers(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply,
                         uint64_t now, char *buf, size_t cap, size_t *len)
{
    double joint[KN_NFLIPPERS];
    uint8_t send = 0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(cmd->flipper_mask & (1u << k)))
            continue;
        joint[k] = printed(kn_conv_flipper_to_joint(&u->t, k, cmd->flipper_rad[k]));
        if (!reapply && u->joint_sent[k] && u->joint_val[k] == joint[k]) {
            u->joint_repeats++;
            continue;
        }
        send |= (uint8_t)(1u << k);
    }
    if (!send)
        return;
    if (u->dialect == KN_USARSIM_UT2004) {
        /* one MULTIDRIVE in the order clients send it: FR, FL, RR, RL */
        static const int order[KN_NFLIPPERS] = { KN_FR, KN_FL, KN_RR, KN_RL };
        const char *names[KN_NFLIPPERS];
        double vals[KN_NFLIPPERS];
        size_t n = 0;
        for (int i = 0; i < KN_NFLIPPERS; i++) {
            int k = order[i];
            if (send & (1u << k)) {
                names[n] = u->joint[k];
                vals[n++] = joint[k];
            }
        }
        size_t before = *len;
        append(u, buf, len, kn_usar_fmt_multidrive(buf + *len, cap - *len, names, vals, n));
        if (*len == before)
            return;
        u->multidrive_sent++;
    } else {
        for (int k = 0; k < KN_NFLIPPERS; k++) {
            if (!(send & (1u << k)))
                continue;
            size_t before = *len;
            append(u, buf, len,
                   kn_usar_fmt_set_joint(buf + *len, cap - *len, u->joint[k], joint[k]));
            if (*len == before)
                send &= (uint8_t) ~(1u << k);
        }
    }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(send & (1u << k)))
            continue;
        u->joint_sent[k] = true;
        u->joint_val[k] = joint[k];
        u->joint_sent_n++;
        /* without a fresh angle (the UDK Kenaf reports none), the target
         * is the best there is: shown, without KN_HAVE_FLIPPER */
        u->fl[k].target = kn_conv_joint_to_flipper(&u->t, k, joint[k]);
        u->fl[k].target_ns = now;
        u->fl[k].have_target = true;
    }
    resolve_flippers(u, now);
}

void kn_usarsim_command(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply,
                        uint64_t now_ns)
{
    char buf[CMD_BUF];
    size_t len = 0;
    buf[0] = '\0';
    u->now_ns = now_ns;
    add_drive(u, cmd, reapply, buf, sizeof buf, &len);
    add_flippers(u, cmd, reapply, now_ns, buf, sizeof buf, &len);
    write_out(u, buf, len);
}

/* ---- queries ----------------------------------------------------------------- */

void kn_usarsim_step(struct kn_usarsim *u, uint32_t advance_us)
{
    char buf[96];
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, sizeof buf, "KENAF");
    kn_usar_w_kv(&w, "Cmd", "Step");
    kn_usar_w_knum(&w, "Ms", advance_us / 1000.0, 3);
    int n = kn_usar_w_end(&w);
    if (n <= 0) {
        u->format_errors++;
        if (u->io.stepped)
            u->io.stepped(u->io.ctx, false);
        return;
    }
    u->steps_asked++;
    write_out(u, buf, (size_t)n);
}

bool kn_usarsim_is_ready(const struct kn_usarsim *u)
{
    return u->ready;
}

const struct kn_state *kn_usarsim_state(const struct kn_usarsim *u)
{
    return &u->st;
}

uint64_t kn_usarsim_malformed(const struct kn_usarsim *u, int r)
{
    return r > 0 && r < NRESULTS ? u->malformed[r] : 0;
}

uint64_t kn_usarsim_malformed_total(const struct kn_usarsim *u)
{
    uint64_t n = 0;
    for (int r = 1; r < NRESULTS; r++)
        n += u->malformed[r];
    return n;
}

static void num(cJSON *o, const char *k, uint64_t v)
{
    cJSON_AddNumberToObject(o, k, (double)v);
}

/* Where each flipper angle comes from and how old it is (as of the last
 * line or command), FL, FR, RL, RR; "flippers" names the source of those
 * that have one when they share it ("mixed" otherwise), "flipper_age_s"
 * is the oldest age. */
static void add_flipper_sources(const struct kn_usarsim *u, cJSON *src)
{
    const char *same = NULL;
    cJSON *names = cJSON_AddArrayToObject(src, "flipper_sources");
    cJSON *ages = cJSON_AddArrayToObject(src, "flipper_ages_s");
    double oldest = -1.0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const struct flipper *f = &u->fl[k];
        cJSON_AddItemToArray(names, cJSON_CreateString(flip_src_names[f->src]));
        if (f->src_ns && !same)
            same = flip_src_names[f->src];
        else if (f->src_ns && strcmp(flip_src_names[f->src], same) != 0)
            same = "mixed";
        if (!f->src_ns || u->now_ns < f->src_ns) {
            cJSON_AddItemToArray(ages, cJSON_CreateNull());
            continue;
        }
        double age = (double)(u->now_ns - f->src_ns) / 1e9;
        cJSON_AddItemToArray(ages, cJSON_CreateNumber(age));
        oldest = age > oldest ? age : oldest;
    }
    cJSON_AddStringToObject(src, "flippers", same ? same : flip_src_names[FLIP_COMMAND]);
    if (oldest >= 0)
        cJSON_AddNumberToObject(src, "flipper_age_s", oldest);
    else
        cJSON_AddNullToObject(src, "flipper_age_s");
}

void kn_usarsim_stats(const struct kn_usarsim *u, cJSON *o)
{
    cJSON_AddStringToObject(o, "dialect", u->dialect == KN_USARSIM_UT2004 ? "ut2004" : "udk");
    cJSON_AddBoolToObject(o, "spawned", u->ready);
    cJSON_AddStringToObject(o, "last_init", u->last_init);
    cJSON_AddStringToObject(o, "level", u->level);
    num(o, "connects", u->connects);
    num(o, "inits", u->inits);
    num(o, "spawns", u->spawns);
    num(o, "deaths", u->deaths);
    num(o, "lines", u->lines);
    num(o, "blank", u->blank);
    num(o, "states", u->states);

    cJSON *m = cJSON_AddObjectToObject(o, "malformed");
    num(m, "total", kn_usarsim_malformed_total(u));
    for (int r = 1; r < NRESULTS; r++)
        if (reason_key[r])
            num(m, reason_key[r], u->malformed[r]);
    cJSON_AddStringToObject(o, "last_malformed", u->last_malformed);
    num(o, "unknown_head", u->unknown_head);
    num(o, "kenaf_ok", u->kenaf_ok);
    if (u->lockstep) {
        num(o, "steps_asked", u->steps_asked);
        num(o, "steps_ok", u->steps_ok);
        num(o, "steps_refused", u->steps_refused);
    }
    num(o, "kenaf_failed", u->kenaf_failed);
    num(o, "ignored", u->ignored);

    cJSON *in = cJSON_AddObjectToObject(o, "received");
    num(in, "NFO", u->nfo);
    num(in, "STA", u->sta);
    num(in, "ASTA_MISSTA", u->asta);
    num(in, "CONF", u->conf);
    num(in, "GEO", u->geo);
    num(in, "RES", u->res);
    num(in, "GroundTruth", u->sen_gt);
    num(in, "INS", u->sen_ins);
    num(in, "Encoder", u->sen_encoder);
    num(in, "Odometry", u->sen_odometry);
    num(in, "Touch", u->sen_touch);
    num(in, "other_sensors", u->sen_other);
    num(in, "shut_out", u->sen_shut_out);
    num(in, "encoder_unmapped", u->encoder_unmapped);
    num(in, "encoder_jumps", u->encoder_jumps);

    cJSON *src = cJSON_AddObjectToObject(o, "sources");
    cJSON_AddStringToObject(src, "pose", src_names[u->pose_src]);
    cJSON_AddStringToObject(src, "rate", u->rate_derived ? "derived" : "none");
    cJSON_AddStringToObject(src, "accel", u->accel_derived ? "derived" : "gravity");
    add_flipper_sources(u, src);
    cJSON_AddStringToObject(src, "belts",
                            u->enc[0].name[0] || u->enc[1].name[0] ? "encoder" : "none");
    cJSON_AddStringToObject(src, "encoder_left", u->enc[KN_LEFT].name);
    cJSON_AddStringToObject(src, "encoder_right", u->enc[KN_RIGHT].name);
    /* ticks per turn in use: CONF's, UDK's default for W<i>, 0 for none */
    num(src, "encoder_modulus",
        (uint64_t)encoder_modulus(u, u->enc[KN_RIGHT].name[0] ? u->enc[KN_RIGHT].name
                                                              : u->enc[KN_LEFT].name));
    cJSON_AddBoolToObject(src, "touch", u->touch);
    if (u->have_battery_life)
        cJSON_AddNumberToObject(src, "battery_life_s", u->battery_life_s);
    else
        cJSON_AddNullToObject(src, "battery_life_s");

    cJSON *sv = cJSON_AddObjectToObject(o, "server");
    if (u->have_conf_max_speed)
        cJSON_AddNumberToObject(sv, "max_wheel_speed_rad_s", u->conf_max_speed);
    else
        cJSON_AddNullToObject(sv, "max_wheel_speed_rad_s");
    if (u->have_geo_wheel_radius)
        cJSON_AddNumberToObject(sv, "wheel_radius_m", u->geo_wheel_radius);
    else
        cJSON_AddNullToObject(sv, "wheel_radius_m");
    if (u->encoder_resolution > 0)
        cJSON_AddNumberToObject(sv, "encoder_resolution_rad", u->encoder_resolution);
    else
        cJSON_AddNullToObject(sv, "encoder_resolution_rad");
    num(sv, "answers", u->get_answers);
    num(sv, "timeouts", u->get_timeouts);

    cJSON *out = cJSON_AddObjectToObject(o, "sent");
    num(out, "DRIVE", u->drive_sent_n);
    num(out, "drive_repeats_suppressed", u->drive_repeats);
    num(out, "drive_over_max_speed", u->drive_over_max);
    num(out, "joint_targets", u->joint_sent_n);
    num(out, "joint_repeats_suppressed", u->joint_repeats);
    num(out, "MULTIDRIVE", u->multidrive_sent);
    num(out, "format_errors", u->format_errors);
}
