/* The "gazebo" backend: kenaf-simd as a Gazebo Classic transport client
 * (docs/gazebo.md). The generic link (link.c) holds
 * the connection to the master (port 11345, GAZEBO_MASTER_URI); this file
 * speaks the master protocol on it: read the three init frames, pick the
 * world from the namespaces, then advertise our command topics and
 * subscribe to the feedback topics. The master answers with the
 * publishers' addresses; backend_gazebo_links.c opens the data links to
 * them and serves the subscribers that connect to us. Commands become
 * Twist (or the older Pose) for the tracked-vehicle plugin and JointCmd
 * position targets for the flipper joints; feedback becomes the neutral
 * state in backend_gazebo_state.c. */
#include "backend_gazebo_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krp.h"
#include "log.h"

#define DEFAULT_HOST "127.0.0.1"

uint64_t kn_gazebo_now_ms(struct gzc *b)
{
    return uv_now(b->loop);
}

static struct kn_gzc_stamp wall_stamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct kn_gzc_stamp s = { (int32_t)ts.tv_sec, (int32_t)ts.tv_nsec };
    return s;
}

static void free_gzc(struct gzc *b)
{
    free(b->mbuf);
    free(b->arena_mem);
    free(b);
}

void kn_gazebo_handle_closed(struct gzc *b)
{
    b->handles--;
    if (b->destroyed && b->handles == 0)
        free_gzc(b);
}

static void on_tick_closed(uv_handle_t *h)
{
    kn_gazebo_handle_closed(h->data);
}

/* Whether the world has what the robot needs, GZC_LOOK_MS after going
 * live and on every tick after that: the model (a pose of it, or the
 * tracked-vehicle plugin subscribed to our command topic: World publishes
 * a pose only when it changes, so a model at rest since before we came
 * may show itself by its plugin alone), a drive (that plugin's
 * subscription, GZC_LOOK_MS after the model's first pose: a model without
 * it shows a robot nobody can move) and someone acting on joint_cmd (stock
 * Gazebo 9 to 11 has no one without a bridge plugin). What is missing goes
 * to the link, which makes the robot answer ERROR instead of accepting
 * commands into the void; warned, counted, logged again when it changes. */
static void check_world(struct gzc *b)
{
    if (!b->live || b->failed)
        return;
    uint64_t now = kn_gazebo_now_ms(b);
    if (b->fb.model_seen && !b->model_ms)
        b->model_ms = now;
    if (now - b->live_ms < GZC_LOOK_MS)
        return;
    unsigned lacks = 0, drive = kn_gazebo_subscribers(b, GZC_T_CMD);
    if (!b->fb.model_seen && drive == 0)
        lacks |= KN_LINK_NO_MODEL;
    /* a drive already missing stays missing while a late pose's grace runs */
    if (b->fb.model_seen && drive == 0 &&
        (now - b->model_ms >= GZC_LOOK_MS || (b->lacks & KN_LINK_NO_DRIVE)))
        lacks |= KN_LINK_NO_DRIVE;
    if (kn_gazebo_subscribers(b, GZC_T_JOINT) == 0)
        lacks |= KN_LINK_NO_FLIPPERS;
    unsigned came = lacks & ~b->lacks, went = b->lacks & ~lacks;
    b->lacks = lacks;
    kn_link_lacks(b->link, lacks);
    if (came & KN_LINK_NO_MODEL) {
        b->no_model_episodes++;
        char also[96] = "";
        if (b->fb.other_model[0])
            snprintf(also, sizeof also, " (it has \"%s\", for one)", b->fb.other_model);
        snprintf(b->last_error, sizeof b->last_error, "model \"%.40s\" is not in world \"%.40s\"",
                 b->model, b->world);
        if (!b->warned_no_model)
            kn_warn("robot %s: model \"%s\" is not in world \"%s\"%s: no pose of it on %s and "
                    "nobody subscribes to %s; STATUS is STALE and commands are answered ERROR "
                    "NO_MODEL until it appears (check gazebo.model)",
                    b->robot, b->model, b->world, also, b->topic[GZC_T_POSES].name,
                    b->topic[GZC_T_CMD].name);
        else
            kn_info("robot %s: model \"%s\" is not in world \"%s\" again", b->robot, b->model,
                    b->world);
        b->warned_no_model = true;
    }
    if (went & KN_LINK_NO_MODEL)
        kn_info("robot %s: model \"%s\" is in world \"%s\" now", b->robot, b->model, b->world);
    if (came & KN_LINK_NO_DRIVE) {
        b->no_drive_episodes++;
        kn_warn("robot %s: nobody subscribes to %s: model \"%s\" is in world \"%s\" but nothing "
                "drives its belts (no tracked-vehicle plugin, docs/gazebo.md); STATUS is STALE "
                "and CRAWLER is answered ERROR NO_ACTUATOR until one subscribes (counted in the "
                "stats)",
                b->robot, b->topic[GZC_T_CMD].name, b->model, b->world);
    }
    if (went & KN_LINK_NO_DRIVE)
        kn_info("robot %s: %s has a subscriber now: the belts are driven", b->robot,
                b->topic[GZC_T_CMD].name);
    if (came & KN_LINK_NO_FLIPPERS) {
        b->no_joint_sub_episodes++;
        if (!b->warned_no_joint_sub && !(lacks & KN_LINK_NO_MODEL))
            kn_warn("robot %s: nobody subscribes to %s: nothing in the world acts on flipper "
                    "targets (Gazebo 9 to 11 needs a plugin that does, docs/gazebo.md); FLIPPER is "
                    "answered ERROR NO_ACTUATOR (counted in the stats)",
                    b->robot, b->topic[GZC_T_JOINT].name);
        else
            kn_debug("robot %s: no subscriber on %s", b->robot, b->topic[GZC_T_JOINT].name);
        b->warned_no_joint_sub = b->warned_no_joint_sub || !(lacks & KN_LINK_NO_MODEL);
    }
    if (went & KN_LINK_NO_FLIPPERS)
        kn_info("robot %s: %s has a subscriber now: flipper targets are acted on", b->robot,
                b->topic[GZC_T_JOINT].name);
}

static void on_tick(uv_timer_t *t)
{
    struct gzc *b = t->data;
    if (b->destroyed)
        return;
    kn_gazebo_links_tick(b);
    check_world(b);
}

/* ---- create / destroy ------------------------------------------------------ */

/* GAZEBO_MASTER_URI applies when the config left the address at its
 * default; an address written in the config wins. */
static void master_from_env(struct gzc *b, const struct kn_cfg_robot *cfg)
{
    const char *uri = getenv("GAZEBO_MASTER_URI");
    if (!uri || !uri[0])
        return;
    if (strcmp(cfg->backend.host, DEFAULT_HOST) != 0 || cfg->backend.port != KN_GZC_MASTER_PORT) {
        kn_debug("robot %s: GAZEBO_MASTER_URI ignored: the config names the master", b->robot);
        return;
    }
    char host[GZC_HOST_LEN], why[300];
    uint16_t port;
    if (kn_gzc_parse_master_uri(uri, host, sizeof host, &port, why, sizeof why) != 0) {
        kn_warn("robot %s: GAZEBO_MASTER_URI: %s (expected http://HOST:PORT); using %s:%u",
                b->robot, why, cfg->backend.host, cfg->backend.port);
        return;
    }
    kn_link_set_address(b->link, host, port);
    kn_info("robot %s: Gazebo master from GAZEBO_MASTER_URI: %s:%u", b->robot, host, port);
}

static void *gzc_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct gzc *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    b->loop = kn_link_loop(link);
    snprintf(b->robot, sizeof b->robot, "%s", cfg->name);
    snprintf(b->model, sizeof b->model, "%s", cfg->backend.model);
    b->twist_cmd = cfg->backend.twist_cmd;

    kn_backend_conv_from_cfg(KN_FRAME_Z_UP, cfg, &b->conv);
    b->last_scale = 1.0;
    const char *joints[KN_NFLIPPERS], *links[KN_NFLIPPERS];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        links[k] = cfg->backend.flipper[k].link;
        joints[k] = cfg->backend.flipper[k].name;
        if (kn_gazebo_scoped_joint(b->joint[k], sizeof b->joint[k], b->model, joints[k]) != 0) {
            kn_err("robot %s: flipper joint name \"%s::%s\" too long", b->robot, b->model,
                   joints[k]);
            free(b);
            return NULL;
        }
    }
    char why[128];
    if (kn_conv_table_check(&b->conv, why, sizeof why) != 0) {
        kn_err("robot %s: gazebo backend: %s", b->robot, why);
        free(b);
        return NULL;
    }
    kn_gazebo_fb_init(&b->fb, &b->conv, b->model, joints, links);

    b->mbuf = malloc(GZC_MASTER_FRAME_MAX);
    b->arena_mem = malloc(GZC_ARENA_BYTES);
    if (!b->mbuf || !b->arena_mem) {
        free_gzc(b);
        return NULL;
    }
    kn_gzc_framer_init(&b->mfr, b->mbuf, GZC_MASTER_FRAME_MAX);
    kn_pbarena_init(&b->arena, b->arena_mem, GZC_ARENA_BYTES);
    master_from_env(b, cfg);

    uv_timer_init(b->loop, &b->tick);
    b->tick.data = b;
    b->handles++;
    uv_timer_start(&b->tick, on_tick, GZC_TICK_MS, GZC_TICK_MS);
    kn_gazebo_ctl_open(b);
    return b;
}

static void gzc_destroy(void *be)
{
    struct gzc *b = be;
    b->destroyed = true;
    b->connected = false;
    b->live = false;
    kn_gazebo_links_close_all(b);
    kn_gazebo_ctl_close(b);
    uv_close((uv_handle_t *)&b->tick, on_tick_closed);
}

/* ---- the master connection -------------------------------------------------- */

static void gzc_start(void *be)
{
    struct gzc *b = be;
    b->gen++;
    b->connected = true;
    b->init_frames = 0;
    b->live = false;
    b->failed = false;
    b->lacks = 0;
    b->model_ms = 0;
    b->version[0] = '\0';
    b->n_namespaces = 0;
    b->world[0] = '\0';
    kn_gzc_framer_reset(&b->mfr);
    kn_gazebo_fb_restart(&b->fb);
    /* the master speaks first (three init frames); nothing to send yet */
}

static void gzc_stop(void *be)
{
    struct gzc *b = be;
    b->connected = false;
    b->live = false;
    b->lacks = 0; /* the link forgets them with the connection */
    kn_gazebo_links_close_all(b);
}

static void fail(struct gzc *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct gzc *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
    va_end(ap);
    b->failed = true;
    kn_link_fail(b->link, b->last_error);
}

static void add_namespace(struct gzc *b, const char *ns)
{
    if (!ns[0] || strlen(ns) >= sizeof b->namespaces[0])
        return;
    for (int i = 0; i < b->n_namespaces; i++)
        if (strcmp(b->namespaces[i], ns) == 0)
            return;
    if (b->n_namespaces < GZC_MAX_NAMESPACES)
        snprintf(b->namespaces[b->n_namespaces++], sizeof b->namespaces[0], "%s", ns);
}

/* The world whose namespace holds our model's plugin ("world/model"), else
 * the first plain namespace: what a Gazebo node without a namespace picks. */
static bool choose_world(struct gzc *b)
{
    size_t ml = strlen(b->model);
    for (int i = 0; i < b->n_namespaces; i++) {
        const char *ns = b->namespaces[i];
        size_t n = strlen(ns);
        if (n > ml + 1 && ns[n - ml - 1] == '/' && strcmp(ns + n - ml, b->model) == 0 &&
            memchr(ns, '/', n - ml - 1) == NULL) {
            snprintf(b->world, sizeof b->world, "%.*s", (int)(n - ml - 1), ns);
            return true;
        }
    }
    for (int i = 0; i < b->n_namespaces; i++)
        if (!strchr(b->namespaces[i], '/')) {
            snprintf(b->world, sizeof b->world, "%s", b->namespaces[i]);
            return true;
        }
    return false;
}

static int set_topics(struct gzc *b)
{
    char wm[256];
    int w = snprintf(wm, sizeof wm, "%s/%s", b->world, b->model);
    if (w < 0 || (size_t)w >= sizeof wm)
        return -1;
    static const struct {
        int id;
        bool per_model;
        const char *name;
        const char *type;
        bool publish, latching;
    } defs[GZC_NTOPICS] = {
        { GZC_T_CMD, true, NULL, NULL, true, false },
        { GZC_T_JOINT, true, "joint_cmd", KN_GZC_TYPE_JOINT_CMD, true, false },
        { GZC_T_CONTROL, false, "world_control", KN_GZC_TYPE_WORLD_CONTROL, true, false },
        { GZC_T_STATS, false, "world_stats", KN_GZC_TYPE_WORLD_STATS, false, false },
        /* latched: the last poses at once, even if the robot stands still */
        { GZC_T_POSES, false, "pose/info", KN_GZC_TYPE_POSES_STAMPED, false, true },
        { GZC_T_TRACKS, true, "tracks_speed", KN_GZC_TYPE_VECTOR2D, false, true },
    };
    for (int i = 0; i < GZC_NTOPICS; i++) {
        struct gzc_topic *t = &b->topic[defs[i].id];
        const char *name = defs[i].name, *type = defs[i].type;
        if (defs[i].id == GZC_T_CMD) {
            name = b->twist_cmd ? "cmd_vel_twist" : "cmd_vel";
            type = b->twist_cmd ? KN_GZC_TYPE_TWIST : KN_GZC_TYPE_POSE;
        }
        if (kn_gzc_topic(t->name, sizeof t->name, defs[i].per_model ? wm : b->world, name) != 0)
            return -1;
        t->type = type;
        t->publish = defs[i].publish;
        t->latching = defs[i].latching;
    }
    return 0;
}

static void send_packet(struct gzc *b, const uint8_t *buf, size_t n)
{
    if (n)
        kn_link_write(b->link, buf, n);
}

static void try_go_live(struct gzc *b)
{
    if (b->live || b->init_frames < 3 || !b->connected)
        return;
    if (!choose_world(b)) {
        kn_debug("robot %s: the Gazebo master knows no world yet; waiting", b->robot);
        return;
    }
    if (set_topics(b) != 0) {
        fail(b, "topic names for world \"%s\" and model \"%s\" are too long", b->world, b->model);
        return;
    }
    char err[160];
    if (kn_gazebo_server_open(b, err, sizeof err) != 0) {
        fail(b, "%s", err);
        return;
    }
    uint8_t buf[1024];
    struct kn_gzc_stamp st = wall_stamp();
    for (int i = 0; i < GZC_NTOPICS; i++) {
        const struct gzc_topic *t = &b->topic[i];
        size_t n = t->publish
                       ? kn_gzc_enc_publish(buf, sizeof buf, st, KN_GZC_PKT_ADVERTISE, t->name,
                                            t->type, b->adv_host, b->adv_port)
                       : kn_gzc_enc_subscribe(buf, sizeof buf, st, KN_GZC_PKT_SUBSCRIBE, t->name,
                                              b->adv_host, b->adv_port, t->type, t->latching);
        send_packet(b, buf, n);
    }
    b->live = true;
    b->live_ms = kn_gazebo_now_ms(b);
    kn_info("robot %s: %s, world \"%s\", model \"%s\": publishing %s and %s, data server %s:%u",
            b->robot, b->version[0] ? b->version : "Gazebo master", b->world, b->model,
            b->topic[GZC_T_CMD].name, b->topic[GZC_T_JOINT].name, b->adv_host, b->adv_port);
    kn_link_ready(b->link);
}

static const char *const init_types[3] = { KN_GZC_PKT_VERSION_INIT, KN_GZC_PKT_NAMESPACES_INIT,
                                           KN_GZC_PKT_PUBLISHERS_INIT };

static void on_init_frame(struct gzc *b, const struct kn_gzc_packet *pk)
{
    const char *want = init_types[b->init_frames];
    if (strcmp(pk->type, want) != 0) {
        fail(b, "expected \"%s\" from the master, got \"%.40s\" (not a Gazebo master?)", want,
             pk->type);
        return;
    }
    bool ok = true;
    if (b->init_frames == 0) {
        Gazebo__Msgs__GzString *v = kn_gzc_dec_string(&b->arena, pk->data, pk->len);
        if ((ok = v != NULL))
            snprintf(b->version, sizeof b->version, "%s", v->data);
    } else if (b->init_frames == 1) {
        Gazebo__Msgs__GzStringV *v = kn_gzc_dec_strings(&b->arena, pk->data, pk->len);
        if ((ok = v != NULL))
            for (size_t i = 0; i < v->n_data; i++)
                add_namespace(b, v->data[i]);
    } else {
        ok = kn_gzc_dec_publishers(&b->arena, pk->data, pk->len) != NULL;
    }
    if (!ok) {
        b->master_bad_packets++;
        fail(b, "malformed \"%s\" from the master", want);
        return;
    }
    b->init_frames++;
    try_go_live(b);
}

static void on_packet(struct gzc *b, const struct kn_gzc_packet *pk)
{
    const char *t = pk->type;
    if (b->init_frames < 3) {
        on_init_frame(b, pk);
        return;
    }
    if (strcmp(t, KN_GZC_PKT_PUBLISHER_SUBSCRIBE) == 0 ||
        strcmp(t, KN_GZC_PKT_PUBLISHER_ADVERTISE) == 0 ||
        strcmp(t, KN_GZC_PKT_PUBLISHER_UPDATE) == 0 || strcmp(t, KN_GZC_PKT_UNADVERTISE) == 0) {
        Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&b->arena, pk->data, pk->len);
        if (!p) {
            b->master_bad_packets++;
            return;
        }
        b->pub_events++;
        if (strcmp(t, KN_GZC_PKT_UNADVERTISE) == 0)
            kn_gazebo_publisher_gone(b, p->topic, p->host, p->port);
        else
            kn_gazebo_publisher_seen(b, p);
    } else if (strcmp(t, KN_GZC_PKT_UNSUBSCRIBE) == 0) {
        Gazebo__Msgs__Subscribe *s = kn_gzc_dec_subscribe(&b->arena, pk->data, pk->len);
        if (!s) {
            b->master_bad_packets++;
            return;
        }
        kn_gazebo_subscriber_gone(b, s->topic, s->host, s->port);
    } else if (strcmp(t, KN_GZC_PKT_NAMESPACE_ADD) == 0) {
        Gazebo__Msgs__GzString *s = kn_gzc_dec_string(&b->arena, pk->data, pk->len);
        if (!s) {
            b->master_bad_packets++;
            return;
        }
        add_namespace(b, s->data);
        try_go_live(b);
    } else {
        /* publisher_add/_del (bookkeeping for topic lists) and anything newer */
        b->master_ignored++;
    }
}

static bool on_master_frame(void *ctx, const uint8_t *p, size_t n)
{
    struct gzc *b = ctx;
    unsigned gen = b->gen;
    b->master_frames++;
    kn_pbarena_reset(&b->arena);
    struct kn_gzc_packet pk;
    if (kn_gzc_dec_packet(&b->arena, p, n, &pk) != 0) {
        b->master_bad_packets++;
        if (b->master_bad_packets == 1)
            kn_warn("robot %s: a frame from the Gazebo master is not a Packet; skipped "
                    "(further ones are only counted)",
                    b->robot);
        if (b->init_frames < 3)
            fail(b, "the Gazebo master's greeting is not a Packet");
        return b->connected && b->gen == gen && !b->failed;
    }
    on_packet(b, &pk);
    /* kn_link_ready may have re-applied set-points, which cannot drop the
     * link; still, stop if the connection went meanwhile. */
    return b->connected && b->gen == gen && !b->destroyed && !b->failed;
}

static void gzc_input(void *be, const char *data, size_t len)
{
    struct gzc *b = be;
    if (b->mfr.err || b->failed)
        return; /* the link is being reset */
    kn_gzc_framer_feed(&b->mfr, (const uint8_t *)data, len, on_master_frame, b);
    if (b->mfr.err) {
        b->master_bad_frames++;
        /* the framer stays stopped (ignores input) until gzc_start resets it */
        fail(b, "bad frame from the Gazebo master: %s", kn_gzc_frame_strerror(b->mfr.err));
    }
}

/* ---- commands ------------------------------------------------------------ */

static void gzc_send(void *be, const struct kn_command *cmd, bool reapply)
{
    struct gzc *b = be;
    (void)reapply;
    b->cmds++;
    double belts[2], lin, ang;
    b->last_scale = kn_conv_belts_fit_plugin(&b->conv, cmd->belt_speed_m_s, belts);
    if (b->last_scale < 1.0) {
        if (b->cmds_scaled++ == 0)
            kn_warn("robot %s: belts %.3f/%.3f m/s exceed the plugin's limits (%g m/s, %g rad/s): "
                    "sent slower on the same path (x%.3f); set gazebo.max_linear_speed_m_s and "
                    "max_angular_speed_rad_s to the model's values (counted in the stats)",
                    b->robot, cmd->belt_speed_m_s[0], cmd->belt_speed_m_s[1],
                    b->conv.max_linear_speed_m_s, b->conv.max_angular_speed_rad_s, b->last_scale);
        else
            kn_debug("robot %s: belts scaled x%.3f to the plugin's limits", b->robot,
                     b->last_scale);
    }
    kn_conv_belts_to_twist(&b->conv, belts, &lin, &ang);
    size_t n;
    if (b->twist_cmd) {
        n = kn_gzc_enc_twist(b->cmd_frame, sizeof b->cmd_frame, lin, ang);
    } else {
        double pos[3], q[4];
        kn_conv_twist_to_pose_cmd(lin, ang, pos, q);
        n = kn_gzc_enc_pose(b->cmd_frame, sizeof b->cmd_frame, NULL, pos, q);
    }
    if (n == 0)
        b->cmd_encode_errors++;
    b->cmd_len = n;
    if (n)
        kn_gazebo_publish(b, GZC_T_CMD, b->cmd_frame, n);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(cmd->flipper_mask & (1u << k)))
            continue;
        double target = kn_conv_flipper_to_joint(&b->conv, k, cmd->flipper_rad[k]);
        n = kn_gzc_enc_joint_cmd(b->joint_frame[k], sizeof b->joint_frame[k], b->joint[k], target);
        if (n == 0)
            b->cmd_encode_errors++;
        b->joint_len[k] = n;
        if (n && kn_gazebo_publish(b, GZC_T_JOINT, b->joint_frame[k], n) == 0)
            b->joint_unheard++;
    }
}

/* ---- feedback --------------------------------------------------------------- */

void kn_gazebo_on_data(struct gzc *b, int topic, const uint8_t *p, size_t n)
{
    struct gzc_topic *t = &b->topic[topic];
    bool changed = false;
    kn_pbarena_reset(&b->arena);
    t->frames_in++;
    b->data_frames++;
    switch (topic) {
    case GZC_T_STATS: {
        Gazebo__Msgs__WorldStatistics *m = kn_gzc_dec_world_stats(&b->arena, p, n);
        if (m)
            changed = kn_gazebo_fb_world_stats(&b->fb, m);
        else
            goto bad;
        break;
    }
    case GZC_T_POSES: {
        Gazebo__Msgs__PosesStamped *m = kn_gzc_dec_poses(&b->arena, p, n);
        if (m)
            changed = kn_gazebo_fb_poses(&b->fb, m);
        else
            goto bad;
        break;
    }
    case GZC_T_TRACKS: {
        Gazebo__Msgs__Vector2d *m = kn_gzc_dec_vector2d(&b->arena, p, n);
        if (m)
            changed = kn_gazebo_fb_tracks(&b->fb, m);
        else
            goto bad;
        break;
    }
    default: goto bad;
    }
    if (changed && b->live) {
        b->feedback_states++;
        kn_link_state(b->link, &b->fb.st);
    }
    return;
bad:
    t->bad++;
    if (b->data_bad_msgs++ == 0)
        kn_warn("robot %s: a message on %s is not a %s; skipped (further ones are only "
                "counted)",
                b->robot, t->name, t->type);
}

/* ---- the public functions ---------------------------------------------------- */

int kn_gazebo_world_control(struct kn_link *l, const struct kn_gzc_world_ctl *c)
{
    struct gzc *b = kn_link_backend(l, &kn_gazebo_ops);
    if (!b || !b->live)
        return -1;
    uint8_t frame[64];
    size_t n = kn_gzc_enc_world_control(frame, sizeof frame, c);
    if (n == 0)
        return -1;
    b->world_controls++;
    return kn_gazebo_publish(b, GZC_T_CONTROL, frame, n);
}

bool kn_gazebo_world_status(struct kn_link *l, struct kn_gazebo_world_status *out)
{
    struct gzc *b = kn_link_backend(l, &kn_gazebo_ops);
    memset(out, 0, sizeof *out);
    if (!b || !b->fb.have_stats)
        return false;
    out->known = true;
    out->paused = b->fb.paused;
    out->iterations = b->fb.iterations;
    out->sim_time_s = b->fb.st.time_s;
    return true;
}

/* ---- stats -------------------------------------------------------------- */

static void gzc_stats(void *be, cJSON *o)
{
    struct gzc *b = be;
    cJSON_AddStringToObject(o, "version", b->version);
    cJSON_AddStringToObject(o, "world", b->world);
    cJSON_AddStringToObject(o, "model", b->model);
    cJSON_AddBoolToObject(o, "live", b->live);
    char a[GZC_HOST_LEN + 8];
    snprintf(a, sizeof a, "%s:%u", b->adv_host, b->adv_port);
    cJSON_AddStringToObject(o, "data_server", b->server ? a : "");

    cJSON *w = cJSON_AddObjectToObject(o, "world_stats");
    cJSON_AddBoolToObject(w, "known", b->fb.have_stats);
    cJSON_AddBoolToObject(w, "paused", b->fb.paused);
    cJSON_AddNumberToObject(w, "iterations", (double)b->fb.iterations);
    cJSON_AddNumberToObject(w, "sim_time_s", b->fb.st.time_s);
    cJSON_AddNumberToObject(w, "resets_seen", (double)b->fb.resets);

    cJSON *m = cJSON_AddObjectToObject(o, "master");
    cJSON_AddNumberToObject(m, "frames", (double)b->master_frames);
    cJSON_AddNumberToObject(m, "bad_frames", (double)b->master_bad_frames);
    cJSON_AddNumberToObject(m, "bad_packets", (double)b->master_bad_packets);
    cJSON_AddNumberToObject(m, "ignored", (double)b->master_ignored);
    cJSON_AddNumberToObject(m, "publisher_events", (double)b->pub_events);
    cJSON_AddNumberToObject(m, "type_mismatch", (double)b->pub_type_mismatch);
    cJSON_AddNumberToObject(m, "publishers_refused", (double)b->pub_rejected);
    cJSON *ns = cJSON_AddArrayToObject(m, "namespaces");
    for (int i = 0; i < b->n_namespaces; i++)
        cJSON_AddItemToArray(ns, cJSON_CreateString(b->namespaces[i]));

    cJSON *tp = cJSON_AddObjectToObject(o, "topics");
    static const char *const keys[GZC_NTOPICS] = { "cmd",         "joint_cmd", "world_control",
                                                   "world_stats", "pose_info", "tracks_speed" };
    for (int i = 0; i < GZC_NTOPICS; i++) {
        const struct gzc_topic *t = &b->topic[i];
        cJSON *x = cJSON_AddObjectToObject(tp, keys[i]);
        cJSON_AddStringToObject(x, "name", t->name);
        cJSON_AddStringToObject(x, "type", t->type ? t->type : "");
        if (t->publish) {
            cJSON_AddNumberToObject(x, "subscribers", kn_gazebo_subscribers(b, i));
            cJSON_AddNumberToObject(x, "frames_out", (double)t->frames_out);
        } else {
            cJSON_AddNumberToObject(x, "publishers", kn_gazebo_publishers(b, i));
            cJSON_AddNumberToObject(x, "frames_in", (double)t->frames_in);
            cJSON_AddNumberToObject(x, "bad", (double)t->bad);
        }
    }

    cJSON *d = cJSON_AddObjectToObject(o, "data");
    cJSON_AddNumberToObject(d, "frames", (double)b->data_frames);
    cJSON_AddNumberToObject(d, "bad_frames", (double)b->data_bad_frames);
    cJSON_AddNumberToObject(d, "bad_messages", (double)b->data_bad_msgs);
    cJSON_AddNumberToObject(d, "links_opened", (double)b->data_links_opened);
    cJSON_AddNumberToObject(d, "link_failures", (double)b->data_link_failures);
    cJSON_AddNumberToObject(d, "subscribers_accepted", (double)b->subs_accepted);
    cJSON_AddNumberToObject(d, "subscribers_refused", (double)b->subs_refused);
    cJSON_AddNumberToObject(d, "subscribers_bad", (double)b->subs_bad);
    cJSON_AddNumberToObject(d, "sent", (double)b->pub_sent);
    cJSON_AddNumberToObject(d, "dropped", (double)b->pub_dropped);
    cJSON_AddNumberToObject(d, "write_errors", (double)b->pub_write_errors);
    cJSON_AddNumberToObject(d, "arena_exhausted", (double)b->arena.exhausted);

    cJSON *c = cJSON_AddObjectToObject(o, "commands");
    cJSON_AddNumberToObject(c, "sent", (double)b->cmds);
    cJSON_AddNumberToObject(c, "encode_errors", (double)b->cmd_encode_errors);
    cJSON_AddNumberToObject(c, "scaled_to_plugin_limits", (double)b->cmds_scaled);
    cJSON_AddNumberToObject(c, "joint_cmd_unheard", (double)b->joint_unheard);
    cJSON_AddNumberToObject(c, "last_scale", b->last_scale);
    cJSON_AddNumberToObject(c, "world_control", (double)b->world_controls);
    cJSON_AddNumberToObject(c, "control_socket", (double)b->ctl_commands);

    cJSON *f = cJSON_AddObjectToObject(o, "feedback");
    cJSON_AddNumberToObject(f, "states", (double)b->feedback_states);
    cJSON_AddNumberToObject(f, "poses", (double)b->fb.pose_msgs);
    cJSON_AddNumberToObject(f, "poses_without_model", (double)b->fb.pose_without_model);
    cJSON_AddBoolToObject(f, "model_seen", b->fb.model_seen);
    cJSON_AddBoolToObject(f, "no_model", b->lacks & KN_LINK_NO_MODEL);
    cJSON_AddNumberToObject(f, "no_model_episodes", (double)b->no_model_episodes);
    cJSON_AddBoolToObject(f, "no_joint_cmd_subscriber", b->lacks & KN_LINK_NO_FLIPPERS);
    cJSON_AddNumberToObject(f, "no_joint_cmd_subscriber_episodes",
                            (double)b->no_joint_sub_episodes);
    cJSON_AddBoolToObject(f, "no_drive_subscriber", b->lacks & KN_LINK_NO_DRIVE);
    cJSON_AddNumberToObject(f, "no_drive_subscriber_episodes", (double)b->no_drive_episodes);
    cJSON_AddNumberToObject(f, "world_stats", (double)b->fb.stats_msgs);
    cJSON_AddNumberToObject(f, "tracks_speed", (double)b->fb.tracks_msgs);
    cJSON_AddNumberToObject(f, "bad_quaternion", (double)b->fb.bad_quaternion);
    cJSON_AddNumberToObject(f, "bad_numbers", (double)b->fb.bad_numbers);
    cJSON *fl = cJSON_AddArrayToObject(f, "flipper_links");
    for (int k = 0; k < KN_NFLIPPERS; k++)
        cJSON_AddItemToArray(fl, cJSON_CreateString((b->fb.flippers_seen & (1u << k))
                                                        ? "found"
                                                        : b->fb.flipper_link[k][0]));
    cJSON_AddStringToObject(o, "last_error", b->last_error);
}

const struct kn_backend_ops kn_gazebo_ops = {
    .name = "gazebo",
    .kind = KN_BACKEND_GAZEBO,
    .krp_id = KN_KRP_BACKEND_GAZEBO,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = KN_GZC_MASTER_PORT,
    .create = gzc_create,
    .destroy = gzc_destroy,
    .start = gzc_start,
    .stop = gzc_stop,
    .input = gzc_input,
    .send_command = gzc_send,
    .stats = gzc_stats,
};
