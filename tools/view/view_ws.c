/* kenaf-view on libwebsockets: the HTTP files (files.h), the /api answers,
 * the WebSocket at /ws that streams hello, world, link and state messages
 * to each page and takes only "report" messages back, and the robots' UDP
 * sockets adopted into the same loop. Everything a client does that it
 * should not is refused and counted (view.h, kn_view_stats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "files.h"
#include "view.h"

/* Per connection (lws allocates it zeroed). */
struct pss {
    struct kn_vclient *c; /* a WebSocket client */
    char *body;           /* HTTP: the /api answer being sent */
    size_t body_len;
    bool peer_closed, server_closed;
};

/* One buffer for every write: lws keeps what the socket did not take. */
static unsigned char out_buf[LWS_PRE + KN_VIEW_FRAG];

static const char extra_headers[] = "Cache-Control: no-cache\x0d\x0a"
                                    "X-Content-Type-Options: nosniff\x0d\x0a"
                                    "Referrer-Policy: no-referrer\x0d\x0a";

static struct kn_view *view_of(struct lws *wsi)
{
    return lws_context_user(lws_get_context(wsi));
}

/* ---- HTTP ------------------------------------------------------------ */

static int http_status(struct lws *wsi, unsigned code)
{
    if (lws_return_http_status(wsi, code, NULL))
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* A symlink may lead elsewhere in its folder (Debian's three/build/ does),
 * never out of it. */
static int http_file(struct kn_view *v, struct lws *wsi, const char *dir, const char *path,
                     const char *mime)
{
    if (!kn_vfiles_inside(dir, path)) {
        v->st.http_not_found++;
        return http_status(wsi, HTTP_STATUS_NOT_FOUND);
    }
    v->st.http_files++;
    int n = lws_serve_http_file(wsi, path, mime, extra_headers, (int)strlen(extra_headers));
    if (n < 0)
        return -1;
    if (n > 0)
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    return 0;
}

/* Headers now, the body when the connection can take it. */
static int http_json(struct kn_view *v, struct lws *wsi, struct pss *ps, char *body)
{
    if (!body)
        return http_status(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR);
    v->st.http_api++;
    free(ps->body);
    ps->body = body;
    ps->body_len = strlen(body);
    unsigned char hdr[LWS_PRE + 512], *start = hdr + LWS_PRE, *p = start, *end = hdr + sizeof hdr;
    if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "application/json", ps->body_len, &p,
                                    end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                    (const unsigned char *)"no-cache", 8, &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    lws_callback_on_writable(wsi);
    return 0;
}

static int http_body(struct lws *wsi, struct pss *ps)
{
    if (!ps->body)
        return 0;
    unsigned char *buf = malloc(LWS_PRE + ps->body_len);
    if (!buf)
        return -1;
    memcpy(buf + LWS_PRE, ps->body, ps->body_len);
    int n = lws_write(wsi, buf + LWS_PRE, ps->body_len, LWS_WRITE_HTTP_FINAL);
    free(buf);
    free(ps->body);
    ps->body = NULL;
    if (n < 0)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int on_http(struct kn_view *v, struct lws *wsi, struct pss *ps, const char *uri)
{
    v->st.http_requests++;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0) {
        v->st.http_bad_method++;
        return http_status(wsi, HTTP_STATUS_METHOD_NOT_ALLOWED);
    }
    char path[PATH_MAX];
    const char *mime = NULL, *dir = NULL;
    switch (kn_vfiles_map(uri, v->o.web_dir, v->o.three_dir, path, sizeof path, &dir, &mime)) {
    case KN_VFILES_FILE: return http_file(v, wsi, dir, path, mime);
    case KN_VFILES_ROBOTS: return http_json(v, wsi, ps, v->hello ? strdup(v->hello) : NULL);
    case KN_VFILES_STATS: return http_json(v, wsi, ps, kn_view_stats_json(v));
    case KN_VFILES_REFUSED: v->st.http_refused++; return http_status(wsi, HTTP_STATUS_FORBIDDEN);
    case KN_VFILES_NOT_FOUND:
    default: v->st.http_not_found++; return http_status(wsi, HTTP_STATUS_NOT_FOUND);
    }
}

/* ---- WebSocket: who may connect -------------------------------------- */

/* A page from another site may not read the robots: when the browser
 * names an Origin, its host:port must be the Host the page asked. */
static bool origin_ok(struct lws *wsi)
{
    char origin[256], host[256];
    if (lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) <= 0)
        return true; /* not a browser */
    if (lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) <= 0)
        return false;
    const char *auth = strstr(origin, "://");
    return auth && strcasecmp(auth + 3, host) == 0;
}

static int ws_filter(struct kn_view *v, struct lws *wsi)
{
    char uri[64];
    if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0 || strcmp(uri, "/ws") != 0) {
        v->st.ws_refused_path++;
        return 1;
    }
    if (!origin_ok(wsi)) {
        v->st.ws_refused_origin++;
        return 1;
    }
    if (v->nclients >= v->o.max_clients) {
        v->st.ws_refused_full++;
        return 1;
    }
    return 0;
}

static int ws_open(struct kn_view *v, struct lws *wsi, struct pss *ps)
{
    struct kn_vclient *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->wsi = wsi;
    c->next = v->clients;
    if (v->clients)
        v->clients->prev = c;
    v->clients = c;
    v->nclients++;
    v->st.ws_accepted++;
    ps->c = c;
    /* a fixed send buffer keeps the page live (view.h, KN_VIEW_SNDBUF);
     * should the kernel refuse, the page still works, only with more lag */
    int sndbuf = KN_VIEW_SNDBUF;
    if (setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) < 0)
        v->st.sndbuf_failed++;
    lws_callback_on_writable(wsi);
    return 0;
}

static void ws_closed(struct kn_view *v, struct pss *ps)
{
    struct kn_vclient *c = ps->c;
    if (!c)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        v->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    v->nclients--;
    if (ps->server_closed)
        v->st.ws_closed_by_server++;
    else if (ps->peer_closed)
        v->st.ws_closed_by_peer++;
    else
        v->st.ws_closed_abrupt++; /* a frame lws refused, or the peer vanished */
    kn_view_blob_put(c->out);
    free(c->in);
    free(c);
    ps->c = NULL;
}

/* ---- WebSocket: sending ---------------------------------------------- */

static int write_text(struct kn_view *v, struct lws *wsi, const char *data, size_t len, int flags)
{
    memcpy(out_buf + LWS_PRE, data, len);
    if (lws_write(wsi, out_buf + LWS_PRE, len, (enum lws_write_protocol)flags) < 0) {
        v->st.write_failed++;
        return -1;
    }
    return 0;
}

/* The next piece of a message that goes out in pieces. */
static int write_piece(struct kn_view *v, struct kn_vclient *c)
{
    size_t left = c->out->len - c->out_off;
    size_t n = left < KN_VIEW_FRAG ? left : KN_VIEW_FRAG;
    int flags = c->out_off == 0 ? LWS_WRITE_TEXT : LWS_WRITE_CONTINUATION;
    if (n < left)
        flags |= LWS_WRITE_NO_FIN;
    if (write_text(v, c->wsi, c->out->data + c->out_off, n, flags) < 0)
        return -1;
    c->out_off += n;
    if (c->out_off == c->out->len) {
        kn_view_blob_put(c->out);
        c->out = NULL;
    }
    return 0;
}

static int start_blob(struct kn_view *v, struct kn_vclient *c, struct kn_vblob *b)
{
    b->refs++;
    c->out = b;
    c->out_off = 0;
    return write_piece(v, c);
}

/* Every robot's newest state that the client has not seen, in one
 * message: {"type":"states","states":[state, ...]}, each state as
 * kn_vjson_state makes it. States it never saw were skipped, not queued
 * (counted when they were replaced: kn_view_new_state). */
static unsigned char batch_buf[LWS_PRE + 64 + KN_VIEW_MAX_ROBOTS * (KN_VJSON_STATE_MAX + 1)];

static int write_states(struct kn_view *v, struct kn_vclient *c, bool *wrote)
{
    static const char head[] = "{\"type\":\"states\",\"states\":[";
    char *p = (char *)batch_buf + LWS_PRE;
    size_t n = sizeof head - 1;
    memcpy(p, head, n);
    unsigned count = 0;
    for (unsigned i = 0; i < v->nrobots; i++) {
        const struct kn_vrobot *r = &v->robots[i];
        if (r->state_seq <= c->state_seq[i])
            continue;
        c->state_seq[i] = r->state_seq;
        if (count++)
            p[n++] = ',';
        memcpy(p + n, r->state, r->state_len);
        n += r->state_len;
    }
    if (!count)
        return 0;
    p[n++] = ']';
    p[n++] = '}';
    *wrote = true;
    v->st.frames_state += count;
    v->st.frames_states++;
    if (lws_write(c->wsi, (unsigned char *)p, n, LWS_WRITE_TEXT) < 0) {
        v->st.write_failed++;
        return -1;
    }
    return 0;
}

/* One message per call, in this order: the rest of a message in pieces,
 * hello, link changes, worlds, trials, the states. */
static int write_next(struct kn_view *v, struct kn_vclient *c, bool *wrote)
{
    *wrote = true;
    if (c->out)
        return write_piece(v, c);
    if (v->hello && c->hello_ver < v->hello_ver) {
        c->hello_ver = v->hello_ver;
        v->st.frames_hello++;
        return write_text(v, c->wsi, v->hello, v->hello_len, LWS_WRITE_TEXT);
    }
    for (unsigned i = 0; i < v->nrobots; i++) {
        struct kn_vrobot *r = &v->robots[i];
        if (c->link_ver[i] < r->link_ver) {
            c->link_ver[i] = r->link_ver;
            v->st.frames_link++;
            return write_text(v, c->wsi, r->link, r->link_len, LWS_WRITE_TEXT);
        }
        if (r->world && c->world_ver[i] < r->world_ver) {
            c->world_ver[i] = r->world_ver;
            v->st.frames_world++;
            return start_blob(v, c, r->world);
        }
        if (c->trial_ver[i] < r->trial_ver) {
            c->trial_ver[i] = r->trial_ver;
            v->st.frames_trial++;
            return write_text(v, c->wsi, r->trial, r->trial_len, LWS_WRITE_TEXT);
        }
    }
    *wrote = false;
    return write_states(v, c, wrote);
}

/* More to send at once: anything but states, which wait for the next
 * batch (kn_view_new_state) unless states_too (after a message that is
 * not the batch, a client just connected or told of a link, say). */
static bool pending(const struct kn_view *v, const struct kn_vclient *c, bool states_too)
{
    if (c->out || (v->hello && c->hello_ver < v->hello_ver))
        return true;
    for (unsigned i = 0; i < v->nrobots; i++) {
        const struct kn_vrobot *r = &v->robots[i];
        if (c->link_ver[i] < r->link_ver || (r->world && c->world_ver[i] < r->world_ver) ||
            c->trial_ver[i] < r->trial_ver || (states_too && c->state_seq[i] < r->state_seq))
            return true;
    }
    return false;
}

static int ws_writeable(struct kn_view *v, struct pss *ps)
{
    struct kn_vclient *c = ps->c;
    if (!c)
        return 0;
    bool wrote = false;
    uint64_t batches = v->st.frames_states;
    if (write_next(v, c, &wrote) < 0)
        return -1;
    if (wrote && pending(v, c, v->st.frames_states == batches))
        lws_callback_on_writable(c->wsi);
    return 0;
}

/* ---- WebSocket: receiving -------------------------------------------- */

static int refuse(struct kn_view *v, struct lws *wsi, struct pss *ps, enum lws_close_status code,
                  const char *why)
{
    (void)v;
    ps->server_closed = true;
    lws_close_reason(wsi, code, (unsigned char *)why, strlen(why));
    return -1;
}

static void message_done(struct kn_view *v, struct kn_vclient *c)
{
    switch (kn_vjson_classify(c->in, c->in_len)) {
    case KN_VJSON_REPORT: {
        v->st.msg_reports++;
        char *copy = malloc(c->in_len + 1);
        if (copy) {
            memcpy(copy, c->in, c->in_len);
            copy[c->in_len] = '\0';
            free(v->last_report);
            v->last_report = copy;
        }
        break;
    }
    case KN_VJSON_BAD_TYPE: v->st.msg_bad_type++; break;
    case KN_VJSON_BAD_JSON:
    default: v->st.msg_bad_json++; break;
    }
    free(c->in); /* an idle client keeps no receive buffer */
    c->in = NULL;
    c->in_len = 0;
}

static int ws_receive(struct kn_view *v, struct lws *wsi, struct pss *ps, const void *in,
                      size_t len)
{
    struct kn_vclient *c = ps->c;
    if (!c)
        return -1;
    if (lws_frame_is_binary(wsi)) {
        v->st.msg_binary++;
        return refuse(v, wsi, ps, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "text only");
    }
    if (len > KN_VIEW_MSG_MAX - c->in_len) {
        v->st.msg_oversized++;
        return refuse(v, wsi, ps, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message too large");
    }
    if (!c->in && !(c->in = malloc(KN_VIEW_MSG_MAX)))
        return -1;
    memcpy(c->in + c->in_len, in, len);
    c->in_len += len;
    if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0)
        message_done(v, c);
    return 0;
}

/* ---- the callbacks --------------------------------------------------- */

static int cb_view(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    struct pss *ps = user;
    switch (reason) {
    case LWS_CALLBACK_HTTP: return on_http(view_of(wsi), wsi, ps, in);
    case LWS_CALLBACK_HTTP_WRITEABLE: return http_body(wsi, ps);
    case LWS_CALLBACK_CLOSED_HTTP:
        free(ps->body);
        ps->body = NULL;
        break;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return ws_filter(view_of(wsi), wsi);
    case LWS_CALLBACK_ESTABLISHED: return ws_open(view_of(wsi), wsi, ps);
    case LWS_CALLBACK_SERVER_WRITEABLE: return ws_writeable(view_of(wsi), ps);
    case LWS_CALLBACK_RECEIVE: return ws_receive(view_of(wsi), wsi, ps, in, len);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: ps->peer_closed = true; break;
    case LWS_CALLBACK_CLOSED: ws_closed(view_of(wsi), ps); break;
    default: break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* The robots' UDP sockets. */
static int cb_krp(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                  size_t len)
{
    (void)user;
    (void)in;
    (void)len;
    struct kn_vrobot *r = lws_get_opaque_user_data(wsi);
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE:
        if (r)
            kn_vrobot_readable(r);
        return 0;
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        if (r)
            r->wsi = NULL;
        return 0;
    default: return 0;
    }
}

const struct lws_protocols kn_vws_protocols[] = {
    { "kenaf-view", cb_view, sizeof(struct pss), 4096, 0, NULL, 0 },
    { "kn-krp", cb_krp, 0, 0, 0, NULL, 0 },
    { NULL, NULL, 0, 0, 0, NULL, 0 },
};
