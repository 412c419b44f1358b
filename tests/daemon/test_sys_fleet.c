/* kenaf-simd with fleets: a config whose robots need more file
 * descriptors than RLIMIT_NOFILE allows is refused at start with the
 * numbers, and a soft limit below the hard one is raised. Real
 * kenaf-simd processes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"
#include "harness_suite.h"

#define FD_ROBOTS 60 /* 64 + 2 each: 184 descriptors */

/* FD_ROBOTS robots on a stand-in simulator that is not there (port 9 on
 * loopback refuses): each still holds its UDP socket. */
static char *fd_robots(void)
{
    size_t cap = 256 * FD_ROBOTS + 8, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, cap, "[");
    for (int i = 0; i < FD_ROBOTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        len += (size_t)snprintf(text + len, cap - len, "%s%s", i ? ",\n" : "",
                                h_standin_robot(name, 9, NULL));
    }
    snprintf(text + len, cap - len, "]");
    return text;
}

START_TEST(fd_limit_refused)
{
    struct h_daemon d;
    memset(&d, 0, sizeof d);
    snprintf(d.config, sizeof d.config, "%s", h_path("fleet-fd.json"));
    snprintf(d.stats, sizeof d.stats, "%s", h_path("fleet-fd-stats.sock"));
    char *robots = fd_robots();
    h_daemon_write_config(&d, robots);
    free(robots);
    /* dash's ulimit -n sets the soft and the hard limit: nothing to raise */
    char *argv[] = { "/bin/sh",         "-c",     "ulimit -n 96 && exec \"$0\" --config \"$1\"",
                     getenv("KN_SIMD"), d.config, NULL };
    char out[256], err[8192];
    int rc = h_run(argv, out, sizeof out, err, sizeof err, H_LONG_MS * 3);
    ck_assert_msg(rc == 1, "exit %d, stderr: %s", rc, err);
    ck_assert_msg(strstr(err, "60 robots need about 184 file descriptors, but RLIMIT_NOFILE "
                              "allows 96 (hard limit 96)") != NULL,
                  "no clear refusal: %s", err);
    ck_assert_msg(strstr(err, "KRP/1 on udp") == NULL, "a robot started: %s", err);
}
END_TEST

/* The soft limit below what the robots need, the hard one above: the
 * daemon raises its soft limit and runs them all. */
START_TEST(fd_limit_raised)
{
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 1024) {
        printf("fd-limit-raised: the hard RLIMIT_NOFILE is %llu: nothing to raise to\n",
               (unsigned long long)old.rlim_max);
        return;
    }
    struct rlimit low = { .rlim_cur = 100, .rlim_max = old.rlim_max };
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    struct h_daemon d;
    char *robots = fd_robots();
    /* not wrapped: a wrapper's own descriptors are no part of the count */
    h_daemon_spawn(&d, "kenaf-simd", NULL, robots, NULL, NULL, false);
    free(robots);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0); /* the child has its copy */
    h_daemon_ready(&d);
    ck_assert_int_eq(d.nrobots, FD_ROBOTS);
    ck_assert_int_eq((int)h_stat(&d, "robots_configured"), FD_ROBOTS);
    cJSON *s = h_stats(&d);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "robots_failed")), 0);
    cJSON_Delete(s);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/limits", (int)d.proc.pid);
    const char *limits = h_file_text(path);
    const char *line = strstr(limits, "Max open files");
    ck_assert_ptr_nonnull(line);
    unsigned long long soft = strtoull(line + strlen("Max open files"), NULL, 10);
    ck_assert_msg(soft >= 184, "soft limit %llu", soft);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "fd-limit-refused", fd_limit_refused, 60, NULL, NULL },
        { "fd-limit-raised", fd_limit_raised, 60, NULL, NULL },
    };
    return h_run_cases("daemon-fleet", cases, sizeof cases / sizeof cases[0]);
}
