/* The page's robot list and the robot the camera follows, in headless
 * Chromium: kenaf-simd with three robots on stand-in simulators,
 * kenaf-view, the page opened with ?follow=NAME. The list has a button per
 * robot; the page follows the robot named in the URL, the one clicked in
 * the list, the next and the previous one with the keys n and N, and the
 * address bar names it (?robot=NAME) so the choice can be bookmarked.
 * With ?detail=1 only the followed robot is drawn in full and the others
 * as instanced boxes: fewer draw calls than with all three in full.
 * Skipped (77) without Chromium, node or the pinned playwright-core. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "vb_harness.h"

#define NROBOTS 3

static struct h_daemon d;
static struct h_proc view;
static struct vb_browser b;

static double eval_num(const char *expr)
{
    cJSON *a = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"%s\"}", expr);
    double v = vb_num(a, "value");
    cJSON_Delete(a);
    return v;
}

static void until(const char *expr)
{
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"until\",\"ms\":25000,\"expr\":\"%s\"}", expr));
}

/* the page follows robot id, and its address names it */
static void following(int id)
{
    char expr[200];
    snprintf(expr, sizeof expr,
             "window.kenafView.following === %d && location.search.includes('robot=kenaf%d')", id,
             id);
    until(expr);
    snprintf(expr, sizeof expr,
             "document.getElementById('robot-%d').classList.contains('sel') && "
             "window.kenafView.detailed.includes(%d)",
             id, id);
    until(expr);
}

static double draw_calls(const char *url, int detail)
{
    cJSON_Delete(
        vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=chase&detail=%d\"}", url, detail));
    until("window.kenafView.robots.filter(r => r.state).length === 3");
    char expr[128];
    snprintf(expr, sizeof expr, "window.kenafView.detailed.length === %d", detail);
    until(expr);
    return eval_num("window.kenafView.drawCalls");
}

START_TEST(robot_list_and_follow)
{
    char url[128];
    vb_daemon_start_standin(&d, NROBOTS);
    vb_view_start(&view, &d, url, sizeof url);
    vb_browser_start(&b, vb_shot_dir("follow"), 960, 540);
    cJSON_Delete(
        vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=chase&follow=kenaf2\"}", url));
    until("window.kenafView.robots.filter(r => r.state).length === 3");
    until("window.kenafView.following === 2");
    ck_assert_double_eq(eval_num("document.querySelectorAll('#robotlist button').length"), NROBOTS);
    cJSON_Delete(vb_cmd(&b, 5000, "{\"cmd\":\"click\",\"selector\":\"#robot-1\"}"));
    following(1);
    cJSON_Delete(vb_cmd(&b, 5000, "{\"cmd\":\"key\",\"key\":\"n\"}"));
    following(2);
    cJSON_Delete(vb_cmd(&b, 5000, "{\"cmd\":\"key\",\"key\":\"n\"}"));
    following(0); /* round again */
    cJSON_Delete(vb_cmd(&b, 5000, "{\"cmd\":\"key\",\"key\":\"Shift+N\"}"));
    following(2);
    cJSON_Delete(vb_cmd(&b, 20000, "{\"cmd\":\"shot\",\"name\":\"follow-list\"}"));

    /* the address as the page left it opens on the same robot */
    cJSON *a = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"location.href\"}");
    char again[300];
    snprintf(again, sizeof again, "%s", cJSON_GetObjectItem(a, "value")->valuestring);
    cJSON_Delete(a);
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s\"}", again));
    until("window.kenafView.robots.filter(r => r.state).length === 3");
    following(2);

    double one = draw_calls(url, 1), all = draw_calls(url, NROBOTS);
    printf("draw calls: %.0f with one robot in full and two as boxes, %.0f with three in full\n",
           one, all);
    ck_assert_msg(one < all, "boxes took %.0f draw calls, full robots %.0f", one, all);
    vb_browser_quit(&b);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "robot_list_and_follow", robot_list_and_follow, 240, NULL, NULL },
    };
    return vb_main("view-follow", cases, sizeof cases / sizeof cases[0]);
}
