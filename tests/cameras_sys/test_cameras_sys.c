/* kenaf-cameras as a whole, against clients this repository did not
 * write: a real kenaf-simd on the built-in engine (flat ground), the
 * program on free loopback ports, and ffprobe, gst-launch-1.0, curl and
 * ffmpeg on its URLs. The picture must follow the robot: snapshots of the
 * front camera before and after a 0.5 m drive differ, two taken while
 * nothing moves do not. The "rates" case (suite bench) prints what a
 * client receives and asserts nothing about it. */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>

#include "camsys.h"
#include "harness.h"
#include "stamp.h"

static void setup(void)
{
    h_setup();
    start_daemon();
    cameras_start(NULL);
}

/* A config file for both cameras, one of its values overridden by an
 * option. */
static void setup_config(void)
{
    h_setup();
    start_daemon();
    h_write_file(h_path("cameras.json"),
                 "{\"front\": {\"width\": 320, \"height\": 240, \"fps\": 20},\n"
                 " \"birdseye\": {\"width\": 320, \"height\": 240, \"jpeg_quality\": 60}}\n");
    const char *extra[] = { "--config", h_path("cameras.json"), "--birdseye-size", "160x120",
                            NULL };
    cameras_start(extra);
}

/* kenaf-simd on the engine with the robot file `text` (written to
 * `name` in the scratch directory), then kenaf-cameras. */
static void start_with_robot_file(const char *name, const char *text)
{
    h_write_file(h_path(name), text);
    char robots[1024];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
             "\"engine\",\"engine\":{\"terrain\":\"flat\",\"robot\":\"%s\"}}}]",
             h_path(name));
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    h_daemon_start(&d, robots);
    h_wait_backend_fresh(&d, 0, 60000);
    cameras_start(NULL);
}

/* Two robots in one world: one spawned engine on the flat ground,
 * "kenaf" at the origin and "two" 1 m behind it and 0.6 m to the side,
 * out of kenaf's front camera; kenaf-cameras watches both; u2 is a
 * client of the second. */
static struct h_udp u2;

static void setup_two(void)
{
    h_setup();
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    h_daemon_start(&d, "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"}}},"
                       "{\"name\":\"two\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
                       "\"engine\",\"engine\":{\"terrain\":\"flat\"},\"usarsim\":"
                       "{\"location_m\":[-1.0,0.6,0]}}}]");
    h_wait_backend_fresh(&d, 0, 60000);
    h_wait_backend_fresh(&d, 1, 60000);
    h_udp_open(&u, d.port[0]);
    h_hello(&u, "cameras-test");
    h_udp_open(&u2, d.port[1]);
    h_hello(&u2, "cameras-test-2");
    static char two[64];
    snprintf(two, sizeof two, "two=127.0.0.1:%d", d.port[1]);
    const char *extra[] = { "--robot", two, NULL };
    cameras_start(extra);
}

static void teardown_two(void)
{
    h_udp_close(&u2);
    teardown();
}

/* A robot file whose front camera pans +-90 deg and tilts -20..30 deg. */
static void setup_robot_file(void)
{
    h_setup();
    const char *kenaf = h_file_text(KN_CONFIG_DIR "/robots/kenaf.json");
    ck_assert_ptr_nonnull(kenaf);
    const char *from[] = { "\"pan_max_deg\": 170", "\"tilt_min_deg\": -60",
                           "\"tilt_max_deg\": 60" };
    const char *to[] = { "\"pan_max_deg\": 90", "\"tilt_min_deg\": -20", "\"tilt_max_deg\": 30" };
    static char text[16384];
    snprintf(text, sizeof text, "%s", kenaf);
    for (int k = 0; k < 3; k++) {
        char *p = strstr(text, from[k]);
        ck_assert_msg(p != NULL, "kenaf.json lacks %s", from[k]);
        char rest[16384];
        snprintf(rest, sizeof rest, "%s", p + strlen(from[k]));
        snprintf(p, sizeof text - (size_t)(p - text), "%s%s", to[k], rest);
    }
    start_with_robot_file("narrow.json", text);
}

/* A robot file with a small PTZ camera "front" and a fixed "rear" one
 * looking back, instead of the Kenaf's two. */
static void setup_robot_cameras(void)
{
    h_setup();
    const char *kenaf = h_file_text(KN_CONFIG_DIR "/robots/kenaf.json");
    ck_assert_ptr_nonnull(kenaf);
    static char text[16384];
    snprintf(text, sizeof text, "%s", kenaf);
    char *cams = strstr(text, ",\n  \"cameras\": {");
    ck_assert_ptr_nonnull(cams);
    snprintf(cams, sizeof text - (size_t)(cams - text), "%s",
             ", \"cameras\": {\"front\": {\"kind\": \"ptz\", \"x_m\": 0.17, \"y_m\": 0, "
             "\"above_chassis_m\": 0.05, \"hfov_deg\": 60, \"zoom_max\": 10, "
             "\"pan_max_deg\": 170, \"tilt_min_deg\": -60, \"tilt_max_deg\": 60, "
             "\"pan_speed_deg_s\": 90, \"tilt_speed_deg_s\": 60, \"zoom_time_s\": 3, "
             "\"width_px\": 320, \"height_px\": 240, \"fps\": 10}, "
             "\"rear\": {\"kind\": \"fixed\", \"x_m\": -0.2, \"y_m\": 0, \"height_m\": 0.3, "
             "\"tilt_deg\": -10, \"hfov_deg\": 90, \"width_px\": 160, \"height_px\": 120}}}\n");
    start_with_robot_file("rear.json", text);
}

START_TEST(probe_streams)
{
    h_ffprobe_video(url("rtsp", "kenaf/front"), "h264,640,480");
    h_ffprobe_video(url("http", "kenaf/birdseye.mjpg"), "mjpeg,640,480");
    /* the counters on request, while it runs: both cameras, the frames
     * the probes were sent, PTZ and the render thread's */
    ck_assert_int_eq(fetch(url("http", "stats"), h_path("stats.json")), 200);
    const char *st = h_file_text(h_path("stats.json"));
    ck_assert_msg(strstr(st, "{\"cameras\":[{\"robot\":\"kenaf\",\"camera\":\"front\"") &&
                      strstr(st, "\"camera\":\"birdseye\"") && strstr(st, "\"ptz\":{") &&
                      strstr(st, "\"render\":{\"frames\":") && !strstr(st, "\"frames_sent\":0,"),
                  "stats: %s", st);
    ck_assert_int_eq(fetch(url("http", "stats?x=1"), h_path("stats.json")), 200);
    char *argv[] = { "curl",
                     "-s",
                     "-o",
                     (char *)h_path("post.txt"),
                     "-w",
                     "%{response_code}\n",
                     "-X",
                     "POST",
                     (char *)url("http", "stats"),
                     NULL };
    char out[64];
    h_run_prog(argv, out, sizeof out);
    ck_assert_str_eq(out, "405");
}
END_TEST

START_TEST(config_sizes)
{
    h_ffprobe_video(url("rtsp", "kenaf/front"), "h264,320,240");
    h_ffprobe_video(url("http", "kenaf/birdseye.mjpg"), "mjpeg,160,120");
}
END_TEST

/* gst-launch-1.0 plays 5 s of a mount: fakesink ends after as many
 * frames, which sends EOS through the pipeline (exit 0, "Got EOS"); no
 * signal to stop it, so how fast frames come cannot fail it. */
static void play_mount(const char *mount, int fps)
{
    char loc[300], frames[64], path[512];
    snprintf(loc, sizeof loc, "location=%s", url("rtsp", mount));
    snprintf(frames, sizeof frames, "num-buffers=%d", 5 * fps);
    const char *gst = h_which("gst-launch-1.0");
    ck_assert_msg(gst != NULL, "gst-launch-1.0 is not installed");
    snprintf(path, sizeof path, "%s", gst);
    char *argv[] = { path, "rtspsrc", loc, "!", "decodebin", "!", "fakesink", frames, NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "gst.stderr");
    int st = h_wait_exit(&p, 120000);
    char line[512], out[8192] = "";
    while (h_read_line(&p, line, sizeof line, 1000))
        strncat(out, line, sizeof out - strlen(out) - 1);
    /* the frames and the EOS are what this test is about: a failure on
     * the way down alone (h_gst_teardown_race) is said and passes */
    const char *err = h_stderr(&p);
    bool late_pause = h_gst_teardown_race(st, out, err);
    if (late_pause)
        printf("gst-launch %s: played to EOS; its PAUSE on the way down found the connection "
               "closed\n",
               mount);
    ck_assert_msg((st == 0 || late_pause) && strstr(out, "Got EOS") && !strstr(out, "ERROR"),
                  "gst-launch %s: status %d: %s %s", mount, st, out, err);
}

START_TEST(play_rtsp)
{
    play_mount("kenaf/front", 30);
    play_mount("kenaf/birdseye.mjpeg", 15);
}
END_TEST

/* The front camera's snapshot as RGB (ffmpeg decodes it), 640x480x3. */
static uint8_t *snapshot_rgb(const char *name)
{
    char jpg[300], rgb[310], out[256];
    snprintf(jpg, sizeof jpg, "%s", h_path(name));
    snprintf(rgb, sizeof rgb, "%s.rgb", jpg);
    uint64_t end = h_now_us() + 30000000u;
    int code;
    /* 503 until the first frame is there */
    while ((code = fetch(url("http", "kenaf/front.jpg"), jpg)) == 503 && h_now_us() < end)
        h_sleep_ms(200);
    ck_assert_int_eq(code, 200);
    char *argv[] = { "ffmpeg", "-v",       "error",    "-y",    "-i", jpg,
                     "-f",     "rawvideo", "-pix_fmt", "rgb24", rgb,  NULL };
    ck_assert_msg(h_run_prog(argv, out, sizeof out) == 0, "ffmpeg %s: %s", jpg,
                  h_file_text(h_path("prog.stderr")));
    FILE *f = fopen(rgb, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = 640u * 480u * 3u;
    uint8_t *px = malloc(n);
    ck_assert_ptr_nonnull(px);
    ck_assert_uint_eq(fread(px, 1, n, f), n);
    fclose(f);
    return px;
}

/* The share of pixels (%) that differ by more than 24 in a channel: JPEG's
 * noise stays under it, while a grid line or an edge that moved counts. */
static double difference(const uint8_t *a, const uint8_t *b)
{
    size_t n = 640u * 480u, changed = 0;
    for (size_t i = 0; i < n; i++) {
        int d = 0;
        for (int k = 0; k < 3; k++) {
            int e = abs((int)a[3 * i + k] - (int)b[3 * i + k]);
            d = e > d ? e : d;
        }
        changed += d > 24;
    }
    return 100.0 * (double)changed / (double)n;
}

static double pos_m(const struct kn_krp_status *s, int i)
{
    return s->pos_mm[i] / 1000.0;
}

/* Waits until two STATUS 0.5 s apart are within 2 mm, then until the
 * camera's picture has caught up (a second of frames). */
static void settle_robot(struct h_udp *c)
{
    struct kn_krp_status a = h_status_any(c);
    for (int i = 0; i < 60; i++) {
        h_sleep_ms(500);
        struct kn_krp_status s = h_status_any(c);
        bool still = true;
        for (int k = 0; k < 3; k++)
            still &= abs(s.pos_mm[k] - a.pos_mm[k]) <= 2;
        if (still) {
            h_sleep_ms(1000);
            return;
        }
        a = s;
    }
    ck_abort_msg("the robot never came to rest");
}

static void settle(void)
{
    settle_robot(&u);
}

/* Drives the robot of client c straight at `speed` mm/s until it is `m` metres
 * from where it was (90 s allowed, for an engine slowed by a loaded
 * machine), then stops it and waits for it to rest. */
static void drive_robot(struct h_udp *c, int speed, double m)
{
    struct kn_krp_status s0 = h_status_any(c);
    uint64_t end = h_now_us() + 90000000u;
    for (;;) {
        h_crawler(c, 0, 0, speed, speed);
        h_sleep_ms(100);
        struct kn_krp_status s = h_status_any(c);
        if (hypot(pos_m(&s, 0) - pos_m(&s0, 0), pos_m(&s, 1) - pos_m(&s0, 1)) >= m)
            break;
        ck_assert_msg(h_now_us() < end, "the robot did not move %.1f m in 90 s (at %d, %d mm)", m,
                      s.pos_mm[0], s.pos_mm[1]);
    }
    h_simple(c, 0, KN_KRP_STOP, 0);
    settle_robot(c);
}

/* Two snapshots a second apart (NAME-1.jpg, NAME-2.jpg) that must not
 * differ: the second's pixels. */
static uint8_t *still_picture(const char *name)
{
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "%s-1.jpg", name);
    snprintf(n2, sizeof n2, "%s-2.jpg", name);
    uint8_t *a = snapshot_rgb(n1);
    h_sleep_ms(1000);
    uint8_t *b = snapshot_rgb(n2);
    double still = difference(a, b);
    free(a);
    printf("%s: %.3f %% of the pixels changed\n", name, still);
    fflush(stdout);
    ck_assert_msg(still < 0.2, "%s: the picture changed (%.3f %%) while nothing moved", name,
                  still);
    return b;
}

START_TEST(picture_follows_robot)
{
    settle();
    uint8_t *b = still_picture("still");

    drive_robot(&u, 300, 0.5);
    uint8_t *c = snapshot_rgb("c.jpg");
    double moved = difference(b, c);
    printf("moved 0.5 m: %.3f %% of the pixels changed\n", moved);
    fflush(stdout);
    ck_assert_msg(moved > 0.5, "the picture hardly changed (%.3f %%) after a 0.5 m drive", moved);
    free(b);
    free(c);
}
END_TEST

START_TEST(not_found)
{
    const char *bad[] = { "nope/front.jpg", "kenaf/rear.jpg", "nope/birdseye.mjpg" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(fetch(url("http", bad[i]), "/dev/null") == 404, "http /%s: not 404", bad[i]);
    char out[256];
    char *argv[] = { "ffprobe", "-v", "error", (char *)url("rtsp", "nope/front"), NULL };
    int st = h_run_prog(argv, out, sizeof out);
    const char *err = h_file_text(h_path("prog.stderr"));
    ck_assert_msg(st != 0 && strstr(err, "404 Not Found"), "rtsp /nope/front: %d %s", st, err);
}
END_TEST

/* How often `what` is in kenaf-cameras's stderr so far. */
static int logged(const char *what)
{
    int n = 0;
    for (const char *p = h_stderr(&cams); (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The daemon going away leaves the last frame served; it is picked up
 * again (its STATUS and its world) when it is back on its port; SIGTERM
 * stops the program with exit 0 and the stats on stdout. */
/* Front snapshots until one is not marked stale (a live robot gives one
 * as soon as a STATUS is fresh when it is drawn), or 30 s. */
static void live_snapshot(const char *name)
{
    uint64_t end = h_now_us() + 30000000u;
    for (;;) {
        uint8_t *px = snapshot_rgb(name);
        int stale = kn_stamp_is_stale(px, 640, 480, 640 * 3, 3);
        free(px);
        if (!stale)
            return;
        ck_assert_msg(h_now_us() < end, "%s: marked stale 30 s after STATUS came: %s", name,
                      h_stderr(&cams));
        h_sleep_ms(200);
    }
}

START_TEST(daemon_gone_then_stop)
{
    live_snapshot("before.jpg");
    h_signal(&d.proc, SIGKILL);
    h_wait_exit(&d.proc, 30000);
    uint64_t end = h_now_us() + 30000000u;
    while (!strstr(h_stderr(&cams), "no STATUS") && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(strstr(h_stderr(&cams), "no STATUS"), "not logged: %s", h_stderr(&cams));
    /* the last pose, marked stale */
    uint8_t *frozen = snapshot_rgb("frozen.jpg");
    ck_assert_msg(kn_stamp_is_stale(frozen, 640, 480, 640 * 3, 3), "frozen.jpg: not marked stale");
    free(frozen);
    char robots[256];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:%d\",\"backend\":{\"type\":"
             "\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]",
             d.port[0]);
    h_daemon_start(&d, robots);
    end = h_now_us() + 60000000u;
    while ((logged("STATUS from") < 2 || logged("world description") < 2) && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(logged("STATUS from") == 2 && logged("world description") == 2,
                  "the daemon's return was not picked up: %s", h_stderr(&cams));
    live_snapshot("back.jpg");
    h_signal(&cams, SIGTERM);
    int st = h_wait_exit(&cams, 30000);
    ck_assert_msg(st == 0, "exit status %d: %s", st, h_stderr(&cams));
    char line[4096];
    bool stats = false;
    while (h_read_line(&cams, line, sizeof line, 1000))
        stats |= strncmp(line, "{\"cameras\":", 11) == 0;
    ck_assert_msg(stats, "no stats at exit");
}
END_TEST

/* The errors a user meets first, with their messages: exit status 1. */
static void expect_error(char *const env[], const char *message)
{
    char *argv[] = {
        (char *)env_or("KN_CAMERAS", "kenaf-cameras"), "--rtsp-port", "0", "--http-port", "0", NULL
    };
    struct h_proc p;
    h_spawn(&p, argv, env, "error.stderr");
    int st = h_wait_exit(&p, 60000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(h_stderr(&p), message),
                  "status %d, stderr: %s (want \"%s\")", st, h_stderr(&p), message);
    h_forget(&p);
}

START_TEST(errors)
{
    static char reg[300], sys[300], path[300];
    snprintf(reg, sizeof reg, "GST_REGISTRY_1_0=%s", h_path("registry.bin"));
    snprintf(sys, sizeof sys, "GST_PLUGIN_SYSTEM_PATH_1_0=%s", h_path("no-plugins"));
    snprintf(path, sizeof path, "GST_PLUGIN_PATH_1_0=%s", h_path("no-plugins"));
    char *no_gst[] = { reg, sys, path, NULL };
    expect_error(no_gst, "\"x264enc\" missing: install the Debian package "
                         "\"gstreamer1.0-plugins-ugly\"");
    /* libglvnd finds no EGL vendor: as on a machine without Mesa's EGL */
    char *no_egl[] = { reg, "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json", NULL };
    expect_error(no_egl, "kenaf-cameras: no EGL");
}
END_TEST

START_TEST(usage)
{
    char *argv[] = { (char *)env_or("KN_CAMERAS", "kenaf-cameras"), "--front-fps", "0", NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "usage.stderr");
    int st = h_wait_exit(&p, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    char *argv2[] = { (char *)env_or("KN_CAMERAS", "kenaf-cameras"), "--bogus", NULL };
    h_spawn(&p, argv2, NULL, "usage2.stderr");
    st = h_wait_exit(&p, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    ck_assert_ptr_nonnull(strstr(h_stderr(&p), "usage: kenaf-cameras"));
    h_write_file(h_path("bad.json"), "{\"front\": {\"zoom\": 2}}");
    char *argv3[] = { (char *)env_or("KN_CAMERAS", "kenaf-cameras"), "--config",
                      (char *)h_path("bad.json"), NULL };
    h_spawn(&p, argv3, NULL, "usage3.stderr");
    st = h_wait_exit(&p, 30000);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    ck_assert_ptr_nonnull(strstr(h_stderr(&p), "unknown key \"zoom\""));
}
END_TEST

/* What a client receives in 10 s of wall time, front H.264 over RTSP and
 * bird's-eye MJPEG over HTTP at once (ffmpeg -progress); printed. */
START_TEST(rates)
{
    char progress[2][300];
    struct h_proc p[2];
    const char *src[2] = { url("rtsp", "kenaf/front"), url("http", "kenaf/birdseye.mjpg") };
    const char *ff = h_which("ffmpeg");
    ck_assert_ptr_nonnull(ff);
    char path[512];
    snprintf(path, sizeof path, "%s", ff);
    for (int k = 0; k < 2; k++) {
        snprintf(progress[k], sizeof progress[k], "%s", h_path(k ? "birdseye.prog" : "front.prog"));
        char *argv[] = { path, "-nostdin", "-v", "error",     "-i",        (char *)src[k],
                         "-f", "null",     "-",  "-progress", progress[k], NULL };
        h_spawn(&p[k], argv, NULL, k ? "ff-birdseye.stderr" : "ff-front.stderr");
    }
    h_sleep_ms(10000);
    for (int k = 0; k < 2; k++) {
        h_signal(&p[k], SIGINT);
        h_wait_exit(&p[k], 30000);
        /* the last "frame=N" of the progress file */
        FILE *f = fopen(progress[k], "r");
        ck_assert_ptr_nonnull(f);
        char line[256];
        long frames = 0;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "frame=", 6) == 0)
                frames = atol(line + 6);
        fclose(f);
        printf("FIGURE %s: %ld frames in 10 s (%.1f fps, connection time included)\n",
               k ? "birdseye MJPEG" : "front H.264", frames, frames / 10.0);
    }
    h_signal(&cams, SIGTERM);
    h_wait_exit(&cams, 30000);
    char line[4096];
    while (h_read_line(&cams, line, sizeof line, 1000))
        if (line[0] == '{')
            printf("FIGURE stats %s\n", line);
    printf("FIGURE %s", strstr(h_stderr(&cams), "frames rendered") ? h_stderr(&cams) : "\n");
}
END_TEST

/* ---- PTZ control (docs/cameras.md#ptz-control), curl as the console ---- */

#define PTZ "axis-cgi/com/ptz.cgi"

/* curl's GET (or `method`) of PATH?QUERY on the HTTP port: the status;
 * the body in *body (the scratch file's text), the headers in *head. */
static int ptz_req(const char *method, const char *path, const char **body, const char **head)
{
    char out[256], hfile[300], bfile[300];
    snprintf(hfile, sizeof hfile, "%s", h_path("ptz.head"));
    snprintf(bfile, sizeof bfile, "%s", h_path("ptz.body"));
    char *argv[] = { "curl",
                     "-s",
                     "-X",
                     (char *)method,
                     "-D",
                     hfile,
                     "-o",
                     bfile,
                     "-w",
                     "%{http_code}\n",
                     (char *)url("http", path),
                     NULL };
    ck_assert_msg(h_run_prog(argv, out, sizeof out) == 0, "curl %s: %s", path,
                  h_file_text(h_path("prog.stderr")));
    if (body)
        *body = h_file_text(bfile);
    if (head)
        *head = h_file_text(hfile);
    return atoi(out);
}

static void ptz_expect(const char *path, int code, const char *body)
{
    const char *b;
    int got = ptz_req("GET", path, &b, NULL);
    ck_assert_msg(got == code && strcmp(b, body) == 0, "%s: %d \"%s\" (want %d \"%s\")", path, got,
                  b, code, body);
}

/* The pan kenaf-cameras reports for camera 1 (query=position). */
static double ptz_pan(void)
{
    const char *b;
    ck_assert_int_eq(ptz_req("GET", PTZ "?query=position", &b, NULL), 200);
    double pan;
    ck_assert_msg(sscanf(b, "pan=%lf\n", &pan) == 1, "query=position: %s", b);
    return pan;
}

/* The counters kenaf-cameras prints at SIGTERM with --stats. */
static const char *ptz_stats(void)
{
    h_signal(&cams, SIGTERM);
    ck_assert_int_eq(h_wait_exit(&cams, 30000), 0);
    static char line[4096];
    while (h_read_line(&cams, line, sizeof line, 1000))
        if (strncmp(line, "{\"ptz\":", 7) == 0)
            return line;
    ck_abort_msg("no PTZ stats at exit");
    return NULL;
}

START_TEST(ptz_control)
{
    /* the PTZ URLs follow the stream URLs */
    char line[256], want[2][128];
    snprintf(want[0], sizeof want[0], "kenaf-cameras: http://127.0.0.1:%d/kenaf/" PTZ, http_port);
    snprintf(want[1], sizeof want[1], "kenaf-cameras: http://127.0.0.1:%d/" PTZ "?camera=1",
             http_port);
    int seen = 0;
    while (seen < 2 && h_read_line(&cams, line, sizeof line, H_LONG_MS))
        seen += strcmp(line, want[seen]) == 0;
    ck_assert_msg(seen == 2, "not printed: %s", want[seen]);

    const char *b, *hd;
    ck_assert_int_eq(ptz_req("GET", PTZ "?query=position", &b, &hd), 200);
    ck_assert_str_eq(b, "pan=0.00\ntilt=0.00\nzoom=1\n");
    ck_assert_msg(strstr(hd, "Content-Type: text/plain") &&
                      strstr(hd, "Access-Control-Allow-Origin: *"),
                  "headers: %s", hd);
    ptz_expect(PTZ "?query=limits", 200,
               "MinPan=-170.00\nMaxPan=170.00\nMinTilt=-60.00\nMaxTilt=60.00\n"
               "MinZoom=1\nMaxZoom=9999\n");
    /* absolute, relative: 204 as Axis answers a move */
    ptz_expect(PTZ "?camera=1&pan=30&tilt=-10&zoom=5000", 204, "");
    ptz_expect(PTZ "?rpan=10&rtilt=-2.5&rzoom=-999&query=position", 200,
               "pan=40.00\ntilt=-12.50\nzoom=4001\n");
    ptz_expect("kenaf/" PTZ "?query=position", 200, "pan=40.00\ntilt=-12.50\nzoom=4001\n");
    ptz_expect(PTZ "?move=home&query=position", 200, "pan=0.00\ntilt=0.00\nzoom=1\n");
    /* continuous: right at full speed until past 30°, then stop; still */
    ptz_expect(PTZ "?continuouspantiltmove=100,0", 204, "");
    uint64_t end = h_now_us() + 30000000u;
    while (ptz_pan() < 30)
        ck_assert_msg(h_now_us() < end, "the pan never passed 30 in 30 s");
    ptz_expect("kenaf/" PTZ "?camera=1&continuouspantiltmove=0,0", 204, "");
    double p0 = ptz_pan();
    h_sleep_ms(500);
    ck_assert(p0 >= 30 && ptz_pan() == p0);
    /* past the limits: clamped and said */
    ptz_expect(PTZ "?pan=-400&continuouszoommove=250&query=position", 200,
               "clamped pan=-400.00: pan=-170.00\n"
               "clamped continuouszoommove=250.00: zoomspeed=100.00\n"
               "pan=-170.00\ntilt=0.00\nzoom=1\n");
    ptz_expect(PTZ "?continuouszoommove=0&zoom=1", 204, "");
    /* bad requests: 400 with the reason, 405, unknown cameras 404 */
    ptz_expect(PTZ "?bogus=1", 400, "Error: unknown parameter \"bogus\"\n");
    ptz_expect(PTZ "?pan=abc", 400, "Error: pan: \"abc\" is not a number\n");
    ptz_expect(PTZ, 400,
               "Error: no PTZ parameter (pan, tilt, zoom, rpan, rtilt, rzoom, "
               "continuouspantiltmove, continuouszoommove, move=home, query)\n");
    ck_assert_int_eq(ptz_req("POST", PTZ "?pan=1", NULL, NULL), 405);
    ptz_expect(PTZ "?camera=2&pan=1", 404, "Error: no PTZ camera 2\n");
    ptz_expect("kenaf/" PTZ "?camera=2&pan=1", 404, "Error: no PTZ camera 2 at this robot\n");
    ptz_expect("nope/" PTZ "?pan=1", 404, "Error: no robot at /nope/" PTZ "\n");
    /* the streams are still served beside it */
    ck_assert_int_eq(fetch(url("http", "kenaf/nope.jpg"), "/dev/null"), 404);
    const char *st = ptz_stats();
    ck_assert_msg(strstr(st, "\"clamped\":2") && strstr(st, "\"bad\":4") &&
                      strstr(st, "\"unknown_camera\":3"),
                  "stats: %s", st);
}
END_TEST

/* The front camera's picture turns with a 30° pan and is still when
 * nothing moves. */
START_TEST(ptz_picture)
{
    settle();
    uint8_t *b = still_picture("ptz-still");
    ptz_expect(PTZ "?pan=30", 204, "");
    /* the next frames show it: wait for a changed picture */
    uint8_t *c = NULL;
    double moved = 0;
    uint64_t end = h_now_us() + 30000000u;
    while (moved <= 2 && h_now_us() < end) {
        free(c);
        h_sleep_ms(200);
        c = snapshot_rgb("pan.jpg");
        moved = difference(b, c);
    }
    printf("PTZ pan 30: %.3f %% of the pixels changed\n", moved);
    fflush(stdout);
    ck_assert_msg(moved > 2, "the picture hardly changed (%.3f %%) after a 30 degree pan", moved);
    /* a frame or two may have been in flight: then still again */
    h_sleep_ms(1000);
    free(still_picture("ptz-after-pan"));
    free(b);
    free(c);
}
END_TEST

/* Every camera the robot file declares, at its size: front 320x240,
 * rear 160x120, and no birdseye. */
START_TEST(robot_file_cameras)
{
    h_ffprobe_video(url("rtsp", "kenaf/front"), "h264,320,240");
    h_ffprobe_video(url("rtsp", "kenaf/rear"), "h264,160,120");
    h_ffprobe_video(url("http", "kenaf/rear.mjpg"), "mjpeg,160,120");
    ck_assert_int_eq(fetch(url("http", "kenaf/birdseye.jpg"), h_path("none.jpg")), 404);
}
END_TEST

/* The other robot of the world in the first one's front camera: robot
 * two, driven 3 m forward past kenaf, which stood still, comes into
 * kenaf's picture (2 m ahead, 0.6 m aside). */
START_TEST(other_robot_seen)
{
    settle();
    settle_robot(&u2);
    uint8_t *b = still_picture("still");
    drive_robot(&u2, 300, 3.0);
    uint8_t *c = snapshot_rgb("c.jpg");
    double moved = difference(b, c);
    printf("robot two came 2 m ahead: %.3f %% of kenaf's front picture changed\n", moved);
    fflush(stdout);
    /* 4.5 % here; 0.4 % when the other robot is not drawn */
    ck_assert_msg(moved > 2.0, "kenaf's picture hardly changed (%.3f %%)", moved);
    free(b);
    free(c);
}
END_TEST

/* The limits ptz.cgi keeps are the robot file's, nobody watching. */
START_TEST(ptz_robot_file)
{
    const char *want = "MinPan=-90.00\nMaxPan=90.00\nMinTilt=-20.00\nMaxTilt=30.00\n"
                       "MinZoom=1\nMaxZoom=9999\n";
    const char *b = "";
    uint64_t end = h_now_us() + 60000000u;
    while (h_now_us() < end) {
        ck_assert_int_eq(ptz_req("GET", PTZ "?query=limits", &b, NULL), 200);
        if (strcmp(b, want) == 0)
            break;
        h_sleep_ms(100);
    }
    ck_assert_msg(strcmp(b, want) == 0, "query=limits: \"%s\"; kenaf-cameras: %s", b,
                  h_stderr(&cams));
    ptz_expect(PTZ "?pan=120&tilt=-45&query=position", 200,
               "clamped pan=120.00: pan=90.00\nclamped tilt=-45.00: tilt=-20.00\n"
               "pan=90.00\ntilt=-20.00\nzoom=1\n");
}
END_TEST

int main(void)
{
    const char *slow = "the engine and the encoders under valgrind run many times slower than "
                       "these waits and pictures assume";
    h_not_wrapped("play", slow);
    h_not_wrapped("picture", slow);
    h_not_wrapped("rates", slow);
    h_not_wrapped("ptz-picture", slow);
    h_not_wrapped("other-robot", slow);
    const struct h_case cases[] = {
        { "probe", probe_streams, 240, setup, teardown },
        { "config", config_sizes, 240, setup_config, teardown },
        { "play", play_rtsp, 240, setup, teardown },
        { "picture", picture_follows_robot, 300, setup, teardown },
        { "not-found", not_found, 180, setup, teardown },
        { "daemon-gone", daemon_gone_then_stop, 240, setup, teardown },
        { "usage", usage, 60, NULL, NULL },
        { "errors", errors, 120, NULL, NULL },
        { "rates", rates, 240, setup, teardown },
        { "ptz", ptz_control, 240, setup, teardown },
        { "ptz-picture", ptz_picture, 300, setup, teardown },
        { "ptz-robot-file", ptz_robot_file, 240, setup_robot_file, teardown },
        { "robot-file-cameras", robot_file_cameras, 240, setup_robot_cameras, teardown },
        { "other-robot", other_robot_seen, 300, setup_two, teardown_two },
    };
    return h_run_cases("cameras-sys", cases, sizeof cases / sizeof cases[0]);
}
