/* The gazebo backend's control socket: a config-free way to drive
 * ~/world_control (pause, run, step, reset) and read the world's state,
 * for tools and tests until lockstep drives it from inside the daemon.
 * With KENAF_GAZEBO_CONTROL_DIR set, each gazebo robot listens on
 * <dir>/<robot>.sock; a client writes lines, each answered by one line:
 *   pause                      -> ok N      (N: subscribers it reached)
 *   play                       -> ok N
 *   step [COUNT]               -> ok N      (COUNT > 1: multi_step, pauses)
 *   reset [all|time|model]     -> ok N
 *   status                     -> ok up=1 world=default paused=0 sim_time=12.345 iterations=12345
 * and "error <why>" otherwise. */
#include "backend_gazebo_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "unixsock.h"

struct reply {
    uv_write_t req;
    char text[160];
};

static void on_ctl_closed(uv_handle_t *h)
{
    struct gzc *b = h->data;
    free(h);
    kn_gazebo_handle_closed(b);
}

static void on_client_closed(uv_handle_t *h)
{
    struct gzc_ctl_client *c = h->data;
    struct gzc *b = c->b;
    for (struct gzc_ctl_client **pp = &b->ctl_clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    b->n_ctl_clients--;
    free(c);
    kn_gazebo_handle_closed(b);
}

static void client_close(struct gzc_ctl_client *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_close((uv_handle_t *)&c->pipe, on_client_closed);
}

static void on_replied(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

static void reply(struct gzc_ctl_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void reply(struct gzc_ctl_client *c, const char *fmt, ...)
{
    struct reply *r = malloc(sizeof *r);
    if (!r)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->text, sizeof r->text - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof r->text - 2)
        n = (int)sizeof r->text - 2;
    r->text[n++] = '\n';
    uv_buf_t buf = uv_buf_init(r->text, (unsigned)n);
    if (uv_write(&r->req, (uv_stream_t *)&c->pipe, &buf, 1, on_replied) < 0) {
        free(r);
        client_close(c);
    }
}

static bool parse_count(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v > 1000000 || s[0] == '-')
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct gzc_ctl_client *c = ctx;
    struct gzc *b = c->b;
    if (len == 0)
        return !c->closing;
    char verb[16] = "", arg[32] = "", extra[2] = "";
    int n = sscanf(line, "%15s %31s %1s", verb, arg, extra);
    struct kn_gzc_world_ctl wc;
    memset(&wc, 0, sizeof wc);
    b->ctl_commands++;
    if (n >= 1 && strcmp(verb, "status") == 0 && n == 1) {
        reply(c, "ok up=%d world=%s paused=%d sim_time=%.6f iterations=%llu", b->live ? 1 : 0,
              b->world[0] ? b->world : "-", b->fb.paused ? 1 : 0, b->fb.st.time_s,
              (unsigned long long)b->fb.iterations);
        return !c->closing;
    }
    if (n == 1 && strcmp(verb, "pause") == 0) {
        wc.set_pause = true;
        wc.pause = true;
    } else if (n == 1 && (strcmp(verb, "play") == 0 || strcmp(verb, "run") == 0)) {
        wc.set_pause = true;
        wc.pause = false;
    } else if (n <= 2 && strcmp(verb, "step") == 0) {
        uint32_t k = 1;
        if (n == 2 && !parse_count(arg, &k)) {
            reply(c, "error step count must be 1..1000000, got \"%s\"", arg);
            return !c->closing;
        }
        if (k == 1)
            wc.step = true;
        else
            wc.multi_step = k;
    } else if (n <= 2 && strcmp(verb, "reset") == 0) {
        if (n == 1 || strcmp(arg, "all") == 0)
            wc.reset = KN_GZC_RESET_ALL;
        else if (strcmp(arg, "time") == 0)
            wc.reset = KN_GZC_RESET_TIME;
        else if (strcmp(arg, "model") == 0)
            wc.reset = KN_GZC_RESET_MODEL;
        else {
            reply(c, "error reset takes all, time or model, got \"%s\"", arg);
            return !c->closing;
        }
    } else {
        reply(c, "error unknown command (pause, play, step [N], reset [all|time|model], status)");
        return !c->closing;
    }
    int sent = kn_gazebo_world_control(b->link, &wc);
    if (sent < 0)
        reply(c, "error the Gazebo master is not connected");
    else if (sent == 0)
        reply(c, "error no subscriber on %s yet", b->topic[GZC_T_CONTROL].name);
    else
        reply(c, "ok %d", sent);
    return !c->closing;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct gzc_ctl_client *c = h->data;
    buf->base = (char *)c->b->rbuf;
    buf->len = 1024;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct gzc_ctl_client *c = s->data;
    if (c->closing)
        return;
    if (nread < 0) {
        client_close(c);
        return;
    }
    kn_linebuf_feed(&c->lb, buf->base, (size_t)nread, on_line, c);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct gzc *b = server->data;
    if (status < 0)
        return;
    struct gzc_ctl_client *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->b = b;
    uv_pipe_init(b->loop, &c->pipe, 0);
    c->pipe.data = c;
    b->handles++;
    b->n_ctl_clients++;
    c->next = b->ctl_clients;
    b->ctl_clients = c;
    kn_linebuf_init(&c->lb, c->lbuf, sizeof c->lbuf - 1);
    if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0 || b->n_ctl_clients > GZC_MAX_CTL_CLIENTS ||
        uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0)
        client_close(c);
}

void kn_gazebo_ctl_open(struct gzc *b)
{
    const char *dir = getenv(KN_GAZEBO_CONTROL_ENV);
    if (!dir || !dir[0])
        return;
    int w = snprintf(b->ctl_path, sizeof b->ctl_path, "%s/%s.sock", dir, b->robot);
    if (w < 0 || (size_t)w >= sizeof b->ctl_path) {
        kn_warn("robot %s: %s=%s: socket path too long; no control socket", b->robot,
                KN_GAZEBO_CONTROL_ENV, dir);
        b->ctl_path[0] = '\0';
        return;
    }
    uv_pipe_t *p = malloc(sizeof *p);
    if (!p)
        return;
    uv_pipe_init(b->loop, p, 0);
    p->data = b;
    b->handles++;
    char why[600];
    if (kn_unixsock_listen(p, b->ctl_path, 4, on_connection, why, sizeof why) < 0) {
        kn_warn("robot %s: control socket %s; no control socket", b->robot, why);
        b->ctl_path[0] = '\0';
        uv_close((uv_handle_t *)p, on_ctl_closed);
        return;
    }
    b->ctl = p;
    kn_info("robot %s: Gazebo world control on %s", b->robot, b->ctl_path);
}

void kn_gazebo_ctl_close(struct gzc *b)
{
    if (b->ctl) {
        uv_close((uv_handle_t *)b->ctl, on_ctl_closed);
        b->ctl = NULL;
        unlink(b->ctl_path);
    }
    for (struct gzc_ctl_client *c = b->ctl_clients; c; c = c->next)
        client_close(c);
}
