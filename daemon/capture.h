/* Traffic capture: kenaf-simd records both of its legs into one pcapng
 * file that Wireshark opens. Interface 0 ("krp") holds every KRP/1
 * datagram in and out as IPv4/IPv6 + UDP packets with the real addresses
 * and ports; interface 1 ("sim") holds the simulator connection as
 * IPv4/IPv6 + TCP segments, one per chunk read or written, with sequence
 * numbers that advance with the bytes (and a synthesized handshake and
 * close), so Wireshark follows and reassembles the stream. Time stamps are
 * the wall clock when the daemon handled the bytes.
 *
 * One capture per daemon at a time, started by --capture FILE or the
 * stats-socket command "capture start PATH". Writing never blocks the
 * event loop: records go into a memory buffer that the libuv thread pool
 * writes out; when the disk does not keep up and the buffers are full, or
 * the size cap is reached, records are dropped and counted (stats
 * "capture"). A failed write is cut back off the file, so the file always
 * ends on a whole block. */
#ifndef KN_CAPTURE_H
#define KN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "pcapng.h"

#define KN_CAPTURE_IF_KRP 0
#define KN_CAPTURE_IF_SIM 1
#define KN_CAPTURE_DEFAULT_MAX_BYTES (1024ull * 1024 * 1024)

/* One TCP connection as the capture shows it. Zero it before use. */
struct kn_capture_flow {
    struct kn_pcap_endpoint local, remote;
    uint32_t seq_out, seq_in;     /* next sequence numbers: toward / from the simulator */
    uint32_t acked_out, acked_in; /* what each side last acknowledged */
    bool known;                   /* addresses set */
};

/* The capture the daemon opens at start (main.c's --capture). max_bytes 0:
 * no cap. */
void kn_capture_configure(const char *path, uint64_t max_bytes);
/* Opens the configured capture, if any: 0, or -1 with a message in err. */
int kn_capture_startup(uv_loop_t *loop, char *err, size_t errlen);

/* Starts a capture into path (created or truncated; any path: the command
 * line's --capture). -1 with a message in err when one is running already
 * or the file cannot be opened. */
int kn_capture_start(uv_loop_t *loop, const char *path, uint64_t max_bytes, char *err,
                     size_t errlen);
/* Stops recording; what is buffered is written and the file closed in the
 * background (the loop runs until that is done). No-op when none runs. */
void kn_capture_stop(void);

bool kn_capture_on(void);

/* A KRP/1 datagram from src to dst. dir: KN_PCAPNG_DIR_IN (to the robot)
 * or KN_PCAPNG_DIR_OUT. comment: NULL, or a note such as an injected
 * fault. */
void kn_capture_udp(const struct sockaddr *src, const struct sockaddr *dst, const void *data,
                    size_t len, int dir, const char *comment);

/* Simulator connection: established (records a handshake), bytes written
 * (out = true) or read, closed (records the close). */
void kn_capture_tcp_open(struct kn_capture_flow *fl, const struct sockaddr *local,
                         const struct sockaddr *remote);
void kn_capture_tcp_data(struct kn_capture_flow *fl, bool out, const void *data, size_t len);
void kn_capture_tcp_close(struct kn_capture_flow *fl);

/* The capture's state and counters into obj (the "capture" stats). */
void kn_capture_stats(cJSON *obj);

/* Where captures started over the stats socket go (capdir.h: PATH inside
 * dir only, symbolic links refused, each refusal counted in the stats),
 * the group their files and the directory get ((gid_t)-1: the daemon's
 * own), and the largest size cap such a capture may have (0: no cap; a
 * command's max_mb=N may only lower it). */
void kn_capture_set_dir(const char *dir, gid_t group, uint64_t max_bytes);

/* The stats-socket command "capture start PATH [max_mb=N]", "capture
 * stop" or "capture" (status): returns a malloc'd JSON reply; PATH goes
 * through the capture directory (kn_capture_set_dir). */
char *kn_capture_command(uv_loop_t *loop, const char *args);

/* sockaddr (IPv4 or IPv6) to an endpoint; -1 for other families. */
int kn_capture_endpoint(const struct sockaddr *sa, struct kn_pcap_endpoint *ep);

#endif
