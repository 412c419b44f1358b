/* KRP/1 codec: little-endian field packing and the envelope checks of
 * docs/protocol.md, in the order that decides which ERROR a datagram earns. */
#include "krp.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) | ((uint32_t)get16(p + 2) << 16);
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

/* Signed fields travel as two's complement; the cast back is well defined
 * for every uint32_t on the targets we build for. */
static int32_t geti32(const uint8_t *p)
{
    return (int32_t)get32(p);
}

static void puti32s(uint8_t *p, const int32_t *v, int n)
{
    for (int i = 0; i < n; i++)
        put32(p + 4 * i, (uint32_t)v[i]);
}

static void geti32s(const uint8_t *p, int32_t *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = geti32(p + 4 * i);
}

static void put_name(uint8_t *p, const char *name)
{
    size_t n = strnlen(name, KN_KRP_NAME_LEN);
    memset(p, 0, KN_KRP_NAME_LEN);
    memcpy(p, name, n);
}

/* The name is NUL-padded; bytes after the first NUL carry nothing, so they
 * are not kept (a decoded message then re-encodes to the same meaning). */
static void get_name(const uint8_t *p, char *name)
{
    size_t n = strnlen((const char *)p, KN_KRP_NAME_LEN);
    memset(name, 0, KN_KRP_NAME_LEN + 1);
    memcpy(name, p, n);
}

int kn_krp_payload_len(uint8_t type)
{
    /* One line per type, in the protocol's order: types whose lengths are
     * equal stay apart, each with its own constant. */
    /* NOLINTBEGIN(bugprone-branch-clone) */
    switch (type) {
    case KN_KRP_HELLO: return KN_KRP_LEN_HELLO;
    case KN_KRP_CRAWLER: return KN_KRP_LEN_CRAWLER;
    case KN_KRP_FLIPPER: return KN_KRP_LEN_FLIPPER;
    case KN_KRP_STOP: return KN_KRP_LEN_STOP;
    case KN_KRP_STATUS_REQ: return KN_KRP_LEN_STATUS_REQ;
    case KN_KRP_SUBSCRIBE: return KN_KRP_LEN_SUBSCRIBE;
    case KN_KRP_ESTOP: return KN_KRP_LEN_ESTOP;
    case KN_KRP_WORLD_REQ: return KN_KRP_LEN_WORLD_REQ;
    case KN_KRP_BYE: return KN_KRP_LEN_BYE;
    case KN_KRP_STEP: return KN_KRP_LEN_STEP;
    case KN_KRP_ESTOP_INFO_REQ: return KN_KRP_LEN_ESTOP_INFO_REQ;
    case KN_KRP_TRIAL_REQ: return KN_KRP_LEN_TRIAL_REQ;
    case KN_KRP_ACK: return KN_KRP_LEN_ACK;
    case KN_KRP_HELLO_ACK: return KN_KRP_LEN_HELLO_ACK;
    case KN_KRP_STATUS: return KN_KRP_LEN_STATUS;
    case KN_KRP_ERROR: return KN_KRP_LEN_ERROR;
    case KN_KRP_WORLD: return KN_KRP_LEN_WORLD;
    case KN_KRP_ESTOP_INFO: return KN_KRP_LEN_ESTOP_INFO;
    case KN_KRP_TRIAL: return KN_KRP_LEN_TRIAL;
    default: return -1;
    }
    /* NOLINTEND(bugprone-branch-clone) */
}

int kn_krp_payload_max(uint8_t type)
{
    if (type == KN_KRP_WORLD)
        return KN_KRP_LEN_WORLD + KN_KRP_WORLD_CHUNK;
    if (type == KN_KRP_HELLO_ACK)
        return KN_KRP_LEN_HELLO_ACK_SESSION;
    if (type == KN_KRP_ESTOP_INFO)
        return KN_KRP_LEN_ESTOP_INFO + KN_KRP_ESTOP_ENTRIES * KN_KRP_ESTOP_ENTRY_LEN;
    return kn_krp_payload_len(type);
}

const char *kn_krp_type_name(uint8_t type)
{
    switch (type) {
    case KN_KRP_HELLO: return "HELLO";
    case KN_KRP_CRAWLER: return "CRAWLER";
    case KN_KRP_FLIPPER: return "FLIPPER";
    case KN_KRP_STOP: return "STOP";
    case KN_KRP_STATUS_REQ: return "STATUS_REQ";
    case KN_KRP_SUBSCRIBE: return "SUBSCRIBE";
    case KN_KRP_ESTOP: return "ESTOP";
    case KN_KRP_WORLD_REQ: return "WORLD_REQ";
    case KN_KRP_BYE: return "BYE";
    case KN_KRP_STEP: return "STEP";
    case KN_KRP_ESTOP_INFO_REQ: return "ESTOP_INFO_REQ";
    case KN_KRP_TRIAL_REQ: return "TRIAL_REQ";
    case KN_KRP_ACK: return "ACK";
    case KN_KRP_HELLO_ACK: return "HELLO_ACK";
    case KN_KRP_STATUS: return "STATUS";
    case KN_KRP_ERROR: return "ERROR";
    case KN_KRP_WORLD: return "WORLD";
    case KN_KRP_ESTOP_INFO: return "ESTOP_INFO";
    case KN_KRP_TRIAL: return "TRIAL";
    default: return NULL;
    }
}

const char *kn_krp_error_name(uint8_t code)
{
    switch (code) {
    case KN_KRP_ERR_BAD_VERSION: return "BAD_VERSION";
    case KN_KRP_ERR_BAD_LENGTH: return "BAD_LENGTH";
    case KN_KRP_ERR_UNKNOWN_TYPE: return "UNKNOWN_TYPE";
    case KN_KRP_ERR_RANGE: return "RANGE";
    case KN_KRP_ERR_ESTOP: return "ESTOP";
    case KN_KRP_ERR_BACKEND_DOWN: return "BACKEND_DOWN";
    case KN_KRP_ERR_BUSY: return "BUSY";
    case KN_KRP_ERR_NOT_OWNER: return "NOT_OWNER";
    case KN_KRP_ERR_BAD_SESSION: return "BAD_SESSION";
    case KN_KRP_ERR_NO_MODEL: return "NO_MODEL";
    case KN_KRP_ERR_NO_ACTUATOR: return "NO_ACTUATOR";
    case KN_KRP_ERR_NOT_ALLOWED: return "NOT_ALLOWED";
    case KN_KRP_ERR_NO_TRIAL: return "NO_TRIAL";
    default: return NULL;
    }
}

bool kn_krp_is_to_robot(uint8_t type)
{
    return type >= KN_KRP_HELLO && type <= KN_KRP_TRIAL_REQ;
}

bool kn_krp_trial_equal(const struct kn_krp_trial *a, const struct kn_krp_trial *b)
{
    if (strncmp(a->name, b->name, sizeof a->name) != 0 || a->course != b->course ||
        a->flags != b->flags || a->end != b->end || a->reps != b->reps || a->rep != b->rep ||
        a->rep_elapsed_ms != b->rep_elapsed_ms || a->rep_faults != b->rep_faults ||
        a->completed != b->completed || a->successes != b->successes || a->faults != b->faults ||
        a->limit_ms != b->limit_ms || a->left_ms != b->left_ms)
        return false;
    for (int k = 0; k < KN_KRP_TRIAL_FAULT_KINDS; k++)
        if (a->by_kind[k] != b->by_kind[k])
            return false;
    return true;
}

uint8_t kn_krp_error_code(enum kn_krp_result r)
{
    switch (r) {
    case KN_KRP_EVERSION: return KN_KRP_ERR_BAD_VERSION;
    case KN_KRP_ESHORT:
    case KN_KRP_ETOOBIG:
    case KN_KRP_ELENGTH:
    case KN_KRP_EPAYLOAD: return KN_KRP_ERR_BAD_LENGTH;
    case KN_KRP_ETYPE: return KN_KRP_ERR_UNKNOWN_TYPE;
    case KN_KRP_OK:
    case KN_KRP_EMAGIC:
    default: return 0;
    }
}

const char *kn_krp_result_str(enum kn_krp_result r)
{
    switch (r) {
    case KN_KRP_OK: return "ok";
    case KN_KRP_EMAGIC: return "bad magic";
    case KN_KRP_ESHORT: return "header incomplete";
    case KN_KRP_ETOOBIG: return "datagram over 512 bytes";
    case KN_KRP_EVERSION: return "bad version";
    case KN_KRP_ELENGTH: return "length field does not match datagram";
    case KN_KRP_ETYPE: return "unknown message type";
    case KN_KRP_EPAYLOAD: return "payload length wrong for type";
    default: return "unknown result";
    }
}

void kn_krp_init(struct kn_krp_msg *m, uint8_t type, uint32_t seq, uint16_t flags)
{
    memset(m, 0, sizeof *m);
    m->h.version = KN_KRP_VERSION;
    m->h.type = type;
    m->h.seq = seq;
    m->h.flags = flags;
    int len = kn_krp_payload_len(type);
    m->h.length = len < 0 ? 0 : (uint16_t)len;
}

/* TRIAL's fixed layout (docs/protocol.md, "Extension: trials"). */
static void decode_trial(const uint8_t *p, struct kn_krp_trial *t)
{
    size_t n = strnlen((const char *)p, KN_KRP_TRIAL_NAME_LEN);
    memset(t->name, 0, sizeof t->name);
    memcpy(t->name, p, n);
    t->course = p[32];
    t->flags = p[33];
    t->end = p[34];
    t->reps = get16(p + 36);
    t->rep = get16(p + 38);
    t->rep_elapsed_ms = get32(p + 40);
    t->rep_faults = get16(p + 44);
    t->completed = get16(p + 46);
    t->successes = get16(p + 48);
    t->faults = get16(p + 50);
    for (int i = 0; i < KN_KRP_TRIAL_FAULT_KINDS; i++)
        t->by_kind[i] = get16(p + 52 + 2 * i);
    t->limit_ms = get32(p + 64);
    t->left_ms = get32(p + 68);
}

static void encode_trial(const struct kn_krp_trial *t, uint8_t *p)
{
    memcpy(p, t->name, strnlen(t->name, KN_KRP_TRIAL_NAME_LEN));
    p[32] = t->course;
    p[33] = t->flags;
    p[34] = t->end;
    put16(p + 36, t->reps);
    put16(p + 38, t->rep);
    put32(p + 40, t->rep_elapsed_ms);
    put16(p + 44, t->rep_faults);
    put16(p + 46, t->completed);
    put16(p + 48, t->successes);
    put16(p + 50, t->faults);
    for (int i = 0; i < KN_KRP_TRIAL_FAULT_KINDS; i++)
        put16(p + 52 + 2 * i, t->by_kind[i]);
    put32(p + 64, t->limit_ms);
    put32(p + 68, t->left_ms);
}

static void decode_payload(const uint8_t *p, struct kn_krp_msg *m)
{
    switch (m->h.type) {
    case KN_KRP_HELLO: get_name(p, m->u.hello.name); break;
    case KN_KRP_CRAWLER:
        m->u.crawler.left_mm_s = geti32(p);
        m->u.crawler.right_mm_s = geti32(p + 4);
        break;
    case KN_KRP_FLIPPER:
        m->u.flipper.mask = p[0];
        geti32s(p + 4, m->u.flipper.target_cdeg, KN_KRP_FLIPPERS);
        break;
    case KN_KRP_SUBSCRIBE: m->u.subscribe.period_ms = get16(p); break;
    case KN_KRP_ESTOP: m->u.estop.engage = p[0]; break;
    case KN_KRP_WORLD_REQ: m->u.world_req.offset = get32(p); break;
    case KN_KRP_STEP: m->u.step.advance_us = get32(p); break;
    case KN_KRP_ACK:
        m->u.ack.acked_seq = get32(p);
        m->u.ack.acked_type = p[4];
        break;
    case KN_KRP_HELLO_ACK: {
        struct kn_krp_hello_ack *a = &m->u.hello_ack;
        a->protocol = get16(p);
        a->simulated = p[2];
        a->backend = p[3];
        get_name(p + 4, a->robot_name);
        a->capabilities = get32(p + 20);
        a->counts_per_m = geti32(p + 24);
        a->max_speed_mm_s = geti32(p + 28);
        a->flipper_min_cdeg = geti32(p + 32);
        a->flipper_max_cdeg = geti32(p + 36);
        a->session = m->h.length == KN_KRP_LEN_HELLO_ACK_SESSION;
        if (a->session) {
            a->role = p[40];
            a->token = get32(p + 44);
        }
        break;
    }
    case KN_KRP_STATUS: {
        struct kn_krp_status *s = &m->u.status;
        s->req_seq = get32(p);
        s->time_us = get64(p + 4);
        geti32s(p + 12, s->crawler_count, 2);
        geti32s(p + 20, s->crawler_speed_mm_s, 2);
        geti32s(p + 28, s->flipper_cdeg, 4);
        geti32s(p + 44, s->flipper_torque_mnm, 4);
        geti32s(p + 60, s->rpy_cdeg, 3);
        geti32s(p + 72, s->rate_mdeg_s, 3);
        geti32s(p + 84, s->accel_mm_s2, 3);
        geti32s(p + 96, s->pos_mm, 3);
        s->battery_mv = get16(p + 108);
        s->flags = get16(p + 110);
        break;
    }
    case KN_KRP_ERROR:
        m->u.error.offending_seq = get32(p);
        m->u.error.offending_type = p[4];
        m->u.error.code = p[5];
        break;
    case KN_KRP_WORLD:
        m->u.world.total_len = get32(p);
        m->u.world.offset = get32(p + 4);
        m->u.world.n = (uint16_t)(m->h.length - KN_KRP_LEN_WORLD);
        memcpy(m->u.world.data, p + KN_KRP_LEN_WORLD, m->u.world.n);
        break;
    case KN_KRP_ESTOP_INFO: {
        struct kn_krp_estop_info *x = &m->u.estop_info;
        x->engaged = p[0];
        x->n = p[1]; /* kn_krp_decode checked it against the length */
        for (unsigned i = 0; i < x->n; i++) {
            const uint8_t *e = p + KN_KRP_LEN_ESTOP_INFO + KN_KRP_ESTOP_ENTRY_LEN * i;
            x->e[i].kind = e[0];
            x->e[i].present = e[1];
            x->e[i].held_ms = get32(e + 4);
            get_name(e + 8, x->e[i].name);
        }
        break;
    }
    case KN_KRP_TRIAL_REQ: m->u.trial_req.op = p[0]; break;
    case KN_KRP_TRIAL: decode_trial(p, &m->u.trial); break;
    default: /* STOP, STATUS_REQ, BYE, ESTOP_INFO_REQ: no payload */ break;
    }
}

/* TOKEN means something only on what a controller sends the robot. */
static bool has_token(uint8_t type, uint16_t flags)
{
    return (flags & KN_KRP_F_TOKEN) && kn_krp_is_to_robot(type);
}

enum kn_krp_result kn_krp_decode(const uint8_t *buf, size_t len, struct kn_krp_msg *m)
{
    memset(m, 0, sizeof *m);
    if (len < 2 || buf[0] != KN_KRP_MAGIC0 || buf[1] != KN_KRP_MAGIC1)
        return KN_KRP_EMAGIC;
    if (len < KN_KRP_HDR_LEN)
        return KN_KRP_ESHORT;
    if (len > KN_KRP_MAX_DGRAM)
        return KN_KRP_ETOOBIG;

    m->h.version = buf[2];
    m->h.type = buf[3];
    m->h.seq = get32(buf + 4);
    m->h.length = get16(buf + 8);
    m->h.flags = get16(buf + 10);

    if (m->h.version != KN_KRP_VERSION)
        return KN_KRP_EVERSION;
    if ((size_t)m->h.length != len - KN_KRP_HDR_LEN)
        return KN_KRP_ELENGTH;
    int want = kn_krp_payload_len(m->h.type);
    if (want < 0)
        return KN_KRP_ETYPE;
    if (has_token(m->h.type, m->h.flags)) {
        /* the token is the last 4 bytes; what precedes it is the payload */
        if (m->h.length != want + KN_KRP_LEN_TOKEN)
            return KN_KRP_EPAYLOAD;
        m->h.token = get32(buf + len - KN_KRP_LEN_TOKEN);
    } else if (m->h.type == KN_KRP_HELLO_ACK) {
        /* 40 bytes, or 48 when it answers a session HELLO */
        if (m->h.length != want && m->h.length != KN_KRP_LEN_HELLO_ACK_SESSION)
            return KN_KRP_EPAYLOAD;
    } else if (m->h.type == KN_KRP_ESTOP_INFO) {
        /* 4 bytes and n entries of 24, n (its second byte) at most 20 */
        int body = m->h.length - want;
        if (body < 0 || body % KN_KRP_ESTOP_ENTRY_LEN != 0 ||
            body / KN_KRP_ESTOP_ENTRY_LEN > KN_KRP_ESTOP_ENTRIES ||
            buf[KN_KRP_HDR_LEN + 1] != body / KN_KRP_ESTOP_ENTRY_LEN)
            return KN_KRP_EPAYLOAD;
    } else if (m->h.length < want || m->h.length > kn_krp_payload_max(m->h.type)) {
        /* WORLD has a variable part: fixed part + 0..480 bytes */
        return KN_KRP_EPAYLOAD;
    }
    decode_payload(buf + KN_KRP_HDR_LEN, m);
    return KN_KRP_OK;
}

static void encode_payload(const struct kn_krp_msg *m, uint8_t *p)
{
    switch (m->h.type) {
    case KN_KRP_HELLO: put_name(p, m->u.hello.name); break;
    case KN_KRP_CRAWLER:
        put32(p, (uint32_t)m->u.crawler.left_mm_s);
        put32(p + 4, (uint32_t)m->u.crawler.right_mm_s);
        break;
    case KN_KRP_FLIPPER:
        p[0] = m->u.flipper.mask;
        puti32s(p + 4, m->u.flipper.target_cdeg, KN_KRP_FLIPPERS);
        break;
    case KN_KRP_SUBSCRIBE: put16(p, m->u.subscribe.period_ms); break;
    case KN_KRP_ESTOP: p[0] = m->u.estop.engage; break;
    case KN_KRP_WORLD_REQ: put32(p, m->u.world_req.offset); break;
    case KN_KRP_STEP: put32(p, m->u.step.advance_us); break;
    case KN_KRP_ACK:
        put32(p, m->u.ack.acked_seq);
        p[4] = m->u.ack.acked_type;
        break;
    case KN_KRP_HELLO_ACK: {
        const struct kn_krp_hello_ack *a = &m->u.hello_ack;
        put16(p, a->protocol);
        p[2] = a->simulated;
        p[3] = a->backend;
        put_name(p + 4, a->robot_name);
        put32(p + 20, a->capabilities);
        put32(p + 24, (uint32_t)a->counts_per_m);
        put32(p + 28, (uint32_t)a->max_speed_mm_s);
        put32(p + 32, (uint32_t)a->flipper_min_cdeg);
        put32(p + 36, (uint32_t)a->flipper_max_cdeg);
        if (a->session) {
            p[40] = a->role;
            put32(p + 44, a->token);
        }
        break;
    }
    case KN_KRP_STATUS: {
        const struct kn_krp_status *s = &m->u.status;
        put32(p, s->req_seq);
        put64(p + 4, s->time_us);
        puti32s(p + 12, s->crawler_count, 2);
        puti32s(p + 20, s->crawler_speed_mm_s, 2);
        puti32s(p + 28, s->flipper_cdeg, 4);
        puti32s(p + 44, s->flipper_torque_mnm, 4);
        puti32s(p + 60, s->rpy_cdeg, 3);
        puti32s(p + 72, s->rate_mdeg_s, 3);
        puti32s(p + 84, s->accel_mm_s2, 3);
        puti32s(p + 96, s->pos_mm, 3);
        put16(p + 108, s->battery_mv);
        put16(p + 110, s->flags);
        break;
    }
    case KN_KRP_ERROR:
        put32(p, m->u.error.offending_seq);
        p[4] = m->u.error.offending_type;
        p[5] = m->u.error.code;
        break;
    case KN_KRP_WORLD:
        put32(p, m->u.world.total_len);
        put32(p + 4, m->u.world.offset);
        memcpy(p + KN_KRP_LEN_WORLD, m->u.world.data, m->u.world.n);
        break;
    case KN_KRP_ESTOP_INFO: {
        const struct kn_krp_estop_info *x = &m->u.estop_info;
        p[0] = x->engaged;
        p[1] = x->n;
        for (unsigned i = 0; i < x->n; i++) {
            uint8_t *e = p + KN_KRP_LEN_ESTOP_INFO + KN_KRP_ESTOP_ENTRY_LEN * i;
            e[0] = x->e[i].kind;
            e[1] = x->e[i].present;
            put32(e + 4, x->e[i].held_ms);
            put_name(e + 8, x->e[i].name);
        }
        break;
    }
    case KN_KRP_TRIAL_REQ: p[0] = m->u.trial_req.op; break;
    case KN_KRP_TRIAL: encode_trial(&m->u.trial, p); break;
    default: break;
    }
}

size_t kn_krp_encode(const struct kn_krp_msg *m, uint8_t *buf, size_t cap)
{
    int plen = kn_krp_payload_len(m->h.type);
    if (plen < 0)
        return 0;
    if (m->h.type == KN_KRP_WORLD) {
        if (m->u.world.n > KN_KRP_WORLD_CHUNK)
            return 0;
        plen += m->u.world.n;
    }
    if (m->h.type == KN_KRP_ESTOP_INFO) {
        if (m->u.estop_info.n > KN_KRP_ESTOP_ENTRIES)
            return 0;
        plen += KN_KRP_ESTOP_ENTRY_LEN * m->u.estop_info.n;
    }
    if (m->h.type == KN_KRP_HELLO_ACK && m->u.hello_ack.session)
        plen = KN_KRP_LEN_HELLO_ACK_SESSION;
    bool token = has_token(m->h.type, m->h.flags);
    int body = plen;
    if (token)
        plen += KN_KRP_LEN_TOKEN;
    if (cap < (size_t)(KN_KRP_HDR_LEN + plen))
        return 0;
    buf[0] = KN_KRP_MAGIC0;
    buf[1] = KN_KRP_MAGIC1;
    buf[2] = KN_KRP_VERSION;
    buf[3] = m->h.type;
    put32(buf + 4, m->h.seq);
    put16(buf + 8, (uint16_t)plen);
    put16(buf + 10, m->h.flags);
    /* pad bytes are part of the contract: always zero */
    memset(buf + KN_KRP_HDR_LEN, 0, (size_t)plen);
    encode_payload(m, buf + KN_KRP_HDR_LEN);
    if (token)
        put32(buf + KN_KRP_HDR_LEN + body, m->h.token);
    return (size_t)(KN_KRP_HDR_LEN + plen);
}
