/* trial.c: the trial block and the reset to the start gate (trial.h). */
#include "trial.h"

#include <stdio.h>
#include <string.h>

#include "estop.h"

void kn_ctrial_hello_ack(struct kn_ctrial *c, uint32_t capabilities)
{
    c->capable = capabilities & KN_KRP_CAP_TRIAL;
    if (!c->capable)
        c->valid = false;
}

/* seq is one of the current reset's sends. */
static bool ours(const struct kn_ctrial *c, uint32_t seq)
{
    return c->reset_tries > 0 &&
           (uint32_t)(seq - c->reset_first) <= (uint32_t)(c->reset_last - c->reset_first);
}

void kn_ctrial_msg(struct kn_ctrial *c, const struct kn_krp_msg *m)
{
    if (m->h.type == KN_KRP_TRIAL) {
        c->t = m->u.trial;
        c->valid = true;
        c->misses = 0;
        return;
    }
    bool settles = c->reset == KN_CTRIAL_RESET_PENDING;
    if (settles && m->h.type == KN_KRP_ACK && m->u.ack.acked_type == KN_KRP_TRIAL_REQ &&
        ours(c, m->u.ack.acked_seq)) {
        c->reset = KN_CTRIAL_RESET_DONE;
        c->resets_done++;
    } else if (settles && m->h.type == KN_KRP_ERROR &&
               m->u.error.offending_type == KN_KRP_TRIAL_REQ && ours(c, m->u.error.offending_seq)) {
        c->reset = KN_CTRIAL_RESET_REFUSED;
        c->reset_error = m->u.error.code;
    }
}

static void send_reset(struct kn_ctrial *c, struct kn_estop *e, double now)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL_REQ, 0, KN_KRP_F_ACK_REQ);
    m.u.trial_req.op = KN_KRP_TRIAL_OP_RESET;
    c->reset_last = kn_estop_send(e, &m);
    c->reset_tries++;
    c->reset_next = now + KN_CTRIAL_RESEND_S;
}

void kn_ctrial_reset(struct kn_ctrial *c, struct kn_estop *e, double now)
{
    c->reset = KN_CTRIAL_RESET_PENDING;
    c->reset_tries = 0;
    c->reset_error = 0;
    c->reset_first = e->seq;
    send_reset(c, e, now);
}

void kn_ctrial_poll(struct kn_ctrial *c, struct kn_estop *e, double now)
{
    if (c->reset == KN_CTRIAL_RESET_PENDING && now >= c->reset_next) {
        if (c->reset_tries >= KN_CTRIAL_TRIES)
            c->reset = KN_CTRIAL_RESET_NO_ANSWER;
        else
            send_reset(c, e, now);
    }
    if (!c->capable || now < c->next_ask)
        return;
    /* a robot that stopped answering: an old state would mislead */
    if (c->misses >= KN_CTRIAL_MISSES)
        c->valid = false;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL_REQ, 0, 0);
    m.u.trial_req.op = KN_KRP_TRIAL_OP_STATE;
    kn_estop_send(e, &m);
    c->misses++;
    c->next_ask = now + KN_CTRIAL_ASK_S;
}

void kn_ctrial_describe(const struct kn_ctrial *c, char *buf, size_t len)
{
    const char *code = kn_krp_error_name((uint8_t)c->reset_error);
    switch (c->reset) {
    case KN_CTRIAL_RESET_NONE: snprintf(buf, len, "%s", ""); break;
    case KN_CTRIAL_RESET_PENDING: snprintf(buf, len, "reset to the start gate sent"); break;
    case KN_CTRIAL_RESET_DONE:
        snprintf(buf, len, "reset to the start gate done: an assist fault counted");
        break;
    case KN_CTRIAL_RESET_REFUSED:
        snprintf(buf, len, "reset refused: ERROR %s", code ? code : "unknown");
        break;
    case KN_CTRIAL_RESET_NO_ANSWER: snprintf(buf, len, "reset NOT acknowledged: no answer"); break;
    }
}

static const char *end_text(uint8_t end)
{
    switch (end) {
    case KN_KRP_TRIAL_END_DONE: return "every repetition done";
    case KN_KRP_TRIAL_END_TIP_OVER: return "tip-over";
    case KN_KRP_TRIAL_END_TIME_LIMIT: return "time limit";
    case KN_KRP_TRIAL_END_PROGRAM: return "the program ended";
    default: return "ended";
    }
}

/* At most KN_CTRIAL_COLS characters of src: the panel cuts, never wraps. */
static void fit(char *dst, const char *src)
{
    size_t n = strnlen(src, KN_CTRIAL_COLS);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

bool kn_ctrial_lines(const struct kn_ctrial *c, char lines[][KN_CTRIAL_COLS + 1], int n)
{
    if (!c->capable || !c->valid || n < KN_CTRIAL_LINES)
        return false;
    const struct kn_krp_trial *t = &c->t;
    /* the name is the robot's to choose: printable ASCII only */
    char name[KN_KRP_TRIAL_NAME_LEN + 1];
    size_t k = 0;
    for (; t->name[k]; k++)
        name[k] = t->name[k] >= 0x20 && t->name[k] < 0x7f ? t->name[k] : '?';
    name[k] = '\0';
    char b[160];
    unsigned rep = t->rep + 1u > t->reps ? t->reps : t->rep + 1u;
    if (t->flags & KN_KRP_TRIAL_F_ENDED)
        snprintf(b, sizeof b, "TRIAL %.18s ENDED: %s", name, end_text(t->end));
    else
        snprintf(b, sizeof b, "TRIAL %.18s rep %u of %u %s", name, rep, (unsigned)t->reps,
                 t->flags & KN_KRP_TRIAL_F_UNDER_WAY ? "UNDER WAY" : "AT GATE");
    fit(lines[0], b);
    snprintf(b, sizeof b, "  rep %.1f s, %u faults; %.0f s left", t->rep_elapsed_ms / 1000.0,
             (unsigned)t->rep_faults, t->left_ms / 1000.0);
    fit(lines[1], b);
    snprintf(b, sizeof b, "  completed %u, fault-free %u, faults %u", (unsigned)t->completed,
             (unsigned)t->successes, (unsigned)t->faults);
    fit(lines[2], b);
    snprintf(b, sizeof b, "  tip %u wall %u lane %u estop %u assist %u",
             (unsigned)t->by_kind[KN_KRP_TF_TIP_OVER], (unsigned)t->by_kind[KN_KRP_TF_WALL],
             (unsigned)t->by_kind[KN_KRP_TF_LANE], (unsigned)t->by_kind[KN_KRP_TF_ESTOP],
             (unsigned)t->by_kind[KN_KRP_TF_ASSIST]);
    fit(lines[3], b);
    return true;
}
