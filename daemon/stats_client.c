/* The stats socket's client side: see stats_client.h. */
#include "stats_client.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static long ms_left(const struct timespec *end)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
}

static int connect_to(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        snprintf(err, errlen, "stats socket %s: path too long for a Unix socket", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        snprintf(err, errlen, "cannot connect to the stats socket %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The whole answer, until the daemon closes, or NULL at the deadline. */
static char *read_answer(int fd, const char *path, const struct timespec *end, char *err,
                         size_t errlen)
{
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        long left = ms_left(end);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int pr = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            snprintf(err, errlen, "no answer from the stats socket %s", path);
            free(buf);
            return NULL;
        }
        if (len + 1 >= cap) {
            char *nb = cap < KN_STATS_ANSWER_MAX ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                snprintf(err, errlen, "the answer from %s is too long", path);
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "reading the stats socket %s: %s", path, strerror(errno));
            free(buf);
            return NULL;
        }
        if (n == 0) {
            buf[len] = '\0';
            return buf;
        }
        len += (size_t)n;
    }
    snprintf(err, errlen, "out of memory");
    return NULL;
}

char *kn_stats_ask(const char *path, const char *line, int timeout_ms, char *err, size_t errlen)
{
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    char msg[KN_STATS_COMMAND_MAX + 2];
    int n = snprintf(msg, sizeof msg, "%s\n", line);
    if (n < 0 || (size_t)n >= sizeof msg) {
        snprintf(err, errlen, "command line too long (at most %d bytes)", KN_STATS_COMMAND_MAX);
        return NULL;
    }
    int fd = connect_to(path, err, errlen);
    if (fd < 0)
        return NULL;
    if (send(fd, msg, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(err, errlen, "writing to the stats socket %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    shutdown(fd, SHUT_WR);
    char *answer = read_answer(fd, path, &end, err, errlen);
    close(fd);
    return answer;
}

int kn_stats_fetch(const char *path, FILE *out, int timeout_ms)
{
    char err[600];
    char *text = kn_stats_ask(path, "stats", timeout_ms, err, sizeof err);
    if (!text) {
        fprintf(stderr, "kenaf-simd: %s\n", err);
        return -1;
    }
    fprintf(out, "%s\n", text);
    fflush(out);
    free(text);
    return 0;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len, const char *fmt,
                                                         ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

/* See stats_client.h. */
bool kn_stats_all_up(const char *text, char *ready, size_t rlen, char *why, size_t wlen)
{
    ready[0] = why[0] = '\0';
    cJSON *doc = cJSON_Parse(text);
    const cJSON *robots = cJSON_GetObjectItemCaseSensitive(doc, "robots");
    if (!cJSON_IsArray(robots)) {
        snprintf(why, wlen, "the stats socket answered without a robot list");
        cJSON_Delete(doc);
        return false;
    }
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(doc, "robots_failed"), *f;
    cJSON_ArrayForEach(f, failed) if (cJSON_IsString(f))
        append(why, wlen, "%srobot %s: did not start (see the daemon's log)", why[0] ? "; " : "",
               f->valuestring);
    const cJSON *r;
    cJSON_ArrayForEach(r, robots)
    {
        const char *name = str_at(r, "name", NULL);
        const cJSON *up = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(r, "flags"), "BACKEND_UP");
        if (cJSON_IsTrue(up)) {
            append(ready, rlen, "%s%s", ready[0] ? ", " : "", name ? name : "?");
            continue;
        }
        const cJSON *be = cJSON_GetObjectItemCaseSensitive(r, "backend");
        const char *state = str_at(be, "state", NULL);
        const char *type = str_at(be, "type", NULL);
        /* a spawned engine's own failure says more than the link's */
        const cJSON *proc = type ? cJSON_GetObjectItemCaseSensitive(be, type) : NULL;
        const char *cause = str_at(proc, "process", "last_error");
        if (!cause)
            cause = str_at(be, "last_error", NULL);
        append(why, wlen, "%srobot %s: simulator link %s%s%s%s", why[0] ? "; " : "",
               name ? name : "?", state ? state : "down", cause ? " (" : "", cause ? cause : "",
               cause ? ")" : "");
    }
    cJSON_Delete(doc);
    return why[0] == '\0';
}

bool kn_stats_ready(const char *path, double left_s, char *ready, size_t rlen, char *why,
                    size_t wlen)
{
    char err[700];
    int ask_ms = left_s < 1.0 ? 1000 : left_s > 5.0 ? 5000 : (int)(left_s * 1000);
    char *text = kn_stats_ask(path, "stats", ask_ms, err, sizeof err);
    if (!text) {
        ready[0] = '\0';
        snprintf(why, wlen, "no daemon answers: %s", err);
        return false;
    }
    bool ok = kn_stats_all_up(text, ready, rlen, why, wlen);
    free(text);
    return ok;
}
