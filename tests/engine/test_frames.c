/* Frame invariance of whole scenarios: every variant of one scenario file
 * (argv[1]) is run as written and again in a world mirrored across its x-z
 * plane and then turned by 137.5 deg and moved by (5, -3) m (terrain,
 * start pose and commands alike). The outcome must be the same: controllers
 * and criteria refer to the obstacle's own frame, and the physics does not
 * prefer a direction or a side. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness_suite.h"
#include "scenario.h"
#include "terrain.h"

static const char *g_path;

static const double TURN = 137.5 * M_PI / 180, SHIFT[2] = { 5.0, -3.0 };

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* a pose (x, y, yaw) mirrored (y -> -y) and then turned and moved */
static void move_pose(double *x, double *y, double *yaw)
{
    double my = -*y, c = cos(TURN), s = sin(TURN);
    double nx = c * *x - s * my + SHIFT[0], ny = s * *x + c * my + SHIFT[1];
    *x = nx;
    *y = ny;
    *yaw = -*yaw + TURN;
}

static void transform(struct kn_scenario *sc)
{
    kn_terrain_mirror_y(&sc->terrain);
    move_pose(&sc->terrain.pose[0], &sc->terrain.pose[1], &sc->terrain.pose[2]);
    move_pose(&sc->start.x, &sc->start.y, &sc->start.yaw);
    sc->start.roll = -sc->start.roll;
    swap(&sc->start_flip[KN_FL], &sc->start_flip[KN_FR]);
    swap(&sc->start_flip[KN_RL], &sc->start_flip[KN_RR]);
    for (int i = 0; i < sc->nscript; i++) {
        struct kn_script_step *st = &sc->script[i];
        swap(&st->belts[0], &st->belts[1]);
        st->omega = -st->omega;
        swap(&st->flip[KN_FL], &st->flip[KN_FR]);
        swap(&st->flip[KN_RL], &st->flip[KN_RR]);
        unsigned m = st->flip_mask, l = (1u << KN_FL) | (1u << KN_RL);
        st->flip_mask = ((m & l) << 1) | ((m >> 1) & l);
    }
    /* criteria work in the terrain frame; only a side target mirrors */
    sc->crit.target[1] = -sc->crit.target[1];
}

START_TEST(rotated_mirrored)
{
    char err[768];
    int n = kn_scenario_count(g_path, err, sizeof err);
    ck_assert_msg(n >= 1, "%s", err);
    for (int v = 0; v < n; v++) {
        struct kn_scenario sc, mv;
        ck_assert_msg(kn_scenario_load(g_path, v, &sc, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(kn_scenario_load(g_path, v, &mv, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(mv.terrain.pose[2] == 0 && mv.terrain.pose[0] == 0 && mv.terrain.pose[1] == 0,
                      "%s: a terrain with its own pose is not covered here", g_path);
        transform(&mv);
        struct kn_result a, b;
        ck_assert_int_eq(kn_scenario_run(&sc, 0, &a), 0);
        ck_assert_int_eq(kn_scenario_run(&mv, 0, &b), 0);
        printf("%s[%d]: as written %s (%s)\n    mirrored, turned, moved %s (%s)\n", sc.name, v,
               a.passed ? "pass" : "fail", a.why, b.passed ? "pass" : "fail", b.why);
        fflush(stdout);
        ck_assert_msg(a.passed == b.passed, "%s[%d]: outcome changes with the world frame", sc.name,
                      v);
        kn_result_free(&a);
        kn_result_free(&b);
        kn_scenario_free(&sc);
        kn_scenario_free(&mv);
    }
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO.json\n", argv[0]);
        return 2;
    }
    g_path = argv[1];
    Suite *s = suite_create("engine-frames");
    TCase *tc = tcase_create("frames");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, rotated_mirrored);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
