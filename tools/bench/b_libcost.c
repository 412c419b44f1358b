/* What a controller pays per library call, against a running kenaf-simd:
 *  hrt_get_status        vs a plain (not inlined) function copying a
 *                        struct of the same size: the floor of any call
 *                        that returns the status;
 *  hrt_set_crawler_speed vs a raw send() of the same CRAWLER datagram to
 *                        the same port: the floor of any call that
 *                        reaches the robot.
 * The library and its baseline take turns (batch by batch, call by call),
 * so machine noise falls on both. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kenaf.h"
#include "krp.h"

#define BATCH 1000
#define SEND_SLOT_NS 200000u /* one set-point call every 200 us */

static hrt_status g_src;

__attribute__((noinline)) static int plain_copy(hrt_status *dst)
{
    *dst = g_src;
    __asm__ volatile("" ::: "memory");
    return 0;
}

static int raw_connect(int port)
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

/* The summary of per-batch times (ns per call), with _ns keys. */
static cJSON *ns_json(const struct kn_bench_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batches", (double)s->n);
    const double v[] = { s->mean_us, s->p50_us, s->p90_us, s->p99_us, s->min_us, s->max_us };
    const char *k[] = { "mean_ns", "p50_ns", "p90_ns", "p99_ns", "min_ns", "max_ns" };
    for (int i = 0; i < 6; i++)
        cJSON_AddNumberToObject(o, k[i], round(v[i] * 1000) / 1000);
    return o;
}

static void add_pair(cJSON *j, const char *name, const struct kn_bench_summary *lib,
                     const struct kn_bench_summary *base, const char *base_name, uint64_t calls,
                     uint64_t not_ok, bool ns)
{
    cJSON *o = cJSON_AddObjectToObject(j, name);
    cJSON_AddNumberToObject(o, "calls", (double)calls);
    cJSON_AddNumberToObject(o, "calls_not_ok", (double)not_ok);
    cJSON_AddItemToObject(o, "library", ns ? ns_json(lib) : kn_bench_summary_json(lib));
    cJSON_AddItemToObject(o, base_name, ns ? ns_json(base) : kn_bench_summary_json(base));
    cJSON_AddNumberToObject(
        o, "ratio_p50",
        isfinite(lib->p50_us / base->p50_us) ? round(lib->p50_us / base->p50_us * 100) / 100 : 0);
}

int kn_bench_libcost(const struct kn_bench_opts *o, cJSON *root)
{
    char err[2048];
    int rc = -1, raw = -1;
    bool inited = false, have_simd = false;
    struct kn_simd d;
    struct kn_bench_samples gs_lib = { 0 }, gs_base = { 0 }, sc_lib = { 0 }, sc_base = { 0 };
    /* the simulator side (kenaf-simd, the sink thread) on the last CPU, the
     * caller and the library's I/O thread on the others, so no sink
     * wake-up preempts a call being timed */
    int far = o->pin && kn_bench_ncpu() >= 2 ? kn_bench_ncpu() - 1 : -1;
    struct kn_sink *sink = kn_sink_start(o->proto, NULL, NULL, err, sizeof err);
    if (!sink)
        goto fail;
    kn_sink_pin(sink, far);
    if (far >= 0)
        kn_bench_pin_except(far);
    if (kn_simd_start(&d, o, "libcost", 1, o->proto, kn_sink_port(sink), far, err, sizeof err) < 0)
        goto fail;
    have_simd = true;
    fprintf(stderr, "library call cost...\n");

    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d.port[0]);
    setenv("KENAF_ROBOT", robot, 1);
    setenv("KENAF_TIMEOUT_MS", "10000", 1); /* slow (sanitized) builds still connect */
    int r = hrt_kenaf_init();
    if (r != HRT_OK) {
        snprintf(err, sizeof err, "hrt_kenaf_init: %s", hrt_strerror(r));
        goto fail;
    }
    inited = true;
    hrt_status st;
    uint64_t end = kn_bench_now_ns() + 10000000000ull;
    while ((r = hrt_get_status(&st)) != HRT_OK && kn_bench_now_ns() < end)
        kn_bench_sleep_ms(10);
    if (r != HRT_OK) {
        snprintf(err, sizeof err, "hrt_get_status: %s", hrt_strerror(r));
        goto fail;
    }
    g_src = st;
    raw = raw_connect(d.port[0]);
    if (raw < 0) {
        snprintf(err, sizeof err, "UDP socket: %s", strerror(errno));
        goto fail;
    }

    /* hrt_get_status: per-call time from batches, library and plain copy
     * alternating */
    uint64_t batches = (uint64_t)(o->libcost_calls * 100 / BATCH);
    if (batches < 10)
        batches = 10;
    uint64_t gs_not_ok = 0;
    for (uint64_t b = 0; b < 2 * batches; b++) {
        uint64_t t0 = kn_bench_now_ns();
        if (b & 1) {
            for (int i = 0; i < BATCH; i++)
                plain_copy(&st);
        } else {
            for (int i = 0; i < BATCH; i++)
                gs_not_ok += hrt_get_status(&st) != HRT_OK;
        }
        /* a batch's total ns over 1000 calls reads as ns per call in the
         * summary's "us" fields (ns / 1000) */
        kn_bench_samples_add((b & 1) ? &gs_base : &gs_lib, kn_bench_now_ns() - t0);
    }

    /* hrt_set_crawler_speed: each call timed, one every 200 us, library
     * and raw send alternating. Every datagram of either carries a new
     * value, so each makes kenaf-simd write a simulator command: both pay
     * the same wake-ups (of kenaf-simd, and of the sink thread in this
     * process, which may preempt the caller) */
    uint64_t calls = (uint64_t)o->libcost_calls;
    uint64_t sc_not_ok = 0;
    uint32_t seq = 0;
    uint64_t t0 = kn_bench_now_ns() + 1000000u;
    for (uint64_t k = 0; k < 2 * calls; k++) {
        kn_bench_sleep_until(t0 + k * SEND_SLOT_NS);
        double v = (double)((k >> 1) % 800) + 1;
        if (k & 1) {
            struct kn_krp_msg m;
            uint8_t buf[64];
            kn_krp_init(&m, KN_KRP_CRAWLER, ++seq, 0);
            m.u.crawler.left_mm_s = (int32_t)v;
            m.u.crawler.right_mm_s = -(int32_t)v - 1;
            size_t len = kn_krp_encode(&m, buf, sizeof buf);
            uint64_t a = kn_bench_now_ns();
            ssize_t s = send(raw, buf, len, 0);
            uint64_t b = kn_bench_now_ns();
            if (s == (ssize_t)len)
                kn_bench_samples_add(&sc_base, b - a);
        } else {
            uint64_t a = kn_bench_now_ns();
            int res = hrt_set_crawler_speed(v, -v);
            uint64_t b = kn_bench_now_ns();
            kn_bench_samples_add(&sc_lib, b - a);
            sc_not_ok += res != HRT_OK;
        }
    }
    hrt_stop();

    struct kn_bench_summary gl = kn_bench_summarize(&gs_lib), gb = kn_bench_summarize(&gs_base);
    struct kn_bench_summary sl = kn_bench_summarize(&sc_lib), sb = kn_bench_summarize(&sc_base);
    cJSON *j = cJSON_AddObjectToObject(root, "libcost");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddNumberToObject(j, "get_status_batch", BATCH);
    add_pair(j, "hrt_get_status", &gl, &gb, "plain_function_copy", batches * BATCH, gs_not_ok,
             true);
    add_pair(j, "hrt_set_crawler_speed", &sl, &sb, "raw_send", calls, sc_not_ok, false);
    /* a few ns: shown in ns */
    kn_bench_row_target(targets, "hrt_get_status", "p50 ns (batch mean)", gl.p50_us, "call",
                        gb.p50_us, KN_BENCH_LE, 1000, "ns");
    kn_bench_row("hrt_get_status", "p99 ns (batch mean)", gl.p99_us, "call", gb.p99_us);
    kn_bench_row_target(targets, "hrt_set_crawler_speed", "p50 us", sl.p50_us, "send()", sb.p50_us,
                        KN_BENCH_LE, 5, "us");
    kn_bench_row("hrt_set_crawler_speed", "p99 us", sl.p99_us, "send()", sb.p99_us);
    if (gs_not_ok || sc_not_ok)
        kn_bench_note("library calls not HRT_OK: %llu get_status, %llu set_crawler_speed",
                      (unsigned long long)gs_not_ok, (unsigned long long)sc_not_ok);
    if (sb.n == 0) {
        snprintf(err, sizeof err, "raw send() failed: %s", strerror(errno));
        goto fail;
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "kenaf-bench: libcost: %s\n", err);
out:
    if (inited)
        hrt_kenaf_exit();
    if (raw >= 0)
        close(raw);
    kn_bench_samples_free(&gs_lib);
    kn_bench_samples_free(&gs_base);
    kn_bench_samples_free(&sc_lib);
    kn_bench_samples_free(&sc_base);
    if (have_simd)
        kn_simd_stop(&d);
    kn_sink_stop(sink);
    kn_bench_pin_except(-1);
    return rc;
}
