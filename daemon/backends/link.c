/* The generic simulator link under every backend: see backend.h. One TCP
 * connection at a time; each attempt gets a fresh handle so a late
 * callback of an abandoned attempt can never touch the current one. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "capture.h"
#include "histogram.h"
#include "hostport.h"
#include "link_priv.h"
#include "log.h"

static const char *const state_names[] = { "idle", "resolving", "connecting", "handshake",
                                           "up",   "backoff",   "closing" };

static void attempt(struct kn_link *l);
static void on_timer(uv_timer_t *t);
static void silence_check(struct kn_link *l);
static void link_down(struct kn_link *l, const char *why);
static void maybe_finish(struct kn_link *l);

static uint64_t now_ns(void)
{
    return uv_hrtime();
}

static void timer_start_s(struct kn_link *l, uv_timer_cb cb, double s)
{
    uint64_t ms = s <= 0 ? 0 : (uint64_t)(s * 1000.0 + 0.5);
    uv_timer_start(&l->timer, cb, ms, 0);
}

/* ---- connection handles ---------------------------------------------- */

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct kn_link *l = c->link;
    free(c);
    l->conns_open--;
    maybe_finish(l);
}

/* Detaches and closes the current connection. */
static void conn_drop(struct kn_link *l)
{
    struct conn *c = l->conn;
    if (!c) {
        if (l->node_started && l->ops->stop)
            l->ops->stop(l->be);
        l->node_started = false;
        return;
    }
    l->conn = NULL;
    c->abandoned = true;
    l->bytes_dropped += l->olen; /* held for a connection that is gone */
    l->olen = 0;
    l->nt = 0;
    if (c->started && l->ops->stop)
        l->ops->stop(l->be);
    c->started = false;
    kn_capture_tcp_close(&c->flow);
    if (!uv_is_closing((uv_handle_t *)&c->tcp))
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static size_t queue_size(const struct kn_link *l)
{
    return l->conn && l->conn->connected
               ? uv_stream_get_write_queue_size((uv_stream_t *)&l->conn->tcp)
               : 0;
}

static void stall_update(struct kn_link *l)
{
    uint64_t now = now_ns();
    bool q = queue_size(l) > 0;
    if (q && !l->stalled) {
        l->stalled = true;
        l->stall_since = now;
    } else if (!q && l->stalled) {
        l->stalled = false;
        uint64_t d = now - l->stall_since;
        l->stall_total_ns += d;
        if (d >= STALL_REPORT_NS) {
            l->stall_episodes++;
            kn_info("robot %s: simulator drained its socket again after %.0f ms "
                    "(%llu commands coalesced so far)",
                    l->robot, (double)d / 1e6, (unsigned long long)l->cmds_coalesced);
        }
    }
}

/* ---- writing ---------------------------------------------------------- */

static void defer_fail(struct kn_link *l, const char *why)
{
    if (l->deferred_fail || l->st == L_CLOSING)
        return;
    l->deferred_fail = true;
    snprintf(l->deferred_why, sizeof l->deferred_why, "%s", why);
    uv_timer_stop(&l->timer);
    uv_timer_start(&l->timer, on_timer, 0, 0); /* failed from inside a write: tear down later */
}

static void send_now(struct kn_link *l, const struct kn_command *cmd, uint64_t t_rx, bool reapply);

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct conn *c = req->handle->data;
    struct kn_link *l = c->link;
    if (c->abandoned || status < 0) {
        free(w);
        if (c->abandoned)
            return;
        l->write_errors++;
        defer_fail(l, uv_strerror(status));
        return;
    }
    uint64_t now = now_ns();
    for (size_t i = 0; i < w->nt; i++)
        kn_hist_record(&l->lat, now - w->t[i]);
    free(w);
    stall_update(l);
    if (l->st == L_READY && l->pending && queue_size(l) == 0) {
        l->pending = false;
        send_now(l, &l->pend, l->pend_t_rx, false);
    }
}

/* A command's receive time, held until the turn's write takes its bytes
 * (recorded at once when there is no room to hold it). */
static void hold_time(struct kn_link *l, uint64_t t_rx)
{
    if (l->nt == l->tcap) {
        size_t cap = l->tcap ? l->tcap * 2 : 16;
        uint64_t *grown = realloc(l->ot, cap * sizeof *grown);
        if (!grown) {
            kn_hist_record(&l->lat, now_ns() - t_rx);
            return;
        }
        l->ot = grown;
        l->tcap = cap;
    }
    l->ot[l->nt++] = t_rx;
}

/* Writes what the turn held, in one write: uv_try_write, the rest queued
 * with uv_write (the queue kn_link_command watches for back-pressure).
 * The commands held are timed now when the try took every byte, else when
 * the queued rest is written. */
static void link_flush(struct kn_link *l)
{
    uv_check_stop(&l->flush);
    size_t len = l->olen, nt = l->nt;
    l->olen = 0;
    l->nt = 0;
    if (len == 0)
        return;
    struct conn *c = l->conn;
    if (!c || !c->connected || c->abandoned || l->deferred_fail) {
        l->bytes_dropped += len;
        return;
    }
    uv_stream_t *s = (uv_stream_t *)&c->tcp;
    size_t off = 0;
    if (uv_stream_get_write_queue_size(s) == 0) {
        uv_buf_t b = uv_buf_init(l->obuf, (unsigned)len);
        int n = uv_try_write(s, &b, 1);
        if (n >= 0) {
            off = (size_t)n;
            kn_capture_tcp_data(&c->flow, true, l->obuf, off);
        } else if (n != UV_EAGAIN) {
            l->write_errors++;
            l->bytes_dropped += len;
            defer_fail(l, uv_strerror(n));
            return;
        }
    }
    l->bytes_out += off;
    if (off == len) {
        uint64_t now = now_ns();
        for (size_t i = 0; i < nt; i++)
            kn_hist_record(&l->lat, now - l->ot[i]);
        return;
    }
    size_t rest = len - off;
    struct wreq *w = malloc(sizeof *w + nt * sizeof w->t[0] + rest);
    if (!w) {
        l->bytes_dropped += rest;
        defer_fail(l, "out of memory");
        return;
    }
    w->nt = nt;
    memcpy(w->t, l->ot, nt * sizeof w->t[0]);
    w->data = (char *)&w->t[nt];
    memcpy(w->data, l->obuf + off, rest);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)rest);
    int rc = uv_write(&w->req, s, &b, 1, on_write);
    if (rc < 0) {
        free(w);
        l->write_errors++;
        l->bytes_dropped += rest;
        defer_fail(l, uv_strerror(rc));
        return;
    }
    l->bytes_out += rest;
    kn_capture_tcp_data(&c->flow, true, l->obuf + off, rest);
    stall_update(l);
}

static void on_flush(uv_check_t *h)
{
    link_flush(h->data);
}

/* What a backend writes on the link's connection is held for the turn
 * (in order), and the flush check writes it once the loop has handled
 * what was ready: one write(2) per simulator per turn, however many
 * commands the turn relayed. */
void kn_link_write(struct kn_link *l, const void *data, size_t len)
{
    struct conn *c = l->conn;
    if (!c || !c->connected || c->abandoned || l->deferred_fail) {
        l->bytes_dropped += len;
        return;
    }
    if (len > l->ocap - l->olen) {
        size_t cap = l->ocap ? l->ocap : 1024;
        while (cap - l->olen < len)
            cap *= 2;
        char *grown = realloc(l->obuf, cap);
        if (!grown) {
            l->bytes_dropped += len;
            defer_fail(l, "out of memory");
            return;
        }
        l->obuf = grown;
        l->ocap = cap;
    }
    memcpy(l->obuf + l->olen, data, len);
    l->olen += len;
    l->appended += len;
    if (l->olen >= OUT_FLUSH_AT)
        link_flush(l);
    else
        uv_check_start(&l->flush, on_flush);
}

static void send_now(struct kn_link *l, const struct kn_command *cmd, uint64_t t_rx, bool reapply)
{
    uint64_t before = l->appended;
    l->ops->send_command(l->be, cmd, reapply);
    l->cmds_sent++;
    if (reapply)
        l->cmds_reapplied++;
    if (!t_rx)
        return;
    if (l->appended != before && l->olen > 0)
        hold_time(l, t_rx); /* timed when the turn's write takes its bytes */
    else if (!l->deferred_fail)
        kn_hist_record(&l->lat, now_ns() - t_rx);
}

static void merge(struct kn_command *into, const struct kn_command *c)
{
    into->belt_speed_m_s[0] = c->belt_speed_m_s[0];
    into->belt_speed_m_s[1] = c->belt_speed_m_s[1];
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (c->flipper_mask & (1u << k))
            into->flipper_rad[k] = c->flipper_rad[k];
    into->flipper_mask |= c->flipper_mask;
    into->emergency = c->emergency; /* the newest stop says how to stop */
}

void kn_link_command(struct kn_link *l, const struct kn_command *cmd, uint64_t t_rx_ns)
{
    if (!l->have_cmd)
        memset(&l->last, 0, sizeof l->last);
    merge(&l->last, cmd);
    l->last.emergency = false; /* re-applied set-points are no emergency */
    l->have_cmd = true;
    if (l->st != L_READY || l->deferred_fail) {
        l->cmds_while_down++;
        return;
    }
    if (queue_size(l) > 0) {
        /* The simulator is not draining: keep only the newest set-points. */
        if (l->pending) {
            l->cmds_coalesced++;
            merge(&l->pend, cmd);
        } else {
            l->pend = *cmd;
            l->pend_t_rx = t_rx_ns;
            l->pending = true;
        }
        return;
    }
    send_now(l, cmd, t_rx_ns, false);
}

/* ---- connecting -------------------------------------------------------- */

/* Every link reads into this one buffer, in turn: libuv calls the read
 * callback right after the read the buffer was allocated for, and the
 * backends' input consumes it before returning (partial lines and frames
 * are copied into their own buffers). A buffer per link was 16 KiB of
 * resident memory per engine robot for the same bytes. */
static char link_rbuf[16384];

static void on_read_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = link_rbuf;
    buf->len = sizeof link_rbuf;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    struct kn_link *l = c->link;
    if (c->abandoned)
        return;
    if (nread > 0) {
        l->bytes_in += (uint64_t)nread;
        kn_capture_tcp_data(&c->flow, false, buf->base, (size_t)nread);
        l->ops->input(l->be, buf->base, (size_t)nread);
    } else if (nread < 0) {
        link_down(l,
                  nread == UV_EOF ? "connection closed by the simulator" : uv_strerror((int)nread));
    }
}

static void on_connect(uv_connect_t *req, int status)
{
    struct conn *c = req->handle->data;
    struct kn_link *l = c->link;
    if (c->abandoned)
        return;
    if (status < 0) {
        link_down(l, uv_strerror(status));
        return;
    }
    c->connected = true;
    l->connects++;
    struct sockaddr_storage la, ra;
    int lal = (int)sizeof la, ral = (int)sizeof ra;
    if (uv_tcp_getsockname(&c->tcp, (struct sockaddr *)&la, &lal) == 0 &&
        uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ra, &ral) == 0)
        kn_capture_tcp_open(&c->flow, (struct sockaddr *)&la, (struct sockaddr *)&ra);
    uv_tcp_nodelay(&c->tcp, 1);
    int sndbuf = SNDBUF_BYTES;
    uv_send_buffer_size((uv_handle_t *)&c->tcp, &sndbuf);
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_read_alloc, on_read);
    if (rc < 0) {
        link_down(l, uv_strerror(rc));
        return;
    }
    l->st = L_HANDSHAKE;
    timer_start_s(l, on_timer,
                  HANDSHAKE_S > l->connect_timeout_s ? HANDSHAKE_S : l->connect_timeout_s);
    c->started = true;
    l->ops->start(l->be);
}

static void do_connect(struct kn_link *l, const struct sockaddr *sa)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        link_down(l, "out of memory");
        return;
    }
    c->link = l;
    uv_tcp_init(l->loop, &c->tcp);
    c->tcp.data = c;
    l->conns_open++;
    l->conn = c;
    l->st = L_CONNECTING;
    timer_start_s(l, on_timer, l->connect_timeout_s);
    int rc = uv_tcp_connect(&c->creq, &c->tcp, sa, on_connect);
    if (rc < 0)
        link_down(l, uv_strerror(rc));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct kn_link *l = req->data;
    l->gai_busy = false;
    if (l->st != L_RESOLVING) { /* timed out or closing meanwhile */
        uv_freeaddrinfo(res);
        maybe_finish(l);
        return;
    }
    if (status < 0 || !res) {
        uv_freeaddrinfo(res);
        link_down(l, status < 0 ? uv_strerror(status) : "no address");
        return;
    }
    struct sockaddr_storage ss;
    memcpy(&ss, res->ai_addr, res->ai_addrlen);
    uv_freeaddrinfo(res);
    do_connect(l, (struct sockaddr *)&ss);
}

static void attempt(struct kn_link *l)
{
    l->attempts++;
    if (l->ops->discovers) {
        /* no connection to open: the backend finds its simulator itself
         * and says kn_link_ready, or the handshake deadline retries */
        l->st = L_HANDSHAKE;
        timer_start_s(l, on_timer,
                      HANDSHAKE_S > l->connect_timeout_s ? HANDSHAKE_S : l->connect_timeout_s);
        l->node_started = true;
        l->ops->start(l->be);
        return;
    }
    struct sockaddr_storage ss;
    if (uv_ip4_addr(l->host, l->port, (struct sockaddr_in *)&ss) == 0 ||
        uv_ip6_addr(l->host, l->port, (struct sockaddr_in6 *)&ss) == 0) {
        do_connect(l, (struct sockaddr *)&ss);
        return;
    }
    if (l->gai_busy) { /* an earlier lookup still runs: try again later */
        link_down(l, "name lookup still running");
        return;
    }
    char port[8];
    snprintf(port, sizeof port, "%u", l->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    l->gai.data = l;
    l->st = L_RESOLVING;
    timer_start_s(l, on_timer, l->connect_timeout_s);
    int rc = uv_getaddrinfo(l->loop, &l->gai, on_resolved, l->host, port, &hints);
    if (rc < 0) {
        link_down(l, uv_strerror(rc));
        return;
    }
    l->gai_busy = true;
}

/* The STEP with the simulator is over: done, or lost with the connection. */
static void step_finish(struct kn_link *l, bool ok)
{
    if (!l->step_pending)
        return;
    l->step_pending = false;
    if (ok)
        l->steps_done++;
    else
        l->steps_lost++;
    if (l->on_step)
        l->on_step(l->step_ctx, ok);
}

/* Connection lost or attempt failed: tell the robot, retry after back-off. */
static void link_down(struct kn_link *l, const char *why)
{
    if (l->st == L_CLOSING) {
        conn_drop(l);
        maybe_finish(l);
        return;
    }
    bool was_up = l->st == L_READY, was_silent = l->silent;
    uint64_t now = now_ns();
    conn_drop(l);
    step_finish(l, false);
    l->deferred_fail = false;
    l->silent = false;
    l->pending = false;
    kn_link_lacks(l, 0);
    if (l->stalled) {
        l->stalled = false;
        l->stall_total_ns += now - l->stall_since;
    }
    snprintf(l->last_error, sizeof l->last_error, "%s", why);
    if (was_up) {
        l->disconnects++;
        l->down_since_ns = now;
        l->fail_streak = 0;
        kn_warn("robot %s: simulator link to %s lost: %s; reconnecting", l->robot, l->where, why);
        if (!was_silent) /* a silent simulator was reported down already */
            l->ev.up(l->ev.ctx, false);
    } else {
        /* a refusal (a full engine world) is said once, as is a streak of
         * failures to reach the simulator; a change between the two anew */
        bool refusal = l->refusing;
        l->refusing = false;
        if (refusal != l->refused)
            l->fail_streak = 0;
        l->refused = refusal;
        l->connect_failures++;
        if (l->fail_streak++ == 0)
            kn_warn("robot %s: %s %s: %s; %s (back-off up to %.2f s)", l->robot,
                    refusal ? "the robot was refused by the simulator at"
                            : "cannot reach the simulator at",
                    l->where, why, refusal ? "asking again" : "retrying", l->reconnect_max_s);
        else
            kn_debug("robot %s: attempt %llu to %s %s: %s", l->robot,
                     (unsigned long long)l->attempts, l->where, refusal ? "refused" : "failed",
                     why);
    }
    l->st = L_BACKOFF;
    l->backoff_last_s = l->backoff_s;
    timer_start_s(l, on_timer, l->backoff_s);
    l->backoff_s *= 2;
    if (l->backoff_s > l->reconnect_max_s)
        l->backoff_s = l->reconnect_max_s;
}

static void on_timer(uv_timer_t *t)
{
    struct kn_link *l = t->data;
    if (l->deferred_fail && l->st != L_CLOSING) {
        l->deferred_fail = false;
        link_down(l, l->deferred_why);
        return;
    }
    switch (l->st) {
    case L_RESOLVING:
    case L_CONNECTING: link_down(l, "connect timeout"); break;
    case L_HANDSHAKE:
        l->handshake_timeouts++;
        link_down(l, "simulator did not become ready in time");
        break;
    case L_BACKOFF: attempt(l); break;
    case L_CLOSING:
        conn_drop(l); /* flushing took too long */
        maybe_finish(l);
        break;
    case L_READY: silence_check(l); break;
    default: break;
    }
}

void kn_link_ready(struct kn_link *l)
{
    if (l->st != L_HANDSHAKE)
        return;
    uint64_t now = now_ns();
    uv_timer_stop(&l->timer);
    l->st = L_READY;
    l->backoff_s = BACKOFF_FIRST_S < l->reconnect_max_s ? BACKOFF_FIRST_S : l->reconnect_max_s;
    if (l->was_ready) {
        l->reconnects++;
        kn_info("robot %s: simulator at %s ready again after %.2f s", l->robot, l->where,
                (double)(now - l->down_since_ns) / 1e9);
    } else {
        kn_info("robot %s: simulator at %s ready", l->robot, l->where);
    }
    l->was_ready = true;
    l->fail_streak = 0;
    l->refused = false;
    l->silent = false;
    l->heard_ns = now;
    timer_start_s(l, on_timer, (double)l->stale_ns / 1e9);
    l->ev.up(l->ev.ctx, true);
    if (l->have_cmd && l->st == L_READY)
        send_now(l, &l->last, 0, true);
}

/* Bytes the simulator sent on the connection that we have not read. */
static int unread_bytes(struct kn_link *l)
{
    uv_os_fd_t fd;
    int n = 0;
    if (!l->conn || !l->conn->connected || uv_fileno((uv_handle_t *)&l->conn->tcp, &fd) != 0 ||
        ioctl(fd, FIONREAD, &n) != 0)
        return 0;
    return n;
}

/* Ready, and no state for stale_ns: the simulator is connected but mute
 * (hung, stopped, paused). BACKEND_UP drops with one warning; the timer
 * runs from the last state heard, so a talking simulator costs no timer
 * work per line. After a stall of our own (stopped, blocked) the timers
 * run before the loop reads: what the simulator said meanwhile waits in
 * the socket, and is read before the simulator is called silent. */
static void silence_check(struct kn_link *l)
{
    /* in lockstep the simulator says nothing between STEPs, by design */
    if (l->lockstep)
        return;
    uint64_t now = now_ns(), quiet = now - l->heard_ns;
    if (quiet < l->stale_ns) {
        timer_start_s(l, on_timer, (double)(l->stale_ns - quiet) / 1e9);
        return;
    }
    if (l->silent)
        return;
    if (unread_bytes(l) > 0) {
        l->unread_saves++;
        uv_timer_start(&l->timer, on_timer, UNREAD_RECHECK_MS, 0);
        return;
    }
    l->silent = true;
    l->silent_since_ns = l->heard_ns;
    l->silences++;
    kn_warn("robot %s: simulator at %s silent for %.0f ms (no sensor or status line): reported "
            "down until it talks again",
            l->robot, l->where, (double)quiet / 1e6);
    l->ev.up(l->ev.ctx, false);
}

void kn_link_state(struct kn_link *l, const struct kn_state *s)
{
    uint64_t now = now_ns();
    l->states++;
    l->last_state_ns = now;
    l->have_state = true;
    if (l->st == L_READY) {
        l->heard_ns = now;
        if (l->silent) {
            l->silent = false;
            kn_info("robot %s: simulator at %s talks again after %.2f s of silence", l->robot,
                    l->where, (double)(now - l->silent_since_ns) / 1e9);
            timer_start_s(l, on_timer, (double)l->stale_ns / 1e9);
            l->ev.up(l->ev.ctx, true);
            if (l->have_cmd && l->st == L_READY && !l->deferred_fail)
                send_now(l, &l->last, 0, true);
        }
    }
    l->ev.state(l->ev.ctx, s, now);
}

void kn_link_on_step(struct kn_link *l, void (*fn)(void *ctx, bool ok), void *ctx)
{
    l->on_step = fn;
    l->step_ctx = ctx;
}

int kn_link_step(struct kn_link *l, uint32_t advance_us)
{
    if (!l->lockstep || !l->ops->step || l->st != L_READY || l->deferred_fail || l->step_pending)
        return -1;
    /* set-points held back behind a full queue go first: the simulator
     * must see them before the time they are meant for passes */
    if (l->pending) {
        l->pending = false;
        send_now(l, &l->pend, l->pend_t_rx, false);
    }
    l->step_pending = true;
    l->steps_sent++;
    l->ops->step(l->be, advance_us);
    return 0;
}

void kn_link_stepped(struct kn_link *l, bool ok)
{
    step_finish(l, ok);
}

void kn_link_on_trial(struct kn_link *l, void (*fn)(void *ctx, const struct kn_krp_trial *t),
                      void *ctx)
{
    l->on_trial = fn;
    l->trial_ctx = ctx;
}

int kn_link_trial_cmd(struct kn_link *l, bool reset)
{
    if (!l->ops->trial || l->st != L_READY || l->deferred_fail)
        return -1;
    l->ops->trial(l->be, reset);
    return 0;
}

void kn_link_trial(struct kn_link *l, const struct kn_krp_trial *t)
{
    if (l->on_trial)
        l->on_trial(l->trial_ctx, t);
}

void kn_link_on_world(struct kn_link *l, void (*fn)(void *ctx, const char *text, size_t len),
                      void *ctx)
{
    l->on_world = fn;
    l->world_ctx = ctx;
}

void kn_link_world(struct kn_link *l, const char *text, size_t len)
{
    if (l->on_world)
        l->on_world(l->world_ctx, text, len);
}

uint64_t kn_link_heard_ns(const struct kn_link *l)
{
    return l->st == L_READY ? l->heard_ns : 0;
}

void kn_link_fail(struct kn_link *l, const char *why)
{
    defer_fail(l, why);
}

void kn_link_refused(struct kn_link *l, const char *why)
{
    if (l->st != L_HANDSHAKE || l->deferred_fail)
        return;
    l->refusing = true;
    l->refusals++;
    defer_fail(l, why);
}

void kn_link_lacks(struct kn_link *l, unsigned lacks)
{
    if (lacks == l->lacks)
        return;
    l->lacks = lacks;
    if (l->ev.lacks)
        l->ev.lacks(l->ev.ctx, lacks);
}

const char *kn_link_robot(const struct kn_link *l)
{
    return l->robot;
}

uv_loop_t *kn_link_loop(struct kn_link *l)
{
    return l->loop;
}

int kn_link_local_addr(const struct kn_link *l, struct sockaddr_storage *ss)
{
    const struct conn *c = l->conn;
    if (!c || !c->connected || c->abandoned)
        return -1;
    int len = (int)sizeof *ss;
    return uv_tcp_getsockname(&c->tcp, (struct sockaddr *)ss, &len) == 0 ? 0 : -1;
}

void kn_link_set_address(struct kn_link *l, const char *host, uint16_t port)
{
    snprintf(l->host, sizeof l->host, "%s", host);
    l->port = port;
    kn_hostport_format(l->host, l->port, l->where, sizeof l->where);
    /* a spawned engine announced (a new) port: connect now rather than
     * after the back-off */
    if (l->start_wanted && l->port && (l->st == L_IDLE || l->st == L_BACKOFF)) {
        uv_timer_stop(&l->timer);
        attempt(l);
    }
}

void *kn_link_backend(struct kn_link *l, const struct kn_backend_ops *ops)
{
    return l && l->ops == ops ? l->be : NULL;
}

/* ---- life cycle -------------------------------------------------------- */

static void free_link_handle(uv_handle_t *h)
{
    free(h->data);
}

struct kn_link *kn_link_new(uv_loop_t *loop, const struct kn_cfg_robot *cfg,
                            const struct kn_backend_ops *ops, const struct kn_link_events *ev)
{
    struct kn_link *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->loop = loop;
    snprintf(l->robot, sizeof l->robot, "%s", cfg->name);
    snprintf(l->host, sizeof l->host, "%s", cfg->backend.host[0] ? cfg->backend.host : "127.0.0.1");
    l->port = cfg->backend.port ? cfg->backend.port : ops->default_port;
    kn_hostport_format(l->host, l->port, l->where, sizeof l->where);
    if (ops->discovers)
        snprintf(l->where, sizeof l->where, "%s discovery", ops->name);
    l->connect_timeout_s =
        cfg->backend.connect_timeout_s > 0 ? cfg->backend.connect_timeout_s : 1.0;
    l->stale_ns = (uint64_t)((cfg->backend.stale_ms > 0 ? cfg->backend.stale_ms : 500.0) * 1e6);
    l->reconnect_max_s = cfg->backend.reconnect_max_s > 0 ? cfg->backend.reconnect_max_s : 1.0;
    if (l->reconnect_max_s > 1.0)
        l->reconnect_max_s = 1.0;
    l->backoff_s = BACKOFF_FIRST_S < l->reconnect_max_s ? BACKOFF_FIRST_S : l->reconnect_max_s;
    l->ops = ops;
    l->ev = *ev;
    l->lockstep = cfg->backend.lockstep;
    kn_hist_init(&l->lat);
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    l->be = ops->create(l, cfg);
    if (!l->be) {
        uv_close((uv_handle_t *)&l->timer, free_link_handle);
        return NULL;
    }
    uv_check_init(loop, &l->flush);
    l->flush.data = l;
    return l;
}

void kn_link_start(struct kn_link *l)
{
    l->start_wanted = true;
    if (l->port == 0 && l->ops->kind == KN_BACKEND_ENGINE) {
        /* the engine backend spawns kenaf-engine and sets the port once
         * the engine prints it (engine_proc.c) */
        kn_debug("robot %s: waiting for the spawned engine's port", l->robot);
        return;
    }
    if (l->port == 0 && !l->ops->discovers) {
        snprintf(l->last_error, sizeof l->last_error, "no simulator port configured");
        kn_err("robot %s: backend %s has no port: set backend.address", l->robot, l->ops->name);
        return;
    }
    attempt(l);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct kn_link *l = h->data;
    void (*done)(void *) = l->done;
    void *arg = l->done_arg;
    l->ops->destroy(l->be);
    free(l->obuf);
    free(l->ot);
    free(l);
    if (done)
        done(arg);
}

/* The flush check closes first, then the timer, whose callback frees. */
static void on_flush_closed(uv_handle_t *h)
{
    struct kn_link *l = h->data;
    uv_close((uv_handle_t *)&l->timer, on_timer_closed);
}

static void maybe_finish(struct kn_link *l)
{
    if (l->st != L_CLOSING || l->conn || l->conns_open || l->gai_busy || l->timer_closing)
        return;
    l->timer_closing = true;
    uv_close((uv_handle_t *)&l->flush, on_flush_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    struct conn *c = req->handle->data;
    struct kn_link *l = c->link;
    if (!c->abandoned && l->conn == c)
        conn_drop(l);
    maybe_finish(l);
}

void kn_link_close(struct kn_link *l, void (*done)(void *arg), void *arg)
{
    l->done = done;
    l->done_arg = arg;
    bool ready = l->st == L_READY && !l->deferred_fail;
    l->st = L_CLOSING;
    uv_timer_stop(&l->timer);
    uv_timer_start(&l->timer, on_timer, CLOSE_DEADLINE_MS, 0);
    struct conn *c = l->conn;
    if (c && c->connected && ready) {
        if (l->pending) { /* the newest set-points go out even behind a full queue */
            l->pending = false;
            send_now(l, &l->pend, l->pend_t_rx, false);
        }
        link_flush(l); /* what this turn held, before the shutdown */
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (uv_shutdown(&c->sreq, (uv_stream_t *)&c->tcp, on_shutdown) == 0)
            return;
    }
    conn_drop(l);
    maybe_finish(l);
}

bool kn_link_is_up(const struct kn_link *l)
{
    return l->st == L_READY && !l->silent;
}

uint64_t kn_link_reconnects(const struct kn_link *l)
{
    return l->reconnects;
}

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

void kn_link_stats(struct kn_link *l, cJSON *o, uint64_t now)
{
    cJSON_AddStringToObject(o, "type", l->ops->name);
    cJSON_AddStringToObject(o, "address", l->where);
    cJSON_AddStringToObject(o, "state",
                            l->refused && l->st != L_READY ? "refused" : state_names[l->st]);
    cJSON_AddBoolToObject(o, "up", l->st == L_READY && !l->silent);
    cJSON_AddBoolToObject(o, "silent", l->silent);
    cJSON_AddNumberToObject(o, "silences", (double)l->silences);
    cJSON_AddNumberToObject(o, "unread_saves", (double)l->unread_saves);
    cJSON_AddBoolToObject(o, "no_model", l->lacks & KN_LINK_NO_MODEL);
    cJSON_AddBoolToObject(o, "no_flippers", l->lacks & KN_LINK_NO_FLIPPERS);
    cJSON_AddBoolToObject(o, "no_drive", l->lacks & KN_LINK_NO_DRIVE);
    cJSON_AddNumberToObject(o, "attempts", (double)l->attempts);
    cJSON_AddNumberToObject(o, "connects", (double)l->connects);
    cJSON_AddNumberToObject(o, "reconnects", (double)l->reconnects);
    cJSON_AddNumberToObject(o, "backoff_s", l->backoff_last_s);
    if (l->lockstep) {
        cJSON *ls = cJSON_AddObjectToObject(o, "lockstep");
        cJSON_AddNumberToObject(ls, "steps_sent", (double)l->steps_sent);
        cJSON_AddNumberToObject(ls, "steps_done", (double)l->steps_done);
        cJSON_AddNumberToObject(ls, "steps_lost", (double)l->steps_lost);
        cJSON_AddBoolToObject(ls, "pending", l->step_pending);
    }
    cJSON_AddNumberToObject(o, "connect_failures", (double)l->connect_failures);
    cJSON_AddNumberToObject(o, "disconnects", (double)l->disconnects);
    cJSON_AddNumberToObject(o, "handshake_timeouts", (double)l->handshake_timeouts);
    cJSON_AddNumberToObject(o, "refusals", (double)l->refusals);
    cJSON_AddStringToObject(o, "last_error", l->last_error);
    if (l->have_state)
        cJSON_AddNumberToObject(o, "status_age_ms", (double)(now - l->last_state_ns) / 1e6);
    else
        cJSON_AddNullToObject(o, "status_age_ms");
    cJSON_AddNumberToObject(o, "states", (double)l->states);
    cJSON_AddNumberToObject(o, "bytes_in", (double)l->bytes_in);
    cJSON_AddNumberToObject(o, "bytes_out", (double)l->bytes_out);
    cJSON_AddNumberToObject(o, "bytes_dropped", (double)l->bytes_dropped);
    cJSON_AddNumberToObject(o, "write_errors", (double)l->write_errors);

    cJSON *c = cJSON_AddObjectToObject(o, "commands");
    cJSON_AddNumberToObject(c, "sent", (double)l->cmds_sent);
    cJSON_AddNumberToObject(c, "coalesced", (double)l->cmds_coalesced);
    cJSON_AddNumberToObject(c, "while_down", (double)l->cmds_while_down);
    cJSON_AddNumberToObject(c, "reapplied", (double)l->cmds_reapplied);
    cJSON_AddBoolToObject(c, "pending", l->pending);

    cJSON *s = cJSON_AddObjectToObject(o, "stall");
    uint64_t cur = l->stalled ? now - l->stall_since : 0;
    cJSON_AddBoolToObject(s, "stalled", cur >= STALL_REPORT_NS);
    cJSON_AddNumberToObject(s, "stalled_ms", (double)cur / 1e6);
    cJSON_AddNumberToObject(s, "stalls", (double)(l->stall_episodes + (cur >= STALL_REPORT_NS)));
    cJSON_AddNumberToObject(s, "total_ms", (double)(l->stall_total_ns + cur) / 1e6);
    cJSON_AddNumberToObject(s, "queued_bytes", (double)queue_size(l));

    cJSON *h = cJSON_AddObjectToObject(o, "latency_us");
    cJSON_AddNumberToObject(h, "count", (double)l->lat.count);
    cJSON_AddNumberToObject(h, "p50", us(kn_hist_quantile(&l->lat, 0.50)));
    cJSON_AddNumberToObject(h, "p99", us(kn_hist_quantile(&l->lat, 0.99)));
    cJSON_AddNumberToObject(h, "p999", us(kn_hist_quantile(&l->lat, 0.999)));
    cJSON_AddNumberToObject(h, "max", us(l->lat.max));
    cJSON_AddNumberToObject(h, "mean", l->lat.count ? us(l->lat.sum / l->lat.count) : 0.0);

    if (l->ops->stats)
        l->ops->stats(l->be, cJSON_AddObjectToObject(o, l->ops->name));
}
