/* Unit tests of the engine's world API and file readers: sign conventions
 * (flipper angles, attitude, belts), sensors at rest and while driving, the
 * battery model, several robots in one world, reset replays, bad ids and
 * commands, and clear errors for broken robot, terrain and scenario files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness_suite.h"
#include "params.h"
#include "scenario.h"
#include "terrain.h"
#include "world.h"

#ifndef KN_TEST_CONFIG_DIR
#error "KN_TEST_CONFIG_DIR must name the config directory"
#endif

static struct kn_robot_params rp;

static void load_robot(void)
{
    char err[512];
    ck_assert_msg(
        kn_robotfile_load(KN_TEST_CONFIG_DIR "/robots/kenaf.json", &rp, err, sizeof err) == 0, "%s",
        err);
}

static struct kn_world *flat_world(struct kn_physics_params *pp_out)
{
    struct kn_physics_params pp;
    kn_physics_defaults(&pp);
    if (pp_out)
        *pp_out = pp;
    struct kn_world *w = kn_world_create(&pp);
    ck_assert_ptr_nonnull(w);
    struct kn_terrain t;
    memset(&t, 0, sizeof t);
    t.type = KN_TERRAIN_FLAT;
    char err[128];
    ck_assert_int_eq(kn_terrain_build(&t, err, sizeof err), 0);
    ck_assert_int_eq(kn_world_set_terrain(w, &t), 0);
    return w;
}

static int spawn_at(struct kn_world *w, double x, double y, double yaw)
{
    struct kn_pose p = { x, y, NAN, 0, 0, yaw };
    int id = kn_world_spawn(w, &rp, &p, NULL);
    ck_assert_int_ge(id, 0);
    return id;
}

static char tmpdir[] = "/tmp/kn-engine-test-XXXXXX";

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(robot_file_values)
{
    ck_assert_str_eq(rp.name, "kenaf");
    ck_assert_double_eq_tol(rp.base_mass + 4 * rp.flipper_mass, 20.0, 1e-9);
    ck_assert_double_eq_tol(rp.cog_z, -0.05, 1e-12);
    ck_assert_double_eq_tol(rp.flipper_limit, 119.5 * M_PI / 180, 1e-12);
    ck_assert_double_eq_tol(rp.flipper_length + rp.flipper_tip_radius, 0.235, 1e-12);
    ck_assert_double_eq_tol(kn_world_track_separation(&rp), 0.23, 1e-12);
    ck_assert_double_eq_tol(rp.batt_full_v, 25.2, 1e-12);
}
END_TEST

START_TEST(robot_file_errors)
{
    char err[512];
    struct kn_robot_params r;
    ck_assert_int_eq(kn_robotfile_load("/nonexistent/kenaf.json", &r, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/kenaf.json"));
    ck_assert_int_eq(kn_robotfile_parse("{", "x.json", &r, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "x.json"));
    ck_assert_int_eq(kn_robotfile_parse("{\"mass\": {}}", "y.json", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "base_kg") != NULL, "%s", err);
    ck_assert_int_eq(kn_robotfile_parse("{\"masss\": {}}", "z.json", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "unknown key \"masss\"") != NULL, "%s", err);
    /* a complete file with one value out of range */
    char *text = NULL;
    {
        FILE *f = fopen(KN_TEST_CONFIG_DIR "/robots/kenaf.json", "r");
        ck_assert_ptr_nonnull(f);
        static char buf[16384];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        text = buf;
    }
    char *p = strstr(text, "\"base_kg\": 17.6");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "\"base_kg\": -1.0", 15);
    ck_assert_int_eq(kn_robotfile_parse(text, "k.json", &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "base_kg") && strstr(err, "mass"), "%s", err);
}
END_TEST

START_TEST(terrain_file_errors)
{
    char err[512];
    struct kn_terrain t;
    const char *p = write_tmp("t1.json", "{\"type\": \"lava\"}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "\"type\" must be one of"), "%s", err);
    p = write_tmp("t2.json", "{\"type\": \"step\", \"height\": \"tall\"}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "height"), "%s", err);
    p = write_tmp("t3.json", "{\"type\": \"heightfield\", \"file\": \"missing.hf\"}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "missing.hf"), "%s", err);
    write_tmp("ragged.hf", "0 0 0\n0 0\n");
    p = write_tmp("t4.json", "{\"type\": \"heightfield\", \"file\": \"ragged.hf\"}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "ragged.hf:2"), "%s", err);
    write_tmp("nan.hf", "0 0\n0 nan\n");
    p = write_tmp("t5.json", "{\"type\": \"heightfield\", \"file\": \"nan.hf\"}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "nan.hf:2"), "%s", err);
    p = write_tmp("t6.json", "{\"type\": \"stairs\", \"count\": 2.5}");
    ck_assert_int_eq(kn_terrain_load(p, NULL, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "count"), "%s", err);
}
END_TEST

/* A heightfield's samples in the terrain object: the same terrain as its
 * file; spec text that carries them reads back without the file (a daemon
 * on another host than its engine), a bigger one keeps the file's path;
 * bad samples are refused with the row named. */
START_TEST(terrain_inline_samples)
{
    char err[512], path[512];
    struct kn_terrain a, b, c;
    snprintf(path, sizeof path, "%s/terrains/bumps.json", KN_TEST_CONFIG_DIR);
    ck_assert_msg(kn_terrain_load(path, NULL, &a, err, sizeof err) == 0, "%s", err);
    cJSON *spec = kn_terrain_spec(path, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(spec);
    char *text = kn_terrain_spec_text(spec, &a);
    cJSON_Delete(spec);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_null(strstr(text, "\"file\""));
    cJSON *back = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(back);
    /* read from nowhere: no file beside it to find */
    ck_assert_msg(kn_terrain_from_json(back, "/nonexistent/t.json", &b, err, sizeof err) == 0, "%s",
                  err);
    cJSON_Delete(back);
    ck_assert_int_eq(b.hf_nx, a.hf_nx);
    ck_assert_int_eq(b.hf_ny, a.hf_ny);
    ck_assert_mem_eq(b.hf, a.hf, (size_t)a.hf_nx * (size_t)a.hf_ny * sizeof *a.hf);
    ck_assert_int_eq(b.nparts, a.nparts);
    kn_terrain_free(&b);

    /* more samples than go inline: the file's absolute path */
    struct kn_terrain big = a;
    big.hf_nx = KN_TERRAIN_INLINE_MAX + 1;
    big.hf_ny = 1;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "heightfield");
    cJSON_AddStringToObject(o, "file", "bumps.hf");
    text = kn_terrain_spec_text(o, &big);
    cJSON_Delete(o);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\"file\":\"/") && !strstr(text, "samples"), "%s", text);
    free(text);
    kn_terrain_free(&a);

    static const char *const bad[][2] = {
        { "{\"type\":\"heightfield\"}", "\"file\" or \"samples\"" },
        { "{\"type\":\"heightfield\",\"file\":\"x.hf\",\"samples\":[[0,0],[0,0]]}",
          "\"file\" or \"samples\"" },
        { "{\"type\":\"heightfield\",\"samples\":[[0,0]]}", "2..4096 rows" },
        { "{\"type\":\"heightfield\",\"samples\":[[0,0],[0]]}", "row 2" },
        { "{\"type\":\"heightfield\",\"samples\":[[0,0],[0,\"x\"]]}", "row 2" },
        { "{\"type\":\"heightfield\",\"samples\":[[0,0],[0,1000]]}", "row 2" },
        { "{\"type\":\"heightfield\",\"samples\":{\"a\":1}}", "2..4096 rows" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *j = cJSON_Parse(bad[i][0]);
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(kn_terrain_from_json(j, "t.json", &c, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
        cJSON_Delete(j);
    }
    /* a good one builds */
    cJSON *j = cJSON_Parse("{\"type\":\"heightfield\",\"samples\":[[0,0.1],[0.2,0.3]]}");
    ck_assert_msg(kn_terrain_from_json(j, "t.json", &c, err, sizeof err) == 0, "%s", err);
    cJSON_Delete(j);
    ck_assert_int_eq(c.hf_nx, 2);
    ck_assert_double_eq(c.hf[3], 0.3);
    kn_terrain_free(&c);
}
END_TEST

START_TEST(terrain_shipped_files)
{
    static const char *const names[] = { "flat",   "step",  "trench", "stairs",    "ramp",
                                         "pallet", "bumps", "rough",  "stepfield", "rubble" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512], err[512];
        snprintf(path, sizeof path, "%s/terrains/%s.json", KN_TEST_CONFIG_DIR, names[i]);
        struct kn_terrain t;
        ck_assert_msg(kn_terrain_load(path, NULL, &t, err, sizeof err) == 0, "%s", err);
        ck_assert_int_gt(t.nparts, 0);
        /* every terrain has ground under the start area */
        struct kn_physics_params pp;
        kn_physics_defaults(&pp);
        struct kn_world *w = kn_world_create(&pp);
        ck_assert_int_eq(kn_world_set_terrain(w, &t), 0);
        double g = kn_world_ground_z(w, -1.0, 0);
        ck_assert_msg(fabs(g) < 0.05, "%s: ground at x=-1 is %g", names[i], g);
        if (t.type == KN_TERRAIN_STEP)
            ck_assert_double_eq_tol(kn_world_ground_z(w, t.edge_x + 0.5, 0), t.height, 1e-9);
        if (t.type == KN_TERRAIN_TRENCH)
            ck_assert_double_eq_tol(kn_world_ground_z(w, t.edge_x + 0.5 * t.width, 0), -t.depth,
                                    1e-9);
        if (t.type == KN_TERRAIN_STAIRS)
            ck_assert_double_eq_tol(kn_world_ground_z(w, t.edge_x + 0.5 * t.run, 0), t.rise, 1e-9);
        if (t.type == KN_TERRAIN_RAMP)
            ck_assert_double_eq_tol(kn_world_ground_z(w, t.edge_x + 1.0, 0), tan(t.angle), 1e-6);
        kn_world_destroy(w);
        kn_terrain_free(&t);
    }
}
END_TEST

START_TEST(scenario_file_errors)
{
    char err[768];
    struct kn_scenario sc;
    const char *p = write_tmp("s1.json", "{\"name\": \"x\", \"terrain\": {\"type\": \"flat\"}}");
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    /* the robot file is resolved relative to the scenario: point it at the real one */
    char text[1024];
    snprintf(
        text, sizeof text,
        "{\"name\": \"x\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": {\"type\": "
        "\"flat\"}, \"controller\": {\"type\": \"script\", \"script\": [{\"t\": 1}, {\"t\": 0}]},"
        " \"criterion\": {\"type\": \"straight\"}}",
        KN_TEST_CONFIG_DIR);
    p = write_tmp("s2.json", text);
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "time order"), "%s", err);
    snprintf(text, sizeof text,
             "{\"name\": \"x\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": {\"type\": "
             "\"flat\"}, \"controller\": {\"type\": \"script\", \"script\": []},"
             " \"criterion\": {\"type\": \"straight\", \"tol\": 1}}",
             KN_TEST_CONFIG_DIR);
    p = write_tmp("s3.json", text);
    ck_assert_int_eq(kn_scenario_load(p, 0, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "unknown key \"tol\""), "%s", err);
    ck_assert_int_eq(kn_scenario_load(p, 3, &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no variant 3"), "%s", err);
}
END_TEST

START_TEST(flipper_sign_convention)
{
    /* + raises the tip for all four flippers (KRP/1); order FL, FR, RL, RR */
    struct kn_world *w = flat_world(NULL);
    int id = spawn_at(w, 0, 0, 0.3);
    kn_world_step(w, 300);
    struct kn_outline o0, o1;
    kn_world_outline(w, id, &o0);
    double f[4] = { 0.5, 0.5, 0.5, 0.5 };
    ck_assert_int_eq(kn_world_set_flippers(w, id, f, 0xF), 0);
    kn_world_step(w, 1500);
    kn_world_outline(w, id, &o1);
    ck_assert_double_gt(o1.tip_front[2], o0.tip_front[2] + 0.08);
    ck_assert_double_gt(o1.tip_rear[2], o0.tip_rear[2] + 0.08);
    struct kn_state s;
    kn_world_state(w, id, &s);
    for (int k = 0; k < 4; k++) {
        ck_assert_double_eq_tol(s.flipper_rad[k], 0.5, 0.01);
        /* holding the flippers up against gravity takes a tip-up torque of
         * about m g (L/2) cos(0.5) */
        double want =
            rp.flipper_mass * 9.81 * 0.5 * (rp.flipper_length + rp.flipper_tip_radius) * cos(0.5);
        ck_assert_double_eq_tol(s.flipper_torque_nm[k], want, 0.1 * want);
    }
    /* mask: only RR moves; limits clamp */
    double g[4] = { -3, -3, -3, -3 };
    kn_world_set_flippers(w, id, g, 1u << KN_RR);
    kn_world_step(w, 3000);
    kn_world_state(w, id, &s);
    ck_assert_double_eq_tol(s.flipper_rad[KN_FL], 0.5, 0.01);
    ck_assert_double_lt(s.flipper_rad[KN_RR], 0.0);
    ck_assert_double_ge(s.flipper_rad[KN_RR], -rp.flipper_limit - 0.02);
    kn_world_destroy(w);
}
END_TEST

START_TEST(sensors_at_rest)
{
    struct kn_world *w = flat_world(NULL);
    struct kn_pose p = { 1.0, -2.0, NAN, 0, 0, 0.7 };
    int id = kn_world_spawn(w, &rp, &p, NULL);
    kn_world_step(w, 1000);
    struct kn_state s;
    ck_assert_int_eq(kn_world_state(w, id, &s), 0);
    ck_assert_uint_eq(s.have & 0x3FF, 0x3FF);
    ck_assert_double_eq_tol(s.time_s, 1.0, 1e-9);
    ck_assert_double_eq_tol(s.pos_m[0], 1.0, 1e-3);
    ck_assert_double_eq_tol(s.pos_m[1], -2.0, 1e-3);
    ck_assert_double_eq_tol(s.pos_m[2], rp.track_radius, 2e-3);
    ck_assert_double_eq_tol(s.rpy_rad[2], 0.7, 1e-4);
    ck_assert_double_eq_tol(s.rpy_rad[0], 0, 1e-4);
    ck_assert_double_eq_tol(s.rpy_rad[1], 0, 1e-4);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(s.rate_rad_s[i], 0, 1e-3);
    ck_assert_double_eq_tol(s.accel_m_s2[0], 0, 0.05);
    ck_assert_double_eq_tol(s.accel_m_s2[1], 0, 0.05);
    ck_assert_double_eq_tol(s.accel_m_s2[2], 9.81, 0.05);
    ck_assert_double_eq_tol(s.belt_pos_m[0], 0, 1e-12);
    /* at rest the servos still hold the flippers level: their torque draws current */
    double tq = 0;
    for (int k = 0; k < 4; k++)
        tq += fabs(s.flipper_torque_nm[k]);
    ck_assert_double_gt(tq, 1.0);
    double amps = rp.batt_idle_a + rp.batt_flipper_a_per_nm * tq;
    ck_assert_double_eq_tol(s.battery_v, rp.batt_full_v - rp.batt_r_ohm * amps, 0.005);
    kn_world_destroy(w);
}
END_TEST

START_TEST(attitude_convention)
{
    /* pitch + lowers the nose, roll + lifts the left side (KRP/1) */
    struct kn_world *w = flat_world(NULL);
    struct kn_pose p = { 0, 0, 1.0, 0.1, 0.2, -0.4 };
    int id = kn_world_spawn(w, &rp, &p, NULL);
    struct kn_state s;
    kn_world_state(w, id, &s);
    ck_assert_double_eq_tol(s.rpy_rad[0], 0.1, 1e-9);
    ck_assert_double_eq_tol(s.rpy_rad[1], 0.2, 1e-9);
    ck_assert_double_eq_tol(s.rpy_rad[2], -0.4, 1e-9);
    struct kn_outline o;
    kn_world_outline(w, id, &o);
    ck_assert_double_lt(o.main_front[2], o.main_rear[2]);
    /* free fall: the accelerometer reads about zero */
    kn_world_step(w, 20);
    kn_world_state(w, id, &s);
    ck_assert_double_eq_tol(s.accel_m_s2[2], 0, 0.05);
    kn_world_destroy(w);
}
END_TEST

START_TEST(belts_and_battery)
{
    struct kn_world *w = flat_world(NULL);
    int id = spawn_at(w, 0, 0, 0);
    kn_world_step(w, 200);
    struct kn_state s0, s1;
    kn_world_state(w, id, &s0);
    ck_assert_int_eq(kn_world_set_belts(w, id, 0.3, 0.3), 0);
    kn_world_step(w, 2000);
    kn_world_state(w, id, &s1);
    ck_assert_double_eq_tol(s1.belt_speed_m_s[0], 0.3, 1e-9);
    /* encoder: 2 s at 0.3 m/s minus the spin-up ramp (0.3 / 2 m/s^2) / 2 */
    double travel = 0.3 * 2.0 - 0.3 * 0.3 / (2 * rp.belt_accel_max);
    ck_assert_double_eq_tol(s1.belt_pos_m[0], travel, 2e-3);
    ck_assert_double_eq_tol(s1.pos_m[0] - s0.pos_m[0], travel, 0.01);
    ck_assert_double_lt(s1.battery_v, s0.battery_v - 0.1);
    ck_assert_double_eq_tol(s1.rate_rad_s[2], 0, 1e-3);
    /* clamped to the maximum belt speed; non-finite rejected */
    kn_world_set_belts(w, id, 5, -5);
    kn_world_step(w, 1500);
    kn_world_state(w, id, &s1);
    ck_assert_double_eq_tol(s1.belt_speed_m_s[0], rp.belt_speed_max, 1e-9);
    ck_assert_double_eq_tol(s1.belt_speed_m_s[1], -rp.belt_speed_max, 1e-9);
    /* left forward, right back: turns right (clockwise, yaw rate < 0) */
    ck_assert_double_lt(s1.rate_rad_s[2], -1.0);
    ck_assert_int_eq(kn_world_set_belts(w, id, NAN, 0), -1);
    double bad[4] = { INFINITY, 0, 0, 0 };
    ck_assert_int_eq(kn_world_set_flippers(w, id, bad, 1), -1);
    kn_world_destroy(w);
}
END_TEST

START_TEST(turn_direction)
{
    /* right belt faster: yaw grows (turns left, counter-clockwise) */
    struct kn_world *w = flat_world(NULL);
    int id = spawn_at(w, 0, 0, 0);
    kn_world_set_belts(w, id, 0.1, 0.3);
    kn_world_step(w, 1000);
    struct kn_state s;
    kn_world_state(w, id, &s);
    ck_assert_double_gt(s.rpy_rad[2], 0.2);
    ck_assert_double_gt(s.rate_rad_s[2], 0.2);
    ck_assert_double_gt(s.pos_m[1], 0.0);
    kn_world_destroy(w);
}
END_TEST

START_TEST(bad_ids_and_limits)
{
    struct kn_world *w = flat_world(NULL);
    struct kn_state s;
    struct kn_truth t;
    ck_assert_int_eq(kn_world_state(w, 0, &s), -1);
    ck_assert_int_eq(kn_world_truth(w, -1, &t), -1);
    ck_assert_int_eq(kn_world_set_belts(w, 99, 0, 0), -1);
    ck_assert_int_eq(kn_world_remove(w, 3), -1);
    struct kn_pose bad = { NAN, 0, 0, 0, 0, 0 };
    ck_assert_int_eq(kn_world_spawn(w, &rp, &bad, NULL), -1);
    /* the world has no cap of its own: its storage grows past every
     * doubling (the server's cap is KN_ENGINE_MAX_ROBOTS) */
    enum { MANY = 70 };
    for (int i = 0; i < MANY; i++)
        ck_assert_int_eq(spawn_at(w, 2.0 * (i % 10), 2.0 * (i / 10), 0), i);
    struct kn_pose p = { 50, 0, NAN, 0, 0, 0 };
    ck_assert_int_eq(kn_world_spawn(w, &rp, &p, NULL), MANY);
    ck_assert_int_eq(kn_world_remove(w, MANY), 0);
    ck_assert_int_eq(kn_world_remove(w, 5), 0);
    ck_assert_int_eq(kn_world_robot_valid(w, 5), 0);
    ck_assert_int_eq(kn_world_state(w, 5, &s), -1);
    ck_assert_int_eq(kn_world_spawn(w, &rp, &p, NULL), 5);
    kn_world_step(w, 10);
    kn_world_destroy(w);
}
END_TEST

START_TEST(two_robots)
{
    /* two robots drive independently; a third is pushed by a fourth */
    struct kn_world *w = flat_world(NULL);
    int a = spawn_at(w, 0, 0, 0), b = spawn_at(w, 0, 2, M_PI / 2);
    /* clear of each other at the start: 2.4 m put the level flippers 0.3 m
     * into each other, and what came of that depended on the contact model */
    int c = spawn_at(w, 3, 0, 0), d = spawn_at(w, 2.0, 0, 0);
    kn_world_set_belts(w, a, 0.3, 0.3);
    kn_world_set_belts(w, b, -0.2, -0.2);
    kn_world_set_belts(w, d, 0.3, 0.3);
    kn_world_step(w, 3000);
    struct kn_state sa, sb, sc, sd;
    kn_world_state(w, a, &sa);
    kn_world_state(w, b, &sb);
    kn_world_state(w, c, &sc);
    kn_world_state(w, d, &sd);
    ck_assert_double_eq_tol(sa.pos_m[0], 0.9 - 0.0225, 0.01);
    ck_assert_double_eq_tol(sb.pos_m[1], 2 - 0.6 + 0.01, 0.01);
    ck_assert_double_eq_tol(sb.pos_m[0], 0, 0.01);
    /* d ran into c (1 m ahead, 0.89 m from flipper tip to tip) and pushed it */
    ck_assert_double_gt(sc.pos_m[0], 3.1);
    ck_assert_double_gt(sc.pos_m[0] - sd.pos_m[0], 0.45);
    kn_world_destroy(w);
}
END_TEST

START_TEST(reset_replays)
{
    struct kn_world *w = flat_world(NULL);
    int id = spawn_at(w, 0, 0, 0.2);
    kn_world_set_belts(w, id, 0.2, 0.3);
    double f[4] = { 0.6, 0.6, -0.3, -0.3 };
    kn_world_set_flippers(w, id, f, 0xF);
    kn_world_step(w, 1500);
    uint64_t h1 = kn_world_hash(w);
    struct kn_state s1;
    kn_world_state(w, id, &s1);
    ck_assert_int_eq(kn_world_reset(w), 0);
    ck_assert_double_eq(kn_world_time(w), 0);
    struct kn_state s0;
    kn_world_state(w, id, &s0);
    ck_assert_double_eq(s0.belt_pos_m[0], 0);
    kn_world_set_belts(w, id, 0.2, 0.3);
    kn_world_set_flippers(w, id, f, 0xF);
    kn_world_step(w, 1500);
    ck_assert_uint_eq(kn_world_hash(w), h1);
    struct kn_state s2;
    kn_world_state(w, id, &s2);
    ck_assert(memcmp(s1.pos_m, s2.pos_m, sizeof s1.pos_m) == 0);
    ck_assert_double_ne(s1.pos_m[0], s0.pos_m[0]);
    kn_world_destroy(w);
}
END_TEST

START_TEST(twist_mapping)
{
    struct kn_world *w = flat_world(NULL);
    int id = spawn_at(w, 0, 0, 0);
    kn_world_set_twist(w, id, 0.2, 0.5);
    struct kn_truth t;
    kn_world_truth(w, id, &t);
    double half = 0.5 * kn_world_track_separation(&rp) / (2 * kn_world_chi(&rp, KN_FDIR_AXLE));
    ck_assert_double_eq_tol(t.belt_cmd[0], 0.2 - half, 1e-12);
    ck_assert_double_eq_tol(t.belt_cmd[1], 0.2 + half, 1e-12);
    kn_world_destroy(w);
}
END_TEST

static void setup(void)
{
    load_robot();
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("engine-world");
    TCase *tc = tcase_create("world");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, robot_file_values);
    tcase_add_test(tc, robot_file_errors);
    tcase_add_test(tc, terrain_file_errors);
    tcase_add_test(tc, terrain_inline_samples);
    tcase_add_test(tc, terrain_shipped_files);
    tcase_add_test(tc, scenario_file_errors);
    tcase_add_test(tc, flipper_sign_convention);
    tcase_add_test(tc, sensors_at_rest);
    tcase_add_test(tc, attitude_convention);
    tcase_add_test(tc, belts_and_battery);
    tcase_add_test(tc, turn_direction);
    tcase_add_test(tc, bad_ids_and_limits);
    tcase_add_test(tc, two_robots);
    tcase_add_test(tc, reset_replays);
    tcase_add_test(tc, twist_mapping);
    suite_add_tcase(s, tc);
    int rc = h_run_suite(s);
    /* the test cases ran in forked children: remove whatever any of them wrote */
    static const char *const all[] = { "t1.json", "t2.json", "t3.json",   "t4.json",
                                       "t5.json", "t6.json", "ragged.hf", "nan.hf",
                                       "s1.json", "s2.json", "s3.json" };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", tmpdir, all[i]);
        unlink(path);
    }
    if (rmdir(tmpdir) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return rc;
}
