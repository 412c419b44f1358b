/* Fleets in one kenaf-engine world, over raw TCP like a daemon's links:
 * 32 robots driving in lockstep (deterministic whatever the load) while
 * two of them meet head-on and stay apart by their bodies; an INIT beyond
 * KN_ENGINE_MAX_ROBOTS answered with a clear refusal; and, in the bench
 * suite, the engine's CPU cost per robot and step for fleets of 1 to KN_ENGINE_MAX_ROBOTS
 * robots on flat ground and on a wide staircase (figures printed, never
 * asserted). */
#include <check.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_client.h"
#include "engine_limits.h"

#define WAIT_MS 240000

static struct ec_engine eng;
static struct ec_conn *conns; /* one per robot, each with its own buffers */
static int nconns;

static void fleet_open(int n, const char *const extra[])
{
    ec_engine_start(&eng, extra);
    conns = calloc((size_t)n, sizeof *conns);
    ck_assert_ptr_nonnull(conns);
    nconns = n;
    for (int i = 0; i < n; i++)
        ec_connect(&conns[i], eng.port);
}

static void init_at(struct ec_conn *c, int i, double x, double y, double yaw)
{
    ec_send(c,
            "INIT {ClassName USARBot.Kenaf} {Name R%d} {Location %.4f,%.4f,0.0000} "
            "{Rotation 0.0000,0.0000,%.4f}\r\n",
            i, x, y, yaw);
}

/* Steps the world ms milliseconds from conns[0] and reads every robot's
 * ground truth at the end into loc[i][0..1]. The waits are long: a bench
 * fleet of 64 robots pinned to a busy core may take minutes. */
static void step_and_read(int ms, double t_end, double (*loc)[2])
{
    ec_send(&conns[0], "KENAF {Cmd Step} {Ms %d}\r\n", ms);
    for (int i = 0; i < nconns; i++) {
        struct kn_usar_sen g;
        ck_assert_msg(ec_wait_sen(&conns[i], KN_USAR_SEN_GROUNDTRUTH, t_end - 1e-6, &g, WAIT_MS),
                      "no ground truth of robot %d at %.1f s: %s", i, t_end, h_stderr(&eng.proc));
        if (loc) {
            loc[i][0] = g.location[0];
            loc[i][1] = g.location[1];
        }
    }
    ck_assert_msg(ec_wait_kenaf(&conns[0], "Step", WAIT_MS), "no Step answer: %s",
                  h_stderr(&eng.proc));
}

static void fleet_close(void)
{
    for (int i = 0; i < nconns; i++)
        ec_close(&conns[i]);
    free(conns);
    conns = NULL;
    nconns = 0;
    h_signal(&eng.proc, SIGTERM);
    int st = h_wait_exit(&eng.proc, H_LONG_MS);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "engine exit %d: %s", st,
                  h_stderr(&eng.proc));
}

#define FLEET 32
#define BODY_HALF_LENGTH 0.25 /* Kenaf: 500 mm long (config/robots/kenaf.json) */

START_TEST(fleet_32)
{
    static const char *const STEP[] = { "--pace", "step", NULL };
    fleet_open(FLEET, STEP);
    /* 30 robots in a 6 x 5 grid, 2 m apart along x and 1.5 m across, all
     * driving +x; robots 30 and 31 face each other 1.6 m apart beside it */
    for (int i = 0; i < FLEET - 2; i++)
        init_at(&conns[i], i, 2.0 * (i % 6), 1.5 * (i / 6), 0);
    init_at(&conns[30], 30, 0, -2.0, 0);
    init_at(&conns[31], 31, 1.6, -2.0, KN_PI);
    for (int i = 0; i < FLEET; i++) {
        struct kn_usar_sta sta;
        ck_assert_msg(ec_wait_sta(&conns[i], 0, &sta, 3 * H_LONG_MS), "robot %d not spawned: %s", i,
                      h_stderr(&eng.proc));
    }
    ck_assert_int_eq(ec_stat_now(&conns[0], "Robots"), FLEET);
    double start[FLEET][2], end[FLEET][2];
    step_and_read(100, 0.1, start);
    for (int i = 0; i < FLEET; i++)
        ec_send(&conns[i], "DRIVE {Left 5} {Right 5}\r\n");
    /* every DRIVE is read before the Stats answers come back */
    for (int i = 0; i < FLEET; i++)
        ec_stats(&conns[i]);
    step_and_read(3000, 3.1, end);
    /* the grid drove, in step: about 0.38 m/s for 3 s */
    for (int i = 0; i < FLEET - 2; i++)
        ck_assert_msg(end[i][0] - start[i][0] > 0.6, "robot %d moved %.3f m", i,
                      end[i][0] - start[i][0]);
    double gap = end[31][0] - end[30][0];
    printf("fleet of %d: head-on pair %.3f m apart after 3 s (alone each would cover 1.1 m)\n",
           FLEET, gap);
    ck_assert_msg(gap > 0.45, "robots 30 and 31 passed into each other: gap %.3f m", gap);
    ck_assert_double_lt(end[30][0], 0.8);
    ck_assert_double_gt(end[31][0], 0.8);
    double dmin = INFINITY;
    for (int i = 0; i < FLEET; i++)
        for (int j = i + 1; j < FLEET; j++)
            dmin = fmin(dmin, hypot(end[i][0] - end[j][0], end[i][1] - end[j][1]));
    ck_assert_msg(dmin > 2 * BODY_HALF_LENGTH - 0.05, "two robot centres %.3f m apart", dmin);
    fleet_close();
}
END_TEST

START_TEST(fleet_full)
{
    static const char *const STEP[] = { "--pace", "step", NULL };
    const int n = KN_ENGINE_MAX_ROBOTS + 1;
    fleet_open(n, STEP);
    for (int i = 0; i < n - 1; i++)
        init_at(&conns[i], i, 2.0 * (i % 8), 2.0 * (i / 8), 0);
    for (int i = 0; i < n - 1; i++) {
        struct kn_usar_sta sta;
        ck_assert_msg(ec_wait_sta(&conns[i], 0, &sta, 3 * H_LONG_MS), "robot %d not spawned: %s", i,
                      h_stderr(&eng.proc));
    }
    /* one more: refused with the limit named, counted, logged */
    struct ec_conn *last = &conns[n - 1];
    init_at(last, n - 1, -5, -5, 0);
    ck_assert_msg(ec_wait_kenaf(last, "Init", H_LONG_MS), "no answer to the INIT too many");
    char want[128];
    snprintf(want, sizeof want, "{Status Failed} {Reason world full: this engine takes at most %d",
             KN_ENGINE_MAX_ROBOTS);
    ck_assert_msg(strstr(last->last, want) != NULL, "%s", last->last);
    ck_assert_int_eq(ec_stat_now(last, "InitFailed"), 1);
    ck_assert_int_eq(ec_stat(last, "Robots"), KN_ENGINE_MAX_ROBOTS);
    ck_assert_msg(strstr(h_stderr(&eng.proc), "world full") != NULL, "%s", h_stderr(&eng.proc));
    /* a robot leaves: the next INIT is taken */
    ec_close(&conns[0]);
    uint64_t end = h_now_us() + 3 * H_LONG_MS * 1000u;
    while (ec_stat_now(last, "Removed") < 1 && h_now_us() < end)
        ;
    init_at(last, n - 1, -5, -5, 0);
    struct kn_usar_sta sta;
    ck_assert(ec_wait_sta(last, 0, &sta, 3 * H_LONG_MS));
    fleet_close();
}
END_TEST

/* ---- bench: CPU per robot and step ------------------------------------------------ */

/* The engine process's user + system CPU time [s]. */
static double proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    ck_assert_ptr_nonnull(p);
    unsigned long ut = 0, st = 0;
    /* after the name: state and 10 fields, then utime and stime */
    ck_assert_int_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st),
                     2);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

struct bench_row {
    const char *terrain;
    int n;
    double rtf, us_per_robot_step;
};

/* n robots on a terrain (NULL: flat) climbing or driving +x for sim_ms:
 * the engine's CPU time over the simulated time. */
static struct bench_row bench_one(const char *terrain_file, int n, int sim_ms)
{
    const char *args[8] = { "--pace", "step", NULL };
    if (terrain_file) {
        /* the stairs of config/terrains/stairs.json, 12 m wide: 16 lanes;
         * written just before the engine reads it */
        h_write_file(terrain_file,
                     "{ \"type\": \"stairs\", \"rise\": 0.17, \"run\": 0.29, \"count\": 5, "
                     "\"edge_x\": 0.0, \"landing\": 2.0, \"span_y\": 12.0 }\n");
        args[2] = "--terrain";
        args[3] = terrain_file;
    }
    fleet_open(n, args);
    for (int i = 0; i < n; i++) {
        /* lanes 0.7 m apart (the robot is 0.4 m wide), 8 per row */
        double x = terrain_file ? -0.5 - 1.2 * (i / 16) : 1.5 * (i / 8);
        double y = terrain_file ? 0.7 * (i % 16) - 5.25 : 0.7 * (i % 8) - 2.45;
        init_at(&conns[i], i, x, y, 0);
    }
    for (int i = 0; i < n; i++) {
        struct kn_usar_sta sta;
        ck_assert(ec_wait_sta(&conns[i], 0, &sta, 3 * H_LONG_MS));
    }
    step_and_read(100, 0.1, NULL);
    for (int i = 0; i < n; i++)
        ec_send(&conns[i], "DRIVE {Left 4} {Right 4}\r\n");
    for (int i = 0; i < n; i++)
        ec_stats(&conns[i]);
    double c0 = proc_cpu_s(eng.proc.pid);
    step_and_read(sim_ms, 0.1 + sim_ms / 1000.0, NULL);
    double cpu = proc_cpu_s(eng.proc.pid) - c0;
    fleet_close();
    struct bench_row r = { terrain_file ? "stairs-wide" : "flat", n, sim_ms / 1000.0 / cpu,
                           cpu * 1e6 / ((double)sim_ms * n) };
    return r;
}

START_TEST(fleet_bench)
{
    /* pinned to one core, as `taskset -c 0`; the engine inherits it */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    /* the terrain file (written by bench_one) in the test's scratch directory */
    char terrain[512];
    snprintf(terrain, sizeof terrain, "%s", h_path("stairs-wide.json"));
    /* the suite runs the sizes the figures are about; KN_BENCH_FULL=1 the
     * whole curve (about two minutes) */
    static const int full_n[] = { 1, 8, 16, 32, 48 }, flat_q[] = { 1, 32 }, stairs_q[] = { 16 };
    bool full = getenv("KN_BENCH_FULL") != NULL;
    const int *flat_n = full ? full_n : flat_q, *stairs_n = full ? full_n : stairs_q;
    size_t nflat = full ? 5 : 2, nstairs = full ? 5 : 1;
    struct bench_row rows[16];
    int nr = 0;
    for (size_t i = 0; i < nflat; i++)
        rows[nr++] = bench_one(NULL, flat_n[i], 4000);
    for (size_t i = 0; i < nstairs; i++)
        rows[nr++] = bench_one(terrain, stairs_n[i], 6000);
    printf("%-12s %6s %14s %18s\n", "terrain", "robots", "real-time x", "us/robot/step");
    for (int i = 0; i < nr; i++)
        printf("%-12s %6d %14.2f %18.1f\n", rows[i].terrain, rows[i].n, rows[i].rtf,
               rows[i].us_per_robot_step);
}
END_TEST

int main(void)
{
    h_not_wrapped("fleet-bench", "a measurement: valgrind's CPU times say nothing");
    const struct h_case cases[] = {
        { "fleet-32", fleet_32, 120, NULL, NULL },
        { "fleet-full", fleet_full, 120, NULL, NULL },
        { "fleet-bench", fleet_bench, 600, NULL, NULL },
    };
    return h_run_cases("kenaf-engine fleets", cases, sizeof cases / sizeof cases[0]);
}
