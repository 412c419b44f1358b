/* kenaf-cameras' KRP/1 observer of its robots: see observe.h. One thread
 * polls every robot's UDP socket. Per robot: HELLO (observe) every 0.5 s
 * until answered, then SUBSCRIBE at 20 ms renewed every second; no STATUS
 * for 1 s means the daemon went away (logged; HELLO again). After every
 * HELLO_ACK the world description is fetched in 480-byte chunks, 8 asked
 * at a time and asked again after 300 ms, so a restarted daemon's world
 * replaces the old one. The sockets are not connect()ed: a robot that is
 * down answers with ICMP, which a connected socket would report as an
 * error on every receive. */
#include "observe.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostport.h"
#include "krp_session.h"

#define HELLO_NS 500000000ull
#define RENEW_NS 1000000000ull
#define SILENCE_NS 1000000000ull
#define WORLD_RETRY_NS 300000000ull
#define WORLD_WINDOW 8
#define WORLD_MAX (8u << 20)
#define SUB_MS 20

struct robot {
    struct kn_cobs_robot_opt opt;
    int fd;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    uint32_t seq;
    struct kn_krp_session sess;
    bool acked, up;
    uint32_t caps;
    uint64_t hello_ns, sub_ns, status_ns, ask0_ns;
    /* the world being fetched: total 0 = not asked or size unknown */
    bool fetching;
    uint32_t total, nchunks, nreceived;
    char *buf;
    uint8_t *got;
    uint64_t *asked_ns;
    /* shared with the render thread, under kn_cobs.lock */
    struct kn_cobs_view shared;
    char *world;
    size_t world_len;
};

struct kn_cobs {
    struct robot r[KN_COBS_MAX_ROBOTS];
    size_t n;
    pthread_mutex_t lock;
    pthread_t thread;
    bool running;
    volatile int stop;
};

uint64_t kn_cobs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send_msg(struct robot *r, struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = ++r->seq;
    kn_krp_session_stamp(&r->sess, m);
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    if (n > 0)
        (void)sendto(r->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&r->addr,
                     r->addrlen);
}

static void send_simple(struct robot *r, uint8_t type)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, 0, 0);
    if (type == KN_KRP_HELLO)
        kn_krp_session_hello(&r->sess, &m, "kenaf-cameras", true);
    else if (type == KN_KRP_SUBSCRIBE)
        m.u.subscribe.period_ms = SUB_MS;
    send_msg(r, &m);
}

static void fetch_reset(struct robot *r)
{
    free(r->buf);
    free(r->got);
    free(r->asked_ns);
    r->buf = NULL;
    r->got = NULL;
    r->asked_ns = NULL;
    r->fetching = false;
    r->total = r->nchunks = r->nreceived = 0;
}

static void ask(struct robot *r, uint32_t offset)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_WORLD_REQ, 0, 0);
    m.u.world_req.offset = offset;
    send_msg(r, &m);
}

/* Asks for the chunks not received: never asked, or asked a retry ago. */
static void fetch_pump(struct robot *r, uint64_t now)
{
    if (!r->fetching)
        return;
    if (r->total == 0) { /* the size comes with the first chunk */
        if (now >= r->ask0_ns + WORLD_RETRY_NS) {
            r->ask0_ns = now;
            ask(r, 0);
        }
        return;
    }
    unsigned inflight = 0;
    for (uint32_t k = 0; k < r->nchunks && inflight < WORLD_WINDOW; k++) {
        if (r->got[k])
            continue;
        if (!r->asked_ns[k] || now >= r->asked_ns[k] + WORLD_RETRY_NS) {
            r->asked_ns[k] = now;
            ask(r, k * KN_KRP_WORLD_CHUNK);
        }
        inflight++;
    }
}

static void publish_world(struct kn_cobs *o, struct robot *r, char *doc, size_t len)
{
    pthread_mutex_lock(&o->lock);
    free(r->world);
    r->world = doc;
    r->world_len = len;
    r->shared.world_gen++;
    pthread_mutex_unlock(&o->lock);
    fprintf(stderr, "kenaf-cameras: robot %s: world description, %zu bytes\n", r->opt.name, len);
}

static void on_world(struct kn_cobs *o, struct robot *r, const struct kn_krp_world *c)
{
    if (!r->fetching)
        return;
    if (c->total_len == 0 || c->total_len > WORLD_MAX) {
        fetch_reset(r); /* no world (or one too large): the default ground */
        return;
    }
    if (r->total != c->total_len) {
        fetch_reset(r);
        r->fetching = true;
        r->total = c->total_len;
        r->nchunks = (r->total + KN_KRP_WORLD_CHUNK - 1) / KN_KRP_WORLD_CHUNK;
        r->buf = malloc(r->total);
        r->got = calloc(r->nchunks, 1);
        r->asked_ns = calloc(r->nchunks, sizeof *r->asked_ns);
        if (!r->buf || !r->got || !r->asked_ns) {
            fetch_reset(r);
            return;
        }
    }
    uint32_t k = c->offset / KN_KRP_WORLD_CHUNK;
    uint32_t want = k + 1 < r->nchunks ? KN_KRP_WORLD_CHUNK : r->total - k * KN_KRP_WORLD_CHUNK;
    if (c->offset % KN_KRP_WORLD_CHUNK || k >= r->nchunks || c->n != want || r->got[k])
        return;
    memcpy(r->buf + c->offset, c->data, c->n);
    r->got[k] = 1;
    if (++r->nreceived == r->nchunks) {
        char *doc = r->buf;
        size_t len = r->total;
        r->buf = NULL;
        fetch_reset(r);
        publish_world(o, r, doc, len);
        return;
    }
    fetch_pump(r, kn_cobs_now_ns());
}

static void on_datagram(struct kn_cobs *o, struct robot *r, const uint8_t *buf, size_t len,
                        uint64_t now)
{
    struct kn_krp_msg m;
    if (kn_krp_decode(buf, len, &m) != KN_KRP_OK)
        return;
    switch (m.h.type) {
    case KN_KRP_HELLO_ACK:
        r->acked = true;
        kn_krp_session_accept(&r->sess, &m.u.hello_ack, r->seq + 1);
        r->caps = m.u.hello_ack.capabilities;
        r->sub_ns = now;
        send_simple(r, KN_KRP_SUBSCRIBE);
        fetch_reset(r);
        if (r->caps & KN_KRP_CAP_WORLD) {
            r->fetching = true;
            r->ask0_ns = 0;
            fetch_pump(r, now);
        }
        break;
    case KN_KRP_STATUS:
        r->status_ns = now;
        if (!r->up) {
            r->up = true;
            fprintf(stderr, "kenaf-cameras: robot %s: STATUS from %s:%u\n", r->opt.name,
                    r->opt.host, r->opt.port);
        }
        pthread_mutex_lock(&o->lock);
        r->shared.have_status = true;
        r->shared.up = true;
        r->shared.status = m.u.status;
        r->shared.status_wall_ns = now;
        pthread_mutex_unlock(&o->lock);
        break;
    case KN_KRP_WORLD: on_world(o, r, &m.u.world); break;
    case KN_KRP_ERROR:
        if (kn_krp_session_lost(&r->sess, &m.u.error)) {
            r->acked = false;
            r->hello_ns = 0;
        } else if (m.u.error.offending_type == KN_KRP_WORLD_REQ) {
            fetch_reset(r); /* no world extension, or the document changed: HELLO_ACK asks again */
        }
        break;
    default: break;
    }
}

static void tick(struct kn_cobs *o, struct robot *r, uint64_t now)
{
    if (r->up && now >= r->status_ns + SILENCE_NS) {
        r->up = false;
        r->acked = false;
        r->hello_ns = 0;
        fetch_reset(r);
        pthread_mutex_lock(&o->lock);
        r->shared.up = false;
        pthread_mutex_unlock(&o->lock);
        fprintf(stderr,
                "kenaf-cameras: robot %s: no STATUS for 1 s; serving the last frame until it is "
                "back\n",
                r->opt.name);
    }
    if (!r->acked && (!r->hello_ns || now >= r->hello_ns + HELLO_NS)) {
        r->hello_ns = now;
        send_simple(r, KN_KRP_HELLO);
    }
    if (r->acked && now >= r->sub_ns + RENEW_NS) {
        r->sub_ns = now;
        send_simple(r, KN_KRP_SUBSCRIBE);
    }
    fetch_pump(r, now);
}

static bool same_addr(const struct robot *r, const struct sockaddr_storage *a, socklen_t alen)
{
    return alen == r->addrlen && memcmp(a, &r->addr, alen) == 0;
}

static void *run(void *arg)
{
    struct kn_cobs *o = arg;
    struct pollfd pfd[KN_COBS_MAX_ROBOTS];
    for (size_t i = 0; i < o->n; i++)
        pfd[i] = (struct pollfd){ .fd = o->r[i].fd, .events = POLLIN };
    while (!o->stop) {
        uint64_t now = kn_cobs_now_ns();
        for (size_t i = 0; i < o->n; i++)
            tick(o, &o->r[i], now);
        if (poll(pfd, o->n, 10) <= 0)
            continue;
        now = kn_cobs_now_ns();
        for (size_t i = 0; i < o->n; i++) {
            uint8_t buf[KN_KRP_MAX_DGRAM + 1];
            struct sockaddr_storage from;
            socklen_t flen = sizeof from;
            ssize_t len;
            while ((len = recvfrom(o->r[i].fd, buf, sizeof buf, MSG_DONTWAIT,
                                   (struct sockaddr *)&from, &flen)) >= 0) {
                if (same_addr(&o->r[i], &from, flen))
                    on_datagram(o, &o->r[i], buf, (size_t)len, now);
                flen = sizeof from;
            }
        }
    }
    return NULL;
}

struct kn_cobs *kn_cobs_open(const struct kn_cobs_robot_opt *robots, size_t n, char *err,
                             size_t errlen)
{
    if (n == 0 || n > KN_COBS_MAX_ROBOTS) {
        snprintf(err, errlen, "1..%d robots", KN_COBS_MAX_ROBOTS);
        return NULL;
    }
    struct kn_cobs *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&o->lock, NULL);
    for (size_t i = 0; i < n; i++) {
        struct robot *r = &o->r[i];
        r->opt = robots[i];
        r->fd = -1;
        o->n++;
        char why[300];
        if (kn_hostport_resolve(r->opt.host, r->opt.port, SOCK_DGRAM, &r->addr, &r->addrlen, why,
                                sizeof why) < 0) {
            snprintf(err, errlen, "robot %s: %s", r->opt.name, why);
            kn_cobs_close(o);
            return NULL;
        }
        r->fd = socket(r->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (r->fd < 0) {
            snprintf(err, errlen, "robot %s: UDP socket: %s", r->opt.name, strerror(errno));
            kn_cobs_close(o);
            return NULL;
        }
    }
    return o;
}

int kn_cobs_start(struct kn_cobs *o)
{
    if (pthread_create(&o->thread, NULL, run, o) != 0)
        return -1;
    o->running = true;
    return 0;
}

void kn_cobs_close(struct kn_cobs *o)
{
    if (!o)
        return;
    if (o->running) {
        o->stop = 1;
        pthread_join(o->thread, NULL);
    }
    for (size_t i = 0; i < o->n; i++) {
        struct robot *r = &o->r[i];
        if (r->fd >= 0) {
            if (r->acked)
                send_simple(r, KN_KRP_BYE); /* ends the subscription at once */
            close(r->fd);
        }
        fetch_reset(r);
        free(r->world);
    }
    pthread_mutex_destroy(&o->lock);
    free(o);
}

void kn_cobs_take(struct kn_cobs *o, size_t i, unsigned since, struct kn_cobs_view *v)
{
    struct robot *r = &o->r[i];
    pthread_mutex_lock(&o->lock);
    *v = r->shared;
    v->world = NULL;
    v->world_len = 0;
    if (r->shared.world_gen != since && r->world) {
        v->world = malloc(r->world_len);
        if (v->world) {
            memcpy(v->world, r->world, r->world_len);
            v->world_len = r->world_len;
        } else {
            v->world_gen = since; /* try again next time */
        }
    }
    pthread_mutex_unlock(&o->lock);
}
