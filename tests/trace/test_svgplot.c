/* The shared plot writer (common/svgplot): its output parsed as XML and
 * checked for what makes a plot readable (plotcheck.h) on the demo's
 * kind of path (a 0.1 m square, smaller than the robot) and a long one;
 * scale and ticks from the data; escaped text; valid SVG for NaN, inf,
 * huge, empty and one-point input and random text; '.' decimals under a
 * comma locale. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comma_locale.h"
#include "harness_suite.h"
#include "plotcheck.h"
#include "svgplot.h"
#include "xmlread.h"

static const struct kn_svgplot_robot kenaf = { 0.50, 0.30 };

/* Writes through a real FILE and parses the result (the caller frees
 * both). */
static char *render(const struct kn_svgplot_track *tr, const struct kn_svgplot_robot *robot,
                    const char *title, struct x_doc *d)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(kn_svgplot_trajectory(f, tr, robot, title, "a caption that says what it is"),
                     0);
    size_t len;
    char *buf = x_read_stream(f, &len);
    ck_assert_ptr_nonnull(buf);
    fclose(f);
    if (x_parse(buf, len, d) != 0)
        ck_abort_msg("not well-formed XML: %s\n%.2000s", d->err, buf);
    return buf;
}

/* The demo's path: a square of side metres driven in legs of `leg`
 * seconds with a pivot of `turn` seconds at each corner, sampled every
 * 50 ms, ending where it began. */
struct square {
    double t[2000], x[2000], y[2000], yaw[2000];
    size_t n;
};

static void make_square(struct square *s, double side, double leg, double turn)
{
    static const double cx[5] = { 0, 1, 1, 0, 0 }, cy[5] = { 0, 0, 1, 1, 0 };
    s->n = 0;
    double t = 3.25; /* the robot clock was already running */
    for (int k = 0; k < 4; k++) {
        for (double u = 0; u < leg; u += 0.05, t += 0.05) {
            s->t[s->n] = t;
            s->x[s->n] = side * (cx[k] + (cx[k + 1] - cx[k]) * u / leg);
            s->y[s->n] = side * (cy[k] + (cy[k + 1] - cy[k]) * u / leg);
            s->yaw[s->n++] = k * M_PI / 2;
        }
        for (double u = 0; u < turn; u += 0.05, t += 0.05) {
            s->t[s->n] = t;
            s->x[s->n] = side * cx[k + 1];
            s->y[s->n] = side * cy[k + 1];
            s->yaw[s->n++] = (k + u / turn) * M_PI / 2;
        }
    }
    s->t[s->n] = t;
    s->x[s->n] = s->y[s->n] = 0;
    s->yaw[s->n++] = 2 * M_PI;
}

static struct kn_svgplot_track track_of(const struct square *s)
{
    return (struct kn_svgplot_track){ s->n, s->t, s->x, s->y, s->yaw, "path of the robot" };
}

START_TEST(demo_square_reads_well)
{
    static struct square s;
    make_square(&s, 0.1, 1.5, 1.0);
    struct kn_svgplot_track tr = track_of(&s);
    struct x_doc d;
    char *svg = render(&tr, &kenaf, "square on flat", &d);
    struct pc_want want = { 0.50, 0.30, 0.7, true };
    const char *why = pc_check_plot(&d, &want);
    ck_assert_msg(why == NULL, "%s", why);
    /* the robot is larger than the square: its footprints are drawn to
     * scale beside the plot, not over it */
    int fp = x_find(&d, 0, "polygon", "footprint");
    ck_assert_int_ge(fp, 0);
    ck_assert(x_within(&d, fp, "side-panel"));
    /* ticks: 0.1 m of data at a round step of 0.02 m */
    ck_assert_ptr_nonnull(strstr(svg, ">0.06</text>"));
    x_free(&d);
    free(svg);
}
END_TEST

START_TEST(long_path_has_footprints_in_the_plot)
{
    static struct square s;
    make_square(&s, 3.0, 4.0, 1.0);
    struct kn_svgplot_track tr = track_of(&s);
    struct x_doc d;
    char *svg = render(&tr, &kenaf, "a 3 m square", &d);
    struct pc_want want = { 0.50, 0.30, 0.7, true };
    const char *why = pc_check_plot(&d, &want);
    ck_assert_msg(why == NULL, "%s", why);
    int fp = x_find(&d, 0, "polygon", "footprint");
    ck_assert(fp >= 0 && x_within(&d, fp, "data"));
    ck_assert_int_eq(x_count(&d, "side-panel"), 0);
    /* a 3 m square gets a 0.5 m step */
    ck_assert_ptr_nonnull(strstr(svg, ">1.5</text>"));
    x_free(&d);
    free(svg);
}
END_TEST

START_TEST(nice_steps)
{
    ck_assert_double_eq_tol(kn_svgplot_nice_step(0.013), 0.02, 1e-12);
    ck_assert_double_eq_tol(kn_svgplot_nice_step(0.02), 0.02, 1e-12);
    ck_assert_double_eq_tol(kn_svgplot_nice_step(0.3), 0.5, 1e-12);
    ck_assert_double_eq_tol(kn_svgplot_nice_step(7), 10, 1e-12);
    ck_assert_double_eq_tol(kn_svgplot_nice_step(1e-7), 1e-7, 1e-19);
    ck_assert_double_eq(kn_svgplot_nice_step(NAN), 1);
    ck_assert_double_eq(kn_svgplot_nice_step(-1), 1);
}
END_TEST

START_TEST(text_is_escaped)
{
    static struct square s;
    make_square(&s, 0.1, 1.0, 0.5);
    struct kn_svgplot_track tr = track_of(&s);
    struct x_doc d;
    char *svg = render(&tr, &kenaf, "a<b & c>'d\" \xff\xfe\x01 \xc3\xa9", &d);
    int t = x_find(&d, 0, "text", "title");
    ck_assert_int_ge(t, 0);
    ck_assert_str_eq(d.e[t].text, "a<b & c>'d\" ??? \xc3\xa9");
    x_free(&d);
    free(svg);
}
END_TEST

/* ---- robustness ---- */

static uint64_t rng = 12345;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A number a careless caller might pass. */
static double wild(void)
{
    static const double odd[] = { NAN,    INFINITY, -INFINITY, 1e300, -1e300,
                                  1e-300, 0,        -0.0,      1e15,  5e-324 };
    uint64_t r = next() % 16;
    if (r < 10)
        return odd[r];
    return ((double)(next() % 2000001) - 1000000) / 1000.0;
}

START_TEST(any_input_gives_valid_svg)
{
    static double t[256], x[256], y[256], yaw[256];
    for (int round = 0; round < 400; round++) {
        size_t n = round % 7 == 0 ? 0 : round % 7 == 1 ? 1 : next() % 256;
        bool calm = next() % 2; /* mostly ordinary numbers, a few wild ones */
        for (size_t i = 0; i < n; i++) {
            t[i] = calm && next() % 8 ? (double)i * 0.05 : wild();
            x[i] = calm && next() % 8 ? (double)(next() % 1000) / 1000 : wild();
            y[i] = calm && next() % 8 ? (double)(next() % 1000) / 1000 : wild();
            yaw[i] = calm && next() % 8 ? (double)(next() % 628) / 100 : wild();
        }
        char title[40];
        for (size_t k = 0; k + 1 < sizeof title; k++)
            title[k] = (char)(1 + next() % 255);
        title[sizeof title - 1] = '\0';
        struct kn_svgplot_track tr = { n, t, x, y, next() % 4 ? yaw : NULL, NULL };
        struct kn_svgplot_robot robot = { wild(), wild() };
        struct x_doc d;
        char *svg = render(&tr, next() % 2 ? &robot : &kenaf, title, &d);
        const char *why = pc_check_numbers(&d);
        ck_assert_msg(why == NULL, "round %d: %s", round, why);
        ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
        x_free(&d);
        free(svg);
    }
}
END_TEST

/* A chart (kn_svgplot_begin_chart, the sweep report's): x and y each at
 * their own scale filling the area (0.1 .. 0.3 wide, 0 .. 1 high would be
 * a sliver at one scale), ticks of their own, a marker of a fixed pixel
 * size where its point is, and the clip path under the id given. */
START_TEST(chart_has_an_own_scale_per_axis)
{
    struct kn_svgplot_box box;
    kn_svgplot_box_init(&box);
    kn_svgplot_box_add(&box, 0.1, 0);
    kn_svgplot_box_add(&box, 0.3, 1);
    struct kn_svgplot_frame fr = { "rate", NULL, "h [m]", "pass rate", 500, 250, 0.01, 0 };
    struct kn_svgplot p;
    ck_assert_int_eq(kn_svgplot_begin_chart(&p, &box, &fr, "kn-rate-3\"'"), 0);
    ck_assert_double_eq_tol(p.w, 500, 1e-9);
    ck_assert_double_eq_tol(p.h, 250, 1e-9);
    ck_assert_double_eq_tol(p.step, 0.05, 1e-12);
    ck_assert_double_eq_tol(p.ystep, 0.2, 1e-12);
    kn_svgplot_marker(&p, KN_SVGPLOT_DOT, "rate", "fill='#000'", 0.2, 0.5, 8);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(kn_svgplot_end(&p, f), 0);
    size_t len;
    char *svg = x_read_stream(f, &len);
    fclose(f);
    struct x_doc d;
    if (x_parse(svg, len, &d) != 0)
        ck_abort_msg("not well-formed XML: %s\n%.2000s", d.err, svg);
    /* the middle of the data is the middle of the area */
    int dot = x_find(&d, 0, "circle", "rate");
    ck_assert_int_ge(dot, 0);
    double cx = atof(x_attr(&d.e[dot], "cx")), cy = atof(x_attr(&d.e[dot], "cy"));
    ck_assert_double_eq_tol(cx, p.map.left + 250, 0.11);
    ck_assert_double_eq_tol(cy, p.map.top + 125, 0.11);
    ck_assert_str_eq(x_attr(&d.e[dot], "r"), "4.0");
    /* y ticks at 0, 0.2, ..., 1 and x ticks at 0.1, 0.15, ..., 0.3 */
    int ylabels = 0, xlabels = 0;
    for (int i = 0; i < d.n; i++)
        if (x_class(&d.e[i], "tick-label"))
            *(x_within(&d, i, "y") ? &ylabels : &xlabels) += 1;
    ck_assert_int_eq(ylabels, 6);
    ck_assert_int_eq(xlabels, 5);
    ck_assert_ptr_nonnull(strstr(svg, "<clipPath id='kn-rate-3'>"));
    ck_assert_ptr_nonnull(strstr(svg, "clip-path='url(#kn-rate-3)'"));
    x_free(&d);
    free(svg);
}
END_TEST

START_TEST(decimals_are_points_under_a_comma_locale)
{
    if (!h_comma_locale_enter("decimals_are_points_under_a_comma_locale"))
        return;
    static struct square s;
    make_square(&s, 0.1, 1.5, 1.0);
    struct kn_svgplot_track tr = track_of(&s);
    struct x_doc d;
    char *svg = render(&tr, &kenaf, "square", &d);
    struct pc_want want = { 0.50, 0.30, 0.7, true };
    const char *why = pc_check_plot(&d, &want);
    ck_assert_msg(why == NULL, "%s", why);
    /* numbers in text too: labels, legend, scale bar */
    for (int i = 0; i < d.n; i++) {
        const char *t = d.e[i].text;
        for (size_t k = 1; t && t[k] && t[k + 1]; k++)
            ck_assert_msg(!(t[k] == ',' && t[k - 1] >= '0' && t[k - 1] <= '9' && t[k + 1] >= '0' &&
                            t[k + 1] <= '9'),
                          "a decimal comma in \"%s\"", t);
    }
    ck_assert_str_eq(localeconv()->decimal_point, ","); /* and the caller's locale is left alone */
    x_free(&d);
    free(svg);
    setlocale(LC_ALL, "C");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("svgplot");
    TCase *tc = tcase_create("svgplot");
    tcase_add_test(tc, demo_square_reads_well);
    tcase_add_test(tc, long_path_has_footprints_in_the_plot);
    tcase_add_test(tc, nice_steps);
    tcase_add_test(tc, text_is_escaped);
    tcase_add_test(tc, chart_has_an_own_scale_per_axis);
    suite_add_tcase(s, tc);
    TCase *fuzz = tcase_create("robustness");
    tcase_set_timeout(fuzz, 120); /* 400 plots; slow under sanitizers or valgrind */
    tcase_add_test(fuzz, any_input_gives_valid_svg);
    suite_add_tcase(s, fuzz);
    TCase *loc = tcase_create("locale");
    tcase_add_unchecked_fixture(loc, h_comma_locale_setup, h_comma_locale_teardown);
    tcase_add_test(loc, decimals_are_points_under_a_comma_locale);
    suite_add_tcase(s, loc);
    return h_run_suite(s);
}
