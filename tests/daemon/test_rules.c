/* Unit tests of the sans-I/O KRP/1 rule engine (daemon/rules.c): every rule
 * of docs/protocol.md, driven with encoded datagrams and a
 * hand-held clock, answers and simulator commands captured. */
#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "harness_suite.h"
#include "krp.h"
#include "rules.h"

#define MS 1000000ull
#define T0 (1000 * MS)

struct sent {
    struct kn_addr to;
    struct kn_krp_msg m;
};

static struct {
    struct sent out[4096];
    int nout, rd;
    struct kn_command cmd[256];
    uint64_t cmd_t[256];
    int ncmd;
} cap;

static void cap_send(void *ctx, const struct kn_addr *to, const uint8_t *buf, size_t len)
{
    (void)ctx;
    if (cap.nout == 4096)
        return; /* floods: only the first answers are kept */
    struct sent *s = &cap.out[cap.nout++];
    s->to = *to;
    ck_assert_int_eq(kn_krp_decode(buf, len, &s->m), KN_KRP_OK);
}

static void cap_command(void *ctx, const struct kn_command *c, uint64_t t)
{
    (void)ctx;
    ck_assert_int_lt(cap.ncmd, 256);
    cap.cmd_t[cap.ncmd] = t;
    cap.cmd[cap.ncmd++] = *c;
}

/* Lockstep: the STEPs the rules passed on to the simulator. */
static struct {
    uint32_t us[16];
    int n;
    int fail; /* the simulator cannot step: io.step returns -1 */
} steps;

static int cap_step(void *ctx, uint32_t advance_us)
{
    (void)ctx;
    if (steps.fail)
        return -1;
    ck_assert_int_lt(steps.n, 16);
    steps.us[steps.n++] = advance_us;
    return 0;
}

/* Trials: what the rules passed on to the simulator. */
static struct {
    int resets, estops;
    int fail; /* the simulator cannot take it: io.trial returns -1 */
} trials;

static int cap_trial(void *ctx, bool reset)
{
    (void)ctx;
    if (trials.fail)
        return -1;
    if (reset)
        trials.resets++;
    else
        trials.estops++;
    return 0;
}

static struct kn_rules *R;
static uint64_t now;
static void (*tweak)(struct kn_rules_params *p); /* changes make()'s parameters */

static struct kn_rules *make(uint32_t max_peers)
{
    memset(&cap, 0, sizeof cap);
    struct kn_rules_params p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "kenaf-test");
    p.backend_id = KN_KRP_BACKEND_ENGINE;
    p.capabilities = KN_KRP_CAP_GROUND_TRUTH;
    p.counts_per_m = 5000;
    p.max_speed_mm_s = 800;
    p.flipper_min_cdeg = -11950;
    p.flipper_max_cdeg = 11950;
    p.watchdog_ms = 500;
    p.stale_ms = 500;
    p.battery_v = 24.0;
    p.max_peers = max_peers;
    if (tweak)
        tweak(&p);
    struct kn_rules_io io = {
        .send = cap_send, .command = cap_command, .step = cap_step, .trial = cap_trial
    };
    memset(&trials, 0, sizeof trials);
    memset(&steps, 0, sizeof steps);
    now = T0;
    return kn_rules_new(&p, &io, now);
}

static void setup(void)
{
    R = make(0);
    ck_assert_ptr_nonnull(R);
    kn_rules_backend(R, true);
}

static void teardown(void)
{
    kn_rules_free(R);
    R = NULL;
    tweak = NULL;
}

/* The fixture's robot again, with make()'s parameters changed by t. */
static void remake(void (*t)(struct kn_rules_params *p))
{
    kn_rules_free(R);
    tweak = t;
    R = make(0);
    kn_rules_backend(R, true);
}

static struct kn_addr peer(int n)
{
    struct kn_addr a;
    memset(&a, 0, sizeof a);
    struct sockaddr_in *s = (struct sockaddr_in *)&a.ss;
    s->sin_family = AF_INET;
    s->sin_port = htons((uint16_t)(20000 + n % 40000));
    s->sin_addr.s_addr = htonl(0x7f000001u + (uint32_t)(n / 40000));
    a.len = sizeof *s;
    return a;
}

static void feed_raw(int from, const uint8_t *buf, size_t len)
{
    struct kn_addr a = peer(from);
    kn_rules_datagram(R, &a, buf, len, now);
}

static void feed(int from, const struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    feed_raw(from, buf, n);
}

static void crawler(int from, uint32_t seq, uint16_t flags, int32_t l, int32_t r)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, seq, flags);
    m.u.crawler.left_mm_s = l;
    m.u.crawler.right_mm_s = r;
    feed(from, &m);
}

static void flipper(int from, uint32_t seq, uint16_t flags, uint8_t mask, int32_t a, int32_t b,
                    int32_t c, int32_t d)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_FLIPPER, seq, flags);
    m.u.flipper.mask = mask;
    m.u.flipper.target_cdeg[0] = a;
    m.u.flipper.target_cdeg[1] = b;
    m.u.flipper.target_cdeg[2] = c;
    m.u.flipper.target_cdeg[3] = d;
    feed(from, &m);
}

static void simple(int from, uint8_t type, uint32_t seq, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, seq, flags);
    feed(from, &m);
}

static void subscribe(int from, uint32_t seq, uint16_t flags, uint16_t period)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, seq, flags);
    m.u.subscribe.period_ms = period;
    feed(from, &m);
}

static void estop(int from, uint32_t seq, uint16_t flags, uint8_t v)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ESTOP, seq, flags);
    m.u.estop.engage = v;
    feed(from, &m);
}

static const struct kn_krp_msg *next_out(void)
{
    ck_assert_msg(cap.rd < cap.nout, "expected another answer");
    return &cap.out[cap.rd++].m;
}

static void expect_none(void)
{
    ck_assert_msg(cap.rd == cap.nout, "unexpected answer %s",
                  kn_krp_type_name(cap.out[cap.rd].m.h.type));
}

static void expect_error(uint8_t code, uint32_t seq, uint8_t type)
{
    const struct kn_krp_msg *m = next_out();
    ck_assert_uint_eq(m->h.type, KN_KRP_ERROR);
    ck_assert_uint_eq(m->u.error.code, code);
    ck_assert_uint_eq(m->u.error.offending_seq, seq);
    ck_assert_uint_eq(m->u.error.offending_type, type);
}

static void expect_ack(uint32_t seq, uint8_t type)
{
    const struct kn_krp_msg *m = next_out();
    ck_assert_msg(m->h.type == KN_KRP_ACK, "expected ACK, got %s", kn_krp_type_name(m->h.type));
    ck_assert_uint_eq(m->u.ack.acked_seq, seq);
    ck_assert_uint_eq(m->u.ack.acked_type, type);
}

static struct kn_krp_status status_of(int from, uint32_t seq)
{
    simple(from, KN_KRP_STATUS_REQ, seq, 0);
    const struct kn_krp_msg *m = next_out();
    ck_assert_uint_eq(m->h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(m->u.status.req_seq, seq);
    return m->u.status;
}

static const struct kn_rules_stats *st(void)
{
    return kn_rules_stats(R);
}

static void advance(uint64_t ns)
{
    uint64_t end = now + ns;
    /* Step through every deadline on the way, as the timer would. */
    for (;;) {
        uint64_t d = kn_rules_next_deadline(R);
        if (d > end)
            break;
        if (d > now)
            now = d;
        kn_rules_tick(R, now);
    }
    now = end;
    kn_rules_tick(R, now);
}

/* ---- handshake, status ---- */

START_TEST(hello_ack_fields)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, 1, 0);
    strcpy(m.u.hello.name, "console");
    feed(1, &m);
    const struct kn_krp_msg *a = next_out();
    ck_assert_uint_eq(a->h.type, KN_KRP_HELLO_ACK);
    ck_assert_uint_eq(a->u.hello_ack.protocol, 1);
    ck_assert_uint_eq(a->u.hello_ack.simulated, 1);
    ck_assert_uint_eq(a->u.hello_ack.backend, KN_KRP_BACKEND_ENGINE);
    ck_assert_str_eq(a->u.hello_ack.robot_name, "kenaf-test");
    ck_assert_uint_eq(a->u.hello_ack.capabilities,
                      KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_SESSIONS | KN_KRP_CAP_ESTOP_INFO);
    ck_assert(!a->u.hello_ack.session); /* a plain HELLO gets the 40-byte answer */
    ck_assert_int_eq(a->u.hello_ack.counts_per_m, 5000);
    ck_assert_int_eq(a->u.hello_ack.max_speed_mm_s, 800);
    ck_assert_int_eq(a->u.hello_ack.flipper_min_cdeg, -11950);
    ck_assert_int_eq(a->u.hello_ack.flipper_max_cdeg, 11950);
    expect_none();
    ck_assert_uint_eq(st()->in_type[KN_KRP_HELLO], 1);
    ck_assert_uint_eq(st()->out_type[KN_KRP_HELLO_ACK], 1);
    ck_assert_uint_eq(cap.ncmd, 0);
}
END_TEST

START_TEST(robot_seq_one_counter)
{
    simple(1, KN_KRP_STATUS_REQ, 1, 0);
    simple(2, KN_KRP_STATUS_REQ, 1, 0);
    simple(1, KN_KRP_HELLO, 2, 0);
    ck_assert_int_eq(cap.nout, 3);
    ck_assert_uint_eq(cap.out[1].m.h.seq, cap.out[0].m.h.seq + 1);
    ck_assert_uint_eq(cap.out[2].m.h.seq, cap.out[1].m.h.seq + 1);
}
END_TEST

START_TEST(status_from_latest_state)
{
    struct kn_krp_status s = status_of(1, 7);
    ck_assert_uint_eq(s.flags, KN_KRP_ST_SIMULATED | KN_KRP_ST_BACKEND_UP | KN_KRP_ST_STALE);
    ck_assert_uint_eq(s.battery_mv, 24000); /* from the config: no state yet */

    struct kn_state x;
    memset(&x, 0, sizeof x);
    x.time_s = 12.5;
    x.belt_pos_m[0] = 1.0;
    x.belt_speed_m_s[1] = 0.25;
    x.pos_m[0] = 2.0;
    x.battery_v = 23.1;
    x.have =
        KN_HAVE_TIME | KN_HAVE_BELT_POS | KN_HAVE_BELT_SPEED | KN_HAVE_POSITION | KN_HAVE_BATTERY;
    kn_rules_state(R, &x, now);
    s = status_of(1, 8);
    struct kn_krp_status want;
    kn_conv_state_to_krp(&x, 5000, &want);
    ck_assert_uint_eq(s.time_us, want.time_us);
    ck_assert_int_eq(s.crawler_count[0], want.crawler_count[0]);
    ck_assert_int_eq(s.crawler_speed_mm_s[1], 250);
    ck_assert_int_eq(s.pos_mm[0], 2000);
    ck_assert_uint_eq(s.battery_mv, 23100);
    ck_assert_uint_eq(s.flags, KN_KRP_ST_SIMULATED | KN_KRP_ST_BACKEND_UP);

    now += 501 * MS; /* older than stale_ms */
    s = status_of(1, 9);
    ck_assert(s.flags & KN_KRP_ST_STALE);
    kn_rules_backend(R, false);
    s = status_of(1, 10);
    ck_assert(!(s.flags & KN_KRP_ST_BACKEND_UP));
}
END_TEST

/* ---- set-points, clamping, ACK ---- */

START_TEST(crawler_command_and_ack)
{
    crawler(1, 5, KN_KRP_F_ACK_REQ, 300, -200);
    expect_ack(5, KN_KRP_CRAWLER);
    expect_none();
    ck_assert_int_eq(cap.ncmd, 1);
    ck_assert_double_eq_tol(cap.cmd[0].belt_speed_m_s[0], 0.3, 1e-12);
    ck_assert_double_eq_tol(cap.cmd[0].belt_speed_m_s[1], -0.2, 1e-12);
    ck_assert_uint_eq(cap.cmd[0].flipper_mask, 0);
    ck_assert_uint_eq(cap.cmd_t[0], now);
    /* without ACK_REQ: no answer */
    crawler(1, 6, 0, 100, 100);
    expect_none();
    /* unknown flag bits are ignored (TOKEN is known: it adds a token) */
    crawler(1, 7, 0xFFFE & ~KN_KRP_F_TOKEN, 100, 100);
    expect_none();
    crawler(1, 8, 0xFFFF & ~KN_KRP_F_TOKEN, 100, 100);
    expect_ack(8, KN_KRP_CRAWLER);
}
END_TEST

START_TEST(crawler_clamped)
{
    crawler(1, 1, KN_KRP_F_ACK_REQ, 2000, -900);
    expect_error(KN_KRP_ERR_RANGE, 1, KN_KRP_CRAWLER);
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_double_eq_tol(cap.cmd[0].belt_speed_m_s[0], 0.8, 1e-12);
    ck_assert_double_eq_tol(cap.cmd[0].belt_speed_m_s[1], -0.8, 1e-12);
    ck_assert(status_of(1, 2).flags & KN_KRP_ST_CLAMPED);
    ck_assert_uint_eq(st()->clamped, 1);
    ck_assert_uint_eq(st()->errors_sent[KN_KRP_ERR_RANGE], 1);
    /* INT32 extremes clamp too */
    crawler(1, 3, 0, INT32_MIN, INT32_MAX);
    expect_error(KN_KRP_ERR_RANGE, 3, KN_KRP_CRAWLER);
    ck_assert_double_eq_tol(cap.cmd[1].belt_speed_m_s[0], -0.8, 1e-12);
    /* an in-range set-point clears CLAMPED */
    crawler(1, 4, 0, 800, -800);
    expect_none();
    ck_assert(!(status_of(1, 5).flags & KN_KRP_ST_CLAMPED));
}
END_TEST

START_TEST(flipper_mask_and_clamp)
{
    flipper(1, 1, KN_KRP_F_ACK_REQ, 0x05, 4500, 99999, -20000, 0);
    expect_error(KN_KRP_ERR_RANGE, 1, KN_KRP_FLIPPER);
    expect_ack(1, KN_KRP_FLIPPER);
    ck_assert_int_eq(cap.ncmd, 1);
    ck_assert_uint_eq(cap.cmd[0].flipper_mask, 0x05);
    ck_assert_double_eq_tol(cap.cmd[0].flipper_rad[0], kn_conv_cdeg_to_rad(4500), 1e-12);
    ck_assert_double_eq_tol(cap.cmd[0].flipper_rad[2], kn_conv_cdeg_to_rad(-11950), 1e-12);
    ck_assert(status_of(1, 2).flags & KN_KRP_ST_CLAMPED);
    /* unmasked out-of-range targets are not looked at */
    flipper(1, 3, 0, 0xF2, 0, 100, 0, 99999);
    expect_none();
    ck_assert_uint_eq(cap.cmd[1].flipper_mask, 0x02);
    ck_assert(!(status_of(1, 4).flags & KN_KRP_ST_CLAMPED));
    /* FLIPPER does not feed or arm the watchdog */
    advance(2000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
}
END_TEST

START_TEST(stop_holds_flippers_clears_flags)
{
    struct kn_state x;
    memset(&x, 0, sizeof x);
    x.flipper_rad[0] = 0.5;
    x.flipper_rad[3] = -0.25;
    x.have = KN_HAVE_FLIPPER;
    kn_rules_state(R, &x, now);
    crawler(1, 1, 0, 5000, 5000); /* clamped */
    expect_error(KN_KRP_ERR_RANGE, 1, KN_KRP_CRAWLER);
    simple(1, KN_KRP_STOP, 2, KN_KRP_F_ACK_REQ);
    expect_ack(2, KN_KRP_STOP);
    ck_assert_int_eq(cap.ncmd, 2);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[0], 0);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[1], 0);
    ck_assert_uint_eq(cap.cmd[1].flipper_mask, 0x0F);
    ck_assert_double_eq(cap.cmd[1].flipper_rad[0], 0.5);
    ck_assert_double_eq(cap.cmd[1].flipper_rad[3], -0.25);
    ck_assert(!(status_of(1, 3).flags & KN_KRP_ST_CLAMPED));
}
END_TEST

/* ---- seq ordering ---- */

START_TEST(seq_older_ignored_shared_mark)
{
    crawler(1, 100, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(100, KN_KRP_CRAWLER);
    crawler(1, 99, KN_KRP_F_ACK_REQ, 500, 500);        /* older: ignored, no ACK */
    flipper(1, 98, KN_KRP_F_ACK_REQ, 1, 100, 0, 0, 0); /* same mark for FLIPPER */
    expect_none();
    ck_assert_uint_eq(st()->drop_stale_seq, 2);
    ck_assert_int_eq(cap.ncmd, 1);
    /* STOP is never ignored but does not move the mark back */
    simple(1, KN_KRP_STOP, 50, KN_KRP_F_ACK_REQ);
    expect_ack(50, KN_KRP_STOP);
    ck_assert_int_eq(cap.ncmd, 2);
    crawler(1, 99, KN_KRP_F_ACK_REQ, 500, 500);
    expect_none();
    /* STOP with a newer seq moves the mark */
    simple(1, KN_KRP_STOP, 200, 0);
    crawler(1, 150, KN_KRP_F_ACK_REQ, 500, 500);
    expect_none();
    crawler(1, 201, KN_KRP_F_ACK_REQ, 500, 500);
    expect_ack(201, KN_KRP_CRAWLER);
    /* the same seq again is not older: applied */
    crawler(1, 201, KN_KRP_F_ACK_REQ, 400, 400);
    expect_ack(201, KN_KRP_CRAWLER);
    /* marks are per sender: peer 2 drives once peer 1 has left, from seq 1 */
    simple(1, KN_KRP_BYE, 202, 0);
    crawler(2, 1, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->drop_stale_seq, 4);
}
END_TEST

START_TEST(seq_wraps_rfc1982)
{
    crawler(1, 0xFFFFFFF0u, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(0xFFFFFFF0u, KN_KRP_CRAWLER);
    crawler(1, 5, KN_KRP_F_ACK_REQ, 100, 100); /* newer across the wrap */
    expect_ack(5, KN_KRP_CRAWLER);
    crawler(1, 0xFFFFFFFEu, KN_KRP_F_ACK_REQ, 100, 100); /* older across the wrap */
    expect_none();
    /* exactly 2^31 apart: neither is older, applied */
    crawler(1, 5u + 0x80000000u, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(5u + 0x80000000u, KN_KRP_CRAWLER);
}
END_TEST

START_TEST(seq_mark_forgotten_on_hello_and_silence)
{
    crawler(1, 1000, 0, 100, 100);
    simple(1, KN_KRP_HELLO, 1001, 0);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_HELLO_ACK);
    crawler(1, 1, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(1, KN_KRP_CRAWLER);

    crawler(1, 2000, 0, 100, 100);
    now += 4999 * MS; /* still within 5 s */
    crawler(1, 3, KN_KRP_F_ACK_REQ, 100, 100);
    expect_none();
    now += 5000 * MS; /* 5 s of silence */
    crawler(1, 3, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(3, KN_KRP_CRAWLER);
    ck_assert_uint_ge(st()->marks_forgotten, 2);
}
END_TEST

START_TEST(ignored_setpoint_does_not_feed_watchdog)
{
    crawler(1, 10, 0, 300, 300);
    advance(400 * MS);
    crawler(1, 9, 0, 300, 300); /* stale: must not feed */
    advance(150 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    ck_assert_double_eq(cap.cmd[cap.ncmd - 1].belt_speed_m_s[0], 0);
}
END_TEST

/* ---- watchdog ---- */

START_TEST(watchdog_trips_and_clears)
{
    advance(2000 * MS); /* not armed before the first CRAWLER */
    ck_assert_int_eq(cap.ncmd, 0);
    crawler(1, 1, 0, 300, 300);
    advance(499 * MS);
    ck_assert_int_eq(cap.ncmd, 1);
    /* STATUS_REQ and SUBSCRIBE do not feed it */
    simple(1, KN_KRP_STATUS_REQ, 2, 0);
    subscribe(1, 3, 0, 1000);
    advance(1 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    ck_assert_int_eq(cap.ncmd, 2);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[0], 0);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[1], 0);
    ck_assert_uint_eq(cap.cmd[1].flipper_mask, 0);
    cap.rd = cap.nout;
    ck_assert(status_of(1, 4).flags & KN_KRP_ST_WATCHDOG);
    /* not armed again until the next CRAWLER */
    advance(3000 * MS);
    cap.rd = cap.nout;
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    crawler(1, 5, 0, 100, 100);
    ck_assert(!(status_of(1, 6).flags & KN_KRP_ST_WATCHDOG));
    /* fed by the driver's CRAWLER; another peer's is refused and feeds nothing */
    for (int i = 0; i < 10; i++) {
        advance(300 * MS);
        crawler(1, 100 + (uint32_t)i, 0, 100, 100);
        crawler(2 + i % 2, 100 + (uint32_t)i, 0, 100, 100);
    }
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    ck_assert_uint_eq(st()->not_owner, 10);
    advance(500 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 2);
    /* STOP clears WATCHDOG */
    cap.rd = cap.nout;
    ck_assert(status_of(1, 7).flags & KN_KRP_ST_WATCHDOG);
    simple(1, KN_KRP_STOP, 8, 0);
    ck_assert(!(status_of(1, 9).flags & KN_KRP_ST_WATCHDOG));
}
END_TEST

/* A STOP disarms the watchdog until the next CRAWLER: a robot told to
 * stand still is not guarded (kenaf-console stops this way when a key is
 * released, and must not see WATCHDOG afterwards), while the next
 * set-point arms it again. */
START_TEST(stop_disarms_watchdog)
{
    crawler(1, 1, 0, 300, 300);
    advance(200 * MS);
    simple(1, KN_KRP_STOP, 2, 0);
    advance(3000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    cap.rd = cap.nout;
    ck_assert(!(status_of(1, 3).flags & KN_KRP_ST_WATCHDOG));
    crawler(1, 4, 0, 300, 300);
    advance(499 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    advance(1 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    cap.rd = cap.nout;
    ck_assert(status_of(1, 5).flags & KN_KRP_ST_WATCHDOG);
}
END_TEST

/* A zero CRAWLER is a robot told to stand still: it disarms the watchdog
 * like STOP (no trip, no WATCHDOG when the controller then falls quiet),
 * while one belt still moving keeps it armed. */
START_TEST(zero_setpoint_disarms_watchdog)
{
    crawler(1, 1, 0, 300, 300);
    advance(200 * MS);
    crawler(1, 2, 0, 0, 0);
    advance(3000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    cap.rd = cap.nout;
    ck_assert(!(status_of(1, 3).flags & KN_KRP_ST_WATCHDOG));
    crawler(1, 4, 0, 0, 100); /* one belt moving: guarded */
    advance(500 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    cap.rd = cap.nout;
    ck_assert(status_of(1, 5).flags & KN_KRP_ST_WATCHDOG);
}
END_TEST

static void step(int from, uint32_t seq, uint32_t us)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STEP, seq, 0);
    m.u.step.advance_us = us;
    feed(from, &m);
}

static void lockstep_on(struct kn_rules_params *p)
{
    p->lockstep = true;
}

/* Without lockstep a STEP is a type the robot does not know (as on the
 * real robot), and nothing reaches the simulator. */
START_TEST(step_without_lockstep_is_unknown)
{
    step(1, 1, 20000);
    expect_error(KN_KRP_ERR_UNKNOWN_TYPE, 1, KN_KRP_STEP);
    expect_none();
    ck_assert_int_eq(steps.n, 0);
    ck_assert_uint_eq(st()->step_refused, 1);
}
END_TEST

/* Lockstep: the STEP goes to the simulator; its STATUS (req_seq = the
 * STEP's seq, the state it left) comes when the simulator has run; one
 * at a time; the range is checked; the watchdog never arms. */
START_TEST(step_in_lockstep)
{
    remake(lockstep_on);
    crawler(1, 1, 0, 300, 300);
    expect_none();
    step(1, 2, 20000);
    expect_none(); /* nothing before the simulator is done */
    ck_assert_int_eq(steps.n, 1);
    ck_assert_uint_eq(steps.us[0], 20000);
    step(1, 3, 20000);
    expect_error(KN_KRP_ERR_BUSY, 3, KN_KRP_STEP);
    struct kn_state x;
    memset(&x, 0, sizeof x);
    x.have = KN_HAVE_TIME;
    x.time_s = 0.02;
    kn_rules_state(R, &x, now);
    kn_rules_stepped(R, true, now);
    const struct kn_krp_msg *m = next_out();
    ck_assert_uint_eq(m->h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(m->u.status.req_seq, 2);
    ck_assert(m->u.status.time_us == 20000);
    kn_rules_stepped(R, true, now); /* a second end: nothing pending */
    expect_none();
    step(1, 4, 999);
    expect_error(KN_KRP_ERR_RANGE, 4, KN_KRP_STEP);
    step(1, 5, KN_KRP_STEP_MAX_US + 1);
    expect_error(KN_KRP_ERR_RANGE, 5, KN_KRP_STEP);
    /* another peer does not drive */
    step(2, 1, 20000);
    expect_error(KN_KRP_ERR_NOT_OWNER, 1, KN_KRP_STEP);
    /* the belts held for seconds of wall time without a CRAWLER: no trip */
    advance(3000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    /* the simulator lost during a STEP: BACKEND_DOWN for it */
    step(1, 6, 20000);
    kn_rules_stepped(R, false, now);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 6, KN_KRP_STEP);
    /* down, or unable to step: refused at once */
    kn_rules_backend(R, false);
    step(1, 7, 20000);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 7, KN_KRP_STEP);
    kn_rules_backend(R, true);
    steps.fail = 1;
    step(1, 8, 20000);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 8, KN_KRP_STEP);
    ck_assert_uint_eq(st()->steps, 2);
    ck_assert_uint_eq(st()->steps_done, 1);
    ck_assert_uint_eq(st()->steps_failed, 1);
    ck_assert_uint_eq(st()->step_busy, 1);
    ck_assert_uint_eq(st()->step_range, 2);
}
END_TEST

START_TEST(watchdog_configurable)
{
    kn_rules_free(R);
    R = make(0);
    /* make() sets 500 ms; build one with 200 ms */
    kn_rules_free(R);
    struct kn_rules_params p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "x");
    p.max_speed_mm_s = 800;
    p.watchdog_ms = 200;
    p.stale_ms = 500;
    struct kn_rules_io io = { .send = cap_send, .command = cap_command };
    R = kn_rules_new(&p, &io, now);
    crawler(1, 1, 0, 100, 100);
    advance(199 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    advance(1 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 1);
}
END_TEST

/* ---- e-stop ---- */

START_TEST(estop_latch)
{
    crawler(1, 1, 0, 300, 300);
    estop(1, 2, KN_KRP_F_ACK_REQ, 1);
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert_int_eq(cap.ncmd, 2);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[0], 0);
    ck_assert(status_of(1, 3).flags & KN_KRP_ST_ESTOP);
    crawler(1, 4, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_ESTOP, 4, KN_KRP_CRAWLER);
    flipper(1, 1, KN_KRP_F_ACK_REQ, 1, 100, 0, 0, 0);
    expect_error(KN_KRP_ERR_ESTOP, 1, KN_KRP_FLIPPER);
    expect_none();
    ck_assert_int_eq(cap.ncmd, 2);
    ck_assert_uint_eq(st()->estop_refused, 2);
    /* refused commands do not feed or arm the watchdog */
    advance(1000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
    /* a bad ESTOP value: RANGE, ignored, no ACK */
    estop(1, 5, KN_KRP_F_ACK_REQ, 2);
    expect_error(KN_KRP_ERR_RANGE, 5, KN_KRP_ESTOP);
    expect_none();
    ck_assert(status_of(1, 6).flags & KN_KRP_ST_ESTOP);
    /* released: stays stopped until a new CRAWLER */
    estop(1, 7, KN_KRP_F_ACK_REQ, 0);
    expect_ack(7, KN_KRP_ESTOP);
    ck_assert(!(status_of(1, 8).flags & KN_KRP_ST_ESTOP));
    ck_assert_int_eq(cap.ncmd, 2);
    struct kn_command sp;
    kn_rules_setpoints(R, &sp);
    ck_assert_double_eq(sp.belt_speed_m_s[0], 0);
    flipper(1, 9, 0, 1, 100, 0, 0, 0); /* flippers may move, belts stay 0 */
    ck_assert_double_eq(cap.cmd[2].belt_speed_m_s[0], 0);
    crawler(1, 10, KN_KRP_F_ACK_REQ, 200, 200);
    expect_ack(10, KN_KRP_CRAWLER);
    ck_assert_double_eq_tol(cap.cmd[3].belt_speed_m_s[0], 0.2, 1e-12);
    /* the CRAWLER refused during ESTOP did not move the mark */
    estop(1, 11, 0, 1);
    estop(1, 12, 0, 0);
    estop(1, 13, 0, 1);
    crawler(1, 30, 0, 100, 100); /* refused */
    estop(1, 14, 0, 0);
    crawler(1, 15, KN_KRP_F_ACK_REQ, 100, 100); /* older than 30, newer than the mark 10 */
    cap.rd = cap.nout - 1;
    expect_ack(15, KN_KRP_CRAWLER);
}
END_TEST

/* ---- subscriptions ---- */

static int pushes_to(int who, int from_index)
{
    struct kn_addr a = peer(who);
    int n = 0;
    for (int i = from_index; i < cap.nout; i++)
        if (cap.out[i].m.h.type == KN_KRP_STATUS && cap.out[i].m.u.status.req_seq == 0 &&
            kn_addr_equal(&cap.out[i].to, &a))
            n++;
    return n;
}

START_TEST(subscribe_push_and_cancel)
{
    subscribe(1, 1, KN_KRP_F_ACK_REQ, 100);
    expect_ack(1, KN_KRP_SUBSCRIBE);
    int mark = cap.nout;
    advance(1000 * MS);
    ck_assert_int_eq(pushes_to(1, mark), 10);
    ck_assert_uint_eq(kn_rules_subscribers(R), 1);
    /* a new period replaces the old one, same slot */
    subscribe(1, 2, 0, 250);
    mark = cap.nout;
    advance(1000 * MS);
    ck_assert_int_eq(pushes_to(1, mark), 4);
    ck_assert_uint_eq(kn_rules_subscribers(R), 1);
    subscribe(1, 3, KN_KRP_F_ACK_REQ, 0);
    cap.rd = cap.nout - 1;
    expect_ack(3, KN_KRP_SUBSCRIBE);
    mark = cap.nout;
    advance(1000 * MS);
    ck_assert_int_eq(pushes_to(1, mark), 0);
    ck_assert_uint_eq(kn_rules_subscribers(R), 0);
    ck_assert_uint_eq(st()->sub_cancelled, 1);
}
END_TEST

START_TEST(subscribe_period_clamped)
{
    subscribe(1, 1, KN_KRP_F_ACK_REQ, 5);
    expect_error(KN_KRP_ERR_RANGE, 1, KN_KRP_SUBSCRIBE);
    expect_ack(1, KN_KRP_SUBSCRIBE);
    int mark = cap.nout;
    advance(100 * MS);
    ck_assert_int_eq(pushes_to(1, mark), 10);
    subscribe(2, 1, KN_KRP_F_ACK_REQ, 5000);
    cap.rd = cap.nout - 2;
    expect_error(KN_KRP_ERR_RANGE, 1, KN_KRP_SUBSCRIBE);
    expect_ack(1, KN_KRP_SUBSCRIBE);
    mark = cap.nout;
    advance(3000 * MS);
    ck_assert_int_eq(pushes_to(2, mark), 3);
    ck_assert_uint_eq(st()->sub_clamped, 2);
}
END_TEST

/* Opens a session for `from` (observer or driver); returns its token. */
static uint32_t open_session(int from, uint32_t seq, bool observe, uint8_t want_role)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, seq, KN_KRP_F_SESSION | (observe ? KN_KRP_F_OBSERVER : 0));
    strcpy(m.u.hello.name, "client");
    feed(from, &m);
    const struct kn_krp_msg *a = next_out();
    ck_assert_uint_eq(a->h.type, KN_KRP_HELLO_ACK);
    ck_assert(a->u.hello_ack.session);
    ck_assert_uint_eq(a->u.hello_ack.role, want_role);
    ck_assert_uint_ne(a->u.hello_ack.token, 0);
    return a->u.hello_ack.token;
}

/* Sends m from `from` with the session token. */
static void feed_token(int from, struct kn_krp_msg *m, uint32_t token)
{
    m->h.flags |= KN_KRP_F_TOKEN;
    m->h.token = token;
    feed(from, m);
}

static void subscribe_token(int from, uint32_t seq, uint32_t token, uint16_t period)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, seq, KN_KRP_F_ACK_REQ);
    m.u.subscribe.period_ms = period;
    feed_token(from, &m, token);
}

/* Eight slots: one kept for the driver, at most four for peers without a
 * session token, the rest for session observers. */
START_TEST(subscribe_max_8_busy)
{
    for (int i = 1; i <= 4; i++) { /* plain peers: four slots */
        subscribe(i, 1, KN_KRP_F_ACK_REQ, 100);
        expect_ack(1, KN_KRP_SUBSCRIBE);
    }
    subscribe(5, 1, KN_KRP_F_ACK_REQ, 100);
    expect_error(KN_KRP_ERR_BUSY, 1, KN_KRP_SUBSCRIBE);
    uint32_t tok[12];
    for (int i = 10; i < 13; i++) { /* session observers: three more */
        tok[i - 10] = open_session(i, 1, true, KN_KRP_ROLE_OBSERVER);
        subscribe_token(i, 2, tok[i - 10], 100);
        expect_ack(2, KN_KRP_SUBSCRIBE);
    }
    ck_assert_uint_eq(kn_rules_subscribers(R), 7);
    uint32_t t13 = open_session(13, 1, true, KN_KRP_ROLE_OBSERVER);
    subscribe_token(13, 2, t13, 100);
    expect_error(KN_KRP_ERR_BUSY, 2, KN_KRP_SUBSCRIBE);
    expect_none();
    /* the driver always finds its slot */
    crawler(20, 1, 0, 0, 0);
    subscribe(20, 2, KN_KRP_F_ACK_REQ, 100);
    expect_ack(2, KN_KRP_SUBSCRIBE);
    ck_assert_uint_eq(kn_rules_subscribers(R), 8);
    /* an existing subscriber may still change its period */
    subscribe(3, 2, KN_KRP_F_ACK_REQ, 200);
    expect_ack(2, KN_KRP_SUBSCRIBE);
    /* a cancel frees a slot; BYE ends a session and its subscription */
    subscribe(1, 2, 0, 0);
    subscribe(5, 2, KN_KRP_F_ACK_REQ, 100);
    expect_ack(2, KN_KRP_SUBSCRIBE);
    struct kn_krp_msg bye;
    kn_krp_init(&bye, KN_KRP_BYE, 3, 0);
    feed_token(10, &bye, tok[0]);
    ck_assert_uint_eq(kn_rules_subscribers(R), 7);
    subscribe_token(13, 3, t13, 100);
    expect_ack(3, KN_KRP_SUBSCRIBE);
    ck_assert_uint_eq(st()->sub_busy, 2);
}
END_TEST

START_TEST(subscribe_lease)
{
    subscribe(1, 1, 0, 1000);
    subscribe(2, 1, 0, 1000);
    /* peer 2 keeps its lease alive with any datagram, even a bad one */
    for (int i = 0; i < 12; i++) {
        advance(500 * MS);
        if (i % 2 == 0) {
            uint8_t junk[5] = { 0x4B, 0x4E, 1, 5, 0 }; /* good magic, short */
            feed_raw(2, junk, sizeof junk);
        } else {
            simple(2, KN_KRP_STATUS_REQ, 10 + (uint32_t)i, 0);
        }
    }
    ck_assert_uint_eq(kn_rules_subscribers(R), 1);
    ck_assert_uint_eq(st()->sub_lapsed, 1);
    int mark = cap.nout;
    advance(2000 * MS);
    ck_assert_int_eq(pushes_to(1, mark), 0);
    ck_assert_int_ge(pushes_to(2, mark), 1);
}
END_TEST

/* ---- envelope errors ---- */

START_TEST(envelope_errors)
{
    uint8_t buf[600];
    memset(buf, 0, sizeof buf);
    /* bad magic: silent, counted */
    buf[0] = 'X';
    buf[1] = 'Y';
    feed_raw(1, buf, 20);
    feed_raw(1, buf, 1);
    expect_none();
    ck_assert_uint_eq(st()->drop_bad_magic, 2);
    ck_assert_uint_eq(kn_rules_peers(R)->used, 0); /* no state for junk */
    /* good magic, short header: BAD_LENGTH with seq/type 0 */
    buf[0] = 0x4B;
    buf[1] = 0x4E;
    buf[2] = 1;
    buf[3] = KN_KRP_CRAWLER;
    buf[4] = 9;
    feed_raw(1, buf, 7);
    expect_error(KN_KRP_ERR_BAD_LENGTH, 0, 0);
    /* over 512 bytes: BAD_LENGTH, header not trusted */
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STOP, 33, 0);
    kn_krp_encode(&m, buf, sizeof buf);
    feed_raw(1, buf, 513);
    expect_error(KN_KRP_ERR_BAD_LENGTH, 0, 0);
    /* wrong length field */
    kn_krp_init(&m, KN_KRP_CRAWLER, 34, 0);
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    feed_raw(1, buf, n - 1);
    expect_error(KN_KRP_ERR_BAD_LENGTH, 34, KN_KRP_CRAWLER);
    /* length consistent but wrong for the type */
    buf[8] = 4;
    feed_raw(1, buf, 16);
    expect_error(KN_KRP_ERR_BAD_LENGTH, 34, KN_KRP_CRAWLER);
    /* bad version */
    kn_krp_init(&m, KN_KRP_STOP, 35, 0);
    n = kn_krp_encode(&m, buf, sizeof buf);
    buf[2] = 2;
    feed_raw(1, buf, n);
    expect_error(KN_KRP_ERR_BAD_VERSION, 35, KN_KRP_STOP);
    /* unknown type */
    buf[2] = 1;
    buf[3] = 0x42;
    feed_raw(1, buf, n);
    expect_error(KN_KRP_ERR_UNKNOWN_TYPE, 35, 0x42);
    /* robot->controller types sent to the robot */
    kn_krp_init(&m, KN_KRP_STATUS, 36, 0);
    feed(1, &m);
    expect_error(KN_KRP_ERR_UNKNOWN_TYPE, 36, KN_KRP_STATUS);
    kn_krp_init(&m, KN_KRP_ACK, 37, 0);
    feed(1, &m);
    expect_error(KN_KRP_ERR_UNKNOWN_TYPE, 37, KN_KRP_ACK);
    expect_none();
    ck_assert_uint_eq(st()->envelope[KN_KRP_ESHORT], 1);
    ck_assert_uint_eq(st()->envelope[KN_KRP_ETOOBIG], 1);
    ck_assert_uint_eq(st()->envelope[KN_KRP_ELENGTH], 1);
    ck_assert_uint_eq(st()->envelope[KN_KRP_EPAYLOAD], 1);
    ck_assert_uint_eq(st()->envelope[KN_KRP_EVERSION], 1);
    ck_assert_uint_eq(st()->envelope[KN_KRP_ETYPE], 1);
    ck_assert_uint_eq(st()->not_to_robot, 2);
    ck_assert_uint_eq(st()->errors_sent[KN_KRP_ERR_BAD_LENGTH], 4);
    ck_assert_int_eq(cap.ncmd, 0);
}
END_TEST

START_TEST(error_rate_limit_per_peer)
{
    uint8_t bad[12] = { 0x4B, 0x4E, 9, KN_KRP_STOP, 1, 0, 0, 0, 0, 0, 0, 0 };
    for (int i = 0; i < 25; i++)
        feed_raw(1, bad, sizeof bad);
    ck_assert_int_eq(cap.nout, 10);
    ck_assert_uint_eq(st()->drop_rate_limited, 15);
    /* the bucket covers every ERROR: RANGE is limited too */
    crawler(1, 1, 0, 9999, 0);
    ck_assert_int_eq(cap.nout, 10);
    /* other peers have their own bucket */
    feed_raw(2, bad, sizeof bad);
    ck_assert_int_eq(cap.nout, 11);
    /* 10 per second refill */
    now += 100 * MS;
    feed_raw(1, bad, sizeof bad);
    feed_raw(1, bad, sizeof bad);
    ck_assert_int_eq(cap.nout, 12);
    now += 1000 * MS;
    for (int i = 0; i < 15; i++)
        feed_raw(1, bad, sizeof bad);
    ck_assert_int_eq(cap.nout, 22);
    /* ACKs are not limited */
    crawler(1, 2, KN_KRP_F_ACK_REQ, 100, 100);
    ck_assert_int_eq(cap.nout, 23);
}
END_TEST

/* ---- backend link ---- */

START_TEST(backend_down_error_and_stored)
{
    kn_rules_backend(R, false);
    crawler(1, 1, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 1, KN_KRP_CRAWLER);
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_int_eq(cap.ncmd, 1); /* still handed on: the link stores it */
    flipper(1, 2, 0, 1, 100, 0, 0, 0);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 2, KN_KRP_FLIPPER);
    simple(1, KN_KRP_STOP, 3, 0);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 3, KN_KRP_STOP);
    simple(1, KN_KRP_STATUS_REQ, 4, 0);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(st()->while_backend_down, 3);
    struct kn_command sp;
    kn_rules_setpoints(R, &sp);
    ck_assert_uint_eq(sp.flipper_mask, 1);
    /* clamped while down: RANGE, BACKEND_DOWN and ACK */
    crawler(1, 5, KN_KRP_F_ACK_REQ, 900, 0);
    expect_error(KN_KRP_ERR_RANGE, 5, KN_KRP_CRAWLER);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 5, KN_KRP_CRAWLER);
    expect_ack(5, KN_KRP_CRAWLER);
}
END_TEST

/* A simulator that runs without the robot's model: STALE even with fresh
 * state, set-points answered NO_MODEL and kept (then ACK); one where
 * nothing acts on flippers: FLIPPER refused with NO_ACTUATOR, not kept,
 * no ACK, the belts unaffected. Cleared, everything is accepted again. */
START_TEST(simulator_lacks_model_or_flippers)
{
    struct kn_state x;
    memset(&x, 0, sizeof x);
    x.have = KN_HAVE_TIME;
    kn_rules_state(R, &x, now);
    ck_assert_uint_eq(kn_rules_flags(R, now) & KN_KRP_ST_STALE, 0);
    kn_rules_lacks(R, true, true, false);
    ck_assert_uint_eq(kn_rules_flags(R, now) & (KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP),
                      KN_KRP_ST_STALE | KN_KRP_ST_BACKEND_UP);
    crawler(1, 1, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_NO_MODEL, 1, KN_KRP_CRAWLER);
    expect_ack(1, KN_KRP_CRAWLER);
    flipper(1, 2, KN_KRP_F_ACK_REQ, 1, 100, 0, 0, 0);
    expect_error(KN_KRP_ERR_NO_MODEL, 2, KN_KRP_FLIPPER); /* the model first */
    expect_ack(2, KN_KRP_FLIPPER);
    ck_assert_uint_eq(st()->while_no_model, 2);

    kn_rules_lacks(R, false, true, false);
    ck_assert_uint_eq(kn_rules_flags(R, now) & KN_KRP_ST_STALE, 0);
    int ncmd = cap.ncmd;
    flipper(1, 3, KN_KRP_F_ACK_REQ, 2, 0, 200, 0, 0);
    expect_error(KN_KRP_ERR_NO_ACTUATOR, 3, KN_KRP_FLIPPER);
    simple(1, KN_KRP_STATUS_REQ, 4, 0);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_STATUS); /* no ACK before it */
    ck_assert_int_eq(cap.ncmd, ncmd);                     /* nothing handed on */
    struct kn_command sp;
    kn_rules_setpoints(R, &sp);
    ck_assert_uint_eq(sp.flipper_mask, 1); /* FR's 2 deg was not kept */
    ck_assert_uint_eq(st()->no_actuator, 1);
    crawler(1, 5, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(5, KN_KRP_CRAWLER);

    kn_rules_lacks(R, false, false, false);
    flipper(1, 6, KN_KRP_F_ACK_REQ, 2, 0, 200, 0, 0);
    expect_ack(6, KN_KRP_FLIPPER);
}
END_TEST

/* A world whose model has no drive (no tracked-vehicle plugin): STALE
 * with fresh state, CRAWLER refused with NO_ACTUATOR and not kept, STOP
 * and FLIPPER still work; cleared, CRAWLER is accepted again. */
START_TEST(simulator_lacks_drive)
{
    struct kn_state x;
    memset(&x, 0, sizeof x);
    x.have = KN_HAVE_TIME;
    kn_rules_state(R, &x, now);
    kn_rules_lacks(R, false, false, true);
    ck_assert_uint_eq(kn_rules_flags(R, now) & KN_KRP_ST_STALE, KN_KRP_ST_STALE);
    int ncmd = cap.ncmd;
    crawler(1, 1, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_NO_ACTUATOR, 1, KN_KRP_CRAWLER);
    simple(1, KN_KRP_STATUS_REQ, 2, 0);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_STATUS); /* no ACK before it */
    ck_assert_int_eq(cap.ncmd, ncmd);
    struct kn_command sp;
    kn_rules_setpoints(R, &sp);
    ck_assert(sp.belt_speed_m_s[0] == 0 && sp.belt_speed_m_s[1] == 0);
    ck_assert_uint_eq(st()->no_actuator, 1);
    flipper(1, 3, KN_KRP_F_ACK_REQ, 1, 100, 0, 0, 0);
    expect_ack(3, KN_KRP_FLIPPER);
    simple(1, KN_KRP_STOP, 4, KN_KRP_F_ACK_REQ);
    expect_ack(4, KN_KRP_STOP);

    kn_rules_lacks(R, false, false, false);
    ck_assert_uint_eq(kn_rules_flags(R, now) & KN_KRP_ST_STALE, 0);
    crawler(1, 5, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(5, KN_KRP_CRAWLER);
}
END_TEST

/* ---- peer table ---- */

START_TEST(peer_table_bounded)
{
    kn_rules_free(R);
    R = make(4);
    kn_rules_backend(R, true);
    for (int i = 0; i < 4; i++)
        crawler(i, 100, 0, 100, 100); /* 0 drives, the others are refused */
    cap.rd = cap.nout;
    ck_assert_uint_eq(kn_rules_peers(R)->used, 4);
    /* a fifth while all are active: handled without state, counted; it
     * cannot drive (peer 0 does), and it can still ask for a status */
    crawler(4, 1, KN_KRP_F_ACK_REQ, 100, 100);
    expect_error(KN_KRP_ERR_NOT_OWNER, 1, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->peers_overflow, 1);
    ck_assert_uint_eq(status_of(4, 3).req_seq, 3);
    subscribe(4, 2, 0, 100);
    expect_error(KN_KRP_ERR_BUSY, 2, KN_KRP_SUBSCRIBE);
    ck_assert_uint_eq(kn_rules_peers(R)->used, 4);
    /* the driver kept its mark */
    crawler(0, 99, KN_KRP_F_ACK_REQ, 100, 100);
    expect_none();
    /* after 5 s of silence the oldest makes room (and the silent driver
     * lost the robot, so the newcomer drives) */
    now += 5000 * MS;
    crawler(3, 101, 0, 100, 100); /* 3 is active again, and drives */
    simple(3, KN_KRP_BYE, 102, 0);
    crawler(5, 1, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->peers_evicted, 1);
    ck_assert_uint_eq(kn_rules_peers(R)->used, 4);
    /* a flood of 10000 sources never grows the table */
    for (int i = 0; i < 10000; i++) {
        now += 1 * MS;
        simple(100 + i, KN_KRP_STATUS_REQ, 1, 0);
    }
    ck_assert_uint_le(kn_rules_peers(R)->used, 4);
    ck_assert_uint_gt(st()->peers_overflow, 9000); /* handled statelessly */
    ck_assert_uint_ge(st()->peers_evicted, 3);
}
END_TEST

/* ---- sessions: one driver ---- */

static void hello_plain(int from, uint32_t seq)
{
    simple(from, KN_KRP_HELLO, seq, 0);
    const struct kn_krp_msg *a = next_out();
    ck_assert_uint_eq(a->h.type, KN_KRP_HELLO_ACK);
    ck_assert(!a->u.hello_ack.session);
}

START_TEST(second_client_not_owner)
{
    hello_plain(1, 1); /* HELLOs claim nothing */
    hello_plain(2, 1);
    ck_assert_ptr_null(kn_rules_driver(R));
    crawler(1, 2, KN_KRP_F_ACK_REQ, 300, 300); /* the first set-point: the driver */
    expect_ack(2, KN_KRP_CRAWLER);
    int n = cap.ncmd;
    crawler(2, 0, KN_KRP_F_ACK_REQ, -300, 300); /* B turns: refused */
    expect_error(KN_KRP_ERR_NOT_OWNER, 0, KN_KRP_CRAWLER);
    flipper(2, 2, KN_KRP_F_ACK_REQ, 1, 100, 0, 0, 0);
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_FLIPPER);
    simple(2, KN_KRP_STOP, 3, KN_KRP_F_ACK_REQ);
    expect_error(KN_KRP_ERR_NOT_OWNER, 3, KN_KRP_STOP);
    expect_none();
    ck_assert_int_eq(cap.ncmd, n); /* the robot is unaffected */
    struct kn_command sp;
    kn_rules_setpoints(R, &sp);
    ck_assert_double_eq_tol(sp.belt_speed_m_s[1], 0.3, 1e-12);
    ck_assert_uint_eq(st()->not_owner, 3);
    /* observers may ask: STATUS_REQ, SUBSCRIBE, WORLD_REQ */
    ck_assert_uint_eq(status_of(2, 4).req_seq, 4);
    subscribe(2, 5, KN_KRP_F_ACK_REQ, 100);
    expect_ack(5, KN_KRP_SUBSCRIBE);
    struct kn_krp_msg w;
    kn_krp_init(&w, KN_KRP_WORLD_REQ, 6, 0);
    feed(2, &w);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_WORLD);
    /* a peer that never said HELLO cannot drive while someone does */
    crawler(3, 1, 0, 100, 100);
    expect_error(KN_KRP_ERR_NOT_OWNER, 1, KN_KRP_CRAWLER);
    ck_assert_ptr_nonnull(kn_rules_driver(R));
    char a[64];
    kn_addr_format(&kn_rules_driver(R)->addr, a, sizeof a);
    ck_assert_str_eq(a, "127.0.0.1:20001");
}
END_TEST

#define CONSOLE (40000 + 9)

static void one_console(struct kn_rules_params *p)
{
    struct kn_addr c = peer(CONSOLE);            /* 127.0.0.2 */
    ((struct sockaddr_in *)&c.ss)->sin_port = 0; /* every port of the address */
    p->consoles[0] = c;
    p->n_consoles = 1;
}

START_TEST(estop_release_by_engager_or_console)
{
    remake(one_console);
    crawler(1, 1, 0, 300, 300);       /* 1 drives */
    estop(2, 1, KN_KRP_F_ACK_REQ, 1); /* anyone engages */
    expect_ack(1, KN_KRP_ESTOP);
    struct kn_addr two = peer(2);
    const struct kn_rules_engagement *e;
    ck_assert_uint_eq(kn_rules_estop(R, &e), 1);
    ck_assert(kn_addr_equal(&e[0].addr, &two) && e[0].kind == KN_RULES_ENG_PLAIN);
    estop(1, 2, KN_KRP_F_ACK_REQ, 0); /* the driver did not engage it */
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_ESTOP);
    expect_none();
    ck_assert(status_of(1, 3).flags & KN_KRP_ST_ESTOP);
    ck_assert_uint_eq(st()->estop_release_refused, 1);
    estop(2, 2, KN_KRP_F_ACK_REQ, 0); /* the engager releases */
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert(!(status_of(1, 4).flags & KN_KRP_ST_ESTOP));
    estop(1, 5, 0, 1);
    estop(2, 3, 0, 0); /* 2 no longer holds it */
    expect_error(KN_KRP_ERR_NOT_OWNER, 3, KN_KRP_ESTOP);
    estop(CONSOLE + 1, 1, KN_KRP_F_ACK_REQ, 0); /* the console, from any port */
    expect_ack(1, KN_KRP_ESTOP);
    ck_assert(!(status_of(1, 6).flags & KN_KRP_ST_ESTOP));
    /* releasing a latch that is not engaged is harmless */
    estop(3, 1, KN_KRP_F_ACK_REQ, 0);
    expect_ack(1, KN_KRP_ESTOP);
}
END_TEST

START_TEST(console_takes_over)
{
    remake(one_console);
    hello_plain(1, 1);
    crawler(1, 2, 0, 300, 300);
    crawler(CONSOLE, 1, KN_KRP_F_ACK_REQ, 0, 0); /* the console drives at once */
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_double_eq(cap.cmd[cap.ncmd - 1].belt_speed_m_s[0], 0);
    crawler(1, 3, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_NOT_OWNER, 3, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->driver_takeovers, 1);
    /* a session HELLO from the console is answered DRIVER even when another drives */
    simple(CONSOLE, KN_KRP_BYE, 2, 0);
    hello_plain(1, 4);
    crawler(1, 5, 0, 300, 300);
    open_session(CONSOLE, 3, false, KN_KRP_ROLE_DRIVER);
    ck_assert_uint_eq(st()->driver_takeovers, 2);
}
END_TEST

/* A captured datagram does not pass from another port, nor after a new
 * HELLO: the token names the session, the session its address. */
START_TEST(session_token_replay)
{
    uint32_t t = open_session(1, 1, false, KN_KRP_ROLE_DRIVER);
    struct kn_krp_msg c;
    kn_krp_init(&c, KN_KRP_CRAWLER, 2, KN_KRP_F_ACK_REQ);
    c.u.crawler.left_mm_s = c.u.crawler.right_mm_s = 200;
    feed_token(1, &c, t);
    expect_ack(2, KN_KRP_CRAWLER);
    int n = cap.ncmd;
    feed_token(3, &c, t); /* the same bytes from another port */
    expect_error(KN_KRP_ERR_BAD_SESSION, 2, KN_KRP_CRAWLER);
    c.h.flags &= (uint16_t)~KN_KRP_F_TOKEN; /* ... and without the token */
    feed(3, &c);
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_CRAWLER);
    feed(1, &c); /* the session's own port, no token */
    expect_error(KN_KRP_ERR_BAD_SESSION, 2, KN_KRP_CRAWLER);
    ck_assert_int_eq(cap.ncmd, n);
    /* a new HELLO: a new token and seq space; the old datagram is stale */
    uint32_t t2 = open_session(1, 3, false, KN_KRP_ROLE_DRIVER);
    ck_assert_uint_ne(t2, t);
    feed_token(1, &c, t);
    expect_error(KN_KRP_ERR_BAD_SESSION, 2, KN_KRP_CRAWLER);
    ck_assert_int_eq(cap.ncmd, n);
    ck_assert_uint_eq(st()->bad_session, 3);
    c.h.seq = 1; /* its own seq space starts again */
    feed_token(1, &c, t2);
    expect_ack(1, KN_KRP_CRAWLER);
    ck_assert_uint_eq(kn_rules_sessions(R), 1);
    ck_assert_uint_eq(st()->sessions_opened, 2);
}
END_TEST

START_TEST(role_change_and_handover)
{
    uint32_t a = open_session(1, 1, false, KN_KRP_ROLE_DRIVER);
    uint32_t b = open_session(2, 1, false, KN_KRP_ROLE_OBSERVER); /* asked to drive: busy */
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, 2, 0);
    m.u.crawler.left_mm_s = m.u.crawler.right_mm_s = 300;
    feed_token(1, &m, a);
    feed_token(2, &m, b);
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_CRAWLER);
    /* A hands over: a HELLO with its token, asking to observe; the belts stop */
    kn_krp_init(&m, KN_KRP_HELLO, 3, KN_KRP_F_SESSION | KN_KRP_F_OBSERVER);
    feed_token(1, &m, a);
    const struct kn_krp_msg *ack = next_out();
    ck_assert_uint_eq(ack->u.hello_ack.role, KN_KRP_ROLE_OBSERVER);
    ck_assert_uint_eq(ack->u.hello_ack.token, a); /* the same session */
    ck_assert_double_eq(cap.cmd[cap.ncmd - 1].belt_speed_m_s[0], 0);
    ck_assert_ptr_null(kn_rules_driver(R));
    /* B asks again within its session and drives, its mark kept */
    kn_krp_init(&m, KN_KRP_HELLO, 4, KN_KRP_F_SESSION);
    feed_token(2, &m, b);
    ack = next_out();
    ck_assert_uint_eq(ack->u.hello_ack.role, KN_KRP_ROLE_DRIVER);
    ck_assert_uint_eq(ack->u.hello_ack.token, b);
    kn_krp_init(&m, KN_KRP_CRAWLER, 1,
                KN_KRP_F_ACK_REQ); /* older than B's refused seq 2: the mark did not move */
    m.u.crawler.left_mm_s = m.u.crawler.right_mm_s = 100;
    feed_token(2, &m, b);
    expect_ack(1, KN_KRP_CRAWLER);
    /* a session observer does not drive by sending set-points */
    kn_krp_init(&m, KN_KRP_STOP, 5, 0);
    feed_token(1, &m, a);
    expect_error(KN_KRP_ERR_NOT_OWNER, 5, KN_KRP_STOP);
}
END_TEST

START_TEST(released_on_bye_watchdog_silence)
{
    hello_plain(1, 1);
    crawler(1, 2, 0, 300, 300);
    simple(1, KN_KRP_BYE, 3, KN_KRP_F_ACK_REQ); /* BYE: belts 0, robot free */
    expect_ack(3, KN_KRP_BYE);
    ck_assert_double_eq(cap.cmd[cap.ncmd - 1].belt_speed_m_s[0], 0);
    ck_assert_ptr_null(kn_rules_driver(R));
    crawler(2, 1, KN_KRP_F_ACK_REQ, 300, 300); /* another drives */
    expect_ack(1, KN_KRP_CRAWLER);
    advance(600 * MS); /* 2 went quiet while moving */
    ck_assert_uint_eq(st()->watchdog_trips, 1);
    ck_assert_ptr_null(kn_rules_driver(R));
    ck_assert_uint_eq(st()->driver_watchdog, 1);
    open_session(3, 1, false, KN_KRP_ROLE_DRIVER);
    crawler(2, 2, KN_KRP_F_ACK_REQ, 300, 300); /* 2 is back: 3 drives now */
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_CRAWLER);
    advance(5000 * MS); /* 3 silent for 5 s: released */
    ck_assert_ptr_null(kn_rules_driver(R));
    crawler(2, 3, KN_KRP_F_ACK_REQ, 0, 0);
    expect_ack(3, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->driver_released, 2);
}
END_TEST

/* A status display (plain HELLO, then STATUS_REQ and SUBSCRIBE) never
 * claims the robot: the controller that comes after it drives at once. */
START_TEST(plain_monitor_claims_nothing)
{
    hello_plain(1, 1);
    subscribe(1, 2, 0, 500);
    ck_assert_uint_eq(status_of(1, 3).req_seq, 3);
    struct kn_krp_msg w;
    kn_krp_init(&w, KN_KRP_WORLD_REQ, 4, 0);
    feed(1, &w);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_WORLD);
    simple(1, KN_KRP_BYE, 5, 0);
    ck_assert_ptr_null(kn_rules_driver(R));
    ck_assert_uint_eq(st()->driver_claims, 0);
    hello_plain(2, 1);
    crawler(2, 2, KN_KRP_F_ACK_REQ, 200, 200);
    expect_ack(2, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->not_owner, 0);
}
END_TEST

/* A plain driver keeps the robot while its set-points come and for one
 * watchdog period after the last; then another plain client's set-point
 * (or a session HELLO) claims it, and the first is refused in turn. */
START_TEST(plain_driver_grace)
{
    crawler(1, 1, KN_KRP_F_ACK_REQ, 300, 300);
    expect_ack(1, KN_KRP_CRAWLER);
    for (uint32_t k = 0; k < 8; k++) { /* 1 keeps driving, every 100 ms */
        advance(100 * MS);
        crawler(1, 2 + k, 0, 300, 300);
        crawler(2, 1 + k, 0, -300, 300); /* 2 is refused throughout */
        expect_error(KN_KRP_ERR_NOT_OWNER, 1 + k, KN_KRP_CRAWLER);
    }
    simple(1, KN_KRP_STOP, 20, 0); /* 1 stops, then sends nothing */
    advance(400 * MS);
    ck_assert(!kn_rules_driver_idle(R, now));
    crawler(2, 10, KN_KRP_F_ACK_REQ, 100, 100);
    expect_error(KN_KRP_ERR_NOT_OWNER, 10, KN_KRP_CRAWLER);
    advance(100 * MS); /* one watchdog period after the STOP */
    ck_assert(kn_rules_driver_idle(R, now));
    crawler(2, 11, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(11, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->driver_idle_claims, 1);
    ck_assert_uint_eq(st()->driver_takeovers, 0);
    crawler(1, 21, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_NOT_OWNER, 21, KN_KRP_CRAWLER);
    /* a session HELLO asking to drive is refused while 2 is active, and
     * granted once 2 has been idle for its grace */
    open_session(3, 1, false, KN_KRP_ROLE_OBSERVER);
    simple(2, KN_KRP_STOP, 12, 0);
    advance(500 * MS);
    open_session(4, 1, false, KN_KRP_ROLE_DRIVER);
    crawler(2, 13, KN_KRP_F_ACK_REQ, 100, 100); /* a session driver holds the robot */
    expect_error(KN_KRP_ERR_NOT_OWNER, 13, KN_KRP_CRAWLER);
    advance(2000 * MS);
    crawler(2, 14, KN_KRP_F_ACK_REQ, 100, 100);
    expect_error(KN_KRP_ERR_NOT_OWNER, 14, KN_KRP_CRAWLER);
}
END_TEST

static int engaged(void)
{
    return (int)kn_rules_estop(R, NULL);
}

/* The e-stop as buttons wired in series: each engager holds its own
 * engagement, the robot moves only when none holds. */
START_TEST(estop_circuit_two_stations)
{
    crawler(1, 1, 0, 300, 300);
    estop(2, 1, KN_KRP_F_ACK_REQ, 1); /* station A */
    expect_ack(1, KN_KRP_ESTOP);
    estop(3, 1, KN_KRP_F_ACK_REQ, 1); /* station B */
    expect_ack(1, KN_KRP_ESTOP);
    estop(3, 2, KN_KRP_F_ACK_REQ, 1); /* engaging again: harmless, one engagement */
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert_int_eq(engaged(), 2);
    ck_assert_uint_eq(st()->estop_engaged, 1); /* one stop */
    ck_assert_uint_eq(st()->estop_engagements, 2);
    estop(2, 2, KN_KRP_F_ACK_REQ, 0); /* A releases its own */
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert(status_of(1, 2).flags & KN_KRP_ST_ESTOP); /* B still holds */
    crawler(1, 3, KN_KRP_F_ACK_REQ, 300, 300);
    expect_error(KN_KRP_ERR_ESTOP, 3, KN_KRP_CRAWLER);
    estop(2, 3, KN_KRP_F_ACK_REQ, 0); /* A has nothing left to release */
    expect_error(KN_KRP_ERR_NOT_OWNER, 3, KN_KRP_ESTOP);
    estop(1, 4, KN_KRP_F_ACK_REQ, 0); /* nor has the driver */
    expect_error(KN_KRP_ERR_NOT_OWNER, 4, KN_KRP_ESTOP);
    ck_assert_uint_eq(st()->estop_release_refused, 2);
    estop(3, 3, KN_KRP_F_ACK_REQ, 0); /* B releases: free */
    expect_ack(3, KN_KRP_ESTOP);
    ck_assert(!(status_of(1, 5).flags & KN_KRP_ST_ESTOP));
    ck_assert_uint_eq(st()->estop_released, 2);
    crawler(1, 6, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(6, KN_KRP_CRAWLER);
}
END_TEST

/* An engager that went away leaves its engagement: nobody else releases
 * it; a console or the admin resets all. A session engager is its
 * session: a new one from the same port is another engager. */
START_TEST(estop_orphan_reset)
{
    remake(one_console);
    uint32_t t = open_session(2, 1, true, KN_KRP_ROLE_OBSERVER);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ESTOP, 2, KN_KRP_F_ACK_REQ);
    m.u.estop.engage = 1;
    feed_token(2, &m, t);
    expect_ack(2, KN_KRP_ESTOP);
    const struct kn_rules_engagement *e;
    ck_assert_uint_eq(kn_rules_estop(R, &e), 1);
    ck_assert_uint_eq(e[0].kind, KN_RULES_ENG_SESSION);
    ck_assert(kn_rules_engager_present(R, &e[0], now));
    kn_krp_init(&m, KN_KRP_BYE, 3, 0);
    feed_token(2, &m, t); /* the engager leaves */
    ck_assert_int_eq(engaged(), 1);
    ck_assert(!kn_rules_engager_present(R, &e[0], now));
    uint32_t t2 = open_session(2, 1, true, KN_KRP_ROLE_OBSERVER);
    kn_krp_init(&m, KN_KRP_ESTOP, 2, KN_KRP_F_ACK_REQ);
    m.u.estop.engage = 0;
    feed_token(2, &m, t2); /* a new session: not its engagement */
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_ESTOP);
    ck_assert_int_eq(engaged(), 1);
    ck_assert_uint_eq(kn_rules_estop_reset(R), 1); /* the admin */
    ck_assert_int_eq(engaged(), 0);
    ck_assert_uint_eq(st()->estop_admin_resets, 1);
    /* the admin engages; only a reset (admin or console) releases it */
    kn_rules_estop_engage(R, "uid 0 (root) pid 1", now);
    kn_rules_estop_engage(R, "uid 0 (root) pid 2", now); /* one admin engagement */
    estop(5, 1, KN_KRP_F_ACK_REQ, 1);
    expect_ack(1, KN_KRP_ESTOP);
    ck_assert_int_eq(engaged(), 2);
    estop(5, 2, KN_KRP_F_ACK_REQ, 0);
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert(status_of(5, 3).flags & KN_KRP_ST_ESTOP);
    estop(CONSOLE, 1, KN_KRP_F_ACK_REQ, 0); /* a console resets all */
    expect_ack(1, KN_KRP_ESTOP);
    ck_assert_int_eq(engaged(), 0);
    ck_assert_uint_eq(st()->estop_console_resets, 1);
}
END_TEST

/* Engagements are bounded; past the table an engager is told BUSY (the
 * robot is stopped anyway), and the admin's place stays free. */
START_TEST(estop_table_bounded)
{
    for (int i = 0; i < KN_RULES_MAX_ENGAGEMENTS - 1; i++) {
        estop(100 + i, 1, KN_KRP_F_ACK_REQ, 1);
        expect_ack(1, KN_KRP_ESTOP);
    }
    estop(99, 1, KN_KRP_F_ACK_REQ, 1);
    expect_error(KN_KRP_ERR_BUSY, 1, KN_KRP_ESTOP);
    ck_assert_uint_eq(st()->estop_table_full, 1);
    kn_rules_estop_engage(R, "admin", now);
    ck_assert_int_eq(engaged(), KN_RULES_MAX_ENGAGEMENTS);
    estop(100, 2, KN_KRP_F_ACK_REQ, 0);
    expect_ack(2, KN_KRP_ESTOP);
    ck_assert_int_eq(engaged(), KN_RULES_MAX_ENGAGEMENTS - 1);
}
END_TEST

/* ESTOP_INFO_REQ from `from` (flags as given): the one answer, an ESTOP_INFO. */
static struct kn_krp_estop_info estop_info(int from, uint32_t seq, uint16_t flags)
{
    simple(from, KN_KRP_ESTOP_INFO_REQ, seq, flags);
    const struct kn_krp_msg *m = next_out();
    ck_assert_msg(m->h.type == KN_KRP_ESTOP_INFO, "expected ESTOP_INFO, got %s",
                  kn_krp_type_name(m->h.type));
    expect_none();
    return m->u.estop_info;
}

/* The e-stop info extension: anyone may ask who holds the e-stop; the
 * answer lists each engagement's kind, name, age and whether its engager
 * is still there. Asking needs no HELLO, claims nothing, moves no mark
 * and is never ACKed. */
START_TEST(estop_info_lists_engagements)
{
    struct kn_krp_estop_info x = estop_info(4, 1, KN_KRP_F_ACK_REQ);
    ck_assert_uint_eq(x.engaged, 0);
    ck_assert_uint_eq(x.n, 0);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, 1, 0);
    strcpy(m.u.hello.name, "station-b");
    feed(2, &m);
    ck_assert_uint_eq(next_out()->h.type, KN_KRP_HELLO_ACK);
    estop(2, 2, KN_KRP_F_ACK_REQ, 1); /* a plain client engages */
    expect_ack(2, KN_KRP_ESTOP);
    advance(1500 * MS);
    uint32_t t = open_session(3, 1, true, KN_KRP_ROLE_OBSERVER); /* "client" */
    kn_krp_init(&m, KN_KRP_ESTOP, 2, KN_KRP_F_ACK_REQ);
    m.u.estop.engage = 1;
    feed_token(3, &m, t); /* so does a session */
    expect_ack(2, KN_KRP_ESTOP);
    kn_krp_init(&m, KN_KRP_BYE, 3, 0);
    feed_token(3, &m, t); /* and its session ends */
    advance(250 * MS);

    x = estop_info(4, 1000, KN_KRP_F_ACK_REQ); /* seq 1000: no mark moves */
    ck_assert_uint_eq(x.engaged, 2);
    ck_assert_uint_eq(x.n, 2);
    ck_assert_uint_eq(x.e[0].kind, KN_KRP_ENG_PLAIN);
    ck_assert_uint_eq(x.e[0].present, 1);
    ck_assert_uint_eq(x.e[0].held_ms, 1750);
    ck_assert_str_eq(x.e[0].name, "station-b");
    ck_assert_uint_eq(x.e[1].kind, KN_KRP_ENG_SESSION);
    ck_assert_uint_eq(x.e[1].present, 0); /* the session that engaged is over */
    ck_assert_uint_eq(x.e[1].held_ms, 250);
    ck_assert_str_eq(x.e[1].name, "client");
    ck_assert_ptr_null(kn_rules_driver(R));    /* asking claimed nothing */
    crawler(4, 1, KN_KRP_F_ACK_REQ, 100, 100); /* its mark did not move to 1000 */
    expect_error(KN_KRP_ERR_ESTOP, 1, KN_KRP_CRAWLER);
    ck_assert_uint_eq(st()->drop_stale_seq, 0);

    /* the admin's is named "admin"; a plain engager silent for 5 s is gone */
    kn_rules_estop_engage(R, "uid 0 (root) pid 1", now);
    advance(6000 * MS);
    x = estop_info(5, 1, 0);
    ck_assert_uint_eq(x.engaged, 3);
    ck_assert_uint_eq(x.n, 3);
    ck_assert_uint_eq(x.e[0].present, 0);
    ck_assert_uint_eq(x.e[0].held_ms, 7750);
    ck_assert_uint_eq(x.e[2].kind, KN_KRP_ENG_ADMIN);
    ck_assert_uint_eq(x.e[2].present, 1);
    ck_assert_str_eq(x.e[2].name, "admin");
    ck_assert_uint_eq(x.e[2].held_ms, 6000);
    ck_assert_uint_eq(st()->in_type[KN_KRP_ESTOP_INFO_REQ], 3);
    ck_assert_uint_eq(st()->out_type[KN_KRP_ESTOP_INFO], 3);

    /* a session client asks with its token, like any request of its session */
    uint32_t t6 = open_session(6, 1, true, KN_KRP_ROLE_OBSERVER);
    simple(6, KN_KRP_ESTOP_INFO_REQ, 2, 0);
    expect_error(KN_KRP_ERR_BAD_SESSION, 2, KN_KRP_ESTOP_INFO_REQ);
    kn_krp_init(&m, KN_KRP_ESTOP_INFO_REQ, 3, 0);
    feed_token(6, &m, t6);
    ck_assert_uint_eq(next_out()->u.estop_info.engaged, 3);
}
END_TEST

static void trial_req(int from, uint32_t seq, uint16_t flags, uint8_t op)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL_REQ, seq, flags);
    m.u.trial_req.op = op;
    feed(from, &m);
}

static uint32_t hello_caps(int from)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, 1, 0);
    feed(from, &m);
    const struct kn_krp_msg *a = next_out();
    ck_assert_uint_eq(a->h.type, KN_KRP_HELLO_ACK);
    return a->u.hello_ack.capabilities;
}

/* The trials extension: without a trial TRIAL_REQ is NO_TRIAL and
 * HELLO_ACK lacks bit 7; once the simulator reported one, op 0 answers
 * with it (anyone, no claim), op 1 is a driving action (NOT_OWNER from a
 * peer that may not drive, BACKEND_DOWN with the simulator gone) that
 * stops the belts, goes to the simulator and is ACKed; another op is
 * RANGE; each e-stop engagement during the trial goes to the simulator,
 * none after it ended, and a reset after it ended is NO_TRIAL. */
START_TEST(trial_relay)
{
    ck_assert_uint_eq(hello_caps(1) & KN_KRP_CAP_TRIAL, 0);
    trial_req(1, 2, 0, KN_KRP_TRIAL_OP_STATE);
    expect_error(KN_KRP_ERR_NO_TRIAL, 2, KN_KRP_TRIAL_REQ);
    struct kn_krp_trial t;
    memset(&t, 0, sizeof t);
    strcpy(t.name, "stepfield-e2828");
    t.reps = 10;
    t.rep = 1;
    t.flags = KN_KRP_TRIAL_F_UNDER_WAY;
    t.limit_ms = 600000;
    t.left_ms = 500000;
    kn_rules_trial(R, &t);
    ck_assert(kn_rules_has_trial(R));
    ck_assert_uint_ne(hello_caps(1) & KN_KRP_CAP_TRIAL, 0);

    trial_req(2, 1, KN_KRP_F_ACK_REQ, KN_KRP_TRIAL_OP_STATE); /* never ACKed */
    const struct kn_krp_msg *m = next_out();
    ck_assert_uint_eq(m->h.type, KN_KRP_TRIAL);
    ck_assert_mem_eq(&m->u.trial, &t, sizeof t);
    expect_none();
    ck_assert_ptr_null(kn_rules_driver(R));

    crawler(1, 3, 0, 200, 200); /* 1 drives */
    int ncmd = cap.ncmd;
    trial_req(2, 2, 0, KN_KRP_TRIAL_OP_RESET);
    expect_error(KN_KRP_ERR_NOT_OWNER, 2, KN_KRP_TRIAL_REQ);
    ck_assert_int_eq(trials.resets, 0);
    ck_assert_int_eq(cap.ncmd, ncmd);
    trial_req(1, 4, KN_KRP_F_ACK_REQ, KN_KRP_TRIAL_OP_RESET);
    expect_ack(4, KN_KRP_TRIAL_REQ);
    ck_assert_int_eq(trials.resets, 1);
    ck_assert_int_gt(cap.ncmd, ncmd); /* the belts stopped */
    ck_assert(cap.cmd[cap.ncmd - 1].belt_speed_m_s[0] == 0 &&
              cap.cmd[cap.ncmd - 1].belt_speed_m_s[1] == 0);
    trial_req(1, 5, 0, 7);
    expect_error(KN_KRP_ERR_RANGE, 5, KN_KRP_TRIAL_REQ);
    trials.fail = 1;
    trial_req(1, 6, 0, KN_KRP_TRIAL_OP_RESET);
    expect_error(KN_KRP_ERR_BACKEND_DOWN, 6, KN_KRP_TRIAL_REQ);
    trials.fail = 0;

    estop(3, 1, 0, 1);
    ck_assert_int_eq(trials.estops, 1);
    estop(4, 1, 0, 1); /* a second engagement, a second fault */
    ck_assert_int_eq(trials.estops, 2);
    t.flags = KN_KRP_TRIAL_F_ENDED;
    kn_rules_trial(R, &t);
    estop(5, 1, 0, 1);
    ck_assert_int_eq(trials.estops, 2);
    /* over: a reset is NO_TRIAL, never ACKed, and nothing goes on */
    trial_req(1, 7, KN_KRP_F_ACK_REQ, KN_KRP_TRIAL_OP_RESET);
    expect_error(KN_KRP_ERR_NO_TRIAL, 7, KN_KRP_TRIAL_REQ);
    expect_none();
    ck_assert_int_eq(trials.resets, 1);
    ck_assert_uint_eq(st()->trial_reqs, 7);
    ck_assert_uint_eq(st()->trial_resets, 1);
    ck_assert_uint_eq(st()->trial_refused, 3);
    ck_assert_uint_eq(st()->trial_range, 1);
    ck_assert_uint_eq(st()->no_trial, 2);
    ck_assert_uint_eq(st()->trial_estops, 2);
    ck_assert_uint_eq(st()->trial_states, 2);
    /* the simulator lost: no trial until it says so again */
    kn_rules_backend(R, false);
    ck_assert(!kn_rules_has_trial(R));
    trial_req(2, 3, 0, KN_KRP_TRIAL_OP_STATE);
    expect_error(KN_KRP_ERR_NO_TRIAL, 3, KN_KRP_TRIAL_REQ);
}
END_TEST

/* More engagements than one ESTOP_INFO lists: the count says so, and the
 * 20 listed are those that have held longest, oldest first, whatever
 * order releases left the robot's table in. */
START_TEST(estop_info_lists_the_oldest_20)
{
    for (int i = 0; i < 30; i++) {
        estop(100 + i, 1, 0, 1);
        advance(10 * MS);
    }
    estop(100, 2, KN_KRP_F_ACK_REQ, 0); /* the oldest releases its own */
    expect_ack(2, KN_KRP_ESTOP);
    struct kn_krp_estop_info x = estop_info(1, 1, 0);
    ck_assert_uint_eq(x.engaged, 29);
    ck_assert_uint_eq(x.n, KN_KRP_ESTOP_ENTRIES);
    for (unsigned i = 0; i < x.n; i++) {
        ck_assert_uint_eq(x.e[i].held_ms, 290 - 10 * i); /* from 101 on */
        ck_assert_uint_eq(x.e[i].kind, KN_KRP_ENG_PLAIN);
        ck_assert_str_eq(x.e[i].name, ""); /* they never said HELLO */
    }
}
END_TEST

static void need_hello(struct kn_rules_params *p)
{
    p->hello_to_drive = true;
}

START_TEST(hello_to_drive_switch)
{
    remake(need_hello);
    crawler(1, 1, KN_KRP_F_ACK_REQ, 100, 100); /* no HELLO: refused */
    expect_error(KN_KRP_ERR_NOT_OWNER, 1, KN_KRP_CRAWLER);
    ck_assert_int_eq(cap.ncmd, 0);
    hello_plain(1, 2);
    crawler(1, 3, KN_KRP_F_ACK_REQ, 100, 100);
    expect_ack(3, KN_KRP_CRAWLER);
}
END_TEST

START_TEST(halt_stops_belts)
{
    crawler(1, 1, 0, 300, 300);
    kn_rules_halt(R, now);
    ck_assert_int_eq(cap.ncmd, 2);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[0], 0);
    ck_assert_double_eq(cap.cmd[1].belt_speed_m_s[1], 0);
    advance(2000 * MS);
    ck_assert_uint_eq(st()->watchdog_trips, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rules");
    TCase *tc = tcase_create("krp1");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hello_ack_fields);
    tcase_add_test(tc, robot_seq_one_counter);
    tcase_add_test(tc, status_from_latest_state);
    tcase_add_test(tc, crawler_command_and_ack);
    tcase_add_test(tc, crawler_clamped);
    tcase_add_test(tc, flipper_mask_and_clamp);
    tcase_add_test(tc, stop_holds_flippers_clears_flags);
    tcase_add_test(tc, seq_older_ignored_shared_mark);
    tcase_add_test(tc, second_client_not_owner);
    tcase_add_test(tc, estop_release_by_engager_or_console);
    tcase_add_test(tc, console_takes_over);
    tcase_add_test(tc, session_token_replay);
    tcase_add_test(tc, role_change_and_handover);
    tcase_add_test(tc, released_on_bye_watchdog_silence);
    tcase_add_test(tc, hello_to_drive_switch);
    tcase_add_test(tc, plain_monitor_claims_nothing);
    tcase_add_test(tc, plain_driver_grace);
    tcase_add_test(tc, estop_circuit_two_stations);
    tcase_add_test(tc, estop_orphan_reset);
    tcase_add_test(tc, estop_table_bounded);
    tcase_add_test(tc, estop_info_lists_engagements);
    tcase_add_test(tc, estop_info_lists_the_oldest_20);
    tcase_add_test(tc, trial_relay);
    tcase_add_test(tc, seq_wraps_rfc1982);
    tcase_add_test(tc, seq_mark_forgotten_on_hello_and_silence);
    tcase_add_test(tc, ignored_setpoint_does_not_feed_watchdog);
    tcase_add_test(tc, watchdog_trips_and_clears);
    tcase_add_test(tc, stop_disarms_watchdog);
    tcase_add_test(tc, zero_setpoint_disarms_watchdog);
    tcase_add_test(tc, watchdog_configurable);
    tcase_add_test(tc, step_without_lockstep_is_unknown);
    tcase_add_test(tc, step_in_lockstep);
    tcase_add_test(tc, estop_latch);
    tcase_add_test(tc, subscribe_push_and_cancel);
    tcase_add_test(tc, subscribe_period_clamped);
    tcase_add_test(tc, subscribe_max_8_busy);
    tcase_add_test(tc, subscribe_lease);
    tcase_add_test(tc, envelope_errors);
    tcase_add_test(tc, error_rate_limit_per_peer);
    tcase_add_test(tc, backend_down_error_and_stored);
    tcase_add_test(tc, simulator_lacks_model_or_flippers);
    tcase_add_test(tc, simulator_lacks_drive);
    tcase_add_test(tc, peer_table_bounded);
    tcase_add_test(tc, halt_stops_belts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h_run_suite(suite());
}
