/* SVG plot of a scenario run so a person can see what happened, drawn
 * with the shared plot writer (common/svgplot.h: axes in metres, grid,
 * legend, time marks, start and end): a side view (x-z: terrain cut at
 * y = 0, robot outlines, path of the centre of gravity) for obstacles, a
 * top view (x-y: path, footprints, target) for flat runs. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "svgplot.h"

#define SNAPSHOT_STYLE "fill='none' stroke='#5a7fa8' stroke-opacity='0.45' stroke-width='1'"
#define LAST_STYLE "fill='none' stroke='#0b2545' stroke-width='2'"
#define TERRAIN_STYLE "fill='#d8c8a8' stroke='#776'"
#define GROUND_STYLE "stroke='#555' stroke-width='2'"
#define PASS_STYLE "stroke='#9467bd' stroke-width='1.5' stroke-dasharray='6,4'"
#define TARGET_STYLE "fill='none' stroke='#9467bd' stroke-width='1.5' stroke-dasharray='4,3'"
#define FOOT_STYLE "fill='#5a7fa8' fill-opacity='0.08' stroke='#5a7fa8' stroke-opacity='0.6'"

/* The run's samples as the arrays the plot writer takes. */
struct arrays {
    double *t, *x, *y, *yaw;
};

static int arrays_fill(struct arrays *a, const struct kn_result *res, int side)
{
    size_t n = res->nsamples > 0 ? (size_t)res->nsamples : 1;
    a->t = malloc(n * sizeof *a->t);
    a->x = malloc(n * sizeof *a->x);
    a->y = malloc(n * sizeof *a->y);
    a->yaw = malloc(n * sizeof *a->yaw);
    if (!a->t || !a->x || !a->y || !a->yaw)
        return -1;
    for (int i = 0; i < res->nsamples; i++) {
        const struct kn_sample *s = &res->samples[i];
        a->t[i] = s->t;
        a->x[i] = side ? s->cog[0] : s->origin[0];
        a->y[i] = side ? s->cog[2] : s->origin[1];
        a->yaw[i] = s->rpy[2];
    }
    return 0;
}

static void arrays_free(struct arrays *a)
{
    free(a->t);
    free(a->x);
    free(a->y);
    free(a->yaw);
}

/* Draws the run's track (the body centre from above, or the centre of
 * gravity from the side) on top and writes the document. */
static int finish(struct kn_svgplot *p, const struct kn_result *res, int side,
                  const struct kn_svgplot_robot *robot, FILE *f)
{
    struct arrays a = { 0 };
    int filled = arrays_fill(&a, res, side);
    if (filled == 0) {
        struct kn_svgplot_track tr = { (size_t)res->nsamples,
                                       a.t,
                                       a.x,
                                       a.y,
                                       side ? NULL : a.yaw,
                                       side ? "path of the centre of gravity"
                                            : "path of the body centre" };
        kn_svgplot_track(p, &tr, robot);
    }
    arrays_free(&a);
    int rc = kn_svgplot_end(p, f);
    return filled == 0 ? rc : -1;
}

/* A judged program's run: its verdict, and what decided a failure; the
 * engine's own runs: the criterion and what the scenario expected. */
static void title(const struct kn_scenario *sc, const struct kn_result *res, char *buf, size_t len)
{
    if (!res->verdict[0]) {
        snprintf(buf, len, "%s: %s (expected %s)", sc->name, res->passed ? "PASS" : "FAIL",
                 kn_expect_name(sc->expect));
        return;
    }
    char v[sizeof res->verdict];
    size_t i = 0;
    for (; res->verdict[i] && i + 1 < sizeof v; i++)
        v[i] = (char)toupper((unsigned char)res->verdict[i]);
    v[i] = '\0';
    if (strcmp(res->verdict, "fail") == 0)
        snprintf(buf, len, "%s: %s (%s)", sc->name, v, kn_crit_mode_name(res->mode));
    else
        snprintf(buf, len, "%s: %s", sc->name, v);
}

/* Snapshots about every 1/n of the run (the last one is drawn apart). */
static int stride(const struct kn_result *res, int n)
{
    return res->nsamples > n ? res->nsamples / n : 1;
}

/* ---- side view ---- */

/* Corners of a terrain box cut by the plane y = 0, in x-z. */
static int box_side(const struct kn_part *p, double cx[4], double cz[4])
{
    if (fabs(p->c[1]) > p->half[1] || p->yaw != 0)
        return 0;
    double c = cos(p->pitch), s = sin(p->pitch);
    const double sx[4] = { -1, 1, 1, -1 }, sz[4] = { -1, -1, 1, 1 };
    for (int i = 0; i < 4; i++) {
        double lx = sx[i] * p->half[0], lz = sz[i] * p->half[2];
        /* rotation about y: x' = c x + s z, z' = -s x + c z */
        cx[i] = p->c[0] + c * lx + s * lz;
        cz[i] = p->c[2] - s * lx + c * lz;
    }
    return 1;
}

/* Side view of a track: two circles and their outer tangents. */
static void stadium(struct kn_svgplot *p, const double a[3], double ra, const double b[3],
                    double rb, const char *style)
{
    double dx = b[0] - a[0], dz = b[2] - a[2], d = hypot(dx, dz);
    kn_svgplot_circle(p, "robot", style, a[0], a[2], ra);
    kn_svgplot_circle(p, "robot", style, b[0], b[2], rb);
    if (d < 1e-9)
        return;
    double ux = dx / d, uz = dz / d, sa = (ra - rb) / d, ca = sqrt(fmax(0, 1 - sa * sa));
    for (int k = -1; k <= 1; k += 2) {
        /* normal of the tangent line: rotate u by +-(90 deg + alpha) */
        double nx = sa * ux - k * ca * uz, nz = sa * uz + k * ca * ux;
        kn_svgplot_line(p, "robot", style, a[0] + ra * nx, a[2] + ra * nz, b[0] + rb * nx,
                        b[2] + rb * nz);
    }
}

static void outline(struct kn_svgplot *p, const struct kn_outline *o, const char *style)
{
    stadium(p, o->main_rear, o->main_r, o->main_front, o->main_r, style);
    stadium(p, o->main_front, o->main_r, o->tip_front, o->tip_r, style);
    stadium(p, o->main_rear, o->main_r, o->tip_rear, o->tip_r, style);
}

static void side_box(const struct kn_scenario *sc, const struct kn_result *res,
                     struct kn_svgplot_box *b)
{
    const struct kn_terrain *t = &sc->terrain;
    kn_svgplot_box_init(b);
    for (int i = 0; i < res->nsamples; i++) {
        const struct kn_outline *o = &res->samples[i].outline;
        kn_svgplot_box_add(b, o->tip_front[0] + 0.1, o->tip_front[2] + 0.1);
        kn_svgplot_box_add(b, o->tip_rear[0] - 0.1, o->tip_rear[2] - 0.1);
        kn_svgplot_box_add(b, res->samples[i].origin[0], res->samples[i].origin[2] + 0.3);
    }
    /* down to the lowest terrain corner in the cut, at most the terrain's
     * depth (0.4 m at most) below the ground */
    double x = b->n ? b->x0 : 0, low = 0, floor_z = -fmin(t->depth, 0.4);
    for (int i = 0; i < t->nparts; i++) {
        double cx[4], cz[4];
        if (t->parts[i].kind == KN_PART_BOX && box_side(&t->parts[i], cx, cz))
            for (int k = 0; k < 4; k++)
                low = fmin(low, fmax(cz[k], floor_z));
    }
    kn_svgplot_box_add(b, x, t->top_z + 0.1);
    kn_svgplot_box_add(b, x, low - 0.05);
}

static void terrain_cut(struct kn_svgplot *p, const struct kn_terrain *t)
{
    for (int i = 0; i < t->nparts; i++) {
        const struct kn_part *q = &t->parts[i];
        if (q->kind == KN_PART_PLANE && q->n[0] == 0) {
            kn_svgplot_line(p, "terrain", GROUND_STYLE, p->x0, q->c[2], p->x1, q->c[2]);
        } else if (q->kind == KN_PART_PLANE) {
            double sl = -q->n[0] / q->n[2];
            kn_svgplot_line(p, "terrain", GROUND_STYLE, p->x0, sl * p->x0, p->x1, sl * p->x1);
        } else if (q->kind == KN_PART_BOX) {
            double cx[4], cz[4];
            if (box_side(q, cx, cz))
                kn_svgplot_polygon(p, "terrain", TERRAIN_STYLE, cx, cz, 4);
        }
    }
    kn_svgplot_legend(p, KN_SVGPLOT_RECT, TERRAIN_STYLE, "terrain cut at y = 0");
}

static int side_view(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    struct kn_svgplot_box box;
    side_box(sc, res, &box);
    char head[256], cap[512];
    title(sc, res, head, sizeof head);
    int every = stride(res, 12);
    snprintf(cap, sizeof cap,
             "%s. Side view x-z through y = 0, x and z at one scale; the robot "
             "every %.1f s, the last one dark.",
             res->why, every * 0.01);
    struct kn_svgplot_frame fr = { head, cap, "x [m]", "z [m]", 900, 500, 0.5, 0.02 };
    struct kn_svgplot p;
    if (kn_svgplot_begin(&p, &box, &fr) != 0)
        return -1;
    terrain_cut(&p, &sc->terrain);
    for (int i = 0; i < res->nsamples; i += every)
        outline(&p, &res->samples[i].outline, SNAPSHOT_STYLE);
    if (res->nsamples > 0)
        outline(&p, &res->samples[res->nsamples - 1].outline, LAST_STYLE);
    kn_svgplot_legend(&p, KN_SVGPLOT_RECT, SNAPSHOT_STYLE, "robot outline");
    kn_svgplot_legend(&p, KN_SVGPLOT_RECT, LAST_STYLE, "robot at the end");
    if (sc->crit.type == KN_CRIT_CROSS) {
        kn_svgplot_line(&p, "pass-line", PASS_STYLE, sc->crit.pass_x, p.y0, sc->crit.pass_x, p.y1);
        kn_svgplot_legend(&p, KN_SVGPLOT_LINE, PASS_STYLE, "pass line");
    }
    return finish(&p, res, 1, NULL, f);
}

/* ---- top view ---- */

static int top_view(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    const double L = 2 * (sc->rp.track_pulley_x + sc->rp.track_radius);
    const double W = 2 * sc->rp.track_y + sc->rp.track_width;
    struct kn_svgplot_box box;
    kn_svgplot_box_init(&box);
    const double reach = hypot(L, W) / 2; /* the footprint in any heading */
    for (int i = 0; i < res->nsamples; i++) {
        const double *o = res->samples[i].origin;
        kn_svgplot_box_add(&box, o[0] - reach, o[1] - reach);
        kn_svgplot_box_add(&box, o[0] + reach, o[1] + reach);
    }
    if (sc->crit.type == KN_CRIT_STRAIGHT) {
        kn_svgplot_box_add(&box, sc->crit.target[0] - sc->crit.tol_m,
                           sc->crit.target[1] - sc->crit.tol_m);
        kn_svgplot_box_add(&box, sc->crit.target[0] + sc->crit.tol_m,
                           sc->crit.target[1] + sc->crit.tol_m);
    }
    char head[256], cap[512];
    title(sc, res, head, sizeof head);
    int every = stride(res, 16);
    snprintf(cap, sizeof cap,
             "%s. Top view x-y, x and y at one scale; the footprint (%.2f x "
             "%.2f m) every %.1f s.",
             res->why, L, W, every * 0.01);
    struct kn_svgplot_frame fr = { head, cap, "x [m]", "y [m]", 700, 700, 0.5, 0.02 };
    struct kn_svgplot p;
    if (kn_svgplot_begin(&p, &box, &fr) != 0)
        return -1;
    for (int i = every; i < res->nsamples - 1; i += every) {
        const struct kn_sample *s = &res->samples[i];
        kn_svgplot_footprint(&p, "footprint snapshot", FOOT_STYLE, s->origin[0], s->origin[1],
                             s->rpy[2], L, W);
    }
    kn_svgplot_legend(&p, KN_SVGPLOT_RECT, FOOT_STYLE, "footprint on the way");
    if (sc->crit.type == KN_CRIT_STRAIGHT) {
        kn_svgplot_circle(&p, "target", TARGET_STYLE, sc->crit.target[0], sc->crit.target[1],
                          sc->crit.tol_m);
        kn_svgplot_legend(&p, KN_SVGPLOT_RING, TARGET_STYLE, "target and tolerance");
    }
    struct kn_svgplot_robot robot = { L, W };
    return finish(&p, res, 0, &robot, f);
}

int kn_plot_write_svg(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    return sc->view_side ? side_view(sc, res, f) : top_view(sc, res, f);
}
