/* kenaf-simd's client modes: see client.h. */
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "sockdir.h"
#include "stats.h"

#define ASK_TIMEOUT_MS 5000
#define POLL_MS 100

int kn_client_socket(const char *given, const struct kn_config *cfg, char *out, size_t len,
                     char *err, size_t errlen)
{
    const char *pick = given;
    char cands[KN_SOCKDIR_MAX_CANDIDATES][108];
    if (!pick && cfg && !cfg->stats_socket_default) {
        if (!cfg->stats_socket[0]) {
            snprintf(err, errlen,
                     "%s turns the stats socket off (\"stats_socket\": \"\"); give "
                     "--socket PATH",
                     cfg->source);
            return -1;
        }
        pick = cfg->stats_socket;
    }
    if (!pick) {
        size_t n = kn_sockdir_candidates(cands, KN_SOCKDIR_MAX_CANDIDATES);
        struct stat st;
        pick = cands[0];
        for (size_t i = 0; i < n; i++)
            if (lstat(cands[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
                pick = cands[i];
                break;
            }
    }
    if (strlen(pick) >= len) {
        snprintf(err, errlen, "stats socket path too long: %s", pick);
        return -1;
    }
    memcpy(out, pick, strlen(pick) + 1);
    return 0;
}

int kn_client_stats(const char *path)
{
    return kn_stats_fetch(path, stdout, ASK_TIMEOUT_MS) == 0 ? 0 : 1;
}

int kn_client_command(const char *path, const char *line)
{
    char err[700];
    for (int attempt = 0; attempt < 3; attempt++) {
        char *reply = kn_stats_ask(path, line, ASK_TIMEOUT_MS, err, sizeof err);
        if (!reply) {
            fprintf(stderr, "kenaf-simd: %s\n", err);
            return 1;
        }
        if (strncmp(reply, "{\"ok\":", 6) != 0) {
            free(reply); /* the stats: our line came too late */
            continue;
        }
        printf("%s\n", reply);
        int rc = strncmp(reply, "{\"ok\":true", 10) == 0 ? 0 : 1;
        free(reply);
        return rc;
    }
    fprintf(stderr, "kenaf-simd: the daemon did not take the command\n");
    return 1;
}

/* ---- --wait-ready ------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
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

/* True when every robot is up; otherwise what is not up goes to why,
 * and what is up to ready. */
static bool all_up(const char *text, char *ready, size_t rlen, char *why, size_t wlen)
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

int kn_client_wait_ready(const char *given, const struct kn_config *cfg, double timeout_s)
{
    double end = now_s() + timeout_s;
    char path[108], err[700], why[4096] = "", ready[2048];
    for (;;) {
        if (kn_client_socket(given, cfg, path, sizeof path, err, sizeof err) < 0) {
            fprintf(stderr, "kenaf-simd: %s\n", err);
            return 1;
        }
        double left = end - now_s();
        int ask_ms = left < 1.0 ? 1000 : left > 5.0 ? 5000 : (int)(left * 1000);
        char *text = kn_stats_ask(path, "stats", ask_ms, err, sizeof err);
        if (text) {
            bool ok = all_up(text, ready, sizeof ready, why, sizeof why);
            free(text);
            if (ok) {
                printf("kenaf-simd: ready: %s\n", ready[0] ? ready : "no robots");
                return 0;
            }
        } else {
            snprintf(why, sizeof why, "no daemon answers: %s", err);
        }
        if (now_s() >= end)
            break;
        struct timespec ts = { 0, POLL_MS * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
    fprintf(stderr, "kenaf-simd: not ready after %g s: %s\n", timeout_s, why);
    return 1;
}
