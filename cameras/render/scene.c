/* The scene of the camera renderer (scene.h): reads the world description
 * with cJSON the way kenaf-view's robot_model.js and terrain.js read it,
 * and builds the terrain's triangles once per load. */
#include "scene.h"
#include "mat.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kenaf-view's ground planes are 80 m squares (terrain.js PLANE_SIZE_M) */
#define PLANE_M 80.0

/* terrain.js's textures: the ground grid (1 m cells, line 2 of 64 px),
 * concrete slabs (0.25 m, 1 of 32 px), pallet wood, the heightfield tint
 * on the grid */
static const struct kn_rmesh_mat GROUND = { 0x98a398, 0x6f7a70, 2.0f / 64, 1.0f };
static const struct kn_rmesh_mat CONCRETE = { 0xb4b4ac, 0x8e8e88, 1.0f / 32, 0.25f };
static const struct kn_rmesh_mat WOOD = { 0xc8bca8, 0xc8bca8, 0.0f, 1.0f };
static const struct kn_rmesh_mat HFIELD = { 0x85866d, 0x616450, 2.0f / 64, 1.0f };

/* config/robots/kenaf.json, for a world without a robot file */
static const struct kn_rscene_geom DEFAULT_GEOM = {
    .px = 0.17,
    .r = 0.08,
    .tw = 0.07,
    .ty = 0.115,
    .fr1 = 0.08,
    .fr2 = 0.04,
    .fl = 0.195,
    .fw = 0.05,
    .fy = 0.175,
    .cs = { 0.4, 0.16, 0.12 },
    .clear = 0.03,
};

static double num(const cJSON *o, const char *key, double def, double lo, double hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo &&
                   v->valuedouble <= hi
               ? v->valuedouble
               : def;
}

/* n finite numbers from a JSON array of exactly n */
static int vec(const cJSON *a, double *out, int n)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return 0;
        out[i] = v->valuedouble;
    }
    return 1;
}

static struct kn_rscene_geom geometry(const cJSON *robot)
{
    const struct kn_rscene_geom *d = &DEFAULT_GEOM;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(robot, "main_track");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(robot, "flipper");
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(robot, "chassis");
    struct kn_rscene_geom g = {
        .px = num(mt, "pulley_x_m", d->px, 0.01, 5),
        .r = num(mt, "radius_m", d->r, 0.005, 2),
        .tw = num(mt, "width_m", d->tw, 0.005, 2),
        .ty = num(mt, "y_m", d->ty, 0.01, 5),
        .fr1 = num(fl, "root_radius_m", d->fr1, 0.005, 2),
        .fr2 = num(fl, "tip_radius_m", d->fr2, 0.005, 2),
        .fl = num(fl, "length_m", d->fl, 0.01, 5),
        .fw = num(fl, "width_m", d->fw, 0.005, 2),
        .fy = num(fl, "y_m", d->fy, 0.01, 5),
        .clear = num(ch, "clearance_m", d->clear, 0, 2),
    };
    double cs[3];
    int ok = vec(cJSON_GetObjectItemCaseSensitive(ch, "size_m"), cs, 3);
    for (int i = 0; ok && i < 3; i++)
        ok = cs[i] > 0 && cs[i] < 5;
    memcpy(g.cs, ok ? cs : d->cs, sizeof g.cs);
    /* the engine refuses a file whose cameras are malformed, so these are
     * well formed whenever the world comes from a file it ran */
    char err[256];
    if (kn_robotcams_parse(cJSON_GetObjectItemCaseSensitive(robot, "cameras"), &g.cams, "robot",
                           err, sizeof err))
        kn_robotcams_defaults(&g.cams);
    return g;
}

/* The inlined heightfield samples, or 0 when they do not add up
 * (terrain.js heightsOf). */
static int heights(const cJSON *terrain, int *nx, int *ny, double *dx, double *dy, const cJSON **z)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(terrain, "heights");
    *nx = (int)num(h, "nx", 0, 2, 4096);
    *ny = (int)num(h, "ny", 0, 2, 4096);
    *z = cJSON_GetObjectItemCaseSensitive(h, "z");
    double cell = num(terrain, "cell_m", 0.05, 1e-9, 1e9);
    *dx = num(h, "dx", cell, 1e-9, 1e9);
    *dy = num(h, "dy", cell, 1e-9, 1e9);
    return *nx >= 2 && *ny >= 2 && cJSON_IsArray(*z) && cJSON_GetArraySize(*z) == *nx * *ny;
}

static void add_hfield(struct kn_rmesh *m, const float at[16], const cJSON *terrain)
{
    int nx, ny;
    double dx, dy;
    const cJSON *zs;
    if (!heights(terrain, &nx, &ny, &dx, &dy, &zs))
        return;
    double *z = malloc((size_t)nx * (size_t)ny * sizeof *z);
    if (!z) {
        m->failed = 1;
        return;
    }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, zs)
    {
        z[i++] = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0.0;
    }
    kn_rmesh_grid(m, at, nx, ny, dx, dy, z, num(terrain, "scale", 1.0, -1e9, 1e9), &HFIELD);
    free(z);
}

/* One part of "parts": 1 drawn, 0 not well formed (terrain.js givenParts) */
static int add_part(struct kn_rmesh *m, const float at[16], const cJSON *p, const cJSON *terrain,
                    const struct kn_rmesh_mat *box_mat)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(p, "kind");
    double c[3], v[3];
    float t[16];
    memcpy(t, at, sizeof t);
    if (!cJSON_IsString(kind))
        return 0;
    if (!strcmp(kind->valuestring, "plane") &&
        vec(cJSON_GetObjectItemCaseSensitive(p, "c"), c, 3) &&
        vec(cJSON_GetObjectItemCaseSensitive(p, "n"), v, 3)) {
        double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (!(len > 0))
            return 0;
        /* turn +z onto n: about the axis z x n by the angle between them */
        kn_rmat_translate(t, c[0], c[1], c[2]);
        double tilt = acos(fmax(-1.0, fmin(1.0, v[2] / len))), az = atan2(v[1], v[0]);
        kn_rmat_rotate(t, 2, az);
        kn_rmat_rotate(t, 1, tilt);
        kn_rmat_rotate(t, 2, -az);
        kn_rmesh_square(m, t, PLANE_M, &GROUND);
        return 1;
    }
    if (!strcmp(kind->valuestring, "box") && vec(cJSON_GetObjectItemCaseSensitive(p, "c"), c, 3) &&
        vec(cJSON_GetObjectItemCaseSensitive(p, "half"), v, 3)) {
        /* the engine's box rotation: Rz(yaw) Ry(pitch) */
        kn_rmat_translate(t, c[0], c[1], c[2]);
        kn_rmat_rotate(t, 2, num(p, "yaw", 0, -1e9, 1e9));
        kn_rmat_rotate(t, 1, num(p, "pitch", 0, -1e9, 1e9));
        const float h[3] = { (float)v[0], (float)v[1], (float)v[2] };
        kn_rmesh_box(m, t, h, box_mat);
        return 1;
    }
    if (!strcmp(kind->valuestring, "heightfield")) {
        add_hfield(m, t, terrain);
        return 1;
    }
    return 0;
}

/* The terrain: the file's pose inside the world's "terrain_pose", then its
 * parts; a ground grid at z = 0 when it has none that are well formed. */
static void build_terrain(struct kn_rmesh *m, const cJSON *terrain, const cJSON *world_pose)
{
    float at[16];
    double fp[3] = { 0, 0, 0 };
    kn_rmat_identity(at);
    kn_rmesh_clear(m);
    /* terrain_pose is in rad (docs/protocol.md); the file's yaw in degrees */
    kn_rmat_translate(at, num(world_pose, "x", 0, -1e9, 1e9), num(world_pose, "y", 0, -1e9, 1e9),
                      0);
    kn_rmat_rotate(at, 2, num(world_pose, "yaw", 0, -1e9, 1e9));
    if (!vec(cJSON_GetObjectItemCaseSensitive(terrain, "pose"), fp, 3))
        memset(fp, 0, sizeof fp);
    kn_rmat_translate(at, fp[0], fp[1], 0);
    kn_rmat_rotate(at, 2, fp[2] * M_PI / 180.0);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(terrain, "type");
    const struct kn_rmesh_mat *box_mat =
        cJSON_IsString(type) && !strcmp(type->valuestring, "pallet") ? &WOOD : &CONCRETE;
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(terrain, "parts");
    const cJSON *p;
    int ok = cJSON_IsArray(parts) && cJSON_GetArraySize(parts) > 0;
    for (p = ok ? parts->child : NULL; p && ok; p = p->next)
        ok = add_part(m, at, p, terrain, box_mat);
    if (!ok) {
        kn_rmesh_clear(m);
        kn_rmat_identity(at);
        kn_rmesh_square(m, at, PLANE_M, &GROUND);
    }
}

int kn_rscene_init(struct kn_rscene *s)
{
    memset(s, 0, sizeof *s);
    s->geom = DEFAULT_GEOM;
    kn_robotcams_defaults(&s->geom.cams);
    build_terrain(&s->terrain, NULL, NULL);
    return s->terrain.failed ? -1 : 0;
}

void kn_rscene_free(struct kn_rscene *s)
{
    kn_rmesh_free(&s->terrain);
}

int kn_rscene_load(struct kn_rscene *s, const char *json, size_t len, char *err, size_t errlen)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "world description: not a JSON object");
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *robot = cJSON_GetObjectItemCaseSensitive(root, "robot");
    const cJSON *terrain = cJSON_GetObjectItemCaseSensitive(root, "terrain");
    s->geom = geometry(cJSON_IsObject(robot) ? robot : NULL);
    build_terrain(&s->terrain, cJSON_IsObject(terrain) ? terrain : NULL,
                  cJSON_GetObjectItemCaseSensitive(root, "terrain_pose"));
    cJSON_Delete(root);
    s->generation++;
    if (s->terrain.failed) {
        snprintf(err, errlen, "world description: out of memory for the terrain");
        return -1;
    }
    return 0;
}

int kn_rscene_robot_set(struct kn_rscene *s, int i, const struct kn_rscene_robot *r)
{
    if (i < 0 || i >= KN_RSCENE_ROBOTS)
        return -1;
    double all[14];
    memcpy(all, r->pos, sizeof r->pos);
    memcpy(all + 3, r->rpy, sizeof r->rpy);
    memcpy(all + 6, r->flippers, sizeof r->flippers);
    all[10] = r->pan;
    all[11] = r->tilt;
    all[12] = all[13] = 0;
    for (int k = 0; k < 14; k++)
        if (!isfinite(all[k]))
            return -1;
    s->robots[i] = *r;
    return 0;
}
