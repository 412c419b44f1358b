/* standin_sim: the stand-in simulator kenaf-simd's system tests run
 * against, and a reference peer for the "standin" JSON-lines link
 * (protocols/PROTOCOL-NOTES.md). A TCP server that integrates a kinematic
 * skid-steer Kenaf (belts with an acceleration limit, flippers slewing to
 * their targets, planar pose and yaw), streams state lines, and records
 * every line it receives, with a CLOCK_MONOTONIC time stamp, to --log.
 *
 *   standin_sim [--port N] [--log FILE] [--hz N] [--state-hz N]
 *               [--no-ready] [--garbage]
 *
 * Prints "PORT <n>" on stdout once it listens. SIGUSR1 stops reading the
 * clients' sockets (a simulator that does not drain), SIGUSR2 resumes,
 * SIGTERM/SIGINT exit 0. A malformed line is counted and skipped.
 * --garbage sends malformed lines after the handshake (tests the daemon's
 * side); --no-ready never answers the handshake. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "linebuf.h"

#define MAX_LINE 4096
#define TRACK_WIDTH_M 0.40     /* belt centre to belt centre */
#define BELT_ACCEL_M_S2 4.0
#define FLIPPER_RATE_RAD_S 2.0
#define GRAVITY 9.80665

struct client {
    uv_tcp_t tcp;
    struct client *next;
    int id;
    bool hello;
    bool closing;
    struct kn_linebuf lb;
    char lbuf[MAX_LINE + 1];
};

static struct {
    uv_loop_t *loop;
    uv_tcp_t server;
    uv_timer_t step;
    uv_signal_t sig[4];
    FILE *log;
    struct client *clients;
    int next_id;
    bool paused;
    bool no_ready;
    bool garbage;
    double dt;
    unsigned state_every, step_no;
    /* model */
    double t;
    double belt_target[2], belt_speed[2], belt_pos[2];
    double flipper[4], flipper_target[4];
    double x, y, yaw, yaw_rate, ax, ay;
    uint64_t lines, malformed, overlong, commands;
} S;

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void log_line(int id, const char *what, size_t len)
{
    if (!S.log)
        return;
    fprintf(S.log, "%llu %d %.*s\n", (unsigned long long)mono_us(), id, (int)len, what);
    fflush(S.log);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

static void send_text(struct client *c, const char *text, size_t len)
{
    if (c->closing)
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
    struct client *c = h->data;
    for (struct client **p = &S.clients; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    free(c);
}

static void client_close(struct client *c)
{
    if (c->closing)
        return;
    c->closing = true;
    log_line(c->id, "#disconnect", 11);
    uv_close((uv_handle_t *)&c->tcp, on_client_closed);
}

static void apply_cmd(const cJSON *j)
{
    const cJSON *belts = cJSON_GetObjectItemCaseSensitive(j, "belts");
    if (cJSON_IsArray(belts) && cJSON_GetArraySize(belts) == 2) {
        for (int i = 0; i < 2; i++) {
            const cJSON *v = cJSON_GetArrayItem(belts, i);
            if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
                S.belt_target[i] = v->valuedouble;
        }
    }
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "flippers");
    if (cJSON_IsArray(fl) && cJSON_GetArraySize(fl) == 4) {
        for (int i = 0; i < 4; i++) {
            const cJSON *v = cJSON_GetArrayItem(fl, i);
            if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
                S.flipper_target[i] = v->valuedouble;
        }
    }
    S.commands++;
}

static void send_garbage(struct client *c)
{
    static char big[MAX_LINE * 2 + 2];
    const char *bad[] = {
        "this is not json\n",
        "{\"type\":\"state\",\"belt_pos\":[1]}\n",
        "[1,2,3]\n",
        "{\"type\":\"state\",\"rpy\":[0,0,\"north\"]}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        send_text(c, bad[i], strlen(bad[i]));
    memset(big, 'x', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    send_text(c, big, sizeof big - 1);
    const char *other = "{\"type\":\"news\",\"text\":\"ignored\"}\n";
    send_text(c, other, strlen(other));
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct client *c = ctx;
    if (len == 0)
        return true;
    S.lines++;
    log_line(c->id, line, len);
    cJSON *j = cJSON_ParseWithLength(line, len);
    const cJSON *type = j ? cJSON_GetObjectItemCaseSensitive(j, "type") : NULL;
    if (!cJSON_IsString(type)) {
        S.malformed++;
        cJSON_Delete(j);
        return true;
    }
    if (strcmp(type->valuestring, "hello") == 0) {
        c->hello = true;
        if (S.garbage)
            send_garbage(c);
        if (!S.no_ready) {
            const char *r = "{\"type\":\"ready\",\"sim\":\"standin_sim\"}\n";
            send_text(c, r, strlen(r));
        }
    } else if (strcmp(type->valuestring, "cmd") == 0) {
        apply_cmd(j);
    }
    cJSON_Delete(j);
    return true;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    static char rbuf[65536];
    (void)suggested;
    buf->base = rbuf;
    buf->len = sizeof rbuf;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct client *c = s->data;
    if (n > 0) {
        uint64_t before = c->lb.overlong;
        kn_linebuf_feed(&c->lb, buf->base, (size_t)n, on_line, c);
        S.overlong += c->lb.overlong - before;
    } else if (n < 0) {
        client_close(c);
    }
}

static void free_handle_owner(uv_handle_t *h)
{
    free(h->data);
}

static void on_connection(uv_stream_t *server, int status)
{
    if (status < 0)
        return;
    struct client *c = calloc(1, sizeof *c);
    if (!c)
        return;
    uv_tcp_init(S.loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
        uv_close((uv_handle_t *)&c->tcp, free_handle_owner);
        return;
    }
    c->id = ++S.next_id;
    kn_linebuf_init(&c->lb, c->lbuf, MAX_LINE);
    c->next = S.clients;
    S.clients = c;
    uv_tcp_nodelay(&c->tcp, 1);
    log_line(c->id, "#connect", 8);
    if (!S.paused)
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static double approach(double v, double target, double max_step)
{
    if (target > v + max_step)
        return v + max_step;
    if (target < v - max_step)
        return v - max_step;
    return target;
}

static void step_model(void)
{
    double dt = S.dt;
    double v_old = (S.belt_speed[0] + S.belt_speed[1]) / 2;
    for (int i = 0; i < 2; i++) {
        S.belt_speed[i] = approach(S.belt_speed[i], S.belt_target[i], BELT_ACCEL_M_S2 * dt);
        S.belt_pos[i] += S.belt_speed[i] * dt;
    }
    for (int k = 0; k < 4; k++)
        S.flipper[k] = approach(S.flipper[k], S.flipper_target[k], FLIPPER_RATE_RAD_S * dt);
    double v = (S.belt_speed[0] + S.belt_speed[1]) / 2;
    S.yaw_rate = (S.belt_speed[1] - S.belt_speed[0]) / TRACK_WIDTH_M;
    S.yaw += S.yaw_rate * dt;
    S.yaw = atan2(sin(S.yaw), cos(S.yaw));
    S.x += v * cos(S.yaw) * dt;
    S.y += v * sin(S.yaw) * dt;
    S.ax = (v - v_old) / dt;
    S.ay = v * S.yaw_rate;
    S.t += dt;
}

static void stream_state(void)
{
    char line[1024];
    int n = snprintf(line, sizeof line,
                     "{\"type\":\"state\",\"t\":%.6f,\"belt_pos\":[%.9g,%.9g],"
                     "\"belt_speed\":[%.9g,%.9g],\"flipper\":[%.9g,%.9g,%.9g,%.9g],"
                     "\"flipper_torque\":[0,0,0,0],\"rpy\":[0,0,%.9g],\"rate\":[0,0,%.9g],"
                     "\"accel\":[%.9g,%.9g,%.5f],\"pos\":[%.9g,%.9g,0],\"battery\":24.0}\n",
                     S.t, S.belt_pos[0], S.belt_pos[1], S.belt_speed[0], S.belt_speed[1],
                     S.flipper[0], S.flipper[1], S.flipper[2], S.flipper[3], S.yaw, S.yaw_rate,
                     S.ax, S.ay, GRAVITY, S.x, S.y);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    for (struct client *c = S.clients; c; c = c->next)
        if (c->hello && !S.no_ready)
            send_text(c, line, (size_t)n);
}

static void on_step(uv_timer_t *t)
{
    (void)t;
    step_model();
    if (++S.step_no % S.state_every == 0)
        stream_state();
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)h;
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        S.paused = sig == SIGUSR1;
        log_line(0, S.paused ? "#paused" : "#resumed", S.paused ? 7 : 8);
        for (struct client *c = S.clients; c; c = c->next) {
            if (c->closing)
                continue;
            if (S.paused)
                uv_read_stop((uv_stream_t *)&c->tcp);
            else
                uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        }
        return;
    }
    fprintf(stderr, "standin_sim: %llu lines, %llu commands, %llu malformed, %llu overlong\n",
            (unsigned long long)S.lines, (unsigned long long)S.commands,
            (unsigned long long)S.malformed, (unsigned long long)S.overlong);
    uv_stop(S.loop);
}

static void usage(void)
{
    fprintf(stderr, "usage: standin_sim [--port N] [--log FILE] [--hz N] [--state-hz N] "
            "[--no-ready] [--garbage]\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "port", required_argument, NULL, 'p' },
        { "log", required_argument, NULL, 'l' },
        { "hz", required_argument, NULL, 'z' },
        { "state-hz", required_argument, NULL, 's' },
        { "no-ready", no_argument, NULL, 'n' },
        { "garbage", no_argument, NULL, 'g' },
        { NULL, 0, NULL, 0 },
    };
    int port = 0, hz = 200, state_hz = 100, c;
    const char *logpath = NULL;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': port = atoi(optarg); break;
        case 'l': logpath = optarg; break;
        case 'z': hz = atoi(optarg); break;
        case 's': state_hz = atoi(optarg); break;
        case 'n': S.no_ready = true; break;
        case 'g': S.garbage = true; break;
        default: usage(); return 2;
        }
    }
    if (port < 0 || port > 65535 || hz < 100 || hz > 10000 || state_hz < 1 || state_hz > hz) {
        usage();
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (logpath) {
        S.log = fopen(logpath, "a");
        if (!S.log) {
            perror(logpath);
            return 1;
        }
    }
    S.loop = uv_default_loop();
    uv_tcp_init(S.loop, &S.server);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    /* libuv sets SO_REUSEADDR on TCP binds: a restart can take the port back. */
    int rc = uv_tcp_bind(&S.server, (const struct sockaddr *)&a, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&S.server, 16, on_connection);
    if (rc < 0) {
        fprintf(stderr, "standin_sim: cannot listen on 127.0.0.1:%d: %s\n", port, uv_strerror(rc));
        return 1;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    uv_tcp_getsockname(&S.server, (struct sockaddr *)&ss, &len);
    printf("PORT %u\n", ntohs(((struct sockaddr_in *)&ss)->sin_port));
    fflush(stdout);

    uv_timer_init(S.loop, &S.step);
    uint64_t ms = 1000 / (uint64_t)hz ? 1000 / (uint64_t)hz : 1;
    S.dt = (double)ms / 1000.0; /* the loop's timer runs in whole ms */
    S.state_every = (unsigned)((1000 / ms) / (uint64_t)state_hz);
    if (S.state_every == 0)
        S.state_every = 1;
    uv_timer_start(&S.step, on_step, ms, ms);
    int sigs[4] = { SIGTERM, SIGINT, SIGUSR1, SIGUSR2 };
    for (int i = 0; i < 4; i++) {
        uv_signal_init(S.loop, &S.sig[i]);
        uv_signal_start(&S.sig[i], on_signal, sigs[i]);
    }
    uv_run(S.loop, UV_RUN_DEFAULT);
    if (S.log)
        fclose(S.log);
    return 0;
}
