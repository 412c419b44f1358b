/* Stats socket: see stats.h. A client may first send one command line
 * ("stats", "estop ...", "capture ...", "faults ...", "help"); one that sends nothing
 * for COMMAND_GRACE_MS, or shuts its side down, gets the stats, so a plain
 * connect-and-read works as before. Each client gets one JSON answer,
 * then the connection is shut down; a client that does not read is
 * dropped after a few seconds so it cannot pin memory. */
#include "stats.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "capture.h"
#include "faults.h"
#include "log.h"
#include "sockdir.h"
#include "unixsock.h"

#define CLIENT_TIMEOUT_MS 5000
#define COMMAND_GRACE_MS 30 /* a command, if any, comes right after connecting */

struct kn_stats_server {
    uv_loop_t *loop;
    uv_pipe_t pipe;
    char path[sizeof((struct sockaddr_un *)0)->sun_path];
    kn_stats_render_fn render;
    kn_stats_command_fn command;
    void *ctx;
};

struct client {
    struct kn_stats_server *server;
    uv_pipe_t pipe;
    uv_timer_t timer;
    uv_write_t wreq;
    uv_shutdown_t sreq;
    char *text;
    int open;
    bool answered;
    size_t len;
    char line[KN_STATS_COMMAND_MAX + 1];
};

static void client_part_closed(uv_handle_t *h)
{
    struct client *c = h->data;
    if (--c->open == 0) {
        free(c->text);
        free(c);
    }
}

static void client_close(struct client *c)
{
    if (!uv_is_closing((uv_handle_t *)&c->pipe))
        uv_close((uv_handle_t *)&c->pipe, client_part_closed);
    if (!uv_is_closing((uv_handle_t *)&c->timer))
        uv_close((uv_handle_t *)&c->timer, client_part_closed);
}

static void on_client_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    client_close(req->data);
}

static void on_client_written(uv_write_t *req, int status)
{
    struct client *c = req->data;
    if (status < 0 || uv_shutdown(&c->sreq, (uv_stream_t *)&c->pipe, on_client_shutdown) < 0)
        client_close(c);
}

static void on_client_timeout(uv_timer_t *t)
{
    client_close(t->data);
}

char *kn_stats_error_reply(const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", false);
    cJSON_AddStringToObject(o, "error", msg);
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

/* Who is on the other end of the socket, for the log of a command that
 * changes the robot: the kernel's word (SO_PEERCRED), not the client's. */
static void peer_who(struct client *c, char *buf, size_t len)
{
    uv_os_fd_t fd;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
        snprintf(buf, len, "an unknown client");
        return;
    }
    struct passwd pw, *pwp = NULL;
    char pwbuf[1024];
    if (getpwuid_r(cr.uid, &pw, pwbuf, sizeof pwbuf, &pwp) != 0)
        pwp = NULL;
    snprintf(buf, len, "uid %u (%s) pid %d", (unsigned)cr.uid, pwp ? pwp->pw_name : "?",
             (int)cr.pid);
}

/* The answer to one command line (without its end of line). */
static char *run_command(struct client *c, char *line)
{
    struct kn_stats_server *s = c->server;
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
        line[--n] = '\0';
    size_t w = strcspn(line, " \t");
    const char *rest = line + w + strspn(line + w, " \t");
    if (n == 0 || (w == 5 && !strncmp(line, "stats", 5)))
        return s->render(s->ctx);
    if (w == 7 && !strncmp(line, "capture", 7))
        return kn_capture_command(s->loop, rest);
    if (w == 6 && !strncmp(line, "faults", 6))
        return kn_faults_command(rest);
    if (w == 5 && !strncmp(line, "world", 5)) {
        /* the gz module's own command; not loaded: no gz robot runs */
        const struct kn_backend_ops *gz = kn_backend_loaded(KN_BACKEND_GZ);
        if (gz && gz->command)
            return gz->command(rest);
        return kn_stats_error_reply("world: no gz robot runs in this kenaf-simd");
    }
    if (w == 5 && !strncmp(line, "estop", 5) && s->command) {
        char who[160];
        peer_who(c, who, sizeof who);
        return s->command(s->ctx, "estop", rest, who);
    }
    if (w == 4 && !strncmp(line, "help", 4))
        return kn_stats_error_reply(
            "commands: stats | estop engage|release|status ROBOT | "
            "capture start PATH [max_mb=N] | capture stop | "
            "capture status | faults ROBOT krp|sim [off] [drop=P] [duplicate=P] "
            "[reorder=P] [delay_ms=MS] [jitter_ms=MS] [seed=N] | world ROBOT pause|play|"
            "step [N]|reset [all|time|model] (gz robots)");
    return kn_stats_error_reply("unknown command (try \"help\")");
}

static void answer(struct client *c)
{
    if (c->answered)
        return;
    c->answered = true;
    uv_read_stop((uv_stream_t *)&c->pipe);
    c->line[c->len] = '\0';
    char *nl = strchr(c->line, '\n');
    if (nl)
        *nl = '\0';
    c->text = c->len > KN_STATS_COMMAND_MAX ? kn_stats_error_reply("command line too long")
                                            : run_command(c, c->line);
    uv_timer_start(&c->timer, on_client_timeout, CLIENT_TIMEOUT_MS, 0);
    if (!c->text) {
        client_close(c);
        return;
    }
    size_t n = strlen(c->text);
    uv_buf_t b = uv_buf_init(c->text, (unsigned)n);
    if (uv_write(&c->wreq, (uv_stream_t *)&c->pipe, &b, 1, on_client_written) < 0)
        client_close(c);
}

static void on_grace(uv_timer_t *t)
{
    struct client *c = t->data;
    if (c->len == 0) {
        answer(c); /* nothing asked: the stats */
        return;
    }
    /* a command has begun: give it the rest of the client's time */
    uv_timer_start(&c->timer, on_client_timeout, CLIENT_TIMEOUT_MS, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct client *c = h->data;
    /* one byte past the limit tells an overlong line apart */
    buf->base = c->line + c->len;
    buf->len = c->len <= KN_STATS_COMMAND_MAX ? KN_STATS_COMMAND_MAX + 1 - c->len : 0;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    struct client *c = st->data;
    if (c->answered)
        return;
    if (nread < 0) {
        if (nread == UV_EOF || nread == UV_ENOBUFS)
            answer(c); /* the client said all it had to say */
        else
            client_close(c);
        return;
    }
    c->len += (size_t)nread;
    if (c->len > KN_STATS_COMMAND_MAX || memchr(c->line, '\n', c->len))
        answer(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct kn_stats_server *s = server->data;
    if (status < 0)
        return;
    struct client *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->server = s;
    uv_pipe_init(s->loop, &c->pipe, 0);
    uv_timer_init(s->loop, &c->timer);
    c->pipe.data = c->timer.data = c->wreq.data = c->sreq.data = c;
    c->open = 2;
    if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0) {
        client_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_grace, COMMAND_GRACE_MS, 0);
    if (uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0)
        answer(c);
}

static void free_server(uv_handle_t *h)
{
    free(h->data);
}

/* A socket for a configured group is of no use in a directory that group
 * cannot enter (one kenaf-simd did not create: systemd's RuntimeDirectory=,
 * or the admin's). Said once at start, not refused: root may still use it.
 * Without a configured group the daemon's own group gets no promise (the
 * default 0700 directory of a run from a checkout is right as it is). */
static void warn_unreachable(const char *path, unsigned mode, gid_t group)
{
    if (!(mode & 0060) || group == (gid_t)-1)
        return;
    char dir[sizeof((struct sockaddr_un *)0)->sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = '\0';
    gid_t g = group;
    struct stat st;
    if (stat(dir, &st) < 0 || (st.st_mode & S_IXOTH) || (st.st_gid == g && (st.st_mode & S_IXGRP)))
        return;
    kn_warn("stats socket %s: its directory %s (mode %04o, gid %u) cannot be entered by group %u; "
            "only the owner reaches the socket",
            path, dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid, (unsigned)g);
}

int kn_stats_server_start(uv_loop_t *loop, const char *path, unsigned mode, gid_t group,
                          kn_stats_render_fn render, kn_stats_command_fn command, void *ctx,
                          struct kn_stats_server **out, char *err, size_t errlen)
{
    *out = NULL;
    struct kn_stats_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "stats socket: out of memory");
        return -1;
    }
    char why[600];
    if (strlen(path) >= sizeof s->path) {
        snprintf(err, errlen, "stats socket %s: path too long (max %zu bytes)", path,
                 sizeof s->path - 1);
        free(s);
        return -1;
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    s->loop = loop;
    s->render = render;
    s->command = command;
    s->ctx = ctx;
    if (kn_sockdir_prepare_group(path, true, group, why, sizeof why) < 0) {
        snprintf(err, errlen, "stats socket %s: %s", path, why);
        free(s);
        return -1;
    }
    uv_pipe_init(loop, &s->pipe, 0);
    s->pipe.data = s;
    if (kn_unixsock_listen_mode(&s->pipe, path, 16, mode, group, on_connection, why, sizeof why) <
        0) {
        snprintf(err, errlen, "stats socket %s", why);
        uv_close((uv_handle_t *)&s->pipe, free_server);
        return -1;
    }
    warn_unreachable(path, mode, group);
    *out = s;
    return 0;
}

void kn_stats_server_stop(struct kn_stats_server *s)
{
    if (!s)
        return;
    unlink(s->path);
    uv_close((uv_handle_t *)&s->pipe, free_server);
}

const char *kn_stats_server_path(const struct kn_stats_server *s)
{
    return s->path;
}
