/* cameras/stream/ against clients this repository did not write: ffprobe
 * and gst-launch-1.0 on the RTSP mounts, ffprobe and curl on the HTTP
 * URLs, plus a raw socket that connects to an MJPEG URL and never reads
 * (it must be dropped, counted, while another client keeps receiving).
 * The library runs on free loopback ports, fed with synthetic frames. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "stream_fixture.h"

static struct sf_run run;

static void setup(void)
{
    h_setup();
    sf_start(&run);
}

static void teardown(void)
{
    sf_stop(&run);
    h_teardown();
}

/* The stats document, for failure messages (a static buffer). */
static const char *stats(void)
{
    static char buf[4096];
    char *text = kn_stream_stats_json(run.s);
    snprintf(buf, sizeof buf, "%s", text);
    free(text);
    return buf;
}

static const char *url(const char *scheme, const char *path)
{
    static char buf[4][256];
    static int i;
    char *b = buf[i++ % 4];
    snprintf(b, sizeof buf[0], "%s://127.0.0.1:%d/%s", scheme,
             strcmp(scheme, "rtsp") == 0 ? run.rtsp_port : run.http_port, path);
    return b;
}

START_TEST(rtsp_probe)
{
    h_ffprobe_video(url("rtsp", "kenaf1/front"), "h264,640,480");
    h_ffprobe_video(url("rtsp", "kenaf1/front.mjpeg"), "mjpeg,640,480");
    h_ffprobe_video(url("rtsp", "kenaf1/birdseye"), "h264,640,480");
    ck_assert_double_gt(sf_encode_stat(&run, "front", "h264", "n"), 0);
    ck_assert_double_gt(sf_stat(&run, "front", "frames_sent"), 0);
}
END_TEST

/* Stops gst-launch-1.0 with SIGINT; its exit status, its stdout's
 * lines in out. */
static int interrupt(struct h_proc *p, char *out, size_t outlen)
{
    h_signal(p, SIGINT);
    int st = h_wait_exit(p, 60000);
    char line[512];
    out[0] = '\0';
    while (h_read_line(p, line, sizeof line, 1000)) {
        strncat(out, line, outlen - strlen(out) - 1);
        strncat(out, "\n", outlen - strlen(out) - 1);
    }
    return st;
}

/* gst-launch-1.0 plays 5 s of the mount (fakesink ends after as many
 * frames, which sends EOS through the pipeline): exit 0 and "Got EOS", or
 * exit 1 for the race on its way down alone (h_gst_teardown_race). It
 * ends by itself: stopping it with SIGINT and -e sometimes left it
 * waiting for an EOS that never came. */
static void play(const char *mount, const char *cam, int fps)
{
    char loc[300], frames[64];
    snprintf(loc, sizeof loc, "location=%s", url("rtsp", mount));
    snprintf(frames, sizeof frames, "num-buffers=%d", 5 * fps);
    char *argv[] = { "gst-launch-1.0", "rtspsrc", loc, "!", "decodebin", "!",
                     "fakesink",       frames,    NULL };
    struct h_proc p;
    h_spawn_prog(&p, argv, "gst.stderr");
    double sent0 = sf_stat(&run, cam, "frames_sent");
    uint64_t end = h_now_us() + 60000000;
    while (sf_stat(&run, cam, "rtsp_clients") < 1 && h_now_us() < end)
        h_sleep_ms(50);
    static char out[16384];
    if (sf_stat(&run, cam, "rtsp_clients") < 1) {
        int st = interrupt(&p, out, sizeof out);
        ck_abort_msg("%s: no client in 60 s; gst-launch status %d:\n%s%s\nstats %s", mount, st, out,
                     h_stderr(&p), stats());
    }
    int st = h_wait_exit(&p, 90000);
    char line[512];
    out[0] = '\0';
    while (h_read_line(&p, line, sizeof line, 1000)) {
        strncat(out, line, sizeof out - strlen(out) - 1);
        strncat(out, "\n", sizeof out - strlen(out) - 1);
    }
    bool clean = st == 0 && strstr(out, "Got EOS") && !strstr(out, "ERROR");
    bool raced = h_gst_teardown_race(st, out, h_stderr(&p));
    if (raced)
        printf("%s: gst-launch's PAUSE came after the server closed on TEARDOWN (accepted)\n",
               mount);
    ck_assert_msg(clean || raced, "gst-launch %s: status %d:\n%s%s\nstats %s", mount, st, out,
                  h_stderr(&p), stats());
    ck_assert_msg(sf_stat(&run, cam, "frames_sent") >= sent0 + 5 * fps, "%s: %s", mount, stats());
}

START_TEST(rtsp_play)
{
    /* every mount: both cameras, H.264 and JPEG over RTP */
    play("kenaf1/front", "front", 30);
    play("kenaf1/front.mjpeg", "front", 30);
    play("kenaf1/birdseye", "birdseye", 15);
    play("kenaf1/birdseye.mjpeg", "birdseye", 15);
    /* gone when they leave */
    uint64_t end = h_now_us() + 30000000;
    while (sf_stat(&run, "front", "rtsp_clients") > 0 && h_now_us() < end)
        h_sleep_ms(50);
    ck_assert_msg(sf_stat(&run, "front", "rtsp_clients") == 0, "%s", stats());
}
END_TEST

START_TEST(http_probe)
{
    h_ffprobe_video(url("http", "kenaf1/front.mjpg"), "mjpeg,640,480");
    ck_assert_double_gt(sf_encode_stat(&run, "front", "jpeg", "n"), 0);
}
END_TEST

/* curl's "code content-type" for a URL, the body in file `to`. */
static void fetch(const char *u, const char *to, char *out, size_t outlen)
{
    char *argv[] = { "curl",    "-s", "-o", (char *)to, "-w", "%{response_code} %{content_type}\n",
                     (char *)u, NULL };
    h_run_prog(argv, out, outlen);
}

START_TEST(snapshot)
{
    /* the first frame may not be there yet: 503 until it is */
    char out[512];
    const char *jpg = h_path("front.jpg");
    uint64_t end = h_now_us() + 30000000;
    do
        fetch(url("http", "kenaf1/front.jpg"), jpg, out, sizeof out);
    while (strncmp(out, "503", 3) == 0 && h_now_us() < end);
    ck_assert_str_eq(out, "200 image/jpeg");
    h_ffprobe_video(jpg, "mjpeg,640,480");
    fetch(url("http", "kenaf1/birdseye.jpg"), h_path("birdseye.jpg"), out, sizeof out);
    ck_assert_str_eq(out, "200 image/jpeg");
    h_ffprobe_video(h_path("birdseye.jpg"), "mjpeg,640,480");
}
END_TEST

START_TEST(not_found)
{
    const char *bad[] = { "kenaf2/front.mjpg", "kenaf1/rear.jpg",     "kenaf1/front.png",
                          "kenaf1/front",      "kenaf1/front.mjpg/x", "" };
    char out[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fetch(url("http", bad[i]), "/dev/null", out, sizeof out);
        ck_assert_msg(strncmp(out, "404 ", 4) == 0, "http /%s: %s %s", bad[i], out,
                      h_file_text(h_path("prog.stderr")));
    }
    /* gst-rtsp-server answers a mount it does not have 404 Not Found,
     * which ffprobe reports */
    const char *rbad[] = { "kenaf2/front", "kenaf1/rear", "kenaf1/front.jpeg" };
    for (size_t i = 0; i < sizeof rbad / sizeof rbad[0]; i++) {
        char *argv[] = { "ffprobe", "-v", "error", (char *)url("rtsp", rbad[i]), NULL };
        int st = h_run_prog(argv, out, sizeof out);
        const char *err = h_file_text(h_path("prog.stderr"));
        ck_assert_msg(st != 0 && strstr(err, "404 Not Found"), "rtsp /%s: %d %s", rbad[i], st, err);
    }
}
END_TEST

/* A client that sends its request and never reads: a small receive
 * buffer so the server's side fills in seconds, not minutes. */
static int stalled_client(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)run.http_port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char *req = "GET /kenaf1/front.mjpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    return fd;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

START_TEST(slow_client_dropped)
{
    int fd = stalled_client();
    const char *got = h_path("reader.mjpg");
    char *argv[] = { "curl", "-s",        "-N",
                     "-o",   (char *)got, (char *)url("http", "kenaf1/front.mjpg"),
                     NULL };
    struct h_proc reader;
    h_spawn_prog(&reader, argv, "curl.stderr");
    uint64_t end = h_now_us() + 90000000;
    while (sf_stat(&run, "front", "clients_dropped") < 1 && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(sf_stat(&run, "front", "clients_dropped") == 1 &&
                      sf_stat(&run, "front", "frames_dropped") > 0,
                  "%s", stats());
    /* the reader goes on: 100 kB more after the drop */
    long at_drop = file_size(got);
    end = h_now_us() + 60000000;
    while (file_size(got) < at_drop + 100000 && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(file_size(got) >= at_drop + 100000, "reader: %ld bytes, %ld at the drop: %s",
                  file_size(got), at_drop, stats());
    /* the stalled one was left with one client */
    end = h_now_us() + 30000000;
    while (sf_stat(&run, "front", "http_clients") != 1 && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(sf_stat(&run, "front", "http_clients") == 1, "%s", stats());
    close(fd);
}
END_TEST

/* A frame that does not fit its camera is refused and counted. */
START_TEST(bad_frames)
{
    static uint8_t px[640 * 4];
    ck_assert_int_eq(kn_stream_push(run.s, 0, px, 100, 0), -1);
    ck_assert_int_eq(kn_stream_push(run.s, 2, px, 0, 0), -1);
    ck_assert_int_eq(kn_stream_push(run.s, -1, px, 0, 0), -1);
    ck_assert_double_eq(sf_stat(&run, "front", "frames_bad"), 1);
    ck_assert_int_eq(kn_stream_find(run.s, "kenaf1", "birdseye"), 1);
    ck_assert_int_eq(kn_stream_find(run.s, "kenaf2", "front"), -1);
}
END_TEST

START_TEST(missing_element)
{
    /* GStreamer with no plugins at all, from a registry of its own */
    setenv("GST_PLUGIN_SYSTEM_PATH_1_0", h_path("no-plugins"), 1);
    setenv("GST_PLUGIN_PATH_1_0", h_path("no-plugins"), 1);
    setenv("GST_REGISTRY_1_0", h_path("registry.bin"), 1);
    static const struct kn_stream_camera cam = { .robot = "kenaf1", .name = "front" };
    struct kn_stream_config cfg = { .address = "127.0.0.1", .cameras = &cam, .ncameras = 1 };
    char err[1024];
    ck_assert_ptr_null(kn_stream_new(&cfg, err, sizeof err));
    ck_assert_msg(strstr(err, "\"x264enc\" missing: install the Debian package "
                              "\"gstreamer1.0-plugins-ugly\""),
                  "%s", err);
    ck_assert_msg(strstr(err, "\"jpegenc\" missing: install the Debian package "
                              "\"gstreamer1.0-plugins-good\""),
                  "%s", err);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "rtsp-probe", rtsp_probe, 180, setup, teardown },
        { "rtsp-play", rtsp_play, 240, setup, teardown },
        { "http-probe", http_probe, 120, setup, teardown },
        { "snapshot", snapshot, 120, setup, teardown },
        { "not-found", not_found, 120, setup, teardown },
        { "slow-client", slow_client_dropped, 240, setup, teardown },
        { "bad-frames", bad_frames, 60, setup, teardown },
        { "missing-element", missing_element, 60, NULL, NULL },
    };
    return h_run_cases("cameras-stream", cases, sizeof cases / sizeof cases[0]);
}
