/* What the server writes: the NFO banner and start poses, the periodic
 * STA / SEN / ASTA lines of each robot, and the CONF / GEO replies, all in
 * USARSim's frame (z down) and number formatting. Frame and unit changes
 * go through convert.h; the codec formats the lines. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server_int.h"

/* Item names as DefaultUSAR.ini gives them to robots (GndTruth, InsTest,
 * Odometer); the encoders carry the side in their name as UT2004's did. */
#define GT_NAME "GndTruth"
#define INS_NAME "InsTest"
#define ODO_NAME "Odometer"
#define ENC_LEFT "ECLeft"
#define ENC_RIGHT "ECRight"
#define ROBOT_NAME "Kenaf"
/* A UDK server with no battery item reports this many seconds. */
#define NO_BATTERY_S 99999.0
/* Time constant of the current average behind the battery life [s]. */
#define BATT_TAU_S 30.0

static const char *const stream_names[KN_NSTREAMS] = {
    [KN_STREAM_STA] = "STA",           [KN_STREAM_GROUNDTRUTH] = "GroundTruth",
    [KN_STREAM_INS] = "INS",           [KN_STREAM_ENCODER] = "Encoder",
    [KN_STREAM_ODOMETRY] = "Odometry", [KN_STREAM_ASTA] = "ASTA",
};

/* Flipper joints in the order USARSim clients list them (MULTIDRIVE, STA):
 * FR, FL, RR, RL. ASTA, CONF and GEO follow it. */
static const int wire_order[KN_NFLIPPERS] = { KN_FR, KN_FL, KN_RR, KN_RL };

const char *kn_srv_stream_name(enum kn_srv_stream k)
{
    return (unsigned)k < KN_NSTREAMS ? stream_names[k] : "?";
}

int kn_srv_stream_parse(const char *s)
{
    for (int k = 0; k < KN_NSTREAMS; k++)
        if (strcasecmp(s, stream_names[k]) == 0)
            return k;
    return -1;
}

/* Every formatter below writes into this one buffer (one loop, no
 * threads); send_fmt sends what it holds. */
static char linebuf[KN_SRV_LINE_MAX];
#define LB linebuf, sizeof linebuf

static void send_fmt(struct kn_srv_conn *c, int n, const char *what)
{
    if (n > 0)
        kn_srv_send(c, linebuf, n);
    else
        kn_srv_log(c->srv, "internal: cannot format %s (%s)", what, kn_usar_strerror(-n));
}

void kn_srv_send_nfo(struct kn_srv_conn *c)
{
    send_fmt(c, kn_usar_fmt_nfo(LB, "BotDeathMatch", c->srv->level, 0), "NFO");
}

void kn_srv_send_startposes(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_pose poses[KN_SRV_MAX_STARTS];
    for (int i = 0; i < s->nstarts; i++) {
        const struct kn_srv_start *st = &s->starts[i];
        double g = kn_world_ground_z(s->w, st->x, st->y);
        double pos[3] = { st->x, st->y, (isfinite(g) ? g : 0) + s->rp.track_radius + 0.005 };
        double rpy[3] = { 0, 0, st->yaw };
        poses[i].name = kn_usar_s(st->name);
        kn_conv_pose_to_sim(&s->conv, pos, rpy, poses[i].location, poses[i].orientation);
    }
    send_fmt(c, kn_usar_fmt_startposes(LB, poses, (size_t)s->nstarts), "start poses");
}

double kn_srv_battery_life(struct kn_srv_conn *c, const struct kn_state *st)
{
    const struct kn_robot_params *rp = &c->srv->rp;
    double tsum = 0;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        tsum += fabs(st->flipper_torque_nm[k]);
    /* the world's battery model: current from the belts and flipper
     * torques, terminal voltage = open-circuit voltage - R I, and the
     * open-circuit voltage linear in the charge left */
    double amps = rp->batt_idle_a +
                  rp->batt_belt_a_per_mps *
                      (fabs(st->belt_speed_m_s[KN_LEFT]) + fabs(st->belt_speed_m_s[KN_RIGHT])) +
                  rp->batt_flipper_a_per_nm * tsum;
    double span = rp->batt_full_v - rp->batt_empty_v;
    double soc = span > 0 ? (st->battery_v + rp->batt_r_ohm * amps - rp->batt_empty_v) / span : 0;
    soc = soc < 0 ? 0 : soc > 1 ? 1 : soc;
    double dt = c->srv->interval[KN_STREAM_STA] * c->srv->pp.step_s;
    if (!c->batt_a_set || dt <= 0) {
        c->batt_a = amps;
        c->batt_a_set = true;
    } else {
        c->batt_a += (amps - c->batt_a) * (1 - exp(-dt / BATT_TAU_S));
    }
    if (!(c->batt_a > 0))
        return NO_BATTERY_S;
    return floor(soc * rp->batt_capacity_ah * 3600.0 / c->batt_a);
}

void kn_srv_odometry_reset(struct kn_srv_conn *c)
{
    memset(c->odo, 0, sizeof c->odo);
    struct kn_state st;
    if (c->robot >= 0 && kn_world_state(c->srv->w, c->robot, &st) == 0) {
        c->odo_belt[0] = st.belt_pos_m[0];
        c->odo_belt[1] = st.belt_pos_m[1];
    } else {
        c->odo_belt[0] = c->odo_belt[1] = 0;
    }
}

/* Dead reckoning from the belt travel since the last update (UDK's
 * Odometry integrates the wheel spins the same way), KRP frame. */
static void odometry_update(struct kn_srv_conn *c, const struct kn_state *st)
{
    double dl = st->belt_pos_m[KN_LEFT] - c->odo_belt[KN_LEFT];
    double dr = st->belt_pos_m[KN_RIGHT] - c->odo_belt[KN_RIGHT];
    c->odo_belt[KN_LEFT] = st->belt_pos_m[KN_LEFT];
    c->odo_belt[KN_RIGHT] = st->belt_pos_m[KN_RIGHT];
    double b = kn_world_track_separation(&c->srv->rp);
    double d = 0.5 * (dl + dr), dth = b > 0 ? (dr - dl) / b : 0;
    double mid = c->odo[2] + 0.5 * dth;
    c->odo[0] += d * cos(mid);
    c->odo[1] += d * sin(mid);
    c->odo[2] = kn_conv_wrap_pi(c->odo[2] + dth);
}

void kn_srv_emit(struct kn_srv_conn *c, enum kn_srv_stream k)
{
    struct kn_srv *s = c->srv;
    struct kn_state st;
    if (c->robot < 0 || kn_world_state(s->w, c->robot, &st))
        return;
    bool udk = s->o.dialect == KN_USAR_UDK;
    switch (k) {
    case KN_STREAM_STA: {
        struct kn_usar_sta sta;
        memset(&sta, 0, sizeof sta);
        sta.has_time = true;
        sta.time = st.time_s;
        sta.has_battery = true;
        sta.battery = kn_srv_battery_life(c, &st);
        sta.has_light_toggle = true;
        sta.light_toggle = c->light;
        sta.flipper_mask = 0x0F;
        for (int f = 0; f < KN_NFLIPPERS; f++)
            sta.flipper[f] = kn_conv_flipper_to_joint(&s->conv, f, st.flipper_rad[f]);
        send_fmt(c, kn_usar_fmt_sta(LB, &sta, s->o.dialect), "STA");
        break;
    }
    case KN_STREAM_GROUNDTRUTH:
    case KN_STREAM_INS: {
        struct kn_usar_sen sen;
        memset(&sen, 0, sizeof sen);
        bool gt = k == KN_STREAM_GROUNDTRUTH;
        sen.sen_type = gt ? KN_USAR_SEN_GROUNDTRUTH : KN_USAR_SEN_INS;
        sen.has_time = gt; /* [USARSensor.INS] bWithTimeStamp=false */
        sen.time = st.time_s;
        sen.name = kn_usar_s(gt ? GT_NAME : INS_NAME);
        kn_conv_pose_to_sim(&s->conv, st.pos_m, st.rpy_rad, sen.location, sen.orientation);
        send_fmt(c, kn_usar_fmt_sen(LB, &sen, s->o.dialect), "SEN");
        break;
    }
    case KN_STREAM_ENCODER: {
        struct kn_usar_sen sen;
        memset(&sen, 0, sizeof sen);
        sen.sen_type = KN_USAR_SEN_ENCODER;
        sen.has_time = udk;
        sen.time = st.time_s;
        sen.n_ticks = 2;
        sen.ticks[0].name = kn_usar_s(ENC_LEFT);
        sen.ticks[0].tick = kn_conv_m_to_ticks(&s->conv, KN_LEFT, st.belt_pos_m[KN_LEFT]);
        sen.ticks[1].name = kn_usar_s(ENC_RIGHT);
        sen.ticks[1].tick = kn_conv_m_to_ticks(&s->conv, KN_RIGHT, st.belt_pos_m[KN_RIGHT]);
        send_fmt(c, kn_usar_fmt_sen(LB, &sen, s->o.dialect), "SEN");
        break;
    }
    case KN_STREAM_ODOMETRY: {
        odometry_update(c, &st);
        struct kn_usar_sen sen;
        memset(&sen, 0, sizeof sen);
        sen.sen_type = KN_USAR_SEN_ODOMETRY;
        sen.has_time = udk;
        sen.time = st.time_s;
        sen.name = kn_usar_s(ODO_NAME);
        double p[3] = { c->odo[0], c->odo[1], 0 }, ps[3], rpy[3] = { 0, 0, c->odo[2] }, rs[3];
        kn_conv_vec_to_sim(&s->conv, p, ps);
        kn_conv_rpy_to_sim(&s->conv, rpy, rs);
        sen.pose[0] = ps[0];
        sen.pose[1] = ps[1];
        sen.pose[2] = rs[2];
        send_fmt(c, kn_usar_fmt_sen(LB, &sen, s->o.dialect), "SEN");
        break;
    }
    case KN_STREAM_ASTA: {
        /* one actuator block per flipper joint, named as the joint (the
         * codec reads a later {Name} as renaming the links after it):
         * ASTA {Time t} {Name FRFlipper} {Link 1} {Value a} {Torque n} ... */
        struct kn_usar_writer w;
        bool asta = udk;
        kn_usar_w_init(&w, LB, asta ? "ASTA" : "MISSTA");
        kn_usar_w_knum(&w, "Time", st.time_s, asta ? 4 : 2);
        for (int i = 0; i < KN_NFLIPPERS; i++) {
            int f = wire_order[i];
            kn_usar_w_kv(&w, "Name", kn_usar_flipper_name(f));
            kn_usar_w_kv(&w, "Link", "1");
            kn_usar_w_knum(&w, "Value", kn_conv_flipper_to_joint(&s->conv, f, st.flipper_rad[f]),
                           4);
            /* torque about the joint: the KRP torque (+ lifts the tip) in
             * the joint's sense */
            double sign = kn_conv_flipper_to_joint(&s->conv, f, 1.0) -
                          kn_conv_flipper_to_joint(&s->conv, f, 0.0);
            kn_usar_w_knum(&w, "Torque", sign * st.flipper_torque_nm[f], 2);
        }
        send_fmt(c, kn_usar_w_end(&w), "ASTA");
        break;
    }
    case KN_NSTREAMS: break;
    }
}

/* One flipper joint's description (CONF: limits; GEO: pivot). */
static void joint_groups(struct kn_srv *s, struct kn_usar_writer *w, bool geo)
{
    const struct kn_robot_params *rp = &s->rp;
    for (int i = 0; i < KN_NFLIPPERS; i++) {
        int f = wire_order[i];
        kn_usar_w_kv(w, "Joint", kn_usar_flipper_name(f));
        if (geo) {
            double front = (f == KN_FL || f == KN_FR) ? 1 : -1;
            double left = (f == KN_FL || f == KN_RL) ? 1 : -1;
            double p[3] = { front * rp->track_pulley_x, left * rp->flipper_y, 0 }, ps[3];
            kn_conv_vec_to_sim(&s->conv, p, ps);
            kn_usar_w_key(w, "Location");
            kn_usar_w_vec3(w, ps, 4, KN_USAR_TRUNC);
        } else {
            double a = kn_conv_flipper_to_joint(&s->conv, f, -rp->flipper_limit);
            double b = kn_conv_flipper_to_joint(&s->conv, f, rp->flipper_limit);
            kn_usar_w_knum(w, "Sign", s->conv.flipper_sign[f], 0);
            kn_usar_w_key(w, "MinAngle");
            kn_usar_w_num(w, a < b ? a : b, 4, KN_USAR_TRUNC);
            kn_usar_w_key(w, "MaxAngle");
            kn_usar_w_num(w, a < b ? b : a, 4, KN_USAR_TRUNC);
        }
    }
}

/* UDK's robot CONF (WheeledVehicle.uc), then the flipper joints. */
void kn_srv_send_conf(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    const struct kn_robot_params *rp = &s->rp;
    struct kn_usar_writer w;
    kn_usar_w_init(&w, LB, "CONF");
    kn_usar_w_kv(&w, "Name", ROBOT_NAME);
    kn_usar_w_kv(&w, "Type", "GroundVehicle");
    kn_usar_w_kv(&w, "SteeringType", "SkidSteered");
    kn_usar_w_key(&w, "Mass");
    kn_usar_w_num(&w, rp->base_mass + KN_NFLIPPERS * rp->flipper_mass, 4, KN_USAR_TRUNC);
    /* DRIVE units: wheel spin, rad/s */
    kn_usar_w_key(&w, "MaxSpeed");
    kn_usar_w_num(&w, kn_conv_belt_to_wheel(&s->conv, rp->belt_speed_max), 4, KN_USAR_TRUNC);
    kn_usar_w_kv(&w, "MaxFrontSteer", "0");
    kn_usar_w_kv(&w, "MaxRearSteer", "0");
    joint_groups(s, &w, false);
    send_fmt(c, kn_usar_w_end(&w), "CONF");
}

void kn_srv_send_geo(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    const struct kn_robot_params *rp = &s->rp;
    double dims[3] = { 2 * (rp->track_pulley_x + rp->track_radius),
                       2 * rp->flipper_y + rp->flipper_width, 2 * rp->track_radius };
    double cog[3] = { rp->cog_x, 0, rp->cog_z }, cog_s[3];
    kn_conv_vec_to_sim(&s->conv, cog, cog_s);
    struct kn_usar_writer w;
    kn_usar_w_init(&w, LB, "GEO");
    kn_usar_w_kv(&w, "Type", "GroundVehicle");
    kn_usar_w_kv(&w, "Name", ROBOT_NAME);
    kn_usar_w_key(&w, "Dimensions");
    kn_usar_w_vec3(&w, dims, 4, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "COG");
    kn_usar_w_vec3(&w, cog_s, 4, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "WheelRadius");
    kn_usar_w_num(&w, s->conv.wheel_radius_m, 4, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "WheelSeparation");
    kn_usar_w_num(&w, kn_world_track_separation(rp), 4, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "WheelBase");
    kn_usar_w_num(&w, 2 * rp->track_pulley_x, 4, KN_USAR_TRUNC);
    joint_groups(s, &w, true);
    send_fmt(c, kn_usar_w_end(&w), "GEO");
}
