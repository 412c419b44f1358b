/* kenaf-simd under test: a config of n robots pointing at the bench's sink,
 * the process, and its stats socket (the ports it bound, whether each
 * simulator link is up, the counters the loss figures come from). */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define START_TIMEOUT_MS 15000

const char *kn_sink_proto_name(enum kn_sink_proto p)
{
    switch (p) {
    case KN_SINK_USARSIM: return "usarsim";
    case KN_SINK_STANDIN: return "standin";
    default: return "krp";
    }
}

static int write_config(const struct kn_simd *d, int n, int coalesce_us, enum kn_sink_proto proto,
                        int sink_port, int key_robot, const char *key_file)
{
    FILE *f = fopen(d->cfg, "w");
    if (!f)
        return -1;
    /* max speed 5000 so no id-carrying speed is clamped; a long watchdog so
     * the gaps between measurements never trip it (that would add DRIVE 0
     * lines nobody sent) */
    fprintf(f, "{\n  \"log_level\": \"warn\",\n  \"stats_socket\": \"%s\",\n", d->sock);
    if (coalesce_us > 0)
        fprintf(f, "  \"coalesce_us\": %d,\n", coalesce_us);
    fprintf(f, "  \"robots\": [\n");
    for (int i = 0; i < n; i++) {
        fprintf(f,
                "    {\"name\": \"r%d\", \"listen\": \"127.0.0.1:0\", \"watchdog_ms\": 10000,\n"
                "     \"limits\": {\"max_speed_mm_s\": 5000},\n",
                i);
        if (i == key_robot)
            fprintf(f, "     \"key_file\": \"%s\",\n", key_file);
        fprintf(f,
                "     \"backend\": {\"type\": \"%s\", \"address\": \"127.0.0.1:%d\", "
                "\"reconnect_max_s\": 0.1%s}}%s\n",
                kn_sink_proto_name(proto), sink_port,
                proto == KN_SINK_USARSIM ? ", \"wheel_radius_m\": 0.08" : "", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f);
}

static char *fetch(const char *path, int timeout_ms)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path)
        return NULL;
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return NULL;
    }
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return NULL;
    }
    uint64_t end = kn_bench_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        int64_t left = (int64_t)(end - kn_bench_now_ns()) / 1000000;
        if (left <= 0)
            goto fail;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            goto fail;
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                goto fail;
            buf = nb;
            cap *= 2;
        }
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            goto fail;
        if (k == 0)
            break;
        len += (size_t)k;
    }
    close(fd);
    if (buf)
        buf[len] = '\0';
    return buf;
fail:
    free(buf);
    close(fd);
    return NULL;
}

cJSON *kn_simd_stats(struct kn_simd *d)
{
    char *text = fetch(d->sock, 5000);
    if (!text)
        return NULL;
    cJSON *j = cJSON_Parse(text);
    free(text);
    return j;
}

const cJSON *kn_bench_json_path(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
        if (cJSON_IsArray(o))
            o = cJSON_GetArrayItem(o, atoi(tok));
        else
            o = cJSON_GetObjectItemCaseSensitive(o, tok);
    }
    return o;
}

double kn_bench_stats_sum(const cJSON *stats, const char *path)
{
    const cJSON *robots = cJSON_GetObjectItemCaseSensitive(stats, "robots");
    if (!cJSON_IsArray(robots))
        return NAN;
    double sum = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, robots)
    {
        const cJSON *v = kn_bench_json_path(r, path);
        if (cJSON_IsBool(v))
            sum += cJSON_IsTrue(v);
        else if (cJSON_IsNumber(v))
            sum += v->valuedouble;
        else
            return NAN;
    }
    return sum;
}

/* Every robot's link up, and its UDP port known. */
static bool all_up(struct kn_simd *d)
{
    cJSON *s = kn_simd_stats(d);
    if (!s)
        return false;
    const cJSON *robots = cJSON_GetObjectItemCaseSensitive(s, "robots");
    bool ok = cJSON_IsArray(robots) && cJSON_GetArraySize(robots) == d->nrobots;
    for (int i = 0; ok && i < d->nrobots; i++) {
        const cJSON *r = cJSON_GetArrayItem(robots, i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
        const cJSON *listen = cJSON_GetObjectItemCaseSensitive(r, "listen");
        const cJSON *up = kn_bench_json_path(r, "backend.up");
        int idx =
            cJSON_IsString(name) && name->valuestring[0] == 'r' ? atoi(name->valuestring + 1) : -1;
        const char *colon = cJSON_IsString(listen) ? strrchr(listen->valuestring, ':') : NULL;
        if (idx < 0 || idx >= d->nrobots || !colon || !cJSON_IsTrue(up)) {
            ok = false;
            break;
        }
        d->port[idx] = atoi(colon + 1);
    }
    cJSON_Delete(s);
    return ok;
}

int kn_simd_start(struct kn_simd *d, const struct kn_bench_opts *o, const char *tag, int n,
                  enum kn_sink_proto proto, int sink_port, int cpu, char *err, size_t errlen)
{
    return kn_simd_start_keyed(d, o, tag, n, proto, sink_port, cpu, -1, NULL, err, errlen);
}

int kn_simd_start_keyed(struct kn_simd *d, const struct kn_bench_opts *o, const char *tag, int n,
                        enum kn_sink_proto proto, int sink_port, int cpu, int key_robot,
                        const char *key_file, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (n < 1 || n > KN_BENCH_MAX_ROBOTS) {
        snprintf(err, errlen, "robots must be 1..%d", KN_BENCH_MAX_ROBOTS);
        return -1;
    }
    d->nrobots = n;
    snprintf(d->cfg, sizeof d->cfg, "%s/%s.json", o->scratch, tag);
    snprintf(d->sock, sizeof d->sock, "%s/%s.sock", o->scratch, tag);
    snprintf(d->log, sizeof d->log, "%s/%s.log", o->scratch, tag);
    if (write_config(d, n, o->coalesce_us, proto, sink_port, key_robot, key_file) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", d->cfg, strerror(errno));
        return -1;
    }
    char *argv[] = { (char *)o->simd, "--config", d->cfg, NULL };
    if (kn_bench_spawn(&d->proc, argv, d->log, NULL, cpu) != 0) {
        snprintf(err, errlen, "cannot start %s: %s", o->simd, strerror(errno));
        return -1;
    }
    uint64_t end = kn_bench_now_ns() + (uint64_t)START_TIMEOUT_MS * 1000000u;
    while (!all_up(d)) {
        if (kn_bench_exited(&d->proc)) {
            snprintf(err, errlen, "kenaf-simd exited (status %d): %s", d->proc.status,
                     kn_bench_log_tail(d->log));
            return -1;
        }
        if (kn_bench_now_ns() >= end) {
            snprintf(err, errlen, "kenaf-simd: simulator links not up within %d s: %s",
                     START_TIMEOUT_MS / 1000, kn_bench_log_tail(d->log));
            kn_simd_stop(d);
            return -1;
        }
        kn_bench_sleep_ms(20);
    }
    return 0;
}

void kn_simd_stop(struct kn_simd *d)
{
    kn_bench_stop(&d->proc, 3000);
}
