/* STATUS_REQ -> STATUS round trip against kenaf-simd, and in the same run
 * against the smallest UDP echo there is (a thread doing recvfrom/sendto
 * of a STATUS-sized answer): the floor of a UDP round trip on this machine.
 * In builds with the shared key, a second robot of the same kenaf-simd has
 * a key, and a third client signs its STATUS_REQs and checks the signed
 * STATUS: what the key costs end to end. The clients take turns within
 * each period, like the relay benchmark. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "krp.h"
#ifdef KN_HAVE_KEYS
#include "krp_mac.h"
#endif

#define WARMUP 200
#define QUIT_MAGIC "quit-echo"

struct echo {
    int fd;
    int port;
    pthread_t th;
};

static void *echo_run(void *arg)
{
    struct echo *e = arg;
    uint8_t in[KN_KRP_MAX_DGRAM], out[KN_KRP_HDR_LEN + KN_KRP_LEN_STATUS];
    for (;;) {
        struct sockaddr_storage from;
        socklen_t flen = sizeof from;
        ssize_t n = recvfrom(e->fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return NULL;
        if ((size_t)n == sizeof QUIT_MAGIC - 1 && memcmp(in, QUIT_MAGIC, (size_t)n) == 0)
            return NULL;
        /* the question's header, then a STATUS-sized payload */
        memset(out, 0, sizeof out);
        memcpy(out, in, (size_t)n < KN_KRP_HDR_LEN ? (size_t)n : KN_KRP_HDR_LEN);
        sendto(e->fd, out, sizeof out, 0, (struct sockaddr *)&from, flen);
    }
}

static int echo_start(struct echo *e)
{
    e->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (e->fd < 0 || bind(e->fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(e->fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    e->port = ntohs(a.sin_port);
    return pthread_create(&e->th, NULL, echo_run, e) == 0 ? 0 : -1;
}

static void echo_stop(struct echo *e)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)e->port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sendto(fd, QUIT_MAGIC, sizeof QUIT_MAGIC - 1, 0, (struct sockaddr *)&a, sizeof a);
    close(fd);
    pthread_join(e->th, NULL);
    close(e->fd);
}

struct client {
    int fd;
    bool krp; /* a real robot: decode and match req_seq */
    uint32_t seq, sent, answered;
    struct kn_bench_samples rtt;
#ifdef KN_HAVE_KEYS
    const struct kn_krpmac_key *key; /* sign questions, check answers */
    uint64_t counter;
    uint32_t bad_mac; /* answers whose trailer did not verify */
#endif
};

static int client_open(struct client *c, int port, bool krp)
{
    memset(c, 0, sizeof *c);
    c->krp = krp;
    c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { .tv_sec = 1 };
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        return -1;
    return 0;
}

static void round_trip(struct client *c, bool record)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM + 64];
    uint32_t seq = ++c->seq;
    kn_krp_init(&m, KN_KRP_STATUS_REQ, seq, 0);
    uint64_t t0 = kn_bench_now_ns();
    size_t len = kn_krp_encode(&m, buf, KN_KRP_MAX_DGRAM);
#ifdef KN_HAVE_KEYS
    /* the signing is part of what is timed: the client pays it too,
     * reading the clock its counter follows included */
    if (c->key) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->counter =
            kn_krpmac_counter_next(c->counter, (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
        len = kn_krpmac_sign(c->key, c->counter, buf, len, sizeof buf);
    }
#endif
    if (len == 0 || send(c->fd, buf, len, 0) != (ssize_t)len)
        return;
    c->sent++;
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return; /* timed out: counted as unanswered */
#ifdef KN_HAVE_KEYS
        if (c->key) {
            size_t plain = (size_t)n;
            uint64_t ctr;
            if (kn_krpmac_verify(c->key, buf, &plain, &ctr) != KN_KRPMAC_OK) {
                c->bad_mac++;
                continue;
            }
            n = (ssize_t)plain;
        }
#endif
        bool match;
        if (c->krp)
            match = kn_krp_decode(buf, (size_t)n, &m) == KN_KRP_OK && m.h.type == KN_KRP_STATUS &&
                    m.u.status.req_seq == seq;
        else
            match = n >= 8 &&
                    (uint32_t)(buf[4] | buf[5] << 8 | buf[6] << 16 | (uint32_t)buf[7] << 24) == seq;
        if (!match)
            continue; /* a late answer to an earlier question */
        /* stopped once the answer is checked: decoding (and the key's
         * verification) is the client's share of the round trip */
        uint64_t t1 = kn_bench_now_ns();
        c->answered++;
        if (record)
            kn_bench_samples_add(&c->rtt, t1 - t0);
        return;
    }
}

static cJSON *client_json(struct client *c, const struct kn_bench_summary *s)
{
    cJSON *o = kn_bench_summary_json(s);
    cJSON_AddNumberToObject(o, "sent", c->sent);
    cJSON_AddNumberToObject(o, "answered", c->answered);
    return o;
}

#ifdef KN_HAVE_KEYS
/* A fresh 32-byte key, into k and into a key file kenaf-simd will accept
 * (hex, mode 0600). */
static int make_key(const struct kn_bench_opts *o, struct kn_krpmac_key *k, char *path,
                    size_t pathlen, char *err, size_t errlen)
{
    uint8_t raw[32];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw ||
        kn_krpmac_key_set(k, raw, sizeof raw)) {
        snprintf(err, errlen, "cannot make a key: %s", strerror(errno));
        return -1;
    }
    snprintf(path, pathlen, "%s/rtt.key", o->scratch);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char hex[2 * sizeof raw + 2];
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    strcat(hex, "\n");
    bool ok = fd >= 0 && write(fd, hex, strlen(hex)) == (ssize_t)strlen(hex);
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (!ok) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
#endif

int kn_bench_rtt(const struct kn_bench_opts *o, cJSON *root)
{
    char err[2048];
    int rc = -1;
    struct kn_sink *sink = NULL;
    struct kn_simd d;
    bool have_simd = false, have_echo = false;
    struct echo e = { .fd = -1 };
    struct client ours = { .fd = -1 }, base = { .fd = -1 }, keyed = { .fd = -1 };
    unsigned nclients = 2; /* ours and the echo; the signed one with -Dkeys */
    int key_robot = -1;
    char key_path[256] = "";
#ifdef KN_HAVE_KEYS
    struct kn_krpmac_key key;
    if (make_key(o, &key, key_path, sizeof key_path, err, sizeof err) < 0)
        goto fail;
    nclients = 3;
    key_robot = 1;
#endif
    fprintf(stderr, "status round trip: %.0f Hz each for %.0f s%s...\n", o->rate_hz, o->relay_s,
            nclients == 3 ? ", also with the shared key" : "");

    /* kenaf-simd and the echo thread on the same CPU, the client on the
     * others: both answers then cost the same cross-CPU wake-ups (an
     * unpinned thread of this process would often be woken on the
     * client's own CPU, which is much cheaper) */
    int far = o->pin && kn_bench_ncpu() >= 2 ? kn_bench_ncpu() - 1 : -1;
    sink = kn_sink_start(o->proto, NULL, NULL, err, sizeof err);
    if (!sink)
        goto fail;
    kn_sink_pin(sink, far);
    if (kn_simd_start_keyed(&d, o, "rtt", (int)nclients - 1, o->proto, kn_sink_port(sink), far,
                            key_robot, key_path, err, sizeof err) < 0)
        goto fail;
    have_simd = true;
    if (echo_start(&e) < 0) {
        snprintf(err, sizeof err, "UDP echo: %s", strerror(errno));
        goto fail;
    }
    have_echo = true;
    if (far >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(far, &set);
        pthread_setaffinity_np(e.th, sizeof set, &set);
        kn_bench_pin_except(far);
    }
    if (client_open(&ours, d.port[0], true) < 0 || client_open(&base, e.port, false) < 0 ||
        (nclients == 3 && client_open(&keyed, d.port[1], true) < 0)) {
        snprintf(err, sizeof err, "UDP socket: %s", strerror(errno));
        goto fail;
    }
#ifdef KN_HAVE_KEYS
    keyed.key = &key;
#endif

    struct client *turn[3] = { &ours, &base, &keyed };
    uint32_t n = WARMUP + (uint32_t)(o->rate_hz * o->relay_s);
    uint64_t slot = (uint64_t)(1e9 / o->rate_hz) / nclients;
    uint64_t t0 = kn_bench_now_ns() + 10000000u;
    /* each client takes each place in the period in turn: the place
     * itself (after which other wake-up) is worth microseconds */
    for (uint32_t k = 0; k < nclients * n; k++) {
        kn_bench_sleep_until(t0 + k * slot);
        round_trip(turn[(k % nclients + k / nclients) % nclients], k / nclients >= WARMUP);
    }
    struct kn_bench_summary sa = kn_bench_summarize(&ours.rtt), sb = kn_bench_summarize(&base.rtt);

    cJSON *j = cJSON_AddObjectToObject(root, "status_rtt");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddStringToObject(j, "path", "STATUS_REQ sent -> STATUS received (loopback)");
    cJSON_AddNumberToObject(j, "rate_hz", o->rate_hz);
    cJSON_AddNumberToObject(j, "duration_s", o->relay_s);
    cJSON_AddItemToObject(j, "kenaf_simd", client_json(&ours, &sa));
    cJSON_AddItemToObject(j, "udp_echo", client_json(&base, &sb));
    const char *item = "STATUS_REQ->STATUS rtt";
    kn_bench_row_target(targets, item, "p50 us", sa.p50_us, "echo", sb.p50_us, KN_BENCH_LE, 30,
                        "us");
    kn_bench_row(item, "p99 us", sa.p99_us, "echo", sb.p99_us);
    kn_bench_row(item, "p99.9 us", sa.p999_us, "echo", sb.p999_us);
    kn_bench_row(item, "unanswered", (double)ours.sent - ours.answered, "echo",
                 (double)base.sent - base.answered);

    if (ours.answered == 0 || base.answered == 0) {
        snprintf(err, sizeof err, "no answers (kenaf-simd %u of %u, echo %u of %u)", ours.answered,
                 ours.sent, base.answered, base.sent);
        goto fail;
    }
#ifdef KN_HAVE_KEYS
    struct kn_bench_summary sk = kn_bench_summarize(&keyed.rtt);
    cJSON *jk = client_json(&keyed, &sk);
    cJSON_AddNumberToObject(jk, "bad_mac", keyed.bad_mac);
    cJSON_AddNumberToObject(jk, "added_p50_us", round((sk.p50_us - sa.p50_us) * 100) / 100);
    cJSON_AddItemToObject(j, "kenaf_simd_keyed", jk);
    const char *kitem = "STATUS_REQ->STATUS rtt, shared key";
    kn_bench_row(kitem, "p50 us", sk.p50_us, "no key", sa.p50_us);
    kn_bench_row(kitem, "p99 us", sk.p99_us, "no key", sa.p99_us);
    kn_bench_row(kitem, "unanswered", (double)keyed.sent - keyed.answered, "no key",
                 (double)ours.sent - ours.answered);
    /* sign and verify at both ends: a few microseconds at most */
    kn_bench_target(targets, kitem, "added p50 us", sk.p50_us - sa.p50_us, KN_BENCH_LE, 10);
    if (keyed.answered == 0 || keyed.bad_mac) {
        snprintf(err, sizeof err, "signed round trips: %u of %u answered, %u answers not verified",
                 keyed.answered, keyed.sent, keyed.bad_mac);
        goto fail;
    }
#endif
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "kenaf-bench: status round trip: %s\n", err);
out:
    if (ours.fd >= 0)
        close(ours.fd);
    if (base.fd >= 0)
        close(base.fd);
    if (keyed.fd >= 0)
        close(keyed.fd);
    kn_bench_samples_free(&ours.rtt);
    kn_bench_samples_free(&base.rtt);
    kn_bench_samples_free(&keyed.rtt);
    if (have_echo)
        echo_stop(&e);
    if (have_simd)
        kn_simd_stop(&d);
    kn_sink_stop(sink);
    kn_bench_pin_except(-1);
    return rc;
}
