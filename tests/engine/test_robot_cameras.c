/* The robot file's cameras (engine/robot_cameras.c): the Kenaf's file
 * declares what the built-in defaults hold, and every malformed camera is
 * refused with its place and reason, by the reader and by the robot file
 * loader that uses it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "harness_suite.h"
#include "jsonutil.h"
#include "params.h"
#include "robot_cameras.h"

static cJSON *kenaf_file(void)
{
    char err[256];
    cJSON *root = kn_json_load(KN_TEST_CONFIG_DIR "/robots/kenaf.json", err, sizeof err);
    ck_assert_msg(root != NULL, "%s", err);
    return root;
}

/* Field by field: struct copies need not copy padding. */
static void same(const struct kn_robotcams *a, const struct kn_robotcams *b)
{
    ck_assert_int_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const struct kn_robotcam *x = &a->cam[i], *y = &b->cam[i];
        ck_assert_str_eq(x->name, y->name);
        ck_assert_int_eq(x->kind, y->kind);
        const double dx[] = {
            x->x_m,          x->y_m,          x->above_chassis_m, x->height_m,
            x->tilt_deg,     x->hfov_deg,     x->zoom_max,        x->pan_max_deg,
            x->tilt_min_deg, x->tilt_max_deg, x->pan_speed_deg_s, x->tilt_speed_deg_s,
            x->zoom_time_s
        };
        const double dy[] = {
            y->x_m,          y->y_m,          y->above_chassis_m, y->height_m,
            y->tilt_deg,     y->hfov_deg,     y->zoom_max,        y->pan_max_deg,
            y->tilt_min_deg, y->tilt_max_deg, y->pan_speed_deg_s, y->tilt_speed_deg_s,
            y->zoom_time_s
        };
        for (size_t k = 0; k < sizeof dx / sizeof dx[0]; k++)
            ck_assert_msg(dx[k] == dy[k], "%s: value %zu: %g, %g", x->name, k, dx[k], dy[k]);
        ck_assert_int_eq(x->width_px, y->width_px);
        ck_assert_int_eq(x->height_px, y->height_px);
        ck_assert_int_eq(x->fps, y->fps);
    }
}

START_TEST(file_is_the_defaults)
{
    cJSON *root = kenaf_file();
    struct kn_robotcams file, def;
    char err[256];
    ck_assert_msg(kn_robotcams_parse(cJSON_GetObjectItemCaseSensitive(root, "cameras"), &file,
                                     "kenaf.json", err, sizeof err) == 0,
                  "%s", err);
    kn_robotcams_defaults(&def);
    ck_assert_int_eq(file.n, 2);
    ck_assert_int_eq(def.n, 2);
    same(&file, &def);
    ck_assert_str_eq(file.cam[0].name, "front");
    ck_assert_int_eq(file.cam[0].kind, KN_ROBOTCAM_PTZ);
    ck_assert_double_eq(file.cam[0].pan_max_deg, 170);
    ck_assert_str_eq(file.cam[1].name, "birdseye");
    ck_assert_int_eq(file.cam[1].kind, KN_ROBOTCAM_FIXED);
    ck_assert_int_eq(file.cam[1].fps, 15);
    ck_assert_ptr_eq(kn_robotcams_find(&file, "birdseye"), &file.cam[1]);
    ck_assert_ptr_null(kn_robotcams_find(&file, "rear"));
    /* no "cameras" at all: the defaults */
    struct kn_robotcams none;
    ck_assert_int_eq(kn_robotcams_parse(NULL, &none, "x", err, sizeof err), 0);
    same(&none, &def);
    cJSON_Delete(root);
}
END_TEST

/* Parses `text` as the "cameras" object: -1 and err holding `want`. */
static void refused(const char *text, const char *want)
{
    cJSON *o = cJSON_Parse(text);
    ck_assert_msg(o != NULL, "bad test JSON %s", text);
    struct kn_robotcams c;
    kn_robotcams_defaults(&c);
    struct kn_robotcams before = c;
    char err[512] = "";
    ck_assert_int_eq(kn_robotcams_parse(o, &c, "r.json", err, sizeof err), -1);
    ck_assert_msg(strstr(err, want) && strstr(err, "r.json"), "%s: \"%s\" lacks \"%s\"", text, err,
                  want);
    same(&c, &before); /* left as it was */
    cJSON_Delete(o);
}

START_TEST(malformed_cameras)
{
    refused("[]", "\"cameras\" must be an object");
    refused("{\"rear\": 3}", "rear: must be an object");
    refused("{\"Rear Cam\": {}}", "name is 1-31");
    refused("{\"rear\": {\"kind\": \"fisheye\"}}", "rear: \"kind\" must be");
    refused("{\"rear\": {\"x_m\": 0}}", "rear: \"kind\" must be");
    refused("{\"rear\": {\"kind\": \"fixed\", \"x_m\": 0, \"y_m\": 0, \"height_m\": 1, "
            "\"tilt_deg\": 0, \"hfov_deg\": 60, \"zoom_max\": 2}}",
            "unknown key \"zoom_max\"");
    refused("{\"rear\": {\"kind\": \"fixed\", \"x_m\": 0, \"y_m\": 0, \"height_m\": 1, "
            "\"tilt_deg\": 0}}",
            "hfov_deg");
    refused("{\"rear\": {\"kind\": \"fixed\", \"x_m\": 0, \"y_m\": 0, \"height_m\": 1, "
            "\"tilt_deg\": 0, \"hfov_deg\": 200}}",
            "hfov_deg");
    refused("{\"rear\": {\"kind\": \"fixed\", \"x_m\": 0, \"y_m\": 0, \"height_m\": 1, "
            "\"tilt_deg\": 0, \"hfov_deg\": 60, \"fps\": 0}}",
            "fps");
    refused("{\"top\": {\"kind\": \"ptz\", \"x_m\": 0, \"y_m\": 0, \"above_chassis_m\": 0.1, "
            "\"hfov_deg\": 60, \"zoom_max\": 4, \"pan_max_deg\": 90, \"tilt_min_deg\": 10, "
            "\"tilt_max_deg\": 30, \"pan_speed_deg_s\": 50, \"tilt_speed_deg_s\": 50, "
            "\"zoom_time_s\": 2}}",
            "tilt_min_deg");
    const char *rear = "{\"kind\": \"fixed\", \"x_m\": 0, \"y_m\": 0, \"height_m\": 1, "
                       "\"tilt_deg\": 0, \"hfov_deg\": 60}";
    char text[2048];
    snprintf(text, sizeof text, "{\"a\": %s, \"a\": %s}", rear, rear);
    refused(text, "a given twice");
    snprintf(text, sizeof text, "{\"a\": %s, \"b\": %s, \"c\": %s, \"d\": %s, \"e\": %s}", rear,
             rear, rear, rear, rear);
    refused(text, "at most 4");
}
END_TEST

START_TEST(picture_defaults_by_kind)
{
    cJSON *o = cJSON_Parse("{\"rear\": {\"kind\": \"fixed\", \"x_m\": -0.2, \"y_m\": 0, "
                           "\"height_m\": 0.4, \"tilt_deg\": -10, \"hfov_deg\": 90}}");
    struct kn_robotcams c;
    char err[256];
    ck_assert_msg(kn_robotcams_parse(o, &c, "r.json", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.n, 1);
    ck_assert_int_eq(c.cam[0].width_px, 640);
    ck_assert_int_eq(c.cam[0].height_px, 480);
    ck_assert_int_eq(c.cam[0].fps, 15);
    ck_assert_double_eq(c.cam[0].zoom_max, 1);
    ck_assert_double_eq(c.cam[0].height_m, 0.4);
    cJSON_Delete(o);
}
END_TEST

/* The robot file loader refuses a file whose cameras are malformed. */
START_TEST(robot_file_checks_cameras)
{
    cJSON *root = kenaf_file();
    cJSON *front = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "cameras"), "front");
    cJSON_ReplaceItemInObjectCaseSensitive(front, "pan_max_deg", cJSON_CreateNumber(400));
    char *text = cJSON_Print(root);
    struct kn_robot_params rp;
    char err[512];
    ck_assert_int_eq(kn_robotfile_parse(text, "k.json", &rp, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "k.json: cameras: front") && strstr(err, "pan_max_deg"), "%s", err);
    free(text);
    cJSON_Delete(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("robot-cameras");
    TCase *tc = tcase_create("robot-cameras");
    tcase_add_test(tc, file_is_the_defaults);
    tcase_add_test(tc, malformed_cameras);
    tcase_add_test(tc, picture_defaults_by_kind);
    tcase_add_test(tc, robot_file_checks_cameras);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
