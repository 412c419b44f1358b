/* The USARSim client logic (backend_usarsim.h): the connection (INIT,
 * readiness, the re-INIT at the last pose), the helpers its files share,
 * and the stats. The server's lines are read in backend_usarsim_lines.c,
 * commands written in backend_usarsim_cmd.c. Everything on the wire goes
 * through the codec (usarsim_codec.h), every unit and frame change
 * through convert.h. */
#include "backend_usarsim_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "log.h"

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

void kn_usarsim_count_malformed(struct kn_usarsim *u, enum kn_usar_result r, const char *what)
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

/* Each flipper from whichever source last reported it: a measurement
 * (STA, ASTA/MISSTA) while it is fresh or newer than any command, else
 * the last command target. KN_HAVE_FLIPPER only when all four are fresh
 * measurements: a STOP holds flippers at measured angles, and a stale
 * one (UDK's Kenaf reports none; a single STA may carry some) would
 * command them back to it. */
void kn_usarsim_resolve_flippers(struct kn_usarsim *u, uint64_t now)
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

void kn_usarsim_write_out(struct kn_usarsim *u, const char *buf, size_t len)
{
    if (len && u->io.write)
        u->io.write(u->io.ctx, buf, len);
}

/* Appends one formatted line to buf; a formatter error is counted and
 * the line left out. */
void kn_usarsim_append(struct kn_usarsim *u, char *buf, size_t *len, int n)
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
    u->ask_world = b->kind == KN_BACKEND_ENGINE && b->host[0];
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
    kn_backend_conv_from_cfg(KN_FRAME_Z_DOWN, cfg, &u->t);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const char *name = b->flipper[k].name[0] ? b->flipper[k].name : kn_usar_flipper_name(k);
        snprintf(u->joint[k], sizeof u->joint[k], "%s", name);
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
    if (u) {
        free(u->lbuf);
        kn_usarworld_reset(&u->world);
    }
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
    kn_usarsim_write_out(u, buf, (size_t)n);
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
    u->deadman_seen = 0;
    memset(u->joint_sent, 0, sizeof u->joint_sent);
    /* USARSim sends the NFO banner on accept and reads our socket after
     * that; INIT can go out at once, nothing is gained by waiting. */
    send_init(u);
}

void kn_usarsim_disconnected(struct kn_usarsim *u)
{
    u->connected = false;
    u->ready = false;
    u->world_pending = false;
    kn_usarworld_reset(&u->world); /* a part of an answer, cut off */
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
    num(o, "trial_lines", u->trial_lines);
    num(o, "trial_bad", u->trial_bad);
    num(o, "trial_cmds", u->trial_cmds);
    if (u->ask_world) {
        num(o, "world_asked", u->world_asked);
        num(o, "world_answers", u->world_answers);
        num(o, "world_bad", u->world_bad);
        num(o, "world_timeouts", u->world_timeouts);
    }
    num(o, "deadman_stops", u->deadman_stops);
    num(o, "init_refused", u->init_refused);
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
        (uint64_t)kn_usarsim_encoder_modulus(u, u->enc[KN_RIGHT].name[0] ? u->enc[KN_RIGHT].name
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
