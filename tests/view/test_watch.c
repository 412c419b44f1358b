/* Unit tests of kenaf-view's KRP/1 observer (tools/view/watch.c), driven
 * with a hand-held clock: what it sends is decoded with the codec and
 * answered by a robot played here with encoded datagrams. Every test also
 * checks that it never sent anything but HELLO, SUBSCRIBE, STATUS_REQ,
 * WORLD_REQ and TRIAL_REQ asking for the state (never a reset). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "krp.h"
#include "watch.h"

#define MS 1000000ull

static struct {
    struct kn_krp_msg sent[4096];
    int nsent, rd;
    int hellos, statuses, links_up, links_down, worlds, trials;
    bool trial_null;
    struct kn_krp_trial trial;
    char link_reason[64];
    char *world;
    size_t world_len;
    bool world_null;
} cap;

static struct kn_watch *W;
static uint64_t now;
static uint32_t robot_seq;

static void io_send(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    ck_assert_int_lt(cap.nsent, 4096);
    struct kn_krp_msg *m = &cap.sent[cap.nsent++];
    ck_assert_int_eq(kn_krp_decode(buf, len, m), KN_KRP_OK);
    uint8_t t = m->h.type;
    ck_assert_msg(t == KN_KRP_HELLO || t == KN_KRP_SUBSCRIBE || t == KN_KRP_STATUS_REQ ||
                      t == KN_KRP_WORLD_REQ ||
                      (t == KN_KRP_TRIAL_REQ && m->u.trial_req.op == KN_KRP_TRIAL_OP_STATE),
                  "the observer sent %s", kn_krp_type_name(t));
}

static void io_hello(void *ctx, const struct kn_krp_hello_ack *a)
{
    (void)ctx;
    (void)a;
    cap.hellos++;
}

static void io_status(void *ctx, const struct kn_krp_status *s, uint64_t t)
{
    (void)ctx;
    (void)s;
    (void)t;
    cap.statuses++;
}

static void io_link(void *ctx, bool up, const char *reason)
{
    (void)ctx;
    if (up)
        cap.links_up++;
    else
        cap.links_down++;
    strncpy(cap.link_reason, reason ? reason : "", sizeof cap.link_reason - 1);
}

static void io_world(void *ctx, const char *doc, size_t len)
{
    (void)ctx;
    cap.worlds++;
    free(cap.world);
    cap.world = NULL;
    cap.world_null = doc == NULL;
    if (doc) {
        cap.world = malloc(len);
        memcpy(cap.world, doc, len);
        cap.world_len = len;
    }
}

static void io_trial(void *ctx, const struct kn_krp_trial *t)
{
    (void)ctx;
    cap.trials++;
    cap.trial_null = t == NULL;
    if (t)
        cap.trial = *t;
}

static void setup(void)
{
    memset(&cap, 0, sizeof cap);
    now = 1000 * MS;
    robot_seq = 0;
    struct kn_watch_io io = { NULL, io_send, io_hello, io_status, io_link, io_world, io_trial };
    W = kn_watch_new(&io, "kenaf-view", now);
    ck_assert_ptr_nonnull(W);
}

static void teardown(void)
{
    kn_watch_free(W);
    free(cap.world);
    cap.world = NULL;
}

/* ---- the robot played here ------------------------------------------- */

static void deliver(struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = ++robot_seq;
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    kn_watch_datagram(W, buf, n, now);
}

static void hello_ack(uint32_t caps)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO_ACK, 0, 0);
    m.u.hello_ack.protocol = 1;
    strcpy(m.u.hello_ack.robot_name, "kenaf");
    m.u.hello_ack.capabilities = caps;
    deliver(&m);
}

static void status(uint32_t req_seq, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STATUS, 0, 0);
    m.u.status.req_seq = req_seq;
    m.u.status.flags = flags;
    deliver(&m);
}

static void error(uint32_t seq, uint8_t type, uint8_t code)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ERROR, 0, 0);
    m.u.error.offending_seq = seq;
    m.u.error.offending_type = type;
    m.u.error.code = code;
    deliver(&m);
}

/* The WORLD answer the protocol gives for offset in doc. */
static void world_answer(const char *doc, uint32_t len, uint32_t offset)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_WORLD, 0, 0);
    m.u.world.total_len = len;
    m.u.world.offset = offset;
    uint32_t left = len - offset;
    m.u.world.n = (uint16_t)(left < KN_KRP_WORLD_CHUNK ? left : KN_KRP_WORLD_CHUNK);
    memcpy(m.u.world.data, doc + offset, m.u.world.n);
    deliver(&m);
}

/* Sent since the last call, of one type (counted, read position moved). */
static int take(uint8_t type, struct kn_krp_msg *out, int max)
{
    int n = 0;
    for (; cap.rd < cap.nsent; cap.rd++)
        if (cap.sent[cap.rd].h.type == type && n < max)
            out[n++] = cap.sent[cap.rd];
    return n;
}

static int count_new(uint8_t type)
{
    struct kn_krp_msg tmp[512];
    return take(type, tmp, 512);
}

static void advance(uint64_t ns)
{
    uint64_t end = now + ns;
    for (;;) {
        uint64_t d = kn_watch_next_deadline(W);
        if (d > end)
            break;
        if (d > now)
            now = d;
        kn_watch_tick(W, now);
    }
    now = end;
}

/* HELLO, HELLO_ACK, first STATUS: linked. */
static void connect_robot(uint32_t caps)
{
    kn_watch_tick(W, now);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 1);
    hello_ack(caps);
    status(1, KN_KRP_ST_BACKEND_UP);
    ck_assert(kn_watch_up(W));
}

/* Answers every WORLD_REQ sent so far from doc; returns how many. */
static int serve_world(const char *doc, uint32_t len)
{
    struct kn_krp_msg req[64];
    int n = take(KN_KRP_WORLD_REQ, req, 64);
    for (int i = 0; i < n; i++)
        world_answer(doc, len, req[i].u.world_req.offset);
    return n;
}

static char *make_doc(uint32_t len, char fill)
{
    char *d = malloc(len);
    for (uint32_t i = 0; i < len; i++)
        d[i] = (char)(fill + i % 7);
    return d;
}

static void trial_answer(uint16_t rep, uint32_t elapsed_ms)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL, 0, 0);
    strcpy(m.u.trial.name, "stepfield-e2828");
    m.u.trial.reps = 10;
    m.u.trial.rep = rep;
    m.u.trial.flags = KN_KRP_TRIAL_F_UNDER_WAY;
    m.u.trial.rep_elapsed_ms = elapsed_ms;
    m.u.trial.by_kind[KN_KRP_TF_WALL] = 1;
    m.u.trial.faults = 1;
    m.u.trial.limit_ms = 600000;
    m.u.trial.left_ms = 590000;
    deliver(&m);
}

/* ---- tests ----------------------------------------------------------- */

START_TEST(hello_until_answered)
{
    kn_watch_tick(W, now);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 1);
    ck_assert_str_eq(cap.sent[0].u.hello.name, "kenaf-view");
    advance(KN_WATCH_HELLO_NS - 1);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 0);
    advance(1);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 1);
    hello_ack(0);
    struct kn_krp_msg sub[4];
    ck_assert_int_eq(take(KN_KRP_SUBSCRIBE, sub, 4), 1);
    ck_assert_uint_eq(sub[0].u.subscribe.period_ms, KN_WATCH_SUB_MS);
    cap.rd = 0;
    ck_assert_int_eq(count_new(KN_KRP_STATUS_REQ), 1);
    advance(3 * KN_WATCH_HELLO_NS);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 0);
    ck_assert_int_eq(cap.hellos, 1);
}
END_TEST

START_TEST(subscription_renewed)
{
    connect_robot(0);
    cap.rd = cap.nsent;
    for (int i = 0; i < 5; i++) {
        advance(KN_WATCH_RENEW_NS / 2);
        status(0, KN_KRP_ST_BACKEND_UP);
        advance(KN_WATCH_RENEW_NS / 2);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(count_new(KN_KRP_SUBSCRIBE), 5);
    ck_assert_int_eq(cap.links_down, 0);
}
END_TEST

/* A robot without the capability has no world: null once, after the link
 * is up; nothing asked. */
START_TEST(no_capability_no_world)
{
    connect_robot(0);
    ck_assert_int_eq(cap.links_up, 1);
    ck_assert_int_eq(cap.worlds, 1);
    ck_assert(cap.world_null);
    cap.rd = 0;
    ck_assert_int_eq(count_new(KN_KRP_WORLD_REQ), 0);
    advance(3 * KN_WATCH_WORLD_CHECK_NS);
    cap.rd = 0;
    ck_assert_int_eq(count_new(KN_KRP_WORLD_REQ), 0);
}
END_TEST

START_TEST(silence_is_link_down_then_back)
{
    connect_robot(0);
    cap.rd = cap.nsent;
    advance(KN_WATCH_SILENCE_NS - 1);
    ck_assert(kn_watch_up(W));
    advance(1);
    ck_assert(!kn_watch_up(W));
    ck_assert_int_eq(cap.links_down, 1);
    ck_assert_str_eq(cap.link_reason, "no STATUS for 1.0 s");
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 1); /* at once */
    advance(KN_WATCH_HELLO_NS);
    ck_assert_int_eq(count_new(KN_KRP_HELLO), 1);
    /* the daemon restarted: it answers HELLO, the subscription comes back */
    hello_ack(0);
    ck_assert_int_eq(count_new(KN_KRP_SUBSCRIBE), 1);
    status(0, KN_KRP_ST_BACKEND_UP);
    ck_assert(kn_watch_up(W));
    ck_assert_int_eq(cap.links_up, 2);
}
END_TEST

/* 2000 bytes in 5 chunks, some answers lost and some out of order: lost
 * ones are asked again after the retry interval, at most 8 in flight, and
 * the page gets the document once, whole. */
START_TEST(world_fetched_with_losses)
{
    const uint32_t len = 4000;
    char *doc = make_doc(len, 'a');
    connect_robot(KN_KRP_CAP_WORLD);
    struct kn_krp_msg req[64];
    ck_assert_int_eq(take(KN_KRP_WORLD_REQ, req, 64), 1);
    ck_assert_uint_eq(req[0].u.world_req.offset, 0);
    world_answer(doc, len, 0);
    int n = take(KN_KRP_WORLD_REQ, req, 64);
    ck_assert_int_eq(n, KN_WATCH_WORLD_WINDOW); /* chunks 1..8 of 0..8 */
    /* answer in reverse order, losing the 3rd and 5th asked */
    for (int i = n - 1; i >= 0; i--)
        if (i != 2 && i != 4)
            world_answer(doc, len, req[i].u.world_req.offset);
    ck_assert_int_eq(cap.worlds, 0);
    advance(KN_WATCH_WORLD_RETRY_NS);
    status(0, KN_KRP_ST_BACKEND_UP);
    n = take(KN_KRP_WORLD_REQ, req, 64);
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(req[0].u.world_req.offset, 3 * KN_KRP_WORLD_CHUNK);
    ck_assert_uint_eq(req[1].u.world_req.offset, 5 * KN_KRP_WORLD_CHUNK);
    world_answer(doc, len, req[0].u.world_req.offset);
    world_answer(doc, len, req[1].u.world_req.offset);
    ck_assert_int_eq(cap.worlds, 1);
    ck_assert_uint_eq(cap.world_len, len);
    ck_assert_mem_eq(cap.world, doc, len);
    ck_assert_uint_eq(kn_watch_stats(W)->world_chunks, 9);
    free(doc);
}
END_TEST

/* Every 5 s the first chunk is asked again: the same one ends the check,
 * another one fetches the new world. */
START_TEST(world_checked_and_changed)
{
    const uint32_t len = 1000;
    char *a = make_doc(len, 'a'), *b = make_doc(len + 10, 'A');
    connect_robot(KN_KRP_CAP_WORLD);
    while (serve_world(a, len) > 0)
        ;
    ck_assert_int_eq(cap.worlds, 1);
    for (int i = 0; i < 10; i++) {
        advance(KN_WATCH_WORLD_CHECK_NS / 10);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(serve_world(a, len), 1); /* one request: offset 0 */
    ck_assert_int_eq(cap.worlds, 1);
    for (int i = 0; i < 10; i++) {
        advance(KN_WATCH_WORLD_CHECK_NS / 10);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    while (serve_world(b, len + 10) > 0)
        ;
    ck_assert_int_eq(cap.worlds, 2);
    ck_assert_uint_eq(cap.world_len, len + 10);
    ck_assert_mem_eq(cap.world, b, len + 10);
    ck_assert_uint_eq(kn_watch_stats(W)->world_changes, 1);
    /* the simulator came back: checked at once */
    status(0, 0);
    status(0, KN_KRP_ST_BACKEND_UP);
    ck_assert_int_eq(serve_world(b, len + 10), 1);
    ck_assert_int_eq(cap.worlds, 2);
    free(a);
    free(b);
}
END_TEST

/* A robot that does not know WORLD_REQ (ERROR UNKNOWN_TYPE), or never
 * answers it: the world is null. */
START_TEST(world_unknown_type)
{
    connect_robot(KN_KRP_CAP_WORLD);
    struct kn_krp_msg req[4];
    ck_assert_int_eq(take(KN_KRP_WORLD_REQ, req, 4), 1);
    error(req[0].h.seq, KN_KRP_WORLD_REQ, KN_KRP_ERR_UNKNOWN_TYPE);
    ck_assert_int_eq(cap.worlds, 1);
    ck_assert(cap.world_null);
}
END_TEST

START_TEST(world_never_answered)
{
    connect_robot(KN_KRP_CAP_WORLD);
    for (int i = 0; i < 40 && cap.worlds == 0; i++) {
        advance(KN_WATCH_WORLD_RETRY_NS / 2);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(cap.worlds, 1);
    ck_assert(cap.world_null);
    /* asked again and again meanwhile, not more often than the retry */
    cap.rd = 0;
    int asked = count_new(KN_KRP_WORLD_REQ);
    ck_assert_int_ge(asked, KN_WATCH_WORLD_TRIES - 1);
    ck_assert_int_le(asked, KN_WATCH_WORLD_TRIES + 1);
}
END_TEST

/* A full subscriber table: STATUS_REQ every 20 ms until a push shows the
 * subscription was taken. */
/* A robot with a trial is asked for its state every 0.5 s while linked;
 * the page hears of a change only; it never asks for a reset. */
START_TEST(trial_polled_and_told_on_change)
{
    connect_robot(KN_KRP_CAP_TRIAL);
    advance(0);
    struct kn_krp_msg req[64];
    cap.rd = 0;
    ck_assert_int_eq(take(KN_KRP_TRIAL_REQ, req, 64), 1);
    ck_assert_uint_eq(req[0].u.trial_req.op, KN_KRP_TRIAL_OP_STATE);
    trial_answer(0, 1500);
    ck_assert_int_eq(cap.trials, 1);
    ck_assert(!cap.trial_null);
    ck_assert_str_eq(cap.trial.name, "stepfield-e2828");
    ck_assert_uint_eq(cap.trial.rep_elapsed_ms, 1500);
    ck_assert_uint_eq(cap.trial.by_kind[KN_KRP_TF_WALL], 1);
    /* the same state again: nothing new for the page */
    trial_answer(0, 1500);
    ck_assert_int_eq(cap.trials, 1);
    trial_answer(0, 2000);
    ck_assert_int_eq(cap.trials, 2);
    /* 2 s with STATUS kept coming: four more requests */
    for (int i = 0; i < 4; i++) {
        advance(KN_WATCH_TRIAL_NS);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(take(KN_KRP_TRIAL_REQ, req, 64), 4);
    /* the link down: no requests until it is back */
    advance(2 * KN_WATCH_SILENCE_NS);
    ck_assert(!kn_watch_up(W));
    count_new(KN_KRP_TRIAL_REQ); /* any sent before it went down */
    advance(3 * KN_WATCH_TRIAL_NS);
    ck_assert_int_eq(count_new(KN_KRP_TRIAL_REQ), 0);
    ck_assert_uint_eq(kn_watch_stats(W)->trials, 3);
}
END_TEST

/* NO_TRIAL (the trial was taken away) and a robot without the
 * capability: null, said once, and no more requests. */
START_TEST(no_trial_is_null_once)
{
    connect_robot(KN_KRP_CAP_TRIAL);
    advance(0);
    struct kn_krp_msg req[8];
    cap.rd = 0;
    ck_assert_int_eq(take(KN_KRP_TRIAL_REQ, req, 8), 1);
    trial_answer(3, 100);
    error(req[0].h.seq, KN_KRP_TRIAL_REQ, KN_KRP_ERR_NO_TRIAL);
    ck_assert_int_eq(cap.trials, 2);
    ck_assert(cap.trial_null);
    for (int i = 0; i < 4; i++) {
        advance(KN_WATCH_TRIAL_NS);
        status(0, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(count_new(KN_KRP_TRIAL_REQ), 0);
    ck_assert_uint_eq(kn_watch_stats(W)->no_trial, 1);
    /* a HELLO_ACK without the capability: still null, not said again */
    hello_ack(0);
    ck_assert_int_eq(cap.trials, 2);
}
END_TEST

START_TEST(no_capability_no_trial_request)
{
    connect_robot(0);
    ck_assert_int_eq(cap.trials, 1);
    ck_assert(cap.trial_null);
    advance(10 * KN_WATCH_TRIAL_NS);
    cap.rd = 0;
    ck_assert_int_eq(count_new(KN_KRP_TRIAL_REQ), 0);
}
END_TEST

START_TEST(busy_polls_until_subscribed)
{
    connect_robot(0);
    struct kn_krp_msg sub[4];
    cap.rd = 0;
    ck_assert_int_eq(take(KN_KRP_SUBSCRIBE, sub, 4), 1);
    error(sub[0].h.seq, KN_KRP_SUBSCRIBE, KN_KRP_ERR_BUSY);
    cap.rd = cap.nsent;
    for (int i = 0; i < 10; i++) {
        advance(KN_WATCH_POLL_NS);
        status(7, KN_KRP_ST_BACKEND_UP);
    }
    ck_assert_int_eq(count_new(KN_KRP_STATUS_REQ), 10);
    status(0, KN_KRP_ST_BACKEND_UP); /* a push */
    advance(10 * KN_WATCH_POLL_NS);
    ck_assert_int_eq(count_new(KN_KRP_STATUS_REQ), 0);
    ck_assert_uint_eq(kn_watch_stats(W)->sub_busy, 1);
}
END_TEST

/* Every ERROR is counted by its code: KRP/1's, the extensions' (64)
 * and a code no release named yet. */
START_TEST(errors_counted_by_code)
{
    error(1, KN_KRP_CRAWLER, KN_KRP_ERR_NOT_OWNER);
    error(2, KN_KRP_CRAWLER, KN_KRP_ERR_NOT_ALLOWED);
    error(3, KN_KRP_CRAWLER, KN_KRP_ERR_NOT_ALLOWED);
    error(4, KN_KRP_CRAWLER, 200);
    const struct kn_watch_stats *st = kn_watch_stats(W);
    ck_assert_uint_eq(st->errors[KN_KRP_ERR_NOT_OWNER], 1);
    ck_assert_uint_eq(st->errors[KN_KRP_ERR_NOT_ALLOWED], 2);
    ck_assert_uint_eq(st->errors[200], 1);
}
END_TEST

START_TEST(bad_datagrams_counted)
{
    static const uint8_t junk[] = { 0x4B, 0x4E, 0x01, 0x85, 0, 0, 0, 0, 0x70, 0, 0, 0 };
    kn_watch_datagram(W, junk, sizeof junk, now);
    kn_watch_datagram(W, junk, 1, now);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, 0, 0);
    deliver(&m);
    ck_assert_uint_eq(kn_watch_stats(W)->bad_dgrams, 2);
    ck_assert_uint_eq(kn_watch_stats(W)->not_from_robot_types, 1);
    ck_assert_int_eq(cap.statuses, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("watch");
    TCase *t = tcase_create("watch");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, hello_until_answered);
    tcase_add_test(t, subscription_renewed);
    tcase_add_test(t, no_capability_no_world);
    tcase_add_test(t, silence_is_link_down_then_back);
    tcase_add_test(t, world_fetched_with_losses);
    tcase_add_test(t, world_checked_and_changed);
    tcase_add_test(t, world_unknown_type);
    tcase_add_test(t, world_never_answered);
    tcase_add_test(t, busy_polls_until_subscribed);
    tcase_add_test(t, trial_polled_and_told_on_change);
    tcase_add_test(t, no_trial_is_null_once);
    tcase_add_test(t, no_capability_no_trial_request);
    tcase_add_test(t, bad_datagrams_counted);
    tcase_add_test(t, errors_counted_by_code);
    suite_add_tcase(s, t);
    return h_run_suite(s);
}
