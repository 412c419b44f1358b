/* A judged trial, live (docs/engine.md, "Trials"): the state of each
 * judged robot's trial goes to its connection as one
 * `KENAF {Cmd Trial} {Status OK} ...` line (usarsim_trial.h) when it
 * changes and twice a second, and on `KENAF {Cmd Trial}`; the operator's
 * side resets the robot to the start gate (`KENAF {Cmd TrialReset}`,
 * counted as an assist) and reports e-stop engagements
 * (`KENAF {Cmd TrialEstop}`, counted as an e-stop fault). kenaf-simd
 * relays all of it as KRP/1's TRIAL (docs/protocol.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server_int.h"
#include "trial.h"
#include "usarsim_trial.h"

#define TRIAL_PERIOD_NS 500000000ull /* the state at least this often */

static uint32_t ms(double s)
{
    double v = s * 1e3;
    return !(v > 0) ? 0 : v >= 4294967295.0 ? UINT32_MAX : (uint32_t)llround(v);
}

static uint16_t u16(int v)
{
    return v < 0 ? 0 : v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* The trial's name: the trial file's "name" (as its score has it), only
 * bytes a line's group can carry. */
static void trial_name(const char *b, char *out, size_t n)
{
    size_t k = strlen(b);
    size_t i = 0;
    for (; i < k && i + 1 < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        out[i] = (char)(ch <= ' ' || ch >= 0x7F || ch == '{' || ch == '}' ? '_' : ch);
    }
    out[i] = '\0';
}

/* Slot's trial as TRIAL's fields; -1 when it runs none (yet). */
static int fill(struct kn_srv *s, int slot, struct kn_krp_trial *t)
{
    double limit, left;
    int end;
    const struct kn_trial *tr = kn_judge_trial(s->judge, slot, &limit, &left, &end);
    if (!tr)
        return -1;
    const struct kn_scenario *sc = kn_judge_scenario(s->judge);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    memset(t, 0, sizeof *t);
    trial_name(sc->name, t->name, sizeof t->name);
    t->course =
        sc->crit.trial.course == KN_TRIAL_FIGURE8 ? KN_KRP_TRIAL_FIGURE8 : KN_KRP_TRIAL_TRAVERSE;
    t->end = (uint8_t)end;
    t->flags = (uint8_t)((st.in_rep && !end ? KN_KRP_TRIAL_F_UNDER_WAY : 0) |
                         (end ? KN_KRP_TRIAL_F_ENDED : 0));
    t->reps = u16(sc->crit.trial.reps);
    t->rep = u16(st.rep);
    t->rep_elapsed_ms = ms(st.rep_elapsed);
    t->rep_faults = u16(st.rep_faults);
    t->completed = u16(st.completed);
    t->successes = u16(st.successes);
    t->faults = u16(st.faults);
    for (int k = 0; k < KN_KRP_TRIAL_FAULT_KINDS && k < KN_TRIAL_NFAULTS; k++)
        t->by_kind[k] = u16(st.by_kind[k]);
    t->limit_ms = ms(limit);
    t->left_ms = ms(left);
    return 0;
}

static void send_trial(struct kn_srv_conn *c, const struct kn_krp_trial *t)
{
    char buf[KN_SRV_LINE_MAX];
    int n = kn_usartrial_format(t, buf, sizeof buf);
    if (n <= 0) {
        kn_srv_log(c->srv, "internal: cannot format the trial line (%s)", kn_usar_strerror(-n));
        return;
    }
    kn_srv_send(c, buf, n);
    c->trial_sent = *t;
    c->trial_have = true;
    c->trial_sent_ns = uv_hrtime();
    c->srv->st.trial_lines++;
}

/* What a change is: anything but the clocks, which always move. */
static bool changed(const struct kn_krp_trial *a, const struct kn_krp_trial *b)
{
    struct kn_krp_trial x = *a, y = *b;
    x.rep_elapsed_ms = y.rep_elapsed_ms = 0;
    x.left_ms = y.left_ms = 0;
    return !kn_krp_trial_equal(&x, &y);
}

void kn_srv_trial_push(struct kn_srv *s, uint64_t now_ns)
{
    if (!s->judge)
        return;
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        struct kn_krp_trial t;
        if (c->judge_slot < 0 || c->closing || fill(s, c->judge_slot, &t))
            continue;
        bool due = now_ns && now_ns - c->trial_sent_ns >= TRIAL_PERIOD_NS;
        if (!c->trial_have || due || changed(&t, &c->trial_sent))
            send_trial(c, &t);
    }
}

bool kn_srv_trial_ended(struct kn_srv *s)
{
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        struct kn_krp_trial t;
        if (c->judge_slot >= 0 && !fill(s, c->judge_slot, &t) && t.end)
            return true;
    }
    return false;
}

void kn_srv_trial_cmd(struct kn_srv_conn *c, const char *cmd)
{
    struct kn_srv *s = c->srv;
    struct kn_krp_trial t;
    if (!s->judge || c->judge_slot < 0 || fill(s, c->judge_slot, &t)) {
        s->st.bad_value++;
        kn_srv_fail(c, cmd, "no trial is judged on this connection's robot");
        return;
    }
    char why[160] = "";
    if (strcmp(cmd, "TrialReset") == 0) {
        if (kn_judge_trial_reset(s->judge, c->judge_slot, why, sizeof why)) {
            s->st.bad_value++;
            kn_srv_fail(c, cmd, why);
            return;
        }
        s->st.trial_resets++;
        kn_srv_log(s, "client %u: robot %s reset to the start gate (an assist)", c->id, c->name);
    } else if (strcmp(cmd, "TrialEstop") == 0) {
        if (kn_judge_trial_estop(s->judge, c->judge_slot)) {
            s->st.bad_value++;
            kn_srv_fail(c, cmd, "the trial is over");
            return;
        }
        s->st.trial_estops++;
    }
    /* the answer is the trial's state as it now stands */
    fill(s, c->judge_slot, &t);
    send_trial(c, &t);
}
