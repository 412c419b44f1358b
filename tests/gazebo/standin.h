/* gazebo_standin: a Gazebo Classic stand-in written from Gazebo Classic's
 * own transport, plugins and JointController (docs/gazebo.md): a master that tracks publishers and subscribers and
 * routes them as gazebo::Master does, and a world that, like gzserver's
 * transport node, connects to that master over TCP, runs its own data
 * server, publishes world_stats, pose/info and the tracked-vehicle
 * plugin's tracks_speed, and subscribes to the plugin's and the joint
 * controller's command topics and to world_control (a model without the
 * plugin, which may load later, leaves its topics alone). The parts:
 * standin_conn.c (framed TCP connections, the log), standin_master.c,
 * standin_node.c (a transport client), standin_world.c (the model),
 * standin_main.c (options, loop, signals). */
#ifndef KN_GZC_STANDIN_H
#define KN_GZC_STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "gzc_codec.h"

/* ---- the log (--log FILE): one line per event, CLOCK_MONOTONIC us first ---- */

void sl_open(const char *path);
void sl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t sl_mono_us(void);
struct kn_gzc_stamp sl_wall_stamp(void);

/* ---- framed TCP connections ------------------------------------------------ */

struct sconn;
typedef void (*sconn_frame_fn)(struct sconn *c, const uint8_t *p, size_t n);
typedef void (*sconn_event_fn)(struct sconn *c);
typedef void (*sconn_connect_fn)(struct sconn *c, int status);

struct sconn {
    uv_tcp_t tcp;
    uv_connect_t creq;
    struct kn_gzc_framer fr;
    uint8_t *buf;
    sconn_frame_fn on_frame; /* each complete frame */
    sconn_event_fn on_close; /* once, when the handle has closed; then freed */
    sconn_connect_fn on_connect;
    void *owner;
    void *user;
    int user_i;
    int id;
    bool closing;
    char peer[64];
    char local[64];
    int local_port;
    struct sconn *next;
};

/* A connection object with a frame cap; NULL when out of memory. */
struct sconn *sconn_new(uv_loop_t *loop, void *owner, size_t cap);
int sconn_accept(struct sconn *c, uv_stream_t *server);         /* and starts reading */
int sconn_connect(struct sconn *c, const char *host, int port); /* on_connect follows */
void sconn_write(struct sconn *c, const uint8_t *p, size_t n);
void sconn_close(struct sconn *c);

/* ---- the master ------------------------------------------------------------ */

struct master_opts {
    const char *version; /* sent in version_init */
};
/* Listens on 127.0.0.1:port (0: any); returns the port or -1. */
int master_start(uv_loop_t *loop, int port, const struct master_opts *o);
uint64_t master_bad_frames(void);

/* ---- a transport node (what a gzserver plugin or tool uses) ------------ */

struct node;
typedef void (*node_msg_fn)(void *ctx, const uint8_t *p, size_t n);
typedef void (*node_ready_fn)(void *ctx);

/* Connects to the master at 127.0.0.1:port; registers the namespaces
 * (NULL-terminated) once the master's three init frames arrived, then
 * calls ready. */
struct node *node_start(uv_loop_t *loop, int master_port, const char *const namespaces[],
                        node_ready_fn ready, void *ctx);
/* Returns the id for node_publish. The last message published is kept
 * for subscribers that ask for latching, as every Gazebo Publication does. */
int node_advertise(struct node *n, const char *topic, const char *type);
void node_subscribe(struct node *n, const char *topic, const char *type, node_msg_fn fn, void *ctx);
/* Publishes one framed bare message; returns the subscribers reached. */
int node_publish(struct node *n, int pub, const uint8_t *frame, size_t len);
bool node_has_subscribers(struct node *n, int pub);
uint64_t node_bad_subs(void);

/* ---- the world ------------------------------------------------------------- */

struct world_opts {
    const char *world;
    const char *model;
    const char *joints[4]; /* FL, FR, RL, RR joint names (unscoped) */
    const char *links[4];  /* their links; NULL: the joint name without "_joint" */
    double tracks_separation;
    double steering_efficiency;
    double max_linear;
    double max_angular;
    double step_s;       /* physics step */
    double flipper_rate; /* rad/s toward the target */
    bool no_joint_cmd;   /* nobody subscribes to joint_cmd (stock Gazebo 9 to 11) */
    bool no_drive;       /* the model without its tracked-vehicle plugin */
};
void world_start(uv_loop_t *loop, int master_port, const struct world_opts *o);
/* The tracked-vehicle plugin loads now (the model spawned again with it):
 * subscribes to the command topics, advertises tracks_speed. Once. */
void world_load_drive(void);

#endif
