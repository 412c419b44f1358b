/* gazebo_standin: the event log and framed TCP connections shared by the
 * master, the transport node and the world (standin.h). Every connection
 * reads through the codec's framer; a bad frame closes it, as Gazebo's
 * Connection gives up on a stream it cannot parse. */
#include "standin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *logf_;

void sl_open(const char *path)
{
    logf_ = fopen(path, "a");
    if (!logf_)
        fprintf(stderr, "gazebo_standin: cannot open log %s\n", path);
}

uint64_t sl_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct kn_gzc_stamp sl_wall_stamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct kn_gzc_stamp s = { (int32_t)ts.tv_sec, (int32_t)ts.tv_nsec };
    return s;
}

void sl_log(const char *fmt, ...)
{
    if (!logf_)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(logf_, "%llu ", (unsigned long long)sl_mono_us());
    vfprintf(logf_, fmt, ap);
    fputc('\n', logf_);
    fflush(logf_);
    va_end(ap);
}

/* ---- connections --------------------------------------------------------- */

static int next_id;

struct wreq {
    uv_write_t req;
    char data[];
};

static char rbuf[65536];

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = rbuf;
    buf->len = sizeof rbuf;
}

static void on_closed(uv_handle_t *h)
{
    struct sconn *c = h->data;
    if (c->on_close)
        c->on_close(c);
    free(c->buf);
    free(c);
}

void sconn_close(struct sconn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static bool deliver(void *ctx, const uint8_t *p, size_t n)
{
    struct sconn *c = ctx;
    if (c->on_frame)
        c->on_frame(c, p, n);
    return !c->closing;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct sconn *c = s->data;
    if (c->closing)
        return;
    if (nread < 0) {
        sconn_close(c);
        return;
    }
    kn_gzc_framer_feed(&c->fr, (const uint8_t *)buf->base, (size_t)nread, deliver, c);
    if (c->fr.err && !c->closing) {
        sl_log("bad_frame conn=%d peer=%s %s", c->id, c->peer, kn_gzc_frame_strerror(c->fr.err));
        sconn_close(c);
    }
}

static void names(struct sconn *c)
{
    struct sockaddr_storage ss;
    int len = (int)sizeof ss;
    char h[48] = "?";
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET) {
        uv_ip4_name((struct sockaddr_in *)&ss, h, sizeof h);
        snprintf(c->peer, sizeof c->peer, "%s:%u", h, ntohs(((struct sockaddr_in *)&ss)->sin_port));
    }
    len = (int)sizeof ss;
    if (uv_tcp_getsockname(&c->tcp, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET) {
        uv_ip4_name((struct sockaddr_in *)&ss, c->local, sizeof c->local);
        c->local_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
}

struct sconn *sconn_new(uv_loop_t *loop, void *owner, size_t cap)
{
    struct sconn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->buf = malloc(cap);
    if (!c->buf) {
        free(c);
        return NULL;
    }
    kn_gzc_framer_init(&c->fr, c->buf, cap);
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    c->owner = owner;
    c->id = ++next_id;
    snprintf(c->peer, sizeof c->peer, "?");
    return c;
}

int sconn_accept(struct sconn *c, uv_stream_t *server)
{
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0)
        return -1;
    uv_tcp_nodelay(&c->tcp, 1);
    names(c);
    return uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void on_connected(uv_connect_t *req, int status)
{
    struct sconn *c = req->handle->data;
    if (c->closing)
        return;
    if (status == 0) {
        uv_tcp_nodelay(&c->tcp, 1);
        names(c);
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
            status = -1;
    }
    if (c->on_connect)
        c->on_connect(c, status);
    if (status < 0)
        sconn_close(c);
}

int sconn_connect(struct sconn *c, const char *host, int port)
{
    struct sockaddr_in a;
    if (uv_ip4_addr(host, port, &a) != 0)
        return -1;
    return uv_tcp_connect(&c->creq, &c->tcp, (struct sockaddr *)&a, on_connected);
}

static void on_written(uv_write_t *req, int status)
{
    struct sconn *c = req->handle->data;
    free(req);
    if (status < 0 && status != UV_ECANCELED)
        sconn_close(c);
}

void sconn_write(struct sconn *c, const uint8_t *p, size_t n)
{
    if (c->closing || n == 0)
        return;
    struct wreq *w = malloc(sizeof *w + n);
    if (!w) {
        sconn_close(c);
        return;
    }
    memcpy(w->data, p, n);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) < 0) {
        free(w);
        sconn_close(c);
    }
}
