/* Control law of the blocking motions. Forward: mean encoder travel with a
 * P-term matching left and right travel (so a drifting belt does not bend
 * the path). Turn: accumulated yaw steps, each unwrapped into (-180, 180],
 * so the yaw's wrap at +-180 deg never looks like a jump. Both share one
 * speed profile in belt travel units. */
#include "motion.h"

#include <math.h>
#include <string.h>

#include "convert.h"

const struct kn_profile kn_motion_default_profile = {
    .accel = 400.0,
    .vmax = 200.0,
    .vmin = 20.0,
};

/* Belt travel per degree of yaw for a skid-steer body with the Kenaf's
 * nominal 230 mm tread (each belt moves tread/2 * angle). Only scales the
 * turn profile; the loop closes on the measured yaw, so slip and a
 * different tread cost time, not accuracy. */
#define KN_TURN_BELT_MM_PER_DEG 2.007

/* Heading hold: belt speed correction per mm of left/right travel
 * difference, capped to a fraction of the speed so it cannot reverse a belt. */
#define KN_HEADING_GAIN 2.0
#define KN_HEADING_CAP 0.25

/* Progress the stall guard waits for: a count (forward) or 0.05 deg. */
#define KN_TURN_PROGRESS_DEG 0.05

double kn_motion_profile_speed(const struct kn_profile *p, double remaining, double v_prev,
                               double dt)
{
    double r = fabs(remaining);
    if (!(dt > 0.005))
        dt = 0.005;
    if (dt > 0.1)
        dt = 0.1;
    double v = fmin(p->vmax, fmin(fabs(v_prev) + p->accel * dt, sqrt(2.0 * p->accel * r)));
    if (v < p->vmin)
        v = p->vmin;
    if (v > r / dt)
        v = r / dt;
    return copysign(v, remaining);
}

int32_t kn_motion_count_delta(int32_t start, int32_t now)
{
    uint32_t d = (uint32_t)now - (uint32_t)start;
    return d <= INT32_MAX ? (int32_t)d : -(int32_t)(~d) - 1;
}

int32_t kn_motion_yaw_step_cdeg(int32_t prev, int32_t now)
{
    int64_t d = (int64_t)now - prev;
    d %= 36000;
    if (d > 18000)
        d -= 36000;
    else if (d <= -18000)
        d += 36000;
    return (int32_t)d;
}

void kn_motion_start(struct kn_motion *m, enum kn_motion_kind kind, double target,
                     double mm_per_count, const struct kn_krp_status *st)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->prof = kn_motion_default_profile;
    m->target = target;
    m->mm_per_count = mm_per_count;
    m->count0[0] = st->crawler_count[0];
    m->count0[1] = st->crawler_count[1];
    m->yaw_prev_cdeg = st->rpy_cdeg[2];
    m->t_prev = kn_conv_us_to_s(st->time_us);
    m->remaining = target;
    m->best = fabs(target);
    m->t_best = m->t_prev;
}

static bool forward_step(struct kn_motion *m, const struct kn_krp_status *st, double dt,
                         double belt[2])
{
    double dl = kn_motion_count_delta(m->count0[0], st->crawler_count[0]);
    double dr = kn_motion_count_delta(m->count0[1], st->crawler_count[1]);
    double rem_counts = m->target / m->mm_per_count - (dl + dr) / 2.0;
    m->remaining = rem_counts * m->mm_per_count;
    if (fabs(m->remaining) <= KN_MOTION_FORWARD_TOL_MM || fabs(rem_counts) <= 0.5)
        return true;
    m->v = kn_motion_profile_speed(&m->prof, m->remaining, m->v, dt);
    double corr = KN_HEADING_GAIN * (dl - dr) * m->mm_per_count;
    double cap = KN_HEADING_CAP * fabs(m->v);
    corr = fmax(-cap, fmin(cap, corr));
    belt[0] = m->v - corr;
    belt[1] = m->v + corr;
    return false;
}

static bool turn_step(struct kn_motion *m, const struct kn_krp_status *st, double dt,
                      double belt[2])
{
    m->turned_cdeg += kn_motion_yaw_step_cdeg(m->yaw_prev_cdeg, st->rpy_cdeg[2]);
    m->yaw_prev_cdeg = st->rpy_cdeg[2];
    m->remaining = m->target - kn_conv_cdeg_to_deg((int32_t)m->turned_cdeg);
    if (fabs(m->remaining) <= KN_MOTION_TURN_TOL_DEG)
        return true;
    m->v = kn_motion_profile_speed(&m->prof, m->remaining * KN_TURN_BELT_MM_PER_DEG, m->v, dt);
    belt[0] = -m->v;
    belt[1] = m->v;
    return false;
}

enum kn_motion_result kn_motion_update(struct kn_motion *m, const struct kn_krp_status *st,
                                       double belt[2])
{
    double t = kn_conv_us_to_s(st->time_us);
    double dt = t - m->t_prev;
    m->t_prev = t;
    bool done = m->kind == KN_MOTION_FORWARD ? forward_step(m, st, dt, belt)
                                             : turn_step(m, st, dt, belt);
    if (done)
        return KN_MOTION_DONE;

    double eps = m->kind == KN_MOTION_FORWARD ? fmax(0.5, m->mm_per_count) : KN_TURN_PROGRESS_DEG;
    if (fabs(m->remaining) < m->best - eps) {
        m->best = fabs(m->remaining);
        m->t_best = t;
    } else if (t < m->t_best) {
        m->t_best = t; /* robot clock restarted: measure the stall afresh */
    } else if (t - m->t_best > KN_MOTION_STALL_S) {
        return KN_MOTION_STALL;
    }
    return KN_MOTION_RUN;
}
