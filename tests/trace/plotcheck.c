/* The readability checks of a trajectory plot (see plotcheck.h). */
#include "plotcheck.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char why[512];

/* strtod in the C locale: the numbers are the document's, not the
 * reader's (a test may run under a comma-decimal locale). */
static double cstrtod(const char *s, char **end)
{
    static locale_t c;
    if (!c)
        c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return c ? strtod_l(s, end, c) : strtod(s, end);
}

__attribute__((format(printf, 1, 2))) static const char *bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return why;
}

/* All of s is a finite number (a trailing '%' allowed when pct). */
static bool number(const char *s, double *v, bool pct)
{
    char *end;
    if (!s || !*s)
        return false;
    *v = cstrtod(s, &end);
    if (pct && *end == '%')
        end++;
    return end != s && *end == '\0' && isfinite(*v);
}

/* "x,y x,y ..." into at most max points; -1 when malformed. */
static int points(const char *s, double (*pt)[2], int max)
{
    int n = 0;
    while (s && *s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        char *end;
        double x = cstrtod(s, &end);
        if (end == s || *end != ',' || !isfinite(x))
            return -1;
        s = end + 1;
        double y = cstrtod(s, &end);
        if (end == s || !isfinite(y))
            return -1;
        s = end;
        if (n < max) {
            pt[n][0] = x;
            pt[n][1] = y;
        }
        n++;
    }
    return n;
}

const char *pc_check_numbers(const struct x_doc *d)
{
    static const char *coord[] = { "x",  "y",  "x1", "y1",    "x2",    "y2",
                                   "cx", "cy", "r",  "width", "height" };
    if (d->n == 0 || strcmp(d->e[0].name, "svg") != 0)
        return bad("the root is not <svg>");
    double v;
    if (!number(x_attr(&d->e[0], "width"), &v, false) ||
        !number(x_attr(&d->e[0], "height"), &v, false))
        return bad("<svg> has no numeric width and height");
    for (int i = 0; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        for (size_t k = 0; k < sizeof coord / sizeof coord[0]; k++) {
            const char *a = x_attr(e, coord[k]);
            if (a && !number(a, &v, true))
                return bad("<%s %s='%s'>: not a finite number", e->name, coord[k], a);
        }
        const char *pts = x_attr(e, "points");
        if (pts && points(pts, NULL, 0) < 0)
            return bad("<%s points='%.60s...'>: not finite x,y pairs", e->name, pts);
    }
    return NULL;
}

/* ---- axes ---- */

struct axis {
    double pos[101], val[101];
    int n;
    double step, px_per_m;
};

static bool nice(double step)
{
    double m = step / pow(10, floor(log10(step) + 1e-9));
    return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6;
}

static const char *read_axis(const struct x_doc *d, const char *which, struct axis *a)
{
    int g = -1;
    for (int i = 0; i < d->n && g < 0; i++)
        if (x_class(&d->e[i], "axis") && x_class(&d->e[i], which))
            g = i;
    if (g < 0)
        return bad("no %s axis (a group of class 'axis %s')", which, which);
    a->n = 0;
    int labels = 0;
    bool unit = false;
    for (int i = g + 1; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        if (e->parent != g)
            continue;
        if (x_class(e, "tick") && a->n < 101 &&
            number(x_attr(e, which[0] == 'x' ? "x1" : "y1"), &a->pos[a->n], false))
            a->n++;
        else if (x_class(e, "tick-label") && labels < 101 &&
                 number(e->text, &a->val[labels], false))
            labels++;
        else if (x_class(e, "axis-title") && e->text && strstr(e->text, "[m]"))
            unit = true;
    }
    if (a->n < 3 || labels != a->n)
        return bad("%s axis: %d ticks and %d numeric labels (want 3 or more, one each)", which,
                   a->n, labels);
    if (!unit)
        return bad("%s axis: no title with the unit [m]", which);
    a->step = a->val[1] - a->val[0];
    for (int k = 1; k < a->n; k++)
        if (fabs(a->val[k] - a->val[k - 1] - a->step) > 1e-9 + a->step * 1e-6)
            return bad("%s axis: labels not evenly spaced", which);
    if (!(a->step > 0) || !nice(a->step))
        return bad("%s axis: step %g is not 1, 2 or 5 times a power of ten", which, a->step);
    double dp = a->pos[a->n - 1] - a->pos[0];
    a->px_per_m = (which[0] == 'x' ? dp : -dp) / (a->val[a->n - 1] - a->val[0]);
    if (!(a->px_per_m > 0))
        return bad("%s axis: ticks do not grow the right way", which);
    return NULL;
}

/* ---- the plot area and the path ---- */

struct area {
    double l, t, w, h;
};

static const char *frame(const struct x_doc *d, struct area *f)
{
    for (int i = 0; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        if (strcmp(e->name, "rect") == 0 && x_class(e, "frame") && !x_within(d, i, "side-panel"))
            if (number(x_attr(e, "x"), &f->l, false) && number(x_attr(e, "y"), &f->t, false) &&
                number(x_attr(e, "width"), &f->w, false) &&
                number(x_attr(e, "height"), &f->h, false))
                return NULL;
    }
    return bad("no plot frame (a rect of class 'frame')");
}

static const char *path_fills(const struct x_doc *d, const struct area *f, const struct pc_want *w)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    static double pt[100000][2];
    for (int i = 0; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        if (!x_class(e, "path") || !x_within(d, i, "data"))
            continue;
        int n = points(x_attr(e, "points"), pt, 100000);
        for (int k = 0; k < n && k < 100000; k++) {
            x0 = fmin(x0, pt[k][0]);
            x1 = fmax(x1, pt[k][0]);
            y0 = fmin(y0, pt[k][1]);
            y1 = fmax(y1, pt[k][1]);
        }
    }
    if (!(x1 >= x0))
        return bad("no path (a polyline of class 'path' in the plot)");
    double across = (x1 - x0) / f->w, up = (y1 - y0) / f->h;
    bool ok = w->both_ways ? across >= w->fill && up >= w->fill : fmax(across, up) >= w->fill;
    if (!ok)
        return bad("the path spans %.0f%% x %.0f%% of the plot (want %.0f%%%s)", 100 * across,
                   100 * up, 100 * w->fill, w->both_ways ? " both ways" : "");
    return NULL;
}

/* ---- markers ---- */

/* The first element of class word that is a marker: not in the legend,
 * not a footprint. */
static int marker(const struct x_doc *d, const char *word)
{
    for (int i = 0; i < d->n; i++)
        if (x_class(&d->e[i], word) && !x_class(&d->e[i], "footprint") &&
            !x_within(d, i, "legend") && !x_within(d, i, "side-panel"))
            return i;
    return -1;
}

static const char *colour(const struct x_elem *e)
{
    const char *f = x_attr(e, "fill");
    return f && strcmp(f, "none") != 0 ? f : x_attr(e, "stroke") ? x_attr(e, "stroke") : "";
}

static const char *markers(const struct x_doc *d)
{
    int s = marker(d, "start"), e = marker(d, "end");
    if (s < 0 || e < 0)
        return bad("no %s marker", s < 0 ? "start" : "end");
    if (strcmp(d->e[s].name, d->e[e].name) == 0)
        return bad("start and end markers have the same shape (<%s>)", d->e[s].name);
    if (strcmp(colour(&d->e[s]), colour(&d->e[e])) == 0)
        return bad("start and end markers have the same colour %s", colour(&d->e[s]));
    if (e < s)
        return bad("the end marker is drawn under the start marker");
    int h = marker(d, "heading"), nh = 0;
    for (int i = 0; i < d->n; i++)
        nh += x_class(&d->e[i], "heading") && !x_within(d, i, "legend");
    if (h < 0 || nh < 3)
        return bad("%d heading marks (want 3 or more)", nh);
    const char *hc = colour(&d->e[h]);
    if (strcmp(hc, colour(&d->e[e])) == 0 || strcmp(hc, colour(&d->e[s])) == 0)
        return bad("heading marks share a marker's colour %s", hc);
    return NULL;
}

/* ---- time labels ---- */

static const char *time_labels(const struct x_doc *d)
{
    double v[256];
    int n = 0;
    bool start = false, end = false;
    for (int i = 0; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        if (!x_class(e, "time"))
            continue;
        start |= x_class(e, "start-time");
        end |= x_class(e, "end-time") || (e->text && strstr(e->text, " and "));
        char *rest;
        double t = e->text ? cstrtod(e->text, &rest) : NAN;
        if (x_class(e, "start-time") || x_class(e, "end-time"))
            continue;
        if (!isfinite(t) || strcmp(rest, " s") != 0)
            return bad("time label \"%s\" is not \"<seconds> s\"", e->text ? e->text : "");
        if (n < 256)
            v[n++] = t;
    }
    if (!start || !end || n < 3)
        return bad("time labels: start %s, end %s, %d between (want both and 3 or more)",
                   start ? "yes" : "no", end ? "yes" : "no", n);
    double step = INFINITY;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            if (v[k] > v[i])
                step = fmin(step, v[k] - v[i]);
    for (int i = 0; i < n; i++) {
        double m = v[i] / step;
        if (fabs(m - round(m)) > 1e-6)
            return bad("time label %g s is not a multiple of the interval %g s", v[i], step);
    }
    return NULL;
}

/* ---- footprints ---- */

static const char *footprint(const struct x_doc *d, const char *which, const struct pc_want *w,
                             double px_per_m)
{
    for (int i = 0; i < d->n; i++) {
        const struct x_elem *e = &d->e[i];
        if (strcmp(e->name, "polygon") != 0 || !x_class(e, "footprint") || !x_class(e, which))
            continue;
        double pt[4][2];
        if (points(x_attr(e, "points"), pt, 4) != 4)
            return bad("footprint at %s: not 4 corners", which);
        double ax = pt[1][0] - pt[0][0], ay = pt[1][1] - pt[0][1];
        double bx = pt[2][0] - pt[1][0], by = pt[2][1] - pt[1][1];
        double a = hypot(ax, ay), b = hypot(bx, by);
        double lo = fmin(a, b), hi = fmax(a, b);
        if (fabs(ax * bx + ay * by) > 0.02 * a * b)
            return bad("footprint at %s: corners not square", which);
        if (fabs(hi / lo - w->length / w->width) > 0.03 * w->length / w->width)
            return bad("footprint at %s: %g x %g px, not in the ratio %g : %g", which, hi, lo,
                       w->length, w->width);
        /* in the plot itself it is to the plot's scale */
        if (x_within(d, i, "data") && fabs(hi / px_per_m - w->length) > 0.03 * w->length)
            return bad("footprint at %s: %.3f m long, want %.3f", which, hi / px_per_m, w->length);
        return NULL;
    }
    return bad("no footprint at %s (a polygon of class 'footprint %s')", which, which);
}

/* ---- words ---- */

static const char *words(const struct x_doc *d)
{
    int t = x_find(d, 0, "text", "title");
    if (t < 0 || !d->e[t].text || !*d->e[t].text)
        return bad("no title");
    int c = x_find(d, 0, "text", "caption");
    if (c < 0 || !d->e[c].text || strlen(d->e[c].text) < 10)
        return bad("no caption");
    int n = 0;
    bool s = false, e = false;
    for (int i = 0; i < d->n; i++)
        if (x_class(&d->e[i], "legend-label") && d->e[i].text) {
            n++;
            s |= strcmp(d->e[i].text, "start") == 0;
            e |= strcmp(d->e[i].text, "end") == 0;
        }
    if (n < 4 || !s || !e)
        return bad("legend: %d entries%s%s (want 4 or more, start and end among them)", n,
                   s ? "" : ", no start", e ? "" : ", no end");
    return NULL;
}

const char *pc_check_plot(const struct x_doc *d, const struct pc_want *w)
{
    const char *r = pc_check_numbers(d);
    struct axis ax, ay;
    struct area f;
    if (r || (r = read_axis(d, "x", &ax)) || (r = read_axis(d, "y", &ay)) || (r = frame(d, &f)))
        return r;
    if (fabs(ax.px_per_m - ay.px_per_m) > 0.005 * ax.px_per_m)
        return bad("x and y scales differ: %g and %g px/m", ax.px_per_m, ay.px_per_m);
    int g = x_find(d, 0, "g", "grid"), lines = 0;
    for (int i = g + 1; g >= 0 && i < d->n; i++)
        lines += d->e[i].parent == g && strcmp(d->e[i].name, "line") == 0;
    if (lines < ax.n + ay.n)
        return bad("grid: %d lines for %d ticks", lines, ax.n + ay.n);
    if ((r = path_fills(d, &f, w)) || (r = markers(d)) || (r = time_labels(d)) || (r = words(d)))
        return r;
    if (w->length > 0 &&
        ((r = footprint(d, "start", w, ax.px_per_m)) || (r = footprint(d, "end", w, ax.px_per_m))))
        return r;
    return NULL;
}
