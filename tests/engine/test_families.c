/* The terrain families drawn from a seed (rough, stepfield, rubble;
 * engine/terrain_families.c) and a scenario's robot_changes: one seed
 * gives the same parts on every load, another seed other parts, every
 * part lies in the lane the file names, bad keys are refused by name, a
 * scenario on each shipped family loads, spawns the robot in front of the
 * field and drives into it for a few seconds; robot_changes reach the
 * robot (objects merged key by key, variants too) and a key the robot
 * file lacks is refused by the robot file's reader. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "jsonutil.h"
#include "scenario.h"
#include "terrain.h"

#ifndef KN_TEST_CONFIG_DIR
#error "KN_TEST_CONFIG_DIR must name the config directory"
#endif

static const char *const families[] = { "rough", "stepfield", "rubble" };

static char tmpdir[] = "/tmp/kn-families-XXXXXX";

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    h_remove_tree(tmpdir);
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    h_write_file(path, text);
    return path;
}

/* The shipped family file, with the override (JSON text or NULL). */
static void load_family(const char *name, const char *override, struct kn_terrain *t)
{
    char path[512], err[768];
    snprintf(path, sizeof path, "%s/terrains/%s.json", KN_TEST_CONFIG_DIR, name);
    cJSON *o = override ? cJSON_Parse(override) : NULL;
    ck_assert(!override || o);
    int rc = kn_terrain_load(path, o, t, err, sizeof err);
    cJSON_Delete(o);
    ck_assert_msg(rc == 0, "%s: %s", name, err);
}

static int same_parts(const struct kn_terrain *a, const struct kn_terrain *b)
{
    return a->nparts == b->nparts &&
           memcmp(a->parts, b->parts, (size_t)a->nparts * sizeof a->parts[0]) == 0;
}

START_TEST(same_seed_same_parts)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        struct kn_terrain a, b, c;
        load_family(families[i], NULL, &a);
        load_family(families[i], "{\"seed\": 1}", &b);
        load_family(families[i], "{\"seed\": 2}", &c);
        ck_assert_int_eq(a.type, KN_TERRAIN_ROUGH + (int)i);
        ck_assert_int_gt(a.nparts, 10);
        ck_assert_msg(same_parts(&a, &b), "%s: seed 1 twice, other parts", families[i]);
        ck_assert_msg(!same_parts(&a, &c), "%s: seeds 1 and 2, the same parts", families[i]);
        kn_terrain_free(&a);
        kn_terrain_free(&b);
        kn_terrain_free(&c);
    }
}
END_TEST

/* The draws are the same on every machine: the first posts of seed 1
 * against splitmix64 computed apart (Python, 64-bit integers: the stream
 * (seed * 0x100000001B3) ^ 8, the type's number; index = floor(u * 4)). */
START_TEST(known_draws)
{
    static const int want[12] = { 1, 0, 0, 2, 2, 1, 1, 0, 2, 1, 0, 1 };
    struct kn_terrain t;
    load_family("stepfield", "{\"heights_m\": [0.01, 0.02, 0.03, 0.04]}", &t);
    /* every post has a height above 0: one part per post and the plane */
    ck_assert_int_eq(t.nparts, 1 + 10 * 6);
    for (int i = 0; i < 12; i++) {
        const struct kn_part *p = &t.parts[1 + i];
        ck_assert_double_eq_tol(p->c[2] + p->half[2], 0.01 * (want[i] + 1), 1e-12);
        /* row 0 (lowest y) first, along +x */
        ck_assert_double_eq_tol(p->c[0], t.edge_x + (i % 10 + 0.5) * t.post, 1e-12);
    }
    kn_terrain_free(&t);
}
END_TEST

/* Every part of every family inside x in [edge_x, edge_x + length],
 * |y| <= span_y / 2, whatever its yaw; the ground plane first. */
START_TEST(parts_in_the_lane)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        for (int seed = 1; seed <= 5; seed++) {
            char ov[64];
            snprintf(ov, sizeof ov, "{\"seed\": %d, \"edge_x\": 0.5}", seed);
            struct kn_terrain t;
            load_family(families[i], ov, &t);
            ck_assert_int_eq(t.parts[0].kind, KN_PART_PLANE);
            ck_assert_double_eq_tol(t.far_x, t.edge_x + t.length, 1e-12);
            for (int k = 1; k < t.nparts; k++) {
                const struct kn_part *p = &t.parts[k];
                ck_assert_int_eq(p->kind, KN_PART_BOX);
                ck_assert_int_eq(p->tag, KN_TAG_OBSTACLE);
                double ex = p->half[0] * fabs(cos(p->yaw)) + p->half[1] * fabs(sin(p->yaw));
                double ey = p->half[0] * fabs(sin(p->yaw)) + p->half[1] * fabs(cos(p->yaw));
                ck_assert_msg(p->c[0] - ex >= 0.5 - 1e-9 && p->c[0] + ex <= 0.5 + t.length + 1e-9,
                              "%s seed %d part %d: x %g +- %g", families[i], seed, k, p->c[0], ex);
                ck_assert_msg(fabs(p->c[1]) + ey <= 0.5 * t.span_y + 1e-9,
                              "%s seed %d part %d: y %g +- %g", families[i], seed, k, p->c[1], ey);
                /* standing on the ground, sunk into it, tops above it */
                ck_assert_double_lt(p->c[2] - p->half[2], 0);
                ck_assert_double_gt(p->c[2] + p->half[2], 0);
            }
            kn_terrain_free(&t);
        }
}
END_TEST

static void refused(const char *family, const char *override, const char *want)
{
    char path[512], err[768];
    snprintf(path, sizeof path, "%s/terrains/%s.json", KN_TEST_CONFIG_DIR, family);
    cJSON *o = cJSON_Parse(override);
    ck_assert_ptr_nonnull(o);
    struct kn_terrain t;
    int rc = kn_terrain_load(path, o, &t, err, sizeof err);
    cJSON_Delete(o);
    ck_assert_msg(rc == -1, "%s %s: loaded", family, override);
    ck_assert_msg(strstr(err, want) != NULL, "%s %s: %s", family, override, err);
}

START_TEST(bad_keys_refused)
{
    refused("rough", "{\"cell_m\": 0.02}", "parts: a terrain holds at most 1024");
    refused("rough", "{\"seed\": -1}", "seed");
    refused("rough", "{\"seed\": 1.5}", "seed");
    refused("stepfield", "{\"grid\": [10, 7]}", "wider than span_y");
    refused("stepfield", "{\"grid\": [10.5, 2]}", "two whole numbers");
    refused("stepfield", "{\"heights_m\": []}", "heights_m");
    refused("stepfield", "{\"heights_m\": [0.1, -0.1]}", "heights_m");
    refused("rubble", "{\"piece_size_m\": [0.3, 0.1]}", "[min, max]");
    refused("rubble", "{\"piece_size_m\": [0.1, 1.5]}", "do not fit");
    refused("rubble", "{\"pieces\": 0}", "pieces");
    refused("rubble", "{\"rocks\": 3}", "unknown key \"rocks\"");
}
END_TEST

/* A scenario on the family: belts 0.3 m/s for 3 s from x = -1. */
static const char *family_scenario(const char *family)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "{ \"name\": \"on-%s\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
             "{ \"file\": \"%s/terrains/%s.json\", \"seed\": 3, \"edge_x\": 0.0 }, "
             "\"start\": { \"x\": -1.0 }, "
             "\"duration_s\": 3, \"controller\": { \"type\": \"script\", \"script\": "
             "[ { \"t\": 0, \"belts\": [0.3, 0.3], \"flippers_deg\": [30, 30, 0, 0] } ] }, "
             "\"criterion\": { \"type\": \"cross\" }, \"expect\": \"either\" }\n",
             family, KN_TEST_CONFIG_DIR, KN_TEST_CONFIG_DIR, family);
    return text;
}

START_TEST(scenario_on_each_family)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char name[64], err[768];
        snprintf(name, sizeof name, "on-%s.json", families[i]);
        const char *p = write_tmp(name, family_scenario(families[i]));
        struct kn_scenario sc;
        ck_assert_msg(kn_scenario_load(p, 0, &sc, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(sc.terrain.seed, 3);
        struct kn_result res;
        ck_assert_int_eq(kn_scenario_run(&sc, 1, &res), 0);
        ck_assert_int_gt(res.nsamples, 250);
        /* spawned on the ground before the field, nothing of it ahead of edge_x */
        const struct kn_sample *s0 = &res.samples[0];
        ck_assert_double_lt(s0->outline.tip_front[0], sc.terrain.edge_x);
        ck_assert_double_lt(fabs(s0->rpy[0]) + fabs(s0->rpy[1]), 0.02);
        /* then drove into it, the physics sound */
        const struct kn_sample *s1 = &res.samples[res.nsamples - 1];
        ck_assert_msg(s1->outline.tip_front[0] > sc.terrain.edge_x + 0.1, "%s: front at %g",
                      families[i], s1->outline.tip_front[0]);
        ck_assert(res.finite);
        ck_assert_msg(res.max_depth < 0.010, "%s: penetration %g m", families[i], res.max_depth);
        printf("%-10s %d parts, after 3 s: front at x %.2f m, max tilt %.1f deg, %s\n", families[i],
               sc.terrain.nparts, s1->outline.tip_front[0], res.max_tilt * 180 / M_PI, res.why);
        kn_result_free(&res);
        kn_scenario_free(&sc);
    }
}
END_TEST

/* ---- robot_changes ---- */

static const char *changes_scenario(const char *changes, const char *variants)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "{ \"name\": \"changed\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
             "{ \"type\": \"flat\" }, \"controller\": { \"type\": \"external\" }, "
             "\"criterion\": { \"type\": \"straight\" }%s%s%s%s }\n",
             KN_TEST_CONFIG_DIR, changes ? ", \"robot_changes\": " : "", changes ? changes : "",
             variants ? ", \"variants\": " : "", variants ? variants : "");
    return text;
}

START_TEST(robot_changes_applied)
{
    char err[768];
    struct kn_scenario base, sc;
    const char *p = write_tmp("plain.json", changes_scenario(NULL, NULL));
    ck_assert_msg(kn_scenario_load(p, 0, &base, err, sizeof err) == 0, "%s", err);
    p = write_tmp("changed.json",
                  changes_scenario("{\"belt\": {\"speed_max_m_s\": 0.3}, \"friction\": "
                                   "{\"track_mu\": 0.6}}",
                                   "[ {}, { \"robot_changes\": { \"friction\": "
                                   "{ \"track_mu\": 0.4 } } } ]"));
    ck_assert_msg(kn_scenario_load(p, 0, &sc, err, sizeof err) == 0, "%s", err);
    ck_assert_double_eq(sc.rp.belt_speed_max, 0.3);
    ck_assert_double_eq(sc.rp.track_mu, 0.6);
    /* the rest of each section is the file's */
    ck_assert_double_ne(base.rp.belt_speed_max, 0.3);
    ck_assert_double_eq(sc.rp.belt_accel_max, base.rp.belt_accel_max);
    ck_assert_double_eq(sc.rp.track_mu2, base.rp.track_mu2);
    ck_assert_double_eq(sc.rp.base_mass, base.rp.base_mass);
    kn_scenario_free(&sc);
    /* a variant's changes merge over the file's */
    ck_assert_msg(kn_scenario_load(p, 1, &sc, err, sizeof err) == 0, "%s", err);
    ck_assert_double_eq(sc.rp.belt_speed_max, 0.3);
    ck_assert_double_eq(sc.rp.track_mu, 0.4);
    kn_scenario_free(&sc);
    kn_scenario_free(&base);
}
END_TEST

START_TEST(robot_changes_refused)
{
    char err[768];
    struct kn_scenario sc;
    const char *p =
        write_tmp("typo.json", changes_scenario("{\"belt\": {\"speed_max\": 0.3}}", NULL));
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "with robot_changes of") && strstr(err, "belt: unknown key "
                                                                      "\"speed_max\""),
                  "%s", err);
    p = write_tmp("top.json", changes_scenario("{\"wheels\": 6}", NULL));
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "unknown key \"wheels\""), "%s", err);
    p = write_tmp("range.json", changes_scenario("{\"friction\": {\"track_mu\": 50}}", NULL));
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "track_mu"), "%s", err);
    p = write_tmp("notobj.json", changes_scenario("[1]", NULL));
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "\"robot_changes\" must be an object"), "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("terrain families, robot_changes");
    TCase *tc = tcase_create("families");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, same_seed_same_parts);
    tcase_add_test(tc, known_draws);
    tcase_add_test(tc, parts_in_the_lane);
    tcase_add_test(tc, bad_keys_refused);
    tcase_add_test(tc, scenario_on_each_family);
    tcase_add_test(tc, robot_changes_applied);
    tcase_add_test(tc, robot_changes_refused);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
