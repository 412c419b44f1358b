/* The RTSP side (RFC 2326, gst-rtsp-server): two shared mounts a camera,
 * /ROBOT/CAMERA (H.264, x264enc tune=zerolatency) and /ROBOT/CAMERA.mjpeg
 * (JPEG over RTP, RFC 2435), each one media fed by the caller's frames
 * through appsrc while at least one client watches; timestamps follow
 * robot time. Unknown mounts get gst-rtsp-server's 404 Not Found. */
#include <stdio.h>
#include <string.h>

#include "stream_int.h"

static void on_unprepared(GstRTSPMedia *media, gpointer data)
{
    struct kn_stream_cam *c = data;
    GstAppSrc *src = g_object_get_data(G_OBJECT(media), "kn-src");
    int v = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(media), "kn-variant"));
    g_mutex_lock(&c->s->mu);
    if (c->src[v] == src)
        c->src[v] = NULL;
    GstRTSPMedia *held = c->media[v] == media ? media : NULL;
    if (held)
        c->media[v] = NULL;
    g_mutex_unlock(&c->s->mu);
    if (held)
        g_object_unref(held);
}

/* Robot time to the media's running time. The frames arrive stamped
 * with robot time since the media's first frame; the source's streaming
 * thread adds the running time its first frame (or the first after a
 * DISCONT, a world reset) leaves at. There, in PLAYING, the clock and
 * base time are the pipeline's: read from the caller's thread during
 * the change to PLAYING, the clock can already be set while the base
 * time is not, and a frame stamped hours ahead held the sink waiting
 * for ever. */
struct align {
    gboolean set;
    GstClockTimeDiff offset;
};

static GstPadProbeReturn align_frame(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    struct align *a = data;
    GstBuffer *buf = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
    GST_PAD_PROBE_INFO_DATA(info) = buf;
    if (!a->set || GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT)) {
        GstElement *el = gst_pad_get_parent_element(pad);
        GstClock *clock = el ? gst_element_get_clock(el) : NULL;
        GstClockTime run = 0;
        if (clock) {
            GstClockTime now = gst_clock_get_time(clock), base = gst_element_get_base_time(el);
            run = now > base ? now - base : 0;
            gst_object_unref(clock);
        }
        if (el)
            gst_object_unref(el);
        a->offset = GST_CLOCK_DIFF(GST_BUFFER_PTS(buf), run);
        a->set = TRUE;
    }
    GstClockTimeDiff pts = (GstClockTimeDiff)GST_BUFFER_PTS(buf) + a->offset;
    GST_BUFFER_PTS(buf) = pts > 0 ? (GstClockTime)pts : 0;
    return GST_PAD_PROBE_OK;
}

static void align_attach(GstElement *src)
{
    struct align *a = g_new0(struct align, 1);
    /* freed with the source, whose pad is the only user */
    g_object_set_data_full(G_OBJECT(src), "kn-align", a, g_free);
    GstPad *pad = gst_element_get_static_pad(src, "src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, align_frame, a, NULL);
    gst_object_unref(pad);
}

static void on_media_configure(GstRTSPMediaFactory *f, GstRTSPMedia *media, gpointer data)
{
    struct kn_stream_cam *c = data;
    int v = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(f), "kn-variant"));
    GstElement *bin = gst_rtsp_media_get_element(media);
    GstElement *src = gst_bin_get_by_name(GST_BIN(bin), "src");
    GstElement *enc = gst_bin_get_by_name(GST_BIN(bin), "enc");
    gst_object_unref(bin);
    /* an encoded frame leaving for the payloader is sent to the media's
     * clients */
    kn_stream_probe_attach(c, enc, v == KN_STREAM_H264, 1);
    gst_object_unref(enc);
    align_attach(src);
    /* a few frames of slack; beyond it frames are refused (counted) */
    gst_app_src_set_max_bytes(GST_APP_SRC(src),
                              3 * (guint64)c->c.width * (guint64)c->c.height * c->bpp);
    g_object_set_data_full(G_OBJECT(media), "kn-src", src, gst_object_unref);
    g_object_set_data(G_OBJECT(media), "kn-variant", GINT_TO_POINTER(v));
    g_signal_connect(media, "unprepared", G_CALLBACK(on_unprepared), c);
    g_mutex_lock(&c->s->mu);
    if (c->media[v])
        g_object_unref(c->media[v]);
    c->media[v] = g_object_ref(media);
    c->src[v] = GST_APP_SRC(src);
    c->base_robot[v] = GST_CLOCK_TIME_NONE;
    g_mutex_unlock(&c->s->mu);
}

static char *launch_line(const struct kn_stream_cam *c, int v)
{
    char *caps = kn_stream_raw_caps(c);
    const char *head = "( appsrc name=src is-live=true format=time caps=\"%s\" ! videoconvert ! "
                       "video/x-raw,format=I420 ! ";
    char *src = g_strdup_printf(head, caps);
    char *line;
    if (v == KN_STREAM_H264)
        /* constrained baseline: what every player decodes; a key frame
         * each second and SPS/PPS with each, so a client joining late
         * starts within a second. x264 writes them itself before each key
         * frame in a byte stream; rtph264pay's config-interval=-1 put
         * them before each of the key frame's slices instead (zerolatency
         * cuts a frame into one slice a thread), which split the frame
         * in two for ffmpeg and broke every picture after it */
        line = g_strdup_printf("%sx264enc name=enc tune=zerolatency speed-preset=ultrafast "
                               "bitrate=%d key-int-max=%d ! video/x-h264,profile=constrained-"
                               "baseline,stream-format=byte-stream ! rtph264pay name=pay0 pt=96 )",
                               src, c->c.bitrate_kbps, c->c.fps);
    else
        line = g_strdup_printf("%sjpegenc name=enc quality=%d ! rtpjpegpay name=pay0 pt=26 )", src,
                               c->c.jpeg_quality);
    g_free(src);
    g_free(caps);
    return line;
}

/* The camera and variant an RTSP URL path names ("/r/c", "/r/c.mjpeg",
 * with an optional "/stream=N" control suffix), -1 if none. */
static int bit_of(struct kn_stream *s, const char *path)
{
    for (size_t i = 0; i < s->ncams && i < 32; i++)
        for (int v = 0; v < KN_STREAM_NVARIANTS; v++) {
            char *m = g_strdup_printf("/%s/%s%s", s->cams[i].robot, s->cams[i].name,
                                      v == KN_STREAM_H264 ? "" : ".mjpeg");
            size_t n = strlen(m);
            int hit = strncmp(path, m, n) == 0 && (path[n] == '\0' || path[n] == '/');
            g_free(m);
            if (hit)
                return (int)i * KN_STREAM_NVARIANTS + v;
        }
    return -1;
}

/* Clients a camera: each RTSP client's cameras in a bit set, counted on
 * PLAY, uncounted on TEARDOWN or when it goes away. */
static void count(struct kn_stream *s, GstRTSPClient *cl, int bit, int on)
{
    guint64 set = GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(cl), "kn-cams"));
    guint64 b = (guint64)1 << bit;
    if (!!(set & b) == on)
        return;
    set = on ? set | b : set & ~b;
    g_object_set_data(G_OBJECT(cl), "kn-cams", GSIZE_TO_POINTER(set));
    g_mutex_lock(&s->mu);
    if (on)
        s->cams[bit / KN_STREAM_NVARIANTS].rtsp_clients++;
    else
        s->cams[bit / KN_STREAM_NVARIANTS].rtsp_clients--;
    g_mutex_unlock(&s->mu);
}

static void on_play(GstRTSPClient *cl, GstRTSPContext *ctx, gpointer data)
{
    int bit = ctx->uri ? bit_of(data, ctx->uri->abspath) : -1;
    if (bit >= 0)
        count(data, cl, bit, 1);
}

static void on_teardown(GstRTSPClient *cl, GstRTSPContext *ctx, gpointer data)
{
    int bit = ctx->uri ? bit_of(data, ctx->uri->abspath) : -1;
    if (bit >= 0)
        count(data, cl, bit, 0);
}

static void on_closed(GstRTSPClient *cl, gpointer data)
{
    for (int bit = 0; bit < 64; bit++)
        count(data, cl, bit, 0);
}

static void on_client(GstRTSPServer *server, GstRTSPClient *cl, gpointer data)
{
    (void)server;
    g_signal_connect(cl, "play-request", G_CALLBACK(on_play), data);
    g_signal_connect(cl, "teardown-request", G_CALLBACK(on_teardown), data);
    g_signal_connect(cl, "closed", G_CALLBACK(on_closed), data);
}

int kn_stream_rtsp_start(struct kn_stream *s, char *err, size_t errlen)
{
    s->rtsp = gst_rtsp_server_new();
    if (s->cfg.address)
        gst_rtsp_server_set_address(s->rtsp, s->cfg.address);
    char port[16];
    snprintf(port, sizeof port, "%d", s->cfg.rtsp_port < 0 ? 8554 : s->cfg.rtsp_port);
    gst_rtsp_server_set_service(s->rtsp, port);
    GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points(s->rtsp);
    for (size_t i = 0; i < s->ncams; i++)
        for (int v = 0; v < KN_STREAM_NVARIANTS; v++) {
            struct kn_stream_cam *c = &s->cams[i];
            GstRTSPMediaFactory *f = gst_rtsp_media_factory_new();
            char *line = launch_line(c, v);
            gst_rtsp_media_factory_set_launch(f, line);
            g_free(line);
            gst_rtsp_media_factory_set_shared(f, TRUE);
            g_object_set_data(G_OBJECT(f), "kn-variant", GINT_TO_POINTER(v));
            g_signal_connect(f, "media-configure", G_CALLBACK(on_media_configure), c);
            char *path =
                g_strdup_printf("/%s/%s%s", c->robot, c->name, v == KN_STREAM_H264 ? "" : ".mjpeg");
            gst_rtsp_mount_points_add_factory(mounts, path, f);
            g_free(path);
        }
    g_object_unref(mounts);
    g_signal_connect(s->rtsp, "client-connected", G_CALLBACK(on_client), s);
    s->rtsp_source = gst_rtsp_server_attach(s->rtsp, s->ctx);
    if (s->rtsp_source == 0) {
        snprintf(err, errlen, "RTSP: cannot listen on %s port %s",
                 s->cfg.address ? s->cfg.address : "*", port);
        return -1;
    }
    s->rtsp_port = gst_rtsp_server_get_bound_port(s->rtsp);
    return 0;
}

/* A client may outlive the server (its source goes with the context),
 * so it stops calling back into cameras about to be freed. */
static GstRTSPFilterResult drop_client(GstRTSPServer *server, GstRTSPClient *cl, gpointer data)
{
    (void)server;
    g_signal_handlers_disconnect_by_data(cl, data);
    return GST_RTSP_FILTER_REMOVE;
}

void kn_stream_rtsp_stop(struct kn_stream *s)
{
    if (!s->rtsp)
        return;
    GSource *listen =
        s->rtsp_source ? g_main_context_find_source_by_id(s->ctx, s->rtsp_source) : NULL;
    if (listen)
        g_source_destroy(listen);
    /* the clients' sessions and media go with their connections */
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->rtsp);
    gst_rtsp_session_pool_cleanup(pool);
    g_object_unref(pool);
    gst_rtsp_server_client_filter(s->rtsp, drop_client, s);
    /* a media a client left behind stops here, its streaming threads
     * joined, before the cameras its probes point to are freed */
    for (size_t i = 0; i < s->ncams; i++)
        for (int v = 0; v < KN_STREAM_NVARIANTS; v++) {
            struct kn_stream_cam *c = &s->cams[i];
            GstRTSPMedia *m = c->media[v];
            if (!m)
                continue;
            g_object_ref(m);
            gst_rtsp_media_unprepare(m);
            on_unprepared(m, c);
            g_object_unref(m);
        }
    g_object_unref(s->rtsp);
    s->rtsp = NULL;
}

void kn_stream_rtsp_feed(struct kn_stream_cam *c, const guint8 *packed, uint64_t robot_ns)
{
    size_t size = (size_t)c->c.width * (size_t)c->c.height * c->bpp;
    for (int v = 0; v < KN_STREAM_NVARIANTS; v++) {
        GstAppSrc *src = c->src[v];
        if (!src)
            continue;
        if (gst_app_src_get_current_level_bytes(src) + size > gst_app_src_get_max_bytes(src)) {
            c->frames_dropped++;
            continue;
        }
        /* robot time since the media's first frame (again from 0 when
         * robot time went back: a reset world); align_frame makes it
         * running time */
        int discont = 0;
        if (c->base_robot[v] == GST_CLOCK_TIME_NONE || robot_ns < c->base_robot[v]) {
            discont = c->base_robot[v] != GST_CLOCK_TIME_NONE;
            c->base_robot[v] = robot_ns;
        }
        GstBuffer *buf = gst_buffer_new_memdup(packed, size);
        GST_BUFFER_PTS(buf) = robot_ns - c->base_robot[v];
        GST_BUFFER_DURATION(buf) = GST_SECOND / (GstClockTime)c->c.fps;
        if (discont)
            GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DISCONT);
        gst_app_src_push_buffer(src, buf);
    }
}
