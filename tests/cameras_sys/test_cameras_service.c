/* kenaf-cameras as its systemd unit runs it (config/kenaf-cameras@.service):
 * only --config, the file naming the robots, the address and the ports,
 * and Type=notify. "notify": READY=1 comes on $NOTIFY_SOCKET (a Unix
 * datagram socket of the test's, as systemd's) once the URLs are printed,
 * and the robot the config names is served from a real kenaf-simd on the
 * engine; "config": the command line wins over the config, and each bad
 * value of the new keys is refused with its reason (exit 2). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "cams_service.h"
#include "harness.h"

static struct h_daemon d;

static void setup(void)
{
    h_setup();
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    h_daemon_start(&d, "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]");
    h_wait_backend_fresh(&d, 0, 60000);
}

START_TEST(notify_ready)
{
    /* systemd's side of sd_notify: a datagram socket at $NOTIFY_SOCKET */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", h_path("notify.sock"));
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    static char env_notify[200];
    snprintf(env_notify, sizeof env_notify, "NOTIFY_SOCKET=%s", a.sun_path);
    char *env[] = { env_notify, NULL };
    char json[512];
    snprintf(json, sizeof json,
             "{\"robots\": [\"alpha=127.0.0.1:%d\"], \"listen\": \"127.0.0.1\",\n"
             " \"rtsp_port\": 0, \"http_port\": 0, \"front\": {\"fps\": 10}}\n",
             d.port[0]);
    struct h_proc cams;
    int http = cs_cameras_start(&cams, json, env, "alpha", NULL);
    /* the URLs are printed before READY=1 is sent: it is there now, or
     * within the deadline */
    ck_assert_msg(h_wait_readable(fd, h_now_us() + 30000000u), "no READY=1 within 30 s: %s",
                  h_stderr(&cams));
    char msg[512];
    ssize_t n = recv(fd, msg, sizeof msg - 1, 0);
    ck_assert_int_gt(n, 0);
    msg[n] = '\0';
    printf("notify: %s\n", msg);
    ck_assert_msg(strstr(msg, "READY=1") != NULL, "sd_notify sent \"%s\"", msg);
    close(fd);
    /* the config's robot, under its name: a snapshot (503 until the first frame) */
    char url[128], out[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/alpha/front.jpg", http);
    char *argv[] = { "curl", "-s", "-o", (char *)h_path("front.jpg"), "-w", "%{response_code}\n",
                     url,    NULL };
    uint64_t end = h_now_us() + 30000000u;
    while (h_run_prog(argv, out, sizeof out) == 0 && atoi(out) == 503 && h_now_us() < end)
        h_sleep_ms(200);
    ck_assert_msg(atoi(out) == 200, "%s: %s", url, out);
    h_signal(&cams, SIGTERM);
    int st = h_wait_exit(&cams, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status %d: %s", st, h_stderr(&cams));
}
END_TEST

/* kenaf-cameras --config FILE (the file holding `json`) with the extra
 * arguments must exit 2 saying `message`. */
static void refused(const char *json, const char *message)
{
    h_write_file(h_path("bad.json"), json);
    const char *exe = getenv("KN_CAMERAS");
    char *argv[] = { (char *)(exe && *exe ? exe : "kenaf-cameras"), "--config",
                     (char *)h_path("bad.json"), NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "refused.stderr");
    int st = h_wait_exit(&p, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(h_stderr(&p), message),
                  "%s: status %d, stderr: %s (want \"%s\")", json, st, h_stderr(&p), message);
    h_forget(&p);
}

START_TEST(config_keys)
{
    refused("{\"robots\": \"127.0.0.1:9750\"}", "robots: expected a list of \"[NAME=]HOST:PORT\"");
    refused("{\"robots\": []}", "robots: expected a list");
    refused("{\"robots\": [9750]}", "robots: expected \"[NAME=]HOST:PORT\" strings");
    refused("{\"robots\": [\"a=127.0.0.1:1\", \"a=127.0.0.1:2\"]}", "two robots named a");
    refused("{\"robots\": [\"a b=127.0.0.1:1\"]}", "robots \"");
    refused("{\"robots\": [\"127.0.0.1:99999\"]}", "robots \"");
    refused("{\"listen\": 5}", "listen: expected a host name or address");
    refused("{\"listen\": \"\"}", "listen: expected a host name or address");
    refused("{\"rtsp_port\": 70000}", "rtsp_port: expected an integer 0..65535");
    refused("{\"http_port\": 80.5}", "http_port: expected an integer 0..65535");
    refused("{\"http_port\": \"8081\"}", "http_port: expected an integer 0..65535");
    refused("{\"rooms\": 1}", "expected front or birdseye, an object, or robots, listen");

    /* --robot replaces the config's robots, --http-port its port: the
     * printed URLs say which (no daemon needed to print them) */
    h_write_file(h_path("both.json"),
                 "{\"robots\": [\"alpha=127.0.0.1:1\"], \"rtsp_port\": 0, \"http_port\": 1}");
    const char *exe = getenv("KN_CAMERAS");
    char *argv[] = { (char *)(exe && *exe ? exe : "kenaf-cameras"),
                     "--config",
                     (char *)h_path("both.json"),
                     "--robot",
                     "bravo=127.0.0.1:2",
                     "--http-port",
                     "0",
                     NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "both.stderr");
    char line[512];
    int bravo = 0, alpha = 0;
    while (h_read_line(&p, line, sizeof line, 60000)) {
        bravo += strstr(line, "/bravo/") != NULL;
        alpha += strstr(line, "/alpha/") != NULL;
        if (bravo == 8) /* four URLs for each of two cameras */
            break;
    }
    ck_assert_msg(bravo == 8 && alpha == 0, "bravo %d, alpha %d URLs; stderr: %s", bravo, alpha,
                  h_stderr(&p));
    h_signal(&p, SIGTERM);
    int st = h_wait_exit(&p, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status %d: %s", st, h_stderr(&p));
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "notify", notify_ready, 240, setup, h_teardown },
        { "config", config_keys, 120, h_setup, h_teardown },
    };
    return h_run_cases("cameras-service", cases, sizeof cases / sizeof cases[0]);
}
