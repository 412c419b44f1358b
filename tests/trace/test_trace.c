/* kenaf-trace writers: a synthetic 1 m square gives the expected CSV rows,
 * an SVG with one point per sample, and the printed path length. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "xmlread.h"
#include "harness_suite.h"

static void square(struct kn_trace *t, int per_side)
{
    static const int cx[5] = { 0, 1000, 1000, 0, 0 }, cy[5] = { 0, 0, 1000, 1000, 0 };
    uint64_t us = 5000000;
    for (int side = 0; side < 4; side++) {
        for (int k = 0; k < per_side; k++) {
            struct kn_krp_status s = { 0 };
            s.time_us = us;
            us += 100000;
            s.pos_mm[0] = cx[side] + (cx[side + 1] - cx[side]) * k / per_side;
            s.pos_mm[1] = cy[side] + (cy[side + 1] - cy[side]) * k / per_side;
            s.rpy_cdeg[2] = side == 3 ? -9000 : side * 9000;
            s.battery_mv = 24000;
            ck_assert_int_eq(kn_trace_add(t, &s), 0);
        }
    }
    struct kn_krp_status end = { 0 };
    end.time_us = us;
    ck_assert_int_eq(kn_trace_add(t, &end), 0);
}

/* Writes through a real FILE (as kenaf-trace does) and reads it back. */
static char *capture(struct kn_trace *t, int what)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    if (what == 0)
        ck_assert_int_eq(kn_trace_write_csv(t, f), 0);
    else if (what == 1)
        ck_assert_int_eq(kn_trace_write_svg(t, f, "square", NULL), 0);
    else
        kn_trace_print(t, 1.0, f);
    size_t len;
    char *buf = x_read_stream(f, &len);
    ck_assert_ptr_nonnull(buf);
    fclose(f);
    return buf;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(csv_has_a_row_per_sample)
{
    struct kn_trace t;
    kn_trace_init(&t, 1000);
    square(&t, 10);
    char *csv = capture(&t, 0);
    ck_assert_int_eq(count(csv, "\n"), 42); /* header + 41 samples */
    ck_assert(strstr(csv, "\n5.000000,0.0000,0.0000,") != NULL);
    ck_assert(strstr(csv, "\n6.000000,1.0000,0.0000,0.0000,0.00,0.00,90.00,") != NULL);
    free(csv);
    kn_trace_free(&t);
}
END_TEST

START_TEST(svg_draws_every_sample)
{
    struct kn_trace t;
    kn_trace_init(&t, 1000);
    square(&t, 10);
    char *svg = capture(&t, 1);
    ck_assert(strncmp(svg, "<?xml", 5) == 0);
    ck_assert(strstr(svg, "</svg>") != NULL);
    const char *pts = strstr(svg, "<polyline");
    ck_assert_ptr_nonnull(pts);
    const char *endp = strstr(pts, "'/>");
    int commas = 0;
    for (const char *p = pts; p < endp; p++)
        commas += *p == ',';
    ck_assert_int_eq(commas, 41);
    ck_assert(strstr(svg, "41 samples") != NULL);
    free(svg);
    kn_trace_free(&t);
}
END_TEST

START_TEST(summary_measures_the_path)
{
    struct kn_trace t;
    kn_trace_init(&t, 1000);
    square(&t, 10);
    char *txt = capture(&t, 2);
    ck_assert_msg(strstr(txt, "41 samples over 4.00 s of robot time, path 4.000 m, end 0.000 m") !=
                      NULL,
                  "%s", txt);
    free(txt);
    kn_trace_free(&t);
}
END_TEST

START_TEST(cap_counts_what_it_drops)
{
    struct kn_trace t;
    kn_trace_init(&t, 3);
    struct kn_krp_status s = { 0 };
    for (int i = 0; i < 5; i++)
        kn_trace_add(&t, &s);
    ck_assert_uint_eq(t.n, 3);
    ck_assert_uint_eq(t.dropped, 2);
    kn_trace_free(&t);
}
END_TEST

START_TEST(empty_trace_is_valid_output)
{
    struct kn_trace t;
    kn_trace_init(&t, 10);
    char *svg = capture(&t, 1);
    ck_assert(strstr(svg, "</svg>") != NULL);
    free(svg);
    char *txt = capture(&t, 2);
    ck_assert_str_eq(txt, "no samples\n");
    free(txt);
    kn_trace_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("writers");
    tcase_add_test(tc, csv_has_a_row_per_sample);
    tcase_add_test(tc, svg_draws_every_sample);
    tcase_add_test(tc, summary_measures_the_path);
    tcase_add_test(tc, cap_counts_what_it_drops);
    tcase_add_test(tc, empty_trace_is_valid_output);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
