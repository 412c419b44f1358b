/* kenaf-view in a real browser: kenaf-simd with its engine on the step
 * terrain, kenaf-view in front of it and Debian's headless Chromium on the
 * page. The robot is driven over KRP/1 from here; screenshots (written to
 * meson-logs/view-browser/) must show the robot drawn where STATUS says,
 * moving the way STATUS moves, its flippers swinging when they swing,
 * the PTZ camera's picture turning when it pans, "no signal" while the
 * daemon is away and the page coming back with it and with kenaf-view.
 * Robot pixels are found by colour (pixels.js). Skipped (77) without
 * Chromium, node or the pinned playwright-core. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb_harness.h"

#define W 960
#define H 540
#define TOP_SPAN_M 3.0
#define PX_PER_M_TOP (H / TOP_SPAN_M)

static struct h_daemon d;
static struct h_udp u;
static struct h_proc view;
static struct vb_browser b;
static char url[128];

static void setup(void)
{
    h_setup();
    vb_daemon_start(&d, "step", 1);
    h_udp_open(&u, d.port[0]);
    h_hello(&u, "view-test");
    vb_view_start(&view, &d, url, sizeof url);
}

static void teardown(void)
{
    if (b.fd > 0)
        vb_browser_quit(&b);
    h_udp_close(&u);
    h_teardown();
}

static struct kn_krp_status status(void)
{
    return h_status_any(&u);
}

static double pos_m(const struct kn_krp_status *s, int i)
{
    return s->pos_mm[i] / 1000.0;
}

/* Waits until the robot stands still (two STATUS 0.3 s apart within 2 mm)
 * and returns that STATUS. */
static struct kn_krp_status settled(void)
{
    struct kn_krp_status a = status();
    for (int i = 0; i < 50; i++) {
        h_sleep_ms(300);
        struct kn_krp_status s = status();
        bool still = true;
        for (int k = 0; k < 3; k++)
            still &= abs(s.pos_mm[k] - a.pos_mm[k]) <= 2;
        for (int k = 0; k < 4; k++)
            still &= abs(s.flipper_cdeg[k] - a.flipper_cdeg[k]) <= 50;
        if (still)
            return s;
        a = s;
    }
    ck_abort_msg("the robot never came to rest");
    return a;
}

/* Waits until the page holds the state STATUS s describes (within 5 mm and
 * 1 deg), then a little longer so the drawing has caught up with it. */
static void page_has(const struct kn_krp_status *s)
{
    bool has = vb_try(
        &b, 15000,
        "{\"cmd\":\"until\",\"ms\":10000,\"expr\":\"(() => { const r = window.kenafView.robots[0];"
        " if (!r || !r.state) return false; const s = r.state;"
        " return Math.abs(s.pos[0] - %.4f) < 0.005 && Math.abs(s.pos[1] - %.4f) < 0.005 &&"
        " s.flippers.every((a, k) => Math.abs(a - [%.4f, %.4f, %.4f, %.4f][k]) < 0.02); })()\"}",
        pos_m(s, 0), pos_m(s, 1), s->flipper_cdeg[0] * M_PI / 18000,
        s->flipper_cdeg[1] * M_PI / 18000, s->flipper_cdeg[2] * M_PI / 18000,
        s->flipper_cdeg[3] * M_PI / 18000);
    if (!has) {
        cJSON *a = vb_cmd(&b, 5000,
                          "{\"cmd\":\"eval\",\"expr\":"
                          "\"JSON.stringify(window.kenafView.robots[0].state)\"}");
        cJSON *v = cJSON_GetObjectItem(a, "value");
        struct kn_krp_status now = status();
        ck_abort_msg("the page never held the robot at (%.3f, %.3f) m, flippers (%d, %d, %d, "
                     "%d) cdeg in 10 s; its state: %s; STATUS now (%.3f, %.3f) m",
                     pos_m(s, 0), pos_m(s, 1), s->flipper_cdeg[0], s->flipper_cdeg[1],
                     s->flipper_cdeg[2], s->flipper_cdeg[3],
                     cJSON_IsString(v) ? v->valuestring : "(none)", pos_m(&now, 0), pos_m(&now, 1));
    }
    h_sleep_ms(300);
}

/* Opens the page with the query; drawn at full resolution always (scale=1),
 * so pictures taken a moment apart compare. */
static void open_page(const char *query)
{
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?%s&scale=1\"}", url, query));
    /* the world description arrived and the robot's state with it */
    cJSON_Delete(vb_cmd(&b, 15000,
                        "{\"cmd\":\"until\",\"ms\":12000,\"expr\":\"window.kenafView.connected &&"
                        " window.kenafView.robots.length === 1 &&"
                        " window.kenafView.robots[0].world !== undefined &&"
                        " window.kenafView.robots[0].state !== null\"}"));
}

static cJSON *shot(const char *name)
{
    cJSON *a = vb_cmd(&b, 20000, "{\"cmd\":\"shot\",\"name\":\"%s\"}", name);
    printf("%s: body %.0f px at (%.1f, %.1f), flippers %.0f px\n", name, vb_num(a, "body.n"),
           cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "body"), "cx"))
               ? vb_num(a, "body.cx")
               : -1,
           cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "body"), "cy"))
               ? vb_num(a, "body.cy")
               : -1,
           vb_num(a, "flipper.n"));
    fflush(stdout);
    return a;
}

/* The robot must be on the picture: its colours (body and flippers; from
 * the side the tracks hide the body) over this many pixels. */
static void assert_drawn(const cJSON *a, const char *name, double min_px)
{
    double n = vb_num(a, "body.n") + vb_num(a, "flipper.n");
    ck_assert_msg(n >= min_px, "%s: the robot is not drawn (%.0f robot pixels, want >= %.0f)", name,
                  n, min_px);
}

static void drive_until_moved(double metres, int left_mm_s, int right_mm_s)
{
    struct kn_krp_status s0 = status();
    uint64_t end = h_now_us() + 15000000u;
    for (;;) {
        h_crawler(&u, 0, 0, left_mm_s, right_mm_s);
        h_sleep_ms(100);
        struct kn_krp_status s = status();
        if (hypot(pos_m(&s, 0) - pos_m(&s0, 0), pos_m(&s, 1) - pos_m(&s0, 1)) >= metres)
            break;
        ck_assert_msg(h_now_us() < end, "the robot did not move %.2f m in 15 s", metres);
    }
    h_simple(&u, 0, KN_KRP_STOP, 0);
}

static void set_flippers(int cdeg_front, int cdeg_rear)
{
    const int32_t t[4] = { cdeg_front, cdeg_front, cdeg_rear, cdeg_rear };
    h_flipper(&u, 0, 0, 0x0f, t);
    uint64_t end = h_now_us() + 10000000u;
    for (;;) {
        struct kn_krp_status s = status();
        bool there = true;
        for (int k = 0; k < 4; k++)
            there &= abs(s.flipper_cdeg[k] - t[k]) <= 300;
        if (there)
            return;
        ck_assert_msg(h_now_us() < end, "flippers did not reach their targets");
        h_sleep_ms(100);
    }
}

START_TEST(robot_drawn_moves_flippers_ptz)
{
    vb_browser_start(&b, vb_shot_dir("robot"), W, H);
    set_flippers(0, 0);
    struct kn_krp_status s0 = settled();

    /* top view fixed over the start: the robot must move on the picture as
     * it moves in STATUS (x to the right, y up) */
    char q[512];
    snprintf(q, sizeof q, "view=top&follow=0&cx=%.3f&cy=%.3f&span=%.1f&aa=0", pos_m(&s0, 0),
             pos_m(&s0, 1), TOP_SPAN_M);
    open_page(q);
    cJSON *t = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.terrain\"}");
    cJSON *tv = cJSON_GetObjectItem(t, "value");
    ck_assert_msg(cJSON_IsString(tv) && strcmp(tv->valuestring, "step") == 0,
                  "the page draws terrain %s, not the engine's step",
                  cJSON_IsString(tv) ? tv->valuestring : "(none)");
    cJSON_Delete(t);
    page_has(&s0);
    cJSON *a = shot("top-start");
    assert_drawn(a, "top-start", 500);
    /* drawn where it is: the view is centred on the robot's start */
    ck_assert_msg(fabs(vb_num(a, "body.cx") - W / 2.0) < 25 &&
                      fabs(vb_num(a, "body.cy") - H / 2.0) < 25,
                  "top-start: robot drawn at (%.0f, %.0f), not at the centre", vb_num(a, "body.cx"),
                  vb_num(a, "body.cy"));

    drive_until_moved(0.35, 200, 200);
    struct kn_krp_status s1 = settled();
    page_has(&s1);
    cJSON *m = shot("top-moved");
    assert_drawn(m, "top-moved", 500);
    double ex = (pos_m(&s1, 0) - pos_m(&s0, 0)) * PX_PER_M_TOP;
    double ey = -(pos_m(&s1, 1) - pos_m(&s0, 1)) * PX_PER_M_TOP;
    double mx = vb_num(m, "body.cx") - vb_num(a, "body.cx");
    double my = vb_num(m, "body.cy") - vb_num(a, "body.cy");
    printf("moved %.3f m, %.3f m in STATUS: expected (%.1f, %.1f) px, drawn (%.1f, %.1f) px\n",
           pos_m(&s1, 0) - pos_m(&s0, 0), pos_m(&s1, 1) - pos_m(&s0, 1), ex, ey, mx, my);
    fflush(stdout);
    double elen = hypot(ex, ey), cosang = (ex * mx + ey * my) / (elen * hypot(mx, my) + 1e-9);
    ck_assert_msg(elen > 40, "STATUS moved too little to see");
    ck_assert_msg(cosang > cos(15 * M_PI / 180),
                  "the robot moved the wrong way on the picture (%.1f, %.1f) px for (%.1f, %.1f)",
                  mx, my, ex, ey);
    ck_assert_msg(fabs(hypot(mx, my) - elen) < 0.25 * elen + 5,
                  "the robot moved %.1f px on the picture for %.1f px expected", hypot(mx, my),
                  elen);
    cJSON_Delete(a);
    cJSON_Delete(m);

    /* side view from the right: raised flippers reach higher and shorter */
    snprintf(q, sizeof q, "view=orbit&eye=%.3f,%.3f,%.3f&at=%.3f,%.3f,%.3f&aa=0", pos_m(&s1, 0),
             pos_m(&s1, 1) - 2.0, pos_m(&s1, 2) + 0.25, pos_m(&s1, 0), pos_m(&s1, 1),
             pos_m(&s1, 2));
    open_page(q);
    page_has(&s1);
    cJSON *f0 = shot("side-flippers-0");
    assert_drawn(f0, "side-flippers-0", 500);
    set_flippers(6000, 6000);
    struct kn_krp_status s2 = settled();
    page_has(&s2);
    cJSON *f1 = shot("side-flippers-60");
    assert_drawn(f1, "side-flippers-60", 500);
    ck_assert_msg(vb_num(f0, "flipper.n") > 300 && vb_num(f1, "flipper.n") > 300,
                  "flippers not drawn (%.0f, %.0f px)", vb_num(f0, "flipper.n"),
                  vb_num(f1, "flipper.n"));
    double rise = vb_num(f0, "flipper.miny") - vb_num(f1, "flipper.miny");
    double shrink = (vb_num(f0, "flipper.maxx") - vb_num(f0, "flipper.minx")) -
                    (vb_num(f1, "flipper.maxx") - vb_num(f1, "flipper.minx"));
    printf("flippers 0 -> 60 deg: top rose %.0f px, length shrank %.0f px\n", rise, shrink);
    fflush(stdout);
    ck_assert_msg(rise >= 15, "raised flippers do not reach higher on the picture (%.0f px)", rise);
    ck_assert_msg(shrink >= 20, "raised flippers are not shorter on the picture (%.0f px)", shrink);
    cJSON_Delete(f0);
    cJSON_Delete(f1);

    /* the front camera: the picture holds still, then turns when panned */
    open_page("view=ptz&pan=0&tilt=-10&zoom=1&aa=0");
    page_has(&s2);
    cJSON_Delete(shot("ptz-pan-0"));
    h_sleep_ms(500);
    cJSON_Delete(shot("ptz-pan-0-again"));
    for (int i = 0; i < 6; i++)
        cJSON_Delete(vb_cmd(&b, 5000, "{\"cmd\":\"click\",\"selector\":\"#pan-left\"}"));
    cJSON_Delete(vb_cmd(&b, 5000,
                        "{\"cmd\":\"until\",\"ms\":3000,"
                        "\"expr\":\"window.kenafView.ptz.pan === 30\"}"));
    h_sleep_ms(300);
    cJSON_Delete(shot("ptz-pan-30"));
    cJSON *same =
        vb_cmd(&b, 5000, "{\"cmd\":\"differ\",\"a\":\"ptz-pan-0\",\"b\":\"ptz-pan-0-again\"}");
    cJSON *turned =
        vb_cmd(&b, 5000, "{\"cmd\":\"differ\",\"a\":\"ptz-pan-0\",\"b\":\"ptz-pan-30\"}");
    printf("PTZ: %.3f of the picture changed standing still, %.3f after a 30 deg pan\n",
           vb_num(same, "fraction"), vb_num(turned, "fraction"));
    fflush(stdout);
    ck_assert_msg(vb_num(same, "fraction") < 0.02, "the PTZ picture changes by itself");
    ck_assert_msg(vb_num(turned, "fraction") > 0.10, "the PTZ picture did not change when panned");
    cJSON_Delete(same);
    cJSON_Delete(turned);

    /* the picture for people (README): chase view from the front left */
    open_page("view=chase&az=-140&el=22&dist=1.5");
    page_has(&s2);
    cJSON *c = shot("chase");
    assert_drawn(c, "chase", 500);
    cJSON_Delete(c);
}
END_TEST

static bool page_true(const char *expr, int ms)
{
    return vb_try(&b, ms + 5000, "{\"cmd\":\"until\",\"ms\":%d,\"expr\":\"%s\"}", ms, expr);
}

START_TEST(no_signal_and_back)
{
    vb_browser_start(&b, vb_shot_dir("link"), W, H);
    open_page("view=chase&aa=0");
    int port = vb_robot_port(&d, 0);
    cJSON_Delete(shot("linked"));

    /* the daemon goes away: "no signal" on the page, then back with it */
    h_signal(&d.proc, SIGTERM);
    ck_assert_int_ge(h_wait_exit(&d.proc, H_LONG_MS), 0);
    ck_assert_msg(page_true("!window.kenafView.robots[0].linkUp && "
                            "!document.getElementById('nosignal').hidden",
                            8000),
                  "no \"no signal\" while the daemon is away");
    cJSON_Delete(shot("no-signal-daemon"));
    cJSON *n =
        vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.robots[0].states\"}");
    double states = vb_num(n, "value");
    cJSON_Delete(n);
    vb_daemon_restart(&d, "step", port);
    char expr[256];
    snprintf(expr, sizeof expr,
             "window.kenafView.robots[0].linkUp && "
             "window.kenafView.robots[0].states > %.0f + 10 && "
             "document.getElementById('nosignal').hidden",
             states);
    ck_assert_msg(page_true(expr, 30000),
                  "the page did not come back with the daemon; kenaf-view's stderr:\n%s\n"
                  "kenaf-simd's:\n%s",
                  h_stderr(&view), h_stderr(&d.proc));
    cJSON_Delete(shot("daemon-back"));

    /* kenaf-view itself restarts on its port: the page reconnects alone */
    const char *colon = strrchr(url, ':');
    int vport = atoi(colon + 1);
    h_signal(&view, SIGTERM);
    ck_assert_int_ge(h_wait_exit(&view, H_LONG_MS), 0);
    ck_assert_msg(page_true("!window.kenafView.connected && "
                            "!document.getElementById('nosignal').hidden",
                            8000),
                  "no \"no signal\" while kenaf-view is away");
    cJSON_Delete(shot("no-signal-view"));
    char listen[64], robot[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", vport);
    snprintf(robot, sizeof robot, "127.0.0.1:%d", port);
    char *argv[] = { getenv("KN_VIEW"), "--listen", listen, "--robot", robot, NULL };
    h_spawn(&view, argv, NULL, "kenaf-view-2.stderr");
    ck_assert_msg(page_true("window.kenafView.connected && window.kenafView.connects >= 2 && "
                            "window.kenafView.robots[0].linkUp && "
                            "document.getElementById('nosignal').hidden",
                            30000),
                  "the page did not reconnect to kenaf-view; its stderr:\n%s", h_stderr(&view));
    cJSON_Delete(shot("view-back"));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "robot_drawn_moves_flippers_ptz", robot_drawn_moves_flippers_ptz, 240, setup, teardown },
        { "no_signal_and_back", no_signal_and_back, 240, setup, teardown },
    };
    return vb_main("view-browser", cases, sizeof cases / sizeof cases[0]);
}
