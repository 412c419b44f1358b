/* Test helpers for kenaf-engine's server: see eng_client.h. */
#include "eng_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#define MAX_ENGINES 8

static struct ec_engine *engines[MAX_ENGINES];
static int nengines;
static unsigned err_seq;

uint64_t ec_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void ec_setup(void)
{
    nengines = 0;
    signal(SIGPIPE, SIG_IGN);
}

void ec_teardown(void)
{
    for (int i = 0; i < nengines; i++) {
        struct ec_engine *e = engines[i];
        if (!e->reaped && e->pid > 0) {
            kill(e->pid, SIGKILL);
            waitpid(e->pid, NULL, 0);
            e->reaped = true;
        }
        if (e->out_fd >= 0)
            close(e->out_fd);
        e->out_fd = -1;
        if (!getenv("KN_KEEP_TMP"))
            unlink(e->err_path);
    }
    nengines = 0;
}

static bool read_line_fd(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (n + 1 < cap) {
        int64_t left = (int64_t)(end - ec_now_us()) / 1000;
        if ((int64_t)(end - ec_now_us()) <= 0)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left > 0 ? left : 1));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        char ch;
        ssize_t k = read(fd, &ch, 1);
        if (k <= 0)
            return false;
        if (ch == '\n') {
            buf[n] = '\0';
            return true;
        }
        buf[n++] = ch;
    }
    buf[n] = '\0';
    return true;
}

void ec_engine_start(struct ec_engine *e, const char *const extra[])
{
    const char *exe = getenv("KN_ENGINE");
    ck_assert_msg(exe != NULL, "KN_ENGINE not set");
    memset(e, 0, sizeof *e);
    e->out_fd = -1;
    snprintf(e->err_path, sizeof e->err_path, "/tmp/kn-engine-%d-%u.stderr", (int)getpid(),
             err_seq++);
    const char *argv[40];
    int n = 0;
    argv[n++] = exe;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; extra && extra[i] && n < 38; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    int pipefd[2];
    ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = open(e->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(pipefd[1], 1);
        if (fd >= 0)
            dup2(fd, 2);
        signal(SIGPIPE, SIG_DFL);
        execv(exe, (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    e->pid = pid;
    e->out_fd = pipefd[0];
    ck_assert(nengines < MAX_ENGINES);
    engines[nengines++] = e;
    char line[128];
    ck_assert_msg(read_line_fd(e->out_fd, line, sizeof line, EC_LONG_MS),
                  "kenaf-engine printed no PORT line: %s", ec_engine_stderr(e));
    ck_assert_msg(sscanf(line, "PORT %d", &e->port) == 1 && e->port > 0 && e->port < 65536,
                  "bad PORT line \"%s\"", line);
}

int ec_engine_stop(struct ec_engine *e, int timeout_ms)
{
    if (e->reaped)
        return e->status;
    kill(e->pid, SIGTERM);
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (ec_now_us() < end) {
        int st;
        pid_t r = waitpid(e->pid, &st, WNOHANG);
        if (r == e->pid) {
            e->reaped = true;
            e->status = st;
            return st;
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

const char *ec_engine_stderr(struct ec_engine *e)
{
    static char buf[16384];
    buf[0] = '\0';
    FILE *f = fopen(e->err_path, "r");
    if (!f)
        return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

void ec_connect(struct ec_conn *c, int port)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(c->fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(c->fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s",
                  strerror(errno));
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->len = 0;
    c->eof = false;
    c->last[0] = '\0';
}

void ec_close(struct ec_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

void ec_send_raw(struct ec_conn *c, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "send: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

void ec_send(struct ec_conn *c, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ck_assert(n > 0 && (size_t)n < sizeof buf);
    ec_send_raw(c, buf, (size_t)n);
}

bool ec_line(struct ec_conn *c, int timeout_ms)
{
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            size_t keep = n < sizeof c->last - 1 ? n : sizeof c->last - 1;
            memcpy(c->last, c->buf, keep);
            while (keep && (c->last[keep - 1] == '\r' || c->last[keep - 1] == '\n'))
                keep--;
            c->last[keep] = '\0';
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            if (kn_usar_tokenize(c->last, keep, &c->tl) != KN_USAR_OK)
                memset(&c->tl, 0, sizeof c->tl);
            return true;
        }
        if (c->eof || c->len == sizeof c->buf)
            return false;
        int64_t left = (int64_t)(end - ec_now_us());
        if (left <= 0)
            return false;
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left / 1000 + 1));
        if (r <= 0)
            continue;
        ssize_t k = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            c->eof = true;
            continue;
        }
        c->len += (size_t)k;
    }
}

static bool group_is(struct ec_conn *c, const char *key, const char *want)
{
    struct kn_usar_str v;
    return kn_usar_get_str(&c->tl, key, &v) == KN_USAR_OK && kn_usar_str_is(v, want);
}

bool ec_wait_head(struct ec_conn *c, const char *head, const char *type, int timeout_ms)
{
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (ec_now_us() < end) {
        int left = (int)((end - ec_now_us()) / 1000) + 1;
        if (!ec_line(c, left))
            return false;
        if (!kn_usar_str_is(c->tl.head, head))
            continue;
        if (type && !group_is(c, "Type", type))
            continue;
        return true;
    }
    return false;
}

bool ec_wait_kenaf(struct ec_conn *c, const char *cmd, int timeout_ms)
{
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (ec_now_us() < end) {
        int left = (int)((end - ec_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "KENAF", NULL, left))
            return false;
        if (group_is(c, "Cmd", cmd))
            return true;
    }
    return false;
}

bool ec_wait_sen(struct ec_conn *c, enum kn_usar_sen_type type, double min_time,
                 struct kn_usar_sen *out, int timeout_ms)
{
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (ec_now_us() < end) {
        int left = (int)((end - ec_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "SEN", NULL, left))
            return false;
        if (kn_usar_parse_sen(&c->tl, out) != KN_USAR_OK || out->sen_type != type)
            continue;
        if (out->has_time && out->time < min_time)
            continue;
        return true;
    }
    return false;
}

bool ec_wait_sta(struct ec_conn *c, double min_time, struct kn_usar_sta *out, int timeout_ms)
{
    uint64_t end = ec_now_us() + (uint64_t)timeout_ms * 1000u;
    while (ec_now_us() < end) {
        int left = (int)((end - ec_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "STA", NULL, left))
            return false;
        if (kn_usar_parse_sta(&c->tl, out) != KN_USAR_OK || !out->has_time)
            continue;
        if (out->time < min_time)
            continue;
        return true;
    }
    return false;
}

void ec_stats(struct ec_conn *c)
{
    ec_send(c, "KENAF {Cmd Stats}\r\n");
    ck_assert_msg(ec_wait_kenaf(c, "Stats", EC_LONG_MS), "no Stats reply");
}

int64_t ec_stat(struct ec_conn *c, const char *key)
{
    int64_t v;
    ck_assert_msg(kn_usar_get_int(&c->tl, key, &v) == KN_USAR_OK, "no {%s} in \"%s\"", key,
                  c->last);
    return v;
}

int64_t ec_stat_now(struct ec_conn *c, const char *key)
{
    ec_stats(c);
    return ec_stat(c, key);
}

const struct kn_conv_table *ec_table(void)
{
    static struct kn_conv_table t;
    static bool init;
    if (!init) {
        kn_conv_table_usarsim(&t);
        t.wheel_radius_m = 0.08;
        t.counts_per_m = 4000;
        init = true;
    }
    return &t;
}
