/* KRP/1 robot rules: see rules.h for the contract and docs/protocol.md
 * ("Choices kenaf-simd makes") for where the protocol leaves a choice.
 * This file holds the robot itself: its output, the commands toward the
 * simulator, set-points, subscriptions, WORLD and STEP, the datagram
 * dispatch and the timers. Who talks to it (peers, sessions, the driver)
 * is in rules_session.c, the e-stop's engagements in rules_estop.c. */
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "rules_priv.h"

static uint64_t ms_to_ns(double ms)
{
    return ms <= 0 ? 0 : (uint64_t)(ms * 1e6);
}

struct kn_rules *kn_rules_new(const struct kn_rules_params *p, const struct kn_rules_io *io,
                              uint64_t now_ns)
{
    struct kn_rules *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = *p;
    r->p.name[KN_KRP_NAME_LEN] = '\0';
    r->io = *io;
    if (kn_peers_init(&r->peers, p->max_peers ? p->max_peers : KN_RULES_MAX_PEERS) < 0) {
        free(r);
        return NULL;
    }
    kn_tbucket_init(&r->overflow_errors, KN_RULES_ERR_RATE, KN_RULES_ERR_BURST, now_ns);
    r->wd_ns = ms_to_ns(p->watchdog_ms);
    r->grace_ns = r->wd_ns;
    if (r->p.n_consoles > KN_RULES_MAX_CONSOLES)
        r->p.n_consoles = KN_RULES_MAX_CONSOLES;
    r->rng = now_ns ^ (uint64_t)(uintptr_t)r;
    r->eng = r->eng_inline;
    r->eng_cap = KN_RULES_ENG_INLINE;
    return r;
}

void kn_rules_free(struct kn_rules *r)
{
    if (!r)
        return;
    kn_peers_free(&r->peers);
    if (r->eng != r->eng_inline)
        free(r->eng);
    free(r->world);
    free(r);
}

/* ---- output ---------------------------------------------------------- */

void kn_rules_send_msg(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                       struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = ++r->seq_out;
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    if (n == 0)
        return;
    r->st.out_total++;
    r->st.out_type[m->h.type]++;
    if (p)
        p->dgrams_out++;
    r->io.send(r->io.ctx, to, buf, n);
}

/* Every ERROR goes through the sender's token bucket. */
void kn_rules_send_error(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                         uint32_t seq, uint8_t type, uint8_t code, uint64_t now)
{
    struct kn_tbucket *b = p ? &p->errors : &r->overflow_errors;
    if (!kn_tbucket_take(b, KN_RULES_ERR_RATE, KN_RULES_ERR_BURST, now)) {
        r->st.drop_rate_limited++;
        if (p)
            p->errors_suppressed++;
        return;
    }
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ERROR, 0, 0);
    m.u.error.offending_seq = seq;
    m.u.error.offending_type = type;
    m.u.error.code = code;
    r->st.errors_sent[code]++;
    if (p)
        p->errors_sent++;
    kn_rules_send_msg(r, p, to, &m);
}

void kn_rules_send_ack(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                       const struct kn_krp_header *h)
{
    if (!(h->flags & KN_KRP_F_ACK_REQ))
        return;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ACK, 0, 0);
    m.u.ack.acked_seq = h->seq;
    m.u.ack.acked_type = h->type;
    kn_rules_send_msg(r, p, to, &m);
}

void kn_rules_refuse(struct kn_rules *r, const struct kn_addr *from, const uint8_t *buf, size_t len,
                     uint8_t code, uint64_t now_ns)
{
    struct kn_krp_msg m;
    memset(&m, 0, sizeof m);
    (void)kn_krp_decode(buf, len, &m);
    kn_rules_send_error(r, kn_peers_find(&r->peers, from), from, m.h.seq, m.h.type, code, now_ns);
}

uint16_t kn_rules_flags(const struct kn_rules *r, uint64_t now_ns)
{
    uint16_t f = KN_KRP_ST_SIMULATED;
    if (r->n_eng)
        f |= KN_KRP_ST_ESTOP;
    if (r->backend_up)
        f |= KN_KRP_ST_BACKEND_UP;
    if (r->wd_flag)
        f |= KN_KRP_ST_WATCHDOG;
    if (r->clamped)
        f |= KN_KRP_ST_CLAMPED;
    /* without its model the simulator's state says nothing about the robot;
     * without a drive it shows a robot nobody can move */
    if (!r->have_state || r->no_model || r->no_drive ||
        kn_rules_elapsed(now_ns, r->state_ns) > ms_to_ns(r->p.stale_ms))
        f |= KN_KRP_ST_STALE;
    return f;
}

static void send_status(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                        uint32_t req_seq, uint64_t now)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STATUS, 0, 0);
    struct kn_state s;
    if (r->have_state)
        s = r->state;
    else
        memset(&s, 0, sizeof s);
    if (!(s.have & KN_HAVE_BATTERY))
        s.battery_v = r->p.battery_v;
    kn_conv_state_to_krp(&s, r->p.counts_per_m, &m.u.status);
    m.u.status.req_seq = req_seq;
    m.u.status.flags = kn_rules_flags(r, now);
    kn_rules_send_msg(r, p, to, &m);
}
/* ---- commands toward the simulator ----------------------------------- */

void kn_rules_command_as(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx, bool emergency)
{
    struct kn_command c;
    memset(&c, 0, sizeof c);
    c.emergency = emergency; /* watchdog, ESTOP: the simulator brakes (kn_command) */
    c.belt_speed_m_s[0] = r->belts[0];
    c.belt_speed_m_s[1] = r->belts[1];
    c.flipper_mask = flipper_mask;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        c.flipper_rad[k] = r->flipper[k];
    r->st.commands++;
    r->io.command(r->io.ctx, &c, t_rx);
}

void kn_rules_command(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx)
{
    kn_rules_command_as(r, flipper_mask, t_rx, false);
}

/* The flippers a simulator that came back is still restoring (see
 * kn_rules_backend); the restoring window ends KN_RULES_RESTORE_NS after
 * its first state. */
static uint8_t restoring(struct kn_rules *r, uint64_t now)
{
    if (r->restoring && r->restore_started &&
        kn_rules_elapsed(now, r->restore_ns) >= KN_RULES_RESTORE_NS)
        r->restoring = 0;
    return r->restoring;
}

/* "Flippers hold their present angle": targets become the last measured
 * angles. Without a measurement the simulator keeps its own targets. For a
 * STOP (keep_restoring), a flipper that a returned simulator is still
 * bringing back to its target keeps the target: the angle the re-spawn
 * gave it is nobody's choice, and the STOP may well be one a controller
 * sent (or repeated) when the simulator went down, with the flippers at
 * their targets. */
uint8_t kn_rules_hold_flippers(struct kn_rules *r, uint64_t now, bool keep_restoring)
{
    uint8_t keep = keep_restoring ? restoring(r, now) : 0;
    uint8_t mask = keep;
    if (!r->have_state || !(r->state.have & KN_HAVE_FLIPPER))
        return mask;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(keep & (1u << k)) && isfinite(r->state.flipper_rad[k])) {
            r->flipper[k] = r->state.flipper_rad[k];
            mask |= (uint8_t)(1u << k);
        }
    }
    r->flipper_valid |= mask;
    return mask;
}

/* ---- subscriptions --------------------------------------------------- */

void kn_rules_drop_sub(struct kn_rules *r, struct kn_peer *p)
{
    for (unsigned i = 0; i < r->nsubs; i++) {
        if (r->subs[i] == p) {
            r->subs[i] = r->subs[--r->nsubs];
            r->subs[r->nsubs] = NULL;
            break;
        }
    }
    p->sub_period_ms = 0;
    p->sub_next_ns = 0;
}

static void expire_subs(struct kn_rules *r, uint64_t now)
{
    for (unsigned i = 0; i < r->nsubs;) {
        struct kn_peer *p = r->subs[i];
        if (kn_rules_elapsed(now, p->last_seen_ns) >= KN_RULES_SILENCE_NS) {
            kn_rules_drop_sub(r, p); /* moves the last one into slot i */
            r->st.sub_lapsed++;
        } else {
            i++;
        }
    }
}

/* A set-point older than the last one applied from this sender. */
static bool stale_seq(struct kn_rules *r, const struct kn_peer *p, uint32_t seq)
{
    if (p && p->has_mark && kn_krp_seq_newer(p->mark, seq)) {
        r->st.drop_stale_seq++;
        return true;
    }
    return false;
}

static void move_mark(struct kn_peer *p, uint32_t seq)
{
    if (p && (!p->has_mark || !kn_krp_seq_newer(p->mark, seq))) {
        p->mark = seq;
        p->has_mark = true;
    }
}

static void backend_check(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                          const struct kn_krp_header *h, uint64_t now)
{
    if (!r->backend_up) {
        r->st.while_backend_down++;
        kn_rules_send_error(r, p, from, h->seq, h->type, KN_KRP_ERR_BACKEND_DOWN, now);
    } else if (r->no_model) {
        r->st.while_no_model++;
        kn_rules_send_error(r, p, from, h->seq, h->type, KN_KRP_ERR_NO_MODEL, now);
    }
}

static int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi, bool *clamped)
{
    if (v < lo) {
        *clamped = true;
        return lo;
    }
    if (v > hi) {
        *clamped = true;
        return hi;
    }
    return v;
}

/* The gate every CRAWLER and FLIPPER passes: older than the sender's mark
 * is ignored (counted inside stale_seq), anything during ESTOP refused. */
static bool setpoint_admitted(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                              const struct kn_krp_msg *m, uint64_t now)
{
    if (!kn_rules_may_drive(r, p, from, m, now))
        return false;
    if (stale_seq(r, p, m->h.seq))
        return false;
    if (r->n_eng) {
        r->st.estop_refused++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_ESTOP, now);
        return false;
    }
    return true;
}

static void on_crawler(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now)
{
    if (!setpoint_admitted(r, p, from, m, now))
        return;
    /* Nothing in the world would move the belts: refused, not stored. */
    if (r->backend_up && r->no_drive && !r->no_model) {
        r->st.no_actuator++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_ACTUATOR, now);
        return;
    }
    bool clamped = false;
    struct kn_krp_crawler c = m->u.crawler;
    c.left_mm_s = clamp_i32(c.left_mm_s, -r->p.max_speed_mm_s, r->p.max_speed_mm_s, &clamped);
    c.right_mm_s = clamp_i32(c.right_mm_s, -r->p.max_speed_mm_s, r->p.max_speed_mm_s, &clamped);
    move_mark(p, m->h.seq);
    r->clamped = clamped;
    kn_conv_krp_crawler(&c, r->belts);
    /* A zero set-point is a robot told to stand still: like STOP it leaves
     * nothing for the watchdog to stop, so it disarms it instead of arming a
     * trip (and a WATCHDOG flag) 500 ms after the controller falls quiet.
     * The library repeats a zero only briefly; the next non-zero CRAWLER
     * arms the watchdog again. */
    r->wd_armed = (c.left_mm_s != 0 || c.right_mm_s != 0) && !r->p.lockstep;
    r->wd_fed_ns = now;
    r->wd_flag = false;
    kn_rules_command(r, 0, now);
    if (clamped) {
        r->st.clamped++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    backend_check(r, p, from, &m->h, now);
    kn_rules_send_ack(r, p, from, &m->h);
}

static void on_flipper(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now)
{
    if (!setpoint_admitted(r, p, from, m, now))
        return;
    /* Nothing in the world would move the flippers: refused, not stored
     * (a missing model is answered below, like a simulator that is down). */
    if (r->backend_up && r->no_flippers && !r->no_model) {
        r->st.no_actuator++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_ACTUATOR, now);
        return;
    }
    bool clamped = false;
    struct kn_krp_flipper f = m->u.flipper;
    f.mask &= 0x0F; /* bits 4..7 name no flipper */
    for (int k = 0; k < KN_KRP_FLIPPERS; k++) {
        if (f.mask & (1u << k))
            f.target_cdeg[k] =
                clamp_i32(f.target_cdeg[k], r->p.flipper_min_cdeg, r->p.flipper_max_cdeg, &clamped);
    }
    move_mark(p, m->h.seq);
    r->clamped = clamped;
    struct kn_command c;
    memset(&c, 0, sizeof c);
    kn_conv_krp_flipper(&f, &c);
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (f.mask & (1u << k))
            r->flipper[k] = c.flipper_rad[k];
    r->flipper_valid |= f.mask;
    r->restoring &= (uint8_t)~f.mask; /* a new target replaces the one being restored */
    kn_rules_command(r, f.mask, now);
    if (clamped) {
        r->st.clamped++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    backend_check(r, p, from, &m->h, now);
    kn_rules_send_ack(r, p, from, &m->h);
}

static void on_stop(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                    const struct kn_krp_msg *m, uint64_t now)
{
    if (!kn_rules_may_drive(r, p, from, m, now))
        return;
    move_mark(p, m->h.seq);
    kn_rules_stop_belts(r);
    r->wd_armed = false; /* nothing moves: nothing to guard */
    r->wd_flag = false;
    r->clamped = false;
    kn_rules_command(r, kn_rules_hold_flippers(r, now, true), now);
    backend_check(r, p, from, &m->h, now);
    kn_rules_send_ack(r, p, from, &m->h);
}

/* Eight slots: one kept for the driver, and of the other seven at most
 * four for peers without a session token (anyone can forge those). */
static bool sub_slot_free(const struct kn_rules *r, const struct kn_peer *p)
{
    if (p == r->driver)
        return true;
    unsigned others = 0, plain = 0;
    for (unsigned i = 0; i < r->nsubs; i++) {
        if (r->subs[i] == r->driver)
            continue;
        others++;
        plain += !r->subs[i]->session;
    }
    if (others >= KN_RULES_MAX_SUBS - 1)
        return false;
    return p->session || plain < KN_RULES_MAX_PLAIN_SUBS;
}

static void on_subscribe(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                         const struct kn_krp_msg *m, uint64_t now)
{
    uint16_t period = m->u.subscribe.period_ms;
    if (period == 0) {
        if (p && p->sub_period_ms) {
            kn_rules_drop_sub(r, p);
            r->st.sub_cancelled++;
        }
        kn_rules_send_ack(r, p, from, &m->h);
        return;
    }
    if (!p || (!p->sub_period_ms && !sub_slot_free(r, p))) {
        r->st.sub_busy++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
        return;
    }
    bool clamped = false;
    if (period < KN_RULES_SUB_MIN_MS) {
        period = KN_RULES_SUB_MIN_MS;
        clamped = true;
    } else if (period > KN_RULES_SUB_MAX_MS) {
        period = KN_RULES_SUB_MAX_MS;
        clamped = true;
    }
    if (!p->sub_period_ms)
        r->subs[r->nsubs++] = p;
    p->sub_period_ms = period;
    p->sub_next_ns = now + (uint64_t)period * 1000000ull;
    if (clamped) {
        r->st.sub_clamped++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    kn_rules_send_ack(r, p, from, &m->h);
}

/* An observer's request: needs no HELLO, moves no mark, feeds no
 * watchdog. The answer is the chunk from the asked offset on. */
static void on_world_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                         const struct kn_krp_msg *m, uint64_t now)
{
    uint32_t off = m->u.world_req.offset;
    if (r->world_len > 0 && off >= r->world_len) {
        r->st.world_bad_offset++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    struct kn_krp_msg w;
    kn_krp_init(&w, KN_KRP_WORLD, 0, 0);
    w.u.world.total_len = r->world_len;
    w.u.world.offset = off;
    uint32_t left = r->world_len > off ? r->world_len - off : 0;
    w.u.world.n = (uint16_t)(left < KN_KRP_WORLD_CHUNK ? left : KN_KRP_WORLD_CHUNK);
    if (w.u.world.n)
        memcpy(w.u.world.data, r->world + off, w.u.world.n);
    kn_rules_send_msg(r, p, from, &w);
}

/* Lockstep: the driver lets robot time pass. One STEP at a time; the
 * simulator runs, and kn_rules_stepped answers with the STATUS after it.
 * A robot without lockstep answers it like any type it does not know, as
 * a real robot does. */
static void on_step(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                    const struct kn_krp_msg *m, uint64_t now)
{
    if (!r->p.lockstep || !r->io.step) {
        r->st.step_refused++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    if (!kn_rules_may_drive(r, p, from, m, now))
        return;
    uint32_t us = m->u.step.advance_us;
    if (us < KN_KRP_STEP_MIN_US || us > KN_KRP_STEP_MAX_US) {
        r->st.step_range++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    if (r->step_pending) {
        r->st.step_busy++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
        return;
    }
    if (!r->backend_up || r->io.step(r->io.ctx, us) != 0) {
        r->st.while_backend_down++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BACKEND_DOWN, now);
        return;
    }
    r->st.steps++;
    r->step_pending = true;
    r->step_seq = m->h.seq;
    r->step_from = *from;
}

void kn_rules_stepped(struct kn_rules *r, bool ok, uint64_t now)
{
    if (!r->step_pending)
        return;
    r->step_pending = false;
    struct kn_peer *p = kn_peers_find(&r->peers, &r->step_from);
    if (ok) {
        r->st.steps_done++;
        send_status(r, p, &r->step_from, r->step_seq, now);
    } else {
        r->st.steps_failed++;
        kn_rules_send_error(r, p, &r->step_from, r->step_seq, KN_KRP_STEP, KN_KRP_ERR_BACKEND_DOWN,
                            now);
    }
}

void kn_rules_datagram(struct kn_rules *r, const struct kn_addr *from, const uint8_t *buf,
                       size_t len, uint64_t now)
{
    struct kn_krp_msg m;
    enum kn_krp_result res = kn_krp_decode(buf, len, &m);
    r->st.in_total++;
    if ((unsigned)res < sizeof r->st.envelope / sizeof r->st.envelope[0])
        r->st.envelope[res]++;
    if (res == KN_KRP_EMAGIC) {
        r->st.drop_bad_magic++;
        return;
    }
    kn_rules_expire_driver(r, now);
    expire_subs(r, now);
    struct kn_peer *p = kn_rules_peer_get(r, from, now);

    if (res != KN_KRP_OK) {
        /* m.h is zero when the header is incomplete or, over 512 bytes,
         * not trusted (docs/protocol.md): ERROR then names seq 0, type 0. */
        kn_rules_send_error(r, p, from, m.h.seq, m.h.type, kn_krp_error_code(res), now);
        return;
    }
    r->st.in_type[m.h.type]++;
    if (!kn_krp_is_to_robot(m.h.type)) {
        r->st.not_to_robot++;
        kn_rules_send_error(r, p, from, m.h.seq, m.h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    if (!kn_rules_token_ok(r, p, from, &m, now))
        return;
    switch (m.h.type) {
    case KN_KRP_HELLO: kn_rules_on_hello(r, p, from, &m, now); break;
    case KN_KRP_BYE: kn_rules_on_bye(r, p, from, &m, now); break;
    case KN_KRP_CRAWLER: on_crawler(r, p, from, &m, now); break;
    case KN_KRP_FLIPPER: on_flipper(r, p, from, &m, now); break;
    case KN_KRP_STOP: on_stop(r, p, from, &m, now); break;
    case KN_KRP_STATUS_REQ: send_status(r, p, from, m.h.seq, now); break;
    case KN_KRP_SUBSCRIBE: on_subscribe(r, p, from, &m, now); break;
    case KN_KRP_ESTOP: kn_rules_on_estop(r, p, from, &m, now); break;
    case KN_KRP_WORLD_REQ: on_world_req(r, p, from, &m, now); break;
    case KN_KRP_STEP: on_step(r, p, from, &m, now); break;
    case KN_KRP_ESTOP_INFO_REQ: kn_rules_on_estop_info_req(r, p, from, now); break;
    case KN_KRP_TRIAL_REQ: kn_rules_on_trial_req(r, p, from, &m, now); break;
    default: break;
    }
}

/* ---- time ------------------------------------------------------------ */

void kn_rules_tick(struct kn_rules *r, uint64_t now)
{
    if (r->wd_armed && kn_rules_elapsed(now, r->wd_fed_ns) >= r->wd_ns) {
        r->wd_armed = false;
        r->wd_flag = true;
        r->st.watchdog_trips++;
        kn_rules_stop_belts(r);
        kn_rules_command_as(r, 0, now, true);
        if (r->driver) { /* a driver that went quiet while moving gives the robot up */
            r->driver = NULL;
            r->st.driver_watchdog++;
        }
    }
    kn_rules_expire_driver(r, now);
    expire_subs(r, now);
    for (unsigned i = 0; i < r->nsubs; i++) {
        struct kn_peer *p = r->subs[i];
        if (now >= p->sub_next_ns) {
            uint64_t period = (uint64_t)p->sub_period_ms * 1000000ull;
            send_status(r, p, &p->addr, 0, now);
            r->st.sub_pushes++;
            p->sub_next_ns += period;
            if (p->sub_next_ns <= now) /* late (loaded machine): no burst */
                p->sub_next_ns = now + period;
        }
    }
}

uint64_t kn_rules_next_deadline(const struct kn_rules *r)
{
    uint64_t d = UINT64_MAX;
    if (r->wd_armed)
        d = r->wd_fed_ns + r->wd_ns;
    if (r->driver && r->driver->last_seen_ns + KN_RULES_SILENCE_NS < d)
        d = r->driver->last_seen_ns + KN_RULES_SILENCE_NS;
    for (unsigned i = 0; i < r->nsubs; i++) {
        const struct kn_peer *p = r->subs[i];
        if (p->sub_next_ns < d)
            d = p->sub_next_ns;
        if (p->last_seen_ns + KN_RULES_SILENCE_NS < d)
            d = p->last_seen_ns + KN_RULES_SILENCE_NS;
    }
    return d;
}

/* A simulator that comes (back) up re-spawns the robot, and the link
 * sends it every flipper target again: until it had time to get there,
 * those flippers are "restoring" (kn_rules_hold_flippers). */
void kn_rules_backend(struct kn_rules *r, bool up)
{
    if (up && !r->backend_up) {
        r->restoring = r->flipper_valid;
        r->restore_started = false;
    } else if (!up) {
        r->restoring = 0;
    }
    r->backend_up = up;
}

void kn_rules_lacks(struct kn_rules *r, bool no_model, bool no_flippers, bool no_drive)
{
    r->no_model = no_model;
    r->no_flippers = no_flippers;
    r->no_drive = no_drive;
}

void kn_rules_state(struct kn_rules *r, const struct kn_state *s, uint64_t now_ns)
{
    r->state = *s;
    r->have_state = true;
    r->state_ns = now_ns;
    if (r->restoring && !r->restore_started) {
        r->restore_started = true;
        r->restore_ns = now_ns;
    }
}

void kn_rules_halt(struct kn_rules *r, uint64_t now_ns)
{
    kn_rules_stop_belts(r);
    r->wd_armed = false;
    kn_rules_command(r, kn_rules_hold_flippers(r, now_ns, false), now_ns);
}

uint64_t kn_rules_state_age(const struct kn_rules *r, uint64_t now_ns)
{
    return r->have_state ? kn_rules_elapsed(now_ns, r->state_ns) : UINT64_MAX;
}

unsigned kn_rules_subscribers(const struct kn_rules *r)
{
    return r->nsubs;
}

const struct kn_rules_stats *kn_rules_stats(const struct kn_rules *r)
{
    return &r->st;
}

struct kn_peers *kn_rules_peers(struct kn_rules *r)
{
    return &r->peers;
}

int kn_rules_set_world(struct kn_rules *r, const char *doc, size_t len)
{
    if (!doc || len == 0) {
        free(r->world);
        r->world = NULL;
        r->world_len = 0;
        return 0;
    }
    if (len > UINT32_MAX)
        return -1;
    char *copy = malloc(len);
    if (!copy)
        return -1;
    memcpy(copy, doc, len);
    free(r->world);
    r->world = copy;
    r->world_len = (uint32_t)len;
    return 0;
}

void kn_rules_setpoints(const struct kn_rules *r, struct kn_command *cmd)
{
    memset(cmd, 0, sizeof *cmd);
    cmd->belt_speed_m_s[0] = r->belts[0];
    cmd->belt_speed_m_s[1] = r->belts[1];
    cmd->flipper_mask = r->flipper_valid;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        cmd->flipper_rad[k] = r->flipper[k];
}
