/* The overlay's stamp (cameras/render/stamp.h): drawn and read back as it
 * is, refused when it is not one (blank or noisy pictures, a flipped
 * bit, a picture too small), and, in "codecs", drawn into 640x480 and
 * 320x240 frames, encoded with the streams' own GStreamer encoders
 * (x264enc as the RTSP mount runs it, jpegenc at quality 80) by
 * gst-launch-1.0, decoded by ffmpeg and read back: every frame gives
 * the values drawn into it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "stamp.h"

/* A smooth picture with a little noise, different each frame, as a
 * rendered scene behind the stamp. */
static void background(uint8_t *rgba, int w, int h, unsigned seed)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgba + ((size_t)y * (size_t)w + (size_t)x) * 4;
            seed = seed * 1103515245u + 12345u;
            int n = (int)(seed >> 27) - 16;
            p[0] = (uint8_t)((x + (int)seed % 3 + n + 256) % 256);
            p[1] = (uint8_t)((y * 255 / h + n + 256) % 256);
            p[2] = (uint8_t)(((x + y) / 2 + n + 256) % 256);
            p[3] = 255;
        }
}

START_TEST(roundtrip)
{
    static const int sizes[][2] = { { 640, 480 }, { 1280, 720 }, { 320, 240 }, { 160, 120 } };
    static const uint64_t times[] = { 0, 1, 999, 3600000, 4294967295ull, 4294967296ull + 77 };
    static const uint32_t frames[] = { 0, 1, 0xFFFFFF, 0x1000005 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        uint8_t *rgba = malloc((size_t)w * (size_t)h * 4), *rgb = malloc((size_t)w * (size_t)h * 3);
        ck_assert_ptr_nonnull(rgba);
        ck_assert_ptr_nonnull(rgb);
        for (size_t t = 0; t < sizeof times / sizeof times[0]; t++)
            for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
                background(rgba, w, h, (unsigned)(t * 7 + f));
                ck_assert_int_eq(kn_stamp_draw(rgba, w, h, (size_t)w * 4, frames[f], times[t]), 0);
                struct kn_stamp st;
                ck_assert_int_eq(kn_stamp_read(rgba, w, h, (size_t)w * 4, 4, &st), 0);
                ck_assert_uint_eq(st.frame, frames[f] & 0xFFFFFFu);
                ck_assert_uint_eq(st.robot_ms, (uint32_t)times[t]);
                for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
                    memcpy(rgb + 3 * i, rgba + 4 * i, 3);
                memset(&st, 0, sizeof st);
                ck_assert_int_eq(kn_stamp_read(rgb, w, h, (size_t)w * 3, 3, &st), 0);
                ck_assert_uint_eq(st.frame, frames[f] & 0xFFFFFFu);
                ck_assert_uint_eq(st.robot_ms, (uint32_t)times[t]);
            }
        free(rgba);
        free(rgb);
    }
}
END_TEST

START_TEST(refuses)
{
    int w = 640, h = 480;
    size_t stride = (size_t)w * 4;
    uint8_t *px = malloc(stride * (size_t)h);
    ck_assert_ptr_nonnull(px);
    struct kn_stamp st;
    /* blank, black, noise: no stamp */
    memset(px, 255, stride * (size_t)h);
    ck_assert_int_eq(kn_stamp_read(px, w, h, stride, 4, &st), -1);
    memset(px, 0, stride * (size_t)h);
    ck_assert_int_eq(kn_stamp_read(px, w, h, stride, 4, &st), -1);
    int found = 0;
    for (unsigned k = 0; k < 200; k++) {
        unsigned seed = k * 2654435761u;
        for (size_t i = 0; i < stride * (size_t)h; i++) {
            seed = seed * 1103515245u + 12345u;
            px[i] = (uint8_t)(seed >> 24);
        }
        found += kn_stamp_read(px, w, h, stride, 4, &st) == 0;
    }
    ck_assert_int_eq(found, 0);
    /* one block turned over: the CRC (or the sync byte) refuses it */
    int b = kn_stamp_block(w);
    for (int bit = 0; bit < KN_STAMP_COLS * KN_STAMP_ROWS; bit++) {
        background(px, w, h, 1);
        ck_assert_int_eq(kn_stamp_draw(px, w, h, stride, 123456, 987654321), 0);
        int x0 = (1 + bit % KN_STAMP_COLS) * b, y0 = (1 + bit / KN_STAMP_COLS) * b;
        for (int y = y0; y < y0 + b; y++)
            for (int x = x0; x < x0 + b; x++) {
                uint8_t *p = px + (size_t)y * stride + (size_t)x * 4;
                p[0] = p[1] = p[2] = (uint8_t)(255 - p[0]);
            }
        ck_assert_msg(kn_stamp_read(px, w, h, stride, 4, &st) == -1, "bit %d flipped, read", bit);
    }
    /* too small, bad arguments */
    ck_assert_int_eq(kn_stamp_draw(px, 32, 32, 32 * 4, 1, 1), -1);
    ck_assert_int_eq(kn_stamp_read(px, 32, 32, 32 * 4, 4, &st), -1);
    ck_assert_int_eq(kn_stamp_read(px, w, h, stride, 2, &st), -1);
    ck_assert_int_eq(kn_stamp_read(px, w, h, 100, 4, &st), -1);
    ck_assert_int_eq(kn_stamp_read(NULL, w, h, stride, 4, &st), -1);
    free(px);
}
END_TEST

/* The text: the time as H:MM:SS.mmm, and drawn pixels that change with it. */
START_TEST(text)
{
    char t[32];
    kn_stamp_format(0, t, sizeof t);
    ck_assert_str_eq(t, "0:00:00.000");
    kn_stamp_format(36000000ull + 61001, t, sizeof t);
    ck_assert_str_eq(t, "10:01:01.001");
    int w = 640, h = 480;
    size_t stride = (size_t)w * 4, n = stride * (size_t)h;
    uint8_t *a = malloc(n), *b = malloc(n);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    memset(a, 128, n);
    memset(b, 128, n);
    kn_stamp_draw(a, w, h, stride, 1, 1000);
    kn_stamp_draw(b, w, h, stride, 1, 2000);
    /* the text sits right of the stamp (38 blocks of 8), within its band */
    int changed = 0, lit = 0;
    for (int y = 0; y < 32; y++)
        for (int x = 38 * 8; x < w; x++) {
            size_t i = (size_t)y * stride + (size_t)x * 4;
            changed += a[i] != b[i];
            lit += a[i] == 255;
        }
    ck_assert_int_gt(changed, 10);
    ck_assert_int_gt(lit, 50);
    /* below the band the picture is untouched */
    for (size_t i = 40 * stride; i < n; i++)
        ck_assert_uint_eq(a[i], 128);
    free(a);
    free(b);
}
END_TEST

#define NFRAMES 60

/* NFRAMES stamped frames of w x h through `encoder` (a gst-launch-1.0
 * pipeline tail) into a file ffmpeg decodes as `format`; each frame read
 * back. */
static void through(int w, int h, const char *encoder, const char *format)
{
    size_t frame = (size_t)w * (size_t)h * 4;
    uint8_t *px = malloc(frame);
    ck_assert_ptr_nonnull(px);
    char in[300], coded[300], grey[300];
    snprintf(in, sizeof in, "%s", h_path("in.rgba"));
    snprintf(coded, sizeof coded, "%s", h_path("coded"));
    snprintf(grey, sizeof grey, "%s", h_path("out.grey"));
    FILE *f = fopen(in, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < NFRAMES; i++) {
        background(px, w, h, (unsigned)i);
        ck_assert_int_eq(kn_stamp_draw(px, w, h, (size_t)w * 4, 1000u + (unsigned)i * 3u,
                                       123456789ull + (uint64_t)i * 33u),
                         0);
        ck_assert_uint_eq(fwrite(px, 1, frame, f), frame);
    }
    fclose(f);
    char cmd[2048], out[256];
    snprintf(cmd, sizeof cmd,
             "gst-launch-1.0 -q filesrc location=%s blocksize=%zu ! rawvideoparse width=%d "
             "height=%d format=rgba framerate=30/1 ! videoconvert ! video/x-raw,format=I420 ! "
             "%s ! filesink location=%s",
             in, frame, w, h, encoder, coded);
    char *sh[] = { "sh", "-c", cmd, NULL };
    ck_assert_msg(h_run_prog(sh, out, sizeof out) == 0, "%s: %s", cmd,
                  h_file_text(h_path("prog.stderr")));
    char *ff[] = { "ffmpeg",   "-v",   "error",     "-y",          "-f", (char *)format,
                   "-i",       coded,  "-fps_mode", "passthrough", "-f", "rawvideo",
                   "-pix_fmt", "gray", grey,        NULL };
    ck_assert_msg(h_run_prog(ff, out, sizeof out) == 0, "ffmpeg: %s",
                  h_file_text(h_path("prog.stderr")));
    f = fopen(grey, "rb");
    ck_assert_ptr_nonnull(f);
    size_t g = (size_t)w * (size_t)h;
    int n = 0;
    while (fread(px, 1, g, f) == g) {
        struct kn_stamp st;
        ck_assert_msg(kn_stamp_read(px, w, h, (size_t)w, 1, &st) == 0, "%dx%d %s: frame %d unread",
                      w, h, format, n);
        ck_assert_uint_eq(st.frame, 1000u + (unsigned)n * 3u);
        ck_assert_uint_eq(st.robot_ms, 123456789u + (unsigned)n * 33u);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, NFRAMES);
    free(px);
}

/* The stale mark: found where drawn, not on a live picture, and the
 * stamp and time beside it still read. */
START_TEST(stale)
{
    static uint8_t px[640 * 480 * 4], rgb[640 * 480 * 3];
    background(px, 640, 480, 7);
    ck_assert_int_eq(kn_stamp_draw(px, 640, 480, 640 * 4, 1234, 56789), 0);
    ck_assert(!kn_stamp_is_stale(px, 640, 480, 640 * 4, 4));
    kn_stamp_stale(px, 640, 480, 640 * 4);
    ck_assert(kn_stamp_is_stale(px, 640, 480, 640 * 4, 4));
    struct kn_stamp st;
    ck_assert_int_eq(kn_stamp_read(px, 640, 480, 640 * 4, 4, &st), 0);
    ck_assert_uint_eq(st.frame, 1234);
    ck_assert_uint_eq(st.robot_ms, 56789);
    for (int i = 0; i < 640 * 480; i++)
        memcpy(rgb + i * 3, px + i * 4, 3);
    ck_assert(kn_stamp_is_stale(rgb, 640, 480, 640 * 3, 3));
    /* a picture that is red all over is red at the edges too: the mark
     * says nothing more than red edges, and grey, or too small, is not */
    ck_assert(!kn_stamp_is_stale(rgb, 640, 480, 640 * 3, 1));
    ck_assert(!kn_stamp_is_stale(rgb, 8, 8, 8 * 3, 3));
    ck_assert(!kn_stamp_is_stale(NULL, 640, 480, 640 * 3, 3));
    kn_stamp_stale(NULL, 640, 480, 640 * 4); /* nothing drawn, no crash */
}
END_TEST

START_TEST(codecs)
{
    /* the RTSP H.264 mount's encoder (cameras/stream/stream_rtsp.c) */
    const char *h264 = "x264enc tune=zerolatency speed-preset=ultrafast bitrate=2000 "
                       "key-int-max=30 ! video/x-h264,profile=constrained-baseline ! h264parse ! "
                       "video/x-h264,stream-format=byte-stream";
    through(640, 480, h264, "h264");
    through(320, 240, h264, "h264");
    /* the JPEG encoder of the HTTP and RTP/JPEG sides, its default quality */
    through(640, 480, "jpegenc quality=80", "mjpeg");
    through(320, 240, "jpegenc quality=80", "mjpeg");
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "roundtrip", roundtrip, 60, NULL, NULL }, { "refuses", refuses, 60, NULL, NULL },
        { "text", text, 30, NULL, NULL },           { "stale", stale, 30, NULL, NULL },
        { "codecs", codecs, 240, NULL, NULL },
    };
    return h_run_cases("cameras-stamp", cases, sizeof cases / sizeof cases[0]);
}
