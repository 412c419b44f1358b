/* Stats socket: see stats.h. A client may first send one command line
 * ("stats", "capture ...", "faults ...", "help"); one that sends nothing
 * for COMMAND_GRACE_MS, or shuts its side down, gets the stats, so a plain
 * connect-and-read works as before. Each client gets one JSON answer,
 * then the connection is shut down; a client that does not read is
 * dropped after a few seconds so it cannot pin memory. */
#include "stats.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "faults.h"
#include "log.h"

#define CLIENT_TIMEOUT_MS 5000
#define COMMAND_GRACE_MS 30     /* a command, if any, comes right after connecting */
#define COMMAND_MAX 1024

struct kn_stats_server {
    uv_loop_t *loop;
    uv_pipe_t pipe;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    kn_stats_render_fn render;
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
    char line[COMMAND_MAX + 1];
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

static char *error_reply(const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", false);
    cJSON_AddStringToObject(o, "error", msg);
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

/* The answer to one command line (without its end of line). */
static char *run_command(struct kn_stats_server *s, char *line)
{
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
    if (w == 4 && !strncmp(line, "help", 4))
        return error_reply("commands: stats | capture start PATH [max_mb=N] | capture stop | "
                           "capture status | faults ROBOT krp|sim [off] [drop=P] [duplicate=P] "
                           "[reorder=P] [delay_ms=MS] [jitter_ms=MS] [seed=N]");
    return error_reply("unknown command (try \"help\")");
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
    c->text = c->len > COMMAND_MAX ? error_reply("command line too long")
                                   : run_command(c->server, c->line);
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
    buf->len = c->len <= COMMAND_MAX ? COMMAND_MAX + 1 - c->len : 0;
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
    if (c->len > COMMAND_MAX || memchr(c->line, '\n', c->len))
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

/* A socket file nobody listens on is left over from a dead daemon. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "stats socket %s: exists and is not a socket", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, path, strlen(path));
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    close(fd);
    if (rc == 0) {
        snprintf(err, errlen, "stats socket %s: in use by another process", path);
        return -1;
    }
    unlink(path);
    return 0;
}

static void free_server(uv_handle_t *h)
{
    free(h->data);
}

int kn_stats_server_start(uv_loop_t *loop, const char *path, kn_stats_render_fn render, void *ctx,
                          struct kn_stats_server **out, char *err, size_t errlen)
{
    *out = NULL;
    struct kn_stats_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "stats socket: out of memory");
        return -1;
    }
    if (strlen(path) >= sizeof s->path) {
        snprintf(err, errlen, "stats socket %s: path too long (max %zu bytes)", path,
                 sizeof s->path - 1);
        free(s);
        return -1;
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    s->loop = loop;
    s->render = render;
    s->ctx = ctx;
    if (clear_stale(path, err, errlen) < 0) {
        free(s);
        return -1;
    }
    uv_pipe_init(loop, &s->pipe, 0);
    s->pipe.data = s;
    int rc = uv_pipe_bind(&s->pipe, path);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->pipe, 16, on_connection);
    if (rc < 0) {
        snprintf(err, errlen, "stats socket %s: %s", path, uv_strerror(rc));
        uv_close((uv_handle_t *)&s->pipe, free_server);
        return -1;
    }
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

static long ms_left(const struct timespec *end)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
}

int kn_stats_fetch(const char *path, FILE *out, int timeout_ms)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        fprintf(stderr, "kenaf-simd: stats socket path too long: %s\n", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        fprintf(stderr, "kenaf-simd: cannot connect to the stats socket %s: %s "
                "(is kenaf-simd running with this stats_socket?)\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* asking explicitly saves the server's wait for a command */
    static const char ask[] = "stats\n";
    if (send(fd, ask, sizeof ask - 1, MSG_NOSIGNAL) < 0) {
        fprintf(stderr, "kenaf-simd: writing to the stats socket %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    char buf[8192];
    for (;;) {
        long left = ms_left(&end);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int pr = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            fprintf(stderr, "kenaf-simd: no answer from the stats socket %s\n", path);
            close(fd);
            return -1;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "kenaf-simd: reading %s: %s\n", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        fwrite(buf, 1, (size_t)n, out);
    }
    close(fd);
    fputc('\n', out);
    fflush(out);
    return 0;
}
