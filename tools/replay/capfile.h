/* A capture file (pcapng or classic pcap) loaded for replay: the KRP/1
 * datagrams with their addresses and times, and the TCP connections with
 * their byte streams reassembled per direction. Any link type the pcapng
 * decoder reads works, so a capture made with tcpdump of a real robot
 * replays as well as one made by kenaf-simd. */
#ifndef KN_REPLAY_CAPFILE_H
#define KN_REPLAY_CAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcapng.h"

struct kn_capfile_dgram {
    uint64_t t_ns;
    struct kn_pcap_endpoint src, dst;
    const uint8_t *data; /* UDP payload, inside the loaded file */
    size_t len;
    bool krp; /* starts with the KRP/1 magic */
};

struct kn_capfile_segment {
    uint64_t t_ns;
    bool from_server;    /* simulator -> daemon */
    const uint8_t *data; /* new bytes only (retransmissions trimmed) */
    size_t len;
};

/* One TCP connection: the client is the side that connected (kenaf-simd),
 * the server the simulator. */
struct kn_capfile_session {
    struct kn_pcap_endpoint client, server;
    uint64_t t_start; /* SYN, else the first segment */
    struct kn_capfile_segment *seg;
    size_t nseg, capseg;
    size_t bytes_to_server, bytes_from_server;
    /* reassembly */
    bool have_next[2];
    uint32_t next[2]; /* [0] client -> server, [1] server -> client */
    bool closed;
    uint64_t gaps, retransmitted;
};

struct kn_capfile {
    uint8_t *file;
    size_t file_len;
    struct kn_capfile_dgram *dg;
    size_t ndg, capdg;
    struct kn_capfile_session *sess;
    size_t nsess, capsess;
    uint64_t packets, undecoded, fragments, other_proto, truncated;
};

/* Reads and indexes the file. 0, or -1 with a message in err. */
int kn_capfile_load(const char *path, struct kn_capfile *cap, char *err, size_t errlen);
/* The same from bytes already in memory (taken over: freed by kn_capfile_free). */
int kn_capfile_load_buffer(uint8_t *buf, size_t len, struct kn_capfile *cap, char *err,
                           size_t errlen);
void kn_capfile_free(struct kn_capfile *cap);

bool kn_capfile_endpoint_equal(const struct kn_pcap_endpoint *a, const struct kn_pcap_endpoint *b);
/* "127.0.0.1:9750" / "[::1]:9750" */
void kn_capfile_endpoint_format(const struct kn_pcap_endpoint *e, char *buf, size_t len);

#endif
