/* gazebo_standin: the master, as gazebo::Master behaves (gazebo/Master.cc
 * of Gazebo Classic; docs/gazebo.md). On accept it sends version_init, topic_namepaces_init and
 * publishers_init, unprompted and in that order; then it keeps the lists
 * of namespaces, publishers and subscribers and tells the right
 * connections about each change:
 *   register_topic_namespace -> topic_namespace_add to every connection
 *   advertise   -> publisher_add to every connection, publisher_advertise
 *                  to the connection of every subscriber of the topic
 *   unadvertise -> unadvertise to the topic's subscribers, publisher_del to all
 *   subscribe   -> publisher_subscribe (one per publisher of the topic) back
 *   unsubscribe -> unsubscribe to the connection of each publisher of the topic
 *   request     -> publisher_list / topic_list / topic_info_response /
 *                  get_topic_namespaces_response
 * A closed connection takes its publishers and subscribers with it, with
 * the same notices. Every event is logged ("M ..."). */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NS 64
#define MAX_ENTRIES 256
#define FRAME_CAP (1024 * 1024)
#define OUT_CAP (512 * 1024)

struct pub {
    char topic[KN_GZC_TOPIC_MAX], type[128], host[64];
    uint32_t port;
    struct sconn *conn;
};

struct sub {
    char topic[KN_GZC_TOPIC_MAX], type[128], host[64];
    uint32_t port;
    bool latching;
    struct sconn *conn;
};

static struct {
    uv_loop_t *loop;
    uv_tcp_t server;
    struct master_opts o;
    char ns[MAX_NS][128];
    int nns;
    struct pub pubs[MAX_ENTRIES];
    int npubs;
    struct sub subs[MAX_ENTRIES];
    int nsubs;
    struct sconn *conns;
    struct kn_pbarena arena;
    uint8_t *arena_mem;
    uint8_t out[OUT_CAP];
    uint64_t bad;
} M;

uint64_t master_bad_frames(void)
{
    return M.bad;
}

static void send_publish(struct sconn *c, const char *type, const struct pub *p)
{
    size_t n = kn_gzc_enc_publish(M.out, sizeof M.out, sl_wall_stamp(), type, p->topic, p->type,
                                  p->host, p->port);
    sconn_write(c, M.out, n);
}

static void send_subscribe(struct sconn *c, const char *type, const struct sub *s)
{
    size_t n = kn_gzc_enc_subscribe(M.out, sizeof M.out, sl_wall_stamp(), type, s->topic, s->host,
                                    s->port, s->type, s->latching);
    sconn_write(c, M.out, n);
}

static void to_all_publish(const char *type, const struct pub *p)
{
    for (struct sconn *c = M.conns; c; c = c->next)
        send_publish(c, type, p);
}

/* A Publishers message of the publishers (all, or those of one topic). */
static size_t enc_publishers(const char *type, const char *topic)
{
    static Gazebo__Msgs__Publish items[MAX_ENTRIES];
    static Gazebo__Msgs__Publish *ptrs[MAX_ENTRIES];
    Gazebo__Msgs__Publishers m = GAZEBO__MSGS__PUBLISHERS__INIT;
    size_t k = 0;
    for (int i = 0; i < M.npubs; i++) {
        if (topic && strcmp(M.pubs[i].topic, topic) != 0)
            continue;
        Gazebo__Msgs__Publish init = GAZEBO__MSGS__PUBLISH__INIT;
        items[k] = init;
        items[k].topic = M.pubs[i].topic;
        items[k].msg_type = M.pubs[i].type;
        items[k].host = M.pubs[i].host;
        items[k].port = M.pubs[i].port;
        ptrs[k] = &items[k];
        k++;
    }
    m.n_publisher = k;
    m.publisher = ptrs;
    return kn_gzc_encode_packet(M.out, sizeof M.out, sl_wall_stamp(), type, &m.base);
}

static size_t enc_strings(const char *type, const char *const *v, size_t n)
{
    return kn_gzc_enc_strings(M.out, sizeof M.out, sl_wall_stamp(), type, v, n);
}

static void remove_pub(int i)
{
    struct pub p = M.pubs[i];
    memmove(&M.pubs[i], &M.pubs[i + 1], (size_t)(M.npubs - i - 1) * sizeof M.pubs[0]);
    M.npubs--;
    sl_log("M unadvertise %s %s %s:%u conn=%d", p.topic, p.type, p.host, p.port, p.conn->id);
    for (int s = 0; s < M.nsubs; s++)
        if (strcmp(M.subs[s].topic, p.topic) == 0)
            send_publish(M.subs[s].conn, KN_GZC_PKT_UNADVERTISE, &p);
    to_all_publish(KN_GZC_PKT_PUBLISHER_DEL, &p);
}

static void remove_sub(int i)
{
    struct sub s = M.subs[i];
    memmove(&M.subs[i], &M.subs[i + 1], (size_t)(M.nsubs - i - 1) * sizeof M.subs[0]);
    M.nsubs--;
    sl_log("M unsubscribe %s %s %s:%u conn=%d", s.topic, s.type, s.host, s.port, s.conn->id);
    for (int p = 0; p < M.npubs; p++)
        if (strcmp(M.pubs[p].topic, s.topic) == 0)
            send_subscribe(M.pubs[p].conn, KN_GZC_PKT_UNSUBSCRIBE, &s);
}

static bool copy(char *dst, size_t cap, const char *src)
{
    if (strlen(src) >= cap)
        return false;
    memcpy(dst, src, strlen(src) + 1);
    return true;
}

static void on_advertise(struct sconn *c, const Gazebo__Msgs__Publish *m)
{
    if (M.npubs >= MAX_ENTRIES)
        return;
    struct pub *p = &M.pubs[M.npubs];
    if (!copy(p->topic, sizeof p->topic, m->topic) || !copy(p->type, sizeof p->type, m->msg_type) ||
        !copy(p->host, sizeof p->host, m->host))
        return;
    p->port = m->port;
    p->conn = c;
    M.npubs++;
    sl_log("M advertise %s %s %s:%u conn=%d", p->topic, p->type, p->host, p->port, c->id);
    to_all_publish(KN_GZC_PKT_PUBLISHER_ADD, p);
    for (int s = 0; s < M.nsubs; s++)
        if (strcmp(M.subs[s].topic, p->topic) == 0)
            send_publish(M.subs[s].conn, KN_GZC_PKT_PUBLISHER_ADVERTISE, p);
}

static void on_subscribe(struct sconn *c, const Gazebo__Msgs__Subscribe *m)
{
    if (M.nsubs >= MAX_ENTRIES)
        return;
    struct sub *s = &M.subs[M.nsubs];
    if (!copy(s->topic, sizeof s->topic, m->topic) || !copy(s->type, sizeof s->type, m->msg_type) ||
        !copy(s->host, sizeof s->host, m->host))
        return;
    s->port = m->port;
    s->latching = m->has_latching && m->latching;
    s->conn = c;
    M.nsubs++;
    sl_log("M subscribe %s %s %s:%u latching=%d conn=%d", s->topic, s->type, s->host, s->port,
           s->latching, c->id);
    for (int p = 0; p < M.npubs; p++)
        if (strcmp(M.pubs[p].topic, s->topic) == 0)
            send_publish(c, KN_GZC_PKT_PUBLISHER_SUBSCRIBE, &M.pubs[p]);
}

static void on_request(struct sconn *c, const Gazebo__Msgs__Request *r)
{
    size_t n = 0;
    sl_log("M request %s conn=%d", r->request, c->id);
    if (strcmp(r->request, "get_publishers") == 0) {
        n = enc_publishers("publisher_list", NULL);
    } else if (strcmp(r->request, "get_topics") == 0) {
        const char *v[2 * MAX_ENTRIES];
        size_t k = 0;
        for (int i = 0; i < M.npubs + M.nsubs; i++) {
            const char *t = i < M.npubs ? M.pubs[i].topic : M.subs[i - M.npubs].topic;
            bool dup = false;
            for (size_t j = 0; j < k; j++)
                dup |= strcmp(v[j], t) == 0;
            if (!dup)
                v[k++] = t;
        }
        n = enc_strings("topic_list", v, k);
    } else if (strcmp(r->request, "get_topic_namespaces") == 0) {
        const char *v[MAX_NS];
        for (int i = 0; i < M.nns; i++)
            v[i] = M.ns[i];
        n = enc_strings("get_topic_namespaces_response", v, (size_t)M.nns);
    } else if (strcmp(r->request, "topic_info") == 0 && r->data) {
        static Gazebo__Msgs__Publish pi[MAX_ENTRIES];
        static Gazebo__Msgs__Publish *pp[MAX_ENTRIES];
        static Gazebo__Msgs__Subscribe si[MAX_ENTRIES];
        static Gazebo__Msgs__Subscribe *sp[MAX_ENTRIES];
        Gazebo__Msgs__TopicInfo m = GAZEBO__MSGS__TOPIC_INFO__INIT;
        m.msg_type = "";
        size_t np = 0, ns = 0;
        for (int i = 0; i < M.npubs; i++)
            if (strcmp(M.pubs[i].topic, r->data) == 0) {
                Gazebo__Msgs__Publish init = GAZEBO__MSGS__PUBLISH__INIT;
                pi[np] = init;
                pi[np].topic = M.pubs[i].topic;
                pi[np].msg_type = M.pubs[i].type;
                pi[np].host = M.pubs[i].host;
                pi[np].port = M.pubs[i].port;
                m.msg_type = M.pubs[i].type;
                pp[np] = &pi[np];
                np++;
            }
        for (int i = 0; i < M.nsubs; i++)
            if (strcmp(M.subs[i].topic, r->data) == 0) {
                Gazebo__Msgs__Subscribe init = GAZEBO__MSGS__SUBSCRIBE__INIT;
                si[ns] = init;
                si[ns].topic = M.subs[i].topic;
                si[ns].msg_type = M.subs[i].type;
                si[ns].host = M.subs[i].host;
                si[ns].port = M.subs[i].port;
                si[ns].has_latching = 1;
                si[ns].latching = M.subs[i].latching;
                if (!m.msg_type[0])
                    m.msg_type = M.subs[i].type;
                sp[ns] = &si[ns];
                ns++;
            }
        m.n_publisher = np;
        m.publisher = pp;
        m.n_subscriber = ns;
        m.subscriber = sp;
        n = kn_gzc_encode_packet(M.out, sizeof M.out, sl_wall_stamp(), "topic_info_response",
                                 &m.base);
    }
    sconn_write(c, M.out, n);
}

static void on_frame(struct sconn *c, const uint8_t *p, size_t n)
{
    struct kn_gzc_packet pk;
    kn_pbarena_reset(&M.arena);
    if (kn_gzc_dec_packet(&M.arena, p, n, &pk) != 0) {
        M.bad++;
        sl_log("M bad_packet conn=%d", c->id);
        return;
    }
    const char *t = pk.type;
    if (strcmp(t, KN_GZC_PKT_REGISTER_NAMESPACE) == 0) {
        Gazebo__Msgs__GzString *s = kn_gzc_dec_string(&M.arena, pk.data, pk.len);
        if (!s)
            goto bad;
        for (int i = 0; i < M.nns; i++)
            if (strcmp(M.ns[i], s->data) == 0)
                return;
        if (M.nns >= MAX_NS || !copy(M.ns[M.nns], sizeof M.ns[0], s->data))
            return;
        M.nns++;
        sl_log("M namespace %s conn=%d", s->data, c->id);
        size_t k = kn_gzc_enc_string(M.out, sizeof M.out, sl_wall_stamp(), KN_GZC_PKT_NAMESPACE_ADD,
                                     s->data);
        for (struct sconn *o = M.conns; o; o = o->next)
            sconn_write(o, M.out, k);
    } else if (strcmp(t, KN_GZC_PKT_ADVERTISE) == 0 || strcmp(t, KN_GZC_PKT_UNADVERTISE) == 0) {
        Gazebo__Msgs__Publish *m = kn_gzc_dec_publish(&M.arena, pk.data, pk.len);
        if (!m)
            goto bad;
        if (t[0] == 'a') {
            on_advertise(c, m);
        } else {
            for (int i = M.npubs - 1; i >= 0; i--)
                if (strcmp(M.pubs[i].topic, m->topic) == 0 &&
                    strcmp(M.pubs[i].host, m->host) == 0 && M.pubs[i].port == m->port)
                    remove_pub(i);
        }
    } else if (strcmp(t, KN_GZC_PKT_SUBSCRIBE) == 0 || strcmp(t, KN_GZC_PKT_UNSUBSCRIBE) == 0) {
        Gazebo__Msgs__Subscribe *m = kn_gzc_dec_subscribe(&M.arena, pk.data, pk.len);
        if (!m)
            goto bad;
        if (t[0] == 's') {
            on_subscribe(c, m);
        } else {
            for (int i = M.nsubs - 1; i >= 0; i--)
                if (strcmp(M.subs[i].topic, m->topic) == 0 &&
                    strcmp(M.subs[i].host, m->host) == 0 && M.subs[i].port == m->port)
                    remove_sub(i);
        }
    } else if (strcmp(t, KN_GZC_PKT_REQUEST) == 0) {
        Gazebo__Msgs__Request *r = kn_gzc_dec_request(&M.arena, pk.data, pk.len);
        if (!r)
            goto bad;
        on_request(c, r);
    } else {
        sl_log("M unknown_packet %.60s conn=%d", t, c->id);
    }
    return;
bad:
    M.bad++;
    sl_log("M bad_message %.60s conn=%d", t, c->id);
}

static void on_conn_close(struct sconn *c)
{
    for (struct sconn **pp = &M.conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    sl_log("M disconnect conn=%d", c->id);
    /* Master::RemoveConnection: its publishers and subscribers go, with notices */
    for (int i = M.npubs - 1; i >= 0; i--)
        if (M.pubs[i].conn == c)
            remove_pub(i);
    for (int i = M.nsubs - 1; i >= 0; i--)
        if (M.subs[i].conn == c)
            remove_sub(i);
}

static void on_accept(uv_stream_t *server, int status)
{
    if (status < 0)
        return;
    struct sconn *c = sconn_new(M.loop, NULL, FRAME_CAP);
    if (!c)
        return;
    c->on_frame = on_frame;
    c->on_close = on_conn_close;
    c->next = M.conns;
    M.conns = c;
    if (sconn_accept(c, server) < 0) {
        sconn_close(c);
        return;
    }
    sl_log("M connect conn=%d peer=%s", c->id, c->peer);
    /* Master::OnAccept: three frames, unprompted, in this order */
    size_t n = kn_gzc_enc_string(M.out, sizeof M.out, sl_wall_stamp(), KN_GZC_PKT_VERSION_INIT,
                                 M.o.version);
    sconn_write(c, M.out, n);
    const char *v[MAX_NS];
    for (int i = 0; i < M.nns; i++)
        v[i] = M.ns[i];
    n = enc_strings(KN_GZC_PKT_NAMESPACES_INIT, v, (size_t)M.nns);
    sconn_write(c, M.out, n);
    n = enc_publishers(KN_GZC_PKT_PUBLISHERS_INIT, NULL);
    sconn_write(c, M.out, n);
}

int master_start(uv_loop_t *loop, int port, const struct master_opts *o)
{
    M.loop = loop;
    M.o = *o;
    M.arena_mem = malloc(4 * FRAME_CAP);
    if (!M.arena_mem)
        return -1;
    kn_pbarena_init(&M.arena, M.arena_mem, 4 * FRAME_CAP);
    uv_tcp_init(loop, &M.server);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    /* libuv sets SO_REUSEADDR: a restarted master gets its port back at once */
    if (uv_tcp_bind(&M.server, (struct sockaddr *)&a, 0) != 0 ||
        uv_listen((uv_stream_t *)&M.server, 64, on_accept) != 0)
        return -1;
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    uv_tcp_getsockname(&M.server, (struct sockaddr *)&ss, &len);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}
