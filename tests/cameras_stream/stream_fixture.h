/* What the cameras/stream tests and benchmark share: the library started
 * on free loopback ports with two cameras (kenaf1/front 640x480 at 30 fps,
 * kenaf1/birdseye 640x480 at 15 fps), its main context run by one thread
 * and synthetic frames pushed by another, at the cameras' rates in robot
 * time; and the stats read back as JSON. */
#ifndef SF_STREAM_FIXTURE_H
#define SF_STREAM_FIXTURE_H

#include <stdint.h>

#include "stream.h"

struct sf_run {
    struct kn_stream *s;
    int rtsp_port, http_port;
};

/* Starts everything; fails the test (Check) on an error. */
void sf_start(struct sf_run *r);
/* Stops the feeder and the loop, frees the library. */
void sf_stop(struct sf_run *r);

/* Fills an RGBA frame: a gradient moving with n, and n drawn in binary
 * as 32 white or black 8x8 blocks along the top rows. */
void sf_frame(uint8_t *rgba, int w, int h, uint64_t n);

/* A counter of camera `cam` ("frames_in", "clients_dropped", ...) from
 * kn_stream_stats_json; -1 when absent. */
double sf_stat(struct sf_run *r, const char *cam, const char *key);
/* An encode time of camera `cam` ("h264" or "jpeg", "avg", "max", "n"). */
double sf_encode_stat(struct sf_run *r, const char *cam, const char *codec, const char *key);

#endif
