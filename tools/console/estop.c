/* estop.c: KRP/1 ESTOP on the console's own socket (see estop.h). */
#include "estop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostport.h"
#include "krp.h"

int kn_estop_open(struct kn_estop *e, const char *robot, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->fd = -1;
    e->seq = 1;
    struct sockaddr_storage ss;
    socklen_t sl;
    if (kn_hostport_lookup(robot, KN_KRP_DEFAULT_PORT, 0, SOCK_DGRAM, &ss, &sl, err, errlen) != 0)
        return -1;
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) != 0) {
        snprintf(err, errlen, "\"%s\": %s", robot, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    e->fd = fd;
    return 0;
}

void kn_estop_close(struct kn_estop *e)
{
    if (e->fd >= 0)
        close(e->fd);
    e->fd = -1;
}

static void send_now(struct kn_estop *e, double now)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    e->sent_seq = e->seq++;
    kn_krp_init(&m, KN_KRP_ESTOP, e->sent_seq, KN_KRP_F_ACK_REQ);
    m.u.estop.engage = e->engage ? 1 : 0;
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    if (n > 0 && e->fd >= 0 && send(e->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n)
        e->sent++;
    e->tries++;
    e->next_send = now + KN_ESTOP_RESEND_S;
}

void kn_estop_request(struct kn_estop *e, bool engage, double now)
{
    e->engage = engage;
    e->tries = 0;
    e->state = KN_ESTOP_PENDING;
    e->error_code = 0;
    send_now(e, now);
}

void kn_estop_tick(struct kn_estop *e, double now)
{
    if (e->state != KN_ESTOP_PENDING || now < e->next_send)
        return;
    if (e->tries >= KN_ESTOP_TRIES) {
        e->state = KN_ESTOP_NO_ANSWER;
        return;
    }
    send_now(e, now);
}

/* Every send of the current request is a new seq; an answer to any of
 * them settles it (they all carry the same engage value). */
static bool ours(const struct kn_estop *e, uint32_t seq)
{
    uint32_t first = e->sent_seq - (uint32_t)(e->tries - 1);
    return e->tries > 0 && (uint32_t)(seq - first) <= (uint32_t)(e->sent_seq - first);
}

void kn_estop_readable(struct kn_estop *e)
{
    for (;;) {
        uint8_t buf[2048];
        ssize_t n = e->fd >= 0 ? recv(e->fd, buf, sizeof buf, 0) : -1;
        if (n < 0) {
            if (errno == EINTR || errno == ECONNREFUSED)
                continue; /* ICMP from a robot not listening (yet): the retries cover it */
            return;
        }
        struct kn_krp_msg m;
        if (kn_krp_decode(buf, (size_t)n, &m) != KN_KRP_OK)
            continue;
        /* an ACK settles it even after an ERROR for the same request (a
         * robot may send both, as for a clamped set-point) */
        if ((e->state == KN_ESTOP_PENDING || e->state == KN_ESTOP_REFUSED) && m.h.type == KN_KRP_ACK && m.u.ack.acked_type == KN_KRP_ESTOP && ours(e, m.u.ack.acked_seq)) {
            e->acks++;
            e->state = KN_ESTOP_ACKED;
        } else if (e->state == KN_ESTOP_PENDING && m.h.type == KN_KRP_ERROR && m.u.error.offending_type == KN_KRP_ESTOP &&
                   ours(e, m.u.error.offending_seq)) {
            e->errors++;
            e->error_code = m.u.error.code;
            e->state = KN_ESTOP_REFUSED;
        }
    }
}

void kn_estop_describe(const struct kn_estop *e, char *buf, size_t len)
{
    const char *what = e->engage ? "engage" : "release";
    const char *code = kn_krp_error_name((uint8_t)e->error_code);
    switch (e->state) {
    case KN_ESTOP_IDLE: snprintf(buf, len, "%s", ""); break;
    case KN_ESTOP_PENDING: snprintf(buf, len, "%s sent, waiting for ACK", what); break;
    case KN_ESTOP_ACKED: snprintf(buf, len, "%s acknowledged", what); break;
    case KN_ESTOP_NO_ANSWER: snprintf(buf, len, "%s NOT acknowledged: no answer", what); break;
    case KN_ESTOP_REFUSED:
        snprintf(buf, len, "%s refused: ERROR %s", what, code ? code : "unknown");
        break;
    }
}
