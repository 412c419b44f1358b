/* `kenaf-simd --check-config` and start-up on configs with faults of
 * every kind: six independent faults (an unknown terrain, a listen
 * address two robots share, a value of the wrong type, a broken rule, a
 * host name that does not resolve, a robot file that is not there) come
 * out in one run, one line each in the form "FILE: $.path: expected ...,
 * got ...", exit 1; each alone gives its one line; start-up refuses the
 * same config with the same lines and spawns nothing; the shipped configs
 * pass; a config others may change is refused. Real kenaf-simd processes
 * ($KN_SIMD). */
#include <check.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness_proc.h"
#include "harness_suite.h"

#define NFAULTS 6

struct fault {
    const char *what;
    const char *path; /* the JSON path of its line */
};

static const struct fault faults[NFAULTS] = {
    { "unknown terrain", "$.robots[0].backend.engine.terrain" },
    { "listen clash", "$.robots[1].listen" },
    { "schema type error", "$.robots[2].watchdog_ms" },
    { "rule error", "$.robots[3].limits" },
    { "unresolvable address", "$.robots[4].backend.address" },
    { "missing robot file", "$.robots[5].backend.engine.robot" },
};

/* Six robots, each clean or carrying its fault (bit i of mask). */
static const char *write_config(const char *name, unsigned mask)
{
    static char path[256];
    char text[4096];
#define F(i, bad, good) ((mask >> (i)) & 1u ? (bad) : (good))
    snprintf(
        text, sizeof text,
        "{\n  \"stats_socket\": \"%s\",\n  \"robots\": [\n"
        "    {\"name\": \"a\", \"listen\": \"127.0.0.1:29901\", \"backend\": {\"type\": \"engine\","
        " \"engine\": {\"terrain\": \"%s\"}}},\n"
        "    {\"name\": \"b\", \"listen\": \"%s\", \"backend\": {\"type\": \"usarsim\"}},\n"
        "    {\"name\": \"c\", \"listen\": \"127.0.0.1:29903\", \"watchdog_ms\": %s,"
        " \"backend\": {\"type\": \"usarsim\"}},\n"
        "    {\"name\": \"d\", \"listen\": \"127.0.0.1:29904\","
        " \"limits\": {\"flipper_min_deg\": %s, \"flipper_max_deg\": 30},"
        " \"backend\": {\"type\": \"usarsim\"}},\n"
        "    {\"name\": \"e\", \"listen\": \"127.0.0.1:29905\","
        " \"backend\": {\"type\": \"gazebo\", \"address\": \"%s\"}},\n"
        "    {\"name\": \"f\", \"listen\": \"127.0.0.1:29906\", \"backend\": {\"type\": \"engine\","
        " \"engine\": {\"robot\": \"%s\"}}}\n"
        "  ]\n}\n",
        h_path("stats.sock"), F(0, "moon", "flat"), F(1, "127.0.0.1:29901", "127.0.0.1:29902"),
        F(2, "\"500\"", "500"), F(3, "30", "-30"),
        F(4, "no-such-host.invalid:11345", "127.0.0.1:11345"),
        F(5, h_path("missing-robot.json"), "kenaf"));
#undef F
    snprintf(path, sizeof path, "%s", h_path(name));
    h_write_file(path, text);
    return path;
}

/* Runs kenaf-simd with args; returns its exit status, stderr in *err. */
static int run_simd(char *const args[], const char **err_text)
{
    static struct h_proc p;
    char *argv[8] = { getenv("KN_SIMD") };
    ck_assert_msg(argv[0] != NULL, "KN_SIMD not set");
    for (int i = 0; i < 6 && args[i]; i++)
        argv[i + 1] = args[i];
    h_spawn(&p, argv, NULL, "simd.stderr");
    int st = h_wait_exit(&p, H_LONG_MS);
    ck_assert_msg(st != -1, "kenaf-simd did not exit: %s", h_stderr(&p));
    *err_text = h_stderr(&p);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* The problem lines: "CONFIG: $.path: expected ..., got ...". */
static int count_problem_lines(const char *text, const char *config)
{
    char pat[512];
    snprintf(pat, sizeof pat, "^%s: \\$[^ ]*: expected .*, got .*$", config);
    regex_t re;
    ck_assert_int_eq(regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0);
    int n = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strncmp(line, config, strlen(config)) == 0) {
            ck_assert_msg(regexec(&re, line, 0, NULL, 0) == 0, "not in the form: %s", line);
            n++;
        }
        p += len + (nl != NULL);
    }
    regfree(&re);
    return n;
}

static void assert_line_for(const char *text, const char *config, const char *path)
{
    char want[512];
    snprintf(want, sizeof want, "%s: %s: expected ", config, path);
    ck_assert_msg(strstr(text, want), "no line for %s in:\n%s", path, text);
}

START_TEST(six_faults_in_one_run)
{
    const char *cfg = write_config("six.json", (1u << NFAULTS) - 1);
    const char *err;
    char *args[] = { "--check-config", "--config", (char *)cfg, NULL };
    ck_assert_int_eq(run_simd(args, &err), 1);
    ck_assert_msg(count_problem_lines(err, cfg) == NFAULTS, "expected %d lines:\n%s", NFAULTS, err);
    for (int i = 0; i < NFAULTS; i++)
        assert_line_for(err, cfg, faults[i].path);
    ck_assert_msg(strstr(err, "got \"moon\""), "%s", err);
    ck_assert_msg(strstr(err, "6 problems; the config is not valid"), "%s", err);
}
END_TEST

START_TEST(each_fault_alone)
{
    for (int i = 0; i < NFAULTS; i++) {
        char name[32];
        snprintf(name, sizeof name, "fault-%d.json", i);
        const char *cfg = write_config(name, 1u << i);
        const char *err;
        char *args[] = { "--check-config", "--config", (char *)cfg, NULL };
        ck_assert_msg(run_simd(args, &err) == 1, "%s: exit status, stderr:\n%s", faults[i].what,
                      err);
        ck_assert_msg(count_problem_lines(err, cfg) == 1, "%s: expected one line:\n%s",
                      faults[i].what, err);
        assert_line_for(err, cfg, faults[i].path);
    }
    /* and without any: the six robots are fine */
    const char *cfg = write_config("clean.json", 0);
    const char *err;
    char *args[] = { "--check-config", "--config", (char *)cfg, NULL };
    ck_assert_msg(run_simd(args, &err) == 0, "the clean config fails:\n%s", err);
}
END_TEST

/* Start-up uses the same checks: it refuses the config before it starts
 * anything (no engine restarted for ever for a terrain that is not there). */
START_TEST(start_up_refuses_with_the_same_lines)
{
    const char *cfg = write_config("six.json", (1u << NFAULTS) - 1);
    const char *err;
    char *args[] = { "--config", (char *)cfg, NULL };
    ck_assert_int_eq(run_simd(args, &err), 1);
    ck_assert_msg(count_problem_lines(err, cfg) == NFAULTS, "expected %d lines:\n%s", NFAULTS, err);
    ck_assert_msg(strstr(err, "6 problems; not starting"), "%s", err);
    ck_assert_msg(!strstr(err, "engine: started"), "an engine was started:\n%s", err);
    ck_assert_msg(access(h_path("stats.sock"), F_OK) != 0, "a stats socket was made");
}
END_TEST

/* A config that group or others may write, or that another user owns,
 * could name any program for kenaf-simd to run: refused by --check-config
 * and at start-up, with the file, what was found and what is expected. */
START_TEST(untrusted_config_refused)
{
    const char *cfg = write_config("loose.json", 0);
    const char *err;
    char *check[] = { "--check-config", "--config", (char *)cfg, NULL };
    char *start[] = { "--config", (char *)cfg, NULL };
    const mode_t bad[] = { 0666, 0664, 0646 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(chmod(cfg, bad[i]), 0);
        char want[600];
        snprintf(want, sizeof want, "%s: expected a config file owned by root", cfg);
        ck_assert_int_eq(run_simd(check, &err), 1);
        ck_assert_msg(strstr(err, want) && strstr(err, "1 problem; the config is not valid"), "%s",
                      err);
        ck_assert_int_eq(run_simd(start, &err), 1);
        ck_assert_msg(strstr(err, want) && strstr(err, "not starting"), "%s", err);
        ck_assert_msg(!strstr(err, "engine: started"), "an engine was started:\n%s", err);
    }
    ck_assert_int_eq(chmod(cfg, 0644), 0);
    ck_assert_msg(run_simd(check, &err) == 0, "0644 refused:\n%s", err);
    if (geteuid() != 0)
        return; /* only root can give a file away */
    ck_assert_int_eq(chown(cfg, 4321, (gid_t)-1), 0);
    ck_assert_int_eq(run_simd(check, &err), 1);
    ck_assert_msg(strstr(err, "got owner uid 4321 (neither root nor uid 0)"), "%s", err);
}
END_TEST

START_TEST(shipped_configs_pass)
{
    const char *dir = KN_SOURCE_ROOT "/config/examples";
    char paths[16][512];
    int n = 0;
    snprintf(paths[n++], sizeof paths[0], "%s", KN_SOURCE_ROOT "/config/kenaf-simd.json");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 16)
        if (strstr(de->d_name, ".json"))
            snprintf(paths[n++], sizeof paths[0], "%s/%s", dir, de->d_name);
    closedir(d);
    ck_assert_int_ge(n, 3);
    for (int i = 0; i < n; i++) {
        const char *err;
        char *args[] = { "--check-config", "--config", paths[i], NULL };
        int rc = run_simd(args, &err);
        /* the examples put their socket in /run/kenaf-simd: only root may */
        if (rc != 0 && geteuid() != 0 && count_problem_lines(err, paths[i]) == 1 &&
            strstr(err, ": $.stats_socket: "))
            continue;
        ck_assert_msg(rc == 0, "%s fails:\n%s", paths[i], err);
    }
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "six_faults_in_one_run", six_faults_in_one_run, 30, NULL, NULL },
        { "each_fault_alone", each_fault_alone, 60, NULL, NULL },
        { "start_up_refuses_with_the_same_lines", start_up_refuses_with_the_same_lines, 30, NULL,
          NULL },
        { "shipped_configs_pass", shipped_configs_pass, 30, NULL, NULL },
        { "untrusted_config_refused", untrusted_config_refused, 30, NULL, NULL },
    };
    return h_run_cases("config-check", cases, sizeof cases / sizeof cases[0]);
}
