/* A disagreeing validation row's measure and study (study.h). The measure
 * is taken from the run's own samples, so it follows the robot file and
 * the operator sequence the run used instead of a number written once in
 * the scenario file; the study runs the perturbations, so which of them
 * would flip the row is found, not remembered. */
#include "study.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

#define LEVEL_RAD (2.0 * M_PI / 180.0) /* "the body level": within 2 deg */
/* every validation run's invariant (runner.c): a perturbation that needs
 * deeper penetration to flip a row does not count as flipping it */
#define MAX_DEPTH 0.010

static int level(const struct kn_sample *s)
{
    return fabs(s->rpy[0]) < LEVEL_RAD && fabs(s->rpy[1]) < LEVEL_RAD;
}

/* How far point p is along the sample's heading, in the world's x-y. */
static double along_heading(const struct kn_sample *s, const double p[3])
{
    return p[0] * cos(s->rpy[2]) + p[1] * sin(s->rpy[2]);
}

/* The highest corner the base's CoG can be over while the robot rests on
 * it with the main tracks and stands on its rear flipper tips, at a
 * nose-up pitch up to max_rad; *at_rad: the pitch of that corner. In the
 * body frame (x ahead, z up, origin between the pulley axes) the belt's
 * underside is z = -r; over the corner the CoG (cog_x, cog_z) puts the
 * corner at x_c = cog_x - (cog_z + r) tan(pitch) on it, and the rear pivot
 * is (p + x_c) sin(pitch) - r cos(pitch) below the corner, while the tips
 * reach at most the flipper's length and tip radius below the pivot
 * (pointing straight down). The corner can be no higher than that reach
 * plus the pivot's drop. */
static double corner_bound(const struct kn_robot_params *rp, double max_rad, double *at_rad)
{
    double r = rp->track_radius, p = rp->track_pulley_x, c = rp->cog_z + r;
    double reach = rp->flipper_length + rp->flipper_tip_radius, best = -INFINITY;
    *at_rad = 0;
    const double step = M_PI / 1800; /* 0.1 deg */
    for (int k = 0; k * step <= max_rad + 1e-9; k++) {
        double a = k * step, xc = rp->cog_x - c * tan(a);
        if (xc < -p || xc > p)
            continue; /* the corner is off the belt's flat underside */
        double h = reach + (p + xc) * sin(a) - r * cos(a);
        if (h > best) {
            best = h;
            *at_rad = a;
        }
    }
    return best;
}

/* Before a step climbed by the flipper assist: the highest corner its CoG
 * can be over while the rear flipper tips stand on the lower level, up to
 * the assist's give-up pitch and up to the pitch at which the belts slide
 * on the corner (atan mu), against the step's top; and from the run, how
 * close the CoG came to the edge. The assist reaches over the top with
 * its front flippers, so their reach is not what decides these rows. */
static void measure_assisted_step(const struct kn_scenario *sc, const struct kn_result *res,
                                  char *out, size_t n)
{
    const struct kn_terrain *t = &sc->terrain;
    double a_abort, a_slip;
    double h_abort = corner_bound(&sc->rp, sc->assist.abort_pitch_deg * M_PI / 180, &a_abort);
    double h_slip = corner_bound(&sc->rp, atan(sc->rp.track_mu), &a_slip);
    double closest = INFINITY;
    for (int i = 0; i < res->nsamples; i++)
        closest = fmin(closest, t->edge_x - along_heading(&res->samples[i], res->samples[i].cog));
    snprintf(out, n,
             "standing on the rear flipper tips, the CoG is over a corner at most %.3f m high "
             "(nose up %.0f deg; %.3f m at %.0f deg, where belts of mu %.2g slide); the step "
             "is %.3f m (%+.0f mm); the CoG came %.0f mm %s the edge",
             h_abort, a_abort * 180 / M_PI, h_slip, a_slip * 180 / M_PI, sc->rp.track_mu, t->height,
             1000 * (h_abort - t->height), 1000 * fabs(closest), closest > 0 ? "short of" : "past");
}

/* Before a step: the highest point of the front flipper tips while the
 * body is level (on the floor, flippers at their approach angle), against
 * the step's top. Before a trench: how far the tips reach ahead of the
 * CoG along the heading while the body is level and the CoG has not
 * reached the near rim, against the trench's width. */
static void measure(const struct kn_scenario *sc, const struct kn_result *res, char *out, size_t n)
{
    out[0] = '\0';
    const struct kn_terrain *t = &sc->terrain;
    if (t->type == KN_TERRAIN_STEP && sc->ctrl == KN_CTRL_ASSIST) {
        measure_assisted_step(sc, res, out, n);
        return;
    }
    double best = -INFINITY;
    for (int i = 0; i < res->nsamples; i++) {
        const struct kn_sample *s = &res->samples[i];
        if (!level(s))
            continue;
        const struct kn_outline *o = &s->outline;
        if (t->type == KN_TERRAIN_STEP) {
            best = fmax(best, o->tip_front[2] + o->tip_r);
        } else if (t->type == KN_TERRAIN_TRENCH) {
            double cog = along_heading(s, s->cog);
            if (cog >= t->edge_x)
                continue;
            double tip = along_heading(s, o->tip_front) + o->tip_r;
            best = fmax(best, tip - cog);
        }
    }
    if (!isfinite(best))
        return;
    if (t->type == KN_TERRAIN_STEP)
        snprintf(out, n,
                 "with the body level the front flipper tips reach %.3f m; the step is %.3f m "
                 "(%+.0f mm)",
                 best, t->height, 1000 * (best - t->height));
    else
        snprintf(out, n,
                 "with the body level the front flipper tips reach %.3f m ahead of the CoG; the "
                 "trench is %.3f m wide (%+.0f mm)",
                 best, t->width, 1000 * (best - t->width));
}

/* Study variant v at sc's parameter value, or 0 when it is another value. */
static int run_item(const struct kn_scenario *sc, int v, const char *robot,
                    struct kn_study_item *it, char *err, size_t errlen)
{
    struct kn_scenario p;
    if (kn_scenario_load(sc->study, v, &p, err, errlen))
        return -1;
    int same = sc->param[0] && strcmp(p.param, sc->param) == 0 &&
               fabs(p.param_value - sc->param_value) < 1e-9;
    if (!same) {
        kn_scenario_free(&p);
        return 0;
    }
    if (robot && kn_robotfile_load(robot, &p.rp, err, errlen)) {
        kn_scenario_free(&p);
        return -1;
    }
    struct kn_result r;
    if (p.ctrl == KN_CTRL_EXTERNAL || kn_scenario_run(&p, 0, &r)) {
        snprintf(err, errlen, "%s: variant %d cannot be run here", sc->study, v);
        kn_scenario_free(&p);
        return -1;
    }
    memset(it, 0, sizeof *it);
    snprintf(it->title, sizeof it->title, "%s", p.title);
    it->passed = r.passed;
    it->depth = r.max_depth;
    it->flips = sc->expect != KN_EXPECT_EITHER && (sc->expect == KN_EXPECT_PASS) == r.passed &&
                r.finite && r.max_depth < MAX_DEPTH;
    snprintf(it->why, sizeof it->why, "%.199s", r.why);
    kn_result_free(&r);
    kn_scenario_free(&p);
    return 1;
}

int kn_study_make(const struct kn_scenario *sc, const struct kn_result *res, const char *robot,
                  struct kn_study *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    measure(sc, res, st->measured, sizeof st->measured);
    if (!sc->study[0])
        return 0;
    const char *base = strrchr(sc->study, '/');
    snprintf(st->file, sizeof st->file, "%.159s", base ? base + 1 : sc->study);
    int n = kn_scenario_count(sc->study, err, errlen);
    if (n < 0)
        return -1;
    st->items = calloc((size_t)n, sizeof *st->items);
    if (!st->items) {
        snprintf(err, errlen, "%s: out of memory", sc->study);
        return -1;
    }
    for (int v = 0; v < n; v++) {
        int rc = run_item(sc, v, robot, &st->items[st->n], err, errlen);
        if (rc < 0) {
            kn_study_free(st);
            return -1;
        }
        st->n += rc;
    }
    return 0;
}

void kn_study_free(struct kn_study *st)
{
    free(st->items);
    st->items = NULL;
    st->n = 0;
}

void kn_study_print(FILE *out, const struct kn_study *st)
{
    if (st->measured[0])
        fprintf(out, "    measured: %s\n", st->measured);
    if (!st->file[0])
        return;
    int flips = 0;
    for (int i = 0; i < st->n; i++) {
        const struct kn_study_item *it = &st->items[i];
        int invalid = it->depth >= MAX_DEPTH;
        fprintf(out, "    %s: %-50s %s, max depth %.1f mm%s\n", st->file, it->title,
                it->passed ? "pass" : "fail", 1000 * it->depth,
                it->flips ? "  <- flips it"
                : invalid ? " (>= 10 mm: outside the model's invariant)"
                          : "");
        flips += it->flips;
    }
    if (st->n == 0)
        fprintf(out, "    %s: no perturbation at this parameter value\n", st->file);
    else if (flips == 0)
        fprintf(out, "    none of the %d perturbations flips it\n", st->n);
}

/* s as a JSON string (cJSON escapes it). */
static void json_string(FILE *out, const char *s)
{
    cJSON *j = cJSON_CreateString(s);
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    fputs(t ? t : "\"\"", out);
    free(t);
    cJSON_Delete(j);
}

void kn_study_json(FILE *out, const struct kn_study *st)
{
    fputs(", \"measured\": ", out);
    json_string(out, st->measured);
    fputs(", \"study_file\": ", out);
    json_string(out, st->file);
    fputs(", \"study\": [", out);
    for (int i = 0; i < st->n; i++) {
        const struct kn_study_item *it = &st->items[i];
        fputs(i ? ", {\"title\": " : "{\"title\": ", out);
        json_string(out, it->title);
        fprintf(out, ", \"got\": \"%s\", \"flips\": %s, \"max_depth_m\": %.4f, \"detail\": ",
                it->passed ? "pass" : "fail", it->flips ? "true" : "false", it->depth);
        json_string(out, it->why);
        fputs("}", out);
    }
    fputs("]", out);
}
