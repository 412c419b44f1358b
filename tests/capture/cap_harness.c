/* Capture and replay test helpers: see cap_harness.h. */
#include "cap_harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

void c_daemon_start(struct h_daemon *d, const char *name, const char *robots_json,
                    const char *const args[])
{
    h_daemon_launch(d, name, robots_json, args, NULL, false);
}

int c_run(char *const argv[], char *out, size_t outlen, int timeout_ms)
{
    /* the harness keeps a pointer to every child until teardown */
    static struct h_proc pool[32];
    static int next;
    ck_assert_int_lt(next, 32);
    struct h_proc *p = &pool[next++];
    h_spawn(p, argv, NULL, "run.stderr");
    size_t used = 0;
    if (outlen)
        out[0] = '\0';
    static char line[65536];
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000u);
        if (!h_read_line(p, line, sizeof line, left > 0 ? left : 1))
            break; /* EOF (or the deadline) */
        int w = snprintf(out + used, outlen - used, "%s\n", line);
        if (w > 0 && (size_t)w < outlen - used)
            used += (size_t)w;
    }
    int left = (int)(end > h_now_us() ? (end - h_now_us()) / 1000u : 0);
    int st = h_wait_exit(p, left > 1000 ? left : 1000);
    if (st == -1) {
        h_signal(p, SIGKILL);
        h_wait_exit(p, H_LONG_MS);
        return -1;
    }
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

const char *c_command(struct h_daemon *d, const char *line)
{
    static char out[65536];
    char *argv[] = { getenv("KN_SIMD"), "--command", (char *)line, "--socket", d->stats, NULL };
    int rc = c_run(argv, out, sizeof out, H_LONG_MS);
    ck_assert_msg(rc == 0, "kenaf-simd --command \"%s\" failed (%d): %s", line, rc, out);
    return out;
}

bool c_capture_closed(struct h_daemon *d, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        cJSON *s = h_stats(d);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "capture");
        bool closed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "closed"));
        cJSON_Delete(s);
        if (closed)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(20);
    }
}
