/* The stand-in simulators' TCP side: see sim_server.h. */
#include "sim_server.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void sim_log(struct sim_server *s, int id, const char *fmt, ...)
{
    if (!s->log)
        return;
    fprintf(s->log, "%llu %d ", (unsigned long long)mono_us(), id);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(s->log, fmt, ap);
    va_end(ap);
    fputc('\n', s->log);
    fflush(s->log);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

void sim_send(struct sim_client *c, const char *text, size_t len)
{
    if (c->closing || len == 0)
        return;
    uv_write_t *req = malloc(sizeof *req + len);
    if (!req)
        return;
    char *copy = (char *)(req + 1);
    memcpy(copy, text, len);
    uv_buf_t b = uv_buf_init(copy, (unsigned)len);
    if (uv_write(req, (uv_stream_t *)&c->tcp, &b, 1, on_written) < 0)
        free(req);
}

static void on_client_closed(uv_handle_t *h)
{
    struct sim_client *c = h->data;
    for (struct sim_client **p = &c->srv->clients; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    free(c);
}

void sim_close(struct sim_client *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (c->srv->hooks->on_close)
        c->srv->hooks->on_close(c);
    uv_close((uv_handle_t *)&c->tcp, on_client_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static char rbuf[65536];
    buf->base = rbuf;
    buf->len = sizeof rbuf;
}

static bool got_line(void *ctx, char *line, size_t len)
{
    struct sim_client *c = ctx;
    if (len == 0)
        return true;
    c->srv->lines++;
    sim_log(c->srv, c->id, "%.*s", (int)len, line);
    return c->srv->hooks->on_line(ctx, line, len);
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
    struct sim_client *c = stream->data;
    struct sim_server *s = c->srv;
    if (n > 0) {
        if (s->hooks->on_bytes)
            s->hooks->on_bytes(c, buf->base, (size_t)n);
        uint64_t before = c->lb.overlong;
        kn_linebuf_feed(&c->lb, buf->base, (size_t)n, got_line, c);
        s->overlong += c->lb.overlong - before;
    } else if (n < 0) {
        sim_close(c);
    }
}

static void free_owner(uv_handle_t *h)
{
    free(h->data);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct sim_server *s = server->data;
    if (status < 0)
        return;
    /* the simulator's struct, then the line buffer's storage */
    struct sim_client *c = calloc(1, s->hooks->client_size + s->hooks->max_line + 1);
    if (!c)
        return;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
        uv_close((uv_handle_t *)&c->tcp, free_owner);
        return;
    }
    c->srv = s;
    c->id = ++s->next_id;
    kn_linebuf_init(&c->lb, (char *)c + s->hooks->client_size, s->hooks->max_line);
    c->next = s->clients;
    s->clients = c;
    uv_tcp_nodelay(&c->tcp, 1);
    sim_log(s, c->id, "#connect");
    if (s->hooks->on_connect)
        s->hooks->on_connect(c);
    if (!s->paused)
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

void sim_pause(struct sim_server *s, bool paused)
{
    s->paused = paused;
    for (struct sim_client *c = s->clients; c; c = c->next) {
        if (c->closing)
            continue;
        if (paused)
            uv_read_stop((uv_stream_t *)&c->tcp);
        else
            uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

bool sim_open(struct sim_server *s, const char *name, const struct sim_hooks *hooks,
              const char *log_path)
{
    s->name = name;
    s->hooks = hooks;
    s->loop = uv_default_loop();
    signal(SIGPIPE, SIG_IGN);
    if (log_path) {
        s->log = fopen(log_path, "a");
        if (!s->log) {
            perror(log_path);
            return false;
        }
    }
    return true;
}

bool sim_listen(struct sim_server *s, int port, int backlog)
{
    uv_tcp_init(s->loop, &s->tcp);
    s->tcp.data = s;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    int rc = uv_tcp_bind(&s->tcp, (const struct sockaddr *)&a, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->tcp, backlog, on_connection);
    if (rc < 0) {
        fprintf(stderr, "%s: cannot listen on 127.0.0.1:%d: %s\n", s->name, port, uv_strerror(rc));
        return false;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    uv_tcp_getsockname(&s->tcp, (struct sockaddr *)&ss, &len);
    printf("PORT %u\n", ntohs(((struct sockaddr_in *)&ss)->sin_port));
    fflush(stdout);
    return true;
}

void sim_on_signals(struct sim_server *s, const int *sigs, int n, uv_signal_cb cb)
{
    for (int i = 0; i < n && s->nsig < 4; i++) {
        uv_signal_t *h = &s->sig[s->nsig++];
        uv_signal_init(s->loop, h);
        h->data = s;
        uv_signal_start(h, cb, sigs[i]);
    }
}

void sim_run(struct sim_server *s)
{
    uv_run(s->loop, UV_RUN_DEFAULT);
    if (s->log)
        fclose(s->log);
    s->log = NULL;
}

void sim_shutdown(struct sim_server *s)
{
    for (struct sim_client *c = s->clients; c; c = c->next)
        sim_close(c);
    uv_close((uv_handle_t *)&s->tcp, NULL);
    for (int i = 0; i < s->nsig; i++)
        uv_close((uv_handle_t *)&s->sig[i], NULL);
}

#define SIM_CLOCK_MAX_NS 200000000ull /* the longest stall caught up */

unsigned sim_clock_steps(struct sim_clock *c)
{
    uint64_t now = uv_hrtime();
    if (!c->last_ns) {
        c->last_ns = now;
        return 1;
    }
    c->owed_ns += now - c->last_ns;
    c->last_ns = now;
    uint64_t n = c->owed_ns / c->step_ns, max = SIM_CLOCK_MAX_NS / c->step_ns + 1;
    if (n > max) {
        c->owed_ns = 0;
        return (unsigned)max;
    }
    c->owed_ns -= n * c->step_ns;
    return (unsigned)n;
}
