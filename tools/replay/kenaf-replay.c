/* kenaf-replay: replays a capture (pcapng from kenaf-simd --capture, or
 * any pcap/pcapng of KRP/1 traffic).
 *
 *   kenaf-replay [--robot HOST:PORT] [--fast | --speed X] ... CAPTURE
 *       sends the datagrams the controllers sent, from one socket per
 *       captured controller, in the captured order, with the captured
 *       timing (or as fast as the robot answers), and compares the answers
 *       with the captured ones. A session's token is the live robot's, not
 *       the captured one (retoken.h).
 *   kenaf-replay --serve-sim [--listen HOST:PORT] ... CAPTURE
 *       plays the simulator: accepts kenaf-simd's connection and sends it
 *       what the simulator sent in a captured session, with its timing,
 *       answering nothing.
 *   kenaf-replay --list CAPTURE
 *       what the capture holds.
 *
 * Exit status: 0 done (controller replay: every answer matched), 1 the
 * answers diverged, 2 usage or input error. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "capfile.h"
#include "compare.h"
#include "hostport.h"
#include "krp.h"
#include "retoken.h"

#define MAX_CTL 64

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kenaf-replay [--robot HOST:PORT] [--capture-robot [ADDR:]PORT]\n"
        "                    [--fast | --speed X] [--linger-ms N] [--max-report N] [--json]\n"
        "                    CAPTURE\n"
        "       kenaf-replay --serve-sim [--listen HOST:PORT] [--session N] [--fast | --speed X]\n"
        "                    [--sync-gap-ms N] [--log FILE] [--once] [--close-at-end] CAPTURE\n"
        "       kenaf-replay --list CAPTURE\n"
        "\n"
        "Replays the controller side of a captured KRP/1 session against a robot\n"
        "(kenaf-simd) and compares the answers, or plays the simulator side of a\n"
        "captured simulator connection to kenaf-simd (--serve-sim).\n"
        "\n"
        "  --robot HOST:PORT     where to send (default 127.0.0.1:9750)\n"
        "  --capture-robot P     which captured robot to replay when the capture has\n"
        "                        several: its port, or address:port\n"
        "  --fast                do not keep the captured timing: send each datagram\n"
        "                        once the answers to the last one are in (or 50 ms)\n"
        "  --speed X             play X times faster than captured (default 1)\n"
        "  --linger-ms N         wait for late answers after the last datagram (1000)\n"
        "  --max-report N        divergences listed (default 20)\n"
        "  --json                print the summary as one JSON line as well\n"
        "  --serve-sim           act as the simulator of a captured session\n"
        "  --listen HOST:PORT    where to accept kenaf-simd (default 127.0.0.1:0; the\n"
        "                        port is printed as \"PORT n\")\n"
        "  --session N           which captured TCP session (see --list; default the\n"
        "                        first with data from the simulator)\n"
        "  --sync-gap-ms N       hold the playback where the captured daemon started\n"
        "                        talking after N ms of silence, until the live daemon\n"
        "                        does too (default 300; 0: pure timing)\n"
        "  --log FILE            record what kenaf-simd sends (time in us, then bytes)\n"
        "  --once                exit when the first connection ends\n"
        "  --close-at-end        close the connection when the session is played\n"
        "  --list                list the controllers, robots and sessions in CAPTURE\n");
}

/* An address option (common/hostport.h rules) to a socket address; says
 * what is wrong with it on stderr. */
static int resolve_option(const char *opt, const char *spec, uint16_t default_port, unsigned flags,
                          int socktype, struct sockaddr_storage *ss, socklen_t *sl)
{
    char err[400];
    if (kn_hostport_lookup(spec, default_port, flags, socktype, ss, sl, err, sizeof err) != 0) {
        fprintf(stderr, "kenaf-replay: %s %s\n", opt, err);
        return -1;
    }
    return 0;
}

static bool is_to_robot_type(uint8_t t)
{
    return t < 0x80;
}

/* ---- --list ------------------------------------------------------------ */

static void list_capture(const struct kn_capfile *c)
{
    char a[80], b[80];
    printf("packets %llu (undecoded %llu, fragments %llu, neither UDP nor TCP %llu)\n",
           (unsigned long long)c->packets, (unsigned long long)c->undecoded,
           (unsigned long long)c->fragments, (unsigned long long)c->other_proto);
    size_t krp = 0;
    for (size_t i = 0; i < c->ndg; i++)
        krp += c->dg[i].krp;
    printf("UDP datagrams %zu, KRP/1 %zu\n", c->ndg, krp);
    /* pairs robot <- controller with counts */
    struct pair {
        struct kn_pcap_endpoint robot, ctl;
        size_t to_robot, from_robot;
    } pairs[128];
    size_t np = 0;
    for (size_t i = 0; i < c->ndg; i++) {
        const struct kn_capfile_dgram *d = &c->dg[i];
        if (!d->krp || d->len < 4)
            continue;
        bool to = is_to_robot_type(d->data[3]);
        const struct kn_pcap_endpoint *robot = to ? &d->dst : &d->src,
                                      *ctl = to ? &d->src : &d->dst;
        size_t k = 0;
        while (k < np && !(kn_capfile_endpoint_equal(&pairs[k].robot, robot) &&
                           kn_capfile_endpoint_equal(&pairs[k].ctl, ctl)))
            k++;
        if (k == np) {
            if (np == 128)
                continue;
            memset(&pairs[np], 0, sizeof pairs[np]);
            pairs[np].robot = *robot;
            pairs[np].ctl = *ctl;
            np++;
        }
        if (to)
            pairs[k].to_robot++;
        else
            pairs[k].from_robot++;
    }
    for (size_t k = 0; k < np; k++) {
        kn_capfile_endpoint_format(&pairs[k].robot, a, sizeof a);
        kn_capfile_endpoint_format(&pairs[k].ctl, b, sizeof b);
        printf("robot %s <- controller %s: %zu datagrams in, %zu out\n", a, b, pairs[k].to_robot,
               pairs[k].from_robot);
    }
    for (size_t i = 0; i < c->nsess; i++) {
        const struct kn_capfile_session *s = &c->sess[i];
        kn_capfile_endpoint_format(&s->client, a, sizeof a);
        kn_capfile_endpoint_format(&s->server, b, sizeof b);
        double dur = s->nseg ? (double)(s->seg[s->nseg - 1].t_ns - s->t_start) / 1e9 : 0;
        printf("session %zu: %s -> %s, %.3f s, %zu bytes to the server, %zu from it, %zu segments"
               "%s\n",
               i, a, b, dur, s->bytes_to_server, s->bytes_from_server, s->nseg,
               s->gaps ? " (bytes missing)" : "");
    }
}

/* ---- controller replay -------------------------------------------------- */

struct ctl {
    struct kn_pcap_endpoint ep; /* as captured */
    int fd;
    uint32_t last_hello_cap, last_hello_live;
    size_t answered_live;  /* answers (not pushes) received */
    struct kn_retoken tok; /* captured session token -> live one */
};

struct opts {
    const char *robot;
    const char *capture_robot;
    bool fast;
    double speed;
    int linger_ms;
    int max_report;
    bool json;
    /* serve-sim */
    const char *listen;
    long session;
    int sync_gap_ms;
    const char *log;
    bool once, close_at_end;
};

/* Whether e's address is the IP address host. */
static bool endpoint_is(const struct kn_pcap_endpoint *e, const char *host)
{
    unsigned char a[16];
    if (e->family == 4)
        return inet_pton(AF_INET, host, a) == 1 && memcmp(a, e->addr, 4) == 0;
    if (e->family == 6)
        return inet_pton(AF_INET6, host, a) == 1 && memcmp(a, e->addr, 16) == 0;
    return false;
}

static int pick_robot(const struct kn_capfile *c, const char *want, struct kn_pcap_endpoint *out)
{
    struct kn_pcap_endpoint robots[64];
    size_t n = 0;
    for (size_t i = 0; i < c->ndg; i++) {
        const struct kn_capfile_dgram *d = &c->dg[i];
        if (!d->krp || d->len < 4)
            continue;
        const struct kn_pcap_endpoint *r = is_to_robot_type(d->data[3]) ? &d->dst : &d->src;
        size_t k = 0;
        while (k < n && !kn_capfile_endpoint_equal(&robots[k], r))
            k++;
        if (k == n && n < 64)
            robots[n++] = *r;
    }
    char a[80];
    if (want) {
        char host[INET6_ADDRSTRLEN + 16], err[300];
        uint16_t port;
        if (kn_hostport_parse_flags(
                want, 0, KN_HOSTPORT_NEED_PORT | KN_HOSTPORT_IP_ONLY | KN_HOSTPORT_PORT_ALONE, host,
                sizeof host, &port, err, sizeof err) != 0) {
            fprintf(stderr, "kenaf-replay: --capture-robot %s\n", err);
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            if (robots[k].port == port && (!host[0] || endpoint_is(&robots[k], host))) {
                *out = robots[k];
                return 0;
            }
        }
        fprintf(stderr, "kenaf-replay: no robot %s in the capture\n", want);
        return -1;
    }
    if (n == 1) {
        *out = robots[0];
        return 0;
    }
    if (n == 0) {
        fprintf(stderr, "kenaf-replay: the capture holds no KRP/1 datagrams\n");
        return -1;
    }
    fprintf(stderr,
            "kenaf-replay: the capture holds %zu robots; pick one with --capture-robot:", n);
    for (size_t k = 0; k < n; k++) {
        kn_capfile_endpoint_format(&robots[k], a, sizeof a);
        fprintf(stderr, " %s", a);
    }
    fprintf(stderr, "\n");
    return -1;
}

struct live_answer {
    int ctl;
    uint32_t last_hello;
    size_t len;
    uint8_t data[KN_KRP_MAX_DGRAM];
};

struct live {
    struct live_answer *a;
    size_t n, cap;
    size_t pushes;
    size_t undecodable;
};

static void drain(struct ctl *ctls, size_t nctl, struct live *lv, int timeout_ms)
{
    struct pollfd pf[MAX_CTL];
    for (size_t k = 0; k < nctl; k++) {
        pf[k].fd = ctls[k].fd;
        pf[k].events = POLLIN;
        pf[k].revents = 0;
    }
    int r = poll(pf, (nfds_t)nctl, timeout_ms < 0 ? 0 : timeout_ms);
    if (r <= 0)
        return;
    for (size_t k = 0; k < nctl; k++) {
        if (!(pf[k].revents & POLLIN))
            continue;
        for (;;) {
            uint8_t buf[2048];
            ssize_t n = recv(ctls[k].fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break; /* EAGAIN, or an ICMP error from an absent robot */
            if (n > KN_KRP_MAX_DGRAM) {
                lv->undecodable++;
                continue;
            }
            struct kn_compare_answer probe;
            enum kn_compare_kind kind = kn_compare_describe(buf, (size_t)n, 0, &probe);
            if (kind == KN_COMPARE_PUSH) {
                lv->pushes++;
                continue;
            }
            if (kind == KN_COMPARE_UNDECODABLE) {
                lv->undecodable++;
                continue;
            }
            if (lv->n == lv->cap) {
                size_t nc = lv->cap ? lv->cap * 2 : 256;
                struct live_answer *na = realloc(lv->a, nc * sizeof *na);
                if (!na)
                    return;
                lv->a = na;
                lv->cap = nc;
            }
            struct kn_krp_msg m;
            if (buf[3] == KN_KRP_HELLO_ACK && kn_krp_decode(buf, (size_t)n, &m) == KN_KRP_OK &&
                m.u.hello_ack.session)
                kn_retoken_live(&ctls[k].tok, ctls[k].last_hello_live, m.u.hello_ack.token);
            struct live_answer *la = &lv->a[lv->n++];
            la->ctl = (int)k;
            la->last_hello = ctls[k].last_hello_live;
            la->len = (size_t)n;
            memcpy(la->data, buf, (size_t)n);
            ctls[k].answered_live++;
        }
    }
}

static void sleep_until(uint64_t t, struct ctl *ctls, size_t nctl, struct live *lv)
{
    for (;;) {
        uint64_t now = mono_ns();
        if (now >= t)
            return;
        uint64_t ms = (t - now) / 1000000u;
        if (ms == 0) {
            struct timespec ts = { 0, (long)(t - now) };
            nanosleep(&ts, NULL);
            drain(ctls, nctl, lv, 0);
            return;
        }
        drain(ctls, nctl, lv, (int)(ms > 100 ? 100 : ms));
    }
}

/* The seq of a KRP/1 datagram (header bytes 4..7, little-endian; len >= 12). */
static uint32_t dgram_seq(const uint8_t *d)
{
    return (uint32_t)d[4] | ((uint32_t)d[5] << 8) | ((uint32_t)d[6] << 16) | ((uint32_t)d[7] << 24);
}

/* What a controller replay sends and what the capture says came back. */
struct sendplan {
    struct ctl *ctls; /* the captured controllers, one socket each */
    size_t nctl, skipped_ctl;
    size_t *send_idx; /* datagrams to send, in capture order */
    int *send_ctl;    /* ... and from which controller */
    size_t *expect;   /* captured answers to each (for --fast) */
    size_t nsend;
    struct kn_compare_answer *cap_ans;
    size_t ncap, cap_pushes;
};

static void plan_free(struct sendplan *pl)
{
    for (size_t k = 0; k < pl->nctl; k++)
        if (pl->ctls[k].fd >= 0)
            close(pl->ctls[k].fd);
    free(pl->send_idx);
    free(pl->send_ctl);
    free(pl->expect);
    free(pl->cap_ans);
}

/* Controller k of the plan for endpoint peer, added when to_robot (a
 * controller is someone who sent); -1 when there is none or no room. */
static int plan_ctl(struct sendplan *pl, const struct kn_pcap_endpoint *peer, bool to_robot)
{
    size_t k = 0;
    while (k < pl->nctl && !kn_capfile_endpoint_equal(&pl->ctls[k].ep, peer))
        k++;
    if (k < pl->nctl)
        return (int)k;
    if (!to_robot)
        return -1; /* answers to someone who never sent anything we saw */
    if (pl->nctl == MAX_CTL) {
        pl->skipped_ctl++;
        return -1;
    }
    memset(&pl->ctls[k], 0, sizeof pl->ctls[k]);
    pl->ctls[k].ep = *peer;
    pl->ctls[k].fd = -1;
    pl->nctl++;
    return (int)k;
}

/* For --fast: counts captured answer a against the datagram it answers,
 * the latest from its controller with that seq (or, for an answer that
 * names no seq, the latest from that controller). */
static void plan_expect(const struct kn_capfile *c, struct sendplan *pl,
                        const struct kn_compare_answer *a)
{
    bool header = strncmp(a->key, "header#", 7) == 0;
    for (size_t s = pl->nsend; s-- > 0;) {
        const struct kn_capfile_dgram *q = &c->dg[pl->send_idx[s]];
        if (pl->send_ctl[s] != a->ctl)
            continue;
        if (header) {
            pl->expect[s]++;
            return;
        }
        if (q->len < 12)
            continue;
        char key[40];
        const char *tn = kn_krp_type_name(q->data[3]);
        snprintf(key, sizeof key, "%s#%u", tn ? tn : "?", dgram_seq(q->data));
        if (strcmp(key, a->key) == 0) {
            pl->expect[s]++;
            return;
        }
    }
}

/* The datagrams to robot in the capture, their controllers and the
 * robot's captured answers. 0, or 2 after saying why. */
static int plan_from_capture(const struct kn_capfile *c, const struct kn_pcap_endpoint *robot,
                             struct sendplan *pl)
{
    static struct ctl ctls[MAX_CTL];
    size_t n = c->ndg ? c->ndg : 1;
    *pl = (struct sendplan){ .ctls = ctls };
    pl->send_idx = malloc(n * sizeof *pl->send_idx);
    pl->send_ctl = malloc(n * sizeof *pl->send_ctl);
    pl->expect = calloc(n, sizeof *pl->expect);
    pl->cap_ans = malloc(n * sizeof *pl->cap_ans);
    if (!pl->send_idx || !pl->send_ctl || !pl->expect || !pl->cap_ans) {
        fprintf(stderr, "kenaf-replay: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < c->ndg; i++) {
        const struct kn_capfile_dgram *d = &c->dg[i];
        bool to_robot = kn_capfile_endpoint_equal(&d->dst, robot);
        if (!to_robot && !kn_capfile_endpoint_equal(&d->src, robot))
            continue;
        int k = plan_ctl(pl, to_robot ? &d->src : &d->dst, to_robot);
        if (k < 0)
            continue;
        if (to_robot) {
            if (d->krp && d->len >= 12 && d->data[3] == KN_KRP_HELLO)
                pl->ctls[k].last_hello_cap = dgram_seq(d->data);
            pl->send_idx[pl->nsend] = i;
            pl->send_ctl[pl->nsend] = k;
            pl->nsend++;
            continue;
        }
        struct kn_compare_answer a;
        enum kn_compare_kind kind =
            kn_compare_describe(d->data, d->len, pl->ctls[k].last_hello_cap, &a);
        if (kind == KN_COMPARE_PUSH) {
            pl->cap_pushes++;
        } else if (kind == KN_COMPARE_ANSWER) {
            struct kn_krp_msg m;
            if (d->data[3] == KN_KRP_HELLO_ACK && kn_krp_decode(d->data, d->len, &m) == KN_KRP_OK &&
                m.u.hello_ack.session)
                kn_retoken_captured(&pl->ctls[k].tok, pl->ctls[k].last_hello_cap,
                                    m.u.hello_ack.token);
            a.ctl = k;
            pl->cap_ans[pl->ncap++] = a;
            plan_expect(c, pl, &a);
        }
    }
    if (pl->nsend == 0) {
        fprintf(stderr, "kenaf-replay: no datagrams to the robot in the capture\n");
        return 2;
    }
    if (pl->skipped_ctl)
        fprintf(stderr, "kenaf-replay: more than %d controllers; %zu datagrams left out\n", MAX_CTL,
                pl->skipped_ctl);
    return 0;
}

/* One connected UDP socket per controller. 0, or 2 after saying why. */
static int open_sockets(struct sendplan *pl, const struct sockaddr_storage *target, socklen_t tl)
{
    for (size_t k = 0; k < pl->nctl; k++) {
        pl->ctls[k].fd = socket(target->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (pl->ctls[k].fd < 0 ||
            connect(pl->ctls[k].fd, (const struct sockaddr *)target, tl) < 0) {
            fprintf(stderr, "kenaf-replay: socket: %s\n", strerror(errno));
            return 2;
        }
        int rcv = 1 << 20;
        setsockopt(pl->ctls[k].fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    }
    return 0;
}

struct sent {
    uint64_t first_send, sent_at; /* monotonic ns */
    size_t errors;
    size_t tokens_rewritten, tokens_unknown; /* datagrams with a session token */
};

/* How long a datagram of a session waits for the live HELLO_ACK that
 * gives its token. */
#define TOKEN_WAIT_MS 1000

/* The datagram as it goes out: in buf, with the live session token in
 * place of the captured one; every other byte as captured. */
static size_t retoken(const struct kn_capfile_dgram *d, struct ctl *ct, struct sendplan *pl,
                      struct live *lv, struct sent *st, uint8_t *buf)
{
    memcpy(buf, d->data, d->len);
    if (!d->krp)
        return d->len;
    uint64_t until = mono_ns() + (uint64_t)TOKEN_WAIT_MS * 1000000u;
    enum kn_retoken_result r;
    while ((r = kn_retoken_apply(&ct->tok, buf, d->len)) == KN_RETOKEN_WAIT) {
        if (mono_ns() >= until) {
            /* the robot gave no session (or no answer): the captured
             * token goes out, and the answers will say so */
            kn_retoken_keep(&ct->tok, buf, d->len);
            continue;
        }
        drain(pl->ctls, pl->nctl, lv, 5);
    }
    if (r == KN_RETOKEN_REWRITTEN)
        st->tokens_rewritten++;
    else if (r != KN_RETOKEN_NONE)
        st->tokens_unknown++;
    return d->len;
}

/* Sends the plan with the captured timing (scaled by --speed) or, with
 * --fast, each datagram once its answers are in (or 50 ms); collects what
 * comes back in lv, until --linger-ms after the last. */
static void send_plan(const struct kn_capfile *c, const struct opts *o, struct sendplan *pl,
                      struct live *lv, struct sent *st)
{
    uint64_t t_first = c->dg[pl->send_idx[0]].t_ns;
    uint64_t start = mono_ns() + (o->fast ? 0 : 20000000u);
    *st = (struct sent){ 0 };
    for (size_t s = 0; s < pl->nsend; s++) {
        const struct kn_capfile_dgram *d = &c->dg[pl->send_idx[s]];
        struct ctl *ct = &pl->ctls[pl->send_ctl[s]];
        if (!o->fast) {
            uint64_t off = d->t_ns > t_first ? d->t_ns - t_first : 0;
            sleep_until(start + (uint64_t)((double)off / o->speed), pl->ctls, pl->nctl, lv);
        }
        if (d->krp && d->len >= 12 && d->data[3] == KN_KRP_HELLO)
            ct->last_hello_live = dgram_seq(d->data);
        size_t before = ct->answered_live;
        if (s == 0)
            st->first_send = mono_ns();
        uint8_t out[KN_KRP_MAX_DGRAM + 64];
        size_t outlen = d->len <= sizeof out ? retoken(d, ct, pl, lv, st, out) : 0;
        if (send(ct->fd, outlen ? out : d->data, outlen ? outlen : d->len, 0) < 0)
            st->errors++;
        if (o->fast) {
            uint64_t until = mono_ns() + 50000000u, min_gap = mono_ns() + 200000u;
            while (ct->answered_live - before < pl->expect[s] && mono_ns() < until)
                drain(pl->ctls, pl->nctl, lv, 5);
            sleep_until(min_gap, pl->ctls, pl->nctl, lv);
        }
    }
    st->sent_at = mono_ns();
    sleep_until(st->sent_at + (uint64_t)o->linger_ms * 1000000u, pl->ctls, pl->nctl, lv);
}

/* The live answers (not pushes) as comparison entries; NULL when out of memory. */
static struct kn_compare_answer *live_answers(const struct live *lv, size_t *nrep)
{
    struct kn_compare_answer *rep = malloc((lv->n ? lv->n : 1) * sizeof *rep);
    *nrep = 0;
    if (!rep)
        return NULL;
    for (size_t i = 0; i < lv->n; i++) {
        if (kn_compare_describe(lv->a[i].data, lv->a[i].len, lv->a[i].last_hello, &rep[*nrep]) ==
            KN_COMPARE_ANSWER) {
            rep[*nrep].ctl = lv->a[i].ctl;
            (*nrep)++;
        }
    }
    return rep;
}

/* What was sent, the divergences and the counts (and one JSON line with
 * --json); fills res. */
static void report(const struct kn_capfile *c, const struct opts *o,
                   const struct kn_pcap_endpoint *robot, struct sendplan *pl, const struct sent *st,
                   const struct live *lv, struct kn_compare_answer *rep, size_t nrep,
                   struct kn_compare_result *res)
{
    uint64_t t_first = c->dg[pl->send_idx[0]].t_ns;
    uint64_t t_last = c->dg[pl->send_idx[pl->nsend - 1]].t_ns;
    char where[80];
    kn_capfile_endpoint_format(robot, where, sizeof where);
    printf("kenaf-replay: sent %zu datagrams from %zu controller(s) of robot %s to %s in %.3f s "
           "(captured: %.3f s)%s\n",
           pl->nsend, pl->nctl, where, o->robot, (double)(st->sent_at - st->first_send) / 1e9,
           (double)(t_last - t_first) / 1e9, st->errors ? " (some sends failed)" : "");
    printf("kenaf-replay: divergences:\n");
    kn_compare_answers(pl->cap_ans, pl->ncap, rep, nrep, res, stdout, o->max_report);
    if (res->requests_diverging == 0)
        printf("  none\n");
    printf("kenaf-replay: %zu requests answered: %zu match, %zu diverge\n", res->requests,
           res->requests_matching, res->requests_diverging);
    printf("kenaf-replay: answers captured %zu, replayed %zu: %zu match, %zu missing, %zu extra; "
           "pushes captured %zu, replayed %zu\n",
           res->answers_captured, res->answers_replayed, res->answers_matching,
           res->answers_missing, res->answers_extra, pl->cap_pushes, lv->pushes);
    if (st->tokens_rewritten || st->tokens_unknown)
        printf("kenaf-replay: session tokens: %zu datagrams carried the live robot's token, %zu "
               "the captured one (no live session for it)\n",
               st->tokens_rewritten, st->tokens_unknown);
    if (o->json)
        printf("{\"sent\":%zu,\"controllers\":%zu,\"requests\":%zu,\"requests_matching\":%zu,"
               "\"requests_diverging\":%zu,\"answers_captured\":%zu,\"answers_replayed\":%zu,"
               "\"answers_matching\":%zu,\"answers_missing\":%zu,\"answers_extra\":%zu,"
               "\"pushes_captured\":%zu,\"pushes_replayed\":%zu,\"send_errors\":%zu,"
               "\"tokens_rewritten\":%zu,\"tokens_unknown\":%zu}\n",
               pl->nsend, pl->nctl, res->requests, res->requests_matching, res->requests_diverging,
               res->answers_captured, res->answers_replayed, res->answers_matching,
               res->answers_missing, res->answers_extra, pl->cap_pushes, lv->pushes, st->errors,
               st->tokens_rewritten, st->tokens_unknown);
    fflush(stdout);
}

static int replay_controllers(const struct kn_capfile *c, const struct opts *o)
{
    struct kn_pcap_endpoint robot;
    if (pick_robot(c, o->capture_robot, &robot) < 0)
        return 2;
    struct sockaddr_storage target;
    socklen_t tl;
    if (resolve_option("--robot", o->robot, KN_KRP_DEFAULT_PORT, 0, SOCK_DGRAM, &target, &tl) < 0)
        return 2;
    struct sendplan pl;
    int rc = plan_from_capture(c, &robot, &pl);
    if (rc == 0)
        rc = open_sockets(&pl, &target, tl);
    if (rc != 0) {
        plan_free(&pl);
        return rc;
    }
    struct live lv = { 0 };
    struct sent st;
    send_plan(c, o, &pl, &lv, &st);
    size_t nrep;
    struct kn_compare_answer *rep = live_answers(&lv, &nrep);
    if (!rep) {
        fprintf(stderr, "kenaf-replay: out of memory\n");
        plan_free(&pl);
        free(lv.a);
        return 2;
    }
    struct kn_compare_result res;
    report(c, o, &robot, &pl, &st, &lv, rep, nrep, &res);
    plan_free(&pl);
    free(rep);
    free(lv.a);
    return res.requests_diverging ? 1 : 0;
}

/* ---- serve-sim ---------------------------------------------------------- */

struct play {
    const struct kn_capfile_session *s;
    size_t *need;      /* per segment from the server: daemon bursts it waits for */
    uint64_t *burst_t; /* capture time of burst k (1-based) */
    size_t nbursts;
};

static void plan(struct play *p, const struct kn_capfile_session *s, int gap_ms)
{
    p->s = s;
    p->need = calloc(s->nseg ? s->nseg : 1, sizeof *p->need);
    p->burst_t = calloc(s->nseg + 2, sizeof *p->burst_t);
    p->nbursts = 0;
    uint64_t gap = (uint64_t)gap_ms * 1000000u, last = 0;
    bool any = false;
    for (size_t i = 0; i < s->nseg; i++) {
        const struct kn_capfile_segment *g = &s->seg[i];
        if (!g->from_server) {
            if (gap_ms > 0 && (!any || g->t_ns - last >= gap))
                p->burst_t[++p->nbursts] = g->t_ns;
            any = true;
            last = g->t_ns;
            continue;
        }
        p->need[i] = p->nbursts;
    }
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            if (poll(&pf, 1, 5000) <= 0)
                return -1;
            continue;
        }
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int open_listener(const char *spec)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (resolve_option("--listen", spec, 0, KN_HOSTPORT_PORT_ZERO, SOCK_STREAM, &ss, &sl) < 0)
        return -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 4) < 0) {
        fprintf(stderr, "kenaf-replay: cannot listen on %s: %s\n", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct sockaddr_storage b;
    socklen_t bl = sizeof b;
    /* a failure would leave b unset and print a port read from garbage */
    if (getsockname(fd, (struct sockaddr *)&b, &bl) < 0) {
        fprintf(stderr, "kenaf-replay: getsockname: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    /* getsockname filled b, which the analyzer does not model */
    /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
    int port = b.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&b)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&b)->sin_port);
    printf("PORT %d\n", port);
    fflush(stdout);
    return fd;
}

/* One connection: plays the session; returns when the daemon closes it,
 * a new connection arrives (*next_fd set), or on a stop signal. */
static void serve_one(int fd, int lfd, const struct play *p, const struct opts *o, FILE *log,
                      int *next_fd)
{
    const struct kn_capfile_session *s = p->s;
    uint64_t t0 = mono_ns(), shift = 0, gap = (uint64_t)o->sync_gap_ms * 1000000u;
    uint64_t last_read = 0;
    size_t live_bursts = 0, i = 0, sent = 0, held = 0;
    bool playing = true;
    while (!stop_flag) {
        /* the next segment from the simulator */
        while (i < s->nseg && !s->seg[i].from_server)
            i++;
        uint64_t due = UINT64_MAX;
        bool hold = false;
        if (playing && i < s->nseg) {
            const struct kn_capfile_segment *g = &s->seg[i];
            if (p->need[i] > live_bursts) {
                hold = true;
            } else {
                uint64_t off = g->t_ns > s->t_start ? g->t_ns - s->t_start : 0;
                due = o->fast ? 0 : t0 + (uint64_t)((double)off / o->speed) + shift;
            }
        } else if (playing) {
            playing = false;
            fprintf(stderr, "kenaf-replay: session played (%zu segments%s)\n", sent,
                    held ? ", synchronised with the daemon" : "");
            if (o->close_at_end)
                return;
        }
        uint64_t now = mono_ns();
        if (!hold && due <= now) {
            const struct kn_capfile_segment *g = &s->seg[i];
            if (write_all(fd, g->data, g->len) < 0) {
                fprintf(stderr, "kenaf-replay: writing to kenaf-simd: %s\n", strerror(errno));
                return;
            }
            sent++;
            i++;
            continue;
        }
        int timeout = -1;
        if (!hold && due != UINT64_MAX) {
            uint64_t ms = (due - now + 999999u) / 1000000u;
            timeout = ms > 1000 ? 1000 : (int)ms;
        } else {
            timeout = 1000;
        }
        struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };
        int r = poll(pf, 2, timeout);
        if (r < 0 && errno != EINTR)
            return;
        if (r <= 0)
            continue;
        if (pf[1].revents & POLLIN) {
            int nfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (nfd >= 0) {
                fprintf(stderr, "kenaf-replay: new connection; playing the session again\n");
                *next_fd = nfd;
                return;
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            uint8_t buf[16384];
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fprintf(stderr, "kenaf-replay: kenaf-simd closed the connection\n");
                return;
            }
            uint64_t t = mono_ns();
            if (log) {
                fprintf(log, "%llu ", (unsigned long long)(t / 1000u));
                fwrite(buf, 1, (size_t)n, log);
                if (buf[n - 1] != '\n')
                    fputc('\n', log);
                fflush(log);
            }
            if (gap && (live_bursts == 0 || t - last_read >= gap)) {
                live_bursts++;
                /* a hold ends: carry on from where the captured burst began */
                if (live_bursts <= p->nbursts && i < s->nseg && p->need[i] >= live_bursts) {
                    uint64_t bo = p->burst_t[live_bursts] > s->t_start
                                      ? p->burst_t[live_bursts] - s->t_start
                                      : 0;
                    uint64_t at = t0 + (uint64_t)((double)bo / o->speed) + shift;
                    if (t > at) {
                        shift += t - at;
                        held++;
                    }
                }
            }
            last_read = t;
        }
    }
}

static int serve_sim(const struct kn_capfile *c, const struct opts *o)
{
    long pick = o->session;
    if (pick < 0) {
        for (size_t i = 0; i < c->nsess && pick < 0; i++)
            if (c->sess[i].bytes_from_server > 0)
                pick = (long)i;
        if (pick < 0) {
            fprintf(stderr, "kenaf-replay: the capture holds no TCP session with data from a "
                            "simulator\n");
            return 2;
        }
    }
    if ((size_t)pick >= c->nsess) {
        fprintf(stderr, "kenaf-replay: --session %ld: the capture has %zu sessions\n", pick,
                c->nsess);
        return 2;
    }
    struct play p;
    plan(&p, &c->sess[pick], o->sync_gap_ms);
    FILE *log = NULL;
    int lfd = -1;
    if (!p.need || !p.burst_t) {
        fprintf(stderr, "kenaf-replay: out of memory\n");
    } else if (o->log && !(log = fopen(o->log, "w"))) {
        fprintf(stderr, "kenaf-replay: %s: %s\n", o->log, strerror(errno));
    } else {
        lfd = open_listener(o->listen);
    }
    if (lfd < 0) {
        if (log)
            fclose(log);
        free(p.need);
        free(p.burst_t);
        return 2;
    }
    char a[80], b[80];
    kn_capfile_endpoint_format(&c->sess[pick].client, a, sizeof a);
    kn_capfile_endpoint_format(&c->sess[pick].server, b, sizeof b);
    fprintf(stderr, "kenaf-replay: serving session %ld (%s -> %s, %zu bytes from the simulator)\n",
            pick, a, b, c->sess[pick].bytes_from_server);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int fd = -1;
    while (!stop_flag) {
        if (fd < 0) {
            struct pollfd pf = { .fd = lfd, .events = POLLIN };
            if (poll(&pf, 1, 1000) <= 0)
                continue;
            fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0)
                continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int next = -1;
        serve_one(fd, lfd, &p, o, log, &next);
        close(fd);
        fd = next;
        if (o->once && next < 0)
            break;
    }
    if (fd >= 0)
        close(fd);
    close(lfd);
    if (log)
        fclose(log);
    free(p.need);
    free(p.burst_t);
    return 0;
}

/* 0 parsed, 1 --help printed, 2 usage error (said on stderr). */
static int parse_args(int argc, char **argv, struct opts *o, bool *serve, bool *list)
{
    enum {
        O_ROBOT = 1000,
        O_CAPROBOT,
        O_FAST,
        O_SPEED,
        O_LINGER,
        O_MAXREP,
        O_JSON,
        O_SERVE,
        O_LISTEN,
        O_SESSION,
        O_SYNC,
        O_LOG,
        O_ONCE,
        O_CLOSE,
        O_LIST
    };
    static const struct option lo[] = {
        { "robot", required_argument, NULL, O_ROBOT },
        { "capture-robot", required_argument, NULL, O_CAPROBOT },
        { "fast", no_argument, NULL, O_FAST },
        { "speed", required_argument, NULL, O_SPEED },
        { "linger-ms", required_argument, NULL, O_LINGER },
        { "max-report", required_argument, NULL, O_MAXREP },
        { "json", no_argument, NULL, O_JSON },
        { "serve-sim", no_argument, NULL, O_SERVE },
        { "listen", required_argument, NULL, O_LISTEN },
        { "session", required_argument, NULL, O_SESSION },
        { "sync-gap-ms", required_argument, NULL, O_SYNC },
        { "log", required_argument, NULL, O_LOG },
        { "once", no_argument, NULL, O_ONCE },
        { "close-at-end", no_argument, NULL, O_CLOSE },
        { "list", no_argument, NULL, O_LIST },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *o = (struct opts){
        .robot = "127.0.0.1:9750",
        .speed = 1.0,
        .linger_ms = 1000,
        .max_report = 20,
        .listen = "127.0.0.1:0",
        .session = -1,
        .sync_gap_ms = 300,
    };
    *serve = *list = false;
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_ROBOT: o->robot = optarg; break;
        case O_CAPROBOT: o->capture_robot = optarg; break;
        case O_FAST: o->fast = true; break;
        case O_SPEED:
            o->speed = strtod(optarg, &end);
            if (*end || !(o->speed >= 0.01 && o->speed <= 1000)) {
                fprintf(stderr, "kenaf-replay: --speed: expected 0.01..1000\n");
                return 2;
            }
            break;
        case O_LINGER:
        case O_MAXREP:
        case O_SYNC:
        case O_SESSION: {
            long v = strtol(optarg, &end, 10);
            if (*end || !*optarg || v < 0 || v > 3600000) {
                fprintf(stderr, "kenaf-replay: %s: expected a number 0..3600000\n",
                        argv[optind - 1]);
                return 2;
            }
            if (ch == O_LINGER)
                o->linger_ms = (int)v;
            else if (ch == O_MAXREP)
                o->max_report = (int)v;
            else if (ch == O_SYNC)
                o->sync_gap_ms = (int)v;
            else
                o->session = v;
            break;
        }
        case O_JSON: o->json = true; break;
        case O_SERVE: *serve = true; break;
        case O_LISTEN: o->listen = optarg; break;
        case O_LOG: o->log = optarg; break;
        case O_ONCE: o->once = true; break;
        case O_CLOSE: o->close_at_end = true; break;
        case O_LIST: *list = true; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    if (*serve && *list) {
        fprintf(stderr, "kenaf-replay: --serve-sim and --list exclude each other\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    bool serve, list;
    int rc = parse_args(argc, argv, &o, &serve, &list);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    signal(SIGPIPE, SIG_IGN);
    struct kn_capfile cap;
    char err[300];
    if (kn_capfile_load(argv[optind], &cap, err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-replay: %s\n", err);
        return 2;
    }
    if (list) {
        list_capture(&cap);
        rc = 0;
    } else if (serve) {
        rc = serve_sim(&cap, &o);
    } else {
        rc = replay_controllers(&cap, &o);
    }
    kn_capfile_free(&cap);
    return rc;
}
