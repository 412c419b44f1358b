/* A scenario's fleet (scenario.h): the file's "robots" list, each robot's
 * name and start, and the default starts of robots the file does not list.
 * Strict, like the rest of the format: a typo or a clash is an error that
 * names the file and the entry, never a robot silently put at the origin. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"
#include "scenario.h"

/* Robots without declared starts stand this far apart, side by side: the
 * Kenaf with its flippers out is about 1.2 m long and 0.5 m wide, so two
 * of them at 3 m never touch at the start and have room to turn. */
#define FLEET_SPACING_M 3.0

int kn_scenario_robot_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= KN_SCENARIO_ROBOT_NAME)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

int kn_scenario_parse_robots(const struct cJSON *root, const char *path, struct kn_scenario *sc,
                             char *err, size_t errlen)
{
    static const char *const rk[] = { "name", "start", "comment", NULL };
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(root, "robots");
    sc->nrobots = 0;
    if (!ra)
        return 0;
    if (!cJSON_IsArray(ra) || cJSON_GetArraySize(ra) < 1 ||
        cJSON_GetArraySize(ra) > KN_SCENARIO_MAX_ROBOTS) {
        snprintf(err, errlen, "%s: \"robots\" must be an array of 1..%d robots", path,
                 KN_SCENARIO_MAX_ROBOTS);
        return -1;
    }
    if (sc->ctrl != KN_CTRL_EXTERNAL) {
        snprintf(err, errlen,
                 "%s: \"robots\" needs an \"external\" controller (one program per robot)", path);
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "start")) {
        snprintf(err, errlen,
                 "%s: \"start\" and \"robots\" exclude each other (each robot has its own "
                 "\"start\")",
                 path);
        return -1;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, ra)
    {
        struct kn_scenario_robot *sr = &sc->robots[sc->nrobots];
        char ctx[640];
        snprintf(ctx, sizeof ctx, "%s: robots[%d]", path, sc->nrobots);
        memset(sr, 0, sizeof *sr);
        if (!cJSON_IsObject(r)) {
            snprintf(err, errlen, "%s: must be an object {\"name\", \"start\"}", ctx);
            return -1;
        }
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(r, "name");
        if (kn_json_only_keys(r, rk, ctx, err, errlen))
            return -1;
        if (!cJSON_IsString(nm) || !kn_scenario_robot_name_ok(nm->valuestring)) {
            snprintf(err, errlen,
                     "%s: \"name\" must be 1..%d letters, digits, '_' or '-' (as after "
                     "kenaf-sim-run --robot)",
                     ctx, KN_SCENARIO_ROBOT_NAME - 1);
            return -1;
        }
        snprintf(sr->name, sizeof sr->name, "%s", nm->valuestring);
        for (int i = 0; i < sc->nrobots; i++)
            if (strcmp(sc->robots[i].name, sr->name) == 0) {
                snprintf(err, errlen, "%s: the name \"%s\" is also robots[%d]'s", ctx, sr->name, i);
                return -1;
            }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "start");
        if (!st) {
            snprintf(err, errlen, "%s (%s): missing object \"start\"", ctx, sr->name);
            return -1;
        }
        char sctx[700];
        snprintf(sctx, sizeof sctx, "%s (%s): start", ctx, sr->name);
        if (kn_scenario_parse_start(st, sctx, &sr->start, sr->start_flip, err, errlen))
            return -1;
        sc->nrobots++;
    }
    return 0;
}

int kn_scenario_fleet_start(const struct kn_scenario *sc, const char *name, int k,
                            struct kn_pose *pose, double flip[KN_NFLIPPERS])
{
    if (sc->nrobots > 0) {
        for (int i = 0; i < sc->nrobots; i++)
            if (strcmp(sc->robots[i].name, name) == 0) {
                *pose = sc->robots[i].start;
                memcpy(flip, sc->robots[i].start_flip, sizeof sc->robots[i].start_flip);
                return i;
            }
        return -1;
    }
    /* side by side, to the left of the start's heading: the same obstacle
     * ahead of each where the terrain is wide enough */
    *pose = sc->start;
    pose->x -= k * FLEET_SPACING_M * sin(sc->start.yaw);
    pose->y += k * FLEET_SPACING_M * cos(sc->start.yaw);
    memcpy(flip, sc->start_flip, sizeof sc->start_flip);
    return k;
}
