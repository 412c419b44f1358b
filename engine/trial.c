/* A trial's state machine (trial.h): repetitions, their times and
 * faults, and the score. docs/apparatus.md#trials says what counts. */
#include "trial.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binom.h"

/* The confidence of the score's lower bound: the test methods state a
 * reliability "at 80 % confidence". */
#define TRIAL_CONF 0.8

struct kn_trial {
    struct kn_trial_def d;
    int have_prev;
    double pt, px, py; /* the previous sample */
    int prev_wall, prev_out;
    int wall_rep, out_rep; /* the repetition the running episode was charged to */
    int done, tipped, ended;
    int in_rep;
    double t_start, t_last;
    int rep_faults;
    int rounded[2]; /* figure 8: went round the left [0] and right [1] barrier */
    int completed, successes, faults;
    int by_kind[KN_TRIAL_NFAULTS];
    double times[KN_TRIAL_MAX_REPS];
    int rep_fault[KN_TRIAL_MAX_REPS];
};

struct kn_trial *kn_trial_new(const struct kn_trial_def *d)
{
    struct kn_trial *tr = calloc(1, sizeof *tr);
    if (!tr)
        return NULL;
    tr->d = *d;
    if (tr->d.reps > KN_TRIAL_MAX_REPS)
        tr->d.reps = KN_TRIAL_MAX_REPS;
    tr->wall_rep = tr->out_rep = -1;
    return tr;
}

void kn_trial_free(struct kn_trial *tr)
{
    free(tr);
}

/* A fault, charged to the repetition under way or, between two, to the
 * next: the robot is on its way to it. */
static void charge(struct kn_trial *tr, enum kn_trial_fault k)
{
    tr->by_kind[k]++;
    tr->faults++;
    tr->rep_faults++;
}

/* Time at which x passed line between the previous sample and this. */
static double cross_t(const struct kn_trial *tr, double t, double x, double line)
{
    double f = x != tr->px ? (line - tr->px) / (x - tr->px) : 1;
    return tr->pt + f * (t - tr->pt);
}

static int finish_rep(struct kn_trial *tr, double t_end)
{
    int i = tr->completed++;
    tr->times[i] = t_end - tr->t_start;
    tr->rep_fault[i] = tr->rep_faults;
    tr->successes += tr->rep_faults == 0;
    tr->rep_faults = 0;
    tr->in_rep = 0;
    if (tr->completed >= tr->d.reps) {
        tr->done = 1;
        return 1;
    }
    return 0;
}

/* Traverse: repetition k runs +x from gate a to gate b when k is even,
 * -x from b to a when odd; it starts when the origin crosses its start
 * line moving that way and ends when it crosses the other. Backing out
 * over the start line puts it back to not started (its faults stay). */
static int traverse(struct kn_trial *tr, double t, double x)
{
    int dir = tr->completed % 2 == 0 ? 1 : -1;
    double from = dir > 0 ? tr->d.gate_a : tr->d.gate_b, to = dir > 0 ? tr->d.gate_b : tr->d.gate_a;
    int fwd_from = dir > 0 ? tr->px < from && x >= from : tr->px > from && x <= from;
    int back_from = dir > 0 ? tr->px >= from && x < from : tr->px <= from && x > from;
    int fwd_to = dir > 0 ? tr->px < to && x >= to : tr->px > to && x <= to;
    if (!tr->in_rep) {
        if (fwd_from) {
            tr->in_rep = 1;
            tr->t_start = cross_t(tr, t, x, from);
        }
        return 0;
    }
    if (fwd_to)
        return finish_rep(tr, cross_t(tr, t, x, to));
    if (back_from)
        tr->in_rep = 0;
    return 0;
}

/* Figure 8: a pass is the origin crossing the line x = gate_a through
 * the crossing point. A lap starts at a pass and ends at the first pass
 * after the robot went round both barriers (crossed y = 0 beyond the
 * barrier's centre, behind it); the next lap starts there. A U-turn
 * short of a barrier's far side rounds nothing. */
static int figure8(struct kn_trial *tr, double t, double x, double y)
{
    double c = tr->d.gate_a, dx = tr->d.barrier_dx;
    if ((y >= 0) != (tr->py >= 0)) {
        if (x < c - dx && tr->px < c - dx)
            tr->rounded[0] = 1;
        if (x > c + dx && tr->px > c + dx)
            tr->rounded[1] = 1;
    }
    if ((x >= c) == (tr->px >= c))
        return 0;
    double tc = cross_t(tr, t, x, c);
    if (tr->in_rep && tr->rounded[0] && tr->rounded[1] && finish_rep(tr, tc))
        return 1;
    if (!tr->in_rep) {
        tr->in_rep = 1;
        tr->t_start = tc;
        tr->rounded[0] = tr->rounded[1] = 0;
    }
    return 0;
}

/* An episode (a wall touched, the lane left) is one fault per
 * repetition it falls in: a new one, or one still going on when the
 * next repetition is charged. */
static void episode(struct kn_trial *tr, int now, int *prev, int *rep, enum kn_trial_fault k)
{
    if (now && (!*prev || *rep != tr->completed)) {
        charge(tr, k);
        *rep = tr->completed;
    }
    *prev = now;
}

int kn_trial_sample(struct kn_trial *tr, double t, double x, double y, double roll, double pitch,
                    int wall)
{
    if (tr->done || tr->ended)
        return 0;
    tr->t_last = t;
    if (fmax(fabs(roll), fabs(pitch)) > tr->d.tip_rad) {
        charge(tr, KN_TRIAL_TIP_OVER);
        tr->tipped = tr->done = 1;
        return 1;
    }
    episode(tr, wall != 0, &tr->prev_wall, &tr->wall_rep, KN_TRIAL_WALL);
    int out = tr->d.lane_checked &&
              (fabs(y) > tr->d.lane_half ||
               (tr->d.course == KN_TRIAL_FIGURE8 && fabs(x - tr->d.gate_a) > tr->d.lane_dx));
    episode(tr, out, &tr->prev_out, &tr->out_rep, KN_TRIAL_LANE);
    int r = 0;
    if (tr->have_prev)
        r = tr->d.course == KN_TRIAL_TRAVERSE ? traverse(tr, t, x) : figure8(tr, t, x, y);
    tr->have_prev = 1;
    tr->pt = t;
    tr->px = x;
    tr->py = y;
    return r;
}

void kn_trial_fault(struct kn_trial *tr, enum kn_trial_fault kind, double t)
{
    if (tr->done || tr->ended || (unsigned)kind >= KN_TRIAL_NFAULTS)
        return;
    tr->t_last = t;
    charge(tr, kind);
}

void kn_trial_restart(struct kn_trial *tr)
{
    if (tr->done || tr->ended)
        return;
    tr->in_rep = 0;
    tr->have_prev = 0;
    tr->rounded[0] = tr->rounded[1] = 0;
    /* a wall or lane episode ends with the move: touching again is new */
    tr->prev_wall = tr->prev_out = 0;
}

void kn_trial_end(struct kn_trial *tr, double t)
{
    if (tr->done || tr->ended)
        return;
    tr->ended = 1;
    if (t > tr->t_last)
        tr->t_last = t;
}

void kn_trial_status(const struct kn_trial *tr, struct kn_trial_status *st)
{
    memset(st, 0, sizeof *st);
    st->done = tr->done || tr->ended;
    st->rep = tr->completed;
    st->in_rep = tr->in_rep;
    st->rep_elapsed = tr->in_rep ? tr->t_last - tr->t_start : 0;
    st->rep_faults = tr->rep_faults;
    st->completed = tr->completed;
    st->successes = tr->successes;
    st->faults = tr->faults;
    memcpy(st->by_kind, tr->by_kind, sizeof st->by_kind);
}

int kn_trial_rep(const struct kn_trial *tr, int i, double *time_s, int *faults)
{
    if (i < 0 || i >= tr->completed)
        return -1;
    *time_s = tr->times[i];
    *faults = tr->rep_fault[i];
    return 0;
}

int kn_trial_passed(const struct kn_trial *tr)
{
    return tr->successes >= tr->d.min_successes;
}

int kn_trial_tipped(const struct kn_trial *tr)
{
    return tr->tipped;
}

const char *kn_trial_fault_name(enum kn_trial_fault k)
{
    static const char *const names[KN_TRIAL_NFAULTS] = { "tip-over", "wall", "lane", "estop",
                                                         "assist" };
    return (unsigned)k < KN_TRIAL_NFAULTS ? names[k] : "?";
}

/* printf to buf at *len, as far as n allows; *len counts what was
 * asked for, as snprintf does. */
__attribute__((format(printf, 4, 5))) static void add(char *buf, size_t n, size_t *len,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + (*len < n ? *len : n), *len < n ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len += (size_t)w;
}

/* The fault kinds as people read them, one and many. */
static const char *const fault_words[KN_TRIAL_NFAULTS][2] = {
    { "tip-over", "tip-overs" },
    { "wall touch", "wall touches" },
    { "lane exit", "lane exits" },
    { "e-stop", "e-stops" },
    { "reset or assist", "resets or assists" },
};

void kn_trial_why(const struct kn_trial *tr, char *why, size_t n)
{
    size_t len = 0;
    if (n == 0)
        return;
    why[0] = '\0';
    add(why, n, &len, "%d of %d repetitions without a fault (needs %d)", tr->successes, tr->d.reps,
        tr->d.min_successes);
    if (tr->completed < tr->d.reps)
        add(why, n, &len, ", %d completed", tr->completed);
    for (int k = 0; k < KN_TRIAL_NFAULTS; k++)
        if (tr->by_kind[k])
            add(why, n, &len, ", %d %s", tr->by_kind[k], fault_words[k][tr->by_kind[k] != 1]);
    if (tr->tipped)
        add(why, n, &len, ", ended by the tip-over at t=%.2f s", tr->t_last);
    else if (tr->in_rep)
        add(why, n, &len, ", repetition %d unfinished at t=%.2f s", tr->completed + 1, tr->t_last);
    add(why, n, &len, "; success rate at 80 %% confidence >= %.3f",
        kn_binom_lower((unsigned)tr->successes, (unsigned)tr->d.reps, TRIAL_CONF));
    if (len >= n)
        why[n - 1] = '\0';
}

int kn_trial_keys(const struct kn_trial *tr, char *buf, size_t n)
{
    size_t len = 0;
    if (n > 0)
        buf[0] = '\0';
    double lo, hi;
    kn_binom_wilson((unsigned)tr->successes, (unsigned)tr->d.reps, KN_BINOM_Z95, &lo, &hi);
    add(buf, n, &len, "trial_course=%s\ntrial_repetitions=%d\ntrial_min_successes=%d\n",
        tr->d.course == KN_TRIAL_TRAVERSE ? "traverse" : "figure8", tr->d.reps,
        tr->d.min_successes);
    add(buf, n, &len, "trial_reps=%d\ntrial_successes=%d\ntrial_faults=%d\n", tr->completed,
        tr->successes, tr->faults);
    for (int k = 0; k < KN_TRIAL_NFAULTS; k++) {
        const char *name = kn_trial_fault_name((enum kn_trial_fault)k);
        add(buf, n, &len, "trial_faults_%s=%d\n", strcmp(name, "tip-over") == 0 ? "tip_over" : name,
            tr->by_kind[k]);
    }
    add(buf, n, &len, "trial_rep_times=");
    for (int i = 0; i < tr->completed; i++)
        add(buf, n, &len, "%s%.3f", i ? "," : "", tr->times[i]);
    add(buf, n, &len, "\ntrial_rep_faults=");
    for (int i = 0; i < tr->completed; i++)
        add(buf, n, &len, "%s%d", i ? "," : "", tr->rep_fault[i]);
    add(buf, n, &len, "\ntrial_unfinished=%d\ntrial_unfinished_s=%.3f\n", tr->in_rep && !tr->tipped,
        tr->in_rep && !tr->tipped ? tr->t_last - tr->t_start : 0.0);
    add(buf, n, &len, "trial_ended=%s\n", tr->tipped ? "tip-over" : tr->done ? "all" : "end");
    add(buf, n, &len, "trial_lower_bound_80=%.4f\ntrial_wilson95_lo=%.4f\ntrial_wilson95_hi=%.4f\n",
        kn_binom_lower((unsigned)tr->successes, (unsigned)tr->d.reps, TRIAL_CONF), lo, hi);
    return (int)len;
}
