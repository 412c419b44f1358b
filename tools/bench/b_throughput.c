/* Throughput and memory: kenaf-simd with 1 and with N robots (25 by
 * default), each robot first at 1 kHz (a controller's rate: loss, CPU,
 * resident memory, and the CPU per datagram next to N socat relays
 * carrying the same stream in the same run: CRAWLERs as libkenaf.so.1
 * sends them, and with ACK_REQ on each), then the total rate raised
 * step by step until the daemon no longer sustains it; the highest
 * sustained rate is reported. Sustained means every datagram counted,
 * answered and relayed, all of it within KN_GEN_GRACE_MS of the step's
 * end: a rate the socket buffers absorb and the daemon drains afterwards
 * is not one it carries. kenaf-simd is pinned to one CPU and the generator
 * to the others, so "on one core" means what it says. The long run holds
 * N robots at 1 kHz and samples VmRSS once a second: it must stay flat. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Total datagrams/s tried, in order, until one loses. */
static const double ramp_full[] = { 10e3,  20e3,  30e3,  40e3,  50e3,  60e3,  80e3,
                                    100e3, 120e3, 150e3, 200e3, 250e3, 300e3, 400e3 };
static const double ramp_quick[] = { 5e3, 20e3 };

struct rig {
    struct kn_sink *sink;
    struct kn_simd d;
    bool have_simd;
    struct kn_gen *gen;
    atomic_uint_fast64_t relayed;
};

static void rig_stop(struct rig *r)
{
    kn_gen_free(r->gen);
    r->gen = NULL;
    if (r->have_simd)
        kn_simd_stop(&r->d);
    r->have_simd = false;
    kn_sink_stop(r->sink);
    r->sink = NULL;
}

static int rig_start(struct rig *r, const struct kn_bench_opts *o, const char *tag, int n, int cpu,
                     char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    atomic_init(&r->relayed, 0);
    r->sink = kn_sink_start(o->proto, kn_sink_count, &r->relayed, err, errlen);
    if (!r->sink)
        return -1;
    if (kn_simd_start(&r->d, o, tag, n, o->proto, kn_sink_port(r->sink), cpu, err, errlen) < 0) {
        rig_stop(r);
        return -1;
    }
    r->have_simd = true;
    r->gen = kn_gen_new(&r->d, &r->relayed, err, errlen);
    if (!r->gen) {
        rig_stop(r);
        return -1;
    }
    return 0;
}

/* CPU placement: kenaf-simd on the last CPU, the bench on the others. */
static int daemon_cpu(const struct kn_bench_opts *o)
{
    return o->pin && kn_bench_ncpu() >= 2 ? kn_bench_ncpu() - 1 : -1;
}

static void pin_bench(const struct kn_bench_opts *o, bool on)
{
    if (o->pin && kn_bench_ncpu() >= 2)
        kn_bench_pin_except(on ? kn_bench_ncpu() - 1 : -1);
}

static double loss_of(const struct kn_step *s)
{
    /* the worst of: not received, not answered, not relayed */
    double sent = (double)s->sent;
    double a = sent - s->in, b = sent - s->acked, c = sent - (double)s->relayed;
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/* N socat processes, one per robot (UDP in, TCP out to a sink of their
 * own, nothing in between), pinned where kenaf-simd is. */
struct socats {
    struct kn_sink *sink;
    struct kn_bench_proc p[KN_BENCH_MAX_ROBOTS];
    pid_t pid[KN_BENCH_MAX_ROBOTS];
    int port[KN_BENCH_MAX_ROBOTS];
    int n;
    atomic_uint_fast64_t relayed;
};

static void socats_stop(struct socats *sc)
{
    for (int i = 0; i < sc->n; i++)
        kn_bench_stop(&sc->p[i], 2000);
    sc->n = 0;
    kn_sink_stop(sc->sink);
    sc->sink = NULL;
}

static int socats_start(struct socats *sc, const struct kn_bench_opts *o, int n, int cpu, char *err,
                        size_t errlen)
{
    atomic_init(&sc->relayed, 0);
    sc->sink = kn_sink_start(KN_SINK_KRP, kn_sink_count, &sc->relayed, err, errlen);
    if (!sc->sink)
        return -1;
    for (int i = 0; i < n; i++) {
        sc->port[i] = kn_bench_free_udp_port();
        char a1[64], a2[80], log[300];
        snprintf(a1, sizeof a1, "UDP-RECV:%d,bind=127.0.0.1", sc->port[i]);
        /* nodelay as kenaf-simd sets it: a fair floor, not Nagle's */
        snprintf(a2, sizeof a2, "TCP:127.0.0.1:%d,nodelay", kn_sink_port(sc->sink));
        snprintf(log, sizeof log, "%s/socat-%d.log", o->scratch, i);
        char *argv[] = { (char *)o->socat, "-u", a1, a2, NULL };
        if (kn_bench_spawn(&sc->p[i], argv, log, NULL, cpu) != 0) {
            snprintf(err, errlen, "cannot start socat");
            return -1;
        }
        sc->pid[i] = sc->p[i].pid;
        sc->n = i + 1;
    }
    /* each binds its UDP side before it connects its TCP side */
    uint64_t end = kn_bench_now_ns() + 20000000000ull;
    while (kn_sink_conns(sc->sink) < n) {
        if (kn_bench_now_ns() > end) {
            snprintf(err, errlen, "%d of %d socat relays connected to the sink",
                     kn_sink_conns(sc->sink), n);
            return -1;
        }
        kn_bench_sleep_ms(5);
    }
    return 0;
}

/* One stream (n robots x 1 kHz, with or without ACK_REQ) through
 * kenaf-simd and through the socat relays, in turns, so both see the same
 * minutes of a shared machine: CPU per datagram of each. */
struct vs {
    double us_ours, us_socat, lost_ours, lost_socat, in_socat;
};

static struct vs turns(const struct kn_bench_opts *o, struct rig *r, struct socats *sc,
                       struct kn_gen *g, int n, bool ack_req)
{
    double t = o->quick ? 0.5 : 5.0, cpu_ours = 0, cpu_socat = 0, in_ours = 0;
    struct vs v = { 0 };
    kn_gen_ack(r->gen, ack_req);
    kn_gen_ack(g, ack_req);
    for (int turn = 0; turn < 4; turn++) {
        struct kn_step s;
        if (turn % 2 == 0)
            kn_gen_step(r->gen, &r->d, 1000.0 * n, t, &s);
        else
            kn_gen_step_pids(g, NULL, sc->pid, sc->n, 1000.0 * n, t, &s);
        double cpu = s.cpu_us_per_dgram * s.in, lost = (double)s.sent - (double)s.relayed;
        if (turn % 2 == 0) {
            /* an ACK without ACK_REQ, or one missing with it: a fault */
            double acks_due = ack_req ? (double)s.sent : 0;
            cpu_ours += cpu;
            in_ours += s.in;
            v.lost_ours += lost + fabs(s.acked - acks_due);
        } else {
            cpu_socat += cpu;
            v.in_socat += s.in;
            v.lost_socat += lost;
        }
    }
    kn_gen_ack(r->gen, true);
    v.us_ours = in_ours > 0 ? cpu_ours / in_ours : NAN;
    v.us_socat = v.in_socat > 0 ? cpu_socat / v.in_socat : NAN;
    return v;
}

static void vs_json(cJSON *rj, const char *key, const struct vs *v)
{
    cJSON *vs = cJSON_AddObjectToObject(rj, key);
    cJSON_AddNumberToObject(vs, "cpu_us_per_datagram", v->us_ours);
    cJSON_AddNumberToObject(vs, "socat_cpu_us_per_datagram", v->us_socat);
    cJSON_AddNumberToObject(vs, "ratio", v->us_ours / v->us_socat);
    cJSON_AddNumberToObject(vs, "lost", v->lost_ours);
    cJSON_AddNumberToObject(vs, "socat_lost", v->lost_socat);
}

/* The same streams through kenaf-simd and through n socat relays. socat
 * only forwards; kenaf-simd also checks, counts and converts every
 * datagram. The targets are on the stream a controller on libkenaf.so.1
 * sends (CRAWLER without ACK_REQ), which is what socat carries too; the
 * stream with ACK_REQ on every datagram, where kenaf-simd also answers
 * each with an ACK that socat never sends, is reported beside it. */
static int versus_socat(const struct kn_bench_opts *o, struct rig *r, int n, cJSON *rj,
                        cJSON *targets)
{
    char err[2048];
    struct socats *sc = calloc(1, sizeof *sc);
    struct kn_gen *g = NULL;
    int rc = -1;
    if (!sc) {
        fprintf(stderr, "kenaf-bench: throughput: out of memory\n");
        return -1;
    }
    fprintf(stderr, "throughput: %d robots at 1 kHz, kenaf-simd and %d socat relays in turns...\n",
            n, n);
    if (socats_start(sc, o, n, daemon_cpu(o), err, sizeof err) < 0)
        goto fail;
    g = kn_gen_new_ports(sc->port, n, &sc->relayed, err, sizeof err);
    if (!g)
        goto fail;
    struct vs plain = turns(o, r, sc, g, n, false), acked = turns(o, r, sc, g, n, true);
    vs_json(rj, "versus_socat", &plain);
    vs_json(rj, "versus_socat_ack_req", &acked);
    char item[96];
    snprintf(item, sizeof item, "%d robots x 1 kHz, relay (libkenaf's CRAWLER)", n);
    kn_bench_row_target(targets, item, "CPU us per datagram", plain.us_ours, "socat",
                        plain.us_socat, KN_BENCH_LE, 5, "us");
    kn_bench_target(targets, item, "CPU ratio (ours/socat)", plain.us_ours / plain.us_socat,
                    KN_BENCH_LE, 0.5);
    kn_bench_row(item, "lost", plain.lost_ours, "socat", plain.lost_socat);
    snprintf(item, sizeof item, "%d robots x 1 kHz, relay, ACK_REQ on each", n);
    kn_bench_row(item, "CPU us per datagram", acked.us_ours, "socat", acked.us_socat);
    kn_bench_row(item, "CPU ratio (ours/socat)", acked.us_ours / acked.us_socat, NULL, NAN);
    kn_bench_row(item, "lost or not answered", acked.lost_ours, "socat", acked.lost_socat);
    if (!(plain.in_socat > 0) || !(acked.in_socat > 0)) {
        snprintf(err, sizeof err, "nothing came through socat");
        goto fail;
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "kenaf-bench: throughput: socat baseline: %s\n", err);
out:
    kn_gen_free(g);
    socats_stop(sc);
    free(sc);
    return rc;
}

/* One robot count: 1 kHz per robot, then the ramp. */
static int scale_run(const struct kn_bench_opts *o, int n, cJSON *j, cJSON *targets, bool *limited)
{
    char err[2048], tag[32], item[64];
    struct rig r;
    snprintf(tag, sizeof tag, "tp%d", n);
    if (rig_start(&r, o, tag, n, daemon_cpu(o), err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-bench: throughput: %s\n", err);
        return -1;
    }
    int rc = 0;
    cJSON *rj = cJSON_CreateObject();
    cJSON_AddItemToObject(j, n == 1 ? "robots_1" : "robots_n", rj);
    cJSON_AddNumberToObject(rj, "robots", n);
    fprintf(stderr, "throughput: %d robot%s at 1 kHz...\n", n, n == 1 ? "" : "s");

    /* a controller's rate on every robot */
    struct kn_step s;
    kn_gen_step(r.gen, &r.d, 1000.0 * n, o->quick ? 0.5 : 10.0, &s);
    long rss = kn_bench_rss_kib(r.d.proc.pid, "VmRSS:");
    long hwm = kn_bench_rss_kib(r.d.proc.pid, "VmHWM:");
    cJSON *at = kn_gen_step_json(&s);
    cJSON_AddItemToObject(rj, "at_1khz_each", at);
    cJSON_AddNumberToObject(rj, "vmrss_kib", (double)rss);
    cJSON_AddNumberToObject(rj, "vmhwm_kib", (double)hwm);
    /* VmRSS counts the shared libraries' pages; RssAnon is kenaf-simd's own */
    cJSON_AddNumberToObject(rj, "rss_anon_kib", (double)kn_bench_rss_kib(r.d.proc.pid, "RssAnon:"));
    cJSON_AddNumberToObject(rj, "rss_file_kib", (double)kn_bench_rss_kib(r.d.proc.pid, "RssFile:"));
    snprintf(item, sizeof item, "%d robot%s x 1 kHz", n, n == 1 ? "" : "s");
    kn_bench_row_target(targets, item, "datagrams lost", loss_of(&s), NULL, NAN, KN_BENCH_LE, 0,
                        "");
    kn_bench_row(item, "kenaf-simd CPU %", s.cpu_util * 100, NULL, NAN);
    kn_bench_row(item, "waited for its CPU %", s.wait_util * 100, NULL, NAN);
    kn_bench_row(item, "CPU us per datagram", s.cpu_us_per_dgram, NULL, NAN);
    kn_bench_row_target(targets, item, "VmRSS MiB", rss / 1024.0, NULL, NAN, KN_BENCH_LE,
                        n == 1 ? 4 : 16, "MiB");
    kn_bench_row(item, "of which RssAnon MiB", kn_bench_rss_kib(r.d.proc.pid, "RssAnon:") / 1024.0,
                 NULL, NAN);
    kn_bench_row(item, "drain after the window ms", s.drain_ms, NULL, NAN);
    if (n > 1 && o->socat && versus_socat(o, &r, n, rj, targets) < 0) {
        rc = -1;
        goto out;
    }
    if (s.relayed == 0 || s.acks_seen == 0 || !s.stats_ok) {
        fprintf(stderr,
                "kenaf-bench: throughput: %d robots at 1 kHz: %llu relayed, %llu ACKs "
                "read, stats %s\n",
                n, (unsigned long long)s.relayed, (unsigned long long)s.acks_seen,
                s.stats_ok ? "ok" : "unreadable");
        rc = -1;
        goto out;
    }

    /* the ramp */
    const double *rates = o->quick ? ramp_quick : ramp_full;
    size_t nrates = o->quick ? sizeof ramp_quick / sizeof ramp_quick[0]
                             : sizeof ramp_full / sizeof ramp_full[0];
    cJSON *steps = cJSON_AddArrayToObject(rj, "ramp");
    double best = 0, fail = NAN, best_util = NAN, best_cost = NAN, first_cost = NAN;
    struct kn_step first_loss = { .cpu_util = NAN, .wait_util = NAN };
    bool gen_limited = false;
    for (size_t i = 0; i < nrates; i++) {
        fprintf(stderr, "throughput: %d robots, %.0f datagrams/s...\n", n, rates[i]);
        kn_gen_step(r.gen, &r.d, rates[i], o->step_s, &s);
        cJSON_AddItemToArray(steps, kn_gen_step_json(&s));
        if (i == 0)
            first_cost = s.cpu_us_per_dgram;
        if (!s.sustained && !s.generator_limited) {
            /* the machine is shared: a step fails only if it fails twice */
            kn_gen_step(r.gen, &r.d, rates[i], o->step_s, &s);
            cJSON_AddItemToArray(steps, kn_gen_step_json(&s));
        }
        if (s.generator_limited) {
            gen_limited = true;
            break;
        }
        if (!s.sustained) {
            fail = rates[i];
            first_loss = s;
            break;
        }
        best = rates[i];
        best_util = s.cpu_util;
        best_cost = s.cpu_us_per_dgram;
    }
    /* between the last good and the first lossy step */
    for (int k = 0; !o->quick && isfinite(fail) && best > 0 && k < 3; k++) {
        double mid = round((best + fail) / 2 / 1000) * 1000;
        if (mid <= best || mid >= fail)
            break;
        fprintf(stderr, "throughput: %d robots, %.0f datagrams/s...\n", n, mid);
        kn_gen_step(r.gen, &r.d, mid, o->step_s, &s);
        cJSON_AddItemToArray(steps, kn_gen_step_json(&s));
        if (s.generator_limited) {
            gen_limited = true;
            break;
        }
        if (s.sustained) {
            best = mid;
            best_util = s.cpu_util;
            best_cost = s.cpu_us_per_dgram;
        } else {
            fail = mid;
        }
    }
    cJSON_AddNumberToObject(rj, "max_sustained_rate", best);
    if (isfinite(fail))
        cJSON_AddNumberToObject(rj, "first_lossy_rate", fail);
    else
        cJSON_AddNullToObject(rj, "first_lossy_rate");
    cJSON_AddBoolToObject(rj, "generator_limited", gen_limited);
    snprintf(item, sizeof item, "%d robot%s, ramp", n, n == 1 ? "" : "s");
    kn_bench_row_target(targets, item, "max sustained dgram/s", best, NULL, NAN, KN_BENCH_GE, 50000,
                        "");
    kn_bench_row(item, "CPU % at that rate", best_util * 100, NULL, NAN);
    kn_bench_row(item, "CPU us/dgram at that rate", best_cost, NULL, NAN);
    /* on a shared machine the first loss often comes when kenaf-simd gets
     * only part of its core: how much it ran and how much it waited */
    kn_bench_row(item, "at first loss: CPU %", first_loss.cpu_util * 100, NULL, NAN);
    kn_bench_row(item, "at first loss: waited %", first_loss.wait_util * 100, NULL, NAN);
    /* what one core would carry if kenaf-simd had it to itself (from the
     * first step when even that lost) */
    if (!(best_cost > 0))
        best_cost = first_cost;
    kn_bench_row(item, "one-core capacity dgram/s", best_cost > 0 ? 1e6 / best_cost : NAN, NULL,
                 NAN);
    cJSON_AddNumberToObject(rj, "cpu_us_per_datagram_for_capacity", best_cost);
    cJSON_AddNumberToObject(rj, "one_core_capacity_estimate",
                            best_cost > 0 ? round(1e6 / best_cost) : NAN);
    if (gen_limited) {
        *limited = true;
        kn_bench_note(
            "  %d robots: the generator could not send faster; the daemon had not lost any", n);
    }
    cJSON_AddNumberToObject(rj, "vmhwm_kib_after_ramp",
                            (double)kn_bench_rss_kib(r.d.proc.pid, "VmHWM:"));
out:
    rig_stop(&r);
    return rc;
}

int kn_bench_throughput(const struct kn_bench_opts *o, cJSON *root)
{
    cJSON *j = cJSON_AddObjectToObject(root, "throughput");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddStringToObject(j, "datagram", "CRAWLER with ACK_REQ, unique speeds");
    cJSON_AddStringToObject(j, "sink_protocol", kn_sink_proto_name(o->proto));
    cJSON_AddStringToObject(j, "sustained_means",
                            "every datagram received, ACKed (kenaf-simd counters) and relayed "
                            "(sink), nothing coalesced, all of it within grace_ms of the "
                            "step's end");
    cJSON_AddNumberToObject(j, "grace_ms", KN_GEN_GRACE_MS);
    cJSON_AddNumberToObject(j, "step_s", o->step_s);
    cJSON_AddNumberToObject(j, "daemon_cpu", daemon_cpu(o));
    bool limited = false;
    pin_bench(o, true);
    int rc = scale_run(o, 1, j, targets, &limited);
    if (rc == 0 && o->robots > 1)
        rc = scale_run(o, o->robots, j, targets, &limited);
    pin_bench(o, false);
    return rc;
}

int kn_bench_rss_long(const struct kn_bench_opts *o, cJSON *root)
{
    char err[2048];
    struct rig r;
    int n = o->robots;
    if (rig_start(&r, o, "rsslong", n, daemon_cpu(o), err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-bench: rss-long: %s\n", err);
        return -1;
    }
    pin_bench(o, true);
    fprintf(stderr, "rss-long: %d robots at 1 kHz for %.0f s...\n", n, o->rss_long_s);
    cJSON *j = cJSON_AddObjectToObject(root, "rss_long");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddNumberToObject(j, "robots", n);
    cJSON_AddNumberToObject(j, "rate_per_robot_hz", 1000);
    cJSON_AddNumberToObject(j, "duration_s", o->rss_long_s);
    cJSON *samples = cJSON_AddArrayToObject(j, "vmrss_kib");
    double interval = o->rss_long_s >= 60 ? 1.0 : 0.25;
    int nint = (int)ceil(o->rss_long_s / interval);
    long first = -1, start = -1, last = -1, max = -1;
    uint64_t sent = 0, relayed = 0;
    double lost = 0, received = 0, acked = 0, coalesced = 0;
    bool stats_ok = true;
    /* the allocator settles in the first tenth; "start" is taken after it */
    int start_at = nint / 10;
    for (int i = 0; i < nint; i++) {
        struct kn_step s;
        kn_gen_step(r.gen, &r.d, 1000.0 * n, interval, &s);
        sent += s.sent;
        relayed += s.relayed;
        lost += loss_of(&s);
        received += s.in;
        acked += s.acked;
        coalesced += s.coalesced;
        stats_ok = stats_ok && s.stats_ok;
        long v = kn_bench_rss_kib(r.d.proc.pid, "VmRSS:");
        cJSON_AddItemToArray(samples, cJSON_CreateNumber((double)v));
        if (first < 0)
            first = v;
        if (i == start_at)
            start = v;
        if (v > max)
            max = v;
        last = v;
        if (o->verbose && i % 60 == 0)
            fprintf(stderr, "rss-long: %d s, VmRSS %ld KiB\n", (int)(i * interval), v);
    }
    cJSON_AddNumberToObject(j, "sample_interval_s", interval);
    cJSON_AddNumberToObject(j, "first_kib", (double)first);
    cJSON_AddNumberToObject(j, "start_kib", (double)start);
    cJSON_AddNumberToObject(j, "end_kib", (double)last);
    cJSON_AddNumberToObject(j, "max_kib", (double)max);
    cJSON_AddNumberToObject(j, "growth_kib", (double)(last - start));
    cJSON_AddNumberToObject(j, "sent", (double)sent);
    cJSON_AddNumberToObject(j, "daemon_received", received);
    cJSON_AddNumberToObject(j, "daemon_acked", acked);
    cJSON_AddNumberToObject(j, "relayed", (double)relayed);
    cJSON_AddNumberToObject(j, "daemon_coalesced", coalesced);
    cJSON_AddNumberToObject(j, "lost", lost);
    char item[64];
    snprintf(item, sizeof item, "%d robots x 1 kHz, %.0f s", n, o->rss_long_s);
    kn_bench_row(item, "VmRSS start KiB", (double)start, NULL, NAN);
    kn_bench_row(item, "VmRSS end KiB", (double)last, NULL, NAN);
    kn_bench_row(item, "VmRSS max KiB", (double)max, NULL, NAN);
    /* flat: no more than 256 KiB of growth after the first tenth */
    kn_bench_row_target(targets, item, "growth KiB", (double)(last - start), NULL, NAN, KN_BENCH_LE,
                        256, "KiB");
    kn_bench_row_target(targets, item, "datagrams lost", lost, NULL, NAN, KN_BENCH_LE, 0, "");
    pin_bench(o, false);
    rig_stop(&r);
    if (relayed == 0 || !stats_ok || first < 0) {
        fprintf(stderr, "kenaf-bench: rss-long: %llu relayed, stats %s, VmRSS %s\n",
                (unsigned long long)relayed, stats_ok ? "ok" : "unreadable",
                first < 0 ? "unreadable" : "ok");
        return -1;
    }
    return 0;
}
