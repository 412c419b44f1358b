/* The world description document: see world_doc.h. */
#include "world_doc.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine_files.h"
#include "jsonutil.h" /* engine/: kn_json_load */
#include "params.h"   /* engine/: kn_robotfile_parse */
#include "terrain.h"  /* engine/: kn_terrain_from_json */

uint32_t kn_worlddoc_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* Micrometre resolution is plenty for drawing and keeps the text short
 * (cJSON prints the shortest form that reads back the same). */
static double tidy(double v)
{
    double r = isfinite(v) ? round(v * 1e6) / 1e6 : 0.0;
    return r == 0 ? 0.0 : r; /* no "-0" */
}

static void add_vec(cJSON *o, const char *key, const double *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(tidy(v[i])));
}

static const char *tag_name(int tag)
{
    switch (tag) {
    case KN_TAG_OBSTACLE: return "obstacle";
    case KN_TAG_PIT: return "pit";
    case KN_TAG_WALL: return "wall";
    default: return "ground";
    }
}

/* The primitives the engine collides with, in terrain coordinates (before
 * terrain_pose): planes (a point and the up normal), boxes (centre, half
 * extents, then pitch about y and yaw about z) and the heightfield's
 * half extents. */
static void add_parts(cJSON *terrain, const struct kn_terrain *t)
{
    cJSON *arr = cJSON_AddArrayToObject(terrain, "parts");
    for (int i = 0; arr && i < t->nparts; i++) {
        const struct kn_part *p = &t->parts[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "kind",
                                p->kind == KN_PART_PLANE ? "plane"
                                : p->kind == KN_PART_BOX ? "box"
                                                         : "heightfield");
        cJSON_AddStringToObject(o, "tag", tag_name(p->tag));
        switch (p->kind) {
        case KN_PART_PLANE:
            add_vec(o, "c", p->c, 3);
            add_vec(o, "n", p->n, 3);
            break;
        case KN_PART_BOX:
            add_vec(o, "c", p->c, 3);
            add_vec(o, "half", p->half, 3);
            cJSON_AddNumberToObject(o, "pitch", tidy(p->pitch));
            cJSON_AddNumberToObject(o, "yaw", tidy(p->yaw));
            break;
        case KN_PART_HFIELD: add_vec(o, "half", p->half, 2); break;
        }
    }
}

/* The samples as the heightfield file has them (before the terrain's
 * "scale"): row j along +y from -half_y, column i along +x from -half_x,
 * z[j * nx + i], centred on the terrain origin; dx = dy = "cell_m". */
static void add_heights(cJSON *terrain, const struct kn_terrain *t)
{
    cJSON *h = cJSON_AddObjectToObject(terrain, "heights");
    if (!h)
        return;
    cJSON_AddNumberToObject(h, "nx", t->hf_nx);
    cJSON_AddNumberToObject(h, "ny", t->hf_ny);
    cJSON_AddNumberToObject(h, "dx", tidy(t->hf_cell));
    cJSON_AddNumberToObject(h, "dy", tidy(t->hf_cell));
    cJSON *z = cJSON_AddArrayToObject(h, "z");
    size_t n = (size_t)t->hf_nx * (size_t)t->hf_ny;
    for (size_t k = 0; z && k < n; k++)
        cJSON_AddItemToArray(z, cJSON_CreateNumber(tidy(t->hf[k])));
}

static void note_add(char *note, size_t notelen, const char *what, const char *why)
{
    size_t used = strlen(note);
    if (used < notelen)
        snprintf(note + used, notelen - used, "%s%s: %s", used ? "; " : "", what, why);
}

/* Where the document's robot and terrain come from: files (a spawned
 * engine's), or the objects an engine at an address sent (its World
 * answer); an object wins over a file. */
struct source {
    const char *robot_file, *terrain_file;
    const cJSON *robot, *terrain;
};

/* The terrain object as written (the file's, or the engine's), plus what
 * the engine's loader built from it; NULL (with the reason in note) when
 * that loader refuses it. */
static cJSON *terrain_json(const struct source *src, bool with_heights, char *note, size_t notelen)
{
    char why[768] = "";
    /* the engine's own text names itself in messages; a heightfield's
     * "file" in it is absolute (kn_terrain_spec_text) */
    const char *ctx = src->terrain ? "the engine's terrain" : src->terrain_file;
    cJSON *o = src->terrain ? cJSON_Duplicate(src->terrain, 1)
                            : kn_json_load(src->terrain_file, why, sizeof why);
    struct kn_terrain *t = o ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        note_add(note, notelen, "terrain", o ? "out of memory" : why);
        cJSON_Delete(o);
        return NULL;
    }
    if (kn_terrain_from_json(o, ctx, t, why, sizeof why) < 0) {
        note_add(note, notelen, "terrain", why);
        cJSON_Delete(o);
        free(t);
        return NULL;
    }
    if (t->type == KN_TERRAIN_HEIGHTFIELD && t->hf) {
        if (with_heights)
            add_heights(o, t);
        else
            cJSON_AddNullToObject(o, "heights");
    }
    add_parts(o, t);
    kn_terrain_free(t);
    free(t);
    return o;
}

static cJSON *robot_json(const struct source *src, char *note, size_t notelen)
{
    char path[PATH_MAX], why[768] = "";
    if (src->robot) {
        /* checked as the engine reads a robot file */
        struct kn_robot_params rp;
        char *text = cJSON_PrintUnformatted(src->robot);
        int rc = text ? kn_robotfile_parse(text, "the engine's robot", &rp, why, sizeof why) : -1;
        free(text);
        if (rc < 0) {
            note_add(note, notelen, "robot", text ? why : "out of memory");
            return NULL;
        }
        return cJSON_Duplicate(src->robot, 1);
    }
    const char *robot_file = src->robot_file;
    if (!robot_file) {
        char dir[PATH_MAX];
        kn_engfiles_dir("", dir, sizeof dir);
        if (kn_engfiles_path(KN_ENGFILES_ROBOT, dir, "kenaf", path, sizeof path, why, sizeof why) <
            0) {
            note_add(note, notelen, "robot", why);
            return NULL;
        }
        robot_file = path;
    }
    cJSON *o = kn_json_load(robot_file, why, sizeof why);
    if (!o)
        note_add(note, notelen, "robot", why);
    return o;
}

/* {"backend", "robot", "terrain"} printed compactly. The file's own
 * "pose" places the terrain; the config cannot move it, so there is no
 * "terrain_pose". */
static char *body_text(const char *backend, const struct source *src, bool with_heights, char *note,
                       size_t notelen)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "backend", backend);
    cJSON *robot = robot_json(src, note, notelen);
    cJSON_AddItemToObject(root, "robot", robot ? robot : cJSON_CreateNull());
    cJSON *terrain =
        src->terrain || src->terrain_file ? terrain_json(src, with_heights, note, notelen) : NULL;
    cJSON_AddItemToObject(root, "terrain", terrain ? terrain : cJSON_CreateNull());
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static char *build(const char *backend, const struct source *src, size_t *len, char *note,
                   size_t notelen)
{
    size_t keep = notelen ? strlen(note) : 0; /* what was said before the first try */
    char *body = body_text(backend, src, true, note, notelen);
    if (body && strlen(body) > KN_WORLDDOC_MAX - 32) {
        free(body);
        if (notelen)
            note[keep] = '\0';
        body = body_text(backend, src, false, note, notelen);
        note_add(note, notelen, "terrain",
                 "heightfield too large to describe, sent without "
                 "its samples");
    }
    if (!body)
        return NULL;
    /* generation first, so the first WORLD chunk tells a client whether
     * the world it has is still the one */
    size_t blen = strlen(body);
    uint32_t gen = kn_worlddoc_hash(body, blen);
    size_t cap = blen + 32;
    char *doc = malloc(cap);
    if (doc) {
        int w = snprintf(doc, cap, "{\"generation\":%u,%s", gen, body + 1);
        *len = w > 0 ? (size_t)w : 0;
    }
    free(body);
    return doc;
}

char *kn_worlddoc_build(const char *backend, const char *robot_file, const char *terrain_file,
                        size_t *len, char *note, size_t notelen)
{
    if (notelen)
        note[0] = '\0';
    struct source src = { .robot_file = robot_file, .terrain_file = terrain_file };
    return build(backend, &src, len, note, notelen);
}

char *kn_worlddoc_from_engine(const char *backend, const char *answer, size_t *len, char *note,
                              size_t notelen)
{
    if (notelen)
        note[0] = '\0';
    struct source src = { 0 };
    cJSON *root = cJSON_Parse(answer);
    src.terrain = cJSON_GetObjectItemCaseSensitive(root, "terrain");
    src.robot = cJSON_GetObjectItemCaseSensitive(root, "robot");
    if (!cJSON_IsObject(src.terrain) || !cJSON_IsObject(src.robot)) {
        note_add(note, notelen, "world answer",
                 root ? "not an object with objects \"terrain\" and \"robot\"" : "not JSON");
        src.terrain = src.robot = NULL; /* the default robot, no terrain */
    }
    char *doc = build(backend, &src, len, note, notelen);
    cJSON_Delete(root);
    return doc;
}
