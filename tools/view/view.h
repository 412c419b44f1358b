/* kenaf-view's running state, shared by its parts: the robots it watches
 * over KRP/1 (view_robot.c: one UDP socket and one watch.h observer per
 * robot), the browsers connected over WebSocket and the HTTP files
 * (view_ws.c, on libwebsockets), and the program around them (view.c:
 * the event loop, the counters). One thread, libwebsockets' own loop.
 *
 * Memory stays bounded whatever the browsers do: each robot keeps one
 * latest state message, one link message and one world message; a client
 * keeps only how far it has got with each (a slow client skips to the
 * newest state instead of queueing; the new states of all robots go out
 * together, one "states" message per KN_VIEW_BATCH_US at most), at most one message in flight and at
 * most KN_VIEW_MSG_MAX bytes of what it sent. */
#ifndef KN_VIEW_H
#define KN_VIEW_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libwebsockets.h>

#include "view_json.h"
#include "watch.h"

#define KN_VIEW_MAX_ROBOTS 32
/* States go to the pages in one message per batch, at most this often:
 * about a display frame, so a page applies every robot's news in one go
 * (32 robots at 50 Hz would be 1600 messages a second one by one). */
#define KN_VIEW_BATCH_US 16000
#define KN_VIEW_MSG_MAX (16 * 1024) /* largest message a page may send */
#define KN_VIEW_FRAG (16 * 1024)    /* a world message goes out in pieces this big */
/* A browser's socket send buffer (Linux doubles it for its bookkeeping).
 * Left to the kernel it grows to megabytes: seconds of old states queued
 * for a page that reads slowly, and a page that stopped reading is only
 * noticed after that much. 16 KiB (32 KiB as Linux counts it) is about
 * 90 states of about 350 bytes: under two seconds of one robot at 50 Hz,
 * a quarter second of eight. */
#define KN_VIEW_SNDBUF (16 * 1024)
#define KN_VIEW_MAX_CLIENTS 32 /* default --max-clients */
#define KN_VIEW_DEFAULT_LISTEN "127.0.0.1:8088"
#define KN_VIEW_DEFAULT_PORT 8088
#define KN_VIEW_NAME_LEN 64

struct kn_view_robot_opt {
    char name[KN_VIEW_NAME_LEN]; /* "" : the robot's own name (HELLO_ACK) */
    char host[256];
    uint16_t port;
};

struct kn_view_opts {
    char listen_host[256];
    uint16_t listen_port; /* 0: any free port */
    unsigned nrobots;
    struct kn_view_robot_opt robots[KN_VIEW_MAX_ROBOTS];
    char web_dir[PATH_MAX];
    char three_dir[PATH_MAX];
    unsigned max_clients;
    bool stats;        /* counters on stdout at exit */
    char cameras[256]; /* kenaf-cameras' HTTP base URL for the page's PTZ, "" none */
};

/* A message shared by the clients sending it (reference counted). */
struct kn_vblob {
    unsigned refs;
    size_t len;
    char data[];
};

struct kn_view;

struct kn_vrobot {
    struct kn_view *v;
    unsigned id;
    char name[KN_VIEW_NAME_LEN];
    bool named;                   /* named on the command line */
    char address[300];            /* as given: HOST:PORT */
    struct sockaddr_storage addr; /* the robot's KRP/1 address */
    socklen_t addrlen;
    int fd;          /* UDP, not connected (view_robot.c) */
    struct lws *wsi; /* fd adopted into the loop */
    bool adopted;    /* lws owns (and closes) fd */
    struct kn_watch *watch;
    char state[KN_VJSON_STATE_MAX];
    size_t state_len;
    uint64_t state_seq; /* 0: no state yet */
    char link[256];
    size_t link_len;
    uint64_t link_ver;
    struct kn_vblob *world; /* NULL: not known yet */
    uint64_t world_ver;
    char trial[KN_VJSON_TRIAL_MAX]; /* the last trial message, trial_ver > 0 */
    size_t trial_len;
    uint64_t trial_ver;
    uint64_t send_errors, recv_errors, foreign, world_invalid;
};

struct kn_vclient {
    struct kn_vclient *next, *prev;
    struct lws *wsi;
    uint64_t hello_ver;
    uint64_t link_ver[KN_VIEW_MAX_ROBOTS];
    uint64_t world_ver[KN_VIEW_MAX_ROBOTS];
    uint64_t trial_ver[KN_VIEW_MAX_ROBOTS];
    uint64_t state_seq[KN_VIEW_MAX_ROBOTS];
    struct kn_vblob *out; /* a world message going out in pieces */
    size_t out_off;
    char *in; /* the message being received */
    size_t in_len;
};

struct kn_view_stats {
    uint64_t http_requests, http_files, http_api, http_not_found, http_refused, http_bad_method;
    uint64_t ws_accepted, ws_refused_full, ws_refused_path, ws_refused_origin;
    uint64_t ws_closed_by_peer, ws_closed_by_server, ws_closed_abrupt;
    uint64_t msg_reports, msg_oversized, msg_binary, msg_bad_json, msg_bad_type;
    uint64_t frames_hello, frames_world, frames_link, frames_trial, frames_state, frames_states,
        states_skipped;
    uint64_t write_failed, sndbuf_failed;
};

struct kn_view {
    struct kn_view_opts o;
    struct lws_context *ctx;
    struct lws_vhost *vh;
    lws_sorted_usec_list_t tick;
    lws_sorted_usec_list_t batch; /* the next "states" message to the pages */
    bool batch_armed;
    int port; /* the port listened on */
    unsigned nrobots;
    struct kn_vrobot robots[KN_VIEW_MAX_ROBOTS];
    struct kn_vclient *clients;
    unsigned nclients;
    char *hello;
    size_t hello_len;
    uint64_t hello_ver;
    char *last_report; /* the newest report a page sent */
    struct kn_view_stats st;
    volatile sig_atomic_t *stop;
};

/* view.c */
uint64_t kn_view_now_ns(void);
int kn_view_hello_update(struct kn_view *v);  /* after a robot's name changed */
void kn_view_wake_clients(struct kn_view *v); /* something new to send */
/* robot has a new state (its state_seq already counts it): counts the one
 * it replaced as skipped for every client it was not sent to
 * (states_skipped), and wakes every client when the batch is due
 * (KN_VIEW_BATCH_US) */
void kn_view_new_state(struct kn_view *v, unsigned robot);
void kn_view_schedule(struct kn_view *v);    /* the robots' timers may have moved */
char *kn_view_stats_json(struct kn_view *v); /* /api/stats, --stats; free() */
struct kn_vblob *kn_view_blob(const char *data, size_t len);
void kn_view_blob_put(struct kn_vblob *b);
int kn_view_run(const struct kn_view_opts *o, volatile sig_atomic_t *stop);

/* view_robot.c */
int kn_vrobot_open(struct kn_view *v, struct kn_vrobot *r, unsigned id,
                   const struct kn_view_robot_opt *o, char *err, size_t errlen);
int kn_vrobot_adopt(struct kn_vrobot *r); /* into the loop, once the context exists */
void kn_vrobot_readable(struct kn_vrobot *r);
void kn_vrobot_close(struct kn_vrobot *r);
void kn_vrobot_stats(const struct kn_vrobot *r, void *cjson_array);

/* view_ws.c */
extern const struct lws_protocols kn_vws_protocols[];

#endif
