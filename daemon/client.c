/* kenaf-simd's client modes: see client.h. */
#include "client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

int kn_client_wait_ready(const char *given, const struct kn_config *cfg, double timeout_s)
{
    double end = now_s() + timeout_s;
    char path[108], err[700], why[4096] = "", ready[2048];
    for (;;) {
        if (kn_client_socket(given, cfg, path, sizeof path, err, sizeof err) < 0) {
            fprintf(stderr, "kenaf-simd: %s\n", err);
            return 1;
        }
        if (kn_stats_ready(path, end - now_s(), ready, sizeof ready, why, sizeof why)) {
            printf("kenaf-simd: ready: %s\n", ready[0] ? ready : "no robots");
            return 0;
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
