/* The 'bench' suite: runs kenaf-bench in quick mode, one benchmark per
 * test (argv[1] names it), and fails only on functional errors: a crash or
 * non-zero exit, nothing received, JSON that does not parse or lacks what
 * the benchmark must report. Timing is never asserted; targets may pass or
 * fail, they only have to be well-formed. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <cjson/cJSON.h>

#include "harness_proc.h"
#include "harness_suite.h"

#define RUN_TIMEOUT_S 540

static const char *which;
static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kn-bench-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    if (dir[0] && !getenv("KN_KEEP_TMP"))
        h_remove_tree(dir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n > 0 ? (size_t)n + 1 : 1);
    size_t got = b && n > 0 ? fread(b, 1, (size_t)n, f) : 0;
    if (b)
        b[got] = '\0';
    fclose(f);
    return b;
}

/* Runs kenaf-bench with args; returns its wait status (the test fails on
 * a timeout). Output goes to dir/out.txt. */
static int run_bench(char *const args[])
{
    const char *exe = getenv("KN_BENCH");
    ck_assert_msg(exe != NULL, "KN_BENCH not set");
    char out[128];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)exe;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(exe, argv);
        _exit(127);
    }
    time_t end = time(NULL) + RUN_TIMEOUT_S;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (time(NULL) > end) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            char *text = slurp(out);
            ck_abort_msg("kenaf-bench did not finish in %d s:\n%s", RUN_TIMEOUT_S,
                         text ? text : "");
        }
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    }
}

static const cJSON *at(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(t))
                             : cJSON_GetObjectItemCaseSensitive(o, t);
    return o;
}

static double num(const cJSON *root, const char *path)
{
    const cJSON *v = at(root, path);
    ck_assert_msg(cJSON_IsNumber(v), "JSON has no number at %s", path);
    return v->valuedouble;
}

static void positive(const cJSON *root, const char *path)
{
    double v = num(root, path);
    ck_assert_msg(isfinite(v) && v > 0, "%s = %g, expected > 0", path, v);
}

/* Every targets array: entries with metric, op, limit and a boolean pass. */
static int check_targets(const cJSON *o)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, o)
    {
        if (c->string && strcmp(c->string, "targets") == 0) {
            ck_assert(cJSON_IsArray(c));
            const cJSON *t;
            cJSON_ArrayForEach(t, c)
            {
                ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(t, "metric")));
                ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(t, "op")));
                ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t, "limit")));
                ck_assert(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(t, "pass")));
                n++;
            }
        } else if (cJSON_IsObject(c)) {
            n += check_targets(c);
        }
    }
    return n;
}

/* Runs one benchmark in quick mode and returns its parsed JSON. */
static cJSON *quick(const char *name, char *const extra[])
{
    char json[128];
    snprintf(json, sizeof json, "%s/out.json", dir);
    char *args[24] = { "--quick", "--only", (char *)name, "--json", json };
    int n = 5;
    for (int i = 0; extra && extra[i] && n < 23; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    int st = run_bench(args);
    char out[128];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    char *text = slurp(out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kenaf-bench --only %s: status %d:\n%s",
                  name, st, text ? text : "");
    ck_assert_msg(text && strstr(text, "targets:"), "no table printed:\n%s", text ? text : "");
    free(text);
    char *js = slurp(json);
    ck_assert_msg(js != NULL, "no JSON file written");
    cJSON *root = cJSON_Parse(js);
    ck_assert_msg(root != NULL, "the JSON does not parse:\n%.2000s", js);
    free(js);
    const cJSON *tool = at(root, "tool");
    ck_assert(cJSON_IsString(tool) && strcmp(tool->valuestring, "kenaf-bench") == 0);
    ck_assert_int_eq(cJSON_GetArraySize(at(root, "errors")), 0);
    ck_assert(cJSON_IsString(at(root, "machine.cpu")));
    positive(root, "machine.nproc");
    ck_assert_int_eq(check_targets(root),
                     (int)(num(root, "targets_summary.pass") + num(root, "targets_summary.fail")));
    return root;
}

START_TEST(bench_quick)
{
    cJSON *r = NULL;
    if (strcmp(which, "relay") == 0 || strcmp(which, "relay-standin") == 0) {
        char *ex_u[] = { "--duration", "1", NULL };
        char *ex_s[] = { "--duration", "1", "--sink", "standin", NULL };
        r = quick("relay", strcmp(which, "relay") == 0 ? ex_u : ex_s);
        positive(r, "relay.kenaf_simd.received");
        positive(r, "relay.kenaf_simd.p50_us");
        positive(r, "relay.kenaf_simd.p99_us");
        /* socat is a baseline: when installed it must have relayed too */
        if (!cJSON_IsNull(at(r, "relay.socat"))) {
            positive(r, "relay.socat.received");
            positive(r, "relay.socat.p50_us");
        }
        positive(r, "relay.daemon_histogram.count");
        const cJSON *proto = at(r, "relay.sink_protocol");
        ck_assert(cJSON_IsString(proto));
        ck_assert_str_eq(proto->valuestring, strcmp(which, "relay") == 0 ? "usarsim" : "standin");
    } else if (strcmp(which, "rtt") == 0) {
        char *ex[] = { "--duration", "1", NULL };
        r = quick("rtt", ex);
        positive(r, "status_rtt.kenaf_simd.answered");
        positive(r, "status_rtt.kenaf_simd.p50_us");
        positive(r, "status_rtt.udp_echo.answered");
        positive(r, "status_rtt.udp_echo.p50_us");
#ifdef KN_HAVE_KEYS
        /* the signed round trips: answered, every answer's trailer good */
        positive(r, "status_rtt.kenaf_simd_keyed.answered");
        positive(r, "status_rtt.kenaf_simd_keyed.p50_us");
        const cJSON *bad = at(r, "status_rtt.kenaf_simd_keyed.bad_mac");
        ck_assert(cJSON_IsNumber(bad));
        ck_assert_double_eq(bad->valuedouble, 0);
#endif
    } else if (strcmp(which, "throughput") == 0) {
        char *ex[] = { "--robots", "5", NULL };
        r = quick("throughput", ex);
        const char *runs[] = { "robots_1", "robots_n" };
        for (int i = 0; i < 2; i++) {
            char p[96];
            snprintf(p, sizeof p, "throughput.%s.at_1khz_each.relayed", runs[i]);
            positive(r, p);
            snprintf(p, sizeof p, "throughput.%s.at_1khz_each.daemon_received", runs[i]);
            positive(r, p);
            snprintf(p, sizeof p, "throughput.%s.vmrss_kib", runs[i]);
            positive(r, p);
            snprintf(p, sizeof p, "throughput.%s.ramp.0.sent", runs[i]);
            positive(r, p);
        }
        ck_assert_int_eq((int)num(r, "throughput.robots_n.robots"), 5);
    } else if (strcmp(which, "libcost") == 0) {
        char *ex[] = { "--calls", "500", NULL };
        r = quick("libcost", ex);
        positive(r, "libcost.hrt_get_status.library.p50_ns");
        positive(r, "libcost.hrt_get_status.plain_function_copy.p50_ns");
        positive(r, "libcost.hrt_set_crawler_speed.library.n");
        positive(r, "libcost.hrt_set_crawler_speed.raw_send.n");
    } else if (strcmp(which, "engine") == 0) {
        r = quick("engine", NULL);
        positive(r, "engine.scenarios.0.rtf");
        ck_assert(cJSON_IsString(at(r, "engine.scenarios.0.scenario")));
        positive(r, "engine.rtf");
    } else if (strcmp(which, "rss-long") == 0) {
        char *ex[] = { "--rss-long-s", "2", "--robots", "5", NULL };
        r = quick("rss-long", ex);
        positive(r, "rss_long.vmrss_kib.0");
        positive(r, "rss_long.max_kib");
        positive(r, "rss_long.relayed");
    } else if (strcmp(which, "keycost") == 0) {
        char *ex[] = { "--calls", "500", NULL };
        r = quick("keycost", ex);
        positive(r, "keycost.signed_ns.p50");
        positive(r, "keycost.plain_ns.p50");
        positive(r, "keycost.ratio_p50");
        ck_assert_double_ge(num(r, "keycost.datagrams"), 40000);
    } else if (strcmp(which, "lockstep") == 0) {
        r = quick("lockstep", NULL);
        positive(r, "lockstep.round_trip.step_1ms.p50_us");
        positive(r, "lockstep.round_trip.status_req.p50_us");
        ck_assert_int_eq((int)num(r, "lockstep.round_trip.unanswered"), 0);
        positive(r, "lockstep.runs.0.speedup");
        positive(r, "lockstep.runs.0.realtime_speedup");
        ck_assert(cJSON_IsTrue(at(r, "lockstep.runs.0.pass")));
    } else if (strcmp(which, "usage") == 0) {
        char *bad1[] = { "--only", "nonsense", NULL };
        char *bad2[] = { "--rate", "0", NULL };
        char *bad3[] = { "--sink", "gazebo", NULL };
        char *help[] = { "--help", NULL };
        ck_assert_int_eq(WEXITSTATUS(run_bench(bad1)), 2);
        ck_assert_int_eq(WEXITSTATUS(run_bench(bad2)), 2);
        ck_assert_int_eq(WEXITSTATUS(run_bench(bad3)), 2);
        int st = run_bench(help);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    } else {
        ck_abort_msg("unknown benchmark test \"%s\"", which);
    }
    cJSON_Delete(r);
}
END_TEST

int main(int argc, char **argv)
{
    which = argc > 1 ? argv[1] : "usage";
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create(which);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, RUN_TIMEOUT_S + 60);
    tcase_add_test(tc, bench_quick);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
