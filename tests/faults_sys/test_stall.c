/* A simulator that stalls: it accepts the connection, completes the
 * handshake, then stops reading its socket (stall_sim) while a controller
 * sends CRAWLER at 1 kHz for several seconds. The daemon's queues must
 * stay bounded (its RSS and the stats' queue figures), the stall must show
 * in the stats, STATUS_REQ must still be answered at once (nothing blocks
 * the loop), and once the simulator reads again, the first command it
 * gets after the backlog already in the socket buffers must be the latest
 * set-point, not a stale one. Every CRAWLER carries a distinct speed pair,
 * so the simulator's log tells which one arrived.
 *
 * Two simulators: one hung as a whole ("hung": it writes nothing either),
 * and one whose sensor side keeps streaming ("streaming"). Against the
 * second the kernel keeps growing the simulator's receive buffer (Linux
 * autotuning: nothing blocks the daemon's writes), so the commands pile up
 * there rather than in the daemon; the test measures how many. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "faults.h"

#define STALL_S 6         /* CRAWLER at 1 kHz this long at least, */
#define COALESCE_S 3      /* and this long after kenaf-simd started to coalesce */
#define STALL_MAX_S 40    /* however large the kernel's socket buffers */
#define CMD_LINE_MAX 512  /* the stand-in backend's command buffer */
#define TURN_DATAGRAMS 40 /* libuv's reads from one UDP socket per loop turn */

static struct h_daemon d;
static struct h_standin sim;

/* Command i <-> a distinct speed pair (mm/s, within the 800 mm/s limit). */
static void speeds(unsigned i, int32_t *l, int32_t *r)
{
    *l = 1 + (int32_t)(i % 700);
    *r = 1 + (int32_t)((i / 700) % 700);
}

static long index_of(double l_m_s, double r_m_s)
{
    long l = lround(l_m_s * 1000), r = lround(r_m_s * 1000);
    if (l < 1 || l > 700 || r < 1 || r > 700)
        return -1;
    return (l - 1) + (r - 1) * 700;
}

struct sender {
    struct h_udp u; /* the driver: opened before the thread, kept after it */
    atomic_bool stop;
    atomic_uint sent; /* commands sent; the last one is sent - 1 */
};
static struct sender snd;

static void *sender_main(void *arg)
{
    struct sender *s = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&s->stop)) {
        unsigned i = atomic_load(&s->sent);
        int32_t l, r;
        speeds(i, &l, &r);
        h_crawler(&s->u, 0, 0, l, r);
        atomic_store(&s->sent, i + 1);
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const cJSON *get(const cJSON *j, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && j; t = strtok_r(NULL, ".", &save))
        j = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, atoi(t))
                             : cJSON_GetObjectItemCaseSensitive(j, t);
    return j;
}

static double num(const cJSON *j, const char *path)
{
    const cJSON *v = get(j, path);
    ck_assert_msg(v && (cJSON_IsNumber(v) || cJSON_IsBool(v)), "stats have no %s", path);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : v->valuedouble;
}

/* One line the simulator received from client 1, and the bytes it and
 * everything before it took on the wire (lines end in "\n"). */
struct rx {
    char text[CMD_LINE_MAX];
    uint64_t end_byte;
};

static int read_rx(const char *log, struct rx *out, int max)
{
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    static char line[20000];
    int n = 0;
    uint64_t bytes = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long long t;
        int client, off = 0;
        if (sscanf(line, "%llu %d %n", &t, &client, &off) < 2 || off == 0 || client != 1)
            continue;
        char *text = line + off;
        text[strcspn(text, "\n")] = '\0';
        if (text[0] == '#')
            continue;
        bytes += strlen(text) + 1;
        snprintf(out[n].text, sizeof out[n].text, "%.*s", (int)sizeof out[n].text - 1, text);
        out[n].end_byte = bytes;
        n++;
    }
    fclose(f);
    return n;
}

static bool cmd_belts(const char *text, double *l, double *r)
{
    return sscanf(text, "{\"type\":\"cmd\",\"belts\":[%lf,%lf]", l, r) == 2;
}

static void stall(bool stream)
{
    setenv("KN_STANDIN", getenv("KN_STALL_SIM"), 1);
    const char *const extra[] = { "--stream", NULL };
    h_standin_start(&sim, 0, "stall", stream ? extra : NULL);
    char robots[512];
    /* a simulator that sends nothing for stale_ms is reported down
     * (robustness.md): the longest setting keeps the hung one up, so this
     * test sees the write queue alone */
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"watchdog_ms\":10000,"
             "\"backend\":{\"type\":\"standin\",\"address\":\"127.0.0.1:%d\","
             "\"stale_ms\":60000}}]",
             sim.port);
    /* the watchdog (longest setting) must not add its belts 0 behind the
     * latest set-point while the test reads the backlog after the resume,
     * which takes longer than 500 ms on a loaded machine */
    h_daemon_start(&d, robots);
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    const char *name = stream ? "stall-streaming" : "stall-hung";
    char fig[64];

    /* handshake done: the simulator no longer reads */
    ck_assert(h_log_wait(sim.log, "#paused", 1, H_LONG_MS));
    ck_assert_int_eq(h_log_count(sim.log, "#paused"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.stall.queued_bytes"), 0);
    long rss0 = h_rss_kb(d.proc.pid);
    uint64_t t_pause = h_now_us();
    h_udp_open(&snd.u, d.port[0]);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, sender_main, &snd), 0);

    /* while stalled: STATUS_REQ round trips, queue figures, memory */
    static double rtt[20000];
    unsigned nrtt = 0;
    double q_max = 0;
    long rss_max = 0;
    bool seen_pending = false;
    uint64_t t_pending = 0;
    /* the socket buffers take a kernel-dependent while to fill (about 2 s
     * here): keep on until the daemon has coalesced for COALESCE_S */
    for (;;) {
        uint64_t now = h_now_us();
        if (now - t_pause >= STALL_MAX_S * 1000000ull)
            break;
        if (now - t_pause >= STALL_S * 1000000ull &&
            (stream || (seen_pending && now - t_pending >= COALESCE_S * 1000000ull)))
            break;
        uint64_t t0 = h_now_us();
        struct kn_krp_status s = h_status(&u);
        rtt[nrtt++] = f_ms(t0, h_now_us());
        ck_assert(s.flags & KN_KRP_ST_BACKEND_UP);
        if (nrtt % 5 == 0) {
            cJSON *js = h_stats(&d);
            double q = num(js, "robots.0.backend.stall.queued_bytes");
            if (q > q_max)
                q_max = q;
            if (!seen_pending && num(js, "robots.0.backend.commands.pending") != 0) {
                seen_pending = true;
                t_pending = h_now_us();
            }
            cJSON_Delete(js);
            long rss = h_rss_kb(d.proc.pid);
            if (rss > rss_max)
                rss_max = rss;
        }
        h_sleep_ms(20);
    }
    atomic_store(&snd.stop, true);
    pthread_join(th, NULL);
    uint64_t t_end = h_now_us();
    /* the latest set-point: one more, acknowledged, so it is known to
     * have been applied even if the kernel dropped some of the stream (a
     * daemon slowed down by valgrind cannot always keep up with 1 kHz) */
    unsigned last = atomic_load(&snd.sent);
    int32_t ll, lr;
    speeds(last, &ll, &lr);
    for (;;) {
        /* from the stream's own socket: it is the robot's driver */
        uint32_t seq = h_crawler(&snd.u, 0, KN_KRP_F_ACK_REQ, ll, lr);
        struct kn_krp_msg m;
        if (h_udp_recv_answer(&snd.u, &m, 1000)) {
            ck_assert_msg(m.h.type == KN_KRP_ACK && m.u.ack.acked_seq == seq, "no ACK: %s",
                          kn_krp_type_name(m.h.type));
            break;
        }
        ck_assert_msg(h_now_us() - t_pause < (STALL_MAX_S + 10) * 1000000ull,
                      "latest CRAWLER not ACKed");
    }
    unsigned total = last + 1;
    long rss1 = h_rss_kb(d.proc.pid);
    cJSON *js = h_stats(&d);
    double bytes_out = num(js, "robots.0.backend.bytes_out");
    double q_end = num(js, "robots.0.backend.stall.queued_bytes");
    bool stalled = num(js, "robots.0.backend.stall.stalled") != 0;
    double stalled_ms = num(js, "robots.0.backend.stall.stalled_ms");
    double coalesced = num(js, "robots.0.backend.commands.coalesced");
    double in_crawler = num(js, "robots.0.datagrams_in.CRAWLER");
    cJSON_Delete(js);
    /* every one of them read, unless the kernel dropped some for a slowed
     * down daemon: then they are missing, never more */
    if (!h_wrapped())
        ck_assert_double_eq(in_crawler, total);
    ck_assert_double_le(in_crawler, total + 1);

    /* resume: the backlog, then the latest set-point */
    uint64_t t_resume = h_now_us();
    h_signal(&sim.proc, SIGUSR2);
    struct h_cmd latest;
    ck_assert_msg(h_wait_belts(sim.log, 0, ll / 1000.0, lr / 1000.0, H_LONG_MS, &latest) >= 0,
                  "the latest set-point never reached the simulator");
    h_sleep_ms(200);
    static struct rx rx[40000];
    int n = read_rx(sim.log, rx, 40000);
    ck_assert_int_gt(n, 0);
    /* everything received is in order; nothing follows the latest */
    long prev = -1;
    int ncmd = 0, first_after = -1;
    double l, r;
    for (int i = 0; i < n; i++) {
        if (!cmd_belts(rx[i].text, &l, &r))
            continue;
        long k = index_of(l, r);
        ck_assert_msg(k > prev, "command #%ld after #%ld: %s (watchdog trips %.0f)", k, prev,
                      rx[i].text, h_stat(&d, "robots.0.rules.watchdog_trips"));
        prev = k;
        ncmd++;
        if (first_after < 0 && rx[i].end_byte > bytes_out)
            first_after = i;
    }
    ck_assert_msg(prev == (long)last, "the last command is #%ld, not the latest #%u", prev, last);
    qsort(rtt, nrtt, sizeof rtt[0], cmp_double);
    snprintf(fig, sizeof fig, "%s-status", name);
    f_figure(fig,
             "STATUS_REQ during the stall: %u round trips, p50 %.2f ms, p99 %.2f ms, max "
             "%.2f ms",
             nrtt, rtt[nrtt / 2], rtt[nrtt * 99 / 100], rtt[nrtt - 1]);
    snprintf(fig, sizeof fig, "%s-rss", name);
    f_figure(fig, "kenaf-simd VmRSS %ld KiB before the stall, peak %ld, %ld KiB at its end", rss0,
             rss_max, rss1);
    /* bounded: the daemon queues one loop turn's commands at most (the
     * turn's one write meets the full socket; later turns coalesce). A
     * turn reads at most TURN_DATAGRAMS from the controller's socket: one
     * command natively, several when the daemon runs slowly (valgrind) */
    ck_assert_msg(q_max <= TURN_DATAGRAMS * CMD_LINE_MAX && q_end <= TURN_DATAGRAMS * CMD_LINE_MAX,
                  "write queue reached %.0f bytes", q_max > q_end ? q_max : q_end);
    /* flat. ASan keeps freed memory in quarantine for a while; under a
     * wrapper (valgrind) VmRSS is mostly the tool's own, which checks the
     * heap itself. */
    long allow = getenv("KN_SANITIZED") ? 16384 : 1024;
    ck_assert_msg(h_wrapped() || (rss1 - rss0 <= allow && rss_max - rss0 <= allow),
                  "VmRSS grew %ld KiB (peak +%ld)", rss1 - rss0, rss_max - rss0);
    if (stream) {
        /* the kernel took every command: nothing for the daemon to drop */
        f_figure(
            name,
            "simulator not reading for %.1f s under CRAWLER at 1 kHz while it streams: "
            "the kernel accepted all %.0f commands (%.0f bytes, nothing coalesced: %.0f); after "
            "the resume the latest arrived %.0f ms later, behind %d stale ones",
            f_ms(t_pause, t_end) / 1000, in_crawler, bytes_out, coalesced,
            f_ms(t_resume, latest.t_us), ncmd - 1);
        h_udp_close(&u);
        h_udp_close(&snd.u);
        return;
    }
    /* hung: the socket buffers filled, then the latest set-point waited
     * alone, and it is what came right after the backlog */
    ck_assert_msg(stalled && seen_pending,
                  "no stall in the stats (stalled %d, pending seen %d, "
                  "queued %.0f bytes, %.0f coalesced, %.0f bytes out)",
                  stalled, seen_pending, q_end, coalesced, bytes_out);
    ck_assert_msg(first_after >= 0, "nothing beyond the %.0f bytes queued before the resume",
                  bytes_out);
    ck_assert_msg(cmd_belts(rx[first_after].text, &l, &r), "not a command: %s",
                  rx[first_after].text);
    long got = index_of(l, r);
    ck_assert_msg(got == (long)last,
                  "first command after the backlog is #%ld, the latest was #%u "
                  "(%s)",
                  got, last, rx[first_after].text);
    f_figure(
        name,
        "simulator hung %.1f s under CRAWLER at 1 kHz (%.0f commands): %d commands (%.0f "
        "bytes) filled the socket buffers, then %.0f were coalesced in kenaf-simd, write queue "
        "at most %.0f bytes; after the resume the latest (#%u) came right after the backlog, "
        "%.0f ms later; stall reported as %.0f ms",
        f_ms(t_pause, t_end) / 1000, in_crawler, ncmd - 1, bytes_out, coalesced, q_max, last,
        f_ms(t_resume, latest.t_us), stalled_ms);
    /* COALESCE_S at 1 kHz: all but the one waiting were coalesced */
    ck_assert_msg(coalesced >= COALESCE_S * 1000 / 2, "only %.0f of %.0f commands coalesced",
                  coalesced, in_crawler);
    ck_assert_msg(stalled_ms >= 1000.0, "stall reported as %.0f ms", stalled_ms);
    /* and afterwards: stall over and counted */
    ck_assert(h_wait_stat_eq(&d, "robots.0.backend.stall.stalled", 0, H_LONG_MS));
    ck_assert_double_ge(h_stat(&d, "robots.0.backend.stall.stalls"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.connects"), 1);
    h_udp_close(&u);
    h_udp_close(&snd.u);
}

START_TEST(hung)
{
    stall(false);
}
END_TEST

START_TEST(streaming)
{
    stall(true);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = { { "hung", hung, 120, NULL, NULL },
                                    { "streaming", streaming, 120, NULL, NULL } };
    return h_run_cases("stalled simulator", cases, 2);
}
