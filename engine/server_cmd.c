/* USARSim commands from a client, as UDK's BotConnection handles them
 * (USARSim's BotConnection.uc; docs/usarsim.md): INIT and GETSTARTPOSES at any time;
 * DRIVE, SET, MULTIDRIVE, GETCONF, GETGEO only once the connection's
 * robot exists (before that they are dropped without reply, and
 * counted). No INIT acknowledgement and no error replies, like UDK;
 * every line that is not understood is counted. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server_int.h"

#define LOG_BAD_PER_CONN 5 /* bad lines logged per connection; all are counted */

void kn_srv_log_bad(struct kn_srv_conn *c, uint64_t *counter, const char *what, const char *line,
                    size_t len)
{
    (*counter)++;
    if (c->bad_logged >= LOG_BAD_PER_CONN)
        return;
    int n = len > 120 ? 120 : (int)len;
    char shown[128];
    for (int i = 0; i < n; i++)
        shown[i] = line[i] >= ' ' && line[i] < 0x7F ? line[i] : '?';
    shown[n] = '\0';
    kn_srv_log(c->srv, "client %u: %s: \"%s%s\"", c->id, what, shown, len > 120 ? "..." : "");
    if (++c->bad_logged == LOG_BAD_PER_CONN)
        kn_srv_log(c->srv, "client %u: further bad lines are only counted (KENAF {Cmd Stats})",
                   c->id);
}

void kn_srv_robot_started(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    kn_srv_odometry_reset(c);
    c->batt_a_set = false;
    /* first lines at once, so a client sees the spawn without waiting a
     * period (and in step mode without stepping) */
    for (int k = 0; k < KN_NSTREAMS; k++) {
        c->next_due[k] = s->interval[k] ? s->steps + s->interval[k] : UINT64_MAX;
        if (s->interval[k])
            kn_srv_emit(c, (enum kn_srv_stream)k);
    }
}

static bool class_is_kenaf(struct kn_usar_str cls)
{
    /* "USARBot.Kenaf", any letter case (Unreal class names are
     * case-insensitive), or the bare class name */
    size_t i = cls.n;
    while (i > 0 && cls.p[i - 1] != '.')
        i--;
    struct kn_usar_str last = { cls.p + i, cls.n - i };
    return kn_usar_str_is(last, "Kenaf");
}

static void copy_str(char *dst, size_t cap, struct kn_usar_str v)
{
    size_t n = v.n < cap - 1 ? v.n : cap - 1;
    if (n)
        memcpy(dst, v.p, n);
    dst[n] = '\0';
}

/* Robots spawned into each other get pushed apart violently: say so
 * (USARSim does the same thing silently). */
static void warn_overlap(struct kn_srv_conn *c, int id)
{
    struct kn_srv *s = c->srv;
    struct kn_state me, other;
    if (kn_world_state(s->w, id, &me))
        return;
    double reach = 2 * (s->rp.track_pulley_x + s->rp.flipper_length + s->rp.flipper_tip_radius);
    for (struct kn_srv_conn *o = s->conns; o; o = o->next) {
        if (o == c || o->robot < 0 || kn_world_state(s->w, o->robot, &other))
            continue;
        double dx = me.pos_m[0] - other.pos_m[0], dy = me.pos_m[1] - other.pos_m[1];
        if (hypot(dx, dy) < reach)
            kn_srv_log(s,
                       "client %u: warning: spawned %.2f m from robot %s (client %u); "
                       "give robots sharing a world distinct start poses",
                       c->id, hypot(dx, dy), o->name, o->id);
    }
}

static int robots_in_world(const struct kn_srv *s)
{
    int n = 0;
    for (const struct kn_srv_conn *o = s->conns; o; o = o->next)
        n += o->robot >= 0;
    return n;
}

/* The robot of an INIT into the world; slot: its judged robot (-1: none). */
static void spawn(struct kn_srv_conn *c, int slot, struct kn_pose want, struct kn_pose p,
                  const double *flip, const char *iname, const char *line, size_t len)
{
    struct kn_srv *s = c->srv;
    int id = kn_world_spawn(s->w, &s->rp, &p, flip);
    if (id >= 0 && slot >= 0)
        kn_judge_start(s->judge, slot, s->w, id, s->steps);
    c->judge_slot = id >= 0 ? slot : -1;
    if (id < 0) {
        static const char why[] = "cannot spawn: pose out of range or out of memory";
        kn_srv_log_bad(c, &s->st.init_failed, why, line, len);
        kn_srv_fail(c, "Init", why);
        return;
    }
    warn_overlap(c, id);
    c->robot = id;
    c->init_pose = want;
    c->normalized = c->light = false;
    if (iname[0])
        snprintf(c->name, sizeof c->name, "%s", iname);
    else
        snprintf(c->name, sizeof c->name, "Kenaf%d", id);
    s->st.spawned++;
    kn_srv_log(s, "client %u: robot %s spawned at x %.3f y %.3f yaw %.3f rad (KRP frame)%s", c->id,
               c->name, p.x, p.y, p.yaw, isnan(p.z) ? ", on the ground" : "");
    kn_srv_robot_started(c);
    if (c->judge_slot >= 0)
        kn_srv_fleet_update(s);
}

/* A fleet's INIT waits for the others (kn_srv_conn.parked); the last one
 * in spawns them all, in the scenario's order. */
static void park(struct kn_srv_conn *c, int slot, struct kn_pose want, struct kn_pose p,
                 const double *flip, const char *iname, const char *line, size_t len)
{
    struct kn_srv *s = c->srv;
    for (struct kn_srv_conn *o = s->conns; o; o = o->next)
        if (o->parked && o->park_slot == slot) {
            kn_srv_log_bad(c, &s->st.init_failed, "INIT: this fleet robot's INIT came twice", line,
                           len);
            kn_srv_fail(c, "Init", "this fleet robot is already being spawned");
            return;
        }
    c->parked = true;
    c->park_slot = slot;
    c->park_want = want;
    c->park_pose = p;
    c->park_flip = flip;
    snprintf(c->park_name, sizeof c->park_name, "%s", iname);
    s->fleet_parked++;
    kn_srv_log(s, "client %u: robot %s waits for the fleet's other INITs (%d of %d in)", c->id,
               iname, s->fleet_parked, kn_judge_count(s->judge));
    if (s->fleet_parked < kn_judge_count(s->judge))
        return;
    for (int k = 0; k < kn_judge_count(s->judge); k++)
        for (struct kn_srv_conn *o = s->conns; o; o = o->next)
            if (o->parked && o->park_slot == k) {
                o->parked = false;
                s->fleet_parked--;
                spawn(o, k, o->park_want, o->park_pose, o->park_flip, o->park_name, o->park_name,
                      strlen(o->park_name));
                break;
            }
}

static void do_init(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line,
                    size_t len)
{
    struct kn_srv *s = c->srv;
    if (kn_srv_refuse_untrusted(c, "Init", line, len))
        return;
    if (c->robot >= 0) {
        /* UDK rebinds to a second robot and leaves the first one orphaned;
         * we keep the one robot per connection */
        kn_srv_log_bad(c, &s->st.ignored, "second INIT on this connection ignored", line, len);
        return;
    }
    struct kn_usar_init in;
    enum kn_usar_result r = kn_usar_parse_init(l, &in);
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    if (!class_is_kenaf(in.class_name)) {
        kn_srv_log_bad(c, &s->st.bad_value, "INIT: unknown class (this engine has USARBot.Kenaf)",
                       line, len);
        return;
    }
    double pos[3] = { 0, 0, NAN }, rpy[3] = { 0, 0, 0 };
    bool placed = false;
    if (in.start.n) {
        const struct kn_srv_start *st = kn_srv_start_find(s, in.start);
        if (st) {
            pos[0] = st->x;
            pos[1] = st->y;
            rpy[2] = st->yaw;
            placed = true;
        } else {
            kn_srv_log_bad(c, &s->st.bad_value,
                           "INIT: no such start pose (see GETSTARTPOSES); using "
                           "the location or the origin",
                           line, len);
        }
    }
    if (!placed && in.has_location) {
        double zero[3] = { 0, 0, 0 };
        kn_conv_pose_from_sim(&s->conv, in.location, in.has_rotation ? in.rotation : zero, pos,
                              rpy);
    }
    struct kn_pose want = { pos[0], pos[1], pos[2], rpy[0], rpy[1], rpy[2] };
    struct kn_pose p = kn_srv_spawn_pose(s, pos, rpy);
    if (robots_in_world(s) >= KN_ENGINE_MAX_ROBOTS) {
        char why[160];
        snprintf(why, sizeof why,
                 "world full: this engine takes at most %d robots (KN_ENGINE_MAX_ROBOTS)",
                 KN_ENGINE_MAX_ROBOTS);
        kn_srv_log_bad(c, &s->st.init_failed, why, line, len);
        kn_srv_fail(c, "Init", why);
        return;
    }
    /* a judged scenario run: its robot (a fleet's: the one of the INIT's
     * name) starts where the scenario says, whatever the client asked for */
    char iname[64] = "";
    copy_str(iname, sizeof iname, in.name);
    const double *flip = NULL;
    int slot = s->judge ? kn_judge_claim(s->judge, iname, &p, &flip) : -1;
    if (slot >= 0)
        want = p;
    if (slot >= 0 && kn_judge_count(s->judge) > 1) {
        park(c, slot, want, p, flip, iname, line, len);
        return;
    }
    spawn(c, slot, want, p, flip, iname, line, len);
}
struct flip_cmd {
    double target[KN_NFLIPPERS];
    unsigned mask;
};

/* A joint angle on the wire (USARSim's per-joint sign) to a KRP flipper target. */
static void flip_set(struct kn_srv *s, struct flip_cmd *f, int k, double joint_rad)
{
    f->target[k] = kn_conv_joint_to_flipper(&s->conv, k, joint_rad);
    f->mask |= 1u << k;
}

static void flip_apply(struct kn_srv_conn *c, const struct flip_cmd *f)
{
    if (f->mask)
        kn_world_set_flippers(c->srv->w, c->robot, f->target, f->mask);
}

static void do_drive(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line,
                     size_t len)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_drive d;
    enum kn_usar_result r = kn_usar_parse_drive(l, &d);
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    bool acted = false;
    if (d.has_normalized)
        c->normalized = d.normalized;
    if (d.has_light) {
        c->light = d.light;
        acted = true;
    }
    if (d.has_left && d.has_right) {
        /* Normalized: percent of the maximum wheel speed (SkidSteeredVehicle) */
        double scale =
            c->normalized ? kn_conv_belt_to_wheel(&s->conv, s->rp.belt_speed_max) / 100.0 : 1.0;
        kn_world_set_belts(s->w, c->robot, kn_conv_wheel_to_belt(&s->conv, d.left * scale),
                           kn_conv_wheel_to_belt(&s->conv, d.right * scale));
        acted = true;
    } else if (d.has_left || d.has_right) {
        kn_srv_log_bad(c, &s->st.bad_value, "DRIVE needs both Left and Right", line, len);
    }
    /* UT2004's joint form: DRIVE {Name FRFlipper} {Value a} [{Order 0}] */
    struct flip_cmd f = { { 0 }, 0 };
    for (int i = 0; i < d.n_joints; i++) {
        const struct kn_usar_joint_cmd *j = &d.joint[i];
        int k = kn_usar_flipper_index(j->name);
        if (k < 0 || !j->has_value || (j->has_order && j->order != 0)) {
            kn_srv_log_bad(c, &s->st.bad_value,
                           "DRIVE: only flipper joints, absolute angles (Order 0)", line, len);
            continue;
        }
        flip_set(s, &f, k, j->value);
    }
    flip_apply(c, &f);
    if (d.has_flip)
        s->st.ignored++; /* UDK ignores Flip */
    if (acted || f.mask)
        s->st.commands++;
}

static void do_set(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line,
                   size_t len)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_set set;
    enum kn_usar_result r = kn_usar_parse_set(l, &set);
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    if (kn_usar_str_is(set.type, "Odometry")) {
        if (kn_usar_str_is(set.opcode, "Reset")) {
            kn_srv_odometry_reset(c);
            s->st.commands++;
        } else {
            kn_srv_log_bad(c, &s->st.bad_value, "SET Odometry: only Opcode RESET", line, len);
        }
        return;
    }
    if (!kn_usar_str_is(set.type, "Joint")) {
        kn_srv_log_bad(c, &s->st.ignored, "SET: no such item on this robot", line, len);
        return;
    }
    if (kn_usar_str_is(set.opcode, "Stiffness")) {
        s->st.ignored++; /* the servo gains come from the robot file */
        return;
    }
    if (!kn_usar_str_is(set.opcode, "Angle") && !kn_usar_str_is(set.opcode, "Target")) {
        kn_srv_log_bad(c, &s->st.bad_value, "SET Joint: Opcode must be Angle or Target", line, len);
        return;
    }
    if (!set.has_number) {
        kn_srv_log_bad(c, &s->st.malformed, "SET Joint: Params must be one number (radians)", line,
                       len);
        return;
    }
    struct flip_cmd f = { { 0 }, 0 };
    if (kn_usar_str_is(set.name, "AllJoints") || kn_usar_str_is(set.name, "AllAngles")) {
        for (int k = 0; k < KN_NFLIPPERS; k++)
            flip_set(s, &f, k, set.number);
    } else {
        int k = kn_usar_flipper_index(set.name);
        if (k < 0) {
            kn_srv_log_bad(c, &s->st.bad_value,
                           "SET Joint: no such joint (FRFlipper FLFlipper "
                           "RRFlipper RLFlipper)",
                           line, len);
            return;
        }
        flip_set(s, &f, k, set.number);
    }
    flip_apply(c, &f);
    s->st.commands++;
}

static void do_multidrive(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line,
                          size_t len)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_multidrive m;
    enum kn_usar_result r = kn_usar_parse_multidrive(l, &m);
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    struct flip_cmd f = { { 0 }, 0 };
    for (int i = 0; i < m.n; i++) {
        int k = kn_usar_flipper_index(m.joint[i].name);
        if (k < 0) {
            kn_srv_log_bad(c, &s->st.bad_value, "MULTIDRIVE: no such joint", line, len);
            continue;
        }
        flip_set(s, &f, k, m.joint[i].value);
    }
    flip_apply(c, &f);
    if (f.mask)
        s->st.commands++;
}

static void do_get(struct kn_srv_conn *c, const struct kn_usar_line *l, bool conf, const char *line,
                   size_t len)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_get g;
    enum kn_usar_result r = kn_usar_parse_get(l, &g);
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    if (!kn_usar_str_is(g.type, "Robot")) {
        /* UDK answers nothing when no item matches. Encoders in particular
         * stay unanswered: ours count belt travel and never wrap, and a
         * Resolution would make a client unwrap them per revolution. */
        s->st.ignored++;
        return;
    }
    if (conf)
        kn_srv_send_conf(c);
    else
        kn_srv_send_geo(c);
}

void kn_srv_line(struct kn_srv_conn *c, const char *line, size_t len)
{
    struct kn_srv *s = c->srv;
    /* large (groups and pairs of a whole line); one loop, so one copy */
    static struct kn_usar_line l;
    enum kn_usar_result r = kn_usar_tokenize(line, len, &l);
    if (r == KN_USAR_EEMPTY) {
        s->st.empty++;
        return;
    }
    if (r != KN_USAR_OK) {
        kn_srv_log_bad(c, &s->st.malformed, kn_usar_strerror(r), line, len);
        return;
    }
    if (kn_usar_str_is(l.head, "KENAF")) {
        s->st.ext++;
        kn_srv_ext(c, &l, line, len);
        return;
    }
    enum kn_usar_kind k = kn_usar_kind(&l);
    switch (k) {
    case KN_USAR_K_INIT: do_init(c, &l, line, len); return;
    case KN_USAR_K_GETSTARTPOSES: kn_srv_send_startposes(c); return;
    case KN_USAR_K_DRIVE:
    case KN_USAR_K_SET:
    case KN_USAR_K_MULTIDRIVE:
    case KN_USAR_K_GETCONF:
    case KN_USAR_K_GETGEO:
    case KN_USAR_K_MISPKG:
    case KN_USAR_K_ACT:
        if (c->robot < 0) {
            s->st.before_init++; /* UDK: only with a spawned bot, silently */
            return;
        }
        break;
    default: kn_srv_log_bad(c, &s->st.unknown, "unknown command", line, len); return;
    }
    if (c->left) {
        s->st.ignored++; /* its program ended: set-points stay as they were left */
        return;
    }
    switch (k) {
    case KN_USAR_K_DRIVE: do_drive(c, &l, line, len); break;
    case KN_USAR_K_SET: do_set(c, &l, line, len); break;
    case KN_USAR_K_MULTIDRIVE: do_multidrive(c, &l, line, len); break;
    case KN_USAR_K_GETCONF: do_get(c, &l, true, line, len); break;
    case KN_USAR_K_GETGEO: do_get(c, &l, false, line, len); break;
    default:
        kn_srv_log_bad(c, &s->st.ignored, "no mission packages or actuators on this robot", line,
                       len);
        break;
    }
}
