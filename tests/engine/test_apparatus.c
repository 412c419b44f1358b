/* The apparatus terrains (engine/terrain_apparatus.c, docs/apparatus.md)
 * and where a robot starts on every shipped terrain: each apparatus file
 * builds inside its lane with its walls and gates and the documented
 * sizes, refuses what does not fit, exports to SDF with exactly the
 * engine's parts; a robot spawned at the origin of any shipped terrain
 * rests on the floor in front of the obstacle, and on an apparatus drives
 * onto it without falling through, and its walls are told apart. */
#include <check.h>
#include <cjson/cJSON.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "params.h"
#include "terrain.h"
#include "terrain_apparatus.h"
#include "terrain_sdf.h"
#include "world.h"

#ifndef KN_TEST_CONFIG_DIR
#error "KN_TEST_CONFIG_DIR must name the config directory"
#endif

#define APPARATUS_DIR KN_TEST_CONFIG_DIR "/terrains/apparatus"

static struct kn_robot_params rp;

static void setup(void)
{
    char err[512];
    ck_assert_msg(
        kn_robotfile_load(KN_TEST_CONFIG_DIR "/robots/kenaf.json", &rp, err, sizeof err) == 0, "%s",
        err);
}

/* The files matching pattern, sorted; at least one. */
static glob_t files(const char *pattern)
{
    glob_t g;
    ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
    ck_assert_uint_gt(g.gl_pathc, 0);
    return g;
}

static void load(const char *path, struct kn_terrain *t)
{
    char err[768];
    ck_assert_msg(kn_terrain_load(path, NULL, t, err, sizeof err) == 0, "%s", err);
}

static void load_app(const char *name, struct kn_terrain *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", APPARATUS_DIR, name);
    load(path, t);
}

/* Bounds of a box's corners that stand above the floor (z > 1 mm): a
 * ramp's slab reaches under the floor, where it is not part of the lane. */
static void box_bounds(const struct kn_part *p, double lo[3], double hi[3])
{
    double cp = cos(p->pitch), sp = sin(p->pitch), cy = cos(p->yaw), sy = sin(p->yaw);
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int m = 0; m < 8; m++) {
        double l[3] = { (m & 1 ? 1 : -1) * p->half[0], (m & 2 ? 1 : -1) * p->half[1],
                        (m & 4 ? 1 : -1) * p->half[2] };
        /* R = Rz(yaw) Ry(pitch) */
        double x1 = cp * l[0] + sp * l[2], z1 = -sp * l[0] + cp * l[2];
        double w[3] = { p->c[0] + cy * x1 - sy * l[1], p->c[1] + sy * x1 + cy * l[1],
                        p->c[2] + z1 };
        if (w[2] <= 1e-3)
            continue;
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], w[k]);
            hi[k] = fmax(hi[k], w[k]);
        }
    }
}

static int count_tag(const struct kn_terrain *t, int tag)
{
    int n = 0;
    for (int i = 0; i < t->nparts; i++)
        n += t->parts[i].tag == tag;
    return n;
}

/* Every shipped apparatus: within the lane between its two walls (the
 * figure 8: inside its four), walls from behind the origin to past the
 * finish, obstacles from edge_x on, gates at the course's two ends. */
START_TEST(apparatus_files)
{
    glob_t g = files(APPARATUS_DIR "/*.json");
    for (size_t f = 0; f < g.gl_pathc; f++) {
        const char *path = g.gl_pathv[f];
        struct kn_terrain t;
        load(path, &t);
        ck_assert_int_eq(t.type, KN_TERRAIN_APPARATUS);
        ck_assert_int_le(t.nparts, KN_TERRAIN_MAX_PARTS);
        bool fig8 = t.apparatus == KN_APP_FIGURE8;
        ck_assert_msg(count_tag(&t, KN_TAG_WALL) == (fig8 ? 4 : 2), "%s: %d walls", path,
                      count_tag(&t, KN_TAG_WALL));
        ck_assert_msg(count_tag(&t, KN_TAG_OBSTACLE) > 0, "%s: no obstacle", path);
        double lane = fig8 ? 0.5 * t.cell + t.span_y : 0.5 * t.span_y;
        for (int i = 0; i < t.nparts; i++) {
            const struct kn_part *p = &t.parts[i];
            if (p->kind != KN_PART_BOX)
                continue;
            double lo[3], hi[3];
            box_bounds(p, lo, hi);
            if (p->tag == KN_TAG_WALL) {
                ck_assert_msg(lo[1] >= lane - 1e-9 || hi[1] <= -lane + 1e-9 || fig8,
                              "%s: wall %d inside the lane", path, i);
                ck_assert_double_eq_tol(hi[2], t.wall_height, 1e-9);
                if (!fig8) {
                    ck_assert_msg(lo[0] < -0.5, "%s: wall %d starts at x %g", path, i, lo[0]);
                    ck_assert_msg(hi[0] > t.gate_finish[0], "%s: wall %d ends before the finish",
                                  path, i);
                }
                continue;
            }
            if (!isfinite(lo[0]))
                continue; /* wholly under the floor: the gaps' floor boxes */
            ck_assert_msg(lo[1] >= -lane - 1e-9 && hi[1] <= lane + 1e-9,
                          "%s: part %d spans y %g..%g, the lane %g", path, i, lo[1], hi[1], lane);
            if (p->tag == KN_TAG_OBSTACLE && !fig8)
                ck_assert_msg(lo[0] >= t.edge_x - 1e-9, "%s: part %d starts at x %g before %g",
                              path, i, lo[0], t.edge_x);
        }
        ck_assert_double_eq_tol(t.gate_start[0], t.edge_x, 1e-12);
        if (fig8)
            ck_assert_double_eq_tol(t.gate_finish[0], t.edge_x, 1e-12);
        else
            ck_assert_double_eq_tol(t.gate_finish[0], t.far_x, 1e-12);
        kn_terrain_free(&t);
    }
    globfree(&g);
}
END_TEST

/* Height of the top surface at terrain (x, y), by the engine's own ray. */
static double ground_at(const struct kn_terrain *t, double x, double y)
{
    struct kn_physics_params pp;
    kn_physics_defaults(&pp);
    struct kn_world *w = kn_world_create(&pp);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(kn_world_set_terrain(w, t), 0);
    double z = kn_world_ground_z(w, x, y);
    kn_world_destroy(w);
    return z;
}

/* The sizes docs/apparatus.md gives for the shipped files. */
START_TEST(apparatus_dimensions)
{
    struct kn_terrain t;
    /* stepfield: 10 cm posts, hills of 6 rising 10, 20, 30 cm */
    load_app("stepfield-e2828", &t);
    ck_assert_double_eq_tol(t.top_z, 0.3, 1e-12);
    ck_assert_double_eq_tol(ground_at(&t, 1.05, -0.55), 0.1, 1e-6); /* a hill's rim post */
    ck_assert_double_eq_tol(ground_at(&t, 1.15, -0.45), 0.2, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.25, -0.35), 0.3, 1e-6); /* its top */
    ck_assert_double_eq_tol(ground_at(&t, 1.35, -0.35), 0.3, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.45, -0.35), 0.2, 1e-6);
    /* the same ahead of the middle as behind it: either way round */
    for (double x = 1.05; x < 3.4; x += 0.1)
        for (double y = -0.55; y < 0.6; y += 0.1)
            ck_assert_double_eq_tol(ground_at(&t, x, y), ground_at(&t, 4.4 - x, -y), 1e-6);
    ck_assert_double_eq_tol(t.far_x, 3.4, 1e-9);
    for (int i = 0; i < t.nparts; i++)
        if (t.parts[i].tag == KN_TAG_OBSTACLE) {
            double z0 = t.parts[i].c[2] - t.parts[i].half[2];
            ck_assert_double_eq_tol(z0 * 10, round(z0 * 10), 1e-9);
        }
    kn_terrain_free(&t);
    load_app("stepfield-e2828-2.4m", &t);
    ck_assert_double_eq_tol(t.span_y, 2.4, 1e-12);
    ck_assert_double_eq_tol(ground_at(&t, 1.25, 0.95), 0.3, 1e-6);
    kn_terrain_free(&t);
    /* ramps: 15 degrees over 0.6 m modules, 16 cm high */
    load_app("pitch-roll-ramps-e2826", &t);
    double h = 0.6 * tan(15 * M_PI / 180);
    ck_assert_double_eq_tol(t.top_z, h, 1e-12);
    ck_assert_double_eq_tol(ground_at(&t, 1.6, -0.3), h, 1e-3);       /* a ridge, right column */
    ck_assert_double_eq_tol(ground_at(&t, 1.3, -0.3), 0.5 * h, 1e-3); /* half way up */
    ck_assert_double_eq_tol(ground_at(&t, 1.6, 0.3), 0, 1e-3);        /* the left lags a module */
    ck_assert_double_eq_tol(ground_at(&t, 2.2, 0.3), h, 1e-3);
    kn_terrain_free(&t);
    load_app("crossing-ramps-e2827", &t);
    /* 1 cm short of each module's high edge */
    double h99 = 0.59 * tan(15 * M_PI / 180);
    ck_assert_double_eq_tol(ground_at(&t, 1.59, -0.3), h99, 1e-3); /* rises +x */
    ck_assert_double_eq_tol(ground_at(&t, 1.9, -0.01), h99, 1e-3); /* its neighbour along: +y */
    ck_assert_double_eq_tol(ground_at(&t, 1.3, 0.01), h99, 1e-3);  /* its neighbour across: -y */
    ck_assert_double_eq_tol(ground_at(&t, 1.9, -0.59), 0.01 * tan(15 * M_PI / 180), 1e-3);
    kn_terrain_free(&t);
    /* gaps: 20 cm wide over a 50 cm pit, 1.2 m apart */
    load_app("gaps-e2801", &t);
    ck_assert_double_eq_tol(ground_at(&t, 0.95, 0), 0, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.1, 0), -0.5, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.25, 0), 0, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 2.5, 0), -0.5, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 2.65, 0), 0, 1e-6);
    kn_terrain_free(&t);
    /* hurdles: 20 cm high, 10 cm thick, 1.2 m apart */
    load_app("hurdles-e2802", &t);
    ck_assert_double_eq_tol(ground_at(&t, 1.05, 0), 0.2, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.15, 0), 0, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 2.25, 0), 0.2, 1e-6);
    kn_terrain_free(&t);
    /* inclined plane: 20 degrees, 2.4 m of slope, a landing on top */
    load_app("inclined-plane-e2803", &t);
    double a = 20 * M_PI / 180;
    ck_assert_double_eq_tol(t.top_z, 2.4 * sin(a), 1e-9);
    ck_assert_double_eq_tol(ground_at(&t, 1.0 + 1.2 * cos(a), 0), 1.2 * sin(a), 1e-3);
    ck_assert_double_eq_tol(ground_at(&t, 1.0 + 2.4 * cos(a) + 0.6, 0), 2.4 * sin(a), 1e-6);
    kn_terrain_free(&t);
    /* stairs: 5 x 20 cm rises, 24 cm runs, a 1.2 m landing, 5 down */
    load_app("stairs-landing-e2804", &t);
    ck_assert_double_eq_tol(ground_at(&t, 1.1, 0), 0.2, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, 1.0 + 4 * 0.24 + 0.6, 0), 1.0, 1e-6);
    double down = 1.0 + 4 * 0.24 + 1.2; /* the first step down */
    ck_assert_double_eq_tol(ground_at(&t, down + 0.1, 0), 0.8, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, down + 4 * 0.24 - 0.1, 0), 0.2, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, down + 4 * 0.24 + 0.1, 0), 0, 1e-6);
    ck_assert_double_eq_tol(t.gate_finish[0], down + 4 * 0.24, 1e-9);
    kn_terrain_free(&t);
    /* figure 8: 1.2 m barriers 3.6 m apart, a 1.2 m lane round each */
    load_app("figure8-e2829", &t);
    ck_assert_double_eq_tol(ground_at(&t, 1.8, 0), 0.6, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, -1.8, 0.55), 0.6, 1e-6);
    ck_assert_double_eq_tol(ground_at(&t, -1.8, 1.75), 0, 1e-6);   /* the lane */
    ck_assert_double_eq_tol(ground_at(&t, -1.8, 1.85), 0.6, 1e-6); /* its wall */
    ck_assert_double_eq_tol(ground_at(&t, 3.65, 0), 0.6, 1e-6);
    kn_terrain_free(&t);
}
END_TEST

static const char *write_tmp(const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", h_path("app.json"));
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void refused(const char *text, const char *why)
{
    struct kn_terrain t;
    char err[768] = "";
    ck_assert_msg(kn_terrain_load(write_tmp(text), NULL, &t, err, sizeof err) == -1, "%s loaded",
                  text);
    ck_assert_msg(strstr(err, why) != NULL, "\"%s\" not in \"%s\"", why, err);
}

/* Bad files: a clear error naming what is wrong, never a half-built lane. */
START_TEST(apparatus_refused)
{
    refused("{\"type\": \"hurdles\", \"rise\": 0.2}", "rise");
    refused("{\"type\": \"hurdles\", \"height\": 3}", "height");
    refused("{\"type\": \"gaps\", \"span_y\": 0.3}", "span_y");
    refused("{\"type\": \"figure8\", \"length\": 1.5}", "do not fit");
    refused("{\"type\": \"stepfield_e2828\", \"cell\": 0.05, \"span_y\": 4}", "do not fit");
    refused("{\"type\": \"crossing_ramps\", \"cell\": 0.05, \"span_y\": 3, \"count\": 20}",
            "more than");
    refused("{\"type\": \"crossing_ramps\", \"gates\": [1, 2, 3]}", "gates");
    refused("{\"type\": \"crossing_ramps\", \"gates\": {\"start\": [1, 2]}}", "start");
    refused("{\"type\": \"crossing_ramps\", \"gates\": {\"end\": [1, 2, 3]}}", "end");
    refused("{\"type\": \"stepfield_e2829\"}", "apparatus");
    /* gates the file places win over the derived ones */
    struct kn_terrain t;
    char err[768];
    ck_assert_int_eq(kn_terrain_load(write_tmp("{\"type\": \"hurdles\", \"gates\": {\"finish\": "
                                               "[5, 0.25, 90]}}"),
                                     NULL, &t, err, sizeof err),
                     0);
    ck_assert_double_eq_tol(t.gate_start[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(t.gate_finish[0], 5, 1e-12);
    ck_assert_double_eq_tol(t.gate_finish[1], 0.25, 1e-12);
    ck_assert_double_eq_tol(t.gate_finish[2], M_PI / 2, 1e-12);
    /* a mirrored world mirrors them too */
    kn_terrain_mirror_y(&t);
    ck_assert_double_eq_tol(t.gate_finish[1], -0.25, 1e-12);
    ck_assert_double_eq_tol(t.gate_finish[2], -M_PI / 2, 1e-12);
    /* a scenario's override rebuilds the lane: 2.4 m wide */
    cJSON *o = cJSON_Parse("{\"span_y\": 2.4}");
    ck_assert_int_eq(kn_terrain_load(APPARATUS_DIR "/hurdles-e2802.json", o, &t, err, sizeof err),
                     0);
    cJSON_Delete(o);
    ck_assert_double_eq_tol(t.parts[1].half[1], 1.2, 1e-12);
}
END_TEST

/* The SDF world of a terrain: one collision per engine part, each box at
 * the engine's size, the gates; a heightfield is refused. */
static char *sdf_of(const struct kn_terrain *t, const char *source)
{
    /* The stream's buffer pointer lives on the heap: with it on the stack,
     * GCC's -O3 dangling-pointer check takes the returned text for a
     * pointer into this frame. */
    struct {
        char *buf;
        size_t len;
    } *m = calloc(1, sizeof *m);
    char err[256];
    ck_assert_ptr_nonnull(m);
    FILE *f = open_memstream(&m->buf, &m->len);
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(kn_sdf_write(f, t, source, err, sizeof err) == 0, "%s", err);
    fclose(f);
    char *text = m->buf;
    free(m);
    return text;
}

static int occurrences(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

START_TEST(sdf_matches_parts)
{
    glob_t g = files(KN_TEST_CONFIG_DIR "/terrains/*/*.json");
    for (size_t f = 0; f < g.gl_pathc; f++) {
        struct kn_terrain t;
        load(g.gl_pathv[f], &t);
        char *sdf = sdf_of(&t, g.gl_pathv[f]);
        ck_assert_int_eq(occurrences(sdf, "<collision "), t.nparts);
        ck_assert_int_eq(occurrences(sdf, "<visual "), t.nparts + 2);
        ck_assert_int_eq(occurrences(sdf, "<model name=\"gate_"), 2);
        ck_assert_int_eq(occurrences(sdf, "<collision name=\"wall_"), count_tag(&t, KN_TAG_WALL));
        for (int i = 0; i < t.nparts; i++) {
            const struct kn_part *p = &t.parts[i];
            char want[160];
            if (p->kind == KN_PART_BOX)
                snprintf(want, sizeof want, "<size>%.9g %.9g %.9g</size>", 2 * p->half[0],
                         2 * p->half[1], 2 * p->half[2]);
            else
                snprintf(want, sizeof want, "<plane><normal>");
            ck_assert_msg(strstr(sdf, want), "%s: part %d: no %s", g.gl_pathv[f], i, want);
        }
        /* one XML comment, closed once: no "--" inside it */
        ck_assert_int_eq(occurrences(sdf, "--"), 2);
        free(sdf);
        kn_terrain_free(&t);
    }
    globfree(&g);
    /* the plain terrains too, a name with hyphens in its comment */
    struct kn_terrain t;
    load(KN_TEST_CONFIG_DIR "/terrains/stairs.json", &t);
    snprintf(t.name, sizeof t.name, "a--b-");
    char *sdf = sdf_of(&t, "x--y.json");
    ck_assert_int_eq(occurrences(sdf, "<collision "), t.nparts);
    ck_assert_int_eq(occurrences(sdf, "--"), 2);
    ck_assert_int_eq(occurrences(sdf, "<model name=\"gate_"), 0);
    free(sdf);
    kn_terrain_free(&t);
    load(KN_TEST_CONFIG_DIR "/terrains/bumps.json", &t);
    char err[256] = "", *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(kn_sdf_write(f, &t, "bumps.json", err, sizeof err), -1);
    fclose(f);
    free(buf);
    ck_assert_ptr_nonnull(strstr(err, "heightfield"));
    kn_terrain_free(&t);
}
END_TEST

/* A world with the terrain and a robot spawned as the server spawns one
 * whose INIT names no start: at the origin, on the ground (with z NaN
 * the world places it), turned by yaw. */
static struct kn_world *world_with_robot(const struct kn_terrain *t, double yaw, int *id)
{
    struct kn_physics_params pp;
    kn_physics_defaults(&pp);
    struct kn_world *w = kn_world_create(&pp);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(kn_world_set_terrain(w, t), 0);
    struct kn_pose p = { 0, 0, NAN, 0, 0, yaw };
    *id = kn_world_spawn(w, &rp, &p, NULL);
    ck_assert_int_ge(*id, 0);
    return w;
}

/* A robot at rest on flat ground: the height of its origin. */
static double rest_z(void)
{
    struct kn_terrain t;
    memset(&t, 0, sizeof t);
    char err[128];
    ck_assert_int_eq(kn_terrain_build(&t, err, sizeof err), 0);
    int id;
    struct kn_world *w = world_with_robot(&t, 0, &id);
    kn_world_step(w, 1000);
    struct kn_truth tr;
    kn_world_truth(w, id, &tr);
    kn_world_destroy(w);
    return tr.origin[2];
}

/* The nearest x ahead of the robot (|y| < 0.4) where the obstacle begins:
 * an obstacle part above the floor, a heightfield's edge, the trench's
 * or the first gap's near edge; in the world (the shipped terrains are
 * moved along x, not turned). */
static double obstacle_ahead(const struct kn_terrain *t, double front)
{
    ck_assert_double_eq(t->pose[2], 0);
    front -= t->pose[0];
    double ahead = INFINITY;
    for (int i = 0; i < t->nparts; i++) {
        const struct kn_part *p = &t->parts[i];
        double lo[3], hi[3];
        if (p->kind == KN_PART_HFIELD) {
            lo[0] = p->c[0] - p->half[0];
        } else if (p->kind == KN_PART_BOX && p->tag == KN_TAG_OBSTACLE) {
            box_bounds(p, lo, hi);
            if (!isfinite(lo[0]) || lo[1] > 0.4 || hi[1] < -0.4 || hi[0] < front)
                continue;
        } else {
            continue;
        }
        ahead = fmin(ahead, lo[0]);
    }
    if (t->type == KN_TERRAIN_TRENCH ||
        (t->type == KN_TERRAIN_APPARATUS && t->apparatus == KN_APP_GAPS))
        ahead = fmin(ahead, t->edge_x);
    return ahead + t->pose[0];
}

/* Where the server puts a robot whose INIT names no start: the origin,
 * on the ground (kn_srv_spawn_pose leaves z to the world). On every
 * shipped terrain it rests on the floor, touching nothing else, its
 * flipper tips short of the obstacle ahead. */
START_TEST(spawn_in_front)
{
    double z_flat = rest_z();
    glob_t g[2] = { files(KN_TEST_CONFIG_DIR "/terrains/*.json"), files(APPARATUS_DIR "/*.json") };
    int checked = 0;
    for (int d = 0; d < 2; d++)
        for (size_t f = 0; f < g[d].gl_pathc; f++) {
            const char *path = g[d].gl_pathv[f];
            struct kn_terrain t;
            load(path, &t);
            int id;
            struct kn_world *w = world_with_robot(&t, 0, &id);
            kn_world_step(w, 1000);
            struct kn_truth tr;
            struct kn_outline o;
            kn_world_truth(w, id, &tr);
            kn_world_outline(w, id, &o);
            for (int k = 0; k < KN_NPARTS; k++)
                ck_assert_msg((tr.part_tags[k] & ~(unsigned)KN_TAG_GROUND) == 0,
                              "%s: robot part %d touches tags %#x", path, k, tr.part_tags[k]);
            ck_assert_msg(fabs(tr.origin[2] - z_flat) < 0.005, "%s: robot at z %g, on flat %g",
                          path, tr.origin[2], z_flat);
            double front = fmax(o.tip_front[0] + o.tip_r, o.main_front[0] + o.main_r);
            if (t.type != KN_TERRAIN_FLAT) {
                double ahead = obstacle_ahead(&t, front);
                ck_assert_msg(isfinite(ahead) && front < ahead - 0.05,
                              "%s: the robot's front at x %g, the obstacle from %g", path, front,
                              ahead);
            }
            kn_world_destroy(w);
            kn_terrain_free(&t);
            checked++;
        }
    ck_assert_int_ge(checked, 16);
    globfree(&g[0]);
    globfree(&g[1]);
}
END_TEST

/* From its start, the robot drives onto each apparatus: at 0.4 m/s for
 * 4 s it reaches the obstacle (touches a part tagged obstacle) and its
 * body never sinks below the floor. */
START_TEST(drive_onto)
{
    double z_flat = rest_z();
    glob_t g = files(APPARATUS_DIR "/*.json");
    for (size_t f = 0; f < g.gl_pathc; f++) {
        struct kn_terrain t;
        load(g.gl_pathv[f], &t);
        int id;
        struct kn_world *w = world_with_robot(&t, 0, &id);
        kn_world_step(w, 300);
        kn_world_set_belts(w, id, 0.4, 0.4);
        unsigned tags = 0;
        double zmin = INFINITY, t_touch = NAN;
        for (int ms = 0; ms < 4000; ms += 10) {
            kn_world_step(w, 10);
            struct kn_truth tr;
            kn_world_truth(w, id, &tr);
            for (int k = 0; k < KN_NPARTS; k++)
                tags |= tr.part_tags[k];
            if ((tags & KN_TAG_OBSTACLE) && isnan(t_touch))
                t_touch = ms / 1000.0;
            zmin = fmin(zmin, tr.origin[2]);
            ck_assert(isfinite(tr.origin[0]) && isfinite(tr.origin[2]));
        }
        ck_assert_msg(tags & KN_TAG_OBSTACLE, "%s: never reached the obstacle", g.gl_pathv[f]);
        ck_assert_msg(t_touch <= 3.0, "%s: reached it only after %g s", g.gl_pathv[f], t_touch);
        ck_assert_msg(zmin > z_flat - 0.03, "%s: sank to z %g (rest %g)", g.gl_pathv[f], zmin,
                      z_flat);
        kn_world_destroy(w);
        kn_terrain_free(&t);
    }
    globfree(&g);
}
END_TEST

/* Turned toward a containment wall, the robot touches a part tagged wall:
 * what a judge needs to count wall touches. */
START_TEST(wall_touch_tagged)
{
    struct kn_terrain t;
    load_app("hurdles-e2802", &t);
    int id;
    struct kn_world *w = world_with_robot(&t, M_PI / 2, &id);
    kn_world_set_belts(w, id, 0.3, 0.3);
    unsigned tags = 0;
    for (int ms = 0; ms < 3000 && !(tags & KN_TAG_WALL); ms += 10) {
        kn_world_step(w, 10);
        struct kn_truth tr;
        kn_world_truth(w, id, &tr);
        for (int k = 0; k < KN_NPARTS; k++)
            tags |= tr.part_tags[k];
    }
    ck_assert_msg(tags & KN_TAG_WALL, "tags %#x", tags);
    ck_assert_msg(!(tags & KN_TAG_OBSTACLE), "tags %#x", tags);
    kn_world_destroy(w);
    kn_terrain_free(&t);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "apparatus-files", apparatus_files, 60, setup, NULL },
        { "apparatus-dimensions", apparatus_dimensions, 60, setup, NULL },
        { "apparatus-refused", apparatus_refused, 60, NULL, NULL },
        { "sdf-matches-parts", sdf_matches_parts, 60, setup, NULL },
        { "spawn-in-front", spawn_in_front, 120, setup, NULL },
        { "drive-onto", drive_onto, 120, setup, NULL },
        { "wall-touch-tagged", wall_touch_tagged, 60, setup, NULL },
    };
    return h_run_cases("engine-apparatus", cases, sizeof cases / sizeof cases[0]);
}
