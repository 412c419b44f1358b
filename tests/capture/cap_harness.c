/* Capture and replay test helpers: see cap_harness.h. */
#include "cap_harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

void c_daemon_start(struct h_daemon *d, const char *name, const char *robots_json,
                    const char *const args[])
{
    const char *exe = getenv("KN_SIMD");
    ck_assert_msg(exe != NULL, "KN_SIMD not set");
    memset(d, 0, sizeof *d);
    char f[64];
    snprintf(f, sizeof f, "%s.json", name);
    snprintf(d->config, sizeof d->config, "%s", h_path(f));
    snprintf(f, sizeof f, "%s-stats.sock", name);
    snprintf(d->stats, sizeof d->stats, "%s", h_path(f));
    snprintf(f, sizeof f, "%s-notify.sock", name);
    snprintf(d->notify_path, sizeof d->notify_path, "%s", h_path(f));
    h_daemon_write_config(d, robots_json);

    d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(d->notify_fd, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    ck_assert_uint_lt(strlen(d->notify_path), sizeof a.sun_path);
    memcpy(a.sun_path, d->notify_path, strlen(d->notify_path) + 1);
    unlink(d->notify_path);
    ck_assert_int_eq(bind(d->notify_fd, (struct sockaddr *)&a, sizeof a), 0);

    static char envbuf[300];
    snprintf(envbuf, sizeof envbuf, "NOTIFY_SOCKET=%s", d->notify_path);
    char *env[] = { envbuf, NULL };
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--config";
    argv[n++] = d->config;
    for (int i = 0; args && args[i] && n < 23; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    snprintf(f, sizeof f, "%s.stderr", name);
    h_spawn(&d->proc, argv, env, f);
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

int c_run(char *const argv[], char *out, size_t outlen, int timeout_ms)
{
    /* the harness keeps a pointer to every child until teardown */
    static struct h_proc pool[32];
    static int next;
    ck_assert_int_lt(next, 32);
    struct h_proc *p = &pool[next++];
    h_spawn(p, argv, NULL, "run.stderr");
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
    if (st == -1) {
        h_signal(p, SIGKILL);
        h_wait_exit(p, H_LONG_MS);
        return -1;
    }
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

const char *c_command(struct h_daemon *d, const char *line)
{
    static char out[65536];
    char *argv[] = { getenv("KN_SIMD"), "--command", (char *)line, "--socket", d->stats, NULL };
    int rc = c_run(argv, out, sizeof out, H_LONG_MS);
    ck_assert_msg(rc == 0, "kenaf-simd --command \"%s\" failed (%d): %s", line, rc, out);
    return out;
}

bool c_capture_closed(struct h_daemon *d, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        cJSON *s = h_stats(d);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "capture");
        bool closed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "closed"));
        cJSON_Delete(s);
        if (closed)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(20);
    }
}

const char *c_which(const char *prog)
{
    static char buf[4096];
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
        if (n && access(buf, X_OK) == 0)
            return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

const char *c_standin_robot(const char *name, int sim_port, const char *extra)
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
