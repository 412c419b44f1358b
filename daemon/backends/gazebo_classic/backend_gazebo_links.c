/* The gazebo backend's data plane (as Gazebo Classic's transport serves a
 * subscription: gazebo/transport's Publication and Connection): our own data
 * server, where Gazebo's subscribers (the tracked-vehicle plugin, the
 * joint controller, the World for world_control) connect and send one
 * "sub" packet, after which we write them bare messages; and one data
 * link per remote publisher of each topic we subscribe to, opened only
 * for the publishers the master named (a "sub" for a topic a process does
 * not publish crashes gzserver), which sends "sub" and then reads bare
 * messages. A data link that fails is opened again (with back-off) until
 * the master says the publisher is gone. */
#include "backend_gazebo_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct wreq {
    uv_write_t req;
    char data[];
};

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct gzc *b = *(struct gzc **)h->data; /* sublink and publink start with b */
    buf->base = (char *)b->rbuf;
    buf->len = sizeof b->rbuf;
}

static int find_topic(const struct gzc *b, const char *name, bool publish)
{
    for (int i = 0; i < GZC_NTOPICS; i++)
        if (b->topic[i].publish == publish && strcmp(b->topic[i].name, name) == 0)
            return i;
    return -1;
}

static void addr_name(const struct sockaddr_storage *ss, char *out, size_t cap, uint16_t *port)
{
    out[0] = '\0';
    *port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, out, cap);
        *port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, out, cap);
        *port = ntohs(a->sin6_port);
    }
}

/* ---- our data server: remote subscribers -------------------------------- */

static void on_server_closed(uv_handle_t *h)
{
    struct gzc *b = h->data;
    free(h);
    kn_gazebo_handle_closed(b);
}

static void on_publink_closed(uv_handle_t *h)
{
    struct gzc_publink *pl = h->data;
    struct gzc *b = pl->b;
    for (struct gzc_publink **pp = &b->publinks; *pp; pp = &(*pp)->next)
        if (*pp == pl) {
            *pp = pl->next;
            break;
        }
    b->n_publinks--;
    free(pl);
    kn_gazebo_handle_closed(b);
}

static void publink_close(struct gzc_publink *pl)
{
    if (pl->closing)
        return;
    pl->closing = true;
    uv_close((uv_handle_t *)&pl->tcp, on_publink_closed);
}

static void replay_latest(struct gzc_publink *pl);

static void on_pub_written(uv_write_t *req, int status)
{
    struct gzc_publink *pl = req->handle->data;
    free(req);
    if (pl->closing)
        return;
    if (status < 0) {
        pl->b->pub_write_errors++;
        publink_close(pl);
        return;
    }
    if (pl->resend && uv_stream_get_write_queue_size((uv_stream_t *)&pl->tcp) == 0) {
        pl->resend = false;
        replay_latest(pl);
    }
}

static bool pub_write(struct gzc_publink *pl, const uint8_t *frame, size_t len)
{
    struct gzc *b = pl->b;
    uv_stream_t *s = (uv_stream_t *)&pl->tcp;
    if (pl->closing)
        return false;
    size_t queued = uv_stream_get_write_queue_size(s);
    if (queued > GZC_PUB_QUEUE_MAX) {
        /* the subscriber does not drain: drop, send the newest later */
        b->pub_dropped++;
        pl->resend = true;
        return false;
    }
    size_t off = 0;
    if (queued == 0) {
        uv_buf_t buf = uv_buf_init((char *)frame, (unsigned)len);
        int n = uv_try_write(s, &buf, 1);
        if (n >= 0) {
            off = (size_t)n;
        } else if (n != UV_EAGAIN) {
            b->pub_write_errors++;
            publink_close(pl);
            return false;
        }
    }
    if (off < len) {
        struct wreq *w = malloc(sizeof *w + (len - off));
        if (!w) {
            b->pub_dropped++;
            publink_close(pl); /* a half-written frame cannot be continued */
            return false;
        }
        memcpy(w->data, frame + off, len - off);
        uv_buf_t buf = uv_buf_init(w->data, (unsigned)(len - off));
        if (uv_write(&w->req, s, &buf, 1, on_pub_written) < 0) {
            free(w);
            b->pub_write_errors++;
            publink_close(pl);
            return false;
        }
    }
    b->pub_sent++;
    return true;
}

/* The latest set-points, for a subscriber that connected (or drained)
 * after they were sent. World control is an event, never replayed. */
static void replay_latest(struct gzc_publink *pl)
{
    struct gzc *b = pl->b;
    if (pl->topic == GZC_T_CMD && b->cmd_len)
        pub_write(pl, b->cmd_frame, b->cmd_len);
    if (pl->topic == GZC_T_JOINT)
        for (int k = 0; k < KN_NFLIPPERS; k++)
            if (b->joint_len[k])
                pub_write(pl, b->joint_frame[k], b->joint_len[k]);
}

static bool on_sub_packet(void *ctx, const uint8_t *p, size_t n)
{
    struct gzc_publink *pl = ctx;
    struct gzc *b = pl->b;
    struct kn_gzc_packet pk;
    Gazebo__Msgs__Subscribe *s = NULL;
    kn_pbarena_reset(&b->arena);
    if (kn_gzc_dec_packet(&b->arena, p, n, &pk) == 0 && strcmp(pk.type, KN_GZC_PKT_SUB) == 0)
        s = kn_gzc_dec_subscribe(&b->arena, pk.data, pk.len);
    int t = s ? find_topic(b, s->topic, true) : -1;
    if (t < 0 || strlen(s->host) >= sizeof pl->sub_host) {
        b->subs_bad++;
        kn_debug("robot %s: subscriber %s sent no valid \"sub\" for one of our topics", b->robot,
                 pl->peer);
        publink_close(pl);
        return false;
    }
    pl->topic = t;
    snprintf(pl->sub_host, sizeof pl->sub_host, "%s", s->host);
    pl->sub_port = s->port;
    b->subs_accepted++;
    kn_debug("robot %s: %s subscribed to %s", b->robot, pl->peer, b->topic[t].name);
    replay_latest(pl);
    return false; /* a publisher reads nothing after "sub" */
}

static void on_pub_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct gzc_publink *pl = st->data;
    if (pl->closing)
        return;
    if (nread < 0) {
        publink_close(pl); /* the subscriber left */
        return;
    }
    if (nread == 0 || pl->topic >= 0)
        return; /* Gazebo sends nothing after "sub"; whatever comes is ignored */
    kn_gzc_framer_feed(&pl->fr, (const uint8_t *)buf->base, (size_t)nread, on_sub_packet, pl);
    if (pl->fr.err && !pl->closing) {
        pl->b->subs_bad++;
        publink_close(pl);
    }
}

static void on_accept(uv_stream_t *server, int status)
{
    struct gzc *b = server->data;
    if (status < 0)
        return;
    struct gzc_publink *pl = calloc(1, sizeof *pl);
    if (!pl)
        return;
    pl->b = b;
    pl->topic = -1;
    uv_tcp_init(b->loop, &pl->tcp);
    pl->tcp.data = pl;
    b->handles++;
    b->n_publinks++;
    pl->next = b->publinks;
    b->publinks = pl;
    if (uv_accept(server, (uv_stream_t *)&pl->tcp) < 0) {
        publink_close(pl);
        return;
    }
    if (b->n_publinks > GZC_MAX_PUBLINKS || b->destroyed || !b->live) {
        b->subs_refused++;
        publink_close(pl);
        return;
    }
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    uint16_t port = 0;
    char host[64];
    if (uv_tcp_getpeername(&pl->tcp, (struct sockaddr *)&ss, &len) == 0)
        addr_name(&ss, host, sizeof host, &port);
    else
        snprintf(host, sizeof host, "?");
    snprintf(pl->peer, sizeof pl->peer, "%s:%u", host, port);
    kn_gzc_framer_init(&pl->fr, pl->buf, sizeof pl->buf);
    pl->accepted_ms = kn_gazebo_now_ms(b);
    uv_tcp_nodelay(&pl->tcp, 1);
    if (uv_read_start((uv_stream_t *)&pl->tcp, on_alloc, on_pub_read) < 0)
        publink_close(pl);
}

int kn_gazebo_server_open(struct gzc *b, char *err, size_t errlen)
{
    /* Gazebo's own rule: GAZEBO_HOSTNAME, else GAZEBO_IP, else an address
     * of this host; ours is the one the master link runs over, which the
     * master's host can reach by construction. */
    const char *hn = getenv("GAZEBO_HOSTNAME"), *ip = getenv("GAZEBO_IP");
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (ip && ip[0]) {
        if (uv_ip4_addr(ip, 0, (struct sockaddr_in *)&ss) != 0 &&
            uv_ip6_addr(ip, 0, (struct sockaddr_in6 *)&ss) != 0) {
            snprintf(err, errlen, "GAZEBO_IP=\"%.60s\" is not an IP address", ip);
            return -1;
        }
        snprintf(b->adv_host, sizeof b->adv_host, "%s", ip);
    } else if (hn && hn[0]) {
        uv_ip4_addr("0.0.0.0", 0, (struct sockaddr_in *)&ss);
    } else {
        uint16_t unused;
        if (kn_link_local_addr(b->link, &ss) != 0) {
            snprintf(err, errlen, "no local address for the data server");
            return -1;
        }
        addr_name(&ss, b->adv_host, sizeof b->adv_host, &unused);
        if (ss.ss_family == AF_INET)
            ((struct sockaddr_in *)&ss)->sin_port = 0;
        else
            ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    }
    if (hn && hn[0])
        snprintf(b->adv_host, sizeof b->adv_host, "%s", hn);

    uv_tcp_t *srv = malloc(sizeof *srv);
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uv_tcp_init(b->loop, srv);
    srv->data = b;
    b->handles++;
    int rc = uv_tcp_bind(srv, (struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)srv, 16, on_accept);
    struct sockaddr_storage bound;
    int len = (int)sizeof bound;
    if (rc == 0)
        rc = uv_tcp_getsockname(srv, (struct sockaddr *)&bound, &len);
    if (rc != 0) {
        snprintf(err, errlen, "data server on %s: %s", b->adv_host, uv_strerror(rc));
        uv_close((uv_handle_t *)srv, on_server_closed);
        return -1;
    }
    char unused[64];
    addr_name(&bound, unused, sizeof unused, &b->adv_port);
    b->server = srv;
    return 0;
}

/* ---- data links to publishers -------------------------------------------- */

static void sub_connect(struct gzc_sublink *sl);

static void free_sublink(struct gzc_sublink *sl)
{
    struct gzc *b = sl->b;
    for (struct gzc_sublink **pp = &b->sublinks; *pp; pp = &(*pp)->next)
        if (*pp == sl) {
            *pp = sl->next;
            break;
        }
    b->n_sublinks--;
    free(sl->buf);
    free(sl);
}

static void on_sub_closed(uv_handle_t *h)
{
    struct gzc_sublink *sl = h->data;
    struct gzc *b = sl->b;
    sl->tcp_open = false;
    if (sl->dead && !sl->gai_busy)
        free_sublink(sl);
    kn_gazebo_handle_closed(b);
}

static void sub_close_tcp(struct gzc_sublink *sl)
{
    sl->connected = false;
    if (sl->tcp_open && !uv_is_closing((uv_handle_t *)&sl->tcp))
        uv_close((uv_handle_t *)&sl->tcp, on_sub_closed);
}

/* The link failed: open it again later, while the publisher exists. */
static void sub_fail(struct gzc_sublink *sl, const char *why)
{
    struct gzc *b = sl->b;
    b->data_link_failures++;
    kn_debug("robot %s: data link to %s:%u for %s: %s; retrying", b->robot, sl->host, sl->port,
             b->topic[sl->topic].name, why);
    sub_close_tcp(sl);
    sl->retry_at_ms = kn_gazebo_now_ms(b) + sl->retry_ms;
    sl->retry_ms = sl->retry_ms * 2 > GZC_RETRY_MAX_MS ? GZC_RETRY_MAX_MS : sl->retry_ms * 2;
}

static void sub_kill(struct gzc_sublink *sl)
{
    sl->dead = true;
    sl->retry_at_ms = 0;
    if (sl->tcp_open)
        sub_close_tcp(sl);
    else if (!sl->gai_busy)
        free_sublink(sl);
}

static bool on_data_frame(void *ctx, const uint8_t *p, size_t n)
{
    struct gzc_sublink *sl = ctx;
    struct gzc *b = sl->b;
    kn_gazebo_on_data(b, sl->topic, p, n);
    return sl->connected && !sl->dead && !b->destroyed;
}

static void on_sub_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct gzc_sublink *sl = st->data;
    if (sl->dead || !sl->connected)
        return;
    if (nread < 0) {
        sub_fail(sl, nread == UV_EOF ? "closed by the publisher" : uv_strerror((int)nread));
        return;
    }
    kn_gzc_framer_feed(&sl->fr, (const uint8_t *)buf->base, (size_t)nread, on_data_frame, sl);
    if (sl->fr.err && sl->connected) {
        sl->b->data_bad_frames++;
        sl->b->topic[sl->topic].bad++;
        sub_fail(sl, kn_gzc_frame_strerror(sl->fr.err));
    }
}

static void on_sub_written(uv_write_t *req, int status)
{
    struct gzc_sublink *sl = req->handle->data;
    free(req);
    if (status < 0 && status != UV_ECANCELED && sl->connected && !sl->dead)
        sub_fail(sl, uv_strerror(status));
}

static void on_sub_connect(uv_connect_t *req, int status)
{
    struct gzc_sublink *sl = req->handle->data;
    struct gzc *b = sl->b;
    if (sl->dead || status == UV_ECANCELED || uv_is_closing((uv_handle_t *)&sl->tcp))
        return;
    if (status < 0) {
        sub_fail(sl, uv_strerror(status));
        return;
    }
    sl->connected = true;
    uv_tcp_nodelay(&sl->tcp, 1);
    /* "sub" names the local end of this very connection (Gazebo does so) */
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    char host[64] = "";
    uint16_t port = 0;
    if (uv_tcp_getsockname(&sl->tcp, (struct sockaddr *)&ss, &len) == 0)
        addr_name(&ss, host, sizeof host, &port);
    const struct gzc_topic *t = &b->topic[sl->topic];
    uint8_t frame[1024];
    struct kn_gzc_stamp stamp = { 0, 0 };
    size_t n = kn_gzc_enc_subscribe(frame, sizeof frame, stamp, KN_GZC_PKT_SUB, t->name, host, port,
                                    t->type, t->latching);
    struct wreq *w = n ? malloc(sizeof *w + n) : NULL;
    if (!w) {
        sub_fail(sl, "cannot build the sub packet");
        return;
    }
    memcpy(w->data, frame, n);
    uv_buf_t buf = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&sl->tcp, &buf, 1, on_sub_written) < 0) {
        free(w);
        sub_fail(sl, "write failed");
        return;
    }
    if (uv_read_start((uv_stream_t *)&sl->tcp, on_alloc, on_sub_read) < 0) {
        sub_fail(sl, "read failed");
        return;
    }
    b->data_links_opened++;
    sl->retry_ms = GZC_RETRY_FIRST_MS;
    kn_debug("robot %s: subscribed to %s at %s:%u", b->robot, t->name, sl->host, sl->port);
}

static void connect_addr(struct gzc_sublink *sl, const struct sockaddr *sa)
{
    struct gzc *b = sl->b;
    uv_tcp_init(b->loop, &sl->tcp);
    sl->tcp.data = sl;
    sl->tcp_open = true;
    b->handles++;
    kn_gzc_framer_reset(&sl->fr);
    int rc = uv_tcp_connect(&sl->creq, &sl->tcp, sa, on_sub_connect);
    if (rc < 0)
        sub_fail(sl, uv_strerror(rc));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct gzc_sublink *sl = req->data;
    struct gzc *b = sl->b;
    sl->gai_busy = false;
    if (sl->dead) {
        uv_freeaddrinfo(res);
        if (!sl->tcp_open)
            free_sublink(sl);
    } else if (status < 0 || !res) {
        uv_freeaddrinfo(res);
        sub_fail(sl, status < 0 ? uv_strerror(status) : "no address");
    } else {
        struct sockaddr_storage ss;
        memcpy(&ss, res->ai_addr, res->ai_addrlen);
        uv_freeaddrinfo(res);
        connect_addr(sl, (struct sockaddr *)&ss);
    }
    kn_gazebo_handle_closed(b); /* the lookup counted as a handle */
}

static void sub_connect(struct gzc_sublink *sl)
{
    struct gzc *b = sl->b;
    struct sockaddr_storage ss;
    if (uv_ip4_addr(sl->host, sl->port, (struct sockaddr_in *)&ss) == 0 ||
        uv_ip6_addr(sl->host, sl->port, (struct sockaddr_in6 *)&ss) == 0) {
        connect_addr(sl, (struct sockaddr *)&ss);
        return;
    }
    char port[8];
    snprintf(port, sizeof port, "%u", sl->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    sl->gai.data = sl;
    if (uv_getaddrinfo(b->loop, &sl->gai, on_resolved, sl->host, port, &hints) < 0) {
        sl->retry_at_ms = kn_gazebo_now_ms(b) + sl->retry_ms;
        b->data_link_failures++;
        return;
    }
    sl->gai_busy = true;
    b->handles++;
}

void kn_gazebo_publisher_seen(struct gzc *b, const Gazebo__Msgs__Publish *p)
{
    if (!b->live)
        return;
    int t = find_topic(b, p->topic, false);
    if (t < 0) {
        b->pub_rejected++; /* not ours: never "sub" a topic we did not subscribe to */
        return;
    }
    if (strcmp(p->msg_type, b->topic[t].type) != 0) {
        if (b->pub_type_mismatch++ == 0)
            kn_warn("robot %s: %s is published as %s by %s:%u, expected %s; not subscribing",
                    b->robot, p->topic, p->msg_type, p->host, p->port, b->topic[t].type);
        return;
    }
    if (strcmp(p->host, b->adv_host) == 0 && p->port == b->adv_port)
        return; /* ourselves */
    if (strlen(p->host) >= GZC_HOST_LEN || p->port == 0 || p->port > 65535) {
        b->pub_rejected++;
        return;
    }
    for (struct gzc_sublink *sl = b->sublinks; sl; sl = sl->next)
        if (!sl->dead && sl->topic == t && sl->port == p->port && strcmp(sl->host, p->host) == 0)
            return; /* already linked */
    if (b->n_sublinks >= GZC_MAX_SUBLINKS) {
        b->pub_rejected++;
        return;
    }
    struct gzc_sublink *sl = calloc(1, sizeof *sl);
    uint8_t *buf = malloc(GZC_DATA_FRAME_MAX);
    if (!sl || !buf) {
        free(sl);
        free(buf);
        return;
    }
    sl->b = b;
    sl->topic = t;
    sl->buf = buf;
    sl->gen = b->gen;
    sl->retry_ms = GZC_RETRY_FIRST_MS;
    snprintf(sl->host, sizeof sl->host, "%s", p->host);
    sl->port = (uint16_t)p->port;
    kn_gzc_framer_init(&sl->fr, sl->buf, GZC_DATA_FRAME_MAX);
    sl->next = b->sublinks;
    b->sublinks = sl;
    b->n_sublinks++;
    sub_connect(sl);
}

void kn_gazebo_publisher_gone(struct gzc *b, const char *topic, const char *host, uint32_t port)
{
    struct gzc_sublink *next;
    for (struct gzc_sublink *sl = b->sublinks; sl; sl = next) {
        next = sl->next; /* sub_kill may free sl */
        if (!sl->dead && sl->port == port && strcmp(sl->host, host) == 0 &&
            strcmp(b->topic[sl->topic].name, topic) == 0)
            sub_kill(sl);
    }
}

/* The master names the subscriber's server here, while its "sub" named the
 * local end of its data connection, so Gazebo's own subscribers rarely
 * match; what normally ends a subscription is the subscriber closing its
 * link (EOF in on_pub_read). */
void kn_gazebo_subscriber_gone(struct gzc *b, const char *topic, const char *host, uint32_t port)
{
    for (struct gzc_publink *pl = b->publinks; pl; pl = pl->next)
        if (!pl->closing && pl->topic >= 0 && pl->sub_port == port &&
            strcmp(pl->sub_host, host) == 0 && strcmp(b->topic[pl->topic].name, topic) == 0)
            publink_close(pl);
}

int kn_gazebo_publish(struct gzc *b, int topic, const uint8_t *frame, size_t len)
{
    int n = 0;
    for (struct gzc_publink *pl = b->publinks; pl; pl = pl->next)
        if (pl->topic == topic && pub_write(pl, frame, len))
            n++;
    if (n)
        b->topic[topic].frames_out++;
    return n;
}

unsigned kn_gazebo_subscribers(const struct gzc *b, int topic)
{
    unsigned n = 0;
    for (const struct gzc_publink *pl = b->publinks; pl; pl = pl->next)
        n += pl->topic == topic && !pl->closing;
    return n;
}

unsigned kn_gazebo_publishers(const struct gzc *b, int topic)
{
    unsigned n = 0;
    for (const struct gzc_sublink *sl = b->sublinks; sl; sl = sl->next)
        n += sl->topic == topic && sl->connected && !sl->dead;
    return n;
}

void kn_gazebo_links_tick(struct gzc *b)
{
    uint64_t now = kn_gazebo_now_ms(b);
    for (struct gzc_publink *pl = b->publinks; pl; pl = pl->next)
        if (!pl->closing && pl->topic < 0 && now - pl->accepted_ms > GZC_SUB_TIMEOUT_MS) {
            b->subs_bad++;
            publink_close(pl);
        }
    for (struct gzc_sublink *sl = b->sublinks; sl; sl = sl->next)
        if (!sl->dead && !sl->tcp_open && !sl->gai_busy && sl->retry_at_ms &&
            now >= sl->retry_at_ms) {
            sl->retry_at_ms = 0;
            sub_connect(sl);
        }
}

void kn_gazebo_links_close_all(struct gzc *b)
{
    if (b->server) {
        uv_close((uv_handle_t *)b->server, on_server_closed);
        b->server = NULL;
    }
    for (struct gzc_publink *pl = b->publinks; pl; pl = pl->next)
        publink_close(pl);
    struct gzc_sublink *next;
    for (struct gzc_sublink *sl = b->sublinks; sl; sl = next) {
        next = sl->next;
        if (!sl->dead)
            sub_kill(sl);
    }
}
