/* One robot of kenaf-view: a UDP socket for its KRP/1 address, the
 * watch.h observer that speaks for us, and the page messages made from
 * what it reports (view.h). The socket is not connect()ed: a connected
 * UDP socket turns the ICMP "port unreachable" of a robot that is down
 * into a socket error, which libwebsockets answers by closing the socket;
 * so datagrams go out with sendto() and only those from the robot's
 * address are taken in. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hostport.h"
#include "view.h"

#define KN_VROBOT_HELLO_NAME "kenaf-view"

static void on_send(void *ctx, const uint8_t *buf, size_t len)
{
    struct kn_vrobot *r = ctx;
    if (sendto(r->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&r->addr,
               r->addrlen) < 0)
        r->send_errors++;
}

/* A robot named by its HELLO_ACK keeps printable ASCII of it. */
static void on_hello(void *ctx, const struct kn_krp_hello_ack *a)
{
    struct kn_vrobot *r = ctx;
    if (r->named)
        return;
    char name[KN_VIEW_NAME_LEN];
    size_t i = 0;
    for (; i < sizeof name - 1 && i < sizeof a->robot_name && a->robot_name[i]; i++) {
        unsigned char c = (unsigned char)a->robot_name[i];
        name[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    name[i] = '\0';
    if (!name[0] || strcmp(name, r->name) == 0)
        return;
    snprintf(r->name, sizeof r->name, "%s", name);
    kn_view_hello_update(r->v);
}

static void on_status(void *ctx, const struct kn_krp_status *s, uint64_t now_ns)
{
    struct kn_vrobot *r = ctx;
    size_t n = kn_vjson_state(r->state, sizeof r->state, r->id, s, r->state_seq + 1, now_ns / 1000);
    if (n == 0)
        return;
    r->state_len = n;
    r->state_seq++;
    kn_view_new_state(r->v, r->id);
}

static void set_link(struct kn_vrobot *r, bool up, const char *reason)
{
    size_t n = kn_vjson_link(r->link, sizeof r->link, r->id, up, reason);
    if (n == 0)
        return;
    r->link_len = n;
    r->link_ver++;
}

static void on_link(void *ctx, bool up, const char *reason)
{
    struct kn_vrobot *r = ctx;
    set_link(r, up, reason);
    kn_view_wake_clients(r->v);
}

/* A document that is not one JSON object goes to the pages as null: a
 * page must never receive a message it cannot parse. */
static void on_world(void *ctx, const char *doc, size_t len)
{
    struct kn_vrobot *r = ctx;
    if (doc && !kn_vjson_world_ok(doc, len)) {
        r->world_invalid++;
        doc = NULL;
    }
    size_t mlen = 0;
    char *msg = kn_vjson_world(r->id, doc, len, &mlen);
    struct kn_vblob *b = msg ? kn_view_blob(msg, mlen) : NULL;
    free(msg);
    if (!b)
        return;
    kn_view_blob_put(r->world);
    r->world = b;
    r->world_ver++;
    kn_view_wake_clients(r->v);
}

static void on_trial(void *ctx, const struct kn_krp_trial *t)
{
    struct kn_vrobot *r = ctx;
    size_t n = kn_vjson_trial(r->trial, sizeof r->trial, r->id, t);
    if (n == 0)
        return;
    r->trial_len = n;
    r->trial_ver++;
    kn_view_wake_clients(r->v);
}

int kn_vrobot_open(struct kn_view *v, struct kn_vrobot *r, unsigned id,
                   const struct kn_view_robot_opt *o, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->v = v;
    r->id = id;
    r->fd = -1;
    kn_hostport_format(o->host, o->port, r->address, sizeof r->address);
    r->named = o->name[0] != '\0';
    /* until the robot says its name, its address stands for it */
    snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1,
             r->named ? o->name : r->address);
    char why[300];
    if (kn_hostport_resolve(o->host, o->port, SOCK_DGRAM, &r->addr, &r->addrlen, why, sizeof why) <
        0) {
        snprintf(err, errlen, "robot %s: %s", r->address, why);
        return -1;
    }
    r->fd = socket(r->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (r->fd < 0) {
        snprintf(err, errlen, "robot %s: UDP socket: %s", r->address, strerror(errno));
        return -1;
    }
    struct kn_watch_io io = {
        .ctx = r,
        .send = on_send,
        .hello = on_hello,
        .status = on_status,
        .link = on_link,
        .world = on_world,
        .trial = on_trial,
    };
    r->watch = kn_watch_new(&io, KN_VROBOT_HELLO_NAME, kn_view_now_ns());
    if (!r->watch) {
        snprintf(err, errlen, "robot %s: out of memory", r->address);
        return -1;
    }
    set_link(r, false, "no STATUS yet");
    return 0;
}

int kn_vrobot_adopt(struct kn_vrobot *r)
{
    lws_sock_file_fd_type fd = { .filefd = r->fd };
    r->wsi = lws_adopt_descriptor_vhost(r->v->vh, LWS_ADOPT_RAW_FILE_DESC, fd, "kn-krp", NULL);
    r->adopted = true; /* on failure too: lws closed the fd */
    if (!r->wsi)
        return -1;
    lws_set_opaque_user_data(r->wsi, r);
    return 0;
}

/* The robot's own address, port included. */
static bool from_robot(const struct kn_vrobot *r, const struct sockaddr_storage *from)
{
    /* *from is what recvfrom filled (the caller got a datagram) */
    /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
    if (from->ss_family != r->addr.ss_family)
        return false;
    if (from->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)from, *b = (const void *)&r->addr;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *a = (const void *)from, *b = (const void *)&r->addr;
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

/* Everything waiting, a bounded number at a time so that a flood cannot
 * starve the browsers. */
void kn_vrobot_readable(struct kn_vrobot *r)
{
    uint8_t buf[2048];
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof from;
        ssize_t n =
            recvfrom(r->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                r->recv_errors++;
            break;
        }
        if (!from_robot(r, &from)) {
            r->foreign++;
            continue;
        }
        kn_watch_datagram(r->watch, buf, (size_t)n, kn_view_now_ns());
    }
    kn_view_schedule(r->v);
}

void kn_vrobot_close(struct kn_vrobot *r)
{
    kn_watch_free(r->watch);
    r->watch = NULL;
    kn_view_blob_put(r->world);
    r->world = NULL;
    if (!r->adopted && r->fd >= 0)
        close(r->fd); /* an adopted fd is closed with its wsi */
    r->fd = -1;
}

static void add_u64(cJSON *o, const char *key, uint64_t v)
{
    cJSON_AddNumberToObject(o, key, (double)v);
}

void kn_vrobot_stats(const struct kn_vrobot *r, void *cjson_array)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddItemToArray(cjson_array, o);
    const struct kn_watch_stats *s = kn_watch_stats(r->watch);
    cJSON_AddNumberToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "address", r->address);
    cJSON_AddBoolToObject(o, "up", kn_watch_up(r->watch));
    add_u64(o, "states", r->state_seq);
    cJSON_AddBoolToObject(o, "world_known", r->world != NULL);
    add_u64(o, "world_versions", r->world_ver);
    cJSON *sent = cJSON_AddObjectToObject(o, "krp_sent");
    for (unsigned t = 0; t < 256; t++)
        if (s->sent[t])
            add_u64(sent, kn_krp_type_name((uint8_t)t) ? kn_krp_type_name((uint8_t)t) : "?",
                    s->sent[t]);
    cJSON *in = cJSON_AddObjectToObject(o, "krp_in");
    add_u64(in, "datagrams", s->dgrams_in);
    add_u64(in, "bad", s->bad_dgrams);
    add_u64(in, "unexpected_type", s->not_from_robot_types);
    add_u64(in, "statuses", s->statuses);
    add_u64(in, "hello_acks", s->hello_acks);
    add_u64(in, "subscribe_busy", s->sub_busy);
    cJSON *e = cJSON_AddObjectToObject(in, "errors");
    uint64_t other = 0;
    for (int c = 0; c < KN_KRP_ERR_CODES; c++) {
        const char *name = kn_krp_error_name((uint8_t)c);
        if (name)
            add_u64(e, name, s->errors[c]);
        else
            other += s->errors[c]; /* a newer robot's codes: counted all the same */
    }
    add_u64(e, "other", other);
    cJSON *l = cJSON_AddObjectToObject(o, "link");
    add_u64(l, "up_events", s->links_up);
    add_u64(l, "down_events", s->links_down);
    cJSON *w = cJSON_AddObjectToObject(o, "world");
    add_u64(w, "fetches", s->world_fetches);
    add_u64(w, "chunks", s->world_chunks);
    add_u64(w, "changes", s->world_changes);
    add_u64(w, "bad_chunks", s->world_bad_chunks);
    add_u64(w, "too_big", s->world_too_big);
    add_u64(w, "invalid", r->world_invalid);
    cJSON *tr = cJSON_AddObjectToObject(o, "trial");
    add_u64(tr, "states", s->trials);
    add_u64(tr, "changes", s->trial_changes);
    add_u64(tr, "none", s->no_trial);
    add_u64(tr, "versions", r->trial_ver);
    cJSON *sock = cJSON_AddObjectToObject(o, "socket");
    add_u64(sock, "send_errors", r->send_errors);
    add_u64(sock, "recv_errors", r->recv_errors);
    add_u64(sock, "not_from_robot", r->foreign);
}
