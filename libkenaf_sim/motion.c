/* Control law of the blocking motions. Forward: mean encoder travel with a
 * P-term matching left and right travel (so a drifting belt does not bend
 * the path). Turn: accumulated yaw steps, each unwrapped into (-180, 180],
 * so the yaw's wrap at +-180 deg never looks like a jump. Both share one
 * speed profile in belt travel units, planned over the interval at which
 * the simulator really updates the measurement (which may be ten times
 * the STATUS period), so they settle at slow sensor rates too. */
#include "motion.h"

#include <math.h>
#include <stdbool.h>
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

double kn_motion_profile_speed_sampled(const struct kn_profile *p, double remaining, double v_prev,
                                       double dt, double interval)
{
    double r = fabs(remaining);
    if (!(dt > 0.005))
        dt = 0.005;
    if (dt > 0.1)
        dt = 0.1;
    if (!(interval > dt))
        interval = dt;
    if (interval > KN_MOTION_MAX_INTERVAL_S)
        interval = KN_MOTION_MAX_INTERVAL_S;
    /* braking with a reaction time: the robot runs blind for lag s more
     * than a status period before it sees where it is */
    double lag = interval - dt;
    double brake = lag > 0
                       ? sqrt(p->accel * lag * p->accel * lag + 2.0 * p->accel * r) - p->accel * lag
                       : sqrt(2.0 * p->accel * r);
    double v = fmin(p->vmax, fmin(fabs(v_prev) + p->accel * dt, brake));
    if (v < p->vmin)
        v = p->vmin;
    /* near the target: cover at most the remaining distance in a status
     * period plus twice the blind lag, so a measurement that shows up late
     * still finds the robot short of the target, and slowing down from the
     * previous (faster) speed has room */
    if (v > r / (dt + 2.0 * lag))
        v = r / (dt + 2.0 * lag);
    return copysign(v, remaining);
}

double kn_motion_profile_speed(const struct kn_profile *p, double remaining, double v_prev,
                               double dt)
{
    return kn_motion_profile_speed_sampled(p, remaining, v_prev, dt, dt);
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
    m->t_meas = m->t_prev;
    /* one step of the measurement in belt travel: a count on one belt
     * moves the mean by half a count; a yaw step is 0.01 deg */
    m->quantum = kind == KN_MOTION_FORWARD ? mm_per_count / 2.0 : 0.01 * KN_TURN_BELT_MM_PER_DEG;
}

/* Notes whether the measurement changed with this STATUS and returns the
 * interval to plan with: how long the robot runs on before it next sees
 * where it is. A simulator may refresh a sensor far less often than STATUS
 * arrives (USARSim's encoders every 0.2 s): the STATUS in between repeat
 * the old value, and a loop that took each for news would overshoot and
 * hunt around the target. Only intervals over which the last command
 * should have moved the measurement by two steps or more count, so a slow
 * belt waiting for its next count on a coarse encoder is not taken for a
 * slow sensor. */
static double sensor_interval(struct kn_motion *m, int64_t meas, double t)
{
    if (t < m->t_meas)
        m->t_meas = t; /* robot clock restarted */
    double age = t - m->t_meas;
    bool should_move = fabs(m->v) * age >= 2.0 * m->quantum;
    if (meas != m->meas) {
        /* from one change to the next: the start of the motion is no
         * measurement (the last one may be older than the STATUS says) */
        if (m->changes > 0 && should_move && age > 0 && age <= KN_MOTION_MAX_INTERVAL_S)
            m->interval = m->interval == 0 || age > m->interval ? age : 0.5 * (m->interval + age);
        m->changes++;
        m->meas = meas;
        m->t_meas = t;
        age = 0;
        should_move = false;
    }
    double plan = m->interval > 0 ? m->interval : KN_MOTION_FIRST_INTERVAL_S;
    /* nothing new for longer than usual although the robot moves: the
     * next measurement may be as far off again */
    return should_move && age > plan ? fmin(age, KN_MOTION_MAX_INTERVAL_S) : plan;
}

static bool forward_step(struct kn_motion *m, const struct kn_krp_status *st, double dt,
                         double belt[2])
{
    double dl = kn_motion_count_delta(m->count0[0], st->crawler_count[0]);
    double dr = kn_motion_count_delta(m->count0[1], st->crawler_count[1]);
    double rem_counts = m->target / m->mm_per_count - (dl + dr) / 2.0;
    m->remaining = rem_counts * m->mm_per_count;
    double interval = sensor_interval(m, (int64_t)dl + (int64_t)dr, kn_conv_us_to_s(st->time_us));
    if (fabs(m->remaining) <= KN_MOTION_FORWARD_TOL_MM || fabs(rem_counts) <= 0.5)
        return true;
    m->v = kn_motion_profile_speed_sampled(&m->prof, m->remaining, m->v, dt, interval);
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
    double interval = sensor_interval(m, m->turned_cdeg, kn_conv_us_to_s(st->time_us));
    if (fabs(m->remaining) <= KN_MOTION_TURN_TOL_DEG)
        return true;
    m->v = kn_motion_profile_speed_sampled(&m->prof, m->remaining * KN_TURN_BELT_MM_PER_DEG, m->v,
                                           dt, interval);
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
    /* STATUS carries the time of the simulator's last time-stamped line:
     * with lines at 10 Hz and STATUS at 50 Hz, dt reads 0, 0, 0, 0, 0.1.
     * The loop plans with the mean period instead, so a jump of the clock
     * does not make one STATUS think it has a whole 0.1 s to go. */
    if (dt >= 0 && dt <= 1.0)
        m->period = m->period > 0 ? 0.75 * m->period + 0.25 * dt : dt;
    dt = m->period;
    bool done =
        m->kind == KN_MOTION_FORWARD ? forward_step(m, st, dt, belt) : turn_step(m, st, dt, belt);
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
