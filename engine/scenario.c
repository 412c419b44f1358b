/* Scenario files (load, variants by deep merge) and the scenario runner:
 * builds a world, runs the controller at 100 Hz and the physics at 1 kHz,
 * samples the trajectory, applies the criterion and the global invariants
 * (finite state, penetration, tip-over), measures the real-time factor, and
 * writes the trajectory as CSV. */
#include "scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonutil.h"
#include "terrain_apparatus.h"

#define DEG (M_PI / 180.0)
#define SAMPLE_STEPS 10 /* 10 ms between controller updates and samples */

const char *kn_expect_name(enum kn_expect e)
{
    return e == KN_EXPECT_PASS ? "pass" : e == KN_EXPECT_FAIL ? "fail" : "either";
}

int kn_scenario_count(const char *path, char *err, size_t errlen)
{
    cJSON *root = kn_json_load(path, err, errlen);
    if (!root)
        return -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "variants");
    int n = 1;
    if (v) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1) {
            snprintf(err, errlen, "%s: \"variants\" must be a non-empty array", path);
            n = -1;
        } else
            n = cJSON_GetArraySize(v);
    }
    cJSON_Delete(root);
    return n;
}

static int parse_flippers_deg(const cJSON *o, const char *key, double out[KN_NFLIPPERS],
                              unsigned *mask, const char *ctx, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    double d[KN_NFLIPPERS];
    if (kn_json_vec(o, key, KN_NFLIPPERS, -180, 180, d, 0, ctx, err, errlen))
        return -1;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        out[k] = d[k] * DEG;
    if (mask)
        *mask = 0xF;
    return 0;
}

static int parse_script(const cJSON *arr, struct kn_scenario *sc, char *err, size_t errlen)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > KN_SCRIPT_MAX) {
        snprintf(err, errlen, "%s: controller \"script\" must be an array of at most %d steps",
                 sc->path, KN_SCRIPT_MAX);
        return -1;
    }
    static const char *const keys[] = { "t", "belts", "twist", "flippers_deg", NULL };
    const cJSON *e;
    double last = -1;
    cJSON_ArrayForEach(e, arr)
    {
        struct kn_script_step *st = &sc->script[sc->nscript];
        memset(st, 0, sizeof *st);
        char ctx[600];
        snprintf(ctx, sizeof ctx, "%s: script[%d]", sc->path, sc->nscript);
        double tw[2];
        if (!cJSON_IsObject(e) || kn_json_only_keys(e, keys, ctx, err, errlen) ||
            kn_json_num(e, "t", 0, 1e4, &st->t, ctx, err, errlen) ||
            kn_json_vec(e, "belts", 2, -10, 10, st->belts, 1, ctx, err, errlen) ||
            kn_json_vec(e, "twist", 2, -10, 10, tw, 1, ctx, err, errlen) ||
            parse_flippers_deg(e, "flippers_deg", st->flip, &st->flip_mask, ctx, err, errlen)) {
            if (!cJSON_IsObject(e))
                snprintf(err, errlen, "%s: must be an object", ctx);
            return -1;
        }
        st->has_belts = cJSON_GetObjectItemCaseSensitive(e, "belts") != NULL;
        st->has_twist = cJSON_GetObjectItemCaseSensitive(e, "twist") != NULL;
        if (st->has_twist) {
            st->v = tw[0];
            st->omega = tw[1];
        }
        if (st->t < last) {
            snprintf(err, errlen, "%s: steps must be in time order", ctx);
            return -1;
        }
        last = st->t;
        sc->nscript++;
    }
    return 0;
}

/* A "trial" criterion (docs/apparatus.md#trials): on an apparatus, with
 * its gates; its own keys, each refused by name when wrong. */
static int parse_trial(const cJSON *o, const char *ctx, struct kn_scenario *sc, char *err,
                       size_t errlen)
{
    static const char *const keys[] = { "type",          "comment",
                                        "course",        "repetitions",
                                        "min_successes", "lane_half_width_m",
                                        "tip_over_deg",  NULL };
    const struct kn_terrain *t = &sc->terrain;
    struct kn_trial_def *d = &sc->crit.trial;
    char course[32] = "";
    double reps = 0, min_succ = NAN, tip = 60, half = NAN;
    if (kn_json_only_keys(o, keys, ctx, err, errlen) ||
        kn_json_str_opt(o, "course", course, sizeof course, ctx, err, errlen) ||
        kn_json_num(o, "repetitions", 1, KN_TRIAL_MAX_REPS, &reps, ctx, err, errlen) ||
        kn_json_num_opt(o, "min_successes", 0, KN_TRIAL_MAX_REPS, &min_succ, ctx, err, errlen) ||
        kn_json_num_opt(o, "lane_half_width_m", 0.1, 100, &half, ctx, err, errlen) ||
        kn_json_num_opt(o, "tip_over_deg", 1, 180, &tip, ctx, err, errlen))
        return -1;
    if (reps != floor(reps) || (!isnan(min_succ) && min_succ != floor(min_succ))) {
        snprintf(err, errlen, "%s: \"%s\" must be a whole number", ctx,
                 reps != floor(reps) ? "repetitions" : "min_successes");
        return -1;
    }
    if (!isnan(min_succ) && min_succ > reps) {
        snprintf(err, errlen, "%s: \"min_successes\" %.0f is more than \"repetitions\" %.0f", ctx,
                 min_succ, reps);
        return -1;
    }
    if (strcmp(course, "traverse") == 0)
        d->course = KN_TRIAL_TRAVERSE;
    else if (strcmp(course, "figure8") == 0)
        d->course = KN_TRIAL_FIGURE8;
    else {
        snprintf(err, errlen, "%s: \"course\" must be \"traverse\" or \"figure8\"", ctx);
        return -1;
    }
    int fig8 = t->type == KN_TERRAIN_APPARATUS && t->apparatus == KN_APP_FIGURE8;
    if (t->type != KN_TERRAIN_APPARATUS || fig8 != (d->course == KN_TRIAL_FIGURE8)) {
        snprintf(
            err, errlen, "%s: \"course\" %s needs %s terrain (config/terrains/apparatus/), not %s",
            ctx, course,
            d->course == KN_TRIAL_FIGURE8 ? "the figure8" : "an apparatus other than the figure8",
            kn_terrain_type_name(t->type));
        return -1;
    }
    d->reps = (int)reps;
    d->min_successes = isnan(min_succ) ? d->reps : (int)min_succ;
    d->tip_rad = tip * DEG;
    d->gate_a = t->gate_start[0];
    d->gate_b = t->gate_finish[0];
    d->barrier_dx = 0.5 * t->length;
    d->lane_dx = 0.5 * t->length + 0.5 * t->cell + t->span_y;
    d->lane_half = fig8 ? 0.5 * t->cell + t->span_y : 0.5 * t->span_y;
    if (!isnan(half))
        d->lane_half = half;
    d->lane_checked = 1;
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i].tag & KN_TAG_WALL)
            d->lane_checked = 0;
    return 0;
}

static int parse_criterion(const cJSON *o, struct kn_scenario *sc, char *err, size_t errlen)
{
    struct kn_criterion *c = &sc->crit;
    char ctx[600], type[32] = "";
    snprintf(ctx, sizeof ctx, "%s: criterion", sc->path);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "%s: missing object \"criterion\"", sc->path);
        return -1;
    }
    if (kn_json_str_opt(o, "type", type, sizeof type, ctx, err, errlen))
        return -1;
    static const char *const names[] = { "cross", "straight", "rotate", "circle", "return",
                                         "ramp",  "hold",     "settle", "trial" };
    int found = -1;
    for (int i = 0; i < 9; i++)
        if (strcmp(type, names[i]) == 0)
            found = i;
    if (found < 0) {
        snprintf(err, errlen,
                 "%s: \"type\" must be cross, straight, rotate, circle, return, ramp, hold, "
                 "settle or trial",
                 ctx);
        return -1;
    }
    c->type = (enum kn_crit_type)found;
    if (c->type == KN_CRIT_TRIAL)
        return parse_trial(o, ctx, sc, err, errlen);
    const struct kn_terrain *t = &sc->terrain;
    /* defaults: the validation suite's criteria (docs/engine.md) */
    double margin = 0.3, tilt_deg = 80, pitch_deg = 1;
    c->fall_z = -INFINITY;
    c->level_z = -INFINITY;
    c->stall_s = 10;
    c->tol_m = 0.10;
    c->yaw_tol = 0.05;
    c->yaw_want = 6.0;
    c->yaw_tol_rot = 0.6;
    c->drift_m = 0.10;
    c->after_s = 2.0;
    c->rms_m = 0.03;
    c->radius_tol = 0.15;
    c->close_m = 0.10;
    c->progress = 0.9;
    c->slip_m = 0.01;
    c->settle_s = 2.0;
    c->creep_m = 0.02;
    c->vel_tol = 0.001;
    c->depth_tol = 0.002;
    double fall_below = NAN;
    static const char *const keys[] = {
        "type",         "comment",     "margin_m",   "on_top",      "fall_below_m", "stall_s",
        "max_tilt_deg", "target",      "tol_m",      "yaw_tol_rad", "yaw_rad",      "drift_m",
        "after_s",      "rms_m",       "radius_tol", "close_m",     "drive_s",      "distance_m",
        "progress",     "stop_s",      "slip_m",     "settle_s",    "creep_m",      "pitch_tol_deg",
        "vel_tol_m_s",  "depth_tol_m", "pass_x",     "tol_rad",     "descend",      NULL
    };
    int on_top = 0, descend = 0;
    double drive[2] = { 0, 0 }, pass_x = NAN;
    if (kn_json_only_keys(o, keys, ctx, err, errlen) ||
        kn_json_num_opt(o, "margin_m", 0, 10, &margin, ctx, err, errlen) ||
        kn_json_bool_opt(o, "on_top", &on_top, ctx, err, errlen) ||
        kn_json_bool_opt(o, "descend", &descend, ctx, err, errlen) ||
        kn_json_num_opt(o, "fall_below_m", -10, 10, &fall_below, ctx, err, errlen) ||
        kn_json_num_opt(o, "stall_s", 0.1, 1000, &c->stall_s, ctx, err, errlen) ||
        kn_json_num_opt(o, "max_tilt_deg", 1, 180, &tilt_deg, ctx, err, errlen) ||
        kn_json_vec(o, "target", 2, -1e3, 1e3, c->target, 1, ctx, err, errlen) ||
        kn_json_num_opt(o, "tol_m", 0, 100, &c->tol_m, ctx, err, errlen) ||
        kn_json_num_opt(o, "yaw_tol_rad", 0, 10, &c->yaw_tol, ctx, err, errlen) ||
        kn_json_num_opt(o, "yaw_rad", -1e3, 1e3, &c->yaw_want, ctx, err, errlen) ||
        kn_json_num_opt(o, "drift_m", 0, 100, &c->drift_m, ctx, err, errlen) ||
        kn_json_num_opt(o, "tol_rad", 0, 100, &c->yaw_tol_rot, ctx, err, errlen) ||
        kn_json_num_opt(o, "after_s", 0, 1e3, &c->after_s, ctx, err, errlen) ||
        kn_json_num_opt(o, "rms_m", 0, 10, &c->rms_m, ctx, err, errlen) ||
        kn_json_num_opt(o, "radius_tol", 0, 10, &c->radius_tol, ctx, err, errlen) ||
        kn_json_num_opt(o, "close_m", 0, 10, &c->close_m, ctx, err, errlen) ||
        kn_json_vec(o, "drive_s", 2, 0, 1e4, drive, 1, ctx, err, errlen) ||
        kn_json_num_opt(o, "distance_m", 0, 1e3, &c->distance, ctx, err, errlen) ||
        kn_json_num_opt(o, "progress", 0, 2, &c->progress, ctx, err, errlen) ||
        kn_json_num_opt(o, "stop_s", 0, 1e4, &c->stop_at, ctx, err, errlen) ||
        kn_json_num_opt(o, "slip_m", 0, 10, &c->slip_m, ctx, err, errlen) ||
        kn_json_num_opt(o, "settle_s", 0, 1e3, &c->settle_s, ctx, err, errlen) ||
        kn_json_num_opt(o, "creep_m", 0, 10, &c->creep_m, ctx, err, errlen) ||
        kn_json_num_opt(o, "pitch_tol_deg", 0, 180, &pitch_deg, ctx, err, errlen) ||
        kn_json_num_opt(o, "vel_tol_m_s", 0, 10, &c->vel_tol, ctx, err, errlen) ||
        kn_json_num_opt(o, "depth_tol_m", 0, 1, &c->depth_tol, ctx, err, errlen) ||
        kn_json_num_opt(o, "pass_x", -1e3, 1e3, &pass_x, ctx, err, errlen))
        return -1;
    c->on_top = on_top;
    c->max_tilt = tilt_deg * DEG;
    c->pitch_tol = pitch_deg * DEG;
    c->drive_from = drive[0];
    c->drive_to = drive[1];
    /* obstacle geometry comes from the terrain so variants only change it there */
    c->pass_x = isnan(pass_x) ? t->far_x + margin : pass_x;
    c->level_z = on_top ? t->top_z : -INFINITY;
    /* descending (from the upper level, driving towards -x): passed once the
     * CoG is margin beyond the obstacle's near edge, on the lower level */
    c->dir = descend ? -1 : 1;
    if (descend) {
        c->pass_x = isnan(pass_x) ? t->edge_x - margin : pass_x;
        c->level_z = -INFINITY;
    }
    if (!isnan(fall_below))
        c->fall_z = fall_below;
    return 0;
}

/* Variant v (0 when the file has none) merged over the file's top level. */
static int select_variant(cJSON *root, const char *path, int v, struct kn_scenario *sc, char *err,
                          size_t errlen)
{
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    sc->nvariants = 1;
    if (vars) {
        if (!cJSON_IsArray(vars) || v < 0 || v >= cJSON_GetArraySize(vars)) {
            snprintf(err, errlen, "%s: no variant %d", path, v);
            return -1;
        }
        sc->nvariants = cJSON_GetArraySize(vars);
        const cJSON *var = cJSON_GetArrayItem(vars, v);
        if (!cJSON_IsObject(var)) {
            snprintf(err, errlen, "%s: variants[%d] must be an object", path, v);
            return -1;
        }
        cJSON *copy = cJSON_Duplicate(var, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(root, "variants");
        int m = copy ? kn_json_merge(root, copy) : -1;
        cJSON_Delete(copy);
        if (m) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
    } else if (v != 0) {
        snprintf(err, errlen, "%s: no variant %d", path, v);
        return -1;
    }
    sc->variant = v;
    return 0;
}

/* The known top-level keys; name, title, group, param, monotone, deviation,
 * study. */
static int parse_names(const cJSON *root, const char *path, struct kn_scenario *sc, char *err,
                       size_t errlen)
{
    static const char *const keys[] = {
        "name",    "title",     "group",      "param",      "comment",       "robot",  "terrain",
        "physics", "start",     "duration_s", "controller", "criterion",     "expect", "monotone",
        "view",    "deviation", "limits",     "robots",     "robot_changes", "study",  NULL
    };
    if (kn_json_only_keys(root, keys, path, err, errlen) ||
        kn_json_str_opt(root, "name", sc->name, sizeof sc->name, path, err, errlen) ||
        kn_json_str_opt(root, "title", sc->title, sizeof sc->title, path, err, errlen) ||
        kn_json_str_opt(root, "group", sc->group, sizeof sc->group, path, err, errlen) ||
        kn_json_str_opt(root, "param", sc->param, sizeof sc->param, path, err, errlen) ||
        kn_json_bool_opt(root, "monotone", &sc->monotone, path, err, errlen) ||
        kn_json_str_opt(root, "deviation", sc->deviation, sizeof sc->deviation, path, err, errlen))
        return -1;
    char study[512] = "";
    if (kn_json_str_opt(root, "study", study, sizeof study, path, err, errlen))
        return -1;
    if (study[0])
        kn_path_join(path, study, sc->study, sizeof sc->study);
    if (!sc->name[0]) {
        snprintf(err, errlen, "%s: missing \"name\"", path);
        return -1;
    }
    return 0;
}

/* The robot file with "robot_changes" merged over its JSON (objects key
 * by key, as variants merge), then read by the robot file's own reader:
 * a key the robot file does not have is refused there, by its path. */
static int load_robot_changed(const cJSON *changes, const char *path, const char *rpath,
                              struct kn_robot_params *rp, char **spec, char *err, size_t errlen)
{
    if (!cJSON_IsObject(changes)) {
        snprintf(err, errlen, "%s: \"robot_changes\" must be an object", path);
        return -1;
    }
    cJSON *robot = kn_json_load(rpath, err, errlen);
    if (!robot)
        return -1;
    char *text = kn_json_merge(robot, changes) ? NULL : cJSON_PrintUnformatted(robot);
    cJSON_Delete(robot);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    char name[1200];
    snprintf(name, sizeof name, "%s with robot_changes of %s", rpath, path);
    int rc = kn_robotfile_parse(text, name, rp, err, errlen);
    *spec = text; /* what the robot is, for the engine's world answer */
    return rc;
}

/* The robot file as it is, for the engine's world answer. */
static int robot_spec(const char *rpath, char **spec, char *err, size_t errlen)
{
    cJSON *robot = kn_json_load(rpath, err, errlen);
    *spec = robot ? cJSON_PrintUnformatted(robot) : NULL;
    cJSON_Delete(robot);
    if (robot && !*spec)
        snprintf(err, errlen, "%s: out of memory", rpath);
    return *spec ? 0 : -1;
}

/* The robot file (relative to the scenario), the scenario's
 * "robot_changes" to it, and the "physics" overrides. */
static int load_robot_physics(const cJSON *root, const char *path, struct kn_scenario *sc,
                              char *err, size_t errlen)
{
    char rel[256] = "../robots/kenaf.json", rpath[1024];
    if (kn_json_str_opt(root, "robot", rel, sizeof rel, path, err, errlen))
        return -1;
    kn_path_join(path, rel, rpath, sizeof rpath);
    const cJSON *changes = cJSON_GetObjectItemCaseSensitive(root, "robot_changes");
    if (changes ? load_robot_changed(changes, path, rpath, &sc->rp, &sc->robot_spec, err, errlen)
                : kn_robotfile_load(rpath, &sc->rp, err, errlen) ||
                      robot_spec(rpath, &sc->robot_spec, err, errlen))
        return -1;
    kn_physics_defaults(&sc->pp);
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "physics");
    if (ph && kn_physics_from_json(ph, &sc->pp, err, errlen))
        return -1;
    return 0;
}

/* "terrain": {"file": ..., overrides...} or an inline terrain object; and
 * the value of the parameter a study varies, when it names one. */
static int load_terrain(const cJSON *root, const char *path, struct kn_scenario *sc, char *err,
                        size_t errlen)
{
    const cJSON *tj = cJSON_GetObjectItemCaseSensitive(root, "terrain");
    if (!cJSON_IsObject(tj)) {
        snprintf(err, errlen, "%s: missing object \"terrain\"", path);
        return -1;
    }
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(tj, "file");
    if (tf) {
        char tpath[1024];
        if (!cJSON_IsString(tf)) {
            snprintf(err, errlen, "%s: terrain \"file\" must be a string", path);
            return -1;
        }
        kn_path_join(path, tf->valuestring, tpath, sizeof tpath);
        cJSON *spec = kn_terrain_spec(tpath, tj, err, errlen);
        int rc = spec ? kn_terrain_from_json(spec, tpath, &sc->terrain, err, errlen) : -1;
        if (rc == 0)
            sc->terrain_spec = kn_terrain_spec_text(spec, &sc->terrain);
        cJSON_Delete(spec);
        if (rc)
            return -1;
    } else if (kn_terrain_from_json(tj, path, &sc->terrain, err, errlen)) {
        return -1;
    } else {
        sc->terrain_spec = kn_terrain_spec_text(tj, &sc->terrain);
    }
    if (!sc->terrain_spec) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (sc->param[0]) {
        const cJSON *pv = cJSON_GetObjectItemCaseSensitive(tj, sc->param);
        sc->param_value = cJSON_IsNumber(pv) ? pv->valuedouble : NAN;
    }
    return 0;
}

/* One start object: pose and flippers (x -1 and z NaN: the runner's
 * defaults). ctx names it in errors. Also the robots' starts
 * (scenario_robots.c). */
int kn_scenario_parse_start(const struct cJSON *st, const char *ctx, struct kn_pose *pose,
                            double flip[KN_NFLIPPERS], char *err, size_t errlen)
{
    static const char *const sk[] = {
        "x", "y", "z", "roll_deg", "pitch_deg", "yaw_deg", "flippers_deg", NULL
    };
    *pose = (struct kn_pose){ -1.0, 0, NAN, 0, 0, 0 };
    double r = 0, p = 0, y = 0;
    if (!cJSON_IsObject(st) || kn_json_only_keys(st, sk, ctx, err, errlen) ||
        kn_json_num_opt(st, "x", -1e3, 1e3, &pose->x, ctx, err, errlen) ||
        kn_json_num_opt(st, "y", -1e3, 1e3, &pose->y, ctx, err, errlen) ||
        kn_json_num_opt(st, "z", -1e3, 1e3, &pose->z, ctx, err, errlen) ||
        kn_json_num_opt(st, "roll_deg", -180, 180, &r, ctx, err, errlen) ||
        kn_json_num_opt(st, "pitch_deg", -90, 90, &p, ctx, err, errlen) ||
        kn_json_num_opt(st, "yaw_deg", -360, 360, &y, ctx, err, errlen) ||
        parse_flippers_deg(st, "flippers_deg", flip, NULL, ctx, err, errlen)) {
        if (!cJSON_IsObject(st))
            snprintf(err, errlen, "%s: must be an object", ctx);
        return -1;
    }
    pose->roll = r * DEG;
    pose->pitch = p * DEG;
    pose->yaw = y * DEG;
    return 0;
}

/* "start" and "duration_s". */
static int parse_start(const cJSON *root, const char *path, struct kn_scenario *sc, char *err,
                       size_t errlen)
{
    sc->start = (struct kn_pose){ -1.0, 0, NAN, 0, 0, 0 };
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "start");
    if (st) {
        char ctx[600];
        snprintf(ctx, sizeof ctx, "%s: start", path);
        if (kn_scenario_parse_start(st, ctx, &sc->start, sc->start_flip, err, errlen))
            return -1;
    }
    sc->duration = 30;
    return kn_json_num_opt(root, "duration_s", 0.01, 3600, &sc->duration, path, err, errlen);
}

/* The "kurose_flippers" controller's settings (degrees in the file). */
static int parse_kurose(const cJSON *ct, const char *cctx, struct kn_scenario *sc, char *err,
                        size_t errlen)
{
    static const char *const ck[] = { "type",           "comment",        "belt_m_s",
                                      "approach_deg",   "push_deg",       "rear_deg",
                                      "rear_start_deg", "rear_pitch_deg", "top_tol_m",
                                      "pause_belts",    "retract_m",      NULL };
    double a = 45, pu = -30, re = -30, rs = 0, rpd = 90;
    sc->ctrl = KN_CTRL_KUROSE;
    sc->k_belt = 0.3;
    sc->k_top_tol = 10;
    sc->k_retract = 100;
    if (kn_json_only_keys(ct, ck, cctx, err, errlen) ||
        kn_json_num_opt(ct, "belt_m_s", -5, 5, &sc->k_belt, cctx, err, errlen) ||
        kn_json_num_opt(ct, "approach_deg", -180, 180, &a, cctx, err, errlen) ||
        kn_json_num_opt(ct, "push_deg", -180, 180, &pu, cctx, err, errlen) ||
        kn_json_num_opt(ct, "rear_deg", -180, 180, &re, cctx, err, errlen) ||
        kn_json_num_opt(ct, "rear_start_deg", -180, 180, &rs, cctx, err, errlen) ||
        kn_json_num_opt(ct, "rear_pitch_deg", 0, 90, &rpd, cctx, err, errlen) ||
        kn_json_num_opt(ct, "top_tol_m", 0, 10, &sc->k_top_tol, cctx, err, errlen) ||
        kn_json_bool_opt(ct, "pause_belts", &sc->k_pause, cctx, err, errlen) ||
        kn_json_num_opt(ct, "retract_m", 0, 100, &sc->k_retract, cctx, err, errlen))
        return -1;
    sc->k_rear_pitch = rpd * DEG;
    sc->k_approach = a * DEG;
    sc->k_push = pu * DEG;
    sc->k_rear = re * DEG;
    sc->k_rear_start = rs * DEG;
    return 0;
}

/* The "assist" controller: the belts' speed and any of the assist's
 * parameters (common/assist.h; names and ranges from its table). */
static int parse_assist(const cJSON *ct, const char *cctx, struct kn_scenario *sc, char *err,
                        size_t errlen)
{
    const char *keys[KN_ASSIST_MAX_PARAMS + 4] = { "type", "comment", "belt_m_s" };
    int nk = 3;
    for (int i = 0; i < kn_assist_param_count && i < KN_ASSIST_MAX_PARAMS; i++)
        keys[nk++] = kn_assist_param_table[i].name;
    keys[nk] = NULL;
    sc->ctrl = KN_CTRL_ASSIST;
    sc->a_belt = 0.3;
    kn_assist_defaults(&sc->assist);
    if (kn_json_only_keys(ct, keys, cctx, err, errlen) ||
        kn_json_num_opt(ct, "belt_m_s", -5, 5, &sc->a_belt, cctx, err, errlen))
        return -1;
    for (int i = 0; i < kn_assist_param_count; i++) {
        const struct kn_assist_param_desc *d = &kn_assist_param_table[i];
        if (kn_json_num_opt(ct, d->name, d->lo, d->hi, kn_assist_param(&sc->assist, i), cctx, err,
                            errlen))
            return -1;
    }
    return 0;
}

/* "controller": a script, or the Kurose flipper controller. */
/* A controller program run by kenaf-sim-run: "must_exit" (default true)
 * fails a run the time limit ends; the file's "limits" hold over the whole
 * run whatever the criterion decided early. */
static int parse_external(const cJSON *root, const cJSON *ct, const char *cctx,
                          struct kn_scenario *sc, char *err, size_t errlen)
{
    static const char *const ck[] = { "type", "comment", "must_exit", NULL };
    static const char *const lk[] = { "comment", "max_tilt_deg", "max_torque_nm", NULL };
    int must_exit = 1;
    double tilt = 0, torque = 0;
    char lctx[640];
    snprintf(lctx, sizeof lctx, "%s: limits", sc->path);
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(root, "limits");
    sc->ctrl = KN_CTRL_EXTERNAL;
    if (kn_json_only_keys(ct, ck, cctx, err, errlen) ||
        kn_json_bool_opt(ct, "must_exit", &must_exit, cctx, err, errlen))
        return -1;
    if (lim && (!cJSON_IsObject(lim) || kn_json_only_keys(lim, lk, lctx, err, errlen) ||
                kn_json_num_opt(lim, "max_tilt_deg", 1, 180, &tilt, lctx, err, errlen) ||
                kn_json_num_opt(lim, "max_torque_nm", 0.001, 1e4, &torque, lctx, err, errlen))) {
        if (!cJSON_IsObject(lim))
            snprintf(err, errlen, "%s: expected an object", lctx);
        return -1;
    }
    sc->must_exit = must_exit;
    sc->limit_tilt = tilt * DEG;
    sc->limit_torque = torque;
    return 0;
}

static int parse_controller(const cJSON *root, const char *path, struct kn_scenario *sc, char *err,
                            size_t errlen)
{
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(root, "controller");
    if (!cJSON_IsObject(ct)) {
        snprintf(err, errlen, "%s: missing object \"controller\"", path);
        return -1;
    }
    char ctype[32] = "";
    char cctx[600];
    snprintf(cctx, sizeof cctx, "%s: controller", path);
    if (kn_json_str_opt(ct, "type", ctype, sizeof ctype, cctx, err, errlen))
        return -1;
    if (strcmp(ctype, "script") == 0) {
        static const char *const ck[] = { "type", "comment", "script", NULL };
        sc->ctrl = KN_CTRL_SCRIPT;
        if (kn_json_only_keys(ct, ck, cctx, err, errlen) ||
            parse_script(cJSON_GetObjectItemCaseSensitive(ct, "script"), sc, err, errlen))
            return -1;
        return 0;
    }
    if (strcmp(ctype, "kurose_flippers") == 0)
        return parse_kurose(ct, cctx, sc, err, errlen);
    if (strcmp(ctype, "assist") == 0)
        return parse_assist(ct, cctx, sc, err, errlen);
    if (strcmp(ctype, "external") == 0)
        return parse_external(root, ct, cctx, sc, err, errlen);
    snprintf(err, errlen,
             "%s: \"type\" must be \"script\", \"kurose_flippers\", \"assist\" or \"external\"",
             cctx);
    return -1;
}

/* "expect" (pass, fail, either) and "view" (side or top; by default side
 * for any terrain but flat ground and height fields). */
static int parse_expect_view(const cJSON *root, const char *path, struct kn_scenario *sc, char *err,
                             size_t errlen)
{
    char ex[16] = "pass", view[16] = "";
    if (kn_json_str_opt(root, "expect", ex, sizeof ex, path, err, errlen) ||
        kn_json_str_opt(root, "view", view, sizeof view, path, err, errlen))
        return -1;
    if (strcmp(ex, "pass") == 0)
        sc->expect = KN_EXPECT_PASS;
    else if (strcmp(ex, "fail") == 0)
        sc->expect = KN_EXPECT_FAIL;
    else if (strcmp(ex, "either") == 0)
        sc->expect = KN_EXPECT_EITHER;
    else {
        snprintf(err, errlen, "%s: \"expect\" must be pass, fail or either", path);
        return -1;
    }
    if (view[0])
        sc->view_side = strcmp(view, "side") == 0;
    else
        sc->view_side =
            sc->terrain.type != KN_TERRAIN_FLAT && sc->terrain.type != KN_TERRAIN_HEIGHTFIELD;
    return 0;
}

int kn_scenario_load(const char *path, int v, struct kn_scenario *sc, char *err, size_t errlen)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->path, sizeof sc->path, "%s", path);
    cJSON *root = kn_json_load(path, err, errlen);
    if (!root)
        return -1;
    int rc = 0;
    if (select_variant(root, path, v, sc, err, errlen) ||
        parse_names(root, path, sc, err, errlen) ||
        load_robot_physics(root, path, sc, err, errlen) ||
        load_terrain(root, path, sc, err, errlen) || parse_start(root, path, sc, err, errlen) ||
        parse_controller(root, path, sc, err, errlen) ||
        kn_scenario_parse_robots(root, path, sc, err, errlen) ||
        parse_criterion(cJSON_GetObjectItemCaseSensitive(root, "criterion"), sc, err, errlen) ||
        parse_expect_view(root, path, sc, err, errlen))
        rc = -1;
    if (rc)
        kn_scenario_free(sc);
    cJSON_Delete(root);
    return rc;
}

void kn_scenario_free(struct kn_scenario *sc)
{
    kn_terrain_free(&sc->terrain);
    free(sc->terrain_spec);
    free(sc->robot_spec);
    sc->terrain_spec = sc->robot_spec = NULL;
}

void kn_result_free(struct kn_result *res)
{
    free(res->samples);
    res->samples = NULL;
    res->nsamples = 0;
}

/* ---- controllers ---- */

struct ctrl_state {
    int started;
    int next;  /* script: next step */
    int phase; /* kurose: 0 approach, 1 front pushing, 2 rear pushing */
    int resumed;
    struct kn_assist assist;
    double assist_belt; /* the belt speed last set */
};

/* The assist on what the robot's STATUS would carry: attitude, flipper
 * angles and torques, belt speeds and the encoders' distance; nothing of
 * the terrain. Set-points every control tick, like a console's. */
static void assist_update(const struct kn_scenario *sc, struct ctrl_state *cs, struct kn_world *w,
                          int id)
{
    struct kn_state st;
    kn_world_state(w, id, &st);
    struct kn_assist_input in = { 0 };
    in.pitch_rad = st.rpy_rad[1];
    in.roll_rad = st.rpy_rad[0];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        in.flip_rad[k] = st.flipper_rad[k];
        in.torque_nm[k] = st.flipper_torque_nm[k];
    }
    in.has_torque = (st.have & KN_HAVE_TORQUE) != 0;
    in.belt_m_s[0] = st.belt_speed_m_s[0];
    in.belt_m_s[1] = st.belt_speed_m_s[1];
    in.travelled_m = 0.5 * (st.belt_pos_m[0] + st.belt_pos_m[1]);
    if (!cs->started) {
        cs->started = 1;
        kn_assist_init(&cs->assist, &sc->assist);
    } else {
        in.dt_s = SAMPLE_STEPS * sc->pp.step_s;
    }
    struct kn_assist_output out;
    kn_assist_update(&cs->assist, &in, &out);
    kn_world_set_flippers(w, id, out.flip_rad, 0xF);
    double b = fmin(fabs(sc->a_belt), out.belt_limit_m_s);
    b = sc->a_belt < 0 ? -b : b;
    /* the climb speed replaces a forward drive; backing down, any */
    if (isfinite(out.belt_m_s) && (out.belt_m_s < 0 || sc->a_belt > 0))
        b = out.belt_m_s;
    if (b != cs->assist_belt || cs->started == 1) {
        kn_world_set_belts(w, id, b, b);
        cs->assist_belt = b;
        cs->started = 2;
    }
}

static void ctrl_update(const struct kn_scenario *sc, struct ctrl_state *cs, struct kn_world *w,
                        int id, double t, const struct kn_truth *tr)
{
    if (sc->ctrl == KN_CTRL_SCRIPT) {
        while (cs->next < sc->nscript && sc->script[cs->next].t <= t + 1e-9) {
            const struct kn_script_step *st = &sc->script[cs->next++];
            if (st->has_belts)
                kn_world_set_belts(w, id, st->belts[0], st->belts[1]);
            if (st->has_twist)
                kn_world_set_twist(w, id, st->v, st->omega);
            if (st->flip_mask)
                kn_world_set_flippers(w, id, st->flip, st->flip_mask);
        }
        return;
    }
    if (sc->ctrl == KN_CTRL_ASSIST) {
        assist_update(sc, cs, w, id);
        return;
    }
    /* Kurose sequence: approach with the front flippers up; when a front
     * flipper touches the obstacle, push them down; once the CoG is past the
     * obstacle edge, push the rear flippers down too */
    double f[KN_NFLIPPERS];
    if (!cs->started) {
        cs->started = 1;
        f[KN_FL] = f[KN_FR] = sc->k_approach;
        f[KN_RL] = f[KN_RR] = sc->k_rear_start;
        kn_world_set_flippers(w, id, f, 0xF);
        kn_world_set_belts(w, id, sc->k_belt, sc->k_belt);
    }
    /* "on the step": a front flipper touches the obstacle at (nearly) its top */
    int on = 0;
    for (int k = KN_FL; k <= KN_FR; k++)
        on |= (tr->part_tags[KN_PART_FLIPPER_FL + k] & KN_TAG_OBSTACLE) &&
              tr->part_zmax[KN_PART_FLIPPER_FL + k] >= sc->terrain.top_z - sc->k_top_tol;
    if (cs->phase == 0 && on) {
        f[KN_FL] = f[KN_FR] = sc->k_push;
        kn_world_set_flippers(w, id, f, (1u << KN_FL) | (1u << KN_FR));
        if (sc->k_pause)
            kn_world_set_belts(w, id, 0, 0);
        cs->phase = 1;
    }
    /* an operator holds the belts while the front flippers swing down */
    if (cs->phase >= 1 && sc->k_pause && !cs->resumed) {
        struct kn_state st;
        kn_world_state(w, id, &st);
        if (fabs(st.flipper_rad[KN_FL] - sc->k_push) < 0.05 &&
            fabs(st.flipper_rad[KN_FR] - sc->k_push) < 0.05) {
            kn_world_set_belts(w, id, sc->k_belt, sc->k_belt);
            cs->resumed = 1;
        }
    }
    /* body pitch, nose up positive: from the body x axis (first column) */
    double nose_up = asin(tr->rot[6] < -1 ? -1 : tr->rot[6] > 1 ? 1 : tr->rot[6]);
    /* the CoG in the obstacle's own frame, whatever the terrain's pose */
    double cog[2];
    kn_terrain_to_local(&sc->terrain, tr->cog, cog);
    if (cs->phase == 1 && (cog[0] >= sc->terrain.edge_x || nose_up >= sc->k_rear_pitch)) {
        f[KN_RL] = f[KN_RR] = sc->k_rear;
        kn_world_set_flippers(w, id, f, (1u << KN_RL) | (1u << KN_RR));
        cs->phase = 2;
    }
    /* on top: fold every flipper back in line to drive off the edge */
    if (cs->phase == 2 && cog[0] >= sc->terrain.edge_x + sc->k_retract) {
        f[0] = f[1] = f[2] = f[3] = 0;
        kn_world_set_flippers(w, id, f, 0xF);
        cs->phase = 3;
    }
}

/* CPU time of this thread: the real-time factor is per core and does not
 * depend on what else the machine runs. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double wrap(double a)
{
    while (a > M_PI)
        a -= 2 * M_PI;
    while (a <= -M_PI)
        a += 2 * M_PI;
    return a;
}

void kn_scenario_sample(struct kn_world *w, int id, const struct kn_sample *prev,
                        struct kn_sample *s)
{
    struct kn_state st;
    struct kn_truth tr;
    kn_world_state(w, id, &st);
    kn_world_truth(w, id, &tr);
    s->t = st.time_s;
    memcpy(s->origin, tr.origin, sizeof s->origin);
    memcpy(s->cog, tr.cog, sizeof s->cog);
    memcpy(s->rpy, st.rpy_rad, sizeof s->rpy);
    memcpy(s->vel, tr.vel, sizeof s->vel);
    s->yaw_unwrapped =
        prev ? prev->yaw_unwrapped + wrap(st.rpy_rad[2] - prev->rpy[2]) : st.rpy_rad[2];
    memcpy(s->belts, st.belt_speed_m_s, sizeof s->belts);
    memcpy(s->flip, st.flipper_rad, sizeof s->flip);
    memcpy(s->torque, st.flipper_torque_nm, sizeof s->torque);
    s->contacts = tr.contacts;
    s->wall = 0;
    for (int k = 0; k < KN_NPARTS; k++)
        s->wall |= (tr.part_tags[k] & KN_TAG_WALL) != 0;
    s->zmin = tr.contact_zmin;
    s->max_depth = tr.max_depth;
    s->battery = st.battery_v;
    kn_world_outline(w, id, &s->outline);
}

int kn_sample_finite(const struct kn_sample *s)
{
    const double v[] = { s->origin[0], s->origin[1], s->origin[2], s->rpy[0],   s->rpy[1],
                         s->rpy[2],    s->vel[0],    s->vel[1],    s->vel[2],   s->flip[0],
                         s->flip[1],   s->flip[2],   s->flip[3],   s->torque[0] };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

int kn_scenario_run(const struct kn_scenario *sc, int keep_samples, struct kn_result *res)
{
    memset(res, 0, sizeof *res);
    res->finite = 1;
    if (sc->ctrl == KN_CTRL_EXTERNAL)
        return -1;
    struct kn_world *w = kn_world_create(&sc->pp);
    if (!w)
        return -1;
    if (kn_world_set_terrain(w, &sc->terrain)) {
        kn_world_destroy(w);
        return -1;
    }
    int id = kn_world_spawn(w, &sc->rp, &sc->start, sc->start_flip);
    if (id < 0) {
        kn_world_destroy(w);
        return -1;
    }
    struct kn_crit_state *cs = kn_crit_begin(sc);
    if (!cs) {
        kn_world_destroy(w);
        return -1;
    }
    int cap = keep_samples ? (int)(sc->duration * 1000 / SAMPLE_STEPS) + 2 : 0;
    if (cap) {
        res->samples = malloc((size_t)cap * sizeof *res->samples);
        if (!res->samples) {
            kn_crit_free(cs);
            kn_world_destroy(w);
            return -1;
        }
    }
    struct ctrl_state ctl;
    memset(&ctl, 0, sizeof ctl);
    struct kn_sample cur, prev;
    struct kn_truth tr;
    int decided = 0, passed = 0, have_prev = 0, gave_up = 0;
    long nsteps = lround(sc->duration / sc->pp.step_s);
    double t0 = now_s();
    kn_scenario_sample(w, id, NULL, &cur);
    kn_world_truth(w, id, &tr);
    for (long step = 0; step <= nsteps; step += SAMPLE_STEPS) {
        if (step > 0) {
            kn_world_step(w, SAMPLE_STEPS);
            kn_scenario_sample(w, id, have_prev ? &prev : NULL, &cur);
            kn_world_truth(w, id, &tr);
        }
        prev = cur;
        have_prev = 1;
        if (res->samples && res->nsamples < cap)
            res->samples[res->nsamples++] = cur;
        if (!kn_sample_finite(&cur)) {
            res->finite = 0;
            snprintf(res->why, sizeof res->why, "non-finite state at t=%.2f s", cur.t);
            passed = 0;
            decided = 1;
            break;
        }
        if (cur.max_depth > res->max_depth)
            res->max_depth = cur.max_depth;
        double tilt = fmax(fabs(cur.rpy[0]), fabs(cur.rpy[1]));
        if (tilt > res->max_tilt)
            res->max_tilt = tilt;
        if (kn_crit_sample(cs, &cur, &passed, res->why, sizeof res->why)) {
            decided = 1;
            break;
        }
        ctrl_update(sc, &ctl, w, id, cur.t, &tr);
        /* the assist backed down off a step too high and stopped: no
         * progress from here, said now rather than after stall_s */
        if (sc->ctrl == KN_CTRL_ASSIST && ctl.assist.phase == KN_ASSIST_GAVE_UP) {
            snprintf(res->why, sizeof res->why,
                     "the assist gave up at t=%.2f s (nose up %.0f deg, backed down: too high)",
                     cur.t, sc->assist.abort_pitch_deg);
            passed = 0;
            decided = 1;
            gave_up = 1;
            break;
        }
    }
    if (!decided)
        kn_crit_end(cs, &passed, res->why, sizeof res->why);
    res->cpu_s = now_s() - t0;
    res->sim_s = kn_world_time(w);
    res->rtf = res->cpu_s > 0 ? res->sim_s / res->cpu_s : 0;
    res->hash = kn_world_hash(w);
    res->passed = passed && res->finite;
    res->mode = !res->finite ? KN_MODE_CRITERION : gave_up ? KN_MODE_STALL : kn_crit_mode(cs);
    res->matches = sc->expect == KN_EXPECT_EITHER || (sc->expect == KN_EXPECT_PASS) == res->passed;
    kn_crit_free(cs);
    kn_world_destroy(w);
    return 0;
}

int kn_result_write_csv(const struct kn_result *res, FILE *f)
{
    fprintf(f, "t_s,x_m,y_m,z_m,roll_rad,pitch_rad,yaw_rad,cog_x_m,cog_z_m,belt_l_m_s,"
               "belt_r_m_s,flip_fl_rad,flip_fr_rad,flip_rl_rad,flip_rr_rad,tq_fl_nm,tq_fr_nm,"
               "tq_rl_nm,tq_rr_nm,contacts,max_depth_m,battery_v\n");
    for (int i = 0; i < res->nsamples; i++) {
        const struct kn_sample *s = &res->samples[i];
        fprintf(f,
                "%.3f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,"
                "%.3f,%.3f,%.3f,%.3f,%d,%.5f,%.3f\n",
                s->t, s->origin[0], s->origin[1], s->origin[2], s->rpy[0], s->rpy[1], s->rpy[2],
                s->cog[0], s->cog[2], s->belts[0], s->belts[1], s->flip[0], s->flip[1], s->flip[2],
                s->flip[3], s->torque[0], s->torque[1], s->torque[2], s->torque[3], s->contacts,
                s->max_depth, s->battery);
    }
    return ferror(f) ? -1 : 0;
}
