/* The load generator of the throughput runs: CRAWLER datagrams (with
 * ACK_REQ, or without as libkenaf.so.1 sends them), each with a unique id, to every robot of a kenaf-simd in turn, paced on
 * absolute deadlines and sent in batches (sendmmsg) so the generator costs
 * little next to what it measures. Loss is read from kenaf-simd's own
 * counters (datagrams in, ACKs out) and from the sink (commands relayed),
 * so a datagram the generator itself fails to read back is not blamed on
 * the daemon. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "krp.h"

#define BATCH 256
#define TICK_NS 500000u /* sending granularity */
#define DGRAM_LEN (KN_KRP_HDR_LEN + KN_KRP_LEN_CRAWLER)

struct kn_gen {
    int fd, n;
    struct sockaddr_in dst[KN_BENCH_MAX_ROBOTS];
    uint32_t seq[KN_BENCH_MAX_ROBOTS], next_id[KN_BENCH_MAX_ROBOTS];
    int rr;
    bool no_ack; /* CRAWLER without ACK_REQ */
    uint64_t sent;
    atomic_uint_fast64_t *relayed;
    pthread_t rx;
    atomic_bool stop;
    atomic_uint_fast64_t acks, errors, other;
    uint8_t buf[BATCH][DGRAM_LEN];
    struct mmsghdr msg[BATCH];
    struct iovec iov[BATCH];
};

void kn_sink_count(void *ctx, int robot, uint32_t id, uint64_t t_ns)
{
    (void)robot;
    (void)id;
    (void)t_ns;
    atomic_fetch_add_explicit((atomic_uint_fast64_t *)ctx, 1, memory_order_relaxed);
}

static void *rx_run(void *arg)
{
    struct kn_gen *g = arg;
    enum { N = 64 };
    uint8_t bufs[N][64];
    struct mmsghdr m[N];
    struct iovec iov[N];
    for (int i = 0; i < N; i++) {
        iov[i].iov_base = bufs[i];
        iov[i].iov_len = sizeof bufs[i];
        memset(&m[i], 0, sizeof m[i]);
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    while (!g->stop) {
        int k = recvmmsg(g->fd, m, N, MSG_WAITFORONE, NULL);
        if (k < 0)
            continue; /* the receive timeout: look at stop */
        for (int i = 0; i < k; i++) {
            uint8_t type = m[i].msg_len >= 4 ? bufs[i][3] : 0;
            if (type == KN_KRP_ACK)
                g->acks++;
            else if (type == KN_KRP_ERROR)
                g->errors++;
            else
                g->other++;
        }
    }
    return NULL;
}

struct kn_gen *kn_gen_new(const struct kn_simd *d, atomic_uint_fast64_t *relayed, char *err,
                          size_t errlen)
{
    return kn_gen_new_ports(d->port, d->nrobots, relayed, err, errlen);
}

struct kn_gen *kn_gen_new_ports(const int *ports, int n, atomic_uint_fast64_t *relayed, char *err,
                                size_t errlen)
{
    if (n < 1 || n > KN_BENCH_MAX_ROBOTS) {
        snprintf(err, errlen, "1..%d targets", KN_BENCH_MAX_ROBOTS);
        return NULL;
    }
    struct kn_gen *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->n = n;
    g->relayed = relayed;
    for (int i = 0; i < g->n; i++) {
        g->dst[i].sin_family = AF_INET;
        g->dst[i].sin_port = htons((uint16_t)ports[i]);
        g->dst[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    g->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (g->fd < 0 || bind(g->fd, (struct sockaddr *)&a, sizeof a) < 0) {
        snprintf(err, errlen, "UDP socket: %s", strerror(errno));
        goto fail;
    }
    /* ACKs come back in bursts; a big buffer keeps the generator's own
     * drops out of the way (forced when allowed, else up to rmem_max) */
    int big = 8 << 20;
    if (setsockopt(g->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0)
        setsockopt(g->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct timeval tv = { .tv_usec = 50000 };
    setsockopt(g->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (pthread_create(&g->rx, NULL, rx_run, g) != 0) {
        snprintf(err, errlen, "cannot start a thread");
        goto fail;
    }
    return g;
fail:
    if (g->fd >= 0)
        close(g->fd);
    free(g);
    return NULL;
}

void kn_gen_ack(struct kn_gen *g, bool ack_req)
{
    g->no_ack = !ack_req;
}

void kn_gen_free(struct kn_gen *g)
{
    if (!g)
        return;
    g->stop = true;
    pthread_join(g->rx, NULL);
    close(g->fd);
    free(g);
}

/* Sends count datagrams, round-robin over the robots. */
static void send_some(struct kn_gen *g, uint64_t count)
{
    while (count > 0) {
        int k = count > BATCH ? BATCH : (int)count;
        for (int i = 0; i < k; i++) {
            int r = g->rr;
            g->rr = (g->rr + 1) % g->n;
            struct kn_krp_msg m;
            kn_krp_init(&m, KN_KRP_CRAWLER, ++g->seq[r], g->no_ack ? 0 : KN_KRP_F_ACK_REQ);
            kn_bench_id_encode(g->next_id[r], &m.u.crawler.left_mm_s, &m.u.crawler.right_mm_s);
            g->next_id[r] = (g->next_id[r] + 1) % KN_BENCH_ID_MAX;
            kn_krp_encode(&m, g->buf[i], DGRAM_LEN);
            g->iov[i].iov_base = g->buf[i];
            g->iov[i].iov_len = DGRAM_LEN;
            memset(&g->msg[i], 0, sizeof g->msg[i]);
            g->msg[i].msg_hdr.msg_name = &g->dst[r];
            g->msg[i].msg_hdr.msg_namelen = sizeof g->dst[r];
            g->msg[i].msg_hdr.msg_iov = &g->iov[i];
            g->msg[i].msg_hdr.msg_iovlen = 1;
        }
        int done = 0;
        while (done < k) {
            int s = sendmmsg(g->fd, g->msg + done, (unsigned)(k - done), 0);
            if (s < 0 && errno == EINTR)
                continue;
            if (s <= 0)
                break; /* not sent: not counted, the step reports the rate it got */
            done += s;
        }
        g->sent += (uint64_t)done;
        count -= (uint64_t)k;
        if (done < k) {
            /* keep ids and seqs consecutive with what was really sent */
            for (int i = k - 1; i >= done; i--) {
                g->rr = (g->rr + g->n - 1) % g->n;
                g->seq[g->rr]--;
                g->next_id[g->rr] = (g->next_id[g->rr] + KN_BENCH_ID_MAX - 1) % KN_BENCH_ID_MAX;
            }
            return;
        }
    }
}

struct counters {
    double in, acked, coalesced;
    bool ok;
};

static struct counters read_counters(struct kn_simd *d)
{
    struct counters c = { NAN, NAN, NAN, false };
    cJSON *s = kn_simd_stats(d);
    if (!s)
        return c;
    c.in = kn_bench_stats_sum(s, "datagrams_in.CRAWLER");
    c.acked = kn_bench_stats_sum(s, "datagrams_out.ACK");
    c.coalesced = kn_bench_stats_sum(s, "backend.commands.coalesced");
    c.ok = isfinite(c.in) && isfinite(c.acked) && isfinite(c.coalesced);
    cJSON_Delete(s);
    return c;
}

static double cpu_sum(const pid_t *pids, int npids)
{
    double t = 0;
    for (int i = 0; i < npids; i++) {
        double c = kn_bench_cpu_s(pids[i]);
        if (c < 0)
            return -1;
        t += c;
    }
    return t;
}

/* Everything sent in the step relayed, and answered where a daemon answers. */
static bool all_in(const struct kn_gen *g, const struct kn_simd *d, uint64_t acks0, uint64_t rel0,
                   uint64_t sent)
{
    return (!d || g->no_ack || g->acks - acks0 >= sent) && *g->relayed - rel0 >= sent;
}

void kn_gen_step(struct kn_gen *g, struct kn_simd *d, double rate, double seconds,
                 struct kn_step *out)
{
    pid_t pid = d->proc.pid;
    kn_gen_step_pids(g, d, &pid, 1, rate, seconds, out);
}

void kn_gen_step_pids(struct kn_gen *g, struct kn_simd *d, const pid_t *pids, int npids,
                      double rate, double seconds, struct kn_step *out)
{
    memset(out, 0, sizeof *out);
    out->rate_target = rate;
    struct counters c0 = d ? read_counters(d) : (struct counters){ 0, 0, 0, true };
    uint64_t sent0 = g->sent, acks0 = g->acks, rel0 = *g->relayed;
    double cpu0 = cpu_sum(pids, npids), wait0 = d ? kn_bench_wait_s(d->proc.pid) : -1;
    uint64_t t0 = kn_bench_now_ns();
    uint64_t dur = (uint64_t)(seconds * 1e9);
    uint64_t now = t0;
    for (uint64_t tick = t0; now < t0 + dur; tick += TICK_NS) {
        kn_bench_sleep_until(tick);
        now = kn_bench_now_ns();
        uint64_t el = now - t0 < dur ? now - t0 : dur;
        uint64_t due = (uint64_t)((double)el * rate / 1e9);
        if (due > g->sent - sent0)
            send_some(g, due - (g->sent - sent0));
        now = kn_bench_now_ns();
    }
    uint64_t t1 = kn_bench_now_ns();
    double cpu_mid = cpu_sum(pids, npids), wait_mid = d ? kn_bench_wait_s(d->proc.pid) : -1;
    out->sent = g->sent - sent0;
    out->seconds = (double)(t1 - t0) / 1e9;
    out->rate_sent = (double)out->sent / out->seconds;
    out->generator_limited = (double)out->sent < 0.97 * rate * seconds;

    /* settle: everything answered and relayed, or no progress for 300 ms;
     * the moment it is all in tells whether the relay kept the rate or
     * only its socket buffers did */
    uint64_t last_change = kn_bench_now_ns(), deadline = last_change + 5000000000ull;
    uint64_t la = g->acks, lr = *g->relayed;
    out->drain_ms = NAN;
    while (kn_bench_now_ns() < deadline) {
        if (all_in(g, d, acks0, rel0, out->sent)) {
            out->drain_ms = (double)(kn_bench_now_ns() - t1) / 1e6;
            break;
        }
        kn_bench_sleep_ms(1);
        if (g->acks != la || *g->relayed != lr) {
            la = g->acks;
            lr = *g->relayed;
            last_change = kn_bench_now_ns();
        } else if (kn_bench_now_ns() - last_change > 300000000ull) {
            break;
        }
    }
    double cpu1 = cpu_sum(pids, npids);
    struct counters c1 = d ? read_counters(d) : (struct counters){ 0, 0, 0, true };
    out->acks_seen = g->acks - acks0;
    out->relayed = *g->relayed - rel0;
    out->stats_ok = c0.ok && c1.ok;
    /* without a daemon's counters, what the relay passed on is what it got */
    out->in = d ? c1.in - c0.in : (double)out->relayed;
    out->acked = d ? c1.acked - c0.acked : (double)out->sent;
    /* without ACK_REQ nothing is to be answered: an ACK would be a fault */
    double acks_due = g->no_ack ? 0 : (double)out->sent;
    out->coalesced = c1.coalesced - c0.coalesced;
    out->cpu_util = cpu0 >= 0 && cpu_mid >= 0 ? (cpu_mid - cpu0) / out->seconds : NAN;
    out->wait_util = wait0 >= 0 && wait_mid >= 0 ? (wait_mid - wait0) / out->seconds : NAN;
    /* per datagram the relay really handled: a lost one cost it nothing */
    double handled = out->stats_ok && out->in > 0 ? out->in : (double)out->sent;
    out->cpu_us_per_dgram =
        cpu0 >= 0 && cpu1 >= 0 && handled > 0 ? (cpu1 - cpu0) / handled * 1e6 : NAN;
    out->zero_loss = out->stats_ok && out->sent > 0 && out->in == (double)out->sent &&
                     (d ? out->acked == acks_due : true) && out->relayed == out->sent;
    out->sustained = out->zero_loss && out->drain_ms <= KN_GEN_GRACE_MS;
}

cJSON *kn_gen_step_json(const struct kn_step *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rate_target", s->rate_target);
    cJSON_AddNumberToObject(o, "rate_sent", round(s->rate_sent));
    cJSON_AddNumberToObject(o, "seconds", round(s->seconds * 1000) / 1000);
    cJSON_AddNumberToObject(o, "sent", (double)s->sent);
    cJSON_AddNumberToObject(o, "daemon_received", s->in);
    cJSON_AddNumberToObject(o, "daemon_acked", s->acked);
    cJSON_AddNumberToObject(o, "relayed", (double)s->relayed);
    cJSON_AddNumberToObject(o, "daemon_coalesced", s->coalesced);
    cJSON_AddNumberToObject(o, "acks_read_by_generator", (double)s->acks_seen);
    if (isfinite(s->cpu_util))
        cJSON_AddNumberToObject(o, "daemon_cpu_util", round(s->cpu_util * 1000) / 1000);
    else
        cJSON_AddNullToObject(o, "daemon_cpu_util");
    if (isfinite(s->wait_util))
        cJSON_AddNumberToObject(o, "daemon_runqueue_wait", round(s->wait_util * 1000) / 1000);
    else
        cJSON_AddNullToObject(o, "daemon_runqueue_wait");
    if (isfinite(s->cpu_us_per_dgram))
        cJSON_AddNumberToObject(o, "daemon_cpu_us_per_datagram",
                                round(s->cpu_us_per_dgram * 1000) / 1000);
    else
        cJSON_AddNullToObject(o, "daemon_cpu_us_per_datagram");
    if (isfinite(s->drain_ms))
        cJSON_AddNumberToObject(o, "drain_ms", round(s->drain_ms * 10) / 10);
    else
        cJSON_AddNullToObject(o, "drain_ms");
    cJSON_AddBoolToObject(o, "zero_loss", s->zero_loss);
    cJSON_AddBoolToObject(o, "sustained", s->sustained);
    cJSON_AddBoolToObject(o, "generator_limited", s->generator_limited);
    return o;
}
