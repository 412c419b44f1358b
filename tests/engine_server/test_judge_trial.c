/* A judged trial, live (kenaf-engine --judge of a trial file, from
 * outside, in lockstep as kenaf-simd drives it): the trial's state comes
 * as KENAF {Cmd Trial} lines (usarsim_trial.h) from the spawn on;
 * TrialReset puts the robot back at the start gate, at rest, and counts an
 * assist; TrialEstop counts an e-stop fault; both appear in the verdict's
 * trial keys; a judged scenario that is no trial refuses them. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "eng_client.h"
#include "usarsim_trial.h"

static struct ec_conn ca;
static struct ec_engine eng;

/* A 2-repetition trial on the stepfield of 30 s, written into the scratch
 * directory. */
static const char *trial_file(void)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s", h_path("short-stepfield.json"));
    char text[2048];
    const char *dir = getenv("KN_CONFIG_DIR");
    snprintf(text, sizeof text,
             "{ \"name\": \"short-stepfield\", \"robot\": \"%s/robots/kenaf.json\", "
             "\"terrain\": { \"file\": \"%s/terrains/apparatus/stepfield-e2828.json\" }, "
             "\"start\": { \"x\": 0, \"y\": 0 }, \"duration_s\": 30, \"controller\": "
             "{ \"type\": \"external\", \"must_exit\": false }, \"criterion\": "
             "{ \"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 2 } }\n",
             dir, dir);
    h_write_file(p, text);
    return p;
}

static void start(const char *scenario)
{
    char v[512];
    snprintf(v, sizeof v, "%s", h_path("verdict"));
    const char *extra[] = { "--pace", "step", "--judge", scenario, "--judge-verdict", v, NULL };
    ec_engine_start(&eng, extra);
    ec_connect(&ca, eng.port);
    ec_send(&ca, "INIT {ClassName USARBot.Kenaf} {Name R1} {Location 0.0000,0.0000,0.0000} "
                 "{Rotation 0.0000,0.0000,0.0000}\r\n");
}

/* The next trial line (a push or a command's answer), parsed. */
static struct kn_krp_trial next_trial(void)
{
    ck_assert_msg(ec_wait_kenaf(&ca, "Trial", H_LONG_MS), "no trial line; the engine said:\n%s",
                  h_stderr(&eng.proc));
    struct kn_krp_trial t;
    ck_assert_int_eq(kn_usartrial_parse(&ca.tl, &t), KN_USAR_OK);
    return t;
}

/* Lets ms of simulated time pass; the robot's ground-truth x at the end
 * (the last GroundTruth line before the Step's answer). */
static double step_x(int ms)
{
    ec_send(&ca, "KENAF {Cmd Step} {Ms %d}\r\n", ms);
    double x = NAN;
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    while (h_now_us() < end) {
        ck_assert(ec_line(&ca, H_LONG_MS));
        if (kn_usar_kind(&ca.tl) == KN_USAR_K_SEN) {
            static struct kn_usar_sen sen;
            if (kn_usar_parse_sen(&ca.tl, &sen) == KN_USAR_OK &&
                sen.sen_type == KN_USAR_SEN_GROUNDTRUTH)
                x = sen.location[0];
        } else if (kn_usar_str_is(ca.tl.head, "KENAF") && strstr(ca.last, "{Cmd Step}")) {
            ck_assert_msg(!isnan(x), "no GroundTruth line during the step");
            return x;
        }
    }
    ck_abort_msg("no answer to Step");
    return NAN;
}

/* The state at the spawn; driven 2 s forward; TrialReset: back at the
 * start (x within 5 cm of it), one assist; TrialEstop: one e-stop; the
 * verdict's trial keys count both. */
START_TEST(reset_and_estop)
{
    start(trial_file());
    struct kn_krp_trial t = next_trial();
    ck_assert_str_eq(t.name, "short-stepfield");
    ck_assert_uint_eq(t.reps, 2);
    ck_assert_uint_eq(t.rep, 0);
    ck_assert_uint_eq(t.faults, 0);
    ck_assert_uint_eq(t.limit_ms, 30000);
    ck_assert_uint_eq(t.flags & KN_KRP_TRIAL_F_ENDED, 0);
    double x0 = step_x(100);
    ec_send(&ca, "DRIVE {Left 5} {Right 5}\r\n");
    double x1 = step_x(2000);
    ck_assert_msg(x1 > x0 + 0.2, "the robot did not move: %.3f -> %.3f", x0, x1);
    ec_send(&ca, "KENAF {Cmd TrialReset}\r\n");
    do
        t = next_trial();
    while (t.by_kind[KN_KRP_TF_ASSIST] == 0);
    ck_assert_uint_eq(t.faults, 1);
    ck_assert_uint_eq(t.rep_faults, 1);
    ck_assert_uint_eq(t.flags & KN_KRP_TRIAL_F_UNDER_WAY, 0);
    ck_assert_uint_le(t.left_ms, 28000);
    double x2 = step_x(200);
    ck_assert_msg(fabs(x2 - x0) < 0.05, "not back at the start: %.3f (start %.3f)", x2, x0);
    ec_send(&ca, "KENAF {Cmd TrialEstop}\r\n");
    do
        t = next_trial();
    while (t.by_kind[KN_KRP_TF_ESTOP] == 0);
    ck_assert_uint_eq(t.faults, 2);
    ck_assert_int_eq(ec_stat_now(&ca, "TrialResets"), 1);
    ck_assert_int_eq(ec_stat_now(&ca, "TrialEstops"), 1);
    h_signal(&eng.proc, SIGTERM);
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d", st);
    const char *v = h_file_text(h_path("verdict"));
    ck_assert_msg(strstr(v, "trial_faults_assist=1\n") != NULL, "verdict:\n%s", v);
    ck_assert_msg(strstr(v, "trial_faults_estop=1\n") != NULL, "verdict:\n%s", v);
}
END_TEST

/* A judged scenario that is no trial: no trial line, and the commands
 * are refused with a reason. */
START_TEST(no_trial_refused)
{
    char scen[1024];
    snprintf(scen, sizeof scen, "%s/scenarios/ci/climb-step.json", getenv("KN_CONFIG_DIR"));
    start(scen);
    step_x(100);
    ec_send(&ca, "KENAF {Cmd TrialReset}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "TrialReset", H_LONG_MS));
    struct kn_usar_str s;
    ck_assert_int_eq(kn_usar_get_str(&ca.tl, "Status", &s), KN_USAR_OK);
    ck_assert(kn_usar_str_is(s, "Failed"));
    ck_assert_int_eq(ec_stat_now(&ca, "TrialLines"), 0);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "trial-reset", reset_and_estop, 60, NULL, NULL },
        { "trial-none", no_trial_refused, 30, NULL, NULL },
    };
    return h_run_cases("kenaf-engine --judge, a trial live", cases, sizeof cases / sizeof cases[0]);
}
