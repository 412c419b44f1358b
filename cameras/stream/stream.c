/* The streaming library's lifecycle and its one way in: the check of the
 * GStreamer elements it needs, the main context both servers run on, the
 * cameras, and the frames the caller pushes. */
#include <stdio.h>
#include <string.h>

#include "stream_int.h"

/* Every element the pipelines use, with the Debian package holding it:
 * a missing one is named at start rather than failing a client later. */
static const struct {
    const char *element, *package;
} needed[] = {
    { "appsrc", "gstreamer1.0-plugins-base" },       { "appsink", "gstreamer1.0-plugins-base" },
    { "videoconvert", "gstreamer1.0-plugins-base" }, { "x264enc", "gstreamer1.0-plugins-ugly" },
    { "rtph264pay", "gstreamer1.0-plugins-good" },   { "jpegenc", "gstreamer1.0-plugins-good" },
    { "rtpjpegpay", "gstreamer1.0-plugins-good" },
};

void kn_stream_camera_defaults(struct kn_stream_camera *c)
{
    if (c->width <= 0)
        c->width = 640;
    if (c->height <= 0)
        c->height = 480;
    if (c->fps <= 0)
        c->fps = c->name && strcmp(c->name, "front") == 0 ? 30 : 15;
    if (c->bitrate_kbps <= 0)
        c->bitrate_kbps = 2000;
    if (c->jpeg_quality <= 0 || c->jpeg_quality > 100)
        c->jpeg_quality = 80;
}

static int check_elements(char *err, size_t errlen)
{
    size_t used = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(needed); i++) {
        GstElementFactory *f = gst_element_factory_find(needed[i].element);
        if (f) {
            gst_object_unref(f);
            continue;
        }
        int n = snprintf(err + used, errlen - used,
                         "%sGStreamer element \"%s\" missing: install the Debian package \"%s\"",
                         used ? "; " : "", needed[i].element, needed[i].package);
        if (n > 0 && (size_t)n < errlen - used)
            used += (size_t)n;
    }
    return used ? -1 : 0;
}

/* A path segment a URL carries as it is. */
static int segment_ok(const char *p)
{
    if (!p || !*p || strlen(p) >= 64)
        return 0;
    for (; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_')
            return 0;
    return 1;
}

static int cams_init(struct kn_stream *s, const struct kn_stream_config *cfg, char *err,
                     size_t errlen)
{
    s->cams = g_new0(struct kn_stream_cam, cfg->ncameras);
    s->ncams = cfg->ncameras;
    for (size_t i = 0; i < cfg->ncameras; i++) {
        struct kn_stream_cam *c = &s->cams[i];
        c->s = s;
        c->index = (int)i;
        c->c = cfg->cameras[i];
        if (!segment_ok(c->c.robot) || !segment_ok(c->c.name)) {
            snprintf(err, errlen, "camera %zu: robot and name must be 1-63 of [A-Za-z0-9_-]", i);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->cams[j].robot, c->c.robot) == 0 &&
                strcmp(s->cams[j].name, c->c.name) == 0) {
                snprintf(err, errlen, "camera %s/%s given twice", c->c.robot, c->c.name);
                return -1;
            }
        g_strlcpy(c->robot, c->c.robot, sizeof c->robot);
        g_strlcpy(c->name, c->c.name, sizeof c->name);
        c->c.robot = c->robot;
        c->c.name = c->name;
        kn_stream_camera_defaults(&c->c);
        c->bpp = c->c.format == KN_STREAM_RGB ? 3 : 4;
        c->last = g_malloc0((size_t)c->c.width * (size_t)c->c.height * c->bpp);
        if (kn_stream_jpeg_start(c, err, errlen) < 0)
            return -1;
    }
    return 0;
}

struct kn_stream *kn_stream_new(const struct kn_stream_config *cfg, char *err, size_t errlen)
{
    err[0] = '\0';
    GError *gerr = NULL;
    if (!gst_init_check(NULL, NULL, &gerr)) {
        snprintf(err, errlen, "GStreamer: %s", gerr ? gerr->message : "gst_init failed");
        g_clear_error(&gerr);
        return NULL;
    }
    if (check_elements(err, errlen) < 0)
        return NULL;
    struct kn_stream *s = g_new0(struct kn_stream, 1);
    g_mutex_init(&s->mu);
    s->cfg = *cfg;
    s->cfg.cameras = NULL;
    if (s->cfg.client_queue <= 0)
        s->cfg.client_queue = 4;
    if (s->cfg.client_stall_ms <= 0)
        s->cfg.client_stall_ms = 2000;
    if (s->cfg.snapshot_wait_ms <= 0)
        s->cfg.snapshot_wait_ms = 3000;
    s->ctx = g_main_context_new();
    s->loop = g_main_loop_new(s->ctx, FALSE);
    if (cams_init(s, cfg, err, errlen) < 0 || kn_stream_rtsp_start(s, err, errlen) < 0 ||
        kn_stream_http_start(s, err, errlen) < 0) {
        kn_stream_free(s);
        return NULL;
    }
    return s;
}

void kn_stream_run(struct kn_stream *s)
{
    /* SoupServer's and the RTSP server's sources live on s->ctx; being
     * its owner here lets the callbacks invoked on it run at once */
    g_main_context_push_thread_default(s->ctx);
    g_main_loop_run(s->loop);
    g_main_context_pop_thread_default(s->ctx);
}

static gboolean quit_now(gpointer data)
{
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

/* Through a source on the context rather than g_main_loop_quit at once:
 * a quit that comes before the loop thread has entered the loop would
 * be lost (g_main_loop_run starts by marking the loop running), and the
 * caller would wait for that thread for ever. */
void kn_stream_quit(struct kn_stream *s)
{
    GSource *src = g_idle_source_new();
    g_source_set_callback(src, quit_now, g_main_loop_ref(s->loop),
                          (GDestroyNotify)g_main_loop_unref);
    g_source_attach(src, s->ctx);
    g_source_unref(src);
}

void kn_stream_free(struct kn_stream *s)
{
    if (!s)
        return;
    /* the encoders first: the JPEGs they queued on the context still
     * find their clients, then the servers and what they left queued */
    for (size_t i = 0; s->cams && i < s->ncams; i++)
        kn_stream_jpeg_stop(&s->cams[i]);
    while (g_main_context_iteration(s->ctx, FALSE))
        ;
    kn_stream_http_stop(s);
    kn_stream_rtsp_stop(s);
    while (g_main_context_iteration(s->ctx, FALSE))
        ;
    for (size_t i = 0; s->cams && i < s->ncams; i++)
        g_free(s->cams[i].last);
    g_free(s->cams);
    g_main_loop_unref(s->loop);
    g_main_context_unref(s->ctx);
    g_mutex_clear(&s->mu);
    g_free(s);
}

int kn_stream_rtsp_port(const struct kn_stream *s)
{
    return s->rtsp_port;
}

int kn_stream_http_port(const struct kn_stream *s)
{
    return s->http_port;
}

int kn_stream_find(const struct kn_stream *s, const char *robot, const char *name)
{
    for (size_t i = 0; i < s->ncams; i++)
        if (strcmp(s->cams[i].robot, robot) == 0 && strcmp(s->cams[i].name, name) == 0)
            return (int)i;
    return -1;
}

int kn_stream_push(struct kn_stream *s, int cam, const uint8_t *pixels, size_t stride,
                   uint64_t robot_ns)
{
    if (cam < 0 || (size_t)cam >= s->ncams || !pixels)
        return -1;
    struct kn_stream_cam *c = &s->cams[cam];
    size_t row = (size_t)c->c.width * c->bpp;
    if (stride == 0)
        stride = row;
    g_mutex_lock(&s->mu);
    if (stride < row) {
        c->frames_bad++;
        g_mutex_unlock(&s->mu);
        return -1;
    }
    c->frames_in++;
    /* packed rows: what the raw caps of every pipeline say */
    for (int y = 0; y < c->c.height; y++)
        memcpy(c->last + (size_t)y * row, pixels + (size_t)y * stride, row);
    c->last_ns = robot_ns;
    kn_stream_rtsp_feed(c, c->last, robot_ns);
    if (c->http_watchers > 0)
        kn_stream_jpeg_encode(c, c->last);
    g_mutex_unlock(&s->mu);
    return 0;
}
