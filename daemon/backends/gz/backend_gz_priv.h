/* The gz backend's own parts, shared by its files: the node's state
 * (struct gzb), its topics, and the calls one file makes into another.
 * backend_gz.c is the node (sockets, tick, ops, stats), backend_gz_disc.c
 * discovery and what the world has, backend_gz_msgs.c the ZeroMQ messages
 * and world control. Not for use outside daemon/backends/gz/. */
#ifndef KN_BACKEND_GZ_PRIV_H
#define KN_BACKEND_GZ_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "backend_gz.h"
#include "gzt_disc.h"
#include "gzt_wire.h"

#define TICK_MS 50
#define RESEND_MS 150 /* a new subscriber gets the latest set-point after this */
#define FRAME_MAX 65536
#define ARENA_BYTES (1u << 20)
#define LOOK_MS 1500 /* after the world came: does it have the model? */
/* A cmd_vel listener whose model sent no pose for this long is no model:
 * the world's pose publishers send every iteration or at 60 Hz, so the
 * first pose follows our subscription within one discovery heartbeat
 * (1 s); 2 s is that with a margin. */
#define POSE_MS 2000
#define SUBS_MAX 16 /* registered subscribers remembered per topic */

enum { T_CMD_VEL, T_CMD_POS0, T_CLOCK = T_CMD_POS0 + KN_NFLIPPERS, T_POSE, T_JOINTS, T_N };

struct gz_topic {
    char name[256];            /* /model/kenaf/cmd_vel */
    char fqn[KN_GZT_NAME_MAX]; /* @/partition@/model/kenaf/cmd_vel */
    const char *type_short;    /* "Twist" */
    bool publish;
    /* subscribed: the publisher we listen to */
    bool have_pub;
    char pub_addr[KN_GZT_NAME_MAX], pub_puuid[KN_GZT_UUID_MAX];
    bool pose_vector; /* T_POSE: Pose_V (else Pose) */
    /* published: the latest message, for subscribers that join later */
    uint8_t last[256];
    size_t last_len;
    uint64_t resend_at_ms;
    /* published: the process of each registered subscriber (NEW_CONNECTION
     * adds, END_CONNECTION and BYE remove; the oldest goes when full) */
    char sub_puuid[SUBS_MAX][KN_GZT_UUID_MAX];
    unsigned subscribers;
    uint64_t msgs, bad;
};

struct gzb {
    struct gzb *next_gz; /* the registry, for kn_gzsim_command */
    struct kn_link *link;
    uv_loop_t *loop;
    char robot[KN_CFG_NAME_LEN + 1];
    char model[64], world[128], partition[128], ip[64];
    char joint[KN_NFLIPPERS][64];
    int family; /* -1 until known */
    bool family_fixed;
    struct kn_conv_table conv;
    char puuid[40], nuuid[40], resp_id[40];
    unsigned handles;
    bool destroyed;

    void *zctx, *zpub, *zsub, *zreq, *zresp;
    char pub_addr[128], resp_addr[128];
    int udp[2]; /* message and service discovery */
    uv_poll_t udp_poll[2], sub_poll, resp_poll;
    uv_timer_t tick;
    uint64_t next_beat_ms;

    struct gz_topic topic[T_N];
    char ctl_fqn[KN_GZT_NAME_MAX];
    bool have_srv;
    char srv_addr[KN_GZT_NAME_MAX], srv_id[KN_GZT_UUID_MAX], srv_puuid[KN_GZT_UUID_MAX];
    char srv_req_type[KN_GZT_NAME_MAX], srv_rep_type[KN_GZT_NAME_MAX];
    char req_connected[KN_GZT_NAME_MAX];

    /* the world */
    char world_puuid[KN_GZT_UUID_MAX];
    uint64_t world_heard_ms;
    bool world_there;
    bool wanted; /* the link called start */
    bool live;   /* ready since live_ms */
    uint64_t live_ms;
    bool model_seen;      /* a pose of the model since the world came */
    uint64_t model_ms;    /* when its first pose came */
    uint64_t listener_ms; /* when the world's process took cmd_vel, 0: it has not */
    unsigned lacks;       /* KN_LINK_NO_* told to the link */
    bool warned_no_flippers;
    bool warned_family; /* this world's family mismatch was logged */
    uint64_t no_model_episodes, no_flippers_episodes, no_drive_episodes, poses_without_model;
    uint64_t family_mismatch;

    struct kn_gzsim_fb fb;
    struct kn_pbarena arena;
    void *arena_mem;
    uint8_t dbuf[FRAME_MAX];

    uint64_t disc_in, disc_bad, disc_version, disc_out, disc_send_errors;
    uint64_t frames_in, frames_bad, unknown_topic, type_mismatch;
    uint64_t cmds, world_arrivals, world_losses, ctl_sent, ctl_ok, ctl_refused, ctl_bad;
};

static inline uint64_t kn_gzsim_now_ms(struct gzb *b)
{
    return uv_now(b->loop);
}

/* backend_gz.c: a random UUID (RFC 4122 version 4) as text; the gz robot
 * of that name, or NULL. */
void kn_gzsim_uuid(char out[40]);
struct gzb *kn_gzsim_find(const char *robot);

/* backend_gz_disc.c: discovery datagrams out, the type name of a short
 * message name in the world's family, the world's arrival and loss, and
 * the checks of what it has (every tick). */
void kn_gzsim_send_simple(struct gzb *b, int which, uint32_t type, const char *sub_topic);
void kn_gzsim_advertise(struct gzb *b, struct gz_topic *t, uint32_t type);
void kn_gzsim_advertise_all(struct gzb *b);
void kn_gzsim_type_name(struct gzb *b, const char *short_name, char *out, size_t cap);
int kn_gzsim_topic_by_fqn(struct gzb *b, const char *fqn);
void kn_gzsim_world_lost(struct gzb *b, const char *why);
void kn_gzsim_check_ready(struct gzb *b);
void kn_gzsim_check_world(struct gzb *b);
void kn_gzsim_on_udp(uv_poll_t *p, int status, int events);

/* backend_gz_msgs.c: the SUB and ROUTER sockets drained, and a message
 * published on one of our topics (kept for subscribers that join later). */
void kn_gzsim_drain_sub(struct gzb *b);
void kn_gzsim_drain_resp(struct gzb *b);
void kn_gzsim_on_zmq(uv_poll_t *p, int status, int events);
void kn_gzsim_publish(struct gzb *b, struct gz_topic *t, const uint8_t *data, size_t n);

#endif
