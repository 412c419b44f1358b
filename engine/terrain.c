/* Terrain files and their primitives: flat (optionally tilted), step,
 * trench, stairs, ramp, pallet and heightfield, each built from planes and
 * oriented boxes so ODE's cheap box and plane colliders do the work (the
 * families drawn from a seed, rough, stepfield and rubble, are in
 * terrain_families.c, the test apparatus in terrain_apparatus.c). */
#include "terrain.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "terrain_apparatus.h"

#define DEG (M_PI / 180.0)

static const char *const type_names[] = { "flat",      "step",   "trench",      "stairs",
                                          "ramp",      "pallet", "heightfield", "rough",
                                          "stepfield", "rubble", "apparatus" };

const char *kn_terrain_type_name(enum kn_terrain_type t)
{
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "?";
}

void kn_terrain_free(struct kn_terrain *t)
{
    free(t->hf);
    t->hf = NULL;
}

int kn_terrain_copy(struct kn_terrain *dst, const struct kn_terrain *src)
{
    *dst = *src;
    dst->hf = NULL;
    if (src->hf) {
        size_t n = (size_t)src->hf_nx * (size_t)src->hf_ny;
        dst->hf = malloc(n * sizeof *dst->hf);
        if (!dst->hf)
            return -1;
        memcpy(dst->hf, src->hf, n * sizeof *dst->hf);
    }
    return 0;
}

/* A heightfield's samples, from its file or inline: the same rules. */
#define HF_SIDE_MAX 4096 /* rows and columns, each at least 2 */
#define HF_ABS_MAX_M 100 /* |height| */

static bool hf_height_ok(double h)
{
    return isfinite(h) && fabs(h) <= HF_ABS_MAX_M;
}

static bool hf_sides_ok(int rows, int cols)
{
    return rows >= 2 && cols >= 2 && rows <= HF_SIDE_MAX && cols <= HF_SIDE_MAX;
}

int kn_heightfield_read(const char *path, double **h, int *nx, int *ny, char *err, size_t errlen)
{
    size_t len;
    char *text = kn_json_slurp(path, &len, err, errlen);
    if (!text)
        return -1;
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof *v);
    int cols = -1, rows = 0, line = 0, rc = -1;
    char *save = NULL;
    for (char *ln = strtok_r(text, "\n", &save); ln && v; ln = strtok_r(NULL, "\n", &save)) {
        line++;
        char *hash = strchr(ln, '#');
        if (hash)
            *hash = 0;
        int c = 0;
        char *p = ln;
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r')
                p++;
            if (!*p)
                break;
            char *end;
            double d = strtod(p, &end);
            if (end == p || !hf_height_ok(d)) {
                snprintf(err, errlen, "%s:%d: expected a height in metres", path, line);
                goto out;
            }
            if (n == cap) {
                double *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv)
                    goto oom;
                v = nv;
                cap *= 2;
            }
            v[n++] = d;
            c++;
            p = end;
        }
        if (c == 0)
            continue;
        if (cols >= 0 && c != cols) {
            snprintf(err, errlen, "%s:%d: row has %d samples, earlier rows %d", path, line, c,
                     cols);
            goto out;
        }
        cols = c;
        rows++;
    }
    if (!v)
        goto oom;
    if (!hf_sides_ok(rows, cols)) {
        snprintf(err, errlen, "%s: need 2..4096 rows and columns, got %d x %d", path, rows,
                 cols < 0 ? 0 : cols);
        goto out;
    }
    *h = v;
    v = NULL;
    *nx = cols;
    *ny = rows;
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
out:
    free(v);
    free(text);
    return rc;
}

/* A heightfield's samples in the terrain object itself ("samples": rows
 * of heights, row j along +y), under the rules of the samples file. */
static int heightfield_inline(const cJSON *a, struct kn_terrain *t, const char *ctx, char *err,
                              size_t errlen)
{
    int rows = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    const cJSON *first = rows > 0 ? cJSON_GetArrayItem(a, 0) : NULL;
    int cols = cJSON_IsArray(first) ? cJSON_GetArraySize(first) : -1;
    if (!hf_sides_ok(rows, cols)) {
        snprintf(err, errlen, "%s: \"samples\" must be 2..4096 rows of 2..4096 heights", ctx);
        return -1;
    }
    double *v = malloc((size_t)rows * (size_t)cols * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "%s: out of memory", ctx);
        return -1;
    }
    size_t n = 0;
    int j = 0;
    const cJSON *row, *h;
    cJSON_ArrayForEach(row, a)
    {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != cols) {
            snprintf(err, errlen, "%s: \"samples\" row %d has not %d heights like the first", ctx,
                     j + 1, cols);
            free(v);
            return -1;
        }
        cJSON_ArrayForEach(h, row)
        {
            if (!cJSON_IsNumber(h) || !hf_height_ok(h->valuedouble)) {
                snprintf(err, errlen, "%s: \"samples\" row %d: expected heights in metres", ctx,
                         j + 1);
                free(v);
                return -1;
            }
            v[n++] = h->valuedouble;
        }
        j++;
    }
    t->hf = v;
    t->hf_nx = cols;
    t->hf_ny = rows;
    return 0;
}

int kn_terrain_from_json(const cJSON *o, const char *base_path, struct kn_terrain *t, char *err,
                         size_t errlen)
{
    static const char *const keys[] = {
        "type",  "name",      "comment", "height",       "width",          "rise",        "run",
        "count", "angle_deg", "edge_x",  "length",       "span_y",         "depth",       "landing",
        "pose",  "file",      "cell_m",  "scale",        "seed",           "amplitude_m", "post_m",
        "grid",  "heights_m", "pieces",  "piece_size_m", "piece_height_m", "samples",     NULL
    };
    memset(t, 0, sizeof *t);
    const char *ctx = base_path;
    char type[32] = "";
    if (kn_json_str_opt(o, "type", type, sizeof type, ctx, err, errlen))
        return -1;
    if (kn_apparatus_lookup(type) >= 0)
        return kn_apparatus_from_json(o, base_path, t, err, errlen);
    if (kn_json_only_keys(o, keys, ctx, err, errlen))
        return -1;
    int found = 0;
    for (unsigned i = 0; i < KN_TERRAIN_APPARATUS; i++)
        if (strcmp(type, type_names[i]) == 0) {
            t->type = (enum kn_terrain_type)i;
            found = 1;
        }
    if (!found) {
        snprintf(err, errlen,
                 "%s: \"type\" must be one of flat, step, trench, stairs, ramp, pallet, "
                 "heightfield, rough, stepfield, rubble, or an apparatus (docs/apparatus.md)",
                 ctx);
        return -1;
    }
    snprintf(t->name, sizeof t->name, "%s", type);
    /* defaults: an obstacle 1 m ahead of the origin is not assumed; it starts at x = 0 */
    t->height = 0.1;
    t->width = 0.3;
    t->rise = 0.17;
    t->run = 0.29;
    t->count = 5;
    t->angle = 0;
    t->edge_x = 0;
    t->length = 3.0;
    t->span_y = 3.0;
    t->depth = 0.5;
    t->landing = 2.0;
    t->hf_cell = 0.05;
    t->hf_scale = 1.0;
    double angle_deg = 0, pose[3] = { 0, 0, 0 };
    if (kn_json_str_opt(o, "name", t->name, sizeof t->name, ctx, err, errlen) ||
        kn_json_num_opt(o, "height", 0, 5, &t->height, ctx, err, errlen) ||
        kn_json_num_opt(o, "width", 0, 10, &t->width, ctx, err, errlen) ||
        kn_json_num_opt(o, "rise", 0.01, 1, &t->rise, ctx, err, errlen) ||
        kn_json_num_opt(o, "run", 0.05, 2, &t->run, ctx, err, errlen) ||
        kn_json_int_opt(o, "count", 1, 20, &t->count, ctx, err, errlen) ||
        kn_json_num_opt(o, "angle_deg", -60, 60, &angle_deg, ctx, err, errlen) ||
        kn_json_num_opt(o, "edge_x", -100, 100, &t->edge_x, ctx, err, errlen) ||
        kn_json_num_opt(o, "length", 0.1, 100, &t->length, ctx, err, errlen) ||
        kn_json_num_opt(o, "span_y", 0.1, 100, &t->span_y, ctx, err, errlen) ||
        kn_json_num_opt(o, "depth", 0.05, 10, &t->depth, ctx, err, errlen) ||
        kn_json_num_opt(o, "landing", 0.1, 100, &t->landing, ctx, err, errlen) ||
        kn_json_vec(o, "pose", 3, -1e4, 1e4, pose, 1, ctx, err, errlen) ||
        kn_json_num_opt(o, "cell_m", 0.005, 10, &t->hf_cell, ctx, err, errlen) ||
        kn_json_num_opt(o, "scale", 0, 100, &t->hf_scale, ctx, err, errlen) ||
        kn_terrain_family_keys(o, t, ctx, err, errlen))
        return -1;
    t->angle = angle_deg * DEG;
    t->pose[0] = pose[0];
    t->pose[1] = pose[1];
    t->pose[2] = pose[2] * DEG;
    if (t->type == KN_TERRAIN_HEIGHTFIELD) {
        char rel[256] = "";
        if (kn_json_str_opt(o, "file", rel, sizeof rel, ctx, err, errlen))
            return -1;
        const cJSON *samples = cJSON_GetObjectItemCaseSensitive(o, "samples");
        if (!rel[0] == !samples) {
            snprintf(err, errlen, "%s: a heightfield needs \"file\" or \"samples\", one of them",
                     ctx);
            return -1;
        }
        if (samples) {
            if (heightfield_inline(samples, t, ctx, err, errlen))
                return -1;
        } else {
            kn_path_join(base_path, rel, t->hf_file, sizeof t->hf_file);
            if (kn_heightfield_read(t->hf_file, &t->hf, &t->hf_nx, &t->hf_ny, err, errlen))
                return -1;
        }
    }
    if (kn_terrain_build(t, err, errlen)) {
        kn_terrain_free(t);
        return -1;
    }
    return 0;
}

cJSON *kn_terrain_spec(const char *path, const cJSON *override, char *err, size_t errlen)
{
    cJSON *root = kn_json_load(path, err, errlen);
    if (!root || !override)
        return root;
    const cJSON *e;
    cJSON_ArrayForEach(e, override)
    {
        if (!e->string || strcmp(e->string, "file") == 0)
            continue;
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup || !cJSON_ReplaceItemInObjectCaseSensitive(root, e->string, dup)) {
            if (dup && !cJSON_AddItemToObject(root, e->string, dup))
                cJSON_Delete(dup);
        }
    }
    return root;
}

int kn_terrain_load(const char *path, const cJSON *override, struct kn_terrain *t, char *err,
                    size_t errlen)
{
    cJSON *root = kn_terrain_spec(path, override, err, errlen);
    if (!root)
        return -1;
    int rc = kn_terrain_from_json(root, path, t, err, errlen);
    cJSON_Delete(root);
    return rc;
}

char *kn_terrain_spec_text(const cJSON *spec, const struct kn_terrain *t)
{
    cJSON *o = cJSON_Duplicate(spec, 1);
    if (!o)
        return NULL;
    /* A heightfield small enough goes with its samples, so the text reads
     * back on any machine (a daemon on another host than its engine);
     * a bigger one names its samples' file by an absolute path, which
     * reads back wherever the text goes on this machine. */
    if (t->type == KN_TERRAIN_HEIGHTFIELD && t->hf &&
        t->hf_nx * t->hf_ny <= KN_TERRAIN_INLINE_MAX) {
        cJSON *rows = cJSON_CreateArray();
        for (int j = 0; rows && j < t->hf_ny; j++) {
            cJSON *row = cJSON_CreateDoubleArray(t->hf + (size_t)j * (size_t)t->hf_nx, t->hf_nx);
            if (!row || !cJSON_AddItemToArray(rows, row)) {
                cJSON_Delete(row);
                cJSON_Delete(rows);
                rows = NULL;
            }
        }
        cJSON_DeleteItemFromObjectCaseSensitive(o, "file");
        cJSON_DeleteItemFromObjectCaseSensitive(o, "samples");
        if (!rows || !cJSON_AddItemToObject(o, "samples", rows)) {
            cJSON_Delete(rows);
            cJSON_Delete(o);
            return NULL;
        }
    } else if (t->type == KN_TERRAIN_HEIGHTFIELD && t->hf_file[0]) {
        char abs[PATH_MAX];
        const char *file = realpath(t->hf_file, abs) ? abs : t->hf_file;
        cJSON *f = cJSON_CreateString(file);
        if (!f || !cJSON_ReplaceItemInObjectCaseSensitive(o, "file", f)) {
            cJSON_Delete(f);
            cJSON_Delete(o);
            return NULL;
        }
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* ---- builders ---- */

struct kn_part *kn_terrain_part_add(struct kn_terrain *t)
{
    if (t->nparts >= KN_TERRAIN_MAX_PARTS)
        return NULL;
    struct kn_part *p = &t->parts[t->nparts++];
    memset(p, 0, sizeof *p);
    return p;
}

static int plane(struct kn_terrain *t, double z, double tilt, int tag)
{
    struct kn_part *p = kn_terrain_part_add(t);
    if (!p)
        return -1;
    p->kind = KN_PART_PLANE;
    p->tag = tag;
    p->c[2] = z;
    /* tilt raises +x: normal leans back */
    p->n[0] = -sin(tilt);
    p->n[2] = cos(tilt);
    return 0;
}

/* Axis-aligned box from its x, y, z ranges. */
int kn_terrain_box_add(struct kn_terrain *t, double x0, double x1, double y0, double y1, double z0,
                       double z1, int tag)
{
    struct kn_part *p = kn_terrain_part_add(t);
    if (!p)
        return -1;
    p->kind = KN_PART_BOX;
    p->tag = tag;
    p->c[0] = 0.5 * (x0 + x1);
    p->c[1] = 0.5 * (y0 + y1);
    p->c[2] = 0.5 * (z0 + z1);
    p->half[0] = 0.5 * (x1 - x0);
    p->half[1] = 0.5 * (y1 - y0);
    p->half[2] = 0.5 * (z1 - z0);
    return 0;
}

static int build_pallet(struct kn_terrain *t)
{
    /* EUR pallet 1200 x 800 x 144 mm, crossed along its 800 mm side so the
     * robot meets the five top-deck boards and their gaps across its path.
     * Layers: bottom boards 22, blocks 78, stringer boards 22, top deck 22. */
    const double L = 0.8, W = 1.2, x0 = t->edge_x;
    const double tb[5] = { 0.145, 0.100, 0.145, 0.100, 0.145 };
    const double gap = (L - 0.635) / 4.0;
    const double hy = 0.5 * W;
    int rc = 0;
    double z_top0 = 0.122, z_top1 = 0.144;
    /* top deck boards run across the path (along y) */
    double x = x0;
    for (int i = 0; i < 5; i++) {
        rc |= kn_terrain_box_add(t, x, x + tb[i], -hy, hy, z_top0, z_top1, KN_TAG_OBSTACLE);
        x += tb[i] + gap;
    }
    /* three stringer boards along the path, under the deck */
    const double sy[3] = { -hy + 0.0725, 0, hy - 0.0725 };
    for (int i = 0; i < 3; i++)
        rc |= kn_terrain_box_add(t, x0, x0 + L, sy[i] - 0.0725, sy[i] + 0.0725, 0.100, 0.122,
                                 KN_TAG_OBSTACLE);
    /* nine blocks at the corners, middles and centre */
    const double bx[3] = { x0 + 0.0725, x0 + 0.5 * L, x0 + L - 0.0725 };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            rc |= kn_terrain_box_add(t, bx[i] - 0.0725, bx[i] + 0.0725, sy[j] - 0.0725,
                                     sy[j] + 0.0725, 0.022, 0.100, KN_TAG_OBSTACLE);
    /* three bottom boards across the path */
    for (int i = 0; i < 3; i++)
        rc |= kn_terrain_box_add(t, bx[i] - 0.0725, bx[i] + 0.0725, -hy, hy, 0, 0.022,
                                 KN_TAG_OBSTACLE);
    t->far_x = x0 + L;
    t->top_z = 0.144;
    return rc;
}

int kn_terrain_build(struct kn_terrain *t, char *err, size_t errlen)
{
    t->nparts = 0;
    int rc = 0;
    double hy = 0.5 * t->span_y, e = t->edge_x;
    t->far_x = e;
    t->top_z = 0;
    switch (t->type) {
    case KN_TERRAIN_FLAT: rc = plane(t, 0, t->angle, KN_TAG_GROUND); break;
    case KN_TERRAIN_STEP:
        rc = plane(t, 0, 0, KN_TAG_GROUND) ||
             kn_terrain_box_add(t, e, e + t->length, -hy, hy, -0.1, t->height, KN_TAG_OBSTACLE);
        t->top_z = t->height;
        break;
    case KN_TERRAIN_TRENCH:
        /* near and far ground are boxes with their tops at z = 0; the pit floor
         * is a plane depth below */
        rc = plane(t, -t->depth, 0, KN_TAG_PIT) ||
             kn_terrain_box_add(t, e - t->length, e, -hy, hy, -t->depth - 0.1, 0, KN_TAG_GROUND) ||
             kn_terrain_box_add(t, e + t->width, e + t->width + t->length, -hy, hy, -t->depth - 0.1,
                                0, KN_TAG_OBSTACLE);
        t->far_x = e + t->width;
        break;
    case KN_TERRAIN_STAIRS: {
        /* stacked slabs: slab i spans from its nosing to the end of the landing */
        double end = e + (t->count - 1) * t->run + t->landing;
        rc = plane(t, 0, 0, KN_TAG_GROUND);
        for (int i = 0; i < t->count && !rc; i++)
            rc = kn_terrain_box_add(t, e + i * t->run, end, -hy, hy, i * t->rise, (i + 1) * t->rise,
                                    KN_TAG_OBSTACLE);
        t->far_x = e + (t->count - 1) * t->run;
        t->top_z = t->count * t->rise;
        break;
    }
    case KN_TERRAIN_RAMP: {
        /* a slab tilted about y whose top face starts at (edge_x, 0) */
        const double th = 0.2, a = t->angle;
        double ca = cos(a), sa = sin(a);
        double top = t->length * sa, xe = e + t->length * ca;
        rc = plane(t, 0, 0, KN_TAG_GROUND);
        struct kn_part *p = rc ? NULL : kn_terrain_part_add(t);
        if (!p) {
            rc = -1;
            break;
        }
        p->kind = KN_PART_BOX;
        p->tag = KN_TAG_OBSTACLE;
        p->half[0] = 0.5 * t->length;
        p->half[1] = hy;
        p->half[2] = 0.5 * th;
        /* middle of the top face, moved half a thickness along -normal */
        p->c[0] = e + 0.5 * t->length * ca + 0.5 * th * sa;
        p->c[1] = 0;
        p->c[2] = 0.5 * top - 0.5 * th * ca;
        p->pitch = -a; /* right-handed about y: negative raises the +x end */
        rc = kn_terrain_box_add(t, xe, xe + t->landing, -hy, hy, top - th, top, KN_TAG_OBSTACLE);
        t->far_x = xe;
        t->top_z = top;
        break;
    }
    case KN_TERRAIN_PALLET: rc = plane(t, 0, 0, KN_TAG_GROUND) || build_pallet(t); break;
    case KN_TERRAIN_ROUGH:
    case KN_TERRAIN_STEPFIELD:
    case KN_TERRAIN_RUBBLE: rc = plane(t, 0, 0, KN_TAG_GROUND) || kn_terrain_family_build(t); break;
    case KN_TERRAIN_APPARATUS: return kn_apparatus_build(t, err, errlen);
    case KN_TERRAIN_HEIGHTFIELD: {
        /* heightfield centred at the origin; the plane beneath catches the
         * robot outside it (border samples are expected near 0) */
        rc = plane(t, 0, 0, KN_TAG_GROUND);
        struct kn_part *p = rc ? NULL : kn_terrain_part_add(t);
        if (!p) {
            rc = -1;
            break;
        }
        p->kind = KN_PART_HFIELD;
        p->tag = KN_TAG_GROUND;
        p->half[0] = 0.5 * (t->hf_nx - 1) * t->hf_cell;
        p->half[1] = 0.5 * (t->hf_ny - 1) * t->hf_cell;
        t->far_x = p->half[0];
        break;
    }
    }
    if (rc) {
        snprintf(err, errlen, "%s terrain: more than %d parts", kn_terrain_type_name(t->type),
                 KN_TERRAIN_MAX_PARTS);
        return -1;
    }
    return 0;
}

void kn_terrain_to_local(const struct kn_terrain *t, const double w[2], double l[2])
{
    double c = cos(t->pose[2]), sn = sin(t->pose[2]);
    double dx = w[0] - t->pose[0], dy = w[1] - t->pose[1];
    l[0] = c * dx + sn * dy;
    l[1] = -sn * dx + c * dy;
}

double kn_terrain_yaw_local(const struct kn_terrain *t, double yaw)
{
    return yaw - t->pose[2];
}

void kn_terrain_mirror_y(struct kn_terrain *t)
{
    /* a box is symmetric in its own axes, so mirroring one only mirrors its
     * centre and its yaw (its pitch is about y and stays) */
    for (int i = 0; i < t->nparts; i++) {
        struct kn_part *p = &t->parts[i];
        p->c[1] = -p->c[1];
        p->yaw = -p->yaw;
        p->n[1] = -p->n[1];
    }
    /* an apparatus's gates with it */
    t->gate_start[1] = -t->gate_start[1];
    t->gate_start[2] = -t->gate_start[2];
    t->gate_finish[1] = -t->gate_finish[1];
    t->gate_finish[2] = -t->gate_finish[2];
    /* the heightfield is centred on y = 0: mirroring reverses its rows */
    for (int j = 0; t->hf && j < t->hf_ny / 2; j++) {
        double *a = t->hf + (size_t)j * t->hf_nx,
               *b = t->hf + (size_t)(t->hf_ny - 1 - j) * t->hf_nx;
        for (int i = 0; i < t->hf_nx; i++) {
            double x = a[i];
            a[i] = b[i];
            b[i] = x;
        }
    }
}

/* The plane of the builders here, for terrain_apparatus.c. */
int kn_terrain_plane_add(struct kn_terrain *t, double z, int tag)
{
    return plane(t, z, 0, tag);
}
