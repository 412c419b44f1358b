/* KRP/1 codec tests: golden datagrams written byte by byte from the
 * protocol (docs/protocol.md), the doc's worked example, round trips for
 * every type, and every envelope error. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "krp.h"
#include "krp_session.h"

static struct kn_krp_msg decode_ok(const uint8_t *b, size_t n)
{
    struct kn_krp_msg m;
    enum kn_krp_result r = kn_krp_decode(b, n, &m);
    ck_assert_msg(r == KN_KRP_OK, "decode: %s", kn_krp_result_str(r));
    return m;
}

static void assert_encodes_to(const struct kn_krp_msg *m, const uint8_t *want, size_t n)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t got = kn_krp_encode(m, buf, sizeof buf);
    ck_assert_uint_eq(got, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(buf[i] == want[i], "byte %zu: got 0x%02x want 0x%02x", i, buf[i], want[i]);
}

START_TEST(golden_hello)
{
    static const uint8_t g[] = {
        0x4B, 0x4E, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 's', 'q',
        'u',  'a',  'r',  'e',  0,    0,    0,    0,    0,    0,    0,    0,    0,   0,
    };
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO);
    ck_assert_uint_eq(m.h.seq, 1);
    ck_assert_str_eq(m.u.hello.name, "square");
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(golden_hello_full_name)
{
    /* a 16-byte name has no NUL on the wire */
    uint8_t g[28] = { 0x4B, 0x4E, 0x01, 0x01, 0, 0, 0, 0, 0x10, 0, 0, 0 };
    memcpy(g + 12, "0123456789abcdef", 16);
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    ck_assert_str_eq(m.u.hello.name, "0123456789abcdef");
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(golden_crawler)
{
    /* seq 0x01020304, ACK_REQ, left 200 mm/s, right -200 mm/s */
    static const uint8_t g[] = {
        0x4B, 0x4E, 0x01, 0x02, 0x04, 0x03, 0x02, 0x01, 0x08, 0x00,
        0x01, 0x00, 0xC8, 0x00, 0x00, 0x00, 0x38, 0xFF, 0xFF, 0xFF,
    };
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    ck_assert_uint_eq(m.h.seq, 0x01020304u);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_ACK_REQ);
    ck_assert_int_eq(m.u.crawler.left_mm_s, 200);
    ck_assert_int_eq(m.u.crawler.right_mm_s, -200);
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(golden_flipper)
{
    /* mask FL|RR, targets 30.00 deg, 0, 0, -119.50 deg */
    static const uint8_t g[] = {
        0x4B, 0x4E, 0x01, 0x03, 0x07, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
        0x00, 0x09, 0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x52, 0xD1, 0xFF, 0xFF,
    };
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    ck_assert_uint_eq(m.u.flipper.mask, 0x09);
    ck_assert_int_eq(m.u.flipper.target_cdeg[0], 3000);
    ck_assert_int_eq(m.u.flipper.target_cdeg[3], -11950);
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(golden_empty_payloads)
{
    static const uint8_t stop[] = { 0x4B, 0x4E, 0x01, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0 };
    static const uint8_t req[] = { 0x4B, 0x4E, 0x01, 0x05, 0x00, 0x00, 0x00, 0x80, 0, 0, 0, 0 };
    struct kn_krp_msg m = decode_ok(stop, sizeof stop);
    ck_assert_uint_eq(m.h.type, KN_KRP_STOP);
    ck_assert_uint_eq(m.h.seq, 0xFFFFFFFFu);
    assert_encodes_to(&m, stop, sizeof stop);
    m = decode_ok(req, sizeof req);
    ck_assert_uint_eq(m.h.type, KN_KRP_STATUS_REQ);
    ck_assert_uint_eq(m.h.seq, 0x80000000u);
    assert_encodes_to(&m, req, sizeof req);
}
END_TEST

START_TEST(golden_subscribe_estop)
{
    static const uint8_t sub[] = { 0x4B, 0x4E, 0x01, 0x06, 9, 0, 0, 0, 2, 0, 0, 0, 0x14, 0x00 };
    static const uint8_t es[] = { 0x4B, 0x4E, 0x01, 0x07, 10, 0, 0, 0, 1, 0, 1, 0, 0x01 };
    struct kn_krp_msg m = decode_ok(sub, sizeof sub);
    ck_assert_uint_eq(m.u.subscribe.period_ms, 20);
    assert_encodes_to(&m, sub, sizeof sub);
    m = decode_ok(es, sizeof es);
    ck_assert_uint_eq(m.u.estop.engage, 1);
    ck_assert_uint_eq(m.h.flags, 1);
    assert_encodes_to(&m, es, sizeof es);
}
END_TEST

START_TEST(golden_ack_error)
{
    static const uint8_t ack[] = {
        0x4B, 0x4E, 0x01, 0x80, 0x05, 0,    0,    0,    0x08, 0,
        0,    0,    0x04, 0x03, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00,
    };
    static const uint8_t err[] = {
        0x4B, 0x4E, 0x01, 0xFF, 0x06, 0,    0,    0,    0x08, 0,
        0,    0,    0x2A, 0x00, 0x00, 0x00, 0x03, 0x05, 0x00, 0x00,
    };
    struct kn_krp_msg m = decode_ok(ack, sizeof ack);
    ck_assert_uint_eq(m.u.ack.acked_seq, 0x01020304u);
    ck_assert_uint_eq(m.u.ack.acked_type, KN_KRP_CRAWLER);
    assert_encodes_to(&m, ack, sizeof ack);
    m = decode_ok(err, sizeof err);
    ck_assert_uint_eq(m.u.error.offending_seq, 42);
    ck_assert_uint_eq(m.u.error.offending_type, KN_KRP_FLIPPER);
    ck_assert_uint_eq(m.u.error.code, KN_KRP_ERR_RANGE);
    assert_encodes_to(&m, err, sizeof err);
}
END_TEST

/* The world description extension: WORLD_REQ asks from an offset, WORLD
 * carries total length, offset and a variable chunk of the document. */
START_TEST(golden_world_req_and_world)
{
    static const uint8_t req[] = {
        0x4B, 0x4E, 0x01, 0x08, 0x0B, 0, 0, 0, 0x04, 0, 0, 0, 0xE0, 0x01, 0x00, 0x00,
    };
    static const uint8_t world[] = {
        0x4B, 0x4E, 0x01, 0x86, 0x0C, 0,    0,    0,   0x0D, 0,   0,   0,   0xE5,
        0x01, 0x00, 0x00, 0xE0, 0x01, 0x00, 0x00, 'n', 'u',  'l', 'l', '}',
    };
    struct kn_krp_msg m = decode_ok(req, sizeof req);
    ck_assert_uint_eq(m.h.type, KN_KRP_WORLD_REQ);
    ck_assert_uint_eq(m.u.world_req.offset, 480);
    assert_encodes_to(&m, req, sizeof req);
    m = decode_ok(world, sizeof world);
    ck_assert_uint_eq(m.h.type, KN_KRP_WORLD);
    ck_assert_uint_eq(m.u.world.total_len, 485);
    ck_assert_uint_eq(m.u.world.offset, 480);
    ck_assert_uint_eq(m.u.world.n, 5);
    ck_assert_mem_eq(m.u.world.data, "null}", 5);
    assert_encodes_to(&m, world, sizeof world);
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_WORLD_REQ), "WORLD_REQ");
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_WORLD), "WORLD");
    ck_assert(kn_krp_is_to_robot(KN_KRP_WORLD_REQ));
    ck_assert(!kn_krp_is_to_robot(KN_KRP_WORLD));
    ck_assert_uint_eq(KN_KRP_CAP_WORLD, 1u << 3);
}
END_TEST

/* The e-stop info extension: ESTOP_INFO_REQ has no payload; ESTOP_INFO
 * says how many engagements hold and lists them, 24 bytes each. This one
 * is also the example of docs/protocol.md (doc_examples). */
static const uint8_t
    doc_estop_info
        [] = {
            0x4B, 0x4E, 0x01, 0x87, 0x2A, 0,    0,    0,    0x34, 0,    0,    0, 0x03,
            0x02, 0x00, 0x00,                               /* engaged 3, n 2, pad */
            0x02, 0x01, 0x00, 0x00, 0xDC, 0x05, 0x00, 0x00, /* session, present, 1500 ms */
            'a',  'l',  'i',  'c',  'e',  0,    0,    0,    0,    0,    0,    0, 0,
            0,    0,    0,    0x01, 0x00, 0x00, 0x00, 0x70, 0x11, 0x01, 0x00, /* plain, gone, 70000 ms */
            's',  't',  'a',  't',  'i',  'o',  'n',  '-',  'b',  0,    0,    0, 0,
            0,    0,    0,
        };

START_TEST(golden_estop_info)
{
    static const uint8_t req[] = { 0x4B, 0x4E, 0x01, 0x0B, 0x07, 0, 0, 0, 0, 0, 0, 0 };
    const uint8_t *info = doc_estop_info;
    struct kn_krp_msg m = decode_ok(req, sizeof req);
    ck_assert_uint_eq(m.h.type, KN_KRP_ESTOP_INFO_REQ);
    ck_assert_uint_eq(m.h.seq, 7);
    assert_encodes_to(&m, req, sizeof req);
    m = decode_ok(info, sizeof doc_estop_info);
    ck_assert_uint_eq(m.h.type, KN_KRP_ESTOP_INFO);
    const struct kn_krp_estop_info *x = &m.u.estop_info;
    ck_assert_uint_eq(x->engaged, 3);
    ck_assert_uint_eq(x->n, 2);
    ck_assert_uint_eq(x->e[0].kind, KN_KRP_ENG_SESSION);
    ck_assert_uint_eq(x->e[0].present, 1);
    ck_assert_uint_eq(x->e[0].held_ms, 1500);
    ck_assert_str_eq(x->e[0].name, "alice");
    ck_assert_uint_eq(x->e[1].kind, KN_KRP_ENG_PLAIN);
    ck_assert_uint_eq(x->e[1].present, 0);
    ck_assert_uint_eq(x->e[1].held_ms, 70000);
    ck_assert_str_eq(x->e[1].name, "station-b");
    assert_encodes_to(&m, info, sizeof doc_estop_info);
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_ESTOP_INFO_REQ), "ESTOP_INFO_REQ");
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_ESTOP_INFO), "ESTOP_INFO");
    ck_assert(kn_krp_is_to_robot(KN_KRP_ESTOP_INFO_REQ));
    ck_assert(!kn_krp_is_to_robot(KN_KRP_ESTOP_INFO));
    ck_assert_uint_eq(KN_KRP_CAP_ESTOP_INFO, 1u << 6);
}
END_TEST

/* The trials extension: TRIAL_REQ carries an op; TRIAL the trial's
 * state in 72 fixed bytes. This one is also docs/protocol.md's example. */
static const uint8_t doc_trial[] = {
    0x4B, 0x4E, 0x01, 0x88, 0x2B, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00, 0x00, 0x73, 0x74,
    0x65, 0x70, 0x66, 0x69, 0x65, 0x6C, 0x64, 0x2D, 0x65, 0x32, 0x38, 0x32, 0x38, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x0A, 0x00, 0x02, 0x00, 0x39, 0x30, 0x00, 0x00,
    0x01, 0x00, 0x02, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xC0, 0x27, 0x09, 0x00, 0x00, 0xD0, 0x07, 0x00,
};
static const uint8_t doc_trial_req[] = {
    0x4B, 0x4E, 0x01, 0x0C, 0x2C, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
};

START_TEST(golden_trial)
{
    struct kn_krp_msg m = decode_ok(doc_trial_req, sizeof doc_trial_req);
    ck_assert_uint_eq(m.h.type, KN_KRP_TRIAL_REQ);
    ck_assert_uint_eq(m.u.trial_req.op, KN_KRP_TRIAL_OP_RESET);
    assert_encodes_to(&m, doc_trial_req, sizeof doc_trial_req);
    m = decode_ok(doc_trial, sizeof doc_trial);
    const struct kn_krp_trial *t = &m.u.trial;
    ck_assert_str_eq(t->name, "stepfield-e2828");
    ck_assert_uint_eq(t->course, KN_KRP_TRIAL_TRAVERSE);
    ck_assert_uint_eq(t->flags, KN_KRP_TRIAL_F_UNDER_WAY);
    ck_assert_uint_eq(t->end, KN_KRP_TRIAL_END_NONE);
    ck_assert_uint_eq(t->reps, 10);
    ck_assert_uint_eq(t->rep, 2);
    ck_assert_uint_eq(t->rep_elapsed_ms, 12345);
    ck_assert_uint_eq(t->rep_faults, 1);
    ck_assert_uint_eq(t->completed, 2);
    ck_assert_uint_eq(t->successes, 1);
    ck_assert_uint_eq(t->faults, 2);
    ck_assert_uint_eq(t->by_kind[KN_KRP_TF_WALL], 1);
    ck_assert_uint_eq(t->by_kind[KN_KRP_TF_ASSIST], 1);
    ck_assert_uint_eq(t->by_kind[KN_KRP_TF_TIP_OVER] + t->by_kind[KN_KRP_TF_LANE] +
                          t->by_kind[KN_KRP_TF_ESTOP],
                      0);
    ck_assert_uint_eq(t->limit_ms, 600000);
    ck_assert_uint_eq(t->left_ms, 512000);
    assert_encodes_to(&m, doc_trial, sizeof doc_trial);
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_TRIAL_REQ), "TRIAL_REQ");
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_TRIAL), "TRIAL");
    ck_assert_str_eq(kn_krp_error_name(KN_KRP_ERR_NO_TRIAL), "NO_TRIAL");
    ck_assert(kn_krp_is_to_robot(KN_KRP_TRIAL_REQ));
    ck_assert(!kn_krp_is_to_robot(KN_KRP_TRIAL));
    ck_assert_uint_eq(KN_KRP_CAP_TRIAL, 1u << 7);
}
END_TEST

/* TRIAL_REQ is 4 bytes (8 with a token), TRIAL 72: anything else is
 * BAD_LENGTH; a name of 32 bytes without a NUL decodes whole. */
START_TEST(trial_payload_bounds)
{
    uint8_t buf[200];
    struct kn_krp_msg m;
    memcpy(buf, doc_trial, sizeof doc_trial);
    for (size_t plen = 0; plen <= 100; plen++) {
        buf[8] = (uint8_t)plen;
        ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m),
                         plen == 72 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
    }
    buf[8] = 72;
    memset(buf + KN_KRP_HDR_LEN, 'x', 32);
    ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + 72, &m), KN_KRP_OK);
    ck_assert_uint_eq(strlen(m.u.trial.name), 32);
    memcpy(buf, doc_trial_req, sizeof doc_trial_req);
    for (size_t plen = 0; plen <= 12; plen++) {
        buf[8] = (uint8_t)plen;
        buf[10] = 0;
        ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m),
                         plen == 4 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
        buf[10] = KN_KRP_F_TOKEN;
        ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m),
                         plen == 8 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
    }
}
END_TEST

/* ESTOP_INFO takes 4 + 24 n bytes for n = 0..20, n also in its second
 * byte; ESTOP_INFO_REQ none (4 with a session token); anything else is
 * BAD_LENGTH, and more than 20 entries are not encoded. */
START_TEST(estop_info_payload_bounds)
{
    uint8_t buf[600] = { 0x4B, 0x4E, 0x01, 0x87 };
    struct kn_krp_msg m;
    for (size_t plen = 0; plen <= 500; plen++) {
        buf[8] = (uint8_t)plen;
        buf[9] = (uint8_t)(plen >> 8);
        bool whole = plen >= 4 && (plen - 4) % 24 == 0 && (plen - 4) / 24 <= 20;
        for (unsigned n = 0; n <= 21; n++) {
            buf[13] = (uint8_t)n;
            enum kn_krp_result r = kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m);
            bool ok = whole && n == (plen - 4) / 24;
            ck_assert_msg(r == (ok ? KN_KRP_OK : KN_KRP_EPAYLOAD), "payload %zu, n %u: %s", plen, n,
                          kn_krp_result_str(r));
            if (ok)
                ck_assert_uint_eq(m.u.estop_info.n, n);
        }
    }
    buf[3] = KN_KRP_ESTOP_INFO_REQ;
    for (size_t plen = 0; plen <= 8; plen++) {
        buf[8] = (uint8_t)plen;
        buf[9] = 0;
        buf[10] = 0;
        ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m),
                         plen == 0 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
        buf[10] = KN_KRP_F_TOKEN;
        ck_assert_int_eq(kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m),
                         plen == 4 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
    }
    ck_assert_int_eq(kn_krp_payload_max(KN_KRP_ESTOP_INFO), 484);
    uint8_t out[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_ESTOP_INFO, 1, 0);
    m.u.estop_info.n = KN_KRP_ESTOP_ENTRIES + 1;
    ck_assert_uint_eq(kn_krp_encode(&m, out, sizeof out), 0);
    m.u.estop_info.n = KN_KRP_ESTOP_ENTRIES;
    ck_assert_uint_eq(kn_krp_encode(&m, out, sizeof out), KN_KRP_HDR_LEN + 484);
    ck_assert_uint_le(KN_KRP_HDR_LEN + 484, KN_KRP_MAX_DGRAM);
}
END_TEST

/* WORLD takes 8..488 payload bytes, an empty chunk included; WORLD_REQ
 * exactly 4; anything else is BAD_LENGTH. */
START_TEST(world_payload_bounds)
{
    uint8_t buf[600] = { 0x4B, 0x4E, 0x01, 0x86 };
    struct kn_krp_msg m;
    for (size_t plen = 0; plen <= 500; plen++) {
        buf[8] = (uint8_t)plen;
        buf[9] = (uint8_t)(plen >> 8);
        enum kn_krp_result r = kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m);
        bool ok = plen >= KN_KRP_LEN_WORLD && plen <= KN_KRP_LEN_WORLD + KN_KRP_WORLD_CHUNK;
        ck_assert_msg(r == (ok ? KN_KRP_OK : KN_KRP_EPAYLOAD), "payload %zu: %s", plen,
                      kn_krp_result_str(r));
        if (ok)
            ck_assert_uint_eq(m.u.world.n, plen - KN_KRP_LEN_WORLD);
    }
    buf[3] = KN_KRP_WORLD_REQ;
    for (size_t plen = 0; plen <= 8; plen++) {
        buf[8] = (uint8_t)plen;
        buf[9] = 0;
        enum kn_krp_result r = kn_krp_decode(buf, KN_KRP_HDR_LEN + plen, &m);
        ck_assert_int_eq(r, plen == 4 ? KN_KRP_OK : KN_KRP_EPAYLOAD);
    }
    ck_assert_int_eq(kn_krp_payload_max(KN_KRP_WORLD), 488);
    ck_assert_int_eq(kn_krp_payload_max(KN_KRP_STATUS), 112);
    ck_assert_int_eq(kn_krp_payload_max(0x42), -1);
    /* a chunk over 480 bytes is not encoded */
    uint8_t out[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_WORLD, 1, 0);
    m.u.world.n = KN_KRP_WORLD_CHUNK + 1;
    ck_assert_uint_eq(kn_krp_encode(&m, out, sizeof out), 0);
    m.u.world.n = KN_KRP_WORLD_CHUNK;
    ck_assert_uint_eq(kn_krp_encode(&m, out, sizeof out), 500);
    ck_assert_uint_eq(kn_krp_encode(&m, out, 499), 0);
}
END_TEST

START_TEST(golden_hello_ack)
{
    static const uint8_t g[] = {
        0x4B, 0x4E, 0x01, 0x81, 0x01, 0, 0, 0, 0x28, 0, 0, 0, 0x01, 0x00, 0x01, 0x02, /* protocol 1, simulated, USARSim */
        'k',  'e',  'n',  'a',  'f',  0, 0, 0, 0,    0, 0, 0, 0,    0,    0,    0,    0x03,
        0x00, 0x00, 0x00,       /* torque + ground truth */
        0xA0, 0x0F, 0x00, 0x00, /* 4000 counts/m */
        0x20, 0x03, 0x00, 0x00, /* 800 mm/s */
        0x52, 0xD1, 0xFF, 0xFF, /* -11950 */
        0xAE, 0x2E, 0x00, 0x00, /* +11950 */
    };
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    const struct kn_krp_hello_ack *a = &m.u.hello_ack;
    ck_assert_uint_eq(a->protocol, 1);
    ck_assert_uint_eq(a->simulated, 1);
    ck_assert_uint_eq(a->backend, KN_KRP_BACKEND_USARSIM);
    ck_assert_str_eq(a->robot_name, "kenaf");
    ck_assert_uint_eq(a->capabilities, KN_KRP_CAP_FLIPPER_TORQUE | KN_KRP_CAP_GROUND_TRUTH);
    ck_assert_int_eq(a->counts_per_m, 4000);
    ck_assert_int_eq(a->max_speed_mm_s, 800);
    ck_assert_int_eq(a->flipper_min_cdeg, -11950);
    ck_assert_int_eq(a->flipper_max_cdeg, 11950);
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(golden_status)
{
    uint8_t g[12 + 112];
    static const uint8_t hdr[] = { 0x4B, 0x4E, 0x01, 0x85, 0x10, 0, 0, 0, 0x70, 0, 0, 0 };
    memcpy(g, hdr, sizeof hdr);
    uint8_t *p = g + 12;
    /* Written field by field in the spec's order, each as explicit bytes. */
    static const uint8_t body[112] = {
        0x07, 0x00, 0x00, 0x00,                         /* req_seq 7 */
        0x40, 0x42, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, /* time 1 000 000 us */
        0xE8, 0x03, 0x00, 0x00, 0x18, 0xFC, 0xFF, 0xFF, /* counts 1000, -1000 */
        0x64, 0x00, 0x00, 0x00, 0x9C, 0xFF, 0xFF, 0xFF, /* speed 100, -100 */
        0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, /* flippers 1, 2, */
        0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, /*          3, 4 */
        0x05, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, /* torques 5, 6, */
        0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, /*         7, 8 */
        0x3D, 0x02, 0x00, 0x00,                         /* roll 573 */
        0x86, 0xFB, 0xFF, 0xFF,                         /* pitch -1146 */
        0x50, 0x46, 0x00, 0x00,                         /* yaw 18000 */
        0x0A, 0x00, 0x00, 0x00, 0x0B, 0x00, 0x00, 0x00,
        0x0C, 0x00, 0x00, 0x00, /* rate */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x4F, 0x26, 0x00, 0x00, /* acc z 9807 */
        0x94, 0x11, 0x00, 0x00, 0x94, 0xF8, 0xFF, 0xFF,
        0x00, 0x00, 0x00, 0x00, /* pos 4500,-1900,0 */
        0xC0, 0x5D,             /* 24000 mV */
        0x06, 0x00,             /* BACKEND_UP | SIMULATED */
    };
    memcpy(p, body, sizeof body);
    struct kn_krp_msg m = decode_ok(g, sizeof g);
    const struct kn_krp_status *s = &m.u.status;
    ck_assert_uint_eq(s->req_seq, 7);
    ck_assert_uint_eq(s->time_us, 1000000u);
    ck_assert_int_eq(s->crawler_count[1], -1000);
    ck_assert_int_eq(s->crawler_speed_mm_s[1], -100);
    ck_assert_int_eq(s->flipper_cdeg[3], 4);
    ck_assert_int_eq(s->flipper_torque_mnm[0], 5);
    ck_assert_int_eq(s->rpy_cdeg[0], 573);
    ck_assert_int_eq(s->rpy_cdeg[1], -1146);
    ck_assert_int_eq(s->rpy_cdeg[2], 18000);
    ck_assert_int_eq(s->rate_mdeg_s[2], 12);
    ck_assert_int_eq(s->accel_mm_s2[2], 9807);
    ck_assert_int_eq(s->pos_mm[1], -1900);
    ck_assert_uint_eq(s->battery_mv, 24000);
    ck_assert_uint_eq(s->flags, KN_KRP_ST_BACKEND_UP | KN_KRP_ST_SIMULATED);
    assert_encodes_to(&m, g, sizeof g);
}
END_TEST

START_TEST(status_time_uses_all_64_bits)
{
    struct kn_krp_msg m, d;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_STATUS, 1, 0);
    m.u.status.time_us = 0x0123456789ABCDEFull;
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    ck_assert_uint_eq(buf[12 + 4], 0xEF);
    ck_assert_uint_eq(buf[12 + 11], 0x01);
    ck_assert_int_eq(kn_krp_decode(buf, n, &d), KN_KRP_OK);
    ck_assert(d.u.status.time_us == 0x0123456789ABCDEFull);
}
END_TEST

static const uint8_t all_types[] = {
    KN_KRP_HELLO,          KN_KRP_CRAWLER,    KN_KRP_FLIPPER,   KN_KRP_STOP,  KN_KRP_STATUS_REQ,
    KN_KRP_SUBSCRIBE,      KN_KRP_ESTOP,      KN_KRP_WORLD_REQ, KN_KRP_ACK,   KN_KRP_HELLO_ACK,
    KN_KRP_STATUS,         KN_KRP_ERROR,      KN_KRP_WORLD,     KN_KRP_BYE,   KN_KRP_STEP,
    KN_KRP_ESTOP_INFO_REQ, KN_KRP_ESTOP_INFO, KN_KRP_TRIAL_REQ, KN_KRP_TRIAL,
};

/* Fill every payload byte of a message through the struct with a pattern
 * derived from i, encode, decode, re-encode: the bytes must agree. */
START_TEST(round_trip_every_type)
{
    uint8_t type = all_types[_i];
    for (unsigned k = 0; k < 200; k++) {
        struct kn_krp_msg m, d;
        uint8_t a[KN_KRP_MAX_DGRAM], b[KN_KRP_MAX_DGRAM];
        kn_krp_init(&m, type, k * 2654435761u, (uint16_t)k);
        unsigned char *raw = (unsigned char *)&m.u;
        for (size_t j = 0; j < sizeof m.u; j++)
            raw[j] = (unsigned char)(k * 31 + j * 7);
        /* names are strings: keep them terminated */
        if (type == KN_KRP_HELLO)
            m.u.hello.name[k % 17] = '\0';
        if (type == KN_KRP_HELLO_ACK)
            m.u.hello_ack.robot_name[k % 17] = '\0';
        if (type == KN_KRP_TRIAL)
            m.u.trial.name[k % 33] = '\0';
        size_t extra = 0;
        if (kn_krp_is_to_robot(type) && (m.h.flags & KN_KRP_F_TOKEN))
            extra = KN_KRP_LEN_TOKEN;   /* the session token follows the payload */
        if (type == KN_KRP_HELLO_ACK) { /* plain 40 bytes, or 48 with a session */
            m.u.hello_ack.session = k & 1;
            extra = m.u.hello_ack.session ? 8 : 0;
            if (!m.u.hello_ack.session)
                m.u.hello_ack.role = 0, m.u.hello_ack.token = 0;
        }
        if (type == KN_KRP_WORLD) /* chunks of every size, 0..480 */
            extra = m.u.world.n =
                (uint16_t)(k == 1 ? KN_KRP_WORLD_CHUNK : k * 7 % (KN_KRP_WORLD_CHUNK + 1));
        if (type == KN_KRP_ESTOP_INFO) { /* 0..20 entries */
            m.u.estop_info.n = (uint8_t)(k % (KN_KRP_ESTOP_ENTRIES + 1));
            extra = KN_KRP_ESTOP_ENTRY_LEN * m.u.estop_info.n;
            for (unsigned i = 0; i < KN_KRP_ESTOP_ENTRIES; i++)
                m.u.estop_info.e[i].name[(k + i) % 17] = '\0';
        }
        size_t n = kn_krp_encode(&m, a, sizeof a);
        ck_assert_uint_eq(n, (size_t)(KN_KRP_HDR_LEN + kn_krp_payload_len(type)) + extra);
        ck_assert_int_eq(kn_krp_decode(a, n, &d), KN_KRP_OK);
        ck_assert_uint_eq(d.h.type, type);
        ck_assert_uint_eq(d.h.seq, m.h.seq);
        ck_assert_uint_eq(d.h.flags, m.h.flags);
        if (extra == KN_KRP_LEN_TOKEN && type != KN_KRP_HELLO_ACK)
            ck_assert_uint_eq(d.h.token, m.h.token);
        if (type == KN_KRP_HELLO_ACK && m.u.hello_ack.session) {
            ck_assert_uint_eq(d.u.hello_ack.role, m.u.hello_ack.role);
            ck_assert_uint_eq(d.u.hello_ack.token, m.u.hello_ack.token);
        }
        ck_assert_uint_eq(kn_krp_encode(&d, b, sizeof b), n);
        ck_assert_mem_eq(a, b, n);
    }
}
END_TEST

START_TEST(encode_pads_are_zero)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    memset(buf, 0xAA, sizeof buf);
    kn_krp_init(&m, KN_KRP_FLIPPER, 1, 0);
    m.u.flipper.mask = 0xF;
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 32);
    ck_assert_uint_eq(buf[13], 0);
    ck_assert_uint_eq(buf[14], 0);
    ck_assert_uint_eq(buf[15], 0);
    kn_krp_init(&m, KN_KRP_ERROR, 1, 0);
    memset(buf, 0xAA, sizeof buf);
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 20);
    ck_assert_uint_eq(buf[18], 0);
    ck_assert_uint_eq(buf[19], 0);
}
END_TEST

START_TEST(encode_refuses_small_buffer_and_unknown_type)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_STATUS, 1, 0);
    ck_assert_uint_eq(kn_krp_encode(&m, buf, 12 + 111), 0);
    ck_assert_uint_eq(kn_krp_encode(&m, buf, 12 + 112), 124);
    kn_krp_init(&m, 0x42, 1, 0);
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 0);
}
END_TEST

START_TEST(error_bad_magic)
{
    static const uint8_t a[] = { 0x4B, 0x4F, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t one[] = { 0x4B };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_EMAGIC);
    ck_assert_int_eq(kn_krp_decode(one, sizeof one, &m), KN_KRP_EMAGIC);
    ck_assert_int_eq(kn_krp_decode(a, 0, &m), KN_KRP_EMAGIC);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_EMAGIC), 0);
}
END_TEST

START_TEST(error_short_header)
{
    static const uint8_t a[] = { 0x4B, 0x4E, 1, 5, 9, 9, 9 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_ESHORT);
    /* the header is incomplete: the answer carries seq 0 and type 0 */
    ck_assert_uint_eq(m.h.seq, 0);
    ck_assert_uint_eq(m.h.type, 0);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_ESHORT), KN_KRP_ERR_BAD_LENGTH);
    ck_assert_int_eq(kn_krp_decode(a, 2, &m), KN_KRP_ESHORT);
}
END_TEST

START_TEST(error_too_big)
{
    uint8_t a[600] = { 0x4B, 0x4E, 1, 5 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, 513, &m), KN_KRP_ETOOBIG);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_ETOOBIG), KN_KRP_ERR_BAD_LENGTH);
}
END_TEST

START_TEST(error_version)
{
    static const uint8_t a[] = { 0x4B, 0x4E, 2, 5, 3, 0, 0, 0, 0, 0, 0, 0 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_EVERSION);
    ck_assert_uint_eq(m.h.seq, 3);
    ck_assert_uint_eq(m.h.type, 5);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_EVERSION), KN_KRP_ERR_BAD_VERSION);
}
END_TEST

START_TEST(error_length_field)
{
    /* STATUS_REQ claiming 4 payload bytes it does not have */
    static const uint8_t a[] = { 0x4B, 0x4E, 1, 5, 3, 0, 0, 0, 4, 0, 0, 0 };
    /* CRAWLER with 7 of 8 payload bytes, length field honest */
    static const uint8_t b[] = { 0x4B, 0x4E, 1, 2, 4, 0, 0, 0, 7, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_ELENGTH);
    ck_assert_uint_eq(m.h.seq, 3);
    ck_assert_int_eq(kn_krp_decode(b, sizeof b, &m), KN_KRP_EPAYLOAD);
    ck_assert_uint_eq(m.h.type, KN_KRP_CRAWLER);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_ELENGTH), KN_KRP_ERR_BAD_LENGTH);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_EPAYLOAD), KN_KRP_ERR_BAD_LENGTH);
}
END_TEST

START_TEST(error_unknown_type)
{
    static const uint8_t a[] = { 0x4B, 0x4E, 1, 0x42, 3, 0, 0, 0, 0, 0, 0, 0 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_ETYPE);
    ck_assert_uint_eq(m.h.type, 0x42);
    ck_assert_uint_eq(kn_krp_error_code(KN_KRP_ETYPE), KN_KRP_ERR_UNKNOWN_TYPE);
}
END_TEST

/* STEP (lockstep extension): 4 bytes, the robot time to let pass in us,
 * little-endian like every field; with a session token, 8. */
START_TEST(golden_step)
{
    static const uint8_t want[] = { 0x4B, 0x4E, 1, 0x0A, 0x2A, 0,    0,    0,
                                    4,    0,    0, 0,    0x20, 0x4E, 0x00, 0x00 };
    struct kn_krp_msg m, d;
    kn_krp_init(&m, KN_KRP_STEP, 42, 0);
    m.u.step.advance_us = 20000;
    uint8_t buf[64];
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), sizeof want);
    ck_assert_mem_eq(buf, want, sizeof want);
    ck_assert_int_eq(kn_krp_decode(want, sizeof want, &d), KN_KRP_OK);
    ck_assert_uint_eq(d.h.type, KN_KRP_STEP);
    ck_assert_uint_eq(d.u.step.advance_us, 20000);
    ck_assert(kn_krp_is_to_robot(KN_KRP_STEP));
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_STEP), "STEP");
    /* 3 or 5 payload bytes: BAD_LENGTH, not a short read */
    static const uint8_t short3[] = { 0x4B, 0x4E, 1, 0x0A, 1, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3 };
    ck_assert_int_eq(kn_krp_decode(short3, sizeof short3, &d), KN_KRP_EPAYLOAD);
    /* with a token */
    kn_krp_init(&m, KN_KRP_STEP, 43, KN_KRP_F_TOKEN);
    m.u.step.advance_us = 1000;
    m.h.token = 0x01020304u;
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 20);
    ck_assert_int_eq(kn_krp_decode(buf, 20, &d), KN_KRP_OK);
    ck_assert_uint_eq(d.h.token, 0x01020304u);
    ck_assert_uint_eq(d.u.step.advance_us, 1000);
}
END_TEST

START_TEST(unknown_flags_are_kept_not_rejected)
{
    static const uint8_t a[] = { 0x4B, 0x4E, 1, 4, 3, 0, 0, 0, 0, 0, 0xF6, 0xFF };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(a, sizeof a, &m), KN_KRP_OK);
    ck_assert_uint_eq(m.h.flags, 0xFFF6);
}
END_TEST

/* TOKEN: four more payload bytes on what a controller sends, the token;
 * meaningless (and so ignored) on what the robot sends. */
START_TEST(session_token_and_hello_ack)
{
    static const uint8_t stop_tok[] = { 0x4B, 0x4E, 1,    4, 9,    0,    0,    0,
                                        4,    0,    0x08, 0, 0x78, 0x56, 0x34, 0x12 };
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(stop_tok, sizeof stop_tok, &m), KN_KRP_OK);
    ck_assert_uint_eq(m.h.token, 0x12345678u);
    /* TOKEN without the token bytes, or a token on a plain length */
    static const uint8_t stop_short[] = { 0x4B, 0x4E, 1, 4, 9, 0, 0, 0, 0, 0, 0x08, 0 };
    ck_assert_int_eq(kn_krp_decode(stop_short, sizeof stop_short, &m), KN_KRP_EPAYLOAD);
    static const uint8_t stop_extra[] = { 0x4B, 0x4E, 1, 4, 9, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4 };
    ck_assert_int_eq(kn_krp_decode(stop_extra, sizeof stop_extra, &m), KN_KRP_EPAYLOAD);
    /* BYE: no payload; with a token, 4 */
    kn_krp_init(&m, KN_KRP_BYE, 7, KN_KRP_F_TOKEN);
    m.h.token = 0xCAFEF00Du;
    uint8_t buf[64];
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 16);
    ck_assert_str_eq(kn_krp_type_name(KN_KRP_BYE), "BYE");
    /* an ERROR from the robot with the TOKEN bit has its usual 8 bytes */
    kn_krp_init(&m, KN_KRP_ERROR, 1, KN_KRP_F_TOKEN);
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 20);
    ck_assert_int_eq(kn_krp_decode(buf, 20, &m), KN_KRP_OK);
    /* HELLO_ACK: 40 or 48 bytes, nothing between */
    kn_krp_init(&m, KN_KRP_HELLO_ACK, 1, 0);
    m.u.hello_ack.session = true;
    m.u.hello_ack.role = KN_KRP_ROLE_OBSERVER;
    m.u.hello_ack.token = 0xA1B2C3D4u;
    ck_assert_uint_eq(kn_krp_encode(&m, buf, sizeof buf), 60);
    ck_assert_uint_eq(buf[52], KN_KRP_ROLE_OBSERVER);
    ck_assert_uint_eq(buf[56], 0xD4);
    struct kn_krp_msg d;
    ck_assert_int_eq(kn_krp_decode(buf, 60, &d), KN_KRP_OK);
    ck_assert(d.u.hello_ack.session);
    ck_assert_uint_eq(d.u.hello_ack.token, 0xA1B2C3D4u);
    for (uint16_t len = 41; len < 48; len++) {
        buf[8] = (uint8_t)len;
        ck_assert_int_eq(kn_krp_decode(buf, 12u + len, &d), KN_KRP_EPAYLOAD);
    }
}
END_TEST

/* The client's side: stamping, accepting, and telling a stale
 * BAD_SESSION from one that ends the session. */
START_TEST(client_session)
{
    struct kn_krp_session s = { 0 };
    struct kn_krp_msg m;
    kn_krp_session_hello(&s, &m, "square", false);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_SESSION);
    ck_assert_str_eq(m.u.hello.name, "square");
    struct kn_krp_hello_ack a = { .protocol = 1, .capabilities = 0 };
    ck_assert(!kn_krp_session_accept(&s, &a, 2));
    ck_assert(s.legacy && !s.on); /* a robot without sessions */
    a.capabilities = KN_KRP_CAP_SESSIONS;
    a.session = true;
    a.role = KN_KRP_ROLE_DRIVER;
    a.token = 77;
    ck_assert(kn_krp_session_accept(&s, &a, 10));
    ck_assert(!kn_krp_session_accept(&s, &a, 12)); /* the same session again */
    kn_krp_init(&m, KN_KRP_CRAWLER, 11, 0);
    kn_krp_session_stamp(&s, &m);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_TOKEN);
    ck_assert_uint_eq(m.h.token, 77);
    kn_krp_session_hello(&s, &m, "square", true);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_SESSION | KN_KRP_F_OBSERVER | KN_KRP_F_TOKEN);
    struct kn_krp_error e = { .offending_seq = 9,
                              .offending_type = 2,
                              .code = KN_KRP_ERR_BAD_SESSION };
    ck_assert(!kn_krp_session_lost(&s, &e)); /* sent before the token */
    e.code = KN_KRP_ERR_NOT_OWNER;
    e.offending_seq = 11;
    ck_assert(!kn_krp_session_lost(&s, &e));
    e.code = KN_KRP_ERR_BAD_SESSION;
    ck_assert(kn_krp_session_lost(&s, &e));
    ck_assert(!s.on);
}
END_TEST

START_TEST(direction_and_names)
{
    for (unsigned t = 0; t < 256; t++) {
        bool known = kn_krp_payload_len((uint8_t)t) >= 0;
        ck_assert(known == (kn_krp_type_name((uint8_t)t) != NULL));
        if (kn_krp_is_to_robot((uint8_t)t))
            ck_assert(known && t < 0x80);
    }
    ck_assert(!kn_krp_is_to_robot(KN_KRP_STATUS));
    ck_assert(kn_krp_is_to_robot(KN_KRP_ESTOP));
    ck_assert_str_eq(kn_krp_result_str(KN_KRP_EVERSION), "bad version");
    /* ERROR codes 2..12 and the extensions' 64 and 65 have names, no other */
    for (unsigned c = 0; c < KN_KRP_ERR_CODES; c++)
        ck_assert((kn_krp_error_name((uint8_t)c) != NULL) ==
                  ((c >= 2 && c <= KN_KRP_ERR_MAX) || c == KN_KRP_ERR_NOT_ALLOWED ||
                   c == KN_KRP_ERR_NO_TRIAL));
    ck_assert_str_eq(kn_krp_error_name(KN_KRP_ERR_NOT_ALLOWED), "NOT_ALLOWED");
    ck_assert_str_eq(kn_krp_error_name(KN_KRP_ERR_RANGE), "RANGE");
    ck_assert_str_eq(kn_krp_error_name(KN_KRP_ERR_BACKEND_DOWN), "BACKEND_DOWN");
}
END_TEST

START_TEST(seq_serial_arithmetic)
{
    ck_assert(kn_krp_seq_newer(2, 1));
    ck_assert(!kn_krp_seq_newer(1, 2));
    ck_assert(!kn_krp_seq_newer(5, 5));
    ck_assert(kn_krp_seq_newer(0, 0xFFFFFFFFu)); /* wrap */
    ck_assert(kn_krp_seq_newer(10, 0xFFFFFFF0u));
    ck_assert(!kn_krp_seq_newer(0xFFFFFFF0u, 10));
    ck_assert(kn_krp_seq_newer(0x7FFFFFFFu, 0));
}
END_TEST

/* Every prefix and every single-byte corruption of a valid datagram decodes
 * to a defined result without reading past the end (ASan checks that). */
/* kn_krp_trial_equal: every field counts, the padding and the bytes
 * after the name's NUL do not. */
START_TEST(trial_equality)
{
    struct kn_krp_trial a, b;
    memset(&a, 0x00, sizeof a);
    memset(&b, 0x5a, sizeof b); /* other padding */
    strcpy(b.name, "stepfield");
    strcpy(a.name, "stepfield");
    a.course = b.course = KN_KRP_TRIAL_TRAVERSE;
    a.flags = b.flags = KN_KRP_TRIAL_F_UNDER_WAY;
    a.end = b.end = 0;
    a.reps = b.reps = 10;
    a.rep = b.rep = 2;
    a.rep_elapsed_ms = b.rep_elapsed_ms = 1234;
    a.rep_faults = b.rep_faults = 1;
    a.completed = b.completed = 2;
    a.successes = b.successes = 1;
    a.faults = b.faults = 3;
    for (int k = 0; k < KN_KRP_TRIAL_FAULT_KINDS; k++)
        a.by_kind[k] = b.by_kind[k] = (uint16_t)k;
    a.limit_ms = b.limit_ms = 600000;
    a.left_ms = b.left_ms = 500000;
    ck_assert(kn_krp_trial_equal(&a, &b));
    struct kn_krp_trial c = b;
    c.left_ms--;
    ck_assert(!kn_krp_trial_equal(&a, &c));
    c = b;
    c.by_kind[KN_KRP_TF_ASSIST]++;
    ck_assert(!kn_krp_trial_equal(&a, &c));
    c = b;
    c.name[8] = 'x';
    ck_assert(!kn_krp_trial_equal(&a, &c));
    c = b;
    c.flags ^= KN_KRP_TRIAL_F_ENDED;
    ck_assert(!kn_krp_trial_equal(&a, &c));
}
END_TEST

START_TEST(truncations_and_corruptions)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, KN_KRP_STATUS, 9, 0);
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        struct kn_krp_msg d;
        enum kn_krp_result r = kn_krp_decode(copy, len, &d);
        ck_assert(r != KN_KRP_OK);
        free(copy);
    }
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t copy[KN_KRP_MAX_DGRAM];
            memcpy(copy, buf, n);
            copy[i] ^= (uint8_t)(1u << bit);
            struct kn_krp_msg d;
            enum kn_krp_result r = kn_krp_decode(copy, n, &d);
            if (i < 2)
                ck_assert_int_eq(r, KN_KRP_EMAGIC);
            else if (i == 2)
                ck_assert_int_eq(r, KN_KRP_EVERSION);
        }
    }
}
END_TEST

/* ---- the worked example of docs/protocol.md ------------------------- */

/* The doc's datagrams, byte for byte. The test decodes each, checks every
 * field the doc's tables annotate, re-encodes it, and finds its hex dump
 * (16 bytes a line, as the doc prints it) in docs/protocol.md, so neither
 * the doc nor the codec can change alone. */
static const uint8_t doc_hello[] = {
    0x4B, 0x4E, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x73, 0x71,
    0x75, 0x61, 0x72, 0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t doc_hello_ack[] = {
    0x4B, 0x4E, 0x01, 0x81, 0x01, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x01, 0x6B, 0x65, 0x6E, 0x61, 0x66, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xA0, 0x0F, 0x00,
    0x00, 0x20, 0x03, 0x00, 0x00, 0x52, 0xD1, 0xFF, 0xFF, 0xAE, 0x2E, 0x00, 0x00,
};
static const uint8_t doc_crawler[] = {
    0x4B, 0x4E, 0x01, 0x02, 0x9A, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x01, 0x00, 0x6A, 0xFF, 0xFF, 0xFF, 0x96, 0x00, 0x00, 0x00,
};
static const uint8_t doc_ack[] = {
    0x4B, 0x4E, 0x01, 0x80, 0x76, 0x02, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0x9A, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
};
static const uint8_t doc_error[] = {
    0x4B, 0x4E, 0x01, 0xFF, 0x79, 0x02, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0x9C, 0x00, 0x00, 0x00, 0x02, 0x05, 0x00, 0x00,
};
static const uint8_t doc_status[] = {
    0x4B, 0x4E, 0x01, 0x85, 0x77, 0x02, 0x00, 0x00, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x20, 0xBC, 0xBE, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7C, 0x01, 0x00, 0x00, 0xA4, 0x01, 0x00, 0x00,
    0x6C, 0xFF, 0xFF, 0xFF, 0x97, 0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xFB, 0xFF, 0xFF, 0xFF,
    0xF9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x24, 0x01, 0x00,
    0xFD, 0xFF, 0xFF, 0xFF, 0x12, 0x00, 0x00, 0x00, 0x4F, 0x26, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0xC0, 0x5D, 0x06, 0x00,
};

static char *read_doc(void)
{
    const char *path = getenv("KN_PROTOCOL_DOC");
    ck_assert_msg(path != NULL, "KN_PROTOCOL_DOC not set (meson sets it to docs/protocol.md)");
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char doc[256 * 1024];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    return doc;
}

/* The datagram as the doc prints it: lower-case hex, 16 bytes a line. */
static void assert_in_doc(const char *doc, const uint8_t *b, size_t n, const char *what)
{
    char dump[4 * KN_KRP_MAX_DGRAM];
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += (size_t)snprintf(dump + w, sizeof dump - w, "%02x%s", b[i],
                              i + 1 == n     ? "\n"
                              : i % 16 == 15 ? "\n"
                                             : " ");
    ck_assert_msg(strstr(doc, dump) != NULL, "docs/protocol.md lacks the %s bytes:\n%s", what,
                  dump);
}

/* One of the doc's datagrams: decodes as the given type and seq,
 * re-encodes to the same bytes, and appears in the doc. */
static struct kn_krp_msg doc_datagram(const char *doc, const uint8_t *b, size_t n, uint8_t type,
                                      uint32_t seq)
{
    struct kn_krp_msg m = decode_ok(b, n);
    ck_assert_uint_eq(m.h.type, type);
    ck_assert_uint_eq(m.h.seq, seq);
    assert_encodes_to(&m, b, n);
    assert_in_doc(doc, b, n, kn_krp_type_name(type));
    return m;
}

START_TEST(doc_examples)
{
    const char *doc = read_doc();

    struct kn_krp_msg m = doc_datagram(doc, doc_hello, sizeof doc_hello, KN_KRP_HELLO, 1);
    ck_assert_uint_eq(m.h.flags, 0);
    ck_assert_str_eq(m.u.hello.name, "square");

    m = doc_datagram(doc, doc_hello_ack, sizeof doc_hello_ack, KN_KRP_HELLO_ACK, 1);
    const struct kn_krp_hello_ack *a = &m.u.hello_ack;
    ck_assert_uint_eq(a->protocol, 1);
    ck_assert_uint_eq(a->simulated, 1);
    ck_assert_uint_eq(a->backend, KN_KRP_BACKEND_ENGINE);
    ck_assert_str_eq(a->robot_name, "kenaf");
    ck_assert_uint_eq(a->capabilities, KN_KRP_CAP_GROUND_TRUTH);
    ck_assert_int_eq(a->counts_per_m, 4000);
    ck_assert_int_eq(a->max_speed_mm_s, 800);
    ck_assert_int_eq(a->flipper_min_cdeg, -11950);
    ck_assert_int_eq(a->flipper_max_cdeg, 11950);

    m = doc_datagram(doc, doc_crawler, sizeof doc_crawler, KN_KRP_CRAWLER, 154);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_ACK_REQ);
    ck_assert_int_eq(m.u.crawler.left_mm_s, -150);
    ck_assert_int_eq(m.u.crawler.right_mm_s, 150);

    m = doc_datagram(doc, doc_ack, sizeof doc_ack, KN_KRP_ACK, 630);
    ck_assert_uint_eq(m.u.ack.acked_seq, 154);
    ck_assert_uint_eq(m.u.ack.acked_type, KN_KRP_CRAWLER);

    m = doc_datagram(doc, doc_error, sizeof doc_error, KN_KRP_ERROR, 633);
    ck_assert_uint_eq(m.u.error.offending_seq, 156);
    ck_assert_uint_eq(m.u.error.offending_type, KN_KRP_CRAWLER);
    ck_assert_uint_eq(m.u.error.code, KN_KRP_ERR_RANGE);

    m = doc_datagram(doc, doc_status, sizeof doc_status, KN_KRP_STATUS, 631);
    const struct kn_krp_status *s = &m.u.status;
    ck_assert_uint_eq(s->req_seq, 0);
    ck_assert_uint_eq(s->time_us, 12500000u);
    ck_assert_int_eq(s->crawler_count[0], 380);
    ck_assert_int_eq(s->crawler_count[1], 420);
    ck_assert_int_eq(s->crawler_speed_mm_s[0], -148);
    ck_assert_int_eq(s->crawler_speed_mm_s[1], 151);
    static const int32_t flippers[4] = { 3000, 3000, 0, 0 };
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(s->flipper_cdeg[k], flippers[k]);
        ck_assert_int_eq(s->flipper_torque_mnm[k], 0);
    }
    static const int32_t rpy[3] = { 2, -5, 249 }, rate[3] = { 0, 0, 74800 };
    static const int32_t acc[3] = { -3, 18, 9807 }, pos[3] = { 100, 1, 80 };
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(s->rpy_cdeg[i], rpy[i]);
        ck_assert_int_eq(s->rate_mdeg_s[i], rate[i]);
        ck_assert_int_eq(s->accel_mm_s2[i], acc[i]);
        ck_assert_int_eq(s->pos_mm[i], pos[i]);
    }
    ck_assert_uint_eq(s->battery_mv, 24000);
    ck_assert_uint_eq(s->flags, KN_KRP_ST_BACKEND_UP | KN_KRP_ST_SIMULATED);

    /* the e-stop info extension's example (fields: golden_estop_info) */
    m = doc_datagram(doc, doc_estop_info, sizeof doc_estop_info, KN_KRP_ESTOP_INFO, 42);
    ck_assert_uint_eq(m.u.estop_info.engaged, 3);

    /* the trials extension's examples (fields: golden_trial) */
    m = doc_datagram(doc, doc_trial, sizeof doc_trial, KN_KRP_TRIAL, 43);
    ck_assert_uint_eq(m.u.trial.reps, 10);
    m = doc_datagram(doc, doc_trial_req, sizeof doc_trial_req, KN_KRP_TRIAL_REQ, 44);
    ck_assert_uint_eq(m.u.trial_req.op, KN_KRP_TRIAL_OP_RESET);
}
END_TEST

static Suite *krp_suite(void)
{
    Suite *s = suite_create("krp");
    TCase *g = tcase_create("golden");
    tcase_add_test(g, golden_hello);
    tcase_add_test(g, golden_hello_full_name);
    tcase_add_test(g, golden_crawler);
    tcase_add_test(g, golden_flipper);
    tcase_add_test(g, golden_empty_payloads);
    tcase_add_test(g, golden_subscribe_estop);
    tcase_add_test(g, golden_ack_error);
    tcase_add_test(g, golden_hello_ack);
    tcase_add_test(g, golden_world_req_and_world);
    tcase_add_test(g, world_payload_bounds);
    tcase_add_test(g, golden_estop_info);
    tcase_add_test(g, estop_info_payload_bounds);
    tcase_add_test(g, golden_trial);
    tcase_add_test(g, trial_payload_bounds);
    tcase_add_test(g, golden_status);
    tcase_add_test(g, status_time_uses_all_64_bits);
    tcase_add_test(g, doc_examples);
    suite_add_tcase(s, g);
    TCase *r = tcase_create("roundtrip");
    tcase_add_loop_test(r, round_trip_every_type, 0, (int)sizeof all_types);
    tcase_add_test(r, encode_pads_are_zero);
    tcase_add_test(r, encode_refuses_small_buffer_and_unknown_type);
    suite_add_tcase(s, r);
    TCase *e = tcase_create("errors");
    tcase_add_test(e, error_bad_magic);
    tcase_add_test(e, error_short_header);
    tcase_add_test(e, error_too_big);
    tcase_add_test(e, error_version);
    tcase_add_test(e, error_length_field);
    tcase_add_test(e, error_unknown_type);
    tcase_add_test(e, golden_step);
    tcase_add_test(e, unknown_flags_are_kept_not_rejected);
    tcase_add_test(e, session_token_and_hello_ack);
    tcase_add_test(e, client_session);
    tcase_add_test(e, direction_and_names);
    tcase_add_test(e, seq_serial_arithmetic);
    tcase_add_test(e, truncations_and_corruptions);
    tcase_add_test(e, trial_equality);
    suite_add_tcase(s, e);
    return s;
}

int main(void)
{
    return h_run_suite(krp_suite());
}
