/* KRP/1 robot rules, the e-stop: a series safety circuit of
 * engagements (docs/protocol.md, "Emergency stop"), ESTOP and the
 * ESTOP_INFO answer, and the admin's engage and reset. Part of the rules
 * module (rules.h); the robot itself is in rules.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "rules_priv.h"

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
    kn_rules_stop_belts(r);
    r->wd_armed = false;
    kn_rules_command_as(r, kn_rules_hold_flippers(r, now, false), now, true);
}

/* Room for one more engagement: past the ones held in place, the full
 * table once. false when it is full, or cannot be allocated (the robot is
 * stopped already then: the places in the struct are all held). */
static bool eng_room(struct kn_rules *r)
{
    if (r->n_eng < r->eng_cap)
        return true;
    if (r->eng_cap >= KN_RULES_MAX_ENGAGEMENTS)
        return false;
    struct kn_rules_engagement *t = calloc(KN_RULES_MAX_ENGAGEMENTS, sizeof *t);
    if (!t)
        return false;
    memcpy(t, r->eng, r->n_eng * sizeof *t);
    r->eng = t;
    r->eng_cap = KN_RULES_MAX_ENGAGEMENTS;
    return true;
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
    kn_rules_trial_estop(r);
}

/* A series safety circuit (docs/protocol.md, "Emergency stop"): anyone
 * engages, each engager releases its own, a console resets all. */
void kn_rules_on_estop(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                       const struct kn_krp_msg *m, uint64_t now)
{
    uint8_t v = m->u.estop.engage;
    if (v > 1) {
        r->st.estop_bad_value++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    uint32_t token = p && p->session ? p->token : 0;
    struct kn_rules_engagement *e = find_engagement(r, from, token);
    if (v == 1) {
        if (!e) {
            /* The robot is already stopped when the table is full; the
             * engager is told its own engagement was not recorded. The
             * last place is kept for the admin's. */
            if (r->n_eng >= KN_RULES_MAX_ENGAGEMENTS - 1 || !eng_room(r)) {
                r->st.estop_table_full++;
                kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BUSY, now);
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
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NOT_OWNER, now);
        return;
    }
    /* Released (by all): belts stay at 0 until a new CRAWLER. */
    kn_rules_send_ack(r, p, from, &m->h);
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
void kn_rules_on_estop_info_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
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
        uint64_t ms = kn_rules_elapsed(now, e->since_ns) / 1000000u;
        o->held_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
        snprintf(o->name, sizeof o->name, "%s", e->kind == KN_RULES_ENG_ADMIN ? "admin" : e->name);
    }
    kn_rules_send_msg(r, p, from, &a);
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
    return p && kn_rules_elapsed(now_ns, p->last_seen_ns) < KN_RULES_SILENCE_NS &&
           (e->token ? p->session && p->token == e->token : !p->session);
}

void kn_rules_estop_engage(struct kn_rules *r, const char *who, uint64_t now_ns)
{
    bool held = false;
    for (unsigned i = 0; i < r->n_eng; i++)
        held |= r->eng[i].kind == KN_RULES_ENG_ADMIN;
    /* its place is kept free (on_estop); only an allocation failing, with
     * the places in the struct all held (so the robot stopped), leaves it
     * out, counted */
    if (!held && eng_room(r))
        add_engagement(r, NULL, 0, KN_RULES_ENG_ADMIN, who, now_ns);
    else if (!held)
        r->st.estop_table_full++;
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
