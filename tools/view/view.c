/* kenaf-view's program: the libwebsockets context and loop, the robots'
 * timers (one scheduled callback at the earliest robot deadline), the
 * hello message, the counters. See view.h. */
#include "view.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "hostport.h"

#ifndef KN_VERSION
#define KN_VERSION "0"
#endif

#define TICK_MAX_US 100000 /* the stop flag is looked at this often at least */

uint64_t kn_view_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct kn_vblob *kn_view_blob(const char *data, size_t len)
{
    struct kn_vblob *b = malloc(sizeof *b + len);
    if (!b)
        return NULL;
    b->refs = 1;
    b->len = len;
    memcpy(b->data, data, len);
    return b;
}

void kn_view_blob_put(struct kn_vblob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

void kn_view_wake_clients(struct kn_view *v)
{
    for (struct kn_vclient *c = v->clients; c; c = c->next)
        lws_callback_on_writable(c->wsi);
}

static void on_batch(lws_sorted_usec_list_t *sul)
{
    struct kn_view *v = lws_container_of(sul, struct kn_view, batch);
    v->batch_armed = false;
    kn_view_wake_clients(v);
}

void kn_view_new_state(struct kn_view *v, unsigned robot)
{
    /* the state this one replaced (seq - 1) is skipped for every page it
     * was not sent to: counted as it happens, so a page that stopped
     * reading shows up in the counters while it is stopped */
    uint64_t replaced = v->robots[robot].state_seq - 1;
    for (struct kn_vclient *c = v->clients; c; c = c->next)
        if (c->state_seq[robot] < replaced)
            v->st.states_skipped++;
    /* the pages hear of it with the batch: states that arrive meanwhile go
     * in the same message */
    if (v->clients && !v->batch_armed) {
        v->batch_armed = true;
        lws_sul_schedule(v->ctx, 0, &v->batch, on_batch, KN_VIEW_BATCH_US);
    }
}

int kn_view_hello_update(struct kn_view *v)
{
    struct kn_vjson_robot list[KN_VIEW_MAX_ROBOTS];
    for (unsigned i = 0; i < v->nrobots; i++) {
        list[i].name = v->robots[i].name;
        list[i].address = v->robots[i].address;
    }
    char *h = kn_vjson_hello(KN_VERSION, list, v->nrobots, v->o.cameras[0] ? v->o.cameras : NULL);
    if (!h)
        return -1;
    free(v->hello);
    v->hello = h;
    v->hello_len = strlen(h);
    v->hello_ver++;
    kn_view_wake_clients(v);
    return 0;
}

/* ---- timers ---------------------------------------------------------- */

static void on_tick(lws_sorted_usec_list_t *sul)
{
    struct kn_view *v = lws_container_of(sul, struct kn_view, tick);
    uint64_t now = kn_view_now_ns();
    for (unsigned i = 0; i < v->nrobots; i++)
        if (kn_watch_next_deadline(v->robots[i].watch) <= now)
            kn_watch_tick(v->robots[i].watch, now);
    kn_view_schedule(v);
}

void kn_view_schedule(struct kn_view *v)
{
    uint64_t now = kn_view_now_ns(), d = UINT64_MAX;
    for (unsigned i = 0; i < v->nrobots; i++) {
        uint64_t t = kn_watch_next_deadline(v->robots[i].watch);
        if (t < d)
            d = t;
    }
    uint64_t us = d <= now ? 0 : (d - now + 999) / 1000;
    if (us > TICK_MAX_US)
        us = TICK_MAX_US;
    lws_sul_schedule(v->ctx, 0, &v->tick, on_tick, (lws_usec_t)us);
}

/* ---- counters -------------------------------------------------------- */

static void add_u64(cJSON *o, const char *key, uint64_t n)
{
    cJSON_AddNumberToObject(o, key, (double)n);
}

char *kn_view_stats_json(struct kn_view *v)
{
    const struct kn_view_stats *s = &v->st;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "server", "kenaf-view " KN_VERSION);
    cJSON_AddNumberToObject(o, "port", v->port);
    cJSON_AddNumberToObject(o, "clients", v->nclients);
    cJSON_AddNumberToObject(o, "max_clients", v->o.max_clients);
    cJSON *h = cJSON_AddObjectToObject(o, "http");
    add_u64(h, "requests", s->http_requests);
    add_u64(h, "files", s->http_files);
    add_u64(h, "api", s->http_api);
    add_u64(h, "not_found", s->http_not_found);
    add_u64(h, "refused", s->http_refused);
    add_u64(h, "bad_method", s->http_bad_method);
    cJSON *w = cJSON_AddObjectToObject(o, "ws");
    add_u64(w, "accepted", s->ws_accepted);
    add_u64(w, "refused_full", s->ws_refused_full);
    add_u64(w, "refused_path", s->ws_refused_path);
    add_u64(w, "refused_origin", s->ws_refused_origin);
    add_u64(w, "closed_by_peer", s->ws_closed_by_peer);
    add_u64(w, "closed_by_server", s->ws_closed_by_server);
    add_u64(w, "closed_abrupt", s->ws_closed_abrupt);
    add_u64(w, "write_failed", s->write_failed);
    add_u64(w, "sndbuf_failed", s->sndbuf_failed);
    cJSON *in = cJSON_AddObjectToObject(o, "messages_in");
    add_u64(in, "reports", s->msg_reports);
    add_u64(in, "oversized", s->msg_oversized);
    add_u64(in, "binary", s->msg_binary);
    add_u64(in, "bad_json", s->msg_bad_json);
    add_u64(in, "bad_type", s->msg_bad_type);
    cJSON *out = cJSON_AddObjectToObject(o, "frames_out");
    add_u64(out, "hello", s->frames_hello);
    add_u64(out, "world", s->frames_world);
    add_u64(out, "trial", s->frames_trial);
    add_u64(out, "link", s->frames_link);
    add_u64(out, "state", s->frames_state);
    add_u64(out, "states", s->frames_states);
    add_u64(out, "states_skipped", s->states_skipped);
    cJSON *arr = cJSON_AddArrayToObject(o, "robots");
    for (unsigned i = 0; arr && i < v->nrobots; i++)
        kn_vrobot_stats(&v->robots[i], arr);
    cJSON *rep = v->last_report ? cJSON_Parse(v->last_report) : NULL;
    cJSON_AddItemToObject(o, "last_report", rep ? rep : cJSON_CreateNull());
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* ---- life ------------------------------------------------------------ */

/* libwebsockets' own messages: errors only, marked as its. */
static void lws_emit(int level, const char *line)
{
    (void)level;
    fprintf(stderr, "kenaf-view: libwebsockets: %s", line);
}

/* The address to bind as libwebsockets wants it: a numeric address, or
 * NULL for every address ("0.0.0.0", "::"). */
static int listen_iface(const struct kn_view_opts *o, char *iface, size_t len, bool *any)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    char err[300];
    if (kn_hostport_resolve(o->listen_host, o->listen_port, SOCK_STREAM, &ss, &sslen, err,
                            sizeof err) < 0) {
        fprintf(stderr, "kenaf-view: --listen %s\n", err);
        return -1;
    }
    /* libwebsockets waits quietly for an address that is not (yet) on this
     * machine; a bind here says at once what is wrong */
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sslen) < 0) {
        fprintf(stderr, "kenaf-view: cannot listen on %s:%u: %s\n", o->listen_host, o->listen_port,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    const void *a = ss.ss_family == AF_INET6
                        ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
    if (!inet_ntop(ss.ss_family, a, iface, (socklen_t)len))
        return -1;
    *any = strcmp(iface, "0.0.0.0") == 0 || strcmp(iface, "::") == 0;
    return 0;
}

static int start(struct kn_view *v)
{
    char iface[INET6_ADDRSTRLEN];
    bool any = false;
    if (listen_iface(&v->o, iface, sizeof iface, &any) < 0)
        return -1;
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = v->o.listen_port;
    info.iface = any ? NULL : iface;
    info.protocols = kn_vws_protocols;
    info.user = v;
    info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
    info.vhost_name = "kenaf-view";
    v->ctx = lws_create_context(&info);
    if (!v->ctx) {
        fprintf(stderr,
                "kenaf-view: cannot listen on %s:%u (in use, or not an address of this "
                "machine)\n",
                v->o.listen_host, v->o.listen_port);
        return -1;
    }
    v->vh = lws_get_vhost_by_name(v->ctx, "kenaf-view");
    v->port = v->vh ? lws_get_vhost_listen_port(v->vh) : v->o.listen_port;
    for (unsigned i = 0; i < v->nrobots; i++)
        if (kn_vrobot_adopt(&v->robots[i]) < 0) {
            fprintf(stderr, "kenaf-view: robot %s: cannot add its socket to the loop\n",
                    v->robots[i].address);
            return -1;
        }
    char hp[sizeof v->o.listen_host + 16];
    kn_hostport_format(v->o.listen_host, (unsigned)v->port, hp, sizeof hp);
    printf("kenaf-view: http://%s/\n", hp);
    fflush(stdout);
    kn_view_schedule(v);
    return 0;
}

static void finish(struct kn_view *v)
{
    if (v->ctx) {
        lws_sul_cancel(&v->tick);
        lws_sul_cancel(&v->batch);
        lws_context_destroy(v->ctx); /* closes the clients first: they use v */
    }
    for (unsigned i = 0; i < v->nrobots; i++)
        kn_vrobot_close(&v->robots[i]);
    free(v->hello);
    free(v->last_report);
    free(v);
}

int kn_view_run(const struct kn_view_opts *o, volatile sig_atomic_t *stop)
{
    lws_set_log_level(LLL_ERR, lws_emit);
    struct kn_view *v = calloc(1, sizeof *v);
    if (!v) {
        fprintf(stderr, "kenaf-view: out of memory\n");
        return 1;
    }
    v->o = *o;
    v->stop = stop;
    char err[512];
    for (unsigned i = 0; i < o->nrobots; i++, v->nrobots++)
        if (kn_vrobot_open(v, &v->robots[i], i, &o->robots[i], err, sizeof err) < 0) {
            fprintf(stderr, "kenaf-view: %s\n", err);
            v->nrobots++;
            finish(v);
            return 1;
        }
    if (kn_view_hello_update(v) < 0 || start(v) < 0) {
        finish(v);
        return 1;
    }
    while (!*stop)
        if (lws_service(v->ctx, 0) < 0)
            break;
    if (o->stats) {
        char *s = kn_view_stats_json(v);
        printf("%s\n", s ? s : "{}");
        fflush(stdout);
        free(s);
    }
    finish(v);
    return 0;
}
