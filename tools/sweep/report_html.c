/* report.html (report_data.h): one standalone page, nothing fetched from
 * the network: the summary, the boundary table, one chart per parameter
 * (pass rate with its Wilson interval against the value, the target
 * line, the boundary and its interval; drawn by common/svgplot), the
 * failure modes and the failing cases with their trajectory plots and
 * the command that reruns each alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_data.h"
#include "svgplot.h"

/* Rows of the failing-case table; report.json lists them all. */
#define MAX_FAIL_ROWS 1000

#define RATE_STYLE "fill='#1f77b4'"
#define RATE_LINE_STYLE "stroke='#1f77b4' stroke-width='1.5'"
#define WHISKER_STYLE "stroke='#1f77b4' stroke-width='1.5'"
#define TARGET_STYLE "stroke='#2ca02c' stroke-width='1.5' stroke-dasharray='6 4'"
#define BOUNDARY_STYLE "stroke='#d62728' stroke-width='2'"
#define INTERVAL_STYLE "fill='#d62728' fill-opacity='0.12' stroke='none'"

static const char STYLE[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:70em}"
    "table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num{text-align:right}code{font-size:90%}"
    "figure{margin:1em 0}p.note{color:#555}";

/* Where parameter k's value v sits on its chart's x axis: the value, or
 * its index for strings. */
static double chart_x(const struct kn_report_param *p, size_t v)
{
    return p->strings ? (double)v : p->values[v].num;
}

static void text(FILE *f, const char *s)
{
    kn_svgplot_text(f, s);
}

static void value_cell(FILE *f, const struct kn_report_param *p, long v, const char *cls)
{
    char buf[128];
    if (v < 0)
        snprintf(buf, sizeof buf, "none");
    else
        kn_report_value_text(p, (size_t)v, buf, sizeof buf);
    fprintf(f, "<td class='%s'>", cls);
    text(f, buf);
    fputs("</td>", f);
}

/* The chart of parameter k, inline. */
static void chart(FILE *f, const struct kn_report_sweep *s, const struct kn_report_stats *st,
                  size_t k)
{
    const struct kn_report_param *p = &s->params[k];
    const struct kn_sweepstats_cell *cells = st->cells[k];
    const struct kn_sweepstats_boundary *b = &st->bounds[k];
    struct kn_svgplot_box box;
    kn_svgplot_box_init(&box);
    kn_svgplot_box_add(&box, chart_x(p, 0), 0);
    kn_svgplot_box_add(&box, chart_x(p, p->nvalues - 1), 1);
    double span = box.x1 - box.x0;
    char title[160], xl[200], clip[32], caption[400];
    snprintf(title, sizeof title, "pass rate against %s", p->name);
    if (p->strings) {
        /* a string parameter: its values in order along x, named */
        size_t n = (size_t)snprintf(xl, sizeof xl, "%s:", p->name);
        for (size_t v = 0; v < p->nvalues && n < sizeof xl; v++)
            n += (size_t)snprintf(xl + n, sizeof xl - n, " %zu %s", v, p->values[v].str);
    } else if (p->unit[0]) {
        snprintf(xl, sizeof xl, "%s [%s]", p->name, p->unit);
    } else {
        snprintf(xl, sizeof xl, "%s", p->name);
    }
    snprintf(clip, sizeof clip, "kn-rate-%zu", k);
    snprintf(caption, sizeof caption,
             "Each dot: the pass rate of the cases with that value, the other parameters "
             "mixed; whisker: its Wilson 95 %% interval; dashed: the target %.3g.",
             s->target);
    struct kn_svgplot_frame fr = {
        .title = title,
        .caption = caption,
        .x_label = xl,
        .y_label = "pass rate",
        .max_w = 560,
        .max_h = 260,
        .min_span = span > 0 ? span * 0.05 : fmax(fabs(box.x0) * 0.5, 1),
        .margin = 0.05,
    };
    /* into a buffer first: the page takes the <svg> without its XML
     * declaration */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    struct kn_svgplot pl;
    if (!m || kn_svgplot_begin_chart(&pl, &box, &fr, clip) != 0) {
        if (m)
            fclose(m);
        free(buf);
        return;
    }
    if (p->harder && b->lo >= 0) {
        double x0 = chart_x(p, (size_t)b->lo), x1 = chart_x(p, (size_t)b->hi);
        const double px[4] = { x0, x1, x1, x0 }, py[4] = { pl.y0, pl.y0, pl.y1, pl.y1 };
        kn_svgplot_polygon(&pl, "interval", INTERVAL_STYLE, px, py, 4);
        kn_svgplot_legend(&pl, KN_SVGPLOT_SQUARE, INTERVAL_STYLE, "boundary's 95 % interval");
    }
    kn_svgplot_line(&pl, "target", TARGET_STYLE, pl.x0, s->target, pl.x1, s->target);
    kn_svgplot_legend(&pl, KN_SVGPLOT_LINE, TARGET_STYLE, "target rate");
    double *xs = malloc(p->nvalues * sizeof *xs), *ys = malloc(p->nvalues * sizeof *ys);
    size_t n = 0;
    for (size_t v = 0; xs && ys && v < p->nvalues; v++) {
        if (cells[v].n == 0)
            continue;
        xs[n] = chart_x(p, v);
        ys[n++] = cells[v].rate;
    }
    if (xs && ys)
        kn_svgplot_path(&pl, "rate-line", RATE_LINE_STYLE, xs, ys, n);
    free(xs);
    free(ys);
    for (size_t v = 0; v < p->nvalues; v++) {
        if (cells[v].n == 0)
            continue;
        double x = chart_x(p, v);
        kn_svgplot_line(&pl, "whisker", WHISKER_STYLE, x, cells[v].lo, x, cells[v].hi);
        kn_svgplot_marker(&pl, KN_SVGPLOT_DOT, "rate", RATE_STYLE, x, cells[v].rate, 7);
    }
    kn_svgplot_legend(&pl, KN_SVGPLOT_DOT, RATE_STYLE, "pass rate");
    kn_svgplot_legend(&pl, KN_SVGPLOT_LINE, WHISKER_STYLE, "Wilson 95 % interval");
    if (p->harder && b->point >= 0) {
        double x = chart_x(p, (size_t)b->point);
        kn_svgplot_line(&pl, "boundary", BOUNDARY_STYLE, x, pl.y0, x, pl.y1);
        kn_svgplot_legend(&pl, KN_SVGPLOT_LINE, BOUNDARY_STYLE, "boundary (point)");
    }
    int rc = kn_svgplot_end(&pl, m);
    if (fclose(m) == 0 && rc == 0) {
        const char *svg = strstr(buf, "<svg");
        fputs("<figure class='plot' data-parameter='", f);
        text(f, p->name);
        fputs("'>\n", f);
        if (svg)
            fputs(svg, f);
        fputs("</figure>\n", f);
    }
    free(buf);
}

/* One argument of a shell command, quoted when it must be. */
static void shell_word(FILE *f, const char *w)
{
    bool plain = *w != '\0';
    for (const char *c = w; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%", *c))
            plain = false;
    if (plain) {
        text(f, w);
        return;
    }
    fputc('\'', f);
    for (const char *c = w; *c; c++) {
        char one[2] = { *c, '\0' };
        text(f, *c == '\'' ? "'\\''" : one);
    }
    fputc('\'', f);
}

static void rerun(FILE *f, const struct kn_report_sweep *s, const char *id)
{
    fputs("<code>kenaf-sim-run --sweep ", f);
    shell_word(f, s->sweep_file ? s->sweep_file : "FILE");
    fprintf(f, " --case %s --", id);
    if (s->program) {
        const cJSON *a;
        cJSON_ArrayForEach(a, s->program)
        {
            fputc(' ', f);
            shell_word(f, a->valuestring);
        }
    } else {
        fputs(" PROGRAM", f);
    }
    fputs("</code>", f);
}

static void params_text(FILE *f, const struct kn_report_sweep *s, const struct kn_report_case *c)
{
    for (size_t k = 0; k < s->nparams; k++) {
        char buf[128];
        kn_report_value_text(&s->params[k], c->vidx[k], buf, sizeof buf);
        fputs(k ? " " : "", f);
        text(f, s->params[k].name);
        fputc('=', f);
        text(f, buf);
    }
}

static void boundary_table(FILE *f, const struct kn_report_sweep *s,
                           const struct kn_report_stats *st)
{
    fputs("<h2>Boundaries</h2>\n", f);
    bool any = false, confident = false;
    unsigned min_n = 0;
    for (size_t k = 0; k < s->nparams; k++) {
        const struct kn_report_param *p = &s->params[k];
        const struct kn_sweepstats_boundary *b = &st->bounds[k];
        if (!p->harder)
            continue;
        if (!any)
            fputs("<table id='boundaries'><tr><th>parameter</th><th>harder</th><th>target</th>"
                  "<th>point</th><th>confident</th><th>95 % interval</th></tr>\n",
                  f);
        any = true;
        confident |= b->confident >= 0;
        for (size_t v = 0; v < p->nvalues; v++)
            if (st->cells[k][v].n && (min_n == 0 || st->cells[k][v].n < min_n))
                min_n = st->cells[k][v].n;
        fputs("<tr data-parameter='", f);
        text(f, p->name);
        fputs("'><td>", f);
        text(f, p->name);
        fprintf(f, "</td><td>%s</td><td class='num'>%.3g</td>", p->harder > 0 ? "higher" : "lower",
                s->target);
        value_cell(f, p, b->point, "point");
        value_cell(f, p, b->confident, "confident");
        fputs("<td class='interval'>", f);
        if (b->lo >= 0) {
            char a[128], z[128];
            kn_report_value_text(p, (size_t)b->lo, a, sizeof a);
            kn_report_value_text(p, (size_t)b->hi, z, sizeof z);
            fputs("[", f);
            text(f, a);
            fputs(", ", f);
            text(f, z);
            fputs("]", f);
        } else {
            fputs("none", f);
        }
        fputs("</td></tr>\n", f);
    }
    if (!any) {
        fputs("<p>No parameter has a harder direction, so there is no boundary.</p>\n", f);
        return;
    }
    fputs("</table>\n<p class='note'><b>point</b>: the hardest value up to which every value "
          "passed at least the target rate; <b>confident</b>: the same with each value's Wilson "
          "lower bound; <b>95 % interval</b>: where the true boundary lies with 95 % "
          "confidence.",
          f);
    if (!confident) {
        /* the fewest cases that, all passing, put the lower bound at the
         * target */
        unsigned need = 1;
        double lo = 0, hi = 1;
        for (; need < 100000; need++) {
            kn_binom_wilson(need, need, KN_BINOM_Z95, &lo, &hi);
            if (lo >= s->target)
                break;
        }
        fprintf(f,
                " No value is confidently above the target: with %u case%s per value at the "
                "fewest, even all passing, the lower bound stays below %.3g; it takes %u of %u.",
                min_n, min_n == 1 ? "" : "s", s->target, need, need);
    }
    fputs("</p>\n", f);
}

static void failure_tables(FILE *f, const struct kn_report_sweep *s,
                           const struct kn_report_stats *st)
{
    fputs("<h2>Failure modes</h2>\n<table id='modes'><tr><th>mode</th><th>cases</th></tr>\n", f);
    for (int m = 1; m < KN_SWEEPSTATS_NMODES; m++)
        if (st->modes[m])
            fprintf(f, "<tr><td>%s</td><td class='num'>%u</td></tr>\n",
                    kn_sweepstats_mode_name((enum kn_sweepstats_mode)m), st->modes[m]);
    fputs("</table>\n<h2>Failing cases</h2>\n", f);
    size_t shown = 0, total = st->failed + st->errors;
    if (total == 0) {
        fputs("<p>None.</p>\n", f);
        return;
    }
    fputs("<table id='failures'><tr><th>case</th><th>parameters</th><th>status</th><th>mode</th>"
          "<th>why</th><th>rerun alone</th></tr>\n",
          f);
    for (size_t i = 0; i < s->ncases && shown < MAX_FAIL_ROWS; i++) {
        const struct kn_report_case *c = &s->cases[i];
        if (c->status != KN_SWEEPSTATS_FAIL && c->status != KN_SWEEPSTATS_ERROR)
            continue;
        shown++;
        fprintf(f, "<tr data-case='%s'><td><a href='cases/%s/trajectory.svg'>%s</a></td><td>",
                c->id, c->id, c->id);
        params_text(f, s, c);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>",
                c->status == KN_SWEEPSTATS_FAIL ? "fail" : "error",
                kn_sweepstats_mode_name(c->mode));
        text(f, c->why ? c->why : "");
        fputs("</td><td>", f);
        rerun(f, s, c->id);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (shown < total)
        fprintf(f, "<p class='note'>%zu more in report.json.</p>\n", total - shown);
}

static void page(FILE *f, const struct kn_report_sweep *s, const struct kn_report_stats *st)
{
    fputs("<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
          "<link rel='icon' href='data:,'>\n<title>Sweep ",
          f);
    text(f, s->name);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>Sweep ", STYLE);
    text(f, s->name);
    fputs("</h1>\n<p id='summary'>Scenario <b>", f);
    text(f, s->scenario);
    size_t judged = st->passed + st->failed;
    fprintf(f,
            "</b>, sweep hash <code>%s</code>: %zu cases, <b>%zu passed</b>, %zu failed, %zu "
            "errors, %zu not run",
            s->hash, s->ncases, st->passed, st->failed, st->errors, st->not_run);
    if (judged) {
        double lo, hi;
        kn_binom_wilson((unsigned)st->passed, (unsigned)judged, KN_BINOM_Z95, &lo, &hi);
        fprintf(f, "; pass rate %.3f (95 %% interval %.3f to %.3f)",
                (double)st->passed / (double)judged, lo, hi);
    }
    fprintf(f, "; %.1f s simulated; target rate %.3g.</p>\n", st->sim_s, s->target);
    boundary_table(f, s, st);
    fputs("<h2>Pass rate per value</h2>\n", f);
    for (size_t k = 0; k < s->nparams; k++)
        if (s->params[k].nvalues)
            chart(f, s, st, k);
    failure_tables(f, s, st);
    fputs("</body>\n</html>\n", f);
}

int kn_report_html(FILE *f, const struct kn_report_sweep *s, const struct kn_report_stats *st)
{
    struct kn_report_locale l;
    bool ok = kn_report_locale_begin(&l);
    page(f, s, st);
    kn_report_locale_end(&l);
    return ferror(f) || !ok ? -1 : 0;
}
