/* kenaf-cameras's MJPEG stream in a real browser: Debian's headless
 * Chromium (tests/view_browser's harness: browser.js on playwright-core)
 * opens a page holding only <img src="http://127.0.0.1:PORT/kenaf/front.mjpg">,
 * served by a kenaf-cameras started as its unit starts it (cams_service.h)
 * in front of a real kenaf-simd on the engine. The image must be 640x480
 * and keep updating: screenshots of the page differ after each of two
 * drives of the robot over KRP/1, and kenaf-cameras's stats count the
 * frames it sent that client. Asserts on content and counts, never on
 * timing; skips (77) without Chromium, node or playwright-core. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "cams_service.h"
#include "vb_harness.h"

static struct h_daemon d;
static struct h_udp u;

static double pos_m(const struct kn_krp_status *s, int i)
{
    return s->pos_mm[i] / 1000.0;
}

/* Belts at (l, r) mm/s until the robot has gone `metres` or turned
 * `degrees` (whichever is not 0), then stop. */
static void drive(int32_t l, int32_t r, double metres, double degrees)
{
    struct kn_krp_status s0 = h_status_any(&u);
    uint64_t end = h_now_us() + 30000000u;
    for (;;) {
        h_crawler(&u, 0, 0, l, r);
        h_sleep_ms(100);
        struct kn_krp_status s = h_status_any(&u);
        double gone = hypot(pos_m(&s, 0) - pos_m(&s0, 0), pos_m(&s, 1) - pos_m(&s0, 1));
        double turned = fabs(remainder((s.rpy_cdeg[2] - s0.rpy_cdeg[2]) / 100.0, 360.0));
        if ((metres > 0 && gone >= metres) || (degrees > 0 && turned >= degrees))
            break;
        ck_assert_msg(h_now_us() < end, "the robot did not move in 30 s");
    }
    h_simple(&u, 0, KN_KRP_STOP, 0);
}

/* Screenshots of the page, named `name` then `name`-1, -2 ..., until one
 * differs from screenshot `before` in more than 0.5 % of its pixels (the
 * picture follows the robot); returns the name of the last. */
static const char *shot_until_changed(struct vb_browser *b, const char *before, const char *name)
{
    static char last[64];
    uint64_t end = h_now_us() + 60000000u;
    double fraction = 0;
    for (int i = 0; h_now_us() < end; i++) {
        snprintf(last, sizeof last, i ? "%s-%d" : "%s", name, i);
        cJSON_Delete(vb_cmd(b, 30000, "{\"cmd\":\"shot\",\"name\":\"%s\"}", last));
        cJSON *a = vb_cmd(b, 30000, "{\"cmd\":\"differ\",\"a\":\"%s\",\"b\":\"%s\"}", before, last);
        fraction = vb_num(a, "fraction");
        cJSON_Delete(a);
        if (fraction > 0.005)
            break;
        h_sleep_ms(500);
    }
    printf("%s after %s: %.2f %% of the pixels changed\n", last, before, 100 * fraction);
    fflush(stdout);
    ck_assert_msg(fraction > 0.005, "the image in the page did not change after the robot moved");
    return last;
}

START_TEST(img_shows_mjpeg)
{
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    vb_daemon_start(&d, "flat", 1);
    h_udp_open(&u, d.port[0]);
    h_hello(&u, "cameras-browser");
    char json[256];
    snprintf(json, sizeof json,
             "{\"robots\": [\"kenaf=127.0.0.1:%d\"], \"rtsp_port\": 0, \"http_port\": 0}\n",
             d.port[0]);
    struct h_proc cams;
    int http = cs_cameras_start(&cams, json, NULL, "kenaf", NULL);

    /* the operator's page, the image the only thing in it, served by
     * Python's http.server: Chromium lets a page from loopback load an
     * image from loopback, not a data: URL (Private Network Access) */
    static char page[300], dir[256];
    snprintf(dir, sizeof dir, "%s", h_path("page"));
    mkdir(dir, 0755);
    snprintf(page, sizeof page, "%s/index.html", dir);
    char html[512];
    snprintf(html, sizeof html,
             "<!DOCTYPE html><html><body style=\"margin:0\">"
             "<img id=\"cam\" src=\"http://127.0.0.1:%d/kenaf/front.mjpg\"></body></html>\n",
             http);
    h_write_file(page, html);
    const char *py = h_which("python3");
    ck_assert_msg(py != NULL, "python3 is not installed");
    static char python[512];
    snprintf(python, sizeof python, "%s", py);
    char *pargv[] = { python,   "-u",        "-m",          "http.server", "0",
                      "--bind", "127.0.0.1", "--directory", dir,           NULL };
    struct h_proc web;
    h_spawn(&web, pargv, NULL, "http.server.stderr");
    char line[8192];
    int web_port = 0;
    while (!web_port && h_read_line(&web, line, sizeof line, H_LONG_MS)) {
        const char *at = strstr(line, " port ");
        if (at)
            web_port = atoi(at + 6);
    }
    ck_assert_msg(web_port > 0, "http.server said no port: %s", h_stderr(&web));

    struct vb_browser b;
    vb_browser_start(&b, vb_shot_dir("cameras-browser"), 640, 480);
    cJSON_Delete(
        vb_cmd(&b, 60000, "{\"cmd\":\"goto\",\"url\":\"http://127.0.0.1:%d/\"}", web_port));
    cJSON_Delete(vb_cmd(&b, 90000,
                        "{\"cmd\":\"until\",\"expr\":\"document.getElementById('cam') && "
                        "document.getElementById('cam').naturalWidth > 0\",\"ms\":60000}"));
    cJSON *w = vb_cmd(&b, 30000,
                      "{\"cmd\":\"eval\",\"expr\":\"[document.getElementById('cam').naturalWidth, "
                      "document.getElementById('cam').naturalHeight]\"}");
    printf("img: %gx%g\n", vb_num(w, "value.0"), vb_num(w, "value.1"));
    ck_assert_int_eq((int)vb_num(w, "value.0"), 640);
    ck_assert_int_eq((int)vb_num(w, "value.1"), 480);
    cJSON_Delete(w);

    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"shot\",\"name\":\"start\"}"));
    drive(300, 300, 0.5, 0);
    char moved[64]; /* the next call reuses the name's buffer */
    snprintf(moved, sizeof moved, "%s", shot_until_changed(&b, "start", "moved"));
    drive(-300, 300, 0, 30);
    shot_until_changed(&b, moved, "turned");

    /* kenaf-cameras's own count: the frames it wrote to the page's client */
    vb_browser_quit(&b);
    h_signal(&cams, SIGTERM);
    ck_assert_int_eq(h_wait_exit(&cams, 30000), 0);
    double sent = -1;
    while (sent < 0 && h_read_line(&cams, line, sizeof line, 5000)) {
        cJSON *j = line[0] == '{' ? cJSON_Parse(line) : NULL;
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cameras"))
        {
            const cJSON *name = cJSON_GetObjectItem(c, "camera");
            if (cJSON_IsString(name) && strcmp(name->valuestring, "front") == 0)
                sent = cJSON_GetObjectItem(c, "frames_sent")->valuedouble;
        }
        cJSON_Delete(j);
    }
    printf("front: %.0f MJPEG frames sent\n", sent);
    /* at least one a screenshot: the page saw a new picture each time */
    ck_assert_msg(sent >= 3, "front: %.0f frames sent", sent);
    h_udp_close(&u);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "img", img_shows_mjpeg, 400, NULL, NULL },
    };
    return vb_main("cameras-browser", cases, sizeof cases / sizeof cases[0]);
}
