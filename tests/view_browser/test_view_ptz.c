/* kenaf-view's page and kenaf-cameras sharing the front PTZ camera, in a
 * real browser: kenaf-simd with its engine, kenaf-cameras on free ports,
 * kenaf-view --cameras pointing at it, Debian's headless Chromium on the
 * page. A PTZ button pressed in the page must show in kenaf-cameras'
 * query=position (read with curl), and a move sent with curl must show
 * in the page's PTZ state. Skipped (77) without Chromium, node or the
 * pinned playwright-core. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb_harness.h"

static struct h_daemon d;
static struct h_proc view, cams;
static struct vb_browser b;
static char url[128];
static int cams_port;

static void setup(void)
{
    h_setup();
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    vb_daemon_start(&d, "flat", 1);
    static char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", vb_robot_port(&d, 0));
    const char *exe = getenv("KN_CAMERAS");
    /* small pictures: this test reads positions, not pixels */
    char *argv[] = { (char *)(exe && *exe ? exe : "kenaf-cameras"),
                     "--front-size=160x120",
                     "--birdseye-size=160x120",
                     "--http-port=0",
                     "--rtsp-port=0",
                     "--robot",
                     robot,
                     NULL };
    h_spawn(&cams, argv, NULL, "kenaf-cameras.stderr");
    char line[256];
    cams_port = 0;
    while (!cams_port && h_read_line(&cams, line, sizeof line, H_LONG_MS))
        if (sscanf(line, "kenaf-cameras: http://127.0.0.1:%d/", &cams_port) != 1)
            cams_port = 0;
    ck_assert_msg(cams_port, "kenaf-cameras printed no URL: %s", h_stderr(&cams));
    static char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%d/", cams_port);
    const char *extra[] = { "--cameras", base, NULL };
    vb_view_start_with(&view, &d, extra, url, sizeof url);
}

static void teardown(void)
{
    if (b.fd > 0)
        vb_browser_quit(&b);
    h_teardown();
}

/* curl on kenaf-cameras' ptz.cgi for camera 1: the body's lines joined
 * with '|' in a static buffer. */
static const char *cams_ptz(const char *query)
{
    static char out[512];
    char u[256];
    snprintf(u, sizeof u, "http://127.0.0.1:%d/axis-cgi/com/ptz.cgi?camera=1&%s", cams_port, query);
    char *argv[] = { "curl", "-s", "-f", u, NULL };
    ck_assert_msg(h_run_prog(argv, out, sizeof out) == 0, "curl %s: %s", u,
                  h_file_text(h_path("prog.stderr")));
    return out;
}

/* Waits (30 s at most) until kenaf-cameras holds `want`. */
static void cams_hold(const char *want)
{
    uint64_t end = h_now_us() + 30000000u;
    const char *got;
    while (strcmp(got = cams_ptz("query=position"), want) != 0 && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(strcmp(got, want) == 0, "kenaf-cameras holds \"%s\", not \"%s\"", got, want);
}

static void page_holds(const char *expr, const char *what)
{
    if (vb_try(&b, 35000, "{\"cmd\":\"until\",\"ms\":30000,\"expr\":\"%s\"}", expr))
        return;
    cJSON *a = vb_cmd(&b, 5000,
                      "{\"cmd\":\"eval\",\"expr\":\"JSON.stringify([window.kenafView.ptz, "
                      "window.kenafView.ptzShared])\"}");
    ck_abort_msg("the page never showed %s; it holds %s", what,
                 cJSON_GetObjectItem(a, "value")->valuestring);
}

START_TEST(ptz_shared)
{
    vb_browser_start(&b, vb_shot_dir("ptz-shared"), 640, 360);
    cJSON_Delete(
        vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=ptz&aa=0&scale=0.5\"}", url));
    /* the page learnt kenaf-cameras' URL and took its position: home, not
     * the page's own default tilt of -10 */
    page_holds("window.kenafView.ptzShared.polls > 0 && window.kenafView.ptz.tilt === 0",
               "kenaf-cameras' home position");
    /* page to kenaf-cameras: a button, then a key */
    cJSON_Delete(vb_cmd(&b, 10000, "{\"cmd\":\"click\",\"selector\":\"#pan-left\"}"));
    cams_hold("pan=-5.00|tilt=0.00|zoom=1");
    cJSON_Delete(vb_cmd(&b, 10000, "{\"cmd\":\"click\",\"selector\":\"#tilt-up\"}"));
    cams_hold("pan=-5.00|tilt=5.00|zoom=1");
    cJSON_Delete(vb_cmd(&b, 10000, "{\"cmd\":\"click\",\"selector\":\"#zoom-in\"}"));
    /* 1.25x is 1 + 0.25 * 9998 / 9 on Axis's scale */
    cams_hold("pan=-5.00|tilt=5.00|zoom=279");
    /* kenaf-cameras to page: a console's move with curl */
    ck_assert_str_eq(cams_ptz("pan=30&tilt=-20&zoom=5000&query=position"),
                     "pan=30.00|tilt=-20.00|zoom=5000");
    page_holds("window.kenafView.ptz.pan === -30 && window.kenafView.ptz.tilt === -20 && "
               "Math.abs(window.kenafView.ptz.zoom - 5.5) < 0.001",
               "pan -30 (30 right), tilt -20, zoom 5.5");
    /* a continuous move from the console, followed by the page */
    cams_ptz("continuouspantiltmove=-100,0");
    page_holds("window.kenafView.ptz.pan > 0", "the continuous pan to the left");
    cams_ptz("continuouspantiltmove=0,0");
    /* and the page's home button brings both home */
    cJSON_Delete(vb_cmd(&b, 10000, "{\"cmd\":\"click\",\"selector\":\"#ptz-home\"}"));
    cams_hold("pan=0.00|tilt=0.00|zoom=1");
    page_holds("window.kenafView.ptz.pan === 0 && window.kenafView.ptz.zoom === 1", "home");
    cJSON *e =
        vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.ptzShared.errors\"}");
    ck_assert_msg(vb_num(e, "value") == 0, "the page's PTZ requests failed %.0f times",
                  vb_num(e, "value"));
    cJSON_Delete(e);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "ptz_shared", ptz_shared, 240, setup, teardown },
    };
    return vb_main("view-browser-ptz", cases, sizeof cases / sizeof cases[0]);
}
