/* The ASTM E54 test apparatus as terrains (terrain_apparatus.h): each
 * builder lays its obstacle from edge_x along +x in a lane span_y wide,
 * walls along both sides from edge_x - approach to the obstacle's end plus
 * exit, so the robot at the terrain origin stands on the floor in front
 * of the obstacle, between the walls. Sizes, their sources and what is
 * simplified: docs/apparatus.md. */
#include "terrain_apparatus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"

#define DEG (M_PI / 180.0)
/* wall thickness: a 2x4 stud wall with its panel, near enough */
#define WALL_T 0.1
/* stepfield grid bounds (posts along and across the lane) */
#define SF_NX 120
#define SF_NY 60

/* Keys each apparatus reads beyond the ones all share. */
enum {
    K_HEIGHT = 1 << 0,
    K_WIDTH = 1 << 1,
    K_RISE = 1 << 2,
    K_RUN = 1 << 3,
    K_COUNT = 1 << 4,
    K_ANGLE = 1 << 5,
    K_LENGTH = 1 << 6,
    K_DEPTH = 1 << 7,
    K_LANDING = 1 << 8,
    K_CELL = 1 << 9,
};

struct kind {
    const char *name, *standard;
    unsigned keys;
    /* defaults: edge_x, height, width, rise, run, count, angle_deg, length,
     * depth, landing, cell */
    double edge_x, height, width, rise, run;
    int count;
    double angle_deg, length, depth, landing, cell;
};

/* The defaults are the 1.2 m lane (docs/apparatus.md says where each
 * figure comes from); a file scales them with span_y and the rest. */
static const struct kind kinds[KN_APP_COUNT] = {
    [KN_APP_STEPFIELD] = { "stepfield_e2828", "ASTM E2828", K_HEIGHT | K_COUNT | K_LENGTH | K_CELL,
                           .edge_x = 1.0, .height = 0.1, .count = 6, .length = 2.4, .cell = 0.1 },
    [KN_APP_PITCH_ROLL] = { "pitch_roll_ramps", "ASTM E2826", K_ANGLE | K_COUNT | K_CELL,
                            .edge_x = 1.0, .count = 2, .angle_deg = 15, .cell = 0.6 },
    [KN_APP_CROSSING] = { "crossing_ramps", "ASTM E2827", K_ANGLE | K_COUNT | K_CELL, .edge_x = 1.0,
                          .count = 4, .angle_deg = 15, .cell = 0.6 },
    [KN_APP_GAPS] = { "gaps", "ASTM E2801", K_WIDTH | K_COUNT | K_LENGTH | K_DEPTH, .edge_x = 1.0,
                      .width = 0.2, .count = 2, .length = 1.2, .depth = 0.5 },
    [KN_APP_HURDLES] = { "hurdles", "ASTM E2802", K_HEIGHT | K_WIDTH | K_COUNT | K_LENGTH,
                         .edge_x = 1.0, .height = 0.2, .width = 0.1, .count = 2, .length = 1.2 },
    [KN_APP_INCLINE] = { "inclined_plane", "ASTM E2803", K_ANGLE | K_LENGTH | K_LANDING,
                         .edge_x = 1.0, .angle_deg = 20, .length = 2.4, .landing = 1.2 },
    [KN_APP_STAIRS] = { "stairs_landing", "ASTM E2804", K_RISE | K_RUN | K_COUNT | K_LANDING,
                        .edge_x = 1.0, .rise = 0.2, .run = 0.24, .count = 5, .landing = 1.2 },
    [KN_APP_FIGURE8] = { "figure8", "ASTM E2829", K_LENGTH | K_CELL, .edge_x = 0.0, .length = 3.6,
                         .cell = 1.2 },
};

int kn_apparatus_lookup(const char *type)
{
    for (int i = 0; i < KN_APP_COUNT; i++)
        if (strcmp(type, kinds[i].name) == 0)
            return i;
    return -1;
}

const char *kn_apparatus_name(int a)
{
    return a >= 0 && a < KN_APP_COUNT ? kinds[a].name : "?";
}

const char *kn_apparatus_standard(int a)
{
    return a >= 0 && a < KN_APP_COUNT ? kinds[a].standard : "?";
}

/* ---- reading ---- */

static int gate(const cJSON *gates, const char *key, double g[3], const char *ctx, char *err,
                size_t errlen)
{
    double v[3] = { g[0], g[1], g[2] / DEG };
    if (kn_json_vec(gates, key, 3, -1e4, 1e4, v, 1, ctx, err, errlen))
        return -1;
    g[0] = v[0];
    g[1] = v[1];
    g[2] = v[2] * DEG;
    return 0;
}

int kn_apparatus_from_json(const cJSON *o, const char *ctx, struct kn_terrain *t, char *err,
                           size_t errlen)
{
    static const char *const common[] = { "type",   "name",        "comment", "edge_x",
                                          "span_y", "approach",    "exit",    "pose",
                                          "gates",  "wall_height", NULL };
    /* in the order of the K_ bits */
    static const char *const extra[] = { "height",    "width",  "rise",  "run",     "count",
                                         "angle_deg", "length", "depth", "landing", "cell" };
    char type[32] = "";
    if (kn_json_str_opt(o, "type", type, sizeof type, ctx, err, errlen))
        return -1;
    int a = kn_apparatus_lookup(type);
    if (a < 0) {
        snprintf(err, errlen, "%s: \"%s\" is no apparatus", ctx, type);
        return -1;
    }
    const struct kind *k = &kinds[a];
    const char *keys[sizeof common / sizeof common[0] + sizeof extra / sizeof extra[0]];
    size_t n = 0;
    for (size_t i = 0; common[i]; i++)
        keys[n++] = common[i];
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        if (k->keys & (1u << i))
            keys[n++] = extra[i];
    keys[n] = NULL;
    if (kn_json_only_keys(o, keys, ctx, err, errlen))
        return -1;
    memset(t, 0, sizeof *t);
    t->type = KN_TERRAIN_APPARATUS;
    t->apparatus = a;
    snprintf(t->name, sizeof t->name, "%s", k->name);
    t->edge_x = k->edge_x;
    t->span_y = 1.2;
    t->approach = 2.0;
    t->exit_len = 1.0;
    t->wall_height = 0.6;
    t->height = k->height;
    t->width = k->width;
    t->rise = k->rise;
    t->run = k->run;
    t->count = k->count;
    t->length = k->length;
    t->depth = k->depth;
    t->landing = k->landing;
    t->cell = k->cell;
    double angle_deg = k->angle_deg, pose[3] = { 0, 0, 0 };
    if (kn_json_str_opt(o, "name", t->name, sizeof t->name, ctx, err, errlen) ||
        kn_json_num_opt(o, "edge_x", -100, 100, &t->edge_x, ctx, err, errlen) ||
        kn_json_num_opt(o, "span_y", 0.6, 10, &t->span_y, ctx, err, errlen) ||
        kn_json_num_opt(o, "approach", 0, 20, &t->approach, ctx, err, errlen) ||
        kn_json_num_opt(o, "exit", 0, 20, &t->exit_len, ctx, err, errlen) ||
        kn_json_num_opt(o, "wall_height", 0, 5, &t->wall_height, ctx, err, errlen) ||
        kn_json_vec(o, "pose", 3, -1e4, 1e4, pose, 1, ctx, err, errlen) ||
        kn_json_num_opt(o, "height", 0.01, 1, &t->height, ctx, err, errlen) ||
        kn_json_num_opt(o, "width", 0.02, 3, &t->width, ctx, err, errlen) ||
        kn_json_num_opt(o, "rise", 0.02, 0.5, &t->rise, ctx, err, errlen) ||
        kn_json_num_opt(o, "run", 0.1, 1, &t->run, ctx, err, errlen) ||
        kn_json_int_opt(o, "count", 1, 20, &t->count, ctx, err, errlen) ||
        kn_json_num_opt(o, "angle_deg", 1, 60, &angle_deg, ctx, err, errlen) ||
        kn_json_num_opt(o, "length", 0.3, 20, &t->length, ctx, err, errlen) ||
        kn_json_num_opt(o, "depth", 0.05, 10, &t->depth, ctx, err, errlen) ||
        kn_json_num_opt(o, "landing", 0.3, 20, &t->landing, ctx, err, errlen) ||
        kn_json_num_opt(o, "cell", 0.05, 3, &t->cell, ctx, err, errlen))
        return -1;
    t->angle = angle_deg * DEG;
    t->pose[0] = pose[0];
    t->pose[1] = pose[1];
    t->pose[2] = pose[2] * DEG;
    if (kn_apparatus_build(t, err, errlen))
        return -1;
    /* the gates the geometry gives, unless the file places them */
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gates");
    if (g) {
        static const char *const gkeys[] = { "start", "finish", NULL };
        char gctx[600];
        snprintf(gctx, sizeof gctx, "%s: gates", ctx);
        if (!cJSON_IsObject(g)) {
            snprintf(err, errlen, "%s must be an object {\"start\": [x, y, yaw_deg], ...}", gctx);
            return -1;
        }
        if (kn_json_only_keys(g, gkeys, gctx, err, errlen) ||
            gate(g, "start", t->gate_start, gctx, err, errlen) ||
            gate(g, "finish", t->gate_finish, gctx, err, errlen))
            return -1;
    }
    return 0;
}

/* ---- building ---- */

/* A ramp module centred at (cx, cy): a tilted slab whose top face rises by
 * the terrain's angle from z = 0 to z = h over `along` metres in direction
 * dir (0 +x, 1 +y, 2 -x, 3 -y), `across` wide. The slab is thick enough
 * that its high end reaches the floor; its ends are square to its slope. */
static int ramp(struct kn_terrain *t, double cx, double cy, double along, double across, int dir)
{
    struct kn_part *p = kn_terrain_part_add(t);
    if (!p)
        return -1;
    double a = t->angle, ca = cos(a), sa = sin(a), h = along * tan(a);
    double th = h / ca + 0.02, yaw = dir * 0.5 * M_PI;
    p->kind = KN_PART_BOX;
    p->tag = KN_TAG_OBSTACLE;
    p->half[0] = 0.5 * along / ca;
    p->half[1] = 0.5 * across;
    p->half[2] = 0.5 * th;
    p->pitch = -a; /* raises the local +x end */
    p->yaw = yaw;
    /* middle of the top face, moved half a thickness along -normal; the
     * normal leans back against the rise: (-sin a, 0, cos a) before yaw */
    double ox = 0.5 * th * sa;
    p->c[0] = cx + cos(yaw) * ox;
    p->c[1] = cy + sin(yaw) * ox;
    p->c[2] = 0.5 * h - 0.5 * th * ca;
    return 0;
}

/* Symmetric stepfield: square posts `cell` wide on a grid, their heights
 * whole units of `height`; the pattern repeats every `count` posts both
 * ways, each repeat a square hill of posts (1 unit at its rim rising one
 * unit per post inwards), so the field reads the same from either end.
 * Posts of one height that touch are laid as one box per level. */
static int build_stepfield(struct kn_terrain *t, double *far)
{
    int nx = (int)lround(t->length / t->cell), ny = (int)lround(t->span_y / t->cell);
    if (nx < 1 || ny < 1 || nx > SF_NX || ny > SF_NY)
        return -2;
    unsigned char lv[SF_NY][SF_NX], done[SF_NY][SF_NX];
    int p = t->count, top = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            int a = i % p, b = j % p;
            int di = a < p - 1 - a ? a : p - 1 - a, dj = b < p - 1 - b ? b : p - 1 - b;
            lv[j][i] = (unsigned char)(1 + (di < dj ? di : dj));
            if (lv[j][i] > top)
                top = lv[j][i];
        }
    double x0 = t->edge_x, y0 = -0.5 * ny * t->cell, c = t->cell;
    for (int k = 1; k <= top; k++) {
        memset(done, 0, sizeof done);
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                if (lv[j][i] < k || done[j][i])
                    continue;
                int i2 = i;
                while (i2 + 1 < nx && lv[j][i2 + 1] >= k && !done[j][i2 + 1])
                    i2++;
                int j2 = j;
                for (int ok = 1; ok && j2 + 1 < ny;) {
                    for (int q = i; q <= i2 && ok; q++)
                        ok = lv[j2 + 1][q] >= k && !done[j2 + 1][q];
                    if (ok)
                        j2++;
                }
                for (int jj = j; jj <= j2; jj++)
                    for (int q = i; q <= i2; q++)
                        done[jj][q] = 1;
                if (kn_terrain_box_add(t, x0 + i * c, x0 + (i2 + 1) * c, y0 + j * c,
                                       y0 + (j2 + 1) * c, (k - 1) * t->height, k * t->height,
                                       KN_TAG_OBSTACLE))
                    return -1;
            }
    }
    *far = x0 + nx * c;
    t->top_z = top * t->height;
    return 0;
}

/* Continuous pitch/roll ramps: the lane split into columns `cell` wide,
 * each a run of 15 degree ramps up and down (`count` ridges, modules
 * `cell` long), neighbouring columns a module out of step, so wherever one
 * track climbs the other descends and the robot pitches and rolls at once;
 * along each column the surface is continuous. */
static int build_pitch_roll(struct kn_terrain *t, double *far)
{
    int cols = (int)lround(t->span_y / t->cell);
    if (cols < 1)
        return -2;
    double c = t->cell, y0 = -0.5 * cols * c;
    for (int j = 0; j < cols; j++) {
        double x = t->edge_x + (j % 2) * c; /* odd columns start a module later */
        for (int r = 0; r < t->count; r++) {
            if (ramp(t, x + 0.5 * c, y0 + (j + 0.5) * c, c, c, 0) ||
                ramp(t, x + 1.5 * c, y0 + (j + 0.5) * c, c, c, 2))
                return -1;
            x += 2 * c;
        }
    }
    *far = t->edge_x + (2 * t->count + (cols > 1)) * c;
    t->top_z = c * tan(t->angle);
    return 0;
}

/* Crossing pitch/roll ramps: square modules `cell` wide in a checkerboard
 * (`count` along the lane), each a ramp turned a quarter turn from its
 * neighbours (rising +x, +y, -x, -y in turn), so ramps meet at edges of
 * different heights: the discontinuous counterpart of the above. */
static int build_crossing(struct kn_terrain *t, double *far)
{
    int cols = (int)lround(t->span_y / t->cell);
    if (cols < 1)
        return -2;
    double c = t->cell, y0 = -0.5 * cols * c;
    for (int i = 0; i < t->count; i++)
        for (int j = 0; j < cols; j++)
            if (ramp(t, t->edge_x + (i + 0.5) * c, y0 + (j + 0.5) * c, c, c, (i + 3 * j) % 4))
                return -1;
    *far = t->edge_x + t->count * c;
    t->top_z = c * tan(t->angle);
    return 0;
}

/* Gaps: the floor is boxes with tops at z = 0 and `count` gaps `width`
 * wide, `length` of floor between them, over a pit `depth` deep. */
static int build_gaps(struct kn_terrain *t, double *far)
{
    double hy = 0.5 * t->span_y, z0 = -t->depth - 0.1, x = t->edge_x;
    if (kn_terrain_plane_add(t, -t->depth, KN_TAG_PIT) ||
        kn_terrain_box_add(t, x - t->approach - 0.5, x, -hy, hy, z0, 0, KN_TAG_GROUND))
        return -1;
    for (int i = 0; i < t->count; i++) {
        x += t->width;
        double end = i + 1 < t->count ? x + t->length : x + t->length + t->exit_len + 0.5;
        if (kn_terrain_box_add(t, x, end, -hy, hy, z0, 0, KN_TAG_OBSTACLE))
            return -1;
        x += t->length;
    }
    *far = t->edge_x + t->count * (t->width + t->length) - t->length;
    return 0;
}

/* Hurdles: `count` bars `height` high and `width` thick across the lane,
 * `length` apart. */
static int build_hurdles(struct kn_terrain *t, double *far)
{
    double hy = 0.5 * t->span_y, x = t->edge_x;
    for (int i = 0; i < t->count; i++) {
        x = t->edge_x + i * t->length;
        if (kn_terrain_box_add(t, x, x + t->width, -hy, hy, 0, t->height, KN_TAG_OBSTACLE))
            return -1;
    }
    *far = x + t->width;
    t->top_z = t->height;
    return 0;
}

/* Inclined plane: a slab rising at angle_deg over `length` (along the
 * slope) and a landing at its top. */
static int build_incline(struct kn_terrain *t, double *far)
{
    double a = t->angle, L = t->length, hy = 0.5 * t->span_y;
    double top = L * sin(a), xe = t->edge_x + L * cos(a);
    if (ramp(t, t->edge_x + 0.5 * L * cos(a), 0, L * cos(a), t->span_y, 0))
        return -1;
    /* ramp() takes the run along x: its slab is L long along the slope */
    if (kn_terrain_box_add(t, xe, xe + t->landing, -hy, hy, 0, top, KN_TAG_OBSTACLE))
        return -1;
    *far = xe + t->landing;
    t->top_z = top;
    return 0;
}

/* Stairs with a landing: `count` steps of rise x run up, a landing, and
 * as many down; each level one slab under both flights. */
static int build_stairs(struct kn_terrain *t, double *far)
{
    double hy = 0.5 * t->span_y, e = t->edge_x, n = t->count;
    double top_end = e + (n - 1) * t->run + t->landing; /* far end of the landing */
    for (int i = 0; i < t->count; i++)
        if (kn_terrain_box_add(t, e + i * t->run, top_end + (n - 1 - i) * t->run, -hy, hy,
                               i * t->rise, (i + 1) * t->rise, KN_TAG_OBSTACLE))
            return -1;
    *far = top_end + (n - 1) * t->run;
    t->top_z = n * t->rise;
    return 0;
}

/* Figure 8: two square barriers `cell` wide, `length` apart centre to
 * centre along x, their midpoint (where the two loops cross) at edge_x,
 * inside a rectangular wall one lane (span_y) from each barrier. */
static int build_figure8(struct kn_terrain *t)
{
    double hc = 0.5 * t->cell, L = 0.5 * t->length, w = t->span_y, e = t->edge_x;
    double h = t->wall_height > 0 ? t->wall_height : 0.6;
    if (t->length - t->cell < 0.6)
        return -2;
    for (int s = -1; s <= 1; s += 2)
        if (kn_terrain_box_add(t, e + s * L - hc, e + s * L + hc, -hc, hc, 0, h, KN_TAG_OBSTACLE))
            return -1;
    if (t->wall_height <= 0)
        return 0;
    double x0 = e - L - hc - w, x1 = e + L + hc + w, y1 = hc + w;
    if (kn_terrain_box_add(t, x0 - WALL_T, x1 + WALL_T, y1, y1 + WALL_T, 0, h, KN_TAG_WALL) ||
        kn_terrain_box_add(t, x0 - WALL_T, x1 + WALL_T, -y1 - WALL_T, -y1, 0, h, KN_TAG_WALL) ||
        kn_terrain_box_add(t, x0 - WALL_T, x0, -y1, y1, 0, h, KN_TAG_WALL) ||
        kn_terrain_box_add(t, x1, x1 + WALL_T, -y1, y1, 0, h, KN_TAG_WALL))
        return -1;
    return 0;
}

int kn_apparatus_build(struct kn_terrain *t, char *err, size_t errlen)
{
    t->nparts = 0;
    t->top_z = 0;
    double far = t->edge_x;
    int rc;
    /* every apparatus but the gaps stands on a floor plane */
    if (t->apparatus != KN_APP_GAPS && kn_terrain_plane_add(t, 0, KN_TAG_GROUND)) {
        rc = -1;
        goto out;
    }
    switch (t->apparatus) {
    case KN_APP_STEPFIELD: rc = build_stepfield(t, &far); break;
    case KN_APP_PITCH_ROLL: rc = build_pitch_roll(t, &far); break;
    case KN_APP_CROSSING: rc = build_crossing(t, &far); break;
    case KN_APP_GAPS: rc = build_gaps(t, &far); break;
    case KN_APP_HURDLES: rc = build_hurdles(t, &far); break;
    case KN_APP_INCLINE: rc = build_incline(t, &far); break;
    case KN_APP_STAIRS: rc = build_stairs(t, &far); break;
    case KN_APP_FIGURE8: rc = build_figure8(t); break;
    default: snprintf(err, errlen, "apparatus %d: no such apparatus", t->apparatus); return -1;
    }
    t->far_x = far;
    if (t->apparatus == KN_APP_FIGURE8) {
        /* one gate where the loops cross: a lap starts and ends there */
        t->gate_start[0] = t->gate_finish[0] = t->edge_x;
    } else {
        t->gate_start[0] = t->edge_x;
        t->gate_finish[0] = far;
        /* containment walls along the lane, behind the robot's start to
         * past the finish */
        double hy = 0.5 * t->span_y, x0 = t->edge_x - t->approach, x1 = far + t->exit_len;
        if (!rc && t->wall_height > 0 &&
            (kn_terrain_box_add(t, x0, x1, hy, hy + WALL_T, 0, t->wall_height, KN_TAG_WALL) ||
             kn_terrain_box_add(t, x0, x1, -hy - WALL_T, -hy, 0, t->wall_height, KN_TAG_WALL)))
            rc = -1;
    }
    t->gate_start[1] = t->gate_finish[1] = 0;
    t->gate_start[2] = t->gate_finish[2] = 0;
out:
    if (rc == -2) {
        snprintf(err, errlen, "%s: the lane (span_y %.3g m), length or cell do not fit together",
                 kinds[t->apparatus].name, t->span_y);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen, "%s terrain: more than %d parts", kinds[t->apparatus].name,
                 KN_TERRAIN_MAX_PARTS);
        return -1;
    }
    return 0;
}
