/* The cameras' renderer (cameras/render/) drawing flat ground and one
 * Kenaf: the robot where the bird's-eye camera must see it, the sky above
 * the PTZ camera's horizon, the same picture for the same state, another
 * after the robot moves or the camera pans; and the world description's
 * bad input. Skips (77) when the machine has no EGL display; with
 * --no-egl (meson runs it so with no EGL driver to find) it checks that
 * opening fails with a reason instead. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness_suite.h"
#include "render.h"
#include "render_world.h"

#define W 320
#define H 240

static struct kn_render *R;
static struct kn_rscene S;
static uint8_t A[W * H * 4], B[W * H * 4];
static char err[256];

static void setup(void)
{
    R = kn_render_open(err, sizeof err);
    ck_assert_msg(R != NULL, "kn_render_open: %s", err);
    ck_assert_int_eq(kn_rscene_init(&S), 0);
    ck_assert_int_eq(
        kn_rscene_load(&S, RENDER_WORLD_FLAT, strlen(RENDER_WORLD_FLAT), err, sizeof err), 0);
    struct kn_rscene_robot r = render_world_robot(0, 0, 0);
    ck_assert_int_eq(kn_rscene_robot_set(&S, 0, &r), 0);
}

static void teardown(void)
{
    kn_render_close(R);
    kn_rscene_free(&S);
}

static void shoot(enum kn_rcam_which cam, double pan, uint8_t *out)
{
    struct kn_rcam_shot shot = { .cam = cam, .pan_deg = pan, .zoom = 1, .width = W, .height = H };
    ck_assert_msg(kn_render_shot(R, &S, &shot, out, err, sizeof err) == 0, "shot: %s", err);
}

/* the body colour 0xff6a00 under any of the lights: strong red, green
 * about 0.4 of it, hardly blue (the flippers' 0xffcc00 has 0.8) */
static int is_body(const uint8_t *p)
{
    return p[0] >= 100 && p[1] >= 0.25 * p[0] && p[1] <= 0.6 * p[0] && p[2] <= 0.2 * p[0];
}

/* the share of pixels that differ by more than 16 in some channel */
static double differ(const uint8_t *a, const uint8_t *b)
{
    int n = 0;
    for (int i = 0; i < W * H; i++)
        for (int c = 0; c < 3; c++)
            if (abs(a[4 * i + c] - b[4 * i + c]) > 16) {
                n++;
                break;
            }
    return (double)n / (W * H);
}

START_TEST(bird_sees_robot_lower_middle)
{
    shoot(KN_RCAM_BIRD, 0, A);
    double n = 0, sx = 0, sy = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (is_body(A + 4 * (y * W + x))) {
                n++;
                sx += x;
                sy += y;
            }
    /* the chassis top, 0.4 x 0.16 m between the tracks, fills 2.3 % of
     * the picture from 0.85 m above */
    ck_assert_msg(n > 0.015 * W * H, "body pixels: %.0f of %d", n, W * H);
    ck_assert_msg(fabs(sx / n - 0.5 * W) < 0.1 * W, "body centre x %.1f", sx / n);
    ck_assert_msg(sy / n > 0.55 * H, "body centre y %.1f", sy / n);
    for (int i = 0; i < W * H; i++)
        ck_assert_int_eq(A[4 * i + 3], 255);
}
END_TEST

START_TEST(ptz_sky_on_top_row)
{
    /* the bird's-eye camera looks 60 degrees down: its top row sees the
     * ground 3 m ahead; the PTZ camera, level, has the sky above 23 deg */
    shoot(KN_RCAM_PTZ, 0, A);
    for (int x = 0; x < W; x++) {
        const uint8_t *p = A + 4 * x;
        ck_assert_msg(p[0] == 0xc4 && p[1] == 0xd0 && p[2] == 0xd8, "top row x %d: %02x%02x%02x", x,
                      p[0], p[1], p[2]);
    }
    /* and ground below the horizon: the bottom row is not sky */
    const uint8_t *p = A + 4 * (H - 1) * W + 4 * (W / 2);
    ck_assert(!(p[0] == 0xc4 && p[1] == 0xd0 && p[2] == 0xd8));
}
END_TEST

START_TEST(same_state_same_picture)
{
    shoot(KN_RCAM_BIRD, 0, A);
    /* another shot between the two must leave nothing behind */
    shoot(KN_RCAM_PTZ, 45, B);
    shoot(KN_RCAM_BIRD, 0, B);
    ck_assert(memcmp(A, B, sizeof A) == 0);
    shoot(KN_RCAM_PTZ, 10, A);
    shoot(KN_RCAM_PTZ, 10, B);
    ck_assert(memcmp(A, B, sizeof A) == 0);
}
END_TEST

START_TEST(robot_moves_half_metre)
{
    /* a second robot 2 m ahead stands still while the first moves */
    struct kn_rscene_robot other = render_world_robot(2.0, 0, M_PI),
                           r = render_world_robot(0, 0, 0);
    ck_assert_int_eq(kn_rscene_robot_set(&S, 1, &other), 0);
    shoot(KN_RCAM_BIRD, 0, A);
    r.pos[0] += 0.5;
    ck_assert_int_eq(kn_rscene_robot_set(&S, 0, &r), 0);
    shoot(KN_RCAM_BIRD, 0, B);
    /* 7.2 % here: the grid's lines and the other robot shift */
    double d = differ(A, B);
    ck_assert_msg(d > 0.03, "%.4f of the pixels changed", d);
    /* from the second robot's bird's-eye camera the first one moved */
    shoot(KN_RCAM_BIRD, 0, A);
    struct kn_rcam_shot from_other = { .cam = KN_RCAM_BIRD, .robot = 1, .width = W, .height = H };
    ck_assert_int_eq(kn_render_shot(R, &S, &from_other, A, err, sizeof err), 0);
    r.pos[0] -= 0.5;
    ck_assert_int_eq(kn_rscene_robot_set(&S, 0, &r), 0);
    ck_assert_int_eq(kn_render_shot(R, &S, &from_other, B, err, sizeof err), 0);
    /* 2.0 % here: a robot 2 m away moves 0.5 m */
    d = differ(A, B);
    ck_assert_msg(d > 0.008, "seen from robot 1: %.4f of the pixels changed", d);
}
END_TEST

START_TEST(ptz_pans_30_degrees)
{
    struct kn_rscene_robot other = render_world_robot(2.0, 0, M_PI);
    ck_assert_int_eq(kn_rscene_robot_set(&S, 1, &other), 0);
    shoot(KN_RCAM_PTZ, 0, A);
    shoot(KN_RCAM_PTZ, 30, B);
    /* 14.6 % here: the ground's lines turn, the other robot goes to the edge */
    double d = differ(A, B);
    ck_assert_msg(d > 0.05, "%.4f of the pixels changed", d);
}
END_TEST

/* The robot file's cameras: a wider PTZ lens changes the picture, the
 * mast's height moves the bird's-eye camera, and a file without a PTZ
 * camera has no PTZ shot. */
START_TEST(robot_file_cameras)
{
    struct kn_rscene_robot other = render_world_robot(2.0, 0, M_PI);
    ck_assert_int_eq(kn_rscene_robot_set(&S, 1, &other), 0);
    shoot(KN_RCAM_PTZ, 0, A);
    const char *wide =
        "{\"robot\": {\"cameras\": {\"front\": {\"kind\": \"ptz\", \"x_m\": 0.17, "
        "\"y_m\": 0, \"above_chassis_m\": 0.05, \"hfov_deg\": 100, \"zoom_max\": 10, "
        "\"pan_max_deg\": 170, \"tilt_min_deg\": -60, \"tilt_max_deg\": 60, "
        "\"pan_speed_deg_s\": 90, \"tilt_speed_deg_s\": 60, \"zoom_time_s\": 3}, "
        "\"mast\": {\"kind\": \"fixed\", \"x_m\": -0.17, \"y_m\": 0, \"height_m\": 0.5, "
        "\"tilt_deg\": -60, \"hfov_deg\": 100}}}}";
    ck_assert_int_eq(kn_rscene_load(&S, wide, strlen(wide), err, sizeof err), 0);
    ck_assert_int_eq(S.geom.cams.n, 2);
    ck_assert_str_eq(S.geom.cams.cam[1].name, "mast");
    shoot(KN_RCAM_PTZ, 0, B);
    double d = differ(A, B);
    ck_assert_msg(d > 0.05, "100 deg against 60 deg: %.4f of the pixels changed", d);
    /* the bird's-eye camera half as high: the Kenaf's against the file's */
    ck_assert_int_eq(
        kn_rscene_load(&S, RENDER_WORLD_FLAT, strlen(RENDER_WORLD_FLAT), err, sizeof err), 0);
    shoot(KN_RCAM_BIRD, 0, A);
    ck_assert_int_eq(kn_rscene_load(&S, wide, strlen(wide), err, sizeof err), 0);
    shoot(KN_RCAM_BIRD, 0, B);
    d = differ(A, B);
    ck_assert_msg(d > 0.05, "mast 0.5 m against 1.0 m: %.4f of the pixels changed", d);
    /* only a fixed camera: no PTZ shot; a malformed section: the Kenaf's */
    const char *fixed = "{\"robot\": {\"cameras\": {\"mast\": {\"kind\": \"fixed\", "
                        "\"x_m\": 0, \"y_m\": 0, \"height_m\": 1, \"tilt_deg\": -30, "
                        "\"hfov_deg\": 90}}}}";
    ck_assert_int_eq(kn_rscene_load(&S, fixed, strlen(fixed), err, sizeof err), 0);
    struct kn_rcam_shot shot = { .cam = KN_RCAM_PTZ, .zoom = 1, .width = W, .height = H };
    ck_assert_int_eq(kn_render_shot(R, &S, &shot, A, err, sizeof err), -1);
    const char *bad = "{\"robot\": {\"cameras\": {\"front\": {\"kind\": \"zoom\"}}}}";
    ck_assert_int_eq(kn_rscene_load(&S, bad, strlen(bad), err, sizeof err), 0);
    ck_assert_int_eq(S.geom.cams.n, 2);
    ck_assert_str_eq(S.geom.cams.cam[0].name, "front");
}
END_TEST

START_TEST(terrain_box_seen)
{
    /* a concrete block 1 m ahead, 0.3 m high, across the PTZ camera's view */
    const char *doc = "{\"terrain\": {\"type\": \"step\", \"parts\": [{\"kind\": \"plane\", "
                      "\"c\": [0, 0, 0], \"n\": [0, 0, 1]}, {\"kind\": \"box\", \"c\": [1.5, 0, "
                      "0.15], \"half\": [0.5, 1.5, 0.15]}]}}";
    int before = 0, after = 0;
    for (int round = 0; round < 2; round++) {
        shoot(KN_RCAM_PTZ, 0, A);
        int n = 0;
        for (int i = 0; i < W * H; i++) {
            const uint8_t *p = A + 4 * i;
            /* concrete 0xb4b4ac on the face away from the sun: grey, a
             * little less blue (the ground is greener, the sky bluer) */
            n += p[0] >= 100 && abs(p[0] - p[1]) <= 6 && p[2] < p[0];
        }
        *(round ? &after : &before) = n;
        ck_assert_int_eq(kn_rscene_load(&S, doc, strlen(doc), err, sizeof err), 0);
    }
    ck_assert_int_eq(before, 0);
    ck_assert_msg(after > W * H / 10, "concrete pixels: %d", after);
}
END_TEST

START_TEST(bad_shots_refused)
{
    struct kn_rcam_shot shot = { .cam = KN_RCAM_BIRD, .robot = 3, .width = W, .height = H };
    ck_assert_int_eq(kn_render_shot(R, &S, &shot, A, err, sizeof err), -1);
    ck_assert_str_eq(err, "robot 3 is not in the scene");
    shot.robot = 0;
    shot.width = 0;
    ck_assert_int_eq(kn_render_shot(R, &S, &shot, A, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad shot"));
    shot.width = KN_RENDER_SIZE_MAX + 1;
    ck_assert_int_eq(kn_render_shot(R, &S, &shot, A, err, sizeof err), -1);
}
END_TEST

/* The scene alone: no GL needed. */
START_TEST(world_description_checked)
{
    struct kn_rscene s;
    ck_assert_int_eq(kn_rscene_init(&s), 0);
    unsigned gen = s.generation;
    ck_assert_int_eq(kn_rscene_load(&s, "[1, 2]", 6, err, sizeof err), -1);
    ck_assert_str_eq(err, "world description: not a JSON object");
    ck_assert_int_eq(kn_rscene_load(&s, "{\"robot\": ", 10, err, sizeof err), -1);
    ck_assert_uint_eq(s.generation, gen);
    /* odd values are replaced by the defaults, good ones taken */
    const char *doc = "{\"robot\": {\"main_track\": {\"radius_m\": -1, \"pulley_x_m\": 0.2},"
                      " \"chassis\": {\"size_m\": [0.4, 0.16]}}, \"terrain\": {\"parts\": "
                      "[{\"kind\": \"box\", \"c\": [1, 0, 0.1], \"half\": [0.5, 0.5, 0.1]}, "
                      "{\"kind\": \"plane\", \"c\": [0, 0, 0], \"n\": [0, 0, 1]}]}}";
    ck_assert_int_eq(kn_rscene_load(&s, doc, strlen(doc), err, sizeof err), 0);
    ck_assert_uint_ne(s.generation, gen);
    ck_assert_double_eq(s.geom.r, 0.08);
    ck_assert_double_eq(s.geom.px, 0.2);
    ck_assert_double_eq(s.geom.cs[1], 0.16);
    /* a box (6 faces) and a plane (one square): 36 + 6 vertices */
    ck_assert_uint_eq(kn_rmesh_vertices(&s.terrain), 42);
    /* a part that is not well formed: the ground grid alone */
    const char *bad = "{\"terrain\": {\"parts\": [{\"kind\": \"box\", \"c\": [1, 0]}]}}";
    ck_assert_int_eq(kn_rscene_load(&s, bad, strlen(bad), err, sizeof err), 0);
    ck_assert_uint_eq(kn_rmesh_vertices(&s.terrain), 6);
    /* a heightfield of 3 x 2 samples: 2 cells, 4 triangles, on the plane */
    const char *hf =
        "{\"terrain\": {\"parts\": [{\"kind\": \"plane\", \"c\": [0, 0, 0], "
        "\"n\": [0, 0.6, 0.8]}, {\"kind\": \"heightfield\"}], \"heights\": "
        "{\"nx\": 3, \"ny\": 2, \"dx\": 0.5, \"dy\": 0.5, \"z\": [0, 1, 2, 3, 4, 5]}}}";
    ck_assert_int_eq(kn_rscene_load(&s, hf, strlen(hf), err, sizeof err), 0);
    ck_assert_uint_eq(kn_rmesh_vertices(&s.terrain), 6 + 12);
    /* the tilted plane's normal is the one given */
    ck_assert_double_eq_tol(s.terrain.v[4], 0.6, 1e-6);
    ck_assert_double_eq_tol(s.terrain.v[5], 0.8, 1e-6);
    struct kn_rscene_robot r = render_world_robot(0, 0, 0);
    r.flippers[2] = NAN;
    ck_assert_int_eq(kn_rscene_robot_set(&s, 0, &r), -1);
    ck_assert_int_eq(kn_rscene_robot_set(&s, KN_RSCENE_ROBOTS, &r), -1);
    kn_rscene_free(&s);
}
END_TEST

static double top_z(const struct kn_rmesh *m)
{
    double z = -1e9;
    for (size_t i = 0; i < kn_rmesh_vertices(m); i++)
        z = fmax(z, m->v[i * KN_RMESH_FLOATS + 2]);
    return z;
}

/* + raises a flipper's tip: the front left one at +90 degrees stands up
 * its length above the pulley axis, higher than the mast's foot */
START_TEST(flipper_raised_up)
{
    struct kn_rscene s;
    struct kn_rmesh m = { 0 };
    ck_assert_int_eq(kn_rscene_init(&s), 0);
    struct kn_rscene_robot r = render_world_robot(0, 0, 0);
    ck_assert_int_eq(kn_rscene_robot_set(&s, 0, &r), 0);
    kn_rrobot_mesh(&s, &m);
    double flat = 0;
    for (size_t i = 0; i < kn_rmesh_vertices(&m); i++) { /* highest point forward of the PTZ */
        const float *v = m.v + i * KN_RMESH_FLOATS;
        if (v[0] > 0.25)
            flat = fmax(flat, v[2]);
    }
    ck_assert_double_le(flat, 0.08 + 0.081);
    r.flippers[0] = M_PI / 2;
    ck_assert_int_eq(kn_rscene_robot_set(&s, 0, &r), 0);
    kn_rmesh_clear(&m);
    kn_rrobot_mesh(&s, &m);
    ck_assert_double_gt(top_z(&m), 0.9); /* the mast still highest */
    double up = 0;
    for (size_t i = 0; i < kn_rmesh_vertices(&m); i++) {
        const float *v = m.v + i * KN_RMESH_FLOATS;
        if (v[1] > 0.14) /* the left flipper's side */
            up = fmax(up, v[2]);
    }
    /* pivot 0.08 up, tip centre 0.195 above it, tip radius 0.04 */
    ck_assert_double_eq_tol(up, 0.08 + 0.195 + 0.04, 0.002);
    kn_rmesh_free(&m);
    kn_rscene_free(&s);
}
END_TEST

/* Run where no EGL driver can be found: opening says why, and no crash. */
static int no_egl(void)
{
    struct kn_render *r = kn_render_open(err, sizeof err);
    if (r) {
        fprintf(stderr, "no-egl: a renderer opened on %s\n", kn_render_describe(r));
        kn_render_close(r);
        return EXIT_FAILURE;
    }
    printf("no-egl: kn_render_open: %s\n", err);
    return err[0] ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Whether a renderer opens (1, 0; -1 when the child cannot be made),
 * asked in a child: an EGL display stays
 * initialised in its process, and Mesa's threads behind it do not survive
 * the fork Check makes for each test. */
static int probe(void)
{
    int pipefd[2], status = 0;
    char line[sizeof err + 64] = "";
    pid_t pid = pipe(pipefd) == 0 ? fork() : -1;
    if (pid < 0) {
        perror("probe");
        return -1;
    }
    if (pid == 0) {
        struct kn_render *r = kn_render_open(err, sizeof err);
        dprintf(pipefd[1], "%s", r ? kn_render_describe(r) : err);
        _exit(r ? 0 : 1);
    }
    close(pipefd[1]);
    ssize_t n = read(pipefd[0], line, sizeof line - 1);
    line[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    waitpid(pid, &status, 0);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf(ok ? "renderer: %s\n" : "skipped: no EGL display for the renderer: %s\n", line);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--no-egl"))
        return no_egl();
    int can = probe();
    if (can <= 0)
        return can < 0 ? EXIT_FAILURE : 77;
    Suite *s = suite_create("cameras-render");
    TCase *t = tcase_create("render");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, bird_sees_robot_lower_middle);
    tcase_add_test(t, ptz_sky_on_top_row);
    tcase_add_test(t, same_state_same_picture);
    tcase_add_test(t, robot_moves_half_metre);
    tcase_add_test(t, ptz_pans_30_degrees);
    tcase_add_test(t, robot_file_cameras);
    tcase_add_test(t, terrain_box_seen);
    tcase_add_test(t, bad_shots_refused);
    suite_add_tcase(s, t);
    TCase *c = tcase_create("scene");
    tcase_add_test(c, world_description_checked);
    tcase_add_test(c, flipper_raised_up);
    suite_add_tcase(s, c);
    return h_run_suite(s);
}
