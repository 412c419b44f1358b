/* Trajectory writers for kenaf-trace: CSV for tools, an SVG top view for
 * people, a short printed table. Units come from the conversion module. */
#include "trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

void kn_trace_init(struct kn_trace *t, size_t max)
{
    memset(t, 0, sizeof *t);
    t->max = max;
}

void kn_trace_free(struct kn_trace *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

int kn_trace_add(struct kn_trace *t, const struct kn_krp_status *st)
{
    if (t->n == t->max) {
        t->dropped++;
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        if (cap > t->max)
            cap = t->max;
        struct kn_krp_status *ns = realloc(t->s, cap * sizeof *ns);
        if (!ns) {
            t->dropped++;
            return -1;
        }
        t->s = ns;
        t->cap = cap;
    }
    t->s[t->n++] = *st;
    return 0;
}

int kn_trace_write_csv(const struct kn_trace *t, FILE *f)
{
    fprintf(f, "time_s,x_m,y_m,z_m,roll_deg,pitch_deg,yaw_deg,count_l,count_r,"
               "speed_l_mm_s,speed_r_mm_s,fl_deg,fr_deg,rl_deg,rr_deg,battery_v,flags\n");
    for (size_t i = 0; i < t->n; i++) {
        const struct kn_krp_status *s = &t->s[i];
        fprintf(f, "%.6f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.3f,%u\n",
                kn_conv_us_to_s(s->time_us), kn_conv_mm_to_m(s->pos_mm[0]),
                kn_conv_mm_to_m(s->pos_mm[1]), kn_conv_mm_to_m(s->pos_mm[2]),
                kn_conv_cdeg_to_deg(s->rpy_cdeg[0]), kn_conv_cdeg_to_deg(s->rpy_cdeg[1]),
                kn_conv_cdeg_to_deg(s->rpy_cdeg[2]), s->crawler_count[0], s->crawler_count[1],
                s->crawler_speed_mm_s[0], s->crawler_speed_mm_s[1],
                kn_conv_cdeg_to_deg(s->flipper_cdeg[0]), kn_conv_cdeg_to_deg(s->flipper_cdeg[1]),
                kn_conv_cdeg_to_deg(s->flipper_cdeg[2]), kn_conv_cdeg_to_deg(s->flipper_cdeg[3]),
                kn_conv_mv_to_v(s->battery_mv), s->flags);
    }
    return ferror(f) ? -1 : 0;
}

/* A grid step that gives between 4 and 10 lines over span metres. */
static double grid_step(double span)
{
    static const double steps[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (span / steps[i] <= 10)
            return steps[i];
    return 250;
}

int kn_trace_write_svg(const struct kn_trace *t, FILE *f, const char *title)
{
    const double size = 640, pad = 48;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    for (size_t i = 0; i < t->n; i++) {
        double x = kn_conv_mm_to_m(t->s[i].pos_mm[0]), y = kn_conv_mm_to_m(t->s[i].pos_mm[1]);
        if (i == 0 || x < x0) x0 = x;
        if (i == 0 || x > x1) x1 = x;
        if (i == 0 || y < y0) y0 = y;
        if (i == 0 || y > y1) y1 = y;
    }
    /* at least half a metre of view, centred, same scale on both axes */
    double span = fmax(fmax(x1 - x0, y1 - y0), 0.5) * 1.15;
    double cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    x0 = cx - span / 2;
    y1 = cy + span / 2;
    double k = (size - 2 * pad) / span;
#define PX(x) (pad + ((x) - x0) * k)
#define PY(y) (pad + (y1 - (y)) * k)
    fprintf(f, "<?xml version='1.0' encoding='UTF-8'?>\n"
               "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
               "viewBox='0 0 %.0f %.0f' font-family='sans-serif' font-size='11'>\n"
               "<rect width='100%%' height='100%%' fill='white'/>\n",
            size, size + 24, size, size + 24);
    double g = grid_step(span);
    for (double v = ceil(x0 / g) * g; v <= x0 + span + 1e-9; v += g)
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>"
                   "<text x='%.1f' y='%.1f' text-anchor='middle' fill='#777'>%.2f</text>\n",
                PX(v), pad, PX(v), size - pad, PX(v), size - pad + 14, v);
    for (double v = ceil((y1 - span) / g) * g; v <= y1 + 1e-9; v += g)
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>"
                   "<text x='%.1f' y='%.1f' text-anchor='end' fill='#777'>%.2f</text>\n",
                pad, PY(v), size - pad, PY(v), pad - 4, PY(v) + 4, v);
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>x [m] (world frame, seen from above)</text>\n"
               "<text transform='translate(12 %.1f) rotate(-90)' text-anchor='middle'>y [m]</text>\n",
            size / 2, size - pad + 30, size / 2);
    if (t->n > 0) {
        fprintf(f, "<polyline fill='none' stroke='#1f5fbf' stroke-width='2' points='");
        for (size_t i = 0; i < t->n; i++)
            fprintf(f, "%.1f,%.1f ", PX(kn_conv_mm_to_m(t->s[i].pos_mm[0])),
                    PY(kn_conv_mm_to_m(t->s[i].pos_mm[1])));
        fprintf(f, "'/>\n");
        /* heading marks about every second of robot time */
        double next = 0;
        for (size_t i = 0; i < t->n; i++) {
            double ts = kn_conv_us_to_s(t->s[i].time_us) - kn_conv_us_to_s(t->s[0].time_us);
            if (ts + 1e-9 < next)
                continue;
            next = ts + 1.0;
            double x = kn_conv_mm_to_m(t->s[i].pos_mm[0]), y = kn_conv_mm_to_m(t->s[i].pos_mm[1]);
            double yaw = kn_conv_cdeg_to_rad(t->s[i].rpy_cdeg[2]), len = span / 30;
            fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#c33' stroke-width='1.5'/>\n",
                    PX(x), PY(y), PX(x + len * cos(yaw)), PY(y + len * sin(yaw)));
        }
        const struct kn_krp_status *a = &t->s[0], *b = &t->s[t->n - 1];
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='5' fill='#2a2'/><circle cx='%.1f' cy='%.1f' r='5' "
                   "fill='none' stroke='#c33' stroke-width='2'/>\n",
                PX(kn_conv_mm_to_m(a->pos_mm[0])), PY(kn_conv_mm_to_m(a->pos_mm[1])),
                PX(kn_conv_mm_to_m(b->pos_mm[0])), PY(kn_conv_mm_to_m(b->pos_mm[1])));
    }
    fprintf(f, "<text x='%.1f' y='18' text-anchor='middle' font-size='13'>%s (%zu samples; "
               "green start, red end, ticks = heading each second)</text>\n</svg>\n",
            size / 2, title ? title : "trajectory", t->n);
#undef PX
#undef PY
    return ferror(f) ? -1 : 0;
}

void kn_trace_print(const struct kn_trace *t, double every_s, FILE *f)
{
    if (t->n == 0) {
        fprintf(f, "no samples\n");
        return;
    }
    double t0 = kn_conv_us_to_s(t->s[0].time_us), next = 0, path = 0;
    fprintf(f, "%8s %9s %9s %8s %8s\n", "t [s]", "x [m]", "y [m]", "yaw [deg]", "pitch");
    for (size_t i = 0; i < t->n; i++) {
        const struct kn_krp_status *s = &t->s[i];
        double ts = kn_conv_us_to_s(s->time_us) - t0;
        if (i > 0)
            path += hypot(kn_conv_mm_to_m(s->pos_mm[0]) - kn_conv_mm_to_m(t->s[i - 1].pos_mm[0]),
                          kn_conv_mm_to_m(s->pos_mm[1]) - kn_conv_mm_to_m(t->s[i - 1].pos_mm[1]));
        if (ts + 1e-9 >= next || i == t->n - 1) {
            fprintf(f, "%8.2f %9.3f %9.3f %8.1f %8.1f\n", ts, kn_conv_mm_to_m(s->pos_mm[0]),
                    kn_conv_mm_to_m(s->pos_mm[1]), kn_conv_cdeg_to_deg(s->rpy_cdeg[2]),
                    kn_conv_cdeg_to_deg(s->rpy_cdeg[1]));
            next = ts + every_s;
        }
    }
    const struct kn_krp_status *a = &t->s[0], *b = &t->s[t->n - 1];
    fprintf(f, "%zu samples over %.2f s of robot time, path %.3f m, end %.3f m from start%s\n", t->n,
            kn_conv_us_to_s(b->time_us) - t0, path,
            hypot(kn_conv_mm_to_m(b->pos_mm[0]) - kn_conv_mm_to_m(a->pos_mm[0]),
                  kn_conv_mm_to_m(b->pos_mm[1]) - kn_conv_mm_to_m(a->pos_mm[1])),
            t->dropped ? " (samples over the cap were not kept)" : "");
}
