/* What the tests of kenaf-cameras as a whole share: a real kenaf-simd on
 * the engine (flat ground) with a KRP/1 client, kenaf-cameras on free
 * loopback ports, its URLs, and curl to fetch one. */
#include "camsys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct h_daemon d;
struct h_udp u;
struct h_proc cams;
int rtsp_port, http_port;

const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* kenaf-cameras with the extra arguments (up to 4, NULL-terminated, may
 * be NULL); its "kenaf-cameras: SCHEME://127.0.0.1:PORT/..." lines give
 * the ports. */
void cameras_start(const char *const extra[])
{
    static char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", d.port[0]);
    char *argv[16] = { (char *)env_or("KN_CAMERAS", "kenaf-cameras"),
                       "--robot",
                       robot,
                       "--rtsp-port",
                       "0",
                       "--http-port",
                       "0",
                       "--stats",
                       NULL };
    for (int i = 0, n = 8; extra && extra[i] && i < 4; i++)
        argv[n++] = (char *)extra[i];
    h_spawn(&cams, argv, NULL, "kenaf-cameras.stderr");
    char line[256];
    rtsp_port = http_port = 0;
    while ((!rtsp_port || !http_port) && h_read_line(&cams, line, sizeof line, H_LONG_MS)) {
        int port;
        if (sscanf(line, "kenaf-cameras: rtsp://127.0.0.1:%d/", &port) == 1)
            rtsp_port = port;
        else if (sscanf(line, "kenaf-cameras: http://127.0.0.1:%d/", &port) == 1)
            http_port = port;
    }
    ck_assert_msg(rtsp_port && http_port, "kenaf-cameras printed no URLs; its stderr:\n%s",
                  h_stderr(&cams));
}

void start_daemon(void)
{
    /* gst-launch and the library share a registry in the scratch directory */
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    h_daemon_start(&d, "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]");
    h_wait_backend_fresh(&d, 0, 60000);
    h_udp_open(&u, d.port[0]);
    h_hello(&u, "cameras-test");
}

void teardown(void)
{
    h_udp_close(&u);
    h_teardown();
}

const char *url(const char *scheme, const char *path)
{
    static char buf[4][256];
    static int i;
    char *b = buf[i++ % 4];
    snprintf(b, sizeof buf[0], "%s://127.0.0.1:%d/%s", scheme,
             strcmp(scheme, "rtsp") == 0 ? rtsp_port : http_port, path);
    return b;
}

/* curl's "code" for a URL, the body in file `to`. */
int fetch(const char *u0, const char *to)
{
    char out[256];
    char *argv[] = { "curl", "-s", "-o", (char *)to, "-w", "%{response_code}\n", (char *)u0, NULL };
    h_run_prog(argv, out, sizeof out);
    return atoi(out);
}
