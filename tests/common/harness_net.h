/* Loopback sockets for tests that play a peer themselves: TCP listen,
 * accept and connect on 127.0.0.1 (TCP_NODELAY, so small writes go out at
 * once), whole writes, exact reads with a deadline, a UDP socket connected
 * to a port, Unix sockets, and a private network namespace. Failures are
 * Check assertions. */
#ifndef KN_TEST_HARNESS_NET_H
#define KN_TEST_HARNESS_NET_H

#include <stddef.h>
#include <stdint.h>

int h_tcp_listen(int *port);               /* *port 0: any; set to the port taken */
int h_tcp_accept(int lfd, int timeout_ms); /* -1 on timeout */
int h_tcp_connect(int port);
/* Every byte, or the test fails (no SIGPIPE). */
void h_write_all(int fd, const void *p, size_t n);
/* n bytes before end_us (h_now_us time): 1, 0 on EOF, -1 on timeout. */
int h_read_exact(int fd, void *buf, size_t n, uint64_t end_us);
/* The local / peer port of a connected socket. */
int h_local_port(int fd);
int h_peer_port(int fd);

/* A UDP socket bound to 127.0.0.1 (any port) and connected to port. */
int h_udp_connect(int port);

/* A Unix datagram socket bound to path (an old file there is removed). */
int h_unix_dgram_bind(const char *path);
/* A Unix stream socket connected to path, or -1 when nobody listens. */
int h_unix_stream_connect(const char *path);

/* Moves the calling process into a network namespace of its own with only
 * loopback up (as `unshare --net` + `ip link set lo up`), so fixed ports
 * never clash with anything else on the machine. Needs CAP_SYS_ADMIN. */
void h_private_net(void);
/* Whether h_private_net can work here: 0, or the errno unshare gave
 * (asked in a child, so the caller keeps its network). */
int h_private_net_errno(void);

#endif
