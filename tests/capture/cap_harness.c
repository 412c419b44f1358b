/* Capture and replay test helpers: see cap_harness.h. */
#include "cap_harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void c_daemon_start(struct h_daemon *d, const char *name, const char *robots_json,
                    const char *const args[])
{
    h_daemon_launch(d, name, robots_json, args, NULL, false);
}

int c_run(char *const argv[], char *out, size_t outlen, int timeout_ms)
{
    return h_run(argv, out, outlen, NULL, 0, timeout_ms);
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
