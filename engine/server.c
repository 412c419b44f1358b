/* kenaf-engine's server: the libuv loop, the listening socket, client
 * connections (line framing in, buffered lines out with a cap per
 * client), and the glue between pacing and the world (physics steps run
 * in batches from a timer, or from an idle handle when running flat out
 * or working off Step requests). One loop, no threads. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostport.h"
#include "runner.h"
#include "server_int.h"

#define STEP_CHUNK 50 /* Step requests run in chunks this long per loop turn */
#define MAX_LAG_S 1.0 /* real time: a debt beyond this is given up (slip) */
#define LISTEN_BACKLOG 64

/* ---- output ------------------------------------------------------------ */

struct wreq {
    uv_write_t req;
    struct kn_srv_conn *c;
    char data[];
};

static void conn_close(struct kn_srv_conn *c, const char *why);
static void flush(struct kn_srv_conn *c);

void kn_srv_send(struct kn_srv_conn *c, const char *line, int len)
{
    if (c->closing || len <= 0)
        return;
    size_t n = (size_t)len;
    if (c->olen + n > KN_SRV_OUT_CAP) {
        c->srv->st.out_dropped++; /* the client does not read: newest lines go */
        return;
    }
    if (c->olen + n > c->ocap) {
        size_t cap = c->ocap ? c->ocap : 4096;
        while (cap < c->olen + n)
            cap *= 2;
        if (cap > KN_SRV_OUT_CAP)
            cap = KN_SRV_OUT_CAP;
        char *p = realloc(c->obuf, cap);
        if (!p) {
            c->srv->st.out_dropped++;
            return;
        }
        c->obuf = p;
        c->ocap = cap;
    }
    memcpy(c->obuf + c->olen, line, n);
    c->olen += n;
}

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct kn_srv_conn *c = w->c;
    free(w);
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c, uv_strerror(status));
        return;
    }
    flush(c);
}

static void flush(struct kn_srv_conn *c)
{
    if (c->closing || c->olen == 0)
        return;
    uv_stream_t *st = (uv_stream_t *)&c->tcp;
    if (uv_stream_get_write_queue_size(st) > 0)
        return; /* on_write comes back here */
    uv_buf_t b = uv_buf_init(c->obuf, (unsigned)c->olen);
    int n = uv_try_write(st, &b, 1);
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c, uv_strerror(n));
        return;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    c->srv->st.bytes_out += done;
    if (done < c->olen) {
        size_t rest = c->olen - done;
        struct wreq *w = malloc(sizeof *w + rest);
        if (!w) {
            conn_close(c, "out of memory");
            return;
        }
        w->c = c;
        memcpy(w->data, c->obuf + done, rest);
        uv_buf_t wb = uv_buf_init(w->data, (unsigned)rest);
        int rc = uv_write(&w->req, st, &wb, 1, on_write);
        if (rc < 0) {
            free(w);
            conn_close(c, uv_strerror(rc));
            return;
        }
        c->srv->st.bytes_out += rest;
    }
    c->olen = 0;
}

static void flush_all(struct kn_srv *s)
{
    struct kn_srv_conn *next;
    for (struct kn_srv_conn *c = s->conns; c; c = next) {
        next = c->next;
        flush(c);
    }
}

/* ---- connections ---------------------------------------------------------- */

static void on_conn_freed(uv_handle_t *h)
{
    struct kn_srv_conn *c = h->data;
    free(c->obuf);
    free(c);
}

static void conn_close(struct kn_srv_conn *c, const char *why)
{
    if (c->closing)
        return;
    struct kn_srv *s = c->srv;
    c->closing = true;
    if (c->robot >= 0) {
        if (s->judge && !s->shutting_down) /* not its own stop */
            kn_judge_robot_gone(s->judge, c->robot);
        /* USARSim: a closed connection destroys its robot */
        kn_world_remove(s->w, c->robot);
        s->st.removed++;
        kn_srv_log(s, "client %u (%s) closed (%s): robot %s removed", c->id, c->peer, why, c->name);
        c->robot = -1;
    } else {
        kn_srv_log(s, "client %u (%s) closed (%s)", c->id, c->peer, why);
    }
    kn_srv_steps_drop_conn(s, c);
    if (c->parked) { /* its INIT never spawned: the slot is free again */
        c->parked = false;
        s->fleet_parked--;
    }
    if (c->judge_slot >= 0) { /* the fleet's world no longer waits for it */
        c->judge_slot = -1;
        c->step_target = 0;
        kn_srv_fleet_update(s);
    }
    for (struct kn_srv_conn **pp = &s->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    s->nconns--;
    s->st.closed++;
    uv_close((uv_handle_t *)&c->tcp, on_conn_freed);
}

void kn_srv_close_after_flush(struct kn_srv_conn *c)
{
    /* the reply goes out if the socket takes it now; a client that does
     * not read loses it, which is all it would get anyway */
    flush(c);
    conn_close(c, "wrong token");
}

/* Over-long lines the line buffer dropped, into the server's count
 * (before each line, so a Stats request sees the ones before it). */
static void sync_overlong(struct kn_srv_conn *c)
{
    c->srv->st.overlong += c->lb.overlong - c->overlong_seen;
    c->overlong_seen = c->lb.overlong;
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct kn_srv_conn *c = ctx;
    sync_overlong(c);
    c->srv->st.lines++;
    c->heard_ns = uv_hrtime();
    c->deadman_tripped = false;
    kn_srv_line(c, line, len);
    return !c->closing;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct kn_srv_conn *c = h->data;
    buf->base = c->srv->rbuf;
    buf->len = sizeof c->srv->rbuf;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct kn_srv_conn *c = st->data;
    struct kn_srv *s = c->srv;
    if (c->closing)
        return;
    if (nread < 0) {
        conn_close(c, nread == UV_EOF ? "end of stream" : uv_strerror((int)nread));
        flush_all(s);
        return;
    }
    s->st.bytes_in += (uint64_t)nread;
    kn_linebuf_feed(&c->lb, buf->base, (size_t)nread, on_line, c);
    if (!c->closing)
        sync_overlong(c);
    flush_all(s);
}

static void peer_name(struct kn_srv_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    snprintf(c->peer, sizeof c->peer, "?");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) != 0)
        return;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        uv_ip4_name(a, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        uv_ip6_name(a, host, sizeof host);
        port = ntohs(a->sin6_port);
    }
    snprintf(c->peer, sizeof c->peer, "%s:%d", host, port);
}

static void on_refused_closed(uv_handle_t *h)
{
    free(h);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct kn_srv *s = server->data;
    if (status < 0) {
        kn_srv_log(s, "accept: %s", uv_strerror(status));
        return;
    }
    if (s->nconns >= KN_SRV_MAX_CONNS) {
        uv_tcp_t *t = malloc(sizeof *t);
        if (!t)
            return;
        uv_tcp_init(s->loop, t);
        if (uv_accept(server, (uv_stream_t *)t) == 0)
            s->st.refused++;
        uv_close((uv_handle_t *)t, on_refused_closed);
        return;
    }
    struct kn_srv_conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->srv = s;
    c->robot = -1;
    c->judge_slot = -1;
    c->id = ++s->next_id;
    c->trusted = s->token[0] == '\0';
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_conn_freed);
        return;
    }
    kn_linebuf_init(&c->lb, c->lbuf, KN_USAR_MAX_LINE);
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    s->st.accepted++;
    peer_name(c);
    uv_tcp_nodelay(&c->tcp, 1);
    kn_srv_log(s, "client %u connected from %s", c->id, c->peer);
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0) {
        conn_close(c, uv_strerror(rc));
        return;
    }
    /* USARSim speaks first */
    kn_srv_send_nfo(c);
    flush(c);
}

/* ---- stepping -------------------------------------------------------------- */

static void emit_due(struct kn_srv *s)
{
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        if (c->robot < 0)
            continue;
        for (int k = 0; k < KN_NSTREAMS; k++) {
            if (c->next_due[k] > s->steps)
                continue;
            kn_srv_emit(c, (enum kn_srv_stream)k);
            c->next_due[k] += s->interval[k];
            if (c->next_due[k] <= s->steps)
                c->next_due[k] = s->steps + s->interval[k];
        }
    }
}

static void shutdown_server(struct kn_srv *s, const char *why);

/* A judged run ends (time limit, a broken limit, an idle controller): no
 * more steps, the verdict written, the server stops. */
void kn_srv_judge_end(struct kn_srv *s, const char *why)
{
    kn_srv_steps_fail_all(s, why);
    if (kn_judge_finish(s->judge))
        s->exit_code = 2;
    shutdown_server(s, why);
}

/* Wall time without a single step once the robot is in the world: a
 * controller that never lets time pass, reported instead of waited on. */
static void on_judge_timer(uv_timer_t *t)
{
    struct kn_srv *s = t->data;
    if (s->shutting_down || !kn_judge_started(s->judge))
        return;
    uint64_t now = uv_hrtime();
    kn_srv_trial_push(s, now);
    flush_all(s); /* nothing else may send before the next step */
    if (s->steps != s->judge_seen_steps || s->judge_seen_ns == 0) {
        s->judge_seen_steps = s->steps;
        s->judge_seen_ns = now;
        return;
    }
    double idle = (double)(now - s->judge_seen_ns) / 1e9;
    if (idle >= s->o.judge_idle_s) {
        kn_srv_log(s, "judge: no step for %.1f s of wall time at t=%.3f s", idle,
                   kn_world_time(s->w));
        char waiting[KN_SCENARIO_MAX_ROBOTS * KN_SCENARIO_ROBOT_NAME] = "";
        if (kn_judge_is_fleet(s->judge))
            kn_srv_fleet_waiting(s, waiting, sizeof waiting);
        kn_judge_idle(s->judge, idle, waiting);
        kn_srv_judge_end(s, "the controller lets no time pass");
    }
}

void kn_srv_advance(struct kn_srv *s, uint64_t n)
{
    while (n > 0) {
        /* run up to the next line due (or Step answer), not past it */
        uint64_t next = UINT64_MAX;
        for (struct kn_srv_conn *c = s->conns; c; c = c->next)
            if (c->robot >= 0)
                for (int k = 0; k < KN_NSTREAMS; k++)
                    if (c->next_due[k] < next)
                        next = c->next_due[k];
        /* a fleet's requests end at different steps, in no order */
        for (int i = 0; i < s->nstepq; i++)
            if (s->stepq[i].target < next)
                next = s->stepq[i].target;
        if (s->judge && kn_judge_next_step(s->judge) < next)
            next = kn_judge_next_step(s->judge);
        uint64_t chunk = n;
        if (next > s->steps && next - s->steps < chunk)
            chunk = next - s->steps;
        if (chunk > 1000000)
            chunk = 1000000;
        kn_world_step(s->w, (int)chunk);
        s->steps += chunk;
        s->st.steps += chunk;
        n -= chunk;
        emit_due(s);
        if (s->judge) {
            kn_judge_steps(s->judge, s->steps);
            kn_srv_trial_push(s, 0);
            if (s->o.judge_trial_end && kn_srv_trial_ended(s)) {
                kn_srv_judge_end(s, "the trial is over");
                return;
            }
            if (kn_judge_over(s->judge)) {
                kn_srv_judge_end(s, "the scenario's run is over");
                return;
            }
        }
        kn_srv_steps_reached(s);
    }
}

static void on_tick(uv_timer_t *t)
{
    struct kn_srv *s = t->data;
    uint64_t now = uv_hrtime();
    kn_srv_deadman_check(s, now);
    uint32_t n = kn_pacing_due(&s->pace, now);
    if (n) {
        kn_srv_advance(s, n);
        kn_pacing_done(&s->pace, n);
    }
    flush_all(s);
}

static void on_idle(uv_idle_t *h)
{
    struct kn_srv *s = h->data;
    if (!s->paused && s->pace.mode == KN_PACE_FAST) {
        uint32_t n = kn_pacing_due(&s->pace, uv_hrtime());
        kn_srv_advance(s, n);
        kn_pacing_done(&s->pace, n);
    } else if (s->step_goal > s->steps) {
        uint64_t n = s->step_goal - s->steps;
        kn_srv_advance(s, n < STEP_CHUNK ? n : STEP_CHUNK);
    }
    flush_all(s);
    kn_srv_schedule(s);
}

void kn_srv_schedule(struct kn_srv *s)
{
    if (s->shutting_down)
        return;
    bool run = !s->paused && s->pace.mode != KN_PACE_STEP;
    if (run && !s->pace.running)
        kn_pacing_start(&s->pace, uv_hrtime());
    if (!run && s->pace.running)
        kn_pacing_stop(&s->pace);
    bool want_tick = run && s->pace.mode == KN_PACE_REALTIME;
    bool want_idle = (run && s->pace.mode == KN_PACE_FAST) || (!run && s->step_goal > s->steps);
    if (want_tick && !uv_is_active((uv_handle_t *)&s->tick))
        uv_timer_start(&s->tick, on_tick, (uint64_t)s->o.tick_ms, (uint64_t)s->o.tick_ms);
    else if (!want_tick && uv_is_active((uv_handle_t *)&s->tick))
        uv_timer_stop(&s->tick);
    if (want_idle && !uv_is_active((uv_handle_t *)&s->idle))
        uv_idle_start(&s->idle, on_idle);
    else if (!want_idle && uv_is_active((uv_handle_t *)&s->idle))
        uv_idle_stop(&s->idle);
}

void kn_srv_reset(struct kn_srv *s)
{
    kn_srv_steps_fail_all(s, "the world was reset");
    kn_world_reset(s->w);
    s->steps = 0;
    s->step_goal = 0;
    if (s->pace.running)
        kn_pacing_start(&s->pace, uv_hrtime());
    for (struct kn_srv_conn *c = s->conns; c; c = c->next)
        if (c->robot >= 0) {
            c->normalized = c->light = false;
            kn_srv_robot_started(c);
        }
    kn_srv_log(s, "world reset to time 0");
}

int kn_srv_set_terrain(struct kn_srv *s, const char *name_or_file, bool allow_path, char *err,
                       size_t errlen)
{
    struct kn_terrain t;
    char level[64], *spec = NULL;
    struct kn_srv_start starts[KN_SRV_MAX_STARTS];
    int nstarts = 0;
    if (kn_srv_terrain_load(name_or_file, allow_path, &t, &spec, level, sizeof level, starts,
                            &nstarts, err, errlen))
        return -1;
    int rc = kn_world_set_terrain(s->w, &t);
    kn_terrain_free(&t);
    if (rc) {
        free(spec);
        snprintf(err, errlen, "the world cannot take terrain %s", name_or_file);
        return -1;
    }
    free(s->world_terrain);
    s->world_terrain = spec;
    snprintf(s->level, sizeof s->level, "%s", level);
    memcpy(s->starts, starts, sizeof starts);
    s->nstarts = nstarts;
    /* robots back at their INIT poses, placed on the new ground */
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        if (c->robot < 0)
            continue;
        kn_world_remove(s->w, c->robot);
        double pos[3] = { c->init_pose.x, c->init_pose.y, c->init_pose.z };
        double rpy[3] = { c->init_pose.roll, c->init_pose.pitch, c->init_pose.yaw };
        struct kn_pose p = kn_srv_spawn_pose(s, pos, rpy);
        c->robot = kn_world_spawn(s->w, &s->rp, &p, NULL);
        if (c->robot < 0) {
            s->st.init_failed++;
            kn_srv_log(s, "client %u: robot %s lost with the terrain change", c->id, c->name);
            continue;
        }
        kn_srv_robot_started(c);
    }
    kn_srv_log(s, "terrain %s loaded", s->level);
    return 0;
}

/* ---- life cycle ------------------------------------------------------------ */

static void shutdown_server(struct kn_srv *s, const char *why)
{
    if (s->shutting_down)
        return;
    s->shutting_down = true;
    kn_srv_log(s, "stopping (%s)", why);
    struct kn_srv_conn *next;
    for (struct kn_srv_conn *c = s->conns; c; c = next) {
        next = c->next;
        flush(c);
        conn_close(c, "server stopping");
    }
    uv_close((uv_handle_t *)&s->listener, NULL);
    uv_close((uv_handle_t *)&s->tick, NULL);
    uv_close((uv_handle_t *)&s->idle, NULL);
    uv_close((uv_handle_t *)&s->sig_int, NULL);
    uv_close((uv_handle_t *)&s->sig_term, NULL);
    if (s->judge)
        uv_close((uv_handle_t *)&s->judge_timer, NULL);
    if (s->stdin_open)
        uv_close((uv_handle_t *)&s->stdin_pipe, NULL);
    kn_srv_fleet_close(s);
    if (s->beat_on)
        uv_close((uv_handle_t *)&s->beat_timer, NULL);
}

/* The parent's sign of life from this loop (--heartbeat-ms): kenaf-simd
 * tells a hung or stopped engine from a silent simulator link by it. */
static void on_beat(uv_timer_t *t)
{
    struct kn_srv *s = t->data;
    char line[64];
    int n = snprintf(line, sizeof line, "ALIVE %.4f\n", kn_world_time(s->w));
    if (n > 0 && (size_t)n < sizeof line)
        kn_srv_outfd_write(&s->beat, line, (size_t)n, (size_t)n);
}

static void on_signal(uv_signal_t *h, int signum)
{
    shutdown_server(h->data, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

void kn_srv_alloc_rbuf(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct kn_srv *s = h->data;
    buf->base = s->rbuf;
    buf->len = sizeof s->rbuf;
}

static void on_stdin(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    if (nread < 0)
        shutdown_server(st->data, "stdin closed: the parent is gone");
}

static int listen_on(struct kn_srv *s)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    char err[300];
    if (kn_hostport_resolve(s->o.host, (uint16_t)s->o.port, SOCK_STREAM, &ss, &sslen, err,
                            sizeof err) != 0) {
        fprintf(stderr, "kenaf-engine: --listen: cannot resolve %s\n", err);
        return -1;
    }
    uv_tcp_init(s->loop, &s->listener);
    s->listener.data = s;
    int rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->listener, LISTEN_BACKLOG, on_connection);
    if (rc < 0) {
        fprintf(stderr, "kenaf-engine: cannot listen on %s:%d: %s\n", s->o.host, s->o.port,
                uv_strerror(rc));
        return -1;
    }
    int len = sizeof ss;
    uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len);
    int port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                             : ((struct sockaddr_in6 *)&ss)->sin6_port);
    /* the parent reads this line to learn an ephemeral port */
    printf("PORT %d\n", port);
    fflush(stdout);
    kn_srv_log(s, "listening on %s port %d, terrain %s, pace %s x%g%s", s->o.host, port, s->level,
               kn_pace_mode_name(s->pace.mode), s->pace.rate,
               s->token[0] ? ", INIT and KENAF commands only after KENAF {Cmd Auth}" : "");
    return 0;
}

static void print_stats(struct kn_srv *s)
{
    const struct kn_srv_stats *t = &s->st;
    char line[1024];
    snprintf(line, sizeof line,
             "kenaf-engine: stats: time %.3f s, steps %llu, connections %llu (refused %llu), "
             "robots spawned %llu removed %llu, lines %llu, malformed %llu, overlong %llu, "
             "unknown %llu, before INIT %llu, bad values %llu, ignored %llu, INIT failed %llu, "
             "commands %llu, extension %llu, unauthorized %llu, wrong tokens %llu, brakes %llu, "
             "dead-man stops %llu, "
             "output dropped %llu, overruns %llu, slips %llu (%.3f s), max lag %.1f ms, "
             "log lines dropped %llu, heartbeats dropped %llu\n",
             kn_world_time(s->w), (unsigned long long)t->steps, (unsigned long long)t->accepted,
             (unsigned long long)t->refused, (unsigned long long)t->spawned,
             (unsigned long long)t->removed, (unsigned long long)t->lines,
             (unsigned long long)t->malformed, (unsigned long long)t->overlong,
             (unsigned long long)t->unknown, (unsigned long long)t->before_init,
             (unsigned long long)t->bad_value, (unsigned long long)t->ignored,
             (unsigned long long)t->init_failed, (unsigned long long)t->commands,
             (unsigned long long)t->ext, (unsigned long long)t->unauthorized,
             (unsigned long long)t->auth_failed, (unsigned long long)t->brakes,
             (unsigned long long)t->deadman_stops, (unsigned long long)t->out_dropped,
             (unsigned long long)s->pace.overruns, (unsigned long long)s->pace.slips,
             s->pace.slipped_s, s->pace.max_lag_s * 1e3, (unsigned long long)s->log.lines_dropped,
             (unsigned long long)s->beat.lines_dropped);
    kn_srv_log_text(s, line);
}

/* The token of --auth-token-env, taken from the environment and wiped
 * there (the variable's bytes overwritten, then removed), so neither a
 * child nor /proc/PID/environ shows it later. Never on the command line,
 * where ps shows it to every user. */
static int take_token(struct kn_srv *s)
{
    const char *name = s->o.auth_token_env;
    if (!name)
        return 0;
    char *v = getenv(name);
    size_t n = v ? strlen(v) : 0;
    if (n < KN_SRV_TOKEN_MIN || n > KN_SRV_TOKEN_MAX) {
        fprintf(stderr, "kenaf-engine: --auth-token-env %s: %s\n", name,
                !v ? "the variable is not set" : "the token must have 16 to 256 characters");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v[i];
        if (ch <= ' ' || ch >= 0x7F || ch == '{' || ch == '}') {
            fprintf(stderr,
                    "kenaf-engine: --auth-token-env %s: the token must be printable "
                    "ASCII without blanks or braces\n",
                    name);
            return -1;
        }
    }
    memcpy(s->token, v, n + 1);
    memset(v, 'x', n);
    unsetenv(name);
    return 0;
}

static int setup_common(struct kn_srv *s);

/* --judge: the scenario's robot, physics and terrain (its variant's) */
static int setup_judge(struct kn_srv *s)
{
    char err[768];
    struct kn_judge_opts jo = {
        .scenario = s->o.judge,
        .variant = s->o.judge_variant,
        .verdict = s->o.judge_verdict,
        .csv = s->o.judge_csv,
        .svg = s->o.judge_svg,
        .idle_s = s->o.judge_idle_s,
        .robots = s->o.judge_robots,
    };
    s->judge = kn_judge_new(&jo, err, sizeof err);
    if (!s->judge) {
        fprintf(stderr, "kenaf-engine: --judge: %s\n", err);
        return -1;
    }
    const struct kn_scenario *sc = kn_judge_scenario(s->judge);
    s->rp = sc->rp;
    s->pp = sc->pp;
    if (s->o.seed_set)
        s->pp.seed = s->o.seed;
    s->w = kn_world_create(&s->pp);
    if (!s->w || kn_world_set_terrain(s->w, &sc->terrain)) {
        fprintf(stderr, "kenaf-engine: --judge: cannot build the scenario's world\n");
        return -1;
    }
    snprintf(s->level, sizeof s->level, "%.63s", sc->name[0] ? sc->name : "scenario");
    s->world_terrain = strdup(sc->terrain_spec);
    s->world_robot = strdup(sc->robot_spec);
    if (!s->world_terrain || !s->world_robot) {
        fprintf(stderr, "kenaf-engine: out of memory\n");
        return -1;
    }
    s->nstarts = 0;
    kn_srv_log(s, "judging scenario %s (variant %d, %.1f s)", s->o.judge, s->o.judge_variant,
               sc->duration);
    return setup_common(s);
}

static int setup(struct kn_srv *s)
{
    char path[1024], err[768];
    if (take_token(s))
        return -1;
    if (s->o.judge)
        return setup_judge(s);
    if (s->o.robot)
        snprintf(path, sizeof path, "%s", s->o.robot);
    else
        snprintf(path, sizeof path, "%s/robots/kenaf.json", kn_run_config_dir());
    if (kn_robotfile_load(path, &s->rp, err, sizeof err) ||
        kn_srv_world_robot(s, path, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return -1;
    }
    kn_physics_defaults(&s->pp);
    if (s->o.seed_set)
        s->pp.seed = s->o.seed;
    s->w = kn_world_create(&s->pp);
    if (!s->w) {
        fprintf(stderr, "kenaf-engine: cannot create the world\n");
        return -1;
    }
    if (kn_srv_set_terrain(s, s->o.terrain, true, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: --terrain: %s\n", err);
        return -1;
    }
    return setup_common(s);
}

/* What every world needs once it is built: the wire conversion, the
 * output intervals and the pacing. */
static int setup_common(struct kn_srv *s)
{
    char err[768];
    kn_conv_table_usarsim(&s->conv);
    s->conv.wheel_radius_m = s->rp.track_radius; /* DRIVE spins the track pulleys */
    s->conv.counts_per_m = s->o.ticks_per_m;     /* Encoder: one tick per count */
    s->conv.counts_per_tick = 1.0;
    if (kn_conv_table_check(&s->conv, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: conversion table: %s\n", err);
        return -1;
    }
    for (int k = 0; k < KN_NSTREAMS; k++) {
        double iv = s->o.interval_s[k];
        s->interval[k] = iv > 0 ? (uint64_t)fmax(1.0, llround(iv / s->pp.step_s)) : 0;
    }
    /* a burst covers ten ticks' worth of due steps, at least 20 */
    double per_tick = s->o.tick_ms * 1e-3 * s->o.rate / s->pp.step_s;
    uint32_t burst = (uint32_t)fmax(20.0, ceil(10.0 * per_tick));
    kn_pacing_init(&s->pace, s->o.pace, s->o.rate, s->pp.step_s, burst, MAX_LAG_S);
    return 0;
}

int kn_srv_run(const struct kn_srv_opts *o)
{
    struct kn_srv *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "kenaf-engine: out of memory\n");
        return 2;
    }
    s->o = *o;
    s->log.fd = STDERR_FILENO; /* blocking until the loop runs */
    s->beat.fd = STDOUT_FILENO;
    signal(SIGPIPE, SIG_IGN);
    int rc = 2;
    if (setup(s))
        goto out;
    s->loop = uv_default_loop();
    if (listen_on(s)) {
        uv_close((uv_handle_t *)&s->listener, NULL);
        uv_run(s->loop, UV_RUN_DEFAULT);
        goto out;
    }
    /* from here on the loop serves robots: it must never wait for a reader */
    kn_srv_outfd_open(&s->log, STDERR_FILENO);
    kn_srv_outfd_open(&s->beat, STDOUT_FILENO);
    if (o->heartbeat_ms > 0) {
        uv_timer_init(s->loop, &s->beat_timer);
        s->beat_timer.data = s;
        uv_timer_start(&s->beat_timer, on_beat, (uint64_t)o->heartbeat_ms,
                       (uint64_t)o->heartbeat_ms);
        s->beat_on = true;
    }
    uv_timer_init(s->loop, &s->tick);
    s->tick.data = s;
    uv_idle_init(s->loop, &s->idle);
    s->idle.data = s;
    uv_signal_init(s->loop, &s->sig_int);
    s->sig_int.data = s;
    uv_signal_start(&s->sig_int, on_signal, SIGINT);
    uv_signal_init(s->loop, &s->sig_term);
    s->sig_term.data = s;
    uv_signal_start(&s->sig_term, on_signal, SIGTERM);
    if (o->stdin_watch) {
        /* only a pipe or socket can be watched: libuv aborts on a file or
         * /dev/null, which epoll refuses */
        struct stat st;
        bool pipe_like = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
        uv_pipe_init(s->loop, &s->stdin_pipe, 0);
        s->stdin_pipe.data = s;
        if (pipe_like && uv_pipe_open(&s->stdin_pipe, 0) == 0 &&
            uv_read_start((uv_stream_t *)&s->stdin_pipe, kn_srv_alloc_rbuf, on_stdin) == 0) {
            s->stdin_open = true;
        } else {
            kn_srv_log(s, "--stdin-watch: stdin is not a pipe; not watching it");
            uv_close((uv_handle_t *)&s->stdin_pipe, NULL);
        }
    }
    if (s->judge) {
        uv_timer_init(s->loop, &s->judge_timer);
        s->judge_timer.data = s;
        uv_timer_start(&s->judge_timer, on_judge_timer, 250, 250);
        if (s->o.judge_control && kn_srv_fleet_open(s, s->o.judge_control)) {
            shutdown_server(s, "--judge-control cannot be read");
            s->exit_code = 2;
        }
    }
    kn_srv_schedule(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    /* stopped from outside (the controller ended): the verdict as it stands */
    if (s->judge && kn_judge_finish(s->judge))
        s->exit_code = 2;
    print_stats(s);
    rc = s->exit_code;
out:
    if (s->loop)
        uv_loop_close(s->loop);
    if (s->w)
        kn_world_destroy(s->w);
    kn_judge_free(s->judge);
    free(s->world_terrain);
    free(s->world_robot);
    free(s);
    return rc;
}
