/* krp_robot: a small KRP/1 robot for the library's tests. A real process on
 * a real UDP socket (127.0.0.1), speaking the protocol through
 * protocols/krp, with a kinematic skid-steer model (belts slew toward their
 * set-points at a finite acceleration, tread 0.23 m) stepped at 1 kHz of
 * simulated time. It implements the KRP/1 rules a library test can observe
 * (handshake, status on request and by subscription, clamping, the 500 ms
 * watchdog, the e-stop latch, seq ordering, ACK_REQ) and logs what it
 * accepted, when the robot came to rest, and its final ground-truth pose,
 * one event per line, so a test can check what really happened.
 *
 *   krp_robot [--port N] [--log FILE] [--time-scale X] [--mute-after S]
 *             [--backend-down-after S] [--counts-per-m N] [--max-speed MM_S]
 *             [--max-subscribers N] [--yaw0 DEG] [--belt0-m M] [--lockstep 1]
 *
 * --mute-after S: from S s (wall) on, answer nothing (still obey).
 * --backend-down-after S: from S s on, report the simulator as
 * disconnected (BACKEND_UP clear), stop the belts and refuse set-points
 * with ERROR BACKEND_DOWN, as kenaf-simd does.
 * --lockstep 1: the KRP/1 lockstep extension (docs/protocol.md): HELLO_ACK
 * capability bit 2, the model steps only on STEP (each answered with the
 * STATUS after it, logged as STEP), no watchdog; without it STEP is an
 * unknown type (ERROR UNKNOWN_TYPE), as on the real robot.
 *
 * First stdout line: "PORT <n>". SIGTERM/SIGINT: log FINAL and exit 0. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "krp.h"
#include "state.h"

#define TREAD_M 0.23
#define STEP_S 0.001
#define WATCHDOG_NS 500000000LL
#define LEASE_NS 5000000000LL
#define MAX_PEERS 16
#define FLIPPER_RATE_RAD_S 1.0

struct opts {
    int port;
    const char *log;
    double time_scale;
    double mute_after;         /* wall seconds; < 0: never */
    double backend_down_after; /* wall seconds; < 0: never */
    int32_t counts_per_m;
    int32_t max_speed;
    int32_t flip_min, flip_max;
    int max_subs;
    double yaw0_deg;
    double belt0_m;
    double belt_accel; /* m/s^2 */
    bool lockstep;     /* time passes only on STEP */
};

struct peer {
    bool used;
    struct sockaddr_in addr;
    bool have_mark;
    uint32_t mark;
    int sub_ms; /* 0: not subscribed */
    int64_t next_push;
    int64_t last_heard;
    double tokens; /* ERROR rate limit */
    int64_t tokens_at;
};

static struct {
    struct opts o;
    int fd;
    FILE *log;
    uint32_t seq;
    struct kn_state s;
    double belt_cmd[2];
    double flip_target[4];
    double turned_rad;
    int64_t wall0;
    bool estop, wd_armed, wd_tripped, clamped, muted, backend_down, moving;
    int64_t last_crawler;
    struct peer peers[MAX_PEERS];
} R;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void status_now(struct kn_krp_status *st, uint32_t req_seq)
{
    kn_conv_state_to_krp(&R.s, R.o.counts_per_m, st);
    st->req_seq = req_seq;
    st->flags = KN_KRP_ST_SIMULATED;
    if (!R.backend_down)
        st->flags |= KN_KRP_ST_BACKEND_UP;
    if (R.estop)
        st->flags |= KN_KRP_ST_ESTOP;
    if (R.wd_tripped)
        st->flags |= KN_KRP_ST_WATCHDOG;
    if (R.clamped)
        st->flags |= KN_KRP_ST_CLAMPED;
}

/* One log line: "EVENT t=<simulated s> <details>". */
static void log_event(const char *event, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void log_event(const char *event, const char *fmt, ...)
{
    va_list ap;
    fprintf(R.log, "%s t=%.3f", event, R.s.time_s);
    va_start(ap, fmt);
    vfprintf(R.log, fmt, ap);
    va_end(ap);
    fputc('\n', R.log);
    fflush(R.log);
}

/* "REST"/"FINAL" lines: pose in mm and degrees, as STATUS would report it,
 * plus the unwrapped yaw change since start. */
static void log_pose(const char *what)
{
    struct kn_krp_status st;
    status_now(&st, 0);
    fprintf(R.log, "%s t=%.3f x=%d y=%d z=%d yaw=%.2f turned=%.2f left=%d right=%d\n", what,
            R.s.time_s, st.pos_mm[0], st.pos_mm[1], st.pos_mm[2],
            kn_conv_cdeg_to_deg(st.rpy_cdeg[2]),
            kn_conv_cdeg_to_deg(kn_conv_rad_to_cdeg(R.turned_rad)), st.crawler_speed_mm_s[0],
            st.crawler_speed_mm_s[1]);
    fflush(R.log);
}

static void send_to(struct peer *p, struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    if (R.muted)
        return;
    m->h.seq = ++R.seq;
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    if (n > 0)
        sendto(R.fd, buf, n, 0, (struct sockaddr *)&p->addr, sizeof p->addr);
}

static void send_error(struct peer *p, uint32_t seq, uint8_t type, uint8_t code, int64_t now)
{
    /* Token bucket: 10 per second, burst 10. */
    p->tokens += (double)(now - p->tokens_at) / 1e8;
    p->tokens_at = now;
    if (p->tokens > 10)
        p->tokens = 10;
    if (p->tokens < 1)
        return;
    p->tokens -= 1;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ERROR, 0, 0);
    m.u.error.offending_seq = seq;
    m.u.error.offending_type = type;
    m.u.error.code = code;
    send_to(p, &m);
}

static void send_ack(struct peer *p, const struct kn_krp_header *h)
{
    if (!(h->flags & KN_KRP_F_ACK_REQ))
        return;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ACK, 0, 0);
    m.u.ack.acked_seq = h->seq;
    m.u.ack.acked_type = h->type;
    send_to(p, &m);
}

static void send_status(struct peer *p, uint32_t req_seq)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STATUS, 0, 0);
    status_now(&m.u.status, req_seq);
    send_to(p, &m);
}

static struct peer *peer_for(const struct sockaddr_in *a, int64_t now)
{
    struct peer *free_slot = NULL;
    for (int i = 0; i < MAX_PEERS; i++) {
        struct peer *p = &R.peers[i];
        if (p->used && p->addr.sin_addr.s_addr == a->sin_addr.s_addr &&
            p->addr.sin_port == a->sin_port)
            return p;
        if (!p->used && free_slot == NULL)
            free_slot = p;
    }
    if (free_slot != NULL) {
        memset(free_slot, 0, sizeof *free_slot);
        free_slot->used = true;
        free_slot->addr = *a;
        free_slot->tokens = 10;
        free_slot->tokens_at = now;
    }
    return free_slot;
}

static int subscribers(void)
{
    int n = 0;
    for (int i = 0; i < MAX_PEERS; i++)
        n += R.peers[i].used && R.peers[i].sub_ms > 0;
    return n;
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi, bool *clamped)
{
    if (v < lo || v > hi) {
        *clamped = true;
        return v < lo ? lo : hi;
    }
    return v;
}

/* Set-points older than the sender's mark are ignored (RFC 1982). */
static bool stale(struct peer *p, const struct kn_krp_header *h)
{
    if (p->have_mark && !kn_krp_seq_newer(h->seq, p->mark)) {
        log_event("IGNORED", " type=%s seq=%u mark=%u", kn_krp_type_name(h->type), h->seq, p->mark);
        return true;
    }
    return false;
}

static void on_crawler(struct peer *p, struct kn_krp_msg *m, int64_t now)
{
    if (stale(p, &m->h))
        return;
    if (R.estop || R.backend_down) {
        log_event("REFUSED", " type=CRAWLER reason=%s", R.estop ? "estop" : "backend");
        send_error(p, m->h.seq, m->h.type, R.estop ? KN_KRP_ERR_ESTOP : KN_KRP_ERR_BACKEND_DOWN,
                   now);
        return;
    }
    bool clamped = false;
    struct kn_krp_crawler *c = &m->u.crawler;
    c->left_mm_s = clamp(c->left_mm_s, -R.o.max_speed, R.o.max_speed, &clamped);
    c->right_mm_s = clamp(c->right_mm_s, -R.o.max_speed, R.o.max_speed, &clamped);
    kn_conv_krp_crawler(c, R.belt_cmd);
    p->mark = m->h.seq;
    p->have_mark = true;
    R.clamped = clamped;
    R.wd_armed = true;
    R.wd_tripped = false;
    R.last_crawler = now;
    log_event("CRAWLER", " seq=%u left=%d right=%d%s", m->h.seq, c->left_mm_s, c->right_mm_s,
              clamped ? " clamped" : "");
    if (clamped)
        send_error(p, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    send_ack(p, &m->h);
}

static void on_flipper(struct peer *p, struct kn_krp_msg *m, int64_t now)
{
    if (stale(p, &m->h))
        return;
    if (R.estop || R.backend_down) {
        log_event("REFUSED", " type=FLIPPER reason=%s", R.estop ? "estop" : "backend");
        send_error(p, m->h.seq, m->h.type, R.estop ? KN_KRP_ERR_ESTOP : KN_KRP_ERR_BACKEND_DOWN,
                   now);
        return;
    }
    bool clamped = false;
    struct kn_krp_flipper *f = &m->u.flipper;
    for (int k = 0; k < 4; k++)
        if (f->mask & (1u << k))
            f->target_cdeg[k] = clamp(f->target_cdeg[k], R.o.flip_min, R.o.flip_max, &clamped);
    struct kn_command cmd;
    memset(&cmd, 0, sizeof cmd);
    kn_conv_krp_flipper(f, &cmd);
    for (int k = 0; k < 4; k++)
        if (cmd.flipper_mask & (1u << k))
            R.flip_target[k] = cmd.flipper_rad[k];
    p->mark = m->h.seq;
    p->have_mark = true;
    R.clamped = clamped;
    log_event("FLIPPER", " seq=%u mask=0x%x cdeg=%d,%d,%d,%d%s", m->h.seq, f->mask,
              f->target_cdeg[0], f->target_cdeg[1], f->target_cdeg[2], f->target_cdeg[3],
              clamped ? " clamped" : "");
    if (clamped)
        send_error(p, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    send_ack(p, &m->h);
}

static void step_model(void);

/* Lockstep: the model runs the asked time in its 1 ms steps, then the
 * STATUS after them answers the STEP. */
static void on_step(struct peer *p, const struct kn_krp_msg *m, int64_t now)
{
    uint32_t us = m->u.step.advance_us;
    if (!R.o.lockstep) {
        send_error(p, m->h.seq, m->h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    if (us < KN_KRP_STEP_MIN_US || us > KN_KRP_STEP_MAX_US) {
        send_error(p, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    long n = lround(us * 1e-6 / STEP_S);
    for (long i = 0; i < n; i++)
        step_model();
    log_event("STEP", " us=%u", us);
    send_status(p, m->h.seq);
}

static void on_datagram(const uint8_t *buf, size_t n, const struct sockaddr_in *from, int64_t now)
{
    struct kn_krp_msg m;
    enum kn_krp_result r = kn_krp_decode(buf, n, &m);
    if (r == KN_KRP_EMAGIC)
        return;
    struct peer *p = peer_for(from, now);
    if (p == NULL)
        return;
    p->last_heard = now;
    if (r != KN_KRP_OK) {
        send_error(p, m.h.seq, m.h.type, kn_krp_error_code(r), now);
        return;
    }
    if (!kn_krp_is_to_robot(m.h.type)) {
        send_error(p, m.h.seq, m.h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    switch (m.h.type) {
    case KN_KRP_HELLO: {
        p->have_mark = false;
        log_event("HELLO", " name=%s", m.u.hello.name);
        struct kn_krp_msg a;
        kn_krp_init(&a, KN_KRP_HELLO_ACK, 0, 0);
        a.u.hello_ack.protocol = KN_KRP_VERSION;
        a.u.hello_ack.simulated = 1;
        a.u.hello_ack.backend = KN_KRP_BACKEND_ENGINE;
        snprintf(a.u.hello_ack.robot_name, sizeof a.u.hello_ack.robot_name, "test-robot");
        a.u.hello_ack.capabilities =
            KN_KRP_CAP_GROUND_TRUTH | (R.o.lockstep ? KN_KRP_CAP_LOCKSTEP : 0);
        a.u.hello_ack.counts_per_m = R.o.counts_per_m;
        a.u.hello_ack.max_speed_mm_s = R.o.max_speed;
        a.u.hello_ack.flipper_min_cdeg = R.o.flip_min;
        a.u.hello_ack.flipper_max_cdeg = R.o.flip_max;
        send_to(p, &a);
        break;
    }
    case KN_KRP_CRAWLER: on_crawler(p, &m, now); break;
    case KN_KRP_FLIPPER: on_flipper(p, &m, now); break;
    case KN_KRP_STOP:
        if (!p->have_mark || kn_krp_seq_newer(m.h.seq, p->mark))
            p->mark = m.h.seq;
        p->have_mark = true;
        R.belt_cmd[0] = R.belt_cmd[1] = 0;
        R.clamped = false;
        R.wd_tripped = false;
        R.last_crawler = now;
        log_event("STOP", " seq=%u", m.h.seq);
        send_ack(p, &m.h);
        break;
    case KN_KRP_STATUS_REQ: send_status(p, m.h.seq); break;
    case KN_KRP_SUBSCRIBE: {
        int period = m.u.subscribe.period_ms;
        if (period == 0) {
            p->sub_ms = 0;
            log_event("SUBSCRIBE", " period=0");
            send_ack(p, &m.h);
            break;
        }
        if (p->sub_ms == 0 && subscribers() >= R.o.max_subs) {
            log_event("BUSY", " port=%d", ntohs(p->addr.sin_port));
            send_error(p, m.h.seq, m.h.type, KN_KRP_ERR_BUSY, now);
            break;
        }
        if (period < 10 || period > 1000) {
            period = period < 10 ? 10 : 1000;
            send_error(p, m.h.seq, m.h.type, KN_KRP_ERR_RANGE, now);
        }
        if (p->sub_ms != period)
            log_event("SUBSCRIBE", " period=%d", period);
        if (p->sub_ms == 0)
            p->next_push = now;
        p->sub_ms = period;
        send_ack(p, &m.h);
        break;
    }
    case KN_KRP_STEP: on_step(p, &m, now); break;
    case KN_KRP_ESTOP:
        if (m.u.estop.engage > 1) {
            send_error(p, m.h.seq, m.h.type, KN_KRP_ERR_RANGE, now);
            break;
        }
        R.estop = m.u.estop.engage == 1;
        if (R.estop) {
            R.belt_cmd[0] = R.belt_cmd[1] = 0;
            R.s.belt_speed_m_s[0] = R.s.belt_speed_m_s[1] = 0;
            R.wd_armed = false;
        }
        log_event("ESTOP", " engage=%d", R.estop);
        send_ack(p, &m.h);
        break;
    default: break;
    }
}

static double approach(double v, double target, double step)
{
    if (v < target)
        return fmin(target, v + step);
    return fmax(target, v - step);
}

static void step_model(void)
{
    struct kn_state *s = &R.s;
    for (int i = 0; i < 2; i++) {
        s->belt_speed_m_s[i] =
            approach(s->belt_speed_m_s[i], R.belt_cmd[i], R.o.belt_accel * STEP_S);
        s->belt_pos_m[i] += s->belt_speed_m_s[i] * STEP_S;
    }
    double v = (s->belt_speed_m_s[0] + s->belt_speed_m_s[1]) / 2;
    double w = (s->belt_speed_m_s[1] - s->belt_speed_m_s[0]) / TREAD_M;
    double yaw_mid = s->rpy_rad[2] + w * STEP_S / 2;
    s->pos_m[0] += v * cos(yaw_mid) * STEP_S;
    s->pos_m[1] += v * sin(yaw_mid) * STEP_S;
    s->rpy_rad[2] = kn_conv_wrap_pi(s->rpy_rad[2] + w * STEP_S);
    R.turned_rad += w * STEP_S;
    s->rate_rad_s[2] = w;
    for (int k = 0; k < 4; k++)
        s->flipper_rad[k] =
            approach(s->flipper_rad[k], R.flip_target[k], FLIPPER_RATE_RAD_S * STEP_S);
    s->time_s += STEP_S;

    bool moving = s->belt_speed_m_s[0] != 0 || s->belt_speed_m_s[1] != 0;
    if (R.moving && !moving)
        log_pose("REST");
    R.moving = moving;
}

static void run_timers(int64_t now)
{
    double sim_target = (double)(now - R.wall0) / 1e9 * R.o.time_scale;
    for (int n = 0; n < 20000 && !R.o.lockstep && R.s.time_s + STEP_S <= sim_target; n++)
        step_model();

    if (R.wd_armed && !R.o.lockstep && now - R.last_crawler > WATCHDOG_NS) {
        R.belt_cmd[0] = R.belt_cmd[1] = 0;
        R.wd_armed = false;
        R.wd_tripped = true;
        log_event("WATCHDOG", " idle_ms=%lld", (long long)((now - R.last_crawler) / 1000000));
    }
    if (!R.muted && R.o.mute_after >= 0 && now - R.wall0 >= (int64_t)(R.o.mute_after * 1e9)) {
        R.muted = true;
        log_event("MUTED", " after_s=%g", R.o.mute_after);
    }
    if (!R.backend_down && R.o.backend_down_after >= 0 &&
        now - R.wall0 >= (int64_t)(R.o.backend_down_after * 1e9)) {
        R.backend_down = true;
        R.belt_cmd[0] = R.belt_cmd[1] = 0;
        R.wd_armed = false;
        log_event("BACKEND_DOWN", " after_s=%g", R.o.backend_down_after);
    }
    for (int i = 0; i < MAX_PEERS; i++) {
        struct peer *p = &R.peers[i];
        if (!p->used)
            continue;
        if (now - p->last_heard > LEASE_NS) {
            p->used = false; /* lease lapsed: subscription and mark forgotten */
            continue;
        }
        if (p->sub_ms > 0 && now >= p->next_push) {
            send_status(p, 0);
            p->next_push += (int64_t)p->sub_ms * 1000000;
            if (p->next_push <= now)
                p->next_push = now + (int64_t)p->sub_ms * 1000000;
        }
    }
}

static int64_t next_deadline(int64_t now)
{
    int64_t next = now + 2000000; /* keeps the model within 2 ms of wall time */
    for (int i = 0; i < MAX_PEERS; i++)
        if (R.peers[i].used && R.peers[i].sub_ms > 0 && R.peers[i].next_push < next)
            next = R.peers[i].next_push;
    return next;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){
        .port = 0,
        .time_scale = 1.0,
        .mute_after = -1,
        .backend_down_after = -1,
        .counts_per_m = 10000,
        .max_speed = 800,
        .flip_min = -11950,
        .flip_max = 11950,
        .max_subs = 8,
        .belt_accel = 1.0,
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) {
            fprintf(stderr, "krp_robot: %s needs a value\n", a);
            return -1;
        }
        char *end = NULL;
        double d = strtod(v, &end);
        bool num = end != v && *end == '\0';
        if (strcmp(a, "--log") == 0) {
            o->log = v;
        } else if (!num) {
            fprintf(stderr, "krp_robot: %s: '%s' is not a number\n", a, v);
            return -1;
        } else if (strcmp(a, "--port") == 0 && d >= 0 && d <= 65535) {
            o->port = (int)d;
        } else if (strcmp(a, "--time-scale") == 0 && d > 0) {
            o->time_scale = d;
        } else if (strcmp(a, "--mute-after") == 0) {
            o->mute_after = d;
        } else if (strcmp(a, "--backend-down-after") == 0) {
            o->backend_down_after = d;
        } else if (strcmp(a, "--counts-per-m") == 0 && d >= 1) {
            o->counts_per_m = (int32_t)d;
        } else if (strcmp(a, "--max-speed") == 0 && d >= 1) {
            o->max_speed = (int32_t)d;
        } else if (strcmp(a, "--max-subscribers") == 0 && d >= 0) {
            o->max_subs = (int)d;
        } else if (strcmp(a, "--yaw0") == 0) {
            o->yaw0_deg = d;
        } else if (strcmp(a, "--belt0-m") == 0) {
            o->belt0_m = d;
        } else if (strcmp(a, "--lockstep") == 0) {
            o->lockstep = d != 0;
        } else {
            fprintf(stderr, "krp_robot: unknown or out-of-range option %s %s\n", a, v);
            return -1;
        }
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv, &R.o) != 0)
        return 2;
    R.log = stdout;
    if (R.o.log != NULL && (R.log = fopen(R.o.log, "w")) == NULL) {
        fprintf(stderr, "krp_robot: %s: %s\n", R.o.log, strerror(errno));
        return 2;
    }
    R.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)R.o.port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (R.fd < 0 || bind(R.fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(R.fd, (struct sockaddr *)&sa, &sl) != 0) {
        fprintf(stderr, "krp_robot: cannot bind 127.0.0.1:%d: %s\n", R.o.port, strerror(errno));
        return 2;
    }

    sigset_t block, during_poll;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &during_poll);
    sigdelset(&during_poll, SIGTERM);
    sigdelset(&during_poll, SIGINT);
    struct sigaction act = { .sa_handler = on_signal };
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    signal(SIGPIPE, SIG_IGN);

    R.s.rpy_rad[2] = kn_conv_cdeg_to_rad(kn_conv_deg_to_cdeg(R.o.yaw0_deg));
    R.s.belt_pos_m[0] = R.s.belt_pos_m[1] = R.o.belt0_m;
    R.s.accel_m_s2[2] = KN_GRAVITY;
    R.s.battery_v = 24.0;
    R.wall0 = wall_ns();

    printf("PORT %d\n", ntohs(sa.sin_port));
    fflush(stdout);

    while (!stop_requested) {
        int64_t now = wall_ns();
        run_timers(now);
        int64_t wait = next_deadline(now) - now;
        if (wait < 0)
            wait = 0;
        struct timespec ts = { .tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000 };
        struct pollfd pfd = { .fd = R.fd, .events = POLLIN };
        if (ppoll(&pfd, 1, &ts, &during_poll) > 0) {
            uint8_t buf[KN_KRP_MAX_DGRAM + 1];
            struct sockaddr_in from;
            for (int i = 0; i < 64; i++) {
                socklen_t fl = sizeof from;
                ssize_t n =
                    recvfrom(R.fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
                if (n < 0)
                    break;
                on_datagram(buf, (size_t)n, &from, wall_ns());
            }
        }
    }
    log_pose("FINAL");
    if (R.log != stdout)
        fclose(R.log);
    return 0;
}
