/* The USARSim client: the server's lines into the neutral state. SEN
 * (GroundTruth, INS, Odometry, Encoder, Touch), STA, ASTA/MISSTA, CONF
 * and GEO (the GETCONF/GETGEO queries sent once the robot spawned), NFO,
 * DIE and the built-in engine's KENAF replies; rates and accelerations a
 * server does not report are derived (docs/usarsim.md). */
#include "backend_usarsim_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "usarsim_trial.h"

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

static void emit_state(struct kn_usarsim *u, uint64_t now)
{
    kn_usarsim_resolve_flippers(u, now);
    u->states++;
    if (u->io.state)
        u->io.state(u->io.ctx, &u->st);
}

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
int64_t kn_usarsim_encoder_modulus(const struct kn_usarsim *u, const char *name)
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
    int64_t d = kn_conv_tick_delta(e->prev_tick, tick, kn_usarsim_encoder_modulus(u, e->name));
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
    enum kn_usar_result r = kn_usar_parse_sen(u->line, &s);
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, "SEN");
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
    enum kn_usar_result r = kn_usar_parse_sta(u->line, &s);
    /* flipper angles under the configured joint names (UT2004 STA) */
    double joint[KN_NFLIPPERS];
    uint8_t mask = 0;
    for (int k = 0; k < KN_NFLIPPERS && r == KN_USAR_OK; k++) {
        enum kn_usar_result fr = kn_usar_get_double(u->line, u->joint[k], &joint[k]);
        if (fr == KN_USAR_OK)
            mask |= (uint8_t)(1u << k);
        else if (fr != KN_USAR_EMISSING)
            r = fr;
    }
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, "STA");
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
    enum kn_usar_result r = kn_usar_parse_links(u->line, &s);
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, kn_usar_kind_name(kn_usar_kind(u->line)));
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
    (void)kn_usar_get_str(u->line, "Type", &type);
    if (conf && view_is(type, "Encoder")) {
        double res;
        enum kn_usar_result r = kn_usar_get_double(u->line, "Resolution", &res);
        if (r == KN_USAR_EVALUE) {
            kn_usarsim_count_malformed(u, r, "CONF");
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
    enum kn_usar_result r = kn_usar_parse_robot(u->line, &rb);
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, conf ? "CONF" : "GEO");
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
    enum kn_usar_result r = kn_usar_parse_nfo(u->line, &s);
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, "NFO");
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
    kn_usarsim_append(u, buf, &len,
                      kn_usar_fmt_getconf(buf + len, sizeof buf - len, "Robot", NULL));
    kn_usarsim_append(u, buf, &len, kn_usar_fmt_getgeo(buf + len, sizeof buf - len, "Robot", NULL));
    kn_usarsim_append(u, buf, &len,
                      kn_usar_fmt_getconf(buf + len, sizeof buf - len, "Encoder", NULL));
    if (u->ask_world) {
        /* the world an engine at an address runs: its answer is the only
         * way to know (usarsim_world.h) */
        struct kn_usar_writer w;
        kn_usar_w_init(&w, buf + len, sizeof buf - len, "KENAF");
        kn_usar_w_kv(&w, "Cmd", "World");
        kn_usarsim_append(u, buf, &len, kn_usar_w_end(&w));
        u->world_asked++;
        u->world_pending = true;
        u->world_sent_ns = now;
    }
    u->get_pending = GET_CONF_ROBOT | GET_GEO_ROBOT | GET_CONF_ENCODER;
    u->get_sent_ns = now;
    kn_usarsim_write_out(u, buf, len);
}

static void check_queries(struct kn_usarsim *u, uint64_t now)
{
    if (u->world_pending && now - u->world_sent_ns >= KN_USARSIM_WORLD_TIMEOUT_NS) {
        u->world_pending = false; /* an answer that still comes is taken */
        u->world_timeouts++;
        kn_warn("robot %s: no answer to KENAF {Cmd World} in %llu s: the world description "
                "has no terrain until one comes",
                u->robot, KN_USARSIM_WORLD_TIMEOUT_NS / 1000000000ull);
    }
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

/* Each Alive's reply says how often the engine's dead-man braked this
 * connection's robot. A new stop means the belts' target there is 0,
 * whatever DRIVE went out last: add_drive sends only what changed, so
 * without this a controller that goes on commanding the same speed
 * would never move the robot again (the dead-man trips on the daemon's
 * lines held back in the network, while the engine's lines still come
 * and the link never falls silent, whose re-application would cover it). */
static void on_alive_reply(struct kn_usarsim *u)
{
    int64_t n;
    if (kn_usar_get_int(u->line, "DeadmanStops", &n) != KN_USAR_OK || n < 0 ||
        (uint64_t)n <= u->deadman_seen)
        return;
    u->deadman_stops += (uint64_t)n - u->deadman_seen;
    u->deadman_seen = (uint64_t)n;
    u->drive_wheel[0] = u->drive_wheel[1] = 0.0;
}

/* One part of the engine's World answer; the whole text to io.world. */
static void on_world_part(struct kn_usarsim *u)
{
    enum kn_usarworld_result r = kn_usarworld_feed(&u->world, u->line);
    if (r == KN_USARWORLD_MORE)
        return;
    u->world_pending = false;
    if (r != KN_USARWORLD_DONE) {
        u->world_bad++;
        kn_warn("robot %s: the engine's World answer cannot be read (%s); the world "
                "description has no terrain",
                u->robot, kn_usarworld_strerror(r));
        return;
    }
    size_t len;
    char *text = kn_usarworld_take(&u->world, &len);
    u->world_answers++;
    if (u->io.world)
        u->io.world(u->io.ctx, text, len);
    free(text);
}

/* The built-in engine answers each KENAF request (Auth, Brake, Alive)
 * with one line; a refusal is worth a warning (a wrong token would leave
 * the robot unspawned), the rest is counted. */
static void on_kenaf_reply(struct kn_usarsim *u)
{
    struct kn_usar_str st, cmd, why;
    bool ok = kn_usar_get_str(u->line, "Status", &st) == KN_USAR_OK && view_is(st, "OK");
    if (ok && kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK && view_is(cmd, "Alive"))
        on_alive_reply(u);
    /* a judged trial's state (usarsim_trial.h): pushed, or a command's answer */
    if (ok && kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK && view_is(cmd, "Trial")) {
        struct kn_krp_trial t;
        enum kn_usar_result r = kn_usartrial_parse(u->line, &t);
        if (r != KN_USAR_OK) {
            u->trial_bad++;
            kn_usarsim_count_malformed(u, r, "trial line");
            return;
        }
        u->trial_lines++;
        if (u->io.trial)
            u->io.trial(u->io.ctx, &t);
        return;
    }
    if (kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK && view_is(cmd, "World")) {
        if (ok) {
            on_world_part(u);
            return;
        }
        u->world_pending = false;
        u->world_bad++; /* and warned below: the description stays without terrain */
    }
    /* the only command kenaf-simd sends that an engine may not know: an
     * older kenaf-engine answers {Cmd Unknown} */
    if (!ok && u->world_pending && kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK &&
        view_is(cmd, "Unknown")) {
        u->world_pending = false;
        u->world_bad++;
        u->kenaf_failed++;
        kn_warn("robot %s: the engine does not answer KENAF {Cmd World} (an older kenaf-engine): "
                "the world description has no terrain",
                u->robot);
        return;
    }
    /* the reply to a lockstep Step: every line of the steps came before it */
    if (kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK && view_is(cmd, "Step")) {
        double t;
        if (ok)
            u->steps_ok++;
        else
            u->steps_refused++;
        /* the robot clock is where the step ended, even when no sensor
         * line fell on its last physics step */
        if (ok && u->ready && kn_usar_get_double(u->line, "Time", &t) == KN_USAR_OK &&
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
    if (kn_usar_get_str(u->line, "Cmd", &cmd) == KN_USAR_OK)
        copy_view(c, sizeof c, cmd);
    if (kn_usar_get_str(u->line, "Reason", &why) == KN_USAR_OK)
        copy_view(w, sizeof w, why);
    if (strcmp(c, "Init") == 0 && u->io.refused) {
        /* no robot will come on this connection: the link says why, once */
        u->init_refused++;
        u->io.refused(u->io.ctx, w);
        return;
    }
    kn_warn("robot %s: the engine refused KENAF {Cmd %s}: %s", u->robot, c, w);
}

/* The tokens of the line being handled. Lines are handled one at a time,
 * each to its end before the next is read, so every robot's backend
 * tokenizes into this one: 8 KiB of memory per robot less. */
static struct kn_usar_line line_tokens;

void kn_usarsim_line(struct kn_usarsim *u, const char *line, size_t len, uint64_t now)
{
    u->line = &line_tokens;
    u->lines++;
    u->now_ns = now;
    enum kn_usar_result r = kn_usar_tokenize(line, len, u->line);
    if (r == KN_USAR_EEMPTY) {
        u->blank++;
        return;
    }
    if (r != KN_USAR_OK) {
        kn_usarsim_count_malformed(u, r, "line");
        return;
    }
    check_queries(u, now);
    enum kn_usar_kind kind = kn_usar_kind(u->line);
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
        if (kn_usar_str_is(u->line->head, "KENAF"))
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
