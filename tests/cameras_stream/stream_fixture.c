/* The cameras/stream tests' fixture: the library on free ports, its loop
 * on a thread, synthetic frames at the cameras' rates from another. */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <cJSON.h>

#include "harness_proc.h"
#include "stream_fixture.h"

static pthread_t loop_thread, feed_thread;
static atomic_int feeding;

static const struct kn_stream_camera cams[] = {
    { .robot = "kenaf1", .name = "front" },
    { .robot = "kenaf1", .name = "birdseye" },
};

void sf_frame(uint8_t *rgba, int w, int h, uint64_t n)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgba + ((size_t)y * (size_t)w + (size_t)x) * 4;
            p[0] = (uint8_t)(x + (int)n * 4);
            p[1] = (uint8_t)(y + (int)n * 2);
            p[2] = (uint8_t)((x + y) / 4);
            p[3] = 255;
        }
    for (int bit = 0; bit < 32 && (bit + 1) * 8 <= w; bit++) {
        uint8_t v = (n >> bit) & 1 ? 255 : 0;
        for (int y = 0; y < 8 && y < h; y++)
            for (int x = bit * 8; x < bit * 8 + 8; x++)
                memset(rgba + ((size_t)y * (size_t)w + (size_t)x) * 4, v, 3);
    }
}

static void *loop_main(void *arg)
{
    kn_stream_run(arg);
    return NULL;
}

/* Both cameras at their own rate on one clock: robot time is the time
 * since the first frame, paced in real time. */
static void *feed_main(void *arg)
{
    struct kn_stream *s = arg;
    int w = 640, h = 480;
    uint8_t *px = malloc((size_t)w * (size_t)h * 4);
    uint64_t n[2] = { 0, 0 };
    const uint64_t period[2] = { 1000000000ull / 30, 1000000000ull / 15 };
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&feeding)) {
        int c = n[0] * period[0] <= n[1] * period[1] ? 0 : 1;
        uint64_t due = n[c] * period[c];
        struct timespec at = { t0.tv_sec + (time_t)(due / 1000000000ull),
                               t0.tv_nsec + (long)(due % 1000000000ull) };
        if (at.tv_nsec >= 1000000000L) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000L;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        sf_frame(px, w, h, n[c]);
        kn_stream_push(s, c, px, 0, due);
        n[c]++;
    }
    free(px);
    return NULL;
}

void sf_start(struct sf_run *r)
{
    struct kn_stream_config cfg = { .address = "127.0.0.1", .cameras = cams, .ncameras = 2 };
    char err[512];
    r->s = kn_stream_new(&cfg, err, sizeof err);
    ck_assert_msg(r->s != NULL, "kn_stream_new: %s", err);
    r->rtsp_port = kn_stream_rtsp_port(r->s);
    r->http_port = kn_stream_http_port(r->s);
    ck_assert_int_gt(r->rtsp_port, 0);
    ck_assert_int_gt(r->http_port, 0);
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, loop_main, r->s), 0);
    atomic_store(&feeding, 1);
    ck_assert_int_eq(pthread_create(&feed_thread, NULL, feed_main, r->s), 0);
}

void sf_stop(struct sf_run *r)
{
    if (!r->s)
        return;
    atomic_store(&feeding, 0);
    pthread_join(feed_thread, NULL);
    kn_stream_quit(r->s);
    pthread_join(loop_thread, NULL);
    kn_stream_free(r->s);
    r->s = NULL;
}

static cJSON *camera(cJSON *root, const char *cam)
{
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cameras"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "camera")), cam) == 0)
            return c;
    }
    return NULL;
}

double sf_stat(struct sf_run *r, const char *cam, const char *key)
{
    char *text = kn_stream_stats_json(r->s);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *v = cJSON_GetObjectItem(camera(root, cam), key);
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(root);
    return d;
}

double sf_encode_stat(struct sf_run *r, const char *cam, const char *codec, const char *key)
{
    char *text = kn_stream_stats_json(r->s);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *enc = cJSON_GetObjectItem(camera(root, cam), "encode_us");
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(enc, codec), key);
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(root);
    return d;
}
