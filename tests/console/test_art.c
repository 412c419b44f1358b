/* Unit tests of the flipper side view: the track, and each flipper drawn
 * from its axle the way its angle points (front to the right, + = tip
 * up), in box-drawing characters and in ASCII. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "art.h"
#include "harness_suite.h"

static struct kn_art a;

static const char *at(int r, int c)
{
    return a.cell[r][c];
}

START_TEST(flat_pose)
{
    kn_art_side(&a, 0, 0, false);
    char row[KN_ART_COLS * 4 + 1];
    kn_art_row(&a, KN_ART_AXLE_ROW, row, sizeof row);
    ck_assert_str_eq(row, " o------O            O------o ");
    kn_art_row(&a, KN_ART_AXLE_ROW - 1, row, sizeof row);
    ck_assert_str_eq(row, "        /------------\\        ");
    kn_art_row(&a, 0, row, sizeof row);
    ck_assert_str_eq(row, "                              ");
}
END_TEST

START_TEST(upright_flippers_are_posts)
{
    kn_art_side(&a, 90, 90, true);
    for (int r = 1; r < KN_ART_AXLE_ROW; r++) {
        ck_assert_str_eq(at(r, KN_ART_FRONT_COL), "\u2502");
        ck_assert_str_eq(at(r, KN_ART_REAR_COL), "\u2502");
    }
    ck_assert_str_eq(at(0, KN_ART_FRONT_COL), "\u25cf");
    ck_assert_str_eq(at(KN_ART_AXLE_ROW, KN_ART_FRONT_COL), "\u25c9");
    /* nothing beyond the axles on the axle row */
    ck_assert_str_eq(at(KN_ART_AXLE_ROW, KN_ART_FRONT_COL + 1), " ");
    ck_assert_str_eq(at(KN_ART_AXLE_ROW, KN_ART_REAR_COL - 1), " ");
}
END_TEST

START_TEST(directions)
{
    /* front tip up: the tip is above the axle row and right of the axle */
    kn_art_side(&a, 45, NAN, false);
    int tip_r = -1, tip_c = -1;
    for (int r = 0; r < KN_ART_ROWS; r++)
        for (int c = 0; c < KN_ART_COLS; c++)
            if (strcmp(at(r, c), "o") == 0) {
                tip_r = r;
                tip_c = c;
            }
    ck_assert_int_lt(tip_r, KN_ART_AXLE_ROW);
    ck_assert_int_gt(tip_c, KN_ART_FRONT_COL);
    ck_assert_str_eq(at(KN_ART_AXLE_ROW - 1, KN_ART_FRONT_COL + 2), "/");
    /* the rear flipper was left out (unknown angle) */
    ck_assert_str_eq(at(KN_ART_AXLE_ROW, KN_ART_REAR_COL - 1), " ");

    /* rear tip down: below the axle row, left of the rear axle */
    kn_art_side(&a, NAN, -45, false);
    tip_r = -1;
    for (int r = 0; r < KN_ART_ROWS; r++)
        for (int c = 0; c < KN_ART_COLS; c++)
            if (strcmp(at(r, c), "o") == 0) {
                tip_r = r;
                tip_c = c;
            }
    ck_assert_int_gt(tip_r, KN_ART_AXLE_ROW);
    ck_assert_int_lt(tip_c, KN_ART_REAR_COL);
    ck_assert_str_eq(at(KN_ART_AXLE_ROW + 1, KN_ART_REAR_COL - 2), "/");

    /* rear tip up leans the other way */
    kn_art_side(&a, NAN, 45, false);
    ck_assert_str_eq(at(KN_ART_AXLE_ROW - 1, KN_ART_REAR_COL - 2), "\\");
}
END_TEST

START_TEST(extreme_angles_stay_in_the_grid)
{
    for (double f = -180; f <= 180; f += 7.5) {
        kn_art_side(&a, f, -f, true);
        char row[KN_ART_COLS * 4 + 1];
        for (int r = 0; r < KN_ART_ROWS; r++) {
            kn_art_row(&a, r, row, sizeof row);
            ck_assert_uint_ge(strlen(row), KN_ART_COLS);
        }
    }
    char tiny[5];
    kn_art_row(&a, 0, tiny, sizeof tiny);
    ck_assert_uint_le(strlen(tiny), 4);
    kn_art_row(&a, 99, tiny, sizeof tiny);
    ck_assert_str_eq(tiny, "");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("console art");
    TCase *tc = tcase_create("art");
    tcase_add_test(tc, flat_pose);
    tcase_add_test(tc, upright_flippers_are_posts);
    tcase_add_test(tc, directions);
    tcase_add_test(tc, extreme_angles_stay_in_the_grid);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
