/* usarsim_server: a stand-in USARSim server for the tests of kenaf-simd's
 * usarsim backend. It behaves toward a client the way the UDK server does
 * (docs/usarsim.md): NFO banner on accept, no INIT acknowledgement,
 * one robot per connection, commands before the spawn dropped without a
 * word, STA every 0.1 s, SEN per sensor interval, the robot deleted when
 * the connection closes. The robot is a kinematic Kenaf: wheel rad/s times
 * the wheel radius is belt speed, skid steering, flipper joints slewing to
 * their targets. Every line is read and written with the USARSim codec.
 *
 *   usarsim_server [--port N] [--log FILE] [--dialect udk|ut2004]
 *                  [--feed FILE] [--feed-only] [--feed-chunk N]
 *                  [--sta-ms N] [--sen-ms N] [--sensors LIST] [--asta]
 *                  [--wheel-radius M] [--track-width M] [--max-wheel RAD_S]
 *                  [--encoder-res RAD] [--encoder-sign L,R] [--start TAG=x,y,z,r,p,y]
 *                  [--no-get] [--sta-flippers-once]
 *
 * Prints "PORT <n>" once it listens (--port 0: any free port; a restart
 * can take its old port back). --log records every line received, as
 * "<CLOCK_MONOTONIC us> <client> <line>", and events as "#...". --feed
 * sends the file's bytes, as they are, to each client once its robot has
 * spawned (after its own stream starts, or instead of it with
 * --feed-only); --feed-chunk N sends them N bytes per 5 ms step, so lines
 * arrive split. --dialect ut2004 reports flipper angles in STA, accepts
 * MULTIDRIVE and answers SET with RES; udk (the default) ignores
 * MULTIDRIVE, as UDK does. --sensors takes a comma-separated subset of
 * groundtruth,ins,encoder,odometry,touch (default groundtruth,ins,encoder).
 * --asta adds one ASTA (UT2004: MISSTA) line per flipper joint. --no-get
 * never answers GETCONF/GETGEO (UDK's reply when nothing matches).
 * --encoder-sign 1,-1 makes the right encoder count down going forward.
 * --sta-flippers-once (udk) puts flipper angles in each robot's first STA
 * only, as a stray line from a real UDK server does.
 * SIGTERM/SIGINT exit 0. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "convert.h"
#include "kenaf_kinematics.h"
#include "sim_server.h"
#include "usarsim_codec.h"

#define STEP_MS 5
#define FLIPPER_RATE_RAD_S 1.5
#define FLIPPER_LIMIT_RAD 2.086 /* Kenaf.uc LimitLow/LimitHigh */
#define MAX_STARTS 8

enum { SEN_GT = 1, SEN_INS = 2, SEN_ENC = 4, SEN_ODO = 8, SEN_TOUCH = 16 };

struct robot {
    bool spawned;
    char name[64];
    struct kin_robot m;    /* USARSim frame: x forward, y right, z down */
    double z, roll, pitch; /* as spawned: the model is planar */
    double wheel[2];       /* commanded spin L, R (rad/s) */
    double spin[2];        /* accumulated wheel angle L, R (rad) */
    struct kin_pose odo;   /* from the spawn pose */
};

struct client {
    struct sim_client base;
    bool after_cr; /* EOL check across reads */
    struct robot r;
    size_t feed_off; /* bytes of the feed sent; feed_len: done */
    bool feeding;
    bool sta_sent; /* for --sta-flippers-once */
    char *held;    /* own lines held while a fed line is half sent */
    size_t held_len, held_cap;
};

struct start {
    char tag[64];
    double pose[6];
};

static struct {
    struct sim_server srv;
    uv_timer_t step;
    struct sim_clock clock;
    enum kn_usar_dialect dialect;
    char *feed;
    size_t feed_len, feed_chunk;
    bool feed_only, asta, no_get, sta_flippers_once;
    unsigned sensors;
    unsigned sta_every, sen_every, step_no;
    double wheel_radius, max_wheel, enc_res;
    double enc_sign[2]; /* L, R: -1 = an encoder mounted mirrored */
    struct kin_params model;
    struct start starts[MAX_STARTS];
    int nstarts;
    double t; /* game time, s since the level started */
    struct kn_usar_line line;
    uint64_t malformed, dropped, eol_violations;
} S;

/* ---- output ------------------------------------------------------------ */

/* A fed line is still half sent: a line of ours now would land inside it. */
static bool mid_fed_line(const struct client *c)
{
    return c->feeding && c->feed_off > 0 && S.feed[c->feed_off - 1] != '\n' &&
           S.feed[c->feed_off - 1] != '\r';
}

static void flush_held(struct client *c)
{
    sim_send(&c->base, c->held, c->held_len);
    c->held_len = 0;
}

/* n: a formatter's result (length, or -error: then nothing goes out). */
static void send_fmt(struct client *c, const char *buf, int n)
{
    if (n > 0 && mid_fed_line(c)) {
        if (c->held_len + (size_t)n > c->held_cap) {
            size_t cap = (c->held_len + (size_t)n) * 2;
            char *nb = realloc(c->held, cap);
            if (!nb)
                return;
            c->held = nb;
            c->held_cap = cap;
        }
        memcpy(c->held + c->held_len, buf, (size_t)n);
        c->held_len += (size_t)n;
    } else if (n > 0)
        sim_send(&c->base, buf, (size_t)n);
    else
        sim_log(&S.srv, c->base.id, "#format-error %s",
                kn_usar_strerror((enum kn_usar_result) - n));
}

static double wrap_2pi(double a)
{
    double w = kn_conv_wrap_2pi(a);
    return isfinite(w) ? w : 0.0;
}

static void send_sta(struct client *c)
{
    struct kn_usar_sta s;
    memset(&s, 0, sizeof s);
    s.has_time = true;
    s.time = S.t;
    s.has_battery = true;
    if (S.dialect == KN_USAR_UT2004) {
        s.battery = floor(1200.0 - S.t / 10.0); /* counts down, never to 0 here */
        s.flipper_mask = 0x0F;
        memcpy(s.flipper, c->r.m.flipper, sizeof s.flipper);
    } else {
        s.battery = 99999; /* no battery item */
        if (S.sta_flippers_once && !c->sta_sent) {
            s.flipper_mask = 0x0F;
            memcpy(s.flipper, c->r.m.flipper, sizeof s.flipper);
        }
    }
    c->sta_sent = true;
    char buf[512];
    send_fmt(c, buf, kn_usar_fmt_sta(buf, sizeof buf, &s, S.dialect));
}

static void send_pose_sen(struct client *c, enum kn_usar_sen_type type)
{
    struct kn_usar_sen s;
    memset(&s, 0, sizeof s);
    s.sen_type = type;
    const struct kin_pose *q = &c->r.m.pose;
    const double pos[3] = { q->x, q->y, c->r.z }, rpy[3] = { c->r.roll, c->r.pitch, q->yaw };
    memcpy(s.location, pos, sizeof s.location);
    bool udk = S.dialect != KN_USAR_UT2004;
    for (int i = 0; i < 3; i++) {
        double w = wrap_2pi(rpy[i]);
        /* UDK ground truth prints the raw rotator (can be negative);
         * INS and UT2004 print [0, 2pi) */
        if (type == KN_USAR_SEN_GROUNDTRUTH && udk && w > KN_PI)
            w -= 2 * KN_PI;
        s.orientation[i] = w;
    }
    if (type == KN_USAR_SEN_GROUNDTRUTH) {
        s.has_time = true;
        s.time = S.t;
        s.name = kn_usar_s(udk ? "GndTruth" : "GroundTruth");
    } else {
        s.name = kn_usar_s(udk ? "InsTest" : "INS"); /* INS has no Time */
    }
    char buf[512];
    send_fmt(c, buf, kn_usar_fmt_sen(buf, sizeof buf, &s, S.dialect));
}

/* UDK's Encoder: tick = int((spin mod 2pi) / Resolution), so one turn is
 * 2pi/Resolution ticks and the count starts over; UDK names driven wheel
 * joint i "W<i>" (the Kenaf's W0 is FRWheelRoll, W1 FLWheelRoll), UT2004
 * ECLeft/ECRight. Forward spin counts up on both sides unless
 * --encoder-sign mirrors one. */
static void send_encoder(struct client *c)
{
    struct kn_usar_sen s;
    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_ENCODER;
    bool udk = S.dialect != KN_USAR_UT2004;
    if (udk) {
        s.has_time = true;
        s.time = S.t;
    }
    static const int side_order[2] = { KN_RIGHT, KN_LEFT };
    for (int i = 0; i < 2; i++) {
        int side = udk ? side_order[i] : (i == 0 ? KN_LEFT : KN_RIGHT);
        s.ticks[i].name = kn_usar_s(udk ? (side == KN_RIGHT ? "W0" : "W1")
                                        : (side == KN_LEFT ? "ECLeft" : "ECRight"));
        s.ticks[i].tick =
            (int64_t)(fmod(S.enc_sign[side] * c->r.spin[side], 2 * KN_PI) / S.enc_res);
    }
    s.n_ticks = 2;
    char buf[512];
    send_fmt(c, buf, kn_usar_fmt_sen(buf, sizeof buf, &s, S.dialect));
}

static void send_odometry(struct client *c)
{
    struct kn_usar_sen s;
    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_ODOMETRY;
    s.has_time = S.dialect != KN_USAR_UT2004;
    s.time = S.t;
    s.name = kn_usar_s("Odometry");
    s.pose[0] = c->r.odo.x;
    s.pose[1] = c->r.odo.y;
    s.pose[2] = c->r.odo.yaw;
    char buf[512];
    send_fmt(c, buf, kn_usar_fmt_sen(buf, sizeof buf, &s, S.dialect));
}

static void send_touch(struct client *c)
{
    struct kn_usar_sen s;
    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_TOUCH;
    s.has_time = S.dialect != KN_USAR_UT2004;
    s.time = S.t;
    s.touches[0].name = kn_usar_s("Touch");
    s.n_touches = 1;
    char buf[512];
    send_fmt(c, buf, kn_usar_fmt_sen(buf, sizeof buf, &s, S.dialect));
}

static void send_links(struct client *c)
{
    bool ut = S.dialect == KN_USAR_UT2004;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        struct kn_usar_links l;
        memset(&l, 0, sizeof l);
        l.has_time = true;
        l.time = S.t;
        l.name = kn_usar_s(kn_usar_flipper_name(k));
        l.n = 1;
        l.link[0].link = 1;
        l.link[0].has_value = true;
        l.link[0].value = c->r.m.flipper[k];
        l.link[0].has_torque = ut;
        char buf[256];
        send_fmt(c, buf,
                 kn_usar_fmt_links(buf, sizeof buf, ut ? KN_USAR_K_MISSTA : KN_USAR_K_ASTA, &l));
    }
}

static void send_conf_robot(struct client *c, bool geo)
{
    struct kn_usar_robot r;
    memset(&r, 0, sizeof r);
    r.name = kn_usar_s("Kenaf");
    r.has_mass = r.has_max_speed = r.has_max_torque = true;
    r.mass = 2.0;
    r.max_speed = S.max_wheel;
    r.max_torque = 0.15;
    r.has_dimensions = r.has_cog = true;
    r.dimensions[0] = 0.40;
    r.dimensions[1] = S.model.track_m;
    r.has_wheel_radius = r.has_wheel_separation = r.has_wheel_base = true;
    r.wheel_radius = S.wheel_radius;
    r.wheel_separation = S.model.track_m;
    r.wheel_base = 0.29;
    char buf[512];
    if (geo)
        send_fmt(c, buf, kn_usar_fmt_geo_robot(buf, sizeof buf, &r));
    else
        send_fmt(c, buf, kn_usar_fmt_conf_robot(buf, sizeof buf, &r));
}

static void send_conf_encoder(struct client *c)
{
    struct kn_usar_writer w;
    char buf[256];
    kn_usar_w_init(&w, buf, sizeof buf, "CONF");
    kn_usar_w_kv(&w, "Type", "Encoder");
    kn_usar_w_kv(&w, "Name", S.dialect == KN_USAR_UT2004 ? "ECLeft" : "EncW0W1");
    kn_usar_w_key(&w, "ScanInterval");
    kn_usar_w_num(&w, S.sen_every * STEP_MS / 1000.0, 4, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "Resolution");
    kn_usar_w_num(&w, S.enc_res, 4, KN_USAR_TRUNC);
    send_fmt(c, buf, kn_usar_w_end(&w));
}

/* ---- input ----------------------------------------------------------- */

static bool find_start(struct kn_usar_str tag, double pose[6])
{
    for (int i = 0; i < S.nstarts; i++) {
        if (kn_usar_str_is(tag, S.starts[i].tag)) { /* UDK matches with Caps() */
            memcpy(pose, S.starts[i].pose, 6 * sizeof pose[0]);
            return true;
        }
    }
    return false;
}

static void do_init(struct client *c)
{
    struct kn_usar_init in;
    enum kn_usar_result r = kn_usar_parse_init(&S.line, &in);
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed INIT: %s", kn_usar_strerror(r));
        return;
    }
    if (c->r.spawned) {
        sim_log(&S.srv, c->base.id, "#ignored second INIT");
        return;
    }
    double pose[6] = { 0 };
    if (in.start.n) {
        if (!find_start(in.start, pose)) {
            sim_log(&S.srv, c->base.id, "#no PlayerStart %.*s: nothing spawned", (int)in.start.n,
                    in.start.p);
            return;
        }
    } else {
        if (in.has_location)
            memcpy(pose, in.location, 3 * sizeof pose[0]);
        if (in.has_rotation)
            memcpy(pose + 3, in.rotation, 3 * sizeof pose[0]);
    }
    memset(&c->r, 0, sizeof c->r);
    c->r.spawned = true;
    size_t n = in.name.n < sizeof c->r.name - 1 ? in.name.n : sizeof c->r.name - 1;
    memcpy(c->r.name, in.name.p ? in.name.p : "", n);
    c->r.m.pose = (struct kin_pose){ .x = pose[0], .y = pose[1], .yaw = pose[5] };
    c->r.z = pose[2];
    c->r.roll = pose[3];
    c->r.pitch = pose[4];
    sim_log(&S.srv, c->base.id, "#spawn %.4f,%.4f,%.4f %.4f,%.4f,%.4f", pose[0], pose[1], pose[2],
            pose[3], pose[4], pose[5]);
    c->feeding = S.feed_len > 0;
    c->feed_off = 0;
}

static void do_drive(struct client *c)
{
    struct kn_usar_drive d;
    enum kn_usar_result r = kn_usar_parse_drive(&S.line, &d);
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed DRIVE: %s", kn_usar_strerror(r));
        return;
    }
    if (!d.has_left || !d.has_right) /* UDK: both or nothing */
        return;
    /* UDK compares {Normalized} with "true" exactly */
    int ni = kn_usar_find_group(&S.line, "Normalized", 0);
    bool norm = ni >= 0 && kn_usar_str_eq(S.line.group[ni].value, "true");
    double v[2] = { d.left, d.right };
    for (int s = 0; s < 2; s++) {
        if (norm)
            v[s] = v[s] * S.max_wheel / 100.0;
        c->r.wheel[s] = fmax(-S.max_wheel, fmin(S.max_wheel, v[s]));
    }
}

static void set_flipper_target(struct client *c, int k, double v)
{
    c->r.m.flipper_target[k] = fmax(-FLIPPER_LIMIT_RAD, fmin(FLIPPER_LIMIT_RAD, v));
}

static void do_set(struct client *c)
{
    struct kn_usar_set s;
    enum kn_usar_result r = kn_usar_parse_set(&S.line, &s);
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed SET: %s", kn_usar_strerror(r));
        return;
    }
    bool ok = false;
    /* UDK: type == "Joint", opcode == "Angle" || "Target", case-sensitive */
    if (kn_usar_str_eq(s.type, "Joint") &&
        (kn_usar_str_eq(s.opcode, "Angle") || kn_usar_str_eq(s.opcode, "Target")) && s.has_number) {
        int k = kn_usar_flipper_index(s.name);
        if (k >= 0) {
            set_flipper_target(c, k, s.number);
            ok = true;
        }
    }
    if (!ok)
        sim_log(&S.srv, c->base.id, "#ignored SET");
    if (S.dialect == KN_USAR_UT2004) {
        struct kn_usar_writer w;
        char buf[256];
        kn_usar_w_init(&w, buf, sizeof buf, "RES");
        kn_usar_w_knum(&w, "Time", S.t, 2);
        kn_usar_w_key(&w, "Type");
        kn_usar_w_text(&w, s.type);
        kn_usar_w_key(&w, "Name");
        kn_usar_w_text(&w, s.name);
        kn_usar_w_kv(&w, "Status", ok ? "OK" : "Failed");
        send_fmt(c, buf, kn_usar_w_end(&w));
    }
}

static void do_multidrive(struct client *c)
{
    if (S.dialect != KN_USAR_UT2004) {
        sim_log(&S.srv, c->base.id, "#ignored MULTIDRIVE (UDK has none)");
        return;
    }
    struct kn_usar_multidrive m;
    enum kn_usar_result r = kn_usar_parse_multidrive(&S.line, &m);
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed MULTIDRIVE: %s", kn_usar_strerror(r));
        return;
    }
    for (unsigned i = 0; i < m.n; i++) {
        int k = kn_usar_flipper_index(m.joint[i].name);
        if (k >= 0)
            set_flipper_target(c, k, m.joint[i].value);
    }
}

static void do_get(struct client *c, bool geo)
{
    struct kn_usar_get g;
    enum kn_usar_result r = kn_usar_parse_get(&S.line, &g);
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed GET: %s", kn_usar_strerror(r));
        return;
    }
    if (S.no_get)
        return;
    if (kn_usar_str_is(g.type, "Robot"))
        send_conf_robot(c, geo);
    else if (!geo && kn_usar_str_is(g.type, "Encoder") && (S.sensors & SEN_ENC))
        send_conf_encoder(c);
    /* anything else: no match, and UDK answers nothing */
}

static void do_startposes(struct client *c)
{
    struct kn_usar_pose p[MAX_STARTS];
    for (int i = 0; i < S.nstarts; i++) {
        p[i].name = kn_usar_s(S.starts[i].tag);
        memcpy(p[i].location, S.starts[i].pose, sizeof p[i].location);
        memcpy(p[i].orientation, S.starts[i].pose + 3, sizeof p[i].orientation);
    }
    char buf[2048];
    send_fmt(c, buf, kn_usar_fmt_startposes(buf, sizeof buf, p, (size_t)S.nstarts));
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct client *c = ctx;
    enum kn_usar_result r = kn_usar_tokenize(line, len, &S.line);
    if (r == KN_USAR_EEMPTY)
        return true;
    if (r != KN_USAR_OK) {
        S.malformed++;
        sim_log(&S.srv, c->base.id, "#malformed: %s", kn_usar_strerror(r));
        return true;
    }
    enum kn_usar_kind k = kn_usar_kind(&S.line);
    if (k == KN_USAR_K_INIT) {
        do_init(c);
        return true;
    }
    if (k == KN_USAR_K_GETSTARTPOSES) {
        do_startposes(c);
        return true;
    }
    if (!c->r.spawned) { /* UDK: no robot, no reply */
        S.dropped++;
        sim_log(&S.srv, c->base.id, "#dropped before spawn");
        return true;
    }
    switch (k) {
    case KN_USAR_K_DRIVE: do_drive(c); break;
    case KN_USAR_K_SET: do_set(c); break;
    case KN_USAR_K_MULTIDRIVE: do_multidrive(c); break;
    case KN_USAR_K_GETCONF: do_get(c, false); break;
    case KN_USAR_K_GETGEO: do_get(c, true); break;
    default: sim_log(&S.srv, c->base.id, "#ignored"); break;
    }
    return true;
}

/* Clients must end lines with CR LF (UDK stalls on a bare LF): count
 * every LF without its CR and every CR without its LF. */
static void check_eol(struct client *c, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c->after_cr && p[i] != '\n') {
            S.eol_violations++;
            sim_log(&S.srv, c->base.id, "#eol CR without LF");
        }
        if (p[i] == '\n' && !c->after_cr) {
            S.eol_violations++;
            sim_log(&S.srv, c->base.id, "#eol LF without CR");
        }
        c->after_cr = p[i] == '\r';
    }
}

static void on_bytes(struct sim_client *c, const char *p, size_t n)
{
    check_eol((struct client *)c, p, n);
}

static void on_connect(struct sim_client *sc)
{
    /* the server speaks first */
    char buf[256];
    send_fmt((struct client *)sc, buf,
             kn_usar_fmt_nfo(buf, sizeof buf, "BotDeathMatch", "DM-KenafTest", 0));
}

static void on_close(struct sim_client *sc)
{
    struct client *c = (struct client *)sc;
    /* USARSim: the connection's robot goes with it */
    sim_log(&S.srv, sc->id, "#disconnect%s", c->r.spawned ? " (robot deleted)" : "");
    free(c->held);
    c->held = NULL;
    c->held_len = c->held_cap = 0;
}

/* ---- the model ------------------------------------------------------- */

static void step_robot(struct robot *r, double dt)
{
    for (int s = 0; s < 2; s++) {
        r->m.belt_target[s] = r->wheel[s] * S.wheel_radius;
        r->spin[s] += r->wheel[s] * dt;
    }
    /* z down: yaw grows clockwise seen from above, so a faster left belt
     * (a right turn) makes it grow */
    kin_step(&r->m, &S.model, dt);
    kin_pose_step(&r->odo, r->m.v, r->m.yaw_rate, dt);
}

/* One step of the model: every robot moves, and sends what is due. */
static void model_step(void)
{
    double dt = STEP_MS / 1000.0;
    S.t += dt;
    S.step_no++;
    bool sta = S.step_no % S.sta_every == 0, sen = S.step_no % S.sen_every == 0;
    for (struct sim_client *sc = S.srv.clients; sc; sc = sc->next) {
        struct client *c = (struct client *)sc;
        if (sc->closing || !c->r.spawned)
            continue;
        step_robot(&c->r, dt);
        if (!S.feed_only) {
            if (sta)
                send_sta(c);
            if (sen) {
                if (S.sensors & SEN_GT)
                    send_pose_sen(c, KN_USAR_SEN_GROUNDTRUTH);
                if (S.sensors & SEN_INS)
                    send_pose_sen(c, KN_USAR_SEN_INS);
                if (S.sensors & SEN_ENC)
                    send_encoder(c);
                if (S.sensors & SEN_ODO)
                    send_odometry(c);
                if (S.sensors & SEN_TOUCH)
                    send_touch(c);
                if (S.asta)
                    send_links(c);
            }
        }
    }
}

/* The steps the wall clock owes (USARSim runs in real time), then one
 * chunk of a fed file per client. */
static void on_step(uv_timer_t *t)
{
    (void)t;
    for (unsigned n = sim_clock_steps(&S.clock); n; n--)
        model_step();
    for (struct sim_client *sc = S.srv.clients; sc; sc = sc->next) {
        struct client *c = (struct client *)sc;
        if (sc->closing || !c->r.spawned)
            continue;
        if (c->feeding) {
            size_t left = S.feed_len - c->feed_off;
            size_t n = S.feed_chunk && S.feed_chunk < left ? S.feed_chunk : left;
            sim_send(&c->base, S.feed + c->feed_off, n);
            c->feed_off += n;
            if (c->feed_off >= S.feed_len) {
                c->feeding = false;
                sim_log(&S.srv, c->base.id, "#fed %zu bytes", S.feed_len);
            }
            if (!mid_fed_line(c))
                flush_held(c);
        }
    }
}

/* ---- main ------------------------------------------------------------ */

static void on_signal(uv_signal_t *h, int sig)
{
    (void)h;
    (void)sig;
    fprintf(stderr,
            "usarsim_server: %llu lines, %llu malformed, %llu dropped before spawn, "
            "%llu EOL violations\n",
            (unsigned long long)S.srv.lines, (unsigned long long)S.malformed,
            (unsigned long long)S.dropped, (unsigned long long)S.eol_violations);
    /* close everything; the loop ends when the last handle is gone */
    sim_shutdown(&S.srv);
    uv_close((uv_handle_t *)&S.step, NULL);
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: usarsim_server [--port N] [--log FILE] [--dialect udk|ut2004] [--feed FILE]\n"
            "         [--feed-only] [--feed-chunk N] [--sta-ms N] [--sen-ms N] [--sensors LIST]\n"
            "         [--asta] [--wheel-radius M] [--track-width M] [--max-wheel RAD_S]\n"
            "         [--encoder-res RAD] [--encoder-sign L,R] [--start TAG=x,y,z,r,p,y]\n"
            "         [--no-get] [--sta-flippers-once]\n");
}

static bool read_feed(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return false;
    }
    size_t cap = 0;
    for (;;) {
        if (S.feed_len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(S.feed, cap);
            if (!nb) {
                fclose(f);
                return false;
            }
            S.feed = nb;
        }
        size_t got = fread(S.feed + S.feed_len, 1, cap - S.feed_len, f);
        if (got == 0)
            break;
        S.feed_len += got;
    }
    fclose(f);
    return true;
}

static bool parse_sensors(const char *list)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        { "groundtruth", SEN_GT }, { "ins", SEN_INS },     { "encoder", SEN_ENC },
        { "odometry", SEN_ODO },   { "touch", SEN_TOUCH },
    };
    S.sensors = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (strcmp(tok, names[i].name) == 0) {
                S.sensors |= names[i].bit;
                found = true;
            }
        }
        if (!found && strcmp(tok, "none") != 0)
            return false;
    }
    return true;
}

static bool parse_start(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || S.nstarts >= MAX_STARTS || (size_t)(eq - arg) >= 64)
        return false;
    struct start *s = &S.starts[S.nstarts];
    memcpy(s->tag, arg, (size_t)(eq - arg));
    s->tag[eq - arg] = '\0';
    if (sscanf(eq + 1, "%lf,%lf,%lf,%lf,%lf,%lf", &s->pose[0], &s->pose[1], &s->pose[2],
               &s->pose[3], &s->pose[4], &s->pose[5]) != 6)
        return false;
    S.nstarts++;
    return true;
}

static bool positive(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v > 0) || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* "L,R", each 1 or -1 */
static bool parse_signs(const char *s)
{
    int l, r, n = 0;
    if (sscanf(s, "%d,%d%n", &l, &r, &n) != 2 || s[n] || (l != 1 && l != -1) || (r != 1 && r != -1))
        return false;
    S.enc_sign[KN_LEFT] = l;
    S.enc_sign[KN_RIGHT] = r;
    return true;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "port", required_argument, NULL, 'p' },
        { "log", required_argument, NULL, 'l' },
        { "dialect", required_argument, NULL, 'd' },
        { "feed", required_argument, NULL, 'f' },
        { "feed-only", no_argument, NULL, 'F' },
        { "feed-chunk", required_argument, NULL, 'c' },
        { "sta-ms", required_argument, NULL, 'a' },
        { "sen-ms", required_argument, NULL, 'e' },
        { "sensors", required_argument, NULL, 's' },
        { "asta", no_argument, NULL, 'A' },
        { "wheel-radius", required_argument, NULL, 'r' },
        { "track-width", required_argument, NULL, 't' },
        { "max-wheel", required_argument, NULL, 'm' },
        { "encoder-res", required_argument, NULL, 'E' },
        { "encoder-sign", required_argument, NULL, 'g' },
        { "start", required_argument, NULL, 'S' },
        { "no-get", no_argument, NULL, 'n' },
        { "sta-flippers-once", no_argument, NULL, 'O' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int port = 0, sta_ms = 100, sen_ms = 100, opt;
    const char *logpath = NULL, *feedpath = NULL;
    S.dialect = KN_USAR_UDK;
    S.sensors = SEN_GT | SEN_INS | SEN_ENC;
    S.wheel_radius = 0.08;
    S.model = (struct kin_params){
        .track_m = 0.22, /* Kenaf.uc: wheels at y = +-0.11 (flippers) */
        .belt_accel_m_s2 = INFINITY,
        .flipper_rate_rad_s = FLIPPER_RATE_RAD_S,
        .z_down = true,
    };
    S.max_wheel = 6.283; /* WheelJoint MaxVelocity default */
    S.enc_res = 0.01;
    S.enc_sign[KN_LEFT] = S.enc_sign[KN_RIGHT] = 1;
    bool ok = true;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': port = atoi(optarg); break;
        case 'l': logpath = optarg; break;
        case 'd':
            if (strcmp(optarg, "udk") == 0)
                S.dialect = KN_USAR_UDK;
            else if (strcmp(optarg, "ut2004") == 0)
                S.dialect = KN_USAR_UT2004;
            else
                ok = false;
            break;
        case 'f': feedpath = optarg; break;
        case 'F': S.feed_only = true; break;
        case 'c': S.feed_chunk = (size_t)atol(optarg); break;
        case 'a': sta_ms = atoi(optarg); break;
        case 'e': sen_ms = atoi(optarg); break;
        case 's': ok = ok && parse_sensors(optarg); break;
        case 'A': S.asta = true; break;
        case 'r': ok = ok && positive(optarg, &S.wheel_radius); break;
        case 't': ok = ok && positive(optarg, &S.model.track_m); break;
        case 'm': ok = ok && positive(optarg, &S.max_wheel); break;
        case 'E': ok = ok && positive(optarg, &S.enc_res); break;
        case 'g': ok = ok && parse_signs(optarg); break;
        case 'S': ok = ok && parse_start(optarg); break;
        case 'n': S.no_get = true; break;
        case 'O': S.sta_flippers_once = true; break;
        case 'h': usage(stdout); return 0;
        default: ok = false; break;
        }
    }
    if (!ok || optind != argc || port < 0 || port > 65535 || sta_ms < STEP_MS || sen_ms < STEP_MS ||
        sta_ms > 60000 || sen_ms > 60000) {
        usage(stderr);
        return 2;
    }
    S.sta_every = (unsigned)(sta_ms / STEP_MS);
    S.sen_every = (unsigned)(sen_ms / STEP_MS);
    if (feedpath && !read_feed(feedpath))
        return 1;
    if (S.nstarts == 0)
        parse_start("PlayerStart1=0,0,0,0,0,0");
    static const struct sim_hooks hooks = {
        .client_size = sizeof(struct client),
        .max_line = KN_USAR_MAX_LINE,
        .on_line = on_line,
        .on_bytes = on_bytes,
        .on_connect = on_connect,
        .on_close = on_close,
    };
    if (!sim_open(&S.srv, "usarsim_server", &hooks, logpath))
        return 1;
    S.t = 100.0; /* the level has been running for a while */
    if (!sim_listen(&S.srv, port, 64))
        return 1;
    sim_log(&S.srv, 0, "#listening dialect=%s", S.dialect == KN_USAR_UT2004 ? "ut2004" : "udk");

    uv_timer_init(S.srv.loop, &S.step);
    S.clock.step_ns = STEP_MS * 1000000ull;
    uv_timer_start(&S.step, on_step, STEP_MS, STEP_MS);
    static const int sigs[2] = { SIGTERM, SIGINT };
    sim_on_signals(&S.srv, sigs, 2, on_signal);
    sim_run(&S.srv);
    free(S.feed);
    return 0;
}
