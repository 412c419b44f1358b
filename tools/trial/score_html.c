/* score.html and history.html (score.h): standalone pages, nothing
 * fetched. A trial's page: the score, the repetitions, the faults, and
 * the path from above with the gates (common/svgplot). A history: the
 * sessions in date order, as a table and as charts of the successes and
 * the mean repetition time per session: is the operator improving? */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "score.h"
#include "svgplot.h"

#define GATE_STYLE "stroke='#d62728' stroke-width='3'"
#define SUCC_STYLE "fill='#2ca02c'"
#define SUCC_LINE_STYLE "stroke='#2ca02c' stroke-width='1.5'"
#define TIME_STYLE "fill='#1f77b4'"
#define TIME_LINE_STYLE "stroke='#1f77b4' stroke-width='1.5'"

static const char STYLE[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:70em}"
    "table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num{text-align:right}figure{margin:1em 0}";

static void text(FILE *f, const char *s)
{
    kn_svgplot_text(f, s);
}

static void head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>", f);
    text(f, title);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>", STYLE);
    text(f, title);
    fputs("</h1>\n", f);
}

static void row(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th>", f);
    text(f, k);
    fputs("</th><td>", f);
    text(f, v);
    fputs("</td></tr>\n", f);
}

/* A plot drawn into memory first: the page takes the <svg> without its
 * XML declaration. */
struct mem {
    char *buf;
    size_t len;
    FILE *f;
};

/* A map (clip NULL) or a chart into m; -1 with nothing left open. */
static int plot_begin(struct kn_svgplot *p, const struct kn_svgplot_box *box,
                      const struct kn_svgplot_frame *fr, const char *clip, struct mem *m)
{
    *m = (struct mem){ NULL, 0, NULL };
    m->f = open_memstream(&m->buf, &m->len);
    if (m->f &&
        (clip ? kn_svgplot_begin_chart(p, box, fr, clip) : kn_svgplot_begin(p, box, fr)) == 0)
        return 0;
    if (m->f)
        fclose(m->f);
    free(m->buf);
    return -1;
}

/* The finished plot into the page. */
static void embed(FILE *f, struct kn_svgplot *p, struct mem *m, const char *cls)
{
    int rc = kn_svgplot_end(p, m->f);
    if (fclose(m->f) == 0 && rc == 0) {
        const char *svg = strstr(m->buf, "<svg");
        fprintf(f, "<figure class='%s'>\n", cls);
        if (svg)
            fputs(svg, f);
        fputs("</figure>\n", f);
    }
    free(m->buf);
}

static void path_plot(FILE *f, const struct kn_trialscore *s, const struct kn_trialscore_path *pa)
{
    struct kn_svgplot_track tr = { pa->n, pa->t, pa->x, pa->y, pa->yaw, "path" };
    struct kn_svgplot_box box;
    kn_svgplot_box_init(&box);
    kn_svgplot_track_box(&tr, &box);
    if (s->has_gates) {
        kn_svgplot_box_add(&box, s->gate_start[0], s->gate_start[1]);
        kn_svgplot_box_add(&box, s->gate_start[2], s->gate_start[3]);
        kn_svgplot_box_add(&box, s->gate_finish[0], s->gate_finish[1]);
        kn_svgplot_box_add(&box, s->gate_finish[2], s->gate_finish[3]);
    }
    char title[200];
    snprintf(title, sizeof title, "%s: the path from above", s->trial);
    struct kn_svgplot_frame fr = {
        .title = title,
        .caption = "The robot's origin; red: the start and finish gates (the figure 8: "
                   "its crossing line).",
        .x_label = "x [m]",
        .y_label = "y [m]",
        .max_w = 720,
        .max_h = 480,
        .min_span = 1,
        .margin = 0.05,
    };
    struct mem m;
    struct kn_svgplot p;
    if (plot_begin(&p, &box, &fr, NULL, &m))
        return;
    if (s->has_gates) {
        kn_svgplot_line(&p, "gate", GATE_STYLE, s->gate_start[0], s->gate_start[1],
                        s->gate_start[2], s->gate_start[3]);
        kn_svgplot_line(&p, "gate", GATE_STYLE, s->gate_finish[0], s->gate_finish[1],
                        s->gate_finish[2], s->gate_finish[3]);
        kn_svgplot_legend(&p, KN_SVGPLOT_LINE, GATE_STYLE, "gate");
    }
    if (pa->n > 0) {
        const struct kn_svgplot_robot robot = { 0, 0 };
        kn_svgplot_track(&p, &tr, &robot);
    }
    embed(f, &p, &m, "path");
}

int kn_trialscore_html(FILE *f, const struct kn_trialscore *s,
                       const struct kn_trialscore_path *path)
{
    char title[200], v[640];
    snprintf(title, sizeof title, "Trial %s", s->trial);
    head(f, title);
    fputs("<table class='summary'>\n", f);
    row(f, "apparatus", s->apparatus);
    row(f, "course", s->course);
    row(f, "program", s->program);
    row(f, "date", s->date);
    if (s->seed < 0)
        snprintf(v, sizeof v, "the scenario's");
    else
        snprintf(v, sizeof v, "%lld", s->seed);
    row(f, "seed", v);
    snprintf(v, sizeof v, "%s (%s): %s", s->verdict, s->mode, s->why);
    row(f, "verdict", v);
    snprintf(v, sizeof v, "%d of %d (%d needed), %d completed", s->successes, s->asked,
             s->min_successes, s->completed);
    row(f, "repetitions without a fault", v);
    snprintf(v, sizeof v, "%.3f", s->lower80);
    row(f, "success rate, 80 % lower bound (exact)", v);
    snprintf(v, sizeof v, "%.3f to %.3f", s->wilson_lo, s->wilson_hi);
    row(f, "success rate, Wilson 95 % interval", v);
    double mean = kn_trialscore_mean_time(s);
    if (isfinite(mean)) {
        snprintf(v, sizeof v, "%.2f s", mean);
        row(f, "mean repetition time", v);
    }
    fputs("</table>\n<h2>Repetitions</h2>\n<table class='reps'>\n"
          "<tr><th>#</th><th>time [s]</th><th>faults</th></tr>\n",
          f);
    for (int i = 0; i < s->completed; i++)
        fprintf(
            f, "<tr><td class='num'>%d</td><td class='num'>%.3f</td><td class='num'>%d</td></tr>\n",
            i + 1, s->times[i], s->rep_faults[i]);
    if (s->unfinished_s >= 0)
        fprintf(f,
                "<tr><td class='num'>%d</td><td class='num'>%.3f (unfinished)</td><td></td></tr>\n",
                s->completed + 1, s->unfinished_s);
    fputs("</table>\n<h2>Faults</h2>\n<table class='faults'>\n", f);
    for (int k = 0; k < KN_TRIALSCORE_NFAULTS; k++)
        fprintf(f, "<tr><th>%s</th><td class='num'>%d</td></tr>\n", kn_trialscore_fault_name(k),
                s->by_kind[k]);
    fprintf(f, "<tr><th>total</th><td class='num'>%d</td></tr>\n</table>\n", s->faults);
    path_plot(f, s, path);
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* One chart of a value per session (NAN: none). */
static void session_chart(FILE *f, const double *y, size_t n, const char *title,
                          const char *y_label, const char *clip, const char *style,
                          const char *line_style, double y_min)
{
    struct kn_svgplot_box box;
    kn_svgplot_box_init(&box);
    kn_svgplot_box_add(&box, 1, y_min);
    kn_svgplot_box_add(&box, (double)(n > 1 ? n : 2), y_min);
    for (size_t i = 0; i < n; i++)
        kn_svgplot_box_add(&box, (double)(i + 1), y[i]);
    if (box.y1 <= box.y0)
        kn_svgplot_box_add(&box, 1, box.y0 + 1);
    struct kn_svgplot_frame fr = {
        .title = title,
        .x_label = "session (in date order)",
        .y_label = y_label,
        .max_w = 560,
        .max_h = 240,
        .min_span = 1,
        .margin = 0.05,
    };
    struct mem m;
    struct kn_svgplot p;
    double *xs = malloc((n ? n : 1) * sizeof *xs);
    if (!xs || plot_begin(&p, &box, &fr, clip, &m)) {
        free(xs);
        return;
    }
    for (size_t i = 0; i < n; i++)
        xs[i] = (double)(i + 1);
    kn_svgplot_path(&p, "series", line_style, xs, y, n);
    for (size_t i = 0; i < n; i++)
        kn_svgplot_marker(&p, KN_SVGPLOT_DOT, "session", style, xs[i], y[i], 7);
    free(xs);
    embed(f, &p, &m, clip);
}

int kn_trialscore_history_html(FILE *f, const struct kn_trialscore *const *s, size_t n)
{
    char title[400];
    snprintf(title, sizeof title, "Trial history: %s, %s", n ? s[0]->trial : "",
             n ? s[0]->program : "");
    head(f, title);
    fputs("<table class='sessions'>\n<tr><th>#</th><th>date</th><th>successes</th>"
          "<th>completed</th><th>faults</th><th>mean time [s]</th><th>80 % lower bound</th>"
          "<th>verdict</th></tr>\n",
          f);
    double *succ = malloc((n ? n : 1) * sizeof *succ), *mean = malloc((n ? n : 1) * sizeof *mean);
    if (!succ || !mean) {
        free(succ);
        free(mean);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        succ[i] = s[i]->successes;
        mean[i] = kn_trialscore_mean_time(s[i]);
        fprintf(f, "<tr><td class='num'>%zu</td><td>", i + 1);
        text(f, s[i]->date);
        fprintf(f,
                "</td><td class='num'>%d of %d</td><td class='num'>%d</td><td class='num'>%d</td>"
                "<td class='num'>",
                s[i]->successes, s[i]->asked, s[i]->completed, s[i]->faults);
        if (isfinite(mean[i]))
            fprintf(f, "%.2f", mean[i]);
        else
            fputs("-", f);
        fprintf(f, "</td><td class='num'>%.3f</td><td>", s[i]->lower80);
        text(f, s[i]->verdict);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    session_chart(f, succ, n, "repetitions without a fault per session", "successes",
                  "kn-successes", SUCC_STYLE, SUCC_LINE_STYLE, 0);
    session_chart(f, mean, n, "mean repetition time per session", "time [s]", "kn-mean-time",
                  TIME_STYLE, TIME_LINE_STYLE, 0);
    free(succ);
    free(mean);
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
