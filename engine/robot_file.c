/* Robot file reader (config/robots/kenaf.json) and the physics defaults.
 * Every robot field is required so a file states the whole model; values
 * are range-checked so a typo cannot build an unphysical robot. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "params.h"
#include "robot_cameras.h"

#define DEG (M_PI / 180.0)

void kn_physics_defaults(struct kn_physics_params *p)
{
    memset(p, 0, sizeof *p);
    p->step_s = 0.001;
    p->iterations = 10;
    p->sor = 1.3;
    p->erp = 0.2;
    p->cfm = 1e-6;
    p->surface_layer = 0.001;
    p->max_correcting_vel = 0.1;
    p->contacts_per_pair = 4;
    p->fdir_mode = KN_FDIR_AXLE;
    p->seed = 0;
    p->gravity = 9.81;
    p->flipper_collision = 1;
    p->belt_points = 3;
    p->flipper_points = 3;
}

int kn_physics_from_json(const cJSON *o, struct kn_physics_params *p, char *err, size_t errlen)
{
    static const char *const keys[] = { "step_s",
                                        "iterations",
                                        "sor",
                                        "erp",
                                        "cfm",
                                        "surface_layer_m",
                                        "max_correcting_vel_m_s",
                                        "contacts_per_pair",
                                        "friction_mode",
                                        "seed",
                                        "gravity_m_s2",
                                        "flipper_collision",
                                        "belt_points",
                                        "flipper_points",
                                        NULL };
    const char *ctx = "physics";
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "physics: must be an object");
        return -1;
    }
    if (kn_json_only_keys(o, keys, ctx, err, errlen) ||
        kn_json_num_opt(o, "step_s", 1e-4, 0.01, &p->step_s, ctx, err, errlen) ||
        kn_json_int_opt(o, "iterations", 1, 500, &p->iterations, ctx, err, errlen) ||
        kn_json_num_opt(o, "sor", 0.1, 2.0, &p->sor, ctx, err, errlen) ||
        kn_json_num_opt(o, "erp", 0.0, 1.0, &p->erp, ctx, err, errlen) ||
        kn_json_num_opt(o, "cfm", 0.0, 1.0, &p->cfm, ctx, err, errlen) ||
        kn_json_num_opt(o, "surface_layer_m", 0.0, 0.01, &p->surface_layer, ctx, err, errlen) ||
        kn_json_num_opt(o, "max_correcting_vel_m_s", 0.0, 100.0, &p->max_correcting_vel, ctx, err,
                        errlen) ||
        kn_json_int_opt(o, "contacts_per_pair", 1, 64, &p->contacts_per_pair, ctx, err, errlen) ||
        kn_json_num_opt(o, "gravity_m_s2", 0.0, 100.0, &p->gravity, ctx, err, errlen) ||
        kn_json_bool_opt(o, "flipper_collision", &p->flipper_collision, ctx, err, errlen) ||
        kn_json_int_opt(o, "belt_points", 2, KN_BELT_POINTS_MAX, &p->belt_points, ctx, err,
                        errlen) ||
        kn_json_int_opt(o, "flipper_points", 2, KN_BELT_POINTS_MAX, &p->flipper_points, ctx, err,
                        errlen))
        return -1;
    int seed = (int)p->seed;
    if (kn_json_int_opt(o, "seed", 0, 1 << 30, &seed, ctx, err, errlen))
        return -1;
    p->seed = (unsigned long)seed;
    char mode[16] = "";
    if (kn_json_str_opt(o, "friction_mode", mode, sizeof mode, ctx, err, errlen))
        return -1;
    if (mode[0]) {
        if (strcmp(mode, "axle") == 0)
            p->fdir_mode = KN_FDIR_AXLE;
        else if (strcmp(mode, "icr") == 0)
            p->fdir_mode = KN_FDIR_ICR;
        else {
            snprintf(err, errlen, "physics: \"friction_mode\" must be \"axle\" or \"icr\"");
            return -1;
        }
    }
    return 0;
}

/* Section key of the file, an object holding only the keys listed (and
 * "comment"): a misspelt key, in the file or in a scenario's
 * robot_changes, is refused rather than left at the file's value. */
static const cJSON *section(const cJSON *root, const char *key, const char *const *keys,
                            const char *name, char *err, size_t errlen)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsObject(s)) {
        snprintf(err, errlen, "%s: missing object \"%s\"", name, key);
        return NULL;
    }
    char ctx[1400];
    snprintf(ctx, sizeof ctx, "%s: %s", name, key);
    const cJSON *e;
    cJSON_ArrayForEach(e, s)
    {
        int ok = e->string && strcmp(e->string, "comment") == 0;
        for (const char *const *k = keys; *k && !ok; k++)
            ok = e->string && strcmp(e->string, *k) == 0;
        if (!ok) {
            snprintf(err, errlen, "%s: unknown key \"%s\"", ctx, e->string ? e->string : "?");
            return NULL;
        }
    }
    return s;
}

static const char *const mass_keys[] = { "base_kg", "base_inertia_box_m", "cog_z_m",
                                         "cog_x_m", "flipper_kg",         NULL };
static const char *const track_keys[] = { "pulley_x_m", "radius_m", "width_m", "y_m", NULL };
static const char *const flipper_keys[] = { "root_radius_m", "tip_radius_m", "length_m", "width_m",
                                            "y_m",           "limit_deg",    NULL };
static const char *const servo_keys[] = { "kp_per_s", "rate_max_rad_s", "torque_max_nm", NULL };
static const char *const chassis_keys[] = { "size_m", "clearance_m", NULL };
static const char *const belt_keys[] = { "speed_max_m_s",           "accel_max_m_s2",
                                         "decel_emergency_m_s2",    "steering_efficiency",
                                         "steering_efficiency_icr", NULL };
static const char *const friction_keys[] = { "track_mu", "track_mu2", "body_mu", NULL };
static const char *const battery_keys[] = { "full_v",           "empty_v", "capacity_ah",
                                            "internal_ohm",     "idle_a",  "belt_a_per_m_s",
                                            "flipper_a_per_nm", NULL };

int kn_robotfile_parse(const char *text, const char *name, struct kn_robot_params *rp, char *err,
                       size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    cJSON *root = cJSON_Parse(text);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: not a JSON object", name);
        cJSON_Delete(root);
        return -1;
    }
    static const char *const top[] = { "name",    "comment", "sources", "mass", "main_track",
                                       "flipper", "servo",   "chassis", "belt", "friction",
                                       "battery", "cameras", NULL };
    char ctx[1400];
    int rc = -1;
    const cJSON *s;
    double lim_deg = 0;
    if (kn_json_only_keys(root, top, name, err, errlen))
        goto out;
    snprintf(rp->name, sizeof rp->name, "robot");
    if (kn_json_str_opt(root, "name", rp->name, sizeof rp->name, name, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: mass", name);
    if (!(s = section(root, "mass", mass_keys, name, err, errlen)) ||
        kn_json_num(s, "base_kg", 0.1, 1000, &rp->base_mass, ctx, err, errlen) ||
        kn_json_vec(s, "base_inertia_box_m", 3, 0.01, 10, rp->base_box, 0, ctx, err, errlen) ||
        kn_json_num(s, "cog_z_m", -1, 1, &rp->cog_z, ctx, err, errlen) ||
        kn_json_num_opt(s, "cog_x_m", -1, 1, &rp->cog_x, ctx, err, errlen) ||
        kn_json_num(s, "flipper_kg", 0.01, 100, &rp->flipper_mass, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: main_track", name);
    if (!(s = section(root, "main_track", track_keys, name, err, errlen)) ||
        kn_json_num(s, "pulley_x_m", 0.01, 2, &rp->track_pulley_x, ctx, err, errlen) ||
        kn_json_num(s, "radius_m", 0.01, 1, &rp->track_radius, ctx, err, errlen) ||
        kn_json_num(s, "width_m", 0.005, 1, &rp->track_width, ctx, err, errlen) ||
        kn_json_num(s, "y_m", 0.01, 2, &rp->track_y, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: flipper", name);
    if (!(s = section(root, "flipper", flipper_keys, name, err, errlen)) ||
        kn_json_num(s, "root_radius_m", 0.005, 1, &rp->flipper_root_radius, ctx, err, errlen) ||
        kn_json_num(s, "tip_radius_m", 0.005, 1, &rp->flipper_tip_radius, ctx, err, errlen) ||
        kn_json_num(s, "length_m", 0.01, 2, &rp->flipper_length, ctx, err, errlen) ||
        kn_json_num(s, "width_m", 0.005, 1, &rp->flipper_width, ctx, err, errlen) ||
        kn_json_num(s, "y_m", 0.01, 2, &rp->flipper_y, ctx, err, errlen) ||
        kn_json_num(s, "limit_deg", 1, 179, &lim_deg, ctx, err, errlen))
        goto out;
    rp->flipper_limit = lim_deg * DEG;
    if (rp->flipper_tip_radius > rp->flipper_root_radius ||
        rp->flipper_root_radius - rp->flipper_tip_radius >= rp->flipper_length) {
        snprintf(err, errlen, "%s: need tip_radius_m <= root_radius_m < tip_radius_m + length_m",
                 ctx);
        goto out;
    }

    snprintf(ctx, sizeof ctx, "%s: servo", name);
    if (!(s = section(root, "servo", servo_keys, name, err, errlen)) ||
        kn_json_num(s, "kp_per_s", 0.01, 1000, &rp->servo_kp, ctx, err, errlen) ||
        kn_json_num(s, "rate_max_rad_s", 0.01, 100, &rp->servo_rate_max, ctx, err, errlen) ||
        kn_json_num(s, "torque_max_nm", 0, 10000, &rp->servo_torque_max, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: chassis", name);
    if (!(s = section(root, "chassis", chassis_keys, name, err, errlen)) ||
        kn_json_vec(s, "size_m", 3, 0.01, 5, rp->chassis_size, 0, ctx, err, errlen) ||
        kn_json_num(s, "clearance_m", 0, 1, &rp->chassis_clearance, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: belt", name);
    if (!(s = section(root, "belt", belt_keys, name, err, errlen)) ||
        kn_json_num(s, "speed_max_m_s", 0.01, 20, &rp->belt_speed_max, ctx, err, errlen) ||
        kn_json_num(s, "accel_max_m_s2", 0.01, 1000, &rp->belt_accel_max, ctx, err, errlen) ||
        kn_json_num(s, "decel_emergency_m_s2", 0.01, 1000, &rp->belt_decel_emergency, ctx, err,
                    errlen) ||
        kn_json_num(s, "steering_efficiency", 0.05, 1, &rp->steer_chi, ctx, err, errlen) ||
        kn_json_num(s, "steering_efficiency_icr", 0.05, 1, &rp->steer_chi_icr, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: friction", name);
    if (!(s = section(root, "friction", friction_keys, name, err, errlen)) ||
        kn_json_num(s, "track_mu", 0, 10, &rp->track_mu, ctx, err, errlen) ||
        kn_json_num(s, "track_mu2", 0, 10, &rp->track_mu2, ctx, err, errlen) ||
        kn_json_num(s, "body_mu", 0, 10, &rp->body_mu, ctx, err, errlen))
        goto out;

    snprintf(ctx, sizeof ctx, "%s: battery", name);
    if (!(s = section(root, "battery", battery_keys, name, err, errlen)) ||
        kn_json_num(s, "full_v", 1, 100, &rp->batt_full_v, ctx, err, errlen) ||
        kn_json_num(s, "empty_v", 0, 100, &rp->batt_empty_v, ctx, err, errlen) ||
        kn_json_num(s, "capacity_ah", 0.01, 1000, &rp->batt_capacity_ah, ctx, err, errlen) ||
        kn_json_num(s, "internal_ohm", 0, 10, &rp->batt_r_ohm, ctx, err, errlen) ||
        kn_json_num(s, "idle_a", 0, 100, &rp->batt_idle_a, ctx, err, errlen) ||
        kn_json_num(s, "belt_a_per_m_s", 0, 100, &rp->batt_belt_a_per_mps, ctx, err, errlen) ||
        kn_json_num(s, "flipper_a_per_nm", 0, 100, &rp->batt_flipper_a_per_nm, ctx, err, errlen))
        goto out;
    if (rp->batt_empty_v >= rp->batt_full_v) {
        snprintf(err, errlen, "%s: empty_v must be below full_v", ctx);
        goto out;
    }
    /* the engine draws no pictures, but a file it accepts is one the
     * cameras can use */
    struct kn_robotcams cams;
    if (kn_robotcams_parse(cJSON_GetObjectItemCaseSensitive(root, "cameras"), &cams, name, err,
                           errlen))
        goto out;
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

int kn_robotfile_load(const char *path, struct kn_robot_params *rp, char *err, size_t errlen)
{
    char *text = kn_json_slurp(path, NULL, err, errlen);
    if (!text)
        return -1;
    int rc = kn_robotfile_parse(text, path, rp, err, errlen);
    free(text);
    return rc;
}
