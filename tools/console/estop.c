/* estop.c: KRP/1 ESTOP on the console's own socket (see estop.h). */
#include "estop.h"

#include <errno.h>
#include <stdarg.h>
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

/* Sends m with the socket's next seq; true when it went out. */
static bool send_msg(struct kn_estop *e, struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = e->seq++;
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    return n > 0 && e->fd >= 0 && send(e->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n;
}

uint32_t kn_estop_send(struct kn_estop *e, struct kn_krp_msg *m)
{
    uint32_t seq = e->seq;
    send_msg(e, m);
    return seq;
}

static void send_now(struct kn_estop *e, double now)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ESTOP, 0, KN_KRP_F_ACK_REQ);
    m.u.estop.engage = e->engage ? 1 : 0;
    e->sent_seq = e->seq;
    if (send_msg(e, &m))
        e->sent++;
    e->tries++;
    e->next_send = now + KN_ESTOP_RESEND_S;
}

void kn_estop_request(struct kn_estop *e, bool engage, double now)
{
    e->engage = engage;
    e->tries = 0;
    e->first_seq = e->seq;
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
 * them settles it (they all carry the same engage value). HELLOs and
 * ESTOP_INFO_REQs between them take seqs of that range too, but nothing
 * answers them with an ACK or ERROR for an ESTOP. */
static bool ours(const struct kn_estop *e, uint32_t seq)
{
    return e->tries > 0 && (uint32_t)(seq - e->first_seq) <= (uint32_t)(e->sent_seq - e->first_seq);
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
        if (m.h.type == KN_KRP_HELLO_ACK) {
            e->hello_answered = true;
            e->info_capable = m.u.hello_ack.capabilities & KN_KRP_CAP_ESTOP_INFO;
            kn_ctrial_hello_ack(&e->trial, m.u.hello_ack.capabilities);
            continue;
        }
        kn_ctrial_msg(&e->trial, &m);
        if (m.h.type == KN_KRP_ESTOP_INFO) {
            e->info = m.u.estop_info;
            e->info_valid = true;
            e->info_misses = 0;
            continue;
        }
        /* an ACK settles it even after an ERROR for the same request (a
         * robot may send both, as for a clamped set-point) */
        if ((e->state == KN_ESTOP_PENDING || e->state == KN_ESTOP_REFUSED) &&
            m.h.type == KN_KRP_ACK && m.u.ack.acked_type == KN_KRP_ESTOP &&
            ours(e, m.u.ack.acked_seq)) {
            e->acks++;
            e->state = KN_ESTOP_ACKED;
        } else if (e->state == KN_ESTOP_PENDING && m.h.type == KN_KRP_ERROR &&
                   m.u.error.offending_type == KN_KRP_ESTOP && ours(e, m.u.error.offending_seq)) {
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

void kn_estop_poll(struct kn_estop *e, bool stopped, double now)
{
    struct kn_krp_msg m;
    if (e->fd < 0)
        return;
    /* a robot whose simulator has not yet told it of its trial says so
     * in a later HELLO_ACK: ask a few more times (a HELLO claims nothing) */
    bool again = e->hello_answered && !e->trial.capable && e->hellos < KN_ESTOP_HELLOS;
    if (!e->hello_answered || again) {
        if (now >= e->next_hello) {
            /* the library's name, so both links of the console read alike */
            kn_krp_init(&m, KN_KRP_HELLO, 0, 0);
            snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", program_invocation_short_name);
            send_msg(e, &m);
            e->hellos++;
            e->next_hello = now + KN_ESTOP_HELLO_S;
        }
        if (!e->hello_answered)
            return;
    }
    if (!e->info_capable || !stopped) {
        /* nothing to show; ask at once when the robot stops again */
        e->info_valid = false;
        e->info_misses = 0;
        e->next_info = now;
        return;
    }
    if (now < e->next_info)
        return;
    /* a robot that stopped answering: an old list would mislead */
    if (e->info_misses >= KN_ESTOP_INFO_MISSES)
        e->info_valid = false;
    kn_krp_init(&m, KN_KRP_ESTOP_INFO_REQ, 0, 0);
    send_msg(e, &m);
    e->info_misses++;
    e->next_info = now + KN_ESTOP_INFO_S;
}

__attribute__((format(printf, 4, 5))) static size_t append(char *buf, size_t len, size_t at,
                                                           const char *fmt, ...)
{
    if (at >= len)
        return at;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    return w < 0 ? at : at + (size_t)w;
}

void kn_estop_holders(const struct kn_estop *e, char *buf, size_t len)
{
    static const char *const kinds[] = { "?", "plain", "session", "console", "admin" };
    if (len == 0)
        return;
    buf[0] = '\0';
    const struct kn_krp_estop_info *x = &e->info;
    if (!e->info_valid || x->engaged == 0)
        return;
    size_t at = append(buf, len, 0, "by %u:", x->engaged);
    for (unsigned i = 0; i < x->n; i++) {
        const struct kn_krp_estop_entry *h = &x->e[i];
        /* the name is the engager's to choose: nothing but printable ASCII
         * reaches the terminal */
        char name[KN_KRP_NAME_LEN + 1];
        size_t k = 0;
        for (; h->name[k]; k++)
            name[k] = h->name[k] >= 0x20 && h->name[k] < 0x7f ? h->name[k] : '?';
        name[k] = '\0';
        const char *kind = h->kind < sizeof kinds / sizeof kinds[0] ? kinds[h->kind] : "?";
        if (h->kind == KN_KRP_ENG_ADMIN)
            at = append(buf, len, at, "%s admin", i ? "," : "");
        else
            at = append(buf, len, at, "%s %s (%s%s)", i ? "," : "", name[0] ? name : "?", kind,
                        h->present ? "" : ", gone");
    }
    if (x->engaged > x->n)
        (void)append(buf, len, at, ", %u more", (unsigned)(x->engaged - x->n));
}
