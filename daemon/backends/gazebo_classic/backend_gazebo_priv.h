/* The gazebo backend's insides, shared by its files: backend_gazebo.c (the
 * master link, commands, stats), backend_gazebo_links.c (our data server
 * and the data links to publishers), backend_gazebo_ctl.c (the control
 * socket). One struct gzc per robot; every libuv handle it opens counts in
 * `handles` and the struct is freed when the last one has closed after
 * destroy. */
#ifndef KN_BACKEND_GAZEBO_PRIV_H
#define KN_BACKEND_GAZEBO_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "backend_gazebo.h"
#include "linebuf.h"

#define GZC_MASTER_FRAME_MAX (1024u * 1024u) /* publishers_init of a big world */
#define GZC_DATA_FRAME_MAX (1024u * 1024u)   /* ~/pose/info of a big world */
#define GZC_SUB_FRAME_MAX 4096u              /* the "sub" packet we accept */
#define GZC_ARENA_BYTES (4u * 1024u * 1024u) /* decoded messages; untouched pages cost nothing */
#define GZC_MAX_PUBLINKS 32                  /* subscribers connected to us */
#define GZC_MAX_SUBLINKS 32                  /* our links to publishers */
#define GZC_MAX_NAMESPACES 64
#define GZC_SUB_TIMEOUT_MS 5000          /* accepted link must say "sub" by then */
#define GZC_PUB_QUEUE_MAX (256u * 1024u) /* unsent bytes toward one subscriber */
#define GZC_RETRY_FIRST_MS 100
#define GZC_RETRY_MAX_MS 1000
#define GZC_TICK_MS 100
#define GZC_HOST_LEN 256
#define GZC_MSG_MAX 512 /* one command frame */
#define GZC_MAX_CTL_CLIENTS 8
/* After going live: time for the model plugin's subscriptions and the
 * latched poses to arrive before the world is judged (model, joint_cmd). */
#define GZC_LOOK_MS 2000

enum gzc_topic_id {
    GZC_T_CMD = 0, /* we publish: cmd_vel_twist or cmd_vel */
    GZC_T_JOINT,   /* we publish: joint_cmd */
    GZC_T_CONTROL, /* we publish: world_control */
    GZC_T_STATS,   /* we subscribe: world_stats */
    GZC_T_POSES,   /* we subscribe: pose/info */
    GZC_T_TRACKS,  /* we subscribe: <model>/tracks_speed */
    GZC_NTOPICS
};

struct gzc_topic {
    char name[KN_GZC_TOPIC_MAX];
    const char *type;
    bool publish;
    bool latching; /* asked for on our subscriptions */
    uint64_t frames_in, frames_out, bad;
};

struct gzc;

/* A data link to a remote publisher of a topic we subscribe to. */
struct gzc_sublink {
    struct gzc *b;
    struct gzc_sublink *next;
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_getaddrinfo_t gai;
    int topic;
    char host[GZC_HOST_LEN];
    uint16_t port;
    unsigned gen;  /* master connection it belongs to */
    bool tcp_open; /* tcp handle initialized, not closed yet */
    bool gai_busy;
    bool connected;
    bool dead;            /* publisher gone: free once closed */
    uint64_t retry_at_ms; /* 0: no retry scheduled */
    unsigned retry_ms;
    struct kn_gzc_framer fr;
    uint8_t *buf;
};

/* A remote subscriber connected to our data server. */
struct gzc_publink {
    struct gzc *b;
    struct gzc_publink *next;
    uv_tcp_t tcp;
    int topic; /* -1 until its "sub" arrived */
    char peer[64];
    char sub_host[GZC_HOST_LEN];
    uint32_t sub_port;
    uint64_t accepted_ms;
    bool closing;
    bool resend; /* a message was dropped: send the latest when drained */
    struct kn_gzc_framer fr;
    uint8_t buf[GZC_SUB_FRAME_MAX];
};

struct gzc_ctl_client {
    struct gzc *b;
    struct gzc_ctl_client *next;
    uv_pipe_t pipe;
    bool closing;
    struct kn_linebuf lb;
    char lbuf[256];
};

struct gzc {
    struct kn_link *link;
    uv_loop_t *loop;
    char robot[KN_CFG_NAME_LEN + 1];
    char model[64];
    bool twist_cmd;
    char joint[KN_NFLIPPERS][160]; /* scoped JointCmd names */
    struct kn_conv_table conv;
    unsigned handles; /* open libuv handles */
    bool destroyed;

    /* the master connection */
    unsigned gen; /* bumped on every (re)connection */
    bool connected;
    int init_frames;   /* of the three the master sends first */
    bool live;         /* advertised and subscribed */
    bool failed;       /* kn_link_fail called: ignore input until reset */
    uint64_t live_ms;  /* when it went live */
    unsigned lacks;    /* KN_LINK_NO_* found on this connection */
    uint64_t model_ms; /* when the model's first pose was noticed, 0: none yet */
    bool warned_no_model, warned_no_joint_sub;
    char version[64];
    char namespaces[GZC_MAX_NAMESPACES][128];
    int n_namespaces;
    char world[128];
    struct kn_gzc_framer mfr;
    uint8_t *mbuf;
    struct kn_pbarena arena;
    void *arena_mem;
    struct gzc_topic topic[GZC_NTOPICS];

    /* our data server */
    uv_tcp_t *server; /* NULL when not listening */
    char adv_host[GZC_HOST_LEN];
    uint16_t adv_port;
    struct gzc_publink *publinks;
    struct gzc_sublink *sublinks;
    unsigned n_publinks, n_sublinks;
    uv_timer_t tick;
    uint8_t rbuf[65536]; /* every data link reads into this, in turn */

    /* latest set-points, replayed to a subscriber that connects later */
    uint8_t cmd_frame[GZC_MSG_MAX];
    size_t cmd_len;
    uint8_t joint_frame[KN_NFLIPPERS][GZC_MSG_MAX];
    size_t joint_len[KN_NFLIPPERS];

    struct kn_gazebo_fb fb;

    /* control socket */
    uv_pipe_t *ctl;
    char ctl_path[108];
    struct gzc_ctl_client *ctl_clients;
    unsigned n_ctl_clients;

    /* counters */
    uint64_t master_frames, master_bad_frames, master_bad_packets, master_ignored;
    uint64_t pub_events, pub_type_mismatch, pub_rejected;
    uint64_t data_frames, data_bad_frames, data_bad_msgs, data_links_opened, data_link_failures;
    uint64_t subs_accepted, subs_refused, subs_bad, pub_sent, pub_dropped, pub_write_errors;
    uint64_t cmds, cmd_encode_errors, world_controls, ctl_commands;
    uint64_t cmds_scaled;   /* belts slowed to fit the plugin's limits */
    uint64_t joint_unheard; /* flipper targets published with no joint_cmd subscriber */
    uint64_t no_model_episodes, no_joint_sub_episodes, no_drive_episodes;
    double last_scale; /* factor of the last command (1: unchanged) */
    uint64_t feedback_states;
    char last_error[128];
};

uint64_t kn_gazebo_now_ms(struct gzc *b);
void kn_gazebo_handle_closed(struct gzc *b); /* one handle fewer; frees after destroy */

/* backend_gazebo_links.c */
int kn_gazebo_server_open(struct gzc *b, char *err, size_t errlen);
void kn_gazebo_links_close_all(struct gzc *b); /* server, publinks, sublinks */
void kn_gazebo_publisher_seen(struct gzc *b, const Gazebo__Msgs__Publish *p);
void kn_gazebo_publisher_gone(struct gzc *b, const char *topic, const char *host, uint32_t port);
void kn_gazebo_subscriber_gone(struct gzc *b, const char *topic, const char *host, uint32_t port);
/* Sends a frame to every subscriber of topic; returns how many got it. */
int kn_gazebo_publish(struct gzc *b, int topic, const uint8_t *frame, size_t len);
void kn_gazebo_links_tick(struct gzc *b);
unsigned kn_gazebo_subscribers(const struct gzc *b, int topic);
unsigned kn_gazebo_publishers(const struct gzc *b, int topic);

/* backend_gazebo_ctl.c */
void kn_gazebo_ctl_open(struct gzc *b);
void kn_gazebo_ctl_close(struct gzc *b);

/* backend_gazebo.c: a decoded data message arrived on topic. */
void kn_gazebo_on_data(struct gzc *b, int topic, const uint8_t *p, size_t n);

#endif
