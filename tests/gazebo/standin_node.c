/* gazebo_standin: a transport node, the way gzserver's transport library
 * works (gazebo/transport's Node, TopicManager and Publication): one
 * connection to the
 * master, which sends three init frames first; its own data server on an
 * ephemeral port, announced in advertise and subscribe; for each
 * publisher the master names (publisher_subscribe / publisher_advertise)
 * of a topic it subscribes to, a new connection that sends one "sub"
 * packet naming its own local address, then reads bare messages; on its
 * server, one "sub" packet per accepted connection, after which it writes
 * bare messages there and never reads again. A "sub" for a topic this node
 * does not publish is where real gzserver dereferences a null pointer: it
 * is logged as "N BUG_sub_for_unadvertised" and counted. */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOPICS 16
#define MAX_LINKS 64
#define FRAME_CAP (1024 * 1024)

struct publication {
    char topic[KN_GZC_TOPIC_MAX], type[128];
    uint8_t last[4096]; /* the last message, replayed to latching subscribers */
    size_t last_len;
};

struct subscription {
    char topic[KN_GZC_TOPIC_MAX], type[128];
    node_msg_fn fn;
    void *ctx;
};

struct node {
    uv_loop_t *loop;
    struct sconn *master;
    uv_tcp_t server;
    int port;
    int init_frames;
    const char *const *namespaces;
    node_ready_fn ready;
    void *ctx;
    struct publication pubs[MAX_TOPICS];
    int npubs;
    struct subscription subs[MAX_TOPICS];
    int nsubs;
    struct sconn *out_links; /* subscribers connected to us (user_i = publication) */
    struct sconn *in_links;  /* our links to publishers (user_i = subscription) */
    struct kn_pbarena arena;
    uint8_t *arena_mem;
    uint8_t out[8192];
};

static uint64_t bad_subs;

uint64_t node_bad_subs(void)
{
    return bad_subs;
}

static void unlink_conn(struct sconn **list, struct sconn *c)
{
    for (struct sconn **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            return;
        }
}

static void send_master(struct node *n, size_t len)
{
    if (n->master)
        sconn_write(n->master, n->out, len);
}

/* ---- our data server ---------------------------------------------------- */

static void on_out_close(struct sconn *c)
{
    struct node *n = c->owner;
    unlink_conn(&n->out_links, c);
}

static void on_sub_frame(struct sconn *c, const uint8_t *p, size_t len)
{
    struct node *n = c->owner;
    if (c->user_i >= 0)
        return; /* a publisher reads one frame only */
    struct kn_gzc_packet pk;
    kn_pbarena_reset(&n->arena);
    Gazebo__Msgs__Subscribe *s = NULL;
    if (kn_gzc_dec_packet(&n->arena, p, len, &pk) == 0 && strcmp(pk.type, KN_GZC_PKT_SUB) == 0)
        s = kn_gzc_dec_subscribe(&n->arena, pk.data, pk.len);
    if (!s) {
        sl_log("N bad_sub_packet from=%s", c->peer);
        sconn_close(c);
        return;
    }
    for (int i = 0; i < n->npubs; i++) {
        struct publication *pb = &n->pubs[i];
        if (strcmp(pb->topic, s->topic) != 0)
            continue;
        c->user_i = i;
        sl_log("N sub %s %s from=%s says=%s:%u latching=%d", s->topic, s->msg_type, c->peer,
               s->host, s->port, s->has_latching && s->latching);
        if (s->has_latching && s->latching && pb->last_len)
            sconn_write(c, pb->last, pb->last_len);
        return;
    }
    bad_subs++;
    sl_log("N BUG_sub_for_unadvertised %s from=%s", s->topic, c->peer);
    sconn_close(c);
}

static void on_accept(uv_stream_t *server, int status)
{
    struct node *n = server->data;
    if (status < 0)
        return;
    struct sconn *c = sconn_new(n->loop, n, 65536);
    if (!c)
        return;
    c->user_i = -1;
    c->on_frame = on_sub_frame;
    c->on_close = on_out_close;
    c->next = n->out_links;
    n->out_links = c;
    if (sconn_accept(c, server) < 0)
        sconn_close(c);
}

int node_publish(struct node *n, int pub, const uint8_t *frame, size_t len)
{
    struct publication *pb = &n->pubs[pub];
    if (len <= sizeof pb->last) {
        memcpy(pb->last, frame, len);
        pb->last_len = len;
    }
    int k = 0;
    for (struct sconn *c = n->out_links; c; c = c->next)
        if (c->user_i == pub && !c->closing) {
            sconn_write(c, frame, len);
            k++;
        }
    return k;
}

bool node_has_subscribers(struct node *n, int pub)
{
    for (struct sconn *c = n->out_links; c; c = c->next)
        if (c->user_i == pub && !c->closing)
            return true;
    return false;
}

/* ---- links to publishers --------------------------------------------------- */

static void on_in_close(struct sconn *c)
{
    struct node *n = c->owner;
    unlink_conn(&n->in_links, c);
}

static void on_data(struct sconn *c, const uint8_t *p, size_t len)
{
    struct node *n = c->owner;
    struct subscription *s = &n->subs[c->user_i];
    s->fn(s->ctx, p, len);
}

static void on_in_connected(struct sconn *c, int status)
{
    struct node *n = c->owner;
    struct subscription *s = &n->subs[c->user_i];
    if (status < 0) {
        sl_log("N link_failed %s to=%s", s->topic, (const char *)c->user);
        return;
    }
    /* "sub" carries the local address and port of this connection */
    size_t len = kn_gzc_enc_subscribe(n->out, sizeof n->out, sl_wall_stamp(), KN_GZC_PKT_SUB,
                                      s->topic, c->local, (uint32_t)c->local_port, s->type, false);
    sconn_write(c, n->out, len);
}

static void connect_publisher(struct node *n, const Gazebo__Msgs__Publish *p)
{
    for (int i = 0; i < n->nsubs; i++) {
        struct subscription *s = &n->subs[i];
        if (strcmp(s->topic, p->topic) != 0)
            continue;
        if ((int)p->port == n->port && strcmp(p->host, "127.0.0.1") == 0)
            return; /* our own publication */
        struct sconn *c = sconn_new(n->loop, n, FRAME_CAP);
        if (!c)
            return;
        c->user_i = i;
        c->on_frame = on_data;
        c->on_close = on_in_close;
        c->on_connect = on_in_connected;
        snprintf(c->peer, sizeof c->peer, "%s:%u", p->host, p->port);
        c->next = n->in_links;
        n->in_links = c;
        sl_log("N connect %s %s to=%s:%u", p->topic, p->msg_type, p->host, p->port);
        if (sconn_connect(c, p->host, (int)p->port) < 0)
            sconn_close(c);
        return;
    }
}

static void drop_publisher(struct node *n, const Gazebo__Msgs__Publish *p)
{
    char peer[64];
    snprintf(peer, sizeof peer, "%s:%u", p->host, p->port);
    for (struct sconn *c = n->in_links; c; c = c->next)
        if (strcmp(c->peer, peer) == 0 && strcmp(n->subs[c->user_i].topic, p->topic) == 0)
            sconn_close(c);
}

/* ---- the master link -------------------------------------------------------- */

static void register_all(struct node *n)
{
    for (int i = 0; n->namespaces[i]; i++) {
        size_t len = kn_gzc_enc_string(n->out, sizeof n->out, sl_wall_stamp(),
                                       KN_GZC_PKT_REGISTER_NAMESPACE, n->namespaces[i]);
        send_master(n, len);
    }
}

static void on_master_frame(struct sconn *c, const uint8_t *p, size_t len)
{
    struct node *n = c->owner;
    static const char *const init[3] = { KN_GZC_PKT_VERSION_INIT, KN_GZC_PKT_NAMESPACES_INIT,
                                         KN_GZC_PKT_PUBLISHERS_INIT };
    struct kn_gzc_packet pk;
    kn_pbarena_reset(&n->arena);
    if (kn_gzc_dec_packet(&n->arena, p, len, &pk) != 0) {
        sl_log("N bad_master_packet");
        return;
    }
    if (n->init_frames < 3) {
        if (strcmp(pk.type, init[n->init_frames]) != 0) {
            sl_log("N unexpected_init %s", pk.type);
            return;
        }
        if (++n->init_frames == 3) {
            register_all(n);
            if (n->ready)
                n->ready(n->ctx);
        }
        return;
    }
    if (strcmp(pk.type, KN_GZC_PKT_PUBLISHER_SUBSCRIBE) == 0 ||
        strcmp(pk.type, KN_GZC_PKT_PUBLISHER_ADVERTISE) == 0 ||
        strcmp(pk.type, KN_GZC_PKT_PUBLISHER_UPDATE) == 0) {
        Gazebo__Msgs__Publish *m = kn_gzc_dec_publish(&n->arena, pk.data, pk.len);
        if (m)
            connect_publisher(n, m);
    } else if (strcmp(pk.type, KN_GZC_PKT_UNADVERTISE) == 0) {
        Gazebo__Msgs__Publish *m = kn_gzc_dec_publish(&n->arena, pk.data, pk.len);
        if (m)
            drop_publisher(n, m);
    }
    /* unsubscribe: our subscriber closes its link itself; the rest is bookkeeping */
}

static void on_master_close(struct sconn *c)
{
    struct node *n = c->owner;
    n->master = NULL;
    sl_log("N master_lost");
}

int node_advertise(struct node *n, const char *topic, const char *type)
{
    struct publication *pb = &n->pubs[n->npubs];
    snprintf(pb->topic, sizeof pb->topic, "%s", topic);
    snprintf(pb->type, sizeof pb->type, "%s", type);
    size_t len = kn_gzc_enc_publish(n->out, sizeof n->out, sl_wall_stamp(), KN_GZC_PKT_ADVERTISE,
                                    topic, type, "127.0.0.1", (uint32_t)n->port);
    send_master(n, len);
    return n->npubs++;
}

void node_subscribe(struct node *n, const char *topic, const char *type, node_msg_fn fn, void *ctx)
{
    struct subscription *s = &n->subs[n->nsubs++];
    snprintf(s->topic, sizeof s->topic, "%s", topic);
    snprintf(s->type, sizeof s->type, "%s", type);
    s->fn = fn;
    s->ctx = ctx;
    size_t len = kn_gzc_enc_subscribe(n->out, sizeof n->out, sl_wall_stamp(), KN_GZC_PKT_SUBSCRIBE,
                                      topic, "127.0.0.1", (uint32_t)n->port, type, false);
    send_master(n, len);
}

struct node *node_start(uv_loop_t *loop, int master_port, const char *const namespaces[],
                        node_ready_fn ready, void *ctx)
{
    struct node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->loop = loop;
    n->namespaces = namespaces;
    n->ready = ready;
    n->ctx = ctx;
    n->arena_mem = malloc(4 * FRAME_CAP);
    kn_pbarena_init(&n->arena, n->arena_mem, n->arena_mem ? 4 * FRAME_CAP : 0);
    uv_tcp_init(loop, &n->server);
    n->server.data = n;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    if (uv_tcp_bind(&n->server, (struct sockaddr *)&a, 0) != 0 ||
        uv_listen((uv_stream_t *)&n->server, 64, on_accept) != 0)
        return NULL;
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    uv_tcp_getsockname(&n->server, (struct sockaddr *)&ss, &len);
    n->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    n->master = sconn_new(loop, n, FRAME_CAP);
    if (!n->master)
        return NULL;
    n->master->on_frame = on_master_frame;
    n->master->on_close = on_master_close;
    if (sconn_connect(n->master, "127.0.0.1", master_port) < 0)
        return NULL;
    return n;
}
