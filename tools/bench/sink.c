/* The sink simulator: a TCP server on its own thread that accepts
 * kenaf-simd's simulator connections (or socat's), says just enough of the
 * simulator protocol for the link to come up, and reports every command
 * with the id its belt speeds carry and the time its bytes were read.
 *
 *  usarsim  NFO on accept; STA on INIT and every 100 ms (the link is ready
 *           with the first STA); DRIVE {Left}{Right} are commands.
 *  standin  {"type":"ready"} on hello, a state line every 100 ms; "cmd"
 *           lines are commands.
 *  krp      raw KRP/1 datagrams back to back (what socat relays); CRAWLER
 *           frames are commands.
 *
 * One read is timed once, just after read() returns: every command in it
 * arrived by then. Both relays under comparison pay the same thread wake-up
 * in the sink, so it cancels in their ratio. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "krp.h"
#include "linebuf.h"
#include "usarsim_codec.h"

#define MAX_CONNS (2 * KN_BENCH_MAX_ROBOTS + 32) /* robots, and their reconnects */
#define MAX_LINE 4096
#define STA_PERIOD_NS 100000000ull
#define WHEEL_RADIUS_MM 80.0 /* the wheel_radius_m the bench configures, in mm */

struct conn {
    int fd;
    int robot; /* from INIT {Name rN} / hello "robot":"rN"; krp: 0 */
    bool greeted;
    struct kn_sink *s;
    struct kn_linebuf lb;
    char lbuf[MAX_LINE + 1];
    uint8_t kbuf[2 * KN_KRP_MAX_DGRAM];
    size_t klen;
};

struct kn_sink {
    enum kn_sink_proto proto;
    int lfd, efd, stopfd, port;
    pthread_t th;
    kn_sink_fn fn;
    void *ctx;
    struct conn *conns[MAX_CONNS];
    atomic_int accepted;
    atomic_uint_fast64_t unparsed;
    uint64_t t0, next_sta, now;
    struct kn_usar_line line;
    char rbuf[65536];
};

static void send_text(struct conn *c, const char *text, size_t len)
{
    /* tiny lines to a peer that drains: a short or failed send only
     * delays the link, which the caller notices */
    ssize_t n = send(c->fd, text, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)n;
}

static void send_state(struct kn_sink *s, struct conn *c)
{
    char buf[160];
    double t = (double)(kn_bench_now_ns() - s->t0) / 1e9;
    int n;
    if (s->proto == KN_SINK_USARSIM)
        n = snprintf(buf, sizeof buf, "STA {Time %.4f} {Battery 3600} {Type GroundVehicle}\r\n", t);
    else
        n = snprintf(buf, sizeof buf, "{\"type\":\"state\",\"t\":%.4f,\"battery\":24}\n", t);
    send_text(c, buf, (size_t)n);
}

static int robot_of(const char *name, size_t len)
{
    if (len < 2 || len > 8 || name[0] != 'r')
        return -1;
    int v = 0;
    for (size_t i = 1; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

static void command(struct conn *c, double left_mm, double right_mm)
{
    uint32_t id;
    if (c->s->fn && c->greeted && isfinite(left_mm) && isfinite(right_mm) &&
        kn_bench_id_decode(lround(left_mm), lround(right_mm), &id))
        c->s->fn(c->s->ctx, c->robot, id, c->s->now);
    /* other speeds (belts 0 at shutdown) carry no id: not ours to time */
}

static bool usarsim_line(void *ctx, char *text, size_t len)
{
    struct conn *c = ctx;
    struct kn_sink *s = c->s;
    if (len == 0)
        return true;
    if (kn_usar_tokenize(text, len, &s->line) != KN_USAR_OK) {
        s->unparsed++;
        return true;
    }
    enum kn_usar_kind k = kn_usar_kind(&s->line);
    if (k == KN_USAR_K_INIT) {
        struct kn_usar_init in;
        if (kn_usar_parse_init(&s->line, &in) != KN_USAR_OK) {
            s->unparsed++;
            return true;
        }
        c->robot = robot_of(in.name.p, in.name.n);
        c->greeted = c->robot >= 0;
        if (c->greeted)
            send_state(s, c);
    } else if (k == KN_USAR_K_DRIVE) {
        struct kn_usar_drive d;
        if (kn_usar_parse_drive(&s->line, &d) != KN_USAR_OK || !d.has_left || !d.has_right) {
            s->unparsed++;
            return true;
        }
        command(c, d.left * WHEEL_RADIUS_MM, d.right * WHEEL_RADIUS_MM);
    }
    return true;
}

/* The stand-in's lines are produced by one snprintf in kenaf-simd; a
 * targeted scan is enough and keeps the sink cheap at high rates. */
static bool standin_line(void *ctx, char *text, size_t len)
{
    struct conn *c = ctx;
    struct kn_sink *s = c->s;
    (void)len;
    if (strstr(text, "\"type\":\"cmd\"")) {
        const char *b = strstr(text, "\"belts\":[");
        char *end;
        if (!b) {
            s->unparsed++;
            return true;
        }
        double l = strtod(b + 9, &end);
        if (*end != ',') {
            s->unparsed++;
            return true;
        }
        double r = strtod(end + 1, &end);
        if (*end != ']') {
            s->unparsed++;
            return true;
        }
        command(c, l * 1000.0, r * 1000.0);
    } else if (strstr(text, "\"type\":\"hello\"")) {
        const char *n = strstr(text, "\"robot\":\"");
        if (!n) {
            s->unparsed++;
            return true;
        }
        n += 9;
        c->robot = robot_of(n, strcspn(n, "\""));
        c->greeted = c->robot >= 0;
        if (c->greeted) {
            static const char ready[] = "{\"type\":\"ready\"}\n";
            send_text(c, ready, sizeof ready - 1);
            send_state(s, c);
        }
    }
    return true;
}

static void krp_bytes(struct conn *c, const char *data, size_t n)
{
    struct kn_sink *s = c->s;
    while (n > 0) {
        size_t take = sizeof c->kbuf - c->klen;
        if (take > n)
            take = n;
        memcpy(c->kbuf + c->klen, data, take);
        c->klen += take;
        data += take;
        n -= take;
        size_t off = 0;
        while (c->klen - off >= KN_KRP_HDR_LEN) {
            const uint8_t *f = c->kbuf + off;
            size_t total = KN_KRP_HDR_LEN + (size_t)(f[8] | f[9] << 8);
            if (total > KN_KRP_MAX_DGRAM) { /* lost the framing: start over */
                s->unparsed++;
                off = c->klen;
                break;
            }
            if (c->klen - off < total)
                break;
            struct kn_krp_msg m;
            if (kn_krp_decode(f, total, &m) == KN_KRP_OK && m.h.type == KN_KRP_CRAWLER)
                command(c, m.u.crawler.left_mm_s, m.u.crawler.right_mm_s);
            else
                s->unparsed++;
            off += total;
        }
        memmove(c->kbuf, c->kbuf + off, c->klen - off);
        c->klen -= off;
    }
}

static void close_conn(struct kn_sink *s, int i)
{
    struct conn *c = s->conns[i];
    epoll_ctl(s->efd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
    s->conns[i] = NULL;
}

static void on_accept(struct kn_sink *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        int slot = -1;
        for (int i = 0; i < MAX_CONNS; i++)
            if (!s->conns[i]) {
                slot = i;
                break;
            }
        struct conn *c = slot >= 0 ? calloc(1, sizeof *c) : NULL;
        if (!c) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->s = s;
        c->robot = s->proto == KN_SINK_KRP ? 0 : -1;
        c->greeted = s->proto == KN_SINK_KRP;
        kn_linebuf_init(&c->lb, c->lbuf, MAX_LINE);
        s->conns[slot] = c;
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)slot };
        epoll_ctl(s->efd, EPOLL_CTL_ADD, fd, &ev);
        if (s->proto == KN_SINK_USARSIM) {
            static const char nfo[] = "NFO {Gametype BotDeathMatch} {Level kenaf-bench} "
                                      "{TimeLimit 0}\r\n";
            send_text(c, nfo, sizeof nfo - 1);
        }
        s->accepted++;
    }
}

static void on_readable(struct kn_sink *s, int i)
{
    struct conn *c = s->conns[i];
    for (;;) {
        ssize_t n = read(c->fd, s->rbuf, sizeof s->rbuf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close_conn(s, i);
            return;
        }
        s->now = kn_bench_now_ns();
        if (s->proto == KN_SINK_KRP)
            krp_bytes(c, s->rbuf, (size_t)n);
        else
            kn_linebuf_feed(&c->lb, s->rbuf, (size_t)n,
                            s->proto == KN_SINK_USARSIM ? usarsim_line : standin_line, c);
        if ((size_t)n < sizeof s->rbuf)
            return;
    }
}

#define EV_LISTEN 0xFFFFFFF0u
#define EV_STOP 0xFFFFFFF1u

static void *run(void *arg)
{
    struct kn_sink *s = arg;
    struct epoll_event evs[64];
    for (;;) {
        int timeout = -1;
        if (s->proto != KN_SINK_KRP) {
            uint64_t now = kn_bench_now_ns();
            if (now >= s->next_sta) {
                for (int i = 0; i < MAX_CONNS; i++)
                    if (s->conns[i] && s->conns[i]->greeted)
                        send_state(s, s->conns[i]);
                s->next_sta = now + STA_PERIOD_NS;
            }
            timeout = (int)((s->next_sta - now) / 1000000u) + 1;
        }
        int n = epoll_wait(s->efd, evs, 64, timeout);
        for (int k = 0; k < n; k++) {
            uint32_t tag = evs[k].data.u32;
            if (tag == EV_STOP)
                return NULL;
            if (tag == EV_LISTEN)
                on_accept(s);
            else if (tag < MAX_CONNS && s->conns[tag])
                on_readable(s, (int)tag);
        }
    }
}

struct kn_sink *kn_sink_start(enum kn_sink_proto proto, kn_sink_fn fn, void *ctx, char *err,
                              size_t errlen)
{
    struct kn_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "sink: out of memory");
        return NULL;
    }
    s->proto = proto;
    s->fn = fn;
    s->ctx = ctx;
    s->t0 = kn_bench_now_ns();
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    s->efd = epoll_create1(EPOLL_CLOEXEC);
    s->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (s->lfd < 0 || s->efd < 0 || s->stopfd < 0 ||
        bind(s->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->lfd, 1024) < 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &alen) < 0) {
        snprintf(err, errlen, "sink: cannot listen on TCP 127.0.0.1: %s", strerror(errno));
        goto fail;
    }
    s->port = ntohs(a.sin_port);
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = EV_LISTEN };
    epoll_ctl(s->efd, EPOLL_CTL_ADD, s->lfd, &ev);
    ev.data.u32 = EV_STOP;
    epoll_ctl(s->efd, EPOLL_CTL_ADD, s->stopfd, &ev);
    if (pthread_create(&s->th, NULL, run, s) != 0) {
        snprintf(err, errlen, "sink: cannot start a thread");
        goto fail;
    }
    return s;
fail:
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->efd >= 0)
        close(s->efd);
    if (s->stopfd >= 0)
        close(s->stopfd);
    free(s);
    return NULL;
}

int kn_sink_port(const struct kn_sink *s)
{
    return s->port;
}

int kn_sink_conns(struct kn_sink *s)
{
    return s->accepted;
}

void kn_sink_pin(struct kn_sink *s, int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(s->th, sizeof set, &set); /* best effort */
}

uint64_t kn_sink_unparsed(struct kn_sink *s)
{
    return s->unparsed;
}

void kn_sink_stop(struct kn_sink *s)
{
    if (!s)
        return;
    uint64_t one = 1;
    ssize_t w = write(s->stopfd, &one, sizeof one);
    (void)w;
    pthread_join(s->th, NULL);
    for (int i = 0; i < MAX_CONNS; i++)
        if (s->conns[i])
            close_conn(s, i);
    close(s->lfd);
    close(s->efd);
    close(s->stopfd);
    free(s);
}
