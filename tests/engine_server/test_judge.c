/* kenaf-engine --judge, from outside: a real engine judging a scenario
 * with an external controller, driven by a raw USARSim client in lockstep
 * as kenaf-simd would. The first robot starts at the scenario's start
 * whatever INIT asks; samples fall every 10 ms of simulated time; SIGTERM
 * writes the verdict as it stands; the time limit fails waiting Steps and
 * stops the server; a client that lets no time pass, or whose robot
 * leaves, is an error; Reset is refused; a scenario whose controller is
 * not external is refused. The verdict's mode says what decided it, and
 * the plot's title says the verdict. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "eng_client.h"

static struct ec_conn ca;
static struct ec_engine eng;

/* The verdict's value for key, "" when absent (static buffer). */
static const char *verdict(const char *path, const char *key)
{
    static char val[512];
    const char *t = h_file_text(path);
    char want[64];
    snprintf(want, sizeof want, "%s=", key);
    val[0] = '\0';
    for (const char *l = t; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (strncmp(l, want, strlen(want)) == 0) {
            size_t k = n - strlen(want) < sizeof val - 1 ? n - strlen(want) : sizeof val - 1;
            memcpy(val, l + strlen(want), k);
            val[k] = '\0';
            break;
        }
        l = e ? e + 1 : NULL;
    }
    return val;
}

static int lines_of(const char *path)
{
    int n = 0;
    for (const char *t = h_file_text(path); *t; t++)
        n += *t == '\n';
    return n;
}

/* A scenario file of the CI set, by name. */
static const char *ci(const char *name)
{
    static char p[1024];
    const char *dir = getenv("KN_CONFIG_DIR");
    ck_assert_msg(dir != NULL, "KN_CONFIG_DIR not set");
    snprintf(p, sizeof p, "%s/scenarios/ci/%s", dir, name);
    return p;
}

static void start_judge(const char *scenario, const char *idle)
{
    char v[512], c[512];
    snprintf(v, sizeof v, "%s", h_path("verdict"));
    snprintf(c, sizeof c, "%s", h_path("run.csv"));
    const char *extra[] = { "--pace",          "step", "--judge",     scenario,
                            "--judge-verdict", v,      "--judge-csv", c,
                            "--judge-idle",    idle,   NULL };
    ec_engine_start(&eng, extra);
    ec_connect(&ca, eng.port);
}

/* INIT far from the scenario's start: the robot appears at x = -0.7 m on
 * the step scenario all the same; one second in lockstep; SIGTERM: the
 * verdict (not crossed: fail) and 101 samples, 0 to 1 s. */
START_TEST(spawn_at_start_and_verdict)
{
    start_judge(ci("climb-step.json"), "30");
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 3.0000,2.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
    struct kn_usar_sen gt;
    ck_assert(ec_wait_sen(&ca, KN_USAR_SEN_GROUNDTRUTH, 0, &gt, H_LONG_MS));
    ck_assert_double_eq_tol(gt.location[0], -0.7, 0.01);
    ck_assert_double_eq_tol(gt.location[1], 0.0, 0.01);
    ec_send(&ca, "KENAF {Cmd Step} {Ms 1000}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    double t;
    ck_assert_int_eq(kn_usar_get_double(&ca.tl, "Time", &t), KN_USAR_OK);
    ck_assert_double_eq_tol(t, 1.0, 1e-9);
    /* the judged world stays the scenario's */
    ec_send(&ca, "KENAF {Cmd Reset}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Reset", H_LONG_MS));
    struct kn_usar_str st_reset;
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &st_reset), KN_USAR_OK);
    ck_assert(kn_usar_str_is(st_reset, "Failed"));
    h_signal(&eng.proc, SIGTERM);
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d: %s", st,
                  h_stderr(&eng.proc));
    const char *v = h_path("verdict");
    ck_assert_str_eq(verdict(v, "scenario"), "climb-step");
    ck_assert_str_eq(verdict(v, "verdict"), "fail");
    ck_assert_str_eq(verdict(v, "samples"), "101");
    ck_assert_str_eq(verdict(v, "sim_s"), "1.000");
    ck_assert_str_eq(verdict(v, "time_limit"), "0");
    ck_assert_str_eq(verdict(v, "must_exit"), "1");
    /* stopped before the time limit: the crossing failed, it did not time out */
    ck_assert_str_eq(verdict(v, "mode"), "criterion");
    ck_assert_msg(strstr(verdict(v, "why"), "CoG x") != NULL, "why: %s", verdict(v, "why"));
    ck_assert_int_eq(lines_of(h_path("run.csv")), 102); /* header + 101 */
}
END_TEST

/* A scenario of 0.5 s: a Step past it is refused once the time is up, the
 * server stops by itself, 51 samples, time_limit 1. */
START_TEST(time_limit_stops_the_run)
{
    char scen[1024];
    snprintf(scen, sizeof scen, "%s", h_path("short.json"));
    char text[2048];
    snprintf(text, sizeof text,
             "{ \"name\": \"short\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
             "{ \"file\": \"%s/terrains/flat.json\" }, \"start\": { \"x\": 0 }, "
             "\"duration_s\": 0.5, \"controller\": { \"type\": \"external\", "
             "\"must_exit\": false }, \"criterion\": { \"type\": \"straight\", "
             "\"target\": [0, 0] } }\n",
             getenv("KN_CONFIG_DIR"), getenv("KN_CONFIG_DIR"));
    h_write_file(scen, text);
    start_judge(scen, "30");
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 0.0000,0.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    ec_send(&ca, "KENAF {Cmd Step} {Ms 2000}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    struct kn_usar_str s;
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &s), KN_USAR_OK);
    ck_assert(kn_usar_str_is(s, "Failed"));
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "the engine did not stop at the time limit");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d", st);
    const char *v = h_path("verdict");
    ck_assert_str_eq(verdict(v, "time_limit"), "1");
    ck_assert_str_eq(verdict(v, "must_exit"), "0");
    ck_assert_str_eq(verdict(v, "samples"), "51");
    ck_assert_str_eq(verdict(v, "verdict"), "pass"); /* stood still at the target */
    ck_assert_str_eq(verdict(v, "mode"), "none");
}
END_TEST

/* No Step at all once the robot is in the world: an error after --judge-idle. */
START_TEST(idle_client_is_an_error)
{
    start_judge(ci("square.json"), "0.5");
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 0.0000,0.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    double w0 = h_now_us() / 1e6;
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "the engine waited on");
    ck_assert_double_lt(h_now_us() / 1e6 - w0, 5.0);
    const char *v = h_path("verdict");
    ck_assert_str_eq(verdict(v, "verdict"), "error");
    ck_assert_str_eq(verdict(v, "mode"), "error");
    ck_assert_str_eq(verdict(v, "idle"), "1");
    ck_assert_msg(strstr(verdict(v, "why"), "never lets time pass") != NULL, "why: %s",
                  verdict(v, "why"));
}
END_TEST

/* The judged robot's connection closes mid-run: nothing more to judge,
 * the verdict an error that says so. */
START_TEST(robot_gone_is_an_error)
{
    start_judge(ci("square.json"), "30");
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 0.0000,0.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
    ec_send(&ca, "KENAF {Cmd Step} {Ms 100}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ec_close(&ca);
    h_sleep_ms(200);
    h_signal(&eng.proc, SIGTERM);
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d", st);
    const char *v = h_path("verdict");
    ck_assert_str_eq(verdict(v, "verdict"), "error");
    ck_assert_str_eq(verdict(v, "mode"), "error");
    ck_assert_msg(strstr(verdict(v, "why"), "left the world") != NULL, "why: %s",
                  verdict(v, "why"));
    ck_assert_str_eq(verdict(v, "samples"), "11");
}
END_TEST

/* A scenario on flat ground with the given start, duration, must_exit,
 * criterion and limits, judged in lockstep with a plot: the client spawns
 * the robot and asks for 2 s, which the time limit (or a broken limit)
 * cuts short; the engine stops by itself. Checks the verdict, its mode
 * and the plot's title. */
static void judge_mode(const char *start, double duration, bool must_exit, const char *criterion,
                       const char *limits, const char *want_verdict, const char *want_mode,
                       const char *want_title)
{
    char scen[1024], svg[1024], text[4096];
    snprintf(scen, sizeof scen, "%s", h_path("mode.json"));
    snprintf(svg, sizeof svg, "%s", h_path("mode.svg"));
    const char *dir = getenv("KN_CONFIG_DIR");
    snprintf(text, sizeof text,
             "{ \"name\": \"mode\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
             "{ \"file\": \"%s/terrains/flat.json\" }, \"start\": %s, \"duration_s\": %g, "
             "\"controller\": { \"type\": \"external\", \"must_exit\": %s }, "
             "\"criterion\": %s%s%s }\n",
             dir, dir, start, duration, must_exit ? "true" : "false", criterion,
             limits ? ", \"limits\": " : "", limits ? limits : "");
    h_write_file(scen, text);
    char v[512];
    snprintf(v, sizeof v, "%s", h_path("verdict"));
    const char *extra[] = { "--pace", "step",        "--judge", scen, "--judge-verdict",
                            v,        "--judge-svg", svg,       NULL };
    ec_engine_start(&eng, extra);
    ec_connect(&ca, eng.port);
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 0.0000,0.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(&ca, 0, &sta, H_LONG_MS));
    ec_send(&ca, "KENAF {Cmd Step} {Ms 2000}\r\n");
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "the engine did not stop by itself");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d: %s", st,
                  h_stderr(&eng.proc));
    ck_assert_str_eq(verdict(v, "verdict"), want_verdict);
    ck_assert_msg(strcmp(verdict(v, "mode"), want_mode) == 0, "mode %s, want %s (why: %s)",
                  verdict(v, "mode"), want_mode, verdict(v, "why"));
    const char *plot = h_file_text(svg);
    ck_assert_msg(strstr(plot, want_title) != NULL, "no \"%s\" in the plot", want_title);
}

static const char *const STILL = "{ \"type\": \"straight\", \"target\": [0, 0] }";
static const char *const CROSS_TILT = "{ \"type\": \"cross\", \"pass_x\": 5, \"max_tilt_deg\": 5 }";

/* The robot stands at its target, which passes, but its program was still
 * running at the time limit: must_exit fails it, a time-out. */
START_TEST(mode_time_out)
{
    judge_mode("{ \"x\": 0 }", 0.3, true, STILL, NULL, "fail", "time-out", "mode: FAIL (time-out)");
    ck_assert_msg(strstr(verdict(h_path("verdict"), "why"),
                         "did not end within the scenario's 0.3 s (pass: ") != NULL,
                  "why: %s", verdict(h_path("verdict"), "why"));
}
END_TEST

/* The same run without must_exit passes, and its plot says so. */
START_TEST(mode_none)
{
    judge_mode("{ \"x\": 0 }", 0.3, false, STILL, NULL, "pass", "none", "mode: PASS<");
}
END_TEST

/* Spawned pitched 10 deg: a tilt limit of 5 deg breaks at once. */
START_TEST(mode_limit)
{
    judge_mode("{ \"x\": 0, \"pitch_deg\": 10 }", 1.0, false, STILL, "{ \"max_tilt_deg\": 5 }",
               "fail", "limit", "mode: FAIL (limit)");
}
END_TEST

/* The same start against a crossing that allows 5 deg: a tip-over. */
START_TEST(mode_tip_over)
{
    judge_mode("{ \"x\": 0, \"pitch_deg\": 10 }", 0.3, false, CROSS_TILT, NULL, "fail", "tip-over",
               "mode: FAIL (tip-over)");
}
END_TEST

/* Standing before a crossing that wants progress within 0.2 s: a stall. */
START_TEST(mode_stall)
{
    judge_mode("{ \"x\": 0 }", 1.0, false,
               "{ \"type\": \"cross\", \"pass_x\": 5, \"stall_s\": 0.2 }", NULL, "fail", "stall",
               "mode: FAIL (stall)");
}
END_TEST

/* Standing before a crossing until the time limit: a time-out. */
START_TEST(mode_cross_time_out)
{
    judge_mode("{ \"x\": 0 }", 0.3, false, "{ \"type\": \"cross\", \"pass_x\": 5 }", NULL, "fail",
               "time-out", "mode: FAIL (time-out)");
}
END_TEST

/* A scenario with the engine's own controller is not for --judge. */
START_TEST(refuses_internal_controller)
{
    char scen[1024];
    snprintf(scen, sizeof scen, "%s/scenarios/pecka-1-straight.json", getenv("KN_CONFIG_DIR"));
    const char *exe = getenv("KN_ENGINE");
    char *argv[] = { (char *)exe, "--listen", "127.0.0.1:0", "--judge", scen, NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "judge.stderr");
    int st = h_wait_exit(&p, H_LONG_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exit %d", st);
    ck_assert_msg(strstr(h_stderr(&p), "not \"external\"") != NULL, "%s", h_stderr(&p));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "spawn-verdict", spawn_at_start_and_verdict, 60, NULL, NULL },
        { "time-limit", time_limit_stops_the_run, 60, NULL, NULL },
        { "idle", idle_client_is_an_error, 60, NULL, NULL },
        { "gone", robot_gone_is_an_error, 30, NULL, NULL },
        { "refuse", refuses_internal_controller, 30, NULL, NULL },
        { "mode-time-out", mode_time_out, 30, NULL, NULL },
        { "mode-none", mode_none, 30, NULL, NULL },
        { "mode-limit", mode_limit, 30, NULL, NULL },
        { "mode-tip-over", mode_tip_over, 30, NULL, NULL },
        { "mode-stall", mode_stall, 30, NULL, NULL },
        { "mode-cross-time-out", mode_cross_time_out, 30, NULL, NULL },
    };
    return h_run_cases("kenaf-engine --judge", cases, sizeof cases / sizeof cases[0]);
}
