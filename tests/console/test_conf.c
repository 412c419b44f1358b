/* Unit tests of the console's config loader (console.json): the shipped
 * file equals the built-in defaults, partial files keep the rest, and
 * every kind of bad file gives a clear message naming the path. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/input-event-codes.h>

#include "conf.h"
#include "harness_suite.h"

static char err[8192];
static struct kn_conf c;

static int parse(const char *text)
{
    return kn_conf_parse(&c, text, strlen(text), "t.json", err, sizeof err);
}

/* The text must fail with a message containing want. */
#define BAD(text, want)                                                                       \
    do {                                                                                      \
        ck_assert_msg(parse(text) > 0, "accepted: %s", text);                                 \
        ck_assert_msg(strstr(err, want) != NULL, "for %s\nwanted \"%s\" in:\n%s", text, want, \
                      err);                                                                   \
    } while (0)

static const struct kn_binding *binding(const char *source)
{
    for (int i = 0; i < c.nbindings; i++)
        if (strcmp(c.bindings[i].source, source) == 0)
            return &c.bindings[i];
    return NULL;
}

START_TEST(shipped_file_is_the_defaults)
{
    const char *path = getenv("KN_CONSOLE_JSON");
    ck_assert_ptr_nonnull(path);
    ck_assert_msg(kn_conf_load(&c, path, err, sizeof err) == 0, "%s", err);
    struct kn_conf d;
    kn_conf_defaults(&d);
    ck_assert_int_eq(c.npresets, d.npresets);
    ck_assert_int_eq(c.nbindings, d.nbindings);
    for (int i = 0; i < d.nbindings; i++) {
        ck_assert_str_eq(c.bindings[i].source, d.bindings[i].source);
        ck_assert_int_eq(c.bindings[i].action.act, d.bindings[i].action.act);
    }
    ck_assert_msg(memcmp(&c, &d, sizeof c) == 0,
                  "config/console.json differs from the built-in defaults");
}
END_TEST

START_TEST(defaults_are_sane)
{
    kn_conf_defaults(&c);
    ck_assert_str_eq(c.joy_device, "auto");
    ck_assert_int_eq(c.throttle.axis, ABS_Y);
    ck_assert(c.throttle.invert);
    ck_assert_int_eq(c.npresets, 3);
    ck_assert_str_eq(c.presets[1].name, "stairs");
    const struct kn_binding *b = binding("BTN_NORTH");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->action.act, KN_ACT_PRESET);
    ck_assert_int_eq(b->action.preset, 1);
    b = binding("ABS_Z+");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->type, EV_ABS);
    ck_assert_int_eq(b->code, ABS_Z);
    ck_assert_int_eq(b->dir, 1);
    ck_assert_int_eq(b->action.act, KN_ACT_FLIP_DOWN);
    ck_assert_uint_eq(b->action.mask, KN_FLIP_FRONT);
    /* Back/Select: the flipper assist on / off, by name both ways */
    b = binding("BTN_SELECT");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->action.act, KN_ACT_ASSIST);
    char name[32];
    kn_conf_action_name(&c, &b->action, name, sizeof name);
    ck_assert_str_eq(name, "assist");
}
END_TEST

START_TEST(partial_file_keeps_the_rest)
{
    ck_assert_msg(
        parse("{\"drive\": {\"speed_mm_s\": 500}, \"joystick\": {\"device\": \"name:Pad\"}}") == 0,
        "%s", err);
    ck_assert_double_eq(c.drive.speed_mm_s, 500);
    ck_assert_double_eq(c.drive.max_speed_mm_s, 800);
    ck_assert_str_eq(c.joy_device, "name:Pad");
    ck_assert_int_eq(c.npresets, 3);
    ck_assert_ptr_nonnull(binding("BTN_SOUTH"));
    ck_assert_msg(parse("{}") == 0, "%s", err);
}
END_TEST

START_TEST(presets_replace_and_default_buttons_follow)
{
    ck_assert_msg(
        parse("{\"presets\": {\"stairs\": [30, 30, -10, -10], \"climb\": [80, 80, 0, 0]}}") == 0,
        "%s", err);
    ck_assert_int_eq(c.npresets, 2);
    ck_assert_str_eq(c.presets[0].name, "stairs");
    ck_assert_double_eq(c.presets[1].deg[0], 80);
    /* the default stairs button follows its preset; flat and turn are gone */
    const struct kn_binding *b = binding("BTN_NORTH");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->action.preset, 0);
    ck_assert_ptr_null(binding("BTN_WEST"));
    ck_assert_ptr_null(binding("BTN_START"));
}
END_TEST

START_TEST(buttons_replace_the_defaults)
{
    ck_assert_msg(
        parse("{\"joystick\": {\"buttons\": {\"BTN_A\": \"estop\", \"ABS_HAT0X-\": \"RL_up\","
              " \"KEY_SPACE\": \"stop\", \"BTN_B\": \"preset:turn\", \"BTN_C\": \"all_down\"}}}") ==
            0,
        "%s", err);
    ck_assert_int_eq(c.nbindings, 5);
    ck_assert_int_eq(c.bindings[0].code, BTN_SOUTH); /* BTN_A is the same code */
    ck_assert_int_eq(c.bindings[0].action.act, KN_ACT_ESTOP);
    ck_assert_int_eq(c.bindings[1].type, EV_ABS);
    ck_assert_int_eq(c.bindings[1].dir, -1);
    ck_assert_uint_eq(c.bindings[1].action.mask, KN_FLIP_RL);
    ck_assert_int_eq(c.bindings[2].code, KEY_SPACE);
    ck_assert_int_eq(c.bindings[3].action.preset, 2);
    ck_assert_uint_eq(c.bindings[4].action.mask, KN_FLIP_ALL);
    char name[64];
    kn_conf_action_name(&c, &c.bindings[3].action, name, sizeof name);
    ck_assert_str_eq(name, "preset:turn");
    kn_conf_action_name(&c, &c.bindings[1].action, name, sizeof name);
    ck_assert_str_eq(name, "RL_up");
}
END_TEST

START_TEST(syntax_errors_name_line_and_column)
{
    BAD("{\n  \"drive\": {\n    \"speed_mm_s\": 300,\n  }\n}", "t.json: 4:");
    ck_assert(strstr(err, "expected valid JSON, got a syntax error at") != NULL);
    BAD("", "expected valid JSON");
    BAD("{\"drive\": {}} trailing", "");
}
END_TEST

START_TEST(wrong_types_and_ranges)
{
    BAD("[]", "t.json: $: expected an object, got an array");
    BAD("{\"drive\": 3}", "$.drive: expected an object, got 3");
    BAD("{\"drive\": {\"speed_mm_s\": \"fast\"}}",
        "$.drive.speed_mm_s: expected number 1..5000, got \"fast\"");
    BAD("{\"drive\": {\"max_speed_mm_s\": 0}}",
        "$.drive.max_speed_mm_s: expected number 1..5000, got 0");
    BAD("{\"keyboard\": {\"hold_ms\": 12.5}}",
        "$.keyboard.hold_ms: expected integer 50..2000, got 12.5");
    BAD("{\"joystick\": {\"deadzone\": 2}}", "$.joystick.deadzone: expected number 0..0.9, got 2");
    BAD("{\"joystick\": {\"throttle\": {\"invert\": 1}}}",
        "$.joystick.throttle.invert: expected true or false, got 1");
    BAD("{\"flippers\": {\"rate_deg_s\": null}}",
        "$.flippers.rate_deg_s: expected number 1..720, got null");
}
END_TEST

START_TEST(unknown_and_duplicate_keys)
{
    BAD("{\"drvie\": {}}", "$.drvie: unknown key (expected one of \"drive\", \"keyboard\"");
    BAD("{\"drive\": {\"sped_mm_s\": 1}}", "$.drive.sped_mm_s: unknown key");
    BAD("{\"joystick\": {\"throttle\": {\"axis\": \"ABS_Y\", \"flip\": true}}}",
        "$.joystick.throttle.flip: unknown key (expected one of \"axis\", \"invert\")");
    BAD("{\"drive\": {\"speed_mm_s\": 100, \"speed_mm_s\": 200}}",
        "$.drive.speed_mm_s: duplicate key");
}
END_TEST

START_TEST(joystick_names)
{
    BAD("{\"joystick\": {\"throttle\": {\"axis\": \"ABS_WHY\"}}}",
        "$.joystick.throttle.axis: expected an absolute axis name such as \"ABS_X\", got \"ABS_WHY\"");
    BAD("{\"joystick\": {\"turn\": {\"axis\": \"ABS_Y\"}}}",
        "$.joystick.turn.axis: expected an axis other than the throttle's");
    BAD("{\"joystick\": {\"buttons\": {\"BTN_NOPE\": \"stop\"}}}",
        "$.joystick.buttons.BTN_NOPE: expected a button name such as \"BTN_SOUTH\"");
    BAD("{\"joystick\": {\"buttons\": {\"ABS_Z\": \"stop\"}}}",
        "$.joystick.buttons.ABS_Z: expected a button name");
    BAD("{\"joystick\": {\"buttons\": {\"BTN_SOUTH\": \"jump\"}}}",
        "$.joystick.buttons.BTN_SOUTH: expected an action: stop, estop, faster, slower, assist, "
        "preset:NAME (flat, stairs, turn)");
    BAD("{\"joystick\": {\"buttons\": {\"BTN_SOUTH\": \"preset:stairz\"}}}",
        "got \"preset:stairz\"");
    BAD("{\"joystick\": {\"buttons\": {\"BTN_SOUTH\": \"middle_up\"}}}", "got \"middle_up\"");
    BAD("{\"joystick\": {\"buttons\": {\"BTN_SOUTH\": 7}}}", "got 7");
    BAD("{\"joystick\": {\"device\": \"event5\"}}",
        "$.joystick.device: expected \"auto\", \"none\", a device path");
    BAD("{\"joystick\": {\"device\": \"name:\"}}", "$.joystick.device");
}
END_TEST

START_TEST(presets_checked)
{
    BAD("{\"presets\": {}}", "$.presets: expected 1..9 presets, got 0");
    BAD("{\"presets\": {\"a\": [0,0,0]}}", "$.presets.a: expected an array of 4 angles");
    BAD("{\"presets\": {\"a\": [0,0,0,\"x\"]}}",
        "$.presets.a[3]: expected number -180..180, got \"x\"");
    BAD("{\"presets\": {\"bad name\": [0,0,0,0]}}", "$.presets.bad name: expected a preset name");
    BAD("{\"presets\": {\"up\": [0,0,0,150]}}",
        "$.presets.up[3]: expected an angle within the flipper limits -119.5..119.5, got 150");
    BAD("{\"presets\": {\"a\":[0,0,0,0],\"b\":[0,0,0,0],\"c\":[0,0,0,0],\"d\":[0,0,0,0],\"e\":[0,0,0,0],"
        "\"f\":[0,0,0,0],\"g\":[0,0,0,0],\"h\":[0,0,0,0],\"i\":[0,0,0,0],\"j\":[0,0,0,0]}}",
        "expected 1..9 presets, got 10");
}
END_TEST

START_TEST(rules_across_keys)
{
    BAD("{\"drive\": {\"speed_mm_s\": 900}}",
        "$.drive.speed_mm_s: expected at most max_speed_mm_s (800), got 900");
    BAD("{\"keyboard\": {\"hold_ms\": 500, \"first_hold_ms\": 300}}",
        "$.keyboard.first_hold_ms: expected at least hold_ms (500), got 300");
    BAD("{\"flippers\": {\"min_deg\": 10, \"max_deg\": 10}}",
        "$.flippers.min_deg: expected less than max_deg");
}
END_TEST

START_TEST(every_problem_reported)
{
    int n = parse("{\"drive\": {\"speed_mm_s\": -1, \"accel_mm_s2\": 0}, \"keyboard\": {\"x\": 1},"
                  " \"joystick\": {\"deadzone\": -1}}");
    ck_assert_int_eq(n, 4);
    int lines = 0;
    for (const char *p = err; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_int_eq(lines, 4);
}
END_TEST

START_TEST(bad_files)
{
    char dir[] = "/tmp/kn-conf-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];

    snprintf(path, sizeof path, "%s/missing.json", dir);
    ck_assert_int_eq(kn_conf_load(&c, path, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "missing.json: cannot read: No such file or directory"), "%s", err);

    snprintf(path, sizeof path, "%s/empty.json", dir);
    FILE *f = fopen(path, "w");
    fputs(" \n\t\n", f);
    fclose(f);
    ck_assert_int_eq(kn_conf_load(&c, path, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "empty.json: expected a JSON object, got an empty file"), "%s", err);

    snprintf(path, sizeof path, "%s/nul.json", dir);
    f = fopen(path, "w");
    fwrite("{\"drive\"\0: {}}", 1, 14, f);
    fclose(f);
    ck_assert_int_eq(kn_conf_load(&c, path, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "got a NUL byte"), "%s", err);

    snprintf(path, sizeof path, "%s/big.json", dir);
    f = fopen(path, "w");
    for (int i = 0; i < (1 << 20) / 8 + 2; i++)
        fputs("        ", f);
    fclose(f);
    ck_assert_int_eq(kn_conf_load(&c, path, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "expected at most 1048576 bytes"), "%s", err);

    ck_assert_int_eq(kn_conf_load(&c, dir, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "expected a regular file") || strstr(err, "cannot read"), "%s", err);

    snprintf(path, sizeof path, "rm -rf %s", dir);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(small_error_buffer_is_safe)
{
    char small[16];
    ck_assert_int_gt(
        kn_conf_parse(&c, "{\"drvie\": 1}", 12, "a-long-file-name.json", small, sizeof small), 0);
    ck_assert_uint_lt(strlen(small), sizeof small);
    ck_assert_int_gt(kn_conf_parse(&c, "{\"drvie\": 1}", 12, "x", NULL, 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("console config");
    TCase *tc = tcase_create("conf");
    tcase_add_test(tc, shipped_file_is_the_defaults);
    tcase_add_test(tc, defaults_are_sane);
    tcase_add_test(tc, partial_file_keeps_the_rest);
    tcase_add_test(tc, presets_replace_and_default_buttons_follow);
    tcase_add_test(tc, buttons_replace_the_defaults);
    tcase_add_test(tc, syntax_errors_name_line_and_column);
    tcase_add_test(tc, wrong_types_and_ranges);
    tcase_add_test(tc, unknown_and_duplicate_keys);
    tcase_add_test(tc, joystick_names);
    tcase_add_test(tc, presets_checked);
    tcase_add_test(tc, rules_across_keys);
    tcase_add_test(tc, every_problem_reported);
    tcase_add_test(tc, bad_files);
    tcase_add_test(tc, small_error_buffer_is_safe);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
