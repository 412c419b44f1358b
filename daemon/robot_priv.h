/* A robot's state, shared by the files of robot.c's module: the robot
 * (its socket, the turn's answers held for one sendmmsg(2), its rules,
 * link, faults and key) and the datagrams it holds. Private to daemon/. */
#ifndef KN_DAEMON_ROBOT_PRIV_H
#define KN_DAEMON_ROBOT_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uv.h>

#include "robot.h"
#ifdef KN_HAVE_KEYS
#include "keyring.h"
#include "krp_mac.h"
#endif
#include "backend.h"
#include "krp.h"
#include "peers.h"

#define UDP_QUEUE_MAX 64 /* datagrams waiting when the socket is full */
/* Datagrams sent in one sendmmsg(2): what one loop turn answers, at most
 * this many held before they go out (robot_rx.c reads at most 40
 * datagrams from a socket per turn). Held ones take 720 bytes each, grown on demand: at
 * most 23 KiB per robot. */
#define OUT_BATCH_MAX 32
#define OUT_DGRAM_MAX (KN_KRP_MAX_DGRAM + 64) /* a KRP/1 datagram and its key trailer */
#define STATS_PEERS_MAX 32                    /* peers listed in the stats, most recent first */

struct kn_robot {
    uv_loop_t *loop;
    struct kn_cfg_robot cfg;
    const struct kn_backend_ops *ops;
    char listen[KN_CFG_HOST_LEN + 16];
    uv_udp_t udp; /* the socket: binding, options, the queued sends */
    /* The reading side: the same socket through a second descriptor,
     * watched by its own handle and read by recvmmsg(2) directly
     * (robot.c, on_readable); -1 until it is set up. */
    uv_poll_t rx;
    int rx_fd;
    uv_timer_t timer;
    /* What this loop turn sends (answers, STATUS), in order: sent by the
     * flush check with one sendmmsg(2) once the turn's reading is done. */
    uv_check_t flush;
    struct out_dgram *out;
    size_t nout, out_cap;
    bool out_closed; /* stopping: the socket closes, nothing more is held */
    uint64_t deadline;
    struct kn_rules *rules;
    struct kn_link *link;
    kn_robot_link_fn on_link;
    void *ctx;
    uint64_t started_ns;
    struct sockaddr_storage local; /* bound address, for the capture */
    struct kn_faults *faults;
    bool halting;          /* stopping: the last commands bypass faults */
    char world_note[1024]; /* what the world description lacks, said once */
    /* an engine at an address's World answers: taken, and refused by the
     * engine's loaders (robot.c link_world) */
    uint64_t world_answers, world_bad;

    unsigned open; /* handles and link still to close */
    void (*done)(void *arg);
    void *done_arg;

    uint64_t recv_errors, send_errors, send_queued, send_queue_full;
    uint64_t access_dropped, access_refused; /* allow-lists (access.h) */
#ifdef KN_HAVE_KEYS
    /* key_file: every datagram in is verified, every one out signed */
    struct kn_krpmac_key key;
    struct kn_krpreplay *replay; /* the key's, shared (keyring.h); NULL: no key */
    uint64_t key_counter;        /* last counter signed */
    uint64_t key_accepted, key_missing, key_bad;
    uint64_t key_refused[KN_KRPREPLAY_FLOOR + 1]; /* by kn_krpreplay_check's verdict */
#endif
};

/* The reading side (robot_rx.c): a datagram is at most this long. rx_start
 * opens it (0 or a libuv error; rx_fd stays -1 when it could not); a
 * robot's datagrams then go to kn_robot_on_datagram (robot.c). rx_close
 * counts itself in r->open and ends in kn_robot_part_closed. */
#define KN_ROBOT_RX_DGRAM_MAX 65536
int kn_robot_rx_start(struct kn_robot *r);
void kn_robot_rx_close(struct kn_robot *r);
void kn_robot_on_datagram(struct kn_robot *r, ssize_t nread, const uv_buf_t *buf,
                          const struct sockaddr *addr);
void kn_robot_part_closed(struct kn_robot *r);

struct out_dgram {
    struct kn_addr to;
    size_t len;
    uint8_t data[OUT_DGRAM_MAX];
};

struct udp_sreq {
    uv_udp_send_t req;
    size_t len;
    uint8_t data[];
};

#endif
