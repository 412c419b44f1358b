/* The library's I/O thread: receives everything the robot sends, keeps the
 * link alive (handshake, subscription renewal or polling, loss detection
 * and recovery) and repeats the held set-points. It sleeps in ppoll on the
 * socket and a self-pipe, which API calls write to when they need a timer
 * looked at sooner than the thread planned. */
#include "lib.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "status_fill.h"

#define KN_HANDSHAKE_RETRY_NS (100 * KN_MS)
#define KN_RECOVERY_RETRY_NS (200 * KN_MS)
#define KN_SUBSCRIBE_RENEW_NS (1000 * KN_MS)
#define KN_CLAIM_RETRY_NS (1000 * KN_MS)
#define KN_RX_BURST 64

static int64_t earlier(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t period_ns(void)
{
    return kn_lib.cfg.status_ms * KN_MS;
}

static int64_t timeout_ns(void)
{
    return kn_lib.cfg.timeout_ms * KN_MS;
}

/* SUBSCRIBE asks for an ACK: that is how the library learns a robot that
 * once answered BUSY has a free slot again. */
static void send_subscription(int64_t now)
{
    kn_udp_send_subscribe((uint16_t)kn_lib.cfg.status_ms, KN_KRP_F_ACK_REQ);
    if (kn_lib.sub_busy) {
        kn_udp_send_simple(KN_KRP_STATUS_REQ, 0);
        kn_lib.next_poll = now + period_ns();
    }
}

static void on_hello_ack(const struct kn_krp_hello_ack *a, int64_t now)
{
    if (a->protocol != KN_KRP_VERSION || a->counts_per_m <= 0 || a->max_speed_mm_s <= 0 ||
        a->flipper_min_cdeg > a->flipper_max_cdeg) {
        kn_lib.rx_bad++;
        kn_lib_debug("HELLO_ACK ignored: protocol %u, counts/m %d, max speed %d, flippers %d..%d",
                     a->protocol, a->counts_per_m, a->max_speed_mm_s, a->flipper_min_cdeg,
                     a->flipper_max_cdeg);
        return;
    }
    bool first = !kn_lib.have_hello;
    kn_lib.hello = *a;
    kn_lib.lockstep = a->capabilities & KN_KRP_CAP_LOCKSTEP;
    kn_lib.have_hello = true;
    kn_lib.rehello = false;
    /* Made the driver again (after another client left, or the watchdog
     * gave the robot up): the held set-points were refused meanwhile. */
    if (kn_udp_session_accept(a) && !first && kn_lib.link == KN_LIB_LINK_UP)
        kn_sp_resend_locked(now);
    if (first)
        kn_lib_debug("robot '%s' %s, %d counts/m, max %d mm/s", a->robot_name,
                     a->simulated ? "simulated" : "hardware", a->counts_per_m, a->max_speed_mm_s);
    if (kn_lib.link == KN_LIB_LINK_HANDSHAKE) {
        send_subscription(now);
        kn_lib.next_hello = now + KN_HANDSHAKE_RETRY_NS;
    }
    pthread_cond_broadcast(&kn_lib.cond);
}

static void on_status(const struct kn_krp_status *s, int64_t now)
{
    kn_lib.raw = *s;
    kn_status_fill(s, &kn_lib.st);
    kn_clock_sample(&kn_lib.clock, s->time_us, now);
    if (!kn_lib.have_status)
        kn_lib.lock_us = s->time_us; /* lockstep: the clock starts where the robot's is */
    kn_lockstep_status_locked(s);
    kn_lib.have_status = true;
    kn_lib.status_gen++;
    kn_lib.status_wall = now;
    if (kn_lib.link == KN_LIB_LINK_HANDSHAKE && kn_lib.have_hello) {
        kn_lib.link = KN_LIB_LINK_UP;
        kn_lib.next_sub = now + KN_SUBSCRIBE_RENEW_NS;
    } else if (kn_lib.link == KN_LIB_LINK_LOST) {
        kn_lib_debug("robot answers again");
        kn_lib.link = KN_LIB_LINK_UP;
        kn_lib.next_sub = now + KN_SUBSCRIBE_RENEW_NS;
        kn_sp_resend_locked(now);
    }
    pthread_cond_broadcast(&kn_lib.cond);
}

static bool driving_type(uint8_t t)
{
    return t == KN_KRP_CRAWLER || t == KN_KRP_FLIPPER || t == KN_KRP_STOP || t == KN_KRP_STEP;
}

static void on_error(const struct kn_krp_error *e, int64_t now)
{
    /* a refused STEP ends its wait; a session or driver problem behind
     * it is handled below like any other */
    kn_lockstep_error_locked(e);
    pthread_cond_broadcast(&kn_lib.cond);
    if (kn_udp_session_lost(e)) {
        kn_lib_debug("robot no longer knows our session: HELLO again");
        kn_lib.rehello = true;
        kn_lib.next_hello = now;
        return;
    }
    if (e->code == KN_KRP_ERR_NOT_OWNER && driving_type(e->offending_type)) {
        /* Someone else drives: ask to drive now and then, so the program
         * gets the robot once the other client leaves. */
        if (now >= kn_lib.next_claim) {
            kn_lib_debug("robot: another client drives; asking to drive");
            kn_lib.rehello = true;
            kn_lib.next_hello = now;
            kn_lib.next_claim = now + KN_CLAIM_RETRY_NS;
        }
        return;
    }
    if (e->offending_type == KN_KRP_SUBSCRIBE && e->code == KN_KRP_ERR_BUSY) {
        if (!kn_lib.sub_busy)
            kn_lib_debug("robot has no free subscription: polling with STATUS_REQ");
        kn_lib.sub_busy = true;
        if (kn_lib.next_poll > now)
            kn_lib.next_poll = now;
        return;
    }
    kn_lib_debug("robot: ERROR %u for %s seq %u", e->code,
                 kn_krp_type_name(e->offending_type) ? kn_krp_type_name(e->offending_type) : "?",
                 e->offending_seq);
}

static void on_datagram(uint8_t *buf, size_t n, int64_t now)
{
    if (!kn_sign_in(buf, &n))
        return;
    struct kn_krp_msg m;
    enum kn_krp_result r = kn_krp_decode(buf, n, &m);
    if (r != KN_KRP_OK) {
        kn_lib.rx_bad++;
        kn_lib_debug("dropped a datagram from the robot: %s", kn_krp_result_str(r));
        return;
    }
    switch (m.h.type) {
    case KN_KRP_HELLO_ACK: on_hello_ack(&m.u.hello_ack, now); break;
    case KN_KRP_STATUS: on_status(&m.u.status, now); break;
    case KN_KRP_ERROR: on_error(&m.u.error, now); break;
    case KN_KRP_ACK:
        if (m.u.ack.acked_type == KN_KRP_SUBSCRIBE && kn_lib.sub_busy) {
            kn_lib_debug("subscription accepted: polling ends");
            kn_lib.sub_busy = false;
        }
        break;
    default:
        kn_lib.rx_bad++;
        kn_lib_debug("unexpected %s from the robot", kn_krp_type_name(m.h.type));
        break;
    }
}

static void receive_all(int fd, int64_t now)
{
    uint8_t buf[KN_KRP_MAX_DGRAM + 64 + 1]; /* + a shared-key trailer */
    for (int i = 0; i < KN_RX_BURST; i++) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ECONNREFUSED)
                kn_lib_debug("robot port unreachable");
            return;
        }
        on_datagram(buf, (size_t)n, now);
    }
}

/* Link upkeep due at `now`; returns when it next needs looking at. */
static int64_t link_timers(int64_t now)
{
    int64_t next = now + 1000 * KN_MS;
    if (kn_lib.link == KN_LIB_LINK_UP && now - kn_lib.status_wall > timeout_ns()) {
        kn_lib_debug("no STATUS for %d ms: link lost", kn_lib.cfg.timeout_ms);
        kn_lib.link = KN_LIB_LINK_LOST;
        kn_lib.next_hello = now;
        pthread_cond_broadcast(&kn_lib.cond);
    }
    switch (kn_lib.link) {
    case KN_LIB_LINK_HANDSHAKE:
        if (now >= kn_lib.next_hello) {
            if (!kn_lib.have_hello)
                kn_udp_send_simple(KN_KRP_HELLO, 0);
            else
                send_subscription(now);
            kn_lib.next_hello = now + KN_HANDSHAKE_RETRY_NS;
        }
        next = earlier(next, kn_lib.next_hello);
        break;
    case KN_LIB_LINK_UP:
        if (kn_lib.rehello) {
            if (now >= kn_lib.next_hello) {
                kn_udp_send_simple(KN_KRP_HELLO, 0);
                kn_lib.next_hello = now + KN_RECOVERY_RETRY_NS;
            }
            next = earlier(next, kn_lib.next_hello);
        }
        if (now >= kn_lib.next_sub) {
            kn_udp_send_subscribe((uint16_t)kn_lib.cfg.status_ms, KN_KRP_F_ACK_REQ);
            kn_lib.next_sub = now + KN_SUBSCRIBE_RENEW_NS;
        }
        next = earlier(next, kn_lib.next_sub);
        next = earlier(next, kn_lib.status_wall + timeout_ns() + KN_MS);
        break;
    case KN_LIB_LINK_LOST:
        if (now >= kn_lib.next_hello) {
            kn_udp_send_simple(KN_KRP_HELLO, 0);
            send_subscription(now);
            kn_lib.next_hello = now + KN_RECOVERY_RETRY_NS;
        }
        next = earlier(next, kn_lib.next_hello);
        break;
    case KN_LIB_LINK_DOWN: break;
    }
    /* Polling replaces the subscription while the robot has no slot (a
     * lost link is probed by the recovery retries above instead). */
    if (kn_lib.sub_busy && kn_lib.have_hello &&
        (kn_lib.link == KN_LIB_LINK_UP || kn_lib.link == KN_LIB_LINK_HANDSHAKE)) {
        if (now >= kn_lib.next_poll) {
            kn_udp_send_simple(KN_KRP_STATUS_REQ, 0);
            kn_lib.next_poll = now + period_ns();
        }
        next = earlier(next, kn_lib.next_poll);
    }
    return next;
}

static void drain_pipe(int fd)
{
    char junk[64];
    while (read(fd, junk, sizeof junk) > 0) {
    }
}

static void *io_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&kn_lib.mu);
    int sock = kn_lib.fd, wake = kn_lib.wake[0];
    while (!kn_lib.quit) {
        int64_t now = kn_lib_now();
        int64_t next = earlier(link_timers(now), kn_sp_timers_locked(now));
        kn_lib.io_sleep_until = next;
        pthread_mutex_unlock(&kn_lib.mu);

        int64_t wait = next - now;
        if (wait < 0)
            wait = 0;
        struct timespec ts = { .tv_sec = (time_t)(wait / 1000000000),
                               .tv_nsec = (long)(wait % 1000000000) };
        struct pollfd p[2] = { { .fd = sock, .events = POLLIN }, { .fd = wake, .events = POLLIN } };
        int n = ppoll(p, 2, &ts, NULL);

        pthread_mutex_lock(&kn_lib.mu);
        kn_lib.io_sleep_until = 0; /* awake: no need to be woken */
        if (n > 0 && (p[1].revents & POLLIN))
            drain_pipe(wake);
        if (n > 0 && (p[0].revents & (POLLIN | POLLERR)))
            receive_all(sock, kn_lib_now());
    }
    pthread_mutex_unlock(&kn_lib.mu);
    return NULL;
}

void kn_io_wake_locked(int64_t deadline)
{
    if (deadline >= kn_lib.io_sleep_until || kn_lib.wake[1] < 0)
        return;
    kn_lib.io_sleep_until = deadline;
    char c = 1;
    ssize_t w = write(kn_lib.wake[1], &c, 1); /* full pipe: a wake-up is pending anyway */
    (void)w;
}

int kn_io_start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        kn_lib_debug("pipe: %s", strerror(errno));
        return HRT_ESYS;
    }
    pthread_mutex_lock(&kn_lib.mu);
    kn_lib.wake[0] = p[0];
    kn_lib.wake[1] = p[1];
    kn_lib.quit = false;
    kn_lib.io_sleep_until = 0;
    /* The thread blocks every signal, so the program's handlers run on the
     * program's own threads, never on the library's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&kn_lib.thread, NULL, io_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    kn_lib.thread_started = rc == 0;
    pthread_mutex_unlock(&kn_lib.mu);
    if (rc != 0) {
        kn_lib_debug("pthread_create: %s", strerror(rc));
        kn_io_stop();
        return HRT_ESYS;
    }
    return 0;
}

void kn_io_stop(void)
{
    pthread_mutex_lock(&kn_lib.mu);
    bool started = kn_lib.thread_started;
    kn_lib.quit = true;
    kn_lib.io_sleep_until = INT64_MAX;
    kn_io_wake_locked(0);
    pthread_mutex_unlock(&kn_lib.mu);
    if (started)
        pthread_join(kn_lib.thread, NULL);
    pthread_mutex_lock(&kn_lib.mu);
    kn_lib.thread_started = false;
    for (int i = 0; i < 2; i++) {
        if (kn_lib.wake[i] >= 0)
            close(kn_lib.wake[i]);
        kn_lib.wake[i] = -1;
    }
    kn_lib.link = KN_LIB_LINK_DOWN;
    pthread_mutex_unlock(&kn_lib.mu);
}
