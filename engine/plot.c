/* SVG plot of a scenario run so a person can see what happened: a side view
 * (x-z: terrain cut at y = 0, CoG path, robot outline snapshots) for
 * obstacles, a top view (x-y: path, heading marks, footprints) for flat
 * runs. Plain SVG 1.1, no scripts. */
#include <math.h>
#include <string.h>

#include "scenario.h"

struct view {
    double x0, x1, y0, y1; /* world bounds */
    double scale;          /* px per m */
    double W, H, pad;
};

static double px(const struct view *v, double x)
{
    return v->pad + (x - v->x0) * v->scale;
}

static double py(const struct view *v, double y)
{
    return v->pad + (v->y1 - y) * v->scale;
}

static void grow(struct view *v, double x, double y)
{
    if (x < v->x0)
        v->x0 = x;
    if (x > v->x1)
        v->x1 = x;
    if (y < v->y0)
        v->y0 = y;
    if (y > v->y1)
        v->y1 = y;
}

/* Corners of a terrain box cut by the plane y = 0, in x-z. */
static int box_side(const struct kn_part *p, double cx[4], double cz[4])
{
    if (fabs(p->c[1]) > p->half[1] || p->yaw != 0)
        return 0;
    double c = cos(p->pitch), s = sin(p->pitch);
    const double sx[4] = {-1, 1, 1, -1}, sz[4] = {-1, -1, 1, 1};
    for (int i = 0; i < 4; i++) {
        double lx = sx[i] * p->half[0], lz = sz[i] * p->half[2];
        /* rotation about y: x' = c x + s z, z' = -s x + c z */
        cx[i] = p->c[0] + c * lx + s * lz;
        cz[i] = p->c[2] - s * lx + c * lz;
    }
    return 1;
}

static void stadium(FILE *f, const struct view *v, const double a[3], double ra, const double b[3],
                    double rb, const char *style)
{
    /* side view of a track: two circles and their outer tangents */
    double dx = b[0] - a[0], dz = b[2] - a[2], d = hypot(dx, dz);
    fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%.1f' %s/>\n", px(v, a[0]), py(v, a[2]),
            ra * v->scale, style);
    fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%.1f' %s/>\n", px(v, b[0]), py(v, b[2]),
            rb * v->scale, style);
    if (d < 1e-9)
        return;
    double ux = dx / d, uz = dz / d, sa = (ra - rb) / d, ca = sqrt(fmax(0, 1 - sa * sa));
    for (int k = -1; k <= 1; k += 2) {
        /* normal of the tangent line: rotate u by +-(90 deg + alpha) */
        double nx = sa * ux - k * ca * uz, nz = sa * uz + k * ca * ux;
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' %s/>\n",
                px(v, a[0] + ra * nx), py(v, a[2] + ra * nz), px(v, b[0] + rb * nx),
                py(v, b[2] + rb * nz), style);
    }
}

static void side_view(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    const struct kn_terrain *t = &sc->terrain;
    struct view v = {1e9, -1e9, 1e9, -1e9, 0, 0, 0, 40};
    for (int i = 0; i < res->nsamples; i++) {
        const struct kn_outline *o = &res->samples[i].outline;
        grow(&v, o->tip_front[0] + 0.1, o->tip_front[2] + 0.1);
        grow(&v, o->tip_rear[0] - 0.1, o->tip_rear[2] - 0.1);
        grow(&v, res->samples[i].origin[0], res->samples[i].origin[2] + 0.3);
    }
    grow(&v, v.x0, t->top_z + 0.1);
    grow(&v, v.x0, fmin(0, -fmin(t->depth, 0.4)) - 0.05);
    v.scale = fmin(900 / (v.x1 - v.x0), 500 / (v.y1 - v.y0));
    v.W = 2 * v.pad + (v.x1 - v.x0) * v.scale;
    v.H = 2 * v.pad + (v.y1 - v.y0) * v.scale;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f'>\n", v.W,
            v.H + 40);
    fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
    /* terrain */
    for (int i = 0; i < t->nparts; i++) {
        const struct kn_part *p = &t->parts[i];
        if (p->kind == KN_PART_PLANE && p->n[0] == 0) {
            fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#555' stroke-width='2'/>\n",
                    px(&v, v.x0), py(&v, p->c[2]), px(&v, v.x1), py(&v, p->c[2]));
        } else if (p->kind == KN_PART_PLANE) {
            double sl = -p->n[0] / p->n[2];
            fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#555' stroke-width='2'/>\n",
                    px(&v, v.x0), py(&v, sl * v.x0), px(&v, v.x1), py(&v, sl * v.x1));
        } else if (p->kind == KN_PART_BOX) {
            double cx[4], cz[4];
            if (!box_side(p, cx, cz))
                continue;
            fprintf(f, "<polygon fill='#d8c8a8' stroke='#776' points='");
            for (int k = 0; k < 4; k++)
                fprintf(f, "%.1f,%.1f ", px(&v, cx[k]), py(&v, fmax(cz[k], v.y0)));
            fprintf(f, "'/>\n");
        }
    }
    /* robot snapshots: about every second, the last one bold */
    int stride = res->nsamples > 12 ? res->nsamples / 12 : 1;
    for (int i = 0; i < res->nsamples; i += stride) {
        const struct kn_outline *o = &res->samples[i].outline;
        const char *st = "fill='none' stroke='#48c' stroke-opacity='0.45' stroke-width='1'";
        stadium(f, &v, o->main_rear, o->main_r, o->main_front, o->main_r, st);
        stadium(f, &v, o->main_front, o->main_r, o->tip_front, o->tip_r, st);
        stadium(f, &v, o->main_rear, o->main_r, o->tip_rear, o->tip_r, st);
    }
    if (res->nsamples > 0) {
        const struct kn_outline *o = &res->samples[res->nsamples - 1].outline;
        const char *st = "fill='none' stroke='#024' stroke-width='2'";
        stadium(f, &v, o->main_rear, o->main_r, o->main_front, o->main_r, st);
        stadium(f, &v, o->main_front, o->main_r, o->tip_front, o->tip_r, st);
        stadium(f, &v, o->main_rear, o->main_r, o->tip_rear, o->tip_r, st);
    }
    /* CoG path */
    fprintf(f, "<polyline fill='none' stroke='#c22' stroke-width='2' points='");
    for (int i = 0; i < res->nsamples; i++)
        fprintf(f, "%.1f,%.1f ", px(&v, res->samples[i].cog[0]), py(&v, res->samples[i].cog[2]));
    fprintf(f, "'/>\n");
    if (sc->crit.type == KN_CRIT_CROSS)
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#2a2' stroke-dasharray='6,4'/>\n",
                px(&v, sc->crit.pass_x), py(&v, v.y0), px(&v, sc->crit.pass_x), py(&v, v.y1));
    fprintf(f, "<text x='10' y='%.0f' font-family='sans-serif' font-size='14'>%s: %s (expected %s). %s</text>\n",
            v.H + 25, sc->name, res->passed ? "PASS" : "FAIL", kn_expect_name(sc->expect),
            res->why);
    fprintf(f, "<text x='10' y='18' font-family='sans-serif' font-size='12'>side view x-z, "
               "1 m = %.0f px; red: CoG path; blue: robot every %.1f s; dashed: pass line</text>\n",
            v.scale, stride * 0.01);
    fprintf(f, "</svg>\n");
}

static void top_view(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    struct view v = {1e9, -1e9, 1e9, -1e9, 0, 0, 0, 40};
    for (int i = 0; i < res->nsamples; i++) {
        const double *o = res->samples[i].origin;
        grow(&v, o[0] - 0.5, o[1] - 0.5);
        grow(&v, o[0] + 0.5, o[1] + 0.5);
    }
    if (sc->crit.type == KN_CRIT_STRAIGHT)
        grow(&v, sc->crit.target[0] + 0.2, sc->crit.target[1] + 0.2);
    v.scale = fmin(900 / (v.x1 - v.x0), 700 / (v.y1 - v.y0));
    v.W = 2 * v.pad + (v.x1 - v.x0) * v.scale;
    v.H = 2 * v.pad + (v.y1 - v.y0) * v.scale;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f'>\n", v.W,
            v.H + 40);
    fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
    /* 0.5 m grid */
    for (double g = floor(v.x0 * 2) / 2; g <= v.x1; g += 0.5)
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/>\n", px(&v, g),
                py(&v, v.y0), px(&v, g), py(&v, v.y1));
    for (double g = floor(v.y0 * 2) / 2; g <= v.y1; g += 0.5)
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/>\n", px(&v, v.x0),
                py(&v, g), px(&v, v.x1), py(&v, g));
    int stride = res->nsamples > 16 ? res->nsamples / 16 : 1;
    const double L = sc->rp.track_pulley_x + sc->rp.track_radius, W = sc->rp.track_y + 0.5 * sc->rp.track_width;
    for (int i = 0; i < res->nsamples; i += stride) {
        const struct kn_sample *s = &res->samples[i];
        double c = cos(s->rpy[2]), sn = sin(s->rpy[2]);
        const double cx[4] = {L, L, -L, -L}, cy[4] = {W, -W, -W, W};
        fprintf(f, "<polygon fill='#48c' fill-opacity='0.12' stroke='#48c' points='");
        for (int k = 0; k < 4; k++)
            fprintf(f, "%.1f,%.1f ", px(&v, s->origin[0] + c * cx[k] - sn * cy[k]),
                    py(&v, s->origin[1] + sn * cx[k] + c * cy[k]));
        fprintf(f, "'/>\n<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#024' stroke-width='2'/>\n",
                px(&v, s->origin[0]), py(&v, s->origin[1]), px(&v, s->origin[0] + L * c),
                py(&v, s->origin[1] + L * sn));
    }
    fprintf(f, "<polyline fill='none' stroke='#c22' stroke-width='2' points='");
    for (int i = 0; i < res->nsamples; i++)
        fprintf(f, "%.1f,%.1f ", px(&v, res->samples[i].origin[0]), py(&v, res->samples[i].origin[1]));
    fprintf(f, "'/>\n");
    if (sc->crit.type == KN_CRIT_STRAIGHT)
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%.1f' fill='none' stroke='#2a2' stroke-dasharray='4,3'/>\n",
                px(&v, sc->crit.target[0]), py(&v, sc->crit.target[1]), sc->crit.tol_m * v.scale);
    fprintf(f, "<text x='10' y='%.0f' font-family='sans-serif' font-size='14'>%s: %s (expected %s). %s</text>\n",
            v.H + 25, sc->name, res->passed ? "PASS" : "FAIL", kn_expect_name(sc->expect),
            res->why);
    fprintf(f, "<text x='10' y='18' font-family='sans-serif' font-size='12'>top view x-y, grid "
               "0.5 m; red: path of the body centre; blue: footprint and heading</text>\n");
    fprintf(f, "</svg>\n");
}

int kn_plot_write_svg(const struct kn_scenario *sc, const struct kn_result *res, FILE *f)
{
    if (sc->view_side)
        side_view(sc, res, f);
    else
        top_view(sc, res, f);
    return ferror(f) ? -1 : 0;
}
