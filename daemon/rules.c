/* KRP/1 robot rules: see rules.h for the contract and docs/protocol.md
 * ("Choices kenaf-simd makes") for where the protocol leaves a choice. */
#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

struct kn_rules {
    struct kn_rules_params p;
    struct kn_rules_io io;
    struct kn_peers peers;
    struct kn_tbucket overflow_errors; /* peers that found the table full */
    /* One more than the limit: a driver that hands over keeps its
     * subscription, and the new driver still gets the slot kept for it. */
    struct kn_peer *subs[KN_RULES_MAX_SUBS + 1];
    unsigned nsubs;

    struct kn_peer *driver; /* the one peer whose set-points apply */
    uint64_t driver_sp_ns;  /* the driver's last set-point (plain grace) */
    uint64_t grace_ns;      /* a plain driver's hold after its last set-point */
    /* The e-stop circuit: the robot is stopped while any engagement holds. */
    struct kn_rules_engagement eng[KN_RULES_MAX_ENGAGEMENTS];
    unsigned n_eng;
    uint64_t rng; /* tokens without io.random32 */

    uint32_t seq_out; /* the robot's own seq, one per robot */

    struct kn_state state; /* latest from the simulator */
    bool have_state;
    uint64_t state_ns;
    bool backend_up;
    bool no_model, no_flippers, no_drive; /* what the ready simulator lacks */

    char *world; /* the world document, or NULL */
    uint32_t world_len;

    bool wd_armed, wd_flag;
    uint64_t wd_fed_ns, wd_ns;
    bool clamped;

    bool step_pending; /* a STEP is with the simulator */
    uint32_t step_seq; /* its seq and sender */
    struct kn_addr step_from;

    double belts[2];              /* set-point now, m/s */
    double flipper[KN_NFLIPPERS]; /* flipper targets, rad */
    uint8_t flipper_valid;        /* which targets were ever set */
    uint8_t restoring;            /* targets a returned simulator is still restoring */
    bool restore_started;         /* restore_ns is set */
    uint64_t restore_ns;          /* first state after the simulator returned */

    struct kn_rules_stats st;
};

static uint64_t elapsed(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}

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
    return r;
}

void kn_rules_free(struct kn_rules *r)
{
    if (!r)
        return;
    kn_peers_free(&r->peers);
    free(r->world);
    free(r);
}

/* ---- output ---------------------------------------------------------- */

static void send_msg(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
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
static void send_error(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
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
    send_msg(r, p, to, &m);
}

static void send_ack(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                     const struct kn_krp_header *h)
{
    if (!(h->flags & KN_KRP_F_ACK_REQ))
        return;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ACK, 0, 0);
    m.u.ack.acked_seq = h->seq;
    m.u.ack.acked_type = h->type;
    send_msg(r, p, to, &m);
}

void kn_rules_refuse(struct kn_rules *r, const struct kn_addr *from, const uint8_t *buf, size_t len,
                     uint8_t code, uint64_t now_ns)
{
    struct kn_krp_msg m;
    memset(&m, 0, sizeof m);
    (void)kn_krp_decode(buf, len, &m);
    send_error(r, kn_peers_find(&r->peers, from), from, m.h.seq, m.h.type, code, now_ns);
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
        elapsed(now_ns, r->state_ns) > ms_to_ns(r->p.stale_ms))
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
    send_msg(r, p, to, &m);
}

/* session: answer a session HELLO (48 bytes, role and token) */
static void send_hello_ack(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to,
                           bool session)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO_ACK, 0, 0);
    struct kn_krp_hello_ack *a = &m.u.hello_ack;
    a->protocol = KN_KRP_VERSION;
    a->simulated = 1;
    a->backend = r->p.backend_id;
    memcpy(a->robot_name, r->p.name, sizeof a->robot_name);
    a->capabilities = r->p.capabilities | (r->world ? KN_KRP_CAP_WORLD : 0) | KN_KRP_CAP_SESSIONS |
                      KN_KRP_CAP_ESTOP_INFO;
    if (session && p) {
        a->session = true;
        a->role = r->driver == p ? KN_KRP_ROLE_DRIVER : KN_KRP_ROLE_OBSERVER;
        a->token = p->token;
    }
    a->counts_per_m = r->p.counts_per_m;
    a->max_speed_mm_s = r->p.max_speed_mm_s;
    a->flipper_min_cdeg = r->p.flipper_min_cdeg;
    a->flipper_max_cdeg = r->p.flipper_max_cdeg;
    send_msg(r, p, to, &m);
}

/* ---- commands toward the simulator ----------------------------------- */

static void command_as(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx, bool emergency)
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

static void command(struct kn_rules *r, uint8_t flipper_mask, uint64_t t_rx)
{
    command_as(r, flipper_mask, t_rx, false);
}

/* The flippers a simulator that came back is still restoring (see
 * kn_rules_backend); the restoring window ends KN_RULES_RESTORE_NS after
 * its first state. */
static uint8_t restoring(struct kn_rules *r, uint64_t now)
{
    if (r->restoring && r->restore_started && elapsed(now, r->restore_ns) >= KN_RULES_RESTORE_NS)
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
static uint8_t hold_flippers(struct kn_rules *r, uint64_t now, bool keep_restoring)
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

static void stop_belts(struct kn_rules *r)
{
    r->belts[0] = r->belts[1] = 0;
}

/* ---- peers ----------------------------------------------------------- */

static void drop_sub(struct kn_rules *r, struct kn_peer *p)
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

/* ---- sessions: who drives ------------------------------------------- */

static uint32_t new_token(struct kn_rules *r)
{
    uint32_t t = 0;
    while (t == 0) {
        if (r->io.random32) {
            t = r->io.random32(r->io.ctx);
        } else { /* splitmix64 */
            uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            t = (uint32_t)(z ^ (z >> 31));
        }
    }
    return t;
}

static bool is_console(const struct kn_rules *r, const struct kn_addr *a)
{
    for (unsigned i = 0; i < r->p.n_consoles; i++)
        if (kn_addr_match(&r->p.consoles[i], a))
            return true;
    return false;
}

/* A plain driver (no session) holds the robot while its set-points keep
 * coming and for one watchdog period after the last: a controller that
 * moves the robot must send at least that often anyway, so past it the
 * robot stands (or the watchdog is stopping it) and nobody is fought. */
static bool driver_idle(const struct kn_rules *r, uint64_t now)
{
    return r->driver && !r->driver->session && elapsed(now, r->driver_sp_ns) >= r->grace_ns;
}

bool kn_rules_driver_idle(const struct kn_rules *r, uint64_t now_ns)
{
    return driver_idle(r, now_ns);
}

/* Nobody drives, or the plain driver has gone idle. */
static bool robot_free(const struct kn_rules *r, uint64_t now)
{
    return !r->driver || driver_idle(r, now);
}

static void set_driver(struct kn_rules *r, struct kn_peer *p, uint64_t now)
{
    bool idle = driver_idle(r, now);
    r->driver_sp_ns = now;
    if (r->driver == p)
        return;
    if (r->driver) {
        if (idle)
            r->st.driver_idle_claims++;
        else
            r->st.driver_takeovers++;
    }
    r->driver = p;
    r->st.driver_claims++;
}

/* The driver gives up (BYE, a HELLO to observe, silence): nobody commands
 * the belts any more, so they stop; flipper targets stay. */
static void release_driver(struct kn_rules *r, uint64_t now)
{
    r->driver = NULL;
    r->st.driver_released++;
    if (r->belts[0] != 0 || r->belts[1] != 0) {
        stop_belts(r);
        command(r, 0, now);
    }
    r->wd_armed = false;
}

/* Everything the robot kept for a peer's session: the driver role, the
 * subscription, the mark, the token. The peer entry itself stays. */
static void end_session(struct kn_rules *r, struct kn_peer *p, uint64_t now)
{
    if (r->driver == p)
        release_driver(r, now);
    if (p->sub_period_ms)
        drop_sub(r, p);
    p->has_mark = false;
    p->hello = p->session = false;
    p->token = 0;
}

/* A driver silent for 5 s has gone (its session with it). */
static void expire_driver(struct kn_rules *r, uint64_t now)
{
    if (r->driver && elapsed(now, r->driver->last_seen_ns) >= KN_RULES_SILENCE_NS)
        release_driver(r, now);
}

static void expire_subs(struct kn_rules *r, uint64_t now)
{
    for (unsigned i = 0; i < r->nsubs;) {
        struct kn_peer *p = r->subs[i];
        if (elapsed(now, p->last_seen_ns) >= KN_RULES_SILENCE_NS) {
            drop_sub(r, p); /* moves the last one into slot i */
            r->st.sub_lapsed++;
        } else {
            i++;
        }
    }
}

/* The sender's entry, created if needed. NULL when the table is full of
 * peers heard from within the last 5 s: the datagram is then handled
 * without per-peer state (docs/protocol.md, "Peers"). */
static struct kn_peer *peer_get(struct kn_rules *r, const struct kn_addr *from, uint64_t now)
{
    struct kn_peer *p = kn_peers_find(&r->peers, from);
    if (p) {
        if (elapsed(now, p->last_seen_ns) >= KN_RULES_SILENCE_NS) {
            if (p->has_mark)
                r->st.marks_forgotten++;
            if (p->session)
                r->st.sessions_expired++;
            end_session(r, p, now);
        }
    } else {
        if (r->peers.used >= r->peers.cap) {
            struct kn_peer *old = kn_peers_oldest(&r->peers);
            if (old && elapsed(now, old->last_seen_ns) >= KN_RULES_SILENCE_NS) {
                if (old->session)
                    r->st.sessions_expired++;
                end_session(r, old, now);
                kn_peers_remove(&r->peers, old);
                r->st.peers_evicted++;
            }
        }
        p = kn_peers_add(&r->peers, from);
        if (!p) {
            r->st.peers_overflow++;
            return NULL;
        }
        r->st.peers_added++;
        p->first_seen_ns = now;
        p->console = is_console(r, from);
        kn_tbucket_init(&p->errors, KN_RULES_ERR_RATE, KN_RULES_ERR_BURST, now);
    }
    p->last_seen_ns = now;
    p->dgrams_in++;
    kn_peers_touch(&r->peers, p);
    return p;
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
        send_error(r, p, from, h->seq, h->type, KN_KRP_ERR_BACKEND_DOWN, now);
    } else if (r->no_model) {
        r->st.while_no_model++;
        send_error(r, p, from, h->seq, h->type, KN_KRP_ERR_NO_MODEL, now);
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

/* ---- message handlers ------------------------------------------------ */

/* HELLO opens a session (a fresh seq space, and with SESSION a fresh
 * token), or with TOKEN reconsiders the role of the open one. A session
 * HELLO asking to drive gets the robot when it is free (nobody drives, or
 * a plain driver past its grace), or always for a console. */
static void on_hello(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                     const struct kn_krp_msg *m, uint64_t now)
{
    bool session = m->h.flags & KN_KRP_F_SESSION;
    bool observe = session && (m->h.flags & KN_KRP_F_OBSERVER);
    if (p) {
        if (!(m->h.flags & KN_KRP_F_TOKEN)) {
            if (p->has_mark)
                r->st.marks_forgotten++;
            p->has_mark = false;
            p->session = session;
            if (session) {
                p->token = new_token(r);
                r->st.sessions_opened++;
            }
        }
        p->hello = true;
        /* Only a session HELLO asks to drive: a plain HELLO is what every
         * status display sends, and claims nothing (its set-points do). */
        if (session && !observe && (robot_free(r, now) || p->console))
            set_driver(r, p, now);
        else if (observe && r->driver == p)
            release_driver(r, now);
        size_t i = 0;
        for (; i < KN_KRP_NAME_LEN && m->u.hello.name[i]; i++) {
            unsigned char c = (unsigned char)m->u.hello.name[i];
            p->name[i] = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? (char)c : '?';
        }
        p->name[i] = '\0';
    }
    send_hello_ack(r, p, from, session);
}

/* Only the driver's set-points apply. A console takes the robot over; a
 * peer without a session token claims it while it is free (unless the
 * robot wants a HELLO first); a session observer asks with HELLO. Every
 * set-point of the driver, also one refused for ESTOP, keeps it active. */
static bool may_drive(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                      const struct kn_krp_msg *m, uint64_t now)
{
    if (p && (p == r->driver || p->console ||
              (robot_free(r, now) && !p->session && (p->hello || !r->p.hello_to_drive)))) {
        set_driver(r, p, now);
        return true;
    }
    r->st.not_owner++;
    send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NOT_OWNER, now);
    return false;
}

/* A datagram belongs to the sender's session when it carries that
 * session's token; a peer without a session sends none. HELLO without a
 * token always passes: it opens a new session. */
static bool token_ok(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                     const struct kn_krp_msg *m, uint64_t now)
{
    bool ok;
    if (m->h.flags & KN_KRP_F_TOKEN)
        ok = p && p->session && p->token == m->h.token;
    else
        ok = m->h.type == KN_KRP_HELLO || !p || !p->session;
    if (!ok) {
        r->st.bad_session++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BAD_SESSION, now);
    }
    return ok;
}

static void on_bye(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                   const struct kn_krp_msg *m, uint64_t now)
{
    if (p) {
        if (p->session)
            r->st.sessions_closed++;
        end_session(r, p, now);
    }
    send_ack(r, p, from, &m->h);
}

/* The gate every CRAWLER and FLIPPER passes: older than the sender's mark
 * is ignored (counted inside stale_seq), anything during ESTOP refused. */
static bool setpoint_admitted(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                              const struct kn_krp_msg *m, uint64_t now)
{
    if (!may_drive(r, p, from, m, now))
        return false;
    if (stale_seq(r, p, m->h.seq))
        return false;
    if (r->n_eng) {
        r->st.estop_refused++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_ESTOP, now);
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
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_ACTUATOR, now);
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
    command(r, 0, now);
    if (clamped) {
        r->st.clamped++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    backend_check(r, p, from, &m->h, now);
    send_ack(r, p, from, &m->h);
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
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_ACTUATOR, now);
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
    command(r, f.mask, now);
    if (clamped) {
        r->st.clamped++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    backend_check(r, p, from, &m->h, now);
    send_ack(r, p, from, &m->h);
}

static void on_stop(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                    const struct kn_krp_msg *m, uint64_t now)
{
    if (!may_drive(r, p, from, m, now))
        return;
    move_mark(p, m->h.seq);
    stop_belts(r);
    r->wd_armed = false; /* nothing moves: nothing to guard */
    r->wd_flag = false;
    r->clamped = false;
    command(r, hold_flippers(r, now, true), now);
    backend_check(r, p, from, &m->h, now);
    send_ack(r, p, from, &m->h);
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
            drop_sub(r, p);
            r->st.sub_cancelled++;
        }
        send_ack(r, p, from, &m->h);
        return;
    }
    if (!p || (!p->sub_period_ms && !sub_slot_free(r, p))) {
        r->st.sub_busy++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
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
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
    }
    send_ack(r, p, from, &m->h);
}

/* The engagement of this sender: its address and port, and for a
 * session client its token (a new session is another engager). */
static struct kn_rules_engagement *find_engagement(struct kn_rules *r, const struct kn_addr *from,
                                                   uint32_t token)
{
    for (unsigned i = 0; i < r->n_eng; i++)
        if (r->eng[i].kind != KN_RULES_ENG_ADMIN && r->eng[i].token == token &&
            kn_addr_equal(&r->eng[i].addr, from))
            return &r->eng[i];
    return NULL;
}

/* The robot stops at the first engagement: belts 0, flippers hold, and
 * the simulator brakes (an emergency command). */
static void estop_halt(struct kn_rules *r, uint64_t now)
{
    stop_belts(r);
    r->wd_armed = false;
    command_as(r, hold_flippers(r, now, false), now, true);
}

static void add_engagement(struct kn_rules *r, const struct kn_addr *from, uint32_t token,
                           uint8_t kind, const char *name, uint64_t now)
{
    struct kn_rules_engagement *e = &r->eng[r->n_eng++];
    memset(e, 0, sizeof *e);
    if (from)
        e->addr = *from;
    e->token = token;
    e->kind = kind;
    snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    e->since_ns = now;
    r->st.estop_engagements++;
    if (r->n_eng == 1)
        r->st.estop_engaged++;
}

/* A series safety circuit (docs/protocol.md, "Emergency stop"): anyone
 * engages, each engager releases its own, a console resets all. */
static void on_estop(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                     const struct kn_krp_msg *m, uint64_t now)
{
    uint8_t v = m->u.estop.engage;
    if (v > 1) {
        r->st.estop_bad_value++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    uint32_t token = p && p->session ? p->token : 0;
    struct kn_rules_engagement *e = find_engagement(r, from, token);
    if (v == 1) {
        if (!e) {
            /* The robot is already stopped when the table is full; the
             * engager is told its own engagement was not recorded. The
             * last place is kept for the admin's. */
            if (r->n_eng >= KN_RULES_MAX_ENGAGEMENTS - 1) {
                r->st.estop_table_full++;
                send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
                return;
            }
            uint8_t kind = p && p->console ? KN_RULES_ENG_CONSOLE
                           : token         ? KN_RULES_ENG_SESSION
                                           : KN_RULES_ENG_PLAIN;
            add_engagement(r, from, token, kind, p ? p->name : NULL, now);
        }
        estop_halt(r, now);
    } else if (p && p->console) {
        if (r->n_eng) {
            r->st.estop_console_resets++;
            r->n_eng = 0;
        }
    } else if (e) {
        /* the table stays in the order engaged, oldest first */
        memmove(e, e + 1, (size_t)(r->eng + --r->n_eng - e) * sizeof *e);
        r->st.estop_released++;
    } else if (r->n_eng) {
        /* Held by others only: not this sender's to release. */
        r->st.estop_release_refused++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NOT_OWNER, now);
        return;
    }
    /* Released (by all): belts stay at 0 until a new CRAWLER. */
    send_ack(r, p, from, &m->h);
}

/* An observer's request: needs no HELLO, moves no mark, feeds no
 * watchdog. The answer is the chunk from the asked offset on. */
static void on_world_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                         const struct kn_krp_msg *m, uint64_t now)
{
    uint32_t off = m->u.world_req.offset;
    if (r->world_len > 0 && off >= r->world_len) {
        r->st.world_bad_offset++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
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
    send_msg(r, p, from, &w);
}

/* ESTOP_INFO lists engagements by these kinds as they are. */
_Static_assert((int)KN_RULES_ENG_PLAIN == KN_KRP_ENG_PLAIN &&
                   (int)KN_RULES_ENG_SESSION == KN_KRP_ENG_SESSION &&
                   (int)KN_RULES_ENG_CONSOLE == KN_KRP_ENG_CONSOLE &&
                   (int)KN_RULES_ENG_ADMIN == KN_KRP_ENG_ADMIN,
               "engager kinds differ from the wire's");

/* Who holds the e-stop, for anyone who asks: an observer's request like
 * WORLD_REQ (no HELLO needed, claims nothing, moves no mark), so a remote
 * console can show why the robot stays stopped. The table is kept oldest
 * first, so past 20 the ones listed are those that have held longest. */
static void on_estop_info_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                              uint64_t now)
{
    struct kn_krp_msg a;
    kn_krp_init(&a, KN_KRP_ESTOP_INFO, 0, 0);
    struct kn_krp_estop_info *x = &a.u.estop_info;
    x->engaged = (uint8_t)(r->n_eng > UINT8_MAX ? UINT8_MAX : r->n_eng);
    while (x->n < KN_KRP_ESTOP_ENTRIES && x->n < r->n_eng) {
        const struct kn_rules_engagement *e = &r->eng[x->n];
        struct kn_krp_estop_entry *o = &x->e[x->n++];
        o->kind = e->kind;
        o->present = kn_rules_engager_present(r, e, now);
        uint64_t ms = elapsed(now, e->since_ns) / 1000000u;
        o->held_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
        snprintf(o->name, sizeof o->name, "%s", e->kind == KN_RULES_ENG_ADMIN ? "admin" : e->name);
    }
    send_msg(r, p, from, &a);
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
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    if (!may_drive(r, p, from, m, now))
        return;
    uint32_t us = m->u.step.advance_us;
    if (us < KN_KRP_STEP_MIN_US || us > KN_KRP_STEP_MAX_US) {
        r->st.step_range++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    if (r->step_pending) {
        r->st.step_busy++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
        return;
    }
    if (!r->backend_up || r->io.step(r->io.ctx, us) != 0) {
        r->st.while_backend_down++;
        send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BACKEND_DOWN, now);
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
        send_error(r, p, &r->step_from, r->step_seq, KN_KRP_STEP, KN_KRP_ERR_BACKEND_DOWN, now);
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
    expire_driver(r, now);
    expire_subs(r, now);
    struct kn_peer *p = peer_get(r, from, now);

    if (res != KN_KRP_OK) {
        /* m.h is zero when the header is incomplete or, over 512 bytes,
         * not trusted (docs/protocol.md): ERROR then names seq 0, type 0. */
        send_error(r, p, from, m.h.seq, m.h.type, kn_krp_error_code(res), now);
        return;
    }
    r->st.in_type[m.h.type]++;
    if (!kn_krp_is_to_robot(m.h.type)) {
        r->st.not_to_robot++;
        send_error(r, p, from, m.h.seq, m.h.type, KN_KRP_ERR_UNKNOWN_TYPE, now);
        return;
    }
    if (!token_ok(r, p, from, &m, now))
        return;
    switch (m.h.type) {
    case KN_KRP_HELLO: on_hello(r, p, from, &m, now); break;
    case KN_KRP_BYE: on_bye(r, p, from, &m, now); break;
    case KN_KRP_CRAWLER: on_crawler(r, p, from, &m, now); break;
    case KN_KRP_FLIPPER: on_flipper(r, p, from, &m, now); break;
    case KN_KRP_STOP: on_stop(r, p, from, &m, now); break;
    case KN_KRP_STATUS_REQ: send_status(r, p, from, m.h.seq, now); break;
    case KN_KRP_SUBSCRIBE: on_subscribe(r, p, from, &m, now); break;
    case KN_KRP_ESTOP: on_estop(r, p, from, &m, now); break;
    case KN_KRP_WORLD_REQ: on_world_req(r, p, from, &m, now); break;
    case KN_KRP_STEP: on_step(r, p, from, &m, now); break;
    case KN_KRP_ESTOP_INFO_REQ: on_estop_info_req(r, p, from, now); break;
    default: break;
    }
}

/* ---- time ------------------------------------------------------------ */

void kn_rules_tick(struct kn_rules *r, uint64_t now)
{
    if (r->wd_armed && elapsed(now, r->wd_fed_ns) >= r->wd_ns) {
        r->wd_armed = false;
        r->wd_flag = true;
        r->st.watchdog_trips++;
        stop_belts(r);
        command_as(r, 0, now, true);
        if (r->driver) { /* a driver that went quiet while moving gives the robot up */
            r->driver = NULL;
            r->st.driver_watchdog++;
        }
    }
    expire_driver(r, now);
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
 * those flippers are "restoring" (hold_flippers). */
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
    stop_belts(r);
    r->wd_armed = false;
    command(r, hold_flippers(r, now_ns, false), now_ns);
}

uint64_t kn_rules_state_age(const struct kn_rules *r, uint64_t now_ns)
{
    return r->have_state ? elapsed(now_ns, r->state_ns) : UINT64_MAX;
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

const struct kn_peer *kn_rules_driver(const struct kn_rules *r)
{
    return r->driver;
}

unsigned kn_rules_estop(const struct kn_rules *r, const struct kn_rules_engagement **list)
{
    if (list)
        *list = r->eng;
    return r->n_eng;
}

bool kn_rules_engager_present(struct kn_rules *r, const struct kn_rules_engagement *e,
                              uint64_t now_ns)
{
    if (e->kind == KN_RULES_ENG_ADMIN)
        return true;
    struct kn_peer *p = kn_peers_find(&r->peers, &e->addr);
    return p && elapsed(now_ns, p->last_seen_ns) < KN_RULES_SILENCE_NS &&
           (e->token ? p->session && p->token == e->token : !p->session);
}

void kn_rules_estop_engage(struct kn_rules *r, const char *who, uint64_t now_ns)
{
    bool held = false;
    for (unsigned i = 0; i < r->n_eng; i++)
        held |= r->eng[i].kind == KN_RULES_ENG_ADMIN;
    if (!held) /* its place is kept free (on_estop) */
        add_engagement(r, NULL, 0, KN_RULES_ENG_ADMIN, who, now_ns);
    estop_halt(r, now_ns);
}

unsigned kn_rules_estop_reset(struct kn_rules *r)
{
    unsigned n = r->n_eng;
    if (n)
        r->st.estop_admin_resets++;
    r->n_eng = 0;
    return n;
}

unsigned kn_rules_sessions(struct kn_rules *r)
{
    unsigned n = 0, i = 0;
    const struct kn_peer *p;
    while ((p = kn_peers_next(&r->peers, &i)) != NULL)
        n += p->session;
    return n;
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
