/* What the files of cameras/stream/ share: the library's state, one
 * struct per camera, and the entry points each file gives the others
 * (stream.c the lifecycle and frames, stream_rtsp.c the RTSP server,
 * stream_http.c the HTTP server, stream_jpeg.c the JPEG encoder of the
 * HTTP side, stream_stats.c the counters, stream_demand.c who wants
 * frames: the watched query and the snapshots waiting). */
#ifndef KN_STREAM_INT_H
#define KN_STREAM_INT_H

#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <libsoup/soup.h>

#include "stream.h"

/* Time spent encoding, in microseconds. */
struct kn_stream_timing {
    uint64_t n, sum_us, max_us;
};

/* One encoder's time: when each frame entered, taken in order as frames
 * leave (x264enc tune=zerolatency and jpegenc keep the order, one frame
 * out per frame in). Streaming thread only. */
#define KN_STREAM_PROBE_RING 32
struct kn_stream_probe {
    struct kn_stream_cam *cam;
    int h264, count_sent;
    gint64 t_in[KN_STREAM_PROBE_RING];
    unsigned head, tail;
};

enum { KN_STREAM_H264, KN_STREAM_RTPJPEG, KN_STREAM_NVARIANTS };

struct kn_stream_cam {
    struct kn_stream *s;
    int index;
    struct kn_stream_camera c; /* robot and name point into path */
    char robot[64], name[64];
    size_t bpp;
    /* under s->mu: the live media (held) and their sources (NULL:
     * nobody watches), the robot time of each media's first frame */
    GstRTSPMedia *media[KN_STREAM_NVARIANTS];
    GstAppSrc *src[KN_STREAM_NVARIANTS];
    GstClockTime base_robot[KN_STREAM_NVARIANTS];
    /* under s->mu: the last frame (for a snapshot between MJPEG frames) */
    guint8 *last;
    uint64_t last_ns;
    int http_watchers; /* MJPEG clients plus snapshots waiting */
    /* main context only: HTTP clients and snapshots waiting */
    GList *mjpeg;
    GList *snaps;          /* struct snap (stream_demand.c) */
    GstElement *jpeg_pipe; /* appsrc ! videoconvert ! jpegenc ! appsink */
    GstAppSrc *jpeg_src;
    /* under s->mu */
    uint64_t rtsp_clients, http_clients, frames_in, frames_bad, frames_sent, frames_dropped,
        clients_dropped;
    struct kn_stream_timing enc[2]; /* [1]: H.264, [0]: JPEG */
};

struct kn_stream {
    GMutex mu;
    GMainContext *ctx;
    GMainLoop *loop;
    struct kn_stream_config cfg;
    struct kn_stream_cam *cams;
    size_t ncams;
    GstRTSPServer *rtsp;
    guint rtsp_source;
    SoupServer *http;
    int rtsp_port, http_port;
};

/* stream_rtsp.c: the server on s->ctx with two shared mounts a camera. */
int kn_stream_rtsp_start(struct kn_stream *s, char *err, size_t errlen);
void kn_stream_rtsp_stop(struct kn_stream *s);
/* Under s->mu: pushes a copy of the frame to each live media. */
void kn_stream_rtsp_feed(struct kn_stream_cam *c, const guint8 *packed, uint64_t robot_ns);

/* stream_http.c: the SoupServer on s->ctx. */
int kn_stream_http_start(struct kn_stream *s, char *err, size_t errlen);
void kn_stream_http_stop(struct kn_stream *s);
/* Main context: a JPEG of camera c is ready for its clients. */
void kn_stream_http_deliver(struct kn_stream_cam *c, GBytes *jpeg);

/* stream_jpeg.c: the HTTP side's encoder, one pipeline a camera. */
int kn_stream_jpeg_start(struct kn_stream_cam *c, char *err, size_t errlen);
void kn_stream_jpeg_stop(struct kn_stream_cam *c);
/* Any thread: encodes the packed frame; the JPEG reaches
 * kn_stream_http_deliver on the main context. */
void kn_stream_jpeg_encode(struct kn_stream_cam *c, const guint8 *packed);

/* stream_demand.c: a snapshot waits (paused) for the next JPEG, or for
 * its deadline; main context only. */
void kn_stream_snap_start(struct kn_stream_cam *c, SoupServerMessage *msg);
void kn_stream_snap_deliver(struct kn_stream_cam *c, const void *jpeg, size_t n);

/* stream_stats.c */
void kn_stream_timing_add(struct kn_stream_timing *t, gint64 us);
/* Times the encoder `enc` (its sink to its src pad) into c->enc[h264];
 * with count_sent, each frame out also counts as sent. */
void kn_stream_probe_attach(struct kn_stream_cam *c, GstElement *enc, int h264, int count_sent);
/* A caps string for the camera's raw frames (g_free). */
char *kn_stream_raw_caps(const struct kn_stream_cam *c);

#endif
