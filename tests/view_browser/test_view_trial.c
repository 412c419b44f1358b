/* An operator's trial seen from kenaf-view in headless Chromium: the
 * trainer's second screen. kenaf-sim-run --trial --operator runs a short
 * trial written here (real kenaf-simd and kenaf-engine judging it) with a
 * program that only says where the robot is and waits; kenaf-view watches
 * that robot. The page's trial panel names the trial and the repetition
 * waiting at the gate, and its time left counts down as the robot's
 * state comes in; the page draws the apparatus the engine judges on. Every wait is for a state; no time is asserted.
 * Skipped (77) without Chromium, node or the pinned playwright-core. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vb_harness.h"

static struct h_proc run, view;
static struct vb_browser b;

static void until(const char *expr)
{
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"until\",\"ms\":25000,\"expr\":\"%s\"}", expr));
}

static double eval_num(const char *expr)
{
    cJSON *a = vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"%s\"}", expr);
    double v = vb_num(a, "value");
    cJSON_Delete(a);
    return v;
}

START_TEST(trial_panel)
{
    const char *cfgdir = getenv("KN_CONFIG_DIR"), *simrun = getenv("KN_SIM_RUN");
    ck_assert_msg(cfgdir && simrun, "KN_CONFIG_DIR and KN_SIM_RUN must be set");
    char trial[1024], score[1024], text[2048];
    snprintf(trial, sizeof trial, "%s", h_path("view-trial.json"));
    snprintf(score, sizeof score, "%s", h_path("score"));
    snprintf(text, sizeof text,
             "{ \"name\": \"view-trial\", \"robot\": \"%s/robots/kenaf.json\", "
             "\"terrain\": { \"file\": \"%s/terrains/apparatus/stepfield-e2828.json\" }, "
             "\"start\": { \"x\": 0, \"y\": 0 }, \"duration_s\": 300, "
             "\"controller\": { \"type\": \"external\", \"must_exit\": false }, "
             "\"criterion\": { \"type\": \"trial\", \"course\": \"traverse\", "
             "\"repetitions\": 3 } }\n",
             cfgdir, cfgdir);
    h_write_file(trial, text);

    /* the "operator" says where its robot is, then waits to be ended */
    char *argv[] = { (char *)simrun,
                     "--trial",
                     trial,
                     "--operator",
                     "--score",
                     score,
                     "--",
                     "/bin/sh",
                     "-c",
                     "echo \"ROBOT $KENAF_ROBOT\"; exec sleep 300",
                     NULL };
    h_spawn(&run, argv, NULL, "kenaf-sim-run.stderr");
    char line[256], robot[256] = "";
    while (!robot[0] && h_read_line(&run, line, sizeof line, H_LONG_MS * 3))
        if (strncmp(line, "ROBOT ", 6) == 0)
            snprintf(robot, sizeof robot, "%s", line + 6);
    ck_assert_msg(robot[0], "the operator's program never started:\n%s", h_stderr(&run));

    char *vargv[] = {
        (char *)getenv("KN_VIEW"), "--listen", "127.0.0.1:0", "--robot", robot, NULL
    };
    h_spawn(&view, vargv, NULL, "kenaf-view.stderr");
    char url[256] = "";
    while (!url[0] && h_read_line(&view, line, sizeof line, H_LONG_MS))
        if (strncmp(line, "kenaf-view: http://", 19) == 0)
            snprintf(url, sizeof url, "%s", line + strlen("kenaf-view: "));
    ck_assert_msg(url[0], "kenaf-view printed no URL:\n%s", h_stderr(&view));

    vb_browser_start(&b, vb_shot_dir("trial"), 960, 540);
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=chase\"}", url));
    until("window.kenafView.robots.length === 1 && window.kenafView.robots[0].trial !== null");
    until("window.kenafView.trialText.includes('TRIAL view-trial') && "
          "window.kenafView.trialText.includes('traverse 1 of 3: waiting at the gate') && "
          "window.kenafView.trialText.includes('0 of 0 completed without a fault') && "
          "window.kenafView.trialText.includes('of 5:00.0')");
    /* the apparatus the engine judges on, which kenaf-simd learnt from the
     * engine at its address (KENAF {Cmd World}): the stepfield's posts
     * and walls, not the bare ground grid */
    until("window.kenafView.terrain === 'stepfield_e2828' && window.kenafView.terrainBoxes > 2");
    printf("view-trial: the page draws %s with %.0f boxes\n", "stepfield_e2828",
           eval_num("window.kenafView.terrainBoxes"));
    cJSON *a =
        vb_cmd(&b, 5000, "{\"cmd\":\"eval\",\"expr\":\"window.kenafView.robots[0].trial.course\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(a, "value")->valuestring, "traverse");
    cJSON_Delete(a);
    /* live: the time left goes down as the robot's trial runs */
    double left = eval_num("window.kenafView.robots[0].trial.left_s");
    ck_assert_double_le(left, 300);
    char expr[160];
    snprintf(expr, sizeof expr, "window.kenafView.robots[0].trial.left_s < %.3f - 1", left);
    until(expr);
    cJSON_Delete(vb_cmd(&b, 20000, "{\"cmd\":\"shot\",\"name\":\"trial-panel\"}"));

    /* without the panel's robot the page hides it: ?hud=0 hides all */
    cJSON_Delete(vb_cmd(&b, 30000, "{\"cmd\":\"open\",\"url\":\"%s?view=chase&hud=0\"}", url));
    until("window.kenafView.robots.length === 1 && window.kenafView.robots[0].trial !== null");
    ck_assert_double_eq(eval_num("window.kenafView.trialText.length"), 0);
    vb_browser_quit(&b);

    /* the run ends when asked to, with its score written */
    h_signal(&run, SIGTERM);
    ck_assert_msg(h_wait_exit(&run, H_LONG_MS * 3) != -1, "kenaf-sim-run did not end:\n%s",
                  h_stderr(&run));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "trial_panel", trial_panel, 240, NULL, NULL },
    };
    return vb_main("view-trial", cases, sizeof cases / sizeof cases[0]);
}
