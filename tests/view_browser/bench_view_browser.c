/* kenaf-view's page measured in Debian's headless Chromium (software
 * WebGL: no GPU), with 1, 10 and 32 robots on one engine world, each
 * driving in circles:
 * frames per second, the time from kenaf-view receiving a STATUS to the
 * end of the first frame drawn after it (the page's own measure, see
 * tools/view/web/meter.js), and the page's work per frame. Prints FIGURE
 * lines; fails only when something does not work, never on timing.
 * In the suite each case warms up 3 s and counts frames for 3 s, enough
 * to show every part works; KN_BENCH_FULL=1 (the figures of
 * docs/performance.md) warms up 8 s and counts for 10 s.
 * Skipped (77) without Chromium, node or the pinned playwright-core. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "vb_harness.h"

#define W 1280
#define H 720
/* how long to warm up and to count frames [ms] */
static int warm_ms(void)
{
    return getenv("KN_BENCH_FULL") ? 8000 : 3000;
}

static int measure_ms(void)
{
    return getenv("KN_BENCH_FULL") ? 10000 : 3000;
}

static void drive_all(struct h_daemon *d, struct h_udp *u, int n)
{
    for (int i = 0; i < n; i++) {
        h_udp_open(&u[i], vb_robot_port(d, i));
        h_hello(&u[i], "view-bench");
    }
}

static void keep_driving(struct h_udp *u, int n)
{
    /* ten robots: circles of many sizes (one straight); more: all turning
     * left, 0.5 to 1 m radius, so none leaves the picture */
    for (int i = 0; i < n; i++)
        if (n <= 10)
            h_crawler(&u[i], 0, 0, 100 + 10 * i, 200);
        else
            h_crawler(&u[i], 0, 0, 100 + 2 * i, 250);
}

static void measure(int robots, const char *view)
{
    static struct h_daemon d;
    static struct h_proc view_proc;
    static struct vb_browser b;
    struct h_udp u[VB_MAX_ROBOTS];
    char url[128], name[128];
    vb_daemon_start(&d, "flat", robots);
    vb_view_start(&view_proc, &d, url, sizeof url);
    drive_all(&d, u, robots);
    snprintf(name, sizeof name, "bench-%d-robots", robots);
    vb_browser_start(&b, vb_shot_dir(name), W, H);
    /* KN_VB_QUERY: more page parameters ("&hud=0&aa=0"), to compare a
     * variant against the default in the same minutes */
    const char *more = getenv("KN_VB_QUERY");
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=%s&report=5%s\"}", url,
                        view, more ? more : ""));
    char expr[160];
    snprintf(expr, sizeof expr, "window.kenafView.robots.filter(r => r.state).length === %d",
             robots);
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"until\",\"ms\":25000,\"expr\":\"%s\"}", expr));
    /* warm up (shaders, first frames, the drawing resolution settling:
     * tools/view/web/render_scale.js), driving all the while */
    for (int t = 0; t < warm_ms(); t += 100) {
        keep_driving(u, robots);
        h_sleep_ms(100);
    }
    cJSON *l0 = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.latency.total\"}");
    double lat0 = vb_num(l0, "value");
    cJSON_Delete(l0);
    /* frames counted by the page while this side keeps the robots driving */
    cJSON *f0 = vb_cmd(
        &b, 5000, "{\"cmd\":\"eval\",\"expr\":\"[window.kenafView.frames, performance.now()]\"}");
    for (int t = 0; t < measure_ms(); t += 100) {
        keep_driving(u, robots);
        h_sleep_ms(100);
    }
    cJSON *f1 = vb_cmd(
        &b, 5000, "{\"cmd\":\"eval\",\"expr\":\"[window.kenafView.frames, performance.now()]\"}");
    double fps = 1000 * (vb_num(f1, "value.0") - vb_num(f0, "value.0")) /
                 (vb_num(f1, "value.1") - vb_num(f0, "value.1"));
    cJSON_Delete(f0);
    cJSON_Delete(f1);
    char le[128];
    cJSON *l1 = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.latency.total\"}");
    snprintf(le, sizeof le, "window.kenafView.latencyLast(%.0f)", vb_num(l1, "value") - lat0);
    cJSON_Delete(l1);
    cJSON *lat = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"%s\"}", le);
    cJSON *work = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.workMs\"}");
    cJSON *scale = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.renderScale\"}");
    cJSON *calls = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.drawCalls\"}");
    cJSON *aa = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.antialias\"}");
    cJSON *gl = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.glRenderer\"}");
    cJSON *full =
        vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.detailed.length\"}");
    cJSON_Delete(vb_cmd(&b, 20000, "{\"cmd\":\"shot\",\"name\":\"%s\"}", name));
    for (int i = 0; i < robots; i++)
        h_simple(&u[i], 0, KN_KRP_STOP, 0);

    double n = vb_num(lat, "value.n");
    cJSON *aav = cJSON_GetObjectItem(aa, "value"), *glv = cJSON_GetObjectItem(gl, "value");
    printf("FIGURE view_fps_%d_robots %.1f frames/s (%dx%d window drawn at %.0f %%, smoothed "
           "edges %s, headless Chromium, software WebGL)\n",
           robots, fps, W, H, 100 * vb_num(scale, "value"), cJSON_IsTrue(aav) ? "on" : "off");
    printf("the page's WebGL: %s\n", cJSON_IsString(glv) ? glv->valuestring : "?");
    printf("FIGURE view_latency_p50_%d_robots %.1f ms (%.0f states)\n", robots,
           vb_num(lat, "value.p50"), n);
    printf("FIGURE view_latency_p95_%d_robots %.1f ms\n", robots, vb_num(lat, "value.p95"));
    printf("FIGURE view_frame_work_%d_robots %.1f ms\n", robots, vb_num(work, "value"));
    printf("FIGURE view_draw_calls_%d_robots %.0f (%.0f robots drawn in full, the rest as "
           "instanced boxes)\n",
           robots, vb_num(calls, "value"), vb_num(full, "value"));
    fflush(stdout);
    ck_assert_msg(fps > 1, "the page draws no frames");
    if (n <= 10 * robots) {
        cJSON *st = vb_cmd(
            &b, 10000, "{\"cmd\":\"eval\",\"expr\":\"fetch('api/stats').then(r => r.text())\"}");
        cJSON *v = cJSON_GetObjectItem(st, "value");
        /* Check cuts its message short: the diagnosis goes to stdout in
         * full (meson's log keeps it), the failure says where to look */
        printf("the page measured only %.0f state frames\nkenaf-view's counters: %s\n"
               "kenaf-view's stderr:\n%s\n",
               n, cJSON_IsString(v) ? v->valuestring : "?", h_stderr(&view_proc));
        fflush(stdout);
        ck_abort_msg("the page measured only %.0f state frames (%d robots); kenaf-view's "
                     "counters and stderr are printed above",
                     n, robots);
    }
    cJSON_Delete(lat);
    cJSON_Delete(work);
    cJSON_Delete(scale);
    cJSON_Delete(calls);
    cJSON_Delete(full);
    cJSON_Delete(aa);
    cJSON_Delete(gl);
    vb_browser_quit(&b);
    for (int i = 0; i < robots; i++)
        h_udp_close(&u[i]);
}

START_TEST(one_robot)
{
    measure(1, "chase");
}
END_TEST

START_TEST(ten_robots)
{
    measure(10, "orbit&eye=-1.2,-2.6,2.4&at=1.6,0.4,0");
}
END_TEST

START_TEST(thirty_two_robots)
{
    /* rows of eight 2.5 m apart (vb_harness.c): the nearest in full, the
     * far ones as boxes */
    measure(32, "orbit&eye=-1,-3,3.5&at=6,3.5,0");
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "one_robot", one_robot, 300, NULL, NULL },
        { "ten_robots", ten_robots, 300, NULL, NULL },
        { "thirty_two_robots", thirty_two_robots, 300, NULL, NULL },
    };
    return vb_main("view-bench", cases, sizeof cases / sizeof cases[0]);
}
