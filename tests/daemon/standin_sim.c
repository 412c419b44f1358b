/* standin_sim: the stand-in simulator kenaf-simd's system tests run
 * against, and a reference peer for the "standin" JSON-lines link
 * (docs/custom-simulator.md). A TCP server that integrates a kinematic
 * skid-steer Kenaf (tests/common/kenaf_kinematics.h: belts with an
 * acceleration limit, flippers slewing to their targets, planar pose and
 * yaw), streams state lines, and records every line it receives, with a
 * CLOCK_MONOTONIC time stamp, to --log.
 *
 *   standin_sim [--port N] [--log FILE] [--hz N] [--state-hz N]
 *               [--no-ready] [--garbage]
 *
 * Prints "PORT <n>" on stdout once it listens. SIGUSR1 stops reading the
 * clients' sockets (a simulator that does not drain), SIGUSR2 resumes,
 * SIGTERM/SIGINT exit 0. A malformed line is counted and skipped.
 * --garbage sends malformed lines after the handshake (tests the daemon's
 * side); --no-ready never answers the handshake. Any number of daemon
 * links may connect (a fleet's robots share one stand-in): they all see
 * the one robot it integrates. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kenaf_kinematics.h"
#include "sim_server.h"

#define MAX_LINE 4096
#define GRAVITY 9.80665

static const struct kin_params model = {
    .track_m = 0.40,
    .belt_accel_m_s2 = 4.0,
    .flipper_rate_rad_s = 2.0,
};

struct client {
    struct sim_client base;
    bool hello;
};

static struct {
    struct sim_server srv;
    uv_timer_t step;
    struct sim_clock clock;
    bool no_ready;
    bool garbage;
    double dt;
    unsigned state_every, step_no;
    double t;
    struct kin_robot robot;
    uint64_t malformed, commands;
} S;

static void apply_cmd(const cJSON *j)
{
    const cJSON *belts = cJSON_GetObjectItemCaseSensitive(j, "belts");
    if (cJSON_IsArray(belts) && cJSON_GetArraySize(belts) == 2) {
        for (int i = 0; i < 2; i++) {
            const cJSON *v = cJSON_GetArrayItem(belts, i);
            if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
                S.robot.belt_target[i] = v->valuedouble;
        }
    }
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "flippers");
    if (cJSON_IsArray(fl) && cJSON_GetArraySize(fl) == 4) {
        for (int i = 0; i < 4; i++) {
            const cJSON *v = cJSON_GetArrayItem(fl, i);
            if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
                S.robot.flipper_target[i] = v->valuedouble;
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
        sim_send(&c->base, bad[i], strlen(bad[i]));
    memset(big, 'x', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    sim_send(&c->base, big, sizeof big - 1);
    const char *other = "{\"type\":\"news\",\"text\":\"ignored\"}\n";
    sim_send(&c->base, other, strlen(other));
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct client *c = ctx;
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
            sim_send(&c->base, r, strlen(r));
        }
    } else if (strcmp(type->valuestring, "cmd") == 0) {
        apply_cmd(j);
    }
    cJSON_Delete(j);
    return true;
}

static void on_close(struct sim_client *c)
{
    sim_log(c->srv, c->id, "#disconnect");
}

static void stream_state(void)
{
    const struct kin_robot *r = &S.robot;
    char line[1024];
    int n = snprintf(line, sizeof line,
                     "{\"type\":\"state\",\"t\":%.6f,\"belt_pos\":[%.9g,%.9g],"
                     "\"belt_speed\":[%.9g,%.9g],\"flipper\":[%.9g,%.9g,%.9g,%.9g],"
                     "\"flipper_torque\":[0,0,0,0],\"rpy\":[0,0,%.9g],\"rate\":[0,0,%.9g],"
                     "\"accel\":[%.9g,%.9g,%.5f],\"pos\":[%.9g,%.9g,0],\"battery\":24.0}\n",
                     S.t, r->belt_pos[0], r->belt_pos[1], r->belt_speed[0], r->belt_speed[1],
                     r->flipper[0], r->flipper[1], r->flipper[2], r->flipper[3], r->pose.yaw,
                     r->yaw_rate, r->accel, r->v * r->yaw_rate, GRAVITY, r->pose.x, r->pose.y);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    for (struct sim_client *c = S.srv.clients; c; c = c->next)
        if (((struct client *)c)->hello && !S.no_ready)
            sim_send(c, line, (size_t)n);
}

/* The steps the wall clock owes: a simulator runs in real time, also
 * when its timer fires late. */
static void on_step(uv_timer_t *t)
{
    (void)t;
    for (unsigned n = sim_clock_steps(&S.clock); n; n--) {
        kin_step(&S.robot, &model, S.dt);
        S.t += S.dt;
        if (++S.step_no % S.state_every == 0)
            stream_state();
    }
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)h;
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        sim_pause(&S.srv, sig == SIGUSR1);
        sim_log(&S.srv, 0, S.srv.paused ? "#paused" : "#resumed");
        return;
    }
    fprintf(stderr, "standin_sim: %llu lines, %llu commands, %llu malformed, %llu overlong\n",
            (unsigned long long)S.srv.lines, (unsigned long long)S.commands,
            (unsigned long long)S.malformed, (unsigned long long)S.srv.overlong);
    uv_stop(S.srv.loop);
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
    static const struct sim_hooks hooks = {
        .client_size = sizeof(struct client),
        .max_line = MAX_LINE,
        .on_line = on_line,
        .on_close = on_close,
    };
    if (!sim_open(&S.srv, "standin_sim", &hooks, logpath) || !sim_listen(&S.srv, port, 1024))
        return 1;

    uv_timer_init(S.srv.loop, &S.step);
    uint64_t ms = 1000 / (uint64_t)hz ? 1000 / (uint64_t)hz : 1;
    S.dt = (double)ms / 1000.0; /* the loop's timer runs in whole ms */
    S.clock.step_ns = ms * 1000000u;
    S.state_every = (unsigned)((1000 / ms) / (uint64_t)state_hz);
    if (S.state_every == 0)
        S.state_every = 1;
    uv_timer_start(&S.step, on_step, ms, ms);
    static const int sigs[4] = { SIGTERM, SIGINT, SIGUSR1, SIGUSR2 };
    sim_on_signals(&S.srv, sigs, 4, on_signal);
    sim_run(&S.srv);
    return 0;
}
