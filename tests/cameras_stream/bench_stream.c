/* Encode time per frame at 640x480 on this machine, printed: H.264
 * (x264enc tune=zerolatency speed-preset=ultrafast) and JPEG (jpegenc,
 * quality 80), from the library's own stats while one RTSP client
 * (gst-launch-1.0) and one MJPEG client (curl) watch the front camera
 * for 10 s. Fails on errors only, never on the times. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "stream_fixture.h"

START_TEST(encode_times)
{
    struct sf_run run;
    sf_start(&run);
    char loc[128], mjpg[128];
    snprintf(loc, sizeof loc, "location=rtsp://127.0.0.1:%d/kenaf1/front", run.rtsp_port);
    snprintf(mjpg, sizeof mjpg, "http://127.0.0.1:%d/kenaf1/front.mjpg", run.http_port);
    char *gst[] = { "gst-launch-1.0", "rtspsrc", loc, "!", "decodebin", "!", "fakesink", NULL };
    char *curl[] = { "curl", "-s", "-N", "-o", "/dev/null", mjpg, NULL };
    struct h_proc g, c;
    h_spawn_prog(&g, gst, "gst.stderr");
    h_spawn_prog(&c, curl, "curl.stderr");
    uint64_t end = h_now_us() + 60000000;
    while ((sf_stat(&run, "front", "rtsp_clients") < 1 ||
            sf_stat(&run, "front", "http_clients") < 1) &&
           h_now_us() < end)
        h_sleep_ms(50);
    ck_assert_double_eq(sf_stat(&run, "front", "rtsp_clients"), 1);
    ck_assert_double_eq(sf_stat(&run, "front", "http_clients"), 1);
    h_sleep_ms(10000);
    printf("cameras-stream bench, 640x480 RGBA at 30 fps, 10 s, encode time per frame (us):\n");
    const char *codec[] = { "h264", "jpeg" };
    for (int i = 0; i < 2; i++) {
        double n = sf_encode_stat(&run, "front", codec[i], "n");
        printf("  %-4s  frames %4.0f  avg %7.0f  max %7.0f\n", codec[i], n,
               sf_encode_stat(&run, "front", codec[i], "avg"),
               sf_encode_stat(&run, "front", codec[i], "max"));
        ck_assert_double_gt(n, 0);
    }
    printf("  frames in %.0f, sent %.0f, dropped %.0f\n", sf_stat(&run, "front", "frames_in"),
           sf_stat(&run, "front", "frames_sent"), sf_stat(&run, "front", "frames_dropped"));
    h_signal(&g, SIGKILL);
    h_signal(&c, SIGKILL);
    sf_stop(&run);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "encode", encode_times, 180, NULL, NULL },
    };
    return h_run_cases("cameras-stream-bench", cases, sizeof cases / sizeof cases[0]);
}
