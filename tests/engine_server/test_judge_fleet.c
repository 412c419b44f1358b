/* kenaf-engine --judge --judge-robots, from outside: a fleet judged in one
 * lockstep world, driven by raw USARSim clients as kenaf-simd's robots
 * would. Each robot spawns at the start the scenario's "robots" gives its
 * INIT's name; the world steps only when every robot has a Step pending,
 * to the nearest end; "exited NAME" on the control FIFO lets the world go
 * on without that robot, and the server stops once every program has
 * ended, with one verdict per robot; names the scenario does not declare
 * are refused at the start. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_client.h"

static struct ec_conn ca, cb, cs;
static struct ec_engine eng;
static char g_scen[1024], g_fifo[1024], g_verdict[1024];

/* The two robots 3 m apart, alpha facing +x, bravo +y. */
static void write_scenario(void)
{
    snprintf(g_scen, sizeof g_scen, "%s", h_path("fleet.json"));
    char text[2048];
    snprintf(text, sizeof text,
             "{ \"name\": \"fleet\", \"robot\": \"%s/robots/kenaf.json\", \"terrain\": "
             "{ \"file\": \"%s/terrains/flat.json\" }, \"robots\": ["
             " { \"name\": \"alpha\", \"start\": { \"x\": 0, \"y\": 0 } },"
             " { \"name\": \"bravo\", \"start\": { \"x\": 0, \"y\": 3, \"yaw_deg\": 90 } } ],"
             " \"duration_s\": 30, \"controller\": { \"type\": \"external\" },"
             " \"criterion\": { \"type\": \"rotate\", \"yaw_rad\": 0, \"tol_rad\": 1, "
             "\"drift_m\": 1 } }\n",
             getenv("KN_CONFIG_DIR"), getenv("KN_CONFIG_DIR"));
    h_write_file(g_scen, text);
}

static void start_fleet(void)
{
    write_scenario();
    snprintf(g_fifo, sizeof g_fifo, "%s", h_path("control"));
    snprintf(g_verdict, sizeof g_verdict, "%s", h_path("verdict"));
    ck_assert_int_eq(mkfifo(g_fifo, 0600), 0);
    const char *extra[] = { "--pace",
                            "step",
                            "--judge",
                            g_scen,
                            "--judge-verdict",
                            g_verdict,
                            "--judge-robots",
                            "alpha,bravo",
                            "--judge-control",
                            g_fifo,
                            NULL };
    ec_engine_start(&eng, extra);
    ec_connect(&ca, eng.port);
    ec_connect(&cb, eng.port);
    ec_connect(&cs, eng.port);
}

/* A fleet's INITs are answered once every robot's is in (the robots are
 * then spawned in the scenario's order): send them all, then check. */
static void send_init(struct ec_conn *c, const char *name)
{
    ec_send(c, "INIT {ClassName USARBot.Kenaf} {Name %s} {Location 9.0000,9.0000,0.0000}\r\n",
            name);
}

static void check_spawned(struct ec_conn *c, double x, double y)
{
    struct kn_usar_sen gt;
    ck_assert(ec_wait_sen(c, KN_USAR_SEN_GROUNDTRUTH, 0, &gt, H_LONG_MS));
    /* USARSim's frame: y mirrored */
    ck_assert_double_eq_tol(gt.location[0], x, 0.01);
    ck_assert_double_eq_tol(gt.location[1], -y, 0.01);
}

static void init_fleet(void)
{
    send_init(&ca, "alpha");
    send_init(&cb, "bravo");
    check_spawned(&ca, 0, 0);
    check_spawned(&cb, 0, 3);
}

static double step_time(struct ec_conn *c)
{
    ck_assert_msg(ec_wait_kenaf(c, "Step", H_LONG_MS), "no Step reply");
    struct kn_usar_str st;
    ck_assert_int_eq(kn_usar_get_str(&c->tl, "Status", &st), KN_USAR_OK);
    ck_assert_msg(kn_usar_str_is(st, "OK"), "Step: %s", c->last);
    double t;
    ck_assert_int_eq(kn_usar_get_double(&c->tl, "Time", &t), KN_USAR_OK);
    return t;
}

static int64_t world_steps(void)
{
    return ec_stat_now(&cs, "Steps");
}

static void control(const char *line)
{
    int fd = open(g_fifo, O_WRONLY | O_NONBLOCK);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
    close(fd);
}

static const char *verdict_of(const char *robot, const char *key)
{
    static char val[512];
    char path[1100], want[64];
    snprintf(path, sizeof path, "%s-%s", g_verdict, robot);
    snprintf(want, sizeof want, "\n%s=", key);
    const char *t = h_file_text(path);
    const char *p = strstr(t, want);
    val[0] = '\0';
    if (p) {
        p += strlen(want);
        size_t n = strcspn(p, "\n");
        snprintf(val, sizeof val, "%.*s", (int)n, p);
    }
    return val;
}

/* Each at its start whatever INIT asks; alpha's Step waits for bravo's;
 * the world goes to the nearest end (bravo's 50 ms), then on to alpha's
 * 100 ms once bravo asks again; a second Step while one runs is refused. */
START_TEST(barrier)
{
    start_fleet();
    init_fleet();
    ec_send(&ca, "KENAF {Cmd Step} {Ms 100}\r\n");
    /* the second is refused, so the first is in: alpha asked, bravo did
     * not, and the world has not moved for alpha */
    ec_send(&ca, "KENAF {Cmd Step} {Ms 100}\r\n");
    ck_assert(ec_wait_kenaf(&ca, "Step", H_LONG_MS));
    ck_assert_msg(strstr(ca.last, "one Step at a time") != NULL, "%s", ca.last);
    ck_assert_int_eq(world_steps(), 0);
    ec_send(&cb, "KENAF {Cmd Step} {Ms 50}\r\n");
    ck_assert_double_eq_tol(step_time(&cb), 0.05, 1e-9);
    ck_assert_int_eq(world_steps(), 50);
    ec_send(&cb, "KENAF {Cmd Step} {Ms 50}\r\n");
    ck_assert_double_eq_tol(step_time(&cb), 0.1, 1e-9);
    ck_assert_double_eq_tol(step_time(&ca), 0.1, 1e-9);
    ck_assert_int_eq(world_steps(), 100);
}
END_TEST

/* bravo's program ends: alpha steps on alone, bravo's verdict is made at
 * 0.1 s; alpha's ends too: the server stops by itself, two verdicts. */
START_TEST(exited)
{
    start_fleet();
    init_fleet();
    ec_send(&ca, "KENAF {Cmd Step} {Ms 100}\r\n");
    ec_send(&cb, "KENAF {Cmd Step} {Ms 100}\r\n");
    ck_assert_double_eq_tol(step_time(&ca), 0.1, 1e-9);
    ck_assert_double_eq_tol(step_time(&cb), 0.1, 1e-9);
    /* a DRIVE after its program's end is not obeyed: bravo stays put */
    control("exited bravo\n");
    for (int i = 0; i < 1000 && !strstr(h_stderr(&eng.proc), "robot bravo ended"); i++)
        h_sleep_ms(10);
    ck_assert_msg(strstr(h_stderr(&eng.proc), "robot bravo ended"), "%s", h_stderr(&eng.proc));
    int64_t ignored = ec_stat_now(&cs, "Ignored");
    ec_send(&cb, "DRIVE {Left 3.0} {Right 3.0}\r\n");
    for (int i = 0; i < 500 && ec_stat_now(&cs, "Ignored") == ignored; i++)
        h_sleep_ms(10);
    ck_assert_int_eq(ec_stat_now(&cs, "Ignored"), ignored + 1);
    ec_send(&ca, "KENAF {Cmd Step} {Ms 400}\r\n");
    ck_assert_double_eq_tol(step_time(&ca), 0.5, 1e-9);
    struct kn_usar_sen gt;
    ck_assert(ec_wait_sen(&cb, KN_USAR_SEN_GROUNDTRUTH, 0.45, &gt, H_LONG_MS));
    ck_assert_double_eq_tol(gt.location[0], 0, 0.005);
    ck_assert_double_eq_tol(gt.location[1], -3, 0.005);
    control("nonsense\nexited charlie\nexited alpha\n");
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1, "the engine did not stop when every program had ended");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d: %s", st,
                  h_stderr(&eng.proc));
    ck_assert_str_eq(verdict_of("alpha", "robot"), "alpha");
    ck_assert_str_eq(verdict_of("alpha", "verdict"), "pass");
    ck_assert_str_eq(verdict_of("alpha", "mode"), "none");
    ck_assert_str_eq(verdict_of("alpha", "sim_s"), "0.500");
    ck_assert_str_eq(verdict_of("alpha", "samples"), "51");
    ck_assert_str_eq(verdict_of("bravo", "robot"), "bravo");
    ck_assert_str_eq(verdict_of("bravo", "sim_s"), "0.100");
    ck_assert_str_eq(verdict_of("bravo", "mode"), "none");
    ck_assert_str_eq(verdict_of("bravo", "samples"), "11");
    ck_assert_msg(strstr(h_stderr(&eng.proc), "not understood") != NULL, "%s", h_stderr(&eng.proc));
    ck_assert_msg(strstr(h_stderr(&eng.proc), "no robot charlie") != NULL, "%s",
                  h_stderr(&eng.proc));
}
END_TEST

/* Names the scenario does not declare, or a declared robot left out. */
START_TEST(refused)
{
    write_scenario();
    const char *exe = getenv("KN_ENGINE");
    const char *names[] = { "alpha,charlie", "alpha", "alpha,alpha", "al pha" };
    const char *want[] = { "declares no robot charlie (its robots: alpha, bravo)",
                           "declares robot bravo: give it a program too", "named twice",
                           "robot name" };
    for (int i = 0; i < 4; i++) {
        char *argv[] = { (char *)exe, "--listen", "127.0.0.1:0",    "--judge",        g_scen,
                         "--pace",    "step",     "--judge-robots", (char *)names[i], NULL };
        struct h_proc p;
        h_spawn(&p, argv, NULL, "judge.stderr");
        int st = h_wait_exit(&p, H_LONG_MS);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: exit %d", names[i], st);
        ck_assert_msg(strstr(h_stderr(&p), want[i]) != NULL, "%s: %s", names[i], h_stderr(&p));
    }
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "fleet-barrier", barrier, 60, NULL, NULL },
        { "fleet-exited", exited, 60, NULL, NULL },
        { "fleet-refuse", refused, 30, NULL, NULL },
    };
    return h_run_cases("kenaf-engine --judge --judge-robots", cases,
                       sizeof cases / sizeof cases[0]);
}
