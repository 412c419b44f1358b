/* The robot file's cameras (robot_cameras.h): the Kenaf's defaults and
 * the strict reader, so a typo in a mount is an error with its place, as
 * for every other part of the robot file. */
#include "robot_cameras.h"

#include <stdio.h>
#include <string.h>

#include "jsonutil.h"

/* The real robot's mounts and lenses are not published: these are the
 * assumptions docs/engine.md states (a PTZ head over the front pulley
 * axis, a wide-angle camera on a 1 m mast at the rear). */
static const struct kn_robotcam FRONT = {
    .name = "front",
    .kind = KN_ROBOTCAM_PTZ,
    .x_m = 0.17,
    .above_chassis_m = 0.05,
    .hfov_deg = 60,
    .zoom_max = 10,
    .pan_max_deg = 170,
    .tilt_min_deg = -60,
    .tilt_max_deg = 60,
    .pan_speed_deg_s = 90,
    .tilt_speed_deg_s = 60,
    .zoom_time_s = 3,
    .width_px = 640,
    .height_px = 480,
    .fps = 30,
};

static const struct kn_robotcam BIRDSEYE = {
    .name = "birdseye",
    .kind = KN_ROBOTCAM_FIXED,
    .x_m = -0.17,
    .height_m = 1.0,
    .tilt_deg = -60,
    .hfov_deg = 100,
    .zoom_max = 1,
    .width_px = 640,
    .height_px = 480,
    .fps = 15,
};

void kn_robotcams_defaults(struct kn_robotcams *c)
{
    memset(c, 0, sizeof *c);
    c->cam[0] = FRONT;
    c->cam[1] = BIRDSEYE;
    c->n = 2;
}

const struct kn_robotcam *kn_robotcams_find(const struct kn_robotcams *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->cam[i].name, name) == 0)
            return &c->cam[i];
    return NULL;
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof FRONT.name)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

static int picture(const cJSON *o, struct kn_robotcam *c, const char *ctx, char *err, size_t errlen)
{
    return kn_json_int_opt(o, "width_px", 16, 4096, &c->width_px, ctx, err, errlen) ||
           kn_json_int_opt(o, "height_px", 16, 4096, &c->height_px, ctx, err, errlen) ||
           kn_json_int_opt(o, "fps", 1, 120, &c->fps, ctx, err, errlen);
}

static int ptz(const cJSON *o, struct kn_robotcam *c, const char *ctx, char *err, size_t errlen)
{
    static const char *const keys[] = { "kind",
                                        "x_m",
                                        "y_m",
                                        "above_chassis_m",
                                        "hfov_deg",
                                        "zoom_max",
                                        "pan_max_deg",
                                        "tilt_min_deg",
                                        "tilt_max_deg",
                                        "pan_speed_deg_s",
                                        "tilt_speed_deg_s",
                                        "zoom_time_s",
                                        "width_px",
                                        "height_px",
                                        "fps",
                                        NULL };
    if (kn_json_only_keys(o, keys, ctx, err, errlen) ||
        kn_json_num(o, "x_m", -2, 2, &c->x_m, ctx, err, errlen) ||
        kn_json_num(o, "y_m", -2, 2, &c->y_m, ctx, err, errlen) ||
        kn_json_num(o, "above_chassis_m", 0, 2, &c->above_chassis_m, ctx, err, errlen) ||
        kn_json_num(o, "hfov_deg", 1, 170, &c->hfov_deg, ctx, err, errlen) ||
        kn_json_num(o, "zoom_max", 1, 100, &c->zoom_max, ctx, err, errlen) ||
        kn_json_num(o, "pan_max_deg", 0, 180, &c->pan_max_deg, ctx, err, errlen) ||
        kn_json_num(o, "tilt_min_deg", -90, 0, &c->tilt_min_deg, ctx, err, errlen) ||
        kn_json_num(o, "tilt_max_deg", 0, 90, &c->tilt_max_deg, ctx, err, errlen) ||
        kn_json_num(o, "pan_speed_deg_s", 1, 1000, &c->pan_speed_deg_s, ctx, err, errlen) ||
        kn_json_num(o, "tilt_speed_deg_s", 1, 1000, &c->tilt_speed_deg_s, ctx, err, errlen) ||
        kn_json_num(o, "zoom_time_s", 0.1, 60, &c->zoom_time_s, ctx, err, errlen))
        return -1;
    return picture(o, c, ctx, err, errlen);
}

static int fixed(const cJSON *o, struct kn_robotcam *c, const char *ctx, char *err, size_t errlen)
{
    static const char *const keys[] = { "kind",     "x_m",      "y_m",       "height_m", "tilt_deg",
                                        "hfov_deg", "width_px", "height_px", "fps",      NULL };
    c->zoom_max = 1;
    if (kn_json_only_keys(o, keys, ctx, err, errlen) ||
        kn_json_num(o, "x_m", -2, 2, &c->x_m, ctx, err, errlen) ||
        kn_json_num(o, "y_m", -2, 2, &c->y_m, ctx, err, errlen) ||
        kn_json_num(o, "height_m", 0, 10, &c->height_m, ctx, err, errlen) ||
        kn_json_num(o, "tilt_deg", -90, 90, &c->tilt_deg, ctx, err, errlen) ||
        kn_json_num(o, "hfov_deg", 1, 170, &c->hfov_deg, ctx, err, errlen))
        return -1;
    return picture(o, c, ctx, err, errlen);
}

static int one(const cJSON *o, struct kn_robotcam *c, const char *ctx, char *err, size_t errlen)
{
    char where[256];
    snprintf(where, sizeof where, "%s: cameras: %s", ctx, o->string);
    if (!name_ok(o->string)) {
        snprintf(err, errlen, "%s: a camera's name is 1-31 of [a-z0-9_-]", where);
        return -1;
    }
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "%s: must be an object", where);
        return -1;
    }
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", o->string);
    c->width_px = 640;
    c->height_px = 480;
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind"));
    if (kind && strcmp(kind, "ptz") == 0) {
        c->kind = KN_ROBOTCAM_PTZ;
        c->fps = 30;
        return ptz(o, c, where, err, errlen);
    }
    if (kind && strcmp(kind, "fixed") == 0) {
        c->kind = KN_ROBOTCAM_FIXED;
        c->fps = 15;
        return fixed(o, c, where, err, errlen);
    }
    snprintf(err, errlen, "%s: \"kind\" must be \"ptz\" or \"fixed\"", where);
    return -1;
}

int kn_robotcams_parse(const cJSON *cameras, struct kn_robotcams *out, const char *ctx, char *err,
                       size_t errlen)
{
    if (!cameras) {
        kn_robotcams_defaults(out);
        return 0;
    }
    if (!cJSON_IsObject(cameras)) {
        snprintf(err, errlen, "%s: \"cameras\" must be an object", ctx);
        return -1;
    }
    struct kn_robotcams c = { 0 };
    const cJSON *o;
    cJSON_ArrayForEach(o, cameras)
    {
        if (c.n == KN_ROBOTCAMS_MAX) {
            snprintf(err, errlen, "%s: cameras: at most %d", ctx, KN_ROBOTCAMS_MAX);
            return -1;
        }
        if (one(o, &c.cam[c.n], ctx, err, errlen))
            return -1;
        c.n++;
    }
    for (int i = 0; i < c.n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c.cam[i].name, c.cam[j].name) == 0) {
                snprintf(err, errlen, "%s: cameras: %s given twice", ctx, c.cam[i].name);
                return -1;
            }
    *out = c;
    return 0;
}
