/* An operator's trial, end to end (docs/scenario-runs.md#operator-trials):
 * kenaf-sim-run --trial FILE --operator --capture -- kenaf-console in a
 * tmux window, with real kenaf-simd, kenaf-engine and the console. The
 * trial is written here: 2 repetitions on a short stepfield (posts up to
 * 20 cm in a 0.6 m field, ASTM E2828's kind but small) that a straight
 * drive with the stairs preset crosses in a few seconds; the full 2.4 m
 * field takes a minute of holding keys, too long for the suite. The
 * operator sets the flippers, drives until the TRIAL block counts a
 * repetition, resets to the start gate (confirmed: an assist fault on the
 * panel), quits; the score counts both, the capture holds the trial's
 * datagrams. Every wait is for a state; no time is asserted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console_harness.h"

static struct c_console con;

/* The text without blanks: JSON's layout aside. */
static const char *squeezed(const char *s)
{
    static char out[65536];
    size_t n = 0;
    for (; *s && n + 1 < sizeof out; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n')
            out[n++] = *s;
    out[n] = '\0';
    return out;
}

static bool repetition_counted(void *arg)
{
    (void)arg;
    return strstr(c_screen(&con), "completed 1,") != NULL;
}

START_TEST(operator_trial)
{
    const char *cfgdir = getenv("KN_CONFIG_DIR");
    ck_assert_msg(cfgdir != NULL, "KN_CONFIG_DIR not set");
    char terrain[1024], trial[1024], score[1024], cap[1024], text[2048], cmd[4096];
    snprintf(terrain, sizeof terrain, "%s", h_path("stepfield-short-terrain.json"));
    snprintf(trial, sizeof trial, "%s", h_path("stepfield-short.json"));
    snprintf(score, sizeof score, "%s", h_path("score"));
    snprintf(cap, sizeof cap, "%s", h_path("session.pcapng"));
    h_write_file(terrain, "{ \"type\": \"stepfield_e2828\", \"edge_x\": 0.5, \"span_y\": 1.2, "
                          "\"cell\": 0.1, \"height\": 0.1, \"count\": 2, \"length\": 0.6, "
                          "\"wall_height\": 0.6 }\n");
    snprintf(text, sizeof text,
             "{ \"name\": \"stepfield-short\", \"robot\": \"%s/robots/kenaf.json\", "
             "\"terrain\": { \"file\": \"%s\" }, \"start\": { \"x\": 0, \"y\": 0 }, "
             "\"duration_s\": 120, \"controller\": { \"type\": \"external\", "
             "\"must_exit\": false }, \"criterion\": { \"type\": \"trial\", "
             "\"course\": \"traverse\", \"repetitions\": 2 } }\n",
             cfgdir, terrain);
    h_write_file(trial, text);
    const char *cfg = h_path("console.json");
    h_write_file(cfg, "{\"joystick\": {\"device\": \"none\"}}\n");
    snprintf(cmd, sizeof cmd,
             "'%s' --trial '%s' --operator --capture '%s' --score '%s' -- '%s' --config '%s'",
             getenv("KN_SIM_RUN"), trial, cap, score, getenv("KN_CONSOLE"), cfg);
    c_window_start(&con, cmd);

    /* the robot runs a trial: the block shows, waiting at the gate */
    ck_assert_msg(c_wait_screen(&con, "TRIAL stepfield-short rep 1 of 2 AT GATE", H_LONG_MS * 3),
                  "no trial block:\n%s\n%s", c_screen(&con), c_stderr(&con));
    c_keys(&con, "2", true); /* the stairs preset: front flippers up */
    ck_assert(c_wait_screen(&con, "preset stairs", H_LONG_MS));
    c_keys(&con, "+++", true);
    ck_assert_msg(c_hold_until(&con, "w", true, repetition_counted, NULL, 60000),
                  "no repetition counted:\n%s", c_screen(&con));
    ck_assert(c_wait_screen(&con, "rep 2 of 2", H_LONG_MS));
    ck_assert(c_wait_screen(&con, "assist 0", H_LONG_MS));

    /* the reset asks first, then goes: an assist on the panel */
    c_keys(&con, "b", true);
    ck_assert_msg(c_wait_screen(&con, "press b again to confirm", H_LONG_MS), "%s", c_screen(&con));
    ck_assert(strstr(c_screen(&con), "assist 0") != NULL); /* nothing sent yet */
    c_keys(&con, "b", true);
    ck_assert_msg(c_wait_screen(&con, "reset to the start gate done", H_LONG_MS), "%s",
                  c_screen(&con));
    ck_assert_msg(c_wait_screen(&con, "assist 1", H_LONG_MS), "%s", c_screen(&con));

    /* quit: the run ends, the score is written as for a controller */
    c_keys(&con, "q", true);
    int rc = c_wait_exit(&con, H_LONG_MS * 3);
    ck_assert_msg(rc == 1, "kenaf-sim-run exit %d (1: the trial failed, 1 of 2):\n%s", rc,
                  c_stderr(&con));
    char path[1200];
    snprintf(path, sizeof path, "%s/score.json", score);
    const char *js = squeezed(h_file_text(path));
    ck_assert_msg(strstr(js, "\"repetitions_asked\":2,") != NULL, "%s", js);
    ck_assert_msg(strstr(js, "\"completed\":1,") != NULL, "%s", js);
    ck_assert_msg(strstr(js, "\"assist\":1}") != NULL, "%s", js);
    ck_assert_msg(strstr(js, "\"program\":\"kenaf-console\"") != NULL, "%s", js);
    snprintf(path, sizeof path, "%s/score.html", score);
    ck_assert_msg(access(path, R_OK) == 0, "no score.html");
    /* the session's capture holds TRIAL datagrams (type 0x88 after "KN\1") */
    FILE *f = fopen(cap, "rb");
    ck_assert_msg(f != NULL, "no capture");
    static unsigned char buf[1 << 24];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int trials = 0;
    for (size_t i = 0; i + 4 <= n; i++)
        trials += buf[i] == 'K' && buf[i + 1] == 'N' && buf[i + 2] == 1 && buf[i + 3] == 0x88;
    ck_assert_int_gt(trials, 0);
}
END_TEST

int main(void)
{
    if (!c_have_tmux())
        return C_SKIP;
    const struct h_case cases[] = {
        { "operator-trial", operator_trial, 240, NULL, NULL },
    };
    return h_run_cases("kenaf-sim-run --trial --operator with kenaf-console", cases,
                       sizeof cases / sizeof cases[0]);
}
