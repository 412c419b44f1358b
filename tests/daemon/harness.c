/* System-test helpers: see harness.h. */
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

void h_standin_start(struct h_standin *s, int port, const char *name, const char *const extra[])
{
    h_sim_start(s, "KN_STANDIN", true, port, name, extra);
}

const char *h_standin_robot(const char *name, int sim_port, const char *extra)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, 1024,
             "{\"name\":\"%s\",\"listen\":\"127.0.0.1:0\"%s,"
             "\"backend\":{\"type\":\"standin\",\"address\":\"127.0.0.1:%d\","
             "\"reconnect_max_s\":0.3}}",
             name, extra ? extra : "", sim_port);
    return b;
}

int h_run(char *const argv[], char *out, size_t outlen, char *err, size_t errlen, int timeout_ms)
{
    /* forgotten once it has exited, so a test may run programs any
     * number of times */
    struct h_proc proc, *p = &proc;
    h_spawn(p, argv, NULL, "run.stderr"); /* each run's stderr replaces the last one's */
    size_t used = 0;
    if (outlen)
        out[0] = '\0';
    static char line[65536];
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000u);
        if (!h_read_line(p, line, sizeof line, left > 0 ? left : 1))
            break; /* EOF (or the deadline) */
        int w = snprintf(out + used, outlen - used, "%s\n", line);
        if (w > 0 && (size_t)w < outlen - used)
            used += (size_t)w;
    }
    int left = (int)(end > h_now_us() ? (end - h_now_us()) / 1000u : 0);
    int st = h_wait_exit(p, left > 1000 ? left : 1000);
    if (err && errlen)
        snprintf(err, errlen, "%s", h_stderr(p));
    if (st == -1) {
        h_signal(p, SIGKILL);
        h_wait_exit(p, H_LONG_MS);
        h_forget(p);
        return -1;
    }
    h_forget(p);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

/* ---- kenaf-simd ---- */

void h_daemon_write_config(struct h_daemon *d, const char *robots_json)
{
    char *text = malloc(strlen(robots_json) + sizeof d->top + 1024);
    ck_assert_ptr_nonnull(text);
    sprintf(text,
            "{\n  \"log_level\": \"%s\",\n  \"stats_socket\": \"%s\",\n  %s%s"
            "\"robots\": %s\n}\n",
            getenv("KN_DEBUG") ? "debug" : "info", d->stats, d->top, d->top[0] ? ",\n  " : "",
            robots_json);
    h_write_file(d->config, text);
    free(text);
}

static void notify_drain(struct h_daemon *d, int timeout_ms)
{
    struct pollfd pf = { .fd = d->notify_fd, .events = POLLIN };
    while (poll(&pf, 1, timeout_ms) > 0) {
        char buf[2048];
        ssize_t n = recv(d->notify_fd, buf, sizeof buf - 1, 0);
        if (n <= 0)
            break;
        buf[n] = '\0';
        size_t l = strlen(d->notes);
        snprintf(d->notes + l, sizeof d->notes - l, "%s\n", buf);
        timeout_ms = 0;
    }
}

bool h_notify_seen(struct h_daemon *d, const char *what, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        notify_drain(d, 0);
        if (strstr(d->notes, what))
            return true;
        int64_t left = (int64_t)(end - h_now_us()) / 1000;
        if (left <= 0)
            return false;
        notify_drain(d, left > 50 ? 50 : (int)left);
    }
}

int h_notify_count(struct h_daemon *d, const char *what)
{
    notify_drain(d, 0);
    int n = 0;
    for (const char *p = d->notes; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

void h_daemon_start(struct h_daemon *d, const char *robots_json)
{
    h_daemon_start_env(d, robots_json, NULL);
}

void h_daemon_start_env(struct h_daemon *d, const char *robots_json, char *const env[])
{
    h_daemon_launch(d, "kenaf-simd", robots_json, NULL, env, true);
}

void h_daemon_launch(struct h_daemon *d, const char *name, const char *robots_json,
                     const char *const args[], char *const extra_env[], bool wrapped)
{
    h_daemon_spawn(d, name, NULL, robots_json, args, extra_env, wrapped);
    h_daemon_ready(d);
}

void h_daemon_spawn(struct h_daemon *d, const char *name, const char *top, const char *robots_json,
                    const char *const args[], char *const extra_env[], bool wrapped)
{
    h_daemon_spawn_at(d, name, NULL, top, robots_json, args, extra_env, wrapped);
}

void h_daemon_spawn_at(struct h_daemon *d, const char *name, const char *stats, const char *top,
                       const char *robots_json, const char *const args[], char *const extra_env[],
                       bool wrapped)
{
    const char *exe = getenv("KN_SIMD");
    ck_assert_msg(exe != NULL, "KN_SIMD not set");
    memset(d, 0, sizeof *d);
    char f[64];
    snprintf(f, sizeof f, "%s.json", name);
    snprintf(d->config, sizeof d->config, "%s", h_path(f));
    snprintf(f, sizeof f, "%s-stats.sock", name);
    snprintf(d->stats, sizeof d->stats, "%s", stats ? stats : h_path(f));
    snprintf(f, sizeof f, "%s-notify.sock", name);
    snprintf(d->notify_path, sizeof d->notify_path, "%s", h_path(f));
    if (top)
        snprintf(d->top, sizeof d->top, "%s", top);
    else
        snprintf(d->top, sizeof d->top, "\"ready_timeout_s\": 0,\n  \"capture_dir\": \"%s\"",
                 h_path(""));
    h_daemon_write_config(d, robots_json);

    d->notify_fd = h_unix_dgram_bind(d->notify_path);

    static char envbuf[300];
    snprintf(envbuf, sizeof envbuf, "NOTIFY_SOCKET=%s", d->notify_path);
    char *env[16] = { envbuf, NULL };
    for (int i = 0; extra_env && extra_env[i] && i < 14; i++) {
        env[i + 1] = extra_env[i];
        env[i + 2] = NULL;
    }
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--config";
    argv[n++] = d->config;
    for (int i = 0; args && args[i] && n < 23; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    snprintf(f, sizeof f, "%s.stderr", name);
    if (wrapped)
        h_spawn_wrapped(&d->proc, argv, env, f);
    else
        h_spawn(&d->proc, argv, env, f);
}

void h_daemon_ready(struct h_daemon *d)
{
    ck_assert_msg(h_notify_seen(d, "READY=1", H_LONG_MS), "kenaf-simd not ready: %s",
                  h_stderr(&d->proc));
    cJSON *s = h_stats(d);
    cJSON *robots = cJSON_GetObjectItemCaseSensitive(s, "robots");
    d->nrobots = cJSON_GetArraySize(robots);
    for (int i = 0; i < d->nrobots && i < H_MAX_ROBOTS; i++) {
        cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(robots, i), "listen");
        ck_assert(cJSON_IsString(l));
        const char *colon = strrchr(l->valuestring, ':');
        ck_assert_ptr_nonnull(colon);
        d->port[i] = atoi(colon + 1);
    }
    cJSON_Delete(s);
}

cJSON *h_stats(struct h_daemon *d)
{
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    int fd;
    while ((fd = h_unix_stream_connect(d->stats)) < 0) {
        ck_assert_msg(h_now_us() < end, "no stats socket at %s: %s", d->stats, h_stderr(&d->proc));
        h_sleep_ms(20);
    }
    size_t cap = 1 << 20, n = 0; /* grows: a fleet's stats run to megabytes */
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, H_LONG_MS) <= 0)
            break;
        if (cap - 1 - n == 0) {
            char *grown = realloc(buf, cap * 2);
            ck_assert_ptr_nonnull(grown);
            buf = grown;
            cap *= 2;
        }
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    ck_assert_msg(j != NULL, "stats are not JSON: %.200s", buf);
    free(buf);
    return j;
}

static const cJSON *lookup(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
        if (cJSON_IsArray(j))
            j = cJSON_GetArrayItem(j, atoi(tok));
        else
            j = cJSON_GetObjectItemCaseSensitive(j, tok);
    }
    return j;
}

double h_stat(struct h_daemon *d, const char *path)
{
    cJSON *s = h_stats(d);
    const cJSON *v = lookup(s, path);
    ck_assert_msg(v && (cJSON_IsNumber(v) || cJSON_IsBool(v)), "stats have no number at %s", path);
    double r = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
    cJSON_Delete(s);
    return r;
}

const char *h_stat_str(struct h_daemon *d, const char *path)
{
    static char buf[512];
    cJSON *s = h_stats(d);
    const cJSON *v = lookup(s, path);
    ck_assert_msg(v && cJSON_IsString(v), "stats have no string at %s", path);
    snprintf(buf, sizeof buf, "%s", v->valuestring);
    cJSON_Delete(s);
    return buf;
}

/* Polls until h_stat(path) >= want, or == want when exact. */
static bool wait_stat(struct h_daemon *d, const char *path, double want, bool exact, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        double v = h_stat(d, path);
        if (exact ? v == want : v >= want)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(10);
    }
}

bool h_wait_stat(struct h_daemon *d, const char *path, double min, int timeout_ms)
{
    return wait_stat(d, path, min, false, timeout_ms);
}

bool h_wait_stat_eq(struct h_daemon *d, const char *path, double want, int timeout_ms)
{
    return wait_stat(d, path, want, true, timeout_ms);
}

void h_wait_backend_fresh(struct h_daemon *d, int robot, int timeout_ms)
{
    char path[64];
    snprintf(path, sizeof path, "robots.%d.flags.BACKEND_UP", robot);
    ck_assert_msg(h_wait_stat(d, path, 1, timeout_ms), "robot %d: backend never came up: %s", robot,
                  h_stderr(&d->proc));
    /* and the first state arrived */
    snprintf(path, sizeof path, "robots.%d.flags.STALE", robot);
    ck_assert_msg(h_wait_stat_eq(d, path, 0, timeout_ms), "robot %d: state stale: %s", robot,
                  h_stderr(&d->proc));
}

/* ---- UDP ---- */

void h_udp_open(struct h_udp *u, int port)
{
    u->seq = 0;
    memset(&u->sess, 0, sizeof u->sess);
    u->fd = h_udp_connect(port);
}

void h_udp_close(struct h_udp *u)
{
    if (u->fd >= 0)
        close(u->fd);
    u->fd = -1;
}

void h_udp_raw(struct h_udp *u, const void *buf, size_t len)
{
    ck_assert_int_eq(send(u->fd, buf, len, 0), (ssize_t)len);
}

void h_udp_send(struct h_udp *u, const struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    struct kn_krp_msg s = *m;
    kn_krp_session_stamp(&u->sess, &s);
    size_t n = kn_krp_encode(&s, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    h_udp_raw(u, buf, n);
}

bool h_udp_recv(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (!h_wait_readable(u->fd, end))
            return false;
        uint8_t buf[2048];
        ssize_t n = recv(u->fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == ECONNREFUSED))
            continue;
        ck_assert_int_gt(n, 0);
        enum kn_krp_result res = kn_krp_decode(buf, (size_t)n, m);
        ck_assert_msg(res == KN_KRP_OK, "robot sent a bad datagram: %s", kn_krp_result_str(res));
        return true;
    }
}

bool h_udp_recv_answer(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        if (!h_udp_recv(u, m, left < 0 ? 0 : left))
            return false;
        if (!(m->h.type == KN_KRP_STATUS && m->u.status.req_seq == 0))
            return true;
    }
}

/* A message of that type with seq (0: the next one of u) and flags. */
static struct kn_krp_msg new_msg(struct h_udp *u, uint8_t type, uint32_t seq, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, seq ? seq : ++u->seq, flags);
    return m;
}

static uint32_t send_msg(struct h_udp *u, const struct kn_krp_msg *m)
{
    h_udp_send(u, m);
    return m->h.seq;
}

uint32_t h_hello(struct h_udp *u, const char *name)
{
    struct kn_krp_msg m = new_msg(u, KN_KRP_HELLO, 0, 0);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    return send_msg(u, &m);
}

uint8_t h_hello_session(struct h_udp *u, const char *name, bool observe)
{
    struct kn_krp_msg m;
    kn_krp_session_hello(&u->sess, &m, name, observe);
    m.h.seq = ++u->seq;
    h_udp_send(u, &m);
    struct kn_krp_msg a;
    ck_assert_msg(h_udp_recv_answer(u, &a, H_LONG_MS), "no HELLO_ACK");
    ck_assert_uint_eq(a.h.type, KN_KRP_HELLO_ACK);
    ck_assert(a.u.hello_ack.session);
    kn_krp_session_accept(&u->sess, &a.u.hello_ack, u->seq + 1);
    return a.u.hello_ack.role;
}

uint32_t h_crawler(struct h_udp *u, uint32_t seq, uint16_t flags, int32_t l, int32_t r)
{
    struct kn_krp_msg m = new_msg(u, KN_KRP_CRAWLER, seq, flags);
    m.u.crawler.left_mm_s = l;
    m.u.crawler.right_mm_s = r;
    return send_msg(u, &m);
}

uint32_t h_flipper(struct h_udp *u, uint32_t seq, uint16_t flags, uint8_t mask,
                   const int32_t cdeg[4])
{
    struct kn_krp_msg m = new_msg(u, KN_KRP_FLIPPER, seq, flags);
    m.u.flipper.mask = mask;
    memcpy(m.u.flipper.target_cdeg, cdeg, sizeof m.u.flipper.target_cdeg);
    return send_msg(u, &m);
}

uint32_t h_simple(struct h_udp *u, uint32_t seq, uint8_t type, uint16_t flags)
{
    struct kn_krp_msg m = new_msg(u, type, seq, flags);
    return send_msg(u, &m);
}

uint32_t h_subscribe(struct h_udp *u, uint16_t flags, uint16_t period)
{
    struct kn_krp_msg m = new_msg(u, KN_KRP_SUBSCRIBE, 0, flags);
    m.u.subscribe.period_ms = period;
    return send_msg(u, &m);
}

uint32_t h_estop(struct h_udp *u, uint16_t flags, uint8_t engage)
{
    struct kn_krp_msg m = new_msg(u, KN_KRP_ESTOP, 0, flags);
    m.u.estop.engage = engage;
    return send_msg(u, &m);
}

void h_expect_error(struct h_udp *u, uint8_t code, uint32_t seq, uint8_t type)
{
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no ERROR %u for seq %u", code, seq);
    ck_assert_msg(m.h.type == KN_KRP_ERROR, "expected ERROR %u, got %s", code,
                  kn_krp_type_name(m.h.type));
    ck_assert_uint_eq(m.u.error.code, code);
    ck_assert_uint_eq(m.u.error.offending_seq, seq);
    ck_assert_uint_eq(m.u.error.offending_type, type);
}

void h_expect_ack(struct h_udp *u, uint32_t seq, uint8_t type)
{
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no ACK for seq %u", seq);
    ck_assert_msg(m.h.type == KN_KRP_ACK, "expected ACK, got %s (code %u)",
                  kn_krp_type_name(m.h.type), m.h.type == KN_KRP_ERROR ? m.u.error.code : 0);
    ck_assert_uint_eq(m.u.ack.acked_seq, seq);
    ck_assert_uint_eq(m.u.ack.acked_type, type);
}

struct kn_krp_status h_status(struct h_udp *u)
{
    uint32_t seq = h_simple(u, 0, KN_KRP_STATUS_REQ, 0);
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no STATUS for seq %u", seq);
    ck_assert_msg(m.h.type == KN_KRP_STATUS, "expected STATUS, got %s (code %u, seq %u, type %u)",
                  kn_krp_type_name(m.h.type), m.h.type == KN_KRP_ERROR ? m.u.error.code : 0,
                  m.h.type == KN_KRP_ERROR ? m.u.error.offending_seq : 0,
                  m.h.type == KN_KRP_ERROR ? m.u.error.offending_type : 0);
    ck_assert_uint_eq(m.u.status.req_seq, seq);
    return m.u.status;
}

struct kn_krp_status h_status_any(struct h_udp *u)
{
    uint32_t seq = h_simple(u, 0, KN_KRP_STATUS_REQ, 0);
    struct kn_krp_msg m;
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        ck_assert_msg(h_udp_recv(u, &m, left < 0 ? 0 : left), "no STATUS for seq %u", seq);
        if (m.h.type == KN_KRP_STATUS && m.u.status.req_seq == seq)
            return m.u.status;
    }
}

void h_expect_silence(struct h_udp *u)
{
    (void)h_status(u);
}

int h_crawler_until_error(struct h_udp *u, uint8_t code, int32_t l, int32_t r, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (int accepted = 0;; accepted++) {
        uint32_t seq = h_crawler(u, 0, KN_KRP_F_ACK_REQ, l, r);
        struct kn_krp_msg m;
        ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "CRAWLER %u unanswered", seq);
        if (m.h.type == KN_KRP_ERROR && m.u.error.code == code) {
            ck_assert_uint_eq(m.u.error.offending_seq, seq);
            return accepted;
        }
        ck_assert_msg(m.h.type == KN_KRP_ACK && m.u.ack.acked_seq == seq,
                      "CRAWLER %u answered type %u (code %u), not ACK or ERROR %u", seq, m.h.type,
                      m.h.type == KN_KRP_ERROR ? m.u.error.code : 0, code);
        ck_assert_msg(h_now_us() < end,
                      "CRAWLER still accepted after %d ms (%d times), never "
                      "ERROR %u",
                      timeout_ms, accepted + 1, code);
        h_sleep_ms(200);
    }
}

/* ---- stand-in log ---- */

static bool parse_cmd(const char *line, void *item)
{
    struct h_cmd *c = item;
    unsigned long long t;
    int client, off = 0;
    if (sscanf(line, "%llu %d %n", &t, &client, &off) < 2 || off == 0)
        return false;
    cJSON *j = cJSON_Parse(line + off);
    const cJSON *type = j ? cJSON_GetObjectItemCaseSensitive(j, "type") : NULL;
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "cmd") != 0) {
        cJSON_Delete(j);
        return false;
    }
    memset(c, 0, sizeof *c);
    c->t_us = t;
    c->client = client;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "belts");
    for (int i = 0; i < 2; i++)
        c->belts[i] = cJSON_GetArrayItem(b, i) ? cJSON_GetArrayItem(b, i)->valuedouble : NAN;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "flippers");
    for (int k = 0; k < 4; k++) {
        const cJSON *v = cJSON_GetArrayItem(f, k);
        if (cJSON_IsNumber(v)) {
            c->flippers[k] = v->valuedouble;
            c->fmask |= (uint8_t)(1u << k);
        }
    }
    c->reapply = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "reapply"));
    cJSON_Delete(j);
    return true;
}

int h_log_cmds(const char *log, struct h_cmd *out, int max)
{
    return h_parse_lines(log, out, sizeof *out, max, parse_cmd);
}

struct needle {
    const char *text;
    int n;
};

static bool count_line(const char *line, void *arg)
{
    struct needle *k = arg;
    k->n += strstr(line, k->text) != NULL;
    return true;
}

int h_log_count(const char *log, const char *needle)
{
    struct needle k = { needle, 0 };
    h_each_line(log, count_line, &k);
    return k.n;
}

bool h_log_wait(const char *log, const char *needle, int count, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (h_log_count(log, needle) >= count)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(10);
    }
}

int h_wait_belts(const char *log, int from, double l, double r, int timeout_ms, struct h_cmd *found)
{
    enum { MAX = 400000 };
    static struct h_cmd *cmds;
    if (!cmds)
        cmds = malloc(MAX * sizeof *cmds);
    ck_assert_ptr_nonnull(cmds);
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int n = h_log_cmds(log, cmds, MAX);
        for (int i = from; i < n; i++) {
            if (fabs(cmds[i].belts[0] - l) < 1e-6 && fabs(cmds[i].belts[1] - r) < 1e-6) {
                if (found)
                    *found = cmds[i];
                return i;
            }
        }
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(10);
    }
}

const char *h_run_square(int port, int timeout_ms, const char *extra)
{
    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", port);
    const char *run = getenv("KN_SIM_RUN"), *square = getenv("KN_SQUARE");
    ck_assert_msg(run && square, "KN_SIM_RUN / KN_SQUARE not set");
    char *argv[] = { "/bin/sh", (char *)run, "--robot", robot, "--", (char *)square, NULL };
    static struct h_proc p;
    h_spawn(&p, argv, NULL, "square.stderr");
    static char out[65536];
    size_t used = 0;
    out[0] = '\0';
    char line[1024];
    while (h_read_line(&p, line, sizeof line, timeout_ms)) {
        int w = snprintf(out + used, sizeof out - used, "%s\n", line);
        if (w > 0 && (size_t)w < sizeof out - used)
            used += (size_t)w;
    }
    int st = h_wait_exit(&p, timeout_ms);
    ck_assert_msg(st != -1, "square did not finish");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "square failed (%d): %s\n%s\n%s", st,
                  h_stderr(&p), out, extra ? extra : "");
    ck_assert_msg(strstr(out, "SIMULATED") != NULL, "no status block with SIMULATED: %s", out);
    return out;
}
