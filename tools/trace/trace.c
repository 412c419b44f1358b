/* Trajectory writers for kenaf-trace: CSV for tools, an SVG top view for
 * people (drawn by common/svgplot), a short printed table. Units come from
 * the conversion module. */
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

/* The path length and the start-to-end distance [m]. */
static void distances(const struct kn_trace *t, double *path, double *gap)
{
    *path = *gap = 0;
    for (size_t i = 1; i < t->n; i++)
        *path += hypot(kn_conv_mm_to_m(t->s[i].pos_mm[0]) - kn_conv_mm_to_m(t->s[i - 1].pos_mm[0]),
                       kn_conv_mm_to_m(t->s[i].pos_mm[1]) - kn_conv_mm_to_m(t->s[i - 1].pos_mm[1]));
    if (t->n > 0) {
        const struct kn_krp_status *a = &t->s[0], *b = &t->s[t->n - 1];
        *gap = hypot(kn_conv_mm_to_m(b->pos_mm[0]) - kn_conv_mm_to_m(a->pos_mm[0]),
                     kn_conv_mm_to_m(b->pos_mm[1]) - kn_conv_mm_to_m(a->pos_mm[1]));
    }
}

static void caption(const struct kn_trace *t, char *buf, size_t len)
{
    if (t->n == 0) {
        snprintf(buf, len, "No STATUS was received: nothing to show.");
        return;
    }
    double path, gap, t0 = kn_conv_us_to_s(t->s[0].time_us);
    distances(t, &path, &gap);
    snprintf(buf, len,
             "%zu samples over %.2f s of robot clock from t = %.2f s; path %.3f m, end %.3f m "
             "from the start.%s Top view of the robot's position (its body origin) in the world "
             "frame, x and y at one scale.",
             t->n, kn_conv_us_to_s(t->s[t->n - 1].time_us) - t0, t0, path, gap,
             t->dropped ? " Samples over the cap were not kept." : "");
}

int kn_trace_write_svg(const struct kn_trace *t, FILE *f, const char *title,
                       const struct kn_svgplot_robot *robot)
{
    size_t n = t->n ? t->n : 1;
    double *tt = malloc(n * sizeof *tt), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y),
           *yaw = malloc(n * sizeof *yaw);
    int rc = -1;
    if (tt && x && y && yaw) {
        for (size_t i = 0; i < t->n; i++) {
            tt[i] = kn_conv_us_to_s(t->s[i].time_us);
            x[i] = kn_conv_mm_to_m(t->s[i].pos_mm[0]);
            y[i] = kn_conv_mm_to_m(t->s[i].pos_mm[1]);
            yaw[i] = kn_conv_cdeg_to_rad(t->s[i].rpy_cdeg[2]);
        }
        struct kn_svgplot_track tr = { t->n, tt, x, y, yaw, "path of the robot" };
        char cap[512];
        caption(t, cap, sizeof cap);
        rc = kn_svgplot_trajectory(f, &tr, robot, title ? title : "trajectory", cap);
    }
    free(tt);
    free(x);
    free(y);
    free(yaw);
    return rc;
}

void kn_trace_print(const struct kn_trace *t, double every_s, FILE *f)
{
    if (t->n == 0) {
        fprintf(f, "no samples\n");
        return;
    }
    double t0 = kn_conv_us_to_s(t->s[0].time_us), next = 0, path, gap;
    fprintf(f, "%8s %9s %9s %8s %8s\n", "t [s]", "x [m]", "y [m]", "yaw [deg]", "pitch");
    for (size_t i = 0; i < t->n; i++) {
        const struct kn_krp_status *s = &t->s[i];
        double ts = kn_conv_us_to_s(s->time_us) - t0;
        if (ts + 1e-9 >= next || i == t->n - 1) {
            fprintf(f, "%8.2f %9.3f %9.3f %8.1f %8.1f\n", ts, kn_conv_mm_to_m(s->pos_mm[0]),
                    kn_conv_mm_to_m(s->pos_mm[1]), kn_conv_cdeg_to_deg(s->rpy_cdeg[2]),
                    kn_conv_cdeg_to_deg(s->rpy_cdeg[1]));
            next = ts + every_s;
        }
    }
    distances(t, &path, &gap);
    fprintf(f, "%zu samples over %.2f s of robot time, path %.3f m, end %.3f m from start%s\n",
            t->n, kn_conv_us_to_s(t->s[t->n - 1].time_us) - t0, path, gap,
            t->dropped ? " (samples over the cap were not kept)" : "");
}
