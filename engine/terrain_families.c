/* Terrain families drawn from a seed, for sweeps over many grounds of one
 * kind: "rough" (uneven ground: a grid of low boxes of random heights),
 * "stepfield" (square posts of heights from a small set, as the NIST
 * response-robot stepfields) and "rubble" (boxes of random size and yaw
 * lying on the ground). Each fills the lane x in [edge_x, edge_x +
 * length], |y| <= span_y / 2, so the robot starting before edge_x meets it
 * head on. The draws come from splitmix64 on the file's "seed": integers
 * and IEEE doubles only, so one seed gives the same parts on every machine
 * and every run, whatever rand() a C library has. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"
#include "terrain.h"

/* The boxes stand in the ground this deep, so no seam shows between a
 * box and the plane a track could catch on. */
#define SUNK_M 0.05

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): one 64-bit state,
 * every seed (0 too) a good stream. */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits, exact in a double. */
static double unit(uint64_t *s)
{
    return (double)(next64(s) >> 11) * 0x1.0p-53;
}

static double between(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * unit(s);
}

/* A stream per family, so a rough field and a stepfield of one seed are
 * not the same numbers in another dress. */
static uint64_t stream(const struct kn_terrain *t)
{
    return (uint64_t)(uint32_t)t->seed * 0x100000001B3ull ^ (uint64_t)t->type;
}

/* A stepfield's "heights_m": 1..KN_TERRAIN_MAX_HEIGHTS numbers in [0, 1]. */
static int heights_key(const cJSON *o, struct kn_terrain *t, const char *ctx, char *err,
                       size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "heights_m");
    if (!v)
        return 0;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n < 1 || n > KN_TERRAIN_MAX_HEIGHTS) {
        snprintf(err, errlen, "%s: \"heights_m\" must be an array of 1..%d heights in metres", ctx,
                 KN_TERRAIN_MAX_HEIGHTS);
        return -1;
    }
    if (kn_json_vec(o, "heights_m", n, 0, 1, t->heights, 0, ctx, err, errlen))
        return -1;
    t->nheights = n;
    return 0;
}

/* [min, max] with min <= max. */
static int range_key(const cJSON *o, const char *key, double lo, double hi, double out[2],
                     const char *ctx, char *err, size_t errlen)
{
    if (kn_json_vec(o, key, 2, lo, hi, out, 1, ctx, err, errlen))
        return -1;
    if (out[0] > out[1]) {
        snprintf(err, errlen, "%s: \"%s\" is [min, max]: %g > %g", ctx, key, out[0], out[1]);
        return -1;
    }
    return 0;
}

/* Cells of a rough field along a side of len metres: the last one cut. */
static long cells(double len, double cell)
{
    return lround(ceil(len / cell - 1e-9));
}

/* How many parts the family will have (the ground plane included), so a
 * file asking for more than a terrain holds is refused by name. */
static long parts_wanted(const struct kn_terrain *t)
{
    switch (t->type) {
    case KN_TERRAIN_ROUGH: return 1 + cells(t->length, t->hf_cell) * cells(t->span_y, t->hf_cell);
    case KN_TERRAIN_STEPFIELD: return 1 + (long)t->grid[0] * t->grid[1];
    case KN_TERRAIN_RUBBLE: return 1 + t->pieces;
    default: return 0;
    }
}

static int check_fits(const struct kn_terrain *t, const char *ctx, char *err, size_t errlen)
{
    long n = parts_wanted(t);
    if (n > KN_TERRAIN_MAX_PARTS) {
        snprintf(err, errlen, "%s: %s of %ld parts: a terrain holds at most %d", ctx,
                 kn_terrain_type_name(t->type), n, KN_TERRAIN_MAX_PARTS);
        return -1;
    }
    if (t->type == KN_TERRAIN_STEPFIELD) {
        double w = t->grid[1] * t->post;
        if (w > t->span_y + 1e-9) {
            snprintf(err, errlen,
                     "%s: stepfield %d posts of %g m across is %g m, wider than span_y %g m", ctx,
                     t->grid[1], t->post, w, t->span_y);
            return -1;
        }
    }
    if (t->type == KN_TERRAIN_RUBBLE) {
        /* the largest piece in any yaw must fit in the lane */
        double reach = t->piece_size[1] * M_SQRT2;
        if (reach > t->span_y || reach > t->length) {
            snprintf(err, errlen,
                     "%s: rubble pieces up to %g m (%.3f m across in any yaw) do not fit a lane of "
                     "%g x %g m",
                     ctx, t->piece_size[1], reach, t->length, t->span_y);
            return -1;
        }
    }
    return 0;
}

int kn_terrain_family_keys(const cJSON *o, struct kn_terrain *t, const char *ctx, char *err,
                           size_t errlen)
{
    t->seed = 1;
    t->amplitude = 0.05;
    t->post = 0.2;
    t->grid[0] = 10;
    t->grid[1] = 6;
    t->heights[0] = 0;
    t->heights[1] = 0.05;
    t->heights[2] = 0.1;
    t->nheights = 3;
    t->pieces = 20;
    t->piece_size[0] = 0.1;
    t->piece_size[1] = 0.4;
    t->piece_height[0] = 0.02;
    t->piece_height[1] = 0.1;
    if (t->type == KN_TERRAIN_ROUGH && !cJSON_GetObjectItemCaseSensitive(o, "cell_m"))
        t->hf_cell = 0.2; /* a heightfield's 5 cm cells would be 2 400 boxes on 2 x 3 m */
    double grid[2] = { t->grid[0], t->grid[1] };
    if (kn_json_int_opt(o, "seed", 0, 2147483647, &t->seed, ctx, err, errlen) ||
        kn_json_num_opt(o, "amplitude_m", 0, 1, &t->amplitude, ctx, err, errlen) ||
        kn_json_num_opt(o, "post_m", 0.02, 2, &t->post, ctx, err, errlen) ||
        kn_json_vec(o, "grid", 2, 1, KN_TERRAIN_MAX_PARTS, grid, 1, ctx, err, errlen) ||
        heights_key(o, t, ctx, err, errlen) ||
        kn_json_int_opt(o, "pieces", 1, KN_TERRAIN_MAX_PARTS, &t->pieces, ctx, err, errlen) ||
        range_key(o, "piece_size_m", 0.01, 2, t->piece_size, ctx, err, errlen) ||
        range_key(o, "piece_height_m", 0.005, 1, t->piece_height, ctx, err, errlen))
        return -1;
    if (grid[0] != floor(grid[0]) || grid[1] != floor(grid[1])) {
        snprintf(err, errlen, "%s: \"grid\" is two whole numbers of posts", ctx);
        return -1;
    }
    t->grid[0] = (int)grid[0];
    t->grid[1] = (int)grid[1];
    if (t->type == KN_TERRAIN_STEPFIELD)
        t->length = t->grid[0] * t->post; /* the field is as long as its posts */
    return check_fits(t, ctx, err, errlen);
}

/* Cells of hf_cell (the last row and column cut to the lane), each a box
 * whose top is uniform in [0, amplitude]; a cell under 1 mm is ground. */
static int build_rough(struct kn_terrain *t, uint64_t *s)
{
    double x1 = t->edge_x + t->length, hy = 0.5 * t->span_y, c = t->hf_cell;
    long nx = cells(t->length, c), ny = cells(t->span_y, c);
    int rc = 0;
    for (long j = 0; j < ny && !rc; j++)
        for (long i = 0; i < nx && !rc; i++) {
            double h = t->amplitude * unit(s);
            double x = t->edge_x + (double)i * c, y = -hy + (double)j * c;
            if (h >= 0.001)
                rc = kn_terrain_box_add(t, x, fmin(x + c, x1), y, fmin(y + c, hy), -SUNK_M, h,
                                        KN_TAG_OBSTACLE);
        }
    return rc;
}

/* grid[0] x grid[1] posts centred across the lane from edge_x; each post
 * a height of the set, drawn with equal chances; height 0 is ground. */
static int build_stepfield(struct kn_terrain *t, uint64_t *s)
{
    double y0 = -0.5 * t->grid[1] * t->post;
    int rc = 0;
    for (int j = 0; j < t->grid[1] && !rc; j++)
        for (int i = 0; i < t->grid[0] && !rc; i++) {
            int k = (int)(unit(s) * t->nheights);
            double h = t->heights[k < t->nheights ? k : t->nheights - 1];
            double x = t->edge_x + i * t->post, y = y0 + j * t->post;
            if (h > 0)
                rc = kn_terrain_box_add(t, x, x + t->post, y, y + t->post, -SUNK_M, h,
                                        KN_TAG_OBSTACLE);
        }
    return rc;
}

/* pieces boxes lying flat, sides and heights uniform between their
 * bounds, any yaw, centres uniform where the whole box stays in the lane.
 * They may overlap: a heap is rubble too. */
static int build_rubble(struct kn_terrain *t, uint64_t *s)
{
    for (int i = 0; i < t->pieces; i++) {
        double hx = 0.5 * between(s, t->piece_size[0], t->piece_size[1]);
        double hy = 0.5 * between(s, t->piece_size[0], t->piece_size[1]);
        double h = between(s, t->piece_height[0], t->piece_height[1]);
        double yaw = between(s, -0.5 * M_PI, 0.5 * M_PI);
        double ex = hx * fabs(cos(yaw)) + hy * fabs(sin(yaw));
        double ey = hx * fabs(sin(yaw)) + hy * fabs(cos(yaw));
        double x = between(s, t->edge_x + ex, t->edge_x + t->length - ex);
        double y = between(s, -0.5 * t->span_y + ey, 0.5 * t->span_y - ey);
        struct kn_part *p = kn_terrain_part_add(t);
        if (!p)
            return -1;
        p->kind = KN_PART_BOX;
        p->tag = KN_TAG_OBSTACLE;
        p->c[0] = x;
        p->c[1] = y;
        p->c[2] = 0.5 * (h - SUNK_M);
        p->half[0] = hx;
        p->half[1] = hy;
        p->half[2] = 0.5 * (h + SUNK_M);
        p->yaw = yaw;
    }
    return 0;
}

int kn_terrain_family_build(struct kn_terrain *t)
{
    uint64_t s = stream(t);
    int rc = -1;
    switch (t->type) {
    case KN_TERRAIN_ROUGH: rc = build_rough(t, &s); break;
    case KN_TERRAIN_STEPFIELD: rc = build_stepfield(t, &s); break;
    case KN_TERRAIN_RUBBLE: rc = build_rubble(t, &s); break;
    default: break;
    }
    /* past the field the robot is back on the ground */
    t->far_x = t->edge_x + t->length;
    t->top_z = 0;
    return rc;
}
