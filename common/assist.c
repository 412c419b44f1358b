/* The flipper assist (assist.h): phases, the pressing loop of the front
 * flippers on their measured torque and the body's pitch, and the table
 * of its parameters. */
#include "assist.h"

#include <math.h>
#include <stdio.h>

#define DEG (M_PI / 180.0)
/* "steady": within a degree. A nose still climbing or tipping moves more
 * than that in a second; a robot driving on a flat top, less. */
#define KN_ASSIST_STEADY_RAD (1.0 * DEG)

/* The parameters, once: the table below and the field each names are
 * both made from this list, so they cannot fall out of step. */
#define KN_ASSIST_PARAMS(X)                                                                      \
    X(approach_deg, "deg", 75, -119.5, 119.5,                                                    \
      "front flippers while approaching: their tips reach over a 300 mm top")                    \
    X(rear_approach_deg, "deg", 0, -119.5, 119.5, "rear flippers while approaching")             \
    X(contact_pitch_deg, "deg", 6, 0.5, 60, "nose-up pitch taken as front contact")              \
    X(contact_torque_nm, "N*m", 5, 0.1, 1000,                                                    \
      "front flipper torque (pressed down) taken as contact")                                    \
    X(press_torque_nm, "N*m", 5, 0.1, 1000, "the torque the front flippers keep pressing with")  \
    X(hold_belt_m_s, "m/s", 0.1, 0, 10,                                                          \
      "belt limit after the contact until the front flippers press (an operator's pause)")       \
    X(hold_world_deg, "deg", 0, -90, 90,                                                         \
      "the hold ends once the front flippers point at most this much up in the world")           \
    X(press_gain, "deg/(N*m*s)", 20, 0, 1000,                                                    \
      "set-point change per N*m of torque error and second")                                     \
    X(press_lead_deg, "deg", 60, 0, 90, "the set-point stays this close to the measured angle")  \
    X(press_floor_deg, "deg", -60, -180, 90,                                                     \
      "lowest world angle of the front flippers (0 level, + tips up)")                           \
    X(max_pitch_deg, "deg", 45, 1, 89, "above this nose-up pitch the front flippers ease off")   \
    X(rear_pitch_deg, "deg", 15, 0, 89, "nose-up pitch at which the rear flippers go down")      \
    X(rear_dist_m, "m", 0.35, 0, 100, "or the distance driven since the front contact")          \
    X(rear_world_deg, "deg", -85, -180, 90,                                                      \
      "the rear flippers' push, in the world (0 level behind, - tips down)")                     \
    X(rear_tol_deg, "deg", 10, 0.5, 90, "the push counts as done this close to rear_world_deg")  \
    X(level_pitch_deg, "deg", -5, -60, 89,                                                       \
      "after the rear push, nose-up pitch below this: tipped onto the top")                      \
    X(level_drop_deg, "deg", 8, 0.5, 90,                                                         \
      "or the nose come down this much from its peak: the CoG is over the edge")                 \
    X(level_settle_s, "s", 1, 0.1, 60,                                                           \
      "or, the push done, the nose steady this long below rear_pitch_deg: on top already")       \
    X(level_deg, "deg", 0, -119.5, 119.5, "all four flippers once on top")                       \
    X(climb_belt_m_s, "m/s", 0.3, 0, 2,                                                          \
      "belts from the rear push until level, whatever the operator's speed (0: the operator's)") \
    X(abort_pitch_deg, "deg", 57, 10, 89,                                                        \
      "nose-up pitch before the level at which it gives up: the step is too high")               \
    X(abort_belt_m_s, "m/s", 0.2, 0.01, 1, "giving up, it backs down at this speed")

#define DESC(field, unit, def, lo, hi, text) { #field, unit, def, lo, hi, text },
#define FIELD(field, unit, def, lo, hi, text) &p->field,

/* The defaults pass the acceptance grid (tests/engine/test_assist_grid.c,
 * docs/engine.md): the same boundary, 280 mm, in three world frames, at
 * belts of 0.15, 0.3 and 0.5 m/s and with every angle 5 deg off. */
const struct kn_assist_param_desc kn_assist_param_table[] = { KN_ASSIST_PARAMS(DESC) };
const int kn_assist_param_count =
    (int)(sizeof kn_assist_param_table / sizeof kn_assist_param_table[0]);

double *kn_assist_param(struct kn_assist_params *p, int i)
{
    double *const f[] = { KN_ASSIST_PARAMS(FIELD) };
    return i >= 0 && i < kn_assist_param_count ? f[i] : NULL;
}

void kn_assist_defaults(struct kn_assist_params *p)
{
    for (int i = 0; i < kn_assist_param_count; i++)
        *kn_assist_param(p, i) = kn_assist_param_table[i].def;
}

int kn_assist_check(const struct kn_assist_params *p, char *err, size_t errlen)
{
    for (int i = 0; i < kn_assist_param_count; i++) {
        const struct kn_assist_param_desc *d = &kn_assist_param_table[i];
        struct kn_assist_params c = *p;
        double v = *kn_assist_param(&c, i);
        if (!isfinite(v) || v < d->lo || v > d->hi) {
            snprintf(err, errlen, "assist: %s must be in [%g, %g] %s", d->name, d->lo, d->hi,
                     d->unit);
            return -1;
        }
    }
    return 0;
}

void kn_assist_init(struct kn_assist *a, const struct kn_assist_params *p)
{
    a->p = *p;
    a->phase = KN_ASSIST_APPROACH;
    a->front_sp = p->approach_deg * DEG;
    a->contact_dist = NAN;
    a->peak_nose = 0;
    a->holding = 0;
    a->rear_was_done = 0;
    a->steady_nose = 0;
    a->steady_s = 0;
}

const char *kn_assist_phase_name(enum kn_assist_phase ph)
{
    switch (ph) {
    case KN_ASSIST_APPROACH: return "approach";
    case KN_ASSIST_PRESS: return "press";
    case KN_ASSIST_LIFT: return "lift";
    case KN_ASSIST_LEVEL: return "level";
    case KN_ASSIST_BACK: return "back down";
    case KN_ASSIST_GAVE_UP: return "gave up";
    }
    return "?";
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The front set-point while pressing: it moves down while the measured
 * torque is below the target and up while above, so the tips stay on the
 * top as the nose rises instead of holding an angle to the body; it eases
 * off above max_pitch, never points the tips below press_floor in the
 * world, and stays within press_lead of where the flippers are (no
 * wind-up while they are blocked). */
static void press(struct kn_assist *a, const struct kn_assist_input *in, double nose)
{
    const struct kn_assist_params *p = &a->p;
    double f = 0.5 * (in->flip_rad[KN_ASSIST_FL] + in->flip_rad[KN_ASSIST_FR]);
    /* pressing down is a negative servo torque */
    double tq =
        in->has_torque ? -0.5 * (in->torque_nm[KN_ASSIST_FL] + in->torque_nm[KN_ASSIST_FR]) : 0;
    double e = p->press_torque_nm - tq;
    if (nose > p->max_pitch_deg * DEG)
        e = -p->press_torque_nm;
    a->front_sp -= p->press_gain * DEG * e * in->dt_s;
    a->front_sp = clampd(a->front_sp, f - p->press_lead_deg * DEG, f + p->press_lead_deg * DEG);
    /* a flipper's world angle is its angle plus the nose-up pitch */
    if (a->front_sp + nose < p->press_floor_deg * DEG)
        a->front_sp = p->press_floor_deg * DEG - nose;
    a->front_sp = clampd(a->front_sp, -119.5 * DEG, p->approach_deg * DEG);
}

/* The rear flippers' set-point for their world angle: nose up lowers the
 * rear end, so a rear flipper points its angle minus the nose-up pitch in
 * the world. Held in the world, near straight down, the push lifts the
 * rear by nearly the whole reach whatever the pitch, and a few degrees
 * either way change that height by a millimetre or two; an angle to the
 * body lifts it by what the pitch of the moment leaves (docs/engine.md). */
static double rear_for_world(const struct kn_assist *a, double nose)
{
    return clampd(a->p.rear_world_deg * DEG + nose, -119.5 * DEG, 119.5 * DEG);
}

/* Both rear flippers down at their push: a dip of the nose before that is
 * the climb rocking, not the CoG passing the edge. */
static int rear_done(const struct kn_assist *a, const struct kn_assist_input *in)
{
    double tol = a->p.rear_tol_deg * DEG, want = rear_for_world(a, -in->pitch_rad);
    return fabs(in->flip_rad[KN_ASSIST_RL] - want) <= tol &&
           fabs(in->flip_rad[KN_ASSIST_RR] - want) <= tol;
}

/* How long the nose has held still since the rear push was done. On a
 * low step the robot is on the top before the nose comes down from any
 * peak, and the rear flippers, still pushing, hook behind the edge and
 * hold it there: a nose that stays put, low, says it is over. */
static void settle(struct kn_assist *a, const struct kn_assist_input *in, double nose)
{
    if (!a->rear_was_done || fabs(nose - a->steady_nose) > KN_ASSIST_STEADY_RAD) {
        a->steady_nose = nose;
        a->steady_s = 0;
    } else {
        a->steady_s += in->dt_s;
    }
}

void kn_assist_update(struct kn_assist *a, const struct kn_assist_input *in,
                      struct kn_assist_output *out)
{
    const struct kn_assist_params *p = &a->p;
    double nose = -in->pitch_rad;
    enum kn_assist_phase was = a->phase;
    if (a->phase == KN_ASSIST_APPROACH) {
        double tq =
            in->has_torque ? fmax(-in->torque_nm[KN_ASSIST_FL], -in->torque_nm[KN_ASSIST_FR]) : 0;
        if (nose >= p->contact_pitch_deg * DEG || tq >= p->contact_torque_nm) {
            a->phase = KN_ASSIST_PRESS;
            a->front_sp = 0.5 * (in->flip_rad[KN_ASSIST_FL] + in->flip_rad[KN_ASSIST_FR]);
            a->contact_dist = in->travelled_m;
            a->peak_nose = nose;
            a->holding = 1;
        }
    }
    if (a->phase == KN_ASSIST_PRESS || a->phase == KN_ASSIST_LIFT) {
        /* the peak counts from the end of the rear push: the push itself
         * rocks the nose down while the tracks still sit on the edge */
        if (nose > a->peak_nose || (a->phase == KN_ASSIST_LIFT && !a->rear_was_done))
            a->peak_nose = nose;
        if (a->phase == KN_ASSIST_LIFT && rear_done(a, in))
            a->rear_was_done = 1;
        settle(a, in, nose);
        press(a, in, nose);
    }
    if (a->holding) {
        /* down on the top: a flipper's world angle is its angle plus the
         * nose-up pitch */
        double fw = nose + 0.5 * (in->flip_rad[KN_ASSIST_FL] + in->flip_rad[KN_ASSIST_FR]);
        if (fw <= p->hold_world_deg * DEG || a->phase != KN_ASSIST_PRESS)
            a->holding = 0;
    }
    if (a->phase == KN_ASSIST_PRESS) {
        int far = isfinite(in->travelled_m) && isfinite(a->contact_dist) &&
                  in->travelled_m - a->contact_dist >= p->rear_dist_m;
        if (nose >= p->rear_pitch_deg * DEG || far)
            a->phase = KN_ASSIST_LIFT;
    } else if (a->phase == KN_ASSIST_LIFT && a->phase == was && a->rear_was_done &&
               (nose <= p->level_pitch_deg * DEG ||
                (a->steady_s >= p->level_settle_s && nose < p->rear_pitch_deg * DEG) ||
                nose <= a->peak_nose - p->level_drop_deg * DEG)) {
        a->phase = KN_ASSIST_LEVEL;
    }
    /* Past the traction of the belts on the edge (about 45 deg for a
     * friction of 1) the robot slides back and then over onto its back:
     * give up while it can still back down. */
    if ((a->phase == KN_ASSIST_PRESS || a->phase == KN_ASSIST_LIFT) &&
        nose >= p->abort_pitch_deg * DEG) {
        a->phase = KN_ASSIST_BACK;
        a->holding = 0;
    } else if (a->phase == KN_ASSIST_BACK && a->phase == was &&
               nose <= p->contact_pitch_deg * DEG) {
        a->phase = KN_ASSIST_GAVE_UP;
    }
    double front = p->approach_deg * DEG, rear = p->rear_approach_deg * DEG;
    if (a->phase == KN_ASSIST_PRESS || a->phase == KN_ASSIST_LIFT)
        front = a->front_sp;
    if (a->phase == KN_ASSIST_LIFT)
        rear = rear_for_world(a, nose);
    if (a->phase == KN_ASSIST_LEVEL)
        front = rear = p->level_deg * DEG;
    /* backing down: the front off the face, the rear in line behind as a
     * tail the robot can rest on, not under it as a pivot */
    if (a->phase == KN_ASSIST_BACK || a->phase == KN_ASSIST_GAVE_UP)
        rear = 0;
    out->flip_rad[KN_ASSIST_FL] = out->flip_rad[KN_ASSIST_FR] = front;
    out->flip_rad[KN_ASSIST_RL] = out->flip_rad[KN_ASSIST_RR] = rear;
    out->belt_limit_m_s = a->holding ? p->hold_belt_m_s : INFINITY;
    out->belt_m_s = NAN;
    /* The edge is crossed on the robot's momentum (docs/engine.md, "The
     * flipper assist"): the same speed whatever the operator's. */
    if (a->phase == KN_ASSIST_LIFT && !a->holding && p->climb_belt_m_s > 0)
        out->belt_m_s = p->climb_belt_m_s;
    if (a->phase == KN_ASSIST_BACK)
        out->belt_m_s = -p->abort_belt_m_s;
    if (a->phase == KN_ASSIST_GAVE_UP)
        out->belt_limit_m_s = 0;
    out->phase_changed = a->phase != was;
}
