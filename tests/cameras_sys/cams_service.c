/* kenaf-cameras started with only --config, as its unit starts it:
 * cams_service.h says what it does. */
#include "cams_service.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_cameras_start(struct h_proc *p, const char *json, char *const env[], const char *robot,
                     int *rtsp_port)
{
    static char config[512];
    snprintf(config, sizeof config, "%s", h_path("cameras.json"));
    h_write_file(config, json);
    const char *exe = getenv("KN_CAMERAS");
    char *argv[] = { (char *)(exe && *exe ? exe : "kenaf-cameras"), "--config", config, "--stats",
                     NULL };
    h_spawn(p, argv, env, "kenaf-cameras.stderr");
    char line[512], want[128];
    snprintf(want, sizeof want, "/%s/front.jpg", robot);
    int rtsp = 0;
    /* a renderer and GStreamer's registry on a busy machine: a minute */
    for (uint64_t end = h_now_us() + 60000000u; h_now_us() < end;) {
        if (!h_read_line(p, line, sizeof line, H_LONG_MS)) {
            if (h_wait_exit(p, 0) >= 0) /* it ended: its stderr says why */
                break;
            continue;
        }
        int port;
        if (sscanf(line, "kenaf-cameras: rtsp://127.0.0.1:%d/", &port) == 1)
            rtsp = port;
        if (strstr(line, want) && sscanf(line, "kenaf-cameras: http://127.0.0.1:%d/", &port) == 1) {
            if (rtsp_port)
                *rtsp_port = rtsp;
            return port;
        }
    }
    ck_abort_msg("kenaf-cameras printed no %s URL; its stderr:\n%s", want, h_stderr(p));
    return 0;
}
