/* The trials extension of the robot's rules (docs/protocol.md,
 * "Extension: trials"): the judged trial's state, as the simulator last
 * reported it, answers TRIAL_REQ op 0; op 1 (a reset to the start gate)
 * is a driving action passed on to the simulator while the trial is not
 * over (NO_TRIAL once it is); every e-stop engagement
 * during the trial is reported to it. No I/O: io.trial reaches the
 * simulator. */
#include <string.h>

#include "rules_priv.h"

void kn_rules_trial(struct kn_rules *r, const struct kn_krp_trial *t)
{
    r->trial = *t;
    r->have_trial = true;
    r->st.trial_states++;
}

bool kn_rules_has_trial(const struct kn_rules *r)
{
    return r->have_trial;
}

void kn_rules_trial_estop(struct kn_rules *r)
{
    if (!r->have_trial || (r->trial.flags & KN_KRP_TRIAL_F_ENDED) || !r->io.trial)
        return;
    if (r->io.trial(r->io.ctx, false) == 0)
        r->st.trial_estops++;
}

static void send_trial(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *to)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL, 0, 0);
    m.u.trial = r->trial;
    kn_rules_send_msg(r, p, to, &m);
}

void kn_rules_on_trial_req(struct kn_rules *r, struct kn_peer *p, const struct kn_addr *from,
                           const struct kn_krp_msg *m, uint64_t now)
{
    r->st.trial_reqs++;
    uint8_t op = m->u.trial_req.op;
    if (!r->have_trial) {
        r->st.no_trial++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_TRIAL, now);
        return;
    }
    if (op == KN_KRP_TRIAL_OP_STATE) {
        send_trial(r, p, from);
        return;
    }
    if (op != KN_KRP_TRIAL_OP_RESET) {
        r->st.trial_range++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_RANGE, now);
        return;
    }
    /* A trial that is over has no gate to go back to: the simulator would
     * refuse the reset, after an ACK had told the client otherwise. Refused
     * here, before anyone claims the robot by it. (A trial that ends
     * between its last state and this reset is refused by the simulator,
     * warned about and counted, and the next TRIAL says it is over.) */
    if (r->trial.flags & KN_KRP_TRIAL_F_ENDED) {
        r->st.trial_refused++;
        r->st.no_trial++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_NO_TRIAL, now);
        return;
    }
    /* a reset moves the robot: only who may drive it */
    if (!kn_rules_may_drive(r, p, from, m, now)) {
        r->st.trial_refused++;
        return;
    }
    if (!r->backend_up || !r->io.trial) {
        r->st.trial_refused++;
        r->st.while_backend_down++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BACKEND_DOWN, now);
        return;
    }
    /* the belts stop first, as by STOP: the robot arrives at the gate at
     * rest and stays there */
    kn_rules_stop_belts(r);
    r->wd_armed = false;
    r->wd_flag = false;
    kn_rules_command(r, 0, now);
    if (r->io.trial(r->io.ctx, true) != 0) {
        r->st.trial_refused++;
        r->st.while_backend_down++;
        kn_rules_send_error(r, p, from, m->h.seq, m->h.type, KN_KRP_ERR_BACKEND_DOWN, now);
        return;
    }
    r->st.trial_resets++;
    kn_rules_send_ack(r, p, from, &m->h);
}
