/* kenaf-cameras' serving side: the robot's cameras served the way IP
 * cameras serve them, from frames the caller pushes (a renderer). RTSP
 * (H.264 and JPEG over RTP) with gst-rtsp-server, MJPEG and snapshots
 * over HTTP with libsoup 3, stats as JSON. See docs/cameras.md#streams.
 *
 * Threads: everything network-side runs on one GLib main context that
 * the library owns; the caller runs it with kn_stream_run (blocking, on
 * whichever thread the caller gives it, e.g. one of its own) and stops it
 * with kn_stream_quit from any thread. kn_stream_push may be called from
 * any thread, concurrently with the loop. */
#ifndef KN_STREAM_H
#define KN_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct kn_stream;

enum kn_stream_format {
    KN_STREAM_RGBA, /* 4 bytes a pixel, R first */
    KN_STREAM_RGB,  /* 3 bytes a pixel */
};

/* One robot camera: served at rtsp://HOST:PORT/ROBOT/NAME (H.264),
 * rtsp://HOST:PORT/ROBOT/NAME.mjpeg (JPEG over RTP, RFC 2435),
 * http://HOST:PORT/ROBOT/NAME.mjpg (MJPEG) and .../NAME.jpg (snapshot).
 * Zero fields take the defaults of kn_stream_camera_defaults. */
struct kn_stream_camera {
    const char *robot; /* path segment: letters, digits, '-', '_' */
    const char *name;  /* "front", "birdseye", ... */
    int width, height; /* pixels (RTP/JPEG wants multiples of 8) */
    int fps;           /* frames a second the caller pushes */
    int bitrate_kbps;  /* H.264 target */
    int jpeg_quality;  /* 1..100, RTP/JPEG and MJPEG */
    enum kn_stream_format format;
};

/* What the caller's HTTP handler answers (kn_stream_config.http_handler):
 * the status, the body's type and the body (text, len bytes), with
 * `Access-Control-Allow-Origin: *` when any_origin, so that a page from
 * another server may read it. Sent with `Cache-Control: no-store`. */
struct kn_stream_http_reply {
    int status;
    const char *content_type;
    char body[32768];
    size_t len;
    int any_origin;
};

/* A request for the caller: the method, the path and the query as sent
 * (%-escapes kept; "" without one). Fills r and returns 1 when the path is
 * the handler's, else 0 and the library serves it. On the library's main
 * context. */
typedef int (*kn_stream_http_handler)(void *arg, const char *method, const char *path,
                                      const char *query, struct kn_stream_http_reply *r);

struct kn_stream_config {
    const char *address; /* listen address; NULL: every interface */
    int rtsp_port;       /* 0: a free port (kn_stream_rtsp_port); -1: 8554 */
    int http_port;       /* 0: a free port (kn_stream_http_port); -1: 8081 */
    int client_queue;    /* MJPEG parts queued per HTTP client; 0: 4 */
    int client_stall_ms; /* a client whose queue stays full this long is dropped; 0: 2000 */
    /* a snapshot waits this long for the next frame, then 503; 0: 3000 */
    int snapshot_wait_ms;
    const struct kn_stream_camera *cameras;
    size_t ncameras;
    kn_stream_http_handler http_handler; /* NULL: none */
    void *http_handler_arg;
};

/* front: 640x480 at 30 fps; birdseye (and any other): 640x480 at 15 fps;
 * 2000 kbit/s, JPEG quality 80, RGBA. Fills what `c` leaves at zero. */
void kn_stream_camera_defaults(struct kn_stream_camera *c);

/* Checks the GStreamer elements (a missing one is named with its Debian
 * package), binds both servers and attaches them to the library's main
 * context. NULL and a message in err on failure. */
struct kn_stream *kn_stream_new(const struct kn_stream_config *cfg, char *err, size_t errlen);

/* Runs the main context until kn_stream_quit. */
void kn_stream_run(struct kn_stream *s);
/* Any thread: makes kn_stream_run return, even when the loop has not
 * started yet. */
void kn_stream_quit(struct kn_stream *s);
/* After kn_stream_run has returned (or was never called). */
void kn_stream_free(struct kn_stream *s);

int kn_stream_rtsp_port(const struct kn_stream *s);
int kn_stream_http_port(const struct kn_stream *s);

/* A camera's index by robot and name, -1 if none. */
int kn_stream_find(const struct kn_stream *s, const char *robot, const char *name);

/* One frame of camera `cam`, at robot time `robot_ns` (the stream's
 * timestamps follow it): the camera's width x height in its format,
 * rows `stride` bytes apart (0: packed). The pixels are copied; the
 * frame is only encoded for the clients that watch. 0, or -1 for an
 * unknown camera or a stride shorter than a row (counted as bad). Any
 * thread. */
int kn_stream_push(struct kn_stream *s, int cam, const uint8_t *pixels, size_t stride,
                   uint64_t robot_ns);

/* Whether anyone wants camera `cam`'s frames now: an RTSP media of it
 * exists (a client described or plays it), an MJPEG client reads it or a
 * snapshot waits for its next frame. A caller may skip rendering the
 * frames of a camera nobody watches. Any thread. */
int kn_stream_watched(struct kn_stream *s, int cam);

/* Every camera's counters as JSON (malloc'd, the caller frees):
 * {"cameras":[{"robot","camera","rtsp_clients","http_clients",
 * "frames_in","frames_bad","frames_sent","frames_dropped",
 * "clients_dropped","encode_us":{"h264":{"n","avg","max"},"jpeg":{...}}}]}.
 * Any thread. */
char *kn_stream_stats_json(struct kn_stream *s);

#endif
