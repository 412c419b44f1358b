/* System test of kenaf-console with a gamepad: a virtual evdev device made
 * through /dev/uinput drives kenaf-simd + kenaf-engine through the console
 * (sticks to belts, buttons to presets, flippers and e-stop) and is
 * unplugged and plugged again while the console runs. Skipped (77) when
 * /dev/uinput cannot be opened (no uinput module, or no permission) or
 * tmux is missing. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>

#include "console_harness.h"

#define PAD_NAME "kenaf-console test pad"

static struct h_daemon d;
static struct h_udp u;
static struct c_console con;
static struct libevdev_uinput *pad;

static void pad_create(void)
{
    struct libevdev *dev = libevdev_new();
    ck_assert_ptr_nonnull(dev);
    libevdev_set_name(dev, PAD_NAME);
    libevdev_set_id_bustype(dev, BUS_VIRTUAL);
    static const unsigned keys[] = { BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL,
                                     BTN_TR,    BTN_TL2,  BTN_TR2,   BTN_START };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_int_eq(libevdev_enable_event_code(dev, EV_KEY, keys[i], NULL), 0);
    struct input_absinfo stick = { .minimum = -32768, .maximum = 32767, .flat = 128 };
    struct input_absinfo hat = { .minimum = -1, .maximum = 1 };
    ck_assert_int_eq(libevdev_enable_event_code(dev, EV_ABS, ABS_X, &stick), 0);
    ck_assert_int_eq(libevdev_enable_event_code(dev, EV_ABS, ABS_Y, &stick), 0);
    ck_assert_int_eq(libevdev_enable_event_code(dev, EV_ABS, ABS_HAT0Y, &hat), 0);
    int fd = open("/dev/uinput", O_RDWR | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "/dev/uinput: %s", strerror(errno));
    int rc = libevdev_uinput_create_from_device(dev, fd, &pad);
    ck_assert_msg(rc == 0, "uinput device: %s", strerror(-rc));
    libevdev_free(dev);
}

static void pad_destroy(void)
{
    if (pad) {
        int fd = libevdev_uinput_get_fd(pad);
        libevdev_uinput_destroy(pad);
        close(fd);
    }
    pad = NULL;
}

static void pad_event(unsigned type, unsigned code, int value)
{
    ck_assert_int_eq(libevdev_uinput_write_event(pad, type, code, value), 0);
    ck_assert_int_eq(libevdev_uinput_write_event(pad, EV_SYN, SYN_REPORT, 0), 0);
}

static void press(unsigned code)
{
    pad_event(EV_KEY, code, 1);
    h_sleep_ms(30);
    pad_event(EV_KEY, code, 0);
}

static struct kn_krp_status st(void)
{
    return h_status_any(&u);
}

static bool wait_belts(int lo, int hi)
{
    uint64_t end = h_now_us() + 15000000u;
    while (h_now_us() < end) {
        struct kn_krp_status s = st();
        if (s.crawler_speed_mm_s[0] >= lo && s.crawler_speed_mm_s[0] <= hi &&
            s.crawler_speed_mm_s[1] >= lo && s.crawler_speed_mm_s[1] <= hi)
            return true;
        h_sleep_ms(20);
    }
    return false;
}

static bool wait_flippers(int k, int lo, int hi)
{
    uint64_t end = h_now_us() + 15000000u;
    while (h_now_us() < end) {
        struct kn_krp_status s = st();
        if (s.flipper_cdeg[k] >= lo && s.flipper_cdeg[k] <= hi)
            return true;
        h_sleep_ms(20);
    }
    return false;
}

static void setup(void)
{
    h_setup();
    u.fd = -1;
}

static void teardown(void)
{
    pad_destroy();
    h_udp_close(&u);
    h_teardown();
}

START_TEST(gamepad_drives_and_hot_plugs)
{
    pad_create();
    c_daemon_engine(&d);
    h_udp_open(&u, d.port[0]);
    c_console_start(&con, d.port[0], "{\"joystick\": {\"device\": \"name:" PAD_NAME "\"}}\n", NULL);
    ck_assert_msg(c_wait_screen(&con, "\"" PAD_NAME "\" connected", H_LONG_MS), "%s\n%s",
                  c_screen(&con), c_stderr(&con));

    /* left stick fully forward: both belts at the speed level */
    pad_event(EV_ABS, ABS_Y, -32768);
    ck_assert_msg(wait_belts(280, 320), "stick did not drive:\n%s", c_screen(&con));
    ck_assert_msg(c_wait_screen(&con, "(joystick)", 3000), "%s", c_screen(&con));
    /* centred: the belts ramp to 0 */
    pad_event(EV_ABS, ABS_Y, 0);
    ck_assert(wait_belts(-5, 5));
    /* stick right: pivot right */
    pad_event(EV_ABS, ABS_X, 32767);
    uint64_t end = h_now_us() + 15000000u;
    struct kn_krp_status s = st();
    while (h_now_us() < end && !(s.crawler_speed_mm_s[0] > 150 && s.crawler_speed_mm_s[1] < -150)) {
        h_sleep_ms(20);
        s = st();
    }
    ck_assert_msg(s.crawler_speed_mm_s[0] > 150 && s.crawler_speed_mm_s[1] < -150,
                  "no pivot: %d %d", s.crawler_speed_mm_s[0], s.crawler_speed_mm_s[1]);
    pad_event(EV_ABS, ABS_X, 0);
    ck_assert(wait_belts(-5, 5));

    /* Y: stairs preset; LB held: front flippers rise at the button rate */
    press(BTN_NORTH);
    ck_assert(wait_flippers(0, 3800, 4200));
    ck_assert(wait_flippers(2, -2200, -1800));
    pad_event(EV_KEY, BTN_TL, 1);
    ck_assert(wait_flippers(0, 5500, 12000));
    pad_event(EV_KEY, BTN_TL, 0);
    /* d-pad up: faster */
    pad_event(EV_ABS, ABS_HAT0Y, -1);
    pad_event(EV_ABS, ABS_HAT0Y, 0);
    ck_assert_msg(c_wait_screen(&con, "speed level 350", 3000), "%s", c_screen(&con));

    /* unplugged mid-drive: the console stops the robot and looks again */
    pad_event(EV_ABS, ABS_Y, -32768);
    ck_assert(wait_belts(300, 400));
    double stop0 = h_stat(&d, "robots.0.datagrams_in.STOP");
    pad_destroy();
    ck_assert(wait_belts(-5, 5));
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.STOP"), stop0 + 1);
    ck_assert_msg(c_wait_screen(&con, "went away", 3000) ||
                      c_wait_screen(&con, "no device named", 3000),
                  "%s", c_screen(&con));
    ck_assert_msg(c_wait_screen(&con, "joystick lost while driving: STOP", 3000), "%s",
                  c_screen(&con));

    /* plugged in again: found within a few retries, drives again */
    pad_create();
    ck_assert_msg(c_wait_screen(&con, "\"" PAD_NAME "\" connected", H_LONG_MS), "%s",
                  c_screen(&con));
    pad_event(EV_ABS, ABS_Y, -32768);
    ck_assert(wait_belts(300, 400));
    pad_event(EV_ABS, ABS_Y, 0);

    /* B: e-stop on the robot */
    press(BTN_EAST);
    ck_assert(h_wait_stat(&d, "robots.0.flags.ESTOP", 1, H_LONG_MS));
    ck_assert(wait_belts(-5, 5));
    press(BTN_EAST);
    ck_assert(h_wait_stat_eq(&d, "robots.0.flags.ESTOP", 0, H_LONG_MS));
    c_keys(&con, "q", true);
    ck_assert_int_eq(c_wait_exit(&con, H_LONG_MS), 0);
}
END_TEST

int main(void)
{
    int fd = open("/dev/uinput", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("SKIP: /dev/uinput is not accessible (%s): no virtual gamepad can be made here "
               "(load the uinput module and give this user write access to test the gamepad)\n",
               strerror(errno));
        return C_SKIP;
    }
    close(fd);
    if (!c_have_tmux()) {
        printf("SKIP: tmux is not installed (Debian package \"tmux\")\n");
        return C_SKIP;
    }
    Suite *s = suite_create("kenaf-console gamepad");
    TCase *tc = tcase_create("pad");
    tcase_set_timeout(tc, 150);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gamepad_drives_and_hot_plugs);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
