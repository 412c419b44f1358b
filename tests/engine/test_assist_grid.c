/* The flipper assist's acceptance grid (common/assist.h, docs/engine.md,
 * "The flipper assist"): the step scenario of argv[1] (its first variant
 * as the template) run at every height from 100 to 400 mm in 10 mm steps,
 * engine only and in lockstep (the ODE world stepped directly). The
 * outcome of the cross criterion must never go from fail to pass as the
 * step rises, and must be the same in three world frames (as written;
 * turned 37 deg about z and moved; mirrored), at belts of 0.15, 0.3 and
 * 0.5 m/s, and with each angle parameter of the assist 5 deg up and down,
 * one at a time. Each TCase runs one part of the grid, so meson runs them
 * side by side. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assist.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "scenario.h"
#include "terrain.h"

#define NH 31   /* 100 .. 400 mm */
#define NPART 4 /* the angle parameters in this many cases */

static const char *g_path;
static char g_ref[NH + 1]; /* as written: 'P' pass, '.' fail */

static const double TURN = 37.0 * M_PI / 180, SHIFT[2] = { 4.0, -2.5 };

static void turn_pose(double *x, double *y, double *yaw)
{
    double c = cos(TURN), s = sin(TURN);
    double nx = c * *x - s * *y + SHIFT[0], ny = s * *x + c * *y + SHIFT[1];
    *x = nx;
    *y = ny;
    *yaw += TURN;
}

enum frame { AS_WRITTEN, TURNED, MIRRORED };

/* The outcomes over the heights, with one change: frame, belt speed (0:
 * the file's), parameter i moved by delta degrees (i < 0: none). */
static void grid(enum frame fr, double belt, int pi, double delta, char out[NH + 1])
{
    char err[768];
    for (int h = 0; h < NH; h++) {
        struct kn_scenario sc;
        ck_assert_msg(kn_scenario_load(g_path, 0, &sc, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(sc.ctrl, KN_CTRL_ASSIST);
        sc.terrain.height = 0.1 + 0.01 * h;
        ck_assert_msg(kn_terrain_build(&sc.terrain, err, sizeof err) == 0, "%s", err);
        /* the criterion's upper level is the step's new top */
        ck_assert(sc.crit.on_top);
        sc.crit.level_z = sc.terrain.top_z;
        if (fr == TURNED) {
            turn_pose(&sc.terrain.pose[0], &sc.terrain.pose[1], &sc.terrain.pose[2]);
            turn_pose(&sc.start.x, &sc.start.y, &sc.start.yaw);
        } else if (fr == MIRRORED) {
            kn_terrain_mirror_y(&sc.terrain);
            sc.start.y = -sc.start.y;
            sc.start.yaw = -sc.start.yaw;
            sc.start.roll = -sc.start.roll;
        }
        if (belt > 0)
            sc.a_belt = belt;
        if (pi >= 0)
            *kn_assist_param(&sc.assist, pi) += delta;
        struct kn_result r;
        ck_assert_int_eq(kn_scenario_run(&sc, 0, &r), 0);
        out[h] = r.passed ? 'P' : '.';
        kn_result_free(&r);
        kn_scenario_free(&sc);
    }
    out[NH] = 0;
}

/* Highest height climbed before the first failure [mm]; 0 when none. */
static int boundary(const char *g)
{
    int b = 0;
    for (int h = 0; h < NH && g[h] == 'P'; h++)
        b = 100 + 10 * h;
    return b;
}

/* Prints one grid and says what is wrong with it (0: nothing): not
 * monotone, or not the one as written. Every grid of a case is printed
 * before the case fails. */
static int check_grid(const char *label, const char *g)
{
    const char *f = strchr(g, '.');
    int monotone = !f || !strchr(f, 'P'), same = strcmp(g, g_ref) == 0;
    printf("%-26s %s  climbs <= %d mm%s%s\n", label, g, boundary(g),
           monotone ? "" : "  NOT MONOTONE", same ? "" : "  DIFFERS");
    fflush(stdout);
    return !monotone || !same;
}

static void reference(void)
{
    if (!g_ref[0])
        grid(AS_WRITTEN, 0, -1, 0, g_ref);
}

START_TEST(frames)
{
    reference();
    char g[NH + 1];
    int bad = check_grid("as-written", g_ref);
    grid(TURNED, 0, -1, 0, g);
    bad += check_grid("turned", g);
    grid(MIRRORED, 0, -1, 0, g);
    bad += check_grid("mirrored", g);
    ck_assert_msg(bad == 0, "%d grids not monotone or not as written (above)", bad);
}
END_TEST

START_TEST(speeds)
{
    reference();
    static const double v[] = { 0.15, 0.3, 0.5 };
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        char g[NH + 1], what[64];
        grid(AS_WRITTEN, v[i], -1, 0, g);
        snprintf(what, sizeof what, "belts=%.2f", v[i]);
        bad += check_grid(what, g);
    }
    ck_assert_msg(bad == 0, "%d grids not monotone or not as written (above)", bad);
}
END_TEST

/* _i: the quarter of the angle parameters this case covers, so the four
 * run side by side */
START_TEST(angles)
{
    reference();
    int k = 0, bad = 0;
    for (int i = 0; i < kn_assist_param_count; i++) {
        if (strcmp(kn_assist_param_table[i].unit, "deg") != 0)
            continue;
        if (k++ % NPART != _i)
            continue;
        for (int s = -1; s <= 1; s += 2) {
            char g[NH + 1], what[64];
            grid(AS_WRITTEN, 0, i, 5.0 * s, g);
            snprintf(what, sizeof what, "%s%+d", kn_assist_param_table[i].name, 5 * s);
            bad += check_grid(what, g);
        }
    }
    ck_assert_msg(bad == 0, "%d grids not monotone or not as written (above)", bad);
}
END_TEST

/* The controller alone on made-up readings: its table, and each phase
 * reached by what a STATUS would say. */
START_TEST(unit_phases)
{
    struct kn_assist_params p;
    char err[256];
    kn_assist_defaults(&p);
    ck_assert_int_eq(kn_assist_check(&p, err, sizeof err), 0);
    p.rear_world_deg = NAN;
    ck_assert_int_eq(kn_assist_check(&p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rear_world_deg"), "%s", err);
    kn_assist_defaults(&p);
    struct kn_assist a;
    struct kn_assist_output out;
    struct kn_assist_input in;
    memset(&in, 0, sizeof in);
    in.has_torque = 1;
    in.travelled_m = 0;
    kn_assist_init(&a, &p);
    kn_assist_update(&a, &in, &out);
    const double d = M_PI / 180;
    ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_FL], p.approach_deg * d, 1e-9);
    ck_assert(isinf(out.belt_limit_m_s));
    in.dt_s = 0.02;
    /* the front flippers pushed back by a step's face: contact */
    in.flip_rad[KN_ASSIST_FL] = in.flip_rad[KN_ASSIST_FR] = p.approach_deg * d;
    in.torque_nm[KN_ASSIST_FL] = -(p.contact_torque_nm + 1);
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_PRESS);
    ck_assert(out.phase_changed);
    ck_assert_double_eq_tol(out.belt_limit_m_s, p.hold_belt_m_s, 1e-9);
    /* no torque: the set-point goes down, towards the top */
    in.torque_nm[KN_ASSIST_FL] = 0;
    kn_assist_update(&a, &in, &out);
    ck_assert_double_lt(out.flip_rad[KN_ASSIST_FL], p.approach_deg * d);
    /* the nose up: the rear flippers push, at their angle in the world */
    in.pitch_rad = -(p.rear_pitch_deg + 1) * d;
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_RL],
                            (p.rear_world_deg + p.rear_pitch_deg + 1) * d, 1e-9);
    ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_RR], out.flip_rad[KN_ASSIST_RL], 1e-12);
    /* the nose down before the rear push is done: still lifting */
    in.pitch_rad = 0;
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    /* and the edge is crossed at the climb speed, whatever the operator's */
    ck_assert_double_eq_tol(out.belt_m_s, p.climb_belt_m_s, 1e-9);
    /* the push done (the world angle at this pitch), the nose up and then
     * down past the edge: level */
    in.flip_rad[KN_ASSIST_RL] = in.flip_rad[KN_ASSIST_RR] = (p.rear_world_deg + 30) * d;
    in.pitch_rad = -30 * d;
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_RL], (p.rear_world_deg + 30) * d, 1e-9);
    in.pitch_rad = -(30 - p.level_drop_deg - 1) * d;
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LEVEL);
    for (int k = 0; k < KN_ASSIST_NFLIP; k++)
        ck_assert_double_eq_tol(out.flip_rad[k], p.level_deg * d, 1e-9);
    ck_assert(isnan(out.belt_m_s));
}
END_TEST

/* A fresh assist on level readings (no climb speed yet), then a front
 * flipper pushed down past contact_torque: pressing. */
static void pressed(struct kn_assist *a, const struct kn_assist_params *p,
                    struct kn_assist_input *in, struct kn_assist_output *out, double dt_s)
{
    memset(in, 0, sizeof *in);
    in->has_torque = 1;
    kn_assist_init(a, p);
    kn_assist_update(a, in, out);
    ck_assert(isnan(out->belt_m_s));
    in->dt_s = dt_s;
    in->torque_nm[KN_ASSIST_FL] = -(p->contact_torque_nm + 1);
    kn_assist_update(a, in, out);
    ck_assert_int_eq(a->phase, KN_ASSIST_PRESS);
}

/* On a low step the robot is on the top before the nose comes down from
 * any peak: a nose that holds still, low, after the rear push ends the
 * climb too; one still moving, or still high, does not. */
START_TEST(unit_settles)
{
    const double d = M_PI / 180;
    struct kn_assist_params p;
    kn_assist_defaults(&p);
    struct kn_assist a;
    struct kn_assist_output out;
    struct kn_assist_input in;
    pressed(&a, &p, &in, &out, 0.01);
    in.pitch_rad = -(p.rear_pitch_deg + 1) * d;
    kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    in.flip_rad[KN_ASSIST_RL] = in.flip_rad[KN_ASSIST_RR] =
        (p.rear_world_deg + p.rear_pitch_deg + 1) * d;
    /* high and steady (perched on the edge): not over */
    int n = (int)(2 * p.level_settle_s / in.dt_s);
    for (int i = 0; i < n; i++)
        kn_assist_update(&a, &in, &out);
    ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    /* lower, below rear_pitch_deg though not down level_drop_deg from
     * the peak, and rocking by 2 deg every half second: not yet */
    double low = p.rear_pitch_deg + 2 - p.level_drop_deg;
    ck_assert_double_lt(low + 2, p.rear_pitch_deg);
    for (int i = 0; i < n; i++) {
        in.pitch_rad = -((i / 50) % 2 ? low + 2 : low) * d;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
    }
    /* still for level_settle_s: on the top (1.5 deg from the last rock,
     * so the count starts here) */
    in.pitch_rad = -(low + 0.5) * d;
    int steps = 0;
    while (a.phase == KN_ASSIST_LIFT && steps < 10 * n) {
        kn_assist_update(&a, &in, &out);
        steps++;
    }
    ck_assert_int_eq(a.phase, KN_ASSIST_LEVEL);
    ck_assert_double_eq_tol(steps * in.dt_s, p.level_settle_s, 2 * in.dt_s);
}
END_TEST

/* The step of the file at 150 mm with the rear push 5 deg stronger: the robot
 * got onto the top with the rear flippers hooked behind the edge and the
 * nose level, and stood there until the stall criterion failed it. */
START_TEST(low_step_hooked)
{
    char err[768];
    struct kn_scenario sc;
    ck_assert_msg(kn_scenario_load(g_path, 0, &sc, err, sizeof err) == 0, "%s", err);
    sc.terrain.height = 0.15;
    ck_assert_msg(kn_terrain_build(&sc.terrain, err, sizeof err) == 0, "%s", err);
    sc.crit.level_z = sc.terrain.top_z;
    sc.assist.rear_world_deg -= 5;
    struct kn_result r;
    ck_assert_int_eq(kn_scenario_run(&sc, 0, &r), 0);
    ck_assert_msg(r.passed, "150 mm, rear_world_deg %.0f: %s", sc.assist.rear_world_deg, r.why);
    kn_result_free(&r);
    kn_scenario_free(&sc);
}
END_TEST

/* A step too high: the nose up past abort_pitch before the level. It
 * backs down with the rear flippers in line, whatever the operator
 * commands, and stops once the nose is down; then the assist is done. */
START_TEST(unit_gives_up)
{
    const double d = M_PI / 180;
    for (int from_lift = 0; from_lift < 2; from_lift++) {
        struct kn_assist_params p;
        kn_assist_defaults(&p);
        /* the rear push late, to give up while still pressing */
        if (!from_lift)
            p.rear_pitch_deg = p.abort_pitch_deg + 10;
        struct kn_assist a;
        struct kn_assist_output out;
        struct kn_assist_input in;
        pressed(&a, &p, &in, &out, 0.02);
        if (from_lift) {
            in.pitch_rad = -(p.rear_pitch_deg + 1) * d;
            kn_assist_update(&a, &in, &out);
            ck_assert_int_eq(a.phase, KN_ASSIST_LIFT);
        }
        /* just below: still climbing */
        in.pitch_rad = -(p.abort_pitch_deg - 0.5) * d;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, from_lift ? KN_ASSIST_LIFT : KN_ASSIST_PRESS);
        in.pitch_rad = -(p.abort_pitch_deg + 0.5) * d;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, KN_ASSIST_BACK);
        ck_assert(out.phase_changed);
        ck_assert_double_eq_tol(out.belt_m_s, -p.abort_belt_m_s, 1e-9);
        ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_RL], 0, 1e-9);
        ck_assert_double_eq_tol(out.flip_rad[KN_ASSIST_FL], p.approach_deg * d, 1e-9);
        /* the nose coming down, not yet down: still backing */
        in.pitch_rad = -(p.contact_pitch_deg + 5) * d;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, KN_ASSIST_BACK);
        ck_assert_double_eq_tol(out.belt_m_s, -p.abort_belt_m_s, 1e-9);
        in.pitch_rad = 0;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, KN_ASSIST_GAVE_UP);
        ck_assert(isnan(out.belt_m_s));
        ck_assert_double_eq(out.belt_limit_m_s, 0);
        /* done: the nose up again changes nothing */
        in.pitch_rad = -60 * d;
        kn_assist_update(&a, &in, &out);
        ck_assert_int_eq(a.phase, KN_ASSIST_GAVE_UP);
        ck_assert_str_eq(kn_assist_phase_name(a.phase), "gave up");
    }
}
END_TEST

/* The scenario reader: every parameter by its table name, a value out of
 * its range and an unknown key refused by name (rear_deg: the push's
 * angle to the body before it was a world angle, so an old file does not
 * silently mean another push). */
START_TEST(unit_reader)
{
    static const struct {
        const char *ctl, *want;
    } cases[] = {
        { "\"rear_world_deg\": -60, \"belt_m_s\": 0.2", NULL },
        { "\"rear_world_deg\": -200", "rear_world_deg" },
        { "\"press_torque_nm\": -1", "press_torque_nm" },
        { "\"rear_deg\": -60", "rear_deg" },
    };
    /* the harness's scratch directory, removed after the case */
    h_setup();
    char path[256];
    snprintf(path, sizeof path, "%s", h_path("s.json"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\": \"a\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
                 "{\"type\": \"flat\"}, \"controller\": {\"type\": \"assist\", %s}, "
                 "\"criterion\": {\"type\": \"settle\"}}",
                 KN_TEST_CONFIG_DIR, cases[i].ctl);
        h_write_file(path, text);
        struct kn_scenario sc;
        char err[768] = "";
        int rc = kn_scenario_load(path, 0, &sc, err, sizeof err);
        if (!cases[i].want) {
            ck_assert_msg(rc == 0, "%s", err);
            ck_assert_double_eq(sc.assist.rear_world_deg, -60);
            ck_assert_double_eq(sc.a_belt, 0.2);
            ck_assert_double_eq(sc.assist.approach_deg, kn_assist_param_table[0].def);
            kn_scenario_free(&sc);
        } else {
            ck_assert_int_eq(rc, -1);
            ck_assert_msg(strstr(err, cases[i].want), "%s", err);
        }
    }
    h_teardown();
}
END_TEST

/* docs/engine.md's table of the parameters is the code's: each row as
 * kn_assist_param_table makes it (units with a middle dot for '*'). */
START_TEST(unit_doc_table)
{
    FILE *f = fopen(KN_TEST_CONFIG_DIR "/../docs/engine.md", "r");
    ck_assert_ptr_nonnull(f);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    ck_assert(feof(f));
    fclose(f);
    doc[n] = 0;
    for (int i = 0; i < kn_assist_param_count; i++) {
        const struct kn_assist_param_desc *d = &kn_assist_param_table[i];
        char unit[32] = "", row[512];
        for (const char *c = d->unit; *c; c++)
            strncat(unit, *c == '*' ? "\u00b7" : (char[]){ *c, 0 }, sizeof unit - strlen(unit) - 1);
        snprintf(row, sizeof row, "| `%s` | %g %s | %g \u2026 %g | %s |", d->name, d->def, unit,
                 d->lo, d->hi, d->text);
        ck_assert_msg(strstr(doc, row), "docs/engine.md lacks the row\n%s", row);
    }
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s STEP-SCENARIO.json\n", argv[0]);
        return 2;
    }
    g_path = argv[1];
    Suite *s = suite_create("engine-assist-grid");
    TCase *tf = tcase_create("frames"), *ts = tcase_create("speeds");
    tcase_add_test(tf, frames);
    tcase_add_test(ts, speeds);
    TCase *tu = tcase_create("unit");
    tcase_add_test(tu, unit_phases);
    tcase_add_test(tu, unit_gives_up);
    tcase_add_test(tu, unit_settles);
    tcase_add_test(tu, low_step_hooked);
    tcase_add_test(tu, unit_reader);
    tcase_add_test(tu, unit_doc_table);
    suite_add_tcase(s, tu);
    TCase *all[2 + NPART] = { tf, ts };
    static const char *const names[NPART] = { "angles-0", "angles-1", "angles-2", "angles-3" };
    for (int i = 0; i < NPART; i++) {
        all[2 + i] = tcase_create(names[i]);
        tcase_add_loop_test(all[2 + i], angles, i, i + 1);
    }
    for (int i = 0; i < 2 + NPART; i++) {
        tcase_set_timeout(all[i], 600);
        suite_add_tcase(s, all[i]);
    }
    return h_run_suite(s);
}
