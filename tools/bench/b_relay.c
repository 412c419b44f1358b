/* Relay latency: a KRP/1 CRAWLER leaving the client until its command line
 * is read by the sink simulator, through kenaf-simd and, in the same run,
 * through socat (UDP in, TCP out, nothing done in between: the floor).
 *
 * The two relays take turns every half period, so each sees the configured
 * rate and both see the same machine load over the same seconds (the
 * machine is shared; back-to-back runs would compare different minutes).
 * Each CRAWLER carries a unique id in its belt speeds, so a command line is
 * matched to its datagram even if one is lost or reordered. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "krp.h"

#define WARMUP 200 /* first ids per relay, not counted */

struct target {
    const char *name;
    int fd;
    uint32_t seq, n, sent;
    uint64_t *tsend, *trecv;
    atomic_uint_fast64_t received;
};

static void on_cmd(void *ctx, int robot, uint32_t id, uint64_t t)
{
    struct target *tg = ctx;
    (void)robot;
    if (id < tg->n && tg->trecv[id] == 0) {
        tg->trecv[id] = t;
        tg->received++;
    }
}

static int udp_connect(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_id(struct target *tg, uint32_t id)
{
    struct kn_krp_msg m;
    uint8_t buf[64];
    kn_krp_init(&m, KN_KRP_CRAWLER, ++tg->seq, 0);
    kn_bench_id_encode(id, &m.u.crawler.left_mm_s, &m.u.crawler.right_mm_s);
    size_t len = kn_krp_encode(&m, buf, sizeof buf);
    tg->tsend[id] = kn_bench_now_ns();
    if (send(tg->fd, buf, len, 0) == (ssize_t)len)
        tg->sent++;
}

static bool target_init(struct target *tg, const char *name, uint32_t n)
{
    memset(tg, 0, sizeof *tg);
    tg->name = name;
    tg->fd = -1;
    tg->n = n;
    tg->tsend = calloc(n, sizeof *tg->tsend);
    tg->trecv = calloc(n, sizeof *tg->trecv);
    return tg->tsend && tg->trecv;
}

static void target_free(struct target *tg)
{
    if (tg->fd >= 0)
        close(tg->fd);
    free(tg->tsend);
    free(tg->trecv);
}

static struct kn_bench_summary collect(struct target *tg, uint64_t *late)
{
    struct kn_bench_samples s = { 0 };
    *late = 0;
    for (uint32_t id = WARMUP; id < tg->n; id++) {
        if (!tg->tsend[id] || !tg->trecv[id])
            continue;
        if (tg->trecv[id] < tg->tsend[id]) { /* cannot happen; never hide it */
            (*late)++;
            continue;
        }
        kn_bench_samples_add(&s, tg->trecv[id] - tg->tsend[id]);
    }
    struct kn_bench_summary r = kn_bench_summarize(&s);
    kn_bench_samples_free(&s);
    return r;
}

static cJSON *target_json(struct target *tg, const struct kn_bench_summary *s)
{
    cJSON *o = kn_bench_summary_json(s);
    cJSON_AddNumberToObject(o, "sent", tg->sent);
    cJSON_AddNumberToObject(o, "received", (double)tg->received);
    cJSON_AddNumberToObject(o, "lost", (double)tg->sent - (double)tg->received);
    return o;
}

int kn_bench_relay(const struct kn_bench_opts *o, cJSON *root)
{
    int rc = -1;
    char err[2048];
    uint32_t n = WARMUP + (uint32_t)(o->rate_hz * o->relay_s);
    struct target ours, base;
    struct kn_sink *sink_a = NULL, *sink_b = NULL;
    struct kn_simd d;
    struct kn_bench_proc socat = { 0 };
    bool have_simd = false, have_socat = false, socat_up = false;
    bool ok_a = target_init(&ours, "kenaf-simd", n), ok_b = target_init(&base, "socat", n);
    if (!ok_a || !ok_b) {
        fprintf(stderr, "kenaf-bench: relay: out of memory\n");
        goto out;
    }
    fprintf(stderr, "relay: %s sink, %.0f Hz per relay for %.0f s...\n",
            kn_sink_proto_name(o->proto), o->rate_hz, o->relay_s);

    sink_a = kn_sink_start(o->proto, on_cmd, &ours, err, sizeof err);
    if (!sink_a)
        goto fail;
    if (kn_simd_start(&d, o, "relay", 1, o->proto, kn_sink_port(sink_a), -1, err, sizeof err) < 0)
        goto fail;
    have_simd = true;
    ours.fd = udp_connect(d.port[0]);

    if (o->socat) {
        sink_b = kn_sink_start(KN_SINK_KRP, on_cmd, &base, err, sizeof err);
        if (!sink_b)
            goto fail;
        int uport = kn_bench_free_udp_port();
        char a1[64], a2[80], log[300];
        snprintf(a1, sizeof a1, "UDP-RECV:%d,bind=127.0.0.1", uport);
        /* nodelay as kenaf-simd sets it: a fair floor, not Nagle's */
        snprintf(a2, sizeof a2, "TCP:127.0.0.1:%d,nodelay", kn_sink_port(sink_b));
        snprintf(log, sizeof log, "%s/socat.log", o->scratch);
        char *argv[] = { (char *)o->socat, "-u", a1, a2, NULL };
        if (kn_bench_spawn(&socat, argv, log, NULL, -1) != 0) {
            snprintf(err, sizeof err, "cannot start socat");
            goto fail;
        }
        have_socat = socat_up = true;
        /* socat binds its UDP side before it connects its TCP side */
        uint64_t end = kn_bench_now_ns() + 10000000000ull;
        while (kn_sink_conns(sink_b) < 1) {
            if (kn_bench_exited(&socat) || kn_bench_now_ns() > end) {
                snprintf(err, sizeof err, "socat did not connect to the sink: %s",
                         kn_bench_log_tail(log));
                goto fail;
            }
            kn_bench_sleep_ms(5);
        }
        base.fd = udp_connect(uport);
    }
    if (ours.fd < 0 || (have_socat && base.fd < 0)) {
        snprintf(err, sizeof err, "UDP socket: %s", strerror(errno));
        goto fail;
    }

    uint64_t period = (uint64_t)(1e9 / o->rate_hz);
    uint64_t step = have_socat ? period / 2 : period;
    uint64_t t0 = kn_bench_now_ns() + 10000000u;
    uint32_t slots = have_socat ? 2 * n : n;
    for (uint32_t k = 0; k < slots; k++) {
        kn_bench_sleep_until(t0 + k * step);
        if (have_socat && (k & 1))
            send_id(&base, k >> 1);
        else
            send_id(&ours, have_socat ? k >> 1 : k);
    }
    /* stragglers: a relay that lost something will not catch up */
    uint64_t end = kn_bench_now_ns() + 2000000000ull;
    while (kn_bench_now_ns() < end &&
           (ours.received < ours.sent || (have_socat && base.received < base.sent)))
        kn_bench_sleep_ms(10);

    cJSON *stats = kn_simd_stats(&d);
    /* the relays first, so no sink sees its peer vanish; what they send
     * while stopping (belts 0) carries no id */
    kn_simd_stop(&d);
    have_simd = false;
    if (socat_up)
        kn_bench_stop(&socat, 2000);
    socat_up = false;
    kn_sink_stop(sink_a);
    sink_a = NULL;
    uint64_t unparsed_b = sink_b ? kn_sink_unparsed(sink_b) : 0;
    kn_sink_stop(sink_b);
    sink_b = NULL;

    uint64_t late_a, late_b;
    struct kn_bench_summary sa = collect(&ours, &late_a);
    struct kn_bench_summary sb = collect(&base, &late_b);

    cJSON *j = cJSON_AddObjectToObject(root, "relay");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddStringToObject(j, "path", "CRAWLER datagram sent -> command read by the sink");
    cJSON_AddStringToObject(j, "sink_protocol", kn_sink_proto_name(o->proto));
    cJSON_AddNumberToObject(j, "rate_hz", o->rate_hz);
    cJSON_AddNumberToObject(j, "duration_s", o->relay_s);
    cJSON_AddItemToObject(j, "kenaf_simd", target_json(&ours, &sa));
    if (have_socat)
        cJSON_AddItemToObject(j, "socat", target_json(&base, &sb));
    else
        cJSON_AddNullToObject(j, "socat");
    cJSON *dh = cJSON_AddObjectToObject(j, "daemon_histogram");
    const cJSON *lat = stats ? kn_bench_json_path(stats, "robots.0.backend.latency_us") : NULL;
    const char *keys[] = { "count", "p50", "p99", "p999", "max", "mean" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = lat ? cJSON_GetObjectItemCaseSensitive(lat, keys[i]) : NULL;
        /* cJSON_IsNumber(NULL) is false: v is not read then */
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        cJSON_AddNumberToObject(dh, keys[i], cJSON_IsNumber(v) ? v->valuedouble : NAN);
    }
    const cJSON *coal =
        stats ? kn_bench_json_path(stats, "robots.0.backend.commands.coalesced") : NULL;
    cJSON_AddNumberToObject(j, "daemon_coalesced", cJSON_IsNumber(coal) ? coal->valuedouble : NAN);
    cJSON_Delete(stats);

    char item[64];
    snprintf(item, sizeof item, "relay CRAWLER->%s",
             o->proto == KN_SINK_USARSIM ? "DRIVE" : "cmd line");
    const char *bn = have_socat ? "socat" : NULL;
    kn_bench_row_target(targets, item, "p50 us", sa.p50_us, bn, sb.p50_us, KN_BENCH_LE, 20, "us");
    kn_bench_row_target(targets, item, "p99 us", sa.p99_us, bn, sb.p99_us, KN_BENCH_LE, 60, "us");
    kn_bench_row(item, "p99.9 us", sa.p999_us, bn, sb.p999_us);
    kn_bench_row(item, "max us", sa.max_us, bn, sb.max_us);
    kn_bench_row(item, "lost", (double)ours.sent - (double)ours.received, bn,
                 have_socat ? (double)base.sent - (double)base.received : NAN);
    if (have_socat) {
        kn_bench_target(targets, item, "ratio p50 (ours/socat)", sa.p50_us / sb.p50_us, KN_BENCH_LE,
                        1.0);
        kn_bench_target(targets, item, "ratio p99 (ours/socat)", sa.p99_us / sb.p99_us, KN_BENCH_LE,
                        1.0);
        if (sb.p50_us > 20 || sb.p99_us > 60)
            kn_bench_note("socat, a relay that does nothing, takes %.0f us p50 / %.0f us p99 here: "
                          "this machine's loopback floor is above the latency targets",
                          sb.p50_us, sb.p99_us);
    } else {
        kn_bench_note("relay: no socat (not installed, or --socat none): no baseline");
    }
    {
        const cJSON *p50 = cJSON_GetObjectItemCaseSensitive(dh, "p50");
        const cJSON *p99 = cJSON_GetObjectItemCaseSensitive(dh, "p99");
        /* kenaf-simd's own histogram: UDP receive to TCP write */
        kn_bench_row(item, "in daemon p50 us", p50 ? p50->valuedouble : NAN, NULL, NAN);
        kn_bench_row(item, "in daemon p99 us", p99 ? p99->valuedouble : NAN, NULL, NAN);
    }

    if (ours.received == 0) {
        snprintf(err, sizeof err, "the sink received nothing through kenaf-simd (%s)",
                 kn_bench_log_tail(d.log));
        goto fail;
    }
    if (have_socat && base.received == 0) {
        snprintf(err, sizeof err, "the sink received nothing through socat");
        goto fail;
    }
    if (late_a || late_b || unparsed_b) {
        snprintf(err, sizeof err, "%llu commands read before they were sent, %llu bad frames",
                 (unsigned long long)late_a + late_b, (unsigned long long)unparsed_b);
        goto fail;
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "kenaf-bench: relay: %s\n", err);
out:
    kn_sink_stop(sink_a);
    kn_sink_stop(sink_b);
    if (socat_up)
        kn_bench_stop(&socat, 2000);
    if (have_simd)
        kn_simd_stop(&d);
    target_free(&ours);
    target_free(&base);
    return rc;
}
