/* The socket: one connected UDP socket to the robot, and the send path that
 * gives every datagram the next seq. Sending holds send_mu so datagrams
 * leave in seq order whichever thread sends them (the robot ignores a
 * set-point older than the last one applied). UDP raises no SIGPIPE; an
 * ICMP "port unreachable" only turns into ECONNREFUSED here or in recv,
 * which is counted and otherwise ignored: silence is what counts. */
#include "lib.h"

#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int kn_udp_open(const struct kn_settings *cfg)
{
    if (kn_sign_setup(cfg) < 0)
        return HRT_EINVAL;
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_DGRAM,
        .ai_flags = AI_NUMERICSERV,
    };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(cfg->host, cfg->port, &hints, &res);
    if (gai != 0) {
        kn_lib_debug("cannot resolve %s: %s", cfg->host, gai_strerror(gai));
        return gai == EAI_SYSTEM || gai == EAI_MEMORY ? HRT_ESYS : HRT_EINVAL;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        kn_lib_debug("cannot open a socket to %s port %s: %s", cfg->host, cfg->port, strerror(err));
        return HRT_ESYS;
    }
    pthread_mutex_lock(&kn_lib.send_mu);
    kn_lib.fd = fd;
    memset(&kn_lib.sess, 0, sizeof kn_lib.sess); /* a new connection, a new session */
    pthread_mutex_unlock(&kn_lib.send_mu);
    return 0;
}

void kn_udp_close(void)
{
    pthread_mutex_lock(&kn_lib.send_mu);
    if (kn_lib.fd >= 0)
        close(kn_lib.fd);
    kn_lib.fd = -1;
    pthread_mutex_unlock(&kn_lib.send_mu);
}

int kn_udp_send(struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM + 64]; /* + a shared-key trailer */
    int rc = -1;
    pthread_mutex_lock(&kn_lib.send_mu);
    if (kn_lib.fd >= 0) {
        m->h.seq = ++kn_lib.seq;
        kn_krp_session_stamp(&kn_lib.sess, m);
        size_t n = kn_sign_out(buf, kn_krp_encode(m, buf, KN_KRP_MAX_DGRAM), sizeof buf);
        if (n > 0 && send(kn_lib.fd, buf, n, 0) == (ssize_t)n) {
            rc = 0;
        } else {
            kn_lib.tx_fail++;
            kn_lib_debug("send %s failed: %s", kn_krp_type_name(m->h.type), strerror(errno));
        }
    }
    pthread_mutex_unlock(&kn_lib.send_mu);
    return rc;
}

void kn_udp_send_simple(uint8_t type, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, 0, flags);
    if (type == KN_KRP_HELLO) {
        /* A session, to drive: a robot without sessions ignores the flag;
         * within an open session the token makes it a request to drive. */
        m.h.flags |= KN_KRP_F_SESSION;
        memcpy(m.u.hello.name, kn_lib.name, sizeof m.u.hello.name);
    }
    kn_udp_send(&m);
}

bool kn_udp_session_accept(const struct kn_krp_hello_ack *a)
{
    pthread_mutex_lock(&kn_lib.send_mu);
    uint8_t was = kn_lib.sess.on ? kn_lib.sess.role : 0;
    if (kn_krp_session_accept(&kn_lib.sess, a, kn_lib.seq + 1))
        kn_lib_debug("session opened, %s", a->role == KN_KRP_ROLE_DRIVER ? "driving" : "observing");
    bool driver = kn_lib.sess.on && kn_lib.sess.role == KN_KRP_ROLE_DRIVER;
    pthread_mutex_unlock(&kn_lib.send_mu);
    if (a->session && a->role == KN_KRP_ROLE_OBSERVER && was != KN_KRP_ROLE_OBSERVER)
        kn_lib_debug("another client drives this robot: set-points are refused until it leaves");
    return driver && was != KN_KRP_ROLE_DRIVER;
}

bool kn_udp_session_lost(const struct kn_krp_error *e)
{
    pthread_mutex_lock(&kn_lib.send_mu);
    bool lost = kn_krp_session_lost(&kn_lib.sess, e);
    pthread_mutex_unlock(&kn_lib.send_mu);
    return lost;
}

void kn_udp_send_subscribe(uint16_t period_ms, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, 0, flags);
    m.u.subscribe.period_ms = period_ms;
    kn_udp_send(&m);
}
