/* The HTTP side (libsoup 3): the caller's handler first, when it has one
 * (kenaf-cameras' PTZ control); then /ROBOT/CAMERA.mjpg as multipart/x-mixed-replace
 * (one image/jpeg part with its Content-Length a frame) and
 * /ROBOT/CAMERA.jpg, one snapshot. Each MJPEG client has a bounded queue
 * of parts: while it is full new frames skip that client (counted), and a
 * client whose queue stays full past client_stall_ms is dropped (counted),
 * so one that stops reading never holds the others back. */
#include <stdio.h>
#include <string.h>

#include "stream_int.h"

#define BOUNDARY "kenafframe"

struct client {
    struct kn_stream_cam *c;
    SoupServerMessage *msg;
    unsigned queued; /* parts appended, not yet written */
    gint64 full_since;
    int gone;
};

static void watchers(struct kn_stream_cam *c, int delta, int clients)
{
    g_mutex_lock(&c->s->mu);
    c->http_watchers += delta;
    c->http_clients += (uint64_t)(gint64)(clients ? delta : 0);
    g_mutex_unlock(&c->s->mu);
}

static void on_wrote_chunk(SoupServerMessage *msg, gpointer data)
{
    (void)msg;
    struct client *cl = data;
    if (cl->queued > 0)
        cl->queued--;
    cl->full_since = 0;
    g_mutex_lock(&cl->c->s->mu);
    cl->c->frames_sent++;
    g_mutex_unlock(&cl->c->s->mu);
}

static void on_client_finished(SoupServerMessage *msg, gpointer data)
{
    struct client *cl = data;
    g_signal_handlers_disconnect_by_data(msg, cl);
    cl->c->mjpeg = g_list_remove(cl->c->mjpeg, cl);
    watchers(cl->c, -1, 1);
    g_free(cl);
}

static void start_mjpeg(struct kn_stream_cam *c, SoupServerMessage *msg)
{
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    soup_message_headers_replace(h, "Content-Type", "multipart/x-mixed-replace;boundary=" BOUNDARY);
    soup_message_headers_replace(h, "Cache-Control", "no-cache");
    /* the stream ends when the connection does, as IP cameras do it */
    soup_message_headers_set_encoding(h, SOUP_ENCODING_EOF);
    soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    struct client *cl = g_new0(struct client, 1);
    cl->c = c;
    cl->msg = msg;
    g_signal_connect(msg, "wrote-chunk", G_CALLBACK(on_wrote_chunk), cl);
    g_signal_connect(msg, "finished", G_CALLBACK(on_client_finished), cl);
    c->mjpeg = g_list_prepend(c->mjpeg, cl);
    watchers(c, 1, 1);
}

static void not_found(SoupServerMessage *msg, const char *path)
{
    char *text = g_strdup_printf("no camera at %s\n", path);
    soup_server_message_set_status(msg, SOUP_STATUS_NOT_FOUND, NULL);
    soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_TAKE, text, strlen(text));
}

/* The caller's handler first (kenaf-cameras' PTZ control): 1 when it
 * answered. */
static int handled(struct kn_stream *s, SoupServerMessage *msg, const char *path)
{
    if (!s->cfg.http_handler)
        return 0;
    const char *q = g_uri_get_query(soup_server_message_get_uri(msg));
    struct kn_stream_http_reply r = { .status = SOUP_STATUS_OK, .content_type = "text/plain" };
    if (!s->cfg.http_handler(s->cfg.http_handler_arg, soup_server_message_get_method(msg), path,
                             q ? q : "", &r))
        return 0;
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    soup_message_headers_replace(h, "Cache-Control", "no-store");
    if (r.any_origin)
        soup_message_headers_replace(h, "Access-Control-Allow-Origin", "*");
    soup_server_message_set_status(msg, (guint)r.status, NULL);
    if (r.len)
        soup_server_message_set_response(msg, r.content_type, SOUP_MEMORY_COPY, r.body,
                                         r.len < sizeof r.body ? r.len : sizeof r.body);
    return 1;
}

/* "/ROBOT/CAMERA.mjpg" and "/ROBOT/CAMERA.jpg", nothing else of its own. */
static void on_request(SoupServer *server, SoupServerMessage *msg, const char *path,
                       GHashTable *query, gpointer data)
{
    (void)server;
    (void)query;
    struct kn_stream *s = data;
    if (handled(s, msg, path))
        return;
    const char *method = soup_server_message_get_method(msg);
    if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD) {
        soup_server_message_set_status(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
        return;
    }
    char **seg = g_strsplit(path[0] == '/' ? path + 1 : path, "/", 3);
    int cam = -1, mjpeg = 0;
    if (seg[0] && seg[1] && !seg[2]) {
        char *dot = strrchr(seg[1], '.');
        if (dot && (strcmp(dot, ".mjpg") == 0 || strcmp(dot, ".jpg") == 0)) {
            mjpeg = strcmp(dot, ".mjpg") == 0;
            *dot = '\0';
            cam = kn_stream_find(s, seg[0], seg[1]);
        }
    }
    g_strfreev(seg);
    if (cam < 0)
        not_found(msg, path);
    else if (mjpeg)
        start_mjpeg(&s->cams[cam], msg);
    else
        kn_stream_snap_start(&s->cams[cam], msg);
}

/* A client whose queue stays full: its socket is shut, soup sees the
 * error and finishes the message, which frees the client. */
static void drop(struct client *cl)
{
    cl->gone = 1;
    g_mutex_lock(&cl->c->s->mu);
    cl->c->clients_dropped++;
    g_mutex_unlock(&cl->c->s->mu);
    GSocket *sock = soup_server_message_get_socket(cl->msg);
    if (sock)
        g_socket_shutdown(sock, TRUE, TRUE, NULL);
}

static void send_part(struct client *cl, GBytes *part, gint64 now)
{
    struct kn_stream *s = cl->c->s;
    if (cl->gone)
        return;
    if (cl->queued >= (unsigned)s->cfg.client_queue) {
        if (!cl->full_since)
            cl->full_since = now;
        g_mutex_lock(&s->mu);
        cl->c->frames_dropped++;
        g_mutex_unlock(&s->mu);
        if (now - cl->full_since > (gint64)s->cfg.client_stall_ms * 1000)
            drop(cl);
        return;
    }
    cl->queued++;
    soup_message_body_append_bytes(soup_server_message_get_response_body(cl->msg), part);
    soup_server_message_unpause(cl->msg);
}

void kn_stream_http_deliver(struct kn_stream_cam *c, GBytes *jpeg)
{
    gsize n;
    const void *data = g_bytes_get_data(jpeg, &n);
    kn_stream_snap_deliver(c, data, n);
    if (!c->mjpeg)
        return;
    char head[128];
    int hn = snprintf(head, sizeof head,
                      "--" BOUNDARY "\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n\r\n",
                      (size_t)n);
    GByteArray *a = g_byte_array_sized_new((guint)(hn + n + 2));
    g_byte_array_append(a, (const guint8 *)head, (guint)hn);
    g_byte_array_append(a, data, (guint)n);
    g_byte_array_append(a, (const guint8 *)"\r\n", 2);
    GBytes *part = g_byte_array_free_to_bytes(a);
    gint64 now = g_get_monotonic_time();
    for (GList *l = c->mjpeg; l; l = l->next)
        send_part(l->data, part, now);
    g_bytes_unref(part);
}

int kn_stream_http_start(struct kn_stream *s, char *err, size_t errlen)
{
    /* SoupServer attaches its listening sources to the thread-default
     * context: make it the library's while it listens */
    g_main_context_push_thread_default(s->ctx);
    s->http = soup_server_new("server-header", "kenaf-cameras ", NULL);
    soup_server_add_handler(s->http, NULL, on_request, s, NULL);
    int port = s->cfg.http_port < 0 ? 8081 : s->cfg.http_port;
    GError *gerr = NULL;
    gboolean ok;
    if (s->cfg.address) {
        GInetAddress *ia = g_inet_address_new_from_string(s->cfg.address);
        GSocketAddress *sa = ia ? g_inet_socket_address_new(ia, (guint16)port) : NULL;
        ok = sa && soup_server_listen(s->http, sa, 0, &gerr);
        if (sa)
            g_object_unref(sa);
        if (ia)
            g_object_unref(ia);
    } else {
        ok = soup_server_listen_all(s->http, (guint)port, 0, &gerr);
    }
    g_main_context_pop_thread_default(s->ctx);
    if (!ok) {
        snprintf(err, errlen, "HTTP: cannot listen on %s port %d: %s",
                 s->cfg.address ? s->cfg.address : "*", port,
                 gerr ? gerr->message : "not an IP address");
        g_clear_error(&gerr);
        return -1;
    }
    GSList *uris = soup_server_get_uris(s->http);
    if (uris)
        s->http_port = g_uri_get_port(uris->data);
    g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
    return 0;
}

void kn_stream_http_stop(struct kn_stream *s)
{
    if (!s->http)
        return;
    g_main_context_push_thread_default(s->ctx);
    soup_server_disconnect(s->http);
    g_object_unref(s->http);
    g_main_context_pop_thread_default(s->ctx);
    s->http = NULL;
}
