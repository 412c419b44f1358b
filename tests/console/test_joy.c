/* Unit tests of the gamepad state without a device: axis scaling and
 * deadzone, differential mixing, presses firing once, axis directions as
 * buttons, held flipper moves, and the state at plug-in. */
#include <check.h>
#include <stdlib.h>

#include <linux/input-event-codes.h>

#include "conf.h"
#include "joy.h"
#include "harness_suite.h"

static struct kn_conf c;
static struct kn_joy j;
static struct kn_action edges[KN_JOY_MAX_EDGES];

static void setup(void)
{
    kn_conf_defaults(&c);
    kn_joy_init(&j, &c);
    /* an Xbox-style pad: sticks -32768..32767, triggers 0..1023, hat -1..1 */
    kn_joy_set_range(&j, ABS_X, -32768, 32767, 0);
    kn_joy_set_range(&j, ABS_Y, -32768, 32767, 0);
    kn_joy_set_range(&j, ABS_Z, 0, 1023, 0);
    kn_joy_set_range(&j, ABS_RZ, 0, 1023, 0);
    kn_joy_set_range(&j, ABS_HAT0Y, -1, 1, 0);
}

static int ev(unsigned type, unsigned code, int value)
{
    return kn_joy_event(&j, type, code, value, edges);
}

START_TEST(axis_scaling_and_deadzone)
{
    ev(EV_ABS, ABS_Y, 0);
    ck_assert_double_eq(kn_joy_axis(&j, ABS_Y), 0);
    ev(EV_ABS, ABS_Y, 4000); /* about 12 %: inside the 15 % deadzone */
    ck_assert_double_eq(kn_joy_axis(&j, ABS_Y), 0);
    ev(EV_ABS, ABS_Y, 32767);
    ck_assert_double_eq_tol(kn_joy_axis(&j, ABS_Y), 1, 1e-4);
    ev(EV_ABS, ABS_Y, -32768);
    ck_assert_double_eq_tol(kn_joy_axis(&j, ABS_Y), -1, 1e-4);
    /* half-way out of the deadzone is half scale */
    ev(EV_ABS, ABS_Y, (int)(32767.5 * (0.15 + 0.85 / 2) - 0.5));
    ck_assert_double_eq_tol(kn_joy_axis(&j, ABS_Y), 0.5, 1e-3);
    /* a 0..255 stick centred at 127.5 */
    kn_joy_set_range(&j, ABS_RX, 0, 255, 128);
    ck_assert_double_eq(kn_joy_axis(&j, ABS_RX), 0);
    ck_assert_double_eq(kn_joy_axis(&j, ABS_RY), 0); /* unknown range */
}
END_TEST

START_TEST(sticks_to_belts)
{
    double b[2];
    ck_assert(!kn_joy_belts(&j, 300, 800, b));
    ev(EV_ABS, ABS_Y, -32768); /* stick forward (up is negative on evdev) */
    ck_assert(kn_joy_belts(&j, 300, 800, b));
    ck_assert_double_eq_tol(b[0], 300, 0.05);
    ck_assert_double_eq_tol(b[1], 300, 0.05);
    ev(EV_ABS, ABS_Y, 0);
    ev(EV_ABS, ABS_X, 32767); /* stick right: turn right in place */
    ck_assert(kn_joy_belts(&j, 300, 800, b));
    ck_assert_double_eq_tol(b[0], 180, 0.05);
    ck_assert_double_eq_tol(b[1], -180, 0.05);
    ev(EV_ABS, ABS_Y, -32768); /* forward and right, scaled into the limit */
    ck_assert(kn_joy_belts(&j, 800, 800, b));
    ck_assert_double_eq_tol(b[0], 800, 0.1);
    ck_assert_double_eq_tol(b[1], 800.0 * (800 - 480) / (800 + 480), 0.1);
}
END_TEST

START_TEST(presses_fire_once)
{
    ck_assert_int_eq(ev(EV_KEY, BTN_SOUTH, 1), 1);
    ck_assert_int_eq(edges[0].act, KN_ACT_STOP);
    ck_assert_int_eq(ev(EV_KEY, BTN_SOUTH, 2), 0); /* auto-repeat */
    ck_assert_int_eq(ev(EV_KEY, BTN_SOUTH, 0), 0);
    ck_assert_int_eq(ev(EV_KEY, BTN_SOUTH, 1), 1);
    ck_assert_int_eq(ev(EV_KEY, BTN_NORTH, 1), 1);
    ck_assert_int_eq(edges[0].act, KN_ACT_PRESET);
    ck_assert_int_eq(edges[0].preset, 1);
    ck_assert_int_eq(ev(EV_KEY, BTN_EAST, 1), 1);
    ck_assert_int_eq(edges[0].act, KN_ACT_ESTOP);
    ck_assert_int_eq(ev(EV_KEY, BTN_Z, 1), 0); /* not bound */
    ck_assert_int_eq(ev(EV_SYN, SYN_REPORT, 0), 0);
    ck_assert_int_eq(ev(EV_KEY, 0x7fff, 1), 0); /* out of range: ignored */
    ck_assert_int_eq(ev(EV_ABS, 0x7fff, 1), 0);
}
END_TEST

START_TEST(axis_directions_as_buttons)
{
    ck_assert_int_eq(ev(EV_ABS, ABS_HAT0Y, -1), 1); /* d-pad up */
    ck_assert_int_eq(edges[0].act, KN_ACT_FASTER);
    ck_assert_int_eq(ev(EV_ABS, ABS_HAT0Y, 0), 0);
    ck_assert_int_eq(ev(EV_ABS, ABS_HAT0Y, 1), 1);
    ck_assert_int_eq(edges[0].act, KN_ACT_SLOWER);
    /* triggers: held flipper moves, pressed past three quarters */
    int dir[4];
    ev(EV_ABS, ABS_Z, 700);
    ck_assert(!kn_joy_flippers(&j, dir));
    ck_assert_int_eq(ev(EV_ABS, ABS_Z, 900), 0); /* held actions are no edges */
    ck_assert(kn_joy_flippers(&j, dir));
    ck_assert_int_eq(dir[0], -1);
    ck_assert_int_eq(dir[1], -1);
    ck_assert_int_eq(dir[2], 0);
    ck_assert_int_eq(dir[3], 0);
}
END_TEST

START_TEST(held_flipper_buttons)
{
    int dir[4];
    ev(EV_KEY, BTN_TR, 1);
    ck_assert(kn_joy_flippers(&j, dir));
    ck_assert_int_eq(dir[0], 0);
    ck_assert_int_eq(dir[2], 1);
    ck_assert_int_eq(dir[3], 1);
    ev(EV_KEY, BTN_TR2, 1); /* up and down together cancel */
    ck_assert(!kn_joy_flippers(&j, dir));
    ev(EV_KEY, BTN_TR, 0);
    ev(EV_KEY, BTN_TR2, 0);
    ck_assert(!kn_joy_flippers(&j, dir));
}
END_TEST

START_TEST(plug_in_state_and_reset)
{
    /* a button held while plugging in does not fire, but a held move acts */
    kn_joy_set_key(&j, BTN_EAST, true);
    ck_assert_int_eq(ev(EV_KEY, BTN_EAST, 2), 0);
    kn_joy_set_key(&j, BTN_TL, true);
    int dir[4];
    ck_assert(kn_joy_flippers(&j, dir));
    ck_assert_int_eq(dir[0], 1);
    kn_joy_set_range(&j, ABS_RZ, 0, 1023, 1023); /* trigger already pulled */
    ck_assert(kn_joy_flippers(&j, dir));
    ck_assert_int_eq(dir[2], -1);
    ev(EV_ABS, ABS_Y, -32768);
    kn_joy_reset(&j);
    double b[2];
    ck_assert(!kn_joy_belts(&j, 300, 800, b));
    ck_assert(!kn_joy_flippers(&j, dir));
}
END_TEST

START_TEST(inverted_axes_follow_the_config)
{
    c.throttle.invert = false;
    ev(EV_ABS, ABS_Y, 32767);
    double b[2];
    ck_assert(kn_joy_belts(&j, 300, 800, b));
    ck_assert_double_gt(b[0], 299);
    c.throttle.axis = ABS_RY;
    ck_assert(!kn_joy_belts(&j, 300, 800, b));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("console gamepad");
    TCase *tc = tcase_create("joy");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, axis_scaling_and_deadzone);
    tcase_add_test(tc, sticks_to_belts);
    tcase_add_test(tc, presses_fire_once);
    tcase_add_test(tc, axis_directions_as_buttons);
    tcase_add_test(tc, held_flipper_buttons);
    tcase_add_test(tc, plug_in_state_and_reset);
    tcase_add_test(tc, inverted_axes_follow_the_config);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
