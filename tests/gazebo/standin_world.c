/* gazebo_standin: the world, as gzserver's World, TrackedVehiclePlugin and
 * JointController show themselves on the transport (docs/gazebo.md).
 * Through its own node it registers the namespaces "<world>" and
 * "<world>/<model>", advertises ~/world_stats (5 Hz), ~/pose/info (at most
 * 60 Hz, only the model whose pose changed, then its links relative to
 * the model) and ~/<model>/tracks_speed (on every command and on reset),
 * all published only while someone subscribes, as World does; and it
 * subscribes to ~/<model>/cmd_vel_twist (Twist), ~/<model>/cmd_vel (Pose,
 * x and yaw), ~/<model>/joint_cmd (JointCmd position target) and
 * ~/world_control (pause, step, multi_step, reset). The model: the
 * plugin's twist-to-track formula with its clamps (convert.h), then a
 * skid-steer body whose yaw rate is steering_efficiency times the ideal
 * (R - L) / tracks_separation, and four flipper joints about +y slewing to
 * their targets. 1 ms physics steps at real time. Every command received
 * is logged with full precision ("twist", "posecmd", "joint", "control"),
 * and every pose published ("pose"). */
#include "standin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

#define TICK_MS 10
#define MAX_STEPS_PER_TICK 100
#define STATS_PERIOD_MS 200
#define POSE_PERIOD_MS 16
#define BODY_Z 0.1

static struct {
    uv_loop_t *loop;
    struct world_opts o;
    struct node *node;
    struct kn_conv_table plugin;
    char ns_world[128], ns_model[256];
    const char *ns_list[3];
    char t_stats[KN_GZC_TOPIC_MAX], t_poses[KN_GZC_TOPIC_MAX], t_tracks[KN_GZC_TOPIC_MAX];
    char t_twist[KN_GZC_TOPIC_MAX], t_pose_cmd[KN_GZC_TOPIC_MAX], t_joint[KN_GZC_TOPIC_MAX];
    char t_control[KN_GZC_TOPIC_MAX];
    char joint[4][160], link[4][160], base_link[160];
    int pub_stats, pub_poses, pub_tracks; /* pub_tracks -1: no plugin */
    bool ready, drive;
    uv_timer_t tick;
    uint64_t last_ms, start_ms, last_stats_ms, last_pose_ms, pause_wall_ms;
    /* simulation */
    int64_t sim_ns, step_ns;
    uint64_t iterations;
    bool paused;
    uint32_t step_inc;
    double x, y, yaw, belts[2];
    double flipper[4], target[4];
    bool published_once;
    double last_pub[7];
    struct kn_pbarena arena;
    uint8_t *arena_mem;
    uint8_t out[16384];
} W;

static const double flipper_xy[4][2] = {
    { 0.2, 0.2 }, { 0.2, -0.2 }, { -0.2, 0.2 }, { -0.2, -0.2 }
};

static void publish_tracks(void)
{
    if (W.pub_tracks < 0)
        return; /* no plugin, nobody reports track speeds */
    size_t n = kn_gzc_enc_vector2d(W.out, sizeof W.out, W.belts[0], W.belts[1]);
    node_publish(W.node, W.pub_tracks, W.out, n);
}

static void set_belts(const char *what, double lin, double ang)
{
    double b[2];
    kn_conv_twist_to_belts(&W.plugin, lin, ang, b);
    W.belts[0] = b[0];
    W.belts[1] = b[1];
    sl_log("%s %.17g %.17g belts %.17g %.17g", what, lin, ang, b[0], b[1]);
    publish_tracks();
}

/* ---- command topics ---------------------------------------------------------- */

static void on_twist(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    kn_pbarena_reset(&W.arena);
    Gazebo__Msgs__Twist *m = kn_gzc_dec_twist(&W.arena, p, n);
    if (!m) {
        sl_log("bad_twist");
        return;
    }
    set_belts("twist", m->linear->x, m->angular->z);
}

static void on_pose_cmd(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    kn_pbarena_reset(&W.arena);
    Gazebo__Msgs__Pose *m = kn_gzc_dec_pose(&W.arena, p, n);
    double lin, ang;
    if (!m) {
        sl_log("bad_posecmd");
        return;
    }
    double pos[3] = { m->position->x, m->position->y, m->position->z };
    double q[4] = { m->orientation->x, m->orientation->y, m->orientation->z, m->orientation->w };
    if (kn_conv_pose_cmd_to_twist(pos, q, &lin, &ang) != 0) {
        sl_log("bad_posecmd_quaternion");
        return;
    }
    set_belts("posecmd", lin, ang);
}

static void on_joint(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    kn_pbarena_reset(&W.arena);
    Gazebo__Msgs__JointCmd *m = kn_gzc_dec_joint_cmd(&W.arena, p, n);
    if (!m) {
        sl_log("bad_joint");
        return;
    }
    for (int k = 0; k < 4; k++)
        if (strcmp(m->name, W.joint[k]) == 0) {
            if (m->position && m->position->has_target && isfinite(m->position->target)) {
                W.target[k] = m->position->target;
                sl_log("joint %s %.17g", m->name, m->position->target);
            } else {
                sl_log("joint_no_position %s", m->name);
            }
            return;
        }
    sl_log("joint_unknown %s", m->name);
}

static void reset_time(void)
{
    W.sim_ns = 0;
    W.iterations = 0;
}

static void reset_model(void)
{
    W.x = W.y = W.yaw = 0;
    W.belts[0] = W.belts[1] = 0;
    memset(W.flipper, 0, sizeof W.flipper);
    memset(W.target, 0, sizeof W.target);
    publish_tracks(); /* the plugin's Reset publishes (0, 0) */
}

static void on_control(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    kn_pbarena_reset(&W.arena);
    Gazebo__Msgs__WorldControl *m = kn_gzc_dec_world_control(&W.arena, p, n);
    if (!m) {
        sl_log("bad_control");
        return;
    }
    struct kn_gzc_world_ctl c;
    kn_gzc_world_ctl_from_msg(m, &c);
    static const char *const resets[] = { "none", "all", "time", "model" };
    sl_log("control pause=%s step=%d multi_step=%u reset=%s",
           c.set_pause ? (c.pause ? "1" : "0") : "-", c.step, c.multi_step, resets[c.reset]);
    /* World::OnControl */
    if (c.set_pause)
        W.paused = c.pause;
    if (c.step)
        W.step_inc = 1;
    if (c.multi_step) {
        W.paused = true;
        W.step_inc = c.multi_step;
    }
    if (c.reset == KN_GZC_RESET_ALL) {
        reset_time();
        reset_model();
    } else if (c.reset == KN_GZC_RESET_TIME) {
        reset_time();
    } else if (c.reset == KN_GZC_RESET_MODEL) {
        reset_model();
    }
}

/* ---- publishing ------------------------------------------------------------- */

static void set_pose(Gazebo__Msgs__Pose *p, Gazebo__Msgs__Vector3d *v, Gazebo__Msgs__Quaternion *q,
                     const char *name, uint32_t id, const double pos[3], const double rpy[3])
{
    Gazebo__Msgs__Pose pi = GAZEBO__MSGS__POSE__INIT;
    Gazebo__Msgs__Vector3d vi = GAZEBO__MSGS__VECTOR3D__INIT;
    Gazebo__Msgs__Quaternion qi = GAZEBO__MSGS__QUATERNION__INIT;
    double quat[4];
    kn_conv_rpy_to_quat(rpy, quat);
    *p = pi;
    *v = vi;
    *q = qi;
    v->x = pos[0];
    v->y = pos[1];
    v->z = pos[2];
    q->x = quat[0];
    q->y = quat[1];
    q->z = quat[2];
    q->w = quat[3];
    p->name = (char *)name;
    p->has_id = 1;
    p->id = id;
    p->position = v;
    p->orientation = q;
}

static void publish_poses(uint64_t now)
{
    double cur[7] = { W.x, W.y, W.yaw, W.flipper[0], W.flipper[1], W.flipper[2], W.flipper[3] };
    if (W.published_once && memcmp(cur, W.last_pub, sizeof cur) == 0)
        return; /* World sends only models whose pose changed */
    if (!node_has_subscribers(W.node, W.pub_poses) || now - W.last_pose_ms < POSE_PERIOD_MS)
        return;
    Gazebo__Msgs__Pose poses[6];
    Gazebo__Msgs__Pose *ptr[6];
    Gazebo__Msgs__Vector3d vs[6];
    Gazebo__Msgs__Quaternion qs[6];
    Gazebo__Msgs__Time t = GAZEBO__MSGS__TIME__INIT;
    Gazebo__Msgs__PosesStamped m = GAZEBO__MSGS__POSES_STAMPED__INIT;
    struct kn_gzc_stamp st = kn_gzc_stamp_from_ns(W.sim_ns);
    t.sec = st.sec;
    t.nsec = st.nsec;
    double pos[3] = { W.x, W.y, BODY_Z }, rpy[3] = { 0, 0, W.yaw }, zero[3] = { 0, 0, 0 };
    set_pose(&poses[0], &vs[0], &qs[0], W.o.model, 1, pos, rpy);
    set_pose(&poses[1], &vs[1], &qs[1], W.base_link, 2, zero, zero);
    for (int k = 0; k < 4; k++) {
        double lp[3] = { flipper_xy[k][0], flipper_xy[k][1], 0 }, lr[3] = { 0, W.flipper[k], 0 };
        set_pose(&poses[2 + k], &vs[2 + k], &qs[2 + k], W.link[k], 3 + (uint32_t)k, lp, lr);
    }
    for (int i = 0; i < 6; i++)
        ptr[i] = &poses[i];
    m.time = &t;
    m.n_pose = 6;
    m.pose = ptr;
    size_t n = kn_gzc_encode_msg(W.out, sizeof W.out, &m.base);
    node_publish(W.node, W.pub_poses, W.out, n);
    memcpy(W.last_pub, cur, sizeof cur);
    W.published_once = true;
    W.last_pose_ms = now;
    sl_log("pose %.9f %.17g %.17g %.17g %.17g %.17g %.17g %.17g", (double)W.sim_ns / 1e9, W.x, W.y,
           W.yaw, W.flipper[0], W.flipper[1], W.flipper[2], W.flipper[3]);
}

static void set_time(Gazebo__Msgs__Time *t, int64_t ns)
{
    struct kn_gzc_stamp st = kn_gzc_stamp_from_ns(ns);
    t->sec = st.sec;
    t->nsec = st.nsec;
}

static void publish_stats(uint64_t now)
{
    if (now - W.last_stats_ms < STATS_PERIOD_MS || !node_has_subscribers(W.node, W.pub_stats))
        return;
    W.last_stats_ms = now;
    Gazebo__Msgs__Time sim = GAZEBO__MSGS__TIME__INIT, pause = GAZEBO__MSGS__TIME__INIT,
                       real = GAZEBO__MSGS__TIME__INIT;
    Gazebo__Msgs__WorldStatistics m = GAZEBO__MSGS__WORLD_STATISTICS__INIT;
    set_time(&sim, W.sim_ns);
    set_time(&pause, (int64_t)W.pause_wall_ms * 1000000);
    set_time(&real, (int64_t)(now - W.start_ms) * 1000000);
    m.sim_time = &sim;
    m.pause_time = &pause;
    m.real_time = &real;
    m.paused = W.paused;
    m.iterations = W.iterations;
    m.has_model_count = 1;
    m.model_count = 2;
    size_t n = kn_gzc_encode_msg(W.out, sizeof W.out, &m.base);
    node_publish(W.node, W.pub_stats, W.out, n);
}

/* ---- physics ------------------------------------------------------------------ */

static void step(void)
{
    double dt = W.o.step_s;
    double v = (W.belts[0] + W.belts[1]) / 2;
    double w = W.o.steering_efficiency * (W.belts[1] - W.belts[0]) / W.o.tracks_separation;
    W.x += v * cos(W.yaw) * dt;
    W.y += v * sin(W.yaw) * dt;
    W.yaw = kn_conv_wrap_pi(W.yaw + w * dt);
    for (int k = 0; k < 4; k++) {
        double d = W.target[k] - W.flipper[k], lim = W.o.flipper_rate * dt;
        W.flipper[k] += d > lim ? lim : d < -lim ? -lim : d;
    }
    W.sim_ns += W.step_ns;
    W.iterations++;
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
    uint64_t now = uv_now(W.loop);
    uint64_t elapsed = now - W.last_ms;
    W.last_ms = now;
    if (!W.ready)
        return;
    /* real time: as many steps as wall time passed, paused or stepping */
    uint64_t steps = (uint64_t)((double)elapsed / 1000.0 / W.o.step_s + 0.5);
    if (steps > MAX_STEPS_PER_TICK)
        steps = MAX_STEPS_PER_TICK;
    if (W.paused) {
        W.pause_wall_ms += elapsed;
        if (steps > W.step_inc)
            steps = W.step_inc;
        W.step_inc -= (uint32_t)steps;
    }
    for (uint64_t i = 0; i < steps; i++)
        step();
    publish_poses(now);
    publish_stats(now);
}

/* TrackedVehiclePlugin::Load: its track speeds out, its two command
 * topics in. */
static void load_drive(void)
{
    W.drive = true;
    W.pub_tracks = node_advertise(W.node, W.t_tracks, KN_GZC_TYPE_VECTOR2D);
    node_subscribe(W.node, W.t_twist, KN_GZC_TYPE_TWIST, on_twist, NULL);
    node_subscribe(W.node, W.t_pose_cmd, KN_GZC_TYPE_POSE, on_pose_cmd, NULL);
}

static void on_ready(void *ctx)
{
    (void)ctx;
    W.pub_stats = node_advertise(W.node, W.t_stats, KN_GZC_TYPE_WORLD_STATS);
    W.pub_poses = node_advertise(W.node, W.t_poses, KN_GZC_TYPE_POSES_STAMPED);
    W.pub_tracks = -1;
    if (!W.o.no_drive)
        load_drive();
    /* Gazebo 9 to 11's JointController listens on ignition-transport only:
     * without a bridge plugin nobody takes the Classic joint_cmd */
    if (!W.o.no_joint_cmd)
        node_subscribe(W.node, W.t_joint, KN_GZC_TYPE_JOINT_CMD, on_joint, NULL);
    node_subscribe(W.node, W.t_control, KN_GZC_TYPE_WORLD_CONTROL, on_control, NULL);
    W.ready = true;
    sl_log("world_ready %s %s%s", W.o.world, W.o.model, W.o.no_drive ? " no_drive" : "");
}

void world_load_drive(void)
{
    if (!W.ready || W.drive)
        return;
    load_drive();
    sl_log("drive_loaded");
}

static void topic(char *out, const char *ns, const char *name)
{
    if (kn_gzc_topic(out, KN_GZC_TOPIC_MAX, ns, name) != 0) {
        fprintf(stderr, "gazebo_standin: topic name too long\n");
        exit(2);
    }
}

void world_start(uv_loop_t *loop, int master_port, const struct world_opts *o)
{
    W.loop = loop;
    W.o = *o;
    W.step_ns = (int64_t)(o->step_s * 1e9 + 0.5);
    kn_conv_table_gazebo(&W.plugin);
    W.plugin.tracks_separation_m = o->tracks_separation;
    W.plugin.steering_efficiency = o->steering_efficiency;
    W.plugin.max_linear_speed_m_s = o->max_linear;
    W.plugin.max_angular_speed_rad_s = o->max_angular;
    W.arena_mem = malloc(1 << 20);
    kn_pbarena_init(&W.arena, W.arena_mem, W.arena_mem ? 1 << 20 : 0);
    snprintf(W.ns_world, sizeof W.ns_world, "%s", o->world);
    snprintf(W.ns_model, sizeof W.ns_model, "%s/%s", o->world, o->model);
    W.ns_list[0] = W.ns_world;
    W.ns_list[1] = W.ns_model;
    W.ns_list[2] = NULL;
    topic(W.t_stats, W.ns_world, "world_stats");
    topic(W.t_poses, W.ns_world, "pose/info");
    topic(W.t_control, W.ns_world, "world_control");
    topic(W.t_tracks, W.ns_model, "tracks_speed");
    topic(W.t_twist, W.ns_model, "cmd_vel_twist");
    topic(W.t_pose_cmd, W.ns_model, "cmd_vel");
    topic(W.t_joint, W.ns_model, "joint_cmd");
    snprintf(W.base_link, sizeof W.base_link, "%s::base_link", o->model);
    for (int k = 0; k < 4; k++) {
        const char *j = o->joints[k];
        size_t n = strlen(j);
        size_t stem = n > 6 && strcmp(j + n - 6, "_joint") == 0 ? n - 6 : n;
        snprintf(W.joint[k], sizeof W.joint[k], "%s::%s", o->model, j);
        if (o->links[k])
            snprintf(W.link[k], sizeof W.link[k], "%s::%s", o->model, o->links[k]);
        else
            snprintf(W.link[k], sizeof W.link[k], "%s::%.*s", o->model, (int)stem, j);
    }
    W.node = node_start(loop, master_port, W.ns_list, on_ready, NULL);
    if (!W.node) {
        fprintf(stderr, "gazebo_standin: the world cannot reach its master\n");
        exit(2);
    }
    uv_timer_init(loop, &W.tick);
    W.last_ms = W.start_ms = uv_now(loop);
    uv_timer_start(&W.tick, on_tick, TICK_MS, TICK_MS);
}
