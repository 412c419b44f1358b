/* KRP/1 robot rules, who talks to the robot: the bounded peer table
 * (docs/protocol.md, "Peers"), sessions and their tokens, HELLO and BYE,
 * and who drives (the driver, consoles, a plain driver's grace). Part of
 * the rules module (rules.h); the robot itself is in rules.c. */
#include <string.h>

#include "rules.h"
#include "rules_priv.h"

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
                      KN_KRP_CAP_ESTOP_INFO | (r->have_trial ? KN_KRP_CAP_TRIAL : 0);
    if (session && p) {
        a->session = true;
        a->role = r->driver == p ? KN_KRP_ROLE_DRIVER : KN_KRP_ROLE_OBSERVER;
        a->token = p->token;
    }
    a->counts_per_m = r->p.counts_per_m;
    a->max_speed_mm_s = r->p.max_speed_mm_s;
    a->flipper_min_cdeg = r->p.flipper_min_cdeg;
    a->flipper_max_cdeg = r->p.flipper_max_cdeg;
    kn_rules_send_msg(r, p, to, &m);
}

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
    return r->driver && !r->driver->session &&
           kn_rules_elapsed(now, r->driver_sp_ns) >= r->grace_ns;
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
        kn_rules_stop_belts(r);
        kn_rules_command(r, 0, now);
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
        kn_rules_drop_sub(r, p);
    p->has_mark = false;
    p->hello = p->session = false;
    p->token = 0;
}

/* A driver silent for 5 s has gone (its session with it). */
void kn_rules_expire_driver(struct kn_rules *r, uint64_t now)
{
    if (r->driver && kn_rules_elapsed(now, r->driver->last_seen_ns) >= KN_RULES_SILENCE_NS)
        release_driver(r, now);
}

/* The sender's entry, created if needed. NULL when the table is full of
 * peers heard from within the last 5 s: the datagram is then handled
 * without per-peer state (docs/protocol.md, "Peers"). */
struct kn_peer *kn_rules_peer_get(struct kn_rules *r, const struct kn_addr *from, uint64_t now)
{
    struct kn_peer *p = kn_peers_find(&r->peers, from);
    if (p) {
        if (kn_rules_elapsed(now, p->last_seen_ns) >= KN_RULES_SILENCE_NS) {
            if (p->has_mark)
                r->st.marks_forgotten++;
            if (p->session)
                r->st.sessions_expired++;
            end_session(r, p, now);
        }
    } else {
        if (r->peers.used >= r->peers.cap) {
            struct kn_peer *old = kn_peers_oldest(&r->peers);
            if (old && kn_rules_elapsed(now, old->last_seen_ns) >= KN_RULES_SILENCE_NS) {
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

/* ---- HELLO, BYE and the gates every datagram passes ------------------ */

/* HELLO opens a session (a fresh seq space, and with SESSION a fresh
 * token), or with TOKEN reconsiders the role of the open one. A session
 * HELLO asking to drive gets the robot when it is free (nobody drives, or
 * a plain driver past its grace), or always for a console. */
void kn_rules_on_hello(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
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
bool kn_rules_may_drive(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                        const struct kn_krp_msg *m, uint64_t now)
{
    if (p && (p == r->driver || p->console ||
              (robot_free(r, now) && !p->session && (p->hello || !r->p.hello_to_drive)))) {
        set_driver(r, p, now);
        return true;
    }
    r->st.not_owner++;
    kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NOT_OWNER, now);
    return false;
}

/* A datagram belongs to the sender's session when it carries that
 * session's token; a peer without a session sends none. HELLO without a
 * token always passes: it opens a new session. */
bool kn_rules_token_ok(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now)
{
    bool ok;
    if (m->h.flags & KN_KRP_F_TOKEN)
        ok = p && p->session && p->token == m->h.token;
    else
        ok = m->h.type == KN_KRP_HELLO || !p || !p->session;
    if (!ok) {
        r->st.bad_session++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BAD_SESSION, now);
    }
    return ok;
}

void kn_rules_on_bye(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                     const struct kn_krp_msg *m, uint64_t now)
{
    if (p) {
        if (p->session)
            r->st.sessions_closed++;
        end_session(r, p, now);
    }
    kn_rules_send_ack(r, p, from, &m->h);
}

const struct kn_peer *kn_rules_driver(const struct kn_rules *r)
{
    return r->driver;
}

unsigned kn_rules_sessions(struct kn_rules *r)
{
    unsigned n = 0, i = 0;
    const struct kn_peer *p;
    while ((p = kn_peers_next(&r->peers, &i)) != NULL)
        n += p->session;
    return n;
}
