/* The reading side of a robot's KRP/1 socket: recvmmsg(2) straight into
 * one buffer every robot shares, through a second descriptor of the
 * socket watched by a uv_poll_t of its own (robot_priv.h). libuv's own
 * reader calls recvmmsg until EAGAIN, which at a controller's rate is one
 * call more per datagram only to learn that nothing more came (7 % of
 * kenaf-simd's CPU at 25 robots x 1 kHz, docs/performance.md); this one
 * stops after a call that came back short, since that call found the
 * queue empty, and what arrives meanwhile wakes the next turn. The first
 * descriptor stays libuv's handle, for the sends it queues. */
#include "robot_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* The loop is single-threaded and a socket's datagrams are handled
 * completely before the next read, so one buffer serves every robot.
 * Slots of 64 KiB, one datagram each: any UDP datagram is seen whole
 * (oversize KRP/1 datagrams are answered). Up to RX_SLOTS per call and
 * RX_CALLS calls per socket and loop turn: the fairness bound of
 * docs/robustness.md, 40 datagrams a turn. */
#define RX_SLOTS 20
#define RX_CALLS 2
static uint8_t rx_buf[RX_SLOTS * KN_ROBOT_RX_DGRAM_MAX];
static struct mmsghdr rx_msg[RX_SLOTS];
static struct iovec rx_iov[RX_SLOTS];
static struct sockaddr_storage rx_from[RX_SLOTS];
static int rx_ready; /* slots 0.. to set up again before the next call */

/* Sets the slots up for a call. The kernel writes only the name length
 * and the flags of the slots it filled, so only those are set again: at a
 * controller's rate that is one slot, not RX_SLOTS. */
static void rx_slots(void)
{
    static bool once;
    if (!once) {
        for (int i = 0; i < RX_SLOTS; i++) {
            rx_iov[i].iov_base = rx_buf + (size_t)i * KN_ROBOT_RX_DGRAM_MAX;
            rx_iov[i].iov_len = KN_ROBOT_RX_DGRAM_MAX;
            rx_msg[i].msg_hdr.msg_name = &rx_from[i];
            rx_msg[i].msg_hdr.msg_iov = &rx_iov[i];
            rx_msg[i].msg_hdr.msg_iovlen = 1;
        }
        once = true;
        rx_ready = RX_SLOTS;
    }
    for (int i = 0; i < rx_ready; i++) {
        rx_msg[i].msg_hdr.msg_namelen = sizeof rx_from[i];
        rx_msg[i].msg_hdr.msg_flags = 0;
    }
    rx_ready = 0;
}

static void on_readable(uv_poll_t *h, int status, int events)
{
    struct kn_robot *r = h->data;
    (void)events;
    if (status < 0) {
        r->recv_errors++;
        kn_debug("robot %s: UDP receive error: %s", r->cfg.name, uv_strerror(status));
        return;
    }
    for (int call = 0; call < RX_CALLS && !r->halting; call++) {
        rx_slots();
        int n = recvmmsg(r->rx_fd, rx_msg, RX_SLOTS, MSG_DONTWAIT, NULL);
        rx_ready = n > 0 ? n : RX_SLOTS;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                r->recv_errors++;
                kn_debug("robot %s: UDP receive error: %s", r->cfg.name, strerror(errno));
            }
            return;
        }
        /* a robot stopped by a datagram takes no more of the batch */
        for (int i = 0; i < n && !r->halting; i++) {
            uv_buf_t b = uv_buf_init((char *)rx_iov[i].iov_base, rx_msg[i].msg_len);
            kn_robot_on_datagram(r, (ssize_t)rx_msg[i].msg_len, &b,
                                 (const struct sockaddr *)&rx_from[i]);
        }
        if (n < RX_SLOTS)
            return;
    }
}

int kn_robot_rx_start(struct kn_robot *r)
{
    uv_os_fd_t fd;
    int rc = uv_fileno((uv_handle_t *)&r->udp, &fd);
    if (rc < 0)
        return rc;
    r->rx_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (r->rx_fd < 0)
        return uv_translate_sys_error(errno);
    rc = uv_poll_init(r->loop, &r->rx, r->rx_fd);
    if (rc < 0) {
        close(r->rx_fd);
        r->rx_fd = -1;
        return rc;
    }
    r->rx.data = r;
    return uv_poll_start(&r->rx, UV_READABLE, on_readable);
}

static void on_rx_closed(uv_handle_t *h)
{
    struct kn_robot *r = h->data;
    close(r->rx_fd);
    r->rx_fd = -1;
    kn_robot_part_closed(r);
}

void kn_robot_rx_close(struct kn_robot *r)
{
    if (r->rx_fd < 0)
        return;
    r->open++;
    uv_close((uv_handle_t *)&r->rx, on_rx_closed);
}
