/* Unit tests of keyboard driving without a terminal: the hold-to-drive
 * timing (first press, repeats, decay), ramping, mixing, speed levels, and
 * the key map. */
#include <check.h>
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "drive.h"
#include "keys.h"
#include "harness_suite.h"

static struct kn_drive d;
static struct kn_conf c;

static void setup(void)
{
    kn_conf_defaults(&c);
    kn_drive_init(&d, &c.drive);
}

/* Steps from t0 to t1 in 50 ms ticks. */
static void run(double t0, double t1)
{
    for (double t = t0 + 0.05; t <= t1 + 1e-9; t += 0.05)
        kn_drive_step(&d, t, 0.05, NULL);
}

START_TEST(first_press_bridges_the_autorepeat_delay)
{
    kn_drive_key(&d, KN_DIR_FORWARD, 0.0);
    ck_assert(kn_drive_keys_held(&d, 0.55)); /* 600 ms for the first press */
    ck_assert(!kn_drive_keys_held(&d, 0.65));
    /* the terminal starts repeating at 0.5 s, every 33 ms */
    for (double t = 0.5; t < 2.0; t += 0.033)
        kn_drive_key(&d, KN_DIR_FORWARD, t);
    ck_assert(kn_drive_keys_held(&d, 2.0 + 0.2));
    ck_assert(!kn_drive_keys_held(&d, 2.0 + 0.26)); /* 250 ms after the last repeat */
}
END_TEST

START_TEST(ramps_up_holds_and_decays)
{
    double t = 0;
    kn_drive_key(&d, KN_DIR_FORWARD, t);
    kn_drive_step(&d, 0.05, 0.05, NULL);
    ck_assert_double_eq_tol(d.target[0], 300, 1e-9);
    ck_assert_double_eq_tol(d.cmd[0], 40, 1e-9); /* 800 mm/s^2 * 50 ms */
    ck_assert_double_eq_tol(d.cmd[1], 40, 1e-9);
    for (t = 0.05; t < 1.5; t += 0.05) {
        kn_drive_key(&d, KN_DIR_FORWARD, t);
        kn_drive_step(&d, t + 0.05, 0.05, NULL);
    }
    ck_assert_double_eq_tol(d.cmd[0], 300, 1e-9); /* reached in 375 ms, then held */
    /* keys stop: target 0 after 250 ms, belts decay at 1600 mm/s^2 */
    double last = t;
    kn_drive_step(&d, last + 0.15, 0.15, NULL);
    ck_assert_double_eq_tol(d.cmd[0], 300, 1e-9);
    kn_drive_step(&d, last + 0.3, 0.1, NULL);
    ck_assert_double_eq_tol(d.target[0], 0, 1e-9);
    ck_assert_double_eq_tol(d.cmd[0], 140, 1e-9);
    kn_drive_step(&d, last + 0.4, 0.1, NULL);
    ck_assert_double_eq_tol(d.cmd[0], 0, 1e-9);
    ck_assert_double_eq_tol(d.cmd[1], 0, 1e-9);
}
END_TEST

START_TEST(turns_and_arcs)
{
    kn_drive_key(&d, KN_DIR_LEFT, 0);
    run(0, 0.5);
    /* pivot left: left belt back, right belt forward, half the speed level */
    ck_assert_double_eq_tol(d.cmd[0], -150, 1e-9);
    ck_assert_double_eq_tol(d.cmd[1], 150, 1e-9);
    kn_drive_stop(&d);
    kn_drive_key(&d, KN_DIR_FORWARD, 1);
    kn_drive_key(&d, KN_DIR_RIGHT, 1);
    run(1, 1.5);
    ck_assert_double_eq_tol(d.target[0], 450, 1e-9);
    ck_assert_double_eq_tol(d.target[1], 150, 1e-9);
}
END_TEST

START_TEST(latest_key_wins)
{
    kn_drive_key(&d, KN_DIR_FORWARD, 0);
    kn_drive_key(&d, KN_DIR_BACK, 0.1);
    kn_drive_step(&d, 0.15, 0.05, NULL);
    ck_assert_double_eq_tol(d.target[0], -300, 1e-9);
    kn_drive_key(&d, KN_DIR_LEFT, 0.2);
    kn_drive_key(&d, KN_DIR_RIGHT, 0.25);
    kn_drive_step(&d, 0.3, 0.05, NULL);
    ck_assert_double_eq_tol(d.target[0], -150, 1e-9);
    ck_assert_double_eq_tol(d.target[1], -450, 1e-9);
}
END_TEST

START_TEST(reversing_uses_the_decel_rate)
{
    d.cmd[0] = d.cmd[1] = 300;
    kn_drive_key(&d, KN_DIR_BACK, 0);
    kn_drive_step(&d, 0.05, 0.05, NULL);
    ck_assert_double_eq_tol(d.cmd[0], 220, 1e-9); /* 1600 mm/s^2 */
    run(0.05, 0.25);
    ck_assert_double_eq_tol(d.cmd[0], -60, 1e-9); /* through 0 at decel, then accel */
}
END_TEST

START_TEST(stop_is_immediate)
{
    kn_drive_key(&d, KN_DIR_FORWARD, 0);
    run(0, 0.5);
    ck_assert_double_gt(d.cmd[0], 100);
    kn_drive_stop(&d);
    ck_assert_double_eq(d.cmd[0], 0);
    ck_assert_double_eq(d.cmd[1], 0);
    ck_assert(!kn_drive_keys_held(&d, 0.5));
    kn_drive_step(&d, 0.55, 0.05, NULL);
    ck_assert_double_eq(d.cmd[0], 0);
}
END_TEST

START_TEST(speed_levels_stay_in_bounds)
{
    for (int i = 0; i < 40; i++)
        kn_drive_faster(&d);
    ck_assert_double_eq(d.speed, 800);
    for (int i = 0; i < 40; i++)
        kn_drive_slower(&d);
    ck_assert_double_eq(d.speed, 50);
    kn_drive_key(&d, KN_DIR_FORWARD, 0);
    kn_drive_step(&d, 0.05, 0.05, NULL);
    ck_assert_double_eq(d.target[0], 50);
}
END_TEST

START_TEST(mixing_keeps_curvature_at_the_limit)
{
    double out[2];
    kn_drive_mix(800, 400, 800, out);
    ck_assert_double_eq_tol(out[0], 800.0 * 400 / 1200, 1e-9);
    ck_assert_double_eq_tol(out[1], 800, 1e-9);
    kn_drive_mix(-100, 0, 800, out);
    ck_assert_double_eq(out[0], -100);
    ck_assert_double_eq(out[1], -100);
}
END_TEST

/* The flipper assist's belts: its limit, its climb only in place of a
 * forward drive, its backing down whatever the keys say. */
START_TEST(assisted_belts)
{
    double out[2];
    kn_drive_assisted((const double[2]){ 150.4, 150.4 }, INFINITY, NAN, out);
    ck_assert_double_eq(out[0], 150);
    ck_assert_double_eq(out[1], 150);
    kn_drive_assisted((const double[2]){ 300, -250 }, 100, NAN, out);
    ck_assert_double_eq(out[0], 100);
    ck_assert_double_eq(out[1], -100);
    /* the climb: a slow forward drive runs at the assist's speed */
    kn_drive_assisted((const double[2]){ 150, 150 }, INFINITY, 300, out);
    ck_assert_double_eq(out[0], 300);
    ck_assert_double_eq(out[1], 300);
    /* ... but not a stand-still, a turn on the spot or a reverse */
    kn_drive_assisted((const double[2]){ 0, 0 }, INFINITY, 300, out);
    ck_assert_double_eq(out[0], 0);
    ck_assert_double_eq(out[1], 0);
    kn_drive_assisted((const double[2]){ -100, 100 }, INFINITY, 300, out);
    ck_assert_double_eq(out[0], -100);
    ck_assert_double_eq(out[1], 100);
    kn_drive_assisted((const double[2]){ -100, -100 }, INFINITY, 300, out);
    ck_assert_double_eq(out[0], -100);
    /* backing down: whatever the keys say, even nothing */
    kn_drive_assisted((const double[2]){ 0, 0 }, INFINITY, -200, out);
    ck_assert_double_eq(out[0], -200);
    ck_assert_double_eq(out[1], -200);
    kn_drive_assisted((const double[2]){ 400, 400 }, INFINITY, -200, out);
    ck_assert_double_eq(out[1], -200);
}
END_TEST

START_TEST(joystick_target_overrides_keys)
{
    kn_drive_key(&d, KN_DIR_FORWARD, 0);
    double joy[2] = { -200, 200 };
    kn_drive_step(&d, 0.05, 0.05, joy);
    ck_assert_double_eq(d.target[0], -200);
    ck_assert_double_eq(d.target[1], 200);
}
END_TEST

START_TEST(key_map)
{
    struct kn_action a = kn_keys_lookup('w', 3);
    ck_assert_int_eq(a.act, KN_ACT_FORWARD);
    ck_assert_int_eq(a.preset, KN_DIR_FORWARD);
    ck_assert_int_eq(kn_keys_lookup('W', 3).act, KN_ACT_FORWARD);
    ck_assert_int_eq(kn_keys_lookup(KEY_UP, 3).act, KN_ACT_FORWARD);
    ck_assert_int_eq(kn_keys_lookup(KEY_LEFT, 3).preset, KN_DIR_LEFT);
    ck_assert_int_eq(kn_keys_lookup('d', 3).preset, KN_DIR_RIGHT);
    ck_assert_int_eq(kn_keys_lookup(' ', 3).act, KN_ACT_STOP);
    ck_assert_int_eq(kn_keys_lookup('e', 3).act, KN_ACT_ESTOP);
    ck_assert_int_eq(kn_keys_lookup('q', 3).act, KN_ACT_QUIT);
    ck_assert_int_eq(kn_keys_lookup('+', 3).act, KN_ACT_FASTER);
    ck_assert_int_eq(kn_keys_lookup('-', 3).act, KN_ACT_SLOWER);
    a = kn_keys_lookup('2', 3);
    ck_assert_int_eq(a.act, KN_ACT_PRESET);
    ck_assert_int_eq(a.preset, 1);
    ck_assert_int_eq(kn_keys_lookup('4', 3).act, KN_ACT_NONE);
    a = kn_keys_lookup('r', 3);
    ck_assert_int_eq(a.act, KN_ACT_FLIP_UP);
    ck_assert_uint_eq(a.mask, KN_FLIP_FL);
    a = kn_keys_lookup('j', 3);
    ck_assert_int_eq(a.act, KN_ACT_FLIP_DOWN);
    ck_assert_uint_eq(a.mask, KN_FLIP_RR);
    ck_assert_uint_eq(kn_keys_lookup('k', 3).mask, KN_FLIP_FRONT);
    ck_assert_uint_eq(kn_keys_lookup('o', 3).mask, KN_FLIP_REAR);
    ck_assert_uint_eq(kn_keys_lookup(';', 3).mask, KN_FLIP_ALL);
    ck_assert_int_eq(kn_keys_lookup('z', 3).act, KN_ACT_NONE);
    ck_assert_int_eq(kn_keys_lookup(KEY_F(1), 3).act, KN_ACT_NONE);
    ck_assert_int_eq(kn_keys_lookup(-1, 3).act, KN_ACT_NONE);
    ck_assert_int_eq(kn_keys_lookup('?', 3).act, KN_ACT_HELP);
    ck_assert_ptr_nonnull(kn_keys_help(true)[0]);
    /* the help screen's key table ends in the presets line */
    const char *const *h = kn_keys_help_screen(false);
    int n = 0;
    while (h[n])
        n++;
    ck_assert_int_gt(n, 1);
    ck_assert_ptr_nonnull(strstr(h[n - 1], "presets:"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("console drive");
    TCase *tc = tcase_create("drive");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, first_press_bridges_the_autorepeat_delay);
    tcase_add_test(tc, ramps_up_holds_and_decays);
    tcase_add_test(tc, turns_and_arcs);
    tcase_add_test(tc, latest_key_wins);
    tcase_add_test(tc, reversing_uses_the_decel_rate);
    tcase_add_test(tc, stop_is_immediate);
    tcase_add_test(tc, speed_levels_stay_in_bounds);
    tcase_add_test(tc, mixing_keeps_curvature_at_the_limit);
    tcase_add_test(tc, assisted_belts);
    tcase_add_test(tc, joystick_target_overrides_keys);
    tcase_add_test(tc, key_map);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
