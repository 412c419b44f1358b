/* Pass criteria of the validation suite (docs/engine.md: Kurose et al.'s
 * step and trench table, Pecka et al.'s scenarios, the sanity checks): each
 * sees the 100 Hz samples of a run, may decide early (an obstacle crossed,
 * a tip-over) and otherwise decides at the end. Every decision explains
 * itself with the numbers it used. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

#define DEG (180.0 / M_PI)

struct kn_crit_state {
    const struct kn_scenario *sc;
    const struct kn_criterion *c;
    enum kn_verdict_mode mode; /* of the decision made */
    struct kn_sample first, last;
    int n;
    /* cross: progress watch */
    double best_x, best_x_t;
    /* circle fit sums over samples after after_s (Kasa fit) */
    double sx, sy, sxx, syy, sxy, sxxx, syyy, sxyy, sxxy;
    int nfit;
    double *px, *py, *pyaw; /* kept for RMS and loop closure */
    int cap;
    /* ramp */
    double path, drive_dist, slip_ref[3];
    int have_slip_ref;
    double max_slip;
    /* hold / settle */
    struct kn_sample ref;
    int have_ref;
    double max_creep, max_dpitch;
    double worst_v, worst_depth;
    /* trial */
    struct kn_trial *trial;
};

struct kn_crit_state *kn_crit_begin(const struct kn_scenario *sc)
{
    struct kn_crit_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->sc = sc;
    cs->c = &sc->crit;
    if (sc->crit.type == KN_CRIT_TRIAL && !(cs->trial = kn_trial_new(&sc->crit.trial))) {
        free(cs);
        return NULL;
    }
    if (sc->crit.type == KN_CRIT_CIRCLE) {
        cs->cap = (int)(sc->duration * 100) + 8;
        cs->px = malloc((size_t)cs->cap * sizeof *cs->px);
        cs->py = malloc((size_t)cs->cap * sizeof *cs->py);
        cs->pyaw = malloc((size_t)cs->cap * sizeof *cs->pyaw);
        if (!cs->px || !cs->py || !cs->pyaw) {
            kn_crit_free(cs);
            return NULL;
        }
    }
    return cs;
}

void kn_crit_free(struct kn_crit_state *cs)
{
    if (!cs)
        return;
    free(cs->px);
    free(cs->py);
    free(cs->pyaw);
    kn_trial_free(cs->trial);
    free(cs);
}

const struct kn_trial *kn_crit_trial(const struct kn_crit_state *cs)
{
    return cs->trial;
}

struct kn_trial *kn_crit_trial_rw(struct kn_crit_state *cs)
{
    return cs->trial;
}

/* A trial's decision: its score, and what decided a failure (a tip-over,
 * the time limit with repetitions left, or too many faults). */
static void trial_decide(struct kn_crit_state *cs, int *passed, char *why, size_t whylen)
{
    struct kn_trial_status st;
    kn_trial_status(cs->trial, &st);
    *passed = kn_trial_passed(cs->trial);
    kn_trial_why(cs->trial, why, whylen);
    if (*passed)
        cs->mode = KN_MODE_NONE;
    else if (kn_trial_tipped(cs->trial))
        cs->mode = KN_MODE_TIP_OVER;
    else if (st.completed < cs->c->trial.reps)
        cs->mode = KN_MODE_TIME_OUT;
    else
        cs->mode = KN_MODE_CRITERION;
}

static double dist2d(const double a[3], const double b[3])
{
    return hypot(a[0] - b[0], a[1] - b[1]);
}

static double dist3d(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

/* The sample in the terrain's own frame: the criteria refer to the
 * obstacle (its edge, its far side) and must not depend on where the
 * terrain is placed or how it is turned. */
static void to_terrain_frame(const struct kn_terrain *t, const struct kn_sample *s,
                             struct kn_sample *o)
{
    *o = *s;
    kn_terrain_to_local(t, s->origin, o->origin);
    kn_terrain_to_local(t, s->cog, o->cog);
    double c = cos(t->pose[2]), sn = sin(t->pose[2]);
    o->vel[0] = c * s->vel[0] + sn * s->vel[1];
    o->vel[1] = -sn * s->vel[0] + c * s->vel[1];
    o->rpy[2] = kn_terrain_yaw_local(t, s->rpy[2]);
    o->yaw_unwrapped = kn_terrain_yaw_local(t, s->yaw_unwrapped);
}

int kn_crit_sample(struct kn_crit_state *cs, const struct kn_sample *sw, int *passed, char *why,
                   size_t whylen)
{
    const struct kn_criterion *c = cs->c;
    struct kn_sample local;
    to_terrain_frame(&cs->sc->terrain, sw, &local);
    const struct kn_sample *s = &local;
    if (cs->n == 0) {
        cs->first = *s;
        cs->best_x = c->dir * s->cog[0];
        cs->best_x_t = s->t;
    }
    cs->n++;
    if (cs->n > 1) {
        cs->path += dist3d(s->origin, cs->last.origin);
    }
    cs->last = *s;
    double tilt = fmax(fabs(s->rpy[0]), fabs(s->rpy[1]));

    switch (c->type) {
    case KN_CRIT_CROSS:
        if (tilt > c->max_tilt) {
            *passed = 0;
            snprintf(why, whylen, "tipped over at t=%.2f s (roll %.0f, pitch %.0f deg)", s->t,
                     s->rpy[0] * DEG, s->rpy[1] * DEG);
            cs->mode = KN_MODE_TIP_OVER;
            return 1;
        }
        if (s->cog[2] < c->fall_z) {
            *passed = 0;
            snprintf(why, whylen, "fell in at t=%.2f s (CoG z %.3f m, x %.3f m)", s->t, s->cog[2],
                     s->cog[0]);
            cs->mode = KN_MODE_CRITERION;
            return 1;
        }
        /* progress along the crossing direction (-x when descending) */
        if (c->dir * s->cog[0] > cs->best_x + 0.01) {
            cs->best_x = c->dir * s->cog[0];
            cs->best_x_t = s->t;
        }
        if (s->t - cs->best_x_t > c->stall_s) {
            *passed = 0;
            snprintf(why, whylen, "no progress for %.0f s (CoG x stuck at %.3f m, needs %.3f)",
                     c->stall_s, c->dir * cs->best_x, c->pass_x);
            cs->mode = KN_MODE_STALL;
            return 1;
        }
        if (c->dir * s->cog[0] >= c->dir * c->pass_x && s->contacts > 0 &&
            (!c->on_top || s->zmin >= c->level_z - 0.01)) {
            *passed = 1;
            snprintf(why, whylen, "CoG x %.3f %s %.3f m at t=%.2f s%s", s->cog[0],
                     c->dir > 0 ? ">=" : "<=", c->pass_x, s->t,
                     c->on_top ? ", all contacts on the upper level" : "");
            cs->mode = KN_MODE_NONE;
            return 1;
        }
        return 0;
    case KN_CRIT_CIRCLE:
        if (s->t >= c->after_s && cs->nfit < cs->cap) {
            double x = s->origin[0], y = s->origin[1];
            cs->px[cs->nfit] = x;
            cs->py[cs->nfit] = y;
            cs->pyaw[cs->nfit] = s->yaw_unwrapped;
            cs->nfit++;
            cs->sx += x;
            cs->sy += y;
            cs->sxx += x * x;
            cs->syy += y * y;
            cs->sxy += x * y;
            cs->sxxx += x * x * x;
            cs->syyy += y * y * y;
            cs->sxyy += x * y * y;
            cs->sxxy += x * x * y;
        }
        return 0;
    case KN_CRIT_RAMP:
        if (s->t >= c->stop_at + 1.0) {
            /* one second after the stop command the belts are at rest */
            if (!cs->have_slip_ref) {
                memcpy(cs->slip_ref, s->origin, sizeof cs->slip_ref);
                cs->have_slip_ref = 1;
            }
            double d = dist3d(s->origin, cs->slip_ref);
            if (d > cs->max_slip)
                cs->max_slip = d;
        }
        if (fabs(s->t - c->drive_from) < 0.005)
            cs->ref = *s, cs->have_ref = 1, cs->path = 0;
        if (fabs(s->t - c->drive_to) < 0.005)
            cs->drive_dist = cs->path; /* distance travelled while driving */
        return 0;
    case KN_CRIT_HOLD:
        if (s->t >= c->settle_s) {
            if (!cs->have_ref) {
                cs->ref = *s;
                cs->have_ref = 1;
            }
            double d = dist3d(s->cog, cs->ref.cog), dp = fabs(s->rpy[1] - cs->ref.rpy[1]);
            if (d > cs->max_creep)
                cs->max_creep = d;
            if (dp > cs->max_dpitch)
                cs->max_dpitch = dp;
        }
        return 0;
    case KN_CRIT_TRIAL:
        if (kn_trial_sample(cs->trial, s->t, s->origin[0], s->origin[1], s->rpy[0], s->rpy[1],
                            s->wall)) {
            trial_decide(cs, passed, why, whylen);
            return 1;
        }
        return 0;
    case KN_CRIT_SETTLE:
        if (s->t >= c->settle_s) {
            double v = sqrt(s->vel[0] * s->vel[0] + s->vel[1] * s->vel[1] + s->vel[2] * s->vel[2]);
            if (v > cs->worst_v)
                cs->worst_v = v;
            if (s->max_depth > cs->worst_depth)
                cs->worst_depth = s->max_depth;
        }
        return 0;
    default: return 0;
    }
}

static void circle_end(struct kn_crit_state *cs, int *passed, char *why, size_t whylen)
{
    const struct kn_criterion *c = cs->c;
    const struct kn_scenario *sc = cs->sc;
    int n = cs->nfit;
    if (n < 10) {
        *passed = 0;
        snprintf(why, whylen, "too few samples for a circle fit");
        return;
    }
    /* Kasa fit: solve for centre (a, b) from the normal equations */
    double mx = cs->sx / n, my = cs->sy / n;
    double suu = cs->sxx / n - mx * mx, svv = cs->syy / n - my * my, suv = cs->sxy / n - mx * my;
    double suuu = cs->sxxx / n - 3 * mx * cs->sxx / n + 2 * mx * mx * mx;
    double svvv = cs->syyy / n - 3 * my * cs->syy / n + 2 * my * my * my;
    double suvv = cs->sxyy / n - mx * cs->syy / n - 2 * my * cs->sxy / n + 2 * mx * my * my;
    double suuv = cs->sxxy / n - my * cs->sxx / n - 2 * mx * cs->sxy / n + 2 * mx * mx * my;
    double det = suu * svv - suv * suv;
    if (fabs(det) < 1e-12) {
        *passed = 0;
        snprintf(why, whylen, "path is not a circle (degenerate fit)");
        return;
    }
    double r1 = 0.5 * (suuu + suvv), r2 = 0.5 * (svvv + suuv);
    double uc = (r1 * svv - r2 * suv) / det, vc = (r2 * suu - r1 * suv) / det;
    double R = sqrt(uc * uc + vc * vc + suu + svv);
    double cx = uc + mx, cy = vc + my, ss = 0;
    for (int i = 0; i < n; i++) {
        double e = hypot(cs->px[i] - cx, cs->py[i] - cy) - R;
        ss += e * e;
    }
    double rms = sqrt(ss / n);
    /* kinematic radius from the last commanded belts and the robot's chi */
    double vl = cs->last.belts[0], vr = cs->last.belts[1];
    double B = kn_world_track_separation(&sc->rp), chi = kn_world_chi(&sc->rp, sc->pp.fdir_mode);
    double Rk = fabs(vr - vl) > 1e-9 ? fabs(B * (vr + vl) / (2 * chi * (vr - vl))) : INFINITY;
    /* loop closure: distance between points one revolution apart */
    double worst = 0;
    int laps = 0;
    for (int i = 0, j = 0; i < n; i++) {
        while (j < n && fabs(cs->pyaw[j] - cs->pyaw[i]) < 2 * M_PI)
            j++;
        if (j >= n)
            break;
        laps = 1;
        double d = hypot(cs->px[j] - cs->px[i], cs->py[j] - cs->py[i]);
        if (d > worst)
            worst = d;
    }
    int ok_r = fabs(R - Rk) <= c->radius_tol * Rk;
    *passed = rms <= c->rms_m && ok_r && laps && worst <= c->close_m;
    snprintf(why, whylen,
             "R %.3f m (kinematic %.3f, tol %.0f%%), fit RMS %.4f m, loop gap %.3f m%s", R, Rk,
             100 * c->radius_tol, rms, worst, laps ? "" : " (no full revolution)");
}

enum kn_verdict_mode kn_crit_mode(const struct kn_crit_state *cs)
{
    return cs->mode;
}

const char *kn_crit_mode_name(enum kn_verdict_mode m)
{
    static const char *const names[] = { "none",  "tip-over",  "stall", "time-out",
                                         "limit", "criterion", "error" };
    return (unsigned)m < sizeof names / sizeof names[0] ? names[m] : "error";
}

void kn_crit_end(struct kn_crit_state *cs, int *passed, char *why, size_t whylen)
{
    const struct kn_criterion *c = cs->c;
    const struct kn_sample *f = &cs->first, *l = &cs->last;
    switch (c->type) {
    case KN_CRIT_TRIAL:
        kn_trial_end(cs->trial, l->t);
        trial_decide(cs, passed, why, whylen);
        return;
    case KN_CRIT_CROSS:
        *passed = 0;
        snprintf(why, whylen, "time out: CoG x %.3f m, needs %.3f m", l->cog[0], c->pass_x);
        cs->mode = KN_MODE_TIME_OUT;
        return;
    case KN_CRIT_STRAIGHT: {
        double e = hypot(l->origin[0] - c->target[0], l->origin[1] - c->target[1]);
        double yaw = l->yaw_unwrapped - f->yaw_unwrapped;
        *passed = e <= c->tol_m && fabs(yaw) <= c->yaw_tol;
        snprintf(why, whylen,
                 "end (%.3f, %.3f) m, error %.3f m (tol %.2f), yaw %.4f rad (tol %.2f)",
                 l->origin[0], l->origin[1], e, c->tol_m, yaw, c->yaw_tol);
        break;
    }
    case KN_CRIT_ROTATE: {
        double yaw = l->yaw_unwrapped - f->yaw_unwrapped, d = dist2d(l->origin, f->origin);
        *passed = fabs(fabs(yaw) - c->yaw_want) <= c->yaw_tol_rot && d <= c->drift_m;
        snprintf(why, whylen, "yaw %.3f rad (want %.2f +- %.2f), drift %.3f m (tol %.2f)", yaw,
                 c->yaw_want, c->yaw_tol_rot, d, c->drift_m);
        break;
    }
    case KN_CRIT_CIRCLE: circle_end(cs, passed, why, whylen); break;
    case KN_CRIT_RETURN: {
        double d = dist2d(l->origin, f->origin);
        double yaw = l->yaw_unwrapped - f->yaw_unwrapped;
        *passed = d <= c->tol_m && fabs(yaw) <= c->yaw_tol;
        snprintf(why, whylen, "return error %.4f m (tol %.2f), yaw %.4f rad (tol %.2f)", d,
                 c->tol_m, yaw, c->yaw_tol);
        break;
    }
    case KN_CRIT_RAMP: {
        double prog = c->distance > 0 ? cs->drive_dist / c->distance : 0;
        *passed = prog >= c->progress && cs->max_slip <= c->slip_m && cs->have_slip_ref;
        snprintf(why, whylen,
                 "progress %.1f%% of %.2f m (need %.0f%%), slip while stopped %.4f m (tol %.3f)",
                 100 * prog, c->distance, 100 * c->progress, cs->max_slip, c->slip_m);
        break;
    }
    case KN_CRIT_HOLD:
        *passed = cs->have_ref && cs->max_creep <= c->creep_m && cs->max_dpitch <= c->pitch_tol;
        snprintf(why, whylen, "creep %.4f m (tol %.3f), pitch change %.3f deg (tol %.1f)",
                 cs->max_creep, c->creep_m, cs->max_dpitch * DEG, c->pitch_tol * DEG);
        break;
    case KN_CRIT_SETTLE:
        *passed = cs->worst_v <= c->vel_tol && cs->worst_depth <= c->depth_tol;
        snprintf(why, whylen,
                 "after %.1f s: max speed %.5f m/s (tol %.3f), max depth %.4f m (tol %.4f)",
                 c->settle_s, cs->worst_v, c->vel_tol, cs->worst_depth, c->depth_tol);
        break;
    }
    cs->mode = *passed ? KN_MODE_NONE : KN_MODE_CRITERION;
}
